// SPDX-License-Identifier: GPL-2.0
/*
 * The aten operators of the flex device (dispatch key PrivateUse1).
 *
 * On the device: storage (empty, empty_strided, resize_), views
 * (as_strided, view, _reshape_alias, unfold; PyTorch derives t, transpose,
 * narrow, slicing, select, expand, permute from as_strided), copies
 * (_copy_from: host <-> device, device <-> device), fill_, zero_, add, mul
 * (tensors and scalars, broadcasting), relu, mm, addmm, bmm and
 * record_stream, in float32, bfloat16, float16 and int32 (the types the
 * device computes; int8 matmul would give int32 where PyTorch keeps int8).
 * PyTorch composes clone, contiguous, matmul, linear, zeros and ones from
 * these. Everything else, and the cases above the device cannot do
 * (another dtype, mixed dtypes, alpha or beta other than 1), runs on the
 * CPU through PyTorch's cpu_fallback: the inputs are copied to the host and
 * the results back, with a warning the first time each operator does so.
 * Nothing falls back silently, and nothing the device cannot compute
 * exactly is computed on it.
 */
#include "torch_flex.h"

#include <ATen/EmptyTensor.h>
#include <ATen/InferSize.h>
#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/SymIntArrayRef.h>
#include <torch/library.h>

#include <set>

namespace torch_flex {

void warn_fallback(const std::string &op)
{
	static std::mutex lock;
	static std::set<std::string> warned;
	std::lock_guard<std::mutex> g(lock);

	if (warned.insert(op).second)
		TORCH_WARN("flex: ", op, " is not computed by the flex device in this case; it runs "
			   "on the CPU (inputs copied to the host, results back)");
}

namespace {

void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	const auto &name = op.schema().operator_name();

