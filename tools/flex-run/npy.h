/* SPDX-License-Identifier: GPL-2.0 */
/*
 * npy.h - read and write NumPy .npy files (format versions 1.0, 2.0, 3.0)
 * holding int32 or int8 arrays of 1..FLEX_MAX_DIMS dimensions, C order.
 *
 * Written by hand: Debian 12 packages no C library for .npy (apt-cache
 * search npy / cnpy finds none), and the format is small: a magic, a
 * version, a header length and a Python dict literal
 * ({'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }), then the
 * raw little-endian data. Everything read is checked: the magic, the
 * version, the header's syntax, the dtype ('<i4', '|i1', '<i1', 'i1'
 * only), the order (C only), the shape (element and byte counts must fit
 * in 64 bits and match the file's size exactly).
 */
#ifndef FLEX_RUN_NPY_H
#define FLEX_RUN_NPY_H

#include <stddef.h>
#include <stdint.h>

#include <flex/tiling.h>

/* The largest header accepted (NumPy's own limit for v1 is 64 KiB). */
#define NPY_MAX_HEADER	(1U << 16)

struct npy_array {
	enum flex_dtype dtype;
	uint32_t ndim;
	uint64_t shape[FLEX_MAX_DIMS];
	void *data;		/* malloc()ed, C order, host byte order */
	size_t nbytes;
};

/*
 * npy_read() - read @path into @out. Return 0; -errno of open/read;
 * -EINVAL a malformed file (bad magic, version, header, truncated or
 * trailing data); -EOPNOTSUPP a valid file this reader does not take
 * (another dtype, Fortran order, 0 or more than FLEX_MAX_DIMS dims);
 * -EFBIG a shape too large; -ENOMEM. @err gets the path and the reason.
 */
int npy_read(const char *path, struct npy_array *out, char *err, size_t errlen);

/*
 * npy_write() - write @a to @path (format 1.0, header padded to 64 bytes).
 * Return 0, -EINVAL a bad array, or -errno of the write.
 */
int npy_write(const char *path, const struct npy_array *a, char *err, size_t errlen);

/* npy_elements() - product of the shape (the caller checked it fits). */
uint64_t npy_elements(const struct npy_array *a);

/* npy_free() - free @a's data. */
void npy_free(struct npy_array *a);

#endif /* FLEX_RUN_NPY_H */
