// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs and JobPlans: construction and the validation of a plan's step
 * order, done once when the job is created so that nothing can start and
 * then fail half way for a reason known in advance.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/flex.h>
#include <flex/job.h>

#include "log.h"
#include "stream_internal.h"

static const char *const step_names[] = {
	[FLEX_STEP_HOST_OP] = "host_op",
	[FLEX_STEP_DMA_TO_DEVICE] = "dma_to_device",
	[FLEX_STEP_DMA_FROM_DEVICE] = "dma_from_device",
	[FLEX_STEP_DMA_CORRECTION] = "dma_correction",
	[FLEX_STEP_COMPUTE] = "compute",
	[FLEX_STEP_EVENT_WAIT] = "event_wait",
};

static const char *const corr_names[] = {
	[FLEX_CORR_CONST] = "const",
	[FLEX_CORR_ADDRESS] = "address",
	[FLEX_CORR_STRIDE] = "stride",
	[FLEX_CORR_TILE_DIM] = "tile_dim",
	[FLEX_CORR_ACCUMULATE] = "accumulate",
};

FLEX_EXPORT const char *flex_step_kind_name(enum flex_step_kind kind)
{
	return (unsigned int)kind < sizeof(step_names) / sizeof(step_names[0]) ?
	       step_names[kind] : NULL;
}

FLEX_EXPORT const char *flex_corr_kind_name(enum flex_corr_kind kind)
{
	return (unsigned int)kind < sizeof(corr_names) / sizeof(corr_names[0]) ?
	       corr_names[kind] : NULL;
}

static struct flex_job *job_alloc(const char *name, const struct flex_step *steps,
				  uint32_t n_steps)
{
	struct flex_job *job = calloc(1, sizeof(*job) + n_steps * sizeof(steps[0]));

	if (!job)
		return NULL;
	snprintf(job->name, sizeof(job->name), "%s", name ? name : "job");
	memcpy(job->steps, steps, n_steps * sizeof(steps[0]));
	job->n_steps = n_steps;
	return job;
}

static int check_dma_step(const char *name, uint32_t i, const struct flex_step *st)
{
	if (!st->host && st->size)
		return flex_error_set(-EINVAL, "job %s: step %u (%s): NULL host pointer",
				 name, i, step_names[st->kind]);
	if (st->host && st->size > UINTPTR_MAX - (uintptr_t)st->host)
		return flex_error_set(-EINVAL, "job %s: step %u (%s): %llu bytes from %p wrap "
				 "around the address space", name, i, step_names[st->kind],
				 (unsigned long long)st->size, st->host);
	if (st->offset > UINT64_MAX - st->size)
		return flex_error_set(-EINVAL, "job %s: step %u: offset + size overflows", name, i);
	return 0;
}

FLEX_EXPORT int flex_job_new(const char *name, const struct flex_step *steps,
			     uint32_t n_steps, struct flex_job **out)
{
	const char *nm = name ? name : "job";
	struct flex_job *job;
	uint32_t i;
	int err;

	if (!out || (!steps && n_steps))
		return flex_error_set(-EINVAL, "flex_job_new: NULL argument");
	if (!n_steps || n_steps > FLEX_JOB_MAX_STEPS)
		return flex_error_set(-EINVAL, "job %s: %u steps, must be 1 .. %u", nm, n_steps,
				 FLEX_JOB_MAX_STEPS);
	for (i = 0; i < n_steps; i++) {
		const struct flex_step *st = &steps[i];

		switch (st->kind) {
		case FLEX_STEP_DMA_TO_DEVICE:
		case FLEX_STEP_DMA_FROM_DEVICE:
			err = check_dma_step(nm, i, st);
			if (err)
				return err;
			break;
		case FLEX_STEP_HOST_OP:
			if (!st->fn)
				return flex_error_set(-EINVAL,
						 "job %s: step %u (host_op): a DMA-only job's host "
						 "operation needs a function (the correction builder "
						 "belongs to kernel jobs)", nm, i);
			break;
		default:
			return flex_error_set(-EINVAL,
					 "job %s: step %u: %s is not allowed in a DMA-only job "
					 "(dma_to_device, dma_from_device and host_op are)", nm, i,
					 flex_step_kind_name(st->kind) ?: "unknown kind");
		}
	}
	job = job_alloc(name, steps, n_steps);
	if (!job)
		return flex_error_set(-ENOMEM, "job %s: out of memory", nm);
	*out = job;
	return 0;
}

