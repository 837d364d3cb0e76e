// SPDX-License-Identifier: GPL-2.0
/*
 * Plans against the real driver: loading a manifest (binaries in program
 * allocations, byte for byte), loading errors (no program memory left, a
 * poisoned stream), a plan whose correction makes the device fault (the
 * stream error names the job, the step and the fault), and the tools end
 * to end: flex-plan-gen writes a plan, flex-run runs it on .npy inputs
 * several tiles large, and the output equals a CPU reference.
 *
 * The tools are found next to the test's build directory
 * (BUILD/flex-plan-gen, BUILD/flex-run); the end-to-end cases skip when
 * they were not built.
 */
#include <limits.h>
#include <stdint.h>
#include <sys/wait.h>

#include <flex/context.h>
#include <flex/job.h>
#include <flex/manifest.h>
#include <flex/program.h>
#include <flex/stream.h>

#include "kselftest_harness.h"
#include "flex_test.h"

/* flex-run's .npy code, to write its inputs and read its outputs. */
#include "../../tools/flex-run/npy.c"

/* ---- helpers ---- */

static struct flex_context *open_ctx(struct __test_metadata *_metadata, uint64_t region,
				     unsigned int fixed)
{
	struct flex_alloc_config cfg;
	struct flex_context *ctx = NULL;
	struct flex_device *dev;

	flex_alloc_config_init(&cfg);
	cfg.num_fallback_sizes = 1;
	cfg.fallback_sizes[0] = region;
	cfg.fixed_regions = fixed;
	cfg.max_regions = fixed ? fixed : 12;
	EXPECT_EQ(0, flex_device_new(FLEX_PF, &dev));
	EXPECT_EQ(0, flex_context_new(dev, &cfg, &ctx)) TH_LOG("%s", flex_last_error());
	flex_device_unref(dev);
	return ctx;
}

/* A writable scratch directory (the VM's output directory, else /tmp). */
static void scratch_dir(char *dir, size_t len)
{
	const char *base = getenv("FLEX_VM_OUT");

	snprintf(dir, len, "%s/plan-test-XXXXXX", base ? base : "/tmp");
	if (!mkdtemp(dir))
		dir[0] = 0;
}

/* BUILD/<tool>, from this binary's path BUILD/kselftest/<name>; "" if absent. */
static void tool_path(char *out, size_t len, const char *tool)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	out[0] = 0;
	if (n <= 0)
		return;
	self[n] = 0;
	slash = strrchr(self, '/');
	if (!slash)
		return;
	*slash = 0;
	if (snprintf(out, len, "%s/../%s", self, tool) >= (int)len || access(out, X_OK))
		out[0] = 0;
}

