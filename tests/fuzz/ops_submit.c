// SPDX-License-Identifier: GPL-2.0
/*
 * flex_fuzz: FLEX_IOCTL_SUBMIT. A batch of 1..256 CBs: NOPs, DMA both ways
 * from host memory of every kind, compute CBs whose program a DMA CB of
 * the same batch writes to the device first (the queue runs them in order),
 * WAITs on the file's other queues, and garbage CBs.
 *
 * Layout of a region used by compute: programs and correction tensors in
 * its first CODE_AREA bytes, data segments above, so that a valid program
 * stays valid unless a random DMA or another program lands on it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "fuzz.h"

#define CODE_AREA	(256 * 1024)
#define SEG_ROOM	(128 * 1024)	/* bytes valid programs use per segment */
#define MAX_INSNS	16
#define MAX_SLOTS	8
#define PROG_RING	16		/* program buffers per thread (in heap) */
#define PROG_BUF	(16 * 1024)
#define DATA_LEN	(HEAP_LEN - PROG_RING * PROG_BUF)

struct prog {
	struct flex_prog_header h;
	struct flex_insn insn[MAX_INSNS + 1];
	__u64 slots[MAX_SLOTS];		/* the correction tensor, after the code */
};

/* ---- programs ---- */

struct pctx {
	struct rng *r;
	struct prog *p;
	int segs[3];		/* data segments in use */
	int nsegs;
	int nslots;		/* slots handed out so far */
	int max_slots;
	int big;		/* allow larger shapes (may fault) */
};

static __u64 addr(struct pctx *c, __u64 bytes)
{
	__u64 room = SEG_ROOM > bytes ? SEG_ROOM - bytes : 0;

	return FLEX_ADDR(c->segs[rnd(c->r, c->nsegs)], rnd(c->r, room / 4 + 1) * 4);
}

static __u32 dim(struct pctx *c)
{
	return 1 + rnd(c->r, c->big ? 128 : 16);
}

/* An operand, sometimes read from a correction slot instead. */
static __u64 operand(struct pctx *c, __u64 v)
{
	if (c->nslots < c->max_slots && chance(c->r, 15)) {
		c->p->slots[c->nslots] = v;
		return FLEX_SLOT(c->nslots++);
	}
	return v;
}

/*
 * A type for ADD, MUL, RELU and a non-int8 MATMUL: int32 or a float
 * (element sizes are 4 or 2, so the 4-byte sizes above cover them).
 */
static __u8 ew_dtype(struct rng *r)
{
	static const __u8 t[] = { FLEX_DT_I32, FLEX_DT_F32, FLEX_DT_BF16, FLEX_DT_F16 };

	return t[rnd(r, 4)];
}

static void emit(struct pctx *c, __u8 op, __u8 dtype, __u16 flags, int n, const __u64 *a)
{
	struct flex_insn *in = &c->p->insn[c->p->h.n_insns++];
	int i;

	memset(in, 0, sizeof(*in));
	in->op = op;
	in->dtype = dtype;
	in->flags = flags;
	for (i = 0; i < n; i++)
		in->arg[i] = operand(c, a[i]);
}

