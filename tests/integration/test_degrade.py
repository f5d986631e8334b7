"""A cable that loses rate between surveys, seen by the light checks'
short bandwidth samples (issue: a halved cable went unnoticed for an
hour): on the ring n1-n2-n4-n3 (the demo's), every cable shaped to
1 Gbit, light checks every LIGHT_S, no periodic survey. A halved cable
raises edge_degraded within one interval and resolves once restored, no
survey; cuts, mends and agent restarts during light checks raise no
light_check_failed; the bytes the samples add are measured."""

import os
import shutil
import stat
import tempfile
import time

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import LogMark, facing_port, rate_gbps, shape_ring, surveyed

ORDER = ["n1", "n2", "n4", "n3"]
RATE = "1gbit"
HALF = "500mbit"
# Light checks this often (the default is 10 min): short, so that one
# interval is a few seconds here.
LIGHT_S = 4
HOLD_DOWN_S = 1
# Beyond one interval: the run in flight when the rate changed (its
# sample may predate the change), an ASan build on a loaded 2-core box.
SLACK_S = LIGHT_S + 15
# The ladder's top through tbf lands near 95% of the rate.
DEGRADED = 0.70


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    d = tempfile.mkdtemp(prefix="ringd-degrade-")
    os.chmod(d, 0o755)
    hook, hook_out = os.path.join(d, "hook.sh"), os.path.join(d, "hook.out")
    with open(hook, "w") as h:
        h.write("#!/bin/sh\n{ env | grep '^RING_' | sort; echo '--'; } "
                ">> %s\n" % hook_out)
    os.chmod(hook, stat.S_IRWXU)
    extra = ["light_check_interval %ds" % LIGHT_S,
             "alert_hold_down %ds" % HOLD_DOWN_S,
             "alert_command %s" % hook,
             "recheck_settle 2s",
             "watchdog_interval 0"]
    c = cl.Cluster(ORDER, new_prefix())
    try:
        # veth links at 10G, nominal 10G: a 1 Gbit cable is never busy
        # (10% of 10G), and counters every second say it is idle.
        with surveyed(c, ringd_bin, prepare=lambda x: shape_ring(x, RATE),
                      quiet=True, coord_extra=extra, nominal="10G",
                      agent_extra=["counters_interval 1s"],
                      coord_debug="survey") as r:
            yield c, r, hook_out
    finally:
        shutil.rmtree(d, ignore_errors=True)


def status(r):
    rc, doc, err = r.json("status")
    assert doc is not None, (rc, err)
    return doc


def firing(doc):
    return {(a["rule"], a["subject"]) for a in doc.get("alerts", [])}


def edge(top, a, b):
    for e in top["edges"]:
        if {e["a"], e["b"]} == {a, b}:
            return e
    raise AssertionError("no edge %s-%s in %r" % (a, b, top["edges"]))


def degraded(doc, a, b):
    return ("edge_degraded", "%s-%s" % (a, b)) in firing(doc) or \
        ("edge_degraded", "%s-%s" % (b, a)) in firing(doc)


def sample_low(e):
    lo = min(x for x in (e.get("sample_gbps_a_to_b_measured"),
                         e.get("sample_gbps_b_to_a_measured"))
             if x is not None)
    return lo


def hook_events(path, rule):
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return []
    return [ev for ev in text.split("--\n") if "RING_ALERT=%s\n" % rule in ev]


def port_bytes(c, node, peer):
    """rx + tx bytes of node's port facing peer (the kernel's count)."""
    port = facing_port(c, node, peer)
    total = 0
    for d in ("rx", "tx"):
        p = c.exec(node, ["cat", "/sys/class/net/%s/statistics/%s_bytes" %
                          (port, d)], check=True)
        total += int(p.stdout)
    return total


def wait_samples(r, n, what):
    """Wait for n more light checks with a sample on every edge (each
    edge's sample time moves n times); return the status then."""
    seen = {}
    counts = {}

    def step():
        doc = status(r)
        for e in doc["topology"]["edges"]:
            t = e.get("sample")
            if t and seen.get(e["edge"]) != t:
                if e["edge"] in seen:
                    counts[e["edge"]] = counts.get(e["edge"], 0) + 1
                seen[e["edge"]] = t
        if len(counts) == len(doc["topology"]["edges"]) and \
                min(counts.values()) >= n:
            return doc
        return None
    return cl.wait_for(step, (n + 1) * LIGHT_S + SLACK_S, what,
                       interval=0.25)


