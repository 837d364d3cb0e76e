// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator regions and strategies, exactly as the RFC's Phase 1 and 2
 * say: lazy acquisition with fallback sizes, max_regions and the source's
 * table, regions_locked, fixed regions up front, LoadBalancing and
 * FillFirst region choice, FirstFit and BestFit block choice, and giving
 * back regions that became entirely free.
 */
#include <errno.h>
#include <string.h>

#include "unit_util.h"

/* The acquire attempts recorded so far must be exactly @sizes / @results. */
static void expect_attempts(const char *what, const struct recording_source *rec,
			    const uint64_t *sizes, const int *results, unsigned int n)
{
	ck_assert_msg(rec->attempts == n, "%s: expected %u acquire attempts, got %u", what, n,
		      rec->attempts);
	for (unsigned int i = 0; i < n; i++)
		ck_assert_msg(rec->size[i] == sizes[i] && rec->result[i] == results[i],
			      "%s: attempt %u expected %llu bytes -> %d, got %llu bytes -> %d", what,
			      i, (unsigned long long)sizes[i], results[i],
			      (unsigned long long)rec->size[i], rec->result[i]);
}

static uint64_t region_of(struct flex_alloc *a, flex_alloc_index_t idx)
{
	return must_resolve(a, idx).region_id;
}

static void expect_region(const char *what, struct flex_alloc *a, flex_alloc_index_t idx,
			  uint64_t region)
{
	uint64_t got = region_of(a, idx);

	ck_assert_msg(got == region, "%s: expected region %llu, got %llu", what,
		      (unsigned long long)region, (unsigned long long)got);
}

static void expect_offset(const char *what, struct flex_alloc *a, flex_alloc_index_t idx,
			  uint64_t offset)
{
	uint64_t got = must_resolve(a, idx).offset;

	ck_assert_msg(got == offset, "%s: expected offset %llu, got %llu", what,
		      (unsigned long long)offset, (unsigned long long)got);
}

static void expect_locked(const char *what, struct flex_alloc *a, uint32_t locked,
			  uint32_t regions)
{
	struct flex_alloc_stats st;

	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.regions_locked == locked && st.num_regions == regions,
		      "%s: expected locked=%u with %u regions, got locked=%u with %u", what, locked,
		      regions, st.regions_locked, st.num_regions);
}

START_TEST(defaults)
{
	struct flex_alloc_config cfg;

	flex_alloc_config_init(&cfg);
	/* Chosen from the source at flex_alloc_new() (tests/unit/test_sharing.c). */
	ck_assert_int_eq(cfg.region_strategy, FLEX_ALLOC_REGION_AUTO);
	ck_assert_int_eq(cfg.block_strategy, FLEX_ALLOC_FIRST_FIT);
	ck_assert_uint_eq(cfg.num_fallback_sizes, 0);
	ck_assert_uint_eq(cfg.max_regions, 12);
	ck_assert_uint_eq(cfg.fixed_regions, 0);
	ck_assert_uint_eq(cfg.flags, 0);
}
END_TEST

START_TEST(rfc_fallback_sequence)
{
	static const uint64_t sizes[] = { 12 * GiB, 12 * GiB, 8 * GiB, 12 * GiB, 8 * GiB, 4 * GiB };
	static const int results[] = { 0, -ENOMEM, 0, -ENOMEM, -ENOMEM, -ENOMEM };
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 20 * GiB, 0, 0);
	struct flex_alloc_config cfg;
	struct flex_alloc *a;
	flex_alloc_index_t x[4];

	config_fallbacks(&cfg, (const uint64_t[]){ 12 * GiB, 8 * GiB, 4 * GiB }, 3);
	cfg.region_strategy = FLEX_ALLOC_LOAD_BALANCING;
	a = new_allocator_on(src, &cfg, NULL);
	/* LoadBalancing acquires before every allocation while the source has memory. */
	x[0] = must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	expect_attempts("1st allocation", &rec, sizes, results, 1);
	x[1] = must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	expect_attempts("2nd allocation: 12 GiB fails, 8 GiB fits", &rec, sizes, results, 3);
	expect_locked("after two regions", a, 0, 2);
	x[2] = must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	expect_attempts("3rd allocation: every size fails", &rec, sizes, results, 6);
	expect_locked("all fallback sizes failed: out of memory is not a lock", a, 0, 2);
	x[3] = must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	expect_attempts("4th allocation fits: no attempt after the failure", &rec, sizes, results, 6);
	/* Most free first: the 12 GiB region keeps winning over the 8 GiB one. */
	for (int i = 0; i < 4; i++)
		expect_region("load balancing by free bytes", a, x[i], 0);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
	ck_assert_msg(rec.releases == 2, "destroy gives back 2 regions, gave %u", rec.releases);
}
END_TEST

