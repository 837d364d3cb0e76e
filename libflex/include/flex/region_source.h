/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/region_source.h - where FlexAllocator gets its memory regions from.
 *
 * A region source hands out large contiguous regions of device memory (the
 * RFC's DeviceMemoryAllocator). FlexAllocator acquires a few of them and
 * carves its blocks out of them; it never touches the memory itself, so a
 * source only has to say which region it gave (an id and a size).
 *
 * Three sources exist:
 *  - flex_region_source_from_device() (flex/device.h): the flex driver's
 *    region ioctls, what runs for real;
 *  - flex_region_source_new_memory(): a simulated device that only counts
 *    bytes and lookup-table entries, for tests, benchmarks and dry runs;
 *    flex_region_source_new_memory_function() adds more functions (VFs,
 *    other tenants) sharing its memory, each with a table and a quota;
 *  - flex_region_source_new(): any other backend, from a table of callbacks.
 *
 * A source may also say how much memory is behind it
 * (flex_region_source_get_info()): FlexAllocator scales its default region
 * sizes to that, and flex_alloc_mem_get_info() reports it.
 *
 * Sources are reference counted: FlexAllocator takes a reference for its
 * lifetime, so the creator may drop its own right after flex_alloc_new().
 * All functions are safe to call from several threads when the callbacks
 * are; the built-in sources are.
 */
#ifndef FLEX_REGION_SOURCE_H
#define FLEX_REGION_SOURCE_H

#include <stdint.h>

#include <flex/error.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A region a source handed out. */
struct flex_region {
	/*
	 * The region's id in VirtualAddresses: on a physical function its
	 * physical address, on a virtual function its lookup-table index.
	 */
	uint64_t region_id;
	/* Bytes in the region; at least the size asked for. */
	uint64_t size;
};

/**
 * struct flex_region_source_info - what a source says about its memory.
 * Since: 1.0. A field the source cannot tell is 0.
 * @capacity:	the most bytes its regions may hold together: the device's
 *		memory, or the function's quota when that is lower.
 * @free:	bytes that could be acquired now: what the device has free,
 *		within what the quota leaves.
 * @largest_free: the largest single region that could be acquired now.
 * @region_align: region sizes are rounded up to a multiple of this.
 * @table_entries: as flex_region_source_table_entries().
 * @table_used:	lookup-table entries in use now, by every user of the table.
 *
 * @capacity and @free come from one snapshot of the source, so @free never
 * exceeds @capacity and the two may be compared.
 */
struct flex_region_source_info {
	uint64_t capacity;
	uint64_t free;
	uint64_t largest_free;
	uint64_t region_align;
	uint32_t table_entries;
	uint32_t table_used;
};

/**
 * struct flex_region_source_ops - callbacks of a plug-in region source.
 * @acquire:	take a region of at least @size bytes and describe it in @out.
 *		Return 0, or a negative errno: -ENOSPC when the source can hold
 *		no more regions at all (lookup table full: FlexAllocator stops
 *		trying and locks its region set), any other error (-ENOMEM,
 *		-E2BIG, ...) when this size cannot be had (it tries the next,
 *		smaller fallback size). Required.
 * @release:	give back a region @acquire returned. Return 0 or a negative
 *		errno. Required.
 * @destroy:	called once when the last reference is dropped, to free @user.
 *		Optional.
 * @info:	fill @out (zeroed before the call) from one snapshot of the
 *		source; return 0 or a negative errno. Optional (Since: 1.0):
 *		without it FlexAllocator falls back to fixed region sizes.
 */
struct flex_region_source_ops {
	int (*acquire)(void *user, uint64_t size, struct flex_region *out);
	int (*release)(void *user, const struct flex_region *region);
	void (*destroy)(void *user);
	int (*info)(void *user, struct flex_region_source_info *out);
};

struct flex_region_source;

/**
 * flex_region_source_new() - wrap callbacks into a region source.
 * @ops:	the callbacks; copied, so it may live on the stack.
 * @user:	passed to every callback.
 * @table_entries: the most regions the source can hold at once (its lookup
 *		table), or 0 for no limit. FlexAllocator never holds more.
 * @out:	the new source, with one reference.
 *
 * Return: 0, -EINVAL if @ops lacks acquire or release, -ENOMEM.
 *
 * Since: 1.0
 */
int flex_region_source_new(const struct flex_region_source_ops *ops, void *user,
			   unsigned int table_entries,
			   struct flex_region_source **out);

/**
 * flex_region_source_new_memory() - a simulated device, in host memory.
 * @capacity:	bytes of "device memory"; a region is granted while its size
 *		fits in what the regions held now leave free (-ENOMEM, or
 *		-E2BIG when larger than @capacity itself).
 * @table_entries: lookup-table entries (-ENOSPC once all are used), 0 for
 *		no limit.
 * @out:	the new source, with one reference.
 *
 * Region ids are lookup-table indices as on a virtual function: the lowest
 * free entry, from 0. No memory is allocated for the regions' contents.
 * Its info (flex_region_source_get_info()) has @capacity, the free bytes
 * (also the largest region that could be had: the simulation does not
 * fragment), a region_align of FLEX_ALLOC_ALIGN and the table.
 *
 * Return: 0, -EINVAL for a zero @capacity, -ENOMEM.
 *
 * Since: 1.0
 */
int flex_region_source_new_memory(uint64_t capacity, unsigned int table_entries,
				  struct flex_region_source **out);

/**
 * flex_region_source_new_memory_function() - another function of a
 * simulated device: a VF, or another tenant, sharing its memory.
 * Since: 1.0.
 * @device:	a source from flex_region_source_new_memory() or from this
 *		call: the new one draws on the same capacity.
 * @table_entries: its own lookup-table entries (-ENOSPC once all are
 *		used), 0 for no limit.
 * @quota:	the most bytes its regions may hold together (-EDQUOT past
 *		it, as the driver's quota_capacity), 0 for no quota.
 * @out:	the new source, with one reference; it keeps the simulated
 *		device alive, whatever happens to @device.
 *
 * An acquisition is refused as the driver refuses one: -E2BIG larger than
 * the device, -ENOSPC table full, -EDQUOT past the quota, -ENOMEM the
 * device has not that much free. Region ids are table indices of the
 * function. Its info says the quota (if lower than the device) and what
 * the device and the quota leave free.
 *
 * Return: 0, -EINVAL if @device is not a simulated device, -ENOMEM.
 */
int flex_region_source_new_memory_function(struct flex_region_source *device,
					   unsigned int table_entries, uint64_t quota,
					   struct flex_region_source **out);

/** flex_region_source_ref() - take a reference; returns @src. Since: 1.0. */
struct flex_region_source *flex_region_source_ref(struct flex_region_source *src);

/**
 * flex_region_source_unref() - drop a reference; the last one calls the
 * destroy callback and frees the source. NULL is ignored.
 *
 * Since: 1.0
 */
void flex_region_source_unref(struct flex_region_source *src);

/** flex_region_source_table_entries() - the limit given at creation (0: none). Since: 1.0. */
unsigned int flex_region_source_table_entries(const struct flex_region_source *src);

/**
 * flex_region_source_get_info() - what the source says about its memory.
 * Since: 1.0.
 * @out:	filled; table_entries is always set.
 *
 * Return: 0; -EOPNOTSUPP the source has no info callback (only
 * table_entries is set); the callback's negative errno.
 */
int flex_region_source_get_info(struct flex_region_source *src,
				struct flex_region_source_info *out);

/**
 * flex_region_source_acquire() - take a region of at least @size bytes.
 *
 * Return: 0 and @out filled; -EINVAL for a zero @size, or when the source
 * returned a region smaller than asked (it is given back); -EIO when a
 * callback returned a positive value; else the source's negative errno.
 *
 * Since: 1.0
 */
int flex_region_source_acquire(struct flex_region_source *src, uint64_t size,
			       struct flex_region *out);

/** flex_region_source_release() - give @region back. Return: 0 or -errno. Since: 1.0. */
int flex_region_source_release(struct flex_region_source *src,
			       const struct flex_region *region);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_REGION_SOURCE_H */
