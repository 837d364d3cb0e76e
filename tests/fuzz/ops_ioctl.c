// SPDX-License-Identifier: GPL-2.0
/*
 * flex_fuzz: the ioctls other than SUBMIT, and fz_ioctl(), through which
 * every ioctl goes: it mutates the structure size encoded in the number
 * and the argument pointer, issues the call, counts it and checks the
 * errno against the documented set of that ioctl.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sync_file.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fuzz.h"

/*
 * The errnos each ioctl may return besides EINVAL, EFAULT and E2BIG (bad
 * flags/padding, bad pointers, a structure larger than the driver's with a
 * non-zero tail), which all of them may. From uapi/linux/flex.h and
 * Documentation/flex/uapi.rst (an errno the driver gains is documented
 * there first, then added here):
 *  - REGION_ACQUIRE returns EDQUOT past the function's quota_capacity;
 *  - WAIT returns a fault's errno (FLEX_FAULT_*: ENXIO, ERANGE, ENOEXEC,
 *    ENOSPC, ENOMEM, EPIPE, E2BIG, ETIMEDOUT), ETIMEDOUT, EINTR when a
 *    signal interrupts it, and ECANCELED for a CB cancelled because its
 *    queue is being destroyed;
 *  - SUBMIT returns EINTR when FLEX_SUBMIT_BLOCK is interrupted, EIO on a
 *    faulted queue, ENOMEM past the pin budget;
 *  - FENCE_EXPORT returns what WAIT does for its arguments, and EMFILE
 *    or ENFILE when no fd is left.
 */
static const int allowed[NR_KINDS][12] = {
	[K_QUERY] = { 0 },
	[K_ACQUIRE] = { ENOSPC, ENOMEM, EDQUOT },
	[K_RELEASE] = { ENOENT },
	[K_INFO] = { ENOENT },
	[K_QCREATE] = { ENOSPC, EACCES, ENOMEM },
	[K_QDESTROY] = { ENOENT },
	[K_QRESET] = { ENOENT, EBUSY },
	[K_QSTATUS] = { ENOENT },
	[K_SUBMIT] = { ENOENT, ERANGE, ENOMEM, EAGAIN, EIO, EINTR },
	[K_WAIT] = { ENOENT, ETIMEDOUT, EINTR, ECANCELED, ENXIO, ERANGE, ENOEXEC,
		     ENOSPC, ENOMEM, EPIPE },
	[K_FENCE] = { ENOENT, ECANCELED, EMFILE, ENFILE, ENOMEM },
	[K_BADNR] = { ENOTTY },
};

static int errno_allowed(enum ioctl_kind k, int err, int extra_ok)
{
	int i;

	if (err == EINVAL || err == EFAULT || err == E2BIG || err == extra_ok)
		return 1;
	for (i = 0; i < 12 && allowed[k][i]; i++)
		if (allowed[k][i] == err)
			return 1;
	return 0;
}

static void allowed_list(enum ioctl_kind k, int extra_ok, char *buf, size_t len)
{
	size_t n;
	int i;

	n = snprintf(buf, len, "0, EINVAL, EFAULT, E2BIG");
	for (i = 0; i < 12 && allowed[k][i] && n < len; i++)
		n += snprintf(buf + n, len - n, ", %s", errname(allowed[k][i]));
	if (extra_ok && n < len)
		snprintf(buf + n, len - n, ", %s", errname(extra_ok));
}

/* How the argument is passed. */
enum argmode {
	ARG_OK,
	ARG_NULL,
	ARG_NONE,	/* PROT_NONE */
	ARG_RO,		/* readable, not writable: the copy out fails */
	ARG_STRADDLE,	/* its end lies in a PROT_NONE page */
	ARG_KERNEL,
	ARG_NONCANON,
};

static const char *const argmode_names[] = {
	"ok", "NULL", "PROT_NONE", "read-only", "straddling", "kernel", "non-canonical",
};

