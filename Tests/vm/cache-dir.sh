#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Prints the directory where the VM tiers keep what they fetch for one Debian suite (its
# kernel and udev packages, unpacked; a guest root of that suite): $ACTIOND_CACHE/vm/SUITE,
# SUITE being this machine's release unless given (the kernel and udev of `make test-vm`,
# test-systemd, test-static are this machine's release's). The key is the suite the content
# comes from, so a Debian 12 and a Debian 13 machine sharing one ACTIOND_CACHE (CI's fresh
# roots) keep their own host-release artifacts apart, and share what they both fetch (the
# Debian 13 guest of test-deb-debian13 is vm/trixie on either).
# ACTIOND_CACHE: the Makefile's (default: .cache in the checkout).
# Usage: cache-dir.sh [SUITE]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
suite=${1:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}
[[ -n $suite ]] || { echo "cache-dir.sh: cannot tell this machine's Debian codename from /etc/os-release" >&2; exit 1; }
echo "${ACTIOND_CACHE:-$top/.cache}/vm/$suite"
