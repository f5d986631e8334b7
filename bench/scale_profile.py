#!/usr/bin/env python3
"""Where the coordinator's time and memory go with N real agents: one
run of the scale scenario (bench_ops.scale_bench's set-up: N ring-agents
on one emulated node, one certificate each, default intervals, no survey)
that reports the join storm (all connected, all with an inventory),
`ringctl status` latency (plain and -f json, wall time of the ringctl
process), the coordinator's RSS and its CPU at idle, and optionally
records `perf record -g` of the coordinator in each phase (join, status,
idle) for `perf report`.

  make BUILD=build/meas EXTRA_CFLAGS="-DAGENTS_MAX_PENDING_PER_SOURCE=256 \
      -fno-omit-frame-pointer" all
  sudo bench/scale_profile.py -n 1024 --bin build/meas/bin [--perf DIR] \
      [--malloc]

All agents connect from one address: a build with
-DAGENTS_MAX_PENDING_PER_SOURCE=256 lets them join as agents from distinct
sources would (the default 8 paces the join at 8 handshakes at a time).
Certificates are cached under --pki-cache between runs.
"""

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))

import cluster as cl  # noqa: E402
from daemons import Ringd  # noqa: E402
from ringtest import spawn_agents  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(msg):
    sys.stderr.write("[scale] %s\n" % msg)
    sys.stderr.flush()


def ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return int(v[11]) + int(v[12])


def rss_kib(pid, field="VmRSS"):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def pki_cached(r, names, cache):
    """The CA and every certificate, issued once per cache dir."""
    if not os.path.exists(os.path.join(cache, "ca.crt")):
        os.makedirs(os.path.dirname(cache) or ".", exist_ok=True)
        r.setup_pki(pki=cache, names=["coordinator"])
    missing = [n for n in names
               if not os.path.exists(os.path.join(cache, n + ".crt"))]
    if missing:
        log("issuing %d certificates" % len(missing))
        subprocess.run(["sh", "-c", 'for n in "$@"; do "$0" pki issue "%s" '
                        '"$n" >/dev/null || exit 1; done' % cache,
                        r.path("ringctl")] + missing, check=True,
                       timeout=3600)
    r.pki = cache


