"""ccalloc as CuPy's allocator, sharing PyTorch's ccalloc cache.

    import ccalloc.torch, ccalloc.cupy
    ccalloc.torch.enable()        # first: ccalloc becomes PyTorch's allocator
    ccalloc.cupy.enable()         # then CuPy allocates from the same cache
    import cupy, torch
    a = cupy.zeros(1 << 20)       # counted in torch.cuda.memory_allocated()
    t = torch.from_dlpack(a)      # no copy, either way (cupy.from_dlpack(t))

How. enable() sets cupy.cuda.set_allocator(fn): fn(nbytes) takes a block
with torch.cuda.caching_allocator_alloc(nbytes, device, stream), PyTorch's
public entry to its installed allocator, which ccalloc.torch.enable() made
ccalloc (either mode); the block goes back with caching_allocator_delete
when CuPy releases the memory (the owner of the cupy.cuda.UnownedMemory
handed out). So PyTorch and CuPy share one cache, one memory limit and
one set of statistics: no second pool holds memory the other could use.
Without ccalloc.torch.enable() first, enable() refuses rather than make a
second cache.

Streams. A block is allocated on CuPy's current stream at the allocation
(cupy.cuda.get_current_stream(); the null stream is handle 0, PyTorch's
default stream, so blocks move between the two with no synchronisation).
CuPy frees a block when the last array using it dies, without a stream;
ccalloc then treats it exactly like a freed PyTorch tensor: the block is
free at once for later work on the stream it was allocated on (work on one
stream runs in order), and it is given to another stream only after
whatever was recorded on it (record_stream) has finished. So an array used
on a stream other than the one it was allocated on must be recorded there
(ccalloc.cupy.record_stream(array, stream), PyTorch's
tensor.record_stream(stream)) or synchronised before it dies, as a PyTorch
tensor must. The per-thread default stream (CUPY_CUDA_PER_THREAD_DEFAULT_STREAM=1)
is a stream of its own (handle 2), not PyTorch's default stream.
"""

import threading

__all__ = ["enable", "disable", "is_enabled", "record_stream", "allocator"]

_lock = threading.Lock()
_installed = None     # (the allocator CuPy had, ours)


def _import_cupy():
    try:
        import cupy
    except ImportError as e:
        raise ImportError(f"ccalloc.cupy needs the 'cupy' package, which could not be imported ({e}); "
                          "install the build for your CUDA (pip install cupy-cuda12x, ...)",
                          name="cupy") from e
    return cupy


def _device_index(device):
    if device is None:
        return None
    from . import torch as ct
    return ct._device_index(device)


class _Block:
    """The owner of the memory CuPy is handed: when CuPy drops the last
    reference (its UnownedMemory is released), the block goes back to
    ccalloc through `free`."""

    __slots__ = ("ptr", "free", "__weakref__")

    def __init__(self, ptr, free):
        self.ptr = ptr
        self.free = free

    def __del__(self):
        ptr, self.ptr = self.ptr, 0
        if ptr:
            try:
                self.free(ptr)
            except Exception:   # interpreter shutdown: torch may be gone already
                pass


def stream_handle(stream):
    """The CUDA handle of a CuPy stream (None and the null stream: 0)."""
    if stream is None:
        return 0
    return int(getattr(stream, "ptr", 0) or 0)


def allocator(cupy, alloc, free, device=None, fallback=None):
    """The function CuPy calls for memory (cupy.cuda.set_allocator):
    fn(nbytes) -> cupy.cuda.MemoryPointer over ptr = alloc(nbytes, device,
    stream) on CuPy's current device and stream, freed by free(ptr) when
    CuPy releases it. device: serve only that device; allocations on
    another go to `fallback` (the allocator CuPy had). enable() passes
    torch.cuda.caching_allocator_alloc and caching_allocator_delete."""
    cuda = cupy.cuda

    def ccalloc_cupy_malloc(nbytes):
        dev = cuda.runtime.getDevice()
        if device is not None and dev != device:
            if fallback is None:
                raise RuntimeError(f"ccalloc.cupy serves device {device} only, not {dev}")
            return fallback(nbytes)
        nbytes = int(nbytes)
        if nbytes == 0:
            return cuda.MemoryPointer(cuda.UnownedMemory(0, 0, None, dev), 0)
        stream = stream_handle(cuda.get_current_stream())
        ptr = alloc(nbytes, dev, stream)
        owner = _Block(ptr, free)
        return cuda.MemoryPointer(cuda.UnownedMemory(ptr, nbytes, owner, dev), 0)
    return ccalloc_cupy_malloc


def enable(device=None):
    """Makes ccalloc CuPy's allocator for this process, through the allocator
    ccalloc.torch.enable() installed into PyTorch (so one cache serves both).
    device: None serves every device (CuPy's current device at each
    allocation); an index, "cuda:N" or torch.device serves that one only,
    other devices keeping the allocator CuPy had. What CuPy's default memory
    pool holds unused is given back to the device. Returns the function set."""
    global _installed
    cupy = _import_cupy()
    from . import torch as ct
    if not ct.is_enabled():
        raise RuntimeError(
            "ccalloc.cupy.enable() needs ccalloc.torch.enable() first: CuPy's memory comes from "
            "the ccalloc allocator PyTorch uses, so that both share one cache (another ccalloc "
            "for CuPy alone would be a second cache). Call ccalloc.torch.enable() before CUDA is "
            "initialised, then ccalloc.cupy.enable().")
    import torch
    index = _device_index(device)
    with _lock:
        if _installed is not None:
            return _installed[1]
        previous = cupy.cuda.get_allocator() if hasattr(cupy.cuda, "get_allocator") else None
        fn = allocator(cupy, torch.cuda.caching_allocator_alloc, torch.cuda.caching_allocator_delete,
                       index, previous)
        cupy.cuda.set_allocator(fn)
        _installed = (previous, fn)
    pool = getattr(cupy, "get_default_memory_pool", None)
    if pool is not None:
        pool().free_all_blocks()
    return fn


def disable():
    """Gives CuPy back the allocator it had. Blocks already handed out stay
    ccalloc's and go back to it when CuPy releases them."""
    global _installed
    cupy = _import_cupy()
    with _lock:
        if _installed is None:
            return
        cupy.cuda.set_allocator(_installed[0])
        _installed = None


def is_enabled():
    return _installed is not None


def record_stream(array, stream):
    """Marks the block under a CuPy array (or MemoryPointer) as used on
    `stream` (a cupy.cuda.Stream or a handle): when it is freed, ccalloc
    gives it to another stream only after the work queued on `stream` so far
    has finished, as tensor.record_stream(stream) does for PyTorch."""
    from . import torch as ct
    data = getattr(array, "data", array)
    mem = getattr(data, "mem", None)
    if mem is None:
        raise TypeError(f"ccalloc.cupy.record_stream: not a CuPy array or MemoryPointer: {array!r}")
    handle = stream if isinstance(stream, int) else stream_handle(stream)
    # The block's start (an array's data may be at an offset in it); a
    # block ccalloc did not hand out is refused (CcallocError).
    ct._require_plugin().record_stream(int(mem.ptr), handle)
