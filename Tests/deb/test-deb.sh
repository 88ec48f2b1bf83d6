#!/usr/bin/env bash
# test-deb: what `make deb` built. The package's exact file list (derived from the
# tree, so a new guide or example is expected without editing this test) at Debian's
# paths, modes, /etc/actiond/actiond.json as the only conffile, the control fields
# (the version of Version.swift; Depends from dh_shlibdeps with libevdev2 and
# libudev1 and no Swift or C++ runtime), the units and examples naming /usr paths,
# the maintainer scripts doing what debian/rules promises, the binaries running,
# and lintian: no error and no warning, every override with a reason.
# Usage: test-deb.sh PATH/actiond_VERSION_ARCH.deb
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/../.."
deb=${1:?usage: test-deb.sh PATH/actiond_VERSION_ARCH.deb}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-deb: FAIL: $*" >&2; exit 1; }
[ -f "$deb" ] || fail "no $deb"

# 1. Control fields.
version=$(sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/ActiondCore/Foundation/Version.swift)
field() { dpkg-deb -f "$deb" "$1"; }
[ "$(field Package)" = actiond ] || fail "Package is $(field Package)"
[ "$(field Version)" = "$version" ] || fail "Version is $(field Version), Version.swift says $version"
[ "$(dpkg-parsechangelog -S Version)" = "$version" ] || fail "debian/changelog is at $(dpkg-parsechangelog -S Version), Version.swift at $version"
[ "$(field Architecture)" = "$(dpkg --print-architecture)" ] || fail "Architecture is $(field Architecture)"
depends=$(field Depends)
for lib in libevdev2 libudev1 libc6; do
  grep -qE "(^|, )$lib( |,|$)" <<<"$depends" || fail "Depends lacks $lib: $depends"
done
if grep -qiE 'swift|libstdc\+\+' <<<"$depends"; then fail "Depends names a Swift or C++ runtime (not linked statically?): $depends"; fi
grep -q 'systemd-sysusers' <<<"$depends" || fail "Depends lacks dh_installsysusers' systemd-sysusers: $depends"
echo "test-deb: actiond $version, Depends: $depends"

