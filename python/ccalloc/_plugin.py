"""ctypes binding of libccalloc_torch.so (allocator/torch/torch_plugin.cc).

Nothing here imports torch: the same binding drives the plugin inside a
PyTorch process (ccalloc.torch) and on a simulated device in host-only tests
(CCALLOC_TORCH_SIMULATE=<capacity>).
"""

import ctypes
import glob
import json
import os

LIBRARY_NAME = "libccalloc_torch.so"
ENV_LIBRARY = "CCALLOC_TORCH_LIBRARY"

# ccalloc_status (allocator/include/ccalloc/ccalloc.h).
OK = 0
OUT_OF_MEMORY = 1
INVALID_ARGUMENT = 2
INTERNAL = 3
UNAVAILABLE = 4

# Flags of ccalloc_torch_pause_ex / ccalloc_torch_resume_ex (torch_plugin.cc).
PAUSE_BACKUP = 1
SKIP_UNUSED = 2


class CcallocError(RuntimeError):
    """A plugin call failed; `code` is the ccalloc_status."""

    def __init__(self, message, code=INTERNAL):
        super().__init__(message)
        self.code = code


class OutOfMemoryError(CcallocError):
    """The device or the memory limit refused; the message is ccalloc's report."""


def _candidates():
    """Where a built plugin may be, most specific first."""
    here = os.path.dirname(os.path.abspath(__file__))
    # Installed by `pip install .` (python/build_backend.py puts it there).
    yield os.path.join(here, "lib", LIBRARY_NAME)
    yield os.path.join(here, LIBRARY_NAME)
    # A source checkout: python/ccalloc/ -> repository root.
    root = os.path.dirname(os.path.dirname(here))
    patterns = [
        os.path.join(root, "build*", "allocator", LIBRARY_NAME),
        os.path.join(root, "build", "*", "allocator", LIBRARY_NAME),
    ]
    found = []
    for pattern in patterns:
        found.extend(glob.glob(pattern))
    # The newest build is the one the user most likely means.
    found.sort(key=lambda p: os.path.getmtime(p), reverse=True)
    yield from found


def find_library(library=None):
    """The path of libccalloc_torch.so.

    Order: the `library` argument, the CCALLOC_TORCH_LIBRARY environment
    variable, the installed package's lib/ (pip install .), next to this
    package, then the build folders of a source
    checkout (build*/allocator/, build/<preset>/allocator/; newest first).
    """
    for explicit, origin in ((library, "library argument"),
                             (os.environ.get(ENV_LIBRARY), ENV_LIBRARY)):
        if explicit:
            if not os.path.isfile(explicit):
                raise FileNotFoundError(f"ccalloc: {origin} names {explicit!r}, which does not exist")
            return os.path.abspath(explicit)
    searched = []
    for path in _candidates():
        searched.append(path)
        if os.path.isfile(path):
            return os.path.abspath(path)
    raise FileNotFoundError(
        f"ccalloc: {LIBRARY_NAME} not found. Build the target ccalloc_torch "
        f"(cmake --build BUILD --target ccalloc_torch) and pass library=... or set "
        f"{ENV_LIBRARY}. Looked in: " + ", ".join(searched))


