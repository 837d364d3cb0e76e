// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl against the real driver: every netlink command (devices, regions,
 * queues, table; dump and single-object forms) and every event (monitor),
 * vf, status, memmap with live owners, load and unload through libkmod,
 * and the messages when the module is absent. Each command's --json output
 * is parsed with json-c and checked against what this test itself created
 * through the ioctls and what sysfs says.
 *
 * flexctl is found next to the kselftest directory ($(BUILD)/flexctl for
 * $(BUILD)/kselftest/flexctl_test), or at $FLEXCTL. The load/unload test
 * needs FLEX_KO (run-all exports it) and runs last: it leaves the module
 * loaded again with the parameters it had.
 */
#include <limits.h>
#include <libgen.h>
#include <signal.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "kselftest_harness.h"
#include "flex_test.h"

/* ---- running flexctl ---- */

struct run {
	int status;		/* exit status, or -1 if it did not exit */
	char out[1 << 16];	/* stdout */
	char err[4096];		/* stderr */
};

static const char *flexctl_path(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;

	if (getenv("FLEXCTL"))
		return getenv("FLEXCTL");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return "flexctl";
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/../flexctl", dirname(exe));
	return path;
}

static void read_all(int fd, char *buf, size_t len)
{
	size_t used = 0;
	ssize_t n;

	while (used < len - 1 && (n = read(fd, buf + used, len - 1 - used)) > 0)
		used += n;
	buf[used] = '\0';
}

/* Run flexctl with the arguments (NULL-terminated); fill @r. */
static void flexctl_argv(struct run *r, char *const args[], uid_t uid)
{
	int out[2], err[2], st;
	char *argv[32];
	pid_t pid;
	int i;

	argv[0] = (char *)flexctl_path();
	for (i = 0; args[i] && i < 30; i++)
		argv[i + 1] = args[i];
	argv[i + 1] = NULL;
	r->status = -1;
	r->out[0] = r->err[0] = '\0';
	if (pipe(out) || pipe(err))
		return;
	pid = fork();
	if (pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		/* As an unprivileged user: drop the groups and ids first. */
		if (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
			_exit(126);
		execv(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	/* stderr is small: read stdout first, then stderr, without deadlock. */
	read_all(out[0], r->out, sizeof(r->out));
	read_all(err[0], r->err, sizeof(r->err));
	close(out[0]);
	close(err[0]);
	if (waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		r->status = WEXITSTATUS(st);
}

static void run_line(struct run *r, uid_t uid, const char *fmt, va_list ap)
{
	char line[1024], *args[30], *save = NULL, *tok;
	int n = 0;

	vsnprintf(line, sizeof(line), fmt, ap);
	for (tok = strtok_r(line, " ", &save); tok && n < 29; tok = strtok_r(NULL, " ", &save))
		args[n++] = tok;
	args[n] = NULL;
	flexctl_argv(r, args, uid);
}

/* flexctl with a printf-formatted, space-separated argument string. */
static void __attribute__((format(printf, 2, 3))) flexctl(struct run *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	run_line(r, 0, fmt, ap);
	va_end(ap);
}

/* The same as the unprivileged user nobody (65534). */
#define NOBODY 65534
static void __attribute__((format(printf, 2, 3))) flexctl_nobody(struct run *r,
								 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	run_line(r, NOBODY, fmt, ap);
	va_end(ap);
}

static struct json_object *parse(const char *text)
{
	return json_tokener_parse(text);
}

static long long jint(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !v)
		return -1;
	return json_object_get_int64(v);
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !v)
		return "(absent)";
	return json_object_get_string(v);
}

static int jnull(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	return o && json_object_object_get_ex(o, key, &v) && v == NULL;
}

/* The element of array @a whose @key is @val, or NULL. */
static struct json_object *find_by(struct json_object *a, const char *key, long long val)
{
	for (size_t i = 0; a && i < json_object_array_length(a); i++)
		if (jint(json_object_array_get_idx(a, i), key) == val)
			return json_object_array_get_idx(a, i);
	return NULL;
}

static long long sysfs_region_num(__u64 handle, const char *attr)
{
	return sysfs_num(FLEX_SYSFS "/regions/%llu/%s", (unsigned long long)handle, attr);
}

#define EXPECT_RUN_OK(r) \
	EXPECT_EQ(0, (r)->status) TH_LOG("flexctl exited %d: %s", (r)->status, (r)->err)

#define EXPECT_MSG(r, want) \
	EXPECT_NE(NULL, strstr((r)->err, want)) TH_LOG("stderr should contain \"%s\", got \"%s\"", \
						       want, (r)->err)

/*
 * Every flexctl run is a process start with libnl, libkmod and json-c: a
 * second or more on a loaded machine under TCG, so the harness's 30 s per
 * test is not enough. The timeout is a safety net, not a measurement.
 */
#define CTL_TIMEOUT 600

FIXTURE(ctl) {
	int unused;
};

FIXTURE_SETUP(ctl)
{
}

FIXTURE_TEARDOWN(ctl)
{
}

/* ---- help ---- */

TEST_F_TIMEOUT(ctl, every_command_has_help, CTL_TIMEOUT)
{
	static const char *const cmds[] = {
		"status", "load", "unload", "devices", "regions", "queues", "table",
		"monitor", "vf", "memmap", "ps", "top",
	};
	char want[64];
	struct run r;

	flexctl(&r, "--help");
	EXPECT_EQ(0, r.status);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(want, sizeof(want), "\n  %s ", cmds[i]);
		EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("--help does not list %s", cmds[i]);
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		flexctl(&r, "%s --help", cmds[i]);
		snprintf(want, sizeof(want), "usage: flexctl %s", cmds[i]);
		EXPECT_EQ(0, r.status) TH_LOG("%s --help exited %d", cmds[i], r.status);
		EXPECT_NE(NULL, strstr(r.out, want)) TH_LOG("%s --help: got \"%s\"", cmds[i], r.out);
		EXPECT_NE(NULL, strstr(r.out, "--json")) TH_LOG("%s --help lacks --json", cmds[i]);
	}
	flexctl(&r, "frobnicate");
	EXPECT_EQ(2, r.status);
	EXPECT_MSG(&r, "unknown command 'frobnicate'");
	flexctl(&r, "regions --function vx1");
	EXPECT_EQ(2, r.status);
	EXPECT_MSG(&r, "bad function 'vx1'");
}

/* ---- status ---- */

TEST_F_TIMEOUT(ctl, status_reports_the_loaded_module, CTL_TIMEOUT)
{
	struct json_object *st, *params;
	char path[256], val[64];
	struct run r;

	flexctl(&r, "--json status");
	EXPECT_RUN_OK(&r);
	st = parse(r.out);
	ASSERT_NE(NULL, st) TH_LOG("status --json is not JSON: %s", r.out);
	EXPECT_TRUE(json_object_get_boolean(json_object_object_get(st, "loaded")));
	EXPECT_STREQ("live", jstr(st, "state"));
	ASSERT_EQ(0, sysfs_read("/sys/module/flex/version", val, sizeof(val)));
	EXPECT_STREQ(val, jstr(st, "version"));
	EXPECT_LE(1, jint(st, "num_devices_present"));
	EXPECT_STREQ("flex0", json_object_get_string(json_object_array_get_idx(
		json_object_object_get(st, "devices"), 0)));
	params = json_object_object_get(st, "parameters");
	ASSERT_NE(NULL, params);
	static const char *const names[] = {
		"num_devices", "capacity", "backing_cap", "lut_entries", "total_vfs",
		"pf_max_regions",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "/sys/module/flex/parameters/%s", names[i]);
		EXPECT_EQ(sysfs_num("%s", path), jint(params, names[i]))
			TH_LOG("parameter %s", names[i]);
	}
	json_object_put(st);

	flexctl(&r, "status");
	EXPECT_RUN_OK(&r);
	EXPECT_NE(NULL, strstr(r.out, "State:          live")) TH_LOG("table: %s", r.out);
}

