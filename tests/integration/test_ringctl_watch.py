"""`ringctl watch` on the ring n1-n2-n4-n3: a snapshot first; a cable
pulled shows as the edge down, the ring turned line, cable_down and
ring_broken firing and the health turned critical, and mended as the
edge up, the ring again, the alerts resolved (saying what cleared) and
the health healthy again; plain text names each subject once; --count N
counts the events after the snapshot; a survey shows as started, one
measurement per edge and done; every json line parses, keyvalue gives one
record per event; a flood of watchers past the bound is refused with a
clear error while status still answers. And `alerts --all`: three
episodes of one cable are three rows, each resolved a hold-down after its
condition cleared, and --since keeps the recent ones."""

import json
import os
import re
import queue
import subprocess
import threading
import time

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import surveyed

ORDER = ["n1", "n2", "n4", "n3"]
HOLD_DOWN_S = 3
# Carrier loss reaches the coordinator within a second; room for ASan on
# a loaded two-core machine.
SEEN_S = 10
RESOLVED_S = HOLD_DOWN_S + SEEN_S
MAX_WATCHERS = 16  # coordinator/feed.h FEED_MAX_WATCHERS


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    c = cl.Cluster(ORDER, new_prefix())
    with surveyed(c, ringd_bin, quiet=True,
                  coord_extra=["alert_hold_down %ds" % HOLD_DOWN_S,
                               "watchdog_interval 0"]) as r:
        yield c, r


class Watcher:
    """A `ringctl watch` running; its stdout lines as they come."""

    def __init__(self, r, fmt="json", *args):
        self.fmt = fmt
        self.p = subprocess.Popen(
            [r.path("ringctl"), "-s", r.sock, "-f", fmt, "-t", "10",
             "watch"] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=r.env())
        self.q = queue.Queue()
        self.lines = []
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for ln in self.p.stdout:
            self.q.put(ln)
        self.q.put(None)

    def next_event(self, timeout):
        """The next line parsed (json: every line is one object), or None
        when none comes within timeout or the stream ended."""
        try:
            ln = self.q.get(timeout=timeout)
        except queue.Empty:
            return None
        if ln is None:
            self.q.put(None)  # stays ended
            return None
        self.lines.append(ln)
        return json.loads(ln)

    def wait(self, pred, timeout, what):
        """The events until one satisfies pred (the rest stay queued)."""
        seen = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ev = self.next_event(max(0.01, deadline - time.monotonic()))
            if ev is None:
                if self.p.poll() is not None:
                    break
                continue
            seen.append(ev)
            if pred(ev):
                return seen
        raise AssertionError("%s not seen within %ss; saw %r; stderr %r" %
                             (what, timeout, seen[-30:], self.stderr()))

    def stderr(self):
        if self.p.poll() is None:
            return ""
        return self.p.stderr.read()

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        err = self.p.stderr.read()
        assert "Sanitizer" not in err, err
        return err


def is_ev(kind, subject=None, state=None, **kw):
    def pred(ev):
        if ev["kind"] != kind:
            return False
        if subject is not None and ev["subject"] != subject:
            return False
        if state is not None and ev["state"] != state:
            return False
        for k, v in kw.items():
            if k == "rule":
                if (ev.get("alert") or {}).get("rule") != v:
                    return False
            elif ev.get(k) != v:
                return False
        return True
    return pred


