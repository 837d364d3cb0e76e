// SPDX-License-Identifier: GPL-2.0
/*
 * flex_soak: the driver under a long random mix of everything at once.
 *
 * Several worker processes (--procs, default 3), each with several threads
 * (--threads, default 2). Every thread opens its own file on the PF or on
 * one of the VFs the soak enables (--vfs, default 2), with two queues of its
 * own (its "streams"), and until the deadline (--seconds, default 60, or
 * SOAK_SECONDS) runs a random mix of:
 *
 *  - REGION_ACQUIRE / REGION_RELEASE of random sizes (multiples of 2 MiB,
 *    within a per-thread share of the backing cap and of the VF's table):
 *    a new region reads zeros, its sysfs directory comes and goes, a
 *    released id is refused afterwards;
 *  - DMA batches host->device->host of random sizes (1 byte to 3 MiB),
 *    device offsets and host alignments, on one queue or across two with a
 *    WAIT CB; every byte read back is compared with a shadow copy of the
 *    region kept by the thread;
 *  - compute programs of 1-4 random instructions (FILL, COPY, ADD, MUL,
 *    RELU, int32 and int8 MATMUL with and without accumulation, random
 *    small shapes, strides, overlapping operands, several segments,
 *    operands from correction slots), the window read back by DMA and
 *    compared with a CPU reference;
 *  - FENCE_EXPORT of a batch's last CB and poll() on the sync_file;
 *  - mmap() of a region: CPU reads against the shadow, CPU writes read back
 *    by DMA;
 *  - a third queue destroyed with DMA in flight (the file's fdinfo shows no
 *    queue and no pin left behind, the data is intact);
 *  - a deliberate out-of-bounds compute fault: sticky, -EIO on submit,
 *    QUEUE_RESET, and nothing written;
 *
 * while the parent SIGKILLs a random worker process now and then and starts
 * a replacement. At the end: every worker exited 0 (except the ones killed
 * on purpose), and the device is clean: used, resident, regions/,
 * pinned_pages and the VF tables at 0, the VFs can be disabled, and the
 * module's reference count is 0.
 *
 * Output: TAP (the plan at the end), then the figures, one per line:
 *   soak: seconds <N> s
 *   soak: bytes_verified <N> bytes
 *   soak: cbs <N> count ... (see print_figures())
 *
 * Without --seconds and SOAK_SECONDS, the run is 10 s on a stock kernel and
 * 25 s on the debug kernel (it has /sys/kernel/debug/kmemleak): the length
 * used when tests/kselftest/run-all runs it as part of `make check` and
 * `make check-debug`. A failure names the worker (slot, generation,
 * thread, device), its operation and the expected and actual values; the
 * seed (--seed, printed first) reproduces the worker's choices, not the
 * interleaving.
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "flex_lane.h"

#define MAX_PROCS	16
#define MAX_THREADS	8
#define MAX_DATA	8		/* data regions per thread */
#define HOSTBUF		(6 * MiB)	/* per thread, src and dst each */
#define WIN_MAX		(256 * LANE_KiB) /* compute window */
#define WAIT_MS		120000		/* a CB that takes longer is a hang */
#define REGION_SZ	(2 * MiB)

/* ---- configuration and shared state ---- */

static struct config {
	double seconds;
	int procs, threads, vfs;
	uint64_t seed;
	uint64_t budget;	/* bytes of data regions per thread */
	int data_max[1 + 16];	/* data regions per thread, by device */
	int lut_entries;
} cfg = { .procs = 3, .threads = 2, .vfs = 2 };

enum {
	C_BYTES, C_CBS, C_DMA, C_DMA_CROSS, C_COMPUTE, C_INSNS, C_I8, C_ACC,
	C_SLOTS, C_FENCES, C_ACQUIRE, C_RELEASE, C_MMAP, C_DESTROY, C_FAULTS,
	C_READBACK, C_CLOSE_INFLIGHT, C_NCOUNTERS
};

static const char *const counter_names[C_NCOUNTERS] = {
	[C_BYTES] = "bytes_verified", [C_CBS] = "cbs", [C_DMA] = "dma_batches",
	[C_DMA_CROSS] = "cross_queue_waits", [C_COMPUTE] = "compute_programs",
	[C_INSNS] = "instructions", [C_I8] = "int8_matmuls",
	[C_ACC] = "accumulating_matmuls", [C_SLOTS] = "programs_with_slots",
	[C_FENCES] = "fences_polled", [C_ACQUIRE] = "regions_acquired",
	[C_RELEASE] = "regions_released", [C_MMAP] = "mmap_checks",
	[C_DESTROY] = "queues_destroyed_busy", [C_FAULTS] = "deliberate_faults",
	[C_READBACK] = "readbacks", [C_CLOSE_INFLIGHT] = "closes_with_work_in_flight",
};

struct slot_state {
	pid_t pid;
	int gen;
	int killed;		/* on purpose, by the parent */
	int failed;		/* a worker thread recorded a failure */
	int bad_exit;		/* the last generation ended badly */
	char msg[900];
};

struct shared {
	volatile int stop;
	int64_t deadline_ns;
	uint64_t count[C_NCOUNTERS];
	uint64_t insn_count[FLEX_OP_MATMUL + 1];
	struct slot_state slot[MAX_PROCS];
};

static struct shared *sh;

static void count(int c, uint64_t n)
{
	__atomic_fetch_add(&sh->count[c], n, __ATOMIC_RELAXED);
}

/* ---- a worker thread ---- */

struct region {
	uint64_t id, size, handle, mmap_off;
	uint8_t *shadow;	/* what the device must hold */
};

struct worker {
	int slot, gen, tid, dev;
	char devname[32];
	int fd, qa, qb;
	uint64_t qa_last;	/* last seqno submitted on qa */
	uint64_t rng;
	struct region prog;
	uint8_t *pmap;		/* the program region, mapped */
	struct region data[MAX_DATA];
	int ndata, data_max;
	uint64_t held;		/* bytes of data regions */
	uint8_t *src, *dst, *ref, *hbuf;
	unsigned long long op_no;
	const char *op;
	pthread_t thread;
};

static int fail(struct worker *w, const char *fmt, ...) LANE_PRINTF(2, 3);
static int fail(struct worker *w, const char *fmt, ...)
{
	struct slot_state *s = &sh->slot[w->slot];
	char msg[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!__atomic_exchange_n(&s->failed, 1, __ATOMIC_SEQ_CST))
		snprintf(s->msg, sizeof(s->msg), "gen %d thread %d on %s, op #%llu (%s): %s",
			 w->gen, w->tid, w->devname, w->op_no, w->op, msg);
	printf("# FAIL slot %d gen %d thread %d on %s, op #%llu (%s): %s\n", w->slot,
	       w->gen, w->tid, w->devname, w->op_no, w->op, msg);
	fflush(stdout);
	return -1;
}

static int done(const struct worker *w)
{
	return sh->stop || now_ns() >= sh->deadline_ns ||
	       __atomic_load_n(&sh->slot[w->slot].failed, __ATOMIC_RELAXED);
}

static uint64_t rnd(struct worker *w, uint64_t lo, uint64_t hi)
{
	return lane_range(&w->rng, lo, hi);
}

static int chance(struct worker *w, unsigned int pct)
{
	return lane_chance(&w->rng, pct);
}

static int worker_submit(struct worker *w, int q, const struct flex_cb *cbs, int n,
		  uint64_t *seq)
{
	int err = lane_submit(w->fd, q, cbs, n, FLEX_SUBMIT_BLOCK, seq);

	if (err)
		return fail(w, "SUBMIT of %d CBs (first opcode %u) on queue %d: expected 0, got %s",
			    n, cbs[0].opcode, q, lane_errname(err));
	if (q == w->qa)
		w->qa_last = *seq;
	count(C_CBS, n);
	return 0;
}

