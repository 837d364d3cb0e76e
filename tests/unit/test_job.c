// SPDX-License-Identifier: GPL-2.0
/*
 * Jobs, JobPlans and ExecutionPlans on the host (flex/job.h): the plan
 * order rules, correction-slot checks, accessors and names. No device is
 * needed: a job only names its binary's allocation.
 */
#include <errno.h>
#include <string.h>

#include <flex/job.h>
#include <flex/program.h>
#include <flex/stream.h>

#include "unit_util.h"

static int host_fn(void *user)
{
	return 0;
}

/* @ret must be @want and the message must contain @needle. */
static void expect_refused(int ret, int want, const char *needle, const char *what)
{
	const char *msg = flex_last_error();

	ck_assert_msg(ret == want, "%s: expected %d, got %d (%s)", what, want, ret, msg);
	ck_assert_msg(strstr(msg, needle), "%s: message \"%s\" lacks \"%s\"", what, msg, needle);
}

static const struct flex_step kernel_plan[] = {
	{ .kind = FLEX_STEP_HOST_OP },
	{ .kind = FLEX_STEP_DMA_CORRECTION },
	{ .kind = FLEX_STEP_COMPUTE },
};

START_TEST(names_of_kinds)
{
	ck_assert_str_eq(flex_step_kind_name(FLEX_STEP_HOST_OP), "host_op");
	ck_assert_str_eq(flex_step_kind_name(FLEX_STEP_DMA_CORRECTION), "dma_correction");
	ck_assert_str_eq(flex_step_kind_name(FLEX_STEP_COMPUTE), "compute");
	ck_assert_str_eq(flex_step_kind_name(FLEX_STEP_EVENT_WAIT), "event_wait");
	ck_assert_ptr_null(flex_step_kind_name((enum flex_step_kind)99));
	ck_assert_str_eq(flex_corr_kind_name(FLEX_CORR_ADDRESS), "address");
	ck_assert_str_eq(flex_corr_kind_name(FLEX_CORR_ACCUMULATE), "accumulate");
	ck_assert_ptr_null(flex_corr_kind_name((enum flex_corr_kind)99));
}
END_TEST

