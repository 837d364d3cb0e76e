/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The free-block B+tree's operations that scan nodes (btree.h), written
 * once and built once per instruction set: btree.c includes this file for
 * SSE2 (every x86-64 CPU) or plain C (other CPUs) as flex_bt_ops_generic, and
 * btree_avx2.c for AVX2 as flex_bt_ops_avx2. The includer defines BT_OPS (the
 * table's name) and BT_OPS_NAME. Everything here is static: the table is
 * the only way in.
 */
#ifndef FLEX_BTREE_IMPL_H
#define FLEX_BTREE_IMPL_H

#include <stdlib.h>
#include <string.h>

#include "btree.h"

#if defined(__AVX2__)
#include <immintrin.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

_Static_assert(BT_FANOUT % 8 == 0 && BT_FANOUT <= 64,
	       "the scans need a fanout that is a multiple of 8, at most 64");

static inline struct bt_inner *inner(const struct bt_node *n)
{
	return (struct bt_inner *)n;
}

/* A number as stored, and back (see btree.h). */
static inline uint32_t enc(uint32_t x)
{
	return x ^ BT_BIAS;
}

static inline uint32_t dec(uint32_t x)
{
	return x ^ BT_BIAS;
}

/* The val of a padding entry: never counted by any scan (see btree.h). */
static inline uint32_t pad_val(const struct bt *t)
{
	return t->order == BT_BY_PAIR ? UINT32_MAX : 0;
}

/* Whether entry @i of @n is padding (needs no look at n). */
static inline bool is_padding(const struct bt *t, const struct bt_node *n, unsigned int i)
{
	return n->key[i] == enc(BT_KEY_NONE) && n->val[i] == enc(pad_val(t));
}

/* Entries @from.. of @n become padding. */
static void pad(const struct bt *t, struct bt_node *n, unsigned int from)
{
	uint32_t k = enc(BT_KEY_NONE), v = enc(pad_val(t));

	for (unsigned int i = from; i < BT_FANOUT; i++) {
		n->key[i] = k;
		n->val[i] = v;
	}
}

/*
 * ---- vectors of stored numbers: V_LANES of them, compared as signed ----
 *
 * The scans below are written once over these: eight lanes with AVX2, four
 * with SSE2, one (plain C) elsewhere. A compare gives all-ones (-1) or 0
 * per lane; v_bits() packs one bit per lane, lane 0 lowest.
 */
#if defined(__AVX2__)
#define V_LANES		8
typedef __m256i vec;

static inline vec v_load(const uint32_t *p) { return _mm256_load_si256((const __m256i *)p); }
static inline vec v_set1(uint32_t x) { return _mm256_set1_epi32((int)x); }
static inline vec v_zero(void) { return _mm256_setzero_si256(); }
static inline vec v_gt(vec a, vec b) { return _mm256_cmpgt_epi32(a, b); }
static inline vec v_eq(vec a, vec b) { return _mm256_cmpeq_epi32(a, b); }
static inline vec v_and(vec a, vec b) { return _mm256_and_si256(a, b); }
static inline vec v_or(vec a, vec b) { return _mm256_or_si256(a, b); }
static inline vec v_sub(vec a, vec b) { return _mm256_sub_epi32(a, b); }
static inline vec v_max(vec a, vec b) { return _mm256_max_epi32(a, b); }
static inline unsigned int v_bits(vec a)
{
	return (unsigned int)_mm256_movemask_ps(_mm256_castsi256_ps(a));
}

/* The halves folded onto one another, then as SSE2 below. */
#define V_HALF(a)	_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1)
static inline uint32_t v_sum(vec a)
{
	__m128i h = _mm_add_epi32(V_HALF(a));

	h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
	h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
	return (uint32_t)_mm_cvtsi128_si32(h);
}

static inline uint32_t v_top(vec a)
{
	__m128i h = _mm_max_epi32(V_HALF(a));

	h = _mm_max_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
	h = _mm_max_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
	return (uint32_t)_mm_cvtsi128_si32(h);
}
#elif defined(__SSE2__)
#define V_LANES		4
typedef __m128i vec;

static inline vec v_load(const uint32_t *p) { return _mm_load_si128((const __m128i *)p); }
static inline vec v_set1(uint32_t x) { return _mm_set1_epi32((int)x); }
static inline vec v_zero(void) { return _mm_setzero_si128(); }
static inline vec v_gt(vec a, vec b) { return _mm_cmpgt_epi32(a, b); }
static inline vec v_eq(vec a, vec b) { return _mm_cmpeq_epi32(a, b); }
static inline vec v_and(vec a, vec b) { return _mm_and_si128(a, b); }
static inline vec v_or(vec a, vec b) { return _mm_or_si128(a, b); }
static inline vec v_sub(vec a, vec b) { return _mm_sub_epi32(a, b); }
/* SSE2 has no 32-bit max: pick by a compare. */
static inline vec v_max(vec a, vec b)
{
	vec gt = v_gt(a, b);

	return v_or(v_and(gt, a), _mm_andnot_si128(gt, b));
}

static inline unsigned int v_bits(vec a)
{
	return (unsigned int)_mm_movemask_ps(_mm_castsi128_ps(a));
}

static inline uint32_t v_sum(vec a)
{
	a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(1, 0, 3, 2)));
	a = _mm_add_epi32(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
	return (uint32_t)_mm_cvtsi128_si32(a);
}

