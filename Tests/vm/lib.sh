# Guest helper library for VM scenarios: source it with `. "$VM_LIB"`.
#
# A scenario is a busybox sh script run by /init in its own session, with the current directory
# $WORK (a fresh per-scenario directory) and $SCENARIO set. Exit 0 = PASS, 77 = SKIP, anything
# else = FAIL. Every *.log file left in $WORK is printed with the result, so write daemon and
# reader output to *.log files. Everything the scenario started is killed when it ends.
#
# Time values are in milliseconds unless the name says otherwise.

set -u

# --- results -------------------------------------------------------------------------------

# fail MESSAGE: the scenario fails with MESSAGE.
fail() {
  echo "FAIL: $*"
  exit 1
}

# skip MESSAGE: the scenario cannot run here (e.g. a binary is not built yet).
skip() {
  echo "SKIP: $*"
  exit 77
}

# step MESSAGE: a progress line in the scenario's log, with the guest's uptime.
step() {
  read -r _t _ </proc/uptime
  echo "[$_t] $*"
}

# need_bin NAME...: skips the scenario unless every NAME is on PATH.
need_bin() {
  for _b in "$@"; do
    command -v "$_b" >/dev/null 2>&1 || skip "$_b is not in this image"
  done
}

# --- waiting and checking ------------------------------------------------------------------

# now_ms: milliseconds since boot, to 10 ms (from /proc/uptime).
now_ms() {
  read -r _t _ </proc/uptime
  echo "${_t%.*}${_t#*.}0"
}

# wait_for_line FILE PATTERN TIMEOUT_MS: waits until a line of FILE matches the extended
# regular expression PATTERN; fails the scenario after TIMEOUT_MS.
wait_for_line() {
  _deadline=$(($(now_ms) + $3))
  while ! grep -qE -- "$2" "$1" 2>/dev/null; do
    if [ "$(now_ms)" -ge "$_deadline" ]; then
      echo "--- $1 (waited $3 ms for /$2/):"
      cat "$1" 2>/dev/null || echo "(missing)"
      fail "no line matching /$2/ in $1 within $3 ms"
    fi
    usleep 20000
  done
}

# wait_for_file PATH TIMEOUT_MS: waits until PATH exists.
wait_for_file() {
  _deadline=$(($(now_ms) + $2))
  while [ ! -e "$1" ]; do
    [ "$(now_ms)" -lt "$_deadline" ] || fail "$1 did not appear within $2 ms"
    usleep 20000
  done
}

# wait_gone PATH TIMEOUT_MS: waits until PATH no longer exists.
wait_gone() {
  _deadline=$(($(now_ms) + $2))
  while [ -e "$1" ]; do
    [ "$(now_ms)" -lt "$_deadline" ] || fail "$1 still exists after $2 ms"
    usleep 20000
  done
}

# count_lines FILE PATTERN: how many lines of FILE match the extended regex PATTERN.
count_lines() {
  grep -cE -- "$2" "$1" 2>/dev/null || true
}

# expect_count FILE PATTERN N: exactly N lines of FILE match PATTERN.
expect_count() {
  _n=$(count_lines "$1" "$2")
  if [ "$_n" != "$3" ]; then
    echo "--- $1:"
    cat "$1" 2>/dev/null || echo "(missing)"
    fail "expected $3 lines matching /$2/ in $1, found $_n"
  fi
}

# expect_line FILE PATTERN: at least one line matches.
expect_line() {
  if ! grep -qE -- "$2" "$1" 2>/dev/null; then
    echo "--- $1:"
    cat "$1" 2>/dev/null || echo "(missing)"
    fail "no line matching /$2/ in $1"
  fi
}

# expect_no_line FILE PATTERN: no line matches.
expect_no_line() {
  if grep -qE -- "$2" "$1" 2>/dev/null; then
    echo "--- $1:"
    cat "$1"
    fail "unexpected line matching /$2/ in $1"
  fi
}

# SLACK_MS: how far a timing may stray because the host is busy. Under TCG the guest's clock
# follows the host's, so when the host deschedules QEMU (other builds on a 2-core machine)
# tens of milliseconds pass inside the guest between two instructions. On an idle host kernel
# timestamps are within ~1 ms of the sender's clock; compare against the reader's kernel
# timestamps (what the daemon sees too) wherever possible, and widen by SLACK_MS otherwise.
SLACK_MS=${VM_SLACK_MS:-40}

# expect_line_in_dir DIR NAME: DIR has an entry NAME (e.g. a udev tag index entry).
expect_line_in_dir() {
  [ -e "$1/$2" ] || fail "no $2 in $1 (has: $(ls "$1" 2>/dev/null | tr '\n' ' '))"
}

# expect_between VALUE LOW HIGH WHAT: LOW <= VALUE <= HIGH (integers).
expect_between() {
  [ "$1" -ge "$2" ] && [ "$1" -le "$3" ] || fail "$4 = $1, expected $2..$3"
}

# --- evdev timestamps (lines as printed by actiond-testdev) ---------------------------------

