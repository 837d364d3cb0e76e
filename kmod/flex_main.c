// SPDX-License-Identifier: GPL-2.0
/*
 * flex: module entry, parameters and the device class.
 *
 * The defaults model one Spyre-like card: 128 GiB of device memory and
 * lookup tables of 8 entries per VF. Memory sizes accept K/M/G/T suffixes.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "flex_drv.h"

struct flex_params flex_params = {
	.num_devices = 1,
	.capacity = 128ULL << 30,
	.backing_cap = 512ULL << 20,
	.lut_entries = 8,
	.total_vfs = 4,
	.pf_max_regions = 64,
	.cb_timeout_ms = 30000,
	.engine_poll_us = 100,
};

static int param_set_memsize(const char *val, const struct kernel_param *kp)
{
	char *end;
	u64 v = memparse(val, &end);

	if (end == val || (*end && *end != '\n'))
		return -EINVAL;
	*(u64 *)kp->arg = v;
	return 0;
}

static int param_get_memsize(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%llu\n", *(u64 *)kp->arg);
}

static const struct kernel_param_ops param_ops_memsize = {
	.set = param_set_memsize,
	.get = param_get_memsize,
};

module_param_named(num_devices, flex_params.num_devices, uint, 0444);
MODULE_PARM_DESC(num_devices, "Number of flex devices (1-8, default 1)");
module_param_cb(capacity, &param_ops_memsize, &flex_params.capacity, 0444);
MODULE_PARM_DESC(capacity, "Device memory per device (64M-1T, multiple of 2M; default 128G)");
module_param_cb(backing_cap, &param_ops_memsize, &flex_params.backing_cap, 0444);
MODULE_PARM_DESC(backing_cap, "Most host memory backing one device's memory (default 512M)");
module_param_named(lut_entries, flex_params.lut_entries, uint, 0444);
MODULE_PARM_DESC(lut_entries, "Lookup-table entries per VF (1-64, default 8)");
module_param_named(total_vfs, flex_params.total_vfs, uint, 0444);
MODULE_PARM_DESC(total_vfs, "VFs each device supports (0-16, default 4)");
module_param_named(pf_max_regions, flex_params.pf_max_regions, uint, 0444);
MODULE_PARM_DESC(pf_max_regions, "Most regions the PF holds at once (1-1024, default 64)");

/* A writable parameter: a number from @min to @max, else -ERANGE. */
static int param_set_range(const char *val, const struct kernel_param *kp, unsigned int min,
			   unsigned int max)
{
	unsigned int v;
	int err = kstrtouint(val, 0, &v);

	if (err)
		return err;
	if (v < min || v > max)
		return -ERANGE;
	WRITE_ONCE(*(unsigned int *)kp->arg, v);
	return 0;
}

/* A CB's time limit; like amdgpu's lockup_timeout, it can be changed live. */
static int param_set_cb_timeout(const char *val, const struct kernel_param *kp)
{
	return param_set_range(val, kp, FLEX_CB_TIMEOUT_MIN_MS, FLEX_CB_TIMEOUT_MAX_MS);
}

static const struct kernel_param_ops param_ops_cb_timeout = {
	.set = param_set_cb_timeout,
	.get = param_get_uint,
};
module_param_cb(cb_timeout_ms, &param_ops_cb_timeout, &flex_params.cb_timeout_ms, 0644);
MODULE_PARM_DESC(cb_timeout_ms,
		 "Longest a CB may run before it faults with FLEX_FAULT_TIMEOUT (10-3600000 ms, default 30000)");

/* How long an engine that ran out of work polls for more (flex_sched.c). */
static int param_set_engine_poll(const char *val, const struct kernel_param *kp)
{
	return param_set_range(val, kp, 0, FLEX_ENGINE_POLL_MAX_US);
}

static const struct kernel_param_ops param_ops_engine_poll = {
	.set = param_set_engine_poll,
	.get = param_get_uint,
};
module_param_cb(engine_poll_us, &param_ops_engine_poll, &flex_params.engine_poll_us, 0644);
MODULE_PARM_DESC(engine_poll_us,
		 "How long an engine that runs out of work polls for more before it sleeps, while no other task wants the CPU (0-10000 us, 0 never; default 100)");

