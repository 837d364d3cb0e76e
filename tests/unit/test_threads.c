// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator from many threads at once: private and shared workloads,
 * frees from other threads than the allocating one, racing double frees,
 * regions acquired and released while others allocate, stream-ordered
 * frees and recorded uses with queues run by another thread, statistics
 * and reports read concurrently, the single-lock mode, and how threads come
 * to allocate in regions of their own. `make check-unit`
 * also runs this program under ThreadSanitizer.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "unit_util.h"

#ifdef __SANITIZE_THREAD__
#define SCALE 8		/* ThreadSanitizer runs several times slower */
#else
#define SCALE 1
#endif

#define THREADS		8
#define LIVE_MAX	256

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

struct record {
	flex_alloc_index_t idx;
	struct flex_vaddr va;
	uint64_t size;
};

struct worker {
	pthread_t th;
	struct flex_alloc *a;
	uint64_t seed;
	long ops;
	const long *until_rounds;	/* if set: also run until it reaches 3 */
	struct record live[LIVE_MAX];
	int nlive;
	long allocs, ooms;
	char error[256];
};

static void record_error(struct worker *w, const char *fmt, flex_alloc_index_t idx, int err)
{
	if (!w->error[0])
		snprintf(w->error, sizeof(w->error), fmt, (unsigned long long)idx, err);
}

/* Random allocations and frees of this thread's own blocks. */
static void *private_work(void *arg)
{
	struct worker *w = arg;

	for (long i = 0; (i < w->ops ||
			  (w->until_rounds && __atomic_load_n(w->until_rounds, __ATOMIC_ACQUIRE) < 3)) &&
			 !w->error[0]; i++) {
		if (w->nlive < LIVE_MAX && (w->nlive == 0 || rng(&w->seed) % 2)) {
			uint64_t size = 128 + rng(&w->seed) % (64 * KiB);
			enum flex_alloc_kind kind = rng(&w->seed) % 8 ? FLEX_ALLOC_TENSOR : FLEX_ALLOC_PROGRAM;
			struct record *r = &w->live[w->nlive];
			int err = flex_alloc_block_alloc(w->a, size, kind, &r->idx);

			if (err == -ENOMEM) {
				w->ooms++;
				continue;
			}
			if (err) {
				record_error(w, "alloc: index 0x%llx, error %d", 0, err);
				break;
			}
			err = flex_alloc_block_resolve(w->a, r->idx, &r->va, &r->size);
			if (err || r->size != flex_alloc_round_size(size))
				record_error(w, "resolve of new index 0x%llx: error %d or wrong size", r->idx, err);
			w->nlive++;
			w->allocs++;
		} else {
			int k = (int)(rng(&w->seed) % w->nlive);
			struct record *r = &w->live[k];
			struct flex_vaddr va;
			int err = flex_alloc_block_resolve(w->a, r->idx, &va, NULL);

			/* Nobody else may have moved or freed it. */
			if (err || va.region_id != r->va.region_id || va.offset != r->va.offset)
				record_error(w, "index 0x%llx moved or vanished (error %d)", r->idx, err);
			err = flex_alloc_block_free(w->a, r->idx);
			if (err)
				record_error(w, "free 0x%llx: error %d", r->idx, err);
			*r = w->live[--w->nlive];
		}
	}
	return NULL;
}

static int by_place(const void *x, const void *y)
{
	const struct record *a = x, *b = y;

	if (a->va.region_id != b->va.region_id)
		return a->va.region_id < b->va.region_id ? -1 : 1;
	return (a->va.offset > b->va.offset) - (a->va.offset < b->va.offset);
}

/* Live blocks of all workers must not overlap. */
static void check_disjoint(struct worker *w, int n)
{
	struct record *all = malloc(THREADS * LIVE_MAX * sizeof(*all));
	int k = 0;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < w[i].nlive; j++)
			all[k++] = w[i].live[j];
	qsort(all, (size_t)k, sizeof(*all), by_place);
	for (int i = 1; i < k; i++)
		require(all[i].va.region_id != all[i - 1].va.region_id ||
			all[i - 1].va.offset + all[i - 1].size <= all[i].va.offset,
			"blocks overlap: region %llu [%llu, +%llu) and [%llu, +%llu)",
			(unsigned long long)all[i].va.region_id,
			(unsigned long long)all[i - 1].va.offset, (unsigned long long)all[i - 1].size,
			(unsigned long long)all[i].va.offset, (unsigned long long)all[i].size);
	free(all);
}

