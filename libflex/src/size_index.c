// SPDX-License-Identifier: GPL-2.0
/* The best-fit index of a region's free blocks: see size_index.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "size_index.h"

void flex_size_index_init(struct size_index *x)
{
	memset(x, 0, sizeof(*x));
	flex_bt_init(&x->tree, BT_BY_PAIR);
}

void flex_size_index_fini(struct size_index *x)
{
	flex_size_index_stop(x);
	flex_bt_fini(&x->tree);
}

int flex_size_index_start(struct size_index *x, uint32_t granules)
{
	/* A bin for every size the region can have, up to SIZE_BINS_MAX. */
	uint32_t n = granules < SIZE_BINS_MAX ? (granules + 64U) & ~63U : SIZE_BINS_MAX;
	uint32_t words = n / 64, top_words = (words + 63) / 64;

	x->bin = calloc(n, sizeof(*x->bin));
	x->map = calloc(words, sizeof(*x->map));
	x->map_top = calloc(top_words, sizeof(*x->map_top));
	if (!x->bin || !x->map || !x->map_top) {
		flex_size_index_stop(x);
		return -ENOMEM;
	}
	x->num_bins = n;
	return 0;
}

void flex_size_index_stop(struct size_index *x)
{
	for (uint32_t s = 0; x->bin && s < x->num_bins; s++)
		if (x->bin[s].mode == BIN_ARRAY)
			free(x->bin[s].arr.starts);
	flex_bt_clear(&x->tree);
	free(x->bin);
	free(x->map);
	free(x->map_top);
	x->bin = NULL;
	x->map = NULL;
	x->map_top = NULL;
	x->num_bins = 0;
}

/* ---- the bitmap of non-empty bins ---- */

static inline void mark(struct size_index *x, uint32_t s)
{
	x->map[s / 64] |= 1ULL << (s % 64);
	x->map_top[s / 4096] |= 1ULL << (s / 64 % 64);
}

static inline void unmark(struct size_index *x, uint32_t s)
{
	x->map[s / 64] &= ~(1ULL << (s % 64));
	if (!x->map[s / 64])
		x->map_top[s / 4096] &= ~(1ULL << (s / 64 % 64));
}

/* The smallest size at or above @g (below num_bins) whose bin has blocks; 0: none. */
static inline uint32_t next_bin(const struct size_index *x, uint32_t g)
{
	uint32_t w = g / 64, words = x->num_bins / 64, t;
	uint64_t bits = x->map[w] & (~0ULL << (g % 64));

	if (bits)
		return w * 64 + (uint32_t)__builtin_ctzll(bits);
	/* The next non-empty word, from the top level. */
	if (++w == words)
		return 0;
	t = w / 64;
	bits = x->map_top[t] & (~0ULL << (w % 64));
	while (!bits) {
		if (++t == (words + 63) / 64)
			return 0;
		bits = x->map_top[t];
	}
	w = t * 64 + (uint32_t)__builtin_ctzll(bits);
	return w * 64 + (uint32_t)__builtin_ctzll(x->map[w]);
}

/* ---- a bin's array: starts in descending order ---- */

/* How many of the @n starts in @a are above @start (no branch on the data). */
static inline uint32_t above(const uint32_t *a, uint32_t n, uint32_t start)
{
	uint32_t lo = 0;

	while (n > 1) {
		uint32_t half = n / 2;

		lo = a[lo + half - 1] > start ? lo + half : lo;
		n -= half;
	}
	return lo + (n && a[lo] > start);
}

/* ---- the tree ---- */

static void tree_del(struct size_index *x, uint32_t start, uint32_t size)
{
	struct bt_pos p;

	if (bt_lower_bound(&x->tree, size, start, &p))
		bt_delete(&x->tree, p);
}

/*
 * @b's array is full at BIN_ARRAY_MAX: move its blocks into the tree, or
 * (out of memory) leave them where they are. Return: 0 or -ENOMEM.
 */
static int to_tree(struct size_index *x, struct size_bin *b, uint32_t size)
{
	uint32_t *a = b->arr.starts;
	uint32_t i;

	for (i = 0; i < b->n; i++) {
		if (bt_reserve(&x->tree))
			break;
		bt_insert(&x->tree, size, a[i]);
	}
	if (i < b->n) {
		/* Removing entries needs no node: undo what went in. */
		while (i--)
			tree_del(x, a[i], size);
		return -ENOMEM;
	}
	free(a);
	b->mode = BIN_TREE;
	return 0;
}

