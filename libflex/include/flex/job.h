/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/job.h - Jobs, JobPlans and ExecutionPlans (the Program Execution
 * Pipeline RFC).
 *
 * A job is one unit of work for a stream (flex/stream.h):
 *
 *  - a DMA-only job, Job(JobPlan): data movement (tensor .to(device), loading
 *    a binary, .to("cpu")) and host functions, in plan order;
 *  - a kernel job, Job(binary, signature, correction metadata, JobPlan): a
 *    compiled program in device memory (an AllocationIndex), the tensor
 *    shapes it was compiled for (struct flex_kernel_sig, flex/tiling.h) and
 *    how to correct it for each launch and tile (struct flex_corr_slot).
 *
 * A JobPlan is an array of struct flex_step, walked in order. Its order is
 * validated when the job is created, before anything can run:
 *
 *  - DMA-only job: one or more steps, each FLEX_STEP_DMA_TO_DEVICE,
 *    FLEX_STEP_DMA_FROM_DEVICE or FLEX_STEP_HOST_OP with a user function.
 *  - Kernel job with correction metadata: exactly
 *    { HOST_OP (fn NULL: the correction builder), DMA_CORRECTION, COMPUTE }.
 *  - Kernel job without correction metadata: exactly { COMPUTE }.
 *
 * (The manifest's "plan": ["host_op", "dma_correction", "compute"] and
 * ["compute"].) Tensor data moves in and out with DMA-only jobs on the same
 * stream: a stream runs its jobs in FIFO order.
 *
 * Program correction: the correction tensor is one __u64 per slot, in slot
 * order; slot i's value comes from correction[i] (enum flex_corr_kind) and
 * is computed by the HostOperation for every launch and every tile. The
 * DMA_CORRECTION step copies it to the stream's correction arena (one DMA
 * for a window of up to 255 tiles), where the tile's compute CB's segment
 * 7 points at it (Documentation/flex/execution.rst).
 *
 * Objects here are immutable once created: any number of threads may read
 * and launch the same job at once. A job holds no device resource and may
 * be freed as soon as the launches that use it have returned.
 */
#ifndef FLEX_JOB_H
#define FLEX_JOB_H

#include <stddef.h>
#include <stdint.h>

#include <flex/allocator.h>
#include <flex/tiling.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest job name kept (longer ones are truncated), NUL included. */
#define FLEX_JOB_NAME_MAX	64
/* Most steps in a JobPlan, most correction slots in a job. */
#define FLEX_JOB_MAX_STEPS	64
#define FLEX_JOB_MAX_CORR_SLOTS	1024	/* == FLEX_PROG_MAX_SLOTS */

/*
 * enum flex_corr_kind - where a correction slot's value comes from.
 * @FLEX_CORR_CONST:	@value.
 * @FLEX_CORR_ADDRESS:	FLEX_ADDR(segment of argument @arg's region,
 *			its offset in the region + the tensor's byte_offset
 *			+ the tile's byte offset).
 * @FLEX_CORR_STRIDE:	the launched tensor @arg's strides[@dim] (elements).
 * @FLEX_CORR_TILE_DIM:	the compiled tile shape[@dim] of argument @arg.
 * @FLEX_CORR_ACCUMULATE: 0 on the first step of a reduction (every
 *			reduction axis at tile 0), 1 after; for FLEX_OP_MATMUL's
 *			acc operand.
 */
enum flex_corr_kind {
	FLEX_CORR_CONST = 0,
	FLEX_CORR_ADDRESS = 1,
	FLEX_CORR_STRIDE = 2,
	FLEX_CORR_TILE_DIM = 3,
	FLEX_CORR_ACCUMULATE = 4,
};

/*
 * struct flex_corr_slot - one slot of the correction metadata.
 * @kind:	enum flex_corr_kind.
 * @arg:	argument index (ADDRESS, STRIDE, TILE_DIM), else 0.
 * @dim:	dimension (STRIDE, TILE_DIM), else 0.
 * @value:	CONST's value, else 0.
 */
struct flex_corr_slot {
	enum flex_corr_kind kind;
	uint32_t arg;
	uint32_t dim;
	uint64_t value;
};

