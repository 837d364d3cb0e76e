// SPDX-License-Identifier: GPL-2.0
/*
 * Copies: host <-> device DMA of any size, direct or staged; device ->
 * device copies and fills.
 *
 * One DMA CB moves at most FLEX_DMA_MAX_SIZE (256 MiB), and the driver
 * pins a DMA's host pages from its submission to its completion, at most
 * 512 MiB per open file. A larger copy is therefore a generator (stream.c)
 * of DMA_PIECE pieces, at most PIN_WINDOWS of them in flight per stream:
 * the next is submitted once the oldest has completed, so one stream never
 * has more than 256 MiB pinned for split copies, and the pinning of one
 * piece overlaps the transfer of the one before. A 0-byte copy queues
 * nothing.
 *
 * A staged copy (FLEX_COPY_STAGED) goes through the stream's staging
 * buffers instead of the caller's memory: STAGE_BUFS page-aligned buffers
 * of STAGE_BYTES, allocated on first use and kept until the stream is
 * destroyed, each reused as soon as the CB that used it has completed. To
 * the device, the caller's bytes are copied into a buffer before its DMA
 * is queued, so the caller may reuse or free its memory when the call
 * returns; from the device, the call waits for each piece and copies it
 * out, so it returns with the bytes in place. Either way the driver pins
 * only the staging buffers (at most 4 MiB a stream, under the default
 * RLIMIT_MEMLOCK), never the caller's pages.
 *
 * Device copies and fills run on the compute engine (the DMA engine moves
 * only between host and device): COPY and FILL programs built per
 * operation (devop.c), each CB's program DMA'd into the stream's
 * correction arena and run from there, with segments 0 and 1 on the
 * destination's and the source's regions. One arena per stream is enough
 * for the same reason as for correction tensors: a queue runs one CB at a
 * time, so the next DMA into the arena runs after the CB that ran from it
 * (those DMAs stay on the main queue; only uploads of the caller's data
 * may overlap, overlap.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/flex.h>
#include <flex/device.h>
#include <flex/stream.h>

#include "devop.h"
#include "log.h"
#include "stream_internal.h"

#define DMA_PIECE	(FLEX_DMA_MAX_SIZE / 2)

struct dma_gen {
	struct gen g;
	struct flex_cb cb;	/* the whole copy; dma.size beyond one CB's */
	uint64_t done;
};

static int dma_next(struct gen *g, struct flex_cb *cbs, uint32_t max, uint32_t *n,
		    void **staging)
{
	struct dma_gen *dg = (struct dma_gen *)g;
	uint64_t left = dg->cb.dma.size - dg->done;

	cbs[0] = dg->cb;
	cbs[0].user_data |= (dg->done / DMA_PIECE) & ((1ULL << 29) - 1);	/* the piece */
	cbs[0].dma.host_ptr += dg->done;
	cbs[0].dma.dev.offset += dg->done;
	cbs[0].dma.size = left < DMA_PIECE ? left : DMA_PIECE;
	dg->done += cbs[0].dma.size;
	g->left--;
	*n = 1;
	*staging = NULL;
	return 0;
}

/* The host buffer stays the caller's, as for any DMA: a plain copy. */
static struct gen *dma_park(const struct gen *g)
{
	struct dma_gen *p = malloc(sizeof(*p));

	if (p)
		*p = *(const struct dma_gen *)g;
	return p ? &p->g : NULL;
}

static void dma_free(struct gen *g)
{
	free(g);
}

int flex_copy_enqueue_dma(struct flex_stream *s, const struct flex_cb *cb)
{
	struct dma_gen dg;

	if (!cb->dma.size)
		return 0;
	if (cb->dma.size <= FLEX_DMA_MAX_SIZE)
		return flex_stream_enqueue_cbs(s, (struct flex_cb *)cb, 1);
	dg.g = (struct gen){
		.left = (cb->dma.size + DMA_PIECE - 1) / DMA_PIECE,
		.pins = 1,
		.next = dma_next,
		.park = dma_park,
		.free = dma_free,
	};
	dg.cb = *cb;
	dg.done = 0;
	return flex_stream_enqueue_gen(s, &dg.g);
}

