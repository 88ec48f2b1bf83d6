# SPDX-License-Identifier: Apache-2.0
# benchmarks.mk: `make bench-peers` -- actiond measured side by side with the limits (a
# minimal C reactor, timerfd, posix_spawn) and the peers (triggerhappy, a python-evdev
# script) on the real evdev path in the VM, on an idle host and again with one host core
# busy (stress-ng), plus host figures; regenerates
# docs/benchmarks.md, docs/benchmarks-notebook.md and their plots (docs/benchmarks/*.png). See Tests/bench/README.md.
# Measures only: nothing here fails on a slow figure. About 37 minutes on the 2-core
# development host (2,246 s on 2026-12-01, builds included; the loaded boot about 8 of them).
#
# Bench-only packages are installed by `bench-deps`, not by `make deps`, so `make test`
# stays free of them: gnuplot draws the plots, python3-evdev is the python peer's library
# (shared into the guest over 9p), stress-ng keeps one host core busy for the loaded boot;
# triggerhappy is fetched with apt-get download and
# unpacked into the VM image, never installed. mosquitto and python3-paho-mqtt: the host's
# MQTT round trip (Tests/mqtt/bench_bridge.py, the broker and the client) and 07-mqtt's
# broker in the guest. VM_APT_PACKAGES (mk/vm.mk, included after this file: hence `=`) boot
# the VM tier's kernel as test-vm does: qemu, the guest's busybox and initramfs, kmod's depmod,
# the unpacked udevadm's libraries.
BENCH_TIERS += bench-peers
BENCH_APT_PACKAGES = gnuplot-nox python3-evdev gcc libc6-dev stress-ng mosquitto python3-paho-mqtt \
  $(VM_APT_PACKAGES)

# BENCH_N: samples per VM figure; BENCH_IDLE_S: the idle window; BENCH_BLAST: presses
# (twice as many key events) for the memory growth figure; BENCH_ABUSE_N: holds while 50
# abusive clients hammer actiond's socket (0 skips them); BENCH_GESTURE_N: holds per button
# and double presses of the gesture rows (0 skips them); BENCH_LOADED=0 skips the second
# boot with one host core busy, BENCH_LOADED_N: its samples per figure; BENCH_MQTT_N:
# commands per set-up of the host's MQTT round trip.
BENCH_N ?= 500
BENCH_IDLE_S ?= 60
BENCH_BLAST ?= 50000
BENCH_ABUSE_N ?= 200
BENCH_LOADED ?= 1
BENCH_LOADED_N ?= 200
BENCH_GESTURE_N ?= 200
BENCH_MQTT_N ?= 300

.PHONY: bench-deps bench-peers
bench-deps: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(BENCH_APT_PACKAGES)"

bench-peers: bench-deps
	BENCH_N=$(BENCH_N) BENCH_IDLE_S=$(BENCH_IDLE_S) BENCH_BLAST=$(BENCH_BLAST) BENCH_ABUSE_N=$(BENCH_ABUSE_N) BENCH_GESTURE_N=$(BENCH_GESTURE_N) BENCH_MQTT_N=$(BENCH_MQTT_N) \
	  BENCH_LOADED=$(BENCH_LOADED) BENCH_LOADED_N=$(BENCH_LOADED_N) Tests/bench/run.sh

# bench-abuse: only the socket-abuse figures on the host (also part of bench-peers' host
# figures): a well-behaved client's `status` round trips idle and under 50 abusive clients,
# and the daemon's CPU meanwhile. Release build; about a minute plus the build.
.PHONY: bench-abuse
bench-abuse: deps
	$(SWIFT) build -c release --product actiond $(BUILD_FLAGS)
	mkdir -p .build/bench
	cc -O2 -Wall -Wextra -Werror -o .build/bench/benchtool Tests/bench/benchtool.c
	python3 Tests/bench/bench.py abuse --actiond "$$($(SWIFT) build -c release --show-bin-path $(BUILD_FLAGS))/actiond" \
	  --tool .build/bench/benchtool --out .build/bench/abuse.json

# bench-admission: only the fair-admission row on the host: another user's connect -> hello
# (max, p99) while one user's 50 abusive clients storm the socket, beside the abusers' own
# user's. Needs root for the other user (setpriv); about 30 s plus the build.
.PHONY: bench-admission
bench-admission: deps
	$(SWIFT) build -c release --product actiond $(BUILD_FLAGS)
	mkdir -p .build/bench
	cc -O2 -Wall -Wextra -Werror -o .build/bench/benchtool Tests/bench/benchtool.c
	python3 Tests/bench/bench.py admission --actiond "$$($(SWIFT) build -c release --show-bin-path $(BUILD_FLAGS))/actiond" \
	  --tool .build/bench/benchtool --out .build/bench/admission.json
