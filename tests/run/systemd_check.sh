#!/bin/sh
# make systemd-check: tests/systemd/vm.sh boots a qemu VM with systemd as
# PID 1 and tests the units on the plain build in PLAIN_BUILD (or
# build/deb/*.deb); log in build/systemd-vm/systemd-check.log. "[vm] ...
# PASS: "/"FAIL: " lines are counted and failed ones named. Exit 77 from
# vm.sh: a skip, exit 1 unless RINGD_ALLOW_SKIP=1.
# Summary: "systemd-check: passed (N checks)", "systemd-check: FAILED
# (rc ...)" (exit 1), or "systemd-check: SKIPPED (why)...".
# Env: PLAIN_BUILD, RINGD_ALLOW_SKIP, CHECK_SUMMARY.
. "$(dirname "$0")/record.sh"
mkdir -p build/systemd-vm; log=build/systemd-vm/systemd-check.log
{ bash tests/systemd/vm.sh --build $PLAIN_BUILD --timeout 700; echo $? >$log.rc; } 2>&1 | tee $log
rc=$(cat $log.rc)
p=$(grep -a -c '^\[vm\] .*PASS: ' $log || true); f=$(grep -a -c '^\[vm\] .*FAIL: ' $log || true)
if [ $rc -eq 77 ]; then why=$(sed -n 's/^SKIP: //p' $log | tail -n 1)
	if [ "$RINGD_ALLOW_SKIP" = 1 ]; then
		rec "systemd-check: SKIPPED ($why), allowed by RINGD_ALLOW_SKIP=1" "0 0 1"
	else rec "systemd-check: SKIPPED ($why): a skip fails; RINGD_ALLOW_SKIP=1 allows it" "0 0 1"
		exit 1; fi
elif [ $rc -ne 0 ]; then
	names=$(grep -a '^\[vm\] .*FAIL: ' $log | sed 's/^.*FAIL: //' | cut -c1-80 | paste -sd';' -)
	rec "systemd-check: FAILED (rc $rc; $p passed, $f failed: ${names:-no check named}), console in build/systemd-vm/console.log" \
		"$p $((f > 0 ? f : 1)) 0"; exit 1
else rec "systemd-check: passed ($p checks)" "$p 0 0"; fi
