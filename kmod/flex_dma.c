// SPDX-License-Identifier: GPL-2.0
/*
 * flex DMA engine: copies between pinned user pages and device memory.
 *
 * The user pages were pinned at submission; the copy happens here, page by
 * page, with the region's lock held for reading so the region cannot be
 * released (and its memory handed to someone else) mid-transfer. Device
 * pages are backed on first write; reading untouched device memory gives
 * zeros without backing it.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched.h>

#include "flex_drv.h"

int flex_dma_run(struct flex_job *job)
{
	const struct flex_cb_dma *dma = &job->cb.dma;
	bool to_dev = job->cb.opcode == FLEX_CB_DMA_TO_DEVICE;
	struct flex_region *r = job->regions[0];
	struct flex_mem *mem = &r->fdev->mem;
	u64 done = 0, dev;
	int err = 0;

	down_read(&r->lock);
	if (r->dead) {
		err = flex_job_fault(job, -ENXIO, dma->dev.region_id, dma->dev.offset);
		goto out;
	}
	dev = r->phys + dma->dev.offset;
	while (done < dma->size) {
		size_t host = job->page_off + done;
		struct page *hpage = job->pages[host >> PAGE_SHIFT];
		size_t hoff = offset_in_page(host);
		size_t doff = offset_in_page(dev + done);
		size_t n = min3((size_t)(dma->size - done), PAGE_SIZE - hoff,
				PAGE_SIZE - doff);
		struct page *dpage;

		if (to_dev) {
			dpage = flex_mem_page(mem, dev + done);
			if (IS_ERR(dpage)) {
				err = flex_job_fault(job, PTR_ERR(dpage), dma->dev.region_id,
						     dma->dev.offset + done);
				break;
			}
			memcpy_page(dpage, doff, hpage, hoff, n);
		} else {
			dpage = xa_load(&mem->pages, (dev + done - mem->base) >> PAGE_SHIFT);
			if (dpage)
				memcpy_page(hpage, hoff, dpage, doff, n);
			else
				memzero_page(hpage, hoff, n);
		}
		done += n;
		if (!(done & ((1 << 20) - 1)))
			cond_resched();
	}
out:
	up_read(&r->lock);
	return err;
}
