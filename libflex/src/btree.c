// SPDX-License-Identifier: GPL-2.0
/*
 * The free-block B+tree (btree.h): node pools, the choice of variant,
 * iteration and the invariant check, plus the generic build of the
 * scanning operations (btree_impl.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"

#if defined(__SSE2__)
#define BT_OPS_NAME	"sse2"
#else
#define BT_OPS_NAME	"generic"
#endif
#define BT_OPS		flex_bt_ops_generic
#include "btree_impl.h"

#if BT_HAVE_AVX2
extern const struct bt_ops flex_bt_ops_avx2;	/* btree_avx2.c */
#endif

/* A chunk starts with a cache line for its link. */
#define BT_CHUNK_HEAD	64

struct bt_chunk {
	struct bt_chunk *next;
};

/* ---- node pools: unused nodes are chained through their parent field ---- */

int flex_bt_pool_fill(struct bt *t, bool leaf)
{
	size_t size = leaf ? sizeof(struct bt_node) : sizeof(struct bt_inner);
	struct bt_chunk *c = aligned_alloc(64, BT_CHUNK_HEAD + BT_CHUNK_NODES * size);
	struct bt_node **pool = leaf ? &t->leaf_pool : &t->inner_pool;

	if (!c)
		return -ENOMEM;
	/* Leaves are numbered: chunk number * BT_CHUNK_NODES + position + 1. */
	if (leaf && t->num_leaf_chunks == t->leaf_chunks_cap) {
		uint32_t cap = t->leaf_chunks_cap ? 2 * t->leaf_chunks_cap : 16;
		struct bt_node **dir = cap > t->leaf_chunks_cap ?
				       realloc(t->leaf_chunks, cap * sizeof(*dir)) : NULL;

		if (!dir) {
			free(c);
			return -ENOMEM;
		}
		t->leaf_chunks = dir;
		t->leaf_chunks_cap = cap;
	}
	c->next = t->chunks;
	t->chunks = c;
	for (unsigned int i = 0; i < BT_CHUNK_NODES; i++) {
		struct bt_node *n = (struct bt_node *)((char *)c + BT_CHUNK_HEAD + i * size);

		n->parent = *pool;
		n->leaf = leaf;
		n->n = 0;	/* pooled: bt_near() finds no entries in it */
		n->prev = NULL;
		n->id = leaf ? t->num_leaf_chunks * BT_CHUNK_NODES + i + 1 : 0;
		*pool = n;
	}
	if (leaf) {
		t->leaf_chunks[t->num_leaf_chunks++] = (struct bt_node *)((char *)c + BT_CHUNK_HEAD);
		t->leaf_pool_count += BT_CHUNK_NODES;
	} else {
		t->inner_pool_count += BT_CHUNK_NODES;
	}
	return 0;
}

const struct bt_ops *const *flex_bt_variants(void)
{
	static const struct bt_ops *const generic_only[] = { &flex_bt_ops_generic, NULL };
#if BT_HAVE_AVX2
	static const struct bt_ops *const with_avx2[] = { &flex_bt_ops_avx2, &flex_bt_ops_generic, NULL };

	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx2"))
		return with_avx2;
#endif
	return generic_only;
}

void flex_bt_init_variant(struct bt *t, enum bt_order order, const struct bt_ops *ops)
{
	memset(t, 0, sizeof(*t));
	t->order = order;
	t->ops = ops;
}

void flex_bt_init(struct bt *t, enum bt_order order)
{
	flex_bt_init_variant(t, order, flex_bt_variants()[0]);
}

static void put_subtree(struct bt *t, struct bt_node *n)
{
	if (!n->leaf)
		for (unsigned int i = 0; i < n->n; i++)
			put_subtree(t, inner(n)->child[i]);
	node_put(t, n);
}

void flex_bt_clear(struct bt *t)
{
	if (t->root)
		put_subtree(t, t->root);
	t->root = NULL;
	t->height = 0;
	t->count = 0;
	t->max = 0;
}

