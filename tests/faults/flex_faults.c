// SPDX-License-Identifier: GPL-2.0
/*
 * flex_faults: the driver when things go wrong around it.
 *
 * (a) On any kernel, in the VM lane:
 *   kill      processes SIGKILLed at random points (setup, DMA and compute
 *             in flight, threads blocked in WAIT, SUBMIT and page faults):
 *             they exit promptly and leave the device clean;
 *   close     close() while other threads of the process wait, submit,
 *             compute and export fences on the same file;
 *   threads   many threads on one file (PF and VF), each verifying its
 *             data, then with hostile threads destroying and releasing
 *             whatever ids they guess;
 *   vfs       sriov_numvfs 0 refused (EBUSY) while a VF is open, has work
 *             in flight, or is held by a mapping; allowed afterwards;
 *             enable/disable racing opens;
 *   backing   the backing cap reached in the middle of a DMA: the CB faults
 *             FLEX_FAULT_BACKING, a compute write and a CPU touch past the
 *             cap fault too, and the device works once memory is freed;
 *   module    unload/reload cycles (needs FLEX_KO, the module's path):
 *             rmmod refused while a file, a mapping or an exported fence
 *             holds the module, allowed afterwards; the reloaded module
 *             works (it is left loaded with the parameters it had).
 * (b) On a kernel with fault injection (the debug lane; /proc/self/fail-nth):
 *   inject    failslab and fail_page_alloc injected, syzkaller-style with
 *             /proc/thread-self/fail-nth, into every allocation of every
 *             ioctl (each CB kind of SUBMIT too), of open(), mmap() and the
 *             page fault of a mapping, and of enabling VFs: for n = 1, 2,
 *             ... the n-th allocation of the call fails, until the call
 *             runs with none failed. Every call ends in success or a clean
 *             -ENOMEM, and the file (fdinfo) and the device (sysfs) hold
 *             exactly what the result says.
 *
 * Every scenario runs in a child process (a crash or hang is reported as
 * such), checks the kernel log for reports it caused, and must leave the
 * device clean. Output: TAP (plan at the end), then
 *   faults: cases <N> count
 * and the detail figures. Options: --only NAME[,NAME], --quick (fewer
 * iterations: the length used by `make check`), --seed N.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <linux/flex_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>

#include "flex_lane.h"

#define WAIT_MS		60000

static void read_params(void);
static int mod_unload(void);
static int mod_load(void);
static void contain_queue_leak(void);

/* Set when a queue was seen to outlive its place in its file. */
static int queue_leaked;

static struct {
	int quick;
	uint64_t seed;
	const char *only;
	const char *ko;
} opt;

struct fstats {
	uint64_t cases;		/* fault cases run: kills, closes, injections, ... */
	uint64_t injected;	/* calls that ran with an allocation failed */
	uint64_t enomem;	/* of which ended in -ENOMEM */
	uint64_t survived;	/* of which succeeded anyway */
};

static struct fstats *fst;

static void cases(uint64_t n)
{
	__atomic_fetch_add(&fst->cases, n, __ATOMIC_RELAXED);
}

static uint64_t rng;

static uint64_t rnd(uint64_t lo, uint64_t hi)
{
	return lane_range(&rng, lo, hi);
}

/* Checks inside a scenario: ok, or not ok naming the scenario. */
static const char *scen = "";

#define CHECK(cond, ...) ({						\
	int __ok = !!(cond);						\
	char __m[900];							\
	snprintf(__m, sizeof(__m), __VA_ARGS__);			\
	lane_check(__ok, "%s: %s", scen, __m);				\
	__ok;								\
})

/* Regions, queues and pins of one file, from its fdinfo. */
struct fsnap {
	long long regions, queues, pinned;
};

static struct fsnap fsnap(int fd)
{
	struct fsnap s = {
		.regions = fdinfo_num(fd, "flex-regions"),
		.queues = fdinfo_num(fd, "flex-queues"),
		.pinned = fdinfo_num(fd, "flex-pinned"),
	};
	return s;
}

/* A compute program of @n MATMULs of size x size x size over segment 0. */
static void build_matmuls(uint8_t *at, int n, uint64_t size)
{
	struct lane_prog *p = malloc(sizeof(*p));
	int i;

	lane_prog_init(p);
	for (i = 0; i < n && i < LANE_PROG_MAX_INSNS - 1; i++) {
		struct flex_insn *in = lane_prog_emit(p, FLEX_OP_MATMUL, FLEX_DT_I32, 0);

		in->arg[0] = FLEX_ADDR(0, 0);
		in->arg[1] = FLEX_ADDR(0, 4 * size * size);
		in->arg[2] = FLEX_ADDR(0, 8 * size * size);
		in->arg[3] = in->arg[4] = in->arg[5] = size;
		in->arg[6] = in->arg[7] = in->arg[8] = size;
	}
	lane_prog_emit(p, FLEX_OP_END, FLEX_DT_I32, 0);
	memcpy(at, p, lane_prog_size(p));
	free(p);
}

/* A FILL of @count words of @value at segment 0 + @off, then END. */
static size_t build_fill(void *at, uint64_t off, uint64_t count, uint32_t value)
{
	struct lane_prog p;
	struct flex_insn *in;

	lane_prog_init(&p);
	in = lane_prog_emit(&p, FLEX_OP_FILL, FLEX_DT_I32, 0);
	in->arg[0] = FLEX_ADDR(0, off);
	in->arg[1] = count;
	in->arg[2] = value;
	lane_prog_emit(&p, FLEX_OP_END, FLEX_DT_I32, 0);
	memcpy(at, &p, lane_prog_size(&p));
	return lane_prog_size(&p);
}

static struct flex_cb cb_compute(uint64_t prog_id, uint64_t off, uint64_t seg0_id)
{
	struct flex_cb cb = { .opcode = FLEX_CB_COMPUTE };

	cb.compute.program = (struct flex_va){ prog_id, off };
	cb.compute.segment_mask = 1;
	cb.compute.segments[0] = (struct flex_va){ seg0_id, 0 };
	return cb;
}

static void fill_pattern(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 131 + (i >> 9));
}

/* The lowest free fd number: what the next open would get. */
static int next_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static void *xalloc(size_t n)
{
	void *p = aligned_alloc(4096, (n + 4095) & ~4095UL);

	if (!p) {
		perror("aligned_alloc");
		exit(3);
	}
	memset(p, 0, n);
	return p;
}

/* ================= kill: processes killed at random points ================= */

struct busy_ctx {
	int fd;
	struct flex_region_acquire data, prog;
	uint8_t *pmap, *dmap;
	int q1, q2;
	uint8_t *buf;
	size_t buflen;
	int ready_fd;
	uint64_t rng;
};

static void signal_ready(struct busy_ctx *c)
{
	char b = 'r';

	if (c->ready_fd >= 0) {
		if (write(c->ready_fd, &b, 1) != 1)
			_exit(9);
		close(c->ready_fd);
		c->ready_fd = -1;
	}
}

/* DMA batches of 1-8 MiB, both ways, some waited for, some not. */
static void *busy_dma(void *arg)
{
	struct busy_ctx *c = arg;
	uint64_t s = c->rng ^ 1, seq;

	for (;;) {
		uint64_t n = lane_range(&s, 1, 8) * MiB - lane_range(&s, 0, 4095);
		uint64_t off = lane_range(&s, 0, c->data.size - n);
		struct flex_cb cbs[2] = {
			cb_dma(1, c->buf, c->data.region_id, off, n),
			cb_dma(0, c->buf + 4096, c->data.region_id, off, n - 4096),
		};

		if (lane_submit(c->fd, c->q1, cbs, 2, FLEX_SUBMIT_BLOCK, &seq))
			_exit(10);
		signal_ready(c);
		if (lane_chance(&s, 50))
			wait_seq(c->fd, c->q1, seq, WAIT_MS);
	}
	return NULL;
}

/* Long compute CBs behind WAITs on the DMA queue; fences exported and left open. */
static void *busy_compute(void *arg)
{
	struct busy_ctx *c = arg;
	uint64_t s = c->rng ^ 2, seq;
	struct flex_queue_status st;

	for (;;) {
		struct flex_cb cbs[2];
		int k = 0;

		lane_status(c->fd, c->q1, &st);
		if (st.submitted)
			cbs[k++] = cb_wait(c->q1, st.submitted);
		cbs[k++] = cb_compute(c->prog.region_id, 0, c->data.region_id);
		if (lane_submit(c->fd, c->q2, cbs, k, FLEX_SUBMIT_BLOCK, &seq))
			_exit(11);
		if (lane_chance(&s, 30))
			lane_fence_export(c->fd, c->q2, seq);	/* left open on purpose */
		if (lane_chance(&s, 50))
			wait_seq(c->fd, c->q2, seq, WAIT_MS);
	}
	return NULL;
}

/* Page faults on a mapping, and small regions coming and going. */
static void *busy_mm(void *arg)
{
	struct busy_ctx *c = arg;
	uint64_t s = c->rng ^ 3;

	for (;;) {
		struct flex_region_acquire a;
		uint64_t off = lane_range(&s, 0, c->data.size / 4096 - 1) * 4096;

		c->dmap[off] = (uint8_t)off;
		if (!flex_acquire(c->fd, 2 * MiB, &a))
			flex_release(c->fd, a.region_id);
	}
	return NULL;
}

static void busy_child(const char *dev, int ready_fd, uint64_t seed)
{
	struct busy_ctx c = { .ready_fd = ready_fd, .rng = seed };
	pthread_t t[3];

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	c.fd = flex_open(dev);
	if (c.fd < 0)
		_exit(4);
	if (flex_acquire(c.fd, 32 * MiB, &c.data) || flex_acquire(c.fd, 2 * MiB, &c.prog))
		_exit(5);
	c.pmap = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd,
		      c.prog.mmap_offset);
	c.dmap = mmap(NULL, c.data.size, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd,
		      c.data.mmap_offset);
	if (c.pmap == MAP_FAILED || c.dmap == MAP_FAILED)
		_exit(6);
	build_matmuls(c.pmap, 8, 64);
	c.q1 = queue_create(c.fd, FLEX_QUEUE_PRIO_NORMAL, 8);
	c.q2 = queue_create(c.fd, FLEX_QUEUE_PRIO_LOW, 8);
	if (c.q1 < 0 || c.q2 < 0)
		_exit(7);
	c.buflen = 8 * MiB + 8192;
	c.buf = xalloc(c.buflen);
	fill_pattern(c.buf, c.buflen, 7);
	if (pthread_create(&t[0], NULL, busy_dma, &c) ||
	    pthread_create(&t[1], NULL, busy_compute, &c) ||
	    pthread_create(&t[2], NULL, busy_mm, &c))
		_exit(8);
	pause();
	_exit(0);
}

/* Reaps @pid within @ms: its status, or -1 when it is still there. */
static int reap(pid_t pid, int ms)
{
	int64_t end = now_ns() + ms * 1000000LL;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0 || now_ns() > end)
			return -1;
		usleep(5000);
	}
}

static void dump_stacks(pid_t pid)
{
	char cmd[200];

	snprintf(cmd, sizeof(cmd), "for t in /proc/%d/task/*; do echo \"# $t: $(cat $t/wchan)\";"
		 " sed 's/^/#   /' $t/stack; done 2>/dev/null", (int)pid);
	fflush(stdout);
	if (system(cmd) < 0)
		printf("# (no stacks)\n");
}

static void scenario_kill(void)
{
	int n = opt.quick ? 3 : 24, i;
	double max_ms = 0;

	CHECK(!set_numvfs(1), "one VF enabled for the VF half");
	for (i = 0; i < n; i++) {
		const char *dev = i % 2 ? "/dev/flex0vf0" : FLEX_PF;
		int pipefd[2], status, before = (int)rnd(0, 3) == 0, ready;
		long delay_us = (long)rnd(0, 400000);
		struct lane_usage u;
		int64_t t0;
		char c, ubuf[200];
		pid_t pid;

		if (pipe(pipefd))
			exit(3);
		fflush(stdout);
		pid = fork();
		if (!pid) {
			close(pipefd[0]);
			busy_child(dev, pipefd[1], lane_seed_mix(opt.seed, i));
		}
		close(pipefd[1]);
		if (before) {
			/* Somewhere in setup: open, acquire, mmap, the first submissions. */
			usleep(rnd(0, 30000));
			ready = 0;
		} else {
			struct pollfd p = { .fd = pipefd[0], .events = POLLIN };

			ready = poll(&p, 1, 30000) == 1 && read(pipefd[0], &c, 1) == 1;
			usleep(delay_us);
		}
		close(pipefd[0]);
		t0 = now_ns();
		kill(pid, SIGKILL);
		status = reap(pid, 15000);
		if (status == -1) {
			CHECK(0, "kill #%d (%s): the process did not exit within 15 s of SIGKILL", i, dev);
			dump_stacks(pid);
			return;
		}
		cases(1);
		if (lane_seconds_since(t0) * 1000 > max_ms)
			max_ms = lane_seconds_since(t0) * 1000;
		lane_wait_clean(5000, &u);
		lane_usage_str(&u, ubuf, sizeof(ubuf));
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && lane_usage_clean(&u),
		      "kill #%d on %s %s: %s after SIGKILL in %.0f ms, device %s (%s)", i, dev,
		      before ? "during setup" : ready ? "with DMA, compute and faults in flight" :
		      "(never got ready)",
		      WIFSIGNALED(status) ? "died" : "EXITED", lane_seconds_since(t0) * 1000,
		      lane_usage_clean(&u) ? "clean" : "NOT clean", ubuf);
		if (WIFEXITED(status))
			lane_diag("the child exited %d (4-11: a setup step failed)", WEXITSTATUS(status));
	}
	CHECK(!set_numvfs(0), "VF disabled afterwards");
	printf("faults: kill_exit_max %.0f ms\n", max_ms);
}

