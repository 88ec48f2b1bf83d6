#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches what the VM tier boots, into a cache that is reused across runs:
#   - Debian's kernel (linux-image-amd64 resolved to its versioned package), unpacked,
#     depmod'ed, with the vmlinux extracted from vmlinuz (PVH boot: ~2.5 s instead of ~6 s).
#   - Debian's udev, unpacked, never installed (its udevadm links only libc, libkmod, libacl,
#     libblkid, libcap and libselinux, which the initramfs builder takes from the host).
# Once the cache is complete it is used as is (fast, offline, and the same kernel every run);
# --refresh resolves the packages again and fetches newer versions if there are any.
# --suite SUITE takes them from that Debian suite instead of this machine's (e.g. trixie on a
# Debian 12 machine, for a Debian 13 guest): this machine's Debian sources with the suite
# names swapped, and a package index of their own in CACHE_DIR/apt (this machine's apt state
# is not touched, and no root is needed).
# A run killed halfway leaves nothing that looks complete: each .deb is downloaded into a
# directory of its own and renamed into place, each unpacked tree is marked .complete last;
# two runs on one cache (two checkouts sharing ACTIOND_CACHE) take turns (flock).
# Usage: fetch.sh CACHE_DIR [--refresh] [--suite SUITE]
set -euo pipefail

usage="usage: fetch.sh CACHE_DIR [--refresh] [--suite SUITE]"
cache=${1:?$usage}
shift
refresh=0 suite=
while (($#)); do
  case $1 in
    --refresh) refresh=1 ;;
    --suite) suite=${2:?$usage}; shift ;;
    *) echo "$usage" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$cache/debs"
cache=$(cd "$cache" && pwd)
if ((refresh == 0)) && [[ -e $cache/kernel/.complete && -e $cache/udev/.complete ]]; then
  exit 0
fi

die() { echo "fetch.sh: $*" >&2; exit 1; }
exec 9>"$cache/.lock"
flock 9
rm -rf "$cache"/debs/.download.*   # what a killed run left

# apt's options for every apt-cache / apt-get call below: none for this machine's suite.
apt_opts=()
if [[ -n $suite ]]; then
  "$(dirname "$0")/suite-sources.sh" "$suite" "$cache/apt/sources.list.d/debian.sources"
  mkdir -p "$cache/apt/lists/partial" "$cache/apt/archives/partial"
  touch "$cache/apt/status"
  apt_opts=(
    -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$cache/apt/sources.list.d"
    -o Dir::State::Lists="$cache/apt/lists" -o Dir::State::status="$cache/apt/status"
    -o Dir::Cache="$cache/apt" -o Debug::NoLocking=1 -o APT::Sandbox::User=root
  )
  if ((refresh == 1)) || ! ls "$cache/apt/lists/"*_Packages* >/dev/null 2>&1; then
    echo "fetch.sh: updating the $suite package index" >&2
    apt-get "${apt_opts[@]}" -q update >"$cache/apt/update.log" 2>&1 \
      || { cat "$cache/apt/update.log" >&2; die "apt-get update ($suite) failed"; }
  fi
fi
apt-cache() { command apt-cache "${apt_opts[@]}" "$@"; }
apt-get() { command apt-get "${apt_opts[@]}" "$@"; }

# A fresh machine (or container) may have no apt lists yet: update them once, when allowed.
apt_updated=0
ensure_apt_lists() {
  local policy
  policy=$(apt-cache policy linux-image-amd64 udev 2>/dev/null || true)
  [[ $policy != *"Candidate: (none)"* && $policy == *"Candidate: "[0-9]* ]] && return 0
  ((apt_updated == 0)) && [[ -z $suite ]] || return 0
  apt_updated=1
  if [[ $(id -u) == 0 ]]; then
    echo "fetch.sh: apt lists are empty; running apt-get update" >&2
    apt-get update -qq >&2
  elif command -v sudo >/dev/null; then
    echo "fetch.sh: apt lists are empty; running sudo apt-get update" >&2
    sudo apt-get update -qq >&2
  fi
}
ensure_apt_lists

# Resolves a (meta) package to the first concrete package it depends on, e.g.
# linux-image-amd64 -> linux-image-6.1.0-57-amd64.
resolve_kernel_package() {
  local dep
  dep=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  [[ -n $dep ]] || die "cannot resolve linux-image-amd64 (is the apt index present? try: apt-get update)"
  echo "$dep"
}

