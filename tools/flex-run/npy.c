// SPDX-License-Identifier: GPL-2.0
/*
 * NumPy .npy files: see npy.h for what is accepted and why by hand.
 */
#include <ctype.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "npy.h"
#include "tool.h"

static const char npy_magic[6] = { '\x93', 'N', 'U', 'M', 'P', 'Y' };

uint64_t npy_elements(const struct npy_array *a)
{
	uint64_t n = 1;

	for (uint32_t d = 0; d < a->ndim; d++)
		n *= a->shape[d];
	return n;
}

void npy_free(struct npy_array *a)
{
	free(a->data);
	a->data = NULL;
}

/* A tiny parser for the header's Python dict literal. */
struct hp {
	const char *p, *end;
};

static void skip_ws(struct hp *h)
{
	while (h->p < h->end && isspace((unsigned char)*h->p))
		h->p++;
}

static int eat(struct hp *h, char c)
{
	skip_ws(h);
	if (h->p < h->end && *h->p == c) {
		h->p++;
		return 1;
	}
	return 0;
}

/* A '...' or "..." string without escapes, into @out (at most @max-1 bytes). */
static int pstring(struct hp *h, char *out, size_t max)
{
	char q;
	size_t n = 0;

	skip_ws(h);
	if (h->p >= h->end || (*h->p != '\'' && *h->p != '"'))
		return -1;
	q = *h->p++;
	while (h->p < h->end && *h->p != q) {
		if (*h->p == '\\' || n + 1 >= max)
			return -1;
		out[n++] = *h->p++;
	}
	if (h->p >= h->end)
		return -1;
	h->p++;
	out[n] = 0;
	return 0;
}

static int pword(struct hp *h, const char *w)
{
	size_t n = strlen(w);

	skip_ws(h);
	if ((size_t)(h->end - h->p) >= n && !memcmp(h->p, w, n)) {
		h->p += n;
		return 1;
	}
	return 0;
}

/* (a, b, ...) of non-negative integers; () is a scalar; (a,) one dim. */
static int ptuple(struct hp *h, uint64_t *shape, uint32_t *ndim, int *too_many, int *huge)
{
	*ndim = 0;
	if (!eat(h, '('))
		return -1;
	for (;;) {
		uint64_t v = 0;
		int digits = 0;

		if (eat(h, ')'))
			return 0;
		skip_ws(h);
		while (h->p < h->end && isdigit((unsigned char)*h->p)) {
			if (__builtin_mul_overflow(v, 10, &v) ||
			    __builtin_add_overflow(v, (uint64_t)(*h->p - '0'), &v))
				*huge = 1;
			h->p++;
			digits++;
		}
		if (!digits)
			return -1;
		if (*ndim < FLEX_MAX_DIMS)
			shape[*ndim] = v;
		else
			*too_many = 1;
		(*ndim)++;
		if (eat(h, ','))
			continue;
		if (eat(h, ')'))
			return 0;
		return -1;
	}
}

/* The .npy dtypes flex-run moves: little-endian, as NumPy writes them on x86. */
static const struct {
	const char *descr;
	enum flex_dtype dtype;
} npy_types[] = {
	{ "<i4", FLEX_DTYPE_INT32 },
	{ "|i1", FLEX_DTYPE_INT8 },
	{ "<i1", FLEX_DTYPE_INT8 },
	{ "i1", FLEX_DTYPE_INT8 },
	{ "<f4", FLEX_DTYPE_FLOAT32 },
	{ "<f2", FLEX_DTYPE_FLOAT16 },
};

static int npy_dtype_of(const char *descr, enum flex_dtype *out)
{
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (!strcmp(descr, npy_types[i].descr)) {
			*out = npy_types[i].dtype;
			return 0;
		}
	return -1;
}

/* The descr written for @dt (the first of the table's), or NULL. */
static const char *npy_descr_of(enum flex_dtype dt)
{
	for (size_t i = 0; i < sizeof(npy_types) / sizeof(npy_types[0]); i++)
		if (npy_types[i].dtype == dt)
			return npy_types[i].descr;
	return NULL;
}

/* File order (little-endian) to host order, in place. */
static void npy_from_little_endian(void *data, uint64_t elems, size_t esize)
{
	unsigned char *p = data, t;

	if (BYTE_ORDER == LITTLE_ENDIAN || esize == 1)
		return;
	for (uint64_t i = 0; i < elems; i++, p += esize)
		for (size_t b = 0; b < esize / 2; b++) {
			t = p[b];
			p[b] = p[esize - 1 - b];
			p[esize - 1 - b] = t;
		}
}

