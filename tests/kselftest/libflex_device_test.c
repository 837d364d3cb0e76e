// SPDX-License-Identifier: GPL-2.0
/*
 * libflex against the real driver: the device API and FlexAllocator on the
 * driver-backed region source, in VF mode (the defaults, max_regions capped
 * by the lookup table, region sizes from the VF's quota) and in PF mode
 * (fixed regions up front); the functions sysfs lists, and FLEX_DEVICE
 * choosing the node.
 */
#include <sys/mman.h>

#include <flex/allocator.h>
#include <flex/context.h>
#include <flex/device.h>
#include <flex/job.h>

#include "kselftest_harness.h"
#include "flex_test.h"

TEST(device_api_errors_are_the_drivers)
{
	struct flex_region_acquire a;
	struct flex_device *dev;

	EXPECT_EQ(-ENOENT, flex_device_new("/dev/no-such-flex", &dev));
	EXPECT_EQ(-ENOTTY, flex_device_new("/dev/null", &dev));
	ASSERT_EQ(0, flex_device_new(FLEX_PF, &dev));
	EXPECT_EQ(-EINVAL, flex_device_region_acquire(dev, 4096, &a));
	EXPECT_EQ(-E2BIG, flex_device_region_acquire(dev, 1ULL << 40, &a));
	EXPECT_EQ(-ENOENT, flex_device_region_release(dev, 12345));
	ASSERT_EQ(0, flex_device_region_acquire(dev, 2 * MiB, &a));
	EXPECT_TRUE(region_dir_exists(a.handle));
	flex_device_unref(dev);
	EXPECT_FALSE(region_dir_exists(a.handle));
}

/*
 * Enable one VF, open it and make an allocator with @cfg (NULL: defaults)
 * on it, then make ten allocations of 1000 bytes into @idx.
 */
static struct flex_alloc *vf_allocator(struct __test_metadata *_metadata,
				       const struct flex_alloc_config *cfg,
				       struct flex_device **dev, flex_alloc_index_t *idx)
{
	struct flex_region_source *src;
	struct flex_alloc *a = NULL;
	int i;

	EXPECT_EQ(0, set_numvfs(1));
	EXPECT_EQ(0, flex_device_new("/dev/flex0vf0", dev));
	EXPECT_EQ(0, flex_region_source_from_device(*dev, &src));
	EXPECT_EQ(0, flex_alloc_new(src, cfg, &a)) TH_LOG("%s", flex_last_error());
	flex_region_source_unref(src);
	for (i = 0; a && i < 10; i++)
		EXPECT_EQ(0, flex_alloc_block_alloc(a, 1000, FLEX_ALLOC_TENSOR, &idx[i]))
			TH_LOG("alloc %d: %s", i, flex_last_error());
	return a;
}

TEST(vf_allocator_defaults_share_the_device)
{
	struct flex_alloc_stats st;
	struct flex_device *dev;
	struct flex_alloc *a;
	flex_alloc_index_t idx[10];
	struct flex_vaddr va;
	uint64_t len;
	void *map;
	int i;

	/* FillFirst on the VF's 8 entries: one region of 1/64 of the device. */
	a = vf_allocator(_metadata, NULL, &dev, idx);
	ASSERT_NE(NULL, a);
	ASSERT_EQ(0, flex_alloc_get_stats(a, &st));
	EXPECT_EQ(8, st.max_regions);
	EXPECT_EQ(1, st.num_regions);
	EXPECT_EQ(0, st.regions_locked);
	EXPECT_EQ(1, sysfs_num("/sys/class/flex/flex0vf0/table_used"));
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/capacity") / 64, sysfs_num(FLEX_SYSFS "/used"));

	/* A VirtualAddress names a table entry; its memory is reachable. */
	ASSERT_EQ(0, flex_alloc_block_resolve(a, idx[9], &va, NULL));
	EXPECT_GT(8, va.region_id);
	EXPECT_EQ(0, va.offset % 128);
	ASSERT_EQ(0, flex_device_region_mmap(dev, va.region_id, PROT_READ | PROT_WRITE,
					     &map, &len));
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/capacity") / 64, len);
	((volatile char *)map)[va.offset] = 42;
	EXPECT_EQ(42, ((volatile char *)map)[va.offset]);
	munmap(map, len);

	for (i = 0; i < 10; i++)
		EXPECT_EQ(0, flex_alloc_block_free(a, idx[i]));
	EXPECT_EQ(-ENOENT, flex_alloc_block_free(a, idx[0]));
	flex_alloc_destroy(a);
	EXPECT_EQ(0, sysfs_num("/sys/class/flex/flex0vf0/table_used"));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
	flex_device_unref(dev);
	EXPECT_EQ(0, set_numvfs(0));
}

