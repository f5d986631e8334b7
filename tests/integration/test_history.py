"""ringctl history on a real 3-node ring after two short surveys: the
store's samples of both surveys come back for an edge named either way,
match what status shows for the last survey, --since leaves the older
ones out, an unknown edge is refused with exit status 2, and plain text
draws a sparkline within 100 columns; a user of the socket's group who
is not root may ask."""

import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY, SHORT_SURVEY,
                      neighbours_heard, ringd_up)

ORDER = ["n1", "n2", "n3"]
BLOCKS = set("▁▂▃▄▅▆▇█")


@pytest.fixture(scope="module")
def ringd(root, ringd_bin):
    # The socket in a directory a user of its group can reach.
    ctl_dir = tempfile.mkdtemp(prefix="rgt-hist-")
    os.chmod(ctl_dir, 0o755)
    try:
        yield from surveyed_twice(ringd_bin, ctl_dir)
    finally:
        shutil.rmtree(ctl_dir, ignore_errors=True)


def surveyed_twice(ringd_bin, ctl_dir):
    # No automatic survey: the module asks for two, kept short.
    with ringd_up(cl.Cluster(ORDER, new_prefix()), ringd_bin,
                  report_chars=3000, heartbeat_ms=500,
                  coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY,
                  agent_extra=FAST_AGENT) as r:
        r.sock = os.path.join(ctl_dir, "coord.sock")
        r.setup_pki()
        r.start_all(timeout=20)
        cl.wait_for(lambda: neighbours_heard(r, ORDER), 60,
                    "every node to hear its two neighbours")
        for i in range(2):
            # Done either way: 1 is the health after it (status' exit),
            # which an edge_degraded from unshaped, loaded cables may
            # make degraded; 2 is a survey that did not complete.
            p = r.ringctl("survey", "--wait", fmt=None, timeout_s=60)
            assert p.returncode in (0, 1), \
                "survey %d --wait: rc %d %s\n%s" % (
                    i + 1, p.returncode, p.stderr, r.log_tails())
        yield r


def ringctl_json(r, *args):
    p = r.ringctl(*args)
    assert p.returncode == 0, (args, p.returncode, p.stderr)
    return json.loads(p.stdout)


def history(r, *args):
    return ringctl_json(r, "history", *args)


def series(doc, kind, direction):
    """{param: [(ts_ms, value), ...]} of one kind and direction."""
    out = {}
    for s in doc["samples"]:
        if s["kind"] == kind and s["direction"] == direction:
            out.setdefault(s["param"], []).append((s["ts_ms"], s["value"]))
    return out


def edge_of(r, a, b):
    # status exits by the health (1: e.g. edge_degraded from noise).
    p = r.ringctl("status")
    assert p.returncode in (0, 1), (p.returncode, p.stderr)
    doc = json.loads(p.stdout)
    for e in doc["topology"]["edges"]:
        if {e["a"], e["b"]} == {a, b}:
            return e
    raise AssertionError("no edge %s-%s in %r" % (a, b, doc["topology"]))


def test_both_surveys_either_name(ringd):
    e = edge_of(ringd, "n1", "n2")
    doc = history(ringd, "n1-n2")
    assert doc["edge"] == e["edge"]
    assert doc["truncated"] is False
    assert doc["n_samples"] == len(doc["samples"]) > 0
    bw = series(doc, "tcp_bw", "a_to_b")
    assert sorted(bw) == sorted(e["streams"]), (bw, e["streams"])
    for param, pts in bw.items():
        # One sample per survey, oldest first.
        assert len(pts) == 2 and pts[0][0] < pts[1][0], (param, pts)
    assert doc["n_surveys"] == 2
    # The newest samples are the last survey's figures, as status has them.
    for param, gbps in zip(e["streams"], e["gbps_a_to_b_measured"]):
        assert bw[param][-1][1] == pytest.approx(gbps, abs=0.01), \
            (param, bw[param], gbps)
    back = series(doc, "tcp_bw", "b_to_a")
    for param, gbps in zip(e["streams"], e["gbps_b_to_a_measured"]):
        assert back[param][-1][1] == pytest.approx(gbps, abs=0.01)
    assert series(doc, "tcp_lat", ""), doc["series"]
    for s in doc["series"]:
        assert s["min"] <= s["median"] <= s["max"], s
    # The other order names the same edge, with the same samples.
    rev = history(ringd, "n2-n1")
    assert rev["edge"] == doc["edge"]
    assert rev["samples"] == doc["samples"]
    # keyvalue: one key per line, each once.
    p = ringd.ringctl("history", "n2-n1", fmt="keyvalue")
    assert p.returncode == 0, p.stderr
    keys = [line.split("=", 1)[0] for line in p.stdout.splitlines()]
    assert keys and len(keys) == len(set(keys)), p.stdout[:2000]
    assert "edge" in keys


def test_unknown_edge_and_bad_usage(ringd):
    p = ringd.ringctl("history", "n9-n1")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert "no edge 'n9-n1' in the topology or the history" in p.stderr
    assert p.stdout == ""
    p = ringd.ringctl("history", "n1")
    assert p.returncode == 2
    assert "needs an edge as A-B" in p.stderr, p.stderr
    for args, why in ((["history"], "needs an EDGE"),
                      (["history", "n1-n2", "--since", "5x"],
                       "--since: '5x' is not a duration"),
                      (["history", "n1-n2", "--since=0"],
                       "--since: '0' is not a duration"),
                      (["history", "n1-n2", "n2-n3"], "not 'n2-n3'")):
        p = ringd.ringctl(*args)
        assert p.returncode == 2, (args, p.returncode, p.stderr)
        assert why in p.stderr, (args, p.stderr)


