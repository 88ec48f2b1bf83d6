# SPDX-License-Identifier: Apache-2.0
# Daemon: a restart keeps the assignment and the toggle's state (state directory).
# timeout: 90
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button
write_config config.json
start_daemon config.json
wait_bound
watch_start
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
wait_for_event watch.log performed
stop_daemon

start_daemon config.json
wait_bound
ctl status >status.log
expect_line status.log '"kind":"org.actiond.vm.timer"'
expect_line status.log '"value":true'
expect_line status.log '"hint":"Hold to Stop"'
watch_start watch2
dev_cmd a "press KEY_PROG1 ${SHORT_MS}ms"
wait_for_event watch2.log released
[ "$(event_field watch2.log released hint)" = "Hold to Stop" ] || fail "after restart the hint is not Hold to Stop"
stop_daemon
dev_stop a