TEST(vf_allocator_is_bounded_by_the_lookup_table)
{
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_device *dev;
	struct flex_alloc *a;
	flex_alloc_index_t idx[10];

	/* LoadBalancing takes a new region per allocation until the table is full. */
	flex_alloc_config_init(&cfg);
	cfg.region_strategy = FLEX_ALLOC_LOAD_BALANCING;
	cfg.num_fallback_sizes = 1;
	cfg.fallback_sizes[0] = 64 * MiB;
	a = vf_allocator(_metadata, &cfg, &dev, idx);
	ASSERT_NE(NULL, a);
	ASSERT_EQ(0, flex_alloc_get_stats(a, &st));
	EXPECT_EQ(8, st.max_regions);
	EXPECT_EQ(8, st.num_regions);
	EXPECT_EQ(1, st.regions_locked);
	EXPECT_EQ(8, sysfs_num("/sys/class/flex/flex0vf0/table_used"));
	EXPECT_EQ(8 * 64 * MiB, sysfs_num(FLEX_SYSFS "/used"));
	flex_alloc_destroy(a);
	EXPECT_EQ(0, sysfs_num("/sys/class/flex/flex0vf0/table_used"));
	flex_device_unref(dev);
	EXPECT_EQ(0, set_numvfs(0));
}

/* The driver-backed source's info: one query, within the VF's quota. */
TEST(vf_quota_scales_the_default_regions)
{
	struct flex_region_source_info info;
	struct flex_region_source *src;
	struct flex_alloc_region_stats rs;
	struct flex_device *dev;
	struct flex_alloc *a;
	flex_alloc_index_t x;

	ASSERT_EQ(0, set_numvfs(1));
	ASSERT_EQ(0, sysfs_write("/sys/class/flex/flex0vf0/quota_capacity", "16G"));
	ASSERT_EQ(0, flex_device_new("/dev/flex0vf0", &dev));
	ASSERT_EQ(0, flex_region_source_from_device(dev, &src));
	ASSERT_EQ(0, flex_region_source_get_info(src, &info));
	EXPECT_EQ(16 * GiB, info.capacity);
	EXPECT_EQ(16 * GiB, info.free);
	EXPECT_EQ(2 * MiB, info.region_align);
	EXPECT_EQ(8, info.table_entries);
	EXPECT_EQ(0, info.table_used);
	ASSERT_EQ(0, flex_alloc_new(src, NULL, &a)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_alloc_block_alloc(a, 4096, FLEX_ALLOC_TENSOR, &x));
	ASSERT_EQ(0, flex_alloc_get_region_stats(a, 0, &rs));
	EXPECT_EQ(16 * GiB / 64, rs.size);
	ASSERT_EQ(0, flex_region_source_get_info(src, &info));
	EXPECT_EQ(16 * GiB - 16 * GiB / 64, info.free);
	EXPECT_EQ(1, info.table_used);
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
	flex_device_unref(dev);
	EXPECT_EQ(0, set_numvfs(0));
}

