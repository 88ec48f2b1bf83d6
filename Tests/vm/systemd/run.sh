#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-systemd: the installed units under a real systemd (PID 1) in a VM.
#
# The guest's root is a tmpfs holding this machine's /usr (9p, read-only: the
# same systemd 252 as Debian 12), a tmpfs /usr/local with `make install`'s
# files (so systemd and systemd-sysusers must find them under /usr/local/lib),
# a minimal /etc, and a oneshot test unit. systemd boots to actiond-vmtest.target;
# the test unit connects with actionctl, so actiond.socket starts
# actiond.service with its whole sandbox; then it performs, reloads and
# inspects the running service (user, groups, capabilities, seccomp, state),
# drives a sysfs feedback LED through the shipped udev rule and the documented
# drop-in (Debian's udev package, fetched for the VM tier, is overlaid on /usr),
# starts actiond-mqtt.service against mosquitto on the loopback (discovery, a
# switch command, its sandbox), and powers off. The Swift toolchain is not
# visible in the guest (/usr/local
# is replaced).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
cache=$("$top/Tests/vm/cache-dir.sh")
die() { echo "test-systemd: FAIL: $*" >&2; exit 1; }

"$top/Tests/vm/fetch.sh" "$cache" >/dev/null
kver=$(cat "$cache/kernel/version")
kroot=$(realpath "$cache/kernel/root")
work=$(mktemp -d /tmp/actiond-systemd.XXXXXX)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root"/{bin,proc,sys,dev,run,newroot,stage}

# What `make install` puts in /usr/local and /etc.
make -C "$top" --no-print-directory -s install-bin install-data DESTDIR="$root/stage" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log" >&2; die "make install"; }
install -m 0755 "$(command -v busybox)" "$root/bin/busybox"
for m in 9p 9pnet_virtio virtio_pci overlay evdev uinput; do
  modprobe -d "$kroot" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' >"$work/modules"
mkdir -p "$root/modules"
# Debian 13's modules are xz-compressed (a Debian 13 machine's kernel); busybox insmod takes
# them uncompressed.
n=0; while read -r ko; do
  n=$((n + 1)) to=$root/modules/$(printf %02d $n)-$(basename "${ko%.xz}")
  case $ko in *.xz) xz -dc "$ko" >"$to" ;; *) cp "$ko" "$to" ;; esac
done <"$work/modules"

# udev: this machine's /usr has none (the VM tier fetches Debian's package, the same version
# as this systemd). The guest gets the package's files as a read-only overlay layer over /usr
# (its /lib and /bin mapped into usr/, as on a merged-/usr install), so systemd starts
# systemd-udevd with the package's own units, and udevd reads the shipped rule from
# /usr/local/lib/udev/rules.d.
udev_root=$(realpath "$cache/udev/root")
mkdir -p "$root/udev-usr"
cp -a "$udev_root/usr/." "$root/udev-usr/"
for d in bin lib sbin; do
  [[ -d $udev_root/$d ]] || continue
  mkdir -p "$root/udev-usr/$d" && cp -a "$udev_root/$d/." "$root/udev-usr/$d/"
done
mkdir -p "$root/stage/etc/udev" && cp -a "$udev_root/etc/udev/." "$root/stage/etc/udev/"

# The device tool, for an input device with LEDs (its inputN::capslock LED class device is
# the sysfs LED the sandboxed service drives): built like the release binaries, with the Swift
# runtime linked in, since the toolchain is not visible in the guest; libevdev comes from /usr.
swift build -c release --static-swift-stdlib -Xlinker -L"$top/mk/static-libstdc++" --product actiond-testdev \
  >"$work/testdev-build.log" 2>&1 || { cat "$work/testdev-build.log" >&2; die "building actiond-testdev"; }
