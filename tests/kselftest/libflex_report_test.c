// SPDX-License-Identifier: GPL-2.0
/*
 * The context's report against the real driver: the allocator's memory
 * report with the streams' statistics (flex_context_report(), FLEX_REPORT).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include <flex/context.h>
#include <flex/job.h>
#include <flex/program.h>
#include <flex/stream.h>

#include "kselftest_harness.h"
#include "flex_test.h"

enum { M = 64, N = 32, K = 32, TILE = 16 };

/* A tiled matmul on @s: (M/TILE) * (N/TILE) * (K/TILE) tiles. */
static int run_matmul(struct flex_context *ctx, struct flex_stream *s)
{
	static int32_t a[M * K], b[K * N], c[M * N];
	struct flex_alloc *al = flex_context_allocator(ctx);
	flex_alloc_index_t prog, da, db, dc;
	struct flex_kernel *kern;
	struct flex_job *job;
	int err;

	struct flex_step plan[] = {
		flex_step_host_op(NULL, NULL),
		flex_step_simple(FLEX_STEP_DMA_CORRECTION),
		flex_step_simple(FLEX_STEP_COMPUTE),
	};
	err = flex_kernel_new_matmul(FLEX_DTYPE_INT32, TILE, TILE, TILE, &kern);
	if (err)
		return err;
	err = flex_context_load_program(ctx, kern->binary, kern->binary_size, &prog);
	if (!err)
		err = flex_job_new_kernel("mm", prog, &kern->sig, kern->corr, kern->n_corr, plan, 3,
					  &job);
	if (err)
		return err;
	if ((err = flex_alloc_block_alloc(al, sizeof(a), FLEX_ALLOC_TENSOR, &da)) ||
	    (err = flex_alloc_block_alloc(al, sizeof(b), FLEX_ALLOC_TENSOR, &db)) ||
	    (err = flex_alloc_block_alloc(al, sizeof(c), FLEX_ALLOC_TENSOR, &dc)))
		return err;
	struct flex_tensor args[3] = {
		{ .index = da, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
		  .shape = { M, K }, .strides = { K, 1 } },
		{ .index = db, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
		  .shape = { K, N }, .strides = { N, 1 } },
		{ .index = dc, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
		  .shape = { M, N }, .strides = { N, 1 } },
	};
	if ((err = flex_stream_copy(s, 1, da, 0, a, sizeof(a))) ||
	    (err = flex_stream_copy(s, 1, db, 0, b, sizeof(b))) ||
	    (err = flex_stream_launch(s, job, args, 3, 0)) ||
	    (err = flex_stream_copy(s, 0, dc, 0, c, sizeof(c))) ||
	    (err = flex_stream_synchronize(s, NULL)))
		return err;
	flex_job_destroy(job);
	flex_kernel_destroy(kern);
	return 0;
}

/* The report in @format, as a malloc()ed string. */
static char *report(struct flex_context *ctx, enum flex_alloc_report_format format, int *err)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*err = flex_context_report(ctx, f, format);
	fclose(f);
	return buf;
}

static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static uint64_t u64(struct json_object *o, const char *key)
{
	return json_object_get_uint64(member(o, key));
}

FIXTURE(ctx) {
	struct flex_context *ctx;
	struct flex_stream *s2;
	struct flex_stream_stats st2;
};

FIXTURE_SETUP(ctx)
{
	ASSERT_EQ(0, flex_context_new_from_path(FLEX_PF, &self->ctx));
	ASSERT_EQ(0, flex_stream_new(self->ctx, FLEX_STREAM_PRIO_HIGH, &self->s2));
	ASSERT_EQ(0, run_matmul(self->ctx, self->s2)) TH_LOG("%s", flex_last_error());
	flex_stream_get_stats(self->s2, &self->st2);
	ASSERT_EQ((M / TILE) * (N / TILE) * (K / TILE), self->st2.tiles);
}

FIXTURE_TEARDOWN(ctx)
{
	flex_stream_destroy(self->s2);
	flex_context_destroy(self->ctx);
}

