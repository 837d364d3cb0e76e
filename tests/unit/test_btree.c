// SPDX-License-Identifier: GPL-2.0
/*
 * The hand-written free-block B+tree (libflex/src/btree.h), white-box:
 * random insertions, deletions and in-place changes against a sorted
 * array, with every invariant (flex_bt_check) verified after each operation and
 * every lookup compared with a scan of the array, in both orders (by key
 * with per-child maxima, and by (key, val) pairs with many equal keys).
 * Phases grow the tree to height 3 and shrink it back to empty, so splits,
 * borrows, merges and root changes all happen. Leaves remembered by number
 * many operations earlier (as FlexAllocator's slots remember them) are
 * given to bt_near() and what it finds is compared with the array too.
 * Every test runs once per instruction-set variant the CPU has (SSE2 or
 * plain C, and AVX2).
 */
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "unit_util.h"

#define MODEL_MAX 40000
#define KEY_RANGE 2000000

/* The entries of the tree, in its order. */
struct model {
	enum bt_order order;
	uint32_t key[MODEL_MAX];
	uint32_t val[MODEL_MAX];
	int n;
};

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Where (key, val) sorts: the key alone by key, else the pair. */
static uint64_t rank(enum bt_order order, uint32_t key, uint32_t val)
{
	return order == BT_BY_KEY ? key : (uint64_t)key << 32 | val;
}

