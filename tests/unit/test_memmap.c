// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl's memory map (tools/flexctl/memmap.c): a known report layout
 * (tests/unit/fixtures/memmap_report.json, two reports appended as
 * FLEX_ALLOC_REPORT does) rendered to SVG, and the picture checked: rects
 * per kind, their x and width for known offsets and sizes, the minimum
 * width, labels, owners from a live region list, tooltips, XML validity
 * (xmllint), and refusal of malformed reports. Also a report written by
 * libflex itself goes through, and one with an allocation history gets its
 * timeline (allocated and reserved bytes over time, OOM marks).
 *
 * The bar of a 1200 px picture is 1152 px wide (24 px margins): in the
 * 1 MiB region 0 one px is 1024 / 1.125 bytes, so 256 KiB is 288 px.
 */
#include <errno.h>
#include <math.h>
#include <json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memmap.h"
#include "unit_util.h"

#define REPORT	"tests/unit/fixtures/memmap_report.json"
#define LIVE	"tests/unit/fixtures/memmap_regions.json"

/* One <rect class="block ..."> of the picture. */
struct rect {
	char cls[64];
	double x, w;
	unsigned int region;
	unsigned long long off, size;
	char title[256];
};

struct picture {
	char *svg;
	size_t len;
	struct rect r[64];
	unsigned int n;
};

static const char *attr(const char *tag, const char *name, char *buf, size_t len)
{
	char key[64];
	const char *p, *end = strchr(tag, '>');

	snprintf(key, sizeof(key), " %s=\"", name);
	p = strstr(tag, key);
	if (!p || (end && p > end))
		return NULL;
	p += strlen(key);
	snprintf(buf, len, "%.*s", (int)(strchr(p, '"') - p), p);
	return buf;
}

/* Render @report (with @live, @o) into @pic and split out the block rects. */
static int render(struct json_object *report, struct json_object *live,
		  const struct memmap_opts *o, struct picture *pic, char *err, size_t errlen)
{
	FILE *f = open_memstream(&pic->svg, &pic->len);
	const char *p;
	int ret;

	ck_assert_msg(f != NULL, "open_memstream failed");
	ret = memmap_render_svg(report, live, o, f, err, errlen);
	fclose(f);
	pic->n = 0;
	for (p = pic->svg; (p = strstr(p, "<rect class=\"block ")) && pic->n < 64; p++) {
		struct rect *r = &pic->r[pic->n++];
		char buf[64];
		const char *t;

		ck_assert_msg(attr(p, "class", r->cls, sizeof(r->cls)) && attr(p, "x", buf, sizeof(buf)),
			      "rect %u without class or x", pic->n);
		r->x = strtod(buf, NULL);
		r->w = strtod(attr(p, "width", buf, sizeof(buf)) ?: "-1", NULL);
		r->region = strtoul(attr(p, "data-region", buf, sizeof(buf)) ?: "999", NULL, 10);
		r->off = strtoull(attr(p, "data-offset", buf, sizeof(buf)) ?: "0", NULL, 10);
		r->size = strtoull(attr(p, "data-size", buf, sizeof(buf)) ?: "0", NULL, 10);
		t = strstr(p, "<title>");
		r->title[0] = '\0';
		if (t && t < strstr(p, "</rect>"))
			snprintf(r->title, sizeof(r->title), "%.*s",
				 (int)(strstr(t, "</title>") - t - 7), t + 7);
	}
	return ret;
}

static unsigned int count_class(const struct picture *pic, const char *cls)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < pic->n; i++)
		n += !strcmp(pic->r[i].cls, cls);
	return n;
}

static const struct rect *find_rect(const struct picture *pic, unsigned int region,
				    unsigned long long off)
{
	for (unsigned int i = 0; i < pic->n; i++)
		if (pic->r[i].region == region && pic->r[i].off == off)
			return &pic->r[i];
	ck_abort_msg("no rect for region %u offset %llu", region, off);
	return NULL;
}

static struct json_object *load(unsigned int which)
{
	struct json_object *rep;
	char err[256];
	int ret = memmap_load_report(REPORT, which, &rep, err, sizeof(err));

	ck_assert_msg(ret == 0, "loading report %u of %s: expected 0, got %d (%s)", which, REPORT,
		      ret, err);
	return rep;
}

