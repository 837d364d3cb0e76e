// SPDX-License-Identifier: GPL-2.0
/*
 * flex-demo: the main job, run inside the VM by `make demo`.
 *
 * In PF mode (/dev/flex0) and then in VF mode (a VF enabled through sysfs,
 * /dev/flex0vf0), a real pipeline:
 *
 *  1. the "compiler" (flex-plan-gen, next to this binary) writes an int32
 *     matmul plan for 64x64x64 tiles; it is parsed and loaded: the binary
 *     goes to a program allocation by DMA;
 *  2. stream 1 copies A [256x192] and B [192x128] to the device and
 *     launches C = A.B, tiled 4 x 2 x 3 (k accumulating on the device);
 *  3. an event recorded on stream 1 is waited for by stream 2, which
 *     launches D = C.W with the same job (tiled 4 x 1 x 2) and copies D back;
 *  4. D is checked against a CPU reference, and the demo prints the
 *     regions and blocks used, tiles and control blocks, times, and the
 *     allocator's memory report.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <flex/allocator.h>
#include <flex/context.h>
#include <flex/device.h>
#include <flex/job.h>
#include <flex/manifest.h>
#include <flex/stream.h>

#include "tool.h"

#define SYSFS	"/sys/class/flex/flex0"
#define GiB	(1ULL << 30)
#define TILE	64

/* Problem sizes: several tiles along every axis. */
#define M	256
#define K	192
#define N	128
#define P	64

extern char **environ;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_attr(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(val, f) < 0)
		err = -errno;
	if (fclose(f))
		err = -errno;
	return err;
}

static void read_attr(const char *name, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), SYSFS "/%s", name);
	f = fopen(path, "r");
	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* A writable scratch directory: the VM's output directory, else /tmp. */
static int make_workdir(char *dir, size_t len)
{
	const char *cands[] = { getenv("FLEX_VM_OUT"), getenv("TMPDIR"), "/dev/shm", "/tmp" };

	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++) {
		if (!cands[i])
			continue;
		snprintf(dir, len, "%s/flex-demo-XXXXXX", cands[i]);
		if (mkdtemp(dir))
			return 0;
	}
	return -errno;
}

/* Run flex-plan-gen (installed next to this program) to compile the plan. */
static int compile_plan(const char *dir)
{
	char self[PATH_MAX], gen[PATH_MAX + 16], *slash;
	char *argv[] = { gen, "matmul", "--dtype", "int32", "--tile", "64x64x64", "-o",
			 (char *)dir, NULL };
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	pid_t pid;
	int st;

	if (n <= 0)
		return -errno;
	self[n] = 0;
	slash = strrchr(self, '/');
	*slash = 0;
	snprintf(gen, sizeof(gen), "%s/flex-plan-gen", self);
	fflush(stdout);
	if (posix_spawn(&pid, gen, NULL, NULL, argv, environ)) {
		tool_err("cannot run %s", gen);
		return -ENOENT;
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		return -EIO;
	return 0;
}

struct dev_tensor {
	const char *name;
	struct flex_tensor t;
	int32_t *host;
	uint64_t bytes;
};

static int tensor_new(struct flex_context *ctx, struct dev_tensor *x, const char *name,
		      uint64_t rows, uint64_t cols)
{
	memset(x, 0, sizeof(*x));
	x->name = name;
	x->t.dtype = FLEX_DTYPE_INT32;
	x->t.ndim = 2;
	x->t.shape[0] = rows;
	x->t.shape[1] = cols;
	x->t.strides[0] = cols;
	x->t.strides[1] = 1;
	x->bytes = rows * cols * 4;
	x->host = calloc(rows * cols, 4);
	if (!x->host)
		return -ENOMEM;
	if (flex_alloc_block_alloc(flex_context_allocator(ctx), x->bytes, FLEX_ALLOC_TENSOR,
			     &x->t.index)) {
		tool_err("tensor %s: %s", name, flex_last_error());
		return -ENOMEM;
	}
	return 0;
}

static void fill(struct dev_tensor *x, uint32_t seed)
{
	uint64_t n = x->t.shape[0] * x->t.shape[1];

	for (uint64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		x->host[i] = (int32_t)((seed >> 16) % 17) - 8;
	}
}

/* out[r x c] = a[r x k] . b[k x c], wrapping like the device. */
static void cpu_matmul(int32_t *out, const int32_t *a, const int32_t *b, int r, int k, int c)
{
	for (int i = 0; i < r; i++)
		for (int j = 0; j < c; j++) {
			uint32_t s = 0;

			for (int q = 0; q < k; q++)
				s += (uint32_t)a[i * k + q] * (uint32_t)b[q * c + j];
			out[i * c + j] = (int32_t)s;
		}
}

static int blocks_fn(void *user, const struct flex_alloc_block_info *b)
{
	unsigned int *n = user;

	if (!b->is_free)
		n[b->kind == FLEX_ALLOC_PROGRAM]++;
	return 0;
}

/* The allocator's summary report, indented under the function's heading. */
static void print_report(struct flex_alloc *a)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	flex_alloc_report(a, f, FLEX_ALLOC_REPORT_SUMMARY);
	fclose(f);
	printf("  memory report:\n");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		printf("    %s\n", line);
	free(buf);
}

