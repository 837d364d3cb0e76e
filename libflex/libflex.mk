# SPDX-License-Identifier: GPL-2.0
# libflex: the userspace library, its Check unit tests and the allocator
# benchmark. Included by the top-level Makefile (BUILD, CFLAGS_COMMON,
# LDFLAGS_COMMON, RESULTS come from there).
#
#   make libflex      $(BUILD)/libflex.a and $(BUILD)/libflex.so.$(LIBFLEX_VERSION), with
#                     the links libflex.so.$(LIBFLEX_MAJOR) (its soname) and libflex.so
#   make libflex-sym  rewrite libflex/libflex.sym from the FLEX_EXPORT functions
#   make install-lib  the headers, both libraries and libflex.pc (uninstall-lib)
#   make check-unit   every tests/unit/test_<name>.c, TAP in $(RESULTS)/unit-<name>.tap;
#                     the threaded tests again under ThreadSanitizer (unit-threads-tsan.tap)
#   make bench-alloc  tests/bench/alloc_bench.c at -O2: the `bench:` lines

# The library's version, written only here: the shared object's file name,
# its soname (the major number) and libflex.pc's Version.
LIBFLEX_VERSION	:= 1.0.0
LIBFLEX_MAJOR	:= $(firstword $(subst ., ,$(LIBFLEX_VERSION)))
LIBFLEX_SO	:= libflex.so.$(LIBFLEX_VERSION)
LIBFLEX_SONAME	:= libflex.so.$(LIBFLEX_MAJOR)
# The exported ABI: every FLEX_EXPORT function at version LIBFLEX_<major>,
# nothing else (make libflex-sym writes it; make check-install compares).
LIBFLEX_SYM	:= libflex/libflex.sym
LIBFLEX_SYM_VERSION := LIBFLEX_$(LIBFLEX_MAJOR)

