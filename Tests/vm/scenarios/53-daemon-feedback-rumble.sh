# SPDX-License-Identifier: Apache-2.0
# Daemon, rumble feedback (issue 17): a `rumble` output uploads one FF_RUMBLE effect
# (EVIOCSFF) when its device is bound, plays it with EV_FF at the moment and stops it when the
# pattern ends, and removes it (EVIOCRMFF) when the daemon stops. The uinput devices answer the
# kernel's upload and erase requests on their uinput descriptor and print them, and every play
# and stop as the kernel delivers it (stamped there, CLOCK_MONOTONIC):
# - on the button's own device (strength 50): uploaded once at the binding (both magnitudes
#   32767, length 300 ms: the longest on-step of its patterns), never again over two holds; a
#   hold's tick plays from after the threshold deadline, in the turn that starts the hold's
#   command (before the command ends, 1 s after its first write), stops 60 ms after the deadline; then the performed rumble (300 ms);
# - on another device named by its path (held only): uploaded at the start (65535, 60 ms),
#   the tick plays there; destroyed mid-run it is logged once over two holds, both perform;
# - a button whose device has no FF_RUMBLE: logged once when it is bound, never uploaded or
#   written, and its holds perform;
# - a stop mid-press (`pressed`, played until stopped: length 0) stops the effect, and every
#   effect is removed from the device.
# timeout: 180
. "$VM_LIB"
need_daemon

cat >record.sh <<'SCRIPT'
#!/bin/sh
# The hold's command stamps its start in the stamp device's inbox: EV_LED LED_SCROLLL 1, then 0.
z='\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000'
printf "$z\021\000\002\000\001\000\000\000$z\000\000\000\000\000\000\000\000" >"$2"
printf "$z\021\000\002\000\000\000\000\000$z\000\000\000\000\000\000\000\000" >"$2"
echo "ran button=$ACTIOND_BUTTON press=$ACTIOND_PRESS_TIME" >>"$1"
sleep 1
SCRIPT
chmod 0755 record.sh

dev_start a --preset gpio-keys --name actiond-vm-pad --keys KEY_PROG1,KEY_POWER --ff
NODE=$DEV_NODE
dev_start b --preset gpio-keys --name actiond-vm-stamp --keys KEY_F2 --leds LED_SCROLLL
STAMP=$DEV_NODE
dev_start c --preset gpio-keys --name actiond-vm-motor --keys KEY_F3 --ff
MOTOR=$DEV_NODE
dev_start d --preset gpio-keys --name actiond-vm-noff --keys KEY_PROG2
mkdir -p controls.d
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "action", key: "KEY_PROG1", match: { name: "actiond-vm-pad" }, holdThresholdMs: 600,
      feedback: [{ rumble: "FF_RUMBLE", strength: 50 },
                 { rumble: "FF_RUMBLE", device: "$MOTOR", on: ["held"] }] },
    { name: "press", key: "KEY_POWER", match: { name: "actiond-vm-pad" }, holdThresholdMs: 5000,
      feedback: [{ rumble: "FF_RUMBLE", on: ["pressed"] }] },
    { name: "plain", key: "KEY_PROG2", match: { name: "actiond-vm-noff" }, holdThresholdMs: 600,
      feedback: [{ rumble: "FF_RUMBLE" }] },
  ],
  controls: [
    { kind: "org.actiond.vm.record", type: "button", displayName: "Recorder",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log", "$STAMP"] } },
    { kind: "org.actiond.vm.true", type: "button", displayName: "Works",
      intent: { type: "exec", argv: ["/bin/true"] } },
  ],
  assignments: { action: { kind: "org.actiond.vm.record" }, press: { kind: "org.actiond.vm.true" },
                 plain: { kind: "org.actiond.vm.true" } },
}
CONFIG

start_daemon config.json
wait_bound
watch_start
reader_start r "$NODE" --timeout 600s

