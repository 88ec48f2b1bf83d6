# SPDX-License-Identifier: Apache-2.0
# Host side of the systemd VM tiers (Tests/vm/systemd/run.sh, Tests/deb/systemd.sh), sourced
# by both. Uses their $root (the initramfs tree, /init already written), $work, $cache and die.
#
# systemd_boot TIMEOUT_S MEMORY_MB TAIL_LINES: packs $root into $work/initrd.gz and boots
# Debian's kernel with it, systemd becoming PID 1 in the tree /init switches to (the host's /
# read-only over 9p as `host`); prints the guest's SYSTEMD lines and, unless it printed
# SYSTEMD-PASS, qemu's output and the serial log's last TAIL_LINES lines, then dies. Sets
# $start (epoch seconds at the boot).
systemd_boot() {
  chmod 0755 "$root/init"
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"
  start=$(date +%s)
  # no_timer_check: the kernel's boot-time check that the timer interrupt arrives, made with a
  # busy-wait against the emulated clock, panics ("IO-APIC + timer doesn't work") when the
  # host is too loaded to run the guest's CPU in time; the timer works, the check is not ours.
  timeout "$1" qemu-system-x86_64 -accel tcg -m "$2" -smp 1 -nic none -display none -no-reboot \
    -kernel "$cache/kernel/vmlinux" -initrd "$work/initrd.gz" \
    -append "console=ttyS0 quiet panic=-1 no_timer_check systemd.unit=actiond-vmtest.target systemd.firstboot=off systemd.show_status=0 systemd.log_target=console systemd.log_level=warning" \
    -virtfs local,path=/,mount_tag=host,security_model=none,readonly=on \
    -serial "file:$work/serial.log" </dev/null >"$work/qemu.log" 2>&1 || true
  # grep -o: systemd 257 writes terminal resets to a TTYPath= unit's tty before its first line.
  tr -d '\r' <"$work/serial.log" | grep -o 'SYSTEMD[-:].*' || true
  tr -d '\r' <"$work/serial.log" | grep -qx 'SYSTEMD-PASS' \
    || { cat "$work/qemu.log" >&2; tail -"$3" "$work/serial.log" >&2; die "the guest did not pass (after $(($(date +%s) - start)) s; serial log above)"; }
}
