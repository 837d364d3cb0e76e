// SPDX-License-Identifier: GPL-2.0
/*
 * flexctl memory map: a libflex JSON memory report drawn as SVG.
 *
 * One band per region: a heading (region id, size, owner), a line of
 * totals (allocated, free, largest free block, fragmentation) and a bar
 * where every block sits at its offset, to scale. Tensors and programs have
 * their own colours; free space is hatched; the region's largest free block
 * is outlined, because fragmentation is the distance between it and the
 * free total. Blocks too small to see are widened to a minimum width. Free
 * blocks are drawn first, allocations over them, so a widened allocation
 * covers free space rather than the other way round. Every block has a
 * <title> (a tooltip in a browser) with its offset, size and index.
 *
 * A report with an allocation history (flex_alloc_record_history()) gets
 * one more band: allocated and reserved bytes over the time the kept
 * events span, and a mark at each failed allocation, as PyTorch's memory
 * timeline draws its recorded history.
 *
 * A device's memory (memmap_render_device_svg()) is drawn from the driver's
 * live lists instead: the whole device by physical address, the span its
 * regions occupy zoomed in, each region coloured by its function, and a
 * line per region naming its handle, function, owner and place.
 *
 * The SVG is written with fprintf: it is a flat list of elements, and an
 * XML library would add a dependency to emit what a dozen format strings do
 * (text is escaped by xml_text()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memmap.h"
#include "tool.h"

#define BAND_H		118.0	/* px per region band */
#define HISTORY_H	150.0	/* px of the history band */
#define PLOT_H		96.0
#define BAR_H		44.0
#define HEADER_H	104.0

#define COLOR_TENSOR	"#4e79a7"
#define COLOR_PROGRAM	"#f28e2b"
#define COLOR_FREE_BG	"#f3f3f3"
#define COLOR_FREE_LINE	"#c4c4c4"
#define COLOR_LARGEST	"#2ca02c"
#define COLOR_RESERVED	"#9c9c9c"
#define COLOR_OOM	"#d62728"

void memmap_opts_init(struct memmap_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->width = MEMMAP_DEFAULT_WIDTH;
	o->min_block_px = MEMMAP_MIN_BLOCK_PX;
	o->device = -1;
}

/* ---- reading ---- */

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 65536, n = 0;
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(cap + 1);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);

		n += r;
		if (n < cap)
			break;
		cap *= 2;
		char *nb = realloc(buf, cap + 1);

		if (!nb) {
			free(buf);
			buf = NULL;
			errno = ENOMEM;
		}
		buf = nb;
	}
	if (buf && ferror(f)) {
		free(buf);
		buf = NULL;
		errno = EIO;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = n;
	}
	return buf;
}

int memmap_load_report(const char *path, unsigned int which, struct json_object **out,
		       char *err, size_t errlen)
{
	struct json_tokener *tok;
	struct json_object *last = NULL, *regions;
	unsigned int count = 0;
	size_t len, pos = 0;
	char *buf;
	int ret = 0;

	*out = NULL;
	buf = slurp(path, &len);
	if (!buf)
		return tool_fail(err, errlen, -errno, "cannot read memory report %s: %s", path,
				 strerror(errno));
	tok = json_tokener_new();
	if (!tok) {
		free(buf);
		return tool_fail(err, errlen, -ENOMEM, "out of memory reading %s", path);
	}
	/* Reports are appended one after the other: parse them in turn. */
	for (;;) {
		struct json_object *obj;
		size_t line = 1;

		while (pos < len && strchr(" \t\r\n", buf[pos]))
			pos++;
		if (pos >= len)
			break;
		json_tokener_reset(tok);
		obj = json_tokener_parse_ex(tok, buf + pos, (int)(len - pos));
		if (!obj) {
			enum json_tokener_error e = json_tokener_get_error(tok);

			for (size_t i = 0; i < pos + json_tokener_get_parse_end(tok) && i < len; i++)
				line += buf[i] == '\n';
			ret = tool_fail(err, errlen, -EINVAL,
					"%s: line %zu: not a JSON memory report: %s", path, line,
					e == json_tokener_continue ? "unexpected end of file" :
					json_tokener_error_desc(e));
			break;
		}
		pos += json_tokener_get_parse_end(tok);
		count++;
		json_object_put(last);
		last = obj;
		if (which && count == which)
			break;
	}
	json_tokener_free(tok);
	free(buf);
	if (ret) {
		json_object_put(last);
		return ret;
	}
	if (!count || (which && count < which)) {
		json_object_put(last);
		return tool_fail(err, errlen, -ENOENT, "%s holds %u memory report%s, not %u",
				 path, count, count == 1 ? "" : "s", which ? which : 1);
	}
	if (!json_object_is_type(last, json_type_object) ||
	    !json_object_object_get_ex(last, "regions", &regions) ||
	    !json_object_is_type(regions, json_type_array)) {
		json_object_put(last);
		return tool_fail(err, errlen, -EINVAL, "%s: report %u has no \"regions\" array "
				 "(is it a libflex JSON memory report?)", path,
				 which ? which : count);
	}
	*out = last;
	return 0;
}

