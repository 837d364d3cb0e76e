# SPDX-License-Identifier: GPL-2.0
"""torch-flex's costs, in the VM (make bench-torch). Each figure on its own
line, `bench: <name> <value> <unit>`:

  torch_op_enqueue_us   host time per `z = x + y` (64 x 64 float32: one
                        tile) when nothing waits for it: the output's
                        allocation and the launch, what PyTorch's host side
                        costs per operator on the device
  torch_op_roundtrip_us the same with a synchronize after each
  mlp_forward_device_ms an MLP's forward pass (Linear 256-512-128-10 with
                        ReLU, batch 64, float32) on the device, median of 5
  mlp_forward_cpu_ms    the same on the CPU, in the same guest
"""
import statistics
import time

import torch
import torch_flex

N = 200


def per_op_us(fn, sync_each):
    fn()
    torch_flex.synchronize()
    t0 = time.perf_counter()
    for _ in range(N):
        fn()
        if sync_each:
            torch_flex.synchronize()
    t1 = time.perf_counter()
    torch_flex.synchronize()
    return (t1 - t0) / N * 1e6


def forward_ms(model, x, sync):
    times = []
    for _ in range(6):
        t0 = time.perf_counter()
        model(x)
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times[1:])


def main():
    dev = torch_flex.device(0)
    x = torch.randn(64, 64).to(dev)
    y = torch.randn(64, 64).to(dev)
    print("bench: torch_op_enqueue_us %.1f us" % per_op_us(lambda: x + y, False))
    print("bench: torch_op_roundtrip_us %.1f us" % per_op_us(lambda: x + y, True))

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    inp = torch.randn(64, 256)
    with torch.no_grad():
        cpu = forward_ms(model, inp, lambda: None)
        model.to(dev)
        dinp = inp.to(dev)
        devms = forward_ms(model, dinp, torch_flex.synchronize)
    print("bench: mlp_forward_device_ms %.1f ms" % devms)
    print("bench: mlp_forward_cpu_ms %.2f ms" % cpu)


if __name__ == "__main__":
    main()