START_TEST(loads_the_chosen_report)
{
	struct json_object *rep;
	char err[256] = "";

	rep = load(0);
	ck_assert_msg(json_object_array_length(json_object_object_get(rep, "regions")) == 2,
		      "the last report (default) has 2 regions, got %zu",
		      json_object_array_length(json_object_object_get(rep, "regions")));
	json_object_put(rep);
	rep = load(1);
	ck_assert_msg(json_object_array_length(json_object_object_get(rep, "regions")) == 1,
		      "report 1 has 1 region, got %zu",
		      json_object_array_length(json_object_object_get(rep, "regions")));
	json_object_put(rep);
	ck_assert_int_eq(memmap_load_report(REPORT, 3, &rep, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "holds 2 memory reports, not 3"),
		      "asking report 3 of 2: message should say so, got \"%s\"", err);
	ck_assert_int_eq(memmap_load_report("tests/unit/fixtures/no-such.json", 0, &rep, err,
					    sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "no-such.json"), "missing file: message names it, got \"%s\"",
		      err);
	/* A JSON file that is not a report. */
	ck_assert_int_eq(memmap_load_report(LIVE, 0, &rep, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "no \"regions\""), "not a report: got \"%s\"", err);
}
END_TEST

START_TEST(blocks_are_drawn_to_scale_by_kind)
{
	struct json_object *rep = load(0);
	struct picture pic = { 0 };
	char err[256] = "";
	const struct rect *r;
	static const struct {
		unsigned int region;
		unsigned long long off;
		const char *cls;
		double x, w;
	} want[] = {
		{ 0, 0, "block tensor", 24.00, 288.00 },
		{ 0, 262144, "block free", 312.00, 144.00 },
		{ 0, 393216, "block tensor", 456.00, 1.50 },	/* 0.14 px: minimum width */
		{ 0, 393344, "block free largest", 456.14, 575.86 },
		{ 0, 917504, "block program", 1032.00, 144.00 },
		{ 1, 0, "block free largest", 24.00, 1152.00 },
	};

	ck_assert_msg(render(rep, NULL, NULL, &pic, err, sizeof(err)) == 0, "render: %s", err);
	ck_assert_msg(pic.n == 6, "rects: expected 6 (one per block), got %u", pic.n);
	ck_assert_msg(count_class(&pic, "block tensor") == 2, "tensor rects: expected 2, got %u",
		      count_class(&pic, "block tensor"));
	ck_assert_msg(count_class(&pic, "block program") == 1, "program rects: expected 1, got %u",
		      count_class(&pic, "block program"));
	ck_assert_msg(count_class(&pic, "block free") + count_class(&pic, "block free largest") == 3,
		      "free rects: expected 3, got %u",
		      count_class(&pic, "block free") + count_class(&pic, "block free largest"));
	ck_assert_msg(count_class(&pic, "block free largest") == 2,
		      "largest free outlines: expected one per region (2), got %u",
		      count_class(&pic, "block free largest"));
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		r = find_rect(&pic, want[i].region, want[i].off);
		ck_assert_msg(!strcmp(r->cls, want[i].cls),
			      "region %u offset %llu: class expected \"%s\", got \"%s\"",
			      want[i].region, want[i].off, want[i].cls, r->cls);
		ck_assert_msg(r->x > want[i].x - 0.006 && r->x < want[i].x + 0.006,
			      "region %u offset %llu: x expected %.2f, got %.2f", want[i].region,
			      want[i].off, want[i].x, r->x);
		ck_assert_msg(r->w > want[i].w - 0.006 && r->w < want[i].w + 0.006,
			      "region %u offset %llu: width expected %.2f, got %.2f", want[i].region,
			      want[i].off, want[i].w, r->w);
	}
	/* Free space is drawn before allocations, so a widened block stays on top. */
	ck_assert_msg(strstr(pic.svg, "data-offset=\"393344\"") <
		      strstr(pic.svg, "data-offset=\"393216\""),
		      "the free block at 393344 must come before the tiny tensor at 393216");
	free(pic.svg);
	json_object_put(rep);
}
END_TEST

