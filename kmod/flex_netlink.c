// SPDX-License-Identifier: GPL-2.0
/*
 * flex generic netlink family: a read-only view of the devices, regions,
 * queues, lookup tables and open files, and a multicast group of events. The uapi is
 * uapi/linux/flex_netlink.h; Documentation/flex/netlink.rst describes it.
 *
 * Locking. flex_nl_lock guards the list of devices the family shows; a
 * request holds it while it looks at a device, so a device is not destroyed
 * under it (flex_nl_device_remove() takes it). A doit gets its device from
 * flex_nl_pre_doit(), which takes the lock and resolves FLEX_A_DEVICE_INDEX
 * into info->user_ptr[0], and flex_nl_post_doit() drops it; a dumpit takes
 * it itself. Below it, each object is read under the driver's own lock for
 * it, in the driver's order:
 *
 *	flex_nl_lock -> flex_device.lock		devices, regions, tables
 *	flex_nl_lock -> flex_device.queues' xa_lock -> sched_lock	queues
 *	flex_nl_lock -> flex_device.lock -> flex_device.queues' xa_lock
 *		-> sched_lock				a device's functions
 *	flex_nl_lock -> flex_device.lock -> flex_file.queues' xa_lock
 *		-> sched_lock				open files
 *
 * An open file is kept alive by being on flex_device.files, which its
 * release leaves under flex_device.lock before freeing it.
 *
 * A queue is kept alive by being in flex_device.queues: queue_teardown()
 * erases it (under that xa_lock) before its last reference can go.
 *
 * Events are sent from where things happen, only when someone listens to
 * the group (genl_has_listeners()), always from process context that may
 * sleep, so with GFP_KERNEL: region events under flex_device.lock (as the
 * table changes; devlink notifies under its lock the same way), queue faults
 * from the engine's work item with no lock held once the faulting CB's
 * fence has signalled (never on the signalling path), VF events under
 * sriov_lock, backing-cap events from a work item (flex_mem.c). Sending
 * takes no driver lock, so none of these adds a lock order beyond "driver
 * lock -> netlink internals".
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/genetlink.h>
#include <net/net_namespace.h>

#include <linux/flex_netlink.h>

#include "flex_drv.h"

enum flex_nl_mcgrp {
	FLEX_NL_MCGRP_EVENTS,
};

static DEFINE_MUTEX(flex_nl_lock);
static struct flex_device *flex_nl_devs[FLEX_MAX_DEVICES];
static struct genl_family flex_nl_family;

static u32 fn_number(const struct flex_fn *fn)
{
	return fn->is_vf ? FLEX_NL_FN_VF(fn->vf_index) : FLEX_NL_FN_PF;
}

/* The function with number @nr, or NULL. */
static struct flex_fn *fn_by_number(struct flex_device *fdev, u32 nr)
{
	lockdep_assert_held(&fdev->lock);
	if (nr == FLEX_NL_FN_PF)
		return fdev->pf;
	if (nr - 1 < fdev->num_vfs)
		return fdev->vfs[nr - 1];
	return NULL;
}

static struct flex_device *dev_by_index(u32 index)
{
	lockdep_assert_held(&flex_nl_lock);
	return index < FLEX_MAX_DEVICES ? flex_nl_devs[index] : NULL;
}

/* ---- filling messages ---- */

/* A function's usage figures, read under sched_lock. */
struct fn_stats {
	u32 queues;
	u32 pending;
	u64 engine_ns[FLEX_NR_ENGINES];
	u64 engine_cbs[FLEX_NR_ENGINES];
};

/*
 * The usage of every function of @fdev, in @st indexed by function number
 * (FLEX_MAX_VFS + 1 entries): its
 * queues from fdev->queues, its engine counters. One pass under the
 * queues' xa_lock and sched_lock, so the figures are one snapshot.
 */
static void get_fn_stats(struct flex_device *fdev, struct fn_stats *st)
{
	struct flex_queue *q;
	unsigned long handle;
	unsigned int i;
	u32 nr;
	int e;

	lockdep_assert_held(&fdev->lock);
	memset(st, 0, sizeof(*st) * (FLEX_MAX_VFS + 1));
	xa_lock(&fdev->queues);
	spin_lock(&fdev->sched_lock);
	xa_for_each(&fdev->queues, handle, q) {
		nr = fn_number(q->ff->fn);
		if (WARN_ON_ONCE(nr > FLEX_MAX_VFS))
			continue;
		st[nr].queues++;
		st[nr].pending += q->nr_jobs;
	}
	for (i = 0; i <= fdev->num_vfs; i++) {
		struct flex_fn *fn = i ? fdev->vfs[i - 1] : fdev->pf;

		for (e = 0; e < FLEX_NR_ENGINES; e++) {
			st[i].engine_ns[e] = fn->engine_ns[e];
			st[i].engine_cbs[e] = fn->engine_cbs[e];
		}
	}
	spin_unlock(&fdev->sched_lock);
	xa_unlock(&fdev->queues);
}

