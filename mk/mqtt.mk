# SPDX-License-Identifier: Apache-2.0
# mqtt.mk: actiond-mqtt, the MQTT / Home Assistant bridge.
#
# libmosquitto-dev and libssl-dev build the bridge (the Makefile's APT_PACKAGES). The
# test-mqtt tier runs Debian's mosquitto broker on loopback (a random free port, a
# generated configuration, no system service), a real actiond and the bridge, and checks
# what a Home Assistant would see with python3-paho-mqtt (Tests/mqtt/). The discovery checker
# (Tests/mqtt/homeassistant.py, written from Home Assistant's source) is tested first on
# payloads HA takes and payloads it rejects (Tests/mqtt/test_homeassistant.py). Its
# name-resolution scenario runs the bridge under util-linux's unshare (a mount and a network
# namespace of its own, resolv.conf and hosts bind-mounted over; not as root, in a user
# namespace too). Its newer-daemon scenario runs the bridge against a scripted actiond in
# the test (protocol.md, Versioning: unknown members and events).

test-mqtt bench-mqtt: APT_PACKAGES += python3 mosquitto mosquitto-clients python3-paho-mqtt openssl util-linux
TEST_TIERS += test-mqtt

.PHONY: test-mqtt
test-mqtt: deps
	/usr/bin/python3 Tests/mqtt/test_homeassistant.py
	$(SWIFT) build $(BUILD_FLAGS) --product actiond
	$(SWIFT) build $(BUILD_FLAGS) --product actiond-mqtt
	/usr/bin/python3 Tests/mqtt/test_bridge.py --bin "$(BIN_DIR)"

## bench-mqtt: the bridge's figures (release build): the MQTT round trip, a switch command
## published → its state received (p50/p99, split client → actiond → client; with mosquitto's
## set_tcp_nodelay and without, Nagle on the client, actiond's state on tmpfs and on the disk),
## actiond's event → MQTT subscriber latency (p50/p99) and the idle bridge's wake-ups and RSS.
## Prints numbers; asserts nothing. `make bench` puts the round trip in docs/benchmarks.md.
BENCH_TIERS += bench-mqtt
BENCH_MQTT_N ?= 300
BENCH_MQTT_IDLE_S ?= 60
.PHONY: bench-mqtt
bench-mqtt: deps
	$(SWIFT) build -c release $(BUILD_FLAGS) --product actiond
	$(SWIFT) build -c release $(BUILD_FLAGS) --product actiond-mqtt
	/usr/bin/python3 Tests/mqtt/bench_bridge.py --bin "$$($(SWIFT) build -c release --show-bin-path $(BUILD_FLAGS))" \
	  -n $(BENCH_MQTT_N) --idle $(BENCH_MQTT_IDLE_S)
