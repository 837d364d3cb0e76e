// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl devices, regions, queues and table: one request to the flex
 * generic netlink family each (nlconn.c), a get for one object or a dump
 * with the device and function filters, printed as a table or --json
 * (output.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <linux/flex_netlink.h>

#include "flexnl.h"

static void finish(struct flexctl_nl *n)
{
	json_object_put(n->rows);
	n->rows = NULL;
	flexctl_nl_close(n);
}

/*
 * Run one request for a command, printing the error: -ENODEV and -ENOENT
 * get messages naming what does not exist, -EPERM/-EACCES a permission
 * message. Returns 0 with the replies in n->rows (finish() them), or
 * FLEXCTL_EXIT_FAIL with @n finished.
 */
static int run_request(struct flexctl *c, struct flexctl_nl *n, uint8_t cmd, bool dump,
		       const struct flexctl_nl_sel *sel, const char *what)
{
	char err[512];
	int ret;

	ret = flexctl_nl_open(c, n, err, sizeof(err));
	if (ret)
		return ctl_error(c, "%s", err);
	n->rows = json_object_new_array();
	ret = flexctl_nl_request(n, cmd, dump, sel, err, sizeof(err));
	if (!ret)
		return 0;
	finish(n);
	if (ret == -ENODEV) {
		char fname[16] = "";

		if (sel->fn >= 0)
			flexctl_fn_name(sel->fn, fname, sizeof(fname));
		ctl_error(c, "no such flex device or function: device %" PRId64 "%s%s (%s)",
			  sel->device, sel->fn >= 0 ? ", function " : "", fname, err);
	} else if (ret == -ENOENT) {
		if (sel->region_handle >= 0 || sel->queue_handle >= 0)
			ctl_error(c, "no such %s: handle %" PRId64 " on device %" PRId64 " (%s)", what,
				  sel->region_handle >= 0 ? sel->region_handle : sel->queue_handle,
				  sel->device, err);
		else
			ctl_error(c, "no such %s: index %" PRId64 " on device %" PRId64 " (%s)", what,
				  sel->table_index, sel->device, err);
	} else if (ret == -EPERM || ret == -EACCES) {
		ctl_error(c, "permission denied asking the flex driver for %ss: %s", what, err);
	} else {
		ctl_error(c, "asking the flex driver for %ss: %s", what, err);
	}
	return FLEXCTL_EXIT_FAIL;
}

/* Keep only the rows whose owner_pid is @pid. */
static void filter_pid(struct json_object *rows, int64_t pid)
{
	if (pid < 0)
		return;
	for (size_t i = json_object_array_length(rows); i-- > 0;)
		if (tool_jint(json_object_array_get_idx(rows, i), "owner_pid", -1) != pid)
			json_object_array_del_idx(rows, i, 1);
}

/* Common selector options of the list commands. */
struct list_opts {
	struct flexctl_nl_sel sel;
	int64_t pid;
	int64_t handle;		/* --handle: one object (a non-dump GET) */
	int64_t index;		/* --index (table) */
};

static int parse_list_opts(struct flexctl *c, const char *cmdname, int argc, char **argv,
			   struct list_opts *lo, bool takes_fn, bool takes_handle, bool takes_index)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "function", required_argument, NULL, 'f' },
		{ "pid", required_argument, NULL, 'p' },
		{ "handle", required_argument, NULL, 'H' },
		{ "index", required_argument, NULL, 'i' },
		CTL_COMMON_LONGOPTS,
		{ 0 }
	};
	struct flexctl_nl_sel none = FLEXCTL_NL_SEL_NONE;
	uint64_t v;
	uint32_t fn;
	int opt;

	lo->sel = none;
	lo->pid = -1;
	lo->handle = -1;
	lo->index = -1;
	while ((opt = getopt_long(argc, argv, "d:f:p:H:i:hj", opts, NULL)) != -1) {
		if (ctl_common_opt(c, opt))
			continue;
		switch (opt) {
		case 'd':
			if (ctl_parse_u64(optarg, &v) || v > UINT32_MAX)
				return ctl_usage_error(c, cmdname, "bad device number '%s'", optarg);
			lo->sel.device = v;
			break;
		case 'f':
			if (!takes_fn)
				return ctl_usage_error(c, cmdname, "--function is not an option here");
			if (flexctl_parse_fn(optarg, &fn))
				return ctl_usage_error(c, cmdname, "bad function '%s' (pf or vfM)",
						       optarg);
			lo->sel.fn = fn;
			break;
		case 'p':
			if (!takes_fn || ctl_parse_u64(optarg, &v) || v > INT32_MAX)
				return ctl_usage_error(c, cmdname, "bad --pid '%s'", optarg);
			lo->pid = v;
			break;
		case 'H':
			if (!takes_handle || ctl_parse_u64(optarg, &v) || v > UINT32_MAX)
				return ctl_usage_error(c, cmdname, "bad --handle '%s'", optarg);
			lo->handle = v;
			break;
		case 'i':
			if (!takes_index || ctl_parse_u64(optarg, &v) || v > UINT32_MAX)
				return ctl_usage_error(c, cmdname, "bad --index '%s'", optarg);
			lo->index = v;
			break;
		default:
			return ctl_usage_error(c, cmdname, "unknown option");
		}
	}
	if (optind != argc)
		return ctl_usage_error(c, cmdname, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/*
 * The replies of a list command, those of --pid's process only: one object
 * for a get (@one), else an array, as JSON or as a table of @cols. Finishes
 * @n.
 */
static int print_list(struct flexctl *c, struct flexctl_nl *n, const struct list_opts *lo,
		      bool one, const struct column *cols, size_t ncols)
{
	filter_pid(n->rows, lo->pid);
	if (c->json)
		out_json(c, one && json_object_array_length(n->rows) == 1 ?
			 json_object_array_get_idx(n->rows, 0) : n->rows);
	else
		out_table(c, n->rows, cols, ncols);
	finish(n);
	return 0;
}

/*
 * --handle H: one object, by a get (not a dump) on device 0 unless --device
 * says otherwise; handles are device-wide, so no --function. Returns 0, or
 * the usage error's exit status.
 */
static int select_handle(struct flexctl *c, const char *cmdname, const char *what,
			 struct list_opts *lo, int64_t *handle, bool *one)
{
	*one = lo->handle >= 0;
	*handle = lo->handle;
	if (!*one)
		return 0;
	if (lo->sel.fn >= 0)
		return ctl_usage_error(c, cmdname, "--handle names one %s: no --function", what);
	if (lo->sel.device < 0)
		lo->sel.device = 0;
	return 0;
}

/* ---- devices ---- */

static const struct column dev_cols[] = {
	{ "name", "DEVICE", COL_STR },
	{ "capacity", "CAPACITY", COL_SIZE },
	{ "used", "USED", COL_SIZE },
	{ "free", "FREE", COL_SIZE },
	{ "largest_free", "LARGEST_FREE", COL_SIZE },
	{ "resident", "RESIDENT", COL_SIZE },
	{ "backing_cap", "BACKING_CAP", COL_SIZE },
	{ "num_vfs", "VFS", COL_INT },
	{ "total_vfs", "MAX_VFS", COL_INT },
};

static const struct column fn_cols[] = {
	{ "name", "FUNCTION", COL_STR },
	{ "device", "DEV", COL_INT },
	{ "function", "FN", COL_STR },
	{ "table_size", "TABLE", COL_INT },
	{ "table_used", "USED", COL_INT },
	{ "open_count", "OPEN", COL_INT },
};

int cmd_devices(struct flexctl *c, int argc, char **argv)
{
	struct list_opts lo;
	struct flexctl_nl n;
	int ret;

	ret = parse_list_opts(c, "devices", argc, argv, &lo, false, false, false);
	if (ret)
		return ret;
	/* One device: the non-dump GET (-ENODEV names a missing one). */
	ret = run_request(c, &n, FLEX_CMD_DEVICE_GET, lo.sel.device < 0, &lo.sel, "device");
	if (ret)
		return ret;
	if (c->json) {
		out_json(c, n.rows);
	} else {
		struct json_object *fns = json_object_new_array();

		for (size_t i = 0; i < json_object_array_length(n.rows); i++) {
			struct json_object *d = json_object_array_get_idx(n.rows, i);
			struct json_object *f = json_object_object_get(d, "functions");

			for (size_t j = 0; f && j < json_object_array_length(f); j++) {
				struct json_object *row = json_object_get(json_object_array_get_idx(f, j));

				tool_jset_int(row, "device", tool_jint(d, "device", 0));
				json_object_array_add(fns, row);
			}
		}
		out_table(c, n.rows, dev_cols, sizeof(dev_cols) / sizeof(dev_cols[0]));
		fputc('\n', c->out);
		out_table(c, fns, fn_cols, sizeof(fn_cols) / sizeof(fn_cols[0]));
		json_object_put(fns);
	}
	finish(&n);
	return 0;
}

/* ---- regions ---- */

static const struct column region_cols[] = {
	{ "device", "DEV", COL_INT },
	{ "function", "FN", COL_STR },
	{ "handle", "HANDLE", COL_INT },
	{ "region_id", "REGION_ID", COL_HEX },
	{ "phys_addr", "PHYS", COL_HEX },
	{ "size", "SIZE", COL_SIZE },
	{ "resident", "RESIDENT", COL_SIZE },
	{ "lut_index", "LUT", COL_INT },
	{ "owner_pid", "PID", COL_INT },
	{ "owner_comm", "COMMAND", COL_STR },
};

int flexctl_nl_list(struct flexctl *c, uint8_t cmd, bool dump, int dev, struct json_object **out,
		    char *err, size_t errlen)
{
	struct flexctl_nl_sel sel = FLEXCTL_NL_SEL_NONE;
	struct flexctl_nl n;
	int ret;

	sel.device = dev;
	ret = flexctl_nl_open(c, &n, err, errlen);
	if (ret)
		return ret;
	n.rows = json_object_new_array();
	ret = flexctl_nl_request(&n, cmd, dump, &sel, err, errlen);
	if (ret) {
		finish(&n);
		return ret;
	}
	*out = n.rows;
	flexctl_nl_close(&n);
	return 0;
}

int flexctl_nl_region_list(struct flexctl *c, int dev, struct json_object **out, char *err,
			   size_t errlen)
{
	return flexctl_nl_list(c, FLEX_CMD_REGION_GET, true, dev, out, err, errlen);
}

int cmd_regions(struct flexctl *c, int argc, char **argv)
{
	struct list_opts lo;
	struct flexctl_nl n;
	bool one;
	int ret;

	ret = parse_list_opts(c, "regions", argc, argv, &lo, true, true, false);
	if (!ret)
		ret = select_handle(c, "regions", "region", &lo, &lo.sel.region_handle, &one);
	if (!ret)
		ret = run_request(c, &n, FLEX_CMD_REGION_GET, !one, &lo.sel, "region");
	if (ret)
		return ret;
	return print_list(c, &n, &lo, one, region_cols, sizeof(region_cols) / sizeof(region_cols[0]));
}

/* ---- queues ---- */

static const struct column queue_cols[] = {
	{ "device", "DEV", COL_INT },
	{ "function", "FN", COL_STR },
	{ "handle", "HANDLE", COL_INT },
	{ "queue_id", "QUEUE", COL_INT },
	{ "priority_name", "PRIO", COL_STR },
	{ "depth", "DEPTH", COL_INT },
	{ "pending", "PENDING", COL_INT },
	{ "submitted", "SUBMITTED", COL_INT },
	{ "completed", "COMPLETED", COL_INT },
	{ "faults", "FAULTS", COL_INT },
	{ "fault_text", "STATE", COL_STR },
	{ "owner_pid", "PID", COL_INT },
	{ "owner_comm", "COMMAND", COL_STR },
};

int cmd_queues(struct flexctl *c, int argc, char **argv)
{
	struct list_opts lo;
	struct flexctl_nl n;
	bool one;
	int ret;

	ret = parse_list_opts(c, "queues", argc, argv, &lo, true, true, false);
	if (!ret)
		ret = select_handle(c, "queues", "queue", &lo, &lo.sel.queue_handle, &one);
	if (!ret)
		ret = run_request(c, &n, FLEX_CMD_QUEUE_GET, !one, &lo.sel, "queue");
	if (ret)
		return ret;
	/* The table's STATE column: "ok" or the sticky fault. */
	for (size_t i = 0; !c->json && i < json_object_array_length(n.rows); i++) {
		struct json_object *q = json_object_array_get_idx(n.rows, i);
		struct json_object *f = json_object_object_get(q, "fault");
		char text[96];

		if (f)
			snprintf(text, sizeof(text), "fault %s at seqno %" PRId64,
				 tool_jstr(f, "code_name", "?"), tool_jint(f, "seqno", 0));
		else
			snprintf(text, sizeof(text), "ok");
		tool_jset_str(q, "fault_text", text);
	}
	return print_list(c, &n, &lo, one, queue_cols, sizeof(queue_cols) / sizeof(queue_cols[0]));
}

/* ---- table ---- */

static const struct column entry_cols[] = {
	{ "device", "DEV", COL_INT },
	{ "function", "FN", COL_STR },
	{ "index", "INDEX", COL_INT },
	{ "region_id", "REGION_ID", COL_HEX },
	{ "phys_addr", "PHYS", COL_HEX },
	{ "size", "SIZE", COL_SIZE },
	{ "handle", "HANDLE", COL_INT },
	{ "owner_pid", "PID", COL_INT },
	{ "owner_comm", "COMMAND", COL_STR },
};

int cmd_table(struct flexctl *c, int argc, char **argv)
{
	struct list_opts lo;
	struct flexctl_nl n;
	bool one;
	int ret;

	ret = parse_list_opts(c, "table", argc, argv, &lo, true, false, true);
	if (ret)
		return ret;
	one = lo.index >= 0;
	if (one) {
		if (lo.sel.fn < 0)
			return ctl_usage_error(c, "table", "--index needs --function (whose table)");
		if (lo.sel.device < 0)
			lo.sel.device = 0;
	}
	lo.sel.table_index = lo.index;
	ret = run_request(c, &n, FLEX_CMD_TABLE_GET, !one, &lo.sel, "table entry");
	if (ret)
		return ret;
	return print_list(c, &n, &lo, one, entry_cols, sizeof(entry_cols) / sizeof(entry_cols[0]));
}
