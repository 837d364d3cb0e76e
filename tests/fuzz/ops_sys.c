// SPDX-License-Identifier: GPL-2.0
/*
 * flex_fuzz: files. Opening the device nodes into a worker's slots,
 * closing one while the other threads use it and reopening it, reading
 * sysfs and debugfs (region directories come and go under the reader),
 * pausing the engines, and writing sriov_numvfs while the VFs are in use.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"

/* Opens slot @slot on the PF or a VF; the slot's model starts empty. */
int slot_open(struct tctx *t, int slot)
{
	struct slot *sl = &t->p->slots[slot];
	char path[64];
	int node = 0, fd;

	if (sh->nr_vfs && chance(&t->r, 60))
		node = 1 + rnd(&t->r, sh->nr_vfs);
	if (node)
		snprintf(path, sizeof(path), "%svf%d", FLEX_DEV, node - 1);
	else
		snprintf(path, sizeof(path), "%s", FLEX_DEV);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && node) {	/* the VFs are being toggled */
		node = 0;
		fd = open(FLEX_DEV, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0) {
		violation(t, &sh->bad_internal, "open %s: %s", FLEX_DEV, strerror(errno));
		return -1;
	}
	pthread_mutex_lock(&t->p->lock);
	sl->fd = fd;
	sl->node = node;
	sl->nregions = sl->nqueues = 0;
	pthread_mutex_unlock(&t->p->lock);
	return 0;
}

/*
 * close() of a file the other threads are using: their calls in flight
 * keep it alive; the next ones see a closed fd, or a reused one (they
 * notice by the slot's gen and do not judge the answer).
 */
void op_reopen(struct tctx *t)
{
	int slot = rnd(&t->r, NR_SLOTS), fd;

	pthread_mutex_lock(&t->p->lock);
	fd = t->p->slots[slot].fd;
	t->p->slots[slot].fd = -1;
	t->p->slots[slot].gen++;
	pthread_mutex_unlock(&t->p->lock);
	if (fd < 0)
		return;
	close(fd);
	slot_open(t, slot);
}

static void sysfs_bad(struct tctx *t, const char *path, int err)
{
	violation(t, &sh->bad_sysfs, "reading %s: errno %s, expected success (or ENOENT for "
		  "a region that went away)", path, errname(-err));
}

/* /proc/self/fdinfo of a slot's file: the driver's show_fdinfo. */
static void fdinfo(struct tctx *t)
{
	char path[64], buf[4096];
	struct snap s;
	int err;

	if (take_snap(t, rnd(&t->r, NR_SLOTS), &s))
		return;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", s.fd);
	err = sysfs_read(path, buf, sizeof(buf));
	if (snap_stale(t, &s))
		return;
	if (err)
		violation(t, &sh->bad_sysfs, "reading %s: errno %s, expected success", path,
			  errname(-err));
	else if (!strstr(buf, "flex-driver:"))
		violation(t, &sh->bad_sysfs, "%s has no flex-driver line (flex-* usage lines "
			  "expected, see uapi.rst)", path);
}

/*
 * A function's quota_capacity or quota_backing: a size (applies to later
 * acquisitions and touches), its default, or one the driver must refuse
 * (above the maximum, not a size). The supervisor restores the PF's; a
 * VF's goes with the VF.
 */
static void quota_write(struct tctx *t)
{
	static const char *const sizes[] = { "0", "2M", "16M", "64M", "1G", "64G" };
	struct rng *r = &t->r;
	char path[96], val[32], dflt[32];
	int backing = chance(r, 50), x = rnd(r, 100), err, expect = 0;

	if (sh->nr_vfs && chance(r, 60))
		snprintf(path, sizeof(path), FLEX_SYSFS "vf%d/%s", rnd(r, sh->nr_vfs),
			 backing ? "quota_backing" : "quota_capacity");
	else
		snprintf(path, sizeof(path), FLEX_SYSFS "/%s",
			 backing ? "quota_backing" : "quota_capacity");
	if (sysfs_read(FLEX_SYSFS "/backing_cap", dflt, sizeof(dflt)) || !backing)
		sysfs_read(FLEX_SYSFS "/capacity", dflt, sizeof(dflt));
	if (x < 45) {
		snprintf(val, sizeof(val), "%s", dflt);
	} else if (x < 85) {
		snprintf(val, sizeof(val), "%s", sizes[rnd(r, 6)]);
		if (backing && strtoull(val, NULL, 0) > 0 && val[strlen(val) - 1] == 'G')
			snprintf(val, sizeof(val), "%s", dflt);
	} else if (x < 93) {
		snprintf(val, sizeof(val), "%llu", strtoull(dflt, NULL, 0) + 1);
		expect = EINVAL;
	} else {
		snprintf(val, sizeof(val), "%s", chance(r, 50) ? "-1" : "lots");
		expect = EINVAL;
	}
	count(&sh->sysfs, 1);
	err = -sysfs_write(path, val);
	/* ENOENT: the VF went away (sriov_numvfs) meanwhile. */
	if (err != expect && err != ENOENT)
		violation(t, &sh->bad_sysfs, "writing %s to %s: errno %s, expected %s", val, path,
			  errname(err), errname(expect));
}

