"""ringctl's machine formats on a real 3-node ring after a short survey:
every command's JSON parses with a parser that refuses a duplicate key,
every keyvalue key appears once, and a figure the keyvalue text shows as a
number is a JSON number (latency ladders are objects, not "64B:8.6")."""

import json
import re

import pytest

from cluster import wait_for
from ringtest import (SURVEY_TIMEOUT_S, surveyed_ring)

ORDER = ["n1", "n2", "n3"]
NUMBER = re.compile(r"^-?[0-9]+(\.[0-9]+)?$")


@pytest.fixture(scope="module")
def ringd(root, ringd_bin):
    # No automatic survey: the module asks for one, kept short.
    with surveyed_ring(ORDER, ringd_bin, report_chars=3000, heartbeat_ms=500) as r:
        yield r



class DuplicateKey(ValueError):
    pass


def no_duplicates(pairs):
    seen = {}
    for k, v in pairs:
        if k in seen:
            raise DuplicateKey("duplicate key %r" % k)
        seen[k] = v
    return seen


def strict_json(text, what):
    try:
        return json.loads(text, object_pairs_hook=no_duplicates)
    except ValueError as e:
        raise AssertionError("%s: %s in %r" % (what, e, text[:2000]))


def strict_keyvalue(text, what):
    """path -> value; each path once, every line key=value."""
    out = {}
    for line in text.splitlines():
        assert "=" in line, "%s: not key=value: %r" % (what, line)
        k, v = line.split("=", 1)
        assert k not in out, "%s: key %s twice" % (what, k)
        out[k] = v
    return out


# keyvalue names a list's records by a member (ringctl.8, FORMATS): the
# list's key -> that member. Diagonal checks: pair@address.
KV_NAME = {"nodes": "node", "edges": "edge", "interfaces": "name",
           "rdma_devices": "name", "ports": "port", "gids": "index",
           "lat_p50_us_measured": "size", "latency": "size",
           "rdma_write_lat_p50_us_measured": "size", "pcie_links": "id",
           "phys_ports": "id", "cables": "cable", "ring_load": "cable",
           "rings": "id"}


def kv_component(key, elem, i, used):
    """The keyvalue path component of a list's element i, as ringctl
    writes it: the name with '_' for what a path cannot hold, '#i' for
    none or one the list already had, the index for unnamed lists."""
    if not isinstance(elem, dict):
        return str(i)
    if key == "diagonals":
        name = "%s@%s" % (elem["pair"], elem["address"])
    elif key in KV_NAME:
        name = str(elem[KV_NAME[key]])
    else:
        return str(i)
    comp = re.sub(r"[^A-Za-z0-9_+:@-]", "_", name)
    if not comp.strip("_") or comp in used or len(comp) > 128:
        return "#%d" % i
    used.add(comp)
    return comp


