// SPDX-License-Identifier: GPL-2.0
/*
 * Stream-ordered memory on the host: frees that wait for queued work
 * (flex_alloc_block_free_after()), the queues that used a block
 * (flex_alloc_block_record_use(), PyTorch's recordStream), and what an
 * allocation that finds no room does about them. The queues are fakes
 * that count points by hand; FlexStream's own queue is tested in the VM
 * (tests/kselftest/libflex_defer_test.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit_util.h"

/* A queue whose work runs when the test says so. */
struct fake_queue {
	struct flex_alloc_queue q;	/* first: the allocator's view */
	uint64_t enqueued;		/* point of the last work enqueued */
	uint64_t reached;		/* work run up to here */
	unsigned int points, queries, waits;
};

static struct fake_queue *fq(struct flex_alloc_queue *q)
{
	return (struct fake_queue *)q;
}

static uint64_t fake_point(struct flex_alloc_queue *q)
{
	struct fake_queue *f = fq(q);

	f->points++;
	return f->enqueued > f->reached ? f->enqueued : 0;
}

static int fake_query(struct flex_alloc_queue *q, uint64_t point)
{
	struct fake_queue *f = fq(q);

	f->queries++;
	return point <= f->reached ? 0 : -EBUSY;
}

/* Waiting runs the work up to @point. */
static int fake_wait(struct flex_alloc_queue *q, uint64_t point)
{
	struct fake_queue *f = fq(q);

	f->waits++;
	if (f->reached < point)
		f->reached = point;
	return 0;
}

static const struct flex_alloc_queue_ops fake_ops = {
	.point = fake_point,
	.query = fake_query,
	.wait = fake_wait,
};

static void fake_init(struct fake_queue *f)
{
	memset(f, 0, sizeof(*f));
	f->q.ops = &fake_ops;
}

/* One region of 1 MiB. */
static struct flex_alloc *one_mib(void)
{
	struct flex_alloc_config cfg;

	config_one_size(&cfg, 1 * MiB, 1);
	return new_allocator(&cfg, 1 * MiB, 0, NULL);
}

static void expect_pending(const char *what, struct flex_alloc *a, uint64_t blocks,
			   uint64_t bytes)
{
	struct flex_alloc_stats st;

	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_pending_frees == blocks && st.pending_free_bytes == bytes,
		      "%s: expected %llu blocks (%llu bytes) waiting for queues, got %llu (%llu bytes)",
		      what, (unsigned long long)blocks, (unsigned long long)bytes,
		      (unsigned long long)st.num_pending_frees,
		      (unsigned long long)st.pending_free_bytes);
}

static void expect_offset(const char *what, struct flex_alloc *a, flex_alloc_index_t idx,
			  uint64_t offset)
{
	uint64_t got = must_resolve(a, idx).offset;

	ck_assert_msg(got == offset, "%s: expected offset %llu, got %llu", what,
		      (unsigned long long)offset, (unsigned long long)got);
}

