"""ringctl explain on a real 3-node ring after a short survey: an edge in
either order names both ends' interfaces with their inventory figures and
the ceiling; a node lists its two edges; an unknown name exits 2 with the
known ones; every format parses."""

import json
import re

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY, SHORT_SURVEY, ringd_up,
                      surveyed_ring)

ORDER = ["n1", "n2", "n3"]


@pytest.fixture(scope="module")
def ringd(root, ringd_bin):
    with surveyed_ring(ORDER, ringd_bin, report_chars=3000, heartbeat_ms=500) as r:
        yield r


def edges(r):
    p = r.ringctl("status", "-v")
    assert p.returncode in (0, 1), p.stderr
    return json.loads(p.stdout)["topology"]["edges"]


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "duplicate key in %r" % keys
    return dict(pairs)


def explain(r, name, fmt="json"):
    p = r.ringctl("explain", name, fmt=fmt)
    assert p.returncode in (0, 1), (name, p.returncode, p.stderr)
    # The writer warns on stderr of a key it left out as a duplicate.
    assert p.stderr == "", p.stderr
    if fmt != "json":
        return p, None
    return p, json.loads(p.stdout, object_pairs_hook=no_duplicates)


def test_edge_both_orders(ringd):
    es = edges(ringd)
    assert len(es) == 3, es
    for e in es:
        a, b = e["a"], e["b"]
        docs = []
        for name in ("%s-%s" % (a, b), "%s-%s" % (b, a)):
            p, doc = explain(ringd, name)
            assert doc["explain"] == "edge"
            assert doc["edge"] == e["edge"], (name, doc["edge"])
            ends = {x["node"]: x for x in doc["ends"]}
            assert ends[a]["interface"] == e["a_interface"]
            assert ends[b]["interface"] == e["b_interface"]
            for x in ends.values():
                # From the inventories, not the edge record.
                assert x["mtu"] > 0, x
                assert x["carrier"] is True, x
                assert x["mac"], x
            f = doc["figures"]
            assert f["measured"], f
            assert f["gbps_a_to_b_measured"] == e["gbps_a_to_b_measured"]
            assert len(f["gbps_b_to_a_measured"]) == len(e["streams"])
            c = doc["ceiling"]
            # The emulation's ports have a speed: the port limit is known
            # and the verdict names the figure against it.
            assert c["gbps_measured"] > 0, c
            assert [x["limit"] for x in c["limits"]] == ["port"], c
            assert "Gbps" in c["verdict_computed"], c
            assert doc["history"]["samples"] > 0, doc["history"]
            kinds = {s["kind"] for s in doc["history"]["series"]}
            assert "tcp_bw" in kinds, kinds
            assert p.returncode == (1 if doc["problems"] else 0), (
                p.returncode, doc["problems"])
            docs.append(doc)
        # Either order: the same edge, the same figures (their age may
        # have crossed a second between the two calls).
        f0, f1 = (dict(d["figures"]) for d in docs)
        assert abs(f0.pop("age_s") - f1.pop("age_s")) <= 2
        assert f0 == f1


def test_edge_plain_and_keyvalue(ringd):
    e = edges(ringd)[0]
    name = "%s-%s" % (e["a"], e["b"])
    p, _ = explain(ringd, name, fmt=None)
    for word in (e["a_interface"], e["b_interface"], "ceiling", "verdict",
                 "_measured", "_computed"):
        assert word in p.stdout, (word, p.stdout)
    p, _ = explain(ringd, name, fmt="keyvalue")
    keys = [line.split("=", 1)[0] for line in p.stdout.splitlines()]
    assert len(keys) == len(set(keys)), "a keyvalue key twice"
    assert "ceiling.verdict_computed" in keys, keys
    assert "ends.%s.interface" % e["a"] in keys, keys


def test_node_lists_its_two_edges(ringd):
    es = edges(ringd)
    for node in ORDER:
        p, doc = explain(ringd, node)
        assert doc["explain"] == "node" and doc["node"] == node
        assert doc["status"]["state"] == "up"
        mine = sorted(e["edge"] for e in es if node in (e["a"], e["b"]))
        assert len(mine) == 2
        assert sorted(x["edge"] for x in doc["edges"]) == mine
        for x in doc["edges"]:
            assert x["gbps_measured"] > 0, x
        names = {i["name"] for i in doc["inventory"]["interfaces"]}
        for e in es:
            if e["a"] == node:
                assert e["a_interface"] in names
            if e["b"] == node:
                assert e["b_interface"] in names
        assert p.returncode == (1 if doc["problems"] else 0)


