/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex compute engine: the binary32 kernels (flex_fpu.c), and conversions
 * between binary32 and the 16-bit floating-point types, in integer code.
 *
 * flex_fpu.c is built with SSE enabled: its functions may be called only
 * between kernel_fpu_begin() and kernel_fpu_end(), and only for a short
 * stretch of work (a row of a matmul block, a chunk of an elementwise
 * instruction), as the FPU section keeps the CPU from being preempted.
 * Every array here holds binary32 bit patterns.
 */
#ifndef _FLEX_FPU_H
#define _FLEX_FPU_H

#include <linux/types.h>

/* c[j] += sum over k < kb of a[k] * b[k * ldb + j], for j < nb. */
void flex_fpu_mac_row(u32 *c, const u32 *a, const u32 *b, unsigned int nb,
		      unsigned int kb, unsigned int ldb);
/* d[i] = a[i] + b[i], a[i] * b[i], max(a[i], 0) (NaN stays NaN). */
void flex_fpu_add(u32 *d, const u32 *a, const u32 *b, unsigned int n);
void flex_fpu_mul(u32 *d, const u32 *a, const u32 *b, unsigned int n);
void flex_fpu_relu(u32 *d, const u32 *a, unsigned int n);

/* bfloat16 is binary32's upper half: widening is exact. */
static inline u32 flex_bf16_to_f32(u16 h)
{
	return (u32)h << 16;
}

/* To nearest, ties to even; a NaN stays a (quiet) NaN. */
static inline u16 flex_f32_to_bf16(u32 f)
{
	if ((f & 0x7fffffff) > 0x7f800000)
		return (f >> 16) | 0x40;
	return (f + 0x7fff + ((f >> 16) & 1)) >> 16;
}

static inline u32 flex_f16_to_f32(u16 h)
{
	u32 sign = (u32)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;

	if (e == 0x1f)				/* inf, NaN */
		return sign | 0x7f800000 | m << 13;
	if (e)					/* normal: rebias 15 -> 127 */
		return sign | (e + 112) << 23 | m << 13;
	if (!m)
		return sign;
	for (e = 113; !(m & 0x400); e--)	/* subnormal: normalise */
		m <<= 1;
	return sign | e << 23 | (m & 0x3ff) << 13;
}

/* To nearest, ties to even, with subnormals; too large becomes inf. */
static inline u16 flex_f32_to_f16(u32 f)
{
	u32 sign = (f >> 16) & 0x8000, abs = f & 0x7fffffff, m, r, rem, half;
	unsigned int shift;

	if (abs > 0x7f800000)			/* NaN: quiet, payload kept */
		return sign | 0x7e00 | ((abs >> 13) & 0x3ff);
	if (abs >= 0x477ff000)			/* 65520 and up: inf */
		return sign | 0x7c00;
	if (abs >= 0x38800000) {		/* 2^-14 and up: normal */
		r = abs - 0x38000000;
		return sign | (r + 0xfff + ((r >> 13) & 1)) >> 13;
	}
	if (abs < 0x33000000)			/* up to 2^-25: zero */
		return sign;
	m = (abs & 0x7fffff) | 0x800000;	/* subnormal: m * 2^(e - 150) */
	shift = 126 - (abs >> 23);		/* 14 .. 24 */
	half = 1U << (shift - 1);
	r = m >> shift;
	rem = m & ((1U << shift) - 1);
	if (rem > half || (rem == half && (r & 1)))
		r++;
	return sign | r;
}

#endif /* _FLEX_FPU_H */
