// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator's statistics, block walks and memory reports (summary, CSV,
 * JSON). Each region is read under its own lock, one at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_internal.h"

static double fragmentation(uint64_t largest, uint64_t free_bytes)
{
	return free_bytes ? 1.0 - (double)largest / (double)free_bytes : 0.0;
}

FLEX_EXPORT int flex_alloc_get_stats(struct flex_alloc *a, struct flex_alloc_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < a->max_regions; i++) {
		struct region *r = &a->regions[i];

		pthread_mutex_lock(r->lock);
		/* Counts of released regions still count. */
		st->num_allocs += r->num_allocs;
		st->num_frees += r->num_frees;
		if (region_present(r)) {
			uint64_t largest = region_largest_free(r);

			st->num_regions++;
			st->reserved_bytes += r->size;
			st->allocated_bytes += r->allocated_bytes;
			st->requested_bytes += r->requested_bytes;
			st->free_bytes += r->free_bytes;
			st->num_live_blocks += r->num_live;
			st->num_free_blocks += region_num_free(r);
			if (largest > st->largest_free_block)
				st->largest_free_block = largest;
		}
		pthread_mutex_unlock(r->lock);
	}
	pthread_mutex_lock(&a->grow_lock);
	st->peak_reserved_bytes = a->peak_reserved_bytes;
	st->num_region_acquires = a->num_region_acquires;
	st->num_region_releases = a->num_region_releases;
	pthread_mutex_unlock(&a->grow_lock);
	st->peak_allocated_bytes = atomic_load(&a->peak_allocated_bytes);
	if (st->peak_allocated_bytes < st->allocated_bytes)
		st->peak_allocated_bytes = st->allocated_bytes;
	st->num_failed_allocs = atomic_load(&a->num_failed_allocs);
	st->num_ooms = atomic_load(&a->num_ooms);
	st->num_pressure_retries = atomic_load(&a->num_pressure_retries);
	st->num_bad_frees = atomic_load(&a->num_bad_frees);
	pthread_mutex_lock(&a->use_lock);
	st->pending_free_bytes = a->pending_bytes;
	st->num_pending_frees = atomic_load(&a->num_pending);
	pthread_mutex_unlock(&a->use_lock);
	st->max_regions = a->max_regions;
	st->regions_locked = atomic_load(&a->regions_locked);
	st->fragmentation = fragmentation(st->largest_free_block, st->free_bytes);
	return 0;
}

FLEX_EXPORT int flex_alloc_reset_peak_stats(struct flex_alloc *a)
{
	uint64_t allocated = 0;

	for (unsigned int i = 0; i < a->max_regions; i++) {
		struct region *r = &a->regions[i];

		pthread_mutex_lock(r->lock);
		if (region_present(r))
			allocated += r->allocated_bytes;
		pthread_mutex_unlock(r->lock);
	}
	atomic_store(&a->peak_allocated_bytes, allocated);
	pthread_mutex_lock(&a->grow_lock);
	a->peak_reserved_bytes = a->reserved_bytes;
	pthread_mutex_unlock(&a->grow_lock);
	return 0;
}

FLEX_EXPORT int flex_alloc_mem_get_info(struct flex_alloc *a, uint64_t *free, uint64_t *total)
{
	struct flex_region_source_info info;
	int err = flex_region_source_get_info(a->src, &info);

	if (err == -EOPNOTSUPP)
		return flex_error_set(err, "flex_alloc_mem_get_info: the region source cannot say how much memory it has");
	if (err)
		return flex_error_set(err, "flex_alloc_mem_get_info: the region source's info failed: %s",
				 strerror(-err));
	*free = info.free;
	*total = info.capacity;
	return 0;
}

static void fill_region_stats(const struct region *r, struct flex_alloc_region_stats *out)
{
	out->region_id = r->src.region_id;
	out->size = r->size;
	out->allocated_bytes = r->allocated_bytes;
	out->free_bytes = r->free_bytes;
	out->largest_free_block = region_largest_free(r);
	out->num_live_blocks = r->num_live;
	out->num_free_blocks = region_num_free(r);
	out->num_allocs = r->num_allocs;
	out->num_frees = r->num_frees;
	out->fragmentation = fragmentation(out->largest_free_block, out->free_bytes);
}

FLEX_EXPORT int flex_alloc_get_region_stats(struct flex_alloc *a, unsigned int n,
					    struct flex_alloc_region_stats *out)
{
	unsigned int seen = 0;

	for (unsigned int i = 0; i < a->max_regions; i++) {
		struct region *r = &a->regions[i];

		pthread_mutex_lock(r->lock);
		if (region_present(r) && seen++ == n) {
			fill_region_stats(r, out);
			pthread_mutex_unlock(r->lock);
			return 0;
		}
		pthread_mutex_unlock(r->lock);
	}
	return flex_error_set(-ENOENT, "flex_alloc_get_region_stats: no region %u (%u held)", n, seen);
}

