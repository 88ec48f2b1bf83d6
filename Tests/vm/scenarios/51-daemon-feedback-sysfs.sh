# SPDX-License-Identifier: Apache-2.0
# Daemon, feedback on an LED class device (issue 17): the kernel's own `inputN::capslock`
# (input-leds, for a device with EV_LED LED_CAPSL), driven through sysfs, reaches the
# device as EV_LED (read from its uinput descriptor): a hold shows pressed (on from the
# key-down), the tick's end 60 ms after the threshold and the performed blink. While the
# daemon shows something the LED's trigger is `none`; at rest and after a stop mid-press it
# is the trigger it had before (a non-default one, kbd-numlock), brightness as before.
# Outputs that cannot be written, an LED name that does not exist and the LED of a device
# destroyed mid-run, are each logged once (`feedback-failed`), however many presses follow,
# and neither disturbs the press or the intent. No timing is assumed (kernel stamps); the
# 5 s threshold keeps short presses and the press the daemon is stopped in short.
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

# input_number ID: N of the device's /sys/devices/virtual/input/inputN.
input_number() {
  awk '$1 == "created" { n = $3; sub(/.*\/input/, "", n) } END { print n }' "$WORK/$1.log"
}

dev_start a --preset gpio-keys --name actiond-vm-button --keys KEY_PROG1 --leds LED_CAPSL,LED_SCROLLL
NODE=$DEV_NODE
dev_start b --preset gpio-keys --name actiond-vm-leds --keys KEY_POWER --leds LED_CAPSL
LED=input$(input_number a)::capslock
GONE=input$(input_number b)::capslock
wait_for_file "/sys/class/leds/$LED/trigger" "$WAIT_MS"
wait_for_file "/sys/class/leds/$GONE/trigger" "$WAIT_MS"
step "LEDs: $LED (the button's device), $GONE (destroyed mid-run), input999::capslock (none)"
[ ! -e /sys/class/leds/input999::capslock ] || skip "input999::capslock exists"

mkdir -p controls.d
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "action", key: "KEY_PROG1", match: { name: "actiond-vm-button" }, holdThresholdMs: 5000,
      feedback: [
        { sysfs: "$LED", on: ["pressed", "held", "performed"] },
        { sysfs: "/sys/class/leds/$GONE", on: ["pressed", "held"] },
        { sysfs: "input999::capslock", on: ["pressed", "performed"] },
      ] },
  ],
  controls: [
    { kind: "org.actiond.vm.record", type: "toggle", displayName: "Recorder",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log", "$NODE"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.vm.record" } },
}
CONFIG

step "before the daemon: $LED has trigger kbd-numlock (not its default), brightness 0"
[ "$(led_trigger "$LED")" = kbd-capslock ] || fail "$LED's default trigger is $(led_trigger "$LED"), not kbd-capslock"
echo kbd-numlock >"/sys/class/leds/$LED/trigger"
[ "$(led_trigger "$LED")" = kbd-numlock ] || fail "cannot set $LED's trigger: $(led_trigger "$LED")"
[ "$(cat "/sys/class/leds/$LED/brightness")" = 0 ] || fail "$LED is lit before the daemon starts"

start_daemon config.json
wait_bound
watch_start
reader_start r "$NODE" --timeout 600s

