#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The arm64 tier: proves 70-actiond.rules on a *real* gpio-keys device.
#
# qemu-system-aarch64's `virt` board has a gpio-keys power button on its PL061
# GPIO controller. This boots Debian's arm64 kernel (TCG) with an initramfs of
# Debian's arm64 udev and busybox-static plus the shipped rule, and checks in
# the guest (Tests/vm/arm64/init) that udev tags the button `actiond` (and
# `systemd`, with SYSTEMD_WANTS and group/mode), leaves a USB keyboard alone
# until a local rule marks it as docs/keyboard-key.md says, then presses the button with QMP `system_powerdown`
# and reads the key events from its event node.
#
# Then the real daemon: the binaries of the arm64 package (make deb ARCH=arm64, cross-built
# on this machine) run in the guest on Debian 12's libraries (the glibc floor, proven on
# real Debian 12 libraries), and Tests/vm/arm64/init checks what a board owner would: a
# short press announces the hint only, a hold performs the exec intent once at the
# threshold and announces the state, actionctl status answers, SIGTERM stops it cleanly.
# The host holds the button by sending QMP system_powerdown every 40 ms (one request is a
# ~100 ms press: the gpio-keys device releases 100 ms after the last one).
# Before booting, on this machine: the glibc versions the binaries need (at most 2.36, so
# the one package installs on Debian 12 / Raspberry Pi OS 12 and Debian 13), and the same
# binaries against Debian 13's arm64 libraries under qemu-aarch64 (user mode).
#
# Usage: Tests/vm/arm64/run.sh PATH/actiond_VERSION_arm64.deb [--keep]   (--keep: leave the work directory)
# Downloads are cached in $ACTIOND_CACHE/vm/bookworm-arm64 (about 70 MB, once) and by scripts/cross-arm64.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cache=$("$top/Tests/vm/cache-dir.sh" bookworm-arm64)
timeout_s=${ARM64_TIMEOUT:-600}   # a hang guard: generous for a loaded host
deb=${1:?usage: run.sh PATH/actiond_VERSION_arm64.deb [--keep]}
keep=0; [[ ${2:-} == --keep ]] && keep=1
glibc_floor=2.36   # Debian 12's (and Raspberry Pi OS 12's) glibc

die() { echo "test-arm64: FAIL: $*" >&2; exit 1; }
[[ -f $deb ]] || die "no $deb (make deb ARCH=arm64)"
t0=$(date +%s)
"$here/fetch.sh" "$cache"
echo "test-arm64: guest packages ready in $(($(date +%s) - t0)) s"

