// SPDX-License-Identifier: GPL-2.0
/*
 * flex queues: creation, destruction, sticky faults, waits, fences, poll.
 *
 * Queues belong to the open file (ff->queues) and are destroyed with it:
 * their queued CBs are cancelled and their pinned memory released, the CB
 * running on an engine is waited for. Completion is tracked per queue as
 * "every CB up to seqno has run"; each CB also has a dma_fence, which is
 * what WAIT CBs, waiters and exported sync_files wait on.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/sync_file.h>

#include "flex_drv.h"

void flex_queue_free(struct kref *ref)
{
	kfree(container_of(ref, struct flex_queue, ref));
}

struct flex_queue *flex_queue_get(struct flex_file *ff, u32 id)
{
	struct flex_queue *q;

	xa_lock(&ff->queues);
	q = xa_load(&ff->queues, id);
	if (q)
		kref_get(&q->ref);
	xa_unlock(&ff->queues);
	return q;
}

void flex_file_init_queues(struct flex_file *ff)
{
	xa_init_flags(&ff->queues, XA_FLAGS_ALLOC1);
	init_waitqueue_head(&ff->poll_wq);
	atomic64_set(&ff->pinned_pages, 0);
}

int flex_queue_create_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_queue_create *args = data;
	struct flex_device *fdev = ff->fn->fdev;
	struct flex_queue *q;
	u32 id;
	int err;

	if (args->flags || args->priority > FLEX_QUEUE_PRIO_HIGH ||
	    args->depth > FLEX_QUEUE_MAX_DEPTH)
		return -EINVAL;
	/* Above-normal priority can starve other tenants: as DRM drivers do. */
	if (args->priority > FLEX_QUEUE_PRIO_NORMAL && !capable(CAP_SYS_NICE))
		return -EACCES;

	q = kzalloc(sizeof(*q), GFP_KERNEL_ACCOUNT);
	if (!q)
		return -ENOMEM;
	kref_init(&q->ref);
	q->ff = ff;
	q->fdev = fdev;
	q->priority = args->priority;
	q->depth = args->depth ?: FLEX_QUEUE_DEFAULT_DEPTH;
	q->fence_context = dma_fence_context_alloc(1);
	INIT_LIST_HEAD(&q->pending);
	INIT_LIST_HEAD(&q->ready_link[FLEX_ENGINE_DMA]);
	INIT_LIST_HEAD(&q->ready_link[FLEX_ENGINE_COMPUTE]);
	INIT_LIST_HEAD(&q->blocked_link);
	init_waitqueue_head(&q->wq);
	q->owner_tgid = task_tgid_nr(current);
	get_task_comm(q->owner_comm, current);

	/*
	 * Reserve the file's id (a reserved entry reads as NULL, so no ioctl
	 * finds the queue yet), finish the queue, and only then publish it:
	 * to netlink, to the scheduler, and last to the file's table. From
	 * that store on another thread may destroy it, so q is not touched
	 * again.
	 */
	err = xa_alloc(&ff->queues, &id, NULL, XA_LIMIT(1, FLEX_MAX_QUEUES),
		       GFP_KERNEL);
	if (err) {
		kfree(q);
		return err == -EBUSY ? -ENOSPC : err;
	}
	q->id = id;
	err = xa_alloc_cyclic(&fdev->queues, &q->handle, q, XA_LIMIT(1, INT_MAX),
			      &fdev->next_queue_handle, GFP_KERNEL);
	if (err < 0) {
		xa_release(&ff->queues, id);
		kfree(q);
		return err;
	}
	/* Replacing a reserved entry allocates nothing and cannot fail. */
	WARN_ON(xa_is_err(xa_store(&ff->queues, id, q, GFP_KERNEL)));
	args->queue_id = id;
	return 0;
}

static bool queue_idle(struct flex_queue *q)
{
	bool idle;

	spin_lock(&q->fdev->sched_lock);
	idle = !q->running;
	spin_unlock(&q->fdev->sched_lock);
	return idle;
}

/*
 * The queue is out of the file's table: stop it, cancel, unlink, put.
 * Marking it dying makes its running CB stop at its next check
 * (flex_job_check()), so the wait is short. What is queued is cancelled
 * only once the running CB has signalled: fences signal in seqno order.
 */
static void queue_teardown(struct flex_queue *q)
{
	flex_sched_queue_stop(q);
	wake_up_all(&q->wq);	/* blocked submitters give up */

	wait_event(q->wq, queue_idle(q));
	flex_sched_cancel_pending(q);
	/* Netlink reads queues under this xa_lock: after it, none does. */
	xa_erase(&q->fdev->queues, q->handle);
	kref_put(&q->ref, flex_queue_free);
}

