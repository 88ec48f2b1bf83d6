#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-deb: what `make deb` built, the packages actiond and actiond-mqtt. Each one's
# exact file list (derived from the tree, so a new guide or example is expected without
# editing this test) at Debian's paths, modes, /etc/actiond/actiond.json as the only
# conffile (actiond-mqtt has none), the control fields (the version of Version.swift;
# Depends from dh_shlibdeps: libevdev2 and libudev1 for actiond, libmosquitto1 and
# actiond of the same version for actiond-mqtt, no Swift or C++ runtime), the units and
# examples naming /usr paths, the maintainer scripts doing what debian/rules promises
# (no unit of actiond-mqtt and no user unit enabled on install), the binaries running,
# and lintian on both: no error and no warning, every override with a reason.
# Usage: test-deb.sh PATH/actiond_VERSION_ARCH.deb [PATH/actiond-mqtt_VERSION_ARCH.deb]
# (the second defaults to the first's sibling)
# Environment: DEB_ARCH, the packages' architecture (default: dpkg-architecture's host);
# DEB_RUN, a command prefix that runs the packaged binaries when they are not this machine's
# (make test-deb ARCH=arm64: qemu-aarch64 -L SYSROOT, mk/arm64.mk).
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/../.."
deb=${1:?usage: test-deb.sh PATH/actiond_VERSION_ARCH.deb [PATH/actiond-mqtt_VERSION_ARCH.deb]}
mqttdeb=${2:-$(dirname "$deb")/actiond-mqtt_$(basename "${deb#*/actiond_}")}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-deb: FAIL: $*" >&2; exit 1; }
[ -f "$deb" ] || fail "no $deb"
[ -f "$mqttdeb" ] || fail "no $mqttdeb"

# 1. Control fields.
version=$(sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/ActiondCore/Foundation/Version.swift)
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = actiond ] || fail "Package is $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version is $(field Version), Version.swift says $version"
[ "$(dpkg-parsechangelog -S Version)" = "$version" ] || fail "debian/changelog is at $(dpkg-parsechangelog -S Version), Version.swift at $version"
arch=${DEB_ARCH:-$(dpkg-architecture -qDEB_HOST_ARCH)}
run=(${DEB_RUN:-})
# Where the units and the udev rule are: /lib on Debian 12, /usr/lib where debhelper has
# dh_movetousr (Debian 13; debian/rules says why).
lib=lib
if command -v dh_movetousr >/dev/null; then lib=usr/lib; fi
[ "$(field Architecture)" = "$arch" ] || fail "Architecture is $(field Architecture)"
depends=$(field Depends)
for so in libevdev2 libudev1 libc6; do
  grep -qE "(^|, )$so( |,|$)" <<<"$depends" || fail "Depends lacks $so: $depends"
done
if grep -qiE 'swift|libstdc\+\+' <<<"$depends"; then fail "Depends names a Swift or C++ runtime (not linked statically?): $depends"; fi
grep -q 'systemd-sysusers' <<<"$depends" || fail "Depends lacks dh_installsysusers' systemd-sysusers: $depends"
grep -qE '(^|, )libnotify-bin( |,|$)' <<<"$(field Suggests)" || fail "Suggests lacks libnotify-bin (notify-send, for actiond-notify.service): $(field Suggests)"
echo "test-deb: actiond $version, Depends: $depends; Suggests: $(field Suggests)"
# No architecture is hard-coded: debian/control's Architecture: lines (the ones Swift's
# Linux toolchains exist for) are the only place one is named; mk/deb.mk asks
# dpkg-architecture (docs/operations.md, "arm64").
# (the sources only: git ls-files leaves out what a build wrote into debian/)
srcs=$(git ls-files -co --exclude-standard debian mk/deb.mk mk/static-libstdc++)
grep -qx debian/rules <<<"$srcs" || fail "git ls-files does not list debian/rules (not a git checkout?)"
named=$(xargs grep -nHE 'amd64|arm64|x86[_-]64|aarch64|i386|armhf|armel|ppc64|s390x|riscv64' <<<"$srcs" \
  | grep -vxE 'debian/control:[0-9]+:Architecture: amd64 arm64' || true)
