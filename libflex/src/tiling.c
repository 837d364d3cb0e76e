// SPDX-License-Identifier: GPL-2.0
/*
 * Tiled launches: checking tensors against a kernel signature, the tile
 * counts per axis, and each iteration's tile indices and byte offsets.
 * See flex/tiling.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <flex/tiling.h>

#include "log.h"

/* Every enum flex_dtype: its name (PyTorch's) and element size. */
static const struct {
	const char *name;
	unsigned char size;
} dtypes[] = {
	[FLEX_DTYPE_UINT8] = { "uint8", 1 },
	[FLEX_DTYPE_INT8] = { "int8", 1 },
	[FLEX_DTYPE_INT16] = { "int16", 2 },
	[FLEX_DTYPE_INT32] = { "int32", 4 },
	[FLEX_DTYPE_INT64] = { "int64", 8 },
	[FLEX_DTYPE_FLOAT16] = { "float16", 2 },
	[FLEX_DTYPE_FLOAT32] = { "float32", 4 },
	[FLEX_DTYPE_FLOAT64] = { "float64", 8 },
	[FLEX_DTYPE_COMPLEX32] = { "complex32", 4 },
	[FLEX_DTYPE_COMPLEX64] = { "complex64", 8 },
	[FLEX_DTYPE_COMPLEX128] = { "complex128", 16 },
	[FLEX_DTYPE_BOOL] = { "bool", 1 },
	[FLEX_DTYPE_QINT8] = { "qint8", 1 },
	[FLEX_DTYPE_QUINT8] = { "quint8", 1 },
	[FLEX_DTYPE_QINT32] = { "qint32", 4 },
	[FLEX_DTYPE_BFLOAT16] = { "bfloat16", 2 },
	[FLEX_DTYPE_QUINT4X2] = { "quint4x2", 1 },
	[FLEX_DTYPE_QUINT2X4] = { "quint2x4", 1 },
	[FLEX_DTYPE_BITS1X8] = { "bits1x8", 1 },
	[FLEX_DTYPE_BITS2X4] = { "bits2x4", 1 },
	[FLEX_DTYPE_BITS4X2] = { "bits4x2", 1 },
	[FLEX_DTYPE_BITS8] = { "bits8", 1 },
	[FLEX_DTYPE_BITS16] = { "bits16", 2 },
	[FLEX_DTYPE_FLOAT8_E5M2] = { "float8_e5m2", 1 },
	[FLEX_DTYPE_FLOAT8_E4M3FN] = { "float8_e4m3fn", 1 },
	[FLEX_DTYPE_FLOAT8_E5M2FNUZ] = { "float8_e5m2fnuz", 1 },
	[FLEX_DTYPE_FLOAT8_E4M3FNUZ] = { "float8_e4m3fnuz", 1 },
	[FLEX_DTYPE_UINT16] = { "uint16", 2 },
	[FLEX_DTYPE_UINT32] = { "uint32", 4 },
	[FLEX_DTYPE_UINT64] = { "uint64", 8 },
	[FLEX_DTYPE_FLOAT8_E8M0FNU] = { "float8_e8m0fnu", 1 },
	[FLEX_DTYPE_FLOAT4_E2M1FN_X2] = { "float4_e2m1fn_x2", 1 },
};

#define N_DTYPES	(sizeof(dtypes) / sizeof(dtypes[0]))

/* PyTorch's other names of the same types (torch.float is torch.float32). */
static const struct {
	const char *alias;
	enum flex_dtype dt;
} dtype_aliases[] = {
	{ "half", FLEX_DTYPE_FLOAT16 },	   { "float", FLEX_DTYPE_FLOAT32 },
	{ "double", FLEX_DTYPE_FLOAT64 },  { "short", FLEX_DTYPE_INT16 },
	{ "int", FLEX_DTYPE_INT32 },	   { "long", FLEX_DTYPE_INT64 },
	{ "chalf", FLEX_DTYPE_COMPLEX32 }, { "cfloat", FLEX_DTYPE_COMPLEX64 },
	{ "cdouble", FLEX_DTYPE_COMPLEX128 },
};

FLEX_EXPORT size_t flex_dtype_size(enum flex_dtype dt)
{
	return (unsigned int)dt < N_DTYPES ? dtypes[dt].size : 0;
}

FLEX_EXPORT const char *flex_dtype_name(enum flex_dtype dt)
{
	return (unsigned int)dt < N_DTYPES ? dtypes[dt].name : NULL;
}

