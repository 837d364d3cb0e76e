// SPDX-License-Identifier: GPL-2.0
/*
 * flex scheduler: the DMA engine and the compute engine.
 *
 * Each engine is a work item on the device's unbound workqueue. It picks
 * the head CB of the highest-priority queue that is ready for it (the
 * least-served function first, its queues taking turns), runs it outside
 * any lock, completes it and picks again until nothing is ready. A queue
 * runs one CB at a time, so CBs of a queue keep their order while a DMA of
 * one queue overlaps a compute of another. NOPs, WAITs and DMAs of at most
 * FLEX_DMA_INLINE_MAX bytes run on either engine. A WAIT CB is ready once
 * the CB it waits for has signalled; until then its queue is blocked, and
 * a callback on that fence kicks the engines.
 *
 * Kicks tell the engines to look for work: a submission that gives an idle
 * queue a head kicks the engines that can run it, the engine that ends a
 * CB kicks the other if its queue's next CB is the other's, and a
 * signalled dependency kicks both. An engine that runs out of work polls
 * for a kick for engine_poll_us before it sleeps, while its CPU is not
 * wanted (engine_poll()).
 *
 * A picked CB starts a run: while the queue would be picked again anyway
 * (no other queue is ready for the engine at its priority or above), the
 * engine goes on with the queue's next CBs that complete at once
 * (instant(): a NOP, a WAIT whose fence has signalled), up to
 * FLEX_SCHED_RUN_MAX, in one lock section each, and signals the run's
 * fences together when it ends, as a ring signals every fence up to the
 * seqno it reached. A DMA or a compute never joins a run, so no fence
 * waits behind one for longer than a run of instant CBs takes.
 *
 * The fence-signalling critical path runs from picking a CB to signalling
 * its fence (dma_fence_begin_signalling() marks it for lockdep): it neither
 * allocates with reclaim nor takes a lock that is held around such an
 * allocation. What a CB holds (pins, region references) is dropped after
 * its fence signals; fault events are sent after that too.
 *
 * A running CB checks flex_job_check() between instructions and inside
 * long loops: a dying queue cancels it (its file is closing or the queue is
 * being destroyed) and a CB running longer than cb_timeout_ms faults with
 * FLEX_FAULT_TIMEOUT, so teardown never waits long and no tenant holds an
 * engine for long.
 *
 * Fences of one queue (one fence context) signal in seqno order on every
 * path: completion, a fault cancelling what is queued behind it, and
 * teardown, which cancels the queued CBs only once the running one has
 * signalled.
 *
 * Lock order: sched_lock, then a fence's lock (arming a callback). Fences
 * are signalled with sched_lock dropped.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/memcontrol.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "flex_drv.h"

/*
 * Has engine @e look for work again: a polling engine sees the kick count
 * change, any other has its work queued. The kick is counted (a fully
 * ordered increment) before polling is read, and an engine clears polling
 * before it reads the count a last time (engine_poll()): one of the two
 * sees the other, so no kick is lost.
 */
static void engine_kick(struct flex_engine *e)
{
	atomic_inc_return(&e->fdev->kicks);
	if (!READ_ONCE(e->polling))
		queue_work(e->fdev->wq, &e->work);
}

/* Kicks engine @id, or both if @id is FLEX_NR_ENGINES. */
void flex_sched_kick_engine(struct flex_device *fdev, int id)
{
	int i;

	for (i = 0; i < FLEX_NR_ENGINES; i++)
		if (id == i || id == FLEX_NR_ENGINES)
			engine_kick(&fdev->engines[i]);
}

void flex_sched_kick(struct flex_device *fdev)
{
	flex_sched_kick_engine(fdev, FLEX_NR_ENGINES);
}

/*
 * An engine that runs out of work polls for a kick for up to
 * engine_poll_us before it sleeps, as a command processor watches its
 * doorbell (or io_uring's SQPOLL thread its ring) for a while: work
 * submitted in that time starts without a wake-up, the costliest step of
 * a short round trip. It polls only while no other task wants the CPU.
 * @seen is the kick count from before the engine last looked for work;
 * returns whether it was kicked since.
 */
