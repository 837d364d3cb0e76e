/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the flex driver selftests (run in the VM lane, with the
 * module loaded). Built on the kernel's kselftest_harness.h.
 */
#ifndef FLEX_TEST_H
#define FLEX_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/flex.h>

#define FLEX_PF		"/dev/flex0"
#define FLEX_SYSFS	"/sys/class/flex/flex0"
#define MiB		(1ULL << 20)
#define GiB		(1ULL << 30)

/* ioctl() that returns -errno instead of -1, so ASSERT_EQ shows the errno. */
static inline int flex_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int flex_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static inline int flex_acquire(int fd, __u64 size, struct flex_region_acquire *out)
{
	struct flex_region_acquire a = { .size = size };
	int err = flex_ioctl(fd, FLEX_IOCTL_REGION_ACQUIRE, &a);

	if (!err && out)
		*out = a;
	return err;
}

static inline int flex_release(int fd, __u64 region_id)
{
	struct flex_region_release r = { .region_id = region_id };

	return flex_ioctl(fd, FLEX_IOCTL_REGION_RELEASE, &r);
}

static inline struct flex_query flex_query(int fd)
{
	struct flex_query q = { 0 };

	if (flex_ioctl(fd, FLEX_IOCTL_QUERY, &q))
		memset(&q, 0xff, sizeof(q));
	return q;
}

/* Reads a sysfs file into buf, strips the newline; -errno on failure. */
static inline int sysfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

/* A sysfs number, or -1 when it cannot be read. */
static inline long long sysfs_num(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline long long sysfs_num(const char *fmt, ...)
{
	char path[256], buf[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	if (sysfs_read(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 0);
}

static inline int sysfs_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

static inline int region_dir_exists(__u64 handle)
{
	char path[128];
	struct stat st;

	snprintf(path, sizeof(path), FLEX_SYSFS "/regions/%llu",
		 (unsigned long long)handle);
	return stat(path, &st) == 0;
}

static inline int set_numvfs(unsigned int n)
{
	char v[16];

	snprintf(v, sizeof(v), "%u", n);
	return sysfs_write(FLEX_SYSFS "/sriov_numvfs", v);
}

#endif /* FLEX_TEST_H */
