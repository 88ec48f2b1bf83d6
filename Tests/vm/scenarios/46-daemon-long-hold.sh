# SPDX-License-Identifier: Apache-2.0
# Daemon, long hold (issue 16): on a button with hold and longHold assignments, one press
# kept down performs the hold's control at holdThresholdMs (`held` stamped key-down +
# threshold, carrying `longHold` {kind, hint, deadline = key-down + longHoldThresholdMs})
# and the longHold's control at longHoldThresholdMs (`long-held` stamped at that deadline),
# each exactly once, both while the key is still down, both with ACTIOND_PRESS_TIME = the
# key-down's kernel stamp and ACTIOND_GESTURE hold / longHold; the release says
# `released-after-hold` with longHeld true. A press released between the thresholds runs
# the hold only (longHeld false). A short press runs nothing; its hints name the long hold.
# Timing: the kernel's stamps decide; a between-thresholds press that a stall stretched past
# the long threshold is checked as a long hold and redone (at most 4 times).
# timeout: 240
. "$VM_LIB"
need_daemon

THRESHOLD_MS=1500
LONG_THRESHOLD_MS=4000
cat >record.sh <<'SCRIPT'
#!/bin/sh
echo "ran kind=$ACTIOND_KIND gesture=${ACTIOND_GESTURE:-} button=$ACTIOND_BUTTON press=${ACTIOND_PRESS_TIME:-}" >>"$1"
SCRIPT
chmod 0755 record.sh
mkdir -p controls.d
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [
    { name: "panel", key: "KEY_PROG1", match: { name: "actiond-vm-button" },
      holdThresholdMs: $THRESHOLD_MS, longHoldThresholdMs: $LONG_THRESHOLD_MS },
  ],
  controls: [
    { kind: "org.actiond.vm.start", type: "button", displayName: "Start",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] } },
    { kind: "org.actiond.vm.reboot", type: "button", displayName: "Reboot",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] } },
  ],
  assignments: { panel: { hold: { kind: "org.actiond.vm.start" }, longHold: "org.actiond.vm.reboot" } },
}
CONFIG

PRESSES=0
EXP_HOLDS=0
EXP_LONG=0
EXP_PERFORMED=0

# check_held NTH DOWN: the NTH `held` is stamped at DOWN + threshold and announces the long hold.
check_held() {
  t=$(event_field watch.log held time "$1")
  [ "$t" = $(($2 + THRESHOLD_MS * 1000)) ] || fail "held #$1 at $t, expected key-down $2 + ${THRESHOLD_MS} ms"
  line=$(grep -E '"event":"held"' watch.log | sed -n "${1}p")
  case $line in
    *'"longHold":{'*) ;;
    *) fail "held #$1 does not say what holding on will do (no longHold object): $line" ;;
  esac
  case $line in
    *'"kind":"org.actiond.vm.reboot"'*) ;;
    *) fail "held #$1's longHold does not name org.actiond.vm.reboot: $line" ;;
  esac
  [ "$(event_field watch.log held deadline "$1")" = $(($2 + LONG_THRESHOLD_MS * 1000)) ] ||
    fail "held #$1's longHold deadline is not key-down + ${LONG_THRESHOLD_MS} ms: $line"
  hint=$(echo "$line" | awk '{ i = index($0, "\"longHold\":{"); s = substr($0, i); j = index(s, "\"hint\":\""); if (j) { s = substr(s, j + 8); print substr(s, 1, index(s, "\"") - 1) } }')
  [ -n "$hint" ] || fail "held #$1's longHold has no hint: $line"
}

dev_start a --preset gpio-keys --name actiond-vm-button
start_daemon config.json
wait_bound
watch_start
reader_start r "$DEV_NODE" --timeout 600s

step "short press: nothing runs; the hints name the long hold"
PRESSES=$((PRESSES + 1))
dev_cmd a "press KEY_PROG1 100ms"
wait_for_event watch.log released 1 30000
expect_line watch.log '"event":"released".*"gesture":"longHold"'
expect_line watch.log '"event":"pressed".*"gesture":"longHold"'
expect_event watch.log held 0

ctl status >status.log
expect_line status.log '"longHoldThresholdMs":4000'
expect_line status.log '"longHold":\{"kind":"org.actiond.vm.reboot"'

