# SPDX-License-Identifier: Apache-2.0
# actiond's input layer (actiond-input-probe: InputManager, libudev, libevdev) on a gpio-keys
# look-alike: one open for two buttons, a button whose key the device lacks refused, the
# initial key state read (a key already down appears down, its release is no press), press
# and release read with the kernel's CLOCK_MONOTONIC timestamps, clean close on SIGTERM.
# timeout: 40
. "$VM_LIB"
need_bin actiond-input-probe actiond-testdev

cat >cfg.json <<'EOF'
{ buttons: [
  { name: "action", key: "KEY_PROG1", match: { name: "gpio-keys" } },
  { name: "power", key: "KEY_POWER", match: { name: "gpio-keys" } },
  { name: "f13", key: "KEY_F13", match: { name: "gpio-keys" } },
] }
EOF

dev_start a --preset gpio-keys
n=$DEV_NODE
dev_cmd a "down KEY_POWER"

actiond-input-probe --config cfg.json >p.log 2>&1 &
probe=$!
wait_for_line p.log '^ready ' 15000
expect_count p.log "^bound $n name=\"gpio-keys\" buttons=action,power grabbed=no readonly=no\$" 1
expect_line p.log "^appeared [0-9.]+ action $n up\$"
expect_line p.log "^appeared [0-9.]+ power $n down\$"
expect_line p.log "^refused f13 $n: $n \(gpio-keys\) has no key with code 183\$"

# A plain reader next to it: both must see the very same kernel timestamps.
reader_start r "$n" --count 3
dev_cmd a "up KEY_POWER" "press KEY_PROG1 700ms"
reader_wait r
wait_for_line p.log '^event .* EV_KEY KEY_PROG1 0 ' 20000
expect_count p.log '^event .* EV_KEY KEY_POWER 0 button=power$' 1
expect_count p.log '^event .* EV_KEY KEY_PROG1 1 button=action$' 1
expect_count p.log 'EV_KEY KEY_PROG1 2' 0
for v in 1 0; do
  [ "$(key_time_us p.log KEY_PROG1 $v)" = "$(key_time_us r.log KEY_PROG1 $v)" ] ||
    fail "KEY_PROG1 $v: the input layer's timestamp differs from the kernel's as another reader saw it"
done
[ "$(key_time_us p.log KEY_POWER 0)" = "$(key_time_us r.log KEY_POWER 0)" ] || fail "KEY_POWER 0 timestamp differs"
seen=$(hold_ms p.log KEY_PROG1)
step "hold sent $(hold_ms a.log KEY_PROG1) ms, read by the input layer ${seen} ms"
# Loose: TCG delays single events by ~10 ms at times; the exact check is the one above.
expect_between "$seen" 650 750 "kernel-timestamped hold"

kill -TERM "$probe"
wait "$probe" || fail "the probe exited with $?"
expect_line p.log "^unbound $n shutting down\$"
dev_stop a
