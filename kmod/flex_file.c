// SPDX-License-Identifier: GPL-2.0
/*
 * flex device node file operations: open, release and the ioctl dispatcher.
 *
 * The dispatcher copies every argument structure into the kernel before the
 * handler runs and back out after it, so no handler touches user memory and
 * none holds a lock across a user access. Structure sizes follow the rules
 * in uapi/linux/flex.h (copy_struct_from_user() semantics).
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "flex_drv.h"

static int flex_open(struct inode *inode, struct file *filp)
{
	struct flex_fn *fn = container_of(inode->i_cdev, struct flex_fn, cdev);
	struct flex_device *fdev = fn->fdev;
	struct flex_file *ff;

	ff = kzalloc(sizeof(*ff), GFP_KERNEL);
	if (!ff)
		return -ENOMEM;

	mutex_lock(&fdev->lock);
	if (fn->gone) {
		mutex_unlock(&fdev->lock);
		kfree(ff);
		return -ENODEV;
	}
	fn->open_count++;
	get_device(&fn->dev);
	mutex_unlock(&fdev->lock);

	ff->fn = fn;
	INIT_LIST_HEAD(&ff->regions);
	flex_file_init_queues(ff);
	filp->private_data = ff;
	filp->f_mapping = fdev->inode->i_mapping;
	return nonseekable_open(inode, filp);
}

static int flex_release(struct inode *inode, struct file *filp)
{
	struct flex_file *ff = filp->private_data;
	struct flex_fn *fn = ff->fn;

	/* Queues first: their CBs hold references to the regions. */
	flex_file_release_queues(ff);
	flex_file_release_regions(ff);

	mutex_lock(&fn->fdev->lock);
	fn->open_count--;
	mutex_unlock(&fn->fdev->lock);

	put_device(&fn->dev);
	kfree(ff);
	return 0;
}

static int flex_ioctl_query(struct flex_file *ff, void *data)
{
	struct flex_query *q = data;
	struct flex_fn *fn = ff->fn;
	struct flex_device *fdev = fn->fdev;

	if (q->flags)
		return -EINVAL;

	memset(q, 0, sizeof(*q));
	q->uapi_major = FLEX_UAPI_MAJOR;
	q->uapi_minor = FLEX_UAPI_MINOR;
	q->mode = fn->is_vf ? FLEX_MODE_VF : FLEX_MODE_PF;
	q->device_index = fdev->index;
	q->vf_index = fn->vf_index;
	q->capabilities = FLEX_CAP_SPARSE_MEMORY | FLEX_CAP_MMAP | FLEX_CAP_QUEUES;
	if (!fn->is_vf && fdev->total_vfs)
		q->capabilities |= FLEX_CAP_SRIOV;
	q->capacity = fdev->mem.capacity;
	q->free = flex_mem_free_bytes(&fdev->mem);
	q->largest_free = flex_mem_largest_free(&fdev->mem);
	q->region_align = FLEX_REGION_ALIGN;
	q->total_vfs = fdev->total_vfs;

	mutex_lock(&fdev->lock);
	q->table_entries = fn->table_size;
	q->table_used = fn->nr_regions;
	q->num_vfs = fdev->num_vfs;
	mutex_unlock(&fdev->lock);
	return 0;
}

#define FLEX_IOCTL_FWD(name, fn, type)					\
	static int name(struct flex_file *ff, void *data)		\
	{								\
		return fn(ff, (type *)data);				\
	}

FLEX_IOCTL_FWD(flex_ioctl_region_acquire, flex_region_acquire, struct flex_region_acquire)
FLEX_IOCTL_FWD(flex_ioctl_region_release, flex_region_release, struct flex_region_release)
FLEX_IOCTL_FWD(flex_ioctl_region_info, flex_region_info, struct flex_region_info)
FLEX_IOCTL_FWD(flex_ioctl_queue_create, flex_queue_create, struct flex_queue_create)
FLEX_IOCTL_FWD(flex_ioctl_queue_destroy, flex_queue_destroy, struct flex_queue_op)
FLEX_IOCTL_FWD(flex_ioctl_queue_reset, flex_queue_reset, struct flex_queue_op)
FLEX_IOCTL_FWD(flex_ioctl_queue_status, flex_queue_status, struct flex_queue_status)
FLEX_IOCTL_FWD(flex_ioctl_submit, flex_submit, struct flex_submit)
FLEX_IOCTL_FWD(flex_ioctl_wait, flex_queue_wait, struct flex_wait)
FLEX_IOCTL_FWD(flex_ioctl_fence_export, flex_fence_export, struct flex_fence_export)

