# SPDX-License-Identifier: Apache-2.0
# deb.mk: `make deb`, the Debian package built by Debian's own tooling
# (dpkg-buildpackage, debhelper compat 13) from debian/, and its tiers.
#
#   make deb              .build/deb/actiond_<version>_<arch>.deb and actiond-mqtt_<version>_<arch>.deb
#                         (+ their -dbgsym, one .buildinfo, one .changes listing them all)
#   make test-deb         build them, check their contents and maintainer scripts, lintian
#   make test-deb-systemd apt-get install / upgrade / remove / purge under real systemd 252 in a VM
#   make test-deb-debian13 the same on a Debian 13 guest (systemd 257), whatever this machine is
#   make test-deb-fresh   apt install ./actiond_*.deb in a fresh Debian 12 root (root, network)
#
# The Swift toolchain comes from PATH (debian/README.source); everything else the
# build needs is debian/control's Build-Depends, installed here by `make deps`.
# dpkg-buildpackage needs no fakeroot: Rules-Requires-Root: no.

deb test-deb test-deb-systemd test-deb-debian13 test-deb-fresh: APT_PACKAGES += dpkg-dev debhelper build-essential lintian
TEST_TIERS += test-deb

DEB_DIR := .build/deb
DEB_VERSION = $(shell sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/ActiondCore/Foundation/Version.swift)
# The host architecture, which dpkg-buildpackage builds for (this machine's, unless
# DEB_HOST_ARCH says otherwise, or ARCH= asks for a cross build: CROSS_ARCH):
# in the .deb's name, as dh_builddeb writes it. No architecture is named in debian/ or here
# but debian/control's list (test-deb checks).
DEB_ARCH = $(or $(CROSS_ARCH),$(shell dpkg-architecture -qDEB_HOST_ARCH))
DEB_FILE = $(DEB_DIR)/actiond_$(DEB_VERSION)_$(DEB_ARCH).deb
DEB_MQTT_FILE = $(DEB_DIR)/actiond-mqtt_$(DEB_VERSION)_$(DEB_ARCH).deb

.PHONY: deb test-deb test-deb-systemd test-deb-debian13 test-deb-fresh

## deb: the package, into .build/deb/ (not Debian's "..": that is outside the checkout).
## A cross build (CROSS_ARCH): --host-arch, and no check of Build-Depends against this
## machine's packages: they are the cross sysroot's (cross-prepare). debian/rules gets what
## it needs of the cross build in the environment (CROSS_RUN, CROSS_SHLIBDEPS_ARGS);
## crossbuildcanrunhostbinaries tells debhelper that CROSS_RUN runs them for the check.
## The packages of the sources as they are are not built twice (test-deb, then
## test-deb-debian13, in one `make test`): DEB_STAMP holds a hash of every file git sees
## (committed or not, ignored ones left out), the toolchain's version (for a cross build
## also the cross compiler's and sysroot's: $(CROSS) build-key) and the build's
## options, written after a build; while it matches and the packages are there, `deb` says
## so and builds nothing. Outside a git checkout it always builds.
DEB_STAMP = $(DEB_DIR)/.built-$(DEB_ARCH)
deb: deps $(if $(CROSS_ARCH),cross-prepare)
	@cl=$$(dpkg-parsechangelog -S Version); \
	[ "$$cl" = "$(DEB_VERSION)" ] || { echo "deb: debian/changelog is at $$cl, Version.swift at $(DEB_VERSION): run scripts/set-version"; exit 1; }
	@mkdir -p $(DEB_DIR); \
	key=""; \
	if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then \
	  key=$$( { git ls-files -z -co --exclude-standard | xargs -0 sha256sum 2>/dev/null || true; \
	    $(SWIFT) --version 2>&1; $(if $(CROSS_ARCH),$(CROSS) build-key;) \
	    echo "$(DEB_ARCH) $(CROSS_ARCH) $(DEB_BUILD_OPTIONS)"; } | sha256sum | cut -c1-32); \
	fi; \
	if [ -n "$$key" ] && [ -f $(DEB_FILE) ] && [ -f $(DEB_MQTT_FILE) ] && [ "$$(cat $(DEB_STAMP) 2>/dev/null)" = "$$key" ]; then \
	  echo "deb: $(DEB_FILE) $(DEB_MQTT_FILE): up to date, built from these very sources ($(DEB_STAMP))"; exit 0; \
	fi; \
	rm -f $(DEB_STAMP) $(DEB_DIR)/actiond_$(DEB_VERSION)_$(DEB_ARCH).* $(DEB_DIR)/actiond-*_$(DEB_VERSION)_$(DEB_ARCH).*; \
	set -x; \
	DEB_OUTPUT_DIR=$(CURDIR)/$(DEB_DIR) $(if $(CROSS_ARCH),CROSS_RUN='$(CROSS_RUN)' CROSS_SHLIBDEPS_ARGS='$(CROSS_SHLIBDEPS_ARGS)' \
	  DEB_BUILD_OPTIONS='$(strip $(DEB_BUILD_OPTIONS) crossbuildcanrunhostbinaries)') \
	  dpkg-buildpackage -b --no-sign $(if $(CROSS_ARCH),--host-arch=$(CROSS_ARCH) --no-check-builddeps) \
	  --buildinfo-file=$(DEB_DIR)/actiond_$(DEB_VERSION)_$(DEB_ARCH).buildinfo \
	  --buildinfo-option=-u$(DEB_DIR) \
	  --changes-file=$(DEB_DIR)/actiond_$(DEB_VERSION)_$(DEB_ARCH).changes \
	  --changes-option=-u$(DEB_DIR); \
	{ set +x; } 2>/dev/null; \
	[ -z "$$key" ] || echo "$$key" >$(DEB_STAMP); \
	echo "deb: $(DEB_FILE) $(DEB_MQTT_FILE)"