int flex_queue_destroy_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_queue_op *args = data;
	struct flex_queue *q;

	if (args->flags)
		return -EINVAL;
	/*
	 * Only a published queue: xa_erase() would also drop the id a
	 * concurrent QUEUE_CREATE has reserved, and a third thread could then
	 * be handed the same id, one queue overwriting the other in the table.
	 */
	xa_lock(&ff->queues);
	q = xa_load(&ff->queues, args->queue_id);
	if (q)
		__xa_erase(&ff->queues, args->queue_id);
	xa_unlock(&ff->queues);
	if (!q)
		return -ENOENT;
	queue_teardown(q);
	return 0;
}

void flex_file_release_queues(struct flex_file *ff)
{
	struct flex_queue *q;
	unsigned long id;

	xa_for_each(&ff->queues, id, q) {
		xa_erase(&ff->queues, id);
		queue_teardown(q);
	}
	xa_destroy(&ff->queues);
}

int flex_queue_reset_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_queue_op *args = data;
	struct flex_queue *q;
	int err = 0;

	if (args->flags)
		return -EINVAL;
	q = flex_queue_get(ff, args->queue_id);
	if (!q)
		return -ENOENT;
	spin_lock(&q->fdev->sched_lock);
	if (q->nr_jobs) {
		err = -EBUSY;
	} else {
		q->faulted = false;
		memset(&q->fault, 0, sizeof(q->fault));
		q->fault_errno = 0;
		q->fault_seqno = 0;
		q->fault_user_data = 0;
		q->fault_opcode = 0;
	}
	spin_unlock(&q->fdev->sched_lock);
	kref_put(&q->ref, flex_queue_free);
	return err;
}

int flex_queue_status_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_queue_status *s = data;
	struct flex_queue *q;

	if (s->flags & ~FLEX_STATUS_ACK || s->pad)
		return -EINVAL;
	q = flex_queue_get(ff, s->queue_id);
	if (!q)
		return -ENOENT;
	spin_lock(&q->fdev->sched_lock);
	s->submitted = q->submitted;
	s->completed = q->completed;
	s->priority = q->priority;
	s->depth = q->depth;
	s->fault_code = q->faulted ? q->fault.code : FLEX_FAULT_NONE;
	s->fault_errno = q->faulted ? q->fault_errno : 0;
	s->fault_seqno = q->fault_seqno;
	s->fault_user_data = q->fault_user_data;
	s->fault_opcode = q->fault_opcode;
	s->fault_insn = q->fault.insn;
	s->fault_addr = q->fault.addr;
	s->fault_flags = q->faulted && q->fault.addr_valid ? FLEX_FAULT_ADDR_VALID : 0;
	if (s->flags & FLEX_STATUS_ACK)
		q->poll_mark = q->completed;
	spin_unlock(&q->fdev->sched_lock);
	kref_put(&q->ref, flex_queue_free);
	return 0;
}

/* Remembers that CBs @lo..@hi failed with @err. */
void flex_queue_record_fault(struct flex_queue *q, u64 lo, u64 hi, int err)
{
	struct flex_fault_range *slot = &q->history[q->nr_history % FLEX_FAULT_HISTORY];

	lockdep_assert_held(&q->fdev->sched_lock);
	if (q->nr_history >= FLEX_FAULT_HISTORY) {
		q->lost_hi = slot->hi;
		q->lost_err = slot->err;
	}
	*slot = (struct flex_fault_range){ .lo = lo, .hi = hi, .err = err };
	q->nr_history++;
}

/*
 * The result of completed CB @seqno: 0, or the errno of the fault that
 * failed it (itself, or one before it that cancelled it), even after the
 * queue was reset.
 */
int flex_queue_seqno_result(struct flex_queue *q, u64 seqno)
{
	u32 i, n = min_t(u32, q->nr_history, FLEX_FAULT_HISTORY);

	lockdep_assert_held(&q->fdev->sched_lock);
	for (i = 0; i < n; i++)
		if (q->history[i].lo <= seqno && seqno <= q->history[i].hi)
			return q->history[i].err;
	return seqno <= q->lost_hi ? q->lost_err : 0;
}

/*
 * Where CB @seqno stands. Returns 1 and its result in *result when it has
 * completed; 0 and a reference to its fence when it has not; -errno.
 */
static int seqno_state(struct flex_queue *q, u64 seqno, int *result,
		       struct dma_fence **fence)
{
	struct flex_job *j;

	lockdep_assert_held(&q->fdev->sched_lock);
	if (!seqno || seqno > q->submitted)
		return -EINVAL;
	if (seqno <= q->completed) {
		*result = flex_queue_seqno_result(q, seqno);
		return 1;
	}
	if (q->running && q->running->fence.seqno == seqno) {
		*fence = dma_fence_get(&q->running->fence);
		return 0;
	}
	list_for_each_entry(j, &q->pending, link) {
		if (j->fence.seqno == seqno) {
			*fence = dma_fence_get(&j->fence);
			return 0;
		}
	}
	return -ECANCELED;	/* the queue is being destroyed */
}

