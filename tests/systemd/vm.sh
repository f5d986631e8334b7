#!/bin/bash
# ringd's systemd units under a real systemd: boot Debian's kernel with a
# minimal Debian 12 root (systemd as PID 1) in a qemu TCG VM, install ringd
# into it and run tests/systemd/payload.sh there (tests/systemd/README.md).
#
#   tests/systemd/vm.sh [--build DIR] [--install auto|make|deb] [--timeout SECONDS]
#
# --build: the ringd build whose `make install` goes into the VM (default
# build, the plain one). --install: auto (default) installs build/deb/*.deb
# in the VM with dpkg -i when there are any, else `make install`; make or
# deb insists on one (deb fails without packages).
# Exit status: the payload's (the number of failed checks), or as
# tests/rdma/vm.sh: 77 SKIP (no qemu, no debootstrap, no mirror, not root
# for the one-time root build), 124 timeout, 125 no result, 2 usage.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILDDIR=build
INSTALL=auto
TIMEOUT=600
OUTDIR=${RINGD_SYSTEMD_VM_OUT:-$ROOT/build/systemd-vm}
# The kernel is the RDMA VM's (tests/rdma/vm.sh), fetched into its cache.
KCACHE=$ROOT/build/rdma-vm/cache

usage() {
	sed -n 's/^#   \(tests\/systemd\/vm.sh .*\)/usage: \1/p' "$0" >&2
	exit 2
}
die() { echo "systemd-vm: $*" >&2; exit 2; }
skip() { echo "SKIP: $*"; exit 77; }

while [ $# -gt 0 ]; do
	case $1 in
	--build) [ $# -ge 2 ] || usage; BUILDDIR=$2; shift 2 ;;
	--timeout) [ $# -ge 2 ] || usage; TIMEOUT=$2; shift 2 ;;
	--install) [ $# -ge 2 ] || usage; INSTALL=$2; shift 2 ;;
	-h|--help) usage ;;
	*) usage ;;
	esac
done
case $TIMEOUT in *[!0-9]*|'') die "--timeout wants seconds" ;; esac
case $INSTALL in auto|make|deb) ;; *) die "--install wants auto, make or deb" ;; esac

command -v qemu-system-x86_64 >/dev/null 2>&1 || skip "qemu-system-x86_64 not installed"
qemu-system-x86_64 -version >/dev/null 2>&1 || skip "qemu-system-x86_64 does not run"
for t in cpio zstd dpkg-deb apt-get apt-cache make; do
	command -v $t >/dev/null 2>&1 || die "host tool '$t' missing"
done
mkdir -p "$OUTDIR/cache" "$KCACHE"
. "$ROOT/tests/rdma/vm-lib.sh"

# --- the Debian root (cached) and the kernel (tests/rdma/vm.sh's cache) --------
rc=0
bash "$ROOT/tests/systemd/root.sh" "$OUTDIR/cache" || rc=$?
[ $rc = 0 ] || exit $rc
vm_kernel "$KCACHE"

# --- the overlay: ringd, the modules, the test ------------------------------------
T0=$(date +%s.%N)
STAGE=$OUTDIR/overlay
rm -rf "$STAGE"
mkdir -p "$STAGE/usr/lib/ringd-test" "$STAGE/etc/systemd/system/multi-user.target.wants" "$STAGE/root"

# How ringd gets into the VM: the packages when build/deb has them
# (installed by the payload with dpkg -i, maintainer scripts and all), else
# `make install` into the overlay (the payload then runs docs/DEPLOY.md's
# systemd-sysusers/systemd-tmpfiles/daemon-reload steps).
# The overlay is unpacked over the root: it must not hold /lib, /bin or
# /sbin (the root's merged-/usr symlinks), hence UNITDIR under /usr.
ringd_install() { # ringd_install STAGE
	local debs
	debs=
	[ "$INSTALL" = make ] || debs=$(ls "$ROOT"/build/deb/*.deb 2>/dev/null || true)
	[ "$INSTALL" = deb ] && [ -z "$debs" ] && die "--install deb: no build/deb/*.deb (make deb)"
	if [ -n "$debs" ]; then
		mkdir -p "$1/root/debs"
		cp $debs "$1/root/debs/"
		echo "systemd-vm: installing the packages in the VM:" $(cd "$1/root/debs" && echo *.deb)
		return 0
	fi
	[ -x "$ROOT/$BUILDDIR/bin/ring-agent" ] || die "$BUILDDIR/bin not built (make BUILD=$BUILDDIR all)"
	make -s -C "$ROOT" BUILD="$BUILDDIR" install PREFIX=/usr UNITDIR=/usr/lib/systemd/system \
		DESTDIR="$1" >/dev/null || die "make install into the overlay failed"
	echo "systemd-vm: make install PREFIX=/usr (from $BUILDDIR) into the VM"
}
ringd_install "$STAGE"

vm_modules "$STAGE/usr/lib/ringd-test/modules" crc32_generic udp_tunnel ip6_udp_tunnel \
	ib_core ib_uverbs rdma_rxe veth
cp "$ROOT/tests/rdma/ring-net.sh" "$ROOT/tests/systemd/payload.sh" "$STAGE/usr/lib/ringd-test/"
cp "$ROOT/tests/systemd/ringd-test.service" "$STAGE/etc/systemd/system/"
ln -s ../ringd-test.service "$STAGE/etc/systemd/system/multi-user.target.wants/ringd-test.service"

# The kernel unpacks concatenated cpio archives in turn, later files over
# earlier ones: the cached root, then this run's overlay (owned by root).
INITRD=$OUTDIR/initrd.img
(cd "$STAGE" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0 | zstd -q -1) >"$OUTDIR/overlay.cpio.zst"
cat "$OUTDIR/cache/root.cpio.zst" "$OUTDIR/overlay.cpio.zst" >"$INITRD.tmp"
mv "$INITRD.tmp" "$INITRD"
T1=$(date +%s.%N)
printf 'systemd-vm: kernel %s, initrd %s (%s KiB) built in %.1f s\n' "$KVER" \
	"${INITRD#$ROOT/}" "$(( $(stat -c %s "$INITRD") / 1024 ))" "$(awk "BEGIN{print $T1 - $T0}")"

# --- boot: systemd as PID 1 straight from the initramfs ----------------------------
# No disk image: an initramfs needs no root privileges, loop devices or
# block/filesystem modules, and the root (about 110 MB) fits in RAM.
# systemd.show_status=no: the unit lines would bury the test's own.
APPEND="console=ttyS0 panic=-1 loglevel=4 clocksource=tsc tsc=reliable rdinit=/sbin/init systemd.show_status=no"
VM_BOOT_MARK='ringd-systemd-test: start'
RINGD_VM_BOOT_LIMIT=${RINGD_VM_BOOT_LIMIT:-150}
VM_MEM=2G
vm_boot || exit 125
vm_result systemd || exit $?
exit 0
