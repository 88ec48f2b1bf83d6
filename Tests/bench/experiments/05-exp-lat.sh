# Experiment (issue 15 / issue 13 item 14), one boot: reactor variants, actiond variants, abuse;
# the hand-written section "The C reactor with actiond's deadline work, and under the same
# abuse" of docs/benchmarks.md. Not part of `make bench`: copy it into Tests/vm/bench/, then
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
  spawn "$_t-daemon.out" "$@" "$_b" --config "$_t-config.json" --socket "$SOCK" --state-dir "$STATE" --log-level warning
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
  bdev_cmd "press $BENCH_ABUSE_N $((BENCH_HOLD_MS + 30)) 70"
  usleep 500000
  bdev_stop
  for _r in $ABUSE_REACTORS; do
    case $_r in
      plain) REACTOR_N=$BENCH_ABUSE_N reactor_holds "$_at-r-plain" ;;
      subnb) REACTOR_N=${REACTOR_N:-$BENCH_ABUSE_N} reactor_holds "$_at-r-subnb" --subscriber --noblock ;;
    esac
  done
  kill -0 "$ABUSE_PID" 2>/dev/null || fail "abuse ended early"
  kill -TERM "$ABUSE_PID" 2>/dev/null
  wait_pid "$ABUSE_PID" 20000 "benchtool abuse"
  grep abuse "$_at-abuse.out" >"$_at-abuse.log" || true
  act_stop "$_at"
}

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