int npy_read(const char *path, struct npy_array *out, char *err, size_t errlen)
{
	unsigned char pre[12];
	char *hdr = NULL, descr[16] = "", key[32];
	uint64_t hlen, elems = 1, nbytes, data_off;
	int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0, too_many = 0, huge = 0;
	struct npy_array a;
	struct stat st;
	struct hp h;
	size_t esize, pre_len;
	FILE *f;
	int ret;

	memset(&a, 0, sizeof(a));
	f = fopen(path, "rb");
	if (!f)
		return tool_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st)) {
		ret = -errno;
		fclose(f);
		return tool_fail(err, errlen, ret, "%s: %s", path, strerror(-ret));
	}
	if (fread(pre, 1, 10, f) != 10 || memcmp(pre, npy_magic, 6)) {
		fclose(f);
		return tool_fail(err, errlen, -EINVAL, "%s: not a .npy file (bad magic)", path);
	}
	if (pre[6] == 1 && pre[7] == 0) {
		hlen = pre[8] | (uint64_t)pre[9] << 8;
		pre_len = 10;
	} else if ((pre[6] == 2 || pre[6] == 3) && pre[7] == 0) {
		if (fread(pre + 10, 1, 2, f) != 2) {
			fclose(f);
			return tool_fail(err, errlen, -EINVAL, "%s: truncated header", path);
		}
		hlen = pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
		       (uint64_t)pre[11] << 24;
		pre_len = 12;
	} else {
		fclose(f);
		return tool_fail(err, errlen, -EINVAL, "%s: unsupported .npy version %u.%u", path, pre[6],
				 pre[7]);
	}
	if (hlen > NPY_MAX_HEADER) {
		fclose(f);
		return tool_fail(err, errlen, -EINVAL, "%s: header of %llu bytes, above %u", path,
				 (unsigned long long)hlen, NPY_MAX_HEADER);
	}
	hdr = malloc(hlen + 1);
	if (!hdr) {
		fclose(f);
		return tool_fail(err, errlen, -ENOMEM, "%s: out of memory", path);
	}
	if (fread(hdr, 1, hlen, f) != hlen) {
		ret = tool_fail(err, errlen, -EINVAL, "%s: truncated header", path);
		goto out;
	}
	hdr[hlen] = 0;

	h.p = hdr;
	h.end = hdr + hlen;
	if (!eat(&h, '{'))
		goto bad_header;
	while (!eat(&h, '}')) {
		if (pstring(&h, key, sizeof(key)) || !eat(&h, ':'))
			goto bad_header;
		if (!strcmp(key, "descr") && !have_descr) {
			if (pstring(&h, descr, sizeof(descr)))
				goto bad_header;
			have_descr = 1;
		} else if (!strcmp(key, "fortran_order") && !have_order) {
			if (pword(&h, "True"))
				fortran = 1;
			else if (!pword(&h, "False"))
				goto bad_header;
			have_order = 1;
		} else if (!strcmp(key, "shape") && !have_shape) {
			if (ptuple(&h, a.shape, &a.ndim, &too_many, &huge))
				goto bad_header;
			have_shape = 1;
		} else {
			ret = tool_fail(err, errlen, -EINVAL, "%s: unexpected header key '%s'", path, key);
			goto out;
		}
		if (!eat(&h, ',')) {
			if (!eat(&h, '}'))
				goto bad_header;
			break;
		}
	}
	skip_ws(&h);
	if (h.p != h.end || !have_descr || !have_order || !have_shape)
		goto bad_header;

	if (npy_dtype_of(descr, &a.dtype)) {
		ret = tool_fail(err, errlen, -EOPNOTSUPP,
				"%s: dtype '%s' not supported (int32 '<i4', int8 '|i1', float32 '<f4', float16 '<f2')",
				path, descr);
		goto out;
	}
	if (fortran) {
		ret = tool_fail(err, errlen, -EOPNOTSUPP, "%s: Fortran order not supported (C order only)",
				path);
		goto out;
	}
	if (huge) {
		ret = tool_fail(err, errlen, -EFBIG, "%s: a dimension does not fit in 64 bits", path);
		goto out;
	}
	if (too_many || a.ndim == 0) {
		ret = tool_fail(err, errlen, -EOPNOTSUPP, "%s: %u dimensions, supported 1..%d", path,
				a.ndim, FLEX_MAX_DIMS);
		goto out;
	}
	esize = flex_dtype_size(a.dtype);
	for (uint32_t d = 0; d < a.ndim; d++)
		if (__builtin_mul_overflow(elems, a.shape[d], &elems)) {
			ret = tool_fail(err, errlen, -EFBIG, "%s: shape overflows 64 bits", path);
			goto out;
		}
	if (__builtin_mul_overflow(elems, esize, &nbytes) || nbytes > SIZE_MAX / 2) {
		ret = tool_fail(err, errlen, -EFBIG, "%s: data size overflows", path);
		goto out;
	}
	data_off = pre_len + hlen;
	if ((uint64_t)st.st_size < data_off + nbytes) {
		ret = tool_fail(err, errlen, -EINVAL, "%s: truncated data: %llu bytes for %llu elements, the file has %llu",
				path, (unsigned long long)nbytes, (unsigned long long)elems,
				(unsigned long long)((uint64_t)st.st_size - data_off));
		goto out;
	}
	if ((uint64_t)st.st_size > data_off + nbytes) {
		ret = tool_fail(err, errlen, -EINVAL, "%s: %llu bytes after the data", path,
				(unsigned long long)((uint64_t)st.st_size - data_off - nbytes));
		goto out;
	}
	a.nbytes = (size_t)nbytes;
	a.data = malloc(a.nbytes ? a.nbytes : 1);
	if (!a.data) {
		ret = tool_fail(err, errlen, -ENOMEM, "%s: out of memory for %zu bytes", path, a.nbytes);
		goto out;
	}
	if (fread(a.data, 1, a.nbytes, f) != a.nbytes) {
		ret = tool_fail(err, errlen, -EIO, "%s: read error", path);
		goto out;
	}
	npy_from_little_endian(a.data, elems, esize);
	*out = a;
	a.data = NULL;
	ret = 0;
	goto out;

