// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator benchmark (make bench-alloc). No device: regions come from
 * the in-memory region source.
 *
 * The trace, generated here from a fixed seed (splitmix64, seed TRACE_SEED)
 * so every run replays the same operations:
 *   - sizes are log-uniform between 128 B and 4 MiB (128 * 2^(15u), u
 *     uniform in [0,1)), mean about 394 KiB;
 *   - a pool (one region) of twice the expected live bytes;
 *   - fill: allocate N blocks; warm-up: 2N steps; then the timed steps;
 *   - a step frees a uniformly chosen live block and allocates a new one in
 *     its place, so N blocks stay live (a steady state with no locality:
 *     every free touches a random block).
 * Sizes and victims are drawn before timing starts.
 *
 * Figures, each on its own line:
 *   alloc_free_ns_steady_10k   ns per step (one free + one allocate) at
 *                              N = 10,000, default strategies (LoadBalancing,
 *                              FirstFit), lock and index table included
 *                              (median of REPEATS runs)
 *   alloc_scaling_100k_vs_1k   the same at N = 100,000 over N = 1,000
 *   alloc_frag_peak_bestfit    highest 1 - largest free / total free seen
 *                              after any step of the N = 10,000 trace
 *                              (warm-up and timed steps) with BestFit
 *   alloc_util_first_oom_*     after that trace, allocate (no more frees)
 *                              until the first failure: allocated / pool
 *   alloc_2threads_vs_1        throughput of 2 threads each running the
 *                              steady trace on 5,000 live blocks of one
 *                              default allocator (12 regions of 12 GiB),
 *                              over 1 thread running it on 10,000 (median
 *                              of THROUGHPUT_RUNS interleaved runs each)
 * Single-thread costs are timed with the thread's CPU clock (time spent
 * descheduled on a shared machine is not the allocator's); throughput with
 * wall time. Lines starting with '#' give context: the machine's load and
 * whether its CPU has AVX2 (the free-block tree then scans with its AVX2
 * build), the costs at each size, the same throughput with one global
 * lock, how much two threads of work that shares nothing get done against
 * one on this machine right now (the ceiling of alloc_2threads_vs_1) and
 * how long a cache line takes to go to the other thread and back (on this
 * shared VM it swings between about 150 and 750 ns, and with it how much
 * two threads of one allocator get done when their regions mix), and
 * the 10k cost again once the process has threads: while it has one, as
 * during the first figures, the region locks are skipped (see
 * libflex/src/allocator_internal.h), so that line is the cost with them.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <flex/allocator.h>

#define TRACE_SEED	0x5eed0f1e7a110cULL
#define MIN_SIZE	128.0
#define SIZE_OCTAVES	15.0	/* 128 B * 2^15 = 4 MiB */
#define MEAN_SIZE	403400ULL	/* (4 MiB - 128 B) / ln(2^15) */
#define REPEATS		5
#define THROUGHPUT_RUNS	5
#define GiB		(1ULL << 30)

