/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A B+tree of free blocks: entries are pairs of 32-bit numbers (key, val),
 * in one of two orders:
 *
 *  - BT_BY_KEY, augmented: sorted by key (keys unique); every inner node
 *    keeps, per child, the child's smallest key and its largest val.
 *    FlexAllocator keeps a region's free blocks in one, offset -> size (in
 *    128-byte granules): the lowest (or highest) offset whose size fits is
 *    one descent following the per-child maxima, and a freed block's free
 *    neighbours are the entries on either side of its offset.
 *  - BT_BY_PAIR: sorted by (key, val) (pairs unique). With best fit, free
 *    blocks are also in one of these as (size, offset): the smallest fit,
 *    lowest offset first, is a lower bound.
 *
 * Why a B+tree and not a binary tree: a binary tree of a few thousand free
 * blocks is 12-25 levels of dependent pointer loads, each a likely cache
 * miss; with BT_FANOUT-way nodes it is 2-4 levels. Each node is scanned
 * whole with vector compares over arrays of 32-bit numbers: no branch
 * depends on the data, so none is mispredicted, and the loads of a node
 * go out together instead of one after the other as in a binary search.
 * Entries past a node's count are padding that no scan counts (key
 * BT_KEY_NONE), and numbers are stored with the top bit flipped (BT_BIAS)
 * so that SSE2's signed compares order them as unsigned ones. The code that
 * scans is built once per instruction set (btree_impl.h: SSE2, or plain C
 * off x86, in btree.c; AVX2, half the instructions, in btree_avx2.c) and
 * flex_bt_init() picks the best the CPU runs; struct bt_ops holds the choice.
 * Leaves and inner nodes come from per-tree pools; bt_reserve() makes sure
 * the next insertion cannot fail for lack of host memory. Nodes go back to
 * the pools, never to the system, until flex_bt_fini(): so a leaf's number
 * (bt_leaf_id()) names valid memory for the tree's whole life, and
 * bt_near() can start from a leaf remembered long ago, whatever became of
 * it, and check whether it still is where a key's neighbours are. That
 * spares the descent a lookup would make (a dependent cache miss per level
 * in a large tree).
 *
 * Hand-written: no library in Debian offers an ordered map with per-child
 * augmentation. Not thread-safe: the caller locks.
 */
#ifndef FLEX_BTREE_H
#define FLEX_BTREE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Entries per leaf, children per inner node. 64 rather than 32: about
 * 40,000 free blocks (a region with 100,000 live ones) take 3 levels
 * instead of 4, and a wider node costs little more to scan since its lines
 * load together. In three alternating runs of the allocator bench (32,
 * then 64) the 100k/1k cost ratio went from 1.62-1.66 to 1.50-1.52, the 1k
 * cost rose by 1-3 ns, and BestFit, whose (size, offset) tree has the same
 * nodes, got about 6% slower. 48 was slower than both.
 */
#define BT_FANOUT	64
#define BT_MIN		(BT_FANOUT / 4)	/* fewer: borrow from or merge with a sibling */
/*
 * The key of unused entries: BY_KEY keys must be below it; BY_PAIR allows it
 * with a val below UINT32_MAX (a region of 2^32 - 1 granules is one free
 * block of that size).
 */
#define BT_KEY_NONE	UINT32_MAX
/* Stored numbers are x ^ BT_BIAS. */
#define BT_BIAS		0x80000000U

/* The AVX2 build (btree_avx2.c): x86-64 with GCC, whose target pragma it needs. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BT_HAVE_AVX2	1
#else
#define BT_HAVE_AVX2	0
#endif

enum bt_order {
	BT_BY_KEY,	/* by key, with the largest val under each child */
	BT_BY_PAIR,	/* by (key, val) */
};

