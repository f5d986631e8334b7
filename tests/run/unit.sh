#!/bin/sh
# make unit: runs each cmocka program named on the command line, every one
# even after one failed, with RING_FIXTURES passed on. cmocka's own lines
# are kept (in PROGRAM.log beside each program too) and counted into one
# summary line: "unit: N programs, P tests passed, F failed (in ...)".
# Exit 1 when any program failed.
# Env: RING_FIXTURES, CHECK_SUMMARY (tests/run/record.sh).
. "$(dirname "$0")/record.sh"
passed=0; failed=0; bad=
for t in "$@"; do
	echo "== $t"
	{ RING_FIXTURES=$RING_FIXTURES $t; echo $? >$t.rc; } 2>&1 | tee $t.log
	n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test(s)\.$/\1/p' $t.log)
	passed=$((passed + ${n:-0}))
	if [ "$(cat $t.rc)" != 0 ]; then bad="$bad ${t##*/}"
		f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test(s), listed below:$/\1/p' $t.log)
		failed=$((failed + ${f:-1})); fi
done
rec "unit: $# programs, $passed tests passed, $failed failed${bad:+ (in$bad)}" \
	"$passed $failed 0"
[ -z "$bad" ]
