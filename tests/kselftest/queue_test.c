// SPDX-License-Identifier: GPL-2.0
/*
 * flex queues and DMA: round trips of many sizes and alignments, FIFO order,
 * independence of queues, cross-queue waits, timeouts and poll, when fences
 * signal (queues take turns; no fence waits behind a DMA; an idle engine
 * never waits for the busy one; a small DMA runs on either engine; no kick
 * is lost as an idle engine's poll ends), sticky
 * faults and reset, every bad argument, blocking submission, cleanup of a
 * killed process with DMA in flight, and isolation of VFs by DMA.
 */
#include <linux/sync_file.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "flex_test.h"

#define REGION	(128 * MiB)

FIXTURE(q) {
	int fd;
	int q;
	struct flex_region_acquire r;
};

FIXTURE_SETUP(q)
{
	self->fd = flex_open(FLEX_PF);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, flex_acquire(self->fd, REGION, &self->r));
	self->q = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, self->q);
}

FIXTURE_TEARDOWN(q)
{
	engines_pause(0);
	close(self->fd);
}

static void fill(unsigned char *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (unsigned char)(seed + i * 131 + (i >> 9));
}

TEST_F(q, dma_round_trips_of_many_sizes_and_alignments)
{
	static const size_t sizes[] = { 1, 3, 127, 128, 4095, 4096, 4097, 65536 + 17,
					1 * MiB + 5, 3 * MiB, 16 * MiB - 1, 64 * MiB };
	static const size_t host_align[] = { 0, 1, 4095 };
	static const __u64 dev_off[] = { 0, 1, 4096 - 3, 2 * MiB + 77 };
	unsigned char *src = malloc(64 * MiB + 8192), *dst = malloc(64 * MiB + 8192);
	size_t i, j, k;

	ASSERT_NE(NULL, src);
	ASSERT_NE(NULL, dst);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		for (j = 0; j < 3; j++) {
			k = (i + j) % 4;
			size_t n = sizes[i];
			unsigned char *s = src + host_align[j], *d = dst + host_align[(j + 1) % 3];

			if (n > 16 * MiB && j)
				continue;	/* the largest once is enough */
			fill(s, n, i * 7 + j);
			memset(d, 0xee, n);
			ASSERT_EQ(0, run_cb(self->fd, self->q,
					    cb_dma(1, s, self->r.region_id, dev_off[k], n)))
				TH_LOG("to device: %zu bytes at +%llu", n, dev_off[k]);
			ASSERT_EQ(0, run_cb(self->fd, self->q,
					    cb_dma(0, d, self->r.region_id, dev_off[k], n)));
			ASSERT_EQ(0, memcmp(s, d, n))
				TH_LOG("%zu bytes, host +%zu, device +%llu differ", n,
				       host_align[j], dev_off[k]);
		}
	}
	free(src);
	free(dst);
}

TEST_F(q, untouched_device_memory_reads_zero_by_dma)
{
	unsigned char buf[8192];
	size_t i, nonzero = 0;

	memset(buf, 0xff, sizeof(buf));
	ASSERT_EQ(0, run_cb(self->fd, self->q,
			    cb_dma(0, buf, self->r.region_id, 64 * MiB, sizeof(buf))));
	for (i = 0; i < sizeof(buf); i++)
		nonzero += buf[i] != 0;
	EXPECT_EQ(0, nonzero);
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/resident"));
}

TEST_F(q, cbs_of_a_queue_run_in_fifo_order_under_load)
{
	enum { N = 200 };
	static __u32 vals[N];
	struct flex_cb cbs[N];
	__u32 out = 0;
	__u64 seq, last = 0;
	int i, round;

	for (round = 0; round < 4; round++) {
		for (i = 0; i < N; i++) {
			vals[i] = round * N + i;
			/* Every CB writes the same word: only order decides. */
			cbs[i] = cb_dma(1, &vals[i], self->r.region_id, 4096, 4);
		}
		ASSERT_EQ(0, submit(self->fd, self->q, cbs, N, FLEX_SUBMIT_BLOCK, &seq));
		EXPECT_EQ(last + N, seq);
		last = seq;
	}
	/* The queue may still be full on a slow (debug) kernel: block for room. */
	cbs[0] = cb_dma(0, &out, self->r.region_id, 4096, 4);
	ASSERT_EQ(0, submit(self->fd, self->q, cbs, 1, FLEX_SUBMIT_BLOCK, &seq));
	ASSERT_EQ(0, wait_seq(self->fd, self->q, seq, 10000));
	EXPECT_EQ(3 * N + N - 1, out);
	EXPECT_EQ(last + 1, queue_status(self->fd, self->q).completed);
}

