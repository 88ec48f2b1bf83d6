# Bench: Debian's triggerhappy (thd) running the recording command on the key's press.
# timeout: 300
. "$VM_LIB"
. /vm/bench-lib.sh
need_bin thd

bdev_start actiond-bench-thd
printf 'KEY_PROG1\t1\t%s record thd %s\n' "$BENCHTOOL" "$WORK/thd-rec.log" >triggers.conf
spawn thd.out thd --triggers "$WORK/triggers.conf" "$BDEV_NODE"
THD_PID=$SPAWN_PID
sleep 1
kill -0 "$THD_PID" 2>/dev/null || fail "thd exited: $(cat thd.out)"
memory start "$THD_PID" >mem.log
step "thd, $BENCH_N presses"
bdev_cmd "press $BENCH_N 30 70"
sleep 1
memory presses "$THD_PID" >>mem.log
kill -TERM "$THD_PID"
bdev_stop
