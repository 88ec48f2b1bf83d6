# Bench: actiond (release build) on the real evdev path. Idle wakeups and memory after start;
# BENCH_N holds with an exec intent running the recording command, watched by a subscriber
# (pressed/held receipt times); memory after them and after BENCH_BLAST more presses.
# timeout: 600
. "$VM_LIB"
. /vm/bench-lib.sh

bdev_start actiond-bench-button
mkdir -p controls.d
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-bench-button" },
               holdThresholdMs: $BENCH_HOLD_MS } ],
  controls: [
    { kind: "org.actiond.bench.record", type: "toggle", displayName: "Bench",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$BENCHTOOL", "record", "actiond", "$WORK/actiond-rec.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.bench.record" } },
}
CONFIG
start_daemon config.json
wait_bound
# The daemon logs at debug level in start_daemon; a bench must not pay for that. Restart at
# the level a system runs (warning), now that the configuration is known to work.
stop_daemon
spawn daemon-bench.log actiond --config config.json --socket "$SOCK" --state-dir "$STATE" --log-level warning
DAEMON_PID=$SPAWN_PID
until [ -S "$SOCK" ] && ctl status 2>/dev/null | grep -q '"bound":true'; do usleep 50000; done
usleep 500000
memory start "$DAEMON_PID" >mem.log

step "idle window, $BENCH_IDLE_S s"
s0=$(switches "$DAEMON_PID")
sleep "$BENCH_IDLE_S"
s1=$(switches "$DAEMON_PID")
echo "idle $BENCH_IDLE_S $((s1 - s0))" >>mem.log

spawn sub.out $BENCHTOOL subscribe "$SOCK" "$WORK/events.txt" "$BENCH_N"
SUB_PID=$SPAWN_PID
wait_for_line sub.out '^subscribed' 10000
step "$BENCH_N holds"
hold_presses
wait_pid "$SUB_PID" 30000 "the subscriber"
grep -E '^(pressed|held) ' events.txt >events.log
memory holds "$DAEMON_PID" >>mem.log

step "$BENCH_BLAST presses ($((BENCH_BLAST * 2)) key events) with a subscriber"
spawn sub2.out $BENCHTOOL subscribe "$SOCK" "$WORK/blast.txt" "$BENCH_BLAST"
SUB_PID=$SPAWN_PID
wait_for_line sub2.out '^subscribed' 10000
bdev_cmd "blast $BENCH_BLAST"
# Every press should come back as a `released`; a shortfall means the daemon's evdev buffer
# overflowed (SYN_DROPPED). Wait until the count stops growing and record what arrived.
seen=-1
while kill -0 "$SUB_PID" 2>/dev/null && [ "$(grep -c '^released ' blast.txt)" != "$seen" ]; do
  seen=$(grep -c '^released ' blast.txt)
  sleep 2
done
kill -TERM "$SUB_PID" 2>/dev/null
wait "$SUB_PID"
memory blast "$DAEMON_PID" >>mem.log
echo "blast $BENCH_BLAST $(grep -c '^released ' blast.txt)" >>mem.log
kill -TERM "$DAEMON_PID"
wait_pid "$DAEMON_PID" 10000 "actiond after SIGTERM"
bdev_stop
expect_count actiond-rec.log '^actiond ' "$BENCH_N"
