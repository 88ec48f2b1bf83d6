# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 15 items 1 and 5, issue 13 item 14), one boot: the build that readies a
# hold's command at its key-down (the guest's actiond) against the build before it
# (actiond-base, given with BENCH_EXTRA_BINS), interleaved rounds of idle holds with the C
# reactor doing the same deadline work in each round, then one round of each under the 50
# abusers with that reactor under the same abuse; docs/benchmarks-notebook.md, hand-written section
# "A hold's command readied at its key-down". Not part of `make bench`:
#   cp Tests/bench/experiments/14-exp-prepared.sh Tests/vm/bench/
#   BENCH_ONLY=14-exp-prepared BENCH_N=100 BENCH_ABUSE_N=100 BENCH_EXTRA_BINS=/tmp/actiond-base \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-quiet.py OUT_DIR/serial.log 14-exp
# timeout: 2600
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

for k in $(seq "${EXP_ROUNDS:-3}"); do
  reactor_holds r-subnb-$k --subscriber --noblock
  act_holds i-base-$k actiond-base
  act_holds i-new-$k actiond
done
ABUSE_REACTORS=subnb REACTOR_N=100 abuse_phase a-base-1 actiond-base
ABUSE_REACTORS= abuse_phase a-new-1 actiond
