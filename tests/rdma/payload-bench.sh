#!/bin/sh
# ringd's RDMA engine against perftest, side by side (inside the VM:
# tests/rdma/vm.sh bench [key=value ...]; bench/bench.py part 3 runs it).
#
# One edge, n1's rxe1b -> n2's rxe2a, both tools on the same devices with
# the same message size and QP count, ALTERNATING ours / theirs run by run
# so that drift in the VM hits both:
#   write_bw   ringctl test rdma-bw n1 n2 --op write   vs ib_write_bw
#   read_bw    ringctl test rdma-bw n1 n2 --op read    vs ib_read_bw
#   write_lat  ringctl test rdma-lat n1 n2 --op write  vs ib_write_lat
# Arguments (key=value, no blanks: they ride on the kernel command line):
#   runs=5 qps=2 size=65536 duration=3 warmup=1 lat_size=2 lat_iters=2000
#   tests=write_bw,read_bw,write_lat trace=0
#   trace=1: sample the data packets arriving every 50 ms during each
#   bandwidth run and print the timeline (BENCH-TRACE); costs some CPU.
#   ringd_args=--cq-mod,1  perftest_args=-Q,16: extra options for the
#   bandwidth runs of one tool (commas for blanks), for experiments.
# Output, one line per measurement (bench.py parses these):
#   BENCH tool=ringd|perftest test=T run=I key=value ...
#   BENCH-DIAG tool=... test=T run=I key=value ...   (loss counters of the run)
#   BENCH-ERROR tool=... test=T run=I rc=RC  (then the tool's output)
#   BENCH-RETRY tool=perftest ...   (a perftest run repeated, see usable)
# Exit 0 when every run produced a figure, 1 otherwise.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/ring-net.sh"

RUNS=5 QPS=2 SIZE=65536 DURATION=3 WARMUP=1 LAT_SIZE=2 LAT_ITERS=2000
TESTS=write_bw,read_bw,write_lat TRACE=0 RINGD_ARGS= PERFTEST_ARGS=
for a in "$@"; do
	case $a in
	runs=*) RUNS=${a#*=} ;;
	qps=*) QPS=${a#*=} ;;
	size=*) SIZE=${a#*=} ;;
	duration=*) DURATION=${a#*=} ;;
	warmup=*) WARMUP=${a#*=} ;;
	lat_size=*) LAT_SIZE=${a#*=} ;;
	lat_iters=*) LAT_ITERS=${a#*=} ;;
	tests=*) TESTS=${a#*=} ;;
	trace=*) TRACE=${a#*=} ;;
	ringd_args=*) RINGD_ARGS=$(echo "${a#*=}" | tr , ' ') ;;
	perftest_args=*) PERFTEST_ARGS=$(echo "${a#*=}" | tr , ' ') ;;
	*) echo "payload-bench: unknown argument '$a'" >&2; exit 2 ;;
	esac
done
for v in "$RUNS" "$QPS" "$SIZE" "$DURATION" "$WARMUP" "$LAT_SIZE" "$LAT_ITERS"; do
	case $v in '' | *[!0-9]*) echo "payload-bench: '$v' is not a whole number" >&2; exit 2 ;; esac
done

W=/tmp/bench
. "$HERE/ringd-lib.sh"
A_DEV=rxe1b B_DEV=rxe2a # edge 1: n1's r1b <-> n2's r2a
ERRORS=0
log() { echo "bench: $*"; }
wait_listen() { # wait_listen PORT SECONDS: until something listens on TCP PORT
	hex=$(printf ':%04X ' "$1")
	wait_until "$2" "a listener on port $1" sh -c \
		"cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep '$hex' | grep -q ' 0A '"
}