static void die(const char *what, int err)
{
	fprintf(stderr, "alloc_bench: %s failed (%d): %s\n", what, err, flex_alloc_last_error());
	exit(1);
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t trace_size(uint64_t *s)
{
	double u = (double)(splitmix64(s) >> 11) * 0x1.0p-53;

	return (uint32_t)(MIN_SIZE * exp2(u * SIZE_OCTAVES));
}

struct trace {
	uint32_t *fill;		/* N sizes */
	uint32_t *size;		/* per step */
	uint32_t *victim;	/* per step: index into the live array */
	size_t live, steps;
};

static struct trace make_trace(size_t live, size_t steps, uint64_t seed)
{
	struct trace t = { .live = live, .steps = steps };

	t.fill = malloc(live * sizeof(*t.fill));
	t.size = malloc(steps * sizeof(*t.size));
	t.victim = malloc(steps * sizeof(*t.victim));
	if (!t.fill || !t.size || !t.victim)
		die("malloc", -1);
	for (size_t i = 0; i < live; i++)
		t.fill[i] = trace_size(&seed);
	for (size_t i = 0; i < steps; i++) {
		t.size[i] = trace_size(&seed);
		t.victim[i] = (uint32_t)(splitmix64(&seed) % live);
	}
	return t;
}

static void free_trace(struct trace *t)
{
	free(t->fill);
	free(t->size);
	free(t->victim);
}

static double clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Wall time, for throughput with several threads. */
static double now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/*
 * CPU time of the calling thread, for single-thread costs: the machine
 * running this may be shared, and time spent descheduled is not the
 * allocator's.
 */
static double cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

static void quiet(void *user, int priority, const char *msg)
{
}

/* An allocator whose single region is @pool bytes (one fallback size). */
static struct flex_alloc *one_region_allocator(uint64_t pool,
					       enum flex_alloc_block_strategy strategy)
{
	struct flex_region_source *src;
	struct flex_alloc_config cfg;
	struct flex_alloc *a;
	int err;

	pool = (pool + 127) & ~127ULL;
	err = flex_region_source_new_memory(pool, 0, &src);
	if (err)
		die("flex_region_source_new_memory", err);
	flex_alloc_config_init(&cfg);
	cfg.block_strategy = strategy;
	cfg.num_fallback_sizes = 1;
	cfg.fallback_sizes[0] = pool;
	cfg.max_regions = 1;
	cfg.log_fn = quiet;
	err = flex_alloc_new(src, &cfg, &a);
	if (err)
		die("flex_alloc_new", err);
	flex_region_source_unref(src);
	return a;
}

static void fill(struct flex_alloc *a, const struct trace *t, flex_alloc_index_t *live)
{
	for (size_t i = 0; i < t->live; i++) {
		int err = flex_alloc_alloc(a, t->fill[i], FLEX_ALLOC_TENSOR, &live[i]);

		if (err)
			die("fill", err);
	}
}

/* Steps [from, to) of @t; returns ns per step. */
static double run_steps(struct flex_alloc *a, const struct trace *t, flex_alloc_index_t *live,
			size_t from, size_t to)
{
	double t0 = cpu_ns();

	for (size_t i = from; i < to; i++) {
		uint32_t v = t->victim[i];
		int err = flex_alloc_free(a, live[v]);

		if (!err)
			err = flex_alloc_alloc(a, t->size[i], FLEX_ALLOC_TENSOR, &live[v]);
		if (err)
			die("steady step", err);
	}
	return (cpu_ns() - t0) / (double)(to - from);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* Median ns per step of the steady trace with @live blocks. */
static double steady_ns(size_t live, enum flex_alloc_block_strategy strategy)
{
	size_t warm = 2 * live, per = live < 100000 ? 400000 : 200000;
	struct trace t = make_trace(live, warm + REPEATS * per, TRACE_SEED + live);
	flex_alloc_index_t *idx = malloc(live * sizeof(*idx));
	struct flex_alloc *a = one_region_allocator(2 * MEAN_SIZE * live, strategy);
	double ns[REPEATS];

	fill(a, &t, idx);
	run_steps(a, &t, idx, 0, warm);
	for (int r = 0; r < REPEATS; r++)
		ns[r] = run_steps(a, &t, idx, warm + r * per, warm + (r + 1) * per);
	qsort(ns, REPEATS, sizeof(ns[0]), cmp_double);
	flex_alloc_destroy(a);
	free(idx);
	free_trace(&t);
	return ns[REPEATS / 2];
}

/* Peak fragmentation over the 10k trace, then utilisation at first OOM. */
static void frag_and_util(enum flex_alloc_block_strategy strategy, double *frag_peak, double *util)
{
	size_t live = 10000, steps = 20 * live;
	uint64_t seed = TRACE_SEED ^ 0xf111;
	struct trace t = make_trace(live, steps, TRACE_SEED + live);
	flex_alloc_index_t *idx = malloc(live * sizeof(*idx)), extra;
	struct flex_alloc *a = one_region_allocator(2 * MEAN_SIZE * live, strategy);
	struct flex_alloc_stats st;
	double peak = 0;

	fill(a, &t, idx);
	for (size_t i = 0; i < steps; i++) {
		run_steps(a, &t, idx, i, i + 1);
		flex_alloc_get_stats(a, &st);
		if (st.fragmentation > peak)
			peak = st.fragmentation;
	}
	while (flex_alloc_alloc(a, trace_size(&seed), FLEX_ALLOC_TENSOR, &extra) == 0)
		;
	flex_alloc_get_stats(a, &st);
	*frag_peak = peak;
	*util = (double)st.allocated_bytes / (double)st.reserved_bytes;
	flex_alloc_destroy(a);
	free(idx);
	free_trace(&t);
}

struct worker {
	pthread_t thread;
	pthread_barrier_t *start;
	struct flex_alloc *a;
	struct trace t;
	flex_alloc_index_t *live;
	size_t warm;
	double end_ns;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->start);
	run_steps(w->a, &w->t, w->live, w->warm, w->t.steps);
	w->end_ns = now_ns();
	return NULL;
}

/* Steps per second of @nthreads threads sharing @total live blocks. */
static double throughput(unsigned int nthreads, size_t total, unsigned int flags)
{
	size_t live = total / nthreads, steps = 1000000;
	struct flex_region_source *src;
	struct flex_alloc_config cfg;
	struct worker w[2];
	pthread_barrier_t start;
	struct flex_alloc *a;
	double t0, end = 0;
	int err;

	err = flex_region_source_new_memory(144 * GiB, 0, &src);
	if (err)
		die("flex_region_source_new_memory", err);
	flex_alloc_config_init(&cfg);
	cfg.flags = flags;
	cfg.log_fn = quiet;
	err = flex_alloc_new(src, &cfg, &a);
	if (err)
		die("flex_alloc_new", err);
	flex_region_source_unref(src);
	pthread_barrier_init(&start, NULL, nthreads + 1);
	for (unsigned int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .start = &start, .a = a, .warm = 2 * live };
		w[i].t = make_trace(live, w[i].warm + steps, TRACE_SEED * (i + 3) + total);
		w[i].live = malloc(live * sizeof(*w[i].live));
		fill(a, &w[i].t, w[i].live);
		run_steps(a, &w[i].t, w[i].live, 0, w[i].warm);
	}
	for (unsigned int i = 0; i < nthreads; i++)
		pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
	pthread_barrier_wait(&start);
	t0 = now_ns();
	for (unsigned int i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		if (w[i].end_ns > end)
			end = w[i].end_ns;
		free(w[i].live);
		free_trace(&w[i].t);
	}
	pthread_barrier_destroy(&start);
	flex_alloc_destroy(a);
	return (double)(nthreads * steps) / ((end - t0) / 1e9);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

/*
 * What two threads of work that shares nothing (each its own counter, in
 * registers) get done against one, in @ms milliseconds: on a machine whose
 * two vCPUs are not two free cores this is well below 2.
 */
static void *spin(void *arg)
{
	uint64_t *n = arg, x = 1;
	double end = now_ns() + 50e6;

	while (now_ns() < end) {
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		*n += 10000;
	}
	*n += x & 1;	/* keep the loop */
	return NULL;
}

/* Cache-line round trips between two threads: each waits for its turn. */
#define PING_PONGS	100000UL

static _Atomic unsigned long ball __attribute__((aligned(64)));

static void play(unsigned long first)
{
	for (unsigned long i = first; i < 2 * PING_PONGS; i += 2) {
		while (atomic_load_explicit(&ball, memory_order_acquire) != i)
			;
		atomic_store_explicit(&ball, i + 1, memory_order_release);
	}
}

static void *ping(void *arg)
{
	play(1);
	return NULL;
}

static double round_trip_ns(void)
{
	pthread_t th;
	double t0;

	atomic_store(&ball, 0);
	pthread_create(&th, NULL, ping, NULL);
	t0 = now_ns();
	play(0);
	pthread_join(th, NULL);
	return (now_ns() - t0) / PING_PONGS;
}

static double shared_nothing_ratio(void)
{
	uint64_t one = 0, two[2] = { 0, 0 };
	pthread_t th[2];

	pthread_create(&th[0], NULL, spin, &one);
	pthread_join(th[0], NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, spin, &two[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	return (double)(two[0] + two[1]) / (double)one;
}

/* The machine may be shared: say how busy it was. */
static void print_load(void)
{
	char buf[128] = "";
	FILE *f = fopen("/proc/loadavg", "r");

	if (f && fgets(buf, sizeof(buf), f))
		printf("# load average at start: %s", buf);
	if (f)
		fclose(f);
}

int main(void)
{
	double ns1k, ns10k, ns100k, ns10k_bf, frag_bf, util_ff, util_bf, frag_ff, one, two, one_g, two_g;

	print_load();
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	printf("# CPU has AVX2: %s\n", __builtin_cpu_supports("avx2") ? "yes" : "no");
#endif

	ns1k = steady_ns(1000, FLEX_ALLOC_FIRST_FIT);
	ns10k = steady_ns(10000, FLEX_ALLOC_FIRST_FIT);
	ns100k = steady_ns(100000, FLEX_ALLOC_FIRST_FIT);
	ns10k_bf = steady_ns(10000, FLEX_ALLOC_BEST_FIT);
	printf("# steady trace ns per free+alloc: 1k %.1f, 10k %.1f, 100k %.1f; 10k with BestFit %.1f\n",
	       ns1k, ns10k, ns100k, ns10k_bf);
	printf("bench: alloc_free_ns_steady_10k %.1f ns\n", ns10k);
	printf("bench: alloc_scaling_100k_vs_1k %.2f x\n", ns100k / ns1k);
	fflush(stdout);

	frag_and_util(FLEX_ALLOC_BEST_FIT, &frag_bf, &util_bf);
	frag_and_util(FLEX_ALLOC_FIRST_FIT, &frag_ff, &util_ff);
	printf("# peak fragmentation with FirstFit: %.4f\n", frag_ff);
	printf("bench: alloc_frag_peak_bestfit %.4f frac\n", frag_bf);
	printf("bench: alloc_util_first_oom_firstfit %.4f frac\n", util_ff);
	printf("bench: alloc_util_first_oom_bestfit %.4f frac\n", util_bf);
	fflush(stdout);

	/* Interleaved 1- and 2-thread runs, median of THROUGHPUT_RUNS each. */
	double o[THROUGHPUT_RUNS], t[THROUGHPUT_RUNS], og[THROUGHPUT_RUNS], tg[THROUGHPUT_RUNS];
	double sn[THROUGHPUT_RUNS], rt[THROUGHPUT_RUNS];

	for (int i = 0; i < THROUGHPUT_RUNS; i++) {
		o[i] = throughput(1, 10000, 0);
		t[i] = throughput(2, 10000, 0);
		og[i] = throughput(1, 10000, FLEX_ALLOC_F_GLOBAL_LOCK);
		tg[i] = throughput(2, 10000, FLEX_ALLOC_F_GLOBAL_LOCK);
		sn[i] = shared_nothing_ratio();
		rt[i] = round_trip_ns();
	}
	one = median(o, THROUGHPUT_RUNS);
	two = median(t, THROUGHPUT_RUNS);
	one_g = median(og, THROUGHPUT_RUNS);
	two_g = median(tg, THROUGHPUT_RUNS);
	printf("# steps/s per-region locks: 1 thread %.0f, 2 threads %.0f\n", one, two);
	printf("# steps/s one global lock:  1 thread %.0f, 2 threads %.0f (ratio %.2f x)\n",
	       one_g, two_g, two_g / one_g);
	printf("# 2 threads of work that shares nothing: %.2f x one thread; cache line round trip between them %.0f ns (this machine, now)\n",
	       median(sn, THROUGHPUT_RUNS), median(rt, THROUGHPUT_RUNS));
	printf("bench: alloc_2threads_vs_1 %.2f x\n", two / one);
	fflush(stdout);
	printf("# steady trace 10k once the process has threads (region locks taken): %.1f ns\n",
	       steady_ns(10000, FLEX_ALLOC_FIRST_FIT));
	return 0;
}
