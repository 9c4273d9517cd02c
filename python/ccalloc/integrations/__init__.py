"""Trainer integrations of ccalloc's memory profiler.

    from ccalloc.integrations.transformers import MemoryCallback   # Hugging Face Trainer
    from ccalloc.integrations.lightning import MemoryCallback      # Lightning Trainer

Each MemoryCallback attaches ccalloc.torch.profile(model, optimizer) when
training starts, makes every optimizer step (transformers) or training
batch (Lightning) a profiler step, writes the report, the plot and the JSON
(prof.save) every `every` steps and at the end, and logs each kind's bytes
to the trainer's loggers (ccalloc/<kind>_gib, ...). See docs/profiler.md.

Nothing here imports a framework: ccalloc depends on neither. The classes
are made on first access (they subclass the framework's own callback
class), and a missing framework is an ImportError that names it.
"""

__all__ = ["transformers", "lightning"]
