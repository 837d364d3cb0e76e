// SPDX-License-Identifier: GPL-2.0
/*
 * flex DMA engine: copies between pinned user pages and device memory.
 *
 * The user pages were pinned at submission; the copy happens here, a chunk
 * at a time. Each chunk holds the region's lock for reading, so the region
 * cannot be released (and its memory handed to someone else) mid-chunk,
 * while a release waits at most one chunk. Between chunks the CB checks
 * for cancellation and its time limit. Device pages are backed on first
 * write (submission already backed most of them); reading untouched device
 * memory gives zeros without backing it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sizes.h>

#include "flex_drv.h"

#define FLEX_DMA_CHUNK	SZ_1M

/* Copies [done, end) of the CB. */
static int dma_chunk(struct flex_job *job, struct flex_region *r, u64 done, u64 end)
{
	const struct flex_cb_dma *dma = &job->cb.dma;
	bool to_dev = job->cb.opcode == FLEX_CB_DMA_TO_DEVICE;
	struct flex_mem *mem = &r->fdev->mem;
	u64 dev = r->phys + dma->dev.offset;

	lockdep_assert_held_read(&r->lock);
	while (done < end) {
		size_t host = job->page_off + done;
		struct page *hpage = job->pages[host >> PAGE_SHIFT];
		size_t hoff = offset_in_page(host);
		size_t doff = offset_in_page(dev + done);
		size_t n = min3((size_t)(end - done), PAGE_SIZE - hoff,
				PAGE_SIZE - doff);
		struct page *dpage;

		if (to_dev) {
			dpage = flex_mem_page(mem, r->fn, dev + done, FLEX_GFP_ENGINE);
			if (IS_ERR(dpage))
				return flex_job_fault(job, PTR_ERR(dpage), dma->dev.region_id,
						      dma->dev.offset + done);
			memcpy_page(dpage, doff, hpage, hoff, n);
		} else {
			dpage = xa_load(&mem->pages, (dev + done - mem->base) >> PAGE_SHIFT);
			if (dpage)
				memcpy_page(hpage, hoff, dpage, doff, n);
			else
				memzero_page(hpage, hoff, n);
		}
		done += n;
	}
	return 0;
}

int flex_dma_run(struct flex_job *job)
{
	const struct flex_cb_dma *dma = &job->cb.dma;
	struct flex_region *r = job->regions[0];
	u64 done, end;
	int err = 0;

	for (done = 0; done < dma->size && !err; done = end) {
		end = min_t(u64, dma->size, done + FLEX_DMA_CHUNK);
		err = flex_job_check(job);
		if (err)
			break;
		down_read(&r->lock);
		if (READ_ONCE(r->dead))
			err = flex_job_fault(job, -ENXIO, dma->dev.region_id,
					     dma->dev.offset + done);
		else
			err = dma_chunk(job, r, done, end);
		up_read(&r->lock);
		cond_resched();
	}
	return err;
}