/* ---- devices ---- */

TEST_F_TIMEOUT(ctl, devices_match_the_query, CTL_TIMEOUT)
{
	struct json_object *all, *one, *d, *fns, *pf;
	struct flex_region_acquire a;
	struct flex_query q;
	struct run r;
	int fd = flex_open(FLEX_PF);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, 4 * MiB, &a));
	q = flex_query(fd);

	flexctl(&r, "--json devices");
	EXPECT_RUN_OK(&r);
	all = parse(r.out);
	ASSERT_NE(NULL, all) TH_LOG("devices --json: %s", r.out);
	ASSERT_TRUE(json_object_is_type(all, json_type_array));
	d = find_by(all, "device", 0);
	ASSERT_NE(NULL, d);
	EXPECT_STREQ("flex0", jstr(d, "name"));
	EXPECT_EQ((long long)q.capacity, jint(d, "capacity"));
	EXPECT_EQ((long long)q.free, jint(d, "free"));
	EXPECT_EQ((long long)(q.capacity - q.free), jint(d, "used"));
	EXPECT_EQ((long long)q.largest_free, jint(d, "largest_free"));
	EXPECT_EQ((long long)q.region_align, jint(d, "region_align"));
	EXPECT_EQ(q.total_vfs, jint(d, "total_vfs"));
	EXPECT_EQ(q.num_vfs, jint(d, "num_vfs"));
	EXPECT_EQ(q.table_entries, jint(d, "pf_table_size"));
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/backing_cap"), jint(d, "backing_cap"));
	EXPECT_EQ(sysfs_num(FLEX_SYSFS "/resident"), jint(d, "resident"));
	EXPECT_EQ(sysfs_num("/sys/module/flex/parameters/lut_entries"), jint(d, "vf_table_size"));
	fns = json_object_object_get(d, "functions");
	ASSERT_NE(NULL, fns);
	EXPECT_EQ(1 + q.num_vfs, json_object_array_length(fns));
	pf = json_object_array_get_idx(fns, 0);
	EXPECT_STREQ("pf", jstr(pf, "function"));
	EXPECT_STREQ("flex0", jstr(pf, "name"));
	EXPECT_EQ(q.table_entries, jint(pf, "table_size"));
	EXPECT_EQ(q.table_used, jint(pf, "table_used"));
	EXPECT_EQ(1, jint(pf, "table_used"));
	EXPECT_LE(1, jint(pf, "open_count"));

	/* One device: the non-dump request, the same object. */
	flexctl(&r, "--json devices --device 0");
	EXPECT_RUN_OK(&r);
	one = parse(r.out);
	ASSERT_NE(NULL, one);
	EXPECT_EQ(1, json_object_array_length(one));
	EXPECT_EQ((long long)q.free, jint(json_object_array_get_idx(one, 0), "free"));
	json_object_put(one);

	/* Any user may read the netlink family. */
	flexctl_nobody(&r, "--json devices --device 0");
	EXPECT_RUN_OK(&r);
	flexctl(&r, "devices --device 7");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "no such flex device or function: device 7");
	/* The table form names the device and its function. */
	flexctl(&r, "devices");
	EXPECT_RUN_OK(&r);
	EXPECT_NE(NULL, strstr(r.out, "\nflex0 ")) TH_LOG("devices table: %s", r.out);
	json_object_put(all);
	close(fd);
}

/* ---- vf ---- */

TEST_F_TIMEOUT(ctl, vf_show_enable_disable, CTL_TIMEOUT)
{
	long long total = sysfs_num(FLEX_SYSFS "/sriov_totalvfs");
	struct json_object *st;
	struct run r;
	int fd;

	ASSERT_LE(2, total);
	flexctl(&r, "--json vf show");
	EXPECT_RUN_OK(&r);
	st = parse(r.out);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(total, jint(st, "total_vfs"));
	EXPECT_EQ(0, jint(st, "num_vfs"));
	json_object_put(st);

	flexctl(&r, "--json vf enable 2");
	EXPECT_RUN_OK(&r);
	EXPECT_EQ(2, sysfs_num(FLEX_SYSFS "/sriov_numvfs"));
	st = parse(r.out);
	ASSERT_NE(NULL, st);
	EXPECT_EQ(2, jint(st, "num_vfs"));
	EXPECT_EQ(2, json_object_array_length(json_object_object_get(st, "vfs")));
	EXPECT_STREQ("flex0vf1", jstr(json_object_array_get_idx(json_object_object_get(st, "vfs"), 1),
				      "name"));
	EXPECT_EQ(sysfs_num("/sys/class/flex/flex0vf1/table_size"),
		  jint(json_object_array_get_idx(json_object_object_get(st, "vfs"), 1), "table_size"));
	json_object_put(st);

	flexctl(&r, "vf enable 1");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "run `flexctl vf disable` first");
	/* Reading is for everyone; changing VFs is not. */
	flexctl_nobody(&r, "vf show");
	EXPECT_RUN_OK(&r);
	flexctl_nobody(&r, "vf disable");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "permission denied writing /sys/class/flex/flex0/sriov_numvfs");
	EXPECT_EQ(2, sysfs_num(FLEX_SYSFS "/sriov_numvfs"));
	flexctl(&r, "vf enable %lld", total + 1);
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "cannot enable");

	fd = flex_open("/dev/flex0vf0");
	ASSERT_LE(0, fd);
	flexctl(&r, "vf disable");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "is open");
	EXPECT_EQ(2, sysfs_num(FLEX_SYSFS "/sriov_numvfs"));
	close(fd);
	flexctl(&r, "vf disable");
	EXPECT_RUN_OK(&r);
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/sriov_numvfs"));
	EXPECT_NE(NULL, strstr(r.out, "0 of")) TH_LOG("vf disable: %s", r.out);
}

/* ---- regions and table ---- */

static void check_region(struct __test_metadata *_metadata, struct json_object *rows,
			 const struct flex_region_acquire *a, const char *function)
{
	struct json_object *o = find_by(rows, "handle", a->handle);
	char comm[32];

	ASSERT_NE(NULL, o) TH_LOG("region handle %llu not listed", (unsigned long long)a->handle);
	EXPECT_EQ(0, jint(o, "device"));
	EXPECT_STREQ(function, jstr(o, "function"));
	EXPECT_EQ((long long)a->region_id, jint(o, "region_id"));
	EXPECT_EQ(sysfs_region_num(a->handle, "size"), jint(o, "size"));
	EXPECT_EQ(sysfs_region_num(a->handle, "phys_addr"), jint(o, "phys_addr"));
	EXPECT_EQ(sysfs_region_num(a->handle, "resident"), jint(o, "resident"));
	EXPECT_EQ((long long)a->mmap_offset, jint(o, "mmap_offset"));
	if (a->lut_index == FLEX_NO_LUT_INDEX) {
		EXPECT_TRUE(jnull(o, "lut_index"));
	} else {
		EXPECT_EQ(a->lut_index, jint(o, "lut_index"));
	}
	EXPECT_EQ(getpid(), jint(o, "owner_pid"));
	ASSERT_EQ(0, sysfs_read("/proc/self/comm", comm, sizeof(comm)));
	EXPECT_STREQ(comm, jstr(o, "owner_comm"));
}

