# SPDX-License-Identifier: Apache-2.0
# The shipped udev-rules/70-actiond.rules on Debian's udevd: a device a local rule marks with
# ENV{ACTIOND_BUTTON}="action" (69-actiond-vm-local.rules) gets the tag `actiond`, group input
# and mode 0660, and is in udev's tag index (what libudev's tag match reads). A uinput
# gpio-keys look-alike (no gpio-keys platform driver behind it) and the AT keyboard, which
# share id 0001:0001, are not tagged: the rule never matches by vendor:product.
# timeout: 30
. "$VM_LIB"

[ -f /etc/udev/rules.d/70-actiond.rules ] || fail "70-actiond.rules is not in the image"
dev_start a --preset gpio-keys --name actiond-vm-button
marked=$DEV_NODE
dev_start b --preset gpio-keys
lookalike=$DEV_NODE
udevadm settle --timeout=5

SYSTEMD_PAGER=cat udevadm info "$marked" >marked.log
expect_line marked.log '^E: ACTIOND_BUTTON=action$'
expect_line marked.log '^E: CURRENT_TAGS=.*:actiond:'
expect_line marked.log '^E: SYSTEMD_WANTS=.*actiond.service'
perms=$(stat -c '%G %a' "$marked")
[ "$perms" = "input 660" ] || fail "$marked is '$perms', expected 'input 660'"
set -- $(stat -c '%t %T' "$marked")
expect_line_in_dir /run/udev/tags/actiond "c$((0x$1)):$((0x$2))"

SYSTEMD_PAGER=cat udevadm info "$lookalike" >lookalike.log
expect_no_line lookalike.log ':actiond:'
at=$(actiond-testdev list | awk '/name="AT Translated Set 2 keyboard"/ { print $1 }')
[ -n "$at" ] || fail "no AT keyboard in this VM"
SYSTEMD_PAGER=cat udevadm info "$at" >at-keyboard.log
expect_line at-keyboard.log '^E: ID_INPUT_KEYBOARD=1$'
expect_no_line at-keyboard.log ':actiond:'
ls /run/udev/tags/actiond >tags.log
expect_count tags.log . 1

dev_stop a
dev_stop b
