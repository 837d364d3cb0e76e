// SPDX-License-Identifier: GPL-2.0
/*
 * Events: a (stream, sequence number) pair. Another stream of the same
 * device file waits for one with a FLEX_CB_WAIT CB on its own queue, so
 * the device orders the two queues without the host in the loop; the host
 * synchronizes with FLEX_IOCTL_WAIT. The driver refuses a WAIT for a CB not
 * submitted yet, so while the recorded work is still held back in the
 * recording stream (a host function, a full queue) the waiting stream's
 * worker holds its WAIT back until it has been submitted.
 *
 * A WAIT CB names a queue by its number in the submitting file, so a
 * stream of another file (another context, another device) waits through
 * the recording queue's sync_file instead: its worker exports the fence
 * and polls it, and holds back what follows until it has signalled.
 *
 * An event holds a reference on the stream it was last recorded on, which
 * keeps that stream's queue (not its worker) after flex_stream_destroy():
 * the sequence number stays a valid name to wait for, and is never taken
 * for a CB of another queue that reuses the number.
 *
 * A timing event's record is a NOP CB of its own whose fence is exported
 * when it is submitted; the fence's timestamp (the driver's dma_fence
 * signal time, CLOCK_MONOTONIC) is when everything before it completed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/sync_file.h>
#include <flex/device.h>
#include <flex/stream.h>

#include "log.h"
#include "stream_internal.h"

struct flex_event {
	pthread_mutex_t lock;
	unsigned int flags;
	struct flex_stream *s;	/* the last record's stream, referenced; NULL: none */
	uint64_t seq;
	struct stamp *stamp;	/* FLEX_EVENT_TIMING: the last record's, referenced */
};

FLEX_EXPORT int flex_event_new(unsigned int flags, struct flex_event **out)
{
	struct flex_event *ev;

	if (!out)
		return flex_error_set(-EINVAL, "flex_event_new: NULL argument");
	if (flags & ~FLEX_EVENT_TIMING)
		return flex_error_set(-EINVAL, "flex_event_new: unknown flags %#x", flags);
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return flex_error_set(-ENOMEM, "flex_event_new: out of memory");
	pthread_mutex_init(&ev->lock, NULL);
	ev->flags = flags;
	*out = ev;
	return 0;
}

FLEX_EXPORT void flex_event_destroy(struct flex_event *ev)
{
	if (!ev)
		return;
	flex_stream_put(ev->s);
	flex_stamp_put(ev->stamp);
	pthread_mutex_destroy(&ev->lock);
	free(ev);
}

/* The last record, with a reference on its stream (flex_stream_put() it) and stamp. */
static void snapshot(struct flex_event *ev, struct flex_stream **s, uint64_t *seq,
		     struct stamp **stamp)
{
	pthread_mutex_lock(&ev->lock);
	*s = ev->s ? flex_stream_get(ev->s) : NULL;
	*seq = ev->seq;
	if (stamp) {
		*stamp = ev->stamp;
		if (*stamp)
			atomic_fetch_add(&(*stamp)->refs, 1);
	}
	pthread_mutex_unlock(&ev->lock);
}

FLEX_EXPORT int flex_event_record(struct flex_event *ev, struct flex_stream *s)
{
	struct stamp *st = NULL, *old_st;
	struct flex_stream *old;
	uint64_t seq;
	int err = 0;

	if (!ev || !s)
		return flex_error_set(-EINVAL, "flex_event_record: NULL argument");
	if (ev->flags & FLEX_EVENT_TIMING) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return flex_error_set(-ENOMEM, "flex_event_record: out of memory");
		atomic_init(&st->refs, 1);
		atomic_init(&st->fd, -1);
		atomic_init(&st->err, 0);
	}
	pthread_mutex_lock(&s->lock);
	if (flex_stream_poisoned(s))
		err = flex_stream_poisoned_error(s);
	else if (st)
		err = flex_stream_enqueue_stamp(s, st);
	seq = s->assigned;
	pthread_mutex_unlock(&s->lock);
	if (err) {
		flex_stamp_put(st);
		return err;
	}
	flex_stream_get(s);
	pthread_mutex_lock(&ev->lock);
	old = ev->s;
	old_st = ev->stamp;
	ev->s = s;
	ev->seq = seq;
	ev->stamp = st;
	pthread_mutex_unlock(&ev->lock);
	flex_stream_put(old);
	flex_stamp_put(old_st);
	return 0;
}

