/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The best-fit index of one region's free blocks: given a size, the
 * smallest free block at least that large, the lowest offset among blocks
 * of that size (region.h keeps the same blocks by offset).
 *
 * Contract: every free block of the region is in the index exactly once,
 * as (start, size) in granules; the caller adds, moves (split, merged) and
 * removes it as the block appears, changes and goes, and asks
 * flex_size_index_best() for the best fit, which stays in until removed.
 * With each addition and move the caller may give a hint, a number the
 * index only keeps: the number of the by-offset tree's leaf that holds the
 * block (bt_leaf_id()), so that the allocation which takes it finds its
 * entry there (bt_near()) instead of by a descent of that tree. The best
 * fit comes with its hint, or 0 where the index keeps none (blocks in its
 * tree, below); a hint may be stale, never wrong to use.
 * Adding or moving a block may need host memory, and fails before it
 * changes anything if there is none: the caller makes it the first change
 * of an allocation or a free, so that none fails half-way. Nothing here
 * locks: the caller holds the region's lock.
 *
 * Why not one B+tree by (size, offset), as best fit used: every change of
 * a free block then costs a descent and a shift of entries in that tree
 * on top of the one by offset, on every allocation and every free. Most
 * free blocks are small, and a small size can be looked up directly: sizes
 * below num_bins (at most SIZE_BINS_MAX) each have a bin, and a two-level
 * bitmap of the non-empty bins gives the smallest non-empty size at or
 * above a request with a few word scans.
 *
 * A bin keeps the starts of its blocks in no order, each with its hint at
 * the same place in a second row: an addition goes at the end, a removal
 * takes the last into the gap, and the bin knows where the lowest is;
 * finding a start to remove, or the lowest once best fit took it, is a
 * scan with vector compares (AVX2's where the CPU has it, for arrays). No
 * change shifts entries or branches on where a start falls among the
 * others, which a processor cannot predict. They are
 *
 *  - up to BIN_SLOTS in the bin itself. Most sizes have one or two free
 *    blocks at a time.
 *  - up to BIN_ARRAY_MAX in an array of their own. Small sizes are where
 *    many blocks of one size pile up (the remainders of near fits, and
 *    programs of equal tensors). The array doubles as it fills; back to
 *    the slots at BIN_SLOTS / 2 blocks.
 *  - more than BIN_ARRAY_MAX: in a B+tree by (size, offset), so that no
 *    change costs more than a descent and a node, until the bin is empty.
 *
 * Blocks of num_bins granules or more go to the tree too: a region can
 * only have few of them (its size over num_bins).
 */
#ifndef FLEX_SIZE_INDEX_H
#define FLEX_SIZE_INDEX_H

#include <stdbool.h>
#include <stdint.h>

#include "btree.h"

/*
 * Sizes with a bin: below 4 MiB (in 128-byte granules). A bin is 48 bytes,
 * so a best-fit region's bins take up to 1.5 MiB of host memory; larger
 * blocks are rare enough for the tree. At half that (2 MiB), every
 * allocation of 2-4 MiB and the merged free blocks of that size paid
 * a descent and a shift in the tree, on top of the by-offset tree's.
 */
#define SIZE_BINS_MAX	(1U << 15)
#define BIN_SLOTS	4	/* a group of the scans */
#define BIN_ARRAY_MIN	8	/* entries of a new array: a multiple of BIN_SLOTS */
/* Past this many, scanning a bin's array costs more than the tree's descent. */
#define BIN_ARRAY_MAX	1024

/*
 * Starts are stored ^ BIN_BIAS, so that signed vector compares order
 * them; unused entries are BIN_PAD, above every stored start (no block
 * starts at 2^32 - 1).
 */
#define BIN_BIAS	0x80000000U
#define BIN_PAD		(UINT32_MAX ^ BIN_BIAS)

struct size_bin {
	uint32_t *a;			/* cap stored starts, the first n used, then
					 * their cap hints: slot or an array; NULL in
					 * the tree */
	uint32_t n;			/* free blocks of this size */
	uint16_t cap;			/* 0: the blocks are in the tree */
	uint16_t lo;			/* where the lowest start is (0 if none) */
	uint32_t slot[2 * BIN_SLOTS];
};

_Static_assert(sizeof(struct size_bin) == 48, "a bin is three quarters of a cache line");
_Static_assert(BIN_ARRAY_MAX <= UINT16_MAX, "cap and lo are 16 bits");

struct size_index {
	struct size_bin *bin;		/* by size (bin[0] unused) */
	uint64_t *map;			/* bit s: bin[s] has blocks */
	uint64_t *map_top;		/* bit w: map[w] is not 0 */
	uint32_t num_bins;		/* sizes below it have a bin; a multiple of 64 */
	bool avx2;			/* arrays are scanned with the AVX2 build */
	struct bt tree;			/* (size, start): large blocks, bins with cap 0 */
};

#if BT_HAVE_AVX2
/*
 * The scans of a bin's array built for AVX2 (size_index_avx2.c): where the
 * stored start @v is among the @n used entries of @a (@n if not there), and
 * where the lowest is (@n at least 1). They read whole groups: @a must have
 * room for at least 8 entries, and a multiple of 16 when @n is above 8 (an
 * array's, never a bin's slots), with BIN_PAD past the used ones.
 */
uint32_t flex_size_bin_find_avx2(const uint32_t *a, uint32_t n, uint32_t v);
uint32_t flex_size_bin_lowest_avx2(const uint32_t *a, uint32_t n);
#endif

/* An empty index with no bins, with the best scans the CPU runs. */
void flex_size_index_init(struct size_index *x);
/* Free everything. */
void flex_size_index_fini(struct size_index *x);

/*
 * Bins for a region of @granules (up to SIZE_BINS_MAX): the index must be
 * empty. Return: 0 or -ENOMEM (then it has no bins, and must not be used).
 */
int flex_size_index_start(struct size_index *x, uint32_t granules);
/* Empty it and give back the bins. */
void flex_size_index_stop(struct size_index *x);

/*
 * Add the free block [@start, @start + @size), with the hint @leaf. Return:
 * 0, or -ENOMEM (the index holds what it held).
 */
int flex_size_index_add(struct size_index *x, uint32_t start, uint32_t size, uint32_t leaf);
/* Remove that free block, which is in the index. */
void flex_size_index_del(struct size_index *x, uint32_t start, uint32_t size);
/*
 * The free block (@start, @size), which is in the index, becomes (@nstart,
 * @nsize) (split or merged), with the hint @leaf. Return: 0, or -ENOMEM
 * (the index holds what it held).
 */
int flex_size_index_move(struct size_index *x, uint32_t start, uint32_t size, uint32_t nstart,
			 uint32_t nsize, uint32_t leaf);
/*
 * The best fit for @g granules: the smallest block of at least @g, the
 * lowest start among that size, and its hint (0: none kept). Return: false
 * if none.
 */
bool flex_size_index_best(const struct size_index *x, uint32_t g, uint32_t *start,
			  uint32_t *size, uint32_t *leaf);

/*
 * Check that the bins, the bitmap and the tree agree (counts, room,
 * padding, each bin's lowest, bits) and that the index holds exactly the
 * free blocks of @by_offset (offset -> size). Return: NULL if sound, else
 * what is wrong.
 */
const char *flex_size_index_check(const struct size_index *x, const struct bt *by_offset);

#endif /* FLEX_SIZE_INDEX_H */
