# SPDX-License-Identifier: Apache-2.0
# install.mk: `make install` / `make uninstall` (PREFIX, DESTDIR), man pages,
# and the `test-install` tier.
#
#   make install                        # into /usr/local (units, rules, sysusers too)
#   make install PREFIX=/usr DESTDIR=$PWD/pkg   # staging for a package
#   make uninstall                      # the same variables as install
#
# Binaries are release builds with the Swift runtime linked statically, so the
# target needs only libc, libstdc++, libudev1 and libevdev2 -- no toolchain.
# Everything lands under PREFIX except the configuration, which the daemon looks
# for in /etc/actiond whatever the prefix (SYSCONFDIR). systemd, udev and
# sysusers all search /usr/local/lib/{systemd/system,udev/rules.d,sysusers.d}
# as well as /usr/lib, so the default prefix works without touching /usr.

PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
SYSCONFDIR ?= /etc
LIBDIR_SYSTEMD ?= $(PREFIX)/lib/systemd/system
LIBDIR_SYSTEMD_USER ?= $(PREFIX)/lib/systemd/user
UDEVRULESDIR ?= $(PREFIX)/lib/udev/rules.d
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/actiond
BASHCOMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
# Helper programs the example controls run (examples/bin), where their argv names them.
HELPERDIR ?= $(PREFIX)/lib/actiond

# What the tiers need beyond building (lowdown, for the man pages, is a build need: the
# Makefile's APT_PACKAGES).
test-install test-man: APT_PACKAGES += man-db groff-base
test-static: APT_PACKAGES += gzip binutils
TEST_TIERS += test-install test-man test-static

