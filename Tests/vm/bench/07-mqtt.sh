# SPDX-License-Identifier: Apache-2.0
# Bench: a key hold to an MQTT subscriber (issue 19), next to actiond's socket subscriber
# after the same deadlines. One actiond (release build, log level warning) with one button on
# a `benchtool device` assigned a store toggle (no command: the figure is the announcement's
# path, nothing spawned), actiond-mqtt (release, log level warning), Debian's mosquitto on
# the guest's loopback (no network between the key and the subscriber: no network noise in
# the figure), `benchmqtt` (libmosquitto) subscribed to the button's event topic and a
# `benchtool subscribe` on actiond's socket. BENCH_N holds as in 02-actiond (threshold +
# 30 ms, 70 ms apart): per hold the socket subscriber's `held` and the MQTT subscriber's
# `long_press` (actiond's `held`, through the bridge and the broker), both stamped on the
# guest's CLOCK_MONOTONIC. Before the holds, the idle bridge: its context switches over
# BENCH_IDLE_S (the keepalive's) and its memory; again after the holds.
# timeout: 600
. "$VM_LIB"
. /vm/bench-lib.sh
need_bin actiond-mqtt mosquitto benchmqtt

ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up || fail "cannot bring the loopback up"
printf 'listener 1883 127.0.0.1\nallow_anonymous true\nuser root\npersistence false\n' >mosquitto.conf
spawn mosquitto.log mosquitto -c "$WORK/mosquitto.conf"
# Listening: 127.0.0.1:1883 (0100007F:075B) in state LISTEN (0A).
_deadline=$(($(now_ms) + 20000))
until grep -q '0100007F:075B 00000000:0000 0A' /proc/net/tcp; do
  [ "$(now_ms)" -lt "$_deadline" ] || fail "mosquitto does not listen (see mosquitto.log)"
  usleep 50000
done

bdev_start actiond-bench-mqtt "$WORK/mq-down.log"
mkdir -p controls.d
cat >config.json <<CONFIG
{
  socket: { path: "$SOCK", mode: "0660" },
  stateDirectory: "$STATE",
  controlsDirectory: "$WORK/controls.d",
  buttons: [ { name: "action", key: "KEY_PROG1", match: { name: "actiond-bench-mqtt" },
               holdThresholdMs: $BENCH_HOLD_MS } ],
  controls: [
    { kind: "org.actiond.bench.mqtt", type: "toggle", displayName: "Bench",
      valueText: { on: "Running", off: "Stopped" }, actionHint: { on: "Stop", off: "Start" },
      intent: { type: "state" }, value: { type: "store", initial: false } },
  ],
  assignments: { action: { kind: "org.actiond.bench.mqtt" } },
}
CONFIG
bench_daemon config.json

spawn mqtt-sub.out benchmqtt 127.0.0.1 1883 "$WORK/mqtt-events.log" "$BENCH_N" \
  actiond/bench/button/action/event actiond/bench/daemon
MQTT_PID=$SPAWN_PID
wait_for_line mqtt-sub.out '^subscribed' 10000
spawn bridge.log actiond-mqtt --host 127.0.0.1 --socket "$SOCK" --node-id bench --device-id bench --log-level warning
BRIDGE_PID=$SPAWN_PID
# `<base>/daemon` online: the bridge is connected to the broker and has actiond's snapshot.
wait_for_line mqtt-sub.out '^message actiond/bench/daemon online' "$WAIT_MS"
usleep 500000
memory start "$BRIDGE_PID" >bridge-mem.log
_s0=$(switches "$BRIDGE_PID")
step "idle bridge for ${BENCH_IDLE_S} s"
sleep "$BENCH_IDLE_S"
echo "idle $BENCH_IDLE_S $(($(switches "$BRIDGE_PID") - _s0))" >>bridge-mem.log

subscriber_start mq-events "$BENCH_N"
step "$BENCH_N holds, to a socket subscriber and through actiond-mqtt to an MQTT subscriber"
hold_presses
_deadline=$(($(now_ms) + 10000))
while { kill -0 "$SUB_PID" || kill -0 "$MQTT_PID"; } 2>/dev/null && [ "$(now_ms)" -lt "$_deadline" ]; do usleep 50000; done
kill -TERM "$SUB_PID" "$MQTT_PID" 2>/dev/null
wait_pid "$SUB_PID" 10000 "the socket subscriber"
wait_pid "$MQTT_PID" 10000 "the MQTT subscriber"
grep -E '^(pressed|held) ' mq-events.txt >mq-events.log
memory holds "$BRIDGE_PID" >>bridge-mem.log
grep -q 'mqtt-disconnected\|mqtt-connect-failed' bridge.log && fail "the bridge lost the broker (see bridge.log)"
kill -TERM "$BRIDGE_PID"
wait_pid "$BRIDGE_PID" 10000 "actiond-mqtt after SIGTERM"
kill -TERM "$DAEMON_PID"
wait_pid "$DAEMON_PID" 10000 "actiond after SIGTERM"
bdev_stop