static void run_private(struct flex_alloc *a, const char *what)
{
	struct worker *w = calloc(THREADS, sizeof(*w));
	struct flex_alloc_stats st;
	long allocs = 0;

	for (int i = 0; i < THREADS; i++) {
		w[i].a = a;
		w[i].seed = 1000 + (uint64_t)i;
		w[i].ops = 40000 / SCALE;
		pthread_create(&w[i].th, NULL, private_work, &w[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(w[i].th, NULL);
		ck_assert_msg(!w[i].error[0], "%s: thread %d: %s", what, i, w[i].error);
		allocs += w[i].allocs;
	}
	check_disjoint(w, THREADS);
	check_invariants(a, what);
	for (int i = 0; i < THREADS; i++)
		while (w[i].nlive)
			must_free(a, w[i].live[--w[i].nlive].idx);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_allocs == (uint64_t)allocs && st.num_frees == (uint64_t)allocs,
		      "%s: expected %ld allocations and frees, stats %llu and %llu", what, allocs,
		      (unsigned long long)st.num_allocs, (unsigned long long)st.num_frees);
	ck_assert_msg(st.allocated_bytes == 0 && st.num_free_blocks == st.num_regions,
		      "%s: all freed: expected 0 allocated and one free block per region, got %llu and %llu blocks in %u regions",
		      what, (unsigned long long)st.allocated_bytes,
		      (unsigned long long)st.num_free_blocks, st.num_regions);
	check_invariants(a, what);
	free(w);
}

START_TEST(private_workloads)
{
	struct flex_alloc_config cfg;
	struct flex_alloc *a;

	config_one_size(&cfg, 16 * MiB, 4);
	a = new_allocator(&cfg, 64 * MiB, 0, NULL);
	run_private(a, "per-region locks");
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(private_workloads_global_lock)
{
	struct flex_alloc_config cfg;
	struct flex_alloc *a;

	config_one_size(&cfg, 16 * MiB, 4);
	cfg.flags = FLEX_ALLOC_F_GLOBAL_LOCK;
	cfg.block_strategy = FLEX_ALLOC_BEST_FIT;
	a = new_allocator(&cfg, 64 * MiB, 0, NULL);
	run_private(a, "one global lock, best fit");
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(tight_memory_fill_first)
{
	struct flex_alloc_config cfg;
	struct flex_alloc *a;

	/* Small regions: many out-of-memory returns while others free. */
	config_one_size(&cfg, 2 * MiB, 3);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	a = new_allocator(&cfg, 6 * MiB, 0, NULL);
	run_private(a, "fill first, tight");
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(regions_released_under_load)
{
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_alloc *a;

	config_one_size(&cfg, 1 * MiB, 6);
	cfg.flags = FLEX_ALLOC_F_RELEASE_EMPTY;
	a = new_allocator(&cfg, 6 * MiB, 0, NULL);
	run_private(a, "release empty regions");
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_regions <= 1 &&
		      st.num_region_releases == st.num_region_acquires - st.num_regions &&
		      st.num_region_releases > 0,
		      "all freed: every region but one kept given back; got %u held, %llu acquired, %llu released",
		      st.num_regions, (unsigned long long)st.num_region_acquires,
		      (unsigned long long)st.num_region_releases);
	flex_alloc_trim(a, NULL);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_regions == 0 && st.num_region_releases == st.num_region_acquires,
		      "after trim: expected no region held, got %u", st.num_regions);
	flex_alloc_destroy(a);
}
END_TEST

/* ---- frees by other threads ---- */

#define QUEUE 1024

struct queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	flex_alloc_index_t item[QUEUE];
	int head, count, producers;
};

struct xthread {
	struct flex_alloc *a;
	struct queue *q;
	long n;
	uint64_t seed;
	long done;
	int err;
};

static void *producer(void *arg)
{
	struct xthread *x = arg;

	for (long i = 0; i < x->n; i++) {
		flex_alloc_index_t idx;
		int err = flex_alloc_block_alloc(x->a, 128 + rng(&x->seed) % (16 * KiB), FLEX_ALLOC_TENSOR, &idx);

		if (err) {
			x->err = err;
			break;
		}
		pthread_mutex_lock(&x->q->lock);
		while (x->q->count == QUEUE)
			pthread_cond_wait(&x->q->cond, &x->q->lock);
		x->q->item[(x->q->head + x->q->count++) % QUEUE] = idx;
		pthread_cond_broadcast(&x->q->cond);
		pthread_mutex_unlock(&x->q->lock);
		x->done++;
	}
	pthread_mutex_lock(&x->q->lock);
	x->q->producers--;
	pthread_cond_broadcast(&x->q->cond);
	pthread_mutex_unlock(&x->q->lock);
	return NULL;
}

static void *consumer(void *arg)
{
	struct xthread *x = arg;

	for (;;) {
		flex_alloc_index_t idx;
		int err;

		pthread_mutex_lock(&x->q->lock);
		while (!x->q->count && x->q->producers)
			pthread_cond_wait(&x->q->cond, &x->q->lock);
		if (!x->q->count) {
			pthread_mutex_unlock(&x->q->lock);
			return NULL;
		}
		idx = x->q->item[x->q->head];
		x->q->head = (x->q->head + 1) % QUEUE;
		x->q->count--;
		pthread_cond_broadcast(&x->q->cond);
		pthread_mutex_unlock(&x->q->lock);
		err = flex_alloc_block_free(x->a, idx);
		if (err && !x->err)
			x->err = err;
		x->done++;
	}
}

START_TEST(frees_from_other_threads)
{
	struct queue q = { .producers = THREADS / 2 };
	struct xthread x[THREADS];
	pthread_t th[THREADS];
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_alloc *a;
	long made = 0, freed = 0;

	config_one_size(&cfg, 64 * MiB, 2);
	a = new_allocator(&cfg, 128 * MiB, 0, NULL);
	pthread_mutex_init(&q.lock, NULL);
	pthread_cond_init(&q.cond, NULL);
	for (int i = 0; i < THREADS; i++) {
		x[i] = (struct xthread){ .a = a, .q = &q, .n = 20000 / SCALE, .seed = 77 + (uint64_t)i };
		pthread_create(&th[i], NULL, i < THREADS / 2 ? producer : consumer, &x[i]);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(x[i].err == 0, "thread %d (%s): error %d", i,
			      i < THREADS / 2 ? "producer" : "consumer", x[i].err);
		if (i < THREADS / 2)
			made += x[i].done;
		else
			freed += x[i].done;
	}
	ck_assert_msg(made == freed && made == (THREADS / 2) * (20000 / SCALE),
		      "expected %d allocated and freed, got %ld and %ld", (THREADS / 2) * (20000 / SCALE),
		      made, freed);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.allocated_bytes == 0 && st.num_free_blocks == st.num_regions,
		      "all freed elsewhere: expected nothing allocated and one free block per region, got %llu bytes, %llu blocks",
		      (unsigned long long)st.allocated_bytes, (unsigned long long)st.num_free_blocks);
	check_invariants(a, "frees from other threads");
	pthread_cond_destroy(&q.cond);
	pthread_mutex_destroy(&q.lock);
	flex_alloc_destroy(a);
}
END_TEST

