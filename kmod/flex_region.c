// SPDX-License-Identifier: GPL-2.0
/*
 * flex regions and lookup tables.
 *
 * A region is a contiguous range of device memory that one open file holds.
 * On a VF the function's lookup table maps it, and the table index is the
 * region_id userspace puts in VirtualAddresses; the table has a fixed number
 * of entries (flex_params.lut_entries) shared by every opener of the VF. On
 * the PF the region_id is the physical address, and the table is an index
 * from address to region, capped at flex_params.pf_max_regions.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "flex_drv.h"

static unsigned long pf_table_key(const struct flex_device *fdev, u64 phys)
{
	return (phys - fdev->mem.base) >> FLEX_REGION_ALIGN_SHIFT;
}

/* The region whose mapping covers mmap offset @offset (in bytes), or NULL. */
struct flex_region *flex_region_by_mmap_offset(struct flex_device *fdev, u64 offset)
{
	lockdep_assert_held(&fdev->lock);
	return mtree_load(&fdev->by_offset, offset);
}

struct flex_region *flex_fn_lookup(struct flex_fn *fn, u64 region_id)
{
	struct flex_mem *mem = &fn->fdev->mem;

	lockdep_assert_held(&fn->fdev->lock);
	if (fn->is_vf)
		return region_id < fn->table_size ?
			xa_load(&fn->table, region_id) : NULL;

	if (region_id < mem->base || region_id - mem->base >= mem->capacity ||
	    region_id & (FLEX_REGION_ALIGN - 1))
		return NULL;
	return xa_load(&fn->table, pf_table_key(fn->fdev, region_id));
}

/* Lookup restricted to the regions of one open file. */
static struct flex_region *file_lookup(struct flex_file *ff, u64 region_id)
{
	struct flex_region *r = flex_fn_lookup(ff->fn, region_id);

	return r && r->owner == ff ? r : NULL;
}

static int table_insert(struct flex_fn *fn, struct flex_region *r)
{
	u32 idx;
	int err;

	if (fn->nr_regions >= fn->table_size)
		return -ENOSPC;

	if (fn->is_vf) {
		/* Lowest free entry, so a freed entry is the next one used. */
		err = xa_alloc(&fn->table, &idx, r,
			       XA_LIMIT(0, fn->table_size - 1), GFP_KERNEL);
		if (err)
			return err == -EBUSY ? -ENOSPC : err;
		r->lut_index = idx;
		r->region_id = idx;
	} else {
		err = xa_insert(&fn->table, pf_table_key(fn->fdev, r->phys), r,
				GFP_KERNEL);
		if (err)
			return err;
		r->lut_index = FLEX_NO_LUT_INDEX;
		r->region_id = r->phys;
	}
	fn->nr_regions++;
	return 0;
}

static void table_remove(struct flex_fn *fn, struct flex_region *r)
{
	xa_erase(&fn->table, fn->is_vf ? r->lut_index :
		 pf_table_key(fn->fdev, r->phys));
	fn->nr_regions--;
}

/*
 * Tearing a region down takes two steps. region_unpublish(), under
 * fdev->lock: out of the table and every lookup, so no ioctl, mmap() or
 * netlink request finds it again. region_finish(), with no device-wide
 * lock held: dead for page faults (back_lock) and for the engines (lock;
 * taking it for writing waits for an engine's current chunk, never with
 * fdev->lock held), out of every mapping, its memory given back, out of
 * sysfs. The struct goes with the last reference (a mapping or a queued CB
 * may hold one).
 */
static void region_unpublish(struct flex_region *r)
{
	struct flex_device *fdev = r->fdev;

	lockdep_assert_held(&fdev->lock);
	flex_nl_region_event(r, false);	/* still as it was */
	table_remove(r->fn, r);
	r->fn->used -= r->size;
	xa_erase(&fdev->regions, r->handle);
	mtree_erase(&fdev->by_offset, flex_region_mmap_offset(r));
	list_del_init(&r->file_link);
}