/*
 * Set by fz_ioctl(): out_ok when the out fields were copied back whole;
 * out_len, how many bytes of the structure the driver wrote back (a
 * shorter structure gets a shorter answer; a FENCE_EXPORT's fd is in it
 * from 20 bytes on).
 */
static __thread int out_ok;
static __thread size_t out_len;

size_t out_len_last(void)
{
	return out_len;
}

/* How the last call was made, for messages about its result. */
static __thread char last_call[96];

int out_ok_last(void)
{
	return out_ok;
}

const char *last_call_desc(void)
{
	return last_call;
}

/*
 * Issues ioctl @cmd (whose structure is @ksize bytes at @arg) on the
 * snapshot's file, sometimes with another size or pointer. Returns 0 or
 * -errno; on success with the proper size and pointer the out fields are
 * in @arg and out_ok is set. @extra_ok is one more errno the caller
 * allows (0 for none).
 */
int fz_ioctl(struct tctx *t, const struct snap *s, enum ioctl_kind k, unsigned long cmd,
	     void *arg, size_t ksize, int extra_ok)
{
	struct rng *r = &t->r;
	enum argmode mode = ARG_OK;
	size_t usize = ksize, misalign = 0;
	unsigned long ucmd;
	unsigned char *p;
	int ret, err, x;
	char list[200];

	out_ok = 0;
	out_len = 0;
	if (k != K_BADNR && !t->clean) {
		x = rnd(r, 100);
		if (x < 6) {
			usize = rnd(r, ksize);			/* older userspace */
		} else if (x < 14) {
			usize = ksize + 1 + rnd(r, chance(r, 80) ? 64 : 4096);
		}
		x = rnd(r, 100);
		if (x < 88)
			mode = ARG_OK;
		else
			mode = 1 + rnd(r, ARG_NONCANON);
	}
	if (usize + 8 > ARGBUF_LEN)
		usize = ARGBUF_LEN - 8;

	switch (mode) {
	case ARG_OK:
		misalign = chance(r, 10) ? 1 + rnd(r, 7) : 0;
		p = t->argbuf + misalign;
		memcpy(p, arg, ksize < usize ? ksize : usize);
		if (usize > ksize) {
			memset(p + ksize, 0, usize - ksize);
			if (chance(r, 40))	/* newer userspace's non-zero field */
				p[ksize + rnd(r, usize - ksize)] = 1 + rnd(r, 255);
		}
		break;
	case ARG_NULL:
		p = NULL;
		break;
	case ARG_NONE:
		p = t->none + rnd(r, 64);
		break;
	case ARG_RO:
		memset(t->rw, 0, usize + 64 < RO_LEN ? usize + 64 : RO_LEN);
		memcpy(t->rw, arg, ksize < usize ? ksize : usize);
		p = t->ro;
		break;
	case ARG_STRADDLE:
		p = t->guard + PAGE - (usize ? 1 + rnd(r, usize) : 0);
		memcpy(p, arg, (size_t)(t->guard + PAGE - p) < ksize ?
		       (size_t)(t->guard + PAGE - p) : ksize);
		break;
	case ARG_KERNEL:
		p = (unsigned char *)0xffffffff81000000UL;
		break;
	default:
		p = (unsigned char *)0x8000000000000000UL;
		break;
	}

	ucmd = k == K_BADNR ? cmd : _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), usize);
	ret = ioctl(s->fd, ucmd, p);
	err = ret < 0 ? errno : 0;
	snprintf(last_call, sizeof(last_call), "fd %d, cmd 0x%lx, arg %p (%s), size %zu of %zu",
		 s->fd, ucmd, (void *)p, argmode_names[mode], usize, ksize);
	count(&sh->ioctls, 1);
	count(&sh->calls[k], 1);
	count(&sh->hist[k][err < NR_ERRNO - 1 ? err : NR_ERRNO - 1], 1);

	if (ret > 0) {
		violation(t, &sh->bad_positive[k], "%s: ioctl 0x%lx returned %d, expected 0 or -1",
			  t->why, ucmd, ret);
	} else if (err && !errno_allowed(k, err, extra_ok)) {
		if (snap_stale(t, s)) {
			/* The fd was closed (its number maybe reused) under us. */
			count(&sh->stale, 1);
			return -err;
		}
		allowed_list(k, extra_ok, list, sizeof(list));
		violation(t, &sh->bad_errno[k],
			  "%s [size %zu of %zu, arg %s, %s]: errno %s (%d), expected one of %s",
			  t->why, usize, ksize, argmode_names[mode],
			  s->node ? "VF" : "PF", errname(err), err, list);
	}
	/* A straddling structure that fit in the readable page went through. */
	if (!ret && (mode == ARG_OK || mode == ARG_STRADDLE)) {
		out_len = usize < ksize ? usize : ksize;
		if (_IOC_DIR(cmd) & _IOC_READ)
			memcpy(arg, p, out_len);
		out_ok = out_len == ksize;
	}
	/*
	 * A shorter structure reads as zeros past its end: leave in @arg what
	 * the driver acted on (a RELEASE of size 0 releases region_id 0).
	 */
	if (!ret && usize < ksize)
		memset((char *)arg + usize, 0, ksize - usize);
	return -err;
}

