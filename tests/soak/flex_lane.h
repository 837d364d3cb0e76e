/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the soak (tests/soak/flex_soak.c) and the fault lane
 * (tests/faults/flex_faults.c), on top of the driver tests' own
 * (tests/kselftest/flex_test.h: ioctls that return -errno, regions, queues,
 * CBs, sysfs numbers): device-wide usage, fdinfo keys, the kernel log, a
 * reproducible random generator, programs of up to 16 instructions, and TAP
 * output whose numbering survives fork().
 *
 * No libflex and no kselftest harness (flex_test.h needs none): both
 * programs fork and kill their own workers and count their own checks.
 */
#ifndef FLEX_LANE_H
#define FLEX_LANE_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
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
#include <linux/sync_file.h>

#include "flex_test.h"

#define LANE_DEBUGFS	"/sys/kernel/debug/flex/flex0"
#define LANE_KiB	(1ULL << 10)

#define LANE_UNUSED	__attribute__((unused))
#define LANE_PRINTF(a, b) __attribute__((format(printf, a, b)))

static inline double lane_seconds_since(int64_t t0)
{
	return (double)(now_ns() - t0) / 1e9;
}

/* ---- sysfs, debugfs, fdinfo ---- */

static inline int lane_path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Entries in /sys/class/flex/flex0/regions/ (-1 if it cannot be read). */
static inline int lane_region_dirs(void)
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

/* The device-wide figures a clean device has at zero. */
struct lane_usage {
	long long used, resident, pinned, regions, refcnt;
};

static inline struct lane_usage lane_usage(void)
{
	struct lane_usage u = {
		.used = sysfs_num(FLEX_SYSFS "/used"),
		.resident = sysfs_num(FLEX_SYSFS "/resident"),
		.pinned = sysfs_num(LANE_DEBUGFS "/pinned_pages"),
		.regions = lane_region_dirs(),
		.refcnt = sysfs_num("/sys/module/flex/refcnt"),
	};
	return u;
}

static inline int lane_usage_clean(const struct lane_usage *u)
{
	return !u->used && !u->resident && !u->pinned && !u->regions;
}

static inline void lane_usage_str(const struct lane_usage *u, char *buf, size_t len)
{
	snprintf(buf, len, "used %lld, resident %lld, pinned_pages %lld, "
		 "region dirs %lld, module refcnt %lld", u->used, u->resident,
		 u->pinned, u->regions, u->refcnt);
}

/*
 * Waits up to @ms for the device to be clean (teardown of a killed
 * process may still be running); returns 1 when clean, with the last
 * reading in *u.
 */
static inline int lane_wait_clean(int ms, struct lane_usage *u)
{
	int64_t end = now_ns() + ms * 1000000LL;

	for (;;) {
		*u = lane_usage();
		if (lane_usage_clean(u) || now_ns() > end)
			return lane_usage_clean(u);
		usleep(20 * 1000);
	}
}

/* ---- the kernel log: reports since a mark, to name the case that caused them ---- */

/* Opens /dev/kmsg positioned at its end; -1 when it cannot be read. */
static inline int lane_kmsg_mark(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

/*
 * Reads the records logged since lane_kmsg_mark() and copies the first
 * line that looks like a kernel report (the patterns tools/flex-vm fails
 * a run on) into @out. Returns the number of such lines (0: clean).
 */
static inline int lane_kmsg_scan(int fd, char *out, size_t len)
{
	static const char *const bad[] = {
		"BUG:", "WARNING:", "Oops", "general protection fault", "Call Trace",
		"refcount_t:", "list_add corruption", "list_del corruption", "KASAN:",
		"KFENCE:", "UBSAN:", "possible circular locking", "inconsistent lock state",
		"possible recursive locking", "suspicious RCU usage",
		"sleeping function called from invalid context", "Kernel panic",
		"INFO: task", "soft lockup",
	};
	char rec[2048];
	int found = 0;
	ssize_t n;
	size_t i;

	if (out && len)
		out[0] = '\0';
	if (fd < 0)
		return 0;
	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on with the next */
		if (n <= 0)
			break;
		rec[n] = '\0';
		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char *msg = strchr(rec, ';');

			if (msg && strstr(msg, bad[i])) {
				if (!found++ && out && len) {
					char *nl = strchr(msg + 1, '\n');

					if (nl)
						*nl = '\0';
					snprintf(out, len, "%s", msg + 1);
				}
				break;
			}
		}
	}
	return found;
}

/* ---- random numbers (xorshift64*) ---- */

static inline uint64_t lane_rand(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Uniform in [lo, hi] (inclusive). */
static inline uint64_t lane_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return hi <= lo ? lo : lo + lane_rand(s) % (hi - lo + 1);
}

/* 1 with probability pct/100. */
static inline int lane_chance(uint64_t *s, unsigned int pct)
{
	return lane_rand(s) % 100 < pct;
}

static inline uint64_t lane_seed_mix(uint64_t a, uint64_t b)
{
	uint64_t s = a ^ (b * 0x9E3779B97F4A7C15ULL) ^ 0x5851F42D4C957F2DULL;

	lane_rand(&s);
	return s ? s : 1;
}

static inline void lane_fill_random(uint64_t *s, void *p, size_t n)
{
	unsigned char *b = p;
	uint64_t v;

	while (n >= 8) {
		v = lane_rand(s);
		memcpy(b, &v, 8);
		b += 8;
		n -= 8;
	}
	v = lane_rand(s);
	memcpy(b, &v, n);
}

/* ---- control blocks and queues ---- */

