// SPDX-License-Identifier: GPL-2.0
/* The best-fit index of a region's free blocks: see size_index.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "size_index.h"

/* ---- where a bin keeps its blocks ---- */

static inline bool in_tree(const struct size_bin *b)
{
	return !b->cap;
}

static inline bool in_slots(const struct size_bin *b)
{
	return b->a == b->slot;
}

/* The hints of @b's entries, in the row after their starts. */
static inline uint32_t *hints(const struct size_bin *b)
{
	return b->a + b->cap;
}

/* @b's (at most BIN_SLOTS) blocks go to its slots, from an array or the tree (none left). */
static void to_slots(struct size_bin *b)
{
	uint32_t v[2 * BIN_SLOTS];

	for (unsigned int i = 0; i < BIN_SLOTS; i++) {
		bool used = i < b->n && !in_tree(b);

		v[i] = used ? b->a[i] : BIN_PAD;
		v[BIN_SLOTS + i] = used ? hints(b)[i] : 0;
	}
	if (!in_tree(b) && !in_slots(b))
		free(b->a);
	memcpy(b->slot, v, sizeof(v));
	b->a = b->slot;
	b->cap = BIN_SLOTS;
	if (!b->n)
		b->lo = 0;
}

void flex_size_index_init(struct size_index *x)
{
	memset(x, 0, sizeof(*x));
	flex_bt_init(&x->tree, BT_BY_PAIR);
	/* The bins scan with the same instruction set as the tree. */
	x->avx2 = !strcmp(x->tree.ops->name, "avx2");
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
	for (uint32_t s = 0; s < n; s++) {
		x->bin[s].a = x->bin[s].slot;	/* so that to_slots() frees nothing */
		to_slots(&x->bin[s]);
	}
	x->num_bins = n;
	return 0;
}