static long abs_timeout_to_jiffies(s64 timeout_ns)
{
	s64 now = ktime_get_ns();
	u64 left;

	/* Compare before subtracting: INT64_MIN - now would wrap. */
	if (timeout_ns <= now)
		return 0;
	left = (u64)timeout_ns - (u64)now;
	return min_t(u64, nsecs_to_jiffies64(left) + 1, MAX_SCHEDULE_TIMEOUT - 1);
}

int flex_queue_wait_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_wait *args = data;
	struct dma_fence *fence = NULL;
	struct flex_queue *q;
	int state, result = 0;
	long left;

	if (args->flags)
		return -EINVAL;
	q = flex_queue_get(ff, args->queue_id);
	if (!q)
		return -ENOENT;

	for (;;) {
		spin_lock(&q->fdev->sched_lock);
		state = seqno_state(q, args->seqno, &result, &fence);
		if (state == 1)
			q->poll_mark = max(q->poll_mark, args->seqno);
		spin_unlock(&q->fdev->sched_lock);
		if (state < 0) {
			result = state;
			break;
		}
		if (state == 1)
			break;

		left = args->timeout_ns ? abs_timeout_to_jiffies(args->timeout_ns) : 0;
		left = left ? dma_fence_wait_timeout(fence, true, left) : 0;
		dma_fence_put(fence);
		if (left < 0) {
			result = left;	/* -ERESTARTSYS: restarted, the deadline is absolute */
			break;
		}
		if (!left) {
			result = -ETIMEDOUT;
			break;
		}
	}
	kref_put(&q->ref, flex_queue_free);
	return result;
}

int flex_fence_export_ioctl(struct flex_file *ff, void *data, struct flex_call *call)
{
	struct flex_fence_export *args = data;
	struct dma_fence *fence = NULL;
	struct file *holder;
	struct sync_file *sync;
	struct flex_queue *q;
	int state, result, fd;

	/* The caller must be able to learn the fd it gets. */
	if (call->usize < offsetofend(struct flex_fence_export, fd))
		return -EINVAL;
	if (args->flags || args->pad)
		return -EINVAL;
	q = flex_queue_get(ff, args->queue_id);
	if (!q)
		return -ENOENT;
	/* Allocated here, as the lock below is a spinlock; maybe not used. */
	holder = flex_fence_holder_new();
	if (IS_ERR(holder)) {
		kref_put(&q->ref, flex_queue_free);
		return PTR_ERR(holder);
	}
	spin_lock(&q->fdev->sched_lock);
	state = seqno_state(q, args->seqno, &result, &fence);
	if (state == 0) {
		struct flex_job *job = container_of(fence, struct flex_job, fence);

		/* A sync_file may outlive the device file: keep our fence ops. */
		if (!job->holder)
			swap(job->holder, holder);
	}
	spin_unlock(&q->fdev->sched_lock);
	kref_put(&q->ref, flex_queue_free);
	if (holder)
		fput(holder);
	if (state < 0)
		return state;
	if (state == 1) {
		/*
		 * Completed, and its fence may be gone: a signalled stand-in
		 * that carries the CB's result. Nobody else holds the stub yet,
		 * so its error can still be set (dma_fence_set_error() refuses
		 * a signalled fence).
		 */
		fence = dma_fence_allocate_private_stub(ktime_get());
		if (!fence)
			return -ENOMEM;
		fence->error = result;
	}

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		dma_fence_put(fence);
		return fd;
	}
	sync = sync_file_create(fence);
	dma_fence_put(fence);
	if (!sync) {
		put_unused_fd(fd);
		return -ENOMEM;
	}
	/* Installed by the dispatcher once args->fd has been copied out. */
	call->file = sync->file;
	call->fd = fd;
	args->fd = fd;
	return 0;
}

/*
 * poll(): EPOLLIN when a queue of this file completed CBs not yet reported
 * by FLEX_IOCTL_QUEUE_STATUS or FLEX_IOCTL_WAIT; EPOLLPRI as well when a
 * queue holds a sticky fault.
 */
__poll_t flex_queue_poll(struct flex_file *ff)
{
	struct flex_device *fdev = ff->fn->fdev;
	struct flex_queue *q;
	unsigned long id;
	__poll_t mask = 0;

	xa_lock(&ff->queues);
	spin_lock(&fdev->sched_lock);
	xa_for_each(&ff->queues, id, q) {
		if (q->completed > q->poll_mark)
			mask |= EPOLLIN | EPOLLRDNORM;
		if (q->faulted)
			mask |= EPOLLPRI;
	}
	spin_unlock(&fdev->sched_lock);
	xa_unlock(&ff->queues);
	return mask;
}