static int pick_slot(struct tctx *t, struct snap *s)
{
	return take_snap(t, rnd(&t->r, NR_SLOTS), s);
}

/* A region id of another open file of this process (for isolation). */
static int foreign_region(struct tctx *t, const struct snap *s, struct region *out)
{
	struct snap o;

	if (take_snap(t, (s->slot + 1) % NR_SLOTS, &o) || !o.nregions)
		return -1;
	*out = o.regions[rnd(&t->r, o.nregions)];
	return o.node;
}

static __u32 garbage32(struct tctx *t)
{
	return chance(&t->r, 50) ? 1U << rnd(&t->r, 32) : (__u32)rnd_interesting(&t->r) | 1;
}

/* ---- QUERY ---- */

void op_query(struct tctx *t)
{
	struct flex_query q = { 0 };
	struct snap s;
	int err;

	if (pick_slot(t, &s))
		return;
	if (chance(&t->r, 4))
		q.flags = garbage32(t);
	err = fz_ioctl(t, &s, K_QUERY, FLEX_IOCTL_QUERY, &q, sizeof(q), 0);
	if (err || !out_ok || snap_stale(t, &s))
		return;
	if (q.uapi_major != FLEX_UAPI_MAJOR || q.mode != (s.node ? FLEX_MODE_VF : FLEX_MODE_PF) ||
	    (s.node && q.vf_index != (__u32)s.node - 1) || q.free > q.capacity ||
	    q.largest_free > q.free || !q.region_align ||
	    (q.region_align & (q.region_align - 1)) || q.table_used > q.table_entries ||
	    q.num_vfs > q.total_vfs)
		violation(t, &sh->bad_data,
			  "QUERY on %s%d: inconsistent: major %u mode %u vf_index %u free %llu "
			  "capacity %llu largest_free %llu align %llu table %u/%u vfs %u/%u",
			  s.node ? "vf" : "pf", s.node ? s.node - 1 : 0, q.uapi_major, q.mode,
			  q.vf_index, q.free, q.capacity, q.largest_free, q.region_align,
			  q.table_used, q.table_entries, q.num_vfs, q.total_vfs);
}

/* ---- regions ---- */

static void release_quietly(struct tctx *t, const struct snap *s, __u64 id)
{
	struct flex_region_release rel = { .region_id = id };

	if (!ioctl(s->fd, FLEX_IOCTL_REGION_RELEASE, &rel))
		count(&sh->ioctls, 1);
}

