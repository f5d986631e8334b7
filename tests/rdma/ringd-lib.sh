# ringd-lib.sh: ringd on the emulated ring, for payloads. Source it after
# ring-net.sh with W set to a work directory; it provides
#   now_cs                      uptime in centiseconds
#   wait_until SECONDS WHAT CMD...   poll CMD quietly until it succeeds
#   rc ARGS...                  ringctl on this coordinator's socket
#   ringd_pki NODE...           CA and certificates (coordinator + nodes)
#   ringd_coordinator_conf EXPECT...   coordinator.conf; extra lines on stdin
#   ringd_agent_conf I          conf/nI.conf for node nI, restricted to its
#                               ports r<I>a/r<I>b; extra lines on stdin
#                               (its devices rxe<I>a/rxe<I>b: an rdma_device
#                               line, or ring-agent -r)
#   ringd_show_logs [LINES]     the tail of every daemon's log
# Management runs over loopback (127.0.0.1:7420): rxe needs every node in
# the initial namespace, so the agents share it and identify themselves by
# certificate, as on a real cluster.
SOCK=$W/coord.sock
mkdir -p "$W/pki" "$W/conf" "$W/logs" "$W/state"

now_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
rc() { ringctl -s "$SOCK" "$@"; }

wait_until() {
	limit=$1 what=$2
	shift 2
	end=$(($(now_cs) + limit * 100))
	while [ "$(now_cs)" -lt "$end" ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "timed out after ${limit}s waiting for $what"
	return 1
}

ringd_pki() {
	rc pki init "$W/pki" >/dev/null || return 1
	# The coordinator's certificate has the server role, the nodes' the
	# client role: each side refuses the other kind.
	rc pki issue "$W/pki" coordinator --coordinator >/dev/null || return 1
	for n in "$@"; do
		rc pki issue "$W/pki" "$n" >/dev/null || return 1
	done
}

ringd_coordinator_conf() {
	{
		echo "name coordinator"
		echo "listen 127.0.0.1:7420"
		echo "ca $W/pki/ca.crt"
		echo "cert $W/pki/coordinator.crt"
		echo "key $W/pki/coordinator.key"
		echo "control_socket $SOCK"
		echo "control_group root"
		echo "state_dir $W/state"
		echo "expect $*"
		echo "heartbeat_interval 2s"
		echo "heartbeat_misses 5"
		cat
	} >"$W/conf/coordinator.conf"
}

ringd_agent_conf() {
	{
		echo "node n$1"
		echo "coordinator 127.0.0.1:7420"
		echo "coordinator_name coordinator"
		echo "ca $W/pki/ca.crt"
		echo "cert $W/pki/n$1.crt"
		echo "key $W/pki/n$1.key"
		echo "mgmt_interface lo"
		echo "data_interface r${1}a r${1}b"
		echo "lldp_interval 1s"
		cat
	} >"$W/conf/n$1.conf"
}

ringd_show_logs() {
	for f in "$W"/logs/*.log; do
		echo "--- $f (last ${1:-15} lines)"
		tail -n "${1:-15}" "$f"
	done
}
