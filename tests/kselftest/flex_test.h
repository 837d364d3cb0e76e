/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the flex driver selftests (run in the VM lane, with the
 * module loaded). Built on the kernel's kselftest_harness.h.
 */
#ifndef FLEX_TEST_H
#define FLEX_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/flex.h>
#include <linux/flex_isa.h>

#include "flex_sysfs.h"

#define FLEX_PF		"/dev/flex0"
#define MiB		(1ULL << 20)
#define GiB		(1ULL << 30)

/* ioctl() that returns -errno instead of -1, so ASSERT_EQ shows the errno. */
static inline int flex_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int flex_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static inline int flex_acquire(int fd, __u64 size, struct flex_region_acquire *out)
{
	struct flex_region_acquire a = { .size = size };
	int err = flex_ioctl(fd, FLEX_IOCTL_REGION_ACQUIRE, &a);

	if (!err && out)
		*out = a;
	return err;
}

static inline int flex_release(int fd, __u64 region_id)
{
	struct flex_region_release r = { .region_id = region_id };

	return flex_ioctl(fd, FLEX_IOCTL_REGION_RELEASE, &r);
}

static inline struct flex_query flex_query(int fd)
{
	struct flex_query q = { 0 };

	if (flex_ioctl(fd, FLEX_IOCTL_QUERY, &q))
		memset(&q, 0xff, sizeof(q));
	return q;
}

/* Queues and CBs. */

static inline int queue_create(int fd, __u32 prio, __u32 depth)
{
	struct flex_queue_create c = { .priority = prio, .depth = depth };
	int err = flex_ioctl(fd, FLEX_IOCTL_QUEUE_CREATE, &c);

	return err ? err : (int)c.queue_id;
}

static inline int queue_destroy(int fd, __u32 q)
{
	struct flex_queue_op op = { .queue_id = q };

	return flex_ioctl(fd, FLEX_IOCTL_QUEUE_DESTROY, &op);
}

static inline int queue_reset(int fd, __u32 q)
{
	struct flex_queue_op op = { .queue_id = q };

	return flex_ioctl(fd, FLEX_IOCTL_QUEUE_RESET, &op);
}

static inline int submit(int fd, __u32 q, const struct flex_cb *cbs, __u32 n,
			 __u32 flags, __u64 *seqno)
{
	struct flex_submit s = {
		.cbs_ptr = (__u64)(unsigned long)cbs, .count = n,
		.queue_id = q, .flags = flags,
	};
	int err = flex_ioctl(fd, FLEX_IOCTL_SUBMIT, &s);

	if (!err && seqno)
		*seqno = s.seqno;
	return err;
}

static inline __s64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Waits with a relative timeout (ms; 0 polls). */
static inline int wait_seq(int fd, __u32 q, __u64 seqno, int ms)
{
	struct flex_wait w = {
		.queue_id = q, .seqno = seqno,
		.timeout_ns = ms ? now_ns() + ms * 1000000LL : 0,
	};

	return flex_ioctl(fd, FLEX_IOCTL_WAIT, &w);
}

static inline struct flex_queue_status queue_status(int fd, __u32 q)
{
	struct flex_queue_status s = { .queue_id = q };

	if (flex_ioctl(fd, FLEX_IOCTL_QUEUE_STATUS, &s))
		memset(&s, 0xff, sizeof(s));
	return s;
}

static inline struct flex_cb cb_dma(int to_device, const void *host, __u64 region_id,
				    __u64 offset, __u64 size)
{
	struct flex_cb cb = {
		.opcode = to_device ? FLEX_CB_DMA_TO_DEVICE : FLEX_CB_DMA_FROM_DEVICE,
		.dma = { .host_ptr = (__u64)(unsigned long)host,
			 .dev = { region_id, offset }, .size = size },
	};
	return cb;
}

static inline struct flex_cb cb_wait(__u32 q, __u64 seqno)
{
	struct flex_cb cb = { .opcode = FLEX_CB_WAIT, .wait = { .queue_id = q, .seqno = seqno } };

	return cb;
}

/* Runs one CB on queue q and waits for it (10 s). */
static inline int run_cb(int fd, __u32 q, struct flex_cb cb)
{
	__u64 seq;
	int err = submit(fd, q, &cb, 1, 0, &seq);

	return err ? err : wait_seq(fd, q, seq, 10000);
}

/* debugfs: hold every CB queued (1) or let the engines run (0). */
static inline int engines_pause(int on)
{
	return sysfs_write("/sys/kernel/debug/flex/flex0/engines_paused", on ? "1" : "0");
}

/* Programs: a header and up to 64 instructions, built in memory. */
struct prog {
	struct flex_prog_header h;
	struct flex_insn insn[64];
};

static inline void prog_init(struct prog *p, __u32 n_slots)
{
	memset(p, 0, sizeof(*p));
	p->h.magic = FLEX_PROG_MAGIC;
	p->h.version = FLEX_PROG_VERSION;
	p->h.n_slots = n_slots;
}

static inline struct flex_insn *prog_emit(struct prog *p, __u8 op, __u8 dtype,
					  __u16 flags, int nargs, ...)
{
	struct flex_insn *in = &p->insn[p->h.n_insns++];
	va_list ap;
	int i;

	in->op = op;
	in->dtype = dtype;
	in->flags = flags;
	va_start(ap, nargs);
	for (i = 0; i < nargs; i++)
		in->arg[i] = va_arg(ap, __u64);
	va_end(ap);
	return in;
}

static inline size_t prog_size(const struct prog *p)
{
	return sizeof(p->h) + p->h.n_insns * sizeof(p->insn[0]);
}

/*
 * A compute CB that fills @count int32s with 7, its program uploaded by a
 * DMA CB to offset 0 of the region, its data at offset 4096 of the same.
 */
static inline int run_fill(int fd, __u32 q, __u64 region_id, __u32 count)
{
	struct flex_cb cb = { .opcode = FLEX_CB_COMPUTE };
	struct prog p;
	int err;

	prog_init(&p, 0);
	prog_emit(&p, FLEX_OP_FILL, FLEX_DT_I32, 0, 3, FLEX_ADDR(0, 0), (__u64)count, 7ULL);
	prog_emit(&p, FLEX_OP_END, FLEX_DT_I32, 0, 0);
	err = run_cb(fd, q, cb_dma(1, &p, region_id, 0, prog_size(&p)));
	if (err)
		return err;
	cb.compute.program = (struct flex_va){ region_id, 0 };
	cb.compute.segment_mask = 1;
	cb.compute.segments[0] = (struct flex_va){ region_id, 4096 };
	return run_cb(fd, q, cb);
}

/*
 * A key of /proc/self/fdinfo/<fd> (flex-regions, flex-queues, flex-pinned,
 * ...), its leading number; -1 when absent.
 */
static inline long long fdinfo_num(int fd, const char *key)
{
	char path[64], line[256];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 10);
	fclose(f);
	return v;
}

#endif /* FLEX_TEST_H */
