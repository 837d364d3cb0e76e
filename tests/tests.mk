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
# libflex_plan_test runs the tools end to end and builds in flex-run's npy.c,
# which uses the tools' shared helpers.
$(KSFT_DIR)/libflex_plan_test: $(BUILD)/flex-plan-gen $(BUILD)/flex-run tools/flex-run/npy.c \
	tools/flex-run/npy.h tools/shared/tool.h $(TOOL_SHARED_LIB)
$(KSFT_DIR)/libflex_plan_test: KSFT_CFLAGS = $(TOOL_SHARED_CFLAGS)
$(KSFT_DIR)/libflex_plan_test: KSFT_LIBS += $(TOOL_SHARED_LIB)

# compute_test's float references use fabs() and _Float16 conversions.
$(KSFT_DIR)/compute_test: KSFT_LIBS = -lm

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

# The uapi headers' kernel-doc must be complete: every struct member (pads
# included), enum value and parameter has its @line. The checker is the
# kernel's own scripts/kernel-doc from Debian's linux-source
# (tools/kernel-source). Its -Wall (short descriptions, contents before
# sections) is -v in 6.1's, which has no -Wall. A host TAP step of check-unit.
UAPI_KDOC_HDRS	:= uapi/linux/flex.h uapi/linux/flex_isa.h uapi/linux/flex_netlink.h
.PHONY: check-kernel-doc
check-unit: check-kernel-doc
check-kernel-doc: | deps
	@mkdir -p $(RESULTS)
	@echo "unit: kernel-doc"
	@tap=$(RESULTS)/unit-kernel-doc.tap; \
	src=$$(tools/kernel-source) && kdoc=$$src/scripts/kernel-doc && \
	if grep -q -e '-Wall' $$kdoc; then wall=-Wall; else wall=-v; fi && \
	out=$$(perl $$kdoc -none $$wall $(UAPI_KDOC_HDRS) 2>&1); rc=$$?; \
	out=$$(printf '%s\n' "$$out" | grep -v -e ': info: ' -e '^$$'); \
	if [ -z "$$src" ] || [ "$$rc" != 0 ] || [ -n "$$out" ]; then \
		{ echo 1..1; echo "not ok 1 - uapi kernel-doc clean"; \
		  printf '%s\n' "$${out:-kernel-doc did not run (exit $$rc)}" | sed 's/^/# /'; } > $$tap; \
		cat $$tap; exit 1; \
	fi; \
	printf '1..1\nok 1 - uapi kernel-doc clean\n' > $$tap

# checkpatch.pl --strict, from Debian's linux-source, on every kmod/ source:
# a host lane of make check (checkpatch.tap, one case per file), after a
# self-test proving it reports planted defects (checkpatch-selftest.tap).
# Nothing is --ignore'd.
.PHONY: check-checkpatch
check-checkpatch: | deps
	@mkdir -p $(RESULTS)
	@echo "checkpatch: kmod/"
	@status=0; \
	tests/checkpatch-kmod --self-test > $(RESULTS)/checkpatch-selftest.tap || status=1; \
	tests/checkpatch-kmod > $(RESULTS)/checkpatch.tap || status=1; \
	awk '/^(not ok|Bail out)/ { p = 1; print; next } /^ok / { p = 0 } p && /^#/' \
		$(RESULTS)/checkpatch-selftest.tap $(RESULTS)/checkpatch.tap; \
	exit $$status

$(KSFT_DIR)/%: tests/kselftest/%.c $(KSFT_COMMON) uapi/linux/flex.h uapi/linux/flex_isa.h | deps
	@mkdir -p $(KSFT_DIR)
	$(CC) $(CFLAGS_COMMON) -Wno-missing-prototypes -Wno-shadow -Wno-sign-compare -I$(KSFT_HARNESS) \
		-Itests/kselftest $(KSFT_CFLAGS) -o $@ $< $(KSFT_LIBS) $(LDFLAGS_COMMON)

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

# A stream's uploads against its computes: what overlaps (in the VM).
.PHONY: bench-overlap
$(BUILD)/bench/overlap_bench: tests/bench/overlap_bench.c $(BUILD)/libflex.a | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -o $@ $< $(BUILD)/libflex.a $(LDFLAGS_COMMON) -lm

bench-overlap: kmod $(BUILD)/bench/overlap_bench
	tools/flex-vm --mem 1536 -- $(CURDIR)/$(BUILD)/bench/overlap_bench