# Downloads PACKAGE's candidate .deb into the cache unless it is there already.
download() {
  local pkg=$1 version arch file
  version=$(apt-cache policy "$pkg" | awk '/Candidate:/ { print $2 }')
  [[ -n $version && $version != "(none)" ]] || die "no candidate version for $pkg (try: apt-get update)"
  arch=$(apt-cache show "$pkg=$version" | awk '/^Architecture:/ { print $2; exit }')
  file="$cache/debs/${pkg}_${version//:/%3a}_${arch}.deb"
  if [[ ! -s $file ]]; then
    echo "fetch.sh: downloading $pkg $version" >&2
    # apt warns that the download runs unsandboxed as root; only show its output on failure.
    local tmp
    tmp=$(mktemp -d "$cache/debs/.download.XXXXXX")
    if ! (cd "$tmp" && apt-get download -q "$pkg=$version" >apt.log 2>&1); then
      cat "$tmp/apt.log" >&2
      rm -rf "$tmp"
      die "apt-get download $pkg=$version failed"
    fi
    [[ -s $tmp/${file##*/} ]] || { rm -rf "$tmp"; die "apt-get download did not produce ${file##*/}"; }
    mv "$tmp/${file##*/}" "$file"
    rm -rf "$tmp"
  fi
  echo "$file"
}

# --- kernel --------------------------------------------------------------------------------
kpkg=$(resolve_kernel_package)
kver=${kpkg#linux-image-}
kdir="$cache/kernel-$kver"
if [[ ! -e $kdir/.complete ]]; then
  deb=$(download "$kpkg")
  rm -rf "$kdir" && mkdir -p "$kdir"
  dpkg-deb -x "$deb" "$kdir/root"
  # Debian 13's kernel package ships its modules under usr/lib (merged /usr): the /lib that
  # depmod -b and modprobe -d look in is a link to it, as on the installed system.
  [[ -e $kdir/root/lib || ! -d $kdir/root/usr/lib/modules ]] || ln -s usr/lib "$kdir/root/lib"
  # The .deb ships no modules.dep; modprobe (host's, for --show-depends, and busybox's in the guest) needs it.
  depmod -b "$kdir/root" "$kver"
  vmlinuz="$kdir/root/boot/vmlinuz-$kver"
  [[ -f $vmlinuz ]] || die "no $vmlinuz in $deb"
  # The bzImage carries a compressed vmlinux (xz in Debian 12's, zstd in Debian 13's); booting
  # that ELF directly (PVH) skips the real-mode setup and decompression under TCG. The
  # decompressor stops with an error at the data after the stream, which is not the kernel's.
  for z in '\xfd7zXZ\x00 xz' '\x28\xb5\x2f\xfd zstd'; do
    offset=$(LC_ALL=C grep -obUaP "${z% *}" "$vmlinuz" | head -1 | cut -d: -f1) || true
    [[ -n $offset ]] && break
  done
  [[ -n $offset ]] || die "no xz or zstd stream in $vmlinuz"
  command -v "${z#* }" >/dev/null || die "$vmlinuz is ${z#* }-compressed: needs the ${z#* } command"
  tail -c +$((offset + 1)) "$vmlinuz" | "${z#* }" -dc 2>/dev/null >"$kdir/vmlinux" || true
  [[ $(head -c 4 "$kdir/vmlinux" | od -An -c | tr -d ' ') == '177ELF' ]] || die "extracted vmlinux is not an ELF file"
  echo "$kver" >"$kdir/version"
  touch "$kdir/.complete"
fi
ln -sfn "kernel-$kver" "$cache/kernel"

# --- udev ----------------------------------------------------------------------------------
uver=$(apt-cache policy udev | awk '/Candidate:/ { print $2 }')
udir="$cache/udev-${uver//:/%3a}"
if [[ ! -e $udir/.complete ]]; then
  rm -rf "$udir" && mkdir -p "$udir/root"
  dpkg-deb -x "$(download udev)" "$udir/root"
  [[ -x $udir/root/bin/udevadm || -x $udir/root/usr/bin/udevadm ]] || die "udev package has no udevadm"
  touch "$udir/.complete"
fi
ln -sfn "$(basename "$udir")" "$cache/udev"