/* ================= close: close() while other threads work ================= */

struct closer_arg {
	int fd, q;
	uint64_t seq;
	int err;
	int64_t ms;
};

static void *wait_thread(void *arg)
{
	struct closer_arg *a = arg;
	int64_t t0 = now_ns();

	a->err = wait_seq(a->fd, a->q, a->seq, 20000);
	a->ms = (now_ns() - t0) / 1000000;
	return NULL;
}

static void *submit_thread(void *arg)
{
	struct closer_arg *a = arg;
	struct flex_cb nop = lane_cb_nop();

	a->err = lane_submit(a->fd, a->q, &nop, 1, FLEX_SUBMIT_BLOCK, &a->seq);
	return NULL;
}

struct hammer {
	int fd, id;
	volatile int *stop;
	int bad_err;		/* the first errno outside the allowed set */
	const char *bad_op;
	long ops;
};

/* Allowed once the fd is closed: EBADF, or ENOTTY if a fence fd took its number. */
static int hammer_ok(int err)
{
	return !err || err == -EBADF || err == -ENOTTY;
}

static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;
	uint64_t s = lane_seed_mix(opt.seed, 100 + h->id), seq;
	uint8_t *buf = xalloc(2 * MiB);
	struct flex_region_acquire r;
	int q = queue_create(h->fd, FLEX_QUEUE_PRIO_NORMAL, 0), err = 0;

	if (q < 0 || (err = flex_acquire(h->fd, 4 * MiB, &r))) {
		/* The fd may be closed already. */
		if (!hammer_ok(q < 0 ? q : err)) {
			h->bad_err = q < 0 ? q : err;
			h->bad_op = "setup";
		}
		free(buf);
		return NULL;
	}
	while (!*h->stop) {
		int kind = (int)lane_range(&s, 0, 3);
		struct flex_cb cb;

		switch (kind) {
		case 0:
			h->bad_op = "submit DMA";
			cb = cb_dma(lane_chance(&s, 50), buf, r.region_id, 0,
					 lane_range(&s, 1, 2 * MiB));
			err = lane_submit(h->fd, q, &cb, 1, FLEX_SUBMIT_BLOCK, &seq);
			if (!err) {
				h->bad_op = "wait DMA";
				err = wait_seq(h->fd, q, seq, WAIT_MS);
			}
			break;
		case 1: {
			struct flex_region_acquire a;

			h->bad_op = "acquire/release";
			err = flex_acquire(h->fd, 2 * MiB, &a);
			if (!err)
				err = flex_release(h->fd, a.region_id);
			break;
		}
		case 2: {
			int f;

			h->bad_op = "fence export";
			cb = lane_cb_nop();
			err = lane_submit(h->fd, q, &cb, 1, FLEX_SUBMIT_BLOCK, &seq);
			if (!err) {
				f = lane_fence_export(h->fd, q, seq);
				if (f >= 0) {
					struct pollfd p = { .fd = f, .events = POLLIN };

					poll(&p, 1, WAIT_MS);
					close(f);
				} else {
					err = f;
				}
			}
			break;
		}
		default: {
			struct flex_queue_status st;

			h->bad_op = "status";
			err = lane_status(h->fd, q, &st);
			break;
		}
		}
		h->ops++;
		if (err) {
			if (!hammer_ok(err))
				h->bad_err = err;
			break;	/* the fd is gone (or the error is reported) */
		}
	}
	free(buf);
	return NULL;
}

static void scenario_close(void)
{
	struct flex_region_acquire r;
	struct closer_arg a = { 0 };
	struct lane_usage u;
	uint8_t *buf = xalloc(MiB);
	pthread_t t;
	int64_t t0;
	int err, i, rounds = opt.quick ? 2 : 12;
	struct flex_cb cb;

	/* A thread blocked in WAIT on a held-back CB. */
	a.fd = flex_open(FLEX_PF);
	a.q = queue_create(a.fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	if (!CHECK(a.fd >= 0 && a.q > 0 && !flex_acquire(a.fd, 2 * MiB, &r) &&
		   !engines_pause(1), "setup for close during WAIT"))
		return;
	cb = cb_dma(1, buf, r.region_id, 0, MiB);
	err = lane_submit(a.fd, a.q, &cb, 1, 0, &a.seq);
	pthread_create(&t, NULL, wait_thread, &a);
	usleep(200000);
	t0 = now_ns();
	err = close(a.fd) ? -errno : 0;
	CHECK(!err && lane_seconds_since(t0) < 5.0, "close() while another thread waits returns "
	      "at once: %s in %.0f ms", lane_errname(err), lane_seconds_since(t0) * 1000);
	usleep(100000);
	engines_pause(0);
	pthread_join(t, NULL);
	CHECK(a.err == 0, "the WAIT that outlived close() ends with the CB's result: expected 0, "
	      "got %s after %lld ms", lane_errname(a.err), (long long)a.ms);
	CHECK(lane_wait_clean(5000, &u), "device clean once the waiter returned");
	cases(1);

	/* A thread blocked in SUBMIT on a full queue. */
	a.fd = flex_open(FLEX_PF);
	a.q = queue_create(a.fd, FLEX_QUEUE_PRIO_NORMAL, 1);
	engines_pause(1);
	cb = lane_cb_nop();
	err = lane_submit(a.fd, a.q, &cb, 1, 0, &a.seq);
	CHECK(!err, "a NOP fills a queue of depth 1: %s", lane_errname(err));
	pthread_create(&t, NULL, submit_thread, &a);
	usleep(200000);
	t0 = now_ns();
	err = close(a.fd) ? -errno : 0;
	CHECK(!err && lane_seconds_since(t0) < 5.0, "close() while another thread is blocked in "
	      "SUBMIT returns at once: %s in %.0f ms", lane_errname(err),
	      lane_seconds_since(t0) * 1000);
	usleep(100000);
	engines_pause(0);
	pthread_join(t, NULL);
	CHECK(a.err == 0 && a.seq == 2, "the blocked SUBMIT completes once there is room: "
	      "expected 0 and seqno 2, got %s and %llu", lane_errname(a.err),
	      (unsigned long long)a.seq);
	CHECK(lane_wait_clean(5000, &u), "device clean once the submitter returned");
	cases(1);

	/* Threads hammering one file (DMA, regions, fences) while it is closed. */
	CHECK(!set_numvfs(1), "one VF enabled");
	for (i = 0; i < rounds; i++) {
		const char *dev = i % 2 ? "/dev/flex0vf0" : FLEX_PF;
		struct hammer h[4];
		volatile int stop = 0;
		pthread_t th[4];
		int fd = flex_open(dev), k, bad = 0;
		long ops = 0;
		char why[200] = "";

		if (fd < 0) {
			CHECK(0, "open %s: %s", dev, lane_errname(fd));
			break;
		}
		for (k = 0; k < 4; k++) {
			h[k] = (struct hammer){ .fd = fd, .id = i * 4 + k, .stop = &stop };
			pthread_create(&th[k], NULL, hammer_thread, &h[k]);
		}
		usleep(rnd(50000, 400000));
		t0 = now_ns();
		err = close(fd) ? -errno : 0;
		usleep(200000);
		stop = 1;
		for (k = 0; k < 4; k++) {
			pthread_join(th[k], NULL);
			ops += h[k].ops;
			if (h[k].bad_err && !bad++)
				snprintf(why, sizeof(why), "; thread %d got %s in %s", k,
					 lane_errname(h[k].bad_err), h[k].bad_op);
		}
		lane_wait_clean(5000, &u);
		cases(1);
		CHECK(!err && !bad && lane_usage_clean(&u), "close() of a %s file under 4 busy "
		      "threads (%ld calls): close %s, every call 0 or -EBADF afterwards%s; device %s "
		      "%.1f s after the close", i % 2 ? "VF" : "PF", ops, lane_errname(err), why,
		      lane_usage_clean(&u) ? "clean" : "NOT clean", lane_seconds_since(t0));
	}
	CHECK(!set_numvfs(0), "VF disabled");
	free(buf);
}

/* ================= threads: many threads on one file ================= */

/* Generic netlink, raw: the family id of "flex", or -1. */
static int nl_family(int sk)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
		char buf[64];
	} req;
	static char resp[8192];
	struct nlattr *a;
	struct nlmsghdr *n;
	ssize_t len;
	int rem;

	memset(&req, 0, sizeof(req));
	req.n.nlmsg_type = GENL_ID_CTRL;
	req.n.nlmsg_flags = NLM_F_REQUEST;
	req.n.nlmsg_seq = 1;
	req.g.cmd = CTRL_CMD_GETFAMILY;
	req.g.version = 1;
	a = (struct nlattr *)req.buf;
	a->nla_type = CTRL_ATTR_FAMILY_NAME;
	a->nla_len = NLA_HDRLEN + sizeof(FLEX_GENL_NAME);
	memcpy((char *)a + NLA_HDRLEN, FLEX_GENL_NAME, sizeof(FLEX_GENL_NAME));
	req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN) + NLA_ALIGN(a->nla_len);
	if (send(sk, &req, req.n.nlmsg_len, 0) < 0)
		return -1;
	len = recv(sk, resp, sizeof(resp), 0);
	n = (struct nlmsghdr *)resp;
	if (len <= 0 || !NLMSG_OK(n, (size_t)len) || n->nlmsg_type == NLMSG_ERROR)
		return -1;
	a = (struct nlattr *)((char *)NLMSG_DATA(n) + GENL_HDRLEN);
	rem = (int)n->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	for (; rem >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
	     rem -= NLA_ALIGN(a->nla_len), a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))
		if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
			return *(uint16_t *)((char *)a + NLA_HDRLEN);
	return -1;
}

/*
 * The queues the device lists over netlink (FLEX_CMD_QUEUE_GET dump) for
 * process @pid, or -1 when it cannot tell. Only safe while the owner's
 * files are open: a queue that outlived its file crashes the dump.
 */
static int netlink_queues_of(pid_t pid)
{
	struct {
		struct nlmsghdr n;
		struct genlmsghdr g;
	} req;
	static char buf[1 << 16];
	int sk, fam, count = 0, done = 0;

	if (queue_leaked)
		return -1;
	sk = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (sk < 0)
		return -1;
	fam = nl_family(sk);
	if (fam < 0) {
		close(sk);
		return -1;
	}
	memset(&req, 0, sizeof(req));
	req.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	req.n.nlmsg_type = (uint16_t)fam;
	req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.n.nlmsg_seq = 2;
	req.g.cmd = FLEX_CMD_QUEUE_GET;
	req.g.version = FLEX_GENL_VERSION;
	if (send(sk, &req, req.n.nlmsg_len, 0) < 0) {
		close(sk);
		return -1;
	}
	while (!done) {
		ssize_t len = recv(sk, buf, sizeof(buf), 0);
		struct nlmsghdr *n = (struct nlmsghdr *)buf;

		if (len <= 0) {
			count = -1;
			break;
		}
		for (; NLMSG_OK(n, (size_t)len); n = NLMSG_NEXT(n, len)) {
			struct nlattr *a;
			int rem;

			if (n->nlmsg_type == NLMSG_DONE) {
				done = 1;
				break;
			}
			if (n->nlmsg_type == NLMSG_ERROR) {
				count = -1;
				done = 1;
				break;
			}
			a = (struct nlattr *)((char *)NLMSG_DATA(n) + GENL_HDRLEN);
			rem = (int)n->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
			for (; rem >= (int)NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= rem;
			     rem -= NLA_ALIGN(a->nla_len),
			     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len))) {
				struct nlattr *q;
				int qrem;

				if ((a->nla_type & NLA_TYPE_MASK) != FLEX_A_QUEUE)
					continue;
				q = (struct nlattr *)((char *)a + NLA_HDRLEN);
				qrem = a->nla_len - NLA_HDRLEN;
				for (; qrem >= (int)NLA_HDRLEN && q->nla_len >= NLA_HDRLEN &&
				     q->nla_len <= qrem; qrem -= NLA_ALIGN(q->nla_len),
				     q = (struct nlattr *)((char *)q + NLA_ALIGN(q->nla_len)))
					if ((q->nla_type & NLA_TYPE_MASK) == FLEX_QUEUE_A_OWNER_PID &&
					    *(uint32_t *)((char *)q + NLA_HDRLEN) == (uint32_t)pid)
						count++;
			}
		}
	}
	close(sk);
	return count;
}

