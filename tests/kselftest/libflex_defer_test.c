// SPDX-License-Identifier: GPL-2.0
/*
 * Stream-ordered memory against the driver: a block freed after a
 * FlexStream's work (flex_alloc_block_free_after() with flex_stream_alloc_queue())
 * is not handed out again while that work is still queued; a use recorded
 * on another stream (recordStream) holds a plain free back until that
 * stream's work ran; destroying a stream frees what waited for it; and an
 * allocation that finds no room waits for the oldest deferred frees.
 *
 * The engines are paused through debugfs while a test needs work to stay
 * queued, as in libflex_stream_test.c.
 */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include <flex/context.h>
#include <flex/stream.h>

#include "kselftest_harness.h"
#include "flex_test.h"

#define BLOCK	(64 * 1024)

/* A context on the PF whose one region holds four blocks. */
static struct flex_context *open_ctx(struct __test_metadata *_metadata)
{
	struct flex_alloc_config cfg;
	struct flex_context *ctx = NULL;
	struct flex_device *dev;

	flex_alloc_config_init(&cfg);
	cfg.num_fallback_sizes = 1;
	cfg.fallback_sizes[0] = 2 * MiB;
	cfg.max_regions = 1;
	EXPECT_EQ(0, flex_device_new(FLEX_PF, &dev));
	EXPECT_EQ(0, flex_context_new(dev, &cfg, &ctx)) TH_LOG("%s", flex_last_error());
	flex_device_unref(dev);
	return ctx;
}

static flex_alloc_index_t alloc_block(struct __test_metadata *_metadata, struct flex_alloc *a,
				      uint64_t size)
{
	flex_alloc_index_t idx = 0;

	EXPECT_EQ(0, flex_alloc_block_alloc(a, size, FLEX_ALLOC_TENSOR, &idx))
		TH_LOG("%s", flex_last_error());
	return idx;
}

static uint64_t offset_of(struct flex_alloc *a, flex_alloc_index_t idx)
{
	struct flex_vaddr va = { 0 };

	flex_alloc_block_resolve(a, idx, &va, NULL);
	return va.offset;
}

static struct flex_alloc_stats stats(struct flex_alloc *a)
{
	struct flex_alloc_stats st;

	flex_alloc_get_stats(a, &st);
	return st;
}

static uint8_t host[BLOCK];

TEST(a_block_freed_after_a_stream_waits_for_its_work)
{
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_alloc *a;
	struct flex_stream *s;
	flex_alloc_index_t x, y, z;
	uint64_t xoff, freed = 1;

	ASSERT_NE(NULL, ctx);
	a = flex_context_allocator(ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	x = alloc_block(_metadata, a, BLOCK);
	xoff = offset_of(a, x);

	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_copy(s, 1, x, 0, host, BLOCK));
	ASSERT_EQ(0, flex_alloc_block_free_after(a, x, flex_stream_alloc_queue(s)));
	EXPECT_EQ(-ENOENT, flex_alloc_block_resolve(a, x, &(struct flex_vaddr){ 0 }, NULL));
	EXPECT_EQ(1, stats(a).num_pending_frees);
	/* The copy is still queued: its block must not come back. */
	y = alloc_block(_metadata, a, BLOCK);
	EXPECT_NE(xoff, offset_of(a, y));
	ASSERT_EQ(0, flex_alloc_reclaim(a, 0, &freed));
	EXPECT_EQ(0, freed);

	ASSERT_EQ(0, engines_pause(0));
	ASSERT_EQ(0, flex_stream_synchronize(s, NULL));
	ASSERT_EQ(0, flex_alloc_reclaim(a, 0, &freed));
	EXPECT_EQ(BLOCK, freed);
	EXPECT_EQ(0, stats(a).num_pending_frees);
	z = alloc_block(_metadata, a, BLOCK);
	EXPECT_EQ(xoff, offset_of(a, z));

	/* Nothing queued: freed at once. */
	EXPECT_EQ(0, flex_alloc_block_free_after(a, z, flex_stream_alloc_queue(s)));
	EXPECT_EQ(0, stats(a).num_pending_frees);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

TEST(a_use_on_another_stream_holds_a_plain_free)
{
	struct flex_context *ctx = open_ctx(_metadata);
	struct flex_alloc *a;
	struct flex_stream *t;
	flex_alloc_index_t x;
	uint64_t freed = 0;

	ASSERT_NE(NULL, ctx);
	a = flex_context_allocator(ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &t));
	x = alloc_block(_metadata, a, BLOCK);
	ASSERT_EQ(0, flex_alloc_block_record_use(a, x, flex_stream_alloc_queue(t)));
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_copy(t, 0, x, 0, host, BLOCK));
	ASSERT_EQ(0, flex_alloc_block_free(a, x));
	EXPECT_EQ(1, stats(a).num_pending_frees);
	ASSERT_EQ(0, engines_pause(0));
	/* Destroying the stream (after its work) frees what waited for it. */
	flex_stream_destroy(t);
	EXPECT_EQ(0, stats(a).num_pending_frees);
	ASSERT_EQ(0, flex_alloc_reclaim(a, 0, &freed));
	EXPECT_EQ(0, stats(a).allocated_bytes);
	flex_context_destroy(ctx);
}

static void *unpause_later(void *arg)
{
	usleep(200 * 1000);
	engines_pause(0);
	return NULL;
}

TEST(no_room_waits_for_the_oldest_deferred_frees)
{
	struct flex_context *ctx = open_ctx(_metadata);
	flex_alloc_index_t x[2 * MiB / BLOCK], y;
	struct flex_stream_stats sst;
	struct flex_alloc *a;
	struct flex_stream *s;
	pthread_t th;
	unsigned int i, n = 2 * MiB / BLOCK;

	ASSERT_NE(NULL, ctx);
	a = flex_context_allocator(ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	/* The stream's correction slot is not needed: DMA only. Fill the region. */
	for (i = 0; i < n; i++)
		if (flex_alloc_block_alloc(a, BLOCK, FLEX_ALLOC_TENSOR, &x[i]))
			break;
	n = i;
	ASSERT_LT(2, n);
	ASSERT_EQ(0, engines_pause(1));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, flex_stream_copy(s, 1, x[i], 0, host, BLOCK));
		ASSERT_EQ(0, flex_alloc_block_free_after(a, x[i], flex_stream_alloc_queue(s)));
	}
	EXPECT_EQ(n, stats(a).num_pending_frees);
	/* The engines resume in 200 ms; the allocation waits for the oldest copy. */
	ASSERT_EQ(0, pthread_create(&th, NULL, unpause_later, NULL));
	EXPECT_EQ(0, flex_alloc_block_alloc(a, BLOCK, FLEX_ALLOC_TENSOR, &y))
		TH_LOG("%s", flex_last_error());
	pthread_join(th, NULL);
	EXPECT_LE(1, stats(a).num_pressure_retries);
	EXPECT_EQ(0, stats(a).num_ooms);
	ASSERT_EQ(0, flex_stream_synchronize(s, NULL));
	flex_stream_get_stats(s, &sst);
	EXPECT_EQ(n, sst.jobs);
	ASSERT_EQ(0, flex_alloc_reclaim(a, FLEX_ALLOC_RECLAIM_WAIT, NULL));
	EXPECT_EQ(0, stats(a).num_pending_frees);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

TEST_HARNESS_MAIN