/* The block is not handed out again until the stream's work has run. */
START_TEST(free_after_waits_for_the_stream)
{
	struct flex_alloc *a = one_mib();
	struct fake_queue s;
	flex_alloc_index_t x, y;
	uint64_t freed = 0;

	fake_init(&s);
	x = must_alloc(a, 256 * KiB, FLEX_ALLOC_TENSOR);
	s.enqueued = 7;		/* a launch reading x */
	ck_assert_int_eq(flex_alloc_block_free_after(a, x, &s.q), 0);
	ck_assert_msg(flex_alloc_block_resolve(a, x, &(struct flex_vaddr){ 0 }, NULL) == -ENOENT &&
		      flex_alloc_block_free(a, x) == -ENOENT,
		      "the freed index is dead at once (resolve and a second free refused)");
	expect_pending("freed after point 7", a, 1, 256 * KiB);
	y = must_alloc(a, 256 * KiB, FLEX_ALLOC_TENSOR);
	expect_offset("while the work runs, the next tensor goes elsewhere", a, y, 256 * KiB);
	check_invariants(a, "one block pending");

	ck_assert_int_eq(flex_alloc_reclaim(a, 0, &freed), 0);
	ck_assert_msg(freed == 0, "work not run: reclaim expected to free nothing, freed %llu",
		      (unsigned long long)freed);
	s.reached = 7;
	ck_assert_int_eq(flex_alloc_reclaim(a, 0, &freed), 0);
	ck_assert_msg(freed == 256 * KiB, "work run: reclaim expected to free 256 KiB, freed %llu",
		      (unsigned long long)freed);
	expect_pending("reclaimed", a, 0, 0);
	expect_offset("the block is reused", a, must_alloc(a, 128 * KiB, FLEX_ALLOC_TENSOR), 0);
	check_invariants(a, "reclaimed");
	flex_alloc_destroy(a);
}
END_TEST

/* Allocations look at the deferred frees as they go: every 64th on a thread. */
START_TEST(allocations_reclaim_as_they_go)
{
	struct flex_alloc *a = one_mib();
	struct fake_queue s;
	int i;

	fake_init(&s);
	s.enqueued = 3;
	ck_assert_int_eq(flex_alloc_block_free_after(a, must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR), &s.q), 0);
	s.reached = 3;
	for (i = 0; i < 64 && s.queries == 0; i++)
		must_alloc(a, 128, FLEX_ALLOC_TENSOR);
	ck_assert_msg(s.queries == 1, "within 64 allocations the queue is asked once, got %u queries after %d",
		      s.queries, i);
	expect_pending("reached and freed", a, 0, 0);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(an_idle_stream_frees_at_once)
{
	struct flex_alloc *a = one_mib();
	struct fake_queue s;
	flex_alloc_index_t x;

	fake_init(&s);
	x = must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_int_eq(flex_alloc_block_free_after(a, x, &s.q), 0);
	expect_pending("nothing enqueued", a, 0, 0);
	expect_offset("reused at once", a, must_alloc(a, 4 * KiB, FLEX_ALLOC_TENSOR), 0);
	ck_assert_msg(s.points == 1 && s.queries == 0, "one point asked, no query; got %u, %u",
		      s.points, s.queries);
	/* The 0-byte index needs nothing either. */
	ck_assert_int_eq(flex_alloc_block_free_after(a, must_alloc(a, 0, FLEX_ALLOC_TENSOR), &s.q), 0);
	ck_assert_int_eq(flex_alloc_block_record_use(a, must_alloc(a, 0, FLEX_ALLOC_TENSOR), &s.q), 0);
	flex_alloc_destroy(a);
}
END_TEST

/*
 * recordStream: a block allocated for stream S is also used by T. A plain
 * free waits for T's work; free_after(S) for both; and reuse waits only
 * for the streams that used the block.
 */
