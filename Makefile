# SPDX-License-Identifier: Apache-2.0
# actiond — build, run, test, bench, install.
#
# The two set-up commands of the README:
#   make run    install what is missing, build, run actiond in the foreground
#   make test   install what is missing, run every test tier
#
# Each area keeps its own rules in mk/*.mk and adds itself to TEST_TIERS / BENCH_TIERS.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

# ACTIOND_CACHE: the one directory under which the project keeps everything it downloads, and
# what it makes from those downloads alone, across runs (never the build: that is .build):
#   cross-arm64/        scripts/cross-arm64: the trixie compiler root, the arm64 sysroot and SDK
#                       (CROSS_CACHE; ~3.3 GB on Debian 12, ~0.4 GB where swiftlang is `swift`),
#                       and builds/: the last few arm64 builds (~70 MB each), by a key of all
#                       they are made from, so the same one is not compiled twice
#                       (CI's two roots, both at /src; a rebuild after `make clean`)
#   vm/SUITE/           Debian SUITE's kernel and udev, unpacked (Tests/vm/fetch.sh; SUITE is
#                       this machine's release for test-vm, test-systemd, test-static, and
#                       trixie for test-deb-debian13, with its guest root), ~0.5-0.65 GB each
#   vm/bookworm-arm64/  test-arm64's guest: Debian 12's arm64 kernel, udev, libraries (~0.1 GB)
# Keyed by what the content depends on (a Debian suite, a compiler version, sources), so machines of
# two releases may share one (CI's fresh roots do: scripts/fresh-root, FRESH_CACHE). Every
# entry is complete or absent: a run killed halfway leaves nothing a later run takes for
# done. `make clean` keeps it; `make clean-cache` removes it (everything is fetched again).
ACTIOND_CACHE ?= $(CURDIR)/.cache
export ACTIOND_CACHE

SWIFT ?= swift
CONFIGURATION ?= debug
BUILD_FLAGS ?=
BIN_DIR = $(shell $(SWIFT) build -c $(CONFIGURATION) $(BUILD_FLAGS) --show-bin-path 2>/dev/null)

# The Debian release (bookworm, trixie, ...) and its default GCC's major version, whose
# libstdc++ the release build links statically (mk/static-libstdc++): 12 on Debian 12, 14 on 13.
# Before gcc is installed (a fresh Debian 13, where swiftlang brings it) the release decides.
DEBIAN_CODENAME := $(shell . /etc/os-release 2>/dev/null && echo "$$VERSION_CODENAME")
GCC_MAJOR := $(or $(shell gcc -dumpversion 2>/dev/null | cut -d. -f1),$(if $(filter bookworm,$(DEBIAN_CODENAME)),12,14))

# The Debian packages that building and running need (make build, make run, make install):
# the libraries of actiond and actiond-mqtt, the C and C++ runtimes' development files (Swift
# links with clang, which Debian's gcc only recommends them to), lowdown for the man pages.
# Each test tier adds its own on its rule (`test-x: APT_PACKAGES += ...` in mk/*.mk), which
# `deps` installs when that tier runs: `make run` installs nothing that only tests need.
# binutils-gold: one of Swift's documented prerequisites, and the linker its driver picks when
# it is there (debug builds: the tests), which gives the binaries a RELRO segment as Debian
# builds everything (lintian: hardening-no-relro); Debian 13's swiftlang alone links without
# one. Release builds name the toolchain's lld, which gives them one too (Package.swift).
# The Swift toolchain itself: see `deps`.
APT_PACKAGES := libevdev-dev libudev-dev pkg-config libmosquitto-dev libssl-dev libc6-dev \
  libstdc++-$(GCC_MAJOR)-dev lowdown binutils-gold
TEST_TIERS :=
BENCH_TIERS :=