/* ---- staged copies ---- */

static int stage_free_now(const struct flex_stream *s, int i)
{
	uint64_t seq = s->stage[i].seq;

	return seq != STAGE_BUSY && (!seq || flex_stream_seq_done(s, seq, s->completed));
}

/*
 * Lock held: take a staging buffer (marked STAGE_BUSY), allocating it on
 * first use. When all are in flight, wait (lock dropped) for the oldest
 * one's CB, unless @nowait. Returns its index, -EAGAIN (@nowait, none
 * free), -EIO (the stream failed) or -ENOMEM.
 */
static int stage_get(struct flex_stream *s, int nowait)
{
	int i, oldest, looked = 0;
	uint64_t seq;

	for (;;) {
		if (flex_stream_poisoned(s))
			return -EIO;
		oldest = -1;
		for (i = 0; i < STAGE_BUFS; i++) {
			if (!s->stage[i].buf) {
				if (posix_memalign(&s->stage[i].buf, 4096, STAGE_BYTES)) {
					s->stage[i].buf = NULL;
					return -ENOMEM;
				}
				s->stage[i].seq = 0;
			}
			if (stage_free_now(s, i)) {
				s->stage[i].seq = STAGE_BUSY;
				return i;
			}
			if (s->stage[i].seq != STAGE_BUSY &&
			    (oldest < 0 || s->stage[i].seq < s->stage[oldest].seq))
				oldest = i;
		}
		if (!looked++) {	/* one status ioctl: maybe some completed since */
			flex_stream_reap_now(s);
			continue;
		}
		if (nowait)
			return -EAGAIN;
		if (oldest < 0) {	/* all taken by other threads' copies */
			pthread_cond_wait(&s->cond, &s->lock);
			continue;
		}
		seq = s->stage[oldest].seq;
		pthread_mutex_unlock(&s->lock);
		if (!flex_stream_wait_submitted(s, seq))
			flex_device_wait(s->dev, s->qid, seq, -1);
		pthread_mutex_lock(&s->lock);
		flex_stream_reap_now(s);	/* notes the completion, or the fault */
	}
}

/* Lock held: give a buffer back; @seq the CB that still uses it, or 0. */
static void stage_put(struct flex_stream *s, int i, uint64_t seq)
{
	s->stage[i].seq = seq;
	pthread_cond_broadcast(&s->cond);
}

void flex_copy_stage_release(struct flex_stream *s)
{
	int i;

	for (i = 0; i < STAGE_BUFS; i++) {
		free(s->stage[i].buf);
		s->stage[i].buf = NULL;
	}
}

/* The stream's failure as this copy's error. */
static int staged_error(struct flex_stream *s, const char *name, int err)
{
	struct flex_stream_error e;
	int qerr = flex_stream_query(s, &e);

	if (qerr && qerr != -EBUSY)
		return flex_error_set(qerr, "%s (staged): stream %u failed: %s", name, s->qid,
				 e.message);
	if (err == -EIO)
		return flex_stream_poisoned_error(s);
	return flex_error_set(err, "%s (staged): stream %u: %s", name, s->qid, strerror(-err));
}

/* A piece's DMA CB, @off bytes into the copy. */
static struct flex_cb stage_cb(uint32_t opcode, uint64_t launch, uint32_t step,
			       const struct flex_vaddr *va, uint64_t off, void *buf, uint64_t n)
{
	struct flex_cb cb = { .opcode = opcode };

	cb.user_data = ud_make(launch, 0, step, off / STAGE_BYTES);
	cb.dma.host_ptr = (uint64_t)(uintptr_t)buf;
	cb.dma.dev.region_id = va->region_id;
	cb.dma.dev.offset = va->offset + off;
	cb.dma.size = n;
	return cb;
}

