# SPDX-License-Identifier: Apache-2.0
# Daemon: with grab on, another reader of the device sees nothing while the daemon sees the
# press; with grab off, the other reader sees the key too.
# timeout: 60
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button
write_config grab.json "" "grab: true"
start_daemon grab.json
wait_bound
watch_start
reader_start other "$DEV_NODE" --timeout 1500ms
dev_cmd a "press KEY_PROG1 ${SHORT_MS}ms"
wait_for_event watch.log released
reader_wait other
expect_count other.log 'EV_KEY' 0
stop_daemon

write_config nograb.json "" "grab: false"
start_daemon nograb.json
wait_bound
watch_start watch2
reader_start other2 "$DEV_NODE" --timeout 30s --count 2
dev_cmd a "press KEY_PROG1 ${SHORT_MS}ms"
wait_for_event watch2.log released
reader_wait other2
expect_count other2.log 'EV_KEY KEY_PROG1 [01]$' 2
stop_daemon
dev_stop a