# The C++ runtime is linked in too (mk/static-libstdc++/libstdc++.so says why): one search
# directory ahead of the compiler's, so the binaries need neither libswiftCore nor libstdc++.
RELEASE_FLAGS := -c release --static-swift-stdlib -Xlinker -L$(CURDIR)/mk/static-libstdc++
MAN_SOURCES := $(wildcard docs/man/*.md)
MAN_PAGES := $(patsubst docs/man/%.md,.build/man/%,$(MAN_SOURCES))
# Guides installed next to the examples (those that exist: several areas write them).
DOC_FILES := $(wildcard docs/*.md docs/*.png)
EXAMPLE_FILES := $(shell [ -d examples ] && find examples -type f | sort)
HELPER_FILES := $(wildcard examples/bin/*)
COMPLETION := $(wildcard completion/actionctl.bash)

.PHONY: release man install install-bin install-data uninstall test-install test-man test-static

## release: the executables (actiond, actionctl, actiond-mqtt), optimised, Swift runtime linked in.
## In a package build for another architecture (CROSS_ARCH: make deb ARCH=arm64) they are
## mk/arm64.mk's cross build; RELEASE_BIN_DIR is where they are either way.
ifeq ($(CROSS_ARCH),)
release: deps
	$(SWIFT) build $(RELEASE_FLAGS) --product actiond
	$(SWIFT) build $(RELEASE_FLAGS) --product actionctl
	$(SWIFT) build $(RELEASE_FLAGS) --product actiond-mqtt
RELEASE_BIN_DIR = $(shell $(SWIFT) build $(RELEASE_FLAGS) --show-bin-path)
else
release: cross-release
RELEASE_BIN_DIR = $(CROSS_BIN_DIR)
endif
.PHONY: release-bin-path
release-bin-path:
	@echo "$(RELEASE_BIN_DIR)"

## man: roff pages from docs/man/*.md (lowdown). No hyphenation, ragged right:
## paths and options must stay whole to be copied from a terminal.
man: $(MAN_PAGES)
.build/man/%: docs/man/%.md | deps
	@mkdir -p $(@D)
	@# The page's date is its source's last commit (reproducible); outside a git checkout (a
	@# Debian source package) SOURCE_DATE_EPOCH (dpkg-buildpackage sets it from debian/changelog);
	@# else today.
	ct=$$(git log -1 --format=%ct -- $< 2>/dev/null || true); ct=$${ct:-$${SOURCE_DATE_EPOCH:-}}; \
	lowdown -s -Tman --out-no-smarty -M "date=$$(date -u -d @$${ct:-$$(date +%s)} +%Y-%m-%d)" \
	  -M "source=actiond $$(sed -n 's/.*string = "\(.*\)".*/\1/p' Sources/ActiondCore/Foundation/Version.swift)" $< \
	  | sed '/^\.TH /a .nr HY 0\n.nh\n.ad l' > $@.tmp
	mv $@.tmp $@

install: install-bin install-data
	@if [ -z "$(DESTDIR)" ]; then $(MAKE) --no-print-directory install-activate; fi

install-bin: release
	bin="$(RELEASE_BIN_DIR)"; \
	install -D -m 0755 "$$bin/actiond" "$(DESTDIR)$(SBINDIR)/actiond"; \
	install -D -m 0755 "$$bin/actionctl" "$(DESTDIR)$(BINDIR)/actionctl"; \
	install -D -m 0755 "$$bin/actiond-mqtt" "$(DESTDIR)$(SBINDIR)/actiond-mqtt"

install-data: man
	install -d "$(DESTDIR)$(LIBDIR_SYSTEMD)"
	sed 's|^ExecStart=/usr/local/sbin/actiond|ExecStart=$(SBINDIR)/actiond|' systemd/actiond.service \
	  > "$(DESTDIR)$(LIBDIR_SYSTEMD)/actiond.service"
	chmod 0644 "$(DESTDIR)$(LIBDIR_SYSTEMD)/actiond.service"
	install -m 0644 systemd/actiond.socket "$(DESTDIR)$(LIBDIR_SYSTEMD)/actiond.socket"
	install -d "$(DESTDIR)$(LIBDIR_SYSTEMD_USER)"
	sed 's|^ExecStart=/usr/local/bin/actionctl|ExecStart=$(BINDIR)/actionctl|' systemd/user/actiond-notify.service \
	  > "$(DESTDIR)$(LIBDIR_SYSTEMD_USER)/actiond-notify.service"
	chmod 0644 "$(DESTDIR)$(LIBDIR_SYSTEMD_USER)/actiond-notify.service"
	sed -e 's|^ExecStart=/usr/local/sbin/actiond-mqtt|ExecStart=$(SBINDIR)/actiond-mqtt|' \
	  -e 's|^Documentation=file:/usr/local/share/doc/actiond/|Documentation=file:$(DOCDIR)/|' \
	  systemd/actiond-mqtt.service > "$(DESTDIR)$(LIBDIR_SYSTEMD)/actiond-mqtt.service"
	chmod 0644 "$(DESTDIR)$(LIBDIR_SYSTEMD)/actiond-mqtt.service"
	install -D -m 0644 systemd/sysusers.d/actiond.conf "$(DESTDIR)$(SYSUSERSDIR)/actiond.conf"
	install -D -m 0644 udev-rules/70-actiond.rules "$(DESTDIR)$(UDEVRULESDIR)/70-actiond.rules"
	for page in $(MAN_PAGES); do \
	  name=$$(basename "$$page"); install -D -m 0644 "$$page" "$(DESTDIR)$(MANDIR)/man$${name##*.}/$$name"; \
	done
	$(if $(COMPLETION),install -D -m 0644 $(COMPLETION) "$(DESTDIR)$(BASHCOMPLETIONDIR)/actionctl")
	install -d "$(DESTDIR)$(DOCDIR)"
	$(if $(DOC_FILES),install -m 0644 $(DOC_FILES) "$(DESTDIR)$(DOCDIR)/")
	install -m 0644 LICENSE "$(DESTDIR)$(DOCDIR)/LICENSE"
	# Examples keep their execute bit; their argv name the helpers under
	# /usr/local/lib/actiond, rewritten when the prefix is another one.
	for f in $(EXAMPLE_FILES); do \
	  mode=0644; [ -x "$$f" ] && mode=0755; \
	  install -D -m $$mode "$$f" "$(DESTDIR)$(DOCDIR)/$$f"; \
	  case $$f in *.json) sed -i 's|/usr/local/lib/actiond/|$(HELPERDIR)/|g' "$(DESTDIR)$(DOCDIR)/$$f" ;; esac; \
	done
	for f in $(HELPER_FILES); do install -D -m 0755 "$$f" "$(DESTDIR)$(HELPERDIR)/$${f##*/}"; done
	# The configuration is the operator's: installed once, never overwritten.
	install -d "$(DESTDIR)$(SYSCONFDIR)/actiond/controls.d"
	if [ -f examples/actiond.json ] && [ ! -e "$(DESTDIR)$(SYSCONFDIR)/actiond/actiond.json" ]; then \
	  install -m 0644 examples/actiond.json "$(DESTDIR)$(SYSCONFDIR)/actiond/actiond.json"; \
	elif [ -e "$(DESTDIR)$(SYSCONFDIR)/actiond/actiond.json" ]; then \
	  echo "install: keeping the existing $(DESTDIR)$(SYSCONFDIR)/actiond/actiond.json"; \
	fi

