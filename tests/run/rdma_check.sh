#!/bin/sh
# make rdma-check: tests/rdma/vm.sh runs the ASan/UBSan daemons of ASAN_BIN
# against soft-RoCE in a qemu VM; log in build/rdma-vm/rdma-check.log,
# the VM's console in build/rdma-vm/console.log. "[vm] PASS: "/"[vm] FAIL: "
# lines are counted and failed ones named.
# A failed first run whose console has the kernel's own soft-RoCE WARNING
# (RXE_KERNEL_BUG, an extended regex) is run once more, and only such a
# run; the first run's logs are kept as rdma-check.1.log and console.1.log
# and the summary says so. Exit 77 from vm.sh (no qemu): a skip, exit 1
# unless RINGD_ALLOW_SKIP=1. Otherwise exits with vm.sh's status.
# Summary: "rdma-check: passed (N checks)", "rdma-check: FAILED (rc ...)",
# or "rdma-check: SKIPPED (why)...".
# Env: ASAN_BIN, RXE_KERNEL_BUG, RINGD_ALLOW_SKIP, CHECK_SUMMARY.
. "$(dirname "$0")/record.sh"
mkdir -p build/rdma-vm; log=build/rdma-vm/rdma-check.log
con=build/rdma-vm/console.log; again=
for run in 1 2; do
	{ bash tests/rdma/vm.sh --bin $ASAN_BIN --timeout 900 ringd
		echo $? >$log.rc; } 2>&1 | tee $log
	rc=$(cat $log.rc)
	[ $run = 1 ] && [ $rc -ne 0 ] && [ $rc -ne 77 ] &&
		grep -a -q -E "$RXE_KERNEL_BUG" $con || break
	first=$(grep -a '^\[vm\] FAIL: ' $log | sed 's/^\[vm\] FAIL: //' | cut -c1-80 | paste -sd';' -)
	cp $log build/rdma-vm/rdma-check.1.log; cp $con build/rdma-vm/console.1.log
	again=" on a second run (the first hit the kernel's soft-RoCE WARNING in rxe_completer and failed: $first; build/rdma-vm/console.1.log)"
	echo "rdma-check: the kernel's soft-RoCE bug hit this run: running it once more"
done
p=$(grep -a -c '^\[vm\] PASS: ' $log || true); f=$(grep -a -c '^\[vm\] FAIL: ' $log || true)
if [ $rc -eq 77 ]; then why=$(sed -n 's/^SKIP: //p' $log | tail -n 1)
	if [ "$RINGD_ALLOW_SKIP" = 1 ]; then
		rec "rdma-check: SKIPPED ($why), allowed by RINGD_ALLOW_SKIP=1" "0 0 1"
	else rec "rdma-check: SKIPPED ($why): a skip fails; RINGD_ALLOW_SKIP=1 allows it" "0 0 1"
		exit 1; fi
elif [ $rc -ne 0 ]; then
	names=$(grep -a '^\[vm\] FAIL: ' $log | sed 's/^\[vm\] FAIL: //' | cut -c1-80 | paste -sd';' -)
	kbug=; grep -a -q -E "$RXE_KERNEL_BUG" $con && kbug=" (the kernel's soft-RoCE WARNING in rxe_completer is in the console)"
	rec "rdma-check: FAILED (rc $rc; $p passed, $f failed: ${names:-no check named})$kbug$again, console in $con" \
		"$p $((f > 0 ? f : 1)) 0"; exit $rc
else rec "rdma-check: passed ($p checks)$again" "$p 0 0"; fi