struct walk_ctx {
	struct flex_alloc *a;
	const struct region *r;
	unsigned int n;
	int (*fn)(void *user, const struct flex_alloc_block_info *blk);
	void *user;
};

static int walk_block(void *user, uint32_t start, uint32_t size, const struct slot *s,
		      uint32_t slot)
{
	struct walk_ctx *w = user;
	flex_alloc_index_t freed;
	struct flex_alloc_block_info info = {
		.region = w->n,
		.is_free = !s,
		.region_id = w->r->src.region_id,
		.offset = gran_to_bytes(start),
		.size = gran_to_bytes(size),
		.kind = s ? (enum flex_alloc_kind)s->kind : FLEX_ALLOC_TENSOR,
		.index = s ? make_index(w->a, w->r->slot, slot, s->gen) : FLEX_ALLOC_INDEX_NONE,
		.requested = s ? slot_requested(s) : 0,
	};

	if (s && s->ext && flex_deferred_pending(w->a, w->r, slot, &freed)) {
		info.is_pending = 1;
		info.index = freed;
	}
	return w->fn(w->user, &info);
}

/*
 * Call @fn for each block of each region held, with the region locked;
 * @region_fn (if any) first for the region itself.
 */
static int walk(struct flex_alloc *a,
		int (*region_fn)(void *user, unsigned int n, const struct region *r),
		int (*fn)(void *user, const struct flex_alloc_block_info *blk), void *user)
{
	struct walk_ctx w = { .a = a, .fn = fn, .user = user };
	int ret = 0;

	for (unsigned int i = 0; i < a->max_regions && !ret; i++) {
		struct region *r = &a->regions[i];

		pthread_mutex_lock(r->lock);
		if (region_present(r)) {
			w.r = r;
			if (region_fn)
				ret = region_fn(user, w.n, r);
			if (!ret)
				ret = flex_region_walk(r, walk_block, &w);
			if (ret == -ENOMEM)
				flex_error_set(ret, "flex_alloc_walk: out of host memory");
			w.n++;
		}
		pthread_mutex_unlock(r->lock);
	}
	return ret;
}

FLEX_EXPORT int flex_alloc_walk(struct flex_alloc *a,
				int (*fn)(void *user, const struct flex_alloc_block_info *blk),
				void *user)
{
	return walk(a, NULL, fn, user);
}

/* ---- reports ---- */

static void write_summary(FILE *f, const char *prefix, const struct flex_alloc_stats *st)
{
	char h1[32], h2[32], h3[32];

	fprintf(f, "%sflex_alloc: %u of %u regions (%s), reserved %s (peak %s)\n", prefix,
		st->num_regions, st->max_regions, st->regions_locked ? "locked" : "not locked",
		flex_human_bytes(h1, sizeof(h1), st->reserved_bytes),
		flex_human_bytes(h2, sizeof(h2), st->peak_reserved_bytes));
	fprintf(f, "%s  allocated %s (peak %s) in %llu blocks, requested %llu bytes; waiting for queues %s in %llu blocks\n",
		prefix, flex_human_bytes(h1, sizeof(h1), st->allocated_bytes),
		flex_human_bytes(h2, sizeof(h2), st->peak_allocated_bytes),
		(unsigned long long)st->num_live_blocks, (unsigned long long)st->requested_bytes,
		flex_human_bytes(h3, sizeof(h3), st->pending_free_bytes),
		(unsigned long long)st->num_pending_frees);
	fprintf(f, "%s  free %s in %llu blocks, largest free block %s, fragmentation %.4f\n", prefix,
		flex_human_bytes(h1, sizeof(h1), st->free_bytes), (unsigned long long)st->num_free_blocks,
		flex_human_bytes(h3, sizeof(h3), st->largest_free_block), st->fragmentation);
	fprintf(f, "%s  allocations %llu, frees %llu, failed allocations %llu (out of memory %llu), retries after making room %llu, refused frees %llu, regions acquired %llu, released %llu\n",
		prefix, (unsigned long long)st->num_allocs, (unsigned long long)st->num_frees,
		(unsigned long long)st->num_failed_allocs, (unsigned long long)st->num_ooms,
		(unsigned long long)st->num_pressure_retries, (unsigned long long)st->num_bad_frees,
		(unsigned long long)st->num_region_acquires,
		(unsigned long long)st->num_region_releases);
}

struct report_ctx {
	FILE *f;
	const char *prefix;
	bool first_block;
};

