# Daemon: a SIGHUP reload that leaves the button's entry unchanged neither cancels a press in
# progress nor performs its hold twice: the hold is performed once, at its threshold, a second
# reload after the hold changes nothing either, and the release ends it (released-after-hold).
# The button stays on its device throughout.
# timeout: 90
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button
# Long enough that even a loaded machine reloads well before the threshold.
HOLD_MS=3000
write_config config.json
start_daemon config.json
wait_bound
watch_start

dev_cmd a "down KEY_PROG1"
wait_for_event watch.log pressed 1
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
