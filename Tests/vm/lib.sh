# SPDX-License-Identifier: Apache-2.0
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

# wait_count FILE PATTERN N TIMEOUT_MS: until N lines of FILE match PATTERN.
wait_count() {
  _deadline=$(($(now_ms) + $4))
  while [ "$(count_lines "$1" "$2")" -lt "$3" ]; do
    [ "$(now_ms)" -lt "$_deadline" ] || { cat "$1"; fail "fewer than $3 lines matching /$2/ in $1 after $4 ms"; }
    usleep 20000
  done
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

# No scenario may assume how fast the machine is. Under TCG the guest's clock follows the
# host's, so when the host deschedules QEMU (builds, stress-ng, the other VM on a 2-core
# machine) hundreds of milliseconds can pass inside the guest between two instructions. So:
#
# - What a test checks against is the kernel's own timestamps (what the daemon sees too),
#   or causal order (a kernel stamp is never before the send that caused it, a timer never
#   fires before its deadline), never "within N ms of when it was sent".
# - A delay can only make a press longer. A hold (LONG_MS) stays a hold however loaded the
#   machine is; a short press (SHORT_MS) stays short only while the stall is below the gap
#   to the threshold, so the default threshold (HOLD_MS) leaves 1.3 s of gap, far beyond
#   any stall seen on a loaded machine. A scenario that must act mid-press (unplug, reload)
#   does so well before HOLD_MS too.
# - SLACK_MS bounds only what no load can move: the daemon stamps `held` at the deadline it
#   computed from the kernel's key-down stamp, so held - down is exact up to rounding.
# - CLOCK_SANITY_MS bounds a kernel-stamp-minus-send difference only to catch a wrong clock
#   (CLOCK_REALTIME would be off by decades), not to measure speed.
HOLD_MS=${HOLD_MS:-1500}
SHORT_MS=200
LONG_MS=$((HOLD_MS + 400))
SLACK_MS=${VM_SLACK_MS:-40}
CLOCK_SANITY_MS=10000
# WAIT_MS: how long a helper waits for something that must happen (a device, a daemon, an
# event) before failing. Only a broken daemon or kernel reaches it: it bounds a hang, it
# does not measure speed, so it is generous (a loaded host slows the guest severalfold).
WAIT_MS=${VM_WAIT_MS:-60000}

# expect_line_in_dir DIR NAME: DIR has an entry NAME (e.g. a udev tag index entry).
expect_line_in_dir() {
  [ -e "$1/$2" ] || fail "no $2 in $1 (has: $(ls "$1" 2>/dev/null | tr '\n' ' '))"
}

# expect_between VALUE LOW HIGH WHAT: LOW <= VALUE <= HIGH (integers).
expect_between() {
  [ "$1" -ge "$2" ] && [ "$1" -le "$3" ] || fail "$4 = $1, expected $2..$3"
}

# expect_near A B WHAT: |A - B| <= 1 (µs stamps that went through a millisecond field).
expect_near() {
  expect_between "$1" $(($2 - 1)) $(($2 + 1)) "$3"
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

# press_stamps FILE KEY N: the kernel stamps (µs) of the Nth press of KEY in a reader's
# FILE, in DOWN and UP (UP empty while the key is still down).
press_stamps() {
  DOWN=$(key_time_us "$1" "$2" 1 "$3")
  UP=$(key_time_us "$1" "$2" 0 "$3")
}

# hold_ms FILE KEY [NTH]: milliseconds between the NTH press and release of KEY in FILE.
hold_ms() {
  _down=$(key_time_us "$1" "$2" 1 "${3:-1}")
  _up=$(key_time_us "$1" "$2" 0 "${3:-1}")
  [ -n "$_down" ] && [ -n "$_up" ] || fail "no press/release of $2 in $1"
  echo $(((_up - _down) / 1000))
}

# --- LEDs (the `led SEC.USEC LED VALUE` lines of a device created with --leds) -------------
#
# A uinput device receives every change of its LEDs on its uinput descriptor, stamped by the
# kernel (CLOCK_MONOTONIC) when the input core passed it on; `actiond-testdev create --leds`
# prints each. The input core passes changes only: writing an LED's current value shows
# nothing, so a sequence of values alternates.

# led_time_us FILE LED VALUE [NTH]: the stamp (microseconds) of the NTH (default 1st) change
# of LED (LED_CAPSL) to VALUE in FILE; empty when there is none.
led_time_us() {
  awk -v led="$2" -v value="$3" -v nth="${4:-1}" '
    $1 == "led" && $3 == led && $4 == value {
      if (++seen == nth) { split($2, t, "."); sub(/^0+/, "", t[2]); printf "%d%06d\n", t[1], t[2]; exit }
    }' "$1"
}

# led_values FILE LED: the values LED took, in order, space-separated ("1 0 1 0").
led_values() {
  awk -v led="$2" '$1 == "led" && $3 == led { printf "%s%s", sep, $4; sep = " " } END { print "" }' "$1"
}

# expect_led_values FILE LED VALUES: LED took exactly VALUES ("1 0"), in order.
expect_led_values() {
  _got=$(led_values "$1" "$2")
  [ "$_got" = "$3" ] || { grep '^led ' "$1"; fail "$2 took '$_got', expected '$3'"; }
}

# wait_led_count FILE LED N [TIMEOUT_MS]: until LED changed N times.
wait_led_count() {
  wait_count "$1" "^led [0-9.]+ $2 [01]\$" "$3" "${4:-$WAIT_MS}"
}

# The same for what a device created with --snd or --ff receives. KIND is snd (NAME: SND_TONE,
# SND_BELL) or ff (NAME: effect=ID, VALUE 1 play, 0 stop).
# inbox_time_us FILE KIND NAME VALUE [NTH]: the stamp (microseconds) of the NTH such line.
inbox_time_us() {
  awk -v kind="$2" -v name="$3" -v value="$4" -v nth="${5:-1}" '
    $1 == kind && $3 == name && $4 == value {
      if (++seen == nth) { split($2, t, "."); sub(/^0+/, "", t[2]); printf "%d%06d\n", t[1], t[2]; exit }
    }' "$1"
}

# feedback_hold DEV_LOG KIND CODE VALUE WHAT MARK_LOG: a hold of button action (KEY_PROG1 on
# device a) whose feedback plays KIND CODE VALUE (`snd SND_TONE 1500`, `ff EFFECT 1`) on the
# device whose inbox is DEV_LOG twice: the threshold tick (60 ms) and, on `performed`, WHAT
# (300 ms from the perform's end). The hold's command writes LED_SCROLLL 1 to the device whose
# inbox is MARK_LOG, then sleeps 1 s, and appends "ran button=action press=KEY_DOWN_US" to
# ran.log. Needs watch.log (actionctl watch) and r.log (a reader of the button's node). Counts
# what the logs hold first, so any other hold may come between two of these. Its variables
# are _fh_*: dev_cmd and the waits use _mark, _deadline.
feedback_hold() {
  _fh_log=$1 _fh_kind=$2 _fh_code=$3 _fh_value=$4 _fh_what=$5 _fh_mark=$6
  _fh_on="^$_fh_kind [0-9.]+ $_fh_code $_fh_value\$"
  _fh_off="^$_fh_kind [0-9.]+ $_fh_code 0\$"
  _fh_nheld=$(($(event_count watch.log held) + 1))
  _fh_nperf=$(($(event_count watch.log performed) + 1))
  _fh_nrel=$(($(event_count watch.log released-after-hold) + 1))
  _fh_nkey=$(($(count_lines r.log 'EV_KEY KEY_PROG1 1$') + 1))
  _fh_non=$(count_lines "$_fh_log" "$_fh_on")
  _fh_noff=$(count_lines "$_fh_log" "$_fh_off")
  _fh_nmark=$(($(count_lines "$_fh_mark" '^led [0-9.]+ LED_SCROLLL 1$') + 1))
  dev_cmd a "down KEY_PROG1"
  wait_for_event watch.log held "$_fh_nheld" 30000
  wait_for_event watch.log performed "$_fh_nperf" 30000
  dev_cmd a "up KEY_PROG1"
  wait_for_event watch.log released-after-hold "$_fh_nrel" 30000
  wait_count "$_fh_log" "$_fh_off" $((_fh_noff + 2)) "$WAIT_MS"
  wait_count "$_fh_mark" '^led [0-9.]+ LED_SCROLLL 1$' "$_fh_nmark" "$WAIT_MS"
  _fh_down=$(key_time_us r.log KEY_PROG1 1 "$_fh_nkey")
  _fh_held=$(event_field watch.log held time "$_fh_nheld")
  [ "$_fh_held" = $((_fh_down + 600000)) ] || fail "held #$_fh_nheld at $_fh_held, expected key-down $_fh_down + 600 ms"
  _fh_tick_on=$(inbox_time_us "$_fh_log" "$_fh_kind" "$_fh_code" "$_fh_value" $((_fh_non + 1)))
  _fh_tick_off=$(inbox_time_us "$_fh_log" "$_fh_kind" "$_fh_code" 0 $((_fh_noff + 1)))
  _fh_perf_on=$(inbox_time_us "$_fh_log" "$_fh_kind" "$_fh_code" "$_fh_value" $((_fh_non + 2)))
  _fh_perf_off=$(inbox_time_us "$_fh_log" "$_fh_kind" "$_fh_code" 0 $((_fh_noff + 2)))
  _fh_command=$(led_time_us "$_fh_mark" LED_SCROLLL 1 "$_fh_nmark")
  step "tick $((_fh_tick_on - _fh_held)) us after the deadline (command's write $((_fh_command - _fh_held)) us), ended +$(((_fh_tick_off - _fh_held) / 1000)) ms; performed $_fh_what $(((_fh_perf_off - _fh_perf_on) / 1000)) ms"
  [ "$_fh_tick_on" -ge "$_fh_held" ] || fail "the tick ($_fh_tick_on) came before the threshold deadline ($_fh_held)"
  # Written right after the command's spawn, in the same turn: before the command ends
  # (it sleeps 1 s after its write), whichever of the two the guest ran first.
  [ "$_fh_tick_on" -lt $((_fh_command + 1000000)) ] || fail "the tick ($_fh_tick_on) came after the hold's command ended (it wrote at $_fh_command, then slept 1 s)"
  [ "$_fh_tick_off" -ge $((_fh_held + 60000)) ] || fail "the tick ended $(((_fh_tick_off - _fh_held) / 1000)) ms after the deadline (60 ms)"
  [ "$_fh_perf_on" -ge "$_fh_command" ] || fail "the performed $_fh_what ($_fh_perf_on) began before the command ran ($_fh_command)"
  # 300 ms from the perform's end, which is at least 1 s after the command's write.
  [ "$_fh_perf_off" -ge $((_fh_command + 1300000)) ] || fail "the performed $_fh_what ended $(((_fh_perf_off - _fh_command) / 1000)) ms after the command's write (>= 1300)"
  expect_count ran.log "ran button=action press=$_fh_down\$" 1
}

# inbox_values FILE KIND NAME: the values NAME took, in order, space-separated ("1500 0").
inbox_values() {
  awk -v kind="$2" -v name="$3" '$1 == kind && $3 == name { printf "%s%s", sep, $4; sep = " " } END { print "" }' "$1"
}

# expect_inbox_values FILE KIND NAME VALUES: NAME took exactly VALUES, in order.
expect_inbox_values() {
  _got=$(inbox_values "$1" "$2" "$3")
  [ "$_got" = "$4" ] || { grep -E "^(snd|ff|ff-upload|ff-erase) " "$1"; fail "$2 $3 took '$_got', expected '$4'"; }
}

# wait_inbox_count FILE KIND NAME N [TIMEOUT_MS]: until NAME took N values.
wait_inbox_count() {
  wait_count "$1" "^$2 [0-9.]+ $3 -?[0-9]+\$" "$4" "${5:-$WAIT_MS}"
}

# led_trigger NAME: the active trigger of LED class device NAME (the bracketed word).
led_trigger() {
  sed -n 's/.*\[\([^]]*\)\].*/\1/p' "/sys/class/leds/$1/trigger"
}

# --- processes -----------------------------------------------------------------------------

# spawn LOG COMMAND ARGS...: runs COMMAND in the background, stdout and stderr to LOG, and sets
# SPAWN_PID. Use it for every background process: it closes the descriptors the library keeps
# (3-6 hold device scripts open, 7 is the host channel, 8-9 the bench's device tools' answers),
# so a device's script ends when the scenario closes it rather than when the last process that
# inherited it exits.
spawn() {
  _log=$1
  shift
  "$@" </dev/null >"$_log" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&- &
  SPAWN_PID=$!
}

# --- devices -------------------------------------------------------------------------------

# dev_start ID [create options...]: starts `actiond-testdev create` in the background with its
# commands coming from dev_cmd, output in $WORK/ID.log; waits until the device exists and sets
# DEV_NODE to its /dev/input/eventN. DEV_WRAP, if set, is a command that execs the tool (the
# bench's `benchtool idle`: the tool at SCHED_IDLE).
dev_start() {
  _id=$1
  shift
  rm -f "$WORK/$_id.fifo"
  mkfifo "$WORK/$_id.fifo"
  # shellcheck disable=SC2086 # DEV_WRAP is a command and its arguments, or nothing
  ${DEV_WRAP:-} actiond-testdev create "$@" <"$WORK/$_id.fifo" >"$WORK/$_id.log" 2>&1 3>&- 4>&- 5>&- 6>&- 7>&- &
  eval "DEV_PID_$_id=\$!"
  # Holding the write end open keeps the tool alive between commands.
  eval "exec $(_dev_fd "$_id")>\"\$WORK/\$_id.fifo\""
  wait_for_line "$WORK/$_id.log" '^created ' "$WAIT_MS"
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
  wait_for_line "$WORK/$_id.log" "^$_mark\$" "$WAIT_MS"
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
  wait_for_line "$WORK/$_id.log" '^(opened|actiond-testdev:)' "$WAIT_MS"
  expect_line "$WORK/$_id.log" '^opened '
}

# reader_stop ID: ends reader ID now (SIGTERM), e.g. one that holds a grab.
reader_stop() {
  eval "kill -TERM \$READER_PID_$1 2>/dev/null; wait \$READER_PID_$1 2>/dev/null" || true
}

# reader_wait ID: waits for reader ID to end (timeout, count or device gone).
reader_wait() {
  eval "wait \$READER_PID_$1" || fail "reader $1 failed: $(tail -3 "$WORK/$1.log")"
}

# --- the host ------------------------------------------------------------------------------

# host COMMAND ARGS...: asks the host runner (vmrun.py) to do something outside the guest and
# waits for it to finish: `host key-down KEY [CONSOLE]`, `host key-up KEY [CONSOLE]`,
# `host press KEY MS [CONSOLE]` (prints the host-measured hold), `host hmp COMMAND...`,
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

# --- the network (a scenario whose header says `# needs: net`) ------------------------------
#
# run.sh gives such a scenario's batch a virtio-net NIC on qemu's user-mode network with
# restrict=on: the guest reaches only NET_BROKER:NET_BROKER_PORT, which vmrun.py forwards to
# Debian's mosquitto on the host's loopback (a random port, running for the boot). The guest's
# address is static (no DHCP client in the image).

NET_BROKER=10.0.2.100
NET_BROKER_PORT=1883
NET_ADDRESS=10.0.2.15/24

# need_net: loads the NIC's driver and brings its interface up as NET_ADDRESS (once per boot);
# skips when this VM has no NIC (the host has no mosquitto); fails without the header.
need_net() {
  grep -qE '^# needs:(.* )? ?net( |$)' "/vm/scenarios/$SCENARIO.sh" || fail "need_net without a '# needs: net' header"
  { modprobe virtio_pci && modprobe virtio_net; } 2>/dev/null ||
    skip "no NIC driver in this image: the runner gave this batch no network (see its output)"
  udevadm settle --timeout=10 || true
  _deadline=$(($(now_ms) + WAIT_MS))
  NET_IF=
  while [ -z "$NET_IF" ]; do
    for _n in /sys/class/net/*; do
      [ "${_n##*/}" = lo ] || NET_IF=${_n##*/}
    done
    [ -n "$NET_IF" ] && break
    [ "$(now_ms)" -lt "$_deadline" ] || skip "no network interface (the VM has no NIC: $(ls /sys/class/net))"
    usleep 50000
  done
  ip link set lo up
  ip addr show dev "$NET_IF" | grep -q "inet ${NET_ADDRESS%/*}/" || ip addr add "$NET_ADDRESS" dev "$NET_IF" ||
    fail "cannot give $NET_IF the address $NET_ADDRESS"
  ip link set "$NET_IF" up || fail "cannot bring $NET_IF up"
  until grep -qx up "/sys/class/net/$NET_IF/operstate"; do
    [ "$(now_ms)" -lt "$_deadline" ] || fail "$NET_IF has no link ($(cat "/sys/class/net/$NET_IF/operstate"))"
    usleep 20000
  done
  step "network: $NET_IF $NET_ADDRESS, the host's broker at $NET_BROKER:$NET_BROKER_PORT"
}

# host_mqtt_sub ID TOPIC...: an MQTT subscriber on the host (mosquitto_sub on the host's
# broker, QoS 1), subscribed when this returns; it prints each message as one line
# "RETAIN TOPIC PAYLOAD" (RETAIN 1 for a retained message delivered on subscribing).
host_mqtt_sub() {
  host mqtt-sub "$@" >/dev/null
}

# host_mqtt_fetch ID FILE: FILE gets what the host subscriber ID has received so far.
host_mqtt_fetch() {
  host mqtt-log "$1" >"$2.b64"
  base64 -d "$2.b64" >"$2" || fail "undecodable reply from the host's subscriber $1: $(head -c 200 "$2.b64")"
  rm -f "$2.b64"
}

# host_mqtt_wait ID FILE PATTERN TIMEOUT_MS [WHAT]: fetches subscriber ID's messages into FILE
# until a line matches the extended regular expression PATTERN; fails after TIMEOUT_MS,
# saying WHAT did not arrive (default: the pattern).
host_mqtt_wait() {
  _deadline=$(($(now_ms) + $4))
  while host_mqtt_fetch "$1" "$2" && ! grep -qE -- "$3" "$2"; do
    if [ "$(now_ms)" -ge "$_deadline" ]; then
      echo "--- $2 (the host's subscriber $1; waited $4 ms for /$3/):"
      cat "$2"
      fail "${5:-no message matching /$3/} at the host's MQTT subscriber $1 within $4 ms"
    fi
    usleep 100000
  done
}

# --- the daemon ----------------------------------------------------------------------------
#
# Contract with actiond/actionctl (Sources/actiond, Sources/actionctl):
#   actiond --config FILE --socket PATH --state-dir DIR --log-level debug   logs to stderr
#   actionctl --socket PATH --json status|devices|...                      one JSON reply
#   actionctl --socket PATH --json watch    prints each protocol line it receives (hello first,
#                                           then events), one per line, flushed per line
# Events are matched on the daemon's compact JSON: "event":"performed", "hint":"Hold to Start".

SOCK=$WORK/actiond.sock
STATE=$WORK/state
DAEMON_RUN=0

# need_daemon: skips the scenario until actiond and actionctl are wired (their --help names
# the options these helpers use).
need_daemon() {
  need_bin actiond actionctl
  actiond --help 2>&1 | grep -q -- '--config' || skip "actiond is not wired yet (no --config in actiond --help)"
  actionctl --help 2>&1 | grep -q 'watch' || skip "actionctl is not wired yet (no watch in actionctl --help)"
}

# write_config FILE [MATCH] [BUTTON_FIELDS] [KEY]: a configuration with one button `action` on
# KEY (default KEY_PROG1) matching MATCH (a JSON5 object; default { tag: "actiond" }), hold
# threshold $HOLD_MS (default 1500), extra button fields (e.g. 'grab: true'), assigned the
# store-backed toggle org.actiond.vm.timer: "Hold to Start"/"Hold to Stop", "Running"/"Stopped".
write_config() {
  mkdir -p "$WORK/controls.d"
  _match=${2:-}
  [ -n "$_match" ] || _match='{ tag: "actiond" }'
  cat >"$1" <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "action", key: "${4:-KEY_PROG1}", match: $_match,
      holdThresholdMs: ${HOLD_MS}${3:+, $3} },
  ],
  controls: [
    { kind: "org.actiond.vm.timer", type: "toggle", displayName: "VM Timer",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "state" }, value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.vm.timer" } },
}
CONFIG
}

