/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The flex sysfs files as the tests read and write them: the driver tests
 * (through flex_test.h), the soak and fault lanes (through flex_lane.h)
 * and the fuzzer (tests/fuzz/fuzz.h) all use these.
 */
#ifndef FLEX_SYSFS_H
#define FLEX_SYSFS_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/types.h>

#define FLEX_SYSFS	"/sys/class/flex/flex0"

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

#endif /* FLEX_SYSFS_H */
