# SPDX-License-Identifier: Apache-2.0
# Experiment (issue 13 item 14, issue 15 item 5), one boot: the clients' quiet around a
# deadline, alternating within one daemon, and CLOCK_MONOTONIC stamps of the deadline turn;
# docs/benchmarks-notebook.md, hand-written section "The clients' quiet around a deadline". Not part
# of `make bench`. It needs the trial build of Tests/bench/experiments/06-quiet-trial.patch
# (never committed to the sources: it reads ACTIOND_EXP_QUIET=BEFORE_US,AFTER_US,
# ACTIOND_EXP_ALT (quiet only for deadlines on an even millisecond, so both halves of one
# series see the same guest at the same time) and ACTIOND_EXP_STAMPS (one "stamp" line per
# deadline on stderr at exit: deadline, epoll_wait return, timer handler, device drained,
# first announcement, runIntent, posix_spawn call, its return, run() return, handler end)),
# on a checkout of its day's tree, commit 7e56e2b (the patch's header says why):
#   patch -p1 <Tests/bench/experiments/06-quiet-trial.patch
#   swift build -c release --static-swift-stdlib -Xlinker -L$PWD/mk/static-libstdc++ --product actiond
#   cp .build/release/actiond /tmp/actiond-exp; patch -R -p1 <Tests/bench/experiments/06-quiet-trial.patch
#   cp Tests/bench/experiments/06-exp-quiet.sh Tests/vm/bench/
#   BENCH_ONLY=06-exp-quiet BENCH_EXTRA_BINS=/tmp/actiond-exp Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
# Deadline parity per sample: (the pressed event's deadline in ms) % 2 == 0 had the quiet.
# timeout: 2000
. "$VM_LIB"
. /vm/bench-lib.sh

. /vm/exp-lib.sh

BENCH_N=100
reactor_holds r-subnb-1 --subscriber --noblock
BENCH_ABUSE_N=400
ABUSE_REACTORS=subnb REACTOR_N=100 abuse_phase a-alt20 actiond-exp env ACTIOND_EXP_QUIET=20000,10000 ACTIOND_EXP_ALT=1 ACTIOND_EXP_STAMPS=1
BENCH_N=200
act_holds i-alt20 actiond-exp env ACTIOND_EXP_QUIET=20000,10000 ACTIOND_EXP_ALT=1 ACTIOND_EXP_STAMPS=1
