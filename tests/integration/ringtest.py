"""Helpers for the survey tests (test_ring.py): fast survey settings, shaped
clusters, waiting for surveys, the expected canonical order and ports; and
for every daemon test: the checked teardown (down_and_check) and LogMark.

Bandwidth figures are only ever compared with a tc tbf rate set on the
wire (goodput lands near 95% of it); unshaped veth throughput depends on
the box and is never asserted."""

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

from cluster import _natural_key, _run, tail, terminate, wait_for
from daemons import Ringd

# Short tests, fast beacons, no periodic re-survey: a 4-node ring surveys
# in ~20 s under ASan on 2 cores.
COORD_FAST = [
    "survey_duration 1s",
    "survey_warmup 200ms",
    "survey_settle 1s",
    "latency_iterations 100",
    "survey_interval 0",
]
AGENT_FAST = ["lldp_interval 500ms", "reconnect_min 200ms",
              "reconnect_max 1s"]
LADDER = [1, 4, 8]
LAT_SIZES = [64, 4096, 10240, 20480, 40960]
# Goodput through tbf is ~95.5% of the rate; 4 and 8 streams must land in
# this band (the upper bound allows for the token bucket's burst).
RATE_LO, RATE_HI = 0.80, 1.02
SURVEY_TIMEOUT_S = 120  # only reached when something is wrong


def rate_gbps(rate):
    """tc rate ("500mbit", "1gbit") in Gbps (tc units are powers of 10)."""
    m = re.match(r"^(\d+(?:\.\d+)?)(k|m|g)bit$", rate)
    assert m, rate
    return float(m.group(1)) * {"k": 1e-6, "m": 1e-3, "g": 1.0}[m.group(2)]


def ring_pairs(order):
    """Consecutive pairs of a cyclic physical order."""
    return [(order[i], order[(i + 1) % len(order)])
            for i in range(len(order))]


def canonical_ring(order):
    """The rank order the coordinator must give a ring cabled in `order`:
    the lowest name first, then towards its lower-named neighbour."""
    n = len(order)
    start = min(range(n), key=lambda i: _natural_key(order[i]))
    fwd, back = order[(start + 1) % n], order[(start - 1) % n]
    step = 1 if _natural_key(fwd) < _natural_key(back) else -1
    return [order[(start + step * k) % n] for k in range(n)]


def edge_name(a, b):
    """Edges are named lower node first (natural order of names)."""
    a, b = sorted((a, b), key=_natural_key)
    return "%s-%s" % (a, b)


def facing_port(cl, node, peer):
    """node's interface on its (single) cable to peer."""
    cs = cl.cables_between(node, peer)
    assert len(cs) == 1, (node, peer, cs)
    return cs[0].port_of(node)


def shape_ring(cl, rate, except_=None):
    """tbf `rate` on every cable; except_: {(a, b): other rate}."""
    special = {frozenset(k): v for k, v in (except_ or {}).items()}
    for c in cl.cables:
        r = special.get(frozenset((c.a, c.b)), rate)
        cl.shape(c.a, c.b, r, which=cl.cables_between(c.a, c.b).index(c))


def shape_switch_ports(cl, rate, burst="128kb", latency="50ms"):
    """tbf on the switch's egress toward every node: each node receives at
    most `rate` through the emulated switch."""
    cmds = ["qdisc replace dev %s root tbf rate %s burst %s latency %s" %
            (p.wire_end, rate, burst, latency)
            for p in cl.switch_ports.values()]
    _run(["tc", "-n", cl.ns_wire, "-batch", "-"],
         input="\n".join(cmds) + "\n")


