// SPDX-License-Identifier: GPL-2.0
/*
 * flex device node file operations: open, release and the ioctl dispatcher.
 *
 * The dispatcher copies every argument structure into the kernel before the
 * handler runs and back out after it, so no handler touches user memory and
 * none holds a lock across a user access. Structure sizes follow the rules
 * in uapi/linux/flex.h (copy_struct_from_user() semantics).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/memcontrol.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "flex_drv.h"

/* The last client id given out; ids are never reused while loaded. */
static atomic64_t flex_last_client_id = ATOMIC64_INIT(0);

static int flex_open(struct inode *inode, struct file *filp)
{
	struct flex_fn *fn = container_of(inode->i_cdev, struct flex_fn, cdev);
	struct flex_device *fdev = fn->fdev;
	struct flex_file *ff;

	ff = kzalloc(sizeof(*ff), GFP_KERNEL_ACCOUNT);
	if (!ff)
		return -ENOMEM;
	/* Complete before it is on fdev->files, where netlink reads it. */
	ff->fn = fn;
	INIT_LIST_HEAD(&ff->regions);
	flex_file_init_queues(ff);

	mutex_lock(&fdev->lock);
	if (fn->gone) {
		mutex_unlock(&fdev->lock);
		kfree(ff);
		return -ENODEV;
	}
	fn->open_count++;
	get_device(&fn->dev);
	/* Given under the lock: fdev->files stays in client id order. */
	ff->client_id = atomic64_inc_return(&flex_last_client_id);
	ff->owner_tgid = task_tgid_nr(current);
	get_task_comm(ff->owner_comm, current);
	list_add_tail(&ff->link, &fdev->files);
	mutex_unlock(&fdev->lock);

	/* Device memory the engines back for this file is charged here. */
	ff->memcg = get_mem_cgroup_from_mm(current->mm);
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
	list_del(&ff->link);
	fn->open_count--;
	mutex_unlock(&fn->fdev->lock);

	put_device(&fn->dev);
	mem_cgroup_put(ff->memcg);
	kfree(ff);
	return 0;
}

static int flex_query_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
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
	flex_mem_free_info(&fdev->mem, &q->free, &q->largest_free);
	q->region_align = FLEX_REGION_ALIGN;
	q->total_vfs = fdev->total_vfs;

	mutex_lock(&fdev->lock);
	q->table_entries = fn->table_size;
	q->table_used = fn->nr_regions;
	q->num_vfs = fdev->num_vfs;
	mutex_unlock(&fdev->lock);
	return 0;
}

struct flex_ioctl_desc {
	unsigned int cmd;
	int (*func)(struct flex_file *ff, void *data, struct flex_call *call);
};

/* FLEX_IOCTL(QUERY, f): FLEX_IOCTL_QUERY's entry, at its number. */
#define FLEX_IOCTL(name, _func)						\
	[_IOC_NR(FLEX_IOCTL_##name)] = {				\
		.cmd = FLEX_IOCTL_##name,				\
		.func = _func,						\
	}

static const struct flex_ioctl_desc flex_ioctls[] = {
	FLEX_IOCTL(QUERY, flex_query_ioctl),
	FLEX_IOCTL(REGION_ACQUIRE, flex_region_acquire_ioctl),
	FLEX_IOCTL(REGION_RELEASE, flex_region_release_ioctl),
	FLEX_IOCTL(REGION_INFO, flex_region_info_ioctl),
	FLEX_IOCTL(QUEUE_CREATE, flex_queue_create_ioctl),
	FLEX_IOCTL(QUEUE_DESTROY, flex_queue_destroy_ioctl),
	FLEX_IOCTL(QUEUE_RESET, flex_queue_reset_ioctl),
	FLEX_IOCTL(QUEUE_STATUS, flex_queue_status_ioctl),
	FLEX_IOCTL(SUBMIT, flex_submit_ioctl),
	FLEX_IOCTL(WAIT, flex_queue_wait_ioctl),
	FLEX_IOCTL(FENCE_EXPORT, flex_fence_export_ioctl),
};

/* Large enough for the largest argument structure. */
#define FLEX_IOCTL_MAX_ARG	128

static long flex_ioctl(struct file *filp, unsigned int cmd, unsigned long arg)
{
	struct flex_file *ff = filp->private_data;
	void __user *uarg = (void __user *)arg;
	const struct flex_ioctl_desc *desc;
	unsigned int nr = _IOC_NR(cmd);
	struct flex_call call = { .usize = _IOC_SIZE(cmd), .fd = -1 };
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
		err = copy_struct_from_user(kbuf, ksize, uarg, call.usize);
		if (err)
			return err;
	} else {
		memset(kbuf, 0, ksize);
	}

	err = desc->func(ff, kbuf, &call);
	if (!err && (_IOC_DIR(cmd) & _IOC_READ) &&
	    copy_to_user(uarg, kbuf, min(call.usize, ksize)))
		err = -EFAULT;

	/* A new fd goes live only once the caller has been told its number. */
	if (call.file) {
		if (err) {
			put_unused_fd(call.fd);
			fput(call.file);
		} else {
			fd_install(call.fd, call.file);
		}
	}
	return err;
}

