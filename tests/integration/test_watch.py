"""Watching the ring (issue 10) on the reference cluster's ring n1-n2-n4-n3: a
cut cable is seen live (no survey, no test traffic), alerted to a hook
and a webhook receiver and resolved when mended; a flapping cable is one
alert; a killed agent is a node down, not a missing cable; the store
serves status and ranks after a coordinator kill -9 without a survey;
the Prometheus endpoint answers."""

import json
import re
import os
import shutil
import sqlite3
import stat
import sys
import tempfile
import time

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import (LogMark, facing_port, scrape_metrics, shape_ring,
                      surveyed)

ORDER = ["n1", "n2", "n4", "n3"]
WEBHOOK_PORT = 9093
METRICS_PORT = 9464
HOLD_DOWN_S = 5
# Carrier loss reaches the coordinator through the agent's netlink watch
# and one inventory push: well under a second; the deadline leaves room
# for an ASan build on a loaded two-core machine.
SEEN_S = 5
RESOLVED_S = HOLD_DOWN_S + SEEN_S
# The cut's alerts, cable_down and ring_broken, are due within 2 s (make
# bench measures ~0.3 s: the agent's 300 ms rescan debounce, then one push).
ALERT_S = 2
RATE = "1gbit"
# A cable back is re-checked alone this long after its last change.
RECHECK_S = 2
# Every edge probed and sampled (64 B) this often.
LIGHT_S = 10
# Traffic above this share of a 10G cable (shaped to 1 Gbit: at most 10%)
# postpones its bandwidth tests.
BUSY_PCT = 5
# Background traffic: a sink, and a sender that saturates the cable.
BLAST = r"""
import socket, sys, time
if sys.argv[1] == "sink":
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[2], int(sys.argv[3])))
    s.listen(1)
    c, _ = s.accept()
    while c.recv(1 << 16):
        pass
else:
    end = time.monotonic() + float(sys.argv[4])
    while True:
        try:
            s = socket.create_connection((sys.argv[2], int(sys.argv[3])), 2)
            break
        except OSError:
            time.sleep(0.1)
    buf = b"x" * (1 << 16)
    while time.monotonic() < end:
        s.sendall(buf)
"""


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    d = tempfile.mkdtemp(prefix="ringd-watch-")
    os.chmod(d, 0o755)
    f = {"hook": os.path.join(d, "hook.sh"),
         "hook_out": os.path.join(d, "hook.out"),
         "webhook_out": os.path.join(d, "webhook.out"),
         "webhook_fail": os.path.join(d, "webhook.fail")}
    with open(f["hook"], "w") as h:
        h.write("#!/bin/sh\n{ env | grep '^RING_' | sort; cat; echo; "
                "echo '--'; } >> %s\n" % f["hook_out"])
    os.chmod(f["hook"], stat.S_IRWXU)

    def receiver(c):
        # Shaped: figures that hold from one survey to the next, so that
        # the baselines judge the cable, not the CPU's load.
        shape_ring(c, RATE)
        c.spawn("coord", [sys.executable,
                          os.path.join(os.path.dirname(__file__),
                                       "webhook_rx.py"),
                          str(WEBHOOK_PORT), f["webhook_out"],
                          f["webhook_fail"]],
                os.path.join(d, "webhook_rx.log"), name="webhook-rx")
    extra = ["alert_hold_down %ds" % HOLD_DOWN_S,
             "alert_command %s" % f["hook"],
             "alert_receiver_webhook http://127.0.0.1:%d/hook" % WEBHOOK_PORT,
             "alert_receiver_webhook_timeout 1s",
             "watchdog_interval 0",
             "recheck_settle %ds" % RECHECK_S,
             "busy_threshold %d" % BUSY_PCT,
             "busy_retry 3s",
             "light_check_interval %ds" % LIGHT_S,
             "metrics_listen 127.0.0.1:%d" % METRICS_PORT]
    c = cl.Cluster(ORDER, new_prefix())
    try:
        # veth links at 10G: a nominal above it is a speed downshift.
        with surveyed(c, ringd_bin, prepare=receiver, quiet=True,
                      coord_extra=extra, nominal="10G",
                      agent_extra=["counters_interval 1s"]) as r:
            yield c, r, f
    finally:
        shutil.rmtree(d, ignore_errors=True)