bad_header:
	ret = tool_fail(err, errlen, -EINVAL, "%s: malformed header: %.*s", path, (int)(hlen < 120 ? hlen : 120),
			hdr);
out:
	free(a.data);
	free(hdr);
	fclose(f);
	return ret;
}

int npy_write(const char *path, const struct npy_array *a, char *err, size_t errlen)
{
	char dict[256];
	size_t n, total, pad;
	unsigned char pre[10];
	FILE *f;
	int ret = 0;

	if (a->ndim < 1 || a->ndim > FLEX_MAX_DIMS || !npy_descr_of(a->dtype) ||
	    a->nbytes != npy_elements(a) * flex_dtype_size(a->dtype))
		return tool_fail(err, errlen, -EINVAL, "%s: bad array", path);
	n = (size_t)snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': (",
			     npy_descr_of(a->dtype));
	for (uint32_t d = 0; d < a->ndim; d++)
		n += (size_t)snprintf(dict + n, sizeof(dict) - n, "%llu,%s",
				      (unsigned long long)a->shape[d],
				      d + 1 < a->ndim ? " " : "");
	/* (3,) keeps its comma; (3, 4,) is fine Python too but numpy writes (3, 4). */
	if (a->ndim > 1)
		n--;
	n += (size_t)snprintf(dict + n, sizeof(dict) - n, "), }");
	/* Pad with spaces so that magic + header ends on a 64-byte boundary. */
	total = 10 + n + 1;
	pad = (64 - total % 64) % 64;
	memcpy(pre, npy_magic, 6);
	pre[6] = 1;
	pre[7] = 0;
	pre[8] = (unsigned char)((n + pad + 1) & 0xff);
	pre[9] = (unsigned char)((n + pad + 1) >> 8);
	f = fopen(path, "wb");
	if (!f)
		return tool_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	fwrite(pre, 1, 10, f);
	fwrite(dict, 1, n, f);
	for (size_t i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	if (BYTE_ORDER != LITTLE_ENDIAN && flex_dtype_size(a->dtype) > 1) {
		size_t es = flex_dtype_size(a->dtype);

		for (uint64_t i = 0; i < a->nbytes / es; i++)
			for (size_t b = es; b-- > 0;)
				fputc(((const unsigned char *)a->data)[i * es + b], f);
	} else {
		fwrite(a->data, 1, a->nbytes, f);
	}
	if (ferror(f))
		ret = tool_fail(err, errlen, -EIO, "%s: write error", path);
	if (fclose(f) && !ret)
		ret = tool_fail(err, errlen, -errno, "%s: %s", path, strerror(errno));
	return ret;
}
