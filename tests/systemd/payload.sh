#!/bin/bash
# ringd's units under a real systemd (inside the VM: tests/systemd/vm.sh).
# Run by ringd-test.service once the VM's systemd (PID 1) has booted; prints
# one PASS/FAIL line per check and "RINGD-VM-RESULT <failures>", then
# powers the VM off. The set-up follows docs/DEPLOY.md:
# install, systemd-sysusers, systemd-tmpfiles, PKI with ringctl pki, keys
# root:ringd 0640, configs in /etc/ringd, systemctl enable --now.
#
# A coordinator and two agents (n1, n2: the second agent runs the same
# unit file under another name, ring-agent-n2.service, with its own
# config) on a soft-RoCE ring of 3 nodes (tests/rdma/ring-net.sh): n1's
# r1b and n2's r2a are one cable, each agent owns its end of it, hears the
# other's LLDP beacons there and runs RDMA tests over it.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
T=/usr/lib/ringd-test
W=/root/ringd-test
mkdir -p "$W"
echo "ringd-systemd-test: start (systemd $(systemctl --version | head -n 1 | cut -d' ' -f2), kernel $(uname -r))"

FAILS=0
NPASS=0
pass() { echo "PASS: $*"; NPASS=$((NPASS + 1)); }
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
now_cs() { awk '{ printf "%d\n", $1 * 100 }' /proc/uptime; }
secs() { printf '%d.%02d' $(($1 / 100)) $(($1 % 100)); } # secs CENTISECONDS
wait_until() { # wait_until SECONDS CMD...: poll CMD quietly until it succeeds
	local end=$(($(now_cs) + $1 * 100))
	shift
	while [ "$(now_cs)" -lt "$end" ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}
finish() {
	echo "ringd-systemd-test: $NPASS passed, $FAILS failed"
	echo "RINGD-VM-RESULT $1"
	sync
	systemctl poweroff --force --force
	sleep 60
}
show() { systemctl show -p "$2" --value "$1"; }
AGENTS="ring-agent ring-agent-n2"
UNITS="ring-coordinator $AGENTS"
journal_tail() { # on a failure: what the units said
	for u in $UNITS; do
		echo "--- journalctl -u $u (last ${1:-20} lines)"
		journalctl -q --no-pager -u "$u" -n "${1:-20}" -o short-monotonic
	done
}

# --- the kernel's RDMA modules and the ring -----------------------------------
while read -r m; do
	[ -d "/sys/module/$m" ] && continue
	insmod "$T/modules/$m.ko" || { echo "insmod $m failed"; finish 125; }
done <"$T/modules/order"
. "$T/ring-net.sh"
ring_net_up 3 >/dev/null || finish 125
ring_net_wait_gids 30 >/dev/null || finish 125

# --- install ----------------------------------------------------------------
# vm.sh put either the .debs in /root/debs or `make install` output in the
# root. docs/DEPLOY.md, step 1: the system tools after a make install (a
# package's maintainer scripts run them itself).
if ls /root/debs/*.deb >/dev/null 2>&1; then
	echo "ringd-systemd-test: dpkg -i $(cd /root/debs && echo *.deb)"
	DEBIAN_FRONTEND=noninteractive dpkg -i /root/debs/*.deb || { fail "dpkg -i the packages"; finish 1; }
else
	systemd-sysusers /usr/lib/sysusers.d/ringd.conf &&
		systemd-tmpfiles --create /usr/lib/tmpfiles.d/ringd.conf &&
		systemctl daemon-reload || { fail "sysusers/tmpfiles/daemon-reload"; finish 1; }
fi
if getent passwd ringd >/dev/null && getent group ringctl >/dev/null &&
	[ "$(stat -c '%a %U %G' /etc/ringd)" = "750 root ringd" ] &&
	[ "$(stat -c '%a %U %G' /var/lib/ringd)" = "750 ringd ringd" ]; then
	pass "sysusers and tmpfiles: user ringd, group ringctl, /etc/ringd 0750 root:ringd, /var/lib/ringd"
else
	fail "sysusers/tmpfiles: $(getent passwd ringd) $(getent group ringctl) $(stat -c '%n %a %U %G' /etc/ringd /var/lib/ringd)"
fi

# --- PKI and configuration (docs/DEPLOY.md steps 2-4) -------------------------
P=$W/pki
{ ringctl pki init "$P" && ringctl pki issue "$P" coordinator --coordinator &&
	ringctl pki issue "$P" n1 && ringctl pki issue "$P" n2; } >/dev/null || { fail "ringctl pki"; finish 1; }
install -m 0644 "$P/ca.crt" /etc/ringd/ca.crt
install -m 0644 "$P/coordinator.crt" /etc/ringd/coordinator.crt
install -o root -g ringd -m 0640 "$P/coordinator.key" /etc/ringd/coordinator.key
install -m 0644 "$P/n1.crt" /etc/ringd/agent.crt
install -o root -g ringd -m 0640 "$P/n1.key" /etc/ringd/agent.key
install -m 0644 "$P/n2.crt" /etc/ringd/n2.crt
install -o root -g ringd -m 0640 "$P/n2.key" /etc/ringd/n2.key
# No survey: it would load every cable for a minute under TCG, and nothing
# here needs one (RDMA tests run between any two agents).
cat >/etc/ringd/coordinator.conf <<CONF
listen 127.0.0.1:7420
expect n1 n2
survey_interval 0
survey_settle 1h
survey_grace 1h
heartbeat_interval 2s
CONF
# Each agent owns the one port (and its rxe device) on their shared
# cable: with no survey to say which ports face each other, that is what
# makes the RDMA test below take the cable.
for n in 1 2; do
	case $n in 1) port=r1b ;; 2) port=r2a ;; esac
	{
		echo "node n$n"
		echo "coordinator 127.0.0.1:7420"
		echo "coordinator_name coordinator"
		echo "mgmt_interface lo"
		echo "data_interface $port"
		echo "rdma_device rxe${port#r}"
		echo "lldp_interval 1s"
		if [ $n = 2 ]; then
			echo "cert /etc/ringd/n2.crt"
			echo "key /etc/ringd/n2.key"
		fi
	} >/etc/ringd/agent$([ $n = 2 ] && echo -n2).conf
done
chmod 0644 /etc/ringd/*.conf
# The second agent: the shipped unit under another name, its own config.
sed 's|-c /etc/ringd/agent.conf|-c /etc/ringd/agent-n2.conf|' \
	/usr/lib/systemd/system/ring-agent.service >/etc/systemd/system/ring-agent-n2.service
# For this test only: a 6 s watchdog instead of 30 s (the SIGSTOP check
# waits for it).
for u in $UNITS; do
	mkdir -p "/etc/systemd/system/$u.service.d"
	printf '[Service]\nWatchdogSec=6s\n' >"/etc/systemd/system/$u.service.d/test-watchdog.conf"
done
systemctl daemon-reload
for c in coordinator.conf agent.conf agent-n2.conf; do
	case $c in coordinator*) b=ring-coordinator ;; *) b=ring-agent ;; esac
	out=$(runuser -u ringd -- /usr/sbin/$b -n -c /etc/ringd/$c 2>&1) ||
		fail "$b -n -c /etc/ringd/$c as user ringd: $out"
done

# --- start (docs/DEPLOY.md step 5) ---------------------------------------------
t0=$(now_cs)
systemctl enable --now ring-coordinator.service || fail "systemctl enable --now ring-coordinator"
systemctl enable --now ring-agent.service ring-agent-n2.service || fail "systemctl enable --now ring-agent ring-agent-n2"
echo "ringd-systemd-test: enabled and started in $(secs $(($(now_cs) - t0))) s"
for u in $UNITS; do
	st="$(show $u Type) $(show $u ActiveState) $(show $u SubState) NRestarts=$(show $u NRestarts)"
	# systemd logs "Started <unit> - <Description>" for a Type=notify
	# unit only after READY=1 (before it, the unit is "activating").
	if [ "$st" = "notify active running NRestarts=0" ] &&
		journalctl -q --no-pager -u $u -o cat | grep -q "^Started $u.service"; then
		pass "$u active (running) through Type=notify readiness ($st, READY seen)"
	else
		fail "$u: $st"
	fi
done

# --- who may use ringctl (docs/DEPLOY.md step 6) ---------------------------------
useradd -M -s /bin/bash -G ringctl alice
useradd -M -s /bin/bash mallory
agents_up() { ringctl -f keyvalue status 2>/dev/null | grep -c '^nodes\..*\.state=up' | grep -qx 2; }
wait_until 60 agents_up || { fail "two agents up within 60 s"; ringctl status; }
# Answered: exit 0 (healthy) or 1 (not healthy: no survey has run yet);
# 2 is "not answered".
out=$(runuser -u alice -- ringctl status 2>&1) && r=0 || r=$?
if [ "$r" -le 1 ] && echo "$out" | grep -q '^health: '; then
	pass "ringctl status as alice (group ringctl): $(echo "$out" | head -n 1)"
else
	fail "ringctl status as alice (group ringctl): rc $r: $out"
fi
if out=$(runuser -u mallory -- ringctl status 2>&1); then
	fail "ringctl status as mallory (no group ringctl) was answered"
elif echo "$out" | grep -qi 'permission denied'; then
	pass "ringctl status refused for mallory (not in group ringctl): $(echo "$out" | head -n 1)"
else
	fail "ringctl status as mallory failed, but not for permission: $out"
fi
ls -l /run/ringd/

# --- LLDP in the agent's sandbox, RDMA devices (DeviceAllow) ----------------------
heard() { journalctl -q --no-pager -u "$1" -o cat | grep -q "lldp: $2: neighbour $3 port $4"; }
if wait_until 30 heard ring-agent r1b n2 r2a && wait_until 10 heard ring-agent-n2 r2a n1 r1b; then
	pass "LLDP beacons in the sandbox: n1 r1b hears n2 r2a and n2 r2a hears n1 r1b"
else
	fail "LLDP: the agents did not hear each other's beacons"
fi
if journalctl -q --no-pager -u ring-coordinator -o cat | grep -q 'node n1: [1-9][0-9]* LLDP neighbours$' &&
	! journalctl -q --no-pager -u ring-coordinator -u ring-agent -u ring-agent-n2 -o cat | grep -q 'beacons off'; then
	pass "coordinator has n1's LLDP neighbours, no 'beacons off'"
else
	fail "coordinator: no LLDP neighbours from n1, or beacons off"
	journalctl -q --no-pager -u ring-coordinator -u ring-agent -o cat | grep -i 'lldp\|beacon' | tail -n 5
fi
ringctl -f json inventory n1 >$W/inv-n1.json 2>&1
devs_ok=1
for d in rxe1b; do
	# The device's own attributes come from ibv_open_device() on
	# /dev/infiniband/uverbsN, which DevicePolicy=closed allows only
	# through DeviceAllow=char-infiniband_verbs.
	grep -q "\"$d\"" $W/inv-n1.json || devs_ok=0
done
if [ $devs_ok = 1 ] && grep -q '"node_guid": *"[0-9a-f]' $W/inv-n1.json &&
	! grep -q 'open: \|Operation not permitted' $W/inv-n1.json; then
	pass "n1's inventory lists rxe1b, opened (node GUID read through /dev/infiniband)"
else
	fail "n1's inventory: RDMA devices missing or not opened: $(grep -o '"[a-z_]*error[a-z_]*": *"[^"]*"' $W/inv-n1.json | head -n 3)"
fi

# --- journald's structured fields ---------------------------------------------------
for u in ring-coordinator ring-agent; do
	j=$(journalctl -q --no-pager -u $u -o json)
	if echo "$j" | grep -q '"RING_SUBSYSTEM":"[a-z]' && echo "$j" | grep -q "\"SYSLOG_IDENTIFIER\":\"$u\"" &&
		echo "$j" | grep -q '"PRIORITY":"[0-7]"'; then
		pass "$u's journal entries carry RING_SUBSYSTEM, SYSLOG_IDENTIFIER=$u, PRIORITY ($(journalctl -q --no-pager -u $u -o json | grep -o '"RING_SUBSYSTEM":"[a-z]*"' | sort -u | tr '\n' ' '))"
	else
		fail "$u: no structured fields in journalctl -o json"
		echo "$j" | tail -n 2
	fi
done

# Nothing in the units' directives refused by systemd, no system call the
# filter turned into EPERM, no error from the daemons in a normal run.
bad=$(journalctl -q --no-pager -b -o cat | grep -E 'ring-(agent|coordinator)[-a-z0-9]*\.service:[0-9]+:' | head -n 5)
if [ -z "$bad" ]; then
	pass "systemd accepted every directive of the units (no 'unit.service:LINE:' complaint)"
else
	fail "systemd complained about the units: $bad"
fi
bad=$(journalctl -q --no-pager -p err -u ring-coordinator -u ring-agent -u ring-agent-n2 -o cat | head -n 5)
eperm=$(journalctl -q --no-pager -u ring-coordinator -u ring-agent -u ring-agent-n2 -o cat | grep -i 'operation not permitted' | head -n 5)
if [ -z "$bad$eperm" ]; then
	pass "no error and no 'Operation not permitted' in the daemons' journal"
else
	fail "the daemons logged errors under systemd: $bad $eperm"
fi

# --- the watchdog restarts a hung event loop ------------------------------------------
for u in ring-agent ring-coordinator; do
	pid=$(show $u MainPID)
	kill -STOP "$pid"
	t0=$(now_cs)
	restarted() { [ "$(show $u NRestarts)" = 1 ] && [ "$(show $u SubState)" = running ] && [ "$(show $u MainPID)" != "$pid" ]; }
	if wait_until 60 restarted && journalctl -q --no-pager -u $u -o cat | grep -q 'Watchdog timeout'; then
		pass "$u SIGSTOPped (pid $pid): watchdog timeout, restarted in $(( ($(now_cs) - t0) / 100 )) s (WatchdogSec=6s drop-in), running again"
	else
		fail "$u SIGSTOPped: not restarted by the watchdog within 60 s ($(show $u ActiveState) $(show $u SubState) NRestarts=$(show $u NRestarts))"
	fi
done
wait_until 60 agents_up || fail "agents back up after the restarts"

# --- RDMA from inside the sandbox: a short test moves data --------------------------
# (the verbs device opened read-write, buffers registered under
# LimitMEMLOCK, queue pairs through the system call filter)
out=$W/rdma-bw.out
ringctl -f keyvalue test rdma-bw n1 n2 --op write --duration 1 --qps 1 --size 64K >$out 2>&1
r=$?
if [ $r -eq 0 ] && grep -q '^result=ok' $out && grep -q '^gbps_measured=[0-9]' $out &&
	! grep -qE '^gbps_measured=0(\.0*)?$' $out; then
	pass "ringctl test rdma-bw n1 n2 between the sandboxed agents: $(grep '^gbps_measured=' $out)"
else
	fail "ringctl test rdma-bw n1 n2 (rc $r): $(head -n 4 $out | tr '\n' ' ')"
fi
# The coordinator's store in its StateDirectory (ProtectSystem=strict
# leaves nothing else writable).
if [ -n "$(find /var/lib/ringd -maxdepth 1 -type f -user ringd 2>/dev/null)" ]; then
	pass "coordinator state in /var/lib/ringd (StateDirectory): $(ls /var/lib/ringd | tr '\n' ' ')"
else
	fail "nothing written to /var/lib/ringd"
fi

# --- systemctl stop with RDMA queue pairs open ---------------------------------------
rc_qps() { /usr/bin/rdma resource show qp 2>/dev/null | grep -c ' type RC ' || true; }
has_qps() { [ "$(rc_qps)" -gt 0 ]; }
ringctl test rdma-bw n1 n2 --op write --duration 120 --qps 2 --size 64K >$W/long-test.out 2>&1 &
if wait_until 60 has_qps; then
	echo "ringd-systemd-test: $(rc_qps) RC QPs open (a 120 s rdma-bw test n1 -> n2)"
else
	fail "the RDMA test n1 -> n2 opened no QP within 60 s: $(cat $W/long-test.out)"
fi
t0=$(now_cs)
systemctl stop $UNITS
dt=$(( $(now_cs) - t0 ))
for u in $UNITS; do
	lim=$(( $(show $u TimeoutStopUSec | sed 's/min/*60+/; s/s$//; s/+$//') ))
	st="$(show $u ActiveState) Result=$(show $u Result)"
	if [ "$st" = "inactive Result=success" ] && [ $dt -lt $((lim * 100)) ]; then
		pass "$u stopped in $(secs $dt) s (stop timeout ${lim} s): $st"
	else
		fail "$u stop: $st after $((dt / 100)) s (stop timeout ${lim} s)"
	fi
done
if [ "$(rc_qps)" = 0 ]; then
	pass "no RC QP left after systemctl stop (rdma resource show qp)"
else
	fail "RC QPs left after systemctl stop"
	/usr/bin/rdma resource show qp
fi

# --- systemd-analyze security ----------------------------------------------------------
# The bounds: the exposure scores of today's units (lower is better).
for ub in ring-agent:BOUND_AGENT ring-coordinator:BOUND_COORD; do
	u=${ub%%:*}
	case $u in ring-agent) bound=1.8 ;; *) bound=1.4 ;; esac
	sc=$(systemd-analyze security --no-pager $u.service 2>/dev/null |
		sed -n 's/.*Overall exposure level for .*: \([0-9.]*\) .*/\1/p')
	if [ -n "$sc" ] && awk "BEGIN { exit !($sc <= $bound) }"; then
		pass "systemd-analyze security $u.service: exposure $sc (bound $bound)"
	else
		fail "systemd-analyze security $u.service: exposure ${sc:-?} above the bound $bound"
		systemd-analyze security --no-pager $u.service | grep -v '^  ✓' | head -n 40
	fi
done

[ $FAILS = 0 ] || journal_tail 25
finish $FAILS
