# SPDX-License-Identifier: GPL-2.0
# flexctl: the command-line tool (tools/flexctl/*.c), built to $(BUILD)/flexctl.
# Included by the top-level Makefile after tests/tests.mk (BUILD, CFLAGS_COMMON,
# LDFLAGS_COMMON, KSFT_DIR and the unit-test variables come from there).
#
#   make tools              builds $(BUILD)/flexctl among the tools
#   tests/unit/test_memmap  links memmap.o (the report -> SVG code)
#   tests/unit/test_nlattrs links nlattrs.o (netlink messages -> JSON)
#   tests/kselftest/flexctl_test  runs $(BUILD)/flexctl, found next to its
#                           own directory ($(KSFT_DIR)/../flexctl)

FLEXCTL_SRCS	:= $(wildcard tools/flexctl/*.c)
FLEXCTL_OBJS	:= $(patsubst tools/flexctl/%.c,$(BUILD)/flexctl.o/%.o,$(FLEXCTL_SRCS))
FLEXCTL_HDRS	:= $(wildcard tools/flexctl/*.h) tools/shared/tool.h uapi/linux/flex.h \
		   uapi/linux/flex_netlink.h
FLEXCTL_PKGS	:= libnl-genl-3.0 libkmod json-c
FLEXCTL_CFLAGS	 = $(CFLAGS_COMMON) -Itools/flexctl $(TOOL_SHARED_CFLAGS) \
		   $(shell pkg-config --cflags $(FLEXCTL_PKGS))
FLEXCTL_LIBS	 = $(shell pkg-config --libs $(FLEXCTL_PKGS))

.PHONY: flexctl
flexctl: $(BUILD)/flexctl

$(BUILD)/flexctl.o/%.o: tools/flexctl/%.c $(FLEXCTL_HDRS) | deps
	@mkdir -p $(dir $@)
	$(CC) $(FLEXCTL_CFLAGS) -c -o $@ $<

$(BUILD)/flexctl: $(FLEXCTL_OBJS) $(TOOL_SHARED_LIB)
	$(CC) -o $@ $^ $(FLEXCTL_LIBS) $(LDFLAGS_COMMON)

# The memory-map unit test links the renderer itself (an explicit rule:
# it takes precedence over the unit-test pattern rule).
$(BUILD)/unit/test_memmap: tests/unit/test_memmap.c $(BUILD)/flexctl.o/memmap.o \
		$(TOOL_SHARED_LIB) $(UNIT_HELPERS) $(UNIT_HDRS) $(BUILD)/libflex.a | deps
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -Itools/flexctl $(TOOL_SHARED_CFLAGS) -o $@ $< \
		$(BUILD)/flexctl.o/memmap.o $(UNIT_HELPERS) $(TOOL_SHARED_LIB) \
		$(BUILD)/libflex.a $(CHECK_LIBS) $(LDFLAGS_COMMON)

# The VM test runs flexctl and parses its --json with json-c.
$(KSFT_DIR)/flexctl_test: $(BUILD)/flexctl
$(KSFT_DIR)/flexctl_test: KSFT_LIBS := $(shell pkg-config --libs json-c)

# The netlink message reader, without a kernel: messages built with libnl.
$(BUILD)/unit/test_nlattrs: tests/unit/test_nlattrs.c $(BUILD)/flexctl.o/nlattrs.o \
		$(TOOL_SHARED_LIB) $(UNIT_HELPERS) $(UNIT_HDRS) $(BUILD)/libflex.a | deps
	@mkdir -p $(dir $@)
	$(CC) $(UNIT_CFLAGS) -Itools/flexctl $(TOOL_SHARED_CFLAGS) \
		$(shell pkg-config --cflags libnl-genl-3.0) -o $@ $< $(BUILD)/flexctl.o/nlattrs.o \
		$(UNIT_HELPERS) $(TOOL_SHARED_LIB) $(BUILD)/libflex.a $(CHECK_LIBS) \
		$(shell pkg-config --libs libnl-genl-3.0) $(LDFLAGS_COMMON)
