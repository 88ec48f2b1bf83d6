#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Everything of `make bench-peers` (mk/benchmarks.mk): release binaries, the host figures,
# one VM boot with the bench scenarios on an otherwise idle host, a second boot of the same
# scenarios while `stress-ng --cpu 1` keeps one host core busy, then docs/benchmarks.md (the
# summary), docs/benchmarks-notebook.md (every figure, the method, the experiments) and the plots. Measures only; it fails when a measurement could not be taken, never because a
# figure is slow.
#
#   Tests/bench/run.sh    (from the environment: BENCH_N, BENCH_IDLE_S, BENCH_BLAST,
#                          BENCH_ABUSE_N, BENCH_GESTURE_N, BENCH_HOLD_MS; BENCH_LOADED=0 skips the loaded
#                          boot, BENCH_LOADED_N its samples per figure, default 200; BENCH_MQTT_N the
#                          MQTT round trip's commands per set-up, default 300)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out="$repo/.build/bench"
cd "$repo"
mkdir -p "$out"
start=$(date +%s)

# The VM gets the release build the install target ships (Swift runtime linked in).
# Linked like `make release` (RELEASE_FLAGS in mk/install.mk): Swift and C++ runtimes in.
release=(-c release --static-swift-stdlib -Xlinker "-L$repo/mk/static-libstdc++")
swift build "${release[@]}" --product actiond
swift build "${release[@]}" --product actionctl
swift build "${release[@]}" --product actiond-testdev
swift build "${release[@]}" --product actiond-mqtt
# The daemon on a FIFO of input_event records, for the host's command-start figures.
swift build "${release[@]}" --product actiond-test-helper
swift build -c release --product actiond-bench
bin=$(swift build "${release[@]}" --show-bin-path)
cc -O2 -Wall -Wextra -Werror -static -o "$out/benchtool" "$here/benchtool.c"
# The MQTT subscriber of 07-mqtt: libmosquitto is shared only (libmosquitto-dev, mk/mqtt.mk).
cc -O2 -Wall -Wextra -Werror -o "$out/benchmqtt" "$here/benchmqtt.c" $(pkg-config --cflags --libs libmosquitto)

# Debian's python3: the MQTT round trip's client is python3-paho-mqtt (Tests/mqtt/bench_bridge.py).
/usr/bin/python3 "$here/bench.py" host --actiond "$bin/actiond" --core "$bin/actiond-bench" --tool "$out/benchtool" \
  --helper "$bin/actiond-test-helper" --mqtt "$bin" --mqtt-n "${BENCH_MQTT_N:-300}" --out "$out/host.json"
BENCH_HOLD_MS=${BENCH_HOLD_MS:-100} "$here/vm.sh" "$bin" "$out/benchtool" "$out/vm"
python3 "$here/bench.py" vm --serial "$out/vm/serial.log" --hold-ms "${BENCH_HOLD_MS:-100}" \
  --vm-info "$out/vm/info.json" --out "$out/vm.json"

# The loaded boot: the same scenarios, fewer samples, while one host core is kept busy.
# The idle window, the blast, the abuse phase and the gestures (05-gestures) feed no figure
# of the loaded section, so they are cut short or skipped there. stress-ng is stopped
# however this script ends.
rm -f "$out/vm-loaded.json" "$out/vm-loaded-samples.json"
loaded=()
if [[ ${BENCH_LOADED:-1} != 0 ]]; then
  command -v stress-ng >/dev/null || { echo "run.sh: no stress-ng (make bench-deps installs it)" >&2; exit 1; }
  stress_pid=
  stop_stress() {
    if [[ -n $stress_pid ]]; then
      kill -TERM "$stress_pid" 2>/dev/null || true
      wait "$stress_pid" 2>/dev/null || true
      stress_pid=
    fi
  }
  trap stop_stress EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  stress_load="stress-ng --cpu 1 --cpu-method all"
  stress-ng --cpu 1 --cpu-method all --quiet &
  stress_pid=$!
  BENCH_N=${BENCH_LOADED_N:-200} BENCH_IDLE_S=5 BENCH_BLAST=2000 BENCH_ABUSE_N=0 BENCH_GESTURE_N=0 \
    BENCH_HOLD_MS=${BENCH_HOLD_MS:-100} "$here/vm.sh" "$bin" "$out/benchtool" "$out/vm-loaded"
  host_load=$(cut -d' ' -f1 /proc/loadavg)
  kill -0 "$stress_pid" 2>/dev/null || { echo "run.sh: stress-ng ended before the loaded boot did" >&2; exit 1; }
  stop_stress
  trap - EXIT INT TERM
  python3 "$here/bench.py" vm --serial "$out/vm-loaded/serial.log" --hold-ms "${BENCH_HOLD_MS:-100}" \
    --vm-info "$out/vm-loaded/info.json" --load "$stress_load" --host-load "$host_load" --out "$out/vm-loaded.json"
  loaded=(--vm-loaded "$out/vm-loaded.json")
fi

python3 "$here/bench.py" report --host "$out/host.json" --vm "$out/vm.json" "${loaded[@]}" \
  --doc docs/benchmarks.md --notebook docs/benchmarks-notebook.md --plots docs/benchmarks
echo "bench: done in $(($(date +%s) - start)) s: docs/benchmarks.md, docs/benchmarks-notebook.md, docs/benchmarks/*.png"