class SurveyRingd(Ringd):
    """Ringd with fast survey settings and a chosen nominal port speed."""

    def __init__(self, cluster, bindir, nominal="200G", coord_extra=(),
                 agent_extra=(), grace="5s", coord_debug=None):
        super().__init__(cluster, bindir, heartbeat_ms=500, misses=3,
                         coord_extra=COORD_FAST + ["survey_grace %s" % grace] +
                         list(coord_extra),
                         agent_extra=AGENT_FAST + list(agent_extra),
                         coord_debug=coord_debug)
        self.nominal = nominal

    def agent_conf_text(self, node, cert_name=None, pki=None, ca=None,
                        extra=()):
        text = super().agent_conf_text(node, cert_name, pki, ca, extra)
        # The first matching nominal_speed wins: replace the default ones
        # (eth*, and enp*/enP* in twin mode).
        return re.sub(r"^nominal_speed (\S+) 200G$",
                      lambda m: "nominal_speed %s %s" % (m.group(1),
                                                         self.nominal),
                      text, flags=re.M)

    # ------------------------------------------------------------ queries
    def json(self, *args, timeout_s=5):
        """(rc, parsed JSON or None, stderr) of `ringctl -f json ARGS`."""
        p = self.ringctl(*args, fmt="json", timeout_s=timeout_s)
        doc = None
        if p.stdout.strip():
            try:
                doc = json.loads(p.stdout)
            except ValueError as e:
                raise AssertionError("ringctl %s: bad JSON (%s): %r" %
                                     (" ".join(args), e, p.stdout[:800]))
        return p.returncode, doc, p.stderr

    def status_doc(self):
        rc, doc, err = self.json("status")
        assert doc is not None, "ringctl status rc %d: %s" % (rc, err)
        return doc

    def topology(self):
        return self.status_doc().get("topology")

    @staticmethod
    def survey_id(top):
        """Identifies one completed survey."""
        if not top:
            return None
        return (top.get("surveyed"), top.get("survey_wall_s"),
                top.get("tests_sum_s_computed"))

    def wait_survey(self, after=None, timeout=SURVEY_TIMEOUT_S):
        """Wait until a survey other than `after` (a survey_id) is done and
        none is running; return its topology."""
        def done():
            if self.coord is not None and not self.coord.alive():
                raise AssertionError("coordinator died:\n%s" %
                                     tail(self.coord.log, 60))
            doc = self.status_doc()
            top = doc.get("topology")
            if doc.get("survey") != "done" or not top:
                return None
            return top if self.survey_id(top) != after else None
        try:
            return wait_for(done, timeout, "a survey to complete",
                            interval=0.25)
        except TimeoutError as e:
            raise AssertionError("%s\n%s" % (e, self.log_tails(30)))

    def wait_recheck(self, names, before, timeout=SURVEY_TIMEOUT_S):
        """Wait until nothing runs and each edge of names ("a-b") has a
        re-check other than the one it had in before (a topology, or
        None); return the topology."""
        old = {e["edge"]: e.get("rechecked")
               for e in (before or {}).get("edges", [])}

        def done():
            doc = self.status_doc()
            top = doc.get("topology")
            if doc.get("survey") != "done" or not top:
                return None
            now = {e["edge"]: e.get("rechecked") for e in top["edges"]}
            for n in names:
                if now.get(n) in (None, old.get(n)):
                    return None
            return top
        try:
            return wait_for(done, timeout, "re-checks of %s" %
                            ", ".join(names), interval=0.25)
        except TimeoutError as e:
            raise AssertionError("%s\n%s" % (e, self.log_tails(30)))

    def survey_now(self, timeout=SURVEY_TIMEOUT_S):
        """Start a survey (after any running one) and wait for it."""
        before = self.survey_id(self.wait_survey(None, timeout)
                                if self.status_doc().get("survey") ==
                                "running" else self.topology())
        p = self.ringctl("survey", fmt=None)
        assert p.returncode == 0 and "survey started" in p.stdout, (
            "ringctl survey: rc %d %s %s" % (p.returncode, p.stdout,
                                            p.stderr))
        return self.wait_survey(before, timeout)

    def wait_quiet(self, settle_s=1.5, timeout=SURVEY_TIMEOUT_S):
        """Wait until no survey runs and none starts within settle_s (a
        change seen mid-survey brings another one, after survey_settle)."""
        deadline = time.monotonic() + timeout
        while True:
            wait_for(lambda: self.status_doc().get("survey") != "running",
                     max(1.0, deadline - time.monotonic()),
                     "no survey running", interval=0.25)
            time.sleep(settle_s)
            if self.status_doc().get("survey") != "running":
                return
            assert time.monotonic() < deadline, "surveys keep starting"

    def ranks_text(self, fmt):
        p = self.ringctl("ranks", fmt=fmt)
        assert p.returncode == 0, "ranks -f %s: rc %d %s" % (
            fmt, p.returncode, p.stderr)
        return p.stdout


def edges_by_name(top):
    out = {}
    for e in top["edges"]:
        assert e["edge"] not in out, "edge %s listed twice" % e["edge"]
        out[e["edge"]] = e
    return out


