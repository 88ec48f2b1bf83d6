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

# change_until yes|no: a `change` event for the device, again (with the rules reloaded) until
# udev's database has (yes) or lacks (no) the rule's property. The daemon must follow each
# change event as udev reports it; this makes sure one of them carries the rule's new state
# (once, in a loaded CI run with Debian 13's udev, the change after the rule's removal still
# carried the property and the probe rightly stayed bound).
change_until() {
  for _ in 1 2 3 4 5; do
    udevadm control --reload
    udevadm trigger --action=change --settle "$sys"
    udevadm info --query=property --name="$n" >props.txt
    has=no
    if grep -q '^ACTIOND_BUTTON=action$' props.txt; then has=yes; fi
    if [ "$has" = "$1" ]; then return 0; fi
    echo "udev's database does not follow the rule yet; triggering again"
  done
  fail "udev's database never followed the rule (ACTIOND_BUTTON wanted: $1)"
}

step "rule added"
echo 'SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}=="vm-button", ENV{ACTIOND_BUTTON}="action"' \
  >/etc/udev/rules.d/69-actiond-vm.rules
change_until yes
wait_for_line p.log "^bound $n name=\"vm-button\" buttons=action " 10000
actiond-input-probe --config cfg.json --list >list.log 2>&1
expect_line list.log "^device $n name=\"vm-button\" id=0001:0001 bus=0019 .*tags=([^ ]*,)?actiond(,[^ ]*)? buttons=action\$"
expect_line list.log '^  property ACTIOND_BUTTON=action$'
dev_cmd a "press KEY_PROG1 50ms"
wait_for_line p.log '^event .* EV_KEY KEY_PROG1 0 button=action$' 20000

step "rule removed"
rm /etc/udev/rules.d/69-actiond-vm.rules
change_until no
wait_for_line p.log '^lost [0-9.]+ action$' 10000
wait_for_line p.log "^unbound $n no longer matched by any button\$" 10000

kill -TERM "$probe"
wait "$probe" || fail "the probe exited with $?"
dev_stop a
