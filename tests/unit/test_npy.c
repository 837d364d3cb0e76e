// SPDX-License-Identifier: GPL-2.0
/*
 * flex-run's .npy reader and writer (tools/flex-run/npy.c): round trips
 * of int32 and int8 arrays of 1..4 dimensions, files as NumPy writes them
 * (versions 1.0 and 2.0), and malformed files: bad magic, unsupported
 * version, dtype or order, broken headers, truncated or trailing data,
 * shapes too large.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit_util.h"

/* flex-run is a tool, not a library: build its npy.c into this test. */
#include "../../tools/flex-run/npy.c"

static char dir[] = "/tmp/flex-npy-XXXXXX";

static const char *path_of(const char *name)
{
	static char p[256];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* Write a .npy by hand: @ver 1 or 2, header dict @dict, @data of @n bytes. */
static const char *raw(const char *name, int ver, const char *dict, const void *data, size_t n)
{
	const char *p = path_of(name);
	size_t dl = strlen(dict), pre = ver == 1 ? 10 : 12;
	size_t pad = (64 - (pre + dl + 1) % 64) % 64, hl = dl + pad + 1;
	FILE *f = fopen(p, "wb");

	ck_assert_ptr_nonnull(f);
	fwrite("\x93NUMPY", 1, 6, f);
	fputc(ver, f);
	fputc(0, f);
	fputc((int)(hl & 0xff), f);
	fputc((int)((hl >> 8) & 0xff), f);
	if (ver != 1) {
		fputc(0, f);
		fputc(0, f);
	}
	fwrite(dict, 1, dl, f);
	for (size_t i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	if (n)
		fwrite(data, 1, n, f);
	fclose(f);
	return p;
}

static void expect_fail(const char *what, const char *p, int want, const char *needle)
{
	struct npy_array a;
	char err[512] = "";
	int ret = npy_read(p, &a, err, sizeof(err));

	ck_assert_msg(ret == want, "%s: expected %d, got %d (%s)", what, want, ret, err);
	ck_assert_msg(strstr(err, needle), "%s: message \"%s\" lacks \"%s\"", what, err, needle);
	ck_assert_msg(strstr(err, p), "%s: message \"%s\" lacks the path", what, err);
}

START_TEST(round_trip)
{
	static const uint64_t shapes[4][4] = { { 7 }, { 3, 5 }, { 2, 3, 4 }, { 2, 1, 3, 2 } };
	char err[256];

	static const enum flex_dtype types[] = {
		FLEX_DTYPE_INT32, FLEX_DTYPE_INT8, FLEX_DTYPE_FLOAT32, FLEX_DTYPE_FLOAT16,
	};

	for (unsigned int t = 0; t < sizeof(types) / sizeof(types[0]); t++)
		for (uint32_t nd = 1; nd <= 4; nd++) {
			const char *dn = flex_dtype_name(types[t]);
			struct npy_array a = { 0 }, b;
			const char *p = path_of("rt.npy");
			uint64_t n;

			a.dtype = types[t];
			a.ndim = nd;
			memcpy(a.shape, shapes[nd - 1], sizeof(a.shape));
			n = npy_elements(&a);
			a.nbytes = n * flex_dtype_size(a.dtype);
			a.data = malloc(a.nbytes);
			for (uint64_t i = 0; i < a.nbytes; i++)	/* any bit pattern */
				((uint8_t *)a.data)[i] = (uint8_t)(i * 37 + t);
			ck_assert_int_eq(npy_write(p, &a, err, sizeof(err)), 0);
			ck_assert_msg(npy_read(p, &b, err, sizeof(err)) == 0, "read back %s/%u: %s",
				      dn, nd, err);
			ck_assert_int_eq(b.dtype, a.dtype);
			ck_assert_uint_eq(b.ndim, nd);
			for (uint32_t d = 0; d < nd; d++)
				ck_assert_uint_eq(b.shape[d], a.shape[d]);
			ck_assert_uint_eq(b.nbytes, a.nbytes);
			ck_assert_msg(!memcmp(a.data, b.data, a.nbytes), "%s/%u: data differs",
				      dn, nd);
			/* The header is padded so the data starts 64-byte aligned. */
			{
				FILE *f = fopen(p, "rb");
				long size;

				fseek(f, 0, SEEK_END);
				size = ftell(f);
				fclose(f);
				ck_assert_uint_eq(((size_t)size - a.nbytes) % 64, 0);
			}
			npy_free(&a);
			npy_free(&b);
		}
}
END_TEST

/* Headers as NumPy writes them, v1 and v2, with other key orders and spacing. */
START_TEST(numpy_headers)
{
	int32_t v[6] = { 1, -2, 3, -4, 5, -6 };
	int8_t c[3] = { -1, 2, -3 };
	struct npy_array a;
	char err[256];

	ck_assert_int_eq(npy_read(raw("v1.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }",
				      v, sizeof(v)), &a, err, sizeof(err)), 0);
	ck_assert_uint_eq(a.ndim, 2);
	ck_assert_uint_eq(a.shape[1], 3);
	ck_assert_int_eq(((int32_t *)a.data)[5], -6);
	npy_free(&a);
	ck_assert_int_eq(npy_read(raw("v2.npy", 2, "{\"shape\":(3,),\"fortran_order\":False,\"descr\":\"|i1\"}",
				      c, sizeof(c)), &a, err, sizeof(err)), 0);
	ck_assert_int_eq(a.dtype, FLEX_DTYPE_INT8);
	ck_assert_uint_eq(a.shape[0], 3);
	ck_assert_int_eq(((int8_t *)a.data)[2], -3);
	npy_free(&a);
	/* An empty array is fine. */
	ck_assert_int_eq(npy_read(raw("empty.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (0, 3), }",
				      NULL, 0), &a, err, sizeof(err)), 0);
	ck_assert_uint_eq(a.nbytes, 0);
	npy_free(&a);
}
END_TEST

START_TEST(malformed)
{
	int32_t v[6] = { 0 };
	const char *p;
	FILE *f;

	p = path_of("magic.npy");
	f = fopen(p, "wb");
	fputs("\x93NUMPX\x01\x00\x10\x00{}", f);
	fclose(f);
	expect_fail("bad magic", p, -EINVAL, "bad magic");
	p = path_of("short.npy");
	f = fopen(p, "wb");
	fputs("\x93NU", f);
	fclose(f);
	expect_fail("too short for a magic", p, -EINVAL, "bad magic");

	p = raw("ver.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (6,), }", v, 24);
	f = fopen(p, "r+b");
	fseek(f, 6, SEEK_SET);
	fputc(9, f);
	fclose(f);
	expect_fail("version", p, -EINVAL, "version 9.0");

	expect_fail("float64 dtype",
		    raw("f8.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", v, 24),
		    -EOPNOTSUPP, "dtype '<f8'");
	expect_fail("big-endian",
		    raw("be.npy", 1, "{'descr': '>i4', 'fortran_order': False, 'shape': (6,), }", v, 24),
		    -EOPNOTSUPP, "dtype '>i4'");
	expect_fail("fortran",
		    raw("fo.npy", 1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", v, 24),
		    -EOPNOTSUPP, "Fortran");
	expect_fail("scalar",
		    raw("sc.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (), }", v, 4),
		    -EOPNOTSUPP, "0 dimensions");
	expect_fail("9 dims",
		    raw("9d.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 2, 3), }", v, 24),
		    -EOPNOTSUPP, "9 dimensions");
	expect_fail("truncated data",
		    raw("tr.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", v, 20),
		    -EINVAL, "truncated data");
	expect_fail("trailing data",
		    raw("tl.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", v, 24),
		    -EINVAL, "4 bytes after the data");
	expect_fail("huge shape",
		    raw("hg.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", v, 24),
		    -EFBIG, "overflows");
	expect_fail("huge bytes",
		    raw("hb.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (4611686018427387904,), }", v, 24),
		    -EFBIG, "overflows");
	expect_fail("dimension beyond 64 bits",
		    raw("h64.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (99999999999999999999999,), }", v, 24),
		    -EFBIG, "64 bits");
	expect_fail("huge but fits in 64 bits: truncated",
		    raw("hf.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (1000000000,), }", v, 24),
		    -EINVAL, "truncated data");
	expect_fail("no shape",
		    raw("ns.npy", 1, "{'descr': '<i4', 'fortran_order': False, }", v, 24),
		    -EINVAL, "malformed header");
	expect_fail("negative dim",
		    raw("neg.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (-6,), }", v, 24),
		    -EINVAL, "malformed header");
	expect_fail("unknown key",
		    raw("uk.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (6,), 'x': 1}", v, 24),
		    -EINVAL, "unexpected header key 'x'");
	expect_fail("unterminated",
		    raw("ut.npy", 1, "{'descr': '<i4', 'fortran_order': False, 'shape': (6,", v, 24),
		    -EINVAL, "malformed header");
	expect_fail("order word",
		    raw("ow.npy", 1, "{'descr': '<i4', 'fortran_order': Nope, 'shape': (6,), }", v, 24),
		    -EINVAL, "malformed header");

	/* A header length running past the end of the file. */
	p = path_of("hl.npy");
	f = fopen(p, "wb");
	fwrite("\x93NUMPY\x01\x00\xff\x7f{'descr'", 1, 19, f);
	fclose(f);
	expect_fail("header past the end", p, -EINVAL, "truncated header");
	/* A header length above the limit (v2). */
	p = path_of("hbig.npy");
	f = fopen(p, "wb");
	fwrite("\x93NUMPY\x02\x00\x00\x00\x00\x01", 1, 12, f);
	fclose(f);
	expect_fail("header too large", p, -EINVAL, "above");
	expect_fail("missing file", path_of("none.npy"), -ENOENT, "No such file");
}
END_TEST

START_TEST(write_refuses_bad_arrays)
{
	struct npy_array a = { 0 };
	char err[128];

	a.dtype = FLEX_DTYPE_INT32;
	a.ndim = 0;
	ck_assert_int_eq(npy_write(path_of("bad.npy"), &a, err, sizeof(err)), -EINVAL);
	a.ndim = 1;
	a.shape[0] = 3;
	a.nbytes = 11;
	ck_assert_int_eq(npy_write(path_of("bad.npy"), &a, err, sizeof(err)), -EINVAL);
	a.nbytes = 12;
	a.data = "0123456789ab";
	ck_assert_int_eq(npy_write("/nonexistent-dir/x.npy", &a, err, sizeof(err)), -ENOENT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("npy");
	TCase *tc = tcase_create("npy");
	char cmd[64];
	int ret;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, numpy_headers);
	tcase_add_test(tc, malformed);
	tcase_add_test(tc, write_refuses_bad_arrays);
	suite_add_tcase(s, tc);
	ret = run_suite(s);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	return ret;
}