void flex_bt_fini(struct bt *t)
{
	while (t->chunks) {
		struct bt_chunk *c = t->chunks;

		t->chunks = c->next;
		free(c);
	}
	free(t->leaf_chunks);
	flex_bt_init_variant(t, t->order, t->ops);
}

bool flex_bt_first(const struct bt *t, struct bt_pos *p)
{
	struct bt_node *n = t->root;

	if (!n)
		return false;
	while (!n->leaf)
		n = inner(n)->child[0];
	*p = (struct bt_pos){ n, 0 };
	return true;
}

bool flex_bt_last(const struct bt *t, struct bt_pos *p)
{
	struct bt_node *n = t->root;

	if (!n)
		return false;
	while (!n->leaf)
		n = inner(n)->child[n->n - 1];
	*p = (struct bt_pos){ n, n->n - 1U };
	return true;
}

/* ---- checking ---- */

struct check_state {
	const struct bt *t;
	const struct bt_node *prev_leaf;
	uint64_t count;
	uint64_t last;		/* key << 32 | val (BY_KEY: key) of the last entry */
	bool have_last;
};

static const char *check_node(struct check_state *s, const struct bt_node *n,
			      unsigned int depth, uint32_t *min_key, uint32_t *sum)
{
	const struct bt *t = s->t;
	uint32_t m = 0;

	if (!n->n)
		return "empty node";
	if (n->n >= BT_FANOUT)
		return "full node left after an operation";
	if (n != t->root && n->n < BT_MIN)
		return "underfull node";
	for (unsigned int i = n->n; i < BT_FANOUT; i++)
		if (n->key[i] != enc(BT_KEY_NONE) || n->val[i] != enc(pad_val(t)))
			return "entry past the end is not padding";
	if (n->leaf) {
		if (depth != t->height)
			return "leaves at different depths";
		if (n->prev != s->prev_leaf || (s->prev_leaf && s->prev_leaf->next != n))
			return "leaf links out of order";
		s->prev_leaf = n;
		for (unsigned int i = 0; i < n->n; i++) {
			uint32_t k = dec(n->key[i]), v = dec(n->val[i]);
			uint64_t e = t->order == BT_BY_KEY ? k : (uint64_t)k << 32 | v;

			if (t->order == BT_BY_KEY && k == BT_KEY_NONE)
				return "key BT_KEY_NONE in the tree";
			if (s->have_last && e <= s->last)
				return "entries not strictly increasing";
			s->last = e;
			s->have_last = true;
			if (v > m)
				m = v;
		}
		s->count += n->n;
	} else {
		for (unsigned int i = 0; i < n->n; i++) {
			const struct bt_node *c = inner(n)->child[i];
			uint32_t k, v;
			const char *err;

			if (c->parent != n || c->pidx != i)
				return "child with a wrong parent or position";
			err = check_node(s, c, depth + 1, &k, &v);
			if (err)
				return err;
			if (dec(n->key[i]) != k)
				return "separator is not the child's smallest key";
			if (dec(n->val[i]) != v)
				return t->order == BT_BY_KEY ? "stored maximum differs from the child's" :
							       "separator val is not the child's first";
			if (v > m)
				m = v;
		}
	}
	if (t->order == BT_BY_KEY && n->max != m)
		return "node's own maximum differs from its entries'";
	*min_key = dec(n->key[0]);
	*sum = t->order == BT_BY_KEY ? m : dec(n->val[0]);
	return NULL;
}

const char *flex_bt_check(const struct bt *t)
{
	struct check_state s = { .t = t };
	uint32_t k, v;
	const char *err;

	if (!t->root)
		return t->count || t->height ? "empty tree with a count or height" : NULL;
	if (t->root->parent)
		return "root with a parent";
	if (!t->root->leaf && t->root->n < 2)
		return "inner root with one child";
	err = check_node(&s, t->root, 1, &k, &v);
	if (err)
		return err;
	if (s.prev_leaf->next)
		return "last leaf has a successor";
	if (s.count != t->count)
		return "count differs from the entries";
	if (t->order == BT_BY_KEY && t->max != v)
		return "tree maximum differs from the entries'";
	return NULL;
}