/* ---- stream-ordered frees from many threads ---- */

/* Two queues whose work a "device" thread runs while workers enqueue and free. */
struct squeue {
	struct flex_alloc_queue q;	/* first */
	_Atomic uint64_t enqueued, reached;
};

static uint64_t sq_point(struct flex_alloc_queue *q)
{
	struct squeue *s = (struct squeue *)q;
	uint64_t e = atomic_load(&s->enqueued);

	return e > atomic_load(&s->reached) ? e : 0;
}

static int sq_query(struct flex_alloc_queue *q, uint64_t point)
{
	return point <= atomic_load(&((struct squeue *)q)->reached) ? 0 : -EBUSY;
}

static int sq_wait(struct flex_alloc_queue *q, uint64_t point)
{
	struct squeue *s = (struct squeue *)q;

	while (atomic_load(&s->reached) < point)
		sched_yield();
	return 0;
}

static const struct flex_alloc_queue_ops sq_ops = {
	.point = sq_point, .query = sq_query, .wait = sq_wait,
};

struct sworker {
	struct flex_alloc *a;
	struct squeue *sq;		/* two */
	uint64_t seed;
	long ops, deferred;
	_Atomic int *stop;
	char error[200];
};

/*
 * Allocate, enqueue "work" on a queue and free the block after it (or
 * record a use on the other queue and free it plainly); any two live
 * blocks, pending ones included, must never overlap (check_invariants()
 * at the end), and every block is freed in the end.
 */
