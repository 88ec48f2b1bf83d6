# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 13 item 14), one boot: command start under the 50 abusers against the
# clients' quiet after the command (EffectInterpreter.ClientQuiet.after: 10 ms today, ended early
# by the command's first output or exit), a trial build (13-quiet-trial.py's
# ACTIOND_EXP_QUIET=BEFORE,AFTER override, never committed) at several settings, interleaved
# rounds, with the C reactor + subscriber under the same abuse once per round.
#   cp Tests/bench/experiments/13-exp-abuse-quiet.sh Tests/vm/bench/
#   BENCH_ONLY=13-exp-abuse-quiet BENCH_ABUSE_N=100 BENCH_EXTRA_BINS=/tmp/actiond-trial \
#     [EXP_QUIETS="q10:50,10 q40:50,40 q0:50,0"] Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   python3 Tests/bench/experiments/exp-quiet.py OUT_DIR/serial.log
# timeout: 2300
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

for k in $(seq "${EXP_ROUNDS:-2}"); do
  _first=1
  for _q in ${EXP_QUIETS:-q10:50,10 q40:50,40 q0:50,0}; do
    if [ $_first = 1 ]; then _r=subnb; else _r=; fi
    _first=0
    ABUSE_REACTORS=$_r REACTOR_N=$BENCH_ABUSE_N abuse_phase "a-${_q%%:*}-$k" actiond-trial env "ACTIOND_EXP_QUIET=${_q#*:}"
  done
done
