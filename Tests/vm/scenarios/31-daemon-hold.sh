# SPDX-License-Identifier: Apache-2.0
# Daemon: a hold of threshold + 400 ms performs exactly once, at the threshold (while the key is
# still down, by the kernel's timestamps), and announces the resulting state.
# timeout: 60
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button
write_config config.json
start_daemon config.json
wait_bound
watch_start
reader_start r "$DEV_NODE" --timeout 20s --count 2

dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
reader_wait r
wait_for_event watch.log performed
settle_ms 500
expect_event watch.log pressed 1
expect_event watch.log held 1
expect_event watch.log performing 1
expect_event watch.log performed 1
expect_event watch.log released 0
expect_line watch.log '"event":"performed".*"value":true.*"valueText":"Running"'
expect_line watch.log '"event":"performed".*"hint":"Hold to Stop"'

down=$(key_time_us r.log KEY_PROG1 1)
up=$(key_time_us r.log KEY_PROG1 0)
pressed=$(event_field watch.log pressed time)
held=$(event_field watch.log held time)
[ "$pressed" = "$down" ] || fail "pressed time $pressed is not the kernel's press timestamp $down"
step "held $(((held - down) / 1000)) ms after the press; release at $(((up - down) / 1000)) ms"
expect_between $(((held - down) / 1000)) "$HOLD_MS" $((HOLD_MS + SLACK_MS)) "held after press (ms)"
[ "$held" -lt "$up" ] || fail "held ($held) is not before the release ($up)"
ctl status >status.log
expect_line status.log '"value":true'
stop_daemon
dev_stop a