static int summary_region(void *user, unsigned int n, const struct region *r)
{
	struct report_ctx *c = user;
	struct flex_alloc_region_stats rs;
	char h1[32], h2[32], h3[32];

	fill_region_stats(r, &rs);
	fprintf(c->f, "%s  region %u: id 0x%llx, size %s, allocated %s in %llu blocks, free %s in %llu blocks, largest free block %s, fragmentation %.4f\n",
		c->prefix, n, (unsigned long long)rs.region_id,
		flex_human_bytes(h1, sizeof(h1), rs.size),
		flex_human_bytes(h2, sizeof(h2), rs.allocated_bytes),
		(unsigned long long)rs.num_live_blocks,
		flex_human_bytes(h3, sizeof(h3), rs.free_bytes), (unsigned long long)rs.num_free_blocks,
		flex_human_bytes(h1, sizeof(h1), rs.largest_free_block), rs.fragmentation);
	return 0;
}

static int no_block(void *user, const struct flex_alloc_block_info *b)
{
	return 0;
}

/* "free", "allocated", or "pending" (freed after queues, not reached yet). */
static const char *block_state(const struct flex_alloc_block_info *b)
{
	return b->is_free ? "free" : b->is_pending ? "pending" : "allocated";
}

static int csv_block(void *user, const struct flex_alloc_block_info *b)
{
	struct report_ctx *c = user;

	fprintf(c->f, "%u,%llu,%llu,%llu,%s,%s,0x%llx,%llu\n", b->region,
		(unsigned long long)b->region_id, (unsigned long long)b->offset,
		(unsigned long long)b->size, block_state(b),
		b->is_free ? "" : kind_name(b->kind), (unsigned long long)b->index,
		(unsigned long long)b->requested);
	return 0;
}

static int json_region(void *user, unsigned int n, const struct region *r)
{
	struct report_ctx *c = user;
	struct flex_alloc_region_stats rs;

	fill_region_stats(r, &rs);
	fprintf(c->f, "%s{\"region\":%u,\"region_id\":%llu,\"size\":%llu,\"allocated_bytes\":%llu,"
		"\"free_bytes\":%llu,\"largest_free_block\":%llu,\"num_live_blocks\":%llu,"
		"\"num_free_blocks\":%llu,\"fragmentation\":%.6f,\"blocks\":[",
		n ? "]}," : "", n, (unsigned long long)rs.region_id, (unsigned long long)rs.size,
		(unsigned long long)rs.allocated_bytes, (unsigned long long)rs.free_bytes,
		(unsigned long long)rs.largest_free_block, (unsigned long long)rs.num_live_blocks,
		(unsigned long long)rs.num_free_blocks, rs.fragmentation);
	c->first_block = true;
	return 0;
}

static int json_block(void *user, const struct flex_alloc_block_info *b)
{
	struct report_ctx *c = user;

	fprintf(c->f, "%s{\"offset\":%llu,\"size\":%llu,\"state\":\"%s\"", c->first_block ? "" : ",",
		(unsigned long long)b->offset, (unsigned long long)b->size, block_state(b));
	if (!b->is_free)
		fprintf(c->f, ",\"kind\":\"%s\",\"index\":\"0x%llx\",\"requested\":%llu",
			kind_name(b->kind), (unsigned long long)b->index,
			(unsigned long long)b->requested);
	fputc('}', c->f);
	c->first_block = false;
	return 0;
}

static void json_summary(FILE *f, const struct flex_alloc_stats *st)
{
	fprintf(f, "{\"summary\":{\"allocated_bytes\":%llu,\"peak_allocated_bytes\":%llu,"
		"\"requested_bytes\":%llu,\"reserved_bytes\":%llu,\"peak_reserved_bytes\":%llu,"
		"\"free_bytes\":%llu,\"largest_free_block\":%llu,\"num_allocs\":%llu,"
		"\"num_frees\":%llu,\"num_failed_allocs\":%llu,\"num_ooms\":%llu,"
		"\"num_pressure_retries\":%llu,\"num_bad_frees\":%llu,"
		"\"pending_free_bytes\":%llu,\"num_pending_frees\":%llu,"
		"\"num_live_blocks\":%llu,\"num_free_blocks\":%llu,\"num_region_acquires\":%llu,"
		"\"num_region_releases\":%llu,\"num_regions\":%u,\"max_regions\":%u,"
		"\"regions_locked\":%s,\"fragmentation\":%.6f},\"regions\":[",
		(unsigned long long)st->allocated_bytes, (unsigned long long)st->peak_allocated_bytes,
		(unsigned long long)st->requested_bytes, (unsigned long long)st->reserved_bytes,
		(unsigned long long)st->peak_reserved_bytes, (unsigned long long)st->free_bytes,
		(unsigned long long)st->largest_free_block, (unsigned long long)st->num_allocs,
		(unsigned long long)st->num_frees, (unsigned long long)st->num_failed_allocs,
		(unsigned long long)st->num_ooms, (unsigned long long)st->num_pressure_retries,
		(unsigned long long)st->num_bad_frees, (unsigned long long)st->pending_free_bytes,
		(unsigned long long)st->num_pending_frees, (unsigned long long)st->num_live_blocks,
		(unsigned long long)st->num_free_blocks, (unsigned long long)st->num_region_acquires,
		(unsigned long long)st->num_region_releases, st->num_regions, st->max_regions,
		st->regions_locked ? "true" : "false", st->fragmentation);
}

