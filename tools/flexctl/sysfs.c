// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl sysfs access: the attributes of Documentation/ABI/testing/
 * sysfs-class-flex and /sys/module/flex. Paths are relative to
 * c->sysfs_root so that a test can point flexctl at a fake tree.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flexctl.h"

static void vpath(const struct flexctl *c, char *path, size_t len, const char *fmt, va_list ap)
{
	int n = snprintf(path, len, "%s/", c->sysfs_root);

	vsnprintf(path + n, len - n, fmt, ap);
}

int sysfs_read_str(const struct flexctl *c, char *buf, size_t len, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	ssize_t n;
	int fd;

	va_start(ap, fmt);
	vpath(c, path, sizeof(path), fmt, ap);
	va_end(ap);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int sysfs_read_u64(const struct flexctl *c, uint64_t *out, const char *fmt, ...)
{
	char path[512], buf[64], *end;
	va_list ap;
	int err;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	err = sysfs_read_str(c, buf, sizeof(buf), "%s", path);
	if (err)
		return err;
	errno = 0;
	*out = strtoull(buf, &end, 0);
	if (errno || end == buf || *end)
		return -EINVAL;
	return 0;
}

int sysfs_write_str(const struct flexctl *c, const char *val, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	ssize_t n;
	int fd;

	va_start(ap, fmt);
	vpath(c, path, sizeof(path), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	return 0;
}

bool sysfs_exists(const struct flexctl *c, const char *fmt, ...)
{
	char path[512];
	struct stat st;
	va_list ap;

	va_start(ap, fmt);
	vpath(c, path, sizeof(path), fmt, ap);
	va_end(ap);
	return stat(path, &st) == 0;
}

bool flex_module_loaded(const struct flexctl *c)
{
	return sysfs_exists(c, "module/flex");
}

int ctl_need_device(struct flexctl *c, unsigned int dev)
{
	if (!flex_module_loaded(c))
		return ctl_error(c, "the flex module is not loaded (load it with `flexctl load`, "
				 "see `flexctl status`)");
	if (!sysfs_exists(c, "class/flex/flex%u", dev))
		return ctl_error(c, "no flex device %u (%s/class/flex/flex%u does not exist; "
				 "module parameter num_devices)", dev, c->sysfs_root, dev);
	return 0;
}
