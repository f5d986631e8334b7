#!/usr/bin/python3
"""make soak: a fault soak of the sanitizer builds on an emulated 8-node
ring, with a real Alertmanager (tests/soak/README.md).

One random fault every ~60 s, each undone before the next:
  cut     a cable pulled (both wire ends down), then mended
  halve   a cable shaped to half its rate (tc), then restored
  agent   an agent killed (-9), then started again
  coord   the coordinator killed (-9), then started again (first half
          only: the last half measures one coordinator process)
  disk    the state_dir's file system (a tmpfs of its own) filled, then
          freed

Asserted, and printed as one table at the end:
  - every fault's own alert fired and resolved;
  - no other alert fired (an episode no fault explains is a false alarm);
  - no daemon died unless killed, no sanitizer report in any log;
  - the coordinator's open fds flat and its RSS growth under 2% over the
    last half;
  - status and alerts, sampled together, name one health and exit codes
    that follow it, never healthy while an alert that counts fires;
  - `ringctl status` answered within 50 ms at the 99th percentile,
    sampled every 500 ms throughout (the plain build's ringctl, so the
    figure is the coordinator's and not ASan's start-up);
  - every alert reached Alertmanager, and Alertmanager's notifications
    (a webhook receiver) hold each episode once firing and once resolved.

Exit 0 when all hold, 1 otherwise."""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import cluster as cl  # noqa: E402
import daemons  # noqa: E402
from amtest import am_start  # noqa: E402
from conftest import new_prefix  # noqa: E402
from ringtest import SurveyRingd, edge_name, shape_ring, \
    stop_and_check  # noqa: E402

RING = ["n%d" % i for i in range(1, 9)]
RATE = "1gbit"
HALF = "500mbit"
HOLD_S = 5
LIGHT_S = 15
AM_PORT = 19593
RX_PORT = 19594
STATE_FS_MB = 64
STATUS_P99_MS = 50.0
RSS_GROWTH = 0.02
KINDS = ("cut", "halve", "agent", "coord", "disk")
# What each fault must raise, and what it may raise besides.
OWN = {"cut": "cable_down", "halve": "edge_degraded", "agent": "node_down",
       "coord": "coordinator_restarted", "disk": "store_failing"}
ALSO = {"cut": {"ring_broken"}, "agent": {"ring_broken"}, "halve": set(),
        "coord": set(), "disk": set()}
# Always firing by design (a heartbeat for the alert pipeline).
QUIET = {"watchdog"}

AM_CONF = """route:
  receiver: rx
  group_by: ['...']
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1000h
receivers:
  - name: rx
    webhook_configs:
      - url: http://127.0.0.1:%d/
        send_resolved: true
"""


# ASan holds freed memory in a quarantine (256 MiB by default) that fills
# over hours: kept small, the RSS the soak sees is the coordinator's own.
daemons.SANITIZER_ENV["ASAN_OPTIONS"] += ":quarantine_size_mb=4"