/* ---- helpers ---- */

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* Write @s as XML character data / attribute text. */
static void xml_text(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		default:
			/* Control characters are not allowed in XML 1.0. */
			fputc((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' ? '?' : *s, f);
		}
	}
}

/* printf into a buffer, then write it escaped. */
static void xml_printf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void xml_printf(FILE *f, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	xml_text(f, buf);
}

/*
 * The live region that @region (of the report) is, or NULL. Region ids are
 * physical addresses on a PF (unique on a device) but lookup-table indexes
 * on a VF (the same on every VF): match the function and device when the
 * caller said which, and the size, and give up when it stays ambiguous.
 */
static struct json_object *find_owner(struct json_object *live, struct json_object *region,
				      const struct memmap_opts *o, unsigned int *candidates)
{
	uint64_t id = tool_ju64(region, "region_id", 0), size = tool_ju64(region, "size", 0);
	struct json_object *found = NULL;
	size_t n = live ? json_object_array_length(live) : 0;

	*candidates = 0;
	for (size_t i = 0; i < n; i++) {
		struct json_object *l = json_object_array_get_idx(live, i);

		if (tool_ju64(l, "region_id", UINT64_MAX) != id)
			continue;
		if (o->function && strcmp(tool_jstr(l, "function", ""), o->function))
			continue;
		if (o->device >= 0 && tool_ju64(l, "device", 0) != (uint64_t)o->device)
			continue;
		/* libflex may use less of a region than its size (the 512 GiB cap). */
		if (tool_jhas(l, "size") && tool_ju64(l, "size", 0) < size)
			continue;
		(*candidates)++;
		found = l;
	}
	return *candidates == 1 ? found : NULL;
}

/* ---- drawing ---- */

struct layout {
	double x0, w;		/* bar left and width, px */
	double min_px;
};

static double x_of(const struct layout *L, uint64_t off, uint64_t rsize)
{
	return L->x0 + (double)off * L->w / (double)rsize;
}

static double w_of(const struct layout *L, uint64_t size, uint64_t rsize)
{
	double w = (double)size * L->w / (double)rsize;

	return w < L->min_px ? L->min_px : w;
}

/*
 * The end of both pictures' <style> (after their own classes), the hatch
 * pattern of free space and the white background.
 */
static const char style_end[] =
	"  .frame { fill: none; stroke: #555555; stroke-width: 1; }\n"
	"  .h1 { font-size: 20px; font-weight: bold; fill: #222222; }\n"
	"  .h2 { font-size: 14px; font-weight: bold; fill: #222222; }\n"
	"  .t { font-size: 12px; fill: #333333; }\n"
	"  .axis { font-size: 10px; fill: #666666; }\n"
	"  .tick { stroke: #999999; stroke-width: 1; }\n"
	"</style>\n<defs>\n"
	"  <pattern id=\"hatch\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\" "
	"patternTransform=\"rotate(45)\">\n"
	"    <rect width=\"6\" height=\"6\" fill=\"" COLOR_FREE_BG "\"/>\n"
	"    <line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"" COLOR_FREE_LINE "\" "
	"stroke-width=\"2\"/>\n"
	"  </pattern>\n</defs>\n"
	"<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";

/* The document's start: the <svg> element and its <title>. */
static void svg_open(FILE *f, const char *title, double width, double height)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
		width, height, width, height);
	fprintf(f, "<title>");
	xml_text(f, title);
	fprintf(f, "</title>\n");
}

/* Quarter ticks under a bar at @ybar: the labels @label(i) gives. */
static void axis(FILE *f, const struct layout *L, double ybar, const char *const label[5])
{
	for (int q = 0; q <= 4; q++) {
		double x = L->x0 + L->w * q / 4.0;

		fprintf(f, "  <line class=\"tick\" x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>"
			"<text class=\"axis\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\">%s</text>\n",
			x, ybar + BAR_H, x, ybar + BAR_H + 5, x, ybar + BAR_H + 16,
			q == 0 ? "start" : q == 4 ? "end" : "middle", label[q]);
	}
}