static int fill_fn(struct sk_buff *skb, struct flex_fn *fn,
		   const struct fn_stats *st)
{
	struct nlattr *nest;

	lockdep_assert_held(&fn->fdev->lock);
	nest = nla_nest_start(skb, FLEX_DEV_A_FN);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, FLEX_FN_A_FN, fn_number(fn)) ||
	    nla_put_string(skb, FLEX_FN_A_NAME, dev_name(&fn->dev)) ||
	    nla_put_u32(skb, FLEX_FN_A_TABLE_SIZE, fn->table_size) ||
	    nla_put_u32(skb, FLEX_FN_A_TABLE_USED, fn->nr_regions) ||
	    nla_put_u32(skb, FLEX_FN_A_OPEN_COUNT, fn->open_count) ||
	    nla_put_u64_64bit(skb, FLEX_FN_A_USED, fn->used, FLEX_FN_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FN_A_RESIDENT,
			      (u64)atomic64_read(&fn->resident_pages) << PAGE_SHIFT,
			      FLEX_FN_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FN_A_QUOTA_CAPACITY,
			      READ_ONCE(fn->quota_capacity), FLEX_FN_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FN_A_QUOTA_BACKING,
			      READ_ONCE(fn->quota_backing), FLEX_FN_A_PAD) ||
	    nla_put_u32(skb, FLEX_FN_A_QUEUES, st->queues) ||
	    nla_put_u32(skb, FLEX_FN_A_PENDING, st->pending) ||
	    nla_put_u64_64bit(skb, FLEX_FN_A_ENGINE_DMA_NS,
			      st->engine_ns[FLEX_ENGINE_DMA], FLEX_FN_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FN_A_ENGINE_COMPUTE_NS,
			      st->engine_ns[FLEX_ENGINE_COMPUTE], FLEX_FN_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FN_A_ENGINE_DMA_CBS,
			      st->engine_cbs[FLEX_ENGINE_DMA], FLEX_FN_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FN_A_ENGINE_COMPUTE_CBS,
			      st->engine_cbs[FLEX_ENGINE_COMPUTE], FLEX_FN_A_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* The whole device. Takes fdev->lock for its functions. */
static int fill_device(struct sk_buff *skb, struct flex_device *fdev)
{
	struct flex_mem *mem = &fdev->mem;
	struct fn_stats *st;
	struct nlattr *nest;
	unsigned int i;
	int err = -EMSGSIZE;
	u64 free, largest;

	flex_mem_free_info(mem, &free, &largest);
	if (nla_put_u32(skb, FLEX_A_DEVICE_INDEX, fdev->index))
		return -EMSGSIZE;
	/* Too large for the stack; allocated before any lock is taken. */
	st = kcalloc(FLEX_MAX_VFS + 1, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	nest = nla_nest_start(skb, FLEX_A_DEVICE);
	if (!nest)
		goto free;
	if (nla_put_u32(skb, FLEX_DEV_A_INDEX, fdev->index) ||
	    nla_put_string(skb, FLEX_DEV_A_NAME, dev_name(&fdev->pf->dev)) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_CAPACITY, mem->capacity,
			      FLEX_DEV_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_USED, atomic64_read(&mem->used),
			      FLEX_DEV_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_FREE, free, FLEX_DEV_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_LARGEST_FREE, largest, FLEX_DEV_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_RESIDENT,
			      (u64)atomic64_read(&mem->resident_pages) << PAGE_SHIFT,
			      FLEX_DEV_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_BACKING_CAP,
			      mem->backing_cap_pages << PAGE_SHIFT, FLEX_DEV_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_REGION_ALIGN, FLEX_REGION_ALIGN,
			      FLEX_DEV_A_PAD) ||
	    nla_put_u32(skb, FLEX_DEV_A_TOTAL_VFS, fdev->total_vfs) ||
	    nla_put_u32(skb, FLEX_DEV_A_PF_TABLE_SIZE, fdev->pf->table_size) ||
	    nla_put_u32(skb, FLEX_DEV_A_VF_TABLE_SIZE, flex_params.lut_entries) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_MEM_BASE, mem->base, FLEX_DEV_A_PAD))
		goto cancel;

	mutex_lock(&fdev->lock);
	get_fn_stats(fdev, st);
	if (nla_put_u32(skb, FLEX_DEV_A_NUM_VFS, fdev->num_vfs))
		goto unlock;
	if (fill_fn(skb, fdev->pf, &st[FLEX_NL_FN_PF]))
		goto unlock;
	for (i = 0; i < fdev->num_vfs; i++)
		if (fill_fn(skb, fdev->vfs[i], &st[FLEX_NL_FN_VF(i)]))
			goto unlock;
	err = 0;
unlock:
	mutex_unlock(&fdev->lock);
	if (err)
		goto cancel;
	nla_nest_end(skb, nest);
	kfree(st);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
free:
	kfree(st);
	return err;
}

