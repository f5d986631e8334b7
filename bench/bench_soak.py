"""make bench, part 9 (soak): is every signal true through a fault soak?

A 6-node ring (cables shaped to 1 Gbit/s) with short settings
(alert_hold_down 5s, light_check_interval 15s, relearn_timeout 20s), a
real Alertmanager as its alertmanager_url, and for --soak-s seconds one
fault at a time, in turn: a cable cut and mended, an agent killed and
started again, a cable halved (tc) until edge_degraded fires and then
restored, a coordinator restart (SIGTERM and kill -9 in turn) on a healthy
ring. All the while `status` and `alerts` are sampled together every
500 ms.

Counted (measured):
  - disagreements: a sample whose health is healthy while an alert that
    counts fires, or whose exit code does not follow its health, or whose
    status and alerts replies name different healths;
  - false alerts: every episode in `ringctl alerts --all --since` the soak
    whose rule and subject no fault explains (cable_down and ring_broken
    for a cut, node_down and ring_broken for a killed agent, edge_degraded
    for a halved cable; nothing for a restart), and every port_errors or
    light_check_failed;
  - missed faults: a cut, kill or halving whose alert never fired;
  - alerts at Alertmanager that the coordinator does not have firing
    (after the resend interval).
"""

import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

import cluster as cl  # noqa: E402  (bench.py set sys.path)
from amtest import am_active, am_start  # noqa: E402
from ringtest import edge_name, shape_ring, surveyed  # noqa: E402

RING = ["n1", "n2", "n3", "n4", "n5", "n6"]
RATE = "1gbit"
HOLD_S = 5
LIGHT_S = 15
AM_PORT = 19493
QUIET = ("watchdog", "coordinator_restarted")


def _progress(msg):
    sys.stderr.write("[bench] %s\n" % msg)
    sys.stderr.flush()


def _counting(alerts):
    return {(a["rule"], a["subject"]) for a in alerts
            if a.get("state", "firing") in ("firing", "clearing") and
            a["severity"] != "info" and a["rule"] not in QUIET}


class _Sampler(threading.Thread):
    def __init__(self, r):
        super().__init__(daemon=True)
        self.r = r
        self.n = 0
        self.bad = []
        self.healths = {}
        self.stop_ev = threading.Event()

    def run(self):
        while not self.stop_ev.is_set():
            try:
                ps = self.r.ringctl("status", fmt="json")
                pa = self.r.ringctl("alerts", fmt="json")
                if ps.returncode in (0, 1) and pa.returncode in (0, 1):
                    st, al = json.loads(ps.stdout), json.loads(pa.stdout)
                    self.n += 1
                    h = st["health"]
                    self.healths[h] = self.healths.get(h, 0) + 1
                    f = _counting(st.get("alerts", []))
                    why = []
                    if h == "healthy" and f:
                        why.append("healthy while %s fire" % sorted(f))
                    if (ps.returncode == 0) != (h == "healthy"):
                        why.append("status exit %d, health %s" %
                                   (ps.returncode, h))
                    if (pa.returncode == 0) != (al.get("health") ==
                                                "healthy"):
                        why.append("alerts exit %d, health %s" %
                                   (pa.returncode, al.get("health")))
                    if why:
                        self.bad.append((time.time(), why))
            except (ValueError, OSError):
                pass  # a reply cut by a kill -9
            self.stop_ev.wait(0.5)




