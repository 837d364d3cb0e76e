// SPDX-License-Identifier: GPL-2.0
/*
 * The driver against a hostile or unlucky user: one regression test per
 * defect of the hardening review (issue 14), each failing on the code
 * before its fix.
 *
 *  - objects are published only when complete: QUEUE_DESTROY and
 *    REGION_RELEASE of predictable ids race their creation;
 *  - teardown is prompt while a CB that would run for minutes is on the
 *    engine: close(), exit after SIGKILL and QUEUE_DESTROY;
 *  - a CB past cb_timeout_ms faults with FLEX_FAULT_TIMEOUT;
 *  - fences of a queue being destroyed signal in seqno order;
 *  - FENCE_EXPORT installs no fd the caller cannot learn, and a late export
 *    carries the CB's error;
 *  - WAIT with a deadline in the past (even INT64_MIN) times out at once;
 *  - a DMA cannot pin a region's mapping (backing_cap bypass);
 *  - REGION_RELEASE does not wait for a whole DMA into the region;
 *  - mmap offsets stay within a 32-bit process's reach;
 *  - above-normal queue priority needs CAP_SYS_NICE;
 *  - device memory an engine backs is charged to the submitter's memory
 *    cgroup.
 */
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/capability.h>
#include <linux/sync_file.h>

#include "kselftest_harness.h"
#include "flex_test.h"

#define TIMEOUT_PARAM	"/sys/module/flex/parameters/cb_timeout_ms"
/* Teardown must not wait for a long CB; generous for the debug kernel. */
#define PROMPT_MS	10000

static long ms_since(__s64 t0)
{
	return (long)((now_ns() - t0) / 1000000);
}

/*
 * A compute CB that would run for many minutes: 1023 MATMULs of
 * 640 x 640 x 640 (2^28 MACs each, the device limit) over one data region,
 * int8 unless long_cb_prepare_dtype() says otherwise. Inputs are never
 * written, so they read as zeros and need no backing.
 */
struct long_cb {
	struct flex_region_acquire prog, data;
	struct flex_cb cb;
};

static int long_cb_prepare_dtype(int fd, struct long_cb *l, __u8 dtype)
{
	const __u64 n = 640;
	size_t bytes = sizeof(struct flex_prog_header) +
		       FLEX_PROG_MAX_INSNS * sizeof(struct flex_insn);
	struct flex_prog_header *h;
	struct flex_insn *in;
	unsigned char *p;
	int i, err;

	err = flex_acquire(fd, 2 * MiB, &l->prog) ?: flex_acquire(fd, 8 * MiB, &l->data);
	if (err)
		return err;
	p = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 l->prog.mmap_offset);
	if (p == MAP_FAILED)
		return -errno;
	memset(p, 0, bytes);
	h = (struct flex_prog_header *)p;
	h->magic = FLEX_PROG_MAGIC;
	h->version = FLEX_PROG_VERSION;
	h->n_insns = FLEX_PROG_MAX_INSNS;
	in = (struct flex_insn *)(h + 1);
	for (i = 0; i < FLEX_PROG_MAX_INSNS - 1; i++) {
		in[i].op = FLEX_OP_MATMUL;
		in[i].dtype = dtype;
		in[i].arg[0] = FLEX_ADDR(0, 0);			/* C, <= 1.6 MiB */
		in[i].arg[1] = FLEX_ADDR(0, 2 * MiB);		/* A */
		in[i].arg[2] = FLEX_ADDR(0, 4 * MiB);		/* B */
		in[i].arg[3] = in[i].arg[4] = in[i].arg[5] = n;
		in[i].arg[6] = in[i].arg[7] = in[i].arg[8] = n;
	}
	munmap(p, 2 * MiB);

	memset(&l->cb, 0, sizeof(l->cb));
	l->cb.opcode = FLEX_CB_COMPUTE;
	l->cb.compute.program = (struct flex_va){ l->prog.region_id, 0 };
	l->cb.compute.segment_mask = 1;
	l->cb.compute.segments[0] = (struct flex_va){ l->data.region_id, 0 };
	return 0;
}

static int long_cb_prepare(int fd, struct long_cb *l)
{
	return long_cb_prepare_dtype(fd, l, FLEX_DT_I8);
}

/* Submits a long CB and gives the engine time to start it. */
static int long_cb_start(int fd, int q, struct long_cb *l, __u64 *seq)
{
	int err = long_cb_prepare(fd, l) ?: submit(fd, q, &l->cb, 1, 0, seq);

	if (!err)
		usleep(300 * 1000);
	return err;
}

/* A sync_file's state: 1 signalled, 0 active, a negative errno on error. */
static int sync_status(int fd)
{
	struct sync_file_info info = { 0 };

	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return INT_MIN;
	return info.status;
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static int export_fence(int fd, int q, __u64 seq)
{
	struct flex_fence_export e = { .queue_id = q, .seqno = seq };
	int err = flex_ioctl(fd, FLEX_IOCTL_FENCE_EXPORT, &e);

	return err ?: e.fd;
}

/* The lowest free fd number: what the next open would get. */
static int next_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

/* ---- publication races ---- */

struct race {
	int fd;
	volatile int stop;
	long destroyed, released;
};

static void *destroyer(void *arg)
{
	struct race *r = arg;
	struct flex_queue_op op = { 0 };
	unsigned int id = 1;

	while (!r->stop) {
		op.queue_id = id;
		if (!ioctl(r->fd, FLEX_IOCTL_QUEUE_DESTROY, &op))
			r->destroyed++;
		id = id % 2 + 1;	/* the ids creation hands out first */
	}
	return NULL;
}

static void *releaser(void *arg)
{
	struct race *r = arg;
	struct flex_region_release rel = { 0 };
	unsigned int id = 0;

	while (!r->stop) {
		rel.region_id = id;
		if (!ioctl(r->fd, FLEX_IOCTL_REGION_RELEASE, &rel))
			r->released++;
		id = (id + 1) % 2;	/* a VF hands out the lowest free entry */
	}
	return NULL;
}

/*
 * QUEUE_DESTROY of the id a concurrent QUEUE_CREATE is about to return:
 * the queue must not be reachable before it is on the scheduler's list
 * (a list_del() of a zeroed list head wedged the guest), and its creator
 * must not read it once it is.
 */
TEST(destroying_a_queue_while_it_is_created_is_safe)
{
	struct race r = { 0 };
	pthread_t t;
	long created = 0;
	int i, q, err;
	__s64 t0;

	r.fd = flex_open(FLEX_PF);
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, destroyer, &r));
	/*
	 * Each queue is destroyed again at once, so the same ids come back.
	 * At most 20000 rounds or 10 s: the debug kernel is slow.
	 */
	t0 = now_ns();
	for (i = 0; i < 20000 && ms_since(t0) < 10000; i++) {
		q = queue_create(r.fd, FLEX_QUEUE_PRIO_NORMAL, 4);
		ASSERT_LT(0, q) TH_LOG("create %d: expected a queue, got %d", i, q);
		created++;
		err = queue_destroy(r.fd, q);
		ASSERT_TRUE(!err || err == -ENOENT) TH_LOG("destroy %d: got %d", q, err);
	}
	r.stop = 1;
	pthread_join(t, NULL);
	TH_LOG("%ld queues created, %ld destroyed by the racing thread", created, r.destroyed);
	EXPECT_LT(0, r.destroyed);
	/* The file still works. */
	q = queue_create(r.fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	EXPECT_EQ(0, run_cb(r.fd, q, (struct flex_cb){ .opcode = FLEX_CB_NOP }));
	close(r.fd);
}