TEST_F_TIMEOUT(ctl, regions_and_table_match_what_was_acquired, CTL_TIMEOUT)
{
	struct flex_region_acquire p1, p2, v;
	struct json_object *rows, *one, *e;
	long long align = sysfs_num(FLEX_SYSFS "/region_align");
	struct run r;
	int pf = flex_open(FLEX_PF), vf;

	ASSERT_LE(0, pf);
	ASSERT_EQ(0, flex_acquire(pf, 2 * MiB, &p1));
	ASSERT_EQ(0, flex_acquire(pf, 6 * MiB, &p2));
	ASSERT_EQ(0, set_numvfs(2));
	vf = flex_open("/dev/flex0vf1");
	ASSERT_LE(0, vf);
	ASSERT_EQ(0, flex_acquire(vf, 4 * MiB, &v));

	flexctl(&r, "--json regions");
	EXPECT_RUN_OK(&r);
	rows = parse(r.out);
	ASSERT_NE(NULL, rows) TH_LOG("regions --json: %s", r.out);
	EXPECT_EQ(3, json_object_array_length(rows));
	check_region(_metadata, rows, &p1, "pf");
	check_region(_metadata, rows, &p2, "pf");
	check_region(_metadata, rows, &v, "vf1");
	json_object_put(rows);

	/* Filters: by function (in the request), by pid (in flexctl). */
	flexctl(&r, "--json regions --device 0 --function vf1");
	EXPECT_RUN_OK(&r);
	rows = parse(r.out);
	ASSERT_NE(NULL, rows);
	EXPECT_EQ(1, json_object_array_length(rows));
	EXPECT_EQ((long long)v.handle, jint(json_object_array_get_idx(rows, 0), "handle"));
	json_object_put(rows);
	flexctl(&r, "--json regions --function pf --pid %d", getpid());
	rows = parse(r.out);
	ASSERT_NE(NULL, rows);
	EXPECT_EQ(2, json_object_array_length(rows));
	json_object_put(rows);
	flexctl(&r, "--json regions --pid %d", getpid() + 100000);
	rows = parse(r.out);
	ASSERT_NE(NULL, rows);
	EXPECT_EQ(0, json_object_array_length(rows));
	json_object_put(rows);

	/* One region by handle: the non-dump request. */
	flexctl(&r, "--json regions --handle %llu", (unsigned long long)p2.handle);
	EXPECT_RUN_OK(&r);
	one = parse(r.out);
	ASSERT_NE(NULL, one);
	EXPECT_EQ((long long)p2.region_id, jint(one, "region_id"));
	EXPECT_EQ(6 * MiB, jint(one, "size"));
	json_object_put(one);
	flexctl(&r, "regions --handle 4000000");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "no such region: handle 4000000 on device 0");

	/* Lookup tables: the VF's entry is its region_id. */
	flexctl(&r, "--json table --function vf1");
	EXPECT_RUN_OK(&r);
	rows = parse(r.out);
	ASSERT_NE(NULL, rows);
	EXPECT_EQ(1, json_object_array_length(rows));
	e = json_object_array_get_idx(rows, 0);
	EXPECT_EQ(v.lut_index, jint(e, "index"));
	EXPECT_EQ((long long)v.region_id, jint(e, "region_id"));
	EXPECT_EQ((long long)v.handle, jint(e, "handle"));
	EXPECT_EQ(4 * MiB, jint(e, "size"));
	EXPECT_EQ(sysfs_region_num(v.handle, "phys_addr"), jint(e, "phys_addr"));
	EXPECT_EQ(getpid(), jint(e, "owner_pid"));
	json_object_put(rows);
	flexctl(&r, "--json table --function vf1 --index %u", v.lut_index);
	EXPECT_RUN_OK(&r);
	one = parse(r.out);
	EXPECT_EQ((long long)v.handle, jint(one, "handle"));
	json_object_put(one);
	flexctl(&r, "table --function vf1 --index %u", v.lut_index == 7 ? 6 : 7);
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, v.lut_index == 7 ? "no such table entry: index 6 on device 0" :
		   "no such table entry: index 7 on device 0");
	flexctl(&r, "table --function vf3 --index 0");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "no such flex device or function: device 0, function vf3");
	/*
	 * The PF's entries: the offset in device memory in units of
	 * region_align (device memory need not start at physical 0, so
	 * compare the two regions' distance).
	 */
	flexctl(&r, "--json table --function pf");
	rows = parse(r.out);
	ASSERT_NE(NULL, rows);
	EXPECT_EQ(2, json_object_array_length(rows));
	e = find_by(rows, "handle", p2.handle);
	ASSERT_NE(NULL, e);
	ASSERT_NE(NULL, find_by(rows, "handle", p1.handle));
	EXPECT_EQ((sysfs_region_num(p2.handle, "phys_addr") -
		   sysfs_region_num(p1.handle, "phys_addr")) / align,
		  jint(e, "index") - jint(find_by(rows, "handle", p1.handle), "index"));
	EXPECT_EQ(sysfs_region_num(p2.handle, "phys_addr"), jint(e, "phys_addr"));
	json_object_put(rows);
	/* All tables: the three entries. */
	flexctl(&r, "--json table");
	rows = parse(r.out);
	EXPECT_EQ(3, json_object_array_length(rows));
	json_object_put(rows);

	/* Human-readable table: a header and the owner. */
	flexctl(&r, "regions");
	EXPECT_RUN_OK(&r);
	EXPECT_NE(NULL, strstr(r.out, "REGION_ID")) TH_LOG("regions: %s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "6 MiB")) TH_LOG("regions: %s", r.out);

	close(vf);
	EXPECT_EQ(0, set_numvfs(0));
	close(pf);
	/* Released with their file: gone from the list. */
	flexctl(&r, "--json regions");
	rows = parse(r.out);
	EXPECT_EQ(0, json_object_array_length(rows));
	json_object_put(rows);
}

/* ---- queues ---- */

/* A sticky unmapped fault on queue @q (DMA into a region released before it runs). */
static void make_fault(struct __test_metadata *_metadata, int fd, __u32 q, __u64 keep_id,
		       __u64 *gone_id)
{
	struct flex_region_acquire gone;
	struct flex_cb cb;
	static __u32 v = 7;
	__u64 seq;

	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &gone));
	ASSERT_EQ(0, engines_pause(1));
	cb = cb_dma(1, &v, gone.region_id, 64, 4);
	cb.user_data = 0xfeed;
	ASSERT_EQ(0, submit(fd, q, &cb, 1, 0, &seq));
	ASSERT_EQ(0, flex_release(fd, gone.region_id));
	ASSERT_EQ(0, engines_pause(0));
	EXPECT_EQ(-ENXIO, wait_seq(fd, q, seq, 10000));
	*gone_id = gone.region_id;
	(void)keep_id;
}