## test-deb: `make deb`, then what both packages hold (paths, modes, conffiles,
## Depends from dh_shlibdeps, maintainer scripts) and lintian (Tests/deb/test-deb.sh).
test-deb: deb
	DEB_ARCH=$(DEB_ARCH) $(if $(CROSS_ARCH),DEB_RUN='$(CROSS_RUN)') Tests/deb/test-deb.sh $(DEB_FILE) $(DEB_MQTT_FILE)

## test-deb-systemd: the packages under real systemd 252 in a VM (Tests/deb/systemd.sh):
## apt-get install with a button present, hotplug, a hold performing the default
## control, no start without a configuration; actiond-mqtt beside it (not started while
## unconfigured, failing once without its password file; configured: online, discovery,
## the hold's events through mosquitto in the guest; remove, purge); upgrade to a next
## build (made from a copy of this checkout with a newer version: a second full release
## build, several minutes; DEB_NEXT=PATH.deb reuses one; DEB_NEXT=repack takes this package
## repacked with a newer version, as test-deb-debian13 does), remove, purge. Not in
## TEST_TIERS: the guest alone takes about 4 minutes, the second build 5 more; on this
## machine's userland (Debian 12 here, 13 in CI's Debian 13 root).
DEB_NEXT ?=
# The guest's userland is this machine's /usr: its systemd, procps (the unit's ExecReload=
# runs kill) and the guest's broker, mosquitto with its clients.
test-deb-systemd: APT_PACKAGES += systemd procps mosquitto mosquitto-clients
test-deb-systemd: deb
	$(SWIFT) build $(RELEASE_FLAGS) --product actiond-testdev
	Tests/deb/systemd.sh $(if $(filter repack,$(DEB_NEXT)),--next-from-previous $(DEB_FILE),$(DEB_FILE) $(DEB_NEXT))

## test-deb-debian13: what test-deb-systemd does, in a Debian 13 (trixie) guest: the
## package built here (on Debian 12 with glibc 2.36, or on Debian 13) installs, hotplugs,
## performs a hold, runs actiond-mqtt, upgrades, is removed and purged under trixie's
## systemd 257, udev, dpkg, apt and glibc 2.41, on trixie's kernel. The guest's / is a
## trixie root made by mmdebstrap (Tests/deb/guest-root.sh; root needed), its kernel
## trixie's linux-image (Tests/vm/fetch.sh --suite trixie): both cached in
## $(ACTIOND_CACHE)/vm/trixie (~0.3 GB; ~2 min to fetch and make once). The next version is this
## package repacked with a newer version (systemd.sh's repack_next says what that proves
## and what it cannot). About 4 minutes with the cache, most of it dpkg and the maintainer
## scripts' systemctl and perl under TCG.
## Its host tools: mmdebstrap makes the root; qemu, busybox-static, cpio and gzip the VM and
## its initramfs; kmod's modprobe resolves the modules; xz and zstd unpack Debian 13's
## xz-compressed modules and zstd-compressed kernel. The guest's mosquitto is the root's.
TEST_TIERS += test-deb-debian13
test-deb-debian13: APT_PACKAGES += mmdebstrap qemu-system-x86 busybox-static cpio gzip kmod xz-utils zstd
test-deb-debian13: deb
	$(SWIFT) build $(RELEASE_FLAGS) --product actiond-testdev
	Tests/deb/systemd.sh --suite trixie --next-from-previous $(DEB_FILE)

## test-deb-fresh: apt install ./actiond_*.deb (then ./actiond-mqtt_*.deb) in a fresh Debian 12 root
## (Tests/deb/fresh-install.sh: mmdebstrap, root and the Debian mirror needed).
## Not in TEST_TIERS: it downloads a Debian root and the dependencies.
test-deb-fresh: deb
	@$(MAKE) --no-print-directory deps APT_PACKAGES=mmdebstrap
	Tests/deb/fresh-install.sh $(DEB_FILE) $(DEB_MQTT_FILE)
