// SPDX-License-Identifier: GPL-2.0
/*
 * Launch: walk a job's plan into CBs. Everything that can be checked is
 * checked before the first CB is queued: the tensors against the kernel
 * signature (flex/tiling.h), every allocation resolved and big enough, the
 * regions countable in 7 segments, DMA steps inside their allocations.
 *
 * A kernel launch then runs, per tile, the HostOperation (the correction
 * tensor) and builds its compute CB. Tiles are built a window at a time
 * (up to FLEX_SUBMIT_MAX_CBS CBs), as a generator (stream.c): the caller
 * builds and submits windows while the driver queue takes them, the
 * stream's worker builds the rest as the queue drains. A window's
 * correction tensors are built side by side in one host staging buffer
 * and go to the stream's correction arena in one DMA CB ahead of the
 * window's compute CBs, each of whose segment 7 points at its own tile's
 * tensor (correction.c). The staging buffer lives until the stream's
 * completion passes the window's last CB (the DMA engine reads the user
 * pages when the CB runs, not when it is queued). A launch of any number
 * of tiles so holds a few windows' worth of memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/flex.h>
#include <linux/flex_isa.h>
#include <flex/stream.h>
#include <flex/tiling.h>

#include "log.h"
#include "stream_internal.h"

#define N_ARG_SEGMENTS	7	/* segments 0..6; 7 is the correction slot */

/* Resolved tensors: their addresses and the segment table. */
struct resolved {
	struct flex_vaddr va[FLEX_KERNEL_MAX_ARGS];
	uint64_t span[FLEX_KERNEL_MAX_ARGS];	/* bytes from va */
	uint32_t seg[FLEX_KERNEL_MAX_ARGS];
	uint64_t region[N_ARG_SEGMENTS];
	uint32_t n_regions;
	struct flex_vaddr prog;
	uint64_t prog_size;
};

static int resolve_args(struct flex_stream *s, const struct flex_job *job,
			const struct flex_tensor *args, uint32_t n_args, struct resolved *r)
{
	struct flex_alloc *a = s->ctx->alloc;
	uint64_t size, span;
	uint32_t i, k;
	int err;

	err = flex_alloc_block_resolve(a, job->binary, &r->prog, &r->prog_size);
	if (err)
		return flex_error_set(err, "job %s: binary allocation %llu: %s", job->name,
				 (unsigned long long)job->binary, flex_last_error());
	r->n_regions = 0;
	for (i = 0; i < n_args; i++) {
		const char *nm = job->sig.args[i].name;

		err = flex_alloc_block_resolve(a, args[i].index, &r->va[i], &size);
		if (err)
			return flex_error_set(err, "job %s: arg %u (%s): allocation %llu: %s", job->name,
					 i, nm, (unsigned long long)args[i].index,
					 flex_last_error());
		err = flex_tensor_span_bytes(&args[i], &span);
		if (err)
			return flex_error_set(-EINVAL, "job %s: arg %u (%s): size overflows", job->name,
					 i, nm);
		if (args[i].byte_offset > size || span > size - args[i].byte_offset)
			return flex_error_set(-ERANGE, "job %s: arg %u (%s): the tensor spans %llu "
					 "bytes from byte offset %llu, its allocation holds %llu",
					 job->name, i, nm, (unsigned long long)span,
					 (unsigned long long)args[i].byte_offset,
					 (unsigned long long)size);
		/* A view: its element 0 is that far into the block. */
		r->va[i].offset += args[i].byte_offset;
		r->span[i] = span;
		for (k = 0; k < r->n_regions && r->region[k] != r->va[i].region_id; k++)
			;
		if (k == r->n_regions) {
			if (k == N_ARG_SEGMENTS)
				return flex_error_set(-E2BIG, "job %s: arg %u (%s) is in an 8th region; "
						 "a launch's tensors may span at most %u regions "
						 "(segments 0..6)", job->name, i, nm, N_ARG_SEGMENTS);
			r->region[r->n_regions++] = r->va[i].region_id;
		}
		r->seg[i] = k;
	}
	return 0;
}

/*
 * A kernel launch as a generator: tile after tile, a window at a time.
 * While the caller runs it, job and args are the caller's; once parked
 * for the worker, they point at the generator's own copies.
 */
struct launch_gen {
	struct gen g;
	const struct flex_job *job;
	const struct flex_tensor *args;
	uint32_t n_args, n_slots, step_c;
	uint64_t launch, iter;
	uint64_t window;		/* tiles per window: one upload each */
	struct flex_tiling t;
	struct resolved r;
	struct flex_cb tmpl;		/* the compute CB every tile shares */
	struct flex_vaddr arena;
	struct flex_job *own_job;
	struct flex_tensor own_args[FLEX_KERNEL_MAX_ARGS];
};

