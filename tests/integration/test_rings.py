"""A site of several rings under one coordinator (issue 24): every ring
recognised, ordered, ranked, watched and alerted on its own.

Three rings of four on one management network, one named by a `ring`
directive (pod-a) and two discovered: each ring's id, class, order and
rank order exact; a cut cable on one ring (status, alerts and every ring's
ranks sampled together before, during and after, as test_truth.py does)
and a degraded edge on another (light-check samples, as test_degrade.py)
alert that ring alone; a re-check on one ring tests nothing on the
others. Then a site of sixteen rings of four: one survey publishes every
ring, in one ring's rounds (the rings side by side); the wall times of the
sixteen-ring and of a one-ring survey are printed, not asserted.

Ring ids, members and rank orders go by names in byte order (n10 before
n9), as the coordinator compares them."""

import json
import re
import threading
import time

import pytest

import cluster as cl
from conftest import new_prefix
from ringtest import (FAST_AGENT, NO_AUTO_SURVEY,
                      SHORT_SURVEY, SurveyRingd, byte_canonical_ring,
                      byte_edge_name, neighbours_heard, ring_edge_names,
                      ring_id, ring_views, shape_ring, site_rings,
                      stop_site_and_check)
from test_ring import expected_ranks

# pod-a is named by a directive (its members in another order than the
# cabling); the others are discovered. Ring C's lowest name in byte order
# is n10.
POD_A = ["n1", "n3", "n2", "n4"]
RING_B = ["n5", "n8", "n6", "n7"]
RING_C = ["n9", "n10", "n12", "n11"]
THREE = [POD_A, RING_B, RING_C]
IDS = {"pod-a": POD_A, ring_id(RING_B): RING_B, ring_id(RING_C): RING_C}
A, B, C = "pod-a", ring_id(RING_B), ring_id(RING_C)
RATE = "1gbit"
# The degraded edge: a quarter of its rate, well under the rule's 70% of
# a baseline even if the busy survey measured it low.
QUARTER = "250mbit"
LIGHT_S = 4
HOLD_DOWN_S = 1
SLACK_S = LIGHT_S + 15
SAMPLE_S = 0.25
# Alerts that never make health (info, the watchdog).
QUIET_RULES = ("watchdog", "coordinator_restarted")
HEALTH_RANK = {"healthy": 0, "relearning": 1, "degraded": 2, "critical": 3}


def counting(alerts):
    """The firing alerts that count for health."""
    return [a for a in alerts
            if a.get("state", "firing") in ("firing", "clearing") and
            a["severity"] != "info" and a["rule"] not in QUIET_RULES]


def keyed(alerts):
    return {(a["rule"], a["subject"], a.get("ring")) for a in alerts}


def reports(stderr):
    """ringctl's JSON reports on stderr: [(kind, object)], kind "error"
    or "notice"."""
    out = []
    for line in stderr.splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            out += [(k, v) for k, v in doc.items() if isinstance(v, dict)]
    return out


def report_text(stderr):
    """Every string of ringctl's JSON reports (error/notice objects)."""
    out = []
    for line in stderr.splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        for obj in doc.values() if isinstance(doc, dict) else ():
            if isinstance(obj, dict):
                out += [str(v) for v in obj.values()]
    return " ".join(out)


class SiteRingd(SurveyRingd):
    """SurveyRingd for a site of rings: the `ring` directives in the
    coordinator's config, agents started in batches."""

    def __init__(self, cluster, bindir, directives=(), **kw):
        super().__init__(cluster, bindir, **kw)
        self.coord_extra += list(directives)

    def start_site(self, batch=16, timeout=90):
        self.start_coordinator()
        self.start_agents_batched(batch=batch, timeout=timeout)
        self.wait_all_up(timeout)
        cl.wait_for(lambda: neighbours_heard(self, self.cl.order), timeout,
                    "every node to hear its two neighbours", interval=0.5)

    def survey_wait(self, timeout_s=120):
        """survey --wait; (exit status, seconds it took)."""
        t0 = time.monotonic()
        p = self.ringctl("survey", "--wait", fmt=None, timeout_s=timeout_s)
        took = time.monotonic() - t0
        assert p.returncode in (0, 1), "survey --wait: rc %d %s\n%s" % (
            p.returncode, p.stderr, self.log_tails())
        return p.returncode, took

    def ranks(self, ring, fmt="json"):
        """(rc, parsed JSON or text, stderr) of ranks --ring ring."""
        if fmt == "json":
            return self.json("ranks", "--ring", ring)
        p = self.ringctl("ranks", "--ring", ring, fmt=fmt)
        return p.returncode, p.stdout, p.stderr


