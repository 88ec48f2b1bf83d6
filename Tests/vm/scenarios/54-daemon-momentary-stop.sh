# SPDX-License-Identifier: Apache-2.0
# Daemon, momentary toggle held on at a stop (issue 30): a push-to-talk key is held and
# its on command (`exec sleep 30`) still runs when actiond gets SIGTERM. The stop ends the
# on command (reported `stopped` in the log, not a timeout), then runs the off
# (ACTIOND_VALUE=0, the same press's ACTIOND_PRESS_TIME), waits for it, and exits 0 within
# its bound: the microphone does not stay live because actiond stopped.
# Timing: nothing depends on the guest's speed: the scenario waits for the files the
# command writes and for the daemon's exit.
# timeout: 120
. "$VM_LIB"
need_daemon

cat >mic.sh <<'SCRIPT'
#!/bin/sh
# mic.sh LOG DIR: the on records its pid and stays (sleep 30); the off records its end.
echo "start value=${ACTIOND_VALUE:-} gesture=${ACTIOND_GESTURE:-} button=$ACTIOND_BUTTON press=${ACTIOND_PRESS_TIME:-}" >>"$1"
if [ "${ACTIOND_VALUE:-}" = 1 ]; then
  echo $$ >"$2/on.tmp" && mv "$2/on.tmp" "$2/on.pid"
  exec sleep 30
fi
echo "end value=${ACTIOND_VALUE:-}" >>"$1"
SCRIPT
chmod 0755 mic.sh
mkdir -p controls.d
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "ptt", key: "KEY_PROG1", match: { name: "actiond-vm-button" }, holdThresholdMs: $HOLD_MS },
  ],
  controls: [
    { kind: "org.actiond.vm.mic", type: "toggle", displayName: "Microphone",
      valueText: { on: "Live", off: "Muted" }, actionHint: { on: "Mute", off: "Talk" },
      intent: { type: "exec", argv: ["$WORK/mic.sh", "$WORK/ran.log", "$WORK"], timeoutMs: 5000 },
      value: { type: "store", initial: false } },
  ],
  assignments: { ptt: { kind: "org.actiond.vm.mic", momentary: true } },
}
CONFIG

dev_start a --preset gpio-keys --name actiond-vm-button
start_daemon config.json
wait_bound
reader_start r "$DEV_NODE" --timeout 600s

step "held: the on command runs (and would for 30 s)"
dev_cmd a "down KEY_PROG1"
wait_for_file on.pid 30000
on=$(cat on.pid)
down=$(key_time_us r.log KEY_PROG1 1 1)
expect_count ran.log "^start value=1 gesture=hold button=ptt press=$down\$" 1
expect_no_line ran.log 'value=0'

step "SIGTERM while the key is down and the on command runs"
stop_daemon
expect_count ran.log "^start value=0 gesture=hold button=ptt press=$down\$" 1
expect_count ran.log '^end value=0$' 1
[ "$(sed -n 2p ran.log)" = "start value=0 gesture=hold button=ptt press=$down" ] ||
  fail "the off did not follow the on: $(cat ran.log)"
[ -d "/proc/$on" ] && [ "$(awk '{ print $3 }' "/proc/$on/stat" 2>/dev/null)" != Z ] && fail "the on command (pid $on) outlived actiond"
expect_line "$DAEMON_LOG" 'org.actiond.vm.mic goes off: actiond is stopping'
expect_line "$DAEMON_LOG" 'the command was stopped by actiond'
expect_no_line "$DAEMON_LOG" 'timed out'
expect_no_line "$DAEMON_LOG" 'not started'
expect_no_line "$DAEMON_LOG" "stop's bound"
reader_stop r
dev_stop a
