// SPDX-License-Identifier: GPL-2.0
/*
 * A flex device node: thin wrappers of the ioctls in <linux/flex.h>, and the
 * region source that feeds FlexAllocator from the driver.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include <flex/device.h>

#include "device_internal.h"
#include "log.h"

#define FLEX_SYSFS_CLASS	"/sys/class/flex"

struct flex_device {
	int fd;
	atomic_uint refs;
	atomic_uint dma_queues;		/* streams' DMA queues, up to FLEX_DMA_QUEUES_MAX */
	char path[256];
};

bool flex_device_dma_queue_take(struct flex_device *dev)
{
	unsigned int n = atomic_load(&dev->dma_queues);

	do {
		if (n >= FLEX_DMA_QUEUES_MAX)
			return false;
	} while (!atomic_compare_exchange_weak(&dev->dma_queues, &n, n + 1));
	return true;
}

void flex_device_dma_queue_give(struct flex_device *dev)
{
	atomic_fetch_sub(&dev->dma_queues, 1);
}

/* ioctl(2) as 0 or -errno; a failure names the ioctl and the node. */
static int flex_ioctl_named(const struct flex_device *dev, unsigned long cmd, const char *name,
			    void *arg)
{
	int err;

	if (ioctl(dev->fd, cmd, arg) == 0)
		return 0;
	err = -errno;
	return flex_error_set(err, "%s on %s: %s", name, dev->path, strerror(-err));
}

#define flex_ioctl(dev, cmd, arg)	flex_ioctl_named(dev, cmd, #cmd, arg)

