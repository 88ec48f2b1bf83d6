# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 32 item 7, `pressed` p99 ≤ 2 ms), one boot: does the key-down turn's work
# after `pressed`'s send (readying the hold's command: PATH, pipes, file actions, C arrays)
# delay the subscriber's read of `pressed` on the one vCPU? EXP_SERIES (TAG:BIN[:VAR=VALUE])
# in EXP_ROUNDS interleaved rounds of BENCH_N holds each, as exp-lib's act_holds runs them,
# with the environment given (a trial build reads ACTIOND_EXP_NOPREP=1 to skip the readying).
# docs/benchmarks-notebook.md, hand-written section "`pressed` and the key-down's readying". Not
# part of `make bench`:
#   cp Tests/bench/experiments/18-exp-pressed.sh Tests/vm/bench/
#   BENCH_ONLY=18-exp-pressed BENCH_N=100 BENCH_EXTRA_BINS=/tmp/actiond-trial \
#     EXP_SERIES="prep:actiond-trial noprep:actiond-trial:ACTIOND_EXP_NOPREP=1" \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-pressed.py OUT_DIR/serial.log
# timeout: 2400
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

for k in $(seq "${EXP_ROUNDS:-3}"); do
  for s in $EXP_SERIES; do
    tag=${s%%:*}
    rest=${s#*:}
    bin=${rest%%:*}
    var=
    [ "$rest" != "$bin" ] && var=${rest#*:}
    if [ -n "$var" ]; then act_holds "$tag-$k" "$bin" env "$var"; else act_holds "$tag-$k" "$bin"; fi
  done
done
