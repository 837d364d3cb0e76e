// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator: regions, strategies, allocate, free, resolve.
 * The rules are in include/flex/allocator.h; the locking in
 * allocator_internal.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"

#define GiB (1ULL << 30)

FLEX_EXPORT void flex_alloc_config_init(struct flex_alloc_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->region_strategy = FLEX_ALLOC_REGION_AUTO;
	cfg->block_strategy = FLEX_ALLOC_FIRST_FIT;
	cfg->num_fallback_sizes = 0;	/* scaled to the source */
	cfg->max_regions = FLEX_ALLOC_DEFAULT_MAX_REGIONS;
}

/* flex_alloc_round_size(), inlined where the library itself rounds. */
static inline uint64_t round_size(uint64_t size)
{
	if (size > UINT64_MAX - (FLEX_ALLOC_ALIGN - 1))
		return 0;
	size = (size + FLEX_ALLOC_ALIGN - 1) & ~(FLEX_ALLOC_ALIGN - 1);
	return size ? size : FLEX_ALLOC_ALIGN;
}

FLEX_EXPORT uint64_t flex_alloc_round_size(uint64_t size)
{
	return round_size(size);
}

/* ---- regions ---- */

/*
 * The sizes to try for a region that must hold @need bytes (0: any), in
 * order: each fallback size that holds it and, with scaled sizes, is not
 * above what the allocator holds already (at least the first size);
 * failing that, the smallest fallback size that holds it; if none does, a
 * region of @need itself (rounded up to the source's alignment); and when
 * @need is above the smallest fallback size, that too once the larger ones
 * failed, so a request is never refused for want of a size the device
 * could give. A size that cannot hold @need is never tried. *@oversize
 * says whether no fallback size holds @need. Called with grow_lock held.
 * Return: how many sizes.
 */
static unsigned int region_sizes(const struct flex_alloc *a, uint64_t need, uint64_t *out,
				 bool *oversize)
{
	uint64_t smallest = UINT64_MAX, tried = UINT64_MAX, above = UINT64_MAX, limit = UINT64_MAX;
	uint64_t exact;
	unsigned int n = 0;

	if (a->grow)
		limit = a->reserved_bytes > a->first_size ? a->reserved_bytes : a->first_size;
	for (unsigned int k = 0; k < a->num_fallback_sizes; k++) {
		uint64_t size = a->fallback_sizes[k];

		if (size < smallest)
			smallest = size;
		if (size < need)
			continue;
		if (size > limit) {
			if (size < above)
				above = size;
			continue;
		}
		out[n++] = size;
		if (size < tried)
			tried = size;
	}
	if (!n && above != UINT64_MAX)
		out[n++] = tried = above;
	*oversize = !n;
	exact = (need + a->align - 1) / a->align * a->align;
	if (need > smallest && exact < tried)
		out[n++] = exact;
	return n;
}

/*
 * Acquire one region that holds @need bytes (0: any size), trying the
 * sizes region_sizes() gives in turn (the RFC's allocateNewRegion). The
 * region set is locked for good only when max_regions is reached or the
 * source's table is full (-ENOSPC from it); a source out of memory is a
 * passing state (another tenant may free some), remembered in
 * acquire_failed so that LoadBalancing stops acquiring before every
 * allocation until an acquisition succeeds again. Called with grow_lock
 * held. Return: 0; -ENOSPC no region (locked, or none of the sizes could
 * be had); -ENOMEM host memory.
 */
static int acquire_region(struct flex_alloc *a, uint64_t need)
{
	uint64_t sizes[FLEX_ALLOC_MAX_FALLBACK_SIZES + 1];
	unsigned int n = atomic_load(&a->num_regions), nsizes;
	struct region *r = NULL;
	bool oversize;
	int err = -ENOMEM;
	char h[32];

	if (atomic_load(&a->regions_locked))
		return -ENOSPC;
	if (n >= a->max_regions) {
		atomic_store(&a->regions_locked, true);
		alloc_debug(a, "regions locked: max_regions (%u) reached", a->max_regions);
		return -ENOSPC;
	}
	for (unsigned int i = 0; i < a->max_regions && !r; i++)
		if (!region_present(&a->regions[i]))
			r = &a->regions[i];

	nsizes = region_sizes(a, need, sizes, &oversize);
	for (unsigned int k = 0; k < nsizes; k++) {
		uint64_t size = sizes[k];
		struct flex_region reg;

		err = flex_region_source_acquire(a->src, size, &reg);
		alloc_debug(a, "acquire region of %s (size %u of %u for %llu bytes): %s",
			    flex_human_bytes(h, sizeof(h), size), k + 1, nsizes,
			    (unsigned long long)need, err ? strerror(-err) : "ok");
		if (err == -ENOSPC) {
			atomic_store(&a->regions_locked, true);
			alloc_debug(a, "regions locked: the source's lookup table is full");
			return -ENOSPC;
		}
		if (err)
			continue;

		pthread_mutex_lock(r->lock);
		err = flex_region_activate(r, &reg);
		if (!err)
			atomic_store_explicit(&r->present, 1, memory_order_release);
		pthread_mutex_unlock(r->lock);
		if (err) {
			flex_region_source_release(a->src, &reg);
			if (err == -ENOMEM)
				return err;	/* host memory: not the device's fault */
			continue;
		}
		n = atomic_fetch_add(&a->num_regions, 1) + 1;
		a->reserved_bytes += r->size;
		if (a->reserved_bytes > a->peak_reserved_bytes)
			a->peak_reserved_bytes = a->reserved_bytes;
		a->num_region_acquires++;
		atomic_store(&a->acquire_failed, false);
		alloc_event(a, FLEX_ALLOC_EV_REGION_ACQUIRE, FLEX_ALLOC_TENSOR, FLEX_ALLOC_INDEX_NONE,
			    reg.region_id, 0, r->size, 0);
		alloc_debug(a, "region %u: id 0x%llx, %llu bytes (%s); %u of %u regions",
			    r->slot, (unsigned long long)reg.region_id,
			    (unsigned long long)r->size, flex_human_bytes(h, sizeof(h), r->size),
			    n, a->max_regions);
		if (n >= a->max_regions) {
			atomic_store(&a->regions_locked, true);
			alloc_debug(a, "regions locked: max_regions (%u) reached", a->max_regions);
		}
		return 0;
	}
	/* A request above the fallback sizes failing says nothing of the usual ones. */
	if (!oversize)
		atomic_store(&a->acquire_failed, true);
	alloc_debug(a, "no region for %llu bytes could be acquired (%s); not locked, tried again when an allocation needs one",
		    (unsigned long long)need, strerror(-err));
	return -ENOSPC;
}