static bool engine_poll(struct flex_engine *e, int seen)
{
	unsigned int us = READ_ONCE(flex_params.engine_poll_us);
	atomic_t *kicks = &e->fdev->kicks;
	u64 end;

	if (!us)
		return false;
	end = local_clock() + (u64)us * NSEC_PER_USEC;
	/* Pairs with engine_kick(): polling is set before kicks is read. */
	smp_store_mb(e->polling, true);
	while (atomic_read(kicks) == seen && !need_resched() && local_clock() < end)
		cpu_relax();
	/* Pairs with engine_kick(): a kick that saw polling is counted now. */
	smp_store_mb(e->polling, false);
	return atomic_read(kicks) != seen;
}

static void dep_signalled(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct flex_device *fdev = container_of(cb, struct flex_job, dep_cb)->q->fdev;

	/*
	 * Under the fence's lock, which nests inside sched_lock: so no
	 * sched_lock here. The next pick_job() looks at the blocked queues.
	 */
	atomic_set(&fdev->deps_signalled, 1);
	flex_sched_kick(fdev);
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

/* Takes @q off every list pick_job() looks at. */
static void queue_unlink(struct flex_queue *q)
{
	struct flex_fn *fn = q->ff->fn;
	u32 p = q->priority;
	int e;

	lockdep_assert_held(&q->fdev->sched_lock);
	list_del_init(&q->blocked_link);
	for (e = 0; e < FLEX_NR_ENGINES; e++) {
		if (list_empty(&q->ready_link[e]))
			continue;
		list_del_init(&q->ready_link[e]);
		if (list_empty(&fn->ready[e][p]))
			list_del_init(&fn->ready_link[e][p]);
	}
}

/* Puts @q, whose head CB @head can run now, on the lists of its engines. */
static void queue_make_ready(struct flex_queue *q, struct flex_job *head)
{
	struct flex_device *fdev = q->fdev;
	struct flex_fn *fn = q->ff->fn;
	u32 p = q->priority;
	int e;

	lockdep_assert_held(&fdev->sched_lock);
	for (e = 0; e < FLEX_NR_ENGINES; e++) {
		if (head->engine != FLEX_NR_ENGINES && head->engine != e)
			continue;
		if (list_empty(&fn->ready[e][p]))
			list_add_tail(&fn->ready_link[e][p], &fdev->ready_fns[e][p]);
		list_add_tail(&q->ready_link[e], &fn->ready[e][p]);
	}
}

/*
 * Files @q where pick_job() will find it, after its head CB or its state
 * changed: nowhere while it runs a CB, is dying or has nothing queued; on
 * the blocked list while its head is a WAIT whose fence has not
 * signalled; else at the tail of its function's ready lists for the
 * engines its head can run on.
 */
void flex_sched_queue_update(struct flex_queue *q)
{
	struct flex_job *head;

	lockdep_assert_held(&q->fdev->sched_lock);
	queue_unlink(q);
	if (q->running || q->dying || list_empty(&q->pending))
		return;
	head = list_first_entry(&q->pending, struct flex_job, link);
	if (head->dep && !dep_ready(head))
		list_add_tail(&q->blocked_link, &q->fdev->blocked);
	else
		queue_make_ready(q, head);
}

/* Moves the blocked queues whose WAIT has become ready to the ready lists. */
static void wake_blocked(struct flex_device *fdev)
{
	struct flex_queue *q, *tmp;
	struct flex_job *head;

	lockdep_assert_held(&fdev->sched_lock);
	list_for_each_entry_safe(q, tmp, &fdev->blocked, blocked_link) {
		head = list_first_entry(&q->pending, struct flex_job, link);
		if (dma_fence_is_signaled(head->dep)) {
			list_del_init(&q->blocked_link);
			queue_make_ready(q, head);
		}
	}
}

/*
 * How much engine time a function that was idle may claim ahead of the
 * others when it comes back: without a bound it would have the engines to
 * itself until its vtime caught up.
 */
#define FLEX_SCHED_SLACK_NS	(50 * NSEC_PER_MSEC)

/* The most CBs one run signals together. */
#define FLEX_SCHED_RUN_MAX	64

/* A function's engine time as the scheduler weighs it. */
static u64 fn_vtime(const struct flex_device *fdev, const struct flex_fn *fn)
{
	return max(fn->vtime, fdev->vclock - min(fdev->vclock, FLEX_SCHED_SLACK_NS));
}

/*
 * Picks the next CB for engine @id. The highest priority with a ready CB
 * wins (above-normal priority needs CAP_SYS_NICE); within it, the function
 * (PF or VF) that has had the least engine time, so tenants share the
 * device fairly however many queues each has; within a function, its
 * queues take turns. Only functions with a ready queue are looked at, and
 * the blocked queues only after a fence they wait for signalled.
 */
static struct flex_job *pick_job(struct flex_device *fdev, enum flex_engine_id id)
{
	struct flex_fn *fn, *best = NULL;
	struct flex_queue *q;
	struct flex_job *job;
	u64 vt, best_vt = 0;
	int prio;

	lockdep_assert_held(&fdev->sched_lock);
	if (fdev->engines_paused)
		return NULL;
	if (atomic_xchg(&fdev->deps_signalled, 0))
		wake_blocked(fdev);
	for (prio = FLEX_NR_PRIORITIES - 1; prio >= 0; prio--) {
		list_for_each_entry(fn, &fdev->ready_fns[id][prio], ready_link[id][prio]) {
			vt = fn_vtime(fdev, fn);
			if (!best || vt < best_vt) {
				best = fn;
				best_vt = vt;
			}
		}
		if (best)
			break;
	}
	if (!best)
		return NULL;
	q = list_first_entry(&best->ready[id][prio], struct flex_queue, ready_link[id]);
	job = list_first_entry(&q->pending, struct flex_job, link);
	/* Its turn is over: it rejoins at the tail when the CB completes. */
	queue_unlink(q);
	list_del(&job->link);
	q->running = job;
	/* local_clock(): cheap, and a little drift between CPUs is harmless. */
	job->started = local_clock();
	job->deadline = jiffies + msecs_to_jiffies(READ_ONCE(flex_params.cb_timeout_ms));
	best->vtime = best_vt;
	fdev->vclock = max(fdev->vclock, best_vt);
	return job;
}

/* Whether @job completes at once when it runs: a NOP, or a WAIT that is ready. */
static bool instant(const struct flex_job *job)
{
	if (job->cb.opcode == FLEX_CB_NOP)
		return true;
	return job->cb.opcode == FLEX_CB_WAIT &&
	       (!job->dep || dma_fence_is_signaled(job->dep));
}

/*
 * The CB that goes on with @q's run on engine @id after @n CBs, taken off
 * the queue and made its running CB, or NULL when the run ends. See the
 * header: only CBs that complete at once join a run, and only while
 * pick_job() would pick @q again.
 */
static struct flex_job *run_next(struct flex_queue *q, enum flex_engine_id id,
				 unsigned int n, u64 now)
{
	struct flex_device *fdev = q->fdev;
	struct flex_job *next;
	int prio;

	lockdep_assert_held(&fdev->sched_lock);
	if (n >= FLEX_SCHED_RUN_MAX || fdev->engines_paused || q->dying ||
	    atomic_read(&fdev->deps_signalled))
		return NULL;
	next = list_first_entry_or_null(&q->pending, struct flex_job, link);
	if (!next || !instant(next))
		return NULL;
	for (prio = q->priority; prio < FLEX_NR_PRIORITIES; prio++)
		if (!list_empty(&fdev->ready_fns[id][prio]))
			return NULL;
	list_del(&next->link);
	q->running = next;
	next->started = now;
	next->deadline = jiffies + msecs_to_jiffies(READ_ONCE(flex_params.cb_timeout_ms));
	return next;
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
			return flex_job_fault(job, -EPIPE, FLEX_NO_REGION, 0);
		return 0;
	default:
		return 0;
	}
}

