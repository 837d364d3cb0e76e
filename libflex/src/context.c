// SPDX-License-Identifier: GPL-2.0
/*
 * A context: the device, its FlexAllocator (regions from the device) and
 * the default stream. Launches resolve AllocationIndices through it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/flex.h>
#include <linux/flex_isa.h>
#include <flex/context.h>
#include <flex/program.h>
#include <flex/stream.h>

#include "log.h"
#include "stream_internal.h"

FLEX_EXPORT int flex_context_new(struct flex_device *dev, const struct flex_alloc_config *cfg,
				 struct flex_context **out)
{
	struct flex_region_source *src;
	struct flex_context *ctx;
	struct flex_query q;
	int err;

	if (!dev || !out)
		return flex_error_set(-EINVAL, "flex_context_new: NULL argument");
	err = flex_device_query(dev, &q);
	if (err)
		return flex_error_set(err, "flex_context_new: FLEX_IOCTL_QUERY: %s", strerror(-err));
	if (!(q.capabilities & FLEX_CAP_QUEUES))
		return flex_error_set(-EOPNOTSUPP, "flex_context_new: the device has no queues");
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return flex_error_set(-ENOMEM, "flex_context_new: out of memory");
	ctx->dev = flex_device_ref(dev);
	pthread_mutex_init(&ctx->lock, NULL);
	if (getenv("FLEX_REPORT") && *getenv("FLEX_REPORT")) {
		ctx->report_path = strdup(getenv("FLEX_REPORT"));
		if (!ctx->report_path) {
			err = flex_error_set(-ENOMEM, "flex_context_new: out of memory");
			goto fail;
		}
	}
	err = flex_region_source_from_device(dev, &src);
	if (err) {
		flex_error_set(err, "flex_context_new: region source: %s", strerror(-err));
		goto fail;
	}
	err = flex_alloc_new(src, cfg, &ctx->alloc);
	flex_region_source_unref(src);
	if (err)
		goto fail;	/* the allocator's message stays */
	err = flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &ctx->default_stream);
	if (err)
		goto fail;
	*out = ctx;
	return 0;
fail:
	flex_alloc_destroy(ctx->alloc);
	flex_device_unref(ctx->dev);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx->report_path);
	free(ctx);
	return err;
}

FLEX_EXPORT int flex_context_new_from_path(const char *path, struct flex_context **out)
{
	struct flex_device *dev;
	char node[256];
	int err = flex_device_new(path, &dev);

	if (err) {
		if (!path && flex_device_default_node(node, sizeof(node)) == 0)
			path = node;
		return flex_error_set(err, "flex_context_new_from_path: %s: %s", path ? path : "FLEX_DEVICE",
				 strerror(-err));
	}
	err = flex_context_new(dev, NULL, out);
	flex_device_unref(dev);
	return err;
}

FLEX_EXPORT void flex_context_destroy(struct flex_context *ctx)
{
	if (!ctx)
		return;
	if (ctx->report_path) {
		/* The default stream's final counters, as a live stream. */
		flex_stream_synchronize(ctx->default_stream, NULL);
		flex_context_write_exit_report(ctx);
	}
	flex_stream_destroy(ctx->default_stream);
	flex_alloc_destroy(ctx->alloc);
	flex_device_unref(ctx->dev);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx->report_path);
	free(ctx);
}

void flex_context_add_stream(struct flex_context *ctx, struct flex_stream *s)
{
	pthread_mutex_lock(&ctx->lock);
	s->ctx_next = ctx->streams;
	ctx->streams = s;
	pthread_mutex_unlock(&ctx->lock);
}

void flex_context_remove_stream(struct flex_context *ctx, struct flex_stream *s,
			   const struct flex_stream_stats *final)
{
	struct flex_stream **pp;
	struct flex_stream_stats *r = &ctx->retired;

	pthread_mutex_lock(&ctx->lock);
	for (pp = &ctx->streams; *pp; pp = &(*pp)->ctx_next) {
		if (*pp == s) {
			*pp = s->ctx_next;
			break;
		}
	}
	r->jobs += final->jobs;
	r->tiles += final->tiles;
	r->cbs += final->cbs;
	r->submits += final->submits;
	r->host_ops += final->host_ops;
	r->host_funcs += final->host_funcs;
	r->bytes_dma += final->bytes_dma;
	r->parked_cbs += final->parked_cbs;
	r->synchronizes += final->synchronizes;
	r->sync_ns += final->sync_ns;
	r->corr_slot_bytes += final->corr_slot_bytes;
	r->corr_slot_grows += final->corr_slot_grows;
	ctx->n_retired++;
	pthread_mutex_unlock(&ctx->lock);
}

FLEX_EXPORT struct flex_device *flex_context_device(struct flex_context *ctx)
{
	return ctx->dev;
}

FLEX_EXPORT struct flex_alloc *flex_context_allocator(struct flex_context *ctx)
{
	return ctx->alloc;
}

FLEX_EXPORT struct flex_stream *flex_context_default_stream(struct flex_context *ctx)
{
	return ctx->default_stream;
}

FLEX_EXPORT int flex_context_load_program(struct flex_context *ctx, const void *bin,
					  size_t size, flex_alloc_index_t *out)
{
	flex_alloc_index_t idx;
	int err;

	if (!ctx || !bin || !out)
		return flex_error_set(-EINVAL, "flex_context_load_program: NULL argument");
	/* The device's own rules, so a bad binary fails here and not as a fault later. */
	err = flex_program_validate(bin, size, NULL);
	if (err)
		return flex_error_set(err, "program: %s", flex_last_error());
	err = flex_alloc_block_alloc(ctx->alloc, size, FLEX_ALLOC_PROGRAM, &idx);
	if (err)
		return err;	/* the allocator's message names the sizes */
	err = flex_stream_copy(ctx->default_stream, 1, idx, 0, (void *)bin, size);
	if (!err)
		err = flex_stream_synchronize(ctx->default_stream, NULL);
	if (err) {
		flex_alloc_block_free(ctx->alloc, idx);
		return err;
	}
	*out = idx;
	return 0;
}