FLEX_EXPORT int flex_device_default_node(char *buf, size_t len)
{
	const char *env = getenv("FLEX_DEVICE");
	int n;

	if (!env || !*env)
		n = snprintf(buf, len, "%s", FLEX_DEVICE_DEFAULT);
	else if (strchr(env, '/'))
		n = snprintf(buf, len, "%s", env);
	else
		n = snprintf(buf, len, "/dev/%s", env);	/* a node name: "flex0vf1" */
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

FLEX_EXPORT int flex_device_new(const char *path, struct flex_device **out)
{
	struct flex_device *dev;
	struct flex_query q;
	char node[256];
	int err;

	if (!out)
		return flex_error_set(-EINVAL, "flex_device_new: NULL out");
	if (!path) {
		err = flex_device_default_node(node, sizeof(node));
		if (err)
			return flex_error_set(err, "flex_device_new: FLEX_DEVICE names a path longer than %zu bytes",
					      sizeof(node) - 1);
		path = node;
	}
	if (strlen(path) >= sizeof(dev->path))
		return flex_error_set(-ENAMETOOLONG, "flex_device_new: path longer than %zu bytes",
				      sizeof(dev->path) - 1);
	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return flex_error_set(-ENOMEM, "flex_device_new: out of host memory");
	atomic_init(&dev->refs, 1);
	strcpy(dev->path, path);
	dev->fd = open(path, O_RDWR | O_CLOEXEC);
	if (dev->fd < 0) {
		err = -errno;
		free(dev);
		return flex_error_set(err, "open %s: %s", path, strerror(-err));
	}
	err = flex_device_query(dev, &q);
	if (!err && q.uapi_major != FLEX_UAPI_MAJOR)
		err = flex_error_set(-EPROTO, "%s speaks flex uapi %u, libflex %u", path,
				     q.uapi_major, FLEX_UAPI_MAJOR);
	if (err == -EINVAL || err == -ENOTTY)	/* some other device, or not a device at all */
		err = flex_error_set(-ENOTTY, "%s is not a flex device", path);
	if (err) {
		close(dev->fd);
		free(dev);
		return err;
	}
	*out = dev;
	return 0;
}

FLEX_EXPORT struct flex_device *flex_device_ref(struct flex_device *dev)
{
	atomic_fetch_add(&dev->refs, 1);
	return dev;
}

FLEX_EXPORT void flex_device_unref(struct flex_device *dev)
{
	if (!dev || atomic_fetch_sub(&dev->refs, 1) != 1)
		return;
	close(dev->fd);
	free(dev);
}

FLEX_EXPORT int flex_device_fd(const struct flex_device *dev)
{
	return dev->fd;
}

FLEX_EXPORT int flex_device_query(struct flex_device *dev, struct flex_query *out)
{
	memset(out, 0, sizeof(*out));
	return flex_ioctl(dev, FLEX_IOCTL_QUERY, out);
}

FLEX_EXPORT int flex_device_region_acquire(struct flex_device *dev, uint64_t size,
					   struct flex_region_acquire *out)
{
	memset(out, 0, sizeof(*out));
	out->size = size;
	return flex_ioctl(dev, FLEX_IOCTL_REGION_ACQUIRE, out);
}

FLEX_EXPORT int flex_device_region_release(struct flex_device *dev, uint64_t region_id)
{
	struct flex_region_release rel = { .region_id = region_id };

	return flex_ioctl(dev, FLEX_IOCTL_REGION_RELEASE, &rel);
}

FLEX_EXPORT int flex_device_region_info(struct flex_device *dev, uint64_t region_id,
					struct flex_region_info *out)
{
	memset(out, 0, sizeof(*out));
	out->region_id = region_id;
	return flex_ioctl(dev, FLEX_IOCTL_REGION_INFO, out);
}

FLEX_EXPORT int flex_device_region_mmap(struct flex_device *dev, uint64_t region_id, int prot,
					void **addr, uint64_t *len)
{
	struct flex_region_info info;
	struct flex_query q;
	void *p;
	int err;

	err = flex_device_query(dev, &q);
	if (err)
		return err;
	if (!(q.capabilities & FLEX_CAP_MMAP))
		return flex_error_set(-EOPNOTSUPP, "%s: the device has no mmap-able regions",
				      dev->path);
	err = flex_device_region_info(dev, region_id, &info);
	if (err)
		return err;
	if (info.size > SIZE_MAX || info.mmap_offset > (uint64_t)INT64_MAX)
		return flex_error_set(-EOVERFLOW, "%s: region %llu does not fit the address space",
				      dev->path, (unsigned long long)region_id);
	p = mmap(NULL, (size_t)info.size, prot, MAP_SHARED, dev->fd, (off_t)info.mmap_offset);
	if (p == MAP_FAILED) {
		err = -errno;
		return flex_error_set(err, "mmap of region %llu of %s: %s",
				      (unsigned long long)region_id, dev->path, strerror(-err));
	}
	*addr = p;
	*len = info.size;
	return 0;
}

/* ---- enumeration ---- */

/* One decimal value from a sysfs file. Return: 0 or -errno. */
static int sysfs_u64(const char *dir, const char *attr, uint64_t *out)
{
	char path[640], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, attr);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	*out = strtoull(buf, NULL, 10);
	return 0;
}

/* "flexN" or "flexNvfM", nothing more: 1 and the numbers, else 0. */
static int parse_name(const char *name, struct flex_device_info *d)
{
	unsigned int dev, vf;
	int n = -1;

	if (sscanf(name, "flex%u%n", &dev, &n) == 1 && n > 0 && !name[n]) {
		d->mode = FLEX_MODE_PF;
		d->device_index = dev;
		d->vf_index = 0;
		return 1;
	}
	n = -1;
	if (sscanf(name, "flex%uvf%u%n", &dev, &vf, &n) == 2 && n > 0 && !name[n]) {
		d->mode = FLEX_MODE_VF;
		d->device_index = dev;
		d->vf_index = vf;
		return 1;
	}
	return 0;
}

static int by_function(const void *x, const void *y)
{
	const struct flex_device_info *a = x, *b = y;

	if (a->device_index != b->device_index)
		return a->device_index < b->device_index ? -1 : 1;
	if (a->mode != b->mode)
		return a->mode == FLEX_MODE_PF ? -1 : 1;
	return (a->vf_index > b->vf_index) - (a->vf_index < b->vf_index);
}

