# SPDX-License-Identifier: Apache-2.0
# actiond-mqtt (issue 19): a real key hold on a uinput device reaches an MQTT subscriber on
# the host. actiond and the bridge run in the guest; Debian's mosquitto and a mosquitto_sub
# run on the host (vmrun.py, for this batch's boot); the guest's only way out is qemu's
# restricted user-mode network to the broker's forwarded address. The host's subscriber
# sees the discovery with the button's device triggers, then `long_press` once (actiond's
# `held`: time_us the hold threshold after the kernel's key-down stamp) and `long_release`
# once (`released-after-hold`: time_us the kernel's key-up stamp), neither retained, each
# with a wall-clock timestamp.
# needs: net
# timeout: 90
. "$VM_LIB"
need_daemon
need_bin actiond-mqtt
need_net

host_mqtt_sub sub 'actiond/vm/button/+/event' 'homeassistant/device/vm/config'
dev_start a --preset gpio-keys --name actiond-vm-button
write_config config.json
start_daemon config.json
wait_bound
spawn bridge.log actiond-mqtt --host "$NET_BROKER" --port "$NET_BROKER_PORT" --socket "$SOCK" --node-id vm \
  --device-id vm --log-level debug
host_mqtt_wait sub sub.log '^0 homeassistant/device/vm/config .*"action_long_press":\{"p":"device_automation"' \
  "$WAIT_MS" "no discovery from the bridge (at $NET_BROKER:$NET_BROKER_PORT, see bridge.log)"
expect_line sub.log '"action_long_release":\{"p":"device_automation"'
expect_line sub.log '"action_event":\{"p":"event"'
step "discovery reached the host; holding KEY_PROG1 for ${LONG_MS} ms"

reader_start r "$DEV_NODE" --timeout 20s --count 2
dev_cmd a "press KEY_PROG1 ${LONG_MS}ms"
reader_wait r
host_mqtt_wait sub sub.log '"event_type":"long_release"' "$WAIT_MS" "no long_release at the host"
expect_count sub.log '"event_type":"long_press"' 1
expect_count sub.log '"event_type":"long_release"' 1
expect_count sub.log '"event_type":"short_press"' 0
expect_line sub.log '^0 actiond/vm/button/action/event \{"event_type":"long_press","button":"action","kind":"org.actiond.vm.timer","timestamp":"20[0-9-]+T[0-9:.]+Z"'

down=$(key_time_us r.log KEY_PROG1 1)
up=$(key_time_us r.log KEY_PROG1 0)
held=$(sed -n 's/.*"event_type":"long_press".*"time_us":\([0-9]*\).*/\1/p' sub.log | head -1)
released=$(sed -n 's/.*"event_type":"long_release".*"time_us":\([0-9]*\).*/\1/p' sub.log | head -1)
[ "$released" = "$up" ] || fail "long_release time_us $released is not the kernel's key-up stamp $up"
step "long_press $(((held - down) / 1000)) ms after the key-down; long_release at the key-up stamp"
expect_between $(((held - down) / 1000)) "$HOLD_MS" $((HOLD_MS + SLACK_MS)) "long_press after the key-down (ms)"
# Retained: the discovery, not the events: a subscriber that comes now gets only the former.
host_mqtt_sub late 'actiond/vm/button/+/event' 'homeassistant/device/vm/config'
host_mqtt_wait late late.log '^1 homeassistant/device/vm/config ' "$WAIT_MS" "no retained discovery for a late subscriber"
expect_count late.log '/event ' 0
grep -q 'command-dropped\|mqtt-disconnected\|mqtt-connect-failed' bridge.log &&
  fail "the bridge dropped a command or lost the broker (see bridge.log)"
stop_daemon
dev_stop a
