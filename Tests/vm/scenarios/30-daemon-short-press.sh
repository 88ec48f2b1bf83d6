# SPDX-License-Identifier: Apache-2.0
# Daemon: a short press ($SHORT_MS) on a tagged button announces the hint and performs nothing.
# The template for daemon scenarios: device, configuration, daemon, subscriber, input, then
# assertions on what the subscriber saw and on the daemon's state.
# timeout: 60
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button   # tagged `actiond` by the shipped rule
write_config config.json
start_daemon config.json
wait_bound
watch_start
reader_start r "$DEV_NODE" --timeout 20s --count 2

dev_cmd a "press KEY_PROG1 ${SHORT_MS}ms"
reader_wait r
wait_for_event watch.log released
settle_ms $((HOLD_MS + 500))   # past the threshold: a late perform would show now
expect_event watch.log pressed 1
expect_event watch.log released 1
expect_line watch.log '"event":"pressed".*"hint":"Hold to Start"'
expect_line watch.log '"event":"released".*"hint":"Hold to Start"'
expect_event watch.log held 0
expect_event watch.log performing 0
expect_event watch.log performed 0
# The duration is the kernel's: release stamp minus press stamp, as a second reader saw them
# (however long the loaded machine made the press).
duration=$(event_field watch.log released durationMs)
kernel=$(hold_ms r.log KEY_PROG1)
expect_between "$duration" "$kernel" $((kernel + 1)) "released durationMs (kernel: $kernel ms)"
ctl status >status.log
expect_line status.log '"value":false'
stop_daemon
dev_stop a
