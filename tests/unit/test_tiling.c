// SPDX-License-Identifier: GPL-2.0
/*
 * Tiled launches (flex/tiling.h): tile counts, iteration order, per-tile
 * byte offsets by the RFC's formula, reduction tiling, strided tensors,
 * and every refusal with a message naming the argument and dimension.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <flex/tiling.h>

#include "unit_util.h"

/* A matmul signature: A[m,k] B[k,n] C[m,n], k a reduction. */
static void matmul_sig(struct flex_kernel_sig *s, enum flex_dtype dt, uint64_t m, uint64_t n,
		       uint64_t k)
{
	static const char *names[3] = { "A", "B", "C" };
	const uint64_t shp[3][2] = { { m, k }, { k, n }, { m, n } };
	const int ax[3][2] = { { 0, 2 }, { 2, 1 }, { 0, 1 } };

	memset(s, 0, sizeof(*s));
	s->n_axes = 3;
	strcpy(s->axis_name[0], "m");
	strcpy(s->axis_name[1], "n");
	strcpy(s->axis_name[2], "k");
	s->axis_is_reduction[2] = 1;
	s->n_args = 3;
	for (int i = 0; i < 3; i++) {
		struct flex_kernel_arg *a = &s->args[i];

		strcpy(a->name, names[i]);
		a->dtype = i == 2 ? FLEX_DTYPE_INT32 : dt;
		a->ndim = 2;
		a->shape[0] = shp[i][0];
		a->shape[1] = shp[i][1];
		a->axis[0] = (int8_t)ax[i][0];
		a->axis[1] = (int8_t)ax[i][1];
		a->axis[2] = a->axis[3] = -1;
		a->is_output = i == 2;
	}
}

/* A dense row-major 2-D tensor. */
static struct flex_tensor t2(enum flex_dtype dt, uint64_t r, uint64_t c)
{
	struct flex_tensor t;

	memset(&t, 0, sizeof(t));
	t.index = 1;
	t.dtype = dt;
	t.ndim = 2;
	t.shape[0] = r;
	t.shape[1] = c;
	t.strides[0] = c;
	t.strides[1] = 1;
	return t;
}

static void plan_ok(const struct flex_kernel_sig *s, const struct flex_tensor *a, uint32_t n,
		    struct flex_tiling *t)
{
	int ret = flex_tiling_plan(s, a, n, 1, t);

	ck_assert_msg(ret == 0, "plan: expected 0, got %d (%s)", ret, flex_last_error());
}

/* Expect @want and a message containing every one of @needles (NULL-ended). */
static void plan_fails(const char *what, const struct flex_kernel_sig *s,
		       const struct flex_tensor *a, uint32_t n, int allow, int want, ...)
{
	struct flex_tiling t;
	const char *needle;
	va_list ap;
	int ret = flex_tiling_plan(s, a, n, allow, &t);

	ck_assert_msg(ret == want, "%s: expected %d, got %d (%s)", what, want, ret, flex_last_error());
	va_start(ap, want);
	while ((needle = va_arg(ap, const char *)))
		ck_assert_msg(strstr(flex_last_error(), needle), "%s: message \"%s\" lacks \"%s\"", what, flex_last_error(),
			      needle);
	va_end(ap);
}

START_TEST(dtype_helpers)
{
	enum flex_dtype dt;

	ck_assert_uint_eq(flex_dtype_size(FLEX_DTYPE_INT32), 4);
	ck_assert_uint_eq(flex_dtype_size(FLEX_DTYPE_INT8), 1);
	ck_assert_uint_eq(flex_dtype_size((enum flex_dtype)30), 0);
	ck_assert_uint_eq(flex_dtype_size((enum flex_dtype)-1), 0);
	ck_assert_str_eq(flex_dtype_name(FLEX_DTYPE_INT8), "int8");
	ck_assert_ptr_null(flex_dtype_name((enum flex_dtype)30));
	ck_assert_ptr_null(flex_dtype_name((enum flex_dtype)1000));
	ck_assert_int_eq(flex_dtype_from_name("int32", &dt), 0);
	ck_assert_int_eq(dt, FLEX_DTYPE_INT32);
	ck_assert_int_eq(flex_dtype_from_name("float128", &dt), -EINVAL);
	ck_assert_int_eq(flex_dtype_from_name("", &dt), -EINVAL);
	ck_assert_int_eq(flex_dtype_from_name(NULL, &dt), -EINVAL);
}
END_TEST

