// SPDX-License-Identifier: GPL-2.0
/*
 * BestFit placement and the size index behind it (libflex/src/size_index.h).
 *
 * Through the public API: the smallest free block that fits is taken, the
 * lowest offset among blocks of that size, whichever way the index keeps
 * that size (in the bin, in the bin's array, in the tree; blocks of 4 MiB
 * and more are always in the tree); a block merged with a freed neighbour
 * is found at its new size only; the remainder of a split at its new
 * start and size.
 *
 * White-box, on one region (region.h): long random sequences of
 * allocations (tensors bottom-up by the strategy, programs top-down) and
 * frees against a reference model, a sorted array of free blocks scanned
 * the simple way, for both strategies. Every placement must be the
 * model's, no block may overlap another, the region's free blocks must be
 * the model's, and the trees and the index must keep their invariants.
 * One phase piles up over a thousand free blocks of one size, so that its
 * bin goes from its slots to an array to the tree and back.
 *
 * White-box, the size index alone against a model: starts over the whole
 * 32-bit range (a region's stay below 2^31), blocks of a few sizes added,
 * moved and removed at random (the lowest of a bin or any other), bins
 * filled past each change of where they keep their blocks and drained
 * again, and every best fit compared with the model's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "region.h"
#include "unit_util.h"

/* ---- through the public API ---- */

/* A BestFit allocator with one 64 MiB region. */
static struct flex_alloc *best_fit_allocator(void)
{
	struct flex_alloc_config cfg;

	config_one_size(&cfg, 64 * MiB, 1);
	cfg.block_strategy = FLEX_ALLOC_BEST_FIT;
	return new_allocator(&cfg, 64 * MiB, 0, NULL);
}

/* Allocate @size bytes; the block must start at @offset. Returns the index. */
static flex_alloc_index_t expect_at(const char *what, struct flex_alloc *a, uint64_t size,
				    uint64_t offset)
{
	flex_alloc_index_t idx = must_alloc(a, size, FLEX_ALLOC_TENSOR);
	uint64_t got = must_resolve(a, idx).offset;

	ck_assert_msg(got == offset, "%s: %llu bytes: expected offset %llu, got %llu", what,
		      (unsigned long long)size, (unsigned long long)offset,
		      (unsigned long long)got);
	return idx;
}

/*
 * A BestFit allocator with holes of @n sizes (bytes) at increasing
 * offsets, each followed by a 128 KiB block that stays, then the rest of
 * the region; the holes' offsets go to @at.
 */
static struct flex_alloc *with_holes(const uint64_t *sizes, int n, uint64_t *at)
{
	struct flex_alloc *a = best_fit_allocator();
	flex_alloc_index_t hole[16];
	uint64_t off = 0;

	for (int i = 0; i < n; i++) {
		at[i] = off;
		hole[i] = expect_at("laying out holes", a, sizes[i], off);
		expect_at("laying out spacers", a, 128 * KiB, off + sizes[i]);
		off += sizes[i] + 128 * KiB;
	}
	for (int i = 0; i < n; i++)
		must_free(a, hole[i]);
	return a;
}

START_TEST(smallest_fitting_block)
{
	/* Holes of 3 MiB, 1 MiB, 2.5 MiB, 512 KiB, 640 KiB, 4 MiB; then the tail. */
	static const uint64_t sizes[] = { 3 * MiB, 1 * MiB, 2560 * KiB, 512 * KiB, 640 * KiB,
					  4 * MiB };
	uint64_t at[6];
	struct flex_alloc *a = with_holes(sizes, 6, at);

	expect_at("600 KiB: the 640 KiB hole, not the lower 1 MiB one", a, 600 * KiB, at[4]);
	expect_at("2.1 MiB: the 2.5 MiB hole (tree), not 3 MiB", a, 2150 * KiB, at[2]);
	expect_at("3 MiB: exactly the 3 MiB hole", a, 3 * MiB, at[0]);
	expect_at("100 KiB: 40 KiB left of 640 KiB is too small, so 410 KiB left of 2.5 MiB",
		  a, 100 * KiB, at[2] + 2150 * KiB);
	expect_at("512 KiB: exactly the 512 KiB hole", a, 512 * KiB, at[3]);
	expect_at("3.5 MiB: the 4 MiB hole, not the tail", a, 3584 * KiB, at[5]);
	expect_at("40 KiB: exactly what is left of 640 KiB", a, 40 * KiB, at[4] + 600 * KiB);
	check_invariants(a, "smallest fitting block");
	flex_alloc_destroy(a);
}
END_TEST

