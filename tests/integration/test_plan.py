"""ringctl plan on a real 3-node ring: each node's MemAvailable (measured
by its agent; here every node reports this host's) against a model's
size. The figures move with the host, so the tests assert on the
structure and on the arithmetic between the figures of one answer, not on
a fixed figure: a small model fits (exit 0), a huge one does not (exit 1,
more than 3 nodes needed), bad sizes are refused (exit 2, one line)."""

import calendar
import json
import math
import time

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY, SHORT_SURVEY,
                      neighbours_heard, ringd_up)
from test_output import outputs

ORDER = ["n1", "n2", "n3"]
GB = 10 ** 9
GIB = 2 ** 30


@pytest.fixture(scope="module")
def ringd(root, ringd_bin):
    # No automatic survey: the first tests plan on the connected nodes,
    # a later one surveys and plans on the published ring.
    with ringd_up(cl.Cluster(ORDER, new_prefix()), ringd_bin,
                  heartbeat_ms=500, coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY,
                  agent_extra=FAST_AGENT) as r:
        r.setup_pki()
        r.start_all(timeout=20)
        # Up is not yet measured: a node's memory figure comes with its
        # inventory and heartbeats, which on a loaded host can trail the
        # session by a moment.
        cl.wait_for(lambda: plan(r, "--model-bytes", "1GB")[1]
                    ["nodes_with_figure"] == len(ORDER), 30,
                    "every node's memory figure")
        yield r


def plan(r, *args, fmt="json"):
    p = r.ringctl("plan", *args, fmt=fmt)
    doc = None
    if fmt == "json" and p.returncode in (0, 1):
        doc = json.loads(p.stdout)
    return p, doc


def host_mem_kib():
    with open("/proc/meminfo") as f:
        return {line.split(":")[0]: int(line.split()[1]) for line in f}


def near(figure, exact):
    """JSON carries the figure unrounded; plain and keyvalue round it to
    two decimals."""
    return abs(figure - exact) < 1e-6 * max(1.0, abs(exact))


def unix_s(stamp):
    return calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ"))


def check_arithmetic(doc, reserve=0):
    """Every computed figure follows from the measured ones and the
    model's size, in bytes, GB (10^9) and GiB (2^30)."""
    model = doc["model_bytes"]
    assert near(doc["model_gb"], model / GB), doc
    assert near(doc["model_gib"], model / GIB), doc
    assert doc["reserve_per_node_bytes"] == reserve, doc
    nodes = doc["nodes"]
    assert doc["nodes_planned"] == len(nodes) == 3, doc
    assert doc["nodes_with_figure"] == 3, doc
    total_kib = host_mem_kib()["MemTotal"]
    usable = []
    for n in nodes:
        avail = n["available_bytes_measured"]
        assert 0 < avail <= total_kib * 1024, n
        assert avail % 1024 == 0, n  # the agent reports KiB
        assert near(n["available_gb_measured"], avail / GB), n
        assert near(n["available_gib_measured"], avail / GIB), n
        # Measured at the node's latest heartbeat (every 500 ms here).
        assert 0 <= n["age_s"] <= 5, n
        assert abs(unix_s(n["measured_at"]) - time.time()) < 30, n
        assert n["usable_bytes_computed"] == max(avail - reserve, 0), n
        assert near(n["usable_gib_computed"],
                    n["usable_bytes_computed"] / GIB), n
        usable.append(n["usable_bytes_computed"])
    smallest = min(usable)
    assert doc["smallest_usable_bytes_computed"] == smallest, doc
    assert nodes[usable.index(smallest)]["node"] == doc["smallest_node"]
    assert doc["total_usable_bytes_computed"] == sum(usable), doc
    assert doc["capacity_bytes_computed"] == 3 * smallest, doc
    assert near(doc["capacity_gib_computed"], 3 * smallest / GIB)
    assert doc["nodes_needed_computed"] == math.ceil(model / smallest), doc
    assert doc["holds"] == (model <= 3 * smallest), doc
    if doc["holds"]:
        assert doc["headroom_bytes_computed"] == 3 * smallest - model, doc
        assert "short_bytes_computed" not in doc, doc
    else:
        assert doc["short_bytes_computed"] == model - 3 * smallest, doc
        assert near(doc["short_gb_computed"],
                    (model - 3 * smallest) / GB), doc
        assert "headroom_bytes_computed" not in doc, doc
    assert doc["units"] == "GB = 10^9 bytes, GiB = 2^30 bytes", doc
    assert "MemAvailable" in doc["measured"], doc
    assert "ceil(model / smallest usable)" in doc["computed"], doc


