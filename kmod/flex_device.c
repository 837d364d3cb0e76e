// SPDX-License-Identifier: GPL-2.0
/*
 * flex devices and their functions: the PF, and VFs enabled through
 * sriov_numvfs following the PCI SR-IOV conventions (0 disables, a change
 * between two non-zero counts is -EBUSY, above sriov_totalvfs is -ERANGE,
 * disabling while a VF is open is -EBUSY).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/slab.h>

#include "flex_drv.h"

static void flex_fn_release(struct device *dev)
{
	struct flex_fn *fn = to_flex_fn(dev);

	WARN_ON(!xa_empty(&fn->table));
	xa_destroy(&fn->table);
	kfree(fn);
}

static const struct device_type flex_pf_type = {
	.name = "flex_pf",
	.groups = flex_pf_groups,
};

static const struct device_type flex_vf_type = {
	.name = "flex_vf",
	.groups = flex_vf_groups,
};

/* Creates the function's struct device and device node. */
static struct flex_fn *flex_fn_create(struct flex_device *fdev, bool is_vf,
				      unsigned int vf_index)
{
	struct flex_fn *fn;
	int err, i;

	fn = kzalloc(sizeof(*fn), GFP_KERNEL);
	if (!fn)
		return ERR_PTR(-ENOMEM);
	fn->fdev = fdev;
	fn->is_vf = is_vf;
	fn->quota_capacity = fdev->mem.capacity;
	fn->quota_backing = fdev->mem.backing_cap_pages << PAGE_SHIFT;
	atomic64_set(&fn->resident_pages, 0);
	for (i = 0; i < FLEX_NR_ENGINES * FLEX_NR_PRIORITIES; i++) {
		INIT_LIST_HEAD(&fn->ready[i / FLEX_NR_PRIORITIES][i % FLEX_NR_PRIORITIES]);
		INIT_LIST_HEAD(&fn->ready_link[i / FLEX_NR_PRIORITIES][i % FLEX_NR_PRIORITIES]);
	}
	fn->vf_index = vf_index;
	if (is_vf) {
		xa_init_flags(&fn->table, XA_FLAGS_ALLOC);
		fn->table_size = flex_params.lut_entries;
		snprintf(fn->name, sizeof(fn->name), "vf%u", vf_index);
	} else {
		xa_init(&fn->table);
		fn->table_size = flex_params.pf_max_regions;
		strscpy(fn->name, "pf", sizeof(fn->name));
	}

	device_initialize(&fn->dev);
	fn->dev.class = flex_class;
	fn->dev.type = is_vf ? &flex_vf_type : &flex_pf_type;
	fn->dev.parent = is_vf ? &fdev->pf->dev : NULL;
	fn->dev.devt = fdev->devt + (is_vf ? 1 + vf_index : 0);
	fn->dev.release = flex_fn_release;
	dev_set_drvdata(&fn->dev, fn);
	if (is_vf)
		err = dev_set_name(&fn->dev, "flex%uvf%u", fdev->index, vf_index);
	else
		err = dev_set_name(&fn->dev, "flex%u", fdev->index);
	if (err)
		goto err_put;

	cdev_init(&fn->cdev, &flex_fops);
	fn->cdev.owner = THIS_MODULE;
	err = cdev_device_add(&fn->cdev, &fn->dev);
	if (err)
		goto err_put;
	return fn;

err_put:
	put_device(&fn->dev);
	return ERR_PTR(err);
}

static void flex_fn_destroy(struct flex_fn *fn)
{
	flex_debugfs_fn_remove(fn);
	cdev_device_del(&fn->cdev, &fn->dev);
	put_device(&fn->dev);
}

static int flex_vfs_enable(struct flex_device *fdev, unsigned int num_vfs)
{
	struct flex_fn *vfs[FLEX_MAX_VFS];
	unsigned int i;
	int err;

	for (i = 0; i < num_vfs; i++) {
		vfs[i] = flex_fn_create(fdev, true, i);
		if (IS_ERR(vfs[i])) {
			err = PTR_ERR(vfs[i]);
			goto err_destroy;
		}
		err = flex_sysfs_link_vf(vfs[i]);
		if (err) {
			flex_fn_destroy(vfs[i]);
			goto err_destroy;
		}
		flex_debugfs_fn_add(vfs[i]);
	}

	mutex_lock(&fdev->lock);
	memcpy(fdev->vfs, vfs, num_vfs * sizeof(vfs[0]));
	fdev->num_vfs = num_vfs;
	mutex_unlock(&fdev->lock);
	return 0;

err_destroy:
	while (i--) {
		flex_sysfs_unlink_vf(vfs[i]);
		flex_fn_destroy(vfs[i]);
	}
	return err;
}

