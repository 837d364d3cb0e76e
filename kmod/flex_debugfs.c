// SPDX-License-Identifier: GPL-2.0
/*
 * flex debugfs: the lookup tables, for people and tests.
 *
 *   /sys/kernel/debug/flex/flexN/<pf|vfM>/table
 *
 * one line per live entry: "<region_id> <phys> <size> <handle> <pid> <comm>",
 * in table order (VF: the index; PF: the physical address). And, for tests:
 *
 *   /sys/kernel/debug/flex/flexN/engines_paused  1 holds every CB queued
 *                                               (with the test_hooks parameter)
 *   /sys/kernel/debug/flex/flexN/pinned_pages    user pages pinned for DMA
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "flex_drv.h"

static struct dentry *flex_debugfs_root;

static int table_show(struct seq_file *m, void *unused)
{
	struct flex_fn *fn = m->private;
	struct flex_region *r;
	unsigned long key;

	seq_printf(m, "# %s: %u of %u entries used\n", fn->name,
		   READ_ONCE(fn->nr_regions), fn->table_size);
	seq_puts(m, "# region_id phys size handle pid comm\n");
	mutex_lock(&fn->fdev->lock);
	xa_for_each(&fn->table, key, r)
		seq_printf(m, "0x%llx 0x%llx %llu %u %d %s\n", r->region_id,
			   r->phys, r->size, r->handle, r->owner_tgid,
			   r->owner_comm);
	mutex_unlock(&fn->fdev->lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(table);

static int engines_paused_get(void *data, u64 *val)
{
	struct flex_device *fdev = data;

	*val = READ_ONCE(fdev->engines_paused);
	return 0;
}

static int engines_paused_set(void *data, u64 val)
{
	flex_sched_pause(data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(engines_paused_fops, engines_paused_get,
			 engines_paused_set, "%llu\n");

static int pinned_pages_get(void *data, u64 *val)
{
	struct flex_device *fdev = data;

	*val = atomic64_read(&fdev->pinned_pages);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(pinned_pages_fops, pinned_pages_get, NULL, "%llu\n");

void flex_debugfs_init(void)
{
	flex_debugfs_root = debugfs_create_dir(FLEX_DRV_NAME, NULL);
}

void flex_debugfs_fini(void)
{
	debugfs_remove_recursive(flex_debugfs_root);
}

void flex_debugfs_device_add(struct flex_device *fdev)
{
	char name[16];

	snprintf(name, sizeof(name), "flex%u", fdev->index);
	fdev->debugfs = debugfs_create_dir(name, flex_debugfs_root);
	/* Holding every CB back is for tests only: see flex_params.test_hooks. */
	if (flex_params.test_hooks)
		debugfs_create_file_unsafe("engines_paused", 0644, fdev->debugfs, fdev,
					   &engines_paused_fops);
	debugfs_create_file_unsafe("pinned_pages", 0444, fdev->debugfs, fdev,
				   &pinned_pages_fops);
}

void flex_debugfs_device_remove(struct flex_device *fdev)
{
	debugfs_remove_recursive(fdev->debugfs);
}

void flex_debugfs_fn_add(struct flex_fn *fn)
{
	fn->debugfs = debugfs_create_dir(fn->name, fn->fdev->debugfs);
	debugfs_create_file("table", 0444, fn->debugfs, fn, &table_fops);
}

void flex_debugfs_fn_remove(struct flex_fn *fn)
{
	debugfs_remove_recursive(fn->debugfs);
	fn->debugfs = NULL;
}