/* A leaf, and the first part of an inner node (struct bt_inner). */
struct bt_node {
	/* Stored ^ BT_BIAS, in 32-byte blocks for the vector loads: */
	uint32_t key[BT_FANOUT];	/* leaf: keys; inner: smallest key of child i */
	uint32_t val[BT_FANOUT];	/* leaf: vals; inner: BY_KEY largest val of
					 * child i, BY_PAIR val of its smallest pair */
	struct bt_node *parent;
	struct bt_node *prev;		/* leaves: the neighbours in order */
	struct bt_node *next;
	uint8_t leaf;
	uint8_t n;			/* entries (leaf) or children (inner) */
	uint8_t pidx;			/* position in the parent's children */
	uint32_t id;			/* leaves: the number bt_leaf_by_id() takes */
	uint32_t max;			/* BY_KEY: the largest val under it, as the
					 * parent records (kept here so that an update
					 * that changes nothing above reads no parent) */
} __attribute__((aligned(64)));

struct bt_inner {
	struct bt_node node;
	struct bt_node *child[BT_FANOUT];
};

struct bt_chunk;
struct bt_ops;

struct bt {
	const struct bt_ops *ops;	/* the instruction-set variant */
	struct bt_node *root;
	unsigned int height;		/* 0 when empty */
	enum bt_order order;
	uint32_t max;			/* BY_KEY: largest val in the tree */
	uint64_t count;
	struct bt_node *leaf_pool;	/* unused nodes, chained through parent */
	struct bt_node *inner_pool;
	unsigned int leaf_pool_count;
	unsigned int inner_pool_count;
	struct bt_chunk *chunks;
	struct bt_node **leaf_chunks;	/* first leaf of each leaf chunk, by number */
	uint32_t num_leaf_chunks;
	uint32_t leaf_chunks_cap;
};

/* Nodes per pool chunk. */
#define BT_CHUNK_NODES	16

/* A position: entry @i of leaf @leaf. */
struct bt_pos {
	struct bt_node *leaf;
	unsigned int i;
};

/* The last entry before a key and the first at or after it (the key's own, if in the tree). */
struct bt_gap {
	struct bt_pos pred, succ;
	bool has_pred, has_succ;
};

static inline uint32_t bt_key(struct bt_pos p)
{
	return p.leaf->key[p.i] ^ BT_BIAS;
}

static inline uint32_t bt_val(struct bt_pos p)
{
	return p.leaf->val[p.i] ^ BT_BIAS;
}

/* The operations that scan nodes, as built for one instruction set. */
struct bt_ops {
	const char *name;
	void (*insert)(struct bt *t, uint32_t key, uint32_t val);
	void (*insert_before)(struct bt *t, struct bt_pos p, uint32_t key, uint32_t val);
	void (*delete)(struct bt *t, struct bt_pos p);
	void (*set)(struct bt *t, struct bt_pos p, uint32_t key, uint32_t val);
	bool (*lower_bound)(const struct bt *t, uint32_t key, uint32_t val, struct bt_pos *p);
	bool (*first_fit)(const struct bt *t, uint32_t v, struct bt_pos *p);
	bool (*last_fit)(const struct bt *t, uint32_t v, struct bt_pos *p);
	bool (*near)(const struct bt *t, struct bt_node *leaf, uint32_t key, struct bt_gap *g);
};

/* An empty tree, with the best variant the CPU runs. */
void flex_bt_init(struct bt *t, enum bt_order order);
/* The variants the CPU runs, best first, NULL-terminated (for tests). */
const struct bt_ops *const *flex_bt_variants(void);
/* An empty tree with the variant @ops (one of flex_bt_variants()). */
void flex_bt_init_variant(struct bt *t, enum bt_order order, const struct bt_ops *ops);
/* Free every node, pooled or not. */
void flex_bt_fini(struct bt *t);
/* Remove every entry (nodes go back to the pool). */
void flex_bt_clear(struct bt *t);

/* Add a chunk of unused leaves or inner nodes to the pools. Return: 0, -ENOMEM. */
int flex_bt_pool_fill(struct bt *t, bool leaf);

/* Have enough pooled nodes for one insertion. Return: 0 or -ENOMEM. */
static inline int bt_reserve(struct bt *t)
{
	/* An insertion splits a leaf, at most every inner node, and adds a root. */
	while (t->leaf_pool_count < 1 || t->inner_pool_count < t->height + 1)
		if (flex_bt_pool_fill(t, t->leaf_pool_count < 1))
			return -ENOMEM;
	return 0;
}

