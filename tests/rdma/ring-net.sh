# ring-net.sh: emulated RDMA ring for payloads inside the rdma test VM.
# Source it (busybox sh or bash), then:
#   ring_net_up N        build a ring of N (3..8) nodes
#   ring_net_wait_gids   wait for every device's RoCE v2 IPv4 GID, print indexes
#   ring_net_info        print the layout per node
#   ring_net_down        remove it all
# Lookups for payloads: ring_net_gid_index DEV, and the table in
# /run/ring-net/ports (one line per port, see ring_net_up).
#
# Layout. All nodes live in the initial network namespace (rxe does not work
# across namespaces on these kernels). Node i has two ports:
#   r<i>a  towards node i-1,   r<i>b  towards node i+1   (node N's b meets node 1's a)
# Ring edge i joins node i's b to node i+1's a with one veth pair and a subnet:
#   edge i:  r<i>b 10.9.<i>.1/24  <-->  r<i+1>a 10.9.<i>.2/24
# e.g. for N=4:  n1 r1b 10.9.1.1 -- 10.9.1.2 r2a n2 r2b 10.9.2.1 -- 10.9.2.2 r3a n3
#                n3 r3b 10.9.3.1 -- 10.9.3.2 r4a n4 r4b 10.9.4.1 -- 10.9.4.2 r1a n1
# Every port carries a soft-RoCE device named rxe<i><a|b> (rxe1b on r1b).
#
# Routing. Both ends of every edge are local addresses, which the kernel would
# normally deliver through lo. Policy routing sends them through the veth:
#   pref 100+  from SELF to PEER iif lo  lookup <table 100+port>
#   pref 400+  oif PORT to PEER          lookup <same table>  (device-bound
#              sockets look up before they have a source address)
#   table:     PEER dev <port> src SELF
#   pref 900   iif lo to 10.9.0.0/16 unreachable
#   pref 1000  lookup local            (moved down from pref 0)
# with accept_local=1 and rp_filter=0 so the peer accepts packets whose source
# is one of its own addresses. Only a port's own address towards its own peer
# takes the veth. Anything else sent into the ring's addresses (n1 to n3,
# not adjacent) has no route, as on real hardware: RDMA between
# non-adjacent ports gets no answer ("transport retry counter exceeded",
# rxe ties its packets to its own port), TCP gets "no route to host"
# instead of a shortcut through lo. Management and perftest's handshake use
# 127.0.0.1, which none of this touches. IPv6 is off on the ring ports so
# the GID tables hold only the MAC-derived default GIDs and the IPv4 ones.

RING_NET_IP=/usr/bin/ip  # iproute2; busybox ash would run its own ip applet
RING_NET_RDMA=/usr/bin/rdma
RING_NET_DIR=/run/ring-net

ring_net_log() { echo "ring-net: $*"; }
ring_net_fail() { echo "ring-net: ERROR: $*" >&2; return 1; }

# ring_net_sysctl KEY VALUE: write /proc/sys directly (no sysctl applet needed)
ring_net_sysctl() {
	echo "$2" >"/proc/sys/$(echo "$1" | tr . /)" || ring_net_fail "sysctl $1=$2"
}

ring_net_up() {
	n=${1:-}
	case $n in [3-8]) ;; *) ring_net_fail "ring_net_up N: N must be 3..8, got '$n'"; return 1 ;; esac
	ip=$RING_NET_IP
	mkdir -p "$RING_NET_DIR"
	# Lines: node port netdev rxe addr peer_node peer_port peer_addr edge table
	: >"$RING_NET_DIR/ports"
	echo "$n" >"$RING_NET_DIR/n"

	ring_net_sysctl net.ipv6.conf.default.disable_ipv6 1 || return 1
	ring_net_sysctl net.ipv4.conf.all.accept_local 1 || return 1
	ring_net_sysctl net.ipv4.conf.default.accept_local 1 || return 1
	ring_net_sysctl net.ipv4.conf.all.rp_filter 0 || return 1
	ring_net_sysctl net.ipv4.conf.default.rp_filter 0 || return 1
	# A veth delivers through the CPU's backlog queue, 1000 packets by
	# default: every cable loaded at once under TCG overflows it, the
	# drops (an rxe ACK among them) become retransmissions, and the
	# kernel's rxe retry path is where its WARNING in rxe_completer lives.
	# A real port has no such queue; make this one deep enough.
	ring_net_sysctl net.core.netdev_max_backlog 30000 || return 1

	e=1
	while [ "$e" -le "$n" ]; do
		j=$((e % n + 1))
		$ip link add "r${e}b" type veth peer name "r${j}a" || { ring_net_fail "veth r${e}b/r${j}a"; return 1; }
		for p in "r${e}b" "r${j}a"; do
			# (no conf dir at all when the default already disabled IPv6)
			if [ -d "/proc/sys/net/ipv6/conf/$p" ]; then
				ring_net_sysctl "net.ipv6.conf.$p.disable_ipv6" 1 || return 1
			fi
			ring_net_sysctl "net.ipv4.conf.$p.accept_local" 1 || return 1
			ring_net_sysctl "net.ipv4.conf.$p.rp_filter" 0 || return 1
		done
		$ip addr add "10.9.$e.1/24" dev "r${e}b" || return 1
		$ip addr add "10.9.$e.2/24" dev "r${j}a" || return 1
		$ip link set "r${e}b" up || return 1
		$ip link set "r${j}a" up || return 1
		# tables: 100+2e-1 for the b end, 100+2e for the a end
		tb=$((100 + 2 * e - 1))
		ta=$((100 + 2 * e))
		$ip route add "10.9.$e.2" dev "r${e}b" src "10.9.$e.1" table $tb || return 1
		$ip route add "10.9.$e.1" dev "r${j}a" src "10.9.$e.2" table $ta || return 1
		$ip rule add pref $tb from "10.9.$e.1" to "10.9.$e.2" iif lo lookup $tb || return 1
		$ip rule add pref $ta from "10.9.$e.2" to "10.9.$e.1" iif lo lookup $ta || return 1
		# A socket bound to the port (SO_BINDTODEVICE) looks its route
		# up before it has a source address: match it by device.
		$ip rule add pref $((tb + 300)) oif "r${e}b" to "10.9.$e.2" lookup $tb || return 1
		$ip rule add pref $((ta + 300)) oif "r${j}a" to "10.9.$e.1" lookup $ta || return 1
		echo "$e r${e}b r${e}b rxe${e}b 10.9.$e.1 $j r${j}a 10.9.$e.2 $e $tb" >>"$RING_NET_DIR/ports"
		echo "$j r${j}a r${j}a rxe${j}a 10.9.$e.2 $e r${e}b 10.9.$e.1 $e $ta" >>"$RING_NET_DIR/ports"
		e=$((e + 1))
	done
	# Anything else sent from this host into the ring's addresses is what
	# a real node would send to a non-neighbour: there is no cable, so no
	# route (instead of a shortcut through lo).
	$ip rule add pref 900 iif lo to 10.9.0.0/16 unreachable || return 1
	# The local table must come after the per-edge rules.
	if $ip rule show | grep -q '^0:.*lookup local'; then
		$ip rule add pref 1000 lookup local || return 1
		$ip rule del pref 0 lookup local || return 1
	fi
	while read -r _ port dev rxe _; do
		$RING_NET_RDMA link add "$rxe" type rxe netdev "$dev" || { ring_net_fail "rdma link add $rxe on $dev"; return 1; }
	done <"$RING_NET_DIR/ports"
	ring_net_log "ring of $n nodes up: $(($n * 2)) ports, $(($n * 2)) rxe devices"
}