/* ---- changes ---- */

int flex_size_index_reserve(struct size_index *x, uint32_t size)
{
	struct size_bin *b;
	uint32_t *a;

	if (size >= x->num_bins)
		return bt_reserve(&x->tree);
	b = &x->bin[size];
	switch (b->mode) {
	case BIN_INLINE:
		if (b->n < BIN_SLOTS)
			return 0;
		a = malloc(BIN_ARRAY_MIN * sizeof(*a));
		if (!a)
			return -ENOMEM;
		for (uint32_t i = 0; i < BIN_SLOTS; i++)
			a[i] = b->start[BIN_SLOTS - 1 - i];
		b->arr.starts = a;
		b->arr.cap = BIN_ARRAY_MIN;
		b->mode = BIN_ARRAY;
		return 0;
	case BIN_ARRAY:
		if (b->n < b->arr.cap)
			return 0;
		if (b->arr.cap < BIN_ARRAY_MAX) {
			a = realloc(b->arr.starts, 2 * b->arr.cap * sizeof(*a));
			if (!a)
				return -ENOMEM;
			b->arr.starts = a;
			b->arr.cap *= 2;
			return 0;
		}
		if (to_tree(x, b, size))
			return -ENOMEM;
		return bt_reserve(&x->tree);
	default:
		return bt_reserve(&x->tree);
	}
}

void flex_size_index_add(struct size_index *x, uint32_t start, uint32_t size)
{
	struct size_bin *b;
	uint32_t i, *a;

	if (size >= x->num_bins) {
		bt_insert(&x->tree, size, start);
		return;
	}
	b = &x->bin[size];
	switch (b->mode) {
	case BIN_INLINE:
		for (i = b->n; i > 0 && b->start[i - 1] > start; i--)
			b->start[i] = b->start[i - 1];
		b->start[i] = start;
		if (!b->n)
			mark(x, size);
		break;
	case BIN_ARRAY:
		a = b->arr.starts;
		i = above(a, b->n, start);
		memmove(&a[i + 1], &a[i], (b->n - i) * sizeof(*a));
		a[i] = start;
		break;
	default:
		bt_insert(&x->tree, size, start);
		break;
	}
	b->n++;
}

void flex_size_index_del(struct size_index *x, uint32_t start, uint32_t size)
{
	struct size_bin *b;
	uint32_t i, *a;

	if (size >= x->num_bins) {
		tree_del(x, start, size);
		return;
	}
	b = &x->bin[size];
	switch (b->mode) {
	case BIN_INLINE:
		for (i = 0; i + 1 < b->n && b->start[i] != start; i++)
			;
		for (; i + 1 < b->n; i++)
			b->start[i] = b->start[i + 1];
		break;
	case BIN_ARRAY:
		a = b->arr.starts;
		/* Best fit takes the lowest, the last: no search, no shift. */
		if (a[b->n - 1] != start) {
			i = above(a, b->n, start);
			memmove(&a[i], &a[i + 1], (b->n - i - 1) * sizeof(*a));
		}
		if (b->n == 2) {
			/* One left: back into the slots. */
			b->start[0] = a[0];
			b->mode = BIN_INLINE;
			free(a);
		}
		break;
	default:
		tree_del(x, start, size);
		if (b->n == 1)
			b->mode = BIN_INLINE;
		break;
	}
	if (!--b->n)
		unmark(x, size);
}

/* The order of the tree, as one number. */
static inline uint64_t pair(struct bt_pos p)
{
	return (uint64_t)bt_key(p) << 32 | bt_val(p);
}

void flex_size_index_move(struct size_index *x, uint32_t start, uint32_t size, uint32_t nstart,
			  uint32_t nsize)
{
	uint64_t k = (uint64_t)nsize << 32 | nstart;
	struct bt_pos p, q;

	if (size < x->num_bins || nsize < x->num_bins ||
	    !bt_lower_bound(&x->tree, size, start, &p)) {
		flex_size_index_del(x, start, size);
		flex_size_index_add(x, nstart, nsize);
		return;
	}
	/*
	 * Large before and after: one entry of the tree changes. Where it
	 * keeps its place in the order (the region's last block, carved or
	 * grown, mostly does), it changes in place, without a shift or a
	 * second descent.
	 */
	q = p;
	if (!bt_prev(&q) || pair(q) < k) {
		q = p;
		if (!bt_next(&q) || pair(q) > k) {
			bt_set(&x->tree, p, nsize, nstart);
			return;
		}
	}
	bt_delete(&x->tree, p);
	bt_insert(&x->tree, nsize, nstart);
}