static void *stream_work(void *arg)
{
	struct sworker *w = arg;
	flex_alloc_index_t live[32];
	int n = 0;

	for (long i = 0; i < w->ops && !w->error[0]; i++) {
		struct squeue *q = &w->sq[rng(&w->seed) % 2];
		int err;

		if (n < 32 && (n == 0 || rng(&w->seed) % 2)) {
			err = flex_alloc_block_alloc(w->a, 128 + rng(&w->seed) % (256 * KiB),
					       FLEX_ALLOC_TENSOR, &live[n]);
			if (err && err != -ENOMEM)
				snprintf(w->error, sizeof(w->error), "alloc: %d (%s)", err,
					 flex_last_error());
			n += !err;
			continue;
		}
		atomic_fetch_add(&q->enqueued, 1);
		if (rng(&w->seed) % 3) {
			err = flex_alloc_block_free_after(w->a, live[--n], &q->q);
		} else {
			err = flex_alloc_block_record_use(w->a, live[n - 1], &w->sq[0].q);
			if (!err)
				err = flex_alloc_block_free(w->a, live[--n]);
		}
		if (err)
			snprintf(w->error, sizeof(w->error), "free: %d (%s)", err,
				 flex_last_error());
		w->deferred++;
	}
	while (n)
		flex_alloc_block_free_after(w->a, live[--n], &w->sq[0].q);
	return NULL;
}

/* The "device": runs the queues' work as it comes, in bursts. */
static void *run_queues(void *arg)
{
	struct sworker *w = arg;

	while (!atomic_load(w->stop)) {
		for (int k = 0; k < 2; k++)
			atomic_store(&w->sq[k].reached, atomic_load(&w->sq[k].enqueued));
		sched_yield();
	}
	return NULL;
}

START_TEST(stream_ordered_frees_from_many_threads)
{
	struct squeue sq[2] = { { .q.ops = &sq_ops }, { .q.ops = &sq_ops } };
	struct sworker w[THREADS / 2 + 1];
	pthread_t th[THREADS / 2 + 1];
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_alloc *a;
	_Atomic int stop = 0;

	config_one_size(&cfg, 4 * MiB, 4);
	a = new_allocator(&cfg, 16 * MiB, 0, NULL);
	for (int i = 0; i <= THREADS / 2; i++) {
		w[i] = (struct sworker){ .a = a, .sq = sq, .seed = 991 + (uint64_t)i,
					 .ops = 20000 / SCALE, .stop = &stop };
		pthread_create(&th[i], NULL, i < THREADS / 2 ? stream_work : run_queues, &w[i]);
	}
	for (int i = 0; i < THREADS / 2; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(!w[i].error[0], "worker %d: %s", i, w[i].error);
	}
	check_invariants(a, "stream-ordered frees, queues still running");
	atomic_store(&stop, 1);
	pthread_join(th[THREADS / 2], NULL);
	for (int k = 0; k < 2; k++)
		flex_alloc_queue_retire(a, &sq[k].q);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.allocated_bytes == 0 && st.num_pending_frees == 0,
		      "queues retired: expected nothing allocated or pending, got %llu bytes, %llu pending",
		      (unsigned long long)st.allocated_bytes,
		      (unsigned long long)st.num_pending_frees);
	check_invariants(a, "stream-ordered frees, done");
	flex_alloc_destroy(a);
}
END_TEST

/* ---- racing double frees ---- */

struct racer {
	struct flex_alloc *a;
	pthread_barrier_t *go;
	flex_alloc_index_t *target;
	int rounds;
	int wins, refusals, other;
};

static void *race_free(void *arg)
{
	struct racer *r = arg;

	for (int i = 0; i < r->rounds; i++) {
		int err;

		pthread_barrier_wait(&r->go[0]);
		err = flex_alloc_block_free(r->a, r->target[i]);
		if (err == 0)
			r->wins++;
		else if (err == -ENOENT)
			r->refusals++;
		else
			r->other++;
		pthread_barrier_wait(&r->go[1]);
	}
	return NULL;
}

START_TEST(racing_double_frees)
{
	enum { RACERS = 4, ROUNDS = 2000 / SCALE };
	flex_alloc_index_t *target = malloc(ROUNDS * sizeof(*target));
	struct racer r[RACERS];
	pthread_barrier_t go[2];
	pthread_t th[RACERS];
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_alloc *a;
	int wins = 0, refusals = 0;

	config_one_size(&cfg, 16 * MiB, 1);
	a = new_allocator(&cfg, 16 * MiB, 0, NULL);
	for (int i = 0; i < ROUNDS; i++)
		target[i] = must_alloc(a, 128 * (1 + i % 8), FLEX_ALLOC_TENSOR);
	pthread_barrier_init(&go[0], NULL, RACERS);
	pthread_barrier_init(&go[1], NULL, RACERS);
	for (int i = 0; i < RACERS; i++) {
		r[i] = (struct racer){ .a = a, .go = go, .target = target, .rounds = ROUNDS };
		pthread_create(&th[i], NULL, race_free, &r[i]);
	}
	for (int i = 0; i < RACERS; i++) {
		pthread_join(th[i], NULL);
		ck_assert_msg(r[i].other == 0, "racer %d: %d frees failed with an unexpected error", i,
			      r[i].other);
		wins += r[i].wins;
		refusals += r[i].refusals;
	}
	ck_assert_msg(wins == ROUNDS && refusals == ROUNDS * (RACERS - 1),
		      "each index freed exactly once: expected %d successes and %d refusals, got %d and %d",
		      ROUNDS, ROUNDS * (RACERS - 1), wins, refusals);
	flex_alloc_get_stats(a, &st);
	ck_assert_uint_eq(st.num_bad_frees, (uint64_t)ROUNDS * (RACERS - 1));
	ck_assert_uint_eq(st.allocated_bytes, 0);
	check_invariants(a, "after racing frees");
	pthread_barrier_destroy(&go[0]);
	pthread_barrier_destroy(&go[1]);
	free(target);
	flex_alloc_destroy(a);
}
END_TEST

