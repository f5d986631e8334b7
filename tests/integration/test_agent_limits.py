"""What anyone on a data cable can do to a real (ASan) agent: an LLDP flood
from a raw socket, thousands of distinct chassis ids with TTL 65535 and a
claim to be another node's port. The agent keeps its real neighbours on
that port and every other, refuses the rest (one rate-limited warning),
pushes its table a few times a second at most (even when a churn of
claims and shutdown frames changes it thousands of times a second), and
keeps its session."""

import os
import re
import socket
import struct
import time

import pytest

import cluster as cl
from conftest import new_prefix
from daemons import SANITIZER_ENV, Ringd, all_well_unsurveyed
from ringtest import LogMark, ringd_up

ORDER = ["n1", "n2", "n3"]
LLDP_MS = 500          # real neighbours' TTL: 4 periods, 2 s
FLOOD_S = 3.0          # longer than that TTL: real ones must refresh
ETH_P_LLDP = 0x88CC
LLDP_MCAST = bytes.fromhex("0180c200000e")
MAX_PER_PORT = 4       # LLDP_MAX_PER_PORT in agent/lldp.h
NOTIFY_MIN_S = 0.25    # LLDP_NOTIFY_MIN_MS


def tlv(t, value):
    return struct.pack("!H", (t << 9) | len(value)) + value


def lldp_frame(src_mac, chassis, port, ttl):
    """What agent/lldp.c's lldp_encode makes, without the agent id TLV."""
    body = (tlv(1, b"\x07" + chassis.encode()) +
            tlv(2, b"\x05" + port.encode()) +
            tlv(3, struct.pack("!H", ttl)) + tlv(0, b""))
    frame = LLDP_MCAST + src_mac + struct.pack("!H", ETH_P_LLDP) + body
    return frame + b"\0" * max(0, 60 - len(frame))


def port_toward(c, node, peer):
    return c.cables_between(node, peer)[0].port_of(node)


@pytest.fixture(scope="module")
def ringd(root, ringd_bin):
    c = cl.Cluster(ORDER, new_prefix())
    with ringd_up(c, ringd_bin, heartbeat_ms=500, misses=3,
                  agent_extra=["lldp_interval %dms" % LLDP_MS,
                               "reconnect_min 200ms",
                               "reconnect_max 1s"]) as r:
        r.setup_pki()
        r.start_coordinator()
        mark = LogMark(r.coord.log)
        for n in ORDER[1:]:
            r.start_agent(n)
        # n1 logs every table change, debug included: an eviction of a
        # real neighbour cannot hide behind the info lines' budget.
        conf = r.write("agent-n1.conf", r.agent_conf_text("n1"))
        r.agents["n1"] = c.spawn(
            "n1", [r.path("ring-agent"), "-c", conf, "-d", "lldp"],
            os.path.join(r.log_dir, "agent-n1.log"), name="agent-n1",
            env=SANITIZER_ENV)
        r.wait_all_up(20)
        mark.wait(r"node n1: 2 LLDP neighbours", 20)
        yield r


def n1_counts(text):
    return [int(m) for m in
            re.findall(r"node n1: (\d+) LLDP neighbours", text)]