static inline uint32_t v_top(vec a)
{
	a = v_max(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(1, 0, 3, 2)));
	a = v_max(a, _mm_shuffle_epi32(a, _MM_SHUFFLE(2, 3, 0, 1)));
	return (uint32_t)_mm_cvtsi128_si32(a);
}
#else
#define V_LANES		1
typedef int32_t vec;

static inline vec v_load(const uint32_t *p) { return (int32_t)*p; }
static inline vec v_set1(uint32_t x) { return (int32_t)x; }
static inline vec v_zero(void) { return 0; }
static inline vec v_gt(vec a, vec b) { return -(a > b); }
static inline vec v_eq(vec a, vec b) { return -(a == b); }
static inline vec v_and(vec a, vec b) { return a & b; }
static inline vec v_or(vec a, vec b) { return a | b; }
static inline vec v_sub(vec a, vec b) { return (int32_t)((uint32_t)a - (uint32_t)b); }
static inline vec v_max(vec a, vec b) { return a > b ? a : b; }
static inline unsigned int v_bits(vec a) { return (unsigned int)a & 1; }
static inline uint32_t v_sum(vec a) { return (uint32_t)a; }
static inline uint32_t v_top(vec a) { return (uint32_t)a; }
#endif

/* ---- scans: whole nodes, padding included ---- */

/*
 * Entries of @n before (@k, @v) in the tree's order (BY_KEY: keys below
 * @k). Padding is never before anything a caller asks for.
 */
static inline unsigned int count_below(const struct bt *t, const struct bt_node *n, uint32_t k,
				       uint32_t v)
{
	const vec kb = v_set1(enc(k)), vb = v_set1(enc(v));
	vec acc = v_zero();

	/* A true compare is -1: subtracting it counts. */
	if (t->order == BT_BY_KEY) {
#pragma GCC unroll 64
		for (unsigned int i = 0; i < BT_FANOUT; i += V_LANES)
			acc = v_sub(acc, v_gt(kb, v_load(&n->key[i])));
	} else {
#pragma GCC unroll 64
		for (unsigned int i = 0; i < BT_FANOUT; i += V_LANES) {
			vec key = v_load(&n->key[i]);
			vec val_below = v_and(v_eq(key, kb), v_gt(vb, v_load(&n->val[i])));

			acc = v_sub(acc, v_or(v_gt(kb, key), val_below));
		}
	}
	return v_sum(acc);
}

/*
 * Bit i set when entry i has a val of at least @v. Padding has val 0: for
 * @v 0 the entries past n are masked off, which needs the node's count
 * (another cache line), so only then.
 */
static inline uint64_t fit_mask(const struct bt_node *n, uint32_t v)
{
	const vec vb = v_set1(enc(v));
	uint64_t below = 0;

	if (!v)
		return n->n >= 64 ? UINT64_MAX : (1ULL << n->n) - 1;
#pragma GCC unroll 64
	for (unsigned int i = 0; i < BT_FANOUT; i += V_LANES)
		below |= (uint64_t)v_bits(v_gt(vb, v_load(&n->val[i]))) << i;
	return ~below & (UINT64_MAX >> (64 - BT_FANOUT));
}

