/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * flex device ISA and program binary format (version 1).
 *
 * A program is a header followed by fixed-size instructions, stored in
 * device memory and named by a compute CB (struct flex_cb_compute). The
 * device validates the whole program (header, version, length, every
 * instruction) before running any of it; a malformed program faults its CB
 * with FLEX_FAULT_BAD_PROGRAM. Little-endian; integer and (since UAPI
 * minor 3) floating-point element types.
 *
 * Operands are 64-bit. Bit 63 set means "read the value from correction
 * slot N" (N = bits 0..31): the correction tensor is an array of __u64 at
 * segment 7, offset 0, written by the host before the launch. This is
 * program correction: one binary serves every launch and tile, the host
 * patches addresses and shapes. A slot's value is used as is (no second
 * indirection).
 *
 * An address operand is FLEX_ADDR(segment, offset): the device address
 * segments[segment] + offset of the CB's segment table. Every access is
 * bounds-checked against the segment's region; leaving it faults with
 * FLEX_FAULT_OUT_OF_BOUNDS, a missing segment with FLEX_FAULT_UNMAPPED.
 * A scalar operand (shape, count, stride, value) must be below 2^32.
 *
 * Documentation/flex/isa.rst describes each instruction.
 */
#ifndef _UAPI_LINUX_FLEX_ISA_H
#define _UAPI_LINUX_FLEX_ISA_H

#include <linux/types.h>

#define FLEX_PROG_MAGIC		0x50584c46	/* "FLXP" */
#define FLEX_PROG_VERSION	1
#define FLEX_PROG_MAX_INSNS	1024
#define FLEX_PROG_MAX_SLOTS	1024

/**
 * struct flex_prog_header - the first 32 bytes of a program
 * @magic: FLEX_PROG_MAGIC.
 * @version: FLEX_PROG_VERSION.
 * @flags: must be 0.
 * @n_insns: instructions that follow, 1 .. FLEX_PROG_MAX_INSNS; the last
 *	one, and only it, is FLEX_OP_END.
 * @n_slots: correction slots the program may read, 0 .. FLEX_PROG_MAX_SLOTS.
 * @reserved: must be 0.
 *
 * The instructions follow the header immediately, all inside the
 * program's region. A header or instruction that breaks a rule faults the
 * CB with FLEX_FAULT_BAD_PROGRAM before any instruction runs.
 */
struct flex_prog_header {
	__u32 magic;
	__u16 version;
	__u16 flags;
	__u32 n_insns;
	__u32 n_slots;
	__u64 reserved[2];
};

#define FLEX_INSN_ARGS		15

/**
 * struct flex_insn - one 128-byte instruction
 * @op: FLEX_OP_*.
 * @dtype: FLEX_DT_*, as the instruction allows.
 * @flags: FLEX_INSN_* the instruction allows, others 0.
 * @reserved: must be 0.
 * @arg: operands, per instruction (see the opcodes below): immediates or
 *	FLEX_SLOT() references; unused ones must be 0.
 */
struct flex_insn {
	__u8 op;
	__u8 dtype;
	__u16 flags;
	__u32 reserved;
	__u64 arg[FLEX_INSN_ARGS];
};

/* Operand encodings. */
#define FLEX_ARG_SLOT_BIT	(1ULL << 63)
#define FLEX_SLOT(n)		(FLEX_ARG_SLOT_BIT | (__u64)(__u32)(n))
#define FLEX_ADDR_SEG_SHIFT	60
#define FLEX_ADDR_OFFSET_MASK	((1ULL << 48) - 1)
#define FLEX_ADDR(seg, off)	(((__u64)(seg) << FLEX_ADDR_SEG_SHIFT) | \
				 ((__u64)(off) & FLEX_ADDR_OFFSET_MASK))

/*
 * Element types. The floating-point types (UAPI minor 3) are IEEE 754
 * binary32, bfloat16 (binary32's upper half) and binary16; the device
 * computes on them in binary32 and rounds each result to its type, to
 * nearest, ties to even.
 */
#define FLEX_DT_I32		0	/* int32 */
#define FLEX_DT_I8		1	/* int8 (MATMUL: int8 inputs, int32 C) */
#define FLEX_DT_F32		2	/* float32 */
#define FLEX_DT_BF16		3	/* bfloat16 */
#define FLEX_DT_F16		4	/* float16 */

/* Instruction flags. */
#define FLEX_INSN_ACCUMULATE	(1U << 0)	/* matmul: C += A.B */

/*
 * Opcodes, with their operands. Matrices are row-major; ld* are leading
 * dimensions (row strides) in elements, at least the row length.
 *
 * FLEX_OP_END	  -					end of program
 * FLEX_OP_COPY	  dst, src, bytes			memmove-like byte copy
 * FLEX_OP_FILL	  dst, count, value			count elements = value
 * FLEX_OP_ADD	  dst, a, b, rows, cols, ld_dst, ld_a, ld_b	dst = a + b
 * FLEX_OP_MUL	  dst, a, b, rows, cols, ld_dst, ld_a, ld_b	dst = a * b
 * FLEX_OP_RELU	  dst, src, rows, cols, ld_dst, ld_src		dst = max(src, 0)
 * FLEX_OP_MATMUL C, A, B, M, N, K, ldc, lda, ldb, acc
 *						C[MxN] (+)= A[MxK].B[KxN]
 *
 * Integer arithmetic is int32 and wraps. END and COPY take FLEX_DT_I32;
 * FILL any type (value: the element's bit pattern); ADD, MUL and RELU
 * FLEX_DT_I32 and the floating-point types; MATMUL FLEX_DT_I32 (all
 * int32), FLEX_DT_I8 (A and B int8, C int32) and the floating-point types
 * (A, B and C of the type, the sum accumulated in binary32 and rounded
 * once), and FLEX_INSN_ACCUMULATE. Its operand acc (arg[9]) accumulates
 * too when non-zero: C += A.B. Being an operand it can come from a
 * correction slot, so one binary computes the first step of a reduction
 * (acc = 0) and the later ones (acc = 1); programs older than acc have 0
 * there and keep their meaning.
 */
#define FLEX_OP_END		0
#define FLEX_OP_COPY		1
#define FLEX_OP_FILL		2
#define FLEX_OP_ADD		3
#define FLEX_OP_MUL		4
#define FLEX_OP_RELU		5
#define FLEX_OP_MATMUL		6

/* Device limits: beyond them an instruction faults with FLEX_FAULT_LIMIT. */
#define FLEX_ISA_MAX_ELEMENTS	(1U << 24)	/* per operand */
#define FLEX_ISA_MAX_MACS	(1ULL << 28)	/* per MATMUL */

#endif /* _UAPI_LINUX_FLEX_ISA_H */
