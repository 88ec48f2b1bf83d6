# SPDX-License-Identifier: Apache-2.0
# EVIOCGRAB: while one reader holds the grab, another reader of the same device sees nothing;
# once the grabbing reader is gone, the other sees key presses again. This is what actiond's
# `grab: true` relies on to keep a button's key from reaching other programs.
# timeout: 30
. "$VM_LIB"

dev_start a --preset gpio-keys
reader_start grabber "$DEV_NODE" --grab --timeout 30s --count 2
expect_line grabber.log '^opened .* grabbed$'
reader_start other "$DEV_NODE" --timeout 1500ms
dev_cmd a "press KEY_PROG1 200ms"
reader_wait grabber
reader_wait other
expect_count grabber.log 'EV_KEY KEY_PROG1 [01]$' 2
expect_count other.log 'EV_KEY' 0

# The grab ended with its reader: the other reader sees the key again.
reader_start other2 "$DEV_NODE" --timeout 30s --count 2
dev_cmd a "press KEY_PROG1 200ms"
reader_wait other2
expect_count other2.log 'EV_KEY KEY_PROG1 [01]$' 2
dev_stop a
