/* SPDX-License-Identifier: GPL-2.0 */
/*
 * flex/tiling.h - kernel signatures, tensor arguments and tiled launches.
 *
 * A kernel is compiled for fixed tile shapes (struct flex_kernel_sig). A
 * launch passes tensors (struct flex_tensor) that may be larger: every
 * dimension a whole multiple of the tile along a tiling axis. The
 * Program Execution Pipeline RFC's "Tiled Execution" then reuses the one
 * binary once per tile, with per-tile byte offsets
 *
 *     offset_i = base + i * stride_along_dim * tile * elem_size
 *
 * summed over the tiled dimensions of each argument. This file works out
 * the tiling (flex_tiling_plan()) and each iteration's tile indices and
 * offsets (flex_tiling_iter()); FlexStream's launch (flex/stream.h) walks
 * the iterations and corrects the program for each.
 *
 * Tiling is nested over any number of axes (a matmul tiles m, n and k).
 * Axes are ordered outermost first with reduction axes (k of a matmul)
 * innermost, so all steps of one reduction run back to back on the same
 * output tile: the first of them overwrites it, the others accumulate
 * (first_reduction, and the correction slot kind "accumulate").
 *
 * All functions are pure (no global state, no allocation): any thread may
 * call them at any time on data it does not modify concurrently.
 */
#ifndef FLEX_TILING_H
#define FLEX_TILING_H

#include <stddef.h>
#include <stdint.h>

#include <flex/allocator.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FLEX_MAX_DIMS		8	/* as many as a PyTorch backend passes (Since: 1.0; was 4) */
#define FLEX_KERNEL_MAX_ARGS	16
#define FLEX_KERNEL_MAX_AXES	8

/*
 * enum flex_dtype - element types: every type PyTorch stores in whole
 * bytes, numbered as c10::ScalarType, so that a PyTorch backend passes
 * tensor.scalar_type() as it is. (Since: 1.0; 0.1 had int32 = 0 and
 * int8 = 1 only.)
 *
 * libflex needs only the element size (flex_dtype_size()): it checks
 * shapes, strides and spans, tiles, and moves bytes. What a program
 * computes on is the device's and the compiler's business (FLEX_DT_* in
 * <linux/flex_isa.h>, today integer only): a kernel signature names the
 * dtype each argument must have, and a launch checks the tensors against
 * it. The quantized and bits types keep their numbers and sizes; the
 * sub-byte types (uint1 .. uint7, int1 .. int7) have no element size and
 * are not listed.
 */
enum flex_dtype {
	FLEX_DTYPE_UINT8 = 0,
	FLEX_DTYPE_INT8 = 1,
	FLEX_DTYPE_INT16 = 2,
	FLEX_DTYPE_INT32 = 3,
	FLEX_DTYPE_INT64 = 4,
	FLEX_DTYPE_FLOAT16 = 5,
	FLEX_DTYPE_FLOAT32 = 6,
	FLEX_DTYPE_FLOAT64 = 7,
	FLEX_DTYPE_COMPLEX32 = 8,
	FLEX_DTYPE_COMPLEX64 = 9,
	FLEX_DTYPE_COMPLEX128 = 10,
	FLEX_DTYPE_BOOL = 11,
	FLEX_DTYPE_QINT8 = 12,
	FLEX_DTYPE_QUINT8 = 13,
	FLEX_DTYPE_QINT32 = 14,
	FLEX_DTYPE_BFLOAT16 = 15,
	FLEX_DTYPE_QUINT4X2 = 16,
	FLEX_DTYPE_QUINT2X4 = 17,
	FLEX_DTYPE_BITS1X8 = 18,
	FLEX_DTYPE_BITS2X4 = 19,
	FLEX_DTYPE_BITS4X2 = 20,
	FLEX_DTYPE_BITS8 = 21,
	FLEX_DTYPE_BITS16 = 22,
	FLEX_DTYPE_FLOAT8_E5M2 = 23,
	FLEX_DTYPE_FLOAT8_E4M3FN = 24,
	FLEX_DTYPE_FLOAT8_E5M2FNUZ = 25,
	FLEX_DTYPE_FLOAT8_E4M3FNUZ = 26,
	FLEX_DTYPE_UINT16 = 27,
	FLEX_DTYPE_UINT32 = 28,
	FLEX_DTYPE_UINT64 = 29,
	FLEX_DTYPE_FLOAT8_E8M0FNU = 44,
	FLEX_DTYPE_FLOAT4_E2M1FN_X2 = 45,
};