[ -z "$named" ] || fail "an architecture is named outside debian/control's Architecture: lines: $named"
[ "$(grep -c '^Architecture: amd64 arm64$' debian/control)" = 2 ] || fail "debian/control: both packages must be Architecture: amd64 arm64"
echo "test-deb: built for $arch (dpkg-architecture); no architecture named in debian/ or mk/deb.mk but debian/control's Architecture: amd64 arm64"
mfield() { dpkg-deb -f "$mqttdeb" "$1"; }
[ "$(mfield Package)" = actiond-mqtt ] || fail "$mqttdeb: Package is $(mfield Package)"
[ "$(mfield Version)" = "$version" ] || fail "actiond-mqtt's Version is $(mfield Version), Version.swift says $version"
[ "$(mfield Architecture)" = "$arch" ] || fail "actiond-mqtt's Architecture is $(mfield Architecture)"
mdepends=$(mfield Depends)
for so in libmosquitto1 libc6; do
  grep -qE "(^|, )$so( |,|$)" <<<"$mdepends" || fail "actiond-mqtt's Depends lacks $so: $mdepends"
done
grep -qF "actiond (= $version)" <<<"$mdepends" || fail "actiond-mqtt does not depend on actiond (= $version) (its user, its socket): $mdepends"
if grep -qiE 'swift|libstdc\+\+' <<<"$mdepends"; then fail "actiond-mqtt's Depends names a Swift or C++ runtime: $mdepends"; fi
echo "test-deb: actiond-mqtt $version, Depends: $mdepends"

