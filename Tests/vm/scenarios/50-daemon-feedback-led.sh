# SPDX-License-Identifier: Apache-2.0
# Daemon, feedback on the button's own device (issue 17): `led` outputs are EV_LED written to
# the evdev descriptor the daemon holds, and the device receives exactly the patterns, as
# the kernel delivers them to its uinput descriptor (stamped there, CLOCK_MONOTONIC):
# - pressed + held + performed (LED_CAPSL, 5 s threshold): a short press is on at the
#   key-down and off at the release; a hold is on from the key-down to 60 ms after the
#   threshold (the tick's end), then the performed blink (300 ms);
# - held + performed (LED_NUML, 600 ms threshold): the tick's on comes after the deadline
#   (`held` is stamped key-down + threshold), in the turn that announces `held` and starts
#   the hold's command (right after the spawn: before the command ends, which is 1 s after
#   its first write), its off 60 ms after the deadline; then the performed blink;
# - indicator (LED_MISC): follows the store-backed toggle's value from the start and after
#   each hold; the LED was on (set through the evdev node) before the daemon took it, and
#   a stop gives it back on; a stop mid-press gives the pressed LED back off.
# No timing is assumed: kernel stamps and causal order decide; only a pattern's own
# durations are checked from a stamp that comes before the moment (the deadline, the
# command's write 1 s before its end): a stall before a pattern's first write shortens the
# time between two writes, never the time from the moment.
# timeout: 180
. "$VM_LIB"
need_daemon

cat >record.sh <<'SCRIPT'
#!/bin/sh
# The hold's command. Its first act stamps its start in the device's inbox: EV_LED
# LED_SCROLLL VALUE and SYN_REPORT written to the device, two struct input_event (64-bit:
# 16-byte timeval, u16 type, u16 code, s32 value) in one write, a shell builtin's work.
z='\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000'
printf "$z\021\000\002\000\00$ACTIOND_VALUE\000\000\000$z\000\000\000\000\000\000\000\000" >"$2"
echo "ran value=$ACTIOND_VALUE button=$ACTIOND_BUTTON press=$ACTIOND_PRESS_TIME" >>"$1"
# The performed blink comes well after the tick's 60 ms.
sleep 1
SCRIPT
chmod 0755 record.sh

dev_start a --preset gpio-keys --name actiond-vm-button --keys KEY_PROG1,KEY_POWER \
  --leds LED_CAPSL,LED_NUML,LED_MISC,LED_SCROLLL
NODE=$DEV_NODE
mkdir -p controls.d
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "press", key: "KEY_POWER", match: { name: "actiond-vm-button" }, holdThresholdMs: 5000,
      feedback: [{ led: "LED_CAPSL", on: ["pressed", "held", "performed"] }] },
    { name: "action", key: "KEY_PROG1", match: { name: "actiond-vm-button" }, holdThresholdMs: 600,
      feedback: [{ led: "LED_NUML", on: ["held", "performed"] }, { led: "LED_MISC", indicator: true }] },
  ],
  controls: [
    { kind: "org.actiond.vm.record", type: "toggle", displayName: "Recorder",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log", "$NODE"] },
      value: { type: "store", initial: false } },
    { kind: "org.actiond.vm.slow", type: "button", displayName: "Slow",
      intent: { type: "exec", argv: ["/bin/sleep", "1"] } },
  ],
  assignments: { action: { kind: "org.actiond.vm.record" }, press: { kind: "org.actiond.vm.slow" } },
}
CONFIG

step "LED_MISC on before the daemon starts (written through the evdev node)"
actiond-testdev set-led "$NODE" LED_MISC 1 >setled.log 2>&1 || fail "set-led: $(cat setled.log)"
wait_led_count a.log LED_MISC 1
set_at=$(awk '{ split($2, t, "."); sub(/^0+/, "", t[2]); printf "%d%06d\n", t[1], t[2] }' setled.log)
misc_on=$(led_time_us a.log LED_MISC 1)
# The kernel stamps the delivery on the clock the tool prints: after the write began.
expect_between $((misc_on - set_at)) 0 $((CLOCK_SANITY_MS * 1000)) "LED_MISC delivery after set-led (us)"

