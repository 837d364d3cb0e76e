// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator observability and configuration: statistics, the summary,
 * CSV and JSON reports (on demand and on destroy), the debug log, and
 * refusal of bad configurations.
 */
#include <errno.h>
#include <json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit_util.h"

START_TEST(stats_follow_operations)
{
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	struct flex_alloc_region_stats rs;
	flex_alloc_index_t y, f;
	struct flex_alloc *a;

	config_one_size(&cfg, 1 * MiB, 2);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	a = new_allocator(&cfg, 2 * MiB, 0, NULL);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_regions == 0 && st.reserved_bytes == 0 && st.max_regions == 2 &&
		      !st.regions_locked && st.fragmentation == 0,
		      "fresh allocator: expected nothing reserved, got %u regions, %llu bytes",
		      st.num_regions, (unsigned long long)st.reserved_bytes);

	must_alloc(a, 1000, FLEX_ALLOC_TENSOR);		/* block 1024 */
	y = must_alloc(a, 300 * KiB, FLEX_ALLOC_TENSOR);
	must_alloc(a, 200 * KiB, FLEX_ALLOC_PROGRAM);	/* at the top */
	ck_assert_int_eq(flex_alloc_block_alloc(a, 3 * MiB, FLEX_ALLOC_TENSOR, &f), -ENOMEM);
	must_free(a, y);
	ck_assert_int_eq(flex_alloc_block_free(a, y), -ENOENT);
	/* 900 KiB does not fit region 0: FillFirst acquires the second. */
	must_free(a, must_alloc(a, 900 * KiB, FLEX_ALLOC_TENSOR));

	flex_alloc_get_stats(a, &st);
	ck_assert_uint_eq(st.allocated_bytes, 1024 + 200 * KiB);
	ck_assert_uint_eq(st.peak_allocated_bytes, 1024 + 1100 * KiB);
	ck_assert_uint_eq(st.requested_bytes, 1000 + 200 * KiB);
	/* The failed 3 MiB allocation acquired nothing (no region could hold it). */
	ck_assert_uint_eq(st.reserved_bytes, 2 * MiB);
	ck_assert_uint_eq(st.peak_reserved_bytes, 2 * MiB);
	ck_assert_uint_eq(st.free_bytes, 2 * MiB - 1024 - 200 * KiB);
	ck_assert_uint_eq(st.num_allocs, 4);
	ck_assert_uint_eq(st.num_frees, 2);
	ck_assert_uint_eq(st.num_failed_allocs, 1);
	ck_assert_uint_eq(st.num_bad_frees, 1);
	ck_assert_uint_eq(st.num_live_blocks, 2);
	ck_assert_uint_eq(st.num_region_acquires, 2);
	ck_assert_uint_eq(st.num_regions, 2);
	ck_assert_uint_eq(st.regions_locked, 1);
	/* Region 0: x, the freed y merged with the free middle, z at the top. */
	ck_assert_uint_eq(st.largest_free_block, 1 * MiB);
	ck_assert_uint_eq(st.num_free_blocks, 2);
	ck_assert_msg(st.fragmentation > 0.0 &&
		      st.fragmentation == 1.0 - (double)st.largest_free_block / (double)st.free_bytes,
		      "fragmentation: expected 1 - largest/free = %f, got %f",
		      1.0 - (double)st.largest_free_block / (double)st.free_bytes, st.fragmentation);

	ck_assert_int_eq(flex_alloc_get_region_stats(a, 0, &rs), 0);
	ck_assert_uint_eq(rs.region_id, 0);
	ck_assert_uint_eq(rs.size, 1 * MiB);
	ck_assert_uint_eq(rs.allocated_bytes, 1024 + 200 * KiB);
	ck_assert_uint_eq(rs.largest_free_block, 1 * MiB - 1024 - 200 * KiB);
	ck_assert_uint_eq(rs.num_live_blocks, 2);
	ck_assert_uint_eq(rs.num_free_blocks, 1);
	ck_assert_uint_eq(rs.num_allocs, 3);
	ck_assert_uint_eq(rs.num_frees, 1);
	ck_assert_msg(rs.fragmentation == 0, "one free block: fragmentation expected 0, got %f",
		      rs.fragmentation);
	ck_assert_int_eq(flex_alloc_get_region_stats(a, 1, &rs), 0);
	ck_assert_uint_eq(rs.allocated_bytes, 0);
	ck_assert_uint_eq(rs.num_allocs, 1);
	ck_assert_int_eq(flex_alloc_get_region_stats(a, 2, &rs), -ENOENT);
	check_invariants(a, "stats");
	flex_alloc_destroy(a);
}
END_TEST