/* Every PyTorch dtype of whole-byte elements, by name, c10 number and size. */
START_TEST(pytorch_dtypes_by_element_size)
{
	static const struct {
		const char *name;
		int c10;
		size_t size;
	} want[] = {
		{ "uint8", 0, 1 },	    { "int8", 1, 1 },		{ "int16", 2, 2 },
		{ "int32", 3, 4 },	    { "int64", 4, 8 },		{ "float16", 5, 2 },
		{ "float32", 6, 4 },	    { "float64", 7, 8 },	{ "complex32", 8, 4 },
		{ "complex64", 9, 8 },	    { "complex128", 10, 16 },	{ "bool", 11, 1 },
		{ "qint8", 12, 1 },	    { "quint8", 13, 1 },	{ "qint32", 14, 4 },
		{ "bfloat16", 15, 2 },	    { "quint4x2", 16, 1 },	{ "quint2x4", 17, 1 },
		{ "bits1x8", 18, 1 },	    { "bits2x4", 19, 1 },	{ "bits4x2", 20, 1 },
		{ "bits8", 21, 1 },	    { "bits16", 22, 2 },	{ "float8_e5m2", 23, 1 },
		{ "float8_e4m3fn", 24, 1 }, { "float8_e5m2fnuz", 25, 1 },
		{ "float8_e4m3fnuz", 26, 1 }, { "uint16", 27, 2 },	{ "uint32", 28, 4 },
		{ "uint64", 29, 8 },	    { "float8_e8m0fnu", 44, 1 },
		{ "float4_e2m1fn_x2", 45, 1 },
	};
	static const struct {
		const char *alias, *name;
	} aliases[] = {
		{ "float", "float32" }, { "half", "float16" }, { "double", "float64" },
		{ "long", "int64" },	{ "int", "int32" },	{ "short", "int16" },
		{ "cfloat", "complex64" }, { "torch.bfloat16", "bfloat16" },
	};
	enum flex_dtype dt;

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		ck_assert_msg(flex_dtype_from_name(want[i].name, &dt) == 0, "%s: not a dtype",
			      want[i].name);
		ck_assert_msg((int)dt == want[i].c10, "%s: %d, c10::ScalarType has %d",
			      want[i].name, (int)dt, want[i].c10);
		ck_assert_msg(flex_dtype_size(dt) == want[i].size, "%s: %zu bytes, expected %zu",
			      want[i].name, flex_dtype_size(dt), want[i].size);
		ck_assert_str_eq(flex_dtype_name(dt), want[i].name);
	}
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
		enum flex_dtype a;

		ck_assert_int_eq(flex_dtype_from_name(aliases[i].alias, &a), 0);
		ck_assert_int_eq(flex_dtype_from_name(aliases[i].name, &dt), 0);
		ck_assert_msg(a == dt, "%s is not %s", aliases[i].alias, aliases[i].name);
	}
	/* The sub-byte types have no element size: they are refused. */
	ck_assert_int_eq(flex_dtype_from_name("uint4", &dt), -EINVAL);
}
END_TEST

/*
 * An 8-dimensional bfloat16 tensor, tiled along two of its dimensions:
 * offsets come from the element size (2), and float kernels' signatures
 * are valid (the device, not the library, decides what programs compute).
 */
