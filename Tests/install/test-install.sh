#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# test-install: `make install` into a temporary DESTDIR installs exactly the
# expected files with the expected content, the binaries run without the Swift
# toolchain's runtime, and `make uninstall` removes every one of them; an
# operator's modified configuration survives both a reinstall and an uninstall.
set -euo pipefail
shopt -s nullglob
cd "$(dirname "$0")/../.."

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "test-install: FAIL: $*" >&2; exit 1; }
mk() { make --no-print-directory -s "$@" >"$tmp/make.log" 2>&1 || { cat "$tmp/make.log" >&2; fail "make $*"; }; }

# What install must produce for PREFIX=/usr/local, derived from the tree so a
# new guide, example or completion file is expected without editing this test.
expected() {
  local p=usr/local
  printf '%s\n' \
    $p/sbin/actiond $p/bin/actionctl $p/sbin/actiond-mqtt \
    $p/lib/systemd/system/actiond.service $p/lib/systemd/system/actiond.socket \
    $p/lib/systemd/user/actiond-notify.service \
    $p/lib/systemd/system/actiond-mqtt.service \
    $p/lib/sysusers.d/actiond.conf $p/lib/udev/rules.d/70-actiond.rules \
    $p/share/man/man8/actiond.8 $p/share/man/man1/actionctl.1 $p/share/man/man5/actiond.conf.5 \
    $p/share/man/man8/actiond-mqtt.8 \
    etc/actiond/actiond.json
  [ -f completion/actionctl.bash ] && echo $p/share/bash-completion/completions/actionctl
  for f in docs/*.md docs/*.png; do echo "$p/share/doc/actiond/${f#docs/}"; done
  echo "$p/share/doc/actiond/LICENSE"
  find examples -type f | sed "s|^|$p/share/doc/actiond/|"
  for f in examples/bin/*; do echo "$p/lib/actiond/${f##*/}"; done
}
listing() { (cd "$1" && find . -mindepth 1 ! -type d | sed 's|^\./||' | sort); }

# 1. Install into an empty DESTDIR.
root=$tmp/root
mk install DESTDIR="$root"
diff -u <(expected | sort) <(listing "$root") || fail "installed file list differs (- expected, + installed)"
[ -d "$root/etc/actiond/controls.d" ] || fail "no /etc/actiond/controls.d"
echo "test-install: $(listing "$root" | wc -l) files installed as expected"

# 2. What the files say.
grep -qx 'ExecStart=/usr/local/sbin/actiond' "$root/usr/local/lib/systemd/system/actiond.service" \
  || fail "actiond.service does not start /usr/local/sbin/actiond"
grep -qx 'ExecStart=/usr/local/bin/actionctl watch --notify' "$root/usr/local/lib/systemd/user/actiond-notify.service" \
  || fail "the user unit actiond-notify.service does not start /usr/local/bin/actionctl watch --notify"
cmp -s examples/actiond.json "$root/etc/actiond/actiond.json" || fail "default configuration differs from examples/actiond.json"
grep -qx 'ExecStart=/usr/local/sbin/actiond-mqtt' "$root/usr/local/lib/systemd/system/actiond-mqtt.service" \
  || fail "actiond-mqtt.service does not start /usr/local/sbin/actiond-mqtt"
for f in usr/local/sbin/actiond usr/local/bin/actionctl usr/local/sbin/actiond-mqtt; do
  [ "$(stat -c %a "$root/$f")" = 755 ] || fail "$f is not mode 755"
  # Static Swift runtime: nothing from the toolchain may be needed at run time.
  if ldd "$root/$f" | grep -E 'libswift|libFoundation|libdispatch|not found'; then fail "$f needs the Swift runtime"; fi
done
version=$(sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/ActiondCore/Foundation/Version.swift)
"$root/usr/local/sbin/actiond" --version | grep -qF "$version" || fail "installed actiond --version does not print $version"
for f in etc/actiond/actiond.json usr/local/lib/udev/rules.d/70-actiond.rules usr/local/share/man/man8/actiond.8; do
  [ "$(stat -c %a "$root/$f")" = 644 ] || fail "$f is not mode 644"