# ------------------------------------------------------------ the harness

def test_site_wiring(root):
    """Cluster.site: each ring cabled as a single ring (eth2 of node k to
    eth1 of node k+1, a /30 per cable, numbered on across rings), every
    node on the one management network, no data path between rings."""
    rings = site_rings(3)
    c = cl.Cluster.site(rings, new_prefix())
    with c:
        assert c.rings == rings and c.order == [n for x in rings for n in x]
        assert [x.id for x in c.cables] == list(range(1, 13))
        for ring in rings:
            for i, a in enumerate(ring):
                b = ring[(i + 1) % len(ring)]
                (cab,) = c.cables_between(a, b)
                assert (cab.a, cab.a_port, cab.b, cab.b_port) == \
                    (a, "eth2", b, "eth1"), cab
                assert c.ping(a, cab.addr_of(b)), (a, b)
            assert c.ring_of(ring[0]) == ring
        # Management: every node reaches every other; data: a node's
        # addresses on another ring are not reachable from it.
        a, far = rings[0][0], rings[2][1]
        assert c.ping(a, c.node(far).mgmt_addr)
        for p in c.node(far).ports.values():
            assert not c.ping(a, p.addr, timeout=0.3), (a, far, p)
        # A cut is one ring's.
        x, y = rings[1][0], rings[1][1]
        c.cut(x, y)
        assert "LOWER_UP" not in c.link_flags(x, "eth2")
        assert all("LOWER_UP" in c.link_flags(n, p)
                   for ring in (rings[0], rings[2]) for n in ring
                   for p in ("eth1", "eth2"))
        c.restore(x, y)
        assert "LOWER_UP" in c.link_flags(x, "eth2")


def test_site_refuses_a_bad_layout():
    for rings, kw in (([["n1"]], {}), ([["n1", "n2"], ["n2", "n3"]], {}),
                      ([], {}), ([["n1", "n2"]], {"switch": True}),
                      ([["n1", "n2"]], {"twins": True})):
        with pytest.raises(ValueError):
            cl.Cluster.site(rings, "rgtbad", **kw)
    with pytest.raises(ValueError):
        cl.Cluster(["n1", "n2"], "rgtbad", rings=[["n1", "n2"]])


# ------------------------------------------------------------ three rings

@pytest.fixture(scope="module")
def site(root, ringd_bin):
    """Three rings of four, every cable at 1 Gbit, surveyed once by hand
    (no automatic survey: one survey of the whole site); light checks
    every LIGHT_S, re-checks 2 s after a change, a short hold-down."""
    c = cl.Cluster.site(THREE, new_prefix())
    c.up()
    r = None
    try:
        shape_ring(c, RATE)
        r = SiteRingd(c, ringd_bin, nominal="10G", grace="600s",
                      coord_extra=["survey_settle 3600s",
                                   "light_check_interval %ds" % LIGHT_S,
                                   "alert_hold_down %ds" % HOLD_DOWN_S,
                                   "recheck_settle 2s",
                                   "watchdog_interval 0"],
                      agent_extra=["counters_interval 1s"],
                      directives=["ring pod-a n1 n2 n3 n4"],
                      coord_debug="survey")
        r.setup_pki()
        r.start_site(batch=12)
        rc, took = r.survey_wait()
        r.first_survey_rc = rc
        yield c, r
    finally:
        stop_site_and_check(c, r)


def site_status(r):
    rc, doc, err = r.json("status")
    assert doc is not None, (rc, err)
    return rc, doc


def wait_site_healthy(r, timeout=30):
    return cl.wait_for(lambda: (lambda d: d if d[1]["health"] == "healthy"
                                else None)(site_status(r)),
                       timeout, "the site healthy", interval=0.25)