testdev_bin=$(swift build -c release --static-swift-stdlib --show-bin-path)/actiond-testdev
install -D -m 0755 "$testdev_bin" "$root/stage/usr/local/libexec/actiond-vmtest/actiond-testdev"
# The local rule the shipped 70-actiond.rules expects for a feedback LED (ACTIOND_LED=1): the
# Caps Lock LED of the device named actiond-led-test only.
mkdir -p "$root/stage/etc/udev/rules.d"
cat >"$root/stage/etc/udev/rules.d/69-actiond-local.rules" <<'RULES'
SUBSYSTEM=="leds", KERNEL=="input*::capslock", ATTRS{name}=="actiond-led-test", ENV{ACTIOND_LED}="1"
RULES

# The test, run by systemd once the system is up.
mkdir -p "$root/stage/etc/systemd/system"
install -m 0644 "$here/broker.sh" "$root/stage/etc/actiond-vmtest-broker.sh"
cat >"$root/stage/etc/systemd/system/actiond-vmtest.target" <<'UNIT'
[Unit]
Description=actiond VM test
Requires=sysinit.target actiond-vmtest.service
After=sysinit.target
AllowIsolate=yes
UNIT
cat >"$root/stage/etc/systemd/system/actiond-vmtest.service" <<'UNIT'
[Unit]
Description=actiond VM test driver
After=sysinit.target actiond.socket
Wants=actiond.socket
[Service]
Type=oneshot
ExecStart=/bin/sh /etc/actiond-vmtest.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
UNIT
# An exec intent that writes outside the sandbox's writable paths: it must fail
# until a drop-in grants the path (docs/operations.md, "Write files elsewhere").
mkdir -p "$root/stage/etc/actiond/controls.d"
cat >"$root/stage/etc/actiond/controls.d/vmtest.json" <<'JSON'
{
  kind: "org.actiond.vmtest.touch",
  type: "button",
  displayName: "Touch",
  actionHint: "Touch",
  intent: { type: "exec", argv: ["/usr/bin/touch", "/srv/actiond-test/flag"], timeoutMs: 10000 },
}
JSON
cat >"$root/stage/etc/actiond-vmtest.sh" <<'TEST'
#!/bin/sh
# Runs as a oneshot under systemd; every line goes to the serial console.
say() { echo "SYSTEMD: $*"; }
fail() {
  echo "SYSTEMD-FAIL: $*"
  systemctl --no-pager status actiond.socket actiond.service 2>&1 | sed 's/^/  /'
  journalctl --no-pager -b -u actiond.service -u actiond.socket -u actiond-mqtt.service 2>&1 | tail -30 | sed 's/^/  /'
  systemctl poweroff --force --force
}
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin SYSTEMD_PAGER=cat
id actiond >/dev/null 2>&1 || fail "systemd-sysusers did not create user actiond from /usr/local/lib/sysusers.d"
say "user from /usr/local/lib/sysusers.d: $(id actiond)"
systemctl is-active --quiet actiond.socket || fail "actiond.socket is not active"
[ "$(systemctl is-active actiond.service)" != active ] || fail "actiond.service runs before any client connected"
say "actiond.socket listening, actiond.service not started: $(stat -c '%U:%G %a' /run/actiond/actiond.sock)"
out=$(actionctl status 2>&1) || fail "actionctl status: $out"
echo "$out" | sed 's/^/SYSTEMD: status: /'
echo "$out" | grep -q 'Work Timer.*Stopped.*Hold to Start' || fail "unexpected status"
[ "$(systemctl is-active actiond.service)" = active ] || fail "socket activation did not start actiond.service"
pid=$(systemctl show -P MainPID actiond.service)
say "socket activation started actiond.service (pid $pid)"
say "process: $(grep -E '^(Uid|Gid|Groups|CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/$pid/status | tr -s '\t ' ' ' | tr '\n' ';')"
[ "$(stat -c %U /proc/$pid)" = actiond ] || fail "actiond does not run as user actiond"
grep -q '^CapEff:[[:space:]]*0000000000000000' /proc/$pid/status || fail "actiond has capabilities"
grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$pid/status || fail "NoNewPrivs is not set"
grep -q '^Seccomp:[[:space:]]*2' /proc/$pid/status || fail "no seccomp filter"
input_gid=$(getent group input | cut -d: -f3)
grep -q "^Groups:.*\b$input_gid\b" /proc/$pid/status || fail "actiond is not in group input ($input_gid)"
out=$(actionctl perform action 2>&1) || fail "actionctl perform action: $out"
say "perform action: $out"
ls -l /var/lib/actiond/ | sed 's/^/SYSTEMD: state: /'
[ "$(stat -c %U /var/lib/actiond)" = actiond ] || fail "/var/lib/actiond is not owned by actiond"
systemctl reload actiond.service || fail "systemctl reload failed"
# Type=notify: active again once the daemon says READY=1 after RELOADING=1.
i=0
until [ "$(systemctl is-active actiond.service)" = active ]; do
  i=$((i + 1)); [ $i -le 600 ] || fail "not active 60 s after the reload: $(systemctl is-active actiond.service)"
  sleep 0.1
