# SPDX-License-Identifier: Apache-2.0
# Bench: the limits in this VM. timerfd overshoot alone; posix_spawn of the recording command
# alone (the spawn floor) and fork + execve of it; a minimal C reactor (epoll on the evdev fd, one timerfd,
# posix_spawn) from the key-down timestamp to a subscriber's read and from the hold deadline
# to the command's start; then the same reactor doing what actiond does at the deadline
# besides the posix_spawn: `held` and `performing` written to a subscriber (the code of
# `benchtool subscribe`) just before it, and back to epoll_wait after it (the child reaped
# through a pidfd) instead of blocking in waitpid.
# timeout: 400
. "$VM_LIB"
. /vm/bench-lib.sh

step "timerfd overshoot, $BENCH_N x 20 ms"
$BENCHTOOL timerfd "$BENCH_N" 20 >timerfd.log
step "spawn floor, $BENCH_N spawns"
$BENCHTOOL spawnfloor "$BENCH_N" "$WORK/spawn-rec.log" >spawn-t0.log
step "fork + execve floor, $BENCH_N spawns"
$BENCHTOOL spawnfloor "$BENCH_N" "$WORK/fork-rec.log" fork >fork-t0.log

bdev_start actiond-bench-reactor
spawn reactor.out $BENCHTOOL reactor "$BDEV_NODE" "$BENCH_HOLD_MS" "$BENCH_N" "$WORK/reactor.log" \
  $BENCHTOOL record reactor "$WORK/reactor-rec.log"
REACTOR_PID=$SPAWN_PID
wait_for_line reactor.out '^ready' 10000
step "C reactor, $BENCH_N holds"
hold_presses
# It ends by itself after BENCH_N holds; one that missed some is stopped (the report counts).
usleep 500000
kill -TERM "$REACTOR_PID" 2>/dev/null
wait_pid "$REACTOR_PID" 10000 "the reactor"
bdev_stop
reactor_holds reactor-sub --subscriber --noblock
# And with actiond's posix_spawn too (own process group, signals reset, output pipes,
# /dev/null, closefrom, chdir; the pipes and file actions readied at the key-down).
reactor_holds reactor-spawn --subscriber --noblock --spawn
