# vm-lib.sh: what tests/rdma/vm.sh and tests/systemd/vm.sh share (bash).
# Source it after defining die MSG (exit 2) and skip MSG (prints "SKIP: MSG",
# exit 77). Functions:
#   vm_kernel CACHE            fetch Debian's kernel (once) into CACHE; sets
#                              VMLINUZ, KVER, MODDIR
#   vm_fetch CACHE PACKAGE     apt-get download PACKAGE into CACHE, once
#   vm_unpack DEB DIR          dpkg-deb -x, once per .deb
#   vm_modules DIR MODULE...   the modules (decompressed: busybox insmod wants
#                              plain ELF) into DIR, with DIR/order listing
#                              them in load order; built-ins are skipped
#   vm_boot                    boot qemu (TCG), console to $CONSOLE, a boot
#                              watchdog, one retry of a stalled boot; reads
#                              OUTDIR TIMEOUT VMLINUZ INITRD APPEND
#                              VM_BOOT_MARK (console text that shows the
#                              boot went far enough) VM_MEM; sets QRC
#   vm_result PAYLOAD          the exit status vm.sh reports: the
#                              "RINGD-VM-RESULT <rc>" marker's, else 124
#                              (timeout) or 125 (no result)

vm_fetch() { # vm_fetch CACHE PACKAGE
	ls "$1/$2"_*.deb >/dev/null 2>&1 && return 0
	echo "vm: downloading $2 into $1"
	# apt drops privileges to _apt, which may not write to the cache dir:
	# download into a private temp dir it may write to, then move.
	local tmp
	tmp=$(mktemp -d)
	chmod 755 "$tmp"
	if ! (cd "$tmp" && apt-get download "$2") >"$tmp/log" 2>&1; then
		tail -n 3 "$tmp/log" >&2
		rm -rf "$tmp"
		skip "apt-get download $2 failed (no Debian mirror?)"
	fi
	mv "$tmp"/*.deb "$1/"
	rm -rf "$tmp"
}

vm_unpack() { # vm_unpack DEB DIR
	if [ ! -f "$2/.unpacked" ] || [ "$(cat "$2/.unpacked")" != "$(basename "$1")" ]; then
		rm -rf "$2"
		mkdir -p "$2"
		dpkg-deb -x "$1" "$2"
		basename "$1" >"$2/.unpacked"
	fi
}

vm_kernel() { # vm_kernel CACHE
	local kpkg kname
	kpkg=$(ls "$1"/linux-image-[0-9]*.deb 2>/dev/null | head -n 1 || true)
	if [ -z "$kpkg" ]; then
		# linux-image-amd64 is a metapackage: resolve the versioned image.
		kname=$(apt-cache depends linux-image-amd64 2>/dev/null |
			sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -n 1)
		[ -n "$kname" ] || skip "cannot resolve linux-image-amd64 (apt-get update needed? no mirror?)"
		vm_fetch "$1" "$kname"
		kpkg=$(ls "$1/$kname"_*.deb | head -n 1)
	fi
	vm_unpack "$kpkg" "$1/kernel"
	VMLINUZ=$(ls "$1"/kernel/boot/vmlinuz-* | head -n 1)
	KVER=${VMLINUZ##*/vmlinuz-}
	MODDIR=$1/kernel/lib/modules/$KVER
	[ -d "$MODDIR" ] || MODDIR=$1/kernel/usr/lib/modules/$KVER
	[ -d "$MODDIR" ] || die "no modules for $KVER in $kpkg"
}

vm_modules() { # vm_modules DIR MODULE...
	local dir=$1 m f
	shift
	mkdir -p "$dir"
	: >"$dir/order"
	for m in "$@"; do
		f=$(find "$MODDIR" -name "$m.ko" -o -name "$m.ko.xz" -o -name "$m.ko.zst" -o -name "$m.ko.gz" | head -n 1)
		if [ -z "$f" ]; then
			if grep -q "/$m\.ko" "$MODDIR/modules.builtin" 2>/dev/null; then
				echo "vm: $m is built into $KVER"
				continue
			fi
			die "module $m is neither a module nor built into $KVER"
		fi
		case $f in
		*.xz) xz -dc "$f" >"$dir/$m.ko" ;;
		*.zst) zstd -qdc "$f" >"$dir/$m.ko" ;;
		*.gz) gzip -dc "$f" >"$dir/$m.ko" ;;
		*) cp "$f" "$dir/$m.ko" ;;
		esac
		echo "$m" >>"$dir/order"
	done
}

