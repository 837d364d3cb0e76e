// SPDX-License-Identifier: GPL-2.0
/*
 * The hand-written free-block B+tree (libflex/src/btree.h), white-box:
 * random insertions, deletions and in-place changes against a sorted
 * array, with every invariant (bt_check) verified after each operation and
 * every lookup compared with a scan of the array. Phases grow the tree to
 * height 4 and shrink it back to empty, so splits, borrows, merges and
 * root changes all happen.
 */
#include <stdlib.h>
#include <string.h>

#include "btree.h"
#include "unit_util.h"

#define MODEL_MAX 40000

struct model {
	uint64_t key[MODEL_MAX];
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

/* Index of the first key >= @key in the model. */
static int model_lb(const struct model *m, uint64_t key)
{
	int lo = 0, hi = m->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (m->key[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void compare_lookups(const struct bt *t, const struct model *m, uint64_t *seed, long step)
{
	uint32_t v = (uint32_t)(rng(seed) % 1000);
	uint64_t k = rng(seed) % 2000000;
	int ff = -1, lf = -1, lb = model_lb(m, k);
	struct bt_pos p;
	bool found;

	for (int i = 0; i < m->n; i++) {
		if (m->val[i] >= v) {
			if (ff < 0)
				ff = i;
			lf = i;
		}
	}
	if (t->augmented) {
		found = bt_first_fit(t, v, &p);
		require(found == (ff >= 0) && (!found || bt_key(p) == m->key[ff]),
			"step %ld: first fit %u: expected key %lld, got %s %llu", step, v,
			ff >= 0 ? (long long)m->key[ff] : -1LL, found ? "key" : "none",
			found ? (unsigned long long)bt_key(p) : 0ULL);
		found = bt_last_fit(t, v, &p);
		require(found == (lf >= 0) && (!found || bt_key(p) == m->key[lf]),
			"step %ld: last fit %u: expected key %lld, got %s %llu", step, v,
			lf >= 0 ? (long long)m->key[lf] : -1LL, found ? "key" : "none",
			found ? (unsigned long long)bt_key(p) : 0ULL);
	}
	found = bt_lower_bound(t, k, &p);
	require(found == (lb < m->n) && (!found || bt_key(p) == m->key[lb]),
		"step %ld: lower bound %llu: expected %lld, got %s %llu", step,
		(unsigned long long)k, lb < m->n ? (long long)m->key[lb] : -1LL,
		found ? "key" : "none", found ? (unsigned long long)bt_key(p) : 0ULL);
	if (found && lb > 0) {
		require(bt_prev(&p) && bt_key(p) == m->key[lb - 1],
			"step %ld: entry before %llu: expected %llu", step,
			(unsigned long long)m->key[lb], (unsigned long long)m->key[lb - 1]);
	}
}

static void full_scan(const struct bt *t, const struct model *m, long step)
{
	struct bt_pos p;
	int i = 0;

	if (bt_first(t, &p)) {
		do {
			require(i < m->n && bt_key(p) == m->key[i] && bt_val(p) == m->val[i],
				"step %ld: entry %d: expected (%llu, %u), got (%llu, %u)", step, i,
				i < m->n ? (unsigned long long)m->key[i] : 0ULL,
				i < m->n ? m->val[i] : 0, (unsigned long long)bt_key(p), bt_val(p));
			i++;
		} while (bt_next(&p));
	}
	require(i == m->n, "step %ld: iterated %d entries, model has %d", step, i, m->n);
}

static void run(bool augmented, uint64_t seed, long steps, int peak, unsigned int min_height)
{
	struct model *m = calloc(1, sizeof(*m));
	unsigned int max_height = 0;
	struct bt t;

	bt_init(&t, augmented);
	for (long step = 0; step < steps; step++) {
		/* Grow towards @peak, then shrink to nothing, twice. */
		bool growing = (step * 4 / steps) % 2 == 0;
		int r = (int)(rng(&seed) % 10);
		int op = growing ? (r < 6 ? 0 : r < 8 ? 1 : 2) : (r < 6 ? 1 : r < 8 ? 0 : 2);
		const char *err;

		if (op == 0 && m->n < peak) {
			uint64_t k = rng(&seed) % 2000000;
			uint32_t v = augmented ? (uint32_t)(rng(&seed) % 1000) : 0;
			int i = model_lb(m, k);
			struct bt_pos p;

			if (i < m->n && m->key[i] == k)
				continue;
			ck_assert_int_eq(bt_reserve(&t), 0);
			/* Half the insertions go through the lookup's position. */
			if (rng(&seed) % 2 && bt_lower_bound(&t, k, &p)) {
				bt_insert_before(&t, p, k, v);
			} else if (bt_first(&t, &p) && !bt_lower_bound(&t, k, &p)) {
				bt_last_fit(&t, 0, &p);
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

			require(bt_lower_bound(&t, m->key[i], &p) && bt_key(p) == m->key[i],
				"step %ld: key %llu not found for deletion", step,
				(unsigned long long)m->key[i]);
			bt_delete(&t, p);
			memmove(&m->key[i], &m->key[i + 1], (m->n - i - 1) * sizeof(m->key[0]));
			memmove(&m->val[i], &m->val[i + 1], (m->n - i - 1) * sizeof(m->val[0]));
			m->n--;
		} else if (op == 2 && m->n) {
			/* Move a key within its gap and change its value. */
			int i = (int)(rng(&seed) % m->n);
			uint64_t lo = i ? m->key[i - 1] + 1 : 0;
			uint64_t hi = i + 1 < m->n ? m->key[i + 1] - 1 : 2000000;
			uint64_t k = lo + rng(&seed) % (hi - lo + 1);
			uint32_t v = augmented ? (uint32_t)(rng(&seed) % 1000) : 0;
			struct bt_pos p;

			bt_lower_bound(&t, m->key[i], &p);
			bt_set(&t, p, k, v);
			m->key[i] = k;
			m->val[i] = v;
		}
		err = bt_check(&t);
		require(!err, "step %ld (%d entries, height %u): %s", step, m->n, t.height, err);
		if (t.height > max_height)
			max_height = t.height;
		if (step % 64 == 0) {
			compare_lookups(&t, m, &seed, step);
			full_scan(&t, m, step);
		}
	}
	full_scan(&t, m, steps);
	ck_assert_msg(max_height >= min_height, "sequence too small: the tree reached height %u, not %u",
		      max_height, min_height);
	bt_fini(&t);
	free(m);
}

START_TEST(augmented_random)
{
	run(true, 11, 200000, MODEL_MAX, 3);
}
END_TEST

START_TEST(plain_random)
{
	run(false, 12, 100000, MODEL_MAX, 3);
}
END_TEST

START_TEST(small_tree_churn)
{
	/* Around one node: splits and merges of the root, again and again. */
	run(true, 13, 50000, 100, 2);
}
END_TEST

START_TEST(empty_tree)
{
	struct bt t;
	struct bt_pos p;

	bt_init(&t, true);
	ck_assert(!bt_first(&t, &p));
	ck_assert(!bt_lower_bound(&t, 5, &p));
	ck_assert(!bt_first_fit(&t, 0, &p));
	ck_assert(!bt_last_fit(&t, 0, &p));
	ck_assert_ptr_null(bt_check(&t));
	ck_assert_int_eq(bt_reserve(&t), 0);
	bt_insert(&t, 7, 3);
	ck_assert(bt_first_fit(&t, 3, &p) && bt_key(p) == 7);
	ck_assert(!bt_first_fit(&t, 4, &p));
	bt_delete(&t, p);
	ck_assert_ptr_null(bt_check(&t));
	ck_assert_uint_eq(t.count, 0);
	ck_assert_uint_eq(t.max, 0);
	bt_clear(&t);
	bt_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("btree");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, empty_tree);
	tcase_add_test(tc, augmented_random);
	tcase_add_test(tc, plain_random);
	tcase_add_test(tc, small_tree_churn);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
