#!/bin/sh
# ringd on the emulated RDMA ring (inside the VM: tests/rdma/vm.sh ringd [N]).
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
#   - a ring all-reduce over RDMA WRITE on the whole ring and on two
#     nodes, results verified, a wrong order refused naming the step, a
#     rank killed mid-run failing the job with no QP left;
#   - check nccl-env flags a GID index that is not the RoCE v2 IPv4 GID in
#     the nodes' GID tables (inventories), naming the right one;
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

# Each agent owns its two ports and two devices, no more (ring-agent -r).
devs=$(rc -f keyvalue status | grep -c '^nodes\.[^.]*\.rdma_devices=2$' || true)
[ "$devs" = "$N" ] && pass "every agent reports just its 2 RDMA devices" ||
	{ fail "RDMA devices per node"; rc -f keyvalue status | grep rdma_devices; }

# ---- the survey, over RDMA ----
t0=$(now_cs)
rc survey --wait >$W/survey.out 2>&1
echo "survey took $((($(now_cs) - t0) / 100)) s"
rc -f keyvalue status >$W/status.kv 2>&1
rc status >$W/status.txt 2>&1
cat $W/status.txt

kv() { grep "^$1=" $W/status.kv | head -n 1 | cut -d= -f2-; }
kind=$(kv topology.kind)
[ "$kind" = ring ] && pass "topology kind ring" || fail "topology kind '$kind'"
order=$(grep '^topology\.order\.' $W/status.kv | cut -d= -f2 | tr '\n' ' ')
# The ring n1..nN in either direction, any rotation.
fwd=$(nodes)
rev=$(nodes rev)
ok=0
for s in "$fwd$fwd" "$rev$rev"; do
	case "$s" in *"$order"*) ok=1 ;; esac
done
[ -n "$order" ] && [ $ok = 1 ] && pass "ring order: $order" || fail "ring order '$order' is not the cabled ring"
edges=$(grep -c '^topology\.edges\.[^.]*\.edge=' $W/status.kv || true)
[ "$edges" = "$N" ] && pass "$N edges" || fail "$edges edges, expected $N"
rdma_edges=$(grep '^topology\.edges\.[^.]*\.method=' $W/status.kv | grep -c 'rdma' || true)
[ "$rdma_edges" = "$N" ] && pass "every edge measured over RDMA" || fail "$rdma_edges of $N edges over RDMA"
for f in rdma_write_gbps_a_to_b_measured rdma_write_gbps_b_to_a_measured \
	rdma_read_gbps_a_reads_b_measured rdma_read_gbps_b_reads_a_measured; do
	# A figure came back (a number; "" means not measured). Under TCG two
	# tests at once on two vCPUs can starve soft-RoCE down to nothing in
	# a 1 s window, so zero is a figure too; the single tests below must
	# move data.
	got=$(grep "^topology\.edges\.[^.]*\.$f=[0-9]" $W/status.kv | wc -l)
	moved=$(grep "^topology\.edges\.[^.]*\.$f=" $W/status.kv |
		awk -F= '$2 + 0 > 0' | wc -l)
	[ "$got" = "$N" ] && pass "$f measured on every edge ($moved above zero)" ||
		fail "$f measured on $got of $N edges"
done
# one SIZE and P50_US per ladder step: ...measured.0.p50_us=31.2
lat=$(grep '^topology\.edges\.[^.]*\.rdma_write_lat_p50_us_measured\.[0-9]*\.p50_us=' $W/status.kv |
	grep -c '=[0-9.]*[1-9]' || true)
[ "$lat" -ge "$N" ] && pass "RDMA write latency on every edge ($lat figures)" || fail "RDMA latency figures: $lat"
# The ring-load round (every cable at once, one way, then both ways) ran
# over RDMA on every cable; zero is a figure under TCG, as above. Both
# ways puts two RDMA tests at once on one function pair, opposite roles;
# it runs with NCCL's ACK timeout (2^20 * 4.096 us): with the default 67 ms
# a TCG-starved peer drew spurious retransmissions, and soft-RoCE's retry
# path answered some with "remote invalid request error".
rl=$(grep -c '^topology\.ring_load\.[^.]*\.one_way_gbps_measured=[0-9]' $W/status.kv || true)
rb=$(grep -c '^topology\.ring_load\.[^.]*\.both_ways_gbps_b_to_a_measured=[0-9]' $W/status.kv || true)
ra=$(grep -c '^topology\.ring_load\.[^.]*\.both_ways_gbps_a_to_b_measured=[0-9]' $W/status.kv || true)
rm_=$(grep -c '^topology\.cables\.[^.]*\.method=rdma$' $W/status.kv || true)
[ "$rl" = "$N" ] && [ "$rb" = "$N" ] && [ "$ra" = "$N" ] && [ "$rm_" = "$N" ] &&
	pass "ring load over RDMA: one way and both ways on all $N cables" ||
	{ fail "ring load: one way on $rl, both ways on $ra/$rb, over RDMA $rm_ of $N cables"; grep -E '^topology\.(ring_load|cables)\.' $W/status.kv; }
