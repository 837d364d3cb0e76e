// SPDX-License-Identifier: GPL-2.0
/*
 * Copies: host <-> device DMA of any size.
 *
 * One DMA CB moves at most FLEX_DMA_MAX_SIZE (256 MiB), and the driver
 * pins a DMA's host pages from its submission to its completion, at most
 * 512 MiB per open file. A larger copy is therefore a generator (stream.c)
 * of DMA_PIECE pieces, at most PIN_WINDOWS of them in flight per stream:
 * the next is submitted once the oldest has completed, so one stream never
 * has more than 256 MiB pinned for split copies, and the pinning of one
 * piece overlaps the transfer of the one before. A 0-byte copy queues
 * nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/flex.h>
#include <flex/stream.h>

#include "log.h"
#include "stream_internal.h"

#define DMA_PIECE	(FLEX_DMA_MAX_SIZE / 2)

struct dma_gen {
	struct gen g;
	struct flex_cb cb;	/* the whole copy; dma.size beyond one CB's */
	uint64_t done;
};

static int dma_next(struct gen *g, struct flex_cb *cbs, uint32_t max, uint32_t *n,
		    void **staging)
{
	struct dma_gen *dg = (struct dma_gen *)g;
	uint64_t left = dg->cb.dma.size - dg->done;

	cbs[0] = dg->cb;
	cbs[0].user_data |= (dg->done / DMA_PIECE) & ((1ULL << 29) - 1);	/* the piece */
	cbs[0].dma.host_ptr += dg->done;
	cbs[0].dma.dev.offset += dg->done;
	cbs[0].dma.size = left < DMA_PIECE ? left : DMA_PIECE;
	dg->done += cbs[0].dma.size;
	g->left--;
	*n = 1;
	*staging = NULL;
	return 0;
}

static int dma_own(struct gen *g)
{
	return 0;	/* the host buffer stays the caller's, as for any DMA */
}

static void dma_free(struct gen *g)
{
	free(g);
}

int copy_enqueue_dma(struct flex_stream *s, const struct flex_cb *cb)
{
	struct dma_gen *dg;

	if (!cb->dma.size)
		return 0;
	if (cb->dma.size <= FLEX_DMA_MAX_SIZE)
		return stream_enqueue_cbs(s, (struct flex_cb *)cb, 1);
	dg = calloc(1, sizeof(*dg));
	if (!dg)
		return error_set(-ENOMEM, "stream %u: out of memory", s->qid);
	dg->g = (struct gen){
		.left = (cb->dma.size + DMA_PIECE - 1) / DMA_PIECE,
		.pins = 1,
		.next = dma_next,
		.own = dma_own,
		.free = dma_free,
	};
	dg->cb = *cb;
	return stream_enqueue_gen(s, &dg->g);
}
