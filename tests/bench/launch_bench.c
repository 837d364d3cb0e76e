// SPDX-License-Identifier: GPL-2.0
/*
 * FlexStream launch benchmark, run in the VM (make bench). Prints:
 *
 *   bench: launch_per_tile_vs_raw_submit <ratio> x
 *	the time of flex_stream_launch() of a 64-tile matmul (HostOperation,
 *	building the CBs, submitting them) over the time of submitting its
 *	compute CBs by hand, each after the DMA of its tile's correction
 *	tensor (built beforehand) straight through FLEX_IOCTL_SUBMIT: what a
 *	runtime without a correction arena submits. Both are measured with
 *	the engines paused (debugfs), so that the device's work does not
 *	compete with the submitting thread for the guest's CPUs; rounds
 *	alternate library and raw. The ratio is of the best rounds (as
 *	queue_bench: the machine is shared, and the best round is the least
 *	disturbed one); the medians are printed too.
 *   bench: launch_vs_raw_one_upload <ratio> x
 *	the same launch over submitting by hand exactly the CBs the library
 *	builds (one upload of every tile's correction tensor, then the
 *	compute CBs): the library's own cost, its HostOperations included.
 *   bench: launch_cbs_per_tile <n> count
 *	CBs the library submitted per tile of a 64-tile launch (stream
 *	counters): the tiles' compute CBs and their windows' uploads.
 *   bench: launch_return_before_first_tile <yes|no> bool
 *	engines running, a 64-tile launch of 128x128x128 int32 tiles: right after
 *	flex_stream_launch() returns, has the queue completed the first
 *	tile's compute CB? "yes" if it has not (the call did not wait).
 *   bench: launch_us / raw_submit_us / raw_one_upload_us (best),
 *	launch_median_us / raw_submit_median_us, big_launch_us: for context.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/flex.h>
#include <flex/context.h>
#include <flex/program.h>
#include <flex/stream.h>

#define ROUNDS	31
#define TILE	16	/* the submission-cost job: small tiles, quick rounds */
#define BIG	128	/* the return-early job: 2M MACs per tile */
#define GRID	8	/* 8 x 8 = 64 tiles */

