#!/usr/bin/env bash
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
# Usage: Tests/vm/arm64/run.sh [--keep]   (--keep: leave the work directory)
# Downloads are cached in Tests/vm/.cache/arm64 (about 70 MB, once).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cache=$top/Tests/vm/.cache/arm64
timeout_s=${ARM64_TIMEOUT:-600}   # a hang guard: generous for a loaded host
keep=0; [[ ${1:-} == --keep ]] && keep=1

die() { echo "test-arm64: FAIL: $*" >&2; exit 1; }
"$here/fetch.sh" "$cache"

work=$(mktemp -d /tmp/actiond-arm64.XXXXXX)
qemu_pid=""
cleanup() {
  [[ -n $qemu_pid ]] && kill "$qemu_pid" 2>/dev/null || true
  if [[ $keep == 1 ]]; then echo "test-arm64: work directory kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

# --- initramfs ---------------------------------------------------------------
kver=$(cat "$cache/kernel/version")
root=$work/root
cp -a "$cache/sysroot" "$root"
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

pressed=0
while kill -0 "$qemu_pid" 2>/dev/null; do
  if (($(date +%s) - start > timeout_s)); then
    tail -40 "$log" >&2 || true; die "no result within ${timeout_s} s"
  fi
  if [[ $pressed == 0 ]] && grep -q '^ARM64: ready-for-press' "$log" 2>/dev/null; then
    python3 "$top/Tests/vm/qmp.py" "$qmp" raw '{"execute": "system_powerdown"}' >/dev/null \
      || die "QMP system_powerdown failed"
    pressed=1
  fi
  sleep 0.2
done
wait "$qemu_pid" || true
qemu_pid=""

# The evidence: the guest's report and the udevadm info of the button.
tr -d '\r' <"$log" | sed -n '/^ARM64\|^---- udevadm info/,/^----$/p' | sed '/^ARM64: ready-for-press/d'
tr -d '\r' <"$log" | grep -qx 'ARM64-PASS' || { cat "$work/qemu.log" >&2; tail -30 "$log" >&2; die "the guest did not pass"; }
echo "test-arm64: passed in $(($(date +%s) - start)) s (boot included)"
