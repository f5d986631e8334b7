"""make bench, part 7 (allreduce): `ringctl test allreduce` against what
the links allow, on the emulated 4-node ring n1-n2-n4-n3 (the reference cluster's
cabling) with every cable shaped by tc to one rate (tbf on both wire-side
ends, default 1gbit, burst 128kb, latency 50ms).

1. Single-edge one-way bandwidth of every cable the all-reduce uses, in the
   direction it sends (rank r to rank r+1 of the published order, and the
   2-node job's return direction too), each cable alone, one TCP stream
   (the all-reduce uses one connection per edge): `ringctl test bw A B
   --streams 1 --direction a-to-b`, alternating run by run with `iperf3 -P
   1` on the same cable (server bound to the address ringctl tested). Then
   every edge a job uses loaded at once with iperf3 (one client per edge,
   started together): what the shaped links and this host's CPUs carry
   together, for reference.
2. `ringctl -f json test allreduce` on the whole ring (4 ranks) and with
   `--nodes` on two neighbours (one cable, both directions), alternating,
   several runs on a ladder of sizes; every result verified by the ranks.

What the links allow (computed): in a ring all-reduce every rank sends
2(n-1)/n x size over its outgoing edge, all edges at once, so time >=
2(n-1)/n x size / B_min and busbw (= algbw x 2(n-1)/n) <= B_min, the
slowest used edge's single-edge one-way bandwidth: the limit is the
minimum of the single-edge figures, not their sum. Their sum is the
aggregate the used edges carry at once; the job puts n x busbw on the
cables (2(n-1) x size / time over n edges), so n x busbw / sum is the
share of that aggregate it uses (equal to busbw / limit on equal cables).
The report gives both, per size, from the median of the runs.

The bench reports; it asserts no speed. A figure above 1.00 x the limit at
small sizes is tbf's bucket (128 kB passes at line rate) or timing noise.
"""

import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

import cluster as cl  # noqa: E402  (bench.py set sys.path)
from daemons import Ringd  # noqa: E402
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY, SHORT_SURVEY,  # noqa: E402
                      neighbours_heard, shape_ring)

RING = ["n1", "n2", "n4", "n3"]
IPERF_BASE_PORT = 5301  # one iperf3 server per directed edge
SHAPE = "tbf rate %s burst 128kb latency 50ms"  # cluster.shape's defaults


def _progress(msg):
    sys.stderr.write("[bench] %s\n" % msg)
    sys.stderr.flush()


def _med(v):
    return statistics.median(v) if v else float("nan")


def _spread(v, fmt="%.3f"):
    return ("[" + fmt % min(v) + ".." + fmt % max(v) + "]") if v else ""


class _Fail(Exception):
    pass


def _ringctl_json(r, *args, timeout_s=120):
    p = r.ringctl(*args, timeout_s=timeout_s)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        raise _Fail("ringctl %s: rc %d, no JSON: %s" % (
            " ".join(args), p.returncode, (p.stderr or p.stdout)[-300:]))
    if p.returncode != 0 or doc.get("result") != "ok":
        raise _Fail("ringctl %s: rc %d: %s" % (
            " ".join(args), p.returncode,
            doc.get("error") or p.stderr.strip()[-300:]))
    return doc


def _edges(order):
    """Directed edges of both jobs: the ring's (rank r -> r+1) and the
    2-node job's return edge (order[1] -> order[0])."""
    n = len(order)
    ring = [(order[i], order[(i + 1) % n]) for i in range(n)]
    pair = [(order[0], order[1]), (order[1], order[0])]
    return ring, pair, ring + [pair[1]]


def _ringd_bw(r, a, b, args):
    doc = _ringctl_json(r, "test", "bw", a, b, "--streams", "1",
                        "--direction", "a-to-b", "--duration",
                        str(args.ar_edge_duration), "--warmup",
                        str(args.ar_edge_warmup))
    return doc["gbps_a_to_b_measured"], doc["b_address"]


def _iperf_argv(addr, port, args):
    return ["iperf3", "-c", addr, "-p", str(port), "-P", "1", "-t",
            str(args.ar_edge_duration), "-O", str(args.ar_edge_warmup), "-J"]


