# Experiment (issue 13 item 14), one boot: a scheduler trace (ftrace sched_switch and
# sched_wakeup, CLOCK_MONOTONIC) of 30 of actiond's holds under the 50 abusers, to see which
# tasks run between a deadline and the subscriber's read of `held`; docs/benchmarks.md,
# hand-written section "The clients' quiet around a deadline". Not part of `make bench`:
#   cp Tests/bench/experiments/08-exp-trace.sh Tests/vm/bench/
#   BENCH_ONLY=08-exp-trace Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-trace.py OUT_DIR/serial.log
# timeout: 900
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
  bdev_cmd "press $BENCH_ABUSE_N $((BENCH_HOLD_MS + 30)) 70"
  usleep 500000
  bdev_stop
  for _r in $ABUSE_REACTORS; do
    REACTOR_N=100 reactor_holds "$_at-r-subnb" --subscriber --noblock
  done
  kill -0 "$ABUSE_PID" 2>/dev/null || fail "abuse ended early"
  kill -TERM "$ABUSE_PID" 2>/dev/null
  wait_pid "$ABUSE_PID" 20000 "benchtool abuse"
  grep abuse "$_at-abuse.out" >"$_at-abuse.log" || true
  act_stop "$_at"
}


T=/sys/kernel/tracing
[ -d $T/events ] || mount -t tracefs tracefs $T 2>/dev/null || { mkdir -p /tmp/tr; mount -t tracefs tracefs /tmp/tr; T=/tmp/tr; }
echo mono >$T/trace_clock || echo "no mono clock" >trace-info.log
echo 16384 >$T/buffer_size_kb
echo >$T/set_event
echo sched:sched_switch >>$T/set_event
echo sched:sched_wakeup >>$T/set_event
echo sched:sched_wakeup_new >>$T/set_event
cat $T/trace_clock >>trace-info.log
BENCH_ABUSE_N=30
_at=tr
bdev_start actiond-bench-button "$WORK/$_at-down.log"
act_start "$_at" actiond
spawn "$_at-abuse.out" $BENCHTOOL abuse "$SOCK" "$BENCH_ABUSE_CLIENTS" 3600
ABUSE_PID=$SPAWN_PID
sleep 2
echo >$T/trace
echo 1 >$T/tracing_on
bdev_cmd "press $BENCH_ABUSE_N $((BENCH_HOLD_MS + 30)) 70"
echo 0 >$T/tracing_on
usleep 500000
bdev_stop
kill -TERM "$ABUSE_PID" 2>/dev/null
wait_pid "$ABUSE_PID" 20000 "benchtool abuse"
act_stop "$_at"
echo "pids actiond $DAEMON_PID sub $SUB_PID abuse $ABUSE_PID" >>trace-info.log
grep -v '^#' $T/trace >trace.log
wc -l trace.log >>trace-info.log