# ---- loss counters: is the emulated path dropping packets? ----
# rxe's own counters (hw_counters) tell retransmissions; the netdevs and
# the softirq backlog tell where packets went missing.
ctr() { cat "$1" 2>/dev/null || echo 0; }
softnet_drops() { # column 2 of /proc/net/softnet_stat, hex, summed over CPUs
	s=0
	while read -r _ d _; do s=$((s + 0x$d)); done </proc/net/softnet_stat
	echo $s
}
snap() { # snap: one line of counters, to subtract
	hwa=/sys/class/infiniband/$A_DEV/ports/1/hw_counters
	hwb=/sys/class/infiniband/$B_DEV/ports/1/hw_counters
	echo "$(ctr $hwa/sent_pkts) $(ctr $hwa/completer_retry_err) $(ctr $hwa/rcvd_seq_err)" \
		"$(ctr $hwb/out_of_seq_request) $(ctr $hwb/duplicate_request)" \
		"$(ctr $hwb/sent_pkts) $(ctr $hwa/out_of_seq_request)" \
		"$(softnet_drops)" \
		"$(ctr /sys/class/net/r1b/statistics/tx_dropped) $(ctr /sys/class/net/r2a/statistics/rx_dropped)" \
		"$(ctr /sys/class/net/r2a/statistics/tx_dropped) $(ctr /sys/class/net/r1b/statistics/rx_dropped)" \
		"$(ctr $hwa/rcvd_pkts) $(ctr $hwb/rcvd_pkts)"
}
diag() { # diag TOOL TEST RUN BEFORE AFTER: print the differences
	echo "$4 $5" | awk -v h="BENCH-DIAG tool=$1 test=$2 run=$3" '{
		n = NF / 2
		for (i = 1; i <= n; i++) d[i] = $(i + n) - $i
		printf "%s a_sent_pkts=%d a_retry_timeouts=%d a_seq_naks=%d", h, d[1], d[2], d[3]
		printf " b_out_of_seq=%d b_dup_requests=%d b_sent_pkts=%d", d[4], d[5], d[6]
		printf " a_out_of_seq=%d softnet_drops=%d veth_drops=%d", d[7], d[8], d[9] + d[10] + d[11] + d[12]
		printf " a_rcvd_pkts=%d b_rcvd_pkts=%d\n", d[13], d[14]
	}'
}

# trace_start / trace_stop TOOL TEST RUN: packets per 50 ms into the data
# receiver (B's port for WRITE, A's for READ), and A's retry timeouts.
trace_start() {
	[ "$TRACE" = 1 ] || return 0
	rm -f $W/trace.stop
	(
		case $1 in read*) f=/sys/class/net/r1b/statistics/rx_packets ;;
		*) f=/sys/class/net/r2a/statistics/rx_packets ;; esac
		r=/sys/class/infiniband/$A_DEV/ports/1/hw_counters/completer_retry_err
		while [ ! -f $W/trace.stop ]; do
			echo "$(cut -d' ' -f1 /proc/uptime) $(cat $f) $(cat $r)"
			sleep 0.05
		done
	) >$W/trace.raw &
	TRACE_PID=$!
}
trace_stop() {
	[ "$TRACE" = 1 ] || return 0
	touch $W/trace.stop
	wait $TRACE_PID
	# "+N" = packets since the last sample, "R" marks a retry timeout
	awk -v h="BENCH-TRACE tool=$1 test=$2 run=$3 every_ms=50 pkts=" '
		NR > 1 { printf "%s%d%s", (NR > 2 ? "," : h), $2 - p, ($3 > r ? "R" : "") }
		{ p = $2; r = $3 }
		END { print "" }' $W/trace.raw
}

# ---- the emulated ring and ringd (see payload-ringd.sh) ----
ring_net_up 3 || exit 1
ring_net_wait_gids || exit 1
A_GID=$(ring_net_gid_index $A_DEV)
B_GID=$(ring_net_gid_index $B_DEV)
log "edge 1: $A_DEV (gid $A_GID, $(cat /sys/class/net/r1b/mtu) B mtu) -> $B_DEV (gid $B_GID)"
log "tuning: netdev_max_backlog $(cat /proc/sys/net/core/netdev_max_backlog)," \
	"r1b txqueuelen $(cat /sys/class/net/r1b/tx_queue_len), $(nproc) cpus," \
	"$(grep -m1 'cpu MHz' /proc/cpuinfo | tr -s ' \t' ' '), clocksource" \
	"$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"