	warn_fallback(name.overload_name.empty() ? name.name : name.name + "." + name.overload_name);
	at::native::cpu_fallback(op, stack);
}

/* Run @Op on the CPU (see cpu_fallback()). */
template <class Op, class... Args> decltype(auto) on_cpu(Args &&...args)
{
	return at::native::call_fallback_fn<&cpu_fallback, Op>::call(std::forward<Args>(args)...);
}

at::IntArrayRef ints(c10::SymIntArrayRef s)
{
	return c10::asIntArrayRefSlow(s);
}

int index_of_device(c10::optional<at::Device> dev)
{
	return dev && dev->has_index() ? dev->index() : current_device();
}

at::Tensor empty(c10::SymIntArrayRef size, c10::optional<at::ScalarType> dtype,
		 c10::optional<at::Layout> layout, c10::optional<at::Device> dev,
		 c10::optional<bool> pin, c10::optional<at::MemoryFormat> format)
{
	int index = index_of_device(dev);
	c10::DeviceGuard g(c10::Device(kFlex, index));

	TORCH_CHECK(!pin.value_or(false), "flex: pinned memory is host memory, not a flex tensor");
	return at::detail::empty_generic(ints(size), allocator(), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
					 at::dtype_or_default(dtype), format);
}

at::Tensor empty_strided(c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
			 c10::optional<at::ScalarType> dtype, c10::optional<at::Layout> layout,
			 c10::optional<at::Device> dev, c10::optional<bool> pin)
{
	int index = index_of_device(dev);
	c10::DeviceGuard g(c10::Device(kFlex, index));

	TORCH_CHECK(!pin.value_or(false), "flex: pinned memory is host memory, not a flex tensor");
	return at::detail::empty_strided_generic(ints(size), ints(stride), allocator(),
						 c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
						 at::dtype_or_default(dtype));
}

at::Tensor as_strided(const at::Tensor &self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
		      c10::optional<c10::SymInt> offset)
{
	return at::native::as_strided_tensorimpl(self, ints(size), ints(stride),
						 offset ? c10::optional<int64_t>(offset->expect_int()) :
							  c10::nullopt);
}

at::Tensor view(const at::Tensor &self, c10::SymIntArrayRef size)
{
	return at::native::view(self, ints(size));
}

at::Tensor reshape_alias(const at::Tensor &self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride)
{
	return at::native::_reshape_alias(self, ints(size), ints(stride));
}

/* A bigger storage gets a new block, the old bytes copied on the device. */
const at::Tensor &resize_(const at::Tensor &self, c10::SymIntArrayRef symsize,
			  c10::optional<at::MemoryFormat> format)
{
	at::IntArrayRef size = ints(symsize);
	c10::DeviceGuard g(self.device());
	auto *impl = self.unsafeGetTensorImpl();
	int64_t es = self.element_size();
	int64_t need = at::detail::computeStorageNbytesContiguous(size, es, self.storage_offset());
	at::Storage storage = self.storage();

	if (self.sizes() == size)	/* as PyTorch's: a view keeps its strides */
		return self;
	TORCH_CHECK(!format || *format == at::MemoryFormat::Contiguous ||
		    *format == at::MemoryFormat::Preserve,
		    "flex: resize_ takes contiguous tensors only");
	if (need > static_cast<int64_t>(storage.nbytes())) {
		at::Tensor fresh = at::empty({ need }, self.options().dtype(at::kByte));
		int64_t old = static_cast<int64_t>(storage.nbytes());

		if (old) {
			at::Tensor bytes = at::detail::make_tensor<c10::TensorImpl>(
				c10::Storage(storage), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
				caffe2::TypeMeta::Make<uint8_t>());

			bytes.unsafeGetTensorImpl()->set_sizes_contiguous({ old });
			copy_device(fresh.narrow(0, 0, old), bytes);
			/* The old block is freed after its own stream: also after this copy. */
			record_stream(bytes, current_stream(self.get_device()));
		}
		storage.set_data_ptr_noswap(
			fresh.storage().set_data_ptr(at::DataPtr(nullptr, self.device())));
		storage.set_nbytes(need);
	}
	impl->set_sizes_contiguous(size);
	return self;
}

/* dst = self, as copy_ (broadcasting @self, converting its dtype). */
at::Tensor copy_from(const at::Tensor &self, const at::Tensor &dst, bool non_blocking)
{
	(void)non_blocking; /* host copies are staged: they never leave the host buffer in use */
	if (dst.device().type() == kFlex) {
		c10::DeviceGuard g(dst.device());

		if (self.device().type() != kFlex) {
			from_cpu(dst, self);
		} else if (self.device() == dst.device() && self.scalar_type() == dst.scalar_type()) {
			copy_device(dst, self.expand(dst.sizes()));
		} else {
			if (self.scalar_type() != dst.scalar_type())
				warn_fallback("copy_ (dtype conversion)");
			at::Tensor host;
			{
				c10::DeviceGuard gs(self.device());
				host = to_cpu(self);
			}
			from_cpu(dst, host);
		}
	} else {
		c10::DeviceGuard g(self.device());

		dst.copy_(to_cpu(self));
	}
	return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor &self, const at::Tensor &dst)
{
	dst.resize_(self.sizes());
	return copy_from(self, dst, false);
}

at::Tensor &fill_scalar(at::Tensor &self, const at::Scalar &value)
{
	c10::DeviceGuard g(self.device());

	fill_value(self, value);
	return self;
}

at::Tensor &fill_tensor(at::Tensor &self, const at::Tensor &value)
{
	TORCH_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor "
		    "with ", value.dim(), " dimensions.");
	at::Scalar v = value.device().type() == kFlex ? to_cpu(value).item() : value.item();
	return fill_scalar(self, v);
}

at::Tensor &zero_(at::Tensor &self)
{
	return fill_scalar(self, 0);
}

/* The device computes @dt and the tensors are flex tensors of one device and of @dt. */
bool on_device(at::ScalarType dt, std::initializer_list<at::Tensor> ts)
{
	if (!computes(dt))
		return false;
	const at::Tensor &first = *ts.begin();
	for (const at::Tensor &t : ts)
		if (t.device().type() != kFlex || t.device() != first.device() || t.scalar_type() != dt)
			return false;
	return true;
}

/* A flex tensor of @like's device and dtype, @shape, every element @value. */
at::Tensor full_like_scalar(const at::Tensor &like, at::IntArrayRef shape, const at::Scalar &v)
{
	at::Tensor t = at::empty(shape, like.options());

	fill_value(t, v);
	return t;
}

/* A Mat of @t (broadcast to @t's shape) that a launch can read. */
Mat readable(Device &d, const at::Tensor &t, const std::vector<Mat> &plan, size_t i,
	     std::vector<at::Tensor> &keep)
{
	if (plan[i].ld || plan[i].rows <= 1)
		return plan[i];
	at::Tensor tmp = at::empty(t.sizes(), t.options());	/* rows broadcast: materialise */
	copy_device(tmp, t);
	keep.push_back(tmp);
	return { index_of(tmp), byte_offset_of(tmp), plan[i].rows, plan[i].cols, plan[i].cols };
}

