#!/usr/bin/env bash
# test-deb-systemd: the Debian package under a real systemd 252 (PID 1) in a VM, the
# way an operator meets it: apt-get installs the previous build, a hold on a uinput
# button performs the default control, actiond-mqtt installed beside it stays stopped
# until configured, then (configured as docs/home-assistant.md says, against mosquitto
# in the guest) connects and publishes the hold, and its remove and purge keep actiond's
# configuration; an upgrade to the next build keeps an edited conffile and the persisted
# state, apt-get remove stops the units and keeps the configuration, apt-get purge removes
# configuration, state and the user.
#
# The guest's /usr is an overlay: this machine's /usr (9p, read-only: Debian 12's
# systemd 252, dpkg, apt) below a tmpfs, so dpkg can install into it; /var/lib/dpkg is
# this machine's database below a tmpfs too, so the package's dependencies (libevdev2,
# libudev1, systemd) are installed as far as apt and dpkg are concerned, because they
# are. Debian's udev (Tests/vm/.cache, unpacked into the overlay) runs as
# systemd-udevd.service. /usr/local is an empty tmpfs: nothing of `make install` or
# of the Swift toolchain is visible.
#
# Usage: Tests/deb/systemd.sh PREVIOUS.deb [NEXT.deb]
# actiond-mqtt is PREVIOUS.deb's sibling actiond-mqtt_<its version>_<arch>.deb (make deb
# builds both into one directory).
# Without NEXT.deb the next build is made: a copy of this checkout (committed or not)
# with a newer version (scripts/set-version), built by `make deb` (a full release build).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=$top/Tests/vm/.cache
die() { echo "test-deb-systemd: FAIL: $*" >&2; exit 1; }
prev=$(realpath "${1:?usage: systemd.sh PREVIOUS.deb [NEXT.deb]}")
[ -f "$prev" ] || die "no $prev"
prev_mqtt=$(dirname "$prev")/actiond-mqtt_${prev##*/actiond_}
[ -f "$prev_mqtt" ] || die "no $prev_mqtt beside $prev"

# The guest is Debian's amd64 kernel under qemu-system-x86_64 with this machine's /usr.
[ "$(dpkg-architecture -qDEB_HOST_ARCH)" = amd64 ] || die "the VM tier boots an amd64 guest on this machine's /usr: amd64 machines only"
"$top/Tests/vm/fetch.sh" "$cache" >/dev/null
kver=$(cat "$cache/kernel/version")
kroot=$(realpath "$cache/kernel/root")
udevroot=$(realpath "$cache/udev/root")
work=$(mktemp -d /tmp/actiond-deb-systemd.XXXXXX)
trap 'rm -rf "$work"' EXIT

if [ -n "${2:-}" ]; then
  next=$(realpath "$2")
else
  old=$(dpkg-deb -f "$prev" Version)
  nv="$old+next1"
  echo "test-deb-systemd: building the next version ($nv) in a copy of the checkout"
  mkdir "$work/src"
  (cd "$top" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$work/src")
  (cd "$work/src" && scripts/set-version "$nv" "The next build, to prove an upgrade." >/dev/null \
    && nice -n 10 make --no-print-directory deb) >"$work/next.log" 2>&1 \
    || { tail -30 "$work/next.log" >&2; die "make deb of the next version"; }
  next=$(ls "$work"/src/.build/deb/actiond_"$nv"_*.deb)
fi
pv=$(dpkg-deb -f "$prev" Version) nv=$(dpkg-deb -f "$next" Version)
dpkg --compare-versions "$nv" gt "$pv" || die "$next ($nv) is not newer than $prev ($pv)"
testdev=$(cd "$top" && swift build -c release --static-swift-stdlib --show-bin-path)/actiond-testdev
[ -x "$testdev" ] || die "no $testdev (make test-deb-systemd builds it)"

# What the guest reads from the host through 9p (its / is this machine's /).
stage=$work/stage
mkdir -p "$stage"
cp "$prev" "$stage/actiond-previous.deb"
cp "$prev_mqtt" "$stage/actiond-mqtt-previous.deb"
cp "$next" "$stage/actiond-next.deb"
cp "$testdev" "$stage/actiond-testdev"
echo "$pv" >"$stage/previous-version"
echo "$nv" >"$stage/next-version"

root=$work/root
mkdir -p "$root"/{bin,proc,sys,dev,run,newroot,etc}
install -m 0755 "$(command -v busybox)" "$root/bin/busybox"
for m in 9p 9pnet_virtio virtio_pci overlay evdev uinput; do
  modprobe -d "$kroot" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' >"$work/modules"
mkdir -p "$root/modules"
n=0; while read -r ko; do n=$((n + 1)); cp "$ko" "$root/modules/$(printf %02d $n)-$(basename "$ko")"; done <"$work/modules"

# The guest's /etc: a minimal system, the test units, and a local rule marking the
# test's uinput device as the button `action` (docs/keyboard-key.md's pattern).
etc=$root/etc-stage
mkdir -p "$etc/systemd/system" "$etc/udev/rules.d"
cat >"$etc/systemd/system/actiond-vmtest.target" <<'UNIT'
[Unit]
Description=actiond package VM test
Requires=sysinit.target actiond-vmtest.service
After=sysinit.target
AllowIsolate=yes
UNIT
cat >"$etc/systemd/system/actiond-vmtest.service" <<'UNIT'
[Unit]
Description=actiond package VM test driver
After=sysinit.target systemd-udevd.service
[Service]
Type=oneshot
ExecStart=/bin/sh /etc/actiond-vmtest.sh
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
UNIT
cat >"$etc/udev/rules.d/69-actiond-vmtest.rules" <<'RULE'
SUBSYSTEM=="input", KERNEL=="event*", ATTRS{name}=="actiond-vmtest-button", ENV{ACTIOND_BUTTON}="action"
RULE
sed "s|@STAGE@|$stage|g" "$here/systemd-guest.sh" >"$etc/actiond-vmtest.sh"
install -m 0644 "$top/Tests/vm/systemd/broker.sh" "$etc/actiond-vmtest-broker.sh"

cat >"$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
for ko in /modules/*.ko; do /bin/busybox insmod "\$ko" || echo "insmod \$ko failed"; done
n=/newroot
/bin/busybox mount -t tmpfs -o mode=0755 root \$n
/bin/busybox mkdir -p \$n/usr \$n/host \$n/proc \$n/sys \$n/dev \$n/run \$n/tmp \$n/var/lib/dpkg \$n/var/log \$n/var/cache \$n/root \$n/etc \$n/.ovl/usr/u \$n/.ovl/usr/w \$n/.ovl/dpkg/u \$n/.ovl/dpkg/w
/bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,ro host \$n/host || { echo "SYSTEMD-FAIL: 9p"; /bin/busybox poweroff -f; }
/bin/busybox mount -t overlay -o lowerdir=\$n/host/usr,upperdir=\$n/.ovl/usr/u,workdir=\$n/.ovl/usr/w usr \$n/usr || { echo "SYSTEMD-FAIL: overlay /usr"; /bin/busybox poweroff -f; }
/bin/busybox mount -t overlay -o lowerdir=\$n/host/var/lib/dpkg,upperdir=\$n/.ovl/dpkg/u,workdir=\$n/.ovl/dpkg/w dpkg \$n/var/lib/dpkg || { echo "SYSTEMD-FAIL: overlay dpkg"; /bin/busybox poweroff -f; }
/bin/busybox mount -t tmpfs -o mode=0755 usrlocal \$n/usr/local
# This machine is a container whose policy-rc.d forbids maintainer scripts to start
# services; a real Debian system has none.
/bin/busybox rm -f \$n/usr/sbin/policy-rc.d
for l in bin sbin lib lib64; do /bin/busybox ln -s usr/\$l \$n/\$l; done
# Debian's udev, unpacked (bin, lib -> usr/bin, usr/lib in a merged-/usr system).
u=\$n/host$udevroot
/bin/busybox cp -a \$u/bin/. \$n/usr/bin/
/bin/busybox cp -a \$u/lib/. \$n/usr/lib/
/bin/busybox cp -a \$u/usr/. \$n/usr/
/bin/busybox cp -a \$u/etc/. \$n/etc/
/bin/busybox cp -a /etc-stage/. \$n/etc/
/bin/busybox cp -a \$n/host/etc/apt \$n/host/etc/dpkg \$n/etc/
/bin/busybox cp \$n/host/etc/login.defs \$n/etc/ 2>/dev/null
/bin/busybox mkdir -p \$n/var/lib/apt/lists/partial \$n/var/cache/apt/archives/partial \$n/var/lib/systemd
printf '0123456789abcdef0123456789abcdef\n' >\$n/etc/machine-id
# This machine's users and groups (its dpkg database's statoverrides name some), without
# any actiond of its own: the package's postinst must create that.
for f in passwd group shadow gshadow; do /bin/busybox grep -v '^actiond:' \$n/host/etc/\$f >\$n/etc/\$f; done
# udev's rules and actiond.service (SupplementaryGroups=) need group input, which a
# Debian system with udev has; this container host may not.
/bin/busybox grep -q '^input:' \$n/etc/group || { echo 'input:x:101:' >>\$n/etc/group; echo 'input:!::' >>\$n/etc/gshadow; }
chmod 0640 \$n/etc/shadow \$n/etc/gshadow
printf 'passwd: files systemd\ngroup: files systemd\nshadow: files\n' >\$n/etc/nsswitch.conf
/bin/busybox ln -s /usr/lib/os-release \$n/etc/os-release
/bin/busybox umount /proc /sys /dev
exec /bin/busybox switch_root \$n /lib/systemd/systemd
INIT
. "$top/Tests/vm/systemd/boot.sh"
systemd_boot 1200 1536 80
echo "test-deb-systemd: passed in $(($(date +%s) - start)) s ($pv, upgraded to $nv)"
