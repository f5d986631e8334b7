#!/usr/bin/env python3
"""make bench: ring-agent's TCP engine against the standard tools, and the
survey's round scheduling, on the emulated cluster (network namespaces).

Part 1, one veth link between two namespaces (a 2-node cluster), in one run,
alternating ours/theirs run by run so that drift on the host hits both:
  - bandwidth: `ringctl test bw n1 n2` vs iperf3, at 1 and 8 streams;
  - latency:   `ringctl test lat n1 n2` vs sockperf ping-pong, 64 B, 10 KiB.
The link is unshaped, so this measures CPU-bound throughput: the point is
that the engine must not be slower than iperf3/sockperf on the same host.

Part 2, survey wall time of 4-, 8- and 16-node rings (every cable shaped)
against the sum of its tests' durations, from `ringctl -f json status`.

Part 3, RDMA, inside the soft-RoCE qemu TCG VM (tests/rdma/vm.sh bench,
tests/rdma/payload-bench.sh): ring-agent's verbs engine against perftest
on one emulated edge (n1's rxe1b -> n2's rxe2a), same devices, message
size and QP count, alternating ours/theirs run by run:
  - RDMA WRITE and READ bandwidth: `ringctl test rdma-bw n1 n2 --op
    write|read --qps 2 --size 64K --warmup 1 --duration 3` vs
    `ib_write_bw|ib_read_bw -q 2 -s 65536 -D 5 -f 1` (perftest's margin
    -f is its warm-up: it counts between 1 s and 4 s); goal >= 0.98x;
  - RDMA WRITE latency, 2 bytes: ringd's p50 vs ib_write_lat's t_typical
    (its median), both half a round trip; goal <= 1.05x.
The coordinator runs one short TCP survey to learn the cabling, then no
automatic survey. A VM that cannot run (no qemu, no Debian mirror) skips
part 3 (vm.sh exit 77). TCG figures are noisy; the report says so.

Parts 4-6 (bench/bench_ops.py, whose docstring says more):
  4 watch:     carrier loss to alert latency on a 4-node ring, median and
               max of 10 cuts (goal under 1 s), to the alert_command hook
               and to `ringctl status` listing it;
  5 selfbytes: ringd's own bytes per edge per hour with default settings
               (kernel counters of the cables over an idle window after
               the first survey, and the survey's own bytes) next to the
               coordinator's self_bytes_last_hour_computed;
  6 scale:     coordinator CPU and RSS with 1,024 real agents pushing
               counters at the default interval (plain build: --plain-bin).

Part 7 (bench/bench_allreduce.py, whose docstring says more):
  7 allreduce: `ringctl test allreduce` busbw on a 4-node ring with every
               cable shaped to one rate (default 1gbit), and on 2 of its
               nodes, against what the links allow: each used edge's
               single-edge one-way bandwidth (`ringctl test bw`, iperf3 on
               the same cable for reference); the limit is the slowest
               edge, and the sum of the edges is shown with what it means.

Part 8 (bench/bench_alerting.py, whose docstring says more):
  8 alerting:  a real Alertmanager (alertmanager_url): cut to its API
               listing the cable (goal < 1 s), mend to resolved there (the
               hold-down + < 1 s), false alerts per coordinator restart
               (goal 0), the light checks' own bytes per edge per hour
               (goal < 0.01% of the edge).

Part 9 (bench/bench_soak.py, whose docstring says more):
  9 soak:      cuts, agent kills, halved cables and coordinator restarts in
               turn on a 6-node ring, status and alerts sampled together:
               disagreements, false alerts, missed faults (goal 0 each).

Part 10 (bench/bench_fleet.py, whose docstring says more):
  10 fleet:    one coordinator and 1,024 / 4,096 real agents and 10,000
               load-generator sessions (bench/loadgen.c), each from its own
               127.x.y.z: join storm, plain and JSON `status` p50/p99 over
               100 calls, coordinator RSS and idle CPU, against the goals.

Choose parts with --only pair,survey,rdma,watch,selfbytes,scale,allreduce,alerting,soak,fleet
(default all) or --skip-PART (`make bench BENCH=allreduce` passes --only).
Parts 1, 2 and 4-7 need root (namespaces); part 3 does not. Everything is torn down, also on failure or ^C.
Figures are labelled: "measured" come from a tool's own output or our
clock, "computed" are derived here (ratios, medians' ratios, speed-ups).
"""

import argparse
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cluster as cl  # noqa: E402
from daemons import Ringd, missing_binaries  # noqa: E402
import bench_ops  # noqa: E402
import bench_allreduce  # noqa: E402
import bench_alerting  # noqa: E402
import bench_soak  # noqa: E402
import bench_fleet  # noqa: E402

IPERF_PORT = 5201
SOCKPERF_PORT = 11111
PAIR_TAG = "p"
OPS_TAG = {"watch": "w", "selfbytes": "b", "scale": "k", "allreduce": "a",
           "alerting": "m", "soak": "s", "fleet": "f"}
T0 = time.monotonic()


class BenchError(Exception):
    pass


def progress(msg):
    sys.stderr.write("[bench %6.1fs] %s\n" % (time.monotonic() - T0, msg))
    sys.stderr.flush()


def median(v):
    return statistics.median(v) if v else float("nan")


def spread(v, fmt):
    if not v:
        return "(no data)"
    return "[%s..%s]" % (fmt % min(v), fmt % max(v))


def tool_version(argv, pat):
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except OSError:
        return "?"
    m = re.search(pat, p.stdout + p.stderr)
    return m.group(1) if m else "?"


def read_sysctl(ns, key):
    p = subprocess.run(["ip", "netns", "exec", ns, "cat",
                        "/proc/sys/" + key.replace(".", "/")],
                       capture_output=True, text=True, timeout=10)
    return p.stdout.strip() if p.returncode == 0 else "?"