START_TEST(labels_tooltips_and_legend)
{
	struct json_object *rep = load(0);
	struct picture pic = { 0 };
	char err[256] = "";
	const struct rect *r;
	static const char *const want[] = {
		"Region 0 \xc2\xb7 id 0x4 \xc2\xb7 1 MiB",
		"Region 1 \xc2\xb7 id 0x5 \xc2\xb7 2 MiB",
		"in 3 blocks: tensors",
		"programs 128 KiB",
		"free 639.8",
		"in 2 blocks \xc2\xb7 largest free 511.8",
		"fragmentation 0.200",
		"fragmentation 0.000",
		"2 regions \xc2\xb7 reserved 3 MiB",
		"largest free 2 MiB \xc2\xb7 fragmentation 0.238",
		">tensor</text>", ">program</text>", ">free</text>", ">largest free block</text>",
		"<title>flex memory map</title>",
	};

	ck_assert_msg(render(rep, NULL, NULL, &pic, err, sizeof(err)) == 0, "render: %s", err);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strstr(pic.svg, want[i]), "the picture should contain \"%s\"", want[i]);
	r = find_rect(&pic, 0, 917504);
	ck_assert_msg(!strcmp(r->title, "program 0x10003\noffset 0xe0000 (896 KiB)\n"
			      "size 128 KiB (131072 bytes), requested 130900"),
		      "program tooltip: got \"%s\"", r->title);
	r = find_rect(&pic, 0, 393344);
	ck_assert_msg(strstr(r->title, "largest free block\noffset 0x60080"),
		      "largest free block tooltip: got \"%s\"", r->title);
	free(pic.svg);
	json_object_put(rep);
}
END_TEST

START_TEST(owners_come_from_the_live_region_list)
{
	struct json_object *rep = load(0), *live = json_object_from_file(LIVE);
	struct picture pic = { 0 };
	struct memmap_opts o;
	char err[256] = "";

	ck_assert_msg(live != NULL, "cannot parse %s", LIVE);
	/* Region id 4 is a table index on vf0 and on vf1: ambiguous. */
	ck_assert_msg(render(rep, live, NULL, &pic, err, sizeof(err)) == 0, "render: %s", err);
	ck_assert_msg(strstr(pic.svg, "owner ambiguous (2 live regions have this id"),
		      "without --function region id 4 is ambiguous; picture says otherwise");
	ck_assert_msg(strstr(pic.svg, "id 0x5 \xc2\xb7 2 MiB \xc2\xb7 not in the live region list"),
		      "region id 5 is not live: the label should say so");
	free(pic.svg);

	memmap_opts_init(&o);
	o.function = "vf1";
	o.device = 0;
	ck_assert_msg(render(rep, live, &o, &pic, err, sizeof(err)) == 0, "render: %s", err);
	/* The owner's name is escaped: "trainer<1>". */
	ck_assert_msg(strstr(pic.svg, "owner trainer&lt;1&gt; (pid 4242) \xc2\xb7 flex0 vf1 "
			     "\xc2\xb7 handle 7"),
		      "region 0 on vf1: owner trainer<1> pid 4242 handle 7 expected in the label");
	ck_assert_msg(!strstr(pic.svg, "trainer<1>"), "unescaped '<' in the SVG");
	free(pic.svg);
	json_object_put(live);
	json_object_put(rep);
}
END_TEST

START_TEST(the_svg_is_valid_xml)
{
	struct json_object *rep = load(0), *live = json_object_from_file(LIVE);
	char path[] = "/tmp/test_memmap_XXXXXX", cmd[256], err[256] = "";
	int fd = mkstemp(path), ret;
	FILE *f;

	ck_assert_msg(fd >= 0, "mkstemp failed");
	f = fdopen(fd, "w");
	ck_assert_int_eq(memmap_render_svg(rep, live, NULL, f, err, sizeof(err)), 0);
	fclose(f);
	/* xmllint comes from libxml2-utils (tools/install-deps). */
	ck_assert_msg(access("/usr/bin/xmllint", X_OK) == 0,
		      "xmllint missing: run tools/install-deps (libxml2-utils)");
	snprintf(cmd, sizeof(cmd), "/usr/bin/xmllint --noout %s", path);
	ret = system(cmd);
	unlink(path);
	ck_assert_msg(ret == 0, "xmllint --noout on the SVG: expected exit 0, got %d", ret);
	json_object_put(live);
	json_object_put(rep);
}
END_TEST

