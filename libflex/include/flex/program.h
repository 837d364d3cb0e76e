/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/program.h - flex ISA programs: build, validate, read and write them,
 * and the standard correction-driven kernels.
 *
 * A program is a 32-byte header and 128-byte instructions
 * (<linux/flex_isa.h>, Documentation/flex/isa.rst). The builder collects
 * instructions in memory and produces the binary; flex_program_validate()
 * applies the device's own validation rules (isa.rst, "Validation"), so a
 * tool can refuse a bad binary before the device faults it with
 * FLEX_FAULT_BAD_PROGRAM.
 *
 * The standard kernels (flex_kernel_new_matmul(), _add(), _relu()) are what a
 * compiler would produce for one tile: one instruction whose addresses and
 * leading dimensions are correction slots, so that one binary serves every
 * launch and every tile (see flex/tiling.h). Each comes with its kernel
 * signature and its correction slot array (struct flex_corr_slot,
 * flex/job.h), the program_correction_metadata of the Program Execution
 * Pipeline RFC.
 *
 * Threading: a builder is not thread-safe (one thread at a time per
 * builder); everything else is pure and may be called from any thread.
 */
#ifndef FLEX_PROGRAM_H
#define FLEX_PROGRAM_H

#include <stddef.h>
#include <stdint.h>

#include <linux/flex_isa.h>
#include <flex/job.h>
#include <flex/tiling.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLEX_PROG_HEADER_SIZE	32U
#define FLEX_PROG_INSN_SIZE	128U
/* The largest valid program: a header and FLEX_PROG_MAX_INSNS instructions. */
#define FLEX_PROG_MAX_BYTES	(FLEX_PROG_HEADER_SIZE + FLEX_PROG_INSN_SIZE * FLEX_PROG_MAX_INSNS)

/**
 * struct flex_program_info - what flex_program_validate() found.
 * @n_insns:	instructions, END included.
 * @n_slots:	the header's n_slots (slots the device reads).
 * @slots_used:	the highest slot an operand references, plus one (0: none).
 * @size:	the program's bytes: 32 + 128 * n_insns.
 */
struct flex_program_info {
	uint32_t n_insns;
	uint32_t n_slots;
	uint32_t slots_used;
	uint64_t size;
};

/**
 * flex_program_validate() - check a program binary as the device does.
 * @buf, @len:	the binary; @len must be exactly 32 + 128 * n_insns (a file
 *		with trailing bytes is refused: it is not what was compiled).
 * @info:	if not NULL, filled on success.
 *
 * Rules: magic, version, zero flags and reserved words, 1 <= n_insns <=
 * FLEX_PROG_MAX_INSNS, n_slots <= FLEX_PROG_MAX_SLOTS; per instruction: a
 * known opcode, END exactly last, an allowed dtype and flags, zero
 * reserved, zero unused operands, slot references with bits 32..62 clear
 * and below n_slots. MATMUL's arg[9] (accumulate) counts as used.
 *
 * Return: 0; -ENOEXEC for a malformed program (as the device's
 * FLEX_FAULT_BAD_PROGRAM); -EINVAL for a NULL @buf. flex_last_error()
 * names the rule and the instruction ("insn 3 (MATMUL): arg[10] is 0x5
 * but unused operands must be 0").
 *
 * Since: 1.0
 */
int flex_program_validate(const void *buf, size_t len, struct flex_program_info *info);

/**
 * flex_program_read_file() - read and validate a program file.
 * @path:	the file.
 * @buf, @len:	receive a malloc()ed copy (free() it) and its size.
 *
 * Return: 0; open(2)/read(2) errors (-ENOENT, -EACCES, -EISDIR, ...);
 * -EFBIG above FLEX_PROG_MAX_BYTES; -ENOEXEC not a valid program;
 * -ENOMEM.
 *
 * Since: 1.0
 */
int flex_program_read_file(const char *path, void **buf, size_t *len);

/**
 * flex_program_write_file() - validate @buf and write it to @path (via a
 * temporary file renamed into place, so a reader never sees half a
 * program). Return: 0; -ENOEXEC for an invalid program; write errors.
 *
 * Since: 1.0
 */
int flex_program_write_file(const char *path, const void *buf, size_t len);

/* ---- builder ---- */

struct flex_program;

/**
 * flex_program_new() - an empty builder. Return: 0 or -ENOMEM.
 *
 * Since: 1.0
 */
int flex_program_new(struct flex_program **out);

/** flex_program_destroy() - free a builder; NULL is ignored. Since: 1.0. */
void flex_program_destroy(struct flex_program *p);

/**
 * flex_program_emit() - append one instruction.
 * @op:		FLEX_OP_* other than END (flex_program_finish() adds it).
 * @dtype:	FLEX_DT_*.
 * @flags:	FLEX_INSN_*.
 * @args:	@n_args operands: immediates, FLEX_ADDR(seg, off) or
 *		FLEX_SLOT(n); the rest are 0.
 *
 * The instruction is checked as flex_program_validate() would (opcode,
 * dtype, flags, operand count, slot encoding); slot references raise the
 * header's n_slots as needed.
 *
 * Return: 0; -EINVAL for an instruction the device would refuse (and
 * nothing is appended); -E2BIG when the program would exceed
 * FLEX_PROG_MAX_INSNS; -ENOMEM.
 *
 * Since: 1.0
 */
