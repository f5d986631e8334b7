#!/bin/sh
# DEBUG: all-reduce over RDMA only; ringd on the emulated RDMA ring (inside the VM: tests/rdma/vm.sh ringd [N]).
#
# One ring-coordinator and one ring-agent per node, management over
# loopback, each agent restricted to its own two ports and rxe devices
# (data_interface in its file, ring-agent -r). Asserts:
#   - the survey assembles the ring over RDMA, in the right order;
#   - RDMA WRITE/READ bandwidth and latency come back for every edge;
#   - ringctl test rdma-bw/rdma-lat work on demand, all four kinds;
#   - a test between non-adjacent nodes fails with the translated
#     "not ring neighbours" error, within its deadline;
#   - a port's address changing moves its RoCE GID: the agent logs the
#     RDMA async GID event and the coordinator raises gid_change on the
#     edge within seconds, resolved when the address is back;
#   - an agent killed mid-test leaves the other side clean (no RC QPs left
#     in `rdma resource show qp`), both when the target and when the
#     requester dies, and when an agent is stopped cleanly mid-test, and
#     the victim's return re-checks its edges alone (no full survey);
#   - explicit GID indexes, a bad one, the memory bound, survey_method
#     both, and no sanitizer report in any daemon's log.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# Sanitizer builds (make check runs the ASan/UBSan binaries here): report
# leaks at exit, keep going after a report so the log holds it.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1
. "$HERE/ring-net.sh"

N=${1:-4}
W=/tmp/ringd
. "$HERE/ringd-lib.sh"
FAILS=0
pass() { echo "PASS: $*"; }
FAILED=
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); FAILED="$FAILED
  $*"; }

# nodes [rev]: "n1 n2 ... nN " (or backwards)
nodes() {
	if [ "${1:-}" = rev ]; then i=$N; step=-1; else i=1; step=1; fi
	while [ "$i" -ge 1 ] && [ "$i" -le "$N" ]; do
		printf 'n%d ' "$i"
		i=$((i + step))
	done
}

# rechecks: every edge's last re-check; recheck_done_since R V: nothing
# runs, the re-checks differ from R, and one was for V's return.
rechecks() {
	rc -f keyvalue status 2>/dev/null |
		grep '^topology\.edges\.[^.]*\.rechecked=' | sort | tr '\n' ' '
}
recheck_done_since() {
	# (status exits 1 while health is degraded: the document still counts)
	rc -f keyvalue status >$W/since.kv 2>/dev/null
	grep -q '^survey=done$' $W/since.kv || return 1
	[ "$(grep '^topology\.edges\.[^.]*\.rechecked=' $W/since.kv |
		sort | tr '\n' ' ')" != "$1" ] &&
		grep -q "\.recheck_reason=$2 came back\$" $W/since.kv
}
rc_qps() { /usr/bin/rdma resource show qp 2>/dev/null | grep -c ' type RC ' || true; }
no_rc_qps() { [ "$(rc_qps)" -eq 0 ]; }
has_rc_qps() { [ "$(rc_qps)" -gt 0 ]; }

ring_net_up "$N" || exit 1
ring_net_wait_gids || exit 1
ringd_pki $(nodes) || exit 1
# Short tests: under TCG soft-RoCE moves tens to hundreds of Mbit/s.
ringd_coordinator_conf $(nodes) <<EOF
survey_settle 3s
survey_grace 60s
survey_duration 1s
survey_warmup 250ms
survey_method auto
survey_rdma_qps 2
survey_rdma_size 64K
latency_sizes 64 4096
latency_iterations 100
EOF

start_agent() { # start_agent I
	i=$1
	ringd_agent_conf "$i" <<EOF
reconnect_min 200ms
reconnect_max 2s
rdma_max_memory 64M
EOF
	# Its RDMA devices from the command line (the config names none).
	ring-agent -c $W/conf/n$i.conf -r "rxe${i}a" -r "rxe${i}b" >>$W/logs/n$i.log 2>&1 &
	echo $! >$W/n$i.pid
}

ring-coordinator -c $W/conf/coordinator.conf >$W/logs/coordinator.log 2>&1 &
COORD=$!
i=1
while [ "$i" -le "$N" ]; do
	start_agent "$i"
	i=$((i + 1))
done


all_up() { rc -f keyvalue status | grep -q "^connected=$N\$"; }
if wait_until 60 "all $N agents connected" all_up; then
	pass "all $N agents connected to the coordinator"
else
	fail "agents did not connect"
	rc status
	ringd_show_logs
	exit 1
fi