START_TEST(eight_dims_bfloat16)
{
	struct flex_kernel_sig s;
	struct flex_tensor a;
	struct flex_tiling t;
	uint64_t idx[FLEX_KERNEL_MAX_AXES], off[1], stride = 1, span;
	enum flex_dtype bf16;
	int d;

	ck_assert_int_ge(FLEX_MAX_DIMS, 8);
	ck_assert_int_eq(flex_dtype_from_name("bfloat16", &bf16), 0);
	memset(&s, 0, sizeof(s));
	memset(&a, 0, sizeof(a));
	s.n_args = 1;
	s.n_axes = 2;
	strcpy(s.axis_name[0], "b");
	strcpy(s.axis_name[1], "w");
	strcpy(s.args[0].name, "X");
	s.args[0].dtype = bf16;
	s.args[0].ndim = 8;
	a.dtype = bf16;
	a.ndim = 8;
	for (d = 7; d >= 0; d--) {
		/* Tile 2 everywhere; the tensor is 3 x the tile along dims 1 and 7. */
		s.args[0].shape[d] = 2;
		s.args[0].axis[d] = (int8_t)(d == 1 ? 0 : d == 7 ? 1 : -1);
		a.shape[d] = d == 1 || d == 7 ? 6 : 2;
		a.strides[d] = stride;
		stride *= a.shape[d];
	}
	ck_assert_msg(flex_sig_validate(&s) == 0, "%s", flex_last_error());
	ck_assert_msg(flex_tiling_plan(&s, &a, 1, 1, &t) == 0, "%s", flex_last_error());
	ck_assert_uint_eq(t.n_iters, 9);
	flex_tiling_iter(&t, &s, &a, 1, 5, idx, off, NULL);
	ck_assert_uint_eq(idx[0], 1);
	ck_assert_uint_eq(idx[1], 2);
	/* dim 1: tile 1 x stride x 2; dim 7: tile 2 x 1 x 2; 2 bytes each. */
	ck_assert_uint_eq(off[0], (1 * a.strides[1] * 2 + 2 * 1 * 2) * 2);
	ck_assert_int_eq(flex_tensor_span_bytes(&a, &span), 0);
	ck_assert_uint_eq(span, stride * 2);
	/* A float32 tensor for a bfloat16 argument is a mismatch naming both. */
	ck_assert_int_eq(flex_dtype_from_name("float32", &a.dtype), 0);
	plan_fails("dtype", &s, &a, 1, 1, -EINVAL, "arg 0 (X)", "dtype float32",
		   "takes bfloat16", NULL);
}
END_TEST

START_TEST(exact_match_is_one_iteration)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[3];
	struct flex_tiling t;
	uint64_t idx[FLEX_KERNEL_MAX_AXES], off[3];
	int first = -1;

	matmul_sig(&s, FLEX_DTYPE_INT32, 64, 64, 64);
	a[0] = a[1] = a[2] = t2(FLEX_DTYPE_INT32, 64, 64);
	plan_ok(&s, a, 3, &t);
	ck_assert_uint_eq(t.n_iters, 1);
	ck_assert_uint_eq(t.n_axes, 3);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(t.count[i], 1);
	/* Exact shapes also pass with tiling disallowed. */
	ck_assert_int_eq(flex_tiling_plan(&s, a, 3, 0, &t), 0);
	flex_tiling_iter(&t, &s, a, 3, 0, idx, off, &first);
	ck_assert_int_eq(first, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(off[i] == 0, "arg %d: expected offset 0, got %llu", i,
			      (unsigned long long)off[i]);
}
END_TEST

/* The RFC's example: A [4096,K] tiled along M into 4, B reused. */
START_TEST(rfc_example_tiles_m)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[3];
	struct flex_tiling t;
	uint64_t idx[FLEX_KERNEL_MAX_AXES], off[3];
	int first;

	matmul_sig(&s, FLEX_DTYPE_INT32, 1024, 256, 128);
	a[0] = t2(FLEX_DTYPE_INT32, 4096, 128);
	a[1] = t2(FLEX_DTYPE_INT32, 128, 256);
	a[2] = t2(FLEX_DTYPE_INT32, 4096, 256);
	plan_ok(&s, a, 3, &t);
	ck_assert_uint_eq(t.count[0], 4);
	ck_assert_uint_eq(t.count[1], 1);
	ck_assert_uint_eq(t.count[2], 1);
	ck_assert_uint_eq(t.n_iters, 4);
	for (uint64_t i = 0; i < 4; i++) {
		flex_tiling_iter(&t, &s, a, 3, i, idx, off, &first);
		ck_assert_uint_eq(idx[0], i);
		/* offset_i = i * stride * tile * elem */
		ck_assert_msg(off[0] == i * 128 * 1024 * 4, "iter %llu A: expected %llu, got %llu",
			      (unsigned long long)i, (unsigned long long)(i * 128 * 1024 * 4),
			      (unsigned long long)off[0]);
		ck_assert_msg(off[1] == 0, "iter %llu B reused: expected 0, got %llu",
			      (unsigned long long)i, (unsigned long long)off[1]);
		ck_assert_uint_eq(off[2], i * 256 * 1024 * 4);
		ck_assert_int_eq(first, 1);
	}
	/* An iteration past the end wraps. */
	flex_tiling_iter(&t, &s, a, 3, 5, idx, off, NULL);
	ck_assert_uint_eq(idx[0], 1);
}
END_TEST

