#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A small MLP forward pass on a flex device through torch-flex.

    PYTHONPATH=build/torch-flex /usr/bin/python3 Documentation/flex/examples/mlp.py [--device N]

(/usr/bin/python3: Debian's python3-torch, PyTorch 1.13. Run it where
/dev/flex0 exists: in the VM, as `make demo` does.)

torch.nn.Sequential(Linear(256, 512), ReLU, Linear(512, 128), ReLU,
Linear(128, 10)) in float32, with a fixed seed, runs on a batch of 64 on
the CPU and on the device. The two match when torch.allclose(device, cpu,
rtol=1e-4, atol=1e-4) holds: each Linear sums K products in binary32 on
both sides, in different orders, so each may be off by about K * 2^-24 *
(|x| @ |W|) (K = 512 at most here), and the three layers add up; 1e-4 is
well above that for these sizes and well below any real error. It prints
the time of one forward pass on each (median of 5 after a warm-up, the
device's synchronized), as `bench: mlp_forward_device_ms <v> ms` and
`bench: mlp_forward_cpu_ms <v> ms` too, the device's memory figures and
libflex's memory report, and exits 1 when the results do not match.
"""

import argparse
import copy
import statistics
import sys
import time

import torch
import torch_flex

BATCH = 64
SEED = 0
RTOL = ATOL = 1e-4
REPEAT = 5


def build_model():
    torch.manual_seed(SEED)
    return torch.nn.Sequential(
        torch.nn.Linear(256, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 10),
    )


def median_ms(fn, sync, repeat=REPEAT):
    """The median wall-clock time of fn() in ms, after one warm-up call."""
    fn()
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", type=int, default=0, help="torch_flex device index (default 0)")
    args = ap.parse_args(argv)

    if not torch_flex.is_available() or args.device >= torch_flex.device_count():
        print("mlp: no torch_flex device %d (device_count() is %d): is flex.ko loaded?"
              % (args.device, torch_flex.device_count() if torch_flex.is_available() else 0))
        return 1
    dev = torch_flex.device(args.device)

    model_cpu = build_model()
    gen = torch.Generator().manual_seed(SEED)
    x = torch.randn(BATCH, 256, generator=gen)
    print("mlp: Sequential(Linear(256, 512), ReLU, Linear(512, 128), ReLU, Linear(128, 10)), "
          "float32, batch %d, seed %d; device %s" % (BATCH, SEED, dev))

    with torch.no_grad():
        ref = model_cpu(x)
        model_dev = copy.deepcopy(model_cpu).to(dev)
        x_dev = x.to(dev)
        out = model_dev(x_dev).cpu()

        diff = (out - ref).abs().max().item()
        match = torch.allclose(out, ref, rtol=RTOL, atol=ATOL)
        print("match: %s (torch.allclose(device, cpu, rtol=%g, atol=%g))"
              % ("yes" if match else "NO", RTOL, ATOL))
        print("max |device - cpu| = %.3g, max |cpu| = %.3g" % (diff, ref.abs().max().item()))

        dev_ms = median_ms(lambda: model_dev(x_dev), lambda: torch_flex.synchronize(args.device))
        cpu_ms = median_ms(lambda: model_cpu(x), lambda: None)

    print("time per forward pass (median of %d after a warm-up): device %.2f ms, CPU %.2f ms"
          % (REPEAT, dev_ms, cpu_ms))
    i = args.device
    free, total = torch_flex.mem_get_info(i)
    print("memory: allocated %d bytes (peak %d), reserved %d bytes (peak %d); "
          "mem_get_info: %d free of %d"
          % (torch_flex.memory_allocated(i), torch_flex.max_memory_allocated(i),
             torch_flex.memory_reserved(i), torch_flex.max_memory_reserved(i), free, total))
    print(torch_flex.memory_summary(i).rstrip("\n"))
    print("bench: mlp_forward_device_ms %.3f ms" % dev_ms)
    print("bench: mlp_forward_cpu_ms %.3f ms" % cpu_ms)
    if not match:
        print("mlp: the device's output does not match the CPU's")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
