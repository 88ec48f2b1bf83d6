# SPDX-License-Identifier: Apache-2.0
# Daemon, double press (issue 16): on a button with a doublePress assignment, a second
# key-down within doublePressWindowMs of the first press's release (kernel stamps) is a
# double press: `double-pressed` (time = the second key-down's stamp, gapMs = second
# down - first up) and the doublePress control performs once, at that key-down, while the
# key is still down (ACTIOND_GESTURE=doublePress, ACTIOND_PRESS_TIME = the second key-down's
# kernel stamp); the first press is never `released` and the hold's control never runs; the
# second press ends with `released-after-double-press`. Two presses farther apart than the
# window are two short presses (`released` at the first release, then a new `pressed`);
# nothing performs.
# Timing: the kernel's stamps (a reader's) decide what each attempt was; an attempt a stall
# pushed outside the window is checked as such and redone (at most 4 times). Short presses go
# to a 5 s hold threshold, so no stall turns them into holds.
# timeout: 240
. "$VM_LIB"
need_daemon

WINDOW_MS=1000
THRESHOLD_MS=5000
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
      holdThresholdMs: $THRESHOLD_MS, doublePressWindowMs: $WINDOW_MS },
  ],
  controls: [
    { kind: "org.actiond.vm.start", type: "button", displayName: "Start",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] } },
    { kind: "org.actiond.vm.mute", type: "button", displayName: "Mute",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] } },
  ],
  assignments: { panel: { hold: "org.actiond.vm.start", doublePress: { kind: "org.actiond.vm.mute" } } },
}
CONFIG

# Presses sent so far (the reader's NTH press), and what the daemon must have announced.
PRESSES=0
EXP_PRESSED=0
EXP_RELEASED=0
EXP_DOUBLE=0

# event_line FILE EVENT NTH: the line number of the NTH EVENT announcement.
event_line() {
  grep -nE "\"event\":\"$2\"" "$1" | sed -n "${3}p" | cut -d: -f1
}

dev_start a --preset gpio-keys --name actiond-vm-button
start_daemon config.json
wait_bound
watch_start
reader_start r "$DEV_NODE" --timeout 600s

step "double press inside the window"
double_press_held "$WINDOW_MS" "$THRESHOLD_MS"
dev_cmd a "up KEY_PROG1"
wait_for_event watch.log released-after-double-press "$EXP_DOUBLE" 30000

press_stamps r.log KEY_PROG1 "$n2"
down2=$DOWN up2=$UP
nth=$EXP_DOUBLE
t=$(event_field watch.log double-pressed time "$nth")
[ "$t" = "$down2" ] || fail "double-pressed time $t is not the second key-down's stamp $down2"
expect_near "$(event_field watch.log double-pressed gapMs "$nth")" $(((down2 - up1) / 1000)) "double-pressed gapMs"
[ "$(event_field watch.log performing kind "$nth")" = org.actiond.vm.mute ] || fail "the double press did not perform the doublePress control"
[ "$(event_field watch.log performing gesture "$nth")" = doublePress ] || fail "performing has no gesture doublePress"
[ "$(event_field watch.log performed gesture "$nth")" = doublePress ] || fail "performed has no gesture doublePress"
expect_count ran.log "^ran kind=org.actiond.vm.mute gesture=doublePress button=panel press=$down2\$" 1
t=$(event_field watch.log released-after-double-press time "$nth")
[ "$t" = "$up2" ] || fail "released-after-double-press time $t is not the second release's stamp $up2"
expect_near "$(event_field watch.log released-after-double-press durationMs "$nth")" $(((up2 - down2) / 1000)) \
  "released-after-double-press durationMs"
# The first press of the double press was never a short press (the window has passed by far
# once the second press ended and this much more went by).
settle_ms $((WINDOW_MS + 500))
expect_event watch.log released "$EXP_RELEASED"
expect_event watch.log pressed "$EXP_PRESSED"
expect_line watch.log '"event":"pressed".*"gesture":"doublePress"'

ctl status >status.log
expect_line status.log '"doublePressWindowMs":1000'
expect_line status.log '"doublePress":\{"kind":"org.actiond.vm.mute"'

step "two presses farther apart than the window: two short presses, nothing performs"
n1=$((PRESSES + 1))
n2=$((PRESSES + 2))
PRESSES=$n2
dev_cmd a "press KEY_PROG1 100ms" "sleep $((WINDOW_MS * 5 / 2))ms" "press KEY_PROG1 100ms"
wait_count r.log 'EV_KEY KEY_PROG1 0$' "$n2" "$WAIT_MS"
press_stamps r.log KEY_PROG1 "$n1"
down1=$DOWN up1=$UP
press_stamps r.log KEY_PROG1 "$n2"
down2=$DOWN up2=$UP
step "gap $(((down2 - up1) / 1000)) ms (kernel stamps)"
[ $((down2 - up1)) -gt $(((WINDOW_MS + 20) * 1000)) ] || fail "the sender's ${WINDOW_MS}+ ms gap is $(((down2 - up1) / 1000)) ms by the stamps"
EXP_PRESSED=$((EXP_PRESSED + 2))
EXP_RELEASED=$((EXP_RELEASED + 2))
wait_for_event watch.log released "$EXP_RELEASED" 30000
r1=$((EXP_RELEASED - 1))
p2=$EXP_PRESSED
[ "$(event_field watch.log pressed time $((p2 - 1)))" = "$down1" ] || fail "pressed is not stamped at the first key-down $down1"
[ "$(event_field watch.log released time "$r1")" = "$up1" ] || fail "the first released is not stamped at its release $up1"
expect_near "$(event_field watch.log released durationMs "$r1")" $(((up1 - down1) / 1000)) "released durationMs"
[ "$(event_field watch.log pressed time "$p2")" = "$down2" ] || fail "the second pressed is not stamped at its key-down $down2"
[ "$(event_field watch.log released time "$EXP_RELEASED")" = "$up2" ] || fail "the second released is not stamped at $up2"
[ "$(event_line watch.log released "$r1")" -lt "$(event_line watch.log pressed "$p2")" ] ||
  fail "the first short press was not announced before the second press"

settle_ms $((WINDOW_MS + 500))
reader_stop r
stop_daemon
expect_event watch.log double-pressed "$EXP_DOUBLE"
expect_event watch.log released-after-double-press "$EXP_DOUBLE"
expect_event watch.log released "$EXP_RELEASED"
expect_event watch.log pressed "$EXP_PRESSED"
expect_event watch.log held 0
expect_event watch.log performing "$EXP_DOUBLE"
expect_event watch.log performed "$EXP_DOUBLE"
expect_event watch.log busy 0
expect_event watch.log failed 0
expect_count ran.log '^ran ' "$EXP_DOUBLE"
expect_no_line ran.log 'kind=org.actiond.vm.start'
dev_stop a