# hold NTH VALUE GONE_VALUES: a hold (the NTH) switching the toggle to VALUE; checks the
# pattern on $LED and that the press and intent went on.
hold() {
  dev_cmd a "down KEY_PROG1"
  wait_for_event watch.log pressed "$1" 30000
  # The pressed pattern lasts until 60 ms after the threshold: the LED is taken.
  wait_led_count a.log LED_CAPSL $(($1 * 4 - 3))
  [ "$(led_trigger "$LED")" = none ] || fail "$LED's trigger is $(led_trigger "$LED") while the daemon shows on it"
  wait_for_event watch.log held "$1" 30000
  wait_for_event watch.log performed "$1" 30000
  dev_cmd a "up KEY_PROG1"
  wait_for_event watch.log released-after-hold "$1" 30000
  wait_led_count a.log LED_CAPSL $(($1 * 4))
  down=$(key_time_us r.log KEY_PROG1 1 "$1")
  held=$(event_field watch.log held time "$1")
  [ "$held" = $((down + 5000000)) ] || fail "held #$1 at $held, expected key-down $down + 5000 ms"
  on=$(led_time_us a.log LED_CAPSL 1 $(($1 * 2 - 1)))
  tick_off=$(led_time_us a.log LED_CAPSL 0 $(($1 * 2 - 1)))
  blink_on=$(led_time_us a.log LED_CAPSL 1 $(($1 * 2)))
  blink_off=$(led_time_us a.log LED_CAPSL 0 $(($1 * 2)))
  step "$LED on at key-down +$(((on - down) / 1000)) ms, off at held +$(((tick_off - held) / 1000)) ms, blink $(((blink_off - blink_on) / 1000)) ms (seen)"
  [ "$on" -ge "$down" ] || fail "$LED on ($on) before the key-down ($down)"
  [ "$tick_off" -ge $((held + 60000)) ] || fail "$LED off $(((tick_off - held) / 1000)) ms after held: the tick is 60 ms"
  command=$(led_time_us a.log LED_SCROLLL "$2" 1)
  [ -n "$command" ] || fail "the hold's command wrote no LED_SCROLLL $2"
  [ "$blink_on" -ge "$tick_off" ] || fail "the performed blink began before the tick ended"
  [ "$blink_on" -ge "$command" ] || fail "the performed blink ($blink_on) began before the command ran ($command)"
  # The command sleeps 1 s after its write: the blink (300 ms from the perform's end) cannot
  # end before 1.3 s after it. Its on is written after the LED is taken again (3 reads,
  # 2 writes of sysfs), so the blink seen is shorter by that: it is not compared.
  [ "$blink_off" -ge $((command + 1300000)) ] || fail "the performed blink ended $(((blink_off - command) / 1000)) ms after the command's start"
  [ "$(event_field watch.log performed value "$1")" = "$([ "$2" = 1 ] && echo true || echo false)" ] ||
    fail "performed #$1 did not set the toggle to $2"
  expect_count ran.log "ran value=$2 button=action press=$down\$" 1
  # At rest the LED is given back: its trigger again, as before the daemon.
  _deadline=$(($(now_ms) + WAIT_MS))
  until [ "$(led_trigger "$LED")" = kbd-numlock ]; do
    [ "$(now_ms)" -lt "$_deadline" ] || fail "$LED's trigger is $(led_trigger "$LED") at rest, not kbd-numlock"
    usleep 20000
  done
  [ "$(cat "/sys/class/leds/$LED/brightness")" = 0 ] || fail "$LED is left lit at rest"
}

step "hold: $LED's writes reach the device as EV_LED; $GONE ticks; input999 fails once"
hold 1 1
wait_led_count b.log LED_CAPSL 2
expect_led_values b.log LED_CAPSL "1 0"
[ "$(led_time_us b.log LED_CAPSL 1)" -ge "$down" ] || fail "$GONE on before the key-down"
[ "$(led_time_us b.log LED_CAPSL 0)" -ge $((held + 60000)) ] || fail "$GONE off before the tick's end"
expect_count "$DAEMON_LOG" 'event=feedback-failed' 1
expect_line "$DAEMON_LOG" 'feedback on /sys/class/leds/input999::capslock failed: .*event=feedback-failed'

step "$GONE's device is destroyed: the next hold logs its failure once, and works"
dev_cmd b destroy
wait_gone "/sys/class/leds/$GONE" "$WAIT_MS"
hold 2 0
expect_count "$DAEMON_LOG" 'event=feedback-failed' 2
expect_line "$DAEMON_LOG" "feedback on /sys/class/leds/$GONE failed: .*event=feedback-failed"

step "two short presses: on while down each, no failure logged again, nothing performed"
dev_cmd a "press KEY_PROG1 100ms" "sleep 200ms" "press KEY_PROG1 100ms"
wait_for_event watch.log released 2 30000
wait_led_count a.log LED_CAPSL 12
for n in 3 4; do
  [ "$(led_time_us a.log LED_CAPSL 1 $((n + 2)))" -ge "$(key_time_us r.log KEY_PROG1 1 "$n")" ] || fail "short press $n: on before the key-down"
  [ "$(led_time_us a.log LED_CAPSL 0 $((n + 2)))" -ge "$(key_time_us r.log KEY_PROG1 0 "$n")" ] || fail "short press $n: off before the release"
done
expect_event watch.log held 2
expect_count "$DAEMON_LOG" 'event=feedback-failed' 2
expect_no_line "$DAEMON_LOG" 'event=feedback-recovered'
expect_count ran.log '^ran ' 2
expect_daemon_alive

step "stop mid-press: the trigger and brightness are given back"
dev_cmd a "down KEY_PROG1"
wait_for_event watch.log pressed 5 30000
wait_led_count a.log LED_CAPSL 13
[ "$(led_trigger "$LED")" = none ] || fail "$LED's trigger is $(led_trigger "$LED") while the daemon shows on it"
stop_daemon
wait_led_count a.log LED_CAPSL 14
[ "$(led_trigger "$LED")" = kbd-numlock ] || fail "$LED's trigger after the stop is $(led_trigger "$LED"), not kbd-numlock"
[ "$(cat "/sys/class/leds/$LED/brightness")" = 0 ] || fail "$LED is left lit after the stop"
dev_cmd a "up KEY_PROG1"
expect_led_values a.log LED_CAPSL "1 0 1 0 1 0 1 0 1 0 1 0 1 0"
expect_led_values a.log LED_SCROLLL "1 0"
expect_count "$DAEMON_LOG" 'event=feedback-failed' 2
reader_stop r
dev_stop a
dev_stop b