done
[ "$(systemctl show -P MainPID actiond.service)" = "$pid" ] || fail "reload replaced the process"
say "systemctl reload: still active, same pid"
systemctl restart actiond.service || fail "systemctl restart failed"
out=$(actionctl status 2>&1) || fail "actionctl status after restart: $out"
echo "$out" | grep -q 'Work Timer.*Running.*Hold to Stop' || fail "state lost across a restart: $out"
say "systemctl restart: the Work Timer is still Running"
say "journal: $(journalctl --no-pager -b -u actiond.service -o cat 2>/dev/null | grep -c .) lines, e.g.:"
journalctl --no-pager -b -u actiond.service -o cat 2>/dev/null | head -4 | sed 's/^/SYSTEMD:   /'
mkdir -p /srv/actiond-test && chown actiond:actiond /srv/actiond-test
if out=$(actionctl perform --kind org.actiond.vmtest.touch 2>&1); then fail "an exec intent wrote outside the sandbox: $out"; fi
[ ! -e /srv/actiond-test/flag ] || fail "/srv/actiond-test/flag exists although /srv is read-only for the service"
journalctl --no-pager -b -u actiond.service -o cat | grep -q 'Read-only file system' \
  || fail "the refused exec intent's error (Read-only file system) is not in the journal"
say "exec intent writing /srv/actiond-test without a grant: refused, journal: $(journalctl --no-pager -b -u actiond.service -o cat | grep 'Read-only file system' | tail -1)"
mkdir -p /etc/systemd/system/actiond.service.d
printf '[Service]\nReadWritePaths=/srv/actiond-test\n' >/etc/systemd/system/actiond.service.d/write.conf
systemctl daemon-reload && systemctl restart actiond.service || fail "restart with the drop-in failed"
out=$(actionctl perform --kind org.actiond.vmtest.touch 2>&1) || fail "exec intent with ReadWritePaths=/srv/actiond-test: $out"
[ "$(stat -c %U /srv/actiond-test/flag 2>/dev/null)" = actiond ] || fail "the exec intent did not create /srv/actiond-test/flag as actiond"
say "with the drop-in ReadWritePaths=/srv/actiond-test: $out; flag owned by $(stat -c %U /srv/actiond-test/flag)"

