// SPDX-License-Identifier: GPL-2.0
/*
 * FlexAllocator blocks: rounding and alignment, split, coalescing with
 * every neighbour combination, program placement, indices (stale, double,
 * foreign), out-of-memory messages and the memory-pressure callback.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"

/* One region of 1 MiB: offsets are easy to predict. */
static struct flex_alloc *one_mib(struct log_capture *log, unsigned int flags)
{
	struct flex_alloc_config cfg;

	config_one_size(&cfg, 1 * MiB, 1);
	cfg.flags = flags;
	return new_allocator(&cfg, 1 * MiB, 0, log);
}

START_TEST(round_size)
{
	static const struct {
		uint64_t in, out;
	} cases[] = {
		{ 0, 128 }, { 1, 128 }, { 127, 128 }, { 128, 128 }, { 129, 256 },
		{ 255, 256 }, { 256, 256 }, { 1000, 1024 }, { 4 * MiB - 1, 4 * MiB },
		{ UINT64_MAX - 127, UINT64_MAX - 127 }, { UINT64_MAX - 126, 0 }, { UINT64_MAX, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(flex_alloc_round_size(cases[i].in) == cases[i].out,
			      "round_size(%llu): expected %llu, got %llu",
			      (unsigned long long)cases[i].in, (unsigned long long)cases[i].out,
			      (unsigned long long)flex_alloc_round_size(cases[i].in));
}
END_TEST

START_TEST(alignment_and_rounding)
{
	static const uint64_t sizes[] = { 1, 127, 128, 129, 255, 256, 1000, 4097 };
	static const uint64_t blocks[] = { 128, 128, 128, 256, 256, 256, 1024, 4224 };
	struct flex_alloc *a = one_mib(NULL, 0);
	uint64_t expect_offset = 0;

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		flex_alloc_index_t idx = must_alloc(a, sizes[i], FLEX_ALLOC_TENSOR);
		struct flex_vaddr va;
		uint64_t size;

		ck_assert_int_eq(flex_alloc_block_resolve(a, idx, &va, &size), 0);
		ck_assert_msg(size == blocks[i], "alloc %llu: block expected %llu, got %llu",
			      (unsigned long long)sizes[i], (unsigned long long)blocks[i],
			      (unsigned long long)size);
		ck_assert_msg(va.offset == expect_offset && va.offset % 128 == 0,
			      "alloc %llu: offset expected %llu, got %llu",
			      (unsigned long long)sizes[i], (unsigned long long)expect_offset,
			      (unsigned long long)va.offset);
		expect_offset += blocks[i];
		check_invariants(a, "alignment");
	}
	flex_alloc_destroy(a);
}
END_TEST

/*
 * PyTorch makes many empty storages: a 0-byte allocation takes no block,
 * no slot and no region, yet its index resolves (size 0) and frees.
 */
START_TEST(zero_byte_allocations_use_no_device_memory)
{
	struct recording_source rec;
	struct flex_region_source *src = recording_source_new(&rec, 128 * GiB, 8, 8);
	struct flex_alloc *a = new_allocator_on(src, NULL, NULL);
	flex_alloc_index_t z[100], t;
	struct flex_alloc_stats st;
	struct flex_vaddr va;
	uint64_t size = 1;

	for (int i = 0; i < 100; i++)
		z[i] = must_alloc(a, 0, FLEX_ALLOC_TENSOR);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(rec.attempts == 0 && st.reserved_bytes == 0 && st.allocated_bytes == 0 &&
		      st.num_live_blocks == 0,
		      "100 zero-byte allocations: expected no region, no block; got %u acquisitions, %llu reserved, %llu allocated in %llu blocks",
		      rec.attempts, (unsigned long long)st.reserved_bytes,
		      (unsigned long long)st.allocated_bytes, (unsigned long long)st.num_live_blocks);
	ck_assert_int_eq(flex_alloc_block_resolve(a, z[7], &va, &size), 0);
	ck_assert_msg(size == 0, "a zero-byte allocation resolves with size 0, got %llu",
		      (unsigned long long)size);
	/* Next to real blocks, which keep their place. */
	t = must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_uint_eq(must_resolve(a, t).offset, 0);
	for (int i = 0; i < 100; i++)
		must_free(a, z[i]);
	must_free(a, t);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.allocated_bytes == 0 && st.num_live_blocks == 0 && st.num_bad_frees == 0,
		      "after the frees: expected nothing allocated, no refused free; got %llu bytes, %llu blocks, %llu refused",
		      (unsigned long long)st.allocated_bytes, (unsigned long long)st.num_live_blocks,
		      (unsigned long long)st.num_bad_frees);
	/* Another allocator's zero-byte index is still foreign. */
	{
		struct flex_alloc *b = new_allocator(NULL, 1 * GiB, 0, NULL);
		flex_alloc_index_t zb = must_alloc(b, 0, FLEX_ALLOC_TENSOR);

		ck_assert_int_eq(flex_alloc_block_free(a, zb), -EINVAL);
		ck_assert_int_eq(flex_alloc_block_resolve(a, zb, &va, NULL), -EINVAL);
		must_free(b, zb);
		flex_alloc_destroy(b);
	}
	flex_alloc_destroy(a);
	flex_region_source_unref(src);
}
END_TEST

