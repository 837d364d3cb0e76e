/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/manifest.h - the on-disk plan ("compiler output"): a JSON manifest,
 * version 1, and the program binaries it names.
 *
 *   {
 *     "format": "flex-plan", "version": 1,
 *     "jobs": [
 *       { "name": "matmul_i32", "binary": "matmul_i32.bin",
 *         "args": [ {"name": "A", "dtype": "int32", "shape": [64, 64], "axes": ["m", "k"]},
 *                   {"name": "B", "dtype": "int32", "shape": [64, 64], "axes": ["k", "n"]},
 *                   {"name": "C", "dtype": "int32", "shape": [64, 64], "axes": ["m", "n"],
 *                    "output": true} ],
 *         "reduction_axes": ["k"],
 *         "correction": [ {"kind": "address", "arg": "A"}, ...,
 *                         {"kind": "stride", "arg": "C", "dim": 0}, {"kind": "accumulate"} ],
 *         "plan": ["host_op", "dma_correction", "compute"] } ] }
 *
 * Per job: "name" (1..63 bytes, unique), "binary" (a path relative to the
 * manifest's directory), "args" (1..16), "plan", and optionally
 * "reduction_axes" and "correction" (default []). Per arg: "name" (1..31
 * bytes, unique in the job), "dtype" (a name flex_dtype_from_name()
 * takes: "float32", "bfloat16", "int32", "int8", ...), "shape" (1..8
 * tile extents, 1 .. 2^32-1), "axes" (as many axis names, 1..15 bytes, or
 * null for a dimension that is never tiled; an axis at most once per arg),
 * optionally "output" (bool) and "strides" (fixed strides, elements).
 * Axes are numbered in order of first appearance; at most 8; one axis has
 * one tile extent in every arg. Correction slots: "kind" one of "const"
 * ("value"), "address" ("arg"), "stride" and "tile_dim" ("arg", "dim"),
 * "accumulate" (nothing else); at most 1024. "plan" is
 * ["host_op", "dma_correction", "compute"] with a non-empty correction, or
 * ["compute"] with none. Unknown keys are errors. The binary must be a valid
 * program (flex_program_validate()) that declares no more correction slots
 * than the job has.
 *
 * Parsing (flex_manifest_new_from_file()) is pure: it reads the files and builds
 * an in-memory description, with no device. Loading (flex_loaded_plan_new())
 * puts each binary in device memory (a FLEX_ALLOC_PROGRAM allocation, one
 * DMA job per binary on a stream) and builds the runtime's kernel jobs
 * (flex/job.h) and the ExecutionPlan.
 *
 * Every error message names the file, the job and the field:
 *   plan.json: job "matmul_i32": args[1].shape[0]: must be an integer >= 1
 *
 * Threading: a parsed manifest is immutable; any number of threads may
 * read it and load it at once. A loaded plan is read-only after loading;
 * flex_loaded_plan_destroy() must not race with its use.
 */
#ifndef FLEX_MANIFEST_H
#define FLEX_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include <flex/allocator.h>
#include <flex/context.h>
#include <flex/job.h>
#include <flex/stream.h>
#include <flex/tiling.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLEX_MANIFEST_VERSION	1
#define FLEX_MANIFEST_MAX_JOBS	256
/* The largest manifest file read (it is a few KiB in practice). */
#define FLEX_MANIFEST_MAX_BYTES	(16U << 20)

/*
 * struct flex_manifest_job - one job, as parsed.
 * @name:	the job's name.
 * @binary_path: the binary's path (the manifest's directory + "binary").
 * @binary, @binary_size: its bytes (validated).
 * @sig:	the kernel signature (args, axes, reductions).
 * @n_corr, @corr: the correction metadata.
 * @n_steps, @steps: the JobPlan's step kinds.
 */
struct flex_manifest_job {
	char name[FLEX_JOB_NAME_MAX];
	char *binary_path;
	void *binary;
	size_t binary_size;
	struct flex_kernel_sig sig;
	uint32_t n_corr;
	struct flex_corr_slot *corr;
	uint32_t n_steps;
	enum flex_step_kind steps[FLEX_JOB_MAX_STEPS];
};

struct flex_manifest;

/**
 * flex_manifest_new_from_file() - read and check a manifest and its binaries.
 * @path:	the manifest file; binaries are found relative to its directory.
 * @out:	the description; free it with flex_manifest_destroy().
 *
 * Return: 0; -EINVAL a malformed manifest (JSON syntax, an unknown key, a
 * wrong type, a value out of range, a name that does not resolve, an
 * inconsistent shape, a bad plan, a bad correction slot); -ENOEXEC a
 * binary that is not a valid program or uses more slots than the job has;
 * open/read errors of the manifest or a binary (-ENOENT, -EACCES...);
 * -EFBIG a file too large; -ENOMEM. flex_last_error() says why, as
 * "<path>: job "<name>": <field>: ...".
 *
 * Since: 1.0
 */
int flex_manifest_new_from_file(const char *path, struct flex_manifest **out);

/** flex_manifest_destroy() - free a parsed manifest (NULL is ignored). Since: 1.0. */
void flex_manifest_destroy(struct flex_manifest *m);

/** flex_manifest_path() - the path it was parsed from. Since: 1.0. */
const char *flex_manifest_path(const struct flex_manifest *m);

/** flex_manifest_n_jobs() - how many jobs (at least 1). Since: 1.0. */
uint32_t flex_manifest_n_jobs(const struct flex_manifest *m);

/** flex_manifest_job() - job @i in manifest order, or NULL past the end. Since: 1.0. */
const struct flex_manifest_job *flex_manifest_job(const struct flex_manifest *m, uint32_t i);

/** flex_manifest_find() - the job named @name, or NULL. Since: 1.0. */
const struct flex_manifest_job *flex_manifest_find(const struct flex_manifest *m,
						   const char *name);

/** flex_manifest_arg_index() - the index of @job's argument @name, or -1. Since: 1.0. */
int flex_manifest_arg_index(const struct flex_manifest_job *job, const char *name);

/* A plan loaded on a device: the ExecutionPlan and its binaries' allocations. */
struct flex_loaded_plan;

/**
 * flex_loaded_plan_new() - load a parsed manifest on a device.
 * @ctx:	the context (its allocator gets the binaries).
 * @m:		the manifest.
 * @s:		the stream the binaries are DMA'd on (NULL: the context's
 *		default stream). Loading synchronizes it.
 * @out:	the loaded plan; free it with flex_loaded_plan_destroy().
 *
 * Each binary gets a FLEX_ALLOC_PROGRAM allocation and a DMA-only job
 * ("load:<name>") on @s; then a kernel job per manifest job is added to the
 * ExecutionPlan, in manifest order. On failure nothing stays allocated.
 *
 * Blocks until the binaries are on the device.
 * Return: 0; the allocator's errors (-ENOMEM names the size); the stream's
 * launch and synchronize errors; flex_job_new_kernel()'s. flex_last_error()
 * names the file and the job.
 *
 * Since: 1.0
 */
int flex_loaded_plan_new(struct flex_context *ctx, const struct flex_manifest *m,
			 struct flex_stream *s, struct flex_loaded_plan **out);

/** flex_loaded_plan_plan() - the ExecutionPlan (owned by @lp). Since: 1.0. */
struct flex_plan *flex_loaded_plan_plan(const struct flex_loaded_plan *lp);

/** flex_loaded_plan_binary() - job @i's binary allocation, or FLEX_ALLOC_INDEX_NONE. Since: 1.0. */
flex_alloc_index_t flex_loaded_plan_binary(const struct flex_loaded_plan *lp, uint32_t i);

/**
 * flex_loaded_plan_destroy() - free the plan and the binaries' allocations.
 * Every launch of its jobs must have completed (synchronize the streams
 * first): a CB still running would find its program region in use by
 * someone else. NULL is ignored.
 *
 * Since: 1.0
 */
void flex_loaded_plan_destroy(struct flex_loaded_plan *lp);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_MANIFEST_H */
