# config: the key-name table of the configuration, generated from the kernel headers.
#
# make keycodes   regenerate Sources/ActiondCore/Config/KeyCodes.swift from
#                 /usr/include/linux/input-event-codes.h (needs python3). The Linux test
#                 tier (KeyCodesMatchLibevdevTests) fails when the table is out of date.

.PHONY: keycodes
keycodes:
	scripts/gen-keycodes.py /usr/include/linux/input-event-codes.h > Sources/ActiondCore/Config/KeyCodes.swift.tmp
	mv Sources/ActiondCore/Config/KeyCodes.swift.tmp Sources/ActiondCore/Config/KeyCodes.swift
	$(SWIFT) format --in-place Sources/ActiondCore/Config/KeyCodes.swift