START_TEST(configured_fallback_sizes)
{
	static const uint64_t sizes[] = { 3 * MiB, 3 * MiB, 2 * MiB, 1 * MiB, 3 * MiB, 2 * MiB, 1 * MiB };
	static const int results[] = { 0, -ENOMEM, -ENOMEM, 0, -ENOMEM, -ENOMEM, -ENOMEM };
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 4 * MiB, 0, 0);
	struct flex_alloc_config cfg;
	struct flex_alloc *a;

	config_fallbacks(&cfg, (const uint64_t[]){ 3 * MiB, 2 * MiB, 1 * MiB }, 3);
	a = new_allocator_on(src, &cfg, NULL);
	for (int i = 0; i < 3; i++)
		must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	expect_attempts("3, 2, 1 MiB on a 4 MiB device", &rec, sizes, results, 7);
	expect_locked("device exhausted: not locked", a, 0, 2);
	check_invariants(a, "configured fallback sizes");
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(max_regions_locks)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 100 * MiB, 0, 0);
	struct flex_alloc_config cfg;
	flex_alloc_index_t x[4];
	struct flex_alloc *a;

	config_one_size(&cfg, 1 * MiB, 3);
	a = new_allocator_on(src, &cfg, NULL);
	for (int i = 0; i < 3; i++) {
		x[i] = must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
		/* The fresh region is the most free one. */
		expect_region("each allocation in its new region", a, x[i], (uint64_t)i);
		ck_assert_uint_eq(rec.attempts, (unsigned int)i + 1);
	}
	expect_locked("max_regions reached", a, 1, 3);
	x[3] = must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(rec.attempts == 3, "locked: expected no 4th attempt, got %u attempts",
		      rec.attempts);
	/* All equally free: the first acquired wins the tie. */
	expect_region("tie between equally free regions", a, x[3], 0);
	/* Freeing everything does not unlock (regions are kept). */
	for (int i = 0; i < 4; i++)
		must_free(a, x[i]);
	must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_uint_eq(rec.attempts, 3);
	expect_locked("still locked after frees", a, 1, 3);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(table_caps_max_regions)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 100 * MiB, 2, 2);
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_alloc *a;

	config_one_size(&cfg, 1 * MiB, 12);
	cfg.region_strategy = FLEX_ALLOC_LOAD_BALANCING;
	a = new_allocator_on(src, &cfg, NULL);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.max_regions == 2, "max_regions 12 on a 2-entry table: expected 2, got %u",
		      st.max_regions);
	for (int i = 0; i < 3; i++)
		must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_uint_eq(rec.attempts, 2);
	expect_locked("table full", a, 1, 2);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(table_full_stops_fallbacks)
{
	/* The source does not advertise its 1-entry table: -ENOSPC tells. */
	static const uint64_t sizes[] = { 2 * MiB, 2 * MiB };
	static const int results[] = { 0, -ENOSPC };
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 100 * MiB, 1, 0);
	struct flex_alloc_config cfg;
	struct flex_alloc *a;

	config_fallbacks(&cfg, (const uint64_t[]){ 2 * MiB, 1 * MiB }, 2);
	a = new_allocator_on(src, &cfg, NULL);
	must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	expect_attempts("-ENOSPC: no smaller size tried", &rec, sizes, results, 2);
	expect_locked("table full", a, 1, 1);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(fixed_regions_up_front)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 10 * MiB, 0, 0);
	struct flex_alloc_config cfg;
	flex_alloc_index_t x;
	struct flex_alloc *a;
	int n = 0;

	config_one_size(&cfg, 1 * MiB, 12);
	cfg.fixed_regions = 3;
	a = new_allocator_on(src, &cfg, NULL);
	ck_assert_msg(rec.attempts == 3, "3 fixed regions: expected 3 attempts at creation, got %u",
		      rec.attempts);
	expect_locked("fixed regions", a, 1, 3);
	while (flex_alloc_block_alloc(a, 100 * KiB, FLEX_ALLOC_TENSOR, &x) == 0)
		n++;
	ck_assert_msg(n == 30, "100 KiB blocks in 3 x 1 MiB: expected 30, got %d", n);
	ck_assert_msg(rec.attempts == 3, "never acquire after creation: got %u attempts",
		      rec.attempts);
	check_invariants(a, "fixed regions full");
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(fixed_regions_partial_and_none)
{
	struct flex_region_source *src;
	struct flex_alloc_config cfg;
	struct flex_alloc *a = NULL;
	int err;

	config_one_size(&cfg, 1 * MiB, 12);
	cfg.fixed_regions = 3;
	a = new_allocator(&cfg, 2 * MiB, 0, NULL);
	expect_locked("3 fixed regions asked, room for 2", a, 1, 2);
	flex_alloc_destroy(a);

	ck_assert_int_eq(flex_region_source_new_memory(512 * KiB, 0, &src), 0);
	err = flex_alloc_new(src, &cfg, &a);
	ck_assert_msg(err == -ENOMEM, "no fixed region possible: expected -ENOMEM, got %d", err);
	ck_assert_msg(strstr(flex_last_error(), "none of 3 fixed regions"),
		      "message: \"%s\"", flex_last_error());
	flex_region_source_unref(src);
}
END_TEST