# Feedback on a sysfs LED (issue 17): the shipped rule gives group actiond the brightness and
# trigger of the LED a local rule marked (69-actiond-local.rules), and of no other; the
# sandbox (ProtectSystem=strict, ProtectKernelTunables=yes) keeps /sys read-only until the
# documented drop-in names the LED's two files; then the service drives it.
testdev=/usr/local/libexec/actiond-vmtest/actiond-testdev
# led_device NAME FIFO LOG FD: a uinput device NAME with LED_CAPSL, kept alive by FIFO (open
# for writing on FD: the tool's open of FIFO waits for it); prints every LED change it
# receives into LOG.
led_device() {
  mkfifo "$2"
  "$testdev" create --name "$1" --keys KEY_F1 --leds LED_CAPSL <"$2" >"$3" 2>&1 &
  eval "exec $4>\"\$2\""
  i=0; until grep -q '^created ' "$3" 2>/dev/null; do i=$((i + 1)); [ $i -le 300 ] || fail "$1 not created: $(cat "$3")"; sleep 0.1; done
}
led_device actiond-led-test /run/led.fifo /run/led.log 8
led_device actiond-led-other /run/other.fifo /run/other.log 9
udevadm settle --timeout=30
led=$(grep -lx actiond-led-test /sys/class/leds/input*::capslock/device/name); led=${led%/device/name}; led=${led##*/}
other=$(grep -lx actiond-led-other /sys/class/leds/input*::capslock/device/name); other=${other%/device/name}; other=${other##*/}
[ -n "$led" ] && [ -n "$other" ] || fail "no inputN::capslock LED class devices: $(ls /sys/class/leds)"
for f in brightness trigger; do
  perm=$(stat -c '%G %A' "/sys/class/leds/$led/$f")
  say "rule: /sys/class/leds/$led/$f: $perm; unmarked $other: $(stat -c '%G %A' "/sys/class/leds/$other/$f")"
  case $perm in
    "actiond -rw-rw-r--") ;;
    *)
      udevadm info -q property -p "/sys/class/leds/$led" 2>&1 | sed 's/^/SYSTEMD:   udev: /'
      systemctl --no-pager status systemd-udevd 2>&1 | head -5 | sed 's/^/SYSTEMD:   /'
      journalctl --no-pager -b -u systemd-udevd -o cat 2>&1 | tail -15 | sed 's/^/SYSTEMD:   udevd: /'
      fail "$led/$f is '$perm', expected group actiond, g+w"
      ;;
  esac
  [ "$(stat -c %G "/sys/class/leds/$other/$f")" = root ] || fail "the unmarked $other/$f was given away"
done
# The LED's configuration replaces the installed one until the LED is done (the bridge below
# works on the installed one).
cp /etc/actiond/actiond.json /run/actiond.json.installed
cat >/etc/actiond/actiond.json <<JSON
{
  buttons: [{ name: "action", key: "KEY_PROG1",
              feedback: [{ sysfs: "$led", on: ["performed"], patterns: { performed: [200] } }] }],
  assignments: { action: { kind: "org.actiond.vmtest.touch" } },
}
JSON
# perform_blink: restarts the service, performs action (its intent is the touch, granted
# above) and waits for what the service writes to the LED (LED_CAPSL 0 on the device, after
# its 1) or for a new failure to write it in the journal. new_leds prints the LED changes the
# device received since the last perform_blink began.
failures() { journalctl --no-pager -b -u actiond.service -o cat | grep -c "feedback on /sys/class/leds/$led failed"; }
seen=0
new_leds() { grep '^led ' /run/led.log | tail -n +$((seen + 1)); }
perform_blink() {
  before=$(failures)
  seen=$(grep -c '^led ' /run/led.log || true)
  systemctl restart actiond.service || fail "restart failed"
  out=$(actionctl perform action 2>&1) || fail "actionctl perform action: $out"
  i=0
  until new_leds | grep -q ' LED_CAPSL 0$' || [ "$(failures)" -gt "$before" ]; do
    i=$((i + 1)); [ $i -le 300 ] || fail "neither a blink nor a failure 30 s after the perform"; sleep 0.1
  done
  sleep 0.5
}
# What this systemd makes of ProtectKernelTunables=yes here, told by a unit with that setting
# alone writing the LED's brightness (its present value: nothing changes). systemd 252 (Debian
# 12) refuses: its /sys is read-only, and the service needs the drop-in below. systemd 257
# (Debian 13) in this guest leaves /sys writable, even with ReadOnlyPaths=/sys (measured), so
# the service reaches the LED without a drop-in: said, and only the drop-in's case checked.
b=/sys/class/leds/$led/brightness
printf '[Service]\nType=oneshot\nProtectKernelTunables=yes\nExecStart=/bin/sh -c "cat %s >%s"\n' "$b" "$b" \
  >/etc/systemd/system/actiond-vmtest-sysfs.service
