/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/context.h - a device, its FlexAllocator and its default stream.
 *
 * The context is what a runtime (torch-spyre's) holds per device: tensors
 * and binaries are allocated from its allocator (region source = the
 * device), launches resolve AllocationIndices through it, and it owns the
 * default stream (priority FLEX_QUEUE_PRIO_NORMAL), created with it.
 *
 * Environment, read by flex_context_new():
 *   FLEX_REPORT=path   when the context is destroyed, append its report
 *                      (flex_context_report()) to path: JSON if path ends
 *                      in ".json", CSV if in ".csv", the summary otherwise.
 *
 * Thread safety: every function may be called from any thread; the
 * allocator and streams are thread-safe. flex_context_destroy() must not
 * race with any other use of the context or its streams.
 */
#ifndef FLEX_CONTEXT_H
#define FLEX_CONTEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <flex/allocator.h>
#include <flex/device.h>

#ifdef __cplusplus
extern "C" {
#endif

struct flex_context;
struct flex_stream;

/**
 * flex_context_new() - a context on an open device.
 * @dev:	the device; the context takes a reference.
 * @cfg:	the allocator's config (NULL: flex_alloc_config_init()'s).
 * @out:	the context.
 *
 * Return: 0; -EOPNOTSUPP the device has no queues (FLEX_CAP_QUEUES); the
 * errors of flex_region_source_from_device(), flex_alloc_new() and
 * flex_stream_new(); -ENOMEM. The message is in flex_last_error().
 *
 * Since: 1.0
 */
int flex_context_new(struct flex_device *dev, const struct flex_alloc_config *cfg,
		     struct flex_context **out);

/**
 * flex_context_new_from_path() - flex_device_new(@path) then flex_context_new(dev, NULL).
 * @path NULL (Since: 1.0) opens the node FLEX_DEVICE names, else
 * /dev/flex0 (flex_device_new()).
 * Return: as those two.
 */
int flex_context_new_from_path(const char *path, struct flex_context **out);

/**
 * flex_context_destroy() - synchronize and destroy the default stream, then
 * destroy the allocator and drop the device. Streams created on the
 * context must have been destroyed first. NULL is ignored.
 *
 * Since: 1.0
 */
void flex_context_destroy(struct flex_context *ctx);

/** flex_context_device() - the device (the context's reference). Since: 1.0. */
struct flex_device *flex_context_device(struct flex_context *ctx);

/** flex_context_allocator() - the FlexAllocator (owned by the context). Since: 1.0. */
struct flex_alloc *flex_context_allocator(struct flex_context *ctx);

/** flex_context_default_stream() - the default stream (owned by the context). Since: 1.0. */
struct flex_stream *flex_context_default_stream(struct flex_context *ctx);

/**
 * flex_context_load_program() - load a program binary: allocate it
 * (FLEX_ALLOC_PROGRAM), DMA it on the default stream and synchronize.
 * @bin, @size:	the binary (header + instructions, <linux/flex_isa.h>);
 *		checked with the device's rules first (flex_program_validate()).
 * @out:	the allocation; free it with flex_alloc_block_free().
 *
 * Blocks (it is the ExecutionPlan loading step, done once per binary).
 * Return: 0; -ENOEXEC a bad header or size; the allocator's and
 * flex_stream_synchronize()'s errors.
 *
 * Since: 1.0
 */
int flex_context_load_program(struct flex_context *ctx, const void *bin, size_t size,
			      flex_alloc_index_t *out);

/**
 * flex_context_report() - the allocator's memory report (flex_alloc_report(),
 * same @format) with the statistics of every stream of the context: jobs,
 * tiles, CBs and submissions, host operations, DMA bytes, time spent in
 * synchronize, correction arena size; live streams one by one (the default
 * stream marked), destroyed ones added up.
 * @out:	where to write.
 * @format:	SUMMARY: the allocator's summary, then a line per stream.
 *		CSV: the allocator's CSV, then the stream lines prefixed "# ".
 *		JSON: the allocator's JSON object with two more members,
 *		"streams" (an array: queue_id, priority, default and the
 *		counters of struct flex_stream_stats by name) and
 *		"streams_destroyed" (the same counters summed, and "count").
 *
 * Return: 0; -EINVAL a NULL argument or unknown format; -EIO writing
 * failed; -ENOMEM. The message is in flex_last_error().
 *
 * Since: 1.0
 */
int flex_context_report(struct flex_context *ctx, FILE *out,
			enum flex_alloc_report_format format);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_CONTEXT_H */