# ---------------------------------------------------------------- part 1
class PairBench:
    def __init__(self, args, prefix):
        self.a = args
        self.cl = cl.Cluster(["n1", "n2"], prefix)
        self.r = None
        self.addr = None
        self.ours_bw = {n: [] for n in args.streams}
        self.theirs_bw = {n: [] for n in args.streams}
        self.ours_lat = {s: [] for s in args.sizes}
        self.theirs_lat = {s: [] for s in args.sizes}
        self.failures = []
        self.conventions = {}
        self.full_rtt_check = None
        self.facts = {}
        self.ours_bw_meta = {n: [] for n in args.streams}
        self.theirs_bw_meta = {n: [] for n in args.streams}
        self.ours_lat_meta = {s: [] for s in args.sizes}
        self.theirs_lat_meta = {s: [] for s in args.sizes}
        self.threads = {}
        # (ours, theirs) of the same round, for the paired comparison
        self.bw_pairs = {n: [] for n in args.streams}
        self.lat_pairs = {(s, st): [] for s in args.sizes
                          for st in ("p50", "mean", "p99")}

    def up(self):
        self.cl.up()
        # No automatic survey: its tests would share the link with ours.
        self.r = Ringd(self.cl, self.a.bin, heartbeat_ms=500,
                       coord_extra=["survey_settle 1h", "survey_grace 1h",
                                    "survey_interval 0"])
        self.r.setup_pki()
        self.r.start_all()

    def ringctl_json(self, *args, timeout_s=60):
        p = self.r.ringctl(*args, timeout_s=timeout_s)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            raise BenchError("ringctl %s: rc %d, no JSON: %s" %
                             (" ".join(args), p.returncode,
                              (p.stderr or p.stdout).strip()[:300]))
        if p.returncode != 0 or doc.get("result") != "ok":
            raise BenchError("ringctl %s: rc %d: %s" %
                             (" ".join(args), p.returncode,
                              doc.get("error") or p.stderr.strip()))
        return doc

    # -------------------------------------------------------- bandwidth
    def ours_bw_run(self, streams):
        doc = self.ringctl_json(
            "test", "bw", "n1", "n2", "--streams", str(streams),
            "--duration", str(self.a.duration), "--warmup",
            str(self.a.warmup))
        a, b = doc.get("a_side") or {}, doc.get("b_side") or {}
        return {"gbps": doc["gbps_a_to_b_measured"],
                "retrans": a.get("retransmits", 0),
                "cpu_send": a.get("cpu_pct", float("nan")),
                "cpu_recv": b.get("cpu_pct", float("nan")),
                "b_address": doc.get("b_address"),
                "a_interface": doc.get("a_interface")}

    def theirs_bw_run(self, streams):
        argv = ["iperf3", "-c", self.addr, "-p", str(IPERF_PORT),
                "-P", str(streams), "-t", str(self.a.duration),
                "-O", str(self.a.warmup), "-J"]
        p = self.cl.exec("n1", argv, timeout=self.a.duration +
                         self.a.warmup + 30)
        try:
            doc = json.loads(p.stdout)
        except ValueError:
            raise BenchError("iperf3: rc %d: %s" % (p.returncode,
                                                    p.stderr.strip()[:300]))
        if "error" in doc or p.returncode != 0:
            raise BenchError("iperf3: %s" % doc.get("error", p.stderr))
        end = doc["end"]
        cpu = end.get("cpu_utilization_percent", {})
        st = doc.get("start", {})
        self.facts.setdefault("iperf3_blksize", st.get("test_start", {})
                              .get("blksize"))
        self.facts.setdefault("iperf3_sndbuf", st.get("sndbuf_actual"))
        self.facts.setdefault("iperf3_rcvbuf", st.get("rcvbuf_actual"))
        self.facts.setdefault("iperf3_omit", st.get("test_start", {})
                              .get("omit"))
        return {"gbps": end["sum_received"]["bits_per_second"] / 1e9,
                "retrans": end["sum_sent"].get("retransmits", 0),
                "cpu_send": cpu.get("host_total", float("nan")),
                "cpu_recv": cpu.get("remote_total", float("nan"))}

    def agent_threads(self):
        """Threads of n1's agent now (sampled while a test runs)."""
        try:
            return len(os.listdir("/proc/%d/task" % self.r.agents["n1"].pid))
        except OSError:
            return None

    # -------------------------------------------------------- latency
    def ours_lat_run(self):
        doc = self.ringctl_json(
            "test", "lat", "n1", "n2", "--sizes",
            ",".join(str(s) for s in self.a.sizes), "--iterations",
            str(self.a.iterations))
        side = doc.get("a_side") or {}
        self.conventions["ringd"] = side.get("latency_convention", "?")
        out = {}
        for row in side.get("latency", []):
            out[row["size"]] = {"p50": row["p50_us"], "mean": row["mean_us"],
                                "p99": row["p99_us"], "n": row["n"]}
        return out

    @staticmethod
    def parse_sockperf(text):
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
        res = {}
        m = re.search(r"Summary: (Latency|Round trip) is ([0-9.]+) usec",
                      text)
        if not m:
            raise BenchError("sockperf: no summary line in:\n" + text[-800:])
        res["summary_line"] = m.group(0)
        res["full_rtt"] = m.group(1) == "Round trip"
        m = re.search(r"avg-(latency|rtt)=([0-9.]+)", text)
        res["mean"] = float(m.group(2)) if m else float("nan")
        for key, pat in (("min", r"<MIN> observation =\s*([0-9.]+)"),
                         ("p50", r"percentile 50\.000 =\s*([0-9.]+)"),
                         ("p99", r"percentile 99\.000 =\s*([0-9.]+)"),
                         ("p999", r"percentile 99\.900 =\s*([0-9.]+)")):
            m = re.search(pat, text)
            res[key] = float(m.group(1)) if m else float("nan")
        m = re.search(r"\[Valid Duration\].*?ReceivedMessages=(\d+)", text)
        res["n"] = int(m.group(1)) if m else 0
        return res

    def theirs_lat_run(self, size, full_rtt=False, secs=None):
        argv = ["sockperf", "pp", "--tcp", "-i", self.addr, "-p",
                str(SOCKPERF_PORT), "-m", str(size), "-t",
                str(secs or self.a.sockperf_time)]
        if full_rtt:
            argv.append("--full-rtt")
        p = self.cl.exec("n1", argv, timeout=(secs or self.a.sockperf_time)
                         + 30)
        if p.returncode != 0:
            raise BenchError("sockperf pp: rc %d: %s" %
                             (p.returncode, (p.stderr or p.stdout)[-300:]))
        res = self.parse_sockperf(p.stdout + p.stderr)
        if res["full_rtt"] != full_rtt:
            raise BenchError("sockperf: unexpected convention: %s" %
                             res["summary_line"])
        return res

    # -------------------------------------------------------- the run
    def start_servers(self):
        d = self.r.log_dir
        self.cl.spawn("n2", ["iperf3", "-s", "-B", self.addr, "-p",
                             str(IPERF_PORT)],
                      os.path.join(d, "iperf3-server.log"), name="iperf3")
        self.cl.spawn("n2", ["sockperf", "sr", "--tcp", "-i", self.addr,
                             "-p", str(SOCKPERF_PORT)],
                      os.path.join(d, "sockperf-server.log"),
                      name="sockperf")

        def listening():
            out = self.cl.exec("n2", ["ss", "-Htln"]).stdout
            return all(("%s:%d" % (self.addr, port)) in out
                       for port in (IPERF_PORT, SOCKPERF_PORT))
        cl.wait_for(listening, 10, "iperf3 and sockperf servers listening")

    def attempt(self, what, fn, *args):
        try:
            return fn(*args)
        except (BenchError, subprocess.TimeoutExpired, KeyError) as e:
            self.failures.append("%s: %s" % (what, e))
            progress("FAILED %s: %s" % (what, e))
            return None

    def run(self):
        self.up()
        # The address the coordinator picks for B; the standard tools use
        # the very same path (kernel route from n1 to it).
        # Until the coordinator holds n2's inventory and neighbours it has
        # no data address to test against.
        def first_test():
            try:
                return self.ours_bw_run(1)
            except BenchError as e:
                if "no data address" in str(e):
                    return None
                raise
        first = cl.wait_for(first_test, 30, "a first ringd bandwidth test",
                            interval=0.3)
        self.addr = first["b_address"]
        self.facts["a_interface"] = first["a_interface"]
        n1 = self.cl.node("n1")
        self.facts["route"] = self.cl.exec(
            "n1", ["ip", "-o", "route", "get", self.addr]).stdout.split(
                "\\")[0].strip()
        for key in ("net.core.wmem_max", "net.core.rmem_max",
                    "net.ipv4.tcp_wmem", "net.ipv4.tcp_rmem",
                    "net.core.netdev_max_backlog"):
            self.facts[key] = read_sysctl(n1.ns, key)
        self.start_servers()
        progress("pair link: n1 -> n2 %s (%s)" % (self.addr,
                                                  self.facts["route"]))
        for n in self.a.streams:
            for i in range(self.a.runs):
                # Sample n1's agent threads mid-test (one stream, one
                # thread?) from a timer while ringctl waits.
                samples = []
                tm = threading.Timer(self.a.warmup + self.a.duration / 2,
                                     lambda: samples.append(
                                         self.agent_threads()))
                tm.start()
                o = self.attempt("ringd bw %d streams run %d" % (n, i + 1),
                                 self.ours_bw_run, n)
                tm.cancel()
                if samples and samples[0]:
                    self.threads.setdefault(n, samples[0])
                t = self.attempt("iperf3 %d streams run %d" % (n, i + 1),
                                 self.theirs_bw_run, n)
                if o:
                    self.ours_bw[n].append(o["gbps"])
                    self.ours_bw_meta[n].append(o)
                if t:
                    self.theirs_bw[n].append(t["gbps"])
                    self.theirs_bw_meta[n].append(t)
                if o and t:
                    self.bw_pairs[n].append((o["gbps"], t["gbps"]))
                progress("bw %d stream(s) run %d/%d: ringd %s, iperf3 %s "
                         "Gbps" % (n, i + 1, self.a.runs,
                                   "%.2f" % o["gbps"] if o else "FAILED",
                                   "%.2f" % t["gbps"] if t else "FAILED"))
        for i in range(self.a.runs):
            o = self.attempt("ringd lat run %d" % (i + 1), self.ours_lat_run)
            for s in self.a.sizes:
                if o and s in o:
                    self.ours_lat[s].append(o[s]["p50"])
                    self.ours_lat_meta[s].append(o[s])
                t = self.attempt("sockperf %d B run %d" % (s, i + 1),
                                 self.theirs_lat_run, s)
                if t:
                    self.conventions["sockperf"] = t["summary_line"]
                    self.theirs_lat[s].append(t["p50"])
                    self.theirs_lat_meta[s].append(t)
                if t and o and s in o:
                    for st in ("p50", "mean", "p99"):
                        self.lat_pairs[(s, st)].append((o[s][st], t[st]))
            progress("lat run %d/%d: %s" % (
                i + 1, self.a.runs, ", ".join(
                    "%d B ringd %s / sockperf %s us" % (
                        s, "%.1f" % self.ours_lat[s][-1]
                        if self.ours_lat[s] else "-",
                        "%.1f" % self.theirs_lat[s][-1]
                        if self.theirs_lat[s] else "-")
                    for s in self.a.sizes)))
        # Convention check: the same ping-pong with --full-rtt must read
        # twice the default figure if the default is half a round trip.
        s0 = self.a.sizes[0]
        full = self.attempt("sockperf --full-rtt check",
                            self.theirs_lat_run, s0, True, 2)
        half = self.attempt("sockperf default check", self.theirs_lat_run,
                            s0, False, 2)
        if full and half:
            self.full_rtt_check = (s0, full, half)

    def down(self):
        self.cl.down()

    # -------------------------------------------------------- report
    def report(self, out):
        a = self.a
        w = out.append
        w("PART 1  one veth link, n1 -> n2 (%s), unshaped: CPU-bound" %
          self.addr)
        w("  path: ringd a_interface=%s; kernel: %s" %
          (self.facts.get("a_interface"), self.facts.get("route")))
        w("  %d runs per tool, alternating ringd, other tool, ringd, ..." %
          a.runs)
        w("  bandwidth: ringctl test bw --duration %s --warmup %s  vs  "
          "iperf3 -P N -t %s -O %s (iperf3 3.12 takes whole seconds)" %
          (a.duration, a.warmup, a.duration, a.warmup))
        w("  latency:   ringctl test lat --iterations %d  vs  sockperf pp "
          "--tcp -m SIZE -t %d" % (a.iterations, a.sockperf_time))
        w("")
        w("  Bandwidth n1 -> n2, Gbps, receiver side; higher is better")
        w("  %-10s %-28s %-28s %s" % ("streams", "ringd (measured)",
                                      "iperf3 (measured)",
                                      "ringd/iperf3 (computed)"))
        w("  %-10s %-28s %-28s %s" % ("", "median [min..max]",
                                      "median [min..max]",
                                      ">= 1.00: ringd not slower"))
        verdicts = []
        for n in a.streams:
            o, t = self.ours_bw[n], self.theirs_bw[n]
            ratio = median(o) / median(t) if o and t else float("nan")
            w("  %-10d %-28s %-28s %s" % (
                n, "%.2f %s" % (median(o), spread(o, "%.2f")),
                "%.2f %s" % (median(t), spread(t, "%.2f")),
                self.verdict(ratio, self.bw_pairs[n], True)[0]))
            kind = self.verdict(ratio, self.bw_pairs[n], True)[1]
            if kind.startswith("slower"):
                verdicts.append(("bw", n, ratio, kind))
        w("")
        w("  Bandwidth side figures, medians over the runs")
        w("  %-10s %-34s %-34s %s" % ("streams", "ringd (measured)",
                                      "iperf3 (measured)",
                                      "Gbps per sender core (computed)"))
        for n in a.streams:
            om, tm = self.ours_bw_meta[n], self.theirs_bw_meta[n]

            def side(m):
                if not m:
                    return "(no data)"
                return "retr %-7d cpu snd %3.0f%% rcv %3.0f%%" % (
                    median([x["retrans"] for x in m]),
                    median([x["cpu_send"] for x in m]),
                    median([x["cpu_recv"] for x in m]))

            def eff(m):
                v = [x["gbps"] / (x["cpu_send"] / 100) for x in m
                     if x["cpu_send"] > 0]
                return "%.1f" % median(v) if v else "-"
            w("  %-10d %-34s %-34s ringd %s, iperf3 %s" % (
                n, side(om), side(tm), eff(om), eff(tm)))
        w("  (cpu: % of one core, ringd: its test threads, iperf3: the "
          "whole process; retr: TCP retransmits, sender side)")
        thr = ", ".join("%d stream(s): %s" % (n, self.threads.get(n, "?"))
                        for n in a.streams)
        w("  ringd agent n1 threads sampled mid-test (measured): %s" % thr)
        w("  socket buffers: ringd asks 4 MiB SO_SNDBUF/SO_RCVBUF where "
          "net.core.wmem_max/rmem_max allow (here %s/%s), else autotuning; "
          "iperf3 blksize %s B, sndbuf %s, rcvbuf %s (autotuned); "
          "tcp_wmem %s; tcp_rmem %s" % (
              self.facts.get("net.core.wmem_max"),
              self.facts.get("net.core.rmem_max"),
              self.facts.get("iperf3_blksize"),
              self.facts.get("iperf3_sndbuf"),
              self.facts.get("iperf3_rcvbuf"),
              self.facts.get("net.ipv4.tcp_wmem"),
              self.facts.get("net.ipv4.tcp_rmem")))
        w("")
        w("  Latency n1 <-> n2, microseconds, HALF round trip; lower is "
          "better")
        w("  %-8s %-6s %-26s %-26s %s" % ("size", "stat", "ringd (measured)",
                                         "sockperf (measured)",
                                         "ringd/sockperf (computed)"))
        w("  %-8s %-6s %-26s %-26s %s" % ("", "", "median [min..max]",
                                         "median [min..max]",
                                         "<= 1.00: ringd not slower"))
        for s in a.sizes:
            for stat in ("p50", "mean", "p99"):
                o = [x[stat] for x in self.ours_lat_meta[s]]
                t = [x[stat] for x in self.theirs_lat_meta[s]]
                ratio = median(o) / median(t) if o and t else float("nan")
                w("  %-8s %-6s %-26s %-26s %s" % (
                    "%d B" % s if stat == "p50" else "", stat,
                    "%.1f %s" % (median(o), spread(o, "%.1f")),
                    "%.1f %s" % (median(t), spread(t, "%.1f")),
                    self.verdict(ratio, self.lat_pairs[(s, stat)], False,
                                 stat == "p50")[0]))
                kind = self.verdict(ratio, self.lat_pairs[(s, stat)],
                                    False)[1]
                if stat == "p50" and kind.startswith("slower"):
                    verdicts.append(("lat", s, ratio, kind))
        on = [x["n"] for s in a.sizes for x in self.ours_lat_meta[s]]
        tn = [x["n"] for s in a.sizes for x in self.theirs_lat_meta[s]]
        w("  samples per size and run (measured): ringd %s, sockperf %s" %
          ("%d" % median(on) if on else "-", "%d" % median(tn) if tn else
           "-"))
        w("  conventions: ringd JSON says latency_convention=%r; sockperf "
          "prints %r (its default 'latency' is RTT/2; --full-rtt prints "
          "'Round trip is')" % (self.conventions.get("ringd", "?"),
                                self.conventions.get("sockperf", "?")))
        if self.full_rtt_check:
            s0, full, half = self.full_rtt_check
            w("  convention check, %d B, 2 s each, sockperf --full-rtt vs "
              "default (measured): min %.1f vs %.1f us, p50 %.1f vs %.1f us;"
              " ratio of the minima %.2f (computed; 2 = the default is half "
              "a round trip; the minimum is the least noisy figure)" % (
                  s0, full["min"], half["min"], full["p50"], half["p50"],
                  full["min"] / half["min"] if half["min"] else
                  float("nan")))
        w("  Only p50 is judged: ringd's tails come from one short burst of "
          "%d ping-pongs per size, sockperf's from %d s of them, and on a "
          "shared 2-core host the tails are mostly scheduler noise (see "
          "the min..max spread)." % (a.iterations, a.sockperf_time))
        w("  'ahead in k/n runs' (computed): rounds of the alternation in "
          "which ringd beat the other tool; a median gap with k near n/2 "
          "is run-to-run noise, not a difference between the tools.")
        w("")
        if verdicts:
            w("  WHERE RINGD IS SLOWER (medians beyond the %.0f%% "
              "tolerance):" % (100 * a.tolerance))
            for kind, k, ratio, how in verdicts:
                w("   - " + self.explain(kind, k, ratio, how))
        else:
            w("  ringd is not slower than iperf3/sockperf anywhere here "
              "(tolerance %.0f%%)." % (100 * a.tolerance))
        if self.failures:
            w("")
            w("  FAILED RUNS (%d):" % len(self.failures))
            for f in self.failures:
                w("   - " + f)

    def verdict(self, ratio, pairs, higher_better, judged=True):
        """(text, kind): kind is faster, par, slower (ringd behind in all
        but at most a fifth of the paired runs) or slower-noise."""
        if ratio != ratio:
            return "n/a", "n/a"
        tol = self.a.tolerance
        n = len(pairs)
        wins = sum(1 for o, t in pairs if (o > t if higher_better else
                                           o < t))
        gap = 100 * abs(ratio - 1)
        better = ratio >= 1 + tol if higher_better else ratio <= 1 - tol
        worse = ratio < 1 - tol if higher_better else ratio > 1 + tol
        if better:
            text, kind = "ringd faster by %.0f%%" % gap, "faster"
        elif not worse:
            text, kind = "on par (within %.0f%%)" % (100 * tol), "par"
        elif wins <= n // 5:
            text, kind = "RINGD SLOWER by %.0f%%" % gap, "slower"
        else:
            text, kind = ("slower by %.0f%% by medians, within noise" % gap,
                          "slower-noise")
        if not judged:
            text = "not judged (tail)"
        return "%.2f  %s, ahead in %d/%d runs" % (ratio, text, wins, n), kind

    def explain(self, kind, k, ratio, how):
        if kind == "lat":
            om, tm = self.ours_lat_meta[k], self.theirs_lat_meta[k]
            return ("latency %d B: ringd p50 %.0f%% above sockperf%s. Both "
                    "do one blocking send + recv per round trip on one "
                    "TCP_NODELAY socket, so there is no structural cost "
                    "difference; ringd times %d round trips per size in one "
                    "short burst (after a tenth as many for warm-up), "
                    "sockperf %d over %d s: a host hiccup during ringd's "
                    "fraction of a second moves its figure more." % (
                        k, 100 * (ratio - 1),
                        " (within run-to-run noise)"
                        if how == "slower-noise" else "",
                        median([x["n"] for x in om]) if om else 0,
                        median([x["n"] for x in tm]) if tm else 0,
                        self.a.sockperf_time))
        om, tm = self.ours_bw_meta[k], self.theirs_bw_meta[k]
        why = []
        if om and tm:
            ore = median([x["retrans"] for x in om])
            tre = median([x["retrans"] for x in tm])
            if ore > 1.3 * tre + 100:
                why.append(
                    "ringd's sender retransmits more (median %d vs %d per "
                    "run, measured), possibly because its fixed 4 MiB "
                    "socket buffers keep more in flight than the "
                    "veth/mirred path queues (netdev_max_backlog %s "
                    "packets) while iperf3's autotuned buffers stay "
                    "smaller, and every loss halves the window" %
                    (ore, tre, self.facts.get("net.core.netdev_max_backlog")))
            ocpu = median([x["cpu_send"] for x in om])
            tcpu = median([x["cpu_send"] for x in tm])
            oe = median(self.ours_bw[k]) / (ocpu / 100) if ocpu else 0
            te = median(self.theirs_bw[k]) / (tcpu / 100) if tcpu else 0
            if oe and te and oe < 0.9 * te:
                why.append("ringd spends more CPU per Gbit (%.1f vs %.1f "
                           "Gbps per sender core, computed)" % (oe, te))
            if k > 1 and (os.cpu_count() or 1) < k:
                why.append("one thread per stream: %s threads on %d cores "
                           "contend with the receiver's %d, while iperf3 "
                           "3.12 drives all streams from one thread" %
                           (self.threads.get(k, k), os.cpu_count(), k))
        if not why:
            why.append("no cause visible in the measured side figures "
                       "(ringd uses less CPU per Gbit)")
        o = self.ours_bw[k]
        noise = ""
        if how == "slower-noise" and o:
            noise = (" by medians, within run-to-run noise (ringd's own "
                     "runs spread %.0f%% around their median)" %
                     (100 * (max(o) - min(o)) / 2 / median(o)))
        return ("bandwidth %d stream(s): ringd %.0f%% below iperf3%s; "
                "likely: %s." % (k, 100 * (1 - ratio), noise,
                                 "; ".join(why)))


