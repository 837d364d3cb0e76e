// SPDX-License-Identifier: GPL-2.0
/*
 * flex_fuzz: mappings of regions. mmap (valid, MAP_PRIVATE, out of range,
 * another file's offset), munmap of all or part, mremap (growing must
 * fail: VM_DONTEXPAND), madvise, mprotect, touching pages, and fork with a
 * child that touches the mappings too.
 *
 * A touch that faults with SIGBUS longjmps out of the handler. A mapping
 * of a region this process released (maps_mark_released()) must raise
 * SIGBUS on every touch; any other mapping may (backing cap, a release by
 * a fork child or an untracked path).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz.h"

/*
 * Where a SIGBUS of the current touch longjmps to. Volatile, and fenced
 * with compiler barriers: the handler reads it, which the compiler cannot
 * see, so it could otherwise drop or move the stores around the access.
 */
static __thread sigjmp_buf *volatile touch_env;

/* "<prefix>0x<hex>\n" on stderr, from a signal handler. */
static void write_hex(const char *prefix, unsigned long v)
{
	char buf[64];
	int n = 0, i;

	while (*prefix && n < 40)
		buf[n++] = *prefix++;
	buf[n++] = '0';
	buf[n++] = 'x';
	for (i = 60; i >= 0; i -= 4)
		buf[n++] = "0123456789abcdef"[(v >> i) & 15];
	buf[n++] = '\n';
	if (write(2, buf, n) < 0)
		return;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (touch_env)
		siglongjmp(*touch_env, 1);
	/* Not in a touch: say where, and die of it for the supervisor. */
	write_hex("flex_fuzz: unexpected SIGBUS at address ", (unsigned long)si->si_addr);
	write_hex("flex_fuzz: si_code ", (unsigned long)si->si_code);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A SIGSEGV is never expected: say where, and die of it. */
static void on_sigsegv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	write_hex("flex_fuzz: SIGSEGV at address ", (unsigned long)si->si_addr);
	write_hex("flex_fuzz: in a touch: ", touch_env != NULL);
	signal(sig, SIG_DFL);
	raise(sig);
}

int sigbus_install(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER };
	struct sigaction sv = { .sa_sigaction = on_sigsegv, .sa_flags = SA_SIGINFO };

	return sigaction(SIGBUS, &sa, NULL) || sigaction(SIGSEGV, &sv, NULL);
}

/*
 * Touches one byte; returns 1 if it raised SIGBUS. The byte read is
 * written back, so a concurrent DMA's data is left as it was but for races.
 */
int touch(unsigned char *p, int write)
{
	sigjmp_buf env;
	volatile unsigned char v;

	if (sigsetjmp(env, 1)) {
		touch_env = NULL;
		return 1;
	}
	touch_env = &env;
	__asm__ __volatile__("" ::: "memory");
	v = *(volatile unsigned char *)p;
	if (write)
		*(volatile unsigned char *)p = v;
	__asm__ __volatile__("" ::: "memory");
	touch_env = NULL;
	return 0;
}

void maps_mark_released(struct proc *p, int slot, unsigned int gen, __u64 handle)
{
	int i;

	/* Under the read lock: only this flag changes, and atomically. */
	pthread_rwlock_rdlock(&p->maplock);
	for (i = 0; i < p->nmaps; i++)
		if (p->maps[i].slot == slot && p->maps[i].gen == gen &&
		    p->maps[i].handle == handle)
			__atomic_store_n(&p->maps[i].released, 1, __ATOMIC_RELEASE);
	pthread_rwlock_unlock(&p->maplock);
}

/* A mapping to DMA from or to; the caller holds the read lock. */
int pick_host_mapping(struct tctx *t, unsigned char **addr, size_t *len)
{
	struct mapping *m;

	if (!t->p->nmaps)
		return -1;
	m = &t->p->maps[rnd(&t->r, t->p->nmaps)];
	*addr = m->addr;
	*len = m->len;
	return 0;
}

/* The /proc/self/maps line of @p, for messages. */
static void maps_line(const void *p, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[256];
	unsigned long a, b;

	snprintf(out, len, "not mapped");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && (unsigned long)p >= a &&
		    (unsigned long)p < b) {
			line[strcspn(line, "\n")] = 0;
			snprintf(out, len, "%s", line);
			break;
		}
	}
	fclose(f);
}