def test_snapshot_cut_and_mend(ring):
    c, r = ring
    w = Watcher(r, "json")
    try:
        first = w.wait(is_ev("snapshot"), SEEN_S, "the snapshot")
        assert len(first) == 1, first  # the snapshot comes first
        snap = first[0]
        assert snap["subject"] == "ring"
        assert snap["state"] in ("healthy", "degraded"), snap
        assert snap["order_valid"] is True
        edges = {e["edge"]: e["state"] for e in snap["edges"]}
        assert len(edges) == 4 and set(edges.values()) == {"up"}, edges
        assert snap["ts_ms"] > 0 and snap["time"].endswith("Z")

        c.cut("n1", "n2")
        try:
            want = {
                "edge down": is_ev("edge", "n1-n2", "down"),
                "ring -> line": is_ev("topology", "ring", "line",
                                      previous="ring"),
                "cable_down fired": is_ev("alert", "n1-n2", "fired",
                                          rule="cable_down"),
                "ring_broken fired": is_ev("alert", "ring", "fired",
                                           rule="ring_broken"),
            }
            seen = []
            for what, pred in want.items():
                if not any(pred(e) for e in seen):
                    seen += w.wait(pred, SEEN_S, what)
            down = next(e for e in seen if want["edge down"](e))
            assert down["previous"] == "up"
            assert "no carrier" in down["reason"], down
            assert "n1-n2 up -> down" in down["text"], down
            line = next(e for e in seen if want["ring -> line"](e))
            assert line["reason"] == "n1-n2", line
            assert line["text"] == "ring -> line: the cable n1-n2 is down", \
                line
            cd = next(e for e in seen if want["cable_down fired"](e))
            assert cd["alert"]["firing"] is True
            assert cd["alert"]["severity"] in ("warning", "critical")
            # status still answers while a watcher streams.
            p = r.ringctl("status", fmt="json")
            assert p.returncode == 1, (p.returncode, p.stderr)
        finally:
            c.restore("n1", "n2")
        seen = w.wait(is_ev("edge", "n1-n2", "up"), SEEN_S, "edge up")
        if not any(is_ev("topology", "ring", "ring")(e) for e in seen):
            w.wait(is_ev("topology", "ring", "ring"), SEEN_S,
                   "line -> ring")
        seen = w.wait(is_ev("alert", "n1-n2", "resolved",
                            rule="cable_down"),
                      RESOLVED_S, "cable_down resolved")
        res = seen[-1]["alert"]
        # What cleared, not what fired; resolved a hold-down after.
        assert res["resolved_message"] and \
            res["resolved_message"] in seen[-1]["text"], res
        assert res["resolved_ms"] - res["cleared_ms"] >= \
            HOLD_DOWN_S * 1000 - 50, res
        if not any(is_ev("health", "ring", "healthy")(e) for e in seen):
            w.wait(is_ev("health", "ring", "healthy"), RESOLVED_S,
                   "the health healthy again")
    finally:
        w.stop()
    for ln in w.lines:
        assert ln.endswith("\n") and ln.count("\n") == 1
    evs = [json.loads(ln) for ln in w.lines]
    health = [e for e in evs if e["kind"] == "health"]
    # Critical on the cut (whatever it was before), healthy at the end.
    crit = [e for e in health if e["state"] == "critical"]
    assert crit, health
    assert crit[0]["reason"] in ("cable_down", "ring_broken"), crit[0]
    assert crit[0]["previous"] != "critical", crit[0]
    assert health[-1]["state"] == "healthy", health
    assert health[-1]["previous"] == "critical", health
    # On the way: the deciding alerts in their hold-down, said once.
    assert any("(clearing)" in e["text"] for e in health), health


def test_plain_subject_once_and_count_after_snapshot(ring):
    """Plain: time, kind, the text, which names the subject once
    (`edge n1-n2 up -> down`, never `n1-n2 n1-n2`). --count 1 exits after
    the first event past the snapshot."""
    c, r = ring
    w = Watcher(r, "plain", "--kind", "edge")
    one = Watcher(r, "json", "--count", "1", "--kind", "edge")
    try:
        ln = w.q.get(timeout=SEEN_S)
        assert ln and " snapshot " in ln, ln
        one.wait(is_ev("snapshot"), SEEN_S, "the counted one's snapshot")
        assert one.p.poll() is None  # the snapshot does not count
        c.cut("n1", "n2")
        try:
            ev = one.wait(is_ev("edge"), SEEN_S, "the first event")[-1]
            assert ev["subject"] == "n1-n2", ev
            assert one.p.wait(timeout=SEEN_S) == 0, one.stderr()
            assert one.next_event(0.5) is None  # nothing after it
            assert len(one.lines) == 2, one.lines
            down = None
            deadline = time.monotonic() + SEEN_S
            while time.monotonic() < deadline and down is None:
                try:
                    ln = w.q.get(timeout=max(0.01,
                                             deadline - time.monotonic()))
                except queue.Empty:
                    break
                if ln and " edge " in ln and "n1-n2" in ln:
                    down = ln
            assert down, "no plain edge line for n1-n2"
            assert down.count("n1-n2") == 1, down
            assert "n1-n2 up -> down" in down, down
        finally:
            c.restore("n1", "n2")
        cl.wait_for(lambda: ("cable_down", "n1-n2") not in {
            (a["rule"], a["subject"]) for a in
            json.loads(r.ringctl("alerts").stdout)["alerts"]},
            RESOLVED_S + SEEN_S, "cable_down resolved")
    finally:
        one.stop()
        w.stop()


