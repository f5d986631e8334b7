"""The survey on emulated clusters: from beacons, probes and shaped-cable
measurements to the topology, the rank order and the findings.

Every cable is shaped with tc tbf (goodput ~95.5% of the rate), so every
bandwidth figure asserted here is the shaper's, not the box's. At most two
edges are measured at once (rounds of disjoint pairs), so the shaped total
stays near 2 Gbps even on 2 cores under ASan."""

import json
import os
import random
import re
import signal
import subprocess
import time

import pytest

from cluster import Cluster, _natural_key, set_sysctls, terminate
from conftest import new_prefix
from ringtest import (LAT_SIZES, RATE_HI, RATE_LO, LogMark, SurveyRingd,
                      anomalies, assert_edge_measured, canonical_ring,
                      edge_name, edges_by_name, elapsed, facing_port,
                      findings, rate_gbps, ring_pairs, shape_ring,
                      shape_switch_ports, stop_and_check, surveyed)

FN_ORDER = ["n1", "n2", "n4", "n3"]  # the reference cluster's physical order
FN_RATE = "1gbit"
RATE = "1gbit"
UNIFORM_PREFIX = "every edge tops out at "
UNADDRESSED_TAIL = (" has carrier but no address: if it is the other PCIe "
                    "half of a cabled port, address and use it too, or that "
                    "port stays near half its rate")


def mgmt(cl, node):
    return cl.node(node).mgmt_addr


def data_addrs(cl, node):
    return sorted((p.addr for p in cl.node(node).ports.values() if p.addr),
                  key=_natural_key)


def expected_ranks(cl, order, ring=True):
    """Rank rows as ringctl -f json ranks must give them for a ring (or a
    line when ring=False) in canonical `order`."""
    n = len(order)
    rows = []
    for i, node in enumerate(order):
        nxt = order[(i + 1) % n] if ring or i + 1 < n else ""
        prv = order[(i - 1) % n] if ring or i > 0 else ""
        rows.append({
            "rank": i, "node": node, "mgmt_address": mgmt(cl, node),
            "mgmt_interface": "mgmt0",
            "next_node": nxt,
            "next_interface": facing_port(cl, node, nxt) if nxt else "",
            "next_rdma": "",
            "prev_node": prv,
            "prev_interface": facing_port(cl, node, prv) if prv else "",
            "prev_rdma": "",
            # NCCL's view (no RDMA on veth): no functions to list.
            "hcas": "",
            "gid_index_measured": -1,
            "gid_note": "",
            "subnet_prefix_len": 0,
            "subnet_note": "",
            "nic_groups": "",
            "nic_groups_automatic": False,
            "nic_unpaired": "",
            "nccl_gid_index": -1,
        })
    return rows


def assert_ranks(r, cl, order, kind="ring"):
    rc, doc, err = r.json("ranks")
    assert rc == 0, "ranks: rc %d %s" % (rc, err)
    assert doc["kind"] == kind
    assert doc["ranks"] == expected_ranks(cl, order, ring=kind == "ring")


def assert_diagonals(top, cl, pairs):
    """Exactly `pairs` checked, on every data address of the second node,
    none with a path; the route is the management gateway's."""
    want = sorted((edge_name(a, b), addr) for a, b in pairs
                  for addr in data_addrs(cl, sorted((a, b),
                                                    key=_natural_key)[1]))
    got = sorted((d["pair"], d["address"]) for d in top["diagonals"])
    assert got == want, top["diagonals"]
    for d in top["diagonals"]:
        assert d["path"] is False, d
        assert d["verdict"].startswith("no data-plane path, as expected"), d


def no_edge_trouble(top):
    """No degraded / asymmetric / failed-test / failed-probe finding."""
    bad = [f for f in findings(top) if f.startswith("edge ") or
           "probe failed" in f]
    assert not bad, bad


