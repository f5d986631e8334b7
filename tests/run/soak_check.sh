#!/bin/sh
# make soak-check: the fault soak (tests/soak/soak.py) for 3 minutes on the
# ASan/UBSan daemons in ASAN_BIN and the plain build in PLAIN_BIN, log in
# build/soak/soak.log, samples in build/soak/samples.json.
# Summary: "soak (3 min): passed (N faults; ...)" or "soak (3 min): FAILED
# (the failing lines; ...)" (exit 1).
# Env: PYTHON, ASAN_BIN, PLAIN_BIN, CHECK_SUMMARY.
. "$(dirname "$0")/record.sh"
mkdir -p build/soak; log=build/soak/soak.log
{ $PYTHON tests/soak/soak.py --bin $ASAN_BIN \
	--plain-bin $PLAIN_BIN --minutes 3 --record build/soak/samples.json; echo $? >$log.rc; } 2>&1 | tee $log
rc=$(cat $log.rc); n=$(grep -c '^[0-9]' $log || true)
if [ $rc = 0 ]; then rec "soak (3 min): passed ($n faults; build/soak/soak.log)" "1 0 0"
else bad=$(grep -a -E 'FAILED$| NO |ERROR:|false alarm:' $log | cut -c1-100 | paste -sd';' -)
	rec "soak (3 min): FAILED ($bad; build/soak/soak.log)" "0 1 0"; exit 1; fi