grep '^topology\.cables\.[^.]*\.error=' $W/status.kv || true
if grep -q 'rdma_error=' $W/status.kv; then
	fail "an edge reports an RDMA error"
	grep 'rdma_error=' $W/status.kv
fi

# Ranks for NCCL: every facing RDMA function, exact names with their port
# ("==" is the variable's '=' and NCCL's exact-match '='); the GID index
# left to NCCL (its default picks soft-RoCE's IPv4 entry, index 1, the one
# the tests used); the functions paired into NCCL devices by
# NCCL_NET_FORCE_MERGE (soft-RoCE's have no PCI device for NCCL to fuse
# by); subnet-aware routing and NCCL_NET=IB. Then the printed file itself
# passes check nccl-env for the NCCL it needs.
rc ranks -f env >$W/env.out 2>&1
cat $W/env.out
hca=$(grep -c '^NCCL_IB_HCA==rxe[A-Za-z0-9_]*:[0-9]' $W/env.out || true)
gidx=$(grep -c '^NCCL_IB_GID_INDEX=' $W/env.out || true)
left=$(grep -c '^# NCCL_IB_GID_INDEX left to NCCL' $W/env.out || true)
merge=$(grep -c '^NCCL_NET_FORCE_MERGE=rxe[A-Za-z0-9_]*,rxe[A-Za-z0-9_]*' $W/env.out || true)
sar=$(grep -c '^NCCL_IB_SUBNET_AWARE_ROUTING=1$' $W/env.out || true)
net=$(grep -c '^NCCL_NET=IB$' $W/env.out || true)
[ "$hca" = "$N" ] && [ "$gidx" = 0 ] && [ "$left" = "$N" ] && [ "$merge" = "$N" ] &&
	[ "$sar" = "$N" ] && [ "$net" = "$N" ] &&
	pass "ranks -f env: NCCL_IB_HCA (exact, with ports), the GID index left to NCCL, NCCL_NET_FORCE_MERGE pairs, subnet-aware routing and NCCL_NET=IB for every rank" ||
	fail "ranks -f env of $N ranks: $hca NCCL_IB_HCA, $gidx NCCL_IB_GID_INDEX=, $left left to NCCL, $merge NCCL_NET_FORCE_MERGE, $sar routing, $net NCCL_NET=IB"
rc -f keyvalue check nccl-env --nccl-version 2.30.7 $W/env.out >$W/envcheck.out 2>&1
r=$?
[ $r -eq 0 ] && grep -q '^verdict=ok' $W/envcheck.out &&
	pass "check nccl-env: ranks -f env's own file passes (NCCL 2.30.7)" ||
	{ fail "check nccl-env of ranks -f env's file: rc $r"; cat $W/envcheck.out; }

# check nccl-env reads each node's GID tables (the inventories): index 0 is
# soft-RoCE's link-local RoCE v2 GID, not the IPv4-mapped one at 1. No
# NCCL_IB_HCA in the file: every node's functions are the ones NCCL uses.
echo NCCL_IB_GID_INDEX=0 >$W/gid0.env
echo NCCL_IB_GID_INDEX=1 >$W/gid1.env
rc -f keyvalue check nccl-env $W/gid0.env >$W/gid0.out 2>&1
r=$?
g0=$(grep -c '\.why=index 0 is not the RoCE v2 IPv4 GID on n[0-9]*.s .*; index 1 is' $W/gid0.out || true)
rc -f keyvalue check nccl-env $W/gid1.env >$W/gid1.out 2>&1
g1=$(grep -c '\.why=index 1 is not the RoCE v2 IPv4 GID' $W/gid1.out || true)
[ $r -eq 1 ] && [ "$g0" = "$N" ] && [ "$g1" = 0 ] &&
	pass "check nccl-env: NCCL_IB_GID_INDEX=0 flagged on all $N nodes from their GID tables (index 1 is right), 1 not flagged" ||
	{ fail "check nccl-env GID tables: rc $r, $g0 of $N nodes flagged at 0, $g1 at 1"; cat $W/gid0.out $W/gid1.out; }

