# SPDX-License-Identifier: GPL-2.0
#
# flex: top-level build. `make help` lists the targets.
#
# The kernel module is built by Kbuild against Debian's 6.1 headers (the
# version linux-headers-amd64 depends on; KDIR= overrides). Userspace
# objects go to $(BUILD). Every target that needs a Debian package depends on
# `deps`, which installs what is missing and does nothing when all is there.

BUILD		?= build
KVER		 = $(shell tools/kver)
KDIR		?= /usr/src/linux-headers-$(KVER)
CC		?= gcc

# Userspace flags shared by libflex, the tools and the tests.
CFLAGS_COMMON	:= -std=gnu11 -O2 -g -Wall -Wextra -Werror=implicit-function-declaration \
		   -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter \
		   -D_GNU_SOURCE -pthread -Iuapi -Ilibflex/include
LDFLAGS_COMMON	:= -pthread

RESULTS		:= $(BUILD)/results

# Where make install puts things; DESTDIR stages them (packaging, tests).
PREFIX		?= /usr/local
BINDIR		?= $(PREFIX)/bin
LIBDIR		?= $(PREFIX)/lib
INCLUDEDIR	?= $(PREFIX)/include
MANDIR		?= $(PREFIX)/share/man
PKGCONFIGDIR	?= $(LIBDIR)/pkgconfig
INSTALL		?= install

.PHONY: all help deps kmod libflex tools check check-unit check-vm check-debug \
	check-install check-checkpatch check-dkms check-torch demo bench clean install uninstall

all: kmod libflex tools torch-flex

help:
	@echo "make            build kmod/flex.ko, libflex and the tools"
	@echo "make deps       install the Debian packages the project needs"
	@echo "make check      all tests: host unit, install and checkpatch, then the driver suite in the VM"
	@echo "                and the torch-flex suite in the VM"
	@echo "make check-debug the VM suite under a KASAN/lockdep/kmemleak kernel"
	@echo "make demo       the main job, then an MLP through torch-flex, in the VM"
	@echo "make bench      the benchmarks"
	@echo "make fuzz       the fuzzer (FUZZ_SECONDS=, FUZZ_SEED=, FUZZ_KERNEL=debug) and trinity, in the VM"
	@echo "make soak       the soak (SOAK_SECONDS=) in the VM"
	@echo "make faults     kills, races and unload cycles in the VM (faults-debug: with fault injection)"
	@echo "make install    libflex, libflex.pc, the tools, their man pages, the module (DKMS)"
	@echo "                and its udev rules (PREFIX=, DESTDIR=, KVER=, DKMS=, UDEVRULESDIR=)"
	@echo "make uninstall  remove what make install installed (the same PREFIX=, DESTDIR=)"
	@echo "make check-install  make install and uninstall in a scratch DESTDIR; libflex.sym"
	@echo "make check-checkpatch  checkpatch.pl --strict on kmod/ (host)"
	@echo "make check-dkms dkms build of the module against the installed headers, loaded in the VM"
	@echo "make check-torch the torch-flex suite in the VM, on the PF and a VF (TORCH_ARGS=)"

deps: $(BUILD)/.deps-stamp
$(BUILD)/.deps-stamp: tools/install-deps
	tools/install-deps
	@mkdir -p $(BUILD) && touch $@

kmod: deps
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

include tools/shared/shared.mk
-include libflex/libflex.mk
include tests/tests.mk
include tools/flexctl/flexctl.mk
include tools/torch-flex/torch-flex.mk
include tools/dkms/module.mk

TOOLS		:= $(BUILD)/flex-demo $(BUILD)/flexctl

tools: $(TOOLS)

$(BUILD)/flex-demo: tools/flex-demo.c tools/shared/tool.h $(TOOL_SHARED_LIB) $(BUILD)/libflex.a | deps
	$(CC) $(CFLAGS_COMMON) $(TOOL_SHARED_CFLAGS) -o $@ $< $(TOOL_SHARED_LIB) $(BUILD)/libflex.a \
		$(LDFLAGS_COMMON)

# The plan generator (compiler stand-in) and the plan runner.
tools: $(BUILD)/flex-plan-gen $(BUILD)/flex-run
$(BUILD)/flex-plan-gen: tools/flex-plan-gen.c tools/shared/tool.h $(TOOL_SHARED_LIB) \
		$(BUILD)/libflex.a | deps
	$(CC) $(CFLAGS_COMMON) $(TOOL_SHARED_CFLAGS) -o $@ $< $(TOOL_SHARED_LIB) $(BUILD)/libflex.a \
		$(LDFLAGS_COMMON)
