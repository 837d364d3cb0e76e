// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the FlexAllocator unit tests: see unit_util.h. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"

/* Threads of one test may log at once (refused frees are logged). */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void log_capture_fn(void *user, int priority, const char *msg)
{
	struct log_capture *c = user;
	size_t n = strlen(msg);
	char *t;

	pthread_mutex_lock(&log_lock);
	t = realloc(c->text, c->len + n + 2);
	if (!t) {
		pthread_mutex_unlock(&log_lock);
		return;
	}
	c->text = t;
	memcpy(c->text + c->len, msg, n);
	c->len += n;
	c->text[c->len++] = '\n';
	c->text[c->len] = '\0';
	c->lines++;
	if (priority == FLEX_LOG_ERR)
		c->errors++;
	pthread_mutex_unlock(&log_lock);
}

bool log_has(const struct log_capture *c, const char *needle)
{
	return c->text && strstr(c->text, needle);
}

void log_capture_reset(struct log_capture *c)
{
	free(c->text);
	memset(c, 0, sizeof(*c));
}

static int rec_acquire(void *user, uint64_t size, struct flex_region *out)
{
	struct recording_source *rec = user;
	int err = flex_region_source_acquire(rec->inner, size, out);

	if (rec->attempts < REC_MAX) {
		rec->size[rec->attempts] = size;
		rec->result[rec->attempts] = err;
	}
	rec->attempts++;
	return err;
}

static int rec_release(void *user, const struct flex_region *region)
{
	struct recording_source *rec = user;

	rec->releases++;
	return flex_region_source_release(rec->inner, region);
}

static int rec_info(void *user, struct flex_region_source_info *out)
{
	struct recording_source *rec = user;

	return flex_region_source_get_info(rec->inner, out);
}

static void rec_destroy(void *user)
{
	struct recording_source *rec = user;

	flex_region_source_unref(rec->inner);
	rec->inner = NULL;
}

struct flex_region_source *recording_source_wrap(struct recording_source *rec,
						 struct flex_region_source *inner,
						 unsigned int advertised)
{
	static const struct flex_region_source_ops ops = {
		.acquire = rec_acquire,
		.release = rec_release,
		.destroy = rec_destroy,
		.info = rec_info,
	};
	struct flex_region_source *src;

	memset(rec, 0, sizeof(*rec));
	rec->inner = inner;
	ck_assert_int_eq(flex_region_source_new(&ops, rec, advertised, &src), 0);
	return src;
}

struct flex_region_source *recording_source_new(struct recording_source *rec, uint64_t capacity,
						unsigned int table, unsigned int advertised)
{
	struct flex_region_source *inner;

	ck_assert_int_eq(flex_region_source_new_memory(capacity, table, &inner), 0);
	return recording_source_wrap(rec, inner, advertised);
}

static void log_discard(void *user, int priority, const char *msg)
{
}

struct flex_alloc *new_allocator_on(struct flex_region_source *src,
				    const struct flex_alloc_config *cfg, struct log_capture *log)
{
	struct flex_alloc_config c;
	struct flex_alloc *a = NULL;
	int err;

	if (cfg)
		c = *cfg;
	else
		flex_alloc_config_init(&c);
	if (!c.log_fn) {
		c.log_fn = log ? log_capture_fn : log_discard;
		c.log_user = log;
	}
	err = flex_alloc_new(src, &c, &a);
	ck_assert_msg(err == 0, "flex_alloc_new: expected 0, got %d (%s)", err,
		      flex_last_error());
	return a;
}

struct flex_alloc *new_allocator(const struct flex_alloc_config *cfg, uint64_t capacity,
				 unsigned int table, struct log_capture *log)
{
	struct flex_region_source *src;
	struct flex_alloc *a;

	ck_assert_int_eq(flex_region_source_new_memory(capacity, table, &src), 0);
	a = new_allocator_on(src, cfg, log);
	flex_region_source_unref(src);
	return a;
}

void config_one_size(struct flex_alloc_config *cfg, uint64_t region_size, unsigned int max_regions)
{
	config_fallbacks(cfg, &region_size, 1);
	cfg->max_regions = max_regions;
}

void config_fallbacks(struct flex_alloc_config *cfg, const uint64_t *sizes, unsigned int n)
{
	flex_alloc_config_init(cfg);
	cfg->num_fallback_sizes = n;
	memcpy(cfg->fallback_sizes, sizes, n * sizeof(sizes[0]));
}

static int collect(void *user, const struct flex_alloc_block_info *blk)
{
	struct block_list *l = user;

	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->b = realloc(l->b, l->cap * sizeof(*l->b));
		require(l->b, "out of memory collecting blocks");
	}
	l->b[l->n++] = *blk;
	return 0;
}

void walk_blocks(struct flex_alloc *a, struct block_list *out)
{
	int err;

	out->n = 0;
	err = flex_alloc_walk(a, collect, out);
	require(err == 0, "flex_alloc_walk: expected 0, got %d", err);
}

void block_list_free(struct block_list *l)
{
	free(l->b);
	memset(l, 0, sizeof(*l));
}