static int acquire_region_locked(struct flex_alloc *a, uint64_t need)
{
	int err;

	pthread_mutex_lock(&a->grow_lock);
	err = acquire_region(a, need);
	pthread_mutex_unlock(&a->grow_lock);
	return err;
}

/*
 * Give @r back to the source if it is still entirely free. grow_lock held.
 * Return: its size, or 0 if it was kept.
 */
static uint64_t release_if_empty(struct flex_alloc *a, struct region *r)
{
	struct flex_region src;
	uint64_t size;
	int err;

	pthread_mutex_lock(r->lock);
	if (!region_present(r) || r->num_live) {
		pthread_mutex_unlock(r->lock);
		return 0;
	}
	atomic_store_explicit(&r->present, 0, memory_order_release);
	src = r->src;
	size = r->size;
	flex_region_deactivate(r);
	pthread_mutex_unlock(r->lock);

	err = flex_region_source_release(a->src, &src);
	atomic_fetch_sub(&a->num_regions, 1);
	a->reserved_bytes -= size;
	a->num_region_releases++;
	alloc_event(a, FLEX_ALLOC_EV_REGION_RELEASE, FLEX_ALLOC_TENSOR, FLEX_ALLOC_INDEX_NONE,
		    src.region_id, 0, size, 0);
	if (a->kept_empty == r)
		a->kept_empty = NULL;
	/* Room in the table and in the source again. */
	atomic_store(&a->regions_locked, false);
	atomic_store(&a->acquire_failed, false);
	if (err)
		alloc_log(a, FLEX_LOG_ERR, "flex_alloc: releasing region id 0x%llx: %s",
			  (unsigned long long)src.region_id, strerror(-err));
	alloc_debug(a, "region %u: id 0x%llx released, entirely free",
		    r->slot, (unsigned long long)src.region_id);
	return size;
}

/*
 * FLEX_ALLOC_F_RELEASE_EMPTY: @r became entirely free. It is kept for the
 * next allocations (a workload that allocates and frees one block would
 * otherwise acquire and release a region every time); the region kept
 * before, if still entirely free, is given back. No lock held.
 */
void flex_alloc_region_emptied(struct flex_alloc *a, struct region *r)
{
	pthread_mutex_lock(&a->grow_lock);
	if (a->kept_empty && a->kept_empty != r)
		release_if_empty(a, a->kept_empty);
	if (region_present(r))
		a->kept_empty = r;
	pthread_mutex_unlock(&a->grow_lock);
}

/* Give back every entirely free region. grow_lock held. Return: bytes released. */
static uint64_t release_empty(struct flex_alloc *a)
{
	uint64_t bytes = 0;

	if (a->fixed)
		return 0;	/* a released fixed region could not come back */
	for (unsigned int i = 0; i < a->max_regions; i++)
		if (region_present(&a->regions[i]))
			bytes += release_if_empty(a, &a->regions[i]);
	return bytes;
}

FLEX_EXPORT int flex_alloc_trim(struct flex_alloc *a, uint64_t *released)
{
	uint64_t bytes;

	flex_deferred_reclaim(a, false);
	pthread_mutex_lock(&a->grow_lock);
	bytes = release_empty(a);
	pthread_mutex_unlock(&a->grow_lock);
	alloc_debug(a, "trim: %llu bytes of entirely free regions given back",
		    (unsigned long long)bytes);
	if (released)
		*released = bytes;
	return 0;
}

/* ---- placement ---- */

/*
 * The next region to try among @mask (bit per region slot), by the region
 * strategy, judged by each region's last published free bytes and largest
 * free block. Ties go to the lower slot, the region acquired first.
 */
static struct region *next_candidate(struct flex_alloc *a, uint64_t g_bytes, uint64_t mask)
{
	bool fill_first = a->region_strategy == FLEX_ALLOC_FILL_FIRST;
	struct region *best = NULL;
	uint64_t best_free = 0;

	while (mask) {
		unsigned int i = (unsigned int)__builtin_ctzll(mask);
		struct region *r = &a->regions[i];
		uint64_t f;

		mask &= mask - 1;
		if (!region_present(r) ||
		    atomic_load_explicit(&r->snap_largest, memory_order_relaxed) < g_bytes)
			continue;
		f = atomic_load_explicit(&r->snap_free, memory_order_relaxed);
		if (!best || (fill_first ? f < best_free : f > best_free)) {
			best = r;
			best_free = f;
		}
	}
	return best;
}

/*
 * Region affinity under contention. The strategies pick regions by their
 * free bytes, which sends every thread to every region: with several
 * threads, each operation then pulls the region's cache lines from another
 * core, and two threads get far less done than one. So a thread that met
 * another thread (in its last AFFINITY_OPS allocations on this allocator)
 * first tries the region of its previous allocation if that one has a
 * fitting block, and only then the strategy's order. A thread that never
 * meets another one (any single-threaded use) always gets exactly the
 * strategy's choice. The state is the calling thread's own, like errno, for
 * the allocator it last used.
 *
 * A thread meets another when a region it wants is locked, and also when
 * the region is shared: its allocations come from another thread than
 * its previous one (region.owner) for the second time within
 * SHARING_WINDOW allocations there. Lock collisions alone are rare while
 * threads follow the strategy, yet every operation then moves the
 * region's cache lines between cores. A shared region is skipped like a
 * locked one (used only if no other fits), so threads that allocate at
 * the same time settle in regions of their own; the owner hears of it at
 * its next allocation there (region.shared_seen) and keeps to the region
 * as well, instead of following the strategy into the other's. A single
 * change of thread (a region used by one thread, then by another, as a
 * pool hands work around) is not sharing: the strategy keeps its say.
 *
 * A thread in affinity mode that finds its own region locked waits for
 * it rather than moving on. Once threads have settled, the one who holds
 * it is almost always another thread freeing a block it allocated there
 * before (blocks handed between threads, or allocated before the threads
 * settled): a short wait. Moving instead took the thread to the region
 * with the most free bytes, which is the one another thread had just left
 * or works in, full of that thread's blocks; their frees then collided
 * with it again, and so on. In tests/bench/alloc_bench.c two threads
 * moved every 15 allocations that way and half of their frees landed in
 * the region the other thread was using: two threads did 0.46 times the
 * work of one.
 *
 * Settled threads stop meeting each other, so affinity mode would end
 * after AFFINITY_OPS allocations and the thread would follow the strategy
 * into the other threads' regions again. The thread therefore stays in
 * affinity mode while other threads still allocate in other regions of
 * this allocator: it looks every 64th allocation (sample_peak()), reading
 * each region's allocation count (region.snap_allocs). Once it is alone,
 * AFFINITY_OPS allocations later the strategy has its say again.
 */
