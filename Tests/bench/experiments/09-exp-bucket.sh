# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 13 item 14), one boot: the build with the clients' rate limits (a
# token bucket per connection and one for accepts: the guest's actiond) against the build
# before it (actiond-base, given with BENCH_EXTRA_BINS), interleaved rounds, idle and under
# the 50 abusers, with the C reactor + subscriber under the same abuse after each abused
# series, and the daemon's CPU ticks (USER_HZ) during its abused holds (boots 1 and 3 of
# docs/benchmarks-notebook.md, hand-written section "Rate limits per client"). Not part of `make bench`:
#   cp Tests/bench/experiments/09-exp-bucket.sh Tests/vm/bench/
#   BENCH_ONLY=09-exp-bucket BENCH_N=100 BENCH_ABUSE_N=100 BENCH_EXTRA_BINS=/tmp/actiond-base \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-quiet.py OUT_DIR/serial.log
# timeout: 2300
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

step "spawn floor"
$BENCHTOOL spawnfloor 100 "$WORK/spawn-rec.log" >spawn-t0.log
for k in 1 2 3; do
  act_holds i-base-$k actiond-base
  act_holds i-new-$k actiond
  ABUSE_REACTORS=subnb REACTOR_N=100 abuse_phase a-base-$k actiond-base
  ABUSE_REACTORS=subnb REACTOR_N=100 abuse_phase a-new-$k actiond
done