/*
 * Cancellation and timeout, checked by a running CB between instructions
 * and inside long loops. Returns 0 to go on, -ECANCELED when its queue is
 * being torn down, or the timeout fault.
 */
int flex_job_check(struct flex_job *job)
{
	if (READ_ONCE(job->q->dying))
		return -ECANCELED;
	if (time_after(jiffies, job->deadline))
		return flex_job_fault(job, -ETIMEDOUT, FLEX_NO_REGION, 0);
	return 0;
}

/* Signals a job's fence with @err; on the fence-signalling path. */
static void job_signal(struct flex_job *job, int err, ktime_t now)
{
	if (err)
		dma_fence_set_error(&job->fence, err);
	dma_fence_signal_timestamp(&job->fence, now);
}

/* After signalling: drop what the job holds, and the engine's reference. */
static void job_retire(struct flex_job *job)
{
	flex_job_release_resources(job);
	dma_fence_put(&job->fence);
}

/*
 * Signals @done (a run, the last of it with @err) and then @cancelled (the
 * CBs queued behind it), in order and at one time; what they held is
 * released only after that: seqno order within the context, and nothing
 * that may sleep on reclaim before the last signal.
 */
static void signal_in_order(struct list_head *done, int err, struct list_head *cancelled)
{
	ktime_t now = ktime_get();
	struct flex_job *j;

	list_for_each_entry(j, done, link)
		job_signal(j, list_is_last(&j->link, done) ? err : 0, now);
	list_for_each_entry(j, cancelled, link)
		job_signal(j, -ECANCELED, now);
}

