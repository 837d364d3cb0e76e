// SPDX-License-Identifier: GPL-2.0
/*
 * FlexStream end to end against the driver: FIFO order, query, events
 * across streams (and as sync_files), host functions in stream order,
 * sticky errors naming job, step, tile and address, and recovery, a full
 * driver queue, correction arenas growing in flight and concurrent on two
 * streams, tiled launches (1-D, nested, reduction with accumulation,
 * int8) against a CPU reference, launch validation, plan validation,
 * priorities.
 *
 * Where a test needs work to be still queued when it looks (query before
 * completion, cross-stream order), it pauses the engines through debugfs
 * instead of relying on timing.
 */
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>

#include <flex/context.h>
#include <flex/job.h>
#include <flex/program.h>
#include <flex/stream.h>
#include <flex/tiling.h>

#include "kselftest_harness.h"
#include "flex_test.h"
#include "libflex_test.h"

/* ---- helpers ---- */

static struct flex_context *open_ctx(struct __test_metadata *_metadata)
{
	return open_ctx_regions(_metadata, 64 * MiB, 12);
}

static struct flex_job *matmul_job(struct __test_metadata *_metadata, struct flex_context *ctx,
				   enum flex_dtype dt, uint64_t m, uint64_t n, uint64_t k)
{
	struct flex_kernel *kern;
	struct flex_job *job;

	EXPECT_EQ(0, flex_kernel_new_matmul(dt, m, n, k, &kern)) TH_LOG("%s", flex_last_error());
	job = kernel_job(_metadata, ctx, kern, kern->name);
	flex_kernel_destroy(kern);
	return job;
}

static __u32 rnd(__u32 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void fill_random(void *p, size_t n, __u32 seed)
{
	unsigned char *b = p;
	__u32 s = seed * 2654435761u + 1;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = rnd(&s) >> 24;
}

static int32_t el(const void *base, size_t i, enum flex_dtype dt)
{
	return dt == FLEX_DTYPE_INT8 ? ((const int8_t *)base)[i] : ((const int32_t *)base)[i];
}

/* C[m x n] = A[m x k] . B[k x n] in wrapping int32. */
static void ref_matmul(int32_t *c, const void *a, const void *b, enum flex_dtype dt,
		       uint64_t m, uint64_t n, uint64_t k, uint64_t lda, uint64_t ldb,
		       uint64_t ldc)
{
	uint64_t i, j, kk;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			uint32_t sum = 0;

			for (kk = 0; kk < k; kk++)
				sum += (uint32_t)el(a, i * lda + kk, dt) *
				       (uint32_t)el(b, kk * ldb + j, dt);
			c[i * ldc + j] = (int32_t)sum;
		}
}

/* ---- FIFO order and query ---- */

static const int32_t ones[16 * 16] = { [0 ... 255] = 1 };

TEST(fifo_order_chain_of_dependent_jobs_and_query)
{
	enum { N = 16, ROUNDS = 12 };
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s = flex_context_default_stream(ctx);
	static int32_t b_host[ROUNDS][N * N], out[N * N], zero[N * N];
	struct flex_tensor args[3];
	flex_alloc_index_t A, B;
	struct flex_stream_stats st;
	struct flex_job *add;
	int r, i;

	ASSERT_NE(NULL, ctx);
	add = add_job(_metadata, ctx, N, N);
	ASSERT_NE(NULL, add);
	A = alloc_bytes(_metadata, ctx, sizeof(out));
	B = alloc_bytes(_metadata, ctx, sizeof(out));

	/* A = 0; then per round B = r + 1 (a DMA), A = A + B: only FIFO gives sum. */
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_copy(s, 1, A, 0, zero, sizeof(zero)));
	args[0] = tensor2(A, FLEX_DTYPE_INT32, N, N, N);
	args[1] = tensor2(B, FLEX_DTYPE_INT32, N, N, N);
	args[2] = args[0];
	for (r = 0; r < ROUNDS; r++) {
		for (i = 0; i < N * N; i++)
			b_host[r][i] = (r + 1) * (i + 1);
		ASSERT_EQ(0, flex_stream_copy(s, 1, B, 0, b_host[r], sizeof(b_host[r])));
		ASSERT_EQ(0, flex_stream_launch(s, add, args, 3, 0)) TH_LOG("%s",
									 flex_last_error());
	}
	ASSERT_EQ(0, flex_stream_copy(s, 0, A, 0, out, sizeof(out)));
	/* Engines paused: nothing can have completed. */
	EXPECT_EQ(-EBUSY, flex_stream_query(s, NULL));
	ASSERT_EQ(0, engines_pause(0));
	sync_ok(_metadata, s, "chain");
	EXPECT_EQ(0, flex_stream_query(s, NULL));
	for (i = 0; i < N * N; i++)
		if (out[i] != ROUNDS * (ROUNDS + 1) / 2 * (i + 1))
			break;
	EXPECT_EQ(N * N, i) TH_LOG("A[%d]: expected %d, got %d", i,
				   ROUNDS * (ROUNDS + 1) / 2 * (i + 1), out[i]);

	flex_stream_get_stats(s, &st);
	EXPECT_LE(ROUNDS, st.tiles);
	EXPECT_LE(ROUNDS * 2 + ROUNDS + 2, st.cbs);
	EXPECT_LE(1, st.synchronizes);
	EXPECT_LE(ROUNDS * 6 * 8, st.bytes_dma - ROUNDS * sizeof(out));
	flex_job_destroy(add);
	flex_context_destroy(ctx);
}

/* ---- events ---- */

TEST(events_order_two_streams_and_export_sync_files)
{
	enum { M = 64 };
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *a, *b;
	struct flex_event *ev;
	static int32_t ha[M * M], hb[M * M], want[M * M], out[M * M], zero[M * M];
	flex_alloc_index_t A, B, C, D;
	struct flex_tensor mm[3], ad[3];
	struct flex_job *matmul, *add;
	struct pollfd pfd;
	int i, fence = -1;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_LOW, &a));
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_HIGH, &b));
	ASSERT_EQ(0, flex_event_new(0, &ev));
	EXPECT_EQ(0, flex_event_query(ev));	/* never recorded: complete */
	matmul = matmul_job(_metadata, ctx, FLEX_DTYPE_INT32, M, M, M);
	add = add_job(_metadata, ctx, M, M);
	A = alloc_bytes(_metadata, ctx, sizeof(ha));
	B = alloc_bytes(_metadata, ctx, sizeof(ha));
	C = alloc_bytes(_metadata, ctx, sizeof(ha));
	D = alloc_bytes(_metadata, ctx, sizeof(ha));
	fill_random(ha, sizeof(ha), 1);
	fill_random(hb, sizeof(hb), 2);
	ref_matmul(want, ha, hb, FLEX_DTYPE_INT32, M, M, M, M, M, M);
	mm[0] = tensor2(A, FLEX_DTYPE_INT32, M, M, M);
	mm[1] = tensor2(B, FLEX_DTYPE_INT32, M, M, M);
	mm[2] = tensor2(C, FLEX_DTYPE_INT32, M, M, M);
	/* D = C + zero (zero in D first): B's result is C as A left it. */
	ad[0] = mm[2];
	ad[1] = tensor2(D, FLEX_DTYPE_INT32, M, M, M);
	ad[2] = ad[1];
	ASSERT_EQ(0, flex_stream_copy(b, 1, D, 0, zero, sizeof(zero)));
	ASSERT_EQ(0, flex_stream_copy(b, 1, C, 0, zero, sizeof(zero)));
	sync_ok(_metadata, b, "zero C and D");

	/*
	 * Engines paused: A (low priority) queues the matmul, B (high) waits
	 * for the event and adds. Without the wait B would run first.
	 */
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_copy(a, 1, A, 0, ha, sizeof(ha)));
	ASSERT_EQ(0, flex_stream_copy(a, 1, B, 0, hb, sizeof(hb)));
	ASSERT_EQ(0, flex_stream_launch(a, matmul, mm, 3, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_event_record(ev, a));
	ASSERT_EQ(0, flex_stream_wait_event(b, ev));
	ASSERT_EQ(0, flex_stream_launch(b, add, ad, 3, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_copy(b, 0, D, 0, out, sizeof(out)));
	EXPECT_EQ(-EBUSY, flex_event_query(ev));
	EXPECT_EQ(-EBUSY, flex_stream_query(b, NULL));
	ASSERT_EQ(0, flex_event_export_sync_file(ev, &fence)) TH_LOG("%s", flex_last_error());
	pfd = (struct pollfd){ .fd = fence, .events = POLLIN };
	EXPECT_EQ(0, poll(&pfd, 1, 0));		/* not signalled while paused */
	ASSERT_EQ(0, engines_pause(0));
	EXPECT_EQ(1, poll(&pfd, 1, 60000));
	close(fence);
	EXPECT_EQ(0, flex_event_synchronize(ev));
	EXPECT_EQ(0, flex_event_query(ev));
	sync_ok(_metadata, b, "stream B");
	for (i = 0; i < M * M && out[i] == want[i]; i++)
		;
	EXPECT_EQ(M * M, i) TH_LOG("D[%d]: expected %d (A's matmul), got %d", i, want[i], out[i]);
	sync_ok(_metadata, a, "stream A");

	flex_event_destroy(ev);
	flex_job_destroy(matmul);
	flex_job_destroy(add);
	flex_stream_destroy(a);
	flex_stream_destroy(b);
	flex_context_destroy(ctx);
}

/* An event recorded after a host function that is still held back. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int open, ran;
};

static int wait_gate(void *user)
{
	struct gate *g = user;

	pthread_mutex_lock(&g->lock);
	while (!g->open)
		pthread_cond_wait(&g->cond, &g->lock);
	g->ran = 1;
	pthread_mutex_unlock(&g->lock);
	return 0;
}

TEST(event_after_a_held_back_host_function)
{
	struct flex_context *ctx = open_ctx(_metadata);
	struct gate g = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0 };
	static int32_t v[64] = { [0 ... 63] = 7 }, out[64];
	struct flex_stream *a, *b;
	struct flex_event *ev;
	flex_alloc_index_t X;
	int i;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &a));
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &b));
	ASSERT_EQ(0, flex_event_new(0, &ev));
	X = alloc_bytes(_metadata, ctx, sizeof(v));
	/* A: host function (blocked on the gate), then X = 7s. */
	ASSERT_EQ(0, flex_stream_host_func(a, wait_gate, &g));
	ASSERT_EQ(0, flex_stream_copy(a, 1, X, 0, v, sizeof(v)));
	ASSERT_EQ(0, flex_event_record(ev, a));
	/* B waits for it (its WAIT is held back: A has not submitted yet). */
	ASSERT_EQ(0, flex_stream_wait_event(b, ev));
	ASSERT_EQ(0, flex_stream_copy(b, 0, X, 0, out, sizeof(out)));
	EXPECT_EQ(-EBUSY, flex_event_query(ev));
	EXPECT_EQ(-EBUSY, flex_stream_query(b, NULL));
	pthread_mutex_lock(&g.lock);
	EXPECT_EQ(0, g.ran);
	g.open = 1;
	pthread_cond_broadcast(&g.cond);
	pthread_mutex_unlock(&g.lock);
	sync_ok(_metadata, b, "stream B");
	EXPECT_EQ(1, g.ran);
	for (i = 0; i < 64 && out[i] == 7; i++)
		;
	EXPECT_EQ(64, i) TH_LOG("X[%d] = %d, expected 7", i, out[i]);
	EXPECT_EQ(0, flex_event_synchronize(ev));
	flex_event_destroy(ev);
	flex_stream_destroy(a);
	flex_stream_destroy(b);
	flex_context_destroy(ctx);
}

