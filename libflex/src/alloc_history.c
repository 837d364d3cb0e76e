// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator's allocation history: a ring of the last N events, kept
 * only while recording (flex_alloc_record_history()). The hot paths test
 * one flag (alloc_event() in allocator_internal.h); the ring has its own
 * lock, taken last, after a region lock or grow_lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocator_internal.h"

static const char *const event_names[] = {
	[FLEX_ALLOC_EV_ALLOC] = "alloc",
	[FLEX_ALLOC_EV_FREE] = "free",
	[FLEX_ALLOC_EV_FREE_REQUESTED] = "free_requested",
	[FLEX_ALLOC_EV_REGION_ACQUIRE] = "region_acquire",
	[FLEX_ALLOC_EV_REGION_RELEASE] = "region_release",
	[FLEX_ALLOC_EV_OOM] = "oom",
};

FLEX_EXPORT const char *flex_alloc_event_name(enum flex_alloc_event_action action)
{
	return (unsigned int)action < sizeof(event_names) / sizeof(event_names[0]) ?
	       event_names[action] : "?";
}

void flex_history_add(struct flex_alloc *a, enum flex_alloc_event_action action,
		 enum flex_alloc_kind kind, flex_alloc_index_t index, uint64_t region_id,
		 uint64_t offset, uint64_t size, uint64_t requested)
{
	struct alloc_history *h = &a->hist;
	struct flex_alloc_event *e;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&h->lock);
	if (!h->cap) {		/* stopped meanwhile */
		pthread_mutex_unlock(&h->lock);
		return;
	}
	e = &h->ring[(h->head + h->count) % h->cap];
	if (h->count == h->cap)
		h->head = (h->head + 1) % h->cap;
	else
		h->count++;
	h->recorded++;
	*e = (struct flex_alloc_event){
		.time_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec,
		.action = action,
		.kind = kind,
		.index = index,
		.region_id = region_id,
		.offset = offset,
		.size = size,
		.requested = requested,
		.thread = (uint32_t)gettid(),
	};
	pthread_mutex_unlock(&h->lock);
}

FLEX_EXPORT int flex_alloc_record_history(struct flex_alloc *a, size_t max_entries)
{
	struct alloc_history *h = &a->hist;
	struct flex_alloc_event *ring = NULL, *old;

	if (max_entries) {
		ring = max_entries <= SIZE_MAX / sizeof(*ring) ?
		       malloc(max_entries * sizeof(*ring)) : NULL;
		if (!ring)
			return flex_error_set(-ENOMEM,
					 "flex_alloc_record_history: no host memory for %zu events",
					 max_entries);
	}
	pthread_mutex_lock(&h->lock);
	old = h->ring;
	h->ring = ring;
	h->cap = max_entries;
	h->head = 0;
	h->count = 0;
	h->recorded = 0;
	atomic_store_explicit(&a->recording, max_entries != 0, memory_order_relaxed);
	pthread_mutex_unlock(&h->lock);
	free(old);
	return 0;
}

FLEX_EXPORT int flex_alloc_get_history(struct flex_alloc *a, struct flex_alloc_event *out,
				       size_t max, size_t *n, uint64_t *recorded)
{
	struct alloc_history *h = &a->hist;
	size_t skip, k;

	pthread_mutex_lock(&h->lock);
	k = h->count < max ? h->count : max;
	skip = h->count - k;
	for (size_t i = 0; i < k; i++)
		out[i] = h->ring[(h->head + skip + i) % h->cap];
	if (recorded)
		*recorded = h->recorded;
	pthread_mutex_unlock(&h->lock);
	*n = k;
	return 0;
}

void flex_history_init(struct flex_alloc *a)
{
	pthread_mutex_init(&a->hist.lock, NULL);
}

void flex_history_fini(struct flex_alloc *a)
{
	free(a->hist.ring);
	pthread_mutex_destroy(&a->hist.lock);
}