/* The same for regions on a VF, whose ids are the lowest free entries. */
TEST(releasing_a_region_while_it_is_acquired_is_safe)
{
	struct flex_region_acquire a;
	struct race r = { 0 };
	pthread_t t;
	long acquired = 0;
	int i, err;
	__s64 t0;

	set_numvfs(0);
	ASSERT_EQ(0, set_numvfs(1));
	r.fd = flex_open("/dev/flex0vf0");
	ASSERT_LE(0, r.fd);
	ASSERT_EQ(0, pthread_create(&t, NULL, releaser, &r));
	t0 = now_ns();
	for (i = 0; i < 3000 && ms_since(t0) < 10000; i++) {
		err = flex_acquire(r.fd, 2 * MiB, &a);
		ASSERT_EQ(0, err) TH_LOG("acquire %d: got %d", i, err);
		acquired++;
		err = flex_release(r.fd, a.region_id);
		ASSERT_TRUE(!err || err == -ENOENT) TH_LOG("release: got %d", err);
	}
	r.stop = 1;
	pthread_join(t, NULL);
	TH_LOG("%ld regions acquired, %ld released by the racing thread", acquired, r.released);
	EXPECT_LT(0, r.released);
	close(r.fd);
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
	EXPECT_EQ(0, set_numvfs(0));
}

/* ---- prompt teardown, timeouts, fence order ---- */

TEST(close_returns_promptly_while_a_long_cb_runs)
{
	struct long_cb l;
	__u64 seq;
	__s64 t0;
	int fd = flex_open(FLEX_PF), q;

	ASSERT_LE(0, fd);
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	ASSERT_EQ(0, long_cb_start(fd, q, &l, &seq));
	t0 = now_ns();
	EXPECT_EQ(0, close(fd));
	EXPECT_GT(PROMPT_MS, ms_since(t0)) TH_LOG("close() took %ld ms", ms_since(t0));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
}

TEST(a_process_killed_with_a_long_cb_running_exits_promptly)
{
	int pipefd[2], status;
	char c;
	pid_t pid;
	__s64 t0;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct long_cb l;
		__u64 seq;
		int fd = flex_open(FLEX_PF), q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);

		if (fd < 0 || q <= 0 || long_cb_start(fd, q, &l, &seq))
			_exit(1);
		c = 'r';
		if (write(pipefd[1], &c, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pipefd[1]);
	ASSERT_EQ(1, read(pipefd[0], &c, 1)) TH_LOG("the child could not start its CB");
	t0 = now_ns();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_GT(PROMPT_MS, ms_since(t0)) TH_LOG("the killed process took %ld ms to exit",
						 ms_since(t0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/used"));
	close(pipefd[0]);
}

struct destroy_args {
	int fd, q, err;
	long ms;
};

static void *destroy_thread(void *arg)
{
	struct destroy_args *d = arg;
	__s64 t0 = now_ns();

	d->err = queue_destroy(d->fd, d->q);
	d->ms = ms_since(t0);
	return NULL;
}

/*
 * QUEUE_DESTROY with a long CB running (seqno 1) and a NOP queued behind
 * it (seqno 2): destroy returns promptly, and the NOP's fence never
 * signals before the running CB's, which share a fence context.
 */
TEST(destroy_is_prompt_and_signals_fences_in_order)
{
	struct flex_cb nop = { .opcode = FLEX_CB_NOP };
	struct destroy_args d;
	struct long_cb l;
	__u64 s1, s2;
	pthread_t t;
	int fd = flex_open(FLEX_PF), f1, f2, early = 0;
	__s64 t0;

	ASSERT_LE(0, fd);
	d.fd = fd;
	d.q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, d.q);
	ASSERT_EQ(0, long_cb_start(fd, d.q, &l, &s1));
	ASSERT_EQ(0, submit(fd, d.q, &nop, 1, 0, &s2));
	f1 = export_fence(fd, d.q, s1);
	f2 = export_fence(fd, d.q, s2);
	ASSERT_LE(0, f1);
	ASSERT_LE(0, f2);
	EXPECT_EQ(0, sync_status(f1));
	EXPECT_EQ(0, sync_status(f2));

	ASSERT_EQ(0, pthread_create(&t, NULL, destroy_thread, &d));
	t0 = now_ns();
	while (ms_since(t0) < 2 * PROMPT_MS) {
		/* f1 is looked at after f2: f2 done and f1 not is a violation. */
		if (readable(f2) && !readable(f1)) {
			early = 1;
			break;
		}
		if (readable(f1) && readable(f2))
			break;
		usleep(1000);
	}
	EXPECT_EQ(0, early) TH_LOG("seqno 2 signalled while seqno 1 still ran");
	pthread_join(t, NULL);
	EXPECT_EQ(0, d.err);
	EXPECT_GT(PROMPT_MS, d.ms) TH_LOG("QUEUE_DESTROY took %ld ms", d.ms);
	EXPECT_EQ(-ECANCELED, sync_status(f1));
	EXPECT_EQ(-ECANCELED, sync_status(f2));
	close(f1);
	close(f2);
	close(fd);
}

TEST(a_cb_past_its_time_limit_faults_timeout)
{
	struct flex_queue_status st;
	char old[32];
	struct long_cb l;
	__u64 seq;
	__s64 t0;
	int fd = flex_open(FLEX_PF), q, err;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sysfs_read(TIMEOUT_PARAM, old, sizeof(old)));
	EXPECT_NE(0, sysfs_write(TIMEOUT_PARAM, "0")) TH_LOG("a CB must have a time limit");
	EXPECT_NE(0, sysfs_write(TIMEOUT_PARAM, "9"));
	ASSERT_EQ(0, sysfs_write(TIMEOUT_PARAM, "300"));
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	t0 = now_ns();
	err = long_cb_prepare(fd, &l) ?: submit(fd, q, &l.cb, 1, 0, &seq);
	ASSERT_EQ(0, err);
	err = wait_seq(fd, q, seq, 2 * PROMPT_MS);
	sysfs_write(TIMEOUT_PARAM, old);
	EXPECT_EQ(-ETIMEDOUT, err) TH_LOG("after %ld ms", ms_since(t0));
	st = queue_status(fd, q);
	EXPECT_EQ(FLEX_FAULT_TIMEOUT, st.fault_code);
	EXPECT_EQ(-ETIMEDOUT, st.fault_errno);
	EXPECT_EQ(seq, st.fault_seqno);
	/* The engine is free again: another queue's CB runs. */
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	EXPECT_EQ(0, run_cb(fd, q, (struct flex_cb){ .opcode = FLEX_CB_NOP }));
	close(fd);
}

