"""ccalloc as PyTorch's CUDA caching allocator.

    import ccalloc.torch
    ccalloc.torch.enable()            # before anything touches CUDA
    ...train as usual...
    print(ccalloc.torch.memory_summary())

How it is wired. By default (mode="extension") enable() builds a small
extension against the installed PyTorch (csrc/ccalloc_ext.cpp; a few seconds
the first time, then cached) that implements PyTorch's whole CUDAAllocator
interface over the plugin and installs it with PyTorch's own
changeCurrentAllocator(). Everything in torch.cuda then reaches ccalloc with
no patching: statistics and peaks, empty_cache, memory fraction,
record_stream, cacheInfo (cudnn benchmark mode), CUDA graphs and their
private pools (torch.cuda.graph, torch.compile's cudagraph trees, MemPool),
IPC of CUDA tensors (torch.multiprocessing), peer access, memory history
(torch.cuda.memory._record_memory_history / _snapshot / _dump_snapshot) and
torch.OutOfMemoryError carrying ccalloc's report.

Without a compiler or the CUDA headers, enable() falls back (with a warning)
to mode="pluggable": torch.cuda.memory.CUDAPluggableAllocator over the
plugin's malloc/free, with the hooks PyTorch exposes (set_reset_fn,
set_memory_fraction_fn, set_record_stream_fn), an OOM shim (_shim.py) and,
with patch_torch=True, torch.cuda's statistics functions pointed at the ones
here. That mode has no CUDA graphs, IPC or memory history: PyTorch's
pluggable allocator does not support them.

PyTorch refuses to swap its allocator once CUDA is initialised, so enable()
checks that first.
"""

import collections
import os
import sys
import threading
import warnings

from . import _ext
from . import _plugin
from . import _shim

# Keys torch.cuda.memory_stats() has in some PyTorch versions that ccalloc has
# no counter for; reported as 0 when the installed PyTorch documents them
# (ccalloc has no preemptive-rejection policy, so 0 is the true count).
_TORCH_ONLY_KEYS = ("num_oom_rejections",)

_lock = threading.Lock()
_plugin_obj = None   # the loaded Plugin (load() or enable())
_state = None        # what enable() installed


class _State:
    def __init__(self):
        self.allocator = None   # torch.cuda.memory.CUDAPluggableAllocator (pluggable mode)
        self.extension = None   # the loaded extension module (extension mode)
        self.shim = None        # (path, ctypes.CDLL) of the OOM shim
        self.oom_error = None
        self.hooks = {}
        self.originals = {}     # (module name, attribute) -> original object


# --- loading and enabling -----------------------------------------------------

def load(library=None):
    """Loads the plugin without installing it into PyTorch.

    enable() calls this. On its own it lets tools and host-only tests (with
    CCALLOC_TORCH_SIMULATE=<capacity>) read statistics of a plugin they drive
    through ccalloc.Plugin.
    """
    global _plugin_obj
    plugin = _plugin.load_library(library)
    with _lock:
        if _plugin_obj is not None and _plugin_obj.path != plugin.path:
            raise RuntimeError(
                f"ccalloc: {_plugin_obj.path} is already loaded; cannot switch to {plugin.path}")
        _plugin_obj = plugin
    return plugin


# PyTorch's own allocator keys, which ccalloc's parser takes with PyTorch's
# meaning (allocator/cache/options.cc); the rest of a PyTorch setting concerns
# PyTorch's allocators only.
_PYTORCH_KEYS = ("max_split_size_mb", "roundup_power2_divisions", "garbage_collection_threshold",
                 "expandable_segments", "graph_capture_record_stream_reuse",
                 "per_process_memory_fraction", "backend",
                 "release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
                 "pinned_num_register_threads", "pinned_use_background_threads")


def pytorch_setting(environ=None):
    """(variable, its items) of PyTorch's own allocator setting, as PyTorch
    reads it: PYTORCH_ALLOC_CONF, or when that is unset its older name
    PYTORCH_CUDA_ALLOC_CONF; the items split on the commas outside brackets."""
    env = os.environ if environ is None else environ
    var = "PYTORCH_ALLOC_CONF" if env.get("PYTORCH_ALLOC_CONF") else "PYTORCH_CUDA_ALLOC_CONF"
    return var, _split_conf(env.get(var, ""))