/* Host -> staging -> device: returns once every byte is in a staging buffer. */
static int copy_staged_to_device(struct flex_stream *s, const struct flex_vaddr *va,
				 const void *host, uint64_t size)
{
	const char *name = "copy_to_device";
	uint64_t off, n, launch;
	struct flex_cb cb;
	int i, err = 0;

	pthread_mutex_lock(&s->lock);
	launch = flex_stream_poisoned(s) ? 0 : flex_stream_new_launch(s, name);
	for (off = 0; off < size && !err; off += n) {
		n = size - off < STAGE_BYTES ? size - off : STAGE_BYTES;
		i = stage_get(s, 0);
		if (i < 0) {
			err = i;
			break;
		}
		/* The copy into the buffer is the caller's time, not the stream's lock's. */
		pthread_mutex_unlock(&s->lock);
		memcpy(s->stage[i].buf, (const char *)host + off, n);
		pthread_mutex_lock(&s->lock);
		cb = stage_cb(FLEX_CB_DMA_TO_DEVICE, launch, FLEX_STEP_DMA_TO_DEVICE, va, off,
			      s->stage[i].buf, n);
		err = flex_stream_upload(s, &cb);
		stage_put(s, i, err ? 0 : s->assigned);
	}
	if (!err)
		s->stats.jobs++;
	pthread_mutex_unlock(&s->lock);
	return err ? staged_error(s, name, err) : 0;
}

/* Device -> staging -> host: returns once every byte is in @host. */
static int copy_staged_from_device(struct flex_stream *s, const struct flex_vaddr *va,
				   void *host, uint64_t size)
{
	const char *name = "copy_from_device";
	struct {
		int buf;
		uint64_t seq, off, n;
	} fl[STAGE_BUFS];
	uint64_t off = 0, n, launch;
	int i, nfl = 0, err = 0;
	struct flex_cb cb;

	pthread_mutex_lock(&s->lock);
	launch = flex_stream_poisoned(s) ? 0 : flex_stream_new_launch(s, name);
	while (!err && (off < size || nfl)) {
		/* Queue another piece while a buffer is free (wait only with none of ours out). */
		i = off < size ? stage_get(s, nfl > 0) : -EAGAIN;
		if (i >= 0) {
			n = size - off < STAGE_BYTES ? size - off : STAGE_BYTES;
			cb = stage_cb(FLEX_CB_DMA_FROM_DEVICE, launch, FLEX_STEP_DMA_FROM_DEVICE,
				      va, off, s->stage[i].buf, n);
			err = flex_stream_enqueue_cbs(s, &cb, 1);
			if (err) {
				stage_put(s, i, 0);
				break;
			}
			fl[nfl++] = (typeof(fl[0])){ i, s->assigned, off, n };
			off += n;
			continue;
		}
		if (i != -EAGAIN) {
			err = i;
			break;
		}
		/* Our oldest piece: wait for it, copy it out, free its buffer. */
		pthread_mutex_unlock(&s->lock);
		err = flex_stream_wait_submitted(s, fl[0].seq);
		if (!err)
			err = flex_device_wait(s->dev, s->qid, fl[0].seq, -1);
		if (!err)
			memcpy((char *)host + fl[0].off, s->stage[fl[0].buf].buf, fl[0].n);
		pthread_mutex_lock(&s->lock);
		if (err)
			break;
		if (fl[0].seq > s->completed)
			s->completed = fl[0].seq;
		stage_put(s, fl[0].buf, 0);
		memmove(fl, fl + 1, --nfl * sizeof(fl[0]));
	}
	/* On failure the pieces still out are in flight: their CBs release them. */
	for (i = 0; i < nfl; i++)
		stage_put(s, fl[i].buf, fl[i].seq);
	if (!err)
		s->stats.jobs++;
	pthread_mutex_unlock(&s->lock);
	return err ? staged_error(s, name, err) : 0;
}

