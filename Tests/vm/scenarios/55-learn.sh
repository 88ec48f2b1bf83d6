# SPDX-License-Identifier: Apache-2.0
# actiond learn on real devices: it takes the next key-down and nothing else (not the
# autorepeat and release of a key held on device A when it started, only the press on B),
# closes everything and exits; the button snippet it printed, in a configuration, makes
# actiond bind that button (`pressed`); its udev line, installed as a rule and triggered,
# tags exactly that device `actiond` (and `uaccess` with --uaccess; the AT keyboard with
# the same 0001:0001 stays untagged); a QEMU USB keyboard is matched by its by-id link,
# in the configuration and in the rule; --configuration is a valid whole file; as a user
# who cannot read /dev/input it says why and exits 3, and the daemon says what to run;
# --timeout exits 5.
# timeout: 180
. "$VM_LIB"
need_daemon
need_bin actiond-testdev su

# learn_start ID ARGS...: `actiond learn ARGS` in the background, standard output in ID-out.log,
# standard error in ID-err.log; returns once it reads devices and waits for the key.
learn_start() {
  _id=$1
  shift
  spawn "$WORK/$_id-err.log" sh -c 'id=$1; shift; exec actiond learn "$@" >"$id-out.log"' learn "$_id" "$@"
  LEARN_PID=$SPAWN_PID
  wait_for_line "$WORK/$_id-err.log" '^actiond learn: ' "$WAIT_MS"
  expect_line "$WORK/$_id-err.log" '^actiond learn: press the button'
}
# learn_wait ID: learn must exit with status 0.
learn_wait() {
  wait "$LEARN_PID" || fail "actiond learn exited with $? ($(cat "$WORK/$1-err.log"))"
}

dev_start a --preset usb-keyboard --name actiond-learn-a
node_a=$DEV_NODE
dev_start b --preset gpio-keys --name actiond-learn-b --keys KEY_PROG1,KEY_PROG2
node_b=$DEV_NODE
udevadm settle --timeout=5

step "the next key-down and nothing else"
dev_cmd a "down KEY_A"
learn_start json --json --timeout 60
# A's held key: its autorepeat (EV_REP) and its release are not presses.
dev_cmd a "repeat KEY_A 3 every 30ms" "up KEY_A"
dev_cmd b "press KEY_PROG2 50ms"
learn_wait json
dev_cmd a "press KEY_B 50ms"
expect_count json-out.log . 1
expect_line json-out.log '"key":\{"name":"KEY_PROG2","code":149\}'
expect_line json-out.log "\"devnode\":\"$node_b\""
expect_line json-out.log '"name":"actiond-learn-b"'
expect_line json-out.log '"bus":"host"'
expect_line json-out.log '"byId":\[\],"byPath":\[\]'
expect_no_line json-out.log 'KEY_A|KEY_B'
# The JSON's button is configuration (the daemon's own loader says so).
button=$(sed 's/.*"button":\({[^}]*}}\).*/\1/' json-out.log)
echo "{ buttons: [ $button ] }" >button.json
actiond --check-config button.json >check.log 2>&1 || fail "the JSON button is not valid: $(cat check.log)"

step "the report, its snippet in a configuration, its udev line as a rule (--uaccess)"
learn_start text --uaccess --timeout 60
dev_cmd b "press KEY_PROG2 50ms"
learn_wait text
expect_line text-out.log "^device   actiond-learn-b \\($node_b\\)\$"
expect_line text-out.log '^bus      host \(0x19\), id 0001:0001$'
expect_line text-out.log '^key      KEY_PROG2 \(code 149\)$'
snippet=$(awk '/^configuration / { getline; sub(/^  /, ""); print }' text-out.log)
rule=$(awk '/^udev rule / { getline; sub(/^  /, ""); print }' text-out.log)
[ "$snippet" = '{ name: "action", key: "KEY_PROG2", match: { name: "actiond-learn-b", id: "0001:0001" } }' ] ||
  fail "snippet: $snippet"
