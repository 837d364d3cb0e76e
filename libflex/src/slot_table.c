// SPDX-License-Identifier: GPL-2.0
/* AllocationIndex slots: see slot_table.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "slot_table.h"

void slot_table_init(struct slot_table *t)
{
	memset(t, 0, sizeof(*t));
	t->free_head = SLOT_NONE;
	t->free_tail = SLOT_NONE;
}

void slot_table_fini(struct slot_table *t)
{
	for (uint32_t i = 0; i < SLOT_DIR; i++)
		free(t->dir[i]);
	slot_table_init(t);
}

static int grow(struct slot_table *t)
{
	uint32_t c = t->capacity >> SLOT_CHUNK_BITS;

	if (t->capacity == SLOT_MAX)
		return -ENOSPC;
	if (!t->dir[c]) {
		struct slot *chunk = malloc(SLOT_CHUNK * sizeof(*chunk));

		if (!chunk)
			return -ENOMEM;
		for (uint32_t i = 0; i < SLOT_CHUNK; i++)
			chunk[i] = (struct slot){ .gen = 1 };
		t->dir[c] = chunk;
	}
	return 0;
}

int slot_get(struct slot_table *t, uint32_t *slot)
{
	uint32_t i;

	/* A fresh slot while few freed ones wait, so reuse stays rare. */
	if (t->free_count <= SLOT_REUSE_DELAY && grow(t) == 0) {
		i = t->capacity++;
	} else if (t->free_count) {
		i = t->free_head;
		t->free_head = slot_at(t, i)->start;
		if (--t->free_count == 0)
			t->free_tail = SLOT_NONE;
	} else {
		return t->capacity == SLOT_MAX ? -ENOSPC : -ENOMEM;
	}
	slot_at(t, i)->live = 1;
	*slot = i;
	return 0;
}

void slot_put(struct slot_table *t, uint32_t i)
{
	struct slot *s = slot_at(t, i);

	s->live = 0;
	s->gen = s->gen == SLOT_GEN_MASK ? 1 : s->gen + 1;
	s->start = SLOT_NONE;
	if (t->free_count)
		slot_at(t, t->free_tail)->start = i;
	else
		t->free_head = i;
	t->free_tail = i;
	t->free_count++;
}
