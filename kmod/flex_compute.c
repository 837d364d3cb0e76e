// SPDX-License-Identifier: GPL-2.0
/*
 * flex compute engine: fetches a program from device memory, validates all
 * of it, then interprets it (uapi/linux/flex_isa.h).
 *
 * Every operand address goes through the CB's segment table to a region the
 * submitting file owns and is bounds-checked against that region, so a
 * program can never touch another region or another tenant's memory.
 *
 * The engine runs on the fence-signalling path, so it allocates nothing:
 * like a real device it works through a fixed scratchpad (struct
 * flex_scratch, one per device, allocated with it), streaming its operands
 * through it in blocks. Before an instruction writes anything, all of its
 * operands are bounds-checked and its output is backed, so a fault leaves
 * the output as it was. An input that overlaps the output is first copied
 * whole into the scratchpad (an output may be, or overlap, one of its
 * inputs); one too large for it faults FLEX_FAULT_LIMIT. An output exactly
 * equal to an elementwise input streams in place. Between blocks the CB
 * checks for cancellation and its time limit (flex_job_check()); a CB
 * stopped there may have written part of its output.
 *
 * Floating-point operands are widened to binary32 in the scratchpad, the
 * arithmetic runs in flex_fpu.c inside short kernel_fpu_begin() sections
 * (a row of a matmul block, a chunk of an elementwise instruction), and
 * results are narrowed back to their type.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <asm/fpu/api.h>

#include "flex_drv.h"
#include "flex_fpu.h"

/* Matmul blocks, in elements: C is MB x NB, A is MB x KB, B is KB x NB. */
#define MB	64
#define NB	256
#define KB	256
/* Elementwise, COPY and FILL chunks, in bytes. */
#define CHUNK	(KB * NB * 4)
#define SNAP	(4U << 20)

struct flex_scratch {
	struct flex_insn insns[FLEX_PROG_MAX_INSNS];
	u64 slots[FLEX_PROG_MAX_SLOTS];
	u8 a[MB * KB * 4];
	u8 b[CHUNK];
	u8 c[MB * NB * 4];
	u8 snap[SNAP];		/* inputs that overlap the output */
};

struct op_info {
	u8 nargs;
	u8 dtypes;	/* bit per FLEX_DT_* allowed */
	u16 flags;	/* FLEX_INSN_* allowed */
};

#define DT(x) BIT(FLEX_DT_##x)
#define DT_FLOAT (DT(F32) | DT(BF16) | DT(F16))

static const struct op_info op_info[] = {
	[FLEX_OP_END]	 = { 0, DT(I32), 0 },
	[FLEX_OP_COPY]	 = { 3, DT(I32), 0 },
	[FLEX_OP_FILL]	 = { 3, DT(I32) | DT(I8) | DT_FLOAT, 0 },
	[FLEX_OP_ADD]	 = { 8, DT(I32) | DT_FLOAT, 0 },
	[FLEX_OP_MUL]	 = { 8, DT(I32) | DT_FLOAT, 0 },
	[FLEX_OP_RELU]	 = { 6, DT(I32) | DT_FLOAT, 0 },
	[FLEX_OP_MATMUL] = { 10, DT(I32) | DT(I8) | DT_FLOAT, FLEX_INSN_ACCUMULATE },
};

/* Bytes per element of a type. */
static size_t dt_size(u8 dt)
{
	switch (dt) {
	case FLEX_DT_I8:
		return 1;
	case FLEX_DT_BF16:
	case FLEX_DT_F16:
		return 2;
	default:
		return 4;
	}
}

/* Widens the first @n 16-bit elements of @buf to binary32, in place. */
static void widen(u8 dt, void *buf, size_t n)
{
	const u16 *h = buf;
	u32 *f = buf;
	size_t i;

	/* From the end: element i's result covers halves 2i and 2i + 1 >= i. */
	for (i = n; i-- > 0;)
		f[i] = dt == FLEX_DT_BF16 ? flex_bf16_to_f32(h[i]) : flex_f16_to_f32(h[i]);
}

/* Narrows the first @n binary32 elements of @buf to @dt, in place. */
static void narrow(u8 dt, void *buf, size_t n)
{
	const u32 *f = buf;
	u16 *h = buf;
	size_t i;

	for (i = 0; i < n; i++)
		h[i] = dt == FLEX_DT_BF16 ? flex_f32_to_bf16(f[i]) : flex_f32_to_f16(f[i]);
}

