# SPDX-License-Identifier: Apache-2.0
# The VM test tier (Tests/vm): actiond on Debian's real kernel inside qemu (TCG), with uinput
# devices, a QEMU USB keyboard driven over QMP, and Debian's udev. See Tests/vm/README.md.

# qemu + the initramfs tool chain; python3 runs the host side (and reads the ELF dlopen notes:
# Tests/vm/dlopen-notes.py); kmod's depmod/modprobe resolve module dependencies; xz and zstd
# unpack the kernel's vmlinux (xz in Debian 12's kernel, zstd in 13's) and 13's modules.
# The udev package is unpacked (not installed) and its udevadm needs these libraries from the
# host: Debian 12's links libacl1 libblkid1 libcap2 libkmod2 libselinux1; Debian 13's links
# libsystemd-shared (a package of its own there, with those libraries as its dependencies)
# and dlopens libkmod2.
# The other tiers that boot this machine's kernel image in qemu need the same (and
# mk/benchmarks.mk's bench-deps, for the benchmark's VM).
VM_APT_PACKAGES := qemu-system-x86 busybox-static cpio kmod xz-utils zstd python3 \
  libacl1 libblkid1 libcap2 libkmod2 libselinux1 libsystemd-shared
test-vm test-systemd test-static test-deb-systemd: APT_PACKAGES += $(VM_APT_PACKAGES)
# The host side of the network of a `# needs: net` batch (60-mqtt-key-hold): Debian's broker.
test-vm: APT_PACKAGES += mosquitto mosquitto-clients
TEST_TIERS += test-vm

# VM_JOBS: VMs booted in parallel (each uses one host core under TCG; the CI machine has two).
# VM_SCENARIOS: names or prefixes to run (default: all).
VM_JOBS ?= 2
VM_SCENARIOS ?=

.PHONY: test-vm
## test-vm: build, boot Debian's kernel in qemu, run Tests/vm/scenarios
test-vm: deps
	$(SWIFT) build $(BUILD_FLAGS)
	Tests/vm/run.sh --no-build --jobs $(VM_JOBS) $(VM_SCENARIOS)
