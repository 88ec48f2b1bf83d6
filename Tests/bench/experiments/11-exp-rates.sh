# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 13 item 14), one boot: the clients' rate limits at several settings, under
# the 50 abusers only (idle the limits change nothing: 09-exp-bucket.sh), interleaved rounds:
# the build before them (actiond-base) and a trial build (actiond-trial: the kept build plus
# 11-limits-trial.py's ACTIOND_EXP_LIMITS override, never committed) at each setting, with
# the daemon's CPU ticks during its abused holds and the C reactor + subscriber under the
# same abuse once per round. Both binaries in BENCH_EXTRA_BINS.
#   cp Tests/bench/experiments/11-exp-rates.sh Tests/vm/bench/
#   BENCH_ONLY=11-exp-rates BENCH_ABUSE_N=100 BENCH_EXTRA_BINS="/tmp/actiond-base /tmp/actiond-trial" \
#     Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-quiet.py OUT_DIR/serial.log
# Settings: requestBurst,requestsPerSecond,byteBurst,byteRate,acceptBurst,acceptsPerSecond.
# timeout: 2300
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

# Boot 4: with actiond-trial3 (the kept build, with the free dead peers, plus the override)
# in BENCH_EXTRA_BINS, the kept figures with and without the accept limit. Boot 2: the loop
# after this one (actiond-trial: a43114e's code plus the override).
if command -v actiond-trial3 >/dev/null; then
  for k in 1 2; do
    ABUSE_REACTORS=subnb REACTOR_N=100 abuse_phase a-base-$k actiond-base
    ABUSE_REACTORS= abuse_phase a-acc16-$k actiond-trial3
    ABUSE_REACTORS= abuse_phase a-noacc-$k actiond-trial3 env ACTIOND_EXP_LIMITS=16,4,131072,65536,1000000,1000000
  done
  exit 0
fi
for k in 1 2; do
  ABUSE_REACTORS=subnb REACTOR_N=100 abuse_phase a-base-$k actiond-base
  ABUSE_REACTORS= abuse_phase a-std-$k actiond-trial env ACTIOND_EXP_LIMITS=64,32,262144,262144,64,128
  ABUSE_REACTORS= abuse_phase a-s8-$k actiond-trial env ACTIOND_EXP_LIMITS=32,8,262144,131072,64,32
  ABUSE_REACTORS= abuse_phase a-s4-$k actiond-trial env ACTIOND_EXP_LIMITS=16,4,131072,65536,32,16
done
