// SPDX-License-Identifier: GPL-2.0
/*
 * Overlap within a FlexStream (libflex/src/overlap.c) against the driver:
 * uploads go to the stream's DMA queue, with a WAIT there only for earlier
 * work that uses the memory they write; a host function's output is what
 * the upload after it sends; a fault in an upload is reported as itself
 * and a reset recovers both queues; and the results of a random mix of
 * uploads, computes, device copies, fills and downloads are those of
 * running them one by one (FIFO), whatever the engines' interleaving.
 *
 * Where a test needs work to be still queued when it looks, it pauses the
 * engines through debugfs instead of relying on timing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <flex/context.h>
#include <flex/device.h>
#include <flex/stream.h>

#include "kselftest_harness.h"
#include "flex_test.h"
#include "libflex_test.h"

#define N	32			/* the add kernel's tile: N x N int32 */
#define TBYTES	(N * N * sizeof(int32_t))

/* CBs the stream's DMA queue has been given so far. */
static uint64_t dq_submitted(struct __test_metadata *_metadata, struct flex_context *ctx,
			     struct flex_stream *s)
{
	struct flex_queue_status st;
	uint32_t dq;

	if (flex_stream_dma_queue_id(s, &dq))
		return 0;
	EXPECT_EQ(0, flex_device_queue_status(flex_context_device(ctx), dq, &st))
		TH_LOG("%s", flex_last_error());
	return st.submitted;
}

static void upload(struct __test_metadata *_metadata, struct flex_stream *s,
		   flex_alloc_index_t to, const void *from)
{
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_TO_DEVICE, to, 0, (void *)from, TBYTES))
		TH_LOG("%s", flex_last_error());
}

static void launch_add(struct __test_metadata *_metadata, struct flex_stream *s,
		       struct flex_job *add, flex_alloc_index_t c, flex_alloc_index_t a,
		       flex_alloc_index_t b)
{
	struct flex_tensor t[3] = {
		tensor2(a, FLEX_DTYPE_INT32, N, N, N),
		tensor2(b, FLEX_DTYPE_INT32, N, N, N),
		tensor2(c, FLEX_DTYPE_INT32, N, N, N),
	};

	ASSERT_EQ(0, flex_stream_launch(s, add, t, 3, 0)) TH_LOG("%s", flex_last_error());
}

static void expect_tile(struct __test_metadata *_metadata, const int32_t *got,
			const int32_t *want, const char *what)
{
	int i;

	for (i = 0; i < N * N && got[i] == want[i]; i++)
		;
	EXPECT_EQ(N * N, i) TH_LOG("%s: element %d: expected %d, got %d", what, i,
				   i < N * N ? want[i] : 0, i < N * N ? got[i] : 0);
}

static void fill_tile(int32_t *t, int32_t base)
{
	int i;

	for (i = 0; i < N * N; i++)
		t[i] = base + i;
}

/*
 * With the engines paused, so that nothing completes: an upload into
 * memory no queued work uses goes to the DMA queue alone (1 CB), one into
 * memory a queued launch reads or writes after a WAIT for that launch
 * (2 CBs); and the launch reads what was there before the upload.
 */
TEST(an_upload_waits_only_for_earlier_work_on_its_memory)
{
	struct flex_context *ctx = open_ctx_regions(_metadata, 64 * MiB, 4);
	static int32_t zero[N * N], b0[N * N], b1[N * N], c[N * N], out[N * N], want[N * N];
	flex_alloc_index_t A, B, C;
	struct flex_stream *s;
	struct flex_job *add;
	uint64_t d0;
	uint32_t dq;
	int i;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	add = add_job(_metadata, ctx, N, N);
	ASSERT_NE(NULL, add);
	A = alloc_bytes(_metadata, ctx, TBYTES);
	B = alloc_bytes(_metadata, ctx, TBYTES);
	C = alloc_bytes(_metadata, ctx, TBYTES);
	EXPECT_EQ(-ENOENT, flex_stream_dma_queue_id(s, &dq)) TH_LOG("a DMA queue before any upload");
	fill_tile(b0, 1000);
	fill_tile(b1, 5000);
	fill_tile(c, -7);
	upload(_metadata, s, A, zero);
	upload(_metadata, s, B, b0);
	sync_ok(_metadata, s, "first uploads");
	ASSERT_EQ(0, flex_stream_dma_queue_id(s, &dq)) TH_LOG("the uploads made no DMA queue");
	EXPECT_NE(flex_stream_queue_id(s), dq);

	ASSERT_EQ(0, engines_pause(1));
	launch_add(_metadata, s, add, A, A, B);		/* A = A + B, reads b0 */
	d0 = dq_submitted(_metadata, ctx, s);
	upload(_metadata, s, C, c);			/* nothing queued uses C */
	EXPECT_EQ(d0 + 1, dq_submitted(_metadata, ctx, s)) TH_LOG("an upload into unused memory");
	upload(_metadata, s, B, b1);			/* the queued add reads B */
	EXPECT_EQ(d0 + 3, dq_submitted(_metadata, ctx, s)) TH_LOG("an upload into memory in use");
	launch_add(_metadata, s, add, A, A, B);		/* A = A + B, reads b1 */
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, A, 0, out, TBYTES));
	EXPECT_EQ(-EBUSY, flex_stream_query(s, NULL));
	ASSERT_EQ(0, engines_pause(0));
	sync_ok(_metadata, s, "two adds around an upload");
	for (i = 0; i < N * N; i++)
		want[i] = b0[i] + b1[i];
	expect_tile(_metadata, out, want, "A = b0 + b1 (b1 must not overtake the first add)");
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, C, 0, out, TBYTES));
	sync_ok(_metadata, s, "download C");
	expect_tile(_metadata, out, c, "C");

	flex_job_destroy(add);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