static void retire_all(struct list_head *jobs)
{
	struct flex_job *j, *tmp;

	list_for_each_entry_safe(j, tmp, jobs, link) {
		list_del(&j->link);
		job_retire(j);
	}
}

/*
 * Accounts for @job, which engine @id ran until @now with result @err. A
 * fault records itself, fails the queue's fences up to the last submitted
 * and moves the CBs queued behind it to @cancelled. Returns whether a fault
 * event is due.
 */
static bool job_done(struct flex_job *job, int err, enum flex_engine_id id, u64 now,
		     struct list_head *cancelled)
{
	struct flex_queue *q = job->q;
	u64 ns = now > job->started ? now - job->started : 0;

	lockdep_assert_held(&q->fdev->sched_lock);
	q->ff->fn->vtime += ns;
	flex_file_account_engine(q->ff, id, ns);
	q->nr_jobs--;
	q->completed = job->fence.seqno;
	if (!err)
		return false;
	/*
	 * Nothing queued behind it runs, and waits on all of them see the
	 * error, even after a reset. A fault (not a cancellation) is also
	 * sticky until QUEUE_RESET.
	 */
	flex_queue_record_fault(q, job->fence.seqno, q->submitted, err);
	list_splice_init(&q->pending, cancelled);
	q->nr_jobs = 0;
	q->completed = q->submitted;
	if (err == -ECANCELED)
		return false;
	q->faulted = true;
	q->fault = job->fault;
	q->fault_errno = err;
	q->fault_seqno = job->fence.seqno;
	q->fault_user_data = job->cb.user_data;
	q->fault_opcode = job->cb.opcode;
	q->stat_faults++;
	return true;
}

/*
 * Ends a run of @q on engine @id: signals @done (its last CB with @err) and
 * @cancelled, ends the signalling section (@cookie), then releases what
 * they held and reports a fault. The queue stays busy (q->running set)
 * until the very end, so queue teardown, which waits for it to be idle
 * before cancelling what is queued and freeing the queue (and maybe its
 * file), can neither signal a later fence first nor run while this still
 * touches either. Returns whether the queue's next CB is for the other
 * engine, which must be kicked.
 */
static bool run_end(struct flex_queue *q, enum flex_engine_id id, struct list_head *done,
		    int err, struct list_head *cancelled, bool fault_event, bool cookie)
{
	struct flex_device *fdev = q->fdev;
	struct flex_job *next;
	bool other;

	signal_in_order(done, err, cancelled);
	dma_fence_end_signalling(cookie);

	retire_all(done);
	retire_all(cancelled);
	if (fault_event)
		flex_nl_queue_fault(q);
	/*
	 * Most runs have no one to wake: the barrier in wq_has_sleeper()
	 * pairs with the sleeper's, and saves taking the wait queue's lock,
	 * irqs off, twice per run.
	 */
	if (wq_has_sleeper(&q->ff->poll_wq))
		wake_up_interruptible(&q->ff->poll_wq);

	spin_lock(&fdev->sched_lock);
	q->running = NULL;
	flex_sched_queue_update(q);
	next = list_first_entry_or_null(&q->pending, struct flex_job, link);
	other = next && next->engine != id && next->engine != FLEX_NR_ENGINES;
	if (wq_has_sleeper(&q->wq))
		wake_up_all(&q->wq);
	spin_unlock(&fdev->sched_lock);
	return other;
}

/*
 * Runs @job, which pick_job() gave engine @id, and the run it starts (see
 * the header), then ends the run. Returns run_end()'s answer.
 */
static bool engine_run(struct flex_engine *e, struct flex_job *job, bool cookie)
{
	struct flex_device *fdev = e->fdev;
	struct flex_queue *q = job->q;
	struct mem_cgroup *old_memcg;
	LIST_HEAD(cancelled);
	bool fault_event;
	unsigned int n = 0;
	LIST_HEAD(done);
	struct flex_job *next;
	int err;
	u64 now;

	/* Device memory the CBs back is charged to the file's owner. */
	old_memcg = set_active_memcg(q->ff->memcg);
	for (;;) {
		err = run_job(job);
		now = local_clock();

		spin_lock(&fdev->sched_lock);
		list_add_tail(&job->link, &done);
		fault_event = job_done(job, err, e->id, now, &cancelled);
		next = err ? NULL : run_next(q, e->id, ++n, now);
		spin_unlock(&fdev->sched_lock);
		if (!next)
			break;
		job = next;
	}
	set_active_memcg(old_memcg);
	return run_end(q, e->id, &done, err, &cancelled, fault_event, cookie);
}

