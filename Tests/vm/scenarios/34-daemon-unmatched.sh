# SPDX-License-Identifier: Apache-2.0
# Daemon: the button's key on a device the match does not select, and another key on the
# matched device, are both ignored; the button's key on the matched device still works.
# timeout: 60
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button
matched=$DEV_NODE
dev_start b --preset gpio-keys --name actiond-vm-other    # not tagged
write_config config.json
start_daemon config.json
wait_bound
watch_start
ctl devices >devices.log
expect_line devices.log "\"devnode\":\"$matched\""
expect_no_line devices.log '"name":"actiond-vm-other"'

dev_cmd b "press KEY_PROG1 ${LONG_MS}ms"
dev_cmd a "press KEY_POWER ${LONG_MS}ms"
settle_ms 700
expect_event watch.log pressed 0
expect_event watch.log performing 0

dev_cmd a "press KEY_PROG1 ${SHORT_MS}ms"
wait_for_event watch.log released
expect_event watch.log pressed 1
stop_daemon
dev_stop a
dev_stop b
