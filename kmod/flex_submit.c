// SPDX-License-Identifier: GPL-2.0
/*
 * flex submission: FLEX_IOCTL_SUBMIT turns a batch of user CBs into jobs.
 *
 * All or nothing: every CB is copied, validated and prepared (regions
 * referenced, DMA pages pinned, WAIT dependencies found) before any of them
 * is queued; one bad CB fails the batch and undoes the rest. What can be
 * checked now is refused now (a DMA leaving its region, an unknown region);
 * what only the device can see (program contents, operand addresses, a
 * region released meanwhile) faults the CB when it runs.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/llist.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "flex_drv.h"

/* Host memory one open file may have pinned for queued DMA at once. */
#define FLEX_MAX_PINNED_PAGES	((512ULL << 20) >> PAGE_SHIFT)

static const char *flex_fence_driver_name(struct dma_fence *fence)
{
	return FLEX_DRV_NAME;
}

static const char *flex_fence_timeline_name(struct dma_fence *fence)
{
	return "queue";
}

/*
 * Jobs come from a SLAB_TYPESAFE_BY_RCU cache, as i915's requests do, so
 * an RCU reader holding a stale fence pointer still finds a fence there
 * and fails dma_fence_get_rcu(); the lock is initialised once, by the
 * constructor, for the same reason. Released jobs go to a pool that
 * submission takes from: a job is allocated on one CPU and freed on the
 * engine's, and without the pool nearly every allocation took the slab
 * slow path (measured at 13-19k cycles per CB in the VM).
 */
#define FLEX_JOB_POOL_MAX	4096

static struct kmem_cache *flex_job_cache;
static LLIST_HEAD(flex_job_pool);
static atomic_t flex_job_pool_count = ATOMIC_INIT(0);

static void flex_job_ctor(void *obj)
{
	struct flex_job *job = obj;

	spin_lock_init(&job->lock);
}

int flex_job_cache_init(void)
{
	flex_job_cache = kmem_cache_create("flex_job", sizeof(struct flex_job), 0,
					   SLAB_TYPESAFE_BY_RCU | SLAB_HWCACHE_ALIGN |
					   SLAB_ACCOUNT,
					   flex_job_ctor);
	return flex_job_cache ? 0 : -ENOMEM;
}

void flex_job_cache_fini(void)
{
	struct flex_job *job, *tmp;

	llist_for_each_entry_safe(job, tmp, llist_del_all(&flex_job_pool), pool_node)
		kmem_cache_free(flex_job_cache, job);
	rcu_barrier();
	kmem_cache_destroy(flex_job_cache);
}

/* A job from *pool (the jobs this submission took from the pool) or the cache. */
static struct flex_job *job_alloc(struct flex_queue *q, struct llist_node **pool)
{
	struct flex_job *job;

	if (*pool) {
		job = llist_entry(*pool, struct flex_job, pool_node);
		*pool = (*pool)->next;
		atomic_dec(&flex_job_pool_count);
	} else {
		job = kmem_cache_alloc(flex_job_cache, GFP_KERNEL_ACCOUNT);
		if (!job)
			return NULL;
	}
	/* Everything but the lock (and the fence, initialised at enqueue). */
	memset((char *)job + offsetof(struct flex_job, q), 0,
	       sizeof(*job) - offsetof(struct flex_job, q));
	job->q = q;
	INIT_LIST_HEAD(&job->link);
	return job;
}

static void job_free(struct flex_job *job)
{
	if (atomic_inc_return(&flex_job_pool_count) <= FLEX_JOB_POOL_MAX) {
		llist_add(&job->pool_node, &flex_job_pool);
	} else {
		atomic_dec(&flex_job_pool_count);
		kmem_cache_free(flex_job_cache, job);
	}
}

static void pool_return(struct llist_node *pool)
{
	struct flex_job *job, *tmp;

	llist_for_each_entry_safe(job, tmp, pool, pool_node) {
		atomic_dec(&flex_job_pool_count);
		job_free(job);
	}
}

/*
 * An exported fence keeps the module, and so its fence ops, alive for as
 * long as the sync_file holding it lives. The reference is a file's, as
 * dma-buf's is its exporter's: the core drops it (__fput() puts the file's
 * fops owner) after the fence's release has returned, never from this
 * module's own text, which rmmod could free under a release still running.
 */
static const struct file_operations flex_fence_holder_fops = {
	.owner = THIS_MODULE,
};

struct file *flex_fence_holder_new(void)
{
	return anon_inode_getfile("[flex-fence]", &flex_fence_holder_fops, NULL, O_RDONLY);
}

