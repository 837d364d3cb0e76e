// SPDX-License-Identifier: GPL-2.0
/*
 * Driver queue benchmark, run in the VM (make bench). Prints:
 *
 *   bench: null_ioctl_ns                 the cheapest ioctl of the device
 *   bench: submit_per_cb_vs_null_ioctl   per-CB cost of 64 NOP CBs submitted
 *                                        and waited, over the cheapest ioctl
 *   bench: submit_only_per_cb_vs_null_ioctl
 *                                        the submission alone (copy-in,
 *                                        validation, jobs, fences, enqueue),
 *                                        engines paused: 16 batches of 64
 *                                        NOPs into a 1024-deep queue
 *   bench: submit_per_cb_1024_idle_queues_vs_none
 *                                        the same with 1024 idle queues open,
 *                                        over the figure without them
 *   bench: dma_h2d_vs_memcpy             64 MiB DMA throughput over memcpy's
 *   bench: dma_d2h_vs_memcpy             of the same size in the same guest
 *   bench: submit_wait_roundtrip_us      one NOP CB submitted and waited
 *
 * Every figure is the best of several rounds: the machine is shared and
 * noisy, and the best round is the one least disturbed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/flex.h>

#define MiB	(1ULL << 20)
#define DMA_SIZE (64 * MiB)
#define ROUNDS	5

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "queue_bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int fd, qid;

static void submit_wait(struct flex_cb *cbs, unsigned int n)
{
	struct flex_submit s = { .cbs_ptr = (unsigned long)cbs, .count = n, .queue_id = qid };
	struct flex_wait w = { .queue_id = qid, .timeout_ns = 0 };
	struct timespec ts;

	if (ioctl(fd, FLEX_IOCTL_SUBMIT, &s))
		die("submit");
	clock_gettime(CLOCK_MONOTONIC, &ts);
	w.seqno = s.seqno;
	w.timeout_ns = (ts.tv_sec + 60) * 1000000000LL + ts.tv_nsec;
	if (ioctl(fd, FLEX_IOCTL_WAIT, &w))
		die("wait");
}

/* Seconds per call of an ioctl, best of ROUNDS. */
static double per_ioctl(unsigned long cmd, void *arg, int n)
{
	double best = 1e9, t;
	int r, i;

	for (r = 0; r < ROUNDS; r++) {
		t = now();
		for (i = 0; i < n; i++)
			if (ioctl(fd, cmd, arg))
				die("ioctl");
		t = (now() - t) / n;
		if (t < best)
			best = t;
	}
	return best;
}

static double best_time(void (*fn)(void *), void *arg)
{
	double best = 1e9, t;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		t = now();
		fn(arg);
		t = now() - t;
		if (t < best)
			best = t;
	}
	return best;
}

static char *host_a, *host_b;
static struct flex_region_acquire region;

static void do_memcpy(void *arg)
{
	memcpy(host_b, host_a, DMA_SIZE);
	asm volatile("" ::: "memory");
}

static void do_dma(void *arg)
{
	struct flex_cb cb = {
		.opcode = (long)arg,
		.dma = { .host_ptr = (unsigned long)host_a,
			 .dev = { region.region_id, 0 }, .size = DMA_SIZE },
	};

	submit_wait(&cb, 1);
}

static struct flex_cb nops[64];

static void do_nops(void *arg)
{
	int i, batches = (long)arg;

	for (i = 0; i < batches; i++)
		submit_wait(nops, 64);
}

static int deep_qid;

static int pause_engines(int on)
{
	int f = open("/sys/kernel/debug/flex/flex0/engines_paused", O_WRONLY), err = 0;

	if (f < 0)
		return -errno;
	if (write(f, on ? "1" : "0", 1) != 1)
		err = -errno;
	close(f);
	return err;
}

/* Seconds per CB of submitting 16 x 64 NOPs with the engines paused, best of ROUNDS. */
static double submit_only(void)
{
	struct flex_submit s = { .cbs_ptr = (unsigned long)nops, .count = 64,
				 .queue_id = deep_qid };
	struct flex_wait w = { .queue_id = deep_qid };
	double best = 1e9, t;
	struct timespec ts;
	int r, i;

	for (r = 0; r < ROUNDS; r++) {
		if (pause_engines(1))
			die("pause the engines (debugfs)");
		t = now();
		for (i = 0; i < FLEX_QUEUE_MAX_DEPTH / 64; i++)
			if (ioctl(fd, FLEX_IOCTL_SUBMIT, &s))
				die("submit");
		t = (now() - t) / FLEX_QUEUE_MAX_DEPTH;
		if (t < best)
			best = t;
		if (pause_engines(0))
			die("unpause the engines (debugfs)");
		clock_gettime(CLOCK_MONOTONIC, &ts);
		w.seqno = s.seqno;
		w.timeout_ns = (ts.tv_sec + 60) * 1000000000LL + ts.tv_nsec;
		if (ioctl(fd, FLEX_IOCTL_WAIT, &w))
			die("wait");
	}
	return best;
}

