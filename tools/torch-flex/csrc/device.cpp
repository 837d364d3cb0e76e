// SPDX-License-Identifier: GPL-2.0
/*
 * torch-flex devices, streams and events.
 *
 * Devices: the flex functions flex_device_enumerate() lists (PF first,
 * then its enabled VFs), found once when the module loads; FLEX_DEVICE,
 * when set, names the one node used instead (device 0). A device is opened
 * (its context: the FlexAllocator and the default stream) on first use, as
 * CUDA initialises lazily, so importing torch_flex opens nothing.
 *
 * Streams: StreamId 0 is the context's default stream; then three pools
 * (high, normal, low priority) of kPoolSize streams, created on first use
 * and handed out round robin, as CUDA's stream pools are: each is a driver
 * queue of the device file, and a file has at most FLEX_MAX_QUEUES. The
 * current stream is per thread and device. A high-priority stream needs
 * CAP_SYS_NICE (the driver's rule); without it creating one raises.
 */
#include "torch_flex.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace torch_flex {

[[noreturn]] void fail(int err, const std::string &what)
{
	std::string msg = "flex: " + what + ": " + flex_last_error() + " (" + strerror(-err) + ")";

	if (err == -ENOMEM)
		TORCH_CHECK_WITH(OutOfMemoryError, false, msg);
	TORCH_CHECK(false, msg);
}

namespace {

struct Registry {
	std::vector<std::unique_ptr<Device>> devices;

	Registry()
	{
		const char *env = getenv("FLEX_DEVICE");

		if (env && *env) {
			char node[256];

			if (flex_device_default_node(node, sizeof(node)) == 0)
				add(node);
			return;
		}
		unsigned int n = 0;
		if (flex_device_enumerate(nullptr, 0, &n) || !n)
			return;
		std::vector<struct flex_device_info> info(n);
		if (flex_device_enumerate(info.data(), n, &n))
			return;
		for (unsigned int i = 0; i < n && i < info.size(); i++)
			add(info[i].node);
	}

	void add(const char *node)
	{
		auto d = std::make_unique<Device>();

		d->index = static_cast<int>(devices.size());
		d->node = node;
		devices.push_back(std::move(d));
	}
};

Registry &registry()
{
	static Registry r;
	return r;
}

thread_local int tls_device = 0;
/* The current stream of each device, per thread (0: the default stream). */
thread_local std::vector<c10::StreamId> tls_streams;

int prio_class(int priority)
{
	return priority < 0 ? 0 : priority > 0 ? 2 : 1;
}

int flex_priority(int cls)
{
	return cls == 0 ? FLEX_STREAM_PRIO_HIGH : cls == 2 ? FLEX_STREAM_PRIO_LOW :
			  FLEX_STREAM_PRIO_NORMAL;
}

} // namespace

int device_count()
{
	return static_cast<int>(registry().devices.size());
}

std::vector<std::string> device_nodes()
{
	std::vector<std::string> v;

	for (auto &d : registry().devices)
		v.push_back(d->node);
	return v;
}

bool device_opened(int index)
{
	if (index < 0 || index >= device_count())
		return false;
	Device &d = *registry().devices[index];
	std::lock_guard<std::mutex> g(d.lock);
	return d.ctx != nullptr;
}

Device &device(int index)
{
	TORCH_CHECK(index >= 0 && index < device_count(), "flex: no device ", index, " (",
		    device_count(), " present; FLEX_DEVICE or sriov_numvfs decide which)");
	Device &d = *registry().devices[index];
	std::lock_guard<std::mutex> g(d.lock);
	if (!d.ctx) {
		struct flex_alloc_config cfg;
		struct flex_context *ctx;
		struct flex_device *dev;

		/*
		 * FillFirst on a PF too: PyTorch's caching allocator grows its
		 * cache as tensors need it, and memory_reserved() should say so;
		 * LoadBalancing would reserve max_regions regions at once.
		 */
		flex_alloc_config_init(&cfg);
		cfg.region_strategy = FLEX_ALLOC_FILL_FIRST;
		check(flex_device_new(d.node.c_str(), &dev), "opening " + d.node);
		int err = flex_context_new(dev, &cfg, &ctx);
		flex_device_unref(dev);
		check(err, "creating a context on " + d.node);
		d.ctx = ctx;
		d.alloc = flex_context_allocator(ctx);
		d.streams.assign(1 + kPriorities * kPoolSize, nullptr);
		d.streams[0] = flex_context_default_stream(ctx);
	}
	return d;
}

Device &device_for(const at::Tensor &t)
{
	TORCH_CHECK(t.device().type() == kFlex, "flex: a ", t.device(), " tensor where a flex "
		    "tensor was expected");
	return device(t.device().index());
}

int current_device()
{
	return tls_device;
}

void set_current_device(int index)
{
	TORCH_CHECK(index >= 0 && index < device_count(), "flex: no device ", index);
	tls_device = index;
}

c10::StreamId pool_stream(Device &d, int priority)
{
	int cls = prio_class(priority);
	std::lock_guard<std::mutex> g(d.lock);
	int i = d.pool_next[cls]++ % kPoolSize;
	c10::StreamId id = 1 + cls * kPoolSize + i;

	if (!d.streams[id]) {
		struct flex_stream *s;

		check(flex_stream_new(d.ctx, flex_priority(cls), &s),
		      "creating a stream of priority " + std::to_string(priority) + " on " + d.node);
		d.streams[id] = s;
	}
	return id;
}

