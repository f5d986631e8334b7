#!/bin/sh
# make deb-check: tests/deb/check_packages.py (run by PYTHON) on the
# packages in DEB_DIR: lintian, contents, conffiles, maintainer scripts;
# its "[deb] PASS: "/"[deb] FAIL: " lines are counted, failed ones named;
# log in DEB_DIR/check.log.
# Summary: "deb-check: passed (N checks: ...)" or "deb-check: FAILED (rc
# ...)" (exit with check_packages.py's status).
# Env: PYTHON, DEB_DIR, CHECK_SUMMARY.
. "$(dirname "$0")/record.sh"
log=$DEB_DIR/check.log
{ $PYTHON tests/deb/check_packages.py $DEB_DIR; echo $? >$log.rc; } 2>&1 | tee $log
rc=$(cat $log.rc)
p=$(grep -a -c '^\[deb\] PASS: ' $log || true); f=$(grep -a -c '^\[deb\] FAIL: ' $log || true)
if [ $rc -ne 0 ]; then
	names=$(grep -a '^\[deb\] FAIL: ' $log | sed 's/^\[deb\] FAIL: //' | cut -c1-80 | paste -sd';' -)
	rec "deb-check: FAILED (rc $rc; $p passed, $f failed: ${names:-see $log})" \
		"$p $((f > 0 ? f : 1)) 0"; exit $rc
else rec "deb-check: passed ($p checks: lintian, contents, maintainer scripts)" "$p 0 0"; fi