# ---- on demand ----
# test_ok NAME EXPECT ARGS...: ringctl test succeeds and prints EXPECT
test_ok() {
	name=$1 expect=$2
	shift 2
	out=$W/$name.out
	rc -f keyvalue test "$@" >"$out" 2>&1
	r=$?
	if [ $r -eq 0 ] && grep -q "$expect" "$out" && grep -q '^result=ok' "$out" &&
		! grep -qE '^gbps_measured=0(\.0*)?$' "$out"; then
		pass "$name: $(grep -E '^(gbps_measured|peak_gbps_measured|a_side\.latency\.[0-9]+\.p50_us|a_side\.latency_convention)=' "$out" | head -n 3 | tr '\n' ' ')"
	else
		fail "$name (rc $r)"
		cat "$out"
	fi
}
test_ok write-bw 'gbps_measured=' rdma-bw n1 n2 --op write --duration 1 --qps 2 --size 64K
test_ok read-bw 'gbps_measured=' rdma-bw n2 n3 --op read --duration 1 --qps 2 --size 256K
test_ok write-lat 'half round trip' rdma-lat n3 n2 --op write --sizes 64,4K --iterations 200
test_ok read-lat 'full round trip' rdma-lat n1 n2 --op read --sizes 64,4K --iterations 200
cat $W/write-bw.out
cat $W/write-lat.out
# Counters around the test (issue 11): soft-RoCE's hw_counters (sent_pkts,
# rcvd_pkts, ...) moved on both sides and show with their source.
ca=$(grep -cE '^a_side\.counters\.[0-9]+\.source=(hw|rdma)$' $W/write-bw.out || true)
cb=$(grep -cE '^b_side\.counters\.[0-9]+\.source=(hw|rdma)$' $W/write-bw.out || true)
[ "$ca" -ge 1 ] && [ "$cb" -ge 1 ] &&
	pass "write-bw: RDMA counters moved around the test ($ca on n1, $cb on n2: $(grep -E '^[ab]_side\.counters\.[0-9]+\.name=' $W/write-bw.out | cut -d= -f2 | sort -u | tr '\n' ' '))" ||
	fail "write-bw: RDMA counters around the test: $ca on n1, $cb on n2 (source hw or rdma)"

# ---- explicit GID choice and the memory bound ----
ibv_devinfo -v -d rxe1b 2>/dev/null | grep -E 'GID\[' || true
test_ok gid-explicit 'a_endpoint.gid_index=1' rdma-bw n1 n2 --op write --duration 1 --qps 1 --size 64K --gid-a 1 --gid-b 1
# test_fails NAME EXPECT ARGS...: ringctl test fails and says EXPECT
test_fails() {
	name=$1 expect=$2
	shift 2
	rc test "$@" >$W/$name.out 2>&1
	r=$?
	if [ $r -ne 0 ] && grep -q "$expect" $W/$name.out; then
		pass "$name refused: $(grep -m1 "$expect" $W/$name.out)"
	else
		fail "$name: rc $r, no '$expect'"
		cat $W/$name.out
	fi
}
test_fails gid-invalid 'GID index 99 is not valid' rdma-bw n1 n2 --op write --duration 1 --gid-a 99
test_fails memory-bound 'rdma_max_memory allows 64 MiB' rdma-bw n1 n2 --op write --duration 1 --qps 4 --size 32M
wait_until 20 "no RC QPs after the refusals" no_rc_qps &&
	pass "no QPs left after the refusals" || fail "QPs left after the refusals"

# ---- not neighbours: the reference cluster's rank-order failure ----
t0=$(now_cs)
rc test rdma-bw n1 n3 --op write --duration 1 >$W/diag.out 2>&1
r=$?
took=$((($(now_cs) - t0) / 100))
cat $W/diag.out
if [ $r -ne 0 ] && grep -q 'not ring neighbours' $W/diag.out; then
	pass "n1 -> n3 refused as not ring neighbours in ${took}s (rc $r)"