/*
 * Up to @max CBs: a window of whole tiles, their correction tensors'
 * upload first. Every window but the last has lg->window tiles, so the
 * launch's CB count is known when it is enqueued (gen.left).
 */
static int launch_next(struct gen *g, struct flex_cb *cbs, uint32_t max, uint32_t *n,
		       void **staging)
{
	struct launch_gen *lg = (struct launch_gen *)g;
	uint64_t tiles = lg->t.n_iters - lg->iter, idx[FLEX_KERNEL_MAX_AXES];
	uint64_t off[FLEX_KERNEL_MAX_ARGS], *corr = NULL, k;
	uint64_t slot_bytes = lg->n_slots * sizeof(uint64_t);
	struct flex_cb *cb = cbs;
	int first_red;

	if (tiles > lg->window)
		tiles = lg->window;
	if (tiles + (lg->n_slots != 0) > max)
		return -EINVAL;	/* window is sized for FLEX_SUBMIT_MAX_CBS */
	if (lg->n_slots) {
		corr = malloc(tiles * slot_bytes);
		if (!corr)
			return -ENOMEM;
		memset(cb, 0, sizeof(*cb));
		cb->opcode = FLEX_CB_DMA_TO_DEVICE;
		cb->user_data = ud_make(lg->launch, 1, FLEX_STEP_DMA_CORRECTION, lg->iter);
		cb->dma.host_ptr = (uint64_t)(uintptr_t)corr;
		cb->dma.dev = (struct flex_va){ lg->arena.region_id, lg->arena.offset };
		cb->dma.size = tiles * slot_bytes;
		cb++;
	}
	for (k = 0; k < tiles; k++, lg->iter++) {
		*cb = lg->tmpl;
		if (lg->n_slots) {
			flex_tiling_iter(&lg->t, &lg->job->sig, lg->args, lg->n_args, lg->iter,
					 idx, off, &first_red);
			flex_corr_build(lg->job, lg->args, lg->r.va, lg->r.seg, off, first_red,
					corr + k * lg->n_slots);
			cb->compute.segments[FLEX_SEGMENT_CORRECTION].offset =
				lg->arena.offset + k * slot_bytes;
		}
		cb->user_data = ud_make(lg->launch, lg->step_c, FLEX_STEP_COMPUTE, lg->iter);
		cb++;
	}
	*n = (uint32_t)(cb - cbs);
	*staging = corr;
	g->left -= *n;
	return 0;
}

/* The worker's copy: the job and the tensors copied, the rest as it is. */
static struct gen *launch_park(const struct gen *g)
{
	const struct launch_gen *lg = (const struct launch_gen *)g;
	const struct flex_job *j = lg->job;
	struct launch_gen *p = malloc(sizeof(*p));

	if (!p)
		return NULL;
	*p = *lg;
	if (flex_job_new_kernel(j->name, j->binary, &j->sig, j->corr, j->n_corr, j->steps,
				j->n_steps, &p->own_job)) {
		free(p);	/* out of memory: it was valid when it was made */
		return NULL;
	}
	memcpy(p->own_args, lg->args, lg->n_args * sizeof(lg->args[0]));
	p->job = p->own_job;
	p->args = p->own_args;
	return &p->g;
}

static void launch_free(struct gen *g)
{
	struct launch_gen *lg = (struct launch_gen *)g;

	flex_job_destroy(lg->own_job);
	free(lg);
}