@pytest.fixture
def ring_env(root, ringd_bin):
    """Factory: ring_env(order, rate=..., rates={...}, cuts=[...],
    prepare=fn(cl), nominal=..., **cluster_kw) -> (cluster, ringd) with
    the daemons up; the first (automatic) survey is not waited for."""
    made = []

    def make(order, rate=RATE, rates=None, cuts=(), prepare=None,
             nominal="200G", **kw):
        cl = Cluster(order, new_prefix(), **kw)
        cl.up()
        r = SurveyRingd(cl, ringd_bin, nominal=nominal)
        made.append((cl, r))
        if rate and not cl.switch:
            shape_ring(cl, rate, rates)
        elif rate:
            shape_switch_ports(cl, rate)
        for a, b in cuts:
            cl.cut(a, b)
        if prepare:
            prepare(cl)
        r.setup_pki()
        r.start_all(timeout=30)
        return cl, r
    yield make
    errors = []
    for cl, r in made:
        try:
            stop_and_check(cl, r)
        except AssertionError as e:
            errors.append(str(e))
    assert not errors, "\n".join(errors)


# ------------------------------------------------------------ no survey yet

def test_ranks_before_any_survey(make_cluster, ringd_bin):
    """Coordinator up, no agent: nothing surveyed, nothing to rank."""
    cl = make_cluster(["n1", "n2"])
    r = SurveyRingd(cl, ringd_bin)
    try:
        r.setup_pki()
        r.start_coordinator()
        p = r.ringctl("ranks")
        assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
        assert p.stdout == ""
        assert "no survey has completed yet (survey never)" in p.stderr
        for fmt in ("hostfile", "torchrun"):
            p = r.ringctl("ranks", fmt=fmt)
            assert p.returncode == 2 and "no survey has completed yet" in \
                p.stderr, (fmt, p.returncode, p.stderr)
        doc = r.status_doc()
        assert doc["survey"] == "never"
        assert "topology" not in doc
        p = r.ringctl("survey", fmt=None)
        assert p.returncode == 2
        assert "fewer than two nodes are up" in p.stderr, p.stderr
    finally:
        stop_and_check(cl, r)


def test_agents_stopped_together_do_not_leak(make_cluster, ringd_bin):
    """Neighbours stopped at the same moment: each hears the other's
    shutdown beacon just before its own SIGTERM. No leak may follow."""
    order = ["n1", "n2", "n4", "n3"]
    cl = make_cluster(order)
    r = SurveyRingd(cl, ringd_bin, coord_extra=["survey_settle 600s"],
                    grace="600s")
    try:
        r.setup_pki()
        r.start_coordinator()
        mark = LogMark(r.coord.log)
        for n in order:
            r.start_agent(n)
        for n in order:
            mark.wait(r"node %s: 2 LLDP neighbours" % n, 20)
        for n in order:
            terminate(r.agents[n].pid, group=True)
        for n in order:
            assert r.agents[n].wait(10) is not None, n
    finally:
        stubborn = r.stop()
        probs = r.sanitizer_problems()
        cl.down()
    assert not stubborn
    assert not probs, "\n".join(p[:1500] for p in probs)


# ------------------------------------------------------------ reference cluster

@pytest.fixture(scope="module")
def fn(root, ringd_bin):
    """The reference cluster: physical order n1-n2-n4-n3, one extra
    unaddressed port per node, every cable at 1 Gbit. A long grace keeps
    a node that is down from starting a partial survey."""
    cl = Cluster(FN_ORDER, new_prefix(), extra_unaddressed_ports=1)
    with surveyed(cl, ringd_bin, prepare=lambda c: shape_ring(c, FN_RATE),
                  quiet=True, grace="600s", coord_debug="survey") as r:
        yield cl, r


