# Guest helpers of the bench scenarios (sourced after lib.sh). The settings come from
# /vm/bench.env, written by Tests/bench/vm.sh: BENCH_N (samples per figure), BENCH_HOLD_MS
# (hold threshold), BENCH_IDLE_S (idle window), BENCH_BLAST (presses for the RSS growth),
# BENCH_ABUSE_N (holds under abusive clients, 0 skips them), BENCH_ABUSE_CLIENTS,
# BENCH_GESTURE_N (holds per button and double presses in 05-gestures, 0 skips it).
. /vm/bench.env
: "${BENCH_ABUSE_N:=0}" "${BENCH_ABUSE_CLIENTS:=50}"
BENCHTOOL=/usr/local/bin/benchtool

# bdev_start NAME [DOWN_FILE]: a `benchtool device` (uinput, KEY_PROG1) fed from bdev_cmd; its
# key-down kernel timestamps go to DOWN_FILE ($WORK/down.log by default). Sets BDEV_NODE.
bdev_start() {
  rm -f "$WORK/bdev.fifo"
  mkfifo "$WORK/bdev.fifo"
  $BENCHTOOL device "$1" "${2:-$WORK/down.log}" <"$WORK/bdev.fifo" >"$WORK/bdev.out" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- &
  BDEV_PID=$!
  exec 3>"$WORK/bdev.fifo"
  BDEV_CMDS=0
  wait_for_line "$WORK/bdev.out" '^node ' 10000
  BDEV_NODE=$(awk '$1 == "node" { print $2 }' "$WORK/bdev.out")
}

# bdev_cmd COMMAND [TIMEOUT_MS]: runs one device command (press COUNT HOLD GAP, blast N,
# sleep MS) and waits for it to finish.
bdev_cmd() {
  echo "$1" >&3
  BDEV_CMDS=$((BDEV_CMDS + 1))
  _deadline=$(($(now_ms) + ${2:-600000}))
  while [ "$(grep -c '^ok$' "$WORK/bdev.out")" -lt "$BDEV_CMDS" ]; do
    grep -q 'benchtool' "$WORK/bdev.out" && fail "device: $(cat "$WORK/bdev.out")"
    [ "$(now_ms)" -lt "$_deadline" ] || fail "device command '$1' did not finish"
    usleep 50000
  done
}

bdev_stop() {
  exec 3>&-
  wait "$BDEV_PID" || fail "benchtool device failed: $(cat "$WORK/bdev.out")"
}

# bench_daemon CONFIG [BOUND]: actiond on CONFIG, checked once at the debug level start_daemon
# runs it at (until BOUND, wait_bound by default, says its buttons are bound), then run again
# at the level a system runs (warning), so that no figure pays for debug logging. Its output
# goes to daemon-bench.log; DAEMON_PID is its pid.
bench_daemon() {
  _bd_bound=${2:-wait_bound}
  start_daemon "$1"
  $_bd_bound
  stop_daemon
  spawn daemon-bench.log actiond --config "$1" --socket "$SOCK" --state-dir "$STATE" --log-level warning
  DAEMON_PID=$SPAWN_PID
  $_bd_bound
}

# hold_presses: BENCH_N presses of threshold + 30 ms, 70 ms apart.
hold_presses() {
  bdev_cmd "press $BENCH_N $((BENCH_HOLD_MS + 30)) 70"
}

# memory LABEL PID: "mem LABEL VmRSS_kB RssAnon_kB" from /proc/PID/status.
memory() {
  awk -v l="$1" '$1 == "VmRSS:" { r = $2 } $1 == "RssAnon:" { a = $2 } END { print "mem", l, r, a }' "/proc/$2/status"
}

# switches PID: voluntary + involuntary context switches so far.
switches() {
  awk '$1 ~ /ctxt_switches/ { s += $2 } END { print s }' "/proc/$1/status"
}

# wait_pid PID TIMEOUT_MS WHAT: waits for a background process to end.
wait_pid() {
  _deadline=$(($(now_ms) + $2))
  while kill -0 "$1" 2>/dev/null; do
    [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ] && break
    [ "$(now_ms)" -lt "$_deadline" ] || fail "$3 did not finish within $2 ms"
    usleep 50000
  done
  wait "$1" || true
}

# reactor_holds TAG [OPTIONS...]: BENCH_N holds (or $REACTOR_N) through `benchtool reactor` on
# its own uinput device; its figures go to TAG.log, its recording command's to TAG-rec.log
# (tag TAG), its subscriber's events (option --subscriber) to TAG-events.log.
reactor_holds() {
  _tag=$1
  shift
  _opts=
  for _o in "$@"; do
    if [ "$_o" = --subscriber ]; then _opts="$_opts --subscriber $WORK/$_tag-events.log"; else _opts="$_opts $_o"; fi
  done
  bdev_start "actiond-bench-$_tag" "$WORK/$_tag-down.log"
  # shellcheck disable=SC2086
  spawn "$_tag.out" $BENCHTOOL reactor "$BDEV_NODE" "$BENCH_HOLD_MS" "${REACTOR_N:-$BENCH_N}" "$WORK/$_tag.log" $_opts \
    $BENCHTOOL record "$_tag" "$WORK/$_tag-rec.log"
  _reactor=$SPAWN_PID
  wait_for_line "$_tag.out" '^ready' 10000
  step "C reactor $_tag ($*), ${REACTOR_N:-$BENCH_N} holds"
  bdev_cmd "press ${REACTOR_N:-$BENCH_N} $((BENCH_HOLD_MS + 30)) 70"
  # It ends by itself after its holds; one that missed some is stopped (the report counts).
  usleep 500000
  kill -TERM "$_reactor" 2>/dev/null
  wait_pid "$_reactor" 10000 "the reactor $_tag"
  bdev_stop
}