TEST_F(q, a_wait_cb_orders_work_across_queues)
{
	unsigned char *big = malloc(32 * MiB);
	__u32 one = 1, seen = 0;
	struct flex_cb a[2], b[2];
	__u64 sa, sb;
	int q2 = queue_create(self->fd, FLEX_QUEUE_PRIO_HIGH, 0);

	ASSERT_LT(0, q2);
	ASSERT_NE(NULL, big);
	memset(big, 1, 32 * MiB);
	ASSERT_EQ(0, engines_pause(1));
	a[0] = cb_dma(1, big, self->r.region_id, 0, 32 * MiB);
	a[1] = cb_dma(1, &one, self->r.region_id, 64 * MiB, 4);
	ASSERT_EQ(0, submit(self->fd, self->q, a, 2, 0, &sa));
	/* The high-priority queue would run first: the wait holds it back. */
	b[0] = cb_wait(self->q, sa);
	b[1] = cb_dma(0, &seen, self->r.region_id, 64 * MiB, 4);
	ASSERT_EQ(0, submit(self->fd, q2, b, 2, 0, &sb));
	ASSERT_EQ(0, engines_pause(0));
	ASSERT_EQ(0, wait_seq(self->fd, q2, sb, 10000));
	EXPECT_EQ(1, seen);
	EXPECT_EQ(sa, queue_status(self->fd, self->q).completed);
	free(big);
}

TEST_F(q, wait_timeouts_polling_and_poll)
{
	struct pollfd pfd = { .fd = self->fd, .events = POLLIN | POLLPRI };
	struct flex_cb nop = { .opcode = FLEX_CB_NOP };
	struct flex_wait w;
	__u64 seq;
	__s64 t0;

	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, submit(self->fd, self->q, &nop, 1, 0, &seq));
	EXPECT_EQ(-ETIMEDOUT, wait_seq(self->fd, self->q, seq, 0));
	t0 = now_ns();
	EXPECT_EQ(-ETIMEDOUT, wait_seq(self->fd, self->q, seq, 200));
	EXPECT_LE(150 * 1000000LL, now_ns() - t0);
	/* A deadline already past is a poll. */
	w = (struct flex_wait){ .queue_id = self->q, .seqno = seq,
				.timeout_ns = now_ns() - 1000 };
	EXPECT_EQ(-ETIMEDOUT, flex_ioctl(self->fd, FLEX_IOCTL_WAIT, &w));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, engines_pause(0));
	EXPECT_EQ(1, poll(&pfd, 1, 5000));
	EXPECT_EQ(POLLIN, pfd.revents);
	EXPECT_EQ(0, wait_seq(self->fd, self->q, seq, 0));
	/* Reported completions no longer make the file readable. */
	EXPECT_EQ(0, poll(&pfd, 1, 0));
}

TEST_F(q, an_exported_fence_signals_on_completion)
{
	struct flex_cb nop = { .opcode = FLEX_CB_NOP };
	struct flex_fence_export e = { .queue_id = self->q };
	struct pollfd pfd = { .events = POLLIN };

	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, submit(self->fd, self->q, &nop, 1, 0, &e.seqno));
	ASSERT_EQ(0, flex_ioctl(self->fd, FLEX_IOCTL_FENCE_EXPORT, &e));
	pfd.fd = e.fd;
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	ASSERT_EQ(0, engines_pause(0));
	EXPECT_EQ(1, poll(&pfd, 1, 5000));
	close(e.fd);
	/* A completed CB exports a signalled fence. */
	ASSERT_EQ(0, flex_ioctl(self->fd, FLEX_IOCTL_FENCE_EXPORT, &e));
	pfd.fd = e.fd;
	EXPECT_EQ(1, poll(&pfd, 1, 0));
	close(e.fd);
	e.seqno = 99;
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_FENCE_EXPORT, &e));
}

/* A sync_file for CB @seqno of queue @q, exported before it completes. */
static int fence_fd(int fd, __u32 q, __u64 seqno)
{
	struct flex_fence_export e = { .queue_id = q, .seqno = seqno };

	return flex_ioctl(fd, FLEX_IOCTL_FENCE_EXPORT, &e) ? -1 : e.fd;
}

/* When the fence of sync_file @sf signalled (ns, CLOCK_MONOTONIC), or -1. */
static __s64 fence_time(int sf)
{
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = {
		.num_fences = 1, .sync_fence_info = (__u64)(unsigned long)&fi,
	};

	if (ioctl(sf, SYNC_IOC_FILE_INFO, &info) || fi.status != 1)
		return -1;
	return fi.timestamp_ns;
}

/*
 * Starts a DMA of @size bytes from @buf to @offset of @region on queue @q
 * and returns the fd of
 * its fence once it has run for 10 ms, long after its submission's kick
 * found the other engine idle: 0 if it finished within that time (too
 * fast to test with), or -1 on error.
 */
static int long_dma_running(int fd, __u32 q, __u64 region, __u64 offset, const void *buf,
			    size_t size)
{
	struct flex_cb dma = cb_dma(1, buf, region, offset, size);
	struct pollfd pfd;
	__u64 seq;
	int sf;

	if (submit(fd, q, &dma, 1, 0, &seq))
		return -1;
	sf = fence_fd(fd, q, seq);
	if (sf < 0)
		return -1;
	usleep(10000);
	pfd = (struct pollfd){ .fd = sf, .events = POLLIN };
	if (poll(&pfd, 1, 0) != 0) {
		close(sf);
		return 0;
	}
	return sf;
}