/* m, n, k all tiled: order m, n, then k innermost; last fastest. */
START_TEST(three_axes_order_and_offsets)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[3];
	struct flex_tiling t;
	uint64_t idx[FLEX_KERNEL_MAX_AXES], off[3], iter = 0;
	int first;

	matmul_sig(&s, FLEX_DTYPE_INT32, 16, 8, 4);
	a[0] = t2(FLEX_DTYPE_INT32, 32, 12);	/* m 2, k 3 */
	a[1] = t2(FLEX_DTYPE_INT32, 12, 40);	/* k 3, n 5 */
	a[2] = t2(FLEX_DTYPE_INT32, 32, 40);
	plan_ok(&s, a, 3, &t);
	ck_assert_uint_eq(t.count[0], 2);
	ck_assert_uint_eq(t.count[1], 5);
	ck_assert_uint_eq(t.count[2], 3);
	ck_assert_uint_eq(t.n_iters, 30);
	ck_assert_uint_eq(t.order[0], 0);
	ck_assert_uint_eq(t.order[1], 1);
	ck_assert_uint_eq(t.order[2], 2);
	for (uint64_t mi = 0; mi < 2; mi++)
		for (uint64_t ni = 0; ni < 5; ni++)
			for (uint64_t ki = 0; ki < 3; ki++, iter++) {
				flex_tiling_iter(&t, &s, a, 3, iter, idx, off, &first);
				ck_assert_msg(idx[0] == mi && idx[1] == ni && idx[2] == ki,
					      "iter %llu: expected (%llu,%llu,%llu), got (%llu,%llu,%llu)",
					      (unsigned long long)iter, (unsigned long long)mi,
					      (unsigned long long)ni, (unsigned long long)ki,
					      (unsigned long long)idx[0], (unsigned long long)idx[1],
					      (unsigned long long)idx[2]);
				ck_assert_uint_eq(off[0], (mi * 12 * 16 + ki * 4) * 4);
				ck_assert_uint_eq(off[1], (ki * 40 * 4 + ni * 8) * 4);
				ck_assert_uint_eq(off[2], (mi * 40 * 16 + ni * 8) * 4);
				ck_assert_msg(first == (ki == 0), "iter %llu: first_reduction %d",
					      (unsigned long long)iter, first);
			}
}
END_TEST

/* Reduction axes go innermost even when declared first. */
START_TEST(reduction_axis_innermost)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[1];
	struct flex_tiling t;
	uint64_t idx[FLEX_KERNEL_MAX_AXES], off[1];
	int first;

	memset(&s, 0, sizeof(s));
	s.n_axes = 2;
	strcpy(s.axis_name[0], "r");
	strcpy(s.axis_name[1], "x");
	s.axis_is_reduction[0] = 1;
	s.n_args = 1;
	strcpy(s.args[0].name, "X");
	s.args[0].dtype = FLEX_DTYPE_INT32;
	s.args[0].ndim = 2;
	s.args[0].shape[0] = 2;
	s.args[0].shape[1] = 2;
	s.args[0].axis[0] = 0;
	s.args[0].axis[1] = 1;
	a[0] = t2(FLEX_DTYPE_INT32, 4, 6);
	plan_ok(&s, a, 1, &t);
	ck_assert_uint_eq(t.order[0], 1);
	ck_assert_uint_eq(t.order[1], 0);
	ck_assert_uint_eq(t.n_iters, 6);
	flex_tiling_iter(&t, &s, a, 1, 1, idx, off, &first);
	ck_assert_uint_eq(idx[0], 1);	/* r varies fastest */
	ck_assert_uint_eq(idx[1], 0);
	ck_assert_int_eq(first, 0);
	ck_assert_uint_eq(off[0], 1 * 6 * 2 * 4);
	flex_tiling_iter(&t, &s, a, 1, 2, idx, off, &first);
	ck_assert_uint_eq(idx[0], 0);
	ck_assert_uint_eq(idx[1], 1);
	ck_assert_int_eq(first, 1);
	ck_assert_uint_eq(off[0], 2 * 4);
}
END_TEST