def say(msg):
    sys.stderr.write("[soak %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


class Sampler(threading.Thread):
    """Every 500 ms: `ringctl status` timed; every 2 s: the coordinator's
    fds and RSS, and which daemons are alive."""

    def __init__(self, r, ringctl):
        super().__init__(daemon=True)
        self.r = r
        self.ringctl = ringctl
        self.lat_ms = []        # (t, ms) of answered status requests
        self.unanswered = []    # (t, why) while the coordinator was up
        self.proc = []          # (t, pid, fds, rss_kib)
        self.dead = []          # (t, name) found dead, not killed by us
        self.killed = set()     # names we killed, until restarted
        self.disagree = []      # (t, why): status and alerts apart
        self.stop_ev = threading.Event()
        self.lock = threading.Lock()

    def run(self):
        n = 0
        while not self.stop_ev.is_set():
            self.status_once()
            if n % 4 == 0:
                self.procs_once()
            n += 1
            self.stop_ev.wait(0.5)

    def status_once(self):
        coord = self.r.coord
        t0 = time.monotonic()
        p = subprocess.run([self.ringctl, "-s", self.r.sock, "-f", "json",
                            "-t", "5", "status"], capture_output=True,
                           text=True, timeout=30)
        ms = (time.monotonic() - t0) * 1000.0
        with self.lock:
            if "ring-coordinator" in self.killed or not coord.alive() or \
                    coord is not self.r.coord:
                return  # down on purpose: not a status request's figure
            if p.returncode in (0, 1) and p.stdout.startswith("{"):
                self.lat_ms.append((time.time(), ms))
                self.agree(p)
            else:
                self.unanswered.append((time.time(), "rc %d: %s" % (
                    p.returncode, p.stderr.strip()[:200])))

    def agree(self, ps):
        """status and alerts, read one after the other, name one health,
        each exit code follows it, and nothing that counts fires while it
        is healthy."""
        pa = subprocess.run([self.ringctl, "-s", self.r.sock, "-f", "json",
                             "-t", "5", "alerts"], capture_output=True,
                            text=True, timeout=30)
        try:
            st, al = json.loads(ps.stdout), json.loads(pa.stdout)
        except ValueError:
            return
        h, why = st.get("health"), []
        firing = sorted("%s %s" % (a["rule"], a["subject"])
                        for a in st.get("alerts", [])
                        if a.get("severity") != "info" and
                        a["rule"] not in QUIET)
        if h == "healthy" and firing:
            why.append("healthy while %s fire" % ", ".join(firing))
        if (ps.returncode == 0) != (h == "healthy"):
            why.append("status exit %d with health %s" % (ps.returncode, h))
        if (pa.returncode == 0) != (al.get("health") == "healthy"):
            why.append("alerts exit %d with health %s" % (
                pa.returncode, al.get("health")))
        if why:
            self.disagree.append((time.time(), "; ".join(why)))

    def procs_once(self):
        with self.lock:
            procs = [("ring-coordinator", self.r.coord)] + \
                [("agent " + n, a) for n, a in self.r.agents.items()]
            for name, pr in procs:
                if name not in self.killed and not pr.alive():
                    self.dead.append((time.time(), name))
            pid = self.r.coord.pid
        try:
            fds = len(os.listdir("/proc/%d/fd" % pid))
            with open("/proc/%d/status" % pid) as f:
                rss = next(int(x.split()[1]) for x in f
                           if x.startswith("VmRSS:"))
            self.proc.append((time.time(), pid, fds, rss))
        except (OSError, StopIteration):
            pass


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def read_am_notifications(path):
    """[(status, alertname, subject, startsAt)] of every alert in every
    notification Alertmanager sent to the receiver."""
    out = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    doc = json.loads(line)
                except ValueError:
                    continue
                for a in doc.get("alerts", []):
                    lb = a.get("labels", {})
                    out.append((a.get("status"), lb.get("alertname"),
                                lb.get("subject"), a.get("startsAt")))
    except FileNotFoundError:
        pass
    return out


def fill(path):
    """Write path until the file system is full; the bytes written."""
    n = 0
    chunk = b"\0" * (1 << 20)
    try:
        with open(path, "wb", buffering=0) as f:
            while True:
                n += f.write(chunk)
    except OSError:
        pass
    # the last partial pages too
    try:
        with open(path, "ab", buffering=0) as f:
            while True:
                n += f.write(b"\0" * 4096)
    except OSError:
        pass
    return n


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.faults = []   # dict(kind, what, t0, t1, own, fired, resolved)
        self.errors = []

    # -------------------------------------------------------------- alerts
    def episodes(self, since_s):
        p = self.r.ringctl("alerts", "--all", "--since", "%ds" % since_s,
                           fmt="json", timeout_s=10)
        return json.loads(p.stdout)["alerts"] if p.stdout.startswith(
            "{") else []

    def find(self, rule, subject, t0):
        """The newest alert of rule and subject first seen at or after t0
        (any state), or None."""
        p = self.r.ringctl("alerts", "--all", fmt="json", timeout_s=10)
        if not p.stdout.startswith("{"):
            return None
        best = None
        for a in json.loads(p.stdout)["alerts"]:
            if a["rule"] == rule and a["subject"] == subject and \
                    a.get("first_seen_ms", 0) / 1000.0 >= t0 - 1:
                if best is None or a["first_seen_ms"] > best["first_seen_ms"]:
                    best = a
        return best

    def wait_alert(self, rule, subject, t0, timeout, resolved=False):
        def ok():
            a = self.find(rule, subject, t0)
            if not a:
                return None
            return a if not resolved or a.get("state") == "resolved" \
                else None
        try:
            return cl.wait_for(ok, timeout, "%s %s%s" % (
                rule, subject, " resolved" if resolved else ""),
                interval=0.25)
        except TimeoutError:
            return None

    def healthy(self, timeout):
        try:
            cl.wait_for(lambda: self.r.status_doc()["health"] == "healthy",
                        timeout, "healthy", interval=0.25)
            return True
        except (TimeoutError, AssertionError):
            return False

    # -------------------------------------------------------------- faults
    def fault(self, kind):
        r, c = self.r, self.c
        k = self.rng.randrange(len(RING))
        a, b = RING[k], RING[(k + 1) % len(RING)]
        f = {"kind": kind, "t0": time.time(), "fired": False,
             "resolved": False}
        own = OWN[kind]
        if kind in ("cut", "halve"):
            f["what"] = subj = edge_name(a, b)
        elif kind == "agent":
            f["what"] = subj = a
        else:
            f["what"], subj = {"coord": ("coordinator", "coordinator"),
                               "disk": ("state_dir", "store")}[kind]
        f["own"] = (own, subj)
        self.faults.append(f)
        say("fault %d: %s %s" % (len(self.faults), kind, f["what"]))
        t0 = f["t0"]
        if kind == "cut":
            c.cut(a, b)
            f["fired"] = bool(self.wait_alert(own, subj, t0, 15))
            time.sleep(self.rng.uniform(2, 8))
            c.restore(a, b)
        elif kind == "halve":
            c.shape(a, b, HALF)
            f["fired"] = bool(self.wait_alert(own, subj, t0,
                                              2 * LIGHT_S + 15))
            shape_ring(c, RATE)
        elif kind == "agent":
            with self.smp.lock:
                self.smp.killed.add("agent " + a)
                r.agents[a].signal(9)
            r.agents[a].wait(10)
            f["fired"] = bool(self.wait_alert(own, subj, t0, 15))
            time.sleep(self.rng.uniform(1, 5))
            with self.smp.lock:
                r.start_agent(a)
                self.smp.killed.discard("agent " + a)
        elif kind == "coord":
            with self.smp.lock:
                self.smp.killed.add("ring-coordinator")
                r.coord.signal(9)
            r.coord.wait(10)
            time.sleep(self.rng.uniform(1, 5))
            r.start_coordinator()
            with self.smp.lock:
                self.smp.killed.discard("ring-coordinator")
            f["fired"] = bool(self.wait_alert(own, subj, t0, 30))
        elif kind == "disk":
            filler = os.path.join(r.state_dir, "soak-fill")
            n = fill(filler)
            f["what"] = "state_dir (%d MiB filled)" % (n >> 20)
            f["fired"] = bool(self.wait_alert(own, subj, t0, 45))
            os.unlink(filler)
        # Undone: the alert resolves (its hold-down included) and the
        # cluster is healthy again.
        f["resolved"] = bool(self.wait_alert(own, subj, t0, 90,
                                             resolved=True))
        ok = self.healthy(120)
        f["t1"] = time.time()
        say("  %s %s: %s, %s%s" % (
            own, subj, "fired" if f["fired"] else "NEVER FIRED",
            "resolved" if f["resolved"] else "NEVER RESOLVED",
            "" if ok else "; NOT HEALTHY AGAIN within 120 s"))
        if not ok:
            self.errors.append("not healthy again after %s %s" % (
                kind, f["what"]))

    def schedule(self):
        """A random order in which every kind comes once before any comes
        twice; coordinator kills go to random slots of the first half only
        (the last half measures one coordinator process)."""
        n = max(1, int(round(self.args.minutes)))
        kinds = self.args.kinds
        others = [k for k in kinds if k != "coord"]
        slots = []
        if "coord" in kinds:
            first = list(range(max(1, n // 2)))
            want = min(len(first), max(1, int(round(n / float(len(kinds))))))
            slots = self.rng.sample(first, want)
        out, bag = [], []
        for i in range(n):
            if i in slots or not others:
                out.append("coord")
                continue
            if not bag:
                bag = list(others)
                self.rng.shuffle(bag)
            out.append(bag.pop())
        return out

    # ----------------------------------------------------------------- run
    def run(self):
        args = self.args
        d = tempfile.mkdtemp(prefix="ringd-soak-")
        os.chmod(d, 0o755)
        self.c = c = cl.Cluster(RING, new_prefix())
        self.r = None
        self.smp = None
        mounted = None
        am = shutil.which("prometheus-alertmanager")
        if not am:
            self.errors.append("no prometheus-alertmanager (make test-deps)")
            return
        rx_out = os.path.join(d, "am-notifications.jsonl")
        try:
            c.up()
            shape_ring(c, RATE)
            c.spawn("coord", [sys.executable, os.path.join(
                HERE, "..", "integration", "webhook_rx.py"), str(RX_PORT),
                rx_out], os.path.join(d, "rx.log"), name="webhook-rx")
            am_start(c, d, AM_PORT, AM_CONF % RX_PORT)
            extra = ["alert_hold_down %ds" % HOLD_S, "relearn_timeout 20s",
                     "light_check_interval %ds" % LIGHT_S,
                     "recheck_settle 3s",
                     "alertmanager_url http://127.0.0.1:%d" % AM_PORT,
                     "alertmanager_resend_interval 10s"]
            self.r = r = SurveyRingd(c, args.bin, nominal="10G",
                                     coord_extra=extra,
                                     agent_extra=["counters_interval 2s"])
            # The state on a small file system of its own, to fill.
            subprocess.run(["mount", "-t", "tmpfs", "-o",
                            "size=%dm,mode=0700" % STATE_FS_MB, "ringd-soak",
                            r.state_dir], check=True)
            mounted = r.state_dir
            r.setup_pki()
            r.start_all(timeout=60)
            r.wait_survey()
            r.wait_quiet()
            if not self.healthy(120):
                self.errors.append("never healthy after the first survey")
                return
            self.start = time.time()
            self.smp = Sampler(r, os.path.join(args.plain_bin, "ringctl"))
            self.smp.start()
            plan = self.schedule()
            say("%d faults planned (seed %d): %s" % (len(plan), args.seed,
                                                    " ".join(plan)))
            for i, kind in enumerate(plan):
                slot = self.start + 60.0 * i
                time.sleep(max(0.0, slot - time.time()))
                self.fault(kind)
            end = self.start + 60.0 * len(plan)
            time.sleep(max(0.0, end - time.time()))
            self.end = time.time()
            self.smp.stop_ev.set()
            self.smp.join(30)
            time.sleep(5)  # Alertmanager's last group_interval
            self.judge(rx_out)
        except Exception as e:  # recorded: the table still prints
            self.errors.append("%s: %s" % (type(e).__name__, str(e)[:1500]))
        finally:
            if self.smp:
                self.smp.stop_ev.set()
            try:
                stop_and_check(c, self.r)
            except AssertionError as e:
                self.errors.append(str(e)[:3000])
            if mounted:
                subprocess.run(["umount", "-l", mounted])
            shutil.rmtree(d, ignore_errors=True)

    # --------------------------------------------------------------- judge
    def judge(self, rx_out):
        eps = self.episodes(int(time.time() - self.start) + 10)
        self.eps = eps
        self.false = []
        for e in eps:
            if e["rule"] in QUIET:
                continue
            t = e.get("first_seen_ms", 0) / 1000.0
            key = (e["rule"], e["subject"])
            if not any(t >= f["t0"] - 2 and t <= f["t1"] + 2 and
                       (key == f["own"] or e["rule"] in ALSO[f["kind"]])
                       for f in self.faults):
                self.false.append(key + (e.get("message", ""),))
        # Alertmanager's notifications: each episode once firing and once
        # resolved (startsAt names the episode).
        notes = read_am_notifications(rx_out)
        self.am_bad = []
        self.am_count = len(notes)
        seen = {}
        for st, name, subj, starts in notes:
            seen.setdefault((name, subj, starts), []).append(st)
        ep_keys = {}
        for e in eps:
            if e["rule"] in QUIET:
                continue
            ep_keys.setdefault((e["rule"], e["subject"]), []).append(e)
        for (name, subj), lst in ep_keys.items():
            got = sorted((k[2], v) for k, v in seen.items()
                         if k[0] == name and k[1] == subj)
            firing = sum(v.count("firing") for _, v in got)
            resolved = sum(v.count("resolved") for _, v in got)
            done = sum(1 for e in lst if e.get("state") == "resolved")
            if firing != len(lst) or resolved != done:
                self.am_bad.append("%s %s: %d episodes (%d resolved), "
                                   "Alertmanager notified %d firing, %d "
                                   "resolved" % (name, subj, len(lst), done,
                                                 firing, resolved))
        for (name, subj, _), v in seen.items():
            if name not in QUIET and (name, subj) not in ep_keys:
                self.am_bad.append("%s %s: notified by Alertmanager (%s), "
                                   "no episode at the coordinator" % (
                                       name, subj, ",".join(v)))

    def report(self):
        w = print
        ok = not self.errors
        w("== make soak: %.1f minutes planned, seed %d, 8-node ring shaped "
          "to %s, sanitizer builds" % (self.args.minutes, self.args.seed,
                                       RATE))
        w("%-3s %-6s %-28s %-24s %-6s %-8s" % ("#", "fault", "what",
                                               "alert", "fired", "resolved"))
        for i, f in enumerate(self.faults, 1):
            w("%-3d %-6s %-28s %-24s %-6s %-8s" % (
                i, f["kind"], f["what"][:28], f["own"][0][:24],
                "yes" if f["fired"] else "NO",
                "yes" if f["resolved"] else "NO"))
            ok = ok and f["fired"] and f["resolved"]
        rows = []

        def row(what, measured, goal, good):
            rows.append((what, measured, goal, "ok" if good else "FAILED"))
            return good
        smp = self.smp
        if smp is not None and hasattr(self, "eps"):
            ok &= row("false alarms", "%d" % len(self.false), "0",
                      not self.false)
            ok &= row("daemons died unasked", "%d" % len(smp.dead), "0",
                      not smp.dead)
            ok &= row("disagreements (status, alerts, exit codes)",
                      "%d" % len(smp.disagree), "0", not smp.disagree)
            lat = sorted(ms for _, ms in smp.lat_ms)
            p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] if lat \
                else float("inf")
            ok &= row("status p99 (%d samples)" % len(lat),
                      "%.1f ms (max %.1f)" % (p99, lat[-1] if lat else 0),
                      "< %.0f ms" % STATUS_P99_MS, p99 < STATUS_P99_MS)
            ok &= row("status unanswered (coordinator up)",
                      "%d" % len(smp.unanswered), "0", not smp.unanswered)
            mid = self.start + (self.end - self.start) / 2
            last = [x for x in smp.proc if x[0] >= mid]
            pid = last[-1][1] if last else None
            last = [x for x in last if x[1] == pid]
            if len(last) >= 6:
                # Medians of the first and last thirds: one sample is off
                # by a light check's buffers (+-1.5 MiB seen), a trend
                # is not.
                k = len(last) // 3
                fds0 = median([x[2] for x in last[:k]])
                fds1 = median([x[2] for x in last[-k:]])
                rss0 = median([x[3] for x in last[:k]])
                rss1 = median([x[3] for x in last[-k:]])
                growth = (rss1 - rss0) / float(rss0)
                ok &= row("coordinator fds, last half (median)",
                          "%d -> %d (%d..%d)" % (
                              fds0, fds1, min(x[2] for x in last),
                              max(x[2] for x in last)), "flat",
                          fds1 <= fds0)
                ok &= row("coordinator RSS growth, last half (median)",
                          "%+.2f%% (%d -> %d KiB)" % (
                              100 * growth, rss0, rss1),
                          "< %.0f%%" % (100 * RSS_GROWTH),
                          growth < RSS_GROWTH)
            else:
                ok &= row("coordinator fds and RSS, last half",
                          "not measured", "measured", False)
            ok &= row("Alertmanager notifications (%d)" % self.am_count,
                      "%d episodes off" % len(self.am_bad),
                      "each once firing, once resolved", not self.am_bad)
        w("")
        w("%-44s %-30s %-31s %s" % ("measured", "value", "goal", ""))
        for x in rows:
            w("%-44s %-30s %-31s %s" % x)
        for x in getattr(self, "false", [])[:10]:
            w("  false alarm: %s %s: %s" % x)
        for x in getattr(self, "am_bad", [])[:10]:
            w("  alertmanager: %s" % x)
        if smp is not None:
            for t, name in smp.dead[:5]:
                w("  died: %s at +%.0f s" % (name, t - self.start))
            for t, why in smp.disagree[:5]:
                w("  disagreement at +%.0f s: %s" % (t - self.start, why))
            for t, why in smp.unanswered[:5]:
                w("  unanswered at +%.0f s: %s" % (t - self.start, why))
        for e in self.errors:
            w("  ERROR: %s" % e)
        w("soak: %s" % ("passed" if ok else "FAILED"))
        return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=float(
        os.environ.get("SOAK_MINUTES", "30")))
    ap.add_argument("--seed", type=int, default=int(
        os.environ.get("SOAK_SEED", str(int(time.time()) % 100000))))
    ap.add_argument("--bin", required=True, help="the sanitizer build's bin")
    ap.add_argument("--plain-bin", required=True,
                    help="the plain build's bin (its ringctl times status)")
    ap.add_argument("--record", help="write every sample (status latency, "
                    "coordinator fds and RSS) and fault there, as JSON")
    ap.add_argument("--kinds", default=os.environ.get(
        "SOAK_KINDS", ",".join(KINDS)),
        help="the faults to draw from (default: all of %s)" % ",".join(KINDS))
    args = ap.parse_args()
    args.kinds = [k for k in args.kinds.split(",") if k]
    bad = [k for k in args.kinds if k not in KINDS]
    if bad or not args.kinds:
        ap.error("--kinds %s: each one of %s" % (",".join(bad) or "''",
                                                 ",".join(KINDS)))
    args.bin = os.path.abspath(args.bin)
    args.plain_bin = os.path.abspath(args.plain_bin)
    if os.geteuid() != 0:
        sys.stderr.write("soak: run as root (network namespaces, tmpfs)\n")
        return 2
    s = Soak(args)
    s.run()
    ok = s.report()
    if args.record and s.smp:
        with open(args.record, "w") as f:
            json.dump({"seed": args.seed, "faults": s.faults,
                       "status_ms": s.smp.lat_ms, "coordinator": s.smp.proc,
                       "disagreements": s.smp.disagree}, f)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