def test_field_notes_ring_recovered(fn):
    cl, r = fn
    doc = r.status_doc()
    # Status leads with health and the alerts, then the topology.
    assert list(doc)[:4] == ["health", "alerts", "topology", "survey"], \
        list(doc)
    assert doc["survey"] == "done"
    top = doc["topology"]
    assert top["kind"] == "ring"
    assert top["order"] == ["n1", "n2", "n4", "n3"]
    assert canonical_ring(FN_ORDER) == top["order"]
    assert "missing_cable" not in top
    assert top["anomalies"] == []
    assert top["rounds"] == 2
    # Rounds at work: two edges at a time, so the wall time is well under
    # the sum of the tests.
    assert 0 < top["survey_wall_s"] < top["tests_sum_s_computed"], top

    edges = edges_by_name(top)
    pairs = ring_pairs(FN_ORDER)
    assert sorted(edges) == sorted(edge_name(a, b) for a, b in pairs)
    g = rate_gbps(FN_RATE)
    for a, b in pairs:
        lo, hi = sorted((a, b), key=_natural_key)
        e = edges[edge_name(a, b)]
        assert e["ports"] == "%s %s -> %s %s" % (
            lo, facing_port(cl, lo, hi), hi, facing_port(cl, hi, lo))
        assert e["method"] == "tcp"
        assert_edge_measured(e, FN_RATE)
        # Computed: 8-stream figure (worse direction) over 200G nominal.
        assert RATE_LO * g / 200 * 100 <= e["pct_of_nominal_computed"] <= \
            RATE_HI * g / 200 * 100, e
    # The picture: the ring order, each edge labelled with its figure.
    m = re.match(r"^n1 =(\S+)= n2 =(\S+)= n4 =(\S+)= n3 =(\S+)= \(n1\)$",
                 top["picture"])
    assert m, top["picture"]
    assert all(RATE_LO * g <= float(x) <= RATE_HI * g for x in m.groups())

    # Diagonals 1-4 and 2-3: no data-plane path, the route goes to the
    # management gateway, as on the real cluster.
    assert_diagonals(top, cl, [("n1", "n4"), ("n2", "n3")])
    for d in top["diagonals"]:
        assert (d["route"], d["route_interface"]) == ("gateway", "mgmt0"), d

    # Findings: every edge at the same shaped rate, far under 200G: the
    # uniform ceiling; every node's unaddressed eth3; nothing degraded.
    uni = findings(top, UNIFORM_PREFIX)
    assert len(uni) == 1 and "of its 200 Gbps nominal" in uni[0], uni
    for n in FN_ORDER:
        assert findings(top, n + " eth3") == [n + " eth3" + UNADDRESSED_TAIL]
    no_edge_trouble(top)

    p = r.ringctl("status", fmt="plain")
    assert p.returncode == 0, p.stderr
    assert top["picture"] in p.stdout