/* Submits @cb alone on queue @q and returns its fence's sync_file fd, or -1. */
static int submit_one_fence(int fd, __u32 q, struct flex_cb cb)
{
	__u64 seq;

	return submit(fd, q, &cb, 1, 0, &seq) ? -1 : fence_fd(fd, q, seq);
}

/*
 * Waits up to 20 s for the fences of sync_files @first and @second, closes
 * both and stores how long after @first's @second's signalled (negative if
 * before). Returns 0, or -1 if either did not signal.
 */
static int signalled_after(int first, int second, __s64 *ns)
{
	struct pollfd pfd[2] = {
		{ .fd = first, .events = POLLIN }, { .fd = second, .events = POLLIN },
	};
	__s64 t0, t1;
	int i;

	for (i = 0; i < 2; i++)
		if (poll(&pfd[i], 1, 20000) != 1)
			break;
	t0 = i == 2 ? fence_time(first) : -1;
	t1 = i == 2 ? fence_time(second) : -1;
	close(first);
	close(second);
	if (t0 <= 0 || t1 <= 0)
		return -1;
	*ns = t1 - t0;
	return 0;
}

/*
 * The engine goes on with a queue's CBs that complete at once only while
 * no other queue waits for it: three queues on two engines always leave
 * one waiting, so each queue's first NOP signals before any queue's last.
 */
TEST_F(q, queues_take_turns_between_cbs_that_complete_at_once)
{
	enum { NQ = 3, N = 32 };
	struct flex_cb nops[N];
	int sf[NQ][N], qs[NQ] = { self->q }, i, k, a, b;
	__s64 t[NQ][N];
	__u64 seq[NQ];

	memset(nops, 0, sizeof(nops));
	for (k = 1; k < NQ; k++) {
		qs[k] = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
		ASSERT_LT(0, qs[k]);
	}
	ASSERT_EQ(0, engines_pause(1));
	for (k = 0; k < NQ; k++) {
		ASSERT_EQ(0, submit(self->fd, qs[k], nops, N, 0, &seq[k]));
		for (i = 0; i < N; i++) {
			sf[k][i] = fence_fd(self->fd, qs[k], seq[k] - N + 1 + i);
			ASSERT_LE(0, sf[k][i]);
		}
	}
	ASSERT_EQ(0, engines_pause(0));
	for (k = 0; k < NQ; k++)
		ASSERT_EQ(0, wait_seq(self->fd, qs[k], seq[k], 10000));
	for (k = 0; k < NQ; k++) {
		for (i = 0; i < N; i++) {
			t[k][i] = fence_time(sf[k][i]);
			close(sf[k][i]);
			ASSERT_LT(0, t[k][i]) TH_LOG("queue %d, CB %d: no signal time", k, i);
			if (i)
				EXPECT_LE(t[k][i - 1], t[k][i])
					TH_LOG("queue %d: CB %d signalled before CB %d", k, i, i - 1);
		}
	}
	for (a = 0; a < NQ; a++) {
		for (b = 0; b < NQ; b++) {
			__s64 first = t[a][0], last = t[b][N - 1];

			if (a == b)
				continue;
			EXPECT_LT(first, last)
				TH_LOG("queue %d's first NOP signalled %lld ns after queue %d's "
				       "last: the engine did not take turns", a,
				       (long long)(first - last), b);
		}
	}
}

/*
 * A fence never waits for a DMA or a compute queued behind its CB: a NOP's
 * fence signals before the small DMA after it has run (a DMA never joins
 * a run of instant CBs, even one that may run on either engine), and the
 * small DMA's before the big one has run.
 */
TEST_F(q, a_fence_never_waits_for_the_dma_behind_it)
{
	static const char *const what[] = { "NOP", "4-byte DMA", "32 MiB DMA" };
	unsigned char *big = malloc(32 * MiB);
	__u32 word = 7;
	struct flex_cb cbs[3];
	int sf[3], i;
	__s64 t[3];
	__u64 seq;

	ASSERT_NE(NULL, big);
	memset(big, 3, 32 * MiB);
	memset(&cbs[0], 0, sizeof(cbs[0]));
	cbs[1] = cb_dma(1, &word, self->r.region_id, 64 * MiB, 4);
	cbs[2] = cb_dma(1, big, self->r.region_id, 0, 32 * MiB);
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, submit(self->fd, self->q, cbs, 3, 0, &seq));
	for (i = 0; i < 3; i++) {
		sf[i] = fence_fd(self->fd, self->q, seq - 2 + i);
		ASSERT_LE(0, sf[i]);
	}
	ASSERT_EQ(0, engines_pause(0));
	ASSERT_EQ(0, wait_seq(self->fd, self->q, seq, 10000));
	for (i = 0; i < 3; i++) {
		t[i] = fence_time(sf[i]);
		close(sf[i]);
		ASSERT_LT(0, t[i]);
	}
	EXPECT_LT(t[0], t[1]) TH_LOG("expected the %s's fence to signal before the %s's; it "
				     "signalled %lld ns after it", what[0], what[1],
				     (long long)(t[0] - t[1]));
	EXPECT_LT(t[1], t[2]) TH_LOG("expected the %s's fence to signal before the %s's; it "
				     "signalled %lld ns after it", what[1], what[2],
				     (long long)(t[1] - t[2]));
	free(big);
}