include $(sort $(wildcard mk/*.mk))

.PHONY: deps build run test test-stress test-unit lint format bench clean

## deps: install the Debian packages that are missing, and say which (nothing when all are
## there). Every package a tier needs is named in its mk/*.mk, also those Debian only
## recommends: they are installed with --no-install-recommends, as on a minimal system.
## A name an installed package provides is there (binutils-gold on Debian 12 is binutils'),
## as apt-get would have it: without this every tier's deps ran apt-get on Debian 12.
## The package lists are updated first unless deps updated them in the last hour
## (.build/deps-apt-updated; each tier of `make test` that needs something new would
## otherwise update them again), and always when an install from lists that recent fails
## or they lack swiftlang.
## Without a `swift` on PATH it installs Debian's own toolchain, swiftlang (Debian 13 and
## later); where apt has none (Debian 12) it says where to get one and stops.
deps:
	@have=$$(dpkg-query -W -f='$${db:Status-Abbrev}|$${Package}|$${Provides}\n' 2>/dev/null | awk -F'|' \
	  '$$1 == "ii " { print $$2; n = split($$3, v, ","); for (i = 1; i <= n; i++) { sub(/^ +/, "", v[i]); sub(/ .*/, "", v[i]); print v[i] } }'); \
	missing=""; for p in $(sort $(APT_PACKAGES)); do \
	  grep -qxF "$$p" <<<"$$have" || missing="$$missing $$p"; \
	done; \
	if ! command -v $(SWIFT) >/dev/null 2>&1; then \
	  [ "$(SWIFT)" = swift ] || { echo "deps: SWIFT=$(SWIFT) is not a command"; exit 1; }; \
	  missing="$$missing swiftlang"; \
	fi; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  apt="$$SUDO apt-get -o Acquire::Retries=3 -o DPkg::Lock::Timeout=120"; \
	  log=$$(mktemp); \
	  update() { $$apt update -qq >"$$log" 2>&1 || { cat "$$log"; rm -f "$$log"; echo "deps: apt-get update failed (output above)"; exit 1; }; \
	    mkdir -p .build && touch .build/deps-apt-updated; }; \
	  install() { DEBIAN_FRONTEND=noninteractive $$apt install -y -qq --no-install-recommends $$missing >"$$log" 2>&1; }; \
	  recent=$$(find .build/deps-apt-updated -mmin -60 2>/dev/null || true); \
	  [ -n "$$recent" ] || update; \
	  case " $$missing " in *" swiftlang "*) \
	    apt-cache show swiftlang >/dev/null 2>&1 || [ -z "$$recent" ] || { update; recent=""; }; \
	    if ! apt-cache show swiftlang >/dev/null 2>&1; then \
	      rm -f "$$log"; \
	      echo "deps: no Swift toolchain: no \`swift\` on PATH, and this system's apt has none to install"; \
	      echo "deps: ($(or $(DEBIAN_CODENAME),this release) does not package Swift; Debian 13 and later do, as swiftlang)."; \
	      echo "deps: Install Swift 6.0 or newer from https://www.swift.org/install/linux/ (the Debian 12 tarball),"; \
	      echo "deps: put its usr/bin first on PATH, and run make again (README.md, \"Platforms\")."; \
	      exit 1; \
	    fi; \
	    echo "deps: no \`swift\` on PATH: installing Debian's Swift toolchain (swiftlang, about 450 MB)";; \
	  esac; \
	  echo "deps: installing:$$missing"; \
	  install || { [ -n "$$recent" ] && update && install; } \
	    || { cat "$$log"; rm -f "$$log"; echo "deps: apt-get failed (output above)"; exit 1; }; \
	  rm -f "$$log"; \
	fi

build: deps
	$(SWIFT) build -c $(CONFIGURATION) $(BUILD_FLAGS)

## run: actiond in the foreground on the embedded default configuration
## (a state directory and socket under .build/run, so no root is needed)
run: build
	mkdir -p .build/run
	$(BIN_DIR)/actiond --state-dir .build/run/state --socket .build/run/actiond.sock --log-level info $(RUN_ARGS)

## test: every tier — lint, the deviceless tests, then the tiers in mk/*.mk — each run even
## when an earlier one failed, then a summary naming what failed and where its logs are
## (scripts/run-tiers; each tier's output is also in .build/test-logs/TIER.log).
## SKIP_TIERS="tier ...": tiers left out of this run, named in its summary (CI leaves out none).
SKIP_TIERS ?=
test: deps
	@$(if $(strip $(SKIP_TIERS)),echo "make test: skipping $(strip $(SKIP_TIERS)) (SKIP_TIERS)";) \
	MAKE="$(MAKE)" scripts/run-tiers lint test-unit $(filter-out $(SKIP_TIERS),$(TEST_TIERS))

## test-stress: `make test` STRESS_RUNS times in a row (default 3) while stress-ng keeps
## every core busy with CPU work (STRESS_CPUS workers, default one per core), to show that
## no test assumes how fast the machine is. Stops at the first failed run.
STRESS_CPUS ?= 0
STRESS_RUNS ?= 3
test-stress: deps
	@$(MAKE) --no-print-directory deps APT_PACKAGES=stress-ng
	@stress-ng --cpu $(STRESS_CPUS) --cpu-method all --quiet & hog=$$!; \
	trap 'kill $$hog 2>/dev/null; wait $$hog 2>/dev/null' EXIT; \
	echo "test-stress: stress-ng (pid $$hog) keeps $$(nproc) core(s) busy"; \
	for run in $$(seq $(STRESS_RUNS)); do \
	  start=$$(date +%s); \
	  $(MAKE) --no-print-directory test || { echo "test-stress: run $$run of $(STRESS_RUNS) FAILED under load"; exit 1; }; \
	  echo "test-stress: run $$run of $(STRESS_RUNS) passed under load in $$(($$(date +%s) - start)) s"; \
	done

test-unit: deps
	$(SWIFT) build --build-tests $(BUILD_FLAGS)
	$(SWIFT) test --skip-build $(BUILD_FLAGS)

## lint: swift format's rules, and the licence named in every source file the way its
## ecosystem expects (an SPDX-License-Identifier line; LICENSE holds the text).
lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Tests
	@missing=$$(git ls-files -- '*.swift' '*.c' '*.h' '*.sh' '*.py' '*.mk' Makefile 'systemd/*' 'udev-rules/*' \
	  | xargs grep -L 'SPDX-License-Identifier: Apache-2.0' || true); \
	[ -z "$$missing" ] || { echo "lint: no SPDX-License-Identifier: Apache-2.0 line in:" $$missing; exit 1; }

format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests

bench: deps $(BENCH_TIERS)

## clean: the build (.build); the download cache (ACTIOND_CACHE) stays.
clean:
	rm -rf .build

## clean-cache: the download cache, ACTIOND_CACHE (the next tier run fetches again).
.PHONY: clean-cache
clean-cache:
	@case "$(abspath $(ACTIOND_CACHE))" in /|"$(abspath $(HOME))"|"") echo "clean-cache: ACTIOND_CACHE=$(ACTIOND_CACHE) is not a cache directory"; exit 1;; esac
	rm -rf $(ACTIOND_CACHE)