# start_daemon CONFIG [ARGS...]: starts actiond (log in daemon.log, then daemon-2.log, ... for
# later starts), waits until it answers on its socket; sets DAEMON_PID and DAEMON_LOG.
start_daemon() {
  need_daemon
  _config=$1
  shift
  DAEMON_RUN=$((DAEMON_RUN + 1))
  DAEMON_LOG=$WORK/daemon.log
  [ "$DAEMON_RUN" = 1 ] || DAEMON_LOG=$WORK/daemon-$DAEMON_RUN.log
  spawn "$DAEMON_LOG" actiond --config "$_config" --socket "$SOCK" --state-dir "$STATE" --log-level debug "$@"
  DAEMON_PID=$SPAWN_PID
  _deadline=$(($(now_ms) + WAIT_MS))
  until [ -S "$SOCK" ] && actionctl --socket "$SOCK" --json status >/dev/null 2>&1; do
    kill -0 "$DAEMON_PID" 2>/dev/null || { wait "$DAEMON_PID"; fail "actiond exited with status $? at start-up (see $(basename "$DAEMON_LOG"))"; }
    [ "$(now_ms)" -lt "$_deadline" ] || fail "actiond did not answer on $SOCK within $((WAIT_MS / 1000)) s"
    usleep 50000
  done
  step "actiond running (pid $DAEMON_PID)"
}

