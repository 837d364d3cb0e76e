// SPDX-License-Identifier: GPL-2.0
/*
 * FlexStream's copies against the driver: host <-> device copies of any
 * size (split beyond one DMA CB, 0 bytes a no-op), staged copies from and
 * to pageable memory, device copies and fills.
 */
#include <stdint.h>

#include <flex/context.h>
#include <flex/job.h>
#include <flex/stream.h>

#include "kselftest_harness.h"
#include "flex_test.h"
#include "libflex_test.h"

static struct flex_context *open_ctx(struct __test_metadata *_metadata, uint64_t region)
{
	return open_ctx_regions(_metadata, region, 12);
}

/* The first byte of @p[0 .. n) that is not @v, or n. */
static size_t first_not(const unsigned char *p, size_t n, unsigned char v)
{
	size_t i;

	for (i = 0; i < n && p[i] == v; i++)
		;
	return i;
}

/* ---- DMA size ---- */

/*
 * A copy of 256 MiB + 12 KiB + 3 from the device: past one DMA CB's limit,
 * so split. Only its first 4 KiB and its last 12 KiB + 3 were written (the
 * backing cap of the VM lane allows no more); the rest reads as zeros. A
 * 0-byte copy is a no-op in either direction, with or without a buffer.
 */
TEST(copies_beyond_one_dma_cb_are_split_and_0_bytes_is_a_no_op)
{
	const uint64_t size = FLEX_DMA_MAX_SIZE + 12 * 1024 + 3, tail = size - FLEX_DMA_MAX_SIZE;
	struct flex_context *ctx = open_ctx(_metadata, 512 * MiB);
	struct flex_stream_stats before, after;
	static unsigned char head[4096], tl[12 * 1024 + 3];
	struct flex_stream *s;
	flex_alloc_index_t X;
	unsigned char *h;
	size_t at;

	ASSERT_NE(NULL, ctx);
	s = flex_context_default_stream(ctx);
	X = alloc_bytes(_metadata, ctx, size);
	h = malloc(size);
	ASSERT_NE(NULL, h);
	memset(h, 0xee, size);
	memset(head, 0x11, sizeof(head));
	memset(tl, 0x22, sizeof(tl));
	ASSERT_EQ(0, flex_stream_copy(s, 1, X, 0, head, sizeof(head)));
	ASSERT_EQ(0, flex_stream_copy(s, 1, X, FLEX_DMA_MAX_SIZE, tl, tail));
	sync_ok(_metadata, s, "head and tail");

	flex_stream_get_stats(s, &before);
	EXPECT_EQ(0, flex_stream_copy(s, 0, X, 0, h, size)) TH_LOG("%s", flex_last_error());
	sync_ok(_metadata, s, "the split copy");
	flex_stream_get_stats(s, &after);
	EXPECT_EQ(3, after.cbs - before.cbs) TH_LOG("128 MiB + 128 MiB + the rest");
	EXPECT_EQ(size, after.bytes_dma - before.bytes_dma);
	at = first_not(h, sizeof(head), 0x11);
	EXPECT_EQ(sizeof(head), at) TH_LOG("byte %zu: %#x, expected 0x11", at, h[at]);
	at = first_not(h + sizeof(head), FLEX_DMA_MAX_SIZE - sizeof(head), 0);
	EXPECT_EQ(FLEX_DMA_MAX_SIZE - sizeof(head), at)
		TH_LOG("byte %zu: %#x, expected 0 (never written)", at + sizeof(head),
		       h[at + sizeof(head)]);
	at = first_not(h + FLEX_DMA_MAX_SIZE, tail, 0x22);
	EXPECT_EQ(tail, at) TH_LOG("byte %llu: %#x, expected 0x22 (past the first CB's 256 MiB)",
				   (unsigned long long)(FLEX_DMA_MAX_SIZE + at),
				   h[FLEX_DMA_MAX_SIZE + at]);

	/* 0 bytes: nothing queued, in either direction, buffer or not. */
	flex_stream_get_stats(s, &before);
	EXPECT_EQ(0, flex_stream_copy(s, 1, X, 0, head, 0)) TH_LOG("%s", flex_last_error());
	EXPECT_EQ(0, flex_stream_copy(s, 0, X, 0, NULL, 0)) TH_LOG("%s", flex_last_error());
	flex_stream_get_stats(s, &after);
	EXPECT_EQ(before.cbs, after.cbs);
	EXPECT_EQ(before.jobs, after.jobs);
	free(h);
	flex_context_destroy(ctx);
}