def alerts_all(r, *args):
    p = r.ringctl("alerts", "--all", *args, fmt="json")
    assert p.returncode in (0, 1), (p.returncode, p.stderr)
    return json.loads(p.stdout)


def test_three_episodes_are_three_rows(ring):
    """n1-n2 cut and mended three times, each waited out: `alerts --all`
    lists three cable_down episodes of n1-n2, each with its firing,
    cleared and resolved times (resolved = cleared + the hold-down, when
    the sinks were told) and what cleared it; --since keeps only those
    resolved since then."""
    c, r = ring
    t0 = int(time.time() * 1000)

    def ours(doc):
        return [a for a in doc["alerts"]
                if a["rule"] == "cable_down" and a["subject"] == "n1-n2"
                and not a["firing"] and a["first_seen_ms"] >= t0]

    for i in range(3):
        c.cut("n1", "n2")
        try:
            cl.wait_for(lambda: ("cable_down", "n1-n2") in {
                (a["rule"], a["subject"]) for a in
                json.loads(r.ringctl("alerts").stdout)["alerts"]},
                SEEN_S, "cable_down %d fired" % (i + 1))
        finally:
            c.restore("n1", "n2")
        cl.wait_for(lambda: len(ours(alerts_all(r))) == i + 1,
                    RESOLVED_S + SEEN_S, "episode %d resolved" % (i + 1))
    doc = alerts_all(r)
    eps = ours(doc)
    assert len(eps) == 3, eps
    assert doc["truncated"] is False
    # Newest first, one row each, with the times as the sinks saw them.
    assert eps[0]["resolved_ms"] > eps[1]["resolved_ms"] > \
        eps[2]["resolved_ms"], eps
    for a in eps:
        assert a["state"] == "resolved", a
        assert a["first_seen_ms"] < a["cleared_ms"] < a["resolved_ms"], a
        held = a["resolved_ms"] - a["cleared_ms"]
        assert HOLD_DOWN_S * 1000 - 50 <= held <= HOLD_DOWN_S * 1000 + \
            2000, a
        assert a["resolved_message"], a
        assert a["cleared"] and a["resolved"], a
    # --since: a cut between the second and the third resolution.
    r2, r3 = eps[1]["resolved_ms"], eps[0]["resolved_ms"]
    assert r3 - r2 > 2500, (r2, r3)
    now = int(time.time() * 1000)
    n = (now - r2 - 500) // 1000
    assert n >= 1 and now - n * 1000 < r3 - 500, (now, n, r2, r3)
    doc = alerts_all(r, "--since", "%ds" % n)
    got = ours(doc)
    assert [a["resolved_ms"] for a in got] == [r3], got
    assert doc["resolved_since"], doc
    # Plain: one table row per episode.
    p = r.ringctl("alerts", "--all", fmt="plain")
    assert p.returncode in (0, 1), p.stderr
    p = r.ringctl("alerts", "--since", "1h")
    assert p.returncode == 2 and "--all" in p.stderr, p.stderr


def test_survey_and_measurements(ring):
    c, r = ring
    w = Watcher(r, "json", "--kind", "survey,measurement")
    try:
        w.wait(is_ev("snapshot"), SEEN_S, "the snapshot")
        p = r.ringctl("survey", fmt="plain")
        assert p.returncode == 0, p.stderr
        seen = w.wait(is_ev("survey", "survey", "started"), SEEN_S,
                      "survey started")
        seen += w.wait(is_ev("survey", "survey", "done"), 180,
                       "survey done")
        kinds = {e["kind"] for e in seen}
        assert kinds <= {"survey", "measurement"}, kinds
        meas = [e for e in seen if e["kind"] == "measurement"]
        assert len(meas) == 4, meas  # one per edge of the ring
        for m in meas:
            fig = m["measurement"]
            assert fig["edge"] == m["subject"]
            assert fig["gbps_a_to_b"] is None or fig["gbps_a_to_b"] > 0
            assert "Gbps" in m["text"] or fig["error"], m
    finally:
        w.stop()


