"""port_errors judges only windows with carrier and the agent throughout
(docs/COUNTERS.md, "Which windows are judged"), on a 3-node ring whose
agents report counters every second: a cut, its mend and an agent killed
and restarted raise no port_errors, though the kernel counts drops in each
(what is sent into a port without carrier, beacons that reach a port whose
agent is away); frames of a protocol nobody takes, sent into a port while
its agent listens, still raise it.

Each phase waits for a number of the node's counters reports (the
coordinator's "-d agents" log), not for a time, and samples
`ringctl alerts --all` (resolved alerts too) all along."""

import json
import re
import socket

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY, LogMark, facing_port,
                      neighbours_heard, ringd_up)

ORDER = ["n1", "n2", "n3"]
# Reports each phase waits for after its event: the window across the
# event, the windows without carrier or just after it, and two steady
# ones after (a report a second: a few seconds a phase).
REPORTS = 4
REPORT_TIMEOUT_S = 30


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    c = cl.Cluster(ORDER, new_prefix())
    with ringd_up(c, ringd_bin, heartbeat_ms=500, coord_debug="agents",
                  coord_extra=NO_AUTO_SURVEY + ["alert_hold_down 0"],
                  agent_extra=FAST_AGENT + ["counters_interval 1s"]) as r:
        r.setup_pki()
        start_all(r)
        cl.wait_for(lambda: neighbours_heard(r, ORDER), 60,
                    "every node to hear its two neighbours")
        yield c, r


def start_all(r):
    """Coordinator and agents, every node up. Not Ringd.start_all: that
    waits for `ringctl status` to exit 0, and without a survey the health
    is degraded (no_survey), exit 1."""
    r.start_coordinator()
    for n in ORDER:
        r.start_agent(n)
    for n in ORDER:
        r.wait_state(n, "up", 20)


def port_errors(r):
    """{(subject, since): (flaps, message)} of port_errors, resolved
    ones included."""
    p = r.ringctl("alerts", "--all", timeout_s=10)
    assert p.returncode in (0, 1), (p.returncode, p.stderr)
    doc = json.loads(p.stdout)
    return {(a["subject"], a.get("since", "")): (a.get("flaps", 0),
                                                 a.get("message", ""))
            for a in doc.get("alerts", []) if a["rule"] == "port_errors"}


class Quiet:
    """port_errors that appeared, or flapped again, since it was made."""

    def __init__(self, r):
        self.r = r
        self.base = port_errors(r)

    def new(self):
        # (A resolved alert's message changes; its flaps do not.)
        return {k: v for k, v in port_errors(self.r).items()
                if k not in self.base or self.base[k][0] != v[0]}

    def check(self, phase):
        new = self.new()
        assert not new, "%s raised port_errors: %s" % (phase, new)


def reports(mark, node):
    return len(re.findall(r"node %s: counters of \d+ ports" % node,
                          mark.new()))


def wait_reports(r, quiet, phase, mark, nodes, n=REPORTS):
    """Wait until each of nodes sent n counters reports since mark; fail
    as soon as a port_errors appears meanwhile."""
    def done():
        new = quiet.new()
        if new:
            return new
        return all(reports(mark, x) >= n for x in nodes)
    got = cl.wait_for(done, REPORT_TIMEOUT_S,
                      "%d counters reports from %s after the %s" %
                      (n, ", ".join(nodes), phase), interval=0.2)
    assert got is True, "%s raised port_errors: %s" % (phase, got)
    quiet.check(phase)


def stat(c, node, ifname, name):
    p = c.exec(node, ["cat", "/sys/class/net/%s/statistics/%s" %
                      (ifname, name)], check=True)
    return int(p.stdout)