struct exec {
	struct flex_job *job;
	const struct flex_cb_compute *cb;
	struct flex_scratch *s;
	u32 n_slots;
	size_t snap_used;	/* of s->snap, by the current instruction */
};

/* A resolved address operand: a region and an offset in it. */
struct operand {
	struct flex_region *r;
	u64 region_id;
	u64 offset;
	const u8 *snap;		/* its copy in the scratchpad, when it has one */
};

struct flex_scratch *flex_scratch_alloc(void)
{
	return kvzalloc(sizeof(struct flex_scratch), GFP_KERNEL);
}

void flex_scratch_free(struct flex_scratch *s)
{
	kvfree(s);
}

static int check_header(const struct flex_prog_header *h)
{
	if (h->magic != FLEX_PROG_MAGIC || h->version != FLEX_PROG_VERSION ||
	    h->flags || h->reserved[0] || h->reserved[1] ||
	    !h->n_insns || h->n_insns > FLEX_PROG_MAX_INSNS ||
	    h->n_slots > FLEX_PROG_MAX_SLOTS)
		return -ENOEXEC;
	return 0;
}

static int check_insn(const struct flex_insn *in, bool last, u32 n_slots)
{
	bool is_end = in->op == FLEX_OP_END;
	const struct op_info *info;
	unsigned int i;

	/* END ends the program, and only the last instruction is END. */
	if (in->op >= ARRAY_SIZE(op_info) || is_end != last)
		return -ENOEXEC;
	info = &op_info[in->op];
	if (in->dtype > FLEX_DT_F16 || !(info->dtypes & BIT(in->dtype)) ||
	    in->flags & ~info->flags || in->reserved)
		return -ENOEXEC;
	for (i = 0; i < FLEX_INSN_ARGS; i++) {
		u64 a = in->arg[i];

		if (i >= info->nargs && a)
			return -ENOEXEC;
		if ((a & FLEX_ARG_SLOT_BIT) &&
		    ((a & ~FLEX_ARG_SLOT_BIT) >> 32 || (u32)a >= n_slots))
			return -ENOEXEC;
	}
	return 0;
}

static u64 arg_value(const struct exec *x, u64 a)
{
	return a & FLEX_ARG_SLOT_BIT ? x->s->slots[(u32)a] : a;
}

static int scalar(const struct exec *x, u64 a, u64 *out)
{
	*out = arg_value(x, a);
	return *out >> 32 ? -E2BIG : 0;
}

static int address(struct exec *x, u64 a, struct operand *op)
{
	u64 v = arg_value(x, a);
	unsigned int seg = (v >> FLEX_ADDR_SEG_SHIFT) & 7;
	u64 off = v & FLEX_ADDR_OFFSET_MASK;

	/* Bits between the offset and the segment must be clear. */
	if (v & FLEX_ARG_SLOT_BIT || (v >> 48) & 0xfff)
		return flex_job_fault(x->job, -ERANGE, FLEX_NO_REGION, v);
	if (!(x->cb->segment_mask & BIT(seg)))
		return flex_job_fault(x->job, -ENXIO, FLEX_NO_REGION, v);
	op->r = x->job->regions[1 + seg];
	op->region_id = x->cb->segments[seg].region_id;
	op->offset = x->cb->segments[seg].offset + off;
	op->snap = NULL;
	return 0;
}

/* Reads @len bytes at byte @at of an input, from its snapshot if it has one. */
static int op_read(struct exec *x, const struct operand *op, u64 at, void *buf,
		   size_t len)
{
	int err;

	if (op->snap) {
		memcpy(buf, op->snap + at, len);
		return 0;
	}
	err = flex_region_read(op->r, op->offset + at, buf, len);
	return err ? flex_job_fault(x->job, err, op->region_id, op->offset + at) : 0;
}

static int op_write(struct exec *x, const struct operand *op, u64 at,
		    const void *buf, size_t len)
{
	int err = flex_region_write(op->r, op->offset + at, buf, len);

	return err ? flex_job_fault(x->job, err, op->region_id, op->offset + at) : 0;
}

/* Elements spanned by a rows x cols matrix with row stride ld. */
static int span(struct exec *x, u64 rows, u64 cols, u64 ld, u64 *out)
{
	if (ld < cols)
		return flex_job_fault(x->job, -ENOEXEC, FLEX_NO_REGION, 0);
	*out = rows ? (rows - 1) * ld + cols : 0;
	return *out > FLEX_ISA_MAX_ELEMENTS ? flex_job_fault(x->job, -E2BIG, FLEX_NO_REGION, 0) : 0;
}

