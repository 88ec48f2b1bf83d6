# SPDX-License-Identifier: Apache-2.0
# Daemon, beeper feedback (issue 17): `sound` outputs are EV_SND written to an input device
# that has it, and the device receives exactly the patterns, as the kernel delivers them to
# its uinput descriptor (stamped there, CLOCK_MONOTONIC):
# - on the button's own device (SND_TONE, hz 1500): a hold's tick is the tone from after the
#   threshold deadline (`held` = key-down + threshold), in the turn that starts the hold's
#   command (before the command ends, 1 s after its first write), silenced 60 ms after the deadline; then the performed tone (300 ms); a failed
#   intent is three 80 ms tones of the default 1000 Hz; a stop mid-press (`pressed`, 700 Hz)
#   silences it;
# - on another input device named by its name (SND_BELL on "actiond-vm-speaker"): the tick
#   rings there (1, then 0); a device that has no SND_TONE is refused at the start, logged
#   once, never written; the device destroyed mid-run is logged once over two holds, both
#   still perform, and the device created again rings at the next hold ("works again").
# No timing is assumed: kernel stamps and causal order decide; only a pattern's own
# durations are checked from a stamp that comes before the moment (the deadline, the
# command's write 1 s before its end): a stall before a pattern's first write shortens the
# time between two writes, never the time from the moment.
# timeout: 180
. "$VM_LIB"
need_daemon

cat >record.sh <<'SCRIPT'
#!/bin/sh
# The hold's command stamps its start in the device's inbox: EV_LED LED_SCROLLL 1, then 0
# (two struct input_event each: 16-byte timeval, u16 type, u16 code, s32 value).
z='\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000'
printf "$z\021\000\002\000\001\000\000\000$z\000\000\000\000\000\000\000\000" >"$2"
printf "$z\021\000\002\000\000\000\000\000$z\000\000\000\000\000\000\000\000" >"$2"
echo "ran button=$ACTIOND_BUTTON press=$ACTIOND_PRESS_TIME" >>"$1"
sleep 1
SCRIPT
chmod 0755 record.sh

dev_start a --preset gpio-keys --name actiond-vm-beeper --keys KEY_PROG1,KEY_POWER,KEY_PROG2 \
  --snd SND_TONE,SND_BELL --leds LED_SCROLLL
NODE=$DEV_NODE
dev_start b --preset gpio-keys --name actiond-vm-speaker --keys KEY_F1 --snd SND_BELL
SPEAKER=$DEV_NODE
mkdir -p controls.d
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "action", key: "KEY_PROG1", match: { name: "actiond-vm-beeper" }, holdThresholdMs: 600,
      feedback: [{ sound: "SND_TONE", hz: 1500 },
                 { sound: "SND_BELL", device: "actiond-vm-speaker", on: ["held"] }] },
    { name: "fail", key: "KEY_POWER", match: { name: "actiond-vm-beeper" }, holdThresholdMs: 600,
      feedback: [{ sound: "SND_TONE", on: ["failed"] },
                 { sound: "SND_TONE", device: "actiond-vm-speaker", on: ["held"] }] },
    { name: "press", key: "KEY_PROG2", match: { name: "actiond-vm-beeper" }, holdThresholdMs: 5000,
      feedback: [{ sound: "SND_TONE", hz: 700, on: ["pressed"] }] },
  ],
  controls: [
    { kind: "org.actiond.vm.record", type: "button", displayName: "Recorder",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log", "$NODE"] } },
    { kind: "org.actiond.vm.false", type: "button", displayName: "Fails",
      intent: { type: "exec", argv: ["/bin/false"] } },
  ],
  assignments: { action: { kind: "org.actiond.vm.record" }, fail: { kind: "org.actiond.vm.false" },
                 press: { kind: "org.actiond.vm.false" } },
}
CONFIG

start_daemon config.json
wait_bound
watch_start
reader_start r "$NODE" --timeout 600s

step "the speaker without SND_TONE is refused at the start, logged once, never written"
wait_for_line "$DAEMON_LOG" 'feedback-failed' "$WAIT_MS"
expect_count "$DAEMON_LOG" "button fail: feedback on SND_TONE of $SPEAKER \\(actiond-vm-speaker\\) failed: the device has no EV_SND SND_TONE.* event=feedback-failed" 1
expect_count "$DAEMON_LOG" 'feedback-failed' 1