START_TEST(unroundable_size_and_bad_kind)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	struct flex_alloc_stats st;
	flex_alloc_index_t idx;

	ck_assert_int_eq(flex_alloc_block_alloc(a, UINT64_MAX, FLEX_ALLOC_TENSOR, &idx), -EINVAL);
	ck_assert_msg(strstr(flex_last_error(), "cannot be rounded"),
		      "message for UINT64_MAX: got \"%s\"", flex_last_error());
	ck_assert_int_eq(flex_alloc_block_alloc(a, 128, (enum flex_alloc_kind)7, &idx), -EINVAL);
	ck_assert_msg(strstr(flex_last_error(), "kind 7"), "message for kind 7: got \"%s\"",
		      flex_last_error());
	flex_alloc_get_stats(a, &st);
	ck_assert_uint_eq(st.num_failed_allocs, 2);
	ck_assert_uint_eq(st.num_allocs, 0);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(split_leaves_free_remainder)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	struct block_list l = { 0 };

	must_alloc(a, 256, FLEX_ALLOC_TENSOR);
	walk_blocks(a, &l);
	ck_assert_msg(l.n == 2, "blocks after one split: expected 2, got %zu", l.n);
	ck_assert_msg(!l.b[0].is_free && l.b[0].offset == 0 && l.b[0].size == 256,
		      "allocated part: expected [0, 256) allocated, got [%llu, +%llu) free=%u",
		      (unsigned long long)l.b[0].offset, (unsigned long long)l.b[0].size,
		      l.b[0].is_free);
	ck_assert_msg(l.b[1].is_free && l.b[1].offset == 256 && l.b[1].size == MiB - 256,
		      "remainder: expected free [256, +%llu), got [%llu, +%llu) free=%u",
		      (unsigned long long)(MiB - 256), (unsigned long long)l.b[1].offset,
		      (unsigned long long)l.b[1].size, l.b[1].is_free);
	block_list_free(&l);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(exact_fit_takes_whole_block)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	flex_alloc_index_t x = must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	struct flex_alloc_stats st;

	must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	must_free(a, x);
	x = must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_uint_eq(must_resolve(a, x).offset, 0);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_free_blocks == 1, "free blocks after exact fit: expected 1, got %llu",
		      (unsigned long long)st.num_free_blocks);
	check_invariants(a, "exact fit");
	flex_alloc_destroy(a);
}
END_TEST

/*
 * Layout A B C D + free tail, each 4 KiB. Frees in the order given, then
 * the free block list must be @expect (offset, size in KiB pairs).
 */