class Plugin:
    """The loaded plugin library. Methods raise CcallocError on failure."""

    def __init__(self, path):
        self.path = os.path.realpath(path)
        # RTLD_GLOBAL is not needed: PyTorch takes the functions by address.
        self.lib = ctypes.CDLL(self.path)
        self._declare()

    def _declare(self):
        L = self.lib
        c_size_p = ctypes.POINTER(ctypes.c_size_t)
        sigs = {
            "ccalloc_torch_try_malloc": (ctypes.c_int, [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p,
                                                        ctypes.POINTER(ctypes.c_void_p)]),
            "ccalloc_torch_free": (None, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]),
            "ccalloc_torch_configure": (ctypes.c_int, [ctypes.c_char_p]),
            "ccalloc_torch_set_allocator_settings": (ctypes.c_int, [ctypes.c_char_p]),
            "ccalloc_torch_options": (ctypes.c_size_t, [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]),
            "ccalloc_torch_empty_cache": (ctypes.c_int, [ctypes.c_int]),
            "ccalloc_torch_set_memory_fraction": (ctypes.c_int, [ctypes.c_int, ctypes.c_double]),
            "ccalloc_torch_memory_fraction": (ctypes.c_int, [ctypes.c_int,
                                                             ctypes.POINTER(ctypes.c_double)]),
            "ccalloc_torch_set_memory_limit": (ctypes.c_int, [ctypes.c_int, ctypes.c_size_t]),
            "ccalloc_torch_memory_limit": (ctypes.c_int, [ctypes.c_int, c_size_p]),
            "ccalloc_torch_device_memory": (ctypes.c_int, [ctypes.c_int, c_size_p, c_size_p]),
            "ccalloc_torch_record_stream": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
            "ccalloc_torch_reset_peak_stats": (ctypes.c_int, [ctypes.c_int]),
            "ccalloc_torch_reset_accumulated_stats": (ctypes.c_int, [ctypes.c_int]),
            "ccalloc_torch_stats_json": (ctypes.c_size_t, [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]),
            "ccalloc_torch_snapshot_json": (ctypes.c_size_t, [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]),
            "ccalloc_torch_summary": (ctypes.c_size_t, [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]),
            "ccalloc_torch_devices": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int), ctypes.c_int]),
            "ccalloc_torch_last_error": (ctypes.c_char_p, []),
            "ccalloc_torch_last_error_code": (ctypes.c_int, []),
            "ccalloc_torch_set_region": (ctypes.c_uint32, [ctypes.c_uint32]),
            "ccalloc_torch_pause": (ctypes.c_int, [ctypes.c_int, ctypes.c_uint32, c_size_p]),
            "ccalloc_torch_resume": (ctypes.c_int, [ctypes.c_int, ctypes.c_uint32, c_size_p]),
            "ccalloc_torch_pause_ex": (ctypes.c_int, [ctypes.c_int, ctypes.c_uint32,
                                                      ctypes.c_uint32, c_size_p]),
            "ccalloc_torch_resume_ex": (ctypes.c_int, [ctypes.c_int, ctypes.c_uint32,
                                                       ctypes.c_uint32, c_size_p]),
            "ccalloc_torch_reserve_backup": (ctypes.c_int, [ctypes.c_int, ctypes.c_uint32,
                                                            ctypes.c_uint32, c_size_p]),
            "ccalloc_torch_tag_intern": (ctypes.c_uint32, [ctypes.c_char_p]),
            "ccalloc_torch_set_tag": (ctypes.c_uint32, [ctypes.c_uint32]),
            "ccalloc_torch_current_tag": (ctypes.c_uint32, []),
            "ccalloc_torch_blocks_holding": (ctypes.c_int, [ctypes.c_int, ctypes.POINTER(ctypes.c_uint64),
                                                             ctypes.c_size_t, ctypes.POINTER(ctypes.c_uint64),
                                                             ctypes.POINTER(ctypes.c_uint64),
                                                             ctypes.POINTER(ctypes.c_uint32)]),
            "ccalloc_torch_tag_name": (ctypes.c_size_t, [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]),
            "ccalloc_torch_largest_free_block": (ctypes.c_int, [ctypes.c_int, c_size_p]),
            "ccalloc_torch_get_stats": (ctypes.c_int, [ctypes.c_int, ctypes.c_void_p]),
            "ccalloc_torch_tag_usage_json": (ctypes.c_size_t, [ctypes.c_int, ctypes.c_char_p,
                                                               ctypes.c_size_t]),
        }
        for name, (restype, argtypes) in sigs.items():
            fn = getattr(L, name)
            fn.restype = restype
            fn.argtypes = argtypes

    # --- addresses PyTorch is given -----------------------------------------
    def address(self, name):
        """The address of an exported function (for torch's set_*_fn hooks)."""
        return ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value

    # --- errors -------------------------------------------------------------
    def last_error(self):
        """The message of the last failed plugin call on this thread ("" if none)."""
        return self.lib.ccalloc_torch_last_error().decode("utf-8", "replace")

    def _check(self, code):
        if code != OK:
            message = self.last_error()
            if code == OUT_OF_MEMORY:
                raise OutOfMemoryError(message, code)
            raise CcallocError(message, code)

    def _text(self, fn, device):
        # The document may grow between the sizing call and the copy.
        capacity = 4096
        while True:
            buf = ctypes.create_string_buffer(capacity)
            need = fn(device, buf, capacity)
            if need == 0:
                self._check(self.lib.ccalloc_torch_last_error_code() or INVALID_ARGUMENT)
            if need <= capacity:
                return buf.value.decode("utf-8")
            capacity = need + 1024

    # --- allocation (host tests; PyTorch calls the C functions directly) -----
    def malloc(self, size, device=0, stream=0):
        out = ctypes.c_void_p()
        self._check(self.lib.ccalloc_torch_try_malloc(size, device, stream, ctypes.byref(out)))
        return out.value or 0

    def free(self, ptr, device=0):
        """Never raises (PyTorch's contract); a bad pointer sets last_error()."""
        self.lib.ccalloc_torch_free(ptr, 0, device, None)

    # --- control ------------------------------------------------------------
    def configure(self, conf):
        self._check(self.lib.ccalloc_torch_configure(None if conf is None else conf.encode()))

    def set_allocator_settings(self, conf):
        self._check(self.lib.ccalloc_torch_set_allocator_settings(conf.encode()))

    def options(self, device=0):
        return self._text(self.lib.ccalloc_torch_options, device)

    def empty_cache(self, device=-1):
        self._check(self.lib.ccalloc_torch_empty_cache(device))

    def set_memory_fraction(self, fraction, device=0):
        self._check(self.lib.ccalloc_torch_set_memory_fraction(device, float(fraction)))

    def set_memory_limit(self, nbytes, device=0):
        if nbytes < 0:
            raise ValueError(f"ccalloc: memory limit must be >= 0 bytes, got {nbytes}")
        self._check(self.lib.ccalloc_torch_set_memory_limit(device, int(nbytes)))

    def memory_fraction(self, device=0):
        out = ctypes.c_double()
        self._check(self.lib.ccalloc_torch_memory_fraction(device, ctypes.byref(out)))
        return out.value

    def memory_limit(self, device=0):
        out = ctypes.c_size_t()
        self._check(self.lib.ccalloc_torch_memory_limit(device, ctypes.byref(out)))
        return out.value

    def device_memory(self, device=0):
        """(free, total) bytes of the device as the plugin's backend sees them."""
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        self._check(self.lib.ccalloc_torch_device_memory(device, ctypes.byref(free), ctypes.byref(total)))
        return free.value, total.value

    def record_stream(self, ptr, stream):
        self._check(self.lib.ccalloc_torch_record_stream(ptr, stream))

    def reset_peak_stats(self, device=-1):
        self._check(self.lib.ccalloc_torch_reset_peak_stats(device))

    def reset_accumulated_stats(self, device=-1):
        self._check(self.lib.ccalloc_torch_reset_accumulated_stats(device))

    # --- reading ------------------------------------------------------------
    def raw_stats(self, device=0):
        """Every counter: torch.cuda.memory_stats() names plus ccalloc.* extras."""
        return json.loads(self._text(self.lib.ccalloc_torch_stats_json, device))

    def snapshot(self, device=0):
        """{"device", "segments": [...], "stats": {...}, "fragmentation": {...}}."""
        return json.loads(self._text(self.lib.ccalloc_torch_snapshot_json, device))

    def summary(self, device=0):
        return self._text(self.lib.ccalloc_torch_summary, device)

    # --- regions (sleep and wake) --------------------------------------------
    def set_region(self, region):
        """Sets the calling thread's region number; returns the previous one."""
        return self.lib.ccalloc_torch_set_region(region)

    def pause(self, region, device=0, backup=False, skip_unused=False):
        """Bytes of device memory given back. backup: keep the contents in
        host memory for resume(); skip_unused: a region never allocated in on
        `device` gives 0 instead of an error."""
        out = ctypes.c_size_t()
        flags = (PAUSE_BACKUP if backup else 0) | (SKIP_UNUSED if skip_unused else 0)
        self._check(self.lib.ccalloc_torch_pause_ex(device, region, flags, ctypes.byref(out)))
        return out.value

    def resume(self, region, device=0, skip_unused=False):
        out = ctypes.c_size_t()
        flags = SKIP_UNUSED if skip_unused else 0
        self._check(self.lib.ccalloc_torch_resume_ex(device, region, flags, ctypes.byref(out)))
        return out.value

    def reserve_backup(self, region, device=0, skip_unused=False):
        """Pins the host buffer of the region's backup now; its bytes."""
        out = ctypes.c_size_t()
        flags = SKIP_UNUSED if skip_unused else 0
        self._check(self.lib.ccalloc_torch_reserve_backup(device, region, flags,
                                                          ctypes.byref(out)))
        return out.value

    # --- tags ---------------------------------------------------------------
    def tag_intern(self, name):
        """The id of tag `name` (the same for the same name; 0 for "")."""
        return self.lib.ccalloc_torch_tag_intern(name.encode("utf-8"))

    def set_tag(self, tag):
        """Sets the calling thread's current tag id; returns the previous one."""
        return self.lib.ccalloc_torch_set_tag(tag)

    def current_tag(self):
        return self.lib.ccalloc_torch_current_tag()

    def tag_usage(self, device=0):
        """[{"tag", "name", "current_bytes", "peak_bytes", "blocks"}, ...] by tag id."""
        return json.loads(self._text(self.lib.ccalloc_torch_tag_usage_json, device))

    def tag_name(self, tag):
        need = self.lib.ccalloc_torch_tag_name(tag, None, 0)
        buf = ctypes.create_string_buffer(need + 1)
        self.lib.ccalloc_torch_tag_name(tag, buf, need + 1)
        return buf.value.decode("utf-8", "replace")

    def blocks_holding(self, ptrs, device=0):
        """(starts, sizes, tags): for each pointer, the allocated block holding
        it (start address, rounded size, tag id); 0s where none does."""
        n = len(ptrs)
        arr = (ctypes.c_uint64 * max(n, 1))(*ptrs)
        starts = (ctypes.c_uint64 * max(n, 1))()
        sizes = (ctypes.c_uint64 * max(n, 1))()
        tags = (ctypes.c_uint32 * max(n, 1))()
        self._check(self.lib.ccalloc_torch_blocks_holding(device, arr, n, starts, sizes, tags))
        return list(starts[:n]), list(sizes[:n]), list(tags[:n])

    def largest_free_block(self, device=0):
        out = ctypes.c_size_t()
        self._check(self.lib.ccalloc_torch_largest_free_block(device, ctypes.byref(out)))
        return out.value

    def devices(self):
        """Devices that have an allocator, ascending."""
        n = self.lib.ccalloc_torch_devices(None, 0)
        arr = (ctypes.c_int * max(n, 1))()
        n = self.lib.ccalloc_torch_devices(arr, n)
        return [arr[i] for i in range(n)]


_loaded = {}


def load_library(library=None):
    """The Plugin for find_library(library); one per path per process."""
    path = os.path.realpath(find_library(library))
    if path not in _loaded:
        _loaded[path] = Plugin(path)
    return _loaded[path]