static void flex_fence_release(struct dma_fence *fence)
{
	struct flex_job *job = container_of(fence, struct flex_job, fence);
	struct file *holder = job->holder;

	job_free(job);
	/* Deferred: __fput() runs from task work or a workqueue, later. */
	if (holder)
		fput(holder);
}

const struct dma_fence_ops flex_fence_ops = {
	.get_driver_name = flex_fence_driver_name,
	.get_timeline_name = flex_fence_timeline_name,
	.release = flex_fence_release,
};

/* Called after the job's fence signalled (or for a job never queued). */
void flex_job_release_resources(struct flex_job *job)
{
	unsigned int i;

	if (job->pages) {
		unpin_user_pages_dirty_lock(job->pages, job->npages,
					    job->cb.opcode == FLEX_CB_DMA_FROM_DEVICE);
		atomic64_sub(job->npages, &job->q->ff->pinned_pages);
		atomic64_sub(job->npages, &job->q->fdev->pinned_pages);
		atomic64_sub(job->npages, &job->mm->pinned_vm);
		kvfree(job->pages);
		job->pages = NULL;
	}
	if (job->mm) {
		mmdrop(job->mm);
		job->mm = NULL;
	}
	for (i = 0; i < ARRAY_SIZE(job->regions); i++) {
		flex_region_put(job->regions[i]);
		job->regions[i] = NULL;
	}
	if (job->dep) {
		if (job->dep_armed)
			dma_fence_remove_callback(job->dep, &job->dep_cb);
		dma_fence_put(job->dep);
		job->dep = NULL;
	}
}

/*
 * Pins @job's host pages for as long as the CB is queued or running: a
 * long-term pin (FOLL_LONGTERM), counted in the process's pinned_vm
 * against RLIMIT_MEMLOCK as RDMA and io_uring count theirs. Device memory
 * cannot be pinned: pages of a flex mapping would outlive their region's
 * release uncounted by the backing cap. GUP refuses the mappings (VM_IO)
 * where it looks at VMAs; its fast path does not, so the pinned pages are
 * checked too.
 */
static int pin_host_pages(struct flex_file *ff, struct flex_job *job, u64 start,
			  bool write)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;
	long pinned;

	if (!mm)
		return -EFAULT;
	if (atomic64_add_return(job->npages, &ff->pinned_pages) > FLEX_MAX_PINNED_PAGES) {
		atomic64_sub(job->npages, &ff->pinned_pages);
		return -ENOMEM;
	}
	if (atomic64_add_return(job->npages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		pinned = -ENOMEM;
		goto err_count;
	}
	job->pages = kvmalloc_array(job->npages, sizeof(*job->pages),
				    GFP_KERNEL_ACCOUNT);
	if (!job->pages) {
		pinned = -ENOMEM;
		goto err_count;
	}
	/* The device writes host memory on a DMA from the device. */
	pinned = pin_user_pages_fast(start, job->npages,
				     FOLL_LONGTERM | (write ? FOLL_WRITE : 0), job->pages);
	if (pinned == job->npages && flex_mem_any_device_page(job->pages, pinned)) {
		unpin_user_pages(job->pages, pinned);
		pinned = -EFAULT;
	}
	if (pinned != job->npages) {
		if (pinned > 0)
			unpin_user_pages(job->pages, pinned);
		kvfree(job->pages);
		job->pages = NULL;
		pinned = pinned < 0 ? pinned : -EFAULT;
		goto err_count;
	}
	mmgrab(mm);
	job->mm = mm;
	atomic64_add(job->npages, &ff->fn->fdev->pinned_pages);
	return 0;

err_count:
	atomic64_sub(job->npages, &mm->pinned_vm);
	atomic64_sub(job->npages, &ff->pinned_pages);
	return pinned;
}

/* The union bytes past the opcode's own structure must be zero. */
static bool tail_is_zero(const struct flex_cb *cb, size_t used)
{
	return !memchr_inv((const u8 *)cb->raw + used, 0, sizeof(cb->raw) - used);
}

