// SPDX-License-Identifier: GPL-2.0
/*
 * flex device memory.
 *
 * Capacity is only a number: placement of regions is a gen_pool over the
 * device's physical address range, and a host page backs a device page only
 * once something touches it. That is what lets a card of 128 GiB with
 * 12 GiB regions live in a VM of 1 GiB. Untouched memory reads as zeros;
 * backing beyond flex_params.backing_cap is refused (the access faults).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/genalloc.h>
#include <linux/highmem.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/printk.h>

#include "flex_drv.h"

/* The event allocates: never from the engines' signalling path. */
static void backing_cap_work(struct work_struct *work)
{
	flex_nl_backing_cap(container_of(work, struct flex_mem, backing_cap_work));
}

int flex_mem_init(struct flex_mem *mem, u64 capacity, u64 backing_cap)
{
	INIT_WORK(&mem->backing_cap_work, backing_cap_work);
	mem->base = FLEX_DEVMEM_BASE;
	mem->capacity = capacity;
	mem->backing_cap_pages = backing_cap >> PAGE_SHIFT;
	atomic64_set(&mem->resident_pages, 0);
	atomic64_set(&mem->used, 0);
	xa_init(&mem->pages);

	mem->pool = gen_pool_create(FLEX_REGION_ALIGN_SHIFT, NUMA_NO_NODE);
	if (!mem->pool)
		return -ENOMEM;
	if (gen_pool_add(mem->pool, mem->base, capacity, NUMA_NO_NODE)) {
		gen_pool_destroy(mem->pool);
		mem->pool = NULL;
		return -ENOMEM;
	}
	return 0;
}

void flex_mem_fini(struct flex_mem *mem)
{
	cancel_work_sync(&mem->backing_cap_work);
	/* Every region was released with its file: nothing may be left. */
	WARN_ON(!xa_empty(&mem->pages));
	xa_destroy(&mem->pages);
	gen_pool_destroy(mem->pool);
}

/* Returns the physical address of @size contiguous bytes, or 0. */
u64 flex_mem_place(struct flex_mem *mem, u64 size)
{
	u64 phys = gen_pool_alloc(mem->pool, size);

	if (phys)
		atomic64_add(size, &mem->used);
	return phys;
}

/* Gives a range back: its backing pages are freed, so it reads as zeros. */
void flex_mem_unplace(struct flex_mem *mem, struct flex_fn *fn, u64 phys, u64 size)
{
	unsigned long first = (phys - mem->base) >> PAGE_SHIFT;
	unsigned long last = first + (size >> PAGE_SHIFT) - 1;
	unsigned long idx;
	struct page *page;

	xa_for_each_range(&mem->pages, idx, page, first, last) {
		xa_erase(&mem->pages, idx);
		set_page_private(page, 0);
		put_page(page);
		atomic64_dec(&mem->resident_pages);
		atomic64_dec(&fn->resident_pages);
		clear_bit(0, &mem->backing_cap_hit);
	}
	gen_pool_free(mem->pool, phys, size);
	atomic64_sub(size, &mem->used);
}

u64 flex_mem_free_bytes(struct flex_mem *mem)
{
	return gen_pool_avail(mem->pool);
}

static void largest_in_chunk(struct gen_pool *pool, struct gen_pool_chunk *chunk,
			     void *data)
{
	unsigned long nbits = (chunk->end_addr - chunk->start_addr + 1) >>
			      pool->min_alloc_order;
	unsigned long *best = data;
	unsigned long start = 0, end;

	while (start < nbits) {
		start = find_next_zero_bit(chunk->bits, nbits, start);
		if (start >= nbits)
			break;
		end = find_next_bit(chunk->bits, nbits, start);
		if (end - start > *best)
			*best = end - start;
		start = end;
	}
}

/*
 * Free bytes and the largest region that could be placed now, as one
 * snapshot: regions come and go between the two reads (placement has no
 * lock of ours), so the largest is read first and never reported above
 * the free bytes (found by the fuzzer).
 */
void flex_mem_free_info(struct flex_mem *mem, u64 *free, u64 *largest)
{
	unsigned long best = 0;

	gen_pool_for_each_chunk(mem->pool, largest_in_chunk, &best);
	*free = gen_pool_avail(mem->pool);
	*largest = min_t(u64, (u64)best << FLEX_REGION_ALIGN_SHIFT, *free);
}

/*
 * The host page backing the device page at @phys, allocated (zeroed) on
 * first touch with @gfp: GFP_KERNEL_ACCOUNT from a task (a page fault, a
 * submission), FLEX_GFP_ENGINE from an engine, which must not wait for
 * reclaim. Called under the owning region's lock or back_lock (see
 * flex_region_back() and region_access()), which keeps the page from
 * being freed under it. The page counts against the device's backing
 * cap and the backing quota of @fn, the function owning the region.
 * Returns ERR_PTR(-ENOSPC) past either, ERR_PTR(-ENOMEM) when no page
 * could be had.
 */