/*
 * The history, when recording: a summary line ("history: N events kept of
 * M recorded"), or in JSON the member "history": {"recorded": M, "events":
 * [{"t_ns", "action", "kind", "index", "region_id", "offset", "size",
 * "requested", "thread"}]}, oldest first. Return: -ENOMEM, else 0.
 */
static int write_history(struct flex_alloc *a, FILE *f, const char *prefix, bool json)
{
	struct flex_alloc_event *ev;
	uint64_t recorded;
	size_t cap, n;

	pthread_mutex_lock(&a->hist.lock);
	cap = a->hist.cap;
	pthread_mutex_unlock(&a->hist.lock);
	if (!cap)
		return 0;
	ev = malloc(cap * sizeof(*ev));
	if (!ev)
		return flex_error_set(-ENOMEM, "flex_alloc_report: no host memory for %zu history events",
				 cap);
	flex_alloc_get_history(a, ev, cap, &n, &recorded);
	if (!json) {
		fprintf(f, "%s  history: %zu events kept of %llu recorded\n", prefix, n,
			(unsigned long long)recorded);
		free(ev);
		return 0;
	}
	fprintf(f, ",\"history\":{\"recorded\":%llu,\"events\":[", (unsigned long long)recorded);
	for (size_t i = 0; i < n; i++) {
		const struct flex_alloc_event *e = &ev[i];

		fprintf(f, "%s{\"t_ns\":%llu,\"action\":\"%s\",\"kind\":\"%s\",\"index\":\"0x%llx\","
			"\"region_id\":%llu,\"offset\":%llu,\"size\":%llu,\"requested\":%llu,"
			"\"thread\":%u}", i ? "," : "", (unsigned long long)e->time_ns,
			flex_alloc_event_name(e->action), kind_name(e->kind),
			(unsigned long long)e->index, (unsigned long long)e->region_id,
			(unsigned long long)e->offset, (unsigned long long)e->size,
			(unsigned long long)e->requested, e->thread);
	}
	fputs("]}", f);
	free(ev);
	return 0;
}

FLEX_EXPORT int flex_alloc_report(struct flex_alloc *a, FILE *out,
				  enum flex_alloc_report_format format)
{
	struct report_ctx c = { .f = out, .prefix = "" };
	struct flex_alloc_stats st;
	int err = 0;

	if (!out || (unsigned int)format > FLEX_ALLOC_REPORT_JSON)
		return flex_error_set(-EINVAL, "flex_alloc_report: no stream or unknown format %d",
				 (int)format);
	flex_alloc_get_stats(a, &st);
	switch (format) {
	case FLEX_ALLOC_REPORT_SUMMARY:
		write_summary(out, "", &st);
		err = write_history(a, out, "", false);
		walk(a, summary_region, no_block, &c);
		break;
	case FLEX_ALLOC_REPORT_CSV:
		c.prefix = "# ";
		write_summary(out, c.prefix, &st);
		err = write_history(a, out, c.prefix, false);
		walk(a, summary_region, no_block, &c);
		fputs("region,region_id,offset,size,state,kind,index,requested\n", out);
		walk(a, NULL, csv_block, &c);
		break;
	case FLEX_ALLOC_REPORT_JSON:
		json_summary(out, &st);
		walk(a, json_region, json_block, &c);
		fputs(st.num_regions ? "]}]" : "]", out);
		err = write_history(a, out, "", true);
		fputs("}\n", out);
		break;
	}
	if (err)
		return err;
	if (fflush(out) || ferror(out))
		return flex_error_set(-EIO, "flex_alloc_report: writing the report failed");
	return 0;
}

void flex_alloc_write_exit_report(struct flex_alloc *a)
{
	size_t len = strlen(a->report_path);
	bool json = len >= 5 && strcmp(a->report_path + len - 5, ".json") == 0;
	FILE *f = fopen(a->report_path, "a");
	int err;

	if (!f) {
		alloc_log(a, FLEX_LOG_ERR, "flex_alloc: cannot open report file %s: %s",
			  a->report_path, strerror(errno));
		return;
	}
	err = flex_alloc_report(a, f, json ? FLEX_ALLOC_REPORT_JSON : FLEX_ALLOC_REPORT_CSV);
	if (fclose(f) || err)
		alloc_log(a, FLEX_LOG_ERR, "flex_alloc: writing report file %s failed", a->report_path);
}