start_daemon config.json
wait_bound
watch_start
reader_start r "$NODE" --timeout 600s

step "the indicator shows the toggle's value (off) from the start"
wait_led_count a.log LED_MISC 2
expect_led_values a.log LED_MISC "1 0"

step "short press of press: LED_CAPSL on at the key-down, off at the release"
dev_cmd a "press KEY_POWER 100ms"
wait_for_event watch.log released 1
wait_led_count a.log LED_CAPSL 2
expect_event watch.log held 0
down=$(key_time_us r.log KEY_POWER 1 1)
up=$(key_time_us r.log KEY_POWER 0 1)
on=$(led_time_us a.log LED_CAPSL 1 1)
off=$(led_time_us a.log LED_CAPSL 0 1)
step "CAPSL on $(((on - down) / 1000)) ms after the key-down, off $(((off - up) / 1000)) ms after the release"
[ "$on" -ge "$down" ] || fail "LED_CAPSL on ($on) before the key-down ($down)"
[ "$off" -ge "$up" ] || fail "LED_CAPSL off ($off) before the release ($up): not on while down"
expect_led_values a.log LED_CAPSL "1 0"

step "hold of press: on from the key-down to 60 ms after the threshold, then the performed blink"
dev_cmd a "down KEY_POWER"
wait_for_event watch.log held 1 30000
wait_for_event watch.log performed 1 30000
dev_cmd a "up KEY_POWER"
wait_for_event watch.log released-after-hold 1 30000
wait_led_count a.log LED_CAPSL 6
down=$(key_time_us r.log KEY_POWER 1 2)
held=$(event_field watch.log held time 1)
[ "$held" = $((down + 5000000)) ] || fail "held at $held, expected key-down $down + 5000 ms"
on=$(led_time_us a.log LED_CAPSL 1 2)
tick_off=$(led_time_us a.log LED_CAPSL 0 2)
blink_on=$(led_time_us a.log LED_CAPSL 1 3)
blink_off=$(led_time_us a.log LED_CAPSL 0 3)
step "CAPSL on at +$(((on - down) / 1000)) ms, off at held +$(((tick_off - held) / 1000)) ms, blink $(((blink_off - blink_on) / 1000)) ms"
[ "$on" -ge "$down" ] || fail "LED_CAPSL on ($on) before the key-down ($down)"
[ "$tick_off" -ge $((held + 60000)) ] || fail "LED_CAPSL off $(((tick_off - held) / 1000)) ms after held: the tick is 60 ms"
[ "$blink_on" -ge "$tick_off" ] || fail "the performed blink began before the tick ended"
# The blink lasts 300 ms from the perform's end, which comes after the deadline (a duration
# measured between two writes would shrink with a stall before the first).
[ "$blink_off" -ge $((held + 300000)) ] || fail "the performed blink ended $(((blink_off - held) / 1000)) ms after the deadline (300 ms from the perform)"
expect_led_values a.log LED_CAPSL "1 0 1 0 1 0"