/* A tile-sized view of a bigger tensor (row stride > row length), int8. */
START_TEST(strided_views_and_int8)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[3];
	struct flex_tiling t;
	uint64_t idx[FLEX_KERNEL_MAX_AXES], off[3];

	matmul_sig(&s, FLEX_DTYPE_INT8, 8, 8, 8);
	a[0] = t2(FLEX_DTYPE_INT8, 16, 8);
	a[0].strides[0] = 100;	/* a column slice of a 16x100 matrix */
	a[1] = t2(FLEX_DTYPE_INT8, 8, 8);
	a[1].strides[0] = 64;
	a[2] = t2(FLEX_DTYPE_INT32, 16, 8);
	a[2].strides[0] = 24;
	plan_ok(&s, a, 3, &t);
	ck_assert_uint_eq(t.n_iters, 2);
	flex_tiling_iter(&t, &s, a, 3, 1, idx, off, NULL);
	ck_assert_uint_eq(off[0], 1 * 100 * 8 * 1);
	ck_assert_uint_eq(off[1], 0);
	ck_assert_uint_eq(off[2], 1 * 24 * 8 * 4);
}
END_TEST

/* 3-D tensors, one never-tiled (batch of 1) leading dim and nested 2-D tiling. */
START_TEST(three_dims_with_untiled_dim)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[2];
	struct flex_tiling t;
	uint64_t idx[FLEX_KERNEL_MAX_AXES], off[2];

	memset(&s, 0, sizeof(s));
	s.n_axes = 2;
	strcpy(s.axis_name[0], "m");
	strcpy(s.axis_name[1], "n");
	s.n_args = 2;
	for (int i = 0; i < 2; i++) {
		struct flex_kernel_arg *ka = &s.args[i];

		strcpy(ka->name, i ? "Y" : "X");
		ka->dtype = FLEX_DTYPE_INT32;
		ka->ndim = 3;
		ka->shape[0] = 3;
		ka->shape[1] = 4;
		ka->shape[2] = 2;
		ka->axis[0] = -1;
		ka->axis[1] = 0;
		ka->axis[2] = 1;
		ka->axis[3] = -1;
	}
	for (int i = 0; i < 2; i++) {
		memset(&a[i], 0, sizeof(a[i]));
		a[i].dtype = FLEX_DTYPE_INT32;
		a[i].ndim = 3;
		a[i].shape[0] = 3;
		a[i].shape[1] = 8;
		a[i].shape[2] = 6;
		a[i].strides[2] = 1;
		a[i].strides[1] = 6;
		a[i].strides[0] = 48;
	}
	plan_ok(&s, a, 2, &t);
	ck_assert_uint_eq(t.count[0], 2);
	ck_assert_uint_eq(t.count[1], 3);
	flex_tiling_iter(&t, &s, a, 2, 5, idx, off, NULL);
	ck_assert_uint_eq(idx[0], 1);
	ck_assert_uint_eq(idx[1], 2);
	ck_assert_uint_eq(off[0], (1 * 6 * 4 + 2 * 1 * 2) * 4);
	/* The never-tiled dim differing is refused, naming it. */
	a[1].shape[0] = 6;
	plan_fails("untiled dim", &s, a, 2, 1, -EINVAL, "arg 1 (Y) dim 0", "never tiled", NULL);
}
END_TEST

START_TEST(fixed_strides)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[3];
	struct flex_tiling t;

	matmul_sig(&s, FLEX_DTYPE_INT32, 4, 4, 4);
	s.args[1].fixed_strides = 1;
	s.args[1].strides[0] = 4;
	s.args[1].strides[1] = 1;
	a[0] = a[1] = a[2] = t2(FLEX_DTYPE_INT32, 4, 4);
	plan_ok(&s, a, 3, &t);
	a[1].strides[0] = 8;
	plan_fails("fixed strides", &s, a, 3, 1, -EINVAL, "arg 1 (B) dim 0", "fixed stride 4",
		   NULL);
}
END_TEST

