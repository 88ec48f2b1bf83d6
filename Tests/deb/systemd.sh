#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-deb-systemd, test-deb-debian13: the Debian package under a real systemd (PID 1) in a
# VM, the way an operator meets it: apt-get installs the previous build, a hold on a uinput
# button performs the default control, actiond-mqtt installed beside it stays stopped
# until configured, then (configured as docs/home-assistant.md says, against mosquitto
# in the guest) connects and publishes the hold, and its remove and purge keep actiond's
# configuration; an upgrade to the next build keeps an edited conffile and the persisted
# state, apt-get remove stops the units and keeps the configuration, apt-get purge removes
# configuration, state and the user.
#
# The guest's userland is one of two:
# - without --suite, this machine's: the guest's /usr is an overlay, this machine's /usr
#   (9p, read-only: on Debian 12, systemd 252, dpkg, apt) below a tmpfs, so dpkg can
#   install into it; /var/lib/dpkg is this machine's database below a tmpfs too, so the
#   package's dependencies (libevdev2, libudev1, systemd) are installed as far as apt and
#   dpkg are concerned, because they are. Debian's udev (the VM tier's cache, unpacked into
#   the overlay) runs as systemd-udevd.service. /usr/local is an empty tmpfs: nothing of
#   `make install` or of the Swift toolchain is visible. The kernel is the VM tier's
#   (Tests/vm/fetch.sh: this machine's suite's).
# - with --suite SUITE (e.g. trixie: Debian 13, systemd 257), a Debian root of that suite
#   (Tests/deb/guest-root.sh: mmdebstrap, cached) is the guest's whole / below a tmpfs
#   (9p, read-only), and the kernel is that suite's (Tests/vm/fetch.sh --suite; both cached
#   in $ACTIOND_CACHE/vm/SUITE, Tests/vm/cache-dir.sh): the guest is that Debian release,
#   whatever this machine is (in CI, Debian 12 or 13), and the package built here must
#   install on it.
#
# Usage: Tests/deb/systemd.sh [--suite SUITE] [--next-from-previous] PREVIOUS.deb [NEXT.deb]
# actiond-mqtt is PREVIOUS.deb's sibling actiond-mqtt_<its version>_<arch>.deb (make deb
# builds both into one directory).
# The next version is NEXT.deb when given; with --next-from-previous it is PREVIOUS.deb
# repacked with a newer version (see repack_next: seconds); otherwise it is built: a copy of
# this checkout (committed or not) with a newer version (scripts/set-version), built by
# `make deb` (a full release build, several minutes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
usage="usage: systemd.sh [--suite SUITE] [--next-from-previous] PREVIOUS.deb [NEXT.deb]"
suite= repack=0
while [ $# -gt 0 ]; do
  case $1 in
    --suite) suite=${2:?$usage}; shift 2 ;;
    --next-from-previous) repack=1; shift ;;
    -*) echo "$usage" >&2; exit 2 ;;
    *) break ;;
  esac
