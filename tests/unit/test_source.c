// SPDX-License-Identifier: GPL-2.0
/*
 * Region sources: the plug-in wrapper (required callbacks, references,
 * destroy once, contract checks, info) and the in-memory source (capacity,
 * lookup-table entries, ids, release, functions sharing a device with
 * quotas, info snapshots).
 */
#include <errno.h>

#include "unit_util.h"

struct fake {
	unsigned int acquires, releases, destroys;
	uint64_t give;		/* size handed out, 0: as asked */
	int fail;		/* returned by acquire when non-zero */
};

static int fake_acquire(void *user, uint64_t size, struct flex_region *out)
{
	struct fake *f = user;

	f->acquires++;
	if (f->fail)
		return f->fail;
	out->region_id = 0x1000 * f->acquires;
	out->size = f->give ? f->give : size;
	return 0;
}

static int fake_release(void *user, const struct flex_region *region)
{
	struct fake *f = user;

	f->releases++;
	return 0;
}

static void fake_destroy(void *user)
{
	struct fake *f = user;

	f->destroys++;
}

static const struct flex_region_source_ops fake_ops = {
	.acquire = fake_acquire,
	.release = fake_release,
	.destroy = fake_destroy,
};

START_TEST(plugin_needs_callbacks)
{
	struct flex_region_source_ops ops = { .acquire = fake_acquire };
	struct flex_region_source *src;

	ck_assert_int_eq(flex_region_source_new(&ops, NULL, 0, &src), -EINVAL);
	ops = (struct flex_region_source_ops){ .release = fake_release };
	ck_assert_int_eq(flex_region_source_new(&ops, NULL, 0, &src), -EINVAL);
	ck_assert_int_eq(flex_region_source_new(NULL, NULL, 0, &src), -EINVAL);
}
END_TEST

START_TEST(plugin_references_and_destroy)
{
	struct fake f = { 0 };
	struct flex_region_source *src;
	struct flex_alloc *a;

	ck_assert_int_eq(flex_region_source_new(&fake_ops, &f, 4, &src), 0);
	ck_assert_uint_eq(flex_region_source_table_entries(src), 4);
	ck_assert_ptr_eq(flex_region_source_ref(src), src);
	flex_region_source_unref(src);
	ck_assert_uint_eq(f.destroys, 0);
	/* The allocator keeps the source alive after its creator lets go. */
	a = new_allocator_on(src, NULL, NULL);
	flex_region_source_unref(src);
	ck_assert_uint_eq(f.destroys, 0);
	must_alloc(a, 4096, FLEX_ALLOC_TENSOR);
	ck_assert_msg(f.acquires == 1, "plug-in source used for the region: %u acquires", f.acquires);
	ck_assert_uint_eq(must_resolve(a, must_alloc(a, 128, FLEX_ALLOC_TENSOR)).region_id % 0x1000, 0);
	flex_alloc_destroy(a);
	ck_assert_msg(f.destroys == 1 && f.releases == f.acquires,
		      "after destroy: expected 1 destroy and every region released, got %u, %u of %u",
		      f.destroys, f.releases, f.acquires);
	flex_region_source_unref(NULL);
}
END_TEST

