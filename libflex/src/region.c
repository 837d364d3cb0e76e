// SPDX-License-Identifier: GPL-2.0
/* One memory region's blocks: see region.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "region.h"

/*
 * Add or remove a free block in the best-fit index (when there is one).
 * An addition or a move gives the index the number of the by-offset leaf
 * that holds the block, or will once that tree changes (a split may put it
 * in the next leaf instead: bt_near() looks there too). Adding may fail for
 * lack of host memory (-ENOMEM), and then changes nothing.
 */
static int size_add(struct region *r, uint32_t start, uint32_t size, uint32_t leaf)
{
	return r->best_fit ? flex_size_index_add(&r->by_size, start, size, leaf) : 0;
}

static void size_del(struct region *r, uint32_t start, uint32_t size)
{
	if (r->best_fit)
		flex_size_index_del(&r->by_size, start, size);
}

/* A free block in the best-fit index is split or merged; as size_add(). */
static int size_move(struct region *r, uint32_t start, uint32_t size, uint32_t nstart,
		     uint32_t nsize, struct bt_pos p)
{
	return r->best_fit ?
		flex_size_index_move(&r->by_size, start, size, nstart, nsize, bt_leaf_id(p)) : 0;
}

/*
 * The by-offset entry of the free block at @start, from the leaf the index
 * gave with it (@leaf, 0 if none) or, if it moved too far, by a descent.
 */
static bool find_free(const struct region *r, uint32_t start, uint32_t leaf, struct bt_pos *p)
{
	struct bt_gap g;

	if (bt_near(&r->by_offset, bt_leaf_by_id(&r->by_offset, leaf), start, &g) && g.has_succ &&
	    bt_key(g.succ) == start) {
		*p = g.succ;
		return true;
	}
	return bt_lower_bound(&r->by_offset, start, 0, p);
}

