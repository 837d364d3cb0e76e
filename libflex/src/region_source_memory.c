// SPDX-License-Identifier: GPL-2.0
/*
 * The in-memory region source: a simulated device that counts bytes and
 * lookup-table entries, so FlexAllocator can run without the driver (tests,
 * benchmarks, dry runs). Region contents are never allocated.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <flex/region_source.h>

#include "log.h"

struct memory_source {
	pthread_mutex_t lock;
	uint64_t capacity;
	uint64_t used;
	unsigned int table_entries;	/* 0: no limit */
	unsigned int slots;		/* entries in @taken */
	bool *taken;			/* lookup-table entries in use */
	uint64_t *sizes;		/* size of the region in each entry */
};

static int memory_acquire(void *user, uint64_t size, struct flex_region *out)
{
	struct memory_source *m = user;
	unsigned int i;
	int err = 0;

	if (size > m->capacity)
		return -E2BIG;
	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->slots && m->taken[i]; i++)
		;
	if (i == m->slots && m->table_entries) {
		err = -ENOSPC;
	} else if (size > m->capacity - m->used) {
		err = -ENOMEM;
	} else if (i == m->slots) {
		/* No table limit: grow the entry arrays. */
		unsigned int n = m->slots ? 2 * m->slots : 16;
		bool *taken = realloc(m->taken, n * sizeof(*taken));
		uint64_t *sizes = taken ? realloc(m->sizes, n * sizeof(*sizes)) : NULL;

		if (taken)
			m->taken = taken;
		if (sizes)
			m->sizes = sizes;
		if (!taken || !sizes) {
			err = -ENOMEM;
		} else {
			for (unsigned int j = m->slots; j < n; j++)
				m->taken[j] = false;
			m->slots = n;
		}
	}
	if (!err) {
		m->taken[i] = true;
		m->sizes[i] = size;
		m->used += size;
		out->region_id = i;
		out->size = size;
	}
	pthread_mutex_unlock(&m->lock);
	return err;
}

static int memory_release(void *user, const struct flex_region *region)
{
	struct memory_source *m = user;
	int err = 0;

	pthread_mutex_lock(&m->lock);
	if (region->region_id >= m->slots || !m->taken[region->region_id]) {
		err = -ENOENT;
	} else {
		m->taken[region->region_id] = false;
		m->used -= m->sizes[region->region_id];
	}
	pthread_mutex_unlock(&m->lock);
	return err;
}

static void memory_destroy(void *user)
{
	struct memory_source *m = user;

	pthread_mutex_destroy(&m->lock);
	free(m->taken);
	free(m->sizes);
	free(m);
}

FLEX_EXPORT int flex_region_source_new_memory(uint64_t capacity, unsigned int table_entries,
					      struct flex_region_source **out)
{
	static const struct flex_region_source_ops ops = {
		.acquire = memory_acquire,
		.release = memory_release,
		.destroy = memory_destroy,
	};
	struct memory_source *m;
	int err;

	if (!capacity || !out)
		return error_set(-EINVAL, "flex_region_source_new_memory: zero capacity or no result pointer");
	m = calloc(1, sizeof(*m));
	if (!m)
		return error_set(-ENOMEM, "flex_region_source_new_memory: out of host memory");
	pthread_mutex_init(&m->lock, NULL);
	m->capacity = capacity;
	m->table_entries = table_entries;
	if (table_entries) {
		m->slots = table_entries;
		m->taken = calloc(table_entries, sizeof(*m->taken));
		m->sizes = calloc(table_entries, sizeof(*m->sizes));
		if (!m->taken || !m->sizes) {
			memory_destroy(m);
			return error_set(-ENOMEM, "flex_region_source_new_memory: out of host memory");
		}
	}
	err = flex_region_source_new(&ops, m, table_entries, out);
	if (err)
		memory_destroy(m);
	return err;
}
