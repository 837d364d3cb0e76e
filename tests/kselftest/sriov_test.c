// SPDX-License-Identifier: GPL-2.0
/*
 * flex SR-IOV: the sriov_* attribute rules, VF device nodes, VF lookup
 * tables (exhaustion, reuse, sharing between openers) and isolation
 * between two VFs.
 */
#include <sys/mman.h>

#include "kselftest_harness.h"
#include "flex_test.h"

#define VF0 "/dev/flex0vf0"
#define VF1 "/dev/flex0vf1"

static int path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

TEST(sriov_attribute_rules)
{
	long long total = sysfs_num(FLEX_SYSFS "/sriov_totalvfs");
	char v[24];
	struct stat st;

	ASSERT_LE(2, total) TH_LOG("these tests need total_vfs >= 2");
	ASSERT_EQ(0, stat(FLEX_SYSFS "/sriov_totalvfs", &st));
	EXPECT_EQ(0444, st.st_mode & 0777);
	ASSERT_EQ(0, stat(FLEX_SYSFS "/sriov_numvfs", &st));
	EXPECT_EQ(0644, st.st_mode & 0777);
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/sriov_numvfs"));
	EXPECT_FALSE(path_exists(VF0));

	snprintf(v, sizeof(v), "%lld", total + 1);
	EXPECT_EQ(-ERANGE, sysfs_write(FLEX_SYSFS "/sriov_numvfs", v));
	EXPECT_EQ(-EINVAL, sysfs_write(FLEX_SYSFS "/sriov_numvfs", "two"));
	EXPECT_EQ(-EINVAL, sysfs_write(FLEX_SYSFS "/sriov_numvfs", "-1"));

	ASSERT_EQ(0, set_numvfs(2));
	EXPECT_EQ(2, sysfs_num(FLEX_SYSFS "/sriov_numvfs"));
	EXPECT_TRUE(path_exists(VF0));
	EXPECT_TRUE(path_exists(VF1));
	EXPECT_FALSE(path_exists("/dev/flex0vf2"));
	EXPECT_TRUE(path_exists(FLEX_SYSFS "/virtfn1"));
	EXPECT_TRUE(path_exists("/sys/class/flex/flex0vf1/physfn/sriov_numvfs"));
	/* Non-zero to another non-zero count must go through 0. */
	EXPECT_EQ(-EBUSY, set_numvfs(1));
	EXPECT_EQ(0, set_numvfs(2));
	EXPECT_EQ(0, set_numvfs(0));
	EXPECT_FALSE(path_exists(VF0));
	EXPECT_FALSE(path_exists(FLEX_SYSFS "/virtfn0"));
	EXPECT_EQ(0, set_numvfs(1));
	EXPECT_EQ(0, set_numvfs(0));
}

TEST(disabling_while_a_vf_is_open_is_refused)
{
	int fd;

	ASSERT_EQ(0, set_numvfs(2));
	fd = flex_open(VF1);
	ASSERT_LE(0, fd);
	EXPECT_EQ(-EBUSY, set_numvfs(0));
	EXPECT_EQ(2, sysfs_num(FLEX_SYSFS "/sriov_numvfs"));
	close(fd);
	EXPECT_EQ(0, set_numvfs(0));
}

FIXTURE(vfs) {
	int vf0, vf1;
	struct flex_query q0;
};

FIXTURE_SETUP(vfs)
{
	ASSERT_EQ(0, set_numvfs(2));
	self->vf0 = flex_open(VF0);
	self->vf1 = flex_open(VF1);
	ASSERT_LE(0, self->vf0);
	ASSERT_LE(0, self->vf1);
	self->q0 = flex_query(self->vf0);
}

FIXTURE_TEARDOWN(vfs)
{
	close(self->vf0);
	close(self->vf1);
	EXPECT_EQ(0, set_numvfs(0));
}

TEST_F(vfs, query_describes_the_vf)
{
	struct flex_query q1 = flex_query(self->vf1);

	EXPECT_EQ(FLEX_MODE_VF, self->q0.mode);
	EXPECT_EQ(0, self->q0.vf_index);
	EXPECT_EQ(1, q1.vf_index);
	EXPECT_EQ(sysfs_num("/sys/module/flex/parameters/lut_entries"),
		  (long long)self->q0.table_entries);
	EXPECT_EQ(0, self->q0.capabilities & FLEX_CAP_SRIOV);
	EXPECT_EQ(2, self->q0.num_vfs);
}

TEST_F(vfs, region_ids_are_table_indices_and_exhaustion_gives_enospc)
{
	unsigned int n = self->q0.table_entries, i;
	struct flex_region_acquire a;
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, flex_acquire(self->vf0, 2 * MiB, &a));
		EXPECT_EQ(i, a.region_id);
		EXPECT_EQ(i, a.lut_index);
	}
	EXPECT_EQ(n, flex_query(self->vf0).table_used);
	EXPECT_EQ(-ENOSPC, flex_acquire(self->vf0, 2 * MiB, NULL));
	/* The other VF has a table of its own. */
	ASSERT_EQ(0, flex_acquire(self->vf1, 2 * MiB, &a));
	EXPECT_EQ(0, a.region_id);

	/* A freed entry is the one reused. */
	EXPECT_EQ(0, flex_release(self->vf0, 3));
	EXPECT_EQ(-ENOENT, flex_release(self->vf0, 3));
	EXPECT_EQ(-ENOENT, flex_release(self->vf0, n));
	ASSERT_EQ(0, flex_acquire(self->vf0, 2 * MiB, &a));
	EXPECT_EQ(3, a.region_id);

	EXPECT_EQ(n, sysfs_num("/sys/class/flex/flex0vf0/table_used"));
	EXPECT_EQ(n, sysfs_num("/sys/class/flex/flex0vf0/table_size"));
}

