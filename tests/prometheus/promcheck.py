#!/usr/bin/python3
"""The PromQL of docs/prometheus/ringd.rules.yml and
docs/grafana/ringd-dashboard.json: which metrics and labels each expression
names (shared with tests/integration/test_prometheus.py, which checks them
against a live coordinator), and, run as a program (make check's
prometheus-check), a static check of the dashboard: valid JSON of a current
Grafana schema with a Prometheus datasource variable, every query on it,
every expression parsed by promtool (as a recording rule)."""

import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
RULES = os.path.join(ROOT, "docs", "prometheus", "ringd.rules.yml")
DASHBOARD = os.path.join(ROOT, "docs", "grafana", "ringd-dashboard.json")
# Grafana 10.4 and 11 write 39 and up; older ones migrate forward.
MIN_SCHEMA = 39
# Labels a scrape adds (not in the exposition), and those of Prometheus'
# own ALERTS series.
TARGET_LABELS = {"job", "instance"}
ALERTS_LABELS = {"alertname", "alertstate", "severity"}
# Grafana's variables, replaced by something PromQL parses.
GRAFANA_VARS = {"$__rate_interval": "5m", "$__interval": "1m",
                "$instance": ".+", "$ring": ".*"}

GROUPING = re.compile(r"\b(?:by|without|on|ignoring|group_left|group_right)"
                      r"\s*\(([^)]*)\)")
MATCHER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"")
SELECTOR = re.compile(r"\{([^{}]*)\}")
LABEL_REPLACE = re.compile(r"label_replace\s*\(")
STRING = re.compile(r"\"((?:[^\"\\]|\\.)*)\"")
METRIC = re.compile(r"(?<![A-Za-z0-9_:])(ringd_[a-z0-9_]+|ALERTS)"
                    r"(?![A-Za-z0-9_:])")
RECORDED = re.compile(r"(?<![A-Za-z0-9_:])(ringd:[a-z0-9_:]+)"
                      r"(?![A-Za-z0-9_:])")
TEMPLATE_LABEL = re.compile(r"\$labels\.([A-Za-z_][A-Za-z0-9_]*)")
LEGEND_LABEL = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def label_replaces(expr):
    """(dst, src) of each label_replace(v, dst, repl, src, regex)."""
    out = []
    for m in LABEL_REPLACE.finditer(expr):
        depth, i = 1, m.end()
        while i < len(expr) and depth:
            depth += {"(": 1, ")": -1}.get(expr[i], 0)
            i += 1
        args = STRING.findall(expr[m.end():i])
        # the last four strings of the call are dst, repl, src, regex
        if len(args) >= 4:
            out.append((args[-4], args[-2]))
    return out


def names(expr):
    """(metrics, recorded, labels used, labels created) of one
    expression."""
    created = {d for d, _ in label_replaces(expr)}
    used = {s for _, s in label_replaces(expr) if s}
    for m in GROUPING.finditer(expr):
        used |= {x.strip() for x in m.group(1).split(",") if x.strip()}
    for m in SELECTOR.finditer(expr):
        used |= set(MATCHER.findall(m.group(1)))
    # matchers' values hold no labels; strings (label_replace's) neither
    bare = STRING.sub('""', expr)
    return (set(METRIC.findall(bare)), set(RECORDED.findall(bare)),
            used - {"__name__"}, created)


def load_rules(path=RULES):
    with open(path) as f:
        doc = yaml.safe_load(f)
    return [r for g in doc["groups"] for r in g["rules"]]


def rule_exprs(path=RULES):
    """[(name, expr, labels the templates name)] of every rule, recording
    rules first."""
    out = []
    for r in load_rules(path):
        text = " ".join(list((r.get("annotations") or {}).values()) +
                        list((r.get("labels") or {}).values()))
        out.append((r.get("record") or r["alert"], r["expr"],
                    set(TEMPLATE_LABEL.findall(text))))
    return out


def load_dashboard(path=DASHBOARD):
    with open(path) as f:
        return json.load(f)


def panels(doc):
    for p in doc.get("panels", []):
        yield p
        for q in p.get("panels", []):
            yield q


def dashboard_exprs(doc):
    """[(panel title, expr as written, labels its legend names)]"""
    out = []
    for p in panels(doc):
        for t in p.get("targets", []):
            out.append((p.get("title", "?"), t.get("expr", ""),
                        set(LEGEND_LABEL.findall(t.get("legendFormat", "")))))
    for v in doc.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            q = q.get("query", "") if isinstance(q, dict) else q or ""
            m = re.match(r"label_values\((.*),\s*(\w+)\)$", q)
            if m:
                out.append(("variable " + v["name"], m.group(1),
                            {m.group(2)}))
    return out


def promql(expr):
    """A dashboard expression with Grafana's variables replaced."""
    for k, v in GRAFANA_VARS.items():
        expr = expr.replace(k, v)
    return expr


def problems(doc):
    """What is wrong with the dashboard document, beside its PromQL."""
    bad = []
    if doc.get("schemaVersion", 0) < MIN_SCHEMA:
        bad.append("schemaVersion %r is older than %d"
                   % (doc.get("schemaVersion"), MIN_SCHEMA))
    tvars = {v.get("name"): v for v in
             doc.get("templating", {}).get("list", [])}
    ds = tvars.get("datasource")
    if not ds or ds.get("type") != "datasource" or \
            ds.get("query") != "prometheus":
        bad.append("no datasource variable of type prometheus")
    ids = set()
    for p in panels(doc):
        if p.get("id") in ids:
            bad.append("panel id %r twice" % p.get("id"))
        ids.add(p.get("id"))
        g = p.get("gridPos", {})
        if not g or g.get("x", 0) + g.get("w", 0) > 24:
            bad.append("panel %r: gridPos %r" % (p.get("title"), g))
        if p.get("type") == "row":
            continue
        want = {"type": "prometheus", "uid": "${datasource}"}
        if p.get("datasource") != want:
            bad.append("panel %r: datasource %r, not the variable"
                       % (p.get("title"), p.get("datasource")))
        refs = [t.get("refId") for t in p.get("targets", [])]
        if not refs or len(refs) != len(set(refs)):
            bad.append("panel %r: targets %r" % (p.get("title"), refs))
        for t in p.get("targets", []):
            if t.get("datasource") != want or not t.get("expr"):
                bad.append("panel %r: target %r" % (p.get("title"), t))
    return bad


def promtool_parse(exprs):
    """promtool check rules over the expressions as recording rules: its
    exit status and output."""
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": "dashboard:expr_%d" % i, "expr": promql(e)}
        for i, e in enumerate(exprs)]}]}
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        yaml.safe_dump(rules, f)
    try:
        p = subprocess.run(["promtool", "check", "rules", f.name],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    finally:
        os.unlink(f.name)
    return p.returncode, p.stdout


def main():
    try:
        doc = load_dashboard()
    except (OSError, ValueError) as e:
        print("dashboard: %s: %s" % (DASHBOARD, e))
        return 1
    bad = problems(doc)
    exprs = [e for _, e, _ in dashboard_exprs(doc)]
    rc, out = promtool_parse(exprs)
    if rc != 0:
        bad.append("promtool cannot parse the dashboard's PromQL:\n" + out)
    metrics = set()
    for e in exprs:
        metrics |= names(e)[0]
    for b in bad:
        print("dashboard: " + b)
    print("dashboard: %d panels, %d expressions (promtool parsed them), "
          "%d metrics" % (sum(1 for p in panels(doc) if p.get("type") !=
                              "row"), len(exprs), len(metrics)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
