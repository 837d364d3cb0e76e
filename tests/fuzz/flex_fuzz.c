// SPDX-License-Identifier: GPL-2.0
/*
 * flex_fuzz: a structure-aware fuzzer for the flex driver, run inside the
 * VM lane (tools/flex-vm) with the module loaded.
 *
 *   flex_fuzz [--seconds N] [--ioctls N] [--seed S] [--procs P]
 *             [--threads T] [--vfs V] [--no-kill] [--no-signals] [--volume]
 *
 * What it does. The supervisor (this process) enables V SR-IOV VFs, runs a
 * few deterministic probes, then forks P worker processes of T threads
 * each and lets them run until N seconds passed or N ioctls were issued in
 * all. Every worker thread loops over randomly chosen operations (weights
 * in op_table[]):
 *
 *  - every ioctl of uapi/linux/flex.h (ops_ioctl.c, ops_submit.c), with
 *    arguments that are valid by the worker's model of what it holds
 *    (regions and their mmap offsets, queues and their seqnos) or mutated:
 *    flag and pad bits, huge and zero sizes, wrong ids, random seqnos,
 *    negative and INT64_MIN timeouts, the structure size in the ioctl
 *    number shortened or lengthened (with a zero or non-zero tail), the
 *    argument pointer NULL, PROT_NONE, read-only, straddling into a
 *    PROT_NONE page, kernel or non-canonical;
 *  - SUBMIT of 1..256 CBs: NOPs, DMA in both directions from host memory
 *    that is valid, read-only, PROT_NONE, or a mapping of a flex region,
 *    compute CBs running programs built from flex_isa.h (copy, fill, add,
 *    mul, relu, matmul, small shapes, correction slots) that a DMA CB of
 *    the same batch writes to the device first, sometimes with mutated
 *    bytes or segment tables, and WAITs on the file's other queues;
 *  - FENCE_EXPORT (polled, queried, closed or kept past the queue's end),
 *    WAIT, QUEUE_STATUS/RESET/DESTROY racing SUBMIT and WAIT of the other
 *    threads, close() and reopen of a file the other threads are using;
 *  - mmap/munmap/mremap/madvise/mprotect of region mappings, touching
 *    their pages (a released region's mapping must raise SIGBUS, which is
 *    caught with sigsetjmp/siglongjmp), fork with a child that touches the
 *    mappings and may release a region of the shared file (ops_mm.c);
 *  - every command of the "flex" generic netlink family through
 *    libnl-genl-3, well-formed and garbage, and the events group (ops_nl.c);
 *  - sysfs and debugfs reads, the fdinfo of files in use, writes of the
 *    functions' quotas, pausing the engines, toggling sriov_numvfs
 *    (ops_sys.c).
 *
 * Mid-run the supervisor SIGKILLs one worker (at a time drawn from the
 * seed) and starts a replacement, and it sends SIGUSR1 to workers now and
 * then so blocking calls see EINTR/ERESTARTSYS.
 *
 * What fails the run (TAP "not ok" and a non-zero exit): a worker or fork
 * child that died of a signal other than the SIGKILL sent to it; an ioctl
 * that returned an errno outside the set documented for it (flex.h,
 * Documentation/flex/uapi.rst; allowed[] in ops_ioctl.c) or a positive
 * value; an out structure that contradicts the uapi; a released region's
 * mapping that did not raise SIGBUS; a file that saw another file's region;
 * a netlink error outside the documented set or a malformed reply; a
 * worker that did not stop within 30 s, or ended with a sync_file fd no
 * call returned to it; and after the workers are gone,
 * a device that is not clean: sysfs used, resident, regions/, debugfs
 * pinned_pages, the netlink region and queue dumps and the module's
 * reference count must all be back to zero, and the VFs must disable.
 *
 * Replay: every stream of random numbers (the supervisor's, each worker
 * thread's) is derived from the master seed printed first (`fuzz: seed S`);
 * `--seed S` with the same --procs/--threads replays the same choices.
 * Threads interleave differently each run, so a race found once may need a
 * few runs or a longer one; a deterministic bug recurs. The figures come
 * last, one per line: `fuzz: ioctls N calls`, `fuzz: netlink N calls`,
 * `fuzz: seconds N s`. Documentation/flex/fuzzing.rst has the whole story.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/flex_netlink.h>

#include "fuzz.h"

struct shared *sh;

static struct {
	unsigned int seconds;
	uint64_t ioctls;
	uint64_t seed;
	int have_seed;
	int procs, threads, vfs;
	int kill, signals;
	int volume;
} opt = {
	.procs = 3, .threads = 3, .vfs = 2, .kill = 1, .signals = 1,
};

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

uint64_t rnd_interesting(struct rng *r)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256,
		511, 512, 1023, 1024, 4095, 4096, 4097, 0x7fff, 0x8000, 0xffff,
		0x10000, 0x1fffff, 0x200000, 0x200001, 0x7fffffff, 0x80000000,
		0xffffffff, 0x100000000ULL, 1ULL << 40, (1ULL << 40) - 1,
		1ULL << 47, 1ULL << 48, (1ULL << 48) - 1, 1ULL << 62, 1ULL << 63,
		INT64_MAX, UINT64_MAX, UINT64_MAX - 1, (uint64_t)-4096,
	};

	switch (rnd(r, 4)) {
	case 0:
		return rnd64(r);
	case 1:
		return rnd(r, 64);
	default:
		return v[rnd(r, sizeof(v) / sizeof(v[0]))];
	}
}

const char *errname(int err)
{
	const char *n = err ? strerrorname_np(err) : "success";

	return n ? n : "E?";
}

/* sync_file fds of this process; closes them too if @close_them. */
static int count_sync_files(int close_them)
{
	char path[64], link[64];
	int i, n = 0;
	ssize_t len;

	for (i = 3; i < 4096; i++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", i);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (!strstr(link, "sync_file"))
			continue;
		n++;
		if (close_them)
			close(i);
	}
	return n;
}

