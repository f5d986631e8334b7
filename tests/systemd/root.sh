#!/bin/bash
# Build the Debian 12 root of the systemd test VM once and cache it as a
# compressed cpio archive (tests/systemd/README.md):
#   tests/systemd/root.sh CACHE_DIR      -> CACHE_DIR/root.cpio.zst
# Needs root (debootstrap), the mirror this machine's apt uses.
# Exit 77 with a "SKIP:" line when there is no mirror or no debootstrap.
set -eu
CACHE=${1:?usage: root.sh CACHE_DIR}
# Bump when the package list or the trimming changes: the cache is rebuilt.
ROOT_VERSION=1
PKGS=systemd,systemd-sysv,dbus,iproute2,kmod,libibverbs1,ibverbs-providers,libevent-2.1-7,libevent-openssl-2.1-7,libprotobuf-c1,libssl3,libsystemd0,libsqlite3-0
OUT=$CACHE/root.cpio.zst
skip() { echo "SKIP: $*"; exit 77; }
die() { echo "root.sh: $*" >&2; exit 2; }

if [ -f "$OUT" ] && [ "$(cat "$CACHE/root.version" 2>/dev/null)" = "$ROOT_VERSION $PKGS" ]; then
	exit 0
fi
command -v debootstrap >/dev/null 2>&1 || skip "debootstrap not installed"
[ "$(id -u)" = 0 ] || skip "building the VM's root needs root (debootstrap); run as root once"
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -oE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' | awk '{print $2}' | head -n1 || true)
[ -n "$mirror" ] || skip "no Debian mirror in this machine's apt sources"
mkdir -p "$CACHE"
tmp=$CACHE/root.build
rm -rf "$tmp"
echo "root.sh: debootstrap bookworm minbase + systemd from $mirror (once, a few minutes)"
T0=$(date +%s)
if ! debootstrap --variant=minbase --include="$PKGS" bookworm "$tmp" "$mirror" \
	>"$CACHE/debootstrap.log" 2>&1; then
	tail -n 5 "$CACHE/debootstrap.log" >&2
	rm -rf "$tmp"
	skip "debootstrap failed (see $CACHE/debootstrap.log)"
fi
# Keep the root small: TCG pays for every byte at unpack time.
rm -rf "$tmp"/usr/share/doc/* "$tmp"/usr/share/man/* "$tmp"/usr/share/info/* \
	"$tmp"/usr/share/locale/* "$tmp"/var/cache/apt/* "$tmp"/var/lib/apt/lists/* \
	"$tmp"/usr/share/zoneinfo/[!U]* "$tmp"/var/cache/debconf/*-old "$tmp"/usr/share/i18n
# What an installed system has and debootstrap leaves out.
echo ringvm >"$tmp/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\tringvm\n' >"$tmp/etc/hosts"
# No login prompt on the console: the test unit owns it.
rm -f "$tmp"/etc/systemd/system/getty.target.wants/* "$tmp"/etc/systemd/system/multi-user.target.wants/getty.target
ln -sf /dev/null "$tmp/etc/systemd/system/serial-getty@ttyS0.service"
ln -sf /dev/null "$tmp/etc/systemd/system/getty@tty1.service"
# Nothing to do in a throw-away VM and slow under TCG.
for u in apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer \
	systemd-timesyncd.service man-db.timer systemd-tmpfiles-clean.timer; do
	ln -sf /dev/null "$tmp/etc/systemd/system/$u"
done
: >"$tmp/etc/machine-id"
(cd "$tmp" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | zstd -q -T0 -3) >"$OUT.part"
mv "$OUT.part" "$OUT"
echo "$ROOT_VERSION $PKGS" >"$CACHE/root.version"
du -sh "$tmp" | awk '{print "root.sh: root " $1 " unpacked"}'
rm -rf "$tmp"
echo "root.sh: $OUT ($(($(stat -c %s "$OUT") / 1024)) KiB) built in $(($(date +%s) - T0)) s"
