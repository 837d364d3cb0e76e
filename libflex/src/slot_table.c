// SPDX-License-Identifier: GPL-2.0
/* AllocationIndex slots: see slot_table.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "slot_table.h"

void flex_slot_table_init(struct slot_table *t)
{
	memset(t, 0, sizeof(*t));
	t->free_head = SLOT_NONE;
	t->free_tail = SLOT_NONE;
}

void flex_slot_table_fini(struct slot_table *t)
{
	for (uint32_t i = 0; i < SLOT_DIR; i++)
		free(t->dir[i]);
	flex_slot_table_init(t);
}

int flex_slot_grow(struct slot_table *t)
{
	uint32_t c = t->capacity >> SLOT_CHUNK_BITS;
	struct slot *chunk;

	if (t->capacity == SLOT_MAX)
		return -ENOSPC;
	chunk = malloc(SLOT_CHUNK * sizeof(*chunk));
	if (!chunk)
		return -ENOMEM;
	for (uint32_t i = 0; i < SLOT_CHUNK; i++)
		chunk[i] = (struct slot){ .gen = 1 };
	t->dir[c] = chunk;
	t->created += SLOT_CHUNK;
	return 0;
}