/* Open fds of this process (the directory's own among them). */
static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* ---- violations: counted, and the first ones kept as text ---- */

void violation(struct tctx *t, uint64_t *counter, const char *fmt, ...)
{
	uint32_t i;
	char *buf;
	va_list ap;
	int n = 0;

	count(counter, 1);
	i = __atomic_fetch_add(&sh->nr_violations, 1, __ATOMIC_RELAXED);
	if (i >= MAX_VIOLATIONS)
		return;
	buf = sh->violations[i];
	if (t)
		n = snprintf(buf, VIOLATION_LEN, "[worker %d.%d thread %d op %" PRIu64 "] ",
			     t->p->index, t->p->gen, t->tid, t->ops);
	va_start(ap, fmt);
	vsnprintf(buf + n, VIOLATION_LEN - n, fmt, ap);
	va_end(ap);
}

/* ---- the model: snapshots of slots, and updates after a call ---- */

int take_snap(struct tctx *t, int slot, struct snap *s)
{
	struct slot *sl = &t->p->slots[slot];

	pthread_mutex_lock(&t->p->lock);
	s->slot = slot;
	s->fd = sl->fd;
	s->gen = sl->gen;
	s->node = sl->node;
	s->nregions = sl->nregions;
	s->nqueues = sl->nqueues;
	memcpy(s->regions, sl->regions, sizeof(s->regions));
	memcpy(s->queues, sl->queues, sizeof(s->queues));
	pthread_mutex_unlock(&t->p->lock);
	return s->fd < 0 ? -1 : 0;
}

/* The snapshot's file was closed (its fd number may be another file now). */
int snap_stale(struct tctx *t, const struct snap *s)
{
	int stale;

	pthread_mutex_lock(&t->p->lock);
	stale = t->p->slots[s->slot].gen != s->gen;
	pthread_mutex_unlock(&t->p->lock);
	return stale;
}

struct region *pick_region(struct tctx *t, struct snap *s)
{
	return s->nregions ? &s->regions[rnd(&t->r, s->nregions)] : NULL;
}

struct queue *pick_queue(struct tctx *t, struct snap *s)
{
	return s->nqueues ? &s->queues[rnd(&t->r, s->nqueues)] : NULL;
}

/* Returns with the slot locked if it is still the snapshot's file. */
static struct slot *model_lock(struct tctx *t, const struct snap *s)
{
	struct slot *sl = &t->p->slots[s->slot];

	pthread_mutex_lock(&t->p->lock);
	if (sl->gen == s->gen && sl->fd >= 0)
		return sl;
	pthread_mutex_unlock(&t->p->lock);
	return NULL;
}

void model_add_region(struct tctx *t, const struct snap *s, const struct flex_region_acquire *a)
{
	struct slot *sl = model_lock(t, s);
	struct region *r;

	if (!sl)
		return;
	if (sl->nregions < MAX_REGIONS) {
		r = &sl->regions[sl->nregions++];
		r->id = a->region_id;
		r->mmap_offset = a->mmap_offset;
		r->handle = a->handle;
		r->size = a->size;
	}
	pthread_mutex_unlock(&t->p->lock);
}

void model_del_region(struct tctx *t, const struct snap *s, __u64 id)
{
	struct slot *sl = model_lock(t, s);
	int i;

	if (!sl)
		return;
	for (i = 0; i < sl->nregions; i++) {
		if (sl->regions[i].id == id) {
			sl->regions[i] = sl->regions[--sl->nregions];
			break;
		}
	}
	pthread_mutex_unlock(&t->p->lock);
}

void model_add_queue(struct tctx *t, const struct snap *s, __u32 id, __u32 depth)
{
	struct slot *sl = model_lock(t, s);

	if (!sl)
		return;
	if (sl->nqueues < MAX_QUEUES) {
		sl->queues[sl->nqueues].id = id;
		sl->queues[sl->nqueues].depth = depth;
		sl->queues[sl->nqueues].seqno = 0;
		sl->nqueues++;
	}
	pthread_mutex_unlock(&t->p->lock);
}

void model_del_queue(struct tctx *t, const struct snap *s, __u32 id)
{
	struct slot *sl = model_lock(t, s);
	int i;

	if (!sl)
		return;
	for (i = 0; i < sl->nqueues; i++) {
		if (sl->queues[i].id == id) {
			sl->queues[i] = sl->queues[--sl->nqueues];
			break;
		}
	}
	pthread_mutex_unlock(&t->p->lock);
}

