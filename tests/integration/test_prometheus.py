"""For Prometheus users (issue 13): the alerting rules
(docs/prometheus/ringd.rules.yml) and the Grafana dashboard
(docs/grafana/ringd-dashboard.json) name only metrics and labels that a
real coordinator exports, read from its endpoint on a surveyed 4-node ring
with a cable cut (so that the alert and down-state series have samples);
promtool accepts the exposition; and a real Prometheus server (Debian's)
scraping that coordinator with the rules raises RingdCableDown and
RingdRingBroken for a cut cable, naming it, and drops them once mended,
and RingdNodeDown for a stopped agent."""

import json
import os
import re
import shutil
import sys
import tempfile
import time

import pytest
import yaml

import cluster as cl
from conftest import new_prefix
from ringtest import SHORT_SURVEY, scrape_metrics, surveyed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "prometheus"))
import promcheck  # noqa: E402

ORDER = ["n1", "n2", "n3", "n4"]
METRICS_PORT = 9466
PROM_PORT = 19090
# Families that have no sample on an emulated ring, and why; their labels
# are those of the family named (the unit test test_metrics.c checks them).
NO_SAMPLES_HERE = {
    "ringd_interface_pcie_link_width":
        ("veth ports have no PCIe link", "ringd_interface_mtu_bytes"),
    "ringd_interface_pcie_link_max_width":
        ("veth ports have no PCIe link", "ringd_interface_mtu_bytes"),
}
TYPE = re.compile(r"^# TYPE (\S+) (\S+)$", re.M)
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? \S+$", re.M)
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="(?:[^"\\]|\\.)*"')


def which(tool):
    path = shutil.which(tool)
    if not path:
        pytest.fail("%s missing: Debian's prometheus package (make test-deps)"
                    % tool)
    return path


@pytest.fixture(scope="module")
def ring(root, ringd_bin):
    which("promtool")
    c = cl.Cluster(ORDER, new_prefix())
    extra = SHORT_SURVEY + ["light_check_interval 2s", "alert_hold_down 1s",
                            "metrics_listen 127.0.0.1:%d" % METRICS_PORT]
    with surveyed(c, ringd_bin, quiet=True, coord_extra=extra,
                  agent_extra=["counters_interval 1s"]) as r:
        yield c, r


def exposition(text):
    """{family: set of label names seen on its samples} and the families
    declared (# TYPE), from a scrape."""
    types = dict(TYPE.findall(text))
    labels = {f: set() for f in types}
    for m in SAMPLE.finditer(text):
        name = m.group(1)
        fam = name if name in types else re.sub(r"_(sum|count|bucket)$", "",
                                                name)
        labels.setdefault(fam, set()).update(LABEL.findall(m.group(2) or ""))
    has = {m.group(1) for m in SAMPLE.finditer(text)}
    return types, labels, has


def cut_scrape(c, r):
    """The exposition while n1-n2 is cut (cable_down and ring_broken fire,
    the edge is down), once the light checks (with a bandwidth sample) and
    counters have samples;
    the cable mended after."""
    cl.wait_for(lambda: "ringd_edge_light_check_ok{" in
                scrape_metrics(c, METRICS_PORT), 30,
                "a light check's result in the metrics")
    # A sample needs counters that do not overlap the survey's own tests.
    cl.wait_for(lambda: "ringd_edge_sample_bytes_per_second{" in
                scrape_metrics(c, METRICS_PORT), 30,
                "a light check's bandwidth sample in the metrics")
    c.cut("n1", "n2")
    try:
        return cl.wait_for(
            lambda: (lambda t: t if 'ringd_alerts_firing{rule="cable_down"'
                     in t and 'ringd_edge_state{' in t else None)(
                scrape_metrics(c, METRICS_PORT)), 15,
            "cable_down in the metrics")
    finally:
        c.restore("n1", "n2")


@pytest.fixture(scope="module")
def scraped(ring):
    c, r = ring
    return exposition(cut_scrape(c, r))


def labels_of(fams, types, labels):
    """The label names the families' samples carry (NO_SAMPLES_HERE's
    by their stand-in)."""
    out = set()
    for f in fams:
        if f == "ALERTS":
            out |= promcheck.ALERTS_LABELS
            continue
        stand_in = NO_SAMPLES_HERE.get(f, (None, None))[1]
        out |= labels.get(f, set()) | labels.get(stand_in, set())
    return out


