# SPDX-License-Identifier: GPL-2.0
"""flex as a PyTorch device.

Importing torch_flex registers the flex device with PyTorch 1.13 as its
out-of-tree device type "privateuseone": tensors live in flex device memory
(FlexAllocator), operators run on the device's queues (FlexStream), and the
API below mirrors torch.cuda's names.

Devices are the flex functions present, the PF first and then its enabled
VFs (``device_count()``); ``FLEX_DEVICE=/dev/flex0vf0`` (or any node) makes
that one node the only device, 0. A device is opened on first use.

    import torch, torch_flex
    x = torch.randn(64, 256).to("privateuseone")
    y = torch.nn.Linear(256, 10).to("privateuseone")(x).cpu()
"""
import contextlib

import torch

from . import _C

__all__ = [
    "Event", "OutOfMemoryError", "Stream", "current_device", "current_stream",
    "default_stream", "device", "device_count", "empty_cache", "is_available",
    "max_memory_allocated", "max_memory_reserved", "mem_get_info", "memory_allocated",
    "memory_reserved", "memory_stats", "memory_summary", "record_stream",
    "reset_peak_memory_stats", "set_device", "set_stream", "stream", "synchronize",
]

DEVICE_TYPE = "privateuseone"
OutOfMemoryError = torch.cuda.OutOfMemoryError


def device_count():
    """The flex functions present (PF and enabled VFs), or 1 with FLEX_DEVICE."""
    return _C.device_count()


def is_available():
    return device_count() > 0


def current_device():
    return _C.current_device()


def _index(dev=None):
    """A device index from None (current), an int, a string or a torch.device."""
    if dev is None:
        return _C.current_device()
    if isinstance(dev, int):
        return dev
    dev = torch.device(dev)
    if dev.type != DEVICE_TYPE:
        raise ValueError(f"{dev} is not a flex device ({DEVICE_TYPE})")
    return _C.current_device() if dev.index is None else dev.index


def set_device(dev):
    _C.set_device(_index(dev))


def device(index=None):
    """torch.device of flex device @index (the current one by default)."""
    return torch.device(DEVICE_TYPE, _index(index))


def synchronize(device=None):
    """Wait for every stream of the device."""
    _C.synchronize(_index(device))


class Stream(torch._C.Stream):
    """A FlexStream from the device's pool for its priority: -1 high (needs
    CAP_SYS_NICE), 0 normal, 1 low, as torch.cuda.Stream. Usable wherever
    PyTorch takes a torch.Stream (Tensor.record_stream())."""

    def __new__(cls, device=None, priority=0, _id=None):
        index = _index(device)
        if _id is None:
            _id = _C.stream_new(index, priority)
        return super().__new__(cls, _cdata=_C.stream_pack(index, _id))

    def __init__(self, device=None, priority=0, _id=None):
        self.device_index = _index(device)
        self.stream_id = self._cdata & ((1 << 48) - 1)

    @property
    def priority(self):
        return _C.stream_priority(self.stream_id)

    def synchronize(self):
        _C.stream_synchronize(self.device_index, self.stream_id)

    def query(self):
        return _C.stream_query(self.device_index, self.stream_id)

    def wait_event(self, event):
        _C.stream_wait_event(self.device_index, self.stream_id, event._ev)

    def wait_stream(self, other):
        self.wait_event(other.record_event())

    def record_event(self, event=None):
        event = event or Event()
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, torch._C.Stream) and self._cdata == other._cdata

    def __hash__(self):
        return hash(self._cdata)

    def __repr__(self):
        return (f"<torch_flex.Stream device={DEVICE_TYPE}:{self.device_index} "
                f"id={self.stream_id} priority={self.priority}>")


def current_stream(device=None):
    index = _index(device)
    return Stream(index, _id=_C.current_stream(index))


def default_stream(device=None):
    return Stream(_index(device), _id=0)


def set_stream(s):
    _C.set_stream(s.device_index, s.stream_id)


@contextlib.contextmanager
def stream(s):
    """Make @s the current stream of its device (and its device current) inside the block."""
    if s is None:
        yield
        return
    prev_dev = _C.current_device()
    prev = _C.current_stream(s.device_index)
    _C.set_device(s.device_index)
    _C.set_stream(s.device_index, s.stream_id)
    try:
        yield
    finally:
        _C.set_stream(s.device_index, prev)
        _C.set_device(prev_dev)


class Event:
    """A point in a stream's work (torch.cuda.Event)."""

    def __init__(self, enable_timing=False):
        self._ev = _C.Event(enable_timing)

    def record(self, stream=None):
        stream = stream or current_stream()
        self._ev.record(stream.device_index, stream.stream_id)

    def wait(self, stream=None):
        (stream or current_stream()).wait_event(self)

    def query(self):
        return self._ev.query()

    def synchronize(self):
        self._ev.synchronize()

    def elapsed_time(self, end):
        """Milliseconds from this event's work completing to @end's."""
        return self._ev.elapsed_ns(end._ev) / 1e6


def record_stream(tensor, s):
    """tensor.record_stream(s), as a function."""
    _C.record_stream(tensor, s.device_index, s.stream_id)


def memory_stats(device=None):
    return dict(_C.memory_stats(_index(device)))


def memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device=None):
    _C.reset_peak_memory_stats(_index(device))


def empty_cache():
    """Wait for stream-ordered frees, then give back every entirely free region."""
    for i in range(device_count()):
        _C.empty_cache(i)


def mem_get_info(device=None):
    """(free, total) bytes of the device's function, as torch.cuda.mem_get_info()."""
    return tuple(_C.mem_get_info(_index(device)))


def memory_summary(device=None):
    """libflex's memory report: the allocator's regions and blocks and each stream."""
    return _C.memory_summary(_index(device))