LIBFLEX_SRCS	:= $(wildcard libflex/src/*.c)
# The uapi headers the public headers include.
LIBFLEX_UAPI_HDRS := uapi/linux/flex.h uapi/linux/flex_isa.h
LIBFLEX_HDRS	:= $(wildcard libflex/include/flex/*.h libflex/src/*.h) $(LIBFLEX_UAPI_HDRS)
LIBFLEX_OBJS	:= $(patsubst libflex/src/%.c,$(BUILD)/libflex/%.o,$(LIBFLEX_SRCS))
# Only functions marked FLEX_EXPORT (the public headers' API) are visible.
LIBFLEX_CFLAGS	:= $(CFLAGS_COMMON) -fPIC -fvisibility=hidden
# json-c parses plan manifests (manifest.c): everything linking libflex needs it.
LDFLAGS_COMMON	+= $(shell pkg-config --libs json-c)

# Check runs the tests; json-c parses the JSON reports they check.
CHECK_CFLAGS	 = $(shell pkg-config --cflags check json-c)
CHECK_LIBS	 = $(shell pkg-config --libs check json-c)

UNIT_SRCS	:= $(wildcard tests/unit/test_*.c)
UNIT_NAMES	:= $(patsubst tests/unit/test_%.c,%,$(UNIT_SRCS))
UNIT_BINS	:= $(addprefix $(BUILD)/unit/test_,$(UNIT_NAMES))
UNIT_HELPERS	:= $(filter-out $(UNIT_SRCS),$(wildcard tests/unit/*.c))
UNIT_HDRS	:= $(wildcard tests/unit/*.h)
# -Ilibflex/src: white-box tests of internal data structures (btree.h).
UNIT_CFLAGS	 = $(CFLAGS_COMMON) -Itests/unit -Ilibflex/src $(CHECK_CFLAGS)

# ThreadSanitizer build of the library and the threaded tests.
TSAN_FLAGS	:= -fsanitize=thread -O1 -g
TSAN_OBJS	:= $(patsubst libflex/src/%.c,$(BUILD)/tsan/libflex/%.o,$(LIBFLEX_SRCS))
TSAN_TESTS	:= threads

.PHONY: libflex libflex-sym check-unit unit-tests bench-alloc
# Built through a pattern chain: keep them, they are not throwaway intermediates.
.SECONDARY: $(TSAN_OBJS)

libflex: $(BUILD)/libflex.a $(BUILD)/libflex.so $(BUILD)/$(LIBFLEX_SONAME)

$(BUILD)/libflex/%.o: libflex/src/%.c $(LIBFLEX_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(LIBFLEX_CFLAGS) -c -o $@ $<

$(BUILD)/libflex.a: $(LIBFLEX_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/$(LIBFLEX_SO): $(LIBFLEX_OBJS) $(LIBFLEX_SYM)
	$(CC) -shared -Wl,-soname,$(LIBFLEX_SONAME) -Wl,--version-script=$(LIBFLEX_SYM) \
		-Wl,-z,defs -o $@ $(LIBFLEX_OBJS) $(LDFLAGS_COMMON)

# The soname link, which programs linked with -lflex load, and the name they
# link with.
$(BUILD)/$(LIBFLEX_SONAME) $(BUILD)/libflex.so: $(BUILD)/$(LIBFLEX_SO)
	ln -sf $(LIBFLEX_SO) $@

# After adding, renaming or removing a FLEX_EXPORT function.
libflex-sym: $(LIBFLEX_OBJS)
	tools/libflex-sym $(LIBFLEX_SYM_VERSION) $(LIBFLEX_OBJS) > $(LIBFLEX_SYM).tmp
	mv $(LIBFLEX_SYM).tmp $(LIBFLEX_SYM)

# ---- unit tests ----

$(BUILD)/unit/test_%: tests/unit/test_%.c $(UNIT_HELPERS) $(UNIT_HDRS) $(BUILD)/libflex.a | deps
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(UNIT_TOOL_CFLAGS) -o $@ $< $(UNIT_HELPERS) $(UNIT_TOOL_LIBS) \
		$(BUILD)/libflex.a $(CHECK_LIBS) $(LDFLAGS_COMMON)
# Tests of the tools' code build in a tool's source or link the tools' shared
# helpers (tools/shared/shared.mk).
UNIT_TOOL_TESTS	:= $(BUILD)/unit/test_npy $(BUILD)/unit/test_tool
$(UNIT_TOOL_TESTS): $(TOOL_SHARED_LIB) tools/shared/tool.h
$(UNIT_TOOL_TESTS): UNIT_TOOL_CFLAGS = $(TOOL_SHARED_CFLAGS)
$(UNIT_TOOL_TESTS): UNIT_TOOL_LIBS = $(TOOL_SHARED_LIB)
# test_npy builds in flex-run's npy.c.
$(BUILD)/unit/test_npy: tools/flex-run/npy.c tools/flex-run/npy.h

$(BUILD)/tsan/libflex/%.o: libflex/src/%.c $(LIBFLEX_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(TSAN_FLAGS) -c -o $@ $<

$(BUILD)/tsan/test_%: tests/unit/test_%.c $(UNIT_HELPERS) $(UNIT_HDRS) $(TSAN_OBJS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) $(TSAN_FLAGS) -o $@ $< $(UNIT_HELPERS) $(TSAN_OBJS) \
		$(CHECK_LIBS) $(LDFLAGS_COMMON)

unit-tests: $(UNIT_BINS) $(addprefix $(BUILD)/tsan/test_,$(TSAN_TESTS))

# Every program runs even if an earlier one failed; the target fails if any did.
# Check writes TAP to CK_TAP_LOG_FILE_NAME. Under TSan, Check runs each test in
# the same process (CK_FORK=no); a race stops it with exit code 66, recorded
# as a failed TAP line since Check cannot write one then.
check-unit: unit-tests
	@mkdir -p $(RESULTS)
	@status=0; \
	for t in $(UNIT_NAMES); do \
		echo "unit: $$t"; \
		CK_TAP_LOG_FILE_NAME=$(RESULTS)/unit-$$t.tap $(BUILD)/unit/test_$$t || status=1; \
	done; \
	for t in $(TSAN_TESTS); do \
		echo "unit: $$t under ThreadSanitizer"; \
		tap=$(RESULTS)/unit-$$t-tsan.tap; \
		TSAN_OPTIONS="halt_on_error=1 exitcode=66" CK_FORK=no \
		CK_TAP_LOG_FILE_NAME=$$tap $(BUILD)/tsan/test_$$t; rc=$$?; \
		if [ $$rc -ne 0 ]; then status=1; fi; \
		if [ $$rc -eq 66 ] || [ $$rc -gt 128 ]; then \
			echo "not ok 9999 - $$t: ThreadSanitizer report or crash (exit $$rc)" >> $$tap; \
		fi; \
	done; \
	exit $$status

# ---- benchmark ----

$(BUILD)/bench/alloc_bench: tests/bench/alloc_bench.c $(BUILD)/libflex.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) -O2 -o $@ $< $(BUILD)/libflex.a $(LDFLAGS_COMMON) -lm

bench-alloc: $(BUILD)/bench/alloc_bench
	$(BUILD)/bench/alloc_bench

# ---- install (make install-lib, make uninstall-lib) ----
# The public headers go to $(INCLUDEDIR)/flex/, the uapi headers they
# include to $(INCLUDEDIR)/flex/uapi/linux/, which libflex.pc's Cflags add
# (as libdrm ships its copy of drm.h): an install with PREFIX=/usr puts
# nothing in /usr/include/linux/, the kernel headers package's directory.
LIBFLEX_PUB_HDRS := $(wildcard libflex/include/flex/*.h)
LIBFLEX_INCDIR	 = $(INCLUDEDIR)/flex
LIBFLEX_INSTALLED = $(addprefix $(LIBFLEX_INCDIR)/,$(notdir $(LIBFLEX_PUB_HDRS))) \
		   $(addprefix $(LIBFLEX_INCDIR)/uapi/linux/,$(notdir $(LIBFLEX_UAPI_HDRS))) \
		   $(addprefix $(LIBDIR)/,$(LIBFLEX_SO) $(LIBFLEX_SONAME) libflex.so libflex.a) \
		   $(PKGCONFIGDIR)/libflex.pc
# Installing into the running system as root: refresh the loader's cache.
LDCONFIG	 = if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig; fi

.PHONY: install-lib uninstall-lib

install-lib: libflex
	$(INSTALL) -d $(DESTDIR)$(LIBFLEX_INCDIR)/uapi/linux $(DESTDIR)$(LIBDIR) \
		$(DESTDIR)$(PKGCONFIGDIR)
	$(INSTALL) -m 644 $(LIBFLEX_PUB_HDRS) $(DESTDIR)$(LIBFLEX_INCDIR)/
	$(INSTALL) -m 644 $(LIBFLEX_UAPI_HDRS) $(DESTDIR)$(LIBFLEX_INCDIR)/uapi/linux/
	$(INSTALL) -m 755 $(BUILD)/$(LIBFLEX_SO) $(DESTDIR)$(LIBDIR)/
	ln -sf $(LIBFLEX_SO) $(DESTDIR)$(LIBDIR)/$(LIBFLEX_SONAME)
	ln -sf $(LIBFLEX_SO) $(DESTDIR)$(LIBDIR)/libflex.so
	$(INSTALL) -m 644 $(BUILD)/libflex.a $(DESTDIR)$(LIBDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(LIBFLEX_VERSION)|' \
		libflex/libflex.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/libflex.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/libflex.pc
	@$(LDCONFIG)

uninstall-lib:
	rm -f $(addprefix $(DESTDIR),$(LIBFLEX_INSTALLED))
	for d in $(LIBFLEX_INCDIR)/uapi/linux $(LIBFLEX_INCDIR)/uapi $(LIBFLEX_INCDIR); do \
		[ ! -d $(DESTDIR)$$d ] || rmdir --ignore-fail-on-non-empty $(DESTDIR)$$d; done
	@$(LDCONFIG)
