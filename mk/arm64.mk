# arm64.mk: the `test-arm64` tier -- 70-actiond.rules on a real gpio-keys
# device (qemu `virt` board, PL061 GPIO, Debian's arm64 kernel and udev; see
# Tests/vm/arm64/run.sh). About 20 s once the ~70 MB of packages are cached in
# Tests/vm/.cache/arm64.
#
# qemu-system-arm provides qemu-system-aarch64; kmod's depmod/modprobe resolve
# the guest's modules on the host; binutils' readelf checks the sysroot has
# every library udevadm links; cpio/gzip pack the initramfs; python3 speaks QMP.
test-arm64: APT_PACKAGES += qemu-system-arm cpio gzip kmod binutils python3
TEST_TIERS += test-arm64

.PHONY: test-arm64
test-arm64: deps
	Tests/vm/arm64/run.sh
