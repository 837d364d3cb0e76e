// SPDX-License-Identifier: GPL-2.0
/*
 * torch-flex: flex as a PyTorch 1.13 device (PrivateUse1, "privateuseone").
 *
 * The pieces, one file each:
 *   device.cpp     the devices (one per flex function), their contexts,
 *                  stream pools, the current device and stream, the
 *                  DeviceGuardImpl and events.
 *   allocator.cpp  the at::Allocator over FlexAllocator: a tensor's storage
 *                  is one allocation; freed in stream order.
 *   kernels.cpp    the standard kernels, loaded once per tile shape, and
 *                  the tiled launches (partial tiles as launches of their
 *                  own kernel).
 *   copy.cpp       copies host <-> device and device <-> device of any
 *                  strides, fills.
 *   ops.cpp        the aten operators registered for PrivateUse1, and the
 *                  CPU fallback for the others.
 *   module.cpp     the Python bindings (torch_flex._C).
 *
 * A storage's data pointer is its AllocationIndex (never 0, never
 * dereferenced): a tensor is (index, storage_offset, sizes, strides), as
 * libflex's struct flex_tensor. Everything here calls libflex's public API
 * only; every libflex failure becomes a c10::Error carrying
 * flex_last_error().
 */
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Stream.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include <flex/libflex.h>

namespace torch_flex {

constexpr c10::DeviceType kFlex = c10::DeviceType::PrivateUse1;

/* Throw a c10::Error for a libflex failure: what was being done, and libflex's message. */
[[noreturn]] void fail(int err, const std::string &what);
inline void check(int err, const std::string &what)
{
	if (err)
		fail(err, what);
}

/* ---- device.cpp ---- */

/* Streams of a pool per priority class; ids: 0 the default stream, then the pools. */
constexpr int kPoolSize = 4;
constexpr int kPriorities = 3; /* high (-1), normal (0), low (1): CUDA's order */

/* A compiled kernel, loaded on one device (kernels.cpp). */
struct Kernel {
	struct flex_kernel *kern = nullptr;
	flex_alloc_index_t prog = FLEX_ALLOC_INDEX_NONE;
	struct flex_job *job = nullptr;     /* as compiled */
	struct flex_job *job_acc = nullptr; /* matmul: every step accumulates into C */
};

/* One flex function (PF or VF): a PyTorch device index. */
struct Device {
	int index = 0;
	std::string node;
	struct flex_context *ctx = nullptr; /* opened on first use */
	struct flex_alloc *alloc = nullptr;
	/* Protects ctx (its opening), streams, pool_next and kernels. */
	std::mutex lock;
	std::vector<struct flex_stream *> streams; /* by StreamId; [0] the context's */
	int pool_next[kPriorities] = {};
	std::map<std::tuple<int, int, uint64_t, uint64_t, uint64_t>, Kernel> kernels;
	/* Ones of each dtype, for broadcasts by matmul (kernels.cpp); under lock. */
	std::map<int, std::pair<at::Tensor, int64_t>> ones;
	/* Outgrown ones: work queued on any stream may still read them. */
	std::vector<at::Tensor> ones_retired;
};

int device_count();
/* Device @index, opened (context, allocator, default stream) on first use. */
Device &device(int index);
/* The device of a flex tensor; checks it is one. */
Device &device_for(const at::Tensor &t);
/* The names of the nodes, by index (no device opened). */
std::vector<std::string> device_nodes();
bool device_opened(int index);

int current_device();
void set_current_device(int index);

/* The stream id for @priority (-1, 0, 1) from the pool, round robin. */
c10::StreamId pool_stream(Device &d, int priority);
struct flex_stream *stream_of(Device &d, c10::StreamId id);
c10::Stream current_stream(int index);
void set_current_stream(const c10::Stream &s);
/* The current stream of @d, as libflex's. */
struct flex_stream *current_flex_stream(Device &d);
int stream_priority(c10::StreamId id);
/* Synchronize every stream created on @d. */
void synchronize_device(Device &d);

/* ---- allocator.cpp ---- */

at::Allocator *allocator();
/* The allocation behind a flex tensor's storage. */
inline flex_alloc_index_t index_of(const at::Tensor &t)
{
	return static_cast<flex_alloc_index_t>(reinterpret_cast<uintptr_t>(t.storage().data()));
}
inline uint64_t byte_offset_of(const at::Tensor &t)
{
	return static_cast<uint64_t>(t.storage_offset()) * t.element_size();
}
/* t.record_stream(s): the block is also used by work on @s. */
void record_stream(const at::Tensor &t, const c10::Stream &s);

/* ---- kernels.cpp ---- */

enum Op { OP_MATMUL, OP_ADD, OP_MUL, OP_RELU };

/* The dtypes the device computes add, mul, relu and float/int32 matmul in. */
bool computes(at::ScalarType t);

/*
 * A matrix of a launch: rows x cols elements of an allocation, row r at
 * byte_offset + r * ld * element size, its elements contiguous. ld 0: every
 * row is the same (a broadcast), which only a copy or a matmul by ones
 * turns into a launchable matrix.
 */
struct Mat {
	flex_alloc_index_t index;
	uint64_t byte_offset;
	int64_t rows, cols, ld;
};
/*
 * Tensors of one shape as Mats of one rows x cols split: dims [0, p) the
 * rows, [p, n) the columns, for the smallest p where every tensor's columns
 * are contiguous and its rows one stride apart (ld >= cols, or 0 where
 * @row_broadcast allows it). False if there is no such p.
 */
bool plan_mats(const std::vector<at::Tensor> &ts, std::vector<Mat> &out, bool row_broadcast);

/* out = a (op) b, or out = relu(a) (b unused), all rows x cols, on the current stream. */
void launch_elementwise(Device &d, Op op, at::ScalarType dt, const Mat &out, const Mat &a,
			const Mat *b);
/* C (+)= A . B; with @accumulate every step adds to what C holds. */
void launch_matmul(Device &d, at::ScalarType dt, const Mat &c, const Mat &a, const Mat &b,
		   int64_t k, bool accumulate);
/* A contiguous rows x cols tensor of ones of @dt on @d (cached, grown as needed). */
Mat ones(Device &d, at::ScalarType dt, int64_t rows);

/* ---- copy.cpp ---- */

/* dst = src, both flex tensors of one device, same dtype and shape, any strides. */
void copy_device(const at::Tensor &dst, const at::Tensor &src);
/* @a and @b share bytes of one allocation (by their spans). */
bool overlaps(const at::Tensor &a, const at::Tensor &b);
/* A contiguous device copy of a flex tensor, or @t itself if it is addressable as a Mat. */
at::Tensor addressable(const at::Tensor &t);
/* The bytes of a flex tensor to a new CPU tensor of the same sizes and strides. */
at::Tensor to_cpu(const at::Tensor &t);
/* A flex tensor @dst = CPU tensor @src (broadcast and dtype as copy_). */
void from_cpu(const at::Tensor &dst, const at::Tensor &src);
void fill_value(const at::Tensor &dst, const c10::Scalar &value);

/* ---- ops.cpp ---- */

/* Warn once per operator name that it ran on the CPU. */
void warn_fallback(const std::string &op);

} // namespace torch_flex