def conf_from_environment(environ=None):
    """The settings enable() uses when given none.

    PyTorch's PYTORCH_ALLOC_CONF (or, when that is unset, its older name
    PYTORCH_CUDA_ALLOC_CONF), so that a job's existing settings keep their
    meaning, then CCALLOC_CONF after it (its keys win). Of PyTorch's setting
    only the keys ccalloc shares with PyTorch are taken; others (those of
    PyTorch's newer or other allocators) are named in a warning and left out.
    None when neither is set.
    """
    env = os.environ if environ is None else environ
    var, setting = pytorch_setting(env)
    items, dropped = [], []
    for item in setting:
        key = item.split(":", 1)[0].strip()
        (items if key in _PYTORCH_KEYS else dropped).append(item)
    if dropped:
        warnings.warn(f"ccalloc: {var} keys that ccalloc does not share with PyTorch are left "
                      f"out: {', '.join(dropped)}", RuntimeWarning, stacklevel=3)
    own = env.get("CCALLOC_CONF", "").strip()
    if own:
        items.append(own)
    return ",".join(items) if items else None


def _split_conf(conf):
    """Splits "a:1,b:[x:1,y:2]" on the commas outside brackets."""
    items, depth, start = [], 0, 0
    for i, ch in enumerate(conf + ","):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        elif ch == "," and depth == 0:
            item = conf[start:i].strip()
            if item:
                items.append(item)
            start = i + 1
    return items


