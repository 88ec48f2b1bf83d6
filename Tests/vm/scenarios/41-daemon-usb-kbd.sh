# SPDX-License-Identifier: Apache-2.0
# Daemon with a QEMU USB keyboard driven from the host over QMP (a second, independent input
# path: xhci + usbhid + hid-generic): short press, hold (with the keyboard's autorepeat), and
# unplug mid-hold (cancelled, no perform); plugged again it is bound again.
# timeout: 120
. "$VM_LIB"
need_daemon

name="QEMU QEMU USB Keyboard"
write_config config.json "{ name: \"$name\" }" "" KEY_VOLUMEUP
start_daemon config.json
watch_start
host device_add usb-kbd,bus=xhci.0,id=kbd1
wait_for_event watch.log device-added 1 15000
wait_bound

host press volumeup $SHORT_MS >/dev/null
wait_for_event watch.log released 1
expect_event watch.log performing 0
[ "$(event_field watch.log released hint)" = "Hold to Start" ] || fail "short press did not announce Hold to Start"

host press volumeup $LONG_MS >/dev/null
wait_for_event watch.log performed 1
settle_ms 500
expect_event watch.log performing 1
expect_event watch.log pressed 2

host key-down volumeup
host sleep $SHORT_MS   # far from the threshold, however slow QMP is
host device_del kbd1
host key-up volumeup   # QEMU's own key state; goes to the PS/2 keyboard now, which is not matched
wait_for_event watch.log device-removed 1 10000
settle_ms 1000
expect_event watch.log pressed 3
expect_event watch.log cancelled 1
# An unplug is an unplug: not a resync (nothing was dropped), whether or not the reader saw
# the releases the input core makes at removal.
[ "$(event_field watch.log cancelled reason)" = device-lost ] ||
  fail "cancelled with reason $(event_field watch.log cancelled reason), expected device-lost"
expect_no_line "$DAEMON_LOG" 'SYN_DROPPED'
expect_event watch.log released 1
expect_event watch.log performing 1

host device_add usb-kbd,bus=xhci.0,id=kbd2
wait_for_event watch.log device-added 2 15000
wait_bound
host press volumeup $LONG_MS >/dev/null
wait_for_event watch.log performed 2
host device_del kbd2
stop_daemon
