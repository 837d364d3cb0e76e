// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl ps and top: who uses the devices, and how much, in the manner of
 * nvidia-smi pmon and rocm-smi --showpids.
 *
 * ps lists the open files of the device nodes, one row per client (an open
 * file, however many fds and processes share it). An admin gets every
 * file from the netlink family (FLEX_CMD_FILE_GET); anyone else the fdinfo
 * of the processes /proc lets them read (their own), deduplicated by
 * flex-client-id. The output says which.
 *
 * top samples FLEX_CMD_DEVICE_GET, which any user may send, every interval
 * and shows each function's memory against its quotas, its queues, and
 * the engines' busy share and CBs per second from the difference of the
 * engine counters between two samples.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <linux/flex_netlink.h>

#include "flexnl.h"

/* "flexN" or "flexNvfM": the device node of function @fn of device @dev. */
static void node_name(int64_t dev, int64_t fn, char *buf, size_t len)
{
	if (fn == FLEX_NL_FN_PF)
		snprintf(buf, len, "flex%" PRId64, dev);
	else
		snprintf(buf, len, "flex%" PRId64 "vf%" PRId64, dev, fn - 1);
}

/* Common options: --device N; --interval, --count for top. */
struct usage_opts {
	int64_t device;
	double interval;
	int64_t count;
};