# The setting of the comparison, printed before anything is measured.
ring_net_info
$RING_NET_IP rule show
for d in $A_DEV $B_DEV; do ibv_devinfo -v -d $d; done # limits: max_qp_wr, rd_atom, mtu
echo "rxe counters: $(ls /sys/class/infiniband/$A_DEV/ports/1/hw_counters | tr '\n' ' ')"

ringd_pki n1 n2 || exit 1
# Only n1 and n2 run an agent: n3's would only take CPU from the two
# vCPUs. No automatic survey: its tests would share the devices with ours.
ringd_coordinator_conf n1 n2 <<EOF
survey_settle 1h
survey_grace 1h
survey_interval 0
survey_method tcp
survey_streams 1
survey_duration 100ms
survey_warmup 0
latency_sizes 64
latency_iterations 10
EOF
for i in 1 2; do
	printf 'rdma_device rxe%sa rxe%sb\nrdma_max_memory 64M\n' $i $i | ringd_agent_conf $i
done
ring-coordinator -c $W/conf/coordinator.conf >$W/logs/coordinator.log 2>&1 &
PIDS=$!
for i in 1 2; do
	ring-agent -c $W/conf/n$i.conf >$W/logs/n$i.log 2>&1 &
	PIDS="$PIDS $!"
done
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
}
trap cleanup EXIT

up() { rc -f keyvalue status | grep -q '^connected=2$'; }
wait_until 60 "both agents connected" up || { ringd_show_logs 10; exit 1; }
# RDMA tests go between the ports the last survey found cabled: run one
# now, as short as the coordinator allows (TCP, one stream, 100 ms).
# Afterwards nothing starts another: settle/grace 1h, no interval.
if ! timeout 120 ringctl -s "$SOCK" -t 110 survey --wait >$W/survey.out 2>&1; then
	echo "BENCH-ERROR tool=ringd test=setup run=0 rc=1 the survey failed"
	cat $W/survey.out
	ringd_show_logs 10
	exit 1
fi
rc status | sed 's/^/  /'
first() { timeout 60 ringctl -s "$SOCK" -f keyvalue test rdma-lat n1 n2 --op write --sizes 2 --iterations 10 >$W/first.out 2>&1; }
if ! wait_until 30 "a first RDMA test n1 -> n2" first; then
	cat $W/first.out
	ringd_show_logs 10
	exit 1
fi
ends=$(grep -E '^(a|b)_endpoint\.device=' $W/first.out | cut -d= -f2 | tr '\n' ' ')
log "ringd picked: $ends(perftest gets -d $A_DEV / -d $B_DEV)"
[ "$ends" = "$A_DEV $B_DEV " ] || { echo "BENCH-ERROR tool=ringd test=setup run=0 rc=1 devices '$ends', expected $A_DEV $B_DEV"; exit 1; }

# ---- one run of each tool ----
fail() { # fail TOOL TEST RUN RC OUTFILE
	ERRORS=$((ERRORS + 1))
	echo "BENCH-ERROR tool=$1 test=$2 run=$3 rc=$4"
	sed 's/^/  | /' "$5" | tail -n 25
}
kv() { grep "^$1=" "$2" | head -n 1 | cut -d= -f2-; }