/* An input's whole span must lie in its region: the fault is at its start. */
static int check_in(struct exec *x, const struct operand *op, u64 bytes)
{
	if (op->offset > op->r->size || bytes > op->r->size - op->offset)
		return flex_job_fault(x->job, -ERANGE, op->region_id, op->offset);
	return 0;
}

/*
 * Every row of an output must lie in its region: the fault is at the
 * first row that does not, and nothing has been written.
 */
static int check_out(struct exec *x, const struct operand *op, u64 rows,
		     u64 row_bytes, u64 stride)
{
	u64 size = op->r->size, bad = 0;

	if (op->offset <= size && row_bytes <= size - op->offset)
		bad = (size - op->offset - row_bytes) / stride + 1;
	if (bad < rows)
		return flex_job_fault(x->job, -ERANGE, op->region_id,
				      op->offset + bad * stride);
	return 0;
}

/*
 * Backs an output's rows before anything is written, so a write past the
 * backing cap (or without host memory) writes nothing.
 */
static int back_out(struct exec *x, const struct operand *op, u64 rows,
		    u64 row_bytes, u64 stride)
{
	u64 i, at;
	int err;

	/* Gaps under a page: every page of the span is written anyway. */
	if (stride - row_bytes < PAGE_SIZE) {
		err = flex_region_back(op->r, op->offset,
				       (rows - 1) * stride + row_bytes, true);
		return err ? flex_job_fault(x->job, err, op->region_id, op->offset) : 0;
	}
	for (i = 0; i < rows; i++) {
		at = op->offset + i * stride;
		err = flex_region_back(op->r, at, row_bytes, true);
		if (err)
			return flex_job_fault(x->job, err, op->region_id, at);
		if (!(i & 1023)) {
			err = flex_job_check(x->job);
			if (err)
				return err;
		}
	}
	return 0;
}

/*
 * When input @in (@bytes long) overlaps output @out (@out_bytes), copies
 * it into the scratchpad first: the instruction reads all of its inputs
 * before writing. An input exactly equal to an elementwise output (@same)
 * needs no copy.
 */
static int snapshot_if_overlapping(struct exec *x, struct operand *in, u64 bytes,
				   const struct operand *out, u64 out_bytes, bool same)
{
	int err;

	if (in->r != out->r || same || !bytes || !out_bytes ||
	    in->offset >= out->offset + out_bytes || out->offset >= in->offset + bytes)
		return 0;
	if (bytes > SNAP - x->snap_used)
		return flex_job_fault(x->job, -E2BIG, FLEX_NO_REGION, 0);
	err = op_read(x, in, 0, x->s->snap + x->snap_used, bytes);
	if (err)
		return err;
	in->snap = x->s->snap + x->snap_used;
	x->snap_used += bytes;
	return 0;
}

/* C block (mb x nb, row length NB) += A block (mb x kb) . B block (kb x nb). */
static void mac_block(const struct exec *x, bool i8, u64 mb, u64 nb, u64 kb)
{
	u32 *c = (u32 *)x->s->c;
	u64 ii, kk, jj;

	for (ii = 0; ii < mb; ii++) {
		u32 *crow = c + ii * NB;

		for (kk = 0; kk < kb; kk++) {
			u32 av;

			if (i8) {
				const s8 *brow = (const s8 *)x->s->b + kk * NB;

				av = (u32)(s32)((const s8 *)x->s->a)[ii * KB + kk];
				for (jj = 0; jj < nb; jj++)
					crow[jj] += av * (u32)(s32)brow[jj];
			} else {
				const u32 *brow = (const u32 *)x->s->b + kk * NB;

				av = ((const u32 *)x->s->a)[ii * KB + kk];
				for (jj = 0; jj < nb; jj++)
					crow[jj] += av * brow[jj];
			}
		}
	}
}

/* The same in binary32, a row of C per FPU section. */
static void mac_block_fp(const struct exec *x, u64 mb, u64 nb, u64 kb)
{
	u32 *c = (u32 *)x->s->c;
	const u32 *a = (const u32 *)x->s->a, *b = (const u32 *)x->s->b;
	u64 ii;

	for (ii = 0; ii < mb; ii++) {
		kernel_fpu_begin();
		flex_fpu_mac_row(c + ii * NB, a + ii * KB, b, nb, kb, NB);
		kernel_fpu_end();
	}
}