int stream_priority(c10::StreamId id)
{
	if (id == 0)
		return 0;
	int cls = static_cast<int>((id - 1) / kPoolSize);
	return cls == 0 ? -1 : cls == 2 ? 1 : 0;
}

struct flex_stream *stream_of(Device &d, c10::StreamId id)
{
	std::lock_guard<std::mutex> g(d.lock);
	TORCH_CHECK(id >= 0 && id < static_cast<c10::StreamId>(d.streams.size()) && d.streams[id],
		    "flex: no stream ", id, " on device ", d.index);
	return d.streams[id];
}

c10::Stream current_stream(int index)
{
	c10::StreamId id = 0;

	if (index < static_cast<int>(tls_streams.size()))
		id = tls_streams[index];
	return c10::Stream(c10::Stream::UNSAFE, c10::Device(kFlex, index), id);
}

void set_current_stream(const c10::Stream &s)
{
	int index = s.device_index();

	TORCH_CHECK(s.device_type() == kFlex, "flex: ", s, " is not a flex stream");
	stream_of(device(index), s.id()); /* exists */
	if (index >= static_cast<int>(tls_streams.size()))
		tls_streams.resize(index + 1, 0);
	tls_streams[index] = s.id();
}

struct flex_stream *current_flex_stream(Device &d)
{
	return stream_of(d, current_stream(d.index).id());
}

void synchronize_device(Device &d)
{
	std::vector<struct flex_stream *> streams;
	{
		std::lock_guard<std::mutex> g(d.lock);
		streams = d.streams;
	}
	for (size_t i = 0; i < streams.size(); i++)
		if (streams[i])
			check(flex_stream_synchronize(streams[i], nullptr),
			      "synchronizing stream " + std::to_string(i) + " of " + d.node);
}

namespace {

/* What PyTorch's generic code (autograd, DeviceGuard, c10::Event) uses. */
struct GuardImpl final : public c10::impl::DeviceGuardImplInterface {
	c10::DeviceType type() const override
	{
		return kFlex;
	}

	c10::Device exchangeDevice(c10::Device d) const override
	{
		c10::Device old = getDevice();

		setDevice(d);
		return old;
	}

	c10::Device getDevice() const override
	{
		return c10::Device(kFlex, static_cast<c10::DeviceIndex>(current_device()));
	}

	void setDevice(c10::Device d) const override
	{
		TORCH_CHECK(d.type() == kFlex, "flex: ", d, " is not a flex device");
		set_current_device(d.has_index() ? d.index() : 0);
	}

	void uncheckedSetDevice(c10::Device d) const noexcept override
	{
		if (d.has_index() && d.index() < device_count())
			tls_device = d.index();
	}

	c10::Stream getStream(c10::Device d) const noexcept override
	{
		return current_stream(d.index());
	}

	c10::Stream getDefaultStream(c10::Device d) const override
	{
		return c10::Stream(c10::Stream::DEFAULT, d);
	}

	c10::Stream getStreamFromGlobalPool(c10::Device d, bool high) const override
	{
		return c10::Stream(c10::Stream::UNSAFE, d,
				   pool_stream(device(d.index()), high ? -1 : 0));
	}

	c10::Stream exchangeStream(c10::Stream s) const noexcept override
	{
		c10::Stream old = current_stream(s.device_index());

		try {
			set_current_stream(s);
		} catch (...) {
		}
		return old;
	}

	c10::DeviceIndex deviceCount() const noexcept override
	{
		return static_cast<c10::DeviceIndex>(device_count());
	}

	void record(void **event, const c10::Stream &s, const c10::DeviceIndex index,
		    const c10::EventFlag flag) const override
	{
		Device &d = device(index);

		if (!*event) {
			struct flex_event *ev;

			check(flex_event_new(flag == c10::EventFlag::BACKEND_DEFAULT ?
					     FLEX_EVENT_TIMING : 0, &ev), "creating an event");
			*event = ev;
		}
		check(flex_event_record(static_cast<struct flex_event *>(*event),
					stream_of(d, s.id())), "recording an event");
	}

	void block(void *event, const c10::Stream &s) const override
	{
		if (!event)
			return;
		check(flex_stream_wait_event(stream_of(device(s.device_index()), s.id()),
					     static_cast<struct flex_event *>(event)),
		      "waiting for an event");
	}

	bool queryEvent(void *event) const override
	{
		if (!event)
			return true;
		int err = flex_event_query(static_cast<struct flex_event *>(event));

		if (err == -EBUSY)
			return false;
		check(err, "querying an event");
		return true;
	}

	void destroyEvent(void *event, const c10::DeviceIndex) const noexcept override
	{
		flex_event_destroy(static_cast<struct flex_event *>(event));
	}

	bool queryStream(const c10::Stream &s) const override
	{
		int err = flex_stream_query(stream_of(device(s.device_index()), s.id()), nullptr);

		if (err == -EBUSY)
			return false;
		check(err, "querying a stream");
		return true;
	}

	void synchronizeStream(const c10::Stream &s) const override
	{
		check(flex_stream_synchronize(stream_of(device(s.device_index()), s.id()), nullptr),
		      "synchronizing a stream");
	}

	void recordDataPtrOnStream(const c10::DataPtr &p, const c10::Stream &s) const override
	{
		Device &d = device(s.device_index());
		auto index = static_cast<flex_alloc_index_t>(reinterpret_cast<uintptr_t>(p.get()));

		check(flex_alloc_block_record_use(d.alloc, index,
						  flex_stream_alloc_queue(stream_of(d, s.id()))),
		      "recording a stream's use of a block");
	}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

} // namespace
} // namespace torch_flex
