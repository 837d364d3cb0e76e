// SPDX-License-Identifier: GPL-2.0
/*
 * flex compute engine: fetches a program from device memory, validates all
 * of it, then interprets it (uapi/linux/flex_isa.h).
 *
 * Every operand address goes through the CB's segment table to a region the
 * submitting file owns and is bounds-checked against that region, so a
 * program can never touch another region or another tenant's memory. Each
 * instruction reads its inputs into kernel buffers, computes, and writes
 * its output back: no device memory lock is held while computing, and only
 * one region's lock at a time while copying.
 */
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "flex_drv.h"

struct op_info {
	u8 nargs;
	u8 dtypes;	/* bit per FLEX_DT_* allowed */
	u16 flags;	/* FLEX_INSN_* allowed */
};

#define DT(x) BIT(FLEX_DT_##x)

static const struct op_info op_info[] = {
	[FLEX_OP_END]	 = { 0, DT(I32), 0 },
	[FLEX_OP_COPY]	 = { 3, DT(I32), 0 },
	[FLEX_OP_FILL]	 = { 3, DT(I32), 0 },
	[FLEX_OP_ADD]	 = { 8, DT(I32), 0 },
	[FLEX_OP_MUL]	 = { 8, DT(I32), 0 },
	[FLEX_OP_RELU]	 = { 6, DT(I32), 0 },
	[FLEX_OP_MATMUL] = { 10, DT(I32) | DT(I8), FLEX_INSN_ACCUMULATE },
};

struct exec {
	struct flex_job *job;
	const struct flex_cb_compute *cb;
	u64 slots[FLEX_PROG_MAX_SLOTS];
	u32 n_slots;
};

/* A resolved address operand: a region and an offset in it. */
struct operand {
	struct flex_region *r;
	u64 region_id;
	u64 offset;
};

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
	const struct op_info *info;
	unsigned int i;

	if (in->op >= ARRAY_SIZE(op_info) || (in->op == FLEX_OP_END) != last)
		return -ENOEXEC;
	info = &op_info[in->op];
	if (in->dtype > FLEX_DT_I8 || !(info->dtypes & BIT(in->dtype)) ||
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
	return a & FLEX_ARG_SLOT_BIT ? x->slots[(u32)a] : a;
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
		return flex_job_fault(x->job, -ERANGE, 0, v);
	if (!(x->cb->segment_mask & BIT(seg)))
		return flex_job_fault(x->job, -ENXIO, 0, v);
	op->r = x->job->regions[1 + seg];
	op->region_id = x->cb->segments[seg].region_id;
	op->offset = x->cb->segments[seg].offset + off;
	return 0;
}

static int op_read(struct exec *x, const struct operand *op, u64 at, void *buf,
		   size_t len)
{
	int err = flex_region_read(op->r, op->offset + at, buf, len);

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
		return flex_job_fault(x->job, -ENOEXEC, 0, 0);
	*out = rows ? (rows - 1) * ld + cols : 0;
	return *out > FLEX_ISA_MAX_ELEMENTS ? flex_job_fault(x->job, -E2BIG, 0, 0) : 0;
}

/* Reads a strided matrix into a kvmalloc'ed buffer of its span. */
static int read_matrix(struct exec *x, const struct operand *op, u64 rows,
		       u64 cols, u64 ld, size_t esize, void **out)
{
	u64 n;
	int err = span(x, rows, cols, ld, &n);

	if (err)
		return err;
	*out = kvmalloc_array(max_t(u64, n, 1), esize, GFP_KERNEL);
	if (!*out)
		return flex_job_fault(x->job, -ENOMEM, 0, 0);
	err = op_read(x, op, 0, *out, n * esize);
	if (err) {
		kvfree(*out);
		*out = NULL;
	}
	return err;
}

/* Writes a dense rows x cols int32 matrix to a strided destination. */
static int write_rows(struct exec *x, const struct operand *op, const u32 *buf,
		      u64 rows, u64 cols, u64 ld)
{
	u64 i;
	int err = 0;

	for (i = 0; i < rows && !err; i++)
		err = op_write(x, op, i * ld * 4, buf + i * cols, cols * 4);
	return err;
}

