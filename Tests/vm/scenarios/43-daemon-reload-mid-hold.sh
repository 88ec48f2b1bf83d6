# SPDX-License-Identifier: Apache-2.0
# Daemon: a SIGHUP reload that leaves the button's entry unchanged neither cancels a press in
# progress nor performs its hold twice, even when the reload removes another button of the same
# device: the hold is performed once, at its threshold, a second reload after the hold changes
# nothing either, and the release ends it (released-after-hold). The button stays on its device
# throughout, and the status line (sd_notify STATUS, also logged) counts what is bound now.
# timeout: 90
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button
# Long enough that even a loaded machine reloads well before the threshold.
HOLD_MS=3000
write_config one.json
# The same, with a second button on the device's other key.
awk '/^  \],$/ && !done { print "    { name: \"power\", key: \"KEY_POWER\", match: { tag: \"actiond\" } },"; done = 1 }
  { print }' one.json >two.json
grep -q '"power"' two.json || fail "could not write the two-button configuration"
cp two.json config.json
start_daemon config.json
wait_bound
watch_start

dev_cmd a "down KEY_PROG1"
wait_for_event watch.log pressed 1
cp one.json config.json
kill -HUP "$DAEMON_PID"
wait_for_event watch.log config-reloaded 1
expect_line watch.log '"event":"config-reloaded".*"applied":true'
expect_event watch.log cancelled 0
wait_for_event watch.log performed 1 15000
kill -HUP "$DAEMON_PID"
wait_for_event watch.log config-reloaded 2
dev_cmd a "up KEY_PROG1"
wait_for_event watch.log released-after-hold 1
expect_event watch.log device-removed 0
expect_line "$DAEMON_LOG" 'status: 2/2 button\(s\) bound'
last_status=$(grep 'event=status' "$DAEMON_LOG" | tail -1)
step "last status: $last_status"
case $last_status in
  *"status: 1/1 button(s) bound, 1 device(s)"*) ;;
  *) fail "the status line after the reloads is stale: $last_status" ;;
esac
stop_daemon

expect_event watch.log cancelled 0
expect_event watch.log released 0
expect_event watch.log held 1
expect_event watch.log performing 1
expect_event watch.log performed 1
[ "$(event_field watch.log performed value)" = true ] || fail "the hold did not turn the timer on"
held=$(event_field watch.log released-after-hold durationMs)
step "released after a hold of $held ms"
[ "$held" -ge 3000 ] || fail "released-after-hold durationMs=$held, expected at least the 3000 ms threshold"
expect_no_line "$DAEMON_LOG" 'press cancelled'
dev_stop a