# 2. The exact file lists (docs and man pages compressed as dh_compress decides, so
# .gz is stripped from those before comparing) and modes. The guides are all in
# /usr/share/doc/actiond/; those debian/actiond-mqtt.install names are the bridge's,
# the rest (every other docs/*.md and docs/*.png) actiond's.
d=usr/share/doc/actiond
mqtt_guides=$(sed -n "s|^$d/||p" debian/actiond-mqtt.install | sort)
grep -qx home-assistant.md <<<"$mqtt_guides" || fail "debian/actiond-mqtt.install does not give the bridge its guide home-assistant.md"
for g in $mqtt_guides; do [ -f "docs/$g" ] || fail "debian/actiond-mqtt.install names $d/$g, which is no docs/ file"; done
expected() {
  printf '%s\n' usr/sbin/actiond usr/bin/actionctl \
    $lib/systemd/system/actiond.service $lib/systemd/system/actiond.socket \
    usr/lib/systemd/user/actiond-notify.service \
    $lib/udev/rules.d/70-actiond.rules usr/lib/sysusers.d/actiond.conf \
    usr/share/man/man8/actiond.8 usr/share/man/man1/actionctl.1 usr/share/man/man5/actiond.conf.5 \
    etc/actiond/actiond.json $d/copyright $d/changelog
  [ -f completion/actionctl.bash ] && echo usr/share/bash-completion/completions/actionctl
  [ -f debian/actiond.lintian-overrides ] && echo usr/share/lintian/overrides/actiond
  for f in docs/*.md docs/*.png; do grep -qxF "${f#docs/}" <<<"$mqtt_guides" || echo "$d/${f#docs/}"; done
  find examples -type f | sed "s|^|$d/|"
  for f in examples/bin/*; do echo "usr/lib/actiond/${f##*/}"; done
}
expected_mqtt() {
  printf '%s\n' usr/sbin/actiond-mqtt $lib/systemd/system/actiond-mqtt.service usr/share/man/man8/actiond-mqtt.8 \
    usr/share/doc/actiond-mqtt/copyright usr/share/doc/actiond-mqtt/changelog
  for g in $mqtt_guides; do echo "$d/$g"; done
  [ -f debian/actiond-mqtt.lintian-overrides ] && echo usr/share/lintian/overrides/actiond-mqtt
  return 0
}
# listing PACKAGE.deb NAME: tar listing, "mode path" lines and the sorted path list into $tmp/NAME.*
listing() {
  dpkg-deb -c "$1" >"$tmp/$2.tar"
  awk '$1 !~ /^d/ { print $1, $6 }' "$tmp/$2.tar" | sed 's| \./| |' >"$tmp/$2.contents"
  cut -d' ' -f2 "$tmp/$2.contents" | sed -E 's#^(usr/share/(doc/actiond(-mqtt)?/[^/]*|man/.*))\.gz$#\1#' | sort >"$tmp/$2.listing"
  while read -r mode path; do
    case $path in
      usr/sbin/* | usr/bin/* | usr/lib/actiond/* | usr/share/doc/actiond/examples/bin/*) want=-rwxr-xr-x ;;
      *) want=-rw-r--r-- ;;
    esac
    [ "$mode" = "$want" ] || fail "$2: $path is $mode, expected $want"
  done <"$tmp/$2.contents"
}
listing "$deb" actiond
listing "$mqttdeb" mqtt
diff -u <(expected | sort) "$tmp/actiond.listing" || fail "actiond's file list differs (- expected, + packaged)"
# The licence: each package's copyright is machine-readable (DEP-5) and puts every file
# under Apache-2.0, the licence of the LICENSE file at the top of the source.
head -3 LICENSE | grep -q 'Apache License' && grep -q '^ *Version 2.0, January 2004$' LICENSE \
  || fail "LICENSE is not the Apache License, Version 2.0"
for p in "$deb:actiond" "$mqttdeb:actiond-mqtt"; do
  copyright=$(dpkg-deb --fsys-tarfile "${p%%:*}" | tar -xOf - "./usr/share/doc/${p##*:}/copyright")
  grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' <<<"$copyright" \
    || fail "${p##*:}: copyright is not DEP-5"
  awk '/^Files: \*$/ { f = 1 } f && /^License:/ { print; exit }' <<<"$copyright" | grep -qx 'License: Apache-2.0' \
    || fail "${p##*:}: copyright does not put Files: * under License: Apache-2.0"
done
echo "test-deb: both packages' copyright (DEP-5): Files: * under Apache-2.0"
diff -u <(expected_mqtt | sort) "$tmp/mqtt.listing" || fail "actiond-mqtt's file list differs (- expected, + packaged)"
grep -q ' \./etc/actiond/controls\.d/$' "$tmp/actiond.tar" || fail "no /etc/actiond/controls.d directory"
if grep -q ' \./etc/' "$tmp/mqtt.tar"; then fail "actiond-mqtt ships something in /etc (its files there are the operator's): $(grep ' \./etc/' "$tmp/mqtt.tar")"; fi
# The unit's Documentation= names the guide as it is, not a .gz of it.
grep -q " \./$d/home-assistant\.md\$" "$tmp/mqtt.tar" || fail "$d/home-assistant.md is compressed (actiond-mqtt.service's Documentation= names it)"
echo "test-deb: actiond: $(wc -l <"$tmp/actiond.listing") files, actiond-mqtt: $(wc -l <"$tmp/mqtt.listing") files, at the expected paths and modes"

# 3. Conffiles and the maintainer scripts.
dpkg-deb -e "$deb" "$tmp/control"
dpkg-deb -e "$mqttdeb" "$tmp/mcontrol"
[ "$(cat "$tmp/control/conffiles")" = /etc/actiond/actiond.json ] \
  || fail "conffiles is not exactly /etc/actiond/actiond.json: $(cat "$tmp/control/conffiles")"
for s in postinst prerm postrm; do
  [ -x "$tmp/control/$s" ] || fail "no executable $s"
  sh -n "$tmp/control/$s" || fail "$s is not valid sh"
done
[ ! -e "$tmp/control/preinst" ] || fail "a preinst (stop before upgrade?): $(cat "$tmp/control/preinst")"
# line numbers of what postinst does, in order
at() { grep -nE -- "$1" "$tmp/control/postinst" | head -1 | cut -d: -f1; }
# enabled_on_install POSTINST ENABLE: whether the deb-systemd-helper line ENABLE is in the
# branch debhelper runs on a first install (the one beside its "was-enabled defaults to true").
enabled_on_install() { grep -qF "was-enabled defaults to true" <(grep -B6 -A3 -- "$2" "$1"); }
sysusers=$(at '^[[:space:]]*systemd-sysusers .*actiond\.conf$')
restart=$(at "deb-systemd-invoke try-restart 'actiond.service'")
start=$(at "deb-systemd-invoke start 'actiond.socket'")
[ -n "$sysusers" ] || fail "postinst does not run systemd-sysusers actiond.conf"
[ -n "$start" ] || fail "postinst does not start actiond.socket"
[ "$sysusers" -lt "$start" ] || fail "postinst starts the socket (line $start) before creating the user (line $sysusers)"
[ -n "$restart" ] || fail "postinst does not try-restart actiond.service on upgrade"
grep -qF "deb-systemd-helper enable 'actiond.socket'" "$tmp/control/postinst" || fail "postinst does not enable actiond.socket"
if grep -qE "invoke (start|restart) .*actiond\.service" "$tmp/control/postinst"; then fail "postinst starts actiond.service on install"; fi
if enabled_on_install "$tmp/control/postinst" "enable 'actiond.service'"; then
  fail "postinst enables actiond.service on install"
fi
grep -qF "[ \"\$1\" = remove ]" "$tmp/control/prerm" && grep -qF "stop 'actiond.socket'" "$tmp/control/prerm" \
  || fail "prerm does not stop actiond.socket on remove"
for what in 'rm -rf /etc/actiond /var/lib/actiond /run/actiond' "deb-systemd-helper purge 'actiond.socket'"; do
  grep -qF "$what" "$tmp/control/postrm" || fail "postrm lacks: $what"
done
# The system user stays on purge (Debian's way: files it owns elsewhere keep a known owner).
if grep -qE '^[^#]*(userdel|groupdel|deluser|delgroup)' "$tmp/control/postrm"; then fail "postrm removes the system user"; fi
# The user unit: never enabled for every user on install; purge forgets what was enabled.
grep -qF 'actiond-notify.service' "$tmp/control/postrm" || fail "postrm does not purge the user unit actiond-notify.service's state"
# (--user enable stays only for re-enabling, on upgrade, what an administrator enabled)
grep -qF "deb-systemd-helper --user debian-installed 'actiond-notify.service'" "$tmp/control/postinst" \
  || fail "postinst does not handle the user unit actiond-notify.service with --no-enable"
if enabled_on_install "$tmp/control/postinst" "--user enable 'actiond-notify.service'"; then
  fail "postinst enables the user unit actiond-notify.service for every user on install"
fi
echo "test-deb: actiond: conffiles, postinst (user before socket, socket enabled and started, service try-restarted, user unit not enabled), prerm, postrm (purge) as promised"

m=$tmp/mcontrol
[ ! -s "$m/conffiles" ] || fail "actiond-mqtt has conffiles: $(cat "$m/conffiles")"
for s in postinst prerm postrm; do
  [ -x "$m/$s" ] || fail "actiond-mqtt: no executable $s"
  sh -n "$m/$s" || fail "actiond-mqtt: $s is not valid sh"
done
[ ! -e "$m/preinst" ] || fail "actiond-mqtt has a preinst: $(cat "$m/preinst")"
grep -qF "deb-systemd-invoke try-restart 'actiond-mqtt.service'" "$m/postinst" || fail "actiond-mqtt's postinst does not try-restart actiond-mqtt.service on upgrade"
if grep -qE "invoke (start|restart) .*actiond-mqtt\.service" "$m/postinst"; then fail "actiond-mqtt's postinst starts actiond-mqtt.service"; fi
if enabled_on_install "$m/postinst" "enable 'actiond-mqtt.service'"; then
  fail "actiond-mqtt's postinst enables actiond-mqtt.service on install"
fi
grep -qF "[ \"\$1\" = remove ]" "$m/prerm" && grep -qF "stop 'actiond-mqtt.service'" "$m/prerm" \
  || fail "actiond-mqtt's prerm does not stop actiond-mqtt.service on remove"
for what in 'rm -f /etc/actiond/mqtt.json5 /etc/actiond/mqtt-password' "deb-systemd-helper purge 'actiond-mqtt.service'"; do
  grep -qF "$what" "$m/postrm" || fail "actiond-mqtt's postrm lacks: $what"
done
# Purging the bridge leaves actiond's configuration directory alone.
if grep -qE '^[^#]*(rm -r[f]* /etc/actiond( |/?$|/\*)|rmdir .*/etc/actiond|actiond\.json|controls\.d)' "$m/postrm"; then
  fail "actiond-mqtt's postrm touches actiond's /etc/actiond"