static inline struct flex_cb lane_cb_nop(void)
{
	struct flex_cb cb = { .opcode = FLEX_CB_NOP };

	return cb;
}

static inline int lane_queue_op(int fd, unsigned long cmd, uint32_t q)
{
	struct flex_queue_op op = { .queue_id = q };

	return flex_ioctl(fd, cmd, &op);
}

/*
 * flex_test.h's submit() for the lanes' seqnos, which are uint64_t (the
 * lanes use <stdint.h> types throughout; __u64 is another type).
 */
static inline int lane_submit(int fd, uint32_t q, const struct flex_cb *cbs,
			      uint32_t n, uint32_t flags, uint64_t *seqno)
{
	__u64 s;
	int err = submit(fd, q, cbs, n, flags, &s);

	if (!err && seqno)
		*seqno = s;
	return err;
}

static inline int lane_status(int fd, uint32_t q, struct flex_queue_status *st)
{
	memset(st, 0, sizeof(*st));
	st->queue_id = q;
	return flex_ioctl(fd, FLEX_IOCTL_QUEUE_STATUS, st);
}

static inline int lane_fence_export(int fd, uint32_t q, uint64_t seqno)
{
	struct flex_fence_export e = { .queue_id = q, .seqno = seqno };
	int err = flex_ioctl(fd, FLEX_IOCTL_FENCE_EXPORT, &e);

	return err ? err : e.fd;
}

/* A sync_file's status: 1 signalled, 0 active, a negative errno on error. */
static inline int lane_sync_status(int fd)
{
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info))
		return -1000 - errno;
	return info.status;
}

/* ---- programs ---- */

#define LANE_PROG_MAX_INSNS	16

struct lane_prog {
	struct flex_prog_header h;
	struct flex_insn insn[LANE_PROG_MAX_INSNS];
};

static inline void lane_prog_init(struct lane_prog *p)
{
	memset(p, 0, sizeof(*p));
	p->h.magic = FLEX_PROG_MAGIC;
	p->h.version = FLEX_PROG_VERSION;
}

static inline struct flex_insn *lane_prog_emit(struct lane_prog *p, uint8_t op,
					       uint8_t dtype, uint16_t flags)
{
	struct flex_insn *in = &p->insn[p->h.n_insns++];

	memset(in, 0, sizeof(*in));
	in->op = op;
	in->dtype = dtype;
	in->flags = flags;
	return in;
}

static inline size_t lane_prog_size(const struct lane_prog *p)
{
	return sizeof(p->h) + p->h.n_insns * sizeof(p->insn[0]);
}

/* ---- TAP, numbered across fork() through a shared counter ---- */

struct lane_tap {
	int next;		/* number of the last check printed */
	int failed;
	int skipped;
};

static struct lane_tap *lane_tap LANE_UNUSED;

static inline void lane_tap_init(void)
{
	lane_tap = mmap(NULL, sizeof(*lane_tap), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (lane_tap == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	memset(lane_tap, 0, sizeof(*lane_tap));
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
}

/* Prints one check; returns ok so callers can chain. */
static inline int lane_check(int ok, const char *fmt, ...) LANE_PRINTF(2, 3);
static inline int lane_check(int ok, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = __atomic_add_fetch(&lane_tap->next, 1, __ATOMIC_SEQ_CST);
	if (!ok)
		__atomic_add_fetch(&lane_tap->failed, 1, __ATOMIC_SEQ_CST);
	printf("%sok %d - %s\n", ok ? "" : "not ", n, msg);
	fflush(stdout);
	return ok;
}

static inline void lane_skip(const char *fmt, ...) LANE_PRINTF(1, 2);
static inline void lane_skip(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	n = __atomic_add_fetch(&lane_tap->next, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&lane_tap->skipped, 1, __ATOMIC_SEQ_CST);
	printf("ok %d - %s # SKIP\n", n, msg);
	fflush(stdout);
}

static inline void lane_diag(const char *fmt, ...) LANE_PRINTF(1, 2);
static inline void lane_diag(const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("# %s\n", msg);
	fflush(stdout);
}

/* The plan comes last (TAP allows it): the number of checks is data-driven. */
static inline int lane_tap_done(void)
{
	printf("1..%d\n", lane_tap->next);
	fflush(stdout);
	return lane_tap->failed ? 1 : 0;
}

static inline const char *lane_errname(int err)
{
	static __thread char buf[32];

	switch (err) {
	case 0: return "0";
	case -ENOMEM: return "-ENOMEM";
	case -ENOSPC: return "-ENOSPC";
	case -ENOENT: return "-ENOENT";
	case -EINVAL: return "-EINVAL";
	case -EBUSY: return "-EBUSY";
	case -EAGAIN: return "-EAGAIN";
	case -EFAULT: return "-EFAULT";
	case -EIO: return "-EIO";
	case -ERANGE: return "-ERANGE";
	case -ENXIO: return "-ENXIO";
	case -ENOEXEC: return "-ENOEXEC";
	case -EPIPE: return "-EPIPE";
	case -E2BIG: return "-E2BIG";
	case -ETIMEDOUT: return "-ETIMEDOUT";
	case -ECANCELED: return "-ECANCELED";
	case -EINTR: return "-EINTR";
	case -ENODEV: return "-ENODEV";
	case -EMFILE: return "-EMFILE";
	case -EDQUOT: return "-EDQUOT";
	case -EACCES: return "-EACCES";
	}
	snprintf(buf, sizeof(buf), "%d", err);
	return buf;
}

#endif /* FLEX_LANE_H */
