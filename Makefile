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

SWIFT ?= swift
CONFIGURATION ?= debug
BUILD_FLAGS ?=
BIN_DIR = $(shell $(SWIFT) build -c $(CONFIGURATION) $(BUILD_FLAGS) --show-bin-path 2>/dev/null)

# Debian packages every tier needs; areas append theirs in mk/*.mk.
APT_PACKAGES := libevdev-dev libudev-dev pkg-config
TEST_TIERS :=
BENCH_TIERS :=

include $(sort $(wildcard mk/*.mk))

.PHONY: deps build run test test-stress test-unit lint format bench clean

## deps: install the Debian packages that are missing, and say which (nothing when all are
## there). Every package a tier needs is named in its mk/*.mk, also those Debian only
## recommends: they are installed with --no-install-recommends, as on a minimal system.
deps:
	@missing=""; for p in $(sort $(APT_PACKAGES)); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing:$$missing"; \
	  if [ "$$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi; \
	  apt="$$SUDO apt-get -o Acquire::Retries=3 -o DPkg::Lock::Timeout=120"; \
	  log=$$(mktemp); \
	  { $$apt update -qq && DEBIAN_FRONTEND=noninteractive $$apt install -y -qq --no-install-recommends $$missing; } >"$$log" 2>&1 \
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
test: deps
	@MAKE="$(MAKE)" scripts/run-tiers lint test-unit $(TEST_TIERS)

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

lint:
	$(SWIFT) format lint --strict --recursive --parallel Package.swift Sources Tests

format:
	$(SWIFT) format --in-place --recursive --parallel Package.swift Sources Tests

bench: deps $(BENCH_TIERS)

clean:
	rm -rf .build