TEST_F_TIMEOUT(ctl, queues_match_what_was_created, CTL_TIMEOUT)
{
	struct flex_region_acquire reg;
	struct json_object *rows, *o, *f, *one;
	struct flex_queue_status s1, s2;
	int fd = flex_open(FLEX_PF), q1, q2, i;
	__u64 seq, gone;
	struct run r;
	char comm[32];

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, sysfs_read("/proc/self/comm", comm, sizeof(comm)));
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &reg));
	q1 = queue_create(fd, FLEX_QUEUE_PRIO_HIGH, 16);
	q2 = queue_create(fd, FLEX_QUEUE_PRIO_LOW, 0);
	ASSERT_LE(0, q1);
	ASSERT_LE(0, q2);
	for (i = 0; i < 3; i++) {
		struct flex_cb nop = { .opcode = FLEX_CB_NOP };

		ASSERT_EQ(0, submit(fd, q1, &nop, 1, 0, &seq));
	}
	ASSERT_EQ(0, wait_seq(fd, q1, seq, 10000));
	make_fault(_metadata, fd, q2, reg.region_id, &gone);
	s1 = queue_status(fd, q1);
	s2 = queue_status(fd, q2);

	flexctl(&r, "--json queues --pid %d", getpid());
	EXPECT_RUN_OK(&r);
	rows = parse(r.out);
	ASSERT_NE(NULL, rows) TH_LOG("queues --json: %s", r.out);
	ASSERT_EQ(2, json_object_array_length(rows));
	o = find_by(rows, "queue_id", q1);
	ASSERT_NE(NULL, o);
	EXPECT_STREQ("pf", jstr(o, "function"));
	EXPECT_EQ(FLEX_QUEUE_PRIO_HIGH, jint(o, "priority"));
	EXPECT_STREQ("high", jstr(o, "priority_name"));
	EXPECT_EQ(s1.depth, jint(o, "depth"));
	EXPECT_EQ(16, jint(o, "depth"));
	EXPECT_EQ((long long)s1.submitted, jint(o, "submitted"));
	EXPECT_EQ(3, jint(o, "submitted"));
	EXPECT_EQ((long long)s1.completed, jint(o, "completed"));
	EXPECT_EQ(0, jint(o, "pending"));
	EXPECT_EQ(0, jint(o, "faults"));
	EXPECT_FALSE(json_object_get_boolean(json_object_object_get(o, "faulted")));
	EXPECT_EQ(NULL, json_object_object_get(o, "fault"));
	EXPECT_EQ(getpid(), jint(o, "owner_pid"));
	EXPECT_STREQ(comm, jstr(o, "owner_comm"));

	o = find_by(rows, "queue_id", q2);
	ASSERT_NE(NULL, o);
	EXPECT_EQ(FLEX_QUEUE_PRIO_LOW, jint(o, "priority"));
	EXPECT_EQ(FLEX_QUEUE_DEFAULT_DEPTH, jint(o, "depth"));
	EXPECT_EQ(1, jint(o, "faults"));
	EXPECT_TRUE(json_object_get_boolean(json_object_object_get(o, "faulted")));
	f = json_object_object_get(o, "fault");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(s2.fault_code, jint(f, "code"));
	EXPECT_STREQ("unmapped", jstr(f, "code_name"));
	EXPECT_EQ(s2.fault_errno, jint(f, "errno"));
	EXPECT_EQ(-ENXIO, jint(f, "errno"));
	EXPECT_EQ((long long)s2.fault_seqno, jint(f, "seqno"));
	EXPECT_EQ(0xfeed, jint(f, "user_data"));
	EXPECT_EQ(FLEX_CB_DMA_TO_DEVICE, jint(f, "opcode"));
	EXPECT_EQ((long long)gone, jint(f, "region_id"));
	EXPECT_EQ(64, jint(f, "offset"));

	/* One queue by its device-wide handle. */
	flexctl(&r, "--json queues --device 0 --handle %lld", jint(o, "handle"));
	EXPECT_RUN_OK(&r);
	one = parse(r.out);
	EXPECT_EQ(q2, jint(one, "queue_id"));
	json_object_put(one);
	flexctl(&r, "queues --handle 4000000");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "no such queue: handle 4000000 on device 0");
	flexctl(&r, "queues --pid %d", getpid());
	EXPECT_RUN_OK(&r);
	EXPECT_NE(NULL, strstr(r.out, "fault unmapped at seqno")) TH_LOG("queues: %s", r.out);
	json_object_put(rows);
	close(fd);
	flexctl(&r, "--json queues --pid %d", getpid());
	rows = parse(r.out);
	EXPECT_EQ(0, json_object_array_length(rows)) TH_LOG("queues outlived their file");
	json_object_put(rows);
}

/* ---- monitor ---- */

struct monitor {
	pid_t pid;
	int out, err;
};