/* Run a shell command, capturing its output into @buf; returns its exit code. */
static int run_cmd(const char *cmd, char *buf, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t got = 0;
	int st;

	if (!p)
		return -1;
	while (got + 1 < len) {
		size_t n = fread(buf + got, 1, len - 1 - got, p);

		if (!n)
			break;
		got += n;
	}
	buf[got] = 0;
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Write a plan with one matmul job whose correction is @corr (JSON). */
static void write_matmul_plan(struct __test_metadata *_metadata, const char *dir,
			      const char *corr)
{
	struct flex_kernel *k;
	char path[PATH_MAX];
	FILE *f;

	ASSERT_EQ(0, flex_kernel_new_matmul(FLEX_DTYPE_INT32, 16, 16, 16, &k));
	snprintf(path, sizeof(path), "%s/mm.bin", dir);
	ASSERT_EQ(0, flex_program_write_file(path, k->binary, k->binary_size));
	flex_kernel_destroy(k);
	snprintf(path, sizeof(path), "%s/plan.json", dir);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fprintf(f,
		"{\"format\": \"flex-plan\", \"version\": 1, \"jobs\": [{\n"
		" \"name\": \"mm\", \"binary\": \"mm.bin\",\n"
		" \"args\": [{\"name\": \"A\", \"dtype\": \"int32\", \"shape\": [16, 16], \"axes\": [\"m\", \"k\"]},\n"
		"          {\"name\": \"B\", \"dtype\": \"int32\", \"shape\": [16, 16], \"axes\": [\"k\", \"n\"]},\n"
		"          {\"name\": \"C\", \"dtype\": \"int32\", \"shape\": [16, 16], \"axes\": [\"m\", \"n\"], \"output\": true}],\n"
		" \"reduction_axes\": [\"k\"],\n"
		" \"correction\": [%s],\n"
		" \"plan\": [\"host_op\", \"dma_correction\", \"compute\"]}]}\n",
		corr);
	fclose(f);
}

#define GOOD_CORR                                                                         \
	"{\"kind\": \"address\", \"arg\": \"A\"}, {\"kind\": \"address\", \"arg\": \"B\"}, " \
	"{\"kind\": \"address\", \"arg\": \"C\"}, {\"kind\": \"stride\", \"arg\": \"C\", \"dim\": 0}, " \
	"{\"kind\": \"stride\", \"arg\": \"A\", \"dim\": 0}, {\"kind\": \"stride\", \"arg\": \"B\", \"dim\": 0}, " \
	"{\"kind\": \"accumulate\"}"

static void fill_matrix(int32_t *m, uint64_t n, uint32_t seed)
{
	for (uint64_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		m[i] = (int32_t)((seed >> 16) % 21) - 10;
	}
}

/* ---- loading ---- */

TEST(loaded_binaries_are_program_allocations_holding_the_bytes)
{
	struct flex_context *ctx = open_ctx(_metadata, 64 * MiB, 0);
	struct flex_loaded_plan *lp = NULL;
	struct flex_manifest *m = NULL;
	char dir[PATH_MAX], gen[PATH_MAX], cmd[3 * PATH_MAX], out[4096], path[PATH_MAX + 16];

	ASSERT_NE(NULL, ctx);
	tool_path(gen, sizeof(gen), "flex-plan-gen");
	if (!gen[0]) {
		flex_context_destroy(ctx);
		SKIP(return, "flex-plan-gen not built (make tools)");
	}
	scratch_dir(dir, sizeof(dir));
	ASSERT_NE(0, dir[0]);
	snprintf(cmd, sizeof(cmd),
		 "%s matmul --tile 32x32x32 matmul --dtype int8 --tile 16x32x64 relu --tile 8x8 -o %s 2>&1",
		 gen, dir);
	ASSERT_EQ(0, run_cmd(cmd, out, sizeof(out))) TH_LOG("%s", out);
	snprintf(path, sizeof(path), "%s/plan.json", dir);
	ASSERT_EQ(0, flex_manifest_new_from_file(path, &m)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(3, flex_manifest_n_jobs(m));
	ASSERT_EQ(0, flex_loaded_plan_new(ctx, m, NULL, &lp)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(3, flex_plan_n_jobs(flex_loaded_plan_plan(lp)));

	for (uint32_t i = 0; i < 3; i++) {
		const struct flex_manifest_job *j = flex_manifest_job(m, i);
		struct flex_job *job = flex_plan_job(flex_loaded_plan_plan(lp), i);
		flex_alloc_index_t bin = flex_loaded_plan_binary(lp, i);
		struct flex_vaddr va;
		uint64_t size, len;
		void *map;

		EXPECT_STREQ(j->name, flex_job_name(job));
		EXPECT_EQ(bin, flex_job_binary(job));
		EXPECT_EQ(1, flex_job_is_kernel(job));
		ASSERT_EQ(0, flex_alloc_block_resolve(flex_context_allocator(ctx), bin, &va, &size));
		/* Program allocations are carved top-down: in the region's last MiB. */
		EXPECT_GE(va.offset, 63 * MiB) TH_LOG("job %s: binary at offset 0x%llx", j->name,
						      (unsigned long long)va.offset);
		EXPECT_GE(size, j->binary_size);
		/* The DMA put exactly the binary there. */
		ASSERT_EQ(0, flex_device_region_mmap(flex_context_device(ctx), va.region_id,
						     PROT_READ, &map, &len));
		EXPECT_EQ(0, memcmp((char *)map + va.offset, j->binary, j->binary_size))
			TH_LOG("job %s: device bytes differ from %s", j->name, j->binary_path);
		munmap(map, len);
	}
	flex_loaded_plan_destroy(lp);
	flex_manifest_destroy(m);
	flex_context_destroy(ctx);
}

TEST(load_fails_cleanly_without_program_memory)
{
	struct flex_context *ctx = open_ctx(_metadata, 2 * MiB, 1);
	struct flex_alloc *a;
	struct flex_alloc_stats before, after;
	struct flex_loaded_plan *lp = NULL;
	struct flex_manifest *m = NULL;
	flex_alloc_index_t fill[64];
	char dir[PATH_MAX], path[PATH_MAX + 16];
	int n = 0;

	ASSERT_NE(NULL, ctx);
	a = flex_context_allocator(ctx);
	scratch_dir(dir, sizeof(dir));
	ASSERT_NE(0, dir[0]);
	write_matmul_plan(_metadata, dir, GOOD_CORR);
	snprintf(path, sizeof(path), "%s/plan.json", dir);
	ASSERT_EQ(0, flex_manifest_new_from_file(path, &m)) TH_LOG("%s", flex_last_error());

	/* Take every block of the one 2 MiB region. */
	while (n < 64 && !flex_alloc_block_alloc(a, 64 * 1024, FLEX_ALLOC_TENSOR, &fill[n]))
		n++;
	while (n < 64 && !flex_alloc_block_alloc(a, 128, FLEX_ALLOC_TENSOR, &fill[n]))
		n++;
	ASSERT_LT(n, 64);
	flex_alloc_get_stats(a, &before);
	EXPECT_EQ(-ENOMEM, flex_loaded_plan_new(ctx, m, NULL, &lp));
	EXPECT_NE(NULL, strstr(flex_last_error(), "plan.json: job \"mm\": binary: allocating 288 bytes"))
		TH_LOG("message: %s", flex_last_error());
	flex_alloc_get_stats(a, &after);
	EXPECT_EQ(before.num_live_blocks, after.num_live_blocks);

	/* Room again: the same manifest loads. */
	for (int i = 0; i < n; i++)
		flex_alloc_block_free(a, fill[i]);
	ASSERT_EQ(0, flex_loaded_plan_new(ctx, m, NULL, &lp)) TH_LOG("%s", flex_last_error());
	flex_loaded_plan_destroy(lp);
	flex_manifest_destroy(m);
	flex_context_destroy(ctx);
}

/* A correction whose ldc (slot 3) is 1 < N: the device faults the compute CB. */
TEST(a_fault_in_a_loaded_job_names_the_job_step_and_fault)
{
	struct flex_context *ctx = open_ctx(_metadata, 64 * MiB, 0);
	struct flex_stream *s = NULL;
	struct flex_loaded_plan *lp = NULL;
	struct flex_manifest *m = NULL;
	struct flex_stream_error se;
	struct flex_tensor t[3];
	char dir[PATH_MAX], path[PATH_MAX + 16];

	ASSERT_NE(NULL, ctx);
	scratch_dir(dir, sizeof(dir));
	ASSERT_NE(0, dir[0]);
	write_matmul_plan(_metadata, dir,
			  "{\"kind\": \"address\", \"arg\": \"A\"}, {\"kind\": \"address\", \"arg\": \"B\"}, "
			  "{\"kind\": \"address\", \"arg\": \"C\"}, {\"kind\": \"const\", \"value\": 1}, "
			  "{\"kind\": \"stride\", \"arg\": \"A\", \"dim\": 0}, {\"kind\": \"stride\", \"arg\": \"B\", \"dim\": 0}, "
			  "{\"kind\": \"accumulate\"}");
	snprintf(path, sizeof(path), "%s/plan.json", dir);
	ASSERT_EQ(0, flex_manifest_new_from_file(path, &m)) TH_LOG("%s", flex_last_error());
	ASSERT_EQ(0, flex_stream_new(ctx, FLEX_STREAM_PRIO_NORMAL, &s));
	ASSERT_EQ(0, flex_loaded_plan_new(ctx, m, s, &lp)) TH_LOG("%s", flex_last_error());
	for (int i = 0; i < 3; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].dtype = FLEX_DTYPE_INT32;
		t[i].ndim = 2;
		t[i].shape[0] = t[i].shape[1] = 32;
		t[i].strides[0] = 32;
		t[i].strides[1] = 1;
		ASSERT_EQ(0, flex_alloc_block_alloc(flex_context_allocator(ctx), 32 * 32 * 4,
					      FLEX_ALLOC_TENSOR, &t[i].index));
	}
	ASSERT_EQ(0, flex_stream_launch(s, flex_plan_job(flex_loaded_plan_plan(lp), 0), t, 3, 0))
		TH_LOG("%s", flex_last_error());
	EXPECT_EQ(-ENOEXEC, flex_stream_synchronize(s, &se));
	EXPECT_STREQ("mm", se.job);
	EXPECT_EQ(FLEX_STEP_COMPUTE, se.step_kind);
	EXPECT_EQ(FLEX_FAULT_BAD_PROGRAM, se.fault_code);
	EXPECT_EQ(0, se.tile);
	TH_LOG("stream error: %s", se.message);

	/* Loading on a poisoned stream fails and leaks nothing. */
	{
		struct flex_loaded_plan *lp2 = NULL;
		struct flex_alloc_stats before, after;

		flex_alloc_get_stats(flex_context_allocator(ctx), &before);
		EXPECT_EQ(-EIO, flex_loaded_plan_new(ctx, m, s, &lp2));
		EXPECT_NE(NULL, strstr(flex_last_error(), "job \"mm\": binary: DMA to the device")) TH_LOG("%s", flex_last_error());
		flex_alloc_get_stats(flex_context_allocator(ctx), &after);
		EXPECT_EQ(before.num_live_blocks, after.num_live_blocks);
	}
	EXPECT_EQ(0, flex_stream_reset(s));
	for (int i = 0; i < 3; i++)
		flex_alloc_block_free(flex_context_allocator(ctx), t[i].index);
	flex_loaded_plan_destroy(lp);
	flex_stream_destroy(s);
	flex_manifest_destroy(m);
	flex_context_destroy(ctx);
}

/* ---- the tools end to end ---- */

static void write_npy(struct __test_metadata *_metadata, const char *path, int32_t *data,
		      uint64_t rows, uint64_t cols)
{
	struct npy_array a = { .dtype = FLEX_DTYPE_INT32, .ndim = 2, .data = data };
	char err[256];

	a.shape[0] = rows;
	a.shape[1] = cols;
	a.nbytes = rows * cols * 4;
	ASSERT_EQ(0, npy_write(path, &a, err, sizeof(err))) TH_LOG("%s", err);
}

TEST(flex_run_matmul_matches_the_cpu)
{
	enum { M = 96, K = 128, N = 64 };	/* tiles 32x32x32: 3 x 2 x 4 */
	static int32_t A[M * K], B[K * N], ref[M * N];
	char gen[PATH_MAX], run[PATH_MAX], dir[PATH_MAX], cmd[8 * PATH_MAX], out[8192];
	char path[PATH_MAX + 16], msg[256];
	struct npy_array c;
	uint64_t bad = 0;

	tool_path(gen, sizeof(gen), "flex-plan-gen");
	tool_path(run, sizeof(run), "flex-run");
	if (!gen[0] || !run[0])
		SKIP(return, "flex-plan-gen or flex-run not built (make tools)");
	scratch_dir(dir, sizeof(dir));
	ASSERT_NE(0, dir[0]);
	snprintf(cmd, sizeof(cmd), "%s matmul --dtype int32 --tile 32x32x32 -o %s/plan 2>&1", gen,
		 dir);
	ASSERT_EQ(0, run_cmd(cmd, out, sizeof(out))) TH_LOG("%s", out);

	fill_matrix(A, M * K, 7);
	fill_matrix(B, K * N, 8);
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			uint32_t s = 0;

			for (int q = 0; q < K; q++)
				s += (uint32_t)A[i * K + q] * (uint32_t)B[q * N + j];
			ref[i * N + j] = (int32_t)s;
		}
	snprintf(path, sizeof(path), "%s/a.npy", dir);
	write_npy(_metadata, path, A, M, K);
	snprintf(path, sizeof(path), "%s/b.npy", dir);
	write_npy(_metadata, path, B, K, N);

	snprintf(cmd, sizeof(cmd),
		 "%s %s/plan/plan.json --in A=%s/a.npy --in B=%s/b.npy --out C=%s/c.npy 2>&1", run,
		 dir, dir, dir, dir);
	ASSERT_EQ(0, run_cmd(cmd, out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "24 tiles")) TH_LOG("summary: %s", out);
	snprintf(path, sizeof(path), "%s/c.npy", dir);
	ASSERT_EQ(0, npy_read(path, &c, msg, sizeof(msg))) TH_LOG("%s", msg);
	ASSERT_EQ(2, c.ndim);
	ASSERT_EQ(M, c.shape[0]);
	ASSERT_EQ(N, c.shape[1]);
	for (int i = 0; i < M * N; i++)
		bad += ((int32_t *)c.data)[i] != ref[i];
	EXPECT_EQ(0, bad) TH_LOG("C[0][0] = %d, expected %d", ((int32_t *)c.data)[0], ref[0]);
	npy_free(&c);

	/* Tiling disallowed: refused, naming the argument and dimension. */
	snprintf(cmd, sizeof(cmd),
		 "%s --no-tiling %s/plan/plan.json --in A=%s/a.npy --in B=%s/b.npy --out C=%s/c2.npy 2>&1",
		 run, dir, dir, dir, dir);
	EXPECT_EQ(1, run_cmd(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "arg 0 (A) dim 0")) TH_LOG("output: %s", out);

	/* A missing input is named. */
	snprintf(cmd, sizeof(cmd), "%s %s/plan/plan.json --in A=%s/a.npy --out C=%s/c3.npy 2>&1",
		 run, dir, dir, dir);
	EXPECT_EQ(1, run_cmd(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "argument B is an input")) TH_LOG("output: %s", out);

	/* A shape that is not a multiple of the tile. */
	snprintf(path, sizeof(path), "%s/b2.npy", dir);
	write_npy(_metadata, path, B, K - 8, N);
	snprintf(cmd, sizeof(cmd),
		 "%s %s/plan/plan.json --in A=%s/a.npy --in B=%s/b2.npy --out C=%s/c4.npy 2>&1", run,
		 dir, dir, dir, dir);
	EXPECT_EQ(1, run_cmd(cmd, out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "arg 1 (B) dim 0")) TH_LOG("output: %s", out);
}

TEST_HARNESS_MAIN
