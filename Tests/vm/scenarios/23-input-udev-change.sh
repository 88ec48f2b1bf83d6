# SPDX-License-Identifier: Apache-2.0
# udev rules decide: a device that gains ACTIOND_BUTTON (and the shipped rules' `actiond` tag)
# through a rule and a `change` event is bound; removing the rule and triggering again
# unbinds it (current tags and properties, not stale ones).
# timeout: 60
. "$VM_LIB"
need_bin actiond-input-probe actiond-testdev udevadm

cat >cfg.json <<'EOF'
{ buttons: [ { name: "action", key: "KEY_PROG1", match: { tag: "actiond", property: { ACTIOND_BUTTON: "action" } } } ] }
EOF

dev_start a --preset gpio-keys --name vm-button
n=$DEV_NODE
sys=/sys/class/input/${n##*/}
udevadm settle --timeout=10 || true

actiond-input-probe --config cfg.json >p.log 2>&1 &
probe=$!
wait_for_line p.log '^ready ' 15000
expect_count p.log '^bound ' 0

step "rule added"
echo 'SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}=="vm-button", ENV{ACTIOND_BUTTON}="action"' \
  >/etc/udev/rules.d/69-actiond-vm.rules
udevadm control --reload
udevadm trigger --action=change "$sys"
wait_for_line p.log "^bound $n name=\"vm-button\" buttons=action " 10000
actiond-input-probe --config cfg.json --list >list.log 2>&1
expect_line list.log "^device $n name=\"vm-button\" id=0001:0001 bus=0019 .*tags=([^ ]*,)?actiond(,[^ ]*)? buttons=action\$"
expect_line list.log '^  property ACTIOND_BUTTON=action$'
dev_cmd a "press KEY_PROG1 50ms"
wait_for_line p.log '^event .* EV_KEY KEY_PROG1 0 button=action$' 20000

step "rule removed"
rm /etc/udev/rules.d/69-actiond-vm.rules
udevadm control --reload
udevadm trigger --action=change "$sys"
wait_for_line p.log '^lost [0-9.]+ action$' 10000
wait_for_line p.log "^unbound $n no longer matched by any button\$" 10000

kill -TERM "$probe"
wait "$probe" || fail "the probe exited with $?"
dev_stop a