# stop_daemon: SIGTERM, and the daemon must exit with status 0 within 10 s.
stop_daemon() {
  kill -TERM "$DAEMON_PID" 2>/dev/null || fail "actiond (pid $DAEMON_PID) was not running"
  _deadline=$(($(now_ms) + WAIT_MS))
  while kill -0 "$DAEMON_PID" 2>/dev/null; do
    # A zombie has exited; `wait` below collects it.
    [ "$(awk '{ print $3 }' "/proc/$DAEMON_PID/stat" 2>/dev/null)" = Z ] && break
    [ "$(now_ms)" -lt "$_deadline" ] || fail "actiond did not exit within 10 s of SIGTERM"
    usleep 50000
  done
  wait "$DAEMON_PID"
  _rc=$?
  [ "$_rc" = 0 ] || fail "actiond exited with status $_rc after SIGTERM"
  step "actiond stopped"
}

# expect_daemon_alive: actiond is still running and answering.
expect_daemon_alive() {
  kill -0 "$DAEMON_PID" 2>/dev/null || fail "actiond is no longer running"
  ctl status >/dev/null || fail "actiond does not answer status"
}

# ctl ARGS...: actionctl on this scenario's socket, JSON output.
ctl() {
  actionctl --socket "$SOCK" --json "$@"
}