work=$(mktemp -d /tmp/actiond-arm64.XXXXXX)
qemu_pid=""
cleanup() {
  [[ -n $qemu_pid ]] && kill "$qemu_pid" 2>/dev/null || true
  if [[ $keep == 1 ]]; then echo "test-arm64: work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# --- the binaries, on this machine ----------------------------------------------
t0=$(date +%s)
pkg=$work/pkg
dpkg-deb -x "$deb" "$pkg"
bins=("$pkg/usr/sbin/actiond" "$pkg/usr/bin/actionctl")
# The bridge's package beside it (its name as mk/deb.mk writes it): its binary is held to
# the same floor and run on Debian 13's libraries below; the guest needs only the daemon.
mqttdeb=$(dirname "$deb")/actiond-mqtt_${deb##*/actiond_}
[[ -f $mqttdeb ]] || die "no $mqttdeb beside $deb"
dpkg-deb -x "$mqttdeb" "$pkg"
for b in "${bins[@]}" "$pkg/usr/sbin/actiond-mqtt"; do
  [[ -x $b ]] || die "$deb has no ${b#"$pkg"}"
  machine=$(readelf -h "$b" | sed -n 's/^ *Machine: *//p')
  [[ $machine == AArch64 ]] || die "${b#"$pkg"} is for '$machine', not AArch64"
  # The highest GLIBC_x.y among the versions the binary needs (.gnu.version_r).
  need=$(readelf -V "$b" | sed -n 's/.*Name: GLIBC_\([0-9.]*\).*/\1/p' | sort -uV | tail -1)
  [[ -n $need ]] || die "${b#"$pkg"} needs no GLIBC version at all (not dynamically linked against glibc?)"
  [[ $(printf '%s\n' "$need" "$glibc_floor" | sort -V | tail -1) == "$glibc_floor" ]] \
    || die "${b#"$pkg"} needs GLIBC_$need, newer than Debian 12's $glibc_floor: $(readelf -V "$b" | grep -o 'GLIBC_2\.[0-9]*' | sort -uV | tr '\n' ' ')"
  echo "test-arm64: ${b#"$pkg"}: ELF for $machine, $(stat -c %s "$b") bytes (stripped), needs at most GLIBC_$need (Debian 12 has $glibc_floor)"
done
for d in "$deb" "$mqttdeb"; do
  depends=$(dpkg-deb -f "$d" Depends)
  libc_min=$(sed -n 's/.*libc6 (>= \([0-9.]*\)).*/\1/p' <<<"$depends")
  [[ -n $libc_min && $(printf '%s\n' "$libc_min" "$glibc_floor" | sort -V | tail -1) == "$glibc_floor" ]] \
    || die "$(basename "$d")'s Depends asks for libc6 >= '$libc_min', not at most $glibc_floor: $depends"
  echo "test-arm64: $(basename "$d") Depends: $depends"
done

# Debian 13's arm64 libraries: the same binaries under qemu-aarch64 in user mode.
trixie=$("$top/scripts/cross-arm64" trixie-sysroot)
out=$(qemu-aarch64 -L "$trixie" "$pkg/usr/sbin/actiond" --check-config "$top/examples/actiond.json" 2>&1) \
  || die "actiond --check-config on Debian 13's libraries: $out"
out=$(qemu-aarch64 -L "$trixie" "$pkg/usr/bin/actionctl" check-config "$top/examples/actiond.json" 2>&1) \
  || die "actionctl check-config on Debian 13's libraries: $out"
ver=$(qemu-aarch64 -L "$trixie" "$pkg/usr/sbin/actiond" --version 2>&1) || die "actiond --version on Debian 13's libraries: $ver"
mver=$(qemu-aarch64 -L "$trixie" "$pkg/usr/sbin/actiond-mqtt" --version 2>&1) || die "actiond-mqtt --version on Debian 13's libraries: $mver"
ver="$ver, $mver"
trixie_libc=$(qemu-aarch64 -L "$trixie" "$trixie/lib/ld-linux-aarch64.so.1" --version | head -1)
echo "test-arm64: on Debian 13's arm64 libraries ($trixie_libc), qemu-aarch64 user mode: $ver; actiond --check-config and actionctl check-config accept examples/actiond.json"
echo "test-arm64: binaries checked in $(($(date +%s) - t0)) s"

# --- initramfs ---------------------------------------------------------------
t0=$(date +%s)
kver=$(cat "$cache/kernel/version")
root=$work/root
cp -a "$cache/sysroot" "$root"
install -D -m 0755 "$pkg/usr/sbin/actiond" "$root/usr/sbin/actiond"
install -D -m 0755 "$pkg/usr/bin/actionctl" "$root/usr/bin/actionctl"
# Every library the binaries need must be in the guest: checked now, not found missing in the VM.
for so in $(readelf -d "${bins[@]}" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort -u); do
  [[ -n $(find "$root" -name "$so" -print -quit) ]] || die "the guest lacks $so, which the binaries need"
done
install -m 0755 "$here/init" "$root/init"
install -D -m 0644 "$top/udev-rules/70-actiond.rules" "$root/usr/local/lib/udev/rules.d/70-actiond.rules"
mkdir -p "$root/etc"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\ninput:x:101:\n' >"$root/etc/group"
# The modules and their dependencies, with the depmod indexes busybox modprobe reads.
mdir=lib/modules/$kver
mkdir -p "$root/$mdir"
cp "$cache/kernel/root/$mdir"/modules.* "$root/$mdir/"
for m in evdev gpio_keys xhci_pci usbhid hid_generic; do
  modprobe -d "$cache/kernel/root" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | sort -u | while read -r ko; do
  rel=${ko#"$cache/kernel/root/"}
  install -D -m 0644 "$ko" "$root/$rel"
done
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"
echo "test-arm64: initramfs ($(du -h "$work/initrd.gz" | cut -f1)) made in $(($(date +%s) - t0)) s"

# press MS: holds the gpio-keys button for about MS ms. One system_powerdown is a ~100 ms
# press; repeating it every 40 ms keeps the key down (the device releases 100 ms after the
# last request), so the requests stop 100 ms before the end.
press() {
  python3 - "$qmp" "$1" "$top/Tests/vm" <<'PRESS'
import sys, time
sys.path.insert(0, sys.argv[3])
from qmp import QMP
q = QMP(sys.argv[1])
end = time.monotonic() + int(sys.argv[2]) / 1000 - 0.1
q.execute("system_powerdown")
while time.monotonic() + 0.04 < end:
    time.sleep(0.04)
    q.execute("system_powerdown")
q.close()
PRESS
}

# --- boot --------------------------------------------------------------------
log=$work/serial.log
qmp=$work/qmp.sock
start=$(date +%s)
qemu-system-aarch64 -M virt -cpu cortex-a57 -accel tcg -m 512 -smp 1 \
  -nographic -monitor none -serial "file:$log" -nic none -no-reboot \
  -qmp "unix:$qmp,server=on,wait=off" -device qemu-xhci,id=xhci -device usb-kbd,bus=xhci.0 \
  -kernel "$cache/kernel/Image" -initrd "$work/initrd.gz" \
  -append "console=ttyAMA0 rdinit=/init panic=-1 quiet" </dev/null >"$work/qemu.log" 2>&1 &
qemu_pid=$!

# The guest asks for each press with a line "ARM64: press MS"; each is done once, in order.
pressed=0
while kill -0 "$qemu_pid" 2>/dev/null; do
  if (($(date +%s) - start > timeout_s)); then
    tail -40 "$log" >&2 || true; die "no result within ${timeout_s} s"
  fi
  asked=$(tr -d '\r' 2>/dev/null <"$log" | sed -n 's/^ARM64: press \([0-9]*\)$/\1/p' || true)
  if (($(grep -c . <<<"$asked") > pressed)); then
    ms=$(sed -n "$((pressed + 1))p" <<<"$asked")
    press "$ms" || die "QMP system_powerdown failed"
    pressed=$((pressed + 1))
    echo "test-arm64: pressed the gpio-keys button for ~$ms ms (QMP system_powerdown)"
  fi
  sleep 0.1
done
wait "$qemu_pid" || true
qemu_pid=""

# The evidence: the guest's report and the udevadm info of the button.
tr -d '\r' <"$log" | sed -n '/^ARM64\|^---- udevadm info/,/^----$/p' | sed '/^ARM64: press [0-9]*$/d'
tr -d '\r' <"$log" | grep -qx 'ARM64-PASS' || { cat "$work/qemu.log" >&2; tail -30 "$log" >&2; die "the guest did not pass"; }
echo "test-arm64: passed in $(($(date +%s) - start)) s (boot included)"
