# SPDX-License-Identifier: Apache-2.0
# A QEMU USB keyboard hot-plugged from the host over QMP (device_add on the xhci bus) appears
# as an evdev node that udev marks ID_INPUT_KEY; a 700 ms key press sent from the host over QMP
# (input-send-event) is read in the guest, with the keyboard's own autorepeat while held; the
# unplug (device_del) ends the reader with a hang-up and removes the node.
# timeout: 40
. "$VM_LIB"

name="QEMU QEMU USB Keyboard"
host device_add usb-kbd,bus=xhci.0,id=kbd1
reader_start r --name "$name" --wait 10s --timeout 10s   # ends 10 s after the last event
node=$(awk '$1 == "opened" { print $2 }' r.log)
step "USB keyboard at $node"
expect_line r.log 'bus=usb id=0627:0001 rep=yes'

reader_start at --name "AT Translated Set 2 keyboard" --wait 2s --timeout 1500ms

udevadm settle --timeout=5
SYSTEMD_PAGER=cat udevadm info "$node" >info.log
expect_line info.log '^E: ID_INPUT_KEY=1$'
expect_line info.log '^E: ID_BUS=usb$'

held=$(host press a 700)
step "host held 'a' for $held ms"
reader_wait r
reader_wait at
expect_count r.log 'EV_KEY KEY_A 1$' 1
expect_count r.log 'EV_KEY KEY_A 0$' 1
expect_count at.log 'EV_KEY' 0
seen=$(hold_ms r.log KEY_A)
repeats=$(count_lines r.log 'EV_KEY KEY_A 2$')
step "guest saw a ${seen} ms hold with $repeats autorepeats"
# QMP and the guest's USB polling delay each edge by their own amount, more so on a loaded
# host: the guest sees the hold, at least half as long as the host held it.
held_ms=${held%.*}
expect_between "$seen" $((held_ms / 2)) $((held_ms + CLOCK_SANITY_MS)) "USB keyboard hold seen in the guest"
[ "$repeats" -ge 1 ] || fail "expected the USB keyboard to autorepeat while held, saw $repeats repeats"

# A media key, as a USB keyboard's spare key for actiond: qcode volumeup is KEY_VOLUMEUP.
reader_start v "$node" --timeout 10s
host press volumeup 100 >/dev/null
reader_wait v
expect_count v.log 'EV_KEY KEY_VOLUMEUP [01]$' 2

reader_start r2 "$node" --timeout 10s
host device_del kbd1
reader_wait r2
expect_line r2.log '^gone '
wait_gone "$node" 15000