static int check_kernel_plan(const char *nm, const struct flex_step *steps, uint32_t n_steps,
			     uint32_t n_corr)
{
	static const enum flex_step_kind with_corr[] = {
		FLEX_STEP_HOST_OP, FLEX_STEP_DMA_CORRECTION, FLEX_STEP_COMPUTE,
	};
	const enum flex_step_kind *want = n_corr ? with_corr : with_corr + 2;
	uint32_t n_want = n_corr ? 3 : 1, i;

	if (n_steps != n_want)
		return flex_error_set(-EINVAL, "job %s: a kernel plan %s correction metadata must be "
				 "%s, not %u steps", nm, n_corr ? "with" : "without",
				 n_corr ? "[host_op, dma_correction, compute]" : "[compute]",
				 n_steps);
	for (i = 0; i < n_steps; i++) {
		if (steps[i].kind != want[i])
			return flex_error_set(-EINVAL, "job %s: step %u is %s, expected %s", nm, i,
					 flex_step_kind_name(steps[i].kind) ?: "unknown",
					 step_names[want[i]]);
		if (steps[i].kind == FLEX_STEP_HOST_OP && steps[i].fn)
			return flex_error_set(-EINVAL, "job %s: step %u: a kernel job's host_op is "
					 "the correction builder (fn must be NULL)", nm, i);
	}
	return 0;
}

static int check_corr(const char *nm, const struct flex_kernel_sig *sig,
		      const struct flex_corr_slot *corr, uint32_t n_corr)
{
	uint32_t i;

	for (i = 0; i < n_corr; i++) {
		const struct flex_corr_slot *c = &corr[i];

		switch (c->kind) {
		case FLEX_CORR_CONST:
		case FLEX_CORR_ACCUMULATE:
			break;
		case FLEX_CORR_ADDRESS:
		case FLEX_CORR_STRIDE:
		case FLEX_CORR_TILE_DIM:
			if (c->arg >= sig->n_args)
				return flex_error_set(-EINVAL, "job %s: correction slot %u (%s): arg %u, "
						 "the kernel has %u", nm, i, corr_names[c->kind],
						 c->arg, sig->n_args);
			if (c->kind != FLEX_CORR_ADDRESS && c->dim >= sig->args[c->arg].ndim)
				return flex_error_set(-EINVAL, "job %s: correction slot %u (%s): dim %u, "
						 "arg %u (%s) has %u", nm, i, corr_names[c->kind],
						 c->dim, c->arg, sig->args[c->arg].name,
						 sig->args[c->arg].ndim);
			break;
		default:
			return flex_error_set(-EINVAL, "job %s: correction slot %u: unknown kind %d",
					 nm, i, (int)c->kind);
		}
	}
	return 0;
}

FLEX_EXPORT int flex_job_new_kernel(const char *name, flex_alloc_index_t binary,
				    const struct flex_kernel_sig *sig,
				    const struct flex_corr_slot *corr, uint32_t n_corr,
				    const struct flex_step *steps, uint32_t n_steps,
				    struct flex_job **out)
{
	const char *nm = name ? name : "job";
	struct flex_job *job;
	int err;

	if (!out || !sig || !steps || (n_corr && !corr))
		return flex_error_set(-EINVAL, "flex_job_new_kernel: NULL argument");
	if (binary == FLEX_ALLOC_INDEX_NONE)
		return flex_error_set(-EINVAL, "job %s: no binary allocation", nm);
	if (n_corr > FLEX_JOB_MAX_CORR_SLOTS)
		return flex_error_set(-EINVAL, "job %s: %u correction slots, at most %u", nm, n_corr,
				 FLEX_JOB_MAX_CORR_SLOTS);
	err = flex_sig_validate(sig);
	if (err)
		return flex_error_set(err, "job %s: bad signature: %s", nm, flex_last_error());
	err = check_kernel_plan(nm, steps, n_steps, n_corr) ?:
	      check_corr(nm, sig, corr, n_corr);
	if (err)
		return err;

	job = job_alloc(name, steps, n_steps);
	if (!job)
		return flex_error_set(-ENOMEM, "job %s: out of memory", nm);
	if (n_corr) {
		job->corr = malloc(n_corr * sizeof(*corr));
		if (!job->corr) {
			free(job);
			return flex_error_set(-ENOMEM, "job %s: out of memory", nm);
		}
		memcpy(job->corr, corr, n_corr * sizeof(*corr));
	}
	job->n_corr = n_corr;
	job->is_kernel = 1;
	job->binary = binary;
	job->sig = *sig;
	*out = job;
	return 0;
}

FLEX_EXPORT void flex_job_destroy(struct flex_job *job)
{
	if (!job)
		return;
	free(job->corr);
	free(job);
}

FLEX_EXPORT const char *flex_job_name(const struct flex_job *job)
{
	return job->name;
}

FLEX_EXPORT int flex_job_is_kernel(const struct flex_job *job)
{
	return job->is_kernel;
}

FLEX_EXPORT const struct flex_kernel_sig *flex_job_sig(const struct flex_job *job)
{
	return job->is_kernel ? &job->sig : NULL;
}

FLEX_EXPORT flex_alloc_index_t flex_job_binary(const struct flex_job *job)
{
	return job->binary;
}

FLEX_EXPORT const struct flex_corr_slot *flex_job_corr(const struct flex_job *job, uint32_t *n)
{
	if (n)
		*n = job->n_corr;
	return job->corr;
}

FLEX_EXPORT const struct flex_step *flex_job_steps(const struct flex_job *job, uint32_t *n)
{
	if (n)
		*n = job->n_steps;
	return job->steps;
}