def samples(r, name):
    p = r.ringctl("history", name, fmt="json")
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["n_samples"]


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


def read(path):
    try:
        with open(path) as fh:
            return fh.read()
    except FileNotFoundError:
        return ""


def hook_events(f, rule):
    """(RING_STATE, RING_EVENT) of each hook run for rule, in order."""
    out = []
    for run in read(f["hook_out"]).split("--\n"):
        env = dict(ln.split("=", 1) for ln in run.splitlines()
                   if ln.startswith("RING_") and "=" in ln)
        if env.get("RING_ALERT") == rule:
            out.append((env.get("RING_STATE"), env.get("RING_EVENT")))
    return out


def webhook_alerts(f, rule):
    """(status, alertname) of each alert posted for rule."""
    out = []
    for ln in read(f["webhook_out"]).splitlines():
        doc = json.loads(ln)
        for a in doc["alerts"]:
            if a["labels"]["alertname"] == rule:
                out.append(a["status"])
    return out


def wait_healthy(r, timeout=RESOLVED_S + 10):
    cl.wait_for(lambda: status(r)["health"] == "healthy", timeout,
                "health back to healthy")


def test_healthy_after_survey(ring):
    c, r, f = ring
    doc = status(r)
    assert doc["health"] == "healthy", doc.get("alerts")
    assert doc.get("alerts", []) == []
    top = doc["topology"]
    assert top["live_kind"] == "ring" and top["order_valid"] is True
    assert all(e["live_state"] == "up" for e in top["edges"]), top["edges"]
    # The survey's own traffic, accounted per edge (its ladder alone is
    # megabytes on a 1 Gbit cable).
    for e in top["edges"]:
        assert e["self_bytes_last_hour_computed"] > 1e6, e
    p = r.ringctl("alerts")
    assert p.returncode == 0, (p.stdout, p.stderr)


