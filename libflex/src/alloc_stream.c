// SPDX-License-Identifier: GPL-2.0
/*
 * Stream-ordered memory: frees that wait for queued work
 * (flex_alloc_block_free_after()) and the queues that used a block
 * (flex_alloc_block_record_use()), as PyTorch's CUDA caching allocator has them:
 * there a freed block with stream uses records an event on each of those
 * streams and goes back to the pool once every event completed. Here a
 * queue's point (struct flex_alloc_queue_ops) is that event.
 *
 * A block that has uses or waits to be freed has its slot's ext bit set
 * and a record in a hash map by (region, slot), so the hot paths of
 * allocate and free test one bit they have loaded anyway. A freed block
 * waiting for its points keeps its memory (it is still allocated in its
 * region), its slot's generation moves on so the caller's index is dead,
 * and its record joins a list in the order of the frees. The map and the
 * list are under a_->use_lock (after a region lock, never before). Queue
 * callbacks are never called with a lock held: a thread takes records out
 * of the list (or copies the queues of one), calls the callbacks, and puts
 * back what is not done; busy counts such threads so that
 * flex_alloc_queue_retire() waits until no one can still call a queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"

#define USE_KEY_NONE	UINT32_MAX
#define QCACHE		16	/* queues a reclaim pass remembers the progress of */

struct use_point {
	struct flex_alloc_queue *q;	/* NULL: retired */
	uint64_t point;			/* pending: the queue's point at the free */
};

struct use_rec {
	uint32_t key;			/* region slot << SLOT_BITS | slot */
	bool pending;			/* freed: waits for its points */
	flex_alloc_index_t index;	/* pending: the index the caller freed */
	uint64_t bytes;			/* pending: the block's size */
	unsigned int n, cap;
	struct use_point *p;		/* uses (points only when pending) */
	struct use_rec *next;		/* pending, in the order of the frees */
};

static inline uint32_t key_of(unsigned int region, uint32_t slot)
{
	return (uint32_t)region << SLOT_BITS | slot;
}

/* ---- the map: open addressing, linear probing ---- */

static size_t home(const struct use_map *m, uint32_t key)
{
	return (size_t)(key * 2654435761U) & (m->cap - 1);
}

static struct use_rec *map_get(const struct use_map *m, uint32_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = home(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (m->keys[i] == USE_KEY_NONE)
			return NULL;
	}
}

static void map_insert(struct use_map *m, struct use_rec *rec)
{
	size_t i = home(m, rec->key);

	while (m->keys[i] != USE_KEY_NONE)
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = rec->key;
	m->vals[i] = rec;
	m->n++;
}

/* Room for one more record. Return: 0 or -ENOMEM. */
static int map_reserve(struct use_map *m)
{
	struct use_map bigger;

	if (4 * (m->n + 1) <= 3 * m->cap)
		return 0;
	bigger.cap = m->cap ? 2 * m->cap : 64;
	bigger.n = 0;
	bigger.keys = malloc(bigger.cap * sizeof(*bigger.keys));
	bigger.vals = malloc(bigger.cap * sizeof(*bigger.vals));
	if (!bigger.keys || !bigger.vals) {
		free(bigger.keys);
		free(bigger.vals);
		return -ENOMEM;
	}
	memset(bigger.keys, 0xff, bigger.cap * sizeof(*bigger.keys));
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != USE_KEY_NONE)
			map_insert(&bigger, m->vals[i]);
	free(m->keys);
	free(m->vals);
	*m = bigger;
	return 0;
}