# watch_start [ID]: a subscriber (`actionctl watch`) writing protocol lines to ID.log (default
# watch.log); returns once it is connected (its first line arrived).
watch_start() {
  _id=${1:-watch}
  spawn "$WORK/$_id.log" actionctl --socket "$SOCK" --json watch
  eval "WATCH_PID_$_id=\$SPAWN_PID"
  wait_for_line "$WORK/$_id.log" '.' "$WAIT_MS"
}

# wait_bound [TIMEOUT_MS]: waits until the daemon reports the button bound to a device.
wait_bound() {
  _deadline=$(($(now_ms) + ${1:-$WAIT_MS}))
  until ctl status 2>/dev/null | grep -q '"bound":true'; do
    [ "$(now_ms)" -lt "$_deadline" ] || { ctl status; fail "the button was not bound within ${1:-$WAIT_MS} ms"; }
    usleep 50000
  done
}

# event_count FILE EVENT: how many EVENT announcements FILE has.
event_count() {
  count_lines "$1" "\"event\":\"$2\""
}

# expect_event FILE EVENT N: exactly N EVENT announcements.
expect_event() {
  expect_count "$1" "\"event\":\"$2\"" "$3"
}

# wait_for_event FILE EVENT [N] [TIMEOUT_MS]: waits until FILE has at least N (default 1)
# EVENT announcements.
wait_for_event() {
  _deadline=$(($(now_ms) + ${4:-$WAIT_MS}))
  while [ "$(event_count "$1" "$2")" -lt "${3:-1}" ]; do
    if [ "$(now_ms)" -ge "$_deadline" ]; then
      echo "--- $1:"
      cat "$1"
      fail "fewer than ${3:-1} \"$2\" events in $1 within ${4:-$WAIT_MS} ms"
    fi
    usleep 20000
  done
}