def test_keyvalue_and_plain_records(ring):
    c, r = ring
    p = r.ringctl("watch", "--count", "0", fmt="keyvalue")
    assert p.returncode == 0, p.stderr
    assert "\nkind=snapshot\n" in "\n" + p.stdout, p.stdout
    assert p.stdout.endswith("\n\n"), p.stdout  # a record, then a blank
    assert p.stdout.count("\n\n") == 1
    assert any(ln.startswith("edges.n1-n2.state=up")
               for ln in p.stdout.splitlines()), p.stdout
    p = r.ringctl("watch", "--count", "0", fmt="plain")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert " snapshot " in lines[0] and "ring" in lines[0], lines
    # The event's line (wrapped within 100 columns: continuations are
    # indented to its text), then one per edge, indented by two.
    events = [ln for ln in lines if not ln.startswith(" ")]
    edges = [ln for ln in lines if re.match(r"^  [^ ]", ln)]
    assert len(events) == 1 and len(edges) == 4, lines
    assert all(len(ln) <= 100 for ln in lines), lines
    p = r.ringctl("watch", "--count", "0", fmt="json")
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("\n") == 1
    assert json.loads(p.stdout)["kind"] == "snapshot"


def test_bad_usage_and_unreachable(ring):
    c, r = ring
    for args in (["--count", "-1"], ["--count"], ["--bogus"]):
        p = r.ringctl("watch", *args)
        assert p.returncode == 2 and "usage" in p.stderr, (args, p.stderr)
    p = r.ringctl("watch", "--kind", "bogus")
    assert p.returncode == 2 and "unknown event kind" in p.stderr, p.stderr
    for args in (["--since", "7x"], ["--since", "0s"], ["--since"],
                 ["--bogus"]):
        p = r.ringctl("alerts", "--all", *args)
        assert p.returncode == 2 and "usage" in p.stderr, (args, p.stderr)
    p = r.ringctl("watch", sock=os.path.join(r.w, "nope.sock"))
    assert p.returncode == 2 and "cannot reach" in p.stderr, p.stderr


def test_flood_of_watchers_refused_status_answers(ring):
    c, r = ring
    ws = []
    try:
        for _ in range(MAX_WATCHERS):
            w = Watcher(r, "json")
            ws.append(w)
            w.wait(is_ev("snapshot"), SEEN_S, "a watcher's snapshot")
        p = r.ringctl("watch", "--count", "1")
        assert p.returncode == 2, (p.stdout, p.stderr)
        assert "too many watchers" in p.stderr, p.stderr
        assert p.stdout == ""
        for _ in range(3):
            p = r.ringctl("status", fmt="json")
            assert p.returncode in (0, 1), p.stderr
            assert json.loads(p.stdout)["nodes"]
        p = r.ringctl("ranks", fmt="json")
        assert p.returncode == 0, p.stderr
        # One gone: its slot is free again.
        ws.pop().stop()
        cl.wait_for(lambda: r.ringctl("watch", "--count", "0").returncode
                    == 0, SEEN_S, "a freed watcher slot")
    finally:
        for w in ws:
            w.stop()


def test_coordinator_stopping_ends_the_stream(ring):
    """Last: the coordinator stops (SIGTERM); a watcher gets the shutdown
    event and exits 2, saying so. The coordinator is started again, and
    the resolved episodes are still there (the store keeps them)."""
    c, r = ring
    before = [(a["rule"], a["subject"], a["first_seen_ms"], a["cleared_ms"],
               a["resolved_ms"], a["resolved_message"])
              for a in alerts_all(r)["alerts"] if not a["firing"]]
    assert len([b for b in before if b[:2] == ("cable_down", "n1-n2")]) \
        >= 3, before
    w = Watcher(r, "json")
    try:
        w.wait(is_ev("snapshot"), SEEN_S, "the snapshot")
        r.coord.stop()
        w.wait(is_ev("shutdown", "coordinator", "stopping"), SEEN_S,
               "the shutdown event")
        assert w.p.wait(timeout=SEEN_S) == 2
        assert "closed the stream" in w.stderr()
    finally:
        w.stop()
        if not r.coord.alive():
            r.start_coordinator()
    cl.wait_for(lambda: r.ringctl("status").returncode in (0, 1), SEEN_S,
                "the coordinator back")
    after = [(a["rule"], a["subject"], a["first_seen_ms"], a["cleared_ms"],
              a["resolved_ms"], a["resolved_message"])
             for a in alerts_all(r)["alerts"] if not a["firing"]]
    assert [a for a in after if a in before] == before, (before, after)
