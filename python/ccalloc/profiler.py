"""Where did my memory go: a per-step, per-phase, per-kind memory profiler.

    prof = ccalloc.torch.profile(model, optimizer)
    for x, y in data:
        with prof.step():
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    print(prof.report())
    prof.save("memory")            # memory.txt, memory.svg, memory.json

How it sees phases. A forward pre/post hook on the model opens "forward" and
then "loss"; torch.autograd.backward (which Tensor.backward calls) is wrapped
while the profiler is attached, so "backward" starts on the calling thread
and a hook on the root tensor sets the tag on the thread the autograd engine
runs backward on (tags are thread-local, and CUDA backward runs on the
engine's device thread); the optimizer's step pre/post hooks open and close
"optimizer"; everything else is "other".

At each phase boundary (never per allocation, so the hot path pays only
for the tag stores and, with module tags, a hook per module call) it takes
one read of the allocator, one C call (ccalloc_torch_profile_read: the
counters, the largest free block and every tag's live and peak bytes by tag
id, into an int64 array kept as it is; the peaks are reset in the same
call), and the totals of the known tensors (parameters, gradients, optimizer
state): they are mapped to the allocated blocks that hold them in batched
lookups (ccalloc_torch_blocks_holding, which also gives each block's tag),
cached while the tensors stay the same (pointer lists compared by identity
first; the gradients' ids read at every boundary). Each block counts once,
parameters first, then gradients, then optimizer state. Everything else,
the sample itself, its kinds, the activations' split by module and each
tag's rise, is derived from the kept reads when the samples are read: a
boundary keeps one tuple and one array. The boundary that opens forward
often runs while the GPU waits for the host (after a synchronizing copy of
the batch), so what it does is added to the step time as it is.

Activations are, by default, "allocated in forward, still live": the live
bytes of the tags "forward/<module>" (and "forward" for what the model's own
forward allocates outside any submodule, or everything in forward with
module_tags=False), which the allocator counts in C, less the parameter,
gradient and optimizer-state blocks that carry such a tag. At the loss and
backward boundaries that is what autograd saved for backward plus the
model's outputs and whatever else the program keeps from forward; nothing
runs per saved tensor. exact_saved=True instead follows every tensor autograd
saves (a saved_tensors_hooks pack hook in Python per saved tensor, costly for
models that save thousands per step, e.g. unrolled RNNs) and counts the
blocks holding them, attributed to the module running when each was saved:
"saved for backward" in the strict sense.

What none of these holds is temporaries, so the kinds add up to
memory_allocated() exactly. Peaks are per
phase: the allocator's peak counters (also PyTorch's max_memory_allocated,
which the profiler therefore resets at each boundary; max_allocated keeps the
run's peak) and the per-tag peaks, with tags named "<phase>" or
"<phase>/<module>", say what raised each phase's peak.
"""

import functools
import itertools
import operator
import threading
import time
import weakref

from . import memreport

__all__ = ["MemoryProfiler"]


# Samples whose raw parts (_sample) wait for the report at most; past that
# end_step derives them (~1,000 steps of 8 boundaries; about 2 KB a sample
# with a hundred tags).
_PENDING_MAX = 8192

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