def test_three_rings_each_exact(site):
    """After one survey: kind "rings", three RingViews with exact ids,
    kinds, members and orders; each ring's ranks exact by --ring (JSON
    and a hostfile); ranks without --ring names the rings and fails; an
    unknown ring is refused naming the rings; the site is healthy."""
    c, r = site
    assert r.first_survey_rc == 0, "survey --wait exit %d (healthy is 0)" % \
        r.first_survey_rc
    rc, doc = site_status(r)
    assert rc == 0 and doc["health"] == "healthy", doc.get("health_why")
    assert not doc.get("alerts"), doc.get("alerts")
    top = doc["topology"]
    assert top["kind"] == "rings", top["kind"]
    assert not top.get("order"), top.get("order")
    assert top.get("live_kind") == "rings", top.get("live_kind")
    assert not top.get("not_surveyed"), top.get("not_surveyed")
    views = ring_views(top)
    assert sorted(views) == sorted(IDS), sorted(views)
    for rid, phys in IDS.items():
        v = views[rid]
        want = byte_canonical_ring(phys)
        assert v["configured"] is (rid == A), v
        assert v["kind"] == "ring", v
        assert v["nodes"] == sorted(phys), v
        assert v["order"] == want, (rid, v["order"], want)
        assert v.get("n_components", 1) == 1, v
        assert v["live_kind"] == "ring" and v["order_valid"] is True, v
        assert not v.get("not_surveyed"), v
        assert v["health"] == "healthy" and not v.get("alerts_firing"), v
        # Its ranks: the JSON rows and a launcher's hostfile.
        rrc, rdoc, err = r.ranks(rid)
        assert rrc == 0, "ranks --ring %s: rc %d %s" % (rid, rrc, err)
        assert rdoc["kind"] == "ring", rdoc
        assert rdoc["ranks"] == expected_ranks(c, want), (rid, rdoc)
        hrc, text, err = r.ranks(rid, fmt="hostfile")
        assert hrc == 0, (rid, hrc, err)
        hosts = [ln.split()[0] for ln in text.splitlines()
                 if ln.strip() and not ln.startswith("#")]
        assert hosts == [c.node(n).mgmt_addr for n in want], (rid, text)
    # Every cable of every ring an edge of the site, measured; nothing
    # between rings.
    edges = {e["edge"]: e for e in top["edges"]}
    assert sorted(edges) == sorted(n for ring in THREE
                                   for n in ring_edge_names(ring)), \
        sorted(edges)
    for e in edges.values():
        assert e["verified"] is True and "error" not in e, e
        assert all(g > 0 for g in e["gbps_a_to_b_measured"] +
                   e["gbps_b_to_a_measured"]), e
    # One ring's status: that ring's topology, as a site of one ring, and
    # nothing of another ring's (no edge, diagonal, node, and no finding
    # naming one of its nodes).
    for rid, phys in IDS.items():
        src, sdoc, err = r.json("status", "--ring", rid)
        assert src == 0, (rid, src, err)
        st = sdoc["topology"]
        assert st["kind"] == "ring" and st["order"] == \
            byte_canonical_ring(phys), (rid, st)
        assert sorted(e["edge"] for e in st["edges"]) == \
            ring_edge_names(phys), (rid, st["edges"])
        assert {x for d in st["diagonals"] for x in d["pair"].split("-")} \
            <= set(phys), (rid, st["diagonals"])
        assert sorted(n["node"] for n in sdoc["nodes"]) == sorted(phys), \
            (rid, sdoc["nodes"])
        strangers = [n for n in c.order if n not in phys]
        for f in st["findings"] + st["anomalies"]:
            text = f.get("finding") or f.get("anomaly")
            named = [n for n in strangers if re.search(r"\b%s\b" % n, text)]
            assert not named, "ring %s: a finding names %s of other rings: " \
                "%s (%s)" % (rid, named, f.get("code") or f.get("kind"), text)
    # ranks of the site: which rings there are, and --ring to pick one.
    p = r.ringctl("ranks", fmt="json")
    assert p.returncode == 1, (p.returncode, p.stdout, p.stderr)
    said = [o for _, o in reports(p.stderr)
            if o.get("code") == "ring_required"]
    assert len(said) == 1, p.stderr
    assert sorted(said[0]["value"].split(",")) == sorted(IDS), said
    assert "--ring" in said[0]["fix"], said
    # An unknown ring: refused, naming it and the rings there are.
    p = r.ringctl("ranks", "--ring", "pod-z", fmt="json")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    said = report_text(p.stderr)
    assert "pod-z" in said and all(rid in said for rid in IDS), p.stderr