static int prepare_dma(struct flex_file *ff, struct flex_job *job)
{
	const struct flex_cb_dma *dma = &job->cb.dma;
	bool to_dev = job->cb.opcode == FLEX_CB_DMA_TO_DEVICE;
	struct flex_region *r;
	unsigned long first, last;
	int err;

	if (!tail_is_zero(&job->cb, sizeof(*dma)))
		return -EINVAL;
	if (!dma->size || dma->size > FLEX_DMA_MAX_SIZE)
		return -EINVAL;
	if (dma->host_ptr + dma->size < dma->host_ptr ||
	    !access_ok(u64_to_user_ptr(dma->host_ptr), dma->size))
		return -EFAULT;

	r = flex_file_region_get(ff, dma->dev.region_id);
	if (!r)
		return -ENOENT;
	job->regions[0] = r;
	if (dma->dev.offset > r->size || dma->size > r->size - dma->dev.offset)
		return -ERANGE;

	first = dma->host_ptr >> PAGE_SHIFT;
	last = (dma->host_ptr + dma->size - 1) >> PAGE_SHIFT;
	job->npages = last - first + 1;
	job->page_off = offset_in_page(dma->host_ptr);
	err = pin_host_pages(ff, job, first << PAGE_SHIFT, !to_dev);
	if (err) {
		job->npages = 0;
		return err;
	}
	/*
	 * Back the device pages now, charged to the submitter, so the engine
	 * rarely has to (it may not wait for reclaim). Best effort: past the
	 * backing cap the CB faults when it runs, as it always did.
	 */
	if (to_dev)
		flex_region_back(r, dma->dev.offset, dma->size, false);
	/*
	 * A small DMA runs on whichever engine is free first, as a command
	 * processor copies small data inline: a launch's corrections do not
	 * wait behind another queue's big upload on the DMA engine.
	 */
	job->engine = dma->size <= FLEX_DMA_INLINE_MAX ? FLEX_NR_ENGINES : FLEX_ENGINE_DMA;
	return 0;
}

static int prepare_compute(struct flex_file *ff, struct flex_job *job)
{
	const struct flex_cb_compute *c = &job->cb.compute;
	struct flex_region *r;
	unsigned int i;

	if (!tail_is_zero(&job->cb, sizeof(*c)) || c->pad ||
	    c->segment_mask & ~GENMASK(FLEX_NUM_SEGMENTS - 1, 0))
		return -EINVAL;
	for (i = 0; i < FLEX_NUM_SEGMENTS; i++)
		if (!(c->segment_mask & BIT(i)) &&
		    (c->segments[i].region_id || c->segments[i].offset))
			return -EINVAL;

	r = flex_file_region_get(ff, c->program.region_id);
	if (!r)
		return -ENOENT;
	job->regions[0] = r;
	if (c->program.offset > r->size ||
	    r->size - c->program.offset < sizeof(struct flex_prog_header))
		return -ERANGE;

	for (i = 0; i < FLEX_NUM_SEGMENTS; i++) {
		if (!(c->segment_mask & BIT(i)))
			continue;
		r = flex_file_region_get(ff, c->segments[i].region_id);
		if (!r)
			return -ENOENT;
		job->regions[1 + i] = r;
		if (c->segments[i].offset > r->size)
			return -ERANGE;
	}
	job->engine = FLEX_ENGINE_COMPUTE;
	return 0;
}

static int prepare_wait(struct flex_file *ff, struct flex_queue *q,
			struct flex_job *job)
{
	const struct flex_cb_wait *w = &job->cb.wait;
	struct flex_device *fdev = q->fdev;
	struct flex_queue *other;
	struct flex_job *j;
	int err = 0;

	if (!tail_is_zero(&job->cb, sizeof(*w)) || w->pad)
		return -EINVAL;
	if (w->queue_id == q->id)
		return -EINVAL;	/* its own earlier CBs are ordered already */

	xa_lock(&ff->queues);
	other = xa_load(&ff->queues, w->queue_id);
	if (other)
		kref_get(&other->ref);
	xa_unlock(&ff->queues);
	if (!other)
		return -ENOENT;

	spin_lock(&fdev->sched_lock);
	if (!w->seqno || w->seqno > other->submitted) {
		err = -EINVAL;	/* waiting for the future could deadlock */
	} else if (w->seqno <= other->completed) {
		job->dep_failed = flex_queue_seqno_result(other, w->seqno) != 0;
	} else if (other->running && other->running->fence.seqno == w->seqno) {
		job->dep = dma_fence_get(&other->running->fence);
	} else {
		list_for_each_entry(j, &other->pending, link) {
			if (j->fence.seqno == w->seqno) {
				job->dep = dma_fence_get(&j->fence);
				break;
			}
		}
		if (!job->dep)
			err = -ENOENT;	/* cancelled: the queue is going away */
	}
	spin_unlock(&fdev->sched_lock);
	kref_put(&other->ref, flex_queue_free);
	return err;
}

