// SPDX-License-Identifier: GPL-2.0
/*
 * flex region acquisition on the PF: query, acquire/release, errors of every
 * ioctl argument, capacity and table exhaustion, sysfs regions/, ownership.
 */
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "flex_test.h"

FIXTURE(pf) {
	int fd;
	struct flex_query q;
};

FIXTURE_SETUP(pf)
{
	self->fd = flex_open(FLEX_PF);
	ASSERT_LE(0, self->fd) TH_LOG("open %s: %s", FLEX_PF, strerror(-self->fd));
	self->q = flex_query(self->fd);
	ASSERT_EQ(FLEX_UAPI_MAJOR, self->q.uapi_major);
}

FIXTURE_TEARDOWN(pf)
{
	close(self->fd);
}

TEST_F(pf, query_describes_the_pf)
{
	struct flex_query *q = &self->q;

	EXPECT_EQ(FLEX_UAPI_MINOR, q->uapi_minor);
	EXPECT_EQ(FLEX_MODE_PF, q->mode);
	EXPECT_EQ(0, q->device_index);
	EXPECT_EQ(0, q->vf_index);
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/capacity"), (long long)q->capacity);
	EXPECT_EQ(sysfs_num("/sys/module/flex/parameters/pf_max_regions"),
		  (long long)q->table_entries);
	EXPECT_EQ(0, q->table_used);
	EXPECT_EQ(2 * MiB, q->region_align);
	EXPECT_EQ(q->capacity, q->free);
	EXPECT_EQ(q->capacity, q->largest_free);
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/sriov_totalvfs"), (long long)q->total_vfs);
	EXPECT_NE(0, q->capabilities & FLEX_CAP_MMAP);
	EXPECT_NE(0, q->capabilities & FLEX_CAP_SPARSE_MEMORY);
}

TEST_F(pf, query_rejects_flags)
{
	struct flex_query q = { .flags = 1 };

	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_QUERY, &q));
}

TEST_F(pf, acquire_and_release_rfc_sizes)
{
	static const __u64 sizes[] = { 12 * GiB, 8 * GiB, 4 * GiB };
	struct flex_region_acquire a[3];
	struct flex_query q;
	__u64 used = 0;
	int i;

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, flex_acquire(self->fd, sizes[i], &a[i]));
		used += sizes[i];
		/* PF: the region_id is the physical address, never 0. */
		EXPECT_NE(0, a[i].region_id);
		EXPECT_EQ(0, a[i].region_id % self->q.region_align);
		EXPECT_EQ(FLEX_NO_LUT_INDEX, a[i].lut_index);
		EXPECT_EQ(0, a[i].mmap_offset % 4096);
	}
	q = flex_query(self->fd);
	EXPECT_EQ(3, q.table_used);
	EXPECT_EQ(self->q.capacity - used, q.free);
	EXPECT_EQ((long long)used, sysfs_num(FLEX_SYSFS "/used"));
	EXPECT_NE(a[0].region_id, a[1].region_id);

	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, flex_release(self->fd, a[i].region_id));
	EXPECT_EQ(-ENOENT, flex_release(self->fd, a[0].region_id));
	q = flex_query(self->fd);
	EXPECT_EQ(0, q.table_used);
	EXPECT_EQ(self->q.capacity, q.free);
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
}

TEST_F(pf, acquire_rejects_bad_arguments)
{
	__u64 align = self->q.region_align;
	struct flex_region_acquire a;

	EXPECT_EQ(-EINVAL, flex_acquire(self->fd, 0, NULL));
	EXPECT_EQ(-EINVAL, flex_acquire(self->fd, 4096, NULL));
	EXPECT_EQ(-EINVAL, flex_acquire(self->fd, align + 1, NULL));
	EXPECT_EQ(-EINVAL, flex_acquire(self->fd, align - 128, NULL));
	EXPECT_EQ(-E2BIG, flex_acquire(self->fd, self->q.capacity + align, NULL));
	EXPECT_EQ(-E2BIG, flex_acquire(self->fd, ~(align - 1), NULL));

	a = (struct flex_region_acquire){ .size = align, .flags = 1 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_REGION_ACQUIRE, &a));
	a = (struct flex_region_acquire){ .size = align, .flags = 1U << 31 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_REGION_ACQUIRE, &a));
	a = (struct flex_region_acquire){ .size = align, .pad = 1 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_REGION_ACQUIRE, &a));
	a = (struct flex_region_acquire){ .size = align, .pad2 = 1 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_REGION_ACQUIRE, &a));
	EXPECT_EQ(-EFAULT, flex_ioctl(self->fd, FLEX_IOCTL_REGION_ACQUIRE, (void *)8));

	/* Nothing was taken by any of them. */
	EXPECT_EQ(0, flex_query(self->fd).table_used);
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
}

