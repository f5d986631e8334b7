#!/usr/bin/python3
"""ringd demo: a 4-node emulated ring in network namespaces.

  demo.py up [--bin DIR]   throwaway CA, ring n1-n2-n4-n3-n1 (one extra
                           unaddressed port per node), coordinator + agents;
                           leaves it running
  demo.py down             stop everything, remove namespaces and files
                           (idempotent)
  demo.py status           ringctl status of a running demo

Needs root. The daemons are ordinary processes (own sessions), their pids
are kept in WORKDIR/demo.json so `down` finds them."""

import argparse
import json
import os
import shlex
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cluster as cl  # noqa: E402
from daemons import REPO, Ringd, missing_binaries  # noqa: E402

PREFIX = "ringd-demo"
ORDER = ["n1", "n2", "n4", "n3"]  # the reference cluster's physical ring
# Absolute: the daemons refuse relative paths in their configs.
WORKDIR = os.path.abspath(os.environ.get("RINGD_DEMO_DIR", "/run/ringd-demo"))
STATE = "demo.json"
HEARTBEAT_MS = 1000


def say(msg=""):
    print(msg, flush=True)


def load_state(workdir):
    try:
        with open(os.path.join(workdir, STATE)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def save_state(workdir, state):
    tmp = os.path.join(workdir, STATE + ".tmp")
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1)
    os.replace(tmp, os.path.join(workdir, STATE))


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return None


