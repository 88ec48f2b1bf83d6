#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The VM test tier: proves actiond's behaviour on Debian's real kernel inside qemu (TCG).
#
#   Tests/vm/run.sh [--jobs N] [--no-build] [--keep] [SCENARIO...]
#
# Builds the package's executables (unless --no-build), fetches Debian's kernel and udev into
# $ACTIOND_CACHE/vm/<this release> (once; cache-dir.sh), builds one initramfs per batch of scenarios, boots each batch once
# (N batches in parallel, default 1: TCG uses one host core per VM), and prints PASS/FAIL per
# scenario; a failure prints that scenario's serial output and logs. SCENARIO is a name or
# prefix under Tests/vm/scenarios (e.g. 01 or 01-uinput-gpio-hold); default: all.
# A batch with a scenario whose header says `# needs: net` gets the network (vmrun.py --net:
# a restricted user-mode NIC to a broker on the host); the other batches boot without a NIC.
# Artefacts (serial logs, initramfs) go to .build/vm/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=$("$here/cache-dir.sh")
out="$repo/.build/vm"
jobs=${VM_JOBS:-1}
build=1
selected=()
while (($#)); do
  case $1 in
    --jobs) jobs=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h | --help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) selected+=("$1"); shift ;;
  esac
done

start_ns=$(date +%s%N)
missing=""
for tool in qemu-system-x86_64 busybox cpio depmod modprobe xz dpkg-deb apt-get python3; do
  command -v "$tool" >/dev/null || missing="$missing $tool"
done
[[ -z $missing ]] || { echo "run.sh: missing tools:$missing (make deps installs them)" >&2; exit 1; }

cd "$repo"
# Every executable target of the package goes into the image (the daemon, its client, the
# device tool, other helpers' probes); scenarios skip what they need and do not find.
executables=$(grep -A3 'executableTarget(' Package.swift | sed -n 's/.*name: "\([^"]*\)".*/\1/p')
[[ -n $executables ]] || { echo "run.sh: no executable targets found in Package.swift" >&2; exit 1; }
if ((build)); then
  swift build >&2 || { echo "run.sh: swift build failed" >&2; exit 1; }
fi
bin_dir=$(swift build --show-bin-path)
bins=()
for b in $executables; do
  if [[ -x $bin_dir/$b ]]; then bins+=(--bin "$bin_dir/$b"); else echo "run.sh: $b is not built; scenarios needing it will skip" >&2; fi
done
[[ -x $bin_dir/actiond-testdev ]] || { echo "run.sh: actiond-testdev is not built (swift build --product actiond-testdev)" >&2; exit 1; }

"$here/fetch.sh" "$cache"

# Scenarios: all, or those whose name starts with an argument.
scenarios=()
for s in "$here"/scenarios/[0-9]*.sh; do
  name=$(basename "$s" .sh)
  if ((${#selected[@]} == 0)); then scenarios+=("$s"); continue; fi
  for want in "${selected[@]}"; do
    [[ $name == "$want"* ]] && { scenarios+=("$s"); break; }
  done
done
((${#scenarios[@]})) || { echo "run.sh: no scenario matches: ${selected[*]}" >&2; exit 2; }

rules=()
for r in "$repo"/udev-rules/*.rules "$here"/rules/*.rules; do
  [[ -f $r ]] && rules+=(--rules "$r")
done

# Into batches, each one boot, dealt in a snake (batch 1, 2, ..., N, then N, ..., 2, 1, ...):
# the scenarios grow longer with their numbers (the daemon's come last), so plain round-robin
# gave the last batch the longer one of every round (CI: 193 s against 151 s of scenarios,
# the tier waiting on the longer); the snake evens them (174 against 170).
((jobs >= 1)) || jobs=1
((jobs <= ${#scenarios[@]})) || jobs=${#scenarios[@]}
rm -rf "$out" && mkdir -p "$out"
pids=()
for ((b = 0; b < jobs; b++)); do
  args=() names=() net=()
  for ((i = 0; i < ${#scenarios[@]}; i++)); do
    pos=$((i % jobs))
    (((i / jobs) % 2 == 0)) || pos=$((jobs - 1 - pos))
    ((pos == b)) || continue
    args+=(--scenario "${scenarios[i]}")
    names+=("$(basename "${scenarios[i]}" .sh)")
    grep -qE '^# needs:(.* )? ?net( |$)' "${scenarios[i]}" && net=(--net)
  done
  dir="$out/batch$((b + 1))"
  mkdir -p "$dir"
  # The network's host side is Debian's mosquitto; without it the batch boots without a NIC
  # and its net scenarios skip (need_net says why).
  if ((${#net[@]})) && ! [[ -x /usr/sbin/mosquitto && -x /usr/bin/mosquitto_sub && -x /usr/bin/mosquitto_pub ]]; then
    echo "run.sh: no mosquitto / mosquitto-clients on the host (make deps): batch$((b + 1)) boots without the network" >&2
    net=()
  fi
  modules=()
  ((${#net[@]} == 0)) || modules=(--module virtio_pci --module virtio_net)
  "$here/mkinitramfs.sh" --cache "$cache" --out "$dir/initramfs.cpio" "${bins[@]}" "${rules[@]}" "${modules[@]}" "${args[@]}"
  # Each scenario's own timeout is enforced in the guest; this bounds the whole boot, and the
  # tier ends whatever happens.
  # A hang guard only (scenarios have their own timeouts): generous, since a loaded host
  # slows TCG severalfold.
  limit=$((120 + 180 * ${#names[@]}))
  ((limit <= 2400)) || limit=2400
  "$here/vmrun.py" --kernel "$cache/kernel/vmlinux" --initrd "$dir/initramfs.cpio" --workdir "$dir" \
    --timeout "$limit" "${net[@]}" --expect "${names[@]}" >"$dir/report.txt" 2>&1 &
  pids+=($!)
done

status=0
for ((b = 0; b < jobs; b++)); do
  wait "${pids[b]}" || status=1
  cat "$out/batch$((b + 1))/report.txt"
done
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
total="$((elapsed_ms / 1000)).$((elapsed_ms % 1000 / 100))"
count() { cat "$out"/batch*/report.txt | grep -c "^$1 " || true; }
summary="$(count PASS) passed, $(count SKIP) skipped, $(count FAIL) failed of ${#scenarios[@]} in ${jobs} VM(s)"
if ((status == 0)); then
  echo "test-vm: ok: $summary; total ${total} s (serial logs in .build/vm)"
else
  echo "test-vm: FAILED: $summary; total ${total} s"
  # Last, so the end of the output says what failed and where to look.
  for report in "$out"/batch*/report.txt; do
    dir=$(dirname "$report")
    { grep '^FAIL ' "$report" || true; } | while read -r _ name rest; do
      echo "test-vm: FAIL $name ${rest}"
      echo "test-vm:   its output and logs are printed above; serial log: $dir/serial.log"
    done
    if grep -q 'did not finish cleanly' "$report"; then
      echo "test-vm: the VM of $(basename "$dir") did not finish cleanly: $dir/serial.log"
    fi
  done
fi
exit $status
