/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * flex: the userspace API of the flex accelerator memory and execution device.
 *
 * Every device node (/dev/flexN for a physical function, /dev/flexNvfM for a
 * virtual function) accepts the ioctls below. The rules, which the driver
 * enforces on every call:
 *
 *  - Structures are fixed-size, built of __u32/__u64 with explicit padding.
 *    Padding and every flag bit not defined here must be zero (-EINVAL).
 *  - The structure size is encoded in the ioctl number. The driver accepts a
 *    smaller structure from older userspace (missing fields read as zero) and
 *    a larger one from newer userspace as long as the bytes it does not know
 *    are zero (-E2BIG otherwise), like copy_struct_from_user() does.
 *  - "out" fields are ignored on input and written on success.
 *  - User pointers are passed as __u64.
 *  - An ioctl number the driver does not know gets -ENOTTY.
 *
 * Documentation/flex/uapi.rst describes each call with its errors.
 */
#ifndef _UAPI_LINUX_FLEX_H
#define _UAPI_LINUX_FLEX_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define FLEX_UAPI_MAJOR		1	/* incompatible changes */
#define FLEX_UAPI_MINOR		0	/* compatible additions */

#define FLEX_IOCTL_BASE		0xF7

/* Function modes, as reported by FLEX_IOCTL_QUERY. */
#define FLEX_MODE_PF		0	/* region_id is a physical address */
#define FLEX_MODE_VF		1	/* region_id is a lookup-table index */

/* Capability bits reported by FLEX_IOCTL_QUERY. */
#define FLEX_CAP_SPARSE_MEMORY	(1ULL << 0)	/* backing allocated on touch */
#define FLEX_CAP_MMAP		(1ULL << 1)	/* regions can be mmap()ed */
#define FLEX_CAP_SRIOV		(1ULL << 2)	/* the device has VFs to enable */

/* lut_index of a region that no lookup table maps (PF regions). */
#define FLEX_NO_LUT_INDEX	0xffffffffU

/*
 * struct flex_query - FLEX_IOCTL_QUERY: what this device node is.
 * @flags:	in, must be 0.
 * @uapi_major, @uapi_minor: out, FLEX_UAPI_MAJOR/MINOR of the driver.
 * @mode:	out, FLEX_MODE_PF or FLEX_MODE_VF.
 * @device_index: out, N of /dev/flexN.
 * @vf_index:	out, M of /dev/flexNvfM (0 on a PF).
 * @table_entries: out, lookup-table entries of this function: the most
 *		regions it can hold at once (on a PF, the per-PF region cap).
 * @table_used:	out, entries in use now (by every opener of this function).
 * @capabilities: out, FLEX_CAP_* bits.
 * @capacity:	out, bytes of device memory on the device.
 * @free:	out, bytes of device memory held by no region.
 * @largest_free: out, largest contiguous free range, in bytes; a region
 *		larger than this fails with -ENOMEM.
 * @region_align: out, region sizes must be multiples of this (a power of 2).
 * @total_vfs:	out, VFs the device supports (sriov_totalvfs).
 * @num_vfs:	out, VFs enabled now (sriov_numvfs).
 */
struct flex_query {
	__u32 flags;
	__u32 uapi_major;
	__u32 uapi_minor;
	__u32 mode;
	__u32 device_index;
	__u32 vf_index;
	__u32 table_entries;
	__u32 table_used;
	__u64 capabilities;
	__u64 capacity;
	__u64 free;
	__u64 largest_free;
	__u64 region_align;
	__u32 total_vfs;
	__u32 num_vfs;
};

/*
 * struct flex_region_acquire - FLEX_IOCTL_REGION_ACQUIRE: take a contiguous
 * region of device memory for the calling open file.
 * @size:	in, bytes; a non-zero multiple of flex_query.region_align.
 * @flags:	in, must be 0.
 * @pad:	must be 0.
 * @region_id:	out, the region's id in VirtualAddresses: on a VF the index
 *		of the lookup-table entry that maps it, on a PF its physical
 *		address (never 0).
 * @mmap_offset: out, the mmap() offset of the region's first byte.
 * @handle:	out, device-wide region number, the name of its directory in
 *		/sys/class/flex/flexN/regions/.
 * @lut_index:	out, lookup-table index, or FLEX_NO_LUT_INDEX on a PF.
 * @pad2:	must be 0.
 *
 * Errors: -EINVAL bad size, flags or padding; -E2BIG size larger than the
 * device's capacity; -ENOSPC lookup table (or PF region cap) full;
 * -ENOMEM no contiguous free range of that size.
 */
struct flex_region_acquire {
	__u64 size;
	__u32 flags;
	__u32 pad;
	__u64 region_id;
	__u64 mmap_offset;
	__u64 handle;
	__u32 lut_index;
	__u32 pad2;
};

/*
 * struct flex_region_release - FLEX_IOCTL_REGION_RELEASE: give a region
 * back. Mappings of it are torn down (a later access gets SIGBUS) and its
 * memory reads as zeros to whoever acquires it next.
 * @region_id:	in, as returned by FLEX_IOCTL_REGION_ACQUIRE.
 * @flags:	in, must be 0.
 * @pad:	must be 0.
 *
 * Errors: -EINVAL flags or padding; -ENOENT no region of that id belongs to
 * this open file.
 */
struct flex_region_release {
	__u64 region_id;
	__u32 flags;
	__u32 pad;
};

/*
 * struct flex_region_info - FLEX_IOCTL_REGION_INFO: describe one of the
 * calling file's regions.
 * @region_id:	in.
 * @flags:	in, must be 0.
 * @pad:	must be 0.
 * @size, @mmap_offset, @handle, @lut_index: out, as at acquisition.
 * @pad2:	must be 0.
 * @resident:	out, bytes of the region backed by host memory now.
 *
 * Errors: as FLEX_IOCTL_REGION_RELEASE.
 */
struct flex_region_info {
	__u64 region_id;
	__u32 flags;
	__u32 pad;
	__u64 size;
	__u64 mmap_offset;
	__u64 handle;
	__u32 lut_index;
	__u32 pad2;
	__u64 resident;
};

#define FLEX_IOCTL_QUERY	  _IOWR(FLEX_IOCTL_BASE, 0x00, struct flex_query)
#define FLEX_IOCTL_REGION_ACQUIRE _IOWR(FLEX_IOCTL_BASE, 0x01, struct flex_region_acquire)
#define FLEX_IOCTL_REGION_RELEASE _IOW(FLEX_IOCTL_BASE, 0x02, struct flex_region_release)
#define FLEX_IOCTL_REGION_INFO	  _IOWR(FLEX_IOCTL_BASE, 0x03, struct flex_region_info)
/* 0x10-0x2f are reserved for queues and submission. */

#endif /* _UAPI_LINUX_FLEX_H */
