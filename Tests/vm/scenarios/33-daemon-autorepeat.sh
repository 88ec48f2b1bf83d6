# SPDX-License-Identifier: Apache-2.0
# Daemon: a device with EV_REP autorepeats the held key (value 2 every 33 ms after 250 ms); a
# hold of threshold + 500 ms still performs exactly once and the repeats never start another press.
# timeout: 60
. "$VM_LIB"
need_daemon

dev_start a --preset usb-keyboard --name actiond-vm-button --rep-delay 250ms --rep-period 33ms
write_config config.json
start_daemon config.json
wait_bound
watch_start
reader_start r "$DEV_NODE" --timeout 30s --count 1000

dev_cmd a "press KEY_PROG1 $((HOLD_MS + 500))ms"
wait_for_event watch.log performed
wait_for_line r.log "EV_KEY KEY_PROG1 0$" 20000   # the release, as the kernel sent it
settle_ms 500
repeats=$(count_lines r.log 'EV_KEY KEY_PROG1 2$')
step "the kernel sent $repeats autorepeats"
[ "$repeats" -ge 20 ] || fail "expected the input core to autorepeat (got $repeats repeats)"
expect_event watch.log pressed 1
expect_event watch.log held 1
expect_event watch.log performing 1
expect_event watch.log performed 1
expect_event watch.log released 0
stop_daemon
dev_stop a
