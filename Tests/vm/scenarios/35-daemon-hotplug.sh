# SPDX-License-Identifier: Apache-2.0
# Daemon: started before its device exists, it binds the device when it appears; the device
# removed mid-hold cancels the press as device-lost (no perform, not a short press although the
# input core may report a release at removal, not a resync); re-added, it works again.
# timeout: 90
. "$VM_LIB"
need_daemon

write_config config.json
start_daemon config.json
watch_start
ctl status >status-before.log
expect_line status-before.log '"bound":false'

dev_start a --preset gpio-keys --name actiond-vm-button
wait_for_event watch.log device-added 1
wait_bound
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
wait_for_event watch.log performed 1

dev_cmd a "down KEY_PROG1" "sleep 200ms" "destroy"
wait_for_event watch.log device-removed 1
settle_ms 1000
expect_event watch.log pressed 2
expect_event watch.log cancelled 1
# An unplug is an unplug: not a resync (nothing was dropped), whether or not the reader saw
# the releases the input core makes at removal.
[ "$(event_field watch.log cancelled reason)" = device-lost ] ||
  fail "cancelled with reason $(event_field watch.log cancelled reason), expected device-lost"
expect_no_line "$DAEMON_LOG" 'SYN_DROPPED'
expect_event watch.log released 0
expect_event watch.log performing 1
ctl status >status-removed.log
expect_line status-removed.log '"bound":false'

dev_cmd a "recreate"
wait_for_event watch.log device-added 2
wait_bound
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
wait_for_event watch.log performed 2
[ "$(event_field watch.log performed value 2)" = false ] || fail "the hold after re-adding did not toggle back off"
stop_daemon
dev_stop a