static int wait_for(struct worker *w, int q, uint64_t seq)
{
	struct flex_queue_status st;
	int err = wait_seq(w->fd, q, seq, WAIT_MS);

	if (!err)
		return 0;
	lane_status(w->fd, q, &st);
	return fail(w, "WAIT for seqno %llu on queue %d: expected 0, got %s (completed %llu, "
		    "fault_code %u, fault_seqno %llu, opcode %u, insn %u, addr {0x%llx, +0x%llx})",
		    (unsigned long long)seq, q, lane_errname(err),
		    (unsigned long long)st.completed, st.fault_code,
		    (unsigned long long)st.fault_seqno, st.fault_opcode, st.fault_insn,
		    (unsigned long long)st.fault_addr.region_id,
		    (unsigned long long)st.fault_addr.offset);
}

/* Exports CB @seq's fence and polls it to completion. */
static int fence_poll(struct worker *w, int q, uint64_t seq)
{
	struct pollfd p = { .events = POLLIN };
	int f = lane_fence_export(w->fd, q, seq), n, st;

	if (f < 0)
		return fail(w, "FENCE_EXPORT of seqno %llu on queue %d: expected an fd, got %s",
			    (unsigned long long)seq, q, lane_errname(f));
	p.fd = f;
	n = poll(&p, 1, WAIT_MS);
	st = lane_sync_status(f);
	close(f);
	if (n != 1 || !(p.revents & POLLIN))
		return fail(w, "poll() of the fence of seqno %llu: expected POLLIN within %d ms, "
			    "got %d (revents 0x%x)", (unsigned long long)seq, WAIT_MS, n,
			    p.revents);
	if (st != 1)
		return fail(w, "sync_file status of seqno %llu: expected 1 (signalled), got %d",
			    (unsigned long long)seq, st);
	count(C_FENCES, 1);
	return 0;
}

/* Compares what came back with what must be there, every byte. */
static int verify(struct worker *w, const char *what, const struct region *r,
		  uint64_t off, const uint8_t *want, const uint8_t *got, size_t n)
{
	size_t i, bad = 0, first = 0;

	if (!memcmp(want, got, n)) {
		count(C_BYTES, n);
		return 0;
	}
	for (i = 0; i < n; i++)
		if (want[i] != got[i] && !bad++)
			first = i;
	return fail(w, "%s: region 0x%llx (handle %llu) bytes [0x%llx, +%zu): %zu differ, the "
		    "first at +0x%llx: expected 0x%02x, got 0x%02x", what,
		    (unsigned long long)r->id, (unsigned long long)r->handle,
		    (unsigned long long)off, n, bad, (unsigned long long)(off + first),
		    want[first], got[first]);
}

static struct region *pick_region(struct worker *w)
{
	return &w->data[rnd(w, 0, w->ndata - 1)];
}

/* A DMA size: mostly small, often up to 1 MiB, sometimes above. */
static uint64_t dma_size(struct worker *w, uint64_t max)
{
	uint64_t n;

	switch (rnd(w, 0, 9)) {
	case 0: case 1: case 2: n = rnd(w, 1, 4096); break;
	case 3: case 4: case 5: n = rnd(w, 4097, 256 * LANE_KiB); break;
	case 6: case 7: n = rnd(w, 256 * LANE_KiB, MiB); break;
	default: n = rnd(w, MiB + 1, 3 * MiB); break;
	}
	return n < max ? n : max;
}

/* ---- regions ---- */

static int acquire(struct worker *w, uint64_t size, struct region *r)
{
	struct flex_region_info info = { 0 };
	struct flex_region_acquire a;
	int err = flex_acquire(w->fd, size, &a);

	if (err) {
		char fn[16] = "";

		if (w->dev)
			snprintf(fn, sizeof(fn), "vf%d", w->dev - 1);
		return fail(w, "REGION_ACQUIRE of %llu MiB: expected 0, got %s (this thread holds "
			    "%d regions; %s table_used %lld; device resident %lld)",
			    (unsigned long long)(size >> 20), lane_errname(err), w->ndata + 1,
			    w->devname, sysfs_num(FLEX_SYSFS "%s/table_used", fn),
			    sysfs_num(FLEX_SYSFS "/resident"));
	}
	count(C_ACQUIRE, 1);
	memset(r, 0, sizeof(*r));
	r->id = a.region_id;
	r->size = size;
	r->handle = a.handle;
	r->mmap_off = a.mmap_offset;
	info.region_id = a.region_id;
	err = flex_ioctl(w->fd, FLEX_IOCTL_REGION_INFO, &info);
	if (err || info.size != size || info.handle != a.handle ||
	    info.mmap_offset != a.mmap_offset || info.lut_index != a.lut_index)
		return fail(w, "REGION_INFO of new region 0x%llx: expected 0 and size %llu handle "
			    "%llu, got %s and size %llu handle %llu", (unsigned long long)a.region_id,
			    (unsigned long long)size, (unsigned long long)a.handle,
			    lane_errname(err), (unsigned long long)info.size,
			    (unsigned long long)info.handle);
	if (w->dev ? a.lut_index != a.region_id : a.lut_index != FLEX_NO_LUT_INDEX || !a.region_id)
		return fail(w, "new region: region_id 0x%llx with lut_index %u on a %s",
			    (unsigned long long)a.region_id, a.lut_index, w->dev ? "VF" : "PF");
	if (!region_dir_exists(a.handle))
		return fail(w, "new region handle %llu: no directory in " FLEX_SYSFS "/regions/",
			    (unsigned long long)a.handle);
	r->shadow = calloc(1, size);
	if (!r->shadow)
		return fail(w, "out of host memory for a shadow of %llu bytes",
			    (unsigned long long)size);
	return 0;
}

/* A fresh region reads as zeros: check a random range of it by DMA. */
static int check_zero(struct worker *w, struct region *r)
{
	uint64_t n = dma_size(w, r->size < MiB ? r->size : MiB);
	uint64_t off = rnd(w, 0, r->size - n), seq;
	struct flex_cb cb = cb_dma(0, w->dst, r->id, off, n);

	memset(w->dst, 0xa5, n);
	if (worker_submit(w, w->qa, &cb, 1, &seq) || wait_for(w, w->qa, seq))
		return -1;
	return verify(w, "a new region reads zeros", r, off, r->shadow + off, w->dst, n);
}

static int op_acquire(struct worker *w)
{
	uint64_t room = (cfg.budget - w->held) / REGION_SZ, size;
	struct region *r;

	w->op = "acquire";
	if (w->ndata >= w->data_max || !room)
		return 0;
	size = REGION_SZ * rnd(w, 1, room < 3 ? room : 3);
	r = &w->data[w->ndata];
	if (acquire(w, size, r))
		return -1;
	w->ndata++;
	w->held += size;
	return check_zero(w, r);
}

static int op_release(struct worker *w)
{
	struct flex_region_info info = { 0 };
	int i = (int)rnd(w, 0, w->ndata - 1), err;
	struct region r = w->data[i];
	struct flex_cb cb;
	uint64_t seq;

	w->op = "release";
	if (w->ndata <= 1)
		return 0;
	err = flex_release(w->fd, r.id);
	if (err)
		return fail(w, "REGION_RELEASE of 0x%llx: expected 0, got %s",
			    (unsigned long long)r.id, lane_errname(err));
	count(C_RELEASE, 1);
	w->data[i] = w->data[--w->ndata];
	w->held -= r.size;
	free(r.shadow);
	if (region_dir_exists(r.handle))
		return fail(w, "released region handle %llu: its sysfs directory is still there",
			    (unsigned long long)r.handle);
	info.region_id = r.id;
	err = flex_ioctl(w->fd, FLEX_IOCTL_REGION_INFO, &info);
	if (err != -ENOENT)
		return fail(w, "REGION_INFO of released region 0x%llx: expected -ENOENT, got %s",
			    (unsigned long long)r.id, lane_errname(err));
	/* Its id may be another tenant's entry by now: still not ours. */
	cb = cb_dma(0, w->dst, r.id, 0, 64);
	err = lane_submit(w->fd, w->qa, &cb, 1, 0, &seq);
	if (err != -ENOENT)
		return fail(w, "DMA from released region 0x%llx: expected -ENOENT, got %s",
			    (unsigned long long)r.id, lane_errname(err));
	return 0;
}

