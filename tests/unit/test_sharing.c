// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator on a device it shares, with its default configuration:
 * the cases issue 15 found by probing. Region sizes follow the function's
 * memory (the device, or its quota) and FillFirst is the default where the
 * lookup table is scarce; eight small tensors on a VF take one region and
 * four VFs of one 128 GiB device all get memory. A failed acquisition
 * (another tenant holds the memory) is retried later instead of locking
 * the allocator for good. A tensor larger than the fallback sizes gets a
 * region of its own size, and a request no region can serve reserves
 * nothing.
 */
#include <errno.h>
#include <string.h>

#include "unit_util.h"

/* A simulated device of @capacity and a VF of it: 8 entries, @quota (0: none). */
static struct flex_region_source *vf_of(struct flex_region_source **device, uint64_t capacity,
					uint64_t quota)
{
	struct flex_region_source *vf;

	ck_assert_int_eq(flex_region_source_new_memory(capacity, 0, device), 0);
	ck_assert_int_eq(flex_region_source_new_memory_function(*device, 8, quota, &vf), 0);
	return vf;
}

static struct flex_alloc_stats stats_of(struct flex_alloc *a)
{
	struct flex_alloc_stats st;

	flex_alloc_get_stats(a, &st);
	return st;
}

static uint64_t device_free(struct flex_region_source *src)
{
	struct flex_region_source_info info;

	ck_assert_int_eq(flex_region_source_get_info(src, &info), 0);
	return info.free;
}

START_TEST(eight_small_tensors_on_a_vf_take_one_region)
{
	struct flex_region_source *device, *vf = vf_of(&device, 128 * GiB, 0);
	struct flex_alloc *a = new_allocator_on(vf, NULL, NULL);
	struct flex_region_source_info info;
	struct flex_alloc_stats st;

	for (int i = 0; i < 8; i++)
		must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	st = stats_of(a);
	ck_assert_int_eq(flex_region_source_get_info(vf, &info), 0);
	ck_assert_msg(st.num_regions <= 1 && info.table_used <= 1,
		      "eight 1 MiB tensors on an 8-entry VF: expected at most 1 region, got %u regions (%u table entries), %llu bytes reserved",
		      st.num_regions, info.table_used, (unsigned long long)st.reserved_bytes);
	ck_assert_msg(st.reserved_bytes <= 128 * GiB / 64,
		      "eight 1 MiB tensors: expected at most %llu bytes reserved (1/64 of the device), got %llu",
		      128 * GiB / 64, (unsigned long long)st.reserved_bytes);
	flex_alloc_destroy(a);
	flex_region_source_unref(vf);
	flex_region_source_unref(device);
}
END_TEST

START_TEST(four_vfs_sharing_128_gib_each_allocate)
{
	struct flex_region_source *device, *vf[4];
	struct flex_alloc *a[4];

	ck_assert_int_eq(flex_region_source_new_memory(128 * GiB, 0, &device), 0);
	for (int v = 0; v < 4; v++) {
		ck_assert_int_eq(flex_region_source_new_memory_function(device, 8, 0, &vf[v]), 0);
		a[v] = new_allocator_on(vf[v], NULL, NULL);
	}
	/* One after the other, as four jobs starting in turn. */
	for (int v = 0; v < 4; v++) {
		for (int i = 0; i < 8; i++) {
			flex_alloc_index_t x;
			int err = flex_alloc_block_alloc(a[v], 1 * MiB, FLEX_ALLOC_TENSOR, &x);

			ck_assert_msg(err == 0,
				      "VF %d, tensor %d of 1 MiB: expected 0, got %d (%s); the device has %llu bytes free",
				      v, i, err, flex_last_error(),
				      (unsigned long long)device_free(device));
		}
	}
	/* And each can still grow: a 4 GiB tensor per VF. */
	for (int v = 0; v < 4; v++) {
		flex_alloc_index_t x;
		int err = flex_alloc_block_alloc(a[v], 4 * GiB, FLEX_ALLOC_TENSOR, &x);

		ck_assert_msg(err == 0, "VF %d, a 4 GiB tensor after the small ones: expected 0, got %d (%s)",
			      v, err, flex_last_error());
	}
	for (int v = 0; v < 4; v++) {
		flex_alloc_destroy(a[v]);
		flex_region_source_unref(vf[v]);
	}
	ck_assert_uint_eq(device_free(device), 128 * GiB);
	flex_region_source_unref(device);
}
END_TEST