/* Cancels a queue's jobs that have not started (queue destruction). */
void flex_sched_cancel_pending(struct flex_queue *q)
{
	struct flex_device *fdev = q->fdev;
	LIST_HEAD(cancelled);
	LIST_HEAD(none);
	bool cookie;

	spin_lock(&fdev->sched_lock);
	if (!list_empty(&q->pending))
		flex_queue_record_fault(q, list_first_entry(&q->pending, struct flex_job,
							    link)->fence.seqno,
					q->submitted, -ECANCELED);
	list_splice_init(&q->pending, &cancelled);
	q->nr_jobs = 0;
	q->completed = q->submitted;
	flex_sched_queue_update(q);
	spin_unlock(&fdev->sched_lock);

	cookie = dma_fence_begin_signalling();
	signal_in_order(&none, 0, &cancelled);
	dma_fence_end_signalling(cookie);
	retire_all(&cancelled);
}

static void engine_work(struct work_struct *work)
{
	struct flex_engine *e = container_of(work, struct flex_engine, work);
	struct flex_device *fdev = e->fdev;
	struct flex_job *job;
	bool cookie;
	int seen;

	for (;;) {
		/* Read before the lists: a kick after this is seen by the poll. */
		seen = atomic_read_acquire(&fdev->kicks);
		cookie = dma_fence_begin_signalling();
		spin_lock(&fdev->sched_lock);
		job = pick_job(fdev, e->id);
		spin_unlock(&fdev->sched_lock);
		if (!job) {
			dma_fence_end_signalling(cookie);
			if (engine_poll(e, seen))
				continue;
			return;
		}
		if (engine_run(e, job, cookie))
			engine_kick(&fdev->engines[!e->id]);
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

/*
 * Queue teardown: the queue's running CB stops at its next check
 * (flex_job_check()) and no CB of it is picked again.
 */
void flex_sched_queue_stop(struct flex_queue *q)
{
	spin_lock(&q->fdev->sched_lock);
	q->dying = true;
	queue_unlink(q);
	spin_unlock(&q->fdev->sched_lock);
}

int flex_sched_init(struct flex_device *fdev)
{
	int i;

	spin_lock_init(&fdev->sched_lock);
	for (i = 0; i < FLEX_NR_ENGINES * FLEX_NR_PRIORITIES; i++)
		INIT_LIST_HEAD(&fdev->ready_fns[i / FLEX_NR_PRIORITIES][i % FLEX_NR_PRIORITIES]);
	INIT_LIST_HEAD(&fdev->blocked);
	atomic_set(&fdev->deps_signalled, 0);
	atomic_set(&fdev->kicks, 0);
	for (i = 0; i < FLEX_NR_ENGINES; i++) {
		fdev->engines[i].fdev = fdev;
		fdev->engines[i].polling = false;
		fdev->engines[i].id = i;
		INIT_WORK(&fdev->engines[i].work, engine_work);
	}
	/*
	 * The engines signal fences: they must progress under reclaim too.
	 * A kick queues a busy engine's work again, and that counts as
	 * active while the engine runs: room for two per engine, or the
	 * idle engine's work waits until the busy one runs out of work.
	 */
	fdev->wq = alloc_workqueue("flex%u", WQ_UNBOUND | WQ_MEM_RECLAIM,
				   2 * FLEX_NR_ENGINES, fdev->index);
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
 * @region_id is FLEX_NO_REGION when the fault is at no device address
 * (a limit, a bad program length, a timeout); @offset may then hold the
 * raw operand that was no address.
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
	case -ETIMEDOUT:
		code = FLEX_FAULT_TIMEOUT;
		break;
	default:
		WARN_ONCE(1, "flex: unexpected engine error %d\n", err);
		code = FLEX_FAULT_HOST;
		err = -ENOMEM;
	}
	job->fault.code = code;
	job->fault.addr_valid = region_id != FLEX_NO_REGION;
	job->fault.addr.region_id = job->fault.addr_valid ? region_id : 0;
	job->fault.addr.offset = offset;
	return err;
}
