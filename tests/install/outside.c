// SPDX-License-Identifier: GPL-2.0
/*
 * A program outside the tree: tests/install/check-install copies it to a
 * scratch directory and builds it against the installed libflex with
 * nothing but `pkg-config --cflags --libs libflex`, shared and static. It
 * needs no device: a FlexAllocator on the in-memory region source
 * allocates, resolves and frees a block, and the manifest parser (which
 * needs json-c: a static link fails without libflex.pc's Requires.private)
 * refuses a missing plan. Prints one line; on a failure, says which call
 * failed and exits 1.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <flex/allocator.h>
#include <flex/manifest.h>

static void check(int ret, int want, const char *call)
{
	if (ret == want)
		return;
	fprintf(stderr, "outside: %s returned %d, expected %d: %s\n", call, ret, want,
		flex_last_error());
	exit(1);
}

int main(void)
{
	struct flex_region_source *src;
	struct flex_manifest *m;
	struct flex_alloc *a;
	flex_alloc_index_t index;
	struct flex_vaddr va, gone;
	uint64_t size;

	check(flex_region_source_new_memory(1ULL << 30, 8, &src), 0,
	      "flex_region_source_new_memory");
	check(flex_alloc_new(src, NULL, &a), 0, "flex_alloc_new");
	flex_region_source_unref(src);
	check(flex_alloc_block_alloc(a, 1000, FLEX_ALLOC_TENSOR, &index), 0, "flex_alloc_block_alloc");
	check(flex_alloc_block_resolve(a, index, &va, &size), 0, "flex_alloc_block_resolve");
	if (size != 1024) {
		fprintf(stderr, "outside: a 1000-byte block is %llu bytes, expected 1024\n",
			(unsigned long long)size);
		return 1;
	}
	check(flex_alloc_block_free(a, index), 0, "flex_alloc_block_free");
	check(flex_alloc_block_resolve(a, index, &gone, NULL), -ENOENT,
	      "flex_alloc_block_resolve after free");
	flex_alloc_destroy(a);
	check(flex_manifest_new_from_file("no-such-plan.json", &m), -ENOENT, "flex_manifest_new_from_file");
	printf("outside: allocated a %llu-byte block at region %llu + %llu, freed it\n",
	       (unsigned long long)size, (unsigned long long)va.region_id,
	       (unsigned long long)va.offset);
	return 0;
}
