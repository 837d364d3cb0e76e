// SPDX-License-Identifier: GPL-2.0
/*
 * The mmap-able region area.
 *
 * A region is mapped through the offset its acquire returned (its place in
 * device memory plus FLEX_MMAP_BIAS), only by the open file that owns it,
 * only shared, and only within its bounds. Pages are inserted on fault, backing the device
 * page on first touch (flex_mem_page()).
 *
 * Every open file of a device shares one address_space (that of a private
 * pseudo-fs inode, as DRM does), so releasing a region can zap every
 * mapping of it with unmap_mapping_range(), whichever device node or fork
 * the mapping came from. The region's back_lock orders a fault against the
 * release: either the fault inserts its page before the zap, or it sees the
 * region dead and raises SIGBUS.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/fs_context.h>
#include <linux/mm.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>

#include "flex_drv.h"

static struct vfsmount *flex_fs_mnt;
static int flex_fs_cnt;

static int flex_fs_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, 0x464c4558 /* "FLEX" */) ? 0 : -ENOMEM;
}

/*
 * No .owner: the fs stays pinned from the first device's creation to the
 * last one's destruction, and a module reference held by it would keep the
 * module from ever unloading. Open files hold the module reference instead.
 */
static struct file_system_type flex_fs_type = {
	.name = "flex_mapping",
	.init_fs_context = flex_fs_init_fs_context,
	.kill_sb = kill_anon_super,
};

struct inode *flex_mapping_inode_new(void)
{
	struct inode *inode;
	int err;

	err = simple_pin_fs(&flex_fs_type, &flex_fs_mnt, &flex_fs_cnt);
	if (err)
		return ERR_PTR(err);
	inode = alloc_anon_inode(flex_fs_mnt->mnt_sb);
	if (IS_ERR(inode))
		simple_release_fs(&flex_fs_mnt, &flex_fs_cnt);
	return inode;
}

void flex_mapping_inode_put(struct inode *inode)
{
	iput(inode);
	simple_release_fs(&flex_fs_mnt, &flex_fs_cnt);
}

static void flex_vm_open(struct vm_area_struct *vma)
{
	struct flex_region *r = vma->vm_private_data;

	kobject_get(&r->kobj);
}

static void flex_vm_close(struct vm_area_struct *vma)
{
	struct flex_region *r = vma->vm_private_data;

	kobject_put(&r->kobj);
}

static vm_fault_t flex_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct flex_region *r = vma->vm_private_data;
	pgoff_t first = flex_region_mmap_offset(r) >> PAGE_SHIFT;
	u64 offset = (u64)(vmf->pgoff - first) << PAGE_SHIFT;
	struct page *page;
	vm_fault_t ret;
	int err;

	mutex_lock(&r->back_lock);
	if (r->dead || offset >= r->size) {
		ret = VM_FAULT_SIGBUS;
		goto out;
	}
	page = flex_mem_page(&r->fdev->mem, r->fn, r->phys + offset,
			     GFP_KERNEL_ACCOUNT);
	if (IS_ERR(page)) {
		ret = PTR_ERR(page) == -ENOMEM ? VM_FAULT_OOM : VM_FAULT_SIGBUS;
		goto out;
	}
	err = vm_insert_page(vma, vmf->address, page);
	/* -EBUSY: another thread of this mm mapped it first. */
	ret = err && err != -EBUSY ? vmf_error(err) : VM_FAULT_NOPAGE;
out:
	mutex_unlock(&r->back_lock);
	return ret;
}

static const struct vm_operations_struct flex_vm_ops = {
	.open = flex_vm_open,
	.close = flex_vm_close,
	.fault = flex_vm_fault,
};

int flex_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct flex_file *ff = filp->private_data;
	struct flex_device *fdev = ff->fn->fdev;
	u64 start = (u64)vma->vm_pgoff << PAGE_SHIFT;
	u64 offset = 0;
	u64 len = vma->vm_end - vma->vm_start;
	struct flex_region *r;
	int err = 0;

	/* Device memory is shared by nature: a private COW copy is not it. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	mutex_lock(&fdev->lock);
	/* A mapping may start inside a region. */
	r = flex_region_by_mmap_offset(fdev, start);
	if (r)
		offset = start - flex_region_mmap_offset(r);
	if (!r || r->owner != ff)
		err = -EACCES;	/* unknown and foreign look the same */
	else if (offset >= r->size || len > r->size - offset)
		err = -EINVAL;
	else
		kobject_get(&r->kobj);
	mutex_unlock(&fdev->lock);
	if (err)
		return err;

	vma->vm_private_data = r;
	vma->vm_ops = &flex_vm_ops;
	/*
	 * MIXEDMAP lets the fault handler vm_insert_page() refcounted pages.
	 * VM_IO: device memory. get_user_pages() refuses it, so a DMA CB
	 * cannot pin a region's backing pages, which would outlive the
	 * region's release uncounted by the backing cap.
	 */
	vma->vm_flags |= VM_MIXEDMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP;
	return 0;
}
