// SPDX-License-Identifier: GPL-2.0
/*
 * Copies and fills of flex tensors of any strides, on the current stream.
 *
 * Host <-> device goes through the stream's staging buffers
 * (FLEX_COPY_STAGED), as cudaMemcpy from pageable memory: a copy to the
 * device returns once the host tensor may change, one from the device once
 * the bytes are there. Device <-> device of one dtype runs on the device:
 * a tensor pair that is one rows x cols matrix on both sides is one
 * flex_stream_copy_device_2d() (one COPY per row, or one copy when both are
 * contiguous); otherwise the outermost dimension is walked, and a
 * one-dimensional strided pair is copied element by element as rows of one
 * element. A broadcast (stride 0) source row becomes a matmul by ones for
 * the types the device computes. Overlapping copies go through a
 * temporary. Dtype conversions and copies between two devices go through
 * the host.
 */
#include "torch_flex.h"

#include <cstring>

namespace torch_flex {
namespace {

/* @t's rows = dims [0, p), cols = dims [p, n) as a Mat; see plan_mats(). */
bool mat_split(const at::Tensor &t, int64_t p, bool row_broadcast, Mat *m)
{
	int64_t n = t.dim(), rows = 1, cols = 1, expect = 1, ld = -1;

	for (int64_t d = 0; d < n; d++)
		(d < p ? rows : cols) *= t.size(d);
	for (int64_t d = n - 1; d >= p; d--) {
		if (t.size(d) == 1)
			continue;
		if (t.stride(d) != expect)
			return false;
		expect *= t.size(d);
	}
	for (int64_t d = p - 1; d >= 0; d--) {
		if (t.size(d) == 1)
			continue;
		if (ld < 0) {
			ld = t.stride(d);
			expect = ld * t.size(d);
		} else if (t.stride(d) != expect) {
			return false;
		} else {
			expect *= t.size(d);
		}
	}
	if (ld < 0 || rows <= 1)
		ld = cols;
	if (ld < cols && !(ld == 0 && row_broadcast))
		return false;
	*m = { index_of(t), byte_offset_of(t), rows, cols, ld };
	return true;
}

struct flex_stream *stream(Device &d)
{
	return current_flex_stream(d);
}

/* Bytes from a tensor's first element to past its last (strides >= 0). */
uint64_t span_bytes(const at::Tensor &t)
{
	int64_t last = 0;

	if (!t.numel())
		return 0;
	for (int64_t d = 0; d < t.dim(); d++)
		last += (t.size(d) - 1) * t.stride(d);
	return static_cast<uint64_t>(last + 1) * t.element_size();
}

at::Tensor empty_like_contiguous(const at::Tensor &t)
{
	return at::empty(t.sizes(), t.options().memory_format(at::MemoryFormat::Contiguous));
}

void copy_2d(Device &d, const Mat &dm, const Mat &sm, int64_t es)
{
	check(flex_stream_copy_device_2d(stream(d), dm.index, dm.byte_offset, dm.ld * es, sm.index,
					 sm.byte_offset, sm.ld * es, dm.cols * es, dm.rows),
	      "copying " + std::to_string(dm.rows) + "x" + std::to_string(dm.cols) +
		      " elements on " + d.node);
}

void copy_device_nonoverlapping(Device &d, const at::Tensor &dst, const at::Tensor &src)
{
	std::vector<Mat> m;
	int64_t es = dst.element_size();

	if (plan_mats({ dst, src }, m, true)) {
		if (m[1].ld || m[1].rows <= 1) {
			copy_2d(d, m[0], m[1], es);
			return;
		}
		if (computes(dst.scalar_type())) {
			/* Every row the same: ones[rows x 1] . row[1 x cols]. */
			Mat row = m[1];

			row.rows = 1;
			row.ld = row.cols;
			launch_matmul(d, dst.scalar_type(), m[0], ones(d, dst.scalar_type(), m[0].rows),
				      row, 1, false);
			return;
		}
	}
	/* Walk the outermost dimension that has more than one element. */
	int64_t dim = 0;
	while (dim < dst.dim() && dst.size(dim) == 1)
		dim++;
	int64_t left = 0;
	for (int64_t i = dim + 1; i < dst.dim(); i++)
		left += dst.size(i) > 1;
	if (left) {
		for (int64_t i = 0; i < dst.size(dim); i++)
			copy_device_nonoverlapping(d, dst.select(dim, i), src.select(dim, i));
		return;
	}
	/* One dimension of strided elements: rows of one element each. */
	int64_t n = dst.size(dim), ds = dst.stride(dim), ss = src.stride(dim);
	if (ss == 0) {
		/* A broadcast element of a type the device does not compute: fill with it. */
		at::Tensor tmp = empty_like_contiguous(dst);

		fill_value(tmp, to_cpu(src.select(dim, 0)).item());
		copy_device_nonoverlapping(d, dst, tmp);
		return;
	}
	copy_2d(d, { index_of(dst), byte_offset_of(dst), n, 1, ds },
		{ index_of(src), byte_offset_of(src), n, 1, ss }, es);
}

} // namespace

bool overlaps(const at::Tensor &a, const at::Tensor &b)
{
	if (!a.numel() || !b.numel() || index_of(a) != index_of(b))
		return false;
	uint64_t a0 = byte_offset_of(a), b0 = byte_offset_of(b);
	return a0 < b0 + span_bytes(b) && b0 < a0 + span_bytes(a);
}

bool plan_mats(const std::vector<at::Tensor> &ts, std::vector<Mat> &out, bool row_broadcast)
{
	int64_t n = ts.at(0).dim();

	out.resize(ts.size());
	for (int64_t p = 0; p <= n; p++) {
		bool ok = true;

		for (size_t i = 0; i < ts.size() && ok; i++)
			ok = mat_split(ts[i], p, row_broadcast, &out[i]);
		if (ok)
			return true;
	}
	return false;
}

void copy_device(const at::Tensor &dst, const at::Tensor &src)
{
	Device &d = device_for(dst);

	TORCH_CHECK(src.device() == dst.device() && src.scalar_type() == dst.scalar_type() &&
		    src.sizes() == dst.sizes(), "flex: copy_device: ", src.sizes(), " ", src.device(),
		    " to ", dst.sizes(), " ", dst.device());
	if (!dst.numel())
		return;
	if (overlaps(dst, src)) {
		at::Tensor tmp = empty_like_contiguous(src);

		copy_device_nonoverlapping(d, tmp, src);
		copy_device_nonoverlapping(d, dst, tmp);
		return;
	}
	copy_device_nonoverlapping(d, dst, src);
}

at::Tensor addressable(const at::Tensor &t)
{
	std::vector<Mat> m;

	if (plan_mats({ t }, m, false))
		return t;
	at::Tensor tmp = empty_like_contiguous(t);
	copy_device(tmp, t);
	return tmp;
}

at::Tensor to_cpu(const at::Tensor &t)
{
	Device &d = device_for(t);
	uint64_t span = span_bytes(t);
	at::Tensor buf = at::empty({ static_cast<int64_t>(span / t.element_size()) },
				   at::TensorOptions().dtype(t.scalar_type()));

	for (int64_t i = 0; i < t.dim(); i++)
		TORCH_CHECK(t.stride(i) >= 0, "flex: a negative stride");
	if (span)
		check(flex_stream_copy(stream(d), FLEX_COPY_FROM_DEVICE | FLEX_COPY_STAGED, index_of(t),
				       byte_offset_of(t), buf.data_ptr(), span),
		      "copying " + std::to_string(span) + " bytes from " + d.node);
	return buf.as_strided(t.sizes(), t.strides(), 0);
}

void from_cpu(const at::Tensor &dst, const at::Tensor &src)
{
	Device &d = device_for(dst);
	at::Tensor host = src.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
	uint64_t size = static_cast<uint64_t>(host.numel()) * host.element_size();
	bool direct = dst.is_contiguous();
	at::Tensor to = direct ? dst : empty_like_contiguous(dst);

	if (size)
		check(flex_stream_copy(stream(d), FLEX_COPY_TO_DEVICE | FLEX_COPY_STAGED, index_of(to),
				       byte_offset_of(to), host.data_ptr(), size),
		      "copying " + std::to_string(size) + " bytes to " + d.node);
	if (!direct)
		copy_device(dst, to);
}

void fill_value(const at::Tensor &dst, const c10::Scalar &value)
{
	Device &d = device_for(dst);
	int64_t es = dst.element_size();

	if (!dst.numel())
		return;
	if (es != 1 && es != 2 && es != 4 && es != 8) {
		warn_fallback("fill_");
		from_cpu(dst, at::full({}, value, at::TensorOptions().dtype(dst.scalar_type())));
		return;
	}
	at::Tensor v = at::scalar_tensor(value, at::TensorOptions().dtype(dst.scalar_type()));
	bool direct = dst.is_contiguous();
	at::Tensor to = direct ? dst : empty_like_contiguous(dst);

	check(flex_stream_fill(stream(d), index_of(to), byte_offset_of(to),
			       static_cast<uint64_t>(to.numel()) * es, v.data_ptr(),
			       static_cast<uint32_t>(es)),
	      "filling " + std::to_string(to.numel()) + " elements on " + d.node);
	if (!direct)
		copy_device(dst, to);
}

} // namespace torch_flex