/* Three fixed regions of 1 MiB with @strategy. */
static struct flex_alloc *three_regions(enum flex_alloc_region_strategy strategy, unsigned int n)
{
	struct flex_alloc_config cfg;

	config_one_size(&cfg, 1 * MiB, n);
	cfg.fixed_regions = n;
	cfg.region_strategy = strategy;
	return new_allocator(&cfg, n * MiB, 0, NULL);
}

START_TEST(load_balancing_most_free_first)
{
	struct flex_alloc *a = three_regions(FLEX_ALLOC_LOAD_BALANCING, 3);
	flex_alloc_index_t x, y, z, w;

	x = must_alloc(a, 300 * KiB, FLEX_ALLOC_TENSOR);
	expect_region("all equal: first region", a, x, 0);
	y = must_alloc(a, 200 * KiB, FLEX_ALLOC_TENSOR);
	expect_region("regions 1 and 2 most free: region 1", a, y, 1);
	z = must_alloc(a, 100 * KiB, FLEX_ALLOC_TENSOR);
	expect_region("region 2 most free", a, z, 2);
	/* Free: 724, 824, 924 KiB. */
	w = must_alloc(a, 50 * KiB, FLEX_ALLOC_TENSOR);
	expect_region("924 KiB free beats 824 and 724", a, w, 2);
	must_free(a, x);
	w = must_alloc(a, 50 * KiB, FLEX_ALLOC_TENSOR);
	expect_region("region 0 emptied: most free again", a, w, 0);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(load_balancing_skips_fragmented)
{
	struct flex_alloc *a = three_regions(FLEX_ALLOC_LOAD_BALANCING, 2);
	flex_alloc_index_t x[5], y;
	static const uint64_t sizes[] = { 700, 200, 100, 200, 224 };
	static const uint64_t regions[] = { 0, 1, 1, 1, 1 };

	for (int i = 0; i < 5; i++) {
		x[i] = must_alloc(a, sizes[i] * KiB, FLEX_ALLOC_TENSOR);
		expect_region("building the layout", a, x[i], regions[i]);
	}
	/* Region 1: 400 KiB free (100 + 300) but largest 300; region 0: 324. */
	must_free(a, x[2]);
	y = must_alloc(a, 310 * KiB, FLEX_ALLOC_TENSOR);
	expect_region("most free region has no 310 KiB block: next one", a, y, 0);
	y = must_alloc(a, 90 * KiB, FLEX_ALLOC_TENSOR);
	expect_region("region 1 most free again", a, y, 1);
	expect_offset("first fit in region 1: the 100 KiB hole", a, y, 200 * KiB);
	check_invariants(a, "load balancing layout");
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(fill_first_least_free_that_fits)
{
	struct flex_alloc *a = three_regions(FLEX_ALLOC_FILL_FIRST, 3);
	static const uint64_t sizes[] = { 600, 600, 300, 200, 500 };
	static const uint64_t regions[] = { 0, 1, 0, 1, 2 };
	static const char *const why[] = {
		"all equal: first region",
		"region 0 has 424 KiB: region 1 (tie with 2)",
		"region 0 is the least free that fits",
		"region 0 has 124 KiB: region 1 (424) before region 2 (1024)",
		"only region 2 fits",
	};

	for (int i = 0; i < 5; i++)
		expect_region(why[i], a, must_alloc(a, sizes[i] * KiB, FLEX_ALLOC_TENSOR), regions[i]);
	check_invariants(a, "fill first layout");
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(fill_first_acquires_only_when_nothing_fits)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 100 * MiB, 0, 0);
	struct flex_alloc_config cfg;
	struct flex_alloc *a;
	flex_alloc_index_t x;

	config_one_size(&cfg, 1 * MiB, 3);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	a = new_allocator_on(src, &cfg, NULL);
	ck_assert_uint_eq(rec.attempts, 0);
	x = must_alloc(a, 600 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(rec.attempts == 1, "first allocation acquires: got %u attempts", rec.attempts);
	expect_region("first region", a, x, 0);
	x = must_alloc(a, 300 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(rec.attempts == 1, "fits in region 0: no acquisition, got %u attempts",
		      rec.attempts);
	expect_region("still region 0", a, x, 0);
	x = must_alloc(a, 200 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(rec.attempts == 2, "nothing fits: acquire, got %u attempts", rec.attempts);
	expect_region("new region", a, x, 1);
	expect_locked("2 of 3", a, 0, 2);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

/*
 * One region of 1 MiB with @strategy, filled as: A 256 KiB, B 64 KiB,
 * C 128 KiB, D 64 KiB, E 512 KiB; then A and C are freed, leaving holes
 * of 256 KiB at 0 and 128 KiB at 320 KiB.
 */
static struct flex_alloc *two_holes(enum flex_alloc_block_strategy strategy)
{
	static const uint64_t sizes[] = { 256, 64, 128, 64, 512 };
	struct flex_alloc_config cfg;
	flex_alloc_index_t x[5];
	struct flex_alloc *a;

	config_one_size(&cfg, 1 * MiB, 1);
	cfg.block_strategy = strategy;
	a = new_allocator(&cfg, 1 * MiB, 0, NULL);
	for (int i = 0; i < 5; i++)
		x[i] = must_alloc(a, sizes[i] * KiB, FLEX_ALLOC_TENSOR);
	must_free(a, x[0]);
	must_free(a, x[2]);
	return a;
}

START_TEST(first_fit_lowest_offset)
{
	struct flex_alloc *a = two_holes(FLEX_ALLOC_FIRST_FIT);

	expect_offset("first fit 100 KiB: the hole at 0", a, must_alloc(a, 100 * KiB, FLEX_ALLOC_TENSOR), 0);
	expect_offset("first fit 100 KiB again: rest of the hole at 0", a,
		      must_alloc(a, 100 * KiB, FLEX_ALLOC_TENSOR), 100 * KiB);
	expect_offset("first fit 100 KiB: 56 KiB left at 200, so the hole at 320", a,
		      must_alloc(a, 100 * KiB, FLEX_ALLOC_TENSOR), 320 * KiB);
	check_invariants(a, "first fit");
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(best_fit_smallest_block)
{
	struct flex_alloc *a = two_holes(FLEX_ALLOC_BEST_FIT);
	struct flex_alloc_stats st;

	expect_offset("best fit 100 KiB: the 128 KiB hole", a,
		      must_alloc(a, 100 * KiB, FLEX_ALLOC_TENSOR), 320 * KiB);
	expect_offset("best fit 200 KiB: only the 256 KiB hole", a,
		      must_alloc(a, 200 * KiB, FLEX_ALLOC_TENSOR), 0);
	/* Left: 56 KiB at 200 KiB and 28 KiB at 420 KiB. */
	expect_offset("best fit 20 KiB: the 28 KiB hole", a,
		      must_alloc(a, 20 * KiB, FLEX_ALLOC_TENSOR), 420 * KiB);
	flex_alloc_get_stats(a, &st);
	ck_assert_uint_eq(st.num_free_blocks, 2);
	expect_offset("best fit 8 KiB: exact fit of the 8 KiB left at 440", a,
		      must_alloc(a, 8 * KiB, FLEX_ALLOC_TENSOR), 440 * KiB);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_free_blocks == 1, "exact fit removes the hole: expected 1 free block, got %llu",
		      (unsigned long long)st.num_free_blocks);
	check_invariants(a, "best fit");
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(best_fit_tie_lowest_offset)
{
	struct flex_alloc_config cfg;
	flex_alloc_index_t x[6];
	struct flex_alloc *a;

	config_one_size(&cfg, 1 * MiB, 1);
	cfg.block_strategy = FLEX_ALLOC_BEST_FIT;
	a = new_allocator(&cfg, 1 * MiB, 0, NULL);
	for (int i = 0; i < 6; i++)
		x[i] = must_alloc(a, 64 * KiB, FLEX_ALLOC_TENSOR);
	must_free(a, x[3]);
	must_free(a, x[1]);
	must_free(a, x[5]);	/* merges with the tail: not a tie */
	expect_offset("two equal 64 KiB holes: the lower one", a,
		      must_alloc(a, 60 * KiB, FLEX_ALLOC_TENSOR), 64 * KiB);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(release_empty_regions)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 10 * MiB, 0, 0);
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_alloc *a;
	flex_alloc_index_t x[3];

	config_one_size(&cfg, 1 * MiB, 3);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	cfg.flags = FLEX_ALLOC_F_RELEASE_EMPTY;
	a = new_allocator_on(src, &cfg, NULL);
	for (int i = 0; i < 3; i++)
		x[i] = must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	expect_locked("three full regions, max 3", a, 1, 3);
	must_free(a, x[0]);
	ck_assert_msg(rec.releases == 0, "first region emptied: expected it kept, got %u releases",
		      rec.releases);
	must_free(a, x[1]);
	ck_assert_msg(rec.releases == 1, "second region emptied: expected the first given back, got %u releases",
		      rec.releases);
	must_free(a, x[2]);
	ck_assert_msg(rec.releases == 2, "third emptied: expected the second given back, got %u releases",
		      rec.releases);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_regions == 1 && st.reserved_bytes == 1 * MiB &&
		      st.num_region_releases == 2 && !st.regions_locked,
		      "after the frees: expected 1 region kept, 1 MiB reserved, 2 releases, unlocked; got %u, %llu, %llu, %u",
		      st.num_regions, (unsigned long long)st.reserved_bytes,
		      (unsigned long long)st.num_region_releases, st.regions_locked);
	ck_assert_int_eq(flex_alloc_block_free(a, x[2]), -ENOENT);
	x[0] = must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(rec.attempts == 3, "the kept region serves the next allocation: got %u attempts",
		      rec.attempts);
	expect_region("in the kept region", a, x[0], 2);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

/* Issue 15: 1000 allocate/free cycles were 1000 acquisitions and releases. */
START_TEST(release_empty_without_thrash)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 128 * GiB, 8, 8);
	struct flex_alloc_config cfg;
	struct flex_alloc *a;

	flex_alloc_config_init(&cfg);
	cfg.flags = FLEX_ALLOC_F_RELEASE_EMPTY;
	a = new_allocator_on(src, &cfg, NULL);
	for (int i = 0; i < 1000; i++)
		must_free(a, must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR));
	ck_assert_msg(rec.attempts == 1 && rec.releases == 0,
		      "1000 allocate/free cycles: expected 1 acquisition and no release, got %u acquisitions and %u releases",
		      rec.attempts, rec.releases);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

/* flex_alloc_trim(): what PyTorch's empty_cache() calls. */
START_TEST(trim_gives_back_entirely_free_regions)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 10 * MiB, 0, 0);
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_alloc *a;
	flex_alloc_index_t x[3];
	uint64_t released = 0;

	config_one_size(&cfg, 1 * MiB, 3);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	a = new_allocator_on(src, &cfg, NULL);
	for (int i = 0; i < 3; i++)
		x[i] = must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	must_free(a, x[0]);
	must_free(a, x[2]);
	ck_assert_uint_eq(rec.releases, 0);
	ck_assert_int_eq(flex_alloc_trim(a, &released), 0);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(released == 2 * MiB && rec.releases == 2 && st.num_regions == 1 &&
		      st.reserved_bytes == 1 * MiB && !st.regions_locked,
		      "trim with 2 of 3 regions empty: expected 2 MiB in 2 releases, 1 region left, unlocked; got %llu in %u, %u regions, %llu reserved, locked %u",
		      (unsigned long long)released, rec.releases, st.num_regions,
		      (unsigned long long)st.reserved_bytes, st.regions_locked);
	expect_region("the live block stays put", a, x[1], 1);
	must_free(a, x[1]);
	ck_assert_int_eq(flex_alloc_trim(a, NULL), 0);
	flex_alloc_get_stats(a, &st);
	ck_assert_uint_eq(st.reserved_bytes, 0);
	must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(rec.attempts == 4, "after trim the next allocation acquires: %u attempts",
		      rec.attempts);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);

	/* Fixed regions are never given back. */
	config_one_size(&cfg, 1 * MiB, 2);
	cfg.fixed_regions = 2;
	a = new_allocator(&cfg, 2 * MiB, 0, NULL);
	ck_assert_int_eq(flex_alloc_trim(a, &released), 0);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(released == 0 && st.num_regions == 2,
		      "trim with fixed regions: expected nothing released, got %llu, %u regions left",
		      (unsigned long long)released, st.num_regions);
	flex_alloc_destroy(a);
}
END_TEST