void op_acquire(struct tctx *t)
{
	struct flex_region_acquire a = { 0 };
	struct rng *r = &t->r;
	struct snap s;
	int err, x, tracked;

	if (pick_slot(t, &s))
		return;
	if (s.nregions >= MAX_REGIONS - 2) {
		op_release(t);
		return;
	}
	x = rnd(r, 100);
	if (x < 80)
		a.size = (1 + rnd(r, 4)) * 2 * MiB;
	else if (x < 88)
		a.size = rnd_interesting(r);
	else if (x < 90)
		a.size = (1ULL << (30 + rnd(r, 8))) * (1 + rnd(r, 2));	/* sparse, huge */
	else if (x < 95)
		a.size = 2 * MiB + 4096 * (1 + rnd(r, 511));		/* misaligned */
	else
		a.size = 2 * MiB;
	if (chance(r, 3))
		a.flags = garbage32(t);
	if (chance(r, 3))
		a.pad = garbage32(t);
	if (chance(r, 3))
		a.pad2 = garbage32(t);
	if (chance(r, 5))	/* "out" fields are ignored on input */
		a.region_id = rnd64(r), a.handle = rnd64(r), a.lut_index = rnd64(r);

	err = fz_ioctl(t, &s, K_ACQUIRE, FLEX_IOCTL_REGION_ACQUIRE, &a, sizeof(a), 0);
	if (err || !out_ok || snap_stale(t, &s))
		return;
	if ((s.node == 0 && !a.region_id) || !a.mmap_offset || a.mmap_offset % PAGE ||
	    !a.handle ||
	    (s.node == 0 && (a.region_id % (2 * MiB) || a.lut_index != FLEX_NO_LUT_INDEX)) ||
	    (s.node != 0 && (a.lut_index != a.region_id || a.lut_index >= 64)))
		violation(t, &sh->bad_data,
			  "ACQUIRE of %llu bytes on %s [%s]: region_id 0x%llx mmap_offset 0x%llx "
			  "handle %llu lut %u (expected a non-zero page-aligned mmap_offset, a "
			  "non-zero handle, %s)",
			  a.size, s.node ? "a VF" : "the PF", last_call_desc(), a.region_id,
			  a.mmap_offset, a.handle, a.lut_index, s.node ? "lut_index = region_id" :
			  "id non-zero and 2 MiB-aligned, lut_index FLEX_NO_LUT_INDEX");
	tracked = 0;
	if (s.nregions < MAX_REGIONS && a.size <= 8 * MiB) {
		model_add_region(t, &s, &a);
		tracked = 1;
	}
	if (!tracked)	/* huge ones are not kept: they starve the others */
		release_quietly(t, &s, a.region_id);
}

void op_release(struct tctx *t)
{
	struct flex_region_release rel = { 0 };
	struct region *reg, foreign;
	struct rng *r = &t->r;
	struct snap s;
	int x, i;

	if (pick_slot(t, &s))
		return;
	reg = pick_region(t, &s);
	x = rnd(r, 100);
	if (x < 82 && reg)
		rel.region_id = reg->id;
	else if (x < 90 && foreign_region(t, &s, &foreign) >= 0)
		rel.region_id = foreign.id, reg = NULL;
	else
		rel.region_id = rnd_interesting(r), reg = NULL;
	if (chance(r, 3))
		rel.flags = garbage32(t);
	if (chance(r, 3))
		rel.pad = garbage32(t);

	if (fz_ioctl(t, &s, K_RELEASE, FLEX_IOCTL_REGION_RELEASE, &rel, sizeof(rel), 0) ||
	    snap_stale(t, &s))
		return;
	/*
	 * rel.region_id is what was released (0 if the size cut it off). The
	 * model may be stale (a fork child released the region, the id went
	 * to a new one): only a region whose handle is gone now is marked.
	 */
	for (i = 0; i < s.nregions; i++) {
		if (s.regions[i].id != rel.region_id)
			continue;
		model_del_region(t, &s, rel.region_id);
		if (!region_dir_exists(s.regions[i].handle))
			maps_mark_released(t->p, s.slot, s.gen, s.regions[i].handle);
		break;
	}
}