/*
 * The two engines run side by side even when one is kicked while it is
 * busy (a NOP submitted to an idle queue kicks both, as a signalled
 * dependency does): a NOP submitted while a long DMA runs signals before
 * the DMA does. The engines' workqueue once let only two work items be
 * active, and a busy engine's work queued again took the second slot, so
 * the idle engine waited until the busy one ran out of work.
 */
TEST_F(q, a_nop_submitted_during_a_long_dma_does_not_wait_for_it)
{
	const size_t size = REGION;
	unsigned char *big = malloc(size);
	struct flex_cb nop;
	int q2, sf, nsf;
	__s64 after;

	ASSERT_NE(NULL, big);
	memset(big, 3, size);
	memset(&nop, 0, sizeof(nop));
	q2 = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q2);
	sf = long_dma_running(self->fd, self->q, self->r.region_id, 0, big, size);
	ASSERT_LE(0, sf);
	if (!sf) {
		free(big);
		SKIP(return, "the %llu MiB DMA finished within 10 ms: too fast to test with",
		     (unsigned long long)(size / MiB));
	}
	nsf = submit_one_fence(self->fd, q2, nop);
	ASSERT_LE(0, nsf);
	ASSERT_EQ(0, signalled_after(sf, nsf, &after));
	EXPECT_LT(after, 0) TH_LOG("expected the NOP's fence to signal before the %llu MiB "
				   "DMA's; it signalled %lld ns after it: the idle engine "
				   "waited for the busy one", (unsigned long long)(size / MiB),
				   (long long)after);
	free(big);
}

/*
 * A DMA of at most 64 KiB runs on whichever engine is free, as a command
 * processor copies small data inline: one submitted on another queue
 * while a long DMA keeps the DMA engine busy signals first, and its data
 * lands.
 */
TEST_F(q, a_small_dma_does_not_wait_behind_a_big_one)
{
	const size_t size = REGION - 64 * 1024, small = 64 * 1024;
	unsigned char *big = malloc(size), *in = malloc(small), *out = malloc(small);
	int q2, sf, ssf;
	__s64 after;

	ASSERT_NE(NULL, big);
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	memset(big, 3, size);
	fill(in, small, 11);
	q2 = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q2);
	sf = long_dma_running(self->fd, self->q, self->r.region_id, 0, big, size);
	ASSERT_LE(0, sf);
	if (!sf)
		SKIP(goto out, "the %llu MiB DMA finished within 10 ms: too fast to test with",
		     (unsigned long long)(size / MiB));
	ssf = submit_one_fence(self->fd, q2, cb_dma(1, in, self->r.region_id, size, small));
	ASSERT_LE(0, ssf);
	ASSERT_EQ(0, signalled_after(sf, ssf, &after));
	EXPECT_LT(after, 0) TH_LOG("expected the 64 KiB DMA's fence to signal before the "
				   "%llu MiB DMA's; it signalled %lld ns after it: it waited "
				   "for the DMA engine", (unsigned long long)(size / MiB),
				   (long long)after);
	ASSERT_EQ(0, run_cb(self->fd, q2, cb_dma(0, out, self->r.region_id, size, small)));
	EXPECT_EQ(0, memcmp(in, out, small)) TH_LOG("the 64 KiB DMA's data did not land");
out:
	free(big);
	free(in);
	free(out);
}

/*
 * A submission kicks the engines only when it gives an idle queue a head
 * to pick; CBs appended behind a running one are found by the engine that
 * ends it, which kicks the other engine when the next CB is the other's:
 * a compute, a DMA only the DMA engine runs and a NOP appended behind a
 * long DMA all run, in order.
 */