struct flex_ioctl_desc {
	unsigned int cmd;
	int (*func)(struct flex_file *ff, void *data);
};

#define FLEX_IOCTL(ioctl, _func) [_IOC_NR(ioctl)] = { .cmd = ioctl, .func = _func }

static const struct flex_ioctl_desc flex_ioctls[] = {
	FLEX_IOCTL(FLEX_IOCTL_QUERY, flex_ioctl_query),
	FLEX_IOCTL(FLEX_IOCTL_REGION_ACQUIRE, flex_ioctl_region_acquire),
	FLEX_IOCTL(FLEX_IOCTL_REGION_RELEASE, flex_ioctl_region_release),
	FLEX_IOCTL(FLEX_IOCTL_REGION_INFO, flex_ioctl_region_info),
	FLEX_IOCTL(FLEX_IOCTL_QUEUE_CREATE, flex_ioctl_queue_create),
	FLEX_IOCTL(FLEX_IOCTL_QUEUE_DESTROY, flex_ioctl_queue_destroy),
	FLEX_IOCTL(FLEX_IOCTL_QUEUE_RESET, flex_ioctl_queue_reset),
	FLEX_IOCTL(FLEX_IOCTL_QUEUE_STATUS, flex_ioctl_queue_status),
	FLEX_IOCTL(FLEX_IOCTL_SUBMIT, flex_ioctl_submit),
	FLEX_IOCTL(FLEX_IOCTL_WAIT, flex_ioctl_wait),
	FLEX_IOCTL(FLEX_IOCTL_FENCE_EXPORT, flex_ioctl_fence_export),
};

/* Large enough for the largest argument structure. */
#define FLEX_IOCTL_MAX_ARG	128

static long flex_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct flex_file *ff = filp->private_data;
	void __user *uarg = (void __user *)arg;
	const struct flex_ioctl_desc *desc;
	unsigned int nr = _IOC_NR(cmd);
	size_t usize = _IOC_SIZE(cmd);
	size_t ksize;
	u64 kbuf[FLEX_IOCTL_MAX_ARG / sizeof(u64)];
	int err;

	if (_IOC_TYPE(cmd) != FLEX_IOCTL_BASE || nr >= ARRAY_SIZE(flex_ioctls))
		return -ENOTTY;
	desc = &flex_ioctls[nr];
	if (!desc->func || _IOC_DIR(cmd) != _IOC_DIR(desc->cmd))
		return -ENOTTY;
	ksize = _IOC_SIZE(desc->cmd);
	if (WARN_ON_ONCE(ksize > sizeof(kbuf)))
		return -ENOTTY;

	if (_IOC_DIR(cmd) & _IOC_WRITE) {
		err = copy_struct_from_user(kbuf, ksize, uarg, usize);
		if (err)
			return err;
	} else {
		memset(kbuf, 0, ksize);
	}

	err = desc->func(ff, kbuf);
	if (err)
		return err;

	if ((_IOC_DIR(cmd) & _IOC_READ) &&
	    copy_to_user(uarg, kbuf, min(usize, ksize)))
		return -EFAULT;
	return 0;
}

static __poll_t flex_poll(struct file *filp, poll_table *wait)
{
	struct flex_file *ff = filp->private_data;

	poll_wait(filp, &ff->poll_wq, wait);
	return flex_queue_poll(ff);
}

const struct file_operations flex_fops = {
	.owner = THIS_MODULE,
	.open = flex_open,
	.release = flex_release,
	.unlocked_ioctl = flex_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = flex_mmap,
	.poll = flex_poll,
	.llseek = no_llseek,
};
