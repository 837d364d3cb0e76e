// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator benchmark (make bench-alloc). No device: regions come from
 * the in-memory region source. With --steady-only it gives only the
 * single-thread figures at N = 10,000 (both strategies' costs, their ratio,
 * fragmentation and utilisation) and starts no thread.
 *
 * The trace, generated here from a fixed seed (splitmix64, seed TRACE_SEED)
 * so every run replays the same operations:
 *   - sizes are log-uniform between 128 B and 4 MiB (128 * 2^(15u), u
 *     uniform in [0,1)), mean about 394 KiB;
 *   - a pool (one region) of twice the expected live bytes;
 *   - fill: allocate N blocks; warm-up: 2N steps; then REPEATS timed
 *     repetitions, each after N untimed steps;
 *   - a step frees a uniformly chosen live block and allocates a new one in
 *     its place, so N blocks stay live (a steady state with no locality:
 *     every free touches a random block).
 * Sizes and victims are drawn before timing starts. The loop loads the
 * caller's own entry of the next victims early (CALLER_PREFETCH): that
 * miss is the benchmark's bookkeeping, not the allocator's.
 *
 * Figures, each on its own line:
 *   alloc_free_ns_steady_10k   ns per step (one free + one allocate) at
 *                              N = 10,000, default strategies (LoadBalancing,
 *                              FirstFit), lock and index table included
 *                              (median of REPEATS repetitions)
 *   alloc_scaling_100k_vs_1k   the same at N = 100,000 over N = 1,000: the
 *                              repetitions of 1k, 10k and 100k take turns,
 *                              and the figure is the median of the rounds'
 *                              ratios (the load of a shared machine drifts)
 *   alloc_free_ns_steady_10k_bestfit  the same as alloc_free_ns_steady_10k
 *                              with BestFit: its repetitions take turns
 *                              with those (each right after the FirstFit
 *                              one of its round)
 *   alloc_bestfit_vs_firstfit  BestFit over FirstFit at N = 10,000: the
 *                              median of the rounds' ratios
 *   alloc_frag_peak_bestfit    highest 1 - largest free / total free seen
 *                              after any step of the N = 10,000 trace
 *                              (warm-up and timed steps) with BestFit
 *   alloc_util_first_oom_*     after that trace, allocate (no more frees)
 *                              until the first failure: allocated / pool
 *   alloc_2threads_vs_1        throughput (steps per second of wall time,
 *                              over WINDOW_MS while all threads run) of 2
 *                              threads each running the steady trace on
 *                              5,000 live blocks of one default allocator
 *                              (LoadBalancing, regions scaled to the
 *                              144 GiB source: 12 of 12 GiB), over
 *                              1 thread running
 *                              it on 10,000: median of the ratios of
 *                              THROUGHPUT_RUNS rounds, each a 1-thread run
 *                              then a 2-thread run
 * Single-thread costs are timed with the thread's CPU clock (time spent
 * descheduled on a shared machine is not the allocator's); throughput with
 * wall time. Lines starting with '#' give context: the machine's load and
 * whether its CPU has AVX2 (the free-block tree and the best-fit
 * index's bins then scan with their AVX2 builds); the costs at each size
 * and each round's ratios; the 2-thread over 1-thread ratio of steps per second of the threads' own CPU time
 * (the cost of sharing, which the machine's load hardly swings: about 1
 * when the threads keep to regions of their own); the same throughput
 * with one global lock; how much two threads of work that shares nothing
 * get done against one on this machine right now (the ceiling of
 * alloc_2threads_vs_1) and how long a cache line takes to go to the other
 * thread and back (on this shared VM it swings between about 150 and
 * 750 ns, and with it how much two threads of one allocator get done when
 * their regions mix); and the 10k cost again once the process has
 * threads: while it has one, as during the first figures, the region
 * locks are skipped (see libflex/src/allocator_internal.h), so that line
 * is the cost with them.
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
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
#define THROUGHPUT_RUNS	11
#define GiB		(1ULL << 30)

static void die(const char *what, int err)
{
	fprintf(stderr, "alloc_bench: %s failed (%d): %s\n", what, err, flex_last_error());
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
		int err = flex_alloc_block_alloc(a, t->fill[i], FLEX_ALLOC_TENSOR, &live[i]);

		if (err)
			die("fill", err);
	}
}