static void header(FILE *f, const struct memmap_opts *o, struct json_object *report,
		   double width, double height)
{
	struct json_object *s = json_object_object_get(report, "summary");
	char h1[32], h2[32], h3[32], h4[32];
	uint64_t reserved = tool_ju64(s, "reserved_bytes", 0), alloc = tool_ju64(s, "allocated_bytes", 0);
	uint64_t nregions;

	svg_open(f, o->title ? o->title : "flex memory map", width, height);
	fprintf(f, "<style>\n"
		"  .block.tensor { fill: " COLOR_TENSOR "; stroke: #ffffff; stroke-width: 0.4; }\n"
		"  .block.program { fill: " COLOR_PROGRAM "; stroke: #ffffff; stroke-width: 0.4; }\n"
		"  .block.free { fill: url(#hatch); stroke: none; }\n"
		"  .block.free.largest { stroke: " COLOR_LARGEST "; stroke-width: 2; }\n"
		"  .block.pending { fill: " COLOR_TENSOR "; fill-opacity: 0.35; stroke: " COLOR_TENSOR "; "
		"stroke-width: 1; stroke-dasharray: 3 2; }\n"
		"  .block:hover { stroke: #000000; stroke-width: 1.5; }\n"
		"%s", style_end);
	fprintf(f, "<text class=\"h1\" x=\"%.0f\" y=\"30\">", MEMMAP_MARGIN);
	xml_text(f, o->title ? o->title : "flex memory map");
	fprintf(f, "</text>\n<text class=\"t\" id=\"summary\" x=\"%.0f\" y=\"52\">", MEMMAP_MARGIN);
	if (o->source)
		xml_printf(f, "%s \xc2\xb7 ", o->source);
	nregions = tool_ju64(s, "num_regions",
			json_object_array_length(json_object_object_get(report, "regions")));
	xml_printf(f, "%" PRIu64 " region%s \xc2\xb7 reserved %s \xc2\xb7 allocated %s (%.1f%%) in %"
		   PRIu64 " block%s \xc2\xb7 free %s in %" PRIu64 " block%s \xc2\xb7 largest free %s "
		   "\xc2\xb7 fragmentation %.3f",
		   nregions, plural(nregions),
		   tool_size(h1, sizeof(h1), reserved), tool_size(h2, sizeof(h2), alloc),
		   reserved ? 100.0 * (double)alloc / (double)reserved : 0.0,
		   tool_ju64(s, "num_live_blocks", 0), plural(tool_ju64(s, "num_live_blocks", 0)),
		   tool_size(h3, sizeof(h3), tool_ju64(s, "free_bytes", 0)),
		   tool_ju64(s, "num_free_blocks", 0), plural(tool_ju64(s, "num_free_blocks", 0)),
		   tool_size(h4, sizeof(h4), tool_ju64(s, "largest_free_block", 0)),
		   tool_jdouble(s, "fragmentation", 0.0));
	fprintf(f, "</text>\n");

	/* Legend. */
	{
		static const struct { const char *cls, *label; } items[] = {
			{ "block tensor", "tensor" },
			{ "block program", "program" },
			{ "block free", "free" },
			{ "block free largest", "largest free block" },
			{ "block pending", "pending free" },
		};
		double x = MEMMAP_MARGIN;

		fprintf(f, "<g id=\"legend\">\n");
		for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
			fprintf(f, "  <rect class=\"legend %s\" x=\"%.0f\" y=\"66\" width=\"22\" "
				"height=\"14\"/><text class=\"t\" x=\"%.0f\" y=\"78\">%s</text>\n",
				items[i].cls + strlen("block "), x, x + 28, items[i].label);
			x += 28 + 8 * strlen(items[i].label) + 24;
		}
		fprintf(f, "  <text class=\"axis\" x=\"%.0f\" y=\"78\">blocks to scale; "
			"narrower than %.1f px drawn %.1f px wide; hover a block for details</text>\n",
			x, o->min_block_px, o->min_block_px);
		fprintf(f, "</g>\n");
	}
}

/* The class "legend X" is styled as "block X" would be. */
static const char legend_style[] =
	"<style>\n"
	"  .legend.tensor { fill: " COLOR_TENSOR "; }\n"
	"  .legend.program { fill: " COLOR_PROGRAM "; }\n"
	"  .legend.free { fill: url(#hatch); stroke: #bbbbbb; stroke-width: 1; }\n"
	"  .legend.free.largest { stroke: " COLOR_LARGEST "; stroke-width: 2; }\n"
	"  .legend.pending { fill: " COLOR_TENSOR "; fill-opacity: 0.35; stroke: " COLOR_TENSOR "; "
	"stroke-dasharray: 3 2; }\n"
	"</style>\n";

static int check_blocks(struct json_object *region, unsigned int ri, uint64_t rsize,
			char *err, size_t errlen)
{
	struct json_object *blocks = json_object_object_get(region, "blocks");
	size_t nb;

	if (!blocks || !json_object_is_type(blocks, json_type_array))
		return tool_fail(err, errlen, -EINVAL, "region %u: no \"blocks\" array", ri);
	nb = json_object_array_length(blocks);
	for (size_t i = 0; i < nb; i++) {
		struct json_object *b = json_object_array_get_idx(blocks, i);
		uint64_t off = tool_ju64(b, "offset", UINT64_MAX), size = tool_ju64(b, "size", 0);
		const char *state = tool_jstr(b, "state", "");

		if (!tool_jhas(b, "offset") || !size || off > rsize || size > rsize - off)
			return tool_fail(err, errlen, -EINVAL, "region %u block %zu: offset %" PRIu64
					 " size %" PRIu64 " is not inside the region's %" PRIu64
					 " bytes", ri, i, tool_ju64(b, "offset", 0), size, rsize);
		if (strcmp(state, "free") && strcmp(state, "allocated") && strcmp(state, "pending"))
			return tool_fail(err, errlen, -EINVAL, "region %u block %zu: state \"%s\" "
					 "(expected \"free\", \"allocated\" or \"pending\")", ri, i,
					 state);
	}
	return 0;
}