START_TEST(recorded_uses_decide_when_a_block_is_free)
{
	struct flex_alloc *a = one_mib();
	struct fake_queue s, t;
	flex_alloc_index_t x, y, z;
	uint64_t freed;

	fake_init(&s);
	fake_init(&t);
	x = must_alloc(a, 128 * KiB, FLEX_ALLOC_TENSOR);	/* used by S and T */
	y = must_alloc(a, 128 * KiB, FLEX_ALLOC_TENSOR);	/* used by T, freed plainly */
	z = must_alloc(a, 128 * KiB, FLEX_ALLOC_TENSOR);	/* used by S only */
	ck_assert_int_eq(flex_alloc_block_record_use(a, x, &t.q), 0);
	ck_assert_int_eq(flex_alloc_block_record_use(a, x, &t.q), 0);	/* once is enough */
	ck_assert_int_eq(flex_alloc_block_record_use(a, y, &t.q), 0);
	s.enqueued = 10;
	t.enqueued = 20;
	ck_assert_int_eq(flex_alloc_block_free_after(a, x, &s.q), 0);
	ck_assert_int_eq(flex_alloc_block_free(a, y), 0);
	ck_assert_int_eq(flex_alloc_block_free_after(a, z, &s.q), 0);
	expect_pending("three blocks freed", a, 3, 384 * KiB);

	s.reached = 10;		/* S done, T not */
	flex_alloc_reclaim(a, 0, &freed);
	ck_assert_msg(freed == 128 * KiB,
		      "S done: only z (used by S alone) is free; expected 128 KiB, freed %llu",
		      (unsigned long long)freed);
	expect_pending("x and y wait for T", a, 2, 256 * KiB);
	t.reached = 20;
	flex_alloc_reclaim(a, 0, &freed);
	ck_assert_msg(freed == 256 * KiB, "T done: x and y free; expected 256 KiB, freed %llu",
		      (unsigned long long)freed);
	expect_pending("all done", a, 0, 0);
	check_invariants(a, "uses");
	flex_alloc_destroy(a);
}
END_TEST

/*
 * Out of room with deferred frees outstanding: the allocation waits for
 * the oldest ones, one at a time, and stops as soon as it fits.
 */
START_TEST(pressure_waits_for_the_oldest_deferred_frees)
{
	struct flex_alloc *a = one_mib();
	struct fake_queue s;
	flex_alloc_index_t x[4], y;
	struct flex_alloc_stats st;

	fake_init(&s);
	for (int i = 0; i < 4; i++) {
		x[i] = must_alloc(a, 256 * KiB, FLEX_ALLOC_TENSOR);
		s.enqueued = 100 + i;
		ck_assert_int_eq(flex_alloc_block_free_after(a, x[i], &s.q), 0);
	}
	expect_pending("the region full of deferred frees", a, 4, 1 * MiB);
	y = must_alloc(a, 256 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(s.waits == 1 && s.reached == 100,
		      "one wait, for the oldest (point 100): got %u waits, reached %llu", s.waits,
		      (unsigned long long)s.reached);
	expect_offset("the oldest block", a, y, 0);
	expect_pending("three still wait", a, 3, 768 * KiB);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.num_pressure_retries == 1 && st.num_ooms == 0,
		      "expected 1 retry and no OOM, got %llu and %llu",
		      (unsigned long long)st.num_pressure_retries, (unsigned long long)st.num_ooms);
	/* Two at once: the two oldest are waited for. */
	y = must_alloc(a, 512 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_msg(s.waits == 3, "512 KiB: two more waits expected, got %u in all", s.waits);
	expect_offset("the next two blocks, merged", a, y, 256 * KiB);
	expect_pending("one still waits", a, 1, 256 * KiB);
	check_invariants(a, "pressure");
	/* Nothing left to wait for but the last: the message says what waits. */
	s.enqueued = 200;
	ck_assert_int_eq(flex_alloc_block_free_after(a, y, &s.q), 0);
	ck_assert_int_eq(flex_alloc_block_alloc(a, 2 * MiB, FLEX_ALLOC_TENSOR, &y), -ENOMEM);
	ck_assert_msg(s.reached == 200 &&
		      strstr(flex_last_error(), "out of device memory: asked 2097152 bytes"),
		      "2 MiB in a 1 MiB device: every deferred free waited for, then -ENOMEM: \"%s\"",
		      flex_last_error());
	flex_alloc_destroy(a);
}
END_TEST

/* A retired queue counts as run: its frees complete, its uses are dropped. */
START_TEST(a_retired_queue_is_forgotten)
{
	struct flex_alloc *a = one_mib();
	struct fake_queue s, t;
	flex_alloc_index_t x, y;
	struct flex_alloc_stats st;
	unsigned int queries;

	fake_init(&s);
	fake_init(&t);
	x = must_alloc(a, 64 * KiB, FLEX_ALLOC_TENSOR);
	y = must_alloc(a, 64 * KiB, FLEX_ALLOC_TENSOR);
	ck_assert_int_eq(flex_alloc_block_record_use(a, y, &t.q), 0);
	s.enqueued = t.enqueued = 5;
	ck_assert_int_eq(flex_alloc_block_free_after(a, x, &s.q), 0);
	queries = s.queries;
	flex_alloc_queue_retire(a, &s.q);
	expect_pending("retired: x free", a, 0, 0);
	ck_assert_msg(s.queries == queries, "a retired queue is not asked again");
	flex_alloc_queue_retire(a, &t.q);
	ck_assert_int_eq(flex_alloc_block_free(a, y), 0);
	flex_alloc_get_stats(a, &st);
	ck_assert_msg(st.allocated_bytes == 0 && t.points == 0,
		      "y's use on the retired queue is gone: freed at once; got %llu allocated, %u points asked",
		      (unsigned long long)st.allocated_bytes, t.points);
	flex_alloc_destroy(a);
}
END_TEST

/* Reports show the waiting blocks as "pending", with the index freed. */
START_TEST(pending_blocks_in_reports)
{
	struct flex_alloc *a = one_mib();
	struct fake_queue s;
	struct block_list l = { 0 };
	flex_alloc_index_t x;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	fake_init(&s);
	x = must_alloc(a, 4000, FLEX_ALLOC_TENSOR);
	s.enqueued = 1;
	ck_assert_int_eq(flex_alloc_block_free_after(a, x, &s.q), 0);
	walk_blocks(a, &l);
	ck_assert_msg(l.n == 2 && !l.b[0].is_free && l.b[0].is_pending && l.b[0].index == x &&
		      l.b[0].size == 4096,
		      "walk: expected the 4 KiB block pending with its freed index first");
	block_list_free(&l);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(flex_alloc_report(a, f, FLEX_ALLOC_REPORT_JSON), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "\"state\":\"pending\"") &&
		      strstr(buf, "\"pending_free_bytes\":4096,\"num_pending_frees\":1"),
		      "JSON report: expected a pending block and the pending totals:\n%s", buf);
	free(buf);
	flex_alloc_destroy(a);
}
END_TEST