START_TEST(malformed_reports_are_refused_with_the_place)
{
	struct json_object *rep = load(0);
	struct json_object *regions = json_object_object_get(rep, "regions");
	struct json_object *b1 = json_object_array_get_idx(
		json_object_object_get(json_object_array_get_idx(regions, 0), "blocks"), 1);
	char err[256] = "";
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	/* Block 1 of region 0 now ends past the region's 1 MiB. */
	json_object_object_add(b1, "offset", json_object_new_int64(1048576 - 64));
	ck_assert_int_eq(memmap_render_svg(rep, NULL, NULL, f, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "region 0 block 1: offset 1048512 size 131072 is not inside"),
		      "block outside its region: got \"%s\"", err);
	json_object_object_add(b1, "offset", json_object_new_int64(262144));
	json_object_object_add(b1, "state", json_object_new_string("lost"));
	ck_assert_int_eq(memmap_render_svg(rep, NULL, NULL, f, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "region 0 block 1: state \"lost\""), "bad state: got \"%s\"", err);
	fclose(f);
	free(buf);
	json_object_put(rep);
}
END_TEST

/* A report written by libflex itself (flex_alloc_report JSON) renders. */
START_TEST(a_libflex_report_renders)
{
	struct flex_alloc_config cfg;
	struct flex_alloc *a;
	struct json_object *rep;
	struct picture pic = { 0 };
	char path[] = "/tmp/test_memmap_rep_XXXXXX", err[256] = "";
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_msg(fd >= 0, "mkstemp failed");
	config_one_size(&cfg, 1 * MiB, 2);
	cfg.fixed_regions = 2;
	a = new_allocator(&cfg, 2 * MiB, 0, NULL);
	must_alloc(a, 1000, FLEX_ALLOC_TENSOR);
	must_free(a, must_alloc(a, 300 * KiB, FLEX_ALLOC_TENSOR));
	must_alloc(a, 64 * KiB, FLEX_ALLOC_PROGRAM);
	f = fdopen(fd, "w");
	ck_assert_int_eq(flex_alloc_report(a, f, FLEX_ALLOC_REPORT_JSON), 0);
	fclose(f);
	flex_alloc_destroy(a);
	ck_assert_msg(memmap_load_report(path, 0, &rep, err, sizeof(err)) == 0, "load: %s", err);
	unlink(path);
	ck_assert_msg(render(rep, NULL, NULL, &pic, err, sizeof(err)) == 0, "render: %s", err);
	ck_assert_msg(count_class(&pic, "block tensor") == 1 && count_class(&pic, "block program") == 1,
		      "libflex report: expected 1 tensor and 1 program rect, got %u and %u",
		      count_class(&pic, "block tensor"), count_class(&pic, "block program"));
	ck_assert_msg(count_class(&pic, "block free largest") == 2,
		      "libflex report: one largest free block per region expected, got %u",
		      count_class(&pic, "block free largest"));
	free(pic.svg);
	json_object_put(rep);
}
END_TEST

/* The points of the <polyline class="history @which">, or 0 if none. */
static unsigned int polyline(const char *svg, const char *which, double *x, double *y,
			     unsigned int max)
{
	char key[64];
	const char *p;
	unsigned int n = 0;
	int used;

	snprintf(key, sizeof(key), "<polyline class=\"history %s\"", which);
	p = strstr(svg, key);
	if (!p || !(p = strstr(p, "points=\"")))
		return 0;
	p += strlen("points=\"");
	while (n < max && sscanf(p, "%lf,%lf%n", &x[n], &y[n], &used) == 2) {
		n++;
		p += used;
	}
	return n;
}

