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
 * between threads working in different regions. Allocate, free and resolve
 * take the region lock with region_lock() and friends below, which skip it
 * while the process has a single thread.
 */
#ifndef FLEX_ALLOCATOR_INTERNAL_H
#define FLEX_ALLOCATOR_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define flex_single_threaded()	(__libc_single_threaded != 0)
#else
#define flex_single_threaded()	false	/* not glibc: always lock */
#endif

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

/* The allocation history ring (alloc_history.c). */
struct alloc_history {
	pthread_mutex_t lock;
	struct flex_alloc_event *ring;
	size_t cap, head, count;
	uint64_t recorded;
};

/* Blocks with stream uses or waiting to be freed, by region and slot (alloc_stream.c). */
struct use_rec;
struct use_map {
	uint32_t *keys;			/* USE_KEY_NONE: empty */
	struct use_rec **vals;
	size_t cap, n;
};

struct flex_alloc {
	struct flex_region_source *src;
	enum flex_alloc_region_strategy region_strategy;
	enum flex_alloc_block_strategy block_strategy;
	unsigned int num_fallback_sizes;
	uint64_t fallback_sizes[FLEX_ALLOC_MAX_FALLBACK_SIZES];
	uint64_t align;			/* a region sized to a request: a multiple of this */
	bool grow;			/* scaled sizes: a region at most what is held */
	uint64_t first_size;		/* ... or this much, with grow */
	unsigned int max_regions;	/* effective: config, table, limit */
	unsigned int flags;
	bool fixed;			/* fixed_regions: never released, never acquired */
	bool debug;
	uint64_t tag;			/* in every index: tells allocators apart */
	char *report_path;

	flex_alloc_log_fn log_fn;
	void *log_user;

	pthread_mutex_t grow_lock;	/* region set changes, pressure callback */
	pthread_mutex_t global_lock;	/* every region's lock with F_GLOBAL_LOCK */
	flex_alloc_pressure_fn pressure_fn;
	void *pressure_user;

	_Atomic bool regions_locked;	/* for good: max_regions, or the table is full */
	_Atomic bool acquire_failed;	/* the last acquisition found no memory */
	_Atomic unsigned int num_regions;
	_Atomic uint64_t peak_allocated_bytes;
	_Atomic uint64_t num_failed_allocs;
	_Atomic uint64_t num_ooms;
	_Atomic uint64_t num_pressure_retries;
	_Atomic uint64_t num_bad_frees;
	/* Changed under grow_lock only. */
	uint64_t reserved_bytes;
	uint64_t peak_reserved_bytes;
	uint64_t num_region_acquires;
	uint64_t num_region_releases;
	struct region *kept_empty;	/* F_RELEASE_EMPTY: the entirely free region kept */

	_Atomic bool recording;		/* the history is on: hist.cap > 0 */
	struct alloc_history hist;

	/*
	 * Stream-ordered frees and stream uses (alloc_stream.c), under
	 * use_lock, taken after a region lock, never before one. Queue
	 * callbacks run with no lock held, on records taken out of the lists;
	 * busy counts the threads doing so, so that a queue is only retired
	 * once none may still call it.
	 */
	pthread_mutex_t use_lock;
	pthread_cond_t use_idle;	/* busy dropped to 0 */
	unsigned int busy;
	struct use_map uses;
	struct use_rec *pend_head, *pend_tail;	/* frees waiting for queues, oldest first */
	uint64_t pending_bytes;
	_Atomic uint64_t num_pending;

	struct region *regions;		/* max_regions slots */
};

#define alloc_log(a, prio, ...) \
	flex_log_emit((a)->log_fn, (a)->log_user, (prio), __VA_ARGS__)
#define alloc_debug(a, ...) \
	do { \
		if (__builtin_expect((a)->debug, 0)) \
			alloc_log((a), FLEX_LOG_DEBUG, "flex_alloc: " __VA_ARGS__); \
	} while (0)

/* Append the report FLEX_ALLOC_REPORT asked for (alloc_report.c). */
void flex_alloc_write_exit_report(struct flex_alloc *a);

/* allocator.c, for alloc_stream.c. */
int flex_alloc_refused_free(struct flex_alloc *a, int err);
/* lookup() below for another file: 0 with the region locked, 1 a 0-byte index, -errno. */
int flex_alloc_lookup(struct flex_alloc *a, flex_alloc_index_t index, const char *what,
		 struct region **rp, uint32_t *slotp);