static void coalesce_case(const char *name, const int *order, int nfree, const uint64_t *expect,
			  int nexpect, const char *log_needle)
{
	struct log_capture log = { 0 };
	struct flex_alloc *a = one_mib(&log, FLEX_ALLOC_F_DEBUG);
	struct block_list l = { 0 };
	flex_alloc_index_t blk[4];
	int k = 0;

	for (int i = 0; i < 4; i++)
		blk[i] = must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	log_capture_reset(&log);
	for (int i = 0; i < nfree; i++) {
		must_free(a, blk[order[i]]);
		check_invariants(a, name);
	}
	walk_blocks(a, &l);
	for (size_t i = 0; i < l.n; i++) {
		if (!l.b[i].is_free)
			continue;
		ck_assert_msg(k < nexpect, "%s: more free blocks than the %d expected", name, nexpect);
		ck_assert_msg(l.b[i].offset == expect[2 * k] * KiB && l.b[i].size == expect[2 * k + 1] * KiB,
			      "%s: free block %d expected [%llu KiB, +%llu KiB), got [%llu, +%llu)",
			      name, k, (unsigned long long)expect[2 * k],
			      (unsigned long long)expect[2 * k + 1], (unsigned long long)l.b[i].offset,
			      (unsigned long long)l.b[i].size);
		k++;
	}
	ck_assert_msg(k == nexpect, "%s: expected %d free blocks, got %d", name, nexpect, k);
	if (log_needle)
		ck_assert_msg(log_has(&log, log_needle), "%s: debug log lacks \"%s\":\n%s", name,
			      log_needle, log.text ? log.text : "");
	block_list_free(&l);
	flex_alloc_destroy(a);	/* logs its last debug line */
	log_capture_reset(&log);
}

START_TEST(coalesce_none)
{
	static const int order[] = { 1 };	/* B between allocated A and C */
	static const uint64_t expect[] = { 4, 4, 16, 1008 };

	coalesce_case("free B, neighbours allocated", order, 1, expect, 2, NULL);
}
END_TEST

START_TEST(coalesce_with_next)
{
	static const int order[] = { 1, 0 };	/* A, then its successor B is free */
	static const uint64_t expect[] = { 0, 8, 16, 1008 };

	coalesce_case("free A with free next", order, 2, expect, 2, "coalesce in region 0x0: with next");
}
END_TEST

START_TEST(coalesce_with_prev)
{
	static const int order[] = { 1, 2 };	/* C after B is free, D allocated */
	static const uint64_t expect[] = { 4, 8, 16, 1008 };

	coalesce_case("free C with free prev", order, 2, expect, 2,
		      "coalesce in region 0x0: with previous -> free block at 0x1000, 8192 bytes");
}
END_TEST

START_TEST(coalesce_with_both)
{
	static const int order[] = { 0, 2, 1 };	/* B between free A and free C */
	static const uint64_t expect[] = { 0, 12, 16, 1008 };

	coalesce_case("free B with both free", order, 3, expect, 2,
		      "with previous with next -> free block at 0x0, 12288 bytes");
}
END_TEST

START_TEST(coalesce_with_tail)
{
	static const int order[] = { 3 };	/* D, next to the free tail */
	static const uint64_t expect[] = { 12, 1012 };

	coalesce_case("free D with the free tail", order, 1, expect, 1, "with next");
}
END_TEST

START_TEST(coalesce_everything)
{
	static const int order[] = { 2, 0, 3, 1 };
	static const uint64_t expect[] = { 0, 1024 };

	coalesce_case("free all in mixed order", order, 4, expect, 1, NULL);
}
END_TEST

