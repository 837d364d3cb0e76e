// SPDX-License-Identifier: GPL-2.0
/*
 * Long random sequences of allocations and frees, checked after every
 * operation against a reference model: the RFC's algorithm written the
 * simple way (a sorted array of free ranges per region, scanned). The
 * model predicts the region and offset of every allocation and every
 * out-of-memory; after each step the allocator's blocks must equal the
 * model's, and the structural invariants must hold (no two adjacent free
 * blocks, contiguous, aligned, stats agreeing).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"

#define REGIONS		3
#define REGION_SIZE	(1 * MiB)
#define MAX_FREE	4096
#define MAX_LIVE	4096

struct range {
	uint64_t start, size;
};

struct model_region {
	struct range free[MAX_FREE];	/* sorted by start, never adjacent */
	int nfree;
	uint64_t free_bytes;
};

struct live {
	flex_alloc_index_t idx;
	int region;
	uint64_t start, size;
};

struct model {
	enum flex_alloc_region_strategy rs;
	enum flex_alloc_block_strategy bs;
	struct model_region r[REGIONS];
	struct live live[MAX_LIVE];
	int nlive;
};

static uint64_t largest(const struct model_region *m)
{
	uint64_t l = 0;

	for (int i = 0; i < m->nfree; i++)
		if (m->free[i].size > l)
			l = m->free[i].size;
	return l;
}

/* The region the RFC's strategy picks for @g bytes, or -1. */
static int model_region(const struct model *m, uint64_t g)
{
	int best = -1;

	for (int i = 0; i < REGIONS; i++) {
		if (largest(&m->r[i]) < g)
			continue;
		if (best < 0 ||
		    (m->rs == FLEX_ALLOC_LOAD_BALANCING ? m->r[i].free_bytes > m->r[best].free_bytes
							: m->r[i].free_bytes < m->r[best].free_bytes))
			best = i;
	}
	return best;
}

/* Place @g bytes of @kind; returns the region or -1 and sets *start. */
static int model_alloc(struct model *m, uint64_t g, enum flex_alloc_kind kind, uint64_t *start)
{
	int ri = model_region(m, g), pick = -1;
	struct model_region *r;

	if (ri < 0)
		return -1;
	r = &m->r[ri];
	for (int i = 0; i < r->nfree; i++) {
		if (r->free[i].size < g)
			continue;
		if (kind == FLEX_ALLOC_PROGRAM)
			pick = i;	/* highest that fits */
		else if (m->bs == FLEX_ALLOC_FIRST_FIT)
			pick = pick < 0 ? i : pick;
		else if (pick < 0 || r->free[i].size < r->free[pick].size)
			pick = i;	/* smallest; lowest offset on ties */
	}
	if (kind == FLEX_ALLOC_PROGRAM) {
		*start = r->free[pick].start + r->free[pick].size - g;
	} else {
		*start = r->free[pick].start;
		r->free[pick].start += g;
	}
	r->free[pick].size -= g;
	if (!r->free[pick].size) {
		memmove(&r->free[pick], &r->free[pick + 1], (r->nfree - pick - 1) * sizeof(r->free[0]));
		r->nfree--;
	}
	r->free_bytes -= g;
	return ri;
}

static void model_free(struct model *m, const struct live *l)
{
	struct model_region *r = &m->r[l->region];
	int i = 0;

	while (i < r->nfree && r->free[i].start < l->start)
		i++;
	require(r->nfree < MAX_FREE, "model: more than %d free ranges", MAX_FREE);
	memmove(&r->free[i + 1], &r->free[i], (r->nfree - i) * sizeof(r->free[0]));
	r->free[i] = (struct range){ l->start, l->size };
	r->nfree++;
	if (i + 1 < r->nfree && r->free[i].start + r->free[i].size == r->free[i + 1].start) {
		r->free[i].size += r->free[i + 1].size;
		memmove(&r->free[i + 1], &r->free[i + 2], (r->nfree - i - 2) * sizeof(r->free[0]));
		r->nfree--;
	}
	if (i > 0 && r->free[i - 1].start + r->free[i - 1].size == r->free[i].start) {
		r->free[i - 1].size += r->free[i].size;
		memmove(&r->free[i], &r->free[i + 1], (r->nfree - i - 1) * sizeof(r->free[0]));
		r->nfree--;
	}
	r->free_bytes += l->size;
}