/* Start `flexctl --json monitor --count N` and wait until it listens. */
static int monitor_start(struct monitor *m, unsigned int count)
{
	int out[2], err[2];
	char buf[256], cnt[16];
	size_t used = 0;

	m->pid = -1;
	m->out = m->err = -1;
	snprintf(cnt, sizeof(cnt), "%u", count);
	if (pipe(out) || pipe(err))
		return -errno;
	m->pid = fork();
	if (m->pid == 0) {
		dup2(out[1], 1);
		dup2(err[1], 2);
		close(out[0]);
		close(err[0]);
		execl(flexctl_path(), flexctl_path(), "--json", "monitor", "--count", cnt, NULL);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	m->out = out[0];
	m->err = err[0];
	/* Its first stderr line says it joined the group. */
	while (used < sizeof(buf) - 1 && read(m->err, buf + used, 1) == 1) {
		if (buf[used++] == '\n')
			break;
	}
	buf[used] = '\0';
	return strstr(buf, "monitoring flex events") ? 0 : -EIO;
}

TEST_F_TIMEOUT(ctl, monitor_prints_every_event, CTL_TIMEOUT)
{
	static const char *const want[] = {
		"region_acquired", "region_released", "vfs_enabled", "region_acquired",
		"region_released", "vfs_disabled", "region_acquired", "region_acquired",
		"region_released", "queue_fault", "region_released",
	};
	const unsigned int n = sizeof(want) / sizeof(want[0]);
	struct flex_region_acquire a, b, keep;
	struct json_object *ev[16] = { 0 };
	char out[16384], *line, *save = NULL;
	struct monitor m;
	int fd, vf, q, st;
	unsigned int i = 0;
	__u64 gone;

	ASSERT_EQ(0, monitor_start(&m, n)) TH_LOG("flexctl monitor did not start");
	fd = flex_open(FLEX_PF);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &a));		/* 0 */
	ASSERT_EQ(0, flex_release(fd, a.region_id));		/* 1 */
	ASSERT_EQ(0, set_numvfs(1));				/* 2 */
	vf = flex_open("/dev/flex0vf0");
	ASSERT_LE(0, vf);
	ASSERT_EQ(0, flex_acquire(vf, 2 * MiB, &b));		/* 3 */
	close(vf);						/* 4: released with its file */
	ASSERT_EQ(0, set_numvfs(0));				/* 5 */
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &keep));	/* 6 */
	q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
	ASSERT_LE(0, q);
	make_fault(_metadata, fd, q, keep.region_id, &gone);	/* 7, 8, 9 */
	close(fd);						/* 10 */

	read_all(m.out, out, sizeof(out));
	ASSERT_EQ(m.pid, waitpid(m.pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("monitor exit status %d", st);
	close(m.out);
	close(m.err);
	for (line = strtok_r(out, "\n", &save); line && i < 16; line = strtok_r(NULL, "\n", &save))
		ev[i++] = parse(line);
	ASSERT_EQ(n, i) TH_LOG("expected %u events, got %u", n, i);
	for (i = 0; i < n; i++) {
		ASSERT_NE(NULL, ev[i]) TH_LOG("event %u is not JSON", i);
		EXPECT_STREQ(want[i], jstr(ev[i], "event")) TH_LOG("event %u", i);
		EXPECT_EQ(0, jint(ev[i], "device"));
		EXPECT_NE(NULL, strstr(jstr(ev[i], "time"), "T")) TH_LOG("event %u time", i);
	}
	EXPECT_EQ((long long)a.handle, jint(ev[0], "handle"));
	EXPECT_EQ((long long)a.region_id, jint(ev[0], "region_id"));
	EXPECT_EQ(2 * MiB, jint(ev[0], "size"));
	EXPECT_STREQ("pf", jstr(ev[0], "function"));
	EXPECT_EQ(getpid(), jint(ev[0], "owner_pid"));
	EXPECT_EQ((long long)a.handle, jint(ev[1], "handle"));
	EXPECT_EQ(1, jint(ev[2], "num_vfs"));
	EXPECT_EQ((long long)b.handle, jint(ev[3], "handle"));
	EXPECT_STREQ("vf0", jstr(ev[3], "function"));
	EXPECT_EQ(b.lut_index, jint(ev[3], "lut_index"));
	EXPECT_EQ((long long)b.handle, jint(ev[4], "handle"));
	EXPECT_EQ(1, jint(ev[5], "num_vfs"));
	EXPECT_EQ((long long)keep.handle, jint(ev[6], "handle"));
	EXPECT_EQ(q, jint(ev[9], "queue_id"));
	EXPECT_STREQ("unmapped", jstr(json_object_object_get(ev[9], "fault"), "code_name"));
	EXPECT_EQ((long long)gone, jint(json_object_object_get(ev[9], "fault"), "region_id"));
	EXPECT_EQ(0xfeed, jint(json_object_object_get(ev[9], "fault"), "user_data"));
	EXPECT_EQ((long long)keep.handle, jint(ev[10], "handle"));
	for (i = 0; i < n; i++)
		json_object_put(ev[i]);
}

/* Reads @fd into @out until it holds @want, the end, or @size - 1 bytes. */
static void read_until(int fd, char *out, size_t size, const char *want)
{
	size_t used = 0;

	out[0] = '\0';
	while (used < size - 1 && !strstr(out, want)) {
		ssize_t n = read(fd, out + used, size - 1 - used);

		if (n <= 0)
			break;
		used += n;
		out[used] = '\0';
	}
}

TEST_F_TIMEOUT(ctl, monitor_human_output_and_interrupt, CTL_TIMEOUT)
{
	struct flex_region_acquire a;
	struct monitor m;
	char out[4096];
	int fd, st;
	int outp[2], errp[2];
	char buf[256];
	size_t used = 0;

	/* Without --count: runs until SIGINT, then exits 0 with its output flushed. */
	ASSERT_EQ(0, pipe(outp));
	ASSERT_EQ(0, pipe(errp));
	m.pid = fork();
	if (m.pid == 0) {
		dup2(outp[1], 1);
		dup2(errp[1], 2);
		close(outp[0]);
		close(errp[0]);
		execl(flexctl_path(), flexctl_path(), "monitor", NULL);
		_exit(127);
	}
	close(outp[1]);
	close(errp[1]);
	while (used < sizeof(buf) - 1 && read(errp[0], buf + used, 1) == 1)
		if (buf[used++] == '\n')
			break;
	buf[used] = '\0';
	ASSERT_NE(NULL, strstr(buf, "monitoring")) TH_LOG("monitor said: %s", buf);
	fd = flex_open(FLEX_PF);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, flex_acquire(fd, 2 * MiB, &a));
	close(fd);
	/* Wait for both lines before interrupting (no timing involved). */
	read_until(outp[0], out, sizeof(out), "region released");
	kill(m.pid, SIGINT);
	ASSERT_EQ(m.pid, waitpid(m.pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("after SIGINT: status %d", st);
	EXPECT_NE(NULL, strstr(out, "flex0 pf: region acquired: handle")) TH_LOG("got: %s", out);
	EXPECT_NE(NULL, strstr(out, "flex0 pf: region released: handle")) TH_LOG("got: %s", out);
	close(outp[0]);
	close(errp[0]);
}

/* ---- ps and top ---- */

/*
 * A process holding a device node open: a region, a queue on which it ran
 * @ndma DMA CBs and one compute CB (its program's upload is one DMA more),
 * as user @uid (0: root) once the node is open. It says its client id
 * through a pipe, then waits for its pipe to close; a busy holder runs
 * compute CBs until then.
 */
struct holder {
	pid_t pid;
	int to_child;
	long long client_id;
};

/*
 * The write ends of the holders' pipes: a holder closes the others', or
 * it would keep another holder waiting for its pipe to close.
 */
static int holder_fds[4] = { -1, -1, -1, -1 };

static int holder_start(struct holder *h, const char *node, __u64 size, int ndma, uid_t uid,
			bool busy)
{
	int down[2], up[2];

	h->pid = -1;
	if (pipe(down) || pipe(up))
		return -errno;
	h->pid = fork();
	if (h->pid < 0)
		return -errno;
	if (h->pid == 0) {
		static __u32 buf[4096];
		unsigned int j;
		struct flex_region_acquire a = { 0 };
		long long id = -1;
		int fd, q = -1, i;
		char c;

		close(down[1]);
		close(up[0]);
		for (j = 0; j < 4; j++)
			if (holder_fds[j] >= 0)
				close(holder_fds[j]);
		fd = flex_open(node);
		/* Dumpable again after setuid, so that its user reads its fdinfo. */
		if (fd < 0 || (uid && (setgroups(0, NULL) || setgid(uid) || setuid(uid) ||
				       prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))))
			goto out;
		if (flex_acquire(fd, size, &a))
			goto out;
		q = queue_create(fd, FLEX_QUEUE_PRIO_NORMAL, 0);
		for (i = 0; q > 0 && i < ndma; i++)
			if (run_cb(fd, q, cb_dma(1, buf, a.region_id, 0, sizeof(buf))))
				goto out;
		if (q <= 0 || run_fill(fd, q, a.region_id, 65536))
			goto out;
		id = fdinfo_num(fd, "flex-client-id");
out:
		if (write(up[1], &id, sizeof(id)) != sizeof(id) || id < 0)
			_exit(1);
		if (busy) {
			fcntl(down[0], F_SETFL, O_NONBLOCK);
			while (read(down[0], &c, 1) < 0 && errno == EAGAIN)
				if (run_fill(fd, q, a.region_id, 256 * 1024))
					_exit(2);
		} else {
			while (read(down[0], &c, 1) > 0)
				;
		}
		_exit(0);
	}
	close(down[0]);
	close(up[1]);
	h->to_child = down[1];
	/* flexctl, run meanwhile, must not hold it either. */
	fcntl(h->to_child, F_SETFD, FD_CLOEXEC);
	for (int j = 0; j < 4; j++)
		if (holder_fds[j] < 0) {
			holder_fds[j] = h->to_child;
			break;
		}
	if (read(up[0], &h->client_id, sizeof(h->client_id)) != sizeof(h->client_id))
		h->client_id = -1;
	close(up[0]);
	return h->client_id < 0 ? -EIO : 0;
}

static int holder_stop(struct holder *h)
{
	int st = -1;

	if (h->pid <= 0)
		return -1;
	for (int j = 0; j < 4; j++)
		if (holder_fds[j] == h->to_child)
			holder_fds[j] = -1;
	close(h->to_child);
	waitpid(h->pid, &st, 0);
	h->pid = -1;
	return st;
}

/* The row of client @id among ps's files, or NULL. */
static struct json_object *find_client(struct json_object *files, long long id)
{
	return find_by(files, "client_id", id);
}

static void check_ps_row(struct __test_metadata *_metadata, const char *cas,
			 struct json_object *files, const struct holder *h, const char *name,
			 const char *function, long long bytes, long long cbs)
{
	struct json_object *o = find_client(files, h->client_id);

	ASSERT_NE(NULL, o) TH_LOG("%s: client %lld (pid %d) not listed", cas, h->client_id, h->pid);
	EXPECT_EQ(h->pid, jint(o, "pid")) TH_LOG("%s: pid: expected %d, got %lld", cas, h->pid,
						 jint(o, "pid"));
	EXPECT_STREQ(name, jstr(o, "name")) TH_LOG("%s: name", cas);
	EXPECT_STREQ(function, jstr(o, "function")) TH_LOG("%s: function", cas);
	EXPECT_EQ(1, jint(o, "regions")) TH_LOG("%s: regions: expected 1, got %lld", cas,
						jint(o, "regions"));
	EXPECT_EQ(bytes, jint(o, "bytes")) TH_LOG("%s: bytes: expected %lld, got %lld", cas, bytes,
						  jint(o, "bytes"));
	EXPECT_EQ(1, jint(o, "queues")) TH_LOG("%s: queues: expected 1, got %lld", cas,
					       jint(o, "queues"));
	EXPECT_EQ(cbs, jint(o, "cbs_completed")) TH_LOG("%s: cbs_completed: expected %lld, got %lld",
							cas, cbs, jint(o, "cbs_completed"));
	EXPECT_EQ(0, jint(o, "faults")) TH_LOG("%s: faults", cas);
	/*
	 * The engines' time, as fdinfo has it. One CB may count 0 ns (the
	 * scheduler clamps a CB whose start and end were read on two CPUs
	 * whose clocks disagree, as vCPUs under TCG do), so the sum.
	 */
	EXPECT_LE(0, jint(o, "engine_dma_ns")) TH_LOG("%s: engine_dma_ns absent", cas);
	EXPECT_LE(0, jint(o, "engine_compute_ns")) TH_LOG("%s: engine_compute_ns absent", cas);
	EXPECT_LT(0, jint(o, "engine_dma_ns") + jint(o, "engine_compute_ns"))
		TH_LOG("%s: engine time: expected > 0, got dma %lld + compute %lld ns", cas,
		       jint(o, "engine_dma_ns"), jint(o, "engine_compute_ns"));
}

TEST_F_TIMEOUT(ctl, ps_lists_the_clients_of_the_pf_and_a_vf, CTL_TIMEOUT)
{
	struct holder pf = { .pid = -1 }, vf = { .pid = -1 };
	struct json_object *ps, *files;
	struct run r;

	set_numvfs(0);
	ASSERT_EQ(0, set_numvfs(1));
	ASSERT_EQ(0, holder_start(&pf, FLEX_PF, 6 * MiB, 3, 0, false));
	ASSERT_EQ(0, holder_start(&vf, "/dev/flex0vf0", 2 * MiB, 2, NOBODY, false));
	EXPECT_NE(pf.client_id, vf.client_id);

	/* root: every open file, from netlink. */
	flexctl(&r, "--json ps");
	EXPECT_RUN_OK(&r);
	ps = parse(r.out);
	ASSERT_NE(NULL, ps) TH_LOG("ps --json: %s", r.out);
	EXPECT_STREQ("netlink", jstr(ps, "source"));
	files = json_object_object_get(ps, "files");
	check_ps_row(_metadata, "ps as root, the PF process", files, &pf, "flex0", "pf", 6 * MiB, 5);
	check_ps_row(_metadata, "ps as root, the VF process", files, &vf, "flex0vf0", "vf0",
		     2 * MiB, 4);
	json_object_put(ps);
	flexctl(&r, "--json ps --device 0");
	EXPECT_RUN_OK(&r);
	flexctl(&r, "ps");
	EXPECT_RUN_OK(&r);
	EXPECT_NE(NULL, strstr(r.out, "source: netlink")) TH_LOG("ps: %s", r.out);
	EXPECT_NE(NULL, strstr(r.out, "flex0vf0")) TH_LOG("ps: %s", r.out);

	/* nobody: its own processes' files only, from fdinfo. */
	flexctl_nobody(&r, "--json ps");
	EXPECT_RUN_OK(&r);
	ps = parse(r.out);
	ASSERT_NE(NULL, ps) TH_LOG("ps --json as nobody: %s", r.out);
	EXPECT_STREQ("fdinfo", jstr(ps, "source"));
	files = json_object_object_get(ps, "files");
	EXPECT_EQ(1, json_object_array_length(files))
		TH_LOG("ps as nobody: expected 1 file (its own), got %zu: %s",
		       json_object_array_length(files), r.out);
	check_ps_row(_metadata, "ps as nobody, its VF process", files, &vf, "flex0vf0", "vf0",
		     2 * MiB, 4);
	EXPECT_EQ(NULL, find_client(files, pf.client_id)) TH_LOG("ps as nobody lists root's file");
	json_object_put(ps);
	flexctl_nobody(&r, "ps");
	EXPECT_RUN_OK(&r);
	EXPECT_NE(NULL, strstr(r.out, "source: fdinfo")) TH_LOG("ps as nobody: %s", r.out);

	EXPECT_EQ(0, holder_stop(&pf));
	EXPECT_EQ(0, holder_stop(&vf));
	EXPECT_EQ(0, set_numvfs(0));
	flexctl(&r, "--json ps");
	ps = parse(r.out);
	files = json_object_object_get(ps, "files");
	EXPECT_EQ(NULL, find_client(files, pf.client_id)) TH_LOG("a closed file is still listed");
	json_object_put(ps);
}

/* The function @fn ("pf", "vfM") of device 0 in a top line, or NULL. */
static struct json_object *top_fn(struct json_object *line, const char *fn)
{
	struct json_object *devs = json_object_object_get(line, "devices");
	struct json_object *fns = json_object_object_get(json_object_array_get_idx(devs, 0),
							 "functions");

	for (size_t i = 0; fns && i < json_object_array_length(fns); i++)
		if (!strcmp(jstr(json_object_array_get_idx(fns, i), "function"), fn))
			return json_object_array_get_idx(fns, i);
	return NULL;
}

static double jdouble(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!o || !json_object_object_get_ex(o, key, &v) || !v)
		return -1;
	return json_object_get_double(v);
}

