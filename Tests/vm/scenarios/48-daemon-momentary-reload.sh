# SPDX-License-Identifier: Apache-2.0
# Daemon, momentary toggle and reload (issue 16): a SIGHUP reload mid-hold that changes the
# held button's entry (its key moves to KEY_POWER) ends the press, and a momentary toggle's
# off still runs then (ACTIOND_VALUE=0, ACTIOND_PRESS_TIME = the held press's key-down),
# exactly once: the value is off again and stays off when the old key is released later
# (that release belongs to no press of the new configuration). A reload that leaves the
# entry unchanged (as 43 proves for holds) does not end a momentary hold: its off runs at
# the release, once. A stop (SIGTERM) mid-hold turns it off before the daemon exits, and
# lets that off command finish.
# Timing: nothing depends on the guest's speed: each step waits for the daemon's events.
# timeout: 150
. "$VM_LIB"
need_daemon

cat >record.sh <<'SCRIPT'
#!/bin/sh
echo "start value=${ACTIOND_VALUE:-} gesture=${ACTIOND_GESTURE:-} button=$ACTIOND_BUTTON press=${ACTIOND_PRESS_TIME:-}" >>"$1"
usleep 200000
echo "end value=${ACTIOND_VALUE:-}" >>"$1"
SCRIPT
chmod 0755 record.sh
mkdir -p controls.d
# config_for KEY: the push-to-talk button on KEY.
config_for() {
  cat <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "ptt", key: "$1", match: { name: "actiond-vm-button" }, holdThresholdMs: $HOLD_MS },
  ],
  controls: [
    { kind: "org.actiond.vm.mic", type: "toggle", displayName: "Microphone",
      valueText: { on: "Live", off: "Muted" }, actionHint: { on: "Mute", off: "Talk" },
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { ptt: { kind: "org.actiond.vm.mic", momentary: true } },
}
CONFIG
}

expect_performed() {
  [ "$(event_field watch.log performed value "$1")" = "$2" ] ||
    fail "performed #$1 has value $(event_field watch.log performed value "$1"), expected $2"
}

config_for KEY_PROG1 >config.json
dev_start a --preset gpio-keys --name actiond-vm-button
start_daemon config.json
wait_bound
watch_start
reader_start r "$DEV_NODE" --timeout 600s

step "reload that leaves the button unchanged, mid-hold: the off runs at the release"
dev_cmd a "down KEY_PROG1"
wait_for_event watch.log performed 1 30000
expect_performed 1 true
kill -HUP "$DAEMON_PID"
wait_for_event watch.log config-reloaded 1 30000
expect_line watch.log '"event":"config-reloaded".*"applied":true'
# Still down, still on.
settle_ms 500
expect_event watch.log performing 1
dev_cmd a "up KEY_PROG1"
wait_for_event watch.log performed 2 30000
expect_performed 2 false
down=$(key_time_us r.log KEY_PROG1 1 1)
expect_count ran.log "^start value=0 gesture=hold button=ptt press=$down\$" 1
wait_for_event watch.log released-after-hold 1 30000

step "reload that moves the held button to another key: the off runs at the reload"
dev_cmd a "down KEY_PROG1"
wait_for_event watch.log performed 3 30000
expect_performed 3 true
down=$(key_time_us r.log KEY_PROG1 1 2)
config_for KEY_POWER >config.json
kill -HUP "$DAEMON_PID"
wait_for_event watch.log config-reloaded 2 30000
expect_line watch.log '"event":"config-reloaded".*"applied":true'
wait_for_event watch.log performed 4 30000
expect_performed 4 false
expect_count ran.log "^start value=0 gesture=hold button=ptt press=$down\$" 1
step "the old key's release, after the reload: nothing more"
dev_cmd a "up KEY_PROG1"
wait_count r.log 'EV_KEY KEY_PROG1 0$' 2 30000
settle_ms 1500
expect_event watch.log performing 4
expect_event watch.log performed 4
expect_event watch.log failed 0
expect_event watch.log busy 0
expect_count ran.log '^start ' 4
expect_count ran.log '^start value=1 ' 2
ctl status >status.log
expect_line status.log '"valueText":"Muted"'
expect_no_line status.log '"valueText":"Live"'

step "daemon stopped mid-hold (on the new key): the off runs and finishes before it exits"
wait_bound
dev_cmd a "down KEY_POWER"
wait_for_event watch.log performed 5 30000
expect_performed 5 true
wait_count r.log 'EV_KEY KEY_POWER 1$' 1 30000
down=$(key_time_us r.log KEY_POWER 1 1)
expect_count ran.log "^start value=1 gesture=hold button=ptt press=$down\$" 1
stop_daemon
expect_count ran.log "^start value=0 gesture=hold button=ptt press=$down\$" 1
expect_count ran.log '^start ' 6
expect_count ran.log '^end ' 6
[ "$(tail -1 ran.log)" = "end value=0" ] || fail "the last command to end is not the off: $(tail -2 ran.log)"
dev_cmd a "up KEY_POWER"
reader_stop r
dev_stop a
