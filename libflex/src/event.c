// SPDX-License-Identifier: GPL-2.0
/*
 * Events: a (stream, sequence number) pair. Another stream waits for one
 * with a FLEX_CB_WAIT CB on its own queue, so the device orders the two
 * queues without the host in the loop; the host synchronizes with
 * FLEX_IOCTL_WAIT. The driver refuses a WAIT for a CB not submitted yet, so
 * while the recorded work is still held back in the recording stream (a
 * host function, a full queue) the waiting stream's worker holds its WAIT
 * back until it has been submitted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <flex/device.h>
#include <flex/stream.h>

#include "log.h"
#include "stream_internal.h"

struct flex_event {
	pthread_mutex_t lock;
	struct flex_stream *s;
	uint64_t seq;
};

FLEX_EXPORT int flex_event_create(struct flex_event **out)
{
	struct flex_event *ev = calloc(1, sizeof(*ev));

	if (!out || !ev) {
		free(ev);
		return error_set(out ? -ENOMEM : -EINVAL, "flex_event_create failed");
	}
	pthread_mutex_init(&ev->lock, NULL);
	*out = ev;
	return 0;
}

FLEX_EXPORT void flex_event_destroy(struct flex_event *ev)
{
	if (!ev)
		return;
	pthread_mutex_destroy(&ev->lock);
	free(ev);
}

static void snapshot(struct flex_event *ev, struct flex_stream **s, uint64_t *seq)
{
	pthread_mutex_lock(&ev->lock);
	*s = ev->s;
	*seq = ev->seq;
	pthread_mutex_unlock(&ev->lock);
}

FLEX_EXPORT int flex_event_record(struct flex_event *ev, struct flex_stream *s)
{
	uint64_t seq;

	if (!ev || !s)
		return error_set(-EINVAL, "flex_event_record: NULL argument");
	pthread_mutex_lock(&s->lock);
	if (stream_poisoned(s)) {
		pthread_mutex_unlock(&s->lock);
		return stream_poisoned_error(s);
	}
	seq = s->assigned;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&ev->lock);
	ev->s = s;
	ev->seq = seq;
	pthread_mutex_unlock(&ev->lock);
	return 0;
}

FLEX_EXPORT int flex_stream_wait_event(struct flex_stream *s, struct flex_event *ev)
{
	struct flex_stream *other;
	uint64_t seq, launch;
	int err;

	if (!s || !ev)
		return error_set(-EINVAL, "flex_stream_wait_event: NULL argument");
	snapshot(ev, &other, &seq);
	if (!other || other == s || !seq)
		return 0;	/* FIFO already orders it, or nothing to wait for */

	pthread_mutex_lock(&s->lock);
	launch = stream_new_launch(s, "event_wait");
	if (!s->head && atomic_load(&other->submitted) >= seq) {
		struct flex_cb w = {
			.opcode = FLEX_CB_WAIT,
			.user_data = ud_make(launch, 0, FLEX_STEP_EVENT_WAIT, 0),
			.wait = { .queue_id = other->qid, .seqno = seq },
		};

		err = stream_enqueue_cbs(s, &w, 1);
	} else {
		struct item *it = calloc(1, sizeof(*it));

		if (!it) {
			err = error_set(-ENOMEM, "flex_stream_wait_event: out of memory");
		} else {
			it->kind = ITEM_WAIT;
			it->other = other;
			it->other_seq = seq;
			it->user_data = ud_make(launch, 0, FLEX_STEP_EVENT_WAIT, 0);
			err = stream_enqueue_item(s, it);
		}
	}
	pthread_mutex_unlock(&s->lock);
	return err;
}

static int event_error(struct flex_stream *s, int err)
{
	struct flex_stream_error e;
	int qerr = flex_stream_query(s, &e);

	if (qerr && qerr != -EBUSY)
		return error_set(qerr, "event on stream %u: %s", s->qid, e.message);
	return err;
}

FLEX_EXPORT int flex_event_synchronize(struct flex_event *ev)
{
	struct flex_stream *s;
	uint64_t seq;
	int err;

	if (!ev)
		return error_set(-EINVAL, "flex_event_synchronize: NULL event");
	snapshot(ev, &s, &seq);
	if (!s || !seq)
		return 0;
	err = stream_wait_submitted(s, seq);
	if (!err)
		err = flex_device_wait(s->dev, s->qid, seq, -1);
	return err ? event_error(s, err) : 0;
}

FLEX_EXPORT int flex_event_query(struct flex_event *ev)
{
	struct flex_stream *s;
	uint64_t seq;
	int err;

	if (!ev)
		return error_set(-EINVAL, "flex_event_query: NULL event");
	snapshot(ev, &s, &seq);
	if (!s || !seq)
		return 0;
	if (atomic_load(&s->submitted) < seq) {
		pthread_mutex_lock(&s->lock);
		err = stream_poisoned(s) && !s->head ? -EPIPE : -EBUSY;
		pthread_mutex_unlock(&s->lock);
		return err == -EBUSY ? err : event_error(s, err);
	}
	err = flex_device_wait(s->dev, s->qid, seq, 0);
	if (err == -ETIMEDOUT)
		return -EBUSY;
	return err ? event_error(s, err) : 0;
}

FLEX_EXPORT int flex_event_export_sync_file(struct flex_event *ev, int *fd)
{
	struct flex_stream *s;
	uint64_t seq;
	int err;

	if (!ev || !fd)
		return error_set(-EINVAL, "flex_event_export_sync_file: NULL argument");
	snapshot(ev, &s, &seq);
	if (!s || !seq)
		return error_set(-ENOENT, "flex_event_export_sync_file: event not recorded");
	err = stream_wait_submitted(s, seq);
	if (err)
		return error_set(err, "event on stream %u: the stream failed before seqno %llu "
				 "was submitted", s->qid, (unsigned long long)seq);
	err = flex_device_fence_export(s->dev, s->qid, seq, fd);
	if (err)
		return error_set(err, "event on stream %u: FLEX_IOCTL_FENCE_EXPORT: %s", s->qid,
				 strerror(-err));
	return 0;
}