def _stop_recorded(state):
    """Stop the recorded daemons, only if a pid still runs the binary we
    started (pids get reused)."""
    pids = []
    for p in state.get("procs", []):
        cmd = _cmdline(p["pid"])
        if cmd is not None and cmd == p["exe"]:
            pids.append(p["pid"])
    for sig in (signal.SIGTERM, signal.SIGCONT):
        for pid in pids:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
    deadline = time.monotonic() + 5
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if cl._pid_alive(p)]
        time.sleep(0.05)
    for pid in pids:
        say("%d ignored SIGTERM; killing it" % pid)
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def down(workdir, quiet=False):
    state = load_state(workdir)
    if state:
        _stop_recorded(state)
        workdir = state.get("workdir", workdir)
        logs = os.path.join(workdir, "logs")
        if os.path.isdir(logs):
            for path, _ in cl.sanitizer_reports(
                    os.path.join(logs, f) for f in sorted(os.listdir(logs))):
                say("note: sanitizer report in %s" % path)
    removed = cl.cleanup_stale(PREFIX)
    existed = os.path.exists(workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    if not quiet:
        if state or removed or existed:
            say("ringd demo: stopped, %d namespaces and %s removed" %
                (len(removed), workdir))
        else:
            say("ringd demo: nothing to tear down")


def _leftovers():
    return [n for n in cl.list_netns() if n.startswith(PREFIX + "-")]


class DemoRingd(Ringd):
    """Nominal 2G instead of the tests' 200G, so '% of nominal' reads like
    docs/REFERENCE.md."""

    def agent_conf_text(self, node, **kw):
        return Ringd.agent_conf_text(self, node, **kw).replace(
            "nominal_speed eth* 200G", "nominal_speed eth* 2G")


def up(bindir, workdir):
    bindir = os.path.abspath(bindir)
    missing = missing_binaries(bindir)
    if missing:
        say("ringd demo: missing binaries in %s: %s (run make first)" %
            (bindir, " ".join(missing)))
        return 1
    if load_state(workdir) or _leftovers():
        say("ringd demo: a previous demo is still around; tearing it down")
        down(workdir, quiet=True)
    os.makedirs(workdir, mode=0o700, exist_ok=True)
    c = cl.Cluster(ORDER, PREFIX, extra_unaddressed_ports=1, workdir=workdir)
    r = None
    state = {"prefix": PREFIX, "workdir": workdir, "bin": bindir,
             "procs": []}
    try:
        save_state(workdir, state)  # `down` works from here on
        t0 = time.monotonic()
        c.up()
        # Every cable capped at 1 Gbit/s against a 2 Gbit/s nominal: the
        # the reference cluster's uniform ceiling (~51% of nominal) in miniature.
        for i, a in enumerate(ORDER):
            c.shape(a, ORDER[(i + 1) % len(ORDER)], "1gbit")
        r = DemoRingd(c, bindir, heartbeat_ms=HEARTBEAT_MS, misses=3,
                      coord_extra=["survey_duration 1s",
                                   "survey_warmup 200ms",
                                   "survey_settle 1s",
                                   "latency_iterations 200"],
                      agent_extra=["lldp_interval 1s"])
        r.setup_pki()
        coord = r.start_coordinator()
        state["procs"].append({"name": coord.name, "pid": coord.pid,
                               "exe": coord.argv[0]})
        save_state(workdir, state)
        for n in ORDER:
            p = r.start_agent(n)
            state["procs"].append({"name": p.name, "pid": p.pid,
                                   "exe": p.argv[0]})
        save_state(workdir, state)
        r.wait_all_up(30)
        took = time.monotonic() - t0
        say("ringd demo: %d agents up in %.1fs; surveying the data plane "
            "(beacons, probes, 7 tests per edge in 2 rounds)..." %
            (len(ORDER), took))
        cl.wait_for(lambda: r.ringctl("ranks").returncode == 0, 180,
                    "the first survey")
        took = time.monotonic() - t0
    except BaseException as e:
        say("ringd demo: FAILED: %s" % (str(e).splitlines()[0] if str(e)
                                         else type(e).__name__))
        if r is not None:
            say(r.log_tails(20))
        c.down(keep_workdir=True)
        down(workdir, quiet=True)
        say("ringd demo: cleaned up")
        return 1

    p = r.ringctl("status", fmt="plain")
    say(p.stdout.rstrip())
    say()
    say("Rank order (ringctl ranks):")
    say(r.ringctl("ranks", fmt="plain").stdout.rstrip())
    say()
    say("ringd demo is up (%.1fs): ring n1-n2-n4-n3-n1 in network namespaces "
        "%s-*," % (took, PREFIX))
    say("management 10.88.0.0/16 (coordinator 10.88.0.2, node nK at "
        "10.88.0.1K), one /30 per cable, eth3 on every node has link but no "
        "address.")
    say()
    for line in look_around(bindir, workdir, r, c):
        say(line)
    return 0


def look_around(bindir, workdir, r, c, victim="n4"):
    """The lines that tell a new user what to try next: shell commands that
    work as printed, pasted into a root shell (the control socket and the
    namespaces are root's; sudo would drop PATH and RINGCTL_SOCKET)."""
    q = shlex.quote
    a = r.agents[victim]
    # The agent as spawn_agent started it: the same argv in its namespace,
    # appending to its log, in a session of its own (setsid -f) so that
    # closing the shell does not take it down.
    restart = "ip netns exec %s setsid -f %s >>%s 2>&1 </dev/null" % (
        q(a.ns), " ".join(q(x) for x in a.argv), q(a.log))
    pids = ", ".join("%s=%d" % (n, r.agents[n].pid) for n in ORDER)
    return [
        "Look around, as root (run `sudo -s` first if you are not):",
        "  export PATH=%s:$PATH RINGCTL_SOCKET=%s" % (q(bindir), q(r.sock)),
        "  ringctl status",
        "  ringctl inventory n1",
        "  ringctl ranks -f torchrun          # or hostfile, rankfile, env",
        "  ringctl test bw n1 n2 --streams 4 --duration 3",
        "  ringctl test lat n1 n4             # a diagonal: fails, says why",
        "  ringctl survey --wait",
        "  ringctl explain n1-n2              # one cable, its limits",
        "  ringctl test allreduce --sizes 1M,16M   # a real ring all-reduce",
        "  ringctl ranks -f hostfile > /tmp/hosts; "
        "ringctl ranks -f env > /tmp/job.env",
        "  ringctl check all --hostfile /tmp/hosts --env /tmp/job.env"
        "   # the pre-flight",
        "  ringctl plan --model-bytes 800GB   # does it fit",
        "  ip netns exec %s ip -br addr   # n1's interfaces" % q(c.ns("n1")),
        "  ip netns exec %s bash          # a shell on n1" % q(c.ns("n1")),
        "Logs: %s/logs/  configs: %s/conf/  CA: %s/pki/" %
        (workdir, workdir, workdir),
        "",
        "Kill %s's agent and `ringctl status` turns critical, %s down with "
        "its reason (agent pids: %s):" % (victim, victim, pids),
        "  kill %d" % a.pid,
        "Start it again (it rejoins within seconds):",
        "  " + restart,
        "",
        "Tear it down: sudo make demo-down   (or: sudo %s %s down)" %
        (sys.executable, os.path.abspath(__file__)),
    ]


def status(workdir):
    state = load_state(workdir)
    if not state:
        say("ringd demo: not running")
        return 2
    ringctl = os.path.join(state["bin"], "ringctl")
    os.execv(ringctl, [ringctl, "-s", os.path.join(state["workdir"],
                                                   "coord.sock"), "status"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["up", "down", "status"])
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"),
                    help="directory with ring-agent, ring-coordinator, "
                    "ringctl (default: build/bin)")
    ap.add_argument("--workdir", default=WORKDIR)
    a = ap.parse_args(argv)
    if os.geteuid() != 0:
        say("ringd demo: needs root for network namespaces "
            "(sudo make demo / sudo make demo-down)")
        return 1
    try:
        if a.command == "up":
            return up(a.bin, os.path.abspath(a.workdir))
        if a.command == "down":
            down(os.path.abspath(a.workdir))
            return 0
        return status(os.path.abspath(a.workdir))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
