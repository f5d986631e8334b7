"""make bench, part 8 (alerting): what an operator's Alertmanager sees.

A 4-node ring (cables shaped to 1 Gbit/s) whose coordinator pushes to
Debian's real prometheus-alertmanager (alertmanager_url), running in the
coordinator's namespace:
  - cut to Alertmanager's API showing it: cable n1-n2 cut N times; from our
    clock just before the cut to the first GET /api/v2/alerts (polled
    every 20 ms) that lists cable_down n1-n2 (goal under 1 s);
  - mend to resolved: from the mend to the first GET that no longer lists
    it, less the hold-down (goal under 1 s past the hold-down); the
    resolution must be a posted one: Alertmanager's own
    alertmanager_alerts_received_total{status="resolved"} grows;
  - false alerts per coordinator restart: R restarts of the coordinator
    of a healthy ring (SIGTERM and kill -9 in turn); every alert that
    Alertmanager received (firing) after the restart and every new
    episode in `ringctl alerts --all`, the info coordinator_restarted
    and the watchdog aside, is a false alert (goal 0);
  - the degradation check's own bytes: each edge's self_bytes_last_hour
    over an idle window with light checks every --alerting-light seconds,
    scaled to the default light_check_interval (10 min), and as a share
    of the edge's capacity (goal under 0.01%).
"""

import json
import os
import shutil
import statistics
import tempfile
import time

import cluster as cl  # noqa: E402  (bench.py set sys.path)
from amtest import am_active, am_received, am_start  # noqa: E402
from ringtest import shape_ring, surveyed  # noqa: E402

RING = ["n1", "n2", "n4", "n3"]
AM_PORT = 19393
QUIET = ("watchdog", "coordinator_restarted")


def _progress(msg):
    import sys
    sys.stderr.write("[bench] %s\n" % msg)
    sys.stderr.flush()








def _episodes(r):
    p = r.ringctl("alerts", "--all", fmt="json")
    return {(a["rule"], a["subject"], a.get("since"))
            for a in json.loads(p.stdout or "{}").get("alerts", [])
            if a["rule"] not in QUIET}


def alerting_bench(args, prefix):
    res = {"error": None, "cut": [], "mend": [], "restarts": [],
           "hold_s": args.alerting_hold, "cuts": args.cuts, "bytes": None,
           "light_s": args.alerting_light}
    if not shutil.which("prometheus-alertmanager"):
        res["error"] = "prometheus-alertmanager not installed " \
            "(make bench-deps)"
        return res
    d = tempfile.mkdtemp(prefix="ringd-bench-am-")
    os.chmod(d, 0o755)
    c = cl.Cluster(RING, prefix)

    def prepare(c):
        shape_ring(c, "1gbit")
        am_start(c, d, AM_PORT)
    extra = ["alert_hold_down %ds" % args.alerting_hold,
             "alertmanager_url http://127.0.0.1:%d" % AM_PORT,
             "alertmanager_resend_interval 10s",
             "relearn_timeout 20s",
             "recheck_settle 0",
             "light_check_interval %ds" % args.alerting_light]
    try:
        with surveyed(c, args.bin, prepare=prepare, quiet=True,
                      nominal="10G", coord_extra=extra) as r:
            cl.wait_for(lambda: r.status_doc()["health"] == "healthy", 60,
                        "healthy before the cuts")
            key = ("cable_down", "n1-n2")
            for i in range(args.cuts):
                resolved0 = am_received(c, AM_PORT, "resolved")
                t0 = time.time()
                c.cut("n1", "n2")
                cl.wait_for(lambda: key in am_active(c, AM_PORT), 10,
                            "cable_down at Alertmanager", interval=0.02)
                res["cut"].append(time.time() - t0)
                t1 = time.time()
                c.restore("n1", "n2")
                cl.wait_for(lambda: key not in am_active(c, AM_PORT),
                            args.alerting_hold + 15,
                            "cable_down resolved at Alertmanager",
                            interval=0.02)
                res["mend"].append(time.time() - t1)
                if am_received(c, AM_PORT, "resolved") <= resolved0:
                    raise cl.ClusterError("cut %d: gone from Alertmanager "
                                          "without a posted resolution" %
                                          (i + 1))
                _progress("cut %d/%d: at Alertmanager after %.0f ms, "
                          "resolved %.0f ms after the mend" % (
                              i + 1, args.cuts, res["cut"][-1] * 1000,
                              res["mend"][-1] * 1000))
                cl.wait_for(lambda: r.status_doc()["health"] == "healthy",
                            30, "healthy again")
            for i in range(args.alerting_restarts):
                before = _episodes(r)
                fired0 = am_received(c, AM_PORT, "firing")
                active0 = set(k for k in am_active(c, AM_PORT) if k[0] not in QUIET)
                r.coord.signal(15 if i % 2 == 0 else 9)
                r.coord.wait(10)
                r.start_coordinator()
                cl.wait_for(lambda: all(n["state"] == "up" for n in
                                        r.status_doc()["nodes"]), 30,
                            "every node back")
                cl.wait_for(lambda: r.status_doc()["health"] == "healthy",
                            60, "healthy after the restart")
                time.sleep(args.alerting_hold + 2)
                new = _episodes(r) - before
                active = set(k for k in am_active(c, AM_PORT)
                             if k[0] not in QUIET) - active0
                # Resends of the watchdog count as received firing
                # alerts: only the alerts listed are judged.
                res["restarts"].append({
                    "signal": 15 if i % 2 == 0 else 9,
                    "false": len(new) + len(active),
                    "what": sorted(new) + sorted(active),
                    "am_firing_posts": am_received(c, AM_PORT, "firing") - fired0})
                _progress("restart %d/%d (signal %d): %d false alerts" % (
                    i + 1, args.alerting_restarts,
                    res["restarts"][-1]["signal"],
                    res["restarts"][-1]["false"]))
            # The degradation check's own bytes over an idle window.
            top0 = r.status_doc()["topology"]
            b0 = {e["edge"]: e.get("self_bytes_last_hour_computed", 0)
                  for e in top0["edges"]}
            t0 = time.monotonic()
            time.sleep(args.alerting_window)
            top1 = r.status_doc()["topology"]
            span = time.monotonic() - t0
            per = []
            for e in top1["edges"]:
                grew = e.get("self_bytes_last_hour_computed", 0) - \
                    b0.get(e["edge"], 0)
                per.append(max(grew, 0) * 3600.0 / span)
            res["bytes"] = {"span_s": span, "per_edge_hour": per}
    except Exception as e:  # recorded; the bench goes on
        res["error"] = "%s: %s" % (type(e).__name__, str(e)[:2000])
        _progress("alerting FAILED: %s" % res["error"])
    finally:
        shutil.rmtree(d, ignore_errors=True)
    return res


