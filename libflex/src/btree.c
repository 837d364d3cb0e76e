// SPDX-License-Identifier: GPL-2.0
/* The free-block B+tree: see btree.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "btree.h"

#define BT_CHUNK_NODES	32

struct bt_chunk {
	struct bt_chunk *next;
	struct bt_node nodes[BT_CHUNK_NODES];
};

/* ---- node pool: unused nodes are chained through their parent field ---- */

int bt_reserve(struct bt *t)
{
	/* An insertion splits at most one node per level and adds a root. */
	unsigned int need = t->height + 2;

	while (t->pool_count < need) {
		struct bt_chunk *c = aligned_alloc(64, sizeof(*c));

		if (!c)
			return -ENOMEM;
		c->next = t->chunks;
		t->chunks = c;
		for (unsigned int i = 0; i < BT_CHUNK_NODES; i++) {
			c->nodes[i].parent = t->pool;
			t->pool = &c->nodes[i];
		}
		t->pool_count += BT_CHUNK_NODES;
	}
	return 0;
}

static struct bt_node *node_get(struct bt *t, bool leaf)
{
	struct bt_node *n = t->pool;	/* bt_reserve() made sure there is one */

	t->pool = n->parent;
	t->pool_count--;
	n->leaf = leaf;
	n->n = 0;
	n->parent = NULL;
	n->prev = NULL;
	n->next = NULL;
	return n;
}

static void node_put(struct bt *t, struct bt_node *n)
{
	n->parent = t->pool;
	t->pool = n;
	t->pool_count++;
}

void bt_init(struct bt *t, bool augmented)
{
	memset(t, 0, sizeof(*t));
	t->augmented = augmented;
}

static void put_subtree(struct bt *t, struct bt_node *n)
{
	if (!n->leaf)
		for (unsigned int i = 0; i < n->n; i++)
			put_subtree(t, n->child[i]);
	node_put(t, n);
}

void bt_clear(struct bt *t)
{
	if (t->root)
		put_subtree(t, t->root);
	t->root = NULL;
	t->height = 0;
	t->count = 0;
	t->max = 0;
}

void bt_fini(struct bt *t)
{
	while (t->chunks) {
		struct bt_chunk *c = t->chunks;

		t->chunks = c->next;
		free(c);
	}
	bt_init(t, t->augmented);
}

/* ---- helpers ---- */

static uint32_t node_max(const struct bt_node *n)
{
	uint32_t m = 0;

	for (unsigned int i = 0; i < n->n; i++)
		if (n->val[i] > m)
			m = n->val[i];
	return m;
}

/* The largest value under @n as recorded above it. */
static uint32_t recorded_max(const struct bt *t, const struct bt_node *n)
{
	return n->parent ? n->parent->val[n->pidx] : t->max;
}

/*
 * After a structural change of @n (entries moved in or out): recompute its
 * smallest key and largest value and bring the entries above it up to
 * date, as far as they change.
 */
static void fix_up(struct bt *t, struct bt_node *n)
{
	for (;;) {
		uint32_t v = t->augmented ? node_max(n) : 0;
		struct bt_node *p = n->parent;

		if (!p) {
			t->max = v;
			return;
		}
		if (p->key[n->pidx] == n->key[0] && p->val[n->pidx] == v)
			return;
		p->key[n->pidx] = n->key[0];
		p->val[n->pidx] = v;
		n = p;
	}
}

/*
 * One entry of @n changed value from @oldv to @newv (an insertion is 0 to
 * v, a deletion v to 0) and maybe @n's smallest key changed: update the
 * entries above. The largest value of a node is rescanned only when its
 * largest entry shrank; otherwise it follows from the old one.
 */
static void propagate(struct bt *t, struct bt_node *n, uint32_t oldv, uint32_t newv)
{
	for (;;) {
		uint32_t m = recorded_max(t, n), newm;
		struct bt_node *p = n->parent;

		if (newv >= m)
			newm = newv;
		else if (oldv < m)
			newm = m;
		else
			newm = node_max(n);
		if (!p) {
			t->max = newm;
			return;
		}
		if (p->key[n->pidx] == n->key[0] && newm == m)
			return;
		p->key[n->pidx] = n->key[0];
		p->val[n->pidx] = newm;
		oldv = m;
		newv = newm;
		n = p;
	}
}

