# Experiment (issue 13 item 14, issue 15 item 5), one boot: the clients' quiet around a
# deadline, alternating within one daemon, and CLOCK_MONOTONIC stamps of the deadline turn;
# docs/benchmarks.md, hand-written section "The clients' quiet around a deadline". Not part
# of `make bench`. It needs the trial build of Tests/bench/experiments/06-quiet-trial.patch
# (never committed to the sources: it reads ACTIOND_EXP_QUIET=BEFORE_US,AFTER_US,
# ACTIOND_EXP_ALT (quiet only for deadlines on an even millisecond, so both halves of one
# series see the same guest at the same time) and ACTIOND_EXP_STAMPS (one "stamp" line per
# deadline on stderr at exit: deadline, epoll_wait return, timer handler, device drained,
# first announcement, runIntent, posix_spawn call, its return, run() return, handler end)):
#   patch -p1 <Tests/bench/experiments/06-quiet-trial.patch
#   swift build -c release --static-swift-stdlib -Xlinker -L$PWD/mk/static-libstdc++ --product actiond
#   cp .build/release/actiond /tmp/actiond-exp; patch -R -p1 <Tests/bench/experiments/06-quiet-trial.patch
#   cp Tests/bench/experiments/06-exp-quiet.sh Tests/vm/bench/
#   BENCH_ONLY=06-exp-quiet BENCH_EXTRA_BINS=/tmp/actiond-exp Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
# Deadline parity per sample: (the pressed event's deadline in ms) % 2 == 0 had the quiet.
# timeout: 2000
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

BENCH_N=100
reactor_holds r-subnb-1 --subscriber --noblock
BENCH_ABUSE_N=400
ABUSE_REACTORS=subnb abuse_phase a-alt20 actiond-exp env ACTIOND_EXP_QUIET=20000,10000 ACTIOND_EXP_ALT=1 ACTIOND_EXP_STAMPS=1
BENCH_N=200
act_holds i-alt20 actiond-exp env ACTIOND_EXP_QUIET=20000,10000 ACTIOND_EXP_ALT=1 ACTIOND_EXP_STAMPS=1
