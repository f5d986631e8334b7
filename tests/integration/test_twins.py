"""The daemons on a twin-mode ring (cluster.py's GB10 emulation): four
functions per node, two per physical port, one per port on each of two
emulated PCIe links whose budgets the harness shapes (R per link and
direction). What already holds: agents connect and report the four
functions, beacons cross on every function, the survey finds the ring in
its physical order."""

import re

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import FAST_AGENT, NO_AUTO_SURVEY, SHORT_SURVEY, ringd_up

ORDER = ["n1", "n2", "n4", "n3"]  # physical ring 1-2-4-3-1
PCIE_MBIT = 400
FUNCTIONS = ["enp1s0f0np0", "enp1s0f1np1", "enP2p1s0f0np0", "enP2p1s0f1np1"]


def lldp_neighbours(r, node):
    """The number of LLDP neighbours the coordinator last logged for
    node (one per function hearing a beacon), or None."""
    with open(r.coord.log, errors="replace") as f:
        seen = re.findall(r"node %s: (\d+) LLDP neighbours" % node, f.read())
    return int(seen[-1]) if seen else None


@pytest.fixture(scope="module")
def twin_ringd(root, ringd_bin):
    c = cl.Cluster(ORDER, new_prefix(), twins=True, pcie_mbit=PCIE_MBIT)
    with ringd_up(c, ringd_bin, report_chars=3000, heartbeat_ms=500,
                  coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY,
                  agent_extra=FAST_AGENT) as r:
        r.setup_pki()
        r.start_all(timeout=30)
        # Every function hears its intended peer's beacons: four each.
        cl.wait_for(lambda: all(lldp_neighbours(r, n) == 4 for n in ORDER),
                    60, "every node to hear four LLDP neighbours")
        p = r.ringctl("survey", "--wait", fmt=None, timeout_s=120)
        assert p.returncode == 0, "survey --wait: rc %d %s\n%s" % (
            p.returncode, p.stderr, r.log_tails())
        yield r


def keyvalue(text):
    out = {}
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        assert sep, "not key=value: %r" % line
        out[k] = v
    return out


def test_twins_agents_report_four_functions(twin_ringd):
    r = twin_ringd
    rc, doc, err = r.status()
    assert rc == 0, err
    assert sorted(n["node"] for n in doc["nodes"]) == sorted(ORDER)
    assert all(n["state"] == "up" for n in doc["nodes"]), doc["nodes"]
    for name in ORDER:
        rc, inv, err = r.inventory(name)
        assert rc == 0, err
        ifs = {i["name"]: i for i in inv["interfaces"]}
        # The PCIe budgets' ifbs are no data ports (data_interface enp*
        # enP* in twin mode), nor listed as such.
        assert sorted(n for n in ifs if n != "mgmt0") == sorted(FUNCTIONS)
        for p in r.cl.functions(name):
            i = ifs[p.name]
            assert i["mac"] == p.mac, (name, p.name, i["mac"])
            assert i["ipv4"] == [{"address": p.addr, "prefix": 30}], i
            assert i["mtu"] == 9000
            assert i["carrier"] is True and i["up_no_address"] is False


def test_twins_survey_finds_the_ring(twin_ringd):
    r = twin_ringd
    p = r.ringctl("status", fmt="keyvalue")
    assert p.returncode == 0, p.stderr
    kv = keyvalue(p.stdout)
    assert kv.get("topology.kind") == "ring", p.stdout
    order = [kv["topology.order.%d" % i] for i in range(len(ORDER))]
    assert order == ["n1", "n2", "n4", "n3"], order
    assert "topology.order.%d" % len(ORDER) not in kv


@pytest.fixture(scope="module")
def single_ringd(root, ringd_bin):
    """The reference cluster as measured: only link 0's functions
    addressed, link 2's twins up with carrier, surveyed once."""
    c = cl.Cluster(ORDER, new_prefix(), twins=True, pcie_mbit=PCIE_MBIT,
                   twin_addressing="single")
    with ringd_up(c, ringd_bin, report_chars=3000, heartbeat_ms=500,
                  coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY,
                  agent_extra=FAST_AGENT) as r:
        r.setup_pki()
        r.start_all(timeout=30)
        cl.wait_for(lambda: all(lldp_neighbours(r, n) == 4 for n in ORDER),
                    60, "every node to hear four LLDP neighbours")
        p = r.ringctl("survey", "--wait", fmt=None, timeout_s=120)
        assert p.returncode in (0, 1), "survey --wait: rc %d %s" % (
            p.returncode, p.stderr)  # 1: warnings fire, as they should
        yield r


def test_twins_single_addressed_halves_found(single_ringd):
    """The ring is still found over link 0, and the findings name, per
    node, each port's unused half beside the function that carries the
    cable alone, and both cables on one PCIe link."""
    r = single_ringd
    c = r.cl
    rc, doc, err = r.status()
    top = doc["topology"]
    assert top["kind"] == "ring" and top["order"] == ORDER, top["order"]
    for e in top["edges"]:
        if e["a_interface"].startswith("enp1s0"):
            assert "error" not in e, e
            assert min(e["gbps_a_to_b_measured"]) > 0, e
    by_code = {}
    for f in top["findings"]:
        by_code.setdefault(f.get("code"), []).append(f["finding"])
    for n in ORDER:
        for phys in (0, 1):
            unused = c.function(n, phys, 2).name
            used = c.function(n, phys, 0).name
            hits = [t for t in by_code.get("port_half_unused", [])
                    if t.startswith("%s port p%d:" % (n, phys))]
            assert len(hits) == 1, (n, phys, by_code)
            assert unused in hits[0] and used in hits[0], hits
        hits = [t for t in by_code.get("one_pcie_link", [])
                if t.startswith(n + ":")]
        assert len(hits) == 1, (n, by_code)
        assert "enp1s0f0np0" in hits[0] and "enp1s0f1np1" in hits[0]
        assert "0000:01:00" in hits[0] and "0002:01:00" in hits[0]


def test_twins_single_addressed(single_ringd):
    """Link 2's unaddressed pairs are reported (port_half_unused), never
    tested; and a cable's pairs have names of their own."""
    r = single_ringd
    top = r.status()[1]["topology"]
    codes = [f.get("code") for f in top["findings"]]
    assert "test_failed" not in codes, top["findings"]
    for e in top["edges"]:
        assert "error" not in e, e
    texts = [f["finding"] for f in top["findings"]]
    assert not [t for t in texts if "0.0 Gbps usable" in t], texts
    # Edge names tell a cable's function pairs apart.
    names = [e["edge"] for e in top["edges"]]
    assert len(names) == len(set(names)), names