step "the effects are uploaded once each at the binding; the device without FF_RUMBLE is logged once"
wait_count a.log '^ff-upload ' 2 "$WAIT_MS"
wait_count c.log '^ff-upload ' 1 "$WAIT_MS"
expect_count a.log '^ff-upload [0-9.]+ effect=[0-9]+ FF_RUMBLE strong=32767 weak=32767 length=300$' 1
expect_count a.log '^ff-upload [0-9.]+ effect=[0-9]+ FF_RUMBLE strong=65535 weak=65535 length=0$' 1
expect_count c.log '^ff-upload [0-9.]+ effect=[0-9]+ FF_RUMBLE strong=65535 weak=65535 length=60$' 1
TICK=$(awk '$1 == "ff-upload" && $7 == "length=300" { print $3 }' a.log)
PRESSED=$(awk '$1 == "ff-upload" && $7 == "length=0" { print $3 }' a.log)
MOTOR_FX=$(awk '$1 == "ff-upload" { print $3 }' c.log)
wait_for_line "$DAEMON_LOG" 'feedback-failed' "$WAIT_MS"
expect_count "$DAEMON_LOG" "button plain: feedback on FF_RUMBLE of button plain's device failed: the device has no EV_FF FF_RUMBLE.* event=feedback-failed" 1
expect_count "$DAEMON_LOG" 'feedback-failed' 1

# hold_action: a hold of action: the tick and the performed rumble on the button's device, the
# command's mark on device b (lib.sh's feedback_hold).
hold_action() { feedback_hold a.log ff "$TICK" 1 rumble b.log; }

step "two holds of action: tick and performed rumble, the tick on the motor; no new upload"
hold_action
hold_action
expect_inbox_values a.log ff "$TICK" "1 0 1 0 1 0 1 0"
wait_inbox_count c.log ff "$MOTOR_FX" 4
expect_inbox_values c.log ff "$MOTOR_FX" "1 0 1 0"
held=$(event_field watch.log held time 1)
motor_on=$(inbox_time_us c.log ff "$MOTOR_FX" 1 1)
[ "$motor_on" -ge "$held" ] || fail "the motor played ($motor_on) before the deadline ($held)"
expect_count a.log '^ff-upload ' 2
expect_count c.log '^ff-upload ' 1

step "a hold of plain (no FF_RUMBLE) performs, nothing more is logged"
dev_cmd d "press KEY_PROG2 900ms"
wait_for_event watch.log performed 3 30000
expect_count "$DAEMON_LOG" 'feedback-failed' 1

step "the motor destroyed: logged once over two holds, both perform"
dev_cmd c destroy
hold_action
hold_action
expect_count "$DAEMON_LOG" 'feedback-failed' 2
expect_count "$DAEMON_LOG" "button action: feedback on FF_RUMBLE of $MOTOR failed: .* event=feedback-failed" 1
expect_count ran.log 'ran button=action' 4

step "stop mid-press of press: the effect stops, every effect is removed"
dev_cmd a "down KEY_POWER"
wait_for_line a.log "^ff [0-9.]+ $PRESSED 1\$" "$WAIT_MS"
reader_stop r
stop_daemon
wait_count a.log '^ff-erase ' 2 "$WAIT_MS"
dev_cmd a "up KEY_POWER"
settle_ms 500
grep -E '^(ff|ff-upload|ff-erase) ' a.log >a-ff.log
step "the pad's force feedback: $(tr '\n' ';' <a-ff.log)"
# The stop: the daemon stops the pressed effect (0), then removes both; the kernel stops each
# effect it removes (a second 0) before it asks the device to erase it.
expect_inbox_values a.log ff "$PRESSED" "1 0 0"
expect_inbox_values a.log ff "$TICK" "1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 0"
expect_count a.log "^ff-erase [0-9.]+ $TICK\$" 1
expect_count a.log "^ff-erase [0-9.]+ $PRESSED\$" 1
expect_count a.log '^ff-upload ' 2
expect_count "$DAEMON_LOG" 'feedback-failed' 2
dev_stop d
dev_stop c
dev_stop b
dev_stop a