void op_info(struct tctx *t)
{
	struct flex_region_info in = { 0 };
	struct region *reg, foreign;
	struct rng *r = &t->r;
	struct snap s;
	int fnode = -1, x;

	if (pick_slot(t, &s))
		return;
	reg = pick_region(t, &s);
	x = rnd(r, 100);
	if (x < 75 && reg) {
		in.region_id = reg->id;
	} else if (x < 90 && (fnode = foreign_region(t, &s, &foreign)) >= 0) {
		in.region_id = foreign.id;
	} else {
		in.region_id = rnd_interesting(r);
	}
	if (chance(r, 3))
		in.flags = garbage32(t);
	if (chance(r, 3))
		in.pad = garbage32(t);
	if (chance(r, 3))
		in.pad2 = garbage32(t);

	if (fz_ioctl(t, &s, K_INFO, FLEX_IOCTL_REGION_INFO, &in, sizeof(in), 0) || !out_ok ||
	    snap_stale(t, &s))
		return;
	if (in.size % (2 * MiB) || !in.size || in.resident > in.size ||
	    !in.mmap_offset || in.mmap_offset % PAGE ||
	    (s.node == 0 && in.lut_index != FLEX_NO_LUT_INDEX))
		violation(t, &sh->bad_data,
			  "INFO of 0x%llx: size %llu resident %llu mmap_offset 0x%llx handle %llu "
			  "lut %u (expected a 2 MiB multiple, resident <= size, a non-zero "
			  "page-aligned mmap_offset)", in.region_id, in.size, in.resident,
			  in.mmap_offset, in.handle, in.lut_index);
	/* The same region (by its handle) as at acquisition. */
	if (reg && fnode < 0 && in.region_id == reg->id && in.handle == reg->handle &&
	    (in.size != reg->size || in.mmap_offset != reg->mmap_offset))
		violation(t, &sh->bad_data,
			  "INFO of region %llu: size %llu mmap_offset 0x%llx, expected %llu and "
			  "0x%llx as ACQUIRE returned", in.handle, in.size, in.mmap_offset,
			  reg->size, reg->mmap_offset);
	/* Handles are never reused: the same one is the other file's region. */
	if (fnode >= 0 && in.handle == foreign.handle)
		violation(t, &sh->bad_isolation,
			  "INFO of region_id 0x%llx on file %d (%s) returned handle %llu, which "
			  "belongs to another file (%s) of this process: expected ENOENT",
			  in.region_id, s.slot, s.node ? "VF" : "PF", in.handle,
			  fnode ? "VF" : "PF");
}

/* ---- queues ---- */

void op_qcreate(struct tctx *t)
{
	struct flex_queue_create c = { 0 };
	struct flex_queue_op op = { 0 };
	struct rng *r = &t->r;
	struct snap s;
	int x;

	if (pick_slot(t, &s))
		return;
	if (s.nqueues >= MAX_QUEUES - 2) {
		op_qdestroy(t);
		return;
	}
	c.priority = chance(r, 95) ? rnd(r, 3) : (__u32)rnd_interesting(r);
	x = rnd(r, 100);
	if (x < 30)
		c.depth = 0;
	else if (x < 60)
		c.depth = 1 + rnd(r, 8);
	else if (x < 92)
		c.depth = 9 + rnd(r, FLEX_QUEUE_MAX_DEPTH - 8);
	else
		c.depth = (__u32)rnd_interesting(r);
	if (chance(r, 3))
		c.flags = garbage32(t);
	if (chance(r, 5))
		c.queue_id = rnd64(r);

	if (fz_ioctl(t, &s, K_QCREATE, FLEX_IOCTL_QUEUE_CREATE, &c, sizeof(c), 0) || !out_ok)
		return;
	if (snap_stale(t, &s))
		return;
	if (!c.queue_id || c.queue_id > FLEX_MAX_QUEUES)
		violation(t, &sh->bad_data, "QUEUE_CREATE returned queue_id %u, expected 1..%d",
			  c.queue_id, FLEX_MAX_QUEUES);
	if (s.nqueues < MAX_QUEUES) {
		model_add_queue(t, &s, c.queue_id, c.depth ? c.depth : FLEX_QUEUE_DEFAULT_DEPTH);
	} else {
		op.queue_id = c.queue_id;
		if (!ioctl(s.fd, FLEX_IOCTL_QUEUE_DESTROY, &op))
			count(&sh->ioctls, 1);
	}
}

