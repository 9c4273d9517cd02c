"""Does the size of the physical handles behind a buffer change how fast the
GPU reads it?

ccalloc maps a block's memory in chunks (2 MiB pages at its edges, at most
16 MiB inside); PyTorch's expandable segments map 20 MiB pages; classic
segments are one cudaMalloc. If the GPU's address translation reaches further
over larger physical allocations, kernels over memory mapped in small handles
run slower, and the time a policy costs is on the GPU, not only on the host.

Maps one virtual range of --gib GiB several ways (handles of each of
--handles-mib, default 2 and 16 MiB, and one of the whole range: cuMemCreate +
cuMemMap + cuMemSetAccess through ctypes),
wraps it as a torch tensor (__cuda_array_interface__), and times, with CUDA
events, interleaved over --rounds rounds: a streaming copy of one half into
the other, and a random-row gather (index_select) over the whole range, the
access pattern that strains translation most. Prints GB/s per layout and the
ratio to the one-handle layout.

Usage: python3 bench/probes/vmm_page_probe.py [--gib 4] [--rounds 5] [--handles-mib 2,4,16]
       [--out FILE]
"""
import argparse
import ctypes
import json
import statistics

import torch

from vmm_ctypes import AccessDesc, AllocProp, check, cuda  # noqa: E402 (bench/ is the script's folder)

MiB = 1 << 20


class Mapped:
    """A virtual range of `size` bytes backed by handles of `handle` bytes."""

    def __init__(self, size, handle, dev):
        self.size, self.handles = size, []
        self.va = ctypes.c_ulonglong()
        check(cuda.cuMemAddressReserve(ctypes.byref(self.va), ctypes.c_size_t(size),
                                       ctypes.c_size_t(0), ctypes.c_ulonglong(0),
                                       ctypes.c_ulonglong(0)), "reserve")
        prop = AllocProp(type=1, requestedHandleTypes=0, loc_type=1, loc_id=dev)
        for off in range(0, size, handle):
            h = ctypes.c_ulonglong()
            check(cuda.cuMemCreate(ctypes.byref(h), ctypes.c_size_t(handle), ctypes.byref(prop),
                                   ctypes.c_ulonglong(0)), "cuMemCreate")
            check(cuda.cuMemMap(ctypes.c_ulonglong(self.va.value + off), ctypes.c_size_t(handle),
                                ctypes.c_size_t(0), h, ctypes.c_ulonglong(0)), "cuMemMap")
            self.handles.append((off, h))
        acc = AccessDesc(loc_type=1, loc_id=dev, flags=3)
        check(cuda.cuMemSetAccess(self.va, ctypes.c_size_t(size), ctypes.byref(acc),
                                  ctypes.c_size_t(1)), "cuMemSetAccess")

    def tensor(self, dtype=torch.float32):
        elems = self.size // torch.tensor([], dtype=dtype).element_size()

        class View:
            __cuda_array_interface__ = {"shape": (elems,), "typestr": "<f4",
                                        "data": (self.va.value, False), "version": 3}
        return torch.as_tensor(View(), device="cuda")

    def free(self):
        torch.cuda.synchronize()
        for off, h in self.handles:
            handle_size = self.size // len(self.handles)
            check(cuda.cuMemUnmap(ctypes.c_ulonglong(self.va.value + off),
                                  ctypes.c_size_t(handle_size)), "unmap")
            check(cuda.cuMemRelease(h), "release")
        check(cuda.cuMemAddressFree(self.va, ctypes.c_size_t(self.size)), "free range")


def timed(fn, reps):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    fn()
    torch.cuda.synchronize()
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / reps


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gib", type=int, default=4)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--handles-mib", default="2,16",
                   help="comma-separated handle sizes in MiB, each dividing --gib GiB")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    torch.cuda.init()
    dev = torch.cuda.current_device()
    size = a.gib << 30
    layouts = {f"{m}MiB": m * MiB for m in (int(x) for x in a.handles_mib.split(","))}
    for name, handle in layouts.items():
        if handle <= 0 or size % handle:
            p.error(f"--handles-mib: {name} does not divide {a.gib} GiB")
    layouts["whole"] = size
    rows = 1 << 20
    results = {k: {"copy_GBps": [], "gather_GBps": []} for k in layouts}
    for _ in range(a.rounds):
        for name, handle in layouts.items():
            m = Mapped(size, handle, dev)
            t = m.tensor()
            half = t.numel() // 2
            src, dst = t[:half], t[half:]
            ms = timed(lambda: dst.copy_(src), 5)
            results[name]["copy_GBps"].append(2 * half * 4 / ms / 1e6)
            # Random rows of 1 KiB over the whole range: every row a new page.
            table = t.view(-1, 256)
            idx = torch.randint(0, table.shape[0], (rows,), device="cuda")
            out = torch.empty(rows, 256, device="cuda")
            ms = timed(lambda: torch.index_select(table, 0, idx, out=out), 5)
            results[name]["gather_GBps"].append(rows * 1024 / ms / 1e6)
            del t, src, dst, table, out, idx
            m.free()
    summary = {"gpu": torch.cuda.get_device_name(), "gib": a.gib, "rounds": a.rounds}
    for name in layouts:
        for k in ("copy_GBps", "gather_GBps"):
            summary[f"{name}_{k}"] = statistics.mean(results[name][k])
    for name in layouts:
        for k in ("copy_GBps", "gather_GBps"):
            summary[f"{name}_{k}_vs_whole"] = summary[f"{name}_{k}"] / summary[f"whole_{k}"]
    summary["raw"] = results
    print(json.dumps({k: v for k, v in summary.items() if k != "raw"}, indent=1))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    main()