static int op_matmul(struct exec *x, const struct flex_insn *in)
{
	size_t esize = in->dtype == FLEX_DT_I8 ? 1 : 4;
	u64 m, n, k, ldc, lda, ldb, acc = 0, cspan, i, j, kk;
	struct operand c, a, b;
	void *abuf = NULL, *bbuf = NULL;
	u32 *cbuf = NULL;
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
		return flex_job_fault(x->job, err, 0, 0);
	if (err)
		return err;
	if (!m || !n)
		return 0;
	if (m * n > FLEX_ISA_MAX_ELEMENTS || (k && m * n > FLEX_ISA_MAX_MACS / k))
		return flex_job_fault(x->job, -E2BIG, 0, 0);
	err = span(x, m, n, ldc, &cspan);
	/* K = 0: an empty sum, C = 0 (or C unchanged when accumulating). */
	if (!err && k)
		err = read_matrix(x, &a, m, k, lda, esize, &abuf) ?:
		      read_matrix(x, &b, k, n, ldb, esize, &bbuf);
	if (err)
		goto out;

	cbuf = kvmalloc_array(m * n, sizeof(*cbuf), GFP_KERNEL | __GFP_ZERO);
	if (!cbuf) {
		err = flex_job_fault(x->job, -ENOMEM, 0, 0);
		goto out;
	}
	for (i = 0; acc && i < m && !err; i++)
		err = op_read(x, &c, i * ldc * 4, cbuf + i * n, n * 4);
	if (err)
		goto out;

	for (i = 0; i < m; i++) {
		u32 *crow = cbuf + i * n;

		for (kk = 0; kk < k; kk++) {
			u32 av;

			if (esize == 1) {
				const s8 *arow = abuf, *brow = bbuf;

				av = (u32)(s32)arow[i * lda + kk];
				brow += kk * ldb;
				for (j = 0; j < n; j++)
					crow[j] += av * (u32)(s32)brow[j];
			} else {
				const u32 *arow = abuf, *brow = bbuf;

				av = arow[i * lda + kk];
				brow += kk * ldb;
				for (j = 0; j < n; j++)
					crow[j] += av * brow[j];
			}
		}
		cond_resched();
	}
	err = write_rows(x, &c, cbuf, m, n, ldc);
out:
	kvfree(abuf);
	kvfree(bbuf);
	kvfree(cbuf);
	return err;
}

/* ADD, MUL (two inputs) and RELU (one), over rows x cols int32. */
static int op_elementwise(struct exec *x, const struct flex_insn *in)
{
	bool binary = in->op != FLEX_OP_RELU;
	u64 rows, cols, ldd, lda, ldb = 0, dspan, i, j;
	struct operand d, a, b;
	u32 *abuf = NULL, *bbuf = NULL, *out = NULL;
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
		return flex_job_fault(x->job, err, 0, 0);
	if (err || !rows || !cols)
		return err;
	if (rows * cols > FLEX_ISA_MAX_ELEMENTS)
		return flex_job_fault(x->job, -E2BIG, 0, 0);

	err = span(x, rows, cols, ldd, &dspan) ?:
	      read_matrix(x, &a, rows, cols, lda, 4, (void **)&abuf);
	if (!err && binary)
		err = read_matrix(x, &b, rows, cols, ldb, 4, (void **)&bbuf);
	if (err)
		goto out;
	out = kvmalloc_array(rows * cols, sizeof(*out), GFP_KERNEL);
	if (!out) {
		err = flex_job_fault(x->job, -ENOMEM, 0, 0);
		goto out;
	}
	for (i = 0; i < rows; i++) {
		const u32 *ar = abuf + i * lda, *br = bbuf ? bbuf + i * ldb : NULL;
		u32 *o = out + i * cols;

		for (j = 0; j < cols; j++) {
			if (in->op == FLEX_OP_ADD)
				o[j] = ar[j] + br[j];
			else if (in->op == FLEX_OP_MUL)
				o[j] = ar[j] * br[j];
			else
				o[j] = (s32)ar[j] > 0 ? ar[j] : 0;
		}
	}
	err = write_rows(x, &d, out, rows, cols, ldd);
out:
	kvfree(abuf);
	kvfree(bbuf);
	kvfree(out);
	return err;
}