def test_since(ringd):
    whole = history(ringd, "n1-n2", "--since", "1h")
    last = max(s["ts_ms"] for s in whole["samples"])
    assert whole["samples"] == history(ringd, "n1-n2")["samples"]
    # Once the last survey's measurement is over a second old, --since 1s
    # has nothing; the edge is still known, so that is no error.
    cl.wait_for(lambda: time.time() * 1000 > last + 1500, 10,
                "the last sample to be 1.5 s old")
    doc = history(ringd, "n1-n2", "--since=1s")
    assert doc["samples"] == [] and doc["n_samples"] == 0
    assert doc["series"] == []
    assert "since" in doc
    # Since the first survey's figures: only the second survey's.
    first = min(s["ts_ms"] for s in whole["samples"])
    ago = int((time.time() * 1000 - (first + last) / 2) / 1000)
    doc = history(ringd, "n1-n2", "--since", "%ds" % max(ago, 1))
    assert doc["samples"], doc
    assert {s["ts_ms"] for s in doc["samples"]} == {last}


def test_plain_sparkline(ringd):
    p = ringd.ringctl("history", "n1-n2", fmt="plain")
    assert p.returncode == 0, p.stderr
    assert "edge: " in p.stdout
    lines = p.stdout.splitlines()
    rows = [x for x in lines if re.match(r"\s+tcp_bw a_to_b \d+ stream", x)]
    assert rows, p.stdout
    for row in rows:
        # Two surveys: two points of the sparkline.
        spark = [ch for ch in row if ch in BLOCKS]
        assert len(spark) == 2, row
    assert all(len(x) <= 100 for x in lines), p.stdout
    # -f after the command, as every command takes it.
    q = ringd.run(["ringctl", "-s", ringd.sock, "history", "n2-n1",
                   "--since", "7d", "-f", "plain"], timeout=20)
    assert q.returncode == 0, q.stderr
    assert any(ch in BLOCKS for ch in q.stdout)


def test_open_to_the_control_group(ringd):
    """history only reads: a user of the socket's group (root here, as
    the harness configures control_group) who is not root gets it; a
    survey stays root's."""
    if not shutil.which("setpriv"):
        pytest.skip("needs setpriv")
    base = ["setpriv", "--reuid=65534", "--regid=0", "--clear-groups",
            ringd.path("ringctl"), "-s", ringd.sock]
    p = subprocess.run(base + ["-f", "json", "history", "n2-n1"],
                       capture_output=True, text=True, timeout=30,
                       env=ringd.env())
    assert p.returncode == 0, (p.returncode, p.stderr)
    assert json.loads(p.stdout)["samples"]
    p = subprocess.run(base + ["survey"], capture_output=True, text=True,
                       timeout=30, env=ringd.env())
    assert p.returncode == 2 and "needs root" in p.stderr, p.stderr


def test_pages_of_a_long_history(ringd):
    """An edge with many rows (put in the file beside the running
    coordinator, as years of surveys would): each reply is one page of
    the newest, a cursor gives the next older one, paging through sees
    every row once, and 8 clients at once each get their page quickly
    (the loop walks a page, not the table)."""
    import sqlite3
    rows = 20000
    db = os.path.join(ringd.state_dir, "ringd.db")
    con = sqlite3.connect(db, timeout=10)
    try:
        with con:
            con.executemany(
                "INSERT INTO history(ts_ms, edge, kind, direction, param, "
                "value) VALUES (?, 'n1-n3', 'tcp_bw', 'a_to_b', 1, ?)",
                [(1000000 + i // 2, float(i)) for i in range(rows)])
    finally:
        con.close()
    first = history(ringd, "n1-n3")
    assert first["truncated"] is True
    assert first["n_samples"] == 2000
    seen, page, older = first["n_samples"], first, first["older"]
    pages = 1
    while page["truncated"]:
        page = history(ringd, "n1-n3", "--before", page["older"])
        seen += page["n_samples"]
        pages += 1
        assert pages < 20
    # The surveys' own rows of n1-n3 (any name order) come first.
    assert seen >= rows, seen
    assert pages == -(-seen // 2000)
    # Plain text says how to ask for older rows.
    p = ringd.ringctl("history", "n1-n3", fmt="plain")
    assert "ringctl history n1-n3 --before %s" % older in p.stdout, p.stdout
    bad = ringd.ringctl("history", "n1-n3", "--before", "yesterday")
    assert bad.returncode == 2 and "--before" in bad.stderr, bad.stderr
    # 8 clients at once: each answered well within a second.
    t0 = time.monotonic()
    procs = [subprocess.Popen([ringd.path("ringctl"), "-s", ringd.sock,
                               "-f", "json", "history", "n1-n3"],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=ringd.env())
             for _ in range(8)]
    for q in procs:
        assert q.wait(30) == 0, q.stderr.read()
    spent = time.monotonic() - t0
    print("8 history clients at once: %.2f s" % spent)
    assert spent < 5, spent
