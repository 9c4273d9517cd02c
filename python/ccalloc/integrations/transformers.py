"""ccalloc's memory profiler in a Hugging Face Trainer.

    import ccalloc.torch
    ccalloc.torch.enable()                       # first thing: ccalloc is PyTorch's allocator
    from ccalloc.integrations.transformers import MemoryCallback

    trainer = Trainer(model=model, args=args, train_dataset=data,
                      callbacks=[MemoryCallback(every=100)])
    trainer.train()       # output_dir/ccalloc_memory/memory.txt, .svg, .json

MemoryCallback is a transformers.TrainerCallback, made on first access
(importing this module imports no transformers). on_train_begin attaches
ccalloc.torch.profile(model, optimizer) (from the event's model and
optimizer; an optimizer that arrives later, at on_step_begin, replaces a
profiler made without one; accelerate's AcceleratedOptimizer is unwrapped
to the torch optimizer in it); on_step_begin/on_step_end make each
optimizer step (its gradient-accumulation substeps included) a profiler
step; every `every` steps and at on_train_end it writes prof.save(prefix) in
`output_dir` (default: args.output_dir/ccalloc_memory; memory.rank<N> per
process when there are several); on_log adds the figures of the last step
to the logs (ccalloc/<kind>_gib for each kind of ccalloc.memreport.KINDS: its
most at any phase boundary of the step; ccalloc/allocated_gib and
reserved_gib at the step's end; ccalloc/peak_gib) and to the entry
Trainer.log already put in state.log_history.

The Trainer calls the callbacks it was given after its reporting ones
(TensorBoard, W&B, ...), which therefore log the same dict before this one
adds to it: callback.install(trainer) moves it first, so that they log the
figures too.
"""

import os

from ._common import Session, lazy_callback

__all__ = ["MemoryCallback"]


def _callback_class():
    try:
        from transformers import TrainerCallback
    except ImportError as e:
        raise ImportError(
            "ccalloc.integrations.transformers.MemoryCallback needs the 'transformers' package, "
            f"which could not be imported ({e}); install it (pip install transformers)",
            name="transformers") from e
    return _make(TrainerCallback)


def _make(base):
    class MemoryCallback(base):
        """ccalloc's memory profiler over a Trainer run (see the module's
        docstring). output_dir: where the files go (default
        args.output_dir/ccalloc_memory); every: write them every this many
        optimizer steps (0 or None: only at the end); keep: the files and
        the profiler hold step 1 and the last `keep` steps (None: all);
        prefix: the files' name; log: add the figures to the Trainer's logs;
        other keywords go to ccalloc.torch.profile (module_tags,
        exact_saved, check_torch)."""

        def __init__(self, output_dir=None, every=100, keep=100, prefix="memory", log=True,
                     **profile_kwargs):
            super().__init__()
            self.output_dir = output_dir
            self.log = log
            self.session = Session(output_dir, every, keep, prefix, profile_kwargs)

        @property
        def profiler(self):
            """The MemoryProfiler of the run (None before training starts)."""
            return self.session.profiler

        def figures(self):
            """The last step's figures in bytes (MemoryProfiler.figures())."""
            return self.session.figures()

        @property
        def final(self):
            """The memory by kind when training ended (MemoryProfiler.measure())."""
            return self.session.final

        def install(self, trainer):
            """Puts this callback first among the trainer's (adding it if it
            is not there), so that the reporting callbacks log its figures."""
            callbacks = trainer.callback_handler.callbacks
            if self in callbacks:
                callbacks.remove(self)
            callbacks.insert(0, self)
            return self

        def on_train_begin(self, args, state, control, model=None, optimizer=None, **kwargs):
            s = self.session
            out = getattr(args, "output_dir", None) or "."
            s.directory = self.output_dir or os.path.join(out, "ccalloc_memory")
            s.rank = int(getattr(args, "process_index", 0) or 0)
            s.world_size = int(getattr(args, "world_size", 1) or 1)
            s.attach(model, optimizer, restart=True)

        def on_step_begin(self, args, state, control, model=None, optimizer=None, **kwargs):
            self.session.attach(model, optimizer)
            self.session.begin()

        def on_step_end(self, args, state, control, **kwargs):
            self.session.end()

        def on_log(self, args, state, control, logs=None, **kwargs):
            if not self.log or logs is None:
                return
            values = self.session.log_values()
            if not values:
                return
            history = getattr(state, "log_history", None)
            # Trainer.log appended {**logs, "step": global_step} before on_log.
            entry = history[-1] if history else None
            if (isinstance(entry, dict) and entry.get("step") == getattr(state, "global_step", None)
                    and all(entry.get(k) == v for k, v in logs.items())):
                entry.update(values)
            logs.update(values)

        def on_train_end(self, args, state, control, **kwargs):
            self.session.finish()

    MemoryCallback.__module__ = __name__
    MemoryCallback.__qualname__ = "MemoryCallback"
    return MemoryCallback


__getattr__, __dir__ = lazy_callback(__name__, globals(), _callback_class)
