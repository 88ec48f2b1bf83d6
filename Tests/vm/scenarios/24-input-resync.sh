# SPDX-License-Identifier: Apache-2.0
# SYN_DROPPED: while actiond's input layer is stopped, far more events arrive than the
# kernel's buffer holds; on reading again it resynchronises through libevdev and reports the
# key's real state (down) instead of replaying guessed presses, then keeps reading normally.
# timeout: 60
. "$VM_LIB"
need_bin actiond-input-probe actiond-testdev

cat >cfg.json <<'EOF'
{ buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "gpio-keys" } } ] }
EOF

dev_start a --preset gpio-keys
n=$DEV_NODE
actiond-input-probe --config cfg.json >p.log 2>&1 &
probe=$!
wait_for_line p.log "^appeared [0-9.]+ action $n up\$" 15000

kill -STOP "$probe"
set --
i=0
while [ $i -lt 200 ]; do
  set -- "$@" "press KEY_PROG1 1ms"
  i=$((i + 1))
done
dev_cmd a "$@" "down KEY_PROG1"
kill -CONT "$probe"

wait_for_line p.log '^resync [0-9.]+ action down$' 10000
presses=$(count_lines p.log '^event .* EV_KEY KEY_PROG1 1 ')
step "presses read before the drop: $presses of 201"
[ "$presses" -lt 201 ] || fail "no events were dropped"
dev_cmd a "up KEY_PROG1"
wait_for_line p.log "^event .* EV_KEY KEY_PROG1 0 button=action\$" 20000
# The release after the resync is read normally, after the resync line.
last=$(grep -E '^(resync|event)' p.log | tail -1)
case $last in "event "*" EV_KEY KEY_PROG1 0 button=action") ;; *) fail "last line: $last" ;; esac

kill -TERM "$probe"
wait "$probe" || fail "the probe exited with $?"
dev_stop a
