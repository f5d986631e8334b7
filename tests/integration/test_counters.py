"""Port counters (issue 10) on a 3-node ring: every agent pushes its data
interfaces' counters each second (counters_interval 1s); the coordinator
exports them on its Prometheus endpoint, up nodes only, the management
interface never; the bytes of a TCP test show in the sender's cable port
and in the receiver's."""

import json
import re
import struct
import threading
import time

import pytest

import cluster as cl
import fakeagent as fa
from conftest import new_prefix
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY, facing_port,
                      neighbours_heard, ringd_up, scrape_metrics)

ORDER = ["n1", "n2", "n3"]
METRICS_PORT = 9465
COUNTERS_REPORT = 46  # Envelope field
SAMPLE = re.compile(r'^(ringd_[a-z_]+)\{node="([^"]*)",interface="([^"]*)"'
                    r'(?:,ring="[^"]*")?\} (\S+)$', re.M)


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    c = cl.Cluster(ORDER, new_prefix())
    # No automatic survey: the only traffic is the test's (and beacons).
    with ringd_up(c, ringd_bin, heartbeat_ms=500,
                  coord_extra=NO_AUTO_SURVEY + [
                      "admit_unexpected yes", "alert_hold_down 0",
                      "metrics_listen 127.0.0.1:%d" % METRICS_PORT],
                  agent_extra=FAST_AGENT + ["counters_interval 1s"]) as r:
        r.setup_pki(names=["coordinator"] + ORDER + ["evil"])
        # Not r.start_all: it waits for `ringctl status` to exit 0, and
        # with no survey the health is degraded (no_survey).
        r.start_coordinator()
        for n in ORDER:
            r.start_agent(n)
        for n in ORDER:
            r.wait_state(n, "up", 20)
        cl.wait_for(lambda: neighbours_heard(r, ORDER), 60,
                    "every node to hear its two neighbours")
        yield c, r


def scrape(c):
    return scrape_metrics(c, METRICS_PORT)


def samples(text):
    """{(family, node, interface): value} of the per-interface families."""
    return {(m.group(1), m.group(2), m.group(3)): float(m.group(4))
            for m in SAMPLE.finditer(text)}


def figure(c, family, node, ifname):
    return samples(scrape(c)).get((family, node, ifname))


def test_counters_exported(ring):
    c, r = ring
    port = facing_port(c, "n1", "n2")
    # A rate needs a second sample: then everything is there.
    cl.wait_for(lambda: figure(c, "ringd_interface_transmit_bytes_per_second",
                               "n1", port) is not None, 15,
                "n1 %s's transmit rate in the metrics" % port)
    text = scrape(c)
    assert "# TYPE ringd_interface_transmit_bytes_total counter" in text
    assert "# TYPE ringd_interface_receive_bytes_per_second gauge" in text
    s = samples(text)
    for n in ORDER:
        got = sorted(i for (f, node, i) in s
                     if f == "ringd_interface_receive_bytes_total" and
                     node == n)
        # Every data port, and never the management interface.
        assert got == sorted(c.node(n).ports), (n, got)
    for fam in ("receive_errors_total", "transmit_errors_total",
                "receive_drops_total", "transmit_drops_total"):
        assert s[("ringd_interface_" + fam, "n1", port)] >= 0, fam
    # Beacons alone make the counters move.
    assert s[("ringd_interface_transmit_bytes_total", "n1", port)] > 0


def test_test_bytes_counted(ring):
    c, r = ring
    a_port = facing_port(c, "n1", "n2")
    b_port = facing_port(c, "n2", "n1")
    tx = "ringd_interface_transmit_bytes_total"
    rx = "ringd_interface_receive_bytes_total"
    cl.wait_for(lambda: figure(c, tx, "n1", a_port) is not None, 15,
                "n1's counters in the metrics")
    s = samples(scrape(c))
    tx0, rx0 = s[(tx, "n1", a_port)], s[(rx, "n2", b_port)]
    p = r.ringctl("test", "bw", "n1", "n2", "--duration", "2",
                  timeout_s=60)
    assert p.returncode == 0, (p.returncode, p.stderr)
    doc = json.loads(p.stdout)
    sent = sum(st["bytes"] for st in doc["a_side"]["streams"]
               if st["role"] == "send")
    assert sent > 0, doc
    # The next report (within a second or two) counts the test's bytes
    # (the warm-up's too: more, never less).
    cl.wait_for(lambda: figure(c, tx, "n1", a_port) - tx0 > sent / 2, 15,
                "n1 %s's transmit counter to count the test's %d bytes" %
                (a_port, sent))
    cl.wait_for(lambda: figure(c, rx, "n2", b_port) - rx0 > sent / 2, 15,
                "n2 %s's receive counter to count the test's %d bytes" %
                (b_port, sent))


