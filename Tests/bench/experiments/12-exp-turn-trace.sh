# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 15 item 5), one boot: a scheduler and system-call trace (ftrace,
# CLOCK_MONOTONIC) of idle holds, actiond against the C reactor doing the same deadline work
# (`reactor --subscriber --noblock`), two interleaved rounds, to see where actiond's command
# start loses time between the hold deadline and the command's first instruction: which
# task runs when, the spawner's system calls in that window, the child's clone, exec and
# first run. docs/benchmarks-notebook.md, hand-written section "The deadline turn, traced". Not part
# of `make bench`:
#   cp Tests/bench/experiments/12-exp-turn-trace.sh Tests/vm/bench/
#   BENCH_ONLY=12-exp-turn-trace BENCH_N=40 [BENCH_EXTRA_BINS="/tmp/actiond-a ..."] \
#     [EXP_SERIES="base:actiond-a new:actiond yield:actiond:ACTIOND_EXP_YIELD=1"] [EXP_DOUBLE=1] \
#     [EXP_ABUSE=1] [EXP_REACTOR_SPAWN=1] Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
# EXP_ABUSE=1: every series under BENCH_ABUSE_CLIENTS abusive clients (`benchtool abuse`) on an
# actiond's socket: the traced daemon's own, or for the reactor one started for them (bound to
# no device), as in make bench's abuse rows; the trace keeps only each hold's window.
#   python3 Tests/bench/experiments/exp-turn-trace.py OUT_DIR/serial.log
# timeout: 1500
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