static void draw_block(FILE *f, const struct layout *L, unsigned int ri, struct json_object *b,
		       uint64_t rsize, double y, bool largest)
{
	uint64_t off = tool_ju64(b, "offset", 0), size = tool_ju64(b, "size", 0);
	bool is_free = !strcmp(tool_jstr(b, "state", ""), "free");
	bool pending = !strcmp(tool_jstr(b, "state", ""), "pending");
	const char *kind = is_free ? "free" : tool_jstr(b, "kind", "tensor");
	char h1[32], h2[32];

	/* Anything but a program is drawn as a tensor (the default kind). */
	if (!is_free && strcmp(kind, "program"))
		kind = "tensor";
	fprintf(f, "  <rect class=\"block %s%s\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
		"height=\"%.2f\" data-region=\"%u\" data-offset=\"%" PRIu64 "\" data-size=\"%"
		PRIu64 "\"", pending ? "pending" : kind, largest ? " largest" : "", x_of(L, off, rsize), y,
		w_of(L, size, rsize), BAR_H, ri, off, size);
	if (!is_free) {
		fprintf(f, " data-index=\"");
		xml_text(f, tool_jstr(b, "index", ""));
		fputc('"', f);
	}
	fprintf(f, "><title>");
	if (is_free)
		xml_printf(f, "%sfree block\noffset 0x%" PRIx64 " (%s)\nsize %s (%" PRIu64 " bytes)",
			   largest ? "largest " : "", off, tool_size(h1, sizeof(h1), off),
			   tool_size(h2, sizeof(h2), size), size);
	else
		xml_printf(f, "%s%s %s\noffset 0x%" PRIx64 " (%s)\nsize %s (%" PRIu64
			   " bytes), requested %" PRIu64, pending ? "freed, waiting for queued work: " : "",
			   kind, tool_jstr(b, "index", "?"), off, tool_size(h1, sizeof(h1), off),
			   tool_size(h2, sizeof(h2), size), size, tool_ju64(b, "requested", size));
	fprintf(f, "</title></rect>\n");
}

static void draw_region(FILE *f, const struct layout *L, const struct memmap_opts *o,
			struct json_object *region, unsigned int ri, struct json_object *live,
			double y0)
{
	struct json_object *blocks = json_object_object_get(region, "blocks");
	size_t nb = json_object_array_length(blocks), largest_i = SIZE_MAX;
	uint64_t rsize = tool_ju64(region, "size", 0), largest = 0;
	uint64_t tensor = 0, program = 0, freeb = 0, n_alloc = 0, n_free = 0;
	struct json_object *owner;
	unsigned int candidates;
	char h1[32], h2[32], h3[32], h4[32], h5[32];
	double ybar = y0 + 40;

	for (size_t i = 0; i < nb; i++) {
		struct json_object *b = json_object_array_get_idx(blocks, i);
		uint64_t size = tool_ju64(b, "size", 0);

		if (!strcmp(tool_jstr(b, "state", ""), "free")) {
			freeb += size;
			n_free++;
			if (size > largest) {
				largest = size;
				largest_i = i;
			}
		} else if (!strcmp(tool_jstr(b, "kind", ""), "program")) {
			program += size;
			n_alloc++;
		} else {
			tensor += size;
			n_alloc++;
		}
	}

	fprintf(f, "<g class=\"region\" id=\"region-%u\">\n", ri);
	fprintf(f, "  <text class=\"h2 region-label\" x=\"%.0f\" y=\"%.0f\">", L->x0, y0 + 14);
	xml_printf(f, "Region %u \xc2\xb7 id 0x%" PRIx64 " \xc2\xb7 %s", ri,
		   tool_ju64(region, "region_id", 0), tool_size(h1, sizeof(h1), rsize));
	owner = find_owner(live, region, o, &candidates);
	if (owner) {
		xml_printf(f, " \xc2\xb7 owner %s (pid %" PRIu64 ")",
			   tool_jstr(owner, "owner_comm", "?"), tool_ju64(owner, "owner_pid", 0));
		xml_printf(f, " \xc2\xb7 flex%" PRIu64 " %s", tool_ju64(owner, "device", 0),
			   tool_jstr(owner, "function", "?"));
		if (tool_jhas(owner, "handle"))
			xml_printf(f, " \xc2\xb7 handle %" PRIu64, tool_ju64(owner, "handle", 0));
	} else if (live && candidates > 1) {
		xml_printf(f, " \xc2\xb7 owner ambiguous (%u live regions have this id; "
			   "give --function)", candidates);
	} else if (live) {
		xml_printf(f, " \xc2\xb7 not in the live region list (released?)");
	}
	fprintf(f, "</text>\n");
	fprintf(f, "  <text class=\"t region-totals\" x=\"%.0f\" y=\"%.0f\">", L->x0, y0 + 31);
	xml_printf(f, "allocated %s (%.1f%%) in %" PRIu64 " block%s: tensors %s, programs %s "
		   "\xc2\xb7 free %s in %" PRIu64 " block%s \xc2\xb7 largest free %s \xc2\xb7 "
		   "fragmentation %.3f",
		   tool_size(h1, sizeof(h1), tensor + program),
		   rsize ? 100.0 * (double)(tensor + program) / (double)rsize : 0.0, n_alloc,
		   plural(n_alloc), tool_size(h2, sizeof(h2), tensor), tool_size(h3, sizeof(h3), program),
		   tool_size(h4, sizeof(h4), freeb), n_free, plural(n_free),
		   tool_size(h5, sizeof(h5), largest),
		   freeb ? 1.0 - (double)largest / (double)freeb : 0.0);
	fprintf(f, "</text>\n");

	/* Free space first, allocations over it. */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < nb; i++) {
			struct json_object *b = json_object_array_get_idx(blocks, i);
			bool is_free = !strcmp(tool_jstr(b, "state", ""), "free");

			if (is_free == (pass == 0))
				draw_block(f, L, ri, b, rsize, ybar, i == largest_i);
		}
	}
	fprintf(f, "  <rect class=\"frame\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
		L->x0, ybar, L->w, BAR_H);
	/* Offset axis: quarters of the region. */
	{
		char t[4][32];
		const char *label[5] = { "0", t[0], t[1], t[2], t[3] };

		for (int q = 1; q <= 4; q++)
			tool_size(t[q - 1], sizeof(t[0]), q == 4 ? rsize : rsize / 4 * q);
		axis(f, L, ybar, label);
	}
	fprintf(f, "</g>\n");
}

