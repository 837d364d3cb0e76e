/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/stream.h - FlexStream: asynchronous, in-order execution of jobs.
 *
 * A stream is one driver queue (FLEX_IOCTL_QUEUE_CREATE, with the stream's
 * priority), and a second one on which its uploads overlap its computes
 * without changing any result (flex_stream_new()). Its semantics are
 * CUDA's:
 *
 *  - Every enqueueing call (launch, host function, event record/wait)
 *    returns at once; the work runs later.
 *  - Work of one stream runs in FIFO order; streams are unordered against
 *    each other except through events.
 *  - flex_stream_synchronize() blocks until everything enqueued so far has
 *    completed; flex_stream_query() asks without blocking.
 *  - Errors are sticky: when a job fails (a CB faults on the device, or a
 *    host function or host operation fails), the stream is poisoned: later
 *    work on it does not run, enqueueing calls return -EIO once the
 *    library has seen the failure (work enqueued before that is accepted
 *    and then dropped), and
 *    synchronize/query report the first failure in a struct
 *    flex_stream_error (job, step, tile, fault code, address), until
 *    flex_stream_reset(). Other streams are unaffected.
 *
 * Launch (flex_stream_launch()) walks the job's plan: for a kernel job it
 * validates the tensors against the signature (flex_tiling_plan()), and for
 * each tile (one when the shapes equal the compiled tile) runs the
 * HostOperation that builds the correction tensor, and queues a DMA CB (the
 * correction tensor to the stream's correction slot) and a compute CB. The
 * tile CBs of one launch are built and go to the driver in windows of
 * FLEX_SUBMIT_MAX_CBS, the later ones built by the worker as the queue
 * drains, so a launch holds memory for a few windows whatever its tile
 * count. Documentation/flex/execution.rst has the details.
 *
 * Threads: each stream has a worker thread, which runs host functions and
 * submits whatever could not be submitted by the caller (work queued behind
 * a host function or a cross-stream event wait, or a full driver queue).
 * When nothing is held back the caller submits directly.
 *
 * Thread safety: every function may be called from any number of threads
 * at once, on the same stream or different ones; calls on one stream are
 * ordered by the stream's lock in the order they take it. Destroying a
 * stream must not race with other calls on it. No callback runs under a
 * stream's lock: the allocator's memory-pressure callback, which a launch
 * can trigger (a correction slot growing), may synchronize any stream, the
 * launching one included.
 */
#ifndef FLEX_STREAM_H
#define FLEX_STREAM_H

#include <stdint.h>

#include <linux/flex.h>
#include <flex/allocator.h>
#include <flex/context.h>
#include <flex/job.h>
#include <flex/tiling.h>

#ifdef __cplusplus
extern "C" {
#endif

struct flex_stream;
struct flex_event;

/* Stream priorities: the driver's (an engine picks the highest ready queue). */
#define FLEX_STREAM_PRIO_LOW	FLEX_QUEUE_PRIO_LOW
#define FLEX_STREAM_PRIO_NORMAL	FLEX_QUEUE_PRIO_NORMAL
#define FLEX_STREAM_PRIO_HIGH	FLEX_QUEUE_PRIO_HIGH

/* flex_stream_launch() flags. */
#define FLEX_LAUNCH_NO_TILING	(1U << 0)	/* allow_tiled_launch = false */

/**
 * flex_stream_new() - a new stream with its own driver queue.
 * @ctx:	the context (its device and allocator).
 * @priority:	FLEX_STREAM_PRIO_*.
 * @out:	the stream.
 *
 * The environment variable FLEX_ALLOW_TILED_LAUNCH=0, read here, makes
 * every launch on the stream behave as with FLEX_LAUNCH_NO_TILING.
 *
 * A stream's uploads (copies and DMA steps to the device) run on a second
 * driver queue of its own while its computes run, as long as they write no
 * memory that work enqueued before them still uses; the stream stays one
 * FIFO (Documentation/execution.rst, "Overlap within a stream").
 * FLEX_STREAM_OVERLAP=0 in the environment, read here, keeps every CB on
 * the stream's one queue. The second queue is created at the first upload
 * and counts against the file's FLEX_MAX_QUEUES; at most a quarter of
 * them go to such queues (so at least 48 streams of a file can be
 * created), and a stream that finds none left does without.
 *
 * Return: 0; -EINVAL bad priority; -EACCES a priority above
 * FLEX_STREAM_PRIO_NORMAL without CAP_SYS_NICE (it can starve other
 * tenants); -ENOSPC the device file has FLEX_MAX_QUEUES queues; -ENOMEM;
 * pthread_create()'s errors. Since: 1.0 (flex_stream_create() before).
 */
int flex_stream_new(struct flex_context *ctx, int priority, struct flex_stream **out);

/**
 * flex_stream_destroy() - wait for the stream's work (as synchronize,
 * ignoring its errors), stop its worker, free its correction slot and
 * staging buffers, and destroy its queue, or leave the queue to the last
 * event recorded on it (see Events below). NULL is ignored. The default
 * stream belongs to the context: do not destroy it.
 *
 * Since: 1.0
 */
void flex_stream_destroy(struct flex_stream *s);

/** flex_stream_queue_id() - the driver queue's id (for FLEX_IOCTL_* and tests). Since: 1.0. */
uint32_t flex_stream_queue_id(const struct flex_stream *s);

/**
 * flex_stream_dma_queue_id() - the driver queue the stream's uploads
 * overlap on (for FLEX_IOCTL_* and tests).
 * @id:	out, its id.
 *
 * Return: 0; -ENOENT while the stream has none (before its first upload,
 * with FLEX_STREAM_OVERLAP=0, or when the file had none to spare). Since: 1.1.
 */
int flex_stream_dma_queue_id(struct flex_stream *s, uint32_t *id);

/** flex_stream_priority() - the priority it was created with. Since: 1.0. */
int flex_stream_priority(const struct flex_stream *s);

/**
 * flex_stream_launch() - enqueue a job: the RFC's FlexStream.Launch().
 * @job:	the job; may be freed once this returns.
 * @args:	the kernel job's tensor arguments, in signature order
 *		(NULL, @n_args 0 for a DMA-only job).
 * @flags:	FLEX_LAUNCH_NO_TILING or 0.
 *
 * Before anything is queued, a kernel launch checks every tensor against
 * the signature (count, dtype, ndim, shape, strides, byte offset;
 * flex_tiling_plan()), resolves every allocation and checks it holds the
 * tensor's span from its byte offset (a view), and collects the distinct
 * regions of the arguments (segments 0..6). Shapes
 * larger than the compiled tile run the kernel once per tile (nested over
 * every tiled axis, reduction axes innermost, accumulating) unless tiling
 * is disallowed. A DMA-only job's steps are checked against their
 * allocations.
 *
 * Returns without waiting for the device, also when the driver queue is
 * full (the rest is handed to the worker). The host buffers of DMA steps
 * must stay valid until the job has run (synchronize, or an event).
 *
 * Return: 0 queued; -EINVAL a mismatch or bad argument (message naming the
 * argument index and name, and the dimension); -EDOM shapes differ from
 * the tile with tiling disallowed; -ERANGE a tensor (from its byte offset)
 * or DMA larger than its allocation; -ENOENT an allocation that does not exist; -E2BIG the tensors
 * span more than 7 regions; -EIO the stream is poisoned (see
 * flex_stream_query()); -ENOMEM; the driver's submission errors. The
 * message is in flex_last_error().
 *
 * Since: 1.0
 */
int flex_stream_launch(struct flex_stream *s, const struct flex_job *job,
		       const struct flex_tensor *args, uint32_t n_args, uint32_t flags);

/* flex_stream_copy() flags. Since: 1.0 (0.1 took an int to_device, 1 or 0). */
#define FLEX_COPY_FROM_DEVICE	0U		/* device -> host (no flag) */
#define FLEX_COPY_TO_DEVICE	(1U << 0)	/* host -> device */
#define FLEX_COPY_STAGED	(1U << 1)	/* through the stream's staging buffers */

/**
 * flex_stream_copy() - enqueue a copy between host memory and an
 * allocation (a DMA-only job named "copy_to_device" or
 * "copy_from_device").
 * @flags:	FLEX_COPY_TO_DEVICE (host -> device) or FLEX_COPY_FROM_DEVICE,
 *		optionally with FLEX_COPY_STAGED. (0.1's int to_device, 1 or
 *		0, means the same.)
 * @index, @offset: where in the device: bytes @offset .. @offset + @size
 *		of the allocation.
 * @host:	the host memory.
 * @size:	any size. 0 queues nothing and returns 0 (@host may be NULL).
 *
 * Direct (no FLEX_COPY_STAGED): the DMA engine reads or writes @host
 * itself, when the copy runs, so @host must stay valid (and, to the
 * device, unchanged) until then (synchronize, or an event); the driver
 * pins its pages while the copy is queued. Returns at once. Above
 * FLEX_DMA_MAX_SIZE (what one DMA CB moves) the copy is split into pieces
 * of FLEX_DMA_MAX_SIZE / 2, at most two of them in flight per stream, so
 * that a stream never holds more than FLEX_DMA_MAX_SIZE of host memory
 * pinned for them (the driver allows 512 MiB per open file); a fault in
 * piece k reports tile k. Since 0.2: 0.1 refused 0 and sizes above
 * FLEX_DMA_MAX_SIZE.
 *
 * Staged (FLEX_COPY_STAGED), for pageable memory, as cudaMemcpy from or to
 * memory that is not page-locked: the bytes go through the stream's pool of
 * staging buffers (four of 1 MiB, allocated on first use, each reused once
 * the CB that used it completed; the driver pins only them). To the
 * device, the call copies @host into staging buffers and queues their
 * DMAs; it returns once every byte has been copied, so @host may be
 * reused or freed at once (a copy larger than the pool waits for its
 * first pieces to complete). From the device, the call queues the DMAs
 * into staging buffers, waits for each and copies it to @host: it returns
 * once @host holds the bytes (it blocks, after everything enqueued before
 * it). The copy is ordered in the stream like any other; a failure of the
 * stream meanwhile is returned with the stream's message. Since a staged
 * copy may wait for the stream's work, a host function must not make one
 * on its own stream (as it must not synchronize it).
 *
 * Return: as flex_stream_launch(), and -EINVAL for unknown @flags; a
 * staged copy from the device returns the stream's failure errno when the
 * stream failed before the bytes arrived.
 *
 * Since: 1.0
 */
int flex_stream_copy(struct flex_stream *s, unsigned int flags, flex_alloc_index_t index,
		     uint64_t offset, void *host, uint64_t size);

/**
 * flex_stream_copy_device() - enqueue a copy from one allocation to another
 * (or within one), on the device: copy_ between device tensors, clone.
 * @dst, @dst_offset: where to: bytes @dst_offset .. + @size of @dst.
 * @src, @src_offset: where from, likewise.
 * @size:	any size; 0 queues nothing and returns 0. Any offsets (the
 *		device has no alignment requirement).
 *
 * Runs on the compute engine, as COPY instructions (64 MiB each, 256 MiB
 * per CB, a job named "copy_device": a fault reports its CB as the tile):
 * the DMA engine only moves between host and device. Overlapping ranges
 * are copied as memmove() does. Returns at once; ordered in the stream
 * like any other work. The stream's correction slot holds the programs
 * (it grows to 4 KiB if it is smaller).
 *
 * Return: 0; -EINVAL a NULL stream; -ENOENT/-EINVAL an allocation that does
 * not exist; -ERANGE a range outside its allocation; -EIO the stream is
 * poisoned; -ENOMEM; the driver's submission errors. Since: 1.0.
 */
int flex_stream_copy_device(struct flex_stream *s, flex_alloc_index_t dst, uint64_t dst_offset,
			    flex_alloc_index_t src, uint64_t src_offset, uint64_t size);

/**
 * flex_stream_copy_device_2d() - enqueue a copy of @height rows of @width
 * bytes from one allocation to another, on the device: a strided view's
 * copy_ or contiguous() (cudaMemcpy2DAsync between device pointers).
 * @dst, @dst_offset, @dst_pitch: row r goes to bytes @dst_offset + r *
 *		@dst_pitch .. + @width of @dst.
 * @src, @src_offset, @src_pitch: row r comes from there, likewise.
 * @width, @height: bytes per row and rows; either 0 queues nothing and
 *		returns 0. The pitches must be at least @width when @height
 *		is above 1.
 * One COPY instruction per row, up to 255 rows per CB (a job named
 * "copy_device_2d"); rows that are contiguous on both sides are one
 * flex_stream_copy_device(). The source and destination ranges must not
 * overlap. Returns at once; ordered in the stream like any other work.
 * Return: 0; -EINVAL a NULL stream, a pitch below @width, or overlapping
 * ranges; -ERANGE a range outside its allocation or past 64 bits;
 * otherwise as flex_stream_copy_device(). Since: 1.0.
 */
int flex_stream_copy_device_2d(struct flex_stream *s, flex_alloc_index_t dst,
			       uint64_t dst_offset, uint64_t dst_pitch, flex_alloc_index_t src,
			       uint64_t src_offset, uint64_t src_pitch, uint64_t width,
			       uint64_t height);

/**
 * flex_stream_fill() - enqueue a fill of bytes of an allocation with a
 * repeated pattern, on the device: zero_, fill_, cudaMemsetAsync.
 * @dst, @offset: bytes @offset .. + @size of @dst.
 * @size:	any size, any offset; 0 queues nothing and returns 0. The
 *		pattern starts at @offset and repeats; a last partial copy
 *		of it is cut at @size.
 * @pattern:	@pattern_size bytes, as they are to be in memory (a float
 *		value's bytes for fill_ on a float tensor).
 * @pattern_size: 1, 2, 4 or 8: the element size of the tensor (1 for
 *		cudaMemsetAsync).
 *
 * Runs on the compute engine as FILL instructions (a pattern that repeats
 * every 4 bytes) or COPYs of the pattern doubled in place (an 8-byte one
 * that does not), in a job named "fill". Returns at once.
 *
 * Return: 0; -EINVAL a NULL stream or pattern, or @pattern_size not 1, 2,
 * 4 or 8; otherwise as flex_stream_copy_device(). Since: 1.0.
 */
int flex_stream_fill(struct flex_stream *s, flex_alloc_index_t dst, uint64_t offset,
		     uint64_t size, const void *pattern, uint32_t pattern_size);

/**
 * flex_stream_host_func() - enqueue a host function: @fn(@user) runs on
 * the stream's worker thread after everything enqueued before it has
 * completed, and nothing enqueued after it starts before it returned
 * (cudaLaunchHostFunc). A non-zero return poisons the stream with that
 * errno (step FLEX_STEP_HOST_OP of job "host_func"). @fn must not
 * synchronize this stream, nor make a staged copy on it (it would wait
 * for itself).
 * Return: 0 queued; -EINVAL @fn NULL; -EIO poisoned; -ENOMEM.
 *
 * Since: 1.0
 */
int flex_stream_host_func(struct flex_stream *s, flex_host_fn fn, void *user);

/*
 * struct flex_stream_error - the first failure of a poisoned stream.
 * @error:	negative errno: the fault's (FLEX_FAULT_* errno), or a host
 *		function's or host operation's return, or -EPIPE when an
 *		event this stream waited for failed on the other stream.
 * @fault_code:	FLEX_FAULT_* of a device fault, FLEX_FAULT_NONE for a host
 *		failure.
 * @job:	the job's name ("host_func", "event_wait", "copy_to_device"...).
 * @launch_seq:	which launch on this stream (1 = the first).
 * @step:	index of the step in the job's plan.
 * @step_kind:	enum flex_step_kind of that step.
 * @tile:	the tile (iteration) of a kernel launch, else 0.
 * @seqno:	the driver seqno of the CB that faulted (0 for host failures).
 * @insn:	the faulting instruction (compute CBs).
 * @addr:	the device address that faulted (region_id + offset in it).
 * @message:	all of the above in one line, for logs.
 */
struct flex_stream_error {
	int error;
	uint32_t fault_code;
	char job[FLEX_JOB_NAME_MAX];
	uint64_t launch_seq;
	uint32_t step;
	enum flex_step_kind step_kind;
	uint64_t tile;
	uint64_t seqno;
	uint32_t insn;
	struct flex_vaddr addr;
	char message[256];
};

/**
 * flex_stream_synchronize() - block until everything enqueued on @s so far
 * has completed (or the stream is poisoned).
 * @err:	if not NULL, receives the failure (zeroed when there is none).
 * Return: 0; the failure's errno (also in @err->error); -EINTR is retried.
 *
 * Since: 1.0
 */
int flex_stream_synchronize(struct flex_stream *s, struct flex_stream_error *err);

/**
 * flex_stream_query() - has everything enqueued completed? Never blocks
 * (beyond the stream's lock and one FLEX_IOCTL_QUEUE_STATUS).
 * @err:	as flex_stream_synchronize().
 * Return: 0 all done; -EBUSY work pending; the failure's errno.
 *
 * Since: 1.0
 */
int flex_stream_query(struct flex_stream *s, struct flex_stream_error *err);

/**
 * flex_stream_reset() - recover a poisoned stream: wait until nothing is
 * in flight, clear the driver queue's sticky fault (FLEX_IOCTL_QUEUE_RESET)
 * and the host-side error. Work that was cancelled stays cancelled.
 * When the queue's last CB failed, one NOP CB is submitted and waited for,
 * so that work enqueued afterwards, which waits for everything before it
 * (host functions, event records), does not find the old failure (Since:
 * 1.0; before, such work failed with the reset fault's error).
 * Return: 0; the driver's errors.
 */
int flex_stream_reset(struct flex_stream *s);

/*
 * struct flex_stream_stats - counters since the stream was created.
 * @jobs:	launches (kernel and DMA-only jobs).
 * @tiles:	kernel iterations (a non-tiled launch counts 1).
 * @cbs:	CBs submitted to the driver.
 * @submits:	FLEX_IOCTL_SUBMIT calls that succeeded.
 * @host_ops:	HostOperations run (correction tensors built, host functions).
 * @host_funcs:	host functions run (flex_stream_host_func and user host ops).
 * @bytes_dma:	bytes of DMA CBs submitted (correction tensors included).
 * @parked_cbs:	CBs handed to the worker instead of submitted by the caller.
 * @synchronizes: flex_stream_synchronize() calls.
 * @sync_ns:	time spent blocked in flex_stream_synchronize().
 * @corr_slot_bytes: the correction arena's size now (a window's tensors).
 * @corr_slot_grows: times the correction arena was replaced by a bigger one.
 */
struct flex_stream_stats {
	uint64_t jobs;
	uint64_t tiles;
	uint64_t cbs;
	uint64_t submits;
	uint64_t host_ops;
	uint64_t host_funcs;
	uint64_t bytes_dma;
	uint64_t parked_cbs;
	uint64_t synchronizes;
	uint64_t sync_ns;
	uint64_t corr_slot_bytes;
	uint64_t corr_slot_grows;
};

/** flex_stream_get_stats() - a snapshot of the counters. Since: 1.0. */
void flex_stream_get_stats(struct flex_stream *s, struct flex_stream_stats *st);

/**
 * flex_stream_alloc_queue() - the stream as FlexAllocator follows it, for
 * flex_alloc_block_free_after() (free a block once the work enqueued on @s so
 * far has run) and flex_alloc_block_record_use() (PyTorch's recordStream).
 * Since: 1.0. Its point is the predicted seqno of the last CB enqueued;
 * work dropped after a failure counts as run. flex_stream_destroy()
 * retires it from the context's allocator.
 */
struct flex_alloc_queue *flex_stream_alloc_queue(struct flex_stream *s);

/*
 * Events: a point in one stream's work (cudaEvent). Recording captures
 * "everything enqueued on the stream so far"; another stream can wait for
 * it, and the host can synchronize on it or query it. An event may be
 * recorded again; waits and synchronizes use the latest record. An event
 * never recorded is complete.
 *
 * A stream of the same device file waits with a FLEX_CB_WAIT on its own
 * queue, so the device orders the two without the host. A stream of
 * another device file (another context, or another device) waits through
 * the recording queue's sync_file (FLEX_IOCTL_FENCE_EXPORT): its worker
 * polls the fence and holds back what follows until it signals, so the
 * order is right, at the cost of the host in the loop. A queue number is
 * never taken for a queue of another file.
 *
 * An event holds a reference on the stream of its latest record: after
 * flex_stream_destroy() its queue (not its worker) stays until the event
 * is destroyed or recorded elsewhere, so synchronize, query, export and
 * waits on the event still work and still report that work's failure. A
 * queue kept this way counts among the file's FLEX_MAX_QUEUES, and the
 * device file stays open (the context's regions are released with the
 * context all the same). Since: 1.0 (0.1 needed the stream to outlive
 * the event's uses).
 */

/* flex_event_new() flags. */
#define FLEX_EVENT_TIMING	(1U << 0)	/* can time work: flex_event_elapsed_ns() */

/**
 * flex_event_new() - a new event.
 * @flags:	0 or FLEX_EVENT_TIMING. A timing event's record is a NOP CB
 *		of its own whose fence is exported as soon as it is
 *		submitted (one sync_file per record, closed with the next
 *		record or the event), so it costs a CB and an fd; without
 *		the flag a record costs neither (PyTorch's enable_timing).
 * Return: 0; -EINVAL unknown @flags or a NULL @out; -ENOMEM. Since: 1.0.
 */
int flex_event_new(unsigned int flags, struct flex_event **out);

/**
 * flex_event_destroy() - free it (NULL is ignored), dropping its reference
 * on the stream of its latest record. Pending waits are unaffected.
 *
 * Since: 1.0
 */
void flex_event_destroy(struct flex_event *ev);

/**
 * flex_event_record() - capture the work enqueued on @s so far.
 * Return: 0; -EIO @s is poisoned.
 *
 * Since: 1.0
 */
int flex_event_record(struct flex_event *ev, struct flex_stream *s);

/**
 * flex_stream_wait_event() - work enqueued on @s after this call starts
 * only once @ev's work has completed. Returns at once. If that work fails,
 * @s is poisoned with -EPIPE (step FLEX_STEP_EVENT_WAIT). Waiting on an
 * event of @s itself, or one never recorded, does nothing. @ev may have
 * been recorded on a stream of another context or device: the wait then
 * goes through that work's sync_file, on @s's worker (see above); a
 * failure to export or poll it poisons @s with that errno.
 * Return: 0; -EIO @s is poisoned; -ENOMEM.
 *
 * Since: 1.0
 */
int flex_stream_wait_event(struct flex_stream *s, struct flex_event *ev);

/**
 * flex_event_synchronize() - block until @ev's work has completed.
 * Return: 0; the recording stream's failure errno when that work failed.
 *
 * Since: 1.0
 */
int flex_event_synchronize(struct flex_event *ev);

/**
 * flex_event_query() - non-blocking flex_event_synchronize().
 * Return: 0 complete; -EBUSY not yet; the failure errno.
 *
 * Since: 1.0
 */
int flex_event_query(struct flex_event *ev);

/**
 * flex_event_export_sync_file() - a sync_file fd that signals when @ev's
 * work completes (FLEX_IOCTL_FENCE_EXPORT): poll() it, or hand it to
 * anything that takes sync_files. If the recorded work is still held back
 * in its stream (behind a host function), this waits until it has been
 * submitted.
 * @fd:		out; the caller closes it.
 * Return: 0; -ENOENT the event was never recorded (nothing to wait for);
 * -EPIPE the recording stream failed before submitting that work; the
 * driver's errors (-EMFILE...).
 *
 * Since: 1.0
 */
int flex_event_export_sync_file(struct flex_event *ev, int *fd);

/**
 * flex_event_elapsed_ns() - the time between two timing events' work:
 * when @end's completed minus when @start's completed, in nanoseconds
 * (cudaEventElapsedTime, in ns). Negative if @end completed first.
 * @ns:		out.
 *
 * The times are the driver's: each record's NOP fence's signal timestamp
 * (CLOCK_MONOTONIC, read with SYNC_IOC_FILE_INFO), taken when the NOP, and
 * so everything before it in its stream, completed. A NOP that completed
 * before its fence could be exported (an idle queue runs it at once) is
 * stamped at the export, microseconds later. The events may be on
 * different streams or devices.
 *
 * Return: 0; -EINVAL an event created without FLEX_EVENT_TIMING (or a NULL
 * argument); -ENOENT an event never recorded; -EBUSY one has not completed
 * yet; the failure's errno when a record's work failed, or its stream
 * failed before submitting it (-EPIPE). Since: 1.0.
 */
int flex_event_elapsed_ns(struct flex_event *start, struct flex_event *end, int64_t *ns);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_STREAM_H */