# ---------------------------------------------------------------- part 2
LADDER = (1, 4, 8)  # the coordinator's default survey_streams


def parse_dur(text):
    """Seconds of a config duration: 1s, 200ms, 1.5 (seconds)."""
    m = re.match(r"^([0-9.]+)\s*(ms|s|m|h)?$", text.strip())
    if not m:
        raise ValueError("bad duration %r" % text)
    return float(m.group(1)) * {"ms": 0.001, "s": 1, None: 1, "m": 60,
                                "h": 3600}[m.group(2)]


_LOG_RE = re.compile(r"^(\d\d):(\d\d):(\d\d\.\d+) \S+ info: (survey.*)$")


def survey_phases(log):
    """From the coordinator's log: survey start, each round's start and
    edge count, survey end (seconds of the day), and the log lines."""
    ev = {"start": None, "rounds": [], "done": None, "lines": []}
    prev = None
    try:
        with open(log, errors="replace") as f:
            for ln in f:
                m = _LOG_RE.match(ln.rstrip())
                if not m:
                    continue
                t = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + \
                    float(m.group(3))
                if prev is not None and t < prev - 43200:
                    t += 86400  # past midnight
                prev = t
                msg = m.group(4)
                if msg.startswith("survey started"):
                    ev = {"start": t, "rounds": [], "done": None,
                          "lines": []}
                r = re.match(r"survey: round (\d+) of (\d+): (\d+) edge",
                             msg)
                if r:
                    ev["rounds"].append((t, int(r.group(3))))
                if msg.startswith("survey done"):
                    ev["done"] = t
                ev["lines"].append(ln.rstrip())
    except OSError:
        pass
    return ev


