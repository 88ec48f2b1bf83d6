# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 15 / issue 13 item 14), one boot: reactor variants, actiond variants, abuse;
# the hand-written section "The C reactor with actiond's deadline work, and under the same
# abuse" of docs/benchmarks-notebook.md. Not part of `make bench`: copy it into Tests/vm/bench/, then
#   BENCH_ONLY=05-exp-lat BENCH_N=200 Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
# (set EXP_BOOT=1 below for the first boot's sequence; BENCH_EXTRA_BINS for its variant build
# actiond-lb). The pause phases (ACTIOND_LOW_PAUSE_US) need the trial build described there;
# without it they run the simple way twice.
# timeout: 2000
. "$VM_LIB"
. /vm/bench-lib.sh

$BENCHTOOL sched -10 /bin/sh -c 'echo "child $(cut -d" " -f19 /proc/self/stat) shell $(cut -d" " -f19 /proc/$$/stat)"' >nice-check.log 2>&1
step "spawn floor"
$BENCHTOOL spawnfloor "$BENCH_N" "$WORK/spawn-rec.log" >spawn-t0.log

. /vm/exp-lib.sh

if [ "${EXP_BOOT:-2}" = 1 ]; then
  # The first boot: one run per series.
  reactor_holds r-plain
  act_holds a-plain actiond
  reactor_holds r-sub --subscriber
  reactor_holds r-nb --noblock
  reactor_holds r-subnb --subscriber --noblock
  act_holds a-nice actiond $BENCHTOOL sched -10
  reactor_holds r-plain2
  act_holds a-plain2 actiond
  ABUSE_REACTORS="plain subnb" abuse_phase ab-plain actiond
  ABUSE_REACTORS="plain" abuse_phase ab-nice actiond $BENCHTOOL sched -10
  if command -v actiond-lb >/dev/null; then
    ABUSE_REACTORS="plain" abuse_phase ab-lb actiond-lb
  fi
  exit 0
fi
# The second boot: interleaved rounds.
export ACTIOND_LOW_PAUSE_US=0
BENCH_N_SAVE=$BENCH_N
BENCH_N=100
for k in 1 2 3; do
  reactor_holds r-plain-$k
  reactor_holds r-subnb-$k --subscriber --noblock
  act_holds a-plain-$k actiond
  reactor_holds r-sub-$k --subscriber
done
BENCH_ABUSE_N=150
for k in 1 2; do
  for p in 0 1000; do
    ABUSE_REACTORS="subnb" REACTOR_N=100 abuse_phase ab-p$p-$k actiond env ACTIOND_LOW_PAUSE_US=$p
  done
done