FLEX_RUN_SRCS	:= $(wildcard tools/flex-run/*.c)
$(BUILD)/flex-run: $(FLEX_RUN_SRCS) $(wildcard tools/flex-run/*.h) tools/shared/tool.h \
		$(TOOL_SHARED_LIB) $(BUILD)/libflex.a | deps
	$(CC) $(CFLAGS_COMMON) -Itools/flex-run $(TOOL_SHARED_CFLAGS) -o $@ $(FLEX_RUN_SRCS) \
		$(TOOL_SHARED_LIB) $(BUILD)/libflex.a $(LDFLAGS_COMMON)

# ---- install ----
# The module (through DKMS when dkms is there) and the udev rules are in
# tools/dkms/module.mk.
INSTALL_BINS	:= flexctl flex-run flex-plan-gen
INSTALL_MAN1	:= Documentation/man/flex-run.1 Documentation/man/flex-plan-gen.1
INSTALL_MAN8	:= Documentation/man/flexctl.8

.PHONY: install-tools uninstall-tools install-man uninstall-man
install: install-lib install-tools install-man install-module install-udev
uninstall: uninstall-lib uninstall-tools uninstall-man uninstall-module uninstall-udev

install-tools: $(addprefix $(BUILD)/,$(INSTALL_BINS))
	$(INSTALL) -d $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 755 $^ $(DESTDIR)$(BINDIR)/
uninstall-tools:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(INSTALL_BINS))

install-man:
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8
	$(INSTALL) -m 644 $(INSTALL_MAN1) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 $(INSTALL_MAN8) $(DESTDIR)$(MANDIR)/man8/
uninstall-man:
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(INSTALL_MAN1))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man8/,$(notdir $(INSTALL_MAN8)))

# Host TAP steps of make check: libflex.sym against the objects, the shared
# library and the headers; make install and uninstall in a scratch DESTDIR.
check-install: libflex $(addprefix $(BUILD)/,$(INSTALL_BINS))
	@mkdir -p $(RESULTS)
	@echo "install: libflex.sym"
	@status=0; \
	tests/install/check-sym $(LIBFLEX_SYM) $(LIBFLEX_SYM_VERSION) $(BUILD)/$(LIBFLEX_SO) \
		$(LIBFLEX_OBJS) \
		> $(RESULTS)/install-sym.tap || status=1; \
	echo "install: make install"; \
	tests/install/check-install "$(MAKE)" $(LIBFLEX_VERSION) $(KVER) > $(RESULTS)/install.tap || status=1; \
	awk '/^(not ok|Bail out)/ { p = 1; print; next } /^ok / { p = 0 } p && /^#/' \
		$(RESULTS)/install-sym.tap $(RESULTS)/install.tap; \
	exit $$status

# The C demo, then Documentation/flex/examples/mlp.py through torch-flex on
# the PF, in one VM boot with the memory torch needs.
demo: kmod tools torch-flex
	tools/flex-vm --mem 3072 --timeout 900 -- /bin/sh -c \
		'"$$1" && echo && PYTHONPATH="$$2" /usr/bin/python3 -u "$$3"' demo \
		$(CURDIR)/$(BUILD)/flex-demo $(abspath $(BUILD))/torch-flex \
		$(CURDIR)/Documentation/flex/examples/mlp.py

check: deps
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	-@$(MAKE) --no-print-directory check-unit
	-@$(MAKE) --no-print-directory check-install
	-@$(MAKE) --no-print-directory check-checkpatch
	-@$(MAKE) --no-print-directory check-dkms
	-@$(MAKE) --no-print-directory check-vm
	-@$(MAKE) --no-print-directory check-torch-vm TORCH_RESULTS=$(RESULTS)/torch || \
		[ -e $(RESULTS)/torch/lane.tap ] || { mkdir -p $(RESULTS)/torch && \
		echo "not ok 1 - the torch lane did not reach the VM (make torch-flex failed?)" \
			> $(RESULTS)/torch/lane.tap; }
	@tools/tap-summary $(RESULTS)

bench: deps
	@mkdir -p $(RESULTS)
	@$(MAKE) --no-print-directory bench-alloc
	@$(MAKE) --no-print-directory bench-queue
	@$(MAKE) --no-print-directory bench-launch
	@$(MAKE) --no-print-directory bench-overlap
	@$(MAKE) --no-print-directory bench-torch

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf $(BUILD)