def timed_ringctl(r, *args):
    """Seconds one ringctl call took; waits out a survey that refuses
    manual tests while it measures (the coordinator may re-survey after
    changes it saw mid-survey)."""
    for _ in range(5):
        t = time.monotonic()
        p = r.ringctl(*args, timeout_s=60)
        dt = time.monotonic() - t
        if p.returncode == 0:
            return dt
        if "survey is measuring" not in p.stderr + p.stdout:
            raise BenchError("ringctl %s: rc %d: %s" % (
                " ".join(args), p.returncode, (p.stderr or p.stdout)[-200:]))
        cl.wait_for(lambda: r.status()[1].get("survey") != "running", 180,
                    "the coordinator's survey to finish", interval=0.5)
    raise BenchError("ringctl %s: refused, a survey kept running" %
                     " ".join(args))


def edge_alone(r, a, b, args):
    """The survey's per-edge test sequence for one edge, run alone through
    ringctl: [(label, seconds on this bench's clock)]."""
    out = []
    for n in LADDER:
        for d in ("a-to-b", "b-to-a"):
            out.append(("bw %d %s" % (n, d), timed_ringctl(
                r, "test", "bw", a, b, "--streams", str(n), "--direction",
                d, "--duration", "%g" % parse_dur(args.survey_duration),
                "--warmup", "%g" % parse_dur(args.survey_warmup))))
    out.append(("lat 5 sizes", timed_ringctl(
        r, "test", "lat", a, b, "--iterations",
        str(args.survey_lat_iterations))))
    return out


def survey_ring(args, n, prefix, alone=False):
    order = ["n%d" % i for i in range(1, n + 1)]
    c = cl.Cluster(order, prefix)
    res = {"nodes": n, "error": None, "alone": None}
    try:
        c.up()
        for i in range(n):
            c.shape(order[i], order[(i + 1) % n], args.survey_rate)
        r = Ringd(c, args.bin, heartbeat_ms=500, coord_extra=[
            "survey_duration %s" % args.survey_duration,
            "survey_warmup %s" % args.survey_warmup,
            "latency_iterations %d" % args.survey_lat_iterations,
            "survey_settle %s" % args.survey_settle,
            "survey_interval 0"],
            agent_extra=["lldp_interval %s" % args.lldp_interval,
                         "reconnect_min 200ms", "reconnect_max 1s"])
        r.setup_pki()
        t_start = time.monotonic()
        r.start_all(timeout=30)

        def done():
            rc, doc, _ = r.status()
            top = (doc or {}).get("topology") or {}
            if top.get("survey_wall_s", 0) > 0 and top.get("rounds") and \
                    doc.get("survey") == "done":
                return doc
            return None
        doc = cl.wait_for(done, args.survey_timeout,
                          "the survey of %d nodes" % n, interval=0.5)
        t_done = time.monotonic()
        top = doc["topology"]
        ev = survey_phases(os.path.join(r.log_dir, "coordinator.log"))
        rounds = []
        for i, (t, k) in enumerate(ev["rounds"]):
            t_next = (ev["rounds"][i + 1][0] if i + 1 < len(ev["rounds"])
                      else ev["done"])
            rounds.append((k, t_next - t if t_next is not None else None))
        res.update({
            "kind": top.get("kind"),
            "edges": len(top.get("edges", [])),
            "edge_errors": [e["edge"] + ": " + e["error"]
                            for e in top.get("edges", []) if e.get("error")],
            "rounds": top.get("rounds"),
            "wall": top.get("survey_wall_s"),
            "sum": top.get("tests_sum_s_computed"),
            "picture": top.get("picture", ""),
            "start_to_done": t_done - t_start,
            "round_times": rounds,
            "pre": (ev["rounds"][0][0] - ev["start"]
                    if ev["rounds"] and ev["start"] is not None else None),
            "measure": (ev["done"] - ev["rounds"][0][0]
                        if ev["rounds"] and ev["done"] is not None
                        else None),
            "log": ev["lines"],
        })
        progress("survey %d nodes: %s, %s rounds, wall %.1f s, tests sum "
                 "%.1f s" % (n, res["kind"], res["rounds"], res["wall"],
                             res["sum"]))
        if alone:
            # The serial reference: one edge's whole test sequence, alone.
            res["alone"] = edge_alone(r, order[0], order[1], args)
            progress("one edge alone (%s-%s): %.1f s" % (
                order[0], order[1], sum(t for _, t in res["alone"])))
    except Exception as e:  # recorded; the bench goes on
        res["error"] = "%s: %s" % (type(e).__name__, e)
        progress("survey %d nodes FAILED: %s" % (n, res["error"]))
        try:
            progress(cl.tail(os.path.join(c.workdir, "logs",
                                          "coordinator.log"), 15))
        except Exception:
            pass
    finally:
        c.down()
    return res


