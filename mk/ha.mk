# SPDX-License-Identifier: Apache-2.0
# ha.mk: actiond-mqtt in a real Home Assistant.
#
#   make test-ha        the live tier (Tests/ha/test_ha.py): Home Assistant from PyPI at the
#                       oldest release docs/home-assistant.md supports and the newest, each in
#                       a Debian root of its own (Tests/ha/root.sh), onboarded and given MQTT
#                       through its API, with mosquitto, actiond and actiond-mqtt, asserted
#                       from Home Assistant's side
#   make ha-screenshot  docs/home-assistant-device.png from the same live set-up
#                       (scripts/ha-screenshot; headless Chromium)
#
# HA_VERSIONS: VERSION:SUITE pairs. The suite is the Debian release whose Python the
# version needs (its wheel's Requires-Python): 2024.11 to 2026.2 run on Debian 13's 3.13
# (2025.5 and later need 3.13.2), 2026.3 and later need 3.14.2, which only forky (Debian's
# testing) has. 2024.11.0 is the oldest that takes device-based discovery.
#
# Downloads are cached under $(ACTIOND_CACHE)/ha: each root (1.2 GB for 2024.11.0, 1.6 GB
# for 2026.11.0; made again when its script, requirements, suite or version changes) and
# the wheels pip took for it (0.15 and 0.25 GB). Measured on 2026-12-03 on 2 shared cores at
# load 6 to 8: from nothing 16 minutes (the roots 8 and 6.5 minutes; 0.19 GB from the Debian
# mirror and 0.4 GB from PyPI, some wheels compiled for Python 3.13); cached, 76 s for the
# whole tier (each Home Assistant's run 30 to 50 s), nothing downloaded. Root is needed
# (mmdebstrap, namespaces, chroot); the tier's processes run in a network namespace of
# their own (loopback only) and a PID namespace that ends them all with the test.
#
# Host packages: mmdebstrap makes the roots; util-linux's unshare the namespaces; mosquitto
# the broker; python3-websocket speaks Home Assistant's websocket API; chromium (the
# screenshot only) draws its frontend.
ACTIOND_CACHE ?= $(CURDIR)/.cache
HA_CACHE ?= $(ACTIOND_CACHE)/ha
HA_VERSIONS ?= 2024.11.0:trixie 2026.11.0:forky
HA_APT_PACKAGES := python3 python3-websocket mosquitto mmdebstrap util-linux mount
test-ha: APT_PACKAGES += $(HA_APT_PACKAGES)
ha-screenshot: APT_PACKAGES += $(HA_APT_PACKAGES) chromium fonts-dejavu-core
TEST_TIERS += test-ha

# --ha VERSION=ROOT for each version (its root made by then: this only prints its path).
HA_ROOTS = $(foreach v,$(HA_VERSIONS),--ha $(word 1,$(subst :, ,$(v)))=$$(Tests/ha/root.sh $(word 2,$(subst :, ,$(v))) $(word 1,$(subst :, ,$(v))) $(HA_CACHE)))

.PHONY: test-ha ha-screenshot
test-ha: deps
	$(SWIFT) build $(BUILD_FLAGS) --product actiond
	$(SWIFT) build $(BUILD_FLAGS) --product actionctl
	$(SWIFT) build $(BUILD_FLAGS) --product actiond-mqtt
	@for v in $(HA_VERSIONS); do Tests/ha/root.sh "$${v#*:}" "$${v%%:*}" "$(HA_CACHE)" >/dev/null; done
	/usr/bin/python3 Tests/ha/test_ha.py --bin "$(BIN_DIR)" $(HA_ROOTS)

## ha-screenshot: the device page of the newest pinned Home Assistant, as
## docs/home-assistant-device.png
ha-screenshot: deps
	$(SWIFT) build $(BUILD_FLAGS) --product actiond
	$(SWIFT) build $(BUILD_FLAGS) --product actionctl
	$(SWIFT) build $(BUILD_FLAGS) --product actiond-mqtt
	scripts/ha-screenshot --bin "$(BIN_DIR)" --cache "$(HA_CACHE)" --version "$(lastword $(HA_VERSIONS))" \
	  docs/home-assistant-device.png
