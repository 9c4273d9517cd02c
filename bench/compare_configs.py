"""What bench/compare_training.py compares: the allocator configurations, the
baseline the others are set against, and the clocks of ccalloc's that a run
reads after every step.

A leaf of the comparison's modules: the child side (compare_child.py), the
figures (compare_stats.py), the tables (compare_report.py) and the runner
(compare_training.py) all read these. CONFIGS is one dict that they share:
--ccalloc-config and --torch-config add to it (compare_training.parse_args).
"""

CONFIGS = {
    "native": {"torch_conf": None},
    "native_expandable": {"torch_conf": "expandable_segments:True"},
    "cuda_malloc_async": {"torch_conf": "backend:cudaMallocAsync"},
    "ccalloc": {"ccalloc_conf": ""},
    "ccalloc_classic": {"ccalloc_conf": "expandable_segments:False"},
    # A/A controls: the same allocator again, so that the spread a
    # difference must clear is measured in the same call (bench/protocol.py).
    "expandable_b": {"torch_conf": "expandable_segments:True"},
    "ccalloc_b": {"ccalloc_conf": ""},
}
# What a plain run compares (the protocol of record: bench/protocol.py).
DEFAULT_CONFIGS = "native_expandable,ccalloc,expandable_b,ccalloc_b"
BASELINE = "native_expandable"   # what ccalloc's step time is compared with
# ccalloc's own clocks read after every step (ns): the launching thread's time
# in placements that mapped memory, its waits for queued work, the unmap
# worker's time in its calls (off the launching thread), and the waits split
# by what waited: pages under a block still mapped to moved memory, a trim
# beyond the marks, memory going back; and the launching thread's own unmaps,
# map calls and creates (within prepare_ns).
HOST_CLOCKS = ("prepare_ns", "wait_ns", "worker_ns", "wait_under_block_ns", "wait_trim_ns",
               "wait_release_ns", "foreground_unmap_ns", "map_ns", "create_ns")


def is_ccalloc(config_name):
    return "ccalloc_conf" in CONFIGS[config_name]