/* A job's 0-byte DMA step is skipped; the steps around it run. */
TEST(a_jobs_0_byte_dma_step_is_skipped)
{
	struct flex_context *ctx = open_ctx(_metadata, 64 * MiB);
	static const int32_t v[16] = { [0 ... 15] = 5 };
	struct flex_stream *s;
	struct flex_step steps[3];
	struct flex_job *job = NULL;
	flex_alloc_index_t X;
	int32_t out[16];
	int i;

	ASSERT_NE(NULL, ctx);
	s = flex_context_default_stream(ctx);
	X = alloc_bytes(_metadata, ctx, sizeof(v));
	steps[0] = flex_step_dma_to_device(X, 0, v, sizeof(v));
	steps[1] = flex_step_dma_to_device(X, 0, NULL, 0);
	steps[2] = flex_step_dma_from_device(X, 0, out, sizeof(out));
	ASSERT_EQ(0, flex_job_new("with_an_empty_step", steps, 3, &job))
		TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_launch(s, job, NULL, 0, 0)) TH_LOG("%s", flex_last_error());
	sync_ok(_metadata, s, "job");
	for (i = 0; i < 16 && out[i] == 5; i++)
		;
	EXPECT_EQ(16, i);
	flex_job_destroy(job);
	flex_context_destroy(ctx);
}

/* ---- staged copies ---- */

static void fill_bytes(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)((i * 2654435761u + seed) >> 13);
}

/*
 * FLEX_COPY_STAGED to the device returns with the caller's memory free to
 * change: with the engines paused (nothing has run), the source is
 * scribbled over and freed, and the device still gets the original bytes.
 * From the device it returns with the bytes in place, no synchronize
 * needed. A copy larger than the staging pool (4 MiB) goes through it
 * piece after piece, both ways.
 */
TEST(staged_copies_leave_pageable_memory_to_the_caller)
{
	const size_t small = 3 * MiB + 5, big = 9 * MiB + 1;
	struct flex_context *ctx = open_ctx(_metadata, 64 * MiB);
	unsigned char *src, *want, *out;
	struct flex_stream *s;
	flex_alloc_index_t X, Y;
	size_t at;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	X = alloc_bytes(_metadata, ctx, small);
	Y = alloc_bytes(_metadata, ctx, big);
	want = malloc(big);
	out = malloc(big);
	src = malloc(small);
	ASSERT_TRUE(want && out && src);
	fill_bytes(want, big, 1);
	memcpy(src, want, small);

	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_TO_DEVICE | FLEX_COPY_STAGED, X, 0, src,
				      small)) TH_LOG("%s", flex_last_error());
	memset(src, 0xab, small);	/* the caller's memory, its own again */
	free(src);
	EXPECT_EQ(-EBUSY, flex_stream_query(s, NULL)) TH_LOG("the copy must not have run yet");
	ASSERT_EQ(0, engines_pause(0));
	memset(out, 0, big);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE | FLEX_COPY_STAGED, X, 0, out,
				      small)) TH_LOG("%s", flex_last_error());
	for (at = 0; at < small && out[at] == want[at]; at++)
		;
	EXPECT_EQ(small, at) TH_LOG("byte %zu: %#x, expected %#x (0xab: the DMA read the "
				    "caller's memory after the call returned)", at, out[at],
				    want[at]);

	/* More than the pool, both ways, then the direct path agrees. */
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_TO_DEVICE | FLEX_COPY_STAGED, Y, 0, want, big))
		TH_LOG("%s", flex_last_error());
	memset(out, 0, big);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_STAGED, Y, 0, out, big))
		TH_LOG("%s", flex_last_error());
	at = 0;
	while (at < big && out[at] == want[at])
		at++;
	EXPECT_EQ(big, at) TH_LOG("9 MiB + 1 staged: byte %zu: %#x, expected %#x", at, out[at],
				  want[at]);
	memset(out, 0, big);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, Y, 0, out, big));
	sync_ok(_metadata, s, "direct copy back");
	EXPECT_EQ(0, memcmp(out, want, big));

	/* Refusals: unknown flags, a range outside the allocation. */
	EXPECT_EQ(-EINVAL, flex_stream_copy(s, 1U << 5, X, 0, out, 16));
	EXPECT_EQ(-ERANGE, flex_stream_copy(s, FLEX_COPY_STAGED, X, small - 8, out, 16 + 128));
	EXPECT_NE(NULL, strstr(flex_last_error(), "leave the allocation"))
		TH_LOG("%s", flex_last_error());
	free(want);
	free(out);
	flex_stream_destroy(s);
	flex_context_destroy(ctx);
}

