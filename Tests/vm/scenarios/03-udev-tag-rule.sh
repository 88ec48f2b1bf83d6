# SPDX-License-Identifier: Apache-2.0
# Debian's udevd applies a rule from /etc/udev/rules.d to a uinput device: the tag and the
# property show in `udevadm info` and in udev's tag index; a device the rule does not match gets
# neither. A gpio-keys look-alike gets ID_INPUT_KEY but not ID_INPUT_KEYBOARD (so matching must
# not rely on KEYBOARD).
# timeout: 30
. "$VM_LIB"

dev_start a --preset gpio-keys --name actiond-vm-tagged
tagged=$DEV_NODE
dev_start b --preset gpio-keys
untagged=$DEV_NODE
udevadm settle --timeout=5

SYSTEMD_PAGER=cat udevadm info "$tagged" >tagged.log
SYSTEMD_PAGER=cat udevadm info "$untagged" >untagged.log
expect_line tagged.log '^E: TAGS=.*:actiond-vm-test:'
expect_line tagged.log '^E: CURRENT_TAGS=.*:actiond-vm-test:'
expect_line tagged.log '^E: ACTIOND_VM_TEST=tagged$'
expect_line tagged.log '^E: ID_INPUT_KEY=1$'
expect_no_line tagged.log '^E: ID_INPUT_KEYBOARD='
expect_no_line untagged.log 'actiond-vm-test'
expect_no_line untagged.log 'ACTIOND_VM_TEST'
expect_line untagged.log '^E: ID_INPUT_KEY=1$'

# udev's tag index is what libudev's match_tag enumeration reads.
set -- $(stat -c '%t %T' "$tagged")
major_minor="c$((0x$1)):$((0x$2))"
ls /run/udev/tags/actiond-vm-test/ >tags.log
expect_line tags.log "^$major_minor\$"
expect_count tags.log . 1

# A device removed is gone from the index too.
dev_stop a
udevadm settle --timeout=5
ls /run/udev/tags/actiond-vm-test/ >tags-after.log 2>&1 || true
expect_no_line tags-after.log "^$major_minor\$"
dev_stop b
