// SPDX-License-Identifier: GPL-2.0
/*
 * Program correction: the HostOperation that turns a launch's resolved
 * addresses and shapes into the correction tensor, and the stream's
 * correction slot that the tensor is DMA'd to (segment 7 of its compute
 * CBs).
 *
 * One slot per stream is enough: a queue runs one CB at a time, in order,
 * so tile i's DMA can only overwrite the slot after tile i-1's compute CB
 * (which read it when it started) has completed. Two streams have two
 * slots, so launches on different streams never see each other's
 * correction data. A job with more slots than the current slot holds gets
 * a new, larger slot; the old one may still be named by CBs in flight, so
 * it is freed only when the stream's completion passes them (deferred,
 * like the host staging buffers).
 */
#include <errno.h>
#include <string.h>

#include <linux/flex_isa.h>
#include <flex/allocator.h>

#include "log.h"
#include "stream_internal.h"

/* The smallest slot: 32 slots, the correction tensor of most kernels. */
#define SLOT_MIN_BYTES	256

/*
 * Without s->lock: the allocator may call its memory-pressure callback,
 * and a callback that synchronizes this stream (an OOM handler) must find
 * the lock free. Another thread may grow the slot meanwhile: the bigger
 * slot wins and the other allocation goes back.
 */
int flex_corr_slot_ensure(struct flex_stream *s, uint64_t bytes)
{
	flex_alloc_index_t idx, old;
	struct flex_vaddr va;
	uint64_t size = SLOT_MIN_BYTES, have;
	int err;

	have = atomic_load(&s->slot_size);	/* it only grows: a stale value is smaller */
	if (bytes <= have)
		return 0;
	while (size < bytes)
		size *= 2;
	err = flex_alloc_block_alloc(s->ctx->alloc, size, FLEX_ALLOC_TENSOR, &idx);
	if (err)
		return flex_error_set(err, "stream %u: correction slot of %llu bytes: %s", s->qid,
				 (unsigned long long)size, flex_last_error());
	err = flex_alloc_block_resolve(s->ctx->alloc, idx, &va, NULL);
	if (err) {
		flex_alloc_block_free(s->ctx->alloc, idx);
		return flex_error_set(err, "stream %u: correction slot: resolve failed", s->qid);
	}
	pthread_mutex_lock(&s->lock);
	if (atomic_load(&s->slot_size) >= size) {
		pthread_mutex_unlock(&s->lock);
		flex_alloc_block_free(s->ctx->alloc, idx);	/* another thread grew it */
		return 0;
	}
	old = s->slot;
	if (old != FLEX_ALLOC_INDEX_NONE) {
		flex_stream_defer(s, NULL, old);	/* CBs in flight may still name it */
		s->stats.corr_slot_grows++;
	}
	s->slot = idx;
	s->slot_va = va;
	atomic_store(&s->slot_size, size);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void flex_corr_slot_release(struct flex_stream *s)
{
	if (s->slot != FLEX_ALLOC_INDEX_NONE)
		flex_alloc_block_free(s->ctx->alloc, s->slot);
	s->slot = FLEX_ALLOC_INDEX_NONE;
	atomic_store(&s->slot_size, 0);
}

/*
 * The HostOperation of one tile: slot i of the correction tensor from
 * correction metadata slot i. @va and @seg_of_arg: each argument's
 * resolved address and segment; @byte_offset: its tile's offset.
 */
void flex_corr_build(const struct flex_job *job, const struct flex_tensor *args,
		const struct flex_vaddr *va, const uint32_t *seg_of_arg,
		const uint64_t *byte_offset, int first_reduction, uint64_t *out)
{
	uint32_t i;

	for (i = 0; i < job->n_corr; i++) {
		const struct flex_corr_slot *c = &job->corr[i];

		switch (c->kind) {
		case FLEX_CORR_CONST:
			out[i] = c->value;
			break;
		case FLEX_CORR_ADDRESS:
			out[i] = FLEX_ADDR(seg_of_arg[c->arg], va[c->arg].offset +
					   byte_offset[c->arg]);
			break;
		case FLEX_CORR_STRIDE:
			out[i] = args[c->arg].strides[c->dim];
			break;
		case FLEX_CORR_TILE_DIM:
			out[i] = job->sig.args[c->arg].shape[c->dim];
			break;
		case FLEX_CORR_ACCUMULATE:
			out[i] = !first_reduction;
			break;
		}
	}
}