#define AFFINITY_OPS	65536U
#define SHARING_WINDOW	256U

struct affinity {
	const struct flex_alloc *a;
	uint64_t tag;			/* a's tag: a reused address is not a match */
	unsigned int region;		/* slot of the previous allocation */
	unsigned int contended;		/* operations left in affinity mode */
	uint64_t others;		/* other regions' allocations at the last look */
};

/*
 * The default TLS model, not initial-exec: an initial-exec variable marks
 * libflex.so STATIC_TLS, and dlopen() of it (a Python extension, a plugin)
 * then fails once the static TLS surplus is used up. Linked into a program,
 * the linker relaxes the access to a fixed offset all the same.
 */
static __thread struct affinity affinity;

static struct affinity *affinity_of(const struct flex_alloc *a)
{
	if (affinity.a != a || affinity.tag != a->tag)
		affinity = (struct affinity){ .a = a, .tag = a->tag };
	return &affinity;
}

/* Another thread held a lock this thread wanted, or allocated where it did. */
static void met_contention(const struct flex_alloc *a)
{
	affinity_of(a)->contended = AFFINITY_OPS;
}

/* The calling thread, as region.owner records it: its own affinity state. */
static inline const void *this_thread(void)
{
	return &affinity;
}

/*
 * Whether @me allocating in @r (locked) would share it with another thread
 * (see above); if not, @me becomes its owner.
 */
static inline bool region_shared(struct flex_alloc *a, struct region *r, const void *me)
{
	if (__builtin_expect(r->owner == me, 1)) {
		if (__builtin_expect(r->shared_seen, 0)) {
			r->shared_seen = false;
			met_contention(a);
		}
		return false;
	}
	if (r->owner && r->num_allocs - r->owner_since < SHARING_WINDOW) {
		r->shared_seen = true;
		return true;
	}
	/* A first owner counts as settled long ago: the next change is a handover. */
	r->owner_since = r->owner ? r->num_allocs : r->num_allocs - SHARING_WINDOW;
	r->owner = me;
	return false;
}

/* @me allocates in @r (locked) although it is shared: no other region had room. */
static inline void region_take(struct region *r, const void *me)
{
	if (r->owner != me) {
		r->owner = me;
		r->owner_since = r->num_allocs;
	}
}

/*
 * The peak is the sum of what the regions last published: exact when calls
 * do not overlap. In affinity mode it is sampled every 64th allocation,
 * since reading the lines other threads write is what affinity avoids. The
 * sample also says whether other threads still allocate: if another region
 * had allocations since this thread's last sample, the thread stays in
 * affinity mode (its own allocations meanwhile were in its region @r, but
 * for rare detours, which at worst keep it there one sample longer).
 */