void op_sysfs(struct tctx *t)
{
	static const char *const dev_attrs[] = {
		"capacity", "used", "free", "resident", "backing_cap", "region_align",
		"sriov_totalvfs", "sriov_numvfs", "function", "table_size", "table_used",
		"quota_capacity", "quota_backing", "memory_used", "backing_used",
	};
	static const char *const region_attrs[] = {
		"size", "phys_addr", "region_id", "function", "lut_index", "owner_pid",
		"owner_comm", "resident",
	};
	struct rng *r = &t->r;
	char path[256], buf[4096];
	struct dirent *e;
	int err, n = 0, pick;
	DIR *d;

	count(&sh->sysfs, 1);
	switch (rnd(r, 6)) {
	case 4:	/* the fdinfo of a file the other threads are using */
		fdinfo(t);
		break;
	case 5:
		if (chance(r, 30))
			quota_write(t);
		break;
	case 0:
		snprintf(path, sizeof(path), FLEX_SYSFS "/%s",
			 dev_attrs[rnd(r, sizeof(dev_attrs) / sizeof(dev_attrs[0]))]);
		err = sysfs_read(path, buf, sizeof(buf));
		if (err)
			sysfs_bad(t, path, err);
		break;
	case 1:	/* a region directory, while regions come and go */
		d = opendir(FLEX_SYSFS "/regions");
		if (!d) {
			sysfs_bad(t, FLEX_SYSFS "/regions", -errno);
			break;
		}
		pick = rnd(r, 16);
		path[0] = '\0';
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			if (n++ <= pick)
				snprintf(path, sizeof(path), FLEX_SYSFS "/regions/%.64s/%s",
					 e->d_name, region_attrs[rnd(r, 8)]);
		}
		closedir(d);
		if (path[0]) {
			/* ENODEV: removed between open() and read() (kernfs). */
			err = sysfs_read(path, buf, sizeof(buf));
			if (err && err != -ENOENT && err != -ENODEV)
				sysfs_bad(t, path, err);
		}
		break;
	case 2:	/* a VF's attributes, while VFs may be toggled */
		snprintf(path, sizeof(path), FLEX_SYSFS "vf%d/%s", rnd(r, 4),
			 chance(r, 50) ? "table_used" : "function");
		err = sysfs_read(path, buf, sizeof(buf));
		if (err && err != -ENOENT && err != -ENODEV)
			sysfs_bad(t, path, err);
		break;
	default:
		if (chance(r, 50))
			snprintf(path, sizeof(path), FLEX_DEBUGFS "/%s",
				 chance(r, 50) ? "pinned_pages" : "engines_paused");
		else if (chance(r, 50))
			snprintf(path, sizeof(path), FLEX_DEBUGFS "/pf/table");
		else
			snprintf(path, sizeof(path), FLEX_DEBUGFS "/vf%d/table",
				 rnd(r, sh->nr_vfs + 1));
		err = sysfs_read(path, buf, sizeof(buf));
		if (err && err != -ENOENT)
			sysfs_bad(t, path, err);
		break;
	}
}

/* Hold every CB queued for a few ms: submissions fill queues, waits time out. */
void op_pause(struct tctx *t)
{
	count(&sh->sysfs, 2);
	if (sysfs_write(FLEX_DEBUGFS "/engines_paused", "1"))
		return;
	usleep(1000 + rnd(&t->r, 15000));
	sysfs_write(FLEX_DEBUGFS "/engines_paused", "0");
}

/*
 * sriov_numvfs while VFs are open: disabling is refused (EBUSY) as long as
 * a VF file is open; when it goes through, the VFs come back at once.
 */
void op_sriov(struct tctx *t)
{
	struct rng *r = &t->r;
	char val[32];
	const char *what;
	int err, x = rnd(r, 100), expect_fail = 0;

	if (!sh->nr_vfs)
		return;
	if (x < 50) {
		what = "0";
		snprintf(val, sizeof(val), "0");
	} else if (x < 75) {
		what = "the current count";
		snprintf(val, sizeof(val), "%d", sh->nr_vfs);
	} else if (x < 88) {
		what = "more than sriov_totalvfs";
		snprintf(val, sizeof(val), "%d", 17 + rnd(r, 100));
		expect_fail = ERANGE;
	} else {
		what = "garbage";
		snprintf(val, sizeof(val), "%s", chance(r, 50) ? "-1" : "x1");
		expect_fail = EINVAL;
	}
	count(&sh->sysfs, 1);
	err = -sysfs_write(FLEX_SYSFS "/sriov_numvfs", val);
	if (expect_fail && err != expect_fail && err != ERANGE && err != EINVAL)
		violation(t, &sh->bad_sysfs, "writing %s (%s) to sriov_numvfs: errno %s, "
			  "expected %s", what, val, errname(err), errname(expect_fail));
	else if (!expect_fail && err && err != EBUSY)
		violation(t, &sh->bad_sysfs, "writing %s (%s) to sriov_numvfs: errno %s, "
			  "expected 0 or EBUSY", what, val, errname(err));
	if (!err && !strcmp(val, "0")) {
		/* They went away: bring them back (another thread may first). */
		snprintf(val, sizeof(val), "%d", sh->nr_vfs);
		count(&sh->sysfs, 1);
		err = -sysfs_write(FLEX_SYSFS "/sriov_numvfs", val);
		if (err && err != EBUSY)
			violation(t, &sh->bad_sysfs, "re-enabling %d VFs: errno %s, expected 0 or "
				  "EBUSY", sh->nr_vfs, errname(err));
	}
}
