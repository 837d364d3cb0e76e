/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/device.h - a flex device node and its memory regions.
 *
 * Thin wrappers of the ioctls in <linux/flex.h> (Documentation/flex/uapi.rst
 * describes each call and its errors). Every function returns 0 or a
 * negative errno, the driver's own when the ioctl failed.
 *
 * Regions belong to the open file: closing the device (the last reference)
 * gives back every region still held, and the driver tears down mappings.
 */
#ifndef FLEX_DEVICE_H
#define FLEX_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include <linux/flex.h>
#include <flex/region_source.h>

#ifdef __cplusplus
extern "C" {
#endif

struct flex_device;

/* The node flex_device_new(NULL) opens when FLEX_DEVICE is unset (Since: 1.0). */
#define FLEX_DEVICE_DEFAULT	"/dev/flex0"

/**
 * flex_device_new() - open a device node (/dev/flexN, /dev/flexNvfM).
 * @path:	the node; NULL (Since: 1.0) for the one the environment
 *		variable FLEX_DEVICE names (a path, or a node name such as
 *		"flex0vf1", taken under /dev), else FLEX_DEVICE_DEFAULT: so
 *		FLEX_DEVICE picks the device, and with it PF or VF mode, for a
 *		program that does not choose (flex_device_default_node()).
 * @out:	the device, with one reference.
 *
 * Checks that the node speaks this uapi: FLEX_IOCTL_QUERY must succeed and
 * report FLEX_UAPI_MAJOR.
 *
 * Return: 0; open(2)'s errors (-ENOENT, -EACCES, ...); -ENOTTY if the node
 * is not a flex device; -EPROTO for another uapi major version;
 * -ENAMETOOLONG a FLEX_DEVICE too long for a path; -ENOMEM.
 */
int flex_device_new(const char *path, struct flex_device **out);

/**
 * flex_device_default_node() - the node flex_device_new(NULL) opens.
 * Since: 1.0.
 * @buf, @len:	receives the path.
 * Return: 0; -ENAMETOOLONG if it does not fit in @len.
 */
int flex_device_default_node(char *buf, size_t len);

/**
 * struct flex_device_info - one function of a flex device, as sysfs
 * (/sys/class/flex, Documentation/ABI/testing/sysfs-class-flex) lists it.
 * Since: 1.0.
 * @name:	"flexN" (the PF) or "flexNvfM" (VF M).
 * @node:	its device node, "/dev/" @name.
 * @mode:	FLEX_MODE_PF or FLEX_MODE_VF.
 * @device_index: N.
 * @vf_index:	M; 0 on a PF.
 * @table_size:	lookup-table entries (a PF's region cap).
 * @capacity:	device memory of the device.
 * @quota_capacity: the most the function's regions may hold (capacity
 *		unless the admin lowered it).
 */
struct flex_device_info {
	char name[32];
	char node[48];
	uint32_t mode;
	uint32_t device_index;
	uint32_t vf_index;
	uint32_t table_size;
	uint64_t capacity;
	uint64_t quota_capacity;
};

/**
 * flex_device_enumerate() - the flex functions present, from sysfs:
 * every PF and every enabled VF, by device then PF first then VF index.
 * Opens no device (no permission needed). Since: 1.0.
 * @out:	room for @max entries (may be NULL with @max 0).
 * @count:	out: how many there are (more than @max: only @max filled).
 * Return: 0 (no flex device, or the module not loaded: *@count 0);
 * -ENOMEM.
 */
int flex_device_enumerate(struct flex_device_info *out, unsigned int max, unsigned int *count);

/** flex_device_ref() - take a reference; returns @dev. Since: 1.0. */
struct flex_device *flex_device_ref(struct flex_device *dev);

/**
 * flex_device_unref() - drop a reference; the last one closes the file
 * (which gives back its regions). NULL is ignored.
 *
 * Since: 1.0
 */
void flex_device_unref(struct flex_device *dev);

/** flex_device_fd() - the open file descriptor (owned by @dev). Since: 1.0. */
int flex_device_fd(const struct flex_device *dev);

/** flex_device_query() - FLEX_IOCTL_QUERY: mode, table size, memory. Since: 1.0. */
int flex_device_query(struct flex_device *dev, struct flex_query *out);

/**
 * flex_device_region_acquire() - FLEX_IOCTL_REGION_ACQUIRE.
 * @size:	bytes, a non-zero multiple of flex_query.region_align.
 * @out:	the region: region_id, mmap_offset, handle, lut_index.
 *
 * Return: 0; -EINVAL bad size; -E2BIG larger than the device; -ENOSPC
 * lookup table (or PF region cap) full; -ENOMEM no free range that large.
 *
 * Since: 1.0
 */
int flex_device_region_acquire(struct flex_device *dev, uint64_t size,
			       struct flex_region_acquire *out);

/** flex_device_region_release() - FLEX_IOCTL_REGION_RELEASE (-ENOENT: not ours). Since: 1.0. */
int flex_device_region_release(struct flex_device *dev, uint64_t region_id);

/** flex_device_region_info() - FLEX_IOCTL_REGION_INFO: size, mmap offset, residency. Since: 1.0. */
int flex_device_region_info(struct flex_device *dev, uint64_t region_id,
			    struct flex_region_info *out);

/**
 * flex_device_region_mmap() - map a whole region (MAP_SHARED).
 * @prot:	PROT_READ and/or PROT_WRITE.
 * @addr:	the mapping.
 * @len:	its length (the region size); unmap with munmap(*addr, *len).
 *
 * Return: 0; -EOPNOTSUPP if the device lacks FLEX_CAP_MMAP; the errors of
 * flex_device_region_info() and mmap(2).
 *
 * Since: 1.0
 */
int flex_device_region_mmap(struct flex_device *dev, uint64_t region_id, int prot,
			    void **addr, uint64_t *len);

/**
 * flex_region_source_from_device() - the driver-backed region source.
 * @dev:	the device; the source takes a reference.
 * @out:	the source, with one reference.
 *
 * Sizes asked are rounded up to flex_query.region_align. Region ids are the
 * driver's: the physical address on a PF, the lookup-table index on a VF.
 * Its table_entries is flex_query.table_entries, so an allocator on it
 * never holds more regions than the function's lookup table has. Its info
 * (flex_region_source_get_info(), Since: 1.0) is one FLEX_IOCTL_QUERY
 * (capacity, free, largest free range, region_align, table in use), within
 * the function's quota_capacity when the admin set it below the capacity
 * (then capacity is the quota and free at most the quota less the
 * function's memory_used; both read from sysfs just after the query).
 *
 * Return: 0, the errors of flex_device_query(), -ENOMEM.
 */
int flex_region_source_from_device(struct flex_device *dev, struct flex_region_source **out);

/*
 * Queues (Documentation/flex/uapi.rst): thin wrappers of the queue ioctls,
 * for runtimes and tests. FlexStream (flex/stream.h) builds on them. Each
 * is one ioctl, safe to call from any thread.
 */

/**
 * flex_device_queue_create() - FLEX_IOCTL_QUEUE_CREATE.
 * @priority:	FLEX_QUEUE_PRIO_*.
 * @depth:	CBs the queue holds, 0 for FLEX_QUEUE_DEFAULT_DEPTH.
 * @queue_id:	out.
 * Return: 0; -EINVAL priority or depth; -ENOSPC FLEX_MAX_QUEUES reached.
 *
 * Since: 1.0
 */
int flex_device_queue_create(struct flex_device *dev, uint32_t priority, uint32_t depth,
			     uint32_t *queue_id);

/** flex_device_queue_destroy() - FLEX_IOCTL_QUEUE_DESTROY (cancels what is queued). Since: 1.0. */
int flex_device_queue_destroy(struct flex_device *dev, uint32_t queue_id);

/**
 * flex_device_queue_reset() - FLEX_IOCTL_QUEUE_RESET: clear a sticky fault
 * (-EBUSY: not idle). Since: 1.0.
 */
int flex_device_queue_reset(struct flex_device *dev, uint32_t queue_id);

/**
 * flex_device_submit() - FLEX_IOCTL_SUBMIT: queue @count CBs, all or none.
 * @flags:	FLEX_SUBMIT_BLOCK to wait for room instead of -EAGAIN.
 * @seqno:	if not NULL, the last CB's sequence number.
 * Return: 0 or the driver's errno (-EAGAIN full, -EIO faulted, ...).
 *
 * Since: 1.0
 */
int flex_device_submit(struct flex_device *dev, uint32_t queue_id, const struct flex_cb *cbs,
		       uint32_t count, uint32_t flags, uint64_t *seqno);

/**
 * flex_device_wait() - FLEX_IOCTL_WAIT for CB @seqno.
 * @timeout_ns:	absolute CLOCK_MONOTONIC deadline; 0 polls; -1 waits forever.
 * Return: 0; -ETIMEDOUT; the fault's errno; -EINTR is retried internally.
 *
 * Since: 1.0
 */
int flex_device_wait(struct flex_device *dev, uint32_t queue_id, uint64_t seqno,
		     int64_t timeout_ns);

/** flex_device_queue_status() - FLEX_IOCTL_QUEUE_STATUS: progress and sticky fault. Since: 1.0. */
int flex_device_queue_status(struct flex_device *dev, uint32_t queue_id,
			     struct flex_queue_status *out);

/**
 * flex_device_fence_export() - FLEX_IOCTL_FENCE_EXPORT: a sync_file that
 * signals when CB @seqno completes. @fd: out, owned by the caller.
 *
 * Since: 1.0
 */
int flex_device_fence_export(struct flex_device *dev, uint32_t queue_id, uint64_t seqno,
			     int *fd);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_DEVICE_H */