FLEX_EXPORT int flex_dtype_from_name(const char *name, enum flex_dtype *out)
{
	if (!name)
		return -EINVAL;
	if (!strncmp(name, "torch.", 6))
		name += 6;
	for (unsigned int i = 0; i < N_DTYPES; i++) {
		if (dtypes[i].name && !strcmp(name, dtypes[i].name)) {
			*out = (enum flex_dtype)i;
			return 0;
		}
	}
	for (unsigned int i = 0; i < sizeof(dtype_aliases) / sizeof(dtype_aliases[0]); i++) {
		if (!strcmp(name, dtype_aliases[i].alias)) {
			*out = dtype_aliases[i].dt;
			return 0;
		}
	}
	return -EINVAL;
}

/*
 * Bytes from the first element to just past the last of an ndim tensor, or
 * -EOVERFLOW. Empty (a zero extent) is 0.
 */
static int span_bytes(uint32_t ndim, const uint64_t *shape, const uint64_t *strides,
		      size_t esize, uint64_t *out)
{
	uint64_t last = 0, t;

	for (uint32_t d = 0; d < ndim; d++) {
		if (!shape[d]) {
			*out = 0;
			return 0;
		}
	}
	for (uint32_t d = 0; d < ndim; d++) {
		if (__builtin_mul_overflow(shape[d] - 1, strides[d], &t) ||
		    __builtin_add_overflow(last, t, &last))
			return -EOVERFLOW;
	}
	if (__builtin_add_overflow(last, 1, &last) || __builtin_mul_overflow(last, esize, &last))
		return -EOVERFLOW;
	*out = last;
	return 0;
}

FLEX_EXPORT int flex_tensor_span_bytes(const struct flex_tensor *t, uint64_t *out)
{
	size_t es = flex_dtype_size(t->dtype);

	if (!es || t->ndim < 1 || t->ndim > FLEX_MAX_DIMS)
		return -EINVAL;
	return span_bytes(t->ndim, t->shape, t->strides, es, out);
}

/* Element count of a shape, or -EOVERFLOW. */
static int elements(uint32_t ndim, const uint64_t *shape, uint64_t *out)
{
	uint64_t n = 1;

	for (uint32_t d = 0; d < ndim; d++)
		if (__builtin_mul_overflow(n, shape[d], &n))
			return -EOVERFLOW;
	*out = n;
	return 0;
}

/*
 * Row-major strides without overlap: innermost 1, each outer stride at
 * least the span of the dimension below it. Returns the first bad
 * dimension, or -1 when fine; *why says what is wrong.
 */
static int bad_strides(uint32_t ndim, const uint64_t *shape, const uint64_t *strides,
		       const char **why)
{
	uint64_t extent;

	if (strides[ndim - 1] != 1) {
		*why = "the innermost stride must be 1";
		return (int)ndim - 1;
	}
	for (int d = (int)ndim - 2; d >= 0; d--) {
		/* The row below spans shape[d+1] * strides[d+1] elements. */
		if (__builtin_mul_overflow(shape[d + 1], strides[d + 1], &extent)) {
			*why = "the row extent overflows 64 bits";
			return d;
		}
		if (strides[d] < extent) {
			*why = "rows overlap (stride below the extent of the next dimension)";
			return d;
		}
	}
	return -1;
}

