// SPDX-License-Identifier: GPL-2.0
/*
 * Overlap within a stream: a FlexStream's uploads (host -> device DMA) run
 * on a second driver queue, the DMA queue, while the stream's main queue
 * runs its computes, and the stream still behaves as one FIFO.
 *
 * The contract, for an upload U enqueued on the stream:
 *
 *  - U goes to the DMA queue, and a WAIT CB for it goes to the main queue
 *    in U's place. The main queue's seqnos stay the stream's: the WAIT
 *    completes once U and everything enqueued before U have, so events,
 *    host functions, deferred frees, flex_alloc_block_free_after() and
 *    synchronize mean what they meant, and everything enqueued after U
 *    runs after it.
 *  - U may run before work enqueued ahead of it on the main queue, but
 *    never before the work that uses the memory U writes: the stream keeps
 *    the device ranges its pending main-queue work reads or writes (the
 *    access table below), and U's CBs on the DMA queue start with a WAIT
 *    for the last main-queue CB whose range meets U's. Work whose ranges
 *    are unknown (a host function, a wait for another stream or another
 *    file's fence) is a barrier: U waits for it.
 *  - A launch's ranges are its tensor arguments and its program, as
 *    resolved at launch: a program that reaches beyond its tensors may
 *    race with later uploads, as a CUDA kernel writing out of bounds does.
 *  - Uploads go to the DMA queue only when the stream holds nothing back
 *    for its worker (the FIFO is empty), so every CB ahead of U has its
 *    seqno on the main queue; else, and when the DMA queue is full or
 *    cannot be had, U goes to the main queue as before.
 *  - A fault on the DMA queue fails the WAIT that joins it: the stream
 *    reports the DMA queue's fault, as it happened (flex_stream_status()),
 *    and a reset resets both queues.
 *
 * FLEX_STREAM_OVERLAP=0 in the environment, read at flex_stream_new(),
 * turns it off: every CB goes to the main queue.
 *
 * Everything here is called with s->lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/flex.h>
#include <flex/device.h>

#include "device_internal.h"
#include "log.h"
#include "stream_internal.h"

/* Drop what the main queue has completed, as far as the stream knows. */
static void acc_prune(struct flex_stream *s)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->n_acc; i++)
		if (s->acc[i].seq > s->completed)
			s->acc[n++] = s->acc[i];
	s->n_acc = n;
}

static void note(struct flex_stream *s, int host, uint64_t region, uint64_t lo, uint64_t size,
		 uint64_t seq)
{
	uint64_t hi = size > UINT64_MAX - lo ? UINT64_MAX : lo + size;
	unsigned int i, old = 0;

	if (!s->overlap || !size || seq <= s->completed)
		return;
	for (i = 0; i < s->n_acc; i++) {
		struct stream_access *a = &s->acc[i];

		/* The same range again (a tensor each launch reads): one entry. */
		if (a->host == host && a->region == region && a->lo <= hi && lo <= a->hi) {
			a->lo = a->lo < lo ? a->lo : lo;
			a->hi = a->hi > hi ? a->hi : hi;
			a->seq = a->seq > seq ? a->seq : seq;
			return;
		}
	}
	if (s->n_acc == ACCESS_MAX)
		acc_prune(s);
	if (s->n_acc == ACCESS_MAX) {
		/* Full: the oldest entry becomes part of the barrier. */
		for (i = 1; i < s->n_acc; i++)
			if (s->acc[i].seq < s->acc[old].seq)
				old = i;
		flex_overlap_barrier(s, s->acc[old].seq);
		s->acc[old] = s->acc[--s->n_acc];
	}
	s->acc[s->n_acc++] = (struct stream_access){ region, lo, hi, seq, host };
}

void flex_overlap_note(struct flex_stream *s, uint64_t region, uint64_t lo, uint64_t size,
		       uint64_t seq)
{
	note(s, 0, region, lo, size, seq);
}

void flex_overlap_note_dma(struct flex_stream *s, const struct flex_cb *cb, uint64_t seq)
{
	note(s, 0, cb->dma.dev.region_id, cb->dma.dev.offset, cb->dma.size, seq);
	/* A download writes host memory that an upload after it may send. */
	if (cb->opcode == FLEX_CB_DMA_FROM_DEVICE)
		note(s, 1, 0, cb->dma.host_ptr, cb->dma.size, seq);
}

void flex_overlap_barrier(struct flex_stream *s, uint64_t seq)
{
	if (seq > s->acc_barrier)
		s->acc_barrier = seq;
}

/* Does @a meet [lo, lo + size) of @region, or of host memory? */
static int meets(const struct stream_access *a, int host, uint64_t region, uint64_t lo,
		 uint64_t size)
{
	uint64_t hi = size > UINT64_MAX - lo ? UINT64_MAX : lo + size;

	return a->host == host && (host || a->region == region) && a->lo < hi && lo < a->hi;
}

/*
 * The last main-queue CB upload @cb must wait for (it writes what that CB
 * uses, or reads host memory a download writes); 0: none. Never beyond
 * what the driver was given: with nothing held back, a seqno noted for a
 * batch the driver refused names no CB (the next CBs take it).
 */
static uint64_t hazard(const struct flex_stream *s, const struct flex_cb *cb)
{
	uint64_t seq = s->acc_barrier, sub = atomic_load(&s->submitted);
	unsigned int i;

	for (i = 0; i < s->n_acc; i++) {
		const struct stream_access *a = &s->acc[i];

		if (a->seq > seq &&
		    (meets(a, 0, cb->dma.dev.region_id, cb->dma.dev.offset, cb->dma.size) ||
		     meets(a, 1, 0, cb->dma.host_ptr, cb->dma.size)))
			seq = a->seq;
	}
	if (seq > sub)
		seq = sub;
	return seq > s->completed ? seq : 0;
}

