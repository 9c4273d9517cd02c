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
"optimizer" (given a closure, as LBFGS and Lightning do, "optimizer" opens
when the closure, which runs forward and backward, returns); everything
else is "other". begin_forward()/end_forward() open and close forward for
loops that never call the model itself.

Module tags ("forward/<module>", set while a submodule's forward runs): each
submodule's forward attribute is replaced by a C wrapper (_profiler_ext.py,
pysrc/profiler_ext.cc) that sets the module's tag id around the call, so a
module call keeps PyTorch's fast path (no hooks) and runs no Python frame of
the profiler's; the wrappers are removed at close(). Where that cannot be
used (module_tags="hooks", exact_saved, a view without the C tag function,
no compiler, a DataParallel), a forward pre and post hook per module does
the same in Python, at several times a plain module call's cost.

Steps are sampled (sample_every): the first three and every tenth are
accounted; in a step between, the hooks only note the phase (module tags
off, nothing read), and the allocator's peak counter carries that step's
peak to the next accounted read (max_allocated).

At each phase boundary of an accounted step (never per allocation, so the
hot path pays only for the tag stores, one per module call and phase) it takes
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

Where the code is: this module holds MemoryProfiler's construction, its
hooks, the phase boundaries, the kept samples and the output;
ccalloc/_profiler_accounting.py the accounting of blocks to kinds (the
_Accounting mixin: refresh(), measure(), _derive()); ccalloc/_profiler_view.py
the allocator's reads (_CcallocView). The hooks stay in this class:
leftovers() knows a profiler's hooks by their qualified names
("MemoryProfiler."). Every ccalloc name importable from here before that
split still is (re-exported below). May call: ccalloc.memreport, those two
modules, torch (imported when a MemoryProfiler is made, never at import
time) and ccalloc.torch (for the default view).
"""

import threading
import time
import weakref

from . import memreport
# Re-exported: importable as ccalloc.profiler.<name> (tests and benches use
# _CcallocView and _split).
from ._profiler_accounting import (_CALL, _FIRST, _GRAD, _NOT_NONE, _SECOND,  # noqa: F401
                                   _VALUES, _Accounting, _add, _chain, _read_of)
from ._profiler_view import (_ALLOCATED_BYTES_ALL, _RESERVED_BYTES_ALL,  # noqa: F401
                             _STATS_INT64, _CcallocView, _split, _unchecked)

__all__ = ["MemoryProfiler"]


# Samples whose raw parts (_sample) wait for the report at most; past that
# end_step derives them (~1,000 steps of 8 boundaries; about 2 KB a sample
# with a hundred tags).
_PENDING_MAX = 8192

# The steps accounted whatever sample_every says: the first ones are where
# memory is set up (the optimizer's state, cudnn's workspaces, the cache's
# growth), and differ from the steady state that the later samples show.
_FIRST_STEPS = 3


class MemoryProfiler(_Accounting):
    """Accounts every allocated byte per step and phase to a kind.

    model: the torch.nn.Module trained (its forward opens the forward phase).
    optimizer: its torch.optim.Optimizer (None: no optimizer phase).
    module_tags: tag forward allocations "forward/<module>". True: through
        a C wrapper of each submodule's forward (_profiler_ext.py: no Python
        frame per module call; where it cannot be built, or the view has no
        C tag function, Python forward hooks); "hooks": Python forward
        pre/post hooks per module (PyTorch's hooked call path, several times
        a plain module call: for code that must see hooks, or replaces or
        compiles module forwards); False: one tag per phase, and
        activations are not split by module.
    exact_saved: activations are the blocks holding tensors autograd saved
        for backward (a Python pack hook per saved tensor: costly), instead
        of the default "allocated in forward, still live" read from the
        allocator's per-tag counters.
    sample_every: which steps are accounted: the first three and then
        every sample_every-th (step numbers count from 1); 1: every step.
        A step not accounted runs with module tags off and no boundary
        work, only the hooks' one check each, so the profiler's cost a step
        is about the accounted step's divided by sample_every; the
        allocator's peak counter covers the steps between (max_allocated,
        and each sampled step's start says what was live then), and no
        report names what raised a peak inside one of them.
    device: the CUDA device (default: the parameters').
    view: what reads the allocator (tests pass a fake; default ccalloc's).
    """

    def __init__(self, model, optimizer=None, *, module_tags=True, exact_saved=False,
                 sample_every=10, device=None, view=None, check_torch=False):
        import torch
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"ccalloc profiler: model must be a torch.nn.Module, not {type(model).__name__}")
        if optimizer is not None and not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError("ccalloc profiler: optimizer must be a torch.optim.Optimizer or None, "
                            f"not {type(optimizer).__name__}")
        self._torch = torch
        self._data_ptr = torch.Tensor.data_ptr
        # The C loops of the boundaries' scans (_profiler_accounting.py), or
        # None: the same in Python.
        from . import _profiler_ext
        self._ext = _profiler_ext.load()
        self.model = model
        self.optimizer = optimizer
        if module_tags not in (True, False, "hooks"):
            raise ValueError(f"ccalloc profiler: module_tags is True, False or \"hooks\", not {module_tags!r}")
        self.module_tags = module_tags
        if type(sample_every) is not int or sample_every < 1:
            raise ValueError(f"ccalloc profiler: sample_every is an int of at least 1, not {sample_every!r}")
        self.sample_every = sample_every
        # True in a step that is not accounted (begin_step): the hooks return at once.
        self._quiet = False
        self._read_before = False  # whether a sample has read (and reset) the peak
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
        # The same for the C forward wrappers (a _profiler_ext Switch), when
        # module tags go through them (_attach), else None.
        self._switch = None
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
        # The root's hooks hold the profiler weakly and act for its model
        # only: copy.deepcopy(model) (an EMA copy, say) shares them (functions
        # are copied as they are) instead of failing to copy the profiler.
        ref, model = weakref.ref(self), self.model

        def root_pre(module, args):
            prof = ref()
            if prof is not None and module is model:
                prof._root_pre(module, args)

        def root_post(module, args, output):
            prof = ref()
            if prof is not None and module is model:
                prof._root_post(module, args, output)
        self._handles.append(self.model.register_forward_pre_hook(root_pre))
        self._handles.append(self.model.register_forward_hook(root_post))
        if (self.module_tags or self.exact_saved) and not self._wrap_forwards():
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
                    wrapped = prof._opt_pre(None, args, kwargs)
                    if wrapped is not None:
                        args, kwargs = wrapped
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

    def _wrap_forwards(self):
        """Module tags through C wrappers of the submodules' forwards
        (pysrc/profiler_ext.cc), all of them or none: False where they cannot
        be used (module_tags="hooks", exact_saved, whose pack hook reads the
        Python module stack; a view without a C tag function; the wrappers
        not built; a DataParallel in the model, whose replicas copy each
        module's attributes and would call the original module's forward; a
        module whose forward cannot be replaced)."""
        address = getattr(self.view, "tag_function", None)
        if self.module_tags is not True or self.exact_saved or address is None:
            return False
        if any(isinstance(m, self._torch.nn.DataParallel) for m in self._names):
            return False
        ext = self._ext
        if ext is None:
            return False
        switch = ext.Switch(address())
        switch.thread = self._thread
        done = []
        # Containers (ModuleList, ModuleDict) have no forward of their own.
        unimplemented = self._torch.nn.Module.forward
        try:
            for module, name in self._names.items():
                if module is not self.model and type(module).forward is not unimplemented:
                    wrapper = ext.TagForward(switch, module.forward, self._token(f"forward/{name}"))
                    done.append(_Restore(module, "forward", wrapper))
        except (AttributeError, TypeError, RuntimeError):
            for r in done:
                r.remove()
            return False
        self._handles.extend(done)
        self._switch = switch
        return True

    def close(self):
        """Removes every hook and wrapper, the backward wrapper too."""
        if self._closed:
            return
        self._closed = True
        if self._switch is not None:
            # Inert from now on, also where another wrapper of the forward
            # (installed after this one) keeps it from being removed.
            self._switch.on = 0
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
            if type(vars(module).get("forward")).__module__ == "_ccalloc_profiler_ext":
                out.append(f"forward wrapper on {name}")
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
        self._quiet = not self.sampled(self.step_index)
        if self._quiet:
            # Nothing sampled, no tags set; the boundaries only note the
            # phase, for an out-of-memory report (_boundary).
            self.phase = "other"
            return
        # Parameters and buffers as found when the profiler attached (see
        # refresh()); their pointers read once per step.
        if self._params is None:
            self.refresh()
        self._param_ptrs = self._tensor_ptrs(self._tensors)
        self._opt_ptrs = None
        self._grads_unread = True
        self._outer_tag = None
        self.phase = "start"
        self._prev_raw = None
        t0 = time.perf_counter()
        # A step's first read: 2 once the profiler has read before, whose
        # peak since then (the gap between steps, and the steps not
        # accounted) counts in max_allocated.
        self._sample("start", first=2 if self._read_before else 1)
        self._read_before = True
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
        if self._quiet:
            self._quiet = False
            self._stack.clear()
            return
        # The raw parts kept for _complete (two arrays of a few bytes per tag
        # per sample) are bounded: after this many samples they are derived
        # here, outside any boundary, in one warm loop.
        if len(self._pending) >= _PENDING_MAX:
            self._complete()
        # A forward that raised ends its step in the forward phase with its
        # modules on the stack: no module tags outside a step, and no stack.
        self._tagging[0] = False
        if self._switch is not None:
            self._switch.on = 0
        self._stack.clear()
        if self._outer_tag is not None:
            self.view.restore_tag(self._outer_tag)
            self._outer_tag = None
        # Saved tensors outlive a step only with retain_graph: keep the live ones.
        self._saved[:] = [(r, m) for r, m in self._saved if r() is not None]
        self._saved_blocks = None

    def sampled(self, step):
        """Whether step number `step` is (or was) accounted: the first
        three and every sample_every-th."""
        return step <= _FIRST_STEPS or step % self.sample_every == 0

    @property
    def in_step(self):
        """True between begin_step() and end_step()."""
        return self._in_step

    def begin_forward(self):
        """Opens the forward phase as calling the model does, for loops that
        run the forward some other way (Lightning's training_step calling the
        model's submodules, not the model itself); end_forward() closes it
        and opens "loss". Calls of the model inside nest in it."""
        self._root_pre(self.model, ())

    def end_forward(self):
        self._root_post(self.model, (), None)

    def _enter(self, phase):
        self.phase = phase
        tagging = self._tagging[0] = phase == "forward" and bool(self.module_tags)
        if self._switch is not None:
            self._switch.on = tagging
        previous = self._setter(self._phase_tokens[phase])
        if self._outer_tag is None:
            self._outer_tag = previous

    def _boundary(self, next_phase):
        """Closes the current phase with a sample; opens next_phase."""
        if self._quiet:
            # A step not accounted: where it is, for oom_report(), nothing else.
            if next_phase is not None:
                self.phase = next_phase
            return
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

    # The per-module hooks (the Python way of module tags, see _wrap_forwards)
    # run on every module call: each is one closure made
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
        if self._quiet:
            self.phase = "backward"
            try:
                return original(tensors, *args, **kwargs)
            finally:
                self.phase = "other"
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
            if self._quiet:
                self.phase = "optimizer"
                return None
            wrapped = self._wrap_closure(optimizer, args, kwargs)
            if wrapped is not None:
                return wrapped
            self._boundary("optimizer")

    def _wrap_closure(self, optimizer, args, kwargs):
        """A step given a closure (LBFGS; Lightning passes its training step
        as one) runs forward and backward inside optimizer.step(): the
        optimizer phase then opens when the closure returns, not when step()
        is called. Returns (args, kwargs) with the closure wrapped (what a
        step pre hook may return), or None when there is none. A step pre
        hook's args start with the optimizer itself; the step wrapper's
        (PyTorch < 2.0, optimizer None) do not."""
        at = 1 if optimizer is not None and args and args[0] is optimizer else 0
        if len(args) > at and callable(args[at]):
            closure = args[at]
        elif callable(kwargs.get("closure")):
            closure = kwargs["closure"]
        else:
            return None
        prof_ref = weakref.ref(self)

        def closure_then_optimizer(*a, **k):
            result = closure(*a, **k)
            prof = prof_ref()
            if prof is not None and prof._in_step and threading.get_ident() == prof._thread:
                prof._boundary("optimizer")
            return result
        if len(args) > at and args[at] is closure:
            return tuple(args[:at]) + (closure_then_optimizer,) + tuple(args[at + 1:]), kwargs
        return tuple(args), dict(kwargs, closure=closure_then_optimizer)

    def _opt_post(self, optimizer, args, kwargs):
        if self._in_step and threading.get_ident() == self._thread:
            self._boundary("other")

    # --- samples (the accounting itself: _profiler_accounting.py) --------------------
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
                # The peak since the read before belongs to no phase of this step.
                if first == 2 and s["peak"] > top:
                    top = s["peak"]
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

    def figures(self, step=None):
        """One step's figures in bytes (default: the last step sampled; None
        before any): {"step", "kinds": each kind at the step's last boundary
        (they add up to "allocated"), "max_kinds": each kind's most at any of
        the step's boundaries, "allocated" and "reserved" at the last
        boundary, "peak": the step's peak (between boundaries too)}. What the
        trainer callbacks (ccalloc.integrations) log."""
        samples = self.samples
        if not samples:
            return None
        if step is None:
            step = samples[-1]["step"]
        mine = []
        for s in reversed(samples):        # a step's samples are contiguous
            if s["step"] == step:
                mine.append(s)
            elif mine:
                break
        mine.reverse()
        if not mine:
            raise KeyError(f"ccalloc profiler: no step {step}")
        last = mine[-1]
        return {"step": step, "kinds": dict(last["kinds"]),
                "max_kinds": {k: max(s["kinds"][k] for s in mine) for k in memreport.KINDS},
                "allocated": last["allocated"], "reserved": last["reserved"],
                "peak": max(s["peak"] for s in mine)}

    # --- output ------------------------------------------------------------------
    def report(self, step=None):
        if step is None:
            return memreport.report(self.samples)
        by = memreport.steps_of(self.samples)
        if step not in by:
            raise KeyError(f"ccalloc profiler: no step {step} (have {sorted(by)})")
        # Compared with the step sampled before it (sample_every: not always step - 1).
        before = max((k for k in by if k < step), default=None)
        return memreport.step_report(by[step], by.get(before))

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
        if self._switch is not None and self._switch.on and hasattr(self.view, "current_tag"):
            # The forward wrappers keep no module stack: the tag set now says.
            module = self._fwd_tokens.get(self.view.current_tag(), module)
        text = memreport.oom_report(s, tags, phase=self.phase, module=module)
        if error is not None:
            text = f"{error}\n{text}"
        self._last_oom = text
        return text

    def last_oom_report(self):
        return self._last_oom


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
