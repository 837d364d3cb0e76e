// SPDX-License-Identifier: GPL-2.0
/*
 * Tiled launches of libflex's standard kernels (flex_kernel_new_*()).
 *
 * A kernel is compiled for one tile shape; libflex's launch tiles a tensor
 * that is a whole multiple of the tile. A shape of any size is cut, per
 * axis, into a main part (a multiple of the tile) and a remainder, and each
 * part is launched with the kernel compiled for its tile: up to four
 * launches of an elementwise operation, eight of a matmul. A matmul's
 * remainder along k runs after its main part with a job whose every step
 * accumulates into C (the kernel's accumulate slot made the constant 1),
 * and so does a whole addmm after C was set to the bias. Kernels are
 * compiled and loaded (flex_context_load_program(), which waits for the
 * default stream) once per device, operation, dtype and tile shape, and
 * kept for the life of the device.
 *
 * Tiles: a matmul takes 64 x 256 (m, n) and all of k up to what one MATMUL
 * instruction may multiply (FLEX_ISA_MAX_MACS: k of 16384 at 64 x 256), so
 * that C is rounded to its type once, as PyTorch's CPU kernels round it;
 * an elementwise operation takes at most 64 Ki elements, rows of up to 4096.
 */
#include "torch_flex.h"

#include <algorithm>

