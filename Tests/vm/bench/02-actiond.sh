# SPDX-License-Identifier: Apache-2.0
# Bench: actiond (release build) on the real evdev path. Idle wakeups and memory after start;
# BENCH_N holds with an exec intent running the recording command, watched by a subscriber
# (pressed/held receipt times); then BENCH_ABUSE_N more holds while BENCH_ABUSE_CLIENTS
# abusive local clients (`benchtool abuse`: garbage lines, 10 MB lines, connect storms,
# subscribers that never read) hammer the socket, watched by a second subscriber that
# connected first, then the C reactor (plain, and with a subscriber like actiond's) for as many
# holds under the same abuse; memory after the holds and after BENCH_BLAST more presses. (The
# threshold tick of a feedback LED is measured by 06-feedback, on a daemon of its own.)
# timeout: 800
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
# Checked at debug level, measured at the level a system runs (bench-lib.sh).
bench_daemon config.json
usleep 500000
memory start "$DAEMON_PID" >mem.log

step "idle window, $BENCH_IDLE_S s"
s0=$(switches "$DAEMON_PID")
sleep "$BENCH_IDLE_S"
s1=$(switches "$DAEMON_PID")
echo "idle $BENCH_IDLE_S $((s1 - s0))" >>mem.log

subscriber_start events "$BENCH_N"
step "$BENCH_N holds"
hold_presses
subscriber_end events 10000 "the subscriber"
memory holds "$DAEMON_PID" >>mem.log

if [ "$BENCH_ABUSE_N" -gt 0 ]; then
  # The same holds, the same recording command (its samples are told apart by their
  # ACTIOND_PRESS_TIME), with the abusers running. The subscriber connects before them, so
  # maxClients cannot refuse it.
  subscriber_start events-abuse "$BENCH_ABUSE_N"
  spawn abuse.out $BENCHTOOL abuse "$SOCK" "$BENCH_ABUSE_CLIENTS" 3600
  ABUSE_PID=$SPAWN_PID
  sleep 2
  kill -0 "$ABUSE_PID" 2>/dev/null || fail "benchtool abuse exited: $(cat abuse.out)"
  step "$BENCH_ABUSE_N holds under $BENCH_ABUSE_CLIENTS abusive clients"
  bdev_cmd "press $BENCH_ABUSE_N $((BENCH_HOLD_MS + 30)) 70"
  subscriber_end events-abuse 20000 "the abuse phase's subscriber"
  # The limit under the same abuse: the C reactors of 01-limits, each on a device of its own
  # (actiond binds only its own by name), while the abusers keep hammering actiond's socket
  # and actiond serves them: the same processes compete for the one vCPU.
  bdev_stop
  kill -0 "$ABUSE_PID" 2>/dev/null || fail "benchtool abuse exited: $(cat abuse.out)"
  REACTOR_N=$BENCH_ABUSE_N reactor_holds reactor-abuse
  REACTOR_N=$BENCH_ABUSE_N reactor_holds reactor-sub-abuse --subscriber --noblock
  REACTOR_N=$BENCH_ABUSE_N reactor_holds reactor-spawn-abuse --subscriber --noblock --spawn
  kill -0 "$ABUSE_PID" 2>/dev/null || fail "benchtool abuse exited: $(cat abuse.out)"
  kill -TERM "$ABUSE_PID" 2>/dev/null
  wait_pid "$ABUSE_PID" 20000 "benchtool abuse"
  kill -0 "$DAEMON_PID" 2>/dev/null || fail "actiond died under the abusive clients"
  bdev_start actiond-bench-button "$WORK/blast-down.log"
  until ctl status 2>/dev/null | grep -q '"bound":true'; do usleep 50000; done
  awk -v n="$BENCH_ABUSE_CLIENTS" '$1 == "abuse" { print "abuse", n, $3 }' abuse.out >abuse.log
  # Let the daemon drop what the abusers left behind; the blast's growth counts from here.
  sleep 1
  memory abused "$DAEMON_PID" >>mem.log
fi

step "$BENCH_BLAST presses ($((BENCH_BLAST * 2)) key events), paced by the daemon's announcements"
bdev_cmd "blast $BENCH_BLAST $SOCK"
usleep 500000
memory blast "$DAEMON_PID" >>mem.log
awk '$1 == "blast" { print "blast", $3, $5, $7 }' bdev.out >>mem.log
kill -TERM "$DAEMON_PID"
wait_pid "$DAEMON_PID" 10000 "actiond after SIGTERM"
bdev_stop