TEST_F(ctx, json_report_is_the_allocators_with_every_stream)
{
	struct json_object *r, *streams, *e, *hi = NULL, *def = NULL;
	int err, i;
	char *s = report(self->ctx, FLEX_ALLOC_REPORT_JSON, &err);

	ASSERT_EQ(0, err);
	r = json_tokener_parse(s);
	ASSERT_NE(NULL, r) TH_LOG("not JSON: %.200s", s);
	/* The allocator's report is intact... */
	ASSERT_NE(NULL, member(r, "summary"));
	ASSERT_NE(NULL, member(r, "regions"));
	EXPECT_LT(0, u64(member(r, "summary"), "num_live_blocks"));
	/* ...and every live stream is in it, in creation order. */
	streams = member(r, "streams");
	ASSERT_NE(NULL, streams);
	ASSERT_EQ(2, json_object_array_length(streams));
	for (i = 0; i < 2; i++) {
		e = json_object_array_get_idx(streams, i);
		if (json_object_get_boolean(member(e, "default")))
			def = e;
		else
			hi = e;
	}
	ASSERT_NE(NULL, def);
	ASSERT_NE(NULL, hi);
	EXPECT_EQ(def, json_object_array_get_idx(streams, 0));
	EXPECT_STREQ("normal", json_object_get_string(member(def, "priority")));
	EXPECT_STREQ("high", json_object_get_string(member(hi, "priority")));
	EXPECT_EQ(flex_stream_queue_id(self->s2), u64(hi, "queue_id"));
	EXPECT_EQ(self->st2.tiles, u64(hi, "tiles"));
	EXPECT_EQ(self->st2.cbs, u64(hi, "cbs"));
	EXPECT_EQ(self->st2.jobs, u64(hi, "jobs"));
	EXPECT_EQ(self->st2.bytes_dma, u64(hi, "bytes_dma"));
	EXPECT_EQ(0, u64(def, "tiles"));	/* only the program load ran there */
	EXPECT_EQ(0, u64(member(r, "streams_destroyed"), "count"));
	json_object_put(r);
	free(s);
}

TEST_F(ctx, destroyed_streams_are_added_up)
{
	struct json_object *r, *gone;
	int err;
	char *s;

	flex_stream_destroy(self->s2);
	self->s2 = NULL;
	s = report(self->ctx, FLEX_ALLOC_REPORT_JSON, &err);
	ASSERT_EQ(0, err);
	r = json_tokener_parse(s);
	ASSERT_NE(NULL, r);
	EXPECT_EQ(1, json_object_array_length(member(r, "streams")));
	gone = member(r, "streams_destroyed");
	EXPECT_EQ(1, u64(gone, "count"));
	EXPECT_EQ(self->st2.tiles, u64(gone, "tiles"));
	EXPECT_EQ(self->st2.cbs, u64(gone, "cbs"));
	json_object_put(r);
	free(s);
}

TEST_F(ctx, summary_and_csv_carry_the_stream_lines)
{
	char want[96], *s;
	int err;

	s = report(self->ctx, FLEX_ALLOC_REPORT_SUMMARY, &err);
	ASSERT_EQ(0, err);
	EXPECT_NE(NULL, strstr(s, "flex_alloc:")) TH_LOG("no allocator summary in: %.300s", s);
	EXPECT_NE(NULL, strstr(s, "flex streams: 2 live, 0 destroyed")) TH_LOG("got: %s", s);
	snprintf(want, sizeof(want), "stream queue %u (high): jobs %llu, tiles %llu,",
		 flex_stream_queue_id(self->s2), (unsigned long long)self->st2.jobs,
		 (unsigned long long)self->st2.tiles);
	EXPECT_NE(NULL, strstr(s, want)) TH_LOG("expected \"%s\" in: %s", want, s);
	free(s);

	s = report(self->ctx, FLEX_ALLOC_REPORT_CSV, &err);
	ASSERT_EQ(0, err);
	EXPECT_NE(NULL, strstr(s, "region,region_id,offset,size,state,kind,index,requested\n"));
	EXPECT_NE(NULL, strstr(s, "\n# flex streams: 2 live")) TH_LOG("got: %s", s);
	EXPECT_NE(NULL, strstr(s, "\n#   stream queue")) TH_LOG("got: %s", s);
	free(s);
}

TEST_F(ctx, bad_arguments)
{
	EXPECT_EQ(-EINVAL, flex_context_report(self->ctx, NULL, FLEX_ALLOC_REPORT_JSON));
	EXPECT_EQ(-EINVAL, flex_context_report(self->ctx, stdout, 7));
	EXPECT_EQ(-EINVAL, flex_context_report(NULL, stdout, FLEX_ALLOC_REPORT_JSON));
}

TEST(flex_report_env_writes_the_report_at_destroy)
{
	const char *path = "/tmp/libflex_report_test.json";
	struct flex_context *ctx;
	struct flex_stream *s;
	struct json_object *r, *streams;

	unlink(path);
	setenv("FLEX_REPORT", path, 1);
	ASSERT_EQ(0, flex_context_new_from_path(FLEX_PF, &ctx));
	unsetenv("FLEX_REPORT");
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_LOW, &s));
	ASSERT_EQ(0, run_matmul(ctx, flex_context_default_stream(ctx)))
		TH_LOG("%s", flex_last_error());
	flex_stream_destroy(s);
	flex_context_destroy(ctx);

	r = json_object_from_file(path);
	ASSERT_NE(NULL, r) TH_LOG("%s: no JSON report written at destroy", path);
	streams = member(r, "streams");
	ASSERT_EQ(1, json_object_array_length(streams));	/* the default stream */
	EXPECT_EQ((M / TILE) * (N / TILE) * (K / TILE),
		  u64(json_object_array_get_idx(streams, 0), "tiles"));
	EXPECT_EQ(1, u64(member(r, "streams_destroyed"), "count"));
	EXPECT_NE(NULL, member(r, "regions"));
	json_object_put(r);
	unlink(path);
}

TEST_HARNESS_MAIN