static void do_roundtrips(void *arg)
{
	int i, n = (long)arg;

	for (i = 0; i < n; i++)
		submit_wait(nops, 1);
}

/*
 * The same NOP batches while other files hold IDLE_FILES * FLEX_MAX_QUEUES
 * idle queues: the scheduler looks only at queues with work, so the ratio
 * to the figure without them stays near 1.
 */
#define IDLE_FILES	16

static double with_idle_queues(int batches)
{
	struct flex_queue_create qc = { .priority = FLEX_QUEUE_PRIO_NORMAL };
	int fds[IDLE_FILES], i, j;
	double t;

	for (i = 0; i < IDLE_FILES; i++) {
		fds[i] = open("/dev/flex0", O_RDWR);
		if (fds[i] < 0)
			die("open /dev/flex0 for idle queues");
		for (j = 0; j < FLEX_MAX_QUEUES; j++)
			if (ioctl(fds[i], FLEX_IOCTL_QUEUE_CREATE, &qc))
				die("idle queue create");
	}
	t = best_time(do_nops, (void *)(long)batches);
	for (i = 0; i < IDLE_FILES; i++)
		close(fds[i]);
	return t;
}

int main(int argc, char **argv)
{
	struct flex_queue_create qc = { .priority = FLEX_QUEUE_PRIO_NORMAL };
	struct flex_queue_status st = { 0 };
	struct flex_query q = { 0 };
	double null_ioctl, t, t2, memcpy_t;
	const int batches = 200, trips = 2000;

	fd = open("/dev/flex0", O_RDWR);
	if (fd < 0)
		die("open /dev/flex0");
	region.size = DMA_SIZE;
	if (ioctl(fd, FLEX_IOCTL_REGION_ACQUIRE, &region))
		die("acquire");
	if (ioctl(fd, FLEX_IOCTL_QUEUE_CREATE, &qc))
		die("queue create");
	qid = qc.queue_id;
	st.queue_id = qid;
	qc.depth = FLEX_QUEUE_MAX_DEPTH;
	if (ioctl(fd, FLEX_IOCTL_QUEUE_CREATE, &qc))
		die("deep queue create");
	deep_qid = qc.queue_id;

	/* The cheapest ioctl of the device: the best of the read-only ones. */
	null_ioctl = per_ioctl(FLEX_IOCTL_QUEUE_STATUS, &st, 20000);
	t = per_ioctl(FLEX_IOCTL_QUERY, &q, 20000);
	if (t < null_ioctl)
		null_ioctl = t;
	printf("bench: null_ioctl_ns %.0f ns\n", null_ioctl * 1e9);

	t = best_time(do_nops, (void *)(long)batches) / (batches * 64);
	printf("bench: submit_per_cb_ns %.0f ns\n", t * 1e9);
	printf("bench: submit_per_cb_vs_null_ioctl %.2f x\n", t / null_ioctl);
	t2 = submit_only();
	printf("bench: submit_only_per_cb_ns %.0f ns\n", t2 * 1e9);
	printf("bench: submit_only_per_cb_vs_null_ioctl %.2f x\n", t2 / null_ioctl);
	t2 = with_idle_queues(batches) / (batches * 64);
	printf("bench: submit_per_cb_%d_idle_queues_vs_none %.2f x\n",
	       IDLE_FILES * FLEX_MAX_QUEUES, t2 / t);
	if (argc > 1 && !strcmp(argv[1], "--submit-only"))
		return 0;

	t = best_time(do_roundtrips, (void *)(long)trips) / trips;
	printf("bench: submit_wait_roundtrip_us %.1f us\n", t * 1e6);

	host_a = aligned_alloc(4096, DMA_SIZE);
	host_b = aligned_alloc(4096, DMA_SIZE);
	if (!host_a || !host_b)
		die("malloc");
	memset(host_a, 0x5a, DMA_SIZE);
	memset(host_b, 0xa5, DMA_SIZE);
	memcpy_t = best_time(do_memcpy, NULL);
	printf("bench: memcpy_64m_gbps %.2f GB/s\n", DMA_SIZE / memcpy_t / 1e9);

	/* The first DMA backs the device pages; rounds after it measure the copy. */
	do_dma((void *)(long)FLEX_CB_DMA_TO_DEVICE);
	t = best_time(do_dma, (void *)(long)FLEX_CB_DMA_TO_DEVICE);
	printf("bench: dma_h2d_64m_gbps %.2f GB/s\n", DMA_SIZE / t / 1e9);
	printf("bench: dma_h2d_vs_memcpy %.2f x\n", memcpy_t / t);
	t = best_time(do_dma, (void *)(long)FLEX_CB_DMA_FROM_DEVICE);
	printf("bench: dma_d2h_64m_gbps %.2f GB/s\n", DMA_SIZE / t / 1e9);
	printf("bench: dma_d2h_vs_memcpy %.2f x\n", memcpy_t / t);
	close(fd);
	return 0;
}
