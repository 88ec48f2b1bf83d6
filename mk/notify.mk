# notify.mk: `actionctl watch --notify` on a real desktop notification stack.
APT_PACKAGES += xvfb dunst libnotify-bin dbus-x11 imagemagick tesseract-ocr