/* The largest val in @n (BY_KEY padding is 0). */
static inline uint32_t node_max(const struct bt_node *n)
{
	vec m = v_load(&n->val[0]);

#pragma GCC unroll 64
	for (unsigned int i = V_LANES; i < BT_FANOUT; i += V_LANES)
		m = v_max(m, v_load(&n->val[i]));
	return dec(v_top(m));
}

/* What the parent of @n records for it, besides its smallest key. */
static inline uint32_t summary(const struct bt *t, const struct bt_node *n)
{
	return t->order == BT_BY_KEY ? node_max(n) : dec(n->val[0]);
}

/* ---- nodes from the pools (bt_reserve() filled them) ---- */

static inline struct bt_node *node_get(struct bt *t, bool leaf)
{
	struct bt_node **pool = leaf ? &t->leaf_pool : &t->inner_pool;
	struct bt_node *n = *pool;

	*pool = n->parent;
	if (leaf)
		t->leaf_pool_count--;
	else
		t->inner_pool_count--;
	n->leaf = leaf;
	n->n = 0;
	n->parent = NULL;
	n->prev = NULL;
	n->next = NULL;
	n->max = 0;
	pad(t, n, 0);
	return n;
}

/* Unused nodes are chained through their parent field. */
static inline void node_put(struct bt *t, struct bt_node *n)
{
	if (n->leaf) {
		/* No entries: bt_near() looks on from here through prev. */
		n->n = 0;
		n->parent = t->leaf_pool;
		t->leaf_pool = n;
		t->leaf_pool_count++;
	} else {
		n->parent = t->inner_pool;
		t->inner_pool = n;
		t->inner_pool_count++;
	}
}

/* ---- keeping the entries above a node up to date ---- */

/*
 * After a structural change of @n (entries moved in or out): recompute what
 * its parent records for it and go up as far as that changes.
 */
static void fix_up(struct bt *t, struct bt_node *n)
{
	for (;;) {
		uint32_t v = summary(t, n);
		struct bt_node *p = n->parent;

		n->max = v;
		if (!p) {
			if (t->order == BT_BY_KEY)
				t->max = v;
			return;
		}
		if (p->key[n->pidx] == n->key[0] && p->val[n->pidx] == enc(v))
			return;
		p->key[n->pidx] = n->key[0];
		p->val[n->pidx] = enc(v);
		n = p;
	}
}

/*
 * One entry of @n changed val from @oldv to @newv (an insertion is 0 to v,
 * a deletion v to 0); @first: it is entry 0, so @n's smallest key may have
 * changed. Update the entries above. BY_KEY: the largest val of a node is
 * rescanned only when its largest entry shrank; otherwise it follows from
 * the old one, which the node keeps itself (n->max): an update that
 * changes nothing above reads no line of the parent.
 */
static void propagate(struct bt *t, struct bt_node *n, uint32_t oldv, uint32_t newv, bool first)
{
	if (t->order == BT_BY_PAIR) {
		fix_up(t, n);
		return;
	}
	for (;;) {
		struct bt_node *p = n->parent;
		uint32_t m = n->max, newm;

		if (newv >= m)
			newm = newv;
		else if (oldv < m)
			newm = m;
		else
			newm = node_max(n);
		if (!p) {
			n->max = newm;
			t->max = newm;
			return;
		}
		if (!first && newm == m)
			return;
		if (first)
			p->key[n->pidx] = n->key[0];
		if (newm != m) {
			n->max = newm;
			p->val[n->pidx] = enc(newm);
		}
		/* The parent's smallest key is its entry 0's. */
		first = first && n->pidx == 0;
		oldv = m;
		newv = newm;
		n = p;
	}
}

/* @p's children from @from on moved: tell them their new positions. */
static void renumber(struct bt_node *p, unsigned int from)
{
	for (unsigned int i = from; i < p->n; i++)
		inner(p)->child[i]->pidx = (uint8_t)i;
}

