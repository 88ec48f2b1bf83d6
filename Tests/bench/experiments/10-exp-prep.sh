# Experiment (issue 15 item 5), one boot: the deadline turn's steps, stamped by trial builds
# (10-stamps-trial.py applied to a copy of the tree, never committed to Sources) of
# the build before (actiond-stampA) and, when given, of the build with argv/envp prepared
# at configuration load (actiond-stampB), interleaved rounds of idle holds. Both in
# BENCH_EXTRA_BINS. docs/benchmarks.md, hand-written section "Rate limits per client".
#   cp Tests/bench/experiments/10-exp-prep.sh Tests/vm/bench/
#   BENCH_ONLY=10-exp-prep BENCH_N=100 BENCH_EXTRA_BINS="/tmp/actiond-stampA /tmp/actiond-stampB" \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-prep.py OUT_DIR/serial.log
# timeout: 1500
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
for k in 1 2; do
  act_holds i-stampA-$k actiond-stampA env ACTIOND_EXP_STAMPS=1
  if command -v actiond-stampB >/dev/null; then act_holds i-stampB-$k actiond-stampB env ACTIOND_EXP_STAMPS=1; fi
done
