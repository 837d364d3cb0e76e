// SPDX-License-Identifier: GPL-2.0
/*
 * FlexStream: one driver queue, a FIFO of work the caller could not submit
 * itself, and the worker thread that drains it. (Uploads may run on a
 * second queue, each joined into this one by a WAIT CB in its place:
 * overlap.c. Everything here is about the main queue.)
 *
 * Sequence numbers are predicted: only this stream submits to its queue,
 * and the driver numbers CBs consecutively, so the CB enqueued now gets
 * assigned + 1 whether the caller submits it at once or the worker does
 * later. Events and deferred frees use these predicted numbers. A host
 * function is followed by a NOP CB (submitted after it ran), so that it
 * too has a sequence number that completes only once it has run.
 *
 * Order: the caller submits directly only when nothing is held back (the
 * item FIFO is empty); otherwise it appends, and the worker submits items
 * one after the other, keeping an item at the head of the FIFO until it is
 * done, so a caller never overtakes it.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/flex.h>
#include <linux/sync_file.h>
#include <flex/device.h>
#include <flex/stream.h>

#include "log.h"
#include "stream_internal.h"

/* Enough for a 64-tile launch to go to the driver without parking. */
#define STREAM_QUEUE_DEPTH	FLEX_QUEUE_MAX_DEPTH
/* Reap deferred buffers lazily: one status ioctl per this many launches. */
#define REAP_EVERY		32

