# SPDX-License-Identifier: Apache-2.0
# A device destroyed while its key is held: the reader gets a hang-up and the node disappears;
# the device created again gets a node that a new reader can use.
#
# Kernel fact the daemon must handle: on unregistering a device the input core releases every
# key still down (input_dev_release_keys), so a reader MAY see a release stamped at the moment
# of removal right before the hang-up. It sees it only if it reads between the two (evdev_read
# returns ENODEV once the device is gone, even with events queued), so it is a race. A
# release is not proof the user let go: a removal mid-hold must not turn into a short press.
# timeout: 30
. "$VM_LIB"

dev_start a --preset gpio-keys
first=$DEV_NODE
reader_start r "$first" --timeout 5s
dev_cmd a "down KEY_PROG1" "sleep 200ms" "destroy"
reader_wait r
expect_count r.log 'EV_KEY KEY_PROG1 1$' 1
expect_line r.log '^gone '
releases=$(count_lines r.log 'EV_KEY KEY_PROG1 0$')
if [ "$releases" -gt 0 ]; then
  expect_count r.log 'EV_KEY KEY_PROG1 0$' 1
  destroyed=$(awk '$1 == "destroyed" { split($2, t, "."); printf "%d%06d\n", t[1], t[2] }' a.log)
  released=$(key_time_us r.log KEY_PROG1 0)
  step "the input core released the held key at removal ($(((released - destroyed) / 1000)) ms after destroy)"
  expect_between $(((released - destroyed) / 1000)) 0 "$CLOCK_SANITY_MS" "synthesized release after destroy (ms)"
else
  step "the reader saw the hang-up without a release"
fi
wait_gone "$first" 15000

dev_cmd a "recreate"
second=$(awk '$1 == "created" { node = $2 } END { print node }' a.log)
step "recreated at $second (was $first)"
reader_start r2 "$second" --timeout 30s --count 2
dev_cmd a "press KEY_PROG1 200ms"
reader_wait r2
expect_count r2.log 'EV_KEY KEY_PROG1 [01]$' 2
dev_stop a
