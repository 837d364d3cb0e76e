// SPDX-License-Identifier: GPL-2.0
/*
 * flex_canary: commits one deliberate kernel bug on request, so that
 * tests/canary/run can prove the debug-kernel lane (tools/flex-vm
 * --kernel-build) catches each kind. Load it only inside that VM:
 *
 *   insmod flex_canary.ko bug=NAME
 *
 * NAME is one of canary_bugs[] below; "none" (the default) commits nothing,
 * the control case. The bug is committed once, during module init, which
 * then succeeds so that rmmod works and the run ends normally. Every bug is
 * contained: the detector reports it and the kernel keeps running.
 */
#include <linux/compiler.h>
#include <linux/dma-fence.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/kfence.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

/*
 * Larger than a page: KFENCE samples only allocations up to a page, so the
 * heap bugs below always reach KASAN, whose report is then deterministic.
 */
#define CANARY_SIZE	(PAGE_SIZE + 128)
/*
 * Several leaked objects: a stale copy of the last pointer may linger on a
 * stack that kmemleak scans, but not of all of them.
 */
#define CANARY_LEAKS	4
/* A size KFENCE does sample. */
#define CANARY_SMALL	32
/* How long to wait for KFENCE to hand out a sampled object. */
#define CANARY_KFENCE_WAIT	(20 * HZ)

static char *bug = "none";
module_param(bug, charp, 0444);
MODULE_PARM_DESC(bug, "bug to commit at load: none, oob, uaf, leak, lockorder, atomic_sleep, shift, kfence, fence_alloc");

static DEFINE_MUTEX(canary_a);
static DEFINE_MUTEX(canary_b);
static DEFINE_SPINLOCK(canary_lock);

/* KASAN: slab-out-of-bounds (a write one byte past a kmalloc'ed buffer). */
static noinline int flex_canary_oob(void)
{
	size_t end = CANARY_SIZE;
	char *buf = kmalloc(CANARY_SIZE, GFP_KERNEL);

	if (!buf)
		return -ENOMEM;
	OPTIMIZER_HIDE_VAR(end);	/* no compile-time bounds warning */
	WRITE_ONCE(buf[end], 1);
	kfree(buf);
	return 0;
}

/* KASAN: use-after-free (a read, so freed memory is not corrupted). */
static noinline int flex_canary_uaf(void)
{
	char *buf = kmalloc(CANARY_SIZE, GFP_KERNEL);

	if (!buf)
		return -ENOMEM;
	kfree(buf);
	OPTIMIZER_HIDE_VAR(buf);	/* no compile-time use-after-free warning */
	pr_info("flex_canary: freed byte reads %d\n", READ_ONCE(buf[0]));
	return 0;
}

/* kmemleak: unreferenced objects (no pointer to them is kept anywhere). */
static noinline int flex_canary_leak(void)
{
	int i;

	for (i = 0; i < CANARY_LEAKS; i++)
		if (!kmalloc(CANARY_SIZE, GFP_KERNEL))
			return -ENOMEM;
	return 0;
}

/*
 * lockdep: possible circular locking dependency. One thread takes A then B,
 * later B then A: no deadlock happens here, but two threads doing this
 * would deadlock, and lockdep reports the second order.
 */
static noinline int flex_canary_lockorder(void)
{
	mutex_lock(&canary_a);
	mutex_lock(&canary_b);
	mutex_unlock(&canary_b);
	mutex_unlock(&canary_a);

	mutex_lock(&canary_b);
	mutex_lock(&canary_a);
	mutex_unlock(&canary_a);
	mutex_unlock(&canary_b);
	return 0;
}

/*
 * DEBUG_ATOMIC_SLEEP: sleeping function called from invalid context. The
 * usual driver form of the bug: a GFP_KERNEL allocation (which may sleep,
 * so might_sleep() checks it) under a spinlock.
 */
static noinline int flex_canary_atomic_sleep(void)
{
	void *p;

	spin_lock(&canary_lock);
	p = kmalloc(CANARY_SMALL, GFP_KERNEL);
	spin_unlock(&canary_lock);
	kfree(p);
	return 0;
}

/* UBSAN: shift-out-of-bounds (an int shifted by more than its width). */
static noinline int flex_canary_shift(void)
{
	unsigned int count = 40;
	int one = 1;

	OPTIMIZER_HIDE_VAR(count);	/* no compile-time shift warning */
	pr_info("flex_canary: 1 << %u = %d\n", count, one << count);
	return 0;
}

/*
 * KFENCE: out-of-bounds write (or, when the object sits at the start of its
 * page, the corruption found when it is freed). KFENCE hands out one
 * sampled object per interval, so allocate until one comes.
 */
/*
 * lockdep: an allocation that may wait for reclaim on the fence-signalling
 * path (dma_fence_begin_signalling()), which the flex engines must never
 * make: reclaim may wait for the very fence being signalled.
 */
static noinline int flex_canary_fence_alloc(void)
{
	bool cookie = dma_fence_begin_signalling();
	void *p = kmalloc(CANARY_SMALL, GFP_KERNEL);

	dma_fence_end_signalling(cookie);
	kfree(p);
	return 0;
}

static noinline int flex_canary_kfence(void)
{
	unsigned long deadline = jiffies + CANARY_KFENCE_WAIT;
	size_t end = CANARY_SMALL;
	char *buf;

	for (;;) {
		buf = kmalloc(CANARY_SMALL, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
		if (is_kfence_address(buf))
			break;
		kfree(buf);
		if (time_after(jiffies, deadline)) {
			pr_err("flex_canary: no KFENCE object in %u s (is KFENCE on?)\n",
			       CANARY_KFENCE_WAIT / HZ);
			return -ETIMEDOUT;
		}
		cond_resched();
	}
	OPTIMIZER_HIDE_VAR(end);
	WRITE_ONCE(buf[end], 1);
	kfree(buf);
	return 0;
}

static const struct {
	const char *name;
	int (*commit)(void);	/* NULL: the control, no bug */
} canary_bugs[] = {
	{ "none", NULL },
	{ "oob", flex_canary_oob },
	{ "uaf", flex_canary_uaf },
	{ "leak", flex_canary_leak },
	{ "lockorder", flex_canary_lockorder },
	{ "atomic_sleep", flex_canary_atomic_sleep },
	{ "shift", flex_canary_shift },
	{ "kfence", flex_canary_kfence },
	{ "fence_alloc", flex_canary_fence_alloc },
};

static int __init flex_canary_init(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(canary_bugs); i++) {
		if (!sysfs_streq(bug, canary_bugs[i].name))
			continue;
		pr_info("flex_canary: committing bug '%s'\n", bug);
		return canary_bugs[i].commit ? canary_bugs[i].commit() : 0;
	}
	pr_err("flex_canary: unknown bug '%s'\n", bug);
	return -EINVAL;
}

static void __exit flex_canary_exit(void)
{
}

module_init(flex_canary_init);
module_exit(flex_canary_exit);
MODULE_DESCRIPTION("flex debug-lane canary: commits one kernel bug on request");
MODULE_LICENSE("GPL");
