// SPDX-License-Identifier: GPL-2.0
/*
 * Program correction: the HostOperation that turns a launch's resolved
 * addresses and shapes into the correction tensor, and the stream's
 * correction arena that the tensors are DMA'd to.
 *
 * A tiled launch is built a window at a time (launch.c): one DMA CB
 * uploads the correction tensors of every tile of the window, one after
 * the other, into the arena, and each tile's compute CB points its
 * segment 7 at its own tensor there. A window so costs one CB more than
 * its tiles, not twice as many.
 *
 * One arena per stream is enough: a queue runs one CB at a time, in
 * order, so window w+1's upload can only overwrite the arena after window
 * w's last compute CB (which read its tensor when it started) has
 * completed. Device copies (copy.c) use the arena the same way, for their
 * programs. Two streams have two arenas, so launches on different streams
 * never see each other's correction data. A launch that wants more room
 * than the arena has gets a new, larger one; the old one may still be
 * named by CBs in flight (or still to be built by the stream's worker,
 * which the stream's assigned seqno already counts), so it is freed only
 * when the stream's completion passes them (deferred, like the host
 * staging buffers).
 */
#include <errno.h>
#include <string.h>

#include <linux/flex_isa.h>
#include <flex/allocator.h>

#include "log.h"
#include "stream_internal.h"

/* The smallest arena: 32 slots, the correction tensor of most kernels. */
#define ARENA_MIN_BYTES	256
/*
 * The largest arena a window asks for: a window of 255 tiles of the
 * largest correction tensor (FLEX_PROG_MAX_SLOTS slots) would want 2 MiB;
 * such a window carries fewer tiles instead.
 */
#define ARENA_MAX_BYTES	(1ULL << 20)

uint64_t flex_corr_window_tiles(uint64_t slot_bytes, uint64_t want)
{
	uint64_t fit = slot_bytes ? ARENA_MAX_BYTES / slot_bytes : want;

	if (want > fit)
		want = fit;
	return want ? want : 1;
}

/*
 * Without s->lock: the allocator may call its memory-pressure callback,
 * and a callback that synchronizes this stream (an OOM handler) must find
 * the lock free. Another thread may grow the arena meanwhile: the bigger
 * arena wins and the other allocation goes back.
 */
int flex_corr_arena_ensure(struct flex_stream *s, uint64_t bytes)
{
	flex_alloc_index_t idx, old;
	struct flex_vaddr va;
	uint64_t size = ARENA_MIN_BYTES, have;
	int err;

	have = atomic_load(&s->arena_size);	/* it only grows: a stale value is smaller */
	if (bytes <= have)
		return 0;
	while (size < bytes)
		size *= 2;
	err = flex_alloc_block_alloc(s->ctx->alloc, size, FLEX_ALLOC_TENSOR, &idx);
	if (err)
		return flex_error_set(err, "stream %u: correction arena of %llu bytes: %s", s->qid,
				 (unsigned long long)size, flex_last_error());
	err = flex_alloc_block_resolve(s->ctx->alloc, idx, &va, NULL);
	if (err) {
		flex_alloc_block_free(s->ctx->alloc, idx);
		return flex_error_set(err, "stream %u: correction arena: resolve failed", s->qid);
	}
	pthread_mutex_lock(&s->lock);
	if (atomic_load(&s->arena_size) >= size) {
		pthread_mutex_unlock(&s->lock);
		flex_alloc_block_free(s->ctx->alloc, idx);	/* another thread grew it */
		return 0;
	}
	old = s->arena;
	if (old != FLEX_ALLOC_INDEX_NONE) {
		flex_stream_defer(s, NULL, old);	/* CBs in flight may still name it */
		s->stats.corr_slot_grows++;
	}
	s->arena = idx;
	s->arena_va = va;
	atomic_store(&s->arena_size, size);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void flex_corr_arena_release(struct flex_stream *s)
{
	if (s->arena != FLEX_ALLOC_INDEX_NONE)
		flex_alloc_block_free(s->ctx->alloc, s->arena);
	s->arena = FLEX_ALLOC_INDEX_NONE;
	atomic_store(&s->arena_size, 0);
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
