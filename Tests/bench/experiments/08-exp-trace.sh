# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 13 item 14), one boot: a scheduler trace (ftrace sched_switch and
# sched_wakeup, CLOCK_MONOTONIC) of 30 of actiond's holds under the 50 abusers, to see which
# tasks run between a deadline and the subscriber's read of `held`; docs/benchmarks-notebook.md,
# hand-written section "The clients' quiet around a deadline". Not part of `make bench`:
#   cp Tests/bench/experiments/08-exp-trace.sh Tests/vm/bench/
#   BENCH_ONLY=08-exp-trace Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-trace.py OUT_DIR/serial.log
# timeout: 900
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh


trace_setup
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