fi
if grep -qE '^[^#]*(userdel|groupdel|deluser|delgroup|/var/lib/actiond)' "$m/postrm"; then fail "actiond-mqtt's postrm removes actiond's user or state"; fi
echo "test-deb: actiond-mqtt: no conffiles, postinst (service neither enabled nor started, try-restarted on upgrade), prerm (stop on remove), postrm (purge: its own two files only)"

# 4. The files say /usr, not /usr/local; the binaries run and print the version.
dpkg-deb -x "$deb" "$tmp/root"
dpkg-deb -x "$mqttdeb" "$tmp/root"
r=$tmp/root
grep -qx 'ExecStart=/usr/sbin/actiond' "$r/$lib/systemd/system/actiond.service" || fail "actiond.service does not start /usr/sbin/actiond"
for u in actiond.service actiond.socket; do
  grep -qx 'ConditionPathExists=/etc/actiond/actiond.json' "$r/$lib/systemd/system/$u" || fail "$u starts without a configuration"
done
if grep -l '/usr/local' "$r/$lib/systemd/system/"* "$r/$lib/udev/rules.d/"* "$r/usr/lib/sysusers.d/"* "$r"/usr/share/doc/actiond/examples/controls.d/*.json; then
  fail "these files name /usr/local"
fi
cmp -s examples/actiond.json "$r/etc/actiond/actiond.json" || fail "/etc/actiond/actiond.json is not examples/actiond.json"
"${run[@]}" "$r/usr/sbin/actiond" --version | grep -qF "$version" || fail "actiond --version does not print $version"
"${run[@]}" "$r/usr/bin/actionctl" check-config "$r/etc/actiond/actiond.json" >"$tmp/check.log" 2>&1 || { cat "$tmp/check.log"; fail "actionctl check-config rejects the packaged configuration"; }
# (readelf, not ldd: it reads a binary of any architecture)
if readelf -d "$r/usr/sbin/actiond" "$r/usr/bin/actionctl" "$r/usr/sbin/actiond-mqtt" | grep -E 'NEEDED.*(libswift|libstdc\+\+)'; then fail "a binary needs the Swift or C++ runtime"; fi
# The C library each package promises is one its binaries load on: the newest GLIBC_ version
# they need, and 2.36 for GLIBC_ABI_DT_RELR (lld's packed relocations, Package.swift), which
# libc6's symbols file has no entry for, so dh_shlibdeps alone would promise less.
glibc_floor() {  # BINARY...: the oldest glibc (major.minor) that has every version they need
  readelf -V "$@" | sed -n 's/.*Name: GLIBC_\(ABI_DT_RELR\|[0-9][0-9.]*\) .*/\1/p' |
    sed 's/^ABI_DT_RELR$/2.36/' | sort -V | tail -1
}
promised_glibc() {  # DEPENDS: the version of its "libc6 (>= V)"
  grep -oE '(^|, )libc6 \(>= [0-9][^)]*\)' <<<"$1" | sed 's/.*>= \([^)]*\))/\1/' | sort -V | tail -1
}
for pkg in actiond actiond-mqtt; do
  if [ $pkg = actiond ]; then bins=("$r/usr/sbin/actiond" "$r/usr/bin/actionctl") d=$depends; else bins=("$r/usr/sbin/actiond-mqtt") d=$mdepends; fi
  need=$(glibc_floor "${bins[@]}")
  have=$(promised_glibc "$d")
  [ -n "$need" ] && [ -n "$have" ] || fail "$pkg: no glibc version found (needs '$need', Depends promises '$have')"
  [ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | tail -1)" = "$have" ] \
    || fail "$pkg's binaries need glibc $need, its Depends promises libc6 (>= $have): $d"
  echo "test-deb: $pkg's binaries need glibc $need, Depends promises libc6 (>= $have)"