def test_field_notes_ranks(fn):
    cl, r = fn
    order = ["n1", "n2", "n4", "n3"]
    assert_ranks(r, cl, order)
    # With these wires: rank k's next port is eth2, its previous eth1.
    rc, doc, _ = r.json("ranks")
    assert [(x["next_interface"], x["prev_interface"])
            for x in doc["ranks"]] == [("eth2", "eth1")] * 4
    addrs = [mgmt(cl, n) for n in order]
    assert addrs == ["10.88.0.11", "10.88.0.12", "10.88.0.14",
                     "10.88.0.13"]

    hostfile = r.ranks_text("hostfile")
    lines = [ln for ln in hostfile.splitlines() if ln and ln[0] != "#"]
    assert lines == ["%s slots=1  # rank %d: %s" % (a, i, n)
                     for i, (a, n) in enumerate(zip(addrs, order))], hostfile

    rankfile = r.ranks_text("rankfile")
    lines = [ln for ln in rankfile.splitlines() if ln and ln[0] != "#"]
    assert lines == ["rank %d=%s slot=0  # %s" % (i, a, n)
                     for i, (a, n) in enumerate(zip(addrs, order))], rankfile

    torch = r.ranks_text("torchrun")
    lines = [ln for ln in torch.splitlines() if ln and ln[0] != "#"]
    assert len(lines) == 4, torch
    for i, (ln, n) in enumerate(zip(lines, order)):
        assert ln.startswith(n + ": torchrun "), ln
        args = ln.split()
        assert "--nnodes=4" in args and "--node-rank=%d" % i in args, ln
        assert "--rdzv-backend=static" in args, ln
        # Rendezvous on rank 0's management address, never a data one.
        assert "--master-addr=%s" % addrs[0] in args, ln
    assert "ignores" in torch and "--node-rank" in torch  # says why

    env = r.ranks_text("env")
    blocks = [b for b in env.strip().split("\n\n") if b.strip()]
    assert len(blocks) == 4, env
    for i, (b, n) in enumerate(zip(blocks, order)):
        kv = dict(ln.split("=", 1) for ln in b.splitlines()
                  if ln and ln[0] != "#")
        assert b.splitlines()[0] == "# %s (rank %d)" % (n, i), b
        # Sockets on the management interface, exact ("=" is NCCL's),
        # for NCCL and the launchers beside it.
        want = {"NODE_RANK": str(i), "MASTER_ADDR": addrs[0],
                "NCCL_SOCKET_IFNAME": "=mgmt0", "GLOO_SOCKET_IFNAME": "mgmt0",
                "UCX_NET_DEVICES": "mgmt0",
                "OMPI_MCA_btl_tcp_if_include": "mgmt0",
                "OMPI_MCA_oob_tcp_if_include": "mgmt0", "NCCL_ALGO": "Ring"}
        assert {k: kv.get(k) for k in want} == want, b
        # Four nodes on a switchless ring: the diagonals warning.
        assert "only ring collectives between adjacent ranks" in b, b
        # No RDMA devices in the emulation: no HCA list to give.
        assert "NCCL_IB_HCA" not in kv, b
        assert "NCCL_IB_GID_INDEX" not in kv, b

    # The reference cluster's second failure: rendezvous must never name a
    # data-plane address.
    for text in (hostfile, rankfile, torch, env):
        assert not re.search(r"\b10\.(89|90)\.", text), text


def run_test(r, *args, timeout_s=60):
    t0 = time.monotonic()
    rc, doc, err = r.json("test", *args, timeout_s=timeout_s)
    return rc, doc, err, elapsed(t0)


def test_lat_between_neighbours(fn):
    cl, r = fn
    rc, doc, err, _ = run_test(r, "lat", "n1", "n2", "--iterations", "100")
    assert rc == 0, (rc, err, doc)
    assert doc["result"] == "ok" and "error" not in doc, doc
    assert doc["a_interface"] == facing_port(cl, "n1", "n2")
    assert doc["b_address"] == cl.data_addr("n2", "n1")
    side = doc["a_side"]
    assert side["latency_convention"] == "half round trip, microseconds"
    rows = side["latency"]
    assert [x["size"] for x in rows] == LAT_SIZES
    for x in rows:
        assert x["n"] == 100, x
        assert 0 < x["min_us"] <= x["p50_us"] <= x["p99_us"] <= \
            x["p999_us"] <= x["max_us"], x
        assert x["min_us"] <= x["mean_us"] <= x["max_us"], x


def test_lat_across_the_diagonal_fails(fn):
    """n1 and n4 are diagonal on this ring: the test fails, by its
    deadline, and says why."""
    cl, r = fn
    rc, doc, err, took = run_test(r, "lat", "n1", "n4", "--iterations",
                                  "100")
    assert rc == 1, (rc, err, doc)
    assert doc["result"] == "failed"
    assert doc["a_interface"] == "(kernel route)"
    assert doc["b_address"] in data_addrs(cl, "n4")
    assert "n1 and n4 are not ring neighbours" in doc["error"], doc
    # The coordinator's deadline: 5 s to connect + 10 s + half a ms per
    # round trip (5 sizes x 110).
    assert took < 5 + 10 + 0.3 + 3, took
    assert "latency" not in doc["a_side"]