else
	fail "n1 -> n3: rc $r, no 'not ring neighbours' (${took}s)"
fi
# The agent's typed outcome (ERROR_NOT_ADJACENT): the coordinator adds no
# hint of its own on top of the agent's diagnosis.
grep -q 'ranks must follow the physical ring order' $W/diag.out &&
	fail "the coordinator repeated the agent's diagnosis" ||
	pass "the diagnosis is said once (typed NOT_ADJACENT)"
[ "$took" -le 60 ] && pass "diagonal failure within its deadline" || fail "diagonal test took ${took}s"
wait_until 20 "no RC QPs after the diagonal test" no_rc_qps &&
	pass "no QPs left after the diagonal test" || { fail "QPs left"; /usr/bin/rdma resource show qp; }

# ---- a GID changes under the published topology ----
# n1's r1b (rxe1b, facing n2) gets another IPv4 address: its RoCE v2 GID at
# index 1 (what the survey measured and `ranks` deploys) follows. The edge
# is n1-n2 or n2-n1, as the survey named it.
gid_alert() { # gid_alert: gid_change fires on the n1/n2 edge
	rc -f keyvalue alerts >$W/alerts.kv 2>/dev/null
	for k in $(sed -n 's/^alerts\.\([0-9]*\)\.rule=gid_change$/\1/p' $W/alerts.kv); do
		grep -qE "^alerts\.$k\.subject=(n1-n2|n2-n1)\$" $W/alerts.kv &&
			grep -qxF "alerts.$k.state=firing" $W/alerts.kv && return 0
	done
	return 1
}
no_gid_alert() { ! gid_alert; }
gid_logged() { grep -q 'rxe1b port 1: RDMA async event GID_CHANGE' $W/logs/n1.log; }
r1b_table=$(awk '$2 == "r1b" { print $10 }' "$RING_NET_DIR/ports")
gid_before=$(cat /sys/class/infiniband/rxe1b/ports/1/gids/1 2>/dev/null)
no_gid_alert && pass "no gid_change before the change" || fail "gid_change before any change"
$RING_NET_IP addr del 10.9.1.1/24 dev r1b
$RING_NET_IP addr add 10.9.1.11/24 dev r1b
t0=$(now_cs)
if wait_until 10 "gid_change on n1-n2" gid_alert; then
	pass "gid_change on the n1-n2 edge after $((($(now_cs) - t0) / 10))00 ms: $(grep -m1 '\.message=.*rxe1b' $W/alerts.kv | cut -d= -f2-)"
	grep -q '\.message=n1 rxe1b port 1: GID index 1 is .*NCCL_IB_GID_INDEX' $W/alerts.kv &&
		pass "gid_change names n1 rxe1b port 1, GID index 1" ||
		{ fail "gid_change message"; grep 'message=' $W/alerts.kv; }
else
	fail "no gid_change within 10 s (GID 1 was $gid_before, is $(cat /sys/class/infiniband/rxe1b/ports/1/gids/1 2>/dev/null))"
	cat $W/alerts.kv
fi
if wait_until 10 "the agent's GID event" gid_logged; then
	pass "RDMA async event seen by the agent: $(grep -m1 'rxe1b port 1: RDMA async event GID_CHANGE' $W/logs/n1.log)"
else
	fail "no RDMA async GID event in n1's log"
	grep -a 'RDMA' $W/logs/n1.log | tail -n 5
fi
$RING_NET_IP addr del 10.9.1.11/24 dev r1b
$RING_NET_IP addr add 10.9.1.1/24 dev r1b
# Deleting the address took the edge's policy route with it.
$RING_NET_IP route replace 10.9.1.2 dev r1b src 10.9.1.1 table "$r1b_table"
wait_until 10 "rxe1b's GID 1 back" sh -c "[ \"\$(cat /sys/class/infiniband/rxe1b/ports/1/gids/1)\" = '$gid_before' ]" ||
	fail "rxe1b GID 1 not back to $gid_before"
# Resolved once the condition has been gone for alert_hold_down (30 s by
# default: a flapping address is one alert, not many).
t0=$(now_cs)
if wait_until 45 "gid_change resolved" no_gid_alert; then
	pass "gid_change resolved $((($(now_cs) - t0) / 100)) s after the address came back"
else
	fail "gid_change still firing with the address back"
	cat $W/alerts.kv
fi