/* ---- DMA ---- */

struct chunk {
	struct region *r;
	uint64_t off, size;
	uint8_t *src, *dst;
};

static int op_dma(struct worker *w)
{
	struct flex_cb cbs[2 * 6 + 1];
	struct chunk ch[6];
	int n = chance(w, 50) ? 1 : (int)rnd(w, 2, 6), cross = chance(w, 35), i, k = 0;
	uint64_t seq, sa;
	int q = w->qa;

	w->op = cross ? "dma across queues" : "dma";
	for (i = 0; i < n; i++) {
		/* Each chunk has its own slice of the host buffers. */
		struct chunk *c = &ch[i];
		uint64_t slice = HOSTBUF / n, max = slice - 4096;
		uint64_t halign = rnd(w, 0, 4095);

		c->r = pick_region(w);
		c->size = dma_size(w, c->r->size < max ? c->r->size : max);
		c->off = chance(w, 20) ? rnd(w, 0, (c->r->size - c->size) / 4096) * 4096 :
					 rnd(w, 0, c->r->size - c->size);
		c->src = w->src + i * slice + halign;
		c->dst = w->dst + i * slice + (chance(w, 50) ? halign : rnd(w, 0, 4095));
		lane_fill_random(&w->rng, c->src, c->size);
		memset(c->dst, 0xee, c->size);
	}
	for (i = 0; i < n; i++)
		cbs[k++] = cb_dma(1, ch[i].src, ch[i].r->id, ch[i].off, ch[i].size);
	if (cross) {
		if (worker_submit(w, w->qa, cbs, k, &sa))
			return -1;
		q = w->qb;
		k = 0;
		cbs[k++] = cb_wait(w->qa, sa);
		count(C_DMA_CROSS, 1);
	}
	for (i = 0; i < n; i++)
		cbs[k++] = cb_dma(0, ch[i].dst, ch[i].r->id, ch[i].off, ch[i].size);
	if (worker_submit(w, q, cbs, k, &seq))
		return -1;
	if (chance(w, 25) && fence_poll(w, q, seq))
		return -1;
	if (wait_for(w, q, seq))
		return -1;
	count(C_DMA, 1);
	/* FIFO: every write landed, in order, before the first read. */
	for (i = 0; i < n; i++)
		memcpy(ch[i].r->shadow + ch[i].off, ch[i].src, ch[i].size);
	for (i = 0; i < n; i++)
		if (verify(w, "DMA round trip", ch[i].r, ch[i].off,
			   ch[i].r->shadow + ch[i].off, ch[i].dst, ch[i].size))
			return -1;
	return 0;
}

/* Reads a random range back and compares it with the shadow. */
static int op_readback(struct worker *w)
{
	struct region *r = pick_region(w);
	uint64_t n = dma_size(w, r->size), off = rnd(w, 0, r->size - n), seq;
	uint8_t *dst = w->dst + rnd(w, 0, 4095);
	int q = chance(w, 50) ? w->qa : w->qb;
	struct flex_cb cb = cb_dma(0, dst, r->id, off, n);

	w->op = "readback";
	memset(dst, 0x11, n);
	if (worker_submit(w, q, &cb, 1, &seq) || wait_for(w, q, seq))
		return -1;
	count(C_READBACK, 1);
	return verify(w, "readback", r, off, r->shadow + off, dst, n);
}

/* ---- mmap ---- */

static int op_mmap(struct worker *w)
{
	struct region *r = pick_region(w);
	uint64_t pages = r->size / 4096, p0 = rnd(w, 0, pages - 1);
	uint64_t p1 = rnd(w, p0 + 1, p0 + 128 < pages ? p0 + 128 : pages);
	uint64_t len = (p1 - p0) * 4096, base = p0 * 4096, n, off, seq;
	struct flex_cb cb;
	uint8_t *map;
	int err = 0;

	w->op = "mmap";
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd, r->mmap_off + base);
	if (map == MAP_FAILED)
		return fail(w, "mmap of %llu bytes at +0x%llx of region 0x%llx: %s",
			    (unsigned long long)len, (unsigned long long)base,
			    (unsigned long long)r->id, strerror(errno));
	n = rnd(w, 1, len);
	off = rnd(w, 0, len - n);
	if (verify(w, "CPU read through mmap", r, base + off, r->shadow + base + off,
		   map + off, n)) {
		munmap(map, len);
		return -1;
	}
	if (chance(w, 50)) {
		n = rnd(w, 1, len < 65536 ? len : 65536);
		off = rnd(w, 0, len - n);
		lane_fill_random(&w->rng, w->src, n);
		memcpy(map + off, w->src, n);
		memcpy(r->shadow + base + off, w->src, n);
		cb = cb_dma(0, w->dst, r->id, base + off, n);
		err = worker_submit(w, w->qb, &cb, 1, &seq) ?: wait_for(w, w->qb, seq) ?:
		      verify(w, "DMA read of a CPU write through mmap", r, base + off,
			     r->shadow + base + off, w->dst, n);
	}
	munmap(map, len);
	count(C_MMAP, 1);
	return err;
}

/* ---- compute ---- */

struct op_gen {
	uint8_t op, dtype;
	uint16_t flags;
	uint64_t arg[FLEX_INSN_ARGS];
	uint16_t is_addr;	/* bit i: arg[i] is an offset in the window */
};

