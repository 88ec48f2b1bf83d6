# Daemon: a short press (200 ms) on a tagged button announces the hint and performs nothing.
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

dev_cmd a "press KEY_PROG1 200ms"
wait_for_event watch.log released
settle_ms 1000   # past the threshold: a late perform would show now
expect_event watch.log pressed 1
expect_event watch.log released 1
expect_line watch.log '"event":"pressed".*"hint":"Hold to Start"'
expect_line watch.log '"event":"released".*"hint":"Hold to Start"'
expect_event watch.log held 0
expect_event watch.log performing 0
expect_event watch.log performed 0
duration=$(event_field watch.log released durationMs)
expect_between "$duration" $((200 - SLACK_MS)) $((200 + SLACK_MS)) "released durationMs"
ctl status >status.log
expect_line status.log '"value":false'
stop_daemon
dev_stop a
