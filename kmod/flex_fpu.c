// SPDX-License-Identifier: GPL-2.0
/*
 * flex compute engine: the binary32 arithmetic. This file alone is built
 * with the FPU enabled (kmod/Kbuild); see flex_fpu.h for when it may run.
 * It holds loops and nothing else, so that no SSE code can run outside a
 * kernel_fpu_begin() section.
 */

#include "flex_fpu.h"

void flex_fpu_mac_row(u32 *c, const u32 *a, const u32 *b, unsigned int nb,
		      unsigned int kb, unsigned int ldb)
{
	float *cf = (float *)c;
	const float *af = (const float *)a, *bf = (const float *)b;
	unsigned int j, k;

	for (k = 0; k < kb; k++) {
		const float *brow = bf + (size_t)k * ldb;
		float av = af[k];

		for (j = 0; j < nb; j++)
			cf[j] += av * brow[j];
	}
}

void flex_fpu_add(u32 *d, const u32 *a, const u32 *b, unsigned int n)
{
	const float *af = (const float *)a, *bf = (const float *)b;
	float *df = (float *)d;
	unsigned int i;

	for (i = 0; i < n; i++)
		df[i] = af[i] + bf[i];
}

void flex_fpu_mul(u32 *d, const u32 *a, const u32 *b, unsigned int n)
{
	const float *af = (const float *)a, *bf = (const float *)b;
	float *df = (float *)d;
	unsigned int i;

	for (i = 0; i < n; i++)
		df[i] = af[i] * bf[i];
}

void flex_fpu_relu(u32 *d, const u32 *a, unsigned int n)
{
	const float *af = (const float *)a;
	float *df = (float *)d;
	unsigned int i;

	for (i = 0; i < n; i++)
		df[i] = af[i] > 0.0f || af[i] != af[i] ? af[i] : 0.0f;
}