# torch-flex's host cost per operator and an MLP's forward pass (in the VM).
.PHONY: bench-torch
bench-torch: kmod torch-flex
	tools/flex-vm --mem 3072 --timeout 900 -- /bin/sh -c \
		'PYTHONPATH="$$1" /usr/bin/python3 -u "$$2"' bench \
		$(abspath $(BUILD))/torch-flex $(CURDIR)/tests/bench/torch_bench.py

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
		--timeout 2700 --out $(CURDIR)/$(DEBUG_RESULTS) $(VM_FLAGS) -- \
		$(CURDIR)/tests/kselftest/run-all $(CURDIR)/$(KSFT_DIR) $(CURDIR)/$(DEBUG_RESULTS) \
		$(CURDIR)/$(DEBUG_KMOD)/kmod/flex.ko; \
	  echo "$$?" > $(DEBUG_RESULTS)/lane.rc; }; \
	rc=$$(cat $(DEBUG_RESULTS)/lane.rc); \
	if [ "$$rc" != 0 ]; then echo "not ok 1 - debug-kernel VM run exited $$rc (see $(DEBUG_RESULTS)/flex-vm)" > $(DEBUG_RESULTS)/lane.tap; \
	else echo "ok 1 - debug-kernel VM run clean (no KASAN/KFENCE/lockdep/UBSAN/kmemleak report)" > $(DEBUG_RESULTS)/lane.tap; fi
	-@tests/canary/run $(CURDIR)/$(DEBUG_RESULTS) > $(DEBUG_RESULTS)/canary.log 2>&1; tail -n 12 $(DEBUG_RESULTS)/canary.log
	@tools/tap-summary $(DEBUG_RESULTS)

# ---- BEGIN soak and fault lanes (tests/soak/, tests/faults/) ----
# Documentation/flex/lanes.rst. Both programs are built into $(KSFT_DIR), so
# run-all runs them in `make check` (a short soak: 10 s; the fault cases
# that need no fault injection) and in `make check-debug` (a 25 s soak; the
# fault-injection cases too). `make soak` and `make faults` run one alone.
SOAK_SECONDS	?= 60
LANE_CFLAGS	 = $(CFLAGS_COMMON) -Itests/soak -Itests/kselftest
LANE_DEPS	:= tests/soak/flex_lane.h $(KSFT_COMMON) uapi/linux/flex.h uapi/linux/flex_isa.h
LANE_BINS	:= $(KSFT_DIR)/flex_soak $(KSFT_DIR)/flex_faults

kselftests: $(LANE_BINS)

$(KSFT_DIR)/flex_soak: tests/soak/flex_soak.c $(LANE_DEPS) | deps
	@mkdir -p $(KSFT_DIR)
	$(CC) $(LANE_CFLAGS) -o $@ $< $(LDFLAGS_COMMON)

$(KSFT_DIR)/flex_faults: tests/faults/flex_faults.c $(LANE_DEPS) | deps
	@mkdir -p $(KSFT_DIR)
	$(CC) $(LANE_CFLAGS) -o $@ $< $(LDFLAGS_COMMON)

.PHONY: soak faults soak-debug faults-debug lanes-debug-kmod
# The soak alone in the VM: make soak SOAK_SECONDS=N (default 60).
soak: kmod $(KSFT_DIR)/flex_soak
	tools/flex-vm --timeout $$(( $(SOAK_SECONDS) + 400 )) $(VM_FLAGS) -- \
		$(CURDIR)/$(KSFT_DIR)/flex_soak --seconds $(SOAK_SECONDS)

# The fault lane alone in the VM; FLEX_KO lets it unload and reload the module.
faults: kmod $(KSFT_DIR)/flex_faults
	tools/flex-vm --timeout 900 $(VM_FLAGS) -- \
		/usr/bin/env FLEX_KO=$(CURDIR)/kmod/flex.ko $(CURDIR)/$(KSFT_DIR)/flex_faults

# The same two under the debug kernel (built once by tools/debug-kernel/build).
# The module is built against it as check-debug builds it, in a directory of
# its own so that the two never clobber each other.
LANES_DEBUG_KMOD := $(BUILD)/lanes-debug-kmod

lanes-debug-kmod: deps
	@kdir=$$(tools/debug-kernel/build | tail -n 1) && rm -rf $(LANES_DEBUG_KMOD) && \
	mkdir -p $(LANES_DEBUG_KMOD) && cp -r Kbuild kmod uapi $(LANES_DEBUG_KMOD)/ && \
	$(MAKE) -C $$kdir/build M=$(CURDIR)/$(LANES_DEBUG_KMOD) modules