START_TEST(programs_go_top_down)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	flex_alloc_index_t t1 = must_alloc(a, 8 * KiB, FLEX_ALLOC_TENSOR);
	flex_alloc_index_t p1 = must_alloc(a, 16 * KiB, FLEX_ALLOC_PROGRAM);
	flex_alloc_index_t p2 = must_alloc(a, 1000, FLEX_ALLOC_PROGRAM);
	flex_alloc_index_t t2 = must_alloc(a, 8 * KiB, FLEX_ALLOC_TENSOR);
	struct block_list l = { 0 };

	ck_assert_uint_eq(must_resolve(a, t1).offset, 0);
	ck_assert_msg(must_resolve(a, p1).offset == MiB - 16 * KiB,
		      "first program: expected offset %llu (top), got %llu",
		      (unsigned long long)(MiB - 16 * KiB),
		      (unsigned long long)must_resolve(a, p1).offset);
	ck_assert_msg(must_resolve(a, p2).offset == MiB - 16 * KiB - 1024,
		      "second program: expected %llu (below the first), got %llu",
		      (unsigned long long)(MiB - 16 * KiB - 1024),
		      (unsigned long long)must_resolve(a, p2).offset);
	ck_assert_uint_eq(must_resolve(a, t2).offset, 8 * KiB);
	walk_blocks(a, &l);
	ck_assert_msg(l.n == 5 && l.b[3].kind == FLEX_ALLOC_PROGRAM && l.b[1].kind == FLEX_ALLOC_TENSOR,
		      "kinds in the walk: expected tensor, tensor, free, program, program");
	block_list_free(&l);
	/* A program reuses the highest hole that fits, from its top. */
	must_free(a, p1);
	p1 = must_alloc(a, 4 * KiB, FLEX_ALLOC_PROGRAM);
	ck_assert_uint_eq(must_resolve(a, p1).offset, MiB - 4 * KiB);
	check_invariants(a, "programs");
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(double_free_detected)
{
	struct log_capture log = { 0 };
	struct flex_alloc *a = one_mib(&log, 0);
	flex_alloc_index_t x = must_alloc(a, 512, FLEX_ALLOC_TENSOR);
	flex_alloc_index_t y = must_alloc(a, 512, FLEX_ALLOC_TENSOR);
	struct flex_alloc_stats st;
	struct flex_vaddr va;
	int err;

	must_free(a, x);
	err = flex_alloc_block_free(a, x);
	ck_assert_msg(err == -ENOENT, "second free: expected -ENOENT, got %d", err);
	ck_assert_msg(strstr(flex_last_error(), "double free"),
		      "second free message: got \"%s\"", flex_last_error());
	ck_assert_msg(log.errors == 1 && log_has(&log, "refused free"),
		      "refused free logged as an error: %u error lines:\n%s", log.errors,
		      log.text ? log.text : "");
	err = flex_alloc_block_resolve(a, x, &va, NULL);
	ck_assert_msg(err == -ENOENT, "resolve after free: expected -ENOENT, got %d", err);
	flex_alloc_get_stats(a, &st);
	ck_assert_uint_eq(st.num_bad_frees, 1);
	ck_assert_uint_eq(st.num_frees, 1);
	/* Nothing changed: y is still there. */
	ck_assert_uint_eq(must_resolve(a, y).offset, 512);
	check_invariants(a, "after double free");
	flex_alloc_destroy(a);
	log_capture_reset(&log);
}
END_TEST

