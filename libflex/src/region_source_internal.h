/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A region source: its callbacks and reference count, shared by
 * region_source.c (the wrapper) and region_source_memory.c (which
 * recognises its own sources by their callbacks).
 */
#ifndef FLEX_REGION_SOURCE_INTERNAL_H
#define FLEX_REGION_SOURCE_INTERNAL_H

#include <stdatomic.h>

#include <flex/region_source.h>

struct flex_region_source {
	struct flex_region_source_ops ops;
	void *user;
	unsigned int table_entries;
	atomic_uint refs;
};

#endif /* FLEX_REGION_SOURCE_INTERNAL_H */