START_TEST(bad_queue_arguments)
{
	struct flex_alloc *a = one_mib();
	struct flex_alloc_queue none = { 0 };
	flex_alloc_index_t x = must_alloc(a, 128, FLEX_ALLOC_TENSOR);
	struct fake_queue s;
	uint64_t freed;

	fake_init(&s);
	ck_assert_int_eq(flex_alloc_block_free_after(a, x, &none), -EINVAL);
	ck_assert_int_eq(flex_alloc_block_record_use(a, x, NULL), -EINVAL);
	ck_assert_int_eq(flex_alloc_block_record_use(a, x + 1, &s.q), -EINVAL);
	ck_assert_int_eq(flex_alloc_reclaim(a, 2, &freed), -EINVAL);
	ck_assert_int_eq(flex_alloc_block_free_after(a, x, NULL), 0);	/* no queue: a free */
	ck_assert_int_eq(flex_alloc_block_free_after(a, x, &s.q), -ENOENT);
	flex_alloc_destroy(a);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("deferred");
	TCase *tc = tcase_create("deferred");

	tcase_add_test(tc, free_after_waits_for_the_stream);
	tcase_add_test(tc, allocations_reclaim_as_they_go);
	tcase_add_test(tc, an_idle_stream_frees_at_once);
	tcase_add_test(tc, recorded_uses_decide_when_a_block_is_free);
	tcase_add_test(tc, pressure_waits_for_the_oldest_deferred_frees);
	tcase_add_test(tc, a_retired_queue_is_forgotten);
	tcase_add_test(tc, pending_blocks_in_reports);
	tcase_add_test(tc, bad_queue_arguments);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