/*
 * out = a (op) b elementwise, out already of the broadcast shape (b
 * undefined for relu). Inputs that are no Mat of out's split are copied
 * into contiguous temporaries; an output that is none is computed into one
 * and copied back.
 */
void elementwise(Op op, const at::Tensor &out, at::Tensor a, at::Tensor b)
{
	Device &d = device_for(out);
	c10::DeviceGuard g(out.device());
	std::vector<at::Tensor> ts = { out, a.expand(out.sizes()) }, keep;
	std::vector<Mat> plan;

	if (b.defined())
		ts.push_back(b.expand(out.sizes()));
	if (!out.numel())
		return;
	/*
	 * The device reads an input that is the output itself in place, and
	 * snapshots (at most 4 MiB of) one that overlaps it otherwise: take a
	 * copy of such an input first.
	 */
	for (size_t i = 1; i < ts.size(); i++)
		if (overlaps(out, ts[i]) && !(byte_offset_of(out) == byte_offset_of(ts[i]) &&
					     out.strides() == ts[i].strides()))
			ts[i] = addressable(ts[i]).clone();
	if (!plan_mats(ts, plan, true)) {
		at::Tensor target = out;
		std::vector<Mat> op_plan;

		if (!plan_mats({ out }, op_plan, false))
			target = at::empty(out.sizes(), out.options());
		for (size_t i = 1; i < ts.size(); i++)
			if (!plan_mats({ target, ts[i] }, op_plan, true))
				ts[i] = addressable(ts[i]);
		ts[0] = target;
		if (!plan_mats(ts, plan, true))	/* no split suits all: all contiguous */
			for (size_t i = 1; i < ts.size(); i++)
				ts[i] = ts[i].contiguous();
		TORCH_CHECK(plan_mats(ts, plan, true), "flex: no launchable layout for ",
			    out.sizes(), " ", out.strides());
		if (!target.is_same(out)) {
			elementwise(op, target, ts[1], b.defined() ? ts[2] : at::Tensor());
			copy_device(out, target);
			return;
		}
	}
	Mat ma = readable(d, ts[1], plan, 1, keep);
	if (b.defined()) {
		Mat mb = readable(d, ts[2], plan, 2, keep);
		launch_elementwise(d, op, out.scalar_type(), plan[0], ma, &mb);
	} else {
		launch_elementwise(d, op, out.scalar_type(), plan[0], ma, nullptr);
	}
}

bool alpha_is_one(const at::Scalar &alpha)
{
	return alpha.isIntegral(false) ? alpha.toLong() == 1 : alpha.toDouble() == 1.0;
}

/* other as a tensor of self's device: a CPU scalar (a Python number) becomes a filled one. */
at::Tensor operand(const at::Tensor &self, const at::Tensor &other, at::IntArrayRef shape)
{
	if (other.device().type() != kFlex && other.dim() == 0)
		return full_like_scalar(self, shape, other.item());
	return other;
}

/* -t, on the device (t * -1: exact in every type the device computes). */
at::Tensor negated(const at::Tensor &t)
{
	at::Tensor out = at::empty(t.sizes(), t.options());

	elementwise(OP_MUL, out, t, full_like_scalar(t, t.sizes(), -1));
	return out;
}

at::Tensor binary(Op op, const at::Tensor &self, const at::Tensor &other)
{
	at::ScalarType dt = at::result_type(self, other);
	std::vector<int64_t> shape = at::infer_size(self.sizes(), other.sizes());
	c10::DeviceGuard g(self.device().type() == kFlex ? self.device() : other.device());

	if (self.device().type() != kFlex || dt != self.scalar_type())
		return at::Tensor();
	at::Tensor b = operand(self, other, shape);
	if (!on_device(dt, { self, b }))
		return at::Tensor();
	at::Tensor out = at::empty(shape, self.options());
	elementwise(op, out, self, b);
	return out;
}