def _ms(x):
    return "%.0f ms" % (x * 1000)


def alerting_report(args, res, out):
    w = out.append
    w("PART 8  alerts at a real Alertmanager (Debian's "
      "prometheus-alertmanager), 4-node ring shaped to 1 Gbit/s; "
      "alert_hold_down %ds" % res["hold_s"])
    if res["error"]:
        w("  FAILED: %s" % res["error"])
    if res["cut"]:
        v = res["cut"]
        w("  cut to Alertmanager's API listing cable_down: median %s, max "
          "%s over %d cuts (measured); goal < 1 s: %s" % (
              _ms(statistics.median(v)), _ms(max(v)), len(v),
              "met" if max(v) < 1.0 else "NOT met"))
    if res["mend"]:
        v = [x - res["hold_s"] for x in res["mend"]]
        w("  mend to resolved at Alertmanager: median %s, max %s past the "
          "%d s hold-down over %d mends (measured less the configured "
          "hold-down: computed); goal < 1 s: %s" % (
              _ms(statistics.median(v)), _ms(max(v)), res["hold_s"], len(v),
              "met" if max(v) < 1.0 else "NOT met"))
    if res["restarts"]:
        f = [x["false"] for x in res["restarts"]]
        w("  false alerts per coordinator restart: %s over %d restarts "
          "(SIGTERM and kill -9 in turn; measured); goal 0: %s" % (
              ", ".join(str(x) for x in f), len(f),
              "met" if not any(f) else "NOT met"))
        for x in res["restarts"]:
            if x["what"]:
                w("    signal %d: %s" % (x["signal"], x["what"]))
    if res["bytes"]:
        per = res["bytes"]["per_edge_hour"]
        if per and not any(per):
            w("  light checks' own bytes: no check fell in the %.0f s "
              "window: no verdict (lengthen --alerting-window)" %
              res["bytes"]["span_s"])
        elif per:
            scale = res["light_s"] / 600.0
            at_default = [p * scale for p in per]
            cap = 1e9 / 8 * 3600
            w("  light checks' own bytes per edge per hour: %s at one check "
              "every %d s over %.0f s (measured); at the default 10 min: "
              "median %.0f B/h, %.2g%% of a 1 Gbit/s edge (computed); goal "
              "< 0.01%%: %s" % (
                  ", ".join("%.0f" % p for p in per), res["light_s"],
                  res["bytes"]["span_s"], statistics.median(at_default),
                  100 * statistics.median(at_default) / cap,
                  "met" if max(at_default) / cap < 1e-4 else "NOT met"))