def enable(conf=None, library=None, *, mode="auto", patch_torch=True, oom_error="auto",
           verbose=False):
    """Makes ccalloc PyTorch's CUDA allocator for this process.

    conf: PYTORCH_CUDA_ALLOC_CONF-style settings for ccalloc
        ("expandable_segments:False,memory_limit:20GiB"); None reads PyTorch's
        PYTORCH_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF and then CCALLOC_CONF
        (conf_from_environment).
        Invalid settings raise before anything is installed.
    library: path of libccalloc_torch.so (see ccalloc.find_library).
    mode: "extension" installs ccalloc as PyTorch's whole CUDA allocator
        (CUDA graphs, torch.compile, cudnn benchmark, IPC, memory history and
        every torch.cuda statistic go through it; built against the installed
        PyTorch on first use, then cached); "pluggable" installs only
        CUDAPluggableAllocator's malloc and free; "auto" (the default) is
        "extension", falling back to "pluggable" with a warning when the
        extension cannot be built (no compiler or CUDA headers).
    patch_torch, oom_error: for the pluggable mode only. patch_torch points
        torch.cuda's statistics functions at ccalloc's; oom_error is "auto"
        (torch.OutOfMemoryError if the shim builds, else RuntimeError),
        "torch" (shim required) or "runtime".

    Must run before CUDA is initialised. Returns status().
    """
    global _state
    if mode not in ("auto", "extension", "pluggable"):
        raise ValueError(f"ccalloc: mode must be 'auto', 'extension' or 'pluggable', not {mode!r}")
    if oom_error not in ("auto", "torch", "runtime"):
        raise ValueError(f"ccalloc: oom_error must be 'auto', 'torch' or 'runtime', not {oom_error!r}")
    import torch

    if _state is not None:
        if library is not None and os.path.realpath(_plugin.find_library(library)) != _plugin_obj.path:
            raise RuntimeError(f"ccalloc: already enabled with {_plugin_obj.path}")
        if conf is not None:
            raise RuntimeError("ccalloc: already enabled; conf can only be given to the first enable()")
        return status()
    if torch.cuda.is_initialized():
        raise RuntimeError(
            "ccalloc.torch.enable() must run before CUDA is initialised in this process "
            "(torch.cuda.is_initialized() is True): PyTorch cannot swap its allocator after "
            "that. Call it first thing, before any CUDA tensor or torch.cuda call that "
            "initialises CUDA.")
    plugin = load(library)
    if conf is None:
        conf = conf_from_environment()
    # Validates the settings now rather than at the first allocation.
    plugin.configure(conf)
    plugin.options(0)

    state = _State()
    if mode in ("auto", "extension"):
        try:
            ext = _ext.load(torch, plugin.path, verbose=verbose)
        except _ext.ExtensionError as e:
            if mode == "extension":
                raise
            warnings.warn(f"ccalloc: the PyTorch extension could not be built, so only "
                          f"CUDAPluggableAllocator's malloc/free are installed (no CUDA "
                          f"graphs, IPC or memory history): {e}", RuntimeWarning, stacklevel=2)
        else:
            ext.install()
            state.extension = ext
            state.oom_error = "torch.OutOfMemoryError"
            _patch_allocator_settings(torch, state)
            with _lock:
                _state = state
            return status()
    malloc_lib, malloc_name, free_name = plugin.path, "ccalloc_torch_malloc", "ccalloc_torch_free"
    state.oom_error = "RuntimeError"
    if oom_error in ("auto", "torch"):
        try:
            import ctypes
            path = _shim.build_shim(torch, verbose=verbose)
            shim = ctypes.CDLL(path)
            shim.ccalloc_shim_bind.argtypes = [ctypes.c_void_p] * 3
            shim.ccalloc_shim_bind.restype = None
            shim.ccalloc_shim_bind(plugin.address("ccalloc_torch_try_malloc"),
                                   plugin.address("ccalloc_torch_free"),
                                   plugin.address("ccalloc_torch_last_error"))
            state.shim = (path, shim)
            malloc_lib, malloc_name, free_name = path, "ccalloc_shim_malloc", "ccalloc_shim_free"
            state.oom_error = "torch.OutOfMemoryError"
        except _shim.ShimError as e:
            if oom_error == "torch":
                raise
            warnings.warn(f"ccalloc: out-of-memory errors will be RuntimeError, not "
                          f"torch.OutOfMemoryError: {e}", RuntimeWarning, stacklevel=2)

    allocator = torch.cuda.memory.CUDAPluggableAllocator(malloc_lib, malloc_name, free_name)
    handle = allocator.allocator()
    hooks = (
        ("set_reset_fn", "ccalloc_torch_empty_cache_hook", "empty_cache"),
        ("set_memory_fraction_fn", "ccalloc_torch_memory_fraction_hook", "set_per_process_memory_fraction"),
        ("set_record_stream_fn", "ccalloc_torch_record_stream_hook", "record_stream"),
    )
    missing = []
    for setter, export, what in hooks:
        if hasattr(handle, setter):
            getattr(handle, setter)(plugin.address(export))
            state.hooks[what] = f"PyTorch hook {setter}"
        else:
            missing.append(what)
    torch.cuda.memory.change_current_allocator(allocator)
    state.allocator = allocator
    for what in missing:
        _wrap_missing_hook(torch, state, what)
    _patch_allocator_settings(torch, state)
    if patch_torch:
        _patch_torch_stats(torch, state)
    with _lock:
        _state = state
    return status()


def is_enabled():
    return _state is not None


def status():
    """What enable() installed: library, shim, exception type on OOM, hooks, patches, options."""
    plugin = _plugin_obj
    return {
        "enabled": _state is not None,
        "mode": (None if _state is None else "extension" if _state.extension else "pluggable"),
        "library": plugin.path if plugin else None,
        "shim": _state.shim[0] if _state and _state.shim else None,
        "oom_error": _state.oom_error if _state else None,
        "hooks": dict(_state.hooks) if _state else {},
        "patched": sorted(f"{m}.{a}" for m, a in _state.originals) if _state else [],
        "options": plugin.options(0) if plugin else None,
    }


def _replace(state, module, name, new):
    if not hasattr(module, name):
        return
    key = (module.__name__, name)
    if key not in state.originals:
        state.originals[key] = getattr(module, name)
    setattr(module, name, new)


