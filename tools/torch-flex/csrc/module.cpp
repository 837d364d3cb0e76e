// SPDX-License-Identifier: GPL-2.0
/*
 * torch_flex._C: what the Python package (tools/torch-flex/torch_flex/)
 * builds torch.cuda's API from. Importing it registers the device
 * (the operators, the allocator, the guard) with PyTorch.
 */
#include "torch_flex.h"

#include <torch/extension.h>

#include <cstdio>
#include <cstdlib>

namespace torch_flex {
namespace {

/* c10::Stream::pack() of 1.13: type << 56 | index << 48 | id. */
uint64_t pack(int index, c10::StreamId id)
{
	return c10::Stream(c10::Stream::UNSAFE, c10::Device(kFlex, index), id).pack();
}

struct Event {
	struct flex_event *ev = nullptr;
	bool timing;

	explicit Event(bool enable_timing) : timing(enable_timing)
	{
		check(flex_event_new(enable_timing ? FLEX_EVENT_TIMING : 0, &ev), "creating an event");
	}
	~Event()
	{
		flex_event_destroy(ev);
	}
	Event(const Event &) = delete;
	Event &operator=(const Event &) = delete;
};

struct flex_stream *stream_at(int index, c10::StreamId id)
{
	return stream_of(device(index), id);
}

py::dict memory_stats(int index)
{
	struct flex_alloc_stats st = {};
	py::dict d;

	if (device_opened(index))
		flex_alloc_get_stats(device(index).alloc, &st);
	/*
	 * As PyTorch's CUDA caching allocator counts: a freed block stops
	 * being allocated at the free, though it can only be reused once the
	 * work before the free has run (libflex counts it as pending).
	 */
	d["allocated_bytes.all.current"] = st.allocated_bytes - st.pending_free_bytes;
	d["allocated_bytes.all.peak"] = st.peak_allocated_bytes;
	d["requested_bytes.all.current"] = st.requested_bytes;
	d["reserved_bytes.all.current"] = st.reserved_bytes;
	d["reserved_bytes.all.peak"] = st.peak_reserved_bytes;
	d["inactive_split_bytes.all.current"] = st.free_bytes;
	d["largest_free_block"] = st.largest_free_block;
	d["fragmentation"] = st.fragmentation;
	d["allocation.all.current"] = st.num_live_blocks - st.num_pending_frees;
	d["num_alloc"] = st.num_allocs;
	d["num_free"] = st.num_frees;
	d["num_ooms"] = st.num_ooms;
	d["num_alloc_retries"] = st.num_pressure_retries;
	d["pending_free_bytes"] = st.pending_free_bytes;
	d["num_pending_frees"] = st.num_pending_frees;
	d["num_regions"] = st.num_regions;
	d["max_regions"] = st.max_regions;
	d["num_region_acquires"] = st.num_region_acquires;
	d["num_region_releases"] = st.num_region_releases;
	return d;
}

std::string memory_summary(int index)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	TORCH_CHECK(f, "flex: open_memstream failed");
	int err = flex_context_report(device(index).ctx, f, FLEX_ALLOC_REPORT_SUMMARY);
	fclose(f);
	std::string s(buf ? buf : "", len);
	free(buf);
	check(err, "writing the memory report");
	return s;
}

} // namespace
} // namespace torch_flex

PYBIND11_MODULE(_C, m)
{
	using namespace torch_flex;

	m.doc() = "flex as a PyTorch device (privateuseone): the native part of torch_flex";
	m.def("device_count", &device_count);
	m.def("device_nodes", &device_nodes);
	m.def("current_device", &current_device);
	m.def("set_device", &set_current_device);
	m.def("init", [](int i) { device(i); }, "open device i (its context) now");
	m.def("synchronize", [](int i) {
		py::gil_scoped_release nogil;
		synchronize_device(device(i));
	});

	/* Streams, as (device index, StreamId); the Python Stream packs them. */
	m.def("stream_new", [](int i, int priority) { return pool_stream(device(i), priority); });
	m.def("stream_pack", &pack);
	m.def("stream_priority", &stream_priority);
	m.def("current_stream", [](int i) { return current_stream(i).id(); });
	m.def("set_stream", [](int i, int64_t id) {
		set_current_stream(c10::Stream(c10::Stream::UNSAFE, c10::Device(kFlex, i), id));
	});
	m.def("stream_synchronize", [](int i, int64_t id) {
		struct flex_stream *s = stream_at(i, id);
		py::gil_scoped_release nogil;
		check(flex_stream_synchronize(s, nullptr), "synchronizing a stream");
	});
	m.def("stream_query", [](int i, int64_t id) {
		int err = flex_stream_query(stream_at(i, id), nullptr);
		if (err == -EBUSY)
			return false;
		check(err, "querying a stream");
		return true;
	});
	m.def("stream_wait_event", [](int i, int64_t id, Event &e) {
		check(flex_stream_wait_event(stream_at(i, id), e.ev), "waiting for an event");
	});
	m.def("record_stream", [](const at::Tensor &t, int i, int64_t id) {
		record_stream(t, c10::Stream(c10::Stream::UNSAFE, c10::Device(kFlex, i), id));
	});

	py::class_<Event>(m, "Event")
		.def(py::init<bool>(), py::arg("enable_timing") = false)
		.def_readonly("enable_timing", &Event::timing)
		.def("record", [](Event &e, int i, int64_t id) {
			check(flex_event_record(e.ev, stream_at(i, id)), "recording an event");
		})
		.def("query", [](Event &e) {
			int err = flex_event_query(e.ev);
			if (err == -EBUSY)
				return false;
			check(err, "querying an event");
			return true;
		})
		.def("synchronize", [](Event &e) {
			py::gil_scoped_release nogil;
			check(flex_event_synchronize(e.ev), "synchronizing an event");
		})
		.def("elapsed_ns", [](Event &start, Event &end) {
			int64_t ns = 0;
			check(flex_event_elapsed_ns(start.ev, end.ev, &ns), "timing two events");
			return ns;
		});

	/* Memory, as torch.cuda's. */
	m.def("memory_stats", &memory_stats);
	m.def("reset_peak_memory_stats", [](int i) {
		if (device_opened(i))
			flex_alloc_reset_peak_stats(device(i).alloc);
	});
	m.def("empty_cache", [](int i) {
		if (!device_opened(i))
			return;
		Device &d = device(i);
		py::gil_scoped_release nogil;
		check(flex_alloc_reclaim(d.alloc, FLEX_ALLOC_RECLAIM_WAIT, nullptr), "empty_cache");
		check(flex_alloc_trim(d.alloc, nullptr), "empty_cache");
	});
	m.def("mem_get_info", [](int i) {
		uint64_t free = 0, total = 0;
		check(flex_alloc_mem_get_info(device(i).alloc, &free, &total), "mem_get_info");
		return py::make_tuple(free, total);
	});
	m.def("memory_summary", &memory_summary);
}
