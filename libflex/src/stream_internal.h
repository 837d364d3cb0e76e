/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FlexStream internals shared by stream.c (queue, worker, synchronize),
 * event.c, launch.c (walking job plans into CBs) and correction.c (the
 * HostOperation and the per-stream correction arena).
 */
#ifndef FLEX_STREAM_INTERNAL_H
#define FLEX_STREAM_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <flex/context.h>
#include <flex/job.h>
#include <flex/stream.h>

struct flex_job {
	char name[FLEX_JOB_NAME_MAX];
	int is_kernel;
	flex_alloc_index_t binary;
	struct flex_kernel_sig sig;
	uint32_t n_corr;
	struct flex_corr_slot *corr;
	uint32_t n_steps;
	struct flex_step steps[];
};

struct flex_context {
	struct flex_device *dev;
	struct flex_alloc *alloc;
	struct flex_stream *default_stream;
	char *report_path;		/* FLEX_REPORT, written at destroy */

	/* Every live stream, for flex_context_report(); retired: the destroyed ones' counters. */
	pthread_mutex_t lock;
	struct flex_stream *streams;	/* linked through ctx_next, newest first */
	struct flex_stream_stats retired;
	uint32_t n_retired;
};

/*
 * CB user_data: which launch, step and tile a CB belongs to, so that a
 * fault reported by FLEX_IOCTL_QUEUE_STATUS maps back to the job.
 *   63..38 launch sequence (low 26 bits), 37..32 step index,
 *   31..29 step kind, 28..0 tile (low 29 bits)
 */
static inline uint64_t ud_make(uint64_t launch, uint32_t step, uint32_t kind, uint64_t tile)
{
	return (launch & ((1ULL << 26) - 1)) << 38 | (uint64_t)(step & 63) << 32 |
	       (uint64_t)(kind & 7) << 29 | (tile & ((1ULL << 29) - 1));
}

/*
 * A generator: CBs produced a window (up to FLEX_SUBMIT_MAX_CBS) at a time
 * as the queue drains, so that a launch of any number of tiles, or a copy
 * of any size, holds memory for one window, not for all of its CBs.
 */
struct gen {
	uint64_t left;		/* CBs still to produce: exactly this many more */
	int pins;		/* windows pin host memory in bulk (split DMA) */
	/*
	 * The next window: 1 .. @max CBs into @cbs (their count in *@n) and
	 * in *@staging a host buffer they read, freed once they completed,
	 * or NULL. Called by one thread at a time, with or without s->lock.
	 */
	int (*next)(struct gen *g, struct flex_cb *cbs, uint32_t max, uint32_t *n,
		    void **staging);
	/*
	 * For the worker: a heap copy that owns what this one borrows from
	 * its caller (freed with free()), or NULL (out of memory).
	 */
	struct gen *(*park)(const struct gen *g);
	void (*free)(struct gen *g);
};

/* Work the caller could not submit itself, in stream order. */
enum item_kind {
	ITEM_CBS,	/* CBs to submit */
	ITEM_HOST_FN,	/* run fn once everything before completed, then a NOP CB */
	ITEM_WAIT,	/* a FLEX_CB_WAIT once the other stream has submitted @seq */
	ITEM_GEN,	/* the rest of a generator's CBs */
	ITEM_FENCE,	/* another file's CB @seq: wait for its sync_file, then a NOP */
	ITEM_STAMP,	/* a timing event's NOP, its fence exported at submission */
};

/*
 * A timing event's record: the sync_file of its NOP CB, exported when the
 * NOP is submitted, whose fence's timestamp is when the NOP completed.
 * Shared by the event and the item that submits the NOP.
 */
struct stamp {
	_Atomic int refs;
	_Atomic int fd;		/* -1 until the NOP is submitted */
	_Atomic int err;	/* the NOP will never be submitted: why */
};

struct item {
	struct item *next;
	enum item_kind kind;
	uint64_t user_data;
	uint32_t n, done;		/* ITEM_CBS; ITEM_GEN: n CBs pending in cbs */
	struct flex_cb *cbs;		/* ITEM_CBS, owned; ITEM_GEN: the window */
	void *staging;			/* ITEM_GEN: the pending window's buffer */
	struct gen *gen;		/* ITEM_GEN, owned */
	flex_host_fn fn;		/* ITEM_HOST_FN */
	void *user;
	struct flex_stream *other;	/* ITEM_WAIT, ITEM_FENCE: referenced */
	uint64_t other_seq;
	struct stamp *stamp;		/* ITEM_STAMP: referenced */
};