# event_field FILE EVENT FIELD [NTH]: the first top-level-looking value of FIELD in the NTH
# EVENT line (strings without quotes, numbers and booleans as written).
event_field() {
  awk -v ev="\"event\":\"$2\"" -v f="\"$3\":" -v nth="${4:-1}" '
    index($0, ev) && ++n == nth {
      i = index($0, f)
      if (!i) exit
      s = substr($0, i + length(f))
      if (substr(s, 1, 1) == "\"") { s = substr(s, 2); print substr(s, 1, index(s, "\"") - 1) }
      else { match(s, /^[^,}]*/); print substr(s, 1, RLENGTH) }
      exit
    }' "$1"
}

# settle_ms MS: lets MS pass (for "and nothing else happens" checks after the last event).
settle_ms() {
  usleep $(($1 * 1000))
}

# double_press_held WINDOW_MS THRESHOLD_MS: a double press of KEY_PROG1 on device a (read by
# reader r) whose second press stays down: a 100 ms press, 100 ms up, key-down again. The
# kernel's stamps decide what the daemon must have seen: inside the window (with 20 ms of
# margin) it waits for `double-pressed` and `performed` and returns with the key still down
# (n2 is the second press's number for press_stamps; down1 up1 down2 its stamps); outside, it
# releases, expects two short presses and tries again; on the edge either is right, so it
# recounts and tries again. Fails after 4 attempts (stalls) or when the first press lasted
# nearly THRESHOLD_MS. Keeps PRESSES, EXP_PRESSED, EXP_RELEASED and EXP_DOUBLE (the reader's
# presses and what watch.log must hold; start them at 0) current.
double_press_held() {
  _dp_window=$1 _dp_threshold=$2 _dp_attempt=0
  while :; do
    _dp_attempt=$((_dp_attempt + 1))
    [ "$_dp_attempt" -le 4 ] || fail "4 attempts in a row were pushed outside the window by stalls"
    n1=$((PRESSES + 1))
    n2=$((PRESSES + 2))
    PRESSES=$n2
    dev_cmd a "press KEY_PROG1 100ms" "sleep 100ms" "down KEY_PROG1"
    wait_count r.log 'EV_KEY KEY_PROG1 1$' "$n2" "$WAIT_MS"
    press_stamps r.log KEY_PROG1 "$n1"
    down1=$DOWN up1=$UP
    press_stamps r.log KEY_PROG1 "$n2"
    down2=$DOWN
    _dp_first_ms=$(((up1 - down1) / 1000))
    _dp_gap_us=$((down2 - up1))
    step "attempt $_dp_attempt: first press ${_dp_first_ms} ms, gap $((_dp_gap_us / 1000)) ms (kernel stamps)"
    [ "$_dp_first_ms" -lt $((_dp_threshold - 100)) ] || fail "the first press lasted $_dp_first_ms ms: the machine stalled for seconds"
    EXP_PRESSED=$((EXP_PRESSED + 1))
    if [ "$_dp_gap_us" -lt $(((_dp_window - 20) * 1000)) ]; then
      EXP_DOUBLE=$((EXP_DOUBLE + 1))
      # Performed while the key is still down: at the second key-down, not at its release.
      wait_for_event watch.log double-pressed "$EXP_DOUBLE" 30000
      wait_for_event watch.log performed "$EXP_DOUBLE" 30000
      return
    fi
    # The stamps say the second key-down came too late (or on the boundary): let both end.
    dev_cmd a "up KEY_PROG1"
    if [ "$_dp_gap_us" -gt $(((_dp_window + 20) * 1000)) ]; then
      step "outside the window by the stamps: two short presses expected; again"
      EXP_PRESSED=$((EXP_PRESSED + 1))
      EXP_RELEASED=$((EXP_RELEASED + 2))
      wait_for_event watch.log released "$EXP_RELEASED" 30000
      expect_event watch.log double-pressed "$EXP_DOUBLE"
      expect_event watch.log performing "$EXP_DOUBLE"
    else
      step "on the window's edge by the stamps: either is right; again"
      settle_ms $((2 * _dp_window + 500))
      EXP_DOUBLE=$(event_count watch.log double-pressed)
      EXP_RELEASED=$(event_count watch.log released)
      EXP_PRESSED=$(event_count watch.log pressed)
    fi
    settle_ms 500
  done
}