TEST_F(q, cbs_appended_behind_a_running_one_run_in_order)
{
	const size_t size = REGION - 2 * MiB, mid = 128 * 1024;
	unsigned char *big = malloc(size), *in = malloc(mid), *out = malloc(mid);
	struct flex_cb cbs[4] = { { .opcode = FLEX_CB_COMPUTE } };
	__s32 filled[16];
	struct prog p;
	__u64 seq;
	int sf, i;

	ASSERT_NE(NULL, big);
	ASSERT_NE(NULL, in);
	ASSERT_NE(NULL, out);
	memset(big, 3, size);
	fill(in, mid, 29);
	prog_init(&p, 0);
	prog_emit(&p, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, FLEX_ADDR(0, 0), 16ULL, 7ULL);
	prog_emit(&p, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	ASSERT_EQ(0, run_cb(self->fd, self->q, cb_dma(1, &p, self->r.region_id, 0, prog_size(&p))));
	sf = long_dma_running(self->fd, self->q, self->r.region_id, 2 * MiB, big, size);
	ASSERT_LE(0, sf);
	if (!sf)
		SKIP(goto out, "the %llu MiB DMA finished within 10 ms: too fast to test with",
		     (unsigned long long)(size / MiB));
	close(sf);
	cbs[0].compute.program = (struct flex_va){ self->r.region_id, 0 };
	cbs[0].compute.segment_mask = 1;
	cbs[0].compute.segments[0] = (struct flex_va){ self->r.region_id, 4096 };
	cbs[1] = cb_dma(1, in, self->r.region_id, MiB, mid);
	cbs[2].opcode = FLEX_CB_NOP;
	cbs[3] = cb_dma(0, out, self->r.region_id, MiB, mid);
	ASSERT_EQ(0, submit(self->fd, self->q, cbs, 4, 0, &seq));
	ASSERT_EQ(0, wait_seq(self->fd, self->q, seq, 20000))
		TH_LOG("CBs appended behind a running DMA never ran");
	EXPECT_EQ(0, memcmp(in, out, mid)) TH_LOG("the appended DMA's data did not land");
	ASSERT_EQ(0, run_cb(self->fd, self->q, cb_dma(0, filled, self->r.region_id, 4096,
						      sizeof(filled))));
	for (i = 0; i < 16; i++)
		ASSERT_EQ(7, filled[i]) TH_LOG("element %d of the appended compute's output", i);
out:
	free(big);
	free(in);
	free(out);
}

#define POLL_PARAM	"/sys/module/flex/parameters/engine_poll_us"

/* Busy-waits @us microseconds: sleeps are too coarse for a poll's end. */
static void spin_us(unsigned int us)
{
	__s64 end = now_ns() + us * 1000LL;

	while (now_ns() < end)
		;
}

/*
 * An engine that runs out of work polls for a kick for engine_poll_us
 * before it sleeps; a kick needs no wake-up while it polls. None is lost
 * as a poll ends: round trips with gaps around the poll's length all
 * complete, for several lengths and with no poll. Each is a 128 KiB DMA,
 * which only the DMA engine runs, and on a second queue a WAIT for it,
 * which the DMA's fence kicks.
 */
TEST_F(q, no_kick_is_lost_as_an_engines_poll_ends)
{
	static const unsigned int polls[] = { 0, 1, 10, 50, 100 };
	const size_t size = 128 * 1024;
	unsigned char *buf = malloc(size);
	unsigned int i = 0, k, seed = 1;
	struct flex_cb dma, wait;
	char old[32], v[16];
	__u64 seq = 0, wseq = 0;
	int q2, err = 0;

	ASSERT_NE(NULL, buf);
	memset(buf, 5, size);
	dma = cb_dma(1, buf, self->r.region_id, 0, size);
	q2 = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q2);
	ASSERT_EQ(0, sysfs_read(POLL_PARAM, old, sizeof(old)));
	for (k = 0; k < sizeof(polls) / sizeof(polls[0]) && !err; k++) {
		snprintf(v, sizeof(v), "%u", polls[k]);
		ASSERT_EQ(0, sysfs_write(POLL_PARAM, v));
		for (i = 0; i < 300 && !err; i++) {
			spin_us(rand_r(&seed) % (2 * polls[k] + 2));
			err = submit(self->fd, self->q, &dma, 1, 0, &seq);
			wait = cb_wait(self->q, seq);
			err = err ?: submit(self->fd, q2, &wait, 1, 0, &wseq);
			err = err ?: wait_seq(self->fd, q2, wseq, 5000);
		}
	}
	sysfs_write(POLL_PARAM, old);
	free(buf);
	EXPECT_EQ(0, err) TH_LOG("engine_poll_us %u, round trip %u: %s", polls[k - 1], i - 1,
				 strerror(-err));
}

/* The poll is bounded: engine_poll_us takes 0-10000 and nothing else. */
TEST(engine_poll_us_takes_only_0_to_10000)
{
	char old[32], now[32];

	ASSERT_EQ(0, sysfs_read(POLL_PARAM, old, sizeof(old)));
	EXPECT_EQ(-ERANGE, sysfs_write(POLL_PARAM, "10001"));
	EXPECT_EQ(-ERANGE, sysfs_write(POLL_PARAM, "4294967295"));
	EXPECT_EQ(-EINVAL, sysfs_write(POLL_PARAM, "-1"));
	EXPECT_EQ(-EINVAL, sysfs_write(POLL_PARAM, "fast"));
	ASSERT_EQ(0, sysfs_read(POLL_PARAM, now, sizeof(now)));
	EXPECT_STREQ(old, now) TH_LOG("a rejected write changed the value");
	EXPECT_EQ(0, sysfs_write(POLL_PARAM, "10000"));
	EXPECT_EQ(0, sysfs_write(POLL_PARAM, "0"));
	ASSERT_EQ(0, sysfs_write(POLL_PARAM, old));
}