def assert_edge_measured(e, rate=None, what=""):
    """Every ladder figure measured (> 0) both ways; with a tbf rate, 4 and
    8 streams within [RATE_LO, RATE_HI] of it (1 stream may be lower)."""
    label = "%s %s" % (e["edge"], what)
    assert "error" not in e, "%s: %s" % (label, e.get("error"))
    assert e["streams"] == LADDER, label
    assert e["verified"] is True, label
    for key in ("gbps_a_to_b_measured", "gbps_b_to_a_measured"):
        v = e[key]
        assert len(v) == len(LADDER), (label, key, v)
        assert all(g > 0 for g in v), (label, key, v)
        if rate is not None:
            g = rate_gbps(rate)
            for s, x in zip(LADDER, v):
                if s == 1:
                    assert x <= RATE_HI * g, (label, key, v, rate)
                else:
                    assert RATE_LO * g <= x <= RATE_HI * g, (
                        "%s %s: %d streams %.3f Gbps, outside %.2f..%.2f "
                        "of the %s tbf rate" % (label, key, s, x, RATE_LO,
                                                RATE_HI, rate))
    # The latency ladder ran: one p50 per configured size, in order.
    lat = e["lat_p50_us_measured"]
    assert [x["size"] for x in lat] == LAT_SIZES, (label, lat)
    assert all(x["p50_us"] > 0 for x in lat), (label, lat)


def findings(top, prefix=""):
    return [f["finding"] for f in top["findings"]
            if f["finding"].startswith(prefix)]


def anomalies(top, kind=None):
    return [a["anomaly"] for a in top["anomalies"]
            if kind is None or a["kind"] == kind]


def stop_agents_one_by_one(r, grace=5.0):
    """Stop the coordinator, then each live agent, waiting for each to exit.

    An agent that sends to the coordinator in the loop iteration where
    SIGTERM arrives leaks its TLS session (agent_free() frees the
    connection while a deferred libevent callback still holds it: see
    test_agents_stopped_together_do_not_leak). Agents without a session
    send nothing, so stopping the coordinator first keeps that known bug
    out of every other test's sanitizer check."""
    stubborn = []
    if r.coord is not None and r.coord.alive():
        _, killed = r.coord.stop(grace)
        if killed:
            stubborn.append(r.coord.name)
        time.sleep(0.3)  # agents see the session end and drop it
    for name, p in sorted(r.agents.items()):
        if p.alive():
            _, killed = p.stop(grace)
            if killed:
                stubborn.append(p.name)
    return stubborn


def stop_agents_together(r, grace=30.0):
    """stop_agents_one_by_one for a site of dozens of agents: the
    coordinator first (then no agent has a session to leak), then every
    agent's SIGTERM at once, each given grace (a sanitizer build's exit
    on a loaded two-core machine takes seconds, one after another
    minutes)."""
    stubborn = []
    if r.coord is not None and r.coord.alive():
        _, killed = r.coord.stop(grace)
        if killed:
            stubborn.append(r.coord.name)
        time.sleep(0.3)
    live = [p for _, p in sorted(r.agents.items()) if p.alive()]
    for p in live:
        terminate(p.pid, group=True)
    deadline = time.monotonic() + grace
    for p in live:
        if p.wait(max(0.0, deadline - time.monotonic())) is None:
            stubborn.append(p.name)
            p.signal(signal.SIGKILL)
            p.wait(10)
    return stubborn


def stop_site_and_check(cl, r):
    """stop_and_check for a site of many agents (stop_agents_together)."""
    if r and r.coord is not None and r.coord.alive():
        try:
            wait_for(lambda: r.status_doc().get("survey") != "running", 90,
                     "the survey to finish before teardown", interval=0.25)
        except (TimeoutError, AssertionError):
            pass
    down_and_check(cl, r, stop_agents_together(r) if r else [])


def stop_and_check(cl, r):
    """Stop daemons, tear the cluster down, fail on sanitizer reports or
    daemons that ignored SIGTERM (logs kept then)."""
    if r and r.coord is not None and r.coord.alive():
        # Stopping agents mid-test is not what these tests are about.
        try:
            wait_for(lambda: r.status_doc().get("survey") != "running", 90,
                     "the survey to finish before teardown", interval=0.25)
        except (TimeoutError, AssertionError):
            pass
    down_and_check(cl, r, stop_agents_one_by_one(r) if r else [])


def down_and_check(cl, r, stubborn=(), tail_lines=20, report_chars=None):
    """Stop r's daemons (r may be None: the set-up failed early), tear the
    cluster down and fail on sanitizer reports or on daemons that ignored
    SIGTERM (stubborn: those found so far); the work dir is kept then, or
    with RINGD_KEEP. report_chars: each report cut to that length."""
    stubborn = list(stubborn) + (r.stop() if r else [])
    probs = r.sanitizer_problems() if r else []
    tails = r.log_tails(tail_lines) if r and (probs or stubborn) else ""
    keep = bool(probs or stubborn or os.environ.get("RINGD_KEEP"))
    cl.down(keep_workdir=keep)
    assert not probs, "sanitizer reports (logs kept in %s):\n%s" % (
        cl.workdir, "\n".join(p[:report_chars] for p in probs))
    assert not stubborn, "ignored SIGTERM: %s\n%s" % (stubborn, tails)