void flex_region_setup(struct region *r, unsigned int slot, pthread_mutex_t *lock, bool best_fit)
{
	pthread_mutexattr_t attr;

	memset(r, 0, sizeof(*r));
	/*
	 * Adaptive: spin briefly before sleeping, since critical sections
	 * are short and a futex sleep costs microseconds.
	 */
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
	pthread_mutex_init(&r->own_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	r->lock = lock ? lock : &r->own_lock;
	r->slot = slot;
	r->best_fit = best_fit;
	flex_bt_init(&r->by_offset, BT_BY_KEY);
	flex_size_index_init(&r->by_size);
	flex_slot_table_init(&r->slots);
}

void flex_region_teardown(struct region *r)
{
	flex_bt_fini(&r->by_offset);
	flex_size_index_fini(&r->by_size);
	flex_slot_table_fini(&r->slots);
	pthread_mutex_destroy(&r->own_lock);
}

int flex_region_activate(struct region *r, const struct flex_region *src)
{
	uint64_t granules = src->size >> GRANULE_SHIFT;

	if (granules > GRANULES_MAX)
		granules = GRANULES_MAX;
	if (!granules)
		return -EINVAL;
	if (r->best_fit && flex_size_index_start(&r->by_size, (uint32_t)granules))
		return -ENOMEM;
	if (bt_reserve(&r->by_offset) || size_add(r, 0, (uint32_t)granules, 0)) {
		flex_size_index_stop(&r->by_size);
		return -ENOMEM;
	}
	r->src = *src;
	r->size = gran_to_bytes((uint32_t)granules);
	bt_insert(&r->by_offset, 0, (uint32_t)granules);
	r->free_bytes = r->size;
	r->allocated_bytes = 0;
	r->requested_bytes = 0;
	r->num_live = 0;
	region_publish(r);
	return 0;
}

void flex_region_deactivate(struct region *r)
{
	flex_bt_clear(&r->by_offset);
	flex_size_index_stop(&r->by_size);
	r->free_bytes = 0;
	r->size = 0;
	region_publish(r);
}

int flex_region_alloc(struct region *r, uint32_t g, enum flex_alloc_kind kind, uint32_t *start_out,
		 uint32_t *leaf)
{
	bool top_down = kind == FLEX_ALLOC_PROGRAM;
	uint32_t start, size, hint;
	struct bt_pos p;
	bool found;

	if (top_down) {
		found = bt_last_fit(&r->by_offset, g, &p);
	} else if (r->best_fit) {
		/*
		 * The index says what the block is: what follows until the
		 * by-offset tree changes does not wait for the block's leaf,
		 * a likely cache miss, to load. It also says where that leaf
		 * was, which mostly spares the descent to it.
		 */
		found = flex_size_index_best(&r->by_size, g, &start, &size, &hint) &&
			find_free(r, start, hint, &p);
	} else {
		found = bt_first_fit(&r->by_offset, g, &p);
	}
	if (!found)
		return -ENOSPC;
	if (top_down || !r->best_fit) {
		start = bt_key(p);
		size = bt_val(p);
	}
	/*
	 * Only the index may need memory, so it changes first: the by-offset
	 * tree changes or drops an entry.
	 */
	if (size == g) {
		/* Exact fit: the free block goes away. */
		size_del(r, start, size);
		bt_delete(&r->by_offset, p);
		*start_out = start;
	} else if (top_down) {
		/* Carve the top end: the free part keeps its start. */
		if (size_move(r, start, size, start, size - g, p))
			return -ENOMEM;
		bt_set(&r->by_offset, p, start, size - g);
		*start_out = start + size - g;
	} else {
		/* Carve the bottom end: the free part starts after it. */
		if (size_move(r, start, size, start + g, size - g, p))
			return -ENOMEM;
		bt_set(&r->by_offset, p, start + g, size - g);
		*start_out = start;
	}
	/*
	 * The free block carved from was (and its remainder is) a neighbour
	 * of the new block. After an exact fit p's leaf may be gone already:
	 * bt_near() copes. A number too large for the slot gives no hint.
	 */
	*leaf = bt_leaf_id(p) < (1U << SLOT_LEAF_BITS) ? bt_leaf_id(p) : 0;
	r->free_bytes -= gran_to_bytes(g);
	r->allocated_bytes += gran_to_bytes(g);
	r->num_live++;
	return 0;
}

/* The free blocks just before and just after [s, ...), starting at @leaf. */
static void find_gap(const struct region *r, uint32_t s, uint32_t leaf, struct bt_gap *g)
{
	if (bt_near(&r->by_offset, bt_leaf_by_id(&r->by_offset, leaf), s, g))
		return;
	g->has_succ = bt_lower_bound(&r->by_offset, s, 0, &g->succ);
	if (g->has_succ) {
		g->pred = g->succ;
		g->has_pred = bt_prev(&g->pred);
	} else {
		g->has_pred = flex_bt_last(&r->by_offset, &g->pred);
	}
}

int flex_region_free(struct region *r, uint32_t s, uint32_t z, uint32_t leaf, struct coalesce_info *ci)
{
	bool with_prev, with_next;
	uint32_t merged_start, merged_size;
	struct bt_gap gap;

	if (bt_reserve(&r->by_offset))
		return -ENOMEM;
	find_gap(r, s, leaf, &gap);
	with_next = gap.has_succ && bt_key(gap.succ) == (uint64_t)s + z;
	with_prev = gap.has_pred && (uint64_t)bt_key(gap.pred) + bt_val(gap.pred) == s;
	merged_start = with_prev ? bt_key(gap.pred) : s;
	merged_size = z + (with_prev ? bt_val(gap.pred) : 0) + (with_next ? bt_val(gap.succ) : 0);

	/*
	 * The index first: only its change may fail, and the by-offset tree
	 * has its node reserved.
	 */
	if (with_prev && with_next) {
		if (size_move(r, merged_start, bt_val(gap.pred), merged_start, merged_size,
			      gap.pred))
			return -ENOMEM;
		size_del(r, s + z, bt_val(gap.succ));
		/* Setting moves no entry, so gap.succ stays valid for the deletion. */
		bt_set(&r->by_offset, gap.pred, merged_start, merged_size);
		bt_delete(&r->by_offset, gap.succ);
	} else if (with_prev) {
		if (size_move(r, merged_start, bt_val(gap.pred), merged_start, merged_size,
			      gap.pred))
			return -ENOMEM;
		bt_set(&r->by_offset, gap.pred, merged_start, merged_size);
	} else if (with_next) {
		if (size_move(r, s + z, bt_val(gap.succ), merged_start, merged_size, gap.succ))
			return -ENOMEM;
		/* The successor grows downward; its place in the order holds. */
		bt_set(&r->by_offset, gap.succ, merged_start, merged_size);
	} else {
		uint32_t near = gap.has_succ ? bt_leaf_id(gap.succ) :
				gap.has_pred ? bt_leaf_id(gap.pred) : 0;

		if (size_add(r, s, z, near))
			return -ENOMEM;
		if (gap.has_succ) {
			bt_insert_before(&r->by_offset, gap.succ, s, z);
		} else if (gap.has_pred) {
			gap.pred.i++;	/* after the last free block */
			bt_insert_before(&r->by_offset, gap.pred, s, z);
		} else {
			bt_insert(&r->by_offset, s, z);
		}
	}

	r->free_bytes += gran_to_bytes(z);
	r->allocated_bytes -= gran_to_bytes(z);
	r->num_live--;
	if (ci) {
		ci->start = gran_to_bytes(merged_start);
		ci->size = gran_to_bytes(merged_size);
		ci->with_prev = with_prev;
		ci->with_next = with_next;
	}
	return 0;
}

/* ---- walking: free blocks from the tree, allocated ones from the slots ---- */

struct live_block {
	uint32_t start;
	uint32_t slot;
};

static int by_start(const void *x, const void *y)
{
	const struct live_block *a = x, *b = y;

	return (a->start > b->start) - (a->start < b->start);
}

int flex_region_walk(const struct region *r,
		int (*fn)(void *user, uint32_t start, uint32_t size, const struct slot *s,
			  uint32_t slot),
		void *user)
{
	struct live_block *live = NULL;
	uint64_t n = 0, i = 0;
	struct bt_pos p;
	bool more;
	int ret = 0;

	if (r->num_live) {
		live = malloc(r->num_live * sizeof(*live));
		if (!live)
			return -ENOMEM;
		for (uint32_t k = 0; k < r->slots.capacity && n < r->num_live; k++)
			if (slot_at(&r->slots, k)->live)
				live[n++] = (struct live_block){ slot_at(&r->slots, k)->start, k };
		qsort(live, n, sizeof(*live), by_start);
	}
	more = flex_bt_first(&r->by_offset, &p);
	while (!ret && (more || i < n)) {
		if (more && (i == n || bt_key(p) < live[i].start)) {
			ret = fn(user, bt_key(p), bt_val(p), NULL, 0);
			more = bt_next(&p);
		} else {
			const struct slot *s = slot_at(&r->slots, live[i].slot);

			ret = fn(user, s->start, s->size, s, live[i].slot);
			i++;
		}
	}
	free(live);
	return ret;
}