TEST_F(pf, release_and_info_reject_bad_arguments)
{
	struct flex_region_acquire a;
	struct flex_region_release r;
	struct flex_region_info info;

	ASSERT_EQ(0, flex_acquire(self->fd, self->q.region_align, &a));

	r = (struct flex_region_release){ .region_id = a.region_id, .flags = 1 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_REGION_RELEASE, &r));
	r = (struct flex_region_release){ .region_id = a.region_id, .pad = 1 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_REGION_RELEASE, &r));
	EXPECT_EQ(-ENOENT, flex_release(self->fd, 0));
	EXPECT_EQ(-ENOENT, flex_release(self->fd, a.region_id + 4096));
	EXPECT_EQ(-ENOENT, flex_release(self->fd, a.region_id + self->q.region_align));
	EXPECT_EQ(-ENOENT, flex_release(self->fd, ~0ULL));

	info = (struct flex_region_info){ .region_id = a.region_id, .flags = 2 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_REGION_INFO, &info));
	info = (struct flex_region_info){ .region_id = a.region_id, .pad2 = 2 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_REGION_INFO, &info));
	info = (struct flex_region_info){ .region_id = 12345 };
	EXPECT_EQ(-ENOENT, flex_ioctl(self->fd, FLEX_IOCTL_REGION_INFO, &info));

	info = (struct flex_region_info){ .region_id = a.region_id };
	ASSERT_EQ(0, flex_ioctl(self->fd, FLEX_IOCTL_REGION_INFO, &info));
	EXPECT_EQ(self->q.region_align, info.size);
	EXPECT_EQ(a.mmap_offset, info.mmap_offset);
	EXPECT_EQ(a.handle, info.handle);
	EXPECT_EQ(a.lut_index, info.lut_index);
	EXPECT_EQ(0, info.resident);

	EXPECT_EQ(0, flex_release(self->fd, a.region_id));
}

TEST_F(pf, unknown_ioctls_get_enotty)
{
	struct flex_query q = { 0 };
	char buf[64] = { 0 };

	EXPECT_EQ(-ENOTTY, flex_ioctl(self->fd, _IO(FLEX_IOCTL_BASE, 0x7f), NULL));
	EXPECT_EQ(-ENOTTY, flex_ioctl(self->fd, _IOWR(FLEX_IOCTL_BASE, 0x30, buf), buf));
	EXPECT_EQ(-ENOTTY, flex_ioctl(self->fd, _IOWR('X', 0x00, struct flex_query), &q));
	/* A known number with the wrong direction is not that ioctl. */
	EXPECT_EQ(-ENOTTY, flex_ioctl(self->fd, _IOR(FLEX_IOCTL_BASE, 0x00, struct flex_query), &q));
	EXPECT_EQ(-ENOTTY, flex_ioctl(self->fd, _IOW(FLEX_IOCTL_BASE, 0x01,
						       struct flex_region_acquire), buf));
}

TEST_F(pf, structure_size_extension_rules)
{
	struct {
		struct flex_query q;
		__u64 future[2];
	} big = { 0 };
	__u32 small[2] = { 0, 0 };	/* flags, uapi_major: an older, shorter query */

	/* Newer userspace, unknown tail zero: accepted. */
	EXPECT_EQ(0, flex_ioctl(self->fd, _IOWR(FLEX_IOCTL_BASE, 0x00, big), &big));
	EXPECT_EQ(FLEX_UAPI_MAJOR, big.q.uapi_major);
	EXPECT_EQ(0, big.future[0]);
	/* Unknown tail non-zero: the driver cannot honour it. */
	big.future[1] = 1;
	EXPECT_EQ(-E2BIG, flex_ioctl(self->fd, _IOWR(FLEX_IOCTL_BASE, 0x00, big), &big));
	/* Older userspace: missing fields read as zero, output is truncated. */
	EXPECT_EQ(0, flex_ioctl(self->fd, _IOWR(FLEX_IOCTL_BASE, 0x00, small), small));
	EXPECT_EQ(FLEX_UAPI_MAJOR, small[1]);
}

TEST_F(pf, capacity_exhaustion_gives_enomem)
{
	struct flex_region_acquire all, half;
	__u64 align = self->q.region_align;

	ASSERT_EQ(0, flex_acquire(self->fd, self->q.capacity, &all));
	EXPECT_EQ(0, flex_query(self->fd).free);
	EXPECT_EQ(-ENOMEM, flex_acquire(self->fd, align, NULL));
	ASSERT_EQ(0, flex_release(self->fd, all.region_id));

	/* Fragmented: enough free in total, not contiguous. */
	ASSERT_EQ(0, flex_acquire(self->fd, self->q.capacity / 2, &half));
	ASSERT_EQ(0, flex_acquire(self->fd, align, &all));
	ASSERT_EQ(0, flex_release(self->fd, half.region_id));
	EXPECT_EQ(self->q.capacity - align, flex_query(self->fd).free);
	EXPECT_EQ(self->q.capacity / 2, flex_query(self->fd).largest_free);
	EXPECT_EQ(-ENOMEM, flex_acquire(self->fd, self->q.capacity - align, NULL));
	EXPECT_EQ(0, flex_release(self->fd, all.region_id));
}

