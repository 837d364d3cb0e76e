// SPDX-License-Identifier: GPL-2.0
/*
 * The flex at::Allocator: one FlexAllocator block per storage.
 *
 * As PyTorch's CUDA caching allocator, a block belongs to the stream that
 * was current when it was allocated, and freeing it is stream-ordered: the
 * block goes back to the pool once the work enqueued on that stream (and on
 * every stream recorded with Tensor.record_stream()) before the free has
 * run (flex_alloc_block_free_after(); flex_alloc_block_record_use()). So
 * `del x` right after launching work that reads x is safe, and the memory
 * is reused without a synchronize. The FlexAllocator is the cache: its
 * regions stay reserved until empty_cache() (flex_alloc_trim()).
 *
 * Out of device memory, libflex first frees what deferred frees allow and
 * waits for the oldest ones; then the allocation raises
 * torch.cuda.OutOfMemoryError with libflex's message (size asked, free
 * bytes, largest free block of every region).
 */
#include "torch_flex.h"

namespace torch_flex {
namespace {

/* A DataPtr's context: what freeing the block needs. */
struct Block {
	flex_alloc_index_t index;
	int device;
	c10::StreamId stream; /* current when it was allocated */
};

void free_block(void *ctx);

struct Allocator final : public at::Allocator {
	at::DataPtr allocate(size_t n) const override
	{
		int index = current_device();
		Device &d = device(index);
		c10::Stream s = current_stream(index);
		flex_alloc_index_t block;
		int err = flex_alloc_block_alloc(d.alloc, n, FLEX_ALLOC_TENSOR, &block);

		if (err)
			fail(err, "allocating " + std::to_string(n) + " bytes on device " +
				  std::to_string(index) + " (" + d.node + ")");
		auto *b = new Block{ block, index, s.id() };
		return { reinterpret_cast<void *>(static_cast<uintptr_t>(block)), b, free_block,
			 c10::Device(kFlex, static_cast<c10::DeviceIndex>(index)) };
	}

	at::DeleterFnPtr raw_deleter() const override
	{
		return nullptr; /* the index is not the context */
	}
};

/* Deleters run from destructors: they must not throw. */
void free_block(void *ctx)
{
	auto *b = static_cast<Block *>(ctx);

	try {
		Device &d = device(b->device);
		int err = flex_alloc_block_free_after(d.alloc, b->index,
						      flex_stream_alloc_queue(stream_of(d, b->stream)));
		if (err)
			TORCH_WARN("flex: freeing block ", b->index, " of device ", b->device, ": ",
				   flex_last_error());
	} catch (const std::exception &e) {
		TORCH_WARN("flex: freeing block ", b->index, ": ", e.what());
	}
	delete b;
}

Allocator g_allocator;

} // namespace

at::Allocator *allocator()
{
	return &g_allocator;
}

void record_stream(const at::Tensor &t, const c10::Stream &s)
{
	Device &d = device_for(t);

	TORCH_CHECK(s.device_type() == kFlex && s.device_index() == d.index, "flex: record_stream: ",
		    s, " is not a stream of the tensor's device ", t.device());
	check(flex_alloc_block_record_use(d.alloc, index_of(t),
					  flex_stream_alloc_queue(stream_of(d, s.id()))),
	      "record_stream");
}

} // namespace torch_flex
