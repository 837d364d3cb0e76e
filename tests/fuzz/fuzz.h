/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex_fuzz: declarations shared by the fuzzer's files.
 *
 * The fuzzer (flex_fuzz.c has the overview) is one supervisor process and
 * worker processes, each with worker threads. Counters and the record of
 * every violation live in one MAP_SHARED anonymous mapping (struct shared),
 * so they survive a worker that is killed. A worker's threads share that
 * process's model of what it holds (struct proc): open files ("slots") with
 * their regions and queues, and the mappings of regions.
 */
#ifndef FLEX_FUZZ_H
#define FLEX_FUZZ_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/flex.h>
#include <linux/flex_isa.h>

/* FLEX_SYSFS, sysfs_read(), sysfs_num(), sysfs_write(), region_dir_exists() */
#include "flex_sysfs.h"

#define FLEX_DEV	"/dev/flex0"
#define FLEX_DEBUGFS	"/sys/kernel/debug/flex/flex0"
#define PAGE		4096UL
#define MiB		(1ULL << 20)

/* ---- the random number generator: splitmix64, one per thread ---- */

struct rng {
	uint64_t s;
};

static inline uint64_t rnd64(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); 0 when n is 0. */
static inline uint32_t rnd(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rnd64(r) % n) : 0;
}

/* True with probability pct percent. */
static inline int chance(struct rng *r, unsigned int pct)
{
	return rnd(r, 100) < pct;
}

/* The seed of stream @a.@b.@c of a run, from its master seed. */
static inline uint64_t derive_seed(uint64_t master, uint64_t a, uint64_t b, uint64_t c)
{
	struct rng r = { master ^ (a << 40) ^ (b << 20) ^ c };

	rnd64(&r);
	return rnd64(&r) ^ c;
}

uint64_t rnd_interesting(struct rng *r);

/* ---- the ioctls, for counting and errno allow-lists ---- */

enum ioctl_kind {
	K_QUERY,
	K_ACQUIRE,
	K_RELEASE,
	K_INFO,
	K_QCREATE,
	K_QDESTROY,
	K_QRESET,
	K_QSTATUS,
	K_SUBMIT,
	K_WAIT,
	K_FENCE,
	K_BADNR,	/* numbers the driver does not know: -ENOTTY */
	NR_KINDS
};

#define MAX_OPS		32	/* op_table[] entries */
#define NR_ERRNO	136	/* histogram buckets; the last one is "other" */

/* ---- the page shared by every process of a run ---- */

#define MAX_VIOLATIONS	48
#define VIOLATION_LEN	640

struct shared {
	uint64_t master_seed;
	uint64_t ioctl_budget;		/* 0: run for the time given */
	int stop;			/* set by the supervisor: threads finish */
	int nr_vfs;			/* VFs enabled for the run */
	int restart_syscalls;		/* SA_RESTART for the SIGUSR1 handler */

	uint64_t ioctls;		/* every ioctl on a flex file */
	uint64_t netlink;		/* netlink requests sent */
	uint64_t nl_events;		/* multicast events received */
	uint64_t nl_replies;		/* reply messages received */
	uint64_t nl_errors;		/* requests answered with an error */
	uint64_t sysfs;			/* sysfs/debugfs reads and writes */
	uint64_t mm_calls;		/* mmap, munmap, mremap, madvise, mprotect */
	uint64_t touches;		/* pages of region mappings touched */
	uint64_t sigbus;		/* of them, answered with SIGBUS */
	uint64_t released_touches;	/* touches of released regions' mappings */
	uint64_t forks;
	uint64_t stale;			/* calls whose fd was closed meanwhile */
	uint64_t fences_polled;
	uint64_t faults_seen;		/* waits that returned a fault's errno */
	uint64_t submitted_cbs;		/* CBs of successful SUBMITs... */
	uint64_t submitted_compute;	/* ...of them COMPUTE */
	uint64_t fault_codes[16];	/* QUEUE_STATUS fault_code seen */