FLEX_EXPORT int flex_stream_copy(struct flex_stream *s, unsigned int flags,
				 flex_alloc_index_t index, uint64_t offset, void *host,
				 uint64_t size)
{
	int to_device = flags & FLEX_COPY_TO_DEVICE;
	const char *name = to_device ? "copy_to_device" : "copy_from_device";
	struct flex_vaddr va;
	struct flex_step step;
	uint64_t have;
	int err;

	if (!s || (!host && size))
		return flex_error_set(-EINVAL, "%s: NULL stream or host pointer", name);
	if (flags & ~(FLEX_COPY_TO_DEVICE | FLEX_COPY_STAGED))
		return flex_error_set(-EINVAL, "%s: unknown flags %#x", name, flags);
	if (!size)
		return 0;
	if (!(flags & FLEX_COPY_STAGED)) {
		step = to_device ? flex_step_dma_to_device(index, offset, host, size) :
				   flex_step_dma_from_device(index, offset, host, size);
		return flex_launch_dma_steps(s, name, &step, 1);
	}
	err = flex_alloc_block_resolve(s->ctx->alloc, index, &va, &have);
	if (err)
		return flex_error_set(err, "%s: allocation %llu: %s", name, (unsigned long long)index,
				 flex_last_error());
	if (offset > have || size > have - offset)
		return flex_error_set(-ERANGE, "%s: bytes %llu .. %llu leave the allocation of %llu "
				 "bytes", name, (unsigned long long)offset,
				 (unsigned long long)(offset + size), (unsigned long long)have);
	va.offset += offset;
	return to_device ? copy_staged_to_device(s, &va, host, size) :
			   copy_staged_from_device(s, &va, host, size);
}

/* ---- device copies and fills ---- */

/* Resolve bytes @off .. @off + @size of @index; its absolute place in *@va. */
static int resolve_range(struct flex_stream *s, const char *name, const char *what,
			 flex_alloc_index_t index, uint64_t off, uint64_t size,
			 struct flex_vaddr *va)
{
	uint64_t have;
	int err = flex_alloc_block_resolve(s->ctx->alloc, index, va, &have);

	if (err)
		return flex_error_set(err, "%s: %s allocation %llu: %s", name, what,
				 (unsigned long long)index, flex_last_error());
	if (off > have || size > have - off)
		return flex_error_set(-ERANGE, "%s: %s bytes %llu .. %llu leave the allocation of "
				 "%llu bytes", name, what, (unsigned long long)off,
				 (unsigned long long)(off + size), (unsigned long long)have);
	va->offset += off;
	return 0;
}

/* Bytes a devop's side spans: @rows rows of @size at @pitch, or @size (no rows). */
static uint64_t devop_span(uint64_t size, uint64_t pitch, uint64_t rows)
{
	return rows > 1 ? (rows - 1) * pitch + size : size;
}