def test_cut_cable_seen_alerted_and_resolved(ring):
    """n1-n2 pulled: the ring is a line without n1-n2 at once, cable_down
    and ring_broken fire (hook and webhook), ranks refuses the old order;
    mended: both resolve after the hold-down. No survey meanwhile."""
    c, r, f = ring
    mark = LogMark(r.coord.log)
    before = r.topology()
    hist = {n: samples(r, n) for n in ("n1-n2", "n2-n4")}
    c.cut("n1", "n2")
    try:
        doc = cl.wait_for(
            lambda: (lambda d: d if {("cable_down", "n1-n2"),
                                     ("ring_broken", "ring")} <=
                     firing(d) else None)(status(r)),
            ALERT_S, "cable_down and ring_broken for n1-n2")
        assert doc["health"] == "critical"
        top = doc["topology"]
        assert top["live_kind"] == "line" and top["live_gap"] == "n1-n2"
        assert top["live_cables_down"] == ["n1-n2"], top
        assert "live_nodes_down" not in top, top
        assert top["order_valid"] is False
        assert "n1-n2" in top["order_invalid"]
        e = edge(top, "n1", "n2")
        assert e["live_state"] == "down"
        assert "no carrier" in e["live_reason"], e
        assert all(x["live_state"] == "up" for x in top["edges"]
                   if x is not e), top["edges"]
        # The published order no longer holds: said, and not printed for
        # a launcher.
        p = r.ringctl("ranks", fmt="env")
        assert p.returncode == 1 and p.stdout == "", (p.returncode,
                                                      p.stdout)
        assert "no longer valid" in p.stderr, p.stderr
        p = r.ringctl("status", fmt="plain")
        assert p.returncode == 1
        # The health, its cause (health_cause ...), then the alerts.
        assert p.stdout.startswith("health: critical\n") and \
            "\nalerts:\n" in p.stdout, p.stdout[:300]
        cl.wait_for(lambda: ("firing", "fired") in
                    hook_events(f, "cable_down"), SEEN_S,
                    "the hook to run for cable_down")
        cl.wait_for(lambda: "firing" in webhook_alerts(f, "cable_down"),
                    SEEN_S, "the webhook to receive cable_down")
    finally:
        c.restore("n1", "n2")
    wait_healthy(r)
    doc = status(r)
    assert doc["topology"]["live_kind"] == "ring"
    assert edge(doc["topology"], "n1", "n2")["live_state"] == "up"
    # Health is the present; the resolution waits out the hold-down.
    cl.wait_for(lambda: ("resolved", "resolved") in
                hook_events(f, "cable_down"), RESOLVED_S,
                "the hook to run for the resolution")
    cl.wait_for(lambda: "resolved" in webhook_alerts(f, "cable_down"),
                SEEN_S, "the webhook to receive the resolution")
    p = r.ringctl("alerts", "--all", fmt="json")
    rules = {(a["rule"], a["state"]) for a in json.loads(p.stdout)["alerts"]}
    assert ("cable_down", "resolved") in rules, rules
    # Mended, n1-n2 alone is probed and measured again; the cut and the
    # mend loaded no other cable: no survey, no other edge re-checked.
    top = r.wait_recheck(["n1-n2"], before)
    log = mark.new()
    assert "survey started" not in log, log[-2000:]
    assert "re-check started: n1-n2 (cable back up)\n" in log, log[-2000:]
    e = edge(top, "n1", "n2")
    assert e["recheck_reason"] == "cable back up"
    assert e["gbps_a_to_b_measured"][-1] > 0, e
    old = {x["edge"]: x for x in before["edges"]}
    for x in top["edges"]:
        if x["edge"] != "n1-n2":
            assert x.get("rechecked") == old[x["edge"]].get("rechecked"), x
    # The history gains the re-checked edge's figures only.
    assert samples(r, "n1-n2") > hist["n1-n2"]
    assert samples(r, "n2-n4") == hist["n2-n4"]


def test_flapping_cable_is_one_alert(ring):
    c, r, f = ring
    before = len(hook_events(f, "cable_down"))
    for _ in range(10):
        c.cut("n2", "n4")
        # Seen down (the alert itself fires on through the hold-down).
        cl.wait_for(lambda: edge(status(r)["topology"], "n2", "n4")
                    ["live_state"] == "down", SEEN_S, "n2-n4 down")
        assert ("cable_down", "n2-n4") in firing(status(r))
        c.restore("n2", "n4")
        cl.wait_for(lambda: edge(status(r)["topology"], "n2", "n4")
                    ["live_state"] == "up", SEEN_S, "n2-n4 up again")
    wait_healthy(r)
    cl.wait_for(lambda: len(hook_events(f, "cable_down")) >= before + 2,
                RESOLVED_S, "the hook runs for the flapping cable")
    runs = hook_events(f, "cable_down")[before:]
    assert runs == [("firing", "fired"), ("resolved", "resolved")], runs
    p = r.ringctl("alerts", "--all", fmt="json")
    a = [x for x in json.loads(p.stdout)["alerts"]
         if x["rule"] == "cable_down" and x["subject"] == "n2-n4"]
    assert a and a[0]["flaps"] == 9, a


