#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cross-key: checks the key under which scripts/cross-arm64 keeps its arm64 builds
# (builds/KEY/, taken instead of compiling when the key matches: a key that missed an input
# would hand out executables of other sources). On a copy of the files git sees in this
# checkout, in a git repository of its own, against the prepared cache (read only):
#   - the same files give the same key (a cached build is found at all);
#   - a changed source file, a new untracked file, a renamed file each give another key;
#   - a file git ignores (.build/) does not change it (the build's own output);
#   - another checkout path gives another key (the debug information names the path);
#   - another sysroot package list, and (where the compiler is the compiler root's) another
#     swiftlang or pkgconf version, give another key (a copy of the cache's small files,
#     changed).
# Run by test-arm64 after the cross build (the cache must be prepared).
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "cross-key: FAIL: $*" >&2; exit 1; }

work=$(mktemp -d /tmp/actiond-cross-key.XXXXXX)
trap 'rm -rf "$work"' EXIT
copy() {
  mkdir -p "$1"
  git -C "$top" ls-files -z -co --exclude-standard | (cd "$top" && tar --null -T - -cf -) | tar -C "$1" -xf -
  git -C "$1" init -q
}
copy "$work/a"
key() { "$1/scripts/cross-arm64" build-key "$1"; }

k0=$(key "$work/a")
[[ $k0 =~ ^[0-9a-f]{32}$ ]] || die "no key for a git checkout: '$k0'"
[ "$(key "$work/a")" = "$k0" ] || die "the same files gave two keys"

src=$work/a/Sources/ActiondCore/Foundation/Version.swift
[ -f "$src" ] || die "no $src to change"
cp "$src" "$work/orig"
echo "// changed" >>"$src"
[ "$(key "$work/a")" != "$k0" ] || die "a changed source file kept the key"
cp "$work/orig" "$src"
[ "$(key "$work/a")" = "$k0" ] || die "the restored source file did not give the first key back"

echo "// new" >"$work/a/Sources/ActiondCore/Foundation/New.swift"
[ "$(key "$work/a")" != "$k0" ] || die "a new untracked source file kept the key"
rm "$work/a/Sources/ActiondCore/Foundation/New.swift"

mv "$src" "${src%.swift}2.swift"
[ "$(key "$work/a")" != "$k0" ] || die "a renamed source file kept the key"
mv "${src%.swift}2.swift" "$src"

mkdir -p "$work/a/.build"
echo junk >"$work/a/.build/junk"
[ "$(key "$work/a")" = "$k0" ] || die "a file under .build (ignored by git) changed the key"

copy "$work/b"
[ "$(key "$work/b")" != "$k0" ] || die "another checkout path kept the key"

# The sysroot's package list: a cache of the small files the key reads (the sysroot's
# .complete, sysroot-debs; the compiler root's dpkg status when the compiler is a root's),
# first as it is, then with one package's version changed.
eval "$("$top/scripts/cross-arm64" env)"
fake=$work/cache
mkdir -p "$fake/${CROSS_SYSROOT#"$CROSS_CACHE"/}"
cp "$CROSS_SYSROOT/.complete" "$fake/${CROSS_SYSROOT#"$CROSS_CACHE"/}/.complete"
cp "$CROSS_CACHE/sysroot-debs" "$fake/sysroot-debs"
if [ "$CROSS_COMPILER" = root ]; then
  mkdir -p "$fake/compiler/var/lib/dpkg"
  cp "$CROSS_CACHE/compiler/var/lib/dpkg/status" "$fake/compiler/var/lib/dpkg/status"
fi
f0=$(CROSS_CACHE=$fake key "$work/a")
[ "$(CROSS_CACHE=$fake key "$work/a")" = "$f0" ] || die "the same cache gave two keys"
grep -q '/libc6-dev_' "$fake/sysroot-debs" || die "no libc6-dev in $CROSS_CACHE/sysroot-debs"
sed -i 's|/libc6-dev_\([^_]*\)_|/libc6-dev_\1+other_|' "$fake/sysroot-debs"
[ "$(CROSS_CACHE=$fake key "$work/a")" != "$f0" ] || die "another sysroot package version kept the key"
# The compiler's version: only where it is the compiler root's (this machine's own
# swiftlang cannot be changed for a test).
if [ "$CROSS_COMPILER" = root ]; then
  f1=$(CROSS_CACHE=$fake key "$work/a")
  awk '/^Package: /{p=$2} p=="swiftlang" && /^Version: /{$0=$0"+other"} {print}' \
    "$fake/compiler/var/lib/dpkg/status" >"$work/status"
  cp "$work/status" "$fake/compiler/var/lib/dpkg/status"
  [ "$(CROSS_CACHE=$fake key "$work/a")" != "$f1" ] || die "another compiler version kept the key"
  f2=$(CROSS_CACHE=$fake key "$work/a")
  awk '/^Package: /{p=$2} p=="pkgconf" && /^Version: /{$0=$0"+other"} {print}' \
    "$fake/compiler/var/lib/dpkg/status" >"$work/status"
  cp "$work/status" "$fake/compiler/var/lib/dpkg/status"
  [ "$(CROSS_CACHE=$fake key "$work/a")" != "$f2" ] || die "another pkgconf version kept the key"
fi

echo "cross-key: the arm64 build key follows the sources, the checkout path and the sysroot's packages, not ignored files"