# ringd: warm-up WARMUP s (not counted), then a DURATION s window.
ours_bw() { # ours_bw TEST OP RUN
	out=$W/ours-$1-$3.out
	t0=$(now_cs)
	timeout $((DURATION + WARMUP + 60)) ringctl -s "$SOCK" -t $((DURATION + WARMUP + 50)) \
		-f keyvalue test rdma-bw n1 n2 --op "$2" --qps "$QPS" --size "$SIZE" \
		--duration "$DURATION" --warmup "$WARMUP" $RINGD_ARGS >"$out" 2>&1
	r=$?
	t1=$(now_cs)
	g=$(kv gbps_measured "$out")
	if [ $r -ne 0 ] || [ -z "$g" ] || ! grep -q '^result=ok' "$out"; then
		fail ringd "$1" "$3" $r "$out"
		return
	fi
	[ "$3" = 1 ] && { log "ringd $1 run 1, full report:"; sed 's/^/  /' "$out"; }
	msgs=0 per=
	for m in $(grep '^a_side\.qps\.[0-9]*\.messages=' "$out" | cut -d= -f2); do
		msgs=$((msgs + m))
		per=$per${per:+/}$m
	done
	echo "BENCH tool=ringd test=$1 run=$3 gbps=$g peak=$(kv peak_gbps_measured "$out")" \
		"msgs=$msgs qp_msgs=$per window_s=$(kv a_side.window_s "$out") cpu_pct=$(kv a_side.cpu_pct "$out")" \
		"wall_s=$(awk -v c=$((t1 - t0)) 'BEGIN { printf "%.1f", c / 100 }')"
}

# perftest -D T -f M: M s of margin (posting, not counted) at each end of
# a T - 2M s window. T = DURATION + 2 WARMUP, M = WARMUP: the same warm-up
# and window as ours (perftest's own default margin is T/4, whole seconds).
PORT=18515
theirs() { # theirs TEST TOOL RUN ARGS...: server on B, client on A
	test=$1 ptool=$2 run=$3
	shift 3
	PORT=$((PORT + 1))
	out=$W/theirs-$test-$run.out
	limit=$((DURATION + 2 * WARMUP + 60))
	timeout $limit "$ptool" -d $B_DEV -x "$B_GID" -p $PORT -F "$@" >$W/server.out 2>&1 &
	spid=$!
	if ! wait_listen $PORT 30; then
		kill $spid 2>/dev/null
		wait $spid
		fail perftest "$test" "$run" listen $W/server.out
		return 1
	fi
	t0=$(now_cs)
	timeout $limit "$ptool" -d $A_DEV -x "$A_GID" -p $PORT -F "$@" 127.0.0.1 >"$out" 2>&1
	r=$?
	WALL=$(awk -v c=$(($(now_cs) - t0)) 'BEGIN { printf "%.1f", c / 100 }')
	wait $spid
	sr=$?
	if [ $r -ne 0 ] || [ $sr -ne 0 ]; then
		cat $W/server.out >>"$out"
		fail perftest "$test" "$run" "$r/$sr" "$out"
		return 1
	fi
	[ "$run" = 1 ] && { log "perftest $test run 1, client output:"; sed 's/^/  /' "$out"; }
	# the result row: the first numeric line after the '#bytes' header
	ROW=$(sed -n '/#bytes/,$p' "$out" | grep -E '^ *[0-9]' | head -n 1)
	[ -n "$ROW" ] || { fail perftest "$test" "$run" norow "$out"; return 1; }
	return 0
}
# perftest converts its TSC cycles with a CPU clock it measures at start;
# under TCG that measurement sometimes fails ("Correlation coefficient
# r^2: 0.55 < 0.9") and every figure comes out inf or 0 although the run
# itself went fine. Such a run is repeated (twice at most) and counted.
# usable VALUE: a finite number > 0
usable() { echo "$1" | awk '$1 + 0 > 0 && $1 !~ /inf|nan/ { ok = 1 } END { exit !ok }'; }
theirs_usable() { # theirs_usable COLUMN TEST TOOL RUN ARGS...: theirs, again on a bad clock
	col=$1
	shift
	for try in 1 2 3; do
		theirs "$@" || return 1
		v=$(echo "$ROW" | awk -v c="$col" '{ print $c }')
		usable "$v" && return 0
		echo "BENCH-RETRY tool=perftest test=$test run=$run try=$try value=$v" \
			"clock='$(grep -m1 'Correlation coefficient' "$out" | tr -d "'")'"
	done
	fail perftest "$test" "$run" unusable "$out"
	return 1
}
theirs_bw() { # theirs_bw TEST TOOL RUN
	theirs_usable 4 "$1" "$2" "$3" -q "$QPS" -s "$SIZE" -D $((DURATION + 2 * WARMUP)) -f "$WARMUP" \
		--report_gbits $PERFTEST_ARGS || return
	# #bytes #iterations BW_peak[Gb/s] BW_average[Gb/s] MsgRate[Mpps]
	set -- $ROW
	echo "BENCH tool=perftest test=$test run=$run gbps=$4 peak=$3 msgs=$2 window_s=$DURATION wall_s=$WALL"
}

