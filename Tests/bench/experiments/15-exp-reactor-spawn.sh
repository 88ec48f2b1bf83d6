# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 15 item 5), one boot: what actiond's spawn costs the C reactor. The
# reactor doing actiond's deadline work with its bare posix_spawn (`--subscriber --noblock`)
# against the same with actiond's posix_spawn (`--spawn`: own process group, signals reset,
# output pipes, /dev/null, closefrom, chdir, readied at the key-down) and actiond itself,
# interleaved rounds of idle holds; docs/benchmarks-notebook.md, hand-written section "A hold's
# command readied at its key-down". Not part of `make bench`:
#   cp Tests/bench/experiments/15-exp-reactor-spawn.sh Tests/vm/bench/
#   BENCH_ONLY=15-exp-reactor-spawn BENCH_N=100 Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-quiet.py OUT_DIR/serial.log 15-exp
# timeout: 1500
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

for k in $(seq "${EXP_ROUNDS:-3}"); do
  reactor_holds r-subnb-$k --subscriber --noblock
  reactor_holds r-subnb-spawn-$k --subscriber --noblock --spawn
  act_holds i-new-$k actiond
done