# On the live system (no DESTDIR): create the user, make systemd and udev see
# the new files. Skipped with a note where they are not running (containers,
# chroots); the commands are printed so they can be run later.
.PHONY: install-activate
install-activate:
	@run() { echo "+ $$*"; "$$@" || echo "install: '$$*' failed; run it once the system is up"; }; \
	if command -v systemd-sysusers >/dev/null; then run systemd-sysusers "$(SYSUSERSDIR)/actiond.conf"; \
	else echo "install: no systemd-sysusers: create the system user and group 'actiond' by hand"; fi; \
	if [ -d /run/systemd/system ]; then run systemctl daemon-reload; \
	else echo "install: systemd is not running: later run 'systemctl daemon-reload'"; fi; \
	if udevadm control --ping >/dev/null 2>&1; then run udevadm control --reload; run udevadm trigger --subsystem-match=input --action=change; \
	else echo "install: udevd is not running: later run 'udevadm control --reload'"; fi; \
	echo "install: enable with: systemctl enable --now actiond.socket actiond.service"; \
	echo "install: desktop notifications, per user: systemctl --user enable --now actiond-notify.service"
	echo "install: the MQTT bridge (docs/home-assistant.md): /etc/actiond/mqtt.json5, /etc/actiond/mqtt-password, then systemctl enable --now actiond-mqtt.service"

uninstall:
	rm -f "$(DESTDIR)$(SBINDIR)/actiond" "$(DESTDIR)$(BINDIR)/actionctl" "$(DESTDIR)$(SBINDIR)/actiond-mqtt"
	rm -f "$(DESTDIR)$(LIBDIR_SYSTEMD)/actiond.service" "$(DESTDIR)$(LIBDIR_SYSTEMD)/actiond.socket" \
	  "$(DESTDIR)$(LIBDIR_SYSTEMD)/actiond-mqtt.service"
	rm -f "$(DESTDIR)$(LIBDIR_SYSTEMD_USER)/actiond-notify.service"
	rm -f "$(DESTDIR)$(SYSUSERSDIR)/actiond.conf" "$(DESTDIR)$(UDEVRULESDIR)/70-actiond.rules"
	rm -f "$(DESTDIR)$(MANDIR)/man8/actiond.8" "$(DESTDIR)$(MANDIR)/man1/actionctl.1" \
	  "$(DESTDIR)$(MANDIR)/man5/actiond.conf.5" "$(DESTDIR)$(MANDIR)/man8/actiond-mqtt.8"
	rm -f "$(DESTDIR)$(BASHCOMPLETIONDIR)/actionctl"
	rm -rf "$(DESTDIR)$(DOCDIR)"
	for f in $(HELPER_FILES); do rm -f "$(DESTDIR)$(HELPERDIR)/$${f##*/}"; done
	-rmdir "$(DESTDIR)$(HELPERDIR)" 2>/dev/null
	# The configuration stays unless it is exactly the shipped default (like a
	# package's conffiles): an operator's edits are never lost.
	conf="$(DESTDIR)$(SYSCONFDIR)/actiond/actiond.json"; \
	if [ -f "$$conf" ] && [ -f examples/actiond.json ] && cmp -s "$$conf" examples/actiond.json; then rm -f "$$conf"; \
	elif [ -e "$$conf" ]; then echo "uninstall: keeping the modified $$conf"; fi
	-rmdir "$(DESTDIR)$(SYSCONFDIR)/actiond/controls.d" "$(DESTDIR)$(SYSCONFDIR)/actiond" 2>/dev/null
	@echo "uninstall: the user 'actiond', /var/lib/actiond and /run/actiond are left in place"

## test-install: install into a temporary DESTDIR, check the exact file list and
## what the files say, uninstall, check nothing is left; then the same with a
## modified configuration, which must survive both.
test-install: release man
	Tests/install/test-install.sh

## test-man: every man page renders without a single groff/man warning.
test-man: man
	@for page in $(MAN_PAGES); do \
	  out=$$(MANWIDTH=80 man --warnings -l "$$page" 2>&1 >/dev/null); \
	  if [ -n "$$out" ]; then echo "test-man: $$page:"; echo "$$out"; exit 1; fi; \
	  MANWIDTH=80 man -l "$$page" 2>/dev/null | grep -q '^NAME' || { echo "test-man: $$page renders no NAME section"; exit 1; }; \
	  echo "test-man: $$page renders cleanly"; \
	done

## test-static: the installed release binaries run in a VM whose image holds no
## Swift runtime, only libc, libstdc++, libudev and libevdev (Tests/vm/static).
test-static: release man
	Tests/vm/static/run.sh