# ring_net_gid_index DEV: index of DEV's RoCE v2 IPv4-mapped GID (empty if none)
ring_net_gid_index() {
	d=/sys/class/infiniband/$1/ports/1
	for g in "$d"/gids/*; do
		[ -e "$g" ] || continue
		i=${g##*/}
		read -r gid <"$g" 2>/dev/null || continue
		case $gid in 0000:0000:0000:0000:0000:ffff:*) ;; *) continue ;; esac
		read -r t <"$d/gid_attrs/types/$i" 2>/dev/null || continue
		[ "$t" = "RoCE v2" ] && { echo "$i"; return 0; }
	done
	return 0
}

# ring_net_wait_gids [SECONDS]: wait (default 20 s) until every rxe device has
# its RoCE v2 IPv4 GID; print "DEV gid-index I addr A" per device.
ring_net_wait_gids() {
	limit=${1:-20}
	start=$(cut -d. -f1 /proc/uptime)
	while :; do
		missing=
		while read -r _ _ _ rxe _; do
			[ -n "$(ring_net_gid_index "$rxe")" ] || missing="$missing $rxe"
		done <"$RING_NET_DIR/ports"
		[ -z "$missing" ] && break
		if [ $(($(cut -d. -f1 /proc/uptime) - start)) -ge "$limit" ]; then
			ring_net_fail "no RoCE v2 IPv4 GID after ${limit}s on:$missing"
			return 1
		fi
		sleep 0.2
	done
	while read -r _ _ _ rxe addr _; do
		echo "$rxe gid-index $(ring_net_gid_index "$rxe") addr $addr"
	done <"$RING_NET_DIR/ports"
}

ring_net_info() {
	n=$(cat "$RING_NET_DIR/n")
	i=1
	while [ "$i" -le "$n" ]; do
		echo "n$i:"
		while read -r node port dev rxe addr pnode pport paddr edge table; do
			[ "$node" = "$i" ] || continue
			echo "  port $port addr $addr rxe $rxe gid-index $(ring_net_gid_index "$rxe")" \
				"-> n$pnode port $pport addr $paddr (edge $edge, table $table)"
		done <"$RING_NET_DIR/ports"
		i=$((i + 1))
	done
}

ring_net_down() {
	[ -f "$RING_NET_DIR/ports" ] || return 0
	ip=$RING_NET_IP
	while read -r _ _ _ rxe _; do
		$RING_NET_RDMA link delete "$rxe" 2>/dev/null || true
	done <"$RING_NET_DIR/ports"
	while read -r node port dev rxe addr pnode pport paddr edge table; do
		$ip rule del pref "$table" 2>/dev/null || true
		$ip rule del pref $((table + 300)) 2>/dev/null || true
		$ip route flush table "$table" 2>/dev/null || true
		case $port in *b) $ip link del "$port" 2>/dev/null || true ;; esac
	done <"$RING_NET_DIR/ports"
	$ip rule del pref 900 2>/dev/null || true
	if $ip rule show | grep -q '^1000:.*lookup local'; then
		$ip rule add pref 0 lookup local
		$ip rule del pref 1000 lookup local
	fi
	rm -rf "$RING_NET_DIR"
	ring_net_log "ring down"
}
