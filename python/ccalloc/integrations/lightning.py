"""ccalloc's memory profiler in a Lightning Trainer.

    import ccalloc.torch
    ccalloc.torch.enable()                       # first thing: ccalloc is PyTorch's allocator
    from ccalloc.integrations.lightning import MemoryCallback

    trainer = lightning.pytorch.Trainer(max_steps=1000, callbacks=[MemoryCallback(every=100)])
    trainer.fit(module, data)     # default_root_dir/ccalloc_memory/memory.txt, .svg, .json

MemoryCallback is a lightning.pytorch.Callback (pytorch_lightning.Callback
where only that is installed), made on first access: importing this module
imports neither. setup() picks the directory (`output_dir`, default
trainer.default_root_dir/ccalloc_memory; memory.rank<N> per process when
there are several); on_fit_start attaches ccalloc.torch.profile(pl_module,
trainer.optimizers[0]); each training batch is a profiler step
(on_train_batch_start/on_train_batch_end). The forward phase opens at the
batch's start and closes at zero_grad or backward, whichever comes first,
since training_step often calls submodules rather than the module itself,
so what training_step computes before backward (the loss too) counts as
forward; the optimizer phase opens when Lightning's closure (forward and
backward, run inside optimizer.step) returns. Every `every` batches and at
on_train_end it writes prof.save(prefix); after each batch it logs the
figures with pl_module.log_dict (ccalloc/<kind>_gib for each kind of
ccalloc.memreport.KINDS: its most at any phase boundary of the batch;
ccalloc/allocated_gib and reserved_gib at its end; ccalloc/peak_gib).
"""

import os

from ._common import Session, lazy_callback

__all__ = ["MemoryCallback"]


def _callback_class():
    try:
        from lightning.pytorch import Callback
    except ImportError as first:
        try:
            from pytorch_lightning import Callback
        except ImportError as e:
            raise ImportError(
                "ccalloc.integrations.lightning.MemoryCallback needs the 'lightning' package "
                f"(or 'pytorch_lightning'), which could not be imported ({first}); install it "
                "(pip install lightning)", name="lightning") from e
    return _make(Callback)


def _make(base):
    class MemoryCallback(base):
        """ccalloc's memory profiler over a Lightning fit (see the module's
        docstring). output_dir: where the files go (default
        trainer.default_root_dir/ccalloc_memory); every: write them every
        this many training batches (0 or None: only at the end); keep: the
        files and the profiler hold step 1 and the last `keep` steps (None:
        all); prefix: the files' name; log: log the figures with
        pl_module.log_dict; other keywords go to ccalloc.torch.profile."""

        def __init__(self, output_dir=None, every=100, keep=100, prefix="memory", log=True,
                     **profile_kwargs):
            super().__init__()
            self.output_dir = output_dir
            self.log = log
            self.session = Session(output_dir, every, keep, prefix, profile_kwargs)
            self._forward_open = False

        @property
        def profiler(self):
            return self.session.profiler

        def figures(self):
            return self.session.figures()

        @property
        def final(self):
            return self.session.final

        def _where(self, trainer):
            s = self.session
            s.directory = self.output_dir or os.path.join(
                getattr(trainer, "default_root_dir", None) or ".", "ccalloc_memory")
            s.rank = int(getattr(trainer, "global_rank", 0) or 0)
            s.world_size = int(getattr(trainer, "world_size", 1) or 1)

        def _attach(self, trainer, pl_module, restart=False):
            optimizers = list(getattr(trainer, "optimizers", None) or [])
            self.session.attach(pl_module, optimizers[0] if optimizers else None, restart=restart)

        def setup(self, trainer, pl_module, stage=None):
            self._where(trainer)

        def on_fit_start(self, trainer, pl_module):
            self._where(trainer)
            self._attach(trainer, pl_module, restart=True)

        def on_train_batch_start(self, trainer, pl_module, batch, batch_idx, *args):
            self._attach(trainer, pl_module)
            self.session.begin()
            if self.session.profiler is not None:
                self.session.profiler.begin_forward()
                self._forward_open = True

        def _end_forward(self):
            if self._forward_open:
                self._forward_open = False
                self.session.profiler.end_forward()

        def on_before_zero_grad(self, trainer, pl_module, optimizer):
            self._end_forward()

        def on_before_backward(self, trainer, pl_module, loss):
            self._end_forward()

        def on_before_optimizer_step(self, trainer, pl_module, optimizer, *args):
            self._end_forward()

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, *args):
            self._end_forward()
            self.session.end()
            if self.log:
                values = self.session.log_values()
                if values:
                    pl_module.log_dict(values, on_step=True, on_epoch=False, prog_bar=False,
                                       logger=True)

        def on_train_end(self, trainer, pl_module):
            self._forward_open = False
            self.session.finish()

        def on_exception(self, trainer, pl_module, exception):
            self._forward_open = False
            self.session.abort()

    MemoryCallback.__module__ = __name__
    MemoryCallback.__qualname__ = "MemoryCallback"
    return MemoryCallback


__getattr__, __dir__ = lazy_callback(__name__, globals(), _callback_class)
