"""make bench, part 10 (fleet): one coordinator and a fleet of agents, each
from its own source address, as a real site's agents come.

Each run is one network namespace with only lo: the coordinator listens on
127.0.0.1:7420 and every session binds its own 127.x.y.z (agent.conf
`source_address`; the load generator the same way), so the coordinator's
per-source limits see N sources, not one. Certificates, one per node, are
issued once (bench/loadgen.c's --issue-only, common/pki.c, P-256) into
build/bench-fleet-pki and reused by later runs.

Runs (--fleet, default a1024,a4096,g10000):
  aN  N real ring-agent processes (plain build), reconnect 500ms..5s;
      their namespace has no data ports, so they report none (the
      load generator's sessions carry the data-node inventory);
  gN  N sessions of one ring-load generator process (bench/loadgen.c):
      Hello, an inventory of a two-port data node, neighbour tables of
      rings of 4, heartbeats, counters every 10 s; probes answered "not
      reachable", tests refused with a typed error.
For each: the join storm (from the first process started to the first
`ringctl -f json status` that counts all N connected; polled every
second), then after two counters intervals 100 plain `ringctl status` and
100 `ringctl -f json status` (each call's wall time, ringctl's own
process start included: `ringctl --version`'s time is shown beside), then
the coordinator's RSS and its CPU over an idle window (--fleet-window).
No survey (settle and grace 1h): the survey is not what is measured.

Goals (benchmark lines, not tests): at 10,000 sessions all up < 60 s,
plain status p99 < 50 ms, JSON status p99 < 500 ms, coordinator RSS
< 256 MB, idle CPU < 5% of one core; 4,096 real agents all up < 30 s.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import cluster as cl  # noqa: E402  (bench.py set sys.path)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PKI_CACHE = os.path.join(REPO, "build", "bench-fleet-pki")
CLK_TCK = os.sysconf("SC_CLK_TCK")
PORT = 7420
# Second octet of the sources: real agents 127.1.., the generator 127.100..
AGENT_O2, LOADGEN_O2 = 1, 100


def _progress(msg):
    sys.stderr.write("[bench] %s\n" % msg)
    sys.stderr.flush()


def _pct(v, q):
    """Nearest-rank percentile (common/stats.c's rule)."""
    v = sorted(v)
    if not v:
        return float("nan")
    k = max(1, int(-(-q * len(v) // 1)))
    return v[min(len(v), k) - 1]


def source_address(o2, i):
    """bench/loadgen.c's lg_source(): 250 hosts per /24."""
    return "127.%d.%d.%d" % (o2 + i // 64000, (i // 250) % 256, 1 + i % 250)


def _stat_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _status_kib(pid, field):
    try:
        with open("/proc/%d/status" % pid) as f:
            for ln in f:
                if ln.startswith(field + ":"):
                    return int(ln.split()[1])
    except OSError:
        pass
    return 0


def parse_runs(text):
    runs = []
    for tok in [t for t in text.split(",") if t]:
        kind, n = tok[0], tok[1:]
        if kind not in "ag" or not n.isdigit() or int(n) < 1:
            raise ValueError("--fleet: '%s' is not aN (real agents) or gN "
                             "(load generator sessions)" % tok)
        runs.append(("agents" if kind == "a" else "loadgen", int(n)))
    return runs


class Fleet:
    def __init__(self, args, prefix, kind, n):
        self.a, self.kind, self.n = args, kind, n
        self.ns = "%s-%s%d" % (prefix, kind[0], n)
        self.bin = args.plain_bin
        self.w = tempfile.mkdtemp(prefix="ringd-fleet-")
        self.sock = os.path.join(self.w, "c.sock")
        self.coord = self.fleet = None
        self.logs = []

    def path(self, prog):
        return os.path.join(self.bin, prog)

    def run(self, argv, timeout=60):
        return subprocess.run(argv, capture_output=True, text=True,
                              timeout=timeout)

    def pki(self):
        """The cached CA and coordinator certificate, and N node
        certificates (issued now only where missing)."""
        os.makedirs(os.path.dirname(PKI_CACHE), exist_ok=True)
        if not os.path.exists(os.path.join(PKI_CACHE, "ca.crt")):
            shutil.rmtree(PKI_CACHE, ignore_errors=True)
            for argv in (["pki", "init", PKI_CACHE],
                         ["pki", "issue", PKI_CACHE, "coordinator",
                          "--coordinator"]):
                p = self.run([self.path("ringctl")] + argv)
                if p.returncode:
                    raise RuntimeError("ringctl %s: %s" % (
                        " ".join(argv), p.stderr.strip()))
        t0 = time.monotonic()
        p = self.run([self.path("ring-loadgen"), "--issue-only", "-n",
                      str(self.n), "--pki", PKI_CACHE, "--prefix",
                      self.prefix()], timeout=3600)
        if p.returncode:
            raise RuntimeError("ring-loadgen --issue-only: %s" %
                               p.stderr.strip()[-500:])
        return time.monotonic() - t0, p.stderr.strip().splitlines()[-1:]

    def prefix(self):
        return "a" if self.kind == "agents" else "lg"

    def names(self):
        return ["%s%05d" % (self.prefix(), i) for i in range(self.n)]

    def spawn(self, argv, log):
        f = open(os.path.join(self.w, log), "w")
        self.logs.append(os.path.join(self.w, log))
        p = subprocess.Popen(["ip", "netns", "exec", self.ns] + argv,
                             stdout=f, stderr=subprocess.STDOUT,
                             start_new_session=True)
        f.close()
        return p

    def status(self, fmt_json=True, timeout=60):
        argv = [self.path("ringctl"), "-s", self.sock, "-t", "60"]
        argv += ["-f", "json"] if fmt_json else []
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv + ["status"], capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            # A call that never came back counts as a failed one.
            p = subprocess.CompletedProcess(argv, 124, "", "timed out")
        dt = time.monotonic() - t0
        return p, dt

    def connected(self):
        p, _ = self.status()
        try:
            return json.loads(p.stdout).get("connected", 0)
        except ValueError:
            return 0

    def up(self):
        cl.remove_netns([self.ns])
        subprocess.run(["ip", "netns", "add", self.ns], check=True)
        subprocess.run(["ip", "-n", self.ns, "link", "set", "lo", "up"],
                       check=True)
        os.makedirs(os.path.join(self.w, "state"))
        conf = os.path.join(self.w, "coordinator.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "name coordinator",
                "listen 127.0.0.1:%d" % PORT,
                "ca %s/ca.crt" % PKI_CACHE,
                "cert %s/coordinator.crt" % PKI_CACHE,
                "key %s/coordinator.key" % PKI_CACHE,
                "control_socket %s" % self.sock,
                "control_group root",
                "state_dir %s/state" % self.w,
                "admit_unexpected yes",
                "max_agents %d" % max(4096, self.n + 64),
                "survey_settle 1h", "survey_grace 1h", "survey_interval 0",
            ]) + "\n")
        self.coord = self.spawn([self.path("ring-coordinator"), "-c", conf],
                                "coordinator.log")
        cl.wait_for(lambda: self.coord.poll() is not None or
                    os.path.exists(self.sock), 30,
                    "the coordinator's control socket")
        if self.coord.poll() is not None:
            raise RuntimeError("the coordinator exited:\n" +
                               cl.tail(self.logs[0]))

    def start_fleet(self):
        if self.kind == "loadgen":
            return self.spawn([self.path("ring-loadgen"), "-n", str(self.n),
                               "--coordinator", "127.0.0.1:%d" % PORT,
                               "--pki", PKI_CACHE, "--prefix", "lg",
                               "--source", str(LOADGEN_O2)], "loadgen.log")
        confs = os.path.join(self.w, "agents")
        os.makedirs(confs)
        for i, name in enumerate(self.names()):
            with open(os.path.join(confs, name + ".conf"), "w") as f:
                f.write("\n".join([
                    "node %s" % name,
                    "coordinator 127.0.0.1:%d" % PORT,
                    "coordinator_name coordinator",
                    "ca %s/ca.crt" % PKI_CACHE,
                    "cert %s/%s.crt" % (PKI_CACHE, name),
                    "key %s/%s.key" % (PKI_CACHE, name),
                    "source_address %s" % source_address(AGENT_O2, i),
                    "reconnect_min 500ms", "reconnect_max 5s",
                ]) + "\n")
        return self.spawn(["sh", "-c", 'for n in "$@"; do "$0" -c '
                           '"%s/$n.conf" 2>>"%s/agents.log" & done; wait'
                           % (confs, self.w), self.path("ring-agent")] +
                          self.names(), "launcher.log")

    def loadgen_up_max(self):
        """The most sessions the load generator saw up (its 5 s lines)."""
        best = 0
        try:
            with open(os.path.join(self.w, "loadgen.log")) as f:
                for ln in f:
                    m = re.search(r"info: (\d+) of \d+ sessions up", ln)
                    if m:
                        best = max(best, int(m.group(1)))
        except OSError:
            pass
        return best

    def down(self):
        for p in (self.fleet, self.coord):
            if p and p.poll() is None:
                try:
                    os.killpg(p.pid, 15)
                except OSError:
                    pass
        for p in (self.fleet, self.coord):
            if p:
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, 9)
        cl.remove_netns([self.ns])
        if not self.a.fleet_keep:
            shutil.rmtree(self.w, ignore_errors=True)


def fleet_one(args, prefix, kind, n):
    res = {"kind": kind, "n": n, "error": None}
    f = Fleet(args, prefix, kind, n)
    try:
        res["pki_s"], res["pki_line"] = f.pki()
        f.up()
        t0 = time.monotonic()
        f.fleet = f.start_fleet()
        seen = {"n": 0}

        def all_up():
            if f.coord.poll() is not None:
                raise cl.ClusterError("the coordinator died:\n" +
                                      cl.tail(f.logs[0]))
            now = f.connected()
            seen["n"] = max(seen["n"], now)
            return now >= n
        try:
            cl.wait_for(all_up, args.fleet_timeout, "%d up" % n,
                        interval=1.0)
            res["up_s"] = time.monotonic() - t0
        except TimeoutError:
            res["error"] = "at most %d of %d up within %d s" % (
                seen["n"], n, args.fleet_timeout)
            res["up_partial"] = seen["n"]
        _progress("fleet %s %d: %s; 20 s for counters to flow" % (
            kind, n, "all up in %.1f s" % res["up_s"] if "up_s" in res
            else res["error"]))
        time.sleep(20)
        res["ringctl_start"] = []
        for _ in range(20):
            t = time.monotonic()
            subprocess.run([f.path("ringctl"), "--version"],
                           capture_output=True)
            res["ringctl_start"].append(time.monotonic() - t)
        # A coordinator that did not take them all may not answer either:
        # the calls stop after 5 failures in a row or fleet_timeout.
        calls_end = time.monotonic() + args.fleet_timeout
        for key, js in (("plain", False), ("json", True)):
            lat, bad, row = [], 0, 0
            for _ in range(args.fleet_calls):
                if row >= 5 or time.monotonic() > calls_end:
                    res["calls_cut"] = True
                    break
                p, dt = f.status(fmt_json=js)
                row = row + 1 if p.returncode not in (0, 1) else 0
                lat.append(dt)
                # 1 is "degraded" (nodes admitted unexpected): a reply.
                bad += p.returncode not in (0, 1) or not p.stdout
                if js and "json_bytes" not in res:
                    res["json_bytes"] = len(p.stdout)
                if not js and "plain_lines" not in res:
                    res["plain_lines"] = p.stdout.count("\n")
            res[key], res[key + "_failed"] = lat, bad
        cp = f.coord.pid
        # The coordinator is the child of `ip netns exec` (which execs).
        c0, t1 = _stat_ticks(cp), time.monotonic()
        time.sleep(args.fleet_window)
        c1, t2 = _stat_ticks(cp), time.monotonic()
        res.update({"idle_ticks": c1 - c0, "idle_dt": t2 - t1,
                    "rss_kib": _status_kib(cp, "VmRSS"),
                    "hwm_kib": _status_kib(cp, "VmHWM"),
                    "connected_end": f.connected()})
        if kind == "loadgen":
            res["fleet_rss_kib"] = _status_kib(f.fleet.pid, "VmRSS")
    except Exception as e:
        res["error"] = "%s: %s" % (type(e).__name__, str(e)[:1500])
        _progress("fleet %s %d FAILED: %s" % (kind, n, res["error"]))
        for log in f.logs:
            _progress("%s:\n%s" % (log, cl.tail(log, 10)))
    finally:
        if kind == "loadgen":
            res["loadgen_up_max"] = f.loadgen_up_max()
        f.down()
    # Each run's figures as they come: a later failure loses none.
    _progress("fleet %s %d figures: %s" % (kind, n, json.dumps(
        {k: v for k, v in res.items() if not isinstance(v, list)})))
    return res


def fleet_bench(args, prefix):
    res = {"error": None, "runs": []}
    for p in ("ring-loadgen", "ring-agent", "ring-coordinator", "ringctl"):
        if not os.access(os.path.join(args.plain_bin, p), os.X_OK):
            res["error"] = ("%s/%s missing (make build/bin/ring-loadgen)" %
                            (args.plain_bin, p))
            return res
    for kind, n in parse_runs(args.fleet):
        _progress("fleet: %d %s" % (n, kind))
        r = fleet_one(args, prefix, kind, n)
        res["runs"].append(r)
        if r["error"]:
            res.setdefault("errors", []).append(
                "%s %d: %s" % (kind, n, r["error"]))
    return res


def _verdict(v, goal):
    return "met" if v == v and v < goal else "NOT MET"


def fleet_report(args, res, out):
    w = out.append
    w("PART 10  fleet: one coordinator, every session from its own source "
      "address on 127/8 (plain build %s)" % args.plain_bin)
    if res["error"]:
        w("  FAILED: %s" % res["error"])
    if not res["runs"]:
        return
    w("  %-18s %9s %-17s %-17s %9s %9s" % (
        "sessions", "all up s", "status p50/p99 ms", "json p50/p99 ms",
        "RSS MiB", "idle CPU"))
    for r in res["runs"]:
        label = "%d %s" % (r["n"], "agents" if r["kind"] == "agents"
                           else "loadgen")
        if "idle_ticks" not in r:
            w("  %-18s FAILED: %s" % (label, r["error"]))
            if "up_s" in r:
                w("  %-18s all up in %.1f s (measured) before that" % (
                    "", r["up_s"]))
            continue
        cpu = 100.0 * r["idle_ticks"] / CLK_TCK / r["idle_dt"]
        w("  %-18s %9s %7.1f / %7.1f %7.1f / %7.1f %9.1f %8.2f%%" % (
            label, "%.1f" % r["up_s"] if "up_s" in r else
            "(%d up)" % r.get("up_partial", 0),
            1e3 * _pct(r["plain"], .5), 1e3 * _pct(r["plain"], .99),
            1e3 * _pct(r["json"], .5), 1e3 * _pct(r["json"], .99),
            r["rss_kib"] / 1024.0, cpu))
    w("  all measured (our clock, /proc); percentiles nearest-rank over "
      "%d calls each, computed; CPU = utime+stime over a %d s idle window "
      "after the calls, computed" % (args.fleet_calls, args.fleet_window))
    for r in res["runs"]:
        if r.get("loadgen_up_max") is not None:
            w("  %d loadgen: the generator saw at most %d sessions up at "
              "once (its own count, measured)%s" % (
                  r["n"], r["loadgen_up_max"],
                  "; at most %d in the coordinator's status" %
                  r["up_partial"] if "up_partial" in r else ""))
        if "idle_ticks" not in r:
            continue
        cpu = 100.0 * r["idle_ticks"] / CLK_TCK / r["idle_dt"]
        start = 1e3 * _pct(r["ringctl_start"], .5)
        w("  %d %s: RSS peak %.1f MiB; JSON reply %d bytes, plain %d lines;"
          " ringctl --version alone p50 %.1f ms (its start-up, in every "
          "call above); %d/%d calls failed; %s connected after the window;"
          " certificates ready in %.1f s%s" % (
              r["n"], r["kind"], r["hwm_kib"] / 1024.0,
              r.get("json_bytes", 0), r.get("plain_lines", 0), start,
              r["plain_failed"] + r["json_failed"],
              len(r["plain"]) + len(r["json"]),
              r["connected_end"], r["pki_s"],
              " (load generator RSS %.1f MiB)" % (r["fleet_rss_kib"] / 1024.)
              if "fleet_rss_kib" in r else ""))
        if r.get("calls_cut"):
            w("    calls cut short: 5 failures in a row or --fleet-timeout "
              "passed (percentiles over the calls made)")
        goals = []
        if r["kind"] == "agents" and r["n"] >= 4096:
            goals.append(("all up < 30 s", r.get("up_s", float("nan")),
                          30))
        if r["n"] >= 10000:
            goals += [("all up < 60 s", r.get("up_s", float("nan")), 60),
                      ("plain status p99 < 50 ms",
                       1e3 * _pct(r["plain"], .99), 50),
                      ("JSON status p99 < 500 ms",
                       1e3 * _pct(r["json"], .99), 500),
                      ("RSS < 256 MB", r["rss_kib"] * 1024 / 1e6, 256),
                      ("idle CPU < 5%", cpu, 5)]
        if goals:
            w("    goals: " + "; ".join(
                "%s: %.1f, %s" % (g, v, _verdict(v, lim))
                for g, v, lim in goals))
    w("  the host has %d CPUs shared with other work (load average %s "
      "now): figures are this host's" % (
          os.cpu_count() or 0, " ".join(
              "%.1f" % x for x in os.getloadavg())))