/* Queue @op's CBs: per CB, its program DMA'd into the slot and a compute CB on it. */
static int device_op(struct flex_stream *s, const char *name, const struct devop *op,
		     uint64_t dst_region, uint64_t src_region)
{
	uint32_t n = flex_devop_n_cbs(op), k;
	size_t max = flex_devop_program_max(op), len;
	struct flex_cb *cbs, tmpl;
	unsigned char *progs;
	uint64_t launch;
	int err;

	/* Before the lock: the allocator may call back (memory pressure). */
	err = flex_corr_arena_ensure(s, max);
	if (err)
		return err;
	progs = malloc((size_t)n * max);
	if (!progs)
		return flex_error_set(-ENOMEM, "%s: %zu bytes of programs", name, (size_t)n * max);
	pthread_mutex_lock(&s->lock);
	err = flex_stream_begin_job(s, name, 2 * (size_t)n, &cbs, &launch);
	if (err)
		goto unlock;
	memset(&tmpl, 0, sizeof(tmpl));
	tmpl.opcode = FLEX_CB_COMPUTE;
	tmpl.compute.program.region_id = s->arena_va.region_id;
	tmpl.compute.program.offset = s->arena_va.offset;
	tmpl.compute.segments[0].region_id = dst_region;
	tmpl.compute.segment_mask = 1U << 0 | 1U << FLEX_SEGMENT_CORRECTION;
	if (!op->fill) {
		tmpl.compute.segments[1].region_id = src_region;
		tmpl.compute.segment_mask |= 1U << 1;
	}
	tmpl.compute.segments[FLEX_SEGMENT_CORRECTION].region_id = s->arena_va.region_id;
	tmpl.compute.segments[FLEX_SEGMENT_CORRECTION].offset = s->arena_va.offset;
	for (k = 0; k < n; k++) {
		unsigned char *prog = progs + (size_t)k * max;
		struct flex_cb *d = &cbs[2 * k];

		len = flex_devop_program(op, k, prog);
		memset(d, 0, sizeof(*d));
		d->opcode = FLEX_CB_DMA_TO_DEVICE;
		d->user_data = ud_make(launch, 0, FLEX_STEP_DMA_TO_DEVICE, k);
		d->dma.host_ptr = (uint64_t)(uintptr_t)prog;
		d->dma.dev.region_id = s->arena_va.region_id;
		d->dma.dev.offset = s->arena_va.offset;
		d->dma.size = len;
		cbs[2 * k + 1] = tmpl;
		cbs[2 * k + 1].user_data = ud_make(launch, 1, FLEX_STEP_COMPUTE, k);
	}
	err = flex_stream_enqueue_cbs(s, cbs, 2 * n);
	/* What it writes and reads, for uploads enqueued after it (overlap.c). */
	flex_overlap_note(s, dst_region, op->dst, devop_span(op->size, op->dpitch, op->rows),
			  s->assigned);
	if (!op->fill)
		flex_overlap_note(s, src_region, op->src,
				  devop_span(op->size, op->spitch, op->rows), s->assigned);
	/* Even on error: a first batch may have been queued already. */
	flex_stream_defer(s, progs, FLEX_ALLOC_INDEX_NONE);
	progs = NULL;
	if (!err) {
		s->stats.jobs++;
		flex_stream_reap(s);
	}
unlock:
	pthread_mutex_unlock(&s->lock);
	free(progs);
	return err;
}

FLEX_EXPORT int flex_stream_copy_device(struct flex_stream *s, flex_alloc_index_t dst,
					uint64_t dst_offset, flex_alloc_index_t src,
					uint64_t src_offset, uint64_t size)
{
	const char *name = "copy_device";
	struct flex_vaddr d, r;
	struct devop op;
	int err;

	if (!s)
		return flex_error_set(-EINVAL, "%s: NULL stream", name);
	if (!size)
		return 0;
	err = resolve_range(s, name, "destination", dst, dst_offset, size, &d) ?:
	      resolve_range(s, name, "source", src, src_offset, size, &r);
	if (err)
		return err;
	memset(&op, 0, sizeof(op));
	op.dst = d.offset;
	op.src = r.offset;
	op.size = size;
	/* Overlapping with the destination above: from the end, as memmove. */
	op.backward = d.region_id == r.region_id && d.offset > r.offset &&
		      d.offset < r.offset + size;
	op.insn_bytes = DEVOP_INSN_BYTES;
	op.insns_per_cb = DEVOP_INSNS_PER_CB;
	return device_op(s, name, &op, d.region_id, r.region_id);
}

/* Bytes spanned by @rows rows of @width at @pitch; 0 on overflow. */
static uint64_t span_2d(uint64_t width, uint64_t pitch, uint64_t rows)
{
	uint64_t span;

	if (__builtin_mul_overflow(rows - 1, pitch, &span) ||
	    __builtin_add_overflow(span, width, &span))
		return 0;
	return span;
}

