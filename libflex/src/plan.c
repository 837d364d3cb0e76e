// SPDX-License-Identifier: GPL-2.0
/*
 * ExecutionPlan: an ordered list of jobs, as the compiler produced them. A
 * passive container; launching its jobs is the stream's business.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <flex/job.h>

#include "log.h"
#include "stream_internal.h"

struct flex_plan {
	uint32_t n, cap;
	struct flex_job **jobs;
};

FLEX_EXPORT int flex_plan_new(struct flex_plan **out)
{
	struct flex_plan *p = calloc(1, sizeof(*p));

	if (!p)
		return flex_error_set(-ENOMEM, "flex_plan_new: out of memory");
	*out = p;
	return 0;
}

FLEX_EXPORT int flex_plan_add_job(struct flex_plan *plan, struct flex_job *job)
{
	if (!plan || !job) {
		flex_job_destroy(job);
		return flex_error_set(-EINVAL, "flex_plan_add_job: NULL argument");
	}
	if (flex_plan_find(plan, job->name)) {
		int err = flex_error_set(-EEXIST, "plan: a job named %s is already in it", job->name);

		flex_job_destroy(job);
		return err;
	}
	if (plan->n == plan->cap) {
		uint32_t cap = plan->cap ? plan->cap * 2 : 8;
		struct flex_job **j = realloc(plan->jobs, cap * sizeof(*j));

		if (!j) {
			flex_job_destroy(job);
			return flex_error_set(-ENOMEM, "plan: out of memory for %u jobs", cap);
		}
		plan->jobs = j;
		plan->cap = cap;
	}
	plan->jobs[plan->n++] = job;
	return 0;
}

FLEX_EXPORT uint32_t flex_plan_n_jobs(const struct flex_plan *plan)
{
	return plan->n;
}

FLEX_EXPORT struct flex_job *flex_plan_job(const struct flex_plan *plan, uint32_t i)
{
	return i < plan->n ? plan->jobs[i] : NULL;
}

FLEX_EXPORT struct flex_job *flex_plan_find(const struct flex_plan *plan, const char *name)
{
	uint32_t i;

	for (i = 0; name && i < plan->n; i++)
		if (!strcmp(plan->jobs[i]->name, name))
			return plan->jobs[i];
	return NULL;
}

FLEX_EXPORT void flex_plan_destroy(struct flex_plan *plan)
{
	uint32_t i;

	if (!plan)
		return;
	for (i = 0; i < plan->n; i++)
		flex_job_destroy(plan->jobs[i]);
	free(plan->jobs);
	free(plan);
}