static int host_fill_7(void *user)
{
	int32_t *t = user;
	int i;

	for (i = 0; i < N * N; i++)
		t[i] = 7;
	return 0;
}

/*
 * Work whose memory the stream cannot know orders the uploads after it: a
 * host function that writes the buffer the next upload sends, and a wait
 * for another stream's event (a barrier: the upload waits for the WAIT).
 */
TEST(host_functions_and_event_waits_order_the_uploads_after_them)
{
	struct flex_context *ctx = open_ctx_regions(_metadata, 64 * MiB, 4);
	static int32_t host[N * N], out[N * N], sevens[N * N], zero[N * N];
	struct flex_stream *s, *other;
	struct flex_event *ev;
	flex_alloc_index_t C, D;
	uint64_t d0;
	int i;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &other));
	C = alloc_bytes(_metadata, ctx, TBYTES);
	D = alloc_bytes(_metadata, ctx, TBYTES);
	for (i = 0; i < N * N; i++)
		sevens[i] = 7;
	upload(_metadata, s, D, zero);
	sync_ok(_metadata, s, "first upload");

	ASSERT_EQ(0, flex_event_new(0, &ev));
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_copy(other, FLEX_COPY_FROM_DEVICE, D, 0, out, TBYTES));
	ASSERT_EQ(0, flex_event_record(ev, other));
	ASSERT_EQ(0, flex_stream_wait_event(s, ev));
	d0 = dq_submitted(_metadata, ctx, s);
	/* FIFO empty (uploads only so far): the WAIT goes to the driver at once. */
	upload(_metadata, s, D, sevens);	/* other still reads D: wait for it */
	EXPECT_EQ(d0 + 2, dq_submitted(_metadata, ctx, s)) TH_LOG("an upload after an event wait");
	ASSERT_EQ(0, engines_pause(0));
	sync_ok(_metadata, s, "event wait, then upload");
	sync_ok(_metadata, other, "the other stream");
	expect_tile(_metadata, out, zero, "D as the other stream read it, before the upload");
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, D, 0, out, TBYTES));
	sync_ok(_metadata, s, "download D");
	expect_tile(_metadata, out, sevens, "D after the upload");

	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_host_func(s, host_fill_7, host));
	upload(_metadata, s, C, host);	/* after the function: held back with it */
	ASSERT_EQ(0, engines_pause(0));
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, C, 0, out, TBYTES));
	sync_ok(_metadata, s, "host function, then upload");
	expect_tile(_metadata, out, sevens, "C: the upload sent the host function's output");

	flex_event_destroy(ev);
	flex_stream_destroy(other);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

/*
 * A download writes host memory that a later upload may send: the upload
 * waits for it, so B gets the add's result that the download carried
 * through @host, not what @host held before.
 */