def test_down_node_not_exported(ring):
    c, r = ring
    r.agents["n3"].stop()
    try:
        r.wait_state("n3", "down", 10)
        s = samples(scrape(c))
        assert not [k for k in s if k[1] == "n3"], s
    finally:
        r.start_agent("n3")
        r.wait_state("n3", "up", 20)


def port_counters(name, *fields):
    return fa.f_bytes(2, fa.f_bytes(1, name) + b"".join(fields))


def test_hostile_reports_refused(ring):
    """What an agent with a valid certificate sends is still checked: too
    many ports, a rate that is not a number; refused with the reason and
    nothing kept; a good report from the same agent is exported."""
    c, r = ring
    a = fa.FakeAgent(r, "evil")
    try:
        a.send(COUNTERS_REPORT, b"".join(port_counters("eth%d" % i)
                                         for i in range(257)))
        m = a.wait_error()
        assert m is not None and m.text(2) == (
            "counters report refused: 257 ports (max 256)"), m and m.text(2)
        nan = fa.varint(10 << 3 | 1) + struct.pack("<d", float("nan"))
        a.send(COUNTERS_REPORT, port_counters("eth1", nan))
        m = a.wait_error()
        assert m is not None and m.text(2) == (
            "counters report refused: eth1: invalid rate"), m and m.text(2)
        assert not [k for k in samples(scrape(c)) if k[1] == "evil"]
        a.send(COUNTERS_REPORT, fa.f_varint(1, 1000) +
               port_counters("eth1", fa.f_varint(3, 12345)))
        cl.wait_for(lambda: figure(c, "ringd_interface_transmit_bytes_total",
                                   "evil", "eth1") == 12345, 10,
                    "evil's good report in the metrics")
    finally:
        a.close()
    cl.wait_for(lambda: r.node_state("evil") != "up", 10,
                "fake evil to go down")


def firing(r):
    rc, doc, err = r.status()
    assert doc is not None, err
    return {(a["rule"], a["subject"]): a["message"]
            for a in doc.get("alerts", [])}


def test_port_errors_alert(ring):
    """Error counters rising between two reports raise port_errors for
    that port, with the rise; the next report with none clears it."""
    c, r = ring
    a = fa.FakeAgent(r, "evil")
    try:
        def report(rx_errors, rx_dropped):
            a.send(COUNTERS_REPORT, fa.f_varint(1, 1000) + port_counters(
                "eth1", fa.f_varint(6, rx_errors),
                fa.f_varint(8, rx_dropped)) + port_counters("eth2"))
        report(10, 0)
        report(10, 0)
        report(17, 3)
        # (The first report may rise against what evil sent before.)
        want = "evil eth1: rx_errors +7, rx_dropped +3 in the last "
        cl.wait_for(lambda: firing(r).get(("port_errors", "evil eth1"),
                                          "").startswith(want), 10,
                    "port_errors for evil eth1: %s..." % want)
        assert ("port_errors", "evil eth2") not in firing(r)
        report(17, 3)
        cl.wait_for(lambda: ("port_errors", "evil eth1") not in firing(r),
                    10, "port_errors for evil eth1 to clear")
    finally:
        a.close()
    cl.wait_for(lambda: r.node_state("evil") != "up", 10,
                "fake evil to go down")


def test_port_errors_windows(ring):
    """Reports with the port's carrier state (port_state): a rise across
    a carrier change or an agent reconnect raises no port_errors, the same
    rise with carrier and the same session does. Each report's tx_bytes
    is its step number, so that the metrics say when it was taken in."""
    c, r = ring
    subject = "evil eth1"

    def report(a, step, rx_dropped, tx_dropped, changes, carrier):
        a.send(COUNTERS_REPORT, fa.f_varint(1, 1000) + port_counters(
            "eth1", fa.f_varint(3, step), fa.f_varint(8, rx_dropped),
            fa.f_varint(9, tx_dropped), fa.f_varint(16, changes),
            fa.f_varint(17, carrier), fa.f_varint(18, 1)) +
            fa.f_varint(3, 1))
        cl.wait_for(lambda: figure(c, "ringd_interface_transmit_bytes_total",
                                   "evil", "eth1") == step, 10,
                    "report %d taken in" % step)
        return firing(r).get(("port_errors", subject))

    a = fa.FakeAgent(r, "evil")
    try:
        assert report(a, 1, 0, 0, 2, 1) is None  # first of the session
        assert report(a, 2, 0, 0, 2, 1) is None
        assert report(a, 3, 0, 1, 3, 0) is None  # cut: tx_dropped +1
        assert report(a, 4, 0, 1, 4, 1) is None  # mended
    finally:
        a.close()
    cl.wait_for(lambda: r.node_state("evil") != "up", 10,
                "fake evil to go down")
    a = fa.FakeAgent(r, "evil")
    try:
        # Beacons dropped while the agent was away: a new session.
        assert report(a, 5, 31, 1, 4, 1) is None
        assert report(a, 6, 31, 1, 4, 1) is None
        got = report(a, 7, 33, 2, 4, 1)
        assert got is not None and got.startswith(
            "evil eth1: rx_dropped +2, tx_dropped +1 in the last "), got
        assert report(a, 8, 33, 2, 4, 1) is None
    finally:
        a.close()
    cl.wait_for(lambda: r.node_state("evil") != "up", 10,
                "fake evil to go down")