START_TEST(dma_only_job_and_its_accessors)
{
	char buf[64];
	struct flex_step steps[] = {
		flex_step_dma_to_device(7, 128, buf, sizeof(buf)),
		flex_step_host_op(host_fn, NULL),
		flex_step_dma_from_device(7, 0, buf, 4),
	};
	const struct flex_step *got;
	struct flex_job *job;
	uint32_t n = 0;

	ck_assert_int_eq(flex_job_new("copy", steps, 3, &job), 0);
	ck_assert_str_eq(flex_job_name(job), "copy");
	ck_assert_int_eq(flex_job_is_kernel(job), 0);
	ck_assert_ptr_null(flex_job_sig(job));
	ck_assert_uint_eq(flex_job_binary(job), FLEX_ALLOC_INDEX_NONE);
	got = flex_job_steps(job, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_int_eq(got[0].kind, FLEX_STEP_DMA_TO_DEVICE);
	ck_assert_uint_eq(got[0].offset, 128);
	ck_assert_ptr_eq(got[1].fn, host_fn);
	ck_assert_uint_eq(got[2].size, 4);
	flex_job_corr(job, &n);
	ck_assert_uint_eq(n, 0);
	flex_job_destroy(job);
}
END_TEST

START_TEST(dma_only_plan_errors)
{
	char buf[8];
	struct flex_step s;
	struct flex_job *job;

	expect_refused(flex_job_new("j", &s, 0, &job), -EINVAL, "0 steps", "no steps");
	s = flex_step_dma_to_device(1, 0, NULL, 8);
	expect_refused(flex_job_new("j", &s, 1, &job), -EINVAL, "NULL host pointer", "NULL host");
	s = flex_step_dma_from_device(1, 0, (void *)(UINTPTR_MAX - 4), 8);
	expect_refused(flex_job_new("j", &s, 1, &job), -EINVAL, "wrap around", "host wraps");
	s = flex_step_dma_to_device(1, UINT64_MAX - 2, buf, 8);
	expect_refused(flex_job_new("j", &s, 1, &job), -EINVAL, "overflows", "offset overflow");
	s = flex_step_host_op(NULL, NULL);
	expect_refused(flex_job_new("j", &s, 1, &job), -EINVAL, "needs a function",
		       "correction builder in a DMA-only job");
	s = flex_step_simple(FLEX_STEP_COMPUTE);
	expect_refused(flex_job_new("j", &s, 1, &job), -EINVAL, "not allowed in a DMA-only job",
		       "compute in a DMA-only job");
}
END_TEST

/* A 0-byte DMA is a no-op, not an error; one beyond a CB's limit is split at launch. */
START_TEST(dma_steps_of_any_size)
{
	char buf[8];
	struct flex_step s;
	struct flex_job *job = NULL;

	s = flex_step_dma_to_device(1, 0, buf, 0);
	ck_assert_msg(flex_job_new("j", &s, 1, &job) == 0, "size 0: %s", flex_last_error());
	flex_job_destroy(job);
	s = flex_step_dma_to_device(1, 0, NULL, 0);
	ck_assert_msg(flex_job_new("j", &s, 1, &job) == 0, "size 0, no buffer: %s",
		      flex_last_error());
	flex_job_destroy(job);
	s = flex_step_dma_from_device(1, 0, buf, FLEX_DMA_MAX_SIZE + 1);
	ck_assert_msg(flex_job_new("j", &s, 1, &job) == 0, "FLEX_DMA_MAX_SIZE + 1: %s",
		      flex_last_error());
	flex_job_destroy(job);
}
END_TEST

START_TEST(kernel_job_and_its_accessors)
{
	struct flex_kernel *k;
	const struct flex_corr_slot *corr;
	struct flex_job *job;
	uint32_t n = 0;

	ck_assert_int_eq(flex_kernel_new_matmul(FLEX_DTYPE_INT32, 16, 16, 16, &k), 0);
	ck_assert_int_eq(flex_job_new_kernel("mm", 42, &k->sig, k->corr, k->n_corr, kernel_plan, 3,
					     &job), 0);
	ck_assert_int_eq(flex_job_is_kernel(job), 1);
	ck_assert_uint_eq(flex_job_binary(job), 42);
	ck_assert_uint_eq(flex_job_sig(job)->n_args, 3);
	ck_assert_str_eq(flex_job_sig(job)->args[2].name, "C");
	corr = flex_job_corr(job, &n);
	ck_assert_uint_eq(n, k->n_corr);
	ck_assert_int_eq(memcmp(corr, k->corr, n * sizeof(*corr)), 0);
	flex_job_steps(job, &n);
	ck_assert_uint_eq(n, 3);
	flex_job_destroy(job);
	flex_kernel_destroy(k);
}
END_TEST

START_TEST(kernel_plan_and_correction_errors)
{
	struct flex_step bad[3];
	struct flex_corr_slot slot;
	struct flex_kernel *k;
	struct flex_job *job;

	ck_assert_int_eq(flex_kernel_new_matmul(FLEX_DTYPE_INT32, 16, 16, 16, &k), 0);
	expect_refused(flex_job_new_kernel("mm", FLEX_ALLOC_INDEX_NONE, &k->sig, k->corr, k->n_corr,
					   kernel_plan, 3, &job), -EINVAL, "no binary", "no binary");
	/* With correction metadata the plan is exactly host_op, dma_correction, compute. */
	expect_refused(flex_job_new_kernel("mm", 1, &k->sig, k->corr, k->n_corr, kernel_plan + 2, 1,
					   &job), -EINVAL, "not 1 steps", "compute only");
	memcpy(bad, kernel_plan, sizeof(bad));
	bad[1] = kernel_plan[2];
	bad[2] = kernel_plan[1];
	expect_refused(flex_job_new_kernel("mm", 1, &k->sig, k->corr, k->n_corr, bad, 3, &job),
		       -EINVAL, "step 1 is compute, expected dma_correction", "order");
	memcpy(bad, kernel_plan, sizeof(bad));
	bad[0].fn = host_fn;
	expect_refused(flex_job_new_kernel("mm", 1, &k->sig, k->corr, k->n_corr, bad, 3, &job),
		       -EINVAL, "fn must be NULL", "user host op in a kernel job");
	/* Without correction metadata it is just compute. */
	expect_refused(flex_job_new_kernel("mm", 1, &k->sig, NULL, 0, kernel_plan, 3, &job),
		       -EINVAL, "[compute]", "correction steps without metadata");
	slot = (struct flex_corr_slot){ .kind = FLEX_CORR_ADDRESS, .arg = 3 };
	expect_refused(flex_job_new_kernel("mm", 1, &k->sig, &slot, 1, kernel_plan, 3, &job),
		       -EINVAL, "arg 3, the kernel has 3", "slot arg");
	slot = (struct flex_corr_slot){ .kind = FLEX_CORR_STRIDE, .arg = 0, .dim = 2 };
	expect_refused(flex_job_new_kernel("mm", 1, &k->sig, &slot, 1, kernel_plan, 3, &job),
		       -EINVAL, "dim 2, arg 0 (A) has 2", "slot dim");
	slot = (struct flex_corr_slot){ .kind = (enum flex_corr_kind)9 };
	expect_refused(flex_job_new_kernel("mm", 1, &k->sig, &slot, 1, kernel_plan, 3, &job),
		       -EINVAL, "unknown kind 9", "slot kind");
	k->sig.args[0].ndim = 0;
	expect_refused(flex_job_new_kernel("mm", 1, &k->sig, k->corr, k->n_corr, kernel_plan, 3,
					   &job), -EINVAL, "bad signature", "signature");
	/* The stream's error text is the same per-thread buffer. */
	ck_assert_str_eq(flex_last_error(), flex_last_error());
	flex_kernel_destroy(k);
}
END_TEST

START_TEST(execution_plan)
{
	char buf[8];
	struct flex_step s = flex_step_dma_to_device(1, 0, buf, sizeof(buf));
	struct flex_job *a, *b, *dup;
	struct flex_plan *plan;

	ck_assert_int_eq(flex_plan_new(&plan), 0);
	ck_assert_uint_eq(flex_plan_n_jobs(plan), 0);
	ck_assert_int_eq(flex_job_new("load", &s, 1, &a), 0);
	ck_assert_int_eq(flex_job_new("run", &s, 1, &b), 0);
	ck_assert_int_eq(flex_job_new("load", &s, 1, &dup), 0);
	ck_assert_int_eq(flex_plan_add_job(plan, a), 0);
	ck_assert_int_eq(flex_plan_add_job(plan, b), 0);
	/* A duplicate name is refused, and the plan frees the job it was given. */
	expect_refused(flex_plan_add_job(plan, dup), -EEXIST, "already in it", "duplicate name");
	ck_assert_uint_eq(flex_plan_n_jobs(plan), 2);
	ck_assert_ptr_eq(flex_plan_job(plan, 0), a);
	ck_assert_ptr_eq(flex_plan_job(plan, 1), b);
	ck_assert_ptr_null(flex_plan_job(plan, 2));
	ck_assert_ptr_eq(flex_plan_find(plan, "run"), b);
	ck_assert_ptr_null(flex_plan_find(plan, "nope"));
	flex_plan_destroy(plan);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("job");
	TCase *tc = tcase_create("job");

	tcase_add_test(tc, names_of_kinds);
	tcase_add_test(tc, dma_only_job_and_its_accessors);
	tcase_add_test(tc, dma_only_plan_errors);
	tcase_add_test(tc, dma_steps_of_any_size);
	tcase_add_test(tc, kernel_job_and_its_accessors);
	tcase_add_test(tc, kernel_plan_and_correction_errors);
	tcase_add_test(tc, execution_plan);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