/* The floating-point engine checks its time limit as the integer one does. */
TEST(a_float_cb_past_its_time_limit_faults_timeout)
{
	static const __u8 types[] = { FLEX_DT_F32, FLEX_DT_BF16 };
	struct flex_queue_status st;
	struct long_cb l;
	char old[32];
	__u64 seq;
	__s64 t0;
	int fd = flex_open(FLEX_PF), q, err;
	unsigned int i;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sysfs_read(TIMEOUT_PARAM, old, sizeof(old)));
	ASSERT_EQ(0, sysfs_write(TIMEOUT_PARAM, "300"));
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
		ASSERT_LT(0, q);
		t0 = now_ns();
		err = long_cb_prepare_dtype(fd, &l, types[i]) ?: submit(fd, q, &l.cb, 1, 0, &seq);
		ASSERT_EQ(0, err);
		err = wait_seq(fd, q, seq, 2 * PROMPT_MS);
		EXPECT_EQ(-ETIMEDOUT, err) TH_LOG("dtype %u: after %ld ms", types[i], ms_since(t0));
		st = queue_status(fd, q);
		EXPECT_EQ(FLEX_FAULT_TIMEOUT, st.fault_code) TH_LOG("dtype %u", types[i]);
	}
	sysfs_write(TIMEOUT_PARAM, old);
	close(fd);
}

/* ---- fence export ---- */

TEST(fence_export_leaks_no_fd_the_caller_cannot_learn)
{
	struct flex_fence_export *e;
	struct { __u32 queue_id, flags; __u64 seqno; } shorter;
	unsigned long short_cmd = _IOC(_IOC_READ | _IOC_WRITE, FLEX_IOCTL_BASE,
				       _IOC_NR(FLEX_IOCTL_FENCE_EXPORT), sizeof(shorter));
	__u64 seq;
	int fd = flex_open(FLEX_PF), q, before;

	ASSERT_LE(0, fd);
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, submit(fd, q, &(struct flex_cb){ .opcode = FLEX_CB_NOP }, 1, 0, &seq));

	/* The argument can be read but not written back. */
	e = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, e);
	e->queue_id = q;
	e->seqno = seq;
	ASSERT_EQ(0, mprotect(e, 4096, PROT_READ));
	before = next_fd();
	EXPECT_EQ(-EFAULT, flex_ioctl(fd, FLEX_IOCTL_FENCE_EXPORT, e));
	EXPECT_EQ(before, next_fd()) TH_LOG("a sync_file fd was installed behind -EFAULT");

	/* An older structure without the fd field cannot be told the fd. */
	shorter = (typeof(shorter)){ .queue_id = q, .seqno = seq };
	EXPECT_EQ(-EINVAL, flex_ioctl(fd, short_cmd, &shorter));
	EXPECT_EQ(before, next_fd()) TH_LOG("a sync_file fd was installed for a short struct");

	engines_pause(0);
	EXPECT_EQ(0, wait_seq(fd, q, seq, 10000));
	munmap(e, 4096);
	close(fd);
}

TEST(a_late_export_carries_the_cbs_error)
{
	struct flex_region_acquire r;
	struct flex_cb bad = { .opcode = FLEX_CB_COMPUTE };
	__u64 seq;
	int fd = flex_open(FLEX_PF), q, f;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &r));
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	/* Zeroed device memory is no program: FLEX_FAULT_BAD_PROGRAM. */
	bad.compute.program = (struct flex_va){ r.region_id, 0 };
	ASSERT_EQ(0, submit(fd, q, &bad, 1, 0, &seq));
	ASSERT_EQ(-ENOEXEC, wait_seq(fd, q, seq, 10000));
	f = export_fence(fd, q, seq);
	ASSERT_LE(0, f);
	EXPECT_EQ(-ENOEXEC, sync_status(f)) TH_LOG("a faulted CB's late fence reports success");
	close(f);
	close(fd);
}

/* ---- WAIT deadlines ---- */

static void on_alarm(int sig)
{
	(void)sig;
}