static void gen_insn(struct pctx *c)
{
	struct rng *r = c->r;
	__u32 rows = dim(c), cols = dim(c), k = dim(c);
	__u32 ld0 = cols + rnd(r, 3), ld1 = cols + rnd(r, 3), ld2 = cols + rnd(r, 3);
	__u64 bytes, a[10];

	switch (1 + rnd(r, 6)) {
	case FLEX_OP_COPY:
		bytes = 1 + rnd(r, c->big ? 64 * 1024 : 4096);
		a[0] = addr(c, bytes);
		a[1] = addr(c, bytes);
		a[2] = bytes;
		emit(c, FLEX_OP_COPY, FLEX_DT_I32, 0, 3, a);
		break;
	case FLEX_OP_FILL:
		bytes = 4 * (1 + rnd(r, c->big ? 16384 : 1024));
		a[0] = addr(c, bytes);
		a[1] = bytes / 4;
		a[2] = (__u32)rnd64(r);
		/* Any type; a value wider than a 16-bit or int8 element faults. */
		emit(c, FLEX_OP_FILL, rnd(r, FLEX_DT_F16 + 1), 0, 3, a);
		break;
	case FLEX_OP_ADD:
	case FLEX_OP_MUL:
		bytes = 4ULL * rows * (ld0 > ld1 ? (ld0 > ld2 ? ld0 : ld2) : (ld1 > ld2 ? ld1 : ld2));
		a[0] = addr(c, bytes);
		a[1] = addr(c, bytes);
		a[2] = addr(c, bytes);
		a[3] = rows;
		a[4] = cols;
		a[5] = ld0;
		a[6] = ld1;
		a[7] = ld2;
		emit(c, chance(r, 50) ? FLEX_OP_ADD : FLEX_OP_MUL, ew_dtype(r), 0, 8, a);
		break;
	case FLEX_OP_RELU:
		bytes = 4ULL * rows * (ld0 > ld1 ? ld0 : ld1);
		a[0] = addr(c, bytes);
		a[1] = addr(c, bytes);
		a[2] = rows;
		a[3] = cols;
		a[4] = ld0;
		a[5] = ld1;
		emit(c, FLEX_OP_RELU, ew_dtype(r), 0, 6, a);
		break;
	default: {	/* MATMUL C[MxN] (+)= A[MxK].B[KxN] */
		__u32 m = rows, n = cols, kk = k;
		__u32 ldc = n + rnd(r, 3), lda = kk + rnd(r, 3), ldb = n + rnd(r, 3);
		int i8 = chance(r, 30);

		a[0] = addr(c, 4ULL * m * ldc);
		a[1] = addr(c, (i8 ? 1ULL : 4ULL) * m * lda);
		a[2] = addr(c, (i8 ? 1ULL : 4ULL) * kk * ldb);
		a[3] = m;
		a[4] = n;
		a[5] = kk;
		a[6] = ldc;
		a[7] = lda;
		a[8] = ldb;
		a[9] = chance(r, 20);
		emit(c, FLEX_OP_MATMUL, i8 ? FLEX_DT_I8 : ew_dtype(r),
		     chance(r, 20) ? FLEX_INSN_ACCUMULATE : 0, 10, a);
		break;
	}
	}
}

/* Random changes to a built program: bytes, counts, fields, operands. */
static void mutate(struct rng *r, struct prog *p, size_t len)
{
	unsigned char *b = (unsigned char *)p;
	struct flex_insn *in = &p->insn[rnd(r, p->h.n_insns ? p->h.n_insns : 1)];
	int i, n;

	switch (rnd(r, 8)) {
	case 0:
		n = 1 + rnd(r, 8);
		for (i = 0; i < n; i++)
			b[rnd(r, len)] ^= 1 << rnd(r, 8);
		break;
	case 1:
		p->h.n_insns = chance(r, 50) ? p->h.n_insns + rnd(r, 3) - 1 :
					       (__u32)rnd_interesting(r);
		break;
	case 2:
		in->op = rnd(r, 2) ? rnd(r, 8) : rnd(r, 256);
		break;
	case 3:
		in->dtype = rnd(r, FLEX_DT_F16 + 2);
		in->flags = rnd(r, 4);
		break;
	case 4:
		in->arg[rnd(r, FLEX_INSN_ARGS)] = rnd_interesting(r);
		break;
	case 5:	/* an address into another segment, or out of its room */
		in->arg[rnd(r, 3)] = FLEX_ADDR(rnd(r, FLEX_NUM_SEGMENTS),
					       rnd_interesting(r));
		break;
	case 6:
		p->h.n_slots = chance(r, 50) ? FLEX_PROG_MAX_SLOTS + 1 :
					       (__u32)rnd_interesting(r);
		break;
	default:
		if (chance(r, 50))
			p->h.reserved[rnd(r, 2)] = rnd64(r);
		else
			p->h.version = rnd(r, 4);
		break;
	}
}