/*
 * A queue lost by its file stays on the device with a pointer to the freed
 * file: the next netlink dump of queues dereferences it (a GPF that wedges
 * the guest). Reload the module, so that what runs after this meets a sane
 * driver; its exit WARNs about the queue, which fails the VM run as it
 * should. Called with the file closed.
 */
static void contain_queue_leak(void)
{
	int err;

	if (!opt.ko) {
		lane_diag("a queue outlived its file: a netlink dump of queues may now crash the "
			  "kernel (FLEX_KO not given, the module could not be reloaded)");
		return;
	}
	read_params();
	err = mod_unload() ?: mod_load();
	lane_diag("a queue outlived its file: module reloaded to contain it (%s)",
		  lane_errname(err));
	if (!err)
		queue_leaked = 0;
}

struct mt_arg {
	int fd, id, vf, hostile;
	volatile int *stop, *phase2;
	long ops, verified;
	char fail[300];
};

static uint64_t mt_ids[64];

static void *mt_worker(void *arg)
{
	struct mt_arg *m = arg;
	uint64_t s = lane_seed_mix(opt.seed, 1000 + m->id), seq;
	uint8_t *src = xalloc(MiB + 4096), *dst = xalloc(MiB + 4096);
	struct flex_region_acquire r = { 0 };
	int q = -1, err = 0, have = 0;

	while (!*m->stop && !m->fail[0]) {
		int p2 = *m->phase2;

		if (q < 0) {
			q = queue_create(m->fd, FLEX_QUEUE_PRIO_NORMAL, 0);
			if (q < 0) {
				snprintf(m->fail, sizeof(m->fail), "QUEUE_CREATE: %s", lane_errname(q));
				break;
			}
		}
		if (!have) {
			err = flex_acquire(m->fd, 2 * MiB * (m->vf ? 1 : lane_range(&s, 1, 3)), &r);
			if (err == -ENOSPC && (m->vf || p2)) {
				usleep(1000);
				continue;
			}
			if (err) {
				snprintf(m->fail, sizeof(m->fail), "REGION_ACQUIRE: %s", lane_errname(err));
				break;
			}
			have = 1;
			mt_ids[m->id % 64] = r.region_id;
		}
		if (lane_chance(&s, 10)) {
			err = flex_release(m->fd, r.region_id);
			have = 0;
			if (err && !((p2 || *m->phase2) && err == -ENOENT)) {
				snprintf(m->fail, sizeof(m->fail), "REGION_RELEASE: %s", lane_errname(err));
				break;
			}
			continue;
		}
		{
			uint64_t n = lane_range(&s, 1, MiB), off = lane_range(&s, 0, r.size - n);
			uint64_t ha = lane_range(&s, 0, 4095);
			struct flex_cb cbs[2] = {
				cb_dma(1, src + ha, r.region_id, off, n),
				cb_dma(0, dst + ha, r.region_id, off, n),
			};

			lane_fill_random(&s, src + ha, n);
			err = lane_submit(m->fd, q, cbs, 2, FLEX_SUBMIT_BLOCK, &seq);
			if (!err)
				err = wait_seq(m->fd, q, seq, WAIT_MS);
			m->ops++;
			/* The hostile threads may have started during the call. */
			p2 |= *m->phase2;
			if (!err) {
				if (!p2 && memcmp(src + ha, dst + ha, n)) {
					snprintf(m->fail, sizeof(m->fail), "DMA round trip of %llu bytes at "
						 "+0x%llx of region 0x%llx came back different",
						 (unsigned long long)n, (unsigned long long)off,
						 (unsigned long long)r.region_id);
					break;
				}
				if (!p2)
					m->verified += n;
				continue;
			}
			if (!p2) {
				snprintf(m->fail, sizeof(m->fail), "DMA round trip: %s", lane_errname(err));
				break;
			}
			/*
			 * Phase 2: the hostile threads took our queue or region (and
			 * ids get reused: a WAIT may name a newer queue, -EINVAL).
			 */
			if (err == -ENOENT || err == -EIO || err == -ENXIO || err == -ECANCELED ||
			    err == -ERANGE || err == -EINVAL) {
				if (lane_queue_op(m->fd, FLEX_IOCTL_QUEUE_RESET, q) == -ENOENT)
					q = -1;
				have = 0;
				continue;
			}
			snprintf(m->fail, sizeof(m->fail), "phase 2 DMA: unexpected %s", lane_errname(err));
			break;
		}
	}
	free(src);
	free(dst);
	return NULL;
}

/* Destroys, resets and releases whatever ids it guesses. */
static void *mt_hostile(void *arg)
{
	struct mt_arg *m = arg;
	uint64_t s = lane_seed_mix(opt.seed, 2000 + m->id);

	while (!*m->stop) {
		int err, kind = (int)lane_range(&s, 0, 3);
		struct flex_queue_status st;

		if (!*m->phase2) {
			usleep(1000);
			continue;
		}
		switch (kind) {
		case 0:
			err = lane_queue_op(m->fd, FLEX_IOCTL_QUEUE_DESTROY, (uint32_t)lane_range(&s, 1, 12));
			break;
		case 1:
			err = flex_release(m->fd, mt_ids[lane_range(&s, 0, 63)]);
			break;
		case 2:
			err = lane_queue_op(m->fd, FLEX_IOCTL_QUEUE_RESET, (uint32_t)lane_range(&s, 1, 12));
			break;
		default:
			err = lane_status(m->fd, (uint32_t)lane_range(&s, 1, 12), &st);
		}
		m->ops++;
		if (err && err != -ENOENT && err != -EBUSY && !m->fail[0])
			snprintf(m->fail, sizeof(m->fail), "hostile call %d: unexpected %s", kind,
				 lane_errname(err));
	}
	return NULL;
}

static void threads_on(const char *dev, int vf, int nthreads, double secs, int hostile)
{
	struct mt_arg m[12];
	pthread_t t[12];
	volatile int stop = 0, phase2 = 0;
	int fd = flex_open(dev), i, bad = 0;
	long ops = 0, verified = 0;
	char why[400] = "";
	struct lane_usage u;
	int64_t t0;
	double join_s;

	if (!CHECK(fd >= 0, "open %s: %s", dev, lane_errname(fd)))
		return;
	memset(mt_ids, 0, sizeof(mt_ids));
	for (i = 0; i < nthreads + hostile; i++) {
		m[i] = (struct mt_arg){ .fd = fd, .id = i, .vf = vf, .stop = &stop, .phase2 = &phase2 };
		pthread_create(&t[i], NULL, i < nthreads ? mt_worker : mt_hostile, &m[i]);
	}
	usleep((useconds_t)(secs * 1e6));
	if (hostile) {
		phase2 = 1;
		usleep((useconds_t)(secs * 0.5e6));
	}
	stop = 1;
	t0 = now_ns();
	for (i = 0; i < nthreads + hostile; i++) {
		pthread_join(t[i], NULL);
		ops += m[i].ops;
		verified += m[i].verified;
		if (m[i].fail[0] && !bad++)
			snprintf(why, sizeof(why), ": thread %d: %s", i, m[i].fail);
	}
	join_s = lane_seconds_since(t0);
	{
		/* Every queue the device knows of this process is in the file. */
		long long in_file = fdinfo_num(fd, "flex-queues");
		int listed = netlink_queues_of(getpid());

		if (listed < 0) {
			lane_diag("the flex netlink family did not answer: queue count not checked");
		} else if (!CHECK(listed == in_file, "%d threads on one %s file%s: the device lists "
				  "as many queues of this process over netlink as the file holds: "
				  "expected %lld (fdinfo flex-queues), got %d", nthreads,
				  vf ? "VF" : "PF", hostile ? " with hostile threads" : "", in_file,
				  listed)) {
			queue_leaked = 1;
		}
	}
	t0 = now_ns();
	close(fd);
	if (queue_leaked)
		contain_queue_leak();
	lane_wait_clean(5000, &u);
	cases(1);
	CHECK(!bad, "%d threads on one %s file%s: %ld calls, %ld bytes verified, no failure%s",
	      nthreads, vf ? "VF" : "PF", hostile ? " (then 2 hostile threads destroying and "
	      "releasing guessed ids)" : "", ops, verified, why);
	lane_diag("joined in %.1f s, clean %.1f s after the close", join_s,
		  lane_seconds_since(t0));
	CHECK(lane_usage_clean(&u), "device clean after closing the shared file");
}

struct race_q {
	int fd, id;
	volatile int *stop;
	long n;
	int bad;
};

static void *race_creator(void *arg)
{
	struct race_q *r = arg;

	while (!*r->stop) {
		int q = queue_create(r->fd, FLEX_QUEUE_PRIO_NORMAL, 4);

		if (q > 0)
			r->n++;
		else if (q != -ENOSPC && !r->bad)
			r->bad = q;
	}
	return NULL;
}

static void *race_destroyer(void *arg)
{
	struct race_q *r = arg;
	uint64_t s = lane_seed_mix(opt.seed, 3000 + r->id);

	while (!*r->stop) {
		int err = lane_queue_op(r->fd, FLEX_IOCTL_QUEUE_DESTROY,
					(uint32_t)lane_range(&s, 1, 4));

		if (!err)
			r->n++;
		else if (err != -ENOENT && !r->bad)
			r->bad = err;
	}
	return NULL;
}

/*
 * QUEUE_CREATE by 4 threads of one file while 3 more destroy ids 1..4:
 * every queue created is either destroyed or still in the file, as the
 * device's netlink listing must agree (checked before the file closes).
 */
static void create_destroy_race(double secs)
{
	struct race_q r[7];
	pthread_t t[7];
	volatile int stop = 0;
	int fd = flex_open(FLEX_PF), i, bad = 0, listed;
	long created = 0, destroyed = 0;
	long long in_file;

	if (!CHECK(fd >= 0, "open: %s", lane_errname(fd)))
		return;
	for (i = 0; i < 7; i++) {
		r[i] = (struct race_q){ .fd = fd, .id = i, .stop = &stop };
		pthread_create(&t[i], NULL, i < 4 ? race_creator : race_destroyer, &r[i]);
	}
	usleep((useconds_t)(secs * 1e6));
	stop = 1;
	for (i = 0; i < 7; i++) {
		pthread_join(t[i], NULL);
		*(i < 4 ? &created : &destroyed) += r[i].n;
		if (r[i].bad && !bad)
			bad = r[i].bad;
	}
	in_file = fdinfo_num(fd, "flex-queues");
	listed = netlink_queues_of(getpid());
	cases(1);
	CHECK(!bad, "QUEUE_CREATE by 4 threads racing QUEUE_DESTROY of ids 1..4 by 3 more: "
	      "%ld created, %ld destroyed, every error -ENOSPC/-ENOENT (got %s)", created,
	      destroyed, lane_errname(bad));
	if (listed < 0)
		lane_diag("the flex netlink family did not answer: queue count not checked");
	else if (!CHECK(listed == in_file, "after that race the device lists as many queues of this "
			"process over netlink as the file holds: expected %lld (fdinfo "
			"flex-queues), got %d%s", in_file, listed, listed != in_file ?
			": a queue was lost by the file but not by the device" : ""))
		queue_leaked = 1;
	close(fd);
	if (queue_leaked)
		contain_queue_leak();
}

static void scenario_threads(void)
{
	double secs = opt.quick ? 1 : 4;

	if (!opt.quick)
		threads_on(FLEX_PF, 0, 8, secs, 0);
	threads_on(FLEX_PF, 0, 6, secs, 2);
	create_destroy_race(opt.quick ? 2 : 8);
	CHECK(!set_numvfs(1), "one VF enabled");
	threads_on("/dev/flex0vf0", 1, 8, secs, 0);
	if (!opt.quick)
		threads_on("/dev/flex0vf0", 1, 6, secs, 2);
	CHECK(!set_numvfs(0), "VF disabled");
	if (queue_leaked)
		contain_queue_leak();
}

/* ================= vfs: disabling VFs while busy, and after ================= */

struct race_arg {
	volatile int *stop;
	long opens, refused, disables, busy;
	int bad;
	char why[200];
};

