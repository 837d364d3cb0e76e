// SPDX-License-Identifier: GPL-2.0
/*
 * The in-memory region source: a simulated device that counts bytes and
 * lookup-table entries, so FlexAllocator can run without the driver (tests,
 * benchmarks, dry runs). Region contents are never allocated.
 *
 * A simulated device (struct memory_device) has a capacity; each source
 * made on it is one function of the device (the PF, a VF, another tenant)
 * with its own lookup table and quota, as the driver's functions have. The
 * device's lock covers every function's counters, so an acquisition and
 * the info snapshot see one state.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "log.h"
#include "region_source_internal.h"

struct memory_device {
	pthread_mutex_t lock;
	atomic_uint refs;		/* functions on it */
	uint64_t capacity;
	uint64_t used;			/* by every function */
};

struct memory_source {
	struct memory_device *dev;
	uint64_t quota;			/* 0: none */
	uint64_t used;			/* by this function's regions */
	unsigned int table_entries;	/* 0: no limit */
	unsigned int slots;		/* entries in @taken */
	unsigned int taken_count;
	bool *taken;			/* lookup-table entries in use */
	uint64_t *sizes;		/* size of the region in each entry */
};

/* No table limit: grow the entry arrays. Device lock held. */
static int grow_table(struct memory_source *m)
{
	unsigned int n = m->slots ? 2 * m->slots : 16;
	bool *taken = realloc(m->taken, n * sizeof(*taken));
	uint64_t *sizes = taken ? realloc(m->sizes, n * sizeof(*sizes)) : NULL;

	if (taken)
		m->taken = taken;
	if (sizes)
		m->sizes = sizes;
	if (!taken || !sizes)
		return -ENOMEM;
	for (unsigned int j = m->slots; j < n; j++)
		m->taken[j] = false;
	m->slots = n;
	return 0;
}

static int memory_acquire(void *user, uint64_t size, struct flex_region *out)
{
	struct memory_source *m = user;
	struct memory_device *d = m->dev;
	unsigned int i;
	int err = 0;

	if (size > d->capacity)
		return -E2BIG;
	pthread_mutex_lock(&d->lock);
	for (i = 0; i < m->slots && m->taken[i]; i++)
		;
	if (i == m->slots && m->table_entries)
		err = -ENOSPC;
	else if (m->quota && size > m->quota - m->used)
		err = -EDQUOT;
	else if (size > d->capacity - d->used)
		err = -ENOMEM;
	else if (i == m->slots)
		err = grow_table(m);
	if (!err) {
		m->taken[i] = true;
		m->taken_count++;
		m->sizes[i] = size;
		m->used += size;
		d->used += size;
		out->region_id = i;
		out->size = size;
	}
	pthread_mutex_unlock(&d->lock);
	return err;
}

static int memory_release(void *user, const struct flex_region *region)
{
	struct memory_source *m = user;
	struct memory_device *d = m->dev;
	int err = 0;

	pthread_mutex_lock(&d->lock);
	if (region->region_id >= m->slots || !m->taken[region->region_id]) {
		err = -ENOENT;
	} else {
		m->taken[region->region_id] = false;
		m->taken_count--;
		m->used -= m->sizes[region->region_id];
		d->used -= m->sizes[region->region_id];
	}
	pthread_mutex_unlock(&d->lock);
	return err;
}

static int memory_info(void *user, struct flex_region_source_info *out)
{
	struct memory_source *m = user;
	struct memory_device *d = m->dev;
	uint64_t free;

	pthread_mutex_lock(&d->lock);
	out->capacity = m->quota && m->quota < d->capacity ? m->quota : d->capacity;
	free = d->capacity - d->used;
	if (m->quota && m->quota - m->used < free)
		free = m->quota - m->used;
	out->free = free;
	out->largest_free = free;
	out->table_used = m->taken_count;
	pthread_mutex_unlock(&d->lock);
	out->region_align = FLEX_ALLOC_ALIGN;
	return 0;
}

static void device_put(struct memory_device *d)
{
	if (atomic_fetch_sub(&d->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static void memory_destroy(void *user)
{
	struct memory_source *m = user;

	device_put(m->dev);
	free(m->taken);
	free(m->sizes);
	free(m);
}

static const struct flex_region_source_ops memory_ops = {
	.acquire = memory_acquire,
	.release = memory_release,
	.destroy = memory_destroy,
	.info = memory_info,
};

/* A function of @d (whose reference it takes over) as a source. */
static int new_function(struct memory_device *d, unsigned int table_entries, uint64_t quota,
			struct flex_region_source **out, const char *what)
{
	struct memory_source *m = calloc(1, sizeof(*m));
	int err;

	if (!m) {
		device_put(d);
		return flex_error_set(-ENOMEM, "%s: out of host memory", what);
	}
	m->dev = d;
	m->quota = quota;
	m->table_entries = table_entries;
	if (table_entries) {
		m->slots = table_entries;
		m->taken = calloc(table_entries, sizeof(*m->taken));
		m->sizes = calloc(table_entries, sizeof(*m->sizes));
		if (!m->taken || !m->sizes) {
			memory_destroy(m);
			return flex_error_set(-ENOMEM, "%s: out of host memory", what);
		}
	}
	err = flex_region_source_new(&memory_ops, m, table_entries, out);
	if (err)
		memory_destroy(m);
	return err;
}

FLEX_EXPORT int flex_region_source_new_memory(uint64_t capacity, unsigned int table_entries,
					      struct flex_region_source **out)
{
	struct memory_device *d;

	if (!capacity || !out)
		return flex_error_set(-EINVAL, "flex_region_source_new_memory: zero capacity or no result pointer");
	d = calloc(1, sizeof(*d));
	if (!d)
		return flex_error_set(-ENOMEM, "flex_region_source_new_memory: out of host memory");
	pthread_mutex_init(&d->lock, NULL);
	atomic_init(&d->refs, 1);
	d->capacity = capacity;
	return new_function(d, table_entries, 0, out, "flex_region_source_new_memory");
}

FLEX_EXPORT int flex_region_source_new_memory_function(struct flex_region_source *device,
						       unsigned int table_entries, uint64_t quota,
						       struct flex_region_source **out)
{
	struct memory_device *d;

	if (!device || !out || device->ops.acquire != memory_acquire)
		return flex_error_set(-EINVAL,
				 "flex_region_source_new_memory_function: not a simulated device (flex_region_source_new_memory())");
	d = ((struct memory_source *)device->user)->dev;
	atomic_fetch_add(&d->refs, 1);
	return new_function(d, table_entries, quota, out, "flex_region_source_new_memory_function");
}
