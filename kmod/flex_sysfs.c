// SPDX-License-Identifier: GPL-2.0
/*
 * flex sysfs: device attributes, SR-IOV controls and regions/.
 * Documented in Documentation/ABI/testing/sysfs-class-flex.
 *
 * One value per file. No show() takes flex_device.lock: region directories
 * are removed under that lock, and kernfs waits for readers of a node being
 * removed, so a reader blocking on the lock would deadlock the remover.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/kobject.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "flex_drv.h"

static struct flex_device *dev_to_fdev(struct device *dev)
{
	return to_flex_fn(dev)->fdev;
}

static ssize_t capacity_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%llu\n", dev_to_fdev(dev)->mem.capacity);
}
static DEVICE_ATTR_RO(capacity);

static ssize_t used_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  (s64)atomic64_read(&dev_to_fdev(dev)->mem.used));
}
static DEVICE_ATTR_RO(used);

static ssize_t free_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%llu\n", flex_mem_free_bytes(&dev_to_fdev(dev)->mem));
}
static DEVICE_ATTR_RO(free);

static ssize_t resident_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	s64 pages = atomic64_read(&dev_to_fdev(dev)->mem.resident_pages);

	return sysfs_emit(buf, "%llu\n", (u64)pages << PAGE_SHIFT);
}
static DEVICE_ATTR_RO(resident);

static ssize_t backing_cap_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  dev_to_fdev(dev)->mem.backing_cap_pages << PAGE_SHIFT);
}
static DEVICE_ATTR_RO(backing_cap);

static ssize_t region_align_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", FLEX_REGION_ALIGN);
}
static DEVICE_ATTR_RO(region_align);

static ssize_t sriov_totalvfs_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_to_fdev(dev)->total_vfs);
}
static DEVICE_ATTR_RO(sriov_totalvfs);

static ssize_t sriov_numvfs_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(dev_to_fdev(dev)->num_vfs));
}

static ssize_t sriov_numvfs_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	unsigned int n;
	int err;

	err = kstrtouint(buf, 0, &n);
	if (err)
		return err;
	err = flex_sriov_configure(dev_to_fdev(dev), n);
	return err ? err : count;
}
static DEVICE_ATTR_RW(sriov_numvfs);

/* Per function: PF and VFs alike. */
static ssize_t function_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%s\n", to_flex_fn(dev)->name);
}
static DEVICE_ATTR_RO(function);

static ssize_t table_size_show(struct device *dev, struct device_attribute *attr,
			       char *buf)
{
	return sysfs_emit(buf, "%u\n", to_flex_fn(dev)->table_size);
}
static DEVICE_ATTR_RO(table_size);

static ssize_t table_used_show(struct device *dev, struct device_attribute *attr,
			       char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_flex_fn(dev)->nr_regions));
}
static DEVICE_ATTR_RO(table_used);

/*
 * Quotas, set by the administrator (the files are root's): how much device
 * memory the function's regions may hold, and how much host memory may
 * back them. They apply to later acquisitions and touches; usage above a
 * lowered quota stays until freed. K/M/G/T suffixes are accepted.
 */
static int parse_quota(const char *buf, u64 max, u64 *out)
{
	char *end;
	u64 v = memparse(buf, &end);

	if (end == buf || (*end && *end != '\n') || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static ssize_t quota_capacity_show(struct device *dev, struct device_attribute *attr,
				   char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(to_flex_fn(dev)->quota_capacity));
}

static ssize_t quota_capacity_store(struct device *dev, struct device_attribute *attr,
				    const char *buf, size_t count)
{
	struct flex_fn *fn = to_flex_fn(dev);
	u64 v;
	int err = parse_quota(buf, fn->fdev->mem.capacity, &v);

	if (err)
		return err;
	WRITE_ONCE(fn->quota_capacity, v);
	return count;
}
static DEVICE_ATTR_RW(quota_capacity);

static ssize_t quota_backing_show(struct device *dev, struct device_attribute *attr,
				  char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(to_flex_fn(dev)->quota_backing));
}

static ssize_t quota_backing_store(struct device *dev, struct device_attribute *attr,
				   const char *buf, size_t count)
{
	struct flex_fn *fn = to_flex_fn(dev);
	u64 v;
	int err = parse_quota(buf, fn->fdev->mem.backing_cap_pages << PAGE_SHIFT, &v);

	if (err)
		return err;
	WRITE_ONCE(fn->quota_backing, v);
	return count;
}
static DEVICE_ATTR_RW(quota_backing);

static ssize_t memory_used_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	return sysfs_emit(buf, "%llu\n", READ_ONCE(to_flex_fn(dev)->used));
}
static DEVICE_ATTR_RO(memory_used);

static ssize_t backing_used_show(struct device *dev, struct device_attribute *attr,
				 char *buf)
{
	s64 pages = atomic64_read(&to_flex_fn(dev)->resident_pages);

	return sysfs_emit(buf, "%llu\n", (u64)pages << PAGE_SHIFT);
}
static DEVICE_ATTR_RO(backing_used);