/* ---- host memory for DMA ---- */

/*
 * A host pointer for @size bytes of DMA. Returns the size to use (it may
 * shrink it to fit a mapping).
 */
static __u64 host_ptr(struct tctx *t, int maps_held, __u64 size, __u64 *ptr)
{
	struct rng *r = &t->r;
	unsigned char *a;
	size_t len;
	int x = rnd(r, t->clean ? 82 : 100);

	if (x < 72 && size <= DATA_LEN) {
		*ptr = (uintptr_t)(t->heap + rnd(r, DATA_LEN - size + 1));
	} else if (x < 82 && maps_held && !pick_host_mapping(t, &a, &len)) {
		__u64 off = rnd(r, len);

		if (size > len - off)
			size = len - off;
		*ptr = (uintptr_t)(a + off);
	} else if (x < 88 && size <= RO_LEN) {
		*ptr = (uintptr_t)(t->ro + rnd(r, RO_LEN - size + 1));
	} else if (x < 91) {
		*ptr = (uintptr_t)(t->none + rnd(r, NONE_LEN));
	} else if (x < 94) {
		*ptr = (uintptr_t)(t->guard + PAGE - rnd(r, size < PAGE ? size : PAGE));
	} else if (x < 96) {
		*ptr = 0;
	} else if (x < 97) {
		*ptr = 0xffff888000000000ULL + rnd(r, 1 << 20) * PAGE;
	} else if (x < 98) {
		*ptr = 0x8000000000000000ULL;
	} else if (x < 99) {
		*ptr = UINT64_MAX - rnd(r, 8192);	/* wraps */
	} else {
		*ptr = rnd64(r);
	}
	return size;
}

static __u64 dma_size(struct rng *r, int clean)
{
	int x = rnd(r, clean ? 96 : 100);

	if (x < 50)
		return 1 + rnd(r, 512);
	if (x < 80)
		return 513 + rnd(r, 16 * 1024);
	if (x < 93)
		return 16 * 1024 + rnd(r, 256 * 1024);
	if (x < 96)
		return 256 * 1024 + rnd(r, 768 * 1024);
	if (x < 97)
		return 0;
	if (x < 98)
		return FLEX_DMA_MAX_SIZE + 1 + rnd(r, 4096);
	return rnd_interesting(r);
}

/* A device address for @size bytes: usually inside a region of the file. */
static struct flex_va dev_va(struct tctx *t, struct snap *s, __u64 size)
{
	struct rng *r = &t->r;
	struct region *reg = pick_region(t, s);
	struct flex_va va;
	int x = t->clean ? 0 : rnd(r, 100);

	if (reg && x < 86) {
		va.region_id = reg->id;
		if (size <= reg->size && (t->clean || chance(r, 95)))
			va.offset = rnd64(r) % (reg->size - size + 1);
		else	/* leaves the region: -ERANGE */
			va.offset = reg->size - (size < reg->size ? size : 0) + 1 + rnd(r, 8192);
	} else if (x < 93) {
		va.region_id = rnd_interesting(r);
		va.offset = 0;
	} else {
		struct snap o;

		/* Another file's region: not ours, -ENOENT (on the PF). */
		if (!take_snap(t, (s->slot + 1) % NR_SLOTS, &o) && o.nregions)
			va.region_id = o.regions[rnd(r, o.nregions)].id;
		else
			va.region_id = rnd(r, 16);
		va.offset = rnd(r, 4096);
	}
	return va;
}

