#!/bin/sh
# make prometheus-check: promtool checks the rules file PROM_RULES and runs
# the rule unit tests PROM_TESTS (space-separated); PYTHON runs
# tests/prometheus/promcheck.py on the Grafana dashboard. Without promtool
# this is a skip: exit 1 unless RINGD_ALLOW_SKIP=1.
# Summary: "prometheus-check: R rules checked, G promtool test groups
# passed, dashboard ok", or "FAILED (what)", or "SKIPPED (why)...".
# Env: PROM_RULES, PROM_TESTS, PYTHON, RINGD_ALLOW_SKIP, CHECK_SUMMARY.
. "$(dirname "$0")/record.sh"
if ! command -v promtool >/dev/null 2>&1; then
	why="no promtool: Debian's prometheus package, make test-deps"
	if [ "$RINGD_ALLOW_SKIP" = 1 ]; then
		rec "prometheus-check: SKIPPED ($why), allowed by RINGD_ALLOW_SKIP=1" "0 0 1"; exit 0; fi
	rec "prometheus-check: SKIPPED ($why): a skip fails; RINGD_ALLOW_SKIP=1 allows it" "0 0 1"; exit 1; fi
out=$(promtool check rules $PROM_RULES 2>&1); rc=$?; echo "$out"
if [ $rc != 0 ]; then rec "prometheus-check: FAILED (promtool check rules $PROM_RULES)" "0 1 0"; exit 1; fi
rules=$(echo "$out" | sed -n 's/.*SUCCESS: \([0-9]*\) rules found.*/\1/p')
if ! promtool test rules $PROM_TESTS; then
	rec "prometheus-check: FAILED (promtool test rules $PROM_TESTS)" "0 1 0"; exit 1; fi
groups=$(cat $PROM_TESTS | grep -c '^  - name:')
if ! $PYTHON tests/prometheus/promcheck.py; then
	rec "prometheus-check: FAILED (the dashboard: tests/prometheus/promcheck.py)" "$groups 1 0"; exit 1; fi
rec "prometheus-check: $rules rules checked, $groups promtool test groups passed, dashboard ok" "$((groups + 1)) 0 0"