/* Insert an entry not in the tree. Needs bt_reserve() first; never fails then. */
static inline void bt_insert(struct bt *t, uint32_t key, uint32_t val)
{
	t->ops->insert(t, key, val);
}

/*
 * Insert where a lookup found the place: before the entry at @p, or with
 * @p.i == entries of @p.leaf, after its last one. Needs bt_reserve() first.
 */
static inline void bt_insert_before(struct bt *t, struct bt_pos p, uint32_t key, uint32_t val)
{
	t->ops->insert_before(t, p, key, val);
}

/* Remove the entry at @p. */
static inline void bt_delete(struct bt *t, struct bt_pos p)
{
	t->ops->delete(t, p);
}

/* Change the entry at @p; it must keep its place in the order. */
static inline void bt_set(struct bt *t, struct bt_pos p, uint32_t key, uint32_t val)
{
	t->ops->set(t, p, key, val);
}

/* First entry at or after (@key, @val) in the order (BY_KEY: @val unused). */
static inline bool bt_lower_bound(const struct bt *t, uint32_t key, uint32_t val,
				  struct bt_pos *p)
{
	return t->ops->lower_bound(t, key, val, p);
}

/* BY_KEY: the lowest / highest key whose val is >= @v. */
static inline bool bt_first_fit(const struct bt *t, uint32_t v, struct bt_pos *p)
{
	return t->ops->first_fit(t, v, p);
}

static inline bool bt_last_fit(const struct bt *t, uint32_t v, struct bt_pos *p)
{
	return t->ops->last_fit(t, v, p);
}

/* The number of the leaf of @p: never 0, and below 2^30 in any real tree. */
static inline uint32_t bt_leaf_id(struct bt_pos p)
{
	return p.leaf->id;
}

/*
 * The leaf numbered @id (bt_leaf_id()), in the tree or back in its pool;
 * NULL if the tree never had one by that number (@id 0 included).
 */
static inline struct bt_node *bt_leaf_by_id(const struct bt *t, uint32_t id)
{
	if (!id || (id - 1) / BT_CHUNK_NODES >= t->num_leaf_chunks)
		return NULL;
	return t->leaf_chunks[(id - 1) / BT_CHUNK_NODES] + (id - 1) % BT_CHUNK_NODES;
}

/*
 * BY_KEY: the entries on either side of @key, found from @leaf
 * (bt_leaf_by_id(), NULL allowed) instead of by a descent: the last entry
 * below @key and the first at or above it (@key itself, if it is in the
 * tree). True if @leaf, or a leaf next to it, holds @key's place (@leaf
 * may have been split, merged away or reused since it was remembered; a
 * leaf merged away leads to the one that took its entries); false, with
 * *@g unset, when it is not close: then look the key up.
 */
static inline bool bt_near(const struct bt *t, struct bt_node *leaf, uint32_t key,
			   struct bt_gap *g)
{
	return leaf && t->ops->near(t, leaf, key, g);
}

/* The first and last entries (false if empty). */
bool flex_bt_first(const struct bt *t, struct bt_pos *p);
bool flex_bt_last(const struct bt *t, struct bt_pos *p);

/* The next and previous entries (false at the ends). */
static inline bool bt_next(struct bt_pos *p)
{
	if (p->i + 1 < p->leaf->n) {
		p->i++;
		return true;
	}
	if (!p->leaf->next)
		return false;
	*p = (struct bt_pos){ p->leaf->next, 0 };
	return true;
}

static inline bool bt_prev(struct bt_pos *p)
{
	if (p->i > 0) {
		p->i--;
		return true;
	}
	if (!p->leaf->prev)
		return false;
	*p = (struct bt_pos){ p->leaf->prev, p->leaf->prev->n - 1U };
	return true;
}

/*
 * Check every invariant (order, separators, maxima, padding, parents, leaf
 * links, fill, count, height). Return: NULL if sound, else what is wrong.
 */
const char *flex_bt_check(const struct bt *t);

#endif /* FLEX_BTREE_H */