static uint32_t ld32(const uint8_t *b, uint64_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static void st32(uint8_t *b, uint64_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

/* Elements a rows x cols operand with stride ld spans. */
static uint64_t span(uint64_t rows, uint64_t cols, uint64_t ld)
{
	return rows && cols ? (rows - 1) * ld + cols : 0;
}

/* A place for @bytes in the window, mostly 4-byte aligned. */
static uint64_t place(struct worker *w, uint64_t ws, uint64_t bytes)
{
	uint64_t off = rnd(w, 0, ws - (bytes ? bytes : 4));

	return chance(w, 80) ? off & ~3ULL : off;
}

static uint64_t dim(struct worker *w)
{
	if (chance(w, 3))
		return 0;
	return chance(w, 85) ? rnd(w, 1, 12) : rnd(w, 13, 40);
}

static uint64_t stride(struct worker *w, uint64_t len)
{
	return len + (chance(w, 50) ? 0 : rnd(w, 1, 7));
}

/* Reads a rows x cols matrix (element size es, signed int8 when es == 1). */
static void load_matrix(const uint8_t *win, uint64_t at, uint64_t rows, uint64_t cols,
			uint64_t ld, int es, uint32_t *out)
{
	uint64_t i, j;

	for (i = 0; i < rows; i++)
		for (j = 0; j < cols; j++)
			out[i * cols + j] = es == 1 ?
				(uint32_t)(int32_t)(int8_t)win[at + i * ld + j] :
				ld32(win, at + 4 * (i * ld + j));
}

/*
 * Generates one instruction over the window (operands as window offsets)
 * and applies it to the reference copy, as the ISA defines it: every
 * input read before the output is written, outputs row by row.
 */
static void gen_insn(struct worker *w, uint8_t *ref, uint64_t ws, struct op_gen *g,
		     char *desc, size_t dlen)
{
	static __thread uint32_t a[64 * 64], b[64 * 64], c[64 * 64];
	uint64_t rows, cols, k, i, j, x, lda, ldb, ldc, A, B, C;
	int kind = (int)rnd(w, 0, 9), es;

	memset(g, 0, sizeof(*g));
	g->dtype = FLEX_DT_I32;
	switch (kind) {
	case 0: {	/* FILL dst, count, value */
		uint64_t n = chance(w, 3) ? 0 : rnd(w, 1, ws / 4 < 2048 ? ws / 4 : 2048);
		uint32_t v = (uint32_t)lane_rand(&w->rng);

		g->op = FLEX_OP_FILL;
		C = place(w, ws, 4 * n);
		g->arg[0] = C, g->arg[1] = n, g->arg[2] = v;
		g->is_addr = 1;
		for (i = 0; i < n; i++)
			st32(ref, C + 4 * i, v);
		snprintf(desc, dlen, "FILL %llu@+0x%llx=0x%x", (unsigned long long)n,
			 (unsigned long long)C, v);
		return;
	}
	case 1: {	/* COPY dst, src, bytes: memmove */
		uint64_t n = chance(w, 3) ? 0 : rnd(w, 1, 16384);

		g->op = FLEX_OP_COPY;
		C = place(w, ws, n);
		A = place(w, ws, n);
		g->arg[0] = C, g->arg[1] = A, g->arg[2] = n;
		g->is_addr = 3;
		memmove(ref + C, ref + A, n);
		snprintf(desc, dlen, "COPY %llu +0x%llx->+0x%llx", (unsigned long long)n,
			 (unsigned long long)A, (unsigned long long)C);
		return;
	}
	case 2: case 3: case 4: {	/* ADD, MUL, RELU */
		g->op = kind == 2 ? FLEX_OP_ADD : kind == 3 ? FLEX_OP_MUL : FLEX_OP_RELU;
		rows = dim(w);
		cols = dim(w);
		ldc = stride(w, cols);
		lda = stride(w, cols);
		ldb = stride(w, cols);
		C = place(w, ws, 4 * span(rows, cols, ldc));
		A = place(w, ws, 4 * span(rows, cols, lda));
		B = place(w, ws, 4 * span(rows, cols, ldb));
		load_matrix(ref, A, rows, cols, lda, 4, a);
		if (g->op == FLEX_OP_RELU) {
			g->arg[0] = C, g->arg[1] = A, g->arg[2] = rows, g->arg[3] = cols;
			g->arg[4] = ldc, g->arg[5] = lda;
			g->is_addr = 3;
			for (i = 0; i < rows * cols; i++)
				c[i] = (int32_t)a[i] > 0 ? a[i] : 0;
		} else {
			load_matrix(ref, B, rows, cols, ldb, 4, b);
			g->arg[0] = C, g->arg[1] = A, g->arg[2] = B, g->arg[3] = rows;
			g->arg[4] = cols, g->arg[5] = ldc, g->arg[6] = lda, g->arg[7] = ldb;
			g->is_addr = 7;
			for (i = 0; i < rows * cols; i++)
				c[i] = g->op == FLEX_OP_ADD ? a[i] + b[i] : a[i] * b[i];
		}
		for (i = 0; i < rows; i++)
			for (j = 0; j < cols; j++)
				st32(ref, C + 4 * (i * ldc + j), c[i * cols + j]);
		snprintf(desc, dlen, "%s %llux%llu ld %llu/%llu/%llu",
			 g->op == FLEX_OP_ADD ? "ADD" : g->op == FLEX_OP_MUL ? "MUL" : "RELU",
			 (unsigned long long)rows, (unsigned long long)cols,
			 (unsigned long long)ldc, (unsigned long long)lda,
			 (unsigned long long)ldb);
		return;
	}
	default: {	/* MATMUL C, A, B, M, N, K, ldc, lda, ldb, acc */
		int acc_flag = chance(w, 20), acc_arg = !acc_flag && chance(w, 25);

		g->op = FLEX_OP_MATMUL;
		g->dtype = chance(w, 40) ? FLEX_DT_I8 : FLEX_DT_I32;
		es = g->dtype == FLEX_DT_I8 ? 1 : 4;
		rows = dim(w);		/* M */
		cols = dim(w);		/* N */
		k = chance(w, 3) ? 0 : rnd(w, 1, 32);
		ldc = stride(w, cols);
		lda = stride(w, k);
		ldb = stride(w, cols);
		C = place(w, ws, 4 * span(rows, cols, ldc));
		A = place(w, ws, es * span(rows, k, lda));
		B = place(w, ws, es * span(k, cols, ldb));
		load_matrix(ref, A, rows, k, lda, es, a);
		load_matrix(ref, B, k, cols, ldb, es, b);
		g->flags = acc_flag ? FLEX_INSN_ACCUMULATE : 0;
		g->arg[0] = C, g->arg[1] = A, g->arg[2] = B, g->arg[3] = rows;
		g->arg[4] = cols, g->arg[5] = k, g->arg[6] = ldc, g->arg[7] = lda;
		g->arg[8] = ldb, g->arg[9] = acc_arg;
		g->is_addr = 7;
		for (i = 0; i < rows; i++) {
			for (j = 0; j < cols; j++) {
				uint32_t s = 0;

				for (x = 0; x < k; x++)
					s += a[i * k + x] * b[x * cols + j];
				if (acc_flag || acc_arg)
					s += ld32(ref, C + 4 * (i * ldc + j));
				st32(ref, C + 4 * (i * ldc + j), s);
			}
		}
		if (es == 1)
			count(C_I8, 1);
		if (acc_flag || acc_arg)
			count(C_ACC, 1);
		snprintf(desc, dlen, "MATMUL/%s M%llu N%llu K%llu ld %llu/%llu/%llu%s",
			 es == 1 ? "i8" : "i32", (unsigned long long)rows,
			 (unsigned long long)cols, (unsigned long long)k,
			 (unsigned long long)ldc, (unsigned long long)lda,
			 (unsigned long long)ldb, acc_flag ? " ACCUMULATE" : acc_arg ? " acc=1" : "");
		return;
	}
	}
}

static int op_compute(struct worker *w)
{
	static __thread struct lane_prog prog;
	uint64_t slots[FLEX_INSN_ARGS * LANE_PROG_MAX_INSNS];
	struct region *r = pick_region(w);
	uint64_t ws = rnd(w, 16 * LANE_KiB, WIN_MAX), win, seg_base[FLEX_NUM_SEGMENTS];
	uint64_t po, co, sa, sb, nslots = 0;
	int nseg = (int)rnd(w, 1, 4), segs[4], use_slots = chance(w, 30), by_dma = chance(w, 50);
	int ninsn = (int)rnd(w, 1, 4), i, j, s, k = 0;
	struct flex_cb cbs[6], cb = { .opcode = FLEX_CB_COMPUTE };
	char desc[600] = "", one[120];
	uint8_t *tosrc;

	w->op = "compute";
	if (ws > r->size)
		ws = r->size;
	win = rnd(w, 0, r->size - ws);
	if (chance(w, 70))
		win &= ~3ULL;
	/* Segments: distinct indices of 0..6, each starting at or before the window. */
	for (i = 0; i < nseg; i++) {
		do {
			s = (int)rnd(w, 0, FLEX_NUM_SEGMENTS - 2);
			for (j = 0; j < i && segs[j] != s; j++)
				;
		} while (j < i);
		segs[i] = s;
		seg_base[s] = win - rnd(w, 0, win < MiB ? win : MiB);
		cb.compute.segment_mask |= 1U << s;
		cb.compute.segments[s] = (struct flex_va){ r->id, seg_base[s] };
	}

	/* The window's inputs, and the reference run of the program over them. */
	tosrc = w->src + rnd(w, 0, 4095);
	lane_fill_random(&w->rng, tosrc, ws);
	memcpy(w->ref, tosrc, ws);
	lane_prog_init(&prog);
	for (i = 0; i < ninsn; i++) {
		struct op_gen g;
		struct flex_insn *in;

		gen_insn(w, w->ref, ws, &g, one, sizeof(one));
		snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc), "%s%s",
			 i ? "; " : "", one);
		__atomic_fetch_add(&sh->insn_count[g.op], 1, __ATOMIC_RELAXED);
		in = lane_prog_emit(&prog, g.op, g.dtype, g.flags);
		for (j = 0; j < FLEX_INSN_ARGS; j++) {
			uint64_t v = g.arg[j];

			if (g.is_addr & (1U << j)) {
				s = segs[rnd(w, 0, nseg - 1)];
				v = FLEX_ADDR(s, win + v - seg_base[s]);
			}
			/* Any operand may come from a correction slot. */
			if (use_slots && (v || g.is_addr & (1U << j)) && chance(w, 40)) {
				slots[nslots] = v;
				v = FLEX_SLOT(nslots);
				nslots++;
			}
			in->arg[j] = v;
		}
	}
	lane_prog_emit(&prog, FLEX_OP_END, FLEX_DT_I32, 0);
	count(C_INSNS, ninsn);
	prog.h.n_slots = (uint32_t)nslots;

	po = rnd(w, 0, MiB);
	co = MiB + 4096 + rnd(w, 0, 1024) * 8;
	cb.compute.program = (struct flex_va){ w->prog.id, po };
	cb.user_data = w->op_no;
	if (nslots) {
		cb.compute.segment_mask |= 1U << FLEX_SEGMENT_CORRECTION;
		cb.compute.segments[FLEX_SEGMENT_CORRECTION] = (struct flex_va){ w->prog.id, co };
		count(C_SLOTS, 1);
	}
	if (!by_dma) {
		memcpy(w->pmap + po, &prog, lane_prog_size(&prog));
		memcpy(w->pmap + co, slots, nslots * 8);
	} else {
		memcpy(w->hbuf, &prog, lane_prog_size(&prog));
		memcpy(w->hbuf + 8192, slots, nslots * 8);
	}

	cbs[0] = cb_dma(1, tosrc, r->id, win, ws);
	if (worker_submit(w, w->qa, cbs, 1, &sa))
		return -1;
	if (by_dma) {
		cbs[k++] = cb_dma(1, w->hbuf, w->prog.id, po, lane_prog_size(&prog));
		if (nslots)
			cbs[k++] = cb_dma(1, w->hbuf + 8192, w->prog.id, co, nslots * 8);
	}
	cbs[k++] = cb_wait(w->qa, sa);
	cbs[k++] = cb;
	cbs[k++] = cb_dma(0, w->dst, r->id, win, ws);
	if (worker_submit(w, w->qb, cbs, k, &sb))
		return -1;
	count(C_DMA_CROSS, 1);
	if (chance(w, 25) && fence_poll(w, w->qb, sb))
		return -1;
	if (wait_for(w, w->qb, sb)) {
		printf("# the program: %s\n", desc);
		return -1;
	}
	memcpy(r->shadow + win, w->ref, ws);
	count(C_COMPUTE, 1);
	if (verify(w, "compute result against the CPU reference", r, win, w->ref, w->dst, ws)) {
		printf("# the program (window at +0x%llx, %llu bytes, %d segments, %llu slots): %s\n",
		       (unsigned long long)win, (unsigned long long)ws, nseg,
		       (unsigned long long)nslots, desc);
		return -1;
	}
	return 0;
}

