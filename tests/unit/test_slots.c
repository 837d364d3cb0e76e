// SPDX-License-Identifier: GPL-2.0
/*
 * The AllocationIndex slot table (libflex/src/slot_table.h), white-box:
 * growth across chunks, reuse only after SLOT_REUSE_DELAY other freed
 * slots, first-in first-out, with the generation moved on; and the 16-bit
 * copy of each slot's leaf hint that a free prefetches from.
 */
#include "slot_table.h"
#include "unit_util.h"

/* Fresh slots are numbered in order, across chunk boundaries, and live. */
START_TEST(grows_across_chunks)
{
	struct slot_table t;
	uint32_t s;

	slot_table_init(&t);
	for (uint32_t i = 0; i < SLOT_CHUNK + 10; i++) {
		ck_assert_int_eq(slot_get(&t, &s), 0);
		require(s == i, "slot %u: expected number %u, got %u", i, i, s);
		require(slot_at(&t, s)->live && slot_at(&t, s)->gen == 1,
			"slot %u: expected live with generation 1, got live %u gen %u", s,
			slot_at(&t, s)->live, slot_at(&t, s)->gen);
	}
	ck_assert_uint_eq(t.capacity, SLOT_CHUNK + 10);
	slot_table_fini(&t);
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

	slot_table_init(&t);
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
	slot_table_fini(&t);
}
END_TEST

/* The copy follows the slot's hint; a hint above 16 bits is copied as 0. */
START_TEST(leaf_copy)
{
	static const uint32_t leaf[] = { 1, 77, UINT16_MAX, UINT16_MAX + 1, 70000, 5 };
	struct slot_table t;
	uint32_t s;

	slot_table_init(&t);
	for (uint32_t i = 0; i < SLOT_CHUNK + 4; i++)
		ck_assert_int_eq(slot_get(&t, &s), 0);
	for (uint32_t i = 0; i < sizeof(leaf) / sizeof(leaf[0]); i++) {
		/* Both sides of the chunk boundary. */
		uint32_t slot = SLOT_CHUNK - 3 + i;
		uint16_t want = leaf[i] <= UINT16_MAX ? (uint16_t)leaf[i] : 0;

		slot_set_leaf(&t, slot, leaf[i]);
		require(slot_at(&t, slot)->leaf == leaf[i], "slot %u: expected leaf %u, got %u", slot,
			leaf[i], slot_at(&t, slot)->leaf);
		require(*slot_leaf_copy(&t, slot) == want, "slot %u: expected copy %u, got %u",
			slot, want, *slot_leaf_copy(&t, slot));
	}
	slot_table_fini(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slots");
	TCase *tc = tcase_create("table");

	tcase_add_test(tc, grows_across_chunks);
	tcase_add_test(tc, reuse_is_delayed_and_fifo);
	tcase_add_test(tc, leaf_copy);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