/* @p's children from @from on moved: tell them their new positions. */
static void renumber(struct bt_node *p, unsigned int from)
{
	for (unsigned int i = from; i < p->n; i++)
		p->child[i]->pidx = (uint8_t)i;
}

/* Move @cnt entries from @src[@from] to @dst[@to] (regions may overlap). */
static void move_entries(struct bt_node *dst, unsigned int to, struct bt_node *src,
			 unsigned int from, unsigned int cnt)
{
	memmove(&dst->key[to], &src->key[from], cnt * sizeof(dst->key[0]));
	memmove(&dst->val[to], &src->val[from], cnt * sizeof(dst->val[0]));
	if (!src->leaf) {
		memmove(&dst->child[to], &src->child[from], cnt * sizeof(dst->child[0]));
		for (unsigned int i = 0; i < cnt; i++) {
			dst->child[to + i]->parent = dst;
			dst->child[to + i]->pidx = (uint8_t)(to + i);
		}
	}
}

/* The leaf whose range holds @key: the last child whose smallest key <= @key. */
static struct bt_node *descend(const struct bt *t, uint64_t key)
{
	struct bt_node *n = t->root;

	/* Linear scans: measured faster than binary search at this fanout. */
	while (!n->leaf) {
		unsigned int i = 0;

		while (i + 1 < n->n && n->key[i + 1] <= key)
			i++;
		n = n->child[i];
	}
	return n;
}

/* ---- insertion ---- */

/* @n is full: move its upper half to a new right sibling. */
static void split(struct bt *t, struct bt_node *n)
{
	struct bt_node *r = node_get(t, n->leaf), *p = n->parent;
	unsigned int half = n->n / 2, i;

	move_entries(r, 0, n, half, n->n - half);
	r->n = n->n - half;
	n->n = half;
	if (n->leaf) {
		r->prev = n;
		r->next = n->next;
		if (n->next)
			n->next->prev = r;
		n->next = r;
	}
	if (!p) {
		p = node_get(t, false);
		p->n = 1;
		p->child[0] = n;
		p->key[0] = n->key[0];
		p->val[0] = t->max;
		n->parent = p;
		n->pidx = 0;
		t->root = p;
		t->height++;
	}
	i = n->pidx;
	memmove(&p->key[i + 2], &p->key[i + 1], (p->n - i - 1) * sizeof(p->key[0]));
	memmove(&p->val[i + 2], &p->val[i + 1], (p->n - i - 1) * sizeof(p->val[0]));
	memmove(&p->child[i + 2], &p->child[i + 1], (p->n - i - 1) * sizeof(p->child[0]));
	p->n++;
	p->child[i + 1] = r;
	p->key[i + 1] = r->key[0];
	r->parent = p;
	renumber(p, i + 1);
	/* The pair holds what n held: p's own entry upward does not change. */
	p->val[i] = t->augmented ? node_max(n) : 0;
	p->val[i + 1] = t->augmented ? node_max(r) : 0;
	if (p->n == BT_FANOUT)
		split(t, p);
}

/* Put (key, val) at entry @j of @leaf, splitting it if it fills up. */
static void insert_at(struct bt *t, struct bt_node *leaf, unsigned int j, uint64_t key,
		      uint32_t val)
{
	memmove(&leaf->key[j + 1], &leaf->key[j], (leaf->n - j) * sizeof(leaf->key[0]));
	memmove(&leaf->val[j + 1], &leaf->val[j], (leaf->n - j) * sizeof(leaf->val[0]));
	leaf->key[j] = key;
	leaf->val[j] = val;
	leaf->n++;
	t->count++;
	propagate(t, leaf, 0, t->augmented ? val : 0);
	/* Split when full, so that every node has room for the next entry. */
	if (leaf->n == BT_FANOUT)
		split(t, leaf);
}