static inline void sample_peak(struct flex_alloc *a, struct affinity *aff, const struct region *r)
{
	uint64_t now = 0, others = 0, peak;

	if (!aff->contended) {
		for (unsigned int i = 0; i < a->max_regions; i++)
			now += atomic_load_explicit(&a->regions[i].snap_allocated, memory_order_relaxed);
	} else {
		for (unsigned int i = 0; i < a->max_regions; i++) {
			now += atomic_load_explicit(&a->regions[i].snap_allocated, memory_order_relaxed);
			if (i != r->slot)
				others += atomic_load_explicit(&a->regions[i].snap_allocs,
							       memory_order_relaxed);
		}
		if (others != aff->others)
			aff->contended = AFFINITY_OPS;
		aff->others = others;
	}
	peak = atomic_load_explicit(&a->peak_allocated_bytes, memory_order_relaxed);
	while (now > peak &&
	       !atomic_compare_exchange_weak_explicit(&a->peak_allocated_bytes, &peak, now,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/*
 * Allocate in @r, whose lock is held.
 * Return: 0; -ENOSPC no room here; -ENOMEM host memory.
 */
static int place_in(struct flex_alloc *a, struct affinity *aff, struct region *r, uint32_t g,
		    uint64_t size, enum flex_alloc_kind kind, flex_alloc_index_t *out)
{
	uint64_t bytes;
	uint32_t start, slot, leaf;
	struct slot *s;
	int err;

	if (!region_present(r))
		return -ENOSPC;
	err = slot_get(&r->slots, &slot);
	if (err)
		return err;
	err = flex_region_alloc(r, g, kind, &start, &leaf);
	if (err) {
		slot_put(&r->slots, slot);
		return err;
	}
	s = slot_at(&r->slots, slot);
	s->start = start;
	s->size = g;
	s->kind = kind;
	s->slack = (uint8_t)(gran_to_bytes(g) - size);
	s->ext = 0;
	s->leaf = leaf;
	r->requested_bytes += size;
	r->num_allocs++;
	region_publish(r);
	atomic_store_explicit(&r->snap_allocs, r->num_allocs, memory_order_relaxed);
	*out = make_index(a, r->slot, slot, s->gen);
	aff->region = r->slot;
	bytes = gran_to_bytes(g);
	if (!aff->contended || (r->num_allocs & 63) == 0)
		sample_peak(a, aff, r);
	alloc_event(a, FLEX_ALLOC_EV_ALLOC, kind, *out, r->src.region_id, gran_to_bytes(start),
		    bytes, size);
	alloc_debug(a, "alloc %llu bytes (block %llu) for a %s: index 0x%llx, region 0x%llx offset 0x%llx",
		    (unsigned long long)size, (unsigned long long)bytes, kind_name(kind),
		    (unsigned long long)*out, (unsigned long long)r->src.region_id,
		    (unsigned long long)gran_to_bytes(start));
	return 0;
}

/*
 * Try the regions in strategy order (after the thread's previous region,
 * under contention). A region another thread holds, or that would be
 * shared with another thread (region_shared()), is skipped at first and
 * waited for only if no other one had room; the thread's own region in
 * affinity mode is waited for at once.
 * Return: 0; -ENOSPC nothing fits; -ENOMEM host memory.
 */
static inline __attribute__((always_inline)) int
try_regions(struct flex_alloc *a, uint32_t g, uint64_t size, enum flex_alloc_kind kind,
	    flex_alloc_index_t *out)
{
	uint64_t all = a->max_regions == 64 ? UINT64_MAX : (1ULL << a->max_regions) - 1;
	uint64_t g_bytes = gran_to_bytes(g), busy = 0, mask = all;
	struct affinity *aff = affinity_of(a);
	const void *me = this_thread();
	struct region *r = NULL;
	bool own = false;
	int err;

	if (aff->contended) {
		aff->contended--;
		r = &a->regions[aff->region];
		own = region_present(r) &&
		      atomic_load_explicit(&r->snap_largest, memory_order_relaxed) >= g_bytes;
		if (!own)
			r = NULL;
	}
	for (;;) {
		if (!r) {
			r = next_candidate(a, g_bytes, mask);
			if (!r)
				r = next_candidate(a, g_bytes, busy);
			if (!r)
				return -ENOSPC;
		}
		if (busy & (1ULL << r->slot)) {
			/* No other region had room: wait for this one. */
			busy &= ~(1ULL << r->slot);
			region_lock(r);
		} else {
			mask &= ~(1ULL << r->slot);
			if (region_trylock(r)) {
				met_contention(a);
				if (!own) {
					busy |= 1ULL << r->slot;
					r = NULL;
					continue;
				}
				/*
				 * The thread's own region: wait for it. The holder
				 * is most likely freeing a block it allocated here
				 * before, which takes less than moving would; and a
				 * move would leave this thread's blocks to be freed
				 * in a region another thread works in.
				 */
				region_lock(r);
			}
			own = false;
			if (region_shared(a, r, me)) {
				/* Another thread allocates here too: look further first. */
				region_unlock(r);
				busy |= 1ULL << r->slot;
				met_contention(a);
				r = NULL;
				continue;
			}
		}
		region_take(r, me);
		err = place_in(a, aff, r, g, size, kind, out);
		region_unlock(r);
		if (err != -ENOSPC)
			return err;
		r = NULL;
	}
}

/* This thread's allocations, for the look at deferred frees every 64th. */
static __thread unsigned int reclaim_tick;

/*
 * One allocation attempt with the region strategy's acquisition rule.
 * Return: 0; -ENOSPC nothing fits and no region could be had; -ENOMEM
 * host memory.
 */
static int attempt(struct flex_alloc *a, uint32_t g, uint64_t size, enum flex_alloc_kind kind,
		   flex_alloc_index_t *out)
{
	uint64_t need = gran_to_bytes(g);
	bool acquired = false;
	int err;

	/*
	 * LoadBalancing: a new region first, while the set is not locked and
	 * the source had memory the last time.
	 */
	if (a->region_strategy == FLEX_ALLOC_LOAD_BALANCING &&
	    !atomic_load_explicit(&a->regions_locked, memory_order_relaxed) &&
	    !atomic_load_explicit(&a->acquire_failed, memory_order_relaxed)) {
		err = acquire_region_locked(a, need);
		if (err == -ENOMEM)
			return err;	/* host memory */
		acquired = true;
	}
	err = try_regions(a, g, size, kind, out);
	/*
	 * FillFirst, or LoadBalancing after a failed acquisition: a new region
	 * only when no region has room.
	 */
	if (err == -ENOSPC && !acquired && !atomic_load(&a->regions_locked)) {
		err = acquire_region_locked(a, need);
		if (!err)
			err = try_regions(a, g, size, kind, out);
	}
	return err;
}

/* The out-of-memory message: what was asked, what is free, where. */
static void describe_oom(struct flex_alloc *a, uint64_t size, uint64_t rounded,
			 enum flex_alloc_kind kind)
{
	struct flex_region_source_info info;
	bool have_info = flex_region_source_get_info(a->src, &info) == 0;
	struct msgbuf m = flex_error_begin();
	uint64_t total = 0, largest = 0, pending, npending;
	unsigned int n = 0;
	char h[32];
	struct {
		uint64_t id, size, free, largest;
	} rs[FLEX_ALLOC_REGIONS_LIMIT];

	for (unsigned int i = 0; i < a->max_regions; i++) {
		struct region *r = &a->regions[i];

		pthread_mutex_lock(r->lock);
		if (region_present(r)) {
			rs[n].id = r->src.region_id;
			rs[n].size = r->size;
			rs[n].free = r->free_bytes;
			rs[n].largest = region_largest_free(r);
			total += rs[n].free;
			if (rs[n].largest > largest)
				largest = rs[n].largest;
			n++;
		}
		pthread_mutex_unlock(r->lock);
	}
	flex_msgbuf_printf(&m, "out of device memory: asked %llu bytes (%s, block %llu) for a %s; ",
		      (unsigned long long)size, flex_human_bytes(h, sizeof(h), size),
		      (unsigned long long)rounded, kind_name(kind));
	flex_msgbuf_printf(&m, "%u of %u regions, %s; free %llu bytes in total, largest free block %llu bytes",
		      n, a->max_regions,
		      atomic_load(&a->regions_locked) ? "locked" : "not locked",
		      (unsigned long long)total, (unsigned long long)largest);
	pthread_mutex_lock(&a->use_lock);
	pending = a->pending_bytes;
	npending = atomic_load(&a->num_pending);
	pthread_mutex_unlock(&a->use_lock);
	if (npending)
		flex_msgbuf_printf(&m, "; %llu bytes in %llu blocks freed but waiting for queued work",
			      (unsigned long long)pending, (unsigned long long)npending);
	if (have_info)
		flex_msgbuf_printf(&m, "; the source has %llu bytes free for new regions (largest %llu) of %llu",
			      (unsigned long long)info.free, (unsigned long long)info.largest_free,
			      (unsigned long long)info.capacity);
	for (unsigned int i = 0; i < n; i++)
		flex_msgbuf_printf(&m, "; region 0x%llx: size %llu, free %llu, largest free block %llu",
			      (unsigned long long)rs[i].id, (unsigned long long)rs[i].size,
			      (unsigned long long)rs[i].free, (unsigned long long)rs[i].largest);
}

/*
 * Nothing fits and no region could be had: make room, retrying after each
 * step that did (g 0: larger than any region, nothing can help). First the
 * deferred frees whose work has run are freed; then the entirely free
 * regions (of sizes that did not fit, or holding table entries) are given
 * back; then the oldest deferred frees are waited for, one at a time
 * (PyTorch waits for its outstanding events before failing); last the
 * memory-pressure callback runs. No lock is held across any callback.
 * Return: as attempt().
 */
/* Room was made (@freed bytes, @how): count the retry and try again. */
static int retry(struct flex_alloc *a, const char *how, uint64_t freed, uint32_t g, uint64_t size,
		 enum flex_alloc_kind kind, flex_alloc_index_t *out)
{
	alloc_debug(a, "no room for %llu bytes: %s (%llu bytes), retrying",
		    (unsigned long long)size, how, (unsigned long long)freed);
	atomic_fetch_add(&a->num_pressure_retries, 1);
	return attempt(a, g, size, kind, out);
}

static int __attribute__((noinline))
alloc_under_pressure(struct flex_alloc *a, uint32_t g, uint64_t size, enum flex_alloc_kind kind,
		     flex_alloc_index_t *out)
{
	flex_alloc_pressure_fn pressure;
	void *pressure_user;
	uint64_t freed;
	int err = -ENOSPC;

	if (!g)
		goto callback;
	if (atomic_load(&a->num_pending) && (freed = flex_deferred_reclaim(a, false)) &&
	    (err = retry(a, "deferred frees reached", freed, g, size, kind, out)) != -ENOSPC)
		return err;
	if (!a->fixed) {
		pthread_mutex_lock(&a->grow_lock);
		freed = release_empty(a);
		pthread_mutex_unlock(&a->grow_lock);
		if (freed && (err = retry(a, "gave back empty regions", freed, g, size, kind, out)) != -ENOSPC)
			return err;
	}
	/* The oldest deferred frees, one at a time, until the allocation fits. */
	while ((freed = flex_deferred_wait_oldest(a)))
		if ((err = retry(a, "waited for a deferred free", freed, g, size, kind, out)) != -ENOSPC)
			return err;
callback:
	pthread_mutex_lock(&a->grow_lock);
	pressure = a->pressure_fn;
	pressure_user = a->pressure_user;
	pthread_mutex_unlock(&a->grow_lock);
	if (pressure) {
		alloc_debug(a, "no room for %llu bytes: calling the memory-pressure callback",
			    (unsigned long long)size);
		pressure(a, size, pressure_user);
		if (g) {
			atomic_fetch_add(&a->num_pressure_retries, 1);
			err = attempt(a, g, size, kind, out);
		}
	}
	return err;
}

FLEX_EXPORT int flex_alloc_block_alloc(struct flex_alloc *a, uint64_t size, enum flex_alloc_kind kind,
				 flex_alloc_index_t *out)
{
	uint64_t rounded = round_size(size);
	uint32_t g;
	int err;

	if ((unsigned int)kind > FLEX_ALLOC_PROGRAM) {
		atomic_fetch_add(&a->num_failed_allocs, 1);
		return flex_error_set(-EINVAL, "flex_alloc_block_alloc: unknown allocation kind %d", (int)kind);
	}
	if (!rounded) {
		atomic_fetch_add(&a->num_failed_allocs, 1);
		return flex_error_set(-EINVAL, "flex_alloc_block_alloc: size %llu cannot be rounded up to %llu bytes",
				 (unsigned long long)size, FLEX_ALLOC_ALIGN);
	}
	if (__builtin_expect(!size, 0)) {
		/* No block, no slot, no region: one index for them all. */
		*out = zero_index(a);
		alloc_debug(a, "alloc 0 bytes for a %s: index 0x%llx, no block", kind_name(kind),
			    (unsigned long long)*out);
		alloc_event(a, FLEX_ALLOC_EV_ALLOC, kind, *out, FLEX_ALLOC_NO_REGION, 0, 0, 0);
		return 0;
	}
	/* Larger than any region can be: never fits (g 0 matches nothing). */
	g = rounded > FLEX_ALLOC_REGION_SIZE_LIMIT ? 0 : (uint32_t)(rounded >> GRANULE_SHIFT);
	/* Deferred frees: look whether their work has run every 64th allocation. */
	if (__builtin_expect(atomic_load_explicit(&a->num_pending, memory_order_relaxed) != 0, 0) &&
	    (++reclaim_tick & 63) == 0)
		flex_deferred_reclaim(a, false);

	err = g ? attempt(a, g, size, kind, out) : -ENOSPC;
	if (__builtin_expect(err == -ENOSPC, 0))
		err = alloc_under_pressure(a, g, size, kind, out);
	if (!err)
		return 0;
	atomic_fetch_add(&a->num_failed_allocs, 1);
	if (err == -ENOSPC) {
		atomic_fetch_add(&a->num_ooms, 1);
		alloc_event(a, FLEX_ALLOC_EV_OOM, kind, FLEX_ALLOC_INDEX_NONE, FLEX_ALLOC_NO_REGION, 0,
			    size, size);
		describe_oom(a, size, rounded, kind);
		alloc_debug(a, "%s", flex_last_error());
		return -ENOMEM;
	}
	return flex_error_set(err, "flex_alloc_block_alloc: out of host memory for block metadata (%llu bytes asked)",
			 (unsigned long long)size);
}

/* ---- indices ---- */

/* The message of a refused index (cold: only bad callers get here). */
static void __attribute__((cold, noinline))
bad_index(int err, const char *what, flex_alloc_index_t index)
{
	if (err == -EINVAL)
		flex_error_set(err, "%s: index 0x%llx was not issued by this allocator", what,
			  (unsigned long long)index);
	else
		flex_error_set(err, "%s: index 0x%llx is not live: freed already (double free) or stale",
			  what, (unsigned long long)index);
}

/*
 * Find the live block of @index and lock its region.
 * Return: 0 with the region locked; 1 for the index of a 0-byte allocation
 * (no block, nothing locked); -EINVAL / -ENOENT unlocked, message set.
 */
static inline __attribute__((always_inline)) int
lookup(struct flex_alloc *a, flex_alloc_index_t index, const char *what, struct region **rp,
       uint32_t *slotp)
{
	unsigned int ri = (unsigned int)(index >> INDEX_REGION_SHIFT) & ((1U << INDEX_REGION_BITS) - 1);
	uint32_t gen = (uint32_t)(index >> INDEX_GEN_SHIFT) & SLOT_GEN_MASK;
	uint32_t slot = (uint32_t)index & (SLOT_MAX - 1);
	struct region *r;
	struct slot *s;

	if ((index >> INDEX_TAG_SHIFT) != a->tag || ri >= a->max_regions || !gen) {
		if (index == zero_index(a))
			return 1;
		bad_index(-EINVAL, what, index);
		return -EINVAL;
	}
	r = &a->regions[ri];
	if (region_trylock(r)) {
		met_contention(a);
		region_lock(r);
	}
	if (slot >= r->slots.capacity) {
		region_unlock(r);
		bad_index(-EINVAL, what, index);
		return -EINVAL;
	}
	s = slot_at(&r->slots, slot);
	if (!s->live || s->gen != gen) {
		region_unlock(r);
		bad_index(-ENOENT, what, index);
		return -ENOENT;
	}
	*rp = r;
	*slotp = slot;
	return 0;
}

/* A free refused for @err (lookup() set the message). */
int flex_alloc_refused_free(struct flex_alloc *a, int err)
{
	atomic_fetch_add(&a->num_bad_frees, 1);
	alloc_log(a, FLEX_LOG_ERR, "flex_alloc: refused free: %s", flex_last_error());
	return err;
}

/*
 * Give back the block of @slot in @r (locked; it stays locked), merging it
 * with its free neighbours; @index names it in the log and the history.
 * Return: 0, *@emptied if the region is left entirely free and
 * FLEX_ALLOC_F_RELEASE_EMPTY asks to know; -ENOMEM host memory (nothing
 * changed, message set).
 */
static inline __attribute__((always_inline)) int
free_in_region(struct flex_alloc *a, struct region *r, uint32_t slot, flex_alloc_index_t index,
	       bool *emptied)
{
	struct slot *s = slot_at(&r->slots, slot);
	struct coalesce_info ci;
	uint64_t bytes;
	int err;

	err = flex_region_free(r, s->start, s->size, s->leaf, &ci);
	if (err)
		return flex_error_set(err, "flex_alloc_block_free: out of host memory for block metadata; index 0x%llx is still allocated",
				 (unsigned long long)index);
	bytes = gran_to_bytes(s->size);
	r->requested_bytes -= slot_requested(s);
	r->num_frees++;
	alloc_event(a, FLEX_ALLOC_EV_FREE, s->kind, index, r->src.region_id,
		    gran_to_bytes(s->start), bytes, slot_requested(s));
	alloc_debug(a, "free index 0x%llx: region 0x%llx offset 0x%llx, %llu bytes",
		    (unsigned long long)index, (unsigned long long)r->src.region_id,
		    (unsigned long long)gran_to_bytes(s->start), (unsigned long long)bytes);
	if (ci.with_prev || ci.with_next)
		alloc_debug(a, "coalesce in region 0x%llx:%s%s -> free block at 0x%llx, %llu bytes",
			    (unsigned long long)r->src.region_id,
			    ci.with_prev ? " with previous" : "", ci.with_next ? " with next" : "",
			    (unsigned long long)ci.start, (unsigned long long)ci.size);
	slot_put(&r->slots, slot);
	region_publish(r);
	*emptied = (a->flags & FLEX_ALLOC_F_RELEASE_EMPTY) && r->num_live == 0;
	return 0;
}

int flex_alloc_free_locked(struct flex_alloc *a, struct region *r, uint32_t slot, flex_alloc_index_t index,
		bool *emptied)
{
	return free_in_region(a, r, slot, index, emptied);
}

int flex_alloc_lookup(struct flex_alloc *a, flex_alloc_index_t index, const char *what,
		 struct region **rp, uint32_t *slotp)
{
	return lookup(a, index, what, rp, slotp);
}

FLEX_EXPORT int flex_alloc_block_free(struct flex_alloc *a, flex_alloc_index_t index)
{
	struct region *r;
	uint32_t slot;
	bool emptied = false;
	int err;

	err = lookup(a, index, "flex_alloc_block_free", &r, &slot);
	if (err > 0) {
		/* 0 bytes: nothing to give back */
		alloc_event(a, FLEX_ALLOC_EV_FREE, FLEX_ALLOC_TENSOR, index, FLEX_ALLOC_NO_REGION,
			    0, 0, 0);
		return 0;
	}
	if (err)
		return flex_alloc_refused_free(a, err);
	if (__builtin_expect(slot_at(&r->slots, slot)->ext, 0)) {
		/* Streams used it: they decide when the block is free. */
		region_unlock(r);
		return flex_deferred_free(a, index, NULL, "flex_alloc_block_free");
	}
	err = free_in_region(a, r, slot, index, &emptied);
	region_unlock(r);
	if (!err && emptied)
		flex_alloc_region_emptied(a, r);
	return err;
}

FLEX_EXPORT int flex_alloc_block_resolve(struct flex_alloc *a, flex_alloc_index_t index,
				   struct flex_vaddr *va, uint64_t *size)
{
	struct region *r;
	struct slot *s;
	uint32_t slot;
	int err;

	err = lookup(a, index, "flex_alloc_block_resolve", &r, &slot);
	if (err > 0) {
		va->region_id = FLEX_ALLOC_NO_REGION;
		va->offset = 0;
		if (size)
			*size = 0;
		return 0;
	}
	if (err)
		return err;
	s = slot_at(&r->slots, slot);
	va->region_id = r->src.region_id;
	va->offset = gran_to_bytes(s->start);
	if (size)
		*size = gran_to_bytes(s->size);
	region_unlock(r);
	return 0;
}

FLEX_EXPORT void flex_alloc_set_pressure_callback(struct flex_alloc *a, flex_alloc_pressure_fn fn,
						  void *user)
{
	pthread_mutex_lock(&a->grow_lock);
	a->pressure_fn = fn;
	a->pressure_user = user;
	pthread_mutex_unlock(&a->grow_lock);
}

/* ---- lifetime ---- */

#define SCALED_SIZES	8	/* fallback sizes scaled to the source, halving */

/*
 * Default region sizes for a source of @capacity bytes (allocator.h), in
 * multiples of the source's alignment, largest first, halving SCALED_SIZES
 * times. FillFirst acquires only when nothing fits: a quarter of the
 * capacity at most, the first region 1/64 of it and each later one at most
 * what is held (grow), so a small job takes little and the table's few
 * entries still reach all of it. LoadBalancing acquires before every
 * allocation, so it holds max_regions regions after as many allocations
 * whatever their size: 1/max_regions of the capacity each, the most
 * regions to spread threads over (with the FillFirst sizes, 8 regions of
 * which 3 large, the two threads of tests/bench/alloc_bench.c free more
 * blocks in each other's region and did 11% less work per CPU-second).
 * A source that cannot say its capacity gets the RFC's 12, 8 and 4 GiB.
 */
static void scale_sizes(struct flex_alloc *a, uint64_t capacity)
{
	bool fill_first = a->region_strategy == FLEX_ALLOC_FILL_FIRST;
	uint64_t top = capacity / (fill_first ? 4 : a->max_regions);
	unsigned int n = 0;

	if (!capacity) {
		static const uint64_t rfc[] = { 12 * GiB, 8 * GiB, 4 * GiB };

		memcpy(a->fallback_sizes, rfc, sizeof(rfc));
		a->num_fallback_sizes = 3;
		return;
	}
	for (unsigned int k = 0; k < SCALED_SIZES; k++) {
		uint64_t size = (top >> k) / a->align * a->align;

		if (!size || (n && size == a->fallback_sizes[n - 1]))
			break;
		a->fallback_sizes[n++] = size;
	}
	if (!n)
		a->fallback_sizes[n++] = a->align;	/* a source smaller than the regions */
	a->num_fallback_sizes = n;
	if (!fill_first)
		return;
	a->first_size = capacity / 64 / a->align * a->align;
	if (a->first_size < a->fallback_sizes[n - 1])
		a->first_size = a->fallback_sizes[n - 1];
	a->grow = true;
}

static int check_config(const struct flex_alloc_config *cfg, unsigned int table)
{
	const unsigned int known = FLEX_ALLOC_F_RELEASE_EMPTY | FLEX_ALLOC_F_GLOBAL_LOCK |
				   FLEX_ALLOC_F_DEBUG;
	unsigned int max;

	if ((unsigned int)cfg->region_strategy > FLEX_ALLOC_REGION_AUTO)
		return flex_error_set(-EINVAL, "flex_alloc_new: unknown region strategy %d",
				 (int)cfg->region_strategy);
	if ((unsigned int)cfg->block_strategy > FLEX_ALLOC_BEST_FIT)
		return flex_error_set(-EINVAL, "flex_alloc_new: unknown block strategy %d",
				 (int)cfg->block_strategy);
	if (cfg->num_fallback_sizes > FLEX_ALLOC_MAX_FALLBACK_SIZES)
		return flex_error_set(-EINVAL, "flex_alloc_new: %u fallback sizes, at most %u (0: scaled to the source)",
				 cfg->num_fallback_sizes, FLEX_ALLOC_MAX_FALLBACK_SIZES);
	for (unsigned int k = 0; k < cfg->num_fallback_sizes; k++)
		if (!cfg->fallback_sizes[k] || cfg->fallback_sizes[k] % FLEX_ALLOC_ALIGN)
			return flex_error_set(-EINVAL,
					 "flex_alloc_new: fallback size %u (%llu) is not a non-zero multiple of %llu",
					 k, (unsigned long long)cfg->fallback_sizes[k], FLEX_ALLOC_ALIGN);
	if (!cfg->max_regions || cfg->max_regions > FLEX_ALLOC_REGIONS_LIMIT)
		return flex_error_set(-EINVAL, "flex_alloc_new: max_regions %u, need 1 to %u",
				 cfg->max_regions, FLEX_ALLOC_REGIONS_LIMIT);
	if (cfg->flags & ~known)
		return flex_error_set(-EINVAL, "flex_alloc_new: unknown flags 0x%x", cfg->flags & ~known);
	max = table && table < cfg->max_regions ? table : cfg->max_regions;
	if (cfg->fixed_regions > max)
		return flex_error_set(-EINVAL,
				 "flex_alloc_new: %u fixed regions but at most %u (max_regions %u, table %u)",
				 cfg->fixed_regions, max, cfg->max_regions, table);
	if (cfg->fixed_regions && (cfg->flags & FLEX_ALLOC_F_RELEASE_EMPTY))
		return flex_error_set(-EINVAL,
				 "flex_alloc_new: releasing empty regions needs lazy acquisition, not fixed regions");
	return 0;
}

/*
 * Tags of allocators created one after the other differ, so an index
 * handed to the wrong allocator is refused: the tags of two allocators
 * alive at once can only be equal if 2^INDEX_TAG_BITS allocators were
 * created in between. The counter is the only process-wide state of
 * libflex, and nothing but the tag depends on it.
 */
static _Atomic uint64_t next_tag;

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0") != 0;
}

FLEX_EXPORT int flex_alloc_new(struct flex_region_source *src, const struct flex_alloc_config *cfg,
			       struct flex_alloc **out)
{
	struct flex_region_source_info info;
	struct flex_alloc_config defaults;
	unsigned int table;
	struct flex_alloc *a;
	const char *report, *history;
	int err;

	if (!src || !out)
		return flex_error_set(-EINVAL, "flex_alloc_new: no region source or no result pointer");
	if (!cfg) {
		flex_alloc_config_init(&defaults);
		cfg = &defaults;
	}
	table = flex_region_source_table_entries(src);
	err = check_config(cfg, table);
	if (err)
		return err;
	flex_region_source_get_info(src, &info);	/* what it cannot tell stays 0 */

	a = calloc(1, sizeof(*a));
	if (!a)
		return flex_error_set(-ENOMEM, "flex_alloc_new: out of host memory");
	a->max_regions = table && table < cfg->max_regions ? table : cfg->max_regions;
	a->regions = aligned_alloc(64, a->max_regions * sizeof(*a->regions));
	report = cfg->report_path ? cfg->report_path : getenv("FLEX_ALLOC_REPORT");
	if (report && *report)
		a->report_path = strdup(report);
	if (!a->regions || (report && *report && !a->report_path)) {
		free(a->regions);
		free(a->report_path);
		free(a);
		return flex_error_set(-ENOMEM, "flex_alloc_new: out of host memory");
	}
	a->src = flex_region_source_ref(src);
	a->region_strategy = cfg->region_strategy;
	if (a->region_strategy == FLEX_ALLOC_REGION_AUTO)
		a->region_strategy = table && table <= FLEX_ALLOC_SCARCE_TABLE ?
				     FLEX_ALLOC_FILL_FIRST : FLEX_ALLOC_LOAD_BALANCING;
	a->block_strategy = cfg->block_strategy;
	a->align = info.region_align > FLEX_ALLOC_ALIGN ? info.region_align : FLEX_ALLOC_ALIGN;
	a->num_fallback_sizes = cfg->num_fallback_sizes;
	memcpy(a->fallback_sizes, cfg->fallback_sizes, sizeof(a->fallback_sizes));
	if (!a->num_fallback_sizes)
		scale_sizes(a, info.capacity);
	a->fixed = cfg->fixed_regions != 0;
	if (a->fixed)
		a->grow = false;	/* fixed regions: the largest size that can be had */
	a->flags = cfg->flags;
	a->debug = (cfg->flags & FLEX_ALLOC_F_DEBUG) || env_on("FLEX_ALLOC_DEBUG");
	a->log_fn = cfg->log_fn;
	a->log_user = cfg->log_user;
	a->pressure_fn = cfg->pressure_fn;
	a->pressure_user = cfg->pressure_user;
	/* From 1: small integers passed as indices are never this allocator's. */
	a->tag = (atomic_fetch_add(&next_tag, 1) % ((1ULL << INDEX_TAG_BITS) - 1)) + 1;
	pthread_mutex_init(&a->grow_lock, NULL);
	pthread_mutex_init(&a->global_lock, NULL);
	flex_history_init(a);
	flex_deferred_init(a);
	for (unsigned int i = 0; i < a->max_regions; i++)
		flex_region_setup(&a->regions[i], i,
			     (cfg->flags & FLEX_ALLOC_F_GLOBAL_LOCK) ? &a->global_lock : NULL,
			     cfg->block_strategy == FLEX_ALLOC_BEST_FIT);

	if (a->debug) {
		char h1[32], h2[32], h3[32], h4[32];

		alloc_debug(a, "new allocator: %s%s, %s, max_regions %u%s, %u fixed regions",
			    a->region_strategy == FLEX_ALLOC_FILL_FIRST ? "fill-first" : "load-balancing",
			    cfg->region_strategy == FLEX_ALLOC_REGION_AUTO ?
			    (table && table <= FLEX_ALLOC_SCARCE_TABLE ? " (auto: scarce table)" :
			     " (auto)") : "",
			    cfg->block_strategy == FLEX_ALLOC_BEST_FIT ? "best-fit" : "first-fit",
			    a->max_regions, table ? " (capped by the source's table)" : "",
			    cfg->fixed_regions);
		bool scaled = !cfg->num_fallback_sizes && info.capacity;

		alloc_debug(a, "region sizes %s down to %s in %u steps%s%s%s%s%s",
			    flex_human_bytes(h1, sizeof(h1), a->fallback_sizes[0]),
			    flex_human_bytes(h2, sizeof(h2), a->fallback_sizes[a->num_fallback_sizes - 1]),
			    a->num_fallback_sizes, cfg->num_fallback_sizes ? ", configured" : "",
			    scaled ? ", scaled to " : "",
			    scaled ? flex_human_bytes(h3, sizeof(h3), info.capacity) : "",
			    a->grow ? ", the first " : "",
			    a->grow ? flex_human_bytes(h4, sizeof(h4), a->first_size) : "");
	}

	history = getenv("FLEX_ALLOC_HISTORY");
	if (history && strtoull(history, NULL, 10) &&
	    flex_alloc_record_history(a, strtoull(history, NULL, 10)))
		alloc_log(a, FLEX_LOG_ERR, "flex_alloc: FLEX_ALLOC_HISTORY=%s: %s", history,
			  flex_last_error());

	if (cfg->fixed_regions) {
		unsigned int got = 0;

		pthread_mutex_lock(&a->grow_lock);
		while (got < cfg->fixed_regions && acquire_region(a, 0) == 0)
			got++;
		atomic_store(&a->regions_locked, true);
		pthread_mutex_unlock(&a->grow_lock);
		alloc_debug(a, "regions locked: %u of %u fixed regions acquired up front",
			    got, cfg->fixed_regions);
		if (!got) {
			unsigned int nsizes = a->num_fallback_sizes;
			uint64_t first = a->fallback_sizes[0];

			free(a->report_path);
			a->report_path = NULL;	/* nothing to report */
			flex_alloc_destroy(a);
			return flex_error_set(-ENOMEM,
					 "flex_alloc_new: none of %u fixed regions could be acquired (sizes tried: %u fallback sizes from %llu bytes)",
					 cfg->fixed_regions, nsizes, (unsigned long long)first);
		}
	}
	*out = a;
	return 0;
}

FLEX_EXPORT void flex_alloc_destroy(struct flex_alloc *a)
{
	uint64_t leaked = 0;

	if (!a)
		return;
	if (a->report_path)
		flex_alloc_write_exit_report(a);
	for (unsigned int i = 0; i < a->max_regions; i++) {
		struct region *r = &a->regions[i];

		if (region_present(r)) {
			leaked += r->num_live;
			flex_region_source_release(a->src, &r->src);
		}
		flex_region_teardown(r);
	}
	alloc_debug(a, "destroyed with %llu allocations still live", (unsigned long long)leaked);
	pthread_mutex_destroy(&a->grow_lock);
	pthread_mutex_destroy(&a->global_lock);
	flex_history_fini(a);
	flex_deferred_fini(a);
	flex_region_source_unref(a->src);
	free(a->report_path);
	free(a->regions);
	free(a);
}