static int parse_usage_opts(struct flexctl *c, const char *cmdname, int argc, char **argv,
			    struct usage_opts *uo, bool is_top)
{
	static const struct option opts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		CTL_COMMON_LONGOPTS,
		{ 0 }
	};
	uint64_t v;
	char *end;
	int opt;

	uo->device = -1;
	uo->interval = 1.0;
	uo->count = 0;
	while ((opt = getopt_long(argc, argv, "d:i:n:hj", opts, NULL)) != -1) {
		if (ctl_common_opt(c, opt))
			continue;
		switch (opt) {
		case 'd':
			if (ctl_parse_u64(optarg, &v) || v > UINT32_MAX)
				return ctl_usage_error(c, cmdname, "bad device number '%s'", optarg);
			uo->device = v;
			break;
		case 'i':
			errno = 0;
			uo->interval = is_top ? strtod(optarg, &end) : 0;
			if (!is_top || errno || end == optarg || *end || !(uo->interval >= 0.1) ||
			    uo->interval > 3600)
				return ctl_usage_error(c, cmdname, "bad --interval '%s' (0.1 to 3600 s)",
						       optarg);
			break;
		case 'n':
			if (!is_top || ctl_parse_u64(optarg, &v) || !v || v > INT32_MAX)
				return ctl_usage_error(c, cmdname, "bad --count '%s'", optarg);
			uo->count = v;
			break;
		default:
			return ctl_usage_error(c, cmdname, "unknown option");
		}
	}
	if (optind != argc)
		return ctl_usage_error(c, cmdname, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* ---- ps ---- */

/* The open files from netlink (admins). -errno with a message in @err. */
static int ps_netlink(struct flexctl *c, int64_t dev, struct json_object **rows, char *err,
		      size_t errlen)
{
	char name[32];
	int ret;

	ret = flexctl_nl_list(c, FLEX_CMD_FILE_GET, true, dev, rows, err, errlen);
	if (ret)
		return ret;
	for (size_t i = 0; i < json_object_array_length(*rows); i++) {
		struct json_object *f = json_object_array_get_idx(*rows, i);
		struct json_object *pids = json_object_new_array();

		node_name(tool_jint(f, "device", 0), tool_jint(f, "fn", 0), name, sizeof(name));
		tool_jset_str(f, "name", name);
		json_object_array_add(pids, json_object_new_int64(tool_jint(f, "pid", 0)));
		json_object_object_add(f, "pids", pids);
	}
	return 0;
}

/* fdinfo keys and the JSON keys they become; KiB values become bytes. */
static const struct {
	const char *key, *json;
	bool kib;
} fdinfo_keys[] = {
	{ "flex-client-id", "client_id", false },
	{ "flex-regions", "regions", false },
	{ "flex-memory-regions", "bytes", true },
	{ "flex-memory-resident", "resident", true },
	{ "flex-queues", "queues", false },
	{ "flex-cbs-pending", "pending", false },
	{ "flex-cbs-submitted", "cbs_submitted", false },
	{ "flex-cbs-completed", "cbs_completed", false },
	{ "flex-faults", "faults", false },
	{ "flex-pinned", "pinned", true },
	{ "flex-engine-dma", "engine_dma_ns", false },
	{ "flex-engine-compute", "engine_compute_ns", false },
};

/*
 * One fd's fdinfo as a row ("device", "function", "fn", "name" and the
 * keys above), or NULL when it is not a flex file's.
 */
static struct json_object *fdinfo_row(const char *path)
{
	char line[256], dev[32] = "", fn[32] = "";
	struct json_object *row = json_object_new_object();
	unsigned int d, vf;
	FILE *f = fopen(path, "re");

	if (!f) {
		json_object_put(row);
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *val = strchr(line, ':');

		if (!val)
			continue;
		*val++ = '\0';
		val += strspn(val, " \t");
		val[strcspn(val, "\n")] = '\0';
		if (!strcmp(line, "flex-device"))
			snprintf(dev, sizeof(dev), "%s", val);
		else if (!strcmp(line, "flex-function"))
			snprintf(fn, sizeof(fn), "%s", val);
		for (size_t i = 0; i < sizeof(fdinfo_keys) / sizeof(fdinfo_keys[0]); i++)
			if (!strcmp(line, fdinfo_keys[i].key))
				tool_jset_int(row, fdinfo_keys[i].json,
					      (int64_t)strtoull(val, NULL, 10) <<
					      (fdinfo_keys[i].kib ? 10 : 0));
	}
	fclose(f);
	if (sscanf(dev, "flex%u", &d) != 1 || !fn[0]) {
		json_object_put(row);
		return NULL;
	}
	tool_jset_int(row, "device", d);
	tool_jset_str(row, "function", fn);
	if (!strcmp(fn, "pf")) {
		tool_jset_int(row, "fn", FLEX_NL_FN_PF);
		snprintf(line, sizeof(line), "flex%u", d);
	} else if (sscanf(fn, "vf%u", &vf) == 1) {
		tool_jset_int(row, "fn", FLEX_NL_FN_VF(vf));
		snprintf(line, sizeof(line), "flex%uvf%u", d, vf);
	}
	tool_jset_str(row, "name", line);
	return row;
}

/* Adds @pid to the "pids" of @row, once. */
static void add_pid(struct json_object *row, long pid)
{
	struct json_object *pids = json_object_object_get(row, "pids");

	if (!pids) {
		pids = json_object_new_array();
		json_object_object_add(row, "pids", pids);
	}
	for (size_t i = 0; i < json_object_array_length(pids); i++)
		if (json_object_get_int64(json_object_array_get_idx(pids, i)) == pid)
			return;
	json_object_array_add(pids, json_object_new_int64(pid));
}

/* The flex fds of process @pid that we may read, merged into @rows by client id. */
static void ps_scan_pid(long pid, int64_t dev, struct json_object *rows)
{
	char path[PATH_MAX], target[PATH_MAX], comm[64] = "?";
	struct dirent *de;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/fd", pid);
	d = opendir(path);
	if (!d)
		return;
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	while ((de = readdir(d))) {
		struct json_object *row, *old = NULL;
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fd/%s", pid, de->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (strncmp(target, "/dev/flex", 9))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fdinfo/%s", pid, de->d_name);
		row = fdinfo_row(path);
		if (!row)
			continue;
		if (dev >= 0 && tool_jint(row, "device", -1) != dev) {
			json_object_put(row);
			continue;
		}
		for (size_t i = 0; i < json_object_array_length(rows); i++) {
			struct json_object *r = json_object_array_get_idx(rows, i);

			if (tool_jint(r, "client_id", -1) == tool_jint(row, "client_id", -2))
				old = r;
		}
		if (old) {
			json_object_put(row);
			row = old;
		} else {
			/* The first process seen holding it: the lowest pid. */
			tool_jset_int(row, "pid", pid);
			tool_jset_str(row, "comm", comm);
			json_object_array_add(rows, row);
		}
		tool_jset_int(row, "fds", tool_jint(row, "fds", 0) + 1);
		add_pid(row, pid);
	}
	closedir(d);
}

static int by_pid(const struct dirent **a, const struct dirent **b)
{
	long x = strtol((*a)->d_name, NULL, 10);
	long y = strtol((*b)->d_name, NULL, 10);

	return (x > y) - (x < y);
}