/* Free the block of @slot in @r (locked, stays locked); see allocator.c. */
int flex_alloc_free_locked(struct flex_alloc *a, struct region *r, uint32_t slot, flex_alloc_index_t index,
		bool *emptied);
/* F_RELEASE_EMPTY: @r became entirely free (no lock held). */
void flex_alloc_region_emptied(struct flex_alloc *a, struct region *r);

/* Stream-ordered frees (alloc_stream.c). */
void flex_deferred_init(struct flex_alloc *a);
void flex_deferred_fini(struct flex_alloc *a);
/* Free @index once the points of @q (may be NULL) and of its recorded uses are reached. */
int flex_deferred_free(struct flex_alloc *a, flex_alloc_index_t index, struct flex_alloc_queue *q,
		  const char *what);
/* Free the deferred blocks whose points are reached (all, waiting, with @wait). Return: bytes. */
uint64_t flex_deferred_reclaim(struct flex_alloc *a, bool wait);
/* Wait for the oldest deferred free and free it. Return: its bytes, 0 if there was none. */
uint64_t flex_deferred_wait_oldest(struct flex_alloc *a);
/* Whether the block of @slot in @r (locked) waits to be freed; if so the index freed. */
bool flex_deferred_pending(struct flex_alloc *a, const struct region *r, uint32_t slot,
		      flex_alloc_index_t *index);

/* The allocation history (alloc_history.c); record through alloc_event(). */
void flex_history_init(struct flex_alloc *a);
void flex_history_fini(struct flex_alloc *a);
void flex_history_add(struct flex_alloc *a, enum flex_alloc_event_action action,
		 enum flex_alloc_kind kind, flex_alloc_index_t index, uint64_t region_id,
		 uint64_t offset, uint64_t size, uint64_t requested);
#define alloc_event(a, ...) \
	do { \
		if (__builtin_expect(atomic_load_explicit(&(a)->recording, memory_order_relaxed), 0)) \
			flex_history_add((a), __VA_ARGS__); \
	} while (0)

static inline flex_alloc_index_t make_index(const struct flex_alloc *a, unsigned int region,
					    uint32_t slot, uint32_t gen)
{
	return (a->tag << INDEX_TAG_SHIFT) | ((uint64_t)gen << INDEX_GEN_SHIFT) |
	       ((uint64_t)region << INDEX_REGION_SHIFT) | slot;
}

/*
 * The index of every 0-byte allocation of @a: generation 0, which no block
 * has, so lookup() refuses it and free and resolve look for it there.
 */
static inline flex_alloc_index_t zero_index(const struct flex_alloc *a)
{
	return a->tag << INDEX_TAG_SHIFT;
}

static inline const char *kind_name(unsigned int kind)
{
	return kind == FLEX_ALLOC_PROGRAM ? "program" : "tensor";
}

/*
 * The region lock of allocate, free and resolve. While the process has a
 * single thread (glibc's __libc_single_threaded, documented for skipping
 * synchronisation) nothing can run concurrently, so the mutex is not
 * touched: uncontended, it still costs two atomic read-modify-writes per
 * call, about a tenth of what an allocate plus a free cost at 10,000 blocks
 * (tests/bench/alloc_bench.c prints both costs). Only a new thread can end
 * that state, and only the thread inside the critical section could create
 * it meanwhile: the one foreign code it calls there is the log callback,
 * which must not call back into the allocator (allocator.h), so neither may
 * a thread it starts. Whether the mutex was taken is kept in r->lock_taken
 * for the unlock; only the holder touches it. Other paths (statistics,
 * reports, region changes) always take the mutex: that is correct either
 * way, and they are not hot.
 * region_trylock() returns 0 when the region is the caller's, else -EBUSY.
 */
static inline int region_trylock(struct region *r)
{
	if (flex_single_threaded())
		return 0;
	if (pthread_mutex_trylock(r->lock))
		return -EBUSY;
	r->lock_taken = true;
	return 0;
}

static inline void region_lock(struct region *r)
{
	if (flex_single_threaded())
		return;
	pthread_mutex_lock(r->lock);
	r->lock_taken = true;
}

static inline void region_unlock(struct region *r)
{
	if (r->lock_taken) {
		r->lock_taken = false;
		pthread_mutex_unlock(r->lock);
	}
}

static inline bool region_present(const struct region *r)
{
	return atomic_load_explicit(&r->present, memory_order_acquire);
}

#endif /* FLEX_ALLOCATOR_INTERNAL_H */