TEST(a_wait_whose_deadline_passed_times_out_at_once)
{
	static const __s64 deadlines[] = { INT64_MIN, -1, 1 };
	struct sigaction sa = { .sa_handler = on_alarm };
	struct flex_wait w = { 0 };
	unsigned int i;
	__u64 seq;
	int fd = flex_open(FLEX_PF), q;

	ASSERT_LE(0, fd);
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, submit(fd, q, &(struct flex_cb){ .opcode = FLEX_CB_NOP }, 1, 0, &seq));
	/* A wait that blocks is interrupted (EINTR) instead of hanging the test. */
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	for (i = 0; i < ARRAY_SIZE(deadlines); i++) {
		w = (struct flex_wait){ .queue_id = q, .seqno = seq,
					.timeout_ns = deadlines[i] };
		alarm(3);
		EXPECT_EQ(-ETIMEDOUT, flex_ioctl(fd, FLEX_IOCTL_WAIT, &w))
			TH_LOG("timeout_ns %lld", (long long)deadlines[i]);
		alarm(0);
	}
	engines_pause(0);
	EXPECT_EQ(0, wait_seq(fd, q, seq, 10000));
	close(fd);
}

/* ---- DMA and device mappings ---- */

TEST(a_dma_cannot_pin_a_region_mapping)
{
	struct flex_region_acquire a, b;
	unsigned char *p;
	int fd = flex_open(FLEX_PF), q;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &a));
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &b));
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	p = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x5a, 2 * MiB);	/* backed: pages GUP could pin */

	EXPECT_EQ(-EFAULT, run_cb(fd, q, cb_dma(1, p, b.region_id, 0, 2 * MiB)))
		TH_LOG("a DMA from a device mapping pinned its backing pages");
	EXPECT_EQ(-EFAULT, run_cb(fd, q, cb_dma(0, p, b.region_id, 0, 4096)));
	EXPECT_EQ(0, sysfs_num("/sys/kernel/debug/flex/flex0/pinned_pages"));
	/* Released, its backing is gone at once: nothing kept it. */
	EXPECT_EQ(0, munmap(p, 2 * MiB));
	EXPECT_EQ(0, flex_release(fd, a.region_id));
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/resident"));
	close(fd);
}

/*
 * REGION_RELEASE during a long DMA into the region cuts the DMA short
 * (it faults UNMAPPED at the next chunk) instead of waiting for all of it
 * with the device lock held.
 */
TEST(releasing_a_region_stops_a_dma_into_it)
{
	const size_t len = 128 * MiB;
	struct flex_region_acquire r;
	struct flex_queue_status st;
	volatile unsigned char *buf;
	unsigned char *p;
	struct flex_cb cb;
	__u64 seq;
	__s64 t0;
	int fd = flex_open(FLEX_PF), q, err;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, len, &r));
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	/* The region's first byte is 0x11, the rest reads as zeros. */
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, r.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	p[0] = 0x11;
	munmap(p, 4096);
	buf = malloc(len);
	ASSERT_NE(NULL, buf);
	memset((void *)buf, 0xff, len);

	/* A DMA from the device: once buf[0] is 0x11 it is under way. */
	cb = cb_dma(0, (void *)buf, r.region_id, 0, len);
	ASSERT_EQ(0, submit(fd, q, &cb, 1, 0, &seq));
	t0 = now_ns();
	while (buf[0] != 0x11 && ms_since(t0) < 10000)
		;
	ASSERT_EQ(0x11, buf[0]) TH_LOG("the DMA did not start");
	EXPECT_EQ(0, flex_release(fd, r.region_id));
	err = wait_seq(fd, q, seq, 20000);
	EXPECT_EQ(-ENXIO, err) TH_LOG("the DMA ran to the end while its region was released");
	st = queue_status(fd, q);
	EXPECT_EQ(FLEX_FAULT_UNMAPPED, st.fault_code);
	EXPECT_LT(0, st.fault_addr.offset);
	EXPECT_GT(len, st.fault_addr.offset);
	/* Cut short: the end of the buffer was never written. */
	EXPECT_EQ(0xff, buf[len - 1]);
	TH_LOG("cut at offset %llu of %zu", (unsigned long long)st.fault_addr.offset, len);
	free((void *)buf);
	close(fd);
}

/* ---- mmap offsets ---- */

TEST(mmap_offsets_are_within_reach_of_mmap2)
{
	struct flex_region_acquire a;
	int fd = flex_open(FLEX_PF), i;

	ASSERT_LE(0, fd);
	/* Enough regions for device-wide handles of 16 and more. */
	for (i = 0; i < 24; i++) {
		ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &a));
		/* mmap2() takes a 32-bit page offset: bytes below 2^44. */
		EXPECT_GT(1ULL << 44, a.mmap_offset + a.size)
			TH_LOG("region %llu (handle %llu) at mmap offset 0x%llx",
			       (unsigned long long)a.region_id, (unsigned long long)a.handle,
			       (unsigned long long)a.mmap_offset);
	}
	close(fd);
}

/* ---- privileges ---- */

static int drop_cap(int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[cap / 32].effective &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

TEST(above_normal_priority_needs_cap_sys_nice)
{
	int fd = flex_open(FLEX_PF);

	ASSERT_LE(0, fd);
	EXPECT_LT(0, queue_create(fd, FLEX_QUEUE_PRIO_HIGH, 0)) TH_LOG("with CAP_SYS_NICE");
	ASSERT_EQ(0, drop_cap(CAP_SYS_NICE));
	EXPECT_EQ(-EACCES, queue_create(fd, FLEX_QUEUE_PRIO_HIGH, 0));
	EXPECT_LT(0, queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0));
	EXPECT_LT(0, queue_create(fd, FLEX_QUEUE_PRIO_LOW, 0));
	close(fd);
}

/* ---- memory cgroups ---- */

#define CG_ROOT	"/tmp/flex-cgroup"
#define CG	CG_ROOT "/tenant"
#define CG_MAX	(32 * MiB)