bool flex_size_index_best(const struct size_index *x, uint32_t g, uint32_t *start, uint32_t *size)
{
	uint32_t s = g < x->num_bins ? next_bin(x, g) : 0;
	struct bt_pos p;

	if (s) {
		const struct size_bin *b = &x->bin[s];

		*size = s;
		if (b->mode == BIN_INLINE) {
			*start = b->start[0];
			return true;
		}
		if (b->mode == BIN_ARRAY) {
			*start = b->arr.starts[b->n - 1];
			return true;
		}
	}
	/*
	 * No bin from @g up to s has blocks: the first entry in the tree at
	 * or above (g, 0) is the lowest of bin s in tree mode, or (no s) a
	 * large block.
	 */
	if (!bt_lower_bound(&x->tree, g, 0, &p))
		return false;
	*size = bt_key(p);
	*start = bt_val(p);
	return true;
}

/* Check one bin of size @s. */
static const char *check_bin(const struct size_index *x, uint32_t s, uint64_t *in_tree)
{
	const struct size_bin *b = &x->bin[s];
	bool bit = x->map[s / 64] >> (s % 64) & 1;

	if (bit != (b->n != 0))
		return "bitmap bit differs from the bin's emptiness";
	if ((x->map_top[s / 4096] >> (s / 64 % 64) & 1) != (x->map[s / 64] != 0))
		return "top bitmap bit differs from its word's emptiness";
	if (s == 0 && b->n)
		return "blocks of size 0";
	switch (b->mode) {
	case BIN_INLINE:
		if (b->n > BIN_SLOTS)
			return "inline bin holds more blocks than its slots";
		for (unsigned int i = 1; i < b->n; i++)
			if (b->start[i - 1] >= b->start[i])
				return "inline bin's starts not ascending";
		return NULL;
	case BIN_ARRAY:
		if (b->n < 2 || b->n > b->arr.cap || b->arr.cap > BIN_ARRAY_MAX)
			return "array bin's count out of range";
		for (unsigned int i = 1; i < b->n; i++)
			if (b->arr.starts[i - 1] <= b->arr.starts[i])
				return "array bin's starts not descending";
		return NULL;
	case BIN_TREE:
		if (!b->n)
			return "empty bin in tree mode";
		*in_tree += b->n;
		return NULL;
	default:
		return "bin in an unknown mode";
	}
}

/* Whether the index holds the block (@start, @size). */
static bool holds(const struct size_index *x, uint32_t start, uint32_t size)
{
	const struct size_bin *b = size < x->num_bins ? &x->bin[size] : NULL;
	struct bt_pos p;
	uint32_t i;

	if (b && b->mode == BIN_INLINE) {
		for (i = 0; i < b->n; i++)
			if (b->start[i] == start)
				return true;
		return false;
	}
	if (b && b->mode == BIN_ARRAY) {
		i = above(b->arr.starts, b->n, start);
		return i < b->n && b->arr.starts[i] == start;
	}
	return bt_lower_bound(&x->tree, size, start, &p) && bt_key(p) == size &&
	       bt_val(p) == start;
}

const char *flex_size_index_check(const struct size_index *x, const struct bt *by_offset)
{
	uint64_t in_tree = 0, binned = 0, total = 0;
	struct bt_pos p;
	bool more;
	const char *err = flex_bt_check(&x->tree);

	if (err)
		return err;
	for (uint32_t s = 0; s < x->num_bins; s++) {
		err = check_bin(x, s, &in_tree);
		if (err)
			return err;
		if (x->bin[s].mode != BIN_TREE)
			total += x->bin[s].n;
	}
	for (more = flex_bt_first(&x->tree, &p); more; more = bt_next(&p)) {
		uint32_t s = bt_key(p);

		total++;
		if (s >= x->num_bins)
			continue;
		if (x->bin[s].mode != BIN_TREE)
			return "tree holds a block of a bin not in tree mode";
		binned++;
	}
	if (binned != in_tree)
		return "tree-mode bins' counts differ from their blocks in the tree";
	if (total != by_offset->count)
		return "index holds a different number of blocks than the by-offset tree";
	for (more = flex_bt_first(by_offset, &p); more; more = bt_next(&p))
		if (!holds(x, bt_key(p), bt_val(p)))
			return "a free block is missing from the index at its size";
	return NULL;
}
