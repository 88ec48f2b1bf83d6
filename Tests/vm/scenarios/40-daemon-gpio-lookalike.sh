# SPDX-License-Identifier: Apache-2.0
# Daemon: a button shaped like a GPIO button (uinput "gpio-keys": BUS_HOST, 0001:0001, no
# EV_REP, KEY_POWER + KEY_PROG1) matched by name: it binds that device and not the AT keyboard,
# which has the same bus-independent id 0001:0001; short press and hold behave.
# timeout: 60
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys
write_config config.json '{ name: "gpio-keys" }' "" KEY_POWER
start_daemon config.json
wait_bound
ctl devices >devices.log
expect_line devices.log "\"devnode\":\"$DEV_NODE\""
expect_no_line devices.log 'AT Translated Set 2 keyboard'
watch_start
dev_cmd a "press KEY_POWER ${SHORT_MS}ms"
wait_for_event watch.log released
dev_cmd a "press KEY_POWER ${LONG_MS}ms"
wait_for_event watch.log performed
expect_event watch.log pressed 2
expect_event watch.log performing 1
stop_daemon
dev_stop a