static int fill_region(struct sk_buff *skb, struct flex_region *r)
{
	struct flex_device *fdev = r->fdev;
	struct nlattr *nest;

	lockdep_assert_held(&fdev->lock);
	if (nla_put_u32(skb, FLEX_A_DEVICE_INDEX, fdev->index))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, FLEX_A_REGION);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, FLEX_REGION_A_HANDLE, r->handle) ||
	    nla_put_u32(skb, FLEX_REGION_A_FN, fn_number(r->fn)) ||
	    nla_put_u64_64bit(skb, FLEX_REGION_A_REGION_ID, r->region_id,
			      FLEX_REGION_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_REGION_A_PHYS, r->phys,
			      FLEX_REGION_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_REGION_A_SIZE, r->size,
			      FLEX_REGION_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_REGION_A_RESIDENT,
			      flex_mem_resident(&fdev->mem, r->phys, r->size),
			      FLEX_REGION_A_PAD) ||
	    nla_put_u32(skb, FLEX_REGION_A_LUT_INDEX, r->lut_index) ||
	    nla_put_u64_64bit(skb, FLEX_REGION_A_MMAP_OFFSET,
			      flex_region_mmap_offset(r), FLEX_REGION_A_PAD) ||
	    nla_put_u32(skb, FLEX_REGION_A_OWNER_PID, r->owner_tgid) ||
	    nla_put_string(skb, FLEX_REGION_A_OWNER_COMM, r->owner_comm)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* @key is the entry's index in fn->table. */
static int fill_entry(struct sk_buff *skb, struct flex_fn *fn,
		      unsigned long key, struct flex_region *r)
{
	struct nlattr *nest;

	lockdep_assert_held(&fn->fdev->lock);
	if (nla_put_u32(skb, FLEX_A_DEVICE_INDEX, fn->fdev->index))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, FLEX_A_ENTRY);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, FLEX_ENTRY_A_FN, fn_number(fn)) ||
	    nla_put_u32(skb, FLEX_ENTRY_A_INDEX, key) ||
	    nla_put_u64_64bit(skb, FLEX_ENTRY_A_REGION_ID, r->region_id,
			      FLEX_ENTRY_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_ENTRY_A_PHYS, r->phys,
			      FLEX_ENTRY_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_ENTRY_A_SIZE, r->size,
			      FLEX_ENTRY_A_PAD) ||
	    nla_put_u32(skb, FLEX_ENTRY_A_HANDLE, r->handle) ||
	    nla_put_u32(skb, FLEX_ENTRY_A_OWNER_PID, r->owner_tgid) ||
	    nla_put_string(skb, FLEX_ENTRY_A_OWNER_COMM, r->owner_comm)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

static int fill_fault(struct sk_buff *skb, struct flex_queue *q)
{
	struct nlattr *nest;

	lockdep_assert_held(&q->fdev->sched_lock);
	nest = nla_nest_start(skb, FLEX_QUEUE_A_FAULT);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, FLEX_FAULT_A_CODE, q->fault.code) ||
	    nla_put_s32(skb, FLEX_FAULT_A_ERRNO, q->fault_errno) ||
	    nla_put_u64_64bit(skb, FLEX_FAULT_A_SEQNO, q->fault_seqno,
			      FLEX_FAULT_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FAULT_A_USER_DATA, q->fault_user_data,
			      FLEX_FAULT_A_PAD) ||
	    nla_put_u32(skb, FLEX_FAULT_A_OPCODE, q->fault_opcode) ||
	    nla_put_u32(skb, FLEX_FAULT_A_INSN, q->fault.insn) ||
	    nla_put_u64_64bit(skb, FLEX_FAULT_A_REGION_ID,
			      q->fault.addr.region_id, FLEX_FAULT_A_PAD) ||
	    nla_put_u8(skb, FLEX_FAULT_A_ADDR_VALID, q->fault.addr_valid) ||
	    nla_put_u64_64bit(skb, FLEX_FAULT_A_OFFSET, q->fault.addr.offset,
			      FLEX_FAULT_A_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * The queue must stay alive: the caller holds fdev->queues' xa_lock, or is
 * the engine completing one of its CBs. Takes sched_lock for the counters.
 */
static int fill_queue(struct sk_buff *skb, struct flex_queue *q)
{
	struct flex_device *fdev = q->fdev;
	struct nlattr *nest;
	int err = -EMSGSIZE;

	if (nla_put_u32(skb, FLEX_A_DEVICE_INDEX, fdev->index))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, FLEX_A_QUEUE);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, FLEX_QUEUE_A_HANDLE, q->handle) ||
	    nla_put_u32(skb, FLEX_QUEUE_A_ID, q->id) ||
	    nla_put_u32(skb, FLEX_QUEUE_A_FN, fn_number(q->ff->fn)) ||
	    nla_put_u32(skb, FLEX_QUEUE_A_OWNER_PID, q->owner_tgid) ||
	    nla_put_string(skb, FLEX_QUEUE_A_OWNER_COMM, q->owner_comm) ||
	    nla_put_u32(skb, FLEX_QUEUE_A_PRIORITY, q->priority) ||
	    nla_put_u32(skb, FLEX_QUEUE_A_DEPTH, q->depth))
		goto cancel;

	spin_lock(&fdev->sched_lock);
	if (nla_put_u32(skb, FLEX_QUEUE_A_PENDING, q->nr_jobs) ||
	    nla_put_u64_64bit(skb, FLEX_QUEUE_A_SUBMITTED, q->submitted,
			      FLEX_QUEUE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_QUEUE_A_COMPLETED, q->completed,
			      FLEX_QUEUE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_QUEUE_A_FAULTS, q->stat_faults,
			      FLEX_QUEUE_A_PAD) ||
	    nla_put_u8(skb, FLEX_QUEUE_A_FAULTED, q->faulted) ||
	    (q->faulted && fill_fault(skb, q)))
		goto unlock;
	err = 0;