START_TEST(stale_index_after_slot_reuse)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	flex_alloc_index_t first = must_alloc(a, 128, FLEX_ALLOC_TENSOR), x = first;
	int reused = 0;

	must_free(a, first);
	/* Cycle until the slot of `first` is handed out again. */
	for (int i = 0; i < 5000 && !reused; i++) {
		x = must_alloc(a, 128, FLEX_ALLOC_TENSOR);
		reused = (x & 0x3fffff) == (first & 0x3fffff);
		if (!reused)
			must_free(a, x);
	}
	ck_assert_msg(reused, "slot of the first index never came back in 5000 allocations");
	ck_assert_msg(x != first, "reused slot gave the same index 0x%llx", (unsigned long long)x);
	ck_assert_int_eq(flex_alloc_block_free(a, first), -ENOENT);
	ck_assert_int_eq(flex_alloc_block_resolve(a, first, &(struct flex_vaddr){ 0 }, NULL), -ENOENT);
	must_resolve(a, x);
	must_free(a, x);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(foreign_and_garbage_indices)
{
	struct flex_alloc *a = one_mib(NULL, 0), *b = one_mib(NULL, 0);
	flex_alloc_index_t xa = must_alloc(a, 128, FLEX_ALLOC_TENSOR);
	flex_alloc_index_t xb = must_alloc(b, 128, FLEX_ALLOC_TENSOR);
	static const flex_alloc_index_t garbage[] = { 0, 1, 0x1234, UINT64_MAX, 0xdeadbeefULL << 20 };
	struct flex_alloc_stats st;
	int err;

	err = flex_alloc_block_free(a, xb);
	ck_assert_msg(err == -EINVAL, "free of b's index in a: expected -EINVAL, got %d", err);
	ck_assert_msg(strstr(flex_last_error(), "not issued by this allocator"),
		      "foreign free message: got \"%s\"", flex_last_error());
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		err = flex_alloc_block_free(a, garbage[i]);
		ck_assert_msg(err == -EINVAL, "free of garbage 0x%llx: expected -EINVAL, got %d",
			      (unsigned long long)garbage[i], err);
	}
	/* A well-formed index of a slot never handed out. */
	err = flex_alloc_block_free(a, xa + 100);
	ck_assert_msg(err == -EINVAL || err == -ENOENT, "free of unissued slot: got %d", err);
	flex_alloc_get_stats(a, &st);
	ck_assert_uint_eq(st.num_bad_frees, 2 + sizeof(garbage) / sizeof(garbage[0]));
	must_resolve(a, xa);
	must_resolve(b, xb);
	flex_alloc_destroy(a);
	flex_alloc_destroy(b);
}
END_TEST

START_TEST(oom_message_names_sizes)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	flex_alloc_index_t blk[8];
	char want[128];
	flex_alloc_index_t x;
	struct flex_alloc_stats st;
	const char *msg;
	int err;

	/* 8 blocks of 128 KiB; free 0, 2, 3, 6: holes 128, 256 and 128 KiB. */
	for (int i = 0; i < 8; i++)
		blk[i] = must_alloc(a, 128 * KiB, FLEX_ALLOC_TENSOR);
	must_free(a, blk[0]);
	must_free(a, blk[2]);
	must_free(a, blk[3]);
	must_free(a, blk[6]);
	err = flex_alloc_block_alloc(a, 300000, FLEX_ALLOC_TENSOR, &x);
	ck_assert_msg(err == -ENOMEM, "alloc 300000 with largest hole 256 KiB: expected -ENOMEM, got %d",
		      err);
	msg = flex_last_error();
	ck_assert_msg(strstr(msg, "asked 300000 bytes"), "OOM message lacks the size asked: \"%s\"", msg);
	snprintf(want, sizeof(want), "free %llu bytes in total", 512 * KiB);
	ck_assert_msg(strstr(msg, want), "OOM message lacks \"%s\": \"%s\"", want, msg);
	snprintf(want, sizeof(want), "largest free block %llu bytes", 256 * KiB);
	ck_assert_msg(strstr(msg, want), "OOM message lacks \"%s\": \"%s\"", want, msg);
	snprintf(want, sizeof(want), "region 0x0: size %llu, free %llu, largest free block %llu", MiB,
		 512 * KiB, 256 * KiB);
	ck_assert_msg(strstr(msg, want), "OOM message lacks the region line \"%s\": \"%s\"", want, msg);
	flex_alloc_get_stats(a, &st);
	ck_assert_uint_eq(st.num_failed_allocs, 1);
	/* 256 KiB still fits: it is fragmentation, not exhaustion. */
	must_alloc(a, 256 * KiB, FLEX_ALLOC_TENSOR);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(oom_larger_than_any_region)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	flex_alloc_index_t x;
	int err = flex_alloc_block_alloc(a, FLEX_ALLOC_REGION_SIZE_LIMIT + 1, FLEX_ALLOC_TENSOR, &x);

	ck_assert_msg(err == -ENOMEM, "alloc beyond the region limit: expected -ENOMEM, got %d", err);
	ck_assert_msg(strstr(flex_last_error(), "out of device memory"),
		      "message: \"%s\"", flex_last_error());
	flex_alloc_destroy(a);
}
END_TEST

