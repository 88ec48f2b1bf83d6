# SPDX-License-Identifier: Apache-2.0
# Grabs by actiond's input layer: a grab another program holds is reported (EBUSY) and taken
# at the next reload once free; while grabbed, another reader sees nothing; a reload (SIGHUP)
# that turns grab off releases it without closing the device.
# timeout: 60
. "$VM_LIB"
need_bin actiond-input-probe actiond-testdev

cat >cfg.json <<'EOF'
{ buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "gpio-keys" }, grab: true } ] }
EOF

dev_start a --preset gpio-keys
n=$DEV_NODE

step "another program holds the grab"
reader_start g "$n" --grab --timeout 600s   # holds the grab until stopped below
actiond-input-probe --config cfg.json >p.log 2>&1 &
probe=$!
wait_for_line p.log '^ready ' 15000
expect_line p.log "^failed $n: cannot grab .*EBUSY"
expect_line p.log "^bound $n name=\"gpio-keys\" buttons=action grabbed=no "
reader_stop g

step "reload takes the freed grab"
kill -HUP "$probe"
wait_for_line p.log "^bound $n name=\"gpio-keys\" buttons=action grabbed=yes " 10000

reader_start r "$n" --timeout 2s
dev_cmd a "press KEY_PROG1 50ms"
wait_for_line p.log '^event .* EV_KEY KEY_PROG1 0 ' 20000
reader_wait r
expect_count r.log '^event .*EV_KEY' 0

step "reload with grab off"
sed -i 's/grab: true/grab: false/' cfg.json
kill -HUP "$probe"
wait_count p.log "^bound $n name=\"gpio-keys\" buttons=action grabbed=no " 2 10000
expect_count p.log '^unbound ' 0
reader_start r2 "$n" --timeout 30s --count 2
dev_cmd a "press KEY_PROG1 50ms"
reader_wait r2
expect_count r2.log '^event .* EV_KEY KEY_PROG1 ' 2
wait_count p.log '^event .* EV_KEY KEY_PROG1 ' 4 20000

kill -TERM "$probe"
wait "$probe" || fail "the probe exited with $?"
dev_stop a
