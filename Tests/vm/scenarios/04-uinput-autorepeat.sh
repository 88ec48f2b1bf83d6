# SPDX-License-Identifier: Apache-2.0
# A device with EV_REP (the usb-keyboard preset) is autorepeated by the input core while a key
# is held (value 2 after REP_DELAY, then every REP_PERIOD), with delay and period as set
# through uinput; the same hold on a device without EV_REP (gpio-keys) produces no repeats.
# The daemon must therefore ignore value 2 rather than rely on devices never repeating.
# timeout: 30
. "$VM_LIB"

dev_start a --preset usb-keyboard --rep-delay 250ms --rep-period 50ms
reader_start r "$DEV_NODE" --timeout 5s
dev_cmd a "press KEY_PROG1 700ms"
reader_wait r
repeats=$(count_lines r.log 'EV_KEY KEY_PROG1 2$')
first=$(key_time_us r.log KEY_PROG1 2)
down=$(key_time_us r.log KEY_PROG1 1)
step "EV_REP device: $repeats repeats, first $(((first - down) / 1000)) ms after the press"
up=$(key_time_us r.log KEY_PROG1 0)
# 250 ms delay, then every 50 ms until the release: 10 repeats in a 700 ms hold on an idle
# host. The kernel's repeat timer runs on jiffies (4 ms at Debian's HZ=250): it fires on a
# tick, so up to one tick before 250 ms after a key-down stamped between ticks (seen: 249 ms
# under load), and late on a loaded host; the release may come later than 700 ms. So: at
# least one repeat, no more than the press's real length allows, the first not before the
# delay less two ticks, none after the release.
tick_slack=8
most=$((((up - down) / 1000 - 250 + tick_slack) / 50 + 1))
expect_between "$repeats" 1 "$most" "autorepeats during a $(((up - down) / 1000)) ms hold (delay 250, period 50)"
expect_between $(((first - down) / 1000)) $((250 - tick_slack)) $((CLOCK_SANITY_MS)) "autorepeat delay"
last=$(key_time_us r.log KEY_PROG1 2 "$repeats")
[ "$last" -le "$up" ] || fail "a repeat ($last) came after the release ($up)"
expect_count r.log 'EV_KEY KEY_PROG1 1$' 1
expect_count r.log 'EV_KEY KEY_PROG1 0$' 1
dev_stop a

dev_start b --preset gpio-keys
reader_start r2 "$DEV_NODE" --timeout 30s --count 2
dev_cmd b "press KEY_PROG1 700ms"
reader_wait r2
expect_count r2.log 'EV_KEY KEY_PROG1 2$' 0
expect_count r2.log 'EV_KEY KEY_PROG1 [01]$' 2

# Injected repeats (as a driver with its own repeat would send) reach readers unchanged.
reader_start r3 "$DEV_NODE" --timeout 30s --count 5
dev_cmd b "down KEY_PROG1" "repeat KEY_PROG1 3 every 40ms" "up KEY_PROG1"
reader_wait r3
expect_count r3.log 'EV_KEY KEY_PROG1 2$' 3
dev_stop b