struct pressure {
	struct flex_alloc *a;
	flex_alloc_index_t victim;
	unsigned int calls;
	uint64_t size;
};

static void on_pressure(struct flex_alloc *a, uint64_t size, void *user)
{
	struct pressure *p = user;

	p->calls++;
	p->size = size;
	ck_assert_ptr_eq(a, p->a);
	if (p->victim) {
		/* Called with no lock held: freeing here must work. */
		ck_assert_int_eq(flex_alloc_block_free(a, p->victim), 0);
		p->victim = FLEX_ALLOC_INDEX_NONE;
	}
}

START_TEST(pressure_callback_then_retry)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	struct pressure p = { .a = a };
	flex_alloc_index_t big, x;
	int err;

	big = must_alloc(a, 768 * KiB, FLEX_ALLOC_TENSOR);
	must_alloc(a, 256 * KiB, FLEX_ALLOC_TENSOR);
	flex_alloc_set_pressure_callback(a, on_pressure, &p);
	/* Callback frees `big`; the retry then succeeds. */
	p.victim = big;
	err = flex_alloc_block_alloc(a, 500 * KiB, FLEX_ALLOC_TENSOR, &x);
	ck_assert_msg(err == 0, "alloc after the callback freed room: expected 0, got %d", err);
	ck_assert_msg(p.calls == 1 && p.size == 500 * KiB,
		      "callback: expected 1 call with %llu, got %u calls with %llu",
		      500 * KiB, p.calls, (unsigned long long)p.size);
	/* Callback frees nothing: one call, one retry, then -ENOMEM. */
	err = flex_alloc_block_alloc(a, 600 * KiB, FLEX_ALLOC_TENSOR, &x);
	ck_assert_msg(err == -ENOMEM && p.calls == 2,
		      "alloc with nothing to free: expected -ENOMEM after 1 more call, got %d after %u",
		      err, p.calls);
	/* Removed: no call at all. */
	flex_alloc_set_pressure_callback(a, NULL, NULL);
	ck_assert_int_eq(flex_alloc_block_alloc(a, 600 * KiB, FLEX_ALLOC_TENSOR, &x), -ENOMEM);
	ck_assert_uint_eq(p.calls, 2);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(pressure_callback_from_config)
{
	struct flex_alloc_config cfg;
	struct pressure p = { 0 };
	struct flex_alloc *a;
	flex_alloc_index_t x;

	config_one_size(&cfg, 64 * KiB, 1);
	cfg.pressure_fn = on_pressure;
	cfg.pressure_user = &p;
	a = new_allocator(&cfg, 64 * KiB, 0, NULL);
	p.a = a;
	ck_assert_int_eq(flex_alloc_block_alloc(a, 128 * KiB, FLEX_ALLOC_TENSOR, &x), -ENOMEM);
	ck_assert_msg(p.calls == 1 && p.size == 128 * KiB,
		      "config callback: expected 1 call with 131072, got %u with %llu", p.calls,
		      (unsigned long long)p.size);
	flex_alloc_destroy(a);
}
END_TEST

struct thread_err {
	struct flex_alloc *a;
	char seen[256];
};

static void *fail_in_thread(void *arg)
{
	struct thread_err *t = arg;
	flex_alloc_index_t x;

	flex_alloc_block_alloc(t->a, 2 * MiB, FLEX_ALLOC_TENSOR, &x);
	snprintf(t->seen, sizeof(t->seen), "%s", flex_last_error());
	return NULL;
}

