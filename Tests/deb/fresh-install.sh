#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-deb-fresh: `apt install ./actiond_VERSION_ARCH.deb` in a brand-new Debian 12 root
# (mmdebstrap --variant=apt: the essential packages and apt, no systemd, no udev, no
# libevdev2), as on a machine that has never seen the project: apt must pull every
# dependency from the Debian mirror, the postinst must create the user and enable the
# socket (systemd is not running in a chroot, so nothing is started: deb-systemd-invoke
# skips it), the installed binaries must run. With the second package given, actiond-mqtt
# is installed after it (pulling libmosquitto1), runs, and its purge leaves actiond's
# /etc/actiond alone; installed again, `apt remove actiond` removes it too, keeping both
# configurations. Then apt purge leaves nothing of ours.
# Needs root, mmdebstrap and this host's apt sources (the network); about 3 minutes.
# Usage: Tests/deb/fresh-install.sh PATH/actiond_VERSION_ARCH.deb [PATH/actiond-mqtt_VERSION_ARCH.deb]
set -euo pipefail
deb=$(realpath "${1:?usage: fresh-install.sh PATH/actiond_VERSION_ARCH.deb [PATH/actiond-mqtt_VERSION_ARCH.deb]}")
mqtt_deb=${2:+$(realpath "$2")}
fail() { echo "test-deb-fresh: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (mmdebstrap, chroot)"
command -v mmdebstrap >/dev/null || fail "needs mmdebstrap (apt-get install mmdebstrap)"
work=$(mktemp -d /tmp/actiond-deb-fresh.XXXXXX); root=$work/root
mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do umount -l "${mounts[$i]}" 2>/dev/null || true; done
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
start=$(date +%s)
src=$(ls /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
mmdebstrap --quiet --variant=apt bookworm "$root" ${src:+"$src"} >"$work/mmdebstrap.log" 2>&1 \
  || { tail -5 "$work/mmdebstrap.log" >&2; fail "mmdebstrap"; }
cp /etc/apt/apt.conf.d/99* "$root/etc/apt/apt.conf.d/" 2>/dev/null || true
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mount -t proc proc "$root/proc"; mounts+=("$root/proc")
cp "$deb" ${mqtt_deb:+"$mqtt_deb"} "$root/tmp/"
in_root() { chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive PATH=/usr/sbin:/usr/bin:/sbin:/bin "$@"; }
for p in actiond libevdev2 systemd; do  # (libudev1 is there: apt needs it)
  if in_root dpkg-query -W -f='${Status}' $p 2>/dev/null | grep -q 'ok installed'; then fail "the fresh root already has $p"; fi
done
bootstrapped=$(($(date +%s) - start))

in_root dpkg-query -W -f='${Package}\n' | sort >"$work/before"
t=$(date +%s)
# mmdebstrap removes the package lists it used, as on a freshly installed system.
in_root apt-get -q update >"$work/update.log" 2>&1 || { cat "$work/update.log" >&2; fail "apt-get update"; }
in_root apt-get -q -y install "/tmp/${deb##*/}" >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "apt-get install ./${deb##*/}"; }
installed=$(($(date +%s) - t))
in_root dpkg-query -W -f='${Package}\n' | sort >"$work/after"
pulled=$(comm -13 "$work/before" "$work/after" | grep -vx actiond | tr '\n' ' ')
version=$(dpkg-deb -f "$deb" Version)
[ "$(in_root dpkg-query -W -f='${Status} ${Version}' actiond)" = "install ok installed $version" ] || fail "actiond is not installed"
for p in libevdev2 libudev1 systemd; do
  in_root dpkg-query -W -f='${Status}' $p | grep -q 'ok installed' || fail "apt did not pull $p"
done
in_root id actiond >/dev/null || fail "the postinst did not create the user actiond"
[ -L "$root/etc/systemd/system/sockets.target.wants/actiond.socket" ] || fail "actiond.socket is not enabled"
[ ! -e "$root/etc/systemd/system/multi-user.target.wants/actiond.service" ] || fail "actiond.service is enabled"
in_root /usr/sbin/actiond --version | grep -qF "$version" || fail "actiond --version"
in_root /usr/bin/actionctl check-config /etc/actiond/actiond.json >/dev/null || fail "actionctl check-config /etc/actiond/actiond.json"
in_root man -w actiond.conf >/dev/null 2>&1 || [ -f "$root/usr/share/man/man5/actiond.conf.5.gz" ] || fail "no actiond.conf(5)"
echo "test-deb-fresh: apt-get install ./${deb##*/} in ${installed}s pulled $(wc -w <<<"$pulled") packages: $pulled"
echo "test-deb-fresh: user $(in_root id actiond); socket enabled; actiond --version: $(in_root /usr/sbin/actiond --version)"

if [ -n "$mqtt_deb" ]; then
  in_root dpkg-query -W -f='${Package}\n' | sort >"$work/before-mqtt"
  in_root apt-get -q -y install "/tmp/${mqtt_deb##*/}" >"$work/install-mqtt.log" 2>&1 \
    || { cat "$work/install-mqtt.log" >&2; fail "apt-get install ./${mqtt_deb##*/}"; }
  in_root dpkg-query -W -f='${Package}\n' | sort >"$work/after-mqtt"
  in_root dpkg-query -W -f='${Status}' libmosquitto1 | grep -q 'ok installed' || fail "apt did not pull libmosquitto1"
  [ ! -e "$root/etc/systemd/system/multi-user.target.wants/actiond-mqtt.service" ] || fail "actiond-mqtt.service is enabled"
  in_root /usr/sbin/actiond-mqtt --version | grep -qF "$version" || fail "actiond-mqtt --version"
  echo "test-deb-fresh: apt-get install ./${mqtt_deb##*/} pulled: $(comm -13 "$work/before-mqtt" "$work/after-mqtt" | grep -vx actiond-mqtt | tr '\n' ' ')"
  in_root apt-get -q -y purge actiond-mqtt >"$work/purge-mqtt.log" 2>&1 || { cat "$work/purge-mqtt.log" >&2; fail "apt-get purge actiond-mqtt"; }
  [ ! -e "$root/usr/sbin/actiond-mqtt" ] || fail "/usr/sbin/actiond-mqtt is still there after purge"
  [ -f "$root/etc/actiond/actiond.json" ] || fail "purging actiond-mqtt removed actiond's /etc/actiond/actiond.json"
  echo "test-deb-fresh: apt-get purge actiond-mqtt: gone, actiond's /etc/actiond kept"
  # actiond-mqtt depends on actiond: removing actiond removes it too, and both keep what the
  # operator configured until a purge.
  in_root apt-get -q -y install "/tmp/${mqtt_deb##*/}" >"$work/reinstall-mqtt.log" 2>&1 \
    || { cat "$work/reinstall-mqtt.log" >&2; fail "apt-get install ./${mqtt_deb##*/} (again)"; }
  printf '{ broker: { host: "192.0.2.10" } }\n' >"$root/etc/actiond/mqtt.json5"
  in_root apt-get -q -y remove actiond >"$work/remove.log" 2>&1 || { cat "$work/remove.log" >&2; fail "apt-get remove actiond"; }
  for p in actiond actiond-mqtt; do
    status=$(in_root dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$status" = "deinstall ok config-files" ] || fail "after apt-get remove actiond, $p is '$status', not removed with its configuration kept"
  done
  [ -f "$root/etc/actiond/actiond.json" ] && [ -f "$root/etc/actiond/mqtt.json5" ] \
    || fail "apt-get remove actiond lost /etc/actiond/actiond.json or mqtt.json5"
  echo "test-deb-fresh: apt-get remove actiond: actiond-mqtt removed with it, both configurations kept"
fi

in_root apt-get -q -y purge actiond ${mqtt_deb:+actiond-mqtt} >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "apt-get purge actiond"; }
for p in etc/actiond var/lib/actiond usr/sbin/actiond lib/systemd/system/actiond.service etc/systemd/system/sockets.target.wants/actiond.socket; do
  [ ! -e "$root/$p" ] && [ ! -L "$root/$p" ] || fail "/$p is still there after purge"
done
in_root getent passwd actiond >/dev/null || fail "purge removed the system user actiond"
echo "test-deb-fresh: apt-get purge actiond left nothing of the package but the system user (kept, Debian's way)"
echo "test-deb-fresh: passed in $(($(date +%s) - start))s (bootstrap ${bootstrapped}s, install ${installed}s)"