def _iperf_gbps(p, what):
    out, err = p.communicate()
    try:
        doc = json.loads(out)
    except ValueError:
        raise _Fail("iperf3 %s: rc %d: %s" % (what, p.returncode,
                                             (err or out)[-300:]))
    if p.returncode != 0 or "error" in doc:
        raise _Fail("iperf3 %s: %s" % (what, doc.get("error", err)))
    return doc["end"]["sum_received"]["bits_per_second"] / 1e9


def _iperf_start(c, a, addr, port, args):
    return subprocess.Popen(["ip", "netns", "exec", c.ns(a)] +
                            _iperf_argv(addr, port, args),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _iperf_together(c, edges, addr, port, args):
    """One iperf3 client per directed edge, all started at once; each
    edge's Gbit/s."""
    procs = [(e, _iperf_start(c, e[0], addr[e], port[e], args))
             for e in edges]
    got = {}
    errs = []
    for e, p in procs:
        try:
            got[e] = _iperf_gbps(p, "%s -> %s" % e)
        except _Fail as x:
            errs.append(str(x))
    if errs:
        raise _Fail("; ".join(errs))
    return got


def _allreduce(r, args, nodes=None):
    argv = ["test", "allreduce", "--sizes", args.ar_sizes, "--iterations",
            str(args.ar_iterations), "--warmup", str(args.ar_warmup)]
    if nodes:
        argv += ["--nodes", ",".join(nodes)]
    t0 = time.monotonic()
    doc = _ringctl_json(r, *argv, timeout_s=args.ar_timeout)
    if doc.get("verified") is not True:
        raise _Fail("ringctl %s: result not verified" % " ".join(argv))
    return doc, time.monotonic() - t0


def allreduce_bench(args, prefix):
    res = {"error": None, "errors": [], "order": None, "edges": {},
           "iperf": {}, "together": {"ring": [], "pair": []},
           "jobs": {4: [], 2: []}, "wall": {4: [], 2: []},
           "comparison": [], "addr": {}, "loadavg": None, "survey": None}
    res["loadavg"] = os.getloadavg()
    c = cl.Cluster(RING, prefix)
    try:
        c.up()
        shape_ring(c, args.ar_rate)
        res["qdisc"] = c.qdisc(RING[0], RING[1]).strip()
        # No automatic survey: its tests would share the cables with ours.
        r = Ringd(c, args.bin, heartbeat_ms=500,
                  coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY,
                  agent_extra=FAST_AGENT)
        r.setup_pki()
        r.start_all(timeout=30)
        cl.wait_for(lambda: neighbours_heard(r, RING), 60,
                    "every node to hear its two neighbours")
        p = r.ringctl("survey", "--wait", fmt=None, timeout_s=120)
        if p.returncode != 0:
            raise _Fail("survey --wait: rc %d: %s" % (p.returncode,
                                                      p.stderr.strip()))
        p = r.ringctl("ranks", timeout_s=10)
        if p.returncode != 0:
            raise _Fail("ranks: rc %d: %s" % (p.returncode,
                                              p.stderr.strip()))
        doc = json.loads(p.stdout)
        order = [x["node"] for x in sorted(doc["ranks"],
                                           key=lambda x: x["rank"])]
        res["order"] = order
        res["kind"] = doc.get("kind")
        ring, pair, edges = _edges(order)
        res["ring_edges"], res["pair_edges"] = ring, pair
        _progress("allreduce: ring %s, published order %s, cables %s" % (
            "-".join(RING), " ".join(order), args.ar_rate))
        port = {e: IPERF_BASE_PORT + i for i, e in enumerate(edges)}
        for e in edges:
            res["edges"][e], res["iperf"][e] = [], []
        # 1. each directed edge alone, ringd and iperf3 alternating.
        for run in range(args.ar_edge_runs):
            for e in edges:
                try:
                    g, addr = _ringd_bw(r, e[0], e[1], args)
                    res["edges"][e].append(g)
                    if e not in res["addr"]:
                        res["addr"][e] = addr
                        c.spawn(e[1], ["iperf3", "-s", "-B", addr, "-p",
                                       str(port[e])],
                                os.path.join(r.log_dir, "iperf3-%s-%s.log"
                                             % e), name="iperf3")
                        cl.wait_for(lambda: "%s:%d" % (addr, port[e]) in
                                    c.exec(e[1], ["ss", "-Htln"]).stdout,
                                    10, "iperf3 server on %s" % addr)
                    t = _iperf_gbps(_iperf_start(c, e[0], addr, port[e],
                                                 args), "%s -> %s" % e)
                    res["iperf"][e].append(t)
                    _progress("edge %s -> %s run %d/%d: ringctl %.3f, "
                              "iperf3 %.3f Gbit/s" % (
                                  e[0], e[1], run + 1, args.ar_edge_runs,
                                  g, t))
                except (_Fail, subprocess.TimeoutExpired,
                        TimeoutError, KeyError) as x:
                    res["errors"].append("edge %s -> %s run %d: %s" % (
                        e[0], e[1], run + 1, x))
                    _progress("FAILED %s" % res["errors"][-1])
            # Every edge of a job at once (iperf3): what the host carries.
            for key, es in (("ring", ring), ("pair", pair)):
                if not all(e in res["addr"] for e in es):
                    continue
                try:
                    got = _iperf_together(c, es, res["addr"], port, args)
                    res["together"][key].append(got)
                    _progress("%s edges at once run %d: %s Gbit/s" % (
                        len(es), run + 1, " ".join(
                            "%.3f" % got[e] for e in es)))
                except (_Fail, subprocess.TimeoutExpired) as x:
                    res["errors"].append("%s edges at once run %d: %s" % (
                        len(es), run + 1, x))
        # 2. the all-reduce, 4 ranks and 2 ranks alternating.
        for run in range(args.ar_runs):
            for n, nodes in ((4, None), (2, order[:2])):
                try:
                    doc, wall = _allreduce(r, args, nodes)
                    res["jobs"][n].append(doc)
                    res["wall"][n].append(wall)
                    if doc.get("comparison_computed"):
                        res["comparison"].append(doc["comparison_computed"])
                    last = doc["sizes"][-1]
                    _progress("allreduce %d ranks run %d/%d: %s busbw "
                              "%.3f Gbit/s (%.1f s)" % (
                                  n, run + 1, args.ar_runs, last["size"],
                                  last["busbw_gbps_computed"], wall))
                except (_Fail, subprocess.TimeoutExpired) as x:
                    res["errors"].append("allreduce %d ranks run %d: %s" %
                                         (n, run + 1, x))
                    _progress("FAILED %s" % res["errors"][-1])
    except Exception as e:  # recorded; the bench goes on
        res["error"] = "%s: %s" % (type(e).__name__, str(e)[:2000])
        _progress("allreduce FAILED: %s" % res["error"])
    finally:
        c.down()
        res["loadavg_end"] = os.getloadavg()
    return res


def _per_size(jobs):
    """{bytes: (label, [time_us], [busbw])} over the runs."""
    out = {}
    for doc in jobs:
        for s in doc.get("sizes", []):
            e = out.setdefault(s["bytes"], (s["size"], [], []))
            e[1].append(s["time_us_measured"])
            e[2].append(s["busbw_gbps_computed"])
    return out


def _rate_gbps(rate):
    """Gbit/s of a tc rate such as 1gbit or 500mbit; None if not parsed."""
    m = re.match(r"^([0-9.]+)(k|m|g)?bit$", rate.strip().lower())
    if not m:
        return None
    return float(m.group(1)) * {"k": 1e-6, "m": 1e-3, "g": 1.0,
                                None: 1e-9}[m.group(2)]


def _fit(ps, n):
    """Least squares time = fixed + size / rate over the median times:
    (fixed cost per all-reduce in ms, its share per step in us, the busbw
    the slope gives in Gbit/s), or None with fewer than 3 sizes."""
    pts = [(b, _med(t)) for b, (_, t, _) in ps.items()]
    if len(pts) < 3:
        return None
    mx = sum(b for b, _ in pts) / len(pts)
    my = sum(t for _, t in pts) / len(pts)
    sxx = sum((b - mx) ** 2 for b, _ in pts)
    if sxx <= 0:
        return None
    slope = sum((b - mx) * (t - my) for b, t in pts) / sxx  # us per byte
    if slope <= 0:
        return None
    fixed = my - slope * mx
    busbw = 8 / (slope * 1e3) * 2 * (n - 1) / n
    return fixed / 1e3, fixed / (2 * (n - 1)), busbw


def _limit(edges, src):
    """(min, sum) of the used edges' single-edge medians, or None."""
    meds = [_med(src.get(e, [])) for e in edges]
    if not meds or any(m != m for m in meds):  # nan: an edge not measured
        return None
    return min(meds), sum(meds)


def allreduce_report(args, res, out):
    w = out.append
    w("PART 7  ring all-reduce busbw against what the links allow, 4-node "
      "ring %s, every cable shaped: %s on both wire-side ends" % (
          "-".join(RING), SHAPE % args.ar_rate))
    la = res.get("loadavg")
    le = res.get("loadavg_end")
    w("  host: %s, %d CPUs shared with other users (load average "
      "%s at the start, %s at the end, measured), kernel %s; iperf3 and "
      "ringd on the same CPUs, so figures are what this host carries, not "
      "the links alone" % (
          platform.node(), os.cpu_count() or 0,
          "/".join("%.2f" % x for x in la) if la else "?",
          "/".join("%.2f" % x for x in le) if le else "?",
          platform.release()))
    w("  tc's rate counts whole frames (Ethernet, IP and TCP headers), so "
      "one TCP stream's goodput tops out near 95% of it on a 1500-byte MTU")
    if res["error"]:
        w("  FAILED: %s" % res["error"])
    for e in res["errors"]:
        w("  failed: %s" % e)
    if not res.get("order"):
        return
    order = res["order"]
    w("  published rank order (survey, kind %s): %s; all-reduce over TCP, "
      "one connection per edge, rank r sends to rank r+1" % (
          res.get("kind"), " ".join(order)))
    w("")
    w("  1. single-edge one-way bandwidth, each edge alone, 1 stream, %d "
      "runs of %d s after %d s warm-up, alternating (measured, Gbit/s, "
      "median [min..max]):" % (args.ar_edge_runs, args.ar_edge_duration,
                               args.ar_edge_warmup))
    w("     every cable is shaped alike: differences between edges are this "
      "host's noise, and the limit below takes the lowest median as it is")
    w("     %-12s %-26s %-26s %s" % ("edge", "ringctl test bw",
                                     "iperf3 -P 1", "used by"))
    ring, pair = res["ring_edges"], res["pair_edges"]
    for e in ring + [pair[1]]:
        o, t = res["edges"].get(e, []), res["iperf"].get(e, [])
        used = ", ".join(x for x, es in (("4 ranks", ring), ("2 ranks",
                                                             pair))
                         if e in es)
        w("     %-12s %-26s %-26s %s" % (
            "%s -> %s" % e,
            "%.3f %s" % (_med(o), _spread(o)) if o else "-",
            "%.3f %s" % (_med(t), _spread(t)) if t else "-", used))
    for key, es, label in (("ring", ring, "4 ranks' 4 edges"),
                           ("pair", pair, "2 ranks' 2 edges (one cable, "
                            "both ways)")):
        runs = res["together"][key]
        if not runs:
            continue
        per = [[x[e] for x in runs] for e in es]
        sums = [sum(x[e] for e in es) for x in runs]
        w("     %s at once, iperf3 (measured, median per edge): %s; sum "
          "%.3f %s" % (label, " ".join("%.3f" % _med(v) for v in per),
                       _med(sums), _spread(sums)))
    w("")
    w("  2. what the links allow (computed from the ringctl medians above):")
    w("     limit = min over the edges a job uses of their single-edge "
      "one-way figure: every rank sends 2(n-1)/n x size over its own edge, "
      "all edges at once, so busbw = algbw x 2(n-1)/n cannot pass the "
      "slowest edge")
    w("     sum = the used edges' single-edge figures added: the aggregate "
      "the ring's links carry one way; a job puts n x busbw on the cables, "
      "so n x busbw / sum is its share of that aggregate (= busbw / limit "
      "on equal cables)")
    lims = {}
    for n, es in ((4, ring), (2, pair)):
        lim = _limit(es, res["edges"])
        ip = _limit(es, res["iperf"])
        lims[n] = lim
        if lim:
            w("     %d ranks: limit %.3f Gbit/s, sum %.3f Gbit/s over %d "
              "edges (iperf3's medians: limit %.3f, sum %.3f)" % (
                  n, lim[0], lim[1], len(es),
                  ip[0] if ip else float("nan"),
                  ip[1] if ip else float("nan")))
    w("")
    w("  3. ringctl test allreduce --sizes %s --iterations %d --warmup %d, "
      "%d runs per ring size, 4 and 2 ranks alternating; time = the "
      "slowest rank's mean per size (measured), busbw (computed by ringctl, "
      "nccl-tests' definition); median [min..max] over runs; every run's "
      "result verified by every rank: %s" % (
          args.ar_sizes, args.ar_iterations, args.ar_warmup, args.ar_runs,
          "yes" if all(d.get("verified") is True
                       for n in (4, 2) for d in res["jobs"][n])
          and (res["jobs"][4] or res["jobs"][2]) else "no"))
    for n in (4, 2):
        ps = _per_size(res["jobs"][n])
        if not ps:
            continue
        lim = lims.get(n)
        w("     %d ranks (%s), %d runs, ringctl's own wall time %.1f s "
          "median per run (measured):" % (
              n, " ".join(res["jobs"][n][0]["order"]), len(res["jobs"][n]),
              _med(res["wall"][n])))
        w("       %-5s %-26s %-26s %-12s %s" % (
            "size", "time ms (measured)", "busbw Gbit/s (computed)",
            "busbw/limit", "%d x busbw/sum" % n))
        for b in sorted(ps):
            label, t, bw = ps[b]
            mb = _med(bw)
            w("       %-5s %-26s %-26s %-12s %s" % (
                label, "%.2f %s" % (_med(t) / 1e3,
                                    _spread([x / 1e3 for x in t], "%.2f")),
                "%.3f %s" % (mb, _spread(bw)),
                "%.3f" % (mb / lim[0]) if lim else "-",
                "%.3f" % (n * mb / lim[1]) if lim else "-"))
        f = _fit(ps, n)
        if f:
            fixed = ("fixed %.2f ms per all-reduce (%.0f us per each of its "
                     "2(n-1) = %d steps)" % (f[0], f[1], 2 * (n - 1))
                     if f[0] > 0 else
                     "fixed %.2f ms, below zero: run-to-run noise and tbf's "
                     "128 kB bucket at small sizes outweigh the per-step "
                     "cost" % f[0])
            w("       fit of the median times to fixed + size/rate "
              "(computed): %s, busbw from the slope %.3f Gbit/s%s" % (
                  fixed, f[2], ", %.3f x the limit" % (f[2] / lim[0])
                  if lim else ""))
    p4, p2 = _per_size(res["jobs"][4]), _per_size(res["jobs"][2])
    if p4 and p2:
        top = max(set(p4) & set(p2) or [0])
        if top:
            r = _med(p2[top][2]) / _med(p4[top][2])
            w("     2 ranks / 4 ranks busbw at %s: %.3f (computed, medians)"
              "%s" % (p4[top][0], r,
                      ": adding nodes to a ring adds memory, not all-reduce "
                      "bandwidth" if abs(r - 1) <= 0.05 else ""))
    if res["comparison"]:
        w("     ringctl's own comparison, last run (computed): %s" %
          res["comparison"][-1])
    if p4 and lims.get(4):
        top = max(p4)
        w("  verdict (computed): at %s the 4-rank all-reduce reaches %.0f%% "
          "of what the links allow (%.3f of %.3f Gbit/s, the slowest "
          "edge alone)" % (p4[top][0], 100 * _med(p4[top][2]) / lims[4][0],
                           _med(p4[top][2]), lims[4][0]))
        g = _rate_gbps(args.ar_rate)
        if g:
            w("  and %.0f%% of the shaped rate (%.3f Gbit/s, tc's rate "
              "counts headers too)" % (100 * _med(p4[top][2]) / g, g))