TEST(an_upload_from_a_downloads_buffer_waits_for_the_download)
{
	struct flex_context *ctx = open_ctx_regions(_metadata, 64 * MiB, 4);
	static int32_t a[N * N], host[N * N], out[N * N], want[N * N];
	flex_alloc_index_t A, B;
	struct flex_stream *s;
	struct flex_job *add;
	int i;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	add = add_job(_metadata, ctx, N, N);
	ASSERT_NE(NULL, add);
	A = alloc_bytes(_metadata, ctx, TBYTES);
	B = alloc_bytes(_metadata, ctx, TBYTES);
	fill_tile(a, 21);
	upload(_metadata, s, A, a);
	sync_ok(_metadata, s, "first upload");
	for (i = 0; i < N * N; i++) {
		host[i] = -1;
		want[i] = 2 * a[i];
	}

	ASSERT_EQ(0, engines_pause(1));
	launch_add(_metadata, s, add, A, A, A);		/* A = 2a */
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, A, 0, host, TBYTES));
	upload(_metadata, s, B, host);			/* sends what the download brought */
	ASSERT_EQ(0, engines_pause(0));
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, B, 0, out, TBYTES));
	sync_ok(_metadata, s, "add, download, upload");
	expect_tile(_metadata, out, want, "B: the upload ran before the download it sends");
	flex_job_destroy(add);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

/*
 * An upload that had to go to the main queue (it came while a host
 * function held the stream's work back) is known to the uploads after it:
 * a later upload into the same memory waits for it instead of landing
 * first, so the later one's data is what stays.
 */
TEST(an_upload_held_back_on_the_main_queue_orders_later_uploads)
{
	struct flex_context *ctx = open_ctx_regions(_metadata, 64 * MiB, 4);
	static int32_t first[N * N], second[N * N], out[N * N], scratch[N * N];
	struct flex_queue_status st;
	flex_alloc_index_t X, T;
	struct flex_stream *s;
	struct flex_job *add;
	uint64_t m0, d0;
	int tries;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	add = add_job(_metadata, ctx, N, N);
	ASSERT_NE(NULL, add);
	X = alloc_bytes(_metadata, ctx, TBYTES);
	T = alloc_bytes(_metadata, ctx, TBYTES);
	fill_tile(first, 100);
	fill_tile(second, 9000);
	upload(_metadata, s, T, scratch);
	sync_ok(_metadata, s, "first upload");
	ASSERT_EQ(0, flex_device_queue_status(flex_context_device(ctx), flex_stream_queue_id(s),
					      &st));
	m0 = st.submitted;

	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_host_func(s, host_fill_7, scratch));
	launch_add(_metadata, s, add, T, T, T);		/* held back: 2 CBs */
	upload(_metadata, s, X, first);			/* held back: main queue */
	/* The worker hands all of it to the driver: NOP, 2 CBs, the upload. */
	for (tries = 0; tries < 1000; tries++) {
		ASSERT_EQ(0, flex_device_queue_status(flex_context_device(ctx),
						      flex_stream_queue_id(s), &st));
		if (st.submitted >= m0 + 4)
			break;
		usleep(10000);
	}
	ASSERT_EQ(m0 + 4, st.submitted) TH_LOG("the worker did not drain the stream");
	d0 = dq_submitted(_metadata, ctx, s);
	upload(_metadata, s, X, second);
	EXPECT_EQ(d0 + 2, dq_submitted(_metadata, ctx, s)) TH_LOG("no WAIT for the held-back upload");
	ASSERT_EQ(0, engines_pause(0));
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, X, 0, out, TBYTES));
	sync_ok(_metadata, s, "two uploads into X");
	expect_tile(_metadata, out, second, "X: the held-back first upload landed last");
	flex_job_destroy(add);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

/*
 * A download the driver refuses (its host buffer cannot be pinned) leaves
 * the stream usable, and the upload after it into the same memory is not
 * made to wait for the seqno the refused CB would have had (the driver
 * refuses a WAIT for a CB not yet submitted).
 */
TEST(an_upload_after_a_refused_download_is_not_refused)
{
	struct flex_context *ctx = open_ctx_regions(_metadata, 64 * MiB, 4);
	static int32_t data[N * N], out[N * N];
	flex_alloc_index_t C;
	struct flex_stream *s;
	void *none;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	C = alloc_bytes(_metadata, ctx, TBYTES);
	upload(_metadata, s, C, data);
	sync_ok(_metadata, s, "first upload");
	none = mmap(NULL, TBYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	EXPECT_EQ(-EFAULT, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, C, 0, none, TBYTES))
		TH_LOG("%s", flex_last_error());
	fill_tile(data, 77);
	upload(_metadata, s, C, data);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, C, 0, out, TBYTES));
	sync_ok(_metadata, s, "after the refused download");
	expect_tile(_metadata, out, data, "C");
	munmap(none, TBYTES);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

