# actiond-mqtt (issue 19): a real key hold on a uinput device reaches an MQTT subscriber as
# Home Assistant gesture events, through actiond's socket, the bridge and Debian's mosquitto
# on the guest's loopback: `long_press` (actiond's `held`, at the hold threshold after the
# kernel's key-down stamp) and `long_release` (`released-after-hold`, time_us = the kernel's
# key-up stamp), each once, not retained, with a wall-clock timestamp; and the discovery
# payload lists the button's device triggers. The subscriber runs in the guest (no network
# between guest and host).
# timeout: 90
. "$VM_LIB"
need_daemon
need_bin actiond-mqtt mosquitto mosquitto_sub

ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up || fail "cannot bring the loopback up"
printf 'listener 1883 127.0.0.1\nallow_anonymous true\nuser root\npersistence false\n' >mosquitto.conf
spawn mosquitto.log mosquitto -c "$WORK/mosquitto.conf"
_deadline=$(($(now_ms) + WAIT_MS))
until mosquitto_pub -h 127.0.0.1 -t vmtest/ping -m x 2>/dev/null; do
  [ "$(now_ms)" -lt "$_deadline" ] || fail "mosquitto does not listen (see mosquitto.log)"
  settle_ms 100
done

dev_start a --preset gpio-keys --name actiond-vm-button
write_config config.json
start_daemon config.json
wait_bound
spawn sub.log mosquitto_sub -h 127.0.0.1 -q 1 -v -t 'actiond/vm/button/+/event' -t 'homeassistant/device/vm/config'
spawn bridge.log actiond-mqtt --host 127.0.0.1 --socket "$SOCK" --node-id vm --device-id vm --log-level debug
wait_for_line sub.log '^homeassistant/device/vm/config .*"action_long_press":\{"p":"device_automation"' "$WAIT_MS"
expect_line sub.log '"action_long_release":\{"p":"device_automation"'
expect_line sub.log '"action_event":\{"p":"event"'
step "discovery published; holding KEY_PROG1 for ${LONG_MS} ms"

reader_start r "$DEV_NODE" --timeout 20s --count 2
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
reader_wait r
wait_for_line sub.log '"event_type":"long_release"' "$WAIT_MS"
expect_count sub.log '"event_type":"long_press"' 1
expect_count sub.log '"event_type":"long_release"' 1
expect_count sub.log '"event_type":"short_press"' 0
expect_line sub.log '"event_type":"long_press","button":"action","kind":"org.actiond.vm.timer","timestamp":"20[0-9-]+T[0-9:.]+Z"'

down=$(key_time_us r.log KEY_PROG1 1)
up=$(key_time_us r.log KEY_PROG1 0)
held=$(sed -n 's/.*"event_type":"long_press".*"time_us":\([0-9]*\).*/\1/p' sub.log | head -1)
released=$(sed -n 's/.*"event_type":"long_release".*"time_us":\([0-9]*\).*/\1/p' sub.log | head -1)
[ "$released" = "$up" ] || fail "long_release time_us $released is not the kernel's key-up stamp $up"
step "long_press $(((held - down) / 1000)) ms after the key-down; long_release at the key-up stamp"
expect_between $(((held - down) / 1000)) "$HOLD_MS" $((HOLD_MS + SLACK_MS)) "long_press after the key-down (ms)"
grep -q 'command-dropped\|mqtt-disconnected' bridge.log && fail "the bridge dropped or disconnected (see bridge.log)"
stop_daemon
dev_stop a