unlock:
	spin_unlock(&fdev->sched_lock);
	if (err)
		goto cancel;
	nla_nest_end(skb, nest);
	return 0;
cancel:
	nla_nest_cancel(skb, nest);
	return err;
}

/* An open file; it stays on fdev->files while fdev->lock is held. */
static int fill_file(struct sk_buff *skb, struct flex_file *ff)
{
	struct flex_device *fdev = ff->fn->fdev;
	struct flex_file_usage u;
	struct nlattr *nest;

	lockdep_assert_held(&fdev->lock);
	flex_file_get_usage(ff, &u);
	if (nla_put_u32(skb, FLEX_A_DEVICE_INDEX, fdev->index))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, FLEX_A_FILE);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u64_64bit(skb, FLEX_FILE_A_CLIENT_ID, ff->client_id,
			      FLEX_FILE_A_PAD) ||
	    nla_put_u32(skb, FLEX_FILE_A_FN, fn_number(ff->fn)) ||
	    nla_put_u32(skb, FLEX_FILE_A_OWNER_PID, ff->owner_tgid) ||
	    nla_put_string(skb, FLEX_FILE_A_OWNER_COMM, ff->owner_comm) ||
	    nla_put_u32(skb, FLEX_FILE_A_REGIONS, u.regions) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_BYTES, u.bytes, FLEX_FILE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_RESIDENT, u.resident,
			      FLEX_FILE_A_PAD) ||
	    nla_put_u32(skb, FLEX_FILE_A_QUEUES, u.queues) ||
	    nla_put_u32(skb, FLEX_FILE_A_PENDING, u.pending) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_SUBMITTED, u.submitted,
			      FLEX_FILE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_COMPLETED, u.completed,
			      FLEX_FILE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_FAULTS, u.faults, FLEX_FILE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_PINNED, u.pinned, FLEX_FILE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_ENGINE_DMA_NS,
			      u.engine_ns[FLEX_ENGINE_DMA], FLEX_FILE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_ENGINE_COMPUTE_NS,
			      u.engine_ns[FLEX_ENGINE_COMPUTE], FLEX_FILE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_ENGINE_DMA_CBS,
			      u.engine_cbs[FLEX_ENGINE_DMA], FLEX_FILE_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_FILE_A_ENGINE_COMPUTE_CBS,
			      u.engine_cbs[FLEX_ENGINE_COMPUTE], FLEX_FILE_A_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/* ---- requests ---- */

/* A reply to @info, filled by @fill(skb, arg). */
static int reply(struct genl_info *info, int (*fill)(struct sk_buff *, void *),
		 void *arg)
{
	struct sk_buff *msg;
	void *hdr;
	int err;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &flex_nl_family, 0,
				info->genlhdr->cmd);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free;
	}
	err = fill(msg, arg);
	if (err)
		goto err_free;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return err;
}

/*
 * One object of a dump. Returns 0, or -EMSGSIZE when the skb is full (the
 * dump resumes at this object in the next skb).
 */
static int dump_one(struct sk_buff *skb, struct netlink_callback *cb,
		    int (*fill)(struct sk_buff *, void *), void *arg)
{
	void *hdr = genlmsg_put(skb, NETLINK_CB(cb->skb).portid,
				cb->nlh->nlmsg_seq, &flex_nl_family,
				NLM_F_MULTI, genl_dumpit_info(cb)->op.cmd);

	if (!hdr)
		return -EMSGSIZE;
	if (fill(skb, arg)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* What a dumpit returns: an object too large for an empty skb is an error. */
static int dump_result(struct sk_buff *skb, int err)
{
	if (err == -EMSGSIZE && skb->len)
		return skb->len;
	return err ?: skb->len;
}

static int fill_device_cb(struct sk_buff *skb, void *arg)
{
	return fill_device(skb, arg);
}

static int device_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	return reply(info, fill_device_cb, info->user_ptr[0]);
}

/* cb->args[0]: the next device index. */
static int device_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	struct flex_device *fdev;
	int err = 0;

	mutex_lock(&flex_nl_lock);
	for (; cb->args[0] < FLEX_MAX_DEVICES; cb->args[0]++) {
		fdev = flex_nl_devs[cb->args[0]];
		if (!fdev)
			continue;
		err = dump_one(skb, cb, fill_device_cb, fdev);
		if (err)
			break;
	}
	mutex_unlock(&flex_nl_lock);
	return dump_result(skb, err);
}

/*
 * The dump filters FLEX_A_DEVICE_INDEX and FLEX_A_FN, shared by the region,
 * queue and table dumps. Returns -ENODEV for a device that does not exist.
 */
struct dump_filter {
	u32 first_dev, last_dev;
	bool by_fn;
	u32 fn;
};