@contextlib.contextmanager
def ringd_up(c, bindir, report_chars=None, tail_lines=20, **kw):
    """c brought up and a Ringd (kw) made on it, for the caller to start;
    on the way out down_and_check (report_chars, tail_lines)."""
    c.up()
    r = None
    try:
        r = Ringd(c, bindir, **kw)
        yield r
    finally:
        down_and_check(c, r, tail_lines=tail_lines,
                       report_chars=report_chars)


@contextlib.contextmanager
def surveyed_ring(order, bindir, cluster=None, **kw):
    """A ring cabled in `order` (or `cluster`, not yet up), the daemons up
    with no automatic survey, and one short survey done once every node
    heard both neighbours' beacons (else the ring is not all there yet);
    kw goes to Ringd (report_chars, heartbeat_ms, ...)."""
    from cluster import Cluster
    from conftest import new_prefix
    c = cluster or Cluster(order, new_prefix())
    with ringd_up(c, bindir, coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY,
                  agent_extra=FAST_AGENT, **kw) as r:
        r.setup_pki()
        r.start_all(timeout=20)
        wait_for(lambda: neighbours_heard(r, order), 60,
                 "every node to hear its two neighbours")
        p = r.ringctl("survey", "--wait", fmt=None, timeout_s=60)
        assert p.returncode == 0, "survey --wait: rc %d %s\n%s" % (
            p.returncode, p.stderr, r.log_tails())
        yield r


@contextlib.contextmanager
def surveyed(cl, bindir, prepare=None, quiet=False, **kw):
    """cl brought up, prepare(cl) run, a SurveyRingd (kw) started on it and
    its first survey done (then, with quiet, its traffic settled); stopped
    and checked (stop_and_check) on the way out."""
    cl.up()
    r = None
    try:
        if prepare:
            prepare(cl)
        r = SurveyRingd(cl, bindir, **kw)
        r.setup_pki()
        r.start_all(timeout=30)
        r.wait_survey()
        if quiet:
            r.wait_quiet()
        yield r
    finally:
        stop_and_check(cl, r)


class LogMark:
    """Text a log gained since the mark was taken."""

    def __init__(self, path):
        self.path = path
        self.pos = os.path.getsize(path) if os.path.exists(path) else 0

    def new(self):
        with open(self.path, "rb") as f:
            f.seek(self.pos)
            return f.read().decode(errors="replace")

    def wait(self, pattern, timeout, what=None):
        rx = re.compile(pattern)
        return wait_for(lambda: rx.search(self.new()), timeout,
                        what or "log %s to show /%s/" % (self.path, pattern),
                        interval=0.05)


def elapsed(t0):
    return time.monotonic() - t0


# A coordinator that never surveys by itself, and agents that beacon and
# reconnect fast: for modules that ask for their own (short) surveys.
NO_AUTO_SURVEY = ["survey_settle 3600s", "survey_interval 0"]
SHORT_SURVEY = ["survey_duration 200ms", "survey_warmup 0",
                "latency_iterations 20"]
FAST_AGENT = ["lldp_interval 500ms", "reconnect_min 200ms",
              "reconnect_max 1s"]


def neighbours_heard(r, order):
    """The last neighbour table of every node lists its two neighbours
    (tests between neighbours find their cable by them)."""
    with open(r.coord.log, errors="replace") as f:
        text = f.read()
    for n in order:
        seen = re.findall(r"node %s: (\d+) LLDP neighbours" % n, text)
        if not seen or int(seen[-1]) < 2:
            return False
    return True


def scrape_metrics(c, port):
    """The coordinator's Prometheus page, fetched from its namespace."""
    p = c.exec("coord", [sys.executable, "-c",
                         "import urllib.request,sys;"
                         "sys.stdout.write(urllib.request.urlopen("
                         "'http://127.0.0.1:%d/metrics',timeout=5)"
                         ".read().decode())" % port])
    assert p.returncode == 0, p.stderr
    return p.stdout


def spawn_agents(c, r, node, names):
    """Start one ring-agent per name (configs agent-NAME.conf written
    before) on node, from one shell in its namespace."""
    return c.spawn(node, ["sh", "-c", 'for n in "$@"; do "$0" -c '
                          '"%s/agent-$n.conf" 2>>"%s/agents.log" & '
                          'done; wait' % (r.conf_dir, r.log_dir),
                          r.path("ring-agent")] + list(names),
                   os.path.join(r.log_dir, "launcher.log"), name="agents")


