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
ccalloc's counters and maps every known tensor (parameters, gradients,
optimizer state, tensors saved for backward, attributed to the module running
when autograd saved them through saved_tensors_hooks) to the allocated block
that holds it in one batched lookup (ccalloc_torch_blocks_holding);
memreport.account() counts each block once, and what no known tensor holds is
temporaries, so the kinds add up to memory_allocated() exactly. Peaks are per
phase: the allocator's peak counters (also PyTorch's max_memory_allocated,
which the profiler therefore resets at each boundary; max_allocated keeps the
run's peak) and the per-tag peaks, with tags named "<phase>" or
"<phase>/<module>", say what raised each phase's peak.
"""

import threading
import time
import weakref

from . import memreport

__all__ = ["MemoryProfiler"]


class _CcallocView:
    """What the profiler reads from and sets in the allocator (one device)."""

    def __init__(self, plugin, device):
        self.plugin = plugin
        self.device = device
        self._ids = {}

    def counters(self):
        s = self.plugin.raw_stats(self.device)
        return (s["allocated_bytes.all.current"], s["allocated_bytes.all.peak"],
                s["reserved_bytes.all.current"])

    def blocks(self, ptrs):
        starts, sizes, _ = self.plugin.blocks_holding(ptrs, self.device)
        return list(zip(starts, sizes))

    def largest_free(self):
        return self.plugin.largest_free_block(self.device)

    def tag_usage(self):
        return {t["name"]: (t["current_bytes"], t["peak_bytes"])
                for t in self.plugin.tag_usage(self.device)}

    def reset_peaks(self):
        self.plugin.reset_peak_stats(self.device)

    def set_tag(self, name):
        tag = self._ids.get(name)
        if tag is None:
            tag = self._ids[name] = self.plugin.tag_intern(name)
        return self.plugin.set_tag(tag)

    def restore_tag(self, tag_id):
        self.plugin.set_tag(tag_id)


class MemoryProfiler:
    """Accounts every allocated byte per step and phase to a kind.

    model: the torch.nn.Module trained (its forward opens the forward phase).
    optimizer: its torch.optim.Optimizer (None: no optimizer phase).
    module_tags: tag forward allocations "forward/<module>" (a pre/post hook
        per module; off: one tag per phase).
    saved_activations: attribute tensors saved for backward to modules.
    device: the CUDA device (default: the parameters').
    view: what reads the allocator (tests pass a fake; default ccalloc's).
    """

    def __init__(self, model, optimizer=None, *, module_tags=True, saved_activations=True,
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
        self.saved_activations = saved_activations
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
        self._stack = []          # names of the modules running forward (main thread)
        self._hooks_ctx = None
        self._outer_tag = None
        self._tags_at_start = {}
        self._params = None
        self._last_oom = None
        self._in_step = False
        self._closed = False
        self._original_backward = None
        self._names = {m: (n or type(model).__name__) for n, m in model.named_modules()}
        self._attach()

    # --- attaching -------------------------------------------------------------
    def _attach(self):
        torch = self._torch
        self._handles.append(self.model.register_forward_pre_hook(self._root_pre))
        self._handles.append(self.model.register_forward_hook(self._root_post))
        if self.module_tags or self.saved_activations:
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
        self._params = [p for p in self.model.parameters()]
        self._params += [b for b in self.model.buffers()]
        self._outer_tag = None
        self.phase = "start"
        self._tags_at_start = {}
        self._sample("start", first=True)
        self._enter("other")
        if self.saved_activations:
            torch = self._torch
            self._hooks_ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, _unpack)
            self._hooks_ctx.__enter__()

    def end_step(self):
        if not self._in_step:
            raise RuntimeError("ccalloc profiler: end_step() without begin_step()")
        if self._hooks_ctx is not None:
            self._hooks_ctx.__exit__(None, None, None)
            self._hooks_ctx = None
        self._boundary(None)
        self._in_step = False
        self._stack = []  # a forward that raised left its modules on it
        if self._outer_tag is not None:
            self.view.restore_tag(self._outer_tag)
            self._outer_tag = None
        # Saved tensors outlive a step only with retain_graph: keep the live ones.
        self._saved = [(r, m) for r, m in self._saved if r() is not None]

    def _enter(self, phase):
        self.phase = phase
        previous = self.view.set_tag(phase)
        if self._outer_tag is None:
            self._outer_tag = previous

    def _boundary(self, next_phase):
        """Closes the current phase with a sample; opens next_phase."""
        if self.phase is None or self.phase == "start":
            return
        self._sample(self.phase)
        if next_phase is not None:
            self._enter(next_phase)

    # --- hooks -----------------------------------------------------------------------
    def _root_pre(self, module, args):
        if self._in_step and threading.get_ident() == self._thread and not self._stack:
            self._boundary("forward")
        self._stack.append(self._names[module])

    def _root_post(self, module, args, output):
        if self._stack:
            self._stack.pop()
        if self._in_step and threading.get_ident() == self._thread and not self._stack:
            self._boundary("loss")

    def _make_pre(self, name):
        tag = f"forward/{name}"
        prof = self

        def pre(module, args):
            if threading.get_ident() != prof._thread:
                return
            prof._stack.append(name)
            if prof.module_tags and prof.phase == "forward":
                prof.view.set_tag(tag)
        return pre

    def _make_post(self):
        prof = self

        def post(module, args, output):
            if threading.get_ident() != prof._thread or not prof._stack:
                return
            prof._stack.pop()
            if prof.module_tags and prof.phase == "forward":
                prof.view.set_tag(f"forward/{prof._stack[-1]}" if len(prof._stack) > 1 else "forward")
        return post

    def _pack(self, tensor):
        # Runs in forward for each tensor autograd saves: remember which
        # module saved it, nothing more (the hot path).
        self._saved.append((weakref.ref(tensor), self._stack[-1] if self._stack else self.phase))
        return tensor

    def _backward(self, original, tensors, *args, **kwargs):
        self._boundary("backward")
        view = self.view
        # The engine runs backward on its own thread (CUDA): set the tag there,
        # from a hook on each root, which runs on that thread before its grad_fn.
        roots = (tensors,) if isinstance(tensors, self._torch.Tensor) else tuple(tensors)
        handles = []
        for t in roots:
            if isinstance(t, self._torch.Tensor) and t.requires_grad:
                def set_backward_tag(grad):
                    view.set_tag("backward")
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
                self._saved = []
            self._boundary("other")

    def _opt_pre(self, optimizer, args, kwargs):
        if self._in_step and threading.get_ident() == self._thread:
            self._boundary("optimizer")

    def _opt_post(self, optimizer, args, kwargs):
        if self._in_step and threading.get_ident() == self._thread:
            self._boundary("other")

    # --- accounting ---------------------------------------------------------------
    def _known(self):
        holders, ptrs = [], []
        for p in self._params or ():
            ptr = p.data_ptr()
            if ptr:
                holders.append(("parameters", None))
                ptrs.append(ptr)
            g = p.grad
            if g is not None and g.data_ptr():
                holders.append(("gradients", None))
                ptrs.append(g.data_ptr())
        if self.optimizer is not None:
            torch = self._torch
            for state in self.optimizer.state.values():
                for v in state.values():
                    if isinstance(v, torch.Tensor) and v.data_ptr():
                        holders.append(("optimizer_state", None))
                        ptrs.append(v.data_ptr())
        for ref, module in self._saved:
            t = ref()
            if t is not None and t.data_ptr():
                holders.append(("activations", module))
                ptrs.append(t.data_ptr())
        return holders, ptrs

    def measure(self):
        """The memory now, by kind (no sample kept)."""
        holders, ptrs = self._known()
        blocks = self.view.blocks(ptrs)
        allocated, peak, reserved = self.view.counters()
        kinds, modules = memreport.account(allocated, holders, blocks)
        return {"allocated": allocated, "reserved": reserved, "peak": peak, "kinds": kinds,
                "activations_by_module": modules, "largest_free": self.view.largest_free()}

    def _sample(self, phase, first=False):
        s = self.measure()
        s["step"] = self.step_index
        s["phase"] = phase
        s["t"] = time.perf_counter() - self._t0
        if first:
            s["peak"] = s["allocated"]
        tags = self.view.tag_usage()
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
        s = self.measure()
        tags = {name: cur for name, (cur, _) in self.view.tag_usage().items()}
        module = self._stack[-1] if self._stack else None
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
    """A handle that puts back an attribute patched on an instance."""

    def __init__(self, obj, name, value):
        self.obj, self.name = obj, name

    def remove(self):
        try:
            delattr(self.obj, self.name)
        except AttributeError:
            pass
