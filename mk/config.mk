# SPDX-License-Identifier: Apache-2.0
# config: the key-name table of the configuration, generated from the kernel headers.
#
# make keycodes [HEADER=...]
#                 regenerate Sources/ActiondCore/Config/KeyCodes.swift from HEADER (default
#                 /usr/include/linux/input-event-codes.h; needs python3). The table is made
#                 from the newest header of a supported system (today Debian 13's, Linux 6.12)
#                 and only grows: the generator refuses an older header that lacks some of its
#                 names. KeyCodesMatchLibevdevTests fails when the installed header names a key
#                 the table lacks or gives one another code.

HEADER ?= /usr/include/linux/input-event-codes.h

.PHONY: keycodes
keycodes:
	scripts/gen-keycodes.py $(HEADER) > Sources/ActiondCore/Config/KeyCodes.swift.tmp
	mv Sources/ActiondCore/Config/KeyCodes.swift.tmp Sources/ActiondCore/Config/KeyCodes.swift
	$(SWIFT) format --in-place Sources/ActiondCore/Config/KeyCodes.swift
