# SPDX-License-Identifier: Apache-2.0
# Bench: Debian's triggerhappy (thd) running the recording command on the key's press.
# timeout: 300
. "$VM_LIB"
. /vm/bench-lib.sh
need_bin thd

bdev_start actiond-bench-thd
printf 'KEY_PROG1\t1\t%s record thd %s\n' "$BENCHTOOL" "$WORK/thd-rec.log" >triggers.conf
# thd runs a trigger's command with system(3), i.e. `/bin/sh -c`. On Debian that is dash;
# this VM's /bin/sh is the busybox shell, so point it at Debian's dash while thd runs.
need_bin dash
sh_was=$(readlink /bin/sh)
ln -sf /usr/local/bin/dash /bin/sh
spawn thd.out thd --triggers "$WORK/triggers.conf" "$BDEV_NODE"
THD_PID=$SPAWN_PID
sleep 1
kill -0 "$THD_PID" 2>/dev/null || fail "thd exited: $(cat thd.out)"
memory start "$THD_PID" >mem.log
step "thd, $BENCH_N presses"
# 200 ms apart: a command through dash can take longer than 70 ms, and thd runs them one
# after the other (system(3) waits), so closer presses would queue behind a slow one.
bdev_cmd "press $BENCH_N 30 170"
sleep 1
memory presses "$THD_PID" >>mem.log
kill -TERM "$THD_PID"
ln -sf "$sh_was" /bin/sh
bdev_stop
