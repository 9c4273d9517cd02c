"""The allocator as the memory profiler reads it: _CcallocView (ctypes).

ccalloc.profiler's MemoryProfiler reads ccalloc at each phase boundary
through this view: one C call per boundary where the plugin has
ccalloc_torch_profile_read (read(), split by _split()), else the counters,
the largest free block and the per-tag usage one by one; the blocks holding
given pointers (blocks()); tag ids and names, and the per-module tag setter
(the bare C function, for the forward hooks). Every read is host-side (a
mutex, no CUDA call), into preallocated buffers.

May call: the standard library (array, ctypes) and the Plugin object it is
given (ccalloc/_plugin.py: its lib, _check, tag_intern, tag_name,
tag_usage). No torch, no other ccalloc module. Tests and benches subclass
_CcallocView or pass a fake with the same methods.
"""

# ccalloc_torch_stats (python/ccalloc/csrc/ccalloc_torch.h) is int64s only:
# 29 stats of 4 (current, peak, allocated, freed) and 6 counters.
_STATS_INT64 = 29 * 4 + 6
_ALLOCATED_BYTES_ALL = 12 * 4     # allocated_bytes[0].current; .peak is the next
_RESERVED_BYTES_ALL = 15 * 4      # reserved_bytes[0].current


class _CcallocView:
    """What the profiler reads from and sets in the allocator (one device).

    Everything here is a host-side read of ccalloc's own counters (a mutex,
    no CUDA call, no synchronization) through ctypes with preallocated
    buffers: the profiler calls it at each phase boundary."""

    def __init__(self, plugin, device):
        import array
        import ctypes
        self.plugin = plugin
        self.device = device
        self._ids = {}
        lib = plugin.lib
        self._stats = (ctypes.c_int64 * _STATS_INT64)()
        self._stats_ref = ctypes.byref(self._stats)
        self._get_stats = lib.ccalloc_torch_get_stats
        self._largest = ctypes.c_size_t()
        self._largest_ref = ctypes.byref(self._largest)
        self._largest_free = lib.ccalloc_torch_largest_free_block
        self._reset_peaks = lib.ccalloc_torch_reset_peak_stats
        self._set_tag = lib.ccalloc_torch_set_tag
        self._fast_set_tag = _unchecked(lib, "ccalloc_torch_set_tag", ctypes.c_uint32)
        # Tag usage without JSON (a plugin built before it: JSON).
        try:
            fn = lib.ccalloc_torch_tag_usage
        except AttributeError:
            fn = None
        else:
            fn.restype = ctypes.c_int64
            fn.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                           ctypes.c_size_t]
        self._tag_usage = fn
        self._array = array.array
        self._tag_buf = self._tag_buffers(64)
        # A boundary's whole read in one call (a plugin built before it: the
        # calls above, one by one; read is then None).
        if not hasattr(lib, "ccalloc_torch_profile_read"):
            self.read = None
        else:
            self._profile_read = _unchecked(lib, "ccalloc_torch_profile_read", ctypes.c_int64)
            self._profile_read.restype = ctypes.c_int64
            self._flags = (ctypes.c_uint32(0), ctypes.c_uint32(1))
            self._read_buffer(4 + 3 * 64)
        self._tag_names = {}      # tag id -> name (names never change)
        self._last_ids = None     # the last read's ids (tag_read)
        self._blocks_fast = _unchecked(lib, "ccalloc_torch_blocks_holding", ctypes.c_int)
        self._void_p = ctypes.c_void_p
        self._size_t = ctypes.c_size_t

    def _tag_buffers(self, room):
        """(ids, current, peak) arrays of `room` entries, then their addresses."""
        arrays = (self._array("I", bytes(4 * room)), self._array("q", bytes(8 * room)),
                  self._array("q", bytes(8 * room)))
        return arrays + tuple(a.buffer_info()[0] for a in arrays)

    def _read_buffer(self, room):
        import ctypes
        self._read_buf = self._array("q", bytes(8 * room))
        # Passed as ctypes objects made once: no argument conversion per call.
        self._read_c = (ctypes.c_int64 * room).from_buffer(self._read_buf)
        self._read_room = ctypes.c_size_t(room)

    def read(self, reset=True):
        """The allocator now, in one C call (ccalloc_torch_profile_read):
        an array of int64s, allocated bytes, their peak, reserved bytes, the
        largest free block, then (tag id, live bytes, peak bytes) per tag by
        id; with reset, the peaks are reset once read. A copy (an array is
        one object, not one the garbage collector tracks)."""
        while True:
            n = self._profile_read(self.device, self._read_c, self._read_room, self._flags[reset])
            if n < 0:
                self._fail()
            if n <= len(self._read_buf):
                return self._read_buf[:n]
            self._read_buffer(2 * n)   # more tags than room: nothing was read or reset; again

    def _fail(self):
        self.plugin._check(self.plugin.lib.ccalloc_torch_last_error_code() or 1)

    def counters(self):
        if self._get_stats(self.device, self._stats_ref) != 0:
            self._fail()
        s = self._stats
        return s[_ALLOCATED_BYTES_ALL], s[_ALLOCATED_BYTES_ALL + 1], s[_RESERVED_BYTES_ALL]

    def blocks(self, ptrs):
        """(starts, sizes, tags): the allocated block holding each pointer
        (0, 0, 0 where none) and its tag id."""
        n = len(ptrs)
        if n == 0:
            return [], [], []
        arr = self._array("Q", ptrs)
        out = self._array("Q", bytes(16 * n))    # starts, then sizes
        tags = self._array("I", bytes(4 * n))
        # Addresses as c_void_p, through the function without argtypes:
        # ctypes.cast per array cost more than the lookup itself.
        vp = self._void_p
        at = out.buffer_info()[0]
        code = self._blocks_fast(self.device, vp(arr.buffer_info()[0]), self._size_t(n), vp(at),
                                 vp(at + 8 * n), vp(tags.buffer_info()[0]))
        if code != 0:
            self.plugin._check(code)
        return out[:n].tolist(), out[n:].tolist(), tags.tolist()

    def largest_free(self):
        if self._largest_free(self.device, self._largest_ref) != 0:
            return 0
        return self._largest.value

    def tag_read(self):
        """(ids, current, peak): arrays of every tag's id, live bytes and
        peak bytes, by id, in one C call into preallocated buffers (copied
        out, so a caller may keep them). While the set of tags is the same,
        ids is the very object of the last read: a caller can key what it
        derives from the ids by identity."""
        fn = self._tag_usage
        if fn is None:
            usage = self.plugin.tag_usage(self.device)
            for t in usage:
                self._tag_names.setdefault(t["tag"], t["name"])
            ids = self._array("I", [t["tag"] for t in usage])
            cur = self._array("q", [t["current_bytes"] for t in usage])
            peak = self._array("q", [t["peak_bytes"] for t in usage])
        else:
            buf = self._tag_buf
            while True:
                room = len(buf[0])
                n = fn(self.device, buf[3], buf[4], buf[5], room)
                if n < 0:
                    self._fail()
                if n <= room:
                    break
                buf = self._tag_buf = self._tag_buffers(2 * n)   # more tags than room: again
            ids, cur, peak = buf[0][:n], buf[1][:n], buf[2][:n]
        last = self._last_ids
        if last is not None and ids == last:
            ids = last
        else:
            self._last_ids = ids
        return ids, cur, peak

    def tag_name(self, tag):
        """The name of tag id `tag` (cached: names never change)."""
        name = self._tag_names.get(tag)
        if name is None:
            name = self._tag_names[tag] = self.plugin.tag_name(tag)
        return name

    def tag_usage(self):
        """{tag name: (live bytes, peak bytes)}."""
        ids, cur, peak = self.tag_read()
        return dict(zip(map(self.tag_name, ids), zip(cur, peak)))

    def reset_peaks(self):
        code = self._reset_peaks(self.device)
        if code != 0:
            self.plugin._check(code)

    def tag_token(self, name):
        """What tag_setter() takes for `name`: its interned id."""
        tag = self._ids.get(name)
        if tag is None:
            tag = self._ids[name] = self.plugin.tag_intern(name)
        return tag

    def tag_setter(self):
        """A callable(token) -> previous tag id: the C function itself (no
        Python frame in between), for the per-module hooks."""
        return self._fast_set_tag

    def tag_function(self):
        """The address of ccalloc_torch_set_tag (uint32_t(uint32_t): sets
        the calling thread's tag, returns the previous one), for the C
        forward wrappers (pysrc/profiler_ext.cc) to call with no ctypes."""
        import ctypes
        return ctypes.cast(self._set_tag, ctypes.c_void_p).value

    def current_tag(self):
        """The calling thread's tag id."""
        return self.plugin.current_tag()

    def set_tag(self, name):
        return self._set_tag(self.tag_token(name))

    def restore_tag(self, tag_id):
        self._set_tag(tag_id)


def _unchecked(lib, name, restype):
    """lib's function `name` as a second ctypes object without argtypes: a
    Python int argument is passed as a C int with no from_param conversion,
    about a third of the call's cost (ccalloc_torch_set_tag, twice per
    module call: its argument is a small interned id, where a C int and a
    uint32_t are passed alike). The plugin's own object, with argtypes, is
    left as it is."""
    import ctypes
    try:
        fn = ctypes.CDLL(lib._name)[name]
    except (OSError, AttributeError, TypeError):
        return getattr(lib, name)
    fn.restype = restype
    return fn


def _split(raw):
    """(tag read, counters) of a _CcallocView.read() array: its tag ids,
    live and peak bytes (arrays, by id), and (allocated, peak, reserved,
    largest free block)."""
    return (raw[4::3], raw[5::3], raw[6::3], True), (raw[0], raw[1], raw[2], raw[3])