/* torch.cuda.reset_peak_memory_stats(): peaks start again from now. */
START_TEST(peak_stats_reset)
{
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	flex_alloc_index_t x, y;
	struct flex_alloc *a;

	config_one_size(&cfg, 4 * MiB, 2);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	cfg.flags = FLEX_ALLOC_F_RELEASE_EMPTY;
	a = new_allocator(&cfg, 8 * MiB, 0, NULL);
	x = must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	y = must_alloc(a, 4 * MiB, FLEX_ALLOC_TENSOR);	/* a second region */
	must_free(a, y);
	flex_alloc_trim(a, NULL);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.peak_allocated_bytes == 5 * MiB && st.peak_reserved_bytes == 8 * MiB,
		      "before the reset: expected peaks 5 MiB allocated, 8 MiB reserved; got %llu, %llu",
		      (unsigned long long)st.peak_allocated_bytes,
		      (unsigned long long)st.peak_reserved_bytes);
	ck_assert_int_eq(flex_alloc_reset_peak_stats(a), 0);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.peak_allocated_bytes == 1 * MiB && st.peak_reserved_bytes == 4 * MiB,
		      "after the reset: expected peaks 1 MiB allocated, 4 MiB reserved (the current figures); got %llu, %llu",
		      (unsigned long long)st.peak_allocated_bytes,
		      (unsigned long long)st.peak_reserved_bytes);
	y = must_alloc(a, 2 * MiB, FLEX_ALLOC_TENSOR);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.peak_allocated_bytes == 3 * MiB,
		      "a new peak after the reset: expected 3 MiB, got %llu",
		      (unsigned long long)st.peak_allocated_bytes);
	must_free(a, x);
	must_free(a, y);
	flex_alloc_destroy(a);
}
END_TEST

static void free_victim(struct flex_alloc *a, uint64_t size, void *user)
{
	flex_alloc_index_t *victim = user;

	if (*victim) {
		flex_alloc_block_free(a, *victim);
		*victim = FLEX_ALLOC_INDEX_NONE;
	}
}

/* Out-of-memory failures and retries after making room, counted apart. */
START_TEST(oom_and_retry_counts)
{
	struct flex_alloc_config cfg;
	struct flex_alloc_stats st;
	flex_alloc_index_t x, victim;
	struct flex_alloc *a;

	config_one_size(&cfg, 1 * MiB, 2);
	cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
	a = new_allocator(&cfg, 2 * MiB, 0, NULL);
	victim = must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	must_free(a, must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR));	/* region 1, empty */
	ck_assert_int_eq(flex_alloc_block_alloc(a, 8, (enum flex_alloc_kind)3, &x), -EINVAL);
	/* 2 MiB: the empty region is given back (a retry), the device is still too small. */
	ck_assert_int_eq(flex_alloc_block_alloc(a, 2 * MiB, FLEX_ALLOC_TENSOR, &x), -ENOMEM);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_failed_allocs == 2 && st.num_ooms == 1 && st.num_pressure_retries == 1,
		      "an -EINVAL and an -ENOMEM after one retry: expected 2 failed, 1 OOM, 1 retry; got %llu, %llu, %llu",
		      (unsigned long long)st.num_failed_allocs, (unsigned long long)st.num_ooms,
		      (unsigned long long)st.num_pressure_retries);
	/* The callback frees the victim: the retry succeeds, no OOM. */
	flex_alloc_set_pressure_callback(a, free_victim, &victim);
	must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);
	ck_assert_int_eq(flex_alloc_block_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR, &x), 0);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_ooms == 1 && st.num_pressure_retries == 2 && !victim,
		      "the callback made room: expected still 1 OOM and now 2 retries; got %llu, %llu",
		      (unsigned long long)st.num_ooms, (unsigned long long)st.num_pressure_retries);
	flex_alloc_destroy(a);
}
END_TEST

static int no_acquire(void *user, uint64_t size, struct flex_region *out)
{
	return -ENOMEM;
}

static int no_release(void *user, const struct flex_region *region)
{
	return 0;
}

