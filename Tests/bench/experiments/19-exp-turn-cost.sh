# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 32 item 7), one boot: does a cheaper engine turn (actiond-bench's hold turn)
# bring command start and `held` nearer the C reactor doing the same deadline work? The
# reactor with actiond's posix_spawn (`--subscriber --noblock --spawn`, the limit of the
# summary's command-start row) and two actiond builds, in EXP_ROUNDS rounds of BENCH_N holds per
# block, each round in the order reactor, A, B, B, A, reactor (so neither build always runs
# after the other). EXP_A and EXP_B (TAG:BIN, BIN a name in the guest's PATH, given with
# BENCH_EXTRA_BINS). docs/benchmarks-notebook.md, hand-written section "The hold turn at half
# its allocations". Not part of `make bench`:
#   cp Tests/bench/experiments/19-exp-turn-cost.sh Tests/vm/bench/
#   BENCH_ONLY=19-exp-turn-cost BENCH_N=100 BENCH_EXTRA_BINS="/tmp/actiond-base /tmp/actiond-new" \
#     EXP_A=base:actiond-base EXP_B=new:actiond-new \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-quiet.py OUT_DIR/serial.log 19-exp
#   python3 Tests/bench/experiments/exp-pressed.py OUT_DIR/serial.log
# timeout: 2400
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

a_tag=${EXP_A%%:*} a_bin=${EXP_A#*:}
b_tag=${EXP_B%%:*} b_bin=${EXP_B#*:}
for k in $(seq "${EXP_ROUNDS:-2}"); do
  reactor_holds "r-spawn-$k" --subscriber --noblock --spawn
  act_holds "i-$a_tag-$k" "$a_bin"
  act_holds "i-$b_tag-$k" "$b_bin"
  act_holds "i-${b_tag}2-$k" "$b_bin"
  act_holds "i-${a_tag}2-$k" "$a_bin"
  reactor_holds "r-spawn2-$k" --subscriber --noblock --spawn
done
