"""Do VMM calls slow a training thread's kernel launches?

Times 800 small launches (torch.add) from the main thread while, on another
thread, nothing happens (none), 128 pages the GPU has just written are
unmapped (unmap_used), 2 MiB pages are mapped and unmapped back to back
(map_unmap) or one call per 200 us (duty); and with the main thread itself
unmapping one page every 8 launches (inline). Each with the GPU idle and busy
(60 4096x4096 matmuls queued first). Five interleaved rounds; prints the mean
us per launch and the calls made. The second thread is Python's, so it shares
the GIL with the launching thread (released during each driver call): read
the figures as an upper bound of the driver's own contention.

Usage: python3 bench/probes/vmm_launch_probe.py > out.json   (results:
bench/results/h100_unet_move_cost.json, launch_probe)
"""
import ctypes
import json
import os
import statistics
import sys
import threading
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vmm_ctypes import AccessDesc, AllocProp, check, cuda  # noqa: E402

torch.cuda.init()
dev = torch.cuda.current_device()
page = 2 << 20
N = 128
prop = AllocProp(type=1, requestedHandleTypes=0, loc_type=1, loc_id=dev)
handles = []
for _ in range(N):
    h = ctypes.c_ulonglong()
    check(cuda.cuMemCreate(ctypes.byref(h), ctypes.c_size_t(page), ctypes.byref(prop), ctypes.c_ulonglong(0)), "create")
    handles.append(h)
va = ctypes.c_ulonglong()
check(cuda.cuMemAddressReserve(ctypes.byref(va), ctypes.c_size_t(page * N), ctypes.c_size_t(0), ctypes.c_ulonglong(0), ctypes.c_ulonglong(0)), "reserve")
acc = AccessDesc(loc_type=1, loc_id=dev, flags=3)
addr = lambda i: ctypes.c_ulonglong(va.value + i * page)
def map1(i):
    check(cuda.cuMemMap(addr(i), ctypes.c_size_t(page), ctypes.c_size_t(0), handles[i], ctypes.c_ulonglong(0)), "map")
    check(cuda.cuMemSetAccess(addr(i), ctypes.c_size_t(page), ctypes.byref(acc), ctypes.c_size_t(1)), "access")
def unmap1(i):
    check(cuda.cuMemUnmap(addr(i), ctypes.c_size_t(page)), "unmap")

x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
y = torch.empty_like(x)
a = torch.zeros(256, device="cuda"); b = torch.empty_like(a)
mapped = [False] * N

def prepare_used():
    for i in range(N):
        if not mapped[i]:
            map1(i); mapped[i] = True
        # the GPU writes the page (its TLB entries are live)
        check(cuda.cuMemsetD32Async(addr(i), ctypes.c_uint(7), ctypes.c_size_t(page // 4), ctypes.c_void_p(0)), "memset")
    torch.cuda.synchronize()

def bg(mode, stop, counts):
    i = 0
    while not stop.is_set():
        if mode == "unmap_used":
            if i >= N: break
            unmap1(i); mapped[i] = False
        elif mode == "map_unmap":
            j = i % N
            if mapped[j]:
                unmap1(j); mapped[j] = False
            else:
                map1(j); mapped[j] = True
        elif mode == "duty":
            j = i % N
            if mapped[j]:
                unmap1(j); mapped[j] = False
            else:
                map1(j); mapped[j] = True
            time.sleep(200e-6)
        i += 1
    counts.append(i)

def trial(mode, busy, inline_every=0):
    prepare_used()
    if busy:
        for _ in range(60):
            torch.mm(x, x, out=y)
    stop, counts = threading.Event(), []
    t = None
    if mode not in ("none", "inline"):
        t = threading.Thread(target=bg, args=(mode, stop, counts)); t.start()
    n = 800
    k = 0
    t0 = time.perf_counter()
    for j in range(n):
        torch.add(a, 1, out=b)
        if mode == "inline" and j % 8 == 0 and k < N:
            unmap1(k); mapped[k] = False; k += 1
    t1 = time.perf_counter()
    stop.set()
    if t: t.join()
    torch.cuda.synchronize()
    return (t1 - t0) / n * 1e6, (counts[0] if counts else k)

res = {}
modes = ["none", "unmap_used", "map_unmap", "duty", "inline"]
for busy in (False, True):
    for m in modes:
        trial(m, busy)
for r in range(5):
    for busy in (False, True):
        for m in modes:
            us, c = trial(m, busy)
            res.setdefault(f"{'busy' if busy else 'idle'}/{m}", []).append((round(us, 2), c))
out = {k: {"us_per_launch": statistics.mean(u for u, _ in v), "calls": statistics.mean(c for _, c in v), "rounds": v} for k, v in res.items()}
print(json.dumps(out, indent=1))