/* torch.cuda.mem_get_info(): {free, total} of the function, from one snapshot. */
START_TEST(mem_get_info_of_the_function)
{
	struct flex_region_source *device, *vf, *other;
	struct flex_region held;
	struct flex_alloc *a;
	uint64_t free = 0, total = 0;

	ck_assert_int_eq(flex_region_source_new_memory(128 * GiB, 0, &device), 0);
	ck_assert_int_eq(flex_region_source_new_memory_function(device, 8, 16 * GiB, &vf), 0);
	ck_assert_int_eq(flex_region_source_new_memory_function(device, 8, 0, &other), 0);
	a = new_allocator_on(vf, NULL, NULL);
	must_alloc(a, 1 * MiB, FLEX_ALLOC_TENSOR);	/* a first region of 256 MiB */
	ck_assert_int_eq(flex_alloc_mem_get_info(a, &free, &total), 0);
	ck_assert_msg(total == 16 * GiB && free == 16 * GiB - 256 * MiB,
		      "VF with a 16 GiB quota holding 256 MiB: expected free %llu of %llu, got %llu of %llu",
		      16 * GiB - 256 * MiB, 16 * GiB, (unsigned long long)free,
		      (unsigned long long)total);
	/* Another tenant leaves 8 GiB of the device: less than the quota does. */
	ck_assert_int_eq(flex_region_source_acquire(other, 120 * GiB - 256 * MiB, &held), 0);
	ck_assert_int_eq(flex_alloc_mem_get_info(a, &free, &total), 0);
	ck_assert_msg(total == 16 * GiB && free == 8 * GiB,
		      "device nearly full: expected free 8 GiB of 16, got %llu of %llu",
		      (unsigned long long)free, (unsigned long long)total);
	flex_alloc_destroy(a);
	flex_region_source_unref(vf);
	flex_region_source_unref(other);
	flex_region_source_unref(device);

	/* A source that cannot say. */
	{
		static const struct flex_region_source_ops ops = {
			.acquire = no_acquire,
			.release = no_release,
		};
		struct flex_region_source *src;

		ck_assert_int_eq(flex_region_source_new(&ops, NULL, 0, &src), 0);
		a = new_allocator_on(src, NULL, NULL);
		ck_assert_int_eq(flex_alloc_mem_get_info(a, &free, &total), -EOPNOTSUPP);
		ck_assert_msg(strstr(flex_last_error(), "cannot say"),
			      "message: \"%s\"", flex_last_error());
		flex_alloc_destroy(a);
		flex_region_source_unref(src);
	}
}
END_TEST

/* A small fixed layout for the reports: [tensor 4 KiB][free][program 8 KiB]. */
static struct flex_alloc *report_layout(flex_alloc_index_t *t, flex_alloc_index_t *p,
					const char *report_path)
{
	struct flex_alloc_config cfg;

	config_one_size(&cfg, 64 * KiB, 1);
	cfg.report_path = report_path;
	struct flex_alloc *a = new_allocator(&cfg, 64 * KiB, 0, NULL);

	*t = must_alloc(a, 4000, FLEX_ALLOC_TENSOR);
	*p = must_alloc(a, 8 * KiB, FLEX_ALLOC_PROGRAM);
	return a;
}

static char *report_text(struct flex_alloc *a, enum flex_alloc_report_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(flex_alloc_report(a, f, fmt), 0);
	fclose(f);
	return buf;
}

