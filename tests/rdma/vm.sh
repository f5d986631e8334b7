#!/bin/bash
# Boot Debian's own kernel (which ships rdma_rxe) in a qemu TCG VM with a
# busybox initramfs and run tests/rdma/payload-<PAYLOAD>.sh inside it.
#
#   tests/rdma/vm.sh [--bin DIR] [--timeout SECONDS] [--cache DIR] [--keep] PAYLOAD [ARGS...]
#
# Exit status: the payload's own status, as reported by the VM's /init
# through the console marker "RINGD-VM-RESULT <rc>";
#   77  SKIP (no usable qemu, or no Debian mirror to fetch the kernel from),
#       with a "SKIP: reason" line; make rdma-check fails on it unless
#       RINGD_ALLOW_SKIP=1
#   124 the VM ran past --timeout and was killed
#   125 the VM ended without a result (kernel panic, /init died, ...)
#   2   usage / build errors
# Never installs anything on the host: the kernel and busybox-static .debs
# are fetched with `apt-get download` into the cache and unpacked there.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/build/bin
TIMEOUT=600
CACHE=$ROOT/build/rdma-vm/cache
KEEP=0
# RINGD_VM_OUT: where this run builds and logs (two runs at once need two).
OUTDIR=${RINGD_VM_OUT:-$ROOT/build/rdma-vm}

usage() {
	sed -n '5p' "$0" | sed 's/^# *//' >&2
	exit 2
}
die() { echo "vm.sh: $*" >&2; exit 2; }
skip() { echo "SKIP: $*"; exit 77; }

while [ $# -gt 0 ]; do
	case $1 in
	--bin) [ $# -ge 2 ] || usage; BIN=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2 ;;
	--cache) [ $# -ge 2 ] || usage; CACHE=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	-h|--help) usage ;;
	--) shift; break ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
