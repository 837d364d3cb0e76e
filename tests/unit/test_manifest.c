// SPDX-License-Identifier: GPL-2.0
/*
 * Plan manifests (flex/manifest.h), parsed on the host: a good manifest
 * with three jobs, and one fixture per error (tests/unit/fixtures/plans/),
 * each refused with a message naming the file, the job and the field.
 *
 * Each fixture is copied into a scratch directory next to binaries made
 * with the program builder, so the fixtures stay text.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <flex/manifest.h>
#include <flex/program.h>

#include "unit_util.h"

#ifndef FIXTURES
#define FIXTURES "tests/unit/fixtures/plans"
#endif

static char scratch[] = "/tmp/flex-manifest-XXXXXX";

/* Outside a test (setup in main) Check cannot record assertions. */
#define must(cond)                                                                  \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: setup failed: %s\n", __FILE__, __LINE__, \
				#cond);                                             \
			exit(1);                                                    \
		}                                                                   \
	} while (0)

static void write_file(const char *name, const void *buf, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	f = fopen(path, "wb");
	must(f);
	must(fwrite(buf, 1, len, f) == len);
	fclose(f);
}

/* Copy fixture @name into the scratch directory; return its new path. */
static char *stage(const char *name)
{
	static char path[256];
	char src[256], buf[65536];
	size_t n;
	FILE *f;

	snprintf(src, sizeof(src), "%s/%s", FIXTURES, name);
	f = fopen(src, "rb");
	ck_assert_msg(f, "fixture %s missing", src);
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	write_file(name, buf, n);
	snprintf(path, sizeof(path), "%s/%s", scratch, name);
	return path;
}

static void make_binaries(void)
{
	struct flex_kernel *k;
	struct flex_program *p;
	uint64_t fill[3] = { FLEX_ADDR(0, 0), 2, 0 };
	void *buf;
	size_t len;

	must(mkdtemp(scratch));
	must(!flex_kernel_new_matmul(FLEX_DTYPE_INT32, 64, 64, 64, &k));
	write_file("matmul_i32.bin", k->binary, k->binary_size);
	flex_kernel_destroy(k);
	must(!flex_kernel_new_relu(FLEX_DTYPE_INT32,16, 16, &k));
	write_file("relu.bin", k->binary, k->binary_size);
	flex_kernel_destroy(k);
	must(!flex_program_new(&p));
	must(!flex_program_emit(p, FLEX_OP_FILL, FLEX_DT_I32, 0, fill, 3));
	must(!flex_program_finish(p, &buf, &len));
	write_file("nocorr.bin", buf, len);
	free(buf);
	flex_program_destroy(p);
	write_file("garbage.bin", "not a program at all, just text\n", 32);
}

START_TEST(good_manifest)
{
	const struct flex_manifest_job *j;
	struct flex_manifest *m = NULL;
	const char *path = stage("good.json");
	int ret = flex_manifest_new_from_file(path, &m);

	ck_assert_msg(ret == 0, "good.json: expected 0, got %d (%s)", ret, flex_last_error());
	ck_assert_str_eq(flex_manifest_path(m), path);
	ck_assert_uint_eq(flex_manifest_n_jobs(m), 3);

	j = flex_manifest_job(m, 0);
	ck_assert_str_eq(j->name, "matmul_i32");
	ck_assert_uint_eq(j->sig.n_args, 3);
	ck_assert_uint_eq(j->sig.n_axes, 3);
	ck_assert_str_eq(j->sig.axis_name[0], "m");
	ck_assert_str_eq(j->sig.axis_name[1], "k");
	ck_assert_str_eq(j->sig.axis_name[2], "n");
	ck_assert_uint_eq(j->sig.axis_is_reduction[1], 1);
	ck_assert_uint_eq(j->sig.axis_is_reduction[0], 0);
	ck_assert_int_eq(j->sig.args[1].axis[0], 1);
	ck_assert_int_eq(j->sig.args[1].axis[1], 2);
	ck_assert_uint_eq(j->sig.args[2].is_output, 1);
	ck_assert_uint_eq(j->sig.args[0].is_output, 0);
	ck_assert_uint_eq(j->sig.args[0].shape[0], 64);
	ck_assert_uint_eq(j->n_corr, 7);
	ck_assert_int_eq(j->corr[3].kind, FLEX_CORR_STRIDE);
	ck_assert_uint_eq(j->corr[3].arg, 2);
	ck_assert_int_eq(j->corr[6].kind, FLEX_CORR_ACCUMULATE);
	ck_assert_uint_eq(j->n_steps, 3);
	ck_assert_int_eq(j->steps[1], FLEX_STEP_DMA_CORRECTION);
	ck_assert_uint_eq(j->binary_size, 32 + 2 * 128);
	ck_assert_int_eq(flex_program_validate(j->binary, j->binary_size, NULL), 0);
	ck_assert_int_eq(flex_manifest_arg_index(j, "C"), 2);
	ck_assert_int_eq(flex_manifest_arg_index(j, "Z"), -1);

	j = flex_manifest_find(m, "relu");
	ck_assert_ptr_nonnull(j);
	ck_assert_uint_eq(j->sig.args[0].fixed_strides, 1);
	ck_assert_uint_eq(j->sig.args[0].strides[0], 16);
	ck_assert_int_eq(j->sig.args[1].axis[1], -1);
	ck_assert_int_eq(j->corr[3].kind, FLEX_CORR_TILE_DIM);
	ck_assert_uint_eq(j->corr[3].dim, 1);
	ck_assert_int_eq(j->corr[4].kind, FLEX_CORR_CONST);
	ck_assert_uint_eq(j->corr[4].value, 5);

	j = flex_manifest_job(m, 2);
	ck_assert_int_eq(j->sig.args[0].dtype, FLEX_DTYPE_INT8);
	ck_assert_uint_eq(j->sig.n_axes, 0);
	ck_assert_uint_eq(j->n_corr, 0);
	ck_assert_uint_eq(j->n_steps, 1);
	ck_assert_int_eq(j->steps[0], FLEX_STEP_COMPUTE);
	ck_assert_ptr_null(flex_manifest_job(m, 3));
	ck_assert_ptr_null(flex_manifest_find(m, "nope"));
	flex_manifest_destroy(m);
}
END_TEST