/* Index of the first entry at or after (key, val) in the model. */
static int model_lb(const struct model *m, uint32_t key, uint32_t val)
{
	uint64_t r = rank(m->order, key, val);
	int lo = 0, hi = m->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (rank(m->order, m->key[mid], m->val[mid]) < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* A random entry: by pair, keys repeat (a few hundred values) so vals order them. */
static void random_entry(const struct model *m, uint64_t *seed, uint32_t *key, uint32_t *val)
{
	if (m->order == BT_BY_KEY) {
		*key = (uint32_t)(rng(seed) % KEY_RANGE);
		*val = (uint32_t)(rng(seed) % 1000);
	} else {
		*key = (uint32_t)(rng(seed) % 300);
		*val = (uint32_t)(rng(seed) % KEY_RANGE);
	}
}

static void compare_lookups(const struct bt *t, const struct model *m, uint64_t *seed, long step)
{
	uint32_t v = (uint32_t)(rng(seed) % 1000), k, kv;
	int ff = -1, lf = -1, lb;
	struct bt_pos p;
	bool found;

	random_entry(m, seed, &k, &kv);
	lb = model_lb(m, k, kv);
	for (int i = 0; i < m->n; i++) {
		if (m->val[i] >= v) {
			if (ff < 0)
				ff = i;
			lf = i;
		}
	}
	if (t->order == BT_BY_KEY) {
		found = bt_first_fit(t, v, &p);
		require(found == (ff >= 0) && (!found || bt_key(p) == m->key[ff]),
			"%s, step %ld: first fit %u: expected key %lld, got %s %u", t->ops->name, step, v,
			ff >= 0 ? (long long)m->key[ff] : -1LL, found ? "key" : "none",
			found ? bt_key(p) : 0);
		found = bt_last_fit(t, v, &p);
		require(found == (lf >= 0) && (!found || bt_key(p) == m->key[lf]),
			"%s, step %ld: last fit %u: expected key %lld, got %s %u", t->ops->name, step, v,
			lf >= 0 ? (long long)m->key[lf] : -1LL, found ? "key" : "none",
			found ? bt_key(p) : 0);
	}
	found = bt_lower_bound(t, k, kv, &p);
	require(found == (lb < m->n) &&
		(!found || (bt_key(p) == m->key[lb] && bt_val(p) == m->val[lb])),
		"%s, step %ld: lower bound (%u, %u): expected (%lld, %lld), got %s (%u, %u)",
		t->ops->name, step,
		k, kv, lb < m->n ? (long long)m->key[lb] : -1LL,
		lb < m->n ? (long long)m->val[lb] : -1LL, found ? "entry" : "none",
		found ? bt_key(p) : 0, found ? bt_val(p) : 0);
	if (found && lb > 0) {
		require(bt_prev(&p) && bt_key(p) == m->key[lb - 1] && bt_val(p) == m->val[lb - 1],
			"%s, step %ld: entry before (%u, %u): expected (%u, %u)", t->ops->name, step,
			m->key[lb], m->val[lb], m->key[lb - 1], m->val[lb - 1]);
	}
	found = flex_bt_last(t, &p);
	require(found == (m->n > 0) && (!found || (bt_key(p) == m->key[m->n - 1] &&
						   bt_val(p) == m->val[m->n - 1])),
		"%s, step %ld: last entry: expected %s, got %s", t->ops->name, step,
		m->n ? "one" : "none",
		found ? "one that differs or none" : "none");
}

/* Leaves remembered with the key they were found for, oldest overwritten. */
#define REMEMBERED 64

struct memory {
	uint32_t id[REMEMBERED];
	uint32_t key[REMEMBERED];
	unsigned int next;
	long found, refused;	/* bt_near() answers from remembered leaves */
};

/*
 * What bt_near() says from @leaf about @key against the model: the last key
 * below it and the first at or above it (@key itself if it is in the tree,
 * as when best fit looks up the block its index gave).
 */
static bool check_near(const struct bt *t, const struct model *m, struct bt_node *leaf,
		       uint32_t key, long step, const char *from)
{
	int lb = model_lb(m, key, 0);
	struct bt_gap g;

	if (!bt_near(t, leaf, key, &g))
		return false;
	require(g.has_pred == (lb > 0) && (!g.has_pred || bt_key(g.pred) == m->key[lb - 1]),
		"%s, step %ld: near %u from a %s leaf: expected predecessor %lld, got %s %u",
		t->ops->name, step, key, from, lb > 0 ? (long long)m->key[lb - 1] : -1LL,
		g.has_pred ? "key" : "none", g.has_pred ? bt_key(g.pred) : 0);
	require(g.has_succ == (lb < m->n) && (!g.has_succ || bt_key(g.succ) == m->key[lb]),
		"%s, step %ld: near %u from a %s leaf: expected successor %lld, got %s %u",
		t->ops->name, step, key, from, lb < m->n ? (long long)m->key[lb] : -1LL,
		g.has_succ ? "key" : "none", g.has_succ ? bt_key(g.succ) : 0);
	return true;
}

/*
 * BY_KEY: bt_near() from the leaf a lookup just found must answer, and
 * correctly; from leaves remembered earlier it may refuse, but what it
 * answers must be right. Then remember this lookup's leaf.
 */
static void compare_near(const struct bt *t, const struct model *m, struct memory *mem,
			 uint64_t *seed, long step)
{
	uint32_t key = (uint32_t)(rng(seed) % KEY_RANGE);
	struct bt_pos p;

	for (unsigned int i = 0; i < REMEMBERED; i++) {
		uint32_t k = mem->key[i];

		if (!mem->id[i])
			continue;
		if (check_near(t, m, bt_leaf_by_id(t, mem->id[i]), k, step, "remembered"))
			mem->found++;
		else
			mem->refused++;
	}
	if (!m->n) {
		ck_assert(!bt_near(t, NULL, key, &(struct bt_gap){ 0 }));
		return;
	}
	if (!bt_lower_bound(t, key, 0, &p))
		flex_bt_last(t, &p);
	require(check_near(t, m, p.leaf, key, step, "just found"),
		"%s, step %ld: near %u from the leaf a lookup found: refused", t->ops->name, step,
		key);
	/* From either neighbour (as after a split or a borrow) it may refuse, or be right. */
	if (p.leaf->prev)
		check_near(t, m, p.leaf->prev, key, step, "neighbouring");
	if (p.leaf->next)
		check_near(t, m, p.leaf->next, key, step, "neighbouring");
	mem->id[mem->next] = bt_leaf_id(p);
	mem->key[mem->next] = key;
	mem->next = (mem->next + 1) % REMEMBERED;
}

static void full_scan(const struct bt *t, const struct model *m, long step)
{
	struct bt_pos p;
	int i = 0;

	if (flex_bt_first(t, &p)) {
		do {
			require(i < m->n && bt_key(p) == m->key[i] && bt_val(p) == m->val[i],
				"%s, step %ld: entry %d: expected (%u, %u), got (%u, %u)", t->ops->name, step, i,
				i < m->n ? m->key[i] : 0, i < m->n ? m->val[i] : 0, bt_key(p), bt_val(p));
			i++;
		} while (bt_next(&p));
	}
	require(i == m->n, "%s, step %ld: iterated %d entries, model has %d", t->ops->name, step, i,
		m->n);
}

static void run_variant(const struct bt_ops *ops, enum bt_order order, uint64_t seed, long steps,
			int peak, unsigned int min_height)
{
	struct model *m = calloc(1, sizeof(*m));
	struct memory mem = { .next = 0 };
	unsigned int max_height = 0;
	struct bt t;

	m->order = order;
	flex_bt_init_variant(&t, order, ops);
	for (long step = 0; step < steps; step++) {
		/* Grow towards @peak, then shrink to nothing, twice. */
		bool growing = (step * 4 / steps) % 2 == 0;
		int r = (int)(rng(&seed) % 10);
		int op = growing ? (r < 6 ? 0 : r < 8 ? 1 : 2) : (r < 6 ? 1 : r < 8 ? 0 : 2);
		const char *err;

		if (op == 0 && m->n < peak) {
			uint32_t k, v;
			int i;
			struct bt_pos p;

			random_entry(m, &seed, &k, &v);
			i = model_lb(m, k, v);
			if (i < m->n && rank(order, m->key[i], m->val[i]) == rank(order, k, v))
				continue;
			ck_assert_int_eq(bt_reserve(&t), 0);
			/* Half the insertions go through the lookup's position. */
			if (rng(&seed) % 2 && bt_lower_bound(&t, k, v, &p)) {
				bt_insert_before(&t, p, k, v);
			} else if (rng(&seed) % 2 && flex_bt_last(&t, &p) && !bt_lower_bound(&t, k, v, &p)) {
				flex_bt_last(&t, &p);
				p.i++;
				bt_insert_before(&t, p, k, v);
			} else {
				bt_insert(&t, k, v);
			}
			memmove(&m->key[i + 1], &m->key[i], (m->n - i) * sizeof(m->key[0]));
			memmove(&m->val[i + 1], &m->val[i], (m->n - i) * sizeof(m->val[0]));
			m->key[i] = k;
			m->val[i] = v;
			m->n++;
		} else if (op == 1 && m->n) {
			int i = (int)(rng(&seed) % m->n);
			struct bt_pos p;

			require(bt_lower_bound(&t, m->key[i], m->val[i], &p) && bt_key(p) == m->key[i] &&
				bt_val(p) == m->val[i],
				"%s, step %ld: entry (%u, %u) not found for deletion", ops->name, step,
				m->key[i], m->val[i]);
			bt_delete(&t, p);
			memmove(&m->key[i], &m->key[i + 1], (m->n - i - 1) * sizeof(m->key[0]));
			memmove(&m->val[i], &m->val[i + 1], (m->n - i - 1) * sizeof(m->val[0]));
			m->n--;
		} else if (op == 2 && m->n) {
			/* Move an entry within its gap in the order (by key: any new val). */
			int i = (int)(rng(&seed) % m->n);
			uint64_t lo = i ? rank(order, m->key[i - 1], m->val[i - 1]) + 1 : 0;
			uint64_t hi = i + 1 < m->n ? rank(order, m->key[i + 1], m->val[i + 1]) - 1 :
				      rank(order, KEY_RANGE, 0);
			uint64_t e = lo + rng(&seed) % (hi - lo + 1);
			uint32_t k = order == BT_BY_KEY ? (uint32_t)e : (uint32_t)(e >> 32);
			uint32_t v = order == BT_BY_KEY ? (uint32_t)(rng(&seed) % 1000) : (uint32_t)e;
			struct bt_pos p;

			bt_lower_bound(&t, m->key[i], m->val[i], &p);
			bt_set(&t, p, k, v);
			m->key[i] = k;
			m->val[i] = v;
		}
		err = flex_bt_check(&t);
		require(!err, "%s, step %ld (%d entries, height %u): %s", ops->name, step, m->n,
			t.height, err);
		if (t.height > max_height)
			max_height = t.height;
		if (step % 64 == 0) {
			compare_lookups(&t, m, &seed, step);
			if (order == BT_BY_KEY)
				compare_near(&t, m, &mem, &seed, step);
			full_scan(&t, m, step);
		}
	}
	full_scan(&t, m, steps);
	ck_assert_msg(max_height >= min_height, "sequence too small: the tree reached height %u, not %u",
		      max_height, min_height);
	/* Remembered leaves both still served and had moved on. */
	ck_assert_msg(order == BT_BY_PAIR || (mem.found > 0 && mem.refused > 0),
		      "%s: remembered leaves: %ld answers, %ld refusals; expected some of each",
		      ops->name, mem.found, mem.refused);
	ck_assert(!bt_leaf_by_id(&t, 0));
	ck_assert(!bt_leaf_by_id(&t, t.num_leaf_chunks * BT_CHUNK_NODES + 1));
	flex_bt_fini(&t);
	free(m);
}

static void run(enum bt_order order, uint64_t seed, long steps, int peak, unsigned int min_height)
{
	for (const struct bt_ops *const *v = flex_bt_variants(); *v; v++)
		run_variant(*v, order, seed, steps, peak, min_height);
}

START_TEST(augmented_random)
{
	run(BT_BY_KEY, 11, 200000, MODEL_MAX, 3);
}
END_TEST

START_TEST(pairs_random)
{
	run(BT_BY_PAIR, 12, 100000, MODEL_MAX, 3);
}
END_TEST

START_TEST(small_tree_churn)
{
	/* Around one node: splits and merges of the root, again and again. */
	run(BT_BY_KEY, 13, 50000, 100, 2);
	run(BT_BY_PAIR, 14, 50000, 100, 2);
}
END_TEST

static void empty_tree_variant(const struct bt_ops *ops)
{
	struct bt t;
	struct bt_pos p;

	flex_bt_init_variant(&t, BT_BY_KEY, ops);
	ck_assert(!flex_bt_first(&t, &p));
	ck_assert(!flex_bt_last(&t, &p));
	ck_assert(!bt_lower_bound(&t, 5, 0, &p));
	ck_assert(!bt_first_fit(&t, 0, &p));
	ck_assert(!bt_last_fit(&t, 0, &p));
	ck_assert_ptr_null(flex_bt_check(&t));
	ck_assert_int_eq(bt_reserve(&t), 0);
	bt_insert(&t, 7, 3);
	ck_assert(bt_first_fit(&t, 3, &p) && bt_key(p) == 7);
	ck_assert(bt_first_fit(&t, 0, &p) && bt_key(p) == 7);
	ck_assert(bt_last_fit(&t, 0, &p) && bt_key(p) == 7);
	ck_assert(!bt_first_fit(&t, 4, &p));
	ck_assert(bt_first_fit(&t, 3, &p));
	bt_delete(&t, p);
	ck_assert_ptr_null(flex_bt_check(&t));
	ck_assert_uint_eq(t.count, 0);
	ck_assert_uint_eq(t.max, 0);
	flex_bt_clear(&t);
	flex_bt_fini(&t);
}

START_TEST(empty_tree)
{
	for (const struct bt_ops *const *v = flex_bt_variants(); *v; v++)
		empty_tree_variant(*v);
}
END_TEST

/*
 * By pair, the key BT_KEY_NONE is allowed with a val below UINT32_MAX: a
 * region of 2^32 - 1 granules is one free block of that size.
 */
static void pair_at_the_top_key_variant(const struct bt_ops *ops)
{
	struct bt t;
	struct bt_pos p;

	flex_bt_init_variant(&t, BT_BY_PAIR, ops);
	ck_assert_int_eq(bt_reserve(&t), 0);
	bt_insert(&t, BT_KEY_NONE, 0);
	ck_assert_int_eq(bt_reserve(&t), 0);
	bt_insert(&t, BT_KEY_NONE - 1, 7);
	ck_assert_ptr_null(flex_bt_check(&t));
	ck_assert(bt_lower_bound(&t, BT_KEY_NONE - 1, 8, &p));
	ck_assert_uint_eq(bt_key(p), BT_KEY_NONE);
	ck_assert_uint_eq(bt_val(p), 0);
	ck_assert(bt_lower_bound(&t, BT_KEY_NONE, 0, &p));
	ck_assert_uint_eq(bt_key(p), BT_KEY_NONE);
	ck_assert(!bt_lower_bound(&t, BT_KEY_NONE, 1, &p));
	ck_assert(bt_lower_bound(&t, 0, 0, &p) && bt_key(p) == BT_KEY_NONE - 1);
	bt_delete(&t, p);
	ck_assert(bt_lower_bound(&t, BT_KEY_NONE, 0, &p));
	bt_delete(&t, p);
	ck_assert_ptr_null(flex_bt_check(&t));
	ck_assert_uint_eq(t.count, 0);
	flex_bt_fini(&t);
}

START_TEST(pair_at_the_top_key)
{
	for (const struct bt_ops *const *v = flex_bt_variants(); *v; v++)
		pair_at_the_top_key_variant(*v);
}
END_TEST

START_TEST(variants)
{
	/* The generic build is always there, and last; AVX2 first when the CPU has it. */
	const struct bt_ops *const *v = flex_bt_variants();
	struct bt t;
	int n = 0;

	while (v[n])
		n++;
	ck_assert_msg(n >= 1 && (!strcmp(v[n - 1]->name, "sse2") || !strcmp(v[n - 1]->name, "generic")),
		      "expected the generic variant last, got %s", n ? v[n - 1]->name : "none");
	flex_bt_init(&t, BT_BY_KEY);
	ck_assert_msg(t.ops == v[0], "flex_bt_init took %s, expected %s", t.ops->name, v[0]->name);
	flex_bt_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("btree");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, empty_tree);
	tcase_add_test(tc, augmented_random);
	tcase_add_test(tc, pairs_random);
	tcase_add_test(tc, pair_at_the_top_key);
	tcase_add_test(tc, variants);
	tcase_add_test(tc, small_tree_churn);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
