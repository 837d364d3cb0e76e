// SPDX-License-Identifier: GPL-2.0
/*
 * Device copies and fills as programs: see devop.h.
 *
 * A fill whose pattern repeats every 4 bytes (every 1-, 2- and 4-byte
 * pattern, an 8-byte one with equal halves) is FILL instructions of the
 * 32-bit pattern, and a COPY of the last 0..3 bytes from the pattern after
 * the program. Any other 8-byte pattern (an int64 or float64 value) is
 * written once by a COPY from the pattern, then doubled by COPYs from the
 * start of the destination until the first instruction's worth is filled;
 * every later piece copies from that first piece (a multiple of 8 bytes,
 * so the phase is kept). Pieces of later CBs rely on the first CB having
 * run: a stream runs its CBs in order.
 */
#include <string.h>

#include "devop.h"

#define HDR	sizeof(struct flex_prog_header)
#define INSN	sizeof(struct flex_insn)

/* The pattern repeated over 8 bytes; *p32 its 32-bit form if it has one. */
static uint64_t pattern64(const struct devop *op, uint32_t *p32, int *has32)
{
	uint64_t v = op->pattern, r;

	switch (op->psize) {
	case 1:
		r = (v & 0xff) * 0x0101010101010101ULL;
		break;
	case 2:
		r = (v & 0xffff) * 0x0001000100010001ULL;
		break;
	case 4:
		r = (v & 0xffffffffULL) * 0x0000000100000001ULL;
		break;
	default:
		r = v;
	}
	*p32 = (uint32_t)r;
	*has32 = (uint32_t)r == (uint32_t)(r >> 32);
	return r;
}

/* Doublings that take 8 filled bytes to min(size, insn_bytes). */
static uint32_t doublings(const struct devop *op)
{
	uint64_t first = op->size < op->insn_bytes ? op->size : op->insn_bytes, filled = 8;
	uint32_t n = 0;

	for (; filled < first; filled *= 2)
		n++;
	return n;
}

/* A 2-D copy's rows per CB (see devop.h). */
static uint64_t rows_per_cb(const struct devop *op)
{
	uint64_t r = op->insn_bytes * op->insns_per_cb / (op->size ? op->size : 1);

	if (!r)
		r = 1;
	return r < DEVOP_ROWS_PER_CB ? r : DEVOP_ROWS_PER_CB;
}

/* Program @k of a 2-D copy: its rows, one COPY each. */
static size_t program_2d(const struct devop *op, uint32_t k, unsigned char *buf);

size_t flex_devop_program_max(const struct devop *op)
{
	if (op->rows > 1)
		return HDR + INSN * (rows_per_cb(op) + 1);
	/* The first CB of a doubling fill is the longest: 1 + doublings + pieces + END. */
	return HDR + INSN * (2 + doublings(op) + op->insns_per_cb) + 8;
}

uint32_t flex_devop_n_cbs(const struct devop *op)
{
	uint64_t per_cb = op->insn_bytes * op->insns_per_cb;

	if (op->rows > 1)
		return op->size ? (uint32_t)((op->rows + rows_per_cb(op) - 1) / rows_per_cb(op)) : 0;

	return (uint32_t)((op->size + per_cb - 1) / per_cb);
}

struct emit {
	unsigned char *buf;
	uint32_t n;
};

static void emit(struct emit *e, uint8_t op, uint64_t a0, uint64_t a1, uint64_t a2)
{
	struct flex_insn in;

	memset(&in, 0, sizeof(in));
	in.op = op;
	in.dtype = FLEX_DT_I32;
	in.arg[0] = a0;
	in.arg[1] = a1;
	in.arg[2] = a2;
	memcpy(e->buf + HDR + INSN * e->n++, &in, sizeof(in));
}

static void put_header(void *buf, uint32_t n_insns)
{
	struct flex_prog_header h;

	memset(&h, 0, sizeof(h));
	h.magic = FLEX_PROG_MAGIC;
	h.version = FLEX_PROG_VERSION;
	h.n_insns = n_insns;
	memcpy(buf, &h, sizeof(h));
}