/*
 * enum flex_step_kind - one step of a JobPlan.
 * @FLEX_STEP_HOST_OP:	   runs on the host: in a kernel job the correction
 *			   builder (fn NULL), in a DMA-only job a user function
 *			   that runs in stream order (after everything before it
 *			   completed, before anything after it starts).
 * @FLEX_STEP_DMA_TO_DEVICE: host memory -> allocation (one DMA CB).
 * @FLEX_STEP_DMA_FROM_DEVICE: allocation -> host memory (one DMA CB).
 * @FLEX_STEP_DMA_CORRECTION: the correction tensors of a window of tiles ->
 *			   the stream's correction arena (each tile's at its
 *			   segment 7, offset 0).
 * @FLEX_STEP_COMPUTE:	   the binary, as one compute CB.
 * @FLEX_STEP_EVENT_WAIT:  not a plan step: reported in a struct
 *			   flex_stream_error for a failed flex_stream_wait_event().
 */
enum flex_step_kind {
	FLEX_STEP_HOST_OP = 0,
	FLEX_STEP_DMA_TO_DEVICE = 1,
	FLEX_STEP_DMA_FROM_DEVICE = 2,
	FLEX_STEP_DMA_CORRECTION = 3,
	FLEX_STEP_COMPUTE = 4,
	FLEX_STEP_EVENT_WAIT = 5,
};

/**
 * typedef flex_host_fn - a host function (HostOperation of a DMA-only job,
 * or flex_stream_host_func()). Runs on the stream's worker thread.
 * Return: 0, or a negative errno, which poisons the stream (sticky error).
 */
typedef int (*flex_host_fn)(void *user);

/*
 * struct flex_step - one step of a JobPlan.
 * @kind:	enum flex_step_kind.
 * @fn, @user:	FLEX_STEP_HOST_OP: the function (NULL in a kernel job: the
 *		correction builder).
 * @host:	DMA_TO/FROM_DEVICE: the host buffer; it must stay valid (and,
 *		for TO_DEVICE, unchanged) until the step has run: the DMA
 *		reads or writes it when it executes, not when it is queued.
 * @index:	DMA_TO/FROM_DEVICE: the allocation.
 * @offset, @size: DMA_TO/FROM_DEVICE: bytes, inside the allocation. Any
 *		size: beyond FLEX_DMA_MAX_SIZE (one DMA CB's) the stream splits
 *		it (flex_stream_copy()); 0 is a no-op (@host may then be NULL).
 *		Since 0.2; 0.1 refused 0 and sizes above FLEX_DMA_MAX_SIZE.
 */
struct flex_step {
	enum flex_step_kind kind;
	flex_host_fn fn;
	void *user;
	void *host;
	flex_alloc_index_t index;
	uint64_t offset;
	uint64_t size;
};

/** flex_step_dma_to_device() - a DMA ToDevice step. Since: 1.0. */
static inline struct flex_step flex_step_dma_to_device(flex_alloc_index_t index,
							uint64_t offset, const void *host,
							uint64_t size)
{
	struct flex_step s = { FLEX_STEP_DMA_TO_DEVICE, NULL, NULL, (void *)host,
			       index, offset, size };
	return s;
}

/** flex_step_dma_from_device() - a DMA FromDevice step. Since: 1.0. */
static inline struct flex_step flex_step_dma_from_device(flex_alloc_index_t index,
							  uint64_t offset, void *host,
							  uint64_t size)
{
	struct flex_step s = { FLEX_STEP_DMA_FROM_DEVICE, NULL, NULL, host, index,
			       offset, size };
	return s;
}

/** flex_step_host_op() - a HostOperation step (@fn NULL: the correction builder). Since: 1.0. */
static inline struct flex_step flex_step_host_op(flex_host_fn fn, void *user)
{
	struct flex_step s = { FLEX_STEP_HOST_OP, fn, user, NULL, 0, 0, 0 };
	return s;
}

/** flex_step_simple() - a step with no operands (DMA_CORRECTION, COMPUTE). Since: 1.0. */
static inline struct flex_step flex_step_simple(enum flex_step_kind kind)
{
	struct flex_step s = { kind, NULL, NULL, NULL, 0, 0, 0 };
	return s;
}

/**
 * flex_step_kind_name() - "host_op", "dma_to_device", "dma_from_device",
 * "dma_correction", "compute", "event_wait"; NULL for an unknown kind.
 * "host_op", "dma_correction" and "compute" are the manifest's names.
 *
 * Since: 1.0
 */
const char *flex_step_kind_name(enum flex_step_kind kind);

/**
 * flex_corr_kind_name() - "const", "address", "stride", "tile_dim",
 * "accumulate"; NULL for an unknown kind.
 *
 * Since: 1.0
 */
const char *flex_corr_kind_name(enum flex_corr_kind kind);

struct flex_job;

