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

#endif /* LIBFLEX_TEST_H */