trace_setup
# trace_on TAG SPAWNER_PID [SUB_PID]: scheduler events of every task, system calls of the
# spawner (actiond or the reactor).
trace_on() {
  echo >$T/set_event
  for e in sched:sched_switch sched:sched_wakeup sched:sched_wakeup_new sched:sched_process_fork \
    sched:sched_process_exec; do echo "$e" >>$T/set_event; done
  echo 0 >$T/events/raw_syscalls/enable
  echo "common_pid == $2" >$T/events/raw_syscalls/sys_enter/filter
  echo "common_pid == $2" >$T/events/raw_syscalls/sys_exit/filter
  echo 1 >$T/events/raw_syscalls/enable
  echo >$T/trace
  echo "pids $1 spawner $2 sub ${3:-0} abuse ${ABUSE_PID:-0} daemon ${DAEMON_PID:-0}" >>trace-info.log
  echo 1 >$T/tracing_on
}
trace_off() {  # TAG
  echo 0 >$T/tracing_on
  if [ "${EXP_ABUSE:-0}" = 0 ]; then
    grep -v '^#' $T/trace >"$1-trace.log"
  else
    # Only from 2 ms before each hold deadline to 150 ms after it: the abusers' events would
    # flood the serial log.
    awk -v h="$BENCH_HOLD_MS" 'FNR == NR { if ($1 == "down") w[++n] = $2 / 1e9 + h / 1000; next }
      /^#/ { next }
      { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1) + 0; break }
        while (k < n && t > w[k + 1] + 0.150) k++
        if (k < n && t >= w[k + 1] - 0.002) print }' "$WORK/$1-down.log" $T/trace >"$1-trace.log"
  fi
  echo "$1 $(wc -l <"$1-trace.log") trace lines" >>trace-info.log
}
# host_start TAG: an actiond for the abusers while a reactor is traced (its button is absent).
host_start() {
  cat >"$1-config.json" <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-bench-button" } } ],
  controls: [ { kind: "org.actiond.bench.hold", type: "button", displayName: "Hold",
                intent: { type: "exec", argv: ["/bin/true"] } } ],
  assignments: { action: { kind: "org.actiond.bench.hold" } },
}
CONFIG
  rm -f "$SOCK"
  spawn "$1-daemon.log" actiond --config "$1-config.json" --socket "$SOCK" --state-dir "$STATE" --log-level warning
  DAEMON_PID=$SPAWN_PID
  until [ -S "$SOCK" ] && ctl status >/dev/null 2>&1; do usleep 50000; done
}
# abuse_on SOCK / abuse_off: the abusers (EXP_ABUSE=1), two seconds before the holds.
abuse_on() {
  [ "${EXP_ABUSE:-0}" != 0 ] || return 0
  spawn abuse.out $BENCHTOOL abuse "$1" "$BENCH_ABUSE_CLIENTS" 3600
  ABUSE_PID=$SPAWN_PID
  sleep 2
}
abuse_off() {
  [ -n "${ABUSE_PID:-}" ] || return 0
  kill -TERM "$ABUSE_PID" 2>/dev/null
  wait_pid "$ABUSE_PID" 20000 "benchtool abuse"
  grep abuse abuse.out >>trace-info.log || true
  ABUSE_PID=
}
act_traced() {  # TAG BIN [WRAPPER...]
  bdev_start actiond-bench-button "$WORK/$1-down.log"
  act_start "$@"
  abuse_on "$SOCK"
  trace_on "$1" "$DAEMON_PID" "$SUB_PID"
  step "actiond $*, $BENCH_N traced holds"
  hold_presses
  usleep 500000
  trace_off "$1"
  abuse_off
  act_stop "$1"
  bdev_stop
}
reactor_traced() {  # TAG [REACTOR OPTION]
  _ropt=${2:-}
  if [ "${EXP_ABUSE:-0}" != 0 ]; then host_start "$1-host"; abuse_on "$SOCK"; fi
  bdev_start "actiond-bench-$1" "$WORK/$1-down.log"
  spawn "$1.out" $BENCHTOOL reactor "$BDEV_NODE" "$BENCH_HOLD_MS" "$BENCH_N" "$WORK/$1.log" \
    --subscriber "$WORK/$1-events.log" --noblock $_ropt $BENCHTOOL record "$1" "$WORK/$1-rec.log"
  _reactor=$SPAWN_PID
  wait_for_line "$1.out" '^ready' 10000
  trace_on "$1" "$_reactor"
  step "C reactor $1, $BENCH_N traced holds"
  hold_presses
  usleep 500000
  trace_off "$1"
  kill -TERM "$_reactor" 2>/dev/null
  wait_pid "$_reactor" 10000 "the reactor $1"
  bdev_stop
  if [ "${EXP_ABUSE:-0}" != 0 ]; then
    abuse_off
    kill -TERM "$DAEMON_PID"
    wait_pid "$DAEMON_PID" 10000 "the abusers' actiond after SIGTERM"
    DAEMON_PID=
  fi
}
# dbl_traced TAG BIN: BENCH_N double presses (40 ms, 80 ms up, 40 ms, 350 ms up) on a button
# whose doublePress runs the recording command: the same turn, started by the second key-down
# instead of the hold deadline (EXP_DOUBLE=1 adds it to every round).
dbl_traced() {  # TAG BIN
  bdev_start actiond-bench-button "$WORK/$1-down.log"
  cat >"$1-config.json" <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-bench-button" },
               holdThresholdMs: $BENCH_HOLD_MS, doublePressWindowMs: 300 } ],
  controls: [
    { kind: "org.actiond.bench.hold", type: "button", displayName: "Hold",
      intent: { type: "exec", argv: ["/bin/true"] } },
    { kind: "org.actiond.bench.record", type: "toggle", displayName: "Bench",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$BENCHTOOL", "record", "actiond", "$WORK/$1-rec.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { hold: { kind: "org.actiond.bench.hold" }, doublePress: { kind: "org.actiond.bench.record" } } },
}
CONFIG
  act_launch "$1" "$2"
  trace_on "$1" "$DAEMON_PID" "$SUB_PID"
  step "actiond $1 ($2), $BENCH_N traced double presses"
  bdev_cmd "double $BENCH_N 40 80 40 350"
  usleep 500000
  trace_off "$1"
  act_stop "$1"
  bdev_stop
}
# BIN names of the series: EXP_SERIES ("TAG:BIN[:VAR=VALUE]" each), actiond alone by default.
for k in $(seq "${EXP_ROUNDS:-2}"); do
  for _s in ${EXP_SERIES:-act:actiond}; do
    _tag=${_s%%:*}; _rest=${_s#*:}; _bin=${_rest%%:*}; _var=
    [ "$_rest" = "$_bin" ] || _var=${_rest#*:}
    if [ -n "$_var" ]; then act_traced "$_tag-$k" "$_bin" env "$_var"; else act_traced "$_tag-$k" "$_bin"; fi
  done
  [ "${EXP_DOUBLE:-0}" = 0 ] || dbl_traced "dbl-$k" actiond
  reactor_traced rsub-$k
  # EXP_REACTOR_SPAWN=1: the reactor with actiond's posix_spawn too (`--spawn`).
  [ "${EXP_REACTOR_SPAWN:-0}" = 0 ] || reactor_traced rspawn-$k --spawn
done