static int op_matmul(struct exec *x, const struct flex_insn *in)
{
	u8 dt = in->dtype;
	bool i8 = dt == FLEX_DT_I8, fp = BIT(dt) & DT_FLOAT;
	/* Elements of A and B, and of C: int8 inputs sum into int32. */
	size_t es = dt_size(dt), ces = i8 ? 4 : es;
	u64 m, n, k, ldc, lda, ldb, acc = 0, cspan, aspan = 0, bspan = 0;
	u64 i0, j0, k0, mb, nb, kb, r;
	struct operand c, a, b;
	int err;

	err = address(x, in->arg[0], &c) ?: address(x, in->arg[1], &a) ?:
	      address(x, in->arg[2], &b) ?: scalar(x, in->arg[3], &m) ?:
	      scalar(x, in->arg[4], &n) ?: scalar(x, in->arg[5], &k) ?:
	      scalar(x, in->arg[6], &ldc) ?: scalar(x, in->arg[7], &lda) ?:
	      scalar(x, in->arg[8], &ldb) ?: scalar(x, in->arg[9], &acc);
	/* arg[9] (often a correction slot) or the flag: C += A.B. */
	if (in->flags & FLEX_INSN_ACCUMULATE)
		acc = 1;
	if (err == -E2BIG)
		return flex_job_fault(x->job, err, FLEX_NO_REGION, 0);
	if (err)
		return err;
	if (!m || !n)
		return 0;
	if (m * n > FLEX_ISA_MAX_ELEMENTS || (k && m * n > FLEX_ISA_MAX_MACS / k))
		return flex_job_fault(x->job, -E2BIG, FLEX_NO_REGION, 0);
	err = span(x, m, n, ldc, &cspan);
	/* K = 0: an empty sum, C = 0 (or C unchanged when accumulating). */
	if (!err && k)
		err = span(x, m, k, lda, &aspan) ?: span(x, k, n, ldb, &bspan) ?:
		      check_in(x, &a, aspan * es) ?: check_in(x, &b, bspan * es);
	if (!err)
		err = check_out(x, &c, m, n * ces, ldc * ces);
	if (!err && k)
		err = snapshot_if_overlapping(x, &a, aspan * es, &c, cspan * ces, false) ?:
		      snapshot_if_overlapping(x, &b, bspan * es, &c, cspan * ces, false);
	if (!err)
		err = back_out(x, &c, m, n * ces, ldc * ces);
	if (err)
		return err;

	for (i0 = 0; i0 < m; i0 += MB) {
		mb = min_t(u64, MB, m - i0);
		for (j0 = 0; j0 < n; j0 += NB) {
			nb = min_t(u64, NB, n - j0);
			if (!acc)
				memset(x->s->c, 0, sizeof(x->s->c));
			for (r = 0; acc && r < mb && !err; r++)
				err = op_read(x, &c, ((i0 + r) * ldc + j0) * ces,
					      x->s->c + r * NB * ces, nb * ces);
			if (acc && ces == 2)
				widen(dt, x->s->c, mb * NB);
			for (k0 = 0; k0 < k && !err; k0 += KB) {
				kb = min_t(u64, KB, k - k0);
				err = flex_job_check(x->job);
				for (r = 0; r < mb && !err; r++)
					err = op_read(x, &a, ((i0 + r) * lda + k0) * es,
						      x->s->a + r * KB * es, kb * es);
				for (r = 0; r < kb && !err; r++)
					err = op_read(x, &b, ((k0 + r) * ldb + j0) * es,
						      x->s->b + r * NB * es, nb * es);
				if (!err && es == 2) {
					widen(dt, x->s->a, mb * KB);
					widen(dt, x->s->b, kb * NB);
				}
				if (!err && fp)
					mac_block_fp(x, mb, nb, kb);
				else if (!err)
					mac_block(x, i8, mb, nb, kb);
				cond_resched();
			}
			if (ces == 2)
				narrow(dt, x->s->c, mb * NB);
			for (r = 0; r < mb && !err; r++)
				err = op_write(x, &c, ((i0 + r) * ldc + j0) * ces,
					       x->s->c + r * NB * ces, nb * ces);
			if (err)
				return err;
		}
	}
	return 0;
}

/* w binary32 results of ADD, MUL or RELU, in one FPU section. */
static void elementwise_fp(u8 op, u32 *out, const u32 *a, const u32 *b, u64 w)
{
	kernel_fpu_begin();
	if (op == FLEX_OP_ADD)
		flex_fpu_add(out, a, b, w);
	else if (op == FLEX_OP_MUL)
		flex_fpu_mul(out, a, b, w);
	else
		flex_fpu_relu(out, a, w);
	kernel_fpu_end();
}