done
tag=test-deb-systemd${suite:+ ($suite)}
die() { echo "$tag: FAIL: $*" >&2; exit 1; }
prev=$(realpath "${1:?$usage}")
[ -f "$prev" ] || die "no $prev"
prev_mqtt=$(dirname "$prev")/actiond-mqtt_${prev##*/actiond_}
[ -f "$prev_mqtt" ] || die "no $prev_mqtt beside $prev"
[ -z "${2:-}" ] || [ $repack = 0 ] || die "NEXT.deb and --next-from-previous: one or the other"

# The guest is Debian's amd64 kernel under qemu-system-x86_64 running amd64 binaries built here.
[ "$(dpkg-architecture -qDEB_HOST_ARCH)" = amd64 ] || die "the VM tier boots an amd64 guest: amd64 machines only"
if [ -n "$suite" ]; then
  cache=$("$top/Tests/vm/cache-dir.sh" "$suite")
  "$top/Tests/vm/fetch.sh" "$cache" --suite "$suite" >/dev/null
  guest_root=$(realpath "$("$here/guest-root.sh" "$suite" "$cache" "$prev" "$prev_mqtt")")
else
  cache=$("$top/Tests/vm/cache-dir.sh")
  "$top/Tests/vm/fetch.sh" "$cache" >/dev/null
  udevroot=$(realpath "$cache/udev/root")
fi
kver=$(cat "$cache/kernel/version")
kroot=$(realpath "$cache/kernel/root")
work=$(mktemp -d /tmp/actiond-deb-systemd.XXXXXX)
# KEEP=1 keeps the work directory (serial log, initramfs) for a look after the run.
trap '[ -n "${KEEP:-}" ] && echo "$tag: kept $work" >&2 || rm -rf "$work"' EXIT

# repack_next PREVIOUS.deb VERSION OUT.deb: PREVIOUS.deb as version VERSION, with a
# changelog entry for it (the file and its md5sums line), built again by dpkg-deb. The
# upgrade to it runs both versions' real maintainer scripts as dpkg orders them on an
# upgrade (prerm upgrade, the new postinst's configure with the old version: sysusers,
# the socket kept, the service restarted, the udev trigger), dpkg's conffile handling of an
# edited conffile whose shipped version is unchanged, and the replacement of every file of
# the package under a running service. It cannot show what only a newer source can: a
# newer daemon reading the state an older one wrote (the binaries are the same), or units
# and scripts that changed between two versions (they are the same too).
repack_next() {
  local d=$work/repack cl entry
  dpkg-deb -R "$1" "$d"
  sed -i "s/^Version: .*/Version: $2/" "$d/DEBIAN/control"
  cl=usr/share/doc/actiond/changelog.Debian.gz
  [ -f "$d/$cl" ] || cl=usr/share/doc/actiond/changelog.gz  # a native package's
  [ -f "$d/$cl" ] || die "no changelog in $1"
  entry=$(zcat "$d/$cl" | head -1 | sed "s/([^)]*)/($2)/")
  { printf '%s\n\n  * The next version, repacked from %s to prove an upgrade.\n\n' "$entry" "$(dpkg-deb -f "$1" Version)"
    printf ' -- %s  %s\n\n' "$(zcat "$d/$cl" | sed -n 's/^ -- \(.*>\)  .*/\1/p' | head -1)" "$(date -R)"
    zcat "$d/$cl"; } | gzip -9n >"$d/$cl.new"
  mv "$d/$cl.new" "$d/$cl"
  grep -q "  $cl\$" "$d/DEBIAN/md5sums" || die "$cl is not in $1's md5sums"
  sed -i "s|^[0-9a-f]*  $cl\$|$(md5sum "$d/$cl" | cut -d' ' -f1)  $cl|" "$d/DEBIAN/md5sums"
  dpkg-deb --root-owner-group -Zxz -b "$d" "$3" >/dev/null
  rm -rf "$d"
}

if [ -n "${2:-}" ]; then
  next=$(realpath "$2")
elif [ $repack = 1 ]; then
  nv="$(dpkg-deb -f "$prev" Version)+next1"
  next=$work/actiond_${nv}_$(dpkg-deb -f "$prev" Architecture).deb
  repack_next "$prev" "$nv" "$next"
  echo "$tag: the next version ($nv) is $(basename "$prev") repacked"
else
  old=$(dpkg-deb -f "$prev" Version)
  nv="$old+next1"
  echo "$tag: building the next version ($nv) in a copy of the checkout"
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
# What the next package's actiond --version names: a repacked package's binary is the
# previous one.
if [ $repack = 1 ]; then echo "$pv"; else echo "$nv"; fi >"$stage/next-binary-version"

root=$work/root
mkdir -p "$root"/{bin,proc,sys,dev,run,newroot,etc}
install -m 0755 "$(command -v busybox)" "$root/bin/busybox"
for m in 9p 9pnet_virtio virtio_pci overlay evdev uinput; do
  modprobe -d "$kroot" -S "$kver" --show-depends "$m" | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' >"$work/modules"
mkdir -p "$root/modules"
# Debian 13's modules are xz-compressed; busybox insmod takes them uncompressed.
n=0; while read -r ko; do
  n=$((n + 1)) to=$root/modules/$(printf %02d $n)-$(basename "${ko%.xz}")
  case $ko in *.xz) xz -dc "$ko" >"$to" ;; *) cp "$ko" "$to" ;; esac