@pytest.mark.parametrize("direction", ["a-to-b", "b-to-a", "both"])
def test_bw_between_neighbours(fn, direction):
    cl, r = fn
    rc, doc, err, _ = run_test(r, "bw", "n2", "n4", "--streams", "4",
                               "--duration", "1", "--warmup", "0.2",
                               "--direction", direction)
    assert rc == 0, (rc, err, doc)
    assert doc["result"] == "ok", doc
    assert doc["a_interface"] == facing_port(cl, "n2", "n4")
    assert doc["b_address"] == cl.data_addr("n4", "n2")
    assert doc["streams"] == 4 and doc["direction"] == direction
    g = rate_gbps(FN_RATE)
    band = (RATE_LO * g, RATE_HI * g)
    ab, ba = doc["gbps_a_to_b_measured"], doc["gbps_b_to_a_measured"]
    if direction in ("a-to-b", "both"):
        assert band[0] <= ab <= band[1], doc
    else:
        assert ab == 0, doc
    if direction in ("b-to-a", "both"):
        assert band[0] <= ba <= band[1], doc
    else:
        assert ba == 0, doc


def test_agent_killed_during_bw_test_and_survey(fn):
    """B's agent dies 1.5 s into a 10 s test: ringctl reports a failed
    test at once. The agent comes back; its return re-checks its two
    edges alone (no full survey); that re-check loses n1 in its first
    round and still completes, n1-n2 with an error and n2-n4 measured."""
    cl, r = fn
    r.wait_all_up(15)
    duration = 10
    argv = [r.path("ringctl"), "-s", r.sock, "-f", "json", "-t", "5",
            "test", "bw", "n1", "n2", "--streams", "4", "--duration",
            str(duration), "--warmup", "0"]
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=r.env())
    try:
        time.sleep(1.5)
        assert p.poll() is None, p.communicate()
        r.agents["n2"].signal(signal.SIGKILL)
        assert r.agents["n2"].wait(10) is not None
        out, errout = p.communicate(timeout=duration + 40)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    took = elapsed(t0)
    assert p.returncode == 1, (p.returncode, out, errout)
    doc = json.loads(out)
    assert doc["result"] == "failed", doc
    # Whichever the coordinator hears first: B's session gone, or A's
    # streams reset by B's kernel.
    assert doc["error"].startswith(("n2: agent session lost during the test",
                                    "n1: ")), doc
    # The test's deadline is 5 s + duration + 10 s, but a peer whose
    # process dies is noticed at once: well before the window would end.
    assert took < duration, took

    # n2 comes back: its two edges are re-checked alone (not the ring),
    # one per round (they share n2); n1 dies in n1-n2's round. Both
    # usually start in one run; CI once saw n1-n2 start alone (n2-n4 due
    # a moment later: each change restarts an edge's wait). Wait for the
    # run with n1-n2 and kill n1 in it; the coordinator runs with
    # "-d survey" so that its log says what was queued, when and why.
    before = r.topology()
    mark = LogMark(r.coord.log)
    r.start_agent("n2")
    r.wait_all_up(20)
    mark.wait(r"re-check started: [^\n]*n1-n2 \(n2 came back\)[^\n]*\n"
              r"(?:[^\n]*\n)*?[^\n]*survey: round 1 of \d+: 1 edge", 60,
              "a re-check run with n1-n2 (n2 came back) in its first round")
    time.sleep(1.0)
    assert r.status_doc()["survey"] == "running"
    r.agents["n1"].signal(signal.SIGKILL)
    assert r.agents["n1"].wait(10) is not None
    try:
        top = r.wait_recheck(["n1-n2", "n2-n4"], before, timeout=90)
    except Exception as e:
        # What was queued, when and why ("-d survey"): the story.
        raise AssertionError("%s\n%s" % (e, mark.new())) from e
    log = mark.new()
    assert "survey started" not in log, log  # no full survey
    assert top["kind"] == "ring"
    assert top["order"] == ["n1", "n2", "n4", "n3"]
    assert top["surveyed"] == before["surveyed"]
    edges = edges_by_name(top)
    old = edges_by_name(before)
    for name in ("n1-n2", "n2-n4"):
        assert edges[name]["recheck_reason"] == "n2 came back", (
            edges[name], log)
    # The edges without n2 were not touched.
    for name in ("n3-n4", "n1-n3"):
        assert "rechecked" not in edges[name], edges[name]
        assert edges[name]["age_s"] >= old[name]["age_s"], edges[name]
    # n1-n2 lost n1: an error from a side, or (n1 died before its turn)
    # not even started; n2-n4 was measured whole.
    assert edges["n1-n2"].get("error"), edges["n1-n2"]
    assert_edge_measured(edges["n2-n4"], None, "(re-checked, n1 dying)")
    doc = r.status_doc()
    assert doc["survey"] == "done" and doc["health"] == "critical"
    assert r.node_state("n1") == "down"