/* Move @cnt entries from @src[@from] to @dst[@to] (ranges may overlap). */
static void move_entries(struct bt_node *dst, unsigned int to, struct bt_node *src,
			 unsigned int from, unsigned int cnt)
{
	memmove(&dst->key[to], &src->key[from], cnt * sizeof(dst->key[0]));
	memmove(&dst->val[to], &src->val[from], cnt * sizeof(dst->val[0]));
	if (!src->leaf) {
		struct bt_node **c = inner(dst)->child;

		memmove(&c[to], &inner(src)->child[from], cnt * sizeof(c[0]));
		for (unsigned int i = 0; i < cnt; i++) {
			c[to + i]->parent = dst;
			c[to + i]->pidx = (uint8_t)(to + i);
		}
	}
}

/* The leaf whose range holds (@k, @v): the last child starting at or before it. */
static struct bt_node *descend(const struct bt *t, uint32_t k, uint32_t v)
{
	struct bt_node *n = t->root;
	unsigned int h;

	/* "At or before (k, v)" is "before the next pair up". */
	if (t->order == BT_BY_KEY)
		k++;
	else if (v < UINT32_MAX)
		v++;
	else
		k++, v = 0;
	/* By level, not by the nodes' leaf flags: their line is not needed. */
	for (h = t->height; h > 1; h--) {
		unsigned int i = count_below(t, n, k, v);

		n = inner(n)->child[i ? i - 1 : 0];
	}
	return n;
}

/* ---- insertion ---- */

/* @n is full: move its upper half to a new right sibling. */
static void split(struct bt *t, struct bt_node *n)
{
	struct bt_node *r = node_get(t, n->leaf), *p = n->parent;
	unsigned int half = n->n / 2, i;
	struct bt_node **c;

	move_entries(r, 0, n, half, n->n - half);
	r->n = n->n - half;
	n->n = half;
	pad(t, n, half);
	if (n->leaf) {
		r->prev = n;
		r->next = n->next;
		if (n->next)
			n->next->prev = r;
		n->next = r;
	}
	if (!p) {
		p = node_get(t, false);
		p->n = 1;
		inner(p)->child[0] = n;
		p->key[0] = n->key[0];
		p->val[0] = t->order == BT_BY_KEY ? enc(t->max) : n->val[0];
		p->max = t->max;
		n->parent = p;
		n->pidx = 0;
		t->root = p;
		t->height++;
	}
	i = n->pidx;
	c = inner(p)->child;
	memmove(&p->key[i + 2], &p->key[i + 1], (p->n - i - 1) * sizeof(p->key[0]));
	memmove(&p->val[i + 2], &p->val[i + 1], (p->n - i - 1) * sizeof(p->val[0]));
	memmove(&c[i + 2], &c[i + 1], (p->n - i - 1) * sizeof(c[0]));
	p->n++;
	c[i + 1] = r;
	p->key[i + 1] = r->key[0];
	r->parent = p;
	renumber(p, i + 1);
	/* The pair holds what n held: p's own entry upward does not change. */
	n->max = summary(t, n);
	r->max = summary(t, r);
	p->val[i] = enc(n->max);
	p->val[i + 1] = enc(r->max);
	if (p->n == BT_FANOUT)
		split(t, p);
}

/* Put (key, val) at entry @j of @leaf, splitting it if it fills up. */
static void insert_at(struct bt *t, struct bt_node *leaf, unsigned int j, uint32_t key,
		      uint32_t val)
{
	memmove(&leaf->key[j + 1], &leaf->key[j], (leaf->n - j) * sizeof(leaf->key[0]));
	memmove(&leaf->val[j + 1], &leaf->val[j], (leaf->n - j) * sizeof(leaf->val[0]));
	leaf->key[j] = enc(key);
	leaf->val[j] = enc(val);
	leaf->n++;
	t->count++;
	propagate(t, leaf, 0, val, j == 0);
	/* Split when full, so that every node keeps a padding entry. */
	if (leaf->n == BT_FANOUT)
		split(t, leaf);
}