static void region_finish(struct flex_region *r)
{
	struct flex_device *fdev = r->fdev;

	mutex_lock(&r->back_lock);
	WRITE_ONCE(r->dead, true);
	mutex_unlock(&r->back_lock);
	/* An engine inside a chunk finishes it; later chunks see dead. */
	down_write(&r->lock);
	up_write(&r->lock);
	unmap_mapping_range(fdev->inode->i_mapping, flex_region_mmap_offset(r),
			    r->size, 1);

	flex_mem_unplace(&fdev->mem, r->fn, r->phys, r->size);
	kobject_del(&r->kobj);
	kobject_put(&r->kobj);
}

int flex_region_acquire_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_region_acquire *args = data;
	struct flex_fn *fn = ff->fn;
	struct flex_device *fdev = fn->fdev;
	struct flex_region *r;
	u64 quota;
	int err;

	if (args->flags || args->pad || args->pad2)
		return -EINVAL;
	if (!args->size || args->size & (FLEX_REGION_ALIGN - 1))
		return -EINVAL;
	if (args->size > fdev->mem.capacity)
		return -E2BIG;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	kobject_init(&r->kobj, &flex_region_ktype);
	init_rwsem(&r->lock);
	mutex_init(&r->back_lock);
	INIT_LIST_HEAD(&r->file_link);
	r->fdev = fdev;
	r->fn = fn;
	r->owner = ff;
	r->size = args->size;
	r->owner_tgid = task_tgid_nr(current);
	get_task_comm(r->owner_comm, current);

	mutex_lock(&fdev->lock);
	if (fn->nr_regions >= fn->table_size) {
		err = -ENOSPC;
		goto err_unlock;
	}
	/* A quota below the capacity is the admin's; the capacity is -ENOMEM's. */
	quota = READ_ONCE(fn->quota_capacity);
	if (quota < fdev->mem.capacity && r->size > quota - min(fn->used, quota)) {
		err = -EDQUOT;
		goto err_unlock;
	}
	r->phys = flex_mem_place(&fdev->mem, r->size);
	if (!r->phys) {
		err = -ENOMEM;
		goto err_unlock;
	}
	err = table_insert(fn, r);
	if (err)
		goto err_unplace;
	err = xa_alloc_cyclic(&fdev->regions, &r->handle, r,
			      XA_LIMIT(1, FLEX_MAX_HANDLE), &fdev->next_handle,
			      GFP_KERNEL);
	if (err < 0)
		goto err_untable;
	err = mtree_insert_range(&fdev->by_offset, flex_region_mmap_offset(r),
				 flex_region_mmap_offset(r) + r->size - 1, r, GFP_KERNEL);
	if (err)
		goto err_unhandle;
	err = kobject_add(&r->kobj, fdev->regions_kobj, "%u", r->handle);
	if (err)
		goto err_unoffset;
	list_add_tail(&r->file_link, &ff->regions);
	fn->used += r->size;
	flex_nl_region_event(r, true);
	/* Once the lock is dropped another thread may release the region. */
	args->region_id = r->region_id;
	args->mmap_offset = flex_region_mmap_offset(r);
	args->handle = r->handle;
	args->lut_index = r->lut_index;
	mutex_unlock(&fdev->lock);
	return 0;

err_unoffset:
	mtree_erase(&fdev->by_offset, flex_region_mmap_offset(r));
err_unhandle:
	xa_erase(&fdev->regions, r->handle);
err_untable:
	table_remove(fn, r);
err_unplace:
	flex_mem_unplace(&fdev->mem, r->fn, r->phys, r->size);
err_unlock:
	mutex_unlock(&fdev->lock);
	kobject_put(&r->kobj);
	return err;
}

int flex_region_release_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_region_release *args = data;
	struct flex_device *fdev = ff->fn->fdev;
	struct flex_region *r;

	if (args->flags || args->pad)
		return -EINVAL;

	mutex_lock(&fdev->lock);
	r = file_lookup(ff, args->region_id);
	if (r)
		region_unpublish(r);
	mutex_unlock(&fdev->lock);
	if (!r)
		return -ENOENT;
	region_finish(r);
	return 0;
}