static void *vf_opener(void *arg)
{
	struct race_arg *a = arg;
	uint8_t buf[4096];

	while (!*a->stop) {
		int fd = flex_open("/dev/flex0vf0");
		struct flex_region_acquire r;

		if (fd < 0) {
			if (fd != -ENOENT && fd != -ENODEV && fd != -ENXIO && !a->bad++)
				snprintf(a->why, sizeof(a->why), "open: %s", lane_errname(fd));
			a->refused++;
			continue;
		}
		a->opens++;
		if (!flex_acquire(fd, 2 * MiB, &r)) {
			int q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
			struct flex_cb cb = cb_dma(1, buf, r.region_id, 0, sizeof(buf));
			uint64_t seq;

			if (q > 0)
				lane_submit(fd, q, &cb, 1, 0, &seq);	/* closed in flight */
		}
		close(fd);
	}
	return NULL;
}

static void *vf_toggler(void *arg)
{
	struct race_arg *a = arg;

	while (!*a->stop) {
		int err = set_numvfs(0);

		if (err == -EBUSY)
			a->busy++;
		else if (err && !a->bad++)
			snprintf(a->why, sizeof(a->why), "sriov_numvfs 0: %s", lane_errname(err));
		err = set_numvfs(2);
		if (!err)
			a->disables++;
		else if (err != -EBUSY && !a->bad++)
			snprintf(a->why, sizeof(a->why), "sriov_numvfs 2: %s", lane_errname(err));
	}
	return NULL;
}