/* Remove @key, shifting back what follows it in its probe run. */
static void map_del(struct use_map *m, uint32_t key)
{
	size_t i = home(m, key), j;

	while (m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	for (j = (i + 1) & (m->cap - 1); m->keys[j] != USE_KEY_NONE; j = (j + 1) & (m->cap - 1)) {
		size_t h = home(m, m->keys[j]);

		/* Move j to i if its home is not in (i, j], cyclically. */
		if (i <= j ? (h <= i || h > j) : (h <= i && h > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = USE_KEY_NONE;
	m->n--;
}

static void rec_free(struct use_rec *rec)
{
	free(rec->p);
	free(rec);
}

/* The record of @key, made if there is none. use_lock held. */
static int rec_get(struct flex_alloc *a, uint32_t key, struct use_rec **out)
{
	struct use_rec *rec = map_get(&a->uses, key);

	if (!rec) {
		if (map_reserve(&a->uses))
			return -ENOMEM;
		rec = calloc(1, sizeof(*rec));
		if (!rec)
			return -ENOMEM;
		rec->key = key;
		map_insert(&a->uses, rec);
	}
	*out = rec;
	return 0;
}

/* Add (@q, @point) to @rec unless @q is there. use_lock held. */
static int rec_add(struct use_rec *rec, struct flex_alloc_queue *q, uint64_t point)
{
	for (unsigned int i = 0; i < rec->n; i++)
		if (rec->p[i].q == q)
			return 0;
	if (rec->n == rec->cap) {
		unsigned int cap = rec->cap ? 2 * rec->cap : 2;
		struct use_point *p = realloc(rec->p, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		rec->p = p;
		rec->cap = cap;
	}
	rec->p[rec->n++] = (struct use_point){ .q = q, .point = point };
	return 0;
}

static void unbusy(struct flex_alloc *a)
{
	if (!--a->busy)
		pthread_cond_broadcast(&a->use_idle);
}

/* ---- recording uses ---- */

FLEX_EXPORT int flex_alloc_block_record_use(struct flex_alloc *a, flex_alloc_index_t index,
				      struct flex_alloc_queue *q)
{
	struct use_rec *rec;
	struct region *r;
	uint32_t slot;
	int err;

	if (!q || !q->ops)
		return flex_error_set(-EINVAL, "flex_alloc_block_record_use: no queue, or a queue without ops");
	err = flex_alloc_lookup(a, index, "flex_alloc_block_record_use", &r, &slot);
	if (err > 0)
		return 0;	/* 0 bytes: no memory to protect */
	if (err)
		return err;
	pthread_mutex_lock(&a->use_lock);
	err = rec_get(a, key_of(r->slot, slot), &rec);
	if (!err)
		err = rec_add(rec, q, 0);
	if (!err)
		slot_at(&r->slots, slot)->ext = 1;
	pthread_mutex_unlock(&a->use_lock);
	region_unlock(r);
	if (err)
		return flex_error_set(err, "flex_alloc_block_record_use: out of host memory recording a use of index 0x%llx",
				 (unsigned long long)index);
	return 0;
}

/* ---- freeing ---- */

/*
 * Free @index once @q's point now and the points now of the queues that
 * used it are reached; at once if there are none. Three steps, so that the
 * callbacks run with no lock held: copy the block's queues, ask each for
 * its point, then find the block again and either free it or make it
 * pending.
 */
int flex_deferred_free(struct flex_alloc *a, flex_alloc_index_t index, struct flex_alloc_queue *q,
		  const char *what)
{
	struct use_point pts[8], *p = pts;
	unsigned int n = 0, m = 0;
	struct use_rec *rec;
	struct region *r;
	struct slot *s;
	uint32_t slot;
	bool emptied = false;
	int err;

	err = flex_alloc_lookup(a, index, what, &r, &slot);
	if (err > 0)
		return flex_alloc_block_free(a, index);	/* the 0-byte index */
	if (err)
		return flex_alloc_refused_free(a, err);
	s = slot_at(&r->slots, slot);
	if (q)
		p[n++] = (struct use_point){ .q = q };
	pthread_mutex_lock(&a->use_lock);
	rec = s->ext ? map_get(&a->uses, key_of(r->slot, slot)) : NULL;
	if (rec && n + rec->n > sizeof(pts) / sizeof(pts[0])) {
		p = malloc((n + rec->n) * sizeof(*p));
		if (!p) {
			pthread_mutex_unlock(&a->use_lock);
			region_unlock(r);
			return flex_error_set(-ENOMEM, "%s: out of host memory; index 0x%llx is still allocated",
					 what, (unsigned long long)index);
		}
		if (q)
			p[0] = pts[0];
	}
	for (unsigned int i = 0; rec && i < rec->n; i++)
		if (rec->p[i].q && rec->p[i].q != q)
			p[n++] = rec->p[i];
	a->busy++;
	pthread_mutex_unlock(&a->use_lock);
	region_unlock(r);

	/* The points now, with no lock held; a queue with nothing pending drops out. */
	for (unsigned int i = 0; i < n; i++) {
		p[i].point = p[i].q->ops->point(p[i].q);
		if (p[i].point)
			p[m++] = p[i];
	}

	err = flex_alloc_lookup(a, index, what, &r, &slot);
	if (err) {
		/* Freed meanwhile by another thread: this is the second free. */
		pthread_mutex_lock(&a->use_lock);
		unbusy(a);
		pthread_mutex_unlock(&a->use_lock);
		if (p != pts)
			free(p);
		return flex_alloc_refused_free(a, err < 0 ? err : -ENOENT);
	}
	s = slot_at(&r->slots, slot);
	pthread_mutex_lock(&a->use_lock);
	unbusy(a);
	if (!m) {
		/* Nothing pending anywhere: an ordinary free. */
		rec = s->ext ? map_get(&a->uses, key_of(r->slot, slot)) : NULL;
		if (rec) {
			map_del(&a->uses, rec->key);
			rec_free(rec);
		}
		s->ext = 0;
		pthread_mutex_unlock(&a->use_lock);
		err = flex_alloc_free_locked(a, r, slot, index, &emptied);
		region_unlock(r);
		if (!err && emptied)
			flex_alloc_region_emptied(a, r);
		goto out;
	}
	err = rec_get(a, key_of(r->slot, slot), &rec);
	if (!err && rec->cap < m) {
		struct use_point *np = realloc(rec->p, m * sizeof(*np));

		if (np) {
			rec->p = np;
			rec->cap = m;
		} else {
			err = -ENOMEM;
		}
	}
	if (err) {
		pthread_mutex_unlock(&a->use_lock);
		region_unlock(r);
		err = flex_error_set(err, "%s: out of host memory; index 0x%llx is still allocated", what,
				(unsigned long long)index);
		goto out;
	}
	memcpy(rec->p, p, m * sizeof(*p));
	rec->n = m;
	rec->pending = true;
	rec->index = index;
	rec->bytes = gran_to_bytes(s->size);
	rec->next = NULL;
	if (a->pend_tail)
		a->pend_tail->next = rec;
	else
		a->pend_head = rec;
	a->pend_tail = rec;
	a->pending_bytes += rec->bytes;
	atomic_fetch_add(&a->num_pending, 1);
	pthread_mutex_unlock(&a->use_lock);
	s->ext = 1;
	slot_next_gen(s);	/* the caller's index is dead from now on */
	alloc_event(a, FLEX_ALLOC_EV_FREE_REQUESTED, s->kind, index, r->src.region_id,
		    gran_to_bytes(s->start), rec->bytes, slot_requested(s));
	alloc_debug(a, "free index 0x%llx: region 0x%llx offset 0x%llx, %llu bytes, after %u queue%s",
		    (unsigned long long)index, (unsigned long long)r->src.region_id,
		    (unsigned long long)gran_to_bytes(s->start), (unsigned long long)rec->bytes,
		    m, m == 1 ? "" : "s");
	region_unlock(r);
out:
	if (p != pts)
		free(p);
	return err;
}

FLEX_EXPORT int flex_alloc_block_free_after(struct flex_alloc *a, flex_alloc_index_t index,
				      struct flex_alloc_queue *q)
{
	if (q && !q->ops) {
		atomic_fetch_add(&a->num_bad_frees, 1);
		return flex_error_set(-EINVAL, "flex_alloc_block_free_after: a queue without ops");
	}
	return flex_deferred_free(a, index, q, "flex_alloc_block_free_after");
}

/* ---- reclaiming ---- */

/* What one pass learnt of each queue: every point up to @reached is reached. */
struct qcache {
	unsigned int n;
	struct {
		struct flex_alloc_queue *q;
		uint64_t reached;
	} e[QCACHE];
};

static void cache_note(struct qcache *c, struct flex_alloc_queue *q, uint64_t point)
{
	for (unsigned int i = 0; i < c->n; i++) {
		if (c->e[i].q == q) {
			if (point > c->e[i].reached)
				c->e[i].reached = point;
			return;
		}
	}
	if (c->n < QCACHE) {
		c->e[c->n].q = q;
		c->e[c->n++].reached = point;
	}
}

static bool cache_reached(const struct qcache *c, struct flex_alloc_queue *q, uint64_t point)
{
	for (unsigned int i = 0; i < c->n; i++)
		if (c->e[i].q == q)
			return point <= c->e[i].reached;
	return false;
}

/* Are all points of @rec reached (waiting for them with @wait)? No lock held. */
static bool rec_reached(struct use_rec *rec, struct qcache *c, bool wait)
{
	for (unsigned int i = 0; i < rec->n; i++) {
		struct use_point *p = &rec->p[i];

		if (!p->q || cache_reached(c, p->q, p->point))
			continue;
		if (p->q->ops->query(p->q, p->point)) {
			if (!wait)
				return false;
			p->q->ops->wait(p->q, p->point);
		}
		cache_note(c, p->q, p->point);
	}
	return true;
}

/*
 * Free the block of pending @rec, taken out of the list. No lock held.
 * Return: its bytes; 0 if host memory ran out (it goes back to the list).
 */
static uint64_t rec_finish(struct flex_alloc *a, struct use_rec *rec)
{
	struct region *r = &a->regions[rec->key >> SLOT_BITS];
	uint32_t slot = rec->key & (SLOT_MAX - 1);
	uint64_t bytes = rec->bytes;
	bool emptied = false;
	int err;

	region_lock(r);
	err = flex_alloc_free_locked(a, r, slot, rec->index, &emptied);
	pthread_mutex_lock(&a->use_lock);
	if (err) {
		rec->next = a->pend_head;
		a->pend_head = rec;
		if (!a->pend_tail)
			a->pend_tail = rec;
		pthread_mutex_unlock(&a->use_lock);
		region_unlock(r);
		return 0;
	}
	/* Out of the map before the region lock goes: the slot may be reused. */
	map_del(&a->uses, rec->key);
	a->pending_bytes -= bytes;
	atomic_fetch_sub(&a->num_pending, 1);
	pthread_mutex_unlock(&a->use_lock);
	slot_at(&r->slots, slot)->ext = 0;
	region_unlock(r);
	rec_free(rec);
	if (emptied)
		flex_alloc_region_emptied(a, r);
	return bytes;
}

uint64_t flex_deferred_reclaim(struct flex_alloc *a, bool wait)
{
	struct use_rec *list, *rec, *keep = NULL, *last = NULL;
	struct qcache c = { 0 };
	uint64_t bytes = 0;

	pthread_mutex_lock(&a->use_lock);
	list = a->pend_head;
	a->pend_head = a->pend_tail = NULL;
	if (list)
		a->busy++;
	pthread_mutex_unlock(&a->use_lock);
	if (!list)
		return 0;
	while ((rec = list)) {
		list = rec->next;
		rec->next = NULL;
		if (rec_reached(rec, &c, wait)) {
			bytes += rec_finish(a, rec);
		} else {
			if (last)
				last->next = rec;
			else
				keep = rec;
			last = rec;
		}
	}
	/* What is left goes back before what was freed meanwhile. */
	pthread_mutex_lock(&a->use_lock);
	if (keep) {
		last->next = a->pend_head;
		a->pend_head = keep;
		if (!a->pend_tail)
			a->pend_tail = last;
	}
	unbusy(a);
	pthread_mutex_unlock(&a->use_lock);
	return bytes;
}

uint64_t flex_deferred_wait_oldest(struct flex_alloc *a)
{
	struct qcache c = { 0 };
	struct use_rec *rec;
	uint64_t bytes;

	pthread_mutex_lock(&a->use_lock);
	rec = a->pend_head;
	if (rec) {
		a->pend_head = rec->next;
		if (!a->pend_head)
			a->pend_tail = NULL;
		rec->next = NULL;
		a->busy++;
	}
	pthread_mutex_unlock(&a->use_lock);
	if (!rec)
		return 0;
	rec_reached(rec, &c, true);
	bytes = rec_finish(a, rec);
	pthread_mutex_lock(&a->use_lock);
	unbusy(a);
	pthread_mutex_unlock(&a->use_lock);
	return bytes;
}

FLEX_EXPORT int flex_alloc_reclaim(struct flex_alloc *a, unsigned int flags, uint64_t *freed)
{
	uint64_t bytes;

	if (flags & ~FLEX_ALLOC_RECLAIM_WAIT)
		return flex_error_set(-EINVAL, "flex_alloc_reclaim: unknown flags 0x%x",
				 flags & ~FLEX_ALLOC_RECLAIM_WAIT);
	bytes = flex_deferred_reclaim(a, flags & FLEX_ALLOC_RECLAIM_WAIT);
	alloc_debug(a, "reclaim: %llu bytes of deferred frees freed", (unsigned long long)bytes);
	if (freed)
		*freed = bytes;
	return 0;
}

FLEX_EXPORT void flex_alloc_queue_retire(struct flex_alloc *a, struct flex_alloc_queue *q)
{
	bool pending = false;

	pthread_mutex_lock(&a->use_lock);
	while (a->busy)
		pthread_cond_wait(&a->use_idle, &a->use_lock);
	for (size_t i = 0; i < a->uses.cap; i++) {
		struct use_rec *rec = a->uses.keys[i] != USE_KEY_NONE ? a->uses.vals[i] : NULL;

		for (unsigned int k = 0; rec && k < rec->n; k++) {
			if (rec->p[k].q != q)
				continue;
			rec->p[k] = rec->p[--rec->n];	/* a use dropped, or its point reached */
			pending |= rec->pending;
			break;
		}
	}
	pthread_mutex_unlock(&a->use_lock);
	if (pending)
		flex_deferred_reclaim(a, false);
}

bool flex_deferred_pending(struct flex_alloc *a, const struct region *r, uint32_t slot,
		      flex_alloc_index_t *index)
{
	struct use_rec *rec;
	bool pending;

	pthread_mutex_lock(&a->use_lock);
	rec = map_get(&a->uses, key_of(r->slot, slot));
	pending = rec && rec->pending;
	if (pending)
		*index = rec->index;
	pthread_mutex_unlock(&a->use_lock);
	return pending;
}

void flex_deferred_init(struct flex_alloc *a)
{
	pthread_mutex_init(&a->use_lock, NULL);
	pthread_cond_init(&a->use_idle, NULL);
}

/* Destroy: the records go (no queue is called), the regions with them. */
void flex_deferred_fini(struct flex_alloc *a)
{
	for (size_t i = 0; i < a->uses.cap; i++)
		if (a->uses.keys[i] != USE_KEY_NONE)
			rec_free(a->uses.vals[i]);
	free(a->uses.keys);
	free(a->uses.vals);
	pthread_cond_destroy(&a->use_idle);
	pthread_mutex_destroy(&a->use_lock);
}
