# SPDX-License-Identifier: GPL-2.0
#
# torch-flex: the PyTorch 1.13 extension (tools/torch-flex/csrc/) and its
# Python package (tools/torch-flex/torch_flex/), built into
# $(BUILD)/torch-flex/torch_flex/ so that
#   PYTHONPATH=$(BUILD)/torch-flex /usr/bin/python3 -c 'import torch_flex'
# works. Compiled with the flags torch.utils.cpp_extension would use (asked
# of Debian's python3-torch once, when this file is read), linked with
# libflex.a.

TORCH_PY	:= /usr/bin/python3
TORCH_FLEX_DIR	:= $(BUILD)/torch-flex
TORCH_FLEX_PKG	:= $(TORCH_FLEX_DIR)/torch_flex
TORCH_FLEX_SRCS	:= $(wildcard tools/torch-flex/csrc/*.cpp)
TORCH_FLEX_OBJS	:= $(patsubst tools/torch-flex/csrc/%.cpp,$(TORCH_FLEX_DIR)/obj/%.o,$(TORCH_FLEX_SRCS))
TORCH_FLEX_PY	:= $(patsubst tools/torch-flex/%,$(TORCH_FLEX_DIR)/%,$(wildcard tools/torch-flex/torch_flex/*.py))

# Asked lazily (= not :=), by the torch-flex rules only: a machine without
# python3-torch still builds everything else.
TORCH_CONFIG	:= tools/torch-flex/torch-config
TORCH_CXXFLAGS	 = -std=c++17 -O2 -g -fPIC -Wall -Wextra -Wno-unused-parameter \
		   -DTORCH_EXTENSION_NAME=_C -DTORCH_API_INCLUDE_EXTENSION_H \
		   -Iuapi -Ilibflex/include $(shell $(TORCH_CONFIG) --cflags 2>/dev/null)
TORCH_LDFLAGS	 = $(shell $(TORCH_CONFIG) --libs 2>/dev/null)
TORCH_EXT	 = $(shell $(TORCH_CONFIG) --ext-suffix 2>/dev/null)

.PHONY: torch-flex
torch-flex: $(TORCH_FLEX_PKG)/.built

$(TORCH_FLEX_DIR)/obj/%.o: tools/torch-flex/csrc/%.cpp tools/torch-flex/csrc/torch_flex.h \
		$(LIBFLEX_HDRS) | deps
	@mkdir -p $(dir $@)
	$(CXX) $(TORCH_CXXFLAGS) -c -o $@ $<

$(TORCH_FLEX_PKG)/.built: $(TORCH_FLEX_OBJS) $(BUILD)/libflex.a $(TORCH_FLEX_PY)
	@mkdir -p $(TORCH_FLEX_PKG)
	rm -f $(TORCH_FLEX_PKG)/_C*.so
	$(CXX) -shared -o $(TORCH_FLEX_PKG)/_C$(TORCH_EXT) $(TORCH_FLEX_OBJS) $(BUILD)/libflex.a \
		-ljson-c $(TORCH_LDFLAGS) -pthread
	touch $@

$(TORCH_FLEX_DIR)/torch_flex/%.py: tools/torch-flex/torch_flex/%.py
	@mkdir -p $(dir $@)
	cp $< $@
