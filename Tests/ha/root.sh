#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Debian root a live Home Assistant runs in for `make test-ha` (Tests/ha/test_ha.py):
# Debian SUITE made by mmdebstrap from this machine's Debian mirror (Tests/vm/suite-sources.sh,
# the suite names swapped), with its python3, and Home Assistant VERSION from PyPI in a venv
# at /opt/ha, together with the requirements of every integration it sets up here (those it
# always loads and MQTT's; Tests/ha/requirements.py reads them from its own manifests), so
# that it runs with --skip-pip: nothing is downloaded while a test runs.
#
# Why SUITE: Home Assistant's wheel says which Python it needs (Requires-Python): 2025.5 to
# 2026.2 need 3.13.2 or later (Debian 13, trixie, has 3.13.5), 2026.3 and later 3.14.2 or
# later (Debian's next release, forky, until a stable one has it). The root's Python is
# checked against the wheel's requirement before anything is installed.
#
# Cached in CACHE/root-SUITE-VERSION-<hash of this script, requirements.py and the host's
# extra CA certificates> (about 1.4 GB): made in CACHE/*.tmp and renamed when complete, so an
# interrupted build is never used; an older root of the same SUITE and VERSION is removed.
# The wheels pip took are kept in CACHE/wheels-VERSION: a root made again (a new script, a
# machine with an empty root cache but these) downloads nothing from PyPI. Prints the root's path. Needs root (mmdebstrap, chroot, mount).
# Usage: Tests/ha/root.sh SUITE VERSION CACHE
set -euo pipefail
usage="usage: root.sh SUITE VERSION CACHE"
suite=${1:?$usage} version=${2:?$usage} cache=${3:?$usage}
me=ha-root
die() { echo "$me: $*" >&2; exit 1; }
say() { echo "$me: $*" >&2; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

# The host's own CA certificates (a machine behind a TLS-inspecting proxy has its CA there):
# pip in the root must trust what the host trusts.
cas=$(find /usr/local/share/ca-certificates -type f -name '*.crt' 2>/dev/null | sort || true)
key=$({ printf '%s\n%s\n' "$suite" "$version"; cat "$0" "$here/requirements.py"; for c in $cas; do cat "$c"; done; } | sha256sum | cut -c1-12)
root=$cache/root-$suite-$version-$key
if [ -e "$root/.complete" ]; then
  echo "$root"
  exit 0
fi
[ "$(id -u)" = 0 ] || die "making the root needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || die "needs mmdebstrap (apt-get install mmdebstrap)"
mkdir -p "$cache/wheels-$version"
# An older root of this suite and version, and what a build killed before its end left
# (an hour old: a build of this moment may be running).
rm -rf "$cache/root-$suite-$version-"*
find "$cache" -maxdepth 1 -name "root-$suite-$version.*.tmp" -mmin +60 -exec rm -rf --one-file-system {} +
tmp=$(mktemp -d "$cache/root-$suite-$version.XXXXXX.tmp")
log=$cache/root-$suite-$version.log
started=$(date +%s)
cleanup() {
  # Nothing half-made stays behind. The chroot step's mounts end with its namespace, or that
  # step undoes them inside a chroot; should one be left (the step killed outright), it is
  # unmounted here, and rm never crosses into a mount (/dev is bound in).
  for m in wheels dev proc; do umount "$tmp/root/$m" 2>/dev/null || true; done
  rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

"$top/Tests/vm/suite-sources.sh" "$suite" "$tmp/sources"
# python3-dev, gcc, g++: the few requirements PyPI has no wheel of for this Python (lru-dict
# for 3.13; some for 3.14) are compiled. The host's apt options apply (its mirror may need
# Check-Valid-Until off, as forky's Release file on a snapshot mirror does).
say "making the $suite root for Home Assistant $version (mmdebstrap)"
# (The customize hook notes the size of the packages apt downloaded, before mmdebstrap
# empties its cache.)
mmdebstrap --quiet --variant=apt --include=python3,python3-venv,python3-dev,gcc,g++,ca-certificates \
  --aptopt='Acquire::Check-Valid-Until "false"' --aptopt='Acquire::Retries "3"' \
  --customize-hook="du -sm \"\$1/var/cache/apt/archives\" | cut -f1 >'$tmp/debs-mb'" \
  "$suite" "$tmp/root" "$tmp/sources" >"$log" 2>&1 \
  || { tail -20 "$log" >&2; die "mmdebstrap $suite failed (log: $log)"; }
for c in $cas; do cp "$c" "$tmp/root/usr/local/share/ca-certificates/"; done
cp /etc/resolv.conf "$tmp/root/etc/resolv.conf"

# Home Assistant's install, in a mount namespace of its own. pip builds a wheelhouse first
# (CACHE/wheels-VERSION: every wheel the install takes, those it had to compile too), offline
# when the wheelhouse has them all, and installs from it alone. Where / is a mount point (a
# machine's own root) every mount of the namespace is made private and the kernel drops them
# all when it ends, however it ends; inside a chroot (CI runs `make test` in one) / is a plain
# directory, `unshare --propagation private` fails with EINVAL, and the mounts are undone on
# exit instead (an unmount propagates like the mount did), as scripts/cross-arm64 does.
inner=$(cat <<'INNER'
set -euo pipefail
r=$1 version=$2 wheels=$3
mount --make-rprivate / 2>/dev/null || true
undo() { umount "$r/wheels" 2>/dev/null || true; umount "$r/dev" 2>/dev/null || true; umount "$r/proc" 2>/dev/null || true; }
trap undo EXIT
trap "exit 130" INT TERM
mount -t proc proc "$r/proc"
mount --bind /dev "$r/dev"
mkdir -p "$r/wheels"
mount --bind "$wheels" "$r/wheels"
in_root() { chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
  PIP_NO_CACHE_DIR=1 PIP_CERT=/etc/ssl/certs/ca-certificates.crt PIP_DISABLE_PIP_VERSION_CHECK=1 \
  PIP_DEFAULT_TIMEOUT=120 PIP_RETRIES=5 PIP_FIND_LINKS=/wheels "$@"; }
# wheels SPEC...: the wheels of SPEC and everything it needs into /wheels (offline first).
wheels() {
  in_root /opt/ha/bin/pip wheel -q --no-index -w /wheels "$@" >/dev/null 2>&1 || in_root /opt/ha/bin/pip wheel -q -w /wheels "$@"
}
in_root update-ca-certificates >/dev/null 2>&1
in_root python3 -m venv /opt/ha
# The wheel's Requires-Python against this root's Python, before the install would fail on
# some dependency with a less clear message.
in_root /opt/ha/bin/pip download -q --no-deps --only-binary=:all: -d /wheels "homeassistant==$version" >/dev/null 2>&1 \
  || { echo "ha-root: Home Assistant $version has no wheel for this root's $(in_root python3 --version) (its Requires-Python)"; exit 1; }
# Home Assistant 2024.x pins acme's dependencies but not josepy, whose 2.0 removed what that
# acme imports (ComparableX509): without the bound hass-nabucasa (cloud) fails to import.
extra=()
case $version in 2024.*) extra=("josepy<2") ;; esac
wheels "homeassistant==$version" "${extra[@]}"
in_root /opt/ha/bin/pip install -q --no-index "homeassistant==$version" "${extra[@]}"
in_root /opt/ha/bin/python /src-ha/requirements.py >"$r/opt/ha/integration-requirements.txt"
constraints=/$(cd "$r" && echo opt/ha/lib/python3*/site-packages/homeassistant/package_constraints.txt)
wheels -c "$constraints" -r /opt/ha/integration-requirements.txt "${extra[@]}"
in_root /opt/ha/bin/pip install -q --no-index -c "$constraints" -r /opt/ha/integration-requirements.txt "${extra[@]}"
in_root /opt/ha/bin/hass --version >/dev/null
INNER
)
mkdir -p "$tmp/root/src-ha"
cp "$here/requirements.py" "$tmp/root/src-ha/"
say "installing Home Assistant $version from PyPI into the root"
wheels_before=$(du -sm "$cache/wheels-$version" | cut -f1)
unshare --mount --propagation unchanged bash -c "$inner" inner "$tmp/root" "$version" "$cache/wheels-$version" >>"$log" 2>&1 \
  || { tail -30 "$log" >&2; die "installing Home Assistant $version failed (log: $log)"; }
rm -rf "$tmp/root/src-ha"; rmdir "$tmp/root/wheels"
# The install's glob above must have found exactly one site-packages.
[ -x "$tmp/root/opt/ha/bin/hass" ] || die "no /opt/ha/bin/hass in the root"
touch "$tmp/root/.complete"
# -T: should another build have finished the same root meanwhile, this one is dropped
# (the trap) rather than moved inside it.
mv -T "$tmp/root" "$root" 2>/dev/null || [ -e "$root/.complete" ] || die "cannot move the root to $root"
say "root for Home Assistant $version ($suite, $(chroot "$root" python3 --version)) made in $(($(date +%s) - started)) s:" \
  "$(du -sm "$root" | cut -f1) MB; downloaded $(cat "$tmp/debs-mb") MB of Debian packages," \
  "$(($(du -sm "$cache/wheels-$version" | cut -f1) - wheels_before)) MB of new wheels (those pip built included)"
echo "$root"