/* The allocator's free blocks must be exactly the model's. */
static void compare(struct flex_alloc *a, const struct model *m, const char *what, long step)
{
	struct block_list l = { 0 };
	int k[REGIONS] = { 0 };
	size_t live = 0;

	walk_blocks(a, &l);
	for (size_t i = 0; i < l.n; i++) {
		const struct flex_alloc_block_info *b = &l.b[i];
		const struct model_region *r = &m->r[b->region];

		if (!b->is_free) {
			live++;
			continue;
		}
		require(k[b->region] < r->nfree,
			      "%s step %ld: region %u has more free blocks than the model's %d", what,
			      step, b->region, r->nfree);
		require(b->offset == r->free[k[b->region]].start &&
			      b->size == r->free[k[b->region]].size,
			      "%s step %ld: region %u free block %d: model [%llu, +%llu), allocator [%llu, +%llu)",
			      what, step, b->region, k[b->region],
			      (unsigned long long)r->free[k[b->region]].start,
			      (unsigned long long)r->free[k[b->region]].size,
			      (unsigned long long)b->offset, (unsigned long long)b->size);
		k[b->region]++;
	}
	for (int i = 0; i < REGIONS; i++)
		require(k[i] == m->r[i].nfree, "%s step %ld: region %d: model %d free blocks, allocator %d",
			      what, step, i, m->r[i].nfree, k[i]);
	require(live == (size_t)m->nlive, "%s step %ld: model %d live blocks, allocator %zu",
		      what, step, m->nlive, live);
	block_list_free(&l);
}

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void run_sequence(enum flex_alloc_region_strategy rs, enum flex_alloc_block_strategy bs,
			 uint64_t seed, long steps)
{
	struct model *m = calloc(1, sizeof(*m));
	struct flex_alloc_config cfg;
	char what[96];
	struct flex_alloc *a;
	long ooms = 0, merges_seen = 0;

	snprintf(what, sizeof(what), "%s/%s seed %llu",
		 rs == FLEX_ALLOC_LOAD_BALANCING ? "load-balancing" : "fill-first",
		 bs == FLEX_ALLOC_FIRST_FIT ? "first-fit" : "best-fit", (unsigned long long)seed);
	m->rs = rs;
	m->bs = bs;
	for (int i = 0; i < REGIONS; i++) {
		m->r[i].free[0] = (struct range){ 0, REGION_SIZE };
		m->r[i].nfree = 1;
		m->r[i].free_bytes = REGION_SIZE;
	}
	config_one_size(&cfg, REGION_SIZE, REGIONS);
	cfg.fixed_regions = REGIONS;
	cfg.region_strategy = rs;
	cfg.block_strategy = bs;
	a = new_allocator(&cfg, REGIONS * REGION_SIZE, 0, NULL);

	for (long step = 0; step < steps; step++) {
		/* Drift between filling up (to reach OOM) and draining. */
		int fill = (step / 500) % 2 == 0;
		bool do_alloc = m->nlive == 0 || (int)(rng(&seed) % 100) < (fill ? 65 : 35);

		if (do_alloc && m->nlive < MAX_LIVE) {
			enum flex_alloc_kind kind = rng(&seed) % 10 == 0 ? FLEX_ALLOC_PROGRAM : FLEX_ALLOC_TENSOR;
			uint64_t size, start = 0;
			flex_alloc_index_t idx;
			int region, err;

			/* Log-uniform 1 B .. 128 KiB; sometimes the size of a live block. */
			if (m->nlive && rng(&seed) % 5 == 0)
				size = m->live[rng(&seed) % m->nlive].size;
			else
				size = 1ULL << (rng(&seed) % 18), size += rng(&seed) % size;
			region = model_alloc(m, flex_alloc_round_size(size), kind, &start);
			err = flex_alloc_block_alloc(a, size, kind, &idx);
			if (region < 0) {
				require(err == -ENOMEM, "%s step %ld: model says no room for %llu, allocator returned %d",
					      what, step, (unsigned long long)size, err);
				ooms++;
			} else {
				struct flex_vaddr va;

				require(err == 0, "%s step %ld: alloc %llu: model places it in region %d at %llu, allocator failed %d (%s)",
					      what, step, (unsigned long long)size, region,
					      (unsigned long long)start, err, flex_last_error());
				va = must_resolve(a, idx);
				require(va.region_id == (uint64_t)region && va.offset == start,
					      "%s step %ld: alloc %llu (%s): model region %d offset %llu, allocator region %llu offset %llu",
					      what, step, (unsigned long long)size,
					      kind == FLEX_ALLOC_PROGRAM ? "program" : "tensor", region,
					      (unsigned long long)start, (unsigned long long)va.region_id,
					      (unsigned long long)va.offset);
				m->live[m->nlive++] = (struct live){ idx, region, start,
								     flex_alloc_round_size(size) };
			}
		} else if (m->nlive) {
			int i = (int)(rng(&seed) % m->nlive);
			int before = m->r[m->live[i].region].nfree;

			must_free(a, m->live[i].idx);
			model_free(m, &m->live[i]);
			merges_seen += m->r[m->live[i].region].nfree <= before;
			m->live[i] = m->live[--m->nlive];
		}
		compare(a, m, what, step);
		check_invariants(a, what);
	}
	/* The sequence must have exercised what it is meant to. */
	ck_assert_msg(ooms > 10 && merges_seen > 100,
		      "%s: sequence too tame: %ld out-of-memory, %ld merging frees", what, ooms,
		      merges_seen);
	while (m->nlive) {
		must_free(a, m->live[m->nlive - 1].idx);
		model_free(m, &m->live[--m->nlive]);
	}
	compare(a, m, what, steps);
	check_invariants(a, what);
	flex_alloc_destroy(a);
	free(m);
}

START_TEST(load_balancing_first_fit)
{
	run_sequence(FLEX_ALLOC_LOAD_BALANCING, FLEX_ALLOC_FIRST_FIT, 1, 25000);
}
END_TEST

START_TEST(load_balancing_best_fit)
{
	run_sequence(FLEX_ALLOC_LOAD_BALANCING, FLEX_ALLOC_BEST_FIT, 2, 25000);
}
END_TEST

START_TEST(fill_first_first_fit)
{
	run_sequence(FLEX_ALLOC_FILL_FIRST, FLEX_ALLOC_FIRST_FIT, 3, 25000);
}
END_TEST

START_TEST(fill_first_best_fit)
{
	run_sequence(FLEX_ALLOC_FILL_FIRST, FLEX_ALLOC_BEST_FIT, 4, 25000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("random");
	TCase *tc = tcase_create("model");

	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, load_balancing_first_fit);
	tcase_add_test(tc, load_balancing_best_fit);
	tcase_add_test(tc, fill_first_first_fit);
	tcase_add_test(tc, fill_first_best_fit);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