static void cb_dma(struct tctx *t, struct snap *s, int maps_held, struct flex_cb *cb)
{
	__u64 size = dma_size(&t->r, t->clean);

	cb->opcode = chance(&t->r, 55) ? FLEX_CB_DMA_TO_DEVICE : FLEX_CB_DMA_FROM_DEVICE;
	size = host_ptr(t, maps_held, size, &cb->dma.host_ptr);
	/* Clean: a read-only buffer only as the source. */
	if (t->clean && cb->dma.host_ptr >= (uintptr_t)t->ro &&
	    cb->dma.host_ptr < (uintptr_t)t->ro + RO_LEN)
		cb->opcode = FLEX_CB_DMA_TO_DEVICE;
	cb->dma.size = size;
	cb->dma.dev = dev_va(t, s, size);
}

static void cb_wait(struct tctx *t, struct snap *s, __u32 qid, struct flex_cb *cb)
{
	struct rng *r = &t->r;
	struct queue *o = pick_queue(t, s);

	cb->opcode = FLEX_CB_WAIT;
	if (t->clean && (!o || o->id == qid || !o->seqno)) {
		cb->opcode = FLEX_CB_NOP;
		return;
	}
	if (o && o->id != qid && (t->clean || chance(r, 85))) {
		cb->wait.queue_id = o->id;
		cb->wait.seqno = o->seqno && (t->clean || chance(r, 85)) ?
				 o->seqno - rnd(r, o->seqno < 8 ? o->seqno : 8) :
				 o->seqno + 1 + rnd(r, 2);
	} else {
		cb->wait.queue_id = chance(r, 50) ? qid : (__u32)rnd_interesting(r);
		cb->wait.seqno = rnd_interesting(r);
	}
	if (!t->clean && chance(r, 3))
		cb->wait.pad = 1 + rnd(r, 255);
}

/*
 * A compute launch: a DMA CB writing the program (and its correction
 * tensor) into a region, then the COMPUTE CB. Returns the CBs used, 0 when
 * the file has no region or @room is too small.
 */
static int cb_compute(struct tctx *t, struct snap *s, struct flex_cb *cb, int room)
{
	struct rng *r = &t->r;
	struct region *code = pick_region(t, s);
	struct flex_cb_compute *cc;
	struct pctx c = { .r = r };
	struct prog *p;
	__u64 prog_off, len;
	int i, n = 0, ninsns, write_prog = t->clean || chance(r, 92);

	if (!code || room < 2)
		return 0;
	p = (struct prog *)(t->heap + DATA_LEN + rnd(r, PROG_RING) * PROG_BUF);
	memset(p, 0, sizeof(*p));
	p->h.magic = FLEX_PROG_MAGIC;
	p->h.version = FLEX_PROG_VERSION;
	c.p = p;
	c.big = !t->clean && chance(r, 5);
	c.max_slots = chance(r, 40) ? 1 + rnd(r, MAX_SLOTS) : 0;
	c.nsegs = 1 + rnd(r, 3);
	for (i = 0; i < c.nsegs; i++)
		c.segs[i] = i;
	ninsns = 1 + rnd(r, chance(r, 10) ? MAX_INSNS - 1 : 5);
	for (i = 0; i < ninsns; i++)
		gen_insn(&c);
	p->h.n_insns++;			/* FLEX_OP_END: all zero */
	p->h.n_slots = c.max_slots;
	len = sizeof(p->h) + p->h.n_insns * sizeof(struct flex_insn);
	if (!t->clean && chance(r, 40))
		mutate(r, p, len);

	/* The program and its slots, at a 4 KiB-aligned spot of the code area. */
	prog_off = rnd(r, (CODE_AREA - PROG_BUF) / 4096) * 4096;
	if (write_prog) {
		cb[n].opcode = FLEX_CB_DMA_TO_DEVICE;
		cb[n].dma.host_ptr = (uintptr_t)p;
		cb[n].dma.dev.region_id = code->id;
		cb[n].dma.dev.offset = prog_off;
		cb[n].dma.size = len;
		n++;
	}
	if (c.max_slots) {
		cb[n].opcode = FLEX_CB_DMA_TO_DEVICE;
		cb[n].dma.host_ptr = (uintptr_t)p->slots;
		cb[n].dma.dev.region_id = code->id;
		cb[n].dma.dev.offset = prog_off + PROG_BUF / 2;
		cb[n].dma.size = sizeof(p->slots);
		if (n + 1 < room)
			n++;
		else
			memset(&cb[n], 0, sizeof(cb[n]));
	}

	cc = &cb[n].compute;
	cb[n].opcode = FLEX_CB_COMPUTE;
	cb[n].user_data = rnd64(r);
	cc->program.region_id = code->id;
	cc->program.offset = prog_off;
	for (i = 0; i < c.nsegs; i++) {
		struct region *d = pick_region(t, s);

		cc->segment_mask |= 1U << i;
		cc->segments[i].region_id = d->id;
		cc->segments[i].offset = CODE_AREA +
			rnd64(r) % ((d->size - CODE_AREA - SEG_ROOM) / 4 + 1) * 4;
	}
	if (c.max_slots) {
		cc->segment_mask |= 1U << FLEX_SEGMENT_CORRECTION;
		cc->segments[FLEX_SEGMENT_CORRECTION].region_id = code->id;
		cc->segments[FLEX_SEGMENT_CORRECTION].offset = prog_off + PROG_BUF / 2;
	}
	/* A bad segment table or program address. */
	switch (!t->clean && chance(r, 12) ? (int)rnd(r, 6) : -1) {
	case 0:
		cc->segment_mask = rnd(r, 2) ? (__u32)rnd_interesting(r) : rnd(r, 256);
		break;
	case 1:
		cc->segments[rnd(r, FLEX_NUM_SEGMENTS)].region_id = rnd_interesting(r);
		break;
	case 2:
		cc->segments[rnd(r, FLEX_NUM_SEGMENTS)].offset = rnd_interesting(r);
		break;
	case 3:
		cc->program.offset = code->size - rnd(r, 64);
		break;
	case 4:
		cc->program.region_id = rnd_interesting(r);
		break;
	case 5:
		cc->pad = 1 + rnd(r, 255);
		break;
	}
	return n + 1;
}

