# SPDX-License-Identifier: Apache-2.0
# Daemon: without any match in its configuration, the daemon binds exactly the devices the
# shipped udev rule tags `actiond` (here through a local ACTIOND_BUTTON rule), found through
# libudev, and not the untagged gpio-keys look-alike nor the AT keyboard with the same id.
# timeout: 60
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button
tagged=$DEV_NODE
dev_start b --preset gpio-keys
udevadm settle --timeout=5
SYSTEMD_PAGER=cat udevadm info "$tagged" >udev.log
expect_line udev.log '^E: CURRENT_TAGS=.*:actiond:'

cat >config.json <<CONFIG
{ buttons: [ { name: "action", key: "KEY_PROG1" } ],
  controls: [ { kind: "org.actiond.vm.timer", type: "toggle", displayName: "VM Timer",
      actionHint: { on: "Stop", off: "Start" }, intent: { type: "state" }, value: { type: "store", initial: false } } ],
  assignments: { action: { kind: "org.actiond.vm.timer" } } }
CONFIG
start_daemon config.json
wait_bound
ctl devices >devices.log
expect_count devices.log '"devnode"' 1
expect_line devices.log "\"devnode\":\"$tagged\""
watch_start
dev_cmd b "press KEY_PROG1 ${LONG_MS}ms"
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
wait_for_event watch.log performed
expect_event watch.log pressed 1
stop_daemon
dev_stop a
dev_stop b
