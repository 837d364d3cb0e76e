// SPDX-License-Identifier: GPL-2.0
/* Region sources: the reference-counted wrapper around a callback table. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "region_source_internal.h"

FLEX_EXPORT int flex_region_source_new(const struct flex_region_source_ops *ops, void *user,
				       unsigned int table_entries,
				       struct flex_region_source **out)
{
	struct flex_region_source *src;

	if (!ops || !ops->acquire || !ops->release || !out)
		return flex_error_set(-EINVAL, "flex_region_source_new: acquire and release callbacks are required");
	src = calloc(1, sizeof(*src));
	if (!src)
		return flex_error_set(-ENOMEM, "flex_region_source_new: out of host memory");
	src->ops = *ops;
	src->user = user;
	src->table_entries = table_entries;
	atomic_init(&src->refs, 1);
	*out = src;
	return 0;
}

FLEX_EXPORT struct flex_region_source *flex_region_source_ref(struct flex_region_source *src)
{
	atomic_fetch_add(&src->refs, 1);
	return src;
}

FLEX_EXPORT void flex_region_source_unref(struct flex_region_source *src)
{
	if (!src || atomic_fetch_sub(&src->refs, 1) != 1)
		return;
	if (src->ops.destroy)
		src->ops.destroy(src->user);
	free(src);
}

FLEX_EXPORT unsigned int flex_region_source_table_entries(const struct flex_region_source *src)
{
	return src->table_entries;
}

FLEX_EXPORT int flex_region_source_get_info(struct flex_region_source *src,
					    struct flex_region_source_info *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (src->ops.info) {
		err = src->ops.info(src->user, out);
		if (err > 0)
			err = -EIO;	/* a callback that broke the contract */
	} else {
		err = -EOPNOTSUPP;
	}
	out->table_entries = src->table_entries;
	if (!err && out->capacity && out->free > out->capacity)
		out->free = out->capacity;
	if (!err && out->largest_free > out->free)
		out->largest_free = out->free;
	return err;
}

FLEX_EXPORT int flex_region_source_acquire(struct flex_region_source *src, uint64_t size,
					   struct flex_region *out)
{
	int err;

	if (!size)
		return -EINVAL;
	err = src->ops.acquire(src->user, size, out);
	if (err > 0)
		err = -EIO;	/* a callback that broke the contract */
	if (!err && out->size < size) {
		src->ops.release(src->user, out);
		return -EINVAL;
	}
	return err;
}

FLEX_EXPORT int flex_region_source_release(struct flex_region_source *src,
					   const struct flex_region *region)
{
	int err = src->ops.release(src->user, region);

	return err > 0 ? -EIO : err;
}