static struct attribute *flex_fn_attrs[] = {
	&dev_attr_function.attr,
	&dev_attr_table_size.attr,
	&dev_attr_table_used.attr,
	&dev_attr_quota_capacity.attr,
	&dev_attr_quota_backing.attr,
	&dev_attr_memory_used.attr,
	&dev_attr_backing_used.attr,
	NULL,
};

static const struct attribute_group flex_fn_group = {
	.attrs = flex_fn_attrs,
};

static struct attribute *flex_pf_attrs[] = {
	&dev_attr_capacity.attr,
	&dev_attr_used.attr,
	&dev_attr_free.attr,
	&dev_attr_resident.attr,
	&dev_attr_backing_cap.attr,
	&dev_attr_region_align.attr,
	&dev_attr_sriov_totalvfs.attr,
	&dev_attr_sriov_numvfs.attr,
	NULL,
};

static const struct attribute_group flex_pf_group = {
	.attrs = flex_pf_attrs,
};

const struct attribute_group *flex_pf_groups[] = {
	&flex_pf_group,
	&flex_fn_group,
	NULL,
};

const struct attribute_group *flex_vf_groups[] = {
	&flex_fn_group,
	NULL,
};

/* SR-IOV style links: flexN/virtfnM -> flexNvfM, flexNvfM/physfn -> flexN. */
int flex_sysfs_link_vf(struct flex_fn *vf)
{
	struct flex_fn *pf = vf->fdev->pf;
	char name[16];
	int err;

	err = sysfs_create_link(&vf->dev.kobj, &pf->dev.kobj, "physfn");
	if (err)
		return err;
	snprintf(name, sizeof(name), "virtfn%u", vf->vf_index);
	err = sysfs_create_link(&pf->dev.kobj, &vf->dev.kobj, name);
	if (err)
		sysfs_remove_link(&vf->dev.kobj, "physfn");
	return err;
}

void flex_sysfs_unlink_vf(struct flex_fn *vf)
{
	char name[16];

	snprintf(name, sizeof(name), "virtfn%u", vf->vf_index);
	sysfs_remove_link(&vf->fdev->pf->dev.kobj, name);
	sysfs_remove_link(&vf->dev.kobj, "physfn");
}

/* regions/<handle>/: one directory per live region of the device. */

struct flex_region_attribute {
	struct attribute attr;
	ssize_t (*show)(struct flex_region *r, char *buf);
};

#define to_region(k) container_of(k, struct flex_region, kobj)

static ssize_t region_attr_show(struct kobject *kobj, struct attribute *attr,
				char *buf)
{
	struct flex_region_attribute *ra =
		container_of(attr, struct flex_region_attribute, attr);

	return ra->show(to_region(kobj), buf);
}

static const struct sysfs_ops flex_region_sysfs_ops = {
	.show = region_attr_show,
};

/* Per-tenant detail: for root only (an owner has its fdinfo). */
#define REGION_ATTR(_name)						\
	static struct flex_region_attribute region_attr_##_name =	\
		{ .attr = { .name = __stringify(_name), .mode = 0400 },	\
		  .show = region_##_name##_show }

static ssize_t region_size_show(struct flex_region *r, char *buf)
{
	return sysfs_emit(buf, "%llu\n", r->size);
}
REGION_ATTR(size);

static ssize_t region_phys_addr_show(struct flex_region *r, char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", r->phys);
}
REGION_ATTR(phys_addr);

static ssize_t region_region_id_show(struct flex_region *r, char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", r->region_id);
}
REGION_ATTR(region_id);

static ssize_t region_function_show(struct flex_region *r, char *buf)
{
	return sysfs_emit(buf, "%s\n", r->fn->name);
}
REGION_ATTR(function);

static ssize_t region_lut_index_show(struct flex_region *r, char *buf)
{
	if (r->lut_index == FLEX_NO_LUT_INDEX)
		return sysfs_emit(buf, "none\n");
	return sysfs_emit(buf, "%u\n", r->lut_index);
}
REGION_ATTR(lut_index);

static ssize_t region_owner_pid_show(struct flex_region *r, char *buf)
{
	return sysfs_emit(buf, "%d\n", r->owner_tgid);
}
REGION_ATTR(owner_pid);

static ssize_t region_owner_comm_show(struct flex_region *r, char *buf)
{
	return sysfs_emit(buf, "%s\n", r->owner_comm);
}
REGION_ATTR(owner_comm);

static ssize_t region_resident_show(struct flex_region *r, char *buf)
{
	return sysfs_emit(buf, "%llu\n",
			  flex_mem_resident(&r->fdev->mem, r->phys, r->size));
}
REGION_ATTR(resident);

static struct attribute *flex_region_attrs[] = {
	&region_attr_size.attr,
	&region_attr_phys_addr.attr,
	&region_attr_region_id.attr,
	&region_attr_function.attr,
	&region_attr_lut_index.attr,
	&region_attr_owner_pid.attr,
	&region_attr_owner_comm.attr,
	&region_attr_resident.attr,
	NULL,
};
ATTRIBUTE_GROUPS(flex_region);

static void flex_region_kobj_release(struct kobject *kobj)
{
	kfree(to_region(kobj));
}

const struct kobj_type flex_region_ktype = {
	.release = flex_region_kobj_release,
	.sysfs_ops = &flex_region_sysfs_ops,
	.default_groups = flex_region_groups,
};