/* The report's kept history events, or NULL. */
static struct json_object *history_events(struct json_object *report)
{
	struct json_object *h, *ev;

	if (!json_object_object_get_ex(report, "history", &h) ||
	    !json_object_object_get_ex(h, "events", &ev) ||
	    !json_object_is_type(ev, json_type_array) || !json_object_array_length(ev))
		return NULL;
	return ev;
}

/* What event @e adds to allocated (*@da) and reserved (*@dr) bytes. */
static void event_delta(struct json_object *e, int64_t *da, int64_t *dr)
{
	const char *a = tool_jstr(e, "action", "");
	int64_t size = (int64_t)tool_ju64(e, "size", 0);

	*da = !strcmp(a, "alloc") ? size : !strcmp(a, "free") ? -size : 0;
	*dr = !strcmp(a, "region_acquire") ? size : !strcmp(a, "region_release") ? -size : 0;
}

static double level_y(double ybase, int64_t level, int64_t peak)
{
	return ybase - PLOT_H * (double)level / (double)peak;
}

/*
 * The history band: allocated (class "history allocated") and reserved
 * ("history reserved") bytes as step lines over the events' time span,
 * and a circle ("history oom") at each failed allocation. The levels are
 * the summary's figures less what the kept events added, so they are
 * right also when the ring dropped older events.
 */
static void draw_history(FILE *f, const struct layout *L, struct json_object *report,
			 struct json_object *ev, double y0)
{
	struct json_object *s = json_object_object_get(report, "summary");
	struct json_object *h = json_object_object_get(report, "history");
	size_t n = json_object_array_length(ev);
	int64_t start[2] = { (int64_t)tool_ju64(s, "allocated_bytes", 0),
			     (int64_t)tool_ju64(s, "reserved_bytes", 0) };
	int64_t level[2], peak = 1, d[2];
	uint64_t t0 = tool_ju64(json_object_array_get_idx(ev, 0), "t_ns", 0);
	uint64_t t1 = tool_ju64(json_object_array_get_idx(ev, n - 1), "t_ns", 0);
	double ybase = y0 + 30 + PLOT_H, span = t1 > t0 ? (double)(t1 - t0) : 1.0;
	char h1[32];

	/* Back from the summary to the levels before the first kept event. */
	for (size_t i = 0; i < n; i++) {
		event_delta(json_object_array_get_idx(ev, i), &d[0], &d[1]);
		start[0] -= d[0];
		start[1] -= d[1];
	}
	level[0] = start[0];
	level[1] = start[1];
	for (size_t i = 0; i <= n; i++) {
		for (int k = 0; k < 2; k++)
			if (level[k] > peak)
				peak = level[k];
		if (i < n) {
			event_delta(json_object_array_get_idx(ev, i), &d[0], &d[1]);
			level[0] += d[0];
			level[1] += d[1];
		}
	}