static int dump_filter(struct netlink_callback *cb, struct dump_filter *f)
{
	struct nlattr **attrs = genl_dumpit_info(cb)->attrs;

	f->first_dev = 0;
	f->last_dev = FLEX_MAX_DEVICES - 1;
	if (attrs[FLEX_A_DEVICE_INDEX]) {
		f->first_dev = nla_get_u32(attrs[FLEX_A_DEVICE_INDEX]);
		if (!dev_by_index(f->first_dev)) {
			NL_SET_ERR_MSG_ATTR(cb->extack, attrs[FLEX_A_DEVICE_INDEX],
					    "no such device");
			return -ENODEV;
		}
		f->last_dev = f->first_dev;
	}
	f->by_fn = !!attrs[FLEX_A_FN];
	if (f->by_fn)
		f->fn = nla_get_u32(attrs[FLEX_A_FN]);
	return 0;
}

/*
 * A dump of the devices the filters select, @dump_dev() dumping one device
 * from where cb->args[1] (and cb->args[2]) say, both 0 for a new device.
 * cb->args[0]: the device index.
 */
static int dump_devices(struct sk_buff *skb, struct netlink_callback *cb,
			int (*dump_dev)(struct sk_buff *skb,
					struct netlink_callback *cb,
					struct flex_device *fdev,
					const struct dump_filter *f))
{
	struct flex_device *fdev;
	struct dump_filter f;
	int err;

	mutex_lock(&flex_nl_lock);
	err = dump_filter(cb, &f);
	if (err)
		goto out;
	if (cb->args[0] < f.first_dev)
		cb->args[0] = f.first_dev;
	for (; cb->args[0] <= f.last_dev;
	     cb->args[0]++, cb->args[1] = 0, cb->args[2] = 0) {
		fdev = flex_nl_devs[cb->args[0]];
		if (!fdev)
			continue;
		err = dump_dev(skb, cb, fdev, &f);
		if (err)
			break;
	}
out:
	mutex_unlock(&flex_nl_lock);
	return dump_result(skb, err);
}

static int fill_region_cb(struct sk_buff *skb, void *arg)
{
	return fill_region(skb, arg);
}

static int region_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct flex_device *fdev = info->user_ptr[0];
	struct flex_region *r;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, FLEX_A_REGION_HANDLE))
		return -EINVAL;
	mutex_lock(&fdev->lock);
	r = xa_load(&fdev->regions,
		    nla_get_u32(info->attrs[FLEX_A_REGION_HANDLE]));
	if (r) {
		err = reply(info, fill_region_cb, r);
	} else {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[FLEX_A_REGION_HANDLE],
				    "no such region");
		err = -ENOENT;
	}
	mutex_unlock(&fdev->lock);
	return err;
}

/* cb->args[1]: the next region handle. */
static int region_dump_dev(struct sk_buff *skb, struct netlink_callback *cb,
			   struct flex_device *fdev, const struct dump_filter *f)
{
	struct flex_region *r;
	unsigned long handle;
	int err = 0;

	mutex_lock(&fdev->lock);
	handle = cb->args[1];
	xa_for_each_start(&fdev->regions, handle, r, handle) {
		if (f->by_fn && fn_number(r->fn) != f->fn)
			continue;
		err = dump_one(skb, cb, fill_region_cb, r);
		if (err)
			break;
	}
	cb->args[1] = handle;
	mutex_unlock(&fdev->lock);
	return err;
}

static int region_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return dump_devices(skb, cb, region_dump_dev);
}

static int fill_queue_cb(struct sk_buff *skb, void *arg)
{
	return fill_queue(skb, arg);
}

static int queue_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct flex_device *fdev = info->user_ptr[0];
	struct flex_queue *q;
	struct sk_buff *msg;
	void *hdr;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, FLEX_A_QUEUE_HANDLE))
		return -EINVAL;
	/* Allocated first: the queue is read under a spinlock. */
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &flex_nl_family, 0,
				info->genlhdr->cmd);
	if (!hdr) {
		err = -EMSGSIZE;
		goto err_free;
	}

	xa_lock(&fdev->queues);
	q = xa_load(&fdev->queues,
		    nla_get_u32(info->attrs[FLEX_A_QUEUE_HANDLE]));
	err = q ? fill_queue(msg, q) : -ENOENT;
	xa_unlock(&fdev->queues);
	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[FLEX_A_QUEUE_HANDLE],
				    "no such queue");
	if (err)
		goto err_free;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

err_free:
	nlmsg_free(msg);
	return err;
}

/* cb->args[1]: the next queue handle. */
static int queue_dump_dev(struct sk_buff *skb, struct netlink_callback *cb,
			  struct flex_device *fdev, const struct dump_filter *f)
{
	struct flex_queue *q;
	unsigned long handle;
	int err = 0;

	xa_lock(&fdev->queues);
	handle = cb->args[1];
	xa_for_each_start(&fdev->queues, handle, q, handle) {
		if (f->by_fn && fn_number(q->ff->fn) != f->fn)
			continue;
		err = dump_one(skb, cb, fill_queue_cb, q);
		if (err)
			break;
	}
	cb->args[1] = handle;
	xa_unlock(&fdev->queues);
	return err;
}