class MemoryProfiler:
    """Accounts every allocated byte per step and phase to a kind.

    model: the torch.nn.Module trained (its forward opens the forward phase).
    optimizer: its torch.optim.Optimizer (None: no optimizer phase).
    module_tags: tag forward allocations "forward/<module>" (pre/post hooks
        per module: one ctypes call each; off: one tag per phase, and
        activations are not split by module).
    exact_saved: activations are the blocks holding tensors autograd saved
        for backward (a Python pack hook per saved tensor: costly), instead
        of the default "allocated in forward, still live" read from the
        allocator's per-tag counters.
    device: the CUDA device (default: the parameters').
    view: what reads the allocator (tests pass a fake; default ccalloc's).
    """

    def __init__(self, model, optimizer=None, *, module_tags=True, exact_saved=False,
                 device=None, view=None, check_torch=False):
        import torch
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"ccalloc profiler: model must be a torch.nn.Module, not {type(model).__name__}")
        if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError("ccalloc profiler: optimizer must be a torch.optim.Optimizer or None, "
                            f"not {type(optimizer).__name__}")
        self._torch = torch
        self._data_ptr = torch.Tensor.data_ptr
        self.model = model
        self.optimizer = optimizer
        self.module_tags = module_tags
        self.exact_saved = exact_saved
        self.check_torch = check_torch
        if view is None:
            from . import torch as ct
            if device is None:
                p = next(model.parameters(), None)
                device = p.device if p is not None and p.is_cuda else torch.device("cuda", torch.cuda.current_device())
            view = _CcallocView(ct._require_plugin(), ct._device_index(device))
        self.view = view
        self._samples = []        # see the samples property
        self._pending = []        # samples whose by-module and tag_rise parts are still raw (_complete)
        self._max_allocated = 0
        self.step_index = 0
        self.phase = None
        self._t0 = time.perf_counter()
        self._thread = threading.get_ident()
        self._handles = []
        self._saved = []          # (weakref to a saved tensor, module name)
        # (name, tag token) of the modules running forward on the main thread,
        # innermost last; the root's entry carries the "forward" token, which
        # a submodule's post hook puts back when its parent is the root.
        self._stack = []
        # [True] while the module hooks set tags: module_tags and the phase
        # is forward (one list read per hook call rather than an attribute
        # and a string compare).
        self._tagging = [False]
        self.host_seconds = 0.0   # time spent at phase boundaries (see bench/memory_report.py)
        self.boundaries = 0
        # The same by the phase each boundary opens ("start": the step's
        # first sample, "end": its last): which boundaries cost, for benches.
        self.host_seconds_by_boundary = {}
        self._hooks_ctx = None
        self._outer_tag = None
        self._prev_raw = None     # the last sample's read in this step (for tag_rise)
        self._params = None
        self._last_oom = None
        self._in_step = False
        self._closed = False
        self._original_backward = None
        self._names = {m: (n or type(model).__name__) for n, m in model.named_modules()}
        token = getattr(view, "tag_token", None)
        self._token = token if token is not None else (lambda name: name)
        setter = getattr(view, "tag_setter", None)
        self._setter = setter() if setter is not None else view.set_tag
        # Tag usage as arrays by tag id (ccalloc's view: tag_read, and
        # tag_name for tag_rise), or else the {name: (live, peak)} of
        # view.tag_usage() (keyed by name).
        self._tag_read = None
        if token is not None and hasattr(view, "tag_name"):
            self._tag_read = getattr(view, "tag_read", None)
        # Or all of a boundary's read in one call (ccalloc's view with a
        # plugin that has ccalloc_torch_profile_read: view.read).
        self._one_read = self._tag_read and getattr(view, "read", None)
        # The forward tags: name -> module and tag token -> module ("forward"
        # itself: the model's own forward, or all of it without module tags).
        root = self._names[model]
        self._fwd_names = {f"forward/{n}": n for m, n in self._names.items() if m is not model}
        self._fwd_names["forward"] = root
        self._fwd_tokens = {self._token(name): m for name, m in self._fwd_names.items()}
        self._phase_tokens = {p: self._token(p) for p in memreport.PHASES}
        self._root_entry = (root, self._token("forward"))
        self._layout = None       # where the forward tags are in a tag read (_forward_layout)
        # Blocks of the known tensors, looked up again only when their
        # pointers (parameters, optimizer state) or objects (gradients) change.
        self._param_key = None    # the pointer list P was looked up from
        self._P, self._p_total, self._P_fwd = {}, 0, {}
        self._opt_key = None      # likewise for O (optimizer state, less parameters)
        self._O, self._o_total, self._PO_fwd = {}, 0, {}
        self._grad_ids = None     # ids of the parameters' .grad at G's lookup
        self._grad_dead = []      # not empty once one of those gradients died
        self._grad_refs = None
        # The .grad attributes are read (a Python object made for each new
        # gradient) only where gradients appear in training: at a step's
        # start and after each backward; a gradient that dies (set to None,
        # replaced) is seen at once through its weak reference.
        self._grads_unread = True
        self._G, self._g_total, self._owned_fwd = {}, 0, {}
        # What _known() gives while none of them changes (one tuple, made at
        # the gradients' lookup, which follows any other).
        self._known_now = (0, 0, 0, {}, None)
        self._opt_ptrs = None     # optimizer state pointers, refreshed when the optimizer may have run
        self._opt_fp = None       # what they were read from (_optimizer_ptrs)
        self._saved_blocks = None  # [n, starts, sizes] of _saved[:n] (measure)
        self._attach()

    @property
    def samples(self):
        """The boundary samples so far (dicts; see memreport)."""
        if self._pending:
            self._complete()
        return self._samples

    @samples.setter
    def samples(self, value):
        self._pending.clear()
        self._samples = value

    # --- attaching -------------------------------------------------------------
    def _attach(self):
        torch = self._torch
        self._handles.append(self.model.register_forward_pre_hook(self._root_pre))
        self._handles.append(self.model.register_forward_hook(self._root_post))
        if self.module_tags or self.exact_saved:
            for module, name in self._names.items():
                if module is self.model:
                    continue
                self._handles.append(module.register_forward_pre_hook(self._make_pre(name)))
                self._handles.append(module.register_forward_hook(self._make_post()))
        if self.optimizer is not None:
            if hasattr(self.optimizer, "register_step_pre_hook"):
                self._handles.append(self.optimizer.register_step_pre_hook(self._opt_pre))
                self._handles.append(self.optimizer.register_step_post_hook(self._opt_post))
            else:  # PyTorch < 2.0: wrap this optimizer's step
                original = self.optimizer.step
                prof = self

                def step(*args, **kwargs):
                    prof._opt_pre(None, args, kwargs)
                    try:
                        return original(*args, **kwargs)
                    finally:
                        prof._opt_post(None, args, kwargs)
                self._handles.append(_Restore(self.optimizer, "step", step))
        # Backward starts on the caller's thread in torch.autograd.backward.
        self._original_backward = torch.autograd.backward
        prof_ref = weakref.ref(self)
        original_backward = self._original_backward

        def backward(tensors, *args, **kwargs):
            prof = prof_ref()
            if prof is None or not prof._in_step or threading.get_ident() != prof._thread:
                return original_backward(tensors, *args, **kwargs)
            return prof._backward(original_backward, tensors, *args, **kwargs)
        backward.__wrapped__ = original_backward
        torch.autograd.backward = backward

    def close(self):
        """Removes every hook and the backward wrapper."""
        if self._closed:
            return
        self._closed = True
        for h in self._handles:
            h.remove()
        self._handles.clear()
        torch = self._torch
        if getattr(torch.autograd.backward, "__wrapped__", None) is self._original_backward:
            torch.autograd.backward = self._original_backward
        if self._hooks_ctx is not None:
            self._hooks_ctx.__exit__(None, None, None)
            self._hooks_ctx = None

    def leftovers(self):
        """What of any MemoryProfiler is still attached to this model, its
        optimizer and torch.autograd.backward (hooks, wrappers, this one's
        saved-tensor hooks): [] after close() when no other profiler is open
        (bench/memory_report.py checks it between its measurements)."""
        out = []
        torch = self._torch
        hooks = ("_forward_hooks", "_forward_pre_hooks")
        for module, name in self._names.items():
            for attr in hooks:
                for h in getattr(module, attr, {}).values():
                    if getattr(h, "__qualname__", "").startswith("MemoryProfiler."):
                        out.append(f"{attr} on {name}")
        b = torch.autograd.backward
        while b is not None:
            if getattr(b, "__qualname__", "").startswith("MemoryProfiler."):
                out.append("torch.autograd.backward wrapper")
                break
            b = getattr(b, "__wrapped__", None)
        if self._hooks_ctx is not None:
            out.append("saved_tensors_hooks")
        if self.optimizer is not None and "step" in vars(self.optimizer):
            out.append("optimizer.step wrapper")
        for attr in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks"):
            for h in getattr(self.optimizer, attr, {}).values():
                if getattr(h, "__qualname__", "").startswith("MemoryProfiler."):
                    out.append(f"optimizer {attr}")
        return out

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # --- steps and phases --------------------------------------------------------
    def step(self):
        """A context manager around one training step."""
        return _Step(self)

    def begin_step(self):
        if self._closed:
            raise RuntimeError("ccalloc profiler: closed")
        if self._in_step:
            raise RuntimeError("ccalloc profiler: begin_step() inside a step (end_step() first)")
        self.step_index += 1
        self._in_step = True
        # Parameters and buffers as found when the profiler attached (see
        # refresh()); their pointers read once per step.
        if self._params is None:
            self.refresh()
        self._param_ptrs = list(map(self._data_ptr, self._tensors))
        self._opt_ptrs = None
        self._grads_unread = True
        self._outer_tag = None
        self.phase = "start"
        self._prev_raw = None
        t0 = time.perf_counter()
        self._sample("start", first=True)
        self._count("start", time.perf_counter() - t0)
        self._enter("other")
        if self.exact_saved:
            torch = self._torch
            self._hooks_ctx = torch.autograd.graph.saved_tensors_hooks(self._make_pack(), _unpack)
            self._hooks_ctx.__enter__()

    def end_step(self):
        if not self._in_step:
            raise RuntimeError("ccalloc profiler: end_step() without begin_step()")
        if self._hooks_ctx is not None:
            self._hooks_ctx.__exit__(None, None, None)
            self._hooks_ctx = None
        self._boundary(None)
        self._in_step = False
        # The raw parts kept for _complete (two arrays of a few bytes per tag
        # per sample) are bounded: after this many samples they are derived
        # here, outside any boundary, in one warm loop.
        if len(self._pending) >= _PENDING_MAX:
            self._complete()
        # A forward that raised ends its step in the forward phase with its
        # modules on the stack: no module tags outside a step, and no stack.
        self._tagging[0] = False
        self._stack.clear()
        if self._outer_tag is not None:
            self.view.restore_tag(self._outer_tag)
            self._outer_tag = None
        # Saved tensors outlive a step only with retain_graph: keep the live ones.
        self._saved[:] = [(r, m) for r, m in self._saved if r() is not None]
        self._saved_blocks = None

    def _enter(self, phase):
        self.phase = phase
        self._tagging[0] = phase == "forward" and self.module_tags
        previous = self._setter(self._phase_tokens[phase])
        if self._outer_tag is None:
            self._outer_tag = previous

    def _boundary(self, next_phase):
        """Closes the current phase with a sample; opens next_phase."""
        if self.phase is None or self.phase == "start":
            return
        t0 = time.perf_counter()
        closing = self.phase
        if closing == "optimizer":
            self._opt_ptrs = None   # the optimizer may have created or replaced state
        self._sample(closing)
        if next_phase is not None:
            self._enter(next_phase)
        self._count(next_phase or "end", time.perf_counter() - t0)

    def _count(self, opening, seconds):
        self.host_seconds += seconds
        self.boundaries += 1
        by = self.host_seconds_by_boundary
        by[opening] = by.get(opening, 0.0) + seconds

    # --- hooks -----------------------------------------------------------------------
    def _root_pre(self, module, args):
        if threading.get_ident() != self._thread:
            return
        if self._in_step and not self._stack:
            self._boundary("forward")
        self._stack.append(self._root_entry)

    def _root_post(self, module, args, output):
        if threading.get_ident() != self._thread:
            return
        if self._stack:
            self._stack.pop()
        if self._in_step and not self._stack:
            self._boundary("loss")

    # The per-module hooks run on every module call: each is one closure made
    # at attach time, doing one thread check, a push or pop of a prebuilt
    # entry and, in forward with module tags, the one C call that sets the
    # tag (no dict lookup, no attribute of the profiler, no tuple built).
    def _make_pre(self, name):
        entry = (name, self._token(f"forward/{name}"))
        token = entry[1]
        push, tagging, setter = self._stack.append, self._tagging, self._setter
        thread, get_ident = self._thread, threading.get_ident

        def pre(module, args):
            if get_ident() == thread:
                push(entry)
                if tagging[0]:
                    setter(token)
        return pre

    def _make_post(self):
        stack, tagging, setter = self._stack, self._tagging, self._setter
        pop, thread, get_ident = stack.pop, self._thread, threading.get_ident

        def post(module, args, output):
            if get_ident() == thread and stack:
                pop()
                # The parent's tag back (the root's entry carries "forward").
                if tagging[0] and stack:
                    setter(stack[-1][1])
        return post

    def _make_pack(self):
        # Runs in forward for each tensor autograd saves: remember (a weak
        # reference, so autograd alone decides how long it lives) which
        # module saved it, nothing more.
        append, ref, stack = self._saved.append, weakref.ref, self._stack

        def pack(tensor):
            append((ref(tensor), stack[-1][0] if stack else None))
            return tensor
        return pack

    def _backward(self, original, tensors, *args, **kwargs):
        self._boundary("backward")
        view, setter, token = self.view, self._setter, self._phase_tokens["backward"]
        # The engine runs backward on its own thread (CUDA): set the tag there,
        # from a hook on each root, which runs on that thread before its grad_fn.
        roots = (tensors,) if isinstance(tensors, self._torch.Tensor) else tuple(tensors)
        handles = []
        engine = getattr(self._torch.autograd.Variable, "_execution_engine", None)
        restored = []

        def set_backward_tag(grad):
            previous = setter(token)
            # Put the engine thread's tag back when this backward ends (the
            # callback runs on that thread): no tag outlives the profiler.
            if engine is not None and not restored:
                restored.append(True)
                engine.queue_callback(lambda: view.restore_tag(previous))
        for t in roots:
            if isinstance(t, self._torch.Tensor) and t.requires_grad:
                handles.append(t.register_hook(set_backward_tag))
        try:
            return original(tensors, *args, **kwargs)
        finally:
            for h in handles:
                h.remove()
            # The graph is freed unless retained: what it saved and is still
            # alive is held by the program now, not by autograd (temporaries).
            retain = args[1] if len(args) > 1 else kwargs.get("retain_graph")
            if retain is None:
                retain = args[2] if len(args) > 2 else kwargs.get("create_graph", False)
            if not retain:
                self._saved.clear()
                self._saved_blocks = None
            self._grads_unread = True
            self._boundary("other")

    def _opt_pre(self, optimizer, args, kwargs):
        if self._in_step and threading.get_ident() == self._thread:
            self._boundary("optimizer")

    def _opt_post(self, optimizer, args, kwargs):
        if self._in_step and threading.get_ident() == self._thread:
            self._boundary("other")

    # --- accounting ---------------------------------------------------------------
    def refresh(self):
        """Reads the model's parameters and buffers again (the profiler
        reads them once, when it attaches: call this after adding or
        replacing some; a tensor it does not know counts as temporaries)."""
        mods = self._names
        self._params = list({id(p): p for m in mods for p in m._parameters.values()
                             if p is not None}.values())
        self._tensors = self._params + [b for m in mods for b in m._buffers.values() if b is not None]
        self._grads_unread = True

    def _optimizer_ptrs(self):
        """Pointers of the optimizer state's device tensors. Checked only
        after the optimizer phase and at each step's start (the state
        changes in optimizer.step), and read again only when the state's
        objects changed: the same values (ids, in order, a C-level map; and
        the types of the values that are not tensors) with none of the
        tensors dead since (weak references whose callback, a C list append,
        flags a death: a new tensor could then reuse an id) keep their
        pointers (Adam and the like update their state in place; a state
        tensor whose storage is swapped in place, .data = or set_(), is not
        seen). A tensor found where a non-tensor was has another type."""
        if self._opt_ptrs is None:
            ptrs = ()
            if self.optimizer is not None:
                state = self.optimizer.state
                values = list(_chain(map(_VALUES, state.values())))
                ids = list(map(id, values))
                f = self._opt_fp
                if (f is not None and not f[3] and f[0] is state and f[1] == ids
                        and (not f[2] or all(type(values[i]) is t for i, t in f[2]))):
                    ptrs = f[4]
                else:
                    tensor = self._torch.Tensor
                    is_tensor = [isinstance(v, tensor) for v in values]
                    # Adam's "step" is a CPU scalar: no device block to look up
                    # (a fake view on CPU tensors, in the tests, takes them all).
                    skip_cpu = isinstance(self.view.device, int)
                    tensors = list(itertools.compress(values, is_tensor))
                    ptrs = [v.data_ptr() for v in tensors if not (skip_cpu and v.is_cpu)]
                    others = tuple((i, type(v)) for i, (v, t) in enumerate(zip(values, is_tensor)) if not t)
                    dead = []
                    refs = list(map(weakref.ref, tensors, itertools.repeat(dead.append)))
                    # (state, ids, (position, type) of the non-tensors, deaths, ptrs, weak references)
                    self._opt_fp = (state, ids, others, dead, ptrs, refs)
            self._opt_ptrs = ptrs
        return self._opt_ptrs

    def _lookup(self, ptrs, exclude=()):
        """({block start: size}, {module: bytes}) of the blocks holding ptrs
        (none: skipped) less those in the dicts of `exclude`, and of those
        the bytes of blocks that carry a forward tag, by module (the block's
        tag ids are looked at only when one of them is a forward tag)."""
        r = self.view.blocks(ptrs)
        blocks = dict(zip(r[0], r[1]))
        blocks.pop(0, None)
        for known in exclude:
            if not known.keys().isdisjoint(blocks):
                blocks = {k: v for k, v in blocks.items() if k not in known}
        owned = {}
        fwd = self._fwd_tokens
        if len(r) > 2 and not fwd.keys().isdisjoint(r[2]):
            for k, t in dict(zip(r[0], r[2])).items():
                m = fwd.get(t)
                if m is not None and k in blocks:
                    owned[m] = owned.get(m, 0) + blocks[k]
        return blocks, owned

    def _static_blocks(self):
        """The parameters' and the optimizer state's blocks (self._P and
        self._O, each {start: size}, a block counted once, the parameters
        first) and their totals: looked up again only when their pointer
        lists change (parameters: read at each step's start; optimizer
        state: after the optimizer phase), not at every boundary. The lists
        are the same objects while nothing changed, so the usual check
        (_known's) is one identity test each."""
        param_ptrs = self._param_ptrs
        if param_ptrs is not self._param_key:
            if param_ptrs != self._param_key:
                self._P, self._P_fwd = self._lookup(param_ptrs)
                self._p_total = sum(self._P.values())
                self._opt_key = None      # optimizer state is counted after the parameters
            self._param_key = param_ptrs
        opt_ptrs = self._opt_ptrs
        if opt_ptrs is None:
            opt_ptrs = self._optimizer_ptrs()
        if opt_ptrs is not self._opt_key:
            if opt_ptrs != self._opt_key:
                self._O, owned = self._lookup(opt_ptrs, (self._P,))
                self._o_total = sum(self._O.values())
                self._PO_fwd = _add(self._P_fwd, owned)
                self._grad_ids = None     # gradients are counted after both
                self._grads_unread = True
            self._opt_key = opt_ptrs

    def _grad_blocks(self):
        """The gradients' blocks not already parameters' or optimizer
        state's (self._G, self._g_total; self._owned_fwd: what of all known
        blocks carries a forward tag, by module): looked up again only when
        some parameter's .grad is another tensor than at the last lookup
        (ids compared; weak references flag a cached gradient that died,
        after which a new tensor could have its id). The gradients are read
        (a C-level pass over the parameters) at a step's start, after each
        backward and once a known one died, not at every boundary: reading
        .grad makes a Python object for each new gradient, tens of us for a
        model's worth. A gradient set by hand elsewhere counts as
        temporaries until the next of those."""
        if not self._grads_unread and not self._grad_dead:
            return
        self._grads_unread = False
        grads = list(map(_GRAD, self._params))
        ids = list(map(id, grads))
        if ids == self._grad_ids and not self._grad_dead:
            return
        live = list(filter(_NOT_NONE, grads))
        G, owned = self._lookup(list(map(self._data_ptr, live)), (self._P, self._O))
        # The callback is a C list append: no Python frame per gradient freed.
        dead = []
        self._grad_ids = ids
        self._grad_dead = dead
        self._grad_refs = list(map(weakref.ref, live, itertools.repeat(dead.append)))
        self._G = G
        self._g_total = sum(G.values())
        self._owned_fwd = _add(self._PO_fwd, owned)
        self._known_now = (self._p_total, self._g_total, self._o_total, self._owned_fwd, None)

    def _read_tags(self):
        """The allocator's per-tag usage now as (keys, live, peak, by_id):
        three parallel sequences, keyed by tag id (ccalloc's view: arrays,
        no dict built) or else by name (a view's tag_usage())."""
        read = self._tag_read
        if read is not None:
            ids, cur, peak = read()
            return ids, cur, peak, True
        return _read_of(self.view.tag_usage())

    def _forward_layout(self, read):
        """(positions of the forward tags in read's keys, their modules,
        whether no module has two of them): derived again only when the keys
        change (a new tag: ccalloc's view then returns another ids object)."""
        keys, by_id = read[0], read[3]
        layout = self._layout
        if layout is not None and layout[0] is keys:
            return layout
        if layout is not None and layout[3] == by_id and layout[0] == keys:
            layout = self._layout = (keys,) + layout[1:]
            return layout
        fwd = self._fwd_tokens if by_id else self._fwd_names
        where = [(i, fwd[k]) for i, k in enumerate(keys) if k in fwd]
        idx = tuple(i for i, _ in where)
        mods = tuple(m for _, m in where)
        layout = self._layout = (keys, idx, mods, by_id, len(set(mods)) == len(mods))
        return layout

    def _known(self):
        """(parameters, gradients, optimizer state, {module: bytes of those
        blocks under a forward tag}, {module: bytes} with exact_saved else
        None): the known tensors' blocks now, from the caches (looked up
        again where pointers or gradients changed)."""
        if self._params is None:  # outside any step so far
            self.refresh()
            self._param_ptrs = list(map(self._data_ptr, self._tensors))
        opt_ptrs = self._opt_ptrs
        if opt_ptrs is None or opt_ptrs is not self._opt_key or self._param_ptrs is not self._param_key:
            self._static_blocks()
        self._grad_blocks()
        if self.exact_saved:
            return self._known_now[:4] + (self._saved_modules() if self._saved else {},)
        return self._known_now

    def _derive(self, read, counters, known):
        """The sample dict of a read: read is (keys, live, peak, by_id) of
        the tags, counters (allocated, peak, reserved, largest free block),
        known what _known() gave when it was read."""
        p, g, o, owned, modules = known
        if modules is None:
            # Live bytes allocated in forward, by module, less the blocks
            # already counted as parameters, gradients or optimizer state.
            layout = self._forward_layout(read)
            vals = list(map(read[1].__getitem__, layout[1]))
            if not owned and layout[4]:
                modules = {m: v for m, v in zip(layout[2], vals) if v > 0}
                activations = sum(vals)        # live bytes are never negative
            else:
                modules = {}
                for m, v in zip(layout[2], vals):
                    if v:
                        modules[m] = modules.get(m, 0) + v
                for m, v in owned.items():
                    if m in modules:
                        modules[m] -= v
                modules = {m: v for m, v in modules.items() if v > 0}
                activations = sum(modules.values())
        else:
            activations = sum(modules.values())
        allocated = counters[0]
        kinds = {"parameters": p, "gradients": g, "optimizer_state": o, "activations": activations,
                 "temporaries": allocated - (p + g + o + activations)}
        return {"allocated": allocated, "reserved": counters[2], "peak": counters[1], "kinds": kinds,
                "activations_by_module": modules, "largest_free": counters[3],
                "activations_basis": "saved" if self.exact_saved else "forward"}

    def _saved_modules(self):
        """{module: bytes} of the blocks holding the tensors autograd saved
        (exact_saved), each block once, the first saver's, less known blocks."""
        saved = self._saved
        # Each saved tensor's block is looked up once: it stays the
        # same while the tensor lives (dead ones are dropped here).
        cache = self._saved_blocks
        if cache is None or cache[0] > len(saved):
            cache = self._saved_blocks = [0, [], []]
        tensors = list(map(_CALL, map(_FIRST, saved)))
        n = cache[0]
        if n < len(tensors):
            new = [0 if t is None else t.data_ptr() for t in tensors[n:]]
            r = self.view.blocks(new)
            starts, sizes = r[0], r[1]
            cache[1] += starts
            cache[2] += sizes
            cache[0] = len(tensors)
        alive = list(map(operator.is_not, tensors, itertools.repeat(None)))
        owners = list(itertools.compress(map(_SECOND, saved), alive))
        starts = list(itertools.compress(cache[1], alive))
        sizes = list(itertools.compress(cache[2], alive))
        owners.reverse()
        starts.reverse()
        sizes.reverse()
        first = dict(zip(starts, zip(sizes, owners)))   # the first saver wins
        first.pop(0, None)
        for known in (self._P, self._O, self._G):
            for k in first.keys() & known.keys():
                del first[k]
        modules = {}
        for size, owner in first.values():
            key = owner or "(no module)"
            modules[key] = modules.get(key, 0) + size
        return modules

    def _check(self, allocated, known):
        """At the boundary, the check that needs no tag: the parameters',
        gradients' and optimizer state's blocks fit in what is allocated.
        (With the activations, when the sample is derived: a negative
        temporaries kind, which problems() reports.)"""
        if known[0] + known[1] + known[2] > allocated:
            raise memreport.AccountingError(
                f"account: known tensors' blocks hold {known[0] + known[1] + known[2]} bytes "
                f"but only {allocated} are allocated")

    def measure(self, tags=None):
        """The memory now, by kind (no sample kept). tags: view.tag_usage()
        read now (read here when None)."""
        if tags is None and self._one_read is not None:
            known = self._known()
            raw = self._one_read(False)
            read, counters = _split(raw)
        else:
            read = self._read_tags() if tags is None else _read_of(tags)
            known = self._known()
            view = self.view
            counters = view.counters() + (view.largest_free(),)
        s = self._derive(read, counters, known)
        if s["kinds"]["temporaries"] < 0:
            raise memreport.AccountingError(
                f"account: known tensors' blocks hold {s['allocated'] - s['kinds']['temporaries']} "
                f"bytes but only {s['allocated']} are allocated")
        return s

    def _sample(self, phase, first=False):
        """Keeps a sample of the memory now, closing `phase`: the known
        tensors' totals (from the caches) and one read of the allocator,
        kept raw. Everything else (the sample dict, activations by module,
        tag_rise) is derived when the samples are read (_complete): a
        boundary allocates a tuple and the read's array, so it does little
        for the garbage collector to count either."""
        if self._one_read is not None:
            known = self._known()
            raw = self._one_read(True)
            counters = None
            allocated = raw[0]
        else:
            raw = self._read_tags()
            known = self._known()
            view = self.view
            counters = view.counters() + (view.largest_free(),)
            view.reset_peaks()
            allocated = counters[0]
        self._check(allocated, known)
        torch_allocated = (self._torch.cuda.memory_allocated(self.view.device)
                           if self.check_torch else None)
        self._pending.append((self.step_index, phase, time.perf_counter() - self._t0, first, raw,
                              counters, known, self._prev_raw, torch_allocated))
        self._prev_raw = raw

    def _complete(self):
        """Makes the sample dicts of the kept reads (_sample): kinds,
        activations by module, and tag_rise (each tag's peak less its live
        bytes at the previous sample of the step, where above)."""
        name_of = getattr(self.view, "tag_name", None)
        samples = self._samples
        top = self._max_allocated
        last_raw = last_read = None
        for step, phase, t, first, raw, counters, known, prev, torch_allocated in self._pending:
            if counters is None:
                read, counters = _split(raw)
            else:
                read = raw
            s = self._derive(read, counters, known)
            s["step"] = step
            s["phase"] = phase
            s["t"] = t
            if first:
                s["peak"] = s["allocated"]
            keys, cur, peak, by_id = read
            names = keys if not by_id else map(name_of, keys)
            if prev is None:
                before = [0] * len(keys)
            else:
                if prev is last_raw:
                    prev = last_read
                elif type(prev) is not tuple:
                    prev = _split(prev)[0]
                if prev[0] == keys:
                    before = prev[1]
                else:
                    at = dict(zip(prev[0], prev[1]))
                    before = [at.get(k, 0) for k in keys]
            s["tag_rise"] = {n: p - b for n, p, b in zip(names, peak, before) if p > b}
            if torch_allocated is not None:
                s["torch_allocated"] = torch_allocated
            if s["peak"] > top:
                top = s["peak"]
            samples.append(s)
            last_raw, last_read = raw, read
        self._max_allocated = top
        self._pending.clear()

    @property
    def max_allocated(self):
        """The run's peak of allocated bytes (the samples' peaks; PyTorch's
        max_memory_allocated is reset at each boundary)."""
        if self._pending:
            self._complete()
        return self._max_allocated

    # --- output ------------------------------------------------------------------
    def report(self, step=None):
        if step is None:
            return memreport.report(self.samples)
        by = memreport.steps_of(self.samples)
        if step not in by:
            raise KeyError(f"ccalloc profiler: no step {step} (have {sorted(by)})")
        return memreport.step_report(by[step], by.get(step - 1))

    def svg(self, **kwargs):
        return memreport.svg(self.samples, **kwargs)

    def json(self):
        return memreport.to_json(self.samples, {"max_allocated": self.max_allocated})

    def problems(self):
        """(step, phase, message) for every boundary whose kinds do not add up."""
        return [(s["step"], s["phase"], p) for s in self.samples for p in memreport.check_sample(s)]

    def save(self, prefix):
        """Writes prefix.txt (the report), prefix.svg (the plot), prefix.json."""
        paths = {}
        for ext, text in (("txt", self.report()), ("svg", self.svg()), ("json", self.json())):
            paths[ext] = f"{prefix}.{ext}"
            with open(paths[ext], "w") as f:
                f.write(text + "\n")
        return paths

    def oom_report(self, error=None):
        """The live memory by kind and holder now (call it in an except
        torch.OutOfMemoryError block); also kept as last_oom_report()."""
        usage = self.view.tag_usage()
        s = self.measure(usage)
        tags = {name: cur for name, (cur, _) in usage.items()}
        module = self._stack[-1][0] if self._stack else None
        text = memreport.oom_report(s, tags, phase=self.phase, module=module)
        if error is not None:
            text = f"{error}\n{text}"
        self._last_oom = text
        return text

    def last_oom_report(self):
        return self._last_oom


