"""alertmanager_url against Debian's real Alertmanager (0.25): three of
them in the coordinator's namespace, one alone and an HA pair (each
peering with the other), every one a target of the coordinator. A cut
cable appears in each one's /api/v2/alerts within 2 s naming the cable,
and goes away once mended (the resolution posted, not a timeout); the
watchdog fires at each; a coordinator restart adds nothing there (no new
alert, no resolution); an Alertmanager that was down while a cable was cut
and mended gets the resolution it was owed once it is back."""

import os
import re
import shutil
import tempfile
import time

import pytest

import cluster as cl
from amtest import am_get
from conftest import new_prefix
from ringtest import SHORT_SURVEY, LogMark, surveyed

ORDER = ["n1", "n2", "n3", "n4"]
METRICS_PORT = 9467
SINGLE = 19093
HA = (19094, 19095)
HA_GOSSIP = (19194, 19195)
HOLD_DOWN_S = 2
# Every firing alert again this often; a failing target is retried at
# most this far apart; a firing alert's endsAt is 4 of these ahead.
RESEND_S = 5
# Cut to the alert at every Alertmanager: the agent's rescan debounce,
# one push, one POST (make bench measures ~0.3 s to the coordinator).
ALERT_S = 2
# Mended to gone: the hold-down, then one POST; well inside the 4
# resends after which Alertmanager would time a firing alert out.
RESOLVED_S = HOLD_DOWN_S + 4
AM_CONF = """route:
  receiver: none
  group_wait: 1s
receivers:
  - name: none
"""


def which(tool):
    path = shutil.which(tool)
    if not path:
        pytest.fail("%s missing: Debian's prometheus-alertmanager package "
                    "(make test-deps)" % tool)
    return path


def am_alerts(c, port):
    """{(alertname, subject): alert} active at the Alertmanager."""
    import json
    st, body = am_get(c, port, "/api/v2/alerts")
    assert st == 200, (st, body)
    return {(a["labels"]["alertname"], a["labels"].get("subject")): a
            for a in json.loads(body)}


def am_received(c, port, status):
    """alertmanager_alerts_received_total of that status, all versions."""
    st, body = am_get(c, port, "/metrics")
    assert st == 200, st
    return sum(float(m) for m in re.findall(
        r'^alertmanager_alerts_received_total\{[^}]*status="%s"[^}]*\} (\S+)$'
        % status, body, re.M))


def cable(c, port):
    """The cable_down alert of n1-n2 at that Alertmanager, or None."""
    try:
        return am_alerts(c, port).get(("cable_down", "n1-n2"))
    except OSError:
        return None


class Ams:
    """The three Alertmanagers, started and restarted in the coordinator's
    namespace."""

    def __init__(self, c, d):
        self.c, self.d, self.procs = c, d, {}
        self.conf = os.path.join(d, "am.yml")
        with open(self.conf, "w") as f:
            f.write(AM_CONF)

    def start(self, port):
        argv = [which("prometheus-alertmanager"),
                "--config.file=" + self.conf,
                "--storage.path=" + os.path.join(self.d, "am-%d" % port),
                "--web.listen-address=127.0.0.1:%d" % port]
        if port in HA:
            i = HA.index(port)
            argv += ["--cluster.listen-address=127.0.0.1:%d" % HA_GOSSIP[i],
                     "--cluster.peer=127.0.0.1:%d" % HA_GOSSIP[1 - i]]
        else:
            argv += ["--cluster.listen-address="]
        os.makedirs(os.path.join(self.d, "am-%d" % port), exist_ok=True)
        self.procs[port] = self.c.spawn(
            "coord", argv, os.path.join(self.d, "am-%d.log" % port),
            name="alertmanager-%d" % port)

    def wait_ready(self, port):
        def ready():
            if not self.procs[port].alive():
                raise AssertionError("alertmanager %d exited:\n%s" % (
                    port, cl.tail(self.procs[port].log)))
            try:
                return am_get(self.c, port, "/-/ready")[0] == 200
            except OSError:
                return False
        cl.wait_for(ready, 30, "alertmanager on %d ready" % port)

    def stop(self, port):
        self.procs[port].stop(grace=20)


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    d = tempfile.mkdtemp(prefix="ringd-am-")
    os.chmod(d, 0o755)
    c = cl.Cluster(ORDER, new_prefix())
    ams = Ams(c, d)

    def prepare(c):
        for p in (SINGLE,) + HA:
            ams.start(p)
        for p in (SINGLE,) + HA:
            ams.wait_ready(p)
    extra = SHORT_SURVEY + [
        "alert_hold_down %ds" % HOLD_DOWN_S,
        "alertmanager_url http://127.0.0.1:%d" % SINGLE,
        "alertmanager_url http://127.0.0.1:%d/" % HA[0],
        "alertmanager_url http://127.0.0.1:%d" % HA[1],
        "alertmanager_resend_interval %ds" % RESEND_S,
        "alertmanager_timeout 2s",
        "metrics_listen 127.0.0.1:%d" % METRICS_PORT,
        # Only the cuts' own alerts: no re-check after a mend (its
        # figures on a loaded machine could say edge_degraded), no light
        # checks, and (agents) no counters (a cut drops packets:
        # port_errors).
        "recheck_settle 0", "light_check_interval 0"]
    try:
        with surveyed(c, ringd_bin, prepare=prepare, quiet=True,
                      coord_extra=extra,
                      agent_extra=["counters_interval 0"]) as r:
            try:
                yield c, r, ams
            finally:
                # A cluster member leaves its peers first: more time than
                # the daemons' stop allows.
                for p in list(ams.procs):
                    ams.stop(p)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def all_up(r):
    """Every node up again after a restart (status exits 1 while a cable
    is cut, so not r.wait_all_up)."""
    cl.wait_for(lambda: all(n["state"] == "up"
                            for n in r.status_doc()["nodes"]), 30,
                "every node up")


