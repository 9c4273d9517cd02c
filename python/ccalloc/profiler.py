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
for the tag stores and, with module tags, a hook per module call) it reads
ccalloc's counters and per-tag live bytes, and maps the known tensors
(parameters, gradients, optimizer state) to the allocated blocks that hold
them in batched lookups (ccalloc_torch_blocks_holding, which also gives each
block's tag), cached while the tensors stay the same. Each block counts once,
parameters first, then gradients, then optimizer state.

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
        self._get_stats = lib.ccalloc_torch_get_stats
        self._blocks_holding = lib.ccalloc_torch_blocks_holding
        self._largest = ctypes.c_size_t()
        self._largest_free = lib.ccalloc_torch_largest_free_block
        self._set_tag = lib.ccalloc_torch_set_tag
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
        self._tag_room = 0
        self._tag_names = {}      # tag id -> name (names never change)
        self._tag_ids = self._tag_list = None   # the last read's ids and their names
        self._array = array.array
        self._u64p = ctypes.POINTER(ctypes.c_uint64)
        self._u32p = ctypes.POINTER(ctypes.c_uint32)
        self._cast = ctypes.cast
        self._byref = ctypes.byref

    def counters(self):
        if self._get_stats(self.device, self._byref(self._stats)) != 0:
            self.plugin._check(self.plugin.lib.ccalloc_torch_last_error_code() or 1)
        s = self._stats
        return s[_ALLOCATED_BYTES_ALL], s[_ALLOCATED_BYTES_ALL + 1], s[_RESERVED_BYTES_ALL]

    def blocks(self, ptrs):
        """(starts, sizes, tags): the allocated block holding each pointer
        (0, 0, 0 where none) and its tag id."""
        n = len(ptrs)
        if n == 0:
            return [], [], []
        arr = self._array("Q", ptrs)
        starts = self._array("Q", bytes(8 * n))
        sizes = self._array("Q", bytes(8 * n))
        tags = self._array("I", bytes(4 * n))
        cast, u64p = self._cast, self._u64p
        code = self._blocks_holding(self.device, cast(arr.buffer_info()[0], u64p), n,
                                    cast(starts.buffer_info()[0], u64p),
                                    cast(sizes.buffer_info()[0], u64p),
                                    cast(tags.buffer_info()[0], self._u32p))
        if code != 0:
            self.plugin._check(code)
        return starts.tolist(), sizes.tolist(), tags.tolist()

    def largest_free(self):
        if self._largest_free(self.device, self._byref(self._largest)) != 0:
            return 0
        return self._largest.value

    def tag_usage(self):
        """{tag name: (live bytes, peak bytes)}: one C call into
        preallocated arrays, names cached by id."""
        fn = self._tag_usage
        if fn is None:
            return {t["name"]: (t["current_bytes"], t["peak_bytes"])
                    for t in self.plugin.tag_usage(self.device)}
        while True:
            room = self._tag_room
            if room == 0 or len(self._tag_buf[0]) != room:
                room = self._tag_room = max(room, 64)
                self._tag_buf = (self._array("I", bytes(4 * room)), self._array("q", bytes(8 * room)),
                                 self._array("q", bytes(8 * room)))
            ids, cur, peak = self._tag_buf
            n = fn(self.device, ids.buffer_info()[0], cur.buffer_info()[0], peak.buffer_info()[0], room)
            if n < 0:
                self.plugin._check(self.plugin.lib.ccalloc_torch_last_error_code() or 1)
            if n <= room:
                break
            self._tag_room = 2 * n
        ids = ids[:n].tolist()
        if ids != self._tag_ids:
            names = self._tag_names
            for t in ids:
                if t not in names:
                    names[t] = self.plugin.tag_name(t)
            self._tag_ids = ids
            self._tag_list = list(map(names.__getitem__, ids))
        return dict(zip(self._tag_list, zip(cur[:n].tolist(), peak[:n].tolist())))

    def reset_peaks(self):
        self.plugin.reset_peak_stats(self.device)

    def tag_token(self, name):
        """What tag_setter() takes for `name`: its interned id."""
        tag = self._ids.get(name)
        if tag is None:
            tag = self._ids[name] = self.plugin.tag_intern(name)
        return tag

    def tag_setter(self):
        """A callable(token) -> previous tag id: the C function itself (no
        Python frame in between), for the per-module hooks."""
        return self._set_tag

    def set_tag(self, name):
        return self._set_tag(self.tag_token(name))

    def restore_tag(self, tag_id):
        self._set_tag(tag_id)


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
        self.samples = []
        self.max_allocated = 0
        self.step_index = 0
        self.phase = None
        self._t0 = time.perf_counter()
        self._thread = threading.get_ident()
        self._handles = []
        self._saved = []          # (weakref to a saved tensor, module name)
        self._stack = []          # (name, tag token) of the modules running forward (main thread)
        self._module = [None]     # the innermost module running forward, for the pack hook
        self.host_seconds = 0.0   # time spent at phase boundaries (see bench/memory_report.py)
        self.boundaries = 0
        self._hooks_ctx = None
        self._outer_tag = None
        self._tags_at_start = {}
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
        # The forward tags: name -> module and tag token -> module ("forward"
        # itself: the model's own forward, or all of it without module tags).
        root = self._names[model]
        self._fwd_names = {f"forward/{n}": n for m, n in self._names.items() if m is not model}
        self._fwd_names["forward"] = root
        self._fwd_tokens = {self._token(name): m for name, m in self._fwd_names.items()}
        self._opt_ptrs = None     # optimizer state pointers, refreshed when the optimizer may have run
        self._opt_fp = None       # what they were read from (_optimizer_ptrs)
        self._saved_blocks = None  # [n, starts, sizes] of _saved[:n] (measure)
        self._cache = {}          # blocks of parameters, optimizer state, gradients (_static_blocks)
        self._attach()

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
                self.optimizer.step = step
                self._handles.append(_Restore(self.optimizer, "step", None))
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
        self._param_ptrs = [t.data_ptr() for t in self._tensors]
        self._opt_ptrs = None
        self._outer_tag = None
        self.phase = "start"
        self._tags_at_start = {}
        self._sample("start", first=True)
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
        self._stack.clear()  # a forward that raised left its modules on it
        self._module[0] = None
        if self._outer_tag is not None:
            self.view.restore_tag(self._outer_tag)
            self._outer_tag = None
        # Saved tensors outlive a step only with retain_graph: keep the live ones.
        self._saved[:] = [(r, m) for r, m in self._saved if r() is not None]
        self._saved_blocks = None

    def _enter(self, phase):
        self.phase = phase
        previous = self.view.set_tag(phase)
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
        self.host_seconds += time.perf_counter() - t0
        self.boundaries += 1

    # --- hooks -----------------------------------------------------------------------
    def _root_pre(self, module, args):
        if threading.get_ident() != self._thread:
            return
        if self._in_step and not self._stack:
            self._boundary("forward")
        name = self._names[module]
        self._stack.append((name, None))
        self._module[0] = name

    def _root_post(self, module, args, output):
        if threading.get_ident() != self._thread:
            return
        if self._stack:
            self._stack.pop()
        self._module[0] = self._stack[-1][0] if self._stack else None
        if self._in_step and not self._stack:
            self._boundary("loss")

    def _make_pre(self, name):
        # The hot path (every module call): no attribute lookups on self
        # beyond the phase, no string formatting, the tag set by the C
        # function directly.
        entry = (name, self._token(f"forward/{name}"))
        prof, stack, current, setter = self, self._stack, self._module, self._setter
        thread, get_ident, tags = self._thread, threading.get_ident, self.module_tags

        def pre(module, args):
            if get_ident() != thread:
                return
            stack.append(entry)
            current[0] = name
            if tags and prof.phase == "forward":
                setter(entry[1])
        return pre

    def _make_post(self):
        prof, stack, current, setter = self, self._stack, self._module, self._setter
        thread, get_ident, tags = self._thread, threading.get_ident, self.module_tags
        forward = self._token("forward")

        def post(module, args, output):
            if get_ident() != thread or not stack:
                return
            stack.pop()
            parent = stack[-1] if len(stack) > 1 else None
            current[0] = stack[-1][0] if stack else None
            if tags and prof.phase == "forward":
                setter(parent[1] if parent is not None else forward)
        return post

    def _make_pack(self):
        # Runs in forward for each tensor autograd saves: remember (a weak
        # reference, so autograd alone decides how long it lives) which
        # module saved it, nothing more.
        append, ref, current = self._saved.append, weakref.ref, self._module

        def pack(tensor):
            append((ref(tensor), current[0]))
            return tensor
        return pack

    def _backward(self, original, tensors, *args, **kwargs):
        self._boundary("backward")
        view = self.view
        # The engine runs backward on its own thread (CUDA): set the tag there,
        # from a hook on each root, which runs on that thread before its grad_fn.
        roots = (tensors,) if isinstance(tensors, self._torch.Tensor) else tuple(tensors)
        handles = []
        engine = getattr(self._torch.autograd.Variable, "_execution_engine", None)
        restored = []

        def set_backward_tag(grad):
            previous = view.set_tag("backward")
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

    def _optimizer_ptrs(self):
        """Pointers of the optimizer state's device tensors. Checked only
        after the optimizer phase and at each step's start (the state
        changes in optimizer.step), and read again only when the state's
        objects changed: the same values (ids and types, in order, C-level
        maps) with none of the tensors dead since (weak references with a
        callback: a new tensor at a reused id) keep their pointers (Adam and
        the like update their state in place; a state tensor whose storage is
        swapped in place, .data = or set_(), is not seen)."""
        if self._opt_ptrs is None:
            ptrs = ()
            if self.optimizer is not None:
                state = self.optimizer.state
                values = list(_chain(map(_VALUES, state.values())))
                ids, types = list(map(id, values)), list(map(type, values))
                f = self._opt_fp
                if f is not None and not f[3][0] and f[0] is state and f[1] == ids and f[2] == types:
                    ptrs = f[4]
                else:
                    tensor = self._torch.Tensor
                    # Adam's "step" is a CPU scalar: no device block to look up
                    # (a fake view on CPU tensors, in the tests, takes them all).
                    skip_cpu = isinstance(self.view.device, int)
                    kept = [v for v in values
                            if isinstance(v, tensor) and not (skip_cpu and v.is_cpu)]
                    ptrs = list(map(tensor.data_ptr, kept))
                    dead = [False]

                    def died(_, dead=dead):
                        dead[0] = True
                    refs = [weakref.ref(v, died) for v in values if isinstance(v, tensor)]
                    # (state, ids, types, [dead], ptrs, weak references)
                    self._opt_fp = (state, ids, types, dead, ptrs, refs)

            self._opt_ptrs = ptrs
        return self._opt_ptrs

    def _lookup(self, ptrs):
        """({block start: size}, {block start: tag}) of the blocks holding
        ptrs (none: skipped)."""
        r = self.view.blocks(ptrs)
        blocks = dict(zip(r[0], r[1]))
        blocks.pop(0, None)
        tags = dict(zip(r[0], r[2])) if len(r) > 2 else {}
        tags.pop(0, None)
        return blocks, tags

    def _forward_owned(self, blocks, tags):
        """{module: bytes} of those blocks that carry a forward tag."""
        fwd = self._fwd_tokens
        out = {}
        if fwd.keys().isdisjoint(tags.values()):
            return out
        for k, t in tags.items():
            m = fwd.get(t)
            if m is not None and k in blocks:
                out[m] = out.get(m, 0) + blocks[k]
        return out

    def _static_blocks(self):
        """The parameters' and the optimizer state's blocks, each a dict
        {start: size}, and their totals with each block counted once (the
        parameters first): looked up again only when their pointer lists
        change (parameters: read at each step's start; optimizer state:
        after the optimizer phase), not at every boundary."""
        param_ptrs, opt_ptrs = self._param_ptrs, self._optimizer_ptrs()
        c = self._cache
        if c.get("param_ptrs") != param_ptrs:
            c.clear()
            c["param_ptrs"] = param_ptrs
            c["P"], tags = self._lookup(param_ptrs)
            c["p_total"] = sum(c["P"].values())
            c["P_fwd"] = self._forward_owned(c["P"], tags)
        if c.get("opt_ptrs") != opt_ptrs:
            c["opt_ptrs"] = opt_ptrs
            O, tags = self._lookup(opt_ptrs)
            P = c["P"]
            if not P.keys().isdisjoint(O):
                O = {k: v for k, v in O.items() if k not in P}
            c["O"] = O
            c["o_total"] = sum(O.values())
            c["PO_fwd"] = _add(c["P_fwd"], self._forward_owned(O, tags))
            c.pop("grad_ids", None)   # gradients are counted after both
        return c

    def _grad_blocks(self, c):
        """The gradients' blocks not already parameters' or optimizer
        state's: looked up again only when some parameter's .grad is
        another tensor than at the last lookup (ids compared; weak
        references with a callback flag a cached gradient that died, after
        which a new tensor could have its id)."""
        ids = list(map(id, map(_GRAD, self._params)))
        if c.get("grad_ids") == ids and not c["grad_dead"][0]:
            return c["g_total"], c["G"]
        live = list(filter(_NOT_NONE, map(_GRAD, self._params)))
        G, tags = self._lookup(list(map(self._torch.Tensor.data_ptr, live)))
        P, O = c["P"], c["O"]
        if not (P.keys().isdisjoint(G) and O.keys().isdisjoint(G)):
            G = {k: v for k, v in G.items() if k not in P and k not in O}
        dead = [False]

        def died(_, dead=dead):
            dead[0] = True
        c["grad_ids"] = ids
        c["grad_dead"] = dead
        c["grad_refs"] = list(map(weakref.ref, live, itertools.repeat(died)))
        c["G"] = G
        c["g_total"] = sum(G.values())
        c["fwd"] = _add(c["PO_fwd"], self._forward_owned(G, tags))
        return c["g_total"], G

    def measure(self, tags=None):
        """The memory now, by kind (no sample kept). tags: view.tag_usage()
        read now (read here when None)."""
        if self._params is None:  # outside any step so far
            self.refresh()
            self._param_ptrs = [t.data_ptr() for t in self._tensors]
        c = self._static_blocks()
        g_total, G = self._grad_blocks(c)
        kinds = dict.fromkeys(memreport.KINDS, 0)
        kinds["parameters"] = c["p_total"]
        kinds["optimizer_state"] = c["o_total"]
        kinds["gradients"] = g_total
        modules = {}
        saved = self._saved
        if not self.exact_saved:
            # Live bytes allocated in forward, by module, less the blocks
            # already counted as parameters, gradients or optimizer state.
            if tags is None:
                tags = self.view.tag_usage()
            names, owned = self._fwd_names, c["fwd"]
            for name in names.keys() & tags.keys():
                cur = tags[name][0]
                if cur:
                    m = names[name]
                    modules[m] = modules.get(m, 0) + cur
            for m, v in owned.items():
                if m in modules:
                    modules[m] -= v
            modules = {m: v for m, v in modules.items() if v > 0}
            kinds["activations"] = sum(modules.values())
        elif saved:
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
            for known in (c["P"], c["O"], G):
                for k in first.keys() & known.keys():
                    del first[k]
            for size, owner in first.values():
                key = owner or "(no module)"
                modules[key] = modules.get(key, 0) + size
            kinds["activations"] = sum(modules.values())
        allocated, peak, reserved = self.view.counters()
        known = sum(kinds.values())
        if known > allocated:
            raise memreport.AccountingError(
                f"account: known tensors' blocks hold {known} bytes but only {allocated} are allocated")
        kinds["temporaries"] = allocated - known
        return {"allocated": allocated, "reserved": reserved, "peak": peak, "kinds": kinds,
                "activations_by_module": modules, "largest_free": self.view.largest_free(),
                "activations_basis": "saved" if self.exact_saved else "forward"}

    def _sample(self, phase, first=False):
        tags = self.view.tag_usage()
        s = self.measure(tags)
        s["step"] = self.step_index
        s["phase"] = phase
        s["t"] = time.perf_counter() - self._t0
        if first:
            s["peak"] = s["allocated"]
        s["tag_rise"] = {name: peak - self._tags_at_start.get(name, (0, 0))[0]
                         for name, (cur, peak) in tags.items()
                         if peak - self._tags_at_start.get(name, (0, 0))[0] > 0}
        self._tags_at_start = tags
        if self.check_torch:
            s["torch_allocated"] = self._torch.cuda.memory_allocated(self.view.device)
        self.max_allocated = max(self.max_allocated, s["peak"])
        self.view.reset_peaks()
        self.samples.append(s)
        return s

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
    """A handle that puts back an attribute patched on an instance."""

    def __init__(self, obj, name, value):
        self.obj, self.name = obj, name

    def remove(self):
        try:
            delattr(self.obj, self.name)
        except AttributeError:
            pass
