/* SPDX-License-Identifier: GPL-2.0 */
/*
 * AllocationIndex slots of one region: slot number -> allocated block, in
 * O(1). The slot is the only record of an allocated block (its offset,
 * size, kind and requested size); free blocks live in the region's trees.
 *
 * An index names a slot and the slot's generation at allocation time; the
 * generation changes when the allocation is freed, so an old index no
 * longer matches and is refused instead of reaching whatever block reuses
 * the slot. Freed slots are reused first-in first-out and only once
 * SLOT_REUSE_DELAY others are waiting, so a slot comes back at most once
 * per SLOT_REUSE_DELAY frees and a generation (SLOT_GEN_BITS bits) takes
 * over ten billion allocations to wrap.
 *
 * Slots live in chunks found through a fixed directory, so the table grows
 * without moving entries. The caller holds the region's lock.
 */
#ifndef FLEX_SLOT_TABLE_H
#define FLEX_SLOT_TABLE_H

#include <stdint.h>

#define SLOT_BITS		22	/* slots per region: 4 Mi */
#define SLOT_GEN_BITS		24
#define SLOT_CHUNK_BITS		12
#define SLOT_CHUNK		(1U << SLOT_CHUNK_BITS)
#define SLOT_DIR		(1U << (SLOT_BITS - SLOT_CHUNK_BITS))
#define SLOT_MAX		(1U << SLOT_BITS)
#define SLOT_GEN_MASK		((1U << SLOT_GEN_BITS) - 1)
#define SLOT_REUSE_DELAY	1024U
#define SLOT_NONE		UINT32_MAX

struct slot {
	uint32_t start;		/* granules; while free: the next free slot */
	uint32_t size;		/* granules */
	uint32_t gen;		/* 1..SLOT_GEN_MASK */
	uint8_t live;
	uint8_t kind;		/* enum flex_alloc_kind */
	uint64_t requested;	/* bytes asked, before rounding */
};

struct slot_table {
	struct slot *dir[SLOT_DIR];
	uint32_t capacity;	/* slots created so far */
	uint32_t free_head;	/* oldest freed slot */
	uint32_t free_tail;
	uint32_t free_count;
};

static inline struct slot *slot_at(const struct slot_table *t, uint32_t i)
{
	return &t->dir[i >> SLOT_CHUNK_BITS][i & (SLOT_CHUNK - 1)];
}

void slot_table_init(struct slot_table *t);
void slot_table_fini(struct slot_table *t);
/* Take a slot, marked live. Return: 0 and *slot; -ENOMEM; -ENOSPC table full. */
int slot_get(struct slot_table *t, uint32_t *slot);
/* Give a slot back: its generation moves on. */
void slot_put(struct slot_table *t, uint32_t i);

#endif /* FLEX_SLOT_TABLE_H */
