# SPDX-License-Identifier: Apache-2.0
# Guest helpers of the bench scenarios (sourced after lib.sh). The settings come from
# /vm/bench.env, written by Tests/bench/vm.sh: BENCH_N (samples per figure), BENCH_HOLD_MS
# (hold threshold), BENCH_IDLE_S (idle window), BENCH_BLAST (presses for the RSS growth),
# BENCH_ABUSE_N (holds under abusive clients, 0 skips them), BENCH_ABUSE_CLIENTS,
# BENCH_GESTURE_N (holds per button and double presses in 05-gestures, 0 skips it).
. /vm/bench.env
: "${BENCH_ABUSE_N:=0}" "${BENCH_ABUSE_CLIENTS:=50}"
BENCHTOOL=/usr/local/bin/benchtool

# tool_start NAME DOWN_FILE CMD_FD ACK_FD LOG [OPTION]: a `benchtool device` NAME (uinput,
# KEY_PROG1; OPTION --leds: with LEDs, their EV_LED events logged too), its key-down kernel
# timestamps in DOWN_FILE, fed through fd CMD_FD; what it answers ("node ...", then one "ok"
# per command) comes back through fd ACK_FD and is copied to LOG, its errors to LOG.err. Sets
# TOOL_PID and TOOL_NODE.
tool_start() {
  rm -f "$WORK/$1.cmd" "$WORK/$1.ack"
  mkfifo "$WORK/$1.cmd" "$WORK/$1.ack"
  : >"$5"
  # shellcheck disable=SC2086 # no option: no argument
  $BENCHTOOL device "$1" "$2" ${6:-} <"$WORK/$1.cmd" >"$WORK/$1.ack" 2>"$5.err" 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  TOOL_PID=$!
  eval "exec $3>\"\$WORK/$1.cmd\" $4<\"\$WORK/$1.ack\""
  tool_answer "$4" "$5" 'node *'
  TOOL_NODE=$(awk '$1 == "node" { print $2 }' "$5")
}

# tool_answer ACK_FD LOG PATTERN: reads the device tool's answers until one matches PATTERN
# (a shell pattern). It blocks in read(): a loop polling a file every few milliseconds (a
# grep and a usleep each time) would take the one vCPU from the processes being measured.
# The tool exiting (a failed command) ends the read with EOF: that fails, with its errors;
# a tool that hangs is the scenario's timeout's.
tool_answer() {
  while IFS= read -r _ta <&"$1"; do
    echo "$_ta" >>"$2"
    # shellcheck disable=SC2254
    case $_ta in $3) return 0 ;; esac
  done
  fail "device tool: $(cat "$2" "$2.err")"
}

# bdev_start NAME [DOWN_FILE [OPTION]]: the bench's device (tool_start on fds 3 and 8), fed
# from bdev_cmd; its key-down kernel timestamps go to DOWN_FILE ($WORK/down.log by default);
# OPTION: tool_start's. Sets BDEV_NODE.
bdev_start() {
  tool_start "$1" "${2:-$WORK/down.log}" 3 8 "$WORK/bdev.out" "${3:-}"
  BDEV_PID=$TOOL_PID
  BDEV_NODE=$TOOL_NODE
}

# bdev_cmd COMMAND: runs one device command (press COUNT HOLD GAP, double ..., blast N,
# sleep MS) and waits for it to finish.
bdev_cmd() {
  echo "$1" >&3
  tool_answer 8 "$WORK/bdev.out" ok
}

bdev_stop() {
  exec 3>&-
  wait "$BDEV_PID" || fail "benchtool device failed: $(cat "$WORK/bdev.out" "$WORK/bdev.out.err")"
  exec 8<&-
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

# subscriber_start NAME [COUNT]: a `benchtool subscribe` on actiond's socket, connected before
# the presses (SUB_PID): it writes NAME.txt and ends by itself after COUNT `performed`.
subscriber_start() {
  spawn "$1.out" $BENCHTOOL subscribe "$SOCK" "$WORK/$1.txt" ${2:+"$2"}
  SUB_PID=$SPAWN_PID
  wait_for_line "$1.out" '^subscribed' 10000
}

# subscriber_end NAME TIMEOUT_MS WHAT: waits up to TIMEOUT_MS for subscriber_start's subscriber
# to end (should some `performed` be missing it is stopped, and the report shows the count),
# then keeps its `pressed`, `held` and `performing` in NAME.log.
subscriber_end() {
  _deadline=$(($(now_ms) + $2))
  while kill -0 "$SUB_PID" 2>/dev/null && [ "$(now_ms)" -lt "$_deadline" ]; do usleep 50000; done
  kill -TERM "$SUB_PID" 2>/dev/null
  wait_pid "$SUB_PID" 10000 "$3"
  grep -E '^(pressed|held|performing) ' "$1.txt" >"$1.log"
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