def survey_report(args, results, out):
    w = out.append
    per_test = parse_dur(args.survey_duration) + \
        parse_dur(args.survey_warmup)
    nbw = 2 * len(LADDER)
    alone = next((x["alone"] for x in results if x.get("alone")), None)
    alone_s = sum(t for _, t in alone) if alone else None
    w("PART 2  survey wall time, rings of %s nodes, every cable shaped to "
      "%s" % (", ".join(str(x["nodes"]) for x in results), args.survey_rate))
    w("  survey_duration %s, survey_warmup %s, latency_iterations %d, "
      "survey_settle %s, lldp_interval %s; per edge, one after another: "
      "streams %s in each direction (%d bandwidth tests, nominally %.1f s "
      "each) and the latency ladder (5 sizes)" % (
          args.survey_duration, args.survey_warmup,
          args.survey_lat_iterations, args.survey_settle,
          args.lldp_interval, "/".join(str(x) for x in LADDER), nbw,
          per_test))
    w("")
    hdr = ("nodes", "class", "edges", "rounds", "survey", "checks",
           "tests", "per", "tests sum", "serial", "speed-up", "ideal")
    # tests sum: the coordinator's own figure; serial: ours
    w("  %-5s %-5s %-5s %-6s %-7s %-7s %-7s %-11s %-9s %-8s %-8s %s" % hdr)
    w("  %-5s %-5s %-5s %-6s %-7s %-7s %-7s %-11s %-9s %-8s %-8s %s" % (
        "", "", "", "", "wall", "phase", "phase", "round", "(coord.)",
        "estim.", "", ""))
    w("  %-5s %-5s %-5s %-6s %-7s %-7s %-7s %-11s %-9s %-8s %-8s %s" % (
        "", "(m)", "(m)", "(m)", "s (m)", "s (m)", "s (m)", "s (m)",
        "s (c)", "s (c)", "(c)", "(c)"))
    for x in results:
        if x["error"]:
            w("  %-5d FAILED: %s" % (x["nodes"], x["error"]))
            continue
        ok_rounds = x["rounds"] == (2 if x["nodes"] % 2 == 0 else 3)
        per_round = "/".join("%.1f" % t for _, t in x["round_times"]
                             if t is not None) or "-"
        serial = x["edges"] * alone_s if alone_s else None
        w("  %-5d %-5s %-5d %-6s %-7.1f %-7s %-7s %-11s %-9.1f %-8s %-8s %s" %
          (x["nodes"], x["kind"], x["edges"],
           "%d%s" % (x["rounds"], "" if ok_rounds else "(!)"),
           x["wall"],
           "%.1f" % x["pre"] if x["pre"] is not None else "-",
           "%.1f" % x["measure"] if x["measure"] is not None else "-",
           per_round, x["sum"],
           "%.0f" % serial if serial else "-",
           "%.1fx" % (serial / x["measure"]) if serial and x["measure"]
           else "-",
           "%.1fx" % (x["edges"] / x["rounds"]) if x["rounds"] else "-"))
    w("  (m) measured, (c) computed.")
    w("  survey wall: the coordinator's clock, survey start to topology "
      "stored (status: topology.survey_wall_s);")
    w("  checks / tests phase, per round: from the coordinator log's "
      "timestamps (beacons, probes both ways and the diagonal check, then "
      "the rounds of tests);")
    w("  tests sum (coord.): status topology.tests_sum_s_computed, the "
      "coordinator's sum of its tests' durations;")
    if alone_s:
        w("  serial estimate: edges x one edge's whole sequence run alone "
          "through ringctl (%.1f s, measured below); speed-up = serial "
          "estimate / tests phase; ideal = edges / rounds." % alone_s)
    for x in results:
        if x["error"] or not alone_s or not x["sum"]:
            continue
        serial = x["edges"] * alone_s
        nominal = x["edges"] * nbw * per_test
        if abs(x["sum"] - serial) > 0.2 * serial:
            hint = ""
            if abs(x["sum"] - (serial + nominal)) < 0.1 * serial:
                hint = (": it equals the serial estimate plus the nominal "
                        "%d x %.1f s per edge (%.1f s), as if each bandwidth "
                        "test were counted twice, once measured and once "
                        "nominal" % (nbw, per_test, serial + nominal))
            elif abs(x["sum"] - nominal) < 0.1 * nominal:
                hint = (": it equals the nominal warm-up + window of the "
                        "bandwidth tests (%d x %.1f s per edge), which "
                        "leaves out each test's set-up and drain time" %
                        (nbw, per_test))
            w("  CHECK %d nodes: the coordinator's tests sum %.1f s is %.0f%%"
              " off the serial estimate %.0f s%s." % (
                  x["nodes"], x["sum"], 100 * (x["sum"] / serial - 1),
                  serial, hint))
    w("  Round scheduling: no node is in two tests at once, so an even "
      "ring runs in 2 rounds of n/2 concurrent edges; the tests phase "
      "stays near 2 x one edge's sequence whatever the ring size.")
    if alone:
        w("")
        w("  One edge's sequence alone (%s), ringctl call time "
          "(measured) vs nominal warm-up + window %.1f s:" % (
              args.survey_rate, per_test))
        w("    " + ", ".join("%s %.2f s" % (lbl, t) for lbl, t in alone))
        over = [t - per_test for lbl, t in alone if lbl.startswith("bw 8")]
        if over and max(over) > 0.5:
            w("    -> an 8-stream test takes %.1f s longer than its window "
              "(measured - nominal). Likely cause (agent/tcptest.c): each "
              "stream asks for a 4 MiB SO_SNDBUF (the kernel doubles it) "
              "and, after the window, the sender shuts down and waits "
              "until the receiver has read everything queued: 8 streams x "
              "up to 8 MiB at %s drain for seconds. Harmless at 100+ "
              "Gbps, it doubles survey time on slow links, and a sum "
              "of nominal test durations understates the real test time. A "
              "cap on unsent data (TCP_NOTSENT_LOWAT) or an abortive close "
              "after the window would remove the tail." % (
                  max(over), args.survey_rate))
    for x in results:
        if x["error"]:
            continue
        w("")
        w("  %d nodes: %s" % (x["nodes"], x["picture"]))
        for e in x["edge_errors"]:
            w("    edge error: %s" % e)
        for ln in x["log"]:
            if "round" in ln or "done" in ln:
                w("    log: %s" % ln)


# ---------------------------------------------------------------- part 3
RDMA_TESTS = (("write_bw", "RDMA WRITE bandwidth", "ib_write_bw"),
              ("read_bw", "RDMA READ bandwidth", "ib_read_bw"),
              ("write_lat", "RDMA WRITE latency", "ib_write_lat"))
_BENCH_RE = re.compile(r"^(?:\[vm\] )?(BENCH|BENCH-DIAG|BENCH-ERROR|"
                       r"BENCH-RETRY|BENCH-TRACE) (.*)$")