void flex_size_index_stop(struct size_index *x)
{
	for (uint32_t s = 0; x->bin && s < x->num_bins; s++)
		if (!in_tree(&x->bin[s]) && !in_slots(&x->bin[s]))
			free(x->bin[s].a);
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

/* Bin @s has @n blocks now: clear its bits if none. */
static inline void unmark_if_empty(struct size_index *x, uint32_t s, uint32_t n)
{
	if (n)
		return;
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

/* ---- scans of a bin's entries: whole groups of BIN_SLOTS, padding included ---- */

#if defined(__SSE2__)
_Static_assert(BIN_SLOTS == 4, "a group is an SSE2 vector");

static inline __m128i load4(const uint32_t *a)
{
	return _mm_loadu_si128((const __m128i *)a);
}

/* The smaller of each lane, compared as signed. */
static inline __m128i min4(__m128i a, __m128i b)
{
	__m128i gt = _mm_cmpgt_epi32(a, b);

	return _mm_or_si128(_mm_and_si128(gt, b), _mm_andnot_si128(gt, a));
}
#endif

/* Where the stored start @v is among the @n used entries of @a; @n if it is not there. */
static inline uint32_t find(const uint32_t *a, uint32_t n, uint32_t v)
{
#if defined(__SSE2__)
	const __m128i k = _mm_set1_epi32((int)v);

	for (uint32_t i = 0; i < n; i += 4) {
		__m128i eq = _mm_cmpeq_epi32(load4(&a[i]), k);
		unsigned int m = (unsigned int)_mm_movemask_ps(_mm_castsi128_ps(eq));

		if (m)
			return i + (uint32_t)__builtin_ctz(m);
	}
#else
	for (uint32_t i = 0; i < n; i++)
		if (a[i] == v)
			return i;
#endif
	return n;
}

/* Where the lowest start is among the @n (at least 1) used entries of @a. */
static inline uint32_t lowest(const uint32_t *a, uint32_t n)
{
#if defined(__SSE2__)
	__m128i m = load4(a);

	for (uint32_t i = 4; i < n; i += 4)
		m = min4(m, load4(&a[i]));
	m = min4(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
	m = min4(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
	return find(a, n, (uint32_t)_mm_cvtsi128_si32(m));
#else
	uint32_t lo = 0;

	for (uint32_t i = 1; i < n; i++)
		lo = (int32_t)a[i] < (int32_t)a[lo] ? i : lo;
	return lo;
#endif
}

/* The same scans of @b's entries, with the AVX2 build where it may run. */
static inline uint32_t bin_find(const struct size_index *x, const struct size_bin *b, uint32_t n,
				uint32_t v)
{
#if BT_HAVE_AVX2
	if (x->avx2 && !in_slots(b))
		return flex_size_bin_find_avx2(b->a, n, v);
#endif
	return find(b->a, n, v);
}

static inline uint32_t bin_lowest(const struct size_index *x, const struct size_bin *b, uint32_t n)
{
#if BT_HAVE_AVX2
	if (x->avx2 && !in_slots(b))
		return flex_size_bin_lowest_avx2(b->a, n);
#endif
	return lowest(b->a, n);
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
	uint32_t i;

	for (i = 0; i < b->n; i++) {
		if (bt_reserve(&x->tree))
			break;
		bt_insert(&x->tree, size, b->a[i] ^ BIN_BIAS);
	}
	if (i < b->n) {
		/* Removing entries needs no node: undo what went in. */
		while (i--)
			tree_del(x, b->a[i] ^ BIN_BIAS, size);
		return -ENOMEM;
	}
	free(b->a);
	b->a = NULL;
	b->cap = 0;
	b->lo = 0;
	return 0;
}

/*
 * @b (of @size) is full: move its entries to an array twice as large (or
 * of BIN_ARRAY_MIN), or its blocks to the tree past BIN_ARRAY_MAX; in the
 * tree, fill the tree's pools. Return: 0 or -ENOMEM (nothing changed).
 */
static int grow(struct size_index *x, struct size_bin *b, uint32_t size)
{
	uint32_t cap, *a;

	if (in_tree(b))
		return bt_reserve(&x->tree);
	if (b->cap == BIN_ARRAY_MAX)
		return to_tree(x, b, size) ? -ENOMEM : bt_reserve(&x->tree);
	cap = in_slots(b) ? BIN_ARRAY_MIN : 2U * b->cap;
	a = malloc(2 * cap * sizeof(*a));
	if (!a)
		return -ENOMEM;
	memcpy(a, b->a, b->n * sizeof(*a));
	memcpy(a + cap, hints(b), b->n * sizeof(*a));
	for (uint32_t i = b->n; i < cap; i++) {
		a[i] = BIN_PAD;
		a[cap + i] = 0;
	}
	if (!in_slots(b))
		free(b->a);
	b->a = a;
	b->cap = (uint16_t)cap;
	return 0;
}

/* Room in the bin of @size for one more block. Return: 0 or -ENOMEM (nothing changed). */
static inline int make_room(struct size_index *x, uint32_t size)
{
	struct size_bin *b;

	if (size >= x->num_bins)
		return bt_reserve(&x->tree);
	b = &x->bin[size];
	/* Full, or in the tree (cap 0). */
	return b->n < b->cap ? 0 : grow(x, b, size);
}

/* ---- changes ---- */

/* Add a block where make_room() made room. Inlined: both callers are hot. */
static inline __attribute__((always_inline)) void add(struct size_index *x, uint32_t start,
							 uint32_t size, uint32_t leaf)
{
	struct size_bin *b;
	uint32_t v, n;

	if (size >= x->num_bins) {
		bt_insert(&x->tree, size, start);
		return;
	}
	b = &x->bin[size];
	n = b->n++;
	if (in_tree(b)) {
		bt_insert(&x->tree, size, start);
		return;
	}
	v = start ^ BIN_BIAS;
	b->a[n] = v;
	hints(b)[n] = leaf;
	/* An empty bin's lowest (entry 0) is padding: the new one is below. */
	b->lo = (int32_t)v < (int32_t)b->a[b->lo] ? (uint16_t)n : b->lo;
	mark(x, size);
}

int flex_size_index_add(struct size_index *x, uint32_t start, uint32_t size, uint32_t leaf)
{
	if (make_room(x, size))
		return -ENOMEM;
	add(x, start, size, leaf);
	return 0;
}

static inline __attribute__((always_inline)) void del(struct size_index *x, uint32_t start,
							 uint32_t size)
{
	struct size_bin *b;
	uint32_t v, i, last, *a, *h;

	if (size >= x->num_bins) {
		tree_del(x, start, size);
		return;
	}
	b = &x->bin[size];
	last = --b->n;
	if (in_tree(b)) {
		tree_del(x, start, size);
		if (!last)
			to_slots(b);
		unmark_if_empty(x, size, last);
		return;
	}
	a = b->a;
	h = hints(b);
	v = start ^ BIN_BIAS;
	/* Best fit takes the lowest: no search. */
	i = a[b->lo] == v ? b->lo : bin_find(x, b, last + 1, v);
	a[i] = a[last];
	a[last] = BIN_PAD;
	h[i] = h[last];
	h[last] = 0;
	if (i == b->lo)
		b->lo = last ? (uint16_t)bin_lowest(x, b, last) : 0;
	else
		b->lo = b->lo == last ? (uint16_t)i : b->lo;
	if (last <= BIN_SLOTS / 2 && !in_slots(b))
		to_slots(b);
	unmark_if_empty(x, size, last);
}

void flex_size_index_del(struct size_index *x, uint32_t start, uint32_t size)
{
	del(x, start, size);
}

/* The order of the tree, as one number. */
static inline uint64_t pair(struct bt_pos p)
{
	return (uint64_t)bt_key(p) << 32 | bt_val(p);
}

int flex_size_index_move(struct size_index *x, uint32_t start, uint32_t size, uint32_t nstart,
			 uint32_t nsize, uint32_t leaf)
{
	uint64_t k = (uint64_t)nsize << 32 | nstart;
	struct bt_pos p, q;

	if (make_room(x, nsize))
		return -ENOMEM;
	if (size < x->num_bins || nsize < x->num_bins ||
	    !bt_lower_bound(&x->tree, size, start, &p)) {
		del(x, start, size);
		add(x, nstart, nsize, leaf);
		return 0;
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
			return 0;
		}
	}
	bt_delete(&x->tree, p);
	bt_insert(&x->tree, nsize, nstart);
	return 0;
}

bool flex_size_index_best(const struct size_index *x, uint32_t g, uint32_t *start, uint32_t *size,
			  uint32_t *leaf)
{
	uint32_t s = g < x->num_bins ? next_bin(x, g) : 0;
	struct bt_pos p;

	if (s && !in_tree(&x->bin[s])) {
		const struct size_bin *b = &x->bin[s];

		*size = s;
		*start = b->a[b->lo] ^ BIN_BIAS;
		*leaf = hints(b)[b->lo];
		return true;
	}
	/*
	 * No bin from @g up to s has blocks: the first entry in the tree at
	 * or above (g, 0) is the lowest of bin s in the tree, or (no s) a
	 * large block.
	 */
	if (!bt_lower_bound(&x->tree, g, 0, &p))
		return false;
	*size = bt_key(p);
	*start = bt_val(p);
	*leaf = 0;
	return true;
}

/* Check one bin of size @s. */
static const char *check_bin(const struct size_index *x, uint32_t s, uint64_t *tree_count)
{
	const struct size_bin *b = &x->bin[s];
	bool bit = x->map[s / 64] >> (s % 64) & 1;

	if (bit != (b->n != 0))
		return "bitmap bit differs from the bin's emptiness";
	if ((x->map_top[s / 4096] >> (s / 64 % 64) & 1) != (x->map[s / 64] != 0))
		return "top bitmap bit differs from its word's emptiness";
	if (s == 0 && b->n)
		return "blocks of size 0";
	if (in_tree(b)) {
		if (!b->n || b->a)
			return "bin in the tree empty, or with entries of its own";
		*tree_count += b->n;
		return NULL;
	}
	if (in_slots(b) ? b->cap != BIN_SLOTS || b->n > BIN_SLOTS :
			  b->cap % BIN_ARRAY_MIN || b->cap > BIN_ARRAY_MAX ||
			  b->n <= BIN_SLOTS / 2 || b->n > b->cap)
		return "bin's count or room out of range";
	if (b->n ? b->lo >= b->n : b->lo != 0)
		return "bin's lowest out of range";
	for (unsigned int i = 0; i < b->cap; i++) {
		if ((i < b->n) == (b->a[i] == BIN_PAD))
			return "bin's used entries and padding mixed up";
		if (i >= b->n && hints(b)[i])
			return "bin's padding has a hint";
		if (i < b->n && (int32_t)b->a[i] < (int32_t)b->a[b->lo])
			return "bin's lowest is not the lowest";
	}
	return NULL;
}

/*
 * Whether the index holds the block (@start, @size). With the counts
 * equal, holding every free block means holding each once and nothing else.
 */
static bool holds(const struct size_index *x, uint32_t start, uint32_t size)
{
	const struct size_bin *b = size < x->num_bins ? &x->bin[size] : NULL;
	struct bt_pos p;

	if (b && !in_tree(b)) {
		for (uint32_t i = 0; i < b->n; i++)
			if (b->a[i] == (start ^ BIN_BIAS))
				return true;
		return false;
	}
	return bt_lower_bound(&x->tree, size, start, &p) && bt_key(p) == size &&
	       bt_val(p) == start;
}

const char *flex_size_index_check(const struct size_index *x, const struct bt *by_offset)
{
	uint64_t tree_count = 0, binned = 0, total = 0;
	struct bt_pos p;
	bool more;
	const char *err = flex_bt_check(&x->tree);

	if (err)
		return err;
	for (uint32_t s = 0; s < x->num_bins; s++) {
		err = check_bin(x, s, &tree_count);
		if (err)
			return err;
		if (!in_tree(&x->bin[s]))
			total += x->bin[s].n;
	}
	for (more = flex_bt_first(&x->tree, &p); more; more = bt_next(&p)) {
		uint32_t s = bt_key(p);

		total++;
		if (s >= x->num_bins)
			continue;
		if (!in_tree(&x->bin[s]))
			return "tree holds a block of a bin not in the tree";
		binned++;
	}
	if (binned != tree_count)
		return "counts of bins in the tree differ from their blocks there";
	if (total != by_offset->count)
		return "index holds a different number of blocks than the by-offset tree";
	for (more = flex_bt_first(by_offset, &p); more; more = bt_next(&p))
		if (!holds(x, bt_key(p), bt_val(p)))
			return "a free block is missing from the index at its size";
	return NULL;
}