def healthy(r):
    cl.wait_for(lambda: r.status_doc()["health"] == "healthy", 30,
                "the coordinator to say healthy")


def test_cut_cable_at_every_alertmanager(ring):
    """Cut: cable_down naming the cable at the single one and both HA
    members within 2 s, with the documented labels; the watchdog fires
    at each and in `ringctl alerts`. Mended: gone from each after the
    hold-down, because the resolution arrived (counted by each)."""
    c, r, ams = ring
    healthy(r)
    ports = (SINGLE,) + HA
    for p in ports:
        w = cl.wait_for(lambda: am_alerts(c, p).get(("watchdog",
                                                     "coordinator")),
                        RESEND_S + 5, "the watchdog at %d" % p)
        assert w["labels"]["severity"] == "info", w
    rc, doc, err = r.json("alerts")
    assert ("watchdog", "coordinator") in {
        (a["rule"], a["subject"]) for a in doc["alerts"]}, doc
    resolved0 = {p: am_received(c, p, "resolved") for p in ports}
    t0 = time.monotonic()
    c.cut("n1", "n2")
    try:
        for p in ports:
            a = cl.wait_for(lambda: cable(c, p), ALERT_S -
                            (time.monotonic() - t0), "cable_down at %d" % p,
                            interval=0.02)
        took = time.monotonic() - t0
        for p in ports:
            a = cable(c, p)
            assert a["labels"] == {
                "alertname": "cable_down", "severity": "critical",
                "subject": "n1-n2", "edge": "n1-n2", "ring": "ring-n1",
                "coordinator": "coordinator"}, a
            assert "cable n1 eth2 - n2 eth1 is down" in \
                a["annotations"]["summary"], a
            assert a["generatorURL"] == "http://127.0.0.1:%d/" % \
                METRICS_PORT, a
            assert a["status"]["state"] == "active", a
    finally:
        c.restore("n1", "n2")
    t1 = time.monotonic()
    for p in ports:
        cl.wait_for(lambda: cable(c, p) is None and
                    am_received(c, p, "resolved") > resolved0[p],
                    RESOLVED_S + 5 - (time.monotonic() - t1),
                    "the resolution at %d" % p)
    # Sooner than the endsAt of the last resend: resolved, not timed out.
    assert time.monotonic() - t1 < 4 * RESEND_S, time.monotonic() - t1
    print("cut to every Alertmanager: %.2f s; mended to gone: %.2f s" %
          (took, time.monotonic() - t1))