done
# The example controls' helpers are installed, executable, where their argv name them.
for f in examples/controls.d/*.json; do
  { grep -o '"/usr/local/lib/actiond/[^"]*"' "$f" || true; } | tr -d '"' | while read -r helper; do
    [ -x "$root$helper" ] || fail "$f runs $helper, which is not installed executable"
  done
done

# The installed client accepts the installed configuration (the daemon's own loader).
"$root/usr/local/bin/actionctl" check-config "$root/etc/actiond/actiond.json" >"$tmp/check.log" 2>&1 \
  || { cat "$tmp/check.log" >&2; fail "actionctl check-config rejects the installed actiond.json"; }
"$root/usr/local/sbin/actiond" --check-config "$root/etc/actiond/actiond.json" >"$tmp/check.log" 2>&1 \
  || { cat "$tmp/check.log" >&2; fail "actiond --check-config rejects the installed actiond.json"; }
# ...and it is the embedded default configuration, below its header comment, so
# installing it changes nothing until the operator edits it.
embedded=$(sed -n '/static let text = """/,/^    """/p' Sources/ActiondCore/Config/DefaultConfiguration.swift \
  | sed '1,2d;$d' | sed 's/^    //')
shipped=$(sed '/^\/\//d' examples/actiond.json)
[ -n "$embedded" ] && [ "$embedded" = "$shipped" ] \
  || fail "examples/actiond.json is not DefaultConfiguration.text: $(diff <(echo "$embedded") <(echo "$shipped") | head -5)"

# 3. PREFIX=/usr (a distribution package): the unit follows the prefix.
mk install-data DESTDIR="$tmp/usr-root" PREFIX=/usr
grep -qx 'ExecStart=/usr/sbin/actiond' "$tmp/usr-root/usr/lib/systemd/system/actiond.service" \
  || fail "with PREFIX=/usr, actiond.service does not start /usr/sbin/actiond"
grep -qx 'ExecStart=/usr/bin/actionctl watch --notify' "$tmp/usr-root/usr/lib/systemd/user/actiond-notify.service" \
  || fail "with PREFIX=/usr, actiond-notify.service does not start /usr/bin/actionctl"
grep -qx 'ExecStart=/usr/sbin/actiond-mqtt' "$tmp/usr-root/usr/lib/systemd/system/actiond-mqtt.service" \
  && grep -qx 'Documentation=file:/usr/share/doc/actiond/home-assistant.md' "$tmp/usr-root/usr/lib/systemd/system/actiond-mqtt.service" \
  || fail "with PREFIX=/usr, actiond-mqtt.service does not follow the prefix"
[ -f "$tmp/usr-root/usr/lib/udev/rules.d/70-actiond.rules" ] || fail "with PREFIX=/usr, no /usr/lib/udev/rules.d/70-actiond.rules"
[ -f "$tmp/usr-root/etc/actiond/actiond.json" ] || fail "with PREFIX=/usr, the configuration is not in /etc"
for f in "$tmp"/usr-root/usr/share/doc/actiond/examples/controls.d/*.json; do
  if grep -q '/usr/local/' "$f"; then fail "with PREFIX=/usr, $f still names /usr/local"; fi
  { grep -o '"/usr/lib/actiond/[^"]*"' "$f" || true; } | tr -d '"' | while read -r helper; do
    [ -x "$tmp/usr-root$helper" ] || fail "with PREFIX=/usr, $f runs $helper, which is not installed"
  done
done

# 4. Uninstall leaves no file and no directory of ours.
mk uninstall DESTDIR="$root"
left=$(listing "$root")
[ -z "$left" ] || fail "files left after uninstall: $left"
ours=$(cd "$root" && find . -depth -type d -name '*actiond*')
[ -z "$ours" ] || fail "directories left after uninstall: $ours"
echo "test-install: uninstall removed everything"

# 5. A modified configuration is neither overwritten nor removed.
mk install DESTDIR="$root"
echo '// edited by the operator' >>"$root/etc/actiond/actiond.json"
mk install DESTDIR="$root"
grep -q 'edited by the operator' "$root/etc/actiond/actiond.json" || fail "reinstall overwrote the configuration"
mk uninstall DESTDIR="$root"
grep -q 'edited by the operator' "$root/etc/actiond/actiond.json" || fail "uninstall removed the modified configuration"
[ "$(listing "$root")" = etc/actiond/actiond.json ] || fail "uninstall left more than the modified configuration: $(listing "$root")"
echo "test-install: a modified configuration survives reinstall and uninstall"
echo "test-install: passed"