def kv_counters(text, side):
    """[{source, port, name, delta, ...}] of side's counters in ringctl's
    keyvalue output (side.counters.N.key=value)."""
    rows = {}
    pat = re.compile(r"^%s\.counters\.(\d+)\.([a-z_]+)=(.*)$" % side, re.M)
    for m in pat.finditer(text):
        rows.setdefault(int(m.group(1)), {})[m.group(2)] = m.group(3)
    return [rows[k] for k in sorted(rows)]


def test_counters_around_a_test(ring):
    """Counters around a test (issue 11): a TCP test over n1-n2 while the
    cable is pulled for a moment. What really moves on a veth: netem and
    act_gact are not in every kernel (not in this one), and drops on the
    wire side never reach the node's statistics; a pulled cable drops both
    ports' carrier, so carrier_changes and carrier_down_count move, and
    the sender's packets meanwhile count as tx_dropped. Both sides report
    them (keyvalue lists every moved counter) and the coordinator says
    link_flap and counter_loss, naming node, interface and counter."""
    c, r = ring
    ports = {"n1": facing_port(c, "n1", "n2"), "n2": facing_port(c, "n2", "n1")}
    out = {}

    def run():
        out["p"] = r.ringctl("test", "bw", "n1", "n2", "--duration", "4",
                             fmt="keyvalue", timeout_s=60)
    t = threading.Thread(target=run)
    t.start()
    try:
        time.sleep(1.5)
        c.cut("n1", "n2")
        time.sleep(0.3)
    finally:
        c.restore("n1", "n2")
    t.join(90)
    p = out["p"]
    assert p.returncode in (0, 1), (p.returncode, p.stdout, p.stderr)
    for side, node in (("a_side", "n1"), ("b_side", "n2")):
        got = {(x["source"], x["port"], x["name"]): int(x["delta"])
               for x in kv_counters(p.stdout, side)}
        key = ("netdev", ports[node], "carrier_down_count")
        assert got.get(key, 0) >= 1, (side, got, p.stdout)
        assert got.get(("netdev", ports[node], "carrier_changes"), 0) >= 2
        for x in kv_counters(p.stdout, side):
            assert float(x["span_s"]) >= 4, x  # setup to result: > window
    # The sender's packets meet a port without carrier: dropped, counted.
    a = {(x["source"], x["name"]): int(x["delta"])
         for x in kv_counters(p.stdout, "a_side")}
    assert a.get(("netdev", "tx_dropped"), 0) >= 1, p.stdout
    assert re.search(r"^findings\.\d+\.text=test n1-n2: n1 %s: loss or "
                     r"error counters moved.*tx_dropped \+\d+ \(netdev\)" %
                     ports["n1"], p.stdout, re.M), p.stdout
    flap = [l for l in p.stdout.splitlines()
            if l.startswith("findings.") and "link went down" in l]
    assert any("n1 %s" % ports["n1"] in l and "carrier_down_count +" in l
               for l in flap), p.stdout


def test_quiet_test_moves_nothing(ring):
    """A test on a quiet, healthy cable: no error counter moves, so no
    counters and no findings in the report (JSON: counters_moved 0)."""
    c, r = ring
    p = r.ringctl("test", "bw", "n1", "n2", "--duration", "1", timeout_s=60)
    assert p.returncode == 0, (p.returncode, p.stderr)
    doc = json.loads(p.stdout)
    for side in ("a_side", "b_side"):
        assert doc[side].get("counters_moved") == 0, doc[side]
        assert "counters_error" not in doc[side], doc[side]
    assert "findings" not in doc, doc