/* ---- device copies and fills ---- */

/* @want[off .. off + n) = the @psize-byte @pattern repeated, cut at n. */
static void ref_fill(unsigned char *want, size_t off, size_t n, const void *pattern,
		     size_t psize)
{
	size_t i;

	for (i = 0; i < n; i++)
		want[off + i] = ((const unsigned char *)pattern)[i % psize];
}

static void expect_bytes(struct __test_metadata *_metadata, const unsigned char *got,
			 const unsigned char *want, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n && got[i] == want[i]; i++)
		;
	EXPECT_EQ(n, i) TH_LOG("%s: byte %zu is %#x, expected %#x", what, i, got[i], want[i]);
}

/*
 * copy_, clone, zero_, fill_ and cudaMemsetAsync on the device: copies at
 * odd offsets between allocations and overlapping within one (as
 * memmove), fills of 1-, 2-, 4- and 8-byte patterns at odd offsets and
 * sizes, all queued behind each other without a synchronize.
 */
TEST(device_copies_and_fills_at_any_offset_and_size)
{
	enum { SZ = 1024 * 1024 + 3 };
	struct flex_context *ctx = open_ctx(_metadata, 64 * MiB);
	static unsigned char a[SZ], b[SZ], wa[SZ], wb[SZ];
	const uint8_t zero = 0;
	const uint16_t bf16 = 0x3fc0;			/* 1.5 */
	const float f = 3.5f;
	const double d = -1.25;				/* halves differ: doubled COPYs */
	const int64_t i64 = 0x0000000700000007LL;	/* halves equal: FILL */
	struct flex_stream_stats before, after;
	struct flex_stream *s;
	flex_alloc_index_t A, B;
	struct flex_vaddr va;
	uint64_t block;

	ASSERT_NE(NULL, ctx);
	s = flex_context_default_stream(ctx);
	A = alloc_bytes(_metadata, ctx, SZ);
	B = alloc_bytes(_metadata, ctx, SZ);
	fill_bytes(wa, SZ, 3);
	memset(wb, 0x77, SZ);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_TO_DEVICE, A, 0, wa, SZ));
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_TO_DEVICE, B, 0, wb, SZ));
	sync_ok(_metadata, s, "inputs");

	/* B[5 ..] = A[3 ..]; A[10 ..] = A[0 ..] (overlap, up); A[0 ..] = A[17 ..] (down). */
	ASSERT_EQ(0, flex_stream_copy_device(s, B, 5, A, 3, SZ - 9))
		TH_LOG("%s", flex_last_error());
	memcpy(wb + 5, wa + 3, SZ - 9);
	ASSERT_EQ(0, flex_stream_copy_device(s, A, 10, A, 0, 100001));
	memmove(wa + 10, wa, 100001);
	ASSERT_EQ(0, flex_stream_copy_device(s, A, 0, A, 17, 50003));
	memmove(wa, wa + 17, 50003);
	/* Fills over B, each pattern at an odd offset with a cut last copy. */
	ASSERT_EQ(0, flex_stream_fill(s, B, 1, 1000, &zero, 1)) TH_LOG("%s", flex_last_error());
	ref_fill(wb, 1, 1000, &zero, 1);
	ASSERT_EQ(0, flex_stream_fill(s, B, 1003, 999, &bf16, 2));
	ref_fill(wb, 1003, 999, &bf16, 2);
	ASSERT_EQ(0, flex_stream_fill(s, B, 3001, 4003, &f, 4));
	ref_fill(wb, 3001, 4003, &f, 4);
	ASSERT_EQ(0, flex_stream_fill(s, B, 9001, 8005, &d, 8));
	ref_fill(wb, 9001, 8005, &d, 8);
	ASSERT_EQ(0, flex_stream_fill(s, B, 20001, 333, &i64, 8));
	ref_fill(wb, 20001, 333, &i64, 8);
	ASSERT_EQ(0, flex_stream_fill(s, B, SZ - 5, 5, &d, 8));	/* shorter than the pattern */
	ref_fill(wb, SZ - 5, 5, &d, 8);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, A, 0, a, SZ));
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, B, 0, b, SZ));
	sync_ok(_metadata, s, "device copies and fills");
	expect_bytes(_metadata, a, wa, SZ, "A after two overlapping copies");
	expect_bytes(_metadata, b, wb, SZ, "B after a copy and six fills");

	/* 0 bytes: nothing; refusals name what is wrong. */
	flex_stream_get_stats(s, &before);
	EXPECT_EQ(0, flex_stream_copy_device(s, B, 0, A, 0, 0));
	EXPECT_EQ(0, flex_stream_fill(s, B, 0, 0, NULL, 4));
	flex_stream_get_stats(s, &after);
	EXPECT_EQ(before.cbs, after.cbs);
	EXPECT_EQ(-EINVAL, flex_stream_fill(s, B, 0, 16, &f, 3));
	ASSERT_EQ(0, flex_alloc_block_resolve(flex_context_allocator(ctx), B, &va, &block));
	EXPECT_EQ(-ERANGE, flex_stream_copy_device(s, B, block - 4, A, 0, 8));
	EXPECT_NE(NULL, strstr(flex_last_error(), "destination"))
		TH_LOG("%s", flex_last_error());
	EXPECT_EQ(-ERANGE, flex_stream_fill(s, B, block, 1, &zero, 1));
	EXPECT_EQ(0, flex_stream_fill(s, B, block - 1, 1, &zero, 1));	/* the last byte */
	sync_ok(_metadata, s, "the last byte");
	flex_context_destroy(ctx);
}

