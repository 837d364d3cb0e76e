// SPDX-License-Identifier: GPL-2.0
/*
 * flex mmap-able region area: data written through one mapping is read
 * through another, untouched memory reads as zeros, released regions are
 * unmapped and scrubbed, bounds and ownership are enforced, and backing
 * past the cap faults without hurting the kernel.
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "flex_test.h"

#define PAGE 4096UL

FIXTURE(region) {
	int fd;
	struct flex_region_acquire a;
	size_t size;
};

FIXTURE_SETUP(region)
{
	self->fd = flex_open(FLEX_PF);
	ASSERT_LE(0, self->fd);
	self->size = 4 * MiB;
	ASSERT_EQ(0, flex_acquire(self->fd, self->size, &self->a));
}

FIXTURE_TEARDOWN(region)
{
	close(self->fd);
}

static void *map(int fd, size_t len, __u64 offset)
{
	return mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, offset);
}

/* Runs fn(arg) in a child; returns the signal that killed it, or 0. */
static int child_signal(void (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

static void touch_byte(void *p)
{
	*(volatile char *)p = 1;
}

TEST_F(region, write_then_read_back_through_a_second_mapping)
{
	unsigned int *w, *r, *part;
	size_t i, n = self->size / sizeof(*w);

	w = map(self->fd, self->size, self->a.mmap_offset);
	ASSERT_NE(MAP_FAILED, w);
	for (i = 0; i < n; i++)
		w[i] = i * 2654435761u;

	r = map(self->fd, self->size, self->a.mmap_offset);
	ASSERT_NE(MAP_FAILED, r);
	ASSERT_NE(w, r);
	for (i = 0; i < n; i++)
		if (r[i] != (unsigned int)(i * 2654435761u))
			break;
	EXPECT_EQ(n, i) TH_LOG("first mismatch at word %zu", i);

	/* A page-aligned part of the region maps its own bytes. */
	part = map(self->fd, MiB, self->a.mmap_offset + MiB);
	ASSERT_NE(MAP_FAILED, part);
	EXPECT_EQ(w[MiB / sizeof(*w)], part[0]);
	part[1] = 0xdeadbeef;
	EXPECT_EQ(0xdeadbeef, r[MiB / sizeof(*w) + 1]);

	EXPECT_EQ((long long)self->size,
		  sysfs_num(FLEX_SYSFS "/regions/%llu/resident",
			    (unsigned long long)self->a.handle));
	munmap(part, MiB);
	munmap(r, self->size);
	munmap(w, self->size);
}

TEST_F(region, untouched_memory_reads_zero_and_backs_only_touched_pages)
{
	struct flex_region_info info = { .region_id = self->a.region_id };
	unsigned char *p = map(self->fd, self->size, self->a.mmap_offset);
	size_t i, nonzero = 0;

	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < 3; i++)
		nonzero += p[i * 64 * PAGE];
	EXPECT_EQ(0, nonzero);
	ASSERT_EQ(0, flex_ioctl(self->fd, FLEX_IOCTL_REGION_INFO, &info));
	EXPECT_EQ(3 * PAGE, info.resident);
	munmap(p, self->size);
}

TEST_F(region, a_released_region_is_scrubbed_before_reuse)
{
	struct flex_region_acquire b;
	unsigned char *p = map(self->fd, self->size, self->a.mmap_offset);
	unsigned char *stale;
	size_t i, nonzero = 0;

	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0xa5, self->size);
	/* A mapping kept across the release: it must not reach the next region. */
	stale = p;
	ASSERT_EQ(0, flex_release(self->fd, self->a.region_id));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/resident"));

	ASSERT_EQ(0, flex_acquire(self->fd, self->size, &b));
	/*
	 * gen_pool is first fit: the same device memory comes back, and with
	 * it the same mmap offset (offsets follow device memory).
	 */
	EXPECT_EQ(self->a.region_id, b.region_id);
	EXPECT_EQ(self->a.mmap_offset, b.mmap_offset);
	p = map(self->fd, self->size, b.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	for (i = 0; i < self->size; i += 512)
		nonzero += p[i] != 0;
	EXPECT_EQ(0, nonzero);
	p[0] = 0x3c;
	EXPECT_EQ(SIGBUS, child_signal(touch_byte, stale))
		TH_LOG("a mapping of the released region reached its successor");
	munmap(p, self->size);
	munmap(stale, self->size);
}

TEST_F(region, release_unmaps_and_later_access_faults)
{
	char *p = map(self->fd, self->size, self->a.mmap_offset);

	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;
	ASSERT_EQ(0, flex_release(self->fd, self->a.region_id));
	EXPECT_EQ(SIGBUS, child_signal(touch_byte, p));
	EXPECT_EQ(SIGBUS, child_signal(touch_byte, p + self->size - 1));
	EXPECT_EQ(0, munmap(p, self->size));
}

TEST_F(region, mmap_bounds_are_refused)
{
	__u64 off = self->a.mmap_offset;

	EXPECT_EQ(MAP_FAILED, map(self->fd, self->size + PAGE, off));
	EXPECT_EQ(EINVAL, errno);
	/* Past the region's end the offset names no region of this file. */
	EXPECT_EQ(MAP_FAILED, map(self->fd, PAGE, off + self->size));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(MAP_FAILED, map(self->fd, 2 * PAGE, off + self->size - PAGE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(MAP_FAILED, mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE, self->fd, off));
	EXPECT_EQ(EINVAL, errno);
	/* Offsets that name no region of this file. */
	EXPECT_EQ(MAP_FAILED, map(self->fd, PAGE, 0));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(MAP_FAILED, map(self->fd, PAGE, off + (1ULL << 40)));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(MAP_FAILED, map(self->fd, PAGE, 0x7fffffffff000ULL));
	EXPECT_EQ(EACCES, errno);
}

TEST_F(region, mappings_cannot_grow)
{
	void *p = map(self->fd, self->size, self->a.mmap_offset);

	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(MAP_FAILED, mremap(p, self->size, 2 * self->size, MREMAP_MAYMOVE));
	EXPECT_EQ(0, munmap(p, self->size));
}

TEST_F(region, another_files_region_cannot_be_mapped)
{
	int other = flex_open(FLEX_PF);

	ASSERT_LE(0, other);
	EXPECT_EQ(MAP_FAILED, map(other, PAGE, self->a.mmap_offset));
	EXPECT_EQ(EACCES, errno);
	close(other);
}

TEST_F(region, a_forked_child_shares_the_mapping)
{
	volatile unsigned int *p = map(self->fd, self->size, self->a.mmap_offset);
	int status;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, p);
	p[0] = 1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		p[1] = p[0] + 41;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(42, p[1]);
	munmap((void *)p, self->size);
}

struct touch_all {
	char *p;
	size_t len;
	volatile size_t *done;	/* shared with the parent: bytes touched */
};

static void touch_pages_reporting(void *arg)
{
	struct touch_all *t = arg;
	size_t off;

	for (off = 0; off < t->len; off += PAGE) {
		t->p[off] = 1;
		*t->done = off + PAGE;
	}
}

TEST(backing_past_the_cap_faults_and_the_kernel_stays_healthy)
{
	long long cap = sysfs_num(FLEX_SYSFS "/backing_cap");
	struct flex_region_acquire a;
	size_t last;
	struct touch_all t;
	size_t len;
	int fd;

	ASSERT_LT(0, cap);
	if (cap > 256 * (long long)MiB)
		SKIP(return, "backing_cap %lld too large to exhaust here (load with backing_cap=64M)", cap);
	len = ((cap + 2 * MiB) / (2 * MiB) + 1) * 2 * MiB;

	fd = flex_open(FLEX_PF);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, len, &a));
	t.p = map(fd, len, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, t.p);
	t.done = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, t.done);
	t.len = len;
	EXPECT_EQ(SIGBUS, child_signal(touch_pages_reporting, &t));
	last = *t.done;
	/* Exactly the cap was backed, then the next touch faulted. */
	EXPECT_EQ(cap, (long long)last);
	EXPECT_EQ(cap, sysfs_num(FLEX_SYSFS "/resident"));

	munmap(t.p, len);
	EXPECT_EQ(0, flex_release(fd, a.region_id));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/resident"));
	/* And backing works again. */
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &a));
	t.p = map(fd, 2 * MiB, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, t.p);
	t.p[0] = 7;
	EXPECT_EQ(7, t.p[0]);
	munmap(t.p, 2 * MiB);
	close(fd);
}

TEST_HARNESS_MAIN