static void queue_op(struct tctx *t, enum ioctl_kind k, unsigned long cmd)
{
	struct flex_queue_op op = { 0 };
	struct queue *q;
	struct snap s;

	if (pick_slot(t, &s))
		return;
	q = pick_queue(t, &s);
	op.queue_id = q && chance(&t->r, 90) ? q->id : (__u32)rnd_interesting(&t->r);
	if (chance(&t->r, 3))
		op.flags = garbage32(t);
	if (!fz_ioctl(t, &s, k, cmd, &op, sizeof(op), 0) && k == K_QDESTROY)
		model_del_queue(t, &s, op.queue_id);
}

void op_qdestroy(struct tctx *t)
{
	queue_op(t, K_QDESTROY, FLEX_IOCTL_QUEUE_DESTROY);
}

void op_qreset(struct tctx *t)
{
	queue_op(t, K_QRESET, FLEX_IOCTL_QUEUE_RESET);
}

/* The errno a fault code gives (flex.h), or 0 for an unknown code. */
static int fault_errno(__u32 code)
{
	switch (code) {
	case FLEX_FAULT_UNMAPPED: return ENXIO;
	case FLEX_FAULT_OUT_OF_BOUNDS: return ERANGE;
	case FLEX_FAULT_BAD_PROGRAM: return ENOEXEC;
	case FLEX_FAULT_BACKING: return ENOSPC;
	case FLEX_FAULT_HOST: return ENOMEM;
	case FLEX_FAULT_DEPENDENCY: return EPIPE;
	case FLEX_FAULT_LIMIT: return E2BIG;
#ifdef FLEX_FAULT_TIMEOUT
	case FLEX_FAULT_TIMEOUT: return ETIMEDOUT;
#endif
	}
	return 0;
}

void op_qstatus(struct tctx *t)
{
	struct flex_queue_status st = { 0 };
	struct queue *q;
	struct snap s;

	if (pick_slot(t, &s))
		return;
	q = pick_queue(t, &s);
	st.queue_id = q && chance(&t->r, 90) ? q->id : (__u32)rnd_interesting(&t->r);
	if (chance(&t->r, 3))
		st.flags = garbage32(t);
	if (fz_ioctl(t, &s, K_QSTATUS, FLEX_IOCTL_QUEUE_STATUS, &st, sizeof(st), 0) || !out_ok)
		return;
	if (st.completed > st.submitted || st.priority > FLEX_QUEUE_PRIO_HIGH || !st.depth ||
	    st.depth > FLEX_QUEUE_MAX_DEPTH ||
	    (st.fault_code == FLEX_FAULT_NONE && st.fault_errno) ||
	    (st.fault_code != FLEX_FAULT_NONE &&
	     (!fault_errno(st.fault_code) || st.fault_errno != -fault_errno(st.fault_code) ||
	      st.fault_seqno > st.submitted || !st.fault_seqno)))
		violation(t, &sh->bad_data,
			  "QUEUE_STATUS of queue %u: submitted %llu completed %llu priority %u "
			  "depth %u fault_code %u fault_errno %d fault_seqno %llu (expected "
			  "completed <= submitted, depth 1..1024, fault_errno the code's errno, "
			  "0 without a fault)", st.queue_id, st.submitted, st.completed,
			  st.priority, st.depth, st.fault_code, st.fault_errno, st.fault_seqno);
	if (st.fault_code < 16)
		count(&sh->fault_codes[st.fault_code], 1);
	if (!snap_stale(t, &s))
		model_seqno(t, &s, st.queue_id, st.submitted);
}

/* ---- WAIT and FENCE_EXPORT ---- */