at::Tensor add(const at::Tensor &self, const at::Tensor &other, const at::Scalar &alpha)
{
	if (alpha_is_one(alpha)) {
		at::Tensor r = binary(OP_ADD, self, other);
		if (r.defined())
			return r;
	}
	return on_cpu<ATEN_OP2(add, Tensor)>(self, other, alpha);
}

/* self - other: self + (-other), one rounding as the CPU's. */
at::Tensor sub(const at::Tensor &self, const at::Tensor &other, const at::Scalar &alpha)
{
	if (alpha_is_one(alpha) && self.device().type() == kFlex &&
	    at::result_type(self, other) == self.scalar_type() && computes(self.scalar_type())) {
		c10::DeviceGuard g(self.device());
		at::Tensor b = operand(self, other, other.sizes());

		if (on_device(self.scalar_type(), { self, b })) {
			at::Tensor r = binary(OP_ADD, self, negated(b));
			if (r.defined())
				return r;
		}
	}
	return on_cpu<ATEN_OP2(sub, Tensor)>(self, other, alpha);
}

at::Tensor mul(const at::Tensor &self, const at::Tensor &other)
{
	at::Tensor r = binary(OP_MUL, self, other);

	return r.defined() ? r : on_cpu<ATEN_OP2(mul, Tensor)>(self, other);
}

/* out = self (op) other into @out (add.out, add_, mul.out, mul_). */
bool binary_into(Op op, const at::Tensor &out, const at::Tensor &self, const at::Tensor &other)
{
	std::vector<int64_t> shape = at::infer_size(self.sizes(), other.sizes());
	at::ScalarType dt = out.scalar_type();

	if (out.device().type() != kFlex || self.device() != out.device() ||
	    self.scalar_type() != dt || at::result_type(self, other) != dt)
		return false;
	c10::DeviceGuard g(out.device());
	at::Tensor b = operand(self, other, shape);
	if (!on_device(dt, { out, self, b }))
		return false;
	at::native::resize_output(out, shape);
	elementwise(op, out, self, b);
	return true;
}

at::Tensor &add_out(const at::Tensor &self, const at::Tensor &other, const at::Scalar &alpha,
		    at::Tensor &out)
{
	if (alpha_is_one(alpha) && binary_into(OP_ADD, out, self, other))
		return out;
	return on_cpu<ATEN_OP2(add, out)>(self, other, alpha, out);
}

at::Tensor &add_(at::Tensor &self, const at::Tensor &other, const at::Scalar &alpha)
{
	if (alpha_is_one(alpha) && self.sizes() == at::IntArrayRef(at::infer_size(self.sizes(), other.sizes())) &&
	    binary_into(OP_ADD, self, self, other))
		return self;
	return on_cpu<ATEN_OP2(add_, Tensor)>(self, other, alpha);
}

at::Tensor &mul_out(const at::Tensor &self, const at::Tensor &other, at::Tensor &out)
{
	if (binary_into(OP_MUL, out, self, other))
		return out;
	return on_cpu<ATEN_OP2(mul, out)>(self, other, out);
}

at::Tensor &mul_(at::Tensor &self, const at::Tensor &other)
{
	if (self.sizes() == at::IntArrayRef(at::infer_size(self.sizes(), other.sizes())) &&
	    binary_into(OP_MUL, self, self, other))
		return self;
	return on_cpu<ATEN_OP2(mul_, Tensor)>(self, other);
}

at::Tensor relu(const at::Tensor &self)
{
	if (!on_device(self.scalar_type(), { self }))
		return on_cpu<ATEN_OP(relu)>(self);
	c10::DeviceGuard g(self.device());
	at::Tensor out = at::empty(self.sizes(), self.options());
	elementwise(OP_RELU, out, self, at::Tensor());
	return out;
}

at::Tensor &relu_(at::Tensor &self)
{
	if (!on_device(self.scalar_type(), { self }))
		return on_cpu<ATEN_OP(relu_)>(self);
	elementwise(OP_RELU, self, self, at::Tensor());
	return self;
}

at::Tensor &relu_out(const at::Tensor &self, at::Tensor &out)
{
	if (!on_device(self.scalar_type(), { self, out }))
		return on_cpu<ATEN_OP2(relu, out)>(self, out);
	c10::DeviceGuard g(out.device());
	at::native::resize_output(out, self.sizes());
	elementwise(OP_RELU, out, self, at::Tensor());
	return out;
}

