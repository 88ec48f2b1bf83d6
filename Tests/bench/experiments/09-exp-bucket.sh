# Experiment (issue 13 item 14), one boot: the build with the clients' rate limits (a
# token bucket per connection and one for accepts: the guest's actiond) against the build
# before it (actiond-base, given with BENCH_EXTRA_BINS), interleaved rounds, idle and under
# the 50 abusers, with the C reactor + subscriber under the same abuse after each abused
# series, and the daemon's CPU ticks (USER_HZ) during its abused holds (boots 1 and 3 of
# docs/benchmarks.md, hand-written section "Rate limits per client"). Not part of `make bench`:
#   cp Tests/bench/experiments/09-exp-bucket.sh Tests/vm/bench/
#   BENCH_ONLY=09-exp-bucket BENCH_N=100 BENCH_ABUSE_N=100 BENCH_EXTRA_BINS=/tmp/actiond-base \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-quiet.py OUT_DIR/serial.log
# timeout: 2300
. "$VM_LIB"
. /vm/bench-lib.sh

act_start() {  # TAG BIN [WRAPPER...]
  _t=$1; _b=$(command -v "$2"); shift 2
  cat >"$_t-config.json" <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-bench-button" },
               holdThresholdMs: $BENCH_HOLD_MS } ],
  controls: [
    { kind: "org.actiond.bench.record", type: "toggle", displayName: "Bench",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$BENCHTOOL", "record", "actiond", "$WORK/$_t-rec.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.bench.record" } },
}
CONFIG
  mkdir -p controls.d
  rm -f "$SOCK"
  spawn "$_t-daemon.log" "$@" "$_b" --config "$_t-config.json" --socket "$SOCK" --state-dir "$STATE" --log-level warning
  DAEMON_PID=$SPAWN_PID
  until [ -S "$SOCK" ] && ctl status 2>/dev/null | grep -q '"bound":true'; do usleep 50000; done
  usleep 500000
  spawn "$_t-sub.out" $BENCHTOOL subscribe "$SOCK" "$WORK/$_t-events.txt"
  SUB_PID=$SPAWN_PID
  wait_for_line "$_t-sub.out" '^subscribed' 10000
}
act_stop() {  # TAG
  kill -TERM "$SUB_PID" 2>/dev/null
  wait_pid "$SUB_PID" 10000 "the subscriber"
  grep -E '^(pressed|held|performing) ' "$1-events.txt" >"$1-events.log"
  kill -TERM "$DAEMON_PID"
  wait_pid "$DAEMON_PID" 10000 "actiond after SIGTERM"
}
act_holds() {  # TAG BIN [WRAPPER...]
  bdev_start actiond-bench-button "$WORK/$1-down.log"
  act_start "$@"
  step "actiond $1, $BENCH_N holds"
  hold_presses
  usleep 500000
  act_stop "$1"
  bdev_stop
}
abuse_phase() {  # TAG BIN [WRAPPER...]; then reactors under the same abuse ($ABUSE_REACTORS)
  _at=$1
  bdev_start actiond-bench-button "$WORK/$_at-down.log"
  act_start "$@"
  spawn "$_at-abuse.out" $BENCHTOOL abuse "$SOCK" "$BENCH_ABUSE_CLIENTS" 3600
  ABUSE_PID=$SPAWN_PID
  sleep 2
  step "actiond $_at under abuse, $BENCH_ABUSE_N holds"
  _c0=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"); _w0=$(now_ms)
  bdev_cmd "press $BENCH_ABUSE_N $((BENCH_HOLD_MS + 30)) 70"
  _c1=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"); _w1=$(now_ms)
  echo "cpu $_at daemon $((_c1 - _c0)) ticks in $((_w1 - _w0)) ms" >"$_at-cpu.txt"
  usleep 500000
  bdev_stop
  for _r in $ABUSE_REACTORS; do
    REACTOR_N=100 reactor_holds "$_at-r-subnb" --subscriber --noblock
  done
  kill -0 "$ABUSE_PID" 2>/dev/null || fail "abuse ended early"
  kill -TERM "$ABUSE_PID" 2>/dev/null
  wait_pid "$ABUSE_PID" 20000 "benchtool abuse"
  { grep abuse "$_at-abuse.out"; cat "$_at-cpu.txt"; } >"$_at-abuse.log" || true
  act_stop "$_at"
}

step "spawn floor"
$BENCHTOOL spawnfloor 100 "$WORK/spawn-rec.log" >spawn-t0.log
for k in 1 2 3; do
  act_holds i-base-$k actiond-base
  act_holds i-new-$k actiond
  ABUSE_REACTORS=subnb abuse_phase a-base-$k actiond-base
  ABUSE_REACTORS=subnb abuse_phase a-new-$k actiond
done
