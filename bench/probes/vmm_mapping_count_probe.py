"""Do many VMM mappings in a process slow its launches, copies and memsets?

A growable cache of 4 MiB chunks holds thousands of mappings (9.4 GiB is
~2,400), where PyTorch's expandable_segments holds a few hundred larger
ones. If the driver looks a pointer up in a structure that grows with the
mappings (a copy or memset checks its pointer when queued), every such call
of a training step pays for it. This maps M more 2 MiB handles (with access,
as an allocator does) at M = 0, 500, 2000, 5000 and times, from PyTorch,
2,000 small kernel launches (torch.add), device-to-device copies
(cudaMemcpyAsync: Tensor.copy_) and memsets (cudaMemsetAsync through the
driver, on PyTorch's memory), in microseconds per call, median of 5.

Usage: python3 bench/probes/vmm_mapping_count_probe.py [--out FILE]
"""
import ctypes
import statistics
import sys
import os
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmm_ctypes import AccessDesc, AllocProp, check, cuda, emit  # noqa: E402

PAGE = 2 << 20
COUNTS = (0, 500, 2000, 5000)
CALLS = 2000


def timed(fn):
    runs = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(CALLS):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        runs.append((t1 - t0) / CALLS * 1e6)
    return statistics.median(runs)


def main():
    out = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    torch.cuda.init()
    dev = torch.cuda.current_device()
    a = torch.ones(1024, device="cuda")
    b = torch.ones(1024, device="cuda")
    c = torch.empty(1024, device="cuda")
    stream = torch.cuda.current_stream().cuda_stream
    prop = AllocProp(type=1, requestedHandleTypes=0, loc_type=1, loc_id=dev)
    access = AccessDesc(loc_type=1, loc_id=dev, flags=3)
    va = ctypes.c_ulonglong()
    check(cuda.cuMemAddressReserve(ctypes.byref(va), ctypes.c_size_t(PAGE * max(COUNTS)),
                                   ctypes.c_size_t(0), ctypes.c_ulonglong(0),
                                   ctypes.c_ulonglong(0)), "reserve")
    handles = []
    rows = []
    for m in COUNTS:
        while len(handles) < m:
            h = ctypes.c_ulonglong()
            check(cuda.cuMemCreate(ctypes.byref(h), ctypes.c_size_t(PAGE), ctypes.byref(prop),
                                   ctypes.c_ulonglong(0)), "create")
            at = ctypes.c_ulonglong(va.value + len(handles) * PAGE)
            check(cuda.cuMemMap(at, ctypes.c_size_t(PAGE), ctypes.c_size_t(0), h,
                                ctypes.c_ulonglong(0)), "map")
            check(cuda.cuMemSetAccess(at, ctypes.c_size_t(PAGE), ctypes.byref(access),
                                      ctypes.c_size_t(1)), "access")
            handles.append(h)
        memset_ptr = ctypes.c_ulonglong(c.data_ptr())
        # The newest mapping too: a lookup that depends on where the pointer
        # falls among the mappings shows there.
        last_ptr = ctypes.c_ulonglong(va.value + (len(handles) - 1) * PAGE) if handles else None
        row = {"mappings": m,
               "launch_us": timed(lambda: torch.add(a, b, out=c)),
               "copy_us": timed(lambda: c.copy_(a)),
               "memset_us": timed(lambda: check(cuda.cuMemsetD32Async(
                   memset_ptr, ctypes.c_uint(0), ctypes.c_size_t(1024),
                   ctypes.c_void_p(stream)), "memset"))}
        if last_ptr is not None:
            row["memset_vmm_us"] = timed(lambda: check(cuda.cuMemsetD32Async(
                last_ptr, ctypes.c_uint(0), ctypes.c_size_t(1024), ctypes.c_void_p(stream)),
                "memset"))
        rows.append(row)
        print(row, flush=True)
    torch.cuda.synchronize()
    for i, h in enumerate(handles):
        cuda.cuMemUnmap(ctypes.c_ulonglong(va.value + i * PAGE), ctypes.c_size_t(PAGE))
        cuda.cuMemRelease(h)
    cuda.cuMemAddressFree(va, ctypes.c_size_t(PAGE * max(COUNTS)))
    emit({"device": torch.cuda.get_device_name(), "calls": CALLS, "rows": rows}, out)


if __name__ == "__main__":
    main()