class RingSampler:
    """status, alerts and every ring's ranks, together, every SAMPLE_S;
    each sample tagged with the phase and checked as it is taken: the
    rings other than `subject` healthy and untouched at every moment, no
    alert of theirs, their ranks unchanged; the site's health at least as
    bad as any ring's; healthy only when nothing fires."""

    def __init__(self, r, subject, want_ranks):
        self.r = r
        self.subject = subject
        self.want_ranks = want_ranks  # {ring id: rank rows}
        self.phase = "start"
        self.samples = []
        self.errors = []
        self.stop_ev = threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)

    def __enter__(self):
        self.t.start()
        return self

    def __exit__(self, *exc):
        self.stop_ev.set()
        self.t.join(20)

    def take(self):
        phase = self.phase
        rc, st, err = self.r.json("status")
        arc, al, aerr = self.r.json("alerts")
        assert st is not None and al is not None, (rc, err, arc, aerr)
        ranks = {rid: self.r.ranks(rid)[:2] for rid in self.want_ranks}
        top = st.get("topology") or {}
        s = {"phase": phase, "t": time.monotonic(), "rc": rc,
             "health": st["health"], "alerts_rc": arc,
             "alerts_health": al.get("health"),
             "firing": counting(st.get("alerts", [])),
             "alerts_firing": counting(al.get("alerts", [])),
             "views": ring_views(top), "ranks": ranks}
        self.check(s)
        self.samples.append(s)
        return s

    def check(self, s):
        bad = []
        for a in s["firing"] + s["alerts_firing"]:
            if a.get("ring") != self.subject:
                bad.append("alert %s %s of ring %r (only %s has trouble)" %
                           (a["rule"], a["subject"], a.get("ring"),
                            self.subject))
        if (s["health"] == "healthy") != (not s["firing"]):
            bad.append("health %s with %d alerts firing" %
                       (s["health"], len(s["firing"])))
        if (s["rc"] == 0) != (s["health"] == "healthy"):
            bad.append("status exit %d with health %s" % (s["rc"],
                                                         s["health"]))
        if (s["alerts_health"] == "healthy") != (not s["alerts_firing"]):
            bad.append("alerts says %s with %d firing" % (
                s["alerts_health"], len(s["alerts_firing"])))
        if sorted(s["views"]) != sorted(IDS):
            bad.append("rings %s" % sorted(s["views"]))
        for rid, v in s["views"].items():
            if HEALTH_RANK.get(v.get("health"), 9) > \
                    HEALTH_RANK.get(s["health"], -1):
                bad.append("ring %s %s, the site %s" % (rid, v.get("health"),
                                                        s["health"]))
            if rid == self.subject:
                continue
            if (v.get("health") != "healthy" or v.get("alerts_firing") or
                    v.get("live_kind") != "ring" or
                    v.get("order_valid") is not True):
                bad.append("ring %s disturbed: %s" % (rid, {
                    k: v.get(k) for k in ("health", "health_cause",
                                          "health_subject", "alerts_firing",
                                          "live_kind", "order_valid")}))
        for rid, (rrc, doc) in s["ranks"].items():
            rows = (doc or {}).get("ranks")
            if rows != self.want_ranks[rid]:
                bad.append("ranks --ring %s changed (rc %d)" % (rid, rrc))
            elif rid != self.subject and rrc != 0:
                bad.append("ranks --ring %s exit %d" % (rid, rrc))
        if bad:
            self.errors.append((s["phase"], bad))

    def run(self):
        while not self.stop_ev.is_set():
            try:
                self.take()
            except Exception as e:
                self.errors.append((self.phase, ["sampler: %r" % e]))
            self.stop_ev.wait(SAMPLE_S)

    def in_phase(self, phase):
        return [s for s in self.samples if s["phase"] == phase]

    def wait(self, pred, timeout, what):
        return cl.wait_for(lambda: (lambda s: s if s and pred(s) else None)(
            self.samples[-1] if self.samples else None), timeout, what,
            interval=0.1)

    def count(self, phase, n, timeout=30):
        cl.wait_for(lambda: len(self.in_phase(phase)) >= n, timeout,
                    "%d samples in phase %s" % (n, phase), interval=0.1)