systemctl daemon-reload
if systemctl start actiond-vmtest-sysfs.service 2>/dev/null; then
  say "this systemd ($(systemctl --version | head -1)) leaves /sys writable under ProtectKernelTunables=yes (a unit with it alone wrote $b): the LED is not guarded by the sandbox here, the refusal without a drop-in is not checked"
  perform_blink
else
  say "ProtectKernelTunables=yes: /sys read-only (a unit with it alone could not write $b)"
  perform_blink
  [ -z "$(new_leds)" ] || fail "the sandbox let the service write $led without a drop-in: $(new_leds | tr "\n" ";")"
  say "without a drop-in: $(journalctl --no-pager -b -u actiond.service -o cat | grep "feedback on /sys/class/leds/$led failed" | tail -1)"
  # A directory of /sys/class/leds is no help: its entries are symlinks into /sys/devices,
  # which stays read-only.
  printf '[Service]\nReadWritePaths=/sys/class/leds\n' >/etc/systemd/system/actiond.service.d/leds.conf
  systemctl daemon-reload
  n=$(failures)
  perform_blink
  [ -z "$(new_leds)" ] || fail "ReadWritePaths=/sys/class/leds was enough (documented as not)"
  [ "$(failures)" -gt "$n" ] || fail "ReadWritePaths=/sys/class/leds: no failure logged"
  say "ReadWritePaths=/sys/class/leds: still refused (symlinks into read-only /sys/devices)"
fi
# The documented drop-in: the LED's own two files (systemd follows the class symlink).
printf '[Service]\nReadWritePaths=/sys/class/leds/%s/brightness /sys/class/leds/%s/trigger\n' "$led" "$led" \
  >/etc/systemd/system/actiond.service.d/leds.conf
systemctl daemon-reload
trigger_before=$(sed -n 's/.*\[\([^]]*\)\].*/\1/p' "/sys/class/leds/$led/trigger")
perform_blink
new_leds | grep -q ' LED_CAPSL 1$' || fail "the service did not light $led with the drop-in: $(tr "\n" ";" </run/led.log)"
new_leds | grep -q ' LED_CAPSL 0$' || fail "the service did not put $led out: $(tr "\n" ";" </run/led.log)"
values=$(new_leds | cut -d' ' -f4 | tr '\n' ' ')
[ "$values" = "1 0 " ] || fail "the blink reached $led as '$values', expected '1 0 ': $(tr "\n" ";" </run/led.log)"
trigger_after=$(sed -n 's/.*\[\([^]]*\)\].*/\1/p' "/sys/class/leds/$led/trigger")
[ "$trigger_after" = "$trigger_before" ] || fail "trigger $trigger_before became $trigger_after"
say "with ReadWritePaths= of $led's brightness and trigger: the blink reached the device as LED_CAPSL $values(EV_LED), trigger [$trigger_after] back"
[ "$(grep -c '^led ' /run/other.log)" = 0 ] || fail "the unmarked LED changed"
exec 8>&- 9>&-
# Back to the installed configuration, without the LED's drop-in (the LED is gone: a
# ReadWritePaths= that does not exist fails the service's namespace set-up).
cp /run/actiond.json.installed /etc/actiond/actiond.json
rm /etc/systemd/system/actiond.service.d/leds.conf
systemctl daemon-reload
systemctl restart actiond.service || fail "restart with the installed configuration failed"

