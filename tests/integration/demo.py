#!/usr/bin/python3
"""ringd demo: a 4-node emulated ring in network namespaces.

  demo.py up [--bin DIR]   throwaway CA, ring n1-n2-n4-n3-n1 (one extra
                           unaddressed port per node), coordinator + agents,
                           metrics page, an operator user; leaves it running.
                           Refuses while a demo runs (see `running`)
  demo.py down             stop everything, remove namespaces, files, the
                           operator user (and the group if up made it);
                           idempotent
  demo.py status           ringctl status of a running demo
  demo.py cut EDGE         pull the cable EDGE (n1-n2): its two wire ends go
                           down, both nodes' ports lose carrier
  demo.py mend [EDGE]      plug it back (no EDGE: every cable)
  demo.py running          exit 1 and say what to do if a demo runs, else 0

Needs root. The daemons are ordinary processes (own sessions), their pids
are kept in WORKDIR/demo.json so `down` finds them, with what `cut` needs:
each cable's wire-side veths (cN a/b in PREFIX-wire), named by edge."""

import argparse
import fcntl
import grp
import json
import os
import pwd
import re
import shlex
import shutil
import signal
import subprocess
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
METRICS_PORT = 9464
# The coordinator's default control_group (ringd.conf(5)), as packaged.
GROUP = "ringctl"
# The host's end of its link to the coordinator's namespace (see host_link).
HOST_ADDR = "10.88.255.254"
WIDTH = 100  # every banner line fits a 100-column terminal


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


def _live_recorded(state):
    """Recorded daemons whose pid still runs the binary we started (pids
    get reused)."""
    return [p["pid"] for p in (state or {}).get("procs", [])
            if _cmdline(p["pid"]) == p["exe"]]


def _stop_recorded(state):
    pids = _live_recorded(state)
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


def _quiet(argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30)


def _remove_accounts(state):
    """The operator user, and the group if up created it (a group that was
    there before, the packaged `ringctl`, stays)."""
    user = state.get("user")
    if user and state.get("made_user"):
        _quiet(["userdel", user])
    group = state.get("group")
    if group and state.get("made_group"):
        _quiet(["groupdel", group])