static int by_client(const void *a, const void *b)
{
	int64_t x = tool_jint(*(struct json_object *const *)a, "client_id", 0);
	int64_t y = tool_jint(*(struct json_object *const *)b, "client_id", 0);

	return (x > y) - (x < y);
}

/* The open files from the fdinfo of the processes we may read. */
static struct json_object *ps_fdinfo(int64_t dev)
{
	struct json_object *rows = json_object_new_array();
	struct dirent **ents;
	int n = scandir("/proc", &ents, NULL, by_pid);

	for (int i = 0; i < n; i++) {
		char *end;
		long pid = strtol(ents[i]->d_name, &end, 10);

		if (!*end && pid > 0)
			ps_scan_pid(pid, dev, rows);
		free(ents[i]);
	}
	if (n >= 0)
		free(ents);
	json_object_array_sort(rows, by_client);
	return rows;
}

static const struct column ps_cols[] = {
	{ "client_id", "CLIENT", COL_INT },
	{ "pid", "PID", COL_INT },
	{ "comm", "COMMAND", COL_STR },
	{ "name", "FUNCTION", COL_STR },
	{ "regions", "REGIONS", COL_INT },
	{ "bytes", "MEMORY", COL_SIZE },
	{ "resident", "RESIDENT", COL_SIZE },
	{ "queues", "QUEUES", COL_INT },
	{ "pending", "PENDING", COL_INT },
	{ "cbs_completed", "CBS_DONE", COL_INT },
	{ "faults", "FAULTS", COL_INT },
	{ "engine_dma_ms", "DMA_MS", COL_RATE },
	{ "engine_compute_ms", "COMPUTE_MS", COL_RATE },
};

int cmd_ps(struct flexctl *c, int argc, char **argv)
{
	struct json_object *rows = NULL, *o;
	struct usage_opts uo;
	const char *source;
	char err[512];
	int ret;

	ret = parse_usage_opts(c, "ps", argc, argv, &uo, false);
	if (ret)
		return ret;
	if (uo.device >= 0 && ctl_need_device(c, uo.device))
		return FLEXCTL_EXIT_FAIL;
	ret = ps_netlink(c, uo.device, &rows, err, sizeof(err));
	if (!ret) {
		source = "netlink";
	} else if (ret == -EPERM || ret == -EACCES || ret == -EOPNOTSUPP) {
		/* Not an admin (or an older module): what fdinfo shows us. */
		source = "fdinfo";
		rows = ps_fdinfo(uo.device);
	} else if (ret == -ENODEV) {
		return ctl_error(c, "no such flex device: %" PRId64 " (%s)", uo.device, err);
	} else {
		return ctl_error(c, "asking the flex driver for its open files: %s", err);
	}
	if (c->json) {
		o = json_object_new_object();
		tool_jset_str(o, "source", source);
		json_object_object_add(o, "files", rows);
		out_json(c, o);
		json_object_put(o);
		return 0;
	}
	for (size_t i = 0; i < json_object_array_length(rows); i++) {
		struct json_object *r = json_object_array_get_idx(rows, i);

		json_object_object_add(r, "engine_dma_ms", json_object_new_double(
			tool_jint(r, "engine_dma_ns", 0) / 1e6));
		json_object_object_add(r, "engine_compute_ms", json_object_new_double(
			tool_jint(r, "engine_compute_ns", 0) / 1e6));
	}
	fprintf(c->out, "source: %s\n", !strcmp(source, "netlink") ?
		"netlink (every open file; admin)" :
		"fdinfo (the open files of the processes this user may read; not an admin)");
	out_table(c, rows, ps_cols, sizeof(ps_cols) / sizeof(ps_cols[0]));
	json_object_put(rows);
	return 0;
}

/* ---- top ---- */

static volatile sig_atomic_t top_stop;