def test_restart_adds_nothing(ring):
    """A cable cut across a coordinator restart: the same alerts (same
    fingerprints and startsAt) at each Alertmanager after the restart's
    resends, none resolved and fired again; the only news is the restart's
    own info alert, coordinator_restarted, fired and resolved once the
    coordinator has re-learned. Then mended, resolved."""
    c, r, ams = ring
    healthy(r)
    ports = (SINGLE,) + HA
    restart = ("coordinator_restarted", "coordinator")

    def firing_now(p):
        return {k: (a["fingerprint"], a["startsAt"])
                for k, a in am_alerts(c, p).items() if k != restart}
    c.cut("n3", "n4")
    try:
        cl.wait_for(lambda: all(am_alerts(c, p).get(("cable_down", "n3-n4"))
                                for p in ports), 10,
                    "cable_down n3-n4 everywhere")
        before = {p: firing_now(p) for p in ports}
        resolved = {p: am_received(c, p, "resolved") for p in ports}
        mark = LogMark(r.coord.log)
        r.coord.signal(15)
        assert r.coord.wait(10) is not None, "coordinator did not stop"
        firing = {p: am_received(c, p, "firing") for p in ports}
        r.start_coordinator()
        all_up(r)
        # Re-learned, and two resends after that: what the new process
        # says.
        mark.wait(r"alert resolved: coordinator_restarted", 30)
        again = {p: am_received(c, p, "firing") for p in ports}
        for p in ports:
            cl.wait_for(lambda: am_received(c, p, "firing") >=
                        again[p] + 2 * len(before[p]), 3 * RESEND_S,
                        "the restarted coordinator's resends at %d" % p)
        for p in ports:
            assert am_received(c, p, "firing") > firing[p], p
            assert firing_now(p) == before[p], (p, before[p], firing_now(p))
            # coordinator_restarted's resolution, nothing else.
            assert am_received(c, p, "resolved") <= resolved[p] + 1, p
        news = re.findall(r"alert (?:fired|resolved): (\S+)", mark.new())
        assert set(news) <= {"coordinator_restarted"}, mark.new()[-3000:]
    finally:
        c.restore("n3", "n4")
    for p in ports:
        cl.wait_for(lambda: not am_alerts(c, p).get(("cable_down",
                                                      "n3-n4")),
                    RESOLVED_S + 10, "n3-n4 resolved at %d" % p)


def test_down_alertmanager_gets_what_it_is_owed(ring):
    """The single Alertmanager stopped; a cable cut and mended while it is
    down (the HA pair sees both); a coordinator restart meanwhile (the
    owed resolution is in the store); it comes back after a real outage
    and receives the resolution it was owed, and nothing fires there."""
    c, r, ams = ring
    healthy(r)
    ams.stop(SINGLE)
    t_down = time.monotonic()
    mark = LogMark(r.coord.log)
    resolved = {p: am_received(c, p, "resolved") for p in HA}
    c.cut("n2", "n3")
    try:
        for p in HA:
            cl.wait_for(lambda: am_alerts(c, p).get(("cable_down", "n2-n3")),
                        ALERT_S + 3, "cable_down n2-n3 at %d" % p)
    finally:
        c.restore("n2", "n3")
    for p in HA:
        cl.wait_for(lambda: not am_alerts(c, p).get(("cable_down", "n2-n3"))
                    and am_received(c, p, "resolved") > resolved[p],
                    RESOLVED_S + 5, "n2-n3 resolved at %d" % p)
    # The restart: what is owed to the one down comes from the store.
    r.coord.signal(15)
    assert r.coord.wait(10) is not None, "coordinator did not stop"
    r.start_coordinator()
    all_up(r)
    # A real outage: several failed attempts, the backoff at its cap.
    time.sleep(max(0.0, 3 * RESEND_S - (time.monotonic() - t_down)))
    ams.start(SINGLE)
    ams.wait_ready(SINGLE)
    t_up = time.monotonic()
    # Each resolution since it stopped is owed to it (cable_down and
    # ring_broken of the cut, coordinator_restarted of the restart); a new
    # process: every resolution it counts came after it started.
    owed = re.findall(r"alert resolved: (\S+ \S+):", mark.new())
    assert ("cable_down n2-n3") in owed, owed
    cl.wait_for(lambda: am_received(c, SINGLE, "resolved") >= len(owed),
                2 * RESEND_S + 5, "the %d owed resolutions at the one back "
                "up" % len(owed))
    print("down %.1f s; owed resolution %.1f s after it was back" %
          (t_up - t_down, time.monotonic() - t_up))
    got = am_alerts(c, SINGLE)
    assert ("cable_down", "n2-n3") not in got, got
    cl.wait_for(lambda: ("watchdog", "coordinator") in am_alerts(c, SINGLE),
                2 * RESEND_S, "the watchdog resent to the one back up")
    log = open(r.coord.log, errors="replace").read()
    assert "alertmanager http://127.0.0.1:%d: delivering again" % SINGLE \
        in log, log[-3000:]