FLEX_EXPORT int flex_stream_wait_event(struct flex_stream *s, struct flex_event *ev)
{
	struct flex_stream *other;
	uint64_t seq, launch;
	struct item *it;
	int err;

	if (!s || !ev)
		return flex_error_set(-EINVAL, "flex_stream_wait_event: NULL argument");
	snapshot(ev, &other, &seq, NULL);
	if (!other || other == s || !seq) {
		flex_stream_put(other);
		return 0;	/* FIFO already orders it, or nothing to wait for */
	}

	pthread_mutex_lock(&s->lock);
	launch = flex_stream_new_launch(s, "event_wait");
	if (other->dev == s->dev && !s->head && atomic_load(&other->submitted) >= seq) {
		struct flex_cb w = {
			.opcode = FLEX_CB_WAIT,
			.user_data = ud_make(launch, 0, FLEX_STEP_EVENT_WAIT, 0),
			.wait = { .queue_id = other->qid, .seqno = seq },
		};

		err = flex_stream_enqueue_cbs(s, &w, 1);
		flex_stream_put(other);
	} else if (!(it = calloc(1, sizeof(*it)))) {
		err = flex_error_set(-ENOMEM, "flex_stream_wait_event: out of memory");
		flex_stream_put(other);
	} else {
		/* Another file's queue numbers mean nothing here: its fence, on the host. */
		it->kind = other->dev == s->dev ? ITEM_WAIT : ITEM_FENCE;
		it->other = other;	/* the item holds the reference */
		it->other_seq = seq;
		it->user_data = ud_make(launch, 0, FLEX_STEP_EVENT_WAIT, 0);
		err = flex_stream_enqueue_item(s, it);
		if (err)
			flex_stream_put(other);	/* the item was freed: its reference */
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

/* The recording stream's failure for its event's wait error @err. */
static int event_error(struct flex_stream *s, int err)
{
	struct flex_stream_error e;
	int qerr = flex_stream_query(s, &e);

	if (qerr && qerr != -EBUSY)
		return flex_error_set(qerr, "event on stream %u: %s", s->qid, e.message);
	return flex_error_set(err, "event on stream %u: its work failed: %s", s->qid,
			 strerror(-err));
}

FLEX_EXPORT int flex_event_synchronize(struct flex_event *ev)
{
	struct flex_stream *s;
	uint64_t seq;
	int err;

	if (!ev)
		return flex_error_set(-EINVAL, "flex_event_synchronize: NULL event");
	snapshot(ev, &s, &seq, NULL);
	if (!s || !seq) {
		flex_stream_put(s);
		return 0;
	}
	err = flex_stream_wait_submitted(s, seq);
	if (!err)
		err = flex_device_wait(s->dev, s->qid, seq, -1);
	if (err)
		err = event_error(s, err);
	flex_stream_put(s);
	return err;
}

FLEX_EXPORT int flex_event_query(struct flex_event *ev)
{
	struct flex_stream *s;
	uint64_t seq;
	int err;

	if (!ev)
		return flex_error_set(-EINVAL, "flex_event_query: NULL event");
	snapshot(ev, &s, &seq, NULL);
	if (!s || !seq) {
		flex_stream_put(s);
		return 0;
	}
	if (atomic_load(&s->submitted) < seq) {
		pthread_mutex_lock(&s->lock);
		err = flex_stream_poisoned(s) && !s->head ? -EPIPE : -EBUSY;
		pthread_mutex_unlock(&s->lock);
	} else {
		err = flex_device_wait(s->dev, s->qid, seq, 0);
		if (err == -ETIMEDOUT)
			err = -EBUSY;
	}
	if (err && err != -EBUSY)
		err = event_error(s, err);
	flex_stream_put(s);
	return err;
}

FLEX_EXPORT int flex_event_export_sync_file(struct flex_event *ev, int *fd)
{
	struct flex_stream *s;
	uint64_t seq;
	int err;

	if (!ev || !fd)
		return flex_error_set(-EINVAL, "flex_event_export_sync_file: NULL argument");
	snapshot(ev, &s, &seq, NULL);
	if (!s || !seq) {
		flex_stream_put(s);
		return flex_error_set(-ENOENT, "flex_event_export_sync_file: event not recorded");
	}
	err = flex_stream_wait_submitted(s, seq);
	if (err)
		flex_error_set(err, "event on stream %u: the stream failed before seqno %llu was "
			  "submitted", s->qid, (unsigned long long)seq);
	else if ((err = flex_device_fence_export(s->dev, s->qid, seq, fd)))
		flex_error_set(err, "event on stream %u: FLEX_IOCTL_FENCE_EXPORT: %s", s->qid,
			  strerror(-err));
	flex_stream_put(s);
	return err;
}

/* When a timing record's NOP completed: 0, -EBUSY not yet, or its failure. */
static int stamp_time(const char *which, struct stamp *st, uint64_t *ns)
{
	struct sync_fence_info fi;
	struct sync_file_info info;
	int fd = atomic_load(&st->fd), err = atomic_load(&st->err);

	if (fd < 0 && err)
		return flex_error_set(err, "flex_event_elapsed_ns: the %s event's stream failed "
				 "before its record was submitted", which);
	if (fd < 0)
		return -EBUSY;	/* held back in its stream: not submitted yet */
	memset(&fi, 0, sizeof(fi));
	memset(&info, 0, sizeof(info));
	info.num_fences = 1;
	info.sync_fence_info = (uint64_t)(uintptr_t)&fi;
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return flex_error_set(-errno, "flex_event_elapsed_ns: SYNC_IOC_FILE_INFO: %s",
				 strerror(errno));
	if (fi.status < 0)
		return flex_error_set(fi.status, "flex_event_elapsed_ns: the %s event's work failed: "
				 "%s", which, strerror(-fi.status));
	if (!fi.status)
		return -EBUSY;
	*ns = fi.timestamp_ns;
	return 0;
}

FLEX_EXPORT int flex_event_elapsed_ns(struct flex_event *start, struct flex_event *end,
				      int64_t *ns)
{
	struct stamp *st[2] = { NULL, NULL };
	struct flex_event *ev[2] = { start, end };
	static const char *const which[2] = { "start", "end" };
	uint64_t t[2], seq;
	struct flex_stream *s;
	int i, err = 0;

	if (!start || !end || !ns)
		return flex_error_set(-EINVAL, "flex_event_elapsed_ns: NULL argument");
	for (i = 0; i < 2 && !err; i++) {
		if (!(ev[i]->flags & FLEX_EVENT_TIMING)) {
			err = flex_error_set(-EINVAL, "flex_event_elapsed_ns: the %s event was created "
					"without FLEX_EVENT_TIMING", which[i]);
			break;
		}
		snapshot(ev[i], &s, &seq, &st[i]);
		flex_stream_put(s);
		if (!st[i])
			err = flex_error_set(-ENOENT, "flex_event_elapsed_ns: the %s event was never "
					"recorded", which[i]);
	}
	for (i = 0; i < 2 && !err; i++)
		err = stamp_time(which[i], st[i], &t[i]);
	if (!err)
		*ns = (int64_t)(t[1] - t[0]);
	flex_stamp_put(st[0]);
	flex_stamp_put(st[1]);
	return err;
}