/* A compute CB that writes past its region: a sticky fault, then reset. */
static int op_fault(struct worker *w)
{
	static __thread struct lane_prog prog;
	struct region *r = pick_region(w);
	struct flex_cb cb = { .opcode = FLEX_CB_COMPUTE }, nop = lane_cb_nop();
	struct flex_queue_status st;
	struct flex_insn *in;
	uint64_t seq, po = rnd(w, 0, MiB), s2;
	int err;

	w->op = "deliberate fault";
	lane_prog_init(&prog);
	in = lane_prog_emit(&prog, FLEX_OP_FILL, FLEX_DT_I32, 0);
	in->arg[0] = FLEX_ADDR(0, r->size - 8);
	in->arg[1] = 16;
	in->arg[2] = 0x5a5a5a5a;
	lane_prog_emit(&prog, FLEX_OP_END, FLEX_DT_I32, 0);
	memcpy(w->pmap + po, &prog, lane_prog_size(&prog));
	cb.compute.program = (struct flex_va){ w->prog.id, po };
	cb.compute.segment_mask = 1;
	cb.compute.segments[0] = (struct flex_va){ r->id, 0 };
	cb.user_data = 0xfa17000000000000ULL | w->op_no;
	if (worker_submit(w, w->qb, &cb, 1, &seq))
		return -1;
	err = wait_seq(w->fd, w->qb, seq, WAIT_MS);
	if (err != -ERANGE)
		return fail(w, "WAIT for an out-of-bounds FILL: expected -ERANGE, got %s",
			    lane_errname(err));
	err = lane_status(w->fd, w->qb, &st);
	if (err || st.fault_code != FLEX_FAULT_OUT_OF_BOUNDS || st.fault_seqno != seq ||
	    st.fault_user_data != cb.user_data || st.fault_insn != 0 ||
	    st.fault_addr.region_id != r->id || st.fault_addr.offset != r->size - 8)
		return fail(w, "QUEUE_STATUS after an out-of-bounds FILL: expected code %d seqno "
			    "%llu insn 0 addr {0x%llx, +0x%llx}, got %s code %u seqno %llu insn %u "
			    "addr {0x%llx, +0x%llx}", FLEX_FAULT_OUT_OF_BOUNDS,
			    (unsigned long long)seq, (unsigned long long)r->id,
			    (unsigned long long)(r->size - 8), lane_errname(err), st.fault_code,
			    (unsigned long long)st.fault_seqno, st.fault_insn,
			    (unsigned long long)st.fault_addr.region_id,
			    (unsigned long long)st.fault_addr.offset);
	err = lane_submit(w->fd, w->qb, &nop, 1, 0, &s2);
	if (err != -EIO)
		return fail(w, "SUBMIT on a faulted queue: expected -EIO, got %s", lane_errname(err));
	err = lane_queue_op(w->fd, FLEX_IOCTL_QUEUE_RESET, w->qb);
	if (err)
		return fail(w, "QUEUE_RESET: expected 0, got %s", lane_errname(err));
	count(C_FAULTS, 1);
	/* FILL writes in one access: nothing was written. */
	cb = cb_dma(0, w->dst, r->id, r->size - 8, 8);
	if (worker_submit(w, w->qb, &cb, 1, &seq) || wait_for(w, w->qb, seq))
		return -1;
	return verify(w, "the tail of a region after a faulting FILL", r, r->size - 8,
		      r->shadow + r->size - 8, w->dst, 8);
}