def parse_kv(text):
    out = {}
    for tok in text.split():
        k, sep, v = tok.partition("=")
        if not sep:
            continue
        try:
            out[k] = (int(v) if re.match(r"^-?[0-9]+$", v) else
                      float(v) if re.match(r"^-?[0-9.]+$", v) else v)
        except ValueError:
            out[k] = v
    return out


class RdmaBench:
    """tests/rdma/vm.sh bench: ringd's verbs engine vs perftest on one
    soft-RoCE edge of the emulated ring, inside a qemu TCG VM."""

    def __init__(self, args):
        self.a = args
        self.skipped = None
        self.rc = None
        self.wall = None
        self.rows = []      # (tool, test, {key: value}) from BENCH lines
        self.diag = []      # the same from BENCH-DIAG lines
        self.errors = []    # BENCH-ERROR lines with the output after them
        self.retries = []   # BENCH-RETRY: perftest runs with no usable figure
        self.tuning = None  # the VM's backlog, queue length, clocksource
        self.failure = None
        self.load = (None, None)
        self.log = os.path.join(args.rdma_out, "bench-payload.log")

    def argv(self):
        a = self.a
        pa = ["runs=%d" % a.rdma_runs, "qps=%d" % a.rdma_qps,
              "size=%d" % a.rdma_size, "duration=%d" % a.rdma_duration,
              "warmup=%d" % a.rdma_warmup, "lat_size=%d" % a.rdma_lat_size,
              "lat_iters=%d" % a.rdma_lat_iterations]
        if a.rdma_ringd_args:
            pa.append("ringd_args=" + a.rdma_ringd_args.replace(" ", ","))
        if a.rdma_perftest_args:
            pa.append("perftest_args=" +
                      a.rdma_perftest_args.replace(" ", ","))
        return ["bash", os.path.join(REPO, "tests", "rdma", "vm.sh"),
                "--bin", a.bin, "--timeout", str(a.rdma_timeout),
                "bench"] + pa

    def run(self):
        os.makedirs(self.a.rdma_out, exist_ok=True)
        env = dict(os.environ, RINGD_VM_OUT=self.a.rdma_out)
        argv = self.argv()
        progress("part 3: %s (RINGD_VM_OUT=%s)" % (" ".join(argv),
                                                   self.a.rdma_out))
        self.load = (os.getloadavg()[0], None)
        t = time.monotonic()
        err_open = None
        with open(self.log, "w") as logf:
            p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True,
                                 errors="replace", env=env)
            try:
                for ln in p.stdout:
                    logf.write(ln)
                    ln = ln.rstrip("\n")
                    if ln.startswith("SKIP:"):
                        self.skipped = ln[5:].strip()
                    m = re.search(r"bench: tuning: (.*)$", ln)
                    if m:
                        self.tuning = m.group(1)
                    if err_open is not None:
                        body = re.sub(r"^(\[vm\] )?", "", ln)
                        if body.startswith("  | "):
                            err_open.append(body[4:])
                            continue
                        err_open = None
                    m = _BENCH_RE.match(ln)
                    if not m:
                        continue
                    kind, kv = m.group(1), parse_kv(m.group(2))
                    if kind == "BENCH":
                        self.rows.append(kv)
                        progress("rdma %s run %s: %s %s" % (
                            kv.get("test"), kv.get("run"), kv.get("tool"),
                            " ".join("%s=%s" % (k, kv[k]) for k in (
                                "gbps", "peak", "p50_us") if k in kv)))
                    elif kind == "BENCH-DIAG":
                        self.diag.append(kv)
                    elif kind == "BENCH-RETRY":
                        self.retries.append(m.group(2))
                        progress("rdma perftest run repeated: %s" %
                                 m.group(2))
                    elif kind == "BENCH-ERROR":
                        err_open = [m.group(2)]
                        self.errors.append(err_open)
                        progress("rdma FAILED: %s" % m.group(2))
                self.rc = p.wait()
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        self.wall = time.monotonic() - t
        self.load = (self.load[0], os.getloadavg()[0])
        if self.rc == 77:
            progress("part 3 skipped: %s" % (self.skipped or "vm.sh said 77"))
        elif self.rc != 0:
            self.failure = "vm.sh bench exited %d (log: %s)" % (
                self.rc, os.path.relpath(self.log, REPO))
            progress("part 3: " + self.failure)

    # -------------------------------------------------------- report
    def values(self, tool, test, key):
        return [r[key] for r in self.rows if r.get("tool") == tool and
                r.get("test") == test and isinstance(r.get(key), (int, float))]

    def pairs(self, test, key):
        """(ringd, perftest) of the same run number."""
        by = {}
        for r in self.rows:
            if r.get("test") == test and isinstance(r.get(key),
                                                    (int, float)):
                by.setdefault(r.get("run"), {})[r.get("tool")] = r[key]
        return [(v["ringd"], v["perftest"]) for _, v in sorted(by.items())
                if "ringd" in v and "perftest" in v]

    def diag_median(self, tool, test, key):
        v = [d[key] for d in self.diag if d.get("tool") == tool and
             d.get("test") == test and isinstance(d.get(key), (int, float))]
        return median(v) if v else float("nan")

    def report(self, out):
        a = self.a
        w = out.append
        w("PART 3  RDMA: ringd's verbs engine vs perftest, soft-RoCE in a "
          "qemu TCG VM, n1 rxe1b -> n2 rxe2a (one veth)")
        if self.rc == 77:
            w("  SKIPPED: %s" % (self.skipped or "vm.sh exited 77"))
            return
        w("  %d runs per tool, alternating (who goes first alternates too);"
          " tests/rdma/vm.sh bench, log %s" % (
              a.rdma_runs, os.path.relpath(self.log, REPO)))
        w("  bandwidth: ringctl test rdma-bw n1 n2 --op write|read --qps %d "
          "--size %d --warmup %d --duration %d%s  vs  ib_write_bw|ib_read_bw"
          " -q %d -s %d -D %d -f %d --report_gbits%s (perftest counts the "
          "completions between -f s and -D minus -f s: the same %d s "
          "warm-up and %d s window)" % (
              a.rdma_qps, a.rdma_size, a.rdma_warmup, a.rdma_duration,
              " " + a.rdma_ringd_args if a.rdma_ringd_args else "",
              a.rdma_qps, a.rdma_size, a.rdma_duration + 2 * a.rdma_warmup,
              a.rdma_warmup,
              " " + a.rdma_perftest_args if a.rdma_perftest_args else "",
              a.rdma_warmup, a.rdma_duration))
        w("  latency:   ringctl test rdma-lat n1 n2 --op write --sizes %d "
          "--iterations %d (p50)  vs  ib_write_lat -s %d -n %d (t_typical, "
          "its median); both half a round trip" % (
              a.rdma_lat_size, a.rdma_lat_iterations, a.rdma_lat_size,
              a.rdma_lat_iterations))
        w("")
        w("  %-22s %-24s %-24s %s" % ("test", "ringd (measured)",
                                      "perftest (measured)",
                                      "ringd/perftest (computed)"))
        w("  %-22s %-24s %-24s %s" % ("", "median [min..max]",
                                      "median [min..max]", "goal"))
        verdicts = []
        for test, label, tool in RDMA_TESTS:
            bw = test.endswith("_bw")
            key = "gbps" if bw else "p50_us"
            o = self.values("ringd", test, key)
            t = self.values("perftest", test, key)
            if not o and not t:
                continue
            fmt = "%.3f" if bw else "%.1f"
            ratio = median(o) / median(t) if o and t and median(t) else \
                float("nan")
            pairs = self.pairs(test, key)
            wins = sum(1 for x, y in pairs if (x > y if bw else x < y))
            goal = 0.98 if bw else 1.05
            met = ratio == ratio and (ratio >= goal if bw else ratio <= goal)
            verdicts.append((label, ratio, goal, met, bw))
            w("  %-22s %-24s %-24s %s" % (
                label + (" Gbps" if bw else " us p50"),
                (fmt + " %s") % (median(o), spread(o, fmt)) if o else "-",
                (fmt + " %s") % (median(t), spread(t, fmt)) if t else "-",
                "%.2f  %s %s %.2f: %s, ringd ahead in %d/%d runs" % (
                    ratio, "goal", ">=" if bw else "<=", goal,
                    "met" if met else "NOT met", wins, len(pairs))
                if ratio == ratio else "n/a"))
        w("")
        w("  Side figures, medians over the runs (measured)")
        for test, label, tool in RDMA_TESTS[:2]:
            o = [r for r in self.rows if r.get("tool") == "ringd" and
                 r.get("test") == test]
            t = [r for r in self.rows if r.get("tool") == "perftest" and
                 r.get("test") == test]
            if not o and not t:
                continue
            w("  %s: ringd peak 100 ms slice %s Gbps, messages in the window"
              " %s, requester thread cpu %s%%; perftest messages %s" % (
                  label,
                  "%.3f" % median([r["peak"] for r in o]) if o else "-",
                  "%d" % median([r["msgs"] for r in o]) if o else "-",
                  "%.0f" % median([r["cpu_pct"] for r in o]) if o else "-",
                  "%d" % median([r["msgs"] for r in t]) if t else "-"))
            for tl in ("ringd", "perftest"):
                w("    %-8s retry timeouts %s, duplicate packets at the "
                  "responder %s, out-of-sequence %s, veth/backlog drops %s "
                  "per run" % (
                      tl, "%g" % self.diag_median(tl, test,
                                                  "a_retry_timeouts"),
                      "%g" % self.diag_median(tl, test, "b_dup_requests"),
                      "%g" % self.diag_median(tl, test, "b_out_of_seq"),
                      "%g" % (self.diag_median(tl, test, "veth_drops") +
                              self.diag_median(tl, test, "softnet_drops"))))
            quant = [r for r in o if "qp_msgs" in r]
            whole = sum(1 for r in quant if all(
                int(float(x)) % 128 == 0 for x in str(r["qp_msgs"]).split(
                    "/") if x))
            if quant:
                w("    ringd per-QP message counts that are whole multiples "
                  "of the send queue depth (128): %d/%d runs (computed; "
                  "whole windows completing at once)" % (whole, len(quant)))
        lo = self.values("ringd", "write_lat", "mean_us")
        lt = self.values("perftest", "write_lat", "mean_us")
        if lo or lt:
            w("  RDMA WRITE latency mean (not judged): ringd %s us, perftest"
              " %s us; p99: ringd %s us, perftest %s us" % (
                  "%.1f" % median(lo) if lo else "-",
                  "%.1f" % median(lt) if lt else "-",
                  "%.1f" % median(self.values("ringd", "write_lat",
                                              "p99_us")) if lo else "-",
                  "%.1f" % median(self.values("perftest", "write_lat",
                                              "p99_us")) if lt else "-"))
        w("")
        w("  Goals: bandwidth ringd/perftest >= 0.98, latency p50 "
          "ringd/perftest <= 1.05 (medians).")
        w("  CAVEAT: these are TCG figures. soft-RoCE runs as kernel code on "
          "2 emulated vCPUs that share this host's %d CPUs with everything "
          "else (load average %.1f before, %.1f after, measured); guest "
          "timers run on host time, so a descheduled vCPU shows up as "
          "spurious ACK timeouts and go-back-N retransmissions (the retry "
          "counts above, with no packet dropped). Run-to-run spread is tens"
          " of percent: a ratio inside the spread says nothing about the "
          "engines, and nothing here predicts real RDMA NICs." % (
              os.cpu_count() or 0, self.load[0] or 0, self.load[1] or 0))
        if self.tuning:
            note = ""
            if "hpet" in self.tuning:
                note = (" ringd times with clock_gettime, which on the hpet "
                        "clocksource is a system call and an emulated device"
                        " read; perftest reads the TSC: under TCG that alone"
                        " can put ringd's latency a few microseconds behind.")
            w("  VM: %s.%s" % (self.tuning, note))
        if self.retries:
            w("  perftest runs repeated because its figures came out inf or "
              "0 (it failed to calibrate its TSC clock under TCG, 'r^2 < "
              "0.9'): %d (measured; the repeat is the run reported)" %
              len(self.retries))
        for label, ratio, goal, met, bw in verdicts:
            if ratio == ratio and not met:
                w("  NOT MET: %s ratio %.2f (goal %s %.2f)." % (
                    label, ratio, ">=" if bw else "<=", goal))
        if self.errors or self.failure:
            w("")
            w("  FAILED RUNS (%d)%s:" % (
                len(self.errors), "; " + self.failure if self.failure
                else ""))
            for e in self.errors:
                w("   - " + e[0])
                for ln in e[1:][-8:]:
                    w("       | " + ln)
        w("  part 3 took %.0f s (measured, VM boot included)" % self.wall)