/*
 * The DMA queue, created on the first upload. Return: 0, or why there is
 * none (the file's budget of DMA queues is spent, or its queues, or
 * memory): the stream then does without, its uploads in order with the
 * rest, and does not ask again.
 */
static int dq_get(struct flex_stream *s)
{
	int err;

	if (s->has_dq)
		return 0;
	if (s->dq_err)
		return s->dq_err;
	if (!flex_device_dma_queue_take(s->dev)) {
		s->dq_err = -ENOSPC;
		return s->dq_err;
	}
	err = flex_device_queue_create(s->dev, (uint32_t)s->priority, DQ_DEPTH, &s->dq);
	if (err) {
		flex_device_dma_queue_give(s->dev);
		s->dq_err = err;
		return err;
	}
	s->has_dq = 1;
	return 0;
}

/* The upload in order on the main queue: later uploads must know what it writes. */
static int main_queue(struct flex_stream *s, const struct flex_cb *cb)
{
	int err = flex_stream_enqueue_cbs(s, (struct flex_cb *)cb, 1);

	if (!err)
		flex_overlap_note_dma(s, cb, s->assigned);
	return err;
}

int flex_stream_upload(struct flex_stream *s, const struct flex_cb *cb)
{
	struct flex_cb cbs[2], join;
	uint64_t seq, hz;
	uint32_t n = 0;
	int err;

	if (!s->overlap || s->head || flex_stream_poisoned(s) || dq_get(s))
		return main_queue(s, cb);
	hz = hazard(s, cb);
	if (hz)
		cbs[n++] = (struct flex_cb){
			.opcode = FLEX_CB_WAIT, .user_data = cb->user_data,
			.wait = { .queue_id = s->qid, .seqno = hz },
		};
	cbs[n++] = *cb;
	err = flex_device_submit(s->dev, s->dq, cbs, n, 0, &seq);
	if (err == -EAGAIN)	/* the DMA queue is full: in order, then */
		return main_queue(s, cb);
	if (err == -EIO) {
		/* An upload before it faulted: its join reports it. */
		s->dev_faulted = 1;
		pthread_cond_broadcast(&s->cond);
		return flex_error_set(-EIO, "stream %u: the DMA queue %u is faulted", s->qid, s->dq);
	}
	if (err)
		return flex_error_set(err, "stream %u: FLEX_IOCTL_SUBMIT of an upload to DMA queue "
				      "%u: %s", s->qid, s->dq, strerror(-err));
	s->stats.cbs += n;
	s->stats.submits++;
	s->stats.bytes_dma += cb->dma.size;
	s->dq_last = seq;

	join = (struct flex_cb){
		.opcode = FLEX_CB_WAIT, .user_data = cb->user_data,
		.wait = { .queue_id = s->dq, .seqno = seq },
	};
	err = flex_stream_enqueue_cbs(s, &join, 1);
	if (err)	/* the upload is queued but nothing after it can be ordered */
		flex_stream_host_error(s, err, cb->user_data, "could not queue the WAIT for an "
				       "upload on the DMA queue");
	return err;
}

int flex_stream_status(struct flex_stream *s, struct flex_queue_status *st)
{
	struct flex_queue_status d;
	int err = flex_device_queue_status(s->dev, s->qid, st);

	if (err || !s->has_dq || (st->fault_code && st->fault_code != FLEX_FAULT_DEPENDENCY))
		return err;
	if (flex_device_queue_status(s->dev, s->dq, &d) || !d.fault_code ||
	    d.fault_code == FLEX_FAULT_DEPENDENCY)
		return 0;
	/* An upload faulted (and failed the WAIT that joins it, or will). */
	st->fault_code = d.fault_code;
	st->fault_errno = d.fault_errno;
	st->fault_seqno = d.fault_seqno;
	st->fault_user_data = d.fault_user_data;
	st->fault_opcode = d.fault_opcode;
	st->fault_insn = d.fault_insn;
	st->fault_addr = d.fault_addr;
	st->fault_flags = d.fault_flags;
	return 0;
}

/*
 * After a fault the main queue cancels the WAITs that join uploads, but
 * an upload that waits for nothing may still run: let it, so that no
 * upload from before a reset (or a destroy) lands after it.
 */
void flex_overlap_quiesce(struct flex_stream *s)
{
	uint64_t last = s->dq_last;

	if (!s->has_dq || !last)
		return;
	pthread_mutex_unlock(&s->lock);
	flex_device_wait(s->dev, s->dq, last, -1);	/* its failure is reported elsewhere */
	pthread_mutex_lock(&s->lock);
}

int flex_overlap_idle(struct flex_stream *s)
{
	struct flex_queue_status d;

	return !s->has_dq || !s->dq_last ||
	       flex_device_queue_status(s->dev, s->dq, &d) || d.completed >= s->dq_last;
}

int flex_overlap_reset(struct flex_stream *s)
{
	struct flex_queue_status d;

	s->n_acc = 0;
	s->acc_barrier = 0;
	return s->has_dq ? flex_stream_queue_clear(s, s->dq, &d) : 0;
}

void flex_overlap_destroy(struct flex_stream *s)
{
	if (!s->has_dq)
		return;
	flex_device_queue_destroy(s->dev, s->dq);
	flex_device_dma_queue_give(s->dev);
	s->has_dq = 0;
}