START_TEST(report_summary)
{
	flex_alloc_index_t t, p;
	struct flex_alloc *a = report_layout(&t, &p, NULL);
	char *s = report_text(a, FLEX_ALLOC_REPORT_SUMMARY);
	static const char *const want[] = {
		"1 of 1 regions (locked), reserved 64.0 KiB",
		"allocated 12.0 KiB (peak 12.0 KiB) in 2 blocks, requested 12192 bytes",
		"free 52.0 KiB in 1 blocks, largest free block 52.0 KiB, fragmentation 0.0000",
		"allocations 2, frees 0, failed allocations 0",
		"region 0: id 0x0, size 64.0 KiB",
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(s, want[i]), "summary lacks \"%s\":\n%s", want[i], s);
	free(s);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(report_csv)
{
	flex_alloc_index_t t, p;
	struct flex_alloc *a = report_layout(&t, &p, NULL);
	char *s = report_text(a, FLEX_ALLOC_REPORT_CSV), *line, *save = NULL;
	char expect[3][128];
	int rows = 0, header = 0;

	snprintf(expect[0], sizeof(expect[0]), "0,0,0,4096,allocated,tensor,0x%llx,4000",
		 (unsigned long long)t);
	snprintf(expect[1], sizeof(expect[1]), "0,0,4096,53248,free,,0x0,0");
	snprintf(expect[2], sizeof(expect[2]), "0,0,57344,8192,allocated,program,0x%llx,8192",
		 (unsigned long long)p);
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#')
			continue;
		if (!header) {
			ck_assert_str_eq(line, "region,region_id,offset,size,state,kind,index,requested");
			header = 1;
			continue;
		}
		ck_assert_msg(rows < 3, "CSV: more than 3 block rows (\"%s\")", line);
		ck_assert_msg(strcmp(line, expect[rows]) == 0, "CSV row %d: expected \"%s\", got \"%s\"",
			      rows, expect[rows], line);
		rows++;
	}
	ck_assert_msg(header && rows == 3, "CSV: expected a header and 3 rows, got %d/%d", header, rows);
	free(s);
	flex_alloc_destroy(a);
}
END_TEST

static void check_json(const char *text, flex_alloc_index_t t, flex_alloc_index_t p)
{
	struct json_object *root = json_tokener_parse(text), *summary, *regions, *blocks, *v;
	char idx[32];

	ck_assert_msg(root, "report is not valid JSON:\n%s", text);
	ck_assert(json_object_object_get_ex(root, "summary", &summary));
	ck_assert(json_object_object_get_ex(summary, "allocated_bytes", &v));
	ck_assert_int_eq(json_object_get_int64(v), 12 * 1024);
	ck_assert(json_object_object_get_ex(summary, "regions_locked", &v));
	ck_assert(json_object_get_boolean(v));
	ck_assert(json_object_object_get_ex(root, "regions", &regions));
	ck_assert_int_eq(json_object_array_length(regions), 1);
	ck_assert(json_object_object_get_ex(json_object_array_get_idx(regions, 0), "blocks", &blocks));
	ck_assert_int_eq(json_object_array_length(blocks), 3);
	v = json_object_array_get_idx(blocks, 2);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(v, "kind")), "program");
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(v, "offset")), 57344);
	snprintf(idx, sizeof(idx), "0x%llx", (unsigned long long)p);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(v, "index")), idx);
	v = json_object_array_get_idx(blocks, 0);
	snprintf(idx, sizeof(idx), "0x%llx", (unsigned long long)t);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(v, "index")), idx);
	ck_assert_int_eq(json_object_get_int64(json_object_object_get(v, "requested")), 4000);
	v = json_object_array_get_idx(blocks, 1);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(v, "state")), "free");
	json_object_put(root);
}