static int cgroup_setup(void)
{
	char buf[256];

	mkdir(CG_ROOT, 0755);
	if (sysfs_read(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) &&
	    mount("none", CG_ROOT, "cgroup2", 0, NULL))
		return -errno;
	if (sysfs_read(CG_ROOT "/cgroup.controllers", buf, sizeof(buf)) ||
	    !strstr(buf, "memory"))
		return -ENOENT;
	sysfs_write(CG_ROOT "/cgroup.subtree_control", "+memory");
	if (mkdir(CG, 0755) && errno != EEXIST)
		return -errno;
	snprintf(buf, sizeof(buf), "%llu", CG_MAX);
	return sysfs_write(CG "/memory.max", buf);
}

/*
 * A tenant in a memory cgroup of 32 MiB DMAs 1 MiB at a time into fresh
 * device memory, 96 times. Backing the device pages is charged to it, so
 * it hits its limit (its DMA faults FLEX_FAULT_HOST) long before the
 * device holds 96 MiB for it; no OOM kill, nothing charged to no one.
 * At its limit anything it allocates would OOM-kill it, so it reports
 * through a page shared with the parent (already faulted in) and waits
 * for the parent to read the device's residency.
 */
struct cg_report {
	volatile int done, ack, rc, fault_code, dmas;
};

TEST(device_backing_is_charged_to_the_submitters_memory_cgroup)
{
	struct cg_report *rep;
	long long resident;
	int status, err;
	pid_t pid;

	err = cgroup_setup();
	if (err)
		SKIP(return, "no cgroup2 memory controller in this kernel (%d)", err);
	rep = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, rep);
	memset(rep, 0, sizeof(*rep));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct flex_region_acquire r;
		char me[32];
		__u64 seq;
		int fd, q, i, rc = 0;
		void *buf;

		snprintf(me, sizeof(me), "%d", getpid());
		if (sysfs_write(CG "/cgroup.procs", me))
			_exit(2);
		fd = flex_open(FLEX_PF);
		buf = malloc(MiB);
		if (fd < 0 || !buf || flex_acquire(fd, 128 * MiB, &r))
			_exit(3);
		memset(buf, 7, MiB);
		q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
		for (i = 0; i < 96 && !rc; i++) {
			struct flex_cb cb = cb_dma(1, buf, r.region_id, i * MiB, MiB);

			rc = submit(fd, q, &cb, 1, 0, &seq) ?: wait_seq(fd, q, seq, 10000);
		}
		rep->rc = rc;
		rep->dmas = i;
		rep->fault_code = queue_status(fd, q).fault_code;
		rep->done = 1;
		while (!rep->ack)
			usleep(1000);
		/* Giving the backing back uncharges it; then exiting is safe. */
		flex_release(fd, r.region_id);
		_exit(0);
	}
	while (!rep->done && !waitpid(pid, &status, WNOHANG))
		usleep(10000);
	resident = sysfs_num(FLEX_SYSFS "/resident");
	rep->ack = 1;
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("the tenant was killed (signal %d)",
					      WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("2-3: setup failed");
	EXPECT_EQ(1, rep->done);
	EXPECT_EQ(-ENOMEM, rep->rc) TH_LOG("after %d DMAs of 1 MiB", rep->dmas);
	EXPECT_EQ(FLEX_FAULT_HOST, rep->fault_code);
	EXPECT_GE((long long)CG_MAX, resident) TH_LOG("the device backed %lld bytes for it",
						      resident);
	rmdir(CG);
	munmap(rep, 4096);
}

/* ---- the owner's view ---- */

TEST(fdinfo_shows_the_owner_its_usage)
{
	struct flex_region_acquire a;
	int fd = flex_open(FLEX_PF), q;

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, fdinfo_num(fd, "flex-regions"));
	ASSERT_EQ(0, flex_acquire(fd, 4 * MiB, &a));
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &a));
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	ASSERT_EQ(0, run_cb(fd, q, (struct flex_cb){ .opcode = FLEX_CB_NOP }));
	EXPECT_EQ(2, fdinfo_num(fd, "flex-regions"));
	EXPECT_EQ(6 * 1024, fdinfo_num(fd, "flex-memory-regions"));
	EXPECT_EQ(1, fdinfo_num(fd, "flex-queues"));
	EXPECT_EQ(1, fdinfo_num(fd, "flex-cbs-completed"));
	EXPECT_EQ(0, fdinfo_num(fd, "flex-faults"));
	close(fd);
}

TEST(fdinfo_engine_time_and_client_id)
{
	static __u32 buf[16384];
	struct flex_region_acquire a;
	int fd = flex_open(FLEX_PF), fd2 = flex_open(FLEX_PF), dupfd, q;
	long long id, id2, dma0, dma1, comp1, comp2;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, fd2);
	id = fdinfo_num(fd, "flex-client-id");
	id2 = fdinfo_num(fd2, "flex-client-id");
	EXPECT_LT(0, id) TH_LOG("client id: expected > 0, got %lld", id);
	EXPECT_LT(id, id2) TH_LOG("client ids: expected %lld < %lld (unique, in open order)",
				  id, id2);
	dupfd = dup(fd);
	ASSERT_LE(0, dupfd);
	EXPECT_EQ(id, fdinfo_num(dupfd, "flex-client-id")) TH_LOG("a dup is the same client");
	close(dupfd);
	EXPECT_EQ(0, fdinfo_num(fd, "flex-engine-dma"));
	EXPECT_EQ(0, fdinfo_num(fd, "flex-engine-compute"));
	EXPECT_EQ(0, fdinfo_num(fd, "flex-cbs-pending"));

	ASSERT_EQ(0, flex_acquire(fd, 4 * MiB, &a));
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	ASSERT_EQ(0, run_cb(fd, q, cb_dma(1, buf, a.region_id, 0, sizeof(buf))));
	dma0 = fdinfo_num(fd, "flex-engine-dma");
	for (int i = 0; i < 8 && dma0 == 0; i++) {
		ASSERT_EQ(0, run_cb(fd, q, cb_dma(1, buf, a.region_id, 0, sizeof(buf))));
		dma0 = fdinfo_num(fd, "flex-engine-dma");
	}
	EXPECT_LT(0, dma0) TH_LOG("flex-engine-dma after DMA CBs: expected > 0, got %lld", dma0);
	EXPECT_EQ(0, fdinfo_num(fd, "flex-engine-compute"));
	ASSERT_EQ(0, run_fill(fd, q, a.region_id, 256 * 1024));
	dma1 = fdinfo_num(fd, "flex-engine-dma");
	comp1 = fdinfo_num(fd, "flex-engine-compute");
	EXPECT_LE(dma0, dma1) TH_LOG("flex-engine-dma after the program's upload: expected >= %lld, "
				     "got %lld", dma0, dma1);
	EXPECT_LE(0, comp1) TH_LOG("flex-engine-compute after a compute CB: absent");
	/*
	 * One CB may count 0 ns (a CB whose start and end were read on two
	 * CPUs whose clocks disagree is clamped, as vCPUs under TCG have
	 * it): the counter must move within a few.
	 */
	for (int i = 0; i < 8 && fdinfo_num(fd, "flex-engine-compute") == comp1; i++)
		ASSERT_EQ(0, run_fill(fd, q, a.region_id, 256 * 1024));
	comp2 = fdinfo_num(fd, "flex-engine-compute");
	EXPECT_LT(comp1, comp2) TH_LOG("flex-engine-compute: expected > %lld, got %lld", comp1, comp2);
	EXPECT_EQ(0, fdinfo_num(fd, "flex-cbs-pending"));
	/* The other file had none of it. */
	EXPECT_EQ(0, fdinfo_num(fd2, "flex-engine-dma"));
	EXPECT_EQ(0, fdinfo_num(fd2, "flex-engine-compute"));
	close(fd2);
	close(fd);
}

