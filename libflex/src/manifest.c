// SPDX-License-Identifier: GPL-2.0
/*
 * The plan manifest (format "flex-plan", version 1), see flex/manifest.h:
 * parsing and checking it with json-c and reading its binaries (pure, no
 * device), then loading it on a device (binaries to program memory, one
 * kernel job each, the ExecutionPlan).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include <flex/manifest.h>
#include <flex/program.h>

#include "log.h"

struct flex_manifest {
	char *path;
	uint32_t n_jobs;
	struct flex_manifest_job *jobs;
};

/* Where a message is about: the file, the job (once named), the field. */
struct pctx {
	const char *path;
	char job[FLEX_JOB_NAME_MAX + 16];
};

static int perr(struct pctx *c, int ret, const char *field, const char *fmt, ...)
	FLEX_PRINTF(4, 5);

static int perr(struct pctx *c, int ret, const char *field, const char *fmt, ...)
{
	char msg[FLEX_ERRMSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return flex_error_set(ret, "%s: %s%s%s%s%s", c->path, c->job, c->job[0] ? ": " : "",
			      field ? field : "", field ? ": " : "", msg);
}

static const char *type_name(struct json_object *o)
{
	return o ? json_type_to_name(json_object_get_type(o)) : "null";
}

/* Refuse any key of @o not in @allowed (NULL-terminated). */
static int check_keys(struct pctx *c, struct json_object *o, const char *field,
		      const char *const *allowed)
{
	json_object_object_foreach(o, key, val) {
		const char *const *a;

		(void)val;
		for (a = allowed; *a; a++)
			if (!strcmp(*a, key))
				break;
		if (!*a)
			return perr(c, -EINVAL, field, "unknown key \"%s\"", key);
	}
	return 0;
}

/* @o must be an object; *@out gets it. */
static int want_type(struct pctx *c, struct json_object *o, enum json_type t,
		     const char *field)
{
	if (!o || json_object_get_type(o) != t)
		return perr(c, -EINVAL, field, "must be %s, not %s", json_type_to_name(t),
			    type_name(o));
	return 0;
}

/* A required or optional member. */
static struct json_object *member(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static int has_member(struct json_object *o, const char *key)
{
	return json_object_object_get_ex(o, key, NULL);
}

/* An integer in [lo, hi]. */
static int get_uint(struct pctx *c, struct json_object *o, const char *field, uint64_t lo,
		    uint64_t hi, uint64_t *out)
{
	int64_t v;

	if (!o || json_object_get_type(o) != json_type_int)
		return perr(c, -EINVAL, field, "must be an integer, not %s", type_name(o));
	v = json_object_get_int64(o);
	if (v < 0 || (uint64_t)v < lo || (uint64_t)v > hi)
		return perr(c, -EINVAL, field, "%lld is out of range %llu..%llu", (long long)v,
			    (unsigned long long)lo, (unsigned long long)hi);
	/* json-c saturates integers that do not fit in int64. */
	if (v == INT64_MAX && json_object_get_uint64(o) != (uint64_t)INT64_MAX)
		return perr(c, -EINVAL, field, "out of range %llu..%llu", (unsigned long long)lo,
			    (unsigned long long)hi);
	*out = (uint64_t)v;
	return 0;
}

/* A string of 1 .. max-1 bytes. */
static int get_name(struct pctx *c, struct json_object *o, const char *field, char *out,
		    size_t max)
{
	const char *s;
	size_t n;

	if (!o || json_object_get_type(o) != json_type_string)
		return perr(c, -EINVAL, field, "must be a string, not %s", type_name(o));
	s = json_object_get_string(o);
	n = (size_t)json_object_get_string_len(o);
	if (!n || n >= max || strlen(s) != n)
		return perr(c, -EINVAL, field, "\"%s\" must be 1..%zu bytes (no NUL)", s, max - 1);
	memcpy(out, s, n + 1);
	return 0;
}

static int find_axis(const struct flex_kernel_sig *sig, const char *name)
{
	for (uint32_t a = 0; a < sig->n_axes; a++)
		if (!strcmp(sig->axis_name[a], name))
			return (int)a;
	return -1;
}

static int find_arg(const struct flex_kernel_sig *sig, const char *name)
{
	for (uint32_t i = 0; i < sig->n_args; i++)
		if (!strcmp(sig->args[i].name, name))
			return (int)i;
	return -1;
}

static const char *const arg_keys[] = { "name", "dtype", "shape", "axes", "output", "strides",
					NULL };

static int parse_arg(struct pctx *c, struct json_object *o, uint32_t i,
		     struct flex_kernel_sig *sig, uint64_t axis_tile[], int axis_from[])
{
	struct flex_kernel_arg *ka = &sig->args[i];
	struct json_object *shape, *axes, *v;
	char f[96];
	size_t n;
	int ret;

	snprintf(f, sizeof(f), "args[%u]", i);
	ret = want_type(c, o, json_type_object, f) ?: check_keys(c, o, f, arg_keys);
	if (ret)
		return ret;
	memset(ka, 0, sizeof(*ka));
	for (int d = 0; d < FLEX_MAX_DIMS; d++)
		ka->axis[d] = -1;

	snprintf(f, sizeof(f), "args[%u].name", i);
	ret = get_name(c, member(o, "name"), f, ka->name, sizeof(ka->name));
	if (ret)
		return ret;
	if (find_arg(sig, ka->name) >= 0 && find_arg(sig, ka->name) < (int)i)
		return perr(c, -EINVAL, f, "\"%s\" is already args[%d]", ka->name,
			    find_arg(sig, ka->name));

	snprintf(f, sizeof(f), "args[%u].dtype", i);
	v = member(o, "dtype");
	if (!v || json_object_get_type(v) != json_type_string)
		return perr(c, -EINVAL, f, "must be a string, not %s", type_name(v));
	if (flex_dtype_from_name(json_object_get_string(v), &ka->dtype))
		return perr(c, -EINVAL, f, "\"%s\" is not a dtype (PyTorch's names: float32, bfloat16, int32, int8, ...)",
			    json_object_get_string(v));

	snprintf(f, sizeof(f), "args[%u].shape", i);
	shape = member(o, "shape");
	ret = want_type(c, shape, json_type_array, f);
	if (ret)
		return ret;
	n = json_object_array_length(shape);
	if (n < 1 || n > FLEX_MAX_DIMS)
		return perr(c, -EINVAL, f, "%zu dimensions, must be 1..%d", n, FLEX_MAX_DIMS);
	ka->ndim = (uint32_t)n;
	for (size_t d = 0; d < n; d++) {
		snprintf(f, sizeof(f), "args[%u].shape[%zu]", i, d);
		ret = get_uint(c, json_object_array_get_idx(shape, d), f, 1, UINT32_MAX,
			       &ka->shape[d]);
		if (ret)
			return ret;
	}

	snprintf(f, sizeof(f), "args[%u].axes", i);
	axes = member(o, "axes");
	ret = want_type(c, axes, json_type_array, f);
	if (ret)
		return ret;
	if (json_object_array_length(axes) != n)
		return perr(c, -EINVAL, f, "%zu entries for %zu dimensions",
			    json_object_array_length(axes), n);
	for (size_t d = 0; d < n; d++) {
		struct json_object *a = json_object_array_get_idx(axes, d);
		char name[16];
		int ax;

		snprintf(f, sizeof(f), "args[%u].axes[%zu]", i, d);
		if (!a)
			continue;	/* null: never tiled */
		ret = get_name(c, a, f, name, sizeof(name));
		if (ret)
			return ret;
		ax = find_axis(sig, name);
		if (ax < 0) {
			if (sig->n_axes == FLEX_KERNEL_MAX_AXES)
				return perr(c, -EINVAL, f, "axis \"%s\": more than %d axes", name,
					    FLEX_KERNEL_MAX_AXES);
			ax = (int)sig->n_axes++;
			memcpy(sig->axis_name[ax], name, sizeof(name));
		}
		for (size_t e = 0; e < d; e++)
			if (ka->axis[e] == ax)
				return perr(c, -EINVAL, f, "axis \"%s\" is already dimension %zu",
					    name, e);
		ka->axis[d] = (int8_t)ax;
		if (axis_from[ax] < 0) {
			axis_tile[ax] = ka->shape[d];
			axis_from[ax] = (int)(i * FLEX_MAX_DIMS + d);
		} else if (axis_tile[ax] != ka->shape[d]) {
			snprintf(f, sizeof(f), "args[%u].shape[%zu]", i, d);
			return perr(c, -EINVAL, f,
				    "axis \"%s\" has tile %llu here but %llu in args[%d].shape[%d] (%s)",
				    name, (unsigned long long)ka->shape[d],
				    (unsigned long long)axis_tile[ax], axis_from[ax] / FLEX_MAX_DIMS,
				    axis_from[ax] % FLEX_MAX_DIMS,
				    sig->args[axis_from[ax] / FLEX_MAX_DIMS].name);
		}
	}

	snprintf(f, sizeof(f), "args[%u].output", i);
	v = member(o, "output");
	if (has_member(o, "output")) {
		if (!v || json_object_get_type(v) != json_type_boolean)
			return perr(c, -EINVAL, f, "must be a boolean, not %s", type_name(v));
		ka->is_output = json_object_get_boolean(v) ? 1 : 0;
	}

	if (has_member(o, "strides")) {
		struct json_object *st = member(o, "strides");

		snprintf(f, sizeof(f), "args[%u].strides", i);
		ret = want_type(c, st, json_type_array, f);
		if (ret)
			return ret;
		if (json_object_array_length(st) != n)
			return perr(c, -EINVAL, f, "%zu entries for %zu dimensions",
				    json_object_array_length(st), n);
		for (size_t d = 0; d < n; d++) {
			snprintf(f, sizeof(f), "args[%u].strides[%zu]", i, d);
			ret = get_uint(c, json_object_array_get_idx(st, d), f, 1, UINT32_MAX,
				       &ka->strides[d]);
			if (ret)
				return ret;
		}
		ka->fixed_strides = 1;
	}
	return 0;
}

static const char *const corr_kinds[] = {
	[FLEX_CORR_CONST] = "const",
	[FLEX_CORR_ADDRESS] = "address",
	[FLEX_CORR_STRIDE] = "stride",
	[FLEX_CORR_TILE_DIM] = "tile_dim",
	[FLEX_CORR_ACCUMULATE] = "accumulate",
};

static const char *const corr_keys[] = { "kind", "arg", "dim", "value", NULL };

static int parse_corr(struct pctx *c, struct json_object *o, uint32_t i,
		      const struct flex_kernel_sig *sig, struct flex_corr_slot *s)
{
	struct json_object *v;
	int need_arg, need_dim, need_value, ret, kind = -1, a;
	char f[64];

	snprintf(f, sizeof(f), "correction[%u]", i);
	ret = want_type(c, o, json_type_object, f) ?: check_keys(c, o, f, corr_keys);
	if (ret)
		return ret;
	memset(s, 0, sizeof(*s));
	snprintf(f, sizeof(f), "correction[%u].kind", i);
	v = member(o, "kind");
	if (!v || json_object_get_type(v) != json_type_string)
		return perr(c, -EINVAL, f, "must be a string, not %s", type_name(v));
	for (unsigned int k = 0; k < sizeof(corr_kinds) / sizeof(corr_kinds[0]); k++)
		if (!strcmp(corr_kinds[k], json_object_get_string(v)))
			kind = (int)k;
	if (kind < 0)
		return perr(c, -EINVAL, f,
			    "\"%s\" is not a slot kind (const, address, stride, tile_dim, accumulate)",
			    json_object_get_string(v));
	s->kind = (enum flex_corr_kind)kind;
	need_arg = kind == FLEX_CORR_ADDRESS || kind == FLEX_CORR_STRIDE ||
		   kind == FLEX_CORR_TILE_DIM;
	need_dim = kind == FLEX_CORR_STRIDE || kind == FLEX_CORR_TILE_DIM;
	need_value = kind == FLEX_CORR_CONST;

	snprintf(f, sizeof(f), "correction[%u].arg", i);
	if (has_member(o, "arg") != need_arg)
		return perr(c, -EINVAL, f, need_arg ? "missing (kind %s needs an argument)" :
					   "not allowed with kind %s", corr_kinds[kind]);
	if (need_arg) {
		char name[32];

		ret = get_name(c, member(o, "arg"), f, name, sizeof(name));
		if (ret)
			return ret;
		a = find_arg(sig, name);
		if (a < 0)
			return perr(c, -EINVAL, f, "no argument named \"%s\"", name);
		s->arg = (uint32_t)a;
	}

	snprintf(f, sizeof(f), "correction[%u].dim", i);
	if (has_member(o, "dim") != need_dim)
		return perr(c, -EINVAL, f, need_dim ? "missing (kind %s needs a dimension)" :
					   "not allowed with kind %s", corr_kinds[kind]);
	if (need_dim) {
		uint64_t d;
		uint32_t ndim = sig->args[s->arg].ndim;

		ret = get_uint(c, member(o, "dim"), f, 0, UINT32_MAX, &d);
		if (ret)
			return ret;
		if (d >= ndim)
			return perr(c, -EINVAL, f, "argument \"%s\" has no dimension %llu (%u dims)",
				    sig->args[s->arg].name, (unsigned long long)d, ndim);
		s->dim = (uint32_t)d;
	}

	snprintf(f, sizeof(f), "correction[%u].value", i);
	if (has_member(o, "value") != need_value)
		return perr(c, -EINVAL, f, need_value ? "missing (kind const needs a value)" :
					     "not allowed with kind %s", corr_kinds[kind]);
	if (need_value) {
		ret = get_uint(c, member(o, "value"), f, 0, INT64_MAX, &s->value);
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_plan(struct pctx *c, struct json_object *o, struct flex_manifest_job *j)
{
	static const enum flex_step_kind full[] = { FLEX_STEP_HOST_OP, FLEX_STEP_DMA_CORRECTION,
						    FLEX_STEP_COMPUTE };
	static const char *const names[] = { "host_op", "dma_correction", "compute" };
	size_t n;
	char f[32];
	int ret;

	ret = want_type(c, o, json_type_array, "plan");
	if (ret)
		return ret;
	n = json_object_array_length(o);
	for (size_t i = 0; i < n; i++) {
		struct json_object *s = json_object_array_get_idx(o, i);
		const char *name;
		int k = -1;

		snprintf(f, sizeof(f), "plan[%zu]", i);
		if (!s || json_object_get_type(s) != json_type_string)
			return perr(c, -EINVAL, f, "must be a string, not %s", type_name(s));
		name = json_object_get_string(s);
		for (int m = 0; m < 3; m++)
			if (!strcmp(name, names[m]))
				k = m;
		if (k < 0)
			return perr(c, -EINVAL, f,
				    "\"%s\" is not a kernel step (host_op, dma_correction, compute)",
				    name);
		if (i < FLEX_JOB_MAX_STEPS)
			j->steps[i] = full[k];
	}
	if (n == 3 && j->steps[0] == full[0] && j->steps[1] == full[1] && j->steps[2] == full[2]) {
		if (!j->n_corr)
			return perr(c, -EINVAL, "plan",
				    "host_op and dma_correction with an empty correction (use [\"compute\"])");
	} else if (n == 1 && j->steps[0] == FLEX_STEP_COMPUTE) {
		if (j->n_corr)
			return perr(c, -EINVAL, "plan",
				    "[\"compute\"] alone, but the job has %u correction slots (use [\"host_op\", \"dma_correction\", \"compute\"])",
				    j->n_corr);
	} else {
		return perr(c, -EINVAL, "plan",
			    "must be [\"host_op\", \"dma_correction\", \"compute\"] or [\"compute\"]");
	}
	j->n_steps = (uint32_t)n;
	return 0;
}

static const char *const job_keys[] = { "name", "binary", "args", "reduction_axes",
					"correction", "plan", NULL };

static int parse_job(struct pctx *c, struct json_object *o, uint32_t idx, const char *dir,
		     struct flex_manifest *m)
{
	struct flex_manifest_job *j = &m->jobs[idx];
	struct flex_kernel_sig *sig = &j->sig;
	uint64_t axis_tile[FLEX_KERNEL_MAX_AXES] = { 0 };
	int axis_from[FLEX_KERNEL_MAX_AXES];
	struct flex_program_info info;
	struct json_object *v;
	char f[64];
	const char *bin;
	size_t n;
	int ret;

	snprintf(c->job, sizeof(c->job), "jobs[%u]", idx);
	ret = want_type(c, o, json_type_object, NULL) ?: check_keys(c, o, NULL, job_keys);
	if (ret)
		return ret;
	ret = get_name(c, member(o, "name"), "name", j->name, sizeof(j->name));
	if (ret)
		return ret;
	for (uint32_t k = 0; k < idx; k++)
		if (!strcmp(m->jobs[k].name, j->name))
			return perr(c, -EINVAL, "name", "\"%s\" is already jobs[%u]", j->name, k);
	snprintf(c->job, sizeof(c->job), "job \"%s\"", j->name);

	for (int a = 0; a < FLEX_KERNEL_MAX_AXES; a++)
		axis_from[a] = -1;
	v = member(o, "args");
	ret = want_type(c, v, json_type_array, "args");
	if (ret)
		return ret;
	n = json_object_array_length(v);
	if (n < 1 || n > FLEX_KERNEL_MAX_ARGS)
		return perr(c, -EINVAL, "args", "%zu arguments, must be 1..%d", n,
			    FLEX_KERNEL_MAX_ARGS);
	for (uint32_t i = 0; i < n; i++) {
		sig->n_args = i;
		ret = parse_arg(c, json_object_array_get_idx(v, i), i, sig, axis_tile, axis_from);
		if (ret)
			return ret;
	}
	sig->n_args = (uint32_t)n;

	if (has_member(o, "reduction_axes")) {
		v = member(o, "reduction_axes");
		ret = want_type(c, v, json_type_array, "reduction_axes");
		if (ret)
			return ret;
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			char name[16];
			int ax;

			snprintf(f, sizeof(f), "reduction_axes[%zu]", i);
			ret = get_name(c, json_object_array_get_idx(v, i), f, name, sizeof(name));
			if (ret)
				return ret;
			ax = find_axis(sig, name);
			if (ax < 0)
				return perr(c, -EINVAL, f, "no argument has an axis \"%s\"", name);
			if (sig->axis_is_reduction[ax])
				return perr(c, -EINVAL, f, "axis \"%s\" listed twice", name);
			sig->axis_is_reduction[ax] = 1;
		}
	}

	ret = flex_sig_validate(sig);
	if (ret)
		return perr(c, ret, "args", "%s", flex_last_error());

	if (has_member(o, "correction")) {
		v = member(o, "correction");
		ret = want_type(c, v, json_type_array, "correction");
		if (ret)
			return ret;
		n = json_object_array_length(v);
		if (n > FLEX_JOB_MAX_CORR_SLOTS)
			return perr(c, -EINVAL, "correction", "%zu slots, at most %d", n,
				    FLEX_JOB_MAX_CORR_SLOTS);
		j->corr = calloc(n ? n : 1, sizeof(*j->corr));
		if (!j->corr)
			return perr(c, -ENOMEM, "correction", "out of memory");
		for (uint32_t i = 0; i < n; i++) {
			ret = parse_corr(c, json_object_array_get_idx(v, i), i, sig, &j->corr[i]);
			if (ret)
				return ret;
		}
		j->n_corr = (uint32_t)n;
	}

	if (!has_member(o, "plan"))
		return perr(c, -EINVAL, "plan", "missing");
	ret = parse_plan(c, member(o, "plan"), j);
	if (ret)
		return ret;

	/* The binary, last: everything it is checked against is known. */
	v = member(o, "binary");
	if (!v || json_object_get_type(v) != json_type_string || !json_object_get_string_len(v))
		return perr(c, -EINVAL, "binary", "must be a non-empty string, not %s",
			    type_name(v));
	bin = json_object_get_string(v);
	if (bin[0] == '/')
		return perr(c, -EINVAL, "binary",
			    "\"%s\": must be relative to the manifest's directory", bin);
	if (asprintf(&j->binary_path, "%s/%s", dir, bin) < 0) {
		j->binary_path = NULL;
		return perr(c, -ENOMEM, "binary", "out of memory");
	}
	ret = flex_program_read_file(j->binary_path, &j->binary, &j->binary_size);
	if (ret)
		return perr(c, ret, "binary", "%s", flex_last_error());
	ret = flex_program_validate(j->binary, j->binary_size, &info);
	if (ret)
		return perr(c, ret, "binary", "%s: not a valid program", j->binary_path);
	if (info.n_slots > j->n_corr)
		return perr(c, -ENOEXEC, "binary",
			    "%s declares %u correction slots (reads up to slot %u), but the job's correction has %u",
			    j->binary_path, info.n_slots, info.slots_used ? info.slots_used - 1 : 0,
			    j->n_corr);
	return 0;
}

static int read_all(struct pctx *c, char **out, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd, ret;

	fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return perr(c, -errno, NULL, "%s", strerror(errno));
	if (fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return perr(c, ret, NULL, "%s", strerror(-ret));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return perr(c, -EISDIR, NULL, "is a directory");
	}
	if (st.st_size > FLEX_MANIFEST_MAX_BYTES) {
		close(fd);
		return perr(c, -EFBIG, NULL, "%lld bytes, larger than the limit %u",
			    (long long)st.st_size, FLEX_MANIFEST_MAX_BYTES);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return perr(c, -ENOMEM, NULL, "out of memory");
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (got != (size_t)st.st_size) {
		free(buf);
		return perr(c, -EIO, NULL, "short read");
	}
	buf[got] = 0;
	*out = buf;
	*len = got;
	return 0;
}

static const char *const top_keys[] = { "format", "version", "jobs", NULL };

FLEX_EXPORT int flex_manifest_new_from_file(const char *path, struct flex_manifest **out)
{
	struct pctx c = { .path = path };
	struct json_tokener *tok = NULL;
	struct json_object *root = NULL, *v;
	struct flex_manifest *m = NULL;
	char *text = NULL, *dcopy = NULL;
	const char *dir;
	uint64_t version;
	size_t n, len = 0;
	int ret;

	if (!path || !out)
		return flex_error_set(-EINVAL, "flex_manifest_new_from_file: NULL argument");
	ret = read_all(&c, &text, &len);
	if (ret)
		return ret;
	tok = json_tokener_new();
	if (!tok) {
		ret = perr(&c, -ENOMEM, NULL, "out of memory");
		goto out;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root || json_tokener_get_parse_end(tok) < len) {
		enum json_tokener_error je = json_tokener_get_error(tok);
		size_t at = json_tokener_get_parse_end(tok), line = 1;

		for (size_t i = 0; i < at && text[i]; i++)
			line += text[i] == '\n';
		if (root) {
			/* Something after the top-level value (not whitespace)? */
			const char *rest = text + at;

			while (*rest == ' ' || *rest == '\n' || *rest == '\t' || *rest == '\r')
				rest++;
			if (rest == text + len)
				goto parsed;
		}
		ret = perr(&c, -EINVAL, NULL, "line %zu: JSON syntax error: %s", line,
			   je == json_tokener_success ? "data after the top-level value" :
			   je == json_tokener_continue ? "unexpected end of file" :
			   json_tokener_error_desc(je));
		goto out;
	}
parsed:
	ret = want_type(&c, root, json_type_object, "top level") ?:
	      check_keys(&c, root, "top level", top_keys);
	if (ret)
		goto out;
	v = member(root, "format");
	if (!v || json_object_get_type(v) != json_type_string ||
	    strcmp(json_object_get_string(v), "flex-plan")) {
		ret = perr(&c, -EINVAL, "format", "must be \"flex-plan\"");
		goto out;
	}
	ret = get_uint(&c, member(root, "version"), "version", FLEX_MANIFEST_VERSION,
		       FLEX_MANIFEST_VERSION, &version);
	if (ret)
		goto out;
	v = member(root, "jobs");
	ret = want_type(&c, v, json_type_array, "jobs");
	if (ret)
		goto out;
	n = json_object_array_length(v);
	if (n < 1 || n > FLEX_MANIFEST_MAX_JOBS) {
		ret = perr(&c, -EINVAL, "jobs", "%zu jobs, must be 1..%d", n,
			   FLEX_MANIFEST_MAX_JOBS);
		goto out;
	}
	m = calloc(1, sizeof(*m));
	if (m)
		m->jobs = calloc(n, sizeof(*m->jobs));
	if (m)
		m->path = strdup(path);
	dcopy = strdup(path);
	if (!m || !m->jobs || !m->path || !dcopy) {
		ret = perr(&c, -ENOMEM, NULL, "out of memory");
		goto out;
	}
	m->n_jobs = (uint32_t)n;
	dir = dirname(dcopy);
	for (uint32_t i = 0; i < n; i++) {
		ret = parse_job(&c, json_object_array_get_idx(v, i), i, dir, m);
		if (ret)
			goto out;
	}
	*out = m;
	m = NULL;
	ret = 0;
out:
	flex_manifest_destroy(m);
	free(dcopy);
	json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	free(text);
	return ret;
}

FLEX_EXPORT void flex_manifest_destroy(struct flex_manifest *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; m->jobs && i < m->n_jobs; i++) {
		free(m->jobs[i].binary_path);
		free(m->jobs[i].binary);
		free(m->jobs[i].corr);
	}
	free(m->jobs);
	free(m->path);
	free(m);
}

FLEX_EXPORT const char *flex_manifest_path(const struct flex_manifest *m)
{
	return m->path;
}

FLEX_EXPORT uint32_t flex_manifest_n_jobs(const struct flex_manifest *m)
{
	return m->n_jobs;
}

FLEX_EXPORT const struct flex_manifest_job *flex_manifest_job(const struct flex_manifest *m,
							      uint32_t i)
{
	return i < m->n_jobs ? &m->jobs[i] : NULL;
}

FLEX_EXPORT const struct flex_manifest_job *flex_manifest_find(const struct flex_manifest *m,
							       const char *name)
{
	for (uint32_t i = 0; i < m->n_jobs; i++)
		if (!strcmp(m->jobs[i].name, name))
			return &m->jobs[i];
	return NULL;
}

FLEX_EXPORT int flex_manifest_arg_index(const struct flex_manifest_job *job, const char *name)
{
	return find_arg(&job->sig, name);
}

/* ---- loading on a device ---- */

struct flex_loaded_plan {
	struct flex_context *ctx;
	struct flex_plan *plan;
	uint32_t n;
	flex_alloc_index_t *binaries;
};

FLEX_EXPORT void flex_loaded_plan_destroy(struct flex_loaded_plan *lp)
{
	if (!lp)
		return;
	flex_plan_destroy(lp->plan);
	for (uint32_t i = 0; i < lp->n; i++)
		if (lp->binaries[i] != FLEX_ALLOC_INDEX_NONE)
			flex_alloc_block_free(flex_context_allocator(lp->ctx), lp->binaries[i]);
	free(lp->binaries);
	free(lp);
}

FLEX_EXPORT struct flex_plan *flex_loaded_plan_plan(const struct flex_loaded_plan *lp)
{
	return lp->plan;
}

FLEX_EXPORT flex_alloc_index_t flex_loaded_plan_binary(const struct flex_loaded_plan *lp,
						       uint32_t i)
{
	return i < lp->n ? lp->binaries[i] : FLEX_ALLOC_INDEX_NONE;
}

FLEX_EXPORT int flex_loaded_plan_new(struct flex_context *ctx, const struct flex_manifest *m,
				   struct flex_stream *s, struct flex_loaded_plan **out)
{
	struct pctx c = { .path = m->path };
	struct flex_alloc *a = flex_context_allocator(ctx);
	struct flex_stream_error se;
	struct flex_loaded_plan *lp;
	uint32_t launched = 0;
	int ret;

	if (!s)
		s = flex_context_default_stream(ctx);
	lp = calloc(1, sizeof(*lp));
	if (lp)
		lp->binaries = calloc(m->n_jobs, sizeof(*lp->binaries));
	if (!lp || !lp->binaries) {
		free(lp);
		return perr(&c, -ENOMEM, NULL, "out of memory");
	}
	lp->ctx = ctx;
	lp->n = m->n_jobs;
	ret = flex_plan_new(&lp->plan);
	if (ret) {
		perr(&c, ret, NULL, "creating the ExecutionPlan: %s", strerror(-ret));
		goto fail;
	}

	/* Allocate every binary and queue its DMA; one synchronize for all. */
	for (uint32_t i = 0; i < m->n_jobs; i++) {
		const struct flex_manifest_job *j = &m->jobs[i];
		struct flex_step step;
		struct flex_job *dma;
		char name[FLEX_JOB_NAME_MAX + 8];

		snprintf(c.job, sizeof(c.job), "job \"%s\"", j->name);
		ret = flex_alloc_block_alloc(a, j->binary_size, FLEX_ALLOC_PROGRAM, &lp->binaries[i]);
		if (ret) {
			perr(&c, ret, "binary", "allocating %zu bytes of program memory: %s",
			     j->binary_size, flex_last_error());
			goto fail;
		}
		step = flex_step_dma_to_device(lp->binaries[i], 0, j->binary, j->binary_size);
		snprintf(name, sizeof(name), "load:%s", j->name);
		ret = flex_job_new(name, &step, 1, &dma);
		if (!ret) {
			ret = flex_stream_launch(s, dma, NULL, 0, 0);
			flex_job_destroy(dma);
		}
		if (ret) {
			perr(&c, ret, "binary", "DMA to the device: %s", flex_last_error());
			goto fail;
		}
		launched++;
	}
	c.job[0] = 0;
	ret = flex_stream_synchronize(s, &se);
	if (ret) {
		perr(&c, ret, NULL, "loading the binaries: %s", se.message);
		goto fail;
	}

	for (uint32_t i = 0; i < m->n_jobs; i++) {
		const struct flex_manifest_job *j = &m->jobs[i];
		struct flex_step steps[FLEX_JOB_MAX_STEPS];
		struct flex_job *job;

		snprintf(c.job, sizeof(c.job), "job \"%s\"", j->name);
		for (uint32_t k = 0; k < j->n_steps; k++)
			steps[k] = flex_step_simple(j->steps[k]);
		if (j->n_steps && j->steps[0] == FLEX_STEP_HOST_OP)
			steps[0] = flex_step_host_op(NULL, NULL);
		ret = flex_job_new_kernel(j->name, lp->binaries[i], &j->sig, j->corr, j->n_corr,
					  steps, j->n_steps, &job);
		if (!ret)
			ret = flex_plan_add_job(lp->plan, job);
		if (ret) {
			perr(&c, ret, NULL, "%s", flex_last_error());
			goto fail;
		}
	}
	*out = lp;
	return 0;

fail:
	/* Nothing may still be DMAing into a block we free. */
	if (launched)
		flex_stream_synchronize(s, NULL);
	flex_loaded_plan_destroy(lp);
	return ret;
}