# ------------------------------------------------------------ other shapes

def test_five_node_ring_random_order(ring_env):
    seed = int(os.environ.get("RINGD_SEED") or
               random.SystemRandom().randrange(1 << 30))
    order = ["n1", "n2", "n3", "n4", "n5"]
    random.Random(seed).shuffle(order)
    print("5-node ring: seed %d (RINGD_SEED), physical order %s" %
          (seed, "-".join(order)))
    cl, r = ring_env(order)
    top = r.wait_survey()
    want = canonical_ring(order)
    why = "seed %d, physical order %s" % (seed, order)
    assert top["kind"] == "ring", why
    assert top["order"] == want, why
    assert top["rounds"] == 3, why  # an odd ring needs three rounds
    assert top["anomalies"] == [], why
    edges = edges_by_name(top)
    assert sorted(edges) == sorted(edge_name(a, b)
                                   for a, b in ring_pairs(order)), why
    for e in edges.values():
        assert_edge_measured(e, RATE, why)
    ring = set(frozenset(p) for p in ring_pairs(order))
    diag = [(a, b) for i, a in enumerate(order) for b in order[i + 1:]
            if frozenset((a, b)) not in ring]
    assert_diagonals(top, cl, diag)
    assert_ranks(r, cl, want)


def test_pair_with_two_parallel_cables(ring_env):
    cl, r = ring_env(["n1", "n2"])
    assert len(cl.cables_between("n1", "n2")) == 2
    top = r.wait_survey()
    assert top["kind"] == "pair"
    assert top["order"] == ["n1", "n2"]
    assert top["diagonals"] == []
    par = anomalies(top, "parallel")
    assert len(par) == 1 and len(top["anomalies"]) == 1, top["anomalies"]
    m = re.match(r"^2 cables between n1 and n2 \((.*), (.*)\): counted as "
                 r"one neighbour$", par[0])
    assert m, par[0]
    want = set("n1 %s - n2 %s" % (c.port_of("n1"), c.port_of("n2"))
               for c in cl.cables)
    assert set(m.groups()) == want == {"n1 eth2 - n2 eth1",
                                       "n1 eth1 - n2 eth2"}
    # Both cables measured, one after the other (same two nodes).
    assert top["rounds"] == 2
    assert sorted(e["ports"] for e in top["edges"]) == sorted(
        "n1 %s -> n2 %s" % (c.port_of("n1"), c.port_of("n2"))
        for c in cl.cables)
    for e in top["edges"]:
        assert e["edge"] == "n1-n2"
        assert_edge_measured(e, RATE)
    rc, doc, err = r.json("ranks")
    assert rc == 0, err
    assert doc["kind"] == "pair"
    assert [(x["rank"], x["node"], x["mgmt_address"], x["next_node"],
             x["prev_node"]) for x in doc["ranks"]] == [
        (0, "n1", mgmt(cl, "n1"), "n2", "n2"),
        (1, "n2", mgmt(cl, "n2"), "n1", "n1")]
    for x in doc["ranks"]:
        assert x["next_interface"] in ("eth1", "eth2"), x
        assert x["prev_interface"] in ("eth1", "eth2"), x