FLEX_EXPORT int flex_sig_validate(const struct flex_kernel_sig *sig)
{
	if (!sig)
		return flex_error_set(-EINVAL, "signature: NULL");
	if (sig->n_args < 1 || sig->n_args > FLEX_KERNEL_MAX_ARGS)
		return flex_error_set(-EINVAL, "signature: n_args %u not in 1..%u",
				     sig->n_args, FLEX_KERNEL_MAX_ARGS);
	if (sig->n_axes > FLEX_KERNEL_MAX_AXES)
		return flex_error_set(-EINVAL, "signature: n_axes %u above %u", sig->n_axes,
				     FLEX_KERNEL_MAX_AXES);
	for (uint32_t a = 0; a < sig->n_axes; a++)
		if (!memchr(sig->axis_name[a], 0, sizeof(sig->axis_name[a])))
			return flex_error_set(-EINVAL,
					     "signature: axis %u: name not NUL-terminated", a);
	for (uint32_t i = 0; i < sig->n_args; i++) {
		const struct flex_kernel_arg *ka = &sig->args[i];
		size_t es = flex_dtype_size(ka->dtype);
		uint64_t n;
		const char *why;
		int d;

		if (!memchr(ka->name, 0, sizeof(ka->name)))
			return flex_error_set(-EINVAL,
					     "signature: arg %u: name not NUL-terminated", i);
		if (!es)
			return flex_error_set(-EINVAL, "signature: arg %u (%s): unknown dtype %d",
					     i, ka->name, (int)ka->dtype);
		if (ka->ndim < 1 || ka->ndim > FLEX_MAX_DIMS)
			return flex_error_set(-EINVAL,
					     "signature: arg %u (%s): ndim %u not in 1..%u", i, ka->name,
					     ka->ndim, FLEX_MAX_DIMS);
		for (d = 0; d < (int)ka->ndim; d++) {
			if (!ka->shape[d])
				return flex_error_set(-EINVAL,
						     "signature: arg %u (%s) dim %d: tile shape 0", i,
						     ka->name, d);
			if (ka->axis[d] < -1 || ka->axis[d] >= (int)sig->n_axes)
				return flex_error_set(-EINVAL,
						     "signature: arg %u (%s) dim %d: axis %d not in -1..%d",
						     i, ka->name, d, ka->axis[d], (int)sig->n_axes - 1);
		}
		if (elements(ka->ndim, ka->shape, &n) || __builtin_mul_overflow(n, es, &n))
			return flex_error_set(-EINVAL,
					     "signature: arg %u (%s): tile size overflows 64 bits", i,
					     ka->name);
		if (ka->fixed_strides) {
			d = bad_strides(ka->ndim, ka->shape, ka->strides, &why);
			if (d >= 0)
				return flex_error_set(-EINVAL,
						     "signature: arg %u (%s) dim %d: fixed strides: %s", i,
						     ka->name, d, why);
			if (span_bytes(ka->ndim, ka->shape, ka->strides, es, &n))
				return flex_error_set(-EINVAL,
						     "signature: arg %u (%s): span overflows 64 bits", i,
						     ka->name);
		}
	}
	return 0;
}

static void compute_order(const struct flex_kernel_sig *sig, struct flex_tiling *t)
{
	uint32_t n = 0;

	for (uint32_t a = 0; a < sig->n_axes; a++)
		if (!sig->axis_is_reduction[a])
			t->order[n++] = a;
	for (uint32_t a = 0; a < sig->n_axes; a++)
		if (sig->axis_is_reduction[a])
			t->order[n++] = a;
}

/* Check one argument's dtype, ndim and strides (everything but shapes). */
static int check_layout(const struct flex_kernel_arg *ka, const struct flex_tensor *ta,
			uint32_t i)
{
	size_t es = flex_dtype_size(ka->dtype);
	const char *why;
	uint64_t span;
	int d;

	if (ta->dtype != ka->dtype)
		return flex_error_set(-EINVAL, "arg %u (%s): dtype %s, the kernel takes %s", i,
				     ka->name, flex_dtype_name(ta->dtype) ?: "(unknown)",
				     flex_dtype_name(ka->dtype));
	if (ta->ndim != ka->ndim)
		return flex_error_set(-EINVAL, "arg %u (%s): %u dimensions, the kernel takes %u",
				     i, ka->name, ta->ndim, ka->ndim);
	if (ta->byte_offset % es)
		return flex_error_set(-EINVAL,
				     "arg %u (%s): byte offset %llu is not a multiple of the element size %zu",
				     i, ka->name, (unsigned long long)ta->byte_offset, es);
	d = bad_strides(ta->ndim, ta->shape, ta->strides, &why);
	if (d >= 0)
		return flex_error_set(-EINVAL, "arg %u (%s) dim %d: stride %llu: %s", i,
				     ka->name, d, (unsigned long long)ta->strides[d], why);
	if (span_bytes(ta->ndim, ta->shape, ta->strides, es, &span))
		return flex_error_set(-EINVAL,
				     "arg %u (%s): shape x strides x %zu bytes overflows 64 bits", i,
				     ka->name, es);
	if (ka->fixed_strides) {
		for (d = 0; d < (int)ka->ndim; d++)
			if (ta->strides[d] != ka->strides[d])
				return flex_error_set(-EINVAL,
						     "arg %u (%s) dim %d: stride %llu, the kernel is compiled for fixed stride %llu",
						     i, ka->name, d, (unsigned long long)ta->strides[d],
						     (unsigned long long)ka->strides[d]);
	}
	return 0;
}