# hold_action: a hold of action: its tick and the performed tone on the button's own device,
# the command's mark there too (lib.sh's feedback_hold).
hold_action() { feedback_hold a.log snd SND_TONE 1500 tone a.log; }

step "hold of action: the tick and the performed tone on the button's device, the bell on the speaker"
hold_action
expect_inbox_values a.log snd SND_TONE "1500 0 1500 0"
wait_inbox_count b.log snd SND_BELL 2
expect_inbox_values b.log snd SND_BELL "1 0"
held=$(event_field watch.log held time 1)
bell_on=$(inbox_time_us b.log snd SND_BELL 1 1)
bell_off=$(inbox_time_us b.log snd SND_BELL 0 1)
step "bell $((bell_on - held)) us after the deadline, silenced +$(((bell_off - held) / 1000)) ms"
[ "$bell_on" -ge "$held" ] || fail "the bell ($bell_on) rang before the deadline ($held)"
[ "$bell_off" -ge $((held + 60000)) ] || fail "the bell was silenced $(((bell_off - held) / 1000)) ms after the deadline"

step "hold of fail: the intent fails, three 80 ms tones of 1000 Hz"
dev_cmd a "down KEY_POWER"
wait_for_event watch.log failed 1 30000
dev_cmd a "up KEY_POWER"
wait_for_event watch.log released-after-hold 2 30000
expect_event watch.log failed 1
wait_inbox_count a.log snd SND_TONE 10
expect_inbox_values a.log snd SND_TONE "1500 0 1500 0 1000 0 1000 0 1000 0"
# The fail button's hold is the second `held` (the first was action's).
fail_held=$(event_field watch.log held time 2)
for i in 1 2 3; do
  on=$(inbox_time_us a.log snd SND_TONE 1000 "$i")
  off=$(inbox_time_us a.log snd SND_TONE 0 $((i + 2)))
  # Tone i ends 80 ms after it began, i - 1 tones and pauses of 80 ms after the failure,
  # which came after the hold's deadline.
  [ "$off" -ge $((fail_held + (2 * i - 1) * 80000)) ] || fail "failed tone $i ended $(((off - fail_held) / 1000)) ms after the deadline (>= $(((2 * i - 1) * 80)))"
done
expect_count "$DAEMON_LOG" 'feedback-failed' 1

step "the speaker destroyed: logged once over two holds, both perform"
dev_cmd b destroy
hold_action
hold_action
expect_count "$DAEMON_LOG" 'feedback-failed' 2
expect_count "$DAEMON_LOG" "button action: feedback on SND_BELL of $SPEAKER \\(actiond-vm-speaker\\) failed: .* event=feedback-failed" 1
expect_count ran.log 'ran button=action' 3

step "the speaker created again: the next hold rings it, logged as working again"
dev_cmd b recreate
udevadm settle --timeout=10
hold_action
wait_inbox_count b.log snd SND_BELL 4
expect_inbox_values b.log snd SND_BELL "1 0 1 0"
expect_count "$DAEMON_LOG" 'feedback-recovered' 1
expect_count "$DAEMON_LOG" 'feedback-failed' 2

step "idle: nothing is written"
settle_ms 1000
expect_inbox_values a.log snd SND_TONE "1500 0 1500 0 1000 0 1000 0 1000 0 1500 0 1500 0 1500 0 1500 0 1500 0 1500 0"

step "stop mid-press of press: the 700 Hz tone is silenced"
dev_cmd a "down KEY_PROG2"
wait_for_line a.log '^snd [0-9.]+ SND_TONE 700$' "$WAIT_MS"
reader_stop r
stop_daemon
wait_for_line a.log '^snd [0-9.]+ SND_TONE 0$' "$WAIT_MS"
dev_cmd a "up KEY_PROG2"
settle_ms 500
expect_inbox_values a.log snd SND_TONE "1500 0 1500 0 1000 0 1000 0 1000 0 1500 0 1500 0 1500 0 1500 0 1500 0 1500 0 700 0"
expect_inbox_values a.log snd SND_BELL ""
expect_count "$DAEMON_LOG" 'feedback-failed' 2
dev_stop b
dev_stop a