def test_lldp_flood_keeps_real_neighbours(ringd):
    r = ringd
    c = r.cl
    flooded = port_toward(c, "n1", "n2")    # n1's port on the n1-n2 cable
    other = port_toward(c, "n1", "n3")
    attacker_port = port_toward(c, "n2", "n1")
    rc, doc, err = r.status()
    assert all_well_unsurveyed(rc, doc), (rc, doc, err)
    since = Ringd.node_entry(doc, "n1")["connected_since"]
    agent_mark = LogMark(r.agents["n1"].log)
    coord_mark = LogMark(r.coord.log)

    tx = c.socket("n2", socket.AF_PACKET, socket.SOCK_RAW, 0,
                  bind=(attacker_port, 0))
    sent = 0
    t0 = time.monotonic()
    try:
        # A claim to be n3's port, from n2's cable, then a flood of
        # strangers with the longest TTL there is.
        tx.send(lldp_frame(b"\x02\xee\x00\x00\x00\x01", "n3", "eth9", 65535))
        while time.monotonic() - t0 < FLOOD_S:
            for _ in range(100):
                mac = b"\x02\xee" + struct.pack("!I", sent + 2)
                try:
                    tx.send(lldp_frame(mac, "evil%d" % sent, "eth1",
                                       65535))
                except BlockingIOError:
                    pass
                sent += 1
    finally:
        tx.close()
    flood_s = time.monotonic() - t0
    print("sent %d LLDP frames in %.1f s" % (sent, flood_s))
    assert sent >= 1000

    want = MAX_PER_PORT + 1  # the flooded port full, the other port's one
    cl.wait_for(lambda: n1_counts(coord_mark.new())[-1:] == [want], 5,
                "n1's table of %d neighbours at the coordinator" % want)
    pushes = len(n1_counts(coord_mark.new()))
    elapsed = time.monotonic() - t0
    print("n1 pushed its table %d times in %.1f s" % (pushes, elapsed))
    assert pushes <= elapsed / NOTIFY_MIN_S + 2, pushes

    log = agent_mark.new()
    lost = re.findall(r"neighbour (?:n2|n3) port \S+ (?:gone|left|replaced)"
                      r".*", log)
    assert not lost, "real neighbours dropped:\n%s" % "\n".join(lost)
    warned = re.findall(r"lldp: (\S+): %d neighbours claim this port "
                        r"already" % MAX_PER_PORT, log)
    assert warned == [flooded], warned  # one line, on that port only
    assert other not in warned

    # Alive, same session, nothing else disturbed.
    assert r.agents["n1"].alive(), cl.tail(r.agents["n1"].log)
    rc, doc, err = r.status()
    assert all_well_unsurveyed(rc, doc), (rc, doc, err)
    e = Ringd.node_entry(doc, "n1")
    assert e["state"] == "up" and e["connected_since"] == since, e
    assert "node n1 up" not in coord_mark.new()


def test_lldp_churn_is_coalesced(ringd):
    """Claims that come and go (each followed by its shutdown frame) change
    n1's table on every frame; the coordinator still gets at most one
    table per LLDP_NOTIFY_MIN_MS, and the real neighbour stays."""
    r = ringd
    c = r.cl
    attacker_port = port_toward(c, "n3", "n1")
    agent_mark = LogMark(r.agents["n1"].log)
    coord_mark = LogMark(r.coord.log)
    before = n1_counts(open(r.coord.log, errors="replace").read())[-1]
    tx = c.socket("n3", socket.AF_PACKET, socket.SOCK_RAW, 0,
                  bind=(attacker_port, 0))
    sent = 0
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < FLOOD_S:
            mac = b"\x02\xdd" + struct.pack("!I", sent + 2)
            name = "flap%d" % sent
            try:
                # TTL 1 s: a claim whose shutdown frame the kernel
                # dropped (a full socket buffer) expires soon anyway.
                tx.send(lldp_frame(mac, name, "eth1", 1))
                tx.send(lldp_frame(mac, name, "eth1", 0))
            except BlockingIOError:
                pass
            sent += 1
    finally:
        tx.close()
    # The churn ends with the table as it was: that last state arrives.
    cl.wait_for(lambda: n1_counts(coord_mark.new())[-1:] == [before], 5,
                "n1's table back to %d neighbours at the coordinator" %
                before)
    elapsed = time.monotonic() - t0
    pushes = len(n1_counts(coord_mark.new()))
    changes = len(re.findall(r"neighbour flap\d+ port eth1",
                             agent_mark.new()))
    print("%d claims and shutdowns in %.1f s: %d logged changes, %d pushes"
          % (sent, elapsed, changes, pushes))
    assert changes > 4 * pushes, (changes, pushes)  # it did churn
    assert pushes <= elapsed / NOTIFY_MIN_S + 2, pushes
    lost = re.findall(r"neighbour (?:n2|n3) port \S+ (?:gone|left|replaced)"
                      r".*", agent_mark.new())
    assert not lost, "real neighbours dropped:\n%s" % "\n".join(lost)
    assert r.agents["n1"].alive(), cl.tail(r.agents["n1"].log)
    assert all_well_unsurveyed(*r.status()[:2]), r.status()