int flex_program_emit(struct flex_program *p, uint8_t op, uint8_t dtype, uint16_t flags,
		      const uint64_t *args, unsigned int n_args);

/**
 * flex_program_set_slots() - declare @n_slots correction slots (default:
 * the highest slot referenced plus one). Return: 0; -EINVAL above
 * FLEX_PROG_MAX_SLOTS or below a slot already referenced.
 *
 * Since: 1.0
 */
int flex_program_set_slots(struct flex_program *p, uint32_t n_slots);

/**
 * flex_program_finish() - append END and produce the binary.
 * @buf, @len:	receive a malloc()ed binary (free() it). The builder is
 *		left as it was (finish may be called again after more emits).
 * Return: 0; -E2BIG (no room for END); -ENOMEM.
 *
 * Since: 1.0
 */
int flex_program_finish(struct flex_program *p, void **buf, size_t *len);

/* ---- the standard kernels ---- */

#define FLEX_KERNEL_MAX_CORR	64

/*
 * struct flex_kernel - a compiled tile kernel, made by flex_kernel_new_*()
 * and freed with flex_kernel_destroy(); its fields are read-only.
 * @name:	e.g. "matmul_i32", "add_bf16".
 * @sig:	its arguments and tiling axes.
 * @n_corr, @corr: its correction slots, one __u64 each in this order.
 * @binary, @binary_size: the program.
 */
struct flex_kernel {
	char name[32];
	struct flex_kernel_sig sig;
	uint32_t n_corr;
	struct flex_corr_slot corr[FLEX_KERNEL_MAX_CORR];
	void *binary;
	size_t binary_size;
};

/**
 * flex_kernel_new_matmul() - C[M x N] (+)= A[M x K] . B[K x N], one tile.
 * @dt:		the type of A and B: FLEX_DTYPE_INT32, FLEX_DTYPE_INT8 (C is
 *		int32 for both), FLEX_DTYPE_FLOAT32, FLEX_DTYPE_BFLOAT16 or
 *		FLEX_DTYPE_FLOAT16 (C of the same type, summed in binary32).
 * @m, @n, @k:	the tile, immediates in the binary.
 * @out:	the kernel: args A [m,k] axes (m,k), B [k,n] axes (k,n), C [m,n]
 *		axes (m,n) output; axes m, n, k with k a reduction; slots
 *		0 address A, 1 address B, 2 address C, 3 stride C dim 0,
 *		4 stride A dim 0, 5 stride B dim 0, 6 accumulate (MATMUL's
 *		arg[9]), i.e. MATMUL C=s2 A=s0 B=s1 m n k ldc=s3 lda=s4 ldb=s5
 *		acc=s6.
 *
 * Return: 0; -EINVAL for a type the device does not compute, a zero or
 * >= 2^32 dimension or a NULL @out; -E2BIG beyond the device limits (M*N
 * or a span above FLEX_ISA_MAX_ELEMENTS, M*N*K above FLEX_ISA_MAX_MACS);
 * -ENOMEM. flex_last_error() says which.
 * Since: 1.0 (int32 and int8 only, into a caller's struct, before).
 */
int flex_kernel_new_matmul(enum flex_dtype dt, uint64_t m, uint64_t n, uint64_t k,
			   struct flex_kernel **out);

/**
 * flex_kernel_new_add() - C = A + B, one @rows x @cols tile of type @dt
 * (FLEX_DTYPE_INT32, FLEX_DTYPE_FLOAT32, FLEX_DTYPE_BFLOAT16 or
 * FLEX_DTYPE_FLOAT16). Args A, B, C (output), each [rows, cols] axes
 * (m, n); slots 0 address A, 1 address B, 2 address C, 3 stride C dim 0,
 * 4 stride A dim 0, 5 stride B dim 0. Return: as flex_kernel_new_matmul().
 * Since: 1.0.
 */
int flex_kernel_new_add(enum flex_dtype dt, uint64_t rows, uint64_t cols,
			struct flex_kernel **out);

/**
 * flex_kernel_new_mul() - C = A * B elementwise: as flex_kernel_new_add().
 * Since: 1.0.
 */
int flex_kernel_new_mul(enum flex_dtype dt, uint64_t rows, uint64_t cols,
			struct flex_kernel **out);

/**
 * flex_kernel_new_relu() - Y = max(X, 0), one @rows x @cols tile of type
 * @dt (as flex_kernel_new_add()). Args X, Y (output), each [rows, cols]
 * axes (m, n); slots 0 address X, 1 address Y, 2 stride Y dim 0, 3 stride
 * X dim 0. Return: as flex_kernel_new_matmul(). Since: 1.0.
 */
int flex_kernel_new_relu(enum flex_dtype dt, uint64_t rows, uint64_t cols,
			 struct flex_kernel **out);

/** flex_kernel_destroy() - free a kernel (NULL is ignored). Since: 1.0. */
void flex_kernel_destroy(struct flex_kernel *k);

/** flex_op_name() - "MATMUL" etc., or NULL for an unknown opcode. Since: 1.0. */
const char *flex_op_name(unsigned int op);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_PROGRAM_H */