static void scenario_vfs(void)
{
	struct flex_region_acquire r;
	struct lane_usage u;
	uint8_t *buf = xalloc(4 * MiB), *map;
	int fd, q, err, f, status;
	uint64_t seq = 0;
	struct flex_cb cb;
	pid_t pid;

	if (!CHECK(!set_numvfs(2), "2 VFs enabled"))
		return;
	/* Open, with DMA held back on the engines. */
	fd = flex_open("/dev/flex0vf0");
	q = fd >= 0 ? queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0) : -1;
	if (!CHECK(fd >= 0 && q > 0 && !flex_acquire(fd, 4 * MiB, &r), "vf0 open with a queue "
		   "and a region"))
		return;
	engines_pause(1);
	cb = cb_dma(1, buf, r.region_id, 0, 4 * MiB);
	err = lane_submit(fd, q, &cb, 1, 0, &seq);
	CHECK(!err, "DMA queued on vf0: %s", lane_errname(err));
	err = set_numvfs(0);
	CHECK(err == -EBUSY, "sriov_numvfs 0 while vf0 is open with DMA in flight: expected "
	      "-EBUSY, got %s", lane_errname(err));
	err = set_numvfs(1);
	CHECK(err == -EBUSY, "sriov_numvfs 2 -> 1: expected -EBUSY, got %s", lane_errname(err));
	CHECK(sysfs_num(FLEX_SYSFS "/sriov_numvfs") == 2 && lane_path_exists("/dev/flex0vf1"),
	      "still 2 VFs, their nodes there");
	engines_pause(0);
	err = wait_seq(fd, q, seq, WAIT_MS);
	CHECK(!err, "the DMA completes after the refused disable: %s", lane_errname(err));
	err = set_numvfs(0);
	CHECK(err == -EBUSY, "sriov_numvfs 0 while vf0 is open and idle: expected -EBUSY, got %s",
	      lane_errname(err));
	/* A sync_file of the VF outlives its file: it must not hold the VF up. */
	f = lane_fence_export(fd, q, seq);
	CHECK(f >= 0, "fence exported on vf0: %s", lane_errname(f));
	close(fd);
	err = set_numvfs(0);
	CHECK(!err, "sriov_numvfs 0 once vf0 is closed (a sync_file of it still open): %s",
	      lane_errname(err));
	CHECK(!lane_path_exists("/dev/flex0vf0") && !lane_path_exists(FLEX_SYSFS "vf0"),
	      "vf0's node and sysfs directory are gone");
	if (f >= 0) {
		CHECK(lane_sync_status(f) == 1, "the sync_file still reads signalled: got %d",
		      lane_sync_status(f));
		close(f);
	}
	err = flex_open("/dev/flex0vf0");
	CHECK(err == -ENOENT, "open of a disabled VF: expected -ENOENT, got %s", lane_errname(err));
	if (err >= 0)
		close(err);
	cases(4);

	/* A mapping holds the VF's file: disabling must wait for the munmap. */
	CHECK(!set_numvfs(2), "2 VFs enabled again");
	CHECK(sysfs_num(FLEX_SYSFS "vf0/table_used") == 0 && sysfs_num(FLEX_SYSFS "vf1/table_used") == 0,
	      "the new VFs' tables are empty");
	fd = flex_open("/dev/flex0vf1");
	if (!CHECK(fd >= 0 && !flex_acquire(fd, 2 * MiB, &r), "vf1 open with a region"))
		return;
	map = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, r.mmap_offset);
	CHECK(map != MAP_FAILED, "vf1 region mapped");
	if (map != MAP_FAILED)
		map[0] = 1;
	close(fd);
	err = set_numvfs(0);
	CHECK(err == -EBUSY, "sriov_numvfs 0 with vf1 closed but mapped: expected -EBUSY, got %s",
	      lane_errname(err));
	if (!err && map != MAP_FAILED) {
		/* Disabled under a live mapping: touching it must not crash the kernel. */
		fflush(stdout);
		pid = fork();
		if (!pid) {
			map[4096] = 2;
			_exit(map[0] == 1 ? 0 : 1);
		}
		waitpid(pid, &status, 0);
		lane_diag("a touch of the mapping of a disabled VF: %s %d",
			  WIFSIGNALED(status) ? "signal" : "exit",
			  WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	if (map != MAP_FAILED)
		munmap(map, 2 * MiB);
	err = set_numvfs(0);
	CHECK(!err || sysfs_num(FLEX_SYSFS "/sriov_numvfs") == 0, "sriov_numvfs 0 after the munmap: %s",
	      lane_errname(err));
	CHECK(lane_wait_clean(5000, &u), "device clean after the VFs went");
	cases(2);

	/* Opens racing enable/disable. */
	{
		struct race_arg a = { 0 }, b = { 0 };
		volatile int stop = 0;
		pthread_t t1, t2, t3;

		a.stop = b.stop = &stop;
		set_numvfs(2);
		pthread_create(&t1, NULL, vf_opener, &a);
		pthread_create(&t3, NULL, vf_opener, &b);
		pthread_create(&t2, NULL, vf_toggler, &b);
		usleep(opt.quick ? 1000000 : 5000000);
		stop = 1;
		pthread_join(t1, NULL);
		pthread_join(t3, NULL);
		pthread_join(t2, NULL);
		err = set_numvfs(0);
		cases(1);
		CHECK(!a.bad && !b.bad && !err, "opens of vf0 racing enable/disable: %ld opens, %ld "
		      "refused, %ld enables, %ld disables refused busy; every result clean%s%s%s%s",
		      a.opens + b.opens, a.refused + b.refused, b.disables, b.busy,
		      a.bad ? "; " : "", a.why, b.bad ? "; " : "", b.why);
		CHECK(lane_wait_clean(5000, &u), "device clean after the race");
	}
	free(buf);
}

/* ================= backing: the backing cap reached mid-DMA ================= */

static void scenario_backing(void)
{
	long long cap = sysfs_num(FLEX_SYSFS "/backing_cap"), res;
	struct flex_region_acquire r, p;
	struct flex_queue_status st;
	const uint64_t chunk = 8 * MiB;
	uint64_t size, off, seq, at;
	uint8_t *buf = xalloc(chunk), *back = xalloc(chunk), *pm, *map;
	int fd = flex_open(FLEX_PF), q, err, status, fd2, q2;
	struct flex_cb cbs[64], cb;
	struct lane_usage u;
	int n = 0;
	pid_t pid;

	if (!CHECK(cap >= 16 * (long long)MiB && cap <= (1LL << 30) && fd >= 0,
		   "backing_cap %lld (16 MiB to 1 GiB for this test), PF open", cap))
		return;
	if (!CHECK(lane_wait_clean(5000, &u), "nothing else resident (resident %lld)", u.resident))
		return;
	size = ((uint64_t)cap + 64 * MiB + 2 * MiB - 1) & ~(2 * MiB - 1);
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	if (!CHECK(q > 0 && !flex_acquire(fd, size, &r) && !flex_acquire(fd, 2 * MiB, &p),
		   "a region of %llu MiB (backing cap + 64 MiB) and a program region",
		   (unsigned long long)(size >> 20)))
		return;
	fill_pattern(buf, chunk, 3);
	/*
	 * Fill it in one batch of 8 MiB DMAs up to 3 MiB short of the cap,
	 * then one more 8 MiB DMA, which meets the cap 3 MiB into itself, and
	 * one behind it (cancelled by the fault).
	 */
	for (off = 0; off + chunk <= (uint64_t)cap - 3 * MiB && n < 60; off += chunk)
		cbs[n++] = cb_dma(1, buf, r.region_id, off, chunk);
	if (off < (uint64_t)cap - 3 * MiB)
		cbs[n++] = cb_dma(1, buf, r.region_id, off, cap - 3 * MiB - off);
	off = cap - 3 * MiB;
	cbs[n++] = cb_dma(1, buf, r.region_id, off, chunk);
	cbs[n++] = cb_dma(1, buf, r.region_id, off + chunk, chunk);
	err = lane_submit(fd, q, cbs, n, 0, &seq);
	if (!CHECK(!err, "%d DMAs of 8 MiB submitted: %s", n, lane_errname(err)))
		return;
	err = wait_seq(fd, q, seq, WAIT_MS);
	lane_status(fd, q, &st);
	at = st.fault_addr.offset;
	CHECK(err == -ENOSPC && st.fault_code == FLEX_FAULT_BACKING &&
	      st.fault_opcode == FLEX_CB_DMA_TO_DEVICE && st.fault_addr.region_id == r.region_id &&
	      at == (uint64_t)cap && st.fault_seqno == seq - 1,
	      "the DMA that meets the cap 3 MiB into itself faults there: expected -ENOSPC, "
	      "FLEX_FAULT_BACKING, a DMA to the device, at {0x%llx, +0x%llx}, seqno %llu; got %s, "
	      "code %u, opcode %u, at {0x%llx, +0x%llx}, seqno %llu",
	      (unsigned long long)r.region_id, (unsigned long long)cap,
	      (unsigned long long)(seq - 1), lane_errname(err), st.fault_code, st.fault_opcode,
	      (unsigned long long)st.fault_addr.region_id, (unsigned long long)at,
	      (unsigned long long)st.fault_seqno);
	res = sysfs_num(FLEX_SYSFS "/resident");
	CHECK(res <= cap && res >= cap - 4096, "resident at the cap: %lld of %lld", res, cap);
	/* What was written before the cap is intact. */
	cb = cb_dma(0, back, r.region_id, 0, chunk);
	err = lane_queue_op(fd, FLEX_IOCTL_QUEUE_RESET, q);
	err = err ?: lane_submit(fd, q, &cb, 1, 0, &seq) ?: wait_seq(fd, q, seq, WAIT_MS);
	CHECK(!err && !memcmp(buf, back, chunk), "reset, and the first 8 MiB read back intact: %s",
	      lane_errname(err));
	/* A compute write past the cap faults too, and writes nothing. */
	pm = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, p.mmap_offset);
	if (pm == MAP_FAILED) {
		CHECK(0, "mmap of an unbacked region at the cap: %s", strerror(errno));
	} else {
		/* A DMA into the unbacked region faults at once. */
		size_t len = build_fill(buf, size - 4 * MiB, 1024, 0x77);

		cb = cb_dma(1, buf, p.region_id, 0, len);
		err = lane_submit(fd, q, &cb, 1, 0, &seq) ?: wait_seq(fd, q, seq, WAIT_MS);
		CHECK(err == -ENOSPC, "a DMA of a program into an unbacked page past the cap: "
		      "expected -ENOSPC, got %s", lane_errname(err));
		lane_queue_op(fd, FLEX_IOCTL_QUEUE_RESET, q);
		/* A child touches the unbacked program page: SIGBUS. */
		fflush(stdout);
		pid = fork();
		if (!pid) {
			pm[0] = 1;
			_exit(0);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS, "a CPU touch past the cap "
		      "raises SIGBUS: got %s %d", WIFSIGNALED(status) ? "signal" : "exit",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
		munmap(pm, 2 * MiB);
	}
	/* Compute: a FILL into unbacked memory past the cap faults BACKING. */
	build_fill(buf, size - 4 * MiB, 1024, 0x77);
	cbs[0] = cb_dma(1, buf, r.region_id, 0, 4096);	/* backed page: the program */
	cbs[1] = cb_compute(r.region_id, 0, r.region_id);
	err = lane_submit(fd, q, cbs, 2, 0, &seq) ?: wait_seq(fd, q, seq, WAIT_MS);
	lane_status(fd, q, &st);
	CHECK(err == -ENOSPC && st.fault_code == FLEX_FAULT_BACKING &&
	      st.fault_opcode == FLEX_CB_COMPUTE, "a compute FILL past the cap: expected -ENOSPC "
	      "and FLEX_FAULT_BACKING, got %s code %u opcode %u", lane_errname(err), st.fault_code,
	      st.fault_opcode);
	lane_queue_op(fd, FLEX_IOCTL_QUEUE_RESET, q);
	/* Another tenant: its DMA faults too while the cap is full. */
	fd2 = flex_open(FLEX_PF);
	q2 = fd2 >= 0 ? queue_create(fd2, FLEX_QUEUE_PRIO_NORMAL, 0) : -1;
	CHECK(fd2 >= 0 && q2 > 0 && !flex_acquire(fd2, 2 * MiB, &p), "a second tenant");
	cb = cb_dma(1, buf, p.region_id, 0, 4096);
	err = lane_submit(fd2, q2, &cb, 1, 0, &seq) ?: wait_seq(fd2, q2, seq, WAIT_MS);
	CHECK(err == -ENOSPC, "the second tenant's DMA while the cap is full: expected -ENOSPC, "
	      "got %s", lane_errname(err));
	lane_queue_op(fd2, FLEX_IOCTL_QUEUE_RESET, q2);
	/* Freed, the device works again for both. */
	err = flex_release(fd, r.region_id);
	res = sysfs_num(FLEX_SYSFS "/resident");
	CHECK(!err && res == 0, "release of the full region: %s, resident %lld", lane_errname(err),
	      res);
	fill_pattern(buf, chunk, 9);
	memset(back, 0, chunk);
	cbs[0] = cb_dma(1, buf + 1, p.region_id, 7, 2 * MiB - 7);
	cbs[1] = cb_dma(0, back + 3, p.region_id, 7, 2 * MiB - 7);
	err = lane_submit(fd2, q2, cbs, 2, 0, &seq) ?: wait_seq(fd2, q2, seq, WAIT_MS);
	CHECK(!err && !memcmp(buf + 1, back + 3, 2 * MiB - 7), "after the release a round "
	      "trip works again: %s", lane_errname(err));
	err = flex_acquire(fd, 4 * MiB, &r);
	map = err ? MAP_FAILED : mmap(NULL, 4 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				      r.mmap_offset);
	if (map != MAP_FAILED) {
		memset(map, 0x42, 4 * MiB);
		munmap(map, 4 * MiB);
	}
	CHECK(map != MAP_FAILED, "and the CPU backs pages again (4 MiB written through mmap)");
	close(fd2);
	close(fd);
	cases(6);
	free(buf);
	free(back);
}

/* ================= module: unload and reload ================= */

static char mod_params[1024];

static void read_params(void)
{
	char cmd[] = "for p in /sys/module/flex/parameters/*; do printf '%s=%s ' "
		     "\"$(basename $p)\" \"$(cat $p)\"; done";
	FILE *f = popen(cmd, "r");
	size_t n = 0;

	mod_params[0] = '\0';
	if (f) {
		n = fread(mod_params, 1, sizeof(mod_params) - 1, f);
		pclose(f);
	}
	mod_params[n] = '\0';
}

static int mod_unload(void)
{
	return syscall(SYS_delete_module, "flex", O_NONBLOCK) ? -errno : 0;
}

static int mod_load(void)
{
	int fd = open(opt.ko, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = syscall(SYS_finit_module, fd, mod_params, 0) ? -errno : 0;
	close(fd);
	return err;
}

/* A quick round trip and a compute on a freshly loaded module. */
static int smoke(char *why, size_t len)
{
	struct flex_region_acquire r = { 0 };
	uint8_t src[8192], dst[8192];
	uint64_t seq;
	int fd = flex_open(FLEX_PF), q, err;
	struct flex_cb cbs[3];

	if (fd < 0) {
		snprintf(why, len, "open: %s", lane_errname(fd));
		return -1;
	}
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	err = q < 0 ? q : flex_acquire(fd, 2 * MiB, &r);
	fill_pattern(src, sizeof(src), 5);
	build_fill(src + 4096, 0x1000, 16, 0x12345678);
	cbs[0] = cb_dma(1, src, r.region_id, 0x10000, sizeof(src));
	cbs[1] = cb_compute(r.region_id, 0x11000, r.region_id);
	cbs[2] = cb_dma(0, dst, r.region_id, 0x10000, sizeof(src));
	err = err ?: lane_submit(fd, q, cbs, 3, 0, &seq) ?: wait_seq(fd, q, seq, WAIT_MS);
	close(fd);
	if (err) {
		snprintf(why, len, "round trip: %s", lane_errname(err));
		return -1;
	}
	if (memcmp(src, dst, sizeof(src))) {
		snprintf(why, len, "round trip came back different");
		return -1;
	}
	return 0;
}

/* Unload must be refused while @what holds the module, allowed after @release. */
static int reload_cycle(const char *what, int held_fd, void *map, size_t maplen)
{
	char why[200] = "";
	int err;

	err = mod_unload();
	CHECK(err == -EAGAIN || err == -EBUSY, "rmmod while %s: expected -EAGAIN/-EBUSY, got %s",
	      what, lane_errname(err));
	if (!err) {
		lane_diag("the module unloaded under %s: reloading to go on", what);
		mod_load();
		return -1;
	}
	if (map)
		munmap(map, maplen);
	if (held_fd >= 0)
		close(held_fd);
	err = mod_unload();
	if (!CHECK(!err && !lane_path_exists("/sys/module/flex") && !lane_path_exists(FLEX_PF),
		   "rmmod once %s is gone: %s", what, lane_errname(err)))
		return -1;
	err = mod_load();
	if (!CHECK(!err && lane_path_exists(FLEX_PF), "insmod %s %.300s: %s", opt.ko, mod_params,
		   lane_errname(err)))
		return -1;
	err = smoke(why, sizeof(why));
	cases(1);
	return CHECK(!err, "the reloaded module works (DMA and compute)%s%s", err ? ": " : "",
		     why) ? 0 : -1;
}

static void scenario_module(void)
{
	struct flex_region_acquire r;
	uint64_t seq;
	int fd, q, f, err;
	void *map;
	struct flex_cb nop = lane_cb_nop();

	if (!opt.ko || !lane_path_exists(opt.ko)) {
		lane_skip("%s: FLEX_KO (the module's path) not given: unload/reload not tested", scen);
		return;
	}
	read_params();
	lane_diag("module parameters: %s", mod_params);

	if (opt.quick) {
		/*
		 * One unload for three holders: a mapping of a closed file, a
		 * sync_file of a queued CB's fence (flex's fence ops), and a
		 * sync_file of a completed CB (a stub fence: it holds nothing).
		 */
		int f1 = -1, f2 = -1;
		uint64_t s2;

		fd = flex_open(FLEX_PF);
		q = fd >= 0 ? queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0) : -1;
		err = q < 0 ? q : flex_acquire(fd, 2 * MiB, &r);
		map = err ? MAP_FAILED : mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE,
					      MAP_SHARED, fd, r.mmap_offset);
		if (!CHECK(map != MAP_FAILED, "a file with a queue and a mapped region: %s",
			   lane_errname(err)))
			return;
		((uint8_t *)map)[0] = 1;
		err = lane_submit(fd, q, &nop, 1, 0, &s2) ?: wait_seq(fd, q, s2, WAIT_MS);
		f2 = err ? err : lane_fence_export(fd, q, s2);
		engines_pause(1);
		err = lane_submit(fd, q, &nop, 1, 0, &seq);
		f1 = err ? err : lane_fence_export(fd, q, seq);
		engines_pause(0);
		close(fd);
		if (!CHECK(f1 >= 0 && f2 >= 0, "sync_files of a queued and of a completed CB: %s, %s",
			   lane_errname(f1 < 0 ? f1 : 0), lane_errname(f2 < 0 ? f2 : 0)))
			return;
		err = mod_unload();
		CHECK(err == -EAGAIN || err == -EBUSY, "rmmod while a mapping of a closed file and "
		      "both sync_files are open: expected -EAGAIN/-EBUSY, got %s", lane_errname(err));
		munmap(map, 2 * MiB);
		usleep(100000);
		err = mod_unload();
		CHECK(err == -EAGAIN || err == -EBUSY, "rmmod once unmapped, the queued CB's "
		      "sync_file still open (status %d): expected -EAGAIN/-EBUSY, got %s",
		      lane_sync_status(f1), lane_errname(err));
		close(f1);
		err = mod_unload();
		cases(3);
		if (!CHECK(!err && !lane_path_exists("/sys/module/flex"), "rmmod with only the "
			   "completed CB's sync_file (a stub fence) open: %s", lane_errname(err)))
			return;
		CHECK(lane_sync_status(f2) == 1, "the stub sync_file still answers after the "
		      "unload: status %d", lane_sync_status(f2));
		close(f2);
		err = mod_load();
		if (!CHECK(!err && lane_path_exists(FLEX_PF), "insmod %s %.300s: %s", opt.ko,
			   mod_params, lane_errname(err)))
			return;
		{
			char why[200] = "";

			CHECK(!smoke(why, sizeof(why)), "the reloaded module works (DMA and "
			      "compute)%s%s", why[0] ? ": " : "", why);
		}
		return;
	}

	/* An open file (module_unload.sh does this one too). */
	if (!opt.quick) {
		fd = flex_open(FLEX_PF);
		if (reload_cycle("/dev/flex0 is open", fd, NULL, 0))
			return;
	}
	/* A mapping of a closed file. */
	fd = flex_open(FLEX_PF);
	map = fd >= 0 && !flex_acquire(fd, 2 * MiB, &r) ?
	      mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, r.mmap_offset) :
	      MAP_FAILED;
	if (!CHECK(map != MAP_FAILED, "a region mapped"))
		return;
	((uint8_t *)map)[0] = 1;
	close(fd);
	if (reload_cycle("a mapping of a closed file exists", -1, map, 2 * MiB))
		return;
	/* A pending fence in a sync_file of a closed file. */
	fd = flex_open(FLEX_PF);
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	engines_pause(1);
	err = lane_submit(fd, q, &nop, 1, 0, &seq);
	f = err ? err : lane_fence_export(fd, q, seq);
	engines_pause(0);
	CHECK(f >= 0, "a fence exported while its CB was queued: %s", lane_errname(f));
	close(fd);
	usleep(100000);
	if (f >= 0) {
		CHECK(lane_sync_status(f) == -ECANCELED || lane_sync_status(f) == 1,
		      "the fence of a closed file's CB is signalled (ran or cancelled): status %d",
		      lane_sync_status(f));
		if (reload_cycle("a sync_file of a flex fence is open", f, NULL, 0))
			return;
	}
	/* A signalled fence exported after completion: a stub, not the module's. */
	fd = flex_open(FLEX_PF);
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	err = lane_submit(fd, q, &nop, 1, 0, &seq) ?: wait_seq(fd, q, seq, WAIT_MS);
	f = err ? err : lane_fence_export(fd, q, seq);
	close(fd);
	if (f >= 0) {
		err = mod_unload();
		CHECK(!err, "rmmod with only a completed CB's sync_file open (a stub fence): %s",
		      lane_errname(err));
		CHECK(lane_sync_status(f) == 1, "that sync_file still answers: status %d",
		      lane_sync_status(f));
		close(f);
		if (!err) {
			err = mod_load();
			CHECK(!err, "insmod again: %s", lane_errname(err));
		}
		cases(1);
	}
	/* Not in --quick: a VF open; then VFs enabled, none open (unload disables them). */
	if (!opt.quick) {
		CHECK(!set_numvfs(2), "2 VFs enabled");
		fd = flex_open("/dev/flex0vf1");
		if (reload_cycle("/dev/flex0vf1 is open", fd, NULL, 0))
			return;
		CHECK(!set_numvfs(2), "2 VFs enabled again, none open");
		err = mod_unload();
		CHECK(!err && !lane_path_exists("/dev/flex0vf0"), "rmmod with VFs enabled and "
		      "idle: %s", lane_errname(err));
		if (!err)
			CHECK(!mod_load(), "insmod again");
		cases(1);
	}
	/* Cycles. */
	for (q = 0; q < (opt.quick ? 0 : 10); q++) {
		err = mod_unload() ?: mod_load();
		if (!CHECK(!err, "unload/reload cycle %d: %s", q, lane_errname(err)))
			return;
		cases(1);
	}
	{
		char why[200] = "";

		CHECK(!smoke(why, sizeof(why)), "the module left loaded works%s%s", why[0] ? ": " : "",
		      why);
	}
}

/* ================= inject: fault injection into every call ================= */

static int nth_fd = -1;