def _wrap_missing_hook(torch, state, what):
    """The documented fallback for a PyTorch without a hook setter: wrap the
    Python entry point so that it reaches ccalloc as well. Calls made from C++
    inside PyTorch do not pass through it."""
    if what == "empty_cache":
        original = torch.cuda.memory.empty_cache

        def empty_cache_wrapper():
            original()
            empty_cache()
        for module in (torch.cuda, torch.cuda.memory):
            _replace(state, module, "empty_cache", empty_cache_wrapper)
    elif what == "set_per_process_memory_fraction":
        for module in (torch.cuda, torch.cuda.memory):
            _replace(state, module, "set_per_process_memory_fraction", set_per_process_memory_fraction)
    elif what == "record_stream":
        original = torch.Tensor.record_stream

        def record_stream_wrapper(self, stream):
            original(self, stream)
            if self.is_cuda:
                code = _require_plugin().lib.ccalloc_torch_record_stream(
                    self.untyped_storage().data_ptr(), stream.cuda_stream)
                if code not in (_plugin.OK, _plugin.INVALID_ARGUMENT):
                    _require_plugin()._check(code)
        _replace(state, torch.Tensor, "record_stream", record_stream_wrapper)
    state.hooks[what] = "wrapped Python function (PyTorch has no hook setter)"


def _patch_torch_stats(torch, state):
    this = sys.modules[__name__]
    for module in (torch.cuda, torch.cuda.memory):
        for name in ("memory_stats", "memory_stats_as_nested_dict", "reset_peak_memory_stats",
                     "reset_accumulated_memory_stats", "memory_snapshot",
                     "get_per_process_memory_fraction"):
            _replace(state, module, name, getattr(this, name))


# --- helpers ------------------------------------------------------------------

def _require_plugin():
    if _plugin_obj is None:
        raise RuntimeError("ccalloc: the plugin is not loaded; call ccalloc.torch.enable() first")
    return _plugin_obj


def _device_index(device):
    """PyTorch's rules: None is the current device; ints, "cuda:N" and
    torch.device are accepted. Without PyTorch, None is device 0."""
    if device is None:
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            return torch.cuda.current_device()
        return 0
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = device.strip()
        if device == "cuda":
            return _device_index(None)
        if device.startswith("cuda:"):
            return int(device[5:])
        raise ValueError(f"ccalloc: not a CUDA device: {device!r}")
    index = getattr(device, "index", None)
    if getattr(device, "type", "cuda") != "cuda":
        raise ValueError(f"ccalloc: not a CUDA device: {device!r}")
    return _device_index(None) if index is None else index


def _torch_only_keys():
    torch = sys.modules.get("torch")
    if torch is None:
        return ()
    original = _state.originals.get(("torch.cuda.memory", "memory_stats")) if _state else None
    fn = original or getattr(torch.cuda.memory, "memory_stats", None)
    doc = getattr(fn, "__doc__", None) or ""
    return tuple(k for k in _TORCH_ONLY_KEYS if f'"{k}"' in doc)


# --- the torch.cuda-compatible API ---------------------------------------------

def memory_stats(device=None):
    """ccalloc's counters under exactly the keys of torch.cuda.memory_stats()."""
    raw = _require_plugin().raw_stats(_device_index(device))
    stats = {k: v for k, v in raw.items() if not k.startswith("ccalloc.")}
    for key in _torch_only_keys():
        stats.setdefault(key, 0)
    return collections.OrderedDict(sorted(stats.items()))


def memory_stats_as_nested_dict(device=None):
    nested = {}
    for key, value in memory_stats(device).items():
        node = nested
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
    return nested


def ccalloc_counters(device=None):
    """The counters torch has no name for (num_maps, num_unmaps,
    num_stream_syncs, and the host time of the driver work: prepare_ns on the
    allocating thread, wait_ns of it waiting for queued work, worker_ns on the
    unmap worker; wait_under_block_ns, wait_trim_ns and wait_release_ns split
    the waits by what waited, and wait_under_block_bytes over
    num_waits_under_block is the mean size of a block that waited for pages
    under it; num_foreground_unmaps and foreground_unmap_ns,
    the unmaps the allocating thread made itself; map_ns and create_ns, its
    map calls with their access and its creates of new memory; driver_calls
    and driver_ns, every call into the driver the allocating thread made and
    its host time, background_driver_calls and background_driver_ns those of
    ccalloc's unmap worker, since the last reset_accumulated_memory_stats()),
    without the
    snapshot ccalloc_stats() takes: cheap enough to read after every training
    step."""
    raw = _require_plugin().raw_stats(_device_index(device))
    return {k[len("ccalloc."):]: v for k, v in raw.items() if k.startswith("ccalloc.")}


