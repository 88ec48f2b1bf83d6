#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-static: the installed release binaries run on a machine without the
# Swift toolchain.
#
# `make install` (release, --static-swift-stdlib) into a staging root, plus
# busybox and only the libraries ldd names for the two binaries: no Swift
# runtime anywhere in the image (checked), then Debian's x86 kernel boots it
# under qemu and the guest runs the installed actiond and actionctl: the daemon
# on its installed default configuration, actionctl status and perform over its
# default socket, and the state surviving a restart.
#
# Usage: Tests/vm/static/run.sh    (from `make test-static`, after `make release`)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cache=$("$top/Tests/vm/cache-dir.sh")
die() { echo "test-static: FAIL: $*" >&2; exit 1; }

"$top/Tests/vm/fetch.sh" "$cache" >/dev/null
work=$(mktemp -d /tmp/actiond-static.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root

make -C "$top" --no-print-directory -s install-bin install-data DESTDIR="$root" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log" >&2; die "make install"; }
busybox=$(command -v busybox)
ldd "$busybox" >/dev/null 2>&1 && die "$busybox is not static (apt-get install busybox-static)"
install -D -m 0755 "$busybox" "$root/bin/busybox"
for bin in "$root/usr/local/sbin/actiond" "$root/usr/local/bin/actionctl"; do
  ldd "$bin" | grep -q 'not found' && die "$bin: $(ldd "$bin" | grep 'not found')"
  ldd "$bin" | awk '/=> \// { print $3 } /^\t\// { print $1 }' | while read -r lib; do
    [[ -e $root$lib ]] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
  done
done
# String's substring search (`contains("ab")`, `firstRange(of:)`) lives in _StringProcessing,
# which brings the regex modules: 780 kB of text and 144 kB of relocated data in each program,
# about 170 kB of actiond's VmRSS in the VM (docs/benchmarks-notebook.md, "VmRSS"). The
# programs search bytes instead; this keeps a new call from bringing them back unnoticed.
for bin in "$root/usr/local/sbin/actiond" "$root/usr/local/bin/actionctl" "$root/usr/local/sbin/actiond-mqtt"; do
  regex=$(nm "$bin" | grep -c -E '[$]s(17_StringProcessing|12_RegexParser)' || true)
  [[ $regex -eq 0 ]] || die "$bin links the regex modules ($regex symbols; the call: nm -u on the release build's objects, grep _StringProcessing)"
done
swift=$(cd "$root" && find . -iname '*swift*' -o -name 'libFoundation*' -o -name 'libdispatch*' -o -name 'libBlocksRuntime*')
[[ -z $swift ]] || die "Swift runtime files in the image: $swift"
echo "test-static: image libraries: $(cd "$root" && find . -name '*.so' -o -name '*.so.[0-9]*' | sed 's|.*/||' | sort | tr '\n' ' ')"

cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /tmp /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t devtmpfs devtmpfs /dev
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /run
mkdir -p /run/actiond /var/lib/actiond
fail() { echo "STATIC-FAIL: $*"; cat /tmp/actiond.log 2>/dev/null; poweroff -f; }
# The daemon with every default: /etc/actiond/actiond.json, /run/actiond/actiond.sock, /var/lib/actiond.
start_daemon() {
  /usr/local/sbin/actiond >>/tmp/actiond.log 2>&1 &
  daemon=$!
  i=0
  until [ -S /run/actiond/actiond.sock ]; do
    i=$((i + 1)); [ $i -le 600 ] || fail "no socket 60 s after starting actiond"
    kill -0 $daemon 2>/dev/null || fail "actiond exited"
    sleep 0.1
  done
}
stop_daemon() {
  kill -TERM $daemon; wait $daemon || fail "actiond exited with $? after SIGTERM"
  rm -f /run/actiond/actiond.sock
}
v=$(/usr/local/sbin/actiond --version 2>&1) || fail "actiond --version: $v"
echo "STATIC: $v"
/usr/local/sbin/actiond --help >/tmp/help 2>&1 || fail "actiond --help: $(cat /tmp/help)"
echo "STATIC: actiond --help: $(head -1 /tmp/help)"
c=$(/usr/local/bin/actionctl check-config /etc/actiond/actiond.json 2>&1) || fail "actionctl check-config: $c"
echo "STATIC: actionctl check-config: $c"
[ -z "$(find / -xdev -iname '*swift*' 2>/dev/null)" ] || fail "a Swift file is in the guest"
start_daemon
s=$(/usr/local/bin/actionctl status 2>&1) || fail "actionctl status: $s"
echo "$s" | sed 's/^/STATIC: status: /'
echo "$s" | grep -q 'Work Timer.*Stopped.*Hold to Start' || fail "status does not show the Work Timer stopped"
p=$(/usr/local/bin/actionctl perform action 2>&1) || fail "actionctl perform action: $p"
echo "STATIC: perform action: $p"
stop_daemon
start_daemon
s=$(/usr/local/bin/actionctl status 2>&1) || fail "actionctl status after restart: $s"
echo "$s" | grep -q 'Work Timer.*Running.*Hold to Stop' || fail "the state did not survive a restart: $s"
echo "STATIC: after a restart: $(echo "$s" | tail -1)"
stop_daemon
echo "STATIC-PASS"
poweroff -f
INIT
chmod 0755 "$root/init"
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\ninput:x:101:\n' >"$root/etc/group"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$work/initrd.gz"

start=$(date +%s)
# no_timer_check: as Tests/vm/systemd/boot.sh says (a loaded host made the kernel panic).
timeout 600 qemu-system-x86_64 -accel tcg -m 512 -smp 1 -nic none -display none -no-reboot \
  -kernel "$cache/kernel/vmlinux" -initrd "$work/initrd.gz" -append "console=ttyS0 quiet panic=-1 no_timer_check" \
  -serial "file:$work/serial.log" </dev/null >"$work/qemu.log" 2>&1 || true
tr -d '\r' <"$work/serial.log" | grep '^STATIC' || true
tr -d '\r' <"$work/serial.log" | grep -qx 'STATIC-PASS' \
  || { cat "$work/qemu.log" >&2; tail -20 "$work/serial.log" >&2; die "the guest did not pass"; }
echo "test-static: passed in $(($(date +%s) - start)) s"