done
if [ -z "${DEB_RUN:-}" ] && ldd "$r/usr/sbin/actiond" "$r/usr/bin/actionctl" "$r/usr/sbin/actiond-mqtt" | grep 'not found'; then fail "a binary needs a library this machine lacks"; fi
grep -qx 'ExecStart=/usr/bin/actionctl watch --notify' "$r/usr/lib/systemd/user/actiond-notify.service" \
  || fail "actiond-notify.service does not start /usr/bin/actionctl watch --notify"
mu=$r/$lib/systemd/system/actiond-mqtt.service
grep -qx 'ExecStart=/usr/sbin/actiond-mqtt' "$mu" || fail "actiond-mqtt.service does not start /usr/sbin/actiond-mqtt"
# Installed, not configured (no /etc/actiond/mqtt-password), and started anyway: it fails
# once and stays failed, no restart every RestartSec= (docs/operations.md; test-deb-systemd
# proves it under systemd).
grep -qx 'RestartPreventExitStatus=CREDENTIALS' "$mu" || fail "actiond-mqtt.service would retry a missing password file for good (no RestartPreventExitStatus=CREDENTIALS)"
doc=$(sed -n 's|^Documentation=file:||p' "$mu")
[ "$doc" = /usr/share/doc/actiond/home-assistant.md ] && [ -f "$r$doc" ] || fail "actiond-mqtt.service's Documentation=file:$doc is not in the package"
if grep -l '/usr/local' "$mu" "$r/usr/lib/systemd/user/actiond-notify.service"; then fail "these files name /usr/local"; fi
"${run[@]}" "$r/usr/sbin/actiond-mqtt" --version | grep -qxF "actiond-mqtt $version" || fail "actiond-mqtt --version does not print $version"
# The configuration docs/home-assistant.md shows is accepted by the packaged bridge.
awk '/<!-- example: mqtt-config -->/ { on = 1; next } on && /```json5/ { inb = 1; next } inb && /```/ { exit } inb' \
  "$r$doc" >"$tmp/mqtt.json5"
