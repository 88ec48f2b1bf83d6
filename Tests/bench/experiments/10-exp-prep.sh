# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 15 item 5), one boot: the deadline turn's steps, stamped by trial builds
# (10-stamps-trial.py applied to a copy of its day's tree, commit f17e010, never committed
# to Sources) of the build before (actiond-stampA) and, when given, of the build with argv/envp
# prepared at configuration load (actiond-stampB), interleaved rounds of idle holds. Both in
# BENCH_EXTRA_BINS. docs/benchmarks-notebook.md, hand-written section "Rate limits per client".
#   cp Tests/bench/experiments/10-exp-prep.sh Tests/vm/bench/
#   BENCH_ONLY=10-exp-prep BENCH_N=100 BENCH_EXTRA_BINS="/tmp/actiond-stampA /tmp/actiond-stampB" \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-prep.py OUT_DIR/serial.log
# timeout: 1500
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh
for k in 1 2; do
  act_holds i-stampA-$k actiond-stampA env ACTIOND_EXP_STAMPS=1
  if command -v actiond-stampB >/dev/null; then act_holds i-stampB-$k actiond-stampB env ACTIOND_EXP_STAMPS=1; fi
done