def test_killed_agent_is_a_node_down(ring):
    """Not a missing cable: n4's edges unverified, node_down fires, no
    cable_down; back, everything resolves."""
    c, r, f = ring
    mark = LogMark(r.coord.log)
    r.wait_quiet()
    before = r.topology()
    r.agents["n4"].signal(9)
    try:
        doc = cl.wait_for(
            lambda: (lambda d: d if ("node_down", "n4") in firing(d)
                     else None)(status(r)), 15, "node_down for n4")
        top = doc["topology"]
        assert not any(a == "cable_down" for a, _ in firing(doc)), doc
        assert edge(top, "n2", "n4")["live_state"] == "unverified"
        assert edge(top, "n4", "n3")["live_state"] == "unverified"
        assert top["live_kind"] == "line" and top["live_gap"] == "n4 down"
        assert top["live_nodes_down"] == ["n4"], top
        assert "live_cables_down" not in top, top
        assert top["order_valid"] is False
        p = r.ringctl("ranks", fmt="hostfile")
        assert p.returncode == 1 and p.stdout == ""
    finally:
        r.agents["n4"].wait(10)
        r.start_agent("n4")
    r.wait_all_up(30)
    wait_healthy(r, timeout=60)
    # Back: its two edges are re-checked, not the ring.
    top = r.wait_recheck(["n2-n4", "n3-n4"], before)
    assert edge(top, "n2", "n4")["recheck_reason"] == "n4 came back"
    assert "survey started" not in mark.new(), mark.new()[-2000:]


def test_edge_below_its_baseline(ring):
    """One cable shaped to half its rate: degraded after its re-measure
    (a survey), resolved once it measures its baseline again."""
    c, r, f = ring
    c.shape("n4", "n3", "500mbit")
    try:
        r.survey_now()
        doc = status(r)
        assert ("edge_degraded", "n3-n4") in firing(doc) or \
            ("edge_degraded", "n4-n3") in firing(doc), doc["alerts"]
        assert doc["health"] == "degraded"
        assert not any(a == "edge_degraded" and s not in ("n3-n4", "n4-n3")
                       for a, s in firing(doc)), doc["alerts"]
    finally:
        c.shape("n4", "n3", RATE)
    r.survey_now()
    wait_healthy(r)


def test_restart_serves_from_the_store(ring):
    """kill -9, start again: status and ranks answer at once from the
    store, the same topology, no survey; the database checks ok."""
    c, r, f = ring
    r.wait_quiet()
    before = status(r)["topology"]
    rc, ranks_before, _ = r.json("ranks")
    assert rc == 0
    r.coord.signal(9)
    r.coord.wait(10)
    db = os.path.join(r.state_dir, "ringd.db")
    con = sqlite3.connect(db)
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        con.close()
    mark = LogMark(r.coord.log)
    r.start_coordinator()
    doc = status(r)
    assert doc["topology"]["surveyed"] == before["surveyed"]
    assert doc["topology"]["order"] == before["order"]
    rc, ranks_after, err = r.json("ranks")
    assert rc in (0, 1), err
    assert [x["node"] for x in ranks_after["ranks"]] == \
        [x["node"] for x in ranks_before["ranks"]]
    r.wait_all_up(30)
    wait_healthy(r, timeout=30)
    assert r.json("ranks")[0] == 0
    assert "survey started" not in mark.new(), mark.new()[-2000:]


def test_kill_9_while_writing(ring):
    """kill -9 while a survey's results and a flapping cable's alerts are
    being written: after each restart the database checks ok, status and
    ranks answer from the store with a topology that was published (the
    one before or the new one, whole), and the history holds what it
    held. Twice: mid-survey, and the moment the survey is done."""
    c, r, f = ring
    r.wait_quiet()
    wait_healthy(r)
    for when in ("survey: round 2 of 2", "survey done"):
        before = status(r)["topology"]
        hist = samples(r, "n1-n2")
        mark = LogMark(r.coord.log)
        p = r.ringctl("survey", fmt=None)
        assert p.returncode == 0, p.stderr
        # Load: alert writes from a flapping cable beside the survey's.
        for _ in range(3):
            c.cut("n2", "n4")
            c.restore("n2", "n4")
        mark.wait(when, 90)
        r.coord.signal(9)
        r.coord.wait(10)
        con = sqlite3.connect(os.path.join(r.state_dir, "ringd.db"))
        try:
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == \
                "ok"
        finally:
            con.close()
        r.start_coordinator()
        top = status(r)["topology"]
        assert top["surveyed"] >= before["surveyed"], (top, before)
        assert top["order"] == before["order"]
        assert len(top["edges"]) == 4
        assert r.json("ranks")[0] in (0, 1)
        assert samples(r, "n1-n2") >= hist
        r.wait_all_up(30)
        wait_healthy(r, timeout=60)
        r.wait_quiet()