int flex_region_info_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_region_info *args = data;
	struct flex_device *fdev = ff->fn->fdev;
	struct flex_region *r;
	int err = 0;

	if (args->flags || args->pad || args->pad2)
		return -EINVAL;

	mutex_lock(&fdev->lock);
	r = file_lookup(ff, args->region_id);
	if (r) {
		args->size = r->size;
		args->mmap_offset = flex_region_mmap_offset(r);
		args->handle = r->handle;
		args->lut_index = r->lut_index;
		args->resident = flex_mem_resident(&fdev->mem, r->phys, r->size);
	} else {
		err = -ENOENT;
	}
	mutex_unlock(&fdev->lock);
	return err;
}

/* The file is closing (also when its process was killed). */
void flex_file_release_regions(struct flex_file *ff)
{
	struct flex_device *fdev = ff->fn->fdev;
	struct flex_region *r, *tmp;
	LIST_HEAD(gone);

	mutex_lock(&fdev->lock);
	list_for_each_entry_safe(r, tmp, &ff->regions, file_link) {
		region_unpublish(r);
		list_add_tail(&r->file_link, &gone);
	}
	mutex_unlock(&fdev->lock);

	list_for_each_entry_safe(r, tmp, &gone, file_link) {
		list_del_init(&r->file_link);
		region_finish(r);
	}
}

/*
 * A reference to one of the file's regions, for work queued on the device:
 * the region may be released meanwhile, which the engines see as dead.
 */
struct flex_region *flex_file_region_get(struct flex_file *ff, u64 region_id)
{
	struct flex_device *fdev = ff->fn->fdev;
	struct flex_region *r;

	mutex_lock(&fdev->lock);
	r = file_lookup(ff, region_id);
	if (r)
		kobject_get(&r->kobj);
	mutex_unlock(&fdev->lock);
	return r;
}

void flex_region_put(struct flex_region *r)
{
	if (r)
		kobject_put(&r->kobj);
}

/*
 * Engine access to a region: -ENXIO once it was released, -ERANGE outside
 * it, -ENOSPC past the backing cap.
 */
static int region_access(struct flex_region *r, u64 offset, void *buf,
			 size_t len, bool write)
{
	int err;

	if (offset > r->size || len > r->size - offset)
		return -ERANGE;
	down_read(&r->lock);
	if (READ_ONCE(r->dead))
		err = -ENXIO;
	else if (write)
		err = flex_mem_write(&r->fdev->mem, r->fn, r->phys + offset, buf, len);
	else
		err = flex_mem_read(&r->fdev->mem, r->phys + offset, buf, len);
	up_read(&r->lock);
	return err;
}

/*
 * Backs [offset, offset + len) of the region before it is written: from a
 * task (a submission) with GFP_KERNEL_ACCOUNT under back_lock, from an
 * engine (before an instruction writes its output, so that a write past
 * the backing cap writes nothing) with FLEX_GFP_ENGINE under lock.
 * -ENXIO once the region is dead, -ERANGE outside it.
 */
int flex_region_back(struct flex_region *r, u64 offset, u64 len, bool engine)
{
	struct flex_mem *mem = &r->fdev->mem;
	int err = -ENXIO;

	if (offset > r->size || len > r->size - offset)
		return -ERANGE;
	if (engine) {
		down_read(&r->lock);
		if (!READ_ONCE(r->dead))
			err = flex_mem_back(mem, r->fn, r->phys + offset, len,
					    FLEX_GFP_ENGINE);
		up_read(&r->lock);
	} else {
		/* Best effort: a memory cgroup at its limit fails it, no OOM kill. */
		mutex_lock(&r->back_lock);
		if (!r->dead)
			err = flex_mem_back(mem, r->fn, r->phys + offset, len,
					    GFP_KERNEL_ACCOUNT | __GFP_NORETRY);
		mutex_unlock(&r->back_lock);
	}
	return err;
}

int flex_region_read(struct flex_region *r, u64 offset, void *buf, size_t len)
{
	return region_access(r, offset, buf, len, false);
}

int flex_region_write(struct flex_region *r, u64 offset, const void *buf, size_t len)
{
	return region_access(r, offset, (void *)buf, len, true);
}