def all_ranks(c):
    return {rid: expected_ranks(c, byte_canonical_ring(phys))
            for rid, phys in IDS.items()}


def test_cut_cable_alerts_its_ring_only(site):
    """Cut n6-n8 of ring B (both wire ends down: no carrier at either
    port): B's live class is a line, its order invalid, cable_down fires
    with ring B; pod-a and C stay healthy with no alert and their ranks at
    every sample, before, during and after the mend."""
    c, r = site
    wait_site_healthy(r)
    cut = byte_edge_name("n6", "n8")
    with RingSampler(r, B, all_ranks(c)) as smp:
        smp.phase = "before"
        smp.count("before", 4)
        smp.phase = "cut"
        c.cut("n6", "n8")
        try:
            smp.wait(lambda s: s["phase"] == "cut" and
                     ("cable_down", cut, B) in keyed(s["firing"]) and
                     s["views"][B].get("order_valid") is False, 10,
                     "cable_down on ring %s" % B)
            smp.phase = "during"
            smp.count("during", 4)
        finally:
            smp.phase = "mended"
            c.restore("n6", "n8")
        smp.wait(lambda s: s["phase"] == "mended" and
                 s["health"] == "healthy" and
                 s["views"][B].get("order_valid") is True,
                 HOLD_DOWN_S + 20, "ring %s healthy after the mend" % B)
        smp.phase = "after"
        smp.count("after", 4)
    assert not smp.errors, smp.errors[:10]
    for s in smp.in_phase("before") + smp.in_phase("after"):
        assert s["health"] == "healthy" and not s["firing"], s["firing"]
        assert all(v["health"] == "healthy" and v["order_valid"] is True
                   for v in s["views"].values()), s["views"]
    during = smp.in_phase("during")
    for s in during:
        v = s["views"][B]
        assert v["live_kind"] == "line", v
        assert v["live_cables_down"] == [cut], v
        assert v["order_valid"] is False and v.get("order_invalid"), v
        assert v["health"] != "healthy" and v["alerts_firing"] >= 1, v
        assert ("cable_down", cut, B) in keyed(s["firing"]), s["firing"]
        assert s["health"] == v["health"], (s["health"], v["health"])
        # The published order stands, and is no longer valid.
        rrc, doc = s["ranks"][B]
        assert rrc == 1, "ranks --ring %s during the cut: exit %d" % (B, rrc)
    # One ring's status gives that ring's alerts: none for pod-a and C.
    for rid in (A, C):
        src, sdoc, err = r.json("status", "--ring", rid)
        assert src == 0 and sdoc["health"] == "healthy" and \
            not counting(sdoc.get("alerts", [])), (rid, src, sdoc)