void check_invariants(struct flex_alloc *a, const char *what)
{
	struct block_list l = { 0 };
	struct flex_alloc_stats st;
	uint64_t free_total = 0, alloc_total = 0, largest = 0, nfree = 0, nlive = 0;
	unsigned int regions = 0;
	size_t i = 0;

	walk_blocks(a, &l);
	require(flex_alloc_get_stats(a, &st) == 0, "%s: stats failed", what);
	while (i < l.n) {
		struct flex_alloc_region_stats rs;
		struct flex_vaddr va;
		uint64_t size;
		unsigned int region = l.b[i].region;
		uint64_t end = 0;
		bool prev_free = false;

		require(flex_alloc_get_region_stats(a, region, &rs) == 0,
			      "%s: walk reports region %u that has no stats", what, region);
		require(region == regions, "%s: region %u walked out of order (expected %u)",
			      what, region, regions);
		for (; i < l.n && l.b[i].region == region; i++) {
			const struct flex_alloc_block_info *b = &l.b[i];

			require(b->offset == end,
				      "%s: region %u block at %llu, expected %llu (gap or overlap)",
				      what, region, (unsigned long long)b->offset,
				      (unsigned long long)end);
			require(b->size && b->size % FLEX_ALLOC_ALIGN == 0 &&
				      b->offset % FLEX_ALLOC_ALIGN == 0,
				      "%s: region %u block at %llu size %llu not 128-aligned", what,
				      region, (unsigned long long)b->offset,
				      (unsigned long long)b->size);
			require(!(prev_free && b->is_free),
				      "%s: region %u has adjacent free blocks at %llu", what, region,
				      (unsigned long long)b->offset);
			require(b->region_id == rs.region_id,
				      "%s: block region_id %llu, region's %llu", what,
				      (unsigned long long)b->region_id,
				      (unsigned long long)rs.region_id);
			if (b->is_free) {
				free_total += b->size;
				nfree++;
				if (b->size > largest)
					largest = b->size;
			} else if (b->is_pending) {
				/* Freed after queues: its index is dead, its memory not. */
				alloc_total += b->size;
				nlive++;
				require(flex_alloc_block_resolve(a, b->index, &va, &size) == -ENOENT,
					"%s: pending block 0x%llx still resolves", what,
					(unsigned long long)b->index);
			} else {
				alloc_total += b->size;
				nlive++;
				require(flex_alloc_block_resolve(a, b->index, &va, &size) == 0 &&
					      va.offset == b->offset && size == b->size &&
					      va.region_id == b->region_id,
					      "%s: index 0x%llx does not resolve to its block at %llu",
					      what, (unsigned long long)b->index,
					      (unsigned long long)b->offset);
			}
			prev_free = b->is_free;
			end = b->offset + b->size;
		}
		require(end == rs.size, "%s: region %u blocks end at %llu, size %llu", what,
			      region, (unsigned long long)end, (unsigned long long)rs.size);
		regions++;
	}
	require(regions == st.num_regions, "%s: walked %u regions, stats say %u", what,
		      regions, st.num_regions);
	require(free_total == st.free_bytes && alloc_total == st.allocated_bytes,
		      "%s: blocks hold %llu free / %llu allocated, stats %llu / %llu", what,
		      (unsigned long long)free_total, (unsigned long long)alloc_total,
		      (unsigned long long)st.free_bytes, (unsigned long long)st.allocated_bytes);
	require(nfree == st.num_free_blocks && nlive == st.num_live_blocks,
		      "%s: %llu free / %llu live blocks walked, stats %llu / %llu", what,
		      (unsigned long long)nfree, (unsigned long long)nlive,
		      (unsigned long long)st.num_free_blocks,
		      (unsigned long long)st.num_live_blocks);
	require(largest == st.largest_free_block,
		      "%s: largest free block walked %llu, stats %llu", what,
		      (unsigned long long)largest, (unsigned long long)st.largest_free_block);
	block_list_free(&l);
}

flex_alloc_index_t must_alloc(struct flex_alloc *a, uint64_t size, enum flex_alloc_kind kind)
{
	flex_alloc_index_t idx = FLEX_ALLOC_INDEX_NONE;
	int err = flex_alloc_block_alloc(a, size, kind, &idx);

	require(err == 0, "alloc %llu bytes: expected 0, got %d (%s)",
		      (unsigned long long)size, err, flex_last_error());
	require(idx != FLEX_ALLOC_INDEX_NONE, "alloc %llu bytes returned index 0",
		      (unsigned long long)size);
	return idx;
}

struct flex_vaddr must_resolve(struct flex_alloc *a, flex_alloc_index_t idx)
{
	struct flex_vaddr va;
	int err = flex_alloc_block_resolve(a, idx, &va, NULL);

	require(err == 0, "resolve 0x%llx: expected 0, got %d (%s)",
		      (unsigned long long)idx, err, flex_last_error());
	return va;
}

void must_free(struct flex_alloc *a, flex_alloc_index_t idx)
{
	int err = flex_alloc_block_free(a, idx);

	require(err == 0, "free 0x%llx: expected 0, got %d (%s)", (unsigned long long)idx,
		      err, flex_last_error());
}

int run_suite(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
