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
. "$ROOT/tests/rdma/vm-lib.sh"
vm_kernel "$CACHE"
vm_fetch "$CACHE" busybox-static
BPKG=$(ls "$CACHE"/busybox-static_*.deb | head -n 1)
vm_unpack "$BPKG" "$CACHE/busybox"
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
vm_modules "$STAGE/lib/modules/ringd" crc32_generic udp_tunnel ip6_udp_tunnel ib_core \
	ib_uverbs configfs ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe veth
[ -e "$STAGE/dev/console" ] || mknod "$STAGE/dev/console" c 5 1 2>/dev/null || true

INITRD=$OUTDIR/initramfs.cpio.gz
(cd "$STAGE" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1) >"$INITRD.tmp"
mv "$INITRD.tmp" "$INITRD"
[ "$KEEP" = 1 ] || rm -rf "$STAGE"
T1=$(date +%s.%N)
printf 'vm.sh: kernel %s, initramfs %s (%s KiB) built in %.1f s\n' "$KVER" \
	"${INITRD#$ROOT/}" "$(( $(stat -c %s "$INITRD") / 1024 ))" "$(awk "BEGIN{print $T1 - $T0}")"

# --- boot --------------------------------------------------------------------
# panic=-1 + -no-reboot: a kernel panic ends qemu at once instead of waiting
# for the timeout; loglevel=5 keeps info chatter off the console but shows
# warnings, oopses and panics.
# clocksource=tsc: the default (hpet under TCG) makes every clock_gettime a
# system call plus an emulated device read, microseconds that real hosts
# (vDSO + TSC) do not pay and that both benchmarked tools would time.
APPEND="console=ttyS0 panic=-1 loglevel=5 clocksource=tsc tsc=reliable rdinit=/init -- $PAYLOAD $*"
VM_BOOT_MARK='init: reached /init'
vm_boot || exit 125
vm_result "$PAYLOAD" || exit $?
exit 0