/* ---- tenants apart: quotas and fair shares ---- */

#define VF0_SYSFS	"/sys/class/flex/flex0vf0"

TEST(function_quotas_bound_capacity_and_backing)
{
	struct flex_region_acquire a = { 0 };
	unsigned char *p;
	int vf0, vf1, status;
	pid_t pid;

	set_numvfs(0);
	ASSERT_EQ(0, set_numvfs(2));
	ASSERT_EQ(0, sysfs_write(VF0_SYSFS "/quota_capacity", "64M"));
	ASSERT_EQ(0, sysfs_write(VF0_SYSFS "/quota_backing", "4M"));
	EXPECT_EQ(64 * MiB, sysfs_num(VF0_SYSFS "/quota_capacity"));
	EXPECT_NE(0, sysfs_write(VF0_SYSFS "/quota_capacity", "2T")) TH_LOG("above capacity");
	vf0 = flex_open("/dev/flex0vf0");
	vf1 = flex_open("/dev/flex0vf1");
	ASSERT_LE(0, vf0);
	ASSERT_LE(0, vf1);

	/* Capacity: 32 + 32 MiB fit, 2 MiB more is over the quota. */
	EXPECT_EQ(0, flex_acquire(vf0, 32 * MiB, &a));
	EXPECT_EQ(0, flex_acquire(vf0, 32 * MiB, NULL));
	EXPECT_EQ(-EDQUOT, flex_acquire(vf0, 2 * MiB, NULL));
	EXPECT_EQ(64 * MiB, sysfs_num(VF0_SYSFS "/memory_used"));
	/* The other VF is not bound by it. */
	EXPECT_EQ(0, flex_acquire(vf1, 512 * MiB, NULL));

	/* Backing: touching past 4 MiB of VF0's memory is SIGBUS. */
	p = mmap(NULL, 32 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, vf0, a.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 1, 4 * MiB);
	EXPECT_EQ(4 * MiB, sysfs_num(VF0_SYSFS "/backing_used"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		p[4 * MiB] = 1;
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS)
		TH_LOG("a touch past the backing quota did not fault");
	munmap(p, 32 * MiB);
	close(vf0);
	close(vf1);
	EXPECT_EQ(0, sysfs_num(VF0_SYSFS "/backing_used"));
	sysfs_write(VF0_SYSFS "/quota_capacity", "128G");
	sysfs_write(VF0_SYSFS "/quota_backing", "128M");
	EXPECT_EQ(0, set_numvfs(0));
}

/* A compute CB of about 2M MACs over a region of its own. */
static int small_matmul_cb(int fd, struct flex_cb *cb)
{
	struct flex_region_acquire pr, d;
	struct prog p;
	unsigned char *m;
	int err = flex_acquire(fd, 2 * MiB, &pr) ?: flex_acquire(fd, 2 * MiB, &d);

	if (err)
		return err;
	prog_init(&p, 0);
	prog_emit(&p, FLEX_OP_MATMUL, FLEX_DT_I32, 0, 9, FLEX_ADDR(0, 0),
		  FLEX_ADDR(0, 0), FLEX_ADDR(0, 0), 128ULL, 128ULL, 128ULL,
		  128ULL, 128ULL, 128ULL);
	prog_emit(&p, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	m = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pr.mmap_offset);
	if (m == MAP_FAILED)
		return -errno;
	memcpy(m, &p, prog_size(&p));
	munmap(m, 2 * MiB);
	memset(cb, 0, sizeof(*cb));
	cb->opcode = FLEX_CB_COMPUTE;
	cb->compute.program = (struct flex_va){ pr.region_id, 0 };
	cb->compute.segment_mask = 1;
	cb->compute.segments[0] = (struct flex_va){ d.region_id, 0 };
	return 0;
}

/*
 * Two VFs share the compute engine: VF0 with eight queues of 8 CBs each,
 * VF1 with one queue of 8 equal CBs. Sharing by function, VF1's eight
 * finish while VF0 has done about as many; sharing by queue, VF0 would
 * have done about 8 times as many.
 */
TEST(functions_share_the_engine_fairly_whatever_their_queue_count)
{
	struct flex_cb cb0[8], cb1[8];
	int vf0, vf1, q0[8], q1, i, j;
	__u64 seq0[8], seq1;
	long long vf0_done = 0;

	set_numvfs(0);
	ASSERT_EQ(0, set_numvfs(2));
	vf0 = flex_open("/dev/flex0vf0");
	vf1 = flex_open("/dev/flex0vf1");
	ASSERT_LE(0, vf0);
	ASSERT_LE(0, vf1);
	ASSERT_EQ(0, small_matmul_cb(vf0, &cb0[0]));
	ASSERT_EQ(0, small_matmul_cb(vf1, &cb1[0]));
	for (i = 1; i < 8; i++) {
		cb0[i] = cb0[0];
		cb1[i] = cb1[0];
	}
	ASSERT_EQ(0, engines_pause(1));
	for (i = 0; i < 8; i++) {
		q0[i] = queue_create(vf0, FLEX_QUEUE_PRIO_NORMAL, 0);
		ASSERT_LT(0, q0[i]);
		ASSERT_EQ(0, submit(vf0, q0[i], cb0, 8, 0, &seq0[i]));
	}
	q1 = queue_create(vf1, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q1);
	ASSERT_EQ(0, submit(vf1, q1, cb1, 8, 0, &seq1));
	ASSERT_EQ(0, engines_pause(0));

	ASSERT_EQ(0, wait_seq(vf1, q1, seq1, 60000));
	for (i = 0; i < 8; i++)
		vf0_done += queue_status(vf0, q0[i]).completed;
	TH_LOG("VF1 finished its 8 CBs when VF0 had finished %lld of 64", vf0_done);
	EXPECT_GE(24, vf0_done) TH_LOG("VF0's eight queues took the engine from VF1");
	for (j = 0; j < 8; j++)
		EXPECT_EQ(0, wait_seq(vf0, q0[j], seq0[j], 60000));
	close(vf0);
	close(vf1);
	EXPECT_EQ(0, set_numvfs(0));
}

/* ---- smaller defects ---- */

/* A CB that faults at once: zeroed device memory is no program. */
static struct flex_cb bad_program_cb(int fd)
{
	struct flex_region_acquire r = { 0 };
	struct flex_cb cb = { .opcode = FLEX_CB_COMPUTE };

	flex_acquire(fd, 2 * MiB, &r);
	cb.compute.program = (struct flex_va){ r.region_id, 0 };
	return cb;
}

/*
 * CBs cancelled behind a fault stay failed after the queue is reset: a
 * WAIT CB of another queue on one of them fails (FLEX_FAULT_DEPENDENCY),
 * and so does FLEX_IOCTL_WAIT.
 */
TEST(a_cb_cancelled_behind_a_fault_stays_failed_after_reset)
{
	struct flex_cb cbs[2];
	__u64 seq, wseq;
	int fd = flex_open(FLEX_PF), a, b;

	ASSERT_LE(0, fd);
	a = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	b = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, a);
	ASSERT_LT(0, b);
	cbs[0] = bad_program_cb(fd);
	cbs[1] = (struct flex_cb){ .opcode = FLEX_CB_NOP };
	ASSERT_EQ(0, submit(fd, a, cbs, 2, 0, &seq));
	EXPECT_EQ(-ENOEXEC, wait_seq(fd, a, seq, 10000));
	ASSERT_EQ(0, queue_reset(fd, a));
	/* Work after the reset succeeds... */
	EXPECT_EQ(0, run_cb(fd, a, (struct flex_cb){ .opcode = FLEX_CB_NOP }));
	/* ...but the NOP cancelled before it did not run. */
	EXPECT_EQ(-ENOEXEC, wait_seq(fd, a, seq, 0)) TH_LOG("the cancelled NOP reads as done");
	cbs[0] = cb_wait(a, seq);
	ASSERT_EQ(0, submit(fd, b, cbs, 1, 0, &wseq));
	EXPECT_EQ(-EPIPE, wait_seq(fd, b, wseq, 10000))
		TH_LOG("a WAIT on a cancelled CB passed after its queue's reset");
	EXPECT_EQ(FLEX_FAULT_DEPENDENCY, queue_status(fd, b).fault_code);
	close(fd);
}