TEST(pf_allocator_with_fixed_regions_uses_physical_ids)
{
	struct flex_alloc_config cfg;
	struct flex_region_source *src;
	struct flex_alloc_stats st;
	struct flex_device *dev;
	struct flex_alloc *a;
	flex_alloc_index_t i1, i2;
	struct flex_vaddr v1, v2;
	struct flex_region_info info;

	ASSERT_EQ(0, flex_device_new(FLEX_PF, &dev));
	ASSERT_EQ(0, flex_region_source_from_device(dev, &src));
	flex_alloc_config_init(&cfg);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	cfg.fixed_regions = 2;
	ASSERT_EQ(0, flex_alloc_new(src, &cfg, &a)) TH_LOG("%s", flex_last_error());
	flex_region_source_unref(src);
	/* Fixed regions with the scaled sizes: the largest, a quarter of the device. */
	EXPECT_EQ(2 * (sysfs_num(FLEX_SYSFS "/capacity") / 4), sysfs_num(FLEX_SYSFS "/used"));

	ASSERT_EQ(0, flex_alloc_block_alloc(a, 64 * MiB, FLEX_ALLOC_TENSOR, &i1));
	ASSERT_EQ(0, flex_alloc_block_alloc(a, 64 * MiB, FLEX_ALLOC_TENSOR, &i2));
	ASSERT_EQ(0, flex_alloc_block_resolve(a, i1, &v1, NULL));
	ASSERT_EQ(0, flex_alloc_block_resolve(a, i2, &v2, NULL));
	/* FillFirst packs both into one region, back to back. */
	EXPECT_EQ(v1.region_id, v2.region_id);
	EXPECT_EQ(v1.offset + 64 * MiB, v2.offset);
	/* On the PF the region_id is a physical address sysfs knows. */
	EXPECT_NE(0, v1.region_id);
	EXPECT_EQ(0, v1.region_id % (2 * MiB));
	ASSERT_EQ(0, flex_alloc_get_stats(a, &st));
	EXPECT_EQ(2, st.num_regions);
	EXPECT_EQ(1, st.regions_locked);
	ASSERT_EQ(0, flex_device_region_info(dev, v1.region_id, &info));
	EXPECT_EQ((long long)v1.region_id,
		  sysfs_num(FLEX_SYSFS "/regions/%llu/phys_addr", (unsigned long long)info.handle));
	flex_alloc_destroy(a);
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
	flex_device_unref(dev);
}

/* The functions present, from sysfs, and FLEX_DEVICE choosing one. */
TEST(enumerate_and_select_with_flex_device)
{
	struct flex_device_info d[8];
	struct flex_context *ctx;
	struct flex_alloc_stats st;
	struct flex_device *dev;
	struct flex_query q;
	unsigned int n = 0;

	ASSERT_EQ(0, set_numvfs(2));
	ASSERT_EQ(0, flex_device_enumerate(d, 8, &n));
	ASSERT_EQ(3, n);
	EXPECT_STREQ("flex0", d[0].name);
	EXPECT_STREQ("/dev/flex0", d[0].node);
	EXPECT_EQ(FLEX_MODE_PF, d[0].mode);
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/table_size"), d[0].table_size);
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/capacity"), d[0].capacity);
	EXPECT_STREQ("flex0vf1", d[2].name);
	EXPECT_EQ(FLEX_MODE_VF, d[2].mode);
	EXPECT_EQ(1, d[2].vf_index);
	EXPECT_EQ(8, d[2].table_size);
	EXPECT_EQ(d[0].capacity, d[2].capacity);
	EXPECT_EQ(d[0].capacity, d[2].quota_capacity);
	EXPECT_EQ(0, access(d[2].node, F_OK));

	/* FLEX_DEVICE picks the node (a path or a name), and so the mode. */
	setenv("FLEX_DEVICE", "/dev/flex0vf1", 1);
	ASSERT_EQ(0, flex_device_new(NULL, &dev));
	ASSERT_EQ(0, flex_device_query(dev, &q));
	EXPECT_EQ(FLEX_MODE_VF, q.mode);
	EXPECT_EQ(1, q.vf_index);
	flex_device_unref(dev);
	setenv("FLEX_DEVICE", "flex0vf0", 1);
	ASSERT_EQ(0, flex_context_new_from_path(NULL, &ctx)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_device_query(flex_context_device(ctx), &q));
	EXPECT_EQ(FLEX_MODE_VF, q.mode);
	EXPECT_EQ(0, q.vf_index);
	ASSERT_EQ(0, flex_alloc_get_stats(flex_context_allocator(ctx), &st));
	EXPECT_EQ(8, st.max_regions);
	flex_context_destroy(ctx);
	unsetenv("FLEX_DEVICE");
	ASSERT_EQ(0, flex_device_new(NULL, &dev));
	ASSERT_EQ(0, flex_device_query(dev, &q));
	EXPECT_EQ(FLEX_MODE_PF, q.mode);
	flex_device_unref(dev);
	EXPECT_EQ(0, set_numvfs(0));
	ASSERT_EQ(0, flex_device_enumerate(d, 8, &n));
	EXPECT_EQ(1, n);
}

TEST_HARNESS_MAIN