static struct flex_job *fill_job(struct __test_metadata *_metadata, struct flex_context *ctx,
				 const char *name, uint64_t off);

/*
 * An event outlives the stream it was recorded on: destroyed, its queue
 * number may go to the next stream created, but the event still names
 * the old work, complete (or failed) as it was, and other streams can
 * still wait for it.
 */
TEST(an_event_outlives_its_stream)
{
	struct flex_context *ctx = open_ctx(_metadata);
	static const int32_t v[16] = { [0 ... 15] = 3 };
	struct flex_stream *s2, *s3, *s4, *s5;
	struct flex_event *ev, *ev_bad;
	struct flex_job *bad;
	struct flex_tensor x;
	flex_alloc_index_t X;
	struct pollfd pfd;
	int fence = -1;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_event_new(0, &ev));
	ASSERT_EQ(0, flex_event_new(0, &ev_bad));
	X = alloc_bytes(_metadata, ctx, sizeof(v));
	bad = fill_job(_metadata, ctx, "fill_out_of_bounds", 1ULL << 40);
	x = (struct flex_tensor){ .index = X, .dtype = FLEX_DTYPE_INT32, .ndim = 1,
				  .shape = { 16 }, .strides = { 1 } };
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s2));
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s3));
	ASSERT_EQ(0, flex_stream_copy(s2, 1, X, 0, (void *)v, sizeof(v)));
	ASSERT_EQ(0, flex_event_record(ev, s2));
	ASSERT_EQ(0, flex_stream_launch(s3, bad, &x, 1, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_event_record(ev_bad, s3));
	flex_stream_destroy(s2);
	flex_stream_destroy(s3);

	/* New streams, with work the paused engines hold back. */
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s4));
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s5));
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_copy(s4, 1, X, 0, (void *)v, sizeof(v)));
	EXPECT_EQ(0, flex_event_query(ev)) TH_LOG("the destroyed stream's copy has completed: "
						  "%s", flex_last_error());
	ASSERT_EQ(0, flex_event_export_sync_file(ev, &fence)) TH_LOG("%s", flex_last_error());
	pfd = (struct pollfd){ .fd = fence, .events = POLLIN };
	EXPECT_EQ(1, poll(&pfd, 1, 0)) TH_LOG("its fence must be signalled already");
	close(fence);
	ASSERT_EQ(0, flex_stream_wait_event(s5, ev));
	ASSERT_EQ(0, flex_stream_copy(s5, 1, X, 0, (void *)v, sizeof(v)));
	ASSERT_EQ(0, engines_pause(0));
	EXPECT_EQ(0, flex_event_synchronize(ev));
	EXPECT_EQ(-ERANGE, flex_event_synchronize(ev_bad)) TH_LOG("%s", flex_last_error());
	EXPECT_EQ(-ERANGE, flex_event_query(ev_bad));
	sync_ok(_metadata, s4, "s4");
	sync_ok(_metadata, s5, "s5 after waiting for the old stream's event");
	flex_event_destroy(ev);
	flex_event_destroy(ev_bad);
	flex_job_destroy(bad);
	flex_stream_destroy(s4);
	flex_stream_destroy(s5);
	flex_context_destroy(ctx);
}

/* Runs on the waiting stream after its wait: was the event complete by then? */
struct after_wait {
	struct flex_event *ev;
	int ran, ev_done;
};

static int note_after_wait(void *user)
{
	struct after_wait *w = user;

	w->ev_done = flex_event_query(w->ev) == 0;
	w->ran = 1;
	return 0;
}

/*
 * A stream of another device file waits for an event through its fence:
 * queue numbers are per file, and the event's queue (0 of the first file)
 * must not be taken for queue 0 of the second, which has long completed
 * more CBs than the event's. The event's work is one MATMUL at the
 * device's limit (2^28 multiply-accumulates: seconds under TCG), so
 * anything that runs after the wait but before it completes sees it
 * incomplete. A failure of the event's work reaches the waiting stream as
 * -EPIPE.
 */
TEST(a_wait_on_another_files_event_goes_through_its_fence)
{
	enum { M = 1024, N = 1024, K = 256 };
	struct flex_context *c1 = open_ctx(_metadata), *c2 = open_ctx(_metadata);
	static const int32_t v[16] = { [0 ... 15] = 7 };
	struct flex_stream *a, *b, *d2;
	struct after_wait w = { 0 };
	struct flex_stream_error e;
	struct flex_tensor mm[3], x;
	flex_alloc_index_t X2, A, B, C;
	struct flex_job *matmul, *bad;
	struct flex_event *ev;
	int i;

	ASSERT_TRUE(c1 && c2);
	a = flex_context_default_stream(c1);
	d2 = flex_context_default_stream(c2);
	ASSERT_EQ(flex_stream_queue_id(a), flex_stream_queue_id(d2)) TH_LOG("both files' queue 0");
	X2 = alloc_bytes(_metadata, c2, sizeof(v));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, flex_stream_copy(d2, 1, X2, 0, (void *)v, sizeof(v)));
	sync_ok(_metadata, d2, "the second file's queue 0, past the event's seqno");
	ASSERT_EQ(0, flex_stream_new(c2, FLEX_STREAM_PRIO_NORMAL, &b));
	ASSERT_EQ(0, flex_event_new(0, &ev));
	matmul = matmul_job(_metadata, c1, FLEX_DTYPE_INT32, M, N, K);
	ASSERT_NE(NULL, matmul);
	A = alloc_bytes(_metadata, c1, (uint64_t)M * K * 4);
	B = alloc_bytes(_metadata, c1, (uint64_t)K * N * 4);
	C = alloc_bytes(_metadata, c1, (uint64_t)M * N * 4);
	mm[0] = tensor2(A, FLEX_DTYPE_INT32, M, K, K);
	mm[1] = tensor2(B, FLEX_DTYPE_INT32, K, N, N);
	mm[2] = tensor2(C, FLEX_DTYPE_INT32, M, N, N);
	sync_ok(_metadata, a, "loading the matmul");

	/* A: the long matmul, then the event (seqno 2 or so of A's queue 0). */
	ASSERT_EQ(0, flex_stream_launch(a, matmul, mm, 3, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_event_record(ev, a));
	w = (struct after_wait){ .ev = ev };
	ASSERT_EQ(0, flex_stream_wait_event(b, ev)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_host_func(b, note_after_wait, &w));
	sync_ok(_metadata, b, "B after A's event");
	EXPECT_EQ(1, w.ran);
	EXPECT_EQ(1, w.ev_done) TH_LOG("B's work after the wait ran before A's event completed");
	sync_ok(_metadata, a, "A");

	/* The event's work fails: B is poisoned with -EPIPE, saying why. */
	bad = fill_job(_metadata, c1, "fill_out_of_bounds", 1ULL << 40);
	x = (struct flex_tensor){ .index = A, .dtype = FLEX_DTYPE_INT32, .ndim = 1,
				  .shape = { 16 }, .strides = { 1 } };
	ASSERT_EQ(0, flex_stream_launch(a, bad, &x, 1, 0));
	ASSERT_EQ(0, flex_event_record(ev, a));
	ASSERT_EQ(0, flex_stream_wait_event(b, ev));
	EXPECT_EQ(-EPIPE, flex_stream_synchronize(b, &e));
	EXPECT_NE(NULL, strstr(e.message, "another device file")) TH_LOG("%s", e.message);
	EXPECT_EQ(FLEX_STEP_EVENT_WAIT, e.step_kind);
	EXPECT_EQ(-ERANGE, flex_stream_synchronize(a, NULL));
	flex_event_destroy(ev);
	flex_job_destroy(bad);
	flex_job_destroy(matmul);
	flex_stream_destroy(b);
	flex_context_destroy(c1);
	flex_context_destroy(c2);
}

