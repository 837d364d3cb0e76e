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
 * Adding or moving a block to a size needs flex_size_index_reserve() for
 * that size first: it grows or converts the bin beforehand, where failing
 * leaves the index as it was, so that no change fails half-way. Nothing
 * here locks: the caller holds the region's lock.
 *
 * Why not one B+tree by (size, offset), as best fit used: every change of
 * a free block then costs a descent and a shift of entries in that tree
 * on top of the one by offset, on every allocation and every free. Most
 * free blocks are small, and a small size can be looked up directly: sizes
 * below num_bins (at most SIZE_BINS_MAX) each have a bin, and a two-level
 * bitmap of the non-empty bins gives the smallest non-empty size at or
 * above a request with a few word scans.
 * A bin keeps the starts of its blocks in the way that suits their number:
 *
 *  - BIN_INLINE: up to BIN_SLOTS in the bin itself, ascending. Most sizes
 *    have one or two free blocks at a time.
 *  - BIN_ARRAY: up to BIN_ARRAY_MAX in an array of their own, descending,
 *    so that the lowest, the one best fit takes, is the last and goes
 *    without a shift. Small sizes are where many blocks of one size pile
 *    up (the remainders of near fits, and programs of equal tensors), and
 *    a search and a short shift in one array costs less than a change in a
 *    B+tree. The array doubles as it fills; back to the slots at one block.
 *  - BIN_TREE: more than BIN_ARRAY_MAX: in a B+tree by (size, offset), so
 *    that no change shifts more than a node. Until the bin is empty.
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
 * Sizes with a bin: below 2 MiB (in 128-byte granules). A bin is 16 bytes,
 * so a region's bins take up to 256 KiB of host memory; larger blocks are
 * rare enough for the tree.
 */
#define SIZE_BINS_MAX	(1U << 14)
#define BIN_SLOTS	3
#define BIN_ARRAY_MIN	8
/* Past this many, shifting a bin's array costs more than the tree's log n. */
#define BIN_ARRAY_MAX	1024

enum bin_mode {
	BIN_INLINE,
	BIN_ARRAY,
	BIN_TREE,
};

struct size_bin {
	union {
		uint32_t start[BIN_SLOTS];	/* BIN_INLINE: ascending */
		struct {
			uint32_t *starts;	/* BIN_ARRAY: descending */
			uint32_t cap;		/* entries allocated */
		} __attribute__((packed)) arr;
	};
	uint32_t n : 30;			/* free blocks of this size */
	uint32_t mode : 2;			/* enum bin_mode */
};

_Static_assert(sizeof(struct size_bin) == 16, "a bin is a quarter of a cache line");

struct size_index {
	struct size_bin *bin;		/* by size (bin[0] unused) */
	uint64_t *map;			/* bit s: bin[s] has blocks */
	uint64_t *map_top;		/* bit w: map[w] is not 0 */
	uint32_t num_bins;		/* sizes below it have a bin; a multiple of 64 */
	struct bt tree;			/* (size, start): large blocks, BIN_TREE bins */
};

/* An empty index with no bins. */
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
 * Make sure that adding one block of @size cannot fail: grow or convert
 * its bin, or fill the tree's pools. Return: 0 or -ENOMEM (the index holds
 * what it held).
 */
int flex_size_index_reserve(struct size_index *x, uint32_t size);

/* Add the free block [@start, @start + @size); needs flex_size_index_reserve(). */
void flex_size_index_add(struct size_index *x, uint32_t start, uint32_t size);
/* Remove that free block, which is in the index. */
void flex_size_index_del(struct size_index *x, uint32_t start, uint32_t size);
/*
 * The free block (@start, @size), which is in the index, becomes (@nstart,
 * @nsize) (split or merged); needs flex_size_index_reserve() for @nsize.
 */
void flex_size_index_move(struct size_index *x, uint32_t start, uint32_t size, uint32_t nstart,
			  uint32_t nsize);
/*
 * The best fit for @g granules: the smallest block of at least @g, the
 * lowest start among that size. Return: false if none.
 */
bool flex_size_index_best(const struct size_index *x, uint32_t g, uint32_t *start,
			  uint32_t *size);

/*
 * Check that the bins, the bitmap and the tree agree (order in each bin,
 * counts, modes, bits) and that the index holds exactly the free blocks of
 * @by_offset (offset -> size). Return: NULL if sound, else what is wrong.
 */
const char *flex_size_index_check(const struct size_index *x, const struct bt *by_offset);

#endif /* FLEX_SIZE_INDEX_H */