/* COPY (bytes, memmove-like) and FILL (int32 elements). */
static int op_copy_fill(struct exec *x, const struct flex_insn *in)
{
	bool fill = in->op == FLEX_OP_FILL;
	struct operand d, s;
	u64 count, value = 0, i;
	size_t bytes;
	u32 *buf;
	int err;

	err = address(x, in->arg[0], &d);
	if (!err && !fill)
		err = address(x, in->arg[1], &s);
	if (!err)
		err = scalar(x, in->arg[fill ? 1 : 2], &count);
	if (!err && fill)
		err = scalar(x, in->arg[2], &value);
	if (err == -E2BIG)
		return flex_job_fault(x->job, err, 0, 0);
	if (err || !count)
		return err;
	bytes = fill ? count * 4 : count;
	if (bytes > FLEX_ISA_MAX_ELEMENTS * 4ULL)
		return flex_job_fault(x->job, -E2BIG, 0, 0);

	buf = kvmalloc(bytes, GFP_KERNEL);
	if (!buf)
		return flex_job_fault(x->job, -ENOMEM, 0, 0);
	if (fill) {
		for (i = 0; i < count; i++)
			buf[i] = value;
	} else {
		err = op_read(x, &s, 0, buf, bytes);
	}
	if (!err)
		err = op_write(x, &d, 0, buf, bytes);
	kvfree(buf);
	return err;
}

static int run_insn(struct exec *x, const struct flex_insn *in)
{
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
	struct flex_prog_header h;
	struct flex_insn *insns;
	u32 i;
	int err;

	err = flex_region_read(pr, prog->offset, &h, sizeof(h));
	if (err)
		return flex_job_fault(x->job, err, prog->region_id, prog->offset);
	if (check_header(&h))
		return flex_job_fault(x->job, -ENOEXEC, prog->region_id, prog->offset);

	insns = kvmalloc_array(h.n_insns, sizeof(*insns), GFP_KERNEL);
	if (!insns)
		return flex_job_fault(x->job, -ENOMEM, 0, 0);
	/* A program running past its region is malformed, not out of bounds. */
	err = flex_region_read(pr, prog->offset + sizeof(h), insns,
			       (size_t)h.n_insns * sizeof(*insns));
	if (err) {
		err = flex_job_fault(x->job, err == -ERANGE ? -ENOEXEC : err,
				     prog->region_id, prog->offset);
		goto out;
	}
	for (i = 0; i < h.n_insns; i++) {
		if (check_insn(&insns[i], i == h.n_insns - 1, h.n_slots)) {
			x->job->fault.insn = i;
			err = flex_job_fault(x->job, -ENOEXEC, prog->region_id,
					     prog->offset + sizeof(h) + i * sizeof(*insns));
			goto out;
		}
	}

	/* Program correction: the patched operands at segment 7, offset 0. */
	x->n_slots = h.n_slots;
	if (h.n_slots) {
		struct operand corr;

		err = address(x, FLEX_ADDR(FLEX_SEGMENT_CORRECTION, 0), &corr) ?:
		      op_read(x, &corr, 0, x->slots, h.n_slots * sizeof(u64));
		if (err)
			goto out;
	}

	for (i = 0; i < h.n_insns && !err; i++) {
		x->job->fault.insn = i;
		err = run_insn(x, &insns[i]);
	}
out:
	kvfree(insns);
	return err;
}

int flex_compute_run(struct flex_job *job)
{
	struct exec *x;
	int err;

	x = kvmalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		return flex_job_fault(job, -ENOMEM, 0, 0);
	x->job = job;
	x->cb = &job->cb.compute;
	err = load_and_run(x);
	kvfree(x);
	return err;
}
