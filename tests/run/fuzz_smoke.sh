#!/bin/sh
# make fuzz-smoke: each libFuzzer target of build/fuzz/fuzz/ for 15 s on a
# copy of its seed corpus (libFuzzer writes into the corpus it is given),
# log in build/fuzz/TARGET.log. Stops at the first target that fails.
# Summary: "fuzz-smoke: N targets: fuzz_x R runs, ..." or
# "fuzz-smoke: fuzz_x FAILED (log), N target(s) passed" (exit 1).
# Env: CHECK_SUMMARY (tests/run/record.sh).
set -e
. "$(dirname "$0")/record.sh"
ok=0; runs=
for f in build/fuzz/fuzz/fuzz_*; do
	n=$(basename $f); c=build/fuzz/corpus/$n; rm -rf $c; mkdir -p $c
	cp tests/fuzz/corpus/$n/* $c/ 2>/dev/null || true
	echo "== $n"
	if ! $f -max_total_time=15 -max_len=65536 -print_final_stats=1 $c \
		tests/fuzz/corpus/$n > build/fuzz/$n.log 2>&1; then
		tail -n 40 build/fuzz/$n.log; echo "$n: FAILED"
		rec "fuzz-smoke: $n FAILED (build/fuzz/$n.log), $ok target(s) passed" "$ok 1 0"
		exit 1; fi
	grep -E 'stat::number_of_executed_units|stat::new_units_added' build/fuzz/$n.log
	r=$(sed -n 's/^stat::number_of_executed_units: *//p' build/fuzz/$n.log)
	ok=$((ok + 1)); runs="$runs $n ${r:-?} runs,"
done
rec "fuzz-smoke: $ok targets:${runs%,}" "$ok 0 0"