	fprintf(f, "<g id=\"history\">\n  <text class=\"h2\" x=\"%.0f\" y=\"%.0f\">", L->x0,
		y0 + 14);
	xml_printf(f, "Allocation history \xc2\xb7 %zu event%s kept of %" PRIu64 " recorded "
		   "\xc2\xb7 %.3f ms \xc2\xb7 up to %s", n, plural(n), tool_ju64(h, "recorded", n),
		   span / 1e6, tool_size(h1, sizeof(h1), (uint64_t)peak));
	fprintf(f, "</text>\n");
	for (int k = 0; k < 2; k++) {
		int64_t lv = start[k];

		fprintf(f, "  <polyline class=\"history %s\" fill=\"none\" stroke=\"%s\" "
			"stroke-width=\"1.5\" points=\"", k ? "reserved" : "allocated",
			k ? COLOR_RESERVED : COLOR_TENSOR);
		for (size_t i = 0; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(ev, i);
			double x = L->x0 + L->w * (double)(tool_ju64(e, "t_ns", t0) - t0) / span;

			event_delta(e, &d[0], &d[1]);
			fprintf(f, "%s%.2f,%.2f", i ? " " : "", x, level_y(ybase, lv, peak));
			lv += d[k];
			fprintf(f, " %.2f,%.2f", x, level_y(ybase, lv, peak));
		}
		fprintf(f, "\"/>\n");
	}
	level[0] = start[0];
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(ev, i);

		event_delta(e, &d[0], &d[1]);
		level[0] += d[0];
		if (strcmp(tool_jstr(e, "action", ""), "oom"))
			continue;
		fprintf(f, "  <circle class=\"history oom\" cx=\"%.2f\" cy=\"%.2f\" r=\"4\" "
			"fill=\"" COLOR_OOM "\"><title>",
			L->x0 + L->w * (double)(tool_ju64(e, "t_ns", t0) - t0) / span,
			level_y(ybase, level[0], peak));
		xml_printf(f, "out of memory: %s asked (thread %" PRIu64 ")",
			   tool_size(h1, sizeof(h1), tool_ju64(e, "size", 0)), tool_ju64(e, "thread", 0));
		fprintf(f, "</title></circle>\n");
	}
	fprintf(f, "  <rect class=\"frame\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n"
		"  <text class=\"axis\" x=\"%.2f\" y=\"%.2f\">allocated (blue) and reserved (grey) "
		"bytes over time; red: failed allocations</text>\n</g>\n",
		L->x0, ybase - PLOT_H, L->w, PLOT_H, L->x0, ybase + 14);
}

int memmap_render_svg(struct json_object *report, struct json_object *live,
		      const struct memmap_opts *opts, FILE *out, char *err, size_t errlen)
{
	struct json_object *regions, *events;
	struct memmap_opts defaults;
	const struct memmap_opts *o = opts;
	struct layout L;
	size_t nr;
	double width, height;

	if (!o) {
		memmap_opts_init(&defaults);
		o = &defaults;
	}
	if (!report || !json_object_object_get_ex(report, "regions", &regions) ||
	    !json_object_is_type(regions, json_type_array))
		return tool_fail(err, errlen, -EINVAL, "not a memory report: no \"regions\" array");
	if (live && !json_object_is_type(live, json_type_array))
		return tool_fail(err, errlen, -EINVAL, "the live region list is not an array");
	if (o->width < 200)
		return tool_fail(err, errlen, -EINVAL,
				 "picture width %u px is too small (at least 200)", o->width);
	nr = json_object_array_length(regions);
	for (size_t i = 0; i < nr; i++) {
		struct json_object *r = json_object_array_get_idx(regions, i);
		uint64_t rsize = tool_ju64(r, "size", 0);
		int ret;

		if (!rsize)
			return tool_fail(err, errlen, -EINVAL, "region %zu: no size", i);
		ret = check_blocks(r, (unsigned int)i, rsize, err, errlen);
		if (ret)
			return ret;
	}

	events = history_events(report);
	width = o->width;
	height = HEADER_H + (nr ? nr : 1) * BAND_H + (events ? HISTORY_H : 0);
	L.x0 = MEMMAP_MARGIN;
	L.w = width - 2 * MEMMAP_MARGIN;
	L.min_px = o->min_block_px;

	header(out, o, report, width, height);
	fputs(legend_style, out);
	if (!nr)
		fprintf(out, "<text class=\"t\" x=\"%.0f\" y=\"%.0f\">The allocator held no "
			"region when the report was written.</text>\n", MEMMAP_MARGIN, HEADER_H + 20);
	for (size_t i = 0; i < nr; i++)
		draw_region(out, &L, o, json_object_array_get_idx(regions, i), (unsigned int)i, live,
			    HEADER_H + i * BAND_H);
	if (events)
		draw_history(out, &L, report, events, HEADER_H + (nr ? nr : 1) * BAND_H);
	fprintf(out, "</svg>\n");
	if (fflush(out) || ferror(out))
		return tool_fail(err, errlen, -EIO, "writing the SVG failed");
	return 0;
}

/* ---- a device's memory ---- */

#define DEV_BAR1_Y	112.0	/* the whole device */
#define DEV_BAR2_Y	212.0	/* the span regions occupy, zoomed */
#define DEV_LIST_Y	312.0	/* one line per region */
#define DEV_ROW_H	18.0

/* A colour per function: the PF first, then the VFs (Tableau 10). */
static const char *const fn_colors[] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};

static const char *fn_color(uint64_t fn)
{
	return fn_colors[fn % (sizeof(fn_colors) / sizeof(fn_colors[0]))];
}

