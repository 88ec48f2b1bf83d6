#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fetches Debian 12 (bookworm)'s arm64 kernel, udev and busybox-static, the
# libraries udevadm links, and the run-time libraries of the actiond package
# (libevdev2, libudev1, libgcc-s1: the guest runs the cross-built actiond on
# Debian 12's glibc, the oldest it supports), from the machine's own Debian
# mirrors (its apt sources, the suite made bookworm's whatever the machine runs),
# into a cache reused across runs. Nothing is installed and the host's dpkg is not
# touched: apt runs with a private state directory whose only architecture is
# arm64, so `dpkg --add-architecture` is not needed.
#
# Usage: fetch.sh CACHE_DIR     (prints nothing but progress on stderr; CACHE_DIR is
#                               $ACTIOND_CACHE/vm/bookworm-arm64 for test-arm64)
# Leaves in CACHE_DIR:
#   kernel/Image        the kernel (gzip'ed arm64 Image; qemu unpacks it)
#   kernel/root/        the unpacked kernel package, depmod'ed
#   sysroot/            udev, busybox-static and the libraries, unpacked
set -euo pipefail

cache=${1:?usage: fetch.sh CACHE_DIR}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
die() { echo "arm64/fetch.sh: $*" >&2; exit 1; }
# Two runs on one cache (checkouts sharing ACTIOND_CACHE) take turns; a run killed halfway
# leaves no .complete-2, and the next one starts over with a new download directory.
exec 9>"$cache/.lock"
flock 9

apt_dir=$cache/apt
mkdir -p "$apt_dir/lists/partial" "$apt_dir/archives/partial" "$cache/debs"
touch "$apt_dir/status"
# The machine's sources with its release's suite names (X, X-updates, X-security) made bookworm's.
suite=bookworm
host_codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[[ -n $host_codename ]] || die "cannot tell this machine's Debian codename from /etc/os-release"
rm -rf "$apt_dir/sources"; mkdir -p "$apt_dir/sources"
n=0
for f in /etc/apt/sources.list.d/*.sources /etc/apt/sources.list.d/*.list /etc/apt/sources.list; do
  [[ -s $f ]] || continue
  n=$((n + 1))
  sed -E "/^[[:space:]]*(Suites:|deb(-src)?[[:space:]])/ s/\\b$host_codename(-[a-z]+)?\\b/$suite\\1/g" "$f" >"$apt_dir/sources/$n-${f##*/}"
done
((n > 0)) || die "this machine has no apt sources"
apt_opts=(
  -o APT::Architecture=arm64 -o APT::Architectures::=arm64
  -o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$apt_dir/sources"
  -o Dir::State::Lists="$apt_dir/lists" -o Dir::State::status="$apt_dir/status"
  -o Dir::Cache="$apt_dir" -o Debug::NoLocking=1 -o APT::Sandbox::User=root -q
)

# The packages udevadm needs at run time: udev's library dependencies and
# theirs (apt's own dependency data, so a new Debian point release still works).
packages_closure() {
  local direct
  direct=$(apt-cache "${apt_opts[@]}" depends udev | awk '/Depends: lib/ { print $2 }' | sort -u)
  apt-cache "${apt_opts[@]}" depends --recurse --no-recommends --no-suggests --no-conflicts \
    --no-breaks --no-replaces --no-enhances $direct | grep '^lib' | sort -u
}

# The run-time libraries of the actiond package (dh_shlibdeps' Depends of the cross build).
actiond_libs="libevdev2 libudev1 libgcc-s1 libc6"

# .complete-2: the cache of a version without the actiond libraries is refetched.
if [[ ! -e $cache/.complete-2 ]]; then
  echo "arm64/fetch.sh: updating the arm64 package index" >&2
  apt-get "${apt_opts[@]}" update >/dev/null || die "apt-get update (arm64) failed"
  kpkg=$(apt-cache "${apt_opts[@]}" depends linux-image-arm64 | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  [[ -n $kpkg ]] || die "cannot resolve linux-image-arm64"
  pkgs="$kpkg udev busybox-static $actiond_libs $(packages_closure | tr '\n' ' ')"
  echo "arm64/fetch.sh: downloading $pkgs" >&2
  rm -rf "$cache/debs.tmp" && mkdir -p "$cache/debs.tmp"
  (cd "$cache/debs.tmp" && apt-get "${apt_opts[@]}" download $pkgs >/dev/null) || die "apt-get download failed"
  rm -rf "$cache/debs" && mv "$cache/debs.tmp" "$cache/debs"

  rm -rf "$cache/kernel" "$cache/sysroot"
  mkdir -p "$cache/kernel/root" "$cache/sysroot"
  kver=${kpkg#linux-image-}
  dpkg-deb -x "$cache/debs/${kpkg}_"*_arm64.deb "$cache/kernel/root"
  # The .deb ships no modules.dep; busybox modprobe in the guest needs it.
  depmod -b "$cache/kernel/root" "$kver"
  cp "$cache/kernel/root/boot/vmlinuz-$kver" "$cache/kernel/Image"
  echo "$kver" >"$cache/kernel/version"
  for deb in "$cache"/debs/*.deb; do
    case $(basename "$deb") in linux-image-*) continue ;; esac
    dpkg-deb -x "$deb" "$cache/sysroot"
  done
  rm -rf "$cache/sysroot/usr/share/doc" "$cache/sysroot/usr/share/man" "$cache/sysroot/usr/share/locale"
  [[ -e $cache/sysroot/bin/udevadm ]] || die "udev package has no /bin/udevadm"
  [[ -e $cache/sysroot/bin/busybox ]] || die "busybox-static has no /bin/busybox"
  # Every library udevadm needs must be in the sysroot: checked now, not found missing in the VM.
  missing=$(readelf -d "$cache/sysroot/bin/udevadm" $(find "$cache/sysroot" -name 'lib*.so*' -type f) 2>/dev/null \
    | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p' | sort -u | while read -r so; do
        [[ -n $(find "$cache/sysroot" -name "$so" -print -quit) ]] || echo "$so"
      done)
  [[ -z $missing ]] || die "libraries missing from the arm64 sysroot: $missing"
  touch "$cache/.complete-2"
fi