	uint64_t calls[NR_KINDS];
	uint64_t op_runs[MAX_OPS];	/* op_table[] entries run... */
	uint64_t op_ns[MAX_OPS];	/* ...and the time they took */
	uint64_t hist[NR_KINDS][NR_ERRNO];	/* [0] success, [e] errno e */

	/* Every violation counts in one of these... */
	uint64_t bad_errno[NR_KINDS];
	uint64_t bad_positive[NR_KINDS];
	uint64_t bad_data;		/* an out structure that makes no sense */
	uint64_t bad_mm;		/* mm calls: unexpected result */
	uint64_t bad_sigbus;		/* a released region's mapping still readable */
	uint64_t bad_isolation;		/* a file saw another file's region */
	uint64_t bad_netlink;		/* netlink: errno or reply out of spec */
	uint64_t bad_sysfs;
	uint64_t bad_fork;		/* a fork child died of a signal */
	uint64_t bad_internal;		/* the fuzzer itself could not run */

	/* ...and the first MAX_VIOLATIONS are kept as text. */
	uint32_t nr_violations;
	char violations[MAX_VIOLATIONS][VIOLATION_LEN];
};

extern struct shared *sh;

static inline void count(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

static inline uint64_t load(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static inline int stopping(void)
{
	if (__atomic_load_n(&sh->stop, __ATOMIC_RELAXED))
		return 1;
	return sh->ioctl_budget && load(&sh->ioctls) >= sh->ioctl_budget;
}

/* ---- a worker process's model of what it holds ---- */

#define NR_SLOTS	2	/* open files per worker process */
#define MAX_REGIONS	10	/* tracked per file */
#define MAX_QUEUES	10
#define MAX_MAPS	24	/* mappings per process */
#define MAX_FENCES	16	/* sync_file fds kept open per process */
#define NR_NODES	(1 + 4)	/* the PF and up to 4 VFs */

struct region {
	__u64 id, mmap_offset, handle, size;
};

struct queue {
	__u32 id;
	__u32 depth;
	__u64 seqno;		/* highest seqno we saw submitted */
};

struct slot {
	int fd;			/* -1 while closed */
	unsigned int gen;	/* bumped by every close */
	int node;		/* 0: the PF, n: VF n-1 */
	int nregions, nqueues;
	struct region regions[MAX_REGIONS];
	struct queue queues[MAX_QUEUES];
};

struct mapping {
	unsigned char *addr;
	size_t len;
	int prot;
	int slot;
	unsigned int gen;	/* the slot's gen when it was mapped */
	__u64 handle;		/* the region it maps */
	int released;		/* we released that region: touching must SIGBUS */
	int split;		/* more than one VMA (a partial mprotect) */
	char hist[200];		/* what was done to it, for messages */
};

struct proc {
	int index, gen;		/* worker index and generation (replacements) */
	pthread_mutex_t lock;	/* slots, fences */
	struct slot slots[NR_SLOTS];
	int fences[MAX_FENCES];
	int nfences;
	/*
	 * Mappings: touched and used as DMA buffers under the read lock,
	 * changed (munmap, mremap, mprotect) under the write lock, so no
	 * thread ever touches an address that was unmapped and reused.
	 */
	pthread_rwlock_t maplock;
	struct mapping maps[MAX_MAPS];
	int nmaps;
	int family;		/* the flex genetlink family id, or -1 */
	int mcgrp;		/* its events group */
};

/* A thread's snapshot of one slot, taken under proc.lock. */
struct snap {
	int slot;
	int fd;
	unsigned int gen;
	int node;
	int nregions, nqueues;
	struct region regions[MAX_REGIONS];
	struct queue queues[MAX_QUEUES];
};

struct nl_sock;

/* A worker thread. */
struct tctx {
	struct proc *p;
	int tid;
	struct rng r;
	uint64_t ops;
	unsigned char *heap;	/* HEAP_LEN read-write, for DMA */
	unsigned char *ro;	/* RO_LEN, the read-only view of rw */
	unsigned char *rw;
	unsigned char *none;	/* PROT_NONE */
	unsigned char *guard;	/* one RW page, then a PROT_NONE page */
	unsigned char *argbuf;	/* ARGBUF_LEN for ioctl arguments */
	struct flex_cb *cbs;	/* SUBMIT arrays */
	struct nl_sock *nl;	/* requests */
	struct nl_sock *ev;	/* the events group */
	uint32_t nl_seq;
	int clean;		/* build only valid arguments (a SUBMIT batch) */
	char why[96];		/* the case being run, for messages */
};

#define HEAP_LEN	(2 * MiB)
#define RO_LEN		(64 * 1024)
#define NONE_LEN	(64 * 1024)
#define ARGBUF_LEN	(20 * 1024)
#define CBS_MAX		(FLEX_SUBMIT_MAX_CBS + 8)

/* flex_fuzz.c */
void violation(struct tctx *t, uint64_t *counter, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
const char *errname(int err);
int take_snap(struct tctx *t, int slot, struct snap *s);
int snap_stale(struct tctx *t, const struct snap *s);
struct region *pick_region(struct tctx *t, struct snap *s);
struct queue *pick_queue(struct tctx *t, struct snap *s);
void model_add_region(struct tctx *t, const struct snap *s, const struct flex_region_acquire *a);
void model_del_region(struct tctx *t, const struct snap *s, __u64 id);
void model_add_queue(struct tctx *t, const struct snap *s, __u32 id, __u32 depth);
void model_del_queue(struct tctx *t, const struct snap *s, __u32 id);
void model_seqno(struct tctx *t, const struct snap *s, __u32 id, __u64 seqno);
int64_t now_ns(void);

/* ops_ioctl.c */
int fz_ioctl(struct tctx *t, const struct snap *s, enum ioctl_kind k,
	     unsigned long cmd, void *arg, size_t ksize, int extra_ok);
int out_ok_last(void);
size_t out_len_last(void);
const char *last_call_desc(void);
void op_query(struct tctx *t);
void op_acquire(struct tctx *t);
void op_release(struct tctx *t);
void op_info(struct tctx *t);
void op_qcreate(struct tctx *t);
void op_qdestroy(struct tctx *t);
void op_qreset(struct tctx *t);
void op_qstatus(struct tctx *t);
void op_wait(struct tctx *t);
void op_fence(struct tctx *t);
void op_badnr(struct tctx *t);
void op_poll(struct tctx *t);
void fence_stash_close_all(struct proc *p);

/* ops_submit.c */
void op_submit(struct tctx *t);

/* ops_mm.c */
void op_mmap(struct tctx *t);
void op_munmap(struct tctx *t);
void op_mremap(struct tctx *t);
void op_madvise(struct tctx *t);
void op_mprotect(struct tctx *t);
void op_touch(struct tctx *t);
void op_fork(struct tctx *t);
void maps_mark_released(struct proc *p, int slot, unsigned int gen, __u64 handle);
void maps_forget_slot(struct proc *p, int slot, unsigned int gen);
int pick_host_mapping(struct tctx *t, unsigned char **addr, size_t *len);
int sigbus_install(void);
int touch(unsigned char *p, int write);

/* ops_nl.c */
void op_netlink(struct tctx *t);
void op_nl_events(struct tctx *t);
void nl_thread_fini(struct tctx *t);
int nl_proc_init(struct proc *p);
int nl_count_objects(int cmd, int *err);

/* ops_sys.c */
void op_sysfs(struct tctx *t);
void op_pause(struct tctx *t);
void op_sriov(struct tctx *t);
void op_reopen(struct tctx *t);
int slot_open(struct tctx *t, int slot);

#endif /* FLEX_FUZZ_H */
