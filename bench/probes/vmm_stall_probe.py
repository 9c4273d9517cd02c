"""Does the driver's virtual-memory work slow the GPU down, or only the host?

Queues a fixed amount of GPU work (matrix products on one stream), then,
while it runs, issues N map+unmap pairs of 2 MiB physical handles from the
host (cuMemCreate once; cuMemMap + cuMemSetAccess + cuMemUnmap each pair)
on fresh addresses. Compares the GPU time of the queue (CUDA events) with and
without the concurrent driver calls, interleaved, and prints both, the host
time per pair, and the ratio. A ratio near 1 says map/unmap costs only host
time (so it can be taken off the launching thread); well above 1 says the
GPU stalls for them (so only fewer calls help).

Usage: python3 bench/probes/vmm_stall_probe.py [--pairs 200] [--rounds 5]
"""
import argparse
import ctypes
import statistics
import time

import torch

from vmm_ctypes import AccessDesc, AllocProp, check, cuda, emit  # noqa: E402 (bench/ is the script's folder)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--pairs", type=int, default=200)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--products", type=int, default=400)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    torch.cuda.init()
    dev = torch.cuda.current_device()
    x = torch.randn(a.n, a.n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    prop = AllocProp(type=1, requestedHandleTypes=0, loc_type=1, loc_id=dev)
    page = 2 << 20
    handle = ctypes.c_ulonglong()
    check(cuda.cuMemCreate(ctypes.byref(handle), ctypes.c_size_t(page), ctypes.byref(prop),
                           ctypes.c_ulonglong(0)), "cuMemCreate")
    va = ctypes.c_ulonglong()
    span = page * a.pairs
    check(cuda.cuMemAddressReserve(ctypes.byref(va), ctypes.c_size_t(span), ctypes.c_size_t(0),
                                   ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)), "reserve")
    acc = AccessDesc(loc_type=1, loc_id=dev, flags=3)

    def churn():
        t0 = time.perf_counter()
        for i in range(a.pairs):
            addr = ctypes.c_ulonglong(va.value + i * page)
            check(cuda.cuMemMap(addr, ctypes.c_size_t(page), ctypes.c_size_t(0), handle,
                                ctypes.c_ulonglong(0)), "cuMemMap")
            check(cuda.cuMemSetAccess(addr, ctypes.c_size_t(page), ctypes.byref(acc),
                                      ctypes.c_size_t(1)), "cuMemSetAccess")
            check(cuda.cuMemUnmap(addr, ctypes.c_size_t(page)), "cuMemUnmap")
        return (time.perf_counter() - t0) / a.pairs * 1e6

    def queue(with_churn):
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(a.products):
            torch.mm(x, x, out=y)
        e.record()
        us = churn() if with_churn else None
        e.synchronize()
        return s.elapsed_time(e), us

    queue(False); queue(True)  # warm-up
    base, loaded, per_pair = [], [], []
    for _ in range(a.rounds):
        base.append(queue(False)[0])
        ms, us = queue(True)
        loaded.append(ms)
        per_pair.append(us)
    # Host calls alone, GPU idle.
    torch.cuda.synchronize()
    idle_us = churn()
    r = {"gpu": torch.cuda.get_device_name(), "pairs": a.pairs,
         "queue_ms_alone": base, "queue_ms_with_churn": loaded,
         "mean_alone_ms": statistics.mean(base), "mean_with_churn_ms": statistics.mean(loaded),
         "ratio": statistics.mean(loaded) / statistics.mean(base),
         "host_us_per_map_access_unmap_busy": statistics.mean(per_pair),
         "host_us_per_map_access_unmap_idle": idle_us}
    emit(r, a.out)


if __name__ == "__main__":
    main()
