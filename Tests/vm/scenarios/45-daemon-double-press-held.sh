# SPDX-License-Identifier: Apache-2.0
# Daemon, double press whose second press is held (issue 16): on a button with hold,
# doublePress and longHold assignments, the second press of a double press is consumed by
# it: the doublePress control performs once at the second key-down, and holding that press
# past the hold threshold and past the long-hold threshold performs nothing more (no `held`,
# no `long-held`, neither control runs); its release is `released-after-double-press` with
# the whole duration (never `released-after-hold`). A third press after it starts a new
# gesture: a short press (`pressed` at its key-down, `released` once its window passed), not
# a second double press. The device is a keyboard (EV_REP): the held second press
# autorepeats for seconds, and no repeat counts as a press.
# Timing: the kernel's stamps (a reader's) decide; an attempt a stall pushed outside the
# window is redone (at most 4 times). The first press is short against a 3 s threshold.
# timeout: 240
. "$VM_LIB"
need_daemon

WINDOW_MS=1000
THRESHOLD_MS=3000
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
      holdThresholdMs: $THRESHOLD_MS, doublePressWindowMs: $WINDOW_MS, longHoldThresholdMs: $LONG_THRESHOLD_MS },
  ],
  controls: [
    { kind: "org.actiond.vm.start", type: "button", displayName: "Start",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] } },
    { kind: "org.actiond.vm.mute", type: "button", displayName: "Mute",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] } },
    { kind: "org.actiond.vm.reboot", type: "button", displayName: "Reboot",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] } },
  ],
  assignments: {
    panel: { hold: "org.actiond.vm.start", doublePress: "org.actiond.vm.mute", longHold: { kind: "org.actiond.vm.reboot" } },
  },
}
CONFIG

# Presses sent so far (the reader's NTH press), and what the daemon must have announced.
PRESSES=0
EXP_PRESSED=0
EXP_RELEASED=0
EXP_DOUBLE=0

dev_start a --preset usb-keyboard --name actiond-vm-button
start_daemon config.json
wait_bound
watch_start
reader_start r "$DEV_NODE" --timeout 600s

step "double press, its second press kept down"
double_press_held "$WINDOW_MS" "$THRESHOLD_MS"

# Kept down past both thresholds (the tool's sleep: the release's stamp is at least this late).
dev_cmd a "sleep $((LONG_THRESHOLD_MS + 600))ms" "up KEY_PROG1"
wait_for_event watch.log released-after-double-press "$EXP_DOUBLE" 30000
press_stamps r.log KEY_PROG1 "$n2"
down2=$DOWN up2=$UP
held_ms=$(((up2 - down2) / 1000))
step "second press held $held_ms ms (kernel stamps)"
[ "$held_ms" -ge "$LONG_THRESHOLD_MS" ] || fail "the second press lasted only $held_ms ms by the stamps"
repeats=$(count_lines r.log 'EV_KEY KEY_PROG1 2$')
step "the kernel autorepeated it $repeats times"
[ "$repeats" -gt 0 ] || fail "no autorepeat on a keyboard with EV_REP held for $held_ms ms"
[ "$(event_field watch.log double-pressed time "$EXP_DOUBLE")" = "$down2" ] || fail "double-pressed is not stamped at the second key-down $down2"
expect_near "$(event_field watch.log double-pressed gapMs "$EXP_DOUBLE")" $(((down2 - up1) / 1000)) "double-pressed gapMs"
[ "$(event_field watch.log released-after-double-press time "$EXP_DOUBLE")" = "$up2" ] || fail "released-after-double-press is not stamped at $up2"
expect_near "$(event_field watch.log released-after-double-press durationMs "$EXP_DOUBLE")" "$held_ms" "released-after-double-press durationMs"
[ "$(event_field watch.log performing gesture "$EXP_DOUBLE")" = doublePress ] || fail "performing has no gesture doublePress"
expect_count ran.log "^ran kind=org.actiond.vm.mute gesture=doublePress button=panel press=$down2\$" 1

step "a third press right after: a new gesture (a short press), not another double press"
n3=$((PRESSES + 1))
PRESSES=$n3
dev_cmd a "sleep 100ms" "press KEY_PROG1 100ms"
wait_count r.log 'EV_KEY KEY_PROG1 0$' "$n3" "$WAIT_MS"
press_stamps r.log KEY_PROG1 "$n3"
down3=$DOWN up3=$UP
EXP_PRESSED=$((EXP_PRESSED + 1))
EXP_RELEASED=$((EXP_RELEASED + 1))
wait_for_event watch.log released "$EXP_RELEASED" 30000
[ "$(event_field watch.log pressed time "$EXP_PRESSED")" = "$down3" ] || fail "the third press's pressed is not stamped at $down3"
[ "$(event_field watch.log released time "$EXP_RELEASED")" = "$up3" ] || fail "the third press's released is not stamped at $up3"

settle_ms $((WINDOW_MS + 500))
reader_stop r
stop_daemon
expect_event watch.log double-pressed "$EXP_DOUBLE"
expect_event watch.log released-after-double-press "$EXP_DOUBLE"
expect_event watch.log held 0
expect_event watch.log long-held 0
expect_event watch.log released-after-hold 0
expect_event watch.log released "$EXP_RELEASED"
expect_event watch.log pressed "$EXP_PRESSED"
expect_event watch.log performing "$EXP_DOUBLE"
expect_event watch.log performed "$EXP_DOUBLE"
expect_event watch.log failed 0
expect_count ran.log '^ran ' "$EXP_DOUBLE"
expect_no_line ran.log 'kind=org.actiond.vm.(start|reboot)'
dev_stop a