TEST(queue_status_acknowledges_only_when_asked)
{
	struct pollfd pfd;
	struct flex_queue_status st;
	int fd = flex_open(FLEX_PF), q;

	ASSERT_LE(0, fd);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	ASSERT_EQ(0, submit(fd, q, &(struct flex_cb){ .opcode = FLEX_CB_NOP }, 1, 0, NULL));
	ASSERT_EQ(1, poll(&pfd, 1, 5000));
	st = queue_status(fd, q);
	EXPECT_EQ(1, st.completed);
	EXPECT_EQ(1, poll(&pfd, 1, 0)) TH_LOG("a plain status read acknowledged completions");
	st = (struct flex_queue_status){ .queue_id = q, .flags = FLEX_STATUS_ACK };
	EXPECT_EQ(0, flex_ioctl(fd, FLEX_IOCTL_QUEUE_STATUS, &st));
	EXPECT_EQ(0, poll(&pfd, 1, 0));
	st = (struct flex_queue_status){ .queue_id = q, .flags = 2 };
	EXPECT_EQ(-EINVAL, flex_ioctl(fd, FLEX_IOCTL_QUEUE_STATUS, &st));
	close(fd);
}

/* On a VF region_id 0 is a table entry: a flag says the address is one. */
TEST(a_fault_says_whether_its_address_names_a_region)
{
	struct flex_region_acquire r0;
	struct flex_queue_status st;
	struct prog p;
	unsigned char *m;
	struct flex_cb cb = { .opcode = FLEX_CB_COMPUTE };
	int fd, q;

	set_numvfs(0);
	ASSERT_EQ(0, set_numvfs(1));
	fd = flex_open("/dev/flex0vf0");
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &r0));
	ASSERT_EQ(0, r0.region_id);
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	m = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, r0.mmap_offset);
	ASSERT_NE(MAP_FAILED, m);
	cb.compute.program = (struct flex_va){ 0, 0 };
	cb.compute.segment_mask = 1;
	cb.compute.segments[0] = (struct flex_va){ 0, 0 };

	/* A FILL past the end of region 0: an address in region 0. */
	prog_init(&p, 0);
	prog_emit(&p, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, FLEX_ADDR(0, 2 * MiB), 1ULL, 0ULL);
	prog_emit(&p, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	memcpy(m, &p, prog_size(&p));
	EXPECT_EQ(-ERANGE, run_cb(fd, q, cb));
	st = queue_status(fd, q);
	EXPECT_EQ(FLEX_FAULT_ADDR_VALID, st.fault_flags);
	EXPECT_EQ(0, st.fault_addr.region_id);
	EXPECT_EQ(2 * MiB, st.fault_addr.offset);
	ASSERT_EQ(0, queue_reset(fd, q));

	/* A FILL beyond the device limits: no address. */
	prog_init(&p, 0);
	prog_emit(&p, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, FLEX_ADDR(0, 0),
		  (__u64)FLEX_ISA_MAX_ELEMENTS + 1, 0ULL);
	prog_emit(&p, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	memcpy(m, &p, prog_size(&p));
	EXPECT_EQ(-E2BIG, run_cb(fd, q, cb));
	EXPECT_EQ(0, queue_status(fd, q).fault_flags);
	munmap(m, 2 * MiB);
	close(fd);
	EXPECT_EQ(0, set_numvfs(0));
}

/*
 * A FILL that would pass the function's backing quota faults before it
 * writes anything, as isa.rst promises.
 */
TEST(a_fill_past_the_backing_limit_writes_nothing)
{
	struct flex_region_acquire pr, d;
	char old[32], quota[32];
	struct prog p;
	unsigned char *m, *dm;
	struct flex_cb cb = { .opcode = FLEX_CB_COMPUTE };
	long long resident;
	size_t i, changed = 0;
	int fd = flex_open(FLEX_PF), q;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &pr));
	ASSERT_EQ(0, flex_acquire(fd, 4 * MiB, &d));
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, q);
	m = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pr.mmap_offset);
	dm = mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, d.mmap_offset);
	ASSERT_NE(MAP_FAILED, m);
	ASSERT_NE(MAP_FAILED, dm);
	memset(dm, 0x77, 64 * 1024);	/* the first 16 pages are backed */
	prog_init(&p, 0);
	prog_emit(&p, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, FLEX_ADDR(0, 0),
		  (__u64)(MiB / 4), 0x12345678ULL);
	prog_emit(&p, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	memcpy(m, &p, prog_size(&p));
	cb.compute.program = (struct flex_va){ pr.region_id, 0 };
	cb.compute.segment_mask = 1;
	cb.compute.segments[0] = (struct flex_va){ d.region_id, 0 };

	/* Room for 64 KiB more backing: the 1 MiB FILL does not fit. */
	ASSERT_EQ(0, sysfs_read(FLEX_SYSFS "/quota_backing", old, sizeof(old)));
	resident = sysfs_num(FLEX_SYSFS "/backing_used");
	snprintf(quota, sizeof(quota), "%lld", resident + 64 * 1024);
	ASSERT_EQ(0, sysfs_write(FLEX_SYSFS "/quota_backing", quota));
	EXPECT_EQ(-ENOSPC, run_cb(fd, q, cb));
	sysfs_write(FLEX_SYSFS "/quota_backing", old);
	EXPECT_EQ(FLEX_FAULT_BACKING, queue_status(fd, q).fault_code);
	for (i = 0; i < 64 * 1024; i++)
		changed += dm[i] != 0x77;
	EXPECT_EQ(0, changed) TH_LOG("a refused FILL wrote %zu bytes", changed);
	munmap(m, 2 * MiB);
	munmap(dm, 4 * MiB);
	close(fd);
}

