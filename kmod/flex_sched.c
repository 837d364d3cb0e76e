// SPDX-License-Identifier: GPL-2.0
/*
 * flex scheduler: the DMA engine and the compute engine.
 *
 * Each engine is a work item on the device's unbound workqueue. It picks
 * the head CB of the highest-priority queue that is ready for it (queues of
 * equal priority take turns), runs it outside any lock, completes it and
 * picks again until nothing is ready. A queue runs one CB at a time, so CBs
 * of a queue keep their order while a DMA of one queue overlaps a compute
 * of another. A WAIT CB is ready once the CB it waits for has signalled;
 * until then a callback on that fence kicks the engines.
 *
 * Lock order: sched_lock, then a fence's lock (arming a callback). Fences
 * are signalled with sched_lock dropped.
 */
#include <linux/sched.h>
#include <linux/slab.h>

#include "flex_drv.h"

void flex_sched_kick(struct flex_device *fdev)
{
	int i;

	for (i = 0; i < FLEX_NR_ENGINES; i++)
		queue_work(fdev->wq, &fdev->engines[i].work);
}

static void dep_signalled(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct flex_job *job = container_of(cb, struct flex_job, dep_cb);

	flex_sched_kick(job->q->fdev);
}

/* Is a WAIT CB's dependency done? If not, have its signal kick us. */
static bool dep_ready(struct flex_job *job)
{
	if (dma_fence_is_signaled(job->dep))
		return true;
	if (job->dep_armed)
		return false;
	job->dep_armed = true;
	if (dma_fence_add_callback(job->dep, &job->dep_cb, dep_signalled)) {
		job->dep_armed = false;	/* signalled meanwhile */
		return true;
	}
	return false;
}

static struct flex_job *pick_job(struct flex_device *fdev, enum flex_engine_id id)
{
	struct flex_queue *q;
	struct flex_job *job;
	int prio;

	lockdep_assert_held(&fdev->sched_lock);
	if (fdev->engines_paused)
		return NULL;
	for (prio = FLEX_NR_PRIORITIES - 1; prio >= 0; prio--) {
		list_for_each_entry(q, &fdev->sched_queues[prio], sched_link) {
			if (q->running || list_empty(&q->pending))
				continue;
			job = list_first_entry(&q->pending, struct flex_job, link);
			if (job->engine != FLEX_NR_ENGINES && job->engine != id)
				continue;
			if (job->dep && !dep_ready(job))
				continue;
			list_del(&job->link);
			q->running = job;
			/* Round robin among queues of one priority. */
			list_move_tail(&q->sched_link, &fdev->sched_queues[prio]);
			return job;
		}
	}
	return NULL;
}

static int run_job(struct flex_job *job)
{
	switch (job->cb.opcode) {
	case FLEX_CB_DMA_TO_DEVICE:
	case FLEX_CB_DMA_FROM_DEVICE:
		return flex_dma_run(job);
	case FLEX_CB_COMPUTE:
		return flex_compute_run(job);
	case FLEX_CB_WAIT:
		if (job->dep_failed || (job->dep && job->dep->error))
			return flex_job_fault(job, -EPIPE, 0, 0);
		return 0;
	default:
		return 0;
	}
}

/* Signals a job's fence, with @err, and drops what it holds. */
static void job_finish(struct flex_job *job, int err)
{
	flex_job_release_resources(job);
	if (err)
		dma_fence_set_error(&job->fence, err);
	dma_fence_signal(&job->fence);
	dma_fence_put(&job->fence);
}

/*
 * The queue stays busy (q->running set) until the very end, so queue
 * teardown, which waits for it to be idle and then frees the queue and
 * maybe its file, cannot run while this still touches either. Returns
 * whether the queue's next CB is for the other engine, which must be kicked.
 */
static bool job_complete(struct flex_job *job, int err, enum flex_engine_id id)
{
	struct flex_queue *q = job->q;
	struct flex_device *fdev = q->fdev;
	struct flex_job *c, *tmp, *next;
	LIST_HEAD(cancelled);
	bool other;

	spin_lock(&fdev->sched_lock);
	q->nr_jobs--;
	q->completed = job->fence.seqno;
	if (err) {
		/* Sticky: record it, and nothing queued behind it runs. */
		q->faulted = true;
		q->fault = job->fault;
		q->fault_errno = err;
		q->fault_seqno = job->fence.seqno;
		q->fault_user_data = job->cb.user_data;
		q->fault_opcode = job->cb.opcode;
		q->stat_faults++;
		list_splice_init(&q->pending, &cancelled);
		q->nr_jobs = 0;
		q->completed = q->submitted;
	}
	spin_unlock(&fdev->sched_lock);

	if (err)
		flex_nl_queue_fault(q);
	job_finish(job, err);
	list_for_each_entry_safe(c, tmp, &cancelled, link) {
		list_del(&c->link);
		job_finish(c, -ECANCELED);
	}
	wake_up_interruptible(&q->ff->poll_wq);

	spin_lock(&fdev->sched_lock);
	q->running = NULL;
	next = list_first_entry_or_null(&q->pending, struct flex_job, link);
	other = next && next->engine != id && next->engine != FLEX_NR_ENGINES;
	wake_up_all(&q->wq);
	spin_unlock(&fdev->sched_lock);
	return other;
}