def test_degraded_edge_alerts_its_ring_only(site):
    """Shape n10-n12 of ring C to a quarter of its rate: edge_degraded on
    ring C within a light-check interval or two; C degraded, the site
    degraded, pod-a and B healthy; the rate back: resolved."""
    c, r = site
    wait_site_healthy(r)
    edge = byte_edge_name("n10", "n12")
    c.shape("n10", "n12", QUARTER)
    try:
        rc, doc = cl.wait_for(
            lambda: (lambda d: d if ("edge_degraded", edge, C) in
                     keyed(counting(d[1].get("alerts", []))) else None)(
                site_status(r)),
            2 * LIGHT_S + SLACK_S, "edge_degraded for %s on ring %s" %
            (edge, C), interval=0.25)
        firing = counting(doc["alerts"])
        assert all(a.get("ring") == C for a in firing), firing
        views = ring_views(doc["topology"])
        assert views[C]["health"] == "degraded", views[C]
        assert views[C]["health_cause"] == "edge_degraded", views[C]
        assert views[C]["health_subject"] == edge, views[C]
        for rid in (A, B):
            assert views[rid]["health"] == "healthy", views[rid]
            assert not views[rid].get("alerts_firing"), views[rid]
        assert doc["health"] == "degraded" and rc == 1, doc["health"]
        src, sdoc, err = r.json("status", "--ring", C)
        assert sdoc["health"] == "degraded" and src == 1, (src, sdoc)
        assert [(a["rule"], a["subject"]) for a in
                counting(sdoc["alerts"])] == [("edge_degraded", edge)], \
            sdoc["alerts"]
        for rid in (A, B):
            src, sdoc, err = r.json("status", "--ring", rid)
            assert src == 0 and sdoc["health"] == "healthy" and \
                not counting(sdoc.get("alerts", [])), (rid, sdoc)
    finally:
        c.shape("n10", "n12", RATE)
    cl.wait_for(lambda: not any(a["rule"] == "edge_degraded" for a in
                                site_status(r)[1].get("alerts", [])),
                2 * LIGHT_S + HOLD_DOWN_S + SLACK_S,
                "edge_degraded resolved")


def edge_facts(top, rings):
    """What a test of an edge changes: its figures and re-check time
    (measured_ms is not in the JSON: age_s stands for it), for the edges
    of rings."""
    names = {n for ring in rings for n in ring_edge_names(ring)}
    return {e["edge"]: {"gbps": (e["gbps_a_to_b_measured"],
                                 e["gbps_b_to_a_measured"]),
                        "lat": e["lat_p50_us_measured"],
                        "rechecked": e.get("rechecked"),
                        "age_s": e["age_s"]}
            for e in top["edges"] if e["edge"] in names}


def assert_untouched(before, after, elapsed):
    """No edge of before tested again in the elapsed seconds between the
    two snapshots (edge_facts)."""
    assert sorted(after) == sorted(before)
    for name, b in before.items():
        a = after[name]
        assert a["gbps"] == b["gbps"] and a["lat"] == b["lat"], (name, b, a)
        assert a["rechecked"] == b["rechecked"], (name, b, a)
        grew = a["age_s"] - b["age_s"]
        assert abs(grew - elapsed) <= 2.5, (name, b, a, elapsed)


def test_recheck_stays_on_its_ring(site):
    """A cable of pod-a down and up: its re-check measures that edge
    again; the edges of B and C keep their figures, re-check times and
    measurement times (their age grows by the time that passed)."""
    c, r = site
    wait_site_healthy(r)
    edge = byte_edge_name("n1", "n3")
    _, doc = site_status(r)
    before, t0 = edge_facts(doc["topology"], [RING_B, RING_C]), \
        time.monotonic()
    c.cut("n1", "n3")
    try:
        cl.wait_for(lambda: ("cable_down", edge, A) in keyed(
            site_status(r)[1].get("alerts", [])), 10,
            "cable_down for %s on ring %s" % (edge, A))
    finally:
        c.restore("n1", "n3")
    top = r.wait_recheck([edge], doc["topology"])
    # Light checks go on; let a few pass too.
    time.sleep(LIGHT_S)
    _, doc = site_status(r)
    after, t1 = edge_facts(doc["topology"], [RING_B, RING_C]), \
        time.monotonic()
    assert_untouched(before, after, t1 - t0)
    e = {x["edge"]: x for x in top["edges"]}[edge]
    assert e.get("rechecked"), e
    wait_site_healthy(r)