# key_time_us FILE KEY VALUE [NTH]: the timestamp (microseconds) of the NTH (default 1st)
# "sent"/"event" line for EV_KEY KEY VALUE in FILE; empty when there is none.
key_time_us() {
  awk -v key="$2" -v value="$3" -v nth="${4:-1}" '
    ($1 == "sent" || $1 == "event") && $3 == "EV_KEY" && $4 == key && $5 == value {
      # Leading zeros stripped: busybox awk reads "052703" as octal.
      if (++seen == nth) { split($2, t, "."); sub(/^0+/, "", t[2]); printf "%d%06d\n", t[1], t[2]; exit }
    }' "$1"
}

# hold_ms FILE KEY [NTH]: milliseconds between the NTH press and release of KEY in FILE.
hold_ms() {
  _down=$(key_time_us "$1" "$2" 1 "${3:-1}")
  _up=$(key_time_us "$1" "$2" 0 "${3:-1}")
  [ -n "$_down" ] && [ -n "$_up" ] || fail "no press/release of $2 in $1"
  echo $(((_up - _down) / 1000))
}

# --- processes -----------------------------------------------------------------------------

# spawn LOG COMMAND ARGS...: runs COMMAND in the background, stdout and stderr to LOG, and sets
# SPAWN_PID. Use it for every background process: it closes the descriptors the library keeps
# (3-6 hold device scripts open, 7 is the host channel), so a device's script ends when the
# scenario closes it rather than when the last process that inherited it exits.
spawn() {
  _log=$1
  shift
  "$@" </dev/null >"$_log" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- &
  SPAWN_PID=$!
}

# --- devices -------------------------------------------------------------------------------

# dev_start ID [create options...]: starts `actiond-testdev create` in the background with its
# commands coming from dev_cmd, output in $WORK/ID.log; waits until the device exists and sets
# DEV_NODE to its /dev/input/eventN.
dev_start() {
  _id=$1
  shift
  rm -f "$WORK/$_id.fifo"
  mkfifo "$WORK/$_id.fifo"
  actiond-testdev create "$@" <"$WORK/$_id.fifo" >"$WORK/$_id.log" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- &
  eval "DEV_PID_$_id=\$!"
  # Holding the write end open keeps the tool alive between commands.
  eval "exec $(_dev_fd "$_id")>\"\$WORK/\$_id.fifo\""
  wait_for_line "$WORK/$_id.log" '^created ' 5000
  DEV_NODE=$(awk '$1 == "created" { node = $2 } END { print node }' "$WORK/$_id.log")
}

# dev_cmd ID COMMAND...: sends commands (one per argument) to device ID and waits until it has
# run them all (it echoes a marker after them).
dev_cmd() {
  _id=$1
  shift
  _fd=$(_dev_fd "$_id")
  _mark="ok-$(now_ms)-$$-$#"
  for _c in "$@"; do echo "$_c" >&"$_fd"; done
  echo "echo $_mark" >&"$_fd"
  wait_for_line "$WORK/$_id.log" "^$_mark\$" 60000
}

# dev_stop ID: closes the device's script (the tool destroys it and exits) and waits.
dev_stop() {
  eval "exec $(_dev_fd "$1")>&-"
  eval "wait \$DEV_PID_$1" || fail "actiond-testdev $1 failed: $(tail -3 "$WORK/$1.log")"
}

# A file descriptor per device id, from 3 up (the shell owns 0-2; init owns 7 for the host).
_dev_fd() {
  case $1 in
    a | dev | dev1) echo 3 ;;
    b | dev2) echo 4 ;;
    c | dev3) echo 5 ;;
    d | dev4) echo 6 ;;
    *) fail "device id '$1' unknown: use a, b, c, d (or dev1..dev4)" ;;
  esac
}

# reader_start ID ARGS...: starts `actiond-testdev read ARGS` in the background, output in
# $WORK/ID.log, and waits until it has opened the device.
reader_start() {
  _id=$1
  shift
  spawn "$WORK/$_id.log" actiond-testdev read "$@"
  eval "READER_PID_$_id=\$SPAWN_PID"
  wait_for_line "$WORK/$_id.log" '^(opened|actiond-testdev:)' 10000
  expect_line "$WORK/$_id.log" '^opened '
}

# reader_wait ID: waits for reader ID to end (timeout, count or device gone).
reader_wait() {
  eval "wait \$READER_PID_$1" || fail "reader $1 failed: $(tail -3 "$WORK/$1.log")"
}

# --- the host ------------------------------------------------------------------------------

# host COMMAND ARGS...: asks the host runner (vmrun.py) to do something outside the guest and
# waits for it to finish: `host key-down KEY`, `host key-up KEY`, `host press KEY MS`,
# `host device_add DRIVER,ID=...,...`, `host device_del ID`, `host sleep MS`.
# Keys are QEMU's qcodes (a, ctrl, f1, volumeup, ...). Prints the host's reply data.
host() {
  [ -e /proc/self/fd/7 ] || fail "no host control channel (/dev/ttyS1)"
  HOST_SEQ=$((${HOST_SEQ:-0} + 1))
  _call="$SCENARIO-$HOST_SEQ"
  echo "call $_call $*" >&7
  while IFS= read -r _reply <&7; do
    case $_reply in
      "done $_call ok") return 0 ;;
      "done $_call ok "*) echo "${_reply#"done $_call ok "}"; return 0 ;;
      "done $_call error"*) fail "host $*: ${_reply#"done $_call error "}" ;;
      *) echo "host: ignoring '$_reply'" ;;
    esac
  done
  fail "host control channel closed during: $*"
}
