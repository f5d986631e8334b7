"""Findings and diagonal verdicts are data (issue 23), on a real survey:
the demo's ring (n1-n2-n4-n3, an unaddressed eth3 on every node, every
cable shaped to 1 Gbit against a 2 Gbit nominal). The uniform ceiling is
about the whole ring with its figures as fields; each unaddressed eth3 is
its node's; a diagonal's outcome and reason come apart from its verdict;
and `explain` lists for a node the findings whose fields name it, not
another node's."""

import pytest

from cluster import Cluster
from conftest import new_prefix
from ringtest import shape_ring, surveyed

ORDER = ["n1", "n2", "n4", "n3"]


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    cl = Cluster(ORDER, new_prefix(), extra_unaddressed_ports=1)
    with surveyed(cl, ringd_bin, prepare=lambda c: shape_ring(c, "1gbit"),
                  quiet=True, grace="600s", nominal="2G") as r:
        yield cl, r


def rows(table):
    """A writer table in JSON: a list, or an object of named rows."""
    if isinstance(table, dict):
        return list(table.values())
    return list(table or [])


def test_findings_carry_subject_and_figures(ring):
    cl, r = ring
    rc, doc, err = r.json("status", "-v")
    assert doc is not None, err
    findings = rows(doc["topology"]["findings"])
    uniform = [f for f in findings if f["code"] == "uniform_ceiling"]
    assert len(uniform) == 1, findings
    assert uniform[0]["ring"] is True, uniform
    assert 0 < uniform[0]["gbps"] < 2.0, uniform
    assert uniform[0]["reference_gbps"] == 2.0, uniform
    unaddressed = [f for f in findings if f["code"] == "unaddressed_port"]
    assert sorted(f["node"] for f in unaddressed) == sorted(ORDER)
    assert {f["interface"] for f in unaddressed} == {"eth3"}


def test_diagonal_outcome_apart(ring):
    cl, r = ring
    rc, doc, err = r.json("status", "-v")
    assert doc is not None, err
    diags = rows(doc["topology"]["diagonals"])
    assert diags, doc["topology"]
    for d in diags:
        assert not d["path"], d
        assert d["outcome"] == "no data-plane path, as expected", d
        assert d["reason"], d
        # The sentence says both; nothing reads it to find either.
        assert d["verdict"] == "%s (%s)" % (d["outcome"], d["reason"]), d


def test_explain_node_lists_its_findings(ring):
    cl, r = ring
    rc, doc, err = r.json("explain", "n1", timeout_s=30)
    assert doc is not None, err
    listed = rows(doc.get("findings"))
    codes = [f["code"] for f in listed]
    # The whole ring's ceiling and n1's own eth3; not n2's, n3's, n4's.
    assert "uniform_ceiling" in codes, listed
    assert codes.count("unaddressed_port") == 1, listed
