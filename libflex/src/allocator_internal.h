/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FlexAllocator's state, shared by allocator.c (allocation, regions) and
 * alloc_report.c (statistics, walks, reports).
 *
 * Locking: grow_lock serialises acquiring and releasing regions; each
 * region's lock (region.lock) protects its blocks, slots and counters.
 * grow_lock may be taken before a region lock, never after; at most one
 * region lock is held at a time. Counters that span regions are atomics,
 * touched only on rare events: the hot path shares no written cache line
 * between threads working in different regions.
 */
#ifndef FLEX_ALLOCATOR_INTERNAL_H
#define FLEX_ALLOCATOR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include <flex/allocator.h>

#include "log.h"
#include "region.h"

/*
 * AllocationIndex layout, from bit 0: slot (SLOT_BITS), region slot
 * (INDEX_REGION_BITS), slot generation (SLOT_GEN_BITS), allocator tag
 * (the rest). The generation is never 0, so neither is an index.
 */
#define INDEX_REGION_BITS	6
#define INDEX_REGION_SHIFT	SLOT_BITS
#define INDEX_GEN_SHIFT		(INDEX_REGION_SHIFT + INDEX_REGION_BITS)
#define INDEX_TAG_SHIFT		(INDEX_GEN_SHIFT + SLOT_GEN_BITS)
#define INDEX_TAG_BITS		(64 - INDEX_TAG_SHIFT)

_Static_assert((1U << INDEX_REGION_BITS) >= FLEX_ALLOC_REGIONS_LIMIT,
	       "region slots must fit in an index");
_Static_assert(INDEX_TAG_BITS >= 12, "an index needs room for the allocator tag");

struct flex_alloc {
	struct flex_region_source *src;
	enum flex_alloc_region_strategy region_strategy;
	enum flex_alloc_block_strategy block_strategy;
	unsigned int num_fallback_sizes;
	uint64_t fallback_sizes[FLEX_ALLOC_MAX_FALLBACK_SIZES];
	unsigned int max_regions;	/* effective: config, table, limit */
	unsigned int flags;
	bool debug;
	uint64_t tag;			/* in every index: tells allocators apart */
	char *report_path;

	flex_alloc_log_fn log_fn;
	void *log_user;

	pthread_mutex_t grow_lock;	/* region set changes, pressure callback */
	pthread_mutex_t global_lock;	/* every region's lock with F_GLOBAL_LOCK */
	flex_alloc_pressure_fn pressure_fn;
	void *pressure_user;

	_Atomic bool regions_locked;
	_Atomic unsigned int num_regions;
	_Atomic uint64_t peak_allocated_bytes;
	_Atomic uint64_t num_failed_allocs;
	_Atomic uint64_t num_bad_frees;
	/* Changed under grow_lock only. */
	uint64_t reserved_bytes;
	uint64_t peak_reserved_bytes;
	uint64_t num_region_acquires;
	uint64_t num_region_releases;

	struct region *regions;		/* max_regions slots */
};

#define alloc_log(a, prio, ...) \
	log_emit((a)->log_fn, (a)->log_user, (prio), __VA_ARGS__)
#define alloc_debug(a, ...) \
	do { \
		if (__builtin_expect((a)->debug, 0)) \
			alloc_log((a), FLEX_LOG_DEBUG, "flex_alloc: " __VA_ARGS__); \
	} while (0)

/* Append the report FLEX_ALLOC_REPORT asked for (alloc_report.c). */
void alloc_write_exit_report(struct flex_alloc *a);

static inline flex_alloc_index_t make_index(const struct flex_alloc *a, unsigned int region,
					    uint32_t slot, uint32_t gen)
{
	return (a->tag << INDEX_TAG_SHIFT) | ((uint64_t)gen << INDEX_GEN_SHIFT) |
	       ((uint64_t)region << INDEX_REGION_SHIFT) | slot;
}

static inline const char *kind_name(unsigned int kind)
{
	return kind == FLEX_ALLOC_PROGRAM ? "program" : "tensor";
}

static inline bool region_present(const struct region *r)
{
	return atomic_load_explicit(&r->present, memory_order_acquire);
}

#endif /* FLEX_ALLOCATOR_INTERNAL_H */