def test_metrics_endpoint(ring):
    c, r, f = ring
    text = scrape_metrics(c, METRICS_PORT)
    assert re.search(r'^ringd_node_up\{node="n1",ring="[^"]+"\} 1$', text,
                     re.M), text[:2000]
    assert "# TYPE ringd_edge_bandwidth_bytes_per_second gauge" in text
    assert 'ringd_edge_bandwidth_bytes_per_second{a="n1"' in text
    assert "ringd_topology_info{" in text
    # ringd's own bytes per edge in the last hour: the surveys' tests.
    got = [float(m.group(1)) for m in re.finditer(
        r'^ringd_edge_self_bytes_last_hour\{[^}]*\} (\S+)$', text, re.M)]
    # (The store keeps the account: the restarts before did not lose it.)
    assert len(got) == 4 and all(g > 1e6 for g in got), got


def metric_rate(c, node, ifname):
    m = re.search(r'^ringd_interface_receive_bytes_per_second'
                  r'\{node="%s",interface="%s",ring="[^"]*"\} (\S+)$' %
                  (node, ifname),
                  scrape_metrics(c, METRICS_PORT), re.M)
    return float(m.group(1)) if m else None


def test_busy_edge_is_not_loaded(ring):
    """Traffic on n1-n2 above busy_threshold: a survey does not load that
    cable (its last figures stay, it says why) and measures the others;
    once the traffic stops, n1-n2 alone is re-checked and measured."""
    c, r, f = ring
    r.wait_quiet()
    quiet_at = time.monotonic()
    before = r.topology()
    old = edge(before, "n1", "n2")
    addr = c.data_addr("n2", "n1")
    port = facing_port(c, "n2", "n1")
    d = os.path.dirname(f["hook"])
    procs = [c.spawn("n2", [sys.executable, "-c", BLAST, "sink", addr,
                            "5999"], os.path.join(d, "sink.log"),
                     name="sink"),
             c.spawn("n1", [sys.executable, "-c", BLAST, "send", addr,
                            "5999", "300"], os.path.join(d, "send.log"),
                     name="blast")]
    try:
        # The agents' counters (each second) show it on n2's port, in a
        # sample the coordinator can use: one taken within 1 s + the
        # sample's span of its own last test on n1-n2 (the last survey
        # ends with the ring-load round on every cable) says nothing.
        cl.wait_for(lambda: time.monotonic() - quiet_at > 3 and
                    (metric_rate(c, "n2", port) or 0) > 50e6, 20,
                    "background traffic in n2 %s's counters" % port)
        mark = LogMark(r.coord.log)
        top = r.survey_now()
        e = edge(top, "n1", "n2")
        assert "above busy_threshold %d%%" % BUSY_PCT in \
            e.get("busy_not_measured", ""), e
        assert e["age_s"] >= old["age_s"], (e, old)
        assert e["gbps_a_to_b_measured"] == old["gbps_a_to_b_measured"]
        for x in top["edges"]:
            if x is not e:
                assert "busy_not_measured" not in x, x
                assert x["age_s"] < 60, x
        assert "n1-n2 is busy, not measured" in mark.new()
        mark = LogMark(r.coord.log)
    finally:
        for p in procs:
            p.stop()
    # Quiet again: retried (busy_retry 3s) until a sample shows it idle,
    # then measured alone.
    top = r.wait_recheck(["n1-n2"], before, timeout=90)
    top = cl.wait_for(
        lambda: (lambda t: t if "busy_not_measured" not in
                 edge(t, "n1", "n2") else None)(r.topology()), 60,
        "n1-n2 measured once quiet")
    e = edge(top, "n1", "n2")
    assert e["recheck_reason"] == "busy at its last turn", e
    assert e["age_s"] < 60, e
    log = mark.new()
    assert "survey started" not in log, log
    assert "re-check started: n1-n2 (busy at its last turn)" in log, log