/*
 * The documented scaling: with a quota of 16 GiB the first region is 1/64
 * of it, each later one at most what is held already and at most 1/4 of
 * it, so the 8 entries of a VF reach the whole quota: 64 tensors of
 * 256 MiB fit, and the 65th does not.
 */
START_TEST(region_sizes_follow_the_quota)
{
	static const uint64_t sizes[] = {
		256 * MiB, 256 * MiB, 512 * MiB, 1 * GiB, 2 * GiB, 4 * GiB, 4 * GiB, 4 * GiB,
	};
	struct flex_region_source *device, *vf = vf_of(&device, 128 * GiB, 16 * GiB);
	struct recording_source rec;
	struct flex_region_source *src = recording_source_wrap(&rec, vf, 8);
	struct flex_alloc *a = new_allocator_on(src, NULL, NULL);
	struct flex_alloc_stats st;
	flex_alloc_index_t x;
	unsigned int ok = 0;
	int err;

	while (ok < 65 && flex_alloc_block_alloc(a, 256 * MiB, FLEX_ALLOC_TENSOR, &x) == 0)
		ok++;
	st = stats_of(a);
	ck_assert_msg(ok == 64 && st.reserved_bytes == 16 * GiB && st.num_regions == 8,
		      "256 MiB tensors in a 16 GiB quota: expected 64 in 8 regions holding 16 GiB, got %u in %u regions holding %llu bytes",
		      ok, st.num_regions, (unsigned long long)st.reserved_bytes);
	for (unsigned int i = 0; i < 8; i++) {
		struct flex_alloc_region_stats rs;

		ck_assert_int_eq(flex_alloc_get_region_stats(a, i, &rs), 0);
		ck_assert_msg(rs.size == sizes[i], "region %u: expected %llu bytes, got %llu", i,
			      (unsigned long long)sizes[i], (unsigned long long)rs.size);
	}
	err = flex_alloc_block_alloc(a, 256 * MiB, FLEX_ALLOC_TENSOR, &x);
	ck_assert_msg(err == -ENOMEM, "quota reached: expected -ENOMEM, got %d", err);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
	flex_region_source_unref(device);
}
END_TEST

/*
 * Without a scarce table the default is still the RFC's LoadBalancing, a
 * region before every allocation, each 1/max_regions of the device.
 */
START_TEST(load_balancing_where_the_table_is_large)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 64 * GiB, 64, 64);
	struct flex_alloc *a = new_allocator_on(src, NULL, NULL);
	uint64_t twelfth = 64 * GiB / 12 / 128 * 128;

	must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(rec.attempts == 2 && rec.size[0] == twelfth && rec.size[1] == twelfth,
		      "LoadBalancing on a 64-entry table: expected two acquisitions of %llu (1/12 of 64 GiB), got %u (%llu, %llu)",
		      (unsigned long long)twelfth, rec.attempts, (unsigned long long)rec.size[0],
		      (unsigned long long)rec.size[1]);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