/**
 * flex_dtype_size() - bytes per element of @dt; 0 for a value that is not
 * an enum flex_dtype.
 *
 * Since: 1.0
 */
size_t flex_dtype_size(enum flex_dtype dt);

/**
 * flex_dtype_name() - PyTorch's name without "torch." ("float32",
 * "bfloat16", "int8", ...), or NULL for an unknown type.
 *
 * Since: 1.0
 */
const char *flex_dtype_name(enum flex_dtype dt);

/**
 * flex_dtype_from_name() - parse a name flex_dtype_name() gives, or one of
 * PyTorch's aliases ("float", "half", "double", "long", "int", "short",
 * "cfloat", "cdouble", "chalf"), into *@out. A leading "torch." is
 * accepted. (Since: 1.0 for every name but "int32" and "int8".)
 * Return: 0, or -EINVAL for any other name (NULL included).
 */
int flex_dtype_from_name(const char *name, enum flex_dtype *out);

/*
 * struct flex_tensor - what the caller passes to a launch, per argument
 * (the RFC's SpyreTensor, minus layout).
 * @index:	the allocation holding the tensor.
 * @dtype:	element type; only its size matters to the library.
 * @ndim:	1 .. FLEX_MAX_DIMS.
 * @shape:	elements along each dimension (first @ndim entries).
 * @strides:	in elements, as PyTorch; the innermost must be 1.
 * @byte_offset: where element 0 is in the allocation, in bytes: 0 for a
 *		tensor that starts its storage, a view's storage offset times
 *		the element size for x[1:], narrow(), chunk(), a column
 *		slice. A multiple of the element size; the launch checks that
 *		the view (offset + span) lies inside the allocation and adds
 *		it to the tensor's address. Since: 1.0.
 *
 * @byte_offset is last so that positional initializers of 0.1 still
 * compile (and mean offset 0).
 */
struct flex_tensor {
	flex_alloc_index_t index;
	enum flex_dtype dtype;
	uint32_t ndim;
	uint64_t shape[FLEX_MAX_DIMS];
	uint64_t strides[FLEX_MAX_DIMS];
	uint64_t byte_offset;
};

/*
 * struct flex_kernel_arg - what the kernel was compiled for, per argument.
 * @name:	for messages ("A", "B", ...), NUL-terminated.
 * @dtype, @ndim: must match the tensor's.
 * @shape:	the compiled tile shape, every entry >= 1.
 * @fixed_strides: 1: the tensor's strides must equal @strides exactly;
 *		0: any row-major strides (the kernel takes its leading
 *		dimensions from correction slots).
 * @strides:	see @fixed_strides.
 * @axis:	tiling axis of each dimension (an index into the signature's
 *		axes), or -1 when the dimension is never tiled (the tensor
 *		must then have exactly the tile's extent there).
 * @is_output:	1 for an argument the kernel writes.
 */
struct flex_kernel_arg {
	char name[32];
	enum flex_dtype dtype;
	uint32_t ndim;
	uint64_t shape[FLEX_MAX_DIMS];
	uint32_t fixed_strides;
	uint64_t strides[FLEX_MAX_DIMS];
	int8_t axis[FLEX_MAX_DIMS];
	uint32_t is_output;
};

/*
 * struct flex_kernel_sig - a kernel's arguments and tiling axes.
 * @n_args:	arguments, 1 .. FLEX_KERNEL_MAX_ARGS.
 * @n_axes:	axes, 0 .. FLEX_KERNEL_MAX_AXES.
 * @axis_name:	e.g. "m", "n", "k" (for messages and manifests).
 * @axis_is_reduction: 1 for an axis summed over (k of a matmul).
 */
struct flex_kernel_sig {
	uint32_t n_args;
	struct flex_kernel_arg args[FLEX_KERNEL_MAX_ARGS];
	uint32_t n_axes;
	char axis_name[FLEX_KERNEL_MAX_AXES][16];
	uint8_t axis_is_reduction[FLEX_KERNEL_MAX_AXES];
};

