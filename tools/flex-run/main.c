// SPDX-License-Identifier: GPL-2.0
/*
 * flex-run - run a compiled plan on a flex device.
 *
 *   flex-run [--device DEV] PLAN.json --in A=a.npy --in B=b.npy --out C=c.npy
 *            [--stream-priority low|normal|high] [--no-tiling] [--progress] [--quiet]
 *
 * Opens the device, parses and loads the plan (binaries into program
 * memory), reads the inputs (.npy), allocates a device tensor per argument
 * name and DMAs the inputs to it, launches every job of the plan in order
 * on one stream (tiled when the tensors are larger than the compiled
 * tiles), synchronizes, DMAs the requested outputs back and writes them as
 * .npy. Tensors are named by argument name across jobs: an output of one
 * job named like an input of a later one feeds it.
 *
 * An output's shape is the compiled tile times the tile count of each of
 * its axes, the counts coming from the inputs. A summary of the times (load,
 * host to device, launch + sync, device to host), tiles and CBs goes to
 * stderr at the end; with --progress (or when stderr is a terminal) a
 * progress line is updated while the device runs.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <flex/context.h>
#include <flex/job.h>
#include <flex/manifest.h>
#include <flex/stream.h>

#include "npy.h"
#include "tool.h"

#define MAX_TENSORS	64
#define MAX_IO		32

struct tensor {
	char name[32];
	struct flex_tensor t;
	uint64_t nbytes;
	struct npy_array host;	/* the input's data, or the output's buffer */
	int is_input;
};

struct io {
	char name[32];
	const char *path;
};

struct run {
	struct flex_context *ctx;
	struct flex_stream *s;
	struct tensor tensors[MAX_TENSORS];
	unsigned int n_tensors;
	int quiet, progress;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: flex-run [--device DEV] PLAN.json --in NAME=FILE.npy ... --out NAME=FILE.npy ...\n"
		"                [--stream-priority low|normal|high] [--no-tiling] [--progress] [--quiet]\n");
}

static int parse_io(const char *arg, struct io *io)
{
	const char *eq = strchr(arg, '=');

	if (!eq || eq == arg || (size_t)(eq - arg) >= sizeof(io->name) || !eq[1])
		return -1;
	memcpy(io->name, arg, (size_t)(eq - arg));
	io->name[eq - arg] = 0;
	io->path = eq + 1;
	return 0;
}

static struct tensor *find_tensor(struct run *r, const char *name)
{
	for (unsigned int i = 0; i < r->n_tensors; i++)
		if (!strcmp(r->tensors[i].name, name))
			return &r->tensors[i];
	return NULL;
}

static void dense_strides(struct flex_tensor *t)
{
	t->strides[t->ndim - 1] = 1;
	for (int d = (int)t->ndim - 2; d >= 0; d--)
		t->strides[d] = t->strides[d + 1] * t->shape[d + 1];
}

/* Allocate a device tensor for @t (shape set) named @name. */
static struct tensor *new_tensor(struct run *r, const char *name, enum flex_dtype dt,
				 uint32_t ndim, const uint64_t *shape)
{
	struct tensor *x;
	uint64_t n = flex_dtype_size(dt);
	int ret;

	if (r->n_tensors == MAX_TENSORS) {
		tool_err("more than %d tensors", MAX_TENSORS);
		return NULL;
	}
	x = &r->tensors[r->n_tensors];
	memset(x, 0, sizeof(*x));
	snprintf(x->name, sizeof(x->name), "%s", name);
	x->t.dtype = dt;
	x->t.ndim = ndim;
	for (uint32_t d = 0; d < ndim; d++) {
		x->t.shape[d] = shape[d];
		if (__builtin_mul_overflow(n, shape[d], &n)) {
			tool_err("tensor %s: size overflows", name);
			return NULL;
		}
	}
	dense_strides(&x->t);
	x->nbytes = n;
	ret = flex_alloc_block_alloc(flex_context_allocator(r->ctx), n, FLEX_ALLOC_TENSOR, &x->t.index);
	if (ret) {
		char size[TOOL_SIZE_LEN];

		tool_err("tensor %s: allocating %s: %s", name, tool_size(size, sizeof(size), n),
			 flex_last_error());
		return NULL;
	}
	r->n_tensors++;
	return x;
}

/* DMA @x's host buffer to or from the device in FLEX_DMA_MAX_SIZE pieces. */
static int copy(struct run *r, struct tensor *x, int to_device)
{
	for (uint64_t off = 0; off < x->nbytes; off += FLEX_DMA_MAX_SIZE) {
		uint64_t n = x->nbytes - off < FLEX_DMA_MAX_SIZE ? x->nbytes - off :
								   FLEX_DMA_MAX_SIZE;
		int ret = flex_stream_copy(r->s, to_device, x->t.index, off,
					   (char *)x->host.data + off, n);

		if (ret) {
			tool_err("tensor %s: DMA %s: %s", x->name,
				 to_device ? "to the device" : "from the device",
				 flex_last_error());
			return ret;
		}
	}
	return 0;
}