FLEX_EXPORT int flex_tiling_plan(const struct flex_kernel_sig *sig,
				 const struct flex_tensor *args, uint32_t n_args,
				 int allow_tiled, struct flex_tiling *out)
{
	struct flex_tiling t;
	/* Which argument and dimension first set each axis's count. */
	int32_t set_by_arg[FLEX_KERNEL_MAX_AXES], set_by_dim[FLEX_KERNEL_MAX_AXES];
	int ret;

	ret = flex_sig_validate(sig);
	if (ret)
		return ret;
	if (n_args != sig->n_args)
		return flex_error_set(-EINVAL, "%u arguments, the kernel takes %u", n_args,
				     sig->n_args);
	if (!args)
		return flex_error_set(-EINVAL, "arguments: NULL");

	memset(&t, 0, sizeof(t));
	t.n_axes = sig->n_axes;
	for (uint32_t a = 0; a < FLEX_KERNEL_MAX_AXES; a++) {
		t.count[a] = 1;
		set_by_arg[a] = -1;
		set_by_dim[a] = -1;
	}

	for (uint32_t i = 0; i < n_args; i++) {
		ret = check_layout(&sig->args[i], &args[i], i);
		if (ret)
			return ret;
	}

	for (uint32_t i = 0; i < n_args; i++) {
		const struct flex_kernel_arg *ka = &sig->args[i];
		const struct flex_tensor *ta = &args[i];

		for (uint32_t d = 0; d < ka->ndim; d++) {
			uint64_t tile = ka->shape[d], have = ta->shape[d], count;
			int ax = ka->axis[d];

			if (have == tile) {
				count = 1;
			} else if (!allow_tiled) {
				return flex_error_set(-EDOM,
						     "arg %u (%s) dim %u: %llu differs from the compiled tile %llu and tiled launch is not allowed",
						     i, ka->name, d, (unsigned long long)have,
						     (unsigned long long)tile);
			} else if (ax < 0) {
				return flex_error_set(-EINVAL,
						     "arg %u (%s) dim %u: %llu differs from the tile %llu, and this dimension is never tiled",
						     i, ka->name, d, (unsigned long long)have,
						     (unsigned long long)tile);
			} else if (have < tile) {
				return flex_error_set(-EINVAL,
						     "arg %u (%s) dim %u: %llu is smaller than the tile %llu",
						     i, ka->name, d, (unsigned long long)have,
						     (unsigned long long)tile);
			} else if (have % tile) {
				return flex_error_set(-EINVAL,
						     "arg %u (%s) dim %u: %llu is not a multiple of the tile %llu",
						     i, ka->name, d, (unsigned long long)have,
						     (unsigned long long)tile);
			} else {
				count = have / tile;
			}
			if (ax < 0)
				continue;
			if (set_by_arg[ax] < 0) {
				t.count[ax] = count;
				set_by_arg[ax] = (int32_t)i;
				set_by_dim[ax] = (int32_t)d;
			} else if (t.count[ax] != count) {
				const struct flex_kernel_arg *o = &sig->args[set_by_arg[ax]];

				return flex_error_set(-EINVAL,
						     "arg %u (%s) dim %u: %llu tiles along axis %s, but arg %d (%s) dim %d has %llu",
						     i, ka->name, d, (unsigned long long)count,
						     sig->axis_name[ax], set_by_arg[ax], o->name,
						     set_by_dim[ax], (unsigned long long)t.count[ax]);
			}
		}
	}

	t.n_iters = 1;
	for (uint32_t a = 0; a < t.n_axes; a++)
		if (__builtin_mul_overflow(t.n_iters, t.count[a], &t.n_iters))
			return flex_error_set(-EINVAL,
					     "the number of tiles overflows 64 bits (axis %s)",
					     sig->axis_name[a]);
	compute_order(sig, &t);
	*out = t;
	return 0;
}

FLEX_EXPORT void flex_tiling_iter(const struct flex_tiling *t, const struct flex_kernel_sig *sig,
				  const struct flex_tensor *args, uint32_t n_args, uint64_t iter,
				  uint64_t tile_idx[FLEX_KERNEL_MAX_AXES],
				  uint64_t byte_offset[], int *first_reduction)
{
	uint64_t rem = t->n_iters ? iter % t->n_iters : 0;
	int first = 1;

	for (uint32_t a = 0; a < FLEX_KERNEL_MAX_AXES; a++)
		tile_idx[a] = 0;
	/* The last axis in order varies fastest. */
	for (int j = (int)t->n_axes - 1; j >= 0; j--) {
		uint32_t a = t->order[j];

		tile_idx[a] = rem % t->count[a];
		rem /= t->count[a];
		if (sig->axis_is_reduction[a] && tile_idx[a])
			first = 0;
	}
	for (uint32_t i = 0; i < n_args; i++) {
		const struct flex_kernel_arg *ka = &sig->args[i];
		uint64_t off = 0, es = flex_dtype_size(ka->dtype);

		for (uint32_t d = 0; d < ka->ndim; d++)
			if (ka->axis[d] >= 0)
				off += tile_idx[ka->axis[d]] * args[i].strides[d] * ka->shape[d] *
				       es;
		byte_offset[i] = off;
	}
	if (first_reduction)
		*first_reduction = first;
}