void model_seqno(struct tctx *t, const struct snap *s, __u32 id, __u64 seqno)
{
	struct slot *sl = model_lock(t, s);
	int i;

	if (!sl)
		return;
	for (i = 0; i < sl->nqueues; i++)
		if (sl->queues[i].id == id && sl->queues[i].seqno < seqno)
			sl->queues[i].seqno = seqno;
	pthread_mutex_unlock(&t->p->lock);
}

/* ---- worker threads ---- */

struct op {
	const char *name;
	void (*fn)(struct tctx *t);
	unsigned int weight;	/* how often it runs... */
	unsigned int volume;	/* ...and with --volume */
};

/*
 * --volume, for runs counted in ioctls (make check-debug's million): the
 * ioctls, whose validation is what a count of calls measures, run far more
 * often than mm, fork, netlink and sysfs operations, which cost a hundred
 * times an ioctl under the debug kernel. Every operation still runs.
 */
static const struct op op_table[] = {
	{ "submit",	op_submit,	220,	60 },
	{ "wait",	op_wait,	70,	50 },
	{ "fence",	op_fence,	45,	40 },
	{ "query",	op_query,	25,	50 },
	{ "acquire",	op_acquire,	60,	30 },
	{ "release",	op_release,	35,	20 },
	{ "info",	op_info,	30,	50 },
	{ "qcreate",	op_qcreate,	50,	30 },
	{ "qdestroy",	op_qdestroy,	25,	15 },
	{ "qreset",	op_qreset,	30,	40 },
	{ "qstatus",	op_qstatus,	35,	50 },
	{ "badnr",	op_badnr,	15,	30 },
	{ "poll",	op_poll,	15,	10 },
	{ "mmap",	op_mmap,	45,	4 },
	{ "munmap",	op_munmap,	25,	2 },
	{ "mremap",	op_mremap,	10,	1 },
	{ "madvise",	op_madvise,	15,	1 },
	{ "mprotect",	op_mprotect,	8,	1 },
	{ "touch",	op_touch,	60,	4 },
	{ "fork",	op_fork,	4,	1 },
	{ "reopen",	op_reopen,	6,	2 },
	{ "netlink",	op_netlink,	50,	2 },
	{ "nl_events",	op_nl_events,	12,	1 },
	{ "sysfs",	op_sysfs,	15,	1 },
	{ "pause",	op_pause,	2,	1 },
	{ "sriov",	op_sriov,	2,	1 },
};

#define NR_OPS	(sizeof(op_table) / sizeof(op_table[0]))
_Static_assert(NR_OPS <= MAX_OPS, "MAX_OPS is too small for op_table[]");

static unsigned int op_weight(const struct op *op)
{
	return opt.volume ? op->volume : op->weight;
}

static const struct op *pick_op(struct rng *r)
{
	static unsigned int total;
	unsigned int i, x;

	if (!total)
		for (i = 0; i < NR_OPS; i++)
			total += op_weight(&op_table[i]);
	x = rnd(r, total);
	for (i = 0; i < NR_OPS; i++) {
		if (x < op_weight(&op_table[i]))
			return &op_table[i];
		x -= op_weight(&op_table[i]);
	}
	return &op_table[0];
}

