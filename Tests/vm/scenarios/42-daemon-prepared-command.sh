# Daemon: the command of an exec intent is prepared at the key-down (a child stopped just
# before its exec) and runs only on a hold. A short press leaves nothing behind (the prepared
# child exits and is reaped), a hold runs the command exactly once, and a daemon killed
# mid-press takes its prepared child with it (PR_SET_PDEATHSIG), so nothing runs.
# timeout: 90
. "$VM_LIB"
need_daemon

cat >record.sh <<'SCRIPT'
#!/bin/sh
echo "ran value=$ACTIOND_VALUE button=$ACTIOND_BUTTON" >>"$1"
SCRIPT
chmod 0755 record.sh
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-vm-button" }, holdThresholdMs: 600 } ],
  controls: [
    { kind: "org.actiond.vm.record", type: "toggle", displayName: "Recorder",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "exec", argv: ["$WORK/record.sh", "$WORK/ran.log"] },
      value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.vm.record" } },
}
CONFIG
mkdir -p controls.d

# children PID: the pids whose parent is PID.
children() {
  for _s in /proc/[0-9]*/status; do
    awk -v p="$1" '$1 == "PPid:" && $2 == p { split(FILENAME, f, "/"); print f[3] }' "$_s" 2>/dev/null
  done
}

dev_start a --preset gpio-keys --name actiond-vm-button
start_daemon config.json
wait_bound
watch_start
[ -z "$(children "$DAEMON_PID")" ] || fail "the idle daemon has children: $(children "$DAEMON_PID")"

step "short press: prepared at the key-down, gone after the release"
dev_cmd a "down KEY_PROG1" "sleep 200ms"
prepared=$(children "$DAEMON_PID")
[ "$(echo "$prepared" | wc -w)" = 1 ] || fail "expected one prepared child during the press, got '$prepared'"
[ "$(cat "/proc/$prepared/comm")" = actiond ] || fail "the prepared child has exec'ed: $(cat "/proc/$prepared/comm")"
# It holds stdin, stdout, stderr and the pipe it waits on: none of the daemon's sockets or devices.
held=$(ls "/proc/$prepared/fd" | wc -l)
[ "$held" = 4 ] || fail "the prepared child holds $held descriptors: $(ls -l "/proc/$prepared/fd")"
[ ! -e ran.log ] || fail "the command ran during the press: $(cat ran.log)"
dev_cmd a "up KEY_PROG1"
wait_for_event watch.log released
_deadline=$(($(now_ms) + 5000))
while [ -n "$(children "$DAEMON_PID")" ]; do
  [ "$(now_ms)" -lt "$_deadline" ] || fail "the prepared child $prepared is still there after the release"
  usleep 20000
done
[ ! -e ran.log ] || fail "a short press ran the command: $(cat ran.log)"

step "hold: the prepared command runs once"
dev_cmd a "press KEY_PROG1 900ms"
wait_for_event watch.log performed
expect_event watch.log performing 1
expect_count ran.log 'ran value=1 button=action' 1
expect_count ran.log 'ran' 1
expect_line watch.log '"event":"performed".*"valueText":"Running"'

step "a second hold prepares the other value"
dev_cmd a "press KEY_PROG1 900ms"
wait_count watch.log '"event":"performed"' 2 10000
expect_count ran.log 'ran value=0 button=action' 1

step "daemon killed mid-press: its prepared child dies with it, nothing runs"
dev_cmd a "down KEY_PROG1" "sleep 200ms"
prepared=$(children "$DAEMON_PID")
[ "$(echo "$prepared" | wc -w)" = 1 ] || fail "expected one prepared child, got '$prepared'"
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
_deadline=$(($(now_ms) + 5000))
while [ -d "/proc/$prepared" ] && [ "$(awk '{ print $3 }' "/proc/$prepared/stat" 2>/dev/null)" != Z ]; do
  [ "$(now_ms)" -lt "$_deadline" ] || fail "the prepared child $prepared outlived the daemon"
  usleep 20000
done
dev_cmd a "sleep 700ms" "up KEY_PROG1"
expect_count ran.log 'ran' 2
dev_stop a
