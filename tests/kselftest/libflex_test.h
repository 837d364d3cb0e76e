/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the libflex selftests (libflex_*_test.c): contexts,
 * allocations and synchronizing, each failing the test with libflex's
 * message. Include after kselftest_harness.h and flex_test.h.
 */
#ifndef LIBFLEX_TEST_H
#define LIBFLEX_TEST_H

#include <flex/context.h>
#include <flex/job.h>
#include <flex/program.h>
#include <flex/stream.h>

/* A context on the PF whose regions are @region bytes, at most @max_regions. */
static inline struct flex_context *open_ctx_regions(struct __test_metadata *_metadata,
						    uint64_t region, unsigned int max_regions)
{
	struct flex_alloc_config cfg;
	struct flex_context *ctx = NULL;
	struct flex_device *dev;

	flex_alloc_config_init(&cfg);
	cfg.num_fallback_sizes = 1;
	cfg.fallback_sizes[0] = region;
	cfg.max_regions = max_regions;
	EXPECT_EQ(0, flex_device_new(FLEX_PF, &dev));
	EXPECT_EQ(0, flex_context_new(dev, &cfg, &ctx)) TH_LOG("%s", flex_last_error());
	flex_device_unref(dev);
	return ctx;
}

static inline flex_alloc_index_t alloc_bytes(struct __test_metadata *_metadata,
					     struct flex_context *ctx, uint64_t size)
{
	flex_alloc_index_t idx = 0;

	EXPECT_EQ(0, flex_alloc_block_alloc(flex_context_allocator(ctx), size, FLEX_ALLOC_TENSOR, &idx))
		TH_LOG("%s", flex_last_error());
	return idx;
}

static inline int sync_ok(struct __test_metadata *_metadata, struct flex_stream *s,
			  const char *what)
{
	struct flex_stream_error e;
	int err = flex_stream_synchronize(s, &e);

	EXPECT_EQ(0, err) TH_LOG("%s: synchronize: %s", what, e.message);
	return err;
}

/* A row-major 2-D tensor of @rows x @cols with leading dimension @ld. */
static inline struct flex_tensor tensor2(flex_alloc_index_t idx, enum flex_dtype dt,
					 uint64_t rows, uint64_t cols, uint64_t ld)
{
	struct flex_tensor t = { .index = idx, .dtype = dt, .ndim = 2 };

	t.shape[0] = rows;
	t.shape[1] = cols;
	t.strides[0] = ld;
	t.strides[1] = 1;
	return t;
}

/* A kernel job for @k, its binary loaded (the job owns nothing else). */
static inline struct flex_job *kernel_job(struct __test_metadata *_metadata,
					  struct flex_context *ctx, struct flex_kernel *k,
					  const char *name)
{
	struct flex_step plan[3] = {
		flex_step_host_op(NULL, NULL),
		flex_step_simple(FLEX_STEP_DMA_CORRECTION),
		flex_step_simple(FLEX_STEP_COMPUTE),
	};
	flex_alloc_index_t bin = 0;
	struct flex_job *job = NULL;

	EXPECT_EQ(0, flex_context_load_program(ctx, k->binary, k->binary_size, &bin))
		TH_LOG("%s", flex_last_error());
	EXPECT_EQ(0, flex_job_new_kernel(name, bin, &k->sig, k->corr, k->n_corr, plan, 3, &job))
		TH_LOG("%s", flex_last_error());
	return job;
}

static inline struct flex_job *add_job(struct __test_metadata *_metadata,
				       struct flex_context *ctx, uint64_t rows, uint64_t cols)
{
	struct flex_kernel *kern;
	struct flex_job *job;

	EXPECT_EQ(0, flex_kernel_new_add(FLEX_DTYPE_INT32, rows, cols, &kern))
		TH_LOG("%s", flex_last_error());
	job = kernel_job(_metadata, ctx, kern, "add");
	flex_kernel_destroy(kern);
	return job;
}

#endif /* LIBFLEX_TEST_H */