def soak_bench(args, prefix):
    res = {"error": None, "faults": [], "false": [], "missed": [],
           "samples": 0, "bad": [], "healths": {}, "am_extra": [],
           "soak_s": args.soak_s}
    am = shutil.which("prometheus-alertmanager")
    d = tempfile.mkdtemp(prefix="ringd-bench-soak-")
    os.chmod(d, 0o755)
    rng = random.Random(args.soak_seed)
    c = cl.Cluster(RING, prefix)

    def prepare(c):
        shape_ring(c, RATE)
        if am:
            am_start(c, d, AM_PORT)
    extra = ["alert_hold_down %ds" % HOLD_S, "relearn_timeout 20s",
             "light_check_interval %ds" % LIGHT_S, "recheck_settle 3s"]
    if am:
        extra += ["alertmanager_url http://127.0.0.1:%d" % AM_PORT,
                  "alertmanager_resend_interval 10s"]
    smp = None
    try:
        with surveyed(c, args.bin, prepare=prepare, quiet=True,
                      nominal="10G", coord_extra=extra,
                      agent_extra=["counters_interval 2s"]) as r:
            def healthy(timeout=90):
                cl.wait_for(lambda: r.status_doc()["health"] == "healthy",
                            timeout, "healthy")

            def fired(rule, subject, t0, timeout):
                def seen():
                    p = r.ringctl("alerts", "--all", fmt="json")
                    return any(a["rule"] == rule and a["subject"] == subject
                               and a.get("first_seen_ms", 0) / 1000.0 >=
                               t0 - 1 for a in json.loads(p.stdout)["alerts"])
                try:
                    cl.wait_for(seen, timeout, "%s %s" % (rule, subject),
                                interval=0.2)
                    return True
                except TimeoutError:
                    return False
            healthy()
            start = time.time()
            smp = _Sampler(r)
            smp.start()
            kinds = ["cut", "kill", "halve", "restart"]
            i = 0
            while time.time() - start < args.soak_s:
                kind = kinds[i % len(kinds)]
                k = rng.randrange(len(RING))
                a, b = RING[k], RING[(k + 1) % len(RING)]
                t0 = time.time()
                ok = True
                if kind == "cut":
                    c.cut(a, b)
                    ok = fired("cable_down", edge_name(a, b), t0, 10)
                    time.sleep(rng.uniform(1, 6))
                    c.restore(a, b)
                    subj = [("cable_down", edge_name(a, b)),
                            ("ring_broken", "ring")]
                elif kind == "kill":
                    r.agents[a].signal(9)
                    r.agents[a].wait(10)
                    ok = fired("node_down", a, t0, 15)
                    time.sleep(rng.uniform(1, 4))
                    r.start_agent(a)
                    subj = [("node_down", a), ("ring_broken", "ring")]
                elif kind == "halve":
                    c.shape(a, b, "500mbit")
                    ok = fired("edge_degraded", edge_name(a, b), t0,
                               2 * LIGHT_S + 10)
                    shape_ring(c, RATE)
                    subj = [("edge_degraded", edge_name(a, b))]
                else:
                    r.coord.signal(15 if (i // 4) % 2 == 0 else 9)
                    r.coord.wait(10)
                    r.start_coordinator()
                    subj = []
                healthy(120)
                res["faults"].append({"kind": kind, "what": "%s-%s" % (a, b)
                                      if kind in ("cut", "halve") else a,
                                      "t0": t0, "t1": time.time(),
                                      "expect": subj})
                if not ok:
                    res["missed"].append(res["faults"][-1])
                _progress("soak %.0f s: %s %s (%s)" % (
                    time.time() - start, kind, res["faults"][-1]["what"],
                    "no alert expected" if not subj else
                    "alerted" if ok else "MISSED"))
                i += 1
            smp.stop_ev.set()
            smp.join(10)
            if am:
                time.sleep(12)  # a resend interval: AM agrees by then
                mine = _counting(r.status_doc().get("alerts", []))
                res["am_extra"] = sorted(x for x in am_active(c, AM_PORT)
                                         if x[0] not in QUIET and
                                         x not in mine)
            p = r.ringctl("alerts", "--all", "--since",
                          "%ds" % (int(time.time() - start) + 5),
                          fmt="json")
            eps = json.loads(p.stdout)["alerts"]
            for e in eps:
                if e["rule"] in QUIET or e["severity"] == "info":
                    continue
                t = e.get("first_seen_ms", 0) / 1000.0
                key = (e["rule"], e["subject"])
                ok = any(key in f["expect"] and f["t0"] - 2 <= t <=
                         f["t1"] + 2 for f in res["faults"])
                if not ok:
                    res["false"].append(key + (e.get("fired_message",
                                                     e.get("message", "")),))
            res["samples"] = smp.n
            res["bad"] = smp.bad
            res["healths"] = smp.healths
    except Exception as e:  # recorded; the bench goes on
        res["error"] = "%s: %s" % (type(e).__name__, str(e)[:2000])
        _progress("soak FAILED: %s" % res["error"])
    finally:
        if smp:
            smp.stop_ev.set()
        shutil.rmtree(d, ignore_errors=True)
    return res


def soak_report(args, res, out):
    w = out.append
    n = {}
    for f in res["faults"]:
        n[f["kind"]] = n.get(f["kind"], 0) + 1
    w("PART 9  fault soak, 6-node ring shaped to %s, %d s: %s (measured)" % (
        RATE, res["soak_s"], ", ".join("%d %s" % (v, k) for k, v in
                                       sorted(n.items())) or "no faults"))
    if res["error"]:
        w("  FAILED: %s" % res["error"])
    w("  %d samples of status and alerts together (every 500 ms), health "
      "seen: %s" % (res["samples"], ", ".join(
          "%s %d" % kv for kv in sorted(res["healths"].items()))))
    w("  disagreements (healthy while an alert fires, an exit code against "
      "its health, status and alerts apart): %d; goal 0" % len(res["bad"]))
    for t, why in res["bad"][:5]:
        w("    %s" % "; ".join(why))
    w("  false alerts (no fault explains them): %d; goal 0" %
      len(res["false"]))
    for x in res["false"][:10]:
        w("    %s %s: %s" % x)
    w("  missed faults (no alert): %d; goal 0" % len(res["missed"]))
    w("  alerts at Alertmanager the coordinator does not have firing: %s" % (
        res["am_extra"] or "none"))