def ccalloc_stats(device=None):
    """ccalloc's own numbers: the counters torch has no name for, the memory
    limit, the options in force and fragmentation (now and over the run)."""
    plugin = _require_plugin()
    index = _device_index(device)
    out = ccalloc_counters(index)
    snap = plugin.snapshot(index)
    out["fragmentation"] = snap.get("fragmentation", {})
    out["segments"] = len(snap.get("segments", []))
    out["options"] = plugin.options(index)
    if index in plugin.devices():
        out["memory_limit"] = plugin.memory_limit(index)
    return out


def memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes.all.current"]


def max_memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes.all.peak"]


def memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes.all.current"]


def max_memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes.all.peak"]


def reset_peak_memory_stats(device=None):
    _require_plugin().reset_peak_stats(_device_index(device))


def reset_accumulated_memory_stats(device=None):
    _require_plugin().reset_accumulated_stats(_device_index(device))


def empty_cache():
    """Returns every wholly free cached segment / free mapped page, all devices."""
    _require_plugin().empty_cache(-1)


def memory_snapshot(mempool_id=None, include_traces=True):
    """Segments of every device, shaped like torch.cuda.memory_snapshot():
    address, total_size, allocated_size, active_size, requested_size, stream,
    segment_type, segment_pool_id, is_expandable, frames, blocks[{address,
    size, requested_size, state, frames}]; plus ccalloc's mapped_size and
    mapped_ranges for growable segments. (No stack traces: frames is empty.)"""
    if mempool_id is not None:
        raise NotImplementedError("ccalloc: memory pools (MemPool) are not supported")
    plugin = _require_plugin()
    segments = []
    for device in plugin.devices():
        for seg in plugin.snapshot(device)["segments"]:
            seg.setdefault("device", device)
            seg["segment_pool_id"] = (0, 0)
            seg["frames"] = []
            for block in seg["blocks"]:
                block["frames"] = []
            segments.append(seg)
    return segments


def memory_summary(device=None, abbreviated=False):
    """ccalloc's summary table (counters, retries, OOMs, fragmentation)."""
    return _require_plugin().summary(_device_index(device))


# What set_allocator_settings applies: the keys PyTorch's allocator reads at
# every request. The rest of a run-time setting is PyTorch's own business
# (its host allocator's pinned_* keys, release_lock_on_cudamalloc, backend)
# or fixed at enable() (expandable_segments, per_process_memory_fraction:
# set_per_process_memory_fraction changes the fraction).
_RUNTIME_KEYS = ("max_split_size_mb", "roundup_power2_divisions", "garbage_collection_threshold",
                 "graph_capture_record_stream_reuse")
_PYTORCH_ONLY_KEYS = ("release_lock_on_cudamalloc", "pinned_use_cuda_host_register",
                      "pinned_num_register_threads", "pinned_use_background_threads",
                      "pinned_reserve_segment_size_mb", "backend", "per_process_memory_fraction")
_warned_keys = set()