/* A third queue, destroyed with DMA (and a WAIT) queued and running. */
static int op_destroy(struct worker *w)
{
	struct flex_cb cbs[10];
	struct chunk ch[10];
	int q, n = (int)rnd(w, 2, 10), i, err, nch = 0;
	uint64_t seq;
	struct flex_queue_status st;
	long long v;

	w->op = "destroy a busy queue";
	q = queue_create(w->fd, (uint32_t)rnd(w, 0, 2), 64);
	if (q < 0)
		return fail(w, "QUEUE_CREATE: expected a queue, got %s", lane_errname(q));
	for (i = 0; i < n; i++) {
		int kind = (int)rnd(w, 0, 9);

		if (kind < 6) {
			/* Writes what the region holds already: idempotent. */
			struct chunk *c = &ch[nch++];
			uint64_t slice = HOSTBUF / n, max = slice - 4096;

			c->r = pick_region(w);
			c->size = dma_size(w, c->r->size < max ? c->r->size : max);
			c->off = rnd(w, 0, c->r->size - c->size);
			c->src = w->src + i * slice + rnd(w, 0, 4095);
			memcpy(c->src, c->r->shadow + c->off, c->size);
			cbs[i] = cb_dma(kind < 4, c->src, c->r->id, c->off, c->size);
		} else if (kind < 8 && w->qa_last) {
			cbs[i] = cb_wait(w->qa, w->qa_last);
		} else {
			cbs[i] = lane_cb_nop();
		}
	}
	err = lane_submit(w->fd, q, cbs, n, 0, &seq);
	if (err)
		return fail(w, "SUBMIT of %d CBs on a new queue: expected 0, got %s", n,
			    lane_errname(err));
	count(C_CBS, n);
	if (chance(w, 50))
		usleep(rnd(w, 0, 3000));
	err = lane_queue_op(w->fd, FLEX_IOCTL_QUEUE_DESTROY, q);
	if (err)
		return fail(w, "QUEUE_DESTROY with %d CBs in flight: expected 0, got %s", n,
			    lane_errname(err));
	count(C_DESTROY, 1);
	err = lane_status(w->fd, q, &st);
	if (err != -ENOENT)
		return fail(w, "QUEUE_STATUS of a destroyed queue: expected -ENOENT, got %s",
			    lane_errname(err));
	v = fdinfo_num(w->fd, "flex-queues");
	if (v != 2)
		return fail(w, "fdinfo flex-queues after destroying the third queue: expected 2, "
			    "got %lld", v);
	/*
	 * The destroyed queue's pins are gone when QUEUE_DESTROY returns; a
	 * CB of qa or qb that a wait saw complete may still hold its pins for
	 * a moment, as they are dropped only after its fence signalled.
	 */
	for (i = 0; (v = fdinfo_num(w->fd, "flex-pinned")) != 0 && i < 100; i++)
		usleep(10000);
	if (v != 0)
		return fail(w, "fdinfo flex-pinned 1 s after destroying a busy queue (no other "
			    "work queued): expected 0 KiB, got %lld KiB", v);
	/* Whatever ran or was cancelled, the data is as it was. */
	for (i = 0; i < nch; i++) {
		struct flex_cb cb = cb_dma(0, w->dst, ch[i].r->id, ch[i].off, ch[i].size);

		if (worker_submit(w, w->qa, &cb, 1, &seq) || wait_for(w, w->qa, seq) ||
		    verify(w, "data after a queue destroyed mid-DMA", ch[i].r, ch[i].off,
			   ch[i].r->shadow + ch[i].off, w->dst, ch[i].size))
			return -1;
	}
	return 0;
}

/* ---- the thread ---- */

static int worker_setup(struct worker *w)
{
	struct flex_query q = { 0 };
	int err;

	w->op = "setup";
	w->fd = flex_open(w->devname);
	if (w->fd < 0)
		return fail(w, "open: %s", lane_errname(w->fd));
	err = flex_ioctl(w->fd, FLEX_IOCTL_QUERY, &q);
	if (err || q.mode != (w->dev ? FLEX_MODE_VF : FLEX_MODE_PF))
		return fail(w, "QUERY: expected 0 and mode %d, got %s and mode %u",
			    w->dev ? FLEX_MODE_VF : FLEX_MODE_PF, lane_errname(err), q.mode);
	w->qa = queue_create(w->fd, (uint32_t)rnd(w, 0, 1), 0);
	w->qb = queue_create(w->fd, (uint32_t)rnd(w, 0, 2), 0);
	if (w->qa < 0 || w->qb < 0)
		return fail(w, "QUEUE_CREATE: expected two queues, got %s and %s",
			    lane_errname(w->qa), lane_errname(w->qb));
	if (acquire(w, REGION_SZ, &w->prog))
		return -1;
	w->pmap = mmap(NULL, REGION_SZ, PROT_READ | PROT_WRITE, MAP_SHARED, w->fd,
		       w->prog.mmap_off);
	if (w->pmap == MAP_FAILED)
		return fail(w, "mmap of the program region: %s", strerror(errno));
	w->op = "acquire";
	if (acquire(w, REGION_SZ, &w->data[0]))
		return -1;
	w->ndata = 1;
	w->held = REGION_SZ;
	return 0;
}

/* Ends the thread's file in one of three ways. */
static int worker_teardown(struct worker *w)
{
	int mode = (int)rnd(w, 0, 2), i, err;
	long long v;

	w->op = "teardown";
	if (w->fd < 0)
		return 0;
	if (mode == 0) {
		/* Everything given back by hand: the fdinfo says so. */
		for (i = 0; i < w->ndata; i++) {
			err = flex_release(w->fd, w->data[i].id);
			if (err)
				return fail(w, "REGION_RELEASE at teardown: %s", lane_errname(err));
		}
		munmap(w->pmap, REGION_SZ);
		w->pmap = NULL;
		err = flex_release(w->fd, w->prog.id);
		err = err ?: lane_queue_op(w->fd, FLEX_IOCTL_QUEUE_DESTROY, w->qa);
		err = err ?: lane_queue_op(w->fd, FLEX_IOCTL_QUEUE_DESTROY, w->qb);
		if (err)
			return fail(w, "release/destroy at teardown: %s", lane_errname(err));
		v = fdinfo_num(w->fd, "flex-regions") + fdinfo_num(w->fd, "flex-queues") +
		    fdinfo_num(w->fd, "flex-pinned");
		if (v != 0)
			return fail(w, "fdinfo after releasing everything: regions %lld queues "
				    "%lld pinned %lld, expected 0 0 0",
				    fdinfo_num(w->fd, "flex-regions"),
				    fdinfo_num(w->fd, "flex-queues"),
				    fdinfo_num(w->fd, "flex-pinned"));
	} else if (mode == 1) {
		/* close() with DMA queued: the release cancels and unpins it. */
		struct region *r = pick_region(w);
		struct flex_cb cbs[4];
		uint64_t seq, n = r->size < 2 * MiB ? r->size : 2 * MiB;

		memcpy(w->src, r->shadow, n);
		cbs[0] = cb_dma(1, w->src, r->id, 0, n);
		cbs[1] = cb_dma(0, w->dst, r->id, 0, n);
		cbs[2] = cb_wait(w->qa, w->qa_last ? w->qa_last : 1);
		cbs[3] = lane_cb_nop();
		err = lane_submit(w->fd, w->qb, cbs, w->qa_last ? 4 : 2, 0, &seq);
		if (err)
			return fail(w, "SUBMIT before close: %s", lane_errname(err));
		count(C_CLOSE_INFLIGHT, 1);
	}
	close(w->fd);	/* mode 1 and 2: with the region still mapped */
	w->fd = -1;
	if (w->pmap)
		munmap(w->pmap, REGION_SZ);
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int err = 0, pick;

	w->src = aligned_alloc(4096, HOSTBUF);
	w->dst = aligned_alloc(4096, HOSTBUF);
	w->ref = malloc(WIN_MAX);
	w->hbuf = aligned_alloc(4096, 64 * 1024);
	if (!w->src || !w->dst || !w->ref || !w->hbuf) {
		fail(w, "out of host memory");
		return NULL;
	}
	/* Touch them now: a DMA pins them. */
	memset(w->src, 0, HOSTBUF);
	memset(w->dst, 0, HOSTBUF);
	if (worker_setup(w))
		return NULL;
	while (!err && !done(w)) {
		w->op_no++;
		pick = (int)rnd(w, 0, 99);
		if (pick < 30)
			err = op_dma(w);
		else if (pick < 60)
			err = op_compute(w);
		else if (pick < 68)
			err = op_readback(w);
		else if (pick < 74)
			err = op_mmap(w);
		else if (pick < 82)
			err = w->ndata < w->data_max && w->held < cfg.budget ?
			      op_acquire(w) : op_release(w);
		else if (pick < 90)
			err = w->ndata > 1 ? op_release(w) : op_acquire(w);
		else if (pick < 96)
			err = op_destroy(w);
		else
			err = op_fault(w);
	}
	if (!err)
		worker_teardown(w);
	return NULL;
}

