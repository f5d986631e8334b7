#!/bin/sh
# make structure-check: tests/tools/structure.py on the tree and on the
# objects of the build in OBJ (sizes, call cycles, the names, threads and
# requests of docs/ARCHITECTURE.md).
# Summary: "structure: N C files; checks: 0 breach(es)", or "structure:
# FAILED: ..." with the count; the breaches themselves are printed above.
# Env: PYTHON, OBJ, CHECK_SUMMARY.
. "$(dirname "$0")/record.sh"
out=$($PYTHON tests/tools/structure.py --obj "$OBJ" 2>&1); rc=$?
echo "$out" | sed '$d' # the last line is the summary, said by rec
last=$(echo "$out" | tail -n 1 | sed 's/^structure: //')
if [ $rc = 0 ]; then rec "structure: $last" "1 0 0"; exit 0; fi
rec "structure: FAILED: $last" "0 1 0"; exit 1