def set_allocator_settings(settings):
    """torch.cuda.memory._set_allocator_settings(settings) for ccalloc; enable()
    makes PyTorch's own call this after PyTorch has read the string.

    As in PyTorch, the keys its allocator reads at every request
    (max_split_size_mb, roundup_power2_divisions,
    garbage_collection_threshold) apply from now on, on every device, and
    those the string leaves out go back to PyTorch's defaults;
    graph_capture_record_stream_reuse applies from now on too and, left out,
    keeps its value, as in PyTorch. The pinned memory keys are PyTorch's
    host allocator's, which PyTorch applies itself. ccalloc's segments keep
    the kind they were enabled with: an expandable_segments value that
    differs is named in a RuntimeWarning, and so, once, is any other key of
    PyTorch's allocator that ccalloc does not know."""
    plugin = _require_plugin()
    items = _split_conf(settings)
    plugin.set_allocator_settings(",".join(
        item for item in items if item.partition(":")[0].strip() in _RUNTIME_KEYS))
    for item in items:
        key, _, value = (part.strip() for part in item.partition(":"))
        if key == "expandable_segments":
            asked = value in ("True", "true", "1")
            growable = "expandable_segments:True" in plugin.options(0)
            if asked != growable:
                kind = "growable" if growable else "classic"
                warnings.warn(f"ccalloc: expandable_segments:{value} set at run time; "
                              f"ccalloc's segments stay {kind}, as enable() made them "
                              f"(set the kind before enable(): CCALLOC_CONF or "
                              f"PYTORCH_CUDA_ALLOC_CONF)", RuntimeWarning, stacklevel=3)
        elif key not in _RUNTIME_KEYS and key not in _PYTORCH_ONLY_KEYS and key not in _warned_keys:
            _warned_keys.add(key)
            warnings.warn(f"ccalloc: {key} (set at run time) is a setting of PyTorch's own "
                          f"allocator; ccalloc does not apply it", RuntimeWarning, stacklevel=3)


# torch.cuda.memory._set_allocator_settings() reaches PyTorch's C++ through
# one of these, by version (2.9 on: the first); the wrapper lets PyTorch read
# the string first (its checks, its errors, its host allocator's keys).
_SETTINGS_ENTRY_POINTS = ("_accelerator_setAllocatorSettings",
                          "_cuda_cudaCachingAllocator_set_allocator_settings")


def _accepted_prefix(original, env):
    """The settings PyTorch holds after refusing env: its parser sets every
    key back to its default and applies the items in order until the one it
    refuses (a string whose unknown key comes first leaves the defaults). The
    items before that one are found by handing PyTorch ever longer prefixes;
    the first it refuses leaves its state as the refused call did."""
    items = _split_conf(env)
    for count in range(1, len(items) + 1):
        try:
            original(",".join(items[:count]))
        except Exception:  # noqa: BLE001 (PyTorch's own error was raised already)
            return ",".join(items[:count - 1])
    return env


def _patch_allocator_settings(torch, state):
    for name in _SETTINGS_ENTRY_POINTS:
        original = getattr(torch._C, name, None)
        if original is None:
            continue

        def settings_wrapper(env, _original=original):
            try:
                result = _original(env)
            except Exception:
                set_allocator_settings(_accepted_prefix(_original, env))
                raise
            set_allocator_settings(env)
            return result
        _replace(state, torch._C, name, settings_wrapper)
        state.hooks["allocator_settings"] = f"wrapped torch._C.{name}"


def set_per_process_memory_fraction(fraction, device=None):
    """Caps reserved memory at fraction x the device's total (0 <= fraction <= 1;
    0 lets nothing be allocated), with PyTorch's checks and messages."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if fraction < 0 or fraction > 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _require_plugin().set_memory_fraction(fraction, _device_index(device))


def get_per_process_memory_fraction(device=None):
    """As PyTorch computes it: the bytes the fraction last set allows over the
    device's total; else the memory limit over the total; else 1.0."""
    return _require_plugin().memory_fraction(_device_index(device))


def set_memory_limit(nbytes, device=None):
    """Caps reserved memory at nbytes (0 removes the cap)."""
    _require_plugin().set_memory_limit(int(nbytes), _device_index(device))


def get_memory_limit(device=None):
    return _require_plugin().memory_limit(_device_index(device))


def record_stream(tensor, stream):
    """Same as tensor.record_stream(stream) once enabled (kept for symmetry)."""
    _require_plugin().record_stream(tensor.untyped_storage().data_ptr(), stream.cuda_stream)