TEST_F(q, faults_are_sticky_until_reset_and_other_queues_go_on)
{
	int other = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	struct flex_region_acquire gone;
	struct flex_cb cbs[3];
	struct flex_queue_status st;
	__u32 v = 7, seen = 0;
	__u64 seq;

	ASSERT_LT(0, other);
	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &gone));
	ASSERT_EQ(0, engines_pause(1));
	cbs[0] = cb_dma(1, &v, self->r.region_id, 0, 4);
	cbs[1] = cb_dma(1, &v, gone.region_id, 8, 4);	/* released before it runs */
	cbs[1].user_data = 0xfeed;
	cbs[2] = cb_dma(1, &v, self->r.region_id, 4, 4);
	ASSERT_EQ(0, submit(self->fd, self->q, cbs, 3, 0, &seq));
	ASSERT_EQ(0, flex_release(self->fd, gone.region_id));
	ASSERT_EQ(0, engines_pause(0));

	EXPECT_EQ(0, wait_seq(self->fd, self->q, seq - 2, 5000));
	EXPECT_EQ(-ENXIO, wait_seq(self->fd, self->q, seq - 1, 5000));
	EXPECT_EQ(-ENXIO, wait_seq(self->fd, self->q, seq, 5000));
	st = queue_status(self->fd, self->q);
	EXPECT_EQ(FLEX_FAULT_UNMAPPED, st.fault_code);
	EXPECT_EQ(-ENXIO, st.fault_errno);
	EXPECT_EQ(seq - 1, st.fault_seqno);
	EXPECT_EQ(0xfeed, st.fault_user_data);
	EXPECT_EQ(FLEX_CB_DMA_TO_DEVICE, st.fault_opcode);
	EXPECT_EQ(gone.region_id, st.fault_addr.region_id);
	EXPECT_EQ(8, st.fault_addr.offset);
	EXPECT_EQ(seq, st.completed);
	/* The CB behind the fault did not run. */
	ASSERT_EQ(0, run_cb(self->fd, other, cb_dma(0, &seen, self->r.region_id, 4, 4)));
	EXPECT_EQ(0, seen);
	/* Sticky: refused until reset; the fault stays readable. */
	EXPECT_EQ(-EIO, submit(self->fd, self->q, cbs, 1, 0, NULL));
	EXPECT_EQ(FLEX_FAULT_UNMAPPED, queue_status(self->fd, self->q).fault_code);
	EXPECT_EQ(0, queue_reset(self->fd, self->q));
	EXPECT_EQ(FLEX_FAULT_NONE, queue_status(self->fd, self->q).fault_code);
	EXPECT_EQ(0, run_cb(self->fd, self->q, cbs[2]));
	ASSERT_EQ(0, run_cb(self->fd, other, cb_dma(0, &seen, self->r.region_id, 4, 4)));
	EXPECT_EQ(7, seen);
	/* Earlier CBs still report success. */
	EXPECT_EQ(0, wait_seq(self->fd, self->q, seq - 2, 0));
}

TEST_F(q, a_failed_dependency_fails_the_waiting_cb)
{
	int other = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	struct flex_region_acquire gone;
	__u32 v = 1;
	struct flex_cb bad, w;
	__u64 sbad, sw;

	ASSERT_LT(0, other);
	ASSERT_EQ(0, flex_acquire(self->fd, 2 * MiB, &gone));
	ASSERT_EQ(0, engines_pause(1));
	bad = cb_dma(1, &v, gone.region_id, 0, 4);
	ASSERT_EQ(0, submit(self->fd, self->q, &bad, 1, 0, &sbad));
	w = cb_wait(self->q, sbad);
	ASSERT_EQ(0, submit(self->fd, other, &w, 1, 0, &sw));
	ASSERT_EQ(0, flex_release(self->fd, gone.region_id));
	ASSERT_EQ(0, engines_pause(0));
	EXPECT_EQ(-EPIPE, wait_seq(self->fd, other, sw, 5000));
	EXPECT_EQ(FLEX_FAULT_DEPENDENCY, queue_status(self->fd, other).fault_code);
}

TEST_F(q, queue_ioctls_reject_bad_arguments)
{
	struct flex_queue_create c;
	struct flex_queue_op op = { .queue_id = self->q, .flags = 1 };
	/* Bit 0 is FLEX_STATUS_ACK; the next one is unknown. */
	struct flex_queue_status st = { .queue_id = self->q, .flags = 2 };
	struct flex_wait w = { .queue_id = self->q, .seqno = 1, .flags = 1 };
	int i, n = 1;

	c = (struct flex_queue_create){ .priority = 3 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_QUEUE_CREATE, &c));
	c = (struct flex_queue_create){ .depth = FLEX_QUEUE_MAX_DEPTH + 1 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_QUEUE_CREATE, &c));
	c = (struct flex_queue_create){ .flags = 1 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_QUEUE_CREATE, &c));
	for (i = 1; i < FLEX_MAX_QUEUES; i++, n++)
		ASSERT_LT(0, queue_create(self->fd, FLEX_QUEUE_PRIO_LOW, 1)) TH_LOG("queue %d", i);
	EXPECT_EQ(FLEX_MAX_QUEUES, n);
	EXPECT_EQ(-ENOSPC, queue_create(self->fd, FLEX_QUEUE_PRIO_LOW, 1));
	EXPECT_EQ(0, queue_destroy(self->fd, FLEX_MAX_QUEUES));
	EXPECT_LT(0, queue_create(self->fd, FLEX_QUEUE_PRIO_LOW, 1));

	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_QUEUE_DESTROY, &op));
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_QUEUE_RESET, &op));
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_QUEUE_STATUS, &st));
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_WAIT, &w));
	EXPECT_EQ(-ENOENT, queue_destroy(self->fd, 0));
	EXPECT_EQ(-ENOENT, queue_destroy(self->fd, 999));
	EXPECT_EQ(-ENOENT, queue_reset(self->fd, 999));
	EXPECT_EQ(-ENOENT, wait_seq(self->fd, 999, 1, 0));
	/* Nothing submitted yet: seqno 1 is the future. */
	EXPECT_EQ(-EINVAL, wait_seq(self->fd, self->q, 1, 0));
	EXPECT_EQ(-EINVAL, wait_seq(self->fd, self->q, 0, 0));
}