PAYLOAD=$1
shift
case $PAYLOAD in *[!a-z0-9_-]*|'') die "bad payload name '$PAYLOAD'" ;; esac
[ -f "$ROOT/tests/rdma/payload-$PAYLOAD.sh" ] || die "no tests/rdma/payload-$PAYLOAD.sh"
case $TIMEOUT in *[!0-9]*|'') die "--timeout wants seconds" ;; esac
# Arguments travel on the kernel command line (after "--", handed to /init
# as argv), which has no quoting we can rely on.
for a in "$@"; do
	case $a in *[[:space:]\"\'\\]*|'') die "payload argument '$a' may not be empty or contain blanks, quotes or backslashes" ;; esac
done

command -v qemu-system-x86_64 >/dev/null 2>&1 || skip "qemu-system-x86_64 not installed"
qemu-system-x86_64 -version >/dev/null 2>&1 || skip "qemu-system-x86_64 does not run"
for t in cpio gzip ldd dpkg-deb apt-get apt-cache; do
	command -v $t >/dev/null 2>&1 || die "host tool '$t' missing"
done

mkdir -p "$CACHE" "$OUTDIR"
CACHE=$(cd "$CACHE" && pwd)

# --- kernel and busybox, fetched once ---------------------------------------
fetch() { # fetch PACKAGE: download its .deb into the cache unless one is there
	ls "$CACHE/$1"_*.deb >/dev/null 2>&1 && return 0
	echo "vm.sh: downloading $1 into $CACHE"
	# apt drops privileges to _apt, which may not write to the cache dir:
	# download into a private temp dir it may write to, then move.
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	if ! (cd "$tmp" && apt-get download "$1") >"$tmp/log" 2>&1; then
		tail -n 3 "$tmp/log" >&2
		rm -rf "$tmp"
		skip "apt-get download $1 failed (no Debian mirror?)"
	fi
	mv "$tmp"/*.deb "$CACHE/"
	rm -rf "$tmp"
}
KPKG=$(ls "$CACHE"/linux-image-[0-9]*.deb 2>/dev/null | head -n 1 || true)
if [ -z "$KPKG" ]; then
	# linux-image-amd64 is a metapackage: resolve the versioned image.
	KNAME=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -n 1)
	[ -n "$KNAME" ] || skip "cannot resolve linux-image-amd64 (apt-get update needed? no mirror?)"
	fetch "$KNAME"
	KPKG=$(ls "$CACHE/$KNAME"_*.deb | head -n 1)
fi
fetch busybox-static
BPKG=$(ls "$CACHE"/busybox-static_*.deb | head -n 1)

unpack() { # unpack DEB DIR, once per .deb
	if [ ! -f "$2/.unpacked" ] || [ "$(cat "$2/.unpacked")" != "$(basename "$1")" ]; then
		rm -rf "$2"
		mkdir -p "$2"
		dpkg-deb -x "$1" "$2"
		basename "$1" >"$2/.unpacked"
	fi
}
unpack "$KPKG" "$CACHE/kernel"
unpack "$BPKG" "$CACHE/busybox"
VMLINUZ=$(ls "$CACHE"/kernel/boot/vmlinuz-* | head -n 1)
KVER=${VMLINUZ##*/vmlinuz-}
MODDIR=$CACHE/kernel/lib/modules/$KVER
[ -d "$MODDIR" ] || MODDIR=$CACHE/kernel/usr/lib/modules/$KVER
[ -d "$MODDIR" ] || die "no modules for $KVER in $KPKG"
BUSYBOX=$CACHE/busybox/bin/busybox
[ -x "$BUSYBOX" ] || die "no bin/busybox in $BPKG"

# --- initramfs ---------------------------------------------------------------
T0=$(date +%s.%N)
STAGE=$OUTDIR/root
rm -rf "$STAGE"
# Merged /usr like the host, so host paths (and ldd's output) work unchanged.
mkdir -p "$STAGE"/usr/bin "$STAGE"/usr/sbin "$STAGE"/usr/lib/x86_64-linux-gnu \
	"$STAGE"/usr/lib64 "$STAGE"/etc/libibverbs.d "$STAGE"/usr/lib/modules/ringd \
	"$STAGE"/proc "$STAGE"/sys "$STAGE"/dev "$STAGE"/tmp "$STAGE"/run "$STAGE"/root \
	"$STAGE"/ringd/bin "$STAGE"/ringd/tests
for d in bin sbin lib lib64; do ln -s usr/$d "$STAGE/$d"; done

put() { # put SRC DEST: copy file content (following links) to DEST in the VM
	mkdir -p "$STAGE$(dirname "$2")"
	rm -f "$STAGE$2"
	cp -L "$1" "$STAGE$2"
}
put_with_libs() { # put_with_libs SRC [DEST]: the file plus its ldd closure
	put "$1" "${2:-$1}"
	ldd "$1" 2>/dev/null | while read -r a b c _; do
		# "libx.so => /path (addr)" or "/lib64/ld-linux-x86-64.so.2 (addr)"
		if [ "$b" = "=>" ] && [ "${c#/}" != "$c" ]; then
			[ -e "$STAGE$c" ] || put "$c" "$c"
		elif [ "${a#/}" != "$a" ]; then
			[ -e "$STAGE$a" ] || put "$a" "$a"
		fi
	done
}
host_bin() { # host_bin NAME [required]: a host binary under its host path
	p=$(command -v "$1" 2>/dev/null || true)
	if [ -z "$p" ]; then
		[ "${2:-}" = required ] && die "host binary '$1' missing (install rdma-core/iproute2/ibverbs-utils)"
		echo "vm.sh: note: $1 not on the host, not in the VM"
		return 0
	fi
	p=$(readlink -f "$p")
	put_with_libs "$p" "$p"
}

for t in ip rdma ibv_devices ibv_devinfo; do host_bin $t required; done
for t in ib_write_bw ib_read_bw ib_write_lat ib_read_lat; do host_bin $t; done
# The rxe user-space provider: libibverbs dlopens it after reading rxe.driver.
RXE=$(ls /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav*.so 2>/dev/null | head -n 1 || true)
[ -n "$RXE" ] || die "librxe-rdmav*.so missing on the host (package ibverbs-providers)"
put_with_libs "$RXE"
[ -f /etc/libibverbs.d/rxe.driver ] || die "/etc/libibverbs.d/rxe.driver missing (ibverbs-providers)"
put /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/rxe.driver

for b in ring-agent ring-coordinator ringctl; do
	if [ -x "$BIN/$b" ]; then
		put_with_libs "$BIN/$b" "/ringd/bin/$b"
	else
		echo "vm.sh: note: $BIN/$b not built, not in the VM"
	fi
done
# rxe-probe (one RDMA WRITE between two local devices, settable retry_cnt)
PROBE=$OUTDIR/rxe-probe
if ! ${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -o "$PROBE" \
	"$ROOT/tests/rdma/rxe-probe.c" -libverbs; then
	die "cannot build tests/rdma/rxe-probe.c (needs cc and libibverbs-dev)"
fi
put_with_libs "$PROBE" /ringd/bin/rxe-probe
cp -r "$ROOT/tests/rdma" "$STAGE/ringd/tests/rdma"
put "$ROOT/tests/rdma/init" /init
chmod 755 "$STAGE/init"

# busybox applets, except where a real tool already sits (ip stays iproute2's)
put "$BUSYBOX" /usr/bin/busybox
"$BUSYBOX" --list-full | while read -r a; do
	case $a in bin/*|sbin/*) a=usr/$a ;; esac
	[ -e "$STAGE/$a" ] || [ -L "$STAGE/$a" ] || ln -s /usr/bin/busybox "$STAGE/$a"
done
# ... nor in another bin dir: PATH must find iproute2's ip, not the applet.
# (busybox ash still prefers its applets for bare names: call /usr/bin/ip.)
for f in "$STAGE"/usr/bin/* "$STAGE"/usr/sbin/*; do
	[ -L "$f" ] && continue
	n=${f##*/}
	for d in usr/bin usr/sbin; do
		if [ -L "$STAGE/$d/$n" ] && [ "$(readlink "$STAGE/$d/$n")" = /usr/bin/busybox ]; then
			rm -f "$STAGE/$d/$n"
		fi
	done
done

# Modules in load order. modules.dep is not shipped in the .deb (depmod runs
# at install), so /init insmods this list in order. Built-ins are skipped.
# configfs..rdma_ucm: rdma_cm (librdmacm, perftest -R) for engines that want it.
MODS="crc32_generic udp_tunnel ip6_udp_tunnel ib_core ib_uverbs configfs ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe veth"
: >"$STAGE/lib/modules/ringd/order"
for m in $MODS; do
	f=$(find "$MODDIR" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" -o -name "$m.ko.gz" | head -n 1)
	if [ -z "$f" ]; then
		if grep -q "/$m\.ko" "$MODDIR/modules.builtin" 2>/dev/null; then
			echo "vm.sh: $m is built into $KVER"
			continue
		fi
		die "module $m is neither a module nor built into $KVER"
	fi
	# busybox insmod wants plain ELF: decompress here.
	case $f in
	*.xz) xz -dc "$f" >"$STAGE/lib/modules/ringd/$m.ko" ;;
	*.zst) zstd -qdc "$f" >"$STAGE/lib/modules/ringd/$m.ko" ;;
	*.gz) gzip -dc "$f" >"$STAGE/lib/modules/ringd/$m.ko" ;;
	*) cp "$f" "$STAGE/lib/modules/ringd/$m.ko" ;;
	esac
	echo "$m" >>"$STAGE/lib/modules/ringd/order"