def check_exprs(exprs, recorded, types, labels, has):
    """Problems of [(where, expr, template labels)] against the
    exposition."""
    bad = []
    for where, expr, tmpl in exprs:
        metrics, rec, used, created = promcheck.names(expr)
        for name in rec:
            if name not in recorded:
                bad.append("%s: recording rule %s is not defined" %
                           (where, name))
                continue
            metrics |= recorded[name][0]
            created |= recorded[name][1]
        for m in sorted(metrics - {"ALERTS"}):
            if m not in types:
                bad.append("%s: %s is not exported" % (where, m))
            elif m not in has and m not in NO_SAMPLES_HERE:
                bad.append("%s: %s has no sample" % (where, m))
        known = labels_of(metrics, types, labels) | created | \
            promcheck.TARGET_LABELS
        for lbl in sorted((used | tmpl) - known):
            bad.append("%s: label %s is on none of %s" %
                       (where, lbl, sorted(metrics)))
    return bad


def recorded_rules():
    """{recording rule: (metrics it reads, labels it makes)}, its own
    recording rules' expanded."""
    out = {}
    for r in promcheck.load_rules():
        if "record" not in r:
            continue
        metrics, rec, _, created = promcheck.names(r["expr"])
        for name in rec:
            metrics |= out[name][0]
            created |= out[name][1]
        out[r["record"]] = (metrics, created)
    return out


def test_rules_name_exported_metrics(scraped):
    types, labels, has = scraped
    exprs = promcheck.rule_exprs()
    assert len(exprs) >= 20, exprs
    bad = check_exprs(exprs, recorded_rules(), types, labels, has)
    assert not bad, "\n".join(bad)
    # The ones whose samples the cut brought.
    assert {"a", "a_interface", "b", "b_interface", "state"} <= \
        labels["ringd_edge_state"]
    assert {"rule", "severity"} <= labels["ringd_alerts_firing"]


def test_dashboard_names_exported_metrics(scraped):
    types, labels, has = scraped
    doc = promcheck.load_dashboard()
    assert not promcheck.problems(doc)
    exprs = promcheck.dashboard_exprs(doc)
    assert len(exprs) >= 20, exprs
    bad = check_exprs([(w, promcheck.promql(e), t) for w, e, t in exprs],
                      {}, types, labels, has)
    assert not bad, "\n".join(bad)


# promtool's lint reserves the quantile label for summaries. The latency
# figures are a gauge of one survey's measured quantiles: a summary's
# _count and _sum would be running counters, which a survey's sample is
# not. That one finding is expected; any other fails.
LINT_EXPECTED = re.compile(r'^ringd_edge_latency_seconds non-summary metrics '
                           r'should not have "quantile" label$')


def test_promtool_accepts_the_exposition(ring):
    c, r = ring
    text = scrape_metrics(c, METRICS_PORT)
    assert 'ringd_edge_latency_seconds{' in text
    p = cl._run([which("promtool"), "check", "metrics"], input=text,
                timeout=30, check=False)
    lines = [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]
    other = [ln for ln in lines if not LINT_EXPECTED.match(ln)]
    assert not other, lines
    # promtool exits 3 for lint findings, 1 for a format it cannot parse.
    assert p.returncode == (3 if lines else 0), (p.returncode, lines)


PROM_CONF = """global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [%s]
scrape_configs:
  - job_name: ringd
    static_configs:
      - targets: ['127.0.0.1:%d']
"""


def prom_api(c, what):
    """The Prometheus server's answer to /api/v1/WHAT, or None."""
    p = c.exec("coord", [sys.executable, "-c",
                         "import urllib.request,sys;"
                         "sys.stdout.write(urllib.request.urlopen("
                         "'http://127.0.0.1:%d/api/v1/%s',timeout=5)"
                         ".read().decode())" % (PROM_PORT, what)])
    return json.loads(p.stdout) if p.returncode == 0 else None


def prom_scrapes(c):
    """Its scrape of the coordinator: (health, last error)."""
    doc = prom_api(c, "targets")
    t = doc["data"]["activeTargets"] if doc else []
    return [(x["health"], x["lastError"]) for x in t]


