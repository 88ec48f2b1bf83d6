# SPDX-License-Identifier: Apache-2.0
# Daemon: SIGHUP with a changed configuration takes effect (threshold HOLD_MS -> 2 x HOLD_MS: a
# press of HOLD_MS + 400 ms is then a short press); SIGHUP with a broken configuration is rejected, announced with
# its problems, and the running configuration stays.
# timeout: 90
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button
write_config config.json
start_daemon config.json
wait_bound
watch_start

default_hold=$HOLD_MS
HOLD_MS=$((2 * default_hold))
write_config config.json
HOLD_MS=$default_hold
kill -HUP "$DAEMON_PID"
wait_for_event watch.log config-reloaded 1
expect_line watch.log '"event":"config-reloaded".*"applied":true'
wait_bound
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"   # short under 2 x HOLD_MS, a hold under HOLD_MS
wait_for_event watch.log released 1
expect_event watch.log performing 0

echo '{ buttons: [ { name: "action", key: "KEY_NOT_A_KEY" } ' >config.json
kill -HUP "$DAEMON_PID"
wait_for_event watch.log config-reloaded 2
expect_line watch.log '"event":"config-reloaded".*"applied":false'
expect_no_line watch.log '"event":"config-reloaded","applied":false,"problems":\[\]'
expect_daemon_alive
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"   # short under 2 x HOLD_MS, a hold under HOLD_MS
wait_for_event watch.log released 2
dev_cmd a "press KEY_PROG1 $((2 * HOLD_MS + 400))ms"
wait_for_event watch.log performed 1
stop_daemon
dev_stop a
