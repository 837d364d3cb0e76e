// SPDX-License-Identifier: GPL-2.0
/*
 * tiled_matmul.c - the worked example of Documentation/flex/libflex.rst.
 *
 * C[96 x 64] = A[96 x 80] . B[80 x 64] in int32 with a kernel compiled for a
 * 32 x 32 x 16 tile: one launch runs 3 (m) x 2 (n) x 5 (k) = 30 tiles, the
 * k tiles of each output tile accumulating. The tests build and run this
 * file in the VM (tests/kselftest/examples.sh), so it stays true.
 *
 *   usage: tiled_matmul [/dev/flexN]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <flex/context.h>
#include <flex/job.h>
#include <flex/program.h>
#include <flex/stream.h>

enum { M = 96, N = 64, K = 80, TM = 32, TN = 32, TK = 16 };

static int fail(const char *what, int err)
{
	fprintf(stderr, "tiled_matmul: %s: %s (%s)\n", what, strerror(-err),
		flex_last_error());
	return 1;
}

/* A row-major 2-D int32 tensor living at offset 0 of allocation @index. */
static struct flex_tensor tensor_2d(flex_alloc_index_t index, uint64_t rows, uint64_t cols)
{
	struct flex_tensor t = {
		.index = index, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
		.shape = { rows, cols }, .strides = { cols, 1 },
	};
	return t;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/flex0";
	static int32_t a[M * K], b[K * N], c[M * N];
	struct flex_context *ctx;
	struct flex_kernel *kern;
	struct flex_job *job;
	struct flex_stream_error serr;
	struct flex_stream_stats st;
	flex_alloc_index_t prog, da, db, dc;
	struct flex_alloc *alloc;
	struct flex_stream *s;
	int i, j, k, err, bad = 0;

	for (i = 0; i < M * K; i++)
		a[i] = i % 7 - 3;
	for (i = 0; i < K * N; i++)
		b[i] = i % 5 - 2;

	/* 1. A context: the device, a FlexAllocator on it, a default stream. */
	err = flex_context_new_from_path(path, &ctx);
	if (err)
		return fail(path, err);
	alloc = flex_context_allocator(ctx);
	s = flex_context_default_stream(ctx);

	/*
	 * 2. "Compile" a tile kernel and load its binary (a FLEX_ALLOC_PROGRAM
	 * allocation, placed top-down away from tensors). A real compiler's
	 * output comes as a manifest instead: flex_manifest_new_from_file(),
	 * then flex_loaded_plan_new().
	 */
	err = flex_kernel_new_matmul(FLEX_DTYPE_INT32, TM, TN, TK, &kern);
	if (err)
		return fail("matmul kernel", err);
	err = flex_context_load_program(ctx, kern->binary, kern->binary_size, &prog);
	if (err)
		return fail("load program", err);

	/* 3. Tensors: allocations, then DMA-only jobs on the stream. */
	if ((err = flex_alloc_block_alloc(alloc, sizeof(a), FLEX_ALLOC_TENSOR, &da)) ||
	    (err = flex_alloc_block_alloc(alloc, sizeof(b), FLEX_ALLOC_TENSOR, &db)) ||
	    (err = flex_alloc_block_alloc(alloc, sizeof(c), FLEX_ALLOC_TENSOR, &dc)))
		return fail(flex_last_error(), err);
	if ((err = flex_stream_copy(s, 1, da, 0, a, sizeof(a))) ||
	    (err = flex_stream_copy(s, 1, db, 0, b, sizeof(b))))
		return fail("copy to device", err);

	/*
	 * 4. The kernel job: binary + signature + correction metadata, and
	 * the JobPlan HostOperation (the correction builder) -> DMA of the
	 * correction tensor -> DeviceCompute.
	 */
	struct flex_step plan[] = {
		flex_step_host_op(NULL, NULL),
		flex_step_simple(FLEX_STEP_DMA_CORRECTION),
		flex_step_simple(FLEX_STEP_COMPUTE),
	};
	err = flex_job_new_kernel("matmul", prog, &kern->sig, kern->corr, kern->n_corr,
				  plan, 3, &job);
	if (err)
		return fail("job", err);

	/*
	 * 5. Launch with the full-size tensors: the shapes exceed the tile,
	 * so the stream runs one HostOperation and two CBs per tile. The call
	 * returns at once; the copy back is queued behind it (FIFO).
	 */
	struct flex_tensor args[3] = {
		tensor_2d(da, M, K), tensor_2d(db, K, N), tensor_2d(dc, M, N),
	};
	err = flex_stream_launch(s, job, args, 3, 0);
	if (err)
		return fail("launch", err);
	err = flex_stream_copy(s, 0, dc, 0, c, sizeof(c));
	if (err)
		return fail("copy from device", err);

	/* 6. Wait. A device fault would come back here, naming job, step, tile. */
	err = flex_stream_synchronize(s, &serr);
	if (err) {
		fprintf(stderr, "tiled_matmul: %s\n", serr.message);
		return 1;
	}

	for (i = 0; i < M; i++) {
		for (j = 0; j < N; j++) {
			int32_t want = 0;

			for (k = 0; k < K; k++)
				want += a[i * K + k] * b[k * N + j];
			if (c[i * N + j] != want && bad++ < 5)
				fprintf(stderr, "C[%d][%d]: expected %d, got %d\n", i, j,
					want, c[i * N + j]);
		}
	}
	flex_stream_get_stats(s, &st);
	printf("tiled_matmul: C[%dx%d] = A[%dx%d].B[%dx%d], tile %dx%dx%d: %llu tiles, "
	       "%llu CBs in %llu submits: %s\n", M, N, M, K, K, N, TM, TN, TK,
	       (unsigned long long)st.tiles, (unsigned long long)st.cbs,
	       (unsigned long long)st.submits, bad ? "WRONG" : "matches the CPU");

	flex_job_destroy(job);
	flex_alloc_block_free(alloc, da);
	flex_alloc_block_free(alloc, db);
	flex_alloc_block_free(alloc, dc);
	flex_alloc_block_free(alloc, prog);
	flex_kernel_destroy(kern);
	flex_context_destroy(ctx);
	return bad ? 1 : 0;
}