/* A CB the driver must refuse: bad opcode, flags, or union bytes. */
static void cb_garbage(struct tctx *t, struct flex_cb *cb)
{
	struct rng *r = &t->r;

	switch (rnd(r, 3)) {
	case 0:
		cb->opcode = 5 + rnd(r, 1000);
		break;
	case 1:
		cb->opcode = rnd(r, 5);
		cb->flags = 1U << rnd(r, 32);
		break;
	default:	/* a NOP or WAIT with bytes past its own fields */
		cb->opcode = chance(r, 50) ? FLEX_CB_NOP : FLEX_CB_WAIT;
		cb->raw[2 + rnd(r, 17)] = 1 + rnd(r, 255);
		break;
	}
}

void op_submit(struct tctx *t)
{
	struct flex_submit sub = { 0 };
	struct rng *r = &t->r;
	struct flex_cb *cbs = t->cbs;
	size_t cbs_bytes = (CBS_MAX * sizeof(struct flex_cb) + PAGE - 1) & ~(PAGE - 1);
	struct queue *q;
	struct snap s;
	int n, i, x, used, maps_held, err, ncompute = 0;
	__u32 qid;

	if (take_snap(t, rnd(r, NR_SLOTS), &s))
		return;
	q = pick_queue(t, &s);
	/*
	 * Half the batches are clean (every CB and argument valid by the
	 * model), so work really flows; the others carry some bad input.
	 */
	t->clean = q && chance(r, 50);
	qid = q && (t->clean || chance(r, 95)) ? q->id : (__u32)rnd_interesting(r);

	x = rnd(r, 100);
	n = x < 55 ? 1 + rnd(r, 4) : x < 85 ? 5 + rnd(r, 12) : x < 96 ? 17 + rnd(r, 48) :
		65 + rnd(r, FLEX_SUBMIT_MAX_CBS - 64);
	if (t->clean && (__u32)n > q->depth)
		n = q->depth;

	/* DMA into a mapping of a region: keep the mapping until the pin. */
	maps_held = chance(r, 10);
	if (maps_held)
		pthread_rwlock_rdlock(&t->p->maplock);

	memset(cbs, 0, (n + 1) * sizeof(*cbs));
	for (i = 0; i < n; i += used) {
		struct flex_cb *cb = &cbs[i];

		used = 1;
		x = rnd(r, 100);
		if (x < 15) {
			cb->opcode = FLEX_CB_NOP;
		} else if (x < 55) {
			cb_dma(t, &s, maps_held, cb);
		} else if (x < 80) {
			used = cb_compute(t, &s, cb, n - i);
			if (!used) {
				cb->opcode = FLEX_CB_NOP;
				used = 1;
			}
			ncompute += used > 1;
		} else if (x < 95 || t->clean) {
			cb_wait(t, &s, qid, cb);
		} else {
			cb_garbage(t, cb);
		}
		cb->user_data = cb->user_data ? cb->user_data : rnd64(r);
	}

	sub.cbs_ptr = (uintptr_t)cbs;
	sub.count = n;
	sub.queue_id = qid;
	sub.flags = chance(r, 30) ? FLEX_SUBMIT_BLOCK : 0;
	x = t->clean ? 100 : rnd(r, 100);
	if (x < 3) {
		sub.cbs_ptr = 0;
	} else if (x < 5) {
		sub.cbs_ptr = (uintptr_t)t->none;
	} else if (x < 9) {
		/* The array runs into the guard page after CB k: undo after k. */
		size_t k = rnd(r, n), off = cbs_bytes - k * sizeof(*cbs) -
					    rnd(r, sizeof(*cbs));

		memmove((char *)cbs + off, cbs, cbs_bytes - off);
		sub.cbs_ptr = (uintptr_t)cbs + off;
	} else if (x < 10) {
		sub.cbs_ptr = 0xffff888000000000ULL;
	}
	x = t->clean ? 100 : rnd(r, 100);
	if (x < 3)
		sub.count = n + 1 + rnd(r, 4);
	else if (x < 4)
		sub.count = 0;
	else if (x < 5)
		sub.count = FLEX_SUBMIT_MAX_CBS + 1 + rnd(r, 10);
	else if (x < 6)
		sub.count = (__u32)rnd_interesting(r);
	if (!t->clean && chance(r, 2))
		sub.flags = 1U << rnd(r, 32);
	if (!t->clean && chance(r, 2))
		sub.pad = 1 + rnd(r, 255);
	if (chance(r, 3))
		sub.seqno = rnd64(r);

	snprintf(t->why, sizeof(t->why), "%s submit of %u CBs to queue %u%s",
		 t->clean ? "clean" : "fuzzed", sub.count, qid,
		 sub.flags & FLEX_SUBMIT_BLOCK ? " (blocking)" : "");
	err = fz_ioctl(t, &s, K_SUBMIT, FLEX_IOCTL_SUBMIT, &sub, sizeof(sub), 0);
	t->clean = 0;
	if (maps_held)
		pthread_rwlock_unlock(&t->p->maplock);
	if (err || !out_ok_last())
		return;
	count(&sh->submitted_cbs, sub.count);
	count(&sh->submitted_compute, ncompute);
	if (sub.seqno < sub.count && !snap_stale(t, &s))
		violation(t, &sh->bad_data, "SUBMIT of %u CBs returned seqno %llu, expected >= %u",
			  sub.count, sub.seqno, sub.count);
	model_seqno(t, &s, qid, sub.seqno);

	/* Let the work flow now and then. */
	if (chance(r, 25)) {
		struct flex_wait w = {
			.queue_id = qid, .seqno = sub.seqno,
			.timeout_ns = now_ns() + (1 + rnd(r, 40)) * 1000000LL,
		};

		snprintf(t->why, sizeof(t->why), "wait after submit");
		fz_ioctl(t, &s, K_WAIT, FLEX_IOCTL_WAIT, &w, sizeof(w), 0);
	}
}
