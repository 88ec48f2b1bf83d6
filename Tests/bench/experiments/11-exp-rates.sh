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

act_start() {  # TAG BIN [WRAPPER...]
  _t=$1; _b=$(command -v "$2"); shift 2
  cat >"$_t-config.json" <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-bench-button" },
               holdThresholdMs: $BENCH_HOLD_MS } ],
  controls: [
    { kind: "org.actiond.bench.record", type: "toggle", displayName: "Bench",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$BENCHTOOL", "record", "actiond", "$WORK/$_t-rec.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.bench.record" } },
}
CONFIG
  mkdir -p controls.d
  rm -f "$SOCK"
  spawn "$_t-daemon.log" "$@" "$_b" --config "$_t-config.json" --socket "$SOCK" --state-dir "$STATE" --log-level warning
  DAEMON_PID=$SPAWN_PID
  until [ -S "$SOCK" ] && ctl status 2>/dev/null | grep -q '"bound":true'; do usleep 50000; done
  usleep 500000
  spawn "$_t-sub.out" $BENCHTOOL subscribe "$SOCK" "$WORK/$_t-events.txt"
  SUB_PID=$SPAWN_PID
  wait_for_line "$_t-sub.out" '^subscribed' 10000
}
act_stop() {  # TAG
  kill -TERM "$SUB_PID" 2>/dev/null
  wait_pid "$SUB_PID" 10000 "the subscriber"
  grep -E '^(pressed|held|performing) ' "$1-events.txt" >"$1-events.log"
  kill -TERM "$DAEMON_PID"
  wait_pid "$DAEMON_PID" 10000 "actiond after SIGTERM"
}
act_holds() {  # TAG BIN [WRAPPER...]
  bdev_start actiond-bench-button "$WORK/$1-down.log"
  act_start "$@"
  step "actiond $1, $BENCH_N holds"
  hold_presses
  usleep 500000
  act_stop "$1"
  bdev_stop
}
abuse_phase() {  # TAG BIN [WRAPPER...]; then reactors under the same abuse ($ABUSE_REACTORS)
  _at=$1
  bdev_start actiond-bench-button "$WORK/$_at-down.log"
  act_start "$@"
  spawn "$_at-abuse.out" $BENCHTOOL abuse "$SOCK" "$BENCH_ABUSE_CLIENTS" 3600
  ABUSE_PID=$SPAWN_PID
  sleep 2
  step "actiond $_at under abuse, $BENCH_ABUSE_N holds"
  _c0=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"); _w0=$(now_ms)
  bdev_cmd "press $BENCH_ABUSE_N $((BENCH_HOLD_MS + 30)) 70"
  _c1=$(awk '{ print $14 + $15 }' "/proc/$DAEMON_PID/stat"); _w1=$(now_ms)
  echo "cpu $_at daemon $((_c1 - _c0)) ticks in $((_w1 - _w0)) ms" >"$_at-cpu.txt"
  usleep 500000
  bdev_stop
  for _r in $ABUSE_REACTORS; do
    REACTOR_N=100 reactor_holds "$_at-r-subnb" --subscriber --noblock
  done
  kill -0 "$ABUSE_PID" 2>/dev/null || fail "abuse ended early"
  kill -TERM "$ABUSE_PID" 2>/dev/null
  wait_pid "$ABUSE_PID" 20000 "benchtool abuse"
  { grep abuse "$_at-abuse.out"; cat "$_at-cpu.txt"; } >"$_at-abuse.log" || true
  act_stop "$_at"
}

# Boot 4: with actiond-trial3 (the kept build, with the free dead peers, plus the override)
# in BENCH_EXTRA_BINS, the kept figures with and without the accept limit. Boot 2: the loop
# after this one (actiond-trial: a43114e's code plus the override).
if command -v actiond-trial3 >/dev/null; then
  for k in 1 2; do
    ABUSE_REACTORS=subnb abuse_phase a-base-$k actiond-base
    ABUSE_REACTORS= abuse_phase a-acc16-$k actiond-trial3
    ABUSE_REACTORS= abuse_phase a-noacc-$k actiond-trial3 env ACTIOND_EXP_LIMITS=16,4,131072,65536,1000000,1000000
  done
  exit 0
fi
for k in 1 2; do
  ABUSE_REACTORS=subnb abuse_phase a-base-$k actiond-base
  ABUSE_REACTORS= abuse_phase a-std-$k actiond-trial env ACTIOND_EXP_LIMITS=64,32,262144,262144,64,128
  ABUSE_REACTORS= abuse_phase a-s8-$k actiond-trial env ACTIOND_EXP_LIMITS=32,8,262144,131072,64,32
  ABUSE_REACTORS= abuse_phase a-s4-$k actiond-trial env ACTIOND_EXP_LIMITS=16,4,131072,65536,32,16
done