/* ---- observers while others allocate ---- */

struct observer {
	struct flex_alloc *a;
	volatile int *stop;
	long rounds;
	int err;
};

static int count_block(void *user, const struct flex_alloc_block_info *b)
{
	(*(long *)user)++;
	return 0;
}

static void *observe(void *arg)
{
	struct observer *o = arg;
	FILE *null = fopen("/dev/null", "w");

	while (!__atomic_load_n(o->stop, __ATOMIC_ACQUIRE)) {
		struct flex_alloc_stats st;
		long blocks = 0;

		flex_alloc_get_stats(o->a, &st);
		if (st.allocated_bytes > st.reserved_bytes || st.fragmentation < 0 || st.fragmentation > 1)
			o->err = 1;
		if (flex_alloc_walk(o->a, count_block, &blocks))
			o->err = 2;
		if (flex_alloc_report(o->a, null, (enum flex_alloc_report_format)(o->rounds % 3)))
			o->err = 3;
		__atomic_store_n(&o->rounds, o->rounds + 1, __ATOMIC_RELEASE);
	}
	fclose(null);
	return NULL;
}

START_TEST(stats_and_reports_while_allocating)
{
	struct flex_alloc_config cfg;
	struct worker *w = calloc(4, sizeof(*w));
	volatile int stop = 0;
	struct observer o;
	pthread_t obs;
	struct flex_alloc *a;

	config_one_size(&cfg, 16 * MiB, 2);
	a = new_allocator(&cfg, 32 * MiB, 0, NULL);
	o = (struct observer){ .a = a, .stop = &stop };
	pthread_create(&obs, NULL, observe, &o);
	for (int i = 0; i < 4; i++) {
		/* Until the observer has done 3 rounds, however the threads are scheduled. */
		w[i] = (struct worker){ .a = a, .seed = 5 + (uint64_t)i, .ops = 20000 / SCALE,
					.until_rounds = &o.rounds };
		pthread_create(&w[i].th, NULL, private_work, &w[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(w[i].th, NULL);
		ck_assert_msg(!w[i].error[0], "worker %d: %s", i, w[i].error);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	pthread_join(obs, NULL);
	ck_assert_msg(o.err == 0 && o.rounds >= 3, "observer: error %d after %ld rounds (expected >= 3)",
		      o.err, o.rounds);
	check_disjoint(w, 4);
	check_invariants(a, "observed");
	free(w);
	flex_alloc_destroy(a);
}
END_TEST

/* ---- region sharing (allocator.c: region.owner) ---- */

#define TURNS 8

/*
 * Two threads that take strict turns: one allocation each, then the other.
 * No lock is ever busy, so only the sharing rule can part them.
 */
struct turns {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int turn;			/* whose allocation is next: 0 or 1 */
	struct flex_alloc *a;
	flex_alloc_index_t idx[2][TURNS];
	int err[2];
};

struct turn_arg {
	struct turns *t;
	int me;
};

static void *take_turns(void *arg)
{
	struct turn_arg *ta = arg;
	struct turns *t = ta->t;

	for (int i = 0; i < TURNS; i++) {
		pthread_mutex_lock(&t->lock);
		while (t->turn != ta->me)
			pthread_cond_wait(&t->cond, &t->lock);
		pthread_mutex_unlock(&t->lock);
		if (!t->err[ta->me])
			t->err[ta->me] = flex_alloc_block_alloc(t->a, 4 * KiB, FLEX_ALLOC_TENSOR,
							  &t->idx[ta->me][i]);
		pthread_mutex_lock(&t->lock);
		t->turn = !ta->me;
		pthread_cond_broadcast(&t->cond);
		pthread_mutex_unlock(&t->lock);
	}
	return NULL;
}

/*
 * FillFirst sends every allocation to the fullest region that fits: with
 * two threads allocating in turn, all of them would land in one region and
 * its cache lines would move between the cores at every call. The second
 * change of thread there marks the region shared: from then on each thread
 * keeps to a region of its own.
 */
START_TEST(threads_in_turn_get_regions_of_their_own)
{
	struct flex_alloc_config cfg;
	struct turn_arg args[2];
	pthread_t th[2];
	struct turns t = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	uint64_t last[2];

	config_one_size(&cfg, 1 * MiB, 2);
	cfg.fixed_regions = 2;
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	t.a = new_allocator(&cfg, 2 * MiB, 0, NULL);
	for (int i = 0; i < 2; i++) {
		args[i] = (struct turn_arg){ &t, i };
		pthread_create(&th[i], NULL, take_turns, &args[i]);
	}
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	ck_assert_msg(!t.err[0] && !t.err[1], "allocations in turn: expected 0 and 0, got %d and %d",
		      t.err[0], t.err[1]);
	/* After the first three allocations, each thread stays in one region. */
	for (int me = 0; me < 2; me++) {
		last[me] = must_resolve(t.a, t.idx[me][TURNS - 1]).region_id;
		for (int i = 2; i < TURNS; i++) {
			uint64_t id = must_resolve(t.a, t.idx[me][i]).region_id;

			ck_assert_msg(id == last[me],
				      "thread %d allocation %d: expected region 0x%llx (its own), got 0x%llx",
				      me, i, (unsigned long long)last[me], (unsigned long long)id);
		}
	}
	ck_assert_msg(last[0] != last[1],
		      "threads allocating in turn: expected different regions, both in 0x%llx",
		      (unsigned long long)last[0]);
	check_invariants(t.a, "threads in turn");
	flex_alloc_destroy(t.a);
}
END_TEST

struct handover {
	struct flex_alloc *a;
	flex_alloc_index_t idx[3];
	int err;
};

static void *allocate_three(void *arg)
{
	struct handover *h = arg;

	for (int i = 0; i < 3 && !h->err; i++)
		h->err = flex_alloc_block_alloc(h->a, 4 * KiB, FLEX_ALLOC_TENSOR, &h->idx[i]);
	return NULL;
}

/*
 * A region used by one thread and then by another (work handed to a
 * thread of a pool) is not shared: the second thread gets exactly the
 * strategy's regions, here LoadBalancing's alternation.
 */
START_TEST(handover_to_another_thread_keeps_the_strategy)
{
	struct flex_alloc_config cfg;
	struct handover h = { 0 };
	flex_alloc_index_t first;
	uint64_t r0, r1;
	pthread_t th;

	config_one_size(&cfg, 1 * MiB, 2);
	cfg.fixed_regions = 2;
	h.a = new_allocator(&cfg, 2 * MiB, 0, NULL);
	/* This thread allocates first: the tie goes to the first region. */
	first = must_alloc(h.a, 4 * KiB, FLEX_ALLOC_TENSOR);
	r0 = must_resolve(h.a, first).region_id;
	pthread_create(&th, NULL, allocate_three, &h);
	pthread_join(th, NULL);
	ck_assert_msg(!h.err, "allocations after the handover: expected 0, got %d", h.err);
	r1 = must_resolve(h.a, h.idx[0]).region_id;
	ck_assert_msg(r1 != r0, "LoadBalancing: expected the emptier region, got the first one (0x%llx)",
		      (unsigned long long)r0);
	ck_assert_msg(must_resolve(h.a, h.idx[1]).region_id == r0,
		      "LoadBalancing tie after a handover: expected region 0x%llx (first), got 0x%llx",
		      (unsigned long long)r0,
		      (unsigned long long)must_resolve(h.a, h.idx[1]).region_id);
	ck_assert_msg(must_resolve(h.a, h.idx[2]).region_id == r1,
		      "LoadBalancing after a handover: expected region 0x%llx (emptier), got 0x%llx",
		      (unsigned long long)r1,
		      (unsigned long long)must_resolve(h.a, h.idx[2]).region_id);
	check_invariants(h.a, "handover");
	flex_alloc_destroy(h.a);
}
END_TEST


/* ---- a thread's own region while others work (allocator.c: try_regions) ---- */

enum act_op { ACT_NONE, ACT_ALLOC, ACT_FREE, ACT_STEPS, ACT_QUIT };

/* A thread that runs one operation at a time, as the test posts them. */
struct actor {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	enum act_op op;			/* posted; ACT_NONE once done */
	struct flex_alloc *a;
	flex_alloc_index_t idx;		/* ACT_ALLOC: the result; ACT_FREE: what to free */
	long steps;			/* ACT_STEPS: allocate and free this many times */
	uint64_t region_id;		/* ... expecting every block in this region */
	long strays;			/* ... and counting those that were not */
	int err;
};

static void *act_main(void *arg)
{
	struct actor *c = arg;
	enum act_op op;

	for (;;) {
		pthread_mutex_lock(&c->lock);
		while (c->op == ACT_NONE)
			pthread_cond_wait(&c->cond, &c->lock);
		op = c->op;
		pthread_mutex_unlock(&c->lock);
		if (op == ACT_QUIT)
			return NULL;
		if (op == ACT_ALLOC && !c->err)
			c->err = flex_alloc_block_alloc(c->a, 4 * KiB, FLEX_ALLOC_TENSOR, &c->idx);
		if (op == ACT_FREE && !c->err)
			c->err = flex_alloc_block_free(c->a, c->idx);
		for (long i = 0; op == ACT_STEPS && i < c->steps && !c->err; i++) {
			struct flex_vaddr va;

			c->err = flex_alloc_block_alloc(c->a, 4 * KiB, FLEX_ALLOC_TENSOR, &c->idx);
			if (!c->err)
				c->err = flex_alloc_block_resolve(c->a, c->idx, &va, NULL);
			if (!c->err && va.region_id != c->region_id)
				c->strays++;
			if (!c->err)
				c->err = flex_alloc_block_free(c->a, c->idx);
		}
		pthread_mutex_lock(&c->lock);
		c->op = ACT_NONE;
		pthread_cond_broadcast(&c->cond);
		pthread_mutex_unlock(&c->lock);
	}
}

static void act_start(struct actor *c, struct flex_alloc *a)
{
	*c = (struct actor){ .a = a };
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	pthread_create(&c->th, NULL, act_main, c);
}

static void act_post(struct actor *c, enum act_op op)
{
	pthread_mutex_lock(&c->lock);
	c->op = op;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

static void act_wait(struct actor *c)
{
	pthread_mutex_lock(&c->lock);
	while (c->op != ACT_NONE)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
	ck_assert_msg(!c->err, "operation of a test thread: expected 0, got %d (%s)", c->err,
		      flex_last_error());
}

/* Run @op on @c and wait for it; returns the region of c->idx for ACT_ALLOC. */
static uint64_t act_do(struct actor *c, enum act_op op)
{
	act_post(c, op);
	act_wait(c);
	return op == ACT_ALLOC ? must_resolve(c->a, c->idx).region_id : 0;
}

static void act_stop(struct actor *c)
{
	act_post(c, ACT_QUIT);
	pthread_join(c->th, NULL);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->cond);
}

/*
 * Two threads allocating in turn under FillFirst (as in
 * threads_in_turn_get_regions_of_their_own): t[1] settles in the first
 * region, t[0] in the second. Returns t[0]'s first block, which is in t[1]'s
 * region; home[i] is thread i's region.
 */
static flex_alloc_index_t settle_two(struct actor t[2], uint64_t home[2])
{
	flex_alloc_index_t stray;
	uint64_t r00, r10;

	r00 = act_do(&t[0], ACT_ALLOC);
	stray = t[0].idx;
	r10 = act_do(&t[1], ACT_ALLOC);
	home[0] = act_do(&t[0], ACT_ALLOC);
	home[1] = act_do(&t[1], ACT_ALLOC);
	ck_assert_msg(r00 == r10 && home[1] == r10 && home[0] != home[1],
		      "two threads in turn: expected the first two blocks and thread 1's second in one region, thread 0's second in another; got 0x%llx 0x%llx, 0x%llx 0x%llx",
		      (unsigned long long)r00, (unsigned long long)r10,
		      (unsigned long long)home[0], (unsigned long long)home[1]);
	return stray;
}

/* Holds the region lock of one free (the debug log runs under it) until released. */
struct hold {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool armed, inside, release;
	pthread_t thread;		/* whose free to hold */
};

static void hold_log(void *user, int priority, const char *msg)
{
	struct hold *h = user;

	pthread_mutex_lock(&h->lock);
	if (h->armed && pthread_equal(pthread_self(), h->thread) &&
	    strncmp(msg, "flex_alloc: free index", 22) == 0) {
		h->armed = false;
		h->inside = true;
		pthread_cond_broadcast(&h->cond);
		while (!h->release)
			pthread_cond_wait(&h->cond, &h->lock);
	}
	pthread_mutex_unlock(&h->lock);
}

/*
 * A thread that keeps to a region of its own finds it locked by another
 * thread freeing a block it allocated there earlier: it waits instead of
 * moving to another region (where the other thread's blocks would then be
 * freed, and the threads would keep meeting).
 */
START_TEST(own_region_waited_for_while_another_frees_there)
{
	struct hold h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };
	struct timespec pause = { .tv_sec = 0, .tv_nsec = 50 * 1000 * 1000 };
	struct flex_alloc_config cfg;
	struct flex_alloc *a;
	struct actor t[2];
	uint64_t home[2], got;
	flex_alloc_index_t stray;

	config_one_size(&cfg, 1 * MiB, 3);
	cfg.fixed_regions = 3;
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	cfg.flags = FLEX_ALLOC_F_DEBUG;
	cfg.log_fn = hold_log;
	cfg.log_user = &h;
	a = new_allocator(&cfg, 3 * MiB, 0, NULL);
	act_start(&t[0], a);
	act_start(&t[1], a);
	stray = settle_two(t, home);

	/* Thread 0 frees its block in thread 1's region and stays in the lock... */
	pthread_mutex_lock(&h.lock);
	h.thread = t[0].th;
	h.armed = true;
	pthread_mutex_unlock(&h.lock);
	t[0].idx = stray;
	act_post(&t[0], ACT_FREE);
	pthread_mutex_lock(&h.lock);
	while (!h.inside)
		pthread_cond_wait(&h.cond, &h.lock);
	pthread_mutex_unlock(&h.lock);
	/* ... while thread 1 allocates (given time to find the lock taken). */
	act_post(&t[1], ACT_ALLOC);
	nanosleep(&pause, NULL);
	pthread_mutex_lock(&h.lock);
	h.release = true;
	pthread_cond_broadcast(&h.cond);
	pthread_mutex_unlock(&h.lock);
	act_wait(&t[0]);
	act_wait(&t[1]);
	got = must_resolve(a, t[1].idx).region_id;
	ck_assert_msg(got == home[1],
		      "allocation while another thread frees in the own region: expected region 0x%llx (its own), got 0x%llx",
		      (unsigned long long)home[1], (unsigned long long)got);
	act_stop(&t[0]);
	act_stop(&t[1]);
	check_invariants(a, "own region waited for");
	flex_alloc_destroy(a);
}
END_TEST

/*
 * Threads that settled in regions of their own stop meeting each other,
 * yet must not go back to the strategy (which here would send thread 0 into
 * thread 1's fuller region) while the other still allocates: thread 0 keeps
 * its region for more than the 65536 allocations allocator.h names.
 */
START_TEST(own_region_kept_while_others_allocate)
{
	struct flex_alloc_config cfg;
	struct flex_alloc *a;
	struct actor t[2];
	uint64_t home[2];
	long rounds = 70000 / 64 + 1;

	config_one_size(&cfg, 1 * MiB, 2);
	cfg.fixed_regions = 2;
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	a = new_allocator(&cfg, 2 * MiB, 0, NULL);
	act_start(&t[0], a);
	act_start(&t[1], a);
	settle_two(t, home);
	t[0].region_id = home[0];
	t[1].region_id = home[1];
	for (long i = 0; i < rounds; i++) {
		t[1].steps = 1;
		act_do(&t[1], ACT_STEPS);
		t[0].steps = 64;
		act_do(&t[0], ACT_STEPS);
	}
	ck_assert_msg(t[0].strays == 0 && t[1].strays == 0,
		      "threads in regions of their own for %ld allocations: expected no block elsewhere, got %ld and %ld",
		      rounds * 64, t[0].strays, t[1].strays);
	act_stop(&t[0]);
	act_stop(&t[1]);
	check_invariants(a, "own region kept");
	flex_alloc_destroy(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("threads");
	TCase *tc = tcase_create("concurrency");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, private_workloads);
	tcase_add_test(tc, private_workloads_global_lock);
	tcase_add_test(tc, tight_memory_fill_first);
	tcase_add_test(tc, regions_released_under_load);
	tcase_add_test(tc, frees_from_other_threads);
	tcase_add_test(tc, racing_double_frees);
	tcase_add_test(tc, stream_ordered_frees_from_many_threads);
	tcase_add_test(tc, stats_and_reports_while_allocating);
	tcase_add_test(tc, threads_in_turn_get_regions_of_their_own);
	tcase_add_test(tc, handover_to_another_thread_keeps_the_strategy);
	tcase_add_test(tc, own_region_waited_for_while_another_frees_there);
	tcase_add_test(tc, own_region_kept_while_others_allocate);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
