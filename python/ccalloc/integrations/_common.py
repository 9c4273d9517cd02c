"""What the trainer callbacks share (ccalloc.integrations.transformers and
.lightning): the profiler's life over a training run, its files and the
figures logged. Imports no framework; torch only through ccalloc.torch's
profiler, when training starts."""

import os

from .. import memreport

GiB = float(1 << 30)


def lazy_callback(module_name, module_globals, build):
    """The module-level __getattr__ and __dir__ (PEP 562) of a callbacks
    module whose MemoryCallback subclasses its framework's callback class:
    build() imports the framework and makes the class, on first access, so
    that importing the module imports no framework."""
    made = []

    def __getattr__(name):
        if name == "MemoryCallback":
            if not made:
                made.append(build())
            return made[0]
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    def __dir__():
        return sorted(set(module_globals) | {"MemoryCallback"})

    return __getattr__, __dir__


def log_values(figures, prefix="ccalloc/"):
    """The logged figures of a step (MemoryProfiler.figures()), in GiB:
    <prefix><kind>_gib, each kind's most at any boundary of the step (the
    activations saved for backward, the gradients before zero_grad), and
    <prefix>allocated_gib, reserved_gib at the step's end and peak_gib, the
    step's peak; <prefix>sampled_step, the step they are of (the profiler
    accounts one step in sample_every, so a log between two of those repeats
    the last). {} before any step."""
    if not figures:
        return {}
    out = {f"{prefix}{kind}_gib": figures["max_kinds"][kind] / GiB for kind in memreport.KINDS}
    for key in ("allocated", "reserved", "peak"):
        out[f"{prefix}{key}_gib"] = figures[key] / GiB
    out[f"{prefix}sampled_step"] = figures["step"]
    return out


class Session:
    """One training run's profiler: attach() when the model (and the
    optimizer) are known, begin()/end() around each step, finish() at the
    end. Files go to `directory`/`prefix`.{txt,svg,json} (prefix gains
    .rank<N> when the run has several processes).

    every: write the files after every this many steps (None or 0: only at
        the end).
    keep: the files cover step 1 and the last `keep` steps sampled (the
        profiler's sample_every; older samples are dropped, so a long run's
        memory and files stay bounded; None keeps all).
    profile_kwargs: passed to ccalloc.torch.profile (module_tags,
        exact_saved, check_torch, ...).
    """

    def __init__(self, directory=None, every=100, keep=100, prefix="memory", profile_kwargs=None):
        if every is not None and (not isinstance(every, int) or every < 0):
            raise ValueError(f"ccalloc: every must be a whole number of steps or None, not {every!r}")
        if keep is not None and (not isinstance(keep, int) or keep < 1):
            raise ValueError(f"ccalloc: keep must be a positive number of steps or None, not {keep!r}")
        self.directory = directory
        self.every = every or 0
        self.keep = keep
        self.prefix = prefix
        self.profile_kwargs = dict(profile_kwargs or {})
        self.rank, self.world_size = 0, 1
        self.profiler = None
        self.model = self.optimizer = None
        self.paths = None          # what the last save() wrote
        self.final = None          # the memory by kind when the run ended (finish())
        self._held = []            # the steps sampled since the last trim, in order

    # --- the run -------------------------------------------------------------------
    def attach(self, model, optimizer=None, restart=False):
        """Makes the profiler once the model is known (restart: anew, for a
        new run), and again when the optimizer arrives after it (a profiler
        without one has no optimizer phase, and counts the optimizer's state
        as temporaries); an optimizer that replaces the one attached is not
        followed."""
        if model is None:
            return
        optimizer = _unwrap_optimizer(optimizer)
        if self.profiler is not None:
            if not restart and model is self.model and (optimizer is None or self.optimizer is not None):
                return
            self.abort()
        from .. import torch as ct
        if "view" not in self.profile_kwargs and not ct.is_enabled():
            raise RuntimeError(
                "ccalloc: the memory callback needs ccalloc as PyTorch's allocator: call "
                "ccalloc.torch.enable() first thing in the script (before CUDA is initialised), "
                "or run it under ccalloc-run / CCALLOC=1")
        self.profiler = ct.profile(model, optimizer, **self.profile_kwargs)
        self.model, self.optimizer = model, optimizer
        self.final = None
        self._held = []

    def begin(self):
        prof = self.profiler
        if prof is None:
            return
        if prof.in_step:           # the last step never ended (an exception the trainer swallowed)
            prof.end_step()
        prof.begin_step()

    def end(self):
        """Ends the step; writes the files every `every` steps. True if it did."""
        prof = self.profiler
        if prof is None or not prof.in_step:
            return False
        prof.end_step()
        self._trim()
        if self.every and prof.step_index % self.every == 0:
            self.save()
            return True
        return False

    def figures(self):
        return self.profiler.figures() if self.profiler is not None else None

    def log_values(self):
        return log_values(self.figures())

    def finish(self):
        """Ends a step left open, keeps the memory now by kind (final),
        writes the files and removes the profiler's hooks. The paths."""
        prof = self.profiler
        if prof is None:
            return None
        try:
            if prof.in_step:
                prof.end_step()
            self.final = prof.measure()
            if prof.samples:
                self.save()
        finally:
            prof.close()
        return self.paths

    def abort(self):
        """Removes the profiler's hooks after a failed run (nothing written)."""
        prof = self.profiler
        if prof is None:
            return
        try:
            if prof.in_step:
                prof.end_step()
        finally:
            prof.close()

    # --- files ---------------------------------------------------------------------
    def file_prefix(self):
        if self.directory is None:
            raise RuntimeError("ccalloc: the memory callback has no output directory yet")
        name = self.prefix if self.world_size <= 1 else f"{self.prefix}.rank{self.rank}"
        return os.path.join(self.directory, name)

    def save(self):
        prefix = self.file_prefix()
        os.makedirs(os.path.dirname(prefix), exist_ok=True)
        self.paths = self.profiler.save(prefix)
        return self.paths

    def _trim(self):
        """Drops the samples of steps older than the last `keep` sampled
        (step 1 stays: the optimizer state appears there), once twice that
        many are held, so that trimming costs little per step."""
        prof = self.profiler
        if self.keep is None or not prof.sampled(prof.step_index):
            return
        self._held.append(prof.step_index)
        if len(self._held) < 2 * self.keep + 1:
            return
        cut = self._held[-self.keep - 1]
        prof.samples = [s for s in prof.samples if s["step"] == 1 or s["step"] > cut]
        self._held = self._held[-self.keep:]


def _unwrap_optimizer(optimizer):
    """The torch optimizer inside a wrapper (accelerate's AcceleratedOptimizer
    keeps it as .optimizer, Lightning's LightningOptimizer as ._optimizer):
    its step hooks and state are the ones that count."""
    if optimizer is None:
        return None
    import torch
    for _ in range(4):
        inner = getattr(optimizer, "optimizer", None) or getattr(optimizer, "_optimizer", None)
        if inner is optimizer or not isinstance(inner, torch.optim.Optimizer):
            break
        optimizer = inner
    return optimizer