[ "$(systemctl show -P NRestarts actiond.service)" = 0 ] || fail "actiond.service was restarted by systemd (crash or watchdog)"
# actiond-mqtt.service in its sandbox, against Debian's mosquitto on the loopback (the
# only IP the unit allows), its (empty) password as the credential mqtt-password.
. /etc/actiond-vmtest-broker.sh
vmtest_broker
install -m 0600 /dev/null /etc/actiond/mqtt-password
# The broker by name (from /etc/hosts): resolved off the bridge's loop by glibc's
# getaddrinfo_a, whose thread must be allowed by the unit's system call filter.
grep -q '^hosts:' /etc/nsswitch.conf || echo 'hosts: files' >>/etc/nsswitch.conf
echo '127.0.0.1 broker.vmtest' >>/etc/hosts
printf '{ broker: { host: "broker.vmtest" }, homeAssistant: { nodeId: "vm" } }\n' >/etc/actiond/mqtt.json5
systemctl start actiond-mqtt.service || fail "systemctl start actiond-mqtt.service failed"
disc=$(mosquitto_sub -h 127.0.0.1 -t homeassistant/device/vm/config -C 1 -W 60 2>&1) \
  || fail "no discovery from actiond-mqtt.service: $disc; $(journalctl --no-pager -b -u actiond-mqtt.service -o cat | tail -10)"
echo "$disc" | grep -q '"control_org_actiond_work-timer":{"p":"switch"' || fail "unexpected discovery: $disc"
mpid=$(systemctl show -P MainPID actiond-mqtt.service)
say "actiond-mqtt.service (pid $mpid) published discovery ($(printf %s "$disc" | wc -c) bytes)"
say "bridge process: $(grep -E '^(Uid|Gid|CapEff|NoNewPrivs|Seccomp):' /proc/$mpid/status | tr -s '\t ' ' ' | tr '\n' ';')"
[ "$(stat -c %U /proc/$mpid)" = actiond ] || fail "actiond-mqtt does not run as user actiond"
grep -q '^CapEff:[[:space:]]*0000000000000000' /proc/$mpid/status || fail "actiond-mqtt has capabilities"
grep -q '^Seccomp:[[:space:]]*2' /proc/$mpid/status || fail "actiond-mqtt has no seccomp filter"
[ -e /run/credentials/actiond-mqtt.service/mqtt-password ] || fail "no credential mqtt-password"
journalctl --no-pager -b -u actiond-mqtt.service -o cat | grep -q 'mqtt-resolve-failed' \
  && fail "the bridge could not resolve broker.vmtest in its sandbox"
# The command that changes the Work Timer (one that asks for its current value performs nothing).
if actionctl status 2>/dev/null | grep -q 'Work Timer.*Running'; then cmd=OFF want=Stopped; else cmd=ON want=Running; fi
mosquitto_pub -h 127.0.0.1 -q 1 -t actiond/vm/control/org_actiond_work-timer/set -m $cmd || fail "mosquitto_pub"
i=0
until actionctl status 2>/dev/null | grep -q "Work Timer.*$want"; do
  i=$((i + 1)); [ $i -le 300 ] || fail "the switch command $cmd did not make the Work Timer $want: $(actionctl status 2>&1)"
  sleep 0.1
done
say "switch $cmd over MQTT: $(actionctl status 2>&1 | grep 'Work Timer')"
# A broker at another address (10.9.9.9 on the loopback device, so no network is needed):
# IPAddressDeny=any drops the bridge's traffic to it until a drop-in allows that address,
# exactly as docs/home-assistant.md tells the operator.
systemctl stop actiond-mqtt.service
ip addr add 10.9.9.9/32 dev lo || fail "ip addr add"
printf '{ broker: { host: "10.9.9.9" }, homeAssistant: { nodeId: "vm2" } }\n' >/etc/actiond/mqtt.json5
systemctl start actiond-mqtt.service || fail "systemctl start actiond-mqtt.service (10.9.9.9) failed"
if out=$(mosquitto_sub -h 127.0.0.1 -t homeassistant/device/vm2/config -C 1 -W 5 2>&1); then
  fail "the bridge reached 10.9.9.9 although the unit allows only localhost: $out"