static int fi_setup(char *why, size_t len)
{
	static const struct { const char *file, *val; } knobs[] = {
		{ "/sys/kernel/debug/failslab/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/failslab/verbose", "0" },
		{ "/sys/kernel/debug/failslab/task-filter", "Y" },
		{ "/sys/kernel/debug/failslab/probability", "100" },
		{ "/sys/kernel/debug/failslab/times", "-1" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "N" },
		{ "/sys/kernel/debug/fail_page_alloc/min-order", "0" },
		{ "/sys/kernel/debug/fail_page_alloc/verbose", "0" },
		{ "/sys/kernel/debug/fail_page_alloc/task-filter", "Y" },
		{ "/sys/kernel/debug/fail_page_alloc/probability", "100" },
		{ "/sys/kernel/debug/fail_page_alloc/times", "-1" },
	};
	size_t i;
	int err;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		err = sysfs_write(knobs[i].file, knobs[i].val);
		if (err) {
			snprintf(why, len, "%s: %s", knobs[i].file, lane_errname(err));
			return -1;
		}
	}
	return 0;
}

/* Back to the defaults, for the tests that run after this one. */
static void fi_restore(void)
{
	sysfs_write("/sys/kernel/debug/failslab/ignore-gfp-wait", "Y");
	sysfs_write("/sys/kernel/debug/failslab/probability", "0");
	sysfs_write("/sys/kernel/debug/failslab/times", "1");
	sysfs_write("/sys/kernel/debug/failslab/verbose", "2");
	sysfs_write("/sys/kernel/debug/fail_page_alloc/ignore-gfp-wait", "Y");
	sysfs_write("/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem", "Y");
	sysfs_write("/sys/kernel/debug/fail_page_alloc/min-order", "1");
	sysfs_write("/sys/kernel/debug/fail_page_alloc/probability", "0");
	sysfs_write("/sys/kernel/debug/fail_page_alloc/times", "1");
	sysfs_write("/sys/kernel/debug/fail_page_alloc/verbose", "2");
}

static void fi_arm(int n)
{
	char b[16];
	int l = snprintf(b, sizeof(b), "%d", n);

	if (pwrite(nth_fd, b, l, 0) != l) {
		perror("fail-nth");
		exit(3);
	}
}

/* Disarms; returns whether the armed failure was injected. */
static int fi_disarm(void)
{
	char b[16] = "";
	int left;

	if (pread(nth_fd, b, sizeof(b) - 1, 0) <= 0) {
		perror("fail-nth");
		exit(3);
	}
	left = atoi(b);
	if (pwrite(nth_fd, "0", 1, 0) != 1)
		exit(3);
	return left == 0;
}

/* State one call may change: the file's and the device's. */
struct fi_state {
	struct fsnap f;
	long long used, table_used, pinned_dev, next_fd;
	struct flex_queue_status st[4];
};

struct fi_ctx {
	int fd, vf;
	const char *fn;		/* "pf" or "vf0" */
	int q[4];		/* q[0], q[1]: queues of the context */
	struct flex_region_acquire r, p;	/* data and program regions */
	uint8_t *pmap;
	uint8_t *src, *dst;
	/* The case's own state, between setup, call and check. */
	uint64_t seq, seq2;
	int newfd, nq;
	struct flex_region_acquire got;
	struct flex_queue_create qc;
	void *map;
	struct fi_state before;
};

static struct fi_state fi_state(struct fi_ctx *c)
{
	struct fi_state s;
	int i;

	memset(&s, 0, sizeof(s));
	s.f = fsnap(c->fd);
	s.used = sysfs_num(FLEX_SYSFS "/used");
	s.table_used = c->vf ? sysfs_num(FLEX_SYSFS "vf0/table_used") :
			      sysfs_num(FLEX_SYSFS "/table_used");
	s.pinned_dev = sysfs_num(LANE_DEBUGFS "/pinned_pages");
	s.next_fd = next_fd();
	for (i = 0; i < 2; i++)
		lane_status(c->fd, c->q[i], &s.st[i]);
	return s;
}

static int fi_same(const struct fi_state *a, const struct fi_state *b, char *why, size_t len)
{
	if (a->f.regions != b->f.regions || a->f.queues != b->f.queues || a->f.pinned != b->f.pinned)
		snprintf(why, len, "fdinfo regions/queues/pinned %lld/%lld/%lld, expected "
			 "%lld/%lld/%lld", b->f.regions, b->f.queues, b->f.pinned, a->f.regions,
			 a->f.queues, a->f.pinned);
	else if (a->used != b->used || a->table_used != b->table_used ||
		 a->pinned_dev != b->pinned_dev)
		snprintf(why, len, "device used/table_used/pinned_pages %lld/%lld/%lld, expected "
			 "%lld/%lld/%lld", b->used, b->table_used, b->pinned_dev, a->used,
			 a->table_used, a->pinned_dev);
	else if (a->next_fd != b->next_fd)
		snprintf(why, len, "the next free fd is %lld, expected %lld (an fd leaked)",
			 b->next_fd, a->next_fd);
	else if (a->st[0].submitted != b->st[0].submitted || a->st[1].submitted != b->st[1].submitted)
		snprintf(why, len, "queues' submitted %llu/%llu, expected %llu/%llu",
			 (unsigned long long)b->st[0].submitted, (unsigned long long)b->st[1].submitted,
			 (unsigned long long)a->st[0].submitted, (unsigned long long)a->st[1].submitted);
	else
		return 1;
	return 0;
}

/*
 * One call under injection. setup() puts the preconditions in place (no
 * injection), call() is the call, check() says whether the state after
 * it matches its result (and undoes its effect). Returns -1 on a failure.
 */
struct fi_case {
	const char *name;
	int (*setup)(struct fi_ctx *c);
	int (*call)(struct fi_ctx *c);
	int (*check)(struct fi_ctx *c, int ret, char *why, size_t len);
};

/* ---- the cases ---- */

static int fc_nop_setup(struct fi_ctx *c)
{
	(void)c;
	return 0;
}

static int fc_query(struct fi_ctx *c)
{
	struct flex_query q = { 0 };

	return flex_ioctl(c->fd, FLEX_IOCTL_QUERY, &q);
}

static int fc_same_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	struct fi_state now = fi_state(c);

	(void)ret;
	return fi_same(&c->before, &now, why, len) ? 0 : -1;
}

static int fc_acquire(struct fi_ctx *c)
{
	return flex_acquire(c->fd, 4 * MiB, &c->got);
}

static int fc_acquire_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	struct fi_state now = fi_state(c), want = c->before;
	int err;

	if (!ret) {
		want.f.regions++;
		want.used += 4 * MiB;
		want.table_used++;
		if (!region_dir_exists(c->got.handle)) {
			snprintf(why, len, "acquired region %llu has no sysfs directory",
				 (unsigned long long)c->got.handle);
			return -1;
		}
	}
	if (!fi_same(&want, &now, why, len))
		return -1;
	if (!ret && (err = flex_release(c->fd, c->got.region_id))) {
		snprintf(why, len, "release of the acquired region: %s", lane_errname(err));
		return -1;
	}
	return 0;
}

static int fc_release_setup(struct fi_ctx *c)
{
	struct flex_cb cb;
	uint64_t seq;
	int err = flex_acquire(c->fd, 4 * MiB, &c->got);

	/* Backed pages, so release frees some. */
	cb = cb_dma(1, c->src, c->got.region_id, 4096, 3 * 4096);
	err = err ?: lane_submit(c->fd, c->q[0], &cb, 1, 0, &seq) ?:
	      wait_seq(c->fd, c->q[0], seq, WAIT_MS);
	c->before = fi_state(c);
	return err;
}

static int fc_release(struct fi_ctx *c)
{
	return flex_release(c->fd, c->got.region_id);
}

static int fc_release_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	struct fi_state now = fi_state(c), want = c->before;
	int err;

	if (!ret) {
		want.f.regions--;
		want.used -= 4 * MiB;
		want.table_used--;
		if (region_dir_exists(c->got.handle)) {
			snprintf(why, len, "released region %llu still has a sysfs directory",
				 (unsigned long long)c->got.handle);
			return -1;
		}
	}
	if (!fi_same(&want, &now, why, len))
		return -1;
	if (ret && (err = flex_release(c->fd, c->got.region_id))) {
		snprintf(why, len, "release after a failed release: %s", lane_errname(err));
		return -1;
	}
	return 0;
}

static int fc_info(struct fi_ctx *c)
{
	struct flex_region_info i = { .region_id = c->r.region_id };

	return flex_ioctl(c->fd, FLEX_IOCTL_REGION_INFO, &i);
}

static int fc_qcreate(struct fi_ctx *c)
{
	memset(&c->qc, 0, sizeof(c->qc));
	c->qc.priority = FLEX_QUEUE_PRIO_NORMAL;
	return flex_ioctl(c->fd, FLEX_IOCTL_QUEUE_CREATE, &c->qc);
}

static int fc_qcreate_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	struct fi_state now = fi_state(c), want = c->before;
	struct flex_cb nop = lane_cb_nop();
	uint64_t seq;
	int err;

	if (!ret)
		want.f.queues++;
	if (!fi_same(&want, &now, why, len))
		return -1;
	if (ret)
		return 0;
	err = lane_submit(c->fd, c->qc.queue_id, &nop, 1, 0, &seq) ?:
	      wait_seq(c->fd, c->qc.queue_id, seq, WAIT_MS) ?:
	      lane_queue_op(c->fd, FLEX_IOCTL_QUEUE_DESTROY, c->qc.queue_id);
	if (err)
		snprintf(why, len, "the created queue: NOP and destroy: %s", lane_errname(err));
	return err ? -1 : 0;
}

/* Destroy of a queue with a DMA and a NOP held back by the engines. */
static int fc_qdestroy_setup(struct fi_ctx *c)
{
	struct flex_cb cbs[2];
	int q = queue_create(c->fd, FLEX_QUEUE_PRIO_NORMAL, 0), err;

	if (q < 0)
		return q;
	c->nq = q;
	cbs[0] = cb_dma(1, c->src, c->r.region_id, 0, 64 * 1024);
	cbs[1] = lane_cb_nop();
	err = engines_pause(1) ?: lane_submit(c->fd, q, cbs, 2, 0, &c->seq);
	c->before = fi_state(c);
	return err;
}

static int fc_qdestroy(struct fi_ctx *c)
{
	return lane_queue_op(c->fd, FLEX_IOCTL_QUEUE_DESTROY, c->nq);
}

static int fc_qdestroy_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	struct fi_state now, want = c->before;
	int err = 0;

	engines_pause(0);
	if (!ret) {
		want.f.queues--;
		want.f.pinned -= 64;	/* KiB */
		want.pinned_dev -= 16;
	}
	now = fi_state(c);
	if (!fi_same(&want, &now, why, len))
		return -1;
	if (ret)
		err = lane_queue_op(c->fd, FLEX_IOCTL_QUEUE_DESTROY, c->nq);
	if (err)
		snprintf(why, len, "destroy after a failed destroy: %s", lane_errname(err));
	return err ? -1 : 0;
}

static int fc_reset_setup(struct fi_ctx *c)
{
	struct flex_cb cb = { .opcode = FLEX_CB_COMPUTE };
	uint64_t seq;
	int err;

	/* Zeroed device memory is no program: a sticky fault. */
	cb.compute.program = (struct flex_va){ c->r.region_id, c->r.size - 4096 };
	err = lane_submit(c->fd, c->q[1], &cb, 1, 0, &seq);
	if (!err && wait_seq(c->fd, c->q[1], seq, WAIT_MS) != -ENOEXEC)
		err = -EPROTO;
	c->before = fi_state(c);
	return err;
}

static int fc_reset(struct fi_ctx *c)
{
	return lane_queue_op(c->fd, FLEX_IOCTL_QUEUE_RESET, c->q[1]);
}

static int fc_reset_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	struct flex_queue_status st;

	if (fc_same_check(c, ret, why, len))
		return -1;
	lane_status(c->fd, c->q[1], &st);
	if (ret ? st.fault_code != FLEX_FAULT_BAD_PROGRAM : st.fault_code != FLEX_FAULT_NONE) {
		snprintf(why, len, "QUEUE_RESET returned %s, the fault code is now %u",
			 lane_errname(ret), st.fault_code);
		return -1;
	}
	if (ret)
		lane_queue_op(c->fd, FLEX_IOCTL_QUEUE_RESET, c->q[1]);
	return 0;
}

static int fc_status(struct fi_ctx *c)
{
	struct flex_queue_status st;

	return lane_status(c->fd, c->q[0], &st);
}

/* SUBMIT: the CB of the case goes on q[0]; check() waits and verifies. */
static struct flex_cb fi_cbs[4];
static int fi_ncbs;
static const char *fi_submit_kind;