# Rarely (seen once in ~15 boots on a loaded 2-core host) a TCG boot stalls
# early (RCU stall, a vCPU's timer never fires). A watchdog kills a boot
# whose console has not shown VM_BOOT_MARK within RINGD_VM_BOOT_LIMIT
# seconds (60) and we boot once more.
vm_boot_once() {
	local limit=${RINGD_VM_BOOT_LIMIT:-60} wd b0
	rm -f "$OUTDIR/qemu.pid" "$OUTDIR/boot-stalled"
	: >"$CONSOLE"
	# (The console pipeline must not buffer: the watchdog reads the file.)
	(
		end=$(($(date +%s) + limit))
		while [ "$(date +%s)" -lt "$end" ]; do
			grep -aq "$VM_BOOT_MARK" "$CONSOLE" && exit 0
			sleep 1
		done
		touch "$OUTDIR/boot-stalled"
		[ -f "$OUTDIR/qemu.pid" ] && kill "$(cat "$OUTDIR/qemu.pid")"
	) &
	wd=$!
	b0=$(date +%s)
	set +e
	timeout -k 5 "$TIMEOUT" qemu-system-x86_64 -accel tcg -cpu max -smp 2 -m "${VM_MEM:-2G}" \
		-nographic -no-reboot -nic none -pidfile "$OUTDIR/qemu.pid" \
		-kernel "$VMLINUZ" -initrd "$INITRD" -append "$APPEND" </dev/null 2>&1 |
		sed -u -e 's/\r//g' | tee "$CONSOLE" | sed -u -e 's/\x1b\[[0-9;?]*[a-zA-Z]//g' -e 's/^/[vm] /'
	QRC=${PIPESTATUS[0]}
	kill "$wd" 2>/dev/null
	wait "$wd" 2>/dev/null
	set -e
	echo "vm: VM ran $(($(date +%s) - b0)) s (qemu status $QRC)"
}

vm_boot() {
	CONSOLE=$OUTDIR/console.log
	echo "vm: booting (TCG, timeout ${TIMEOUT}s), console in $CONSOLE"
	vm_boot_once
	if [ -f "$OUTDIR/boot-stalled" ]; then
		cp "$CONSOLE" "$OUTDIR/console-stalled.log"
		echo "vm: boot did not show '$VM_BOOT_MARK' within ${RINGD_VM_BOOT_LIMIT:-60}s (see $OUTDIR/console-stalled.log); booting again"
		vm_boot_once
		if [ -f "$OUTDIR/boot-stalled" ]; then
			echo "vm: FAIL: boot did not show '$VM_BOOT_MARK' within ${RINGD_VM_BOOT_LIMIT:-60}s, twice" >&2
			return 125
		fi
	fi
}

vm_result() { # vm_result PAYLOAD: prints nothing, returns the status
	local res
	res=$(grep -a -o 'RINGD-VM-RESULT [0-9][0-9]*' "$CONSOLE" | tail -n 1 | cut -d' ' -f2)
	if [ -n "$res" ]; then
		echo "vm: payload '$1' exited $res"
		return "$res"
	fi
	if [ "$QRC" = 124 ] || [ "$QRC" = 137 ]; then
		echo "vm: FAIL: VM killed after ${TIMEOUT}s timeout, no result from payload '$1' (see $CONSOLE)" >&2
		return 124
	fi
	if grep -aq 'Kernel panic' "$CONSOLE"; then
		echo "vm: FAIL: kernel panic, no result (see $CONSOLE)" >&2
	else
		echo "vm: FAIL: qemu exited $QRC without a RINGD-VM-RESULT line (see $CONSOLE)" >&2
	fi
	return 125
}