/* Cancels a queue's jobs that have not started (queue destruction). */
void flex_sched_cancel_pending(struct flex_queue *q)
{
	struct flex_device *fdev = q->fdev;
	struct flex_job *c, *tmp;
	LIST_HEAD(cancelled);

	spin_lock(&fdev->sched_lock);
	list_splice_init(&q->pending, &cancelled);
	list_for_each_entry(c, &cancelled, link)
		q->nr_jobs--;
	spin_unlock(&fdev->sched_lock);

	list_for_each_entry_safe(c, tmp, &cancelled, link) {
		list_del(&c->link);
		job_finish(c, -ECANCELED);
	}
}

static void engine_work(struct work_struct *work)
{
	struct flex_engine *e = container_of(work, struct flex_engine, work);
	struct flex_device *fdev = e->fdev;
	struct flex_job *job;
	int err;

	for (;;) {
		spin_lock(&fdev->sched_lock);
		job = pick_job(fdev, e->id);
		spin_unlock(&fdev->sched_lock);
		if (!job)
			return;
		err = run_job(job);
		if (job_complete(job, err, e->id))
			queue_work(fdev->wq, &fdev->engines[!e->id].work);
		cond_resched();
	}
}

/* debugfs engines_paused: stop picking CBs (the running ones finish). */
void flex_sched_pause(struct flex_device *fdev, bool pause)
{
	spin_lock(&fdev->sched_lock);
	fdev->engines_paused = pause;
	spin_unlock(&fdev->sched_lock);
	if (!pause)
		flex_sched_kick(fdev);
}

void flex_sched_add_queue(struct flex_queue *q)
{
	spin_lock(&q->fdev->sched_lock);
	list_add_tail(&q->sched_link, &q->fdev->sched_queues[q->priority]);
	spin_unlock(&q->fdev->sched_lock);
}

void flex_sched_remove_queue(struct flex_queue *q)
{
	spin_lock(&q->fdev->sched_lock);
	list_del(&q->sched_link);
	spin_unlock(&q->fdev->sched_lock);
}

int flex_sched_init(struct flex_device *fdev)
{
	int i;

	spin_lock_init(&fdev->sched_lock);
	for (i = 0; i < FLEX_NR_PRIORITIES; i++)
		INIT_LIST_HEAD(&fdev->sched_queues[i]);
	for (i = 0; i < FLEX_NR_ENGINES; i++) {
		fdev->engines[i].fdev = fdev;
		fdev->engines[i].id = i;
		INIT_WORK(&fdev->engines[i].work, engine_work);
	}
	fdev->wq = alloc_workqueue("flex%u", WQ_UNBOUND, FLEX_NR_ENGINES,
				   fdev->index);
	return fdev->wq ? 0 : -ENOMEM;
}

/* Every file is closed, so every queue is gone. */
void flex_sched_fini(struct flex_device *fdev)
{
	destroy_workqueue(fdev->wq);
}

/*
 * Records where a CB faulted and returns the errno its waiters get, from
 * the error of a device memory access (see FLEX_FAULT_* in the uapi).
 */
int flex_job_fault(struct flex_job *job, int err, u64 region_id, u64 offset)
{
	u32 code;

	switch (err) {
	case -ENXIO:
		code = FLEX_FAULT_UNMAPPED;
		break;
	case -ERANGE:
		code = FLEX_FAULT_OUT_OF_BOUNDS;
		break;
	case -ENOEXEC:
		code = FLEX_FAULT_BAD_PROGRAM;
		break;
	case -ENOSPC:
		code = FLEX_FAULT_BACKING;
		break;
	case -ENOMEM:
		code = FLEX_FAULT_HOST;
		break;
	case -EPIPE:
		code = FLEX_FAULT_DEPENDENCY;
		break;
	case -E2BIG:
		code = FLEX_FAULT_LIMIT;
		break;
	default:
		WARN_ONCE(1, "flex: unexpected engine error %d\n", err);
		code = FLEX_FAULT_HOST;
		err = -ENOMEM;
	}
	job->fault.code = code;
	job->fault.addr.region_id = region_id;
	job->fault.addr.offset = offset;
	return err;
}
