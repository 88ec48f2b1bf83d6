# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 13 item 14), one boot: the build with the clients' quiet (the guest's
# actiond) against the build before it (actiond-base, given with BENCH_EXTRA_BINS),
# interleaved rounds, idle and under the 50 abusers, with the C reactor + subscriber idle
# and under the same abuse in each round; docs/benchmarks-notebook.md, hand-written section "The
# clients' quiet around a deadline". Not part of `make bench`:
#   cp Tests/bench/experiments/07-exp-quiet-final.sh Tests/vm/bench/
#   BENCH_ONLY=07-exp-quiet-final BENCH_N=100 BENCH_ABUSE_N=100 BENCH_EXTRA_BINS=/tmp/actiond-base \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
# With the trial build of 06-quiet-trial.patch as actiond-exp in BENCH_EXTRA_BINS too, it
# then runs 200 holds under the abuse with the quiet alternating (50, then 20 ms before).
# timeout: 2000
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

step "spawn floor"
$BENCHTOOL spawnfloor 100 "$WORK/spawn-rec.log" >spawn-t0.log
for k in 1 2; do
  reactor_holds r-subnb-$k --subscriber --noblock
  act_holds i-base-$k actiond-base
  act_holds i-new-$k actiond
  ABUSE_REACTORS=subnb REACTOR_N=100 abuse_phase a-base-$k actiond-base
  ABUSE_REACTORS= abuse_phase a-new-$k actiond
done
if command -v actiond-exp >/dev/null; then
  BENCH_ABUSE_N=200
  ABUSE_REACTORS= abuse_phase a-alt50 actiond-exp env ACTIOND_EXP_QUIET=50000,10000 ACTIOND_EXP_ALT=1
  ABUSE_REACTORS= abuse_phase a-alt20 actiond-exp env ACTIOND_EXP_QUIET=20000,10000 ACTIOND_EXP_ALT=1
fi