class tag:
    """Tags the allocations this thread makes inside the block:

        with ccalloc.torch.tag("optimizer"):
            opt.step()

    Every allocation made on this thread meanwhile counts under the tag
    (tag_usage()); nested tags replace the outer one until they end. The tag
    is the calling thread's: work PyTorch runs on threads of its own (the
    autograd engine's backward pass) must set it there, from a hook.
    """

    def __init__(self, name):
        self._id = _require_plugin().tag_intern(str(name))
        self._previous = None

    def __enter__(self):
        self._previous = _plugin_obj.set_tag(self._id)
        return self

    def __exit__(self, *exc):
        _plugin_obj.set_tag(self._previous)
        return False


_regions = {}  # name -> region number (1, 2, ...), for this process


def _region_id(name):
    return _regions.setdefault(str(name), len(_regions) + 1)


class region:
    """Allocations this thread makes inside the block live in segments of the
    named region, which pause() can give back to the device and resume() take
    again at the same addresses:

        with ccalloc.torch.region("weights"):
            model = Model().cuda()
        ccalloc.torch.pause("weights")    # the memory goes back; tensors keep addresses
        ...                               # another job uses the GPU
        ccalloc.torch.resume("weights")   # new memory at the same addresses

    pause() keeps the contents in host memory by default (backup=True) and
    resume() restores them. As with tag(), the region is the calling
    thread's: the autograd engine allocates gradients on threads of its own,
    so create them inside the block (p.grad = torch.zeros_like(p)) and keep
    them (zero_grad(set_to_none=False)) for them to live in the region.
    """

    def __init__(self, name):
        _require_plugin()
        self._id = _region_id(name)
        self._previous = None

    def __enter__(self):
        self._previous = _plugin_obj.set_region(self._id)
        return self

    def __exit__(self, *exc):
        _plugin_obj.set_region(self._previous)
        return False


def _regions_for(name):
    if name is None:
        return list(_regions.values())
    if str(name) not in _regions:
        raise KeyError(f"ccalloc: no region named {name!r} was used")
    return [_regions[str(name)]]


def _devices_for(plugin, device):
    """(devices, skip_unused): None or "all" means every device ccalloc has
    an allocator on, where a region never used on one of them is skipped."""
    if device is None or device == "all":
        return plugin.devices(), True
    return [_device_index(device)], False


def pause(region=None, backup=True, device=None):
    """Gives back the device memory of `region` (None: every region used),
    live tensors' too, after waiting for the device's pending work; returns
    the bytes given back (summed over devices). Tensors keep their addresses,
    so pointers held elsewhere and captured CUDA graphs stay valid.

    backup=True first copies the live tensors' bytes to page-locked host
    memory (asynchronous copies in large runs on a stream of ccalloc's own;
    chunks are given back while later copies run) and resume() copies them
    back; the host buffer is kept for the next pause (pinning many GiB takes
    seconds) until empty_cache(); reserve_backup() pins it ahead, so that
    even the first pause is fast. A failed backup leaves the region running
    with its tensors intact. backup=False loses the contents (faster: nothing
    is copied).

    device: None or "all" pauses on every device ccalloc has an allocator
    on (regions never used on a device are skipped there); an int, "cuda:N"
    or torch.device pauses on that device only. Allocating in a paused
    region raises; freeing its tensors works."""
    plugin = _require_plugin()
    devices, skip = _devices_for(plugin, device)
    return sum(plugin.pause(r, d, backup=bool(backup), skip_unused=skip)
               for d in devices for r in _regions_for(region))


def resume(region=None, device=None):
    """Takes memory again under the live tensors of `region` (None: every
    region used) at the same addresses and restores their contents if the
    pause backed them up; returns the bytes taken. On failure the region
    stays paused (backup included) and resume() can be retried. device as
    for pause()."""
    plugin = _require_plugin()
    devices, skip = _devices_for(plugin, device)
    return sum(plugin.resume(r, d, skip_unused=skip)
               for d in devices for r in _regions_for(region))