[ -s "$tmp/mqtt.json5" ] || fail "no mqtt-config example in $doc"
"${run[@]}" "$r/usr/sbin/actiond-mqtt" --check-config --config "$tmp/mqtt.json5" >"$tmp/mcheck.log" 2>&1 \
  || { cat "$tmp/mcheck.log"; fail "the packaged actiond-mqtt rejects home-assistant.md's configuration"; }
echo "test-deb: units and examples name /usr paths; $("${run[@]}" "$r/usr/sbin/actiond" --version); $("${run[@]}" "$r/usr/sbin/actiond-mqtt" --version) accepts the guide's mqtt.json5"

# 4b. Every path docs/operations.md names for the package ("The Debian package") is in it.
n=0
for p in $(sed -n '/^### The Debian package/,/^### /p' docs/operations.md | grep -o '`/[^` ]*`' | tr -d '`'); do
  for q in $(eval "echo $p"); do  # brace forms: /lib/systemd/system/actiond.{service,socket}
    # /usr/lib/... is where a file of /lib/... is on a merged-/usr system (Debian 12 and 13).
    grep -qE " \.(${q%/}|${q#/usr})/?\$" "$tmp/actiond.tar" "$tmp/mqtt.tar" || fail "docs/operations.md names $q, which neither package holds"
    n=$((n + 1))
  done
done
[ "$n" -ge 8 ] || fail "found only $n paths in docs/operations.md's package section"
echo "test-deb: the $n paths docs/operations.md names for the packages are in them"

# 5. lintian: nothing at warning level or above; each override has a reason.
for o in debian/*.lintian-overrides debian/source/lintian-overrid[e]s; do
  awk -v f="$o" '/^[^#[:space:]]/ && prev !~ /^#/ { print f ": override without a reason: " $0; bad=1 } { prev=$0 } END { exit bad }' "$o" \
    || fail "every lintian override needs a comment line above it saying why"
done
# The .changes lists both packages (and their -dbgsym): lintian checks them all.
changes=${deb%.deb}.changes
for p in "$deb" "$mqttdeb"; do grep -qF " $(basename "$p")" "$changes" || fail "$changes does not list $(basename "$p")"; done
# --fail-on none: the exit status says only whether lintian ran; the tags are judged
# below (--show-overrides lists the overridden ones as O:, to count them).
lintian --show-overrides --fail-on none "$changes" >"$tmp/lintian.log" 2>&1 \
  || { cat "$tmp/lintian.log"; fail "lintian did not run"; }
grep -E '^[EW]:' "$tmp/lintian.log" && fail "lintian reports errors or warnings"
echo "test-deb: lintian: no errors, no warnings ($(grep -c '^[IPX]:' "$tmp/lintian.log" || true) info/pedantic tags, $(grep -c '^O:' "$tmp/lintian.log" || true) overridden)"
echo "test-deb: passed"