static void die(const char *what, int err)
{
	fprintf(stderr, "launch_bench: %s: %s (%s)\n", what, strerror(-err),
		flex_last_error());
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int pause_engines(int on)
{
	FILE *f = fopen("/sys/kernel/debug/flex/flex0/engines_paused", "w");

	if (!f)
		return -errno;
	fputs(on ? "1" : "0", f);
	return fclose(f) ? -errno : 0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	enum { M = TILE * GRID, N = TILE * GRID, K = TILE, NT = GRID * GRID };
	struct flex_context *ctx;
	struct flex_stream *s;
	struct flex_kernel *kern;
	struct flex_job *job, *job2;
	struct flex_tensor t2[3];
	double big_us, big_sync_us;
	struct flex_alloc *al;
	struct flex_tensor t[3];
	struct flex_queue_status st;
	struct flex_vaddr va[3], prog, slot;
	flex_alloc_index_t A, B, C, bin, slot_idx;
	static struct flex_cb raw[2 * NT], raw1[NT + 1];
	static uint64_t corr[NT][8], corr1[NT * 8];
	double lib_us[ROUNDS], raw_us[ROUNDS], raw1_us[ROUNDS], t0;
	struct flex_stream_stats st0, st1;
	uint32_t raw_q;
	uint64_t first_compute;
	int i, r, e;

	e = flex_context_new_from_path("/dev/flex0", &ctx);
	if (e)
		die("context", e);
	s = flex_context_default_stream(ctx);
	al = flex_context_allocator(ctx);
	e = flex_kernel_new_matmul(FLEX_DTYPE_INT32, TILE, TILE, TILE, &kern);
	if (e)
		die("kernel", e);
	e = flex_context_load_program(ctx, kern->binary, kern->binary_size, &bin);
	if (e)
		die("load", e);
	{
		struct flex_step plan[3] = {
			flex_step_host_op(NULL, NULL), flex_step_simple(FLEX_STEP_DMA_CORRECTION),
			flex_step_simple(FLEX_STEP_COMPUTE),
		};

		e = flex_job_new_kernel("matmul", bin, &kern->sig, kern->corr, kern->n_corr, plan, 3,
					&job);
		if (e)
			die("job", e);
	}
	if ((e = flex_alloc_block_alloc(al, (uint64_t)M * K * 4, FLEX_ALLOC_TENSOR, &A)) ||
	    (e = flex_alloc_block_alloc(al, (uint64_t)K * N * 4, FLEX_ALLOC_TENSOR, &B)) ||
	    (e = flex_alloc_block_alloc(al, (uint64_t)M * N * 4, FLEX_ALLOC_TENSOR, &C)) ||
	    (e = flex_alloc_block_alloc(al, sizeof(corr1), FLEX_ALLOC_TENSOR, &slot_idx)))
		die("alloc", e);
	t[0] = (struct flex_tensor){ .index = A, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
				     .shape = { M, K }, .strides = { K, 1 } };
	t[1] = (struct flex_tensor){ .index = B, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
				     .shape = { K, N }, .strides = { N, 1 } };
	t[2] = (struct flex_tensor){ .index = C, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
				     .shape = { M, N }, .strides = { N, 1 } };

	/* The raw CBs: what the library builds, on a queue of the same depth. */
	flex_alloc_block_resolve(al, A, &va[0], NULL);
	flex_alloc_block_resolve(al, B, &va[1], NULL);
	flex_alloc_block_resolve(al, C, &va[2], NULL);
	flex_alloc_block_resolve(al, bin, &prog, NULL);
	flex_alloc_block_resolve(al, slot_idx, &slot, NULL);
	e = flex_device_queue_create(flex_context_device(ctx), FLEX_QUEUE_PRIO_NORMAL,
				     FLEX_QUEUE_MAX_DEPTH, &raw_q);
	if (e)
		die("raw queue", e);
	memset(raw, 0, sizeof(raw));
	for (i = 0; i < NT; i++) {
		struct flex_cb *d = &raw[2 * i], *c = &raw[2 * i + 1];
		int j;

		/* Tile 0's correction tensor (slots as flex_kernel_new_matmul() documents). */
		corr[i][0] = FLEX_ADDR(0, va[0].offset);
		corr[i][1] = FLEX_ADDR(1, va[1].offset);
		corr[i][2] = FLEX_ADDR(2, va[2].offset);
		corr[i][3] = N;
		corr[i][4] = K;
		corr[i][5] = N;
		corr[i][6] = 0;
		d->opcode = FLEX_CB_DMA_TO_DEVICE;
		d->dma.host_ptr = (uint64_t)(uintptr_t)corr[i];
		d->dma.dev.region_id = slot.region_id;
		d->dma.dev.offset = slot.offset;
		d->dma.size = kern->n_corr * 8;
		c->opcode = FLEX_CB_COMPUTE;
		c->compute.program.region_id = prog.region_id;
		c->compute.program.offset = prog.offset;
		for (j = 0; j < 3; j++) {
			c->compute.segments[j].region_id = va[j].region_id;
			c->compute.segment_mask |= 1U << j;
		}
		c->compute.segments[7].region_id = slot.region_id;
		c->compute.segments[7].offset = slot.offset;
		c->compute.segment_mask |= 1U << 7;

		/* The library's CBs: one upload, then compute CBs into it. */
		memcpy(&corr1[i * kern->n_corr], corr[i], kern->n_corr * 8);
		raw1[1 + i] = *c;
		raw1[1 + i].compute.segments[7].offset = slot.offset + i * kern->n_corr * 8;
	}
	raw1[0] = raw[0];
	raw1[0].dma.host_ptr = (uint64_t)(uintptr_t)corr1;
	raw1[0].dma.size = NT * kern->n_corr * 8;

	/*
	 * 1. Submission cost, engines paused. The order alternates (the
	 * second call of a round may find the engines' threads still retiring
	 * the previous round), and each round starts after a short settle.
	 */
	for (r = 0; r < ROUNDS; r++) {
		uint64_t seq = 0;
		int k;

		if ((e = pause_engines(1)))
			die("pause engines (debugfs)", e);
		usleep(2000);
		for (k = 0; k < 3; k++) {
			switch ((k + r) % 3) {
			case 0:
				flex_stream_get_stats(s, &st0);
				t0 = now_us();
				e = flex_stream_launch(s, job, t, 3, 0);
				lib_us[r] = now_us() - t0;
				if (e)
					die("launch", e);
				flex_stream_get_stats(s, &st1);
				break;
			case 1:
				t0 = now_us();
				e = flex_device_submit(flex_context_device(ctx), raw_q, raw, 2 * NT,
						       0, &seq);
				raw_us[r] = now_us() - t0;
				if (e)
					die("raw submit", e);
				break;
			default:
				t0 = now_us();
				e = flex_device_submit(flex_context_device(ctx), raw_q, raw1, NT + 1,
						       0, &seq);
				raw1_us[r] = now_us() - t0;
				if (e)
					die("raw submit, one upload", e);
			}
		}
		pause_engines(0);
		if ((e = flex_stream_synchronize(s, NULL)))
			die("synchronize", e);
		if ((e = flex_device_wait(flex_context_device(ctx), raw_q, seq, -1)))
			die("raw wait", e);
	}
	qsort(lib_us, ROUNDS, sizeof(double), cmp);
	qsort(raw_us, ROUNDS, sizeof(double), cmp);
	qsort(raw1_us, ROUNDS, sizeof(double), cmp);

	/* 2. Does a 64-tile launch return before the first tile has run? */
	{
		enum { BM = BIG * GRID };
		struct flex_kernel *big;
		struct flex_step plan[3] = {
			flex_step_host_op(NULL, NULL), flex_step_simple(FLEX_STEP_DMA_CORRECTION),
			flex_step_simple(FLEX_STEP_COMPUTE),
		};
		flex_alloc_index_t A2, B2, C2, bin2;

		e = flex_kernel_new_matmul(FLEX_DTYPE_INT32, BIG, BIG, BIG, &big);
		if (e)
			die("kernel", e);
		if ((e = flex_context_load_program(ctx, big->binary, big->binary_size, &bin2)) ||
		    (e = flex_job_new_kernel("matmul_big", bin2, &big->sig, big->corr, big->n_corr,
					     plan, 3, &job2)) ||
		    (e = flex_alloc_block_alloc(al, (uint64_t)BM * BIG * 4, FLEX_ALLOC_TENSOR, &A2)) ||
		    (e = flex_alloc_block_alloc(al, (uint64_t)BIG * BM * 4, FLEX_ALLOC_TENSOR, &B2)) ||
		    (e = flex_alloc_block_alloc(al, (uint64_t)BM * BM * 4, FLEX_ALLOC_TENSOR, &C2)))
			die("big job", e);
		t2[0] = (struct flex_tensor){ .index = A2, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
					      .shape = { BM, BIG }, .strides = { BIG, 1 } };
		t2[1] = (struct flex_tensor){ .index = B2, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
					      .shape = { BIG, BM }, .strides = { BM, 1 } };
		t2[2] = (struct flex_tensor){ .index = C2, .dtype = FLEX_DTYPE_INT32, .ndim = 2,
					      .shape = { BM, BM }, .strides = { BM, 1 } };
		flex_kernel_destroy(big);
	}
	flex_device_queue_status(flex_context_device(ctx), flex_stream_queue_id(s), &st);
	first_compute = st.submitted + 2;	/* the window's upload, then tile 0 */
	t0 = now_us();
	e = flex_stream_launch(s, job2, t2, 3, 0);
	big_us = now_us() - t0;
	if (e)
		die("launch", e);
	flex_device_queue_status(flex_context_device(ctx), flex_stream_queue_id(s), &st);
	t0 = now_us();
	if ((e = flex_stream_synchronize(s, NULL)))
		die("synchronize", e);
	big_sync_us = now_us() - t0;

	printf("bench: launch_us %.1f us\n", lib_us[0]);
	printf("bench: raw_submit_us %.1f us\n", raw_us[0]);
	printf("bench: launch_median_us %.1f us\n", lib_us[ROUNDS / 2]);
	printf("bench: raw_submit_median_us %.1f us\n", raw_us[ROUNDS / 2]);
	printf("bench: raw_one_upload_us %.1f us\n", raw1_us[0]);
	printf("bench: launch_per_tile_vs_raw_submit %.3f x\n", lib_us[0] / raw_us[0]);
	printf("bench: launch_vs_raw_one_upload %.3f x\n", lib_us[0] / raw1_us[0]);
	printf("bench: launch_cbs_per_tile %.3f count\n",
	       (double)(st1.cbs - st0.cbs) / (double)(st1.tiles - st0.tiles));
	printf("bench: big_launch_us %.1f us\n", big_us);
	printf("bench: big_launch_then_synchronize_us %.1f us\n", big_sync_us);
	printf("bench: launch_return_before_first_tile %s bool\n",
	       st.completed < first_compute ? "yes" : "no");

	flex_device_queue_destroy(flex_context_device(ctx), raw_q);
	flex_job_destroy(job);
	flex_job_destroy(job2);
	flex_kernel_destroy(kern);
	flex_context_destroy(ctx);
	return 0;
}