soak-debug: lanes-debug-kmod $(KSFT_DIR)/flex_soak
	tools/flex-vm --kernel-build $$(tools/debug-kernel/build | tail -n 1) \
		--module $(CURDIR)/$(LANES_DEBUG_KMOD)/kmod/flex.ko \
		--timeout $$(( $(SOAK_SECONDS) + 900 )) $(VM_FLAGS) -- \
		$(CURDIR)/$(KSFT_DIR)/flex_soak --seconds $(SOAK_SECONDS)

faults-debug: lanes-debug-kmod $(KSFT_DIR)/flex_faults
	tools/flex-vm --kernel-build $$(tools/debug-kernel/build | tail -n 1) \
		--module $(CURDIR)/$(LANES_DEBUG_KMOD)/kmod/flex.ko --timeout 1500 $(VM_FLAGS) -- \
		/usr/bin/env FLEX_KO=$(CURDIR)/$(LANES_DEBUG_KMOD)/kmod/flex.ko \
		$(CURDIR)/$(KSFT_DIR)/flex_faults
# ---- END soak and fault lanes ----

# ---- fuzzing (tests/fuzz/, Documentation/flex/fuzzing.rst) -------------------
# flex_fuzz, a structure-aware fuzzer of the ioctls, mmap and the netlink
# family, runs in the VM lane. make check runs it for 25 s: it is installed
# with the driver tests as build/kselftest/fuzz_short, which run-all runs
# (in make check-debug too). build/kselftest/fuzz_volume then runs it with
# --volume until it has issued 100,000 ioctls, or 1,000,000 under the debug
# kernel.
# make fuzz runs it for FUZZ_SECONDS, then trinity aimed at the device
# nodes, in one VM boot; FUZZ_KERNEL=debug does so under the debug kernel of
# check-debug; FUZZ_MODULE= loads a given flex.ko; FUZZ_ARGS= passes more
# flex_fuzz options. Results in build/results-fuzz/.
FUZZ_DIR	:= $(BUILD)/fuzz
FUZZ_BIN	:= $(FUZZ_DIR)/flex_fuzz
FUZZ_SRCS	:= $(wildcard tests/fuzz/*.c)
FUZZ_RESULTS	:= $(BUILD)/results-fuzz
FUZZ_DEBUG_KMOD	:= $(BUILD)/fuzz-debug-kmod
FUZZ_SECONDS	?= 600
FUZZ_SEED	?=
FUZZ_KERNEL	?= stock
FUZZ_MODULE	?=
FUZZ_ARGS	?=
TRINITY_SYSCALLS ?= 20000
TRINITY_SECONDS	?= 30

$(FUZZ_BIN): $(FUZZ_SRCS) tests/fuzz/fuzz.h tests/kselftest/flex_sysfs.h uapi/linux/flex.h \
	uapi/linux/flex_isa.h uapi/linux/flex_netlink.h | deps
	@mkdir -p $(FUZZ_DIR)
	$(CC) $(CFLAGS_COMMON) -Itests/kselftest -o $@ $(FUZZ_SRCS) \
		$(shell pkg-config --cflags --libs libnl-genl-3.0) $(LDFLAGS_COMMON)

# run-all runs every program in $(KSFT_DIR). Not trinity: under the debug
# kernel it manages about 25 calls in 45 s (make fuzz runs it).
kselftests: $(KSFT_DIR)/fuzz_short $(KSFT_DIR)/fuzz_volume
$(KSFT_DIR)/fuzz_short: tests/fuzz/fuzz_short.sh $(FUZZ_BIN)
	@mkdir -p $(KSFT_DIR)
	install -m 755 $< $@
$(KSFT_DIR)/fuzz_volume: tests/fuzz/fuzz_volume.sh $(FUZZ_BIN)
	@mkdir -p $(KSFT_DIR)
	install -m 755 $< $@

.PHONY: fuzz
fuzz: deps $(FUZZ_BIN)
	@rm -rf $(FUZZ_RESULTS) && mkdir -p $(FUZZ_RESULTS)
	@set -e; \
	if [ "$(FUZZ_KERNEL)" = debug ]; then \
		kdir=$$(tools/debug-kernel/build | tail -n 1); \
		rm -rf $(FUZZ_DEBUG_KMOD) && mkdir -p $(FUZZ_DEBUG_KMOD); \
		cp -r Kbuild kmod uapi $(FUZZ_DEBUG_KMOD)/; \
		$(MAKE) -C $$kdir/build M=$(CURDIR)/$(FUZZ_DEBUG_KMOD) modules; \
		lane="--kernel-build $$kdir --module $(CURDIR)/$(FUZZ_DEBUG_KMOD)/kmod/flex.ko"; \
	elif [ "$(FUZZ_KERNEL)" = stock ] && [ -n "$(FUZZ_MODULE)" ]; then \
		lane="--module $(abspath $(FUZZ_MODULE))"; \
	elif [ "$(FUZZ_KERNEL)" = stock ]; then \
		$(MAKE) --no-print-directory kmod; lane=""; \
	else \
		echo "FUZZ_KERNEL must be stock or debug, not $(FUZZ_KERNEL)" >&2; exit 2; \
	fi; \
	rc=0; tools/flex-vm $$lane --timeout $$(($(FUZZ_SECONDS) + $(TRINITY_SECONDS) + 600)) \
		--out $(CURDIR)/$(FUZZ_RESULTS) $(VM_FLAGS) -- \
		$(CURDIR)/tests/fuzz/run $(CURDIR)/$(FUZZ_BIN) $(CURDIR)/$(FUZZ_RESULTS) \
		$(FUZZ_SECONDS) "$(FUZZ_SEED)" $(TRINITY_SYSCALLS) $(TRINITY_SECONDS) \
		"$(FUZZ_ARGS)" || rc=$$?; \
	if [ $$rc = 0 ] || [ $$rc = 1 ]; then \
		echo "ok 1 - fuzz VM run clean (kernel log: no BUG, WARNING or detector report)" \
			> $(FUZZ_RESULTS)/lane.tap; \
	else \
		echo "not ok 1 - fuzz VM run exited $$rc: 125 the kernel logged a bug or the module" \
			"did not unload, 124 timeout (see $(FUZZ_RESULTS)/flex-vm)" > $(FUZZ_RESULTS)/lane.tap; \
	fi
	@grep -h '^fuzz: ' $(FUZZ_RESULTS)/*.tap || true
	@tools/tap-summary $(FUZZ_RESULTS)
# ---- end of fuzzing ----------------------------------------------------------

# ---- torch lane (tests/torch/, Documentation/flex/testing.rst) ---------------
# torch-flex, the PyTorch 1.13 PrivateUse1 extension (tools/torch-flex/, built
# by `make torch-flex` into build/torch-flex/), in one VM boot:
# tests/torch/run.sh enables a VF and runs tests/torch/test_torch_flex.py on
# the PF (device 0) and the VF (device 1) against PyTorch's CPU results, then
# disables the VF. import torch alone takes about a minute under TCG, and
# torch needs more than flex-vm's default 1024 MB. Alone, make check-torch
# writes build/results-torch/; make check runs check-torch-vm with
# TORCH_RESULTS=build/results/torch, so that its closing line counts the lane.
# TORCH_ARGS= passes options to the suite: TORCH_ARGS="--match 'mm float32'
# --no-big".
TORCH_RESULTS	?= $(BUILD)/results-torch
TORCH_VM_FLAGS	?= --mem 3072 --timeout 900
TORCH_ARGS	?=

.PHONY: check-torch check-torch-vm
check-torch: check-torch-vm
	@tools/tap-summary $(TORCH_RESULTS)

# The VM run alone, without the closing line. A VM run that fails of itself
# (the kernel logged a bug, the module stayed loaded, the timeout) is one
# more failure, in lane.tap.
check-torch-vm: kmod torch-flex
	@rm -rf $(TORCH_RESULTS) && mkdir -p $(TORCH_RESULTS)
	@echo "torch: tests/torch/run.sh in the VM (import torch takes about a minute there)"
	@out=$(abspath $(TORCH_RESULTS)); rc=0; \
	tools/flex-vm $(TORCH_VM_FLAGS) --out $$out -- $(CURDIR)/tests/torch/run.sh \
		$(abspath $(BUILD))/torch-flex $$out $(TORCH_ARGS) || rc=$$?; \
	if [ $$rc = 0 ] || [ $$rc = 1 ]; then \
		echo "ok 1 - torch VM run clean (kernel log: no BUG, WARNING or oops; module unloaded)" \
			> $$out/lane.tap; \
	else \
		echo "not ok 1 - torch VM run exited $$rc: 125 the kernel logged a bug or the module" \
			"did not unload, 124 timeout (see $$out/flex-vm)" > $$out/lane.tap; \
	fi
# ---- end of the torch lane ---------------------------------------------------
