#!/bin/sh
# make check: each step ("make-arguments:label", one per argument) in turn
# as `$MAKE make-arguments CHECK_SUMMARY=... RINGD_ALLOW_SKIP=...`,
# stopping at the first that fails: later steps get "label: not run (a
# suite before it failed)". A step that writes no summary line of its own
# gets "label: ok" (counted as one passed test, none for build steps) or
# "label: FAILED (make ...: rc N)". Then it prints build/check/summary and
# the totals, skipped tests counted as failed unless RINGD_ALLOW_SKIP=1:
# "check: P passed, F failed". Exits with the failed step's make status.
# Env: MAKE, CHECK_DIR (build/check, made anew), RINGD_ALLOW_SKIP.
: "${CHECK_DIR:?}" "${MAKE:?}"
s=$CHECK_DIR/summary; rm -rf $CHECK_DIR; mkdir -p $CHECK_DIR
: >$s; : >$s.counts; rc=0
for x in "$@"; do
	step=${x%%:*}; label=${x#*:}; n=$(wc -l <$s.counts)
	if [ $rc != 0 ]; then echo "$label: not run (a suite before it failed)" >>$s; continue; fi
	$MAKE $step CHECK_SUMMARY=$s RINGD_ALLOW_SKIP=$RINGD_ALLOW_SKIP || rc=$?
	if [ "$(wc -l <$s.counts)" = "$n" ]; then
		if [ $rc = 0 ]; then echo "$label: ok" >>$s
			case $label in build*) echo "0 0 0";; *) echo "1 0 0";; esac >>$s.counts
		else echo "$label: FAILED (make $step: rc $rc)" >>$s; echo "0 1 0" >>$s.counts; fi
	elif [ $rc != 0 ] && [ "$(tail -n 1 $s.counts | cut -d' ' -f2-)" = "0 0" ]; then
		echo "0 1 0" >>$s.counts; fi
done
echo; echo "== make check: what ran (build/check/summary)"; cat $s
# shellcheck disable=SC2046 # three numbers, one word each
set -- $(awk '{p += $1; f += $2; k += $3} END {print p + 0, f + 0, k + 0}' $s.counts)
if [ $3 -gt 0 ] && [ "$RINGD_ALLOW_SKIP" = 1 ]; then
	echo "check: $3 skipped, allowed by RINGD_ALLOW_SKIP=1"
elif [ $3 -gt 0 ]; then
	echo "check: $3 skipped, counted as failed (RINGD_ALLOW_SKIP=1 allows skips)"
	set -- $1 $(($2 + $3)) $3; fi
echo "check: $1 passed, $2 failed"
exit $rc