/* Host memory (and old correction arenas) the device may use until @seq completes. */
struct deferred {
	struct deferred *next;
	uint64_t seq;
	void *buf;
	flex_alloc_index_t slot;	/* FLEX_ALLOC_INDEX_NONE or a replaced arena */
};

/* Split-DMA pieces one stream has in the driver at once (pinned memory). */
#define PIN_WINDOWS	2

/* Staging buffers of a stream, for copies from and to pageable memory. */
#define STAGE_BUFS	4
#define STAGE_BYTES	(1ULL << 20)
#define STAGE_BUSY	UINT64_MAX

#define NAME_RING	256

/*
 * Overlap (overlap.c): a range that main-queue CBs up to @seq read or
 * write, [@lo, @hi) in device region @region, or in host memory (@host:
 * a download's destination, which a later upload may read).
 */
struct stream_access {
	uint64_t region, lo, hi, seq;
	int host;
};

#define ACCESS_MAX	32
/* Uploads a stream's DMA queue holds at once (with their WAITs). */
#define DQ_DEPTH	128

struct flex_stream {
	struct flex_context *ctx;	/* NULL once destroyed */
	struct flex_device *dev;	/* referenced */
	_Atomic unsigned int refs;	/* the owner's, and one per event or item naming it */
	uint32_t qid;
	int priority;
	int allow_tiled;

	pthread_mutex_t lock;
	pthread_cond_t cond;		/* any state change: items, submitted, errors */
	pthread_t worker;
	int stop;
	struct item *head, *tail;	/* head stays queued while the worker runs it */

	uint64_t assigned;		/* seqno the last CB enqueued gets (or got) */
	_Atomic uint64_t submitted;	/* last seqno the driver accepted */
	uint64_t completed;		/* last completion seen */
	uint64_t launch_seq;

	int dev_faulted;		/* the driver refused with -EIO */
	int has_host_err;
	struct flex_stream_error host_err;

	/*
	 * The correction arena (correction.c): each compute CB's segment 7
	 * points into it, at its own tile's correction tensor.
	 */
	flex_alloc_index_t arena;
	struct flex_vaddr arena_va;
	_Atomic uint64_t arena_size;	/* written under the lock; read without it to skip growing */

	struct deferred *def_head, *def_tail;	/* in seq order */
	unsigned int n_def;

	uint64_t pin_seq[PIN_WINDOWS];	/* split-DMA pieces in flight, 0: none */

	/*
	 * Overlap (overlap.c): uploads on the DMA queue @dq, joined into the
	 * main queue by WAIT CBs; the ranges pending main-queue CBs use.
	 */
	int overlap;			/* FLEX_STREAM_OVERLAP is not 0 */
	int has_dq;
	int dq_err;			/* why there is no DMA queue: do not ask again */
	uint32_t dq;
	uint64_t dq_last;		/* the last CB submitted to it */
	struct stream_access acc[ACCESS_MAX];
	unsigned int n_acc;
	uint64_t acc_barrier;		/* uploads wait for main-queue CBs up to it */

	/* Staged copies' buffers (copy.c): seq 0 free, STAGE_BUSY taken, else in flight. */
	struct {
		void *buf;
		uint64_t seq;
	} stage[STAGE_BUFS];

	struct flex_cb *scratch;	/* CBs being built, reused */
	size_t scratch_n;

	struct {
		uint64_t launch;
		char name[FLEX_JOB_NAME_MAX];
	} names[NAME_RING];

	struct flex_stream_stats stats;
	struct flex_stream *ctx_next;	/* the context's list, under ctx->lock */
	struct flex_alloc_queue aq;	/* the stream as the allocator follows it */
};

/* stream.c, with s->lock held unless said otherwise. */
int flex_stream_poisoned(const struct flex_stream *s);
/* -EIO, with the message that says so. */
int flex_stream_poisoned_error(const struct flex_stream *s);
/* A job's start: scratch for @n CBs, the stream not poisoned, a launch number. */
int flex_stream_begin_job(struct flex_stream *s, const char *name, size_t n, struct flex_cb **cbs,
		     uint64_t *launch);