/*
 * An upload faults (its region is released under it while queued): the
 * stream reports the upload's own fault, not the WAIT that joins it, and
 * a reset makes both of its queues usable again.
 */
TEST(a_faulting_upload_reports_itself_and_reset_recovers)
{
	struct flex_context *ctx = open_ctx_regions(_metadata, 2 * MiB, 4);
	static int32_t data[N * N], out[N * N];
	struct flex_stream_error e;
	flex_alloc_index_t X, Y;
	struct flex_vaddr xva, yva;
	struct flex_stream *s;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	/* Each fills most of a 2 MiB region: two regions. */
	X = alloc_bytes(_metadata, ctx, 3 * MiB / 2);
	Y = alloc_bytes(_metadata, ctx, 3 * MiB / 2);
	ASSERT_EQ(0, flex_alloc_block_resolve(flex_context_allocator(ctx), X, &xva, NULL));
	ASSERT_EQ(0, flex_alloc_block_resolve(flex_context_allocator(ctx), Y, &yva, NULL));
	ASSERT_NE(xva.region_id, yva.region_id);
	fill_tile(data, 3);
	upload(_metadata, s, Y, data);
	sync_ok(_metadata, s, "first upload");

	ASSERT_EQ(0, engines_pause(1));
	upload(_metadata, s, X, data);
	ASSERT_EQ(0, flex_device_region_release(flex_context_device(ctx), xva.region_id));
	ASSERT_EQ(0, engines_pause(0));
	EXPECT_EQ(-ENXIO, flex_stream_synchronize(s, &e)) TH_LOG("%s", e.message);
	EXPECT_EQ(FLEX_FAULT_UNMAPPED, e.fault_code) TH_LOG("%s", e.message);
	EXPECT_EQ(FLEX_STEP_DMA_TO_DEVICE, e.step_kind) TH_LOG("%s", e.message);
	EXPECT_STREQ("copy_to_device", e.job);
	EXPECT_EQ(xva.region_id, e.addr.region_id);
	memset(&e, 0, sizeof(e));
	EXPECT_EQ(-ENXIO, flex_stream_query(s, &e));
	EXPECT_EQ(FLEX_FAULT_UNMAPPED, e.fault_code) TH_LOG("%s", e.message);
	EXPECT_EQ(-EIO, flex_stream_copy(s, FLEX_COPY_TO_DEVICE, Y, 0, data, TBYTES));

	ASSERT_EQ(0, flex_stream_reset(s)) TH_LOG("%s", flex_last_error());
	EXPECT_EQ(0, flex_stream_query(s, NULL));
	fill_tile(data, 99);
	upload(_metadata, s, Y, data);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, Y, 0, out, TBYTES));
	sync_ok(_metadata, s, "after the reset");
	expect_tile(_metadata, out, data, "Y after the reset");
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

/* ---- FIFO results under a random mix ---- */

#define BUFS	4
#define OPS	400

enum op { OP_UPLOAD, OP_ADD, OP_COPY, OP_FILL, OP_DOWNLOAD, OP_PAUSE, OP_SYNC, OP_KINDS };

