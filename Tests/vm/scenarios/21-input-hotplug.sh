# SPDX-License-Identifier: Apache-2.0
# actiond's input layer follows udev: a button whose device is absent waits quietly and binds
# when it appears; unplugging mid-hold reports the button lost; the replugged device is bound
# again and read.
# timeout: 60
. "$VM_LIB"
need_bin actiond-input-probe actiond-testdev

cat >cfg.json <<'EOF'
{ buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "gpio-keys" } } ] }
EOF

actiond-input-probe --config cfg.json >p.log 2>&1 &
probe=$!
wait_for_line p.log '^ready ' 15000
expect_count p.log '^bound ' 0

dev_start a --preset gpio-keys
n1=$DEV_NODE
wait_for_line p.log "^appeared [0-9.]+ action $n1 up\$" 10000
expect_count p.log "^bound $n1 " 1
dev_cmd a "press KEY_PROG1 100ms" "down KEY_PROG1"
wait_count p.log '^event .* EV_KEY KEY_PROG1 1 ' 2 20000

step "unplug mid-hold"
dev_stop a
wait_for_line p.log '^lost [0-9.]+ action$' 10000
wait_for_line p.log "^unbound $n1 " 10000

step "replug"
dev_start a --preset gpio-keys
n2=$DEV_NODE
wait_count p.log '^bound ' 2 10000
expect_line p.log "^bound $n2 name=\"gpio-keys\" buttons=action "
wait_count p.log "^appeared [0-9.]+ action $n2 up\$" 1 10000
dev_cmd a "press KEY_PROG1 100ms"
wait_count p.log '^event .* EV_KEY KEY_PROG1 0 ' 2 20000
expect_count p.log '^event .* EV_KEY KEY_PROG1 1 ' 3

kill -TERM "$probe"
wait "$probe" || fail "the probe exited with $?"
dev_stop a
