# SPDX-License-Identifier: Apache-2.0
# A gpio-keys look-alike made through uinput (BUS_HOST, 0001:0001, no EV_REP): a 700 ms press is
# read back by a second process with kernel timestamps on the sender's clock (CLOCK_MONOTONIC),
# each stamped after it was sent, and the kernel adds no autorepeat.
# timeout: 30
. "$VM_LIB"

dev_start a --preset gpio-keys
step "device $DEV_NODE"
expect_line a.log 'created /dev/input/event[0-9]+ .*name="gpio-keys" bus=host id=0001:0001 rep=no'

reader_start r "$DEV_NODE" --timeout 30s --count 2
expect_line r.log 'opened .* name="gpio-keys" bus=host id=0001:0001 rep=no'

dev_cmd a "press KEY_PROG1 700ms"
reader_wait r

expect_count r.log '^event .* EV_KEY KEY_PROG1 1$' 1
expect_count r.log '^event .* EV_KEY KEY_PROG1 0$' 1
expect_count r.log 'EV_KEY KEY_PROG1 2$' 0

sent=$(hold_ms a.log KEY_PROG1)
seen=$(hold_ms r.log KEY_PROG1)
step "hold sent ${sent} ms, seen by the reader ${seen} ms"
# The sender sleeps to an absolute deadline 700 ms after its press, so its hold is never
# shorter (a busy host only makes it longer). The kernel stamps each event when it is written,
# after the sender read its clock: never before the send time. On an idle host the two agree
# to ~1 ms; how far apart a loaded host puts them is not this scenario's business, so the
# upper bound only catches a different clock (CLOCK_SANITY_MS).
[ "$sent" -ge 700 ] || fail "sent hold = $sent ms, shorter than the 700 ms deadline"
for v in 1 0; do
  d=$(($(key_time_us r.log KEY_PROG1 $v) - $(key_time_us a.log KEY_PROG1 $v)))
  step "kernel timestamp - send time (value $v): $d us"
  expect_between "$d" 0 $((CLOCK_SANITY_MS * 1000)) "kernel timestamp minus send time (value $v, us)"
done

dev_stop a
