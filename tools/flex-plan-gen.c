// SPDX-License-Identifier: GPL-2.0
/*
 * flex-plan-gen - the compiler stand-in: write a plan manifest (format
 * flex-plan v1, flex/manifest.h) and the program binaries of the standard
 * tile kernels (flex/program.h) into a directory.
 *
 *   flex-plan-gen matmul --dtype int32 --tile 64x64x64 -o DIR
 *   flex-plan-gen matmul --tile 32x32x32 relu --tile 32x32 --name act -o DIR
 *
 * Each kernel word starts a job; the options after it apply to that job.
 * The manifest is DIR/plan.json (or -m NAME), each binary DIR/<job>.bin.
 * The result is parsed back with flex_manifest_new_from_file() before exiting, so
 * what it writes is what the runtime accepts.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include <flex/manifest.h>
#include <flex/program.h>

#include "tool.h"

#define MAX_JOBS 32

struct gen_job {
	const char *kernel;
	const char *name;
	enum flex_dtype dtype;
	uint64_t tile[3];
	unsigned int n_tile;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flex-plan-gen KERNEL [--dtype TYPE] --tile DIMS [--name NAME]\n"
		"                     [KERNEL ...] -o DIR [-m MANIFEST]\n"
		"kernels: matmul (--tile MxNxK), add, mul, relu (--tile RxC)\n"
		"types: int32 (the default), float32, bfloat16, float16; int8 for matmul\n"
		"writes DIR/plan.json (or DIR/MANIFEST) and DIR/<name>.bin per job\n");
}

static int parse_tile(const char *s, struct gen_job *j)
{
	char *end;

	j->n_tile = 0;
	while (j->n_tile < 3) {
		errno = 0;
		j->tile[j->n_tile] = strtoull(s, &end, 10);
		if (errno || end == s || !j->tile[j->n_tile])
			return -1;
		j->n_tile++;
		if (!*end)
			return 0;
		if (*end != 'x')
			return -1;
		s = end + 1;
	}
	return -1;
}

static const char *const corr_kind_names[] = { "const", "address", "stride", "tile_dim",
					       "accumulate" };

/* The manifest entry of one kernel. */
static struct json_object *job_json(const struct flex_kernel *k, const char *name,
				    const char *bin)
{
	struct json_object *job = json_object_new_object(), *args = json_object_new_array();
	struct json_object *red = json_object_new_array(), *corr = json_object_new_array();
	struct json_object *plan = json_object_new_array();
	const struct flex_kernel_sig *sig = &k->sig;

	json_object_object_add(job, "name", json_object_new_string(name));
	json_object_object_add(job, "binary", json_object_new_string(bin));
	for (uint32_t i = 0; i < sig->n_args; i++) {
		const struct flex_kernel_arg *ka = &sig->args[i];
		struct json_object *a = json_object_new_object();
		struct json_object *shape = json_object_new_array(), *axes = json_object_new_array();

		json_object_object_add(a, "name", json_object_new_string(ka->name));
		json_object_object_add(a, "dtype", json_object_new_string(flex_dtype_name(ka->dtype)));
		for (uint32_t d = 0; d < ka->ndim; d++) {
			json_object_array_add(shape, json_object_new_int64((int64_t)ka->shape[d]));
			json_object_array_add(axes, ka->axis[d] < 0 ? NULL :
					      json_object_new_string(sig->axis_name[ka->axis[d]]));
		}
		json_object_object_add(a, "shape", shape);
		json_object_object_add(a, "axes", axes);
		if (ka->is_output)
			json_object_object_add(a, "output", json_object_new_boolean(1));
		json_object_array_add(args, a);
	}
	json_object_object_add(job, "args", args);
	for (uint32_t a = 0; a < sig->n_axes; a++)
		if (sig->axis_is_reduction[a])
			json_object_array_add(red, json_object_new_string(sig->axis_name[a]));
	json_object_object_add(job, "reduction_axes", red);
	for (uint32_t i = 0; i < k->n_corr; i++) {
		const struct flex_corr_slot *s = &k->corr[i];
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "kind", json_object_new_string(corr_kind_names[s->kind]));
		if (s->kind == FLEX_CORR_ADDRESS || s->kind == FLEX_CORR_STRIDE ||
		    s->kind == FLEX_CORR_TILE_DIM)
			json_object_object_add(o, "arg",
					       json_object_new_string(sig->args[s->arg].name));
		if (s->kind == FLEX_CORR_STRIDE || s->kind == FLEX_CORR_TILE_DIM)
			json_object_object_add(o, "dim", json_object_new_int64(s->dim));
		if (s->kind == FLEX_CORR_CONST)
			json_object_object_add(o, "value", json_object_new_int64((int64_t)s->value));
		json_object_array_add(corr, o);
	}
	json_object_object_add(job, "correction", corr);
	if (k->n_corr) {
		json_object_array_add(plan, json_object_new_string("host_op"));
		json_object_array_add(plan, json_object_new_string("dma_correction"));
	}
	json_object_array_add(plan, json_object_new_string("compute"));
	json_object_object_add(job, "plan", plan);
	return job;
}