def test_cut_and_mend_quiet(ring):
    c, r = ring
    # Start from steady windows: a report or two after start-up.
    quiet = Quiet(r)
    wait_reports(r, quiet, "start", LogMark(r.coord.log), ORDER, 2)

    ports = [("n1", facing_port(c, "n1", "n2")),
             ("n2", facing_port(c, "n2", "n1"))]
    before = {p: stat(c, p[0], p[1], "tx_dropped") for p in ports}
    mark = LogMark(r.coord.log)
    c.cut("n1", "n2")
    try:
        cl.wait_for(lambda: all("LOWER_UP" not in c.link_flags(*p)
                                for p in ports), 10,
                    "both ports of n1-n2 to lose carrier")
        # Traffic into the dead port, as on a cut under load: the kernel
        # drops and counts it (tx_dropped).
        c.exec("n1", ["ping", "-c", "3", "-i", "0.2", "-W", "1",
                      c.data_addr("n2", "n1")])
        wait_reports(r, quiet, "cut", mark, ["n1", "n2"])
    finally:
        mark = LogMark(r.coord.log)
        c.restore("n1", "n2")
    moved = {p: stat(c, p[0], p[1], "tx_dropped") - before[p]
             for p in ports}
    assert moved[ports[0]] >= 1, ("the cut moved no tx_dropped", moved)
    cl.wait_for(lambda: neighbours_heard(r, ORDER), 30,
                "n1 and n2 to hear each other again")
    wait_reports(r, quiet, "mend", mark, ["n1", "n2"])


def test_agent_restart_quiet(ring):
    c, r = ring
    quiet = Quiet(r)
    # An agent killed: the beacons its neighbours send meanwhile meet no
    # receiver and count as its ports' rx_dropped.
    n3 = [(p, stat(c, "n3", p, "rx_dropped")) for p in c.node("n3").ports]
    r.agents["n3"].stop(grace=0)
    r.wait_state("n3", "down", 15)
    cl.wait_for(lambda: all(stat(c, "n3", p, "rx_dropped") >= v + 2
                            for p, v in n3), 20,
                "beacons dropped at n3's ports while its agent is away",
                interval=0.2)
    quiet.check("agent kill")
    mark = LogMark(r.coord.log)
    r.start_agent("n3")
    r.wait_state("n3", "up", 20)
    wait_reports(r, quiet, "agent restart", mark, ["n3"])


def test_real_drops_still_raise(ring):
    """Frames of an ethertype no protocol takes, sent into n1's port while
    its agent listens: the kernel counts them as rx_dropped, and that is
    judged: port_errors for the port, with the rise; then it clears."""
    c, r = ring
    port = facing_port(c, "n1", "n2")
    cable = c.cables_between("n1", "n2")[0]
    subject = "n1 %s" % port
    # The window must start after any earlier event: two steady reports.
    wait_reports(r, Quiet(r), "settle", LogMark(r.coord.log), ["n1"], 2)
    before = stat(c, "n1", port, "rx_dropped")
    s = cl.socket_in(c.ns("wire"), socket.AF_PACKET, socket.SOCK_RAW, 0,
                     bind=(cable.wire_toward("n1"), 0))
    try:
        frame = b"\xff" * 6 + b"\x02\x00\x00\x00\x00\x01" + b"\x88\xb5" + \
            b"\x00" * 46  # IEEE local experimental ethertype
        for _ in range(5):
            s.send(frame)
    finally:
        s.close()
    cl.wait_for(lambda: stat(c, "n1", port, "rx_dropped") >= before + 5, 10,
                "n1 %s to count the 5 frames as rx_dropped" % port)

    def raised():
        return [m for (subj, _), (_, m) in port_errors(r).items()
                if subj == subject and "rx_dropped +" in m]
    msgs = cl.wait_for(raised, 20, "port_errors for %s" % subject,
                       interval=0.2)
    assert re.search(r"rx_dropped \+[5-9]", msgs[0]), msgs

    def firing():
        p = r.ringctl("alerts", timeout_s=10)
        doc = json.loads(p.stdout)
        return [a for a in doc.get("alerts", [])
                if a["rule"] == "port_errors" and a["subject"] == subject
                and a.get("state") == "firing"]
    cl.wait_for(lambda: not firing(), 20,
                "port_errors for %s to clear" % subject, interval=0.2)
