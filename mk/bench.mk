# SPDX-License-Identifier: Apache-2.0
# Recognizer micro-benchmark on the host: events/s (median of runs) and heap
# allocations per event in steady state. Prints numbers; asserts nothing.
BENCH_TIERS += bench-core
BENCH_CORE_ARGS ?=

.PHONY: bench-core
bench-core: deps
	$(SWIFT) build -c release --product actiond-bench $(BUILD_FLAGS)
	"$$($(SWIFT) build -c release --show-bin-path $(BUILD_FLAGS))/actiond-bench" $(BENCH_CORE_ARGS)
