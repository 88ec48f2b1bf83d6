# SPDX-License-Identifier: Apache-2.0
# Daemon: `actionctl watch --notify` on a real hold (a uinput press of threshold + 400 ms) is
# one notification from the hint to the result: the first notify-send creates it with the bar
# at the start (the value hint), timer steps fill the bar toward the threshold while the key is
# down, `held` fills it, then "Performing…" and the result replace it (--replace-id with the
# printed id), and nothing follows the release. `held`, "Performing…" and the result come
# together (the intent, a state toggle, ends at once), and notify-send runs one at a time per
# button: whatever comes while the previous one still runs (a loaded host) collapses into the
# newest, as actionctl(1) documents. So the full bar and "Performing…" each show at most once
# and may be skipped; the result always shows, last (NotifyTests pin each step's content;
# this checks the stream a real press gives through the real notify-send path). The image has
# no D-Bus or X server, so notify-send is a stand-in that logs its arguments and prints id 41;
# the test-notify tier proves the same stream on a real notification server (dunst under Xvfb).
# timeout: 60
. "$VM_LIB"
need_daemon

cat >"$WORK/notify-send" <<SCRIPT
#!/bin/sh
printf '%s\n' "\$*" >>"$WORK/notify.log"
echo 41
SCRIPT
chmod +x "$WORK/notify-send"
: >"$WORK/notify.log"

dev_start a --preset gpio-keys --name actiond-vm-button
write_config config.json
start_daemon config.json
wait_bound
spawn "$WORK/notify-watch.log" env PATH="$WORK:$PATH" actionctl --socket "$SOCK" --json watch --notify
wait_for_line "$WORK/notify-watch.log" '"request":"subscribe"' "$WAIT_MS"

dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
wait_for_line notify.log ' -- VM Timer Running$' "$WAIT_MS"
# The release comes LONG_MS - HOLD_MS after `held`; nothing may follow it.
wait_for_line notify-watch.log '"event":"released-after-hold"' "$WAIT_MS"
settle_ms 500
step "notify-send calls:"
cat notify.log

calls=$(count_lines notify.log '.')
first=$(head -n 1 notify.log)
case $first in
  *--replace-id*) fail "the first notification replaces another: $first" ;;
esac
# The bar is where the press is when the watch reads `pressed` (a loaded host delays it).
echo "$first" | grep -qE -- '--hint=int:value:([0-9]|[1-9][0-9]) .*-- VM Timer Hold to Start$' \
  || fail "the first notification is not the hint with the bar short of the threshold: $first"
expect_count notify.log '--replace-id=41 ' $((calls - 1))
# The bar: increasing values below 100 from the timer while the key is down, then 100 (held).
values=$(sed -n 's/.*--hint=int:value:\([0-9]*\) .*/\1/p' notify.log | tr '\n' ' ')
step "bar values: $values"
steps=$(echo "$values" | awk '{ n = 0; for (i = 2; i <= NF; i++) { if ($i <= $(i-1)) { print "not increasing"; exit } if ($i > 0 && $i < 100) n++ } print n }')
case $steps in
  "not increasing") fail "the bar went back: $values" ;;
esac
[ "$steps" -ge 1 ] || fail "no step of the bar between the press and the threshold: $values"
full=$(count_lines notify.log '--hint=int:value:100 ')
[ "$full" -le 1 ] || fail "the full bar shown $full times for one hold"
performing=$(count_lines notify.log ' -- VM Timer Performing…$')
[ "$performing" -le 1 ] || fail "\"Performing…\" shown $performing times for one hold"
if [ "$performing" = 1 ]; then
  [ "$(tail -n 2 notify.log | head -n 1)" = "$(grep -- ' -- VM Timer Performing…$' notify.log)" ] \
    || fail "\"Performing…\" is not right before the result"
fi
[ "$(tail -n 1 notify.log)" = "$(grep -- ' -- VM Timer Running$' notify.log)" ] \
  || fail "the result is not the last notification"
# Bounded: the press, one to three steps, held, performing, performed.
expect_between "$calls" 3 7 "notify-send calls for one hold"
stop_daemon
dev_stop a
