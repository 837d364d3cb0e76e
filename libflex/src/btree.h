/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A B+tree of free blocks: sorted 64-bit keys with a 32-bit value each,
 * where every inner node also keeps, per child, the child's smallest key and
 * (when the tree is "augmented") its largest value.
 *
 * FlexAllocator keeps a region's free blocks in one keyed by offset with the
 * size as value: the lowest (or highest) offset whose size fits is one
 * descent following the per-child maxima. With best fit, a second tree
 * keyed by (size << 32 | offset) finds the smallest fit by lower bound.
 *
 * Why a B+tree and not a binary tree: a binary tree of a few thousand free
 * blocks is 12-25 levels of dependent pointer loads, each a likely cache
 * miss; with 32-way nodes it is 3-4 levels whose keys are scanned from
 * contiguous arrays. Nodes come from a per-tree pool; bt_reserve() makes
 * sure the next insertion cannot fail for lack of host memory.
 *
 * Hand-written: no library in Debian offers an ordered map with per-child
 * augmentation. Not thread-safe: the caller locks.
 */
#ifndef FLEX_BTREE_H
#define FLEX_BTREE_H

#include <stdbool.h>
#include <stdint.h>

#define BT_FANOUT	64		/* entries per leaf, children per inner node */
#define BT_MIN		(BT_FANOUT / 4)	/* fewer: borrow from or merge with a sibling */
#define BT_MAX_HEIGHT	16

struct bt_node {
	uint8_t leaf;
	uint8_t n;			/* entries (leaf) or children (inner) */
	uint8_t pidx;			/* position in the parent's child[] */
	struct bt_node *parent;
	uint64_t key[BT_FANOUT];	/* leaf: keys; inner: smallest key of child i */
	uint32_t val[BT_FANOUT];	/* leaf: values; inner: largest value of child i */
	union {
		struct bt_node *child[BT_FANOUT];	/* inner */
		struct {				/* leaf: in key order */
			struct bt_node *prev;
			struct bt_node *next;
		};
	};
} __attribute__((aligned(64)));

struct bt_chunk;

struct bt {
	struct bt_node *root;
	unsigned int height;		/* 0 when empty */
	bool augmented;			/* keep per-child largest values */
	uint32_t max;			/* largest value in the tree (augmented) */
	uint64_t count;
	struct bt_node *pool;		/* unused nodes */
	unsigned int pool_count;
	struct bt_chunk *chunks;
};

/* A position: entry @i of leaf @leaf; leaf NULL means "none". */
struct bt_pos {
	struct bt_node *leaf;
	unsigned int i;
};

static inline uint64_t bt_key(struct bt_pos p)
{
	return p.leaf->key[p.i];
}

static inline uint32_t bt_val(struct bt_pos p)
{
	return p.leaf->val[p.i];
}

void bt_init(struct bt *t, bool augmented);
/* Free every node, pooled or not. */
void bt_fini(struct bt *t);
/* Remove every entry (nodes go back to the pool). */
void bt_clear(struct bt *t);
/* Have enough pooled nodes for one insertion. Return: 0 or -ENOMEM. */
int bt_reserve(struct bt *t);

/* Insert a key not in the tree. Needs bt_reserve() first; never fails then. */
void bt_insert(struct bt *t, uint64_t key, uint32_t val);
/*
 * Insert where a lookup found the place: before the entry at @p, or with
 * @p.i == entries of @p.leaf, after its last one. Needs bt_reserve() first.
 */
void bt_insert_before(struct bt *t, struct bt_pos p, uint64_t key, uint32_t val);
/* Remove the entry at @p. */
void bt_delete(struct bt *t, struct bt_pos p);
/* Change the entry at @p; @key must keep its place in the order. */
void bt_set(struct bt *t, struct bt_pos p, uint64_t key, uint32_t val);

/* First entry with key >= @key. */
bool bt_lower_bound(const struct bt *t, uint64_t key, struct bt_pos *p);
/* Lowest / highest key whose value is >= @v (augmented trees). */
bool bt_first_fit(const struct bt *t, uint32_t v, struct bt_pos *p);
bool bt_last_fit(const struct bt *t, uint32_t v, struct bt_pos *p);
/* The first entry; the next and previous ones (false at the ends). */
bool bt_first(const struct bt *t, struct bt_pos *p);
bool bt_next(struct bt_pos *p);
bool bt_prev(struct bt_pos *p);

/*
 * Check every invariant (order, separators, maxima, parents, leaf links,
 * fill, count, height). Return: NULL if sound, else what is wrong.
 */
const char *bt_check(const struct bt *t);

#endif /* FLEX_BTREE_H */
