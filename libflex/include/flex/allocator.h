/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/allocator.h - FlexAllocator: device memory for tensors and programs.
 *
 * FlexAllocator takes a few large regions from a region source
 * (flex/region_source.h) and carves allocations out of them as contiguous,
 * 128-byte-aligned blocks, as the SpyreAllocator/FlexAllocator RFC says:
 *
 *  - Callers get an opaque AllocationIndex (flex_alloc_index_t) and turn it
 *    into a VirtualAddress (struct flex_vaddr: region_id + offset) with
 *    flex_alloc_block_resolve(). An index that was freed, or never came from this
 *    allocator, is refused (-ENOENT / -EINVAL), never resolved to someone
 *    else's block.
 *  - Sizes are rounded up to a multiple of 128 bytes. A 0-byte allocation
 *    (Since: 1.0; PyTorch makes many empty storages) takes no block, no
 *    slot and no region: its index frees (any number of times) and
 *    resolves to region FLEX_ALLOC_NO_REGION, offset 0, size 0, and it is
 *    counted in no statistic.
 *  - A free block is split on allocation; a freed block is merged with
 *    both neighbours, so no two free blocks are ever adjacent.
 *  - Regions are acquired lazily, trying each fallback size that can hold
 *    the request in turn; a request larger than every fallback size gets a
 *    region of its own size (rounded up to the source's alignment), and one
 *    between fallback sizes tries its own size after the larger ones. A
 *    region that cannot hold the request is never acquired for it.
 *  - Default sizes (Since: 1.0) are scaled to the memory behind the source
 *    (flex_region_source_get_info(): the device's capacity, or the
 *    function's quota when lower), C, halving 7 times for the fallbacks.
 *    With FILL_FIRST: C/4 down to C/512, and a new region is no larger
 *    than what the allocator holds already, and at least C/64 (the first
 *    region). So a small workload reserves C/64, reserved memory at most
 *    doubles per region, and 8 regions (a VF's lookup table) reach all of
 *    C: on a 128 GiB device, regions of 2, 2, 4, 8, 16, 32, 32, 32 GiB.
 *    With LOAD_BALANCING, which acquires before every allocation and so
 *    holds max_regions regions after as many allocations anyway:
 *    C/max_regions down to C/(128 max_regions), the most regions to spread
 *    over (10.7 GiB each on 128 GiB with 12). A source that cannot tell
 *    its capacity gets the RFC's 12, 8, 4 GiB.
 *  - The region set is locked for good when max_regions is reached
 *    (default 12, never more than the source's lookup table) or the
 *    source's table is full (-ENOSPC from it). A source out of memory
 *    (every size failed with -ENOMEM, -EDQUOT, -E2BIG) is not a lock:
 *    another tenant may free memory, so the next allocation that finds no
 *    room tries again. Giving a region back unlocks. Alternatively
 *    (fixed_regions) a fixed set is acquired up front and the set is
 *    locked at once.
 *  - Region strategy LOAD_BALANCING: while the set is not locked and the
 *    last acquisition succeeded, every allocation first acquires a new
 *    region; then regions are tried from the most free bytes to the least.
 *    FILL_FIRST: regions whose largest free block fits are tried from the
 *    least free bytes to the most; a new region is acquired only when none
 *    fits. Ties go to the region acquired first. REGION_AUTO (default,
 *    Since: 1.0): FILL_FIRST when the source's lookup table has at most
 *    FLEX_ALLOC_SCARCE_TABLE entries (a VF: its few entries are shared by
 *    everything the process allocates, and each region is memory other
 *    tenants cannot have), LOAD_BALANCING otherwise (a PF, no table).
 *  - Block strategy FIRST_FIT (default): the lowest-offset free block that
 *    fits. BEST_FIT: the smallest free block that fits, the lowest offset
 *    among equal sizes. Both find it in O(log n): free blocks are in a
 *    B+tree by offset whose inner nodes know the largest free block under
 *    each child; best fit also keeps them by size, in a bin per size below
 *    2 MiB found through a bitmap, and larger ones in a B+tree by (size,
 *    offset). An allocation is found from its index in O(1) (a table of
 *    slots), and its free neighbours, when it is freed, from the tree leaf
 *    that held them when it was allocated (checked, and looked up from the
 *    root only if they have moved on); in the same way a best fit from a
 *    bin finds its block in the by-offset tree from the leaf that held it,
 *    or its neighbours, when it last changed. No operation calls malloc except to
 *    grow these structures.
 *  - Program binaries (FLEX_ALLOC_PROGRAM) are placed top-down: the
 *    highest free block that fits, carved from its top end, whatever the
 *    block strategy. Tensors fill regions from the bottom, so binaries stay
 *    packed at the top instead of splitting tensor space, without giving
 *    them a region of their own (which would cost one of the 8-16 lookup
 *    table entries a virtual function has, and a size to guess).
 *  - Regions are kept until the allocator is destroyed, unless
 *    FLEX_ALLOC_F_RELEASE_EMPTY: then a region that becomes entirely free
 *    is kept for the next allocations and the one kept before it (if still
 *    entirely free) is given back, so at most one empty region is held and
 *    a loop that allocates and frees one block acquires one region, not
 *    one per iteration (Since: 1.0). flex_alloc_trim() gives back every
 *    entirely free region (PyTorch's empty_cache()).
 *  - When nothing fits and no region can be acquired (Since: 1.0), the
 *    blocks freed after queued work that has run are freed, entirely free
 *    regions (of sizes that did not fit) are given back (not with
 *    fixed_regions), and the oldest blocks still waiting for queued work
 *    are waited for one at a time (see "Stream-ordered memory" below),
 *    the allocation retried after each step that made room. Then the
 *    memory-pressure callback (if any) is called with no lock held, and
 *    the allocation is retried once; if it fails again the call returns
 *    -ENOMEM and flex_last_error() names the size asked, the free
 *    total and the largest free block of every region, what waits for
 *    queued work, and what the source has free.
 *
 * Thread safety: every function may be called from any number of threads
 * at once. Each region has its own lock, and threads working in different
 * regions write no shared cache line; FLEX_ALLOC_F_GLOBAL_LOCK selects the
 * RFC's single lock instead (tests/bench/alloc_bench.c measures both: with
 * one lock, two threads get far less done than one). A thread that never
 * meets another one (any single-threaded use, or threads taking over from
 * one another as a pool hands work around) gets exactly the strategy's
 * region. A thread meets another when a region it wants is locked by
 * another thread, or is shared: its allocations would pass from one thread
 * to another for the second time within 256 allocations there. Such a
 * region is skipped for the next candidate (used only if no other fits),
 * and from then on the thread first tries the region of its previous
 * allocation when that one fits, waiting for its lock if another thread
 * holds it (most likely to free a block it allocated there); so does the
 * thread it met, once it allocates in the shared region again. The thread
 * keeps to its region while other threads allocate in other regions of the
 * allocator (it looks every 64th allocation), and follows the strategy
 * again 65536 allocations after it last saw them do so. The strategies
 * would send every thread to every region, and the cache lines moving
 * between cores would cost more than the allocation. Under concurrency an
 * out-of-memory decision is made region by region: a block freed meanwhile
 * in a region already examined is not seen (the pressure-callback retry
 * may).
 *
 * Environment, read by flex_alloc_new():
 *   FLEX_ALLOC_DEBUG=1       log every acquire, allocate, free and coalesce
 *                            (to stderr, or to the config's log_fn).
 *   FLEX_ALLOC_REPORT=path   when the allocator is destroyed (at exit, for
 *                            a program that cleans up), append a memory
 *                            report to path: one JSON object per line if
 *                            path ends in ".json", CSV otherwise.
 *   FLEX_ALLOC_HISTORY=N     keep the last N events of the allocation
 *                            history (flex_alloc_record_history()).
 */
#ifndef FLEX_ALLOCATOR_H
#define FLEX_ALLOCATOR_H

#include <stdint.h>
#include <stdio.h>

#include <flex/region_source.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Alignment and minimum size of every block, in bytes. */
#define FLEX_ALLOC_ALIGN		128ULL
/* Default and largest max_regions. */
#define FLEX_ALLOC_DEFAULT_MAX_REGIONS	12U
#define FLEX_ALLOC_REGIONS_LIMIT	64U
/* Most fallback sizes a config holds. */
#define FLEX_ALLOC_MAX_FALLBACK_SIZES	16U
/* FLEX_ALLOC_REGION_AUTO picks FillFirst on a table this small (Since: 1.0). */
#define FLEX_ALLOC_SCARCE_TABLE		16U
/* Largest region the allocator uses (2^32 - 1 blocks of 128 bytes, about
 * 512 GiB); of a bigger region it uses this much. A region holds at most
 * 4,194,304 live allocations; past that it counts as full. */
#define FLEX_ALLOC_REGION_SIZE_LIMIT	((FLEX_ALLOC_ALIGN << 32) - FLEX_ALLOC_ALIGN)

/*
 * AllocationIndex: an opaque handle for one allocation. Never 0, so 0
 * (FLEX_ALLOC_INDEX_NONE) can mean "no allocation".
 */
typedef uint64_t flex_alloc_index_t;
#define FLEX_ALLOC_INDEX_NONE		((flex_alloc_index_t)0)
/* The region_id a 0-byte allocation resolves to (Since: 1.0). */
#define FLEX_ALLOC_NO_REGION		UINT64_MAX

/* VirtualAddress: where an allocation is on the device. */
struct flex_vaddr {
	uint64_t region_id;	/* physical address (PF) or table index (VF) */
	uint64_t offset;	/* byte offset in the region, 128-byte aligned */
};

enum flex_alloc_region_strategy {
	FLEX_ALLOC_LOAD_BALANCING = 0,	/* most free region first */
	FLEX_ALLOC_FILL_FIRST = 1,	/* least free region that fits first */
	FLEX_ALLOC_REGION_AUTO = 2,	/* by the source's table (default; Since: 1.0) */
};

enum flex_alloc_block_strategy {
	FLEX_ALLOC_FIRST_FIT = 0,	/* lowest offset that fits (default) */
	FLEX_ALLOC_BEST_FIT = 1,	/* smallest block that fits */
};

enum flex_alloc_kind {
	FLEX_ALLOC_TENSOR = 0,		/* bottom-up, by the block strategy */
	FLEX_ALLOC_PROGRAM = 1,		/* top-down: highest block that fits */
};

/* Config flags. */
#define FLEX_ALLOC_F_RELEASE_EMPTY	(1U << 0) /* give back regions that become entirely free, but one */
#define FLEX_ALLOC_F_GLOBAL_LOCK	(1U << 1) /* one lock for all regions (the RFC's) */
#define FLEX_ALLOC_F_DEBUG		(1U << 2) /* as FLEX_ALLOC_DEBUG=1 */

/* Log priorities, as syslog's. */
#define FLEX_LOG_ERR			3
#define FLEX_LOG_DEBUG			7

struct flex_alloc;

/**
 * typedef flex_alloc_log_fn - receives log lines (without a newline).
 * Called with a region lock held: it must not call back into the allocator.
 */
typedef void (*flex_alloc_log_fn)(void *user, int priority, const char *msg);

/**
 * typedef flex_alloc_pressure_fn - memory-pressure callback.
 * @a:		the allocator.
 * @size:	the size asked (before rounding) that does not fit.
 * @user:	as registered.
 *
 * Called with no lock held, possibly from several threads at once, when an
 * allocation found no room; it may free allocations (e.g. drop caches).
 * The allocation is then retried once.
 */
typedef void (*flex_alloc_pressure_fn)(struct flex_alloc *a, uint64_t size, void *user);

/**
 * struct flex_alloc_config - options of flex_alloc_new().
 * Fill it with flex_alloc_config_init() first, then change what you need.
 * @region_strategy, @block_strategy: see the top of this file (default
 *		FLEX_ALLOC_REGION_AUTO, FLEX_ALLOC_FIRST_FIT).
 * @num_fallback_sizes: entries used in @fallback_sizes; 0 (the default,
 *		Since: 1.0) for sizes scaled to the source (see the top).
 * @fallback_sizes: region sizes to try, in order, each a non-zero multiple
 *		of FLEX_ALLOC_ALIGN.
 * @max_regions: most regions held at once (default 12; capped by the
 *		source's table entries; at most FLEX_ALLOC_REGIONS_LIMIT).
 * @fixed_regions: 0 to acquire regions lazily (the default); N to acquire
 *		N regions up front and never again (the region set is locked
 *		from the start). Must not exceed max_regions.
 * @flags:	FLEX_ALLOC_F_*. RELEASE_EMPTY cannot be combined with
 *		fixed_regions (a released region could not come back).
 * @pressure_fn, @pressure_user: memory-pressure callback, or NULL.
 * @log_fn, @log_user: where log lines go; NULL for stderr.
 * @report_path: file the report is appended to on destroy (JSON if it
 *		ends in ".json", else CSV); NULL to use FLEX_ALLOC_REPORT (no
 *		report if unset either).
 */
struct flex_alloc_config {
	enum flex_alloc_region_strategy region_strategy;
	enum flex_alloc_block_strategy block_strategy;
	unsigned int num_fallback_sizes;
	uint64_t fallback_sizes[FLEX_ALLOC_MAX_FALLBACK_SIZES];
	unsigned int max_regions;
	unsigned int fixed_regions;
	unsigned int flags;
	flex_alloc_pressure_fn pressure_fn;
	void *pressure_user;
	flex_alloc_log_fn log_fn;
	void *log_user;
	const char *report_path;
};

/** flex_alloc_config_init() - fill @cfg with the defaults listed above. Since: 1.0. */
void flex_alloc_config_init(struct flex_alloc_config *cfg);

/**
 * flex_alloc_new() - create an allocator.
 * @src:	where regions come from; the allocator takes a reference.
 * @cfg:	options, or NULL for the defaults.
 * @out:	the allocator.
 *
 * With @cfg->fixed_regions, the regions are acquired here (each trying the
 * fallback sizes in turn); fewer than asked is not an error as long as at
 * least one was had.
 *
 * Return: 0; -EINVAL for a bad option; -ENOMEM out of host memory or no
 * fixed region could be acquired. flex_last_error() says which.
 *
 * Since: 1.0
 */
int flex_alloc_new(struct flex_region_source *src, const struct flex_alloc_config *cfg,
		   struct flex_alloc **out);

/**
 * flex_alloc_destroy() - write the exit report (if asked for), give every
 * region back to the source, drop the source and free the allocator.
 * Allocations still live are lost (the debug log counts them). NULL is
 * ignored. No other call on @a may run concurrently or follow.
 *
 * Since: 1.0
 */
void flex_alloc_destroy(struct flex_alloc *a);

/**
 * flex_alloc_round_size() - the block size a request of @size gets: @size
 * rounded up to a multiple of FLEX_ALLOC_ALIGN, at least FLEX_ALLOC_ALIGN
 * (a request of 0 bytes gets no block at all, see the top of this file).
 * Returns 0 when the result would not fit in 64 bits.
 *
 * Since: 1.0
 */
uint64_t flex_alloc_round_size(uint64_t size);

/**
 * flex_alloc_block_alloc() - allocate @size bytes of device memory.
 * @a:		the allocator.
 * @size:	bytes; rounded with flex_alloc_round_size(); 0 takes no memory.
 * @kind:	FLEX_ALLOC_TENSOR or FLEX_ALLOC_PROGRAM.
 * @out:	the new allocation's index.
 *
 * Return: 0; -EINVAL for a bad @kind or a size that cannot be rounded;
 * -ENOMEM when no region has room (after the pressure callback and one
 * retry) or host memory ran out. flex_last_error() says which and,
 * when device memory ran out, how much is free where.
 *
 * Since: 1.0
 */
int flex_alloc_block_alloc(struct flex_alloc *a, uint64_t size, enum flex_alloc_kind kind,
		     flex_alloc_index_t *out);

/**
 * flex_alloc_block_free() - free an allocation, merging its block with free
 * neighbours. With FLEX_ALLOC_F_RELEASE_EMPTY, a region left entirely free
 * is kept and the one kept before it given back (see the top).
 *
 * Return: 0; -EINVAL for an index this allocator never issued (foreign or
 * corrupt); -ENOENT for an index already freed (double free, stale index).
 * Refused frees change nothing, are counted in num_bad_frees and logged at
 * FLEX_LOG_ERR. -ENOMEM if host memory for the free-block index ran out
 * (the allocation stays live; try again later).
 *
 * Since: 1.0
 */
int flex_alloc_block_free(struct flex_alloc *a, flex_alloc_index_t index);

/*
 * Stream-ordered memory (Since: 1.0), as PyTorch's CUDA caching allocator
 * has it. Device work is queued (FlexStream: flex/stream.h): a block freed
 * while queued work still names it must not be handed out again until
 * that work has run, or the next tensor in it is overwritten by the old
 * work (a device data race). The allocator follows queues through struct
 * flex_alloc_queue: a FlexStream is one (flex_stream_alloc_queue()), and a
 * runtime may plug in its own.
 *
 *  - flex_alloc_block_free_after(a, index, q): the caller's index is dead at
 *    once (freeing or resolving it again is refused), but the block stays
 *    allocated until the work enqueued on q before the call has run.
 *  - flex_alloc_block_record_use(a, index, q) (PyTorch's recordStream): the
 *    block is also used by work on q; when it is freed (by either call),
 *    it also waits for the work enqueued on q until then. Reuse waits only
 *    for the queues that used the block; a queue with nothing pending
 *    costs nothing.
 *  - A deferred block is freed when an allocation finds its points
 *    reached (the allocator looks every 64th allocation on a thread, and
 *    before failing), by flex_alloc_reclaim(), or by flex_alloc_trim().
 *    An allocation that finds no room first frees what is reached, then
 *    gives back empty regions, then waits for the oldest deferred frees,
 *    one at a time, retrying after each, and only then calls the
 *    memory-pressure callback.
 *  - Until freed, a deferred block counts as allocated (the memory is in
 *    use by the device) and in pending_free_bytes; reports show it as
 *    "pending".
 *
 * Queue callbacks are called with no allocator lock held, from any thread
 * that allocates or frees. A queue must outlive its use by the allocator:
 * flex_alloc_queue_retire() before it goes (FlexStream does this in
 * flex_stream_destroy() for its context's allocator).
 */
struct flex_alloc_queue;

/**
 * struct flex_alloc_queue_ops - how the allocator follows a queue of work.
 * @point:	the point that is reached once everything enqueued on @q so
 *		far has run, or 0 if all of it is known to have run already
 *		(the block is then freed at once). Increasing on one queue.
 * @query:	0 if @point is reached (the work ran, failed, or was dropped
 *		and will never run); anything else: not yet. Must not block.
 * @wait:	block until @point is reached, or until its work failed or
 *		was dropped; the return value is not used (the block is
 *		freed either way).
 */
struct flex_alloc_queue_ops {
	uint64_t (*point)(struct flex_alloc_queue *q);
	int (*query)(struct flex_alloc_queue *q, uint64_t point);
	int (*wait)(struct flex_alloc_queue *q, uint64_t point);
};

/** struct flex_alloc_queue - embed it in the queue's own structure. */
struct flex_alloc_queue {
	const struct flex_alloc_queue_ops *ops;
};

/**
 * flex_alloc_block_free_after() - free an allocation once the work enqueued on
 * @q so far (and on the queues of its recorded uses) has run. Since: 1.0.
 * @q:		the queue whose work uses the block (NULL: only the recorded
 *		uses count, as flex_alloc_block_free()).
 *
 * Return: as flex_alloc_block_free(); -EINVAL also for a @q without ops; -ENOMEM
 * no host memory to remember the free (the allocation stays live).
 */
int flex_alloc_block_free_after(struct flex_alloc *a, flex_alloc_index_t index,
			  struct flex_alloc_queue *q);

/**
 * flex_alloc_block_record_use() - the allocation is also used by work on @q
 * (PyTorch's recordStream()). Since: 1.0. Recording a queue twice is
 * recording it once; a 0-byte allocation needs nothing.
 * Return: 0; -EINVAL / -ENOENT as flex_alloc_block_resolve(), or @q without ops;
 * -ENOMEM.
 */
int flex_alloc_block_record_use(struct flex_alloc *a, flex_alloc_index_t index,
			  struct flex_alloc_queue *q);

/* flex_alloc_reclaim() flags. */
#define FLEX_ALLOC_RECLAIM_WAIT		(1U << 0) /* wait for every deferred free */

/**
 * flex_alloc_reclaim() - free the deferred blocks whose work has run (with
 * FLEX_ALLOC_RECLAIM_WAIT: wait for all of them). Since: 1.0.
 * @freed:	if not NULL, the bytes freed.
 * Return: 0; -EINVAL unknown flags.
 */
int flex_alloc_reclaim(struct flex_alloc *a, unsigned int flags, uint64_t *freed);

/**
 * flex_alloc_queue_retire() - forget @q: its points count as reached and
 * its recorded uses are dropped. Call it when the work on @q has run (or
 * been cancelled) and before @q goes away; it waits until no thread still
 * calls @q's callbacks. Since: 1.0.
 */
void flex_alloc_queue_retire(struct flex_alloc *a, struct flex_alloc_queue *q);

/**
 * flex_alloc_trim() - give every entirely free region back to the source,
 * what PyTorch's torch.cuda.empty_cache() does for its cache. Since: 1.0.
 * @released:	if not NULL, the bytes given back.
 *
 * Deferred frees whose work has run are freed first (flex_alloc_reclaim()
 * without waiting; call it with FLEX_ALLOC_RECLAIM_WAIT before to wait for
 * all, as empty_cache() synchronizes). Regions holding a live or deferred
 * allocation stay; with fixed_regions nothing is given back (it could not
 * be acquired again). Return: 0.
 */
int flex_alloc_trim(struct flex_alloc *a, uint64_t *released);

/**
 * flex_alloc_block_resolve() - the VirtualAddress of a live allocation.
 * @va:		its region id and offset.
 * @size:	if not NULL, its block size (the rounded size).
 *
 * Return: 0, or -EINVAL / -ENOENT as flex_alloc_block_free().
 *
 * Since: 1.0
 */
int flex_alloc_block_resolve(struct flex_alloc *a, flex_alloc_index_t index,
		       struct flex_vaddr *va, uint64_t *size);

/**
 * flex_alloc_set_pressure_callback() - register (or with NULL remove) the
 * memory-pressure callback, replacing the one from the config.
 *
 * Since: 1.0
 */
void flex_alloc_set_pressure_callback(struct flex_alloc *a, flex_alloc_pressure_fn fn,
				      void *user);

/**
 * struct flex_alloc_stats - counters in the spirit of PyTorch's memory
 * stats. Byte counts are block sizes (rounded); "requested" is what callers
 * asked for before rounding.
 */
struct flex_alloc_stats {
	uint64_t allocated_bytes;	/* in live allocations now, deferred frees included */
	uint64_t peak_allocated_bytes;	/* highest allocated_bytes since creation or reset */
	uint64_t requested_bytes;	/* asked by live allocations, unrounded */
	uint64_t reserved_bytes;	/* in regions held now */
	uint64_t peak_reserved_bytes;	/* highest reserved_bytes since creation or reset */
	uint64_t free_bytes;		/* reserved - allocated */
	uint64_t largest_free_block;	/* in any region */
	uint64_t num_allocs;		/* successful allocations */
	uint64_t num_frees;		/* successful frees */
	uint64_t num_failed_allocs;	/* allocations that returned an error */
	uint64_t num_ooms;		/* of those, -ENOMEM for want of device memory (Since: 1.0) */
	uint64_t num_pressure_retries;	/* allocations retried after room was made (Since: 1.0) */
	uint64_t num_bad_frees;		/* frees refused (double, stale, foreign) */
	uint64_t num_live_blocks;	/* allocations alive now */
	uint64_t num_free_blocks;	/* free blocks now, all regions */
	uint64_t pending_free_bytes;	/* freed after queues, not reached yet (Since: 1.0) */
	uint64_t num_pending_frees;	/* such blocks (Since: 1.0) */
	uint64_t num_region_acquires;	/* regions acquired so far */
	uint64_t num_region_releases;	/* regions given back so far */
	uint32_t num_regions;		/* regions held now */
	uint32_t max_regions;		/* effective limit */
	uint32_t regions_locked;	/* 1 once no region will be acquired */
	uint32_t pad;
	/* 1 - largest free block / free bytes, over all regions; 0 if none free */
	double fragmentation;
};

/**
 * flex_alloc_get_stats() - fill @st. Each region is read under its lock,
 * so figures are exact when no other thread is allocating; with concurrent
 * calls they are per-region consistent, and peak_allocated_bytes (summed
 * from the regions at each allocation) may miss a peak that only existed
 * between overlapping calls. A retry after room was made
 * (num_pressure_retries) follows giving back empty regions or the
 * memory-pressure callback. Return: 0.
 *
 * Since: 1.0
 */
int flex_alloc_get_stats(struct flex_alloc *a, struct flex_alloc_stats *st);

/**
 * flex_alloc_reset_peak_stats() - start peak_allocated_bytes and
 * peak_reserved_bytes again from the current figures (PyTorch's
 * reset_peak_memory_stats()). Since: 1.0. Return: 0.
 */
int flex_alloc_reset_peak_stats(struct flex_alloc *a);

/**
 * flex_alloc_mem_get_info() - the device memory of the allocator's
 * function, as torch.cuda.mem_get_info() / cudaMemGetInfo() report it and
 * vLLM sizes its cache from. Since: 1.0.
 * @free:	bytes that could still be acquired: what the device has free,
 *		within the function's quota. Memory this allocator holds in its
 *		regions (allocated or not) is not free.
 * @total:	the most the function may hold: the device's capacity, or its
 *		quota when lower.
 *
 * Both come from one snapshot of the region source
 * (flex_region_source_get_info()), so @free <= @total and total - free is
 * what the function holds (this allocator and other openers of the
 * function) plus what other functions hold of a shared device.
 *
 * Return: 0; -EOPNOTSUPP the source cannot say (a plug-in source without
 * an info callback); the source's errors.
 */
int flex_alloc_mem_get_info(struct flex_alloc *a, uint64_t *free, uint64_t *total);

/*
 * Allocation history (Since: 1.0), what torch.cuda.memory._record_memory_history()
 * keeps: off by default; flex_alloc_record_history() (or the environment
 * variable FLEX_ALLOC_HISTORY=N, read by flex_alloc_new()) keeps the last
 * N events in a ring. The JSON report carries them ("history"), and
 * `flexctl map` draws allocated memory over time from them.
 */
enum flex_alloc_event_action {
	FLEX_ALLOC_EV_ALLOC = 0,	/* an allocation (0-byte ones too) */
	FLEX_ALLOC_EV_FREE = 1,		/* its block given back (0-byte: its index freed) */
	FLEX_ALLOC_EV_FREE_REQUESTED = 2, /* freed, but the block waits for streams */
	FLEX_ALLOC_EV_REGION_ACQUIRE = 3, /* a region acquired */
	FLEX_ALLOC_EV_REGION_RELEASE = 4, /* a region given back */
	FLEX_ALLOC_EV_OOM = 5,		/* an allocation failed with -ENOMEM */
};

/**
 * struct flex_alloc_event - one event of the history.
 * @time_ns:	CLOCK_MONOTONIC.
 * @action:	what happened.
 * @kind:	ALLOC, FREE*, OOM: the allocation's kind.
 * @index:	ALLOC, FREE*: the allocation; else FLEX_ALLOC_INDEX_NONE.
 * @region_id, @offset: where (region events: offset 0; OOM: none).
 * @size:	block bytes; region bytes for region events; bytes asked for OOM.
 * @requested:	ALLOC, FREE*: bytes asked.
 * @thread:	the calling thread (gettid()).
 */
struct flex_alloc_event {
	uint64_t time_ns;
	enum flex_alloc_event_action action;
	enum flex_alloc_kind kind;
	flex_alloc_index_t index;
	uint64_t region_id;
	uint64_t offset;
	uint64_t size;
	uint64_t requested;
	uint32_t thread;
	uint32_t pad;
};

/**
 * flex_alloc_record_history() - keep the last @max_entries events from
 * now on; 0 stops recording and drops what was kept. Changing the size
 * drops what was kept. Since: 1.0.
 * Return: 0; -ENOMEM (recording stays as it was).
 */
int flex_alloc_record_history(struct flex_alloc *a, size_t max_entries);

/**
 * flex_alloc_get_history() - copy the kept events, oldest first.
 * Since: 1.0.
 * @out:	room for @max events (the newest @max if more are kept).
 * @n:		out: events copied.
 * @recorded:	if not NULL, out: events recorded since recording started
 *		(more than kept once the ring wrapped).
 * Return: 0.
 */
int flex_alloc_get_history(struct flex_alloc *a, struct flex_alloc_event *out, size_t max,
			   size_t *n, uint64_t *recorded);

/** flex_alloc_event_name() - "alloc", "free", ... for @action; "?" if unknown. Since: 1.0. */
const char *flex_alloc_event_name(enum flex_alloc_event_action action);

/** struct flex_alloc_region_stats - one region, as flex_alloc_get_stats(). */
struct flex_alloc_region_stats {
	uint64_t region_id;
	uint64_t size;
	uint64_t allocated_bytes;
	uint64_t free_bytes;
	uint64_t largest_free_block;
	uint64_t num_live_blocks;
	uint64_t num_free_blocks;
	uint64_t num_allocs;
	uint64_t num_frees;
	double fragmentation;		/* 1 - largest free / free, this region */
};

/**
 * flex_alloc_get_region_stats() - the @n-th region held now (from 0, in
 * the order of the allocator's region slots, which is acquisition order
 * until a region is released). Return: 0, or -ENOENT past the last one.
 *
 * Since: 1.0
 */
int flex_alloc_get_region_stats(struct flex_alloc *a, unsigned int n,
				struct flex_alloc_region_stats *out);

/** struct flex_alloc_block_info - one block, as flex_alloc_walk() sees it. */
struct flex_alloc_block_info {
	unsigned int region;		/* n as in flex_alloc_get_region_stats() */
	unsigned int is_free;		/* 1 free, 0 allocated */
	unsigned int is_pending;	/* allocated, freed after queues (Since: 1.0) */
	uint64_t region_id;
	uint64_t offset;
	uint64_t size;
	enum flex_alloc_kind kind;	/* allocated blocks only */
	flex_alloc_index_t index;	/* allocated blocks only, else NONE; pending: as freed */
	uint64_t requested;		/* allocated blocks only: size asked */
};

/**
 * flex_alloc_walk() - call @fn for every block, free and allocated, region
 * by region in offset order. Each region is walked under its lock: @fn
 * must not call into the allocator. A non-zero return from @fn stops the
 * walk and is returned. Return: 0 or what @fn returned.
 *
 * Since: 1.0
 */
int flex_alloc_walk(struct flex_alloc *a,
		    int (*fn)(void *user, const struct flex_alloc_block_info *blk),
		    void *user);

enum flex_alloc_report_format {
	FLEX_ALLOC_REPORT_SUMMARY = 0,	/* human-readable totals and regions */
	FLEX_ALLOC_REPORT_CSV = 1,	/* summary as '#' lines, then one row per block */
	FLEX_ALLOC_REPORT_JSON = 2,	/* one JSON object: summary, regions, blocks */
};

/**
 * flex_alloc_report() - write a memory report to @out.
 * Return: 0, -EINVAL for a bad @format, -EIO if writing failed.
 *
 * Since: 1.0
 */
int flex_alloc_report(struct flex_alloc *a, FILE *out, enum flex_alloc_report_format format);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_ALLOCATOR_H */