def test_switch_shaped_data_plane(ring_env):
    order = ["n1", "n2", "n3", "n4"]
    cl, r = ring_env(order, switch=True)
    top = r.wait_survey()
    assert top["kind"] == "switch"
    assert top["order"] == []
    assert top["diagonals"] == [] and top["anomalies"] == []
    # Every pair, by the circle method: n - 1 rounds for even n.
    assert top["rounds"] == 3
    edges = edges_by_name(top)
    assert sorted(edges) == ["%s-%s" % (a, b) for i, a in enumerate(order)
                             for b in order[i + 1:]]
    for name, e in edges.items():
        a, b = name.split("-")
        assert e["ports"] == "%s eth1 -> %s eth1" % (a, b)
        assert e["method"] == "tcp (switch)"
        assert_edge_measured(e, RATE)
    rc, doc, err = r.json("ranks")
    assert rc == 1 and "data plane is a switch" in err, (rc, err)


def test_cut_cable_gives_a_line(ring_env):
    cl, r = ring_env(FN_ORDER, cuts=[("n4", "n3")])
    assert "LOWER_UP" not in cl.link_flags("n3", facing_port(cl, "n3", "n4"))
    top = r.wait_survey()
    assert top["kind"] == "line"
    assert top["missing_cable"] == "n3-n4"
    # From the lower-named end of the line.
    assert top["order"] == ["n3", "n1", "n2", "n4"]
    assert top["rounds"] == 2
    edges = edges_by_name(top)
    assert sorted(edges) == ["n1-n2", "n1-n3", "n2-n4"]
    for e in edges.values():
        assert_edge_measured(e, RATE)
    assert_diagonals(top, cl, [("n1", "n4"), ("n2", "n3"), ("n3", "n4")])
    assert_ranks(r, cl, ["n3", "n1", "n2", "n4"], kind="line")


def test_one_degraded_edge_is_named(ring_env):
    cl, r = ring_env(FN_ORDER, rate="1gbit", rates={("n2", "n4"): "500mbit"})
    top = r.wait_survey()
    assert top["kind"] == "ring" and top["order"] == ["n1", "n2", "n4", "n3"]
    edges = edges_by_name(top)
    for name, e in edges.items():
        assert_edge_measured(e, "500mbit" if name == "n2-n4" else "1gbit")
    deg = [f for f in findings(top, "edge ") if "degraded edge" in f]
    assert len(deg) == 1, top["findings"]
    assert deg[0].startswith("edge n2-n4 tops out at "), deg
    m = re.search(r", (\d+)% of the other edges' median", deg[0])
    assert m and 40 <= int(m.group(1)) <= 60, deg
    # Not a uniform ceiling: one edge stands out.
    assert findings(top, UNIFORM_PREFIX) == []