[ "$rule" = 'SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}=="actiond-learn-b", ATTRS{id/vendor}=="0001", ATTRS{id/product}=="0001", ENV{ACTIOND_BUTTON}="action", TAG+="actiond", TAG+="uaccess"' ] ||
  fail "rule: $rule"

cat >config.json <<CONFIG
{ socket: { path: "$SOCK" }, stateDirectory: "$STATE", controlsDirectory: "$WORK/controls.d",
  buttons: [ $snippet ],
  controls: [ { kind: "org.actiond.vm.timer", type: "toggle", displayName: "VM Timer",
      actionHint: { on: "Stop", off: "Start" }, intent: { type: "state" }, value: { type: "store", initial: false } } ],
  assignments: { action: { kind: "org.actiond.vm.timer" } } }
CONFIG
start_daemon config.json
wait_bound
ctl devices >devices.log
expect_line devices.log "\"devnode\":\"$node_b\""
watch_start
dev_cmd a "press KEY_PROG2 50ms"
dev_cmd b "press KEY_PROG2 50ms"
wait_for_event watch.log released 1
expect_event watch.log pressed 1
stop_daemon

echo "$rule" >/etc/udev/rules.d/69-actiond-local.rules
udevadm control --reload
udevadm test "/sys/class/input/${node_b#/dev/input/}" >udev-test.log 2>&1 || true
expect_line udev-test.log '69-actiond-local.rules'
expect_no_line udev-test.log '69-actiond-local.rules.*([Ii]nvalid|[Ee]rror)'
# udev 252 prints the properties flush left, 257 indented under "Properties:".
expect_line udev-test.log '^ *CURRENT_TAGS=.*:actiond:'
expect_line udev-test.log '^ *CURRENT_TAGS=.*:uaccess:'
udevadm trigger --subsystem-match=input --action=change
udevadm settle --timeout=10
SYSTEMD_PAGER=cat udevadm info "$node_b" >udev-b.log
expect_line udev-b.log '^E: ACTIOND_BUTTON=action$'
expect_line udev-b.log '^E: CURRENT_TAGS=.*:actiond:'
expect_line udev-b.log '^E: CURRENT_TAGS=.*:uaccess:'
SYSTEMD_PAGER=cat udevadm info "$node_a" >udev-a.log
expect_no_line udev-a.log ':actiond:|:uaccess:'
at=$(actiond-testdev list | awk '/name="AT Translated Set 2 keyboard"/ { print $1 }')
[ -n "$at" ] || fail "no AT keyboard in this VM"
SYSTEMD_PAGER=cat udevadm info "$at" >udev-at.log
expect_no_line udev-at.log ':actiond:|:uaccess:'

step "a device plugged in while learn waits"
learn_start plug --json --timeout 60
dev_start c --preset gpio-keys --name actiond-learn-c
node_c=$DEV_NODE
# Learn reads a device from its udev `add` on; a key pressed before that is not seen.
wait_for_line plug-err.log "^actiond learn: also reading $node_c \\(actiond-learn-c\\)\$" "$WAIT_MS"
dev_cmd c "press KEY_PROG1 50ms"
learn_wait plug
expect_line plug-out.log "\"devnode\":\"$node_c\""
expect_line plug-out.log '"key":\{"name":"KEY_PROG1","code":148\}'
dev_stop c