START_TEST(errors_name_arg_and_dim)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[3], b[3];

	matmul_sig(&s, FLEX_DTYPE_INT32, 64, 64, 64);
	a[0] = t2(FLEX_DTYPE_INT32, 128, 64);
	a[1] = t2(FLEX_DTYPE_INT32, 64, 64);
	a[2] = t2(FLEX_DTYPE_INT32, 128, 64);

	plan_fails("count", &s, a, 2, 1, -EINVAL, "2 arguments", "takes 3", NULL);

	memcpy(b, a, sizeof(a));
	b[1].dtype = FLEX_DTYPE_INT8;
	plan_fails("dtype", &s, b, 3, 1, -EINVAL, "arg 1 (B)", "int8", "int32", NULL);

	memcpy(b, a, sizeof(a));
	b[2].ndim = 3;
	b[2].shape[2] = 1;
	b[2].strides[2] = 1;
	b[2].strides[1] = 1;
	b[2].strides[0] = 64;
	plan_fails("ndim", &s, b, 3, 1, -EINVAL, "arg 2 (C)", "3 dimensions", NULL);

	memcpy(b, a, sizeof(a));
	b[0].shape[0] = 100;
	b[2].shape[0] = 100;
	plan_fails("not divisible", &s, b, 3, 1, -EINVAL, "arg 0 (A) dim 0", "not a multiple",
		   NULL);

	memcpy(b, a, sizeof(a));
	b[1] = t2(FLEX_DTYPE_INT32, 64, 32);
	plan_fails("smaller", &s, b, 3, 1, -EINVAL, "arg 1 (B) dim 1", "smaller than the tile",
		   NULL);

	memcpy(b, a, sizeof(a));
	b[0].shape[0] = 0;
	plan_fails("zero extent", &s, b, 3, 1, -EINVAL, "arg 0 (A) dim 0", "smaller", NULL);

	memcpy(b, a, sizeof(a));
	b[1].strides[1] = 2;
	b[1].strides[0] = 128;
	plan_fails("innermost stride", &s, b, 3, 1, -EINVAL, "arg 1 (B) dim 1", "innermost",
		   NULL);

	memcpy(b, a, sizeof(a));
	b[0].strides[0] = 32;
	plan_fails("overlapping rows", &s, b, 3, 1, -EINVAL, "arg 0 (A) dim 0", "overlap", NULL);

	memcpy(b, a, sizeof(a));
	b[2] = t2(FLEX_DTYPE_INT32, 192, 64);
	plan_fails("axis counts", &s, b, 3, 1, -EINVAL, "arg 2 (C) dim 0", "axis m",
		   "arg 0 (A) dim 0 has 2", NULL);

	plan_fails("tiling not allowed", &s, a, 3, 0, -EDOM, "arg 0 (A) dim 0", "not allowed",
		   NULL);
}
END_TEST

START_TEST(overflow_refused)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[3], b[3];

	matmul_sig(&s, FLEX_DTYPE_INT32, 64, 64, 64);
	a[0] = t2(FLEX_DTYPE_INT32, 64, 64);
	a[1] = t2(FLEX_DTYPE_INT32, 64, 64);
	a[2] = t2(FLEX_DTYPE_INT32, 64, 64);

	/* Span fits in elements but not in bytes. */
	memcpy(b, a, sizeof(a));
	b[0].shape[0] = 64ULL << 30;
	b[0].strides[0] = 1ULL << 32;
	b[2].shape[0] = 64ULL << 30;
	plan_fails("bytes overflow", &s, b, 3, 1, -EINVAL, "arg 0 (A)", "overflows", NULL);

	/* shape x stride itself overflows. */
	memcpy(b, a, sizeof(a));
	b[1].shape[0] = 1ULL << 40;
	b[1].strides[0] = 1ULL << 30;
	plan_fails("stride overflow", &s, b, 3, 1, -EINVAL, "arg 1 (B)", "overflow", NULL);

	/* A signature whose tile size overflows. */
	s.args[0].shape[0] = 1ULL << 62;
	plan_fails("signature overflow", &s, a, 3, 1, -EINVAL, "signature", "arg 0 (A)",
		   "overflows", NULL);
}
END_TEST

