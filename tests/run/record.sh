# Sourced by the tests/run scripts: rec LINE COUNTS prints a suite's
# summary line and, when CHECK_SUMMARY names a file (make check sets it),
# appends LINE to it and COUNTS ("passed failed skipped") to
# $CHECK_SUMMARY.counts, which check.sh adds up.
rec() {
	echo "$1"
	[ -z "$CHECK_SUMMARY" ] || {
		echo "$1" >>"$CHECK_SUMMARY"
		echo "$2" >>"$CHECK_SUMMARY.counts"
	}
}
