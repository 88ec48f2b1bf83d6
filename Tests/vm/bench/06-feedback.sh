# SPDX-License-Identifier: Apache-2.0
# Bench: the threshold tick (issues 17 and 32), next to `held` and the command after the same
# deadlines, for both kinds of feedback LED. Two series, each its own actiond (release build,
# log level warning) with one button on a `benchtool device`, one subscriber and BENCH_N holds
# as in 02-actiond (threshold + 30 ms, 70 ms apart): `held` → subscriber, deadline → the
# command, and deadline → the LED's change reaching its device:
#  - sysfs (fb-*): `feedback: [{ sysfs: LED, on: ["held"] }]`, LED the Caps Lock LED class
#    device of an actiond-testdev --leds device of its own, which prints every LED change the
#    kernel delivers to it with the kernel's stamp (ticks.log);
#  - EV_LED (led-*): `feedback: [{ led: "LED_CAPSL", on: ["held"] }]`, written to the
#    descriptor actiond holds of the button's own device, a `benchtool device --leds`, which
#    logs each EV_LED event uinput delivers to it with uinput's stamp ("led NS CODE VALUE" in
#    led-down.log), read back in the gap after each press, never woken by it.
# The readers must not perturb what they measure: on the one-vCPU guest a reader woken by the
# LED change would run before the rest of the daemon's deadline turn (the hold's command).
# benchtool device never waits on its LED events (it drains them after each press); the
# testdev prints as each change arrives, so it runs at SCHED_IDLE (`benchtool idle`, what
# util-linux's `chrt --idle 0` does: the guest's busybox has no chrt): it runs only when
# nothing else can, and its wake-up preempts no one. The stamps are the kernel's either way.
# A daemon of its own, not 02-actiond's: the tick's writes happen in the deadline turn and
# must not be in the figures 02-actiond compares with the C reactor (which has no LED).
# timeout: 900
. "$VM_LIB"
. /vm/bench-lib.sh

# feedback_holds TAG DEVICE FEEDBACK [DEVICE_OPTIONS]: an actiond whose button on the bench's
# device DEVICE has the feedback output FEEDBACK (JSON5), BENCH_N holds with a subscriber:
# TAG-events.log (`pressed`, `held`, `performing`), TAG-down.log (the key events' stamps, and
# with --leds the EV_LED ones), TAG-rec.log (the command's records).
feedback_holds() {
  bdev_start "$2" "$WORK/$1-down.log" "${4:-}"
  cat >"$1.json" <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "$2" },
               holdThresholdMs: $BENCH_HOLD_MS, feedback: [$3] } ],
  controls: [
    { kind: "org.actiond.bench.record", type: "toggle", displayName: "Bench",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$BENCHTOOL", "record", "feedback", "$WORK/$1-rec.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.bench.record" } },
}
CONFIG
  bench_daemon "$1.json"
  usleep 500000
  subscriber_start "$1-events" "$BENCH_N"
  step "$BENCH_N holds with a feedback LED ($1: $3)"
  hold_presses
  subscriber_end "$1-events" 10000 "the subscriber"
  kill -TERM "$DAEMON_PID"
  wait_pid "$DAEMON_PID" 10000 "actiond after SIGTERM"
  mv daemon-bench.log "daemon-bench-$1.log"
  bdev_stop
}

mkdir -p controls.d

# sysfs: the testdev's device (and its LED class device) first, its reader at SCHED_IDLE.
DEV_WRAP="$BENCHTOOL idle"
dev_start b --preset gpio-keys --name actiond-bench-led --keys KEY_F1 --leds LED_CAPSL
DEV_WRAP=
# Its policy, field 41 of /proc/PID/stat (its comm has no space): 5 is SCHED_IDLE.
[ "$(awk '{ print $41 }' "/proc/$DEV_PID_b/stat")" = 5 ] || fail "actiond-testdev is not at SCHED_IDLE: $(cat "/proc/$DEV_PID_b/stat")"
LED=$(grep -lx actiond-bench-led /sys/class/leds/input*::capslock/device/name)
LED=${LED%/device/name}
LED=${LED##*/}
[ -n "$LED" ] || fail "no Caps Lock LED class device for actiond-bench-led: $(ls /sys/class/leds)"
feedback_holds fb actiond-bench-feedback "{ sysfs: \"$LED\", on: [\"held\"] }"
dev_stop b
awk '$1 == "led" && $3 == "LED_CAPSL" && $4 == 1 { split($2, t, "."); printf "tick %d%06d\n", t[1], t[2] }' b.log >ticks.log

# EV_LED: the LED of the button's own device, logged by that device.
feedback_holds led actiond-bench-evled '{ led: "LED_CAPSL", on: ["held"] }' --leds
