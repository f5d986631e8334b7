"""RDMA tests and the RDMA survey on a cluster without RDMA devices (the
network-namespace emulation has none): every refusal must say which node
and which port, ringctl's usage errors exit 2, and `survey_method rdma`
reports each edge it cannot measure with the reason. The RDMA path itself
runs in the soft-RoCE VM harness (tests/rdma)."""

import pytest

from cluster import Cluster
from conftest import new_prefix
from ringtest import edges_by_name, facing_port, surveyed


@pytest.fixture(scope="module")
def pair(root, ringd_bin):
    """A 3-node ring (one cable per pair of nodes) surveyed over RDMA."""
    cl = Cluster(["n1", "n2", "n3"], new_prefix())
    with surveyed(cl, ringd_bin, coord_extra=["survey_method rdma"]) as r:
        yield cl, r


def test_rdma_survey_reports_why_not(pair):
    cl, r = pair
    top = r.topology()
    assert top["kind"] == "ring", top
    edges = edges_by_name(top)
    assert sorted(edges) == ["n1-n2", "n1-n3", "n2-n3"], top
    for name, e in edges.items():
        assert e["method"] == "rdma", e
        assert e["error"].startswith("not measured (survey_method rdma): "
                                     "%s:" % name.split("-")[0]), e
        assert "has no active RDMA port" in e["error"], e
        # No figure was measured: the ladder is one empty step.
        assert e["gbps_a_to_b_measured"] == [-1], e
        assert "rdma_write_gbps_a_to_b_measured" in e, e
        assert e["rdma_write_gbps_a_to_b_measured"] is None, e
        assert e["rdma_error"] in e["error"], e
    assert any(f["finding"].startswith("edge n1-n2: not measured")
               for f in top["findings"]), top["findings"]


def test_rdma_bw_refused_without_rdma_ports(pair):
    cl, r = pair
    p = r.ringctl("test", "rdma-bw", "n1", "n2", "--op", "write", fmt=None)
    assert p.returncode == 2, (p.stdout, p.stderr)
    want = ("n1: no active RDMA port on %s, the interface facing n2 (no "
            "RDMA device" % facing_port(cl, "n1", "n2"))
    assert want in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1, p.stderr
    assert p.stdout == ""


def test_rdma_lat_refused_without_rdma_ports(pair):
    cl, r = pair
    p = r.ringctl("test", "rdma-lat", "n2", "n1", "--op", "read",
                  "--sizes", "2,4K", fmt=None)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "n2: no active RDMA port on %s, the interface facing n1" % \
        facing_port(cl, "n2", "n1") in p.stderr, p.stderr


@pytest.mark.parametrize("args,msg", [
    (["rdma-bw", "n1", "n2"], "rdma-bw needs --op write or --op read"),
    (["rdma-bw", "n1", "n2", "--op", "send"],
     "--op: 'send' is not write or read"),
    (["rdma-bw", "n1", "n2", "--op", "write", "--qps", "99"],
     "--qps: '99' is not 1..64"),
    (["rdma-bw", "n1", "n2", "--op", "write", "--size", "3G"],
     "--size: '3G' is out of range (1 byte..64MiB)"),
    (["rdma-lat", "n1", "n2", "--op", "write", "--duration", "1"],
     "unknown rdma-lat option '--duration'"),
    (["rdma-bw", "n1", "n2", "--op", "write", "--gid-a"],
     "option '--gid-a' needs a value"),
])
def test_rdma_usage_errors(pair, args, msg):
    cl, r = pair
    p = r.ringctl("test", *args, fmt=None)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.startswith("ringctl: " + msg), p.stderr
    assert "usage: ringctl" in p.stderr


def test_tcp_report_names_its_method(pair):
    cl, r = pair
    rc, doc, err = r.json("test", "lat", "n1", "n2", "--iterations", "20",
                          timeout_s=60)
    assert rc == 0, (rc, err, doc)
    assert doc["method"] == "tcp" and doc["test"] == "tcp latency", doc