def prom_alerts(c):
    """{(alertname, state, a, b, node)} of the Prometheus server's
    alerts."""
    doc = prom_api(c, "alerts")
    if doc is None:
        return None
    return {(a["labels"]["alertname"], a["state"], a["labels"].get("a"),
             a["labels"].get("b"), a["labels"].get("node"))
            for a in doc["data"]["alerts"]}


def test_prometheus_server_alerts_on_a_cut_cable(ring):
    """Debian's Prometheus, the rules as shipped but for their `for:`
    (0s here: the expressions are what is tested, not the waits), one
    scrape a second of the coordinator."""
    c, r = ring
    # The coordinator's own view first: the cut of the tests before is
    # mended and re-checked, nothing fires.
    cl.wait_for(lambda: r.status_doc()["health"] == "healthy", 60,
                "the coordinator to say healthy")
    d = tempfile.mkdtemp(prefix="ringd-prom-")
    try:
        with open(promcheck.RULES) as f:
            doc = yaml.safe_load(f)
        for g in doc["groups"]:
            for rule in g["rules"]:
                if "for" in rule:
                    rule["for"] = "0s"
        rules = os.path.join(d, "ringd.rules.yml")
        with open(rules, "w") as f:
            yaml.safe_dump(doc, f)
        conf = os.path.join(d, "prometheus.yml")
        with open(conf, "w") as f:
            f.write(PROM_CONF % (json.dumps(rules), METRICS_PORT))
        prom = c.spawn("coord", [which("prometheus"),
                                 "--config.file=" + conf,
                                 "--storage.tsdb.path=" + os.path.join(d,
                                                                       "db"),
                                 "--web.listen-address=127.0.0.1:%d" %
                                 PROM_PORT],
                       os.path.join(d, "prometheus.log"), name="prometheus")
        try:
            # (Its discovery hands targets over every 5 s.)
            cl.wait_for(lambda: ("up", "") in prom_scrapes(c), 30,
                        "Prometheus to scrape the coordinator")
            # Before its first scrape RingdCoordinatorDown fires (`for`
            # is 0 here); after it, the healthy ring raises none of these.
            calm = ("RingdCableDown", "RingdRingBroken",
                    "RingdCoordinatorDown", "RingdNodeDown")
            cl.wait_for(lambda: not {a for a in prom_alerts(c)
                                     if a[0] in calm}, 20,
                        "no cable, ring, node or coordinator alert while "
                        "the ring is whole")
            # A few more evaluations: nothing at all fires, as the
            # coordinator itself says healthy.
            time.sleep(3)
            got = prom_alerts(c)
            assert got == set(), (got, prom_scrapes(c))
            assert r.status_doc()["health"] == "healthy"
            c.cut("n1", "n2")
            try:
                want = {("RingdCableDown", "firing", "n1", "n2", None),
                        ("RingdRingBroken", "firing", None, None, None)}
                got = cl.wait_for(
                    lambda: (lambda g: g if g and want <= g else None)(
                        prom_alerts(c)), 20,
                    "RingdCableDown and RingdRingBroken firing")
            finally:
                c.restore("n1", "n2")
            cl.wait_for(
                lambda: not {a for a in (prom_alerts(c) or {("?",) * 5})
                             if a[0] in ("RingdCableDown",
                                         "RingdRingBroken")}, 30,
                "the cable and ring alerts to go once mended")
            # An agent stopped: its node is down (expected: critical).
            r.agents["n3"].stop()
            try:
                cl.wait_for(
                    lambda: ("RingdNodeDown", "firing", None, None, "n3") in
                    (prom_alerts(c) or set()), 20, "RingdNodeDown for n3")
                assert prom_api(c, "query?query=ALERTS%7Balertname%3D%22"
                                "RingdNodeDown%22%2Cseverity%3D%22critical"
                                "%22%2Cnode%3D%22n3%22%7D")["data"][
                                    "result"], "RingdNodeDown n3 critical"
            finally:
                r.start_agent("n3")
            r.wait_all_up(30)
            cl.wait_for(
                lambda: not {a for a in (prom_alerts(c) or {("?",) * 5})
                             if a[0] == "RingdNodeDown"}, 30,
                "RingdNodeDown to go once n3 is back")
        finally:
            prom.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)