def _add(a, b):
    """{k: a[k] + b[k]} (new dict; a and b unchanged)."""
    if not b:
        return a
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def _split(raw):
    """(tag read, counters) of a _CcallocView.read() array: its tag ids,
    live and peak bytes (arrays, by id), and (allocated, peak, reserved,
    largest free block)."""
    return (raw[4::3], raw[5::3], raw[6::3], True), (raw[0], raw[1], raw[2], raw[3])


def _read_of(usage):
    """A tag read (_read_tags) of a {name: (live, peak)} dict."""
    return list(usage), [v[0] for v in usage.values()], [v[1] for v in usage.values()], False


_GRAD = operator.attrgetter("grad")
_CALL = weakref.ref.__call__
_NOT_NONE = functools.partial(operator.is_not, None)
_FIRST = operator.itemgetter(0)
_SECOND = operator.itemgetter(1)
_VALUES = dict.values
_chain = itertools.chain.from_iterable


def _unpack(tensor):
    return tensor


class _Step:
    def __init__(self, prof):
        self.prof = prof

    def __enter__(self):
        self.prof.begin_step()
        return self.prof

    def __exit__(self, exc_type, exc, tb):
        torch = self.prof._torch
        if exc is not None and isinstance(exc, getattr(torch, "OutOfMemoryError", ())):
            # Before the step ends and the graph goes: the memory as it was.
            report = self.prof.oom_report()
            exc.args = (f"{exc.args[0] if exc.args else ''}\n{report}",) + tuple(exc.args[1:])
        self.prof.end_step()
        return False


class _Restore:
    """Patches an instance's attribute; remove() puts back what the instance
    had before (another profiler's wrapper, say, or nothing: the class's),
    as long as the attribute is still this patch."""

    _MISSING = object()

    def __init__(self, obj, name, value):
        self.obj, self.name, self.value = obj, name, value
        self.previous = vars(obj).get(name, self._MISSING)
        setattr(obj, name, value)

    def remove(self):
        if vars(self.obj).get(self.name, self._MISSING) is not self.value:
            return
        if self.previous is self._MISSING:
            delattr(self.obj, self.name)
        else:
            setattr(self.obj, self.name, self.previous)