static void op_insert(struct bt *t, uint32_t key, uint32_t val)
{
	struct bt_node *leaf;

	if (!t->root) {
		leaf = node_get(t, true);
		t->root = leaf;
		t->height = 1;
		t->max = 0;
		insert_at(t, leaf, 0, key, val);
		return;
	}
	leaf = descend(t, key, val);
	insert_at(t, leaf, count_below(t, leaf, key, val), key, val);
}

static void op_insert_before(struct bt *t, struct bt_pos p, uint32_t key, uint32_t val)
{
	insert_at(t, p.leaf, p.i, key, val);
}

/* ---- deletion ---- */

/* @n (not the root) has fewer than BT_MIN entries: merge or borrow. */
static void rebalance(struct bt *t, struct bt_node *n)
{
	struct bt_node *p = n->parent, *l, *r;
	struct bt_node **c = inner(p)->child;
	unsigned int li = n->pidx ? n->pidx - 1U : 0;

	l = c[li];
	r = c[li + 1];
	if (l->n + r->n < BT_FANOUT) {
		/* Merge r into l and drop r from p. */
		move_entries(l, l->n, r, 0, r->n);
		l->n += r->n;
		if (l->leaf) {
			l->next = r->next;
			if (r->next)
				r->next->prev = l;
		}
		memmove(&p->key[li + 1], &p->key[li + 2], (p->n - li - 2) * sizeof(p->key[0]));
		memmove(&p->val[li + 1], &p->val[li + 2], (p->n - li - 2) * sizeof(p->val[0]));
		memmove(&c[li + 1], &c[li + 2], (p->n - li - 2) * sizeof(c[0]));
		p->n--;
		pad(t, p, p->n);
		renumber(p, li + 1);
		node_put(t, r);
		/* l now holds both; p may have lost its largest val with r's. */
		fix_up(t, l);
		fix_up(t, p);
		if (p == t->root) {
			if (p->n == 1) {
				t->root = l;
				l->parent = NULL;
				node_put(t, p);
				t->height--;
			}
		} else if (p->n < BT_MIN) {
			rebalance(t, p);
		}
		return;
	}
	/* Too many for one node: share them evenly. */
	unsigned int want = (l->n + r->n) / 2;

	if (l->n < want) {
		unsigned int k = want - l->n;

		move_entries(l, l->n, r, 0, k);
		l->n += k;
		move_entries(r, 0, r, k, r->n - k);
		r->n -= k;
		pad(t, r, r->n);
	} else {
		unsigned int k = l->n - want;

		move_entries(r, k, r, 0, r->n);
		move_entries(r, 0, l, want, k);
		r->n += k;
		l->n = want;
		pad(t, l, want);
	}
	fix_up(t, l);
	fix_up(t, r);
	fix_up(t, p);
}

static void op_delete(struct bt *t, struct bt_pos pos)
{
	struct bt_node *leaf = pos.leaf;
	uint32_t v = dec(leaf->val[pos.i]);

	memmove(&leaf->key[pos.i], &leaf->key[pos.i + 1], (leaf->n - pos.i - 1) * sizeof(leaf->key[0]));
	memmove(&leaf->val[pos.i], &leaf->val[pos.i + 1], (leaf->n - pos.i - 1) * sizeof(leaf->val[0]));
	leaf->n--;
	leaf->key[leaf->n] = enc(BT_KEY_NONE);
	leaf->val[leaf->n] = enc(pad_val(t));
	t->count--;
	if (!leaf->n && leaf == t->root) {
		node_put(t, leaf);
		t->root = NULL;
		t->height = 0;
		t->max = 0;
		return;
	}
	/* An emptied leaf is merged away below, fixing what is above it. */
	if (leaf->n)
		propagate(t, leaf, v, 0, pos.i == 0);
	if (leaf != t->root && leaf->n < BT_MIN)
		rebalance(t, leaf);
}

static void op_set(struct bt *t, struct bt_pos pos, uint32_t key, uint32_t val)
{
	uint32_t old = dec(pos.leaf->val[pos.i]);

	pos.leaf->key[pos.i] = enc(key);
	pos.leaf->val[pos.i] = enc(val);
	propagate(t, pos.leaf, old, val, pos.i == 0);
}