/* A 2-D flex tensor as a Mat of its own rows and columns, if it is one. */
bool mat2d(const at::Tensor &t, Mat *m)
{
	int64_t r = t.size(0), c = t.size(1);

	if (c > 1 && t.stride(1) != 1)
		return false;
	if (r > 1 && t.stride(0) < c)
		return false;
	*m = { index_of(t), byte_offset_of(t), r, c, r > 1 ? t.stride(0) : c };
	return true;
}

/* A 2-D flex tensor as a matmul operand: a Mat, copied contiguous if need be. */
Mat operand_mat(const at::Tensor &t, std::vector<at::Tensor> &keep)
{
	Mat m;

	if (mat2d(t, &m))
		return m;
	keep.push_back(addressable(t));
	TORCH_CHECK(mat2d(keep.back(), &m), "flex: no matrix layout for ", t.sizes());
	return m;
}

/*
 * out [M, N] (+)= a [M, K] . b [K, N] on the device, into @out (any layout:
 * computed in a temporary and copied when it is not a Mat). With @bias
 * defined, out = bias (broadcast) + a . b.
 */
void matmul_into(const at::Tensor &out, const at::Tensor &a, const at::Tensor &b,
		 const at::Tensor &bias)
{
	Device &d = device_for(out);
	c10::DeviceGuard g(out.device());
	std::vector<at::Tensor> keep;
	at::Tensor target = out;
	int64_t k = a.size(1);

	Mat mc;

	if (!out.numel())
		return;
	/* Not a matrix, or the device would snapshot an input it overlaps: a temporary. */
	if (!mat2d(out, &mc) || overlaps(out, a) || overlaps(out, b)) {
		target = at::empty(out.sizes(), out.options());
		mat2d(target, &mc);
	}
	if (bias.defined()) {
		at::Tensor bb = bias.expand(out.sizes());
		std::vector<Mat> bp;

		if (plan_mats({ target, bb }, bp, true) && !bp[1].ld && bp[1].rows > 1) {
			Mat row = bp[1];

			row.rows = 1;
			row.ld = row.cols;
			launch_matmul(d, out.scalar_type(), mc, ones(d, out.scalar_type(), mc.rows), row,
				      1, false);
		} else {
			copy_device(target, bb);
		}
	} else if (!k) {
		fill_value(target, 0);
	}
	if (k)
		launch_matmul(d, out.scalar_type(), mc, operand_mat(a, keep), operand_mat(b, keep), k,
			      bias.defined());
	if (!target.is_same(out))
		copy_device(out, target);
}

bool mm_on_device(const at::Tensor &a, const at::Tensor &b)
{
	return a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0) &&
	       on_device(a.scalar_type(), { a, b });
}

at::Tensor mm(const at::Tensor &self, const at::Tensor &mat2)
{
	if (!mm_on_device(self, mat2))
		return on_cpu<ATEN_OP(mm)>(self, mat2);
	at::Tensor out = at::empty({ self.size(0), mat2.size(1) }, self.options());
	matmul_into(out, self, mat2, at::Tensor());
	return out;
}

at::Tensor &mm_out(const at::Tensor &self, const at::Tensor &mat2, at::Tensor &out)
{
	if (!mm_on_device(self, mat2) || !on_device(self.scalar_type(), { self, out }))
		return on_cpu<ATEN_OP2(mm, out)>(self, mat2, out);
	at::native::resize_output(out, { self.size(0), mat2.size(1) });
	matmul_into(out, self, mat2, at::Tensor());
	return out;
}

/* addmm on the device: beta and alpha 1 (or beta 0), bias of the same dtype. */
bool addmm_on_device(const at::Tensor &bias, const at::Tensor &a, const at::Tensor &b,
		     const at::Scalar &beta, const at::Scalar &alpha)
{
	bool beta0 = !beta.isIntegral(false) ? beta.toDouble() == 0.0 : beta.toLong() == 0;

	if (!mm_on_device(a, b) || !alpha_is_one(alpha) || !(beta0 || alpha_is_one(beta)))
		return false;
	return on_device(a.scalar_type(), { a, bias });
}