int flex_stream_enqueue_cbs(struct flex_stream *s, struct flex_cb *cbs, uint32_t n);
int flex_stream_enqueue_item(struct flex_stream *s, struct item *it);
uint64_t flex_stream_new_launch(struct flex_stream *s, const char *name);
void flex_stream_host_error(struct flex_stream *s, int err, uint64_t user_data, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void flex_stream_defer(struct flex_stream *s, void *buf, flex_alloc_index_t slot);
/* Free @buf (or @slot) once CB @seq completed. */
void flex_stream_defer_at(struct flex_stream *s, uint64_t seq, void *buf, flex_alloc_index_t slot);
/* Run @g (the caller's): the caller submits what it can, a parked copy of it the rest. */
int flex_stream_enqueue_gen(struct flex_stream *s, struct gen *g);
void flex_stream_reap(struct flex_stream *s);
/* Has CB @seq completed, or will it never run? @completed: the last completion seen. */
int flex_stream_seq_done(const struct flex_stream *s, uint64_t seq, uint64_t completed);
/* One FLEX_IOCTL_QUEUE_STATUS: note the completion (and a fault), free what it allows. */
void flex_stream_reap_now(struct flex_stream *s);
/* Clear queue @qid's fault (retrying while it retires cancelled CBs); its status after in *@st. */
int flex_stream_queue_clear(struct flex_stream *s, uint32_t qid, struct flex_queue_status *st);
struct flex_cb *flex_stream_scratch(struct flex_stream *s, size_t n);
/* Without the lock: the stream's failure into @err (which may be NULL). */
int flex_stream_wait_submitted(struct flex_stream *s, uint64_t seq);
/*
 * References: an event, or another stream's wait, keeps a stream's queue
 * and memory (not its worker) after flex_stream_destroy(), so that the
 * sequence numbers it names stay valid: the last put destroys the queue.
 */
struct flex_stream *flex_stream_get(struct flex_stream *s);
void flex_stream_put(struct flex_stream *s);
/* Lock held: a timing event's NOP, its fence exported once submitted. */
int flex_stream_enqueue_stamp(struct flex_stream *s, struct stamp *st);
void flex_stamp_put(struct stamp *st);

/* context.c: the context's list of streams (takes ctx->lock). */
void flex_context_add_stream(struct flex_context *ctx, struct flex_stream *s);
/* Unlist @s and add @final (its last counters) to the retired totals. */
void flex_context_remove_stream(struct flex_context *ctx, struct flex_stream *s,
			   const struct flex_stream_stats *final);

/* context_report.c: append the context's report to ctx->report_path. */
void flex_context_write_exit_report(struct flex_context *ctx);

/* launch.c: a DMA-only job's steps (takes the lock). */
int flex_launch_dma_steps(struct flex_stream *s, const char *name, const struct flex_step *steps,
		     uint32_t n_steps);

/* copy.c, lock held: one DMA CB of any size (split when beyond one CB's); 0 bytes: nothing. */
int flex_copy_enqueue_dma(struct flex_stream *s, const struct flex_cb *cb);
/* copy.c: free the staging buffers (the stream is idle, its worker stopped). */
void flex_copy_stage_release(struct flex_stream *s);

/*
 * overlap.c, lock held. Main-queue CBs up to @seq use @size bytes at @lo
 * of @region; or use any device memory (a barrier).
 */
void flex_overlap_note(struct flex_stream *s, uint64_t region, uint64_t lo, uint64_t size,
		       uint64_t seq);
void flex_overlap_barrier(struct flex_stream *s, uint64_t seq);
/* A DMA CB on the main queue, at @seq: what it touches, device and host. */
void flex_overlap_note_dma(struct flex_stream *s, const struct flex_cb *cb, uint64_t seq);
/* A host -> device DMA CB of at most FLEX_DMA_MAX_SIZE, on the DMA queue when it can. */
int flex_stream_upload(struct flex_stream *s, const struct flex_cb *cb);
/* The main queue's status, with the DMA queue's fault when an upload failed. */
int flex_stream_status(struct flex_stream *s, struct flex_queue_status *st);
/* Wait (lock dropped) until the DMA queue has run or failed what it was given. */
void flex_overlap_quiesce(struct flex_stream *s);
/* Without waiting: has the DMA queue run or failed what it was given? */
int flex_overlap_idle(struct flex_stream *s);
/* Before a reset of the main queue (quiesced): reset the DMA queue; forget the ranges. */
int flex_overlap_reset(struct flex_stream *s);
/* Destroy the DMA queue, if there is one (idle), and give back its budget. */
void flex_overlap_destroy(struct flex_stream *s);

/* correction.c. Without s->lock: an arena of at least @bytes (grown if needed). */
int flex_corr_arena_ensure(struct flex_stream *s, uint64_t bytes);
/* Tiles of @slot_bytes each one upload may carry: at least 1, at most @want. */
uint64_t flex_corr_window_tiles(uint64_t slot_bytes, uint64_t want);
void flex_corr_build(const struct flex_job *job, const struct flex_tensor *args,
		const struct flex_vaddr *va, const uint32_t *seg_of_arg,
		const uint64_t *byte_offset, int first_reduction, uint64_t *out);
void flex_corr_arena_release(struct flex_stream *s);

#endif /* FLEX_STREAM_INTERNAL_H */