/* ---- lookups ---- */

static bool op_lower_bound(const struct bt *t, uint32_t key, uint32_t val, struct bt_pos *p)
{
	struct bt_node *leaf;
	unsigned int j;

	/* BY_KEY has no key at BT_KEY_NONE or above. */
	if (!t->root || (t->order == BT_BY_KEY && key == BT_KEY_NONE))
		return false;
	leaf = descend(t, key, val);
	j = count_below(t, leaf, key, val);
	if (is_padding(t, leaf, j)) {
		/* Everything here is before it: the next leaf starts after it. */
		leaf = leaf->next;
		j = 0;
		if (!leaf)
			return false;
	}
	*p = (struct bt_pos){ leaf, j };
	return true;
}

static bool op_first_fit(const struct bt *t, uint32_t v, struct bt_pos *p)
{
	struct bt_node *n = t->root;
	unsigned int i;

	if (!n || t->max < v)
		return false;
	/* The maxima guarantee a fit below every step taken. */
	for (unsigned int h = t->height;; h--) {
		i = (unsigned int)__builtin_ctzll(fit_mask(n, v));
		if (h == 1)
			break;
		n = inner(n)->child[i];
	}
	*p = (struct bt_pos){ n, i };
	return true;
}

static bool op_last_fit(const struct bt *t, uint32_t v, struct bt_pos *p)
{
	struct bt_node *n = t->root;
	unsigned int i;

	if (!n || t->max < v)
		return false;
	for (unsigned int h = t->height;; h--) {
		i = 63U - (unsigned int)__builtin_clzll(fit_mask(n, v));
		if (h == 1)
			break;
		n = inner(n)->child[i];
	}
	*p = (struct bt_pos){ n, i };
	return true;
}

/* Leaves bt_near() visits before it gives up: the first and one neighbour. */
#define NEAR_LEAVES	2

/*
 * @leaf may be anywhere by now: in the tree, where a split may have moved
 * @key's neighbours to the next leaf; or back in the pool (no entries),
 * merged into its prev; or reused elsewhere. Only a leaf in the tree has
 * entries, and its entries and links are the truth: @key's place is in it
 * when some entry is below @key and some at or above, at its start when
 * the previous leaf ends below @key, at its end when the next one starts
 * at or above. Anything else moves one leaf towards @key, once.
 */
static bool op_near(const struct bt *t, struct bt_node *leaf, uint32_t key, struct bt_gap *g)
{
	for (unsigned int visits = 1;; visits++) {
		unsigned int n = leaf->n, j;
		struct bt_node *o;

		if (!n) {
			/* Pooled; rebalance() leaves a merged leaf's prev on its heir. */
			o = leaf->prev;
		} else if ((j = count_below(t, leaf, key, 0)) == 0) {
			o = leaf->prev;
			if (!o || dec(o->key[o->n - 1]) < key) {
				g->has_pred = o != NULL;
				if (o)
					g->pred = (struct bt_pos){ o, o->n - 1U };
				g->succ = (struct bt_pos){ leaf, 0 };
				g->has_succ = true;
				return true;
			}
		} else if (j < n) {
			g->pred = (struct bt_pos){ leaf, j - 1 };
			g->succ = (struct bt_pos){ leaf, j };
			g->has_pred = g->has_succ = true;
			return true;
		} else {
			o = leaf->next;
			if (!o || dec(o->key[0]) >= key) {
				g->pred = (struct bt_pos){ leaf, n - 1 };
				g->has_pred = true;
				g->has_succ = o != NULL;
				if (o)
					g->succ = (struct bt_pos){ o, 0 };
				return true;
			}
		}
		if (!o || visits == NEAR_LEAVES)
			return false;
		leaf = o;
	}
}

const struct bt_ops BT_OPS = {
	.name = BT_OPS_NAME,
	.insert = op_insert,
	.insert_before = op_insert_before,
	.delete = op_delete,
	.set = op_set,
	.lower_bound = op_lower_bound,
	.first_fit = op_first_fit,
	.last_fit = op_last_fit,
	.near = op_near,
};

#endif /* FLEX_BTREE_IMPL_H */