/* ADD, MUL (two inputs) and RELU (one), over rows x cols elements. */
static int op_elementwise(struct exec *x, const struct flex_insn *in)
{
	bool binary = in->op != FLEX_OP_RELU;
	u8 dt = in->dtype;
	size_t es = dt_size(dt);
	u64 rows, cols, ldd, lda, ldb = 0, dspan, aspan, bspan = 0, i, c0, j, w;
	struct operand d, a, b;
	u32 *ab = (u32 *)x->s->a, *bb = (u32 *)x->s->c, *out = (u32 *)x->s->b;
	const u64 chunk = sizeof(x->s->a) / 4;
	int err;

	if (binary)
		err = address(x, in->arg[0], &d) ?: address(x, in->arg[1], &a) ?:
		      address(x, in->arg[2], &b) ?: scalar(x, in->arg[3], &rows) ?:
		      scalar(x, in->arg[4], &cols) ?: scalar(x, in->arg[5], &ldd) ?:
		      scalar(x, in->arg[6], &lda) ?: scalar(x, in->arg[7], &ldb);
	else
		err = address(x, in->arg[0], &d) ?: address(x, in->arg[1], &a) ?:
		      scalar(x, in->arg[2], &rows) ?: scalar(x, in->arg[3], &cols) ?:
		      scalar(x, in->arg[4], &ldd) ?: scalar(x, in->arg[5], &lda);
	if (err == -E2BIG)
		return flex_job_fault(x->job, err, FLEX_NO_REGION, 0);
	if (err || !rows || !cols)
		return err;
	if (rows * cols > FLEX_ISA_MAX_ELEMENTS)
		return flex_job_fault(x->job, -E2BIG, FLEX_NO_REGION, 0);

	err = span(x, rows, cols, ldd, &dspan) ?: span(x, rows, cols, lda, &aspan) ?:
	      check_in(x, &a, aspan * es);
	if (!err && binary)
		err = span(x, rows, cols, ldb, &bspan) ?: check_in(x, &b, bspan * es);
	if (!err)
		err = check_out(x, &d, rows, cols * es, ldd * es) ?:
		      snapshot_if_overlapping(x, &a, aspan * es, &d, dspan * es,
					      a.offset == d.offset && lda == ldd);
	if (!err && binary)
		err = snapshot_if_overlapping(x, &b, bspan * es, &d, dspan * es,
					      b.offset == d.offset && ldb == ldd);
	if (!err)
		err = back_out(x, &d, rows, cols * es, ldd * es);
	if (err)
		return err;

	for (i = 0; i < rows; i++) {
		for (c0 = 0; c0 < cols; c0 += w) {
			w = min(chunk, cols - c0);
			err = flex_job_check(x->job) ?:
			      op_read(x, &a, (i * lda + c0) * es, ab, w * es);
			if (!err && binary)
				err = op_read(x, &b, (i * ldb + c0) * es, bb, w * es);
			if (err)
				return err;
			if (es == 2) {
				widen(dt, ab, w);
				if (binary)
					widen(dt, bb, w);
			}
			if (dt != FLEX_DT_I32)
				elementwise_fp(in->op, out, ab, bb, w);
			for (j = 0; dt == FLEX_DT_I32 && j < w; j++) {
				if (in->op == FLEX_OP_ADD)
					out[j] = ab[j] + bb[j];
				else if (in->op == FLEX_OP_MUL)
					out[j] = ab[j] * bb[j];
				else
					out[j] = (s32)ab[j] > 0 ? ab[j] : 0;
			}
			if (es == 2)
				narrow(dt, out, w);
			err = op_write(x, &d, (i * ldd + c0) * es, out, w * es);
			if (err)
				return err;
		}
		if (!(i & 63))
			cond_resched();
	}
	return 0;
}