@contextlib.contextmanager
def throwaway_users(prefix, n):
    """A system group named prefix+pid and n users in it (no home, no
    shell), all removed on the way out: (group, [user names]). Skips the
    test without useradd or setpriv."""
    import pytest
    if not shutil.which("useradd") or not shutil.which("setpriv"):
        pytest.skip("needs useradd and setpriv")
    tag = "%s%d" % (prefix, os.getpid())
    names = ["%su%d" % (tag, i) for i in range(n)]
    made = []

    def run(argv):
        subprocess.run(argv, check=True, capture_output=True, timeout=30)
    try:
        run(["groupadd", "--system", tag])
        made.append(("groupdel", tag))
        for u in names:
            run(["useradd", "--system", "--no-create-home", "--gid", tag,
                 "--shell", "/usr/sbin/nologin", u])
            made.insert(0, ("userdel", u))
        yield tag, names
    finally:
        for cmd, name in made:
            subprocess.run([cmd, name], capture_output=True, timeout=30)


# Shell lines quoted in docs and banners: the words that start a command.
_SHELL_LEAD = re.compile(r"^(?:sudo|do|then|else|exec|time|nohup|env|"
                         r"runuser -u \S+ --|setsid(?: -f)?|"
                         r"ip netns exec \S+|"
                         r"[A-Za-z_][A-Za-z0-9_]*=\S*)\s+")


def shell_invocations(line, progs):
    """(prog, [args]) for each invocation of one of progs in a shell line:
    the first word of a segment between ; | && || $( ), after sudo,
    runuser, ip netns exec and the like; comments, quotes and
    redirections ("> file" and ">file") removed."""
    line = re.sub(r"(^|\s)#.*", "", line)
    found = []
    for seg in re.split(r";|\|\||&&|\||\$\(|\)", line):
        seg = seg.strip()
        while True:
            n = _SHELL_LEAD.sub("", seg)
            if n == seg:
                break
            seg = n
        try:
            words = shlex.split(seg)
        except ValueError:
            words = seg.split()
        if not words or os.path.basename(words[0]) not in progs:
            continue
        args, skip = [], False
        for w in words[1:]:
            if skip:
                skip = False
            elif re.match(r"^\d*(>>?|<)(&\d+)?$", w):
                skip = True  # "> file": the file is the next word
            elif not re.match(r"^\d*(>>?|<)", w):
                args.append(w)
        found.append((os.path.basename(words[0]), args))
    return found


# ------------------------------------------------------------ sites of rings
# Ring ids, members and rank orders go by node names in byte order (as
# the coordinator compares them: ringd.conf.5, rank0), not in natural
# order: in a ring of n9..n12, n10 is the lowest.

def site_rings(n_rings, size=4):
    """n_rings rings of size nodes (n1.., size names each), each cabled in
    a physical order that is not its names' order and differs from its
    neighbours' (three cyclic orders of four, rotated)."""
    shapes = ([0, 2, 1, 3], [0, 3, 1, 2], [0, 1, 3, 2]) if size == 4 else \
        (list(range(size)),)
    rings = []
    for k in range(n_rings):
        names = ["n%d" % (k * size + i + 1) for i in range(size)]
        shape = shapes[k % len(shapes)]
        phys = [names[i] for i in shape]
        rot = k % size
        rings.append(phys[rot:] + phys[:rot])
    return rings


def ring_id(ring):
    """A discovered ring's id: "ring-" and its lowest member."""
    return "ring-" + min(ring)


def byte_canonical_ring(order):
    """The rank order of a ring cabled in `order`: the lowest name (byte
    order) first, then towards its lower-named neighbour."""
    n = len(order)
    start = min(range(n), key=lambda i: order[i])
    fwd, back = order[(start + 1) % n], order[(start - 1) % n]
    step = 1 if fwd < back else -1
    return [order[(start + step * k) % n] for k in range(n)]


def byte_edge_name(a, b):
    """An edge's name: lower node first in byte order."""
    return "%s-%s" % tuple(sorted((a, b)))


def ring_edge_names(order):
    return sorted(byte_edge_name(a, b) for a, b in ring_pairs(order))


def ring_views(top):
    """{id: RingView} of a published topology (status -f json)."""
    out = {}
    for v in (top or {}).get("rings") or []:
        assert v["id"] not in out, "ring %s listed twice" % v["id"]
        out[v["id"]] = v
    return out