def test_small_model_fits(ringd):
    p, doc = plan(ringd, "--model-bytes", "1GB")
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    assert doc["holds"] is True, doc
    assert doc["model_bytes"] == GB, doc
    assert doc["model_source"] == "given: --model-bytes 1GB", doc
    assert doc["reserve_source"] == "default: none (0 bytes)", doc
    # No survey yet: the connected nodes.
    assert doc["nodes_from"] == ("the connected nodes (no published rank "
                                 "order)"), doc
    assert [n["node"] for n in doc["nodes"]] == ORDER, doc
    assert doc["nodes_needed_computed"] == 1, doc
    assert doc["verdict"].startswith("fits: 1.00 GB (0.93 GiB) needs 1 "
                                     "node of "), doc
    check_arithmetic(doc)


def test_huge_model_does_not_fit(ringd):
    p, doc = plan(ringd, "--model-bytes", "800TB")
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert doc["holds"] is False, doc
    assert doc["nodes_needed_computed"] > 3, doc
    assert doc["verdict"].startswith("does not fit: 800000.00 GB "
                                     "(745058.06 GiB) needs "), doc
    assert " GB (" in doc["verdict"] and " GiB) short" in doc["verdict"]
    check_arithmetic(doc)


def test_params_and_reserve(ringd):
    p, doc = plan(ringd, "--params", "744B", "--bytes-per-param", "2.03",
                  "--reserve", "1GiB")
    assert p.returncode in (0, 1), (p.returncode, p.stderr)
    # 744e9 x 2.03 bytes = 1510.32 GB (computed, exactly).
    assert doc["model_bytes"] == 1510320000000, doc
    assert doc["params"] == 744 * GB, doc
    assert doc["bytes_per_param"] == 2.03, doc
    assert doc["bytes_per_param_source"] == "given", doc
    assert doc["model_source"].startswith("computed: 744000000000 "
                                          "parameters x 2.03"), doc
    assert doc["reserve_source"] == "given: --reserve 1GiB", doc
    check_arithmetic(doc, reserve=GIB)

    # The default: bf16, 2 bytes, said so.
    p, doc = plan(ringd, "--params", "1000")
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert doc["model_bytes"] == 2000, doc
    assert doc["bytes_per_param_source"].startswith("default: 2 (bf16"), doc

    # A subset of the nodes, in the order given.
    p, doc = plan(ringd, "--model-bytes", "1GiB", "--nodes", "n3,n1")
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert doc["nodes_from"] == "--nodes", doc
    assert [n["node"] for n in doc["nodes"]] == ["n3", "n1"], doc