TEST_F(vfs, openers_of_one_vf_share_its_table)
{
	unsigned int n = self->q0.table_entries, i;
	int again = flex_open(VF0);

	ASSERT_LE(0, again);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, flex_acquire(i % 2 ? again : self->vf0, 2 * MiB, NULL));
	EXPECT_EQ(-ENOSPC, flex_acquire(again, 2 * MiB, NULL));
	EXPECT_EQ(-ENOSPC, flex_acquire(self->vf0, 2 * MiB, NULL));
	/* Entry 1 belongs to the second opener: only it can release it. */
	EXPECT_EQ(-ENOENT, flex_release(self->vf0, 1));
	close(again);
	EXPECT_EQ(n / 2 + n % 2, flex_query(self->vf0).table_used);
	EXPECT_EQ(0, flex_acquire(self->vf0, 2 * MiB, NULL));
}

TEST_F(vfs, sysfs_and_debugfs_show_vf_regions)
{
	struct flex_region_acquire a;
	char path[160], buf[4096];

	ASSERT_EQ(0, flex_acquire(self->vf1, 6 * MiB, NULL));
	ASSERT_EQ(0, flex_acquire(self->vf1, 4 * MiB, &a));
	EXPECT_EQ(1, a.region_id);
	snprintf(path, sizeof(path), FLEX_SYSFS "/regions/%llu/function",
		 (unsigned long long)a.handle);
	ASSERT_EQ(0, sysfs_read(path, buf, sizeof(buf)));
	EXPECT_STREQ("vf1", buf);
	EXPECT_EQ(1, sysfs_num(FLEX_SYSFS "/regions/%llu/lut_index",
			       (unsigned long long)a.handle));
	EXPECT_EQ(4 * MiB, sysfs_num(FLEX_SYSFS "/regions/%llu/size",
				     (unsigned long long)a.handle));
	EXPECT_EQ(2, sysfs_num("/sys/class/flex/flex0vf1/table_used"));
	EXPECT_EQ(10 * MiB, sysfs_num(FLEX_SYSFS "/used"));

	ASSERT_EQ(0, sysfs_read("/sys/kernel/debug/flex/flex0/vf1/table", buf, sizeof(buf)));
	EXPECT_NE(NULL, strstr(buf, "2 of 8 entries used")) TH_LOG("table:\n%s", buf);
	snprintf(path, sizeof(path), "\n0x1 0x%llx %llu %llu ",
		 (unsigned long long)sysfs_num(FLEX_SYSFS "/regions/%llu/phys_addr",
					       (unsigned long long)a.handle),
		 4 * MiB, (unsigned long long)a.handle);
	EXPECT_NE(NULL, strstr(buf, path)) TH_LOG("no '%s' in:\n%s", path + 1, buf);
}

TEST_F(vfs, two_vfs_cannot_see_or_map_each_others_regions)
{
	struct flex_region_acquire a0, a1;
	struct flex_region_info info;
	unsigned int *p0, *p1;
	size_t i, nonzero = 0;
	int pf;

	ASSERT_EQ(0, flex_acquire(self->vf0, 2 * MiB, &a0));
	ASSERT_EQ(0, flex_acquire(self->vf1, 2 * MiB, &a1));
	/* Same region_id, different memory. */
	EXPECT_EQ(a0.region_id, a1.region_id);
	EXPECT_NE(a0.handle, a1.handle);

	p0 = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, self->vf0, a0.mmap_offset);
	ASSERT_NE(MAP_FAILED, p0);
	for (i = 0; i < 2 * MiB / sizeof(*p0); i++)
		p0[i] = 0x5eed0000 | i;

	/* vf1 cannot map vf0's region, by its offset, through its own node. */
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->vf1, a0.mmap_offset));
	EXPECT_EQ(EACCES, errno);
	/* Its own region with the same region_id holds none of vf0's data. */
	p1 = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, self->vf1, a1.mmap_offset);
	ASSERT_NE(MAP_FAILED, p1);
	for (i = 0; i < 2 * MiB / sizeof(*p1); i++)
		nonzero += p1[i] != 0;
	EXPECT_EQ(0, nonzero);

	/* Releasing "its" id 0 releases vf1's own region, never vf0's. */
	EXPECT_EQ(0, flex_release(self->vf1, a1.region_id));
	info = (struct flex_region_info){ .region_id = a0.region_id };
	EXPECT_EQ(0, flex_ioctl(self->vf0, FLEX_IOCTL_REGION_INFO, &info));
	EXPECT_EQ(2 * MiB, info.resident);
	EXPECT_EQ(0x5eed0007, p0[7]);
	/* Nor can the PF reach into a VF's region. */
	pf = flex_open(FLEX_PF);
	ASSERT_LE(0, pf);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, 4096, PROT_READ, MAP_SHARED, pf, a0.mmap_offset));
	EXPECT_EQ(-ENOENT, flex_release(pf, a0.region_id));
	close(pf);
	munmap(p0, 2 * MiB);
	munmap(p1, 2 * MiB);
}

TEST_HARNESS_MAIN