rc survey --wait >$W/survey.out 2>&1
rc -f keyvalue status >$W/status.kv 2>&1
grep -E '^topology\.(kind|order\.)' $W/status.kv
# ---- a ring all-reduce over RDMA WRITE (issue 12) ----
# Every cable was surveyed over RDMA: each step WRITEs its chunk into the
# next rank's registered buffer; every rank checks every element.
# ar_ok NAME ARGS...: the all-reduce succeeds over RDMA on every step,
# verified at every size.
ar_ok() {
	name=$1
	shift
	out=$W/$name.out
	rc -f keyvalue -t 300 test allreduce --transport rdma "$@" >"$out" 2>&1
	r=$?
	steps=$(grep -c '^steps\.[0-9]*=.* rdma$' "$out" || true)
	nok=$(grep -c '^sizes\.[^.]*\.verified=yes$' "$out" || true)
	nsz=$(grep -c '^sizes\.[^.]*\.bytes=' "$out" || true)
	if [ $r -eq 0 ] && grep -q '^method=rdma$' "$out" &&
		grep -q '^verified=yes$' "$out" && [ "$nok" = "$nsz" ] &&
		[ "$nsz" -ge 1 ] && [ "$steps" -ge 2 ]; then
		pass "$name: RDMA WRITE on $steps steps, $nsz sizes verified: $(grep -E '^sizes\.[^.]*\.busbw_gbps_computed=' "$out" | tr '\n' ' ')"
	else
		fail "$name (rc $r, $steps RDMA steps, $nok of $nsz sizes verified)"
		cat "$out"
	fi
}
ar_ok allreduce-ring --sizes 64K,1M,4M --iterations 3
ar_ok allreduce-2 --nodes n1,n2 --sizes 1M,4M --iterations 3
# The same ring over TCP, for the record (TCG figures: not asserted).
rc -f keyvalue -t 300 test allreduce --transport tcp --sizes 64K,1M,4M --iterations 3 >$W/allreduce-tcp.out 2>&1 &&
	echo "allreduce over TCP for comparison: $(grep -E '^(method|sizes\.[^.]*\.busbw_gbps_computed)=' $W/allreduce-tcp.out | tr '\n' ' ')"
grep -q '^comparison_computed=' $W/allreduce-2.out &&
	pass "allreduce: 2 nodes against $N: $(grep '^comparison_computed=' $W/allreduce-2.out | cut -d= -f2-)" ||
	fail "allreduce: no comparison between the 2-node and the $N-node run"
# A wrong order fails at once, naming the step, and leaves nothing behind.
rc test allreduce --order n1,n3,n2,n4 --transport rdma --sizes 1M >$W/ar-order.out 2>&1
r=$?
[ $r -ne 0 ] && grep -q 'not ring neighbours' $W/ar-order.out &&
	pass "allreduce in a wrong order refused: $(grep -m1 -o 'step rank [^;]*' $W/ar-order.out)" ||
	{ fail "allreduce in a wrong order: rc $r"; cat $W/ar-order.out; }
# A rank killed mid-run: the job fails within its deadline, the others'
# queue pairs and pinned buffers are gone.
rc -f keyvalue -t 300 test allreduce --transport rdma --sizes 16M --iterations 200 >$W/ar-kill.out 2>&1 &
arpid=$!
ar_running() { /usr/bin/rdma resource show qp 2>/dev/null | grep -q ' type RC '; }
wait_until 60 "the all-reduce's queue pairs" ar_running
victim=n3
r0=$(rechecks)
kill -9 "$(cat $W/$victim.pid)"
t0=$(now_cs)
wait $arpid
r=$?
took=$((($(now_cs) - t0) / 100))
[ $r -ne 0 ] && grep -q '^result=failed$' $W/ar-kill.out &&
	pass "allreduce with $victim killed mid-run failed after ${took}s: $(grep -m1 '^error=' $W/ar-kill.out | cut -c1-200)" ||
	{ fail "allreduce with $victim killed: rc $r"; cat $W/ar-kill.out; }
wait_until 30 "no RC QPs after the killed all-reduce" no_rc_qps &&
	pass "no QPs left after the killed all-reduce" ||
	{ fail "QPs left after the killed all-reduce"; /usr/bin/rdma resource show qp; }
start_agent 3
wait_until 60 "all $N agents connected again" all_up ||
	fail "$victim did not come back"
# Its return re-checks its edges: over before anything else measures.
wait_until 120 "the re-check after $victim's return" recheck_done_since "$r0" "$victim" ||
	fail "no re-check after $victim's return"
wait_until 20 "no RC QPs after that re-check" no_rc_qps ||
	fail "QPs left after the re-check on $victim's return"

i=1
while [ "$i" -le "$N" ]; do
	kill -0 "$(cat $W/n$i.pid)" 2>/dev/null || fail "agent n$i died"
	i=$((i + 1))
done
if [ $FAILS -ne 0 ]; then
	ringd_show_logs
fi
for p in $W/*.pid; do kill "$(cat "$p")" 2>/dev/null; done
kill $COORD 2>/dev/null
wait 2>/dev/null
# Sanitizer builds report at exit (leaks) or when it happens: any report in
# any daemon's log is a failure.
if grep -lE 'ERROR: (Address|Leak)Sanitizer|runtime error:' $W/logs/*.log; then
	fail "sanitizer reports in the daemons' logs"
	grep -hE -A20 'ERROR: (Address|Leak)Sanitizer|runtime error:' $W/logs/*.log | head -n 80
fi
# Last, after the logs: what failed, where a log's tail shows it.
echo "ringd payload: $FAILS failure(s)${FAILED:+:$FAILED}"
[ $FAILS -eq 0 ]
