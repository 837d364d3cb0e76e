/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One memory region's blocks: placement, splitting and coalescing.
 *
 * Free blocks are the entries of a B+tree keyed by offset whose inner
 * nodes know the largest free block below each child (btree.h): first fit
 * (lowest offset that fits), its mirror (highest offset that fits, for
 * top-down placement) and a freed block's free neighbours are each one
 * descent. With best fit, free blocks are also in a size index
 * (size_index.h) that gives the smallest that fits, lowest offset first,
 * and the by-offset leaf that held it when it was last added or moved
 * there, from which bt_near() finds its entry without a descent. An
 * allocated block is only its AllocationIndex slot
 * (slot_table.h): no tree holds it, since a free finds its neighbours as the
 * free blocks just before and after it. The slot also remembers the leaf
 * of the by-offset tree that held them when the block was carved: a free
 * starts there (bt_near()) and descends from the root only if they have
 * moved too far since, which saves a descent of dependent cache misses on
 * most frees of a large region.
 *
 * Sizes and offsets are kept in 128-byte granules (32 bits: regions up to
 * 512 GiB). Nothing here locks: the caller holds the region's lock.
 */
#ifndef FLEX_REGION_H
#define FLEX_REGION_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <flex/allocator.h>

#include "btree.h"
#include "size_index.h"
#include "slot_table.h"

#define GRANULE_SHIFT	7	/* log2(FLEX_ALLOC_ALIGN) */
#define GRANULES_MAX	UINT32_MAX

struct region {
	/*
	 * Read by other threads without the lock to order regions; written
	 * under the lock after every change.
	 */
	_Atomic uint64_t snap_free;	/* free bytes */
	_Atomic uint64_t snap_largest;	/* largest free block, bytes */
	_Atomic uint64_t snap_allocated; /* allocated bytes, for the peak */
	_Atomic uint64_t snap_allocs;	/* num_allocs: tells other threads of work here */
	_Atomic int present;		/* holds a region now */
	pthread_mutex_t *lock;		/* &own_lock, or the allocator's global lock */

	pthread_mutex_t own_lock __attribute__((aligned(64)));
	bool lock_taken;		/* region_lock() took *lock (allocator_internal.h) */
	const void *owner;		/* thread of the last allocation (allocator.c) */
	uint64_t owner_since;		/* num_allocs when owner last changed */
	bool shared_seen;		/* another thread found it shared: tell owner */
	unsigned int slot;		/* position in the allocator's array */
	bool best_fit;
	struct flex_region src;		/* as the source gave it, to give back */
	uint64_t size;			/* bytes used: src.size rounded down to 128 */
	struct bt by_offset;		/* free blocks: offset -> size, augmented */
	struct size_index by_size;	/* best fit: free blocks by size */

	uint64_t free_bytes;
	uint64_t allocated_bytes;
	uint64_t requested_bytes;
	uint64_t num_live;		/* allocated blocks */
	uint64_t num_allocs;		/* since the allocator was created */
	uint64_t num_frees;

	struct slot_table slots;	/* AllocationIndex slots */
} __attribute__((aligned(64)));

/* What a free merged, for the debug log. */
struct coalesce_info {
	uint64_t start;			/* bytes: the resulting free block */
	uint64_t size;
	bool with_prev;
	bool with_next;
};

static inline uint64_t gran_to_bytes(uint32_t g)
{
	return (uint64_t)g << GRANULE_SHIFT;
}

/* Once, when the allocator is created. */
void flex_region_setup(struct region *r, unsigned int slot, pthread_mutex_t *lock, bool best_fit);
/* Once, when the allocator is destroyed: frees all memory of the slot. */
void flex_region_teardown(struct region *r);

/*
 * Start managing a region the source gave: one free block of its size
 * rounded down to 128 bytes (and to 2^32 - 1 granules). Return: 0, -EINVAL
 * if that leaves nothing, -ENOMEM.
 */
int flex_region_activate(struct region *r, const struct flex_region *src);
/* Stop managing it; every block must be free. */
void flex_region_deactivate(struct region *r);

/*
 * Carve @granules for @kind: top-down for programs, else by the block
 * strategy. Return: 0, the block's start in *start and in *leaf the leaf
 * to give flex_region_free(); -ENOSPC nothing fits; -ENOMEM no host memory
 * (nothing changed).
 */
int flex_region_alloc(struct region *r, uint32_t granules, enum flex_alloc_kind kind,
		 uint32_t *start, uint32_t *leaf);

/*
 * Free the allocated block [@start, @start + @granules) and merge it with
 * free neighbours; @leaf is what flex_region_alloc() gave (0: none). Return: 0,
 * or -ENOMEM (no host memory; nothing changed).
 */
int flex_region_free(struct region *r, uint32_t start, uint32_t granules, uint32_t leaf,
		struct coalesce_info *ci);

/* Largest free block in bytes. */
static inline uint64_t region_largest_free(const struct region *r)
{
	return gran_to_bytes(r->by_offset.max);
}

/* Number of free blocks. */
static inline uint64_t region_num_free(const struct region *r)
{
	return r->by_offset.count;
}

/* Refresh the lock-free snapshot after a change. */
static inline void region_publish(struct region *r)
{
	atomic_store_explicit(&r->snap_free, r->free_bytes, memory_order_relaxed);
	atomic_store_explicit(&r->snap_largest, region_largest_free(r), memory_order_relaxed);
	atomic_store_explicit(&r->snap_allocated, r->allocated_bytes, memory_order_relaxed);
}

/*
 * Call @fn for every block in offset order: @s is the slot (and @slot its
 * number) of an allocated block, NULL for a free one. Stops at a non-zero
 * return and returns it. Return: 0, that, or -ENOMEM.
 */
int flex_region_walk(const struct region *r,
		int (*fn)(void *user, uint32_t start, uint32_t size, const struct slot *s,
			  uint32_t slot),
		void *user);

#endif /* FLEX_REGION_H */