size_t flex_devop_program(const struct devop *op, uint32_t k, void *buf)
{
	uint64_t per_cb = op->insn_bytes * op->insns_per_cb, body = op->size & ~3ULL;
	uint64_t p64, a, b, start, end, pat_off, filled;
	struct emit e = { buf, 0 };
	uint32_t n_insns, p32, j;
	int has32, dbl;

	if (op->rows > 1)
		return program_2d(op, k, buf);
	if (op->backward)
		k = flex_devop_n_cbs(op) - 1 - k;
	start = (uint64_t)k * per_cb;
	end = start + per_cb < op->size ? start + per_cb : op->size;
	p64 = pattern64(op, &p32, &has32);
	dbl = op->fill && !has32;
	pat_off = flex_devop_program_max(op) - 8;	/* past any program of @op */

	if (!op->fill) {
		n_insns = (uint32_t)((end - start + op->insn_bytes - 1) / op->insn_bytes);
		for (j = 0; j < n_insns; j++) {
			uint32_t p = op->backward ? n_insns - 1 - j : j;

			a = start + p * op->insn_bytes;
			b = a + op->insn_bytes < end ? a + op->insn_bytes : end;
			emit(&e, FLEX_OP_COPY, FLEX_ADDR(0, op->dst + a), FLEX_ADDR(1, op->src + a),
			     b - a);
		}
	} else if (!dbl) {
		for (a = start; a < end && a < body; a = b) {
			b = a + op->insn_bytes < end ? a + op->insn_bytes : end;
			if (b > body)
				b = body;
			emit(&e, FLEX_OP_FILL, FLEX_ADDR(0, op->dst + a), (b - a) / 4, p32);
		}
		if (end == op->size && op->size > body)	/* the last 1..3 bytes */
			emit(&e, FLEX_OP_COPY, FLEX_ADDR(0, op->dst + body), FLEX_ADDR(7, pat_off),
			     op->size - body);
	} else {
		a = start;
		if (k == 0) {
			/* The first piece: 8 bytes of pattern, doubled in place. */
			b = end < op->insn_bytes ? end : op->insn_bytes;
			filled = b < 8 ? b : 8;
			emit(&e, FLEX_OP_COPY, FLEX_ADDR(0, op->dst), FLEX_ADDR(7, pat_off), filled);
			for (; filled < b; filled *= 2)
				emit(&e, FLEX_OP_COPY, FLEX_ADDR(0, op->dst + filled),
				     FLEX_ADDR(0, op->dst),
				     filled < b - filled ? filled : b - filled);
			a = b;
		}
		for (; a < end; a = b) {
			b = a + op->insn_bytes < end ? a + op->insn_bytes : end;
			emit(&e, FLEX_OP_COPY, FLEX_ADDR(0, op->dst + a), FLEX_ADDR(0, op->dst), b - a);
		}
	}
	emit(&e, FLEX_OP_END, 0, 0, 0);
	put_header(buf, e.n);
	if (!op->fill)
		return HDR + INSN * e.n;
	memset((unsigned char *)buf + HDR + INSN * e.n, 0, pat_off - HDR - INSN * e.n);
	memcpy((unsigned char *)buf + pat_off, &p64, 8);	/* little-endian, as the device */
	return pat_off + 8;
}

static size_t program_2d(const struct devop *op, uint32_t k, unsigned char *buf)
{
	uint64_t r = (uint64_t)k * rows_per_cb(op), end = r + rows_per_cb(op);
	struct emit e = { buf, 0 };

	if (end > op->rows)
		end = op->rows;
	for (; r < end; r++)
		emit(&e, FLEX_OP_COPY, FLEX_ADDR(0, op->dst + r * op->dpitch),
		     FLEX_ADDR(1, op->src + r * op->spitch), op->size);
	emit(&e, FLEX_OP_END, 0, 0, 0);
	put_header(buf, e.n);
	return HDR + INSN * e.n;
}