def test_survey_of_one_ring(site):
    """survey --ring B: B's edges measured again and B's survey time
    moved; pod-a's and C's edges keep their figures and times, and their
    rings their survey time (SurveyRequest.rings: the others keep what
    they had)."""
    c, r = site
    wait_site_healthy(r)
    _, doc = site_status(r)
    others = edge_facts(doc["topology"], [POD_A, RING_C])
    was = {rid: v["surveyed_ms"]
           for rid, v in ring_views(doc["topology"]).items()}
    t0 = time.monotonic()
    p = r.ringctl("survey", "--ring", B, "--wait", fmt=None, timeout_s=120)
    took = time.monotonic() - t0
    assert p.returncode == 0, (p.returncode, p.stdout, p.stderr)
    _, doc = site_status(r)
    t1 = time.monotonic()
    top = doc["topology"]
    views = ring_views(top)
    assert views[B]["surveyed_ms"] > was[B], (views[B], was)
    for rid in (A, C):
        assert views[rid]["surveyed_ms"] == was[rid], (rid, views[rid], was)
    for name, e in edge_facts(top, [RING_B]).items():
        assert e["age_s"] <= took + 2, (name, e, took)
    assert_untouched(others, edge_facts(top, [POD_A, RING_C]), t1 - t0)
    assert views[B]["order"] == byte_canonical_ring(RING_B), views[B]
    wait_site_healthy(r)


# ------------------------------------------------------------ sixteen rings

N_RINGS = 16
SITE_RATE = "100mbit"


def one_site(c, ringd_bin, directives=()):
    """c (a site, not up) brought up with every cable at SITE_RATE, the
    daemons started with short tests and no automatic survey, every node
    hearing its neighbours; returns the Ringd."""
    c.up()
    shape_ring(c, SITE_RATE)
    r = SiteRingd(c, ringd_bin, grace="600s",
                  coord_extra=NO_AUTO_SURVEY + SHORT_SURVEY +
                  ["light_check_interval 0", "watchdog_interval 0"],
                  agent_extra=FAST_AGENT, directives=directives)
    r.setup_pki()
    r.start_site(batch=16, timeout=120)
    return r


def test_sixteen_rings_in_one_rings_rounds(root, ringd_bin):
    """One ring of four surveyed alone, then sixteen rings of four under
    one coordinator: one survey publishes all sixteen, each ring's order
    exact, in the rounds of one ring (rings tested side by side, not one
    after another). The wall times are printed, not asserted."""
    one = cl.Cluster.site([site_rings(1)[0]], new_prefix())
    r = None
    try:
        r = one_site(one, ringd_bin)
        rc, took1 = r.survey_wait()
        top1 = r.topology()
        assert top1["kind"] == "ring", top1["kind"]
        rounds1, wall1 = top1["rounds"], top1["survey_wall_s"]
    finally:
        stop_site_and_check(one, r)

    rings = site_rings(N_RINGS)
    c = cl.Cluster.site(rings, new_prefix())
    r = None
    try:
        t0 = time.monotonic()
        r = one_site(c, ringd_bin)
        t_up = time.monotonic() - t0
        rc, took = r.survey_wait(timeout_s=300)
        doc = r.status_doc()
        top = doc["topology"]
        print("\n%d rings of 4 (%d agents, all up and heard in %.1f s): "
              "survey %.1f s wall (survey_wall_s %.1f, %d rounds); "
              "1 ring of 4: %.1f s wall (survey_wall_s %.1f, %d rounds)" % (
                  N_RINGS, len(c.order), t_up, took,
                  top["survey_wall_s"], top["rounds"], took1, wall1,
                  rounds1))
        assert top["kind"] == "rings", top["kind"]
        views = ring_views(top)
        assert sorted(views) == sorted(ring_id(x) for x in rings), \
            sorted(views)
        for phys in rings:
            v = views[ring_id(phys)]
            assert v["kind"] == "ring", v
            assert v["nodes"] == sorted(phys), v
            assert v["order"] == byte_canonical_ring(phys), (v, phys)
            assert v["live_kind"] == "ring" and v["order_valid"] is True, v
        assert not top.get("not_surveyed"), top.get("not_surveyed")
        edges = {e["edge"]: e for e in top["edges"]}
        assert sorted(edges) == sorted(n for x in rings
                                       for n in ring_edge_names(x))
        assert all(e["verified"] is True and "error" not in e
                   for e in edges.values()), \
            [e for e in edges.values() if "error" in e][:3]
        assert rc == 0 and doc["health"] == "healthy", (
            rc, doc["health"], doc.get("health_why"))
        # Side by side: the rounds of one ring, not sixteen rings' worth.
        assert top["rounds"] == rounds1, (top["rounds"], rounds1)
    finally:
        stop_site_and_check(c, r)
