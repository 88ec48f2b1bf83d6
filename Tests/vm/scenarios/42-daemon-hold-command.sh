# SPDX-License-Identifier: Apache-2.0
# Daemon: an exec intent's command starts at the hold threshold, exactly once, while the key
# is still down, and knows which press started it (ACTIOND_PRESS_TIME is the kernel's
# key-down stamp, the `time` of the `pressed` event). A short press runs nothing, and a
# daemon killed mid-press leaves nothing behind. No timing is assumed: short presses go to a
# button with a 5 s threshold, and /proc is never read while a press's timing matters.
# timeout: 120
. "$VM_LIB"
need_daemon

cat >record.sh <<'SCRIPT'
#!/bin/sh
echo "ran value=$ACTIOND_VALUE button=$ACTIOND_BUTTON press=$ACTIOND_PRESS_TIME" >>"$1"
SCRIPT
chmod 0755 record.sh
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "action", key: "KEY_PROG1", match: { name: "actiond-vm-button" }, holdThresholdMs: 600 },
    { name: "slow", key: "KEY_POWER", match: { name: "actiond-vm-button" }, holdThresholdMs: 5000 },
  ],
  controls: [
    { kind: "org.actiond.vm.record", type: "toggle", displayName: "Recorder",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.vm.record" }, slow: { kind: "org.actiond.vm.record" } },
}
CONFIG
mkdir -p controls.d

# running_record: pids of record.sh processes still alive (not zombies).
running_record() {
  for _d in /proc/[0-9]*; do
    grep -q record.sh "$_d/cmdline" 2>/dev/null || continue
    [ "$(awk '{ print $3 }' "$_d/stat" 2>/dev/null)" = Z ] || echo "${_d#/proc/}"
  done
}

dev_start a --preset gpio-keys --name actiond-vm-button
start_daemon config.json
wait_bound
watch_start
reader_start r "$DEV_NODE" --timeout 100s --count 6

step "short press (of a 5 s threshold): nothing runs"
dev_cmd a "press KEY_POWER 100ms"
wait_for_event watch.log released
expect_event watch.log held 0
[ ! -e ran.log ] || fail "a short press ran the command: $(cat ran.log)"

step "hold: the command runs once, at the threshold, with its press's time"
dev_cmd a "down KEY_PROG1"
# Still down: the command must have run before the release (at the threshold, not at the release).
wait_for_event watch.log performed 1 30000
dev_cmd a "up KEY_PROG1"
expect_event watch.log performing 1
expect_count ran.log 'ran' 1
expect_count ran.log 'ran value=1 button=action ' 1
pressed=$(event_field watch.log pressed time 2)
held=$(event_field watch.log held time 1)
down=$(key_time_us r.log KEY_PROG1 1)
up=$(key_time_us r.log KEY_PROG1 0)
[ "$pressed" = "$down" ] || fail "pressed time $pressed is not the kernel's key-down stamp $down"
expect_count ran.log "press=$down\$" 1
[ $((held - down)) -ge 600000 ] || fail "held $((held - down)) us after the key-down: before the threshold"
[ "$held" -lt "$up" ] || fail "held ($held) is not before the release ($up)"
expect_line watch.log '"event":"performed".*"valueText":"Running"'

step "a second hold runs the other value, with its own press's time"
dev_cmd a "press KEY_PROG1 900ms"
wait_for_event watch.log performed 2 30000
down2=$(key_time_us r.log KEY_PROG1 1 2)
expect_count ran.log "ran value=0 button=action press=$down2\$" 1
expect_count ran.log 'ran' 2
reader_wait r

step "daemon killed mid-press (of a 5 s threshold): nothing runs, nothing is left"
dev_cmd a "down KEY_POWER"
wait_for_event watch.log pressed 4
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
# The daemon is gone: from here on no timing matters.
dev_cmd a "sleep 5500ms" "up KEY_POWER"
expect_count ran.log 'ran' 2
[ -z "$(running_record)" ] || fail "record.sh still running: $(running_record)"
dev_stop a
