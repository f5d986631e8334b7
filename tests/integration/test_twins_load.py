"""The coordinator on a twin-mode ring (cluster.py's GB10 emulation: four
functions per node, two per physical port, one per port on each of two
PCIe links whose budgets are R per link and direction): twins counted as
one cable of two functions, the port step sums both, the ring-load round
shows the shared PCIe budget, and a slow PCIe link is found where it is
set.

Expected (R = PCIE_MBIT / 1000 Gbps; figures loose):
- one edge per intended function pair (8), never a cross pair;
- per physical cable two edges, one of them twin;
- a cable's port step (both twins at once) ~2R: its twins sit on two links;
- ring load one way (every node sends to its next only): each link
  carries one flow per direction, ~2R per cable; both ways: each link's
  two functions (one per cable) share R, ~R per cable and direction: the
  PCIe limit, not the cable's;
- no "unused NIC halves" (every half is addressed and used)."""


import re

import pytest

import cluster as cl
from cluster import _natural_key
from conftest import new_prefix
from ringtest import FAST_AGENT, NO_AUTO_SURVEY, ringd_up

ORDER = ["n1", "n2", "n4", "n3"]  # physical ring 1-2-4-3-1
# Small enough that 16 flows at once (both ways, every function) stay
# within two cores with sanitizer builds: the figures are then the
# budget's, not the CPU's.
PCIE_MBIT = 200
# Windows long enough for htb to hold its rate (200 ms ones burst past
# it); one ladder step keeps the survey near half a minute.
LOAD_SURVEY = ["survey_duration 1s", "survey_warmup 300ms",
               "survey_streams 4", "latency_iterations 20"]

R = PCIE_MBIT / 1000.0


def topology(r):
    rc, doc, err = r.status()
    assert doc is not None, err
    return doc["topology"]


def norm_pair(a, ai, b, bi):
    """(node, interface) pairs, lower node first."""
    x, y = (a, ai), (b, bi)
    return (x, y) if _natural_key(a) < _natural_key(b) else (y, x)


def ring_next(node):
    return ORDER[(ORDER.index(node) + 1) % len(ORDER)]


@pytest.fixture(scope="module")
def twin_ringd(root, ringd_bin):
    c = cl.Cluster(ORDER, new_prefix(), twins=True, pcie_mbit=PCIE_MBIT)
    with ringd_up(c, ringd_bin, report_chars=3000, heartbeat_ms=500,
                  coord_extra=NO_AUTO_SURVEY + LOAD_SURVEY,
                  agent_extra=FAST_AGENT) as r:
        r.setup_pki()
        r.start_all(timeout=30)
        p = r.ringctl("survey", "--wait", fmt=None, timeout_s=180)
        # 1: findings of level warn (every node is PCIe-limited both ways)
        assert p.returncode in (0, 1), "survey --wait: rc %d %s\n%s" % (
            p.returncode, p.stderr, r.log_tails())
        yield r


def test_twins_cables(twin_ringd):
    r = twin_ringd
    c = r.cl
    top = topology(r)
    assert top["kind"] == "ring" and top["order"] == ORDER, top["order"]

    # Edges: exactly the intended pairs, named by their functions.
    want = {norm_pair(cb.a, cb.a_port, cb.b, cb.b_port) for cb in c.cables}
    got = {norm_pair(e["a"], e["a_interface"], e["b"], e["b_interface"])
           for e in top["edges"]}
    assert got == want, (sorted(got), sorted(want))
    assert len(top["edges"]) == 8

    # Cables: one per physical cable, two functions, edges twin-flagged.
    cables = {cab["cable"]: cab for cab in top["cables"]}
    assert len(cables) == 4, sorted(cables)
    by_cable = {}
    for e in top["edges"]:
        assert e.get("cable") in cables, e
        by_cable.setdefault(e["cable"], []).append(e)
    for cid, es in by_cable.items():
        assert sorted(e["twin"] for e in es) == [False, True], (cid, es)
        # The two edges of a cable join the same two nodes, one per link.
        assert len({frozenset((e["a"], e["b"])) for e in es}) == 1, es
        links = sorted(e["a_interface"].startswith("enP2") for e in es)
        assert links == [False, True], es
    for cid, cab in cables.items():
        assert cab["functions"] == 2, cab
        for k in ("port_gbps_a_to_b_measured", "port_gbps_b_to_a_measured"):
            # Twins on two links: the port step sums two link budgets.
            assert 1.4 * R < cab[k] <= 2.1 * R, (cid, k, cab[k], R)
    for e in top["edges"]:
        for k in ("gbps_a_to_b_measured", "gbps_b_to_a_measured"):
            assert max(e[k]) <= 1.1 * R, (e["edge"], k, e[k])

    # The ring picture labels each cable with its port step (~2R).
    labels = [float(x) for x in re.findall(r"=([0-9.]+)=", top["picture"])]
    assert len(labels) == 4 and min(labels) > 1.4 * R, top["picture"]

    # Ring-load rounds: one way ~2R per cable, both ways ~R each way.
    rows = top["ring_load"]
    assert sorted(x["cable"] for x in rows) == sorted(cables), rows
    for x in rows:
        # One way follows the ring (each node sends to its next).
        a, b = x["one_way"].split("->")
        assert ring_next(a) == b, x
        assert x["one_way_gbps_measured"] > 1.3 * R, (x, R)
        for k in ("both_ways_gbps_a_to_b_measured",
                  "both_ways_gbps_b_to_a_measured"):
            # Each link's two functions (one per cable) now share R.
            # (loosely: 16 flows at once on a 2-core machine)
            assert 0.25 * R < x[k] < 1.5 * R, (x, k, R)
            assert x[k] < 0.8 * x["one_way_gbps_measured"], (x, k)

    texts = [f["finding"] for f in top["findings"]]
    assert not [t for t in texts if "unused NIC halves" in t], texts
    assert not [t for t in texts if "counted as one neighbour" in t], texts


def test_twins_pcie_limit(twin_ringd):
    """One link made the bottleneck (n4's link 2 at R/4): the both-ways
    ring-load round shows it on n4's cables, and a finding names n4 and
    its PCIe link."""
    r = twin_ringd
    c = r.cl
    c.set_pcie_budget("n4", 2, PCIE_MBIT // 4)
    try:
        p = r.ringctl("survey", "--wait", fmt=None, timeout_s=180)
        # 1: done, with warnings (the uniform ceiling, the host limits).
        assert p.returncode in (0, 1), (p.returncode, p.stdout, p.stderr)
        top = topology(r)
    finally:
        c.set_pcie_budget("n4", 2, PCIE_MBIT)
    slow = {frozenset(("n2", "n4")), frozenset(("n4", "n3"))}
    for e in top["edges"]:
        link2 = e["a_interface"].startswith("enP2")
        if link2 and frozenset((e["a"], e["b"])) in slow:
            for k in ("gbps_a_to_b_measured", "gbps_b_to_a_measured"):
                assert max(e[k]) < 0.4 * R, (e["edge"], k, e[k])
    # The slow link is named, at n4 alone (its neighbours' other pairs
    # through their link 2 are fine).
    slow_links = [f["finding"] for f in top["findings"]
                  if f.get("code") == "pcie_link_slow"]
    assert len(slow_links) == 1, top["findings"]
    assert slow_links[0].startswith("n4: every function pair through its "
                                    "PCIe link 0002:01:00 (enP2p1s0f"), \
        slow_links
