#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Writes this machine's Debian apt sources (deb822, /etc/apt/sources.list.d/*.sources) with
# every suite name swapped for SUITE's (bookworm-updates -> trixie-updates, ...), so a guest
# of another Debian release comes from the same mirror this machine is allowed to reach.
# On a machine of SUITE already it writes the same sources.
# Usage: suite-sources.sh SUITE OUTPUT_FILE
set -euo pipefail
suite=${1:?usage: suite-sources.sh SUITE OUTPUT_FILE}
out=${2:?usage: suite-sources.sh SUITE OUTPUT_FILE}
die() { echo "suite-sources.sh: $*" >&2; exit 1; }
# The Debian sources: those naming the Debian archive keyring or a debian.org mirror (a
# machine may have other repositories, which have no suite of that name).
srcs=$(grep -lE 'debian-archive-keyring|debian\.org' /etc/apt/sources.list.d/*.sources 2>/dev/null) \
  || die "no Debian deb822 sources in /etc/apt/sources.list.d (the one-line sources.list format is not read)"
mkdir -p "$(dirname "$out")"
# A Suites: value is the release's codename or codename-updates / -security / -backports;
# the codename is whatever this machine's is, so the first word before a dash is swapped.
# shellcheck disable=SC2086 # srcs is a list of paths without spaces
awk -v s="$suite" '
  FNR == 1 && NR > 1 { print "" }  # stanzas of two files stay apart
  /^Suites:/ {
    line = "Suites:"
    for (i = 2; i <= NF; i++) { n = split($i, p, "-"); w = s; for (j = 2; j <= n; j++) w = w "-" p[j]; line = line " " w }
    print line; next
  }
  { print }' $srcs >"$out.tmp"
grep -q "^Suites: $suite\b" "$out.tmp" || die "no Suites: line in $srcs"
mv "$out.tmp" "$out"