static __poll_t flex_poll(struct file *filp, poll_table *wait)
{
	struct flex_file *ff = filp->private_data;

	poll_wait(filp, &ff->poll_wq, wait);
	return flex_queue_poll(ff);
}

/**
 * flex_file_account_engine() - account a CB's engine time to its file.
 * @ff:		the file whose queue the CB was on
 * @engine:	the engine that ran it
 * @ns:		how long it ran, in ns
 *
 * Called by the scheduler as each CB that ran completes (done or faulted,
 * not cancelled before it started), under sched_lock, on the
 * fence-signalling path: it only adds. The function's totals move with
 * the file's, and outlive it.
 */
void flex_file_account_engine(struct flex_file *ff, enum flex_engine_id engine,
			      u64 ns)
{
	struct flex_fn *fn = ff->fn;

	lockdep_assert_held(&fn->fdev->sched_lock);
	if (WARN_ON_ONCE(engine >= FLEX_NR_ENGINES))
		return;
	ff->engine_ns[engine] += ns;
	ff->engine_cbs[engine]++;
	fn->engine_ns[engine] += ns;
	fn->engine_cbs[engine]++;
}

/**
 * flex_file_get_usage() - an open file's usage, for fdinfo and netlink.
 * @ff:		the file; alive (fdinfo holds it open; netlink finds it on
 *		fdev->files under fdev->lock)
 * @u:		filled in
 *
 * The caller holds fdev->lock (the file's region list); the queues are read
 * under the file's queue xa_lock and sched_lock, in the driver's order.
 * The queue counters cover the queues the file has now.
 */
void flex_file_get_usage(struct flex_file *ff, struct flex_file_usage *u)
{
	struct flex_device *fdev = ff->fn->fdev;
	struct flex_region *r;
	struct flex_queue *q;
	unsigned long id;
	int e;

	lockdep_assert_held(&fdev->lock);
	memset(u, 0, sizeof(*u));
	list_for_each_entry(r, &ff->regions, file_link) {
		u->regions++;
		u->bytes += r->size;
		u->resident += flex_mem_resident(&fdev->mem, r->phys, r->size);
	}
	u->pinned = (u64)atomic64_read(&ff->pinned_pages) << PAGE_SHIFT;

	xa_lock(&ff->queues);
	spin_lock(&fdev->sched_lock);
	xa_for_each(&ff->queues, id, q) {
		u->queues++;
		u->pending += q->nr_jobs;
		u->submitted += q->submitted;
		u->completed += q->completed;
		u->faults += q->stat_faults;
	}
	for (e = 0; e < FLEX_NR_ENGINES; e++) {
		u->engine_ns[e] = ff->engine_ns[e];
		u->engine_cbs[e] = ff->engine_cbs[e];
	}
	spin_unlock(&fdev->sched_lock);
	xa_unlock(&ff->queues);
}

/*
 * fdinfo: the open file's own usage, for its owner (netlink and sysfs
 * show per-tenant detail to admins only). Keys follow the DRM usage-stats
 * style (drm-usage-stats.rst) under a flex- prefix; see
 * Documentation/flex/uapi.rst. New keys are only ever added.
 */
static void flex_show_fdinfo(struct seq_file *m, struct file *filp)
{
	struct flex_file *ff = filp->private_data;
	struct flex_device *fdev = ff->fn->fdev;
	struct flex_file_usage u;

	mutex_lock(&fdev->lock);
	flex_file_get_usage(ff, &u);
	mutex_unlock(&fdev->lock);

	seq_printf(m, "flex-driver:\t%s\n", FLEX_DRV_NAME);
	seq_printf(m, "flex-device:\tflex%u\n", fdev->index);
	seq_printf(m, "flex-function:\t%s\n", ff->fn->name);
	seq_printf(m, "flex-regions:\t%u\n", u.regions);
	seq_printf(m, "flex-memory-regions:\t%llu KiB\n", u.bytes >> 10);
	seq_printf(m, "flex-memory-resident:\t%llu KiB\n", u.resident >> 10);
	seq_printf(m, "flex-queues:\t%u\n", u.queues);
	seq_printf(m, "flex-cbs-submitted:\t%llu\n", u.submitted);
	seq_printf(m, "flex-cbs-completed:\t%llu\n", u.completed);
	seq_printf(m, "flex-faults:\t%llu\n", u.faults);
	seq_printf(m, "flex-pinned:\t%llu KiB\n", u.pinned >> 10);
	seq_printf(m, "flex-client-id:\t%llu\n", ff->client_id);
	seq_printf(m, "flex-cbs-pending:\t%u\n", u.pending);
	seq_printf(m, "flex-engine-dma:\t%llu ns\n", u.engine_ns[FLEX_ENGINE_DMA]);
	seq_printf(m, "flex-engine-compute:\t%llu ns\n",
		   u.engine_ns[FLEX_ENGINE_COMPUTE]);
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
	.show_fdinfo = flex_show_fdinfo,
};