static int flex_vfs_disable(struct flex_device *fdev)
{
	struct flex_fn *vfs[FLEX_MAX_VFS];
	unsigned int i, n;

	mutex_lock(&fdev->lock);
	n = fdev->num_vfs;
	for (i = 0; i < n; i++) {
		if (fdev->vfs[i]->open_count) {
			mutex_unlock(&fdev->lock);
			return -EBUSY;
		}
	}
	/* From here no VF can be opened; remove them outside the lock. */
	for (i = 0; i < n; i++) {
		fdev->vfs[i]->gone = true;
		vfs[i] = fdev->vfs[i];
		fdev->vfs[i] = NULL;
	}
	fdev->num_vfs = 0;
	mutex_unlock(&fdev->lock);

	for (i = 0; i < n; i++) {
		flex_sysfs_unlink_vf(vfs[i]);
		flex_fn_destroy(vfs[i]);
	}
	return 0;
}

int flex_sriov_configure(struct flex_device *fdev, unsigned int num_vfs)
{
	unsigned int old_vfs;
	int err = 0;

	if (num_vfs > fdev->total_vfs)
		return -ERANGE;

	mutex_lock(&fdev->sriov_lock);
	old_vfs = fdev->num_vfs;	/* only sriov_lock holders change it */
	if (num_vfs == fdev->num_vfs)
		err = 0;
	else if (num_vfs == 0)
		err = flex_vfs_disable(fdev);
	else if (fdev->num_vfs)
		err = -EBUSY;
	else
		err = flex_vfs_enable(fdev, num_vfs);
	if (!err && num_vfs != old_vfs)
		flex_nl_vfs_event(fdev, num_vfs != 0, num_vfs ?: old_vfs);
	mutex_unlock(&fdev->sriov_lock);
	return err;
}

int flex_device_create(unsigned int index, dev_t devt, struct flex_device **out)
{
	struct flex_device *fdev;
	struct flex_fn *pf;
	int err;

	fdev = kzalloc(sizeof(*fdev), GFP_KERNEL);
	if (!fdev)
		return -ENOMEM;
	fdev->index = index;
	fdev->devt = devt;
	fdev->total_vfs = flex_params.total_vfs;
	mutex_init(&fdev->lock);
	mutex_init(&fdev->sriov_lock);
	xa_init_flags(&fdev->regions, XA_FLAGS_ALLOC1);
	xa_init_flags(&fdev->queues, XA_FLAGS_ALLOC1);
	INIT_LIST_HEAD(&fdev->files);
	mt_init(&fdev->by_offset);

	err = flex_mem_init(&fdev->mem, flex_params.capacity,
			    flex_params.backing_cap);
	if (err)
		goto err_free;
	fdev->scratch = flex_scratch_alloc();
	if (!fdev->scratch) {
		err = -ENOMEM;
		goto err_mem;
	}
	err = flex_sched_init(fdev);
	if (err)
		goto err_scratch;

	fdev->inode = flex_mapping_inode_new();
	if (IS_ERR(fdev->inode)) {
		err = PTR_ERR(fdev->inode);
		goto err_sched;
	}

	pf = flex_fn_create(fdev, false, 0);
	if (IS_ERR(pf)) {
		err = PTR_ERR(pf);
		goto err_inode;
	}
	fdev->pf = pf;

	fdev->regions_kobj = kobject_create_and_add("regions", &pf->dev.kobj);
	if (!fdev->regions_kobj) {
		err = -ENOMEM;
		goto err_pf;
	}

	flex_debugfs_device_add(fdev);
	flex_debugfs_fn_add(pf);
	*out = fdev;
	return 0;

err_pf:
	flex_fn_destroy(pf);
err_inode:
	flex_mapping_inode_put(fdev->inode);
err_sched:
	flex_sched_fini(fdev);
err_scratch:
	flex_scratch_free(fdev->scratch);
err_mem:
	flex_mem_fini(&fdev->mem);
err_free:
	kfree(fdev);
	return err;
}

/* Module exit: no file is open (each holds a module reference). */
void flex_device_destroy(struct flex_device *fdev)
{
	WARN_ON(flex_sriov_configure(fdev, 0));
	kobject_put(fdev->regions_kobj);
	flex_fn_destroy(fdev->pf);
	flex_debugfs_device_remove(fdev);
	flex_mapping_inode_put(fdev->inode);
	WARN_ON(!xa_empty(&fdev->regions));
	xa_destroy(&fdev->regions);
	WARN_ON(!xa_empty(&fdev->queues));
	xa_destroy(&fdev->queues);
	WARN_ON(!mtree_empty(&fdev->by_offset));
	mtree_destroy(&fdev->by_offset);
	flex_sched_fini(fdev);
	flex_scratch_free(fdev->scratch);
	flex_mem_fini(&fdev->mem);
	kfree(fdev);
}