# ---------------------------------------------------------------- main
PARTS = ("pair", "survey", "rdma", "watch", "selfbytes", "scale",
         "allreduce", "alerting", "soak", "fleet")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"),
                    help="directory with ring-agent, ring-coordinator, "
                    "ringctl (default build/bin)")
    ap.add_argument("--runs", type=int, default=5,
                    help="runs per tool and case (default 5)")
    ap.add_argument("--streams", default="1,8")
    ap.add_argument("--sizes", default="64,10240")
    ap.add_argument("--duration", type=int, default=3,
                    help="bandwidth window, whole seconds (iperf3 -t)")
    ap.add_argument("--warmup", type=int, default=1,
                    help="bandwidth warm-up, whole seconds (iperf3 -O "
                    "takes integers)")
    ap.add_argument("--iterations", type=int, default=5000)
    ap.add_argument("--sockperf-time", type=int, default=3)
    ap.add_argument("--tolerance", type=float, default=0.05,
                    help="ratio band called 'on par' (default 0.05)")
    ap.add_argument("--rings", default="4,8,16")
    ap.add_argument("--survey-rate", default="200mbit")
    ap.add_argument("--survey-duration", default="1s")
    ap.add_argument("--survey-warmup", default="200ms")
    ap.add_argument("--survey-settle", default="1s")
    ap.add_argument("--survey-lat-iterations", type=int, default=100)
    ap.add_argument("--lldp-interval", default="500ms")
    ap.add_argument("--survey-timeout", type=float, default=180)
    ap.add_argument("--skip-pair", action="store_true")
    ap.add_argument("--skip-survey", action="store_true")
    ap.add_argument("--skip-rdma", action="store_true",
                    help="skip part 3 (RDMA in the soft-RoCE VM)")
    ap.add_argument("--rdma-runs", type=int, default=5,
                    help="part 3 runs per tool and test (default 5)")
    ap.add_argument("--rdma-qps", type=int, default=2)
    ap.add_argument("--rdma-size", type=int, default=65536,
                    help="RDMA bandwidth message size, bytes")
    ap.add_argument("--rdma-duration", type=int, default=3,
                    help="RDMA bandwidth window, whole seconds")
    ap.add_argument("--rdma-warmup", type=int, default=1,
                    help="RDMA bandwidth warm-up, whole seconds (perftest "
                    "-f takes integers)")
    ap.add_argument("--rdma-lat-size", type=int, default=2)
    ap.add_argument("--rdma-lat-iterations", type=int, default=2000)
    ap.add_argument("--rdma-ringd-args", default="",
                    help="extra ringctl test rdma-bw options, e.g. "
                    "'--cq-mod 1'")
    ap.add_argument("--rdma-perftest-args", default="",
                    help="extra ib_*_bw options, e.g. '-Q 16'")
    ap.add_argument("--rdma-timeout", type=int, default=900,
                    help="vm.sh --timeout for part 3, seconds")
    ap.add_argument("--only", default="",
                    help="comma-separated parts to run: " + ",".join(PARTS) +
                    " (default: all; --skip-PART removes one)")
    for part in ("watch", "selfbytes", "scale", "allreduce", "alerting",
                 "soak", "fleet"):
        ap.add_argument("--skip-" + part, action="store_true")
    ap.add_argument("--fleet", default="a1024,a4096,g10000",
                    help="part 10: runs, aN = N real agents, gN = N load "
                    "generator sessions (default a1024,a4096,g10000)")
    ap.add_argument("--fleet-calls", type=int, default=100,
                    help="part 10: status calls per format (default 100)")
    ap.add_argument("--fleet-window", type=int, default=30,
                    help="part 10: idle CPU window, seconds (default 30)")
    ap.add_argument("--fleet-timeout", type=int, default=300,
                    help="part 10: longest wait for all to be up, seconds "
                    "(default 300)")
    ap.add_argument("--fleet-keep", action="store_true",
                    help="part 10: keep each run's configs and logs")
    ap.add_argument("--soak-s", type=int, default=600,
                    help="part 9: soak length, seconds (default 600)")
    ap.add_argument("--soak-seed", type=int, default=19,
                    help="part 9: which cables and nodes (default 19)")
    ap.add_argument("--alerting-hold", type=int, default=5,
                    help="part 8: alert_hold_down, seconds (default 5)")
    ap.add_argument("--alerting-restarts", type=int, default=6,
                    help="part 8: coordinator restarts (default 6)")
    ap.add_argument("--alerting-light", type=int, default=20,
                    help="part 8: light_check_interval, seconds "
                    "(default 20)")
    ap.add_argument("--alerting-window", type=int, default=120,
                    help="part 8: idle window for the light checks' "
                    "bytes, seconds (default 120)")
    ap.add_argument("--cuts", type=int, default=10,
                    help="part 4: cable cuts (default 10)")
    ap.add_argument("--selfbytes-window", type=int, default=120,
                    help="part 5: idle window after the survey, seconds "
                    "(default 120)")
    ap.add_argument("--selfbytes-rate", default="1gbit",
                    help="part 5: tc rate of every cable (default 1gbit)")
    ap.add_argument("--agents", type=int, default=1024,
                    help="part 6: agents (default 1024)")
    ap.add_argument("--scale-window", type=int, default=60,
                    help="part 6: CPU sampling window, seconds (default 60)")
    ap.add_argument("--plain-bin", default=None,
                    help="part 6: a non-sanitizer build's binaries (default "
                    "--bin; an ASan build would not fit 1,024 agents)")
    ap.add_argument("--ar-rate", default="1gbit",
                    help="part 7: tc rate of every cable (default 1gbit)")
    ap.add_argument("--ar-sizes", default="1M..64M",
                    help="part 7: test allreduce --sizes (default 1M..64M)")
    ap.add_argument("--ar-iterations", type=int, default=5,
                    help="part 7: test allreduce --iterations (default 5)")
    ap.add_argument("--ar-warmup", type=int, default=1,
                    help="part 7: test allreduce --warmup (default 1)")
    ap.add_argument("--ar-runs", type=int, default=3,
                    help="part 7: all-reduce runs per ring size (default 3)")
    ap.add_argument("--ar-edge-runs", type=int, default=3,
                    help="part 7: single-edge runs per tool and edge "
                    "(default 3)")
    ap.add_argument("--ar-edge-duration", type=int, default=2,
                    help="part 7: single-edge window, whole seconds "
                    "(default 2; iperf3 -t)")
    ap.add_argument("--ar-edge-warmup", type=int, default=1,
                    help="part 7: single-edge warm-up, whole seconds "
                    "(default 1; iperf3 -O)")
    ap.add_argument("--ar-timeout", type=int, default=300,
                    help="part 7: ringctl -t for one all-reduce run, "
                    "seconds (default 300)")
    ap.add_argument("--rdma-out", default=os.path.join(
        REPO, "build", "rdma-vm-bench"),
        help="RINGD_VM_OUT for part 3 (its own, so that another VM can "
        "run meanwhile)")
    a = ap.parse_args()
    a.streams = [int(x) for x in a.streams.split(",") if x]
    a.sizes = [int(x) for x in a.sizes.split(",") if x]
    a.rings = [int(x) for x in a.rings.split(",") if x]
    a.bin = os.path.abspath(a.bin)
    a.plain_bin = os.path.abspath(a.plain_bin or a.bin)
    try:
        bench_fleet.parse_runs(a.fleet)
    except ValueError as e:
        ap.error(str(e))
    if a.only:
        want = [x for x in a.only.split(",") if x]
        bad = [x for x in want if x not in PARTS]
        if bad:
            ap.error("--only: unknown part(s) %s (parts: %s)" % (
                ",".join(bad), ",".join(PARTS)))
        for part in PARTS:
            if part not in want:
                setattr(a, "skip_" + part, True)
    return a


