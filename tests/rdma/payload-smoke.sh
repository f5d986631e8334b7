#!/bin/sh
# Smoke test of the emulated RDMA ring (runs inside the VM: tests/rdma/vm.sh smoke).
# 4-node ring; perftest between adjacent ports must pass, between
# non-adjacent ports (n1 -> n3) must fail within a bounded time; no QPs
# may be left behind.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/ring-net.sh"

FAILS=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
now_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; } # centiseconds
secs() { awk -v c="$1" 'BEGIN { printf "%.2f", c / 100 }'; }

# wait_listen PORT SECONDS: until something listens on TCP PORT
wait_listen() {
	hex=$(printf ':%04X ' "$1")
	end=$(($(now_cs) + $2 * 100))
	while [ "$(now_cs)" -lt "$end" ]; do
		cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep "$hex" | grep -q ' 0A ' && return 0
		sleep 0.1
	done
	return 1
}

PORT=18515
# perf NAME TOOL SERVER_DEV CLIENT_DEV LIMIT ARGS...: run one perftest pair;
# sets PERF_RC (client's), PERF_CS (client's run time), PERF_OUT (client log)
perf() {
	name=$1 tool=$2 sdev=$3 cdev=$4 limit=$5
	shift 5
	PORT=$((PORT + 1))
	sgid=$(ring_net_gid_index "$sdev")
	cgid=$(ring_net_gid_index "$cdev")
	PERF_OUT=/tmp/$name.client
	timeout "$limit" "$tool" -d "$sdev" -x "$sgid" -p "$PORT" -F "$@" >"/tmp/$name.server" 2>&1 &
	spid=$!
	if ! wait_listen "$PORT" 20; then
		echo "--- $name server did not listen:"
		cat "/tmp/$name.server"
	fi
	t0=$(now_cs)
	timeout "$limit" "$tool" -d "$cdev" -x "$cgid" -p "$PORT" -F "$@" 127.0.0.1 >"$PERF_OUT" 2>&1
	PERF_RC=$?
	PERF_CS=$(($(now_cs) - t0))
	# The server ends once the client has; bounded by its own timeout anyway.
	wait "$spid"
	PERF_SRC=$?
}

# adjacent NAME TOOL SERVER_DEV CLIENT_DEV ARGS...: must pass
adjacent() {
	name=$1
	perf "$@"
	if [ "$PERF_RC" = 0 ] && [ "$PERF_SRC" = 0 ]; then
		pass "$name $3 <- $4 ($(secs "$PERF_CS") s)"
		# the result table: header line starting with '#bytes' and the rows after it
		sed -n '/#bytes/,/^---/p' "$PERF_OUT" | grep -v '^---'
	else
		fail "$name $3 <- $4: client rc $PERF_RC, server rc $PERF_SRC"
		echo "--- client:"; tail -n 15 "$PERF_OUT"
		echo "--- server:"; tail -n 15 "/tmp/$name.server"
	fi
}

ring_net_up 4 || { echo "FAIL: ring_net_up 4"; exit 1; }
if ring_net_wait_gids 30; then
	pass "RoCE v2 IPv4 GIDs on all 8 devices"
else
	fail "GIDs"
	ibv_devinfo -v 2>&1 | tail -n 40
	exit 1
fi
ring_net_info
$RING_NET_IP rule show
BASE=$(rdma resource show)
echo "rdma resource baseline:"; echo "$BASE"

# Adjacent pairs: n1.b <-> n2.a (edge 1), n2.b <-> n3.a (edge 2), n4.b <-> n1.a (edge 4)
RX0=$(cat /sys/class/net/r2a/statistics/rx_packets)
adjacent write_bw ib_write_bw rxe2a rxe1b 90 -D 2 --report_gbits
adjacent read_bw ib_read_bw rxe3a rxe2b 90 -D 2 --report_gbits
adjacent write_lat ib_write_lat rxe1a rxe4b 90 -n 1000
RX1=$(cat /sys/class/net/r2a/statistics/rx_packets)
if [ $((RX1 - RX0)) -gt 1000 ]; then
	pass "write_bw crossed the veth: r2a rx_packets +$((RX1 - RX0))"
