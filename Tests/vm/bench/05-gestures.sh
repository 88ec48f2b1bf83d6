# SPDX-License-Identifier: Apache-2.0
# Bench: gestures (issue 16). One actiond (release build, log level warning) with two buttons
# that differ only in a `doublePress` assignment, each on a uinput device of its own:
# `plain` (hold only, as in 02-actiond) and `double` (the same hold, plus a doublePress with
# the default 300 ms window). One subscriber watches both.
#   1. BENCH_GESTURE_N holds on each button, the same holds as 02-actiond (threshold + 30 ms,
#      70 ms apart), in blocks of 5 alternating plain, double, double, plain, ... so that
#      both buttons see the same guest at the same time: `pressed`, `held`, command start.
#   2. BENCH_GESTURE_N double presses on `double` (down 40 ms, up 80 ms, down 40 ms, up
#      350 ms, longer than the window, so each is a gesture of its own): the doublePress
#      command's start after the second key-down, paired by its ACTIOND_PRESS_TIME (the
#      second key-down).
#   3. Short presses (40 ms) on both buttons, far enough apart that the window ends: the
#      `released` announcement's delay after the release, the cost of configuring doublePress.
# The device tool logs every key-down and key-up's kernel stamp: a press a guest stall
# stretched past the threshold is told apart in the report (Tests/bench/bench.py).
# BENCH_GESTURE_N=0 skips it (the loaded boot).
# timeout: 800
. "$VM_LIB"
. /vm/bench-lib.sh
: "${BENCH_GESTURE_N:=200}"
if [ "$BENCH_GESTURE_N" -le 0 ]; then
  step "BENCH_GESTURE_N=0: no gesture figures in this boot"
  exit 0
fi
WINDOW_MS=300
SHORT_N=$((BENCH_GESTURE_N / 5))
[ "$SHORT_N" -ge 10 ] || SHORT_N=10

# gdev_start NAME FD: a `benchtool device` NAME (uinput, KEY_PROG1) fed through fd FD, its
# answers through fd FD + 5 (bench-lib.sh's tool_start), its key-down stamps in
# $WORK/NAME-down.log.
gdev_start() {
  tool_start "actiond-bench-$1" "$WORK/$1-down.log" "$2" $(($2 + 5)) "$WORK/$1.out"
  eval "GDEV_PID_$1=\$TOOL_PID"
}

# gdev_cmd NAME FD COMMAND: one device command, waits for its `ok` (blocking, no polling).
gdev_cmd() {
  echo "$3" >&"$2"
  tool_answer $(($2 + 5)) "$WORK/$1.out" ok
}

gdev_start plain 3
gdev_start double 4
mkdir -p controls.d
record_control() {
  cat <<CONTROL
    { kind: "org.actiond.bench.$1", type: "toggle", displayName: "Bench $1",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$BENCHTOOL", "record", "$1", "$WORK/gestures-rec.log"] },
      value: { type: "store", initial: false } },
CONTROL
}
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "plain", key: "KEY_PROG1", match: { name: "actiond-bench-plain" }, holdThresholdMs: $BENCH_HOLD_MS },
    { name: "double", key: "KEY_PROG1", match: { name: "actiond-bench-double" }, holdThresholdMs: $BENCH_HOLD_MS,
      doublePressWindowMs: $WINDOW_MS },
  ],
  controls: [
$(record_control plain)
$(record_control dhold)
$(record_control double)
  ],
  assignments: {
    plain: { kind: "org.actiond.bench.plain" },
    double: { hold: { kind: "org.actiond.bench.dhold" }, doublePress: { kind: "org.actiond.bench.double" } },
  },
}
CONFIG
both_bound() {
  _deadline=$(($(now_ms) + 30000))
  until [ "$(ctl status 2>/dev/null | grep -o '"bound":true' | wc -l)" -ge 2 ]; do
    [ "$(now_ms)" -lt "$_deadline" ] || { ctl status; fail "both buttons were not bound within 30 s"; }
    usleep 50000
  done
}
# Checked at debug level first, then at the level a system runs (bench-lib.sh).
bench_daemon config.json both_bound
usleep 500000

spawn sub.out $BENCHTOOL subscribe "$SOCK" "$WORK/gevents.txt"
SUB_PID=$SPAWN_PID
wait_for_line sub.out '^subscribed' 10000

BLOCK=5  # GESTURE_BLOCK in Tests/bench/bench.py
blocks=$(((BENCH_GESTURE_N + BLOCK - 1) / BLOCK))
step "$BENCH_GESTURE_N holds on each button, $blocks blocks of $BLOCK alternating (plain, double, double, plain, ...)"
i=0
hold="$((BENCH_HOLD_MS + 30)) 70"
while [ "$i" -lt "$blocks" ]; do
  n=$BLOCK
  [ $(((i + 1) * BLOCK)) -le "$BENCH_GESTURE_N" ] || n=$((BENCH_GESTURE_N - i * BLOCK))
  if [ $((i % 2)) = 0 ]; then
    gdev_cmd plain 3 "press $n $hold"
    gdev_cmd double 4 "press $n $hold"
  else
    gdev_cmd double 4 "press $n $hold"
    gdev_cmd plain 3 "press $n $hold"
  fi
  i=$((i + 1))
done
step "$BENCH_GESTURE_N double presses on the double button (40 ms, 80 ms up, 40 ms, $((WINDOW_MS + 50)) ms up)"
gdev_cmd double 4 "double $BENCH_GESTURE_N 40 80 40 $((WINDOW_MS + 50))"
step "$SHORT_N short presses on each button (40 ms; the double button's $((WINDOW_MS + 150)) ms apart)"
gdev_cmd double 4 "press $SHORT_N 40 $((WINDOW_MS + 150)) short"
gdev_cmd plain 3 "press $SHORT_N 40 150 short"
usleep 500000
kill -TERM "$SUB_PID" 2>/dev/null
wait_pid "$SUB_PID" 10000 "the subscriber"
grep -E '^(pressed|held|performing|double-pressed|released) ' gevents.txt >gestures-events.log
memory gestures "$DAEMON_PID" >gestures-mem.log
kill -TERM "$DAEMON_PID"
wait_pid "$DAEMON_PID" 10000 "actiond after SIGTERM"
exec 3>&- 4>&-
eval "wait \$GDEV_PID_plain" || fail "benchtool device plain failed: $(cat plain.out plain.out.err)"
eval "wait \$GDEV_PID_double" || fail "benchtool device double failed: $(cat double.out double.out.err)"
exec 8<&- 9<&-