static int queue_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return dump_devices(skb, cb, queue_dump_dev);
}

struct entry_arg {
	struct flex_fn *fn;
	unsigned long key;
	struct flex_region *r;
};

static int fill_entry_cb(struct sk_buff *skb, void *arg)
{
	struct entry_arg *e = arg;

	return fill_entry(skb, e->fn, e->key, e->r);
}

static int table_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct flex_device *fdev = info->user_ptr[0];
	struct entry_arg e;
	int err;

	if (GENL_REQ_ATTR_CHECK(info, FLEX_A_FN) ||
	    GENL_REQ_ATTR_CHECK(info, FLEX_A_TABLE_INDEX))
		return -EINVAL;
	mutex_lock(&fdev->lock);
	e.fn = fn_by_number(fdev, nla_get_u32(info->attrs[FLEX_A_FN]));
	e.key = nla_get_u32(info->attrs[FLEX_A_TABLE_INDEX]);
	e.r = e.fn ? xa_load(&e.fn->table, e.key) : NULL;
	if (!e.fn) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[FLEX_A_FN],
				    "no such function");
		err = -ENODEV;
	} else if (!e.r) {
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[FLEX_A_TABLE_INDEX],
				    "no entry at this index");
		err = -ENOENT;
	} else {
		err = reply(info, fill_entry_cb, &e);
	}
	mutex_unlock(&fdev->lock);
	return err;
}

/* cb->args[1]: the function number; cb->args[2]: the next key in its table. */
static int table_dump_dev(struct sk_buff *skb, struct netlink_callback *cb,
			  struct flex_device *fdev, const struct dump_filter *f)
{
	struct entry_arg e;
	int err = 0;

	mutex_lock(&fdev->lock);
	if (f->by_fn && cb->args[1] < f->fn)
		cb->args[1] = f->fn;
	for (; cb->args[1] <= FLEX_MAX_VFS; cb->args[1]++, cb->args[2] = 0) {
		if (f->by_fn && cb->args[1] != f->fn)
			break;
		e.fn = fn_by_number(fdev, cb->args[1]);
		if (!e.fn)
			continue;
		e.key = cb->args[2];
		xa_for_each_start(&e.fn->table, e.key, e.r, e.key) {
			err = dump_one(skb, cb, fill_entry_cb, &e);
			if (err)
				break;
		}
		cb->args[2] = e.key;
		if (err)
			break;
	}
	mutex_unlock(&fdev->lock);
	return err;
}

static int table_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return dump_devices(skb, cb, table_dump_dev);
}

static int fill_file_cb(struct sk_buff *skb, void *arg)
{
	return fill_file(skb, arg);
}

static int file_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct flex_device *fdev = info->user_ptr[0];
	struct flex_file *ff;
	u64 id;
	int err = -ENOENT;

	if (GENL_REQ_ATTR_CHECK(info, FLEX_A_CLIENT_ID))
		return -EINVAL;
	id = nla_get_u64(info->attrs[FLEX_A_CLIENT_ID]);
	mutex_lock(&fdev->lock);
	list_for_each_entry(ff, &fdev->files, link) {
		if (ff->client_id == id) {
			err = reply(info, fill_file_cb, ff);
			break;
		}
	}
	mutex_unlock(&fdev->lock);
	if (err == -ENOENT)
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[FLEX_A_CLIENT_ID],
				    "no open file with this client id");
	return err;
}

/*
 * cb->args[1]: the lowest client id not yet dumped (fdev->files is in
 * client id order).
 */
static int file_dump_dev(struct sk_buff *skb, struct netlink_callback *cb,
			 struct flex_device *fdev, const struct dump_filter *f)
{
	struct flex_file *ff;
	int err = 0;

	mutex_lock(&fdev->lock);
	list_for_each_entry(ff, &fdev->files, link) {
		if (ff->client_id < cb->args[1] ||
		    (f->by_fn && fn_number(ff->fn) != f->fn))
			continue;
		err = dump_one(skb, cb, fill_file_cb, ff);
		if (err)
			break;
		cb->args[1] = ff->client_id + 1;
	}
	mutex_unlock(&fdev->lock);
	return err;
}

static int file_get_dumpit(struct sk_buff *skb, struct netlink_callback *cb)
{
	return dump_devices(skb, cb, file_dump_dev);
}

/*
 * Before every doit (each selects one device): flex_nl_lock is taken, held
 * until flex_nl_post_doit(), and FLEX_A_DEVICE_INDEX resolved into
 * info->user_ptr[0]; -EINVAL when it is missing, -ENODEV when there is no
 * such device. 6.1's genetlink has these hooks per family (later kernels
 * have them per split op, as dpll uses them).
 */
static int flex_nl_pre_doit(const struct genl_ops *ops, struct sk_buff *skb,
			    struct genl_info *info)
{
	struct flex_device *fdev;

	if (GENL_REQ_ATTR_CHECK(info, FLEX_A_DEVICE_INDEX))
		return -EINVAL;
	mutex_lock(&flex_nl_lock);
	fdev = dev_by_index(nla_get_u32(info->attrs[FLEX_A_DEVICE_INDEX]));
	if (!fdev) {
		mutex_unlock(&flex_nl_lock);
		NL_SET_ERR_MSG_ATTR(info->extack, info->attrs[FLEX_A_DEVICE_INDEX],
				    "no such device");
		return -ENODEV;
	}
	info->user_ptr[0] = fdev;
	return 0;
}