TEST_F(q, submit_rejects_bad_cbs_and_takes_nothing)
{
	__u32 v = 0;
	struct flex_cb good = cb_dma(1, &v, self->r.region_id, 0, 4), cbs[2];
	struct flex_submit s;
	__u64 seq = 0;

	s = (struct flex_submit){ .cbs_ptr = (__u64)(unsigned long)&good, .count = 1,
				  .queue_id = self->q, .flags = 2 };
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_SUBMIT, &s));
	s.flags = 0;
	s.pad = 1;
	EXPECT_EQ(-EINVAL, flex_ioctl(self->fd, FLEX_IOCTL_SUBMIT, &s));
	EXPECT_EQ(-EINVAL, submit(self->fd, self->q, &good, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, submit(self->fd, self->q, &good, FLEX_SUBMIT_MAX_CBS + 1, 0, NULL));
	EXPECT_EQ(-EFAULT, submit(self->fd, self->q, (void *)16, 1, 0, NULL));
	EXPECT_EQ(-ENOENT, submit(self->fd, 999, &good, 1, 0, NULL));

#define BAD(errno_, ...) do {						\
		cbs[0] = good;						\
		cbs[1] = good;						\
		{ __VA_ARGS__; }					\
		EXPECT_EQ(errno_, submit(self->fd, self->q, cbs, 2, 0, NULL)); \
	} while (0)
	BAD(-EINVAL, cbs[1].opcode = 99);
	BAD(-EINVAL, cbs[1].flags = 1);
	BAD(-EINVAL, cbs[1].raw[10] = 1);	/* past the DMA fields */
	BAD(-EINVAL, cbs[1] = (struct flex_cb){ .opcode = FLEX_CB_NOP, .raw[0] = 1 });
	BAD(-EINVAL, cbs[1].dma.size = 0);
	BAD(-EINVAL, cbs[1].dma.size = FLEX_DMA_MAX_SIZE + 1);
	BAD(-ENOENT, cbs[1].dma.dev.region_id = 4096);
	BAD(-ERANGE, cbs[1].dma.dev.offset = REGION - 2);
	BAD(-ERANGE, cbs[1].dma.dev.offset = REGION + 4096);
	BAD(-ERANGE, cbs[1].dma.dev.offset = ~0ULL - 1);
	BAD(-EFAULT, cbs[1].dma.host_ptr = 4096);
	BAD(-EFAULT, cbs[1].dma.host_ptr = ~0ULL - 2);
	BAD(-EINVAL, cbs[1] = cb_wait(self->q, 1));		/* its own queue */
	BAD(-ENOENT, cbs[1] = cb_wait(999, 1));
	BAD(-EINVAL, cbs[1] = (struct flex_cb){ .opcode = FLEX_CB_COMPUTE,
						.compute.segment_mask = 1 << 8 });
	BAD(-EINVAL, cbs[1] = (struct flex_cb){ .opcode = FLEX_CB_COMPUTE,
						.compute.segments[3].offset = 5 });
	BAD(-ENOENT, cbs[1] = (struct flex_cb){ .opcode = FLEX_CB_COMPUTE,
						.compute.program.region_id = 1 });
#undef BAD
	/* Nothing was queued and nothing stayed pinned. */
	EXPECT_EQ(0, queue_status(self->fd, self->q).submitted);
	EXPECT_EQ(0, sysfs_num("/sys/kernel/debug/flex/flex0/pinned_pages"));
	EXPECT_EQ(0, submit(self->fd, self->q, &good, 1, 0, &seq));
	EXPECT_EQ(1, seq);
}