static int check_err(int err, const char *what, struct flex_stream_error *se)
{
	if (err)
		tool_err("%s: %s", what,
			 se && se->message[0] ? se->message : flex_last_error());
	return err;
}

static int run_function(const char *path)
{
	struct flex_alloc_config cfg;
	struct flex_context *ctx = NULL;
	struct flex_device *dev = NULL;
	struct flex_stream *s1 = NULL, *s2 = NULL;
	struct flex_event *ev = NULL;
	struct flex_manifest *m = NULL;
	struct flex_loaded_plan *lp = NULL;
	struct dev_tensor A, B, W, C, D;
	struct dev_tensor *all[] = { &A, &B, &W, &C, &D };
	struct flex_stream_stats st1, st2;
	struct flex_stream_error se;
	struct flex_alloc_stats as;
	struct flex_query q;
	struct flex_vaddr va;
	const struct flex_job *job;
	struct flex_tensor args[3];
	unsigned int blocks[2] = { 0, 0 };
	char dir[PATH_MAX], plan[PATH_MAX + 16], size[TOOL_SIZE_LEN];
	double t0, t_load, t_h2d, t_run;
	int32_t *refc = NULL, *refd = NULL;
	uint64_t bad = 0;
	int err;

	for (size_t i = 0; i < 5; i++)
		memset(all[i], 0, sizeof(A));

	err = flex_device_new(path, &dev);
	if (err) {
		tool_err("open %s: %s", path, strerror(-err));
		return err;
	}
	flex_device_query(dev, &q);
	printf("\n== %s: %s mode, %s device memory, %u lookup-table entries\n", path,
	       q.mode == FLEX_MODE_VF ? "VF" : "PF", tool_size(size, sizeof(size), q.capacity),
	       q.table_entries);

	/*
	 * The demo's tensors are small: fill-first packs them into one 4 GiB
	 * region (the default load balancing would spread them over several).
	 */
	flex_alloc_config_init(&cfg);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	cfg.num_fallback_sizes = 2;
	cfg.fallback_sizes[0] = 4 * GiB;
	cfg.fallback_sizes[1] = 1 * GiB;
	err = flex_context_new(dev, &cfg, &ctx);
	flex_device_unref(dev);
	if (check_err(err, "context", NULL))
		return err;
	err = flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s1);
	if (!err)
		err = flex_stream_new(ctx, FLEX_STREAM_PRIO_HIGH, &s2);
	if (!err)
		err = flex_event_new(0, &ev);
	if (check_err(err, "streams", NULL))
		goto out;

	/* 1. Compile and load the plan. */
	t0 = now_s();
	err = make_workdir(dir, sizeof(dir));
	if (!err)
		err = compile_plan(dir);
	if (err) {
		tool_err("compiling the plan: %s", strerror(-err));
		goto out;
	}
	snprintf(plan, sizeof(plan), "%s/plan.json", dir);
	err = flex_manifest_new_from_file(plan, &m);
	if (!err)
		err = flex_loaded_plan_new(ctx, m, s1, &lp);
	if (err) {
		tool_err("%s", flex_last_error());
		goto out;
	}
	t_load = now_s() - t0;
	job = flex_plan_job(flex_loaded_plan_plan(lp), 0);
	flex_alloc_block_resolve(flex_context_allocator(ctx), flex_loaded_plan_binary(lp, 0), &va, NULL);
	printf("  plan %s: job \"%s\", %zu-byte binary loaded at region 0x%" PRIx64
	       " offset 0x%" PRIx64 " (a program allocation, top of the region)\n",
	       plan, flex_job_name(job), flex_manifest_job(m, 0)->binary_size, va.region_id,
	       va.offset);

	/* 2. Tensors, inputs to the device on stream 1. */
	err = tensor_new(ctx, &A, "A", M, K) ?: tensor_new(ctx, &B, "B", K, N) ?:
	      tensor_new(ctx, &W, "W", N, P) ?: tensor_new(ctx, &C, "C", M, N) ?:
	      tensor_new(ctx, &D, "D", M, P);
	if (err)
		goto out;
	fill(&A, 1);
	fill(&B, 2);
	fill(&W, 3);
	t0 = now_s();
	err = flex_stream_copy(s1, 1, A.t.index, 0, A.host, A.bytes) ?:
	      flex_stream_copy(s1, 1, B.t.index, 0, B.host, B.bytes) ?:
	      flex_stream_copy(s1, 1, W.t.index, 0, W.host, W.bytes);
	if (check_err(err, "copy to the device", NULL))
		goto out;
	err = flex_stream_synchronize(s1, &se);
	if (check_err(err, "copy to the device", &se))
		goto out;
	t_h2d = now_s() - t0;

	/* 3. C = A.B on stream 1; event; D = C.W on stream 2; D back on stream 2. */
	t0 = now_s();
	args[0] = A.t;
	args[1] = B.t;
	args[2] = C.t;
	err = flex_stream_launch(s1, job, args, 3, 0);
	if (check_err(err, "launch C = A.B on stream 1", NULL))
		goto out;
	err = flex_event_record(ev, s1) ?: flex_stream_wait_event(s2, ev);
	if (check_err(err, "event", NULL))
		goto out;
	args[0] = C.t;
	args[1] = W.t;
	args[2] = D.t;
	err = flex_stream_launch(s2, job, args, 3, 0);
	if (check_err(err, "launch D = C.W on stream 2", NULL))
		goto out;
	err = flex_stream_copy(s2, 0, D.t.index, 0, D.host, D.bytes);
	if (check_err(err, "copy D back", NULL))
		goto out;
	err = flex_stream_synchronize(s2, &se);
	if (check_err(err, "stream 2", &se))
		goto out;
	err = flex_stream_synchronize(s1, &se);
	if (check_err(err, "stream 1", &se))
		goto out;
	t_run = now_s() - t0;

	/* 4. Check and report. */
	refc = malloc(sizeof(int32_t) * M * N);
	refd = malloc(sizeof(int32_t) * M * P);
	if (!refc || !refd) {
		err = -ENOMEM;
		goto out;
	}
	cpu_matmul(refc, A.host, B.host, M, K, N);
	cpu_matmul(refd, refc, W.host, M, N, P);
	for (int i = 0; i < M * P; i++)
		bad += refd[i] != D.host[i];
	flex_stream_get_stats(s1, &st1);
	flex_stream_get_stats(s2, &st2);
	printf("  stream 1 (normal): C[%dx%d] = A[%dx%d].B[%dx%d]: %llu tiles, %llu CBs in %llu submits\n",
	       M, N, M, K, K, N, (unsigned long long)st1.tiles, (unsigned long long)st1.cbs,
	       (unsigned long long)st1.submits);
	printf("  stream 2 (high), after an event on stream 1: D[%dx%d] = C.W[%dx%d]: %llu tiles, "
	       "%llu CBs in %llu submits\n", M, P, N, P, (unsigned long long)st2.tiles,
	       (unsigned long long)st2.cbs, (unsigned long long)st2.submits);
	printf("  result D checked against the CPU: %s (%d elements, D[0][0] = %d, D[%d][%d] = %d)\n",
	       bad ? "MISMATCH" : "all equal", M * P, D.host[0], M - 1, P - 1,
	       D.host[M * P - 1]);
	if (bad) {
		tool_err("%llu of %d elements differ", (unsigned long long)bad,
			 M * P);
		err = -EIO;
	}
	flex_alloc_get_stats(flex_context_allocator(ctx), &as);
	flex_alloc_walk(flex_context_allocator(ctx), blocks_fn, blocks);
	printf("  memory: %u region(s); live blocks: %u tensor (A, B, W, C, D and the two streams' "
	       "correction slots), %u program; %s allocated\n", as.num_regions, blocks[0], blocks[1],
	       tool_size(size, sizeof(size), as.allocated_bytes));
	printf("  time: plan compile+load %.1f ms, h2d %.1f ms, launch+event+sync+d2h %.1f ms\n",
	       t_load * 1e3, t_h2d * 1e3, t_run * 1e3);
	print_report(flex_context_allocator(ctx));