static __u64 pick_seqno(struct tctx *t, const struct queue *q)
{
	struct rng *r = &t->r;
	int x = rnd(r, 100);

	if (q && q->seqno && x < 75)
		return q->seqno - rnd(r, q->seqno < 4 ? q->seqno : 4);
	if (q && x < 85)
		return q->seqno + 1 + rnd(r, 3);	/* not submitted yet */
	if (x < 90)
		return 0;
	return rnd_interesting(r);
}

void op_wait(struct tctx *t)
{
	struct flex_wait w = { 0 };
	struct rng *r = &t->r;
	struct queue *q;
	struct snap s;
	int err, x;

	if (pick_slot(t, &s))
		return;
	q = pick_queue(t, &s);
	w.queue_id = q && chance(r, 92) ? q->id : (__u32)rnd_interesting(r);
	w.seqno = pick_seqno(t, q);
	x = rnd(r, 100);
	if (x < 30)
		w.timeout_ns = 0;
	else if (x < 75)
		w.timeout_ns = now_ns() + (1 + rnd(r, 30)) * 1000000LL;
	else if (x < 80)
		w.timeout_ns = INT64_MIN;
	else if (x < 85)
		w.timeout_ns = -1 - (int64_t)rnd(r, 1000);
	else if (x < 90)
		w.timeout_ns = now_ns() - 1000000000LL;
	else if (x < 97)
		w.timeout_ns = now_ns() + 200000000LL;
	else	/* forever: every submitted CB completes, sooner or later */
		w.timeout_ns = q && w.seqno <= q->seqno ? INT64_MAX : 0;
	if (chance(r, 2))
		w.flags = garbage32(t);
	err = fz_ioctl(t, &s, K_WAIT, FLEX_IOCTL_WAIT, &w, sizeof(w), 0);
	if (err == -ENXIO || err == -ENOEXEC || err == -ENOSPC || err == -EPIPE || err == -ERANGE)
		count(&sh->faults_seen, 1);
}

/* Keeps a sync_file past its queue's (or file's) end; closes the oldest. */
static void fence_stash(struct proc *p, int fd)
{
	int old = -1;

	pthread_mutex_lock(&p->lock);
	if (p->nfences == MAX_FENCES) {
		old = p->fences[0];
		memmove(p->fences, p->fences + 1, (MAX_FENCES - 1) * sizeof(int));
		p->nfences--;
	}
	p->fences[p->nfences++] = fd;
	pthread_mutex_unlock(&p->lock);
	if (old >= 0)
		close(old);
}

void fence_stash_close_all(struct proc *p)
{
	int i;

	for (i = 0; i < p->nfences; i++)
		close(p->fences[i]);
	p->nfences = 0;
}

/* Asks a kept sync_file about its fence: its ops run after its queue's end. */
static void fence_query_stashed(struct tctx *t)
{
	struct sync_fence_info info[2];
	struct sync_file_info fi = { 0 };
	int fd = -1;

	pthread_mutex_lock(&t->p->lock);
	if (t->p->nfences)
		fd = dup(t->p->fences[rnd(&t->r, t->p->nfences)]);
	pthread_mutex_unlock(&t->p->lock);
	if (fd < 0)
		return;
	fi.num_fences = 2;
	fi.sync_fence_info = (uintptr_t)info;
	ioctl(fd, SYNC_IOC_FILE_INFO, &fi);
	close(fd);
}