def test_samples_and_their_bytes(ring):
    """Every edge gets a sample each light check, near its rate; the
    bytes they add per edge per hour, measured by ringd's own account."""
    c, r, hook_out = ring
    doc = wait_samples(r, 1, "a sample of every edge")
    for e in doc["topology"]["edges"]:
        assert 0 < sample_low(e) <= 1.1 * rate_gbps(RATE), e
    # Bytes per check from the account's growth over several checks, no
    # survey or re-check in between (the log would say).
    mark = LogMark(r.coord.log)
    e0 = edge(doc["topology"], "n1", "n2")
    b0, t0, checks = e0["self_bytes_last_hour_computed"], e0["sample"], 0
    w0 = port_bytes(c, "n1", "n2")

    def more():
        nonlocal t0, checks
        e = edge(status(r)["topology"], "n1", "n2")
        if e["sample"] != t0:
            t0, checks = e["sample"], checks + 1
        return e if checks >= 3 else None
    e1 = cl.wait_for(more, 4 * LIGHT_S + SLACK_S, "3 more samples of n1-n2",
                     interval=0.2)
    # The wire's count, both directions (frames, TCP/IP headers, ACKs,
    # beacons): the kernel's, over the same checks (give or take the one
    # in flight when read).
    wire = (port_bytes(c, "n1", "n2") - w0) / checks
    log = mark.new()
    assert "survey started" not in log and "re-check started" not in log
    per_check = (e1["self_bytes_last_hour_computed"] - b0) / checks
    cap = rate_gbps(RATE) * 1e9 / 8 * 3600  # one direction, one hour
    for what, b in (("ringd's own account (computed from the windows)",
                     per_check),
                    ("n1's port counters, rx + tx (measured)", wire)):
        hour = b * 3600 / 600  # at the default light_check_interval
        print("\nlight check + sample of n1-n2 at %s, %s: %.0f bytes per "
              "check (over %d checks); at the default 10 min interval "
              "%.1f MB per edge per hour, %.4f%% of one direction's hourly "
              "capacity" % (RATE, what, b, checks, hour / 1e6,
                            100 * hour / cap))
    # Two directions of 20 ms at line rate; the wire adds what drains
    # after each window. A sample the loaded box spoilt is taken again
    # over 100 ms: then the budget is not what was measured.
    assert per_check < wire < 2 * per_check + 2e6, (wire, per_check)
    if " low at " in log:
        print("(a low sample was taken again in these checks: %s)" %
              [ln for ln in log.splitlines() if " low at " in ln])
        return
    assert 0 < per_check <= 2 * 0.020 * rate_gbps(RATE) * 1e9 / 8 * 1.1
    assert wire * 6 / cap < 0.0001


@pytest.mark.parametrize("one_way", [False, True],
                         ids=["both-ways", "one-way"])
def test_halved_cable_alerts_and_resolves(ring, one_way):
    """A cable shaped to half its rate (both ways, or only n4 -> n3):
    edge_degraded within one light-check interval, the sample in status;
    the rate back: resolved by the next sample, no survey."""
    c, r, hook_out = ring
    mark = LogMark(r.coord.log)
    before = r.survey_id(status(r)["topology"])
    c.shape("n4", "n3", HALF, one_way=one_way)
    t0 = time.monotonic()
    try:
        doc = cl.wait_for(
            lambda: (lambda d: d if degraded(d, "n3", "n4") else None)(
                status(r)),
            LIGHT_S + SLACK_S, "edge_degraded for n3-n4")
        took = time.monotonic() - t0
        print("\nedge_degraded %.1f s after the halving (light checks "
              "every %d s)" % (took, LIGHT_S))
        e = edge(doc["topology"], "n3", "n4")
        assert sample_low(e) < DEGRADED * rate_gbps(RATE), e
        a = [x for x in doc["alerts"] if x["rule"] == "edge_degraded" and
             x["subject"] in ("n3-n4", "n4-n3")]
        assert len(a) == 1 and "light-check sample" in a[0]["message"], a
    finally:
        c.shape("n4", "n3", RATE)
    cl.wait_for(lambda: not degraded(status(r), "n3", "n4"),
                LIGHT_S + HOLD_DOWN_S + SLACK_S, "edge_degraded resolved")
    assert r.survey_id(status(r)["topology"]) == before
    log = mark.new()
    assert "survey started" not in log, log[-2000:]
    assert "re-check started" not in log, log[-2000:]


def test_cut_mend_restart_no_light_check_failed(ring):
    """Cuts and mends of a cable, and an agent killed and started again,
    while light checks run: cable_down and node_down say what happened;
    no light_check_failed, then or after."""
    c, r, hook_out = ring
    mark = LogMark(r.coord.log)
    before = len(hook_events(hook_out, "light_check_failed"))
    for _ in range(2):
        mark.wait(r"light check of \d+ edge", LIGHT_S + SLACK_S,
                  "a light check to start")
        c.cut("n1", "n2")
        cl.wait_for(lambda: ("cable_down", "n1-n2") in firing(status(r)),
                    10, "cable_down for n1-n2")
        mark = LogMark(r.coord.log)
        mark.wait(r"light check of \d+ edge", LIGHT_S + SLACK_S,
                  "a light check during the cut")
        c.restore("n1", "n2")
        cl.wait_for(lambda: edge(status(r)["topology"], "n1", "n2")
                    ["live_state"] == "up", 10, "n1-n2 up again")
    # An agent killed while a check runs, and started again.
    mark = LogMark(r.coord.log)
    mark.wait(r"light check of \d+ edge", LIGHT_S + SLACK_S,
              "a light check to start")
    r.agents["n2"].signal(9)
    r.agents["n2"].wait(10)
    r.start_agent("n2")
    r.wait_all_up(30)
    # Checks after all that, judged: two rounds with every edge sampled.
    wait_samples(r, 2, "two light checks after the mends and restart")
    cl.wait_for(lambda: status(r)["health"] == "healthy", 30,
                "health back to healthy")
    assert len(hook_events(hook_out, "light_check_failed")) == before, \
        hook_events(hook_out, "light_check_failed")
    assert ("light_check_failed", "n1-n2") not in firing(status(r))
    with open(r.coord.log, errors="replace") as f:
        log = f.read()
    # What the checks that overlapped became (timing decides how many).
    print("\nlight checks discarded: %d, failed (judged or not): %d" %
          (log.count(" discarded: "), log.count("light check of n1-n2 "
                                                "failed")))