def down(workdir, prefix=PREFIX, quiet=False):
    state = load_state(workdir)
    ctl_dir = workdir + "-ctl"
    if state:
        _stop_recorded(state)
        workdir = state.get("workdir", workdir)
        prefix = state.get("prefix", prefix)
        ctl_dir = state.get("ctl_dir", ctl_dir)
        logs = os.path.join(workdir, "logs")
        if os.path.isdir(logs):
            for path, _ in cl.sanitizer_reports(
                    os.path.join(logs, f) for f in sorted(os.listdir(logs))):
                say("note: sanitizer report in %s" % path)
    # The host's veth to the coordinator would go with the coordinator's
    # namespace, but only once the kernel gets round to it: now, so that a
    # new demo can make it again at once.
    if state and state.get("hostif"):
        _quiet(["ip", "link", "del", state["hostif"]])
    removed = cl.cleanup_stale(prefix)
    if state:
        _remove_accounts(state)
    existed = os.path.exists(workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    shutil.rmtree(ctl_dir, ignore_errors=True)
    if not quiet:
        if state or removed or existed:
            say("ringd demo: stopped, %d namespaces and %s removed" %
                (len(removed), workdir))
        else:
            say("ringd demo: nothing to tear down")


def _leftovers(prefix=PREFIX):
    return [n for n in cl.list_netns() if n.startswith(prefix + "-")]


def running_pids(workdir, prefix=PREFIX):
    """Pids of a running demo: its recorded daemons, else any process in
    its namespaces (a demo whose demo.json is gone is still running)."""
    pids = _live_recorded(load_state(workdir))
    if not pids:
        pids = sorted(cl.pids_in_netns(_leftovers(prefix)))
    return pids


def refuse_if_running(workdir, prefix=PREFIX):
    """A second `make demo` must not replace the first: say so and what to
    do. 1 if one runs, else 0."""
    pids = running_pids(workdir, prefix)
    if not pids:
        return 0
    shown = " ".join(str(p) for p in pids[:8]) + (" ..." if len(pids) > 8
                                                  else "")
    say("ringd demo: one is already running (namespaces %s-*);" % prefix)
    say("  not starting another. Its daemons' pids: %s" % shown)
    say("  Keep using it: sudo make demo-status, and the commands its banner")
    say("  printed; or stop it first: sudo make demo-down && sudo make demo")
    return 1


class DemoRingd(Ringd):
    """Nominal 2G instead of the tests' 200G, so '% of nominal' reads like
    docs/REFERENCE.md."""

    def agent_conf_text(self, node, **kw):
        return Ringd.agent_conf_text(self, node, **kw).replace(
            "nominal_speed eth* 200G", "nominal_speed eth* 2G")


def _run(argv):
    p = _quiet(argv)
    if p.returncode != 0:
        raise cl.ClusterError("%s: rc %d: %s" % (" ".join(argv), p.returncode,
                                                 p.stderr.strip()))
    return p


def make_accounts(state, group, user, save):
    """The control socket's group (made if missing: a machine without the
    package has no `ringctl` group) and an operator in it, with no home and
    no login shell. Recorded before each is made, so `down` removes what
    up made even if up fails half-way."""
    try:
        grp.getgrnam(group)
    except KeyError:
        state["made_group"] = True
        save()
        _run(["groupadd", "--system", group])
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        pw = None
    state["made_user"] = True  # ours by name: a leftover of a crashed demo
    save()
    if pw is None:
        _run(["useradd", "--system", "--no-create-home", "--gid", group,
              "--shell", "/usr/sbin/nologin", user])
    else:
        _run(["usermod", "--gid", group, user])


def host_link(c, ifname, host_addr):
    """Let the host reach the coordinator (its metrics page) at its
    management address. The management network is a bridge inside
    PREFIX-br, with no leg in the host's namespace, so nothing on the host
    routes to 10.88.0.0/16. A veth from the host into the coordinator's
    namespace, with one /32 route each way, reaches the coordinator and
    nothing else: no forwarding is turned on anywhere, so the nodes stay
    out of the host's reach and the host out of theirs; no forwarder
    process to keep alive; and it disappears with the coordinator's
    namespace. (Bridging the host into br0 would put it on every node's
    network; a user-space forward would hide clients' addresses from the
    page's per-client limits.)"""
    coord = c.COORD_ADDR
    _run(["ip", "link", "add", ifname, "type", "veth", "peer", "name",
          "host0", "netns", c.ns("coord")])
    try:
        _run(["ip", "addr", "add", host_addr + "/32", "dev", ifname])
        _run(["ip", "link", "set", ifname, "up"])
        _run(["ip", "route", "add", coord + "/32", "dev", ifname, "src",
              host_addr])
        _run(["ip", "-n", c.ns("coord"), "link", "set", "host0", "up"])
        _run(["ip", "-n", c.ns("coord"), "route", "add", host_addr + "/32",
              "dev", "host0"])
    except cl.ClusterError:
        _quiet(["ip", "link", "del", ifname])  # ours: `link add` worked
        raise


def edge_name(a, b):
    return "-".join(sorted((a, b), key=cl._natural_key))


def cable_map(c):
    """edge -> where to pull it: the wire namespace and the cable's two
    wire-side veth ends (cNa, cNb), and the node ports that lose carrier."""
    return {edge_name(k.a, k.b): {"ns": c.ns("wire"),
                                  "ifaces": [k.wire_a, k.wire_b],
                                  "ports": {k.a: k.a_port, k.b: k.b_port}}
            for k in c.cables}


def _lock(workdir):
    """Held while a demo starts, so that two `make demo` at once cannot
    both find none running. None if another holds it."""
    fd = os.open(workdir + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


def up(bindir, workdir, o):
    fd = _lock(workdir)
    if fd is None:
        say("ringd demo: another one is starting right now; wait for its "
            "banner (sudo make demo-status)")
        return 1
    try:
        return _up(bindir, workdir, o)
    finally:
        os.unlink(workdir + ".lock")
        os.close(fd)


def _up(bindir, workdir, o):
    bindir = os.path.abspath(bindir)
    missing = missing_binaries(bindir)
    if missing:
        say("ringd demo: missing binaries in %s: %s (run make first)" %
            (bindir, " ".join(missing)))
        return 1
    if refuse_if_running(workdir, o.prefix):
        return 1
    if load_state(workdir) or _leftovers(o.prefix):
        say("ringd demo: removing the leftovers of one that is not running")
        down(workdir, o.prefix, quiet=True)
    os.makedirs(workdir, mode=0o700, exist_ok=True)
    # The control socket's directory: not the workdir (0700, it holds the
    # CA's key), so that the socket's group can reach the socket; the
    # socket's own mode (0660, group control_group) is the access rule.
    ctl_dir = workdir + "-ctl"
    os.makedirs(ctl_dir, mode=0o755, exist_ok=True)
    os.chmod(ctl_dir, 0o755)
    # The operator's ringctl beside the socket: the build may sit where
    # others cannot reach it (a checkout under /root, mode 0700).
    shutil.copy(os.path.join(bindir, "ringctl"), os.path.join(ctl_dir,
                                                              "ringctl"))
    os.chmod(os.path.join(ctl_dir, "ringctl"), 0o755)
    c = cl.Cluster(ORDER, o.prefix, extra_unaddressed_ports=1,
                   workdir=workdir)
    c.COORD_ADDR = o.coord_addr
    r = None
    state = {"prefix": o.prefix, "workdir": workdir, "ctl_dir": ctl_dir,
             "bin": bindir, "procs": [], "group": o.group, "user": o.user,
             "coord_addr": o.coord_addr, "metrics_port": METRICS_PORT,
             "hostif": o.hostif}
    try:
        save_state(workdir, state)  # `down` works from here on
        t0 = time.monotonic()
        make_accounts(state, o.group, o.user,
                      lambda: save_state(workdir, state))
        c.up()
        state["cables"] = cable_map(c)
        save_state(workdir, state)
        try:
            host_link(c, o.hostif, o.host_addr)
        except cl.ClusterError as e:
            # Another demo (in another mount namespace: a container, a
            # fresh-machine run) holds the name or the route: this one runs
            # all the same, its page reachable from its own namespaces.
            state["hostif"] = None
            o.host_link_error = re.sub(r": rc \d+: ", ": ", str(e))
            say("ringd demo: note: no link from this host to the "
                "coordinator:")
            say("  " + o.host_link_error)
        # Every cable capped at 1 Gbit/s against a 2 Gbit/s nominal: the
        # reference cluster's uniform ceiling (~51% of nominal) in miniature.
        for i, a in enumerate(ORDER):
            c.shape(a, ORDER[(i + 1) % len(ORDER)], "1gbit")
        r = DemoRingd(c, bindir, heartbeat_ms=HEARTBEAT_MS, misses=3,
                      coord_extra=["survey_duration 1s",
                                   "survey_warmup 200ms",
                                   "survey_settle 1s",
                                   "latency_iterations 200",
                                   "control_group %s" % o.group,
                                   "metrics_listen %s:%d" %
                                   (o.coord_addr, METRICS_PORT)],
                      agent_extra=["lldp_interval 1s"])
        r.sock = os.path.join(ctl_dir, "coord.sock")
        state["sock"] = r.sock
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
        say("ringd demo: %d agents up in %.1fs; surveying the data plane" %
            (len(ORDER), took))
        say("  (beacons, probes, 7 tests per edge in 2 rounds)...")
        cl.wait_for(lambda: r.ringctl("ranks").returncode == 0, 180,
                    "the first survey")
        took = time.monotonic() - t0
    except BaseException as e:
        say("ringd demo: FAILED: %s" % (str(e).splitlines()[0] if str(e)
                                         else type(e).__name__))
        if r is not None:
            say(r.log_tails(20))
        c.down(keep_workdir=True)
        down(workdir, o.prefix, quiet=True)
        say("ringd demo: cleaned up")
        return 1

    p = r.ringctl("status", fmt="plain")
    say(p.stdout.rstrip())
    say()
    say("Rank order (ringctl ranks):")
    say(r.ringctl("ranks", fmt="plain").stdout.rstrip())
    say()
    for line in banner(bindir, workdir, r, c, o, took):
        say(line)
    return 0


def banner(bindir, workdir, r, c, o, took, victim="n4"):
    """The lines that tell a new user what there is and what to try next:
    shell commands that work as printed, pasted into a root shell (the
    namespaces are root's; sudo would drop PATH and RINGCTL_SOCKET).
    Every line fits WIDTH columns with the default paths."""
    q = shlex.quote
    a = r.agents[victim]
    url = "http://%s:%d" % (o.coord_addr, METRICS_PORT)
    pids = ", ".join("%s=%d" % (n, r.agents[n].pid) for n in ORDER)
    make = "make" if os.path.abspath(os.getcwd()) == REPO else \
        "make -C %s" % q(REPO)
    if getattr(o, "host_link_error", None):
        page = [
            "The ring's page: %s/ from the demo's namespaces (not this host:" %
            url,
            "  another demo holds the link to %s), for example:" %
            o.coord_addr,
            "  ip netns exec %s curl -s %s/metrics | grep ^ringd_" %
            (q(c.ns("n1")), url)]
    else:
        page = [
            "The ring's page, live: %s/   (open it in a browser on this host)"
            % url,
            "  curl -s %s/metrics | grep ^ringd_     # Prometheus metrics" %
            url,
            "  curl -s %s/ring.svg -o /tmp/ring.svg   # the picture alone" %
            url,
            "  from another machine: ssh -L %d:%s:%d THIS-HOST, then "
            "http://localhost:%d/" % (METRICS_PORT, o.coord_addr,
                                      METRICS_PORT, METRICS_PORT),
            "  (this host reaches the coordinator through veth %s)" %
            o.hostif]
    return [
        "ringd demo is up (%.1fs): ring n1-n2-n4-n3-n1 in network namespaces "
        "%s-*," % (took, o.prefix),
        "management 10.88.0.0/16 (coordinator %s, node nK at 10.88.0.1K), "
        "one /30 per cable," % o.coord_addr,
        "eth3 on every node has link but no address.",
        "",
    ] + page + [
        "",
        "Look around, as root (run `sudo -s` first if you are not):",
        "  export PATH=%s:$PATH" % q(bindir),
        "  export RINGCTL_SOCKET=%s" % q(r.sock),
        "  ringctl status",
        "  ringctl watch                      # changes and alerts, live",
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
        "Files in %s/: logs/, conf/ (configs), pki/ (the CA)" % workdir,
        "",
        "Who may ask: root anything; group %s may read (status, ranks, ...)."
        % o.group,
        "%s works, nobody is refused (a ringctl copy beside the socket:" % o.user,
        "the build may be closed to others):",
        "  runuser -u %s -- %s status"
        % (o.user, q(os.path.join(os.path.dirname(r.sock), "ringctl"))),
        "  runuser -u nobody -- %s status"
        % q(os.path.join(os.path.dirname(r.sock), "ringctl")),
        "",
        "Cut a cable: `ringctl status` turns critical, n1-n2 down; then mend:",
        "  %s demo-cut EDGE=n1-n2" % make,
        "  %s demo-mend               # every cut cable (EDGE=n1-n2: one)" % make,
        "",
        "Kill %s's agent: `ringctl status` turns critical, %s down with its "
        "reason" % (victim, victim),
        "(agent pids: %s):" % pids,
        "  kill %d" % a.pid,
        "Start it again (it rejoins within seconds):",
        "  ip netns exec %s setsid -f \\" % q(a.ns),
    ] + _fold_words([q(x) for x in a.argv], "    ") + [
        "    >>%s 2>&1 </dev/null" % q(a.log),
        "",
        "Tear it down: sudo %s demo-down" % make,
        "  (or: sudo %s %s down)" % (sys.executable,
                                     os.path.abspath(__file__)),
    ]


def _fold_words(words, indent):
    """Shell words as continuation lines that fit WIDTH wherever the
    checkout lives (a long path gets a line of its own)."""
    lines, cur = [], indent
    for w in words:
        if cur.strip() and len(cur) + 1 + len(w) + 2 > WIDTH:
            lines.append(cur + " \\")
            cur = indent
        cur = cur + (" " if cur.strip() else "") + w
    return lines + [cur + " \\"]


def _pick_cable(state, edge):
    cables = state.get("cables", {})
    names = " ".join(sorted(cables, key=cl._natural_key))
    if not edge:
        say("ringd demo: which cable? EDGE=n1-n2, one of: %s" % names)
        return None
    parts = edge.split("-")
    key = edge_name(*parts) if len(parts) == 2 else edge
    if key not in cables:
        say("ringd demo: no cable %s; the cables: %s (n1-n4 and n2-n3 are "
            "diagonals, not cabled)" % (edge, names))
        return None
    return key


def _watch_lines(state):
    q = shlex.quote
    ringctl = [q(os.path.join(state["bin"], "ringctl")), "-s",
               q(state["sock"])]
    lines = ["Watch it, as root (`ringctl status` with the banner's exports):"]
    for verb in ("status", "watch"):
        folded = _fold_words(ringctl + [verb], "  ")
        folded[-1] = folded[-1][:-2]  # no continuation after the verb
        lines += folded
    return lines


def _set_cables(state, keys, how):
    for k in keys:
        w = state["cables"][k]
        for ifname in w["ifaces"]:
            _run(["ip", "-n", w["ns"], "link", "set", ifname, how])
        ports = " and ".join("%s %s" % kv
                             for kv in sorted(w["ports"].items()))
        say("ringd demo: %s %s: %s %s" %
            ("cut" if how == "down" else "mended", k, ports,
             "lose carrier" if how == "down" else "have carrier again"))
        say("  (ip -n %s link set %s %s; the same for %s)" %
            (w["ns"], w["ifaces"][0], how, w["ifaces"][1]))


def _is_cut(w):
    return any("UP" not in _admin_flags(w["ns"], i) for i in w["ifaces"])


def _admin_flags(ns, ifname):
    out = _quiet(["ip", "-n", ns, "-o", "link", "show", "dev", ifname]).stdout
    return set(out.split("<", 1)[-1].split(">", 1)[0].split(",")) \
        if "<" in out else set()


def cut(workdir, edge):
    state = load_state(workdir)
    if not state or not running_pids(workdir, state.get("prefix", PREFIX)):
        say("ringd demo: not running (sudo make demo)")
        return 1
    key = _pick_cable(state, edge)
    if key is None:
        return 2
    _set_cables(state, [key], "down")
    for line in _watch_lines(state):
        say(line)
    say("Mend it: make demo-mend EDGE=%s   (as root)" % key)
    return 0


def mend(workdir, edge=None):
    state = load_state(workdir)
    if not state or not running_pids(workdir, state.get("prefix", PREFIX)):
        say("ringd demo: not running (sudo make demo)")
        return 1
    if edge:
        key = _pick_cable(state, edge)
        if key is None:
            return 2
        keys = [key]
    else:
        keys = [k for k in sorted(state.get("cables", {}),
                                  key=cl._natural_key)
                if _is_cut(state["cables"][k])]
        if not keys:
            say("ringd demo: no cable is cut (make demo-cut EDGE=n1-n2)")
            return 0
    _set_cables(state, keys, "up")
    for line in _watch_lines(state):
        say(line)
    return 0


def status(workdir):
    state = load_state(workdir)
    if not state:
        say("ringd demo: not running")
        return 2
    ringctl = os.path.join(state["bin"], "ringctl")
    sock = state.get("sock") or os.path.join(state["workdir"], "coord.sock")
    os.execv(ringctl, [ringctl, "-s", sock, "status"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("command", choices=["up", "down", "status", "cut", "mend",
                                        "running"])
    ap.add_argument("edge", nargs="?", help="cut, mend: a cable, e.g. n1-n2")
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "bin"),
                    help="directory with ring-agent, ring-coordinator, "
                    "ringctl (default: build/bin)")
    ap.add_argument("--workdir", default=WORKDIR)
    # A second demo beside the real one (the tests): its own namespaces,
    # coordinator address, host veth and accounts.
    ap.add_argument("--prefix", default=PREFIX)
    ap.add_argument("--coord-addr", default=cl.Cluster.COORD_ADDR)
    ap.add_argument("--host-addr", default=HOST_ADDR)
    ap.add_argument("--group", default=GROUP)
    ap.add_argument("--user", help="default: PREFIX-op")
    a = ap.parse_intermixed_args(argv)
    a.user = a.user or a.prefix + "-op"
    a.hostif = a.prefix[:13] + "-h"  # IFNAMSIZ: 15 characters
    if os.geteuid() != 0:
        say("ringd demo: needs root for network namespaces "
            "(sudo make demo / sudo make demo-down)")
        return 1
    workdir = os.path.abspath(a.workdir)
    try:
        if a.command == "up":
            return up(a.bin, workdir, a)
        if a.command == "down":
            down(workdir, a.prefix)
            return 0
        if a.command == "running":
            return refuse_if_running(workdir, a.prefix)
        if a.command == "cut":
            return cut(workdir, a.edge)
        if a.command == "mend":
            return mend(workdir, a.edge)
        return status(workdir)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