def test_webhook_down_is_retried(ring):
    """The webhook receiver answers 500: the alert is posted again (with
    backoff) and status answers as usual meanwhile; once the receiver is
    back, the resolution is delivered."""
    c, r, f = ring
    wait_healthy(r)
    # One POST at a time, in order: the first alert of the cut (either
    # rule) is the one retried.
    posts = lambda: [x for x in read(f["webhook_out"]).splitlines()]
    n0 = len(posts())
    r0 = webhook_alerts(f, "cable_down").count("resolved")
    open(f["webhook_fail"], "w").close()
    c.cut("n3", "n1")
    try:
        def retried():
            # Each status answer within its usual second or so.
            t0 = time.monotonic()
            doc = status(r)
            assert time.monotonic() - t0 < 2.0, "status took %.1f s" % (
                time.monotonic() - t0)
            assert ("cable_down", "n1-n3") in firing(doc) or \
                ("cable_down", "n3-n1") in firing(doc), doc["alerts"]
            return len([x for x in posts()[n0:]
                        if '"status": "firing"' in x or
                        '"status":"firing"' in x]) >= 3
        try:
            cl.wait_for(retried, 30, "the webhook posted again after a 500")
        except TimeoutError:
            raise AssertionError("posts %r alerts %r log %s" % (
                posts()[n0:], status(r)["alerts"],
                read(r.coord.log)[-3000:]))
    finally:
        os.unlink(f["webhook_fail"])
        c.restore("n3", "n1")
    wait_healthy(r)
    cl.wait_for(lambda: webhook_alerts(f, "cable_down").count("resolved") >
                r0, 60, "the resolution delivered to the receiver, back up")


def test_light_check_failed(ring):
    """n2's address on the n1-n2 cable removed: carrier and beacons stay
    up (no cable_down), the light check's probes fail, light_check_failed
    warns; the address back, the next light check clears it."""
    c, r, f = ring
    cl.wait_for(lambda: all("light_check" in e for e in
                            status(r)["topology"]["edges"]),
                2 * LIGHT_S + 10, "a light check of every edge")
    e = edge(status(r)["topology"], "n1", "n2")
    assert "light_error" not in e and e["light_lat_p50_us_measured"] > 0, e
    port = facing_port(c, "n2", "n1")
    p = c.exec("n2", ["ip", "-4", "-o", "addr", "show", "dev", port])
    cidr = re.search(r"inet (\S+)", p.stdout).group(1)
    c.exec("n2", ["ip", "addr", "del", cidr, "dev", port], check=True)
    try:
        doc = cl.wait_for(
            lambda: (lambda d: d if ("light_check_failed", "n1-n2") in
                     firing(d) else None)(status(r)),
            2 * LIGHT_S + 15, "light_check_failed for n1-n2")
        assert ("cable_down", "n1-n2") not in firing(doc), doc["alerts"]
        e = edge(doc["topology"], "n1", "n2")
        assert e["live_state"] == "up", e
        assert e["light_error"], e
    finally:
        c.exec("n2", ["ip", "addr", "add", cidr, "dev", port], check=True)
    cl.wait_for(lambda: ("light_check_failed", "n1-n2") not in
                firing(status(r)), 2 * LIGHT_S + HOLD_DOWN_S + 15,
                "light_check_failed resolved")
