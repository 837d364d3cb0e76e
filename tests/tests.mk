# SPDX-License-Identifier: GPL-2.0
# Driver tests: kselftest-style TAP programs, run inside the VM lane.
#
# Each tests/kselftest/*.c is one program built on the kernel's
# kselftest_harness.h (from Debian's linux-source, see tools/kernel-source);
# each tests/kselftest/*.sh is a TAP script. tests/kselftest/run-all runs
# them all in one guest boot and writes one .tap file per program.

KSFT_DIR	:= $(BUILD)/kselftest
KSFT_SRCS	:= $(wildcard tests/kselftest/*.c)
KSFT_BINS	:= $(patsubst tests/kselftest/%.c,$(KSFT_DIR)/%,$(KSFT_SRCS))
KSFT_HARNESS	 = $(shell tools/kernel-source --selftest)
KSFT_COMMON	:= $(wildcard tests/kselftest/*.h)
VM_FLAGS	?= --param backing_cap=128M

.PHONY: kselftests check-vm

kselftests: $(KSFT_BINS)

# libflex_*.c test libflex against the real driver.
KSFT_LIBFLEX	:= $(filter $(KSFT_DIR)/libflex_%,$(KSFT_BINS))
$(KSFT_LIBFLEX): $(BUILD)/libflex.a
$(KSFT_LIBFLEX): KSFT_LIBS := $(BUILD)/libflex.a
# libflex_plan_test runs the tools end to end and builds in flex-run's npy.c.
$(KSFT_DIR)/libflex_plan_test: $(BUILD)/flex-plan-gen $(BUILD)/flex-run tools/flex-run/npy.c \
	tools/flex-run/npy.h

# netlink_test talks to the flex genetlink family through libnl-genl-3.
$(KSFT_DIR)/netlink_test: uapi/linux/flex_netlink.h
$(KSFT_DIR)/netlink_test: KSFT_LIBS = $(shell pkg-config --cflags --libs libnl-genl-3.0)

# The netlink YAML spec and uapi/linux/flex_netlink.h must agree; a host TAP
# step of check-unit (and the checker must catch planted mismatches).
.PHONY: check-netlink-spec
check-unit: check-netlink-spec
check-netlink-spec: | deps
	@mkdir -p $(RESULTS)
	@echo "unit: netlink-spec"
	@tests/netlink-spec-check > $(RESULTS)/unit-netlink-spec.tap && \
		tests/netlink-spec-check --self-test > $(RESULTS)/unit-netlink-spec-selftest.tap || \
		{ grep '^not ok' $(RESULTS)/unit-netlink-spec*.tap; exit 1; }

$(KSFT_DIR)/%: tests/kselftest/%.c $(KSFT_COMMON) uapi/linux/flex.h uapi/linux/flex_isa.h | deps
	@mkdir -p $(KSFT_DIR)
	$(CC) $(CFLAGS_COMMON) -Wno-missing-prototypes -Wno-shadow -Wno-sign-compare -I$(KSFT_HARNESS) \
		-Itests/kselftest -o $@ $< $(KSFT_LIBS) $(LDFLAGS_COMMON)

# The documentation's worked examples, run by tests/kselftest/examples.sh.
EXAMPLE_BINS	:= $(patsubst Documentation/flex/examples/%.c,$(BUILD)/examples/%,\
		     $(wildcard Documentation/flex/examples/*.c))
kselftests: $(EXAMPLE_BINS)
$(BUILD)/examples/%: Documentation/flex/examples/%.c $(BUILD)/libflex.a | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(BUILD)/libflex.a $(LDFLAGS_COMMON)

check-vm: kmod kselftests
	@mkdir -p $(RESULTS)
	tools/flex-vm --out $(CURDIR)/$(RESULTS) $(VM_FLAGS) -- \
		$(CURDIR)/tests/kselftest/run-all $(CURDIR)/$(KSFT_DIR) $(CURDIR)/$(RESULTS) $(CURDIR)/kmod/flex.ko

# The driver benchmark runs in the VM; its figures go to stdout.
.PHONY: bench-queue
$(BUILD)/bench/queue_bench: tests/bench/queue_bench.c uapi/linux/flex.h | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(LDFLAGS_COMMON)

bench-queue: kmod $(BUILD)/bench/queue_bench
	tools/flex-vm --mem 1536 --param backing_cap=256M -- $(CURDIR)/$(BUILD)/bench/queue_bench

# FlexStream's launch path against raw submission of the same CBs (in the VM).
.PHONY: bench-launch
$(BUILD)/bench/launch_bench: tests/bench/launch_bench.c $(BUILD)/libflex.a | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(BUILD)/libflex.a $(LDFLAGS_COMMON)

bench-launch: kmod $(BUILD)/bench/launch_bench
	tools/flex-vm --mem 1536 --param backing_cap=256M -- $(CURDIR)/$(BUILD)/bench/launch_bench

# The debug-kernel lane: the same suite under KASAN, KFENCE, lockdep,
# kmemleak and UBSAN. tools/debug-kernel/build builds that kernel once per
# machine (cached outside the tree) and prints its directory; the module is
# built against it in a copy of the sources, so kmod/flex.ko stays the
# stock kernel's. tests/canary/run proves the lane catches each bug kind.
DEBUG_RESULTS	:= $(BUILD)/results-debug
DEBUG_KMOD	:= $(BUILD)/debug-kmod

.PHONY: check-debug
check-debug: deps kselftests
	@rm -rf $(DEBUG_RESULTS) $(DEBUG_KMOD) && mkdir -p $(DEBUG_RESULTS) $(DEBUG_KMOD)
	@kdir=$$(tools/debug-kernel/build | tail -n 1) && \
	cp -r Kbuild kmod uapi $(DEBUG_KMOD)/ && \
	$(MAKE) -C $$kdir/build M=$(CURDIR)/$(DEBUG_KMOD) modules && \
	{ tools/flex-vm --kernel-build $$kdir --module $(CURDIR)/$(DEBUG_KMOD)/kmod/flex.ko \
		--timeout 1500 --out $(CURDIR)/$(DEBUG_RESULTS) $(VM_FLAGS) -- \
		$(CURDIR)/tests/kselftest/run-all $(CURDIR)/$(KSFT_DIR) $(CURDIR)/$(DEBUG_RESULTS) \
		$(CURDIR)/$(DEBUG_KMOD)/kmod/flex.ko; \
	  echo "$$?" > $(DEBUG_RESULTS)/lane.rc; }; \
	rc=$$(cat $(DEBUG_RESULTS)/lane.rc); \
	if [ "$$rc" != 0 ]; then echo "not ok 1 - debug-kernel VM run exited $$rc (see $(DEBUG_RESULTS)/flex-vm)" > $(DEBUG_RESULTS)/lane.tap; \
	else echo "ok 1 - debug-kernel VM run clean (no KASAN/KFENCE/lockdep/UBSAN/kmemleak report)" > $(DEBUG_RESULTS)/lane.tap; fi
	-@tests/canary/run $(CURDIR)/$(DEBUG_RESULTS) > $(DEBUG_RESULTS)/canary.log 2>&1; tail -n 12 $(DEBUG_RESULTS)/canary.log
	@tools/tap-summary $(DEBUG_RESULTS)