static int build(const struct gen_job *j, struct flex_kernel **k)
{
	int ret;

	if (!strcmp(j->kernel, "matmul")) {
		if (j->n_tile != 3) {
			tool_err("matmul: --tile must be MxNxK");
			return -EINVAL;
		}
		ret = flex_kernel_new_matmul(j->dtype, j->tile[0], j->tile[1], j->tile[2], k);
	} else if (!strcmp(j->kernel, "add") || !strcmp(j->kernel, "mul") ||
		   !strcmp(j->kernel, "relu")) {
		if (j->n_tile != 2) {
			tool_err("%s: --tile must be RxC", j->kernel);
			return -EINVAL;
		}
		ret = (j->kernel[0] == 'a' ? flex_kernel_new_add :
		       j->kernel[0] == 'm' ? flex_kernel_new_mul : flex_kernel_new_relu)(
			j->dtype, j->tile[0], j->tile[1], k);
	} else {
		tool_err("unknown kernel \"%s\" (matmul, add, mul, relu)", j->kernel);
		return -EINVAL;
	}
	if (ret)
		tool_err("%s", flex_last_error());
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dtype", required_argument, NULL, 'd' },
		{ "tile", required_argument, NULL, 't' },
		{ "name", required_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "manifest", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gen_job jobs[MAX_JOBS];
	struct json_object *root, *jarr;
	struct flex_manifest *m;
	const char *dir = NULL, *mname = "plan.json";
	char path[4096];
	int n = 0, c, ret = 0;

	tool_set_name("flex-plan-gen");
	memset(jobs, 0, sizeof(jobs));
	/* "+": stop at the first non-option, which is a kernel word. */
	for (;;) {
		c = getopt_long(argc, argv, "+d:t:n:o:m:h", opts, NULL);
		if (c == -1) {
			if (optind >= argc)
				break;
			if (n == MAX_JOBS) {
				tool_err("at most %d jobs", MAX_JOBS);
				return 2;
			}
			jobs[n].kernel = argv[optind++];
			jobs[n].dtype = FLEX_DTYPE_INT32;
			n++;
			continue;
		}
		switch (c) {
		case 'd':
		case 't':
		case 'n':
			if (!n) {
				tool_err("-%c before any kernel", c);
				usage(stderr);
				return 2;
			}
			if (c == 'd' && flex_dtype_from_name(optarg, &jobs[n - 1].dtype)) {
				tool_err("bad dtype \"%s\" (int32, int8, float32, bfloat16, float16)",
					 optarg);
				return 2;
			}
			if (c == 't' && parse_tile(optarg, &jobs[n - 1])) {
				tool_err("bad tile \"%s\" (e.g. 64x64x64)", optarg);
				return 2;
			}
			if (c == 'n')
				jobs[n - 1].name = optarg;
			break;
		case 'o':
			dir = optarg;
			break;
		case 'm':
			mname = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!n || !dir) {
		usage(stderr);
		return 2;
	}
	if (mkdir(dir, 0755) && errno != EEXIST) {
		tool_err("%s: %s", dir, strerror(errno));
		return 1;
	}

	root = json_object_new_object();
	jarr = json_object_new_array();
	json_object_object_add(root, "format", json_object_new_string("flex-plan"));
	json_object_object_add(root, "version", json_object_new_int(FLEX_MANIFEST_VERSION));
	for (int i = 0; i < n && !ret; i++) {
		struct flex_kernel *k;
		char name[64], bin[80];

		ret = build(&jobs[i], &k);
		if (ret)
			break;
		snprintf(name, sizeof(name), "%s", jobs[i].name ? jobs[i].name : k->name);
		for (int p = 0; p < i; p++)
			if (!strcmp(jobs[p].name ? jobs[p].name : "", name))
				ret = -EEXIST;
		if (ret) {
			tool_err("two jobs named %s (give one a --name)", name);
			flex_kernel_destroy(k);
			break;
		}
		snprintf(bin, sizeof(bin), "%s.bin", name);
		snprintf(path, sizeof(path), "%s/%s", dir, bin);
		ret = flex_program_write_file(path, k->binary, k->binary_size);
		if (ret)
			tool_err("%s: %s", path, strerror(-ret));
		else
			json_object_array_add(jarr, job_json(k, name, bin));
		jobs[i].name = strdup(name);
		flex_kernel_destroy(k);
	}
	json_object_object_add(root, "jobs", jarr);
	snprintf(path, sizeof(path), "%s/%s", dir, mname);
	if (!ret && json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY |
				    JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)) {
		tool_err("%s: %s", path, json_util_get_last_err());
		ret = -EIO;
	}
	json_object_put(root);
	if (ret)
		return 1;

	/* Read it back as the runtime will. */
	ret = flex_manifest_new_from_file(path, &m);
	if (ret) {
		tool_err("the written manifest does not parse: %s", flex_last_error());
		return 1;
	}
	for (uint32_t i = 0; i < flex_manifest_n_jobs(m); i++) {
		const struct flex_manifest_job *j = flex_manifest_job(m, i);

		printf("%s: job %s: %u args, %u axes, %u correction slots, %zu-byte binary\n", path,
		       j->name, j->sig.n_args, j->sig.n_axes, j->n_corr, j->binary_size);
	}
	flex_manifest_destroy(m);
	return 0;
}
