// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl memmap: the command around memmap.c. Reads the report, asks the
 * driver for the live region list (owners) unless told not to, and writes
 * the SVG; or, with --device and no report, draws that device's memory
 * from the driver's device and region lists.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <linux/flex_netlink.h>

#include "flexnl.h"
#include "memmap.h"

static int parse_function(const char *s)
{
	unsigned int vf;
	char tail;

	if (!strcmp(s, "pf"))
		return 0;
	return sscanf(s, "vf%u%c", &vf, &tail) == 1 ? 0 : -EINVAL;
}

/* --device N without a report: the device's memory, from netlink. */
static int device_memmap(struct flexctl *c, const struct memmap_opts *mo, const char *output)
{
	struct json_object *devs = NULL, *regions = NULL, *o;
	char err[512];
	FILE *f = NULL;
	int ret;

	ret = flexctl_nl_list(c, FLEX_CMD_DEVICE_GET, false, mo->device, &devs, err, sizeof(err));
	if (ret == -ENODEV)
		return ctl_error(c, "no such flex device: %d (%s)", mo->device, err);
	if (ret)
		return ctl_error(c, "asking the flex driver for device %d: %s", mo->device, err);
	ret = flexctl_nl_region_list(c, mo->device, &regions, err, sizeof(err));
	if (ret) {
		ret = ctl_error(c, "asking the flex driver for the regions of device %d: %s%s",
				mo->device, err, ret == -EPERM ? " (the region list is for admins: "
				"CAP_NET_ADMIN)" : "");
		goto out;
	}
	f = output ? fopen(output, "w") : c->out;
	if (!f) {
		ret = ctl_error(c, "cannot write %s: %s", output, strerror(errno));
		goto out;
	}
	ret = memmap_render_device_svg(json_object_array_get_idx(devs, 0), regions, mo, f, err,
				       sizeof(err));
	if (output && fclose(f) && !ret) {
		ret = -EIO;
		snprintf(err, sizeof(err), "writing %s failed", output);
	}
	if (ret) {
		ret = ctl_error(c, "device %d: %s", mo->device, err);
		goto out;
	}
	if (output) {
		o = json_object_new_object();
		tool_jset_int(o, "device", mo->device);
		tool_jset_str(o, "output", output);
		tool_jset_int(o, "regions", json_object_array_length(regions));
		if (c->json)
			out_json(c, o);
		else
			fprintf(c->out, "%s: device flex%d, %zu regions\n", output, mo->device,
				json_object_array_length(regions));
		json_object_put(o);
	}
out:
	json_object_put(regions);
	json_object_put(devs);
	return ret;
}

int cmd_memmap(struct flexctl *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "report", required_argument, NULL, 'n' },
		{ "regions", required_argument, NULL, 'r' },
		{ "no-live", no_argument, NULL, 'L' },
		{ "device", required_argument, NULL, 'd' },
		{ "function", required_argument, NULL, 'f' },
		{ "width", required_argument, NULL, 'w' },
		{ "title", required_argument, NULL, 't' },
		CTL_COMMON_LONGOPTS,
		{ 0 }
	};
	const char *output = NULL, *regions_file = NULL;
	struct json_object *report = NULL, *live = NULL;
	struct memmap_opts mo;
	bool no_live = false;
	unsigned int which = 0;
	char err[512];
	uint64_t v;
	FILE *f;
	int opt, ret;

	memmap_opts_init(&mo);
	while ((opt = getopt_long(argc, argv, "o:n:r:d:f:w:t:hj", opts, NULL)) != -1) {
		if (ctl_common_opt(c, opt))
			continue;
		switch (opt) {
		case 'o':
			output = optarg;
			break;
		case 'n':
			if (ctl_parse_u64(optarg, &v) || !v || v > 1000000)
				return ctl_usage_error(c, "memmap", "bad report number '%s' (1, 2, ...)",
						       optarg);
			which = v;
			break;
		case 'r':
			regions_file = optarg;
			break;
		case 'L':
			no_live = true;
			break;
		case 'd':
			if (ctl_parse_u64(optarg, &v) || v > 255)
				return ctl_usage_error(c, "memmap", "bad device number '%s'", optarg);
			mo.device = (int)v;
			break;
		case 'f':
			if (parse_function(optarg))
				return ctl_usage_error(c, "memmap", "bad function '%s' (pf or vfM)",
						       optarg);
			mo.function = optarg;
			break;
		case 'w':
			if (ctl_parse_u64(optarg, &v) || v < 200 || v > 100000)
				return ctl_usage_error(c, "memmap", "bad width '%s' (200 to 100000 px)",
						       optarg);
			mo.width = v;
			break;
		case 't':
			mo.title = optarg;
			break;
		default:
			return ctl_usage_error(c, "memmap", "unknown option");
		}
	}
	if (optind == argc && mo.device >= 0) {
		if (regions_file || no_live || which || mo.function)
			return ctl_usage_error(c, "memmap", "--regions, --no-live, --report and "
					       "--function are for a report");
		return device_memmap(c, &mo, output);
	}
	if (optind != argc - 1)
		return ctl_usage_error(c, "memmap", optind >= argc ? "which report? give REPORT.json, "
				       "or --device N for a device's memory" : "one report file only");
	mo.source = argv[optind];

	ret = memmap_load_report(argv[optind], which, &report, err, sizeof(err));
	if (ret)
		return ctl_error(c, "%s", err);

	if (regions_file) {
		live = json_object_from_file(regions_file);
		if (!live || !json_object_is_type(live, json_type_array)) {
			json_object_put(live);
			json_object_put(report);
			return ctl_error(c, "%s: not a region list (save one with `flexctl regions "
					 "--json > FILE`)", regions_file);
		}
	} else if (!no_live && flex_module_loaded(c)) {
		/* Owners are a bonus: draw without them if the driver cannot say. */
		if (flexctl_nl_region_list(c, mo.device, &live, err, sizeof(err)))
			fprintf(c->err, "flexctl: warning: no region owners in the picture: %s\n", err);
	}

	f = output ? fopen(output, "w") : c->out;
	if (!f) {
		ret = ctl_error(c, "cannot write %s: %s", output, strerror(errno));
		goto out;
	}
	ret = memmap_render_svg(report, live, &mo, f, err, sizeof(err));
	if (output && fclose(f) && !ret) {
		ret = -EIO;
		snprintf(err, sizeof(err), "writing %s failed", output);
	}
	if (ret) {
		ret = ctl_error(c, "%s: %s", argv[optind], err);
		goto out;
	}
	if (output) {
		struct json_object *regions = json_object_object_get(report, "regions");
		struct json_object *o = json_object_new_object();
		size_t blocks = 0;

		for (size_t i = 0; i < json_object_array_length(regions); i++)
			blocks += json_object_array_length(json_object_object_get(
					json_object_array_get_idx(regions, i), "blocks"));
		tool_jset_str(o, "report", argv[optind]);
		tool_jset_str(o, "output", output);
		tool_jset_int(o, "regions", json_object_array_length(regions));
		tool_jset_int(o, "blocks", blocks);
		json_object_object_add(o, "owners", json_object_new_boolean(live != NULL));
		if (c->json)
			out_json(c, o);
		else
			fprintf(c->out, "%s: %zu regions, %zu blocks%s\n", output,
				json_object_array_length(regions), blocks,
				live ? ", owners from the live region list" : "");
		json_object_put(o);
	}
out:
	json_object_put(live);
	json_object_put(report);
	return ret;
}