/* COPY (bytes, memmove-like) and FILL (elements of its type). */
static int op_copy_fill(struct exec *x, const struct flex_insn *in)
{
	bool fill = in->op == FLEX_OP_FILL;
	size_t es = dt_size(in->dtype);
	u64 count, value = 0, bytes, done, at, n, i;
	bool backward = false;
	struct operand d, s;
	u32 *buf = (u32 *)x->s->b;
	int err;

	err = address(x, in->arg[0], &d);
	if (!err && !fill)
		err = address(x, in->arg[1], &s);
	if (!err)
		err = scalar(x, in->arg[fill ? 1 : 2], &count);
	if (!err && fill)
		err = scalar(x, in->arg[2], &value);
	/* A FILL value is an element's bit pattern: it must fit one. */
	if (err == -E2BIG || (!err && fill && es < 4 && value >> (8 * es)))
		return flex_job_fault(x->job, -E2BIG, FLEX_NO_REGION, 0);
	if (err || !count)
		return err;
	if (fill ? count > FLEX_ISA_MAX_ELEMENTS : count > FLEX_ISA_MAX_ELEMENTS * 4ULL)
		return flex_job_fault(x->job, -E2BIG, FLEX_NO_REGION, 0);
	bytes = fill ? count * es : count;

	err = (fill ? 0 : check_in(x, &s, bytes)) ?:
	      check_out(x, &d, 1, bytes, bytes) ?: back_out(x, &d, 1, bytes, bytes);
	if (err)
		return err;

	if (fill) {
		for (i = 0; i < min_t(u64, count, CHUNK / es); i++) {
			if (es == 1)
				((u8 *)buf)[i] = value;
			else if (es == 2)
				((u16 *)buf)[i] = value;
			else
				buf[i] = value;
		}
	} else {
		/* memmove: copy from the end when the destination is above. */
		backward = s.r == d.r && d.offset > s.offset;
	}
	for (done = 0; done < bytes; done += n) {
		n = min_t(u64, CHUNK, bytes - done);
		at = backward ? bytes - done - n : done;
		err = flex_job_check(x->job);
		if (!err && !fill)
			err = op_read(x, &s, at, buf, n);
		if (!err)
			err = op_write(x, &d, at, buf, n);
		if (err)
			return err;
		cond_resched();
	}
	return 0;
}

static int run_insn(struct exec *x, const struct flex_insn *in)
{
	x->snap_used = 0;
	switch (in->op) {
	case FLEX_OP_MATMUL:
		return op_matmul(x, in);
	case FLEX_OP_ADD:
	case FLEX_OP_MUL:
	case FLEX_OP_RELU:
		return op_elementwise(x, in);
	case FLEX_OP_COPY:
	case FLEX_OP_FILL:
		return op_copy_fill(x, in);
	default:
		return 0;	/* END */
	}
}

/* Fetches and validates the program, then runs it. */
static int load_and_run(struct exec *x)
{
	const struct flex_va *prog = &x->cb->program;
	struct flex_region *pr = x->job->regions[0];
	struct flex_insn *insns = x->s->insns;
	struct flex_prog_header h;
	u32 i;
	int err;

	err = flex_region_read(pr, prog->offset, &h, sizeof(h));
	if (err)
		return flex_job_fault(x->job, err, prog->region_id, prog->offset);
	if (check_header(&h))
		return flex_job_fault(x->job, -ENOEXEC, prog->region_id, prog->offset);

	/* A program running past its region is malformed, not out of bounds. */
	err = flex_region_read(pr, prog->offset + sizeof(h), insns,
			       (size_t)h.n_insns * sizeof(*insns));
	if (err)
		return flex_job_fault(x->job, err == -ERANGE ? -ENOEXEC : err,
				      prog->region_id, prog->offset);
	for (i = 0; i < h.n_insns; i++) {
		if (check_insn(&insns[i], i == h.n_insns - 1, h.n_slots)) {
			x->job->fault.insn = i;
			return flex_job_fault(x->job, -ENOEXEC, prog->region_id,
					      prog->offset + sizeof(h) + i * sizeof(*insns));
		}
	}

	/* Program correction: the patched operands at segment 7, offset 0. */
	x->n_slots = h.n_slots;
	if (h.n_slots) {
		struct operand corr;

		err = address(x, FLEX_ADDR(FLEX_SEGMENT_CORRECTION, 0), &corr) ?:
		      op_read(x, &corr, 0, x->s->slots, h.n_slots * sizeof(u64));
		if (err)
			return err;
	}

	for (i = 0; i < h.n_insns && !err; i++) {
		x->job->fault.insn = i;
		err = flex_job_check(x->job) ?: run_insn(x, &insns[i]);
	}
	return err;
}

int flex_compute_run(struct flex_job *job)
{
	struct exec x = {
		.job = job,
		.cb = &job->cb.compute,
		.s = job->q->fdev->scratch,
	};

	return load_and_run(&x);
}