void op_fence(struct tctx *t)
{
	struct flex_fence_export fe = { 0 };
	struct rng *r = &t->r;
	struct pollfd pfd;
	struct queue *q;
	struct snap s;
	int x;

	if (chance(r, 15)) {
		fence_query_stashed(t);
		return;
	}
	if (pick_slot(t, &s))
		return;
	q = pick_queue(t, &s);
	fe.queue_id = q && chance(r, 92) ? q->id : (__u32)rnd_interesting(r);
	fe.seqno = pick_seqno(t, q);
	if (chance(r, 3))
		fe.flags = garbage32(t);
	if (chance(r, 3))
		fe.pad = garbage32(t);
	if (fz_ioctl(t, &s, K_FENCE, FLEX_IOCTL_FENCE_EXPORT, &fe, sizeof(fe), 0))
		return;
	/* The fd is ours whenever the call succeeded, also with a short struct. */
	if (out_len_last() < offsetof(struct flex_fence_export, pad)) {
		violation(t, &sh->bad_data, "FENCE_EXPORT succeeded [%s] with a structure too short "
			  "to return the fd, expected EINVAL", last_call_desc());
		return;
	}
	if (fe.fd < 0) {
		violation(t, &sh->bad_data, "FENCE_EXPORT succeeded with fd %d, expected >= 0",
			  fe.fd);
		return;
	}
	x = rnd(r, 100);
	if (x < 50) {
		pfd.fd = fe.fd;
		pfd.events = POLLIN;
		poll(&pfd, 1, chance(r, 50) ? 0 : 1 + rnd(r, 20));
		count(&sh->fences_polled, 1);
	}
	if (x >= 80)
		fence_stash(t->p, fe.fd);
	else
		close(fe.fd);
}

/* ---- numbers the driver does not know ---- */

void op_badnr(struct tctx *t)
{
	static const unsigned long real[] = {
		FLEX_IOCTL_QUERY, FLEX_IOCTL_REGION_ACQUIRE, FLEX_IOCTL_REGION_RELEASE,
		FLEX_IOCTL_REGION_INFO, FLEX_IOCTL_QUEUE_CREATE, FLEX_IOCTL_QUEUE_DESTROY,
		FLEX_IOCTL_QUEUE_RESET, FLEX_IOCTL_QUEUE_STATUS, FLEX_IOCTL_SUBMIT,
		FLEX_IOCTL_WAIT, FLEX_IOCTL_FENCE_EXPORT,
	};
	struct rng *r = &t->r;
	unsigned long cmd, rc;
	unsigned int type, nr, dir, size, i;
	struct snap s;

	if (pick_slot(t, &s))
		return;
	rc = real[rnd(r, sizeof(real) / sizeof(real[0]))];
	type = FLEX_IOCTL_BASE;
	nr = _IOC_NR(rc);
	dir = _IOC_DIR(rc);
	size = _IOC_SIZE(rc);
	switch (rnd(r, 4)) {
	case 0:	/* a number past the last */
		nr = 0x17 + rnd(r, 0xff - 0x16);
		dir = rnd(r, 4);
		break;
	case 1:	/* a hole in the table */
		nr = 0x04 + rnd(r, 12);
		dir = rnd(r, 4);
		break;
	case 2:	/* a known number in the wrong direction */
		dir = (dir + 1 + rnd(r, 3)) & 3;
		break;
	default:	/* another type; not the VFS's own ('T', 'X', 'f', 0, 0x94) */
		do
			type = rnd(r, 256);
		while (type == FLEX_IOCTL_BASE || type == 'T' || type == 'X' || type == 'f' ||
		       type == 0 || type == 0x94);
		break;
	}
	cmd = _IOC(dir, type, nr, size);
	for (i = 0; i < sizeof(real) / sizeof(real[0]); i++)
		if (cmd == real[i] ||
		    (type == FLEX_IOCTL_BASE && nr == _IOC_NR(real[i]) && dir == _IOC_DIR(real[i])))
			return;	/* a real one after all */
	memset(t->argbuf, 0, 256);
	fz_ioctl(t, &s, K_BADNR, cmd, t->argbuf, size, 0);
}

/* ---- poll() of the device file ---- */

void op_poll(struct tctx *t)
{
	struct pollfd pfd;
	struct snap s;
	int ret;

	if (pick_slot(t, &s))
		return;
	pfd.fd = s.fd;
	pfd.events = POLLIN | POLLPRI | POLLOUT;
	ret = poll(&pfd, 1, rnd(&t->r, 3) ? 0 : 1 + rnd(&t->r, 5));
	if (ret < 0 && errno != EINTR)
		violation(t, &sh->bad_internal, "poll of the device file: %s", strerror(errno));
}
