# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 32 item 7, VmRSS ≤ 8 MiB), one boot: actiond's memory after start and
# after BENCH_N holds, for each build in EXP_SERIES (TAG:BIN, BIN a name in the guest's PATH:
# actiond, or a variant build given with BENCH_EXTRA_BINS), EXP_ROUNDS interleaved rounds
# (2 by default), each on 02-actiond's configuration (the bench button, one store-backed exec
# toggle), started as 02-actiond's measured daemon is (log level warning) and measured the same
# way ("mem LABEL VmRSS_kB RssAnon_kB" from /proc/PID/status, 500 ms after its button is
# bound). docs/benchmarks-notebook.md, hand-written section "VmRSS: where it goes". Not part of
# `make bench`:
#   cp Tests/bench/experiments/17-exp-rss.sh Tests/vm/bench/
#   BENCH_ONLY=17-exp-rss BENCH_N=50 BENCH_EXTRA_BINS="/tmp/variant/actiond-osize" \
#     EXP_SERIES="base:actiond osize:actiond-osize" Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
#   grep '^mem ' OUT_DIR/serial.log
# timeout: 900
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

: >rss-mem.log
round=1
while [ "$round" -le "${EXP_ROUNDS:-2}" ]; do
  for s in ${EXP_SERIES:-base:actiond}; do
    tag=${s%%:*}
    bin=${s#*:}
    bdev_start actiond-bench-button "$WORK/$tag-$round-down.log"
    act_start "$tag-$round" "$bin"
    memory "$tag-$round-start" "$DAEMON_PID" >>rss-mem.log
    step "$tag round $round: $BENCH_N holds"
    hold_presses
    usleep 500000
    memory "$tag-$round-holds" "$DAEMON_PID" >>rss-mem.log
    act_stop "$tag-$round"
    bdev_stop
  done
  round=$((round + 1))
done
cat rss-mem.log