namespace torch_flex {
namespace {

constexpr int64_t kTileM = 64, kTileN = 256;
constexpr int64_t kTileCols = 4096, kTileElems = 65536;

const char *op_name(Op op)
{
	switch (op) {
	case OP_MATMUL:
		return "matmul";
	case OP_ADD:
		return "add";
	case OP_MUL:
		return "mul";
	default:
		return "relu";
	}
}

void free_kernel(Kernel &k)
{
	flex_job_destroy(k.job);
	flex_job_destroy(k.job_acc);
	flex_kernel_destroy(k.kern);
}

/* The kernel for (@op, @dt, tile @a x @b [x @c]) on @d, loaded on first use. */
Kernel &kernel(Device &d, Op op, at::ScalarType dt, uint64_t a, uint64_t b, uint64_t c)
{
	std::lock_guard<std::mutex> g(d.lock);
	auto key = std::make_tuple(static_cast<int>(op), static_cast<int>(dt), a, b, c);
	auto it = d.kernels.find(key);

	if (it != d.kernels.end())
		return it->second;

	Kernel k;
	auto fdt = static_cast<enum flex_dtype>(dt);
	std::string what = std::string(op_name(op)) + " kernel for " + c10::toString(dt) +
			   " tile " + std::to_string(a) + "x" + std::to_string(b) +
			   (op == OP_MATMUL ? "x" + std::to_string(c) : "");
	int err;

	switch (op) {
	case OP_MATMUL:
		err = flex_kernel_new_matmul(fdt, a, b, c, &k.kern);
		break;
	case OP_ADD:
		err = flex_kernel_new_add(fdt, a, b, &k.kern);
		break;
	case OP_MUL:
		err = flex_kernel_new_mul(fdt, a, b, &k.kern);
		break;
	default:
		err = flex_kernel_new_relu(fdt, a, b, &k.kern);
	}
	check(err, "compiling the " + what);

	struct flex_step plan[3] = { flex_step_host_op(nullptr, nullptr),
				     flex_step_simple(FLEX_STEP_DMA_CORRECTION),
				     flex_step_simple(FLEX_STEP_COMPUTE) };
	err = flex_context_load_program(d.ctx, k.kern->binary, k.kern->binary_size, &k.prog);
	if (!err)
		err = flex_job_new_kernel(k.kern->name, k.prog, &k.kern->sig, k.kern->corr,
					  k.kern->n_corr, plan, 3, &k.job);
	if (!err && op == OP_MATMUL) {
		std::vector<struct flex_corr_slot> corr(k.kern->corr, k.kern->corr + k.kern->n_corr);

		for (auto &slot : corr)
			if (slot.kind == FLEX_CORR_ACCUMULATE) {
				slot.kind = FLEX_CORR_CONST;
				slot.value = 1;
			}
		err = flex_job_new_kernel(k.kern->name, k.prog, &k.kern->sig, corr.data(),
					  static_cast<uint32_t>(corr.size()), plan, 3, &k.job_acc);
	}
	if (err) {
		std::string msg = flex_last_error();

		if (k.prog != FLEX_ALLOC_INDEX_NONE)
			flex_alloc_block_free(d.alloc, k.prog);
		free_kernel(k);
		TORCH_CHECK(false, "flex: loading the ", what, " on ", d.node, ": ", msg);
	}
	return d.kernels.emplace(key, k).first->second;
}

/* A part of an axis: [start, start + len), launched with tiles of @tile. */
struct Part {
	int64_t start, len, tile;
};

/* An axis of @n cut into its main part (tiles of min(@n, @tile)) and the rest. */
std::vector<Part> parts(int64_t n, int64_t tile)
{
	std::vector<Part> v;
	int64_t t = std::min(n, tile), main = n / t * t;

	v.push_back({ 0, main, t });
	if (n > main)
		v.push_back({ main, n - main, n - main });
	return v;
}

/* Rows [r0, r0 + nr) and columns [c0, c0 + nc) of @m as a launch argument. */
struct flex_tensor sub(const Mat &m, at::ScalarType dt, int64_t r0, int64_t c0, int64_t nr,
		       int64_t nc)
{
	struct flex_tensor t = {};
	int64_t es = c10::elementSize(dt);

	t.index = m.index;
	t.dtype = static_cast<enum flex_dtype>(dt);
	t.ndim = 2;
	t.shape[0] = nr;
	t.shape[1] = nc;
	t.strides[0] = nr > 1 ? m.ld : nc;
	t.strides[1] = 1;
	t.byte_offset = m.byte_offset + (r0 * m.ld + c0) * es;
	return t;
}

void launch(Device &d, const Kernel &k, struct flex_job *job, struct flex_tensor *args,
	    uint32_t n)
{
	struct flex_stream *s = current_flex_stream(d);

	check(flex_stream_launch(s, job, args, n, 0),
	      std::string("launching ") + flex_job_name(job) + " on " + d.node);
}

} // namespace

bool computes(at::ScalarType t)
{
	return t == at::kFloat || t == at::kBFloat16 || t == at::kHalf || t == at::kInt;
}

void launch_elementwise(Device &d, Op op, at::ScalarType dt, const Mat &out, const Mat &a,
			const Mat *b)
{
	int64_t rows = out.rows, cols = out.cols;

	if (!rows || !cols)
		return;
	int64_t tc = std::min(cols, kTileCols), tr = std::min(rows, std::max<int64_t>(1, kTileElems / tc));

	for (const Part &rp : parts(rows, tr))
		for (const Part &cp : parts(cols, tc)) {
			Kernel &k = kernel(d, op, dt, rp.tile, cp.tile, 0);
			struct flex_tensor args[3];
			uint32_t n = 0;

			args[n++] = sub(a, dt, rp.start, cp.start, rp.len, cp.len);
			if (b)
				args[n++] = sub(*b, dt, rp.start, cp.start, rp.len, cp.len);
			args[n++] = sub(out, dt, rp.start, cp.start, rp.len, cp.len);
			launch(d, k, k.job, args, n);
		}
}

void launch_matmul(Device &d, at::ScalarType dt, const Mat &c, const Mat &a, const Mat &b,
		   int64_t k, bool accumulate)
{
	if (!c.rows || !c.cols || !k)
		return;
	for (const Part &mp : parts(c.rows, kTileM))
		for (const Part &np : parts(c.cols, kTileN)) {
			bool first = true;
			/* As long a k as one MATMUL takes: C is rounded once, at its end. */
			int64_t tk = std::min<int64_t>(FLEX_ISA_MAX_MACS / (mp.tile * np.tile),
						       FLEX_ISA_MAX_ELEMENTS / std::max(mp.tile, np.tile));

			for (const Part &kp : parts(k, tk)) {
				Kernel &kern = kernel(d, OP_MATMUL, dt, mp.tile, np.tile, kp.tile);
				struct flex_tensor args[3] = {
					sub(a, dt, mp.start, kp.start, mp.len, kp.len),
					sub(b, dt, kp.start, np.start, kp.len, np.len),
					sub(c, dt, mp.start, np.start, mp.len, np.len),
				};

				launch(d, kern, accumulate || !first ? kern.job_acc : kern.job, args, 3);
				first = false;
			}
		}
}

Mat ones(Device &d, at::ScalarType dt, int64_t rows)
{
	{
		std::lock_guard<std::mutex> g(d.lock);
		auto it = d.ones.find(static_cast<int>(dt));

		if (it != d.ones.end() && it->second.second >= rows)
			return { index_of(it->second.first), byte_offset_of(it->second.first), rows, 1, 1 };
	}
	/* Outside the lock: allocating and filling take it. */
	int64_t n = std::max<int64_t>(rows, 1024);
	at::Tensor t = at::empty({ n }, at::TensorOptions().dtype(dt).device(kFlex, d.index));

	fill_value(t, 1);
	/* Other streams read it without an event: let the fill complete first. */
	check(flex_stream_synchronize(current_flex_stream(d), nullptr), "filling ones");
	std::lock_guard<std::mutex> g(d.lock);
	auto &slot = d.ones[static_cast<int>(dt)];
	if (slot.second < n) {
		if (slot.first.defined())
			d.ones_retired.push_back(slot.first);
		slot = { t, n };
	}
	return { index_of(slot.first), byte_offset_of(slot.first), rows, 1, 1 };
}

} // namespace torch_flex