def reserve_backup(region=None, device=None):
    """Pins now the page-locked host buffer that pause(backup=True) of
    `region` (None: every region used) needs, sized to its live tensors, so
    that the first pause is as fast as the next ones (pinning takes seconds
    for GiBs). Call it once after building the model, outside the timed
    path; the buffer is kept (empty_cache() keeps it) and grows at a pause
    that needs more. Returns the bytes pinned (summed). device as for
    pause()."""
    plugin = _require_plugin()
    devices, skip = _devices_for(plugin, device)
    return sum(plugin.reserve_backup(r, d, skip_unused=skip)
               for d in devices for r in _regions_for(region))


def tag_usage(device=None):
    """Bytes of live blocks per tag on `device`, now and at peak (since the last
    reset_peak_memory_stats): a list of {"tag", "name", "current_bytes",
    "peak_bytes", "blocks"} whose current_bytes add up to memory_allocated()."""
    return _require_plugin().tag_usage(_device_index(device))


def snapshot():
    """torch.cuda.memory._snapshot() with ccalloc's tags as a first frame
    {"filename": "ccalloc tag", "name": <tag>} of each trace entry and live
    block (ccalloc/history.py), for memory_viz. Needs extension mode and
    history on (torch.cuda.memory._record_memory_history())."""
    import torch
    from . import history
    plugin = _require_plugin()
    snap = torch.cuda.memory._snapshot()
    tags = history.block_tags_from_ccalloc(plugin.snapshot(d) for d in plugin.devices())
    history.add_tag_frames(snap, tags)
    return snap


def dump_snapshot(path="dump_snapshot.pickle"):
    """Like torch.cuda.memory._dump_snapshot(path), with ccalloc's tags."""
    from . import history
    return history.dump(snapshot(), path)


def profile(model, optimizer=None, **kwargs):
    """A MemoryProfiler (ccalloc/profiler.py) attached to `model` and
    `optimizer`: per step and phase, every allocated byte by kind
    (parameters, gradients, optimizer state, activations allocated in forward
    and still live by module, temporaries) plus the free cache; report(),
    svg(), json(), save(prefix). Use `with prof.step():` around each training
    step. It accounts the first three steps and then every sample_every-th
    (default 10; 1: every step), and the steps between cost only its hooks'
    checks. exact_saved=True: activations are the tensors autograd saved for
    backward (a Python hook per saved tensor: costly)."""
    _require_plugin()
    from .profiler import MemoryProfiler
    return MemoryProfiler(model, optimizer, **kwargs)


def last_error():
    """The message of the last failed ccalloc call on this thread."""
    return _require_plugin().last_error()


# --- line profiler, tensor report, notebook magics --------------------------------

def line_profiler(*functions, nested=False, device=None, **kwargs):
    """A LineProfiler (ccalloc/lineprof.py) of `functions`: per line, the
    bytes allocated and freed, live after it and the peak during it, summed
    over calls. `with prof: fn(x)`, or prof.run(fn, x); then
    print(prof.report()), prof.json(), prof.html(), prof.records().
    nested=True (or a depth): the lines of the functions they call too."""
    from .lineprof import LineProfiler
    return LineProfiler(*functions, nested=nested, device=device, **kwargs)


def profile_lines(fn=None, **kwargs):
    """Decorator: @profile_lines or @profile_lines(nested=True, at_exit=False);
    the table is printed at exit, or read from fn.line_profiler
    (ccalloc/lineprof.py)."""
    from .lineprof import profile_lines as decorate
    return decorate(fn, **kwargs)


def report_tensors(model=None, optimizer=None, **kwargs):
    """Every live allocation of the device, named where the model and the
    optimizer reach it (parameters, buffers, .grad, optimizer state), the
    rest by tag and allocating frame; the blocks add up to
    memory_allocated(). A TensorReport (ccalloc/tensor_report.py): print it,
    .json(), .html(), .entries."""
    from .tensor_report import report_tensors as report
    return report(model, optimizer, **kwargs)


def load_ipython_extension(ipython):
    """%load_ext ccalloc.torch: %ccalloc_lines, %%ccalloc_lines and
    %%ccalloc_profile (ccalloc/_notebook.py)."""
    from . import _notebook
    _notebook.load(ipython)
