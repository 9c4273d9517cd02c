"""Map + access + unmap of one 2 MiB handle in a PyTorch process that has
trained (cuDNN and cuBLAS loaded, its caching allocator holding memory),
with 0, 1024 and 4096 other handles held: the context a training step's
maps are made in, next to bench/probes/vmm_handle_count_probe.cu's bare one.

Usage: python3 bench/probes/vmm_torch_context_probe.py [--reps 100] [--out FILE]
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmm_ctypes import AccessDesc, AllocProp, check, cuda, emit  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--reps", type=int, default=100)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    dev = torch.cuda.current_device()
    # Train a little: the kernels and libraries a step loads are loaded.
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 64, 3, padding=1), torch.nn.ReLU(),
                                torch.nn.Conv2d(64, 64, 3, padding=1), torch.nn.Flatten(),
                                torch.nn.Linear(64 * 32 * 32, 10)).cuda()
    opt = torch.optim.AdamW(model.parameters())
    for _ in range(5):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(torch.randn(64, 3, 32, 32, device="cuda")).float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    torch.cuda.synchronize()

    page = 2 << 20
    prop = AllocProp(type=1, requestedHandleTypes=0, loc_type=1, loc_id=dev)
    acc = AccessDesc(loc_type=1, loc_id=dev, flags=3)

    def create():
        h = ctypes.c_ulonglong()
        check(cuda.cuMemCreate(ctypes.byref(h), ctypes.c_size_t(page), ctypes.byref(prop),
                               ctypes.c_ulonglong(0)), "cuMemCreate")
        return h

    counts = [0, 1024, 4096]
    va = ctypes.c_ulonglong()
    span = (2 * counts[-1] + 8) * page
    check(cuda.cuMemAddressReserve(ctypes.byref(va), ctypes.c_size_t(span), ctypes.c_size_t(0),
                                   ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)), "reserve")
    timed_at = ctypes.c_ulonglong(va.value + 2 * counts[-1] * page)
    timed = create()
    held = []
    rows = []
    for n in counts:
        while len(held) < n:
            h = create()
            at = ctypes.c_ulonglong(va.value + 2 * len(held) * page)
            check(cuda.cuMemMap(at, ctypes.c_size_t(page), ctypes.c_size_t(0), h,
                                ctypes.c_ulonglong(0)), "map held")
            check(cuda.cuMemSetAccess(at, ctypes.c_size_t(page), ctypes.byref(acc),
                                      ctypes.c_size_t(1)), "access held")
            held.append(h)
        maps, unmaps = [], []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            check(cuda.cuMemMap(timed_at, ctypes.c_size_t(page), ctypes.c_size_t(0), timed,
                                ctypes.c_ulonglong(0)), "cuMemMap")
            check(cuda.cuMemSetAccess(timed_at, ctypes.c_size_t(page), ctypes.byref(acc),
                                      ctypes.c_size_t(1)), "cuMemSetAccess")
            t1 = time.perf_counter()
            check(cuda.cuMemUnmap(timed_at, ctypes.c_size_t(page)), "cuMemUnmap")
            t2 = time.perf_counter()
            maps.append((t1 - t0) * 1e6)
            unmaps.append((t2 - t1) * 1e6)
        rows.append({"held_handles": n, "map_access_us": statistics.mean(maps),
                     "map_access_median_us": statistics.median(maps),
                     "unmap_us": statistics.mean(unmaps)})
        print(json.dumps(rows[-1]), file=sys.stderr)
    for i, h in enumerate(held):
        check(cuda.cuMemUnmap(ctypes.c_ulonglong(va.value + 2 * i * page), ctypes.c_size_t(page)),
              "unmap held")
        check(cuda.cuMemRelease(h), "release held")
    check(cuda.cuMemRelease(timed), "release")
    check(cuda.cuMemAddressFree(va, ctypes.c_size_t(span)), "free")
    r = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
         "torch_reserved_bytes": torch.cuda.memory_reserved(), "reps": a.reps, "cases": rows}
    emit(r, a.out)


if __name__ == "__main__":
    main()