static int sleep_50ms(void *user)
{
	usleep(50 * 1000);
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Timing events: the elapsed time between two records brackets the work
 * between them (a host function that sleeps 50 ms: a lower bound that does
 * not depend on the machine's speed) and lies within the host's own
 * measurement around it; not complete is -EBUSY; an event without
 * FLEX_EVENT_TIMING or never recorded is refused.
 */
TEST(timing_events_measure_the_work_between_them)
{
	struct flex_context *ctx = open_ctx(_metadata);
	static const int32_t v[16] = { [0 ... 15] = 1 };
	struct flex_event *t0, *t1, *t2, *plain;
	struct flex_stream *s;
	uint64_t h0, h1;
	flex_alloc_index_t X;
	int64_t ns = 0, back = 0;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	ASSERT_EQ(0, flex_event_new(FLEX_EVENT_TIMING, &t0));
	ASSERT_EQ(0, flex_event_new(FLEX_EVENT_TIMING, &t1));
	ASSERT_EQ(0, flex_event_new(FLEX_EVENT_TIMING, &t2));
	ASSERT_EQ(0, flex_event_new(0, &plain));
	EXPECT_EQ(-EINVAL, flex_event_new(1U << 9, &plain));
	X = alloc_bytes(_metadata, ctx, sizeof(v));

	h0 = mono_ns();
	ASSERT_EQ(0, flex_event_record(t0, s));
	ASSERT_EQ(0, flex_stream_host_func(s, sleep_50ms, NULL));
	ASSERT_EQ(0, flex_event_record(t1, s));		/* behind the host function */
	sync_ok(_metadata, s, "timed work");
	h1 = mono_ns();
	ASSERT_EQ(0, flex_event_elapsed_ns(t0, t1, &ns)) TH_LOG("%s", flex_last_error());
	EXPECT_LE(50000000, ns) TH_LOG("%lld ns for a 50 ms sleep", (long long)ns);
	EXPECT_GE((int64_t)(h1 - h0), ns) TH_LOG("%lld ns, more than the host's %llu",
						 (long long)ns, (unsigned long long)(h1 - h0));
	ASSERT_EQ(0, flex_event_elapsed_ns(t1, t0, &back));
	EXPECT_EQ(-ns, back);

	/* Not complete yet: -EBUSY, then the time once it is. */
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_event_record(t0, s));
	ASSERT_EQ(0, flex_stream_copy(s, 1, X, 0, (void *)v, sizeof(v)));
	ASSERT_EQ(0, flex_event_record(t1, s));
	EXPECT_EQ(-EBUSY, flex_event_elapsed_ns(t0, t1, &ns));
	ASSERT_EQ(0, engines_pause(0));
	sync_ok(_metadata, s, "a copy");
	EXPECT_EQ(0, flex_event_elapsed_ns(t0, t1, &ns)) TH_LOG("%s", flex_last_error());
	EXPECT_LE(0, ns);

	EXPECT_EQ(-EINVAL, flex_event_elapsed_ns(plain, t1, &ns));
	EXPECT_NE(NULL, strstr(flex_last_error(), "FLEX_EVENT_TIMING"));
	EXPECT_EQ(-ENOENT, flex_event_elapsed_ns(t0, t2, &ns));
	flex_event_destroy(t0);
	flex_event_destroy(t1);
	flex_event_destroy(t2);
	flex_event_destroy(plain);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

/* ---- host functions ---- */

struct hf {
	int32_t *from_device;	/* DMA'd from the device before the host function */
	int32_t *to_device;	/* written by it, DMA'd to the device after */
	int n, seen_ok;
	int32_t expect;
};

static int host_double(void *user)
{
	struct hf *h = user;
	int i;

	h->seen_ok = 1;
	for (i = 0; i < h->n; i++) {
		if (h->from_device[i] != h->expect)
			h->seen_ok = 0;
		h->to_device[i] = h->from_device[i] * 2;
	}
	return 0;
}

TEST(host_functions_run_in_stream_order)
{
	enum { N = 8 };
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s = flex_context_default_stream(ctx);
	static int32_t from[N * N], to[N * N], out[N * N];
	struct flex_tensor args[3];
	flex_alloc_index_t A, B, C;
	struct flex_job *add, *job;
	struct hf h = { from, to, N * N, 0, 2 };
	struct flex_step steps[3];
	struct flex_stream_stats st;
	int i;

	ASSERT_NE(NULL, ctx);
	add = add_job(_metadata, ctx, N, N);
	A = alloc_bytes(_metadata, ctx, sizeof(out));
	B = alloc_bytes(_metadata, ctx, sizeof(out));
	C = alloc_bytes(_metadata, ctx, sizeof(out));
	args[0] = tensor2(A, FLEX_DTYPE_INT32, N, N, N);
	args[1] = tensor2(B, FLEX_DTYPE_INT32, N, N, N);
	args[2] = tensor2(C, FLEX_DTYPE_INT32, N, N, N);

	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_copy(s, 1, A, 0, (void *)ones, sizeof(out)));
	ASSERT_EQ(0, flex_stream_copy(s, 1, B, 0, (void *)ones, sizeof(out)));
	ASSERT_EQ(0, flex_stream_launch(s, add, args, 3, 0));	/* C = 2 */
	/* A DMA-only job: C -> host, host function, host -> A. */
	steps[0] = flex_step_dma_from_device(C, 0, from, sizeof(from));
	steps[1] = flex_step_host_op(host_double, &h);
	steps[2] = flex_step_dma_to_device(A, 0, to, sizeof(to));
	ASSERT_EQ(0, flex_job_new("double_on_host", steps, 3, &job)) TH_LOG("%s",
									     flex_last_error());
	ASSERT_EQ(0, flex_stream_launch(s, job, NULL, 0, 0)) TH_LOG("%s", flex_last_error());
	flex_job_destroy(job);
	ASSERT_EQ(0, flex_stream_launch(s, add, args, 3, 0));	/* C = 4 + 1 */
	ASSERT_EQ(0, flex_stream_copy(s, 0, C, 0, out, sizeof(out)));
	/* All of that returned with the engines paused: nothing blocked. */
	EXPECT_EQ(0, h.seen_ok);
	ASSERT_EQ(0, engines_pause(0));
	sync_ok(_metadata, s, "host functions");
	EXPECT_EQ(1, h.seen_ok) TH_LOG("the host function did not see the device's C = 2");
	for (i = 0; i < N * N && out[i] == 5; i++)
		;
	EXPECT_EQ(N * N, i) TH_LOG("C[%d]: expected 5 (the device saw the host's write), got %d",
				   i, out[i]);
	flex_stream_get_stats(s, &st);
	EXPECT_EQ(1, st.host_funcs);
	EXPECT_LE(1, st.parked_cbs);
	flex_job_destroy(add);
	flex_context_destroy(ctx);
}

static int host_set_42(void *user)
{
	*(int *)user = 42;
	return 0;
}

static int host_fail(void *user)
{
	return -EPROTO;
}

/* ---- sticky errors ---- */

/* A kernel job of one int32 vector argument whose program FILLs @off of segment 0. */
static struct flex_job *fill_job(struct __test_metadata *_metadata, struct flex_context *ctx,
				 const char *name, uint64_t off)
{
	struct flex_step plan[1] = { flex_step_simple(FLEX_STEP_COMPUTE) };
	struct flex_kernel_sig sig;
	flex_alloc_index_t bin = 0;
	struct flex_job *job = NULL;
	struct prog pr;

	memset(&sig, 0, sizeof(sig));
	sig.n_args = 1;
	strcpy(sig.args[0].name, "X");
	sig.args[0].dtype = FLEX_DTYPE_INT32;
	sig.args[0].ndim = 1;
	sig.args[0].shape[0] = 16;
	sig.args[0].axis[0] = sig.args[0].axis[1] = sig.args[0].axis[2] = -1;
	sig.args[0].axis[3] = -1;
	sig.args[0].is_output = 1;
	prog_init(&pr, 0);
	prog_emit(&pr, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, FLEX_ADDR(0, off), 16ULL, 42ULL);
	prog_emit(&pr, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	EXPECT_EQ(0, flex_context_load_program(ctx, &pr, prog_size(&pr), &bin))
		TH_LOG("%s", flex_last_error());
	EXPECT_EQ(0, flex_job_new_kernel(name, bin, &sig, NULL, 0, plan, 1, &job))
		TH_LOG("%s", flex_last_error());
	return job;
}

TEST(sticky_errors_name_job_step_fault_and_address)
{
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s, *other;
	struct flex_job *bad, *good;
	struct flex_stream_error e;
	struct flex_event *ev;
	struct flex_tensor x;
	struct flex_vaddr va;
	flex_alloc_index_t X, Y;
	static int32_t marker[16] = { [0 ... 15] = 9 }, out[16], zero[16];
	int i, v = 0;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &other));
	X = alloc_bytes(_metadata, ctx, 64);
	Y = alloc_bytes(_metadata, ctx, 64);
	ASSERT_EQ(0, flex_alloc_block_resolve(flex_context_allocator(ctx), X, &va, NULL));
	bad = fill_job(_metadata, ctx, "fill_out_of_bounds", 1ULL << 40);
	good = fill_job(_metadata, ctx, "fill_ok", va.offset);
	x = (struct flex_tensor){ .index = X, .dtype = FLEX_DTYPE_INT32, .ndim = 1,
				  .shape = { 16 }, .strides = { 1 } };
	ASSERT_EQ(0, flex_stream_copy(s, 1, Y, 0, zero, sizeof(zero)));
	sync_ok(_metadata, s, "zero Y");

	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_launch(s, good, &x, 1, 0));
	ASSERT_EQ(0, flex_stream_launch(s, bad, &x, 1, 0));
	/*
	 * Must not run: it writes X, which the faulting launch uses, so it
	 * waits for that launch even on the DMA queue. (An upload into memory
	 * no earlier work uses may run before an earlier fault: overlap.c.)
	 */
	ASSERT_EQ(0, flex_stream_copy(s, 1, X, 0, marker, sizeof(marker)));
	ASSERT_EQ(0, engines_pause(0));

	EXPECT_EQ(-ERANGE, flex_stream_synchronize(s, &e));
	EXPECT_EQ(-ERANGE, e.error);
	EXPECT_EQ(FLEX_FAULT_OUT_OF_BOUNDS, e.fault_code);
	EXPECT_STREQ("fill_out_of_bounds", e.job);
	EXPECT_EQ(3, e.launch_seq) TH_LOG("%s", e.message);	/* zero Y, good, bad */
	EXPECT_EQ(0, e.step);
	EXPECT_EQ(FLEX_STEP_COMPUTE, e.step_kind);
	EXPECT_EQ(0, e.tile);
	EXPECT_EQ(0, e.insn);
	EXPECT_EQ(va.region_id, e.addr.region_id);
	EXPECT_EQ(1ULL << 40, e.addr.offset) TH_LOG("%s", e.message);
	EXPECT_NE(NULL, strstr(e.message, "fill_out_of_bounds")) TH_LOG("%s", e.message);
	TH_LOG("reported: %s", e.message);
	/* Query says the same, and new work is refused. */
	memset(&e, 0, sizeof(e));
	EXPECT_EQ(-ERANGE, flex_stream_query(s, &e));
	EXPECT_STREQ("fill_out_of_bounds", e.job);
	EXPECT_EQ(-EIO, flex_stream_launch(s, good, &x, 1, 0));
	EXPECT_EQ(-EIO, flex_stream_copy(s, 1, Y, 0, marker, sizeof(marker)));

	/* The other stream is unaffected; the later upload on s never ran. */
	ASSERT_EQ(0, flex_stream_copy(other, 0, X, 0, out, sizeof(out)));
	sync_ok(_metadata, other, "other stream");
	EXPECT_EQ(42, out[0]) TH_LOG("the job before the fault did not run");
	for (i = 0; i < 16 && out[i] == 42; i++)
		;
	EXPECT_EQ(16, i) TH_LOG("X[%d] = %d: the upload behind the fault ran", i, out[i]);

	/* Reset recovers. */
	ASSERT_EQ(0, flex_stream_reset(s));
	EXPECT_EQ(0, flex_stream_query(s, NULL));
	/*
	 * What waits for "everything before it" on the stream (a host function,
	 * an event) must not find the fault the reset cleared: the last CB the
	 * device had is the faulted one.
	 */
	ASSERT_EQ(0, flex_event_new(0, &ev));
	ASSERT_EQ(0, flex_stream_host_func(s, host_set_42, &v));
	ASSERT_EQ(0, flex_event_record(ev, s));
	EXPECT_EQ(0, flex_event_synchronize(ev)) TH_LOG("%s", flex_last_error());
	EXPECT_EQ(0, flex_stream_synchronize(s, &e)) TH_LOG("after reset: %s", e.message);
	EXPECT_EQ(42, v) TH_LOG("the host function after the reset did not run");
	flex_event_destroy(ev);
	ASSERT_EQ(0, flex_stream_copy(s, 1, Y, 0, marker, sizeof(marker)));
	ASSERT_EQ(0, flex_stream_copy(s, 0, Y, 0, out, sizeof(out)));
	sync_ok(_metadata, s, "after reset");
	EXPECT_EQ(9, out[15]);

	/* A failing host function poisons the stream the same way. */
	ASSERT_EQ(0, flex_stream_host_func(s, host_fail, NULL));
	ASSERT_EQ(-EPROTO, flex_stream_synchronize(s, &e));
	EXPECT_STREQ("host_func", e.job);
	EXPECT_EQ(FLEX_FAULT_NONE, e.fault_code);
	EXPECT_EQ(FLEX_STEP_HOST_OP, e.step_kind);
	EXPECT_EQ(-EIO, flex_stream_launch(s, good, &x, 1, 0));
	ASSERT_EQ(0, flex_stream_reset(s));
	ASSERT_EQ(0, flex_stream_launch(s, good, &x, 1, 0));
	sync_ok(_metadata, s, "after the second reset");

	flex_job_destroy(bad);
	flex_job_destroy(good);
	flex_stream_destroy(s);
	flex_stream_destroy(other);
	flex_context_destroy(ctx);
}