def test_uniform_low_ceiling(ring_env):
    """Every edge at 500 Mbit on 10G ports: about 5% of nominal, all
    alike: a uniform ceiling, not a bad cable."""
    cl, r = ring_env(FN_ORDER, rate="500mbit", nominal="10G")
    top = r.wait_survey()
    assert top["kind"] == "ring"
    g = rate_gbps("500mbit")
    for e in edges_by_name(top).values():
        assert_edge_measured(e, "500mbit")
        assert RATE_LO * g * 10 <= e["pct_of_nominal_computed"] <= \
            RATE_HI * g * 10, e
    uni = findings(top, UNIFORM_PREFIX)
    assert len(uni) == 1, top["findings"]
    m = re.match(r"^every edge tops out at (\d+)% of its 10 Gbps nominal "
                 r"\((\d+\.\d) Gbps median, spread (\d+)%\): a uniform "
                 r"ceiling - a link-layer or host limit, not a bad cable; ",
                 uni[0])
    assert m, uni[0]
    assert 4 <= int(m.group(1)) <= 5, uni[0]
    assert RATE_LO * g <= float(m.group(2)) <= RATE_HI * g, uni[0]
    # Same shaped rate everywhere; 1 s windows on a busy box wobble a
    # few percent, and the rule itself allows 20%.
    assert int(m.group(3)) <= 20, uni[0]
    no_edge_trouble(top)


def test_extra_cable_across_a_diagonal(ring_env):
    """A cable between diagonal nodes n1 and n4: both have three direct
    neighbours; not a ring, so no rank order."""
    cl, r = ring_env(FN_ORDER, extra_cables=[("n1", "n4")])
    assert facing_port(cl, "n1", "n4") == "eth3"
    top = r.wait_survey()
    assert top["kind"] == "other"
    assert top["order"] == []
    assert sorted(anomalies(top)) == [
        "n1 has 3 direct neighbours (n2, n3, n4); a ring node has two",
        "n4 has 3 direct neighbours (n1, n2, n3); a ring node has two"]
    assert all(a["kind"] == "degree" for a in top["anomalies"])
    edges = edges_by_name(top)
    assert sorted(edges) == ["n1-n2", "n1-n3", "n1-n4", "n2-n4", "n3-n4"]
    assert edges["n1-n4"]["ports"] == "n1 eth3 -> n4 eth3"
    for e in edges.values():
        assert_edge_measured(e, RATE)
    # Nodes of degree 3: at least three rounds.
    assert top["rounds"] >= 3
    assert_diagonals(top, cl, [("n2", "n3")])
    rc, doc, err = r.json("ranks")
    assert rc == 1 and "not a ring, line or pair" in err, (rc, err)


def test_unexpected_path_between_diagonals(ring_env):
    """n2 forwards between its two cables and n1, n4 route each other's
    subnet through it: a data path where the ring has none."""
    def route_through_n2(cl):
        c12 = cl.cables_between("n1", "n2")[0]
        c24 = cl.cables_between("n2", "n4")[0]
        set_sysctls([(cl.ns("n2"), [("net.ipv4.ip_forward", 1)])])
        cl.exec("n1", ["ip", "route", "add", c24.subnet, "via",
                       c12.addr_of("n2"), "dev", c12.port_of("n1")],
                check=True)
        cl.exec("n4", ["ip", "route", "add", c12.subnet, "via",
                       c24.addr_of("n2"), "dev", c24.port_of("n4")],
                check=True)
    cl, r = ring_env(FN_ORDER, prepare=route_through_n2)
    far = cl.data_addr("n4", "n2")  # n4's end of the n2-n4 cable
    assert cl.ping("n1", far)
    top = r.wait_survey()
    # Adjacency still comes from the cables: a ring, in the same order.
    assert top["kind"] == "ring"
    assert top["order"] == ["n1", "n2", "n4", "n3"]
    assert anomalies(top) == [
        "n1 reaches n4 over the data plane although they are not "
        "neighbours: an unexpected link"]
    assert top["anomalies"][0]["kind"] == "unexpected_path"
    rows = {(d["pair"], d["address"]): d for d in top["diagonals"]}
    hit = rows[("n1-n4", far)]
    assert hit["path"] is True
    assert hit["verdict"].startswith(
        "UNEXPECTED: n1 reaches n4's %s (route gateway via %s)" %
        (far, facing_port(cl, "n1", "n2"))), hit
    others = [d for k, d in rows.items() if k != ("n1-n4", far)]
    assert len(others) == 3 and not any(d["path"] for d in others), others