/* After a doit whose flex_nl_pre_doit() succeeded, whatever it returned. */
static void flex_nl_post_doit(const struct genl_ops *ops, struct sk_buff *skb,
			      struct genl_info *info)
{
	mutex_unlock(&flex_nl_lock);
}

/*
 * Strict per-command policies: an attribute a command does not take is
 * NLA_UNSPEC (or beyond maxattr) here, which strict validation refuses.
 */
static const struct nla_policy device_get_policy[FLEX_A_DEVICE_INDEX + 1] = {
	[FLEX_A_DEVICE_INDEX]	= { .type = NLA_U32 },
};

static const struct nla_policy region_get_policy[FLEX_A_REGION_HANDLE + 1] = {
	[FLEX_A_DEVICE_INDEX]	= { .type = NLA_U32 },
	[FLEX_A_FN]		= { .type = NLA_U32 },
	[FLEX_A_REGION_HANDLE]	= { .type = NLA_U32 },
};

static const struct nla_policy queue_get_policy[FLEX_A_QUEUE_HANDLE + 1] = {
	[FLEX_A_DEVICE_INDEX]	= { .type = NLA_U32 },
	[FLEX_A_FN]		= { .type = NLA_U32 },
	[FLEX_A_QUEUE_HANDLE]	= { .type = NLA_U32 },
};

static const struct nla_policy table_get_policy[FLEX_A_TABLE_INDEX + 1] = {
	[FLEX_A_DEVICE_INDEX]	= { .type = NLA_U32 },
	[FLEX_A_FN]		= { .type = NLA_U32 },
	[FLEX_A_TABLE_INDEX]	= { .type = NLA_U32 },
};

static const struct nla_policy file_get_policy[FLEX_A_CLIENT_ID + 1] = {
	[FLEX_A_DEVICE_INDEX]	= { .type = NLA_U32 },
	[FLEX_A_FN]		= { .type = NLA_U32 },
	[FLEX_A_CLIENT_ID]	= { .type = NLA_U64 },
};

/*
 * Devices are for everyone to read; regions, queues, lookup tables and open
 * files carry per-tenant detail (pids, command names, addresses, fault user
 * data, usage), so only an admin (CAP_NET_ADMIN) may read them; an owner
 * sees its own in the fdinfo of its open file.
 */
static const struct genl_ops flex_nl_ops[] = {
	{
		.cmd = FLEX_CMD_DEVICE_GET,
		.doit = device_get_doit,
		.dumpit = device_get_dumpit,
		.policy = device_get_policy,
		.maxattr = ARRAY_SIZE(device_get_policy) - 1,
	},
	{
		.cmd = FLEX_CMD_REGION_GET,
		.flags = GENL_ADMIN_PERM,
		.doit = region_get_doit,
		.dumpit = region_get_dumpit,
		.policy = region_get_policy,
		.maxattr = ARRAY_SIZE(region_get_policy) - 1,
	},
	{
		.cmd = FLEX_CMD_QUEUE_GET,
		.flags = GENL_ADMIN_PERM,
		.doit = queue_get_doit,
		.dumpit = queue_get_dumpit,
		.policy = queue_get_policy,
		.maxattr = ARRAY_SIZE(queue_get_policy) - 1,
	},
	{
		.cmd = FLEX_CMD_TABLE_GET,
		.flags = GENL_ADMIN_PERM,
		.doit = table_get_doit,
		.dumpit = table_get_dumpit,
		.policy = table_get_policy,
		.maxattr = ARRAY_SIZE(table_get_policy) - 1,
	},
	{
		.cmd = FLEX_CMD_FILE_GET,
		.flags = GENL_ADMIN_PERM,
		.doit = file_get_doit,
		.dumpit = file_get_dumpit,
		.policy = file_get_policy,
		.maxattr = ARRAY_SIZE(file_get_policy) - 1,
	},
};

static const struct genl_multicast_group flex_nl_mcgrps[] = {
	/* Events name tenants and their faults: admins only, as the ops. */
	[FLEX_NL_MCGRP_EVENTS] = { .name = FLEX_GENL_MCGRP_EVENTS,
				   .flags = GENL_MCAST_CAP_NET_ADMIN },
};

static struct genl_family flex_nl_family __ro_after_init = {
	.name = FLEX_GENL_NAME,
	.version = FLEX_GENL_VERSION,
	.module = THIS_MODULE,
	/*
	 * Not netnsok: flex devices are global, not per network namespace,
	 * and region/queue owners are reported as pids of the initial pid
	 * namespace, so the family is only in the initial namespace (and
	 * events go there only).
	 */
	.netnsok = false,
	/* Requests take flex_nl_lock and the driver's locks, not genl_mutex. */
	.parallel_ops = true,
	/*
	 * Zero: every command is validated strictly (unknown attributes,
	 * wrong types and sizes, a non-zero reserved header all -EINVAL).
	 */
	.resv_start_op = 0,
	.pre_doit = flex_nl_pre_doit,
	.post_doit = flex_nl_post_doit,
	.ops = flex_nl_ops,
	.n_ops = ARRAY_SIZE(flex_nl_ops),
	.mcgrps = flex_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(flex_nl_mcgrps),
};