done
[ -e "$STAGE/dev/console" ] || mknod "$STAGE/dev/console" c 5 1 2>/dev/null || true

INITRD=$OUTDIR/initramfs.cpio.gz
(cd "$STAGE" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$INITRD.tmp"
mv "$INITRD.tmp" "$INITRD"
[ "$KEEP" = 1 ] || rm -rf "$STAGE"
T1=$(date +%s.%N)
printf 'vm.sh: kernel %s, initramfs %s (%s KiB) built in %.1f s\n' "$KVER" \
	"${INITRD#$ROOT/}" "$(( $(stat -c %s "$INITRD") / 1024 ))" "$(awk "BEGIN{print $T1 - $T0}")"

# --- boot --------------------------------------------------------------------
CONSOLE=$OUTDIR/console.log
# panic=-1 + -no-reboot: a kernel panic ends qemu at once instead of waiting
# for the timeout; loglevel=5 keeps info chatter off the console but shows
# warnings, oopses and panics.
# clocksource=tsc: the default (hpet under TCG) makes every clock_gettime a
# system call plus an emulated device read, microseconds that real hosts
# (vDSO + TSC) do not pay and that both benchmarked tools would time.
APPEND="console=ttyS0 panic=-1 loglevel=5 clocksource=tsc tsc=reliable rdinit=/init -- $PAYLOAD $*"
# Rarely (seen once in ~15 boots on a loaded 2-core host) a TCG boot stalls
# before /init (RCU stall, a vCPU's timer never fires). A watchdog kills a
# boot that has not reached /init within BOOT_LIMIT seconds and we boot once more.
BOOT_LIMIT=${RINGD_VM_BOOT_LIMIT:-60}
boot() {
	rm -f "$OUTDIR/qemu.pid" "$OUTDIR/boot-stalled"
	: >"$CONSOLE"
	# (The console pipeline must not buffer: the watchdog reads the file.)
	(
		end=$(($(date +%s) + BOOT_LIMIT))
		while [ "$(date +%s)" -lt "$end" ]; do
			grep -aq 'init: reached /init' "$CONSOLE" && exit 0
			sleep 1
		done
		touch "$OUTDIR/boot-stalled"
		[ -f "$OUTDIR/qemu.pid" ] && kill "$(cat "$OUTDIR/qemu.pid")"
	) &
	WD=$!
	B0=$(date +%s)
	set +e
	timeout -k 5 "$TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m 2G \
		-nographic -no-reboot -nic none -pidfile "$OUTDIR/qemu.pid" \
		-kernel "$VMLINUZ" -initrd "$INITRD" -append "$APPEND" </dev/null 2>&1 |
		sed -u -e 's/\r//g' | tee "$CONSOLE" | sed -u -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/^/[vm] /'
	QRC=${PIPESTATUS[0]}
	kill "$WD" 2>/dev/null
	wait "$WD" 2>/dev/null
	set -e
	echo "vm.sh: VM ran $(($(date +%s) - B0)) s (qemu status $QRC)"
}
echo "vm.sh: booting (TCG, timeout ${TIMEOUT}s), console in ${CONSOLE#$ROOT/}"
boot
if [ -f "$OUTDIR/boot-stalled" ]; then
	cp "$CONSOLE" "$OUTDIR/console-stalled.log"
	echo "vm.sh: boot did not reach /init within ${BOOT_LIMIT}s (see ${OUTDIR#$ROOT/}/console-stalled.log); booting again"
	boot
	if [ -f "$OUTDIR/boot-stalled" ]; then
		echo "vm.sh: FAIL: boot did not reach /init within ${BOOT_LIMIT}s, twice" >&2
		exit 125
	fi
fi

RES=$(grep -a -o 'RINGD-VM-RESULT [0-9][0-9]*' "$CONSOLE" | tail -n 1 | cut -d' ' -f2)
if [ -n "$RES" ]; then
	echo "vm.sh: payload '$PAYLOAD' exited $RES"
	exit "$RES"
fi
if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
	echo "vm.sh: FAIL: VM killed after ${TIMEOUT}s timeout, no result from payload '$PAYLOAD' (see ${CONSOLE#$ROOT/})" >&2
	exit 124
fi
if grep -aq 'Kernel panic' "$CONSOLE"; then
	echo "vm.sh: FAIL: kernel panic, no result (see ${CONSOLE#$ROOT/})" >&2
else
	echo "vm.sh: FAIL: qemu exited $QRC without a RINGD-VM-RESULT line (see ${CONSOLE#$ROOT/})" >&2
fi
exit 125