void bt_insert(struct bt *t, uint64_t key, uint32_t val)
{
	struct bt_node *leaf;
	unsigned int j;

	if (!t->root) {
		leaf = node_get(t, true);
		t->root = leaf;
		t->height = 1;
		t->max = 0;
		insert_at(t, leaf, 0, key, val);
		return;
	}
	leaf = descend(t, key);
	for (j = 0; j < leaf->n && leaf->key[j] < key; j++)
		;
	insert_at(t, leaf, j, key, val);
}

void bt_insert_before(struct bt *t, struct bt_pos p, uint64_t key, uint32_t val)
{
	insert_at(t, p.leaf, p.i, key, val);
}

/* ---- deletion ---- */

/* @n (not the root) has fewer than BT_MIN entries: merge or borrow. */
static void rebalance(struct bt *t, struct bt_node *n)
{
	struct bt_node *p = n->parent, *l, *r;
	unsigned int li = n->pidx ? n->pidx - 1U : 0;

	l = p->child[li];
	r = p->child[li + 1];
	if (l->n + r->n < BT_FANOUT) {
		/* Merge r into l and drop r from p. */
		move_entries(l, l->n, r, 0, r->n);
		l->n += r->n;
		if (l->leaf) {
			l->next = r->next;
			if (r->next)
				r->next->prev = l;
		}
		memmove(&p->key[li + 1], &p->key[li + 2], (p->n - li - 2) * sizeof(p->key[0]));
		memmove(&p->val[li + 1], &p->val[li + 2], (p->n - li - 2) * sizeof(p->val[0]));
		memmove(&p->child[li + 1], &p->child[li + 2], (p->n - li - 2) * sizeof(p->child[0]));
		p->n--;
		renumber(p, li + 1);
		node_put(t, r);
		/* l now holds both; p may have lost its largest value with n's. */
		fix_up(t, l);
		fix_up(t, p);
		if (p == t->root) {
			if (p->n == 1) {
				t->root = l;
				l->parent = NULL;
				node_put(t, p);
				t->height--;
			}
		} else if (p->n < BT_MIN) {
			rebalance(t, p);
		}
		return;
	}
	/* Too many for one node: share them evenly. */
	unsigned int want = (l->n + r->n) / 2;

	if (l->n < want) {
		unsigned int k = want - l->n;

		move_entries(l, l->n, r, 0, k);
		l->n += k;
		move_entries(r, 0, r, k, r->n - k);
		r->n -= k;
	} else {
		unsigned int k = l->n - want;

		move_entries(r, k, r, 0, r->n);
		move_entries(r, 0, l, want, k);
		r->n += k;
		l->n = want;
	}
	fix_up(t, l);
	fix_up(t, r);
	fix_up(t, p);
}

void bt_delete(struct bt *t, struct bt_pos pos)
{
	struct bt_node *leaf = pos.leaf;
	uint32_t v = leaf->val[pos.i];

	memmove(&leaf->key[pos.i], &leaf->key[pos.i + 1], (leaf->n - pos.i - 1) * sizeof(leaf->key[0]));
	memmove(&leaf->val[pos.i], &leaf->val[pos.i + 1], (leaf->n - pos.i - 1) * sizeof(leaf->val[0]));
	leaf->n--;
	t->count--;
	if (!leaf->n && leaf == t->root) {
		node_put(t, leaf);
		t->root = NULL;
		t->height = 0;
		t->max = 0;
		return;
	}
	/* An emptied leaf is merged away below, fixing what is above it. */
	if (leaf->n)
		propagate(t, leaf, v, 0);
	if (leaf != t->root && leaf->n < BT_MIN)
		rebalance(t, leaf);
}

void bt_set(struct bt *t, struct bt_pos pos, uint64_t key, uint32_t val)
{
	uint32_t old = pos.leaf->val[pos.i];

	pos.leaf->key[pos.i] = key;
	pos.leaf->val[pos.i] = val;
	propagate(t, pos.leaf, old, val);
}

