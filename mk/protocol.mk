# SPDX-License-Identifier: Apache-2.0
# protocol.mk: the socket protocol and actionctl.
#
# The server tests run actionctl under another uid with setpriv (util-linux) to
# prove that mutating requests are refused; the completion file must parse.

test-unit: APT_PACKAGES += util-linux
TEST_TIERS += test-completion

.PHONY: test-completion
test-completion:
	bash -n completion/actionctl.bash