step "a USB keyboard: by-id in the configuration and in the rule; --configuration"
host device_add usb-kbd,bus=xhci.0,id=kbd1
deadline=$(($(now_ms) + 15000))
until ls /dev/input/by-id/*QEMU_USB_Keyboard*event-kbd >/dev/null 2>&1; do
  [ "$(now_ms)" -lt "$deadline" ] || fail "no by-id link for the USB keyboard"
  usleep 50000
done
udevadm settle --timeout=10
learn_start usb --configuration --name kbd --timeout 60
host press volumeup 50 >/dev/null
learn_wait usb
expect_line usb-err.log '^key      KEY_VOLUMEUP \(code 115\)$'
expect_line usb-err.log '^by-id    /dev/input/by-id/.*QEMU_USB_Keyboard.*-event-kbd$'
expect_line usb-err.log 'match: \{ link: "/dev/input/by-id/.*QEMU_USB_Keyboard.*-event-kbd" \}'
expect_line usb-err.log 'SYMLINK=="input/by-id/.*QEMU_USB_Keyboard.*-event-kbd", ENV\{ACTIOND_BUTTON\}="kbd", TAG\+="actiond"$'
actiond --check-config usb-out.log >check-usb.log 2>&1 || fail "--configuration is not valid: $(cat check-usb.log)"
expect_line check-usb.log 'OK \(1 button\(s\), 1 control\(s\), 1 assignment\(s\)\)'
usb_rule=$(awk '/^udev rule / { getline; sub(/^  /, ""); print }' usb-err.log)
echo "$usb_rule" >/etc/udev/rules.d/69-actiond-local.rules
udevadm control --reload
udevadm trigger --subsystem-match=input --action=change
udevadm settle --timeout=10
kbd=$(actiond-testdev list | awk '/name="QEMU QEMU USB Keyboard"/ { print $1; exit }')
SYSTEMD_PAGER=cat udevadm info "$kbd" >udev-kbd.log
expect_line udev-kbd.log '^E: ACTIOND_BUTTON=kbd$'
expect_line udev-kbd.log '^E: CURRENT_TAGS=.*:actiond:'
expect_no_line udev-kbd.log '^E: CURRENT_TAGS=.*:uaccess:'
SYSTEMD_PAGER=cat udevadm info "$node_b" >udev-b2.log
expect_no_line udev-b2.log '^E: CURRENT_TAGS=.*:actiond:'
rm -f /etc/udev/rules.d/69-actiond-local.rules
udevadm control --reload
udevadm trigger --subsystem-match=input --action=change
host device_del kbd1
udevadm settle --timeout=10

step "--timeout: nobody presses"
actiond learn --timeout 1 >timeout-out.log 2>timeout-err.log && fail "learn without a key-down exited 0"
rc=$?
[ "$rc" = 5 ] || fail "learn --timeout exited $rc, expected 5 ($(cat timeout-err.log))"
expect_line timeout-err.log '^actiond learn: no key went down within'
expect_count timeout-out.log . 0

step "a user who cannot read /dev/input"
su -s /bin/sh tester -c "actiond learn --timeout 10" >denied-out.log 2>denied-err.log && fail "learn as tester exited 0"
rc=$?
[ "$rc" = 3 ] || fail "learn as tester exited $rc, expected 3 ($(cat denied-err.log))"
expect_line denied-err.log '^actiond learn: no input device is readable by tester: [0-9]+ of [0-9]+ input devices \(/dev/input/event\*\) belong to group input \(mode [0-9a-z]+\) and tester is not in it\.'
expect_line denied-err.log 'Run `sudo actiond learn` once'
expect_line denied-err.log 'sudo usermod -aG input tester'
expect_count denied-out.log . 0

# The daemon, as that user, with a button nothing matches, says what to run.
mkdir -m 0777 /tmp/learn-tester
cat >/tmp/learn-tester/config.json <<CONFIG
{ socket: { path: "/tmp/learn-tester/actiond.sock" }, stateDirectory: "/tmp/learn-tester/state",
  controlsDirectory: "/tmp/learn-tester/controls.d", buttons: [ { name: "action", key: "KEY_PROG1" } ] }
CONFIG
spawn tester-daemon.log su -s /bin/sh tester -c "exec actiond --config /tmp/learn-tester/config.json"
tester_pid=$SPAWN_PID
wait_for_line tester-daemon.log 'event=started' "$WAIT_MS"
expect_line tester-daemon.log 'button action: no device with KEY_PROG1 matches \(tag=actiond\) yet, it binds when one appears; [0-9]+ of [0-9]+ input devices \(/dev/input/event\*\) belong to group input \(mode [0-9a-z]+\) and tester is not in it: run `sudo actiond learn --uaccess` and press the button'
kill -TERM "$tester_pid"
wait "$tester_pid" || true
rm -rf /tmp/learn-tester

dev_stop a
dev_stop b
