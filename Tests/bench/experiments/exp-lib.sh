# SPDX-License-Identifier: Apache-2.0
# Helpers of the one-boot experiments in Tests/bench/experiments (sourced after lib.sh and
# /vm/bench-lib.sh; Tests/bench/vm.sh puts this file at /vm/exp-lib.sh in every bench boot).
# act_start TAG BIN [WRAPPER...]: BIN (a name in the guest's PATH: actiond or a variant build
# given with BENCH_EXTRA_BINS) on the bench button with a recording toggle, log level warning,
# under WRAPPER if given, and a subscriber; its files are TAG-*. act_launch TAG BIN
# [WRAPPER...]: the same on a TAG-config.json the caller wrote. act_stop TAG ends both.
# ACT_BUTTON_EXTRA: further members of act_start's button, e.g. ", feedback: [...]" (none by default).
# trace_setup: tracefs mounted at $T, CLOCK_MONOTONIC stamps, a 16 MiB buffer.
# act_holds TAG BIN [WRAPPER...]: BENCH_N holds through it. abuse_phase TAG BIN [WRAPPER...]:
# BENCH_ABUSE_N holds under BENCH_ABUSE_CLIENTS abusive clients, then, under the same abuse,
# the C reactors named in $ABUSE_REACTORS (plain: its timer and spawn only; subnb: with a
# subscriber and no waitpid), REACTOR_N holds each (BENCH_ABUSE_N by default); TAG-abuse.log
# gets the abusers' counts and a line "cpu TAG daemon TICKS ticks in MS ms" for the holds.

act_start() {  # TAG BIN [WRAPPER...]
  _t=$1; _n=$2; shift 2
  cat >"$_t-config.json" <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-bench-button" },
               holdThresholdMs: $BENCH_HOLD_MS${ACT_BUTTON_EXTRA:-} } ],
  controls: [
    { kind: "org.actiond.bench.record", type: "toggle", displayName: "Bench",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$BENCHTOOL", "record", "actiond", "$WORK/$_t-rec.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.bench.record" } },
}
CONFIG
  act_launch "$_t" "$_n" "$@"
}
act_launch() {  # TAG BIN [WRAPPER...]
  _t=$1; _b=$(command -v "$2"); shift 2
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
  # The daemon's CPU time (utime + stime, clock ticks) over the holds under abuse.
  _c0=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"); _w0=$(now_ms)
  bdev_cmd "press $BENCH_ABUSE_N $((BENCH_HOLD_MS + 30)) 70"
  _c1=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"); _w1=$(now_ms)
  echo "cpu $_at daemon $((_c1 - _c0)) ticks in $((_w1 - _w0)) ms" >"$_at-cpu.txt"
  usleep 500000
  bdev_stop
  for _r in $ABUSE_REACTORS; do
    case $_r in
      plain) REACTOR_N=$BENCH_ABUSE_N reactor_holds "$_at-r-plain" ;;
      subnb) REACTOR_N=${REACTOR_N:-$BENCH_ABUSE_N} reactor_holds "$_at-r-subnb" --subscriber --noblock ;;
    esac
  done
  kill -0 "$ABUSE_PID" 2>/dev/null || fail "abuse ended early"
  kill -TERM "$ABUSE_PID" 2>/dev/null
  wait_pid "$ABUSE_PID" 20000 "benchtool abuse"
  { grep abuse "$_at-abuse.out"; cat "$_at-cpu.txt"; } >"$_at-abuse.log" || true
  act_stop "$_at"
}
trace_setup() {
  T=/sys/kernel/tracing
  [ -d $T/events ] || mount -t tracefs tracefs $T 2>/dev/null || { mkdir -p /tmp/tr; mount -t tracefs tracefs /tmp/tr; T=/tmp/tr; }
  echo mono >$T/trace_clock || echo "no mono clock" >trace-info.log
  echo 16384 >$T/buffer_size_kb
}