module_param_named(test_hooks, flex_params.test_hooks, bool, 0444);
MODULE_PARM_DESC(test_hooks,
		 "Test-only controls in debugfs (engines_paused); never set in production");

struct class *flex_class;
static dev_t flex_devt;
static struct flex_device *flex_devices[FLEX_MAX_DEVICES];

static int flex_check_params(void)
{
	const struct flex_params *p = &flex_params;

	if (p->num_devices < 1 || p->num_devices > FLEX_MAX_DEVICES)
		pr_err("num_devices must be 1-%d\n", FLEX_MAX_DEVICES);
	else if (p->capacity < FLEX_MIN_CAPACITY || p->capacity > FLEX_MAX_CAPACITY ||
		 p->capacity & (FLEX_REGION_ALIGN - 1))
		pr_err("capacity must be 64M-1T and a multiple of 2M\n");
	else if (p->backing_cap < PAGE_SIZE)
		pr_err("backing_cap must be at least one page\n");
	else if (p->lut_entries < 1 || p->lut_entries > FLEX_MAX_LUT_ENTRIES)
		pr_err("lut_entries must be 1-%d\n", FLEX_MAX_LUT_ENTRIES);
	else if (p->total_vfs > FLEX_MAX_VFS)
		pr_err("total_vfs must be 0-%d\n", FLEX_MAX_VFS);
	else if (p->pf_max_regions < 1 || p->pf_max_regions > FLEX_MAX_PF_REGIONS)
		pr_err("pf_max_regions must be 1-%d\n", FLEX_MAX_PF_REGIONS);
	else
		return 0;
	return -EINVAL;
}

static void flex_destroy_devices(void)
{
	unsigned int i;

	for (i = 0; i < FLEX_MAX_DEVICES; i++) {
		if (!flex_devices[i])
			continue;
		flex_nl_device_remove(flex_devices[i]);
		flex_device_destroy(flex_devices[i]);
		flex_devices[i] = NULL;
	}
}

static int __init flex_init(void)
{
	unsigned int i;
	int err;

	err = flex_check_params();
	if (err)
		return err;

	err = flex_job_cache_init();
	if (err)
		return err;

	/* Before the devices: their events need the family registered. */
	err = flex_nl_init();
	if (err)
		goto err_cache;

	err = alloc_chrdev_region(&flex_devt, 0,
				  flex_params.num_devices * FLEX_MINORS_PER_DEVICE,
				  FLEX_DRV_NAME);
	if (err)
		goto err_nl;

	flex_class = class_create(THIS_MODULE, FLEX_DRV_NAME);
	if (IS_ERR(flex_class)) {
		err = PTR_ERR(flex_class);
		goto err_chrdev;
	}
	flex_debugfs_init();

	for (i = 0; i < flex_params.num_devices; i++) {
		err = flex_device_create(i, flex_devt + i * FLEX_MINORS_PER_DEVICE,
					 &flex_devices[i]);
		if (err)
			goto err_devices;
		flex_nl_device_add(flex_devices[i]);
	}
	pr_info("%u device(s), %llu MiB each, %u VFs, %u table entries per VF\n",
		flex_params.num_devices, flex_params.capacity >> 20,
		flex_params.total_vfs, flex_params.lut_entries);
	return 0;

err_devices:
	flex_destroy_devices();
	flex_debugfs_fini();
	class_destroy(flex_class);
err_chrdev:
	unregister_chrdev_region(flex_devt,
				 flex_params.num_devices * FLEX_MINORS_PER_DEVICE);
err_nl:
	flex_nl_fini();
err_cache:
	flex_job_cache_fini();
	return err;
}

static void __exit flex_exit(void)
{
	flex_destroy_devices();
	flex_debugfs_fini();
	class_destroy(flex_class);
	unregister_chrdev_region(flex_devt,
				 flex_params.num_devices * FLEX_MINORS_PER_DEVICE);
	flex_nl_fini();
	flex_job_cache_fini();
}

module_init(flex_init);
module_exit(flex_exit);

MODULE_DESCRIPTION("flex: virtual accelerator memory and execution device");
MODULE_AUTHOR("The flex developers");
MODULE_LICENSE("GPL");
MODULE_VERSION("1.0");