@pytest.mark.parametrize("name", ["n9", "n1-n9", "n1-n2:nosuchif", "x" * 300])
def test_unknown_name_exits_2(ringd, name):
    p = ringd.ringctl("explain", name)
    assert p.returncode == 2, (name, p.returncode, p.stdout)
    assert p.stdout == ""
    assert len(p.stderr.splitlines()) == 1, p.stderr
    if len(name) < 256:
        assert "no node or edge" in p.stderr, p.stderr
        for n in ORDER:
            assert n in p.stderr, p.stderr


def test_unreachable_coordinator_exits_2(ringd, tmp_path):
    p = ringd.ringctl("explain", "n1", sock=str(tmp_path / "none.sock"))
    assert p.returncode == 2, (p.returncode, p.stdout)
    assert p.stdout == "" and json.loads(p.stderr)["error"]["message"], \
        p.stderr


def test_usage_errors_exit_2(ringd):
    for args in (["explain"], ["explain", "n1", "n2"]):
        p = ringd.ringctl(*args)
        assert p.returncode == 2, (args, p.returncode)
        assert "explain needs one EDGE" in p.stderr, p.stderr


def test_cut_cable_is_a_problem(ringd):
    """n1-n2 pulled: explain of the edge and of n1 exits 1 and says why,
    the node's table showing the edge down."""
    c = ringd.cl

    def down():
        p = ringd.ringctl("explain", "n2-n1")
        if p.returncode != 1:
            return None
        doc = json.loads(p.stdout)
        return doc if "the edge is down now" in doc["problems"] else None

    c.cut("n1", "n2")
    try:
        doc = cl.wait_for(down, 20, "explain n2-n1 to say the edge is down")
        assert doc["figures"]["live_state"] == "down"
        assert doc["figures"]["live_reason"], doc["figures"]
        p = ringd.ringctl("explain", "n1")
        assert p.returncode == 1, (p.returncode, p.stderr)
        node = json.loads(p.stdout)
        assert "one of its edges failed or is down" in node["problems"]
        live = {x["edge"]: x["live"] for x in node["edges"]}
        assert live.get("n1-n2", live.get("n2-n1")) == "down", live
        assert sorted(live.values()) == ["down", "up"], live
    finally:
        c.restore("n1", "n2")


def lldp_neighbours(r, node):
    with open(r.coord.log, errors="replace") as f:
        seen = re.findall(r"node %s: (\d+) LLDP neighbours" % node, f.read())
    return int(seen[-1]) if seen else None


TWIN_ORDER = ["n1", "n2", "n4", "n3"]


@pytest.fixture(scope="module")
def twin_ringd(root, ringd_bin):
    """cluster.py's GB10 emulation: two functions per port (twins), one
    per port on each of two emulated PCIe links, all addressed."""
    c = cl.Cluster(TWIN_ORDER, new_prefix(), twins=True, pcie_mbit=400)
    with ringd_up(c, ringd_bin, report_chars=3000, heartbeat_ms=500,
                  coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY,
                  agent_extra=FAST_AGENT) as r:
        r.setup_pki()
        r.start_all(timeout=30)
        cl.wait_for(lambda: all(lldp_neighbours(r, n) == 4
                                for n in TWIN_ORDER),
                    60, "every node to hear four LLDP neighbours")
        p = r.ringctl("survey", "--wait", fmt=None, timeout_s=120)
        assert p.returncode in (0, 1), "survey --wait: rc %d %s" % (
            p.returncode, p.stderr)
        yield r


def test_twin_edge_by_its_function(twin_ringd):
    """A cable's second function pair is explained by the name status
    gives it (a-b:IFACE, or b-a:IFACE from the other end); a-b is the
    first pair; each end lists the port's twin and the PCIe link."""
    es = edges(twin_ringd)
    twins = [e for e in es if e.get("twin")]
    assert twins, es
    for e in twins:
        a, b = e["a"], e["b"]
        _, doc = explain(twin_ringd, e["edge"])
        assert doc["edge"] == e["edge"], (e["edge"], doc["edge"])
        assert doc["edge"] == "%s-%s:%s" % (a, b, e["a_interface"])
        assert doc["cable"]["twin"] is True
        assert doc["cable"]["functions"] == 2, doc["cable"]
        _, rev = explain(twin_ringd, "%s-%s:%s" % (b, a, e["b_interface"]))
        assert rev["edge"] == e["edge"]
        # The same figures; their age may have ticked between the calls.
        assert {k: v for k, v in rev["figures"].items() if k != "age_s"} == \
            {k: v for k, v in doc["figures"].items() if k != "age_s"}
        for x in doc["ends"]:
            ifname = x["interface"]
            assert x["port"]["twins"], x
            assert ifname not in x["port"]["twins"], x
            assert x["pcie_link"]["id"], x
        # The plain pair name is the cable's first pair, not this one.
        _, first = explain(twin_ringd, "%s-%s" % (a, b))
        assert first["edge"] == "%s-%s" % (a, b)
        assert first["cable"]["twin"] is False
        assert first["cable"]["id"] == doc["cable"]["id"]