static void on_signal(int sig)
{
	(void)sig;
	top_stop = 1;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps @s seconds or until a signal asks top to stop. */
static void top_sleep(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	while (!top_stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The function of device @dev with number @fn in a sample, or NULL. */
static struct json_object *find_fn(struct json_object *devs, int64_t dev, int64_t fn)
{
	for (size_t i = 0; devs && i < json_object_array_length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		struct json_object *fns = json_object_object_get(d, "functions");

		if (tool_jint(d, "device", -1) != dev)
			continue;
		for (size_t j = 0; fns && j < json_object_array_length(fns); j++)
			if (tool_jint(json_object_array_get_idx(fns, j), "fn", -1) == fn)
				return json_object_array_get_idx(fns, j);
	}
	return NULL;
}

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0;
}

/* Busy share of a counter's growth over @dt s, capped at 100 %. */
static double busy_pct(struct json_object *now, struct json_object *before, const char *key,
		       double dt)
{
	int64_t d = tool_jint(now, key, 0) - tool_jint(before, key, 0);
	double p = before && d > 0 ? pct(d / 1e9, dt) : 0;

	return p > 100 ? 100 : p;
}

/* @v rounded to one decimal, and written so ("2.5", not "2.5000000000000001"). */
static void set_double(struct json_object *o, const char *key, double v)
{
	char text[32];

	snprintf(text, sizeof(text), "%.1f", v);
	json_object_object_add(o, key, json_object_new_double_s(strtod(text, NULL), text));
}

/*
 * Adds to every function of @devs (this sample) what follows from it and
 * from @prev (the last one, @dt s before): memory against quota, the
 * engines' busy share, CBs per second; and their sums to each device.
 */
static void top_derive(struct json_object *devs, struct json_object *prev, double dt)
{
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		struct json_object *d = json_object_array_get_idx(devs, i);
		struct json_object *fns = json_object_object_get(d, "functions");
		double dma = 0, compute = 0, rate = 0;
		int64_t queues = 0, pending = 0;
		char name[32];

		for (size_t j = 0; fns && j < json_object_array_length(fns); j++) {
			struct json_object *f = json_object_array_get_idx(fns, j);
			struct json_object *b = find_fn(prev, tool_jint(d, "device", 0),
							tool_jint(f, "fn", 0));
			int64_t cbs = tool_jint(f, "engine_dma_cbs", 0) +
				      tool_jint(f, "engine_compute_cbs", 0);
			int64_t cbs0 = tool_jint(b, "engine_dma_cbs", 0) +
				       tool_jint(b, "engine_compute_cbs", 0);
			double r = b && dt > 0 && cbs >= cbs0 ? (cbs - cbs0) / dt : 0;
			double pd = busy_pct(f, b, "engine_dma_ns", dt);
			double pc = busy_pct(f, b, "engine_compute_ns", dt);

			node_name(tool_jint(d, "device", 0), tool_jint(f, "fn", 0), name,
				  sizeof(name));
			tool_jset_str(f, "name", name);
			set_double(f, "memory_pct", pct(tool_jint(f, "used", 0),
							tool_jint(f, "quota_capacity", 0)));
			set_double(f, "backing_pct", pct(tool_jint(f, "resident", 0),
							 tool_jint(f, "quota_backing", 0)));
			set_double(f, "engine_dma_busy_pct", pd);
			set_double(f, "engine_compute_busy_pct", pc);
			set_double(f, "cbs_per_s", r);
			dma += pd;
			compute += pc;
			rate += r;
			queues += tool_jint(f, "queues", 0);
			pending += tool_jint(f, "pending", 0);
		}
		set_double(d, "engine_dma_busy_pct", dma > 100 ? 100 : dma);
		set_double(d, "engine_compute_busy_pct", compute > 100 ? 100 : compute);
		set_double(d, "cbs_per_s", rate);
		tool_jset_int(d, "queues", queues);
		tool_jset_int(d, "pending", pending);
	}
}

/* The device's totals; `flexctl devices` has the rest. */
static const struct column top_dev_cols[] = {
	{ "name", "DEVICE", COL_STR },
	{ "used", "MEMORY", COL_SIZE },
	{ "capacity", "CAPACITY", COL_SIZE },
	{ "resident", "RESIDENT", COL_SIZE },
	{ "backing_cap", "BACKING_CAP", COL_SIZE },
	{ "queues", "QUEUES", COL_INT },
	{ "pending", "PENDING", COL_INT },
	{ "engine_dma_busy_pct", "DMA%", COL_RATE },
	{ "engine_compute_busy_pct", "COMPUTE%", COL_RATE },
	{ "cbs_per_s", "CBS/S", COL_RATE },
};

static const struct column top_fn_cols[] = {
	{ "name", "FUNCTION", COL_STR },
	{ "open_count", "OPEN", COL_INT },
	{ "used", "MEMORY", COL_SIZE },
	{ "quota_capacity", "QUOTA", COL_SIZE },
	{ "memory_pct", "MEM%", COL_RATE },
	{ "resident", "RESIDENT", COL_SIZE },
	{ "quota_backing", "BACKING_QUOTA", COL_SIZE },
	{ "queues", "QUEUES", COL_INT },
	{ "pending", "PENDING", COL_INT },
	{ "engine_dma_busy_pct", "DMA%", COL_RATE },
	{ "engine_compute_busy_pct", "COMPUTE%", COL_RATE },
	{ "cbs_per_s", "CBS/S", COL_RATE },
};

static void top_print(struct flexctl *c, struct json_object *devs, double dt, bool tty)
{
	struct json_object *fns = json_object_new_array();
	char when[32];
	time_t t = time(NULL);

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	if (c->json) {
		struct json_object *o = json_object_new_object();

		tool_jset_str(o, "time", when);
		set_double(o, "interval", dt);
		json_object_object_add(o, "devices", json_object_get(devs));
		fprintf(c->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
						JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		json_object_put(fns);
		fflush(c->out);
		return;
	}
	for (size_t i = 0; i < json_object_array_length(devs); i++) {
		struct json_object *f = json_object_object_get(json_object_array_get_idx(devs, i),
							       "functions");

		for (size_t j = 0; f && j < json_object_array_length(f); j++)
			json_object_array_add(fns, json_object_get(json_object_array_get_idx(f, j)));
	}
	if (tty)
		fputs("\033[H\033[J", c->out);
	fprintf(c->out, "flexctl top  %s  over %.2f s%s\n\n", when, dt,
		tty ? "  (Ctrl-C quits)" : "");
	out_table(c, devs, top_dev_cols, sizeof(top_dev_cols) / sizeof(top_dev_cols[0]));
	fputc('\n', c->out);
	out_table(c, fns, top_fn_cols, sizeof(top_fn_cols) / sizeof(top_fn_cols[0]));
	if (!tty)
		fputc('\n', c->out);
	json_object_put(fns);
	fflush(c->out);
}

/* One sample: every device (or @dev) from DEVICE_GET. */
static int top_sample(struct flexctl *c, struct flexctl_nl *n, int64_t dev,
		      struct json_object **out)
{
	struct flexctl_nl_sel sel = FLEXCTL_NL_SEL_NONE;
	char err[512];
	int ret;

	sel.device = dev;
	n->rows = json_object_new_array();
	ret = flexctl_nl_request(n, FLEX_CMD_DEVICE_GET, dev < 0, &sel, err, sizeof(err));
	if (ret) {
		json_object_put(n->rows);
		n->rows = NULL;
		if (ret == -ENODEV)
			return ctl_error(c, "no such flex device: %" PRId64 " (%s)", dev, err);
		return ctl_error(c, "asking the flex driver for its devices: %s", err);
	}
	*out = n->rows;
	n->rows = NULL;
	return 0;
}

int cmd_top(struct flexctl *c, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct json_object *prev = NULL, *cur = NULL;
	struct usage_opts uo;
	struct flexctl_nl n;
	double t0, t1;
	char err[512];
	bool tty;
	int ret;

	ret = parse_usage_opts(c, "top", argc, argv, &uo, true);
	if (ret)
		return ret;
	ret = flexctl_nl_open(c, &n, err, sizeof(err));
	if (ret)
		return ctl_error(c, "%s", err);
	/* No SA_RESTART: a signal ends the sleep at once. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	tty = isatty(fileno(c->out));
	ret = top_sample(c, &n, uo.device, &prev);
	t0 = mono_s();
	for (int64_t i = 0; !ret && !top_stop && (!uo.count || i < uo.count); i++) {
		top_sleep(uo.interval);
		if (top_stop)
			break;
		ret = top_sample(c, &n, uo.device, &cur);
		if (ret)
			break;
		t1 = mono_s();
		top_derive(cur, prev, t1 - t0);
		top_print(c, cur, t1 - t0, tty);
		json_object_put(prev);
		prev = cur;
		cur = NULL;
		t0 = t1;
	}
	json_object_put(prev);
	flexctl_nl_close(&n);
	return ret;
}