/*
 * Out of room with an empty region held (the region cap reached): it is
 * given back so that a region that fits can be acquired.
 */
START_TEST(oom_gives_back_empty_regions_first)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 3 * MiB, 0, 0);
	struct flex_alloc_config cfg;
	struct flex_alloc *a;
	flex_alloc_index_t x, y;
	int err;

	config_one_size(&cfg, 1 * MiB, 2);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	a = new_allocator_on(src, &cfg, NULL);
	x = must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	must_free(a, must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR));
	expect_locked("two regions, one empty", a, 1, 2);
	err = flex_alloc_block_alloc(a, 2 * MiB, FLEX_ALLOC_TENSOR, &y);
	ck_assert_msg(err == 0, "2 MiB with an empty 1 MiB region held: expected 0, got %d (%s)", err,
		      flex_last_error());
	ck_assert_msg(rec.releases == 1 && must_resolve(a, x).region_id == 0,
		      "the empty region given back, the live one kept: got %u releases", rec.releases);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(regions_kept_by_default)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 10 * MiB, 0, 0);
	struct flex_alloc_config cfg;
	struct flex_alloc *a;

	config_one_size(&cfg, 1 * MiB, 1);
	a = new_allocator_on(src, &cfg, NULL);
	must_free(a, must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR));
	ck_assert_uint_eq(rec.releases, 0);
	expect_locked("kept", a, 1, 1);
	flex_alloc_destroy(a);
	ck_assert_uint_eq(rec.releases, 1);
	flex_region_source_unref(src);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("regions");
	TCase *tc = tcase_create("acquisition");

	tcase_add_test(tc, defaults);
	tcase_add_test(tc, rfc_fallback_sequence);
	tcase_add_test(tc, configured_fallback_sizes);
	tcase_add_test(tc, max_regions_locks);
	tcase_add_test(tc, table_caps_max_regions);
	tcase_add_test(tc, table_full_stops_fallbacks);
	tcase_add_test(tc, fixed_regions_up_front);
	tcase_add_test(tc, fixed_regions_partial_and_none);
	tcase_add_test(tc, release_empty_regions);
	tcase_add_test(tc, release_empty_without_thrash);
	tcase_add_test(tc, trim_gives_back_entirely_free_regions);
	tcase_add_test(tc, oom_gives_back_empty_regions_first);
	tcase_add_test(tc, regions_kept_by_default);
	suite_add_tcase(s, tc);

	tc = tcase_create("strategies");
	tcase_add_test(tc, load_balancing_most_free_first);
	tcase_add_test(tc, load_balancing_skips_fragmented);
	tcase_add_test(tc, fill_first_least_free_that_fits);
	tcase_add_test(tc, fill_first_acquires_only_when_nothing_fits);
	tcase_add_test(tc, first_fit_lowest_offset);
	tcase_add_test(tc, best_fit_smallest_block);
	tcase_add_test(tc, best_fit_tie_lowest_offset);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