/*
 * A fault in one tile of a tiled launch names that tile. X fills a whole
 * 2 MiB region (a context whose regions are 2 MiB); the kernel FILLs one
 * element more than its tile, which stays inside the region except for
 * the last tile.
 */
TEST(a_fault_in_a_tiled_launch_names_the_tile)
{
	enum { TILE_N = 128 * 1024, TILES = 4 };
	struct flex_step plan[3] = {
		flex_step_host_op(NULL, NULL), flex_step_simple(FLEX_STEP_DMA_CORRECTION),
		flex_step_simple(FLEX_STEP_COMPUTE),
	};
	struct flex_corr_slot corr = { .kind = FLEX_CORR_ADDRESS, .arg = 0 };
	struct flex_alloc_config cfg;
	struct flex_context *ctx = NULL;
	struct flex_device *dev;
	struct flex_kernel_sig sig;
	struct flex_stream_error e;
	struct flex_job *job = NULL;
	flex_alloc_index_t X, bin = 0;
	struct flex_tensor x;
	struct flex_vaddr va;
	struct prog pr;

	flex_alloc_config_init(&cfg);
	cfg.num_fallback_sizes = 1;
	cfg.fallback_sizes[0] = 2 * MiB;
	cfg.flags = FLEX_ALLOC_F_RELEASE_EMPTY;
	ASSERT_EQ(0, flex_device_new(FLEX_PF, &dev));
	ASSERT_EQ(0, flex_context_new(dev, &cfg, &ctx)) TH_LOG("%s", flex_last_error());
	flex_device_unref(dev);

	memset(&sig, 0, sizeof(sig));
	sig.n_args = 1;
	sig.n_axes = 1;
	strcpy(sig.axis_name[0], "n");
	strcpy(sig.args[0].name, "X");
	sig.args[0].dtype = FLEX_DTYPE_INT32;
	sig.args[0].ndim = 1;
	sig.args[0].shape[0] = TILE_N;
	memset(sig.args[0].axis, -1, sizeof(sig.args[0].axis));
	sig.args[0].axis[0] = 0;
	sig.args[0].is_output = 1;
	prog_init(&pr, 1);
	prog_emit(&pr, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, FLEX_SLOT(0), (__u64)TILE_N + 1, 3ULL);
	prog_emit(&pr, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	ASSERT_EQ(0, flex_context_load_program(ctx, &pr, prog_size(&pr), &bin))
		TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_job_new_kernel("overfill", bin, &sig, &corr, 1, plan, 3, &job))
		TH_LOG("%s", flex_last_error());
	X = alloc_bytes(_metadata, ctx, 2 * MiB);
	ASSERT_EQ(0, flex_alloc_block_resolve(flex_context_allocator(ctx), X, &va, NULL));
	ASSERT_EQ(0, va.offset) TH_LOG("X must fill its region");
	x = (struct flex_tensor){ .index = X, .dtype = FLEX_DTYPE_INT32, .ndim = 1,
				  .shape = { TILE_N * TILES }, .strides = { 1 } };
	ASSERT_EQ(0, flex_stream_launch(flex_context_default_stream(ctx), job, &x, 1, 0))
		TH_LOG("%s", flex_last_error());
	EXPECT_EQ(-ERANGE, flex_stream_synchronize(flex_context_default_stream(ctx), &e));
	EXPECT_STREQ("overfill", e.job);
	EXPECT_EQ(TILES - 1, e.tile) TH_LOG("%s", e.message);
	EXPECT_EQ(2, e.step);
	EXPECT_EQ(FLEX_STEP_COMPUTE, e.step_kind);
	EXPECT_EQ(FLEX_FAULT_OUT_OF_BOUNDS, e.fault_code);
	EXPECT_EQ(va.region_id, e.addr.region_id);
	EXPECT_EQ((uint64_t)(TILES - 1) * TILE_N * 4, e.addr.offset) TH_LOG("%s", e.message);
	flex_job_destroy(job);
	flex_context_destroy(ctx);
}

/*
 * The operands of a rows x cols add, C = A + B: A[i] = i and B[i] = bmul * i
 * uploaded (a and b hold rows * cols elements), C allocated; *@t gets the
 * three tensors. Returns C.
 */
static flex_alloc_index_t add_operands(struct __test_metadata *_metadata,
				       struct flex_context *ctx, struct flex_stream *s,
				       int rows, int cols, int32_t *a, int32_t *b, int bmul,
				       struct flex_tensor *t)
{
	flex_alloc_index_t A, B, C;
	int i;

	A = alloc_bytes(_metadata, ctx, (uint64_t)rows * cols * 4);
	B = alloc_bytes(_metadata, ctx, (uint64_t)rows * cols * 4);
	C = alloc_bytes(_metadata, ctx, (uint64_t)rows * cols * 4);
	for (i = 0; i < rows * cols; i++) {
		a[i] = i;
		b[i] = bmul * i;
	}
	EXPECT_EQ(0, flex_stream_copy(s, 1, A, 0, a, (uint64_t)rows * cols * 4));
	EXPECT_EQ(0, flex_stream_copy(s, 1, B, 0, b, (uint64_t)rows * cols * 4));
	t[0] = tensor2(A, FLEX_DTYPE_INT32, rows, cols, cols);
	t[1] = tensor2(B, FLEX_DTYPE_INT32, rows, cols, cols);
	t[2] = tensor2(C, FLEX_DTYPE_INT32, rows, cols, cols);
	return C;
}

/*
 * A launch larger than the driver queue (1,045 CBs, depth 1024) returns at
 * once with the engines paused: the rest is parked for the worker. A
 * launch that wants more correction arena than the stream has (255 tiles'
 * worth after one tile's) gets a bigger arena while CBs naming the old one
 * are still queued: the old one must stay until they ran.
 */