struct waiter {
	int fd, q, err;
	__u64 seq;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;

	w->err = wait_seq(w->fd, w->q, w->seq, 20000);
	return NULL;
}

/* A CB cancelled by QUEUE_DESTROY never ran: a WAIT on it says so. */
TEST(a_wait_on_a_destroyed_queue_says_cancelled)
{
	struct waiter w = { 0 };
	pthread_t t;
	int fd = flex_open(FLEX_PF);

	ASSERT_LE(0, fd);
	w.fd = fd;
	w.q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LT(0, w.q);
	ASSERT_EQ(0, engines_pause(1));
	ASSERT_EQ(0, submit(fd, w.q, &(struct flex_cb){ .opcode = FLEX_CB_NOP }, 1, 0, &w.seq));
	ASSERT_EQ(0, pthread_create(&t, NULL, wait_thread, &w));
	usleep(200 * 1000);	/* the waiter blocks on the CB's fence */
	EXPECT_EQ(0, queue_destroy(fd, w.q));
	pthread_join(t, NULL);
	engines_pause(0);
	EXPECT_EQ(-ECANCELED, w.err) TH_LOG("a wait for a CB that never ran returned %d", w.err);
	close(fd);
}

/* ---- found by the fuzzer ---- */

static void *churn_thread(void *arg)
{
	struct race *r = arg;
	struct flex_region_acquire a;

	while (!r->stop)
		if (!flex_acquire(r->fd, 64 * MiB, &a))
			flex_release(r->fd, a.region_id);
	return NULL;
}

/*
 * QUERY's free and largest_free are one snapshot: with regions coming and
 * going, the largest free range is never larger than all that is free.
 * (The fuzzer saw it about once in 5-10 minutes; this races harder.)
 */
TEST(query_never_reports_more_largest_free_than_free)
{
	struct race r = { 0 };
	struct flex_query q;
	pthread_t t[2];
	long bad = 0, n;
	__s64 t0;
	int fd = flex_open(FLEX_PF), i;

	ASSERT_LE(0, fd);
	r.fd = flex_open(FLEX_PF);
	ASSERT_LE(0, r.fd);
	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn_thread, &r));
	t0 = now_ns();
	for (n = 0; ms_since(t0) < 3000; n++) {
		q = flex_query(fd);
		if (q.largest_free > q.free)
			bad++;
	}
	r.stop = 1;
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, bad) TH_LOG("%ld of %ld queries had largest_free > free", bad, n);
	close(r.fd);
	close(fd);
}

TEST_HARNESS_MAIN