/*
 * Past one instruction (64 MiB): a fill of 65 MiB + 3 with a 4-byte
 * pattern (two FILLs and a tail), then with an 8-byte one (the first
 * 64 MiB doubled, the rest copied from it), then a device copy of it.
 */
TEST(device_fills_and_copies_past_one_instruction)
{
	const size_t n = 65 * MiB + 3;
	struct flex_context *ctx = open_ctx(_metadata, 256 * MiB);
	const uint32_t u = 0xc0ffee11;
	const uint64_t v = 0x8877665544332211ULL;
	unsigned char *got = malloc(n), *want = malloc(n);
	struct flex_stream *s;
	flex_alloc_index_t X, Y;

	ASSERT_NE(NULL, ctx);
	ASSERT_TRUE(got && want);
	s = flex_context_default_stream(ctx);
	X = alloc_bytes(_metadata, ctx, n);
	ASSERT_EQ(0, flex_stream_fill(s, X, 0, n, &u, 4)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, X, 0, got, n));
	sync_ok(_metadata, s, "4-byte fill");
	ref_fill(want, 0, n, &u, 4);
	expect_bytes(_metadata, got, want, n, "65 MiB + 3 of a 4-byte pattern");
	ASSERT_EQ(0, flex_stream_fill(s, X, 0, n, &v, 8));
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, X, 0, got, n));
	sync_ok(_metadata, s, "8-byte fill");
	ref_fill(want, 0, n, &v, 8);
	expect_bytes(_metadata, got, want, n, "65 MiB + 3 of an 8-byte pattern");
	flex_alloc_block_free(flex_context_allocator(ctx), X);
	X = alloc_bytes(_metadata, ctx, 1024);
	Y = alloc_bytes(_metadata, ctx, 1024);
	ASSERT_EQ(0, flex_stream_fill(s, X, 0, 1024, &u, 4));
	ASSERT_EQ(0, flex_stream_copy_device(s, Y, 0, X, 0, 1024));
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, Y, 0, got, 1024));
	sync_ok(_metadata, s, "copy of a fill");
	ref_fill(want, 0, 1024, &u, 4);
	expect_bytes(_metadata, got, want, 1024, "Y = X");
	free(got);
	free(want);
	flex_context_destroy(ctx);
}