static const char *dev_path(int dev)
{
	static char paths[1 + 16][32];

	if (!dev)
		return FLEX_PF;
	snprintf(paths[dev], sizeof(paths[dev]), "/dev/flex0vf%d", dev - 1);
	return paths[dev];
}

/* The device of thread @tid of process slot @slot. */
static int dev_of(int slot, int tid)
{
	return (slot * cfg.threads + tid) % (1 + cfg.vfs);
}

static void worker_process(int slot, int gen)
{
	struct worker w[MAX_THREADS];
	int t;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(w, 0, sizeof(w));
	for (t = 0; t < cfg.threads; t++) {
		w[t].slot = slot;
		w[t].gen = gen;
		w[t].tid = t;
		w[t].dev = dev_of(slot, t);
		w[t].fd = -1;
		w[t].data_max = cfg.data_max[w[t].dev];
		w[t].rng = lane_seed_mix(cfg.seed, (uint64_t)slot << 32 | (uint64_t)gen << 8 | t);
		w[t].op = "start";
		snprintf(w[t].devname, sizeof(w[t].devname), "%s", dev_path(w[t].dev));
		if (pthread_create(&w[t].thread, NULL, worker_main, &w[t])) {
			fail(&w[t], "pthread_create failed");
			_exit(1);
		}
	}
	for (t = 0; t < cfg.threads; t++)
		pthread_join(w[t].thread, NULL);
	_exit(sh->slot[slot].failed ? 1 : 0);
}

/* ---- the parent ---- */

static pid_t spawn(int slot)
{
	struct slot_state *s = &sh->slot[slot];
	pid_t pid;

	s->gen++;
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		worker_process(slot, s->gen);
	s->pid = pid;
	return pid;
}

/* The kernel stacks of a process's threads, for a report of a hang. */
static void dump_stacks(pid_t pid)
{
	char cmd[160];

	snprintf(cmd, sizeof(cmd), "for t in /proc/%d/task/*; do echo \"# $t:\"; "
		 "sed 's/^/#   /' $t/stack; done 2>/dev/null", (int)pid);
	fflush(stdout);
	if (system(cmd) < 0)
		printf("# (could not read the stacks)\n");
}

/* Reaps @pid within @ms; returns its status, or -1 (still alive). */
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
		usleep(10 * 1000);
	}
}

static void record_exit(int slot, int status, int killed)
{
	struct slot_state *s = &sh->slot[slot];

	if (killed && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		s->killed++;
		return;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !killed)
		return;
	s->bad_exit = 1;
	if (!s->failed || !s->msg[0]) {
		if (WIFSIGNALED(status))
			snprintf(s->msg, sizeof(s->msg), "gen %d died of signal %d", s->gen,
				 WTERMSIG(status));
		else
			snprintf(s->msg, sizeof(s->msg), "gen %d exited %d%s", s->gen,
				 WEXITSTATUS(status), killed ? " before it could be killed" : "");
	}
}

static void usage(const char *argv0)
{
	printf("usage: %s [--seconds N] [--procs N] [--threads N] [--vfs N] [--seed N]\n"
	       "Soak the flex driver (run it in the VM: make soak SOAK_SECONDS=N).\n"
	       "The run length is --seconds, else $SOAK_SECONDS, else 10 s (25 s on a\n"
	       "kernel with kmemleak, the debug lane).\n", argv0);
}

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "procs", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 't' },
		{ "vfs", required_argument, NULL, 'v' },
		{ "seed", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("SOAK_SECONDS");
	int c;

	cfg.seconds = env && *env ? strtod(env, NULL) :
		      lane_path_exists("/sys/kernel/debug/kmemleak") ? 25 : 10;
	cfg.seed = (uint64_t)now_ns() ^ (uint64_t)getpid() << 32;
	while ((c = getopt_long(argc, argv, "s:p:t:v:S:h", opts, NULL)) != -1) {
		switch (c) {
		case 's': cfg.seconds = strtod(optarg, NULL); break;
		case 'p': cfg.procs = atoi(optarg); break;
		case 't': cfg.threads = atoi(optarg); break;
		case 'v': cfg.vfs = atoi(optarg); break;
		case 'S': cfg.seed = strtoull(optarg, NULL, 0); break;
		case 'h': usage(argv[0]); exit(0);
		default: usage(argv[0]); exit(2);
		}
	}
	if (cfg.seconds <= 0 || cfg.procs < 1 || cfg.procs > MAX_PROCS || cfg.threads < 1 ||
	    cfg.threads > MAX_THREADS || cfg.vfs < 0 || cfg.vfs > 16) {
		usage(argv[0]);
		exit(2);
	}
	return 0;
}

/*
 * Shares of the device per thread: data regions within 3/4 of the backing
 * cap (so no CB meets it), and within each VF's table (shared by every
 * opener of the VF; the program region takes one entry).
 */
static int plan_budget(void)
{
	long long cap = sysfs_num(FLEX_SYSFS "/backing_cap");
	long long pf_max = sysfs_num("/sys/module/flex/parameters/pf_max_regions");
	int nthreads = cfg.procs * cfg.threads, d, on[1 + 16] = { 0 }, s, t;
	uint64_t per;

	cfg.lut_entries = (int)sysfs_num("/sys/module/flex/parameters/lut_entries");
	if (cap <= 0 || cfg.lut_entries <= 0 || pf_max <= 0)
		return -1;
	per = (uint64_t)cap * 3 / 4 / nthreads / REGION_SZ * REGION_SZ;
	if (per > 16 * MiB)
		per = 16 * MiB;
	if (per < 2 * REGION_SZ)
		return -1;
	cfg.budget = per - REGION_SZ;
	for (s = 0; s < cfg.procs; s++)
		for (t = 0; t < cfg.threads; t++)
			on[dev_of(s, t)]++;
	for (d = 0; d <= cfg.vfs; d++) {
		int entries = d ? cfg.lut_entries : (int)pf_max;

		cfg.data_max[d] = on[d] ? entries / on[d] - 1 : 0;
		if (cfg.data_max[d] > MAX_DATA)
			cfg.data_max[d] = MAX_DATA;
		if (on[d] && cfg.data_max[d] < 1)
			return -1;
	}
	return 0;
}

static void print_figures(double secs, int procs_started)
{
	int i;

	printf("soak: seconds %.1f s\n", secs);
	printf("soak: bytes_verified %llu bytes\n",
	       (unsigned long long)sh->count[C_BYTES]);
	for (i = 1; i < C_NCOUNTERS; i++)
		printf("soak: %s %llu count\n", counter_names[i],
		       (unsigned long long)sh->count[i]);
	printf("soak: processes %d count\n", procs_started);
}