# 2. The exact file list (docs and man pages compressed as dh_compress decides, so
# .gz is stripped from those before comparing) and modes.
expected() {
  local d=usr/share/doc/actiond
  printf '%s\n' usr/sbin/actiond usr/bin/actionctl \
    lib/systemd/system/actiond.service lib/systemd/system/actiond.socket \
    lib/udev/rules.d/70-actiond.rules usr/lib/sysusers.d/actiond.conf \
    usr/share/man/man8/actiond.8 usr/share/man/man1/actionctl.1 usr/share/man/man5/actiond.conf.5 \
    etc/actiond/actiond.json $d/copyright $d/changelog
  [ -f completion/actionctl.bash ] && echo usr/share/bash-completion/completions/actionctl
  for f in docs/*.md; do echo "$d/${f#docs/}"; done
  find examples -type f | sed "s|^|$d/|"
  for f in examples/bin/*; do echo "usr/lib/actiond/${f##*/}"; done
}
dpkg-deb -c "$deb" >"$tmp/tar"
awk '$1 !~ /^d/ { print $1, $6 }' "$tmp/tar" | sed 's| \./| |' >"$tmp/contents"
cut -d' ' -f2 "$tmp/contents" | sed -E 's#^(usr/share/(doc/actiond/[^/]*|man/.*))\.gz$#\1#' | sort >"$tmp/listing"
diff -u <(expected | sort) "$tmp/listing" || fail "packaged file list differs (- expected, + packaged)"
grep -q ' \./etc/actiond/controls\.d/$' "$tmp/tar" || fail "no /etc/actiond/controls.d directory"
while read -r mode path; do
  case $path in
    usr/sbin/* | usr/bin/* | usr/lib/actiond/* | usr/share/doc/actiond/examples/bin/*) want=-rwxr-xr-x ;;
    *) want=-rw-r--r-- ;;
  esac
  [ "$mode" = "$want" ] || fail "$path is $mode, expected $want"
done <"$tmp/contents"
echo "test-deb: $(wc -l <"$tmp/listing") files at the expected paths and modes"

# 3. Conffiles and the maintainer scripts.
dpkg-deb -e "$deb" "$tmp/control"
[ "$(cat "$tmp/control/conffiles")" = /etc/actiond/actiond.json ] \
  || fail "conffiles is not exactly /etc/actiond/actiond.json: $(cat "$tmp/control/conffiles")"
for s in postinst prerm postrm; do
  [ -x "$tmp/control/$s" ] || fail "no executable $s"
  sh -n "$tmp/control/$s" || fail "$s is not valid sh"
done
[ ! -e "$tmp/control/preinst" ] || fail "a preinst (stop before upgrade?): $(cat "$tmp/control/preinst")"
# line numbers of what postinst does, in order
at() { grep -nE -- "$1" "$tmp/control/postinst" | head -1 | cut -d: -f1; }
sysusers=$(at '^[[:space:]]*systemd-sysusers .*actiond\.conf$')
restart=$(at "deb-systemd-invoke try-restart 'actiond.service'")
start=$(at "deb-systemd-invoke start 'actiond.socket'")
[ -n "$sysusers" ] || fail "postinst does not run systemd-sysusers actiond.conf"
[ -n "$start" ] || fail "postinst does not start actiond.socket"
[ "$sysusers" -lt "$start" ] || fail "postinst starts the socket (line $start) before creating the user (line $sysusers)"
[ -n "$restart" ] || fail "postinst does not try-restart actiond.service on upgrade"
grep -qF "deb-systemd-helper enable 'actiond.socket'" "$tmp/control/postinst" || fail "postinst does not enable actiond.socket"
if grep -qE "invoke (start|restart) .*actiond\.service" "$tmp/control/postinst"; then fail "postinst starts actiond.service on install"; fi
if grep -qF "was-enabled defaults to true" <(grep -B3 -A3 "enable 'actiond.service'" "$tmp/control/postinst"); then
  fail "postinst enables actiond.service on install"
fi
grep -qF "[ \"\$1\" = remove ]" "$tmp/control/prerm" && grep -qF "stop 'actiond.socket'" "$tmp/control/prerm" \
  || fail "prerm does not stop actiond.socket on remove"
for what in 'rm -rf /etc/actiond /var/lib/actiond /run/actiond' "deb-systemd-helper purge 'actiond.socket'"; do
  grep -qF "$what" "$tmp/control/postrm" || fail "postrm lacks: $what"
done
# The system user stays on purge (Debian's way: files it owns elsewhere keep a known owner).
if grep -qE '^[^#]*(userdel|groupdel|deluser|delgroup)' "$tmp/control/postrm"; then fail "postrm removes the system user"; fi
echo "test-deb: conffiles, postinst (user before socket, socket enabled and started, service try-restarted), prerm, postrm (purge) as promised"

# 4. The files say /usr, not /usr/local; the binaries run and print the version.
dpkg-deb -x "$deb" "$tmp/root"
r=$tmp/root
grep -qx 'ExecStart=/usr/sbin/actiond' "$r/lib/systemd/system/actiond.service" || fail "actiond.service does not start /usr/sbin/actiond"
for u in actiond.service actiond.socket; do
  grep -qx 'ConditionPathExists=/etc/actiond/actiond.json' "$r/lib/systemd/system/$u" || fail "$u starts without a configuration"
done
if grep -l '/usr/local' "$r/lib/systemd/system/"* "$r/lib/udev/rules.d/"* "$r/usr/lib/sysusers.d/"* "$r"/usr/share/doc/actiond/examples/controls.d/*.json; then
  fail "these files name /usr/local"
fi
cmp -s examples/actiond.json "$r/etc/actiond/actiond.json" || fail "/etc/actiond/actiond.json is not examples/actiond.json"
"$r/usr/sbin/actiond" --version | grep -qF "$version" || fail "actiond --version does not print $version"
"$r/usr/bin/actionctl" check-config "$r/etc/actiond/actiond.json" >"$tmp/check.log" 2>&1 || { cat "$tmp/check.log"; fail "actionctl check-config rejects the packaged configuration"; }
if ldd "$r/usr/sbin/actiond" "$r/usr/bin/actionctl" | grep -E 'libswift|libstdc\+\+|not found'; then fail "a binary needs the Swift or C++ runtime"; fi
echo "test-deb: units and examples name /usr paths; actiond --version: $("$r/usr/sbin/actiond" --version)"

# 4b. Every path docs/operations.md names for the package ("The Debian package") is in it.
n=0
for p in $(sed -n '/^### The Debian package/,/^### /p' docs/operations.md | grep -o '`/[^` ]*`' | tr -d '`'); do
  for q in $(eval "echo $p"); do  # brace forms: /lib/systemd/system/actiond.{service,socket}
    grep -qE " \.${q%/}/?\$" "$tmp/tar" || fail "docs/operations.md names $q, which the package does not hold"
    n=$((n + 1))
  done
done
[ "$n" -ge 8 ] || fail "found only $n paths in docs/operations.md's package section"
echo "test-deb: the $n paths docs/operations.md names for the package are in it"

# 5. lintian: nothing at warning level or above; each override has a reason.
for o in debian/*.lintian-overrides debian/source/lintian-overrid[e]s; do
  awk -v f="$o" '/^[^#[:space:]]/ && prev !~ /^#/ { print f ": override without a reason: " $0; bad=1 } { prev=$0 } END { exit bad }' "$o" \
    || fail "every lintian override needs a comment line above it saying why"
done
changes=${deb%.deb}.changes
lintian --fail-on error,warning "$changes" >"$tmp/lintian.log" 2>&1 \
  || { cat "$tmp/lintian.log"; fail "lintian reports errors or warnings"; }
grep -E '^[EW]:' "$tmp/lintian.log" && fail "lintian reports errors or warnings"
echo "test-deb: lintian: no errors, no warnings ($(grep -c '^[IPX]:' "$tmp/lintian.log" || true) info/pedantic tags, $(grep -c '^O:' "$tmp/lintian.log" || true) overridden)"
echo "test-deb: passed"