static void *map_or_die(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* The thread's buffers: for DMA, for ioctl arguments, bad pointers. */
static int thread_buffers(struct tctx *t)
{
	size_t cbs_bytes = (CBS_MAX * sizeof(struct flex_cb) + PAGE - 1) & ~(PAGE - 1);
	unsigned char *cb_area;
	int mfd;

	t->heap = map_or_die(HEAP_LEN, PROT_READ | PROT_WRITE);
	t->none = map_or_die(NONE_LEN, PROT_NONE);
	t->guard = map_or_die(2 * PAGE, PROT_READ | PROT_WRITE);
	t->argbuf = map_or_die(ARGBUF_LEN, PROT_READ | PROT_WRITE);
	cb_area = map_or_die(cbs_bytes + PAGE, PROT_READ | PROT_WRITE);
	if (!t->heap || !t->none || !t->guard || !t->argbuf || !cb_area)
		return -1;
	if (mprotect(t->guard + PAGE, PAGE, PROT_NONE) ||
	    mprotect(cb_area + cbs_bytes, PAGE, PROT_NONE))
		return -1;
	t->cbs = (struct flex_cb *)cb_area;

	/* One memfd seen twice: written through rw, passed as ro. */
	mfd = memfd_create("flex_fuzz_ro", MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, RO_LEN))
		return -1;
	t->rw = mmap(NULL, RO_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	t->ro = mmap(NULL, RO_LEN, PROT_READ, MAP_SHARED, mfd, 0);
	close(mfd);
	if (t->rw == MAP_FAILED || t->ro == MAP_FAILED)
		return -1;
	memset(t->heap, 0x5a, HEAP_LEN);
	return 0;
}

static void *thread_main(void *arg)
{
	struct tctx *t = arg;

	if (thread_buffers(t)) {
		violation(t, &sh->bad_internal, "cannot map the thread's buffers: %s",
			  strerror(errno));
		return NULL;
	}
	while (!stopping()) {
		const struct op *op = pick_op(&t->r);
		int64_t t0 = now_ns();

		snprintf(t->why, sizeof(t->why), "%s", op->name);
		op->fn(t);
		t->ops++;
		count(&sh->op_runs[op - op_table], 1);
		count(&sh->op_ns[op - op_table], now_ns() - t0);
	}
	nl_thread_fini(t);
	return NULL;
}

static void on_sigusr1(int sig)
{
	(void)sig;
}

static void worker_main(int index, int gen)
{
	uint64_t seed = derive_seed(sh->master_seed, index + 1, gen, 0);
	struct rlimit nofile = { 65536, 65536 };
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	struct tctx *threads;
	pthread_t *tids;
	struct proc *p;
	struct rng r = { seed };
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* A leaked fd (see the fence probe) must not starve the run of fds. */
	setrlimit(RLIMIT_NOFILE, &nofile);
	sa.sa_flags = sh->restart_syscalls && (index & 1) ? SA_RESTART : 0;
	sigaction(SIGUSR1, &sa, NULL);
	if (sigbus_install()) {
		violation(NULL, &sh->bad_internal, "worker %d.%d: cannot install the SIGBUS handler",
			  index, gen);
		_exit(2);
	}

	p = calloc(1, sizeof(*p));
	threads = calloc(opt.threads, sizeof(*threads));
	tids = calloc(opt.threads, sizeof(*tids));
	if (!p || !threads || !tids)
		_exit(2);
	p->index = index;
	p->gen = gen;
	pthread_mutex_init(&p->lock, NULL);
	pthread_rwlock_init(&p->maplock, NULL);
	for (i = 0; i < NR_SLOTS; i++) {
		struct tctx tmp = { .p = p, .r = r };

		p->slots[i].fd = -1;
		slot_open(&tmp, i);
		r = tmp.r;
	}
	nl_proc_init(p);

	for (i = 0; i < opt.threads; i++) {
		threads[i].p = p;
		threads[i].tid = i;
		threads[i].r.s = derive_seed(sh->master_seed, index + 1, gen, i + 1);
		if (pthread_create(&tids[i], NULL, thread_main, &threads[i])) {
			violation(NULL, &sh->bad_internal, "worker %d.%d: pthread_create failed",
				  index, gen);
			_exit(2);
		}
	}
	for (i = 0; i < opt.threads; i++)
		pthread_join(tids[i], NULL);
	fence_stash_close_all(p);
	/*
	 * Every sync_file this process was given is closed now: one left is
	 * an fd a failed FENCE_EXPORT installed anyway.
	 */
	i = count_sync_files(0);
	if (i > 0)
		violation(NULL, &sh->bad_data, "worker %d.%d: %d sync_file fds open at its end, "
			  "expected 0 (a FENCE_EXPORT that failed, or whose fd was not "
			  "returned, installed one)", index, gen, i);
	/* Whatever is still open (queues with work, mappings) goes at exit. */
	_exit(0);
}

/* ---- the supervisor ---- */

static int tap_n, tap_failed;

static void tap(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_failed = 1;
}

struct worker {
	pid_t pid;
	int index, gen;
	int killed;		/* we sent SIGKILL */
	int done;
	int status;
};

#define MAX_WORKERS	64
/* How often the parent prints a progress line: long runs show their rate. */
#define PROGRESS_NS	(60 * 1000000000LL)
static struct worker workers[MAX_WORKERS];
static int nworkers;

static void spawn(int index, int gen)
{
	struct worker *w = &workers[nworkers++];
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		worker_main(index, gen);
	w->pid = pid;
	w->index = index;
	w->gen = gen;
	if (pid < 0) {
		w->done = 1;
		w->status = -1;
	}
}

static struct worker *running_worker(int index)
{
	int i;

	for (i = nworkers - 1; i >= 0; i--)
		if (workers[i].index == index && !workers[i].done)
			return &workers[i];
	return NULL;
}

static int reap(int block_ms)
{
	int64_t end = now_ns() + block_ms * 1000000LL;
	int i, left;

	for (;;) {
		left = 0;
		for (i = 0; i < nworkers; i++) {
			struct worker *w = &workers[i];

			if (w->done)
				continue;
			if (waitpid(w->pid, &w->status, WNOHANG) == w->pid)
				w->done = 1;
			else
				left++;
		}
		if (!left || now_ns() >= end)
			return left;
		usleep(20000);
	}
}

static void report_worker(struct worker *w)
{
	int st = w->status;

	if (w->status == -1)
		tap(0, "worker %d.%d: fork failed", w->index, w->gen);
	else if (!w->done)
		tap(0, "worker %d.%d (pid %d): still running after SIGKILL (stuck in the kernel?)",
		    w->index, w->gen, w->pid);
	else if (w->killed == 1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
		tap(1, "worker %d.%d (pid %d): killed with SIGKILL mid-run, as planned",
		    w->index, w->gen, w->pid);
	else if (w->killed == 2)
		tap(0, "worker %d.%d (pid %d): did not stop within 30 s of the stop flag; "
		    "killed (expected a clean exit)", w->index, w->gen, w->pid);
	else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		tap(1, "worker %d.%d (pid %d): exited with status 0", w->index, w->gen, w->pid);
	else if (WIFEXITED(st))
		tap(0, "worker %d.%d (pid %d): exited with status %d, expected 0",
		    w->index, w->gen, w->pid, WEXITSTATUS(st));
	else
		tap(0, "worker %d.%d (pid %d): died of signal %s, expected a clean exit",
		    w->index, w->gen, w->pid, sigabbrev_np(WTERMSIG(st)) ?: "?");
}

static const char *const kind_names[NR_KINDS] = {
	[K_QUERY] = "FLEX_IOCTL_QUERY",
	[K_ACQUIRE] = "FLEX_IOCTL_REGION_ACQUIRE",
	[K_RELEASE] = "FLEX_IOCTL_REGION_RELEASE",
	[K_INFO] = "FLEX_IOCTL_REGION_INFO",
	[K_QCREATE] = "FLEX_IOCTL_QUEUE_CREATE",
	[K_QDESTROY] = "FLEX_IOCTL_QUEUE_DESTROY",
	[K_QRESET] = "FLEX_IOCTL_QUEUE_RESET",
	[K_QSTATUS] = "FLEX_IOCTL_QUEUE_STATUS",
	[K_SUBMIT] = "FLEX_IOCTL_SUBMIT",
	[K_WAIT] = "FLEX_IOCTL_WAIT",
	[K_FENCE] = "FLEX_IOCTL_FENCE_EXPORT",
	[K_BADNR] = "unknown ioctl numbers",
};

/* "0 1234, EINVAL 56, ..." : what each ioctl returned. */
static void histogram(int k, char *buf, size_t len)
{
	size_t n = 0;
	int e;

	buf[0] = '\0';
	for (e = 0; e < NR_ERRNO && n < len; e++) {
		uint64_t c = load(&sh->hist[k][e]);

		if (!c)
			continue;
		n += snprintf(buf + n, len - n, "%s%s %" PRIu64, n ? ", " : "",
			      e == 0 ? "ok" : e == NR_ERRNO - 1 ? "other" : errname(e), c);
	}
}

/* Polls a condition for up to @ms (things settle after the last close). */
static long long settle(const char *path, long long want, int ms)
{
	int64_t end = now_ns() + ms * 1000000LL;
	long long v;

	for (;;) {
		v = sysfs_num("%s", path);
		if (v == want || now_ns() >= end)
			return v;
		usleep(50000);
	}
}

static int count_region_dirs(void)
{
	DIR *d = opendir(FLEX_SYSFS "/regions");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

/*
 * A mapping of a released region raises SIGBUS, also once the region's
 * device memory, and so its mmap offset, belongs to a new region of the
 * same file (uapi.rst: "a mapping of the old region still raises SIGBUS
 * and never reaches the new one").
 */
static void probe_stale_mapping(void)
{
	struct flex_region_acquire a = { .size = 2 * MiB }, b = { .size = 2 * MiB };
	struct flex_region_release rel = { 0 };
	unsigned char *old, *new;
	int fd, faulted, err;

	fd = open(FLEX_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, FLEX_IOCTL_REGION_ACQUIRE, &a)) {
		tap(0, "probe setup: open %s and acquire a region: %s", FLEX_DEV, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	old = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, a.mmap_offset);
	if (old == MAP_FAILED) {
		tap(0, "probe setup: mmap a region: %s", strerror(errno));
		close(fd);
		return;
	}
	old[0] = 0x5a;
	rel.region_id = a.region_id;
	err = ioctl(fd, FLEX_IOCTL_REGION_RELEASE, &rel) ? errno : 0;
	faulted = touch(old, 0);
	tap(!err && faulted, "probe: a mapping of a released region raises SIGBUS (expected "
	    "release 0 and SIGBUS, got %s and %s)", errname(err),
	    faulted ? "SIGBUS" : "a readable page");
	if (!ioctl(fd, FLEX_IOCTL_REGION_ACQUIRE, &b)) {
		new = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, b.mmap_offset);
		if (new != MAP_FAILED)
			new[0] = 0xa5;	/* back the new region's page */
		faulted = touch(old, 1);
		tap(faulted, "probe: the stale mapping stays dead when a new region takes the "
		    "memory (new mmap_offset 0x%llx, old 0x%llx): expected SIGBUS, got %s",
		    b.mmap_offset, a.mmap_offset,
		    faulted ? "SIGBUS" : "a writable page (of the new region?)");
		if (new != MAP_FAILED)
			munmap(new, PAGE);
	}
	munmap(old, PAGE);
	close(fd);
}

/*
 * Deterministic probes, one process and thread, before the fuzzing: cases
 * whose effect the random phase cannot observe (what a failed call left
 * behind).
 */
static void probes(void)
{
	struct flex_queue_create qc = { .priority = FLEX_QUEUE_PRIO_NORMAL };
	struct flex_submit sub = { 0 };
	struct flex_fence_export *fe;
	struct flex_cb cb = { .opcode = FLEX_CB_NOP };
	int fd, before, after, err;
	unsigned char *ro;

	fd = open(FLEX_DEV, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, FLEX_IOCTL_QUEUE_CREATE, &qc)) {
		tap(0, "probe setup: open %s and create a queue: %s", FLEX_DEV, strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	sub.cbs_ptr = (uintptr_t)&cb;
	sub.count = 1;
	sub.queue_id = qc.queue_id;
	if (ioctl(fd, FLEX_IOCTL_SUBMIT, &sub)) {
		tap(0, "probe setup: submit a NOP: %s", strerror(errno));
		close(fd);
		return;
	}

	/*
	 * FENCE_EXPORT whose argument is readable but not writable: the
	 * call must fail with EFAULT and leave no fd behind (the fd must not
	 * be installed before the copy out can fail).
	 */
	ro = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fe = (struct flex_fence_export *)ro;
	fe->queue_id = qc.queue_id;
	fe->seqno = sub.seqno;
	mprotect(ro, PAGE, PROT_READ);
	before = count_fds();
	err = ioctl(fd, FLEX_IOCTL_FENCE_EXPORT, fe) ? errno : 0;
	after = count_fds();
	tap(err == EFAULT && after == before,
	    "probe: FENCE_EXPORT with a read-only argument returns EFAULT and installs no fd "
	    "(expected EFAULT and %d fds, got %s and %d fds)", before, errname(err), after);
	munmap(ro, PAGE);
	close(fd);
	/* Close whatever it leaked so the teardown checks see only the run. */
	count_sync_files(1);
	probe_stale_mapping();
}

static void usage(void)
{
	fprintf(stderr,
		"usage: flex_fuzz [--seconds N] [--ioctls N] [--seed S] [--procs P]\n"
		"                 [--threads T] [--vfs V] [--no-kill] [--no-signals]\n"
		"                 [--volume]\n"
		"Fuzz /dev/flex0 and its VFs for N seconds (default 30) or N ioctls in all;\n"
		"--seed S replays a run (its seed is printed first); --volume weights the\n"
		"operations towards ioctls, for runs counted in ioctls.\n");
	exit(2);
}

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "ioctls", required_argument, NULL, 'i' },
		{ "seed", required_argument, NULL, 'S' },
		{ "procs", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "vfs", required_argument, NULL, 'v' },
		{ "no-kill", no_argument, NULL, 'K' },
		{ "no-signals", no_argument, NULL, 'G' },
		{ "volume", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': opt.seconds = strtoul(optarg, NULL, 0); break;
		case 'i': opt.ioctls = strtoull(optarg, NULL, 0); break;
		case 'S': opt.seed = strtoull(optarg, NULL, 0); opt.have_seed = 1; break;
		case 'p': opt.procs = atoi(optarg); break;
		case 't': opt.threads = atoi(optarg); break;
		case 'v': opt.vfs = atoi(optarg); break;
		case 'K': opt.kill = 0; break;
		case 'G': opt.signals = 0; break;
		case 'V': opt.volume = 1; break;
		default: usage();
		}
	}
	if (optind != argc || opt.procs < 1 || opt.procs > 16 || opt.threads < 1 ||
	    opt.threads > 16 || opt.vfs < 0 || opt.vfs > 4)
		usage();
	if (!opt.seconds && !opt.ioctls)
		opt.seconds = 30;
	if (!opt.have_seed && getrandom(&opt.seed, sizeof(opt.seed), 0) != sizeof(opt.seed))
		opt.seed = (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32);
}