int main(int argc, char **argv)
{
	struct lane_usage u;
	char ubuf[256];
	int64_t t0, next_kill, kill_every;
	int slot, killed_total = 0, started = 0, err, ok, i, clean, nkills;
	uint64_t prng;
	long long tu[16];
	double secs;

	parse_args(argc, argv);
	prng = lane_seed_mix(cfg.seed, 0xdead);
	lane_tap_init();
	lane_diag("flex_soak: %.1f s, %d processes x %d threads, %d VFs, seed 0x%llx",
		  cfg.seconds, cfg.procs, cfg.threads, cfg.vfs, (unsigned long long)cfg.seed);

	if (!lane_path_exists(FLEX_PF)) {
		lane_check(0, "setup: " FLEX_PF " exists (is flex.ko loaded?)");
		return lane_tap_done();
	}
	u = lane_usage();
	lane_usage_str(&u, ubuf, sizeof(ubuf));
	lane_check(lane_usage_clean(&u), "setup: the device is clean before the soak (%s)", ubuf);
	if (cfg.vfs) {
		if (sysfs_num(FLEX_SYSFS "/sriov_numvfs") != 0)
			set_numvfs(0);
		err = set_numvfs((unsigned int)cfg.vfs);
		ok = !err && lane_path_exists("/dev/flex0vf0");
		lane_check(ok, "setup: %d VFs enabled through sriov_numvfs (write: %s)", cfg.vfs,
			   lane_errname(err));
		if (!ok)
			return lane_tap_done();
	}
	if (plan_budget()) {
		lane_check(0, "setup: a share of backing_cap and of the tables for %d threads",
			   cfg.procs * cfg.threads);
		return lane_tap_done();
	}
	lane_diag("per thread: %llu MiB of data regions, at most %d (PF) / %d (VF) of them",
		  (unsigned long long)(cfg.budget >> 20), cfg.data_max[0],
		  cfg.vfs ? cfg.data_max[1] : 0);

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 2;
	}
	memset(sh, 0, sizeof(*sh));
	t0 = now_ns();
	sh->deadline_ns = t0 + (int64_t)(cfg.seconds * 1e9);
	for (slot = 0; slot < cfg.procs; slot++, started++)
		if (spawn(slot) < 0) {
			lane_check(0, "setup: fork: %s", strerror(errno));
			sh->stop = 1;
			break;
		}

	/*
	 * SIGKILL a random worker now and then (once per 10 s, at least once),
	 * never in the last tenth of the run, and replace it.
	 */
	nkills = cfg.seconds >= 20 ? (int)(cfg.seconds / 10) : 1;
	kill_every = (int64_t)(cfg.seconds * 1e9) / (nkills + 1);
	next_kill = t0 + kill_every;
	while (now_ns() < sh->deadline_ns && !sh->stop) {
		for (slot = 0; slot < cfg.procs; slot++) {
			int status;

			if (sh->slot[slot].pid > 0 &&
			    waitpid(sh->slot[slot].pid, &status, WNOHANG) == sh->slot[slot].pid) {
				/* Ended before the deadline: only a failure does that. */
				record_exit(slot, status, 0);
				sh->slot[slot].bad_exit = 1;
				if (!sh->slot[slot].msg[0])
					snprintf(sh->slot[slot].msg, sizeof(sh->slot[slot].msg),
						 "gen %d ended before the deadline", sh->slot[slot].gen);
				sh->slot[slot].pid = 0;
			}
		}
		if (now_ns() >= next_kill &&
		    now_ns() < sh->deadline_ns - (int64_t)(cfg.seconds * 1e8)) {
			struct slot_state *s;
			int status;

			slot = (int)lane_range(&prng, 0, cfg.procs - 1);
			s = &sh->slot[slot];
			if (s->pid > 0 && !s->failed) {
				kill(s->pid, SIGKILL);
				status = reap(s->pid, 60000);
				if (status == -1) {
					s->bad_exit = 1;
					snprintf(s->msg, sizeof(s->msg), "gen %d (pid %d) did not exit "
						 "within 60 s of SIGKILL", s->gen, (int)s->pid);
					dump_stacks(s->pid);
					sh->stop = 1;
					break;
				}
				record_exit(slot, status, 1);
				killed_total++;
				if (spawn(slot) > 0)
					started++;
			}
			next_kill += kill_every;
		}
		usleep(20 * 1000);
	}

	/* Everyone finishes its operation and tears down; a hang is a failure. */
	for (slot = 0; slot < cfg.procs; slot++) {
		struct slot_state *s = &sh->slot[slot];
		int status;

		if (s->pid <= 0)
			continue;
		status = reap(s->pid, WAIT_MS + 60000);
		if (status == -1) {
			s->bad_exit = 1;
			snprintf(s->msg, sizeof(s->msg), "gen %d (pid %d) did not finish within %d s "
				 "of the deadline", s->gen, (int)s->pid, WAIT_MS / 1000 + 60);
			dump_stacks(s->pid);
			kill(s->pid, SIGKILL);
			reap(s->pid, 60000);
		} else {
			record_exit(slot, status, 0);
		}
	}
	secs = lane_seconds_since(t0);

	for (slot = 0; slot < cfg.procs; slot++) {
		struct slot_state *s = &sh->slot[slot];

		lane_check(!s->failed && !s->bad_exit,
			   "process slot %d: %d generation(s), %d killed on purpose, the rest exited 0%s%s",
			   slot, s->gen, s->killed, s->failed || s->bad_exit ? ": " : "", s->msg);
	}
	lane_check(killed_total >= 1, "%d worker process(es) SIGKILLed mid-work and replaced "
		   "(expected at least 1)", killed_total);
	{
		static const int need[] = { C_DMA, C_DMA_CROSS, C_COMPUTE, C_I8, C_FENCES,
					    C_ACQUIRE, C_RELEASE, C_MMAP, C_DESTROY, C_FAULTS };
		char missing[256] = "";

		for (i = 0; i < (int)(sizeof(need) / sizeof(need[0])); i++)
			if (!sh->count[need[i]])
				snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
					 " %s", counter_names[need[i]]);
		for (i = FLEX_OP_COPY; i <= FLEX_OP_MATMUL; i++)
			if (!sh->insn_count[i])
				snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing),
					 " opcode-%d", i);
		/* A very short run may miss a rare kind: only a real soak must have all. */
		if (cfg.seconds >= 8)
			lane_check(!missing[0], "every kind of operation ran at least once%s%s",
				   missing[0] ? "; never ran:" : "", missing);
		else
			lane_skip("every kind of operation ran at least once (a run under 8 s "
				  "need not have;%s)", missing[0] ? missing : " it had");
	}
	lane_check(sh->count[C_BYTES] > 0, "bytes verified: %llu (expected > 0)",
		   (unsigned long long)sh->count[C_BYTES]);

	/* The device is clean once every worker is gone. */
	clean = lane_wait_clean(5000, &u);
	lane_usage_str(&u, ubuf, sizeof(ubuf));
	lane_check(u.used == 0, "device used == 0 at the end (got %lld)", u.used);
	lane_check(u.resident == 0, "device resident == 0 at the end (got %lld)", u.resident);
	lane_check(u.regions == 0, "no directory under " FLEX_SYSFS "/regions/ (got %lld)",
		   u.regions);
	lane_check(u.pinned == 0, LANE_DEBUGFS "/pinned_pages == 0 (got %lld)", u.pinned);
	if (!clean)
		lane_diag("at the end: %s", ubuf);
	if (cfg.vfs) {
		char names[128] = "";

		ok = 1;
		for (i = 0; i < cfg.vfs && i < 16; i++) {
			tu[i] = sysfs_num(FLEX_SYSFS "vf%d/table_used", i);
			snprintf(names + strlen(names), sizeof(names) - strlen(names), " vf%d:%lld",
				 i, tu[i]);
			ok &= tu[i] == 0;
		}
		lane_check(ok, "every VF table empty (table_used%s)", names);
		err = set_numvfs(0);
		lane_check(!err && !lane_path_exists("/dev/flex0vf0"),
			   "VFs disabled at the end (sriov_numvfs 0: %s)", lane_errname(err));
	}
	u.refcnt = sysfs_num("/sys/module/flex/refcnt");
	lane_check(u.refcnt == 0, "module refcnt == 0 with every file closed (got %lld)", u.refcnt);

	print_figures(secs, started);
	return lane_tap_done();
}