def leaves(doc, path="", key=""):
    """The keyvalue paths of a JSON document's scalars."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from leaves(v, "%s.%s" % (path, k) if path else k, k)
    elif isinstance(doc, list):
        used = set()
        for i, v in enumerate(doc):
            c = kv_component(key, v, i, used)
            yield from leaves(v, "%s.%s" % (path, c) if path else c)
    else:
        yield path, doc


def outputs(r, *args, timeout_s=5):
    """The command in all three formats: (rc, JSON doc, keyvalue dict)."""
    what = " ".join(args)
    pj = r.ringctl(*args, fmt="json", timeout_s=timeout_s)
    assert pj.returncode == 0, "%s: rc %d %s" % (what, pj.returncode,
                                                 pj.stderr)
    doc = strict_json(pj.stdout, "-f json " + what)
    pk = r.ringctl(*args, fmt="keyvalue", timeout_s=timeout_s)
    assert pk.returncode == 0, "%s: rc %d %s" % (what, pk.returncode,
                                                 pk.stderr)
    kv = strict_keyvalue(pk.stdout, "-f keyvalue " + what)
    pp = r.ringctl(*args, fmt="plain", timeout_s=timeout_s)
    assert pp.returncode == 0 and pp.stdout, (what, pp.returncode,
                                              pp.stderr)
    # Same shape in both machine formats, and a number in one is a
    # number in the other (the two calls are moments apart: compare the
    # paths both have).
    jl = dict(leaves(doc))
    common = set(jl) & set(kv)
    assert len(common) >= 0.9 * len(kv), (what, sorted(set(kv) - set(jl)))
    for path in sorted(common):
        v = jl[path]
        if NUMBER.match(kv[path]):
            assert isinstance(v, (int, float)) and not isinstance(v, bool), (
                "%s: %s is %r in JSON, %s in keyvalue" % (what, path, v,
                                                          kv[path]))
        if isinstance(v, str):
            assert not NUMBER.match(v), "%s: %s=%r" % (what, path, v)
    return doc, kv


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def test_strict_parser_refuses_duplicates():
    """The check itself can fail."""
    with pytest.raises(AssertionError, match="duplicate key 'a'"):
        strict_json('{"a": 1, "b": {"a": 2}, "a": [3]}', "sample")
    with pytest.raises(AssertionError, match="key a twice"):
        strict_keyvalue("a=1\nb.a=2\na=3\n", "sample")
    assert strict_json('[{"a": 1}, {"a": 2}]', "sample") == [{"a": 1},
                                                             {"a": 2}]


def test_status(ringd):
    doc, kv = outputs(ringd, "status")
    top = doc["topology"]
    assert top["kind"] == "ring", top
    assert len(top["edges"]) == 3, top["edges"]
    for e in top["edges"]:
        assert e["a"] + "-" + e["b"] == e["edge"], e
        assert e["ports"] == "%s %s -> %s %s" % (
            e["a"], e["a_interface"], e["b"], e["b_interface"]), e
        assert e["streams"] and all(is_number(x) for x in e["streams"]), e
        for key in ("gbps_a_to_b_measured", "gbps_b_to_a_measured"):
            assert len(e[key]) == len(e["streams"]), e
            assert all(is_number(x) and x > 0 for x in e[key]), e
        assert e["pct_of_nominal_computed"] is None or \
            is_number(e["pct_of_nominal_computed"]), e
        assert is_number(e["age_s"]), e
        lat = e["lat_p50_us_measured"]
        assert lat, e
        for x in lat:
            assert sorted(x) == ["p50_us", "size"], x
            assert isinstance(x["size"], int) and x["size"] > 0, x
            assert is_number(x["p50_us"]) and x["p50_us"] > 0, x
        # keyvalue spells the ladder out the same way.
        assert kv["topology.edges.%s.lat_p50_us_measured.%d.p50_us" % (
            e["edge"], lat[0]["size"])] == "%.1f" % lat[0]["p50_us"]
    assert {n["node"] for n in doc["nodes"]} == set(ORDER)
    # keyvalue keys by name, not by index.
    for n in ORDER:
        assert kv["nodes.%s.state" % n] == "up", kv
    assert not any(k.startswith("nodes.0.") for k in kv), kv
    for n in doc["nodes"]:
        assert n["rdma_devices"] == 0 and is_number(n["mem_total_gib"]), n


@pytest.mark.parametrize("node", ORDER)
def test_inventory(ringd, node):
    doc, kv = outputs(ringd, "inventory", node)
    assert doc["node"] == node
    # One list of devices, no count beside it under the same key.
    assert doc["rdma_devices"] == [], doc
    # Two available-memory figures, each named by where it comes from.
    assert is_number(doc["mem_available_kib_heartbeat"]), doc
    assert "mem_available_kib" not in doc, doc
    mem = doc["memory"]
    assert 0 < mem["available_kib"] <= mem["total_kib"], mem
    assert 0 < doc["mem_available_kib_heartbeat"] <= mem["total_kib"], doc
    assert NUMBER.match(kv["mem_available_kib_heartbeat"]), kv
    assert kv["memory.available_kib"] == str(mem["available_kib"]), kv


def test_ranks(ringd):
    doc, _ = outputs(ringd, "ranks")
    assert [x["rank"] for x in doc["ranks"]] == [0, 1, 2], doc
    assert sorted(x["node"] for x in doc["ranks"]) == ORDER


@pytest.mark.parametrize("kind", ["bw", "lat"])
def test_tcp_tests(ringd, kind):
    extra = (["--duration", "0.2", "--warmup", "0"] if kind == "bw" else
             ["--iterations", "20"])
    doc, _ = outputs(ringd, "test", kind, "n1", "n2", *extra,
                     timeout_s=20)
    assert doc["result"] == "ok", doc
    side = doc["a_side"]
    if kind == "bw":
        assert is_number(doc["gbps_a_to_b_measured"]), doc
        assert doc["gbps_a_to_b_measured"] > 0, doc
        assert all(is_number(s["gbps"]) for s in side["streams"]), side
    else:
        assert side["latency"], side
        for x in side["latency"]:
            assert isinstance(x["size"], int) and is_number(x["p50_us"]), x


@pytest.mark.parametrize("args", [
    ("inventory", "nosuch"),
    ("test", "bw", "n1", "nosuch", "--duration", "0.2", "--warmup", "0"),
    ("test", "lat", "n1", "n1"),
    ("test", "bw", "n1", "n2", "--streams", "0"),
])
def test_errors_print_no_partial_document(ringd, args):
    """A refused request prints nothing on stdout that a script would try
    to parse, whatever the format; the reason goes to stderr."""
    for fmt in ("json", "keyvalue"):
        p = ringd.ringctl(*args, fmt=fmt)
        assert p.returncode not in (0, 1), (fmt, args, p.returncode,
                                            p.stdout)
        assert p.stdout == "", (fmt, args, p.stdout)
        # json: one error object (ringctl.8 ERRORS); else "ringctl: ...".
        if fmt == "json":
            e = json.loads(p.stderr)["error"]
            assert e["message"] and e["exit_status"] == p.returncode, e
        else:
            assert p.stderr.startswith("ringctl: "), (fmt, args, p.stderr)


def survey_key(top):
    """Identifies one completed survey in a status document's topology."""
    return (top.get("surveyed"), top.get("survey_wall_s"),
            top.get("tests_sum_s_computed"))