TEST_F_TIMEOUT(ctl, top_json_shows_memory_and_moving_engine_figures, CTL_TIMEOUT)
{
	struct holder busy = { .pid = -1 };
	struct json_object *line[2], *f[2];
	char *save = NULL, *tok;
	int n = 0;
	struct run r;

	ASSERT_EQ(0, holder_start(&busy, FLEX_PF, 4 * MiB, 1, 0, true));
	flexctl(&r, "--json top --count 2 --interval 1");
	EXPECT_EQ(0, holder_stop(&busy));
	EXPECT_RUN_OK(&r);
	for (tok = strtok_r(r.out, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
		ASSERT_GT(2, n) TH_LOG("top --count 2: more than two lines");
		line[n] = parse(tok);
		ASSERT_NE(NULL, line[n]) TH_LOG("top line %d is not JSON: %s", n + 1, tok);
		f[n] = top_fn(line[n], "pf");
		ASSERT_NE(NULL, f[n]) TH_LOG("top line %d has no pf: %s", n + 1, tok);
		n++;
	}
	ASSERT_EQ(2, n) TH_LOG("top --count 2: expected 2 lines, got %d", n);
	for (int i = 0; i < 2; i++) {
		EXPECT_LE(4 * MiB, jint(f[i], "used")) TH_LOG("line %d: used: expected >= 4 MiB, got %lld",
							    i + 1, jint(f[i], "used"));
		EXPECT_EQ(sysfs_num(FLEX_SYSFS "/quota_capacity"), jint(f[i], "quota_capacity"))
			TH_LOG("line %d: quota_capacity", i + 1);
		EXPECT_LE(0, jdouble(f[i], "memory_pct")) TH_LOG("line %d: memory_pct", i + 1);
		EXPECT_LT(0, jdouble(line[i], "interval")) TH_LOG("line %d: interval", i + 1);
		EXPECT_STREQ("flex0", jstr(f[i], "name"));
	}
	EXPECT_LT(jint(f[0], "engine_compute_ns"), jint(f[1], "engine_compute_ns"))
		TH_LOG("engine_compute_ns should grow while work runs: %lld then %lld",
		       jint(f[0], "engine_compute_ns"), jint(f[1], "engine_compute_ns"));
	EXPECT_LT(0, jdouble(f[0], "engine_compute_busy_pct"))
		TH_LOG("engine_compute_busy_pct while busy: expected > 0, got %f",
		       jdouble(f[0], "engine_compute_busy_pct"));
	EXPECT_LT(0, jdouble(f[0], "cbs_per_s"))
		TH_LOG("cbs_per_s while busy: expected > 0, got %f", jdouble(f[0], "cbs_per_s"));
	json_object_put(line[0]);
	json_object_put(line[1]);
}

TEST_F_TIMEOUT(ctl, top_redraws_until_interrupted, CTL_TIMEOUT)
{
	char out[8192];
	int outp[2], st;
	pid_t pid;

	ASSERT_EQ(0, pipe(outp));
	pid = fork();
	if (pid == 0) {
		dup2(outp[1], 1);
		close(outp[0]);
		execl(flexctl_path(), flexctl_path(), "top", "--interval", "0.2", NULL);
		_exit(127);
	}
	close(outp[1]);
	/* Interrupt once a refresh is out: its handler is in place by then. */
	read_until(outp[0], out, sizeof(out), "CBS/S");
	kill(pid, SIGINT);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) TH_LOG("after SIGINT: status %d", st);
	EXPECT_NE(NULL, strstr(out, "flexctl top")) TH_LOG("top printed: %s", out);
	EXPECT_NE(NULL, strstr(out, "QUOTA")) TH_LOG("top printed: %s", out);
	close(outp[0]);
}

