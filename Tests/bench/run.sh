#!/usr/bin/env bash
# Everything of `make bench-peers` (mk/benchmarks.mk): release binaries, the host figures,
# one VM boot with the bench scenarios, then docs/benchmarks.md and its plots. Measures
# only; it fails when a measurement could not be taken, never because a figure is slow.
#
#   Tests/bench/run.sh            (BENCH_N, BENCH_IDLE_S, BENCH_BLAST from the environment)
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
swift build -c release --product actiond-bench
bin=$(swift build "${release[@]}" --show-bin-path)
cc -O2 -Wall -Wextra -Werror -static -o "$out/benchtool" "$here/benchtool.c"

python3 "$here/bench.py" host --actiond "$bin/actiond" --core "$bin/actiond-bench" --tool "$out/benchtool" \
  --out "$out/host.json"
BENCH_HOLD_MS=${BENCH_HOLD_MS:-100} "$here/vm.sh" "$bin" "$out/benchtool" "$out/vm"
python3 "$here/bench.py" vm --serial "$out/vm/serial.log" --hold-ms "${BENCH_HOLD_MS:-100}" \
  --vm-info "$out/vm/info.json" --out "$out/vm.json"
python3 "$here/bench.py" report --host "$out/host.json" --vm "$out/vm.json" --doc docs/benchmarks.md \
  --plots docs/benchmarks
echo "bench: done in $(($(date +%s) - start)) s: docs/benchmarks.md, docs/benchmarks/*.png"
