"""`ringctl watch` on the ring n1-n2-n4-n3: a snapshot first; a cable
pulled shows as the edge down, the ring turned line and cable_down and
ring_broken firing, and mended as the edge up, the ring again and the
alerts resolved; a survey shows as started, one measurement per edge and
done; every json line parses, keyvalue gives one record per event; a
flood of watchers past the bound is refused with a clear error while
status still answers."""

import json
import os
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
        w.wait(is_ev("alert", "n1-n2", "resolved", rule="cable_down"),
               RESOLVED_S, "cable_down resolved")
    finally:
        w.stop()
    for ln in w.lines:
        assert ln.endswith("\n") and ln.count("\n") == 1


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
    p = r.ringctl("watch", "--count", "1", fmt="keyvalue")
    assert p.returncode == 0, p.stderr
    assert "\nkind=snapshot\n" in "\n" + p.stdout, p.stdout
    assert p.stdout.endswith("\n\n"), p.stdout  # a record, then a blank
    assert p.stdout.count("\n\n") == 1
    assert any(ln.startswith("edges.n1-n2.state=up")
               for ln in p.stdout.splitlines()), p.stdout
    p = r.ringctl("watch", "--count", "1", fmt="plain")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert " snapshot " in lines[0] and "ring" in lines[0], lines
    assert len(lines) == 1 + 4, lines  # the line, one per edge
    p = r.ringctl("watch", "--count", "1", fmt="json")
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("\n") == 1
    assert json.loads(p.stdout)["kind"] == "snapshot"


def test_bad_usage_and_unreachable(ring):
    c, r = ring
    for args in (["--count", "0"], ["--count"], ["--bogus"]):
        p = r.ringctl("watch", *args)
        assert p.returncode == 2 and "usage" in p.stderr, (args, p.stderr)
    p = r.ringctl("watch", "--kind", "bogus")
    assert p.returncode == 2 and "unknown event kind" in p.stderr, p.stderr
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
        cl.wait_for(lambda: r.ringctl("watch", "--count", "1").returncode
                    == 0, SEEN_S, "a freed watcher slot")
    finally:
        for w in ws:
            w.stop()


def test_coordinator_stopping_ends_the_stream(ring):
    """Last: the coordinator stops (SIGTERM); a watcher gets the shutdown
    event and exits 2, saying so. The coordinator is started again."""
    c, r = ring
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