/* The regions of @regions as rects on a bar showing [lo, hi) at @ybar. */
static void device_bar(FILE *f, const struct layout *L, struct json_object *regions, uint64_t lo,
		       uint64_t hi, double ybar, const char *id)
{
	char t[5][32];
	const char *label[5];

	fprintf(f, "<g class=\"bar\" id=\"%s\">\n", id);
	fprintf(f, "  <rect class=\"free\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
		L->x0, ybar, L->w, BAR_H);
	for (size_t i = 0; i < json_object_array_length(regions); i++) {
		struct json_object *r = json_object_array_get_idx(regions, i);
		uint64_t phys = tool_ju64(r, "phys_addr", 0), size = tool_ju64(r, "size", 0);
		char h1[32], h2[32];

		if (phys < lo || phys + size > hi)
			continue;
		fprintf(f, "  <rect class=\"region\" fill=\"%s\" x=\"%.2f\" y=\"%.2f\" "
			"width=\"%.2f\" height=\"%.2f\" data-handle=\"%" PRIu64 "\" data-phys=\"%"
			PRIu64 "\" data-size=\"%" PRIu64 "\" data-function=\"",
			fn_color(tool_ju64(r, "fn", 0)), x_of(L, phys - lo, hi - lo), ybar,
			w_of(L, size, hi - lo), BAR_H, tool_ju64(r, "handle", 0), phys, size);
		xml_text(f, tool_jstr(r, "function", "?"));
		fprintf(f, "\" data-pid=\"%" PRIu64 "\"><title>", tool_ju64(r, "owner_pid", 0));
		xml_printf(f, "region %" PRIu64 " of flex%" PRIu64 " %s\nowner %s (pid %" PRIu64
			   ")\nphys 0x%" PRIx64 "\nsize %s, resident %s", tool_ju64(r, "handle", 0),
			   tool_ju64(r, "device", 0), tool_jstr(r, "function", "?"),
			   tool_jstr(r, "owner_comm", "?"), tool_ju64(r, "owner_pid", 0), phys,
			   tool_size(h1, sizeof(h1), size),
			   tool_size(h2, sizeof(h2), tool_ju64(r, "resident", 0)));
		fprintf(f, "</title></rect>\n");
	}
	fprintf(f, "  <rect class=\"frame\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/>\n",
		L->x0, ybar, L->w, BAR_H);
	for (int q = 0; q <= 4; q++) {
		snprintf(t[q], sizeof(t[q]), "0x%" PRIx64, lo + (hi - lo) / 4 * q);
		label[q] = t[q];
	}
	snprintf(t[4], sizeof(t[4]), "0x%" PRIx64, hi);
	axis(f, L, ybar, label);
	fprintf(f, "</g>\n");
}

