#!/usr/bin/env python3
"""Survey wall time of a site of R rings of 4 under one coordinator
(issue 24: "the survey's wall time for R rings of N nodes equals one
ring's"), on the emulated cluster (network namespaces, root).

For each R (default 1, 4, 16): a site of R separate rings of four nodes
(tests/integration/cluster.py Cluster.site), every cable shaped to one
rate (default 100mbit, so that R rings' tests at once stay within what
two cores move), real agents (the plain build), no automatic survey; once
every node heard its two neighbours, one `ringctl survey --wait`, timed
by our clock, next to the coordinator's survey_wall_s, rounds and
tests_sum_s_computed, and the ratio of each wall time to one ring's.

Run: sudo python3 bench/bench_rings.py --bin build/bin [--rings 1,4,16]
Figures: (m) measured, (c) computed here.
"""

import argparse
import os
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))

import cluster as cl  # noqa: E402
from daemons import missing_binaries  # noqa: E402
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY, SurveyRingd,  # noqa: E402
                      neighbours_heard, shape_ring, site_rings,
                      stop_site_and_check)


def _progress(msg):
    sys.stderr.write("[bench] %s\n" % msg)
    sys.stderr.flush()


def survey_site(args, n_rings, prefix):
    """One site of n_rings rings of 4: its survey's figures."""
    rings = site_rings(n_rings)
    c = cl.Cluster.site(rings, prefix)
    res = {"rings": n_rings, "nodes": 4 * n_rings, "error": None}
    r = None
    try:
        c.up()
        shape_ring(c, args.rate)
        r = SurveyRingd(c, args.bin, grace="600s", coord_extra=(
            NO_AUTO_SURVEY + ["survey_duration %s" % args.duration,
                              "survey_warmup %s" % args.warmup,
                              "latency_iterations %d" % args.lat_iterations,
                              "light_check_interval 0",
                              "watchdog_interval 0"]),
            agent_extra=FAST_AGENT)
        r.setup_pki()
        t0 = time.monotonic()
        r.start_coordinator()
        r.start_agents_batched(batch=32, timeout=180)
        cl.wait_for(lambda: neighbours_heard(r, c.order), 180,
                    "every node to hear its two neighbours", interval=0.5)
        res["up_s"] = time.monotonic() - t0
        t0 = time.monotonic()
        p = r.ringctl("survey", "--wait", fmt=None, timeout_s=600)
        res["wait_s"] = time.monotonic() - t0
        if p.returncode not in (0, 1):
            raise RuntimeError("survey --wait: rc %d %s" % (p.returncode,
                                                            p.stderr))
        top = r.topology()
        res.update({
            "kind": top.get("kind"),
            "n_rings": len(top.get("rings") or []) or
            (1 if top.get("kind") == "ring" else 0),
            "edges": len(top.get("edges", [])),
            "errors": sum(1 for e in top.get("edges", []) if e.get("error")),
            "rounds": top.get("rounds"),
            "wall": top.get("survey_wall_s"),
            "sum": top.get("tests_sum_s_computed"),
        })
        _progress("%d rings of 4: %s, %s rounds, wall %.1f s" % (
            n_rings, res["kind"], res["rounds"], res["wall"]))
    except Exception as e:  # recorded; the bench goes on
        res["error"] = "%s: %s" % (type(e).__name__, e)
        _progress("%d rings FAILED: %s" % (n_rings, res["error"]))
    finally:
        try:
            stop_site_and_check(c, r)
        except AssertionError as e:
            res["error"] = res["error"] or "teardown: %s" % str(e)[:300]
    return res


def report(args, results):
    out = ["RINGS  survey wall time of R rings of 4 under one coordinator, "
           "every cable shaped to %s (survey_duration %s, survey_warmup "
           "%s, latency_iterations %d)" % (args.rate, args.duration,
                                           args.warmup, args.lat_iterations),
           "",
           "  %-5s %-5s %-6s %-6s %-5s %-6s %-8s %-8s %-9s %-8s %s" % (
               "rings", "nodes", "class", "found", "edges", "rounds",
               "wall s", "--wait s", "tests sum", "vs 1", "up s"),
           "  %-5s %-5s %-6s %-6s %-5s %-6s %-8s %-8s %-9s %-8s %s" % (
               "", "", "(m)", "(m)", "(m)", "(m)", "(m)", "(m)", "s (m)",
               "(c)", "(m)")]
    one = next((x for x in results if x["rings"] == 1 and not x["error"]),
               None)
    for x in results:
        if x["error"]:
            out.append("  %-5d FAILED: %s" % (x["rings"], x["error"]))
            continue
        out.append("  %-5d %-5d %-6s %-6d %-5d %-6s %-8.1f %-8.1f %-9.1f "
                   "%-8s %.1f" % (
                       x["rings"], x["nodes"], x["kind"], x["n_rings"],
                       x["edges"], "%d%s" % (x["rounds"], "" if one is None
                                             or x["rounds"] == one["rounds"]
                                             else "(!)"),
                       x["wall"], x["wait_s"], x["sum"],
                       "%.2fx" % (x["wall"] / one["wall"]) if one else "-",
                       x["up_s"]))
    out += ["  wall: the coordinator's survey_wall_s; --wait: `ringctl "
            "survey --wait` by our clock; tests sum: tests_sum_s_computed; "
            "vs 1: wall / one ring's wall; up: agents started until every "
            "node heard both neighbours.",
            "  Goal: rounds as one ring's (2) and wall near 1.0x: the rings "
            "are surveyed side by side. (!) marks other rounds."]
    return out


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"))
    ap.add_argument("--rings", default="1,4,16",
                    help="comma-separated numbers of rings of 4")
    ap.add_argument("--rate", default="100mbit")
    ap.add_argument("--duration", default="1s")
    ap.add_argument("--warmup", default="200ms")
    ap.add_argument("--lat-iterations", type=int, default=100)
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("bench_rings: needs root (network namespaces)")
    missing = missing_binaries(args.bin)
    if missing:
        sys.exit("bench_rings: missing in %s: %s" % (args.bin,
                                                     " ".join(missing)))
    args.bin = os.path.abspath(args.bin)
    cl.cleanup_dead_test_clusters("rgb")  # what a killed bench left
    results = []
    for i, n in enumerate(int(x) for x in args.rings.split(",")):
        results.append(survey_site(args, n, "rgb%d%s" % (os.getpid(),
                                                         chr(97 + i))))
    print("\n".join(report(args, results)))
    return 1 if any(x["error"] for x in results) else 0


if __name__ == "__main__":
    sys.exit(main())