ours_lat() { # ours_lat RUN
	out=$W/ours-write_lat-$1.out
	timeout 120 ringctl -s "$SOCK" -t 110 -f keyvalue test rdma-lat n1 n2 --op write \
		--sizes "$LAT_SIZE" --iterations "$LAT_ITERS" >"$out" 2>&1
	r=$?
	p50=$(kv a_side.latency.0.p50_us "$out")
	if [ $r -ne 0 ] || [ -z "$p50" ] || ! grep -q '^result=ok' "$out"; then
		fail ringd write_lat "$1" $r "$out"
		return
	fi
	[ "$1" = 1 ] && { log "ringd write_lat run 1, full report:"; sed 's/^/  /' "$out"; }
	echo "BENCH tool=ringd test=write_lat run=$1 p50_us=$p50" \
		"mean_us=$(kv a_side.latency.0.mean_us "$out") min_us=$(kv a_side.latency.0.min_us "$out")" \
		"p99_us=$(kv a_side.latency.0.p99_us "$out") n=$(kv a_side.latency.0.n "$out")"
}
theirs_lat() { # theirs_lat RUN
	theirs_usable 5 write_lat ib_write_lat "$1" -s "$LAT_SIZE" -n "$LAT_ITERS" || return
	# #bytes #iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
	# (t_typical is perftest's median; half a round trip, like ours)
	set -- $ROW
	echo "BENCH tool=perftest test=write_lat run=$run p50_us=$5 mean_us=$6 min_us=$3 p99_us=$8 n=$2"
}

# ---- the alternation ----
T0=$(now_cs)
log "runs=$RUNS qps=$QPS size=$SIZE duration=$DURATION warmup=$WARMUP" \
	"lat_size=$LAT_SIZE lat_iters=$LAT_ITERS tests=$TESTS" \
	"ringd_args='$RINGD_ARGS' perftest_args='$PERFTEST_ARGS'"
for test in $(echo "$TESTS" | tr , ' '); do
	i=1
	while [ $i -le "$RUNS" ]; do
		# Who goes first alternates too: a slow first run (cold caches,
		# a settling VM) does not always hit the same tool.
		if [ $((i % 2)) = 1 ]; then order="ringd perftest"; else order="perftest ringd"; fi
		for tool in $order; do
			s0=$(snap)
			case $test in *_bw) trace_start $test ;; esac
			case $test:$tool in
			write_bw:ringd) ours_bw write_bw write $i ;;
			read_bw:ringd) ours_bw read_bw read $i ;;
			write_bw:perftest) theirs_bw write_bw ib_write_bw $i ;;
			read_bw:perftest) theirs_bw read_bw ib_read_bw $i ;;
			write_lat:ringd) ours_lat $i ;;
			write_lat:perftest) theirs_lat $i ;;
			*) echo "payload-bench: unknown test '$test'" >&2; exit 2 ;;
			esac
			case $test in *_bw) trace_stop $tool $test $i ;; esac
			diag $tool $test $i "$s0" "$(snap)"
		done
		i=$((i + 1))
	done
done
log "measurements took $((($(now_cs) - T0) / 100)) s, $ERRORS error(s)"
if /usr/bin/rdma resource show qp 2>/dev/null | grep -q ' type RC '; then
	log "RC QPs left over:"
	/usr/bin/rdma resource show qp
fi
[ $ERRORS -eq 0 ] || show_logs
[ $ERRORS -eq 0 ]