struct page *flex_mem_page(struct flex_mem *mem, struct flex_fn *fn, u64 phys,
			   gfp_t gfp)
{
	unsigned long idx = (phys - mem->base) >> PAGE_SHIFT;
	struct page *page, *old;

	page = xa_load(&mem->pages, idx);
	if (page)
		return page;

	/* The device's cap first: reaching it is announced. */
	if (atomic64_inc_return(&mem->resident_pages) > mem->backing_cap_pages) {
		atomic64_dec(&mem->resident_pages);
		pr_warn_ratelimited("backing cap of %llu bytes reached\n",
				    mem->backing_cap_pages << PAGE_SHIFT);
		/* Announced once until backing is freed (flex_mem_unplace()). */
		if (!test_and_set_bit(0, &mem->backing_cap_hit))
			schedule_work(&mem->backing_cap_work);
		return ERR_PTR(-ENOSPC);
	}
	if (atomic64_inc_return(&fn->resident_pages) >
	    READ_ONCE(fn->quota_backing) >> PAGE_SHIFT) {
		atomic64_dec(&fn->resident_pages);
		atomic64_dec(&mem->resident_pages);
		return ERR_PTR(-ENOSPC);
	}
	page = alloc_page(gfp | __GFP_HIGHMEM | __GFP_ZERO | __GFP_NOWARN);
	if (!page) {
		atomic64_dec(&mem->resident_pages);
		atomic64_dec(&fn->resident_pages);
		return ERR_PTR(-ENOMEM);
	}
	set_page_private(page, FLEX_PAGE_MAGIC);
	old = xa_cmpxchg(&mem->pages, idx, NULL, page, gfp);
	if (old) {
		/* Lost a race with another toucher, or out of memory. */
		set_page_private(page, 0);
		__free_page(page);
		atomic64_dec(&mem->resident_pages);
		atomic64_dec(&fn->resident_pages);
		if (xa_is_err(old))
			return ERR_PTR(xa_err(old));
		return old;
	}
	return page;
}

/*
 * Backs every page of [phys, phys + len) before an engine writes it, so a
 * write that would pass the backing cap fails before writing anything.
 */
int flex_mem_back(struct flex_mem *mem, struct flex_fn *fn, u64 phys, u64 len,
		  gfp_t gfp)
{
	u64 end = phys + len;
	struct page *page;

	for (phys &= PAGE_MASK; phys < end; phys += PAGE_SIZE) {
		page = flex_mem_page(mem, fn, phys, gfp);
		if (IS_ERR(page))
			return PTR_ERR(page);
	}
	return 0;
}

/*
 * Whether any of @pages backs device memory: ours are neither anonymous
 * nor in a page cache, and carry FLEX_PAGE_MAGIC in page->private, which
 * is the allocating driver's to use.
 */
bool flex_mem_any_device_page(struct page **pages, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		if (!PageAnon(pages[i]) && !pages[i]->mapping &&
		    page_private(pages[i]) == FLEX_PAGE_MAGIC)
			return true;
	return false;
}

/* Bytes of [phys, phys + size) backed by host pages now. */
u64 flex_mem_resident(struct flex_mem *mem, u64 phys, u64 size)
{
	unsigned long first = (phys - mem->base) >> PAGE_SHIFT;
	unsigned long last = first + (size >> PAGE_SHIFT) - 1;
	unsigned long idx;
	struct page *page;
	u64 n = 0;

	xa_for_each_range(&mem->pages, idx, page, first, last)
		n++;
	return n << PAGE_SHIFT;
}

/*
 * Engine access to device memory, from region_access(), which holds the
 * owning region's lock for reading and has checked the range against it.
 */
int flex_mem_read(struct flex_mem *mem, u64 phys, void *buf, size_t len)
{
	while (len) {
		size_t off = offset_in_page(phys);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		struct page *page = xa_load(&mem->pages,
					    (phys - mem->base) >> PAGE_SHIFT);

		/* Untouched device memory reads as zeros, and stays unbacked. */
		if (page)
			memcpy_from_page(buf, page, off, n);
		else
			memset(buf, 0, n);
		buf += n;
		phys += n;
		len -= n;
	}
	return 0;
}

int flex_mem_write(struct flex_mem *mem, struct flex_fn *fn, u64 phys,
		   const void *buf, size_t len)
{
	while (len) {
		size_t off = offset_in_page(phys);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);
		struct page *page = flex_mem_page(mem, fn, phys, FLEX_GFP_ENGINE);

		if (IS_ERR(page))
			return PTR_ERR(page);
		memcpy_to_page(page, off, buf, n);
		buf += n;
		phys += n;
		len -= n;
	}
	return 0;
}
