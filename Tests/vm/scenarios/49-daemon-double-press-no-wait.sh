# SPDX-License-Identifier: Apache-2.0
# Daemon, double press costs nothing where it is not configured (issue 16): two buttons on
# one device, `panel` (KEY_PROG1) with a doublePress assignment and `plain` (KEY_POWER) with
# a hold only. A short press of `plain` is `released` as soon as it is read: before the
# next key-down of the device is announced, even one 100 ms later, also when `plain` is
# pressed twice in a row (no double press on it: two short presses). A short press of
# `panel` waits for its window: `released` (stamped at its own release) comes after a
# `plain` press that started and ended inside that window, which the pending window leaves
# alone. Nothing performs.
# Timing: the daemon handles one device's events in kernel order, so the checks are on the
# order of announcements, never on wall-clock time; the window's case is checked only when
# the stamps put the whole `plain` press inside it (else redone, at most 4 times).
# timeout: 180
. "$VM_LIB"
need_daemon

WINDOW_MS=1000
cat >record.sh <<'SCRIPT'
#!/bin/sh
echo "ran kind=$ACTIOND_KIND gesture=${ACTIOND_GESTURE:-} button=$ACTIOND_BUTTON" >>"$1"
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
      holdThresholdMs: 5000, doublePressWindowMs: $WINDOW_MS },
    { name: "plain", key: "KEY_POWER", match: { name: "actiond-vm-button" }, holdThresholdMs: 5000 },
  ],
  controls: [
    { kind: "org.actiond.vm.start", type: "button", displayName: "Start",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] } },
    { kind: "org.actiond.vm.mute", type: "button", displayName: "Mute",
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] } },
  ],
  assignments: {
    panel: { hold: "org.actiond.vm.start", doublePress: "org.actiond.vm.mute" },
    plain: "org.actiond.vm.start",
  },
}
CONFIG

# line_of BUTTON EVENT NTH: the line number in watch.log of BUTTON's NTH EVENT.
line_of() {
  grep -nE "\"event\":\"$2\",\"button\":\"$1\"" watch.log | sed -n "${3}p" | cut -d: -f1
}

# count_of BUTTON EVENT: how many EVENT announcements of BUTTON.
count_of() {
  count_lines watch.log "\"event\":\"$2\",\"button\":\"$1\""
}

# wait_of BUTTON EVENT N: until BUTTON has N EVENT announcements.
wait_of() {
  wait_count watch.log "\"event\":\"$2\",\"button\":\"$1\"" "$3" 30000
}

# expect_before BUTTON1 EVENT1 NTH1 BUTTON2 EVENT2 NTH2: the first announcement comes first.
expect_before() {
  _a=$(line_of "$1" "$2" "$3")
  _b=$(line_of "$4" "$5" "$6")
  [ -n "$_a" ] && [ -n "$_b" ] && [ "$_a" -lt "$_b" ] || {
    cat watch.log
    fail "$1 $2 #$3 (line ${_a:-none}) is not announced before $4 $5 #$6 (line ${_b:-none})"
  }
}

dev_start a --preset gpio-keys --name actiond-vm-button
start_daemon config.json
wait_bound
watch_start
reader_start r "$DEV_NODE" --timeout 600s
P_PANEL=0 P_PLAIN=0

step "plain, then panel 100 ms later: plain's release is announced before panel's press"
dev_cmd a "press KEY_POWER 100ms" "sleep 100ms" "press KEY_PROG1 100ms"
P_PLAIN=$((P_PLAIN + 1)) P_PANEL=$((P_PANEL + 1))
wait_of panel released "$P_PANEL"
expect_before plain released "$P_PLAIN" panel pressed "$P_PANEL"
[ "$(count_of plain released)" = "$P_PLAIN" ] || fail "plain has $(count_of plain released) released, expected $P_PLAIN"

step "plain pressed twice 100 ms apart: two short presses, each announced before the next press"
dev_cmd a "press KEY_POWER 100ms" "sleep 100ms" "press KEY_POWER 100ms"
P_PLAIN=$((P_PLAIN + 2))
wait_of plain released "$P_PLAIN"
expect_before plain released $((P_PLAIN - 1)) plain pressed "$P_PLAIN"
expect_event watch.log double-pressed 0

step "panel, then a whole plain press inside panel's window: panel's release waits for the window"
attempt=0
while :; do
  attempt=$((attempt + 1))
  [ "$attempt" -le 4 ] || fail "4 attempts in a row were stretched beyond the window by stalls"
  dev_cmd a "press KEY_PROG1 100ms" "sleep 100ms" "press KEY_POWER 100ms"
  P_PLAIN=$((P_PLAIN + 1)) P_PANEL=$((P_PANEL + 1))
  wait_of panel released "$P_PANEL"
  wait_of plain released "$P_PLAIN"
  wait_count r.log 'EV_KEY KEY_POWER 0$' "$P_PLAIN" 30000
  panel_up=$(key_time_us r.log KEY_PROG1 0 "$P_PANEL")
  plain_up=$(key_time_us r.log KEY_POWER 0 "$P_PLAIN")
  inside_ms=$(((plain_up - panel_up) / 1000))
  step "attempt $attempt: plain released $inside_ms ms after panel (kernel stamps)"
  if [ "$inside_ms" -lt $((WINDOW_MS - 50)) ]; then
    expect_before plain released "$P_PLAIN" panel released "$P_PANEL"
    expect_before panel pressed "$P_PANEL" plain pressed "$P_PLAIN"
    break
  fi
  step "the stamps put plain's release outside the window; again"
  settle_ms 500
done
# panel's released is stamped at its own release, not when the window ended.
line=$(line_of panel released "$P_PANEL")
t=$(sed -n "${line}p" watch.log | sed -n 's/.*"time":\([0-9]*\).*/\1/p')
[ "$t" = "$panel_up" ] || fail "panel's released is stamped $t, not at its release $panel_up"

settle_ms $((WINDOW_MS + 500))
reader_stop r
stop_daemon
expect_event watch.log double-pressed 0
expect_event watch.log held 0
expect_event watch.log performing 0
expect_event watch.log cancelled 0
[ "$(count_of panel released)" = "$P_PANEL" ] || fail "panel has $(count_of panel released) released, expected $P_PANEL"
[ "$(count_of plain released)" = "$P_PLAIN" ] || fail "plain has $(count_of plain released) released, expected $P_PLAIN"
[ "$(count_of panel pressed)" = "$P_PANEL" ] || fail "panel has $(count_of panel pressed) pressed, expected $P_PANEL"
[ "$(count_of plain pressed)" = "$P_PLAIN" ] || fail "plain has $(count_of plain pressed) pressed, expected $P_PLAIN"
[ ! -e ran.log ] || fail "something ran: $(cat ran.log)"
dev_stop a