/* ---- memmap with live owners ---- */

/* A whole (small) file, NUL-terminated, or NULL; free() it. */
static char *slurp(const char *path, size_t *len)
{
	char *text = calloc(1, 1 << 16);
	FILE *f = fopen(path, "r");

	*len = 0;
	if (!f || !text) {
		if (f)
			fclose(f);
		free(text);
		return NULL;
	}
	*len = fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	return text;
}

TEST_F_TIMEOUT(ctl, memmap_device_draws_every_region, CTL_TIMEOUT)
{
	char svg[256], want[128];
	struct flex_region_acquire p1, p2, v;
	int pf = flex_open(FLEX_PF), vf;
	char *text;
	size_t len;
	struct run r;

	ASSERT_LE(0, pf);
	set_numvfs(0);
	ASSERT_EQ(0, set_numvfs(1));
	vf = flex_open("/dev/flex0vf0");
	ASSERT_LE(0, vf);
	ASSERT_EQ(0, flex_acquire(pf, 4 * MiB, &p1));
	ASSERT_EQ(0, flex_acquire(pf, 2 * MiB, &p2));
	ASSERT_EQ(0, flex_acquire(vf, 6 * MiB, &v));
	if (getenv("FLEX_VM_OUT"))
		snprintf(svg, sizeof(svg), "%s/flexctl-device-memmap.svg", getenv("FLEX_VM_OUT"));
	else
		snprintf(svg, sizeof(svg), "/tmp/flexctl-device-memmap.%d.svg", getpid());
	flexctl(&r, "--json memmap --device 0 -o %s", svg);
	EXPECT_RUN_OK(&r);
	EXPECT_NE(NULL, strstr(r.out, "\"regions\":")) TH_LOG("memmap --device: %s", r.out);
	text = slurp(svg, &len);
	ASSERT_NE(NULL, text) TH_LOG("memmap --device wrote no %s", svg);
	for (int i = 0; i < 3; i++) {
		const struct flex_region_acquire *a = i == 0 ? &p1 : i == 1 ? &p2 : &v;

		snprintf(want, sizeof(want), "data-handle=\"%llu\"", (unsigned long long)a->handle);
		EXPECT_NE(NULL, strstr(text, want)) TH_LOG("memmap --device: no rect with %s", want);
		snprintf(want, sizeof(want), "handle %llu \xc2\xb7 flex0 %s \xc2\xb7 pid %d",
			 (unsigned long long)a->handle, i < 2 ? "pf" : "vf0", getpid());
		EXPECT_NE(NULL, strstr(text, want)) TH_LOG("memmap --device: no line \"%s\"", want);
	}
	EXPECT_NE(NULL, strstr(text, "flex0vf0: 1 region, 6 MiB"))
		TH_LOG("memmap --device: the legend lacks the VF's 6 MiB");
	free(text);
	if (!getenv("FLEX_VM_OUT"))
		unlink(svg);
	flexctl_nobody(&r, "memmap --device 0");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "CAP_NET_ADMIN");
	flexctl(&r, "memmap --device 7");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "no such flex device: 7");
	close(vf);
	close(pf);
	EXPECT_EQ(0, set_numvfs(0));
}

