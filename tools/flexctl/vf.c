// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl vf: SR-IOV virtual functions, the way Linux enables them: through
 * the sriov_totalvfs / sriov_numvfs attributes of the PF
 * (Documentation/ABI/testing/sysfs-class-flex), as for a PCI device.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "flexctl.h"

static const struct column vf_cols[] = {
	{ "name", "FUNCTION", COL_STR },
	{ "device", "DEV", COL_INT },
	{ "vf", "VF", COL_INT },
	{ "table_size", "TABLE", COL_INT },
	{ "table_used", "USED", COL_INT },
};

/* One device's SR-IOV state: { device, total_vfs, num_vfs, vfs: [...] }. */
static int vf_state(struct flexctl *c, unsigned int dev, struct json_object **out)
{
	uint64_t total, num, v;
	struct json_object *o, *vfs;
	int err;

	err = sysfs_read_u64(c, &total, "class/flex/flex%u/sriov_totalvfs", dev);
	if (!err)
		err = sysfs_read_u64(c, &num, "class/flex/flex%u/sriov_numvfs", dev);
	if (err)
		return err;
	o = json_object_new_object();
	vfs = json_object_new_array();
	tool_jset_int(o, "device", dev);
	tool_jset_int(o, "total_vfs", total);
	tool_jset_int(o, "num_vfs", num);
	for (uint64_t i = 0; i < num; i++) {
		struct json_object *vf = json_object_new_object();
		char name[32];

		snprintf(name, sizeof(name), "flex%uvf%llu", dev, (unsigned long long)i);
		tool_jset_str(vf, "name", name);
		tool_jset_int(vf, "device", dev);
		tool_jset_int(vf, "vf", i);
		if (!sysfs_read_u64(c, &v, "class/flex/%s/table_size", name))
			tool_jset_int(vf, "table_size", v);
		if (!sysfs_read_u64(c, &v, "class/flex/%s/table_used", name))
			tool_jset_int(vf, "table_used", v);
		json_object_array_add(vfs, vf);
	}
	json_object_object_add(o, "vfs", vfs);
	*out = o;
	return 0;
}

static int vf_show(struct flexctl *c, unsigned int dev)
{
	struct json_object *st;
	int err = vf_state(c, dev, &st);

	if (err)
		return ctl_error(c, "reading the SR-IOV state of flex%u: %s", dev, strerror(-err));
	if (c->json) {
		out_json(c, st);
	} else {
		fprintf(c->out, "flex%u: %lld of %lld VFs enabled\n", dev,
			(long long)tool_jint(st, "num_vfs", 0), (long long)tool_jint(st, "total_vfs", 0));
		if (tool_jint(st, "num_vfs", 0))
			out_table(c, json_object_object_get(st, "vfs"), vf_cols,
				  sizeof(vf_cols) / sizeof(vf_cols[0]));
	}
	json_object_put(st);
	return 0;
}

static int vf_set(struct flexctl *c, unsigned int dev, uint64_t n)
{
	uint64_t total = 0, cur = 0;
	char val[24];
	int err;

	sysfs_read_u64(c, &total, "class/flex/flex%u/sriov_totalvfs", dev);
	sysfs_read_u64(c, &cur, "class/flex/flex%u/sriov_numvfs", dev);
	if (n > total)
		return ctl_error(c, "flex%u supports %llu VFs, cannot enable %llu (module parameter total_vfs)",
				 dev, (unsigned long long)total, (unsigned long long)n);
	if (n && cur == n)
		return vf_show(c, dev);
	if (n && cur)
		return ctl_error(c, "flex%u has %llu VFs enabled; the count can only change through 0: "
				 "run `flexctl vf disable` first", dev, (unsigned long long)cur);
	snprintf(val, sizeof(val), "%llu", (unsigned long long)n);
	err = sysfs_write_str(c, val, "class/flex/flex%u/sriov_numvfs", dev);
	if (err == -EACCES || err == -EPERM)
		return ctl_error(c, "permission denied writing %s/class/flex/flex%u/sriov_numvfs: "
				 "changing VFs needs root (CAP_SYS_ADMIN)", c->sysfs_root, dev);
	if (err == -EBUSY && !n)
		return ctl_error(c, "cannot disable the VFs of flex%u: a VF device node "
				 "(/dev/flex%uvf*) is open; close it first", dev, dev);
	if (err)
		return ctl_error(c, "writing %s to %s/class/flex/flex%u/sriov_numvfs: %s", val,
				 c->sysfs_root, dev, strerror(-err));
	return vf_show(c, dev);
}

int cmd_vf(struct flexctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		CTL_COMMON_LONGOPTS,
		{ 0 }
	};
	unsigned int dev = 0;
	const char *action;
	uint64_t n;
	int opt, err;

	while ((opt = getopt_long(argc, argv, "d:hj", opts, NULL)) != -1) {
		if (ctl_common_opt(c, opt))
			continue;
		switch (opt) {
		case 'd':
			if (ctl_parse_u64(optarg, &n) || n > 255)
				return ctl_usage_error(c, "vf", "bad device number '%s'", optarg);
			dev = n;
			break;
		default:
			return ctl_usage_error(c, "vf", "unknown option");
		}
	}
	action = optind < argc ? argv[optind++] : "show";
	err = ctl_need_device(c, dev);
	if (err)
		return err;
	if (!strcmp(action, "show")) {
		if (optind != argc)
			return ctl_usage_error(c, "vf", "`vf show` takes no argument");
		return vf_show(c, dev);
	}
	if (!strcmp(action, "enable")) {
		if (optind != argc - 1)
			return ctl_usage_error(c, "vf", "`vf enable` needs the number of VFs");
		if (ctl_parse_u64(argv[optind], &n) || n == 0)
			return ctl_usage_error(c, "vf", "bad VF count '%s' (a number from 1 to sriov_totalvfs)",
					       argv[optind]);
		return vf_set(c, dev, n);
	}
	if (!strcmp(action, "disable")) {
		if (optind != argc)
			return ctl_usage_error(c, "vf", "`vf disable` takes no argument");
		return vf_set(c, dev, 0);
	}
	return ctl_usage_error(c, "vf", "unknown action '%s' (show, enable N, disable)", action);
}