START_TEST(bad_signatures)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[3];

	a[0] = a[1] = a[2] = t2(FLEX_DTYPE_INT32, 4, 4);
	matmul_sig(&s, FLEX_DTYPE_INT32, 4, 4, 4);
	s.args[2].shape[1] = 0;
	plan_fails("tile 0", &s, a, 3, 1, -EINVAL, "signature: arg 2 (C) dim 1", NULL);
	matmul_sig(&s, FLEX_DTYPE_INT32, 4, 4, 4);
	s.args[0].axis[1] = 3;
	plan_fails("axis index", &s, a, 3, 1, -EINVAL, "signature: arg 0 (A) dim 1", "axis 3",
		   NULL);
	matmul_sig(&s, FLEX_DTYPE_INT32, 4, 4, 4);
	s.n_args = 17;
	plan_fails("n_args", &s, a, 3, 1, -EINVAL, "n_args 17", NULL);
	matmul_sig(&s, FLEX_DTYPE_INT32, 4, 4, 4);
	s.args[1].ndim = FLEX_MAX_DIMS + 1;
	plan_fails("ndim", &s, a, 3, 1, -EINVAL, "arg 1 (B)", "ndim 9", NULL);
	matmul_sig(&s, FLEX_DTYPE_INT32, 4, 4, 4);
	s.args[0].dtype = (enum flex_dtype)30;	/* uint1: no whole-byte element */
	plan_fails("dtype", &s, a, 3, 1, -EINVAL, "arg 0 (A)", "dtype 30", NULL);
	ck_assert_int_eq(flex_sig_validate(NULL), -EINVAL);
}
END_TEST

/*
 * A view (x[1:], narrow, a column slice) is a byte offset: a multiple of
 * the element size, not counted in the tile offsets (the launch adds it).
 */
START_TEST(view_byte_offset)
{
	struct flex_kernel_sig s;
	struct flex_tensor a[3];
	struct flex_tiling t;
	uint64_t idx[FLEX_KERNEL_MAX_AXES], off[3];

	matmul_sig(&s, FLEX_DTYPE_INT32, 4, 4, 4);
	a[0] = a[1] = a[2] = t2(FLEX_DTYPE_INT32, 8, 4);
	a[1] = t2(FLEX_DTYPE_INT32, 4, 4);
	a[0].strides[0] = 7;		/* A = X[:, 3:] of an 8 x 7 X */
	a[0].byte_offset = 3 * 4;
	a[2].byte_offset = 4 * 4 * 4;	/* C = Y[4:] of a 12 x 4 Y */
	plan_ok(&s, a, 3, &t);
	flex_tiling_iter(&t, &s, a, 3, 1, idx, off, NULL);
	ck_assert_uint_eq(idx[0], 1);
	ck_assert_uint_eq(off[0], 1 * 7 * 4 * 4);
	ck_assert_uint_eq(off[2], 1 * 4 * 4 * 4);
	a[2].byte_offset = 6;
	plan_fails("misaligned view", &s, a, 3, 1, -EINVAL, "arg 2 (C)", "byte offset 6",
		   "element size 4", NULL);
}
END_TEST

START_TEST(span_bytes)
{
	struct flex_tensor t = t2(FLEX_DTYPE_INT32, 3, 5);
	uint64_t n;

	t.strides[0] = 8;
	ck_assert_int_eq(flex_tensor_span_bytes(&t, &n), 0);
	ck_assert_uint_eq(n, (2 * 8 + 4 + 1) * 4);
	t.shape[1] = 0;
	ck_assert_int_eq(flex_tensor_span_bytes(&t, &n), 0);
	ck_assert_uint_eq(n, 0);
	t.shape[1] = 5;
	t.shape[0] = UINT64_MAX;
	ck_assert_int_eq(flex_tensor_span_bytes(&t, &n), -EOVERFLOW);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tiling");
	TCase *tc = tcase_create("plan");

	tcase_add_test(tc, dtype_helpers);
	tcase_add_test(tc, pytorch_dtypes_by_element_size);
	tcase_add_test(tc, eight_dims_bfloat16);
	tcase_add_test(tc, exact_match_is_one_iteration);
	tcase_add_test(tc, rfc_example_tiles_m);
	tcase_add_test(tc, three_axes_order_and_offsets);
	tcase_add_test(tc, reduction_axis_innermost);
	tcase_add_test(tc, strided_views_and_int8);
	tcase_add_test(tc, three_dims_with_untiled_dim);
	tcase_add_test(tc, fixed_strides);
	tcase_add_test(tc, span_bytes);
	tcase_add_test(tc, view_byte_offset);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, errors_name_arg_and_dim);
	tcase_add_test(tc, overflow_refused);
	tcase_add_test(tc, bad_signatures);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