int flex_device_enumerate_at(const char *class_dir, struct flex_device_info *out, unsigned int max,
			unsigned int *count)
{
	struct flex_device_info *all = NULL, d;
	unsigned int n = 0, cap = 0;
	struct dirent *e;
	char dir[512];
	uint64_t v;
	DIR *cls;

	*count = 0;
	cls = opendir(class_dir);
	if (!cls)
		return 0;	/* no flex device (or no module) */
	while ((e = readdir(cls))) {
		size_t len = strlen(e->d_name);

		memset(&d, 0, sizeof(d));
		if (len >= sizeof(d.name) || !parse_name(e->d_name, &d))
			continue;
		memcpy(d.name, e->d_name, len + 1);
		memcpy(d.node, "/dev/", 5);
		memcpy(d.node + 5, d.name, len + 1);	/* 5 + 32 fit in 48 */
		snprintf(dir, sizeof(dir), "%s/%s", class_dir, e->d_name);
		if (!sysfs_u64(dir, "table_size", &v))
			d.table_size = (uint32_t)v;
		sysfs_u64(dir, "quota_capacity", &d.quota_capacity);
		snprintf(dir, sizeof(dir), "%s/flex%u", class_dir, d.device_index);
		sysfs_u64(dir, "capacity", &d.capacity);	/* the device's, in the PF's directory */
		if (n == cap) {
			struct flex_device_info *p = realloc(all, (cap ? 2 * cap : 8) * sizeof(*p));

			if (!p) {
				free(all);
				closedir(cls);
				return flex_error_set(-ENOMEM, "flex_device_enumerate: out of host memory");
			}
			all = p;
			cap = cap ? 2 * cap : 8;
		}
		all[n++] = d;
	}
	closedir(cls);
	if (n)
		qsort(all, n, sizeof(*all), by_function);
	for (unsigned int i = 0; i < n && i < max; i++)
		out[i] = all[i];
	free(all);
	*count = n;
	return 0;
}

FLEX_EXPORT int flex_device_enumerate(struct flex_device_info *out, unsigned int max,
				      unsigned int *count)
{
	return flex_device_enumerate_at(FLEX_SYSFS_CLASS, out, max, count);
}

/* ---- queues ---- */

FLEX_EXPORT int flex_device_queue_create(struct flex_device *dev, uint32_t priority,
					 uint32_t depth, uint32_t *queue_id)
{
	struct flex_queue_create c = { .priority = priority, .depth = depth };
	int err = flex_ioctl(dev, FLEX_IOCTL_QUEUE_CREATE, &c);

	if (!err)
		*queue_id = c.queue_id;
	return err;
}

FLEX_EXPORT int flex_device_queue_destroy(struct flex_device *dev, uint32_t queue_id)
{
	struct flex_queue_op op = { .queue_id = queue_id };

	return flex_ioctl(dev, FLEX_IOCTL_QUEUE_DESTROY, &op);
}

FLEX_EXPORT int flex_device_queue_reset(struct flex_device *dev, uint32_t queue_id)
{
	struct flex_queue_op op = { .queue_id = queue_id };

	return flex_ioctl(dev, FLEX_IOCTL_QUEUE_RESET, &op);
}

FLEX_EXPORT int flex_device_submit(struct flex_device *dev, uint32_t queue_id,
				   const struct flex_cb *cbs, uint32_t count, uint32_t flags,
				   uint64_t *seqno)
{
	struct flex_submit sub = {
		.cbs_ptr = (uint64_t)(uintptr_t)cbs, .count = count,
		.queue_id = queue_id, .flags = flags,
	};
	int err;

	do
		err = flex_ioctl(dev, FLEX_IOCTL_SUBMIT, &sub);
	while (err == -EINTR);
	if (!err && seqno)
		*seqno = sub.seqno;
	return err;
}

FLEX_EXPORT int flex_device_wait(struct flex_device *dev, uint32_t queue_id, uint64_t seqno,
				 int64_t timeout_ns)
{
	struct flex_wait w = {
		.queue_id = queue_id, .seqno = seqno,
		.timeout_ns = timeout_ns < 0 ? INT64_MAX : timeout_ns,
	};
	int err;

	do
		err = flex_ioctl(dev, FLEX_IOCTL_WAIT, &w);
	while (err == -EINTR);
	return err;
}