fi
say "broker at 10.9.9.9: nothing got through in 5 s (IPAddressDeny=any, IPAddressAllow=localhost)"
mkdir -p /etc/systemd/system/actiond-mqtt.service.d
printf '[Service]\nIPAddressAllow=10.9.9.9\n' >/etc/systemd/system/actiond-mqtt.service.d/broker.conf
systemctl daemon-reload && systemctl restart actiond-mqtt.service || fail "restart with IPAddressAllow=10.9.9.9 failed"
disc=$(mosquitto_sub -h 127.0.0.1 -t homeassistant/device/vm2/config -C 1 -W 60 2>&1) \
  || fail "no discovery through 10.9.9.9 with the drop-in: $disc; $(journalctl --no-pager -b -u actiond-mqtt.service -o cat | tail -10)"
say "with the drop-in IPAddressAllow=10.9.9.9: discovery arrived ($(printf %s "$disc" | wc -c) bytes)"
systemctl stop actiond-mqtt.service
[ "$(systemctl show -P NRestarts actiond-mqtt.service)" = 0 ] || fail "actiond-mqtt.service was restarted by systemd"
systemctl is-failed --quiet actiond-mqtt.service && fail "actiond-mqtt.service failed on stop"
say "actiond-mqtt.service stopped cleanly: $(systemctl show -P Result actiond-mqtt.service)"
systemctl stop vmtest-mosquitto.service
systemctl stop actiond.service actiond.socket
systemctl is-failed --quiet actiond.service && fail "actiond.service failed on stop"
say "stopped cleanly: $(systemctl show -P Result actiond.service)"
echo "SYSTEMD-PASS"
systemctl poweroff --force --force
TEST

cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
for ko in /modules/*.ko; do /bin/busybox insmod "$ko" || echo "insmod $ko failed"; done
n=/newroot
/bin/busybox mount -t tmpfs -o mode=0755 root "$n"
/bin/busybox mkdir -p $n/usr $n/host $n/proc $n/sys $n/dev $n/run $n/tmp $n/var/lib $n/var/log $n/root $n/etc
/bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,ro host $n/host || { echo "SYSTEMD-FAIL: 9p"; /bin/busybox poweroff -f; }
/bin/busybox mkdir -p $n/.udev-usr
/bin/busybox cp -a /udev-usr/. $n/.udev-usr/
/bin/busybox mount -t overlay overlay -o lowerdir=$n/.udev-usr:$n/host/usr $n/usr \
  || { echo "SYSTEMD-FAIL: overlay of udev over /usr"; /bin/busybox poweroff -f; }
/bin/busybox mount -t tmpfs -o mode=0755 usrlocal $n/usr/local
for l in bin sbin lib lib64; do /bin/busybox ln -s usr/$l $n/$l; done
/bin/busybox cp -a /stage/usr/local/. $n/usr/local/
/bin/busybox cp -a /stage/etc/. $n/etc/
printf '0123456789abcdef0123456789abcdef\n' >$n/etc/machine-id
printf 'root:x:0:0:root:/root:/bin/sh\n' >$n/etc/passwd
printf 'root:x:0:\ninput:x:101:\n' >$n/etc/group
printf 'root:*::0:99999:7:::\n' >$n/etc/shadow
printf 'root:*::\ninput:!::\n' >$n/etc/gshadow
chmod 0640 $n/etc/shadow $n/etc/gshadow
printf 'passwd: files systemd\ngroup: files systemd\nshadow: files\n' >$n/etc/nsswitch.conf
/bin/busybox ln -s /usr/lib/os-release $n/etc/os-release
/bin/busybox umount /proc /sys /dev
exec /bin/busybox switch_root $n /lib/systemd/systemd
INIT
. "$here/boot.sh"
systemd_boot 600 1024 60
echo "test-systemd: passed in $(($(date +%s) - start)) s"