/* ---- events ---- */

static bool flex_nl_listening(void)
{
	return genl_has_listeners(&flex_nl_family, &init_net,
				  FLEX_NL_MCGRP_EVENTS) > 0;
}

/* Multicasts an event filled by @fill(skb, arg); may sleep. */
static void flex_nl_event(u8 cmd, int (*fill)(struct sk_buff *, void *),
			  void *arg)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return;
	hdr = genlmsg_put(msg, 0, 0, &flex_nl_family, 0, cmd);
	if (!hdr || fill(msg, arg)) {
		nlmsg_free(msg);
		return;
	}
	genlmsg_end(msg, hdr);
	genlmsg_multicast(&flex_nl_family, msg, 0, FLEX_NL_MCGRP_EVENTS,
			  GFP_KERNEL);
}

/* @r is in the tables. */
void flex_nl_region_event(struct flex_region *r, bool acquired)
{
	lockdep_assert_held(&r->fdev->lock);
	might_sleep();
	if (flex_nl_listening())
		flex_nl_event(acquired ? FLEX_CMD_REGION_ACQUIRED_NTF :
			      FLEX_CMD_REGION_RELEASED_NTF, fill_region_cb, r);
}

/* The engine, with no lock held, after recording @q's fault. */
void flex_nl_queue_fault(struct flex_queue *q)
{
	might_sleep();
	if (flex_nl_listening())
		flex_nl_event(FLEX_CMD_QUEUE_FAULT_NTF, fill_queue_cb, q);
}

struct vfs_arg {
	u32 index;
	u32 num_vfs;
};

static int fill_vfs(struct sk_buff *skb, void *arg)
{
	struct vfs_arg *v = arg;

	if (nla_put_u32(skb, FLEX_A_DEVICE_INDEX, v->index) ||
	    nla_put_u32(skb, FLEX_A_NUM_VFS, v->num_vfs))
		return -EMSGSIZE;
	return 0;
}

/* @num_vfs were enabled, or were until now. */
void flex_nl_vfs_event(struct flex_device *fdev, bool enabled,
		       unsigned int num_vfs)
{
	struct vfs_arg v = { .index = fdev->index, .num_vfs = num_vfs };

	lockdep_assert_held(&fdev->sriov_lock);
	might_sleep();
	if (flex_nl_listening())
		flex_nl_event(enabled ? FLEX_CMD_VFS_ENABLED_NTF :
			      FLEX_CMD_VFS_DISABLED_NTF, fill_vfs, &v);
}

/* Lockless: the caller may hold a region's rwsem, below fdev->lock. */
static int fill_backing_cap(struct sk_buff *skb, void *arg)
{
	struct flex_device *fdev = arg;
	struct flex_mem *mem = &fdev->mem;
	struct nlattr *nest;

	if (nla_put_u32(skb, FLEX_A_DEVICE_INDEX, fdev->index))
		return -EMSGSIZE;
	nest = nla_nest_start(skb, FLEX_A_DEVICE);
	if (!nest)
		return -EMSGSIZE;
	if (nla_put_u32(skb, FLEX_DEV_A_INDEX, fdev->index) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_RESIDENT,
			      (u64)atomic64_read(&mem->resident_pages) << PAGE_SHIFT,
			      FLEX_DEV_A_PAD) ||
	    nla_put_u64_64bit(skb, FLEX_DEV_A_BACKING_CAP,
			      mem->backing_cap_pages << PAGE_SHIFT, FLEX_DEV_A_PAD)) {
		nla_nest_cancel(skb, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(skb, nest);
	return 0;
}

/*
 * Backing was refused at the cap: from flex_mem's work item, queued by
 * flex_mem_page() once per time the cap is reached (see
 * flex_mem.backing_cap_hit), so never from an engine's signalling path.
 */
void flex_nl_backing_cap(struct flex_mem *mem)
{
	might_sleep();
	if (flex_nl_listening())
		flex_nl_event(FLEX_CMD_BACKING_CAP_NTF, fill_backing_cap,
			      container_of(mem, struct flex_device, mem));
}

/* ---- the family's lifetime ---- */

void flex_nl_device_add(struct flex_device *fdev)
{
	mutex_lock(&flex_nl_lock);
	flex_nl_devs[fdev->index] = fdev;
	mutex_unlock(&flex_nl_lock);
}

/* Waits for the requests looking at @fdev. */
void flex_nl_device_remove(struct flex_device *fdev)
{
	mutex_lock(&flex_nl_lock);
	flex_nl_devs[fdev->index] = NULL;
	mutex_unlock(&flex_nl_lock);
}

/* Before any device exists, so events always find the family registered. */
int flex_nl_init(void)
{
	return genl_register_family(&flex_nl_family);
}

/* After every device is destroyed: no event can be on its way. */
void flex_nl_fini(void)
{
	genl_unregister_family(&flex_nl_family);
}