static int launch_kernel(struct flex_stream *s, const struct flex_job *job,
			 const struct flex_tensor *args, uint32_t n_args, uint32_t flags)
{
	int allow = !(flags & FLEX_LAUNCH_NO_TILING), err;
	struct launch_gen lg;	/* the caller's; the worker gets a copy if needed */
	uint32_t k;

	if (n_args != job->sig.n_args)
		return flex_error_set(-EINVAL, "job %s: %u tensor arguments, the kernel takes %u",
				 job->name, n_args, job->sig.n_args);
	if (n_args && !args)
		return flex_error_set(-EINVAL, "job %s: NULL arguments", job->name);
	err = flex_tiling_plan(&job->sig, args, n_args, allow && s->allow_tiled, &lg.t);
	if (err)
		return flex_error_set(err, "job %s: %s%s", job->name, flex_last_error(),
				 err == -EDOM ? " (tiled launch disallowed)" : "");
	if (lg.t.n_iters > 1 && !job->n_corr)
		return flex_error_set(-EINVAL, "job %s: the shapes need %llu tiles but the job has no "
				 "correction metadata to move between them", job->name,
				 (unsigned long long)lg.t.n_iters);
	if (lg.t.n_iters > (1ULL << 29))	/* the tile field of a CB's user_data */
		return flex_error_set(-E2BIG, "job %s: %llu tiles are too many for one launch "
				 "(at most 2^29)", job->name, (unsigned long long)lg.t.n_iters);
	err = resolve_args(s, job, args, n_args, &lg.r);
	if (err)
		return err;
	lg.g = (struct gen){ .next = launch_next, .park = launch_park, .free = launch_free };
	lg.job = job;
	lg.args = args;
	lg.own_job = NULL;
	lg.n_args = n_args;
	lg.n_slots = job->n_corr;
	lg.step_c = job->n_steps - 1;	/* compute is the last step */
	lg.iter = 0;
	if (lg.n_slots) {
		/* A window: its upload and its tiles' compute CBs, in one submission. */
		lg.window = flex_corr_window_tiles(lg.n_slots * sizeof(uint64_t),
						   lg.t.n_iters < FLEX_SUBMIT_MAX_CBS ?
						   lg.t.n_iters : FLEX_SUBMIT_MAX_CBS - 1);
		lg.g.left = lg.t.n_iters + (lg.t.n_iters + lg.window - 1) / lg.window;
	} else {
		lg.window = FLEX_SUBMIT_MAX_CBS;
		lg.g.left = lg.t.n_iters;
	}
	memset(&lg.tmpl, 0, sizeof(lg.tmpl));
	lg.tmpl.opcode = FLEX_CB_COMPUTE;
	lg.tmpl.compute.program.region_id = lg.r.prog.region_id;
	lg.tmpl.compute.program.offset = lg.r.prog.offset;
	for (k = 0; k < lg.r.n_regions; k++) {
		lg.tmpl.compute.segments[k].region_id = lg.r.region[k];
		lg.tmpl.compute.segment_mask |= 1U << k;
	}

	/* Before the lock: the allocator may call back (memory pressure). */
	if (lg.n_slots) {
		err = flex_corr_arena_ensure(s, lg.window * lg.n_slots * sizeof(uint64_t));
		if (err)
			return err;
	}
	pthread_mutex_lock(&s->lock);
	if (lg.n_slots) {
		/* It only grows: this one holds a window, and is freed after the launch. */
		lg.arena = s->arena_va;
		lg.tmpl.compute.segments[FLEX_SEGMENT_CORRECTION].region_id = s->arena_va.region_id;
		lg.tmpl.compute.segment_mask |= 1U << FLEX_SEGMENT_CORRECTION;
	}
	lg.launch = flex_stream_poisoned(s) ? 0 : flex_stream_new_launch(s, job->name);
	err = flex_stream_enqueue_gen(s, &lg.g);
	/* What its CBs use, for uploads enqueued after it (overlap.c). */
	flex_overlap_note(s, lg.r.prog.region_id, lg.r.prog.offset, lg.r.prog_size, s->assigned);
	for (k = 0; k < n_args; k++)
		flex_overlap_note(s, lg.r.va[k].region_id, lg.r.va[k].offset, lg.r.span[k],
				  s->assigned);
	if (!err) {
		s->stats.jobs++;
		s->stats.tiles += lg.t.n_iters;
		s->stats.host_ops += job->n_corr ? lg.t.n_iters : 0;
		flex_stream_reap(s);
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

int flex_launch_dma_steps(struct flex_stream *s, const char *name, const struct flex_step *steps,
		     uint32_t n_steps)
{
	struct flex_alloc *a = s->ctx->alloc;
	struct flex_vaddr va[FLEX_JOB_MAX_STEPS];
	uint32_t i, n = 0;
	uint64_t size, launch;
	struct flex_cb *cbs;
	int err;

	for (i = 0; i < n_steps; i++) {
		const struct flex_step *st = &steps[i];

		if (st->kind == FLEX_STEP_HOST_OP || !st->size)
			continue;	/* a 0-byte DMA is a no-op */
		err = flex_alloc_block_resolve(a, st->index, &va[i], &size);
		if (err)
			return flex_error_set(err, "job %s: step %u (%s): allocation %llu: %s",
					 name, i, flex_step_kind_name(st->kind),
					 (unsigned long long)st->index, flex_last_error());
		if (st->offset > size || st->size > size - st->offset)
			return flex_error_set(-ERANGE, "job %s: step %u (%s): bytes %llu .. %llu leave "
					 "the allocation of %llu bytes", name, i,
					 flex_step_kind_name(st->kind),
					 (unsigned long long)st->offset,
					 (unsigned long long)(st->offset + st->size),
					 (unsigned long long)size);
	}

	pthread_mutex_lock(&s->lock);
	/* As large as a generator's window: a split DMA must not move it. */
	err = flex_stream_begin_job(s, name, FLEX_SUBMIT_MAX_CBS, &cbs, &launch);
	for (i = 0; i < n_steps && !err; i++) {
		const struct flex_step *st = &steps[i];
		struct flex_cb *cb = cbs + n;
		struct item *it;

		if (st->kind != FLEX_STEP_HOST_OP) {
			if (!st->size)
				continue;
			memset(cb, 0, sizeof(*cb));
			cb->opcode = st->kind == FLEX_STEP_DMA_TO_DEVICE ?
				     FLEX_CB_DMA_TO_DEVICE : FLEX_CB_DMA_FROM_DEVICE;
			cb->user_data = ud_make(launch, i, st->kind, 0);
			cb->dma.host_ptr = (uint64_t)(uintptr_t)st->host;
			cb->dma.dev.region_id = va[i].region_id;
			cb->dma.dev.offset = va[i].offset + st->offset;
			cb->dma.size = st->size;
			if (st->size <= FLEX_DMA_MAX_SIZE &&
			    cb->opcode == FLEX_CB_DMA_FROM_DEVICE) {
				n++;
				/* Its seqno once the batch is queued: uploads after it wait. */
				flex_overlap_note_dma(s, cb, s->assigned + n);
				continue;
			}
			/* What came before goes first, in order. */
			if (n)
				err = flex_stream_enqueue_cbs(s, cbs, n);
			n = 0;
			if (err)
				break;
			if (st->size <= FLEX_DMA_MAX_SIZE) {
				/* An upload: on the DMA queue when it can (overlap.c). */
				err = flex_stream_upload(s, cb);
				continue;
			}
			/* Beyond one CB: split (copy.c), in order on the main queue. */
			err = flex_copy_enqueue_dma(s, cb);
			flex_overlap_note_dma(s, cb, s->assigned);
			continue;
		}
		/* A host operation: what came before goes first, in order. */
		if (n)
			err = flex_stream_enqueue_cbs(s, cbs, n);
		n = 0;
		it = err ? NULL : calloc(1, sizeof(*it));
		if (!err && !it)
			err = flex_error_set(-ENOMEM, "job %s: out of memory", name);
		if (err)
			break;
		it->kind = ITEM_HOST_FN;
		it->fn = st->fn;
		it->user = st->user;
		it->user_data = ud_make(launch, i, FLEX_STEP_HOST_OP, 0);
		err = flex_stream_enqueue_item(s, it);
	}
	if (!err && n)
		err = flex_stream_enqueue_cbs(s, cbs, n);
	if (!err)
		s->stats.jobs++;
	pthread_mutex_unlock(&s->lock);
	return err;
}

FLEX_EXPORT int flex_stream_launch(struct flex_stream *s, const struct flex_job *job,
				   const struct flex_tensor *args, uint32_t n_args,
				   uint32_t flags)
{
	if (!s || !job)
		return flex_error_set(-EINVAL, "flex_stream_launch: NULL stream or job");
	if (flags & ~FLEX_LAUNCH_NO_TILING)
		return flex_error_set(-EINVAL, "job %s: unknown launch flags %#x", job->name, flags);
	if (job->is_kernel)
		return launch_kernel(s, job, args, n_args, flags);
	if (n_args)
		return flex_error_set(-EINVAL, "job %s: a DMA-only job takes no tensor arguments "
				 "(%u given)", job->name, n_args);
	return flex_launch_dma_steps(s, job->name, job->steps, job->n_steps);
}

FLEX_EXPORT int flex_stream_host_func(struct flex_stream *s, flex_host_fn fn, void *user)
{
	struct item *it;
	int err;

	if (!s || !fn)
		return flex_error_set(-EINVAL, "flex_stream_host_func: NULL stream or function");
	it = calloc(1, sizeof(*it));
	if (!it)
		return flex_error_set(-ENOMEM, "flex_stream_host_func: out of memory");
	it->kind = ITEM_HOST_FN;
	it->fn = fn;
	it->user = user;
	pthread_mutex_lock(&s->lock);
	it->user_data = ud_make(flex_stream_new_launch(s, "host_func"), 0, FLEX_STEP_HOST_OP, 0);
	err = flex_stream_enqueue_item(s, it);
	if (!err)
		s->stats.jobs++;
	pthread_mutex_unlock(&s->lock);
	return err;
}
