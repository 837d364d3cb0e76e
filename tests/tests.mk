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

$(KSFT_DIR)/%: tests/kselftest/%.c $(KSFT_COMMON) uapi/linux/flex.h | deps
	@mkdir -p $(KSFT_DIR)
	$(CC) $(CFLAGS_COMMON) -Wno-missing-prototypes -Wno-shadow -Wno-sign-compare -I$(KSFT_HARNESS) \
		-Itests/kselftest -o $@ $< $(LDFLAGS_COMMON)

check-vm: kmod kselftests
	@mkdir -p $(RESULTS)
	tools/flex-vm --out $(CURDIR)/$(RESULTS) $(VM_FLAGS) -- \
		$(CURDIR)/tests/kselftest/run-all $(CURDIR)/$(KSFT_DIR) $(CURDIR)/$(RESULTS) $(CURDIR)/kmod/flex.ko
