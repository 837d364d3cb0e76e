/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the FlexAllocator unit tests: allocators on the
 * in-memory source, a recording region source, a log capture, block walks
 * and the structural invariants every region must keep.
 */
#ifndef FLEX_UNIT_UTIL_H
#define FLEX_UNIT_UTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <flex/allocator.h>

/*
 * ck_assert_msg() without its cost when it holds: Check records the place
 * of every passing assertion (a write to its log pipe), which dominates
 * loops that check thousands of blocks per step.
 */
#define require(cond, ...) \
	do { \
		if (!(cond)) \
			ck_abort_msg(__VA_ARGS__); \
	} while (0)

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

/* Log lines a test captured (allocator log_fn). */
struct log_capture {
	char *text;		/* all lines, '\n'-separated */
	size_t len;
	unsigned int lines;
	unsigned int errors;	/* lines at FLEX_LOG_ERR */
};

void log_capture_fn(void *user, int priority, const char *msg);
bool log_has(const struct log_capture *c, const char *needle);
void log_capture_reset(struct log_capture *c);

/*
 * A region source that records every acquire attempt (size and result)
 * and forwards to an in-memory source (its info too).
 */
#define REC_MAX 64
struct recording_source {
	struct flex_region_source *inner;
	unsigned int attempts;
	uint64_t size[REC_MAX];
	int result[REC_MAX];
	unsigned int releases;
};

/*
 * Wraps an in-memory source of @capacity bytes and @table entries; tells
 * allocators it has @advertised entries (0: no limit).
 */
struct flex_region_source *recording_source_new(struct recording_source *rec, uint64_t capacity,
						unsigned int table, unsigned int advertised);
/* The same around @inner, whose reference it takes over. */
struct flex_region_source *recording_source_wrap(struct recording_source *rec,
						 struct flex_region_source *inner,
						 unsigned int advertised);

/* An allocator on @src (the allocator takes its own reference). */
struct flex_alloc *new_allocator_on(struct flex_region_source *src,
				    const struct flex_alloc_config *cfg, struct log_capture *log);

/*
 * An allocator with @cfg (defaults if NULL) on an in-memory source of
 * @capacity bytes and @table entries, logging into @log (may be NULL:
 * silent). Fails the test if it cannot be created.
 */
struct flex_alloc *new_allocator(const struct flex_alloc_config *cfg, uint64_t capacity,
				 unsigned int table, struct log_capture *log);

/* A config whose regions are all @region_size bytes (one fallback size). */
void config_one_size(struct flex_alloc_config *cfg, uint64_t region_size, unsigned int max_regions);
/* Defaults, but with the @n fallback sizes @sizes. */
void config_fallbacks(struct flex_alloc_config *cfg, const uint64_t *sizes, unsigned int n);

/* Every block, as flex_alloc_walk() reports them. */
struct block_list {
	struct flex_alloc_block_info *b;
	size_t n, cap;
};

void walk_blocks(struct flex_alloc *a, struct block_list *out);
void block_list_free(struct block_list *l);

/*
 * Check what must hold after every operation: per region, blocks cover
 * [0, size) contiguously, offsets and sizes are multiples of 128, no two
 * free blocks are adjacent, and the stats agree with the blocks. Fails the
 * test naming @what and the first broken rule.
 */
void check_invariants(struct flex_alloc *a, const char *what);

/* Allocate or fail the test; returns the index. */
flex_alloc_index_t must_alloc(struct flex_alloc *a, uint64_t size, enum flex_alloc_kind kind);
/* Resolve or fail the test. */
struct flex_vaddr must_resolve(struct flex_alloc *a, flex_alloc_index_t idx);
/* Free or fail the test. */
void must_free(struct flex_alloc *a, flex_alloc_index_t idx);

/* Run a suite with the default runner; returns the process exit status. */
int run_suite(Suite *s);

#endif /* FLEX_UNIT_UTIL_H */