/* Synchronize, with a progress line when asked. */
static int sync_stream(struct run *r, const char *what, double t0)
{
	struct flex_stream_error se;
	struct flex_stream_stats st;
	int ret, shown = 0;

	if (r->progress) {
		while ((ret = flex_stream_query(r->s, &se)) == -EBUSY) {
			usleep(100 * 1000);
			/* Only for runs long enough to wonder about. */
			if (now() - t0 < 1.0)
				continue;
			flex_stream_get_stats(r->s, &st);
			fprintf(stderr, "\rflex-run: %s: %.1f s, %llu tiles, %llu CBs submitted   ",
				what, now() - t0, (unsigned long long)st.tiles,
				(unsigned long long)st.cbs);
			shown = 1;
		}
		if (shown)
			fputc('\n', stderr);
	}
	ret = flex_stream_synchronize(r->s, &se);
	if (ret)
		tool_err("%s failed: %s", what, se.message);
	return ret;
}

/* Tensors of one job: inputs from the table, outputs allocated as needed. */
static int job_args(struct run *r, const struct flex_manifest_job *j, struct flex_tensor *args)
{
	const struct flex_kernel_sig *sig = &j->sig;
	uint64_t count[FLEX_KERNEL_MAX_AXES];

	for (uint32_t a = 0; a < FLEX_KERNEL_MAX_AXES; a++)
		count[a] = 1;
	/* Tile counts from the tensors that exist. */
	for (uint32_t i = 0; i < sig->n_args; i++) {
		const struct flex_kernel_arg *ka = &sig->args[i];
		struct tensor *x = find_tensor(r, ka->name);

		if (!x)
			continue;
		for (uint32_t d = 0; d < ka->ndim && d < x->t.ndim; d++)
			if (ka->axis[d] >= 0 && x->t.shape[d] > ka->shape[d])
				count[ka->axis[d]] = x->t.shape[d] / ka->shape[d];
	}
	for (uint32_t i = 0; i < sig->n_args; i++) {
		const struct flex_kernel_arg *ka = &sig->args[i];
		struct tensor *x = find_tensor(r, ka->name);

		if (!x && !ka->is_output) {
			tool_err("job \"%s\": argument %s is an input: give --in %s=FILE.npy",
				 j->name, ka->name, ka->name);
			return -EINVAL;
		}
		if (!x) {
			uint64_t shape[FLEX_MAX_DIMS];

			for (uint32_t d = 0; d < ka->ndim; d++)
				shape[d] = ka->shape[d] * (ka->axis[d] >= 0 ? count[ka->axis[d]] : 1);
			x = new_tensor(r, ka->name, ka->dtype, ka->ndim, shape);
			if (!x)
				return -ENOMEM;
		}
		args[i] = x->t;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'D' },
		{ "in", required_argument, NULL, 'i' },
		{ "out", required_argument, NULL, 'o' },
		{ "stream-priority", required_argument, NULL, 'p' },
		{ "no-tiling", no_argument, NULL, 'T' },
		{ "progress", no_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dev = NULL, *plan_path;	/* NULL: FLEX_DEVICE, else /dev/flex0 */
	struct io ins[MAX_IO], outs[MAX_IO];
	unsigned int n_in = 0, n_out = 0;
	int prio = -1, c, ret = 1, err;
	uint32_t launch_flags = 0;
	struct flex_loaded_plan *lp = NULL;
	struct flex_manifest *m = NULL;
	struct flex_stream_stats st;
	struct run r;
	char msg[1024];
	double t0, t_load, t_h2d, t_run, t_d2h;

	memset(&r, 0, sizeof(r));
	r.progress = isatty(2);
	tool_set_name("flex-run");
	while ((c = getopt_long(argc, argv, "D:i:o:p:TPqh", opts, NULL)) != -1) {
		switch (c) {
		case 'D':
			dev = optarg;
			break;
		case 'i':
		case 'o':
			if ((c == 'i' ? n_in : n_out) == MAX_IO ||
			    parse_io(optarg, c == 'i' ? &ins[n_in] : &outs[n_out])) {
				tool_err("bad --%s \"%s\" (NAME=FILE.npy)", c == 'i' ? "in" : "out",
					 optarg);
				return 2;
			}
			if (c == 'i')
				n_in++;
			else
				n_out++;
			break;
		case 'p':
			if (!strcmp(optarg, "low"))
				prio = FLEX_STREAM_PRIO_LOW;
			else if (!strcmp(optarg, "normal"))
				prio = FLEX_STREAM_PRIO_NORMAL;
			else if (!strcmp(optarg, "high"))
				prio = FLEX_STREAM_PRIO_HIGH;
			else {
				tool_err("bad priority \"%s\" (low, normal, high)", optarg);
				return 2;
			}
			break;
		case 'T':
			launch_flags |= FLEX_LAUNCH_NO_TILING;
			break;
		case 'P':
			r.progress = 1;
			break;
		case 'q':
			r.quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	plan_path = argv[optind];

	/* Parse first: a bad plan needs no device. */
	t0 = now();
	err = flex_manifest_new_from_file(plan_path, &m);
	if (err) {
		tool_err("%s", flex_last_error());
		return 1;
	}
	/* Every --in and --out must name an argument of some job. */
	for (unsigned int k = 0; k < n_in + n_out; k++) {
		const char *name = k < n_in ? ins[k].name : outs[k - n_in].name;
		int found = 0;

		for (uint32_t i = 0; i < flex_manifest_n_jobs(m); i++)
			found |= flex_manifest_arg_index(flex_manifest_job(m, i), name) >= 0;
		if (!found) {
			tool_err("%s: no job has an argument named %s", plan_path, name);
			goto out;
		}
	}

	err = flex_context_new_from_path(dev, &r.ctx);
	if (err) {
		tool_err("%s", flex_last_error());
		goto out;
	}
	if (prio >= 0) {
		err = flex_stream_new(r.ctx, prio, &r.s);
		if (err) {
			tool_err("creating a stream: %s", flex_last_error());
			goto out;
		}
	} else {
		r.s = flex_context_default_stream(r.ctx);
	}
	err = flex_loaded_plan_new(r.ctx, m, r.s, &lp);
	if (err) {
		tool_err("%s", flex_last_error());
		goto out;
	}
	t_load = now() - t0;

	/* Inputs to the device. */
	t0 = now();
	for (unsigned int k = 0; k < n_in; k++) {
		struct npy_array a;
		struct tensor *x;

		if (find_tensor(&r, ins[k].name)) {
			tool_err("--in %s given twice", ins[k].name);
			goto out;
		}
		err = npy_read(ins[k].path, &a, msg, sizeof(msg));
		if (err) {
			tool_err("--in %s: %s", ins[k].name, msg);
			goto out;
		}
		x = new_tensor(&r, ins[k].name, a.dtype, a.ndim, a.shape);
		if (!x) {
			npy_free(&a);
			goto out;
		}
		x->host = a;
		x->is_input = 1;
		if (copy(&r, x, 1))
			goto out;
	}
	if (sync_stream(&r, "copying the inputs", t0))
		goto out;
	t_h2d = now() - t0;

	/* Every job, in plan order. */
	t0 = now();
	for (uint32_t i = 0; i < flex_manifest_n_jobs(m); i++) {
		const struct flex_manifest_job *j = flex_manifest_job(m, i);
		struct flex_tensor args[FLEX_KERNEL_MAX_ARGS];

		if (job_args(&r, j, args))
			goto out;
		err = flex_stream_launch(r.s, flex_plan_job(flex_loaded_plan_plan(lp), i), args,
					 j->sig.n_args, launch_flags);
		if (err) {
			tool_err("launching job \"%s\": %s", j->name,
				 flex_last_error());
			goto out;
		}
	}
	if (sync_stream(&r, "running the plan", t0))
		goto out;
	t_run = now() - t0;

	/* Outputs back. */
	t0 = now();
	for (unsigned int k = 0; k < n_out; k++) {
		struct tensor *x = find_tensor(&r, outs[k].name);

		if (!x) {
			tool_err("--out %s: no tensor of that name was made", outs[k].name);
			goto out;
		}
		if (!x->host.data) {
			x->host.dtype = x->t.dtype;
			x->host.ndim = x->t.ndim;
			memcpy(x->host.shape, x->t.shape, sizeof(x->host.shape));
			x->host.nbytes = x->nbytes;
			x->host.data = malloc(x->nbytes ? x->nbytes : 1);
			if (!x->host.data) {
				char size[TOOL_SIZE_LEN];

				tool_err("--out %s: out of memory for %s", outs[k].name,
					 tool_size(size, sizeof(size), x->nbytes));
				goto out;
			}
		}
		if (copy(&r, x, 0))
			goto out;
	}
	if (sync_stream(&r, "copying the outputs", t0))
		goto out;
	for (unsigned int k = 0; k < n_out; k++) {
		struct tensor *x = find_tensor(&r, outs[k].name);

		if (npy_write(outs[k].path, &x->host, msg, sizeof(msg))) {
			tool_err("--out %s: %s", outs[k].name, msg);
			goto out;
		}
	}
	t_d2h = now() - t0;

	flex_stream_get_stats(r.s, &st);
	if (!r.quiet)
		tool_msg(stderr, "%s: %u jobs; load %.3f s, h2d %.3f s, launch+sync %.3f s, "
			 "d2h %.3f s; %llu tiles, %llu CBs", plan_path, flex_manifest_n_jobs(m),
			 t_load, t_h2d, t_run, t_d2h, (unsigned long long)st.tiles,
			 (unsigned long long)st.cbs);
	ret = 0;
out:
	if (r.s)
		flex_stream_synchronize(r.s, NULL);
	for (unsigned int i = 0; i < r.n_tensors; i++) {
		flex_alloc_block_free(flex_context_allocator(r.ctx), r.tensors[i].t.index);
		npy_free(&r.tensors[i].host);
	}
	flex_loaded_plan_destroy(lp);
	if (r.s && r.s != flex_context_default_stream(r.ctx))
		flex_stream_destroy(r.s);
	flex_context_destroy(r.ctx);
	flex_manifest_destroy(m);
	return ret;
}