START_TEST(plugin_contract_checked)
{
	struct fake f = { .give = 4096 };
	struct flex_region_source *src;
	struct flex_region r;

	ck_assert_int_eq(flex_region_source_new(&fake_ops, &f, 0, &src), 0);
	ck_assert_int_eq(flex_region_source_acquire(src, 0, &r), -EINVAL);
	/* Smaller than asked: refused and given back. */
	ck_assert_int_eq(flex_region_source_acquire(src, 8192, &r), -EINVAL);
	ck_assert_uint_eq(f.releases, 1);
	ck_assert_int_eq(flex_region_source_acquire(src, 4096, &r), 0);
	f.fail = 5;	/* positive: a broken callback */
	ck_assert_int_eq(flex_region_source_acquire(src, 4096, &r), -EIO);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(memory_source_limits)
{
	struct flex_region_source *src;
	struct flex_region r[3];

	ck_assert_int_eq(flex_region_source_new_memory(0, 0, &src), -EINVAL);
	ck_assert_int_eq(flex_region_source_new_memory(10 * MiB, 2, &src), 0);
	ck_assert_int_eq(flex_region_source_acquire(src, 11 * MiB, &r[0]), -E2BIG);
	ck_assert_int_eq(flex_region_source_acquire(src, 6 * MiB, &r[0]), 0);
	ck_assert_int_eq(flex_region_source_acquire(src, 6 * MiB, &r[1]), -ENOMEM);
	ck_assert_int_eq(flex_region_source_acquire(src, 4 * MiB, &r[1]), 0);
	ck_assert_msg(r[0].region_id == 0 && r[1].region_id == 1 && r[1].size == 4 * MiB,
		      "ids are table indices: expected 0 and 1, got %llu and %llu",
		      (unsigned long long)r[0].region_id, (unsigned long long)r[1].region_id);
	ck_assert_int_eq(flex_region_source_acquire(src, 128, &r[2]), -ENOSPC);
	ck_assert_int_eq(flex_region_source_release(src, &r[0]), 0);
	ck_assert_int_eq(flex_region_source_release(src, &r[0]), -ENOENT);
	ck_assert_int_eq(flex_region_source_acquire(src, 6 * MiB, &r[2]), 0);
	ck_assert_msg(r[2].region_id == 0, "lowest free entry reused: expected 0, got %llu",
		      (unsigned long long)r[2].region_id);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(memory_source_without_table_limit)
{
	struct flex_region_source *src;
	struct flex_region r;

	ck_assert_int_eq(flex_region_source_new_memory(100 * MiB, 0, &src), 0);
	ck_assert_uint_eq(flex_region_source_table_entries(src), 0);
	for (unsigned int i = 0; i < 100; i++) {
		ck_assert_int_eq(flex_region_source_acquire(src, MiB, &r), 0);
		ck_assert_uint_eq(r.region_id, i);
	}
	ck_assert_int_eq(flex_region_source_acquire(src, 128, &r), -ENOMEM);
	flex_region_source_unref(src);
}
END_TEST

static void expect_info(const char *what, struct flex_region_source *src, uint64_t capacity,
			uint64_t free, unsigned int used)
{
	struct flex_region_source_info info;
	int err = flex_region_source_get_info(src, &info);

	ck_assert_msg(err == 0, "%s: get_info expected 0, got %d", what, err);
	ck_assert_msg(info.capacity == capacity && info.free == free && info.largest_free == free &&
		      info.table_used == used && info.region_align == FLEX_ALLOC_ALIGN,
		      "%s: expected capacity %llu, free %llu, %u entries used, align 128; got %llu, %llu (largest %llu), %u, %llu",
		      what, (unsigned long long)capacity, (unsigned long long)free, used,
		      (unsigned long long)info.capacity, (unsigned long long)info.free,
		      (unsigned long long)info.largest_free, info.table_used,
		      (unsigned long long)info.region_align);
}

START_TEST(plugin_without_info)
{
	struct fake f = { 0 };
	struct flex_region_source_info info;
	struct flex_region_source *src;

	ck_assert_int_eq(flex_region_source_new(&fake_ops, &f, 8, &src), 0);
	ck_assert_int_eq(flex_region_source_get_info(src, &info), -EOPNOTSUPP);
	ck_assert_msg(info.table_entries == 8 && info.capacity == 0,
		      "no info callback: expected only the 8 table entries, got %u entries, capacity %llu",
		      info.table_entries, (unsigned long long)info.capacity);
	flex_region_source_unref(src);
}
END_TEST

/* A 128 GiB device, its first function and a VF with 8 entries and a 16 GiB quota. */
START_TEST(memory_functions_share_the_device)
{
	struct flex_region_source *pf, *vf, *other;
	struct flex_region r[4];

	ck_assert_int_eq(flex_region_source_new_memory(128 * GiB, 0, &pf), 0);
	ck_assert_int_eq(flex_region_source_new_memory_function(pf, 8, 16 * GiB, &vf), 0);
	ck_assert_uint_eq(flex_region_source_table_entries(vf), 8);
	expect_info("fresh PF", pf, 128 * GiB, 128 * GiB, 0);
	expect_info("fresh VF: its quota", vf, 16 * GiB, 16 * GiB, 0);

	ck_assert_int_eq(flex_region_source_acquire(vf, 10 * GiB, &r[0]), 0);
	ck_assert_int_eq(flex_region_source_acquire(vf, 7 * GiB, &r[1]), -EDQUOT);
	ck_assert_int_eq(flex_region_source_acquire(vf, 200 * GiB, &r[1]), -E2BIG);
	expect_info("VF holds 10 GiB", vf, 16 * GiB, 6 * GiB, 1);
	expect_info("the PF sees the VF's region", pf, 128 * GiB, 118 * GiB, 0);

	/* The device, not the quota, runs out: -ENOMEM, and the VF's free shrinks. */
	ck_assert_int_eq(flex_region_source_acquire(pf, 115 * GiB, &r[2]), 0);
	ck_assert_int_eq(flex_region_source_acquire(vf, 4 * GiB, &r[1]), -ENOMEM);
	expect_info("device nearly full", vf, 16 * GiB, 3 * GiB, 1);
	ck_assert_int_eq(flex_region_source_release(pf, &r[2]), 0);
	ck_assert_int_eq(flex_region_source_acquire(vf, 4 * GiB, &r[1]), 0);
	ck_assert_msg(r[0].region_id == 0 && r[1].region_id == 1,
		      "VF ids are its own table indices: expected 0 and 1, got %llu and %llu",
		      (unsigned long long)r[0].region_id, (unsigned long long)r[1].region_id);

	/* A function made from another function: same device; it outlives them. */
	ck_assert_int_eq(flex_region_source_new_memory_function(vf, 1, 0, &other), 0);
	flex_region_source_unref(pf);
	expect_info("third function", other, 128 * GiB, 114 * GiB, 0);
	ck_assert_int_eq(flex_region_source_acquire(other, 1 * GiB, &r[3]), 0);
	ck_assert_int_eq(flex_region_source_acquire(other, 1 * GiB, &r[2]), -ENOSPC);
	ck_assert_int_eq(flex_region_source_release(vf, &r[0]), 0);
	ck_assert_int_eq(flex_region_source_release(vf, &r[1]), 0);
	flex_region_source_unref(vf);
	expect_info("released by the VF", other, 128 * GiB, 127 * GiB, 1);
	flex_region_source_unref(other);
}
END_TEST

START_TEST(memory_function_needs_a_simulated_device)
{
	struct fake f = { 0 };
	struct flex_region_source *src, *out = NULL;

	ck_assert_int_eq(flex_region_source_new(&fake_ops, &f, 0, &src), 0);
	ck_assert_int_eq(flex_region_source_new_memory_function(src, 8, 0, &out), -EINVAL);
	ck_assert_ptr_null(out);
	ck_assert_int_eq(flex_region_source_new_memory_function(NULL, 8, 0, &out), -EINVAL);
	flex_region_source_unref(src);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("source");
	TCase *tc = tcase_create("sources");

	tcase_add_test(tc, plugin_needs_callbacks);
	tcase_add_test(tc, plugin_references_and_destroy);
	tcase_add_test(tc, plugin_contract_checked);
	tcase_add_test(tc, memory_source_limits);
	tcase_add_test(tc, memory_source_without_table_limit);
	tcase_add_test(tc, plugin_without_info);
	tcase_add_test(tc, memory_functions_share_the_device);
	tcase_add_test(tc, memory_function_needs_a_simulated_device);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
