#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-notify: `actionctl watch --notify` on a real desktop notification stack. A private
# D-Bus session bus (session.conf: nothing activated on demand), Xvfb on a display it
# picks itself, dunst with Tests/notify/dunstrc, and the built actiond on a temporary
# configuration (a store-backed toggle on a button no device serves). This machine has no
# input device to press, so the daemon is driven over its socket, as the deviceless
# tests do: `actionctl press` announces the hint as a real short press does (pressed,
# then released), `actionctl perform` the result (performing, performed) on the same
# button. A real hold (pressed, held, performing, performed) needs the VM.
#
# Checked, each by waiting with a deadline (never a fixed sleep):
#   1. a screenshot of the screen shows the hint (tesseract reads "Hold to Start");
#   2. a screenshot shows the result ("Running") in its place;
#   3. dunst saw a single notification id for all of it (its script log), showed the
#      bar (the progress hint) with the press, and has exactly one notification: none
#      closed into its history until the test closes it.
# The screenshots are left in .build/test-notify/ (docs/desktop-notification.png is one).
#
#   Tests/notify/run.sh BIN_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
me=test-notify
fail() { echo "$me: FAIL: $*" >&2; exit 1; }

if [ -z "${ACTIOND_NOTIFY_INNER:-}" ]; then
  [ $# -eq 1 ] || { echo "usage: $0 BIN_DIR" >&2; exit 2; }
  bin=$(cd "$1" && pwd)
  for tool in dbus-run-session Xvfb dunst dunstctl notify-send import tesseract; do
    command -v "$tool" >/dev/null || fail "$tool is missing (make deps installs mk/notify.mk's APT_PACKAGES)"
  done
  ACTIOND_NOTIFY_INNER=1 exec dbus-run-session --config-file="$here/session.conf" -- "$0" "$bin"
fi

bin=$1
out=$(pwd)/.build/test-notify
mkdir -p "$out"
tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# Polls "$@" until it succeeds or SECONDS pass: WHAT names it in the failure.
until_true() {
  local seconds=$1 what=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no $what within $seconds s"
    sleep 0.05
  done
}
show_logs() {
  for f in "$tmp"/*.log; do echo "--- ${f##*/}"; tail -n 20 "$f"; done >&2
}
trap 'show_logs' ERR

# 1. The display: Xvfb picks a free one and writes its number to fd 3.
Xvfb -displayfd 3 -screen 0 800x400x24 -nolisten tcp 3>"$tmp/display" >"$tmp/xvfb.log" 2>&1 &
pids+=($!)
has_display() { [ -s "$tmp/display" ] && grep -q '^[0-9]' "$tmp/display"; }
until_true 20 "display from Xvfb" has_display
export DISPLAY=:$(head -n 1 "$tmp/display")

# 2. The notification server, its own configuration, and its log of what it showed.
export NOTIFY_LOG=$tmp/shown.txt
: >"$NOTIFY_LOG"
sed "s|@SCRIPT@|$here/log-notification|" "$here/dunstrc" >"$tmp/dunstrc"
dunst -config "$tmp/dunstrc" >"$tmp/dunst.log" 2>&1 &
pids+=($!)
owns_name() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null | grep -q 'boolean true'
}
until_true 20 "dunst on the session bus" owns_name

# 3. The daemon, and the watch.
cat >"$tmp/actiond.json" <<JSON
{
  socket: { path: "$tmp/actiond.sock" },
  stateDirectory: "$tmp/state",
  controlsDirectory: "$tmp/controls.d",
  // No such device: the button waits quietly; the socket drives it.
  buttons: [ { name: "action", key: "KEY_PROG1", match: { devnode: "/dev/input/actiond-test-none" } } ],
  controls: [ {
    kind: "org.actiond.work-timer", type: "toggle", displayName: "Work Timer",
    valueText: { on: "Running", off: "Stopped" }, symbol: "timer", actionHint: { on: "Stop", off: "Start" },
    intent: { type: "state" }, value: { type: "store", initial: false },
  } ],
  assignments: { action: { kind: "org.actiond.work-timer" } },
}
JSON
mkdir -p "$tmp/controls.d"
"$bin/actiond" --config "$tmp/actiond.json" --log-level info >"$tmp/actiond.log" 2>&1 &
pids+=($!)
ctl() { "$bin/actionctl" --socket "$tmp/actiond.sock" "$@"; }
pings() { ctl ping >/dev/null 2>&1; }
until_true 30 "answer from actiond" pings
ctl --json watch --notify >"$tmp/watch.log" 2>&1 &
pids+=($!)
subscribed() { grep -q '"request":"subscribe"' "$tmp/watch.log"; }
until_true 20 "subscription of actionctl watch --notify" subscribed

# Takes a screenshot of the notification's corner into FILE until tesseract reads TEXT.
shows() {
  import -window root -crop 720x200+0+0 +repage "$tmp/shot.png" 2>>"$tmp/import.log" || return 1
  tesseract "$tmp/shot.png" - 2>/dev/null >"$tmp/ocr.txt" || return 1
  grep -qF "$2" "$tmp/ocr.txt" && cp "$tmp/shot.png" "$1"
}

# 4. A short press: the hint.
ctl press action >/dev/null
until_true 30 'screenshot showing "Hold to Start"' shows "$out/hint.png" "Hold to Start"
echo "$me: the press's notification shows the hint: $(tr '\n' ' ' <"$tmp/ocr.txt" | tr -s ' ')"

# 5. The result, on the same button: replaces it.
[ "$(ctl perform action)" = "Work Timer: Running" ] || fail "perform did not turn the Work Timer on"
until_true 30 'screenshot showing "Running"' shows "$out/result.png" "Running"
echo "$me: the result replaced it: $(tr '\n' ' ' <"$tmp/ocr.txt" | tr -s ' ')"

# 6. One notification: dunst gave every step the same id, showed the bar with the press,
# closed none (history empty) and shows exactly one.
ids=$(sed -n 's/^id=\([0-9]*\) .*/\1/p' "$NOTIFY_LOG" | sort -u)
[ "$(wc -l <<<"$ids")" -eq 1 ] || { cat "$NOTIFY_LOG" >&2; fail "dunst showed more than one notification id: $ids"; }
grep -Eq '^id=[0-9]+ progress=([0-9]|[1-9][0-9]|100) summary=Work Timer body=Hold to Start$' "$NOTIFY_LOG" \
  || { cat "$NOTIFY_LOG" >&2; fail "no step of the press showed the hint with a bar (progress hint)"; }
grep -q 'progress=-1 summary=Work Timer body=Running$' "$NOTIFY_LOG" \
  || { cat "$NOTIFY_LOG" >&2; fail "the result was not shown without a bar"; }
[ "$(dunstctl count displayed)" -eq 1 ] || fail "dunst displays $(dunstctl count displayed) notifications, not 1"
[ "$(dunstctl count history)" -eq 0 ] || fail "dunst closed $(dunstctl count history) notification(s) into its history"
dunstctl close-all
closed() { [ "$(dunstctl count history)" -eq 1 ]; }
until_true 10 "the one notification in dunst's history" closed
echo "$me: $(wc -l <"$NOTIFY_LOG") steps shown as one notification (id $ids), replaced in place:"
sed 's/^/  /' "$NOTIFY_LOG"
echo "$me: passed"