else
	fail "r2a rx_packets only +$((RX1 - RX0)): traffic did not cross the veth"
fi

# rxe-probe: one verified RDMA WRITE per port towards its own peer (all 8
# directions of the 4 edges), with a finite transport retry count.
probe() { # probe DEV_A DEV_B: rxe-probe A -> B, sets PROBE_RC, PROBE_OUT, PROBE_CS
	t0=$(now_cs)
	PROBE_OUT=$(timeout 60 rxe-probe -r 3 -t 14 -w 45 "$1" "$(ring_net_gid_index "$1")" \
		"$2" "$(ring_net_gid_index "$2")" 2>&1)
	PROBE_RC=$?
	PROBE_CS=$(($(now_cs) - t0))
}
while read -r _ _ _ rxe _ _ pport _; do
	probe "$rxe" "rxe${pport#r}"
	if [ "$PROBE_RC" = 0 ]; then
		pass "$PROBE_OUT"
	else
		fail "adjacent rxe-probe $rxe -> rxe${pport#r} (rc $PROBE_RC): $PROBE_OUT"
	fi
done <"$RING_NET_DIR/ports"

# Non-adjacent: a port only reaches the port at the other end of its own
# veth. n1 -> n3 (both ways), and n1's b port towards n4 and towards its own
# a port, must end with "transport retry counter exceeded" in bounded time.
for pair in "rxe1b rxe3a" "rxe3a rxe1b" "rxe1b rxe4b" "rxe1b rxe1a"; do
	set -- $pair
	probe "$1" "$2"
	if [ "$PROBE_RC" = 1 ] && echo "$PROBE_OUT" | grep -q 'retry counter exceeded'; then
		pass "non-adjacent $1 -> $2 failed as it must, in $(secs "$PROBE_CS") s: $PROBE_OUT"
	else
		fail "non-adjacent $1 -> $2 (rc $PROBE_RC, $(secs "$PROBE_CS") s): $PROBE_OUT"
	fi
done

# perftest between non-adjacent n1 (rxe1b) and n3 (rxe3a). perftest sets
# retry_cnt 7, which rxe takes as "retry forever": the client makes no
# progress and our timeout ends it. It must not succeed.
perf nonadj ib_write_bw rxe3a rxe1b 15 -n 5
echo "--- non-adjacent perftest client said (stdout is lost when killed):"
grep -v '^ *$' "$PERF_OUT" | tail -n 8
if [ "$PERF_RC" = 0 ]; then
	fail "non-adjacent perftest rxe1b -> rxe3a succeeded; it must not"
elif [ "$PERF_RC" = 124 ] || [ "$PERF_RC" = 143 ] || [ "$PERF_RC" = 137 ]; then
	pass "non-adjacent perftest rxe1b -> rxe3a made no progress, killed by the timeout after $(secs "$PERF_CS") s (rc $PERF_RC)"
else
	pass "non-adjacent perftest rxe1b -> rxe3a failed, rc $PERF_RC after $(secs "$PERF_CS") s"
fi

# No QPs/CQs/MRs left behind once the perftest processes are gone.
end=$(($(now_cs) + 1000))
while [ "$(rdma resource show)" != "$BASE" ] && [ "$(now_cs)" -lt "$end" ]; do sleep 0.2; done
NOW=$(rdma resource show)
if [ "$NOW" = "$BASE" ]; then
	pass "rdma resource show back to baseline"
else
	fail "resources left over:"
	echo "$NOW"
	rdma resource show qp
fi

ring_net_down
if [ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]; then
	pass "ring_net_down removed every rxe device"
else
	fail "rxe devices left after ring_net_down: $(ls /sys/class/infiniband)"
fi

if [ "$FAILS" = 0 ]; then
	echo "SMOKE PASS"
	exit 0
fi
echo "SMOKE FAIL: $FAILS check(s) failed"
exit 1