int memmap_render_device_svg(struct json_object *dev, struct json_object *regions,
			     const struct memmap_opts *opts, FILE *out, char *err, size_t errlen)
{
	struct json_object *fns = json_object_object_get(dev, "functions");
	uint64_t base = tool_ju64(dev, "mem_base", 0), cap = tool_ju64(dev, "capacity", 0);
	uint64_t lo = UINT64_MAX, hi = 0, used = 0, align = tool_ju64(dev, "region_align", 1);
	size_t nr = regions ? json_object_array_length(regions) : 0;
	struct memmap_opts defaults;
	const struct memmap_opts *o = opts;
	char title[64], h1[32], h2[32], h3[32];
	struct layout L;
	double width, height, x;

	if (!o) {
		memmap_opts_init(&defaults);
		o = &defaults;
	}
	if (!cap || !tool_jhas(dev, "mem_base"))
		return tool_fail(err, errlen, -EINVAL, "the device has no capacity or memory base "
				 "(an older module?)");
	if (o->width < 200)
		return tool_fail(err, errlen, -EINVAL,
				 "picture width %u px is too small (at least 200)", o->width);
	for (size_t i = 0; i < nr; i++) {
		struct json_object *r = json_object_array_get_idx(regions, i);
		uint64_t phys = tool_ju64(r, "phys_addr", 0), size = tool_ju64(r, "size", 0);

		if (!size || phys < base || size > cap || phys - base > cap - size)
			return tool_fail(err, errlen, -EINVAL, "region %" PRIu64 ": 0x%" PRIx64
					 " + %" PRIu64 " is not inside the device's memory",
					 tool_ju64(r, "handle", 0), phys, size);
		lo = phys < lo ? phys : lo;
		hi = phys + size > hi ? phys + size : hi;
		used += size;
	}
	snprintf(title, sizeof(title), "flex%" PRIu64 " device memory", tool_ju64(dev, "device", 0));
	width = o->width;
	height = DEV_LIST_Y + (nr ? nr : 1) * DEV_ROW_H + 16;
	L.x0 = MEMMAP_MARGIN;
	L.w = width - 2 * MEMMAP_MARGIN;
	L.min_px = o->min_block_px;

	svg_open(out, o->title ? o->title : title, width, height);
	fprintf(out, "<style>\n"
		"  .free { fill: url(#hatch); stroke: none; }\n"
		"  .region { stroke: #ffffff; stroke-width: 0.4; }\n"
		"  .region:hover { stroke: #000000; stroke-width: 1.5; }\n"
		"%s", style_end);
	fprintf(out, "<text class=\"h1\" x=\"%.0f\" y=\"30\">", MEMMAP_MARGIN);
	xml_text(out, o->title ? o->title : title);
	fprintf(out, "</text>\n<text class=\"t\" id=\"summary\" x=\"%.0f\" y=\"52\">",
		MEMMAP_MARGIN);
	xml_printf(out, "capacity %s at 0x%" PRIx64 " \xc2\xb7 %zu region%s hold %s (%.3f%%) "
		   "\xc2\xb7 free %s", tool_size(h1, sizeof(h1), cap), base, nr, plural(nr),
		   tool_size(h2, sizeof(h2), used), 100.0 * (double)used / (double)cap,
		   tool_size(h3, sizeof(h3), cap - used));
	fprintf(out, "</text>\n<g id=\"legend\">\n");
	x = MEMMAP_MARGIN;
	for (size_t j = 0; fns && j < json_object_array_length(fns); j++) {
		struct json_object *fn = json_object_array_get_idx(fns, j);
		uint64_t n = 0, bytes = 0;
		char label[96];

		for (size_t i = 0; i < nr; i++) {
			struct json_object *r = json_object_array_get_idx(regions, i);

			if (tool_ju64(r, "fn", 0) == tool_ju64(fn, "fn", 0)) {
				n++;
				bytes += tool_ju64(r, "size", 0);
			}
		}
		snprintf(label, sizeof(label), "%s: %" PRIu64 " region%s, %s",
			 tool_jstr(fn, "name", "?"), n, plural(n), tool_size(h1, sizeof(h1), bytes));
		fprintf(out, "  <rect x=\"%.0f\" y=\"66\" width=\"22\" height=\"14\" fill=\"%s\"/>"
			"<text class=\"t\" x=\"%.0f\" y=\"78\">", x, fn_color(tool_ju64(fn, "fn", 0)),
			x + 28);
		xml_text(out, label);
		fprintf(out, "</text>\n");
		x += 28 + 7 * strlen(label) + 24;
	}
	fprintf(out, "</g>\n<text class=\"h2\" x=\"%.0f\" y=\"%.0f\">The whole device, by "
		"physical address</text>\n", MEMMAP_MARGIN, DEV_BAR1_Y - 8);
	device_bar(out, &L, regions, base, base + cap, DEV_BAR1_Y, "device");
	if (nr) {
		/* The span the regions occupy, at least 16 regions' alignment wide. */
		lo -= (lo - base) % align;
		if (hi - lo < 16 * align)
			hi = lo + 16 * align > base + cap ? base + cap : lo + 16 * align;
		fprintf(out, "<text class=\"h2\" x=\"%.0f\" y=\"%.0f\">Where the regions are: "
			"%s from 0x%" PRIx64 "</text>\n", MEMMAP_MARGIN, DEV_BAR2_Y - 8,
			tool_size(h1, sizeof(h1), hi - lo), lo);
		device_bar(out, &L, regions, lo, hi, DEV_BAR2_Y, "span");
	}
	fprintf(out, "<g id=\"regions\">\n");
	if (!nr)
		fprintf(out, "  <text class=\"t\" x=\"%.0f\" y=\"%.0f\">No region is held.</text>\n",
			MEMMAP_MARGIN, DEV_LIST_Y);
	for (size_t i = 0; i < nr; i++) {
		struct json_object *r = json_object_array_get_idx(regions, i);
		double y = DEV_LIST_Y + i * DEV_ROW_H;

		fprintf(out, "  <rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" "
			"fill=\"%s\"/><text class=\"t region-label\" x=\"%.0f\" y=\"%.0f\">",
			MEMMAP_MARGIN, y - 10, fn_color(tool_ju64(r, "fn", 0)), MEMMAP_MARGIN + 18, y);
		xml_printf(out, "handle %" PRIu64 " \xc2\xb7 flex%" PRIu64 " %s \xc2\xb7 pid %" PRIu64
			   " %s \xc2\xb7 0x%" PRIx64 " \xc2\xb7 %s \xc2\xb7 resident %s",
			   tool_ju64(r, "handle", 0), tool_ju64(r, "device", 0),
			   tool_jstr(r, "function", "?"), tool_ju64(r, "owner_pid", 0),
			   tool_jstr(r, "owner_comm", "?"), tool_ju64(r, "phys_addr", 0),
			   tool_size(h1, sizeof(h1), tool_ju64(r, "size", 0)),
			   tool_size(h2, sizeof(h2), tool_ju64(r, "resident", 0)));
		fprintf(out, "</text>\n");
	}
	fprintf(out, "</g>\n</svg>\n");
	if (fflush(out) || ferror(out))
		return tool_fail(err, errlen, -EIO, "writing the SVG failed");
	return 0;
}