static int fc_submit_setup(struct fi_ctx *c)
{
	struct flex_cb cb;
	uint64_t seq;

	fill_pattern(c->src, 256 * 1024, (unsigned int)lane_rand(&rng));
	memset(c->dst, 0, 256 * 1024);
	fi_ncbs = 0;
	if (!strcmp(fi_submit_kind, "NOP")) {
		fi_cbs[fi_ncbs++] = lane_cb_nop();
	} else if (!strcmp(fi_submit_kind, "DMA_TO_DEVICE")) {
		fi_cbs[fi_ncbs++] = cb_dma(1, c->src + 5, c->r.region_id, 0x20001, 200000);
	} else if (!strcmp(fi_submit_kind, "DMA_FROM_DEVICE")) {
		/* Known contents first. */
		cb = cb_dma(1, c->src, c->r.region_id, 0x40000, 256 * 1024);
		if (lane_submit(c->fd, c->q[1], &cb, 1, 0, &seq) ||
		    wait_seq(c->fd, c->q[1], seq, WAIT_MS))
			return -EPROTO;
		fi_cbs[fi_ncbs++] = cb_dma(0, c->dst + 3, c->r.region_id, 0x40000, 256 * 1024 - 3);
	} else if (!strcmp(fi_submit_kind, "COMPUTE")) {
		build_fill(c->pmap, 0x1000, 1024, 0xc0ffee);
		fi_cbs[fi_ncbs++] = cb_compute(c->p.region_id, 0, c->r.region_id);
	} else if (!strcmp(fi_submit_kind, "WAIT")) {
		/* A WAIT on a CB of q[1] still queued (the engines hold it). */
		cb = lane_cb_nop();
		if (engines_pause(1) || lane_submit(c->fd, c->q[1], &cb, 1, 0, &c->seq2))
			return -EPROTO;
		fi_cbs[fi_ncbs++] = cb_wait(c->q[1], c->seq2);
	} else {	/* a batch of all of them */
		build_fill(c->pmap, 0x1000, 1024, 0xc0ffee);
		fi_cbs[fi_ncbs++] = cb_dma(1, c->src + 5, c->r.region_id, 0x20001, 200000);
		fi_cbs[fi_ncbs++] = cb_compute(c->p.region_id, 0, c->r.region_id);
		fi_cbs[fi_ncbs++] = cb_dma(0, c->dst + 3, c->r.region_id, 0x20001, 200000);
		fi_cbs[fi_ncbs++] = lane_cb_nop();
	}
	c->before = fi_state(c);
	return 0;
}

static int fc_submit(struct fi_ctx *c)
{
	return lane_submit(c->fd, c->q[0], fi_cbs, fi_ncbs, 0, &c->seq);
}

static int fc_submit_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	struct fi_state now = fi_state(c), want = c->before;
	struct flex_cb cb;
	uint64_t seq;
	uint32_t v;
	int err;

	if (!strcmp(fi_submit_kind, "WAIT"))
		engines_pause(0);
	if (!ret) {
		want.st[0].submitted += fi_ncbs;
		now.st[0].submitted = want.st[0].submitted;	/* pins: checked after the wait */
		want.f.pinned = now.f.pinned;
		want.pinned_dev = now.pinned_dev;
	}
	if (!fi_same(&want, &now, why, len))
		return -1;
	if (ret) {
		/* Nothing queued, nothing pinned. */
		if (now.f.pinned != c->before.f.pinned) {
			snprintf(why, len, "a failed SUBMIT left %lld KiB pinned", now.f.pinned);
			return -1;
		}
		if (!strcmp(fi_submit_kind, "WAIT"))
			wait_seq(c->fd, c->q[1], c->seq2, WAIT_MS);
		return 0;
	}
	err = wait_seq(c->fd, c->q[0], c->seq, WAIT_MS);
	if (err) {
		snprintf(why, len, "the CBs submitted under injection: WAIT %s", lane_errname(err));
		return -1;
	}
	if (!strcmp(fi_submit_kind, "DMA_TO_DEVICE") || !strcmp(fi_submit_kind, "batch")) {
		cb = cb_dma(0, c->dst + 100, c->r.region_id, 0x20001, 200000);
		err = lane_submit(c->fd, c->q[1], &cb, 1, 0, &seq) ?:
		      wait_seq(c->fd, c->q[1], seq, WAIT_MS);
		if (err || memcmp(c->src + 5, c->dst + 100, 200000)) {
			snprintf(why, len, "data written by a DMA submitted under injection: %s%s",
				 lane_errname(err), err ? "" : ", came back different");
			return -1;
		}
	}
	if (!strcmp(fi_submit_kind, "DMA_FROM_DEVICE") &&
	    memcmp(c->src, c->dst + 3, 256 * 1024 - 3)) {
		snprintf(why, len, "a DMA from the device submitted under injection read wrong data");
		return -1;
	}
	if (!strcmp(fi_submit_kind, "COMPUTE") || !strcmp(fi_submit_kind, "batch")) {
		cb = cb_dma(0, &v, c->r.region_id, 0x1000 + 4 * 1023, 4);
		err = lane_submit(c->fd, c->q[1], &cb, 1, 0, &seq) ?:
		      wait_seq(c->fd, c->q[1], seq, WAIT_MS);
		if (err || v != 0xc0ffee) {
			snprintf(why, len, "a FILL submitted under injection: %s, word 0x%x",
				 lane_errname(err), v);
			return -1;
		}
	}
	if (fdinfo_num(c->fd, "flex-pinned") != 0) {
		snprintf(why, len, "pins left after the CBs completed: %lld KiB",
			 fdinfo_num(c->fd, "flex-pinned"));
		return -1;
	}
	return 0;
}

static int fc_wait_setup(struct fi_ctx *c)
{
	struct flex_cb nop = lane_cb_nop();
	int err = lane_submit(c->fd, c->q[0], &nop, 1, 0, &c->seq);

	c->before = fi_state(c);
	return err;
}

static int fc_wait(struct fi_ctx *c)
{
	return wait_seq(c->fd, c->q[0], c->seq, WAIT_MS);
}

static int fc_fence_setup(struct fi_ctx *c)
{
	struct flex_cb nop = lane_cb_nop();
	int err = engines_pause(1) ?: lane_submit(c->fd, c->q[0], &nop, 1, 0, &c->seq);

	c->before = fi_state(c);
	return err;
}

static int fc_fence_done_setup(struct fi_ctx *c)
{
	struct flex_cb nop = lane_cb_nop();
	int err = lane_submit(c->fd, c->q[0], &nop, 1, 0, &c->seq) ?:
		  wait_seq(c->fd, c->q[0], c->seq, WAIT_MS);

	c->before = fi_state(c);
	return err;
}

static int fc_fence(struct fi_ctx *c)
{
	int f = lane_fence_export(c->fd, c->q[0], c->seq);

	c->newfd = f;
	return f < 0 ? f : 0;
}

static int fc_fence_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	struct fi_state now;
	int st;

	engines_pause(0);
	if (!ret) {
		struct pollfd p = { .fd = c->newfd, .events = POLLIN };

		if (poll(&p, 1, WAIT_MS) != 1 || (st = lane_sync_status(c->newfd)) != 1) {
			snprintf(why, len, "the fence exported under injection never signalled");
			return -1;
		}
		close(c->newfd);
	}
	wait_seq(c->fd, c->q[0], c->seq, WAIT_MS);
	now = fi_state(c);
	c->before.st[0] = now.st[0];
	return fi_same(&c->before, &now, why, len) ? 0 : -1;
}

/* open() of the device node. */
static int fc_open(struct fi_ctx *c)
{
	c->newfd = flex_open(c->vf ? "/dev/flex0vf0" : FLEX_PF);
	return c->newfd < 0 ? c->newfd : 0;
}

static int fc_open_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	struct flex_region_acquire a;
	int err;

	if (ret)
		return fc_same_check(c, ret, why, len);
	err = flex_acquire(c->newfd, 2 * MiB, &a);
	close(c->newfd);
	if (err) {
		snprintf(why, len, "a file opened under injection: REGION_ACQUIRE %s",
			 lane_errname(err));
		return -1;
	}
	return fc_same_check(c, 0, why, len);
}

/* mmap() of a region. */
static int fc_mmap(struct fi_ctx *c)
{
	c->map = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd,
		      c->r.mmap_offset);
	return c->map == MAP_FAILED ? -errno : 0;
}

static int fc_mmap_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	if (!ret)
		munmap(c->map, 2 * MiB);
	return fc_same_check(c, ret, why, len);
}

/*
 * The first touch of a mapped page, whose fault backs it: in a child per
 * attempt (the child arms its own fail-nth), since a fault that fails
 * raises a signal. The fault must succeed (a failed allocation makes it
 * VM_FAULT_OOM, which retries) and back exactly one page.
 */
static void fi_fault_case(struct fi_ctx *c, int kmsg)
{
	struct flex_region_acquire fr;
	int n, fired = 1, touched = 0, injected = 0, err;
	char why[400] = "", rep[300];

	err = flex_acquire(c->fd, 2 * MiB, &fr);
	if (!CHECK(!err, "page fault on %s: a region to map: %s", c->fn, lane_errname(err)))
		return;
	for (n = 1; n <= 2000 && fired && !why[0]; n++) {
		struct flex_region_info info = { .region_id = fr.region_id };
		uint64_t off = (uint64_t)(touched + 1) * 4096 + 17, seq;
		struct flex_cb cb;
		uint8_t v = 0;
		int status;
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (!pid) {
			char b[16];
			int nfd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC), l;
			volatile uint8_t *map = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE,
						     MAP_SHARED, c->fd, fr.mmap_offset);

			if (nfd < 0 || map == MAP_FAILED)
				_exit(2);
			memset(b, 0, sizeof(b));
			mlockall(MCL_CURRENT);	/* no fault of our own memory from here */
			l = snprintf(b, sizeof(b), "%d", n);
			if (pwrite(nfd, b, l, 0) != l)
				_exit(2);
			map[off] = 0x5c;
			if (pread(nfd, b, sizeof(b) - 1, 0) <= 0)
				_exit(2);
			_exit(atoi(b) == 0 ? 1 : 0);
		}
		waitpid(pid, &status, 0);
		cases(1);
		if (WIFSIGNALED(status)) {
			snprintf(why, sizeof(why), "with allocation %d failed the touch raised signal %d "
				 "(expected the fault to be retried)", n, WTERMSIG(status));
			break;
		}
		if (WEXITSTATUS(status) > 1) {
			snprintf(why, sizeof(why), "the child could not map the region");
			break;
		}
		fired = WEXITSTATUS(status) == 1;
		injected += fired;
		touched++;
		cb = cb_dma(0, &v, fr.region_id, off, 1);
		err = lane_submit(c->fd, c->q[1], &cb, 1, 0, &seq) ?:
		      wait_seq(c->fd, c->q[1], seq, WAIT_MS) ?:
		      flex_ioctl(c->fd, FLEX_IOCTL_REGION_INFO, &info);
		if (err || v != 0x5c || info.resident != (uint64_t)touched * 4096)
			snprintf(why, sizeof(why), "allocation %d failed: the byte written reads 0x%x "
				 "(%s; expected 0x5c), region resident %llu (expected %d pages)", n, v,
				 lane_errname(err), (unsigned long long)info.resident, touched);
		else if (lane_kmsg_scan(kmsg, rep, sizeof(rep)))
			snprintf(why, sizeof(why), "allocation %d failed: the kernel logged: %s", n, rep);
	}
	__atomic_fetch_add(&fst->injected, injected, __ATOMIC_RELAXED);
	__atomic_fetch_add(&fst->survived, injected, __ATOMIC_RELAXED);
	flex_release(c->fd, fr.region_id);
	CHECK(!why[0], "page fault of a mapping on %s: %d allocation(s) failed one at a time, each "
	      "fault retried and backed one page%s%s", c->fn, n - 1, why[0] ? "; " : "", why);
}

/* sriov_numvfs 0 -> 2 (PF context only). */
static int fc_sriov(struct fi_ctx *c)
{
	(void)c;
	return set_numvfs(2);
}

static int fc_sriov_check(struct fi_ctx *c, int ret, char *why, size_t len)
{
	long long n = sysfs_num(FLEX_SYSFS "/sriov_numvfs");
	int nodes = lane_path_exists("/dev/flex0vf0") + lane_path_exists("/dev/flex0vf1");
	int dirs = lane_path_exists(FLEX_SYSFS "vf0") + lane_path_exists(FLEX_SYSFS "vf1");
	int err;

	if (ret ? n != 0 || nodes || dirs : n != 2 || nodes != 2 || dirs != 2) {
		snprintf(why, len, "enable returned %s: sriov_numvfs %lld, %d VF nodes, %d VF sysfs "
			 "directories", lane_errname(ret), n, nodes, dirs);
		return -1;
	}
	if (!ret) {
		int fd = flex_open("/dev/flex0vf1");
		struct flex_region_acquire a;

		err = fd < 0 ? fd : flex_acquire(fd, 2 * MiB, &a);
		if (fd >= 0)
			close(fd);
		if (err) {
			snprintf(why, len, "a VF enabled under injection: open/acquire %s",
				 lane_errname(err));
			return -1;
		}
		err = set_numvfs(0);
		if (err) {
			snprintf(why, len, "disable: %s", lane_errname(err));
			return -1;
		}
	}
	return fc_same_check(c, 0, why, len);
}

