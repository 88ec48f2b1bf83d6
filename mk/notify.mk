# SPDX-License-Identifier: Apache-2.0
# notify.mk: the `test-notify` tier -- `actionctl watch --notify` on a real desktop
# notification stack under Xvfb (Tests/notify/run.sh): dunst shows the press's hint and
# then its result in one notification, checked on screenshots with tesseract's OCR and
# with dunst's own count and log. A few seconds.
#
# xvfb: the X server; dunst: the notification server; libnotify-bin: notify-send, which
# --notify runs; dbus-x11: a session bus implementation for dunst's dependency (dbus-bin's
# dbus-run-session starts the bus); imagemagick: `import` takes the screenshots;
# tesseract-ocr (with its English data): reads them; fonts-dejavu-core: the font
# Tests/notify/dunstrc names (fontconfig would pick it anyway; named so it is certain).
# About 45 MB with --no-install-recommends.
test-notify: APT_PACKAGES += xvfb dunst libnotify-bin dbus-x11 imagemagick tesseract-ocr fonts-dejavu-core
TEST_TIERS += test-notify

.PHONY: test-notify
test-notify: build
	Tests/notify/run.sh "$(BIN_DIR)"