# ---- an agent killed mid-test ----
# kill_mid_test VICTIM A B: start a long test A -> B, kill VICTIM's agent
# once QPs exist, expect the test to fail and every QP to go.
kill_mid_test() {
	victim=$1 a=$2 b=$3 sig=${4:-KILL}
	r0=$(rechecks)
	a0=$(grep -a -c 'survey started (automatic)' $W/logs/coordinator.log || true)
	rc test rdma-bw "$a" "$b" --op write --duration 60 --qps 2 --size 64K >$W/kill-$victim.out 2>&1 &
	tp=$!
	if ! wait_until 30 "RC QPs of the long test" has_rc_qps; then
		fail "kill $victim: the test never created QPs"
		kill $tp 2>/dev/null
		return
	fi
	sleep 1 # inside the measured window
	kill -s "$sig" "$(cat $W/$victim.pid)"
	t0=$(now_cs)
	wait $tp
	r=$?
	took=$((($(now_cs) - t0) / 100))
	cat $W/kill-$victim.out
	[ $r -ne 0 ] && pass "kill -$sig $victim mid-test: the test failed after ${took}s (rc $r)" ||
		fail "kill -$sig $victim mid-test: test rc $r"
	if wait_until 30 "no RC QPs after killing $victim" no_rc_qps; then
		pass "kill -$sig $victim mid-test: no QPs left on the surviving side"
	else
		fail "kill -$sig $victim mid-test: QPs left behind"
		/usr/bin/rdma resource show qp
	fi
	start_agent "${victim#n}"
	wait_until 30 "$victim back" all_up || fail "$victim did not come back"
	# A node back after being down: its edges are re-checked alone
	# (recheck_settle later), over RDMA. Those tests must be over before
	# the next kill counts QPs.
	if wait_until 120 "the re-check after $victim's return" recheck_done_since "$r0" "$victim"; then
		pass "$victim's return re-checked its edges: $(grep -c "recheck_reason=$victim came back" $W/since.kv)"
	else
		fail "no re-check after $victim's return"
		grep -a -E 'survey|re-check|node .* (up|down)|test' $W/logs/coordinator.log | tail -n 40
	fi
	[ "$(grep -a -c 'survey started (automatic)' $W/logs/coordinator.log || true)" = "$a0" ] ||
		fail "a full survey ran on $victim's return"
	wait_until 20 "no RC QPs after that re-check" no_rc_qps ||
		fail "QPs left after the re-check on $victim's return"
}
kill_mid_test n2 n1 n2 # the target dies: the requester sees it
kill_mid_test n1 n1 n2 # the requester dies: the coordinator stops the target
# A clean stop mid-test: the agent tears its test down on the way out (its
# sanitizer build reports any leak when it exits).
kill_mid_test n2 n1 n2 TERM

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

# ---- survey_method both: TCP ladder and RDMA figures side by side ----
kill $COORD
wait $COORD 2>/dev/null
sed -i 's/^survey_method .*/survey_method both/' $W/conf/coordinator.conf
echo "survey_streams 1" >>$W/conf/coordinator.conf
ring-coordinator -c $W/conf/coordinator.conf >>$W/logs/coordinator.log 2>&1 &
COORD=$!
wait_until 60 "agents back on the restarted coordinator" all_up || fail "agents did not reconnect"
rc survey --wait >$W/both-survey.out 2>&1 ||
	{ echo "survey --wait after the restart: rc $?"; tail -n 5 $W/both-survey.out; }
rc -f keyvalue status >$W/both.kv 2>&1
both=$(grep '^topology\.edges\.[^.]*\.method=tcp+rdma' $W/both.kv | wc -l)
tcp=$(grep '^topology\.edges\.[^.]*\.gbps_a_to_b_measured' $W/both.kv | grep -c '=[0-9.]*[1-9]' || true)
[ "$both" = "$N" ] && pass "survey_method both: every edge tcp+rdma" ||
	{ fail "survey_method both: $both edges tcp+rdma"; grep -E 'method=|error=|busy=' $W/both.kv; }
[ "$tcp" -ge "$N" ] && pass "survey_method both: TCP figures next to the RDMA ones" || fail "survey_method both: TCP figures on $tcp edges"
rc status | grep -A6 'edges:' || true

# ---- the daemons survived all of it ----
kill -0 $COORD 2>/dev/null && pass "coordinator alive" || fail "coordinator died"
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