static int prepare_job(struct flex_file *ff, struct flex_queue *q,
		       struct flex_job *job)
{
	job->engine = FLEX_NR_ENGINES;
	if (job->cb.flags)
		return -EINVAL;

	switch (job->cb.opcode) {
	case FLEX_CB_NOP:
		return tail_is_zero(&job->cb, 0) ? 0 : -EINVAL;
	case FLEX_CB_DMA_TO_DEVICE:
	case FLEX_CB_DMA_FROM_DEVICE:
		return prepare_dma(ff, job);
	case FLEX_CB_COMPUTE:
		return prepare_compute(ff, job);
	case FLEX_CB_WAIT:
		return prepare_wait(ff, q, job);
	default:
		return -EINVAL;
	}
}

/* Queues the prepared jobs, or says why not (-EAGAIN, -EIO, -ENOENT). */
/*
 * Appends @jobs to @q. *@kick is the engine (FLEX_NR_ENGINES: both) that
 * must look for work because of them, or -1 for none: only a queue that
 * neither ran nor held a CB gets a new head to pick. Behind a running CB,
 * the engine that ends it looks at the queue again (run_end()); behind a
 * pending one, the head has not changed.
 */
static int enqueue(struct flex_queue *q, struct list_head *jobs, u32 count,
		   u64 *seqno, int *kick)
{
	struct flex_device *fdev = q->fdev;
	struct flex_job *job;
	bool was_idle;
	int err = 0;

	spin_lock(&fdev->sched_lock);
	if (q->dying)
		err = -ENOENT;
	else if (q->faulted)
		err = -EIO;
	else if (q->nr_jobs + count > q->depth)
		err = -EAGAIN;
	if (!err) {
		list_for_each_entry(job, jobs, link)
			dma_fence_init(&job->fence, &flex_fence_ops, &job->lock,
				       q->fence_context, ++q->submitted);
		was_idle = list_empty(&q->pending);
		*kick = was_idle && !q->running ?
			list_first_entry(jobs, struct flex_job, link)->engine : -1;
		list_splice_tail_init(jobs, &q->pending);
		if (was_idle)
			flex_sched_queue_update(q);
		q->nr_jobs += count;
		*seqno = q->submitted;
	}
	spin_unlock(&fdev->sched_lock);
	return err;
}

static bool has_room(struct flex_queue *q, u32 count)
{
	bool room;

	spin_lock(&q->fdev->sched_lock);
	room = q->dying || q->faulted || q->nr_jobs + count <= q->depth;
	spin_unlock(&q->fdev->sched_lock);
	return room;
}

int flex_submit_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_submit *args = data;
	struct flex_cb __user *ucbs = u64_to_user_ptr(args->cbs_ptr);
	struct llist_node *pool = NULL;
	struct flex_job *job, *tmp;
	struct flex_queue *q;
	LIST_HEAD(jobs);
	int err, kick;
	u32 i;

	if (args->flags & ~FLEX_SUBMIT_BLOCK || args->pad)
		return -EINVAL;
	if (!args->count || args->count > FLEX_SUBMIT_MAX_CBS)
		return -EINVAL;

	q = flex_queue_get(ff, args->queue_id);
	if (!q)
		return -ENOENT;
	if (args->count > q->depth) {
		err = -EINVAL;	/* could never fit */
		goto out_put;
	}

	pool = llist_del_all(&flex_job_pool);
	for (i = 0; i < args->count; i++) {
		job = job_alloc(q, &pool);
		if (!job) {
			err = -ENOMEM;
			goto out_undo;
		}
		list_add_tail(&job->link, &jobs);
		if (copy_from_user(&job->cb, &ucbs[i], sizeof(job->cb))) {
			err = -EFAULT;
			goto out_undo;
		}
		err = prepare_job(ff, q, job);
		if (err)
			goto out_undo;
	}

	while ((err = enqueue(q, &jobs, args->count, &args->seqno, &kick)) == -EAGAIN &&
	       args->flags & FLEX_SUBMIT_BLOCK) {
		if (wait_event_interruptible(q->wq, has_room(q, args->count))) {
			err = -ERESTARTSYS;
			break;
		}
	}
	if (!err) {
		if (kick >= 0)
			flex_sched_kick_engine(q->fdev, kick);
		goto out_put;
	}

out_undo:
	list_for_each_entry_safe(job, tmp, &jobs, link) {
		list_del(&job->link);
		flex_job_release_resources(job);
		job_free(job);	/* its fence was never initialised */
	}
out_put:
	pool_return(pool);
	kref_put(&q->ref, flex_queue_free);
	return err;
}