done <"$work/modules"

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
# What this throwaway guest does without, to spend less of its one emulated CPU on what the
# package does not touch; the package and its scripts run as on any system. apt runs
# dpkg-preconfigure (perl and debconf: seconds under TCG) before each install to ask a
# package's debconf questions: these packages have none.
# systemd mounts and loads at boot the kernel's debug, tracing, config, fuse, hugepage and
# mqueue file systems and modules (masked units, as systemd documents masking), which
# neither the package nor the test uses.
mkdir -p "$etc/apt/apt.conf.d"
printf '#clear DPkg::Pre-Install-Pkgs;\n' >"$etc/apt/apt.conf.d/99actiond-vmtest"
for u in sys-kernel-debug.mount sys-kernel-tracing.mount sys-kernel-config.mount sys-fs-fuse-connections.mount \
  dev-hugepages.mount dev-mqueue.mount modprobe@configfs.service modprobe@efi_pstore.service modprobe@fuse.service \
  modprobe@drm.service modprobe@dm_mod.service modprobe@loop.service; do
  ln -s /dev/null "$etc/systemd/system/$u"
done
# A $suite root has its caches made (ld.so.cache, the journal's catalog) but no
# /etc/.updated, so systemd would make them again at every boot (ConditionNeedsUpdate=).
if [ -n "$suite" ]; then
  for u in ldconfig.service systemd-journal-catalog-update.service systemd-update-done.service; do
    ln -s /dev/null "$etc/systemd/system/$u"
  done
fi
install -m 0644 "$top/Tests/vm/systemd/broker.sh" "$etc/actiond-vmtest-broker.sh"

if [ -n "$suite" ]; then
# The guest's / is an overlay: the $suite root (9p, read-only) below a tmpfs, on which
# the test's /etc files are laid. The 9p share stays mounted at /host for the packages.
cat >"$root/init" <<INIT
#!/bin/busybox sh
/bin/busybox mkdir -p /proc /sys /dev /t /newroot
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t devtmpfs devtmpfs /dev
for ko in /modules/*.ko; do /bin/busybox insmod "\$ko" || echo "insmod \$ko failed"; done
/bin/busybox mount -t tmpfs -o mode=0755 upper /t
/bin/busybox mkdir -p /t/host /t/u /t/w
/bin/busybox mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose host /t/host || { echo "SYSTEMD-FAIL: 9p"; /bin/busybox poweroff -f; }
n=/newroot
/bin/busybox mount -t overlay -o lowerdir=/t/host$guest_root,upperdir=/t/u,workdir=/t/w root \$n || { echo "SYSTEMD-FAIL: overlay /"; /bin/busybox poweroff -f; }
/bin/busybox mkdir -p \$n/host
/bin/busybox mount -o move /t/host \$n/host || { echo "SYSTEMD-FAIL: moving 9p to /host"; /bin/busybox poweroff -f; }
/bin/busybox cp -a /etc-stage/. \$n/etc/
printf '0123456789abcdef0123456789abcdef\n' >\$n/etc/machine-id
INIT
else
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
INIT
fi
# Both: systemd's generators (fstab, getty, sysv scripts, gpt-auto, ...) run at boot and at
# every daemon-reload, of which the maintainer scripts do several per apt-get run; none of
# them concerns the package (no fstab, no getty in the test's target, no init scripts of
# ours), and under TCG they take most of a reload's ~5 s. They are masked as systemd
# documents it: a link to /dev/null of the same name in /etc/systemd/system-generators.
cat >>"$root/init" <<INIT
/bin/busybox mkdir -p \$n/etc/systemd/system-generators
for g in \$n/usr/lib/systemd/system-generators/*; do /bin/busybox ln -sf /dev/null \$n/etc/systemd/system-generators/\${g##*/}; done
/bin/busybox umount /proc /sys /dev
exec /bin/busybox switch_root \$n /lib/systemd/systemd
INIT
. "$top/Tests/vm/systemd/boot.sh"
systemd_boot 1200 1536 80
echo "$tag: passed in $(($(date +%s) - start)) s ($pv, upgraded to $nv)"