/*
 * How many steps ahead the loop below loads the caller's own entry of the
 * victim (live[victim]). That array is the benchmark's bookkeeping, not the
 * allocator's: at 100,000 live blocks it is 800 KB read at random, a cache
 * miss per step that is not part of what the allocator costs (a real
 * caller frees an index it keeps next to the tensor it is done with). The
 * victims are known in advance, so the loop loads that entry early; the
 * allocator's own lookups (slot, tree) are not helped by it.
 */
#define CALLER_PREFETCH	8

/* Steps [from, to) of @t. */
static void steps(struct flex_alloc *a, const struct trace *t, flex_alloc_index_t *live,
		  size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		uint32_t v = t->victim[i];
		int err;

		if (i + CALLER_PREFETCH < to)
			__builtin_prefetch(&live[t->victim[i + CALLER_PREFETCH]], 1);
		err = flex_alloc_block_free(a, live[v]);
		if (!err)
			err = flex_alloc_block_alloc(a, t->size[i], FLEX_ALLOC_TENSOR, &live[v]);
		if (err)
			die("steady step", err);
	}
}

/* Steps [from, to) of @t; returns ns per step. */
static double run_steps(struct flex_alloc *a, const struct trace *t, flex_alloc_index_t *live,
			size_t from, size_t to)
{
	double t0 = cpu_ns();

	steps(a, t, live, from, to);
	return (cpu_ns() - t0) / (double)(to - from);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/*
 * A steady trace with @live blocks, filled and warmed up, whose timed
 * repetitions can be interleaved with other sizes' (steady_rep()): the
 * machine is shared, and a ratio of two sizes measured minutes apart
 * would be a ratio of two loads.
 */
struct steady {
	struct trace t;
	flex_alloc_index_t *idx;
	struct flex_alloc *a;
	size_t per;		/* timed steps per repetition */
	size_t next;		/* next step of the trace */
};

static void steady_init(struct steady *st, size_t live, enum flex_alloc_block_strategy strategy)
{
	size_t warm = 2 * live;

	st->per = live < 100000 ? 400000 : 200000;
	/* Each repetition first replays @live untimed steps: see steady_rep(). */
	st->t = make_trace(live, warm + REPEATS * (live + st->per), TRACE_SEED + live);
	st->idx = malloc(live * sizeof(*st->idx));
	if (!st->idx)
		die("malloc", -1);
	st->a = one_region_allocator(2 * MEAN_SIZE * live, strategy);
	fill(st->a, &st->t, st->idx);
	run_steps(st->a, &st->t, st->idx, 0, warm);
	st->next = warm;
}

/*
 * One timed repetition: ns per step. Another size ran just before and
 * pushed this one's blocks out of the caches, so @live untimed steps bring
 * them back first (as in a run of this size alone, where each repetition
 * follows the previous one).
 */
static double steady_rep(struct steady *st)
{
	double ns;

	run_steps(st->a, &st->t, st->idx, st->next, st->next + st->t.live);
	st->next += st->t.live;
	ns = run_steps(st->a, &st->t, st->idx, st->next, st->next + st->per);
	st->next += st->per;
	return ns;
}

static void steady_fini(struct steady *st)
{
	flex_alloc_destroy(st->a);
	free(st->idx);
	free_trace(&st->t);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

/* Median ns per step of the steady trace with @live blocks, on its own. */
static double steady_ns(size_t live, enum flex_alloc_block_strategy strategy)
{
	struct steady st;
	double ns[REPEATS];

	steady_init(&st, live, strategy);
	for (int r = 0; r < REPEATS; r++)
		ns[r] = steady_rep(&st);
	steady_fini(&st);
	return median(ns, REPEATS);
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
	while (flex_alloc_block_alloc(a, trace_size(&seed), FLEX_ALLOC_TENSOR, &extra) == 0)
		;
	flex_alloc_get_stats(a, &st);
	*frag_peak = peak;
	*util = (double)st.allocated_bytes / (double)st.reserved_bytes;
	flex_alloc_destroy(a);
	free(idx);
	free_trace(&t);
}

/*
 * Throughput runs: every thread runs its steady trace (over and over) for
 * WINDOW_MS of wall time, checking for the end every CHUNK steps, and
 * counts its steps. Each thread's rate is its steps over its own time from
 * the start to the moment it stopped; the run's throughput is the sum. So
 * the figure is what the threads get done while all of them run: a thread
 * that finishes a fixed amount of work early does not leave the other
 * alone for a tail that would count as two threads' time.
 */
#define WINDOW_MS	200
#define CHUNK		256

struct worker {
	pthread_t thread;
	pthread_barrier_t *start;
	_Atomic int *stop;
	struct flex_alloc *a;
	struct trace t;
	flex_alloc_index_t *live;
	size_t warm;
	double rate;		/* steps per second of wall time */
	double cpu_rate;	/* steps per second of the thread's CPU time */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	size_t i = w->warm, done = 0;
	double t0, c0;

	pthread_barrier_wait(w->start);
	t0 = now_ns();
	c0 = cpu_ns();
	while (!atomic_load_explicit(w->stop, memory_order_relaxed)) {
		size_t to = i + CHUNK < w->t.steps ? i + CHUNK : w->t.steps;

		steps(w->a, &w->t, w->live, i, to);
		done += to - i;
		i = to == w->t.steps ? w->warm : to;
	}
	w->cpu_rate = (double)done / ((cpu_ns() - c0) / 1e9);
	w->rate = (double)done / ((now_ns() - t0) / 1e9);
	return NULL;
}

/*
 * Steps per second of @nthreads threads sharing @total live blocks (wall
 * time); in *cpu, steps per second of the threads' own CPU time, which
 * descheduling on a shared machine does not change but cache lines moving
 * between cores do.
 */
static double throughput(unsigned int nthreads, size_t total, unsigned int flags, double *cpu)
{
	size_t live = total / nthreads, trace_steps = 500000;
	struct timespec window = { .tv_sec = 0, .tv_nsec = WINDOW_MS * 1000000L };
	struct flex_region_source *src;
	struct flex_alloc_config cfg;
	struct worker w[2];
	pthread_barrier_t start;
	_Atomic int stop = 0;
	struct flex_alloc *a;
	double rate = 0, cpu_rate = 0;
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
		w[i] = (struct worker){ .start = &start, .stop = &stop, .a = a, .warm = 2 * live };
		w[i].t = make_trace(live, w[i].warm + trace_steps, TRACE_SEED * (i + 3) + total);
		w[i].live = malloc(live * sizeof(*w[i].live));
		if (!w[i].live)
			die("malloc", -1);
		fill(a, &w[i].t, w[i].live);
		run_steps(a, &w[i].t, w[i].live, 0, w[i].warm);
	}
	for (unsigned int i = 0; i < nthreads; i++)
		pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
	pthread_barrier_wait(&start);
	nanosleep(&window, NULL);
	atomic_store_explicit(&stop, 1, memory_order_relaxed);
	for (unsigned int i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
		rate += w[i].rate;
		cpu_rate += w[i].cpu_rate / nthreads;
		free(w[i].live);
		free_trace(&w[i].t);
	}
	pthread_barrier_destroy(&start);
	flex_alloc_destroy(a);
	if (cpu)
		*cpu = cpu_rate;
	return rate;
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

/* The 10k figures of both strategies, BestFit's repetitions right after FirstFit's. */
static void bestfit_vs_firstfit(double *ns10k, double *ns10k_bf, double *bf_vs_ff)
{
	struct steady s10k, s10k_bf;

	steady_init(&s10k, 10000, FLEX_ALLOC_FIRST_FIT);
	steady_init(&s10k_bf, 10000, FLEX_ALLOC_BEST_FIT);
	for (int r = 0; r < REPEATS; r++) {
		ns10k[r] = steady_rep(&s10k);
		ns10k_bf[r] = steady_rep(&s10k_bf);
		bf_vs_ff[r] = ns10k_bf[r] / ns10k[r];
	}
	steady_fini(&s10k);
	steady_fini(&s10k_bf);
}

static void print_frag_and_util(void)
{
	double frag_bf, util_ff, util_bf, frag_ff;

	frag_and_util(FLEX_ALLOC_BEST_FIT, &frag_bf, &util_bf);
	frag_and_util(FLEX_ALLOC_FIRST_FIT, &frag_ff, &util_ff);
	printf("# peak fragmentation with FirstFit: %.4f\n", frag_ff);
	printf("bench: alloc_frag_peak_bestfit %.4f frac\n", frag_bf);
	printf("bench: alloc_util_first_oom_firstfit %.4f frac\n", util_ff);
	printf("bench: alloc_util_first_oom_bestfit %.4f frac\n", util_bf);
	fflush(stdout);
}

/*
 * --steady-only: the single-thread figures of the 10k trace only (both
 * strategies' costs and their ratio, fragmentation and utilisation), no
 * other sizes and no threads: seconds, not minutes, on a busy machine.
 */
static int steady_only(void)
{
	double ns10k[REPEATS], ns10k_bf[REPEATS], bf_vs_ff[REPEATS];

	bestfit_vs_firstfit(ns10k, ns10k_bf, bf_vs_ff);
	printf("# 10k BestFit/FirstFit per round:");
	for (int r = 0; r < REPEATS; r++)
		printf(" %.2f", bf_vs_ff[r]);
	printf("\n");
	printf("bench: alloc_free_ns_steady_10k %.1f ns\n", median(ns10k, REPEATS));
	printf("bench: alloc_free_ns_steady_10k_bestfit %.1f ns\n", median(ns10k_bf, REPEATS));
	printf("bench: alloc_bestfit_vs_firstfit %.2f x\n", median(bf_vs_ff, REPEATS));
	fflush(stdout);
	print_frag_and_util();
	return 0;
}

int main(int argc, char **argv)
{
	double ns1k[REPEATS], ns10k[REPEATS], ns100k[REPEATS], scale[REPEATS];
	double ns10k_bf[REPEATS], bf_vs_ff[REPEATS];
	struct steady s1k, s10k, s100k, s10k_bf;
	bool only = argc == 2 && !strcmp(argv[1], "--steady-only");

	if (argc > 1 && !only) {
		fprintf(stderr, "usage: alloc_bench [--steady-only]\n");
		return 2;
	}
	print_load();
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	printf("# CPU has AVX2: %s\n", __builtin_cpu_supports("avx2") ? "yes" : "no");
#endif
	if (only)
		return steady_only();

	/*
	 * The three sizes' repetitions interleaved, and BestFit's at 10k right
	 * after FirstFit's; the ratios are per round.
	 */
	steady_init(&s1k, 1000, FLEX_ALLOC_FIRST_FIT);
	steady_init(&s10k, 10000, FLEX_ALLOC_FIRST_FIT);
	steady_init(&s10k_bf, 10000, FLEX_ALLOC_BEST_FIT);
	steady_init(&s100k, 100000, FLEX_ALLOC_FIRST_FIT);
	for (int r = 0; r < REPEATS; r++) {
		ns1k[r] = steady_rep(&s1k);
		ns10k[r] = steady_rep(&s10k);
		ns10k_bf[r] = steady_rep(&s10k_bf);
		ns100k[r] = steady_rep(&s100k);
		scale[r] = ns100k[r] / ns1k[r];
		bf_vs_ff[r] = ns10k_bf[r] / ns10k[r];
	}
	steady_fini(&s1k);
	steady_fini(&s10k);
	steady_fini(&s10k_bf);
	steady_fini(&s100k);
	printf("# 100k/1k per round:");
	for (int r = 0; r < REPEATS; r++)
		printf(" %.2f", scale[r]);
	printf("\n# 10k BestFit/FirstFit per round:");
	for (int r = 0; r < REPEATS; r++)
		printf(" %.2f", bf_vs_ff[r]);
	printf("\n");
	printf("# steady trace ns per free+alloc (medians): 1k %.1f, 10k %.1f, 100k %.1f; 10k with BestFit %.1f\n",
	       median(ns1k, REPEATS), median(ns10k, REPEATS), median(ns100k, REPEATS),
	       median(ns10k_bf, REPEATS));
	printf("bench: alloc_free_ns_steady_10k %.1f ns\n", median(ns10k, REPEATS));
	printf("bench: alloc_scaling_100k_vs_1k %.2f x\n", median(scale, REPEATS));
	printf("bench: alloc_free_ns_steady_10k_bestfit %.1f ns\n", median(ns10k_bf, REPEATS));
	printf("bench: alloc_bestfit_vs_firstfit %.2f x\n", median(bf_vs_ff, REPEATS));
	fflush(stdout);

	print_frag_and_util();

	/*
	 * 1 and 2 threads in turn, THROUGHPUT_RUNS rounds; each round's ratio
	 * compares runs seconds apart, and the figure is the median ratio.
	 */
	double o[THROUGHPUT_RUNS], t[THROUGHPUT_RUNS], og[THROUGHPUT_RUNS], tg[THROUGHPUT_RUNS];
	double oc[THROUGHPUT_RUNS], tc[THROUGHPUT_RUNS], ratio[THROUGHPUT_RUNS], ratio_g[THROUGHPUT_RUNS];
	double ratio_cpu[THROUGHPUT_RUNS], sn[THROUGHPUT_RUNS], rt[THROUGHPUT_RUNS];

	for (int i = 0; i < THROUGHPUT_RUNS; i++) {
		o[i] = throughput(1, 10000, 0, &oc[i]);
		t[i] = throughput(2, 10000, 0, &tc[i]);
		og[i] = throughput(1, 10000, FLEX_ALLOC_F_GLOBAL_LOCK, NULL);
		tg[i] = throughput(2, 10000, FLEX_ALLOC_F_GLOBAL_LOCK, NULL);
		sn[i] = shared_nothing_ratio();
		rt[i] = round_trip_ns();
		ratio[i] = t[i] / o[i];
		ratio_g[i] = tg[i] / og[i];
		ratio_cpu[i] = tc[i] / oc[i];
	}
	printf("# 2 threads / 1 thread per round:");
	for (int i = 0; i < THROUGHPUT_RUNS; i++)
		printf(" %.2f", ratio[i]);
	printf("\n# steps/s per-region locks (medians): 1 thread %.0f, 2 threads %.0f\n",
	       median(o, THROUGHPUT_RUNS), median(t, THROUGHPUT_RUNS));
	printf("# steps per CPU-second, 2 threads over 1 (what sharing costs, whatever the load): %.2f x\n",
	       median(ratio_cpu, THROUGHPUT_RUNS));
	printf("# steps/s one global lock:  1 thread %.0f, 2 threads %.0f (median ratio %.2f x)\n",
	       median(og, THROUGHPUT_RUNS), median(tg, THROUGHPUT_RUNS),
	       median(ratio_g, THROUGHPUT_RUNS));
	printf("# 2 threads of work that shares nothing: %.2f x one thread; cache line round trip between them %.0f ns (this machine, now)\n",
	       median(sn, THROUGHPUT_RUNS), median(rt, THROUGHPUT_RUNS));
	printf("bench: alloc_2threads_vs_1 %.2f x\n", median(ratio, THROUGHPUT_RUNS));
	fflush(stdout);
	printf("# steady trace 10k once the process has threads (region locks taken): %.1f ns\n",
	       steady_ns(10000, FLEX_ALLOC_FIRST_FIT));
	print_load();
	return 0;
}
