# SPDX-License-Identifier: GPL-2.0
# The tools' shared helpers (tools/shared/tool.h): sizes for people, messages,
# json-c getters. One archive, linked into flexctl, flex-run, flex-demo and
# flex-plan-gen, and into the tests that build in a tool's source
# (test_tool, test_npy, test_memmap, libflex_plan_test). Included by the
# top-level Makefile before the other fragments, whose prerequisites name it.

TOOL_SHARED_SRCS := $(wildcard tools/shared/*.c)
TOOL_SHARED_OBJS := $(patsubst tools/shared/%.c,$(BUILD)/tool-shared/%.o,$(TOOL_SHARED_SRCS))
TOOL_SHARED_LIB	:= $(BUILD)/tool-shared.a
# What a program using tool.h adds to its compile line.
TOOL_SHARED_CFLAGS := -Itools/shared

$(BUILD)/tool-shared/%.o: tools/shared/%.c tools/shared/tool.h | deps
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_COMMON) $(TOOL_SHARED_CFLAGS) $(shell pkg-config --cflags json-c) -c -o $@ $<

$(TOOL_SHARED_LIB): $(TOOL_SHARED_OBJS)
	@rm -f $@
	$(AR) rcs $@ $^