class Perf:
    def __init__(self, outdir, pid):
        self.outdir, self.pid, self.p = outdir, pid, None

    def start(self, phase):
        if not self.outdir:
            return
        self.p = subprocess.Popen(
            ["perf", "record", "--call-graph", "dwarf,8192", "-F", "199", "-p", str(self.pid),
             "-o", os.path.join(self.outdir, "%s.data" % phase)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.3)

    def stop(self):
        if self.p:
            self.p.send_signal(2)
            self.p.wait(30)
            self.p = None


def status_times(r, k, fmt, cpu=None):
    """Wall ms of k `ringctl status` calls; cpu, if a list, gets each
    call's ringctl user+system ms (what of the wall is the client's)."""
    out = []
    for _ in range(k):
        t = time.monotonic()
        u0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = r.ringctl("status", fmt=fmt, timeout_s=20)
        out.append((time.monotonic() - t) * 1000.0)
        u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if cpu is not None:
            cpu.append(1000.0 * (u1.ru_utime - u0.ru_utime +
                                 u1.ru_stime - u0.ru_stime))
        if p.returncode not in (0, 1):
            raise RuntimeError("status: rc %d: %s" % (p.returncode,
                                                      p.stderr[:300]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=1024)
    ap.add_argument("--bin", default="build/meas/bin")
    ap.add_argument("--perf", help="directory for perf.data per phase")
    ap.add_argument("--pki-cache", default="/tmp/ringd-scale-pki")
    ap.add_argument("--status-calls", type=int, default=100)
    ap.add_argument("--json-calls", type=int, default=10)
    ap.add_argument("--idle-s", type=int, default=30)
    ap.add_argument("--coord-extra", action="append", default=[])
    ap.add_argument("--malloc", action="store_true",
                    help="after the idle window: malloc_stats() and "
                    "malloc_trim(0) in the coordinator (gdb)")
    args = ap.parse_args()
    n = args.n
    names = ["a%04d" % i for i in range(n)]
    res = {"n": n}
    if args.perf:
        os.makedirs(args.perf, exist_ok=True)
    c = cl.Cluster(["n1", "n2"], "rgs%d" % os.getpid())
    r = None
    launcher = None
    try:
        c.up()
        r = Ringd(c, os.path.abspath(args.bin), heartbeat_ms=5000, misses=3,
                  coord_extra=["survey_settle 1h", "survey_grace 1h",
                               "survey_interval 0",
                               "max_agents %d" % max(4096, n + 16)] +
                  args.coord_extra,
                  agent_extra=["reconnect_min 500ms", "reconnect_max 5s"])
        pki_cached(r, names, args.pki_cache)
        for x in names:
            r.write("agent-%s.conf" % x, r.agent_conf_text(x))
        chunks = [names[i:i + 30] for i in range(0, n, 30)]
        r.start_coordinator(r.write("coordinator.conf", r.coord_conf_text(
            expect=chunks[0], extra=["expect " + " ".join(ch)
                                     for ch in chunks[1:]])))
        cp = r.coord.pid
        perf = Perf(args.perf, cp)
        perf.start("join")
        c0 = ticks(cp)
        t0 = time.monotonic()
        launcher = spawn_agents(c, r, "n1", names)
        up = None
        while True:
            rc, doc, _ = r.status()
            if not r.coord.alive():
                raise RuntimeError("coordinator died")
            now = time.monotonic() - t0
            if doc and doc.get("connected") == n and up is None:
                up = now
            if up is not None and doc and all(
                    e.get("data_interfaces", 0) >= 2
                    for e in doc["nodes"]):
                break
            if now > 600:
                raise RuntimeError("not all up in 600 s: %s connected" %
                                   (doc or {}).get("connected"))
            time.sleep(0.5)
        res["up_s"] = up
        res["inv_s"] = time.monotonic() - t0
        res["join_cpu_s"] = (ticks(cp) - c0) / CLK_TCK
        perf.stop()
        log("%d connected in %.1f s, all inventories in %.1f s, coordinator "
            "CPU %.1f s" % (n, up, res["inv_s"], res["join_cpu_s"]))
        time.sleep(15)
        perf.start("status")
        c0 = ticks(cp)
        pcpu, jcpu = [], []
        plain = status_times(r, args.status_calls, None, pcpu)
        js = status_times(r, args.json_calls, "json", jcpu)
        perf.stop()
        res.update(plain_p50=pct(plain, .5), plain_p99=pct(plain, .99),
                   json_p50=pct(js, .5), json_max=max(js),
                   ringctl_cpu_p50=pct(pcpu, .5),
                   ringctl_json_cpu_p50=pct(jcpu, .5),
                   # Heartbeats and counters included: an upper bound.
                   coord_cpu_per_status_ms=1000.0 * (ticks(cp) - c0) /
                   CLK_TCK / (len(plain) + len(js)))
        log("status plain p50 %.1f p99 %.1f ms (ringctl's CPU p50 %.1f); "
            "json p50 %.1f max %.1f ms (ringctl's CPU p50 %.1f); the "
            "coordinator's CPU per call at most %.1f ms"
            % (res["plain_p50"], res["plain_p99"], res["ringctl_cpu_p50"],
               res["json_p50"], res["json_max"],
               res["ringctl_json_cpu_p50"], res["coord_cpu_per_status_ms"]))
        perf.start("idle")
        c0, t0 = ticks(cp), time.monotonic()
        time.sleep(args.idle_s)
        c1, t1 = ticks(cp), time.monotonic()
        perf.stop()
        res["idle_cpu_pct"] = 100.0 * (c1 - c0) / CLK_TCK / (t1 - t0)
        res["rss_mib"] = rss_kib(cp) / 1024.0
        res["hwm_mib"] = rss_kib(cp, "VmHWM") / 1024.0
        if args.malloc:
            # The heap's own account (into the coordinator's log), and
            # how much of the RSS is freed memory the heap keeps.
            for expr in ("(void)malloc_stats()", "(int)malloc_trim(0)"):
                subprocess.run(["gdb", "-p", str(cp), "-batch", "-ex",
                                "call " + expr], capture_output=True,
                               timeout=120)
            res["rss_trimmed_mib"] = rss_kib(cp) / 1024.0
            log("RSS after malloc_trim(0): %.1f MiB" %
                res["rss_trimmed_mib"])
        rc, doc, _ = r.status()
        res["connected_end"] = (doc or {}).get("connected")
        log("idle CPU %.2f%% of a core; RSS %.1f MiB (peak %.1f)" % (
            res["idle_cpu_pct"], res["rss_mib"], res["hwm_mib"]))
    except Exception as e:
        res["error"] = "%s: %s" % (type(e).__name__, e)
        log("FAILED: %s" % res["error"])
    finally:
        if r and r.coord:
            shutil.copy(r.coord.log, "/tmp/scale-coord-%d.log" % n)
        if launcher:
            launcher.stop(grace=30)
        if r:
            r.stop(grace=30)
        c.down()
    print(json.dumps(res))


if __name__ == "__main__":
    main()
