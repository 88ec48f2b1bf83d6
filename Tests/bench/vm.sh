#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Boots the VM tier's kernel once with the bench scenarios (Tests/vm/bench/NN-*.sh) and the
# release binaries (actiond-mqtt too, with Debian's mosquitto and benchmqtt from BENCHTOOL's
# directory, for 07-mqtt), triggerhappy unpacked from Debian's package, and the host's /usr shared
# read-only over 9p (python3 + python3-evdev for the python peer). The samples come back in
# the serial log (OUT/serial.log) as the scenarios' *.log files. Settings from the environment:
# BENCH_N, BENCH_HOLD_MS, BENCH_IDLE_S, BENCH_BLAST, BENCH_ABUSE_N, BENCH_ABUSE_CLIENTS,
# BENCH_GESTURE_N (Tests/vm/bench/bench-lib.sh says what each is); EXP_SERIES, EXP_ROUNDS, EXP_DOUBLE
# for the experiment Tests/bench/experiments/12-exp-turn-trace.sh (its header says how).
#
#   Tests/bench/vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
vmdir="$repo/Tests/vm"
cache=$("$vmdir/cache-dir.sh")
bin=${1:?usage: vm.sh RELEASE_BIN_DIR BENCHTOOL OUT_DIR}
tool=${2:?}
out=${3:?}
rm -rf "$out" && mkdir -p "$out"

"$vmdir/fetch.sh" "$cache"
kver=$(cat "$cache/kernel/version")
kroot=$(realpath "$cache/kernel/root")

# triggerhappy: Debian's package, unpacked (never installed on the host). Its commands run
# through /bin/sh, which on Debian is dash: the host's (Debian's) dash goes in too.
thd="$cache/triggerhappy/root/usr/sbin/thd"
if [[ ! -x $thd ]]; then
  # Made beside and renamed: a run killed halfway leaves no thd that looks complete.
  rm -rf "$cache/triggerhappy" "$cache/triggerhappy.tmp" && mkdir -p "$cache/triggerhappy.tmp"
  (cd "$cache/triggerhappy.tmp" && apt-get download triggerhappy >/dev/null && dpkg-deb -x triggerhappy_*.deb root)
  mv "$cache/triggerhappy.tmp" "$cache/triggerhappy"
fi
[[ -x $thd ]] || { echo "vm.sh: no thd in Debian's triggerhappy package" >&2; exit 1; }

scenarios=() names=()
for s in "$vmdir"/bench/${BENCH_ONLY:-[0-9]*}.sh; do
  scenarios+=(--scenario "$s")
  names+=("$(basename "$s" .sh)")
done
# BENCH_QEMU_ARGS: more --qemu-arg=... options for vmrun.py (an experiment's monitor socket:
# "--qemu-arg=-monitor --qemu-arg=unix:/tmp/mon.sock,server=on,wait=off" for `info jit`).
# EXP_*: the settings of the experiments in Tests/bench/experiments, passed to the guest.
# BENCH_EXTRA_BINS: more binaries for the guest's /usr/local/bin (a variant build, for an
# experiment scenario chosen with BENCH_ONLY, a glob of scenario names).
extra_bins=()
for b in ${BENCH_EXTRA_BINS:-}; do extra_bins+=(--bin "$b"); done
# 07-mqtt: the bridge, Debian's broker and the MQTT subscriber built next to benchtool (with
# their shared libraries: libmosquitto, OpenSSL); the scenario skips without them.
for b in "$bin/actiond-mqtt" /usr/sbin/mosquitto "$(dirname "$tool")/benchmqtt"; do
  if [[ -x $b ]]; then extra_bins+=(--bin "$b"); else echo "vm.sh: no $b: 07-mqtt will skip" >&2; fi
done
rules=()
for r in "$repo"/udev-rules/*.rules; do rules+=(--rules "$r"); done
"$vmdir/mkinitramfs.sh" --cache "$cache" --out "$out/base.cpio" --bin "$bin/actiond" --bin "$bin/actionctl" \
  --bin "$bin/actiond-testdev" --bin "$tool" --bin "$thd" --bin /usr/bin/dash "${extra_bins[@]}" "${rules[@]}" "${scenarios[@]}"

# A second archive the kernel unpacks over the first: the 9p modules, the settings, the
# bench helpers and the python script.
extra=$(mktemp -d "${TMPDIR:-/tmp}/actiond-bench-extra.XXXXXX")
trap 'rm -rf "$extra"' EXIT
mkdir -p "$extra/vm/bench"
for m in virtio_pci 9pnet_virtio 9p; do
  while read -r verb path _; do
    [[ $verb == insmod ]] || continue
    rel=${path#"$kroot"/}
    mkdir -p "$extra/$(dirname "$rel")"
    cp "$path" "$extra/$rel"
  done < <(modprobe -d "$kroot" -S "$kver" --show-depends "$m")
done
cat >"$extra/vm/bench.env" <<ENV
BENCH_N=${BENCH_N:-500}
BENCH_HOLD_MS=${BENCH_HOLD_MS:-100}
BENCH_IDLE_S=${BENCH_IDLE_S:-60}
BENCH_BLAST=${BENCH_BLAST:-50000}
BENCH_ABUSE_N=${BENCH_ABUSE_N:-200}
BENCH_ABUSE_CLIENTS=${BENCH_ABUSE_CLIENTS:-50}
BENCH_GESTURE_N=${BENCH_GESTURE_N:-200}
EXP_SERIES="${EXP_SERIES:-}"
EXP_ROUNDS=${EXP_ROUNDS:-2}
EXP_DOUBLE=${EXP_DOUBLE:-0}
EXP_QUIETS="${EXP_QUIETS:-}"
EXP_ABUSE=${EXP_ABUSE:-0}
EXP_REACTOR_SPAWN=${EXP_REACTOR_SPAWN:-0}
EXP_LED=${EXP_LED:-0}
EXP_BUSY_READER=${EXP_BUSY_READER:-0}
EXP_A="${EXP_A:-}"
EXP_B="${EXP_B:-}"
ENV
cp "$vmdir/bench/bench-lib.sh" "$extra/vm/bench-lib.sh"
cp "$repo/Tests/bench/experiments/exp-lib.sh" "$extra/vm/exp-lib.sh"
cp "$vmdir/bench/hold.py" "$extra/vm/bench/hold.py"
(cd "$extra" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out/extra.cpio"
cat "$out/base.cpio" "$out/extra.cpio" >"$out/initramfs.cpio"

qemu=$(qemu-system-x86_64 --version | sed -n '1s/.*version \([^ ]*\).*/\1/p')
printf '{"qemu": "%s", "kernel": "%s"}\n' "$qemu" "$kver" >"$out/info.json"
"$vmdir/vmrun.py" --kernel "$cache/kernel/vmlinux" --initrd "$out/initramfs.cpio" --workdir "$out" \
  --timeout 2400 --expect "${names[@]}" \
  --qemu-arg=-virtfs --qemu-arg=local,path=/usr,mount_tag=hostusr,security_model=none,readonly=on ${BENCH_QEMU_ARGS:-} \
  | tee "$out/report.txt"
