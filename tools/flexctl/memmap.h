/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flexctl memory map: a libflex memory report (flex_alloc_report() with
 * FLEX_ALLOC_REPORT_JSON, or the file FLEX_ALLOC_REPORT=path.json writes at
 * exit) drawn as an SVG picture, one band per region, every block to scale;
 * or a device's memory, its live regions placed by physical address.
 *
 * Pure functions of their inputs (no device access), so the host unit test
 * tests/unit/test_memmap.c renders a known layout and checks the picture.
 */
#ifndef FLEXCTL_MEMMAP_H
#define FLEXCTL_MEMMAP_H

#include <stddef.h>
#include <stdio.h>

#include <json.h>

#define MEMMAP_DEFAULT_WIDTH	1200U
#define MEMMAP_MARGIN		24.0	/* px left and right of every bar */
#define MEMMAP_MIN_BLOCK_PX	1.5	/* narrowest block drawn */

/**
 * struct memmap_opts - how to draw.
 * @width:	picture width in px (the bars are width - 2 * MEMMAP_MARGIN).
 * @min_block_px: blocks narrower than this to scale are drawn this wide,
 *		so that a 128-byte allocation in a 12 GiB region stays visible.
 * @title:	heading, or NULL for "flex memory map".
 * @source:	where the report came from (shown under the heading), or NULL.
 * @function:	"pf" or "vfM": which function the report's allocator ran on,
 *		to match its region ids against the live list (a VF region id
 *		is a lookup-table index, the same on every VF); NULL: any.
 * @device:	device index of the live list entries to match, -1: any.
 */
struct memmap_opts {
	unsigned int width;
	double min_block_px;
	const char *title;
	const char *source;
	const char *function;
	int device;
};

/** memmap_opts_init() - the defaults above. */
void memmap_opts_init(struct memmap_opts *o);

/**
 * memmap_load_report() - read one report from a file of reports.
 * @path:	the file; FLEX_ALLOC_REPORT appends one JSON object per
 *		allocator destroyed, so it may hold several.
 * @which:	0 for the last report in the file, N >= 1 for the N-th.
 * @out:	the report (caller puts it with json_object_put()).
 * @err:	a message naming the file and what is wrong, on failure.
 *
 * Return: 0; -errno if the file cannot be read; -EINVAL if it is not
 * JSON or has no "regions" array; -ENOENT if it holds fewer than @which
 * reports.
 */
int memmap_load_report(const char *path, unsigned int which, struct json_object **out,
		       char *err, size_t errlen);

/**
 * memmap_render_svg() - draw @report as an SVG document on @out.
 * @report:	a report object: {"summary": {...}, "regions": [{"region",
 *		"region_id", "size", "allocated_bytes", "free_bytes",
 *		"largest_free_block", "num_live_blocks", "num_free_blocks",
 *		"fragmentation", "blocks": [{"offset", "size", "state",
 *		"kind", "index", "requested"}]}]}.
 * @live:	the live region list (`flexctl regions --json`: objects with
 *		"device", "function", "region_id", "size", "owner_pid",
 *		"owner_comm", "handle"), or NULL: gives each region its owner.
 * @o:		options, or NULL for the defaults.
 *
 * Each block is a <rect> of class "block tensor", "block program",
 * "block pending" (state "pending": freed, its memory waits for queued
 * work) or "block free" (the largest free block of a region also "largest") with
 * data-region/data-offset/data-size attributes and a <title> tooltip.
 * When the report has a "history" ({"recorded", "events": [{"t_ns",
 * "action", "size", ...}]}, flex_alloc_record_history()), a last band
 * <g id="history"> draws allocated and reserved bytes over time
 * (<polyline class="history allocated"> and "history reserved", two
 * points per event) and a <circle class="history oom"> per failed
 * allocation.
 *
 * Return: 0; -EINVAL when the report is malformed (a region without a
 * size, a block outside its region), with @err naming the region and
 * block; -EIO when writing failed.
 */
int memmap_render_svg(struct json_object *report, struct json_object *live,
		      const struct memmap_opts *o, FILE *out, char *err, size_t errlen);

/**
 * memmap_render_device_svg() - draw a device's memory as an SVG document.
 * @dev:	the device as `flexctl devices --json` lists it ("device",
 *		"capacity", "mem_base", "region_align", "functions": [{"fn",
 *		"name"}]).
 * @regions:	its live regions as `flexctl regions --json` lists them
 *		("handle", "fn", "function", "phys_addr", "size", "resident",
 *		"owner_pid", "owner_comm"), or NULL for none.
 * @o:		options (width, title), or NULL for the defaults.
 *
 * Draws a bar of the whole device memory by physical address and, when
 * regions are held, a second bar zoomed on the span they occupy, each
 * region a <rect class="region"> in its function's colour with
 * data-handle/data-phys/data-size/data-function/data-pid attributes and a
 * tooltip, a legend of the functions (regions and bytes each), and one line
 * per region (class "region-label": handle, function, pid and command,
 * address, size, resident bytes).
 *
 * Return: 0; -EINVAL when the device lacks its capacity or base, or a region
 * lies outside it, with @err saying which; -EIO when writing failed.
 */
int memmap_render_device_svg(struct json_object *dev, struct json_object *regions,
			     const struct memmap_opts *o, FILE *out, char *err, size_t errlen);

#endif /* FLEXCTL_MEMMAP_H */