/*
 * @n equal holes of 1 KiB, freed in a scrambled order; allocating 1 KiB
 * @n times must take them from the lowest offset up. @n picks how the
 * index keeps them: up to 3 in the bin, up to 1024 in an array, more in
 * the tree.
 */
static void ties_lowest_offset(int n)
{
	struct flex_alloc *a = best_fit_allocator();
	flex_alloc_index_t *x = malloc(2 * n * sizeof(*x));
	char what[64];

	for (int i = 0; i < 2 * n; i++)
		x[i] = must_alloc(a, 1 * KiB, FLEX_ALLOC_TENSOR);
	/* Every other block, in steps of 7 modulo n (no multiple of 7): not in offset order. */
	for (int i = 0; i < n; i++)
		must_free(a, x[2 * (int)((long)i * 7 % n)]);
	for (int i = 0; i < n; i++) {
		snprintf(what, sizeof(what), "%d equal holes, allocation %d", n, i);
		expect_at(what, a, 1 * KiB, 2 * i * KiB);
	}
	check_invariants(a, "ties");
	flex_alloc_destroy(a);
	free(x);
}

START_TEST(ties_lowest_offset_in_bin)
{
	ties_lowest_offset(2);
	ties_lowest_offset(3);
}
END_TEST

START_TEST(ties_lowest_offset_in_array)
{
	ties_lowest_offset(8);
	ties_lowest_offset(600);
}
END_TEST

START_TEST(ties_lowest_offset_in_tree)
{
	ties_lowest_offset(1500);
}
END_TEST

START_TEST(large_ties_lowest_offset)
{
	/* 3 MiB holes (in the tree by size); the lower of two equal ones. */
	static const uint64_t sizes[] = { 4 * MiB, 3 * MiB, 5 * MiB, 3 * MiB };
	uint64_t at[4];
	struct flex_alloc *a = with_holes(sizes, 4, at);

	expect_at("3 MiB: the lower of the two 3 MiB holes", a, 3 * MiB, at[1]);
	expect_at("3 MiB again: the other one", a, 3 * MiB, at[3]);
	expect_at("2.5 MiB: now the 4 MiB hole", a, 2560 * KiB, at[0]);
	flex_alloc_destroy(a);
}
END_TEST

/*
 * A merged block is found at its new size only: were the index to keep
 * the old size of a block merged away, a request would go to it.
 */