FLEX_EXPORT int flex_device_queue_status(struct flex_device *dev, uint32_t queue_id,
					 struct flex_queue_status *out)
{
	memset(out, 0, sizeof(*out));
	out->queue_id = queue_id;
	return flex_ioctl(dev, FLEX_IOCTL_QUEUE_STATUS, out);
}

FLEX_EXPORT int flex_device_fence_export(struct flex_device *dev, uint32_t queue_id,
					 uint64_t seqno, int *fd)
{
	struct flex_fence_export f = { .queue_id = queue_id, .seqno = seqno };
	int err = flex_ioctl(dev, FLEX_IOCTL_FENCE_EXPORT, &f);

	if (!err)
		*fd = f.fd;
	return err;
}

/* ---- the driver-backed region source ---- */

struct device_source {
	struct flex_device *dev;
	uint64_t align;		/* flex_query.region_align */
};

static int device_acquire(void *user, uint64_t size, struct flex_region *out)
{
	struct device_source *s = user;
	struct flex_region_acquire acq;
	int err;

	if (size > UINT64_MAX - (s->align - 1))
		return flex_error_set(-E2BIG, "%s: a region of %llu bytes cannot be aligned",
				      s->dev->path, (unsigned long long)size);
	size = (size + s->align - 1) & ~(s->align - 1);
	err = flex_device_region_acquire(s->dev, size, &acq);
	if (err)
		return err;
	out->region_id = acq.region_id;
	out->size = size;
	return 0;
}

static int device_release(void *user, const struct flex_region *region)
{
	struct device_source *s = user;

	return flex_device_region_release(s->dev, region->region_id);
}

/* The function's sysfs directory (Documentation/ABI/testing/sysfs-class-flex). */
static void sysfs_dir(const struct flex_query *q, char *buf, size_t len)
{
	if (q->mode == FLEX_MODE_VF)
		snprintf(buf, len, FLEX_SYSFS_CLASS "/flex%uvf%u", q->device_index, q->vf_index);
	else
		snprintf(buf, len, FLEX_SYSFS_CLASS "/flex%u", q->device_index);
}

/*
 * FLEX_IOCTL_QUERY's one snapshot of the device's memory, within the
 * function's quota_capacity (sysfs, read right after, with what the
 * function's regions hold: memory_used) when the admin set one below the
 * capacity.
 */
static int device_info(void *user, struct flex_region_source_info *out)
{
	struct device_source *s = user;
	uint64_t quota, used;
	struct flex_query q;
	char dir[96];
	int err;

	err = flex_device_query(s->dev, &q);
	if (err)
		return err;
	out->capacity = q.capacity;
	out->free = q.free;
	out->largest_free = q.largest_free;
	out->region_align = q.region_align;
	out->table_used = q.table_used;
	sysfs_dir(&q, dir, sizeof(dir));
	if (!sysfs_u64(dir, "quota_capacity", &quota) && quota < q.capacity &&
	    !sysfs_u64(dir, "memory_used", &used)) {
		out->capacity = quota;
		used = used < quota ? quota - used : 0;
		if (used < out->free)
			out->free = used;
	}
	return 0;
}

static void device_destroy(void *user)
{
	struct device_source *s = user;

	flex_device_unref(s->dev);
	free(s);
}

FLEX_EXPORT int flex_region_source_from_device(struct flex_device *dev,
					       struct flex_region_source **out)
{
	static const struct flex_region_source_ops ops = {
		.acquire = device_acquire,
		.release = device_release,
		.destroy = device_destroy,
		.info = device_info,
	};
	struct device_source *s;
	struct flex_query q;
	int err;

	err = flex_device_query(dev, &q);
	if (err)
		return err;
	/* The uapi promises a power of two; anything else is a broken driver. */
	if (!q.region_align || (q.region_align & (q.region_align - 1)))
		return flex_error_set(-EPROTO, "%s: region alignment %llu is not a power of two",
				      dev->path, (unsigned long long)q.region_align);
	s = calloc(1, sizeof(*s));
	if (!s)
		return flex_error_set(-ENOMEM, "flex_region_source_from_device: out of host memory");
	s->dev = flex_device_ref(dev);
	s->align = q.region_align;
	err = flex_region_source_new(&ops, s, q.table_entries, out);
	if (err)
		device_destroy(s);
	return err;
}
