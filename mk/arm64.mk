# SPDX-License-Identifier: Apache-2.0
# arm64.mk: the arm64 packages, cross-built on this (amd64) machine, and the `test-arm64`
# tier that runs them on Debian's arm64 kernel.
#
#   make deb ARCH=arm64   .build/deb/actiond_<version>_arm64.deb and actiond-mqtt_<version>_arm64.deb
#                         by the same debian/ packaging (dpkg-buildpackage --host-arch), with
#                         scripts/cross-arm64's compiler (trixie's swiftlang) and bookworm
#                         arm64 sysroot, cached in $(ACTIOND_CACHE)/cross-arm64 (CROSS_CACHE;
#                         kept by `make clean`, removed by `make clean-cross`)
#   make test-arm64       that and test-deb's checks of it (make test-deb ARCH=arm64), then
#                         Tests/vm/arm64/run.sh: the glibc floor, Debian 13's libraries, udev
#                         and the real actiond on a gpio-keys button of qemu's `virt` board;
#                         and Tests/deb/cross-key.sh: the key of the kept builds (below).
#                         From nothing 10-15 minutes (a Debian 13 root, ~1 GB once, and a
#                         full release build); with the cache and unchanged sources about 2.5.
#
# The cross build itself is kept: scripts/cross-arm64 files the executables it made under
# $(CROSS_CACHE)/builds/KEY, KEY a hash of every file git sees, the compiler's and the
# sysroot's package versions and the paths (the script says exactly what), and copies them
# from there instead of compiling when the key matches: CI's Debian 13 root after its
# Debian 12 one (both check out at /src), or a build after `make clean`, compiles nothing
# the same twice (~2.5 minutes each). The
# packaging (dpkg-buildpackage, dh_strip, dh_shlibdeps, lintian) and every check and the VM
# still run each time, with the tools of the machine they run on.
#
# The cross build: mmdebstrap makes the compiler root, util-linux's unshare and mount's
# mount (not in a minimal root) enter it; binutils-aarch64-linux-gnu strips the binaries
# (dh_strip); qemu-user's qemu-aarch64 runs them on this machine against a sysroot (the
# package build's check, test-deb, Debian 13's libraries). For the VM: qemu-system-arm
# provides qemu-system-aarch64; kmod's depmod/modprobe resolve the guest's modules on the
# host; binutils' readelf checks the sysroot has every library udevadm links and reads the
# binaries' glibc versions; cpio/gzip pack the initramfs; python3 speaks QMP.
CROSS_APT_PACKAGES := mmdebstrap util-linux mount binutils-aarch64-linux-gnu qemu-user
cross-prepare cross-release: APT_PACKAGES += $(CROSS_APT_PACKAGES)
test-arm64: APT_PACKAGES += $(CROSS_APT_PACKAGES) qemu-system-arm cpio gzip kmod binutils python3
TEST_TIERS += test-arm64

CROSS := scripts/cross-arm64
CROSS_CACHE ?= $(ACTIOND_CACHE)/cross-arm64
export CROSS_CACHE
# The architecture a package build is for when it is not this machine's: ARCH= on make's
# command line, or DEB_HOST_ARCH from dpkg-buildpackage --host-arch (debian/rules calling
# `make release`). Empty for a native build. Only arm64 can be cross-built.
BUILD_ARCH := $(shell dpkg-architecture -qDEB_BUILD_ARCH 2>/dev/null)
CROSS_ARCH := $(filter-out $(BUILD_ARCH),$(or $(ARCH),$(DEB_HOST_ARCH)))
ifneq ($(filter-out arm64,$(CROSS_ARCH)),)
$(error ARCH=$(CROSS_ARCH): only arm64 can be cross-built here (scripts/cross-arm64))
endif
ifneq ($(CROSS_ARCH),)
deb test-deb: APT_PACKAGES += $(CROSS_APT_PACKAGES)
endif
# What the packaging needs of the cross build (mk/deb.mk passes them to debian/rules): where
# the executables are, how to run them here (qemu-aarch64 against bookworm's libraries), and
# dh_shlibdeps' arm64 libraries and their package data (scripts/cross-arm64 says why).
CROSS_BIN_DIR = $(shell $(CROSS) bin-path)
CROSS_SYSROOT = $(shell $(CROSS) env | sed -n 's/^CROSS_SYSROOT=//p')
CROSS_RUN = qemu-aarch64 -L $(CROSS_SYSROOT)
CROSS_SHLIBDEPS_ARGS = -- -l$(CROSS_SYSROOT)/usr/lib/aarch64-linux-gnu \
  --admindir=$(shell $(CROSS) env | sed -n 's/^CROSS_ADMINDIR=//p')

.PHONY: cross-prepare cross-release clean-cross test-arm64
## cross-prepare: the compiler, sysroot and Swift SDK, fetched once (scripts/cross-arm64)
cross-prepare: deps
	$(CROSS) prepare
## cross-release: actiond, actionctl and actiond-mqtt for aarch64 (mk/install.mk's `release`
## when CROSS_ARCH is set)
cross-release: cross-prepare
	$(CROSS) build actiond actionctl actiond-mqtt
clean-cross:
	rm -rf $(CROSS_CACHE) .build/cross-arm64

## test-arm64: builds the arm64 packages and applies test-deb's checks to them (make test-deb
## ARCH=arm64), checks the kept builds' key (Tests/deb/cross-key.sh), then boots their
## binaries in the aarch64 VM (Tests/vm/arm64/run.sh).
test-arm64: deps
	@start=$$(date +%s); $(MAKE) --no-print-directory test-deb ARCH=arm64; \
	echo "test-arm64: make test-deb ARCH=arm64 (cross build, packages, their checks) took $$(($$(date +%s) - start)) s"
	Tests/deb/cross-key.sh
	Tests/vm/arm64/run.sh .build/deb/actiond_$(DEB_VERSION)_arm64.deb