/**
 * flex_job_new() - Job(JobPlan): a DMA-only job.
 * @name:	for error reports (NULL: "job"); copied, truncated to
 *		FLEX_JOB_NAME_MAX - 1 bytes.
 * @steps:	the JobPlan, 1 .. FLEX_JOB_MAX_STEPS steps; copied.
 * @out:	the job.
 *
 * Return: 0; -EINVAL for a plan that breaks the rules in the file comment
 * (a step kind not allowed, a HOST_OP without a function, a NULL host
 * pointer for a DMA of 1 byte or more), with a message naming
 * the job and the step index in flex_last_error(); -ENOMEM.
 *
 * Since: 1.0
 */
int flex_job_new(const char *name, const struct flex_step *steps, uint32_t n_steps,
		 struct flex_job **out);

/**
 * flex_job_new_kernel() - Job(binary, correction metadata, JobPlan): a job
 * that runs a compiled program.
 * @name:	as flex_job_new().
 * @binary:	the program's allocation (loaded with flex_context_load_program()
 *		or any DMA); resolved when the job is launched.
 * @sig:	what the kernel was compiled for; copied. Checked with
 *		flex_sig_validate().
 * @corr:	the correction metadata, @n_corr slots (0 .. FLEX_JOB_MAX_CORR_SLOTS);
 *		copied. Each slot's arg must be below sig->n_args and its dim
 *		below that argument's ndim.
 * @steps:	the JobPlan: { HOST_OP(NULL), DMA_CORRECTION, COMPUTE } when
 *		@n_corr > 0, { COMPUTE } when it is 0.
 * @out:	the job.
 *
 * Return: 0; -EINVAL a bad signature, slot or plan (message in
 * flex_last_error() naming the job and the slot or step); -ENOMEM.
 *
 * Since: 1.0
 */
int flex_job_new_kernel(const char *name, flex_alloc_index_t binary,
			const struct flex_kernel_sig *sig, const struct flex_corr_slot *corr,
			uint32_t n_corr, const struct flex_step *steps, uint32_t n_steps,
			struct flex_job **out);

/** flex_job_destroy() - free a job (NULL is ignored). Since: 1.0. */
void flex_job_destroy(struct flex_job *job);

/** flex_job_name() - the job's name. Since: 1.0. */
const char *flex_job_name(const struct flex_job *job);

/** flex_job_is_kernel() - 1 for a kernel job, 0 for a DMA-only one. Since: 1.0. */
int flex_job_is_kernel(const struct flex_job *job);

/** flex_job_sig() - the kernel signature, or NULL for a DMA-only job. Since: 1.0. */
const struct flex_kernel_sig *flex_job_sig(const struct flex_job *job);

/** flex_job_binary() - the binary's allocation (FLEX_ALLOC_INDEX_NONE: DMA-only). Since: 1.0. */
flex_alloc_index_t flex_job_binary(const struct flex_job *job);

/** flex_job_corr() - the correction metadata; *@n gets the slot count. Since: 1.0. */
const struct flex_corr_slot *flex_job_corr(const struct flex_job *job, uint32_t *n);

/** flex_job_steps() - the JobPlan; *@n gets the step count. Since: 1.0. */
const struct flex_step *flex_job_steps(const struct flex_job *job, uint32_t *n);

/*
 * ExecutionPlan: an ordered list of jobs (one per compiled kernel, plus
 * whatever data movement the compiler output asks for). A passive
 * container: it owns its jobs and runs nothing itself; launch each job with
 * flex_stream_launch(). Not thread-safe while being built; read-only after.
 */
struct flex_plan;

/** flex_plan_new() - an empty ExecutionPlan. Return: 0 or -ENOMEM. Since: 1.0. */
int flex_plan_new(struct flex_plan **out);

/**
 * flex_plan_add_job() - append @job; the plan owns it from now on (even
 * when this fails, in which case the job is freed).
 * Return: 0; -EEXIST a job of that name is already in the plan; -ENOMEM.
 *
 * Since: 1.0
 */
int flex_plan_add_job(struct flex_plan *plan, struct flex_job *job);

/** flex_plan_n_jobs() - how many jobs. Since: 1.0. */
uint32_t flex_plan_n_jobs(const struct flex_plan *plan);

/** flex_plan_job() - job @i (in order), or NULL past the end. Since: 1.0. */
struct flex_job *flex_plan_job(const struct flex_plan *plan, uint32_t i);

/** flex_plan_find() - the job named @name, or NULL. Since: 1.0. */
struct flex_job *flex_plan_find(const struct flex_plan *plan, const char *name);

/** flex_plan_destroy() - free the plan and its jobs (NULL is ignored). Since: 1.0. */
void flex_plan_destroy(struct flex_plan *plan);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_JOB_H */