int main(int argc, char **argv)
{
	int64_t start, stop_at, kill_at = -1, next_signal, next_progress;
	uint64_t kill_at_ioctls = 0, progress_ioctls = 0;
	char quota_capacity[64] = "", quota_backing[64] = "";
	struct rng r;
	double secs;
	char buf[1024];
	long long v;
	int i, k, err, nviol, total_vfs;

	parse_args(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("fuzz: seed %" PRIu64 "\n", opt.seed);
	printf("TAP version 13\n");
	printf("# %d procs x %d threads, %u s, ioctl budget %" PRIu64 ", %d VFs%s; replay with "
	       "--seed %" PRIu64 "\n", opt.procs, opt.threads, opt.seconds, opt.ioctls, opt.vfs,
	       opt.volume ? ", --volume" : "", opt.seed);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		tap(0, "setup: map the shared counters: %s", strerror(errno));
		return 1;
	}
	sh->master_seed = opt.seed;
	sh->ioctl_budget = opt.ioctls;
	r.s = derive_seed(opt.seed, 0, 0, 0);
	sh->restart_syscalls = rnd(&r, 2);

	if (sigbus_install()) {
		tap(0, "setup: install the SIGBUS handler: %s", strerror(errno));
		return 1;
	}
	if (access(FLEX_DEV, R_OK | W_OK)) {
		tap(0, "setup: %s: %s (is flex.ko loaded?)", FLEX_DEV, strerror(errno));
		printf("1..%d\n", tap_n);
		return 1;
	}
	sysfs_write(FLEX_DEBUGFS "/engines_paused", "0");
	total_vfs = (int)sysfs_num(FLEX_SYSFS "/sriov_totalvfs");
	if (opt.vfs > total_vfs)
		opt.vfs = total_vfs > 0 ? total_vfs : 0;
	sh->nr_vfs = opt.vfs;
	if (opt.vfs) {
		snprintf(buf, sizeof(buf), "%d", opt.vfs);
		sysfs_write(FLEX_SYSFS "/sriov_numvfs", "0");
		err = sysfs_write(FLEX_SYSFS "/sriov_numvfs", buf);
		v = sysfs_num(FLEX_SYSFS "/sriov_numvfs");
		tap(!err && v == opt.vfs, "setup: enable %d VFs through sriov_numvfs "
		    "(expected 0 and %d, got %s and %lld)", opt.vfs, opt.vfs, errname(-err), v);
	}
	/* Workers may change the PF's quotas (op_sysfs); they go back after. */
	sysfs_read(FLEX_SYSFS "/quota_capacity", quota_capacity, sizeof(quota_capacity));
	sysfs_read(FLEX_SYSFS "/quota_backing", quota_backing, sizeof(quota_backing));
	probes();

	start = now_ns();
	stop_at = opt.seconds ? start + opt.seconds * 1000000000LL : start + 3600 * 1000000000LL;
	if (opt.kill) {
		/* One SIGKILL, between a quarter and three quarters of the run. */
		if (opt.seconds)
			kill_at = start + (opt.seconds * 250 + rnd(&r, opt.seconds * 500 + 1)) *
					  1000000LL;
		if (opt.ioctls)
			kill_at_ioctls = opt.ioctls / 4 + rnd(&r, opt.ioctls / 2 + 1);
	}
	next_signal = start + 200000000LL;
	next_progress = start + PROGRESS_NS;
	/* A worker ignores SIGUSR1 until it has installed its handler. */
	signal(SIGUSR1, SIG_IGN);
	for (i = 0; i < opt.procs; i++)
		spawn(i, 0);

	for (;;) {
		int64_t t = now_ns();

		if (t >= stop_at || stopping())
			break;
		if (opt.kill && ((kill_at > 0 && t >= kill_at) ||
				 (kill_at_ioctls && load(&sh->ioctls) >= kill_at_ioctls))) {
			int victim = rnd(&r, opt.procs);
			struct worker *w = running_worker(victim);

			opt.kill = 0;
			if (w) {
				printf("# SIGKILL worker %d.%d (pid %d) at %.1f s, %" PRIu64
				       " ioctls; starting worker %d.%d\n", w->index, w->gen,
				       w->pid, (t - start) / 1e9, load(&sh->ioctls), w->index,
				       w->gen + 1);
				w->killed = 1;
				kill(w->pid, SIGKILL);
				/* Its queues' work was in flight; unpause if it paused. */
				sysfs_write(FLEX_DEBUGFS "/engines_paused", "0");
				if (nworkers < MAX_WORKERS)
					spawn(w->index, w->gen + 1);
			}
		}
		if (opt.signals && t >= next_signal) {
			struct worker *w = running_worker(rnd(&r, opt.procs));

			if (w)
				kill(w->pid, SIGUSR1);
			next_signal = t + (50 + rnd(&r, 400)) * 1000000LL;
		}
		if (t >= next_progress) {
			uint64_t n = load(&sh->ioctls);

			printf("# progress: %.0f s, %" PRIu64 " ioctls, %.0f/s in the last %d s\n",
			       (t - start) / 1e9, n, (n - progress_ioctls) * 1e9 / PROGRESS_NS,
			       (int)(PROGRESS_NS / 1000000000LL));
			progress_ioctls = n;
			next_progress += PROGRESS_NS;
		}
		reap(0);
		usleep(20000);
	}
	secs = (now_ns() - start) / 1e9;
	if (opt.ioctls && opt.seconds)
		tap(load(&sh->ioctls) >= opt.ioctls, "budget: %" PRIu64 " ioctls issued within the "
		    "%u s limit (issued %" PRIu64 " in %.0f s)", opt.ioctls, opt.seconds,
		    load(&sh->ioctls), secs);

	/* Stop: every thread finishes its call and the workers exit. */
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	sysfs_write(FLEX_DEBUGFS "/engines_paused", "0");
	if (reap(30000)) {
		for (i = 0; i < nworkers; i++) {
			if (!workers[i].done) {
				workers[i].killed = 2;
				kill(workers[i].pid, SIGKILL);
			}
		}
		reap(10000);
	}
	for (i = 0; i < nworkers; i++)
		report_worker(&workers[i]);

	/* What the workers found. */
	for (k = 0; k < NR_KINDS; k++) {
		uint64_t bad = load(&sh->bad_errno[k]) + load(&sh->bad_positive[k]);

		histogram(k, buf, sizeof(buf));
		tap(!bad, "%s: %" PRIu64 " calls, %" PRIu64 " with an errno outside the documented "
		    "set or a positive return (returned: %s)", kind_names[k], load(&sh->calls[k]),
		    bad, buf[0] ? buf : "nothing");
	}
	tap(!load(&sh->bad_data), "out structures consistent with the uapi (%" PRIu64
	    " inconsistent)", load(&sh->bad_data));
	tap(!load(&sh->bad_isolation), "no file saw or mapped another file's region (%" PRIu64
	    " did)", load(&sh->bad_isolation));
	tap(!load(&sh->bad_sigbus), "touching a released region's mapping raises SIGBUS "
	    "(%" PRIu64 " such touches, %" PRIu64 " did not fault; %" PRIu64 " touches in all, "
	    "%" PRIu64 " SIGBUS)", load(&sh->released_touches), load(&sh->bad_sigbus),
	    load(&sh->touches), load(&sh->sigbus));
	tap(!load(&sh->bad_mm), "mmap/munmap/mremap/madvise/mprotect of regions as documented "
	    "(%" PRIu64 " calls, %" PRIu64 " unexpected)", load(&sh->mm_calls),
	    load(&sh->bad_mm));
	tap(!load(&sh->bad_fork), "fork children sharing the mappings exit cleanly (%" PRIu64
	    " forks, %" PRIu64 " died)", load(&sh->forks), load(&sh->bad_fork));
	tap(!load(&sh->bad_netlink), "netlink: %" PRIu64 " requests, %" PRIu64 " replies, %"
	    PRIu64 " errors, %" PRIu64 " events; %" PRIu64 " out of spec", load(&sh->netlink),
	    load(&sh->nl_replies), load(&sh->nl_errors), load(&sh->nl_events),
	    load(&sh->bad_netlink));
	tap(!load(&sh->bad_sysfs), "sysfs/debugfs: %" PRIu64 " reads and writes, %" PRIu64
	    " unexpected results", load(&sh->sysfs), load(&sh->bad_sysfs));
	tap(!load(&sh->bad_internal), "the fuzzer ran as intended (%" PRIu64 " internal errors)",
	    load(&sh->bad_internal));
	nviol = __atomic_load_n(&sh->nr_violations, __ATOMIC_RELAXED);
	for (i = 0; i < nviol && i < MAX_VIOLATIONS; i++)
		printf("# violation: %s\n", sh->violations[i]);
	if (nviol > MAX_VIOLATIONS)
		printf("# ... and %d more violations\n", nviol - MAX_VIOLATIONS);
	printf("# %" PRIu64 " calls on a closed-and-reused fd were not checked; %" PRIu64
	       " waits returned a fault; %" PRIu64 " fences polled\n", load(&sh->stale),
	       load(&sh->faults_seen), load(&sh->fences_polled));
	printf("# %" PRIu64 " CBs queued, %" PRIu64 " of them compute launches; QUEUE_STATUS "
	       "fault codes:", load(&sh->submitted_cbs), load(&sh->submitted_compute));
	for (i = 0; i < 16; i++)
		if (load(&sh->fault_codes[i]))
			printf(" %d:%" PRIu64, i, load(&sh->fault_codes[i]));
	printf("\n");

	/* The device is clean once every worker is gone. */
	if (quota_capacity[0])
		sysfs_write(FLEX_SYSFS "/quota_capacity", quota_capacity);
	if (quota_backing[0])
		sysfs_write(FLEX_SYSFS "/quota_backing", quota_backing);
	if (opt.vfs) {
		int64_t end = now_ns() + 3000000000LL;

		do {
			err = sysfs_write(FLEX_SYSFS "/sriov_numvfs", "0");
		} while (err == -EBUSY && now_ns() < end && !usleep(100000));
		v = sysfs_num(FLEX_SYSFS "/sriov_numvfs");
		tap(!err && v == 0, "teardown: VFs disable (expected 0 and sriov_numvfs 0, "
		    "got %s and %lld)", errname(-err), v);
	}
	v = settle(FLEX_SYSFS "/used", 0, 3000);
	tap(v == 0, "teardown: %s/used is 0 (got %lld)", FLEX_SYSFS, v);
	v = settle(FLEX_SYSFS "/resident", 0, 3000);
	tap(v == 0, "teardown: %s/resident is 0 (got %lld)", FLEX_SYSFS, v);
	i = count_region_dirs();
	tap(i == 0, "teardown: no directory left in %s/regions/ (got %d)", FLEX_SYSFS, i);
	v = settle(FLEX_DEBUGFS "/pinned_pages", 0, 3000);
	tap(v == 0, "teardown: %s/pinned_pages is 0 (got %lld)", FLEX_DEBUGFS, v);
	i = nl_count_objects(FLEX_CMD_REGION_GET, &err);
	tap(i == 0 && !err, "teardown: netlink region dump is empty (expected 0 and no error, "
	    "got %d and %s)", i, errname(err));
	i = nl_count_objects(FLEX_CMD_QUEUE_GET, &err);
	tap(i == 0 && !err, "teardown: netlink queue dump is empty (expected 0 and no error, "
	    "got %d and %s)", i, errname(err));
	v = settle("/sys/module/flex/refcnt", 0, 3000);
	tap(v == 0, "teardown: /sys/module/flex/refcnt is 0, no reference leaked (got %lld)", v);

	/* Where the workers' time went, for tuning op_table[]'s weights. */
	for (i = 0; i < (int)NR_OPS; i++)
		printf("# op %-10s %9" PRIu64 " runs %8.1f s %9.1f us each\n", op_table[i].name,
		       load(&sh->op_runs[i]), load(&sh->op_ns[i]) / 1e9,
		       load(&sh->op_runs[i]) ? load(&sh->op_ns[i]) / 1e3 / load(&sh->op_runs[i]) : 0);
	printf("fuzz: ioctls %" PRIu64 " calls\n", load(&sh->ioctls));
	printf("fuzz: netlink %" PRIu64 " calls\n", load(&sh->netlink));
	printf("fuzz: seconds %.0f s\n", secs);
	printf("fuzz: ioctl_rate %.0f calls/s\n", secs > 0 ? load(&sh->ioctls) / secs : 0);
	printf("1..%d\n", tap_n);
	return tap_failed;
}