static uint32_t xorshift(uint32_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

/*
 * OPS random operations on BUFS device tiles, applied to a host model in
 * order: every download (into its own host buffer) and the final tiles
 * must match the model. Uploads overlap the rest; the engines are paused
 * and resumed at random so that the DMA engine runs ahead of the compute
 * engine by different amounts.
 */
static void random_mix(struct __test_metadata *_metadata, uint32_t seed)
{
	struct flex_context *ctx = open_ctx_regions(_metadata, 64 * MiB, 4);
	static const int32_t zero[N * N];
	int32_t (*model)[N * N] = calloc(BUFS, TBYTES);
	int32_t (*ups)[N * N] = calloc(OPS, TBYTES);
	int32_t (*downs)[N * N] = calloc(OPS, TBYTES);
	int32_t (*want)[N * N] = calloc(OPS, TBYTES);
	uint32_t down_op[OPS + BUFS], down_buf[OPS + BUFS];
	flex_alloc_index_t buf[BUFS];
	uint32_t x = seed, i, k, a, b, d = 0, u = 0, paused = 0;
	struct flex_stream *s;
	struct flex_job *add;
	int32_t v;
	int j;

	ASSERT_NE(NULL, ctx);
	ASSERT_TRUE(model && ups && downs && want);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	add = add_job(_metadata, ctx, N, N);
	ASSERT_NE(NULL, add);
	for (k = 0; k < BUFS; k++) {
		buf[k] = alloc_bytes(_metadata, ctx, TBYTES);
		/* Not from model[k]: a DMA reads its host memory when it runs. */
		upload(_metadata, s, buf[k], zero);
	}
	for (i = 0; i < OPS; i++) {
		k = xorshift(&x) % BUFS;
		a = xorshift(&x) % BUFS;
		b = xorshift(&x) % BUFS;
		switch (xorshift(&x) % OP_KINDS) {
		case OP_UPLOAD:
			for (j = 0; j < N * N; j++)
				ups[u][j] = (int32_t)xorshift(&x) >> 8;
			upload(_metadata, s, buf[k], ups[u]);
			memcpy(model[k], ups[u++], TBYTES);
			break;
		case OP_ADD:
			launch_add(_metadata, s, add, buf[k], buf[a], buf[b]);
			for (j = 0; j < N * N; j++)
				model[k][j] = (int32_t)((uint32_t)model[a][j] + (uint32_t)model[b][j]);
			break;
		case OP_COPY:
			if (k == a)
				break;
			ASSERT_EQ(0, flex_stream_copy_device(s, buf[k], 0, buf[a], 0, TBYTES))
				TH_LOG("%s", flex_last_error());
			memcpy(model[k], model[a], TBYTES);
			break;
		case OP_FILL:
			v = (int32_t)xorshift(&x);
			ASSERT_EQ(0, flex_stream_fill(s, buf[k], 0, TBYTES, &v, sizeof(v)))
				TH_LOG("%s", flex_last_error());
			for (j = 0; j < N * N; j++)
				model[k][j] = v;
			break;
		case OP_DOWNLOAD:
			ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, buf[k], 0, downs[d],
						      TBYTES));
			down_op[d] = i;
			down_buf[d] = k;
			memcpy(want[d++], model[k], TBYTES);
			break;
		case OP_PAUSE:
			paused = !paused;
			ASSERT_EQ(0, engines_pause(paused));
			break;
		case OP_SYNC:
			if (!paused && !(xorshift(&x) % 4))
				sync_ok(_metadata, s, "in the mix");
			break;
		}
	}
	for (k = 0; k < BUFS; k++) {
		ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, buf[k], 0, downs[d],
					      TBYTES));
		down_op[d] = OPS;
		down_buf[d] = k;
		memcpy(want[d++], model[k], TBYTES);
	}
	ASSERT_EQ(0, engines_pause(0));
	sync_ok(_metadata, s, "the mix");
	for (i = 0; i < d; i++) {
		for (j = 0; j < N * N && downs[i][j] == want[i][j]; j++)
			;
		EXPECT_EQ(N * N, j) TH_LOG("seed %u, download %u of %u (after op %u, buffer %u), "
					   "element %d: expected %d, got %d", seed, i, d,
					   down_op[i], down_buf[i], j,
					   j < N * N ? want[i][j] : 0, j < N * N ? downs[i][j] : 0);
	}
	EXPECT_LT(0, dq_submitted(_metadata, ctx, s)) TH_LOG("seed %u: no upload overlapped", seed);
	TH_LOG("seed %u: %u uploads, %u downloads, %llu CBs on the DMA queue", seed, u, d,
	       (unsigned long long)dq_submitted(_metadata, ctx, s));
	flex_job_destroy(add);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
	free(model);
	free(ups);
	free(downs);
	free(want);
}

TEST(fifo_results_hold_under_a_random_mix_with_overlapped_uploads)
{
	uint32_t seed;

	for (seed = 1; seed <= 6; seed++)
		random_mix(_metadata, seed * 2654435761u);
}

/* FLEX_STREAM_OVERLAP=0: everything stays on the one queue. */
TEST(overlap_off_keeps_uploads_on_the_stream_queue)
{
	struct flex_context *ctx = open_ctx_regions(_metadata, 64 * MiB, 4);
	static int32_t data[N * N], out[N * N];
	flex_alloc_index_t C;
	struct flex_stream *s;
	uint32_t dq;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, setenv("FLEX_STREAM_OVERLAP", "0", 1));
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	unsetenv("FLEX_STREAM_OVERLAP");
	C = alloc_bytes(_metadata, ctx, TBYTES);
	fill_tile(data, 11);
	upload(_metadata, s, C, data);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, C, 0, out, TBYTES));
	sync_ok(_metadata, s, "without overlap");
	expect_tile(_metadata, out, data, "C");
	EXPECT_EQ(-ENOENT, flex_stream_dma_queue_id(s, &dq));
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

TEST_HARNESS_MAIN