/* Another tenant holds all memory for a while: the VF fails, then gets it. */
START_TEST(transient_failure_does_not_lock)
{
	struct flex_region_source *device, *vf = vf_of(&device, 8 * GiB, 0);
	struct flex_region_source *other;
	struct flex_region held;
	struct flex_alloc *a = new_allocator_on(vf, NULL, NULL);
	struct flex_alloc_stats st;
	flex_alloc_index_t x;
	int err;

	ck_assert_int_eq(flex_region_source_new_memory_function(device, 8, 0, &other), 0);
	ck_assert_int_eq(flex_region_source_acquire(other, 8 * GiB, &held), 0);
	err = flex_alloc_block_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR, &x);
	ck_assert_msg(err == -ENOMEM, "device held by another tenant: expected -ENOMEM, got %d", err);
	st = stats_of(a);
	ck_assert_msg(!st.regions_locked,
		      "an -ENOMEM from the source is transient: expected not locked, got locked with %u regions",
		      st.num_regions);
	ck_assert_msg(strstr(flex_last_error(), "not locked") &&
		      strstr(flex_last_error(),
			     "the source has 0 bytes free for new regions (largest 0) of 8589934592"),
		      "OOM message should say the region set is not locked and the source has nothing free: \"%s\"",
		      flex_last_error());

	ck_assert_int_eq(flex_region_source_release(other, &held), 0);
	err = flex_alloc_block_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR, &x);
	ck_assert_msg(err == 0, "the tenant freed the device: expected 0, got %d (%s)", err,
		      flex_last_error());
	flex_alloc_destroy(a);
	flex_region_source_unref(other);
	flex_region_source_unref(vf);
	flex_region_source_unref(device);
}
END_TEST

/*
 * LoadBalancing acquires before every allocation; once the source is out
 * of memory it stops doing so (no acquisition per allocation that fits),
 * and tries again when an allocation does not fit.
 */
START_TEST(load_balancing_backs_off_after_enomem)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 3 * MiB, 0, 0);
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_alloc *a;
	flex_alloc_index_t x;

	config_one_size(&cfg, 1 * MiB, 12);
	cfg.region_strategy = FLEX_ALLOC_LOAD_BALANCING;
	a = new_allocator_on(src, &cfg, NULL);
	for (int i = 0; i < 4; i++)
		must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(rec.attempts == 4 && rec.result[3] == -ENOMEM,
		      "3 regions then an -ENOMEM: expected 4 attempts, got %u", rec.attempts);
	for (int i = 0; i < 10; i++)
		must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(rec.attempts == 4, "after -ENOMEM, allocations that fit: expected no attempt, got %u attempts",
		      rec.attempts);
	ck_assert_int_eq(flex_alloc_block_alloc(a, 2 * MiB, FLEX_ALLOC_TENSOR, &x), -ENOMEM);
	ck_assert_msg(rec.attempts == 5 && rec.size[4] == 2 * MiB,
		      "an allocation that fits nowhere retries with a region of its size: expected attempt 5 of 2 MiB, got %u attempts, last %llu",
		      rec.attempts, (unsigned long long)rec.size[rec.attempts - 1]);
	st = stats_of(a);
	ck_assert_uint_eq(st.regions_locked, 0);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(oversize_tensor_fits_an_empty_device)
{
	struct flex_region_source *device, *vf = vf_of(&device, 128 * GiB, 0);
	struct flex_alloc *a = new_allocator_on(vf, NULL, NULL);
	flex_alloc_index_t x;
	uint64_t size;
	int err;

	err = flex_alloc_block_alloc(a, 16 * GiB, FLEX_ALLOC_TENSOR, &x);
	ck_assert_msg(err == 0, "a 16 GiB tensor on an empty 128 GiB device: expected 0, got %d (%s)",
		      err, flex_last_error());
	ck_assert_int_eq(flex_alloc_block_resolve(a, x, &(struct flex_vaddr){ 0 }, &size), 0);
	ck_assert_uint_eq(size, 16 * GiB);
	flex_alloc_destroy(a);
	flex_region_source_unref(vf);

	/* Explicit fallback sizes: the region is sized to the request. */
	{
		struct recording_source rec;
		struct flex_region_source *src = recording_source_new(&rec, 128 * GiB, 0, 0);
		struct flex_alloc_config cfg;

		config_fallbacks(&cfg, (const uint64_t[]){ 12 * GiB, 8 * GiB, 4 * GiB }, 3);
		a = new_allocator_on(src, &cfg, NULL);
		err = flex_alloc_block_alloc(a, 16 * GiB, FLEX_ALLOC_TENSOR, &x);
		ck_assert_msg(err == 0 && rec.attempts == 1 && rec.size[0] == 16 * GiB,
			      "16 GiB with fallbacks 12/8/4 GiB: expected one acquisition of 16 GiB, got %d after %u attempts (first %llu)",
			      err, rec.attempts, (unsigned long long)rec.size[0]);
		flex_alloc_destroy(a);
		flex_region_source_unref(src);
	}
	flex_region_source_unref(device);
}
END_TEST

