#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the initramfs the VM tier boots: busybox-static, the kernel modules the scenarios need
# (with their dependencies), Debian's udev unpacked, the given binaries with every library
# `ldd` resolves for them (the Swift runtime included) and every library their ELF dlopen notes
# name (dlopen-notes.py: Debian 13's udev dlopens libkmod), udev rules, the guest /init, lib.sh and
# the scenarios of one batch. --module adds a kernel module (with its dependencies) to the
# fixed set, for a batch that needs it (virtio_net: the NIC of a `# needs: net` batch); the
# scenario that needs it loads it.
#
# Usage: mkinitramfs.sh --cache DIR --out FILE [--bin FILE]... [--rules FILE]... [--module NAME]...
#                       [--scenario FILE]...
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache="" out="" bins=() rules=() scenarios=() extra_modules=()
while (($#)); do
  case $1 in
    --cache) cache=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --bin) bins+=("$2"); shift 2 ;;
    --rules) rules+=("$2"); shift 2 ;;
    --module) extra_modules+=("$2"); shift 2 ;;
    --scenario) scenarios+=("$2"); shift 2 ;;
    *) echo "mkinitramfs.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $cache && -n $out ]] || { echo "usage: mkinitramfs.sh --cache DIR --out FILE ..." >&2; exit 2; }

die() { echo "mkinitramfs.sh: $*" >&2; exit 1; }

kver=$(cat "$cache/kernel/version")
kroot=$(realpath "$cache/kernel/root")
uroot=$(realpath "$cache/udev/root")
root=$(mktemp -d "${TMPDIR:-/tmp}/actiond-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,run,tmp,root,var/lib,vm/scenarios}

# --- busybox -----------------------------------------------------------------------------
busybox=$(command -v busybox) || die "busybox not found (apt-get install busybox-static)"
# ldd fails on a static binary; the guest has no libraries for a dynamic busybox to use.
if ldd "$busybox" >/dev/null 2>&1; then die "$busybox is not static (apt-get install busybox-static)"; fi
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list-full); do
  [[ -e $root/$applet ]] || ln -s /bin/busybox "$root/$applet"
done

# --- Debian's udev ---------------------------------------------------------------------------
# Everything but documentation and the hardware database sources (9 MB; without a compiled
# hwdb.bin nothing reads them). udevadm is multi-call and systemd-udevd links to it.
(cd "$uroot" && tar --exclude=./lib/udev/hwdb.d --exclude=./usr/lib/udev/hwdb.d --exclude=./usr/share/doc --exclude=./usr/share/man --exclude=./usr/share/bash-completion \
  --exclude=./usr/share/zsh --exclude=./usr/share/lintian -cf - .) | (cd "$root" && tar -xf -)
udevadm=""
for candidate in "$uroot/bin/udevadm" "$uroot/usr/bin/udevadm"; do
  [[ -x $candidate ]] && udevadm=$candidate && break
done
[[ -n $udevadm ]] || die "no udevadm in $uroot"

# --- libraries -------------------------------------------------------------------------------
# Copies FILE's shared libraries (as ldd resolves them on this host) to the same paths in the
# image, plus the dynamic loader. The guest has no ld.so.cache: each library must sit in a
# default directory or in the binary's RUNPATH, which keeping host paths guarantees.
# Then the libraries FILE and those load with dlopen(), which no NEEDED entry names: systemd
# 256 and later (Debian 13's udev) dlopen libkmod for the kmod builtin that loads a device's
# module, and more. They list them in ELF dlopen notes (dlopen-notes.py says how); each
# listed library this host has is copied the same way, with its own libraries and notes (a
# "required" one it lacks is an error; the others are features the guest then lacks, as a
# system without them does).
declare -A noted=()
copy_libraries() {
  local file=$1 line lib
  local output libs=("$file")
  output=$(ldd "$file" 2>&1) || { [[ $output == *"not a dynamic executable"* ]] && return 0; die "ldd $file: $output"; }
  if grep -q 'not found' <<<"$output"; then
    die "libraries of $file not found on this host:"$'\n'"$(grep 'not found' <<<"$output")"
  fi
  while read -r line; do
    lib=""
    case $line in
      *"=> /"*) lib=${line#*=> }; lib=${lib%% (*} ;;
      /*) lib=${line%% (*} ;;
    esac
    [[ -n $lib ]] || continue
    [[ -n ${noted[$lib]:-} ]] || libs+=("$lib")
    [[ ! -e $root$lib ]] || continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done <<<"$output"
  local dlopened
  dlopened=$(python3 "$here/dlopen-notes.py" --resolve "${libs[@]}") || die "dlopen notes of $file (above)"
  for lib in "${libs[@]}"; do noted[$lib]=1; done
  for lib in $dlopened; do
    [[ ! -e $root$lib ]] || continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
    copy_libraries "$lib"
  done
}
copy_libraries "$udevadm"

# --- binaries under test -------------------------------------------------------------------------
mkdir -p "$root/usr/local/bin"
for bin in "${bins[@]}"; do
  [[ -x $bin ]] || die "binary $bin does not exist (build it first)"
  cp -L "$bin" "$root/usr/local/bin/"
  # Debug builds carry DWARF that the guest never reads; it only slows unpacking at boot.
  if command -v strip >/dev/null; then strip --strip-debug "$root/usr/local/bin/$(basename "$bin")"; fi
  copy_libraries "$bin"
done

# --- kernel modules --------------------------------------------------------------------------
modules=(evdev uinput xhci_pci usbhid hid_generic "${extra_modules[@]}")
mdir="lib/modules/$kver"
mkdir -p "$root/$mdir"
for m in "${modules[@]}"; do
  deps=$(modprobe -d "$kroot" -S "$kver" --show-depends "$m" 2>&1) || die "module $m: $deps"
  while read -r verb path _; do
    [[ $verb == insmod ]] || continue
    rel=${path#"$kroot"/}
    [[ $rel != /* ]] || die "module path $path is outside $kroot"
    mkdir -p "$root/$(dirname "$rel")"
    cp "$path" "$root/$rel"
  done <<<"$deps"
done
# modprobe needs the dependency index; udevd's kmod builtin looks modaliases up in the binary
# indexes (finding modules that are not in the image, which it reports and ignores).
for index in modules.dep modules.dep.bin modules.alias.bin modules.builtin modules.builtin.bin; do
  cp "$kroot/$mdir/$index" "$root/$mdir/"
done

# --- udev rules, users ------------------------------------------------------------------------
mkdir -p "$root/etc/udev/rules.d"
for r in "${rules[@]}"; do cp "$r" "$root/etc/udev/rules.d/"; done
cat >"$root/etc/passwd" <<'P'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
tester:x:1000:1000:tester:/tmp:/bin/sh
P
cat >"$root/etc/group" <<'G'
root:x:0:
input:x:101:
kvm:x:102:
render:x:103:
audio:x:104:
video:x:105:
disk:x:106:
tty:x:5:
actiond:x:110:tester
nogroup:x:65534:
tester:x:1000:
G

# --- the guest side ----------------------------------------------------------------------------
cp "$here/init" "$root/init"
chmod 755 "$root/init"
cp "$here/lib.sh" "$root/vm/lib.sh"
for s in "${scenarios[@]}"; do cp "$s" "$root/vm/scenarios/"; done

mkdir -p "$(dirname "$out")"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet) >"$out.tmp"
mv "$out.tmp" "$out"
