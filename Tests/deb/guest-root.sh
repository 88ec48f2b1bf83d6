#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The userland of a Debian guest of another release than this machine's, for the package's
# VM tier (Tests/deb/systemd.sh --suite): a root made by mmdebstrap from this machine's
# Debian mirror (Tests/vm/suite-sources.sh), holding apt and dpkg, systemd as PID 1 with
# udev and dbus, procps (actiond.service's ExecReload= runs kill), mosquitto and its clients
# (the guest's broker), and whatever the given packages depend on (the first alternative of
# each Depends, without versions: apt in the guest, offline, then checks the versions against
# what is there), but nothing of the packages themselves. The guest boots it read-only below
# a tmpfs, so the cached root is never changed.
#
# Cached in CACHE_DIR/root-<hash of suite and package list> (about 180 MB, ~45 s to make);
# a new package list makes a new root. The package lists of one version differ by the
# machine that built the packages (libssl3 on Debian 12, libssl3t64 on 13), so several roots
# are kept (CI's two fresh roots share the cache); one unused for 14 days is removed (a use
# touches its .complete). Prints the root's path.
# Needs root (mmdebstrap's root mode: the files must be owned by their real users, as dpkg
# made them, for the guest's systemd, dbus and the package's scripts).
# Usage: Tests/deb/guest-root.sh SUITE CACHE_DIR PACKAGE.deb...
set -euo pipefail
usage="usage: guest-root.sh SUITE CACHE_DIR PACKAGE.deb..."
suite=${1:?$usage} cache=${2:?$usage}
shift 2
(($#)) || { echo "$usage" >&2; exit 2; }
die() { echo "guest-root.sh: $*" >&2; exit 1; }
top=$(cd "$(dirname "$0")/../.." && pwd)

pkgs="apt dpkg systemd udev dbus procps mosquitto mosquitto-clients"
for deb in "$@"; do
  own=$(dpkg-deb -f "$deb" Package) || die "$deb is not a Debian package"
  deps=$(dpkg-deb -f "$deb" Depends | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/:any//; s/[[:space:]]//g' | grep .) || true
  for d in $deps; do
    # The packages under test are installed in the guest, not in its root.
    case " $* " in *"/${d}_"*) continue ;; esac
    [ "$d" = "$own" ] || pkgs="$pkgs $d"
  done
done
pkgs=$(tr ' ' '\n' <<<"$pkgs" | sort -u | tr '\n' ' ')
pkgs=${pkgs% }
key=$(printf '%s\n%s\n' "$suite" "$pkgs" | sha256sum | cut -c1-12)
root=$cache/root-$key
mkdir -p "$cache"
# Two runs on one cache (checkouts sharing ACTIOND_CACHE) take turns (fetch.sh's lock).
exec 9>"$cache/.lock"
flock 9
if [ ! -e "$root/.complete" ]; then
  [ "$(id -u)" = 0 ] || die "making the $suite root needs root (mmdebstrap)"
  command -v mmdebstrap >/dev/null || die "needs mmdebstrap (apt-get install mmdebstrap)"
  rm -rf "$root" "$root.tmp" "$cache/root.sources"
  "$top/Tests/vm/suite-sources.sh" "$suite" "$cache/root.sources"
  echo "guest-root.sh: making the $suite root: $pkgs" >&2
  t=$(date +%s)
  # This machine's apt options (its mirror may need Check-Valid-Until off) apply to
  # mmdebstrap's apt too; mmdebstrap removes the package lists and its own apt settings at
  # the end, as on an installed system.
  mmdebstrap --quiet --variant=apt --include="${pkgs// /,}" \
    --aptopt='Acquire::Check-Valid-Until "false"' --aptopt='Acquire::Retries "3"' \
    "$suite" "$root.tmp" "$cache/root.sources" >"$cache/mmdebstrap.log" 2>&1 \
    || { rm -rf "$root.tmp"; tail -20 "$cache/mmdebstrap.log" >&2; die "mmdebstrap $suite"; }
  mv "$root.tmp" "$root"
  touch "$root/.complete"
  echo "guest-root.sh: $suite root made in $(($(date +%s) - t)) s ($(du -sm "$root" | cut -f1) MB)" >&2
fi
touch "$root/.complete"
find "$cache" -maxdepth 2 -path "$cache/root-*/.complete" -mtime +14 -printf '%h\n' | while read -r old; do
  rm -rf "$old"
done
rm -rf "$cache"/root-*.tmp   # what a killed run left
echo "$root"