START_TEST(last_error_is_per_thread)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	struct thread_err t = { .a = a };
	pthread_t th;

	ck_assert_int_eq(flex_alloc_block_free(a, 42), -EINVAL);
	pthread_create(&th, NULL, fail_in_thread, &t);
	pthread_join(th, NULL);
	ck_assert_msg(strstr(t.seen, "asked 2097152 bytes"), "thread's own error: got \"%s\"", t.seen);
	ck_assert_msg(strstr(flex_last_error(), "index 0x2a"),
		      "main thread keeps its error: got \"%s\"", flex_last_error());
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(fragmentation_recovered_by_coalescing)
{
	struct flex_alloc *a = one_mib(NULL, 0);
	flex_alloc_index_t blk[64];
	struct flex_alloc_stats st;
	flex_alloc_index_t x;

	for (int i = 0; i < 64; i++)
		blk[i] = must_alloc(a, 16 * KiB, FLEX_ALLOC_TENSOR);
	for (int i = 0; i < 64; i += 2)
		must_free(a, blk[i]);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.free_bytes == 512 * KiB && st.largest_free_block == 16 * KiB,
		      "checkerboard: expected 512 KiB free, largest 16 KiB; got %llu, %llu",
		      (unsigned long long)st.free_bytes, (unsigned long long)st.largest_free_block);
	ck_assert_msg(st.fragmentation > 0.96 && st.fragmentation < 0.97,
		      "checkerboard fragmentation: expected 1 - 16/512 = 0.96875, got %f",
		      st.fragmentation);
	ck_assert_int_eq(flex_alloc_block_alloc(a, 32 * KiB, FLEX_ALLOC_TENSOR, &x), -ENOMEM);
	for (int i = 1; i < 64; i += 2) {
		must_free(a, blk[i]);
		check_invariants(a, "freeing the checkerboard");
	}
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_free_blocks == 1 && st.largest_free_block == MiB && st.fragmentation == 0,
		      "all freed: expected 1 free block of 1 MiB, fragmentation 0; got %llu blocks, largest %llu, %f",
		      (unsigned long long)st.num_free_blocks,
		      (unsigned long long)st.largest_free_block, st.fragmentation);
	x = must_alloc(a, MiB, FLEX_ALLOC_TENSOR);
	ck_assert_uint_eq(must_resolve(a, x).offset, 0);
	flex_alloc_destroy(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("alloc");
	TCase *tc = tcase_create("blocks");

	tcase_add_test(tc, round_size);
	tcase_add_test(tc, alignment_and_rounding);
	tcase_add_test(tc, zero_byte_allocations_use_no_device_memory);
	tcase_add_test(tc, unroundable_size_and_bad_kind);
	tcase_add_test(tc, split_leaves_free_remainder);
	tcase_add_test(tc, exact_fit_takes_whole_block);
	tcase_add_test(tc, coalesce_none);
	tcase_add_test(tc, coalesce_with_next);
	tcase_add_test(tc, coalesce_with_prev);
	tcase_add_test(tc, coalesce_with_both);
	tcase_add_test(tc, coalesce_with_tail);
	tcase_add_test(tc, coalesce_everything);
	tcase_add_test(tc, programs_go_top_down);
	tcase_add_test(tc, fragmentation_recovered_by_coalescing);
	suite_add_tcase(s, tc);

	tc = tcase_create("indices");
	tcase_add_test(tc, double_free_detected);
	tcase_add_test(tc, stale_index_after_slot_reuse);
	tcase_add_test(tc, foreign_and_garbage_indices);
	tcase_add_test(tc, last_error_is_per_thread);
	suite_add_tcase(s, tc);

	tc = tcase_create("oom");
	tcase_add_test(tc, oom_message_names_sizes);
	tcase_add_test(tc, oom_larger_than_any_region);
	tcase_add_test(tc, pressure_callback_then_retry);
	tcase_add_test(tc, pressure_callback_from_config);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