/*
 * struct flex_tiling - the tiling of one launch.
 * @n_axes:	as the signature's.
 * @count:	tiles along each axis (1 = not tiled).
 * @n_iters:	the product of @count (1 when nothing is tiled).
 * @order:	the axes, outermost first: non-reduction axes in index
 *		order, then reduction axes in index order. The last one
 *		varies fastest.
 */
struct flex_tiling {
	uint32_t n_axes;
	uint64_t count[FLEX_KERNEL_MAX_AXES];
	uint64_t n_iters;
	uint32_t order[FLEX_KERNEL_MAX_AXES];
};

/**
 * flex_sig_validate() - check a signature on its own: counts within the
 * limits, names NUL-terminated, dtypes known, ndim 1 .. FLEX_MAX_DIMS,
 * tile shapes >= 1, axis indices below n_axes, fixed strides row-major
 * with innermost 1, element counts and byte spans fitting in 64 bits.
 *
 * Return: 0 or -EINVAL; flex_last_error() names the argument and the field.
 *
 * Since: 1.0
 */
int flex_sig_validate(const struct flex_kernel_sig *sig);

/**
 * flex_tiling_plan() - check every argument against the signature and work
 * out the tiling.
 * @sig:	the kernel's signature (checked with flex_sig_validate()).
 * @args:	@n_args tensors, in the signature's order.
 * @allow_tiled: 0 to refuse any tensor that differs from its tile (the
 *		RFC's allow_tiled_launch = false).
 * @out:	the tiling; written only on success.
 *
 * A tensor dimension may differ from the tile only along a tiling axis;
 * then it must be a non-zero multiple of the tile, and every argument
 * sharing that axis must come to the same tile count. Strides: innermost
 * 1, each outer stride at least the extent of the row below it (rows do
 * not overlap), equal to the signature's when it has fixed strides. Every
 * shape x stride x element size product must fit in 64 bits. A byte
 * offset must be a multiple of the element size (whether the view fits
 * its allocation is the launch's check: this function knows no
 * allocation).
 *
 * Return: 0; -EINVAL for a bad signature, a count, dtype or ndim mismatch,
 * a byte offset that is not a multiple of the element size,
 * a shape that is smaller than or not a multiple of the tile or differs
 * along a never-tiled dimension, bad strides, two different tile counts
 * for one axis, a size overflowing 64 bits; -EDOM when a shape differs
 * from the tile and @allow_tiled is 0. flex_last_error() names the
 * argument (by index and name) and the dimension, e.g. "arg 1 (B) dim 0:
 * 100 is not a multiple of the tile 64".
 *
 * Since: 1.0
 */
int flex_tiling_plan(const struct flex_kernel_sig *sig, const struct flex_tensor *args,
		     uint32_t n_args, int allow_tiled, struct flex_tiling *out);

/**
 * flex_tiling_iter() - one iteration of a tiling.
 * @t, @sig, @args, @n_args: as planned by a successful flex_tiling_plan().
 * @iter:	0 .. @t->n_iters - 1; the axes in @t->order, the last
 *		varying fastest.
 * @tile_idx:	receives the tile index along every axis.
 * @byte_offset: receives, for every argument i, the byte offset of its
 *		tile from its element 0 (not counting the tensor's own
 *		byte_offset, which the launch adds): the sum over its tiled dimensions d
 *		of tile_idx[axis] * strides[d] * tile_shape[d] * elem_size.
 *		(Cannot overflow: flex_tiling_plan() bounded it by the span.)
 * @first_reduction: if not NULL, receives 1 when every reduction axis is
 *		at tile 0 (the step that overwrites rather than accumulates).
 *
 * An @iter past the end is taken modulo n_iters.
 *
 * Since: 1.0
 */
void flex_tiling_iter(const struct flex_tiling *t, const struct flex_kernel_sig *sig,
		      const struct flex_tensor *args, uint32_t n_args, uint64_t iter,
		      uint64_t tile_idx[FLEX_KERNEL_MAX_AXES], uint64_t byte_offset[],
		      int *first_reduction);

/**
 * flex_tensor_span_bytes() - bytes from a tensor's first element to just
 * past its last: ((shape[d] - 1) * strides[d] summed, + 1) * elem size;
 * 0 for an empty tensor.
 * Return: 0, or -EOVERFLOW (or -EINVAL for a bad dtype/ndim).
 *
 * Since: 1.0
 */
int flex_tensor_span_bytes(const struct flex_tensor *t, uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* FLEX_TILING_H */