static const char *const fault_names[] = {
	[FLEX_FAULT_NONE] = "none",
	[FLEX_FAULT_UNMAPPED] = "unmapped",
	[FLEX_FAULT_OUT_OF_BOUNDS] = "out of bounds",
	[FLEX_FAULT_BAD_PROGRAM] = "bad program",
	[FLEX_FAULT_BACKING] = "backing",
	[FLEX_FAULT_HOST] = "host memory",
	[FLEX_FAULT_DEPENDENCY] = "dependency",
	[FLEX_FAULT_LIMIT] = "limit",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int flex_stream_poisoned(const struct flex_stream *s)
{
	return s->dev_faulted || s->has_host_err;
}

int flex_stream_poisoned_error(const struct flex_stream *s)
{
	return flex_error_set(-EIO, "stream %u is poisoned: synchronize or query for the error, "
			 "reset to recover", s->qid);
}

int flex_stream_begin_job(struct flex_stream *s, const char *name, size_t n, struct flex_cb **cbs,
		     uint64_t *launch)
{
	*cbs = flex_stream_scratch(s, n);
	if (!*cbs)
		return flex_error_set(-ENOMEM, "job %s: no memory for %zu CBs", name, n);
	if (flex_stream_poisoned(s))
		return flex_stream_poisoned_error(s);
	*launch = flex_stream_new_launch(s, name);
	return 0;
}

uint64_t flex_stream_new_launch(struct flex_stream *s, const char *name)
{
	uint64_t seq = ++s->launch_seq;
	unsigned int i = seq % NAME_RING;

	s->names[i].launch = seq;
	snprintf(s->names[i].name, sizeof(s->names[i].name), "%s", name);
	return seq;
}

/* Fill @e from a CB's user_data (everything but the error itself). */
static void describe(const struct flex_stream *s, uint64_t user_data,
		     struct flex_stream_error *e)
{
	uint64_t low = user_data >> 38;
	uint64_t launch = (s->launch_seq & ~((1ULL << 26) - 1)) | low;
	unsigned int i;

	if (launch > s->launch_seq)	/* the counter's high bits moved on since */
		launch -= 1ULL << 26;
	i = launch % NAME_RING;
	e->launch_seq = launch;
	e->step = (user_data >> 32) & 63;
	e->step_kind = (enum flex_step_kind)((user_data >> 29) & 7);
	e->tile = user_data & ((1ULL << 29) - 1);
	snprintf(e->job, sizeof(e->job), "%s",
		 s->names[i].launch == launch ? s->names[i].name : "(unknown job)");
}

void flex_stream_host_error(struct flex_stream *s, int err, uint64_t user_data, const char *fmt, ...)
{
	struct flex_stream_error *e = &s->host_err;
	char what[160], line[512];
	va_list ap;

	if (s->has_host_err)
		return;		/* the first failure is the one reported */
	memset(e, 0, sizeof(*e));
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	describe(s, user_data, e);
	e->error = err;
	e->fault_code = FLEX_FAULT_NONE;
	snprintf(line, sizeof(line),
		 "job %s (launch %llu) step %u (%s) tile %llu: %s (%s)", e->job,
		 (unsigned long long)e->launch_seq, e->step,
		 flex_step_kind_name(e->step_kind) ?: "?", (unsigned long long)e->tile,
		 what, strerror(-err));
	snprintf(e->message, sizeof(e->message), "%.255s", line);
	s->has_host_err = 1;
	pthread_cond_broadcast(&s->cond);
}

/* The driver's sticky fault, as a stream error. */
static void fault_error(const struct flex_stream *s, const struct flex_queue_status *st,
			struct flex_stream_error *e)
{
	memset(e, 0, sizeof(*e));
	describe(s, st->fault_user_data, e);
	e->error = st->fault_errno;
	e->fault_code = st->fault_code;
	e->seqno = st->fault_seqno;
	e->insn = st->fault_insn;
	e->addr.region_id = st->fault_addr.region_id;
	e->addr.offset = st->fault_addr.offset;
	snprintf(e->message, sizeof(e->message),
		 "job %s (launch %llu) step %u (%s) tile %llu: device fault %s (%s) at seqno "
		 "%llu insn %u address region %#llx + %#llx", e->job,
		 (unsigned long long)e->launch_seq, e->step,
		 flex_step_kind_name(e->step_kind) ?: "?", (unsigned long long)e->tile,
		 st->fault_code < sizeof(fault_names) / sizeof(fault_names[0]) ?
		 fault_names[st->fault_code] : "?", strerror(-st->fault_errno),
		 (unsigned long long)e->seqno, e->insn,
		 (unsigned long long)e->addr.region_id, (unsigned long long)e->addr.offset);
}

/*
 * The stream's failure (lock held): the device fault if the queue has one
 * (it happened first: a host function runs only after everything before it
 * succeeded), else the host-side one. Returns its errno, or 0.
 */
static int current_error(struct flex_stream *s, const struct flex_queue_status *st,
			 struct flex_stream_error *err)
{
	struct flex_stream_error tmp, *e = err ? err : &tmp;

	if (st && st->fault_code) {
		fault_error(s, st, e);
		return e->error;
	}
	if (s->has_host_err) {
		*e = s->host_err;
		return e->error;
	}
	memset(e, 0, sizeof(*e));
	return 0;
}

struct flex_cb *flex_stream_scratch(struct flex_stream *s, size_t n)
{
	if (n > s->scratch_n) {
		struct flex_cb *p = realloc(s->scratch, n * sizeof(*p));

		if (!p)
			return NULL;
		s->scratch = p;
		s->scratch_n = n;
	}
	return s->scratch;
}

/* ---- deferred frees ---- */

void flex_stream_defer_at(struct flex_stream *s, uint64_t seq, void *buf, flex_alloc_index_t slot)
{
	struct deferred *d = malloc(sizeof(*d)), **pp;

	if (!d) {
		/* Cannot track it: wait until the device is done instead. */
		pthread_mutex_unlock(&s->lock);
		flex_stream_wait_submitted(s, seq);
		if (seq && atomic_load(&s->submitted) >= seq)
			flex_device_wait(s->dev, s->qid, seq, -1);
		pthread_mutex_lock(&s->lock);
		free(buf);
		if (slot != FLEX_ALLOC_INDEX_NONE)
			flex_alloc_block_free(s->ctx->alloc, slot);
		return;
	}
	d->next = NULL;
	d->seq = seq;
	d->buf = buf;
	d->slot = slot;
	s->n_def++;
	if (!s->def_tail || s->def_tail->seq <= seq) {
		if (s->def_tail)
			s->def_tail->next = d;
		else
			s->def_head = d;
		s->def_tail = d;
		return;
	}
	/* The worker's window of a generator, behind work enqueued since. */
	for (pp = &s->def_head; (*pp)->seq <= seq; pp = &(*pp)->next)
		;
	d->next = *pp;
	*pp = d;
}

void flex_stream_defer(struct flex_stream *s, void *buf, flex_alloc_index_t slot)
{
	flex_stream_defer_at(s, s->assigned, buf, slot);
}

/*
 * Has CB @seq completed (or been cancelled), or was it never submitted and
 * never will be (discarded)? @completed: the queue's last completion.
 */
int flex_stream_seq_done(const struct flex_stream *s, uint64_t seq, uint64_t completed)
{
	uint64_t sub = atomic_load(&s->submitted);

	if (seq > sub && s->head)
		return 0;	/* still held back: it will be submitted */
	return (seq < sub ? seq : sub) <= completed;
}

/* Free what the device can no longer use. */
static void reap_upto(struct flex_stream *s, uint64_t completed)
{
	struct deferred *d;

	while ((d = s->def_head) && flex_stream_seq_done(s, d->seq, completed)) {
		s->def_head = d->next;
		if (!s->def_head)
			s->def_tail = NULL;
		s->n_def--;
		free(d->buf);
		if (d->slot != FLEX_ALLOC_INDEX_NONE)
			flex_alloc_block_free(s->ctx->alloc, d->slot);
		free(d);
	}
}

void flex_stream_reap_now(struct flex_stream *s)
{
	struct flex_queue_status st;

	if (!flex_stream_status(s, &st)) {
		if (st.completed > s->completed)
			s->completed = st.completed;
		if (st.fault_code)
			s->dev_faulted = 1;
	}
	reap_upto(s, s->completed);
}

void flex_stream_reap(struct flex_stream *s)
{
	if (s->n_def >= REAP_EVERY)
		flex_stream_reap_now(s);
}

/* ---- submission ---- */

static void wake(struct flex_stream *s)
{
	pthread_cond_broadcast(&s->cond);
}

static void append(struct flex_stream *s, struct item *it)
{
	it->next = NULL;
	if (s->tail)
		s->tail->next = it;
	else
		s->head = it;
	s->tail = it;
	wake(s);
}

static void note_submitted(struct flex_stream *s, const struct flex_cb *cbs, uint32_t n,
			   uint64_t seq)
{
	uint32_t i;

	atomic_store(&s->submitted, seq);
	s->stats.cbs += n;
	s->stats.submits++;
	for (i = 0; i < n; i++)
		if (cbs[i].opcode == FLEX_CB_DMA_TO_DEVICE ||
		    cbs[i].opcode == FLEX_CB_DMA_FROM_DEVICE)
			s->stats.bytes_dma += cbs[i].dma.size;
}

/* Park @n CBs for the worker (copied). */
static int park_cbs(struct flex_stream *s, const struct flex_cb *cbs, uint32_t n)
{
	struct item *it = calloc(1, sizeof(*it));

	if (it)
		it->cbs = malloc(n * sizeof(*cbs));
	if (!it || !it->cbs) {
		free(it);
		return -ENOMEM;
	}
	memcpy(it->cbs, cbs, n * sizeof(*cbs));
	it->kind = ITEM_CBS;
	it->n = n;
	s->assigned += n;
	s->stats.parked_cbs += n;
	append(s, it);
	return 0;
}

int flex_stream_enqueue_cbs(struct flex_stream *s, struct flex_cb *cbs, uint32_t n)
{
	uint32_t done = 0;
	int err;

	if (flex_stream_poisoned(s))
		return flex_stream_poisoned_error(s);
	/* A wait for another queue: what it orders is unknown to uploads (overlap.c). */
	for (uint32_t i = 0; i < n; i++)
		if (cbs[i].opcode == FLEX_CB_WAIT && !(s->has_dq && cbs[i].wait.queue_id == s->dq))
			flex_overlap_barrier(s, s->assigned + i + 1);
	while (!s->head && done < n) {
		uint32_t k = n - done < FLEX_SUBMIT_MAX_CBS ? n - done : FLEX_SUBMIT_MAX_CBS;
		uint64_t seq;

		err = flex_device_submit(s->dev, s->qid, cbs + done, k, 0, &seq);
		if (err == -EAGAIN)
			break;		/* queue full: the worker waits for room */
		if (err == -EIO) {
			s->dev_faulted = 1;
			wake(s);
			return flex_error_set(-EIO, "stream %u: the device queue is faulted", s->qid);
		}
		if (err) {
			if (done)	/* half a launch queued: it cannot complete */
				flex_stream_host_error(s, err, cbs[done].user_data,
						  "the driver refused a CB batch");
			return flex_error_set(err, "stream %u: FLEX_IOCTL_SUBMIT of %u CBs: %s",
					 s->qid, k, strerror(-err));
		}
		note_submitted(s, cbs + done, k, seq);
		s->assigned = seq;
		done += k;
	}
	if (done < n) {
		err = park_cbs(s, cbs + done, n - done);
		if (err) {
			if (done)
				flex_stream_host_error(s, err, cbs[done].user_data,
						  "out of memory parking CBs");
			return flex_error_set(err, "stream %u: out of memory parking %u CBs",
					 s->qid, n - done);
		}
	}
	return 0;
}

/* ---- generators ---- */

/* Lock held: is there room for one more split-DMA piece in flight? */
static int pin_room(struct flex_stream *s)
{
	int i, used = 0;

	for (i = 0; i < PIN_WINDOWS; i++) {
		if (s->pin_seq[i] && s->pin_seq[i] <= s->completed)
			s->pin_seq[i] = 0;
		used += !!s->pin_seq[i];
	}
	return used < PIN_WINDOWS;
}

static void pin_push(struct flex_stream *s, uint64_t seq)
{
	int i;

	for (i = 0; i < PIN_WINDOWS && s->pin_seq[i]; i++)
		;
	if (i < PIN_WINDOWS)
		s->pin_seq[i] = seq;
}

/* The worker, lock not held: wait until a piece may be added. */
static int pin_wait(struct flex_stream *s)
{
	uint64_t oldest = 0;
	int i, err;

	pthread_mutex_lock(&s->lock);
	if (!pin_room(s))
		for (i = 0; i < PIN_WINDOWS; i++)
			if (!oldest || s->pin_seq[i] < oldest)
				oldest = s->pin_seq[i];
	pthread_mutex_unlock(&s->lock);
	if (!oldest)
		return 0;
	err = flex_device_wait(s->dev, s->qid, oldest, -1);
	pthread_mutex_lock(&s->lock);
	if (!err && oldest > s->completed)
		s->completed = oldest;
	pin_room(s);
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* A window the driver took: account for it and hand over its buffer. */
static void window_submitted(struct flex_stream *s, const struct gen *g,
			     const struct flex_cb *cbs, uint32_t n, uint64_t seq, void *staging)
{
	note_submitted(s, cbs, n, seq);
	if (staging)
		flex_stream_defer_at(s, seq, staging, FLEX_ALLOC_INDEX_NONE);
	if (g->pins)
		pin_push(s, seq);
}

static void free_gen_item(struct item *it)
{
	free(it->staging);
	if (it->gen)
		it->gen->free(it->gen);
}

/* Hand the rest of @g (and a built window not yet taken) to the worker. */
static int park_gen(struct flex_stream *s, const struct gen *g, const struct flex_cb *cbs,
		    uint32_t n, void *staging)
{
	struct item *it = calloc(1, sizeof(*it));

	if (it)
		it->cbs = malloc(FLEX_SUBMIT_MAX_CBS * sizeof(*cbs));
	if (it && it->cbs)
		it->gen = g->park(g);
	if (!it || !it->gen) {
		if (it)
			free(it->cbs);
		free(it);
		free(staging);
		return -ENOMEM;
	}
	memcpy(it->cbs, cbs, n * sizeof(*cbs));
	it->kind = ITEM_GEN;
	it->n = n;
	it->staging = staging;
	it->user_data = n ? cbs[0].user_data : 0;
	s->assigned += n + g->left;
	s->stats.parked_cbs += n + g->left;
	append(s, it);
	return 0;
}

int flex_stream_enqueue_gen(struct flex_stream *s, struct gen *g)
{
	struct flex_cb *cbs = flex_stream_scratch(s, FLEX_SUBMIT_MAX_CBS);
	void *staging = NULL;
	int started = 0, err = 0;
	uint32_t n = 0;
	uint64_t seq;

	if (flex_stream_poisoned(s))
		return flex_stream_poisoned_error(s);
	if (!cbs)
		return flex_error_set(-ENOMEM, "stream %u: no memory for a window of CBs", s->qid);
	while (!s->head && g->left && (!g->pins || pin_room(s))) {
		err = g->next(g, cbs, FLEX_SUBMIT_MAX_CBS, &n, &staging);
		if (err)
			break;
		err = flex_device_submit(s->dev, s->qid, cbs, n, 0, &seq);
		if (err == -EAGAIN) {
			err = 0;
			break;		/* queue full: the worker waits for room */
		}
		if (err) {
			free(staging);
			if (err == -EIO) {
				s->dev_faulted = 1;
				wake(s);
			}
			break;
		}
		s->assigned = seq;
		window_submitted(s, g, cbs, n, seq, staging);
		started = 1;
		n = 0;
		staging = NULL;
	}
	if (!err && (n || g->left))
		err = park_gen(s, g, cbs, n, staging);
	if (err && started)	/* part of it queued: it cannot complete */
		flex_stream_host_error(s, err, cbs[0].user_data, "could not queue the rest (%s)",
				  strerror(-err));
	if (err == -EIO)
		return flex_error_set(-EIO, "stream %u: the device queue is faulted", s->qid);
	if (err)
		return flex_error_set(err, "stream %u: queueing CBs: %s", s->qid, strerror(-err));
	return 0;
}

int flex_stream_enqueue_item(struct flex_stream *s, struct item *it)
{
	if (flex_stream_poisoned(s)) {
		free(it);
		return flex_stream_poisoned_error(s);
	}
	s->assigned++;		/* the NOP after a host function, or the WAIT CB */
	/* A host function, another stream's or file's work: a barrier to uploads. */
	flex_overlap_barrier(s, s->assigned);
	append(s, it);
	return 0;
}

/* Without the lock: wait until @seq has been handed to the driver (or never will). */
int flex_stream_wait_submitted(struct flex_stream *s, uint64_t seq)
{
	int ret = 0;

	pthread_mutex_lock(&s->lock);
	while (atomic_load(&s->submitted) < seq && !flex_stream_poisoned(s) && s->head)
		pthread_cond_wait(&s->cond, &s->lock);
	if (atomic_load(&s->submitted) < seq)
		ret = -EPIPE;	/* poisoned (or reset) before it was submitted */
	pthread_mutex_unlock(&s->lock);
	return ret;
}

/* The worker's blocking submit of one CB or a batch; lock not held. */
static int worker_submit(struct flex_stream *s, const struct flex_cb *cbs, uint32_t n,
			 uint64_t *seq)
{
	return flex_device_submit(s->dev, s->qid, cbs, n, FLEX_SUBMIT_BLOCK, seq);
}

static void free_item(struct item *it)
{
	if (it->kind == ITEM_GEN)
		free_gen_item(it);
	if (it->other)
		flex_stream_put(it->other);
	if (it->stamp) {
		int none = 0;

		/* Dropped before its NOP went out: the event will never complete. */
		if (atomic_load(&it->stamp->fd) < 0)
			atomic_compare_exchange_strong(&it->stamp->err, &none, -EPIPE);
		flex_stamp_put(it->stamp);
	}
	free(it->cbs);
	free(it);
}

/* ---- timing stamps and other files' fences ---- */

void flex_stamp_put(struct stamp *st)
{
	if (st && atomic_fetch_sub(&st->refs, 1) == 1) {
		if (atomic_load(&st->fd) >= 0)
			close(atomic_load(&st->fd));
		free(st);
	}
}

/* The NOP @seq of @st was submitted: export its fence now, before it completes. */
static void stamp_export(struct flex_stream *s, struct stamp *st, uint64_t seq)
{
	int fd, err = flex_device_fence_export(s->dev, s->qid, seq, &fd);

	if (err)
		atomic_store(&st->err, err);
	else
		atomic_store(&st->fd, fd);
}

int flex_stream_enqueue_stamp(struct flex_stream *s, struct stamp *st)
{
	struct flex_cb nop = { .opcode = FLEX_CB_NOP };
	struct item *it;
	uint64_t seq;
	int err;

	if (flex_stream_poisoned(s))
		return flex_stream_poisoned_error(s);
	if (!s->head) {
		err = flex_device_submit(s->dev, s->qid, &nop, 1, 0, &seq);
		if (!err) {
			note_submitted(s, &nop, 1, seq);
			s->assigned = seq;
			stamp_export(s, st, seq);
			return 0;
		}
		if (err == -EIO) {
			s->dev_faulted = 1;
			wake(s);
			return flex_error_set(-EIO, "stream %u: the device queue is faulted", s->qid);
		}
		if (err != -EAGAIN)
			return flex_error_set(err, "stream %u: FLEX_IOCTL_SUBMIT of a NOP: %s", s->qid,
					 strerror(-err));
	}
	it = calloc(1, sizeof(*it));
	if (!it)
		return flex_error_set(-ENOMEM, "stream %u: out of memory", s->qid);
	it->kind = ITEM_STAMP;
	atomic_fetch_add(&st->refs, 1);
	it->stamp = st;
	err = flex_stream_enqueue_item(s, it);
	if (err)
		flex_stamp_put(st);	/* the item was freed: its reference */
	return err;
}

/*
 * The worker, lock not held: wait for CB @seq of a stream of another
 * device file through its sync_file (the driver's WAIT CB reaches only
 * queues of its own file). 0 when it succeeded; -EPIPE when it failed;
 * the export's or poll's errno.
 */
static int wait_foreign(struct item *it)
{
	struct flex_stream *o = it->other;
	struct sync_file_info info;
	struct pollfd pfd;
	int fd, err;

	err = flex_stream_wait_submitted(o, it->other_seq);
	if (!err)
		err = flex_device_fence_export(o->dev, o->qid, it->other_seq, &fd);
	if (err)
		return err;
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	while (poll(&pfd, 1, -1) < 0)
		if (errno != EINTR) {
			err = -errno;
			close(fd);
			return err;
		}
	memset(&info, 0, sizeof(info));
	err = ioctl(fd, SYNC_IOC_FILE_INFO, &info) ? -errno : info.status < 0 ? -EPIPE : 0;
	close(fd);
	return err;
}

/*
 * The worker's side of a generator, lock not held: the pending window,
 * then one window after another, each submitted blocking (the queue's
 * depth bounds what is in flight) and its buffer deferred at once, with
 * completed windows reaped as it goes, so memory stays at a few windows.
 * Failures are recorded on the stream here.
 */
static void run_gen(struct flex_stream *s, struct item *it)
{
	struct gen *g = it->gen;
	const char *what = NULL;
	uint64_t seq;
	int err = 0;

	while (!err && (it->n || g->left)) {
		if (!it->n) {
			err = g->next(g, it->cbs, FLEX_SUBMIT_MAX_CBS, &it->n, &it->staging);
			if (err) {
				what = "out of memory building the next CBs";
				break;
			}
		}
		if (g->pins && pin_wait(s)) {
			err = -EIO;	/* a CB before faulted: the queue says which */
			break;
		}
		err = worker_submit(s, it->cbs, it->n, &seq);
		if (err && err != -EIO)
			what = "the driver refused a CB batch";
		if (err)
			break;
		pthread_mutex_lock(&s->lock);
		window_submitted(s, g, it->cbs, it->n, seq, it->staging);
		flex_stream_reap_now(s);
		wake(s);
		pthread_mutex_unlock(&s->lock);
		it->n = 0;
		it->staging = NULL;
	}
	if (!err)
		return;
	pthread_mutex_lock(&s->lock);
	if (what)
		flex_stream_host_error(s, err, it->n ? it->cbs[0].user_data : it->user_data, "%s",
				  what);
	else
		s->dev_faulted = 1;
	pthread_mutex_unlock(&s->lock);
}

/* Runs the head item with the lock dropped; returns with it held. */
static void run_item(struct flex_stream *s, struct item *it)
{
	struct flex_cb nop = { .opcode = FLEX_CB_NOP, .user_data = it->user_data };
	uint64_t before = atomic_load(&s->submitted), seq = 0;
	int err = 0, ran = 0, foreign = 0;

	pthread_mutex_unlock(&s->lock);
	switch (it->kind) {
	case ITEM_GEN:
		run_gen(s, it);
		pthread_mutex_lock(&s->lock);
		return;
	case ITEM_CBS:
		while (it->done < it->n && !err) {
			uint32_t k = it->n - it->done;

			if (k > FLEX_SUBMIT_MAX_CBS)
				k = FLEX_SUBMIT_MAX_CBS;
			err = worker_submit(s, it->cbs + it->done, k, &seq);
			if (!err) {
				pthread_mutex_lock(&s->lock);
				note_submitted(s, it->cbs + it->done, k, seq);
				wake(s);
				pthread_mutex_unlock(&s->lock);
				it->done += k;
			}
		}
		break;
	case ITEM_HOST_FN:
		err = before ? flex_device_wait(s->dev, s->qid, before, -1) : 0;
		if (!err) {
			err = it->fn(it->user);
			ran = 1;
			if (err > 0)
				err = -err;
		}
		if (!err)
			err = worker_submit(s, &nop, 1, &seq);
		break;
	case ITEM_WAIT: {
		struct flex_cb w = {
			.opcode = FLEX_CB_WAIT, .user_data = it->user_data,
			.wait = { .queue_id = it->other->qid, .seqno = it->other_seq },
		};

		err = flex_stream_wait_submitted(it->other, it->other_seq);
		if (!err)
			err = worker_submit(s, &w, 1, &seq);
		break;
	}
	case ITEM_FENCE:
		err = wait_foreign(it);
		foreign = err;
		if (!err)
			err = worker_submit(s, &nop, 1, &seq);
		break;
	case ITEM_STAMP:
		err = worker_submit(s, &nop, 1, &seq);
		if (!err)
			stamp_export(s, it->stamp, seq);
		break;
	}
	pthread_mutex_lock(&s->lock);
	if (it->kind == ITEM_HOST_FN && ran) {
		s->stats.host_ops++;
		s->stats.host_funcs++;
	}
	if (!err && it->kind != ITEM_CBS) {
		note_submitted(s, &nop, 1, seq);
	} else if (err == -EIO) {
		s->dev_faulted = 1;
	} else if (err && it->kind == ITEM_HOST_FN && ran) {
		flex_stream_host_error(s, err, it->user_data, "host function returned an error");
	} else if (err && it->kind == ITEM_HOST_FN) {
		/* A CB before it faulted: the queue's sticky fault says which. */
		s->dev_faulted = 1;
	} else if (err && it->kind == ITEM_WAIT) {
		flex_stream_host_error(s, err == -EPIPE ? -EPIPE : err, it->user_data,
				  "the event's stream (queue %u) failed before seqno %llu",
				  it->other->qid, (unsigned long long)it->other_seq);
	} else if (foreign) {
		flex_stream_host_error(s, foreign, it->user_data,
				  foreign == -EPIPE ?
				  "the event's stream (queue %u of another device file) failed at "
				  "or before seqno %llu" :
				  "waiting for the fence of queue %u (another device file) seqno "
				  "%llu failed", it->other->qid, (unsigned long long)it->other_seq);
	} else if (err && it->kind == ITEM_STAMP) {
		atomic_store(&it->stamp->err, err);
		flex_stream_host_error(s, err, 0, "the driver refused a timing event's NOP");
	} else if (err) {
		flex_stream_host_error(s, err, it->cbs[it->done].user_data,
				  "the driver refused a parked CB batch");
	}
}

static void *worker_main(void *arg)
{
	struct flex_stream *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		struct item *it = s->head;

		if (!it) {
			if (s->stop)
				break;
			pthread_cond_wait(&s->cond, &s->lock);
			continue;
		}
		if (!flex_stream_poisoned(s))
			run_item(s, it);
		/* Done, or discarded: sticky errors cancel everything after. */
		s->head = it->next;
		if (!s->head)
			s->tail = NULL;
		free_item(it);
		if (!s->head && flex_stream_poisoned(s))
			s->assigned = atomic_load(&s->submitted);
		wake(s);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ---- the stream as an allocator queue (flex_alloc_block_free_after()) ---- */

static struct flex_stream *aq_stream(struct flex_alloc_queue *q)
{
	return (struct flex_stream *)((char *)q - offsetof(struct flex_stream, aq));
}

/* The seqno done once everything enqueued so far has run; 0 if it all has. */
static uint64_t aq_point(struct flex_alloc_queue *q)
{
	struct flex_stream *s = aq_stream(q);
	uint64_t seq;

	pthread_mutex_lock(&s->lock);
	seq = s->assigned > s->completed ? s->assigned : 0;
	pthread_mutex_unlock(&s->lock);
	return seq;
}

/*
 * Has @seq run, or will it never run (as reap_upto() decides)? Never
 * blocks: when another thread holds the lock (or this one, in a launch
 * that allocates) the answer is "not yet".
 */
static int aq_query(struct flex_alloc_queue *q, uint64_t seq)
{
	struct flex_stream *s = aq_stream(q);
	struct flex_queue_status st;
	uint64_t sub;
	int done;

	if (pthread_mutex_trylock(&s->lock))
		return -EBUSY;
	if (seq > s->completed && !flex_device_queue_status(s->dev, s->qid, &st)) {
		s->completed = st.completed;
		if (st.fault_code)
			s->dev_faulted = 1;
	}
	sub = atomic_load(&s->submitted);
	done = (seq <= sub || !s->head) && (seq < sub ? seq : sub) <= s->completed;
	/* After a fault, uploads the fault cancelled the WAITs of may still run. */
	if (done && flex_stream_poisoned(s) && !flex_overlap_idle(s))
		done = 0;
	pthread_mutex_unlock(&s->lock);
	return done ? 0 : -EBUSY;
}

/* Until @seq has run, failed, or will never be submitted. */
static int aq_wait(struct flex_alloc_queue *q, uint64_t seq)
{
	struct flex_stream *s = aq_stream(q);
	int err = 0;

	if (atomic_load(&s->submitted) < seq)
		err = flex_stream_wait_submitted(s, seq);
	if (!err)
		err = flex_device_wait(s->dev, s->qid, seq, -1);
	if (err) {
		/* Failed or cancelled: uploads whose WAITs it cancelled may still run. */
		pthread_mutex_lock(&s->lock);
		flex_overlap_quiesce(s);
		pthread_mutex_unlock(&s->lock);
	}
	return err;
}

static const struct flex_alloc_queue_ops aq_ops = {
	.point = aq_point,
	.query = aq_query,
	.wait = aq_wait,
};

FLEX_EXPORT struct flex_alloc_queue *flex_stream_alloc_queue(struct flex_stream *s)
{
	return &s->aq;
}

/* ---- the public calls ---- */

FLEX_EXPORT int flex_stream_new(struct flex_context *ctx, int priority,
				   struct flex_stream **out)
{
	const char *env = getenv("FLEX_ALLOW_TILED_LAUNCH");
	const char *ov = getenv("FLEX_STREAM_OVERLAP");
	struct flex_stream *s;
	int err;

	if (!ctx || !out)
		return flex_error_set(-EINVAL, "flex_stream_new: NULL argument");
	if (priority < FLEX_STREAM_PRIO_LOW || priority > FLEX_STREAM_PRIO_HIGH)
		return flex_error_set(-EINVAL, "flex_stream_new: priority %d not in %d .. %d",
				 priority, FLEX_STREAM_PRIO_LOW, FLEX_STREAM_PRIO_HIGH);
	s = calloc(1, sizeof(*s));
	if (!s)
		return flex_error_set(-ENOMEM, "flex_stream_new: out of memory");
	s->ctx = ctx;
	s->dev = ctx->dev;
	atomic_init(&s->refs, 1);
	s->priority = priority;
	s->allow_tiled = !(env && !strcmp(env, "0"));
	s->overlap = !(ov && !strcmp(ov, "0"));
	s->arena = FLEX_ALLOC_INDEX_NONE;
	s->aq.ops = &aq_ops;
	atomic_init(&s->submitted, 0);
	err = flex_device_queue_create(s->dev, (uint32_t)priority, STREAM_QUEUE_DEPTH, &s->qid);
	if (err) {
		free(s);
		return flex_error_set(err, "flex_stream_new: FLEX_IOCTL_QUEUE_CREATE: %s",
				 strerror(-err));
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->cond, NULL);
	err = -pthread_create(&s->worker, NULL, worker_main, s);
	if (err) {
		flex_device_queue_destroy(s->dev, s->qid);
		pthread_cond_destroy(&s->cond);
		pthread_mutex_destroy(&s->lock);
		free(s);
		return flex_error_set(err, "flex_stream_new: no worker thread: %s", strerror(-err));
	}
	flex_device_ref(s->dev);	/* the queue may outlive the context (events) */
	flex_context_add_stream(ctx, s);
	*out = s;
	return 0;
}

struct flex_stream *flex_stream_get(struct flex_stream *s)
{
	atomic_fetch_add(&s->refs, 1);
	return s;
}

void flex_stream_put(struct flex_stream *s)
{
	if (!s || atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	/* Cancels anything still queued and waits for the running CB. */
	flex_overlap_destroy(s);	/* gone already after flex_stream_destroy() */
	flex_device_queue_destroy(s->dev, s->qid);
	flex_device_unref(s->dev);
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

FLEX_EXPORT void flex_stream_destroy(struct flex_stream *s)
{
	struct flex_stream_stats final;
	struct deferred *d;

	if (!s)
		return;
	flex_stream_synchronize(s, NULL);	/* and after a fault, the uploads */
	/* Its work has run: blocks freed after it are free. */
	flex_alloc_queue_retire(s->ctx->alloc, &s->aq);
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	wake(s);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->worker, NULL);
	/*
	 * Nothing is queued or running: everything was waited for, or failed
	 * (a fault cancels what follows). The queue itself goes with the last
	 * reference (flex_stream_put()): events recorded here may still name it.
	 */
	if (atomic_load(&s->submitted))
		flex_device_wait(s->dev, s->qid, atomic_load(&s->submitted), -1);
	/* Idle now (events name only the main queue): its queue and budget go. */
	pthread_mutex_lock(&s->lock);
	flex_overlap_quiesce(s);
	flex_overlap_destroy(s);
	pthread_mutex_unlock(&s->lock);
	while ((d = s->def_head)) {
		s->def_head = d->next;
		free(d->buf);
		if (d->slot != FLEX_ALLOC_INDEX_NONE)
			flex_alloc_block_free(s->ctx->alloc, d->slot);
		free(d);
	}
	flex_stream_get_stats(s, &final);	/* before the slot goes: its size counts */
	flex_corr_arena_release(s);
	flex_copy_stage_release(s);
	flex_context_remove_stream(s->ctx, s, &final);
	free(s->scratch);
	s->scratch = NULL;
	pthread_mutex_lock(&s->lock);
	s->ctx = NULL;
	pthread_mutex_unlock(&s->lock);
	flex_stream_put(s);
}

FLEX_EXPORT uint32_t flex_stream_queue_id(const struct flex_stream *s)
{
	return s->qid;
}

FLEX_EXPORT int flex_stream_dma_queue_id(struct flex_stream *s, uint32_t *id)
{
	int err = 0;

	pthread_mutex_lock(&s->lock);
	if (s->has_dq)
		*id = s->dq;
	else
		err = -ENOENT;
	pthread_mutex_unlock(&s->lock);
	return err;
}

FLEX_EXPORT int flex_stream_priority(const struct flex_stream *s)
{
	return s->priority;
}

FLEX_EXPORT int flex_stream_synchronize(struct flex_stream *s, struct flex_stream_error *err)
{
	struct flex_stream_error local;
	struct flex_queue_status st;
	uint64_t t0 = now_ns(), target;
	int ret, have_st = 0;

	/*
	 * Everything enqueued before this call: the CBs up to the predicted
	 * seqno now. Work other threads enqueue meanwhile is not waited for
	 * (no starvation); held-back work must first reach the driver.
	 */
	pthread_mutex_lock(&s->lock);
	target = s->assigned;
	while (atomic_load(&s->submitted) < target && s->head && !flex_stream_poisoned(s))
		pthread_cond_wait(&s->cond, &s->lock);
	if (target > atomic_load(&s->submitted))
		target = atomic_load(&s->submitted);	/* the rest was dropped */
	pthread_mutex_unlock(&s->lock);

	ret = target ? flex_device_wait(s->dev, s->qid, target, -1) : 0;

	pthread_mutex_lock(&s->lock);
	if (ret || s->has_host_err || s->dev_faulted) {
		have_st = !flex_stream_status(s, &st);
		if (have_st && st.fault_code)
			s->dev_faulted = 1;
	}
	if (!ret || (have_st && st.fault_code)) {
		s->completed = have_st ? st.completed : target;
		reap_upto(s, s->completed);
	}
	if (ret && !(have_st && st.fault_code) && !s->has_host_err)
		flex_stream_host_error(s, ret, 0, "waiting for seqno %llu failed",
				  (unsigned long long)target);
	if (!err)
		err = &local;
	ret = current_error(s, have_st ? &st : NULL, err);
	/* After a failure, "done" includes the uploads still running (overlap.c). */
	if (ret)
		flex_overlap_quiesce(s);
	s->stats.synchronizes++;
	s->stats.sync_ns += now_ns() - t0;
	pthread_mutex_unlock(&s->lock);
	if (ret)
		flex_error_set(ret, "stream %u: %s", s->qid, err->message);
	return ret;
}

FLEX_EXPORT int flex_stream_query(struct flex_stream *s, struct flex_stream_error *err)
{
	struct flex_stream_error local;
	struct flex_queue_status st;
	int ret;

	if (!err)
		err = &local;

	pthread_mutex_lock(&s->lock);
	ret = flex_stream_status(s, &st);
	if (ret) {
		pthread_mutex_unlock(&s->lock);
		return flex_error_set(ret, "stream %u: FLEX_IOCTL_QUEUE_STATUS: %s", s->qid,
				 strerror(-ret));
	}
	if (st.fault_code)
		s->dev_faulted = 1;
	s->completed = st.completed;
	reap_upto(s, st.completed);
	ret = current_error(s, &st, err);
	if (!ret && (s->head || st.completed < atomic_load(&s->submitted)))
		ret = -EBUSY;
	pthread_mutex_unlock(&s->lock);
	if (ret && ret != -EBUSY)
		flex_error_set(ret, "stream %u: %s", s->qid, err->message);
	return ret;
}

int flex_stream_queue_clear(struct flex_stream *s, uint32_t qid, struct flex_queue_status *st)
{
	int err = 0, tries;

	for (tries = 0; tries <= 1000; tries++) {
		err = flex_device_queue_status(s->dev, qid, st);
		if (err || !st->fault_code)
			break;
		err = flex_device_queue_reset(s->dev, qid);
		if (err != -EBUSY)
			break;
		/* Cancelled CBs are still being retired: a moment. */
		pthread_mutex_unlock(&s->lock);
		usleep(1000);
		pthread_mutex_lock(&s->lock);
	}
	return err;
}

FLEX_EXPORT int flex_stream_reset(struct flex_stream *s)
{
	struct flex_queue_status st;
	int err;

	flex_stream_synchronize(s, NULL);
	pthread_mutex_lock(&s->lock);
	/* The worker drops what a poisoned stream held back; let it finish. */
	while (s->head)
		pthread_cond_wait(&s->cond, &s->lock);
	/* First the DMA queue, once what runs there has: nothing is left to land later. */
	flex_overlap_quiesce(s);
	err = flex_overlap_reset(s) ?: flex_stream_queue_clear(s, s->qid, &st);
	/*
	 * The queue's last CB may be the one that faulted (or one cancelled
	 * behind it): work enqueued from now on that waits for "everything
	 * before it" (a host function, an event) would wait for that CB and
	 * find its error. One NOP that succeeds becomes the new last CB.
	 */
	if (!err && st.submitted && flex_device_wait(s->dev, s->qid, st.submitted, 0)) {
		struct flex_cb nop = { .opcode = FLEX_CB_NOP };
		uint64_t seq;

		err = flex_device_submit(s->dev, s->qid, &nop, 1, 0, &seq);
		if (!err)
			err = flex_device_wait(s->dev, s->qid, seq, -1);
		if (!err)
			st.submitted = st.completed = seq;
	}
	if (!err) {
		s->dev_faulted = 0;
		s->has_host_err = 0;
		memset(&s->host_err, 0, sizeof(s->host_err));
		atomic_store(&s->submitted, st.submitted);
		s->assigned = st.submitted;
		s->completed = st.completed;
		reap_upto(s, st.completed);
	}
	pthread_mutex_unlock(&s->lock);
	if (err)
		return flex_error_set(err, "stream %u: reset: %s", s->qid, strerror(-err));
	return 0;
}

FLEX_EXPORT void flex_stream_get_stats(struct flex_stream *s, struct flex_stream_stats *st)
{
	pthread_mutex_lock(&s->lock);
	*st = s->stats;
	st->corr_slot_bytes = atomic_load(&s->arena_size);
	pthread_mutex_unlock(&s->lock);
}