at::Tensor addmm(const at::Tensor &self, const at::Tensor &a, const at::Tensor &b,
		 const at::Scalar &beta, const at::Scalar &alpha)
{
	if (!addmm_on_device(self, a, b, beta, alpha))
		return on_cpu<ATEN_OP(addmm)>(self, a, b, beta, alpha);
	bool beta0 = !alpha_is_one(beta);
	at::Tensor out = at::empty({ a.size(0), b.size(1) }, a.options());
	matmul_into(out, a, b, beta0 ? at::Tensor() : self);
	return out;
}

at::Tensor &addmm_out(const at::Tensor &self, const at::Tensor &a, const at::Tensor &b,
		      const at::Scalar &beta, const at::Scalar &alpha, at::Tensor &out)
{
	if (!addmm_on_device(self, a, b, beta, alpha) || !on_device(a.scalar_type(), { a, out }))
		return on_cpu<ATEN_OP2(addmm, out)>(self, a, b, beta, alpha, out);
	bool beta0 = !alpha_is_one(beta);
	at::Tensor bias = self;
	if (!beta0 && index_of(out) == index_of(self))
		bias = self.clone();	/* out is written before the bias is read */
	at::native::resize_output(out, { a.size(0), b.size(1) });
	matmul_into(out, a, b, beta0 ? at::Tensor() : bias);
	return out;
}

at::Tensor &addmm_(at::Tensor &self, const at::Tensor &a, const at::Tensor &b,
		   const at::Scalar &beta, const at::Scalar &alpha)
{
	if (!addmm_on_device(self, a, b, beta, alpha) || self.dim() != 2 ||
	    self.size(0) != a.size(0) || self.size(1) != b.size(1))
		return on_cpu<ATEN_OP(addmm_)>(self, a, b, beta, alpha);
	bool beta0 = !alpha_is_one(beta);
	matmul_into(self, a, b, beta0 ? at::Tensor() : self.clone());
	return self;
}

at::Tensor bmm(const at::Tensor &self, const at::Tensor &mat2)
{
	if (self.dim() != 3 || mat2.dim() != 3 || self.size(0) != mat2.size(0) ||
	    self.size(2) != mat2.size(1) || !on_device(self.scalar_type(), { self, mat2 }))
		return on_cpu<ATEN_OP(bmm)>(self, mat2);
	at::Tensor out = at::empty({ self.size(0), self.size(1), mat2.size(2) }, self.options());
	for (int64_t i = 0; i < self.size(0); i++)
		matmul_into(out.select(0, i), self.select(0, i), mat2.select(0, i), at::Tensor());
	return out;
}

void record_stream_op(at::Tensor &self, c10::Stream s)
{
	record_stream(self, s);
}

} // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("empty.memory_format", TORCH_FN(empty));
	m.impl("empty_strided", TORCH_FN(empty_strided));
	m.impl("as_strided", TORCH_FN(as_strided));
	m.impl("view", TORCH_FN(view));
	m.impl("_reshape_alias", TORCH_FN(reshape_alias));
	m.impl("unfold", TORCH_FN(at::native::unfold));
	m.impl("resize_", TORCH_FN(resize_));
	m.impl("_copy_from", TORCH_FN(copy_from));
	m.impl("_copy_from_and_resize", TORCH_FN(copy_from_and_resize));
	m.impl("fill_.Scalar", TORCH_FN(fill_scalar));
	m.impl("fill_.Tensor", TORCH_FN(fill_tensor));
	m.impl("zero_", TORCH_FN(zero_));
	m.impl("add.Tensor", TORCH_FN(add));
	m.impl("add.out", TORCH_FN(add_out));
	m.impl("add_.Tensor", TORCH_FN(add_));
	m.impl("sub.Tensor", TORCH_FN(sub));
	m.impl("mul.Tensor", TORCH_FN(mul));
	m.impl("mul.out", TORCH_FN(mul_out));
	m.impl("mul_.Tensor", TORCH_FN(mul_));
	m.impl("relu", TORCH_FN(relu));
	m.impl("relu_", TORCH_FN(relu_));
	m.impl("relu.out", TORCH_FN(relu_out));
	m.impl("mm", TORCH_FN(mm));
	m.impl("mm.out", TORCH_FN(mm_out));
	m.impl("addmm", TORCH_FN(addmm));
	m.impl("addmm.out", TORCH_FN(addmm_out));
	m.impl("addmm_", TORCH_FN(addmm_));
	m.impl("bmm", TORCH_FN(bmm));
	m.impl("record_stream", TORCH_FN(record_stream_op));
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

} // namespace torch_flex