TEST_F_TIMEOUT(ctl, memmap_labels_regions_with_their_live_owner, CTL_TIMEOUT)
{
	char dir[] = "/tmp/flexctl_test.XXXXXX", report[256], svg[256], want[256], comm[32];
	struct flex_region_acquire a;
	char *text = NULL;
	size_t len = 0;
	struct run r;
	FILE *f;
	int fd = flex_open(FLEX_PF);

	ASSERT_LE(0, fd);
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, flex_acquire(fd, 4 * MiB, &a));
	ASSERT_EQ(0, sysfs_read("/proc/self/comm", comm, sizeof(comm)));
	/* A libflex report (the format of flex_alloc_report JSON) over that region. */
	snprintf(report, sizeof(report), "%s/report.json", dir);
	f = fopen(report, "w");
	ASSERT_NE(NULL, f);
	fprintf(f, "{\"summary\":{\"allocated_bytes\":1048576,\"reserved_bytes\":4194304,"
		"\"free_bytes\":3145728,\"largest_free_block\":3145728,\"num_live_blocks\":1,"
		"\"num_free_blocks\":1,\"num_regions\":1,\"fragmentation\":0},\"regions\":["
		"{\"region\":0,\"region_id\":%llu,\"size\":4194304,\"blocks\":["
		"{\"offset\":0,\"size\":1048576,\"state\":\"allocated\",\"kind\":\"tensor\","
		"\"index\":\"0x10001\",\"requested\":1048576},"
		"{\"offset\":1048576,\"size\":3145728,\"state\":\"free\"}]}]}\n",
		(unsigned long long)a.region_id);
	fclose(f);
	/* Kept with the run's output when flex-vm gives a directory. */
	if (getenv("FLEX_VM_OUT"))
		snprintf(svg, sizeof(svg), "%s/flexctl-memmap.svg", getenv("FLEX_VM_OUT"));
	else
		snprintf(svg, sizeof(svg), "%s/map.svg", dir);
	flexctl(&r, "--json memmap --function pf -o %s %s", svg, report);
	EXPECT_RUN_OK(&r);
	EXPECT_NE(NULL, strstr(r.out, "\"owners\":true")) TH_LOG("memmap: %s", r.out);
	text = slurp(svg, &len);
	ASSERT_NE(NULL, text);
	ASSERT_LT(0, len);
	snprintf(want, sizeof(want), "owner %s (pid %d) \xc2\xb7 flex0 pf \xc2\xb7 handle %llu",
		 comm, getpid(), (unsigned long long)a.handle);
	EXPECT_NE(NULL, strstr(text, want)) TH_LOG("the SVG should name the owner: \"%s\"", want);
	EXPECT_NE(NULL, strstr(text, "class=\"block tensor\"")) TH_LOG("no tensor block drawn");
	free(text);

	flexctl(&r, "memmap %s/missing.json", dir);
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "cannot read memory report");
	close(fd);
	unlink(report);
	if (!getenv("FLEX_VM_OUT"))
		unlink(svg);
	rmdir(dir);
}

/* ---- load, unload and the module being absent (last: it reloads) ---- */

static char saved_params[512];

/* In the harness's parent, before any test: every test child inherits them. */
static void __attribute__((constructor)) save_params(void)
{
	static const char *const names[] = {
		"num_devices", "capacity", "backing_cap", "lut_entries", "total_vfs",
		"pf_max_regions", "cb_timeout_ms", "engine_poll_us", "test_hooks",
	};
	size_t used = 0;

	saved_params[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[128], v[64];

		snprintf(path, sizeof(path), "/sys/module/flex/parameters/%s", names[i]);
		if (!sysfs_read(path, v, sizeof(v)))
			used += snprintf(saved_params + used, sizeof(saved_params) - used, "%s%s=%s",
					 used ? " " : "", names[i], v);
	}
}

/* Whatever happened, leave the module loaded (flex-vm unloads it at the end). */
static void ensure_loaded(const char *ko)
{
	char cmd[1024];

	if (access("/sys/module/flex", F_OK) == 0)
		return;
	snprintf(cmd, sizeof(cmd), "insmod %s %s", ko, saved_params);
	if (system(cmd))
		fprintf(stderr, "# could not reload flex: %s\n", cmd);
}

TEST_F_TIMEOUT(ctl, load_unload_and_messages_when_absent, CTL_TIMEOUT)
{
	static const char *const need_module[] = {
		"devices", "regions", "queues", "table", "monitor", "vf",
	};
	const char *ko = getenv("FLEX_KO");
	struct json_object *st;
	struct run r;
	int fd;

	if (!ko || access(ko, R_OK))
		SKIP(return, "FLEX_KO not given");
	ASSERT_NE(0, saved_params[0]) TH_LOG("no module parameters were read at start");

	/* Not root: refused with the reason, the module stays. */
	flexctl_nobody(&r, "unload");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "permission denied unloading flex");
	EXPECT_EQ(0, access("/sys/module/flex", F_OK));

	/* Refused while a file is open, with the reason. */
	fd = flex_open(FLEX_PF);
	ASSERT_LE(0, fd);
	flexctl(&r, "unload");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "in use");
	close(fd);

	flexctl(&r, "unload");
	EXPECT_RUN_OK(&r);
	EXPECT_NE(0, access("/sys/module/flex", F_OK)) TH_LOG("flexctl unload left the module");
	if (access("/sys/module/flex", F_OK) == 0)
		return;

	flexctl(&r, "--json status");
	EXPECT_RUN_OK(&r);
	st = parse(r.out);
	EXPECT_FALSE(json_object_get_boolean(json_object_object_get(st, "loaded")));
	EXPECT_STREQ("not loaded", jstr(st, "state"));
	json_object_put(st);
	for (size_t i = 0; i < sizeof(need_module) / sizeof(need_module[0]); i++) {
		flexctl(&r, "%s", need_module[i]);
		EXPECT_EQ(1, r.status) TH_LOG("%s without the module exited %d", need_module[i],
					      r.status);
		EXPECT_NE(NULL, strstr(r.err, "the flex module is not loaded"))
			TH_LOG("%s without the module said \"%s\"", need_module[i], r.err);
	}
	flexctl(&r, "unload");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "the flex module is not loaded");
	/* Not installed under /lib/modules in the VM: the message says what to do. */
	flexctl(&r, "load");
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "--module PATH");
	flexctl(&r, "load --module %s no_such_param=1", ko);
	EXPECT_EQ(2, r.status);
	EXPECT_MSG(&r, "has no parameter 'no_such_param'");
	flexctl(&r, "load --module %s total_vfs=99", ko);
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "failed");

	flexctl_nobody(&r, "load --module %s %s", ko, saved_params);
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "permission denied loading");
	EXPECT_NE(0, access("/sys/module/flex", F_OK));

	flexctl(&r, "load --module %s %s", ko, saved_params);
	EXPECT_RUN_OK(&r);
	EXPECT_EQ(0, access("/dev/flex0", F_OK)) TH_LOG("/dev/flex0 missing after flexctl load");
	flexctl(&r, "--json status");
	st = parse(r.out);
	EXPECT_TRUE(json_object_get_boolean(json_object_object_get(st, "loaded")));
	EXPECT_EQ(sysfs_num("/sys/module/flex/parameters/backing_cap"),
		  jint(json_object_object_get(st, "parameters"), "backing_cap"));
	json_object_put(st);
	flexctl(&r, "load --module %s", ko);
	EXPECT_EQ(1, r.status);
	EXPECT_MSG(&r, "already loaded");
	ensure_loaded(ko);
}

/* After a failure or timeout above, the module must still be back. */
TEST_F_TIMEOUT(ctl, module_is_loaded_at_the_end, CTL_TIMEOUT)
{
	const char *ko = getenv("FLEX_KO");

	if (!ko || access(ko, R_OK))
		SKIP(return, "FLEX_KO not given");
	ensure_loaded(ko);
	EXPECT_EQ(0, access("/sys/module/flex", F_OK)) TH_LOG("flex is not loaded: insmod %s %s",
							       ko, saved_params);
	EXPECT_EQ(0, sysfs_num(FLEX_SYSFS "/sriov_numvfs"));
}

TEST_HARNESS_MAIN