TEST_F(pf, region_cap_gives_enospc_and_frees_reuse)
{
	unsigned int n = self->q.table_entries, i;
	__u64 *ids = calloc(n, sizeof(*ids));
	struct flex_region_acquire a;

	ASSERT_NE(NULL, ids);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, flex_acquire(self->fd, self->q.region_align, &a))
			TH_LOG("region %u of %u", i, n);
		ids[i] = a.region_id;
	}
	EXPECT_EQ(-ENOSPC, flex_acquire(self->fd, self->q.region_align, NULL));
	EXPECT_EQ(0, flex_release(self->fd, ids[n / 2]));
	EXPECT_EQ(0, flex_acquire(self->fd, self->q.region_align, &a));
	ids[n / 2] = a.region_id;
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, flex_release(self->fd, ids[i]));
	free(ids);
}

TEST_F(pf, sysfs_shows_each_region)
{
	struct flex_region_acquire a;
	char path[160], buf[64];

	ASSERT_EQ(0, flex_acquire(self->fd, 8 * MiB, &a));
	ASSERT_TRUE(region_dir_exists(a.handle));

#define RPATH(attr) (snprintf(path, sizeof(path), FLEX_SYSFS "/regions/%llu/" attr, \
			      (unsigned long long)a.handle), path)
	EXPECT_EQ(8 * MiB, sysfs_num("%s", RPATH("size")));
	EXPECT_EQ((long long)a.region_id, sysfs_num("%s", RPATH("phys_addr")));
	EXPECT_EQ((long long)a.region_id, sysfs_num("%s", RPATH("region_id")));
	EXPECT_EQ(getpid(), sysfs_num("%s", RPATH("owner_pid")));
	EXPECT_EQ(0, sysfs_num("%s", RPATH("resident")));
	ASSERT_EQ(0, sysfs_read(RPATH("function"), buf, sizeof(buf)));
	EXPECT_STREQ("pf", buf);
	ASSERT_EQ(0, sysfs_read(RPATH("lut_index"), buf, sizeof(buf)));
	EXPECT_STREQ("none", buf);
	ASSERT_EQ(0, sysfs_read(RPATH("owner_comm"), buf, sizeof(buf)));
	EXPECT_STREQ("region_test", buf);
#undef RPATH

	EXPECT_EQ(0, flex_release(self->fd, a.region_id));
	EXPECT_FALSE(region_dir_exists(a.handle));
}

TEST(regions_vanish_when_their_file_closes)
{
	struct flex_region_acquire a, b;
	int fd = flex_open(FLEX_PF);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &a));
	ASSERT_EQ(0, flex_acquire(fd, 4 * MiB, &b));
	EXPECT_TRUE(region_dir_exists(a.handle));
	EXPECT_EQ(6 * MiB, sysfs_num(FLEX_SYSFS "/used"));
	close(fd);
	EXPECT_FALSE(region_dir_exists(a.handle));
	EXPECT_FALSE(region_dir_exists(b.handle));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/table_used"));
}

TEST(regions_vanish_when_their_process_is_killed)
{
	struct flex_region_acquire a;
	int pipefd[2], status;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = flex_open(FLEX_PF);

		if (fd < 0 || flex_acquire(fd, 4 * MiB, &a))
			_exit(1);
		if (write(pipefd[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(sizeof(a), read(pipefd[0], &a, sizeof(a)));
	EXPECT_TRUE(region_dir_exists(a.handle));
	EXPECT_EQ(pid, sysfs_num(FLEX_SYSFS "/regions/%llu/owner_pid",
				 (unsigned long long)a.handle));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_FALSE(region_dir_exists(a.handle));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST(a_file_cannot_touch_another_files_regions)
{
	struct flex_region_acquire a;
	struct flex_region_info info;
	int fd1 = flex_open(FLEX_PF), fd2 = flex_open(FLEX_PF);

	ASSERT_LE(0, fd1);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, flex_acquire(fd1, 2 * MiB, &a));
	info = (struct flex_region_info){ .region_id = a.region_id };
	EXPECT_EQ(-ENOENT, flex_ioctl(fd2, FLEX_IOCTL_REGION_INFO, &info));
	EXPECT_EQ(-ENOENT, flex_release(fd2, a.region_id));
	EXPECT_TRUE(region_dir_exists(a.handle));
	close(fd2);
	EXPECT_TRUE(region_dir_exists(a.handle));
	close(fd1);
	EXPECT_FALSE(region_dir_exists(a.handle));
}

TEST_HARNESS_MAIN