def on_signal(signum, frame):
    # Unwind through the finally blocks, which tear the clusters down.
    raise SystemExit(128 + signum)


def main():
    args = parse_args()
    netns = not all(getattr(args, "skip_" + p) for p in PARTS
                    if p != "rdma")
    if netns and os.geteuid() != 0:
        sys.exit("bench: needs root (network namespaces): sudo make bench")
    miss = missing_binaries(args.bin)
    if miss:
        sys.exit("bench: missing in %s: %s (run make)" %
                 (args.bin, " ".join(miss)))
    miss = missing_binaries(args.plain_bin) if not (
        args.skip_scale and args.skip_fleet) else []
    if miss:
        sys.exit("bench: missing in %s: %s (run make)" %
                 (args.plain_bin, " ".join(miss)))
    need = (["iperf3", "sockperf"] if not args.skip_pair else []) + \
        (["iperf3"] if not args.skip_allreduce else []) + \
        (["ip", "tc", "ss"] if netns else [])
    for tool in need:
        if not shutil.which(tool):
            sys.exit("bench: %s not found (sudo make bench-deps)" % tool)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    # Leftovers of a bench that died without its teardown.
    if netns:
        cl.cleanup_dead_test_clusters("rgb")
    base = "rgb%d" % os.getpid()
    out = []
    pair = None
    surveys = []
    rdma = None
    ops = {}
    rc = 0
    try:
        if not args.skip_pair:
            pair = PairBench(args, base + PAIR_TAG)
            try:
                pair.run()
            except (BenchError, cl.ClusterError, TimeoutError) as e:
                pair.failures.append("setup: %s" % e)
                progress("pair bench FAILED: %s" % e)
                if pair.r:
                    progress(pair.r.log_tails(10))
            finally:
                pair.down()
        if not args.skip_survey:
            for i, n in enumerate(args.rings):
                progress("survey of a %d-node ring" % n)
                surveys.append(survey_ring(args, n, base + "r" + "abcdefgh"[
                    i % 8], alone=(i == 0)))
        if not args.skip_rdma:
            rdma = RdmaBench(args)
            rdma.run()
        for part, fn in (("watch", bench_ops.watch_bench),
                         ("selfbytes", bench_ops.selfbytes_bench),
                         ("scale", bench_ops.scale_bench),
                         ("allreduce", bench_allreduce.allreduce_bench),
                         ("alerting", bench_alerting.alerting_bench),
                         ("soak", bench_soak.soak_bench),
                         ("fleet", bench_fleet.fleet_bench)):
            if not getattr(args, "skip_" + part):
                progress("part %s" % part)
                ops[part] = fn(args, base + OPS_TAG[part])
    finally:
        # Belt and braces: each cluster's own down() already ran.
        for tag in [PAIR_TAG] + ["r" + c for c in "abcdefgh"] + \
                list(OPS_TAG.values()):
            if netns:
                cl.cleanup_stale(base + tag)
    elapsed = time.monotonic() - T0
    head = [
        "=" * 78,
        "ringd benchmark  (%s, %d CPUs, kernel %s; ringctl %s at %s; "
        "iperf3 %s, sockperf %s, perftest %s; binaries %s)" % (
            platform.node(), os.cpu_count() or 0, platform.release(),
            tool_version([os.path.join(args.bin, "ringctl"), "--version"],
                         r"ringctl (\S+)"),
            tool_version(["git", "-C", REPO, "describe", "--always",
                          "--dirty"], r"(\S+)"),
            tool_version(["iperf3", "--version"], r"iperf ([0-9.]+)"),
            tool_version(["sockperf", "--version"], r"version ([0-9.]+)"),
            tool_version(["ib_write_bw", "--version"],
                         r"Version: ([0-9.]+)"),
            args.bin),
        "measured = read from a tool's own output or this bench's clock; "
        "computed = derived here",
        "=" * 78, ""]
    out.extend(head)
    if pair:
        pair.report(out)
        if pair.failures:
            rc = 2
        out.append("")
    if surveys:
        survey_report(args, surveys, out)
        if any(x["error"] for x in surveys):
            rc = 2
        out.append("")
    if rdma:
        rdma.report(out)
        if rdma.failure or rdma.errors:
            rc = 2
        out.append("")
    for part, fn in (("watch", bench_ops.watch_report),
                     ("selfbytes", bench_ops.selfbytes_report),
                     ("scale", bench_ops.scale_report),
                     ("allreduce", bench_allreduce.allreduce_report),
                     ("alerting", bench_alerting.alerting_report),
                     ("soak", bench_soak.soak_report),
                     ("fleet", bench_fleet.fleet_report)):
        if part in ops:
            fn(args, ops[part], out)
            if ops[part]["error"] or ops[part].get("errors"):
                rc = 2
            out.append("")
    out.append("bench took %.0f s (measured)" % elapsed)
    print("\n".join(out))
    sys.stdout.flush()
    return rc


if __name__ == "__main__":
    sys.exit(main())
