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

#include <errno.h>
#include <stdint.h>

#include <flex/allocator.h>

#define SLOT_BITS		22	/* slots per region: 4 Mi */
#define SLOT_GEN_BITS		24
#define SLOT_CHUNK_BITS		12
#define SLOT_CHUNK		(1U << SLOT_CHUNK_BITS)
#define SLOT_DIR		(1U << (SLOT_BITS - SLOT_CHUNK_BITS))
#define SLOT_MAX		(1U << SLOT_BITS)
#define SLOT_GEN_MASK		((1U << SLOT_GEN_BITS) - 1)
#define SLOT_REUSE_DELAY	1024U
#define SLOT_NONE		UINT32_MAX

#define SLOT_LEAF_BITS		30

/*
 * 16 bytes, so that four share a cache line and none straddles two: a free
 * reads the slot of an index the caller kept, a likely cache miss with
 * many live blocks.
 */
struct slot {
	uint32_t start;		/* granules; while free: the next free slot */
	uint32_t size;		/* granules */
	uint32_t gen : SLOT_GEN_BITS;	/* 1..SLOT_GEN_MASK */
	uint32_t slack : 7;	/* block bytes - bytes asked: 0..127 (0 bytes get no slot) */
	uint32_t ext : 1;	/* has stream uses, or waits to be freed (alloc_stream.c) */
	uint32_t leaf : SLOT_LEAF_BITS;	/* region.h: where its free neighbours were */
	uint32_t live : 1;
	uint32_t kind : 1;	/* enum flex_alloc_kind */
};

_Static_assert(sizeof(struct slot) == 16, "a slot is a quarter of a cache line");
_Static_assert(FLEX_ALLOC_TENSOR == 0 && FLEX_ALLOC_PROGRAM == 1, "a kind fits in one bit");

struct slot_table {
	struct slot *dir[SLOT_DIR];
	uint32_t capacity;	/* slots handed out so far */
	uint32_t created;	/* slots in the chunks allocated */
	uint32_t free_head;	/* oldest freed slot */
	uint32_t free_tail;
	uint32_t free_count;
};

static inline struct slot *slot_at(const struct slot_table *t, uint32_t i)
{
	return &t->dir[i >> SLOT_CHUNK_BITS][i & (SLOT_CHUNK - 1)];
}

/* What the allocation of @s asked for, in bytes: its block less the slack. */
static inline uint64_t slot_requested(const struct slot *s)
{
	return (uint64_t)s->size * FLEX_ALLOC_ALIGN - s->slack;
}

void flex_slot_table_init(struct slot_table *t);
void flex_slot_table_fini(struct slot_table *t);
/* Make room for one more slot. Return: 0; -ENOMEM; -ENOSPC table full. */
int flex_slot_grow(struct slot_table *t);

/* Take a slot, marked live. Return: 0 and *slot; -ENOMEM; -ENOSPC table full. */
static inline int slot_get(struct slot_table *t, uint32_t *slot)
{
	uint32_t i;

	/* A fresh slot while few freed ones wait, so reuse stays rare. */
	if (t->free_count <= SLOT_REUSE_DELAY && (t->capacity < t->created || flex_slot_grow(t) == 0)) {
		i = t->capacity++;
	} else if (t->free_count) {
		i = t->free_head;
		t->free_head = slot_at(t, i)->start;
		/* The next allocation's slot: freed long ago, likely out of cache. */
		if (t->free_head != SLOT_NONE)
			__builtin_prefetch(slot_at(t, t->free_head), 1, 3);
		if (--t->free_count == 0)
			t->free_tail = SLOT_NONE;
	} else {
		return t->capacity == SLOT_MAX ? -ENOSPC : -ENOMEM;
	}
	slot_at(t, i)->live = 1;
	*slot = i;
	return 0;
}

/* Move @s's generation on: indices of the old one are refused. */
static inline void slot_next_gen(struct slot *s)
{
	s->gen = s->gen == SLOT_GEN_MASK ? 1 : s->gen + 1;
}

/* Give a slot back: its generation moves on. */
static inline void slot_put(struct slot_table *t, uint32_t i)
{
	struct slot *s = slot_at(t, i);

	s->live = 0;
	slot_next_gen(s);
	s->start = SLOT_NONE;
	if (t->free_count)
		slot_at(t, t->free_tail)->start = i;
	else
		t->free_head = i;
	t->free_tail = i;
	t->free_count++;
}

#endif /* FLEX_SLOT_TABLE_H */