START_TEST(failed_oversize_requests_reserve_nothing)
{
	struct flex_region_source *device, *vf = vf_of(&device, 128 * GiB, 0);
	struct recording_source rec;
	struct flex_region_source *src = recording_source_wrap(&rec, vf, 8);
	struct flex_region_source *other;
	struct flex_region held;
	struct flex_alloc *a = new_allocator_on(src, NULL, NULL);
	struct flex_alloc_stats st;
	flex_alloc_index_t x;
	int err;

	/* Larger than the device, six times. */
	for (int i = 0; i < 6; i++) {
		err = flex_alloc_block_alloc(a, 200 * GiB, FLEX_ALLOC_TENSOR, &x);
		ck_assert_msg(err == -ENOMEM, "200 GiB on 128 GiB: expected -ENOMEM, got %d", err);
	}
	/* Larger than what another tenant leaves free. */
	ck_assert_int_eq(flex_region_source_new_memory_function(device, 8, 0, &other), 0);
	ck_assert_int_eq(flex_region_source_acquire(other, 100 * GiB, &held), 0);
	for (int i = 0; i < 6; i++) {
		err = flex_alloc_block_alloc(a, 40 * GiB, FLEX_ALLOC_TENSOR, &x);
		ck_assert_msg(err == -ENOMEM, "40 GiB with 28 GiB free: expected -ENOMEM, got %d", err);
	}
	st = stats_of(a);
	ck_assert_msg(st.reserved_bytes == 0 && st.num_region_acquires == 0,
		      "failed oversize requests: expected nothing reserved, got %llu bytes in %llu acquisitions",
		      (unsigned long long)st.reserved_bytes,
		      (unsigned long long)st.num_region_acquires);
	for (unsigned int i = 0; i < rec.attempts && i < REC_MAX; i++)
		ck_assert_msg(rec.size[i] >= 40 * GiB,
			      "attempt %u asked %llu bytes: a region that cannot hold the request", i,
			      (unsigned long long)rec.size[i]);
	/* What does fit still works, in a region that holds it. */
	must_alloc(a, 20 * GiB, FLEX_ALLOC_TENSOR);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
	flex_region_source_unref(other);
	flex_region_source_unref(device);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sharing");
	TCase *tc = tcase_create("defaults");

	tcase_add_test(tc, eight_small_tensors_on_a_vf_take_one_region);
	tcase_add_test(tc, four_vfs_sharing_128_gib_each_allocate);
	tcase_add_test(tc, region_sizes_follow_the_quota);
	tcase_add_test(tc, load_balancing_where_the_table_is_large);
	suite_add_tcase(s, tc);

	tc = tcase_create("transient");
	tcase_add_test(tc, transient_failure_does_not_lock);
	tcase_add_test(tc, load_balancing_backs_off_after_enomem);
	suite_add_tcase(s, tc);

	tc = tcase_create("oversize");
	tcase_add_test(tc, oversize_tensor_fits_an_empty_device);
	tcase_add_test(tc, failed_oversize_requests_reserve_nothing);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
