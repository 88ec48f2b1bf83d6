# SPDX-License-Identifier: Apache-2.0
# Daemon: a toggle held twice goes on then off, and the hint flips between the holds
# ("Hold to Start" -> "Hold to Stop" -> "Hold to Start").
# timeout: 60
. "$VM_LIB"
need_daemon

dev_start a --preset gpio-keys --name actiond-vm-button
write_config config.json
start_daemon config.json
wait_bound
watch_start

dev_cmd a "press KEY_PROG1 ${SHORT_MS}ms"
wait_for_event watch.log released 1
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
wait_for_event watch.log performed 1
dev_cmd a "press KEY_PROG1 ${SHORT_MS}ms"
wait_for_event watch.log released 2
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
wait_for_event watch.log performed 2
dev_cmd a "press KEY_PROG1 ${SHORT_MS}ms"
wait_for_event watch.log released 3

[ "$(event_field watch.log released hint 1)" = "Hold to Start" ] || fail "first hint is not Hold to Start"
[ "$(event_field watch.log performed value 1)" = true ] || fail "first hold did not turn it on"
[ "$(event_field watch.log performed valueText 1)" = Running ] || fail "first hold did not announce Running"
[ "$(event_field watch.log released hint 2)" = "Hold to Stop" ] || fail "hint after turning on is not Hold to Stop"
[ "$(event_field watch.log performed value 2)" = false ] || fail "second hold did not turn it off"
[ "$(event_field watch.log performed valueText 2)" = Stopped ] || fail "second hold did not announce Stopped"
[ "$(event_field watch.log released hint 3)" = "Hold to Start" ] || fail "hint after turning off is not Hold to Start"
expect_event watch.log performing 2
stop_daemon
dev_stop a