START_TEST(after_coalescing)
{
	/* h 96 KiB at 0, s 32 at 96, a 64 at 128, b 32 at 192, c 64 at 224, 32 at 288. */
	static const uint64_t sizes[] = { 96 * KiB, 32 * KiB, 64 * KiB, 32 * KiB, 64 * KiB,
					  32 * KiB };
	struct flex_alloc *a = best_fit_allocator();
	flex_alloc_index_t b[6], y;

	for (int i = 0; i < 6; i++)
		b[i] = must_alloc(a, sizes[i], FLEX_ALLOC_TENSOR);
	must_free(a, b[0]);
	must_free(a, b[2]);
	/* With the block before it: 96 KiB at 128, no 64 KiB at 128 any more. */
	must_free(a, b[3]);
	expect_at("64 KiB after a merge with the previous block: two 96 KiB holes, the lower",
		  a, 64 * KiB, 0);
	y = expect_at("96 KiB: exactly the merged hole", a, 96 * KiB, 128 * KiB);
	/* 32 KiB at 64 grows by s to 64 KiB; c leaves 64 KiB at 224; y joins both. */
	must_free(a, b[1]);
	must_free(a, b[4]);
	must_free(a, y);
	expect_at("60 KiB after a merge with both neighbours: the 224 KiB hole at 64, not a stale 64 KiB at 224",
		  a, 60 * KiB, 64 * KiB);
	expect_at("164 KiB: exactly what is left of it", a, 164 * KiB, 124 * KiB);
	check_invariants(a, "after coalescing");
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(after_split)
{
	static const uint64_t sizes[] = { 48 * KiB, 100 * KiB };
	uint64_t at[2];
	struct flex_alloc *a = with_holes(sizes, 2, at);

	expect_at("60 KiB: the 100 KiB hole", a, 60 * KiB, at[1]);
	expect_at("40 KiB: exactly the remainder, above the lower 48 KiB hole", a, 40 * KiB,
		  at[1] + 60 * KiB);
	expect_at("44 KiB: the 48 KiB hole", a, 44 * KiB, at[0]);
	expect_at("4 KiB: exactly what the 48 KiB hole left", a, 4 * KiB, at[0] + 44 * KiB);
	check_invariants(a, "after split");
	flex_alloc_destroy(a);
}
END_TEST

/* ---- white-box: one region against a model ---- */

#define MAX_BLOCKS	20000

struct blk {
	uint32_t start, size;
};

struct harness {
	struct region r;
	bool best_fit;
	struct blk free[MAX_BLOCKS];	/* the model: sorted by start, never adjacent */
	int nfree;
	struct blk live[MAX_BLOCKS];
	uint32_t leaf[MAX_BLOCKS];	/* what flex_region_alloc() gave, per live block */
	int nlive;
	const char *what;
	long step;
};

static void h_init(struct harness *h, bool best_fit, uint32_t granules, const char *what)
{
	struct flex_region src = { .region_id = 1, .size = gran_to_bytes(granules) };

	memset(h, 0, sizeof(*h));
	flex_region_setup(&h->r, 0, NULL, best_fit);
	ck_assert_int_eq(flex_region_activate(&h->r, &src), 0);
	h->best_fit = best_fit;
	h->free[0] = (struct blk){ 0, granules };
	h->nfree = 1;
	h->what = what;
}

/* The model's choice for @g granules: index into free[], or -1. */
static int model_pick(const struct harness *h, uint32_t g, enum flex_alloc_kind kind)
{
	int pick = -1;

	for (int i = 0; i < h->nfree; i++) {
		if (h->free[i].size < g)
			continue;
		if (kind == FLEX_ALLOC_PROGRAM)
			pick = i;		/* the highest that fits */
		else if (!h->best_fit)
			return i;		/* the lowest that fits */
		else if (pick < 0 || h->free[i].size < h->free[pick].size)
			pick = i;		/* the smallest; the lowest on ties */
	}
	return pick;
}

static void model_remove(struct harness *h, int i)
{
	memmove(&h->free[i], &h->free[i + 1], (h->nfree - i - 1) * sizeof(h->free[0]));
	h->nfree--;
}

/* Allocate @g granules in both; they must agree. Return: the live block's index, or -1. */
static int h_alloc(struct harness *h, uint32_t g, enum flex_alloc_kind kind)
{
	int i = model_pick(h, g, kind), err;
	uint32_t start = 0, leaf = 0, want;

	err = flex_region_alloc(&h->r, g, kind, &start, &leaf);
	if (i < 0) {
		require(err == -ENOSPC, "%s step %ld: %u granules (%s): model has no room, region returned %d at %u",
			h->what, h->step, g, kind ? "program" : "tensor", err, start);
		return -1;
	}
	want = h->free[i].start;
	if (kind == FLEX_ALLOC_PROGRAM)
		want += h->free[i].size - g;
	require(err == 0 && start == want,
		"%s step %ld: %u granules (%s): model places it at %u (free block [%u, +%u)), region returned %d at %u",
		h->what, h->step, g, kind ? "program" : "tensor", want, h->free[i].start,
		h->free[i].size, err, start);
	/* No overlap: the block lies in one free block of the model, which no live block touches. */
	require(start >= h->free[i].start && start + g <= h->free[i].start + h->free[i].size,
		"%s step %ld: block [%u, +%u) outside the free block [%u, +%u)", h->what, h->step,
		start, g, h->free[i].start, h->free[i].size);
	if (kind != FLEX_ALLOC_PROGRAM)
		h->free[i].start += g;
	h->free[i].size -= g;
	if (!h->free[i].size)
		model_remove(h, i);
	require(h->nlive < MAX_BLOCKS, "%s: more than %d live blocks", h->what, MAX_BLOCKS);
	h->live[h->nlive] = (struct blk){ start, g };
	h->leaf[h->nlive] = leaf;
	return h->nlive++;
}

/* Free live block @k in both. */
static void h_free(struct harness *h, int k)
{
	struct blk b = h->live[k];
	int i = 0;

	ck_assert_int_eq(flex_region_free(&h->r, b.start, b.size, h->leaf[k], NULL), 0);
	while (i < h->nfree && h->free[i].start < b.start)
		i++;
	require(h->nfree < MAX_BLOCKS, "%s: more than %d free blocks", h->what, MAX_BLOCKS);
	memmove(&h->free[i + 1], &h->free[i], (h->nfree - i) * sizeof(h->free[0]));
	h->free[i] = b;
	h->nfree++;
	if (i + 1 < h->nfree && b.start + b.size == h->free[i + 1].start) {
		h->free[i].size += h->free[i + 1].size;
		model_remove(h, i + 1);
	}
	if (i > 0 && h->free[i - 1].start + h->free[i - 1].size == h->free[i].start) {
		h->free[i - 1].size += h->free[i].size;
		model_remove(h, i);
	}
	h->live[k] = h->live[--h->nlive];
	h->leaf[k] = h->leaf[h->nlive];
}

static int by_start(const void *x, const void *y)
{
	const struct blk *a = x, *b = y;

	return (a->start > b->start) - (a->start < b->start);
}

/*
 * The region's free blocks are the model's; free and live blocks tile the
 * region without overlap; the trees and the index are sound.
 */
static void h_compare(struct harness *h)
{
	struct blk *all = malloc((h->nfree + h->nlive) * sizeof(*all));
	uint64_t end = 0;
	struct bt_pos p;
	const char *err;
	int k = 0, n = 0;

	for (bool more = flex_bt_first(&h->r.by_offset, &p); more; more = bt_next(&p), k++)
		require(k < h->nfree && bt_key(p) == h->free[k].start &&
			bt_val(p) == h->free[k].size,
			"%s step %ld: free block %d: model [%u, +%u), region [%u, +%u)", h->what,
			h->step, k, k < h->nfree ? h->free[k].start : 0,
			k < h->nfree ? h->free[k].size : 0, bt_key(p), bt_val(p));
	require(k == h->nfree, "%s step %ld: model %d free blocks, region %d", h->what, h->step,
		h->nfree, k);
	memcpy(all, h->free, h->nfree * sizeof(*all));
	memcpy(all + h->nfree, h->live, h->nlive * sizeof(*all));
	n = h->nfree + h->nlive;
	qsort(all, n, sizeof(*all), by_start);
	for (int i = 0; i < n; i++) {
		require(all[i].start == end, "%s step %ld: block at %u, expected %llu: %s", h->what,
			h->step, all[i].start, (unsigned long long)end,
			all[i].start < end ? "overlap" : "gap");
		end += all[i].size;
	}
	require(end == h->r.size >> GRANULE_SHIFT,
		"%s step %ld: blocks end at %llu, region at %llu", h->what, h->step,
		(unsigned long long)end, (unsigned long long)(h->r.size >> GRANULE_SHIFT));
	free(all);
	err = flex_bt_check(&h->r.by_offset);
	require(!err, "%s step %ld: by-offset tree: %s", h->what, h->step, err);
	if (h->best_fit) {
		err = flex_size_index_check(&h->r.by_size, &h->r.by_offset);
		require(!err, "%s step %ld: size index: %s", h->what, h->step, err);
	}
}

static void h_fini(struct harness *h)
{
	while (h->nlive)
		h_free(h, h->nlive - 1);
	h_compare(h);
	ck_assert_int_eq(h->nfree, 1);
	flex_region_deactivate(&h->r);
	flex_region_teardown(&h->r);
}

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * Sizes in granules: tiny ones that repeat (bins with many blocks), any
 * below the bins' limit, large ones (the tree), and live blocks' sizes
 * (exact fits and ties).
 */
static uint32_t random_size(struct harness *h, uint64_t *seed)
{
	unsigned int kind = rng(seed) % 10;

	uint32_t octave = 1U << rng(seed) % 14;

	if (kind < 4)
		return 1 + rng(seed) % 8;
	if (kind < 8)
		return octave + rng(seed) % octave;	/* log-uniform up to the bins' limit */
	if (kind < 9 || !h->nlive)
		return SIZE_BINS_MAX + rng(seed) % (8 * SIZE_BINS_MAX);
	return h->live[rng(seed) % h->nlive].size;
}

#define REGION_GRANULES	(1U << 22)	/* 512 MiB */

static void random_sequence(bool best_fit, uint64_t seed, long steps)
{
	struct harness *h = aligned_alloc(64, sizeof(*h));
	long ooms = 0, merges = 0;
	char what[48];

	snprintf(what, sizeof(what), "%s seed %llu", best_fit ? "best fit" : "first fit",
		 (unsigned long long)seed);
	h_init(h, best_fit, REGION_GRANULES, what);
	for (h->step = 0; h->step < steps; h->step++) {
		/* Drift between filling up (to reach no room) and draining. */
		int fill = (h->step / 2000) % 2 == 0;

		if (!h->nlive || (int)(rng(&seed) % 100) < (fill ? 60 : 40)) {
			enum flex_alloc_kind kind = rng(&seed) % 16 ? FLEX_ALLOC_TENSOR :
								      FLEX_ALLOC_PROGRAM;

			ooms += h_alloc(h, random_size(h, &seed), kind) < 0;
		} else {
			int before = h->nfree;

			h_free(h, (int)(rng(&seed) % h->nlive));
			merges += h->nfree <= before;
		}
		if (h->step % 256 == 0)
			h_compare(h);
	}
	ck_assert_msg(ooms > 10 && merges > 1000,
		      "%s: sequence too tame: %ld without room, %ld merging frees", what, ooms,
		      merges);
	h_fini(h);
	free(h);
}

START_TEST(random_best_fit)
{
	random_sequence(true, 17, 60000);
}
END_TEST

START_TEST(random_first_fit)
{
	random_sequence(false, 18, 60000);
}
END_TEST

/*
 * Over a thousand free blocks of one size (5 granules, between live
 * 1-granule ones), taken and given back in random order, with random
 * traffic of other sizes: the bin of 5 goes from its slots to an array
 * to the tree and back to its slots.
 */
static void one_size_piles_up(bool best_fit, uint64_t seed)
{
	struct harness *h = aligned_alloc(64, sizeof(*h));
	int pairs = 1400, k;

	h_init(h, best_fit, 1U << 16, best_fit ? "one size, best fit" : "one size, first fit");
	for (int i = 0; i < pairs; i++) {
		h_alloc(h, 5, FLEX_ALLOC_TENSOR);
		h_alloc(h, 1, FLEX_ALLOC_TENSOR);
	}
	h_compare(h);
	/* Free the 5s at random: the live array holds them at even places, until the first free. */
	for (int left = pairs; left > 0; left--, h->step++) {
		do
			k = (int)(rng(&seed) % h->nlive);
		while (h->live[k].size != 5);
		h_free(h, k);
		if (left % 100 == 0)
			h_compare(h);
	}
	h_compare(h);
	/* Take them back, with other traffic, and free the spacers too. */
	for (int i = 0; i < 6 * pairs; i++, h->step++) {
		unsigned int op = rng(&seed) % 4;

		if (op == 0 && h->nlive)
			h_free(h, (int)(rng(&seed) % h->nlive));
		else
			h_alloc(h, op == 1 ? 1 + rng(&seed) % 12 : 5, FLEX_ALLOC_TENSOR);
		if (i % 100 == 0)
			h_compare(h);
	}
	h_fini(h);
	free(h);
}

START_TEST(one_size_best_fit)
{
	one_size_piles_up(true, 5);
}
END_TEST

START_TEST(one_size_first_fit)
{
	one_size_piles_up(false, 6);
}
END_TEST

/* ---- white-box: the size index alone against a model ---- */

#define IX_MAX		3000

struct ix_harness {
	struct size_index x;
	struct bt by_offset;		/* the same blocks, for flex_size_index_check() */
	struct blk blk[IX_MAX];		/* the model, in no order */
	uint32_t hint[IX_MAX];		/* the hint given with each */
	int n;
	long step;
	uint64_t seed;
};

/* Sizes: a few small ones (bins that pile up) and one of the tree's. */
static uint32_t ix_size(struct ix_harness *h)
{
	static const uint32_t sizes[] = { 1, 2, 3, 5, 5, 5, 5, 40, SIZE_BINS_MAX + 9 };

	return sizes[rng(&h->seed) % (sizeof(sizes) / sizeof(sizes[0]))];
}

/* A start no block has: anywhere in [0, 2^32 - 2]. */
static uint32_t ix_start(struct ix_harness *h)
{
	for (;;) {
		uint32_t s = (uint32_t)rng(&h->seed) % UINT32_MAX;
		struct bt_pos p;

		if (!bt_lower_bound(&h->by_offset, s, 0, &p) || bt_key(p) != s)
			return s;
	}
}

static void ix_by_offset_del(struct ix_harness *h, uint32_t start)
{
	struct bt_pos p;

	ck_assert(bt_lower_bound(&h->by_offset, start, 0, &p) && bt_key(p) == start);
	bt_delete(&h->by_offset, p);
}

static void ix_add(struct ix_harness *h, uint32_t start, uint32_t size)
{
	uint32_t hint = (uint32_t)rng(&h->seed);

	ck_assert_int_lt(h->n, IX_MAX);
	ck_assert_int_eq(flex_size_index_add(&h->x, start, size, hint), 0);
	ck_assert_int_eq(bt_reserve(&h->by_offset), 0);
	bt_insert(&h->by_offset, start, size);
	h->hint[h->n] = hint;
	h->blk[h->n++] = (struct blk){ start, size };
}

static void ix_del(struct ix_harness *h, int k)
{
	flex_size_index_del(&h->x, h->blk[k].start, h->blk[k].size);
	ix_by_offset_del(h, h->blk[k].start);
	h->blk[k] = h->blk[--h->n];
	h->hint[k] = h->hint[h->n];
}

/* Block @k moves to a new start and size, as a split or a merge would. */
static void ix_move(struct ix_harness *h, int k, uint32_t start, uint32_t size)
{
	uint32_t hint = (uint32_t)rng(&h->seed);

	ck_assert_int_eq(flex_size_index_move(&h->x, h->blk[k].start, h->blk[k].size, start,
					      size, hint), 0);
	ix_by_offset_del(h, h->blk[k].start);
	ck_assert_int_eq(bt_reserve(&h->by_offset), 0);
	bt_insert(&h->by_offset, start, size);
	h->blk[k] = (struct blk){ start, size };
	h->hint[k] = hint;
}

/*
 * The best fit for @g: the model's smallest at least @g, the lowest start on
 * ties, with the hint last given for it (0, none, only from the tree).
 */
static void ix_best(struct ix_harness *h, uint32_t g)
{
	uint32_t start = 0, size = 0, hint = 0;
	bool found = flex_size_index_best(&h->x, g, &start, &size, &hint);
	int pick = -1;

	for (int i = 0; i < h->n; i++)
		if (h->blk[i].size >= g &&
		    (pick < 0 || h->blk[i].size < h->blk[pick].size ||
		     (h->blk[i].size == h->blk[pick].size && h->blk[i].start < h->blk[pick].start)))
			pick = i;
	require(found == (pick >= 0), "index step %ld: best for %u: index %s, model %s", h->step,
		g, found ? "found one" : "none", pick >= 0 ? "has one" : "none");
	require(pick < 0 || (start == h->blk[pick].start && size == h->blk[pick].size),
		"index step %ld: best for %u: index (%u, +%u), model (%u, +%u)", h->step, g, start,
		size, h->blk[pick].start, h->blk[pick].size);
	if (pick >= 0) {
		bool in_tree = size >= h->x.num_bins || !h->x.bin[size].cap;

		require(hint == (in_tree ? 0 : h->hint[pick]),
			"index step %ld: best for %u: (%u, +%u) has hint %u, expected %u", h->step, g,
			start, size, hint, in_tree ? 0 : h->hint[pick]);
	}
}

/* A random block of size @size, or -1. */
static int ix_pick(struct ix_harness *h, uint32_t size)
{
	int k, tries = 0;

	if (!h->n)
		return -1;
	do
		k = (int)(rng(&h->seed) % h->n);
	while (h->blk[k].size != size && ++tries < 64);
	return h->blk[k].size == size ? k : -1;
}

/*
 * One step: add, remove or move a block; take the best fit out, as an
 * allocation does (the lowest of its bin), or ask for one. @grow: the
 * share of additions in percent.
 */
static void ix_step(struct ix_harness *h, int grow)
{
	unsigned int op = rng(&h->seed) % 100;
	uint32_t g = ix_size(h);
	int k;

	if (op < (unsigned int)grow || !h->n) {
		ix_add(h, ix_start(h), g);
	} else if (op < 70) {
		/* Best fit takes the lowest of its bin: in the model, the same block. */
		ix_best(h, g);
		for (k = 0; k < h->n; k++) {
			uint32_t start = 0, size = 0, hint;

			if (flex_size_index_best(&h->x, g, &start, &size, &hint) &&
			    h->blk[k].start == start) {
				ix_del(h, k);
				break;
			}
		}
	} else if (op < 85) {
		k = ix_pick(h, ix_size(h));
		if (k >= 0)
			ix_del(h, k);
	} else {
		k = ix_pick(h, ix_size(h));
		if (k >= 0)
			ix_move(h, k, rng(&h->seed) % 2 ? h->blk[k].start : ix_start(h), g);
	}
	ix_best(h, 1 + (uint32_t)(rng(&h->seed) % 64));
}

static void ix_check(struct ix_harness *h)
{
	const char *err = flex_size_index_check(&h->x, &h->by_offset);

	require(!err, "index step %ld: %s", h->step, err);
}

/* The index alone against a model, once with each build of the scans (_i). */
START_TEST(index_against_model)
{
	struct ix_harness *h = calloc(1, sizeof(*h));
	long bins_kinds = 0;

	h->seed = 23;
	flex_size_index_init(&h->x);
	/* _i: the scans of bins' arrays, 0 the generic build, 1 the AVX2 one. */
	if (_i == 1 && !h->x.avx2) {
		fprintf(stderr, "index_against_model: this CPU has no AVX2; its scans not run\n");
		flex_size_index_fini(&h->x);
		free(h);
		return;
	}
	h->x.avx2 = _i == 1;
	ck_assert_int_eq(flex_size_index_start(&h->x, UINT32_MAX), 0);
	flex_bt_init(&h->by_offset, BT_BY_KEY);
	/*
	 * Rounds of filling (past BIN_ARRAY_MAX blocks of size 5, so its bin
	 * goes to the tree) and draining to nothing; each change of where a
	 * small bin keeps its blocks happens many times over, both ways.
	 */
	for (int round = 0; round < 3; round++) {
		while (h->n < IX_MAX - 200) {
			ix_step(h, 75);
			if (h->step++ % 64 == 0)
				ix_check(h);
		}
		for (uint32_t s = 1; s < 64; s++)
			bins_kinds |= 1L << (h->x.bin[s].cap == 0 ? 2 : h->x.bin[s].cap > BIN_SLOTS);
		while (h->n) {
			ix_step(h, 25);
			/* Check every step while bins cross their thresholds. */
			if (h->n < 64 || h->step % 64 == 0)
				ix_check(h);
			h->step++;
		}
		ix_check(h);
	}
	ck_assert_msg(bins_kinds == 7, "bins kept their blocks in too few ways: %ld", bins_kinds);
	flex_bt_fini(&h->by_offset);
	flex_size_index_fini(&h->x);
	free(h);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bestfit");
	TCase *tc = tcase_create("placement");
	TCase *model = tcase_create("model");

	tcase_add_test(tc, smallest_fitting_block);
	tcase_add_test(tc, ties_lowest_offset_in_bin);
	tcase_add_test(tc, ties_lowest_offset_in_array);
	tcase_add_test(tc, ties_lowest_offset_in_tree);
	tcase_add_test(tc, large_ties_lowest_offset);
	tcase_add_test(tc, after_coalescing);
	tcase_add_test(tc, after_split);
	suite_add_tcase(s, tc);
	tcase_set_timeout(model, 300);
	tcase_add_test(model, random_best_fit);
	tcase_add_test(model, random_first_fit);
	tcase_add_test(model, one_size_best_fit);
	tcase_add_test(model, one_size_first_fit);
	tcase_add_loop_test(model, index_against_model, 0, 2);
	suite_add_tcase(s, model);
	return run_suite(s);
}