# hold_action NTH VALUE: a hold of action (the NTH `held`): the toggle goes to VALUE; checks the
# tick, the blink, the command's write and the indicator.
hold_action() {
  nth=$1 value=$2
  nholds=$(($(count_lines r.log 'EV_KEY KEY_PROG1 1$') + 1))
  dev_cmd a "down KEY_PROG1"
  wait_for_event watch.log held "$nth" 30000
  wait_for_event watch.log performed "$nth" 30000
  dev_cmd a "up KEY_PROG1"
  wait_for_event watch.log released-after-hold "$nth" 30000
  wait_led_count a.log LED_NUML $((nholds * 4))
  wait_for_line a.log "^led [0-9.]+ LED_MISC $value\$" "$WAIT_MS"
  down=$(key_time_us r.log KEY_PROG1 1 "$nholds")
  held=$(event_field watch.log held time "$nth")
  [ "$held" = $((down + 600000)) ] || fail "held #$nth at $held, expected key-down $down + 600 ms"
  tick_on=$(led_time_us a.log LED_NUML 1 $((nholds * 2 - 1)))
  tick_off=$(led_time_us a.log LED_NUML 0 $((nholds * 2 - 1)))
  blink_on=$(led_time_us a.log LED_NUML 1 $((nholds * 2)))
  blink_off=$(led_time_us a.log LED_NUML 0 $((nholds * 2)))
  command=$(led_time_us a.log LED_SCROLLL "$value" 1)
  [ -n "$command" ] || fail "the hold's command wrote no LED_SCROLLL $value"
  step "tick on $((tick_on - held)) us after the deadline (command's write $((command - held)) us), off +$(((tick_off - held) / 1000)) ms; blink $(((blink_off - blink_on) / 1000)) ms"
  [ "$tick_on" -ge "$held" ] || fail "the tick ($tick_on) came before the threshold deadline ($held)"
  # Written right after the command's spawn, in the same turn: before the command ends
  # (it sleeps 1 s after its write), whichever of the two the guest ran first.
  [ "$tick_on" -lt $((command + 1000000)) ] || fail "the tick ($tick_on) came after the hold's command ended (it wrote at $command, then slept 1 s)"
  [ "$tick_off" -ge $((held + 60000)) ] || fail "tick off $(((tick_off - held) / 1000)) ms after the deadline (60 ms)"
  [ "$blink_on" -ge "$command" ] || fail "the performed blink ($blink_on) began before the command ran ($command)"
  # The command sleeps 1 s after its write: the blink cannot end before 1.3 s after it.
  [ "$blink_off" -ge $((command + 1300000)) ] || fail "the performed blink ended $(((blink_off - command) / 1000)) ms after the command's start"
  # LED_MISC: 1 before the daemon, 0 at its start, then 1 and 0 by the holds.
  indicator=$(led_time_us a.log LED_MISC "$value" 2)
  [ "$indicator" -ge "$command" ] || fail "the indicator changed ($indicator) before the command ran ($command)"
  expect_count ran.log "ran value=$value button=action press=$down\$" 1
}

step "hold of action: tick, blink, indicator on"
hold_action 2 1
expect_led_values a.log LED_NUML "1 0 1 0"
expect_led_values a.log LED_MISC "1 0 1"

step "second hold of action: tick, blink, indicator off"
hold_action 3 0
expect_led_values a.log LED_NUML "1 0 1 0 1 0 1 0"
expect_led_values a.log LED_MISC "1 0 1 0"

step "idle: nothing is written"
settle_ms 1000
expect_led_values a.log LED_CAPSL "1 0 1 0 1 0"
expect_led_values a.log LED_NUML "1 0 1 0 1 0 1 0"
expect_led_values a.log LED_MISC "1 0 1 0"

step "stop mid-press of press: CAPSL back off, MISC back on (as before the daemon)"
dev_cmd a "down KEY_POWER"
wait_for_event watch.log pressed 5
wait_led_count a.log LED_CAPSL 7
reader_stop r
stop_daemon
wait_led_count a.log LED_CAPSL 8
wait_led_count a.log LED_MISC 5
dev_cmd a "up KEY_POWER"
settle_ms 500
expect_led_values a.log LED_CAPSL "1 0 1 0 1 0 1 0"
expect_led_values a.log LED_NUML "1 0 1 0 1 0 1 0"
expect_led_values a.log LED_MISC "1 0 1 0 1"
expect_led_values a.log LED_SCROLLL "1 0"
expect_no_line "$DAEMON_LOG" 'feedback-failed'
dev_stop a