out:
	if (s1)
		flex_stream_synchronize(s1, NULL);
	if (s2)
		flex_stream_synchronize(s2, NULL);
	for (size_t i = 0; i < 5; i++) {
		if (all[i]->t.index)
			flex_alloc_block_free(flex_context_allocator(ctx), all[i]->t.index);
		free(all[i]->host);
	}
	flex_loaded_plan_destroy(lp);
	flex_manifest_destroy(m);
	flex_event_destroy(ev);
	flex_stream_destroy(s2);
	flex_stream_destroy(s1);
	flex_context_destroy(ctx);
	free(refc);
	free(refd);
	return err;
}

int main(void)
{
	char cap[32], numvfs[8];
	double t0 = now_s();
	int err, err2;

	tool_set_name("flex-demo");
	read_attr("capacity", cap, sizeof(cap));
	read_attr("sriov_numvfs", numvfs, sizeof(numvfs));
	printf("flex demo: a compiled, tiled int32 matmul pipeline on two streams, PF and VF mode\n"
	       "  device flex0: capacity %s bytes, sriov_numvfs %s\n", cap, numvfs);
	err = run_function("/dev/flex0");
	if (!err) {
		err = write_attr(SYSFS "/sriov_numvfs", "1");
		if (err)
			tool_err("enable a VF: %s", strerror(-err));
		else
			printf("\n  enabled a VF: echo 1 > " SYSFS "/sriov_numvfs\n");
	}
	if (!err)
		err = run_function("/dev/flex0vf0");
	err2 = write_attr(SYSFS "/sriov_numvfs", "0");
	if (!err)
		err = err2;
	printf("\nflex demo: %s in %.1f s\n", err ? "FAILED" : "done", now_s() - t0);
	return err ? 1 : 0;
}