step "long hold: the hold at the first threshold, the long hold at the second, key still down"
PRESSES=$((PRESSES + 1))
n=$PRESSES
dev_cmd a "down KEY_PROG1"
wait_for_event watch.log held 1 30000
wait_for_event watch.log performed 1 30000
wait_for_event watch.log long-held 1 30000
wait_for_event watch.log performed 2 30000
dev_cmd a "up KEY_PROG1"
wait_for_event watch.log released-after-hold 1 30000
EXP_HOLDS=1 EXP_LONG=1 EXP_PERFORMED=2
press_stamps r.log KEY_PROG1 "$n"
down=$DOWN up=$UP
step "held $(((up - down) / 1000)) ms (kernel stamps)"
check_held 1 "$down"
t=$(event_field watch.log long-held time 1)
[ "$t" = $((down + LONG_THRESHOLD_MS * 1000)) ] || fail "long-held at $t, expected key-down $down + ${LONG_THRESHOLD_MS} ms"
[ "$t" -lt "$up" ] || fail "long-held ($t) is not before the release ($up)"
[ "$(event_field watch.log performing kind 1)" = org.actiond.vm.start ] || fail "the first perform is not the hold's control"
[ "$(event_field watch.log performing gesture 1)" = hold ] || fail "the first performing has no gesture hold"
[ "$(event_field watch.log performing kind 2)" = org.actiond.vm.reboot ] || fail "the second perform is not the longHold's control"
[ "$(event_field watch.log performing gesture 2)" = longHold ] || fail "the second performing has no gesture longHold"
[ "$(event_field watch.log performed gesture 2)" = longHold ] || fail "the second performed has no gesture longHold"
expect_count ran.log "^ran kind=org.actiond.vm.start gesture=hold button=panel press=$down\$" 1
expect_count ran.log "^ran kind=org.actiond.vm.reboot gesture=longHold button=panel press=$down\$" 1
[ "$(event_field watch.log released-after-hold longHeld 1)" = true ] || fail "released-after-hold does not say longHeld: true"
[ "$(event_field watch.log released-after-hold time 1)" = "$up" ] || fail "released-after-hold is not stamped at the release $up"
expect_near "$(event_field watch.log released-after-hold durationMs 1)" $(((up - down) / 1000)) "released-after-hold durationMs"

step "hold released between the thresholds: the hold only"
attempt=0
while :; do
  attempt=$((attempt + 1))
  [ "$attempt" -le 4 ] || fail "4 attempts in a row were stretched past the long threshold by stalls"
  PRESSES=$((PRESSES + 1))
  n=$PRESSES
  dev_cmd a "down KEY_PROG1"
  EXP_HOLDS=$((EXP_HOLDS + 1))
  EXP_PERFORMED=$((EXP_PERFORMED + 1))
  wait_for_event watch.log held "$EXP_HOLDS" 30000
  wait_for_event watch.log performed "$EXP_PERFORMED" 30000
  dev_cmd a "up KEY_PROG1"
  wait_for_event watch.log released-after-hold "$EXP_HOLDS" 30000
  press_stamps r.log KEY_PROG1 "$n"
  down=$DOWN up=$UP
  held_ms=$(((up - down) / 1000))
  step "attempt $attempt: held $held_ms ms (kernel stamps)"
  check_held "$EXP_HOLDS" "$down"
  if [ "$held_ms" -lt $((LONG_THRESHOLD_MS - 20)) ]; then
    [ "$(event_field watch.log released-after-hold longHeld "$EXP_HOLDS")" = false ] ||
      fail "a hold of $held_ms ms (< ${LONG_THRESHOLD_MS}) was announced longHeld"
    expect_count ran.log "^ran kind=org.actiond.vm.start gesture=hold button=panel press=$down\$" 1
    break
  fi
  if [ "$held_ms" -gt $((LONG_THRESHOLD_MS + 20)) ]; then
    step "stretched past the long threshold by the stamps: a long hold expected; again"
    EXP_LONG=$((EXP_LONG + 1))
    EXP_PERFORMED=$((EXP_PERFORMED + 1))
    wait_for_event watch.log performed "$EXP_PERFORMED" 30000
    [ "$(event_field watch.log released-after-hold longHeld "$EXP_HOLDS")" = true ] ||
      fail "a hold of $held_ms ms (> ${LONG_THRESHOLD_MS}) was not announced longHeld"
  else
    settle_ms 1000
    EXP_LONG=$(event_count watch.log long-held)
    EXP_PERFORMED=$(event_count watch.log performed)
  fi
done

settle_ms 1000
reader_stop r
stop_daemon
expect_event watch.log held "$EXP_HOLDS"
expect_event watch.log long-held "$EXP_LONG"
expect_event watch.log released-after-hold "$EXP_HOLDS"
expect_event watch.log released 1
expect_event watch.log performing "$EXP_PERFORMED"
expect_event watch.log performed "$EXP_PERFORMED"
expect_event watch.log failed 0
expect_event watch.log busy 0
expect_count ran.log 'kind=org.actiond.vm.start gesture=hold ' "$EXP_HOLDS"
expect_count ran.log 'kind=org.actiond.vm.reboot gesture=longHold ' "$EXP_LONG"
expect_count ran.log '^ran ' "$EXP_PERFORMED"
dev_stop a