def idle_status(r):
    """The status document while nothing runs (a survey done, no survey
    or re-check running), else None."""
    p = r.ringctl("status", fmt="json")
    if p.returncode not in (0, 1):
        return None
    doc = strict_json(p.stdout, "-f json status")
    if doc.get("survey") != "done" or not doc.get("topology"):
        return None
    return doc


def test_survey_wait_json(ringd):
    """`survey --wait` ends with status: in JSON, one document, read once a
    survey newer than the last one is done. What runs at the moment that
    status is read is the moment's (a re-check a late heartbeat set off
    under load, say), so the coordinator's settling is waited for with a
    deadline, before and after, not assumed."""
    before = survey_key(wait_for(lambda: idle_status(ringd),
                                 SURVEY_TIMEOUT_S,
                                 "no survey or re-check running",
                                 interval=0.25)["topology"])
    p = ringd.ringctl("survey", "--wait", fmt="json",
                      timeout_s=SURVEY_TIMEOUT_S)
    assert p.returncode == 0, (p.returncode, p.stderr)
    doc = strict_json(p.stdout, "-f json survey --wait")
    assert doc["survey"] in ("done", "running"), doc
    assert survey_key(doc["topology"]) != before, (doc["topology"], before)

    def settled():
        d = idle_status(ringd)
        return d if d and survey_key(d["topology"]) != before else None
    wait_for(settled, SURVEY_TIMEOUT_S, "the survey done, nothing running",
             interval=0.25)