/*
 * 2-D device copies (a strided view's contiguous()): 1000 rows of 37 bytes
 * at pitches 100 and 61, over four CBs of 255 rows; rows of one element
 * (a transpose's column); a contiguous pair as one copy; and the refusals:
 * a pitch below the width, overlapping ranges, a range past the allocation.
 */
TEST(device_2d_copies_place_every_row_at_its_pitch)
{
	enum { ROWS = 1000, W = 37, DP = 100, SP = 61, SZ = ROWS * DP };
	struct flex_context *ctx = open_ctx(_metadata, 64 * MiB);
	static unsigned char src[SZ], dst[SZ], want[SZ], got[SZ];
	struct flex_stream_stats before, after;
	struct flex_stream *s;
	flex_alloc_index_t A, B;
	int r;

	ASSERT_NE(NULL, ctx);
	s = flex_context_default_stream(ctx);
	A = alloc_bytes(_metadata, ctx, SZ);
	B = alloc_bytes(_metadata, ctx, SZ);
	fill_bytes(src, SZ, 5);
	memset(dst, 0x6b, SZ);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_TO_DEVICE, A, 0, src, SZ));
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_TO_DEVICE, B, 0, dst, SZ));
	memcpy(want, dst, SZ);

	flex_stream_get_stats(s, &before);
	ASSERT_EQ(0, flex_stream_copy_device_2d(s, B, 3, DP, A, 7, SP, W, ROWS))
		TH_LOG("%s", flex_last_error());
	flex_stream_get_stats(s, &after);
	EXPECT_EQ(2 * ((ROWS + 254) / 255), after.cbs - before.cbs);
	for (r = 0; r < ROWS; r++)
		memcpy(want + 3 + r * DP, src + 7 + r * SP, W);
	/* A column of 4-byte elements (row stride 40 bytes) into 300 packed ones. */
	ASSERT_EQ(0, flex_stream_copy_device_2d(s, B, 60000, 4, A, 1, 40, 4, 300));
	for (r = 0; r < 300; r++)
		memcpy(want + 60000 + 4 * r, src + 1 + 40 * r, 4);
	/* Equal pitch and width on both sides: one copy. */
	flex_stream_get_stats(s, &before);
	ASSERT_EQ(0, flex_stream_copy_device_2d(s, B, 70000, 16, A, 0, 16, 16, 100));
	flex_stream_get_stats(s, &after);
	EXPECT_EQ(2, after.cbs - before.cbs);
	memcpy(want + 70000, src, 1600);
	ASSERT_EQ(0, flex_stream_copy(s, FLEX_COPY_FROM_DEVICE, B, 0, got, SZ));
	sync_ok(_metadata, s, "2-D copies");
	expect_bytes(_metadata, got, want, SZ, "B after three 2-D copies");

	EXPECT_EQ(-EINVAL, flex_stream_copy_device_2d(s, B, 0, 8, A, 0, 16, 16, 2));
	EXPECT_NE(NULL, strstr(flex_last_error(), "below the width")) TH_LOG("%s", flex_last_error());
	EXPECT_EQ(-EINVAL, flex_stream_copy_device_2d(s, A, 8, 32, A, 0, 32, 16, 10));
	EXPECT_NE(NULL, strstr(flex_last_error(), "overlap")) TH_LOG("%s", flex_last_error());
	EXPECT_EQ(-ERANGE, flex_stream_copy_device_2d(s, B, 0, DP, A, 0, SP, W, ROWS * 2));
	EXPECT_EQ(0, flex_stream_copy_device_2d(s, B, 0, DP, A, 0, SP, 0, ROWS));
	EXPECT_EQ(0, flex_stream_copy_device_2d(s, B, 0, DP, A, 0, SP, W, 0));
	sync_ok(_metadata, s, "after the refusals");
	flex_context_destroy(ctx);
}

TEST_HARNESS_MAIN