static int fi_run_case(struct fi_ctx *c, const struct fi_case *fc, int kmsg)
{
	int n, ret, fired, nomem = 0, okay = 0, max = 4000, err;
	char why[600] = "", rep[300];

	for (n = 1; n <= max; n++) {
		err = fc->setup(c);
		if (fc->setup == fc_nop_setup)
			c->before = fi_state(c);
		if (err) {
			snprintf(why, sizeof(why), "setup (no injection) failed: %s", lane_errname(err));
			break;
		}
		fi_arm(n);
		ret = fc->call(c);
		fired = fi_disarm();
		cases(1);
		if (fired) {
			__atomic_fetch_add(&fst->injected, 1, __ATOMIC_RELAXED);
			if (ret == -ENOMEM)
				nomem++;
			else if (!ret)
				okay++;
		}
		if (ret && ret != -ENOMEM) {
			snprintf(why, sizeof(why), "allocation %d failed: the call returned %s, "
				 "expected 0 or -ENOMEM", n, lane_errname(ret));
			fc->check(c, ret, rep, sizeof(rep));
			break;
		}
		if (ret && !fired) {
			snprintf(why, sizeof(why), "no injection and still %s", lane_errname(ret));
			break;
		}
		if (fc->check(c, ret, why, sizeof(why))) {
			char tmp[600];

			snprintf(tmp, sizeof(tmp), "allocation %d failed (call returned %s): %s", n,
				 lane_errname(ret), why);
			snprintf(why, sizeof(why), "%s", tmp);
			break;
		}
		if (lane_kmsg_scan(kmsg, rep, sizeof(rep))) {
			snprintf(why, sizeof(why), "allocation %d failed (call returned %s): the kernel "
				 "logged: %s", n, lane_errname(ret), rep);
			break;
		}
		if (!fired)
			break;	/* it ran with every allocation served: done */
	}
	if (n > max && !why[0])
		snprintf(why, sizeof(why), "still injecting after %d allocations", max);
	__atomic_fetch_add(&fst->enomem, nomem, __ATOMIC_RELAXED);
	__atomic_fetch_add(&fst->survived, okay, __ATOMIC_RELAXED);
	return CHECK(!why[0], "%s on %s: %d allocation(s) failed one at a time: %d -ENOMEM, %d "
		     "success anyway%s%s", fc->name, c->fn, n - 1, nomem, okay, why[0] ? "; " : "",
		     why) ? 0 : -1;
}

static void scenario_inject(void)
{
	static const struct fi_case list[] = {
		{ "QUERY", fc_nop_setup, fc_query, fc_same_check },
		{ "REGION_ACQUIRE", fc_nop_setup, fc_acquire, fc_acquire_check },
		{ "REGION_RELEASE", fc_release_setup, fc_release, fc_release_check },
		{ "REGION_INFO", fc_nop_setup, fc_info, fc_same_check },
		{ "QUEUE_CREATE", fc_nop_setup, fc_qcreate, fc_qcreate_check },
		{ "QUEUE_DESTROY (busy)", fc_qdestroy_setup, fc_qdestroy, fc_qdestroy_check },
		{ "QUEUE_RESET", fc_reset_setup, fc_reset, fc_reset_check },
		{ "QUEUE_STATUS", fc_nop_setup, fc_status, fc_same_check },
		{ "SUBMIT", fc_submit_setup, fc_submit, fc_submit_check },	/* per kind */
		{ "WAIT", fc_wait_setup, fc_wait, fc_same_check },
		{ "FENCE_EXPORT (pending)", fc_fence_setup, fc_fence, fc_fence_check },
		{ "FENCE_EXPORT (completed)", fc_fence_done_setup, fc_fence, fc_fence_check },
		{ "open()", fc_nop_setup, fc_open, fc_open_check },
		{ "mmap()", fc_nop_setup, fc_mmap, fc_mmap_check },
	};
	static const char *const kinds[] = { "NOP", "DMA_TO_DEVICE", "DMA_FROM_DEVICE", "COMPUTE",
					     "WAIT", "batch" };
	static const struct fi_case sriov = { "sriov_numvfs 0 -> 2", fc_nop_setup, fc_sriov,
					      fc_sriov_check };
	char why[300];
	int kmsg, v;
	size_t i, k;

	if (!lane_path_exists("/proc/self/fail-nth") ||
	    !lane_path_exists("/sys/kernel/debug/failslab")) {
		lane_skip("%s: no fault injection in this kernel (/proc/self/fail-nth, "
			  "CONFIG_FAULT_INJECTION and CONFIG_FAILSLAB: the debug lane has them)", scen);
		return;
	}
	if (!CHECK(!fi_setup(why, sizeof(why)), "failslab and fail_page_alloc set up%s%s",
		   why[0] ? ": " : "", why))
		return;
	/* Page faults of our own memory must not take the injections. */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		lane_diag("mlockall: %s (faults of the test's own memory may take injections)",
			  strerror(errno));
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (!CHECK(nth_fd >= 0, "/proc/thread-self/fail-nth opened"))
		return;
	kmsg = lane_kmsg_mark();
	set_numvfs(1);
	for (v = 0; v < 2; v++) {
		struct fi_ctx c;

		memset(&c, 0, sizeof(c));
		c.vf = v;
		c.fn = v ? "vf0" : "pf";
		c.fd = flex_open(v ? "/dev/flex0vf0" : FLEX_PF);
		c.q[0] = queue_create(c.fd, FLEX_QUEUE_PRIO_NORMAL, 0);
		c.q[1] = queue_create(c.fd, FLEX_QUEUE_PRIO_NORMAL, 0);
		c.src = xalloc(MiB);
		c.dst = xalloc(MiB);
		if (!CHECK(c.fd >= 0 && c.q[0] > 0 && c.q[1] > 0 &&
			   !flex_acquire(c.fd, 4 * MiB, &c.r) &&
			   !flex_acquire(c.fd, 2 * MiB, &c.p) &&
			   !flex_acquire(c.fd, 2 * MiB, &c.got), "%s: a file, 2 queues and 3 "
			   "regions", c.fn))
			break;
		c.pmap = mmap(NULL, 2 * MiB, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd,
			      c.p.mmap_offset);
		if (!CHECK(c.pmap != MAP_FAILED, "%s: program region mapped", c.fn))
			break;
		memset(c.pmap, 0, 4096);
		for (i = 0; i < sizeof(list) / sizeof(list[0]); i++) {
			/*
			 * Quick (run-all): on the VF only what differs from the PF
			 * (its table, its node).
			 */
			if (v && opt.quick && list[i].call != fc_acquire &&
			    list[i].call != fc_release && list[i].call != fc_open)
				continue;
			if (list[i].call != fc_submit) {
				fi_run_case(&c, &list[i], kmsg);
				continue;
			}
			for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
				struct fi_case s = list[i];
				char name[64];

				snprintf(name, sizeof(name), "SUBMIT of %s", kinds[k]);
				s.name = name;
				fi_submit_kind = kinds[k];
				fi_run_case(&c, &s, kmsg);
			}
		}
		if (!v || !opt.quick)
			fi_fault_case(&c, kmsg);
		munmap(c.pmap, 2 * MiB);	/* a mapping would hold the VF open */
		close(c.fd);
		free(c.src);
		free(c.dst);
	}
	CHECK(!set_numvfs(0), "the VF disabled after its cases");
	{
		struct fi_ctx c;

		memset(&c, 0, sizeof(c));
		c.fn = "the PF's sysfs";
		c.fd = flex_open(FLEX_PF);
		c.q[0] = c.q[1] = queue_create(c.fd, FLEX_QUEUE_PRIO_NORMAL, 0);
		fi_run_case(&c, &sriov, kmsg);
		close(c.fd);
		set_numvfs(0);
	}
	close(nth_fd);
	fi_restore();
	if (kmsg >= 0)
		close(kmsg);
	munlockall();
}

/* ================= the driver ================= */

static const struct {
	const char *name;
	void (*fn)(void);
	int timeout;		/* s */
} scenarios[] = {
	{ "kill", scenario_kill, 300 },
	{ "close", scenario_close, 300 },
	{ "threads", scenario_threads, 300 },
	{ "vfs", scenario_vfs, 300 },
	{ "backing", scenario_backing, 300 },
	{ "module", scenario_module, 300 },
	{ "inject", scenario_inject, 1200 },
};

static int wanted(const char *name)
{
	const char *p;
	size_t n = strlen(name);

	if (!opt.only)
		return 1;
	for (p = opt.only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

static void run_scenario(int i)
{
	struct lane_usage u;
	char ubuf[256], rep[300];
	int status, kmsg = lane_kmsg_mark(), nrep;
	int64_t t0 = now_ns();
	pid_t pid;

	scen = scenarios[i].name;
	lane_diag("---- %s", scen);
	fflush(stdout);
	pid = fork();
	if (!pid) {
		rng = lane_seed_mix(opt.seed, (uint64_t)i);
		scenarios[i].fn();
		_exit(0);
	}
	status = reap(pid, scenarios[i].timeout * 1000);
	if (status == -1) {
		lane_check(0, "%s: the scenario did not finish within %d s", scen,
			   scenarios[i].timeout);
		dump_stacks(pid);
		kill(pid, SIGKILL);
		reap(pid, 30000);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		lane_check(0, "%s: the scenario's process %s %d", scen,
			   WIFSIGNALED(status) ? "died of signal" : "exited",
			   WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	/* Whatever happened, leave the device as the next one expects it. */
	engines_pause(0);
	if (sysfs_num(FLEX_SYSFS "/sriov_numvfs") > 0)
		set_numvfs(0);
	lane_wait_clean(5000, &u);
	lane_usage_str(&u, ubuf, sizeof(ubuf));
	lane_check(lane_usage_clean(&u) && sysfs_num(FLEX_SYSFS "/sriov_numvfs") == 0 &&
		   u.refcnt == 0, "%s: the device is clean afterwards, no VF, the module's "
		   "refcnt 0 (%s)", scen, ubuf);
	nrep = lane_kmsg_scan(kmsg, rep, sizeof(rep));
	lane_check(!nrep, "%s: no kernel report in the log%s%s", scen, nrep ? ", got: " : "", rep);
	lane_diag("%s took %.1f s", scen, lane_seconds_since(t0));
	if (kmsg >= 0)
		close(kmsg);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "only", required_argument, NULL, 'o' },
		{ "quick", no_argument, NULL, 'q' },
		{ "seed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, i;
	int64_t t0 = now_ns();

	opt.seed = (uint64_t)now_ns();
	opt.ko = getenv("FLEX_KO");
	if (opt.ko && !*opt.ko)
		opt.ko = NULL;
	/* Run by run-all (no arguments) in `make check`: the short version. */
	opt.quick = argc == 1 && getenv("FLEX_KSFT_BIN") != NULL;
	while ((c = getopt_long(argc, argv, "o:qs:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o': opt.only = optarg; break;
		case 'q': opt.quick = 1; break;
		case 's': opt.seed = strtoull(optarg, NULL, 0); break;
		default:
			printf("usage: %s [--only kill,close,threads,vfs,backing,module,inject] "
			       "[--quick] [--seed N]\n(FLEX_KO=path enables the module cases)\n",
			       argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	fst = mmap(NULL, sizeof(*fst), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (fst == MAP_FAILED)
		return 2;
	memset(fst, 0, sizeof(*fst));
	lane_tap_init();
	lane_diag("flex_faults: seed 0x%llx%s, FLEX_KO %s", (unsigned long long)opt.seed,
		  opt.quick ? ", quick" : "", opt.ko ? opt.ko : "(unset)");
	if (!lane_path_exists(FLEX_PF)) {
		lane_check(0, "setup: " FLEX_PF " exists (is flex.ko loaded?)");
		return lane_tap_done();
	}
	for (i = 0; i < (int)(sizeof(scenarios) / sizeof(scenarios[0])); i++)
		if (wanted(scenarios[i].name))
			run_scenario(i);
	lane_diag("faults: %.1f s", lane_seconds_since(t0));
	printf("faults: cases %llu count\n", (unsigned long long)fst->cases);
	printf("faults: injected %llu count\n", (unsigned long long)fst->injected);
	printf("faults: injected_enomem %llu count\n", (unsigned long long)fst->enomem);
	printf("faults: injected_survived %llu count\n", (unsigned long long)fst->survived);
	return lane_tap_done();
}