static void mm_bad(struct tctx *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mm_bad(struct tctx *t, const char *fmt, ...)
{
	char buf[VIOLATION_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	violation(t, &sh->bad_mm, "%s", buf);
}

static void hist(struct mapping *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hist(struct mapping *m, const char *fmt, ...)
{
	size_t n = strlen(m->hist);
	va_list ap;

	if (n > sizeof(m->hist) - 40) {
		memmove(m->hist, m->hist + 60, n - 60 + 1);
		n -= 60;
	}
	va_start(ap, fmt);
	vsnprintf(m->hist + n, sizeof(m->hist) - n, fmt, ap);
	va_end(ap);
}

/*
 * @reg is still in its file's table: REGION_INFO of its id on that file
 * returns its handle. Publication ends before a release takes the memory
 * back (its sysfs directory goes only after), so a region published now
 * was published all along since it was acquired.
 */
static int published(struct tctx *t, const struct snap *s, const struct region *reg)
{
	struct flex_region_info in = { .region_id = reg->id };

	count(&sh->ioctls, 1);
	if (ioctl(s->fd, FLEX_IOCTL_REGION_INFO, &in) || snap_stale(t, s))
		return 0;
	return in.handle == reg->handle;
}

void op_mmap(struct tctx *t)
{
	struct rng *r = &t->r;
	struct region *reg;
	struct snap s, o, *owner = &s;
	size_t len, npages;
	__u64 off, pgoff;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED, x, expect = 0;
	__u64 handle;
	const char *what;
	void *a;

	if (take_snap(t, rnd(r, NR_SLOTS), &s) || !(reg = pick_region(t, &s)))
		return;
	npages = reg->size / PAGE;
	len = (chance(r, 90) ? 1 + rnd(r, 64) : npages) * PAGE;
	if (len > reg->size)
		len = reg->size;
	off = rnd(r, (reg->size - len) / PAGE + 1) * PAGE;
	pgoff = reg->mmap_offset + off;
	x = rnd(r, 100);
	if (x < 74) {
		what = "a region";
		x = rnd(r, 100);
		if (x < 10)
			prot = PROT_READ;
		else if (x < 13)
			prot = PROT_NONE;
		if (chance(r, 5) && len <= 256 * 1024)
			flags |= MAP_POPULATE;
	} else if (x < 82) {
		what = "a region MAP_PRIVATE";
		flags = MAP_PRIVATE;
		expect = EINVAL;
	} else if (x < 90) {
		/* Starts inside it, ends past it (maybe in the next region). */
		what = "past a region's end";
		if (len < 2 * PAGE)
			len = 2 * PAGE;
		pgoff = reg->mmap_offset + reg->size - len + PAGE * (1 + rnd(r, len / PAGE - 1));
		expect = EINVAL;
	} else if (x < 95 && !take_snap(t, (s.slot + 1) % NR_SLOTS, &o) && o.nregions) {
		reg = &o.regions[rnd(r, o.nregions)];
		owner = &o;
		what = "another file's region";
		pgoff = reg->mmap_offset;
		len = PAGE;
		expect = EACCES;
	} else {
		what = "a random offset";
		pgoff = (rnd_interesting(r) & ~(PAGE - 1)) + (chance(r, 20) ? 1 + rnd(r, 4095) : 0);
		expect = -1;	/* unknown */
	}

	a = mmap(NULL, len, prot, flags, s.fd, pgoff);
	count(&sh->mm_calls, 1);
	if (a == MAP_FAILED) {
		int err = errno;

		if (snap_stale(t, &s))
			return;
		/*
		 * EACCES also when the region was released meanwhile; EOVERFLOW
		 * for an offset whose end wraps.
		 */
		if (err != EINVAL && err != EACCES && err != ENOMEM &&
		    !(expect == -1 && (err == EPERM || err == EOVERFLOW)))
			mm_bad(t, "mmap of %s (%zu bytes at offset 0x%llx): errno %s, expected "
			       "EINVAL, EACCES or ENOMEM", what, len, pgoff, errname(err));
		else if (expect == EACCES && err != EACCES)
			mm_bad(t, "mmap of %s (%zu bytes at offset 0x%llx): errno %s, expected %s",
			       what, len, pgoff, errname(err), errname(expect));
		return;
	}
	/*
	 * A success is wrong only if the region the offset was taken from is
	 * still published now (so it was during the call): offsets of released
	 * regions are reused by new ones, maybe this file's.
	 */
	if (expect > 0 && !snap_stale(t, &s) && published(t, owner, reg)) {
		if (expect == EACCES)
			violation(t, &sh->bad_isolation,
				  "mmap of another file's live region %llu (offset 0x%llx) succeeded "
				  "on file %d, expected EACCES", reg->handle, pgoff, s.slot);
		else
			mm_bad(t, "mmap of %s (%zu bytes at offset 0x%llx, region %llu of %llu "
			       "bytes at 0x%llx, alive) succeeded, expected %s", what, len, pgoff,
			       reg->handle, reg->size, reg->mmap_offset, errname(expect));
	}
	if (expect) {
		munmap(a, len);
		return;
	}
	/*
	 * Offsets are reused once a region is released: the mapping is of
	 * reg only if reg is still published after the call (so it was
	 * during it). Otherwise it maps an unknown region (a new one at the
	 * same place), whose release nobody marks.
	 */
	handle = published(t, &s, reg) ? reg->handle : 0;
	pthread_rwlock_wrlock(&t->p->maplock);
	if (t->p->nmaps < MAX_MAPS) {
		struct mapping *m = &t->p->maps[t->p->nmaps++];

		m->addr = a;
		m->len = len;
		m->prot = prot;
		m->slot = s.slot;
		m->gen = s.gen;
		m->handle = handle;
		m->released = 0;
		m->split = 0;
		m->hist[0] = 0;
		hist(m, "mmap %p+%zx ", a, len);
		a = NULL;
	}
	pthread_rwlock_unlock(&t->p->maplock);
	if (a)
		munmap(a, len);
}

/* Picks a mapping under the write lock; NULL (unlocked) if there is none. */
static struct mapping *pick_map_wr(struct tctx *t)
{
	pthread_rwlock_wrlock(&t->p->maplock);
	if (!t->p->nmaps) {
		pthread_rwlock_unlock(&t->p->maplock);
		return NULL;
	}
	return &t->p->maps[rnd(&t->r, t->p->nmaps)];
}

static void map_remove(struct proc *p, struct mapping *m)
{
	*m = p->maps[--p->nmaps];
}

void op_munmap(struct tctx *t)
{
	struct mapping *m = pick_map_wr(t);
	size_t pages, k;
	int x, ret;

	if (!m)
		return;
	pages = m->len / PAGE;
	k = pages > 1 ? 1 + rnd(&t->r, pages - 1) : 0;
	x = rnd(&t->r, 100);
	if (x < 70 || !k) {
		ret = munmap(m->addr, m->len);
		map_remove(t->p, m);
	} else if (x < 85) {	/* the head: the VMA splits */
		ret = munmap(m->addr, k * PAGE);
		m->addr += k * PAGE;
		m->len -= k * PAGE;
		hist(m, "head-%zu ", k);
	} else {		/* the tail */
		ret = munmap(m->addr + (pages - k) * PAGE, k * PAGE);
		m->len -= k * PAGE;
		hist(m, "tail-%zu ", k);
	}
	pthread_rwlock_unlock(&t->p->maplock);
	count(&sh->mm_calls, 1);
	if (ret)
		mm_bad(t, "munmap of a region mapping: errno %s, expected success", errname(errno));
}

void op_mremap(struct tctx *t)
{
	struct mapping *m = pick_map_wr(t);
	size_t pages, newlen;
	void *a;

	if (!m)
		return;
	pages = m->len / PAGE;
	count(&sh->mm_calls, 1);
	if (chance(&t->r, 45) || pages < 2) {
		newlen = m->len + PAGE * (1 + rnd(&t->r, 16));
		a = mremap(m->addr, m->len, newlen, chance(&t->r, 50) ? MREMAP_MAYMOVE : 0);
		if (a != MAP_FAILED) {
			/* Documented: mappings cannot grow. */
			mm_bad(t, "mremap grew a region mapping from %zu to %zu bytes, expected "
			       "failure (VM_DONTEXPAND)", m->len, newlen);
			m->addr = a;
			munmap(m->addr + m->len, newlen - m->len);
			hist(m, "GREW ");
		} else if (errno != EFAULT && errno != ENOMEM) {
			mm_bad(t, "mremap growing a region mapping: errno %s, expected EFAULT "
			       "or ENOMEM", errname(errno));
		}
	} else if (chance(&t->r, 60)) {
		newlen = m->len - PAGE * (1 + rnd(&t->r, pages - 1));
		a = mremap(m->addr, m->len, newlen, 0);
		if (a == MAP_FAILED)
			mm_bad(t, "mremap shrinking a region mapping from %zu to %zu bytes: "
			       "errno %s, expected success", m->len, newlen, errname(errno));
		else
			m->len = newlen, hist(m, "shrink %zx ", newlen);
	} else if (!m->split) {
		/*
		 * Move it, same size: the VMA is copied (vm_ops->open) and
		 * closed. Not a split mapping: mremap() would refuse it, and
		 * only after unmapping the destination. After a failure the
		 * destination is left alone, unmapped or not: another thread
		 * may have mapped something there since.
		 */
		void *to = mmap(NULL, m->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (to != MAP_FAILED) {
			a = mremap(m->addr, m->len, m->len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
			if (a == MAP_FAILED) {
				if (errno != EINVAL && errno != ENOMEM && errno != EFAULT)
					mm_bad(t, "mremap moving a region mapping: errno %s",
					       errname(errno));
			} else {
				m->addr = a;
				hist(m, "move %p ", a);
			}
		}
	}
	pthread_rwlock_unlock(&t->p->maplock);
}

void op_madvise(struct tctx *t)
{
	static const int advice[] = {
		MADV_DONTNEED, MADV_DONTNEED, MADV_DONTNEED, MADV_WILLNEED, MADV_COLD,
		MADV_PAGEOUT, MADV_REMOVE, MADV_FREE, MADV_POPULATE_READ,
		MADV_POPULATE_WRITE, MADV_DONTDUMP, MADV_DODUMP, MADV_HUGEPAGE,
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL,
	};
	struct mapping *m;
	size_t pages, first, n;
	int adv, ret, err;

	pthread_rwlock_rdlock(&t->p->maplock);
	if (!t->p->nmaps) {
		pthread_rwlock_unlock(&t->p->maplock);
		return;
	}
	m = &t->p->maps[rnd(&t->r, t->p->nmaps)];
	pages = m->len / PAGE;
	first = rnd(&t->r, pages);
	n = 1 + rnd(&t->r, pages - first);
	adv = advice[rnd(&t->r, sizeof(advice) / sizeof(advice[0]))];
	/* POPULATE_WRITE needs write permission; it would fail with EPERM. */
	ret = madvise(m->addr + first * PAGE, n * PAGE, adv);
	err = errno;
	pthread_rwlock_unlock(&t->p->maplock);
	count(&sh->mm_calls, 1);
	/* Only what cannot be an answer to a well-formed call is flagged. */
	if (ret && err != EINVAL && err != EFAULT && err != ENOMEM && err != EAGAIN &&
	    err != EPERM && err != EOPNOTSUPP && err != EIO && err != EINTR &&
	    err != EHWPOISON && !(err == ENODEV && adv == MADV_REMOVE))
		mm_bad(t, "madvise(%d) of a region mapping: errno %s", adv, errname(err));
}

void op_mprotect(struct tctx *t)
{
	static const int prots[] = { PROT_READ, PROT_READ | PROT_WRITE, PROT_NONE };
	struct mapping *m = pick_map_wr(t);
	char line[256], what[200];
	size_t pages, n;
	int prot, ret, err = 0;

	if (!m)
		return;
	pages = m->len / PAGE;
	prot = prots[rnd(&t->r, 3)];
	/* Part of it (the VMA splits, vm_ops->open runs) or all of it. */
	n = chance(&t->r, 30) && pages > 1 ? 1 + rnd(&t->r, pages - 1) : pages;
	ret = mprotect(m->addr, n * PAGE, prot);
	if (!ret && n < pages && prot != m->prot)
		m->split = 1;	/* for good: VMAs with a close op never merge */
	if (!ret)
		m->prot = n == pages ? prot : (m->prot & prot), hist(m, "prot%d/%zu ", prot, n);
	if (ret) {
		err = errno;
		maps_line(m->addr, line, sizeof(line));
		snprintf(what, sizeof(what), "%s", m->hist);
	}
	pthread_rwlock_unlock(&t->p->maplock);
	count(&sh->mm_calls, 1);
	if (ret)
		mm_bad(t, "mprotect(%d) of %zu pages of a region mapping: errno %s, expected "
		       "success (mapping history: %s; /proc/self/maps: %s)", prot, n,
		       errname(err), what, line);
}

void op_touch(struct tctx *t)
{
	struct mapping *m;
	size_t pages;
	int i, n, released, faulted, write;

	pthread_rwlock_rdlock(&t->p->maplock);
	if (!t->p->nmaps) {
		pthread_rwlock_unlock(&t->p->maplock);
		return;
	}
	m = &t->p->maps[rnd(&t->r, t->p->nmaps)];
	if (!(m->prot & PROT_READ)) {
		pthread_rwlock_unlock(&t->p->maplock);
		return;
	}
	pages = m->len / PAGE;
	n = 1 + rnd(&t->r, 8);
	for (i = 0; i < n; i++) {
		unsigned char *p = m->addr + rnd(&t->r, pages) * PAGE + rnd(&t->r, PAGE);

		released = __atomic_load_n(&m->released, __ATOMIC_ACQUIRE);
		write = (m->prot & PROT_WRITE) && chance(&t->r, 50);
		faulted = touch(p, write);
		count(&sh->touches, 1);
		if (faulted)
			count(&sh->sigbus, 1);
		if (released) {
			count(&sh->released_touches, 1);
			if (!faulted) {
				char line[256];

				maps_line(p, line, sizeof(line));
				violation(t, &sh->bad_sigbus,
					  "%s of a mapping of released region %llu (page %zu of %zu, "
					  "file %d.%u) did not raise SIGBUS; its sysfs directory %s; "
					  "address %p, mapping history: %s; /proc/self/maps: %s",
					  write ? "write" : "read", m->handle,
					  (size_t)(p - m->addr) / PAGE, pages, m->slot, m->gen,
					  region_dir_exists(m->handle) ? "still exists" : "is gone",
					  p, m->hist, line);
			}
		}
	}
	pthread_rwlock_unlock(&t->p->maplock);
}

/*
 * fork(): the child shares the mappings and the files. It touches the
 * mappings, maybe releases a region of the shared file, and exits; it
 * exits 3 if a released region's mapping did not fault.
 */
void op_fork(struct tctx *t)
{
	struct mapping ms[2];
	struct snap s;
	int nm = 0, i, status, release;
	__u64 rid = 0;
	pid_t pid;

	if (take_snap(t, rnd(&t->r, NR_SLOTS), &s))
		return;
	release = s.nregions && chance(&t->r, 25);
	if (release)
		rid = s.regions[rnd(&t->r, s.nregions)].id;
	pthread_rwlock_rdlock(&t->p->maplock);
	for (i = 0; i < 2 && t->p->nmaps; i++)
		ms[nm++] = t->p->maps[rnd(&t->r, t->p->nmaps)];
	for (i = 0; i < nm; i++)
		ms[i].released = __atomic_load_n(&ms[i].released, __ATOMIC_ACQUIRE);
	pid = fork();
	if (pid == 0) {
		struct flex_region_release rel = { .region_id = rid };
		struct rng r = { t->r.s ^ 0x5bd1e995 };
		int bad = 0, k;

		for (i = 0; i < nm; i++) {
			if (!(ms[i].prot & PROT_READ))
				continue;
			for (k = 0; k < 4; k++) {
				unsigned char *p = ms[i].addr + rnd(&r, ms[i].len);
				int f = touch(p, ms[i].prot & PROT_WRITE);

				if (ms[i].released && !f)
					bad = 1;
			}
		}
		if (release && !ioctl(s.fd, FLEX_IOCTL_REGION_RELEASE, &rel))
			count(&sh->ioctls, 1);
		_exit(bad ? 3 : 0);
	}
	pthread_rwlock_unlock(&t->p->maplock);
	if (pid < 0)
		return;
	count(&sh->forks, 1);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(status))
		violation(t, &sh->bad_fork, "fork child touching %d mappings died of signal %s, "
			  "expected exit 0", nm, sigabbrev_np(WTERMSIG(status)) ?: "?");
	else if (WEXITSTATUS(status) == 3)
		violation(t, &sh->bad_sigbus, "fork child: a touch of a released region's "
			  "mapping did not raise SIGBUS");
}
