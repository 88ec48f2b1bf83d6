# SPDX-License-Identifier: Apache-2.0
# QMP input routing (the console-id gotcha): input-send-event's `device` names a display
# console, not a keyboard. A usb-kbd bound to the console (display=vga0) gets the events sent
# to console vga0; events sent without a console go to the most recently added keyboard.
# timeout: 60
. "$VM_LIB"

host device_add usb-kbd,bus=xhci.0,id=kbdc,display=vga0,port=1
reader_start c --name "QEMU QEMU USB Keyboard" --wait 10s --timeout 1s
bound_node=$(awk '$1 == "opened" { print $2 }' c.log)
reader_wait c
host device_add usb-kbd,bus=xhci.0,id=kbdl,port=2
# The second keyboard has the same name: wait for a second node with it.
_deadline=$(($(now_ms) + 10000))
until [ "$(actiond-testdev list | grep -c 'name="QEMU QEMU USB Keyboard"')" = 2 ]; do
  [ "$(now_ms)" -lt "$_deadline" ] || fail "the second USB keyboard did not appear"
  usleep 50000
done
latest_node=$(actiond-testdev list | awk -v n="$bound_node" '/name="QEMU QEMU USB Keyboard"/ && $1 != n { print $1 }')
step "keyboard on console vga0: $bound_node; latest keyboard: $latest_node"

reader_start b1 "$bound_node" --timeout 30s --count 2
reader_start l1 "$latest_node" --timeout 1s
host press b 100 vga0 >/dev/null
reader_wait b1
reader_wait l1
expect_count b1.log 'EV_KEY KEY_B [01]$' 2
expect_count l1.log 'EV_KEY' 0

reader_start b2 "$bound_node" --timeout 1s
reader_start l2 "$latest_node" --timeout 30s --count 2
host press c 100 >/dev/null
reader_wait b2
reader_wait l2
expect_count l2.log 'EV_KEY KEY_C [01]$' 2
expect_count b2.log 'EV_KEY' 0

host device_del kbdl
host device_del kbdc
wait_gone "$bound_node" 15000
