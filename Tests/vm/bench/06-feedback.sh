# SPDX-License-Identifier: Apache-2.0
# Bench: the threshold tick (issue 17), next to `held` after the same deadlines. One actiond
# (release build, log level warning), one button on a `benchtool device` with a sysfs feedback
# LED ticking on `held`: the Caps Lock LED class device of an actiond-testdev --leds device of
# its own, which prints every LED change the kernel delivers to it with the kernel's stamp
# (ticks.log). One subscriber; BENCH_N holds as in 02-actiond (threshold + 30 ms, 70 ms apart):
# `held` → subscriber and deadline → the LED change reaching its device.
# It is a daemon of its own, not 02-actiond's: the tick's sysfs writes happen in the deadline
# turn, before the hold's command starts, and must not be in the figures 02-actiond compares
# with the C reactor (which has no LED to write).
# timeout: 600
. "$VM_LIB"
. /vm/bench-lib.sh

bdev_start actiond-bench-feedback "$WORK/fb-down.log"
dev_start b --preset gpio-keys --name actiond-bench-led --keys KEY_F1 --leds LED_CAPSL
LED=$(grep -lx actiond-bench-led /sys/class/leds/input*::capslock/device/name)
LED=${LED%/device/name}
LED=${LED##*/}
[ -n "$LED" ] || fail "no Caps Lock LED class device for actiond-bench-led: $(ls /sys/class/leds)"
mkdir -p controls.d
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-bench-feedback" },
               holdThresholdMs: $BENCH_HOLD_MS, feedback: [{ sysfs: "$LED", on: ["held"] }] } ],
  controls: [
    { kind: "org.actiond.bench.record", type: "toggle", displayName: "Bench",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$BENCHTOOL", "record", "feedback", "$WORK/fb-rec.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.bench.record" } },
}
CONFIG
bench_daemon config.json
usleep 500000

spawn sub.out $BENCHTOOL subscribe "$SOCK" "$WORK/fb-events.txt" "$BENCH_N"
SUB_PID=$SPAWN_PID
wait_for_line sub.out '^subscribed' 10000
step "$BENCH_N holds with a feedback LED"
hold_presses
_deadline=$(($(now_ms) + 10000))
while kill -0 "$SUB_PID" 2>/dev/null && [ "$(now_ms)" -lt "$_deadline" ]; do usleep 50000; done
kill -TERM "$SUB_PID" 2>/dev/null
wait_pid "$SUB_PID" 10000 "the subscriber"
grep -E '^(pressed|held|performing) ' fb-events.txt >fb-events.log
awk '$1 == "led" && $3 == "LED_CAPSL" && $4 == 1 { split($2, t, "."); printf "tick %d%06d\n", t[1], t[2] }' b.log >ticks.log
kill -TERM "$DAEMON_PID"
wait_pid "$DAEMON_PID" 10000 "actiond after SIGTERM"
bdev_stop
dev_stop b
