// SPDX-License-Identifier: GPL-2.0
/*
 * The AllocationIndex slot table (libflex/src/slot_table.h), white-box:
 * growth across chunks, and reuse only after SLOT_REUSE_DELAY other freed
 * slots, first-in first-out, with the generation moved on (what makes a
 * stale AllocationIndex detectable).
 */
#include "slot_table.h"
#include "unit_util.h"

/* Fresh slots are numbered in order, across chunk boundaries, and live. */
START_TEST(grows_across_chunks)
{
	struct slot_table t;
	uint32_t s;

	flex_slot_table_init(&t);
	for (uint32_t i = 0; i < SLOT_CHUNK + 10; i++) {
		ck_assert_int_eq(slot_get(&t, &s), 0);
		require(s == i, "slot %u: expected number %u, got %u", i, i, s);
		require(slot_at(&t, s)->live && slot_at(&t, s)->gen == 1,
			"slot %u: expected live with generation 1, got live %u gen %u", s,
			slot_at(&t, s)->live, slot_at(&t, s)->gen);
	}
	ck_assert_uint_eq(t.capacity, SLOT_CHUNK + 10);
	flex_slot_table_fini(&t);
}
END_TEST

/*
 * A freed slot comes back only once more than SLOT_REUSE_DELAY freed slots
 * wait; they come back in the order they were freed, each a generation on.
 */
START_TEST(reuse_is_delayed_and_fifo)
{
	const uint32_t freed = SLOT_REUSE_DELAY + 3;
	struct slot_table t;
	uint32_t s, fresh;

	flex_slot_table_init(&t);
	for (uint32_t i = 0; i < freed; i++)
		ck_assert_int_eq(slot_get(&t, &s), 0);
	/* Free them in reverse, so that order is not number order. */
	for (uint32_t i = 0; i < freed; i++)
		slot_put(&t, freed - 1 - i);
	fresh = t.capacity;
	for (uint32_t i = 0; i < freed; i++) {
		uint32_t want = freed - 1 - i, waiting = t.free_count;

		ck_assert_int_eq(slot_get(&t, &s), 0);
		if (waiting <= SLOT_REUSE_DELAY) {
			/* Few enough wait now: a fresh slot, none reused. */
			require(s == fresh, "take %u: expected fresh slot %u, got %u", i, fresh, s);
			fresh++;
			continue;
		}
		require(s == want, "take %u (%u waiting): expected the oldest freed slot %u, got %u",
			i, waiting, want, s);
		require(slot_at(&t, s)->gen == 2, "slot %u: expected generation 2, got %u", s,
			slot_at(&t, s)->gen);
	}
	flex_slot_table_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slots");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, grows_across_chunks);
	tcase_add_test(tc, reuse_is_delayed_and_fifo);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