TEST_F(q, a_full_queue_says_eagain_or_blocks)
{
	struct flex_cb nops[5] = { { .opcode = FLEX_CB_NOP }, { .opcode = FLEX_CB_NOP },
				   { .opcode = FLEX_CB_NOP }, { .opcode = FLEX_CB_NOP },
				   { .opcode = FLEX_CB_NOP } };
	int small = queue_create(self->fd, FLEX_QUEUE_PRIO_NORMAL, 4);
	__u64 seq;
	pid_t pid;
	int status;

	ASSERT_LT(0, small);
	/* More CBs than the queue can ever hold. */
	EXPECT_EQ(-EINVAL, submit(self->fd, small, nops, 5, 0, NULL));
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, submit(self->fd, small, nops, 3, 0, &seq));
	EXPECT_EQ(-EAGAIN, submit(self->fd, small, nops, 2, 0, NULL));
	EXPECT_EQ(0, submit(self->fd, small, nops, 1, 0, NULL));
	EXPECT_EQ(-EAGAIN, submit(self->fd, small, nops, 1, 0, NULL));
	/* Blocking: the submitter sleeps until the engines make room. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		usleep(200000);
		_exit(engines_pause(0) ? 1 : 0);
	}
	EXPECT_EQ(0, submit(self->fd, small, nops, 4, FLEX_SUBMIT_BLOCK, &seq));
	EXPECT_EQ(8, seq);
	EXPECT_EQ(0, wait_seq(self->fd, small, seq, 5000));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

TEST(a_killed_process_leaves_no_pinned_page_region_or_queue)
{
	int pipefd[2], status;
	struct flex_region_acquire a;
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	ASSERT_EQ(0, engines_pause(1));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = flex_open(FLEX_PF), q;
		char *buf = aligned_alloc(4096, 8 * MiB);
		struct flex_cb cbs[2];

		if (fd < 0 || !buf || flex_acquire(fd, 16 * MiB, &a))
			_exit(1);
		q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
		memset(buf, 3, 8 * MiB);
		cbs[0] = cb_dma(1, buf, a.region_id, 0, 8 * MiB);
		cbs[1] = cb_dma(0, buf, a.region_id, 0, 8 * MiB);
		if (q < 0 || submit(fd, q, cbs, 2, 0, NULL))
			_exit(1);
		if (write(pipefd[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(sizeof(a), read(pipefd[0], &a, sizeof(a)));
	EXPECT_EQ(2 * 8 * MiB / 4096, sysfs_num("/sys/kernel/debug/flex/flex0/pinned_pages"));
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, sysfs_num("/sys/kernel/debug/flex/flex0/pinned_pages"));
	EXPECT_FALSE(region_dir_exists(a.handle));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
	EXPECT_EQ(0, engines_pause(0));
	close(pipefd[0]);
	close(pipefd[1]);
}

TEST(a_process_killed_mid_dma_cleans_up_too)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd = flex_open(FLEX_PF), q, i;
		char *buf = malloc(64 * MiB);
		struct flex_region_acquire a;
		struct flex_cb cb;

		if (fd < 0 || !buf || flex_acquire(fd, 64 * MiB, &a))
			_exit(1);
		q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 2);
		memset(buf, 5, 64 * MiB);
		cb = cb_dma(1, buf, a.region_id, 0, 64 * MiB);
		for (i = 0; q > 0 && i < 1000; i++)
			if (submit(fd, q, &cb, 1, FLEX_SUBMIT_BLOCK, NULL))
				_exit(1);
		_exit(0);
	}
	usleep(300000);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, sysfs_num("/sys/kernel/debug/flex/flex0/pinned_pages"));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/resident"));
}

TEST(vfs_cannot_reach_each_other_by_dma)
{
	struct flex_region_acquire a0, b0, c1, pr;
	__u32 secret = 0x5ec7e7, seen = 1;
	int vf0, vf1, pf, q0, q1, qp;

	ASSERT_EQ(0, set_numvfs(2));
	vf0 = flex_open("/dev/flex0vf0");
	vf1 = flex_open("/dev/flex0vf1");
	pf = flex_open(FLEX_PF);
	ASSERT_LE(0, vf0);
	ASSERT_LE(0, vf1);
	ASSERT_LE(0, pf);
	ASSERT_EQ(0, flex_acquire(vf0, 2 * MiB, &a0));
	ASSERT_EQ(0, flex_acquire(vf0, 2 * MiB, &b0));
	ASSERT_EQ(0, flex_acquire(vf1, 2 * MiB, &c1));
	ASSERT_EQ(0, flex_acquire(pf, 2 * MiB, &pr));
	q0 = queue_create(vf0, 0, 0);
	q1 = queue_create(vf1, 0, 0);
	qp = queue_create(pf, 0, 0);
	ASSERT_EQ(0, run_cb(vf0, q0, cb_dma(1, &secret, a0.region_id, 0, 4)));
	ASSERT_EQ(0, run_cb(vf0, q0, cb_dma(1, &secret, b0.region_id, 0, 4)));

	/* vf1's id 0 is its own region; id 1 does not exist for it. */
	EXPECT_EQ(0, run_cb(vf1, q1, cb_dma(0, &seen, c1.region_id, 0, 4)));
	EXPECT_EQ(0, seen);
	EXPECT_EQ(-ENOENT, run_cb(vf1, q1, cb_dma(0, &seen, b0.region_id, 0, 4)));
	/* Nor can the PF name a VF region by its physical address. */
	EXPECT_EQ(-ENOENT, run_cb(pf, qp, cb_dma(0, &seen,
			sysfs_num(FLEX_SYSFS "/regions/%llu/phys_addr",
				  (unsigned long long)a0.handle), 0, 4)));
	EXPECT_EQ(0, seen);
	close(vf0);
	close(vf1);
	close(pf);
	EXPECT_EQ(0, set_numvfs(0));
}

TEST_HARNESS_MAIN