/* ---- lookups ---- */

bool bt_lower_bound(const struct bt *t, uint64_t key, struct bt_pos *p)
{
	struct bt_node *leaf;
	unsigned int j;

	if (!t->root)
		return false;
	leaf = descend(t, key);
	for (j = 0; j < leaf->n && leaf->key[j] < key; j++)
		;
	if (j == leaf->n) {
		/* Everything here is smaller: the next leaf starts above @key. */
		leaf = leaf->next;
		j = 0;
		if (!leaf)
			return false;
	}
	*p = (struct bt_pos){ leaf, j };
	return true;
}

bool bt_first_fit(const struct bt *t, uint32_t v, struct bt_pos *p)
{
	struct bt_node *n = t->root;
	unsigned int i;

	if (!n || t->max < v)
		return false;
	/* The maxima guarantee a fit below every step taken. */
	for (;;) {
		for (i = 0; i + 1 < n->n && n->val[i] < v; i++)
			;
		if (n->leaf)
			break;
		n = n->child[i];
	}
	*p = (struct bt_pos){ n, i };
	return true;
}

bool bt_last_fit(const struct bt *t, uint32_t v, struct bt_pos *p)
{
	struct bt_node *n = t->root;
	unsigned int i;

	if (!n || t->max < v)
		return false;
	for (;;) {
		for (i = n->n - 1; i > 0 && n->val[i] < v; i--)
			;
		if (n->leaf)
			break;
		n = n->child[i];
	}
	*p = (struct bt_pos){ n, i };
	return true;
}

bool bt_first(const struct bt *t, struct bt_pos *p)
{
	struct bt_node *n = t->root;

	if (!n)
		return false;
	while (!n->leaf)
		n = n->child[0];
	*p = (struct bt_pos){ n, 0 };
	return true;
}

bool bt_next(struct bt_pos *p)
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

bool bt_prev(struct bt_pos *p)
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

/* ---- checking ---- */

struct check_state {
	const struct bt *t;
	const struct bt_node *prev_leaf;
	uint64_t count;
	uint64_t last_key;
	bool have_key;
};

static const char *check_node(struct check_state *s, const struct bt_node *n,
			      unsigned int depth, uint64_t *min_key, uint32_t *max_val)
{
	uint32_t m = 0;

	if (!n->n)
		return "empty node";
	if (n->n >= BT_FANOUT)
		return "full node left after an operation";
	if (n != s->t->root && n->n < BT_MIN)
		return "underfull node";
	if (n->leaf) {
		if (depth != s->t->height)
			return "leaves at different depths";
		if (n->prev != s->prev_leaf || (s->prev_leaf && s->prev_leaf->next != n))
			return "leaf links out of order";
		s->prev_leaf = n;
		for (unsigned int i = 0; i < n->n; i++) {
			if (s->have_key && n->key[i] <= s->last_key)
				return "keys not strictly increasing";
			s->last_key = n->key[i];
			s->have_key = true;
			if (n->val[i] > m)
				m = n->val[i];
		}
		s->count += n->n;
	} else {
		for (unsigned int i = 0; i < n->n; i++) {
			uint64_t k;
			uint32_t v;
			const char *err;

			if (n->child[i]->parent != n)
				return "child with a wrong parent";
			err = check_node(s, n->child[i], depth + 1, &k, &v);
			if (err)
				return err;
			if (n->key[i] != k)
				return "separator is not the child's smallest key";
			if (s->t->augmented && n->val[i] != v)
				return "stored maximum differs from the child's";
			if (v > m)
				m = v;
		}
	}
	*min_key = n->key[0];
	*max_val = m;
	return NULL;
}

const char *bt_check(const struct bt *t)
{
	struct check_state s = { .t = t };
	uint64_t k;
	uint32_t v;
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
	if (t->augmented && t->max != v)
		return "tree maximum differs from the entries'";
	return NULL;
}
