/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Device copies and fills as compute programs (devop.c): the pure part,
 * which the host unit tests run through an interpreter of COPY and FILL.
 *
 * An operation is split into CBs of at most insns_per_cb instructions of
 * at most insn_bytes each (the device: 4 x 64 MiB). Each CB's program is
 * built with immediate operands only (no correction slots): addresses are
 * FLEX_ADDR(0, dst offset) and FLEX_ADDR(1, src offset) in the regions of
 * segments 0 and 1, and a fill's pattern is 8 bytes placed right after the
 * program, read as FLEX_ADDR(7, that offset): segment 7 is where the
 * program itself is loaded.
 */
#ifndef FLEX_DEVOP_H
#define FLEX_DEVOP_H

#include <stddef.h>
#include <stdint.h>

#include <linux/flex_isa.h>

/* The device's limits: 64 MiB per COPY (and per FILL: 2^24 int32), 4 per CB. */
#define DEVOP_INSN_BYTES	(4ULL * FLEX_ISA_MAX_ELEMENTS)
#define DEVOP_INSNS_PER_CB	4U
/* A 2-D copy's rows per CB at most: one COPY each, a 32 KiB program. */
#define DEVOP_ROWS_PER_CB	255U

/*
 * struct devop - one device copy or fill.
 * @fill:	1 fill, 0 copy.
 * @dst, @src:	byte offsets in the regions of segments 0 and 1 (src: copy).
 * @size:	bytes.
 * @pattern:	fill: the pattern's @psize bytes, little-endian.
 * @psize:	fill: 1, 2, 4 or 8.
 * @backward:	copy: the ranges overlap with dst above src, so pieces go
 *		from the end (each instruction is a memmove).
 * @insn_bytes: bytes per instruction, a multiple of 8.
 * @insns_per_cb: instructions (COPY/FILL) per CB, at least 1.
 * @rows:	copy: 0 or 1 for one range of @size bytes; more for a 2-D copy
 *		of @rows rows of @size bytes (1 .. @insn_bytes), row r from
 *		@src + r * @spitch to @dst + r * @dpitch, one COPY per row,
 *		as many rows per CB as @insn_bytes * @insns_per_cb bytes take,
 *		at most DEVOP_ROWS_PER_CB. The rows must not overlap
 *		(@backward is not used).
 * @dpitch, @spitch: a 2-D copy's row pitches in bytes.
 */
struct devop {
	int fill;
	uint64_t dst, src, size;
	uint64_t pattern;
	uint32_t psize;
	int backward;
	uint64_t insn_bytes;
	uint32_t insns_per_cb;
	uint64_t rows, dpitch, spitch;
};

/* The most bytes flex_devop_program() writes for @op. */
size_t flex_devop_program_max(const struct devop *op);

/* CBs of @op: 0 for 0 bytes. */
uint32_t flex_devop_n_cbs(const struct devop *op);

/*
 * Program @k (0 .. flex_devop_n_cbs() - 1, in submission order) into @buf, at
 * least flex_devop_program_max() bytes: header, instructions, END, and for a
 * fill the 8-byte pattern. Returns the bytes to load (program + pattern).
 */
size_t flex_devop_program(const struct devop *op, uint32_t k, void *buf);

#endif /* FLEX_DEVOP_H */