START_TEST(a_history_is_drawn_over_time)
{
	struct flex_alloc_config cfg;
	struct flex_alloc *a;
	struct json_object *rep;
	struct picture pic = { 0 };
	flex_alloc_index_t x, y;
	double px[32], py[32], rx[32], ry[32], up;
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	unsigned int n, ooms = 0;
	FILE *f;

	config_one_size(&cfg, 1 * MiB, 1);
	a = new_allocator(&cfg, 1 * MiB, 0, NULL);
	must_alloc(a, 256 * KiB, FLEX_ALLOC_TENSOR);	/* before recording */
	ck_assert_int_eq(flex_alloc_record_history(a, 16), 0);
	x = must_alloc(a, 512 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_int_eq(flex_alloc_block_alloc(a, 512 * KiB, FLEX_ALLOC_TENSOR, &y), -ENOMEM);
	must_free(a, x);
	must_alloc(a, 128 * KiB, FLEX_ALLOC_TENSOR);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(flex_alloc_report(a, f, FLEX_ALLOC_REPORT_JSON), 0);
	fclose(f);
	flex_alloc_destroy(a);
	rep = json_tokener_parse(buf);
	free(buf);
	ck_assert_msg(rep, "the JSON report with a history does not parse");
	ck_assert_msg(render(rep, NULL, NULL, &pic, err, sizeof(err)) == 0, "render: %s", err);

	/* 4 events, two points each: 256 KiB, 768, (OOM) 768, 256, 384 KiB. */
	n = polyline(pic.svg, "allocated", px, py, 32);
	ck_assert_msg(n == 8, "allocated line: expected 8 points (2 per event), got %u", n);
	/* Steps of the line: +512 KiB, the OOM (flat), -512 KiB, +128 KiB. */
	up = py[0] - py[1];
	ck_assert_msg(up > 0 && fabs(py[2] - py[3]) < 0.01 && fabs((py[5] - py[4]) - up) < 0.05 &&
		      fabs((py[6] - py[7]) - up / 4) < 0.05,
		      "allocated line: expected steps of +u, 0, -u, +u/4 (u = %.2f px); y = %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f",
		      up, py[0], py[1], py[2], py[3], py[4], py[5], py[6], py[7]);
	/*
	 * Absolute levels: the 1 MiB region reserved before recording is the
	 * top (2 steps above the floor), the 256 KiB allocated before it half
	 * a step above the floor.
	 */
	ck_assert_msg(polyline(pic.svg, "reserved", rx, ry, 32) == 8 &&
		      fabs(ry[0] - ry[7]) < 0.01,
		      "reserved line: expected 8 points, flat at the 1 MiB region");
	ck_assert_msg(fabs((ry[0] + 2 * up - py[0]) - up / 2) < 0.05,
		      "the first allocated level (256 KiB) should sit %.2f px above the floor, it is %.2f",
		      up / 2, ry[0] + 2 * up - py[0]);
	for (const char *p = pic.svg; (p = strstr(p, "<circle class=\"history oom\"")); p++)
		ooms++;
	ck_assert_msg(ooms == 1 && strstr(pic.svg, "out of memory: 512 KiB asked"),
		      "one OOM mark with its size expected, got %u", ooms);
	ck_assert_msg(strstr(pic.svg, "4 events kept of 4 recorded"), "history heading missing");
	{
		char path[] = "/tmp/test_memmap_XXXXXX", cmd[256];
		int fd = mkstemp(path), ret;

		ck_assert_msg(fd >= 0 && write(fd, pic.svg, pic.len) == (ssize_t)pic.len,
			      "writing the SVG to %s failed", path);
		close(fd);
		snprintf(cmd, sizeof(cmd), "/usr/bin/xmllint --noout %s", path);
		ret = system(cmd);
		unlink(path);
		ck_assert_msg(ret == 0, "xmllint --noout on the SVG with a history: got %d", ret);
	}
	free(pic.svg);
	json_object_put(rep);
}
END_TEST

/* A block freed after queued work is drawn apart ("block pending"). */
START_TEST(pending_blocks_are_drawn_apart)
{
	struct json_object *rep = json_tokener_parse(
		"{\"summary\":{\"reserved_bytes\":1024,\"allocated_bytes\":512},\"regions\":["
		"{\"region\":0,\"region_id\":0,\"size\":1024,\"blocks\":["
		"{\"offset\":0,\"size\":256,\"state\":\"allocated\",\"kind\":\"tensor\",\"index\":\"0x1\",\"requested\":256},"
		"{\"offset\":256,\"size\":256,\"state\":\"pending\",\"kind\":\"tensor\",\"index\":\"0x2\",\"requested\":200},"
		"{\"offset\":512,\"size\":512,\"state\":\"free\"}]}]}");
	struct picture pic = { 0 };
	const struct rect *r;
	char err[256] = "";

	ck_assert_msg(rep, "test report does not parse");
	ck_assert_msg(render(rep, NULL, NULL, &pic, err, sizeof(err)) == 0, "render: %s", err);
	ck_assert_msg(count_class(&pic, "block tensor") == 1 && count_class(&pic, "block pending") == 1,
		      "expected 1 tensor and 1 pending rect, got %u and %u",
		      count_class(&pic, "block tensor"), count_class(&pic, "block pending"));
	r = find_rect(&pic, 0, 256);
	ck_assert_msg(strstr(r->title, "freed, waiting for queued work: tensor 0x2"),
		      "pending tooltip: got \"%s\"", r->title);
	ck_assert_msg(strstr(pic.svg, ">pending free</text>"), "legend lacks the pending free entry");
	free(pic.svg);
	json_object_put(rep);
}
END_TEST

/* A device's memory: regions at their physical address, per function. */
START_TEST(a_device_is_drawn_by_physical_address)
{
	struct json_object *dev = json_tokener_parse(
		"{\"device\":0,\"capacity\":1073741824,\"mem_base\":4294967296,"
		"\"region_align\":2097152,\"functions\":[{\"fn\":0,\"name\":\"flex0\"},"
		"{\"fn\":1,\"name\":\"flex0vf0\"}]}");
	struct json_object *regions = json_tokener_parse(
		"[{\"device\":0,\"handle\":3,\"fn\":0,\"function\":\"pf\","
		"\"phys_addr\":4294967296,\"size\":268435456,\"resident\":4096,"
		"\"owner_pid\":311,\"owner_comm\":\"trainer\"},"
		"{\"device\":0,\"handle\":9,\"fn\":1,\"function\":\"vf0\","
		"\"phys_addr\":4831838208,\"size\":2097152,\"resident\":0,"
		"\"owner_pid\":402,\"owner_comm\":\"in<fer\"}]");
	struct json_object *bad = json_tokener_parse(
		"[{\"handle\":4,\"fn\":0,\"phys_addr\":5368709120,\"size\":4194304}]");
	char *svg = NULL, err[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&svg, &len);
	const char *p;
	char buf[64];
	int ret;

	ck_assert_msg(dev && regions && bad && f, "test input does not parse");
	ret = memmap_render_device_svg(dev, regions, NULL, f, err, sizeof(err));
	fclose(f);
	ck_assert_msg(ret == 0, "render: %d %s", ret, err);
	/* The whole-device bar: 1 GiB over 1152 px; region 3 is its first quarter. */
	p = strstr(svg, "data-handle=\"3\"");
	ck_assert_msg(p, "no rect for handle 3");
	while (p > svg && strncmp(p, "<rect", 5))
		p--;
	ck_assert_msg(attr(p, "width", buf, sizeof(buf)) && fabs(strtod(buf, NULL) - 288) < 0.01,
		      "handle 3 (256 MiB of 1 GiB) width: expected 288, got %s", buf);
	ck_assert_msg(attr(p, "x", buf, sizeof(buf)) && fabs(strtod(buf, NULL) - 24) < 0.01,
		      "handle 3 x: expected 24, got %s", buf);
	ck_assert_msg(attr(p, "fill", buf, sizeof(buf)) && !strcmp(buf, "#4e79a7"),
		      "the PF's colour: got %s", buf);
	p = strstr(svg, "data-handle=\"9\"");
	ck_assert_msg(p, "no rect for handle 9");
	ck_assert_msg(strstr(p, "data-function=\"vf0\" data-pid=\"402\""),
		      "handle 9: function and pid attributes");
	ck_assert_msg(strstr(svg, "handle 9 \xc2\xb7 flex0 vf0 \xc2\xb7 pid 402 in&lt;fer"),
		      "the region line of handle 9 (escaped)");
	ck_assert_msg(strstr(svg, "flex0vf0: 1 region, 2 MiB"), "the legend of the VF");
	ck_assert_msg(strstr(svg, "<g class=\"bar\" id=\"span\">"), "no zoomed bar");
	free(svg);

	svg = NULL;
	f = open_memstream(&svg, &len);
	ret = memmap_render_device_svg(dev, bad, NULL, f, err, sizeof(err));
	fclose(f);
	ck_assert_msg(ret == -EINVAL && strstr(err, "region 4"),
		      "a region past the end: expected -EINVAL naming it, got %d \"%s\"", ret, err);
	free(svg);
	json_object_put(dev);
	json_object_put(regions);
	json_object_put(bad);
}
END_TEST

static Suite *memmap_suite(void)
{
	Suite *s = suite_create("memmap");
	TCase *tc = tcase_create("memmap");

	tcase_add_test(tc, loads_the_chosen_report);
	tcase_add_test(tc, blocks_are_drawn_to_scale_by_kind);
	tcase_add_test(tc, labels_tooltips_and_legend);
	tcase_add_test(tc, owners_come_from_the_live_region_list);
	tcase_add_test(tc, the_svg_is_valid_xml);
	tcase_add_test(tc, malformed_reports_are_refused_with_the_place);
	tcase_add_test(tc, a_libflex_report_renders);
	tcase_add_test(tc, a_history_is_drawn_over_time);
	tcase_add_test(tc, pending_blocks_are_drawn_apart);
	tcase_add_test(tc, a_device_is_drawn_by_physical_address);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(memmap_suite());
}