def test_formats(ringd):
    # No key twice in JSON or keyvalue; a number in one is one in both.
    doc, kv = outputs(ringd, "plan", "--model-bytes", "1GB", "--reserve",
                      "1MiB")
    assert doc["holds"] is True and kv["holds"] == "yes", (doc, kv)
    for n in ORDER:
        # The two calls are moments apart: the figures may move, the
        # reservation not.
        usable = int(kv["nodes.%s.usable_bytes_computed" % n])
        avail = int(kv["nodes.%s.available_bytes_measured" % n])
        assert usable == avail - 2 ** 20, kv
    p, _ = plan(ringd, "--model-bytes", "800GB", fmt=None)
    assert p.returncode in (0, 1), (p.returncode, p.stderr)
    lines = p.stdout.splitlines()
    assert lines[0].startswith("verdict: "), p.stdout
    assert "800.00 GB (745.06 GiB)" in lines[0], p.stdout
    assert any(x.split()[:2] == ["NODE", "STATE"] for x in lines), p.stdout
    assert "units: GB = 10^9 bytes, GiB = 2^30 bytes" in p.stdout
    p, _ = plan(ringd, "--model-bytes", "800GB", fmt="keyvalue")
    assert p.returncode in (0, 1), (p.returncode, p.stderr)
    kv = dict(x.split("=", 1) for x in p.stdout.splitlines())
    assert kv["model_bytes"] == "800000000000", kv
    for n in ORDER:
        assert int(kv["nodes.%s.available_bytes_measured" % n]) > 0, kv
        assert kv["nodes.%s.measured_at" % n].endswith("Z"), kv


@pytest.mark.parametrize("args,why", [
    (["--model-bytes", "800Gb"], "--model-bytes: '800Gb': a lower-case b "
     "is bits; sizes are bytes (GB: 10^9 bytes, GiB: 2^30 bytes)"),
    (["--model-bytes", "1.5"], "--model-bytes: '1.5' is not a whole number "
     "of bytes"),
    (["--model-bytes", "lots"], "--model-bytes: 'lots' is not a size"),
    (["--model-bytes", "2EiB"], "--model-bytes: '2EiB' is not a size"),
    (["--model-bytes", "1025PiB"], "is out of range (0 bytes..1024PiB)"),
    (["--params", "1.5"], "--params: '1.5' is not a whole number of "
     "parameters"),
    (["--params", "7B", "--bytes-per-param", "0"],
     "--bytes-per-param: '0' is not a number of bytes per parameter"),
    (["--model-bytes", "1G", "--reserve", "-1G"], "--reserve: '-1G' is not "
     "a size"),
    ([], "plan needs the model's size"),
    (["--model-bytes", "1G", "--params", "1B"], "not both"),
    (["--model-bytes", "1G", "--nodes", "n1,n9"],
     "plan: --nodes: the coordinator lists no node 'n9'"),
])
def test_bad_input(ringd, args, why):
    p = ringd.ringctl("plan", *args)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == "", p.stdout
    assert why in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr


def test_unreachable(ringd):
    p = ringd.ringctl("plan", "--model-bytes", "1G",
                      sock=ringd.sock + ".none")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert p.stdout == "", p.stdout


def test_ring_and_a_node_down(ringd):
    """After a survey the plan is over the published ring; with a ring
    node down, its figure is not current: exit 1 even for a model that
    fits on the others."""
    cl.wait_for(lambda: neighbours_heard(ringd, ORDER), 60,
                "every node to hear its two neighbours")
    p = ringd.ringctl("survey", "--wait", fmt=None, timeout_s=60)
    assert p.returncode == 0, (p.returncode, p.stderr)
    p, doc = plan(ringd, "--model-bytes", "1GB")
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert doc["nodes_from"].startswith("the published rank order (survey "
                                        "of 20"), doc
    assert sorted(n["node"] for n in doc["nodes"]) == ORDER, doc
    check_arithmetic(doc)

    ringd.agents["n3"].stop()
    ringd.wait_state("n3", "down", 15)
    p, doc = plan(ringd, "--model-bytes", "1GB")
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    assert doc["holds"] is False, doc
    assert doc["nodes_planned"] == 3 and doc["nodes_with_figure"] == 2, doc
    n3 = [n for n in doc["nodes"] if n["node"] == "n3"][0]
    assert n3["available_bytes_measured"] is None, n3
    assert n3["note"] == "not up: its last MemAvailable is not current", n3
    assert doc["verdict"].startswith("only 2 of the 3 nodes have a current "
                                     "figure; counting those, fits"), doc
