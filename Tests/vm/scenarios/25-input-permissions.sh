# SPDX-License-Identifier: Apache-2.0
# Node permissions, as an unprivileged user: a node it cannot open is reported with the errno
# (and the button waits); a node it can only read is opened read-only, grabbed and read.
# timeout: 40
. "$VM_LIB"
need_bin actiond-input-probe actiond-testdev su

cat >cfg.json <<'EOF'
{ buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "gpio-keys" }, grab: true } ] }
EOF

dev_start a --preset gpio-keys
n=$DEV_NODE

step "no access"
chmod 0600 "$n"
su -s /bin/sh tester -c "actiond-input-probe --config cfg.json --timeout 1" >denied.log 2>&1 ||
  fail "the probe failed: $(tail -3 denied.log)"
expect_line denied.log "^failed $n: cannot open: $n: open: EACCES"
expect_count denied.log '^bound ' 0

step "read-only access"
chmod 0644 "$n"
su -s /bin/sh tester -c "actiond-input-probe --config cfg.json --count 2 --timeout 20" >p.log 2>&1 &
probe=$!
wait_for_line p.log '^ready ' 15000
expect_line p.log "^bound $n name=\"gpio-keys\" buttons=action grabbed=yes readonly=yes\$"
dev_cmd a "press KEY_PROG1 50ms"
wait "$probe" || fail "the probe exited with $?"
expect_count p.log '^event .* EV_KEY KEY_PROG1 [01] button=action$' 2
dev_stop a