struct bad_case {
	const char *file;
	int err;
	const char *want[3];	/* substrings of the message */
};

static const struct bad_case bad[] = {
	{ "unknown_key_top.json", -EINVAL, { "top level: unknown key \"jbos\"" } },
	{ "unknown_key_arg.json", -EINVAL,
	  { "job \"matmul_i32\": args[1]: unknown key \"dtpye\"" } },
	{ "bad_format.json", -EINVAL, { "format: must be \"flex-plan\"" } },
	{ "bad_version.json", -EINVAL, { "version: 2 is out of range 1..1" } },
	{ "no_jobs.json", -EINVAL, { "jobs: 0 jobs" } },
	{ "dup_job.json", -EINVAL, { "jobs[1]: name: \"matmul_i32\" is already jobs[0]" } },
	{ "shape_type.json", -EINVAL,
	  { "job \"matmul_i32\": args[1].shape[0]: must be an integer, not string" } },
	{ "shape_zero.json", -EINVAL, { "args[1].shape[0]: 0 is out of range 1.." } },
	{ "shape_float.json", -EINVAL, { "args[1].shape[0]: must be an integer, not double" } },
	{ "too_many_dims.json", -EINVAL, { "args[0].shape: 9 dimensions" } },
	{ "axes_len.json", -EINVAL, { "args[2].axes: 1 entries for 2 dimensions" } },
	{ "axis_tile_mismatch.json", -EINVAL,
	  { "job \"matmul_i32\": args[1].shape[0]: axis \"k\" has tile 32 here but 64 in args[0].shape[1] (A)" } },
	{ "axis_twice.json", -EINVAL, { "args[2].axes[1]: axis \"m\" is already dimension 0" } },
	{ "bad_dtype.json", -EINVAL, { "args[2].dtype: \"float128\" is not a dtype" } },
	{ "dup_arg.json", -EINVAL, { "args[2].name: \"A\" is already args[0]" } },
	{ "output_type.json", -EINVAL, { "args[2].output: must be a boolean" } },
	{ "strides_len.json", -EINVAL, { "job \"relu\": args[0].strides: 1 entries" } },
	{ "strides_overlap.json", -EINVAL, { "job \"relu\": args:", "arg 0 (X) dim 0", "overlap" } },
	{ "reduction_unknown.json", -EINVAL,
	  { "reduction_axes[0]: no argument has an axis \"q\"" } },
	{ "corr_bad_kind.json", -EINVAL, { "correction[0].kind: \"adress\" is not a slot kind" } },
	{ "corr_missing_arg.json", -EINVAL,
	  { "job \"matmul_i32\": correction[3].arg: no argument named \"D\"" } },
	{ "corr_no_arg.json", -EINVAL, { "correction[0].arg: missing (kind address" } },
	{ "corr_dim_range.json", -EINVAL,
	  { "correction[3].dim: argument \"C\" has no dimension 2 (2 dims)" } },
	{ "corr_no_dim.json", -EINVAL, { "correction[4].dim: missing (kind stride" } },
	{ "corr_extra_dim.json", -EINVAL, { "correction[6].dim: not allowed with kind accumulate" } },
	{ "corr_const_novalue.json", -EINVAL,
	  { "job \"relu\": correction[4].value: missing (kind const" } },
	{ "corr_negative.json", -EINVAL, { "correction[4].value: -1 is out of range" } },
	{ "plan_order.json", -EINVAL, { "job \"matmul_i32\": plan: must be" } },
	{ "plan_unknown_step.json", -EINVAL, { "plan[1]: \"dma\" is not a kernel step" } },
	{ "plan_compute_with_corr.json", -EINVAL,
	  { "plan: [\"compute\"] alone, but the job has 7 correction slots" } },
	{ "plan_corr_empty.json", -EINVAL, { "job \"fixed\": plan: host_op and dma_correction" } },
	{ "plan_missing.json", -EINVAL, { "job \"matmul_i32\": plan: missing" } },
	{ "binary_missing.json", -ENOENT, { "job \"matmul_i32\": binary:", "nosuch.bin",
					    "No such file" } },
	{ "binary_absolute.json", -EINVAL, { "binary: \"/etc/passwd\": must be relative" } },
	{ "binary_invalid.json", -ENOEXEC, { "job \"matmul_i32\": binary:", "garbage.bin",
					     "not a valid flex program" } },
	{ "binary_dir.json", -EISDIR, { "job \"matmul_i32\": binary:", "directory" } },
	{ "binary_slots.json", -ENOEXEC,
	  { "binary:", "declares 7 correction slots", "correction has 6" } },
	{ "name_long.json", -EINVAL, { "jobs[0]: name:", "must be 1..63 bytes" } },
	{ "too_many_axes.json", -EINVAL, { "args[4].axes[1]", "more than 8 axes" } },
	{ "syntax.json", -EINVAL, { "syntax.json: line 3: JSON syntax error" } },
	{ "trailing.json", -EINVAL, { "trailing.json: line 1: JSON syntax error" } },
	{ "not_object.json", -EINVAL, { "top level: must be object, not array" } },
};