FLEX_EXPORT int flex_stream_copy_device_2d(struct flex_stream *s, flex_alloc_index_t dst,
					   uint64_t dst_offset, uint64_t dst_pitch,
					   flex_alloc_index_t src, uint64_t src_offset,
					   uint64_t src_pitch, uint64_t width, uint64_t height)
{
	const char *name = "copy_device_2d";
	uint64_t dspan, sspan, r;
	struct flex_vaddr d, v;
	struct devop op;
	int err;

	if (!s)
		return flex_error_set(-EINVAL, "%s: NULL stream", name);
	if (!width || !height)
		return 0;
	if (height > 1 && (dst_pitch < width || src_pitch < width))
		return flex_error_set(-EINVAL, "%s: pitches %llu and %llu below the width %llu",
				      name, (unsigned long long)dst_pitch,
				      (unsigned long long)src_pitch, (unsigned long long)width);
	if (height == 1 || (dst_pitch == width && src_pitch == width))
		return flex_stream_copy_device(s, dst, dst_offset, src, src_offset, width * height);
	dspan = span_2d(width, dst_pitch, height);
	sspan = span_2d(width, src_pitch, height);
	if (!dspan || !sspan)
		return flex_error_set(-ERANGE, "%s: %llu rows of %llu bytes overflow 64 bits", name,
				      (unsigned long long)height, (unsigned long long)width);
	err = resolve_range(s, name, "destination", dst, dst_offset, dspan, &d) ?:
	      resolve_range(s, name, "source", src, src_offset, sspan, &v);
	if (err)
		return err;
	if (d.region_id == v.region_id && d.offset < v.offset + sspan && v.offset < d.offset + dspan)
		return flex_error_set(-EINVAL, "%s: the source and destination ranges overlap "
				      "(copy through a temporary)", name);
	if (width > DEVOP_INSN_BYTES) {
		/* Rows this wide are CBs of their own anyway. */
		for (r = 0, err = 0; r < height && !err; r++)
			err = flex_stream_copy_device(s, dst, dst_offset + r * dst_pitch, src,
						      src_offset + r * src_pitch, width);
		return err;
	}
	memset(&op, 0, sizeof(op));
	op.dst = d.offset;
	op.src = v.offset;
	op.size = width;
	op.rows = height;
	op.dpitch = dst_pitch;
	op.spitch = src_pitch;
	op.insn_bytes = DEVOP_INSN_BYTES;
	op.insns_per_cb = DEVOP_INSNS_PER_CB;
	return device_op(s, name, &op, d.region_id, v.region_id);
}

FLEX_EXPORT int flex_stream_fill(struct flex_stream *s, flex_alloc_index_t dst,
				 uint64_t offset, uint64_t size, const void *pattern,
				 uint32_t pattern_size)
{
	const char *name = "fill";
	const unsigned char *p = pattern;
	struct flex_vaddr d;
	struct devop op;
	uint32_t i;
	int err;

	if (!s)
		return flex_error_set(-EINVAL, "%s: NULL stream", name);
	if (pattern_size != 1 && pattern_size != 2 && pattern_size != 4 && pattern_size != 8)
		return flex_error_set(-EINVAL, "%s: a pattern of %u bytes; 1, 2, 4 or 8 (an element)",
				 name, pattern_size);
	if (!size)
		return 0;
	if (!pattern)
		return flex_error_set(-EINVAL, "%s: NULL pattern", name);
	err = resolve_range(s, name, "destination", dst, offset, size, &d);
	if (err)
		return err;
	memset(&op, 0, sizeof(op));
	op.fill = 1;
	op.dst = d.offset;
	op.size = size;
	for (i = 0; i < pattern_size; i++)
		op.pattern |= (uint64_t)p[i] << (8 * i);
	op.psize = pattern_size;
	op.insn_bytes = DEVOP_INSN_BYTES;
	op.insns_per_cb = DEVOP_INSNS_PER_CB;
	return device_op(s, name, &op, d.region_id, 0);
}