TEST(full_queue_parks_and_the_correction_arena_grows_in_flight)
{
	enum { ROWS = 1040, COLS = 16, NSLOTS = 40 };
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s = flex_context_default_stream(ctx);
	struct flex_step plan[3] = {
		flex_step_host_op(NULL, NULL), flex_step_simple(FLEX_STEP_DMA_CORRECTION),
		flex_step_simple(FLEX_STEP_COMPUTE),
	};
	static int32_t a[ROWS * COLS], b[ROWS * COLS], c[ROWS * COLS], f[16];
	struct flex_corr_slot corr[NSLOTS];
	struct flex_stream_stats st;
	struct flex_kernel_sig sig;
	struct flex_tensor t[3], y;
	struct flex_job *add, *fill = NULL;
	flex_alloc_index_t C, Y, bin = 0;
	uint32_t add_slots = 0;
	struct prog pr;
	int i;

	ASSERT_NE(NULL, ctx);
	add = add_job(_metadata, ctx, 1, COLS);
	/* FILL Y with the value of slot 39. */
	memset(&sig, 0, sizeof(sig));
	sig.n_args = 1;
	strcpy(sig.args[0].name, "Y");
	sig.args[0].dtype = FLEX_DTYPE_INT32;
	sig.args[0].ndim = 1;
	sig.args[0].shape[0] = 16;
	memset(sig.args[0].axis, -1, sizeof(sig.args[0].axis));
	memset(corr, 0, sizeof(corr));
	corr[0].kind = FLEX_CORR_ADDRESS;
	for (i = 1; i < NSLOTS; i++)
		corr[i] = (struct flex_corr_slot){ .kind = FLEX_CORR_CONST, .value = 1000 + i };
	prog_init(&pr, NSLOTS);
	prog_emit(&pr, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, FLEX_SLOT(0), 16ULL,
		  FLEX_SLOT(NSLOTS - 1));
	prog_emit(&pr, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	ASSERT_EQ(0, flex_context_load_program(ctx, &pr, prog_size(&pr), &bin));
	ASSERT_EQ(0, flex_job_new_kernel("fill40", bin, &sig, corr, NSLOTS, plan, 3, &fill))
		TH_LOG("%s", flex_last_error());

	C = add_operands(_metadata, ctx, s, ROWS, COLS, a, b, 3, t);
	Y = alloc_bytes(_metadata, ctx, sizeof(f));
	sync_ok(_metadata, s, "inputs");
	y = (struct flex_tensor){ .index = Y, .dtype = FLEX_DTYPE_INT32, .ndim = 1,
				  .shape = { 16 }, .strides = { 1 } };

	flex_job_corr(add, &add_slots);
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_launch(s, fill, &y, 1, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_launch(s, add, t, 3, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_copy(s, 0, C, 0, c, sizeof(c)));
	ASSERT_EQ(0, flex_stream_copy(s, 0, Y, 0, f, sizeof(f)));
	flex_stream_get_stats(s, &st);
	EXPECT_LT(0, st.parked_cbs) TH_LOG("1,045 CBs on a 1024-deep queue: some must be parked");
	EXPECT_EQ(1, st.corr_slot_grows);
	EXPECT_LE(255 * add_slots * 8, st.corr_slot_bytes)
		TH_LOG("the arena holds a window of 255 tiles of %u slots", add_slots);
	EXPECT_EQ(-EBUSY, flex_stream_query(s, NULL));
	ASSERT_EQ(0, engines_pause(0));
	sync_ok(_metadata, s, "parked launch");
	for (i = 0; i < ROWS * COLS && c[i] == 4 * i; i++)
		;
	EXPECT_EQ(ROWS * COLS, i) TH_LOG("C[%d]: expected %d, got %d", i, 4 * i, c[i]);
	for (i = 0; i < 16 && f[i] == 1000 + NSLOTS - 1; i++)
		;
	EXPECT_EQ(16, i) TH_LOG("Y[%d]: expected %d, got %d", i, 1000 + NSLOTS - 1, f[i]);
	flex_stream_get_stats(s, &st);
	EXPECT_EQ(ROWS + 1, st.tiles);
	flex_job_destroy(add);
	flex_job_destroy(fill);
	flex_context_destroy(ctx);
}

/* ---- no callback under a stream lock ---- */

struct oom_handler {
	struct flex_stream *s;
	struct flex_alloc *al;
	flex_alloc_index_t ballast;
	int calls, sync_err;
};

/* An OOM handler as a runtime writes one: drain the stream, drop a cache. */
static void oom_sync_and_free(struct flex_alloc *a, uint64_t size, void *user)
{
	struct oom_handler *h = user;

	h->calls++;
	h->sync_err = flex_stream_synchronize(h->s, NULL);
	if (h->ballast) {
		flex_alloc_block_free(h->al, h->ballast);
		h->ballast = 0;
	}
}

struct launch_arg {
	struct flex_stream *s;
	struct flex_job *job;
	struct flex_tensor *t;
	int err;
	char msg[256];
};

static void *launch_thread(void *p)
{
	struct launch_arg *la = p;

	la->err = flex_stream_launch(la->s, la->job, la->t, 3, 0);
	snprintf(la->msg, sizeof(la->msg), "%s", flex_last_error());
	return NULL;
}

/*
 * The first launch on a stream allocates its correction arena. With the
 * device memory full, the allocator calls the memory-pressure callback,
 * which synchronizes that very stream: the slot must be allocated outside
 * the stream's lock, or the callback deadlocks the launch.
 */
TEST(pressure_callback_may_synchronize_the_launching_stream)
{
	enum { N = 16 };
	static int32_t a[N * N], b[N * N], c[N * N];
	struct flex_context *ctx;
	struct oom_handler h = { 0 };
	struct launch_arg la = { 0 };
	struct flex_alloc_stats ast;
	struct flex_tensor t[3];
	struct flex_stream *s;
	struct flex_job *add;
	struct timespec dl;
	flex_alloc_index_t A, B, C;
	pthread_t th;
	int i, joined;

	ctx = open_ctx_regions(_metadata, 2 * MiB, 1);	/* one region: it fills up */
	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	add = add_job(_metadata, ctx, N, N);
	ASSERT_NE(NULL, add);
	h.s = s;
	h.al = flex_context_allocator(ctx);
	A = alloc_bytes(_metadata, ctx, sizeof(a));
	B = alloc_bytes(_metadata, ctx, sizeof(b));
	C = alloc_bytes(_metadata, ctx, sizeof(c));
	for (i = 0; i < N * N; i++) {
		a[i] = i;
		b[i] = 5;
	}
	ASSERT_EQ(0, flex_stream_copy(s, 1, A, 0, a, sizeof(a)));
	ASSERT_EQ(0, flex_stream_copy(s, 1, B, 0, b, sizeof(b)));
	/* The rest of the only region: the slot cannot be had without the handler. */
	ASSERT_EQ(0, flex_alloc_get_stats(h.al, &ast));
	ASSERT_EQ(0, flex_alloc_block_alloc(h.al, ast.largest_free_block, FLEX_ALLOC_TENSOR, &h.ballast))
		TH_LOG("%s", flex_last_error());
	flex_alloc_set_pressure_callback(h.al, oom_sync_and_free, &h);

	t[0] = tensor2(A, FLEX_DTYPE_INT32, N, N, N);
	t[1] = tensor2(B, FLEX_DTYPE_INT32, N, N, N);
	t[2] = tensor2(C, FLEX_DTYPE_INT32, N, N, N);
	la = (struct launch_arg){ .s = s, .job = add, .t = t };
	ASSERT_EQ(0, pthread_create(&th, NULL, launch_thread, &la));
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 20;
	joined = pthread_timedjoin_np(th, NULL, &dl);
	/* Deadlocked: the thread holds the stream's lock; cleaning up would hang too. */
	ASSERT_EQ(0, joined) TH_LOG("the launch did not return in 20 s: the pressure callback "
				    "ran under the stream's lock and deadlocked synchronizing it");
	EXPECT_EQ(0, la.err) TH_LOG("%s", la.msg);
	EXPECT_EQ(1, h.calls);
	EXPECT_EQ(0, h.sync_err);
	ASSERT_EQ(0, flex_stream_copy(s, 0, C, 0, c, sizeof(c)));
	sync_ok(_metadata, s, "launch after the pressure callback");
	for (i = 0; i < N * N && c[i] == i + 5; i++)
		;
	EXPECT_EQ(N * N, i) TH_LOG("C[%d]: expected %d, got %d", i, i + 5, c[i]);
	flex_alloc_set_pressure_callback(h.al, NULL, NULL);
	flex_job_destroy(add);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

/* ---- launch memory ---- */

/* Host heap in use: arenas plus mmap()ed blocks. */
static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * A launch of 2,097,152 tiles with 7 correction slots used to build all of
 * its CBs (672 MiB) and correction tensors (112 MiB) before returning. It
 * must hold a few windows' worth instead, also while its worker waits for
 * the queue to drain. Tile 0 faults (its FILL address is out of bounds),
 * so the stream stops there and the rest is never built.
 */
TEST(launch_memory_is_bounded_in_the_tile_count)
{
	enum { TILES = 2097152, NSLOTS = 7 };
	struct flex_step plan[3] = {
		flex_step_host_op(NULL, NULL), flex_step_simple(FLEX_STEP_DMA_CORRECTION),
		flex_step_simple(FLEX_STEP_COMPUTE),
	};
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_corr_slot corr[NSLOTS];
	struct flex_stream_stats st;
	struct flex_stream_error e;
	struct flex_kernel_sig sig;
	struct flex_job *job = NULL;
	flex_alloc_index_t X, bin = 0;
	size_t base, at_return, while_parked, after;
	struct flex_stream *s;
	struct flex_tensor x;
	struct prog pr;
	int i;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	memset(&sig, 0, sizeof(sig));
	sig.n_args = 1;
	sig.n_axes = 1;
	strcpy(sig.axis_name[0], "n");
	strcpy(sig.args[0].name, "X");
	sig.args[0].dtype = FLEX_DTYPE_INT32;
	sig.args[0].ndim = 1;
	sig.args[0].shape[0] = 1;
	memset(sig.args[0].axis, -1, sizeof(sig.args[0].axis));
	sig.args[0].axis[0] = 0;
	sig.args[0].is_output = 1;
	for (i = 0; i < NSLOTS; i++)
		corr[i] = (struct flex_corr_slot){ .kind = FLEX_CORR_CONST, .value = i };
	corr[0].value = FLEX_ADDR(0, 1ULL << 40);
	prog_init(&pr, NSLOTS);
	prog_emit(&pr, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, FLEX_SLOT(0), 1ULL, 7ULL);
	prog_emit(&pr, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	ASSERT_EQ(0, flex_context_load_program(ctx, &pr, prog_size(&pr), &bin));
	ASSERT_EQ(0, flex_job_new_kernel("two_million_tiles", bin, &sig, corr, NSLOTS, plan, 3,
					 &job)) TH_LOG("%s", flex_last_error());
	X = alloc_bytes(_metadata, ctx, (uint64_t)TILES * 4);
	x = (struct flex_tensor){ .index = X, .dtype = FLEX_DTYPE_INT32, .ndim = 1,
				  .shape = { TILES }, .strides = { 1 } };

	base = heap_in_use();
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_launch(s, job, &x, 1, 0)) TH_LOG("%s", flex_last_error());
	at_return = heap_in_use();
	usleep(200 * 1000);	/* the worker builds its window and blocks on the full queue */
	while_parked = heap_in_use();
	flex_stream_get_stats(s, &st);
	EXPECT_EQ(TILES, st.tiles);
	/* A window is an upload and 255 tiles. */
	EXPECT_LE(TILES + (TILES + 254) / 255 - FLEX_QUEUE_MAX_DEPTH, st.parked_cbs);
	EXPECT_EQ(-EBUSY, flex_stream_query(s, NULL));
	ASSERT_EQ(0, engines_pause(0));
	TH_LOG("heap: %zu bytes before, +%zd at return, +%zd while the worker waits", base,
	       (ssize_t)(at_return - base), (ssize_t)(while_parked - base));
	EXPECT_GT(4 * MiB, (ssize_t)(at_return - base))
		TH_LOG("the launch held %zd bytes when it returned", (ssize_t)(at_return - base));
	EXPECT_GT(4 * MiB, (ssize_t)(while_parked - base))
		TH_LOG("the launch held %zd bytes while parked", (ssize_t)(while_parked - base));

	/* Tile 0 faults: the stream stops, the worker builds nothing more. */
	EXPECT_EQ(-ERANGE, flex_stream_synchronize(s, &e));
	EXPECT_STREQ("two_million_tiles", e.job);
	EXPECT_EQ(0, e.tile) TH_LOG("%s", e.message);
	EXPECT_EQ(FLEX_STEP_COMPUTE, e.step_kind);
	after = heap_in_use();
	EXPECT_GT(4 * MiB, (ssize_t)(after - base)) TH_LOG("%zd bytes left after the fault",
							   (ssize_t)(after - base));
	ASSERT_EQ(0, flex_stream_reset(s));
	flex_job_destroy(job);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

/*
 * More CBs than the queue holds, built by the worker window after window
 * as the queue drains, and every tile right: 1,536 tiles of a 1 x 16 add.
 */
TEST(a_launch_larger_than_the_queue_runs_every_window)
{
	enum { ROWS = 1536, COLS = 16 };
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s = flex_context_default_stream(ctx);
	static int32_t a[ROWS * COLS], b[ROWS * COLS], c[ROWS * COLS];
	struct flex_stream_stats st;
	flex_alloc_index_t C;
	struct flex_tensor t[3];
	struct flex_job *add;
	int i;

	ASSERT_NE(NULL, ctx);
	add = add_job(_metadata, ctx, 1, COLS);
	C = add_operands(_metadata, ctx, s, ROWS, COLS, a, b, 7, t);
	for (i = 0; i < ROWS * COLS; i++)
		c[i] = -1;
	ASSERT_EQ(0, flex_stream_copy(s, 1, C, 0, c, sizeof(c)));
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_launch(s, add, t, 3, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_copy(s, 0, C, 0, c, sizeof(c)));
	ASSERT_EQ(0, engines_pause(0));
	sync_ok(_metadata, s, "3,072 CBs");
	for (i = 0; i < ROWS * COLS && c[i] == 8 * i; i++)
		;
	EXPECT_EQ(ROWS * COLS, i) TH_LOG("C[%d]: expected %d, got %d", i, 8 * i, c[i]);
	flex_stream_get_stats(s, &st);
	EXPECT_LT(0, st.parked_cbs);
	flex_job_destroy(add);
	flex_context_destroy(ctx);
}

/*
 * One upload per window: a launch of 600 tiles is 3 windows (255, 255 and
 * 90 tiles), each one DMA of its tiles' correction tensors into the
 * stream's arena and then its compute CBs, each reading its own tile's
 * tensor. Everything is queued before anything runs (engines paused), a
 * second launch after it reuses the arena, and every row of both results
 * must be right: a window uploaded over tensors still to be read, or a
 * tile pointed at another tile's tensor, shows as wrong rows.
 */
TEST(one_correction_upload_per_window_and_each_tile_reads_its_own)
{
	enum { ROWS = 600, COLS = 16, WINDOWS = 3 };
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s = flex_context_default_stream(ctx);
	static int32_t a[ROWS * COLS], b[ROWS * COLS], c[ROWS * COLS], d[ROWS * COLS];
	struct flex_stream_stats before, after;
	flex_alloc_index_t C, D;
	struct flex_tensor t[3], u[3];
	struct flex_job *add;
	int i;

	ASSERT_NE(NULL, ctx);
	add = add_job(_metadata, ctx, 1, COLS);
	C = add_operands(_metadata, ctx, s, ROWS, COLS, a, b, 5, t);
	D = alloc_bytes(_metadata, ctx, sizeof(d));
	sync_ok(_metadata, s, "inputs");
	/* D = C + A after it: other addresses in every tile's tensor, the same arena. */
	u[0] = t[2];
	u[1] = t[0];
	u[2] = tensor2(D, FLEX_DTYPE_INT32, ROWS, COLS, COLS);

	flex_stream_get_stats(s, &before);
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_launch(s, add, t, 3, 0)) TH_LOG("%s", flex_last_error());
	flex_stream_get_stats(s, &after);
	EXPECT_EQ(ROWS + WINDOWS, after.cbs - before.cbs)
		TH_LOG("%d tiles in %d windows: expected %d CBs, got %llu", ROWS, WINDOWS,
		       ROWS + WINDOWS, (unsigned long long)(after.cbs - before.cbs));
	EXPECT_EQ(ROWS, after.tiles - before.tiles);
	ASSERT_EQ(0, flex_stream_launch(s, add, u, 3, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_copy(s, 0, C, 0, c, sizeof(c)));
	ASSERT_EQ(0, flex_stream_copy(s, 0, D, 0, d, sizeof(d)));
	ASSERT_EQ(0, engines_pause(0));
	sync_ok(_metadata, s, "two launches of 3 windows");
	for (i = 0; i < ROWS * COLS && c[i] == 6 * i; i++)
		;
	EXPECT_EQ(ROWS * COLS, i) TH_LOG("C[%d] (tile %d): expected %d, got %d", i, i / COLS,
					 6 * i, c[i]);
	for (i = 0; i < ROWS * COLS && d[i] == 7 * i; i++)
		;
	EXPECT_EQ(ROWS * COLS, i) TH_LOG("D[%d] (tile %d): expected %d, got %d", i, i / COLS,
					 7 * i, d[i]);
	flex_job_destroy(add);
	flex_context_destroy(ctx);
}

/* ---- concurrent correction arenas ---- */

struct worker_arg {
	struct flex_context *ctx;
	struct flex_job *job;
	int seed, errors, launches;
	char msg[256];
};

/* Launches many tiled matmuls on its own stream and checks every result. */
static void *launcher(void *p)
{
	enum { M = 32, N = 16, K = 8, ROUNDS = 12 };
	struct worker_arg *w = p;
	struct flex_alloc *al = flex_context_allocator(w->ctx);
	static __thread int32_t a[ROUNDS][M * K], b[ROUNDS][K * N], c[ROUNDS][M * N];
	int32_t want[M * N];
	flex_alloc_index_t A[ROUNDS], B[ROUNDS], C[ROUNDS];
	struct flex_stream *s;
	struct flex_tensor t[3];
	int r, i;

	if (flex_stream_new(w->ctx, FLEX_STREAM_PRIO_NORMAL, &s)) {
		w->errors++;
		return NULL;
	}
	for (r = 0; r < ROUNDS; r++) {
		flex_alloc_block_alloc(al, sizeof(a[r]), FLEX_ALLOC_TENSOR, &A[r]);
		flex_alloc_block_alloc(al, sizeof(b[r]), FLEX_ALLOC_TENSOR, &B[r]);
		flex_alloc_block_alloc(al, sizeof(c[r]), FLEX_ALLOC_TENSOR, &C[r]);
		fill_random(a[r], sizeof(a[r]), w->seed + r);
		fill_random(b[r], sizeof(b[r]), w->seed + 100 + r);
		flex_stream_copy(s, 1, A[r], 0, a[r], sizeof(a[r]));
		flex_stream_copy(s, 1, B[r], 0, b[r], sizeof(b[r]));
		t[0] = tensor2(A[r], FLEX_DTYPE_INT32, M, K, K);
		t[1] = tensor2(B[r], FLEX_DTYPE_INT32, K, N, N);
		t[2] = tensor2(C[r], FLEX_DTYPE_INT32, M, N, N);
		if (flex_stream_launch(s, w->job, t, 3, 0)) {
			snprintf(w->msg, sizeof(w->msg), "%s", flex_last_error());
			w->errors++;
		}
		w->launches++;
		flex_stream_copy(s, 0, C[r], 0, c[r], sizeof(c[r]));
	}
	if (flex_stream_synchronize(s, NULL))
		w->errors++;
	for (r = 0; r < ROUNDS; r++) {
		ref_matmul(want, a[r], b[r], FLEX_DTYPE_INT32, M, N, K, K, N, N);
		for (i = 0; i < M * N; i++)
			if (want[i] != c[r][i]) {
				snprintf(w->msg, sizeof(w->msg), "seed %d round %d C[%d]: expected "
					 "%d got %d", w->seed, r, i, want[i], c[r][i]);
				w->errors++;
				break;
			}
		flex_alloc_block_free(al, A[r]);
		flex_alloc_block_free(al, B[r]);
		flex_alloc_block_free(al, C[r]);
	}
	flex_stream_destroy(s);
	return NULL;
}

TEST(two_streams_launching_at_once_keep_their_correction_slots)
{
	struct flex_context *ctx = open_ctx(_metadata);
	struct worker_arg w[2];
	pthread_t th[2];
	struct flex_job *job;
	int i;

	ASSERT_NE(NULL, ctx);
	/* Tile 8 x 8 x 8, launched at 32 x 16 x 8: 8 tiles per launch. */
	job = matmul_job(_metadata, ctx, FLEX_DTYPE_INT32, 8, 8, 8);
	for (i = 0; i < 2; i++) {
		w[i] = (struct worker_arg){ .ctx = ctx, .job = job, .seed = 1000 * (i + 1) };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, launcher, &w[i]));
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		EXPECT_EQ(0, w[i].errors) TH_LOG("thread %d: %s", i, w[i].msg);
		EXPECT_EQ(12, w[i].launches);
	}
	flex_job_destroy(job);
	flex_context_destroy(ctx);
}

/* ---- tiled launches against the CPU reference ---- */

struct mm_shape {
	uint64_t m, n, k;	/* launched */
	uint64_t tm, tn, tk;	/* compiled tile */
	uint64_t lda_pad;	/* extra elements per row of A (strided) */
	const char *what;
};

static void check_tiled_matmul(struct __test_metadata *_metadata, struct flex_context *ctx,
			       enum flex_dtype dt, const struct mm_shape *sh, int seed)
{
	struct flex_stream *s = flex_context_default_stream(ctx);
	size_t es = dt == FLEX_DTYPE_INT8 ? 1 : 4;
	uint64_t lda = sh->k + sh->lda_pad;
	size_t asz = sh->m * lda * es, bsz = sh->k * sh->n * es, csz = sh->m * sh->n * 4;
	void *a = malloc(asz), *b = malloc(bsz);
	int32_t *c = malloc(csz), *want = malloc(csz);
	struct flex_stream_stats before, after;
	flex_alloc_index_t A, B, C;
	struct flex_tensor t[3];
	struct flex_job *job;
	uint64_t tiles, i;

	ASSERT_TRUE(a && b && c && want);
	job = matmul_job(_metadata, ctx, dt, sh->tm, sh->tn, sh->tk);
	ASSERT_NE(NULL, job);
	A = alloc_bytes(_metadata, ctx, asz);
	B = alloc_bytes(_metadata, ctx, bsz);
	C = alloc_bytes(_metadata, ctx, csz);
	fill_random(a, asz, seed);
	fill_random(b, bsz, seed + 1);
	memset(c, 0x5a, csz);	/* C is overwritten, never accumulated into garbage */
	ref_matmul(want, a, b, dt, sh->m, sh->n, sh->k, lda, sh->n, sh->n);
	ASSERT_EQ(0, flex_stream_copy(s, 1, A, 0, a, asz));
	ASSERT_EQ(0, flex_stream_copy(s, 1, B, 0, b, bsz));
	ASSERT_EQ(0, flex_stream_copy(s, 1, C, 0, c, csz));
	t[0] = tensor2(A, dt, sh->m, sh->k, lda);
	t[1] = tensor2(B, dt, sh->k, sh->n, sh->n);
	t[2] = tensor2(C, FLEX_DTYPE_INT32, sh->m, sh->n, sh->n);
	flex_stream_get_stats(s, &before);
	ASSERT_EQ(0, flex_stream_launch(s, job, t, 3, 0))
		TH_LOG("%s: %s", sh->what, flex_last_error());
	flex_stream_get_stats(s, &after);
	tiles = (sh->m / sh->tm) * (sh->n / sh->tn) * (sh->k / sh->tk);
	EXPECT_EQ(tiles, after.tiles - before.tiles) TH_LOG("%s", sh->what);
	ASSERT_EQ(0, flex_stream_copy(s, 0, C, 0, c, csz));
	sync_ok(_metadata, s, sh->what);
	for (i = 0; i < sh->m * sh->n && c[i] == want[i]; i++)
		;
	EXPECT_EQ(sh->m * sh->n, i) TH_LOG("%s %s: C[%llu][%llu] expected %d, got %d",
					   dt == FLEX_DTYPE_INT8 ? "int8" : "int32", sh->what,
					   (unsigned long long)(i / sh->n),
					   (unsigned long long)(i % sh->n), want[i], c[i]);
	flex_alloc_block_free(flex_context_allocator(ctx), A);
	flex_alloc_block_free(flex_context_allocator(ctx), B);
	flex_alloc_block_free(flex_context_allocator(ctx), C);
	flex_job_destroy(job);
	free(a);
	free(b);
	free(c);
	free(want);
}

static const struct mm_shape mm_shapes[] = {
	{ 8, 8, 8, 8, 8, 8, 0, "exactly the tile" },
	{ 32, 8, 8, 8, 8, 8, 0, "M tiled (B matches the tile, reused)" },
	{ 8, 40, 8, 8, 8, 8, 0, "N tiled (A matches the tile, reused)" },
	{ 24, 16, 8, 8, 8, 8, 0, "M x N nested" },
	{ 8, 8, 32, 8, 8, 8, 0, "K tiled: reduction with accumulation" },
	{ 16, 24, 40, 8, 8, 8, 0, "M x N x K" },
	{ 12, 10, 6, 4, 5, 3, 0, "odd tiles, all axes" },
	{ 32, 16, 24, 16, 16, 8, 5, "strided A, M and K tiled" },
	{ 64, 64, 64, 16, 16, 16, 0, "64 tiles" },
};

TEST(tiled_matmul_int32_matches_the_cpu_reference)
{
	struct flex_context *ctx = open_ctx(_metadata);
	size_t i;

	ASSERT_NE(NULL, ctx);
	for (i = 0; i < sizeof(mm_shapes) / sizeof(mm_shapes[0]); i++)
		check_tiled_matmul(_metadata, ctx, FLEX_DTYPE_INT32, &mm_shapes[i], (int)i + 1);
	flex_context_destroy(ctx);
}

TEST(tiled_matmul_int8_matches_the_cpu_reference)
{
	struct flex_context *ctx = open_ctx(_metadata);
	size_t i;

	ASSERT_NE(NULL, ctx);
	for (i = 0; i < sizeof(mm_shapes) / sizeof(mm_shapes[0]); i++)
		check_tiled_matmul(_metadata, ctx, FLEX_DTYPE_INT8, &mm_shapes[i], (int)i + 50);
	flex_context_destroy(ctx);
}

TEST(tiled_add_with_padded_rows)
{
	enum { R = 24, C = 20, LD = 23, TR = 8, TC = 10 };
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s = flex_context_default_stream(ctx);
	static int32_t a[R * LD], b[R * C], c[R * LD], want[R * LD];
	flex_alloc_index_t A, B, Cc;
	struct flex_tensor t[3];
	struct flex_job *job;
	int i, j;

	ASSERT_NE(NULL, ctx);
	job = add_job(_metadata, ctx, TR, TC);
	A = alloc_bytes(_metadata, ctx, sizeof(a));
	B = alloc_bytes(_metadata, ctx, sizeof(b));
	Cc = alloc_bytes(_metadata, ctx, sizeof(c));
	fill_random(a, sizeof(a), 7);
	fill_random(b, sizeof(b), 8);
	fill_random(c, sizeof(c), 9);
	memcpy(want, c, sizeof(c));	/* padding between rows stays as it was */
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			want[i * LD + j] = (int32_t)((uint32_t)a[i * LD + j] + (uint32_t)b[i * C + j]);
	ASSERT_EQ(0, flex_stream_copy(s, 1, A, 0, a, sizeof(a)));
	ASSERT_EQ(0, flex_stream_copy(s, 1, B, 0, b, sizeof(b)));
	ASSERT_EQ(0, flex_stream_copy(s, 1, Cc, 0, c, sizeof(c)));
	t[0] = tensor2(A, FLEX_DTYPE_INT32, R, C, LD);
	t[1] = tensor2(B, FLEX_DTYPE_INT32, R, C, C);
	t[2] = tensor2(Cc, FLEX_DTYPE_INT32, R, C, LD);
	ASSERT_EQ(0, flex_stream_launch(s, job, t, 3, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_copy(s, 0, Cc, 0, c, sizeof(c)));
	sync_ok(_metadata, s, "tiled add");
	for (i = 0; i < R * LD && c[i] == want[i]; i++)
		;
	EXPECT_EQ(R * LD, i) TH_LOG("C[%d][%d]: expected %d, got %d", i / LD, i % LD, want[i],
				    c[i]);
	flex_job_destroy(job);
	flex_context_destroy(ctx);
}

/* ---- views ---- */

/*
 * Views launch in place at their byte offset: C[2:] = A[3:] + B[:, 4:]
 * (x[1:]-style row views and a column narrow), with rows before the view
 * untouched; a view leaving its allocation is -ERANGE, a misaligned one
 * -EINVAL, both naming the argument.
 */
TEST(views_launch_at_their_byte_offset)
{
	enum { R = 8, C = 16, AR = R + 3, BC = C + 4, CR = R + 2 };
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s = flex_context_default_stream(ctx);
	static int32_t a[AR * C], b[R * BC], c[CR * C], want[CR * C];
	flex_alloc_index_t A, B, Cc;
	struct flex_tensor t[3], bad[3];
	struct flex_job *job;
	uint64_t size;
	int i, j;

	ASSERT_NE(NULL, ctx);
	job = add_job(_metadata, ctx, R, C);
	A = alloc_bytes(_metadata, ctx, sizeof(a));
	B = alloc_bytes(_metadata, ctx, sizeof(b));
	Cc = alloc_bytes(_metadata, ctx, sizeof(c));
	fill_random(a, sizeof(a), 21);
	fill_random(b, sizeof(b), 22);
	for (i = 0; i < CR * C; i++)
		c[i] = want[i] = -7;
	for (i = 0; i < R; i++)
		for (j = 0; j < C; j++)
			want[(i + 2) * C + j] = (int32_t)((uint32_t)a[(i + 3) * C + j] +
							  (uint32_t)b[i * BC + 4 + j]);
	ASSERT_EQ(0, flex_stream_copy(s, 1, A, 0, a, sizeof(a)));
	ASSERT_EQ(0, flex_stream_copy(s, 1, B, 0, b, sizeof(b)));
	ASSERT_EQ(0, flex_stream_copy(s, 1, Cc, 0, c, sizeof(c)));
	t[0] = tensor2(A, FLEX_DTYPE_INT32, R, C, C);
	t[0].byte_offset = 3 * C * 4;		/* A[3:] */
	t[1] = tensor2(B, FLEX_DTYPE_INT32, R, C, BC);
	t[1].byte_offset = 4 * 4;		/* B[:, 4:] */
	t[2] = tensor2(Cc, FLEX_DTYPE_INT32, R, C, C);
	t[2].byte_offset = 2 * C * 4;		/* C[2:] */
	ASSERT_EQ(0, flex_stream_launch(s, job, t, 3, 0)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_copy(s, 0, Cc, 0, c, sizeof(c)));
	sync_ok(_metadata, s, "views");
	for (i = 0; i < CR * C && c[i] == want[i]; i++)
		;
	EXPECT_EQ(CR * C, i) TH_LOG("C[%d][%d]: expected %d, got %d (rows 0 and 1 are outside "
				    "the view)", i / C, i % C, want[i], c[i]);

	/* One element past the block: -ERANGE naming A. */
	ASSERT_EQ(0, flex_alloc_block_resolve(flex_context_allocator(ctx), A, &(struct flex_vaddr){ 0 },
					&size));
	memcpy(bad, t, sizeof(t));
	bad[0].byte_offset = size - (uint64_t)R * C * 4 + 4;
	EXPECT_EQ(-ERANGE, flex_stream_launch(s, job, bad, 3, 0));
	EXPECT_NE(NULL, strstr(flex_last_error(), "(A)")) TH_LOG("%s", flex_last_error());
	EXPECT_NE(NULL, strstr(flex_last_error(), "byte offset")) TH_LOG("%s",
									      flex_last_error());
	bad[0].byte_offset = size - (uint64_t)R * C * 4;	/* exactly the end: fine */
	EXPECT_EQ(0, flex_stream_launch(s, job, bad, 3, 0)) TH_LOG("%s", flex_last_error());
	memcpy(bad, t, sizeof(t));
	bad[2].byte_offset = 2;
	EXPECT_EQ(-EINVAL, flex_stream_launch(s, job, bad, 3, 0));
	EXPECT_NE(NULL, strstr(flex_last_error(), "(C)")) TH_LOG("%s", flex_last_error());
	sync_ok(_metadata, s, "after the refusals");
	flex_job_destroy(job);
	flex_context_destroy(ctx);
}

/* ---- validation ---- */

TEST(launch_validation_names_the_argument)
{
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s = flex_context_default_stream(ctx), *s2;
	struct flex_job *job;
	struct flex_tensor t[3], bad[3];
	flex_alloc_index_t A, B, C, small;

	ASSERT_NE(NULL, ctx);
	job = matmul_job(_metadata, ctx, FLEX_DTYPE_INT32, 8, 8, 8);
	A = alloc_bytes(_metadata, ctx, 16 * 8 * 4);
	B = alloc_bytes(_metadata, ctx, 8 * 8 * 4);
	C = alloc_bytes(_metadata, ctx, 16 * 8 * 4);
	small = alloc_bytes(_metadata, ctx, 128);
	t[0] = tensor2(A, FLEX_DTYPE_INT32, 16, 8, 8);
	t[1] = tensor2(B, FLEX_DTYPE_INT32, 8, 8, 8);
	t[2] = tensor2(C, FLEX_DTYPE_INT32, 16, 8, 8);

	EXPECT_EQ(-EINVAL, flex_stream_launch(s, job, t, 2, 0));
	EXPECT_NE(NULL, strstr(flex_last_error(), "argument")) TH_LOG("%s",
									  flex_last_error());
	memcpy(bad, t, sizeof(t));
	bad[1].dtype = FLEX_DTYPE_INT8;
	EXPECT_EQ(-EINVAL, flex_stream_launch(s, job, bad, 3, 0));
	EXPECT_NE(NULL, strstr(flex_last_error(), "(B)")) TH_LOG("%s", flex_last_error());
	memcpy(bad, t, sizeof(t));
	bad[0].shape[0] = 12;	/* not a multiple of the tile 8 */
	EXPECT_EQ(-EINVAL, flex_stream_launch(s, job, bad, 3, 0));
	EXPECT_NE(NULL, strstr(flex_last_error(), "(A)")) TH_LOG("%s", flex_last_error());
	memcpy(bad, t, sizeof(t));
	bad[2].strides[1] = 2;
	EXPECT_EQ(-EINVAL, flex_stream_launch(s, job, bad, 3, 0));
	EXPECT_NE(NULL, strstr(flex_last_error(), "(C)")) TH_LOG("%s", flex_last_error());
	memcpy(bad, t, sizeof(t));
	bad[2].index = small;	/* 128 bytes for a 512-byte tensor */
	EXPECT_EQ(-ERANGE, flex_stream_launch(s, job, bad, 3, 0));
	EXPECT_NE(NULL, strstr(flex_last_error(), "(C)")) TH_LOG("%s", flex_last_error());
	memcpy(bad, t, sizeof(t));
	bad[1].index = 987654321;
	EXPECT_NE(0, flex_stream_launch(s, job, bad, 3, 0));
	EXPECT_NE(NULL, strstr(flex_last_error(), "(B)")) TH_LOG("%s", flex_last_error());
	EXPECT_EQ(-EINVAL, flex_stream_launch(s, job, t, 3, 1U << 7));

	/* allow_tiled_launch = false, by flag and by the environment. */
	EXPECT_EQ(-EDOM, flex_stream_launch(s, job, t, 3, FLEX_LAUNCH_NO_TILING));
	EXPECT_NE(NULL, strstr(flex_last_error(), "(A)")) TH_LOG("%s", flex_last_error());
	setenv("FLEX_ALLOW_TILED_LAUNCH", "0", 1);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s2));
	unsetenv("FLEX_ALLOW_TILED_LAUNCH");
	EXPECT_EQ(-EDOM, flex_stream_launch(s2, job, t, 3, 0));
	t[0].shape[0] = 8;
	t[2].shape[0] = 8;
	EXPECT_EQ(0, flex_stream_launch(s2, job, t, 3, 0)) TH_LOG("%s", flex_last_error());
	sync_ok(_metadata, s2, "untiled launch");
	flex_stream_destroy(s2);

	/* A DMA past its allocation, a DMA-only job with tensors. */
	EXPECT_EQ(-ERANGE, flex_stream_copy(s, 1, small, 64, (void *)ones, 128));
	EXPECT_EQ(0, flex_stream_query(s, NULL));
	flex_job_destroy(job);
	flex_context_destroy(ctx);
}

TEST(more_than_seven_regions_is_e2big)
{
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_step plan[1] = { flex_step_simple(FLEX_STEP_COMPUTE) };
	struct flex_tensor t[8];
	struct flex_kernel_sig sig;
	struct flex_job *job = NULL;
	flex_alloc_index_t bin = 0;
	struct prog pr;
	int i;

	ASSERT_NE(NULL, ctx);
	memset(&sig, 0, sizeof(sig));
	sig.n_args = 8;
	for (i = 0; i < 8; i++) {
		snprintf(sig.args[i].name, sizeof(sig.args[i].name), "T%d", i);
		sig.args[i].dtype = FLEX_DTYPE_INT32;
		sig.args[i].ndim = 1;
		sig.args[i].shape[0] = 4;
		memset(sig.args[i].axis, -1, sizeof(sig.args[i].axis));
		/* Load balancing puts each of the first allocations in a new region. */
		t[i] = (struct flex_tensor){ .dtype = FLEX_DTYPE_INT32, .ndim = 1,
					     .shape = { 4 }, .strides = { 1 } };
		t[i].index = alloc_bytes(_metadata, ctx, 16);
	}
	prog_init(&pr, 0);
	prog_emit(&pr, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	ASSERT_EQ(0, flex_context_load_program(ctx, &pr, prog_size(&pr), &bin));
	ASSERT_EQ(0, flex_job_new_kernel("eight", bin, &sig, NULL, 0, plan, 1, &job))
		TH_LOG("%s", flex_last_error());
	EXPECT_EQ(-E2BIG, flex_stream_launch(flex_context_default_stream(ctx), job, t, 8, 0));
	EXPECT_NE(NULL, strstr(flex_last_error(), "T7")) TH_LOG("%s", flex_last_error());
	flex_job_destroy(job);
	flex_context_destroy(ctx);
}

TEST(plan_step_order_is_validated_at_creation)
{
	struct flex_kernel *kern;
	struct flex_step s3[3] = {
		flex_step_host_op(NULL, NULL), flex_step_simple(FLEX_STEP_DMA_CORRECTION),
		flex_step_simple(FLEX_STEP_COMPUTE),
	};
	struct flex_step bad[3];
	struct flex_step dma = flex_step_dma_to_device(1, 0, ones, 0);
	struct flex_job *job;
	struct flex_plan *plan;

	ASSERT_EQ(0, flex_kernel_new_matmul(FLEX_DTYPE_INT32, 4, 4, 4, &kern));
	ASSERT_EQ(0, flex_job_new_kernel("mm", 1, &kern->sig, kern->corr, kern->n_corr, s3, 3, &job));
	ASSERT_EQ(0, flex_plan_new(&plan));
	ASSERT_EQ(0, flex_plan_add_job(plan, job));
	EXPECT_EQ(job, flex_plan_find(plan, "mm"));
	EXPECT_EQ(1, flex_plan_n_jobs(plan));

	/* Compute before the correction DMA. */
	bad[0] = s3[0];
	bad[1] = s3[2];
	bad[2] = s3[1];
	EXPECT_EQ(-EINVAL, flex_job_new_kernel("swapped", 1, &kern->sig, kern->corr, kern->n_corr,
					       bad, 3, &job));
	EXPECT_NE(NULL, strstr(flex_last_error(), "step 1")) TH_LOG("%s", flex_last_error());
	/* Correction metadata but a compute-only plan. */
	EXPECT_EQ(-EINVAL, flex_job_new_kernel("nocorr", 1, &kern->sig, kern->corr, kern->n_corr,
					       &s3[2], 1, &job));
	/* A correction slot naming an argument the kernel lacks. */
	kern->corr[0].arg = 9;
	EXPECT_EQ(-EINVAL, flex_job_new_kernel("slot", 1, &kern->sig, kern->corr, kern->n_corr,
					       s3, 3, &job));
	EXPECT_NE(NULL, strstr(flex_last_error(), "slot 0")) TH_LOG("%s", flex_last_error());
	/* DMA-only jobs: no compute, no correction builder; a 0-byte DMA is a no-op. */
	EXPECT_EQ(-EINVAL, flex_job_new("dma", &s3[2], 1, &job));
	ASSERT_EQ(0, flex_job_new("dma", &dma, 1, &job));
	flex_job_destroy(job);
	EXPECT_EQ(-EINVAL, flex_job_new("dma", &s3[0], 1, &job));
	EXPECT_EQ(-EINVAL, flex_job_new("dma", s3, 0, &job));
	dma.size = 64;
	ASSERT_EQ(0, flex_job_new("dma", &dma, 1, &job));
	EXPECT_EQ(0, flex_plan_add_job(plan, job));
	ASSERT_EQ(0, flex_job_new("dma", &dma, 1, &job));
	EXPECT_EQ(-EEXIST, flex_plan_add_job(plan, job));
	EXPECT_EQ(2, flex_plan_n_jobs(plan));
	flex_plan_destroy(plan);
	flex_kernel_destroy(kern);
}

TEST(stream_priorities_are_accepted)
{
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_stream *s[3], *bad = NULL;
	int p;

	ASSERT_NE(NULL, ctx);
	for (p = 0; p < 3; p++) {
		ASSERT_EQ(0, flex_stream_new(ctx, p, &s[p]));
		EXPECT_EQ(p, flex_stream_priority(s[p]));
		EXPECT_EQ(p, queue_status(flex_device_fd(flex_context_device(ctx)),
					  flex_stream_queue_id(s[p])).priority);
	}
	EXPECT_EQ(-EINVAL, flex_stream_new(ctx, 3, &bad));
	EXPECT_EQ(-EINVAL, flex_stream_new(ctx, -1, &bad));
	for (p = 0; p < 3; p++) {
		EXPECT_EQ(0, flex_stream_query(s[p], NULL));	/* empty: done */
		EXPECT_EQ(0, flex_stream_synchronize(s[p], NULL));
		flex_stream_destroy(s[p]);
	}
	flex_context_destroy(ctx);
}

TEST_HARNESS_MAIN