START_TEST(bad_manifest)
{
	const struct bad_case *bc = &bad[_i];
	struct flex_manifest *m = NULL;
	const char *path = stage(bc->file);
	int ret = flex_manifest_new_from_file(path, &m);

	ck_assert_msg(ret == bc->err, "%s: expected %d, got %d (%s)", bc->file, bc->err, ret, flex_last_error());
	ck_assert_ptr_null(m);
	ck_assert_msg(!strncmp(flex_last_error(), path, strlen(path)),
		      "%s: message \"%s\" does not start with the file's path", bc->file, flex_last_error());
	for (int k = 0; k < 3 && bc->want[k]; k++)
		ck_assert_msg(strstr(flex_last_error(), bc->want[k]), "%s: message \"%s\" lacks \"%s\"",
			      bc->file, flex_last_error(), bc->want[k]);
}
END_TEST

START_TEST(missing_file)
{
	struct flex_manifest *m = NULL;
	char path[300];

	snprintf(path, sizeof(path), "%s/none.json", scratch);
	ck_assert_int_eq(flex_manifest_new_from_file(path, &m), -ENOENT);
	ck_assert_msg(strstr(flex_last_error(), "none.json") && strstr(flex_last_error(), "No such file"), "message: %s", flex_last_error());
	ck_assert_int_eq(flex_manifest_new_from_file(scratch, &m), -EISDIR);
	ck_assert_int_eq(flex_manifest_new_from_file(NULL, &m), -EINVAL);
	/* An empty file is a syntax error, not a crash. */
	write_file("empty.json", "", 0);
	snprintf(path, sizeof(path), "%s/empty.json", scratch);
	ck_assert_int_eq(flex_manifest_new_from_file(path, &m), -EINVAL);
	ck_assert_msg(strstr(flex_last_error(), "unexpected end of file"), "message: %s", flex_last_error());
}
END_TEST

int main(void)
{
	Suite *s = suite_create("manifest");
	TCase *tc = tcase_create("manifest");
	int ret;

	make_binaries();
	tcase_add_test(tc, good_manifest);
	tcase_add_loop_test(tc, bad_manifest, 0, (int)(sizeof(bad) / sizeof(bad[0])));
	tcase_add_test(tc, missing_file);
	suite_add_tcase(s, tc);
	ret = run_suite(s);
	/* Leave nothing behind. */
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", scratch);
	}
	return ret;
}