START_TEST(report_json)
{
	flex_alloc_index_t t, p;
	struct flex_alloc *a = report_layout(&t, &p, NULL);
	char *s = report_text(a, FLEX_ALLOC_REPORT_JSON);

	check_json(s, t, p);
	free(s);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(report_bad_format)
{
	flex_alloc_index_t t, p;
	struct flex_alloc *a = report_layout(&t, &p, NULL);

	ck_assert_int_eq(flex_alloc_report(a, stdout, (enum flex_alloc_report_format)9), -EINVAL);
	ck_assert_int_eq(flex_alloc_report(a, NULL, FLEX_ALLOC_REPORT_CSV), -EINVAL);
	flex_alloc_destroy(a);
}
END_TEST

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	ck_assert_msg(f, "report file %s was not written", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

START_TEST(exit_report_from_config)
{
	char path[] = "/tmp/flex-report-XXXXXX.csv";
	flex_alloc_index_t t, p;
	struct flex_alloc *a;
	char *s;
	int fd = mkstemps(path, 4);

	ck_assert_int_ge(fd, 0);
	close(fd);
	a = report_layout(&t, &p, path);
	flex_alloc_destroy(a);
	s = slurp(path);
	ck_assert_msg(strstr(s, "# flex_alloc: 1 of 1 regions") &&
		      strstr(s, "region,region_id,offset,size,state,kind,index,requested") &&
		      strstr(s, "0,0,57344,8192,allocated,program"),
		      "CSV exit report incomplete:\n%s", s);
	free(s);
	unlink(path);
}
END_TEST

START_TEST(exit_report_from_environment)
{
	char path[] = "/tmp/flex-report-XXXXXX.json";
	flex_alloc_index_t t, p;
	struct flex_alloc *a;
	char *s;
	int fd = mkstemps(path, 5);

	ck_assert_int_ge(fd, 0);
	close(fd);
	setenv("FLEX_ALLOC_REPORT", path, 1);
	a = report_layout(&t, &p, NULL);
	unsetenv("FLEX_ALLOC_REPORT");
	flex_alloc_destroy(a);
	s = slurp(path);
	check_json(s, t, p);
	free(s);
	unlink(path);
}
END_TEST

START_TEST(no_report_by_default)
{
	struct log_capture log = { 0 };
	struct flex_alloc *a;

	unsetenv("FLEX_ALLOC_REPORT");
	unsetenv("FLEX_ALLOC_DEBUG");
	a = new_allocator(NULL, 16 * GiB, 0, &log);
	must_alloc(a, 4096, FLEX_ALLOC_TENSOR);
	flex_alloc_destroy(a);
	ck_assert_msg(log.lines == 0, "no debug, no report: expected no log line, got:\n%s",
		      log.text ? log.text : "");
	log_capture_reset(&log);
}
END_TEST

/*
 * On a 16 GiB device with the defaults (LoadBalancing without a table,
 * regions of 1/12 of it): allocate and free (merging with the free rest of
 * the region), two allocations that acquire a region each, and one larger
 * than the device.
 */
static void debug_workload(struct flex_alloc *a)
{
	flex_alloc_index_t f;

	must_free(a, must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR));
	must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_int_eq(flex_alloc_block_alloc(a, 32 * GiB, FLEX_ALLOC_TENSOR, &f), -ENOMEM);
}

static void check_debug_log(const char *how, const struct log_capture *log)
{
	static const char *const want[] = {
		"flex_alloc: new allocator: load-balancing (auto), first-fit, max_regions 12, 0 fixed regions",
		"flex_alloc: region sizes 1.3 GiB down to 10.7 MiB in 8 steps, scaled to 16.0 GiB\n",
		"flex_alloc: acquire region of 1.3 GiB (size 1 of 8 for 4096 bytes): ok",
		"flex_alloc: region 0: id 0x0, 1431655680 bytes",
		"flex_alloc: alloc 4096 bytes (block 4096) for a tensor: index 0x",
		"flex_alloc: free index 0x",
		"flex_alloc: coalesce in region 0x0: with next -> free block at 0x0",
		"flex_alloc: region 2: id 0x2, 1431655680 bytes (1.3 GiB); 3 of 12 regions",
		"flex_alloc: acquire region of 32.0 GiB (size 1 of 1 for 34359738368 bytes): Argument list too long",
		"flex_alloc: no region for 34359738368 bytes could be acquired (Argument list too long); not locked",
		"flex_alloc: out of device memory: asked 34359738368 bytes",
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(log_has(log, want[i]), "%s: debug log lacks \"%s\":\n%s", how, want[i],
			      log->text ? log->text : "");
}

START_TEST(debug_log_from_flag)
{
	struct log_capture log = { 0 };
	struct flex_alloc_config cfg;
	struct flex_alloc *a;

	unsetenv("FLEX_ALLOC_DEBUG");
	flex_alloc_config_init(&cfg);
	cfg.flags = FLEX_ALLOC_F_DEBUG;
	a = new_allocator(&cfg, 16 * GiB, 0, &log);
	debug_workload(a);
	check_debug_log("FLEX_ALLOC_F_DEBUG", &log);
	flex_alloc_destroy(a);
	log_capture_reset(&log);
}
END_TEST

START_TEST(debug_log_from_environment)
{
	struct log_capture log = { 0 };
	struct flex_alloc *a;

	setenv("FLEX_ALLOC_DEBUG", "1", 1);
	a = new_allocator(NULL, 16 * GiB, 0, &log);
	unsetenv("FLEX_ALLOC_DEBUG");
	debug_workload(a);
	check_debug_log("FLEX_ALLOC_DEBUG=1", &log);
	flex_alloc_destroy(a);
	log_capture_reset(&log);
}
END_TEST

START_TEST(debug_log_off)
{
	struct log_capture log = { 0 };
	struct flex_alloc *a;

	setenv("FLEX_ALLOC_DEBUG", "0", 1);
	a = new_allocator(NULL, 16 * GiB, 0, &log);
	unsetenv("FLEX_ALLOC_DEBUG");
	debug_workload(a);
	ck_assert_msg(log.lines == 0, "FLEX_ALLOC_DEBUG=0: expected no log line, got:\n%s",
		      log.text ? log.text : "");
	flex_alloc_destroy(a);
	log_capture_reset(&log);
}
END_TEST

struct bad_config {
	const char *what;
	void (*set)(struct flex_alloc_config *cfg);
	const char *message;
};

static void bad_region_strategy(struct flex_alloc_config *c) { c->region_strategy = 5; }
static void bad_block_strategy(struct flex_alloc_config *c) { c->block_strategy = 5; }
static void many_fallbacks(struct flex_alloc_config *c) { c->num_fallback_sizes = 17; }
static void zero_fallback(struct flex_alloc_config *c)
{
	c->num_fallback_sizes = 3;
	c->fallback_sizes[0] = c->fallback_sizes[2] = 4 * GiB;
	c->fallback_sizes[1] = 0;
}
static void unaligned_fallback(struct flex_alloc_config *c)
{
	c->num_fallback_sizes = 3;
	c->fallback_sizes[0] = c->fallback_sizes[1] = 4 * GiB;
	c->fallback_sizes[2] = 4 * GiB + 64;
}
static void zero_max(struct flex_alloc_config *c) { c->max_regions = 0; }
static void huge_max(struct flex_alloc_config *c) { c->max_regions = 65; }
static void unknown_flag(struct flex_alloc_config *c) { c->flags = 1U << 9; }
static void too_many_fixed(struct flex_alloc_config *c) { c->fixed_regions = 13; }
static void fixed_and_release(struct flex_alloc_config *c)
{
	c->fixed_regions = 1;
	c->flags = FLEX_ALLOC_F_RELEASE_EMPTY;
}

START_TEST(bad_configs_refused)
{
	static const struct bad_config cases[] = {
		{ "unknown region strategy", bad_region_strategy, "unknown region strategy 5" },
		{ "unknown block strategy", bad_block_strategy, "unknown block strategy 5" },
		{ "17 fallback sizes", many_fallbacks, "17 fallback sizes" },
		{ "zero fallback size", zero_fallback, "fallback size 1 (0)" },
		{ "unaligned fallback size", unaligned_fallback, "fallback size 2 (4294967360)" },
		{ "max_regions 0", zero_max, "max_regions 0" },
		{ "max_regions 65", huge_max, "max_regions 65" },
		{ "unknown flag", unknown_flag, "unknown flags 0x200" },
		{ "13 fixed regions of 12", too_many_fixed, "13 fixed regions but at most 12" },
		{ "fixed regions with release", fixed_and_release, "releasing empty regions" },
	};
	struct flex_region_source *src;

	ck_assert_int_eq(flex_region_source_new_memory(GiB, 0, &src), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct flex_alloc_config cfg;
		struct flex_alloc *a = NULL;
		int err;

		flex_alloc_config_init(&cfg);
		cases[i].set(&cfg);
		err = flex_alloc_new(src, &cfg, &a);
		ck_assert_msg(err == -EINVAL && !a, "%s: expected -EINVAL, got %d", cases[i].what, err);
		ck_assert_msg(strstr(flex_last_error(), cases[i].message),
			      "%s: message expected to contain \"%s\", got \"%s\"", cases[i].what,
			      cases[i].message, flex_last_error());
	}
	ck_assert_int_eq(flex_alloc_new(NULL, NULL, &(struct flex_alloc *){ NULL }), -EINVAL);
	flex_region_source_unref(src);
}
END_TEST

static void expect_event(const struct flex_alloc_event *e, unsigned int i,
			 enum flex_alloc_event_action action, flex_alloc_index_t index,
			 uint64_t region_id, uint64_t size)
{
	ck_assert_msg(e->action == action && e->index == index && e->region_id == region_id &&
		      e->size == size && e->thread == (uint32_t)gettid(),
		      "event %u: expected %s of index 0x%llx in region %llu, %llu bytes, thread %d; got %s of 0x%llx in %llu, %llu bytes, thread %u",
		      i, flex_alloc_event_name(action), (unsigned long long)index,
		      (unsigned long long)region_id, (unsigned long long)size, (int)gettid(),
		      flex_alloc_event_name(e->action), (unsigned long long)e->index,
		      (unsigned long long)e->region_id, (unsigned long long)e->size, e->thread);
}

/* torch.cuda.memory._record_memory_history(): opt-in, a ring of the last N events. */
START_TEST(history_of_allocations)
{
	struct flex_alloc_config cfg;
	struct flex_alloc_event ev[8];
	flex_alloc_index_t x, z, y[4];
	struct flex_alloc *a;
	uint64_t recorded;
	size_t n;

	config_one_size(&cfg, 1 * MiB, 1);
	a = new_allocator(&cfg, 1 * MiB, 0, NULL);
	must_free(a, must_alloc(a, 128, FLEX_ALLOC_TENSOR));	/* not recorded: off */
	ck_assert_int_eq(flex_alloc_get_history(a, ev, 8, &n, &recorded), 0);
	ck_assert_msg(n == 0 && recorded == 0, "history off by default: got %zu events", n);

	ck_assert_int_eq(flex_alloc_record_history(a, 8), 0);
	x = must_alloc(a, 4000, FLEX_ALLOC_PROGRAM);
	z = must_alloc(a, 0, FLEX_ALLOC_TENSOR);
	must_free(a, x);
	must_free(a, z);
	ck_assert_int_eq(flex_alloc_block_alloc(a, 2 * MiB, FLEX_ALLOC_TENSOR, &x), -ENOMEM);
	ck_assert_int_eq(flex_alloc_get_history(a, ev, 8, &n, &recorded), 0);
	ck_assert_msg(n == 6 && recorded == 6, "six events: got %zu (%llu recorded)", n,
		      (unsigned long long)recorded);
	expect_event(&ev[0], 0, FLEX_ALLOC_EV_ALLOC, x, 0, 4096);
	ck_assert_msg(ev[0].kind == FLEX_ALLOC_PROGRAM && ev[0].requested == 4000 &&
		      ev[0].offset == MiB - 4096,
		      "the program's event: expected kind program, 4000 asked, offset %llu; got %d, %llu, %llu",
		      MiB - 4096, ev[0].kind, (unsigned long long)ev[0].requested,
		      (unsigned long long)ev[0].offset);
	expect_event(&ev[1], 1, FLEX_ALLOC_EV_ALLOC, z, FLEX_ALLOC_NO_REGION, 0);
	expect_event(&ev[2], 2, FLEX_ALLOC_EV_FREE, x, 0, 4096);
	expect_event(&ev[3], 3, FLEX_ALLOC_EV_FREE, z, FLEX_ALLOC_NO_REGION, 0);
	/* Out of room: the empty region is given back before failing. */
	expect_event(&ev[4], 4, FLEX_ALLOC_EV_REGION_RELEASE, FLEX_ALLOC_INDEX_NONE, 0, 1 * MiB);
	expect_event(&ev[5], 5, FLEX_ALLOC_EV_OOM, FLEX_ALLOC_INDEX_NONE, FLEX_ALLOC_NO_REGION,
		     2 * MiB);
	for (unsigned int i = 1; i < n; i++)
		ck_assert_msg(ev[i].time_ns >= ev[i - 1].time_ns, "event %u is older than %u", i,
			      i - 1);

	/* A ring of 3: the newest three of four, oldest first (a region first). */
	must_alloc(a, 128, FLEX_ALLOC_TENSOR);
	ck_assert_int_eq(flex_alloc_record_history(a, 3), 0);
	for (int i = 0; i < 4; i++)
		y[i] = must_alloc(a, 128, FLEX_ALLOC_TENSOR);
	ck_assert_int_eq(flex_alloc_get_history(a, ev, 8, &n, &recorded), 0);
	ck_assert_msg(n == 3 && recorded == 4, "ring of 3 after 4 events: expected 3 of 4, got %zu of %llu",
		      n, (unsigned long long)recorded);
	for (int i = 0; i < 3; i++)
		expect_event(&ev[i], (unsigned int)i, FLEX_ALLOC_EV_ALLOC, y[i + 1], 0, 128);
	/* Fewer asked than kept: the newest. */
	ck_assert_int_eq(flex_alloc_get_history(a, ev, 1, &n, NULL), 0);
	ck_assert_msg(n == 1 && ev[0].index == y[3], "one event asked: expected the newest");

	ck_assert_int_eq(flex_alloc_record_history(a, 0), 0);
	must_alloc(a, 128, FLEX_ALLOC_TENSOR);
	ck_assert_int_eq(flex_alloc_get_history(a, ev, 8, &n, &recorded), 0);
	ck_assert_msg(n == 0 && recorded == 0, "stopped: expected nothing kept, got %zu", n);
	flex_alloc_destroy(a);

	/* From the environment, region events included. */
	setenv("FLEX_ALLOC_HISTORY", "2", 1);
	a = new_allocator(NULL, 1 * GiB, 0, NULL);
	unsetenv("FLEX_ALLOC_HISTORY");
	x = must_alloc(a, 128, FLEX_ALLOC_TENSOR);
	ck_assert_int_eq(flex_alloc_get_history(a, ev, 8, &n, &recorded), 0);
	ck_assert_msg(n == 2 && ev[0].action == FLEX_ALLOC_EV_REGION_ACQUIRE &&
		      ev[0].size == 1 * GiB / 12 / 128 * 128 && ev[1].index == x,
		      "FLEX_ALLOC_HISTORY=2: expected the region acquisition and the allocation, got %zu events, first %s of %llu bytes",
		      n, flex_alloc_event_name(ev[0].action), (unsigned long long)ev[0].size);
	flex_alloc_destroy(a);
	ck_assert_str_eq(flex_alloc_event_name((enum flex_alloc_event_action)99), "?");
}
END_TEST

START_TEST(history_in_the_json_report)
{
	flex_alloc_index_t t, p;
	struct flex_alloc *a = report_layout(&t, &p, NULL);
	struct json_object *root, *h, *events, *e;
	char *s;

	s = report_text(a, FLEX_ALLOC_REPORT_JSON);
	root = json_tokener_parse(s);
	ck_assert_msg(root && !json_object_object_get_ex(root, "history", &h),
		      "history off: expected valid JSON without \"history\":\n%s", s);
	json_object_put(root);
	free(s);

	ck_assert_int_eq(flex_alloc_record_history(a, 16), 0);
	must_free(a, t);
	s = report_text(a, FLEX_ALLOC_REPORT_JSON);
	root = json_tokener_parse(s);
	ck_assert_msg(root && json_object_object_get_ex(root, "history", &h) &&
		      json_object_object_get_ex(h, "events", &events) &&
		      json_object_array_length(events) == 1,
		      "history on: expected one event in \"history\":\n%s", s);
	e = json_object_array_get_idx(events, 0);
	ck_assert_str_eq(json_object_get_string(json_object_object_get(e, "action")), "free");
	ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(e, "size")), 4096);
	ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(e, "requested")), 4000);
	ck_assert_uint_eq(json_object_get_uint64(json_object_object_get(h, "recorded")), 1);
	json_object_put(root);
	free(s);
	s = report_text(a, FLEX_ALLOC_REPORT_SUMMARY);
	ck_assert_msg(strstr(s, "history: 1 events kept of 1 recorded") &&
		      strstr(s, "(out of memory 0), retries after making room 0"),
		      "summary lacks the history or OOM counts:\n%s", s);
	free(s);
	flex_alloc_destroy(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stats");
	TCase *tc = tcase_create("stats");

	tcase_add_test(tc, stats_follow_operations);

	tcase_add_test(tc, peak_stats_reset);
	tcase_add_test(tc, oom_and_retry_counts);
	tcase_add_test(tc, mem_get_info_of_the_function);
	tcase_add_test(tc, history_of_allocations);
	tcase_add_test(tc, history_in_the_json_report);
	suite_add_tcase(s, tc);

	tc = tcase_create("reports");
	tcase_add_test(tc, report_summary);
	tcase_add_test(tc, report_csv);
	tcase_add_test(tc, report_json);
	tcase_add_test(tc, report_bad_format);
	tcase_add_test(tc, exit_report_from_config);
	tcase_add_test(tc, exit_report_from_environment);
	tcase_add_test(tc, no_report_by_default);
	suite_add_tcase(s, tc);

	tc = tcase_create("debug");
	tcase_add_test(tc, debug_log_from_flag);
	tcase_add_test(tc, debug_log_from_environment);
	tcase_add_test(tc, debug_log_off);
	suite_add_tcase(s, tc);

	tc = tcase_create("config");
	tcase_add_test(tc, bad_configs_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
