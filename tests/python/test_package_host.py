"""Host-only tests of the ccalloc Python package against the real plugin
library on a simulated device (CCALLOC_TORCH_SIMULATE): no torch, no GPU.

    python3 tests/python/test_package_host.py        # or: python3 -m pytest tests/python

The plugin is found through CCALLOC_TORCH_LIBRARY or ccalloc.find_library()
(build*/allocator/libccalloc_torch.so of this checkout). Allocators are
per process and per device, so each test uses its own device number.

With CCALLOC_TEST_INSTALLED=1 the tests run against the installed package
(`pip install .`: ccalloc/ and its lib/libccalloc_torch.so in site-packages)
instead of this checkout's python/, and check that it is the one imported.
"""

import os
import sys
import types
import unittest
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALLED = os.environ.get("CCALLOC_TEST_INSTALLED") == "1"
# The package's own directory for the child processes below.
PACKAGE_PATH = [] if INSTALLED else [os.path.join(ROOT, "python")]
sys.path[0:0] = PACKAGE_PATH

import ccalloc  # noqa: E402
if INSTALLED and os.path.realpath(ccalloc.__file__).startswith(
        os.path.realpath(os.path.join(ROOT, "python")) + os.sep):
    raise SystemExit(f"CCALLOC_TEST_INSTALLED=1 but ccalloc comes from the checkout: {ccalloc.__file__}")
import ccalloc._shim  # noqa: E402
import ccalloc.torch as ct  # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
CAPACITY = 4 * GiB

# torch.cuda.memory_stats() keys as PyTorch's Module.cpp builds them, written
# out independently of ccalloc's stats/counters.cc.
ARRAYS = ["allocation", "segment", "active", "inactive_split", "allocated_bytes",
          "reserved_bytes", "active_bytes", "inactive_split_bytes", "requested_bytes"]
METRICS = ["current", "peak", "allocated", "freed"]
TORCH_KEYS = (
    {f"{a}.{p}.{m}" for a in ARRAYS for p in ("all", "small_pool", "large_pool") for m in METRICS}
    | {f"{s}.{m}" for s in ("oversize_allocations", "oversize_segments") for m in METRICS}
    | {"num_alloc_retries", "num_ooms", "max_split_size", "num_sync_all_streams",
       "num_device_alloc", "num_device_free"})

_saved_env = None
plugin = None


def setUpModule():
    global _saved_env, plugin
    _saved_env = os.environ.get("CCALLOC_TORCH_SIMULATE")
    os.environ["CCALLOC_TORCH_SIMULATE"] = str(CAPACITY)
    try:
        path = ccalloc.find_library()
    except FileNotFoundError as e:
        if os.environ.get(ccalloc._plugin.ENV_LIBRARY) or INSTALLED:
            raise
        raise unittest.SkipTest(f"plugin not built: {e}")
    plugin = ct.load(path)


def tearDownModule():
    if _saved_env is None:
        os.environ.pop("CCALLOC_TORCH_SIMULATE", None)
    else:
        os.environ["CCALLOC_TORCH_SIMULATE"] = _saved_env


class StatsTest(unittest.TestCase):
    def test_keys_are_exactly_torchs_and_counts_follow_allocations(self):
        dev = 0
        ptr = plugin.malloc(4 * MiB, device=dev)
        self.assertNotEqual(ptr, 0)
        stats = ct.memory_stats(dev)
        self.assertEqual(set(stats), TORCH_KEYS)
        self.assertEqual(list(stats), sorted(stats))
        self.assertEqual(ct.memory_allocated(dev), 4 * MiB)
        self.assertEqual(stats["allocation.all.current"], 1)
        self.assertEqual(stats["requested_bytes.all.current"], 4 * MiB)
        self.assertGreaterEqual(ct.memory_reserved(dev), 4 * MiB)
        extras = ct.ccalloc_stats(dev)
        self.assertGreaterEqual(extras["num_allocs"], 1)
        self.assertIn("fragmentation", extras)
        self.assertIn("expandable_segments", extras["options"])

        plugin.free(ptr, device=dev)
        self.assertEqual(ct.memory_allocated(dev), 0)
        self.assertGreater(ct.memory_reserved(dev), 0, "freed memory stays cached")
        ct.empty_cache()
        self.assertEqual(ct.memory_reserved(dev), 0)
        self.assertEqual(ct.max_memory_allocated(dev), 4 * MiB)

    def test_tags_count_allocations_per_tag_and_add_up(self):
        dev = 0
        with ct.tag("host/params"):
            a = plugin.malloc(4 * MiB, device=dev)
            with ct.tag("host/grads"):
                b = plugin.malloc(2 * MiB, device=dev)
            c = plugin.malloc(1 * MiB, device=dev)
        untagged = plugin.malloc(512, device=dev)
        usage = {u["name"]: u for u in ct.tag_usage(dev)}
        self.assertEqual(usage["host/params"]["current_bytes"], 5 * MiB)
        self.assertEqual(usage["host/params"]["blocks"], 2)
        self.assertEqual(usage["host/grads"]["current_bytes"], 2 * MiB)
        self.assertEqual(sum(u["current_bytes"] for u in usage.values()),
                         ct.memory_allocated(dev))
        self.assertEqual(plugin.current_tag(), 0, "the tag outlived its block")
        blocks = {blk["address"]: blk for seg in plugin.snapshot(dev)["segments"]
                  for blk in seg["blocks"]}
        self.assertEqual(blocks[b]["tag_name"], "host/grads")
        self.assertEqual(blocks[b]["tag"], usage["host/grads"]["tag"])
        self.assertNotIn("tag", blocks[untagged], "an untagged block names a tag")
        for p in (a, b, c, untagged):
            plugin.free(p, device=dev)
        usage = {u["name"]: u for u in ct.tag_usage(dev)}
        self.assertEqual(usage["host/params"]["current_bytes"], 0)
        self.assertEqual(usage["host/params"]["peak_bytes"], 5 * MiB)
        ct.empty_cache()

    def test_pause_with_backup_on_every_device(self):
        # device=None: every device with an allocator; a region never used on
        # one of them is skipped there, not an error.
        with ct.region("host/sleepy"):
            a0 = plugin.malloc(3 * MiB, device=0)
            a1 = plugin.malloc(5 * MiB, device=1)
        with ct.region("host/only0"):
            b0 = plugin.malloc(2 * MiB, device=0)
        given = ct.pause("host/sleepy")  # backup=True is the default
        self.assertGreaterEqual(given, 8 * MiB)
        self.assertEqual(ct.ccalloc_stats(0)["backup_bytes"], 3 * MiB)
        self.assertEqual(ct.ccalloc_stats(1)["backup_bytes"], 5 * MiB)
        self.assertGreaterEqual(ct.ccalloc_stats(1)["backup_host_bytes"], 5 * MiB)
        with self.assertRaises(ccalloc.CcallocError):
            ct.pause("host/sleepy", device=1)  # already paused: a clear error
        self.assertGreaterEqual(ct.pause("host/only0", backup=False, device="all"), 2 * MiB)
        self.assertGreaterEqual(ct.resume("host/only0", device="all"), 2 * MiB)
        plugin.free(a1, device=1)  # freeing a paused tensor drops its backup
        self.assertEqual(ct.ccalloc_stats(1)["backup_bytes"], 0)
        self.assertGreaterEqual(ct.resume("host/sleepy"), 3 * MiB)
        self.assertEqual(ct.ccalloc_stats(0)["backup_bytes"], 0)
        self.assertEqual(ct.ccalloc_stats(0)["paused_bytes"], 0)
        self.assertGreater(ct.ccalloc_stats(0)["backup_host_bytes"], 0, "kept for the next pause")
        with self.assertRaises(ValueError):
            ct.pause("host/sleepy", device="cpu")
        for p in (a0, b0):
            plugin.free(p, device=0)
        ct.empty_cache()
        self.assertEqual(ct.ccalloc_stats(0)["backup_host_bytes"], 0)

    def test_reserve_backup_pins_ahead_and_survives_empty_cache(self):
        with ct.region("host/ahead"):
            a = plugin.malloc(4 * MiB, device=0)
        pinned = ct.reserve_backup("host/ahead", device=0)
        self.assertGreaterEqual(pinned, 4 * MiB)
        ct.empty_cache()
        self.assertGreaterEqual(ct.ccalloc_stats(0)["backup_host_bytes"], pinned)
        self.assertGreaterEqual(ct.pause("host/ahead", device=0), 4 * MiB)
        self.assertGreaterEqual(ct.resume("host/ahead", device=0), 4 * MiB)
        plugin.free(a, device=0)

    def test_region_pause_and_resume_keep_addresses(self):
        dev = 0
        with ct.region("host/weights"):
            w = plugin.malloc(6 * MiB, device=dev)
        other = plugin.malloc(2 * MiB, device=dev)
        reserved = ct.memory_reserved(dev)
        given = ct.pause("host/weights", backup=False, device=dev)
        self.assertGreaterEqual(given, 6 * MiB)
        self.assertEqual(ct.memory_reserved(dev), reserved - given)
        self.assertEqual(ct.ccalloc_stats(dev)["paused_bytes"], given)
        with ct.region("host/weights"):
            with self.assertRaises(ccalloc.CcallocError) as refused:
                plugin.malloc(MiB, device=dev)
        self.assertIn("paused", str(refused.exception))
        self.assertEqual(ct.ccalloc_stats(dev)["backup_bytes"], 0, "no backup was asked for")
        self.assertTrue(all(s.get("paused") for s in plugin.snapshot(dev)["segments"]
                            if w in {b["address"] for b in s["blocks"]}))
        self.assertGreaterEqual(ct.resume("host/weights", device=dev), 6 * MiB)
        segments = plugin.snapshot(dev)["segments"]
        blocks = {b["address"]: b for s in segments for b in s["blocks"]}
        self.assertEqual(blocks[w]["state"], "active_allocated", "the tensor moved")
        for p in (w, other):
            plugin.free(p, device=dev)
        ct.empty_cache()

    def test_nested_dict_mirrors_flat_keys(self):
        dev = 9
        ptr = plugin.malloc(MiB, device=dev)
        nested = ct.memory_stats_as_nested_dict(dev)
        self.assertEqual(nested["allocated_bytes"]["all"]["current"], MiB)
        self.assertEqual(nested["num_ooms"], 0)
        plugin.free(ptr, device=dev)

    def test_peak_and_accumulated_resets(self):
        dev = 1
        big = plugin.malloc(8 * MiB, device=dev)
        plugin.free(big, device=dev)
        small = plugin.malloc(MiB, device=dev)
        self.assertEqual(ct.max_memory_allocated(dev), 8 * MiB)
        ct.reset_peak_memory_stats(dev)
        self.assertEqual(ct.max_memory_allocated(dev), MiB)
        self.assertGreater(ct.memory_stats(dev)["allocation.all.allocated"], 0)
        ct.reset_accumulated_memory_stats(dev)
        stats = ct.memory_stats(dev)
        self.assertEqual(stats["allocation.all.allocated"], 0)
        self.assertEqual(stats["allocation.all.current"], 1, "resets keep current values")
        plugin.free(small, device=dev)

    def test_unused_device_reads_zero_without_creating_an_allocator(self):
        dev = 20
        stats = ct.memory_stats(dev)
        self.assertEqual(set(stats), TORCH_KEYS)
        self.assertTrue(all(v == 0 for k, v in stats.items() if k != "max_split_size"))
        self.assertEqual([s for s in ct.memory_snapshot() if s["device"] == dev], [])
        self.assertNotIn(dev, plugin.devices())


class OutOfMemoryTest(unittest.TestCase):
    def test_report_is_kept_and_the_allocator_survives(self):
        dev = 2
        keep = plugin.malloc(16 * MiB, device=dev)
        ct.set_memory_limit(64 * MiB, device=dev)
        self.assertEqual(ct.get_memory_limit(dev), 64 * MiB)
        with self.assertRaises(ccalloc.OutOfMemoryError) as caught:
            plugin.malloc(128 * MiB, device=dev)
        message = str(caught.exception)
        self.assertIn("ccalloc", message)
        self.assertIn("out of memory", message.lower())
        self.assertIn("memory limit 64.00 MiB", message)
        # PyTorch's own text first, word for word, ccalloc's account after it.
        self.assertTrue(message.startswith(
            "CUDA out of memory. Tried to allocate 128.00 MiB. GPU 2 has a total capacity of "),
            message)
        self.assertIn(" is reserved by PyTorch but unallocated. If reserved but unallocated "
                      "memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
                      message)
        self.assertIn(" ccalloc: tried to allocate 128.00 MiB", message)
        self.assertEqual(ct.last_error(), message)
        self.assertEqual(ct.memory_stats(dev)["num_ooms"], 1)
        # Live memory is untouched and allocation goes on within the limit.
        self.assertEqual(ct.memory_allocated(dev), 16 * MiB)
        more = plugin.malloc(16 * MiB, device=dev)
        self.assertEqual(ct.memory_allocated(dev), 32 * MiB)
        self.assertLessEqual(ct.max_memory_reserved(dev), 64 * MiB)
        plugin.free(more, device=dev)
        plugin.free(keep, device=dev)

    def test_a_size_past_what_can_be_represented_is_an_out_of_memory(self):
        # PyTorch's test_out_of_memory asks for 800,000,000 GiB.
        dev = 11
        with self.assertRaises(ccalloc.OutOfMemoryError) as caught:
            plugin.malloc(800000000 * GiB, device=dev)
        self.assertTrue(str(caught.exception).startswith(
            f"CUDA out of memory. Tried to allocate 800000000.00 GiB. GPU {dev} has a total "
            "capacity of "), str(caught.exception))
        self.assertEqual(ct.memory_stats(dev)["num_ooms"], 1)

    def test_device_capacity_is_an_out_of_memory_too(self):
        dev = 10
        with self.assertRaises(ccalloc.OutOfMemoryError):
            plugin.malloc(CAPACITY + GiB, device=dev)
        ptr = plugin.malloc(GiB, device=dev)
        plugin.free(ptr, device=dev)


class ControlTest(unittest.TestCase):
    def test_memory_fraction(self):
        dev = 7
        ct.set_per_process_memory_fraction(0.5, device=dev)
        self.assertEqual(ct.get_memory_limit(dev), CAPACITY // 2)
        self.assertAlmostEqual(ct.get_per_process_memory_fraction(dev), 0.5)
        ct.set_per_process_memory_fraction(0.375, device=dev)
        self.assertEqual(ct.get_per_process_memory_fraction(dev), 0.375)
        ct.set_per_process_memory_fraction(0.0, device=dev)
        self.assertEqual(ct.get_per_process_memory_fraction(dev), 0.0)
        with self.assertRaises(ccalloc.OutOfMemoryError):
            plugin.malloc(4096, device=dev)
        ct.set_per_process_memory_fraction(0.5, device=dev)
        for bad in (1.5, -0.1):
            with self.assertRaisesRegex(ValueError, "Invalid fraction value"):
                ct.set_per_process_memory_fraction(bad, device=dev)
        self.assertEqual(ct.get_memory_limit(dev), CAPACITY // 2, "bad input changes nothing")
        with self.assertRaises(TypeError):
            ct.set_per_process_memory_fraction(1, device=dev)
        ct.set_memory_limit(0, device=dev)
        self.assertEqual(ct.get_per_process_memory_fraction(dev), 1.0)

    def test_configure_applies_to_new_allocators_and_rejects_bad_settings(self):
        plugin.configure("expandable_segments:False,max_split_size_mb:64")
        try:
            self.assertIn("expandable_segments:False", plugin.options(5))
            plugin.malloc(MiB, device=5)
            with self.assertRaises(ccalloc.CcallocError) as caught:
                plugin.configure("no_such_key:1")
            self.assertIn("no_such_key", str(caught.exception))
            # (A device no other test uses: an allocator made before keeps its settings.)
            self.assertIn("max_split_size_mb:64", plugin.options(13), "bad settings change nothing")
        finally:
            plugin.configure(None)
        self.assertIn("expandable_segments:False", plugin.options(5), "existing allocators keep theirs")
        self.assertNotIn("max_split_size_mb:64", plugin.options(6))

    def test_bad_device_and_bad_free(self):
        with self.assertRaises(ccalloc.CcallocError) as caught:
            plugin.malloc(MiB, device=500)
        self.assertIn("out of range", str(caught.exception))
        self.assertEqual(caught.exception.code, ccalloc._plugin.INVALID_ARGUMENT)
        dev = 4
        ptr = plugin.malloc(MiB, device=dev)
        before = ct.memory_stats(dev)
        plugin.free(ptr + 512, device=dev)     # interior pointer: refused, nothing changes
        self.assertIn("ccalloc", plugin.last_error())
        self.assertEqual(ct.memory_stats(dev), before)
        plugin.free(ptr, device=dev)
        plugin.free(ptr, device=dev)           # double free: refused
        self.assertEqual(ct.memory_allocated(dev), 0)
        with self.assertRaises(ValueError):
            ct.memory_stats("cpu")

    def test_record_stream(self):
        dev = 8
        ptr = plugin.malloc(MiB, device=dev, stream=0)
        plugin.record_stream(ptr, 0x5000)
        with self.assertRaises(ccalloc.CcallocError) as caught:
            plugin.record_stream(0x7777000, 0x5000)
        self.assertIn("not allocated by ccalloc", str(caught.exception))
        plugin.free(ptr, device=dev)
        self.assertEqual(ct.memory_allocated(dev), 0)


class SnapshotTest(unittest.TestCase):
    def test_segments_list_the_live_blocks(self):
        dev = 3
        a = plugin.malloc(3 * MiB, device=dev)
        b = plugin.malloc(5 * MiB, device=dev)
        segments = [s for s in ct.memory_snapshot() if s["device"] == dev]
        self.assertTrue(segments)
        for seg in segments:
            for key in ("address", "total_size", "allocated_size", "active_size", "stream",
                        "segment_type", "segment_pool_id", "is_expandable", "frames", "blocks"):
                self.assertIn(key, seg)
        blocks = {blk["address"]: blk for seg in segments for blk in seg["blocks"]}
        self.assertEqual(blocks[a]["state"], "active_allocated")
        self.assertEqual(blocks[a]["size"], 3 * MiB)
        self.assertEqual(blocks[b]["size"], 5 * MiB)
        self.assertEqual(sum(s["allocated_size"] for s in segments), 8 * MiB)
        for seg in segments:
            self.assertEqual(sum(blk["size"] for blk in seg["blocks"]), seg["total_size"])
        summary = ct.memory_summary(dev)
        self.assertIn("ccalloc", summary)
        plugin.free(a, device=dev)
        plugin.free(b, device=dev)
        blocks = {blk["address"]: blk for s in ct.memory_snapshot() if s["device"] == dev
                  for blk in s["blocks"]}
        self.assertTrue(all(blk["state"] == "inactive" for blk in blocks.values()))


class LibraryLookupTest(unittest.TestCase):
    def test_missing_explicit_library_is_a_clear_error(self):
        with self.assertRaises(FileNotFoundError) as caught:
            ccalloc.find_library("/nonexistent/libccalloc_torch.so")
        self.assertIn("/nonexistent/libccalloc_torch.so", str(caught.exception))

    def test_shim_refuses_a_torch_without_headers(self):
        fake = types.ModuleType("torch")
        fake.__file__ = "/nonexistent/torch/__init__.py"
        fake.__version__ = "0"
        fake._C = types.SimpleNamespace(_GLIBCXX_USE_CXX11_ABI=True)
        with self.assertRaises(ccalloc._shim.ShimError) as caught:
            ccalloc._shim.build_shim(fake)
        self.assertIn("Exception.h", str(caught.exception))


# A stand-in for the parts of PyTorch that ccalloc.torch.enable() touches, as
# torch/cuda/memory.py and torch/csrc/cuda/Module.cpp define them: the
# pluggable allocator takes function addresses from a ctypes-loaded library,
# its handle has the set_*_fn hook setters, and the statistics functions of
# torch.cuda.memory look each other up as module globals. The c10 header is
# the minimum the OOM shim includes; libc10.so is empty.
FAKE_TORCH_INIT = """
import ctypes, types

__version__ = "0.0+fake"
_C = types.ModuleType("torch._C")
_C._GLIBCXX_USE_CXX11_ABI = True
state = {"current": None, "initialized": False, "settings": []}


def _set_allocator_settings(env):
    # PyTorch's own parser: refuses what it does not know, keeps the rest.
    if "foo" in env:
        raise ValueError("Unrecognized key 'foo' in Accelerator allocator config.")
    state["settings"].append(env)


_C._cuda_cudaCachingAllocator_set_allocator_settings = _set_allocator_settings


class _Handle:
    def __init__(self):
        self.hooks = {}

    def set_reset_fn(self, p):
        self.hooks["reset"] = p

    def set_memory_fraction_fn(self, p):
        self.hooks["fraction"] = p

    def set_record_stream_fn(self, p):
        self.hooks["record"] = p


class CUDAPluggableAllocator:
    def __init__(self, path, alloc_fn_name, free_fn_name):
        lib = ctypes.CDLL(path)
        self.path = path
        self.malloc = ctypes.cast(getattr(lib, alloc_fn_name), ctypes.c_void_p).value
        self.free = ctypes.cast(getattr(lib, free_fn_name), ctypes.c_void_p).value
        self._allocator = _Handle()

    def allocator(self):
        return self._allocator


def change_current_allocator(a):
    if state["initialized"]:
        raise RuntimeError("Can't swap an already initialized allocator")
    state["current"] = a


def _unsupported(*args, **kwargs):
    raise RuntimeError("CUDAPluggableAllocator does not yet support getDeviceStats")


memory = types.ModuleType("torch.cuda.memory")
memory.CUDAPluggableAllocator = CUDAPluggableAllocator
memory.change_current_allocator = change_current_allocator
for _name in ("memory_stats", "memory_stats_as_nested_dict", "reset_peak_memory_stats",
              "reset_accumulated_memory_stats", "memory_snapshot",
              "get_per_process_memory_fraction"):
    setattr(memory, _name, _unsupported)
exec("def memory_allocated(device=None):\\n"
     "    return memory_stats(device=device).get('allocated_bytes.all.current', 0)\\n",
     memory.__dict__)

cuda = types.ModuleType("torch.cuda")
cuda.memory = memory
cuda.is_initialized = lambda: state["initialized"]
cuda.current_device = lambda: 0
for _name in dir(memory):
    if not _name.startswith("_"):
        setattr(cuda, _name, getattr(memory, _name))
"""

FAKE_C10_EXCEPTION_H = """
#include <stdexcept>
namespace c10 {
struct Error : std::runtime_error { using std::runtime_error::runtime_error; };
struct OutOfMemoryError : Error { using Error::Error; };
}  // namespace c10
#define TORCH_CHECK_WITH(error_t, cond, msg) if (!(cond)) throw ::c10::error_t(msg)
#define TORCH_CHECK(cond, msg) if (!(cond)) throw ::c10::Error(msg)
"""

ENABLE_CHILD = r"""
import ctypes, json, os, sys, warnings
import torch
import ccalloc.torch as ct

if os.environ.get("FAKE_INITIALIZED"):
    torch.state["initialized"] = True
    try:
        ct.enable()
        print("RESULT " + json.dumps({"error": None}))
    except RuntimeError as e:
        print("RESULT " + json.dumps({"error": str(e), "current": torch.state["current"]}))
    sys.exit(0)

try:
    ct.enable(conf="no_such_key:1")
    bad_conf = None
except Exception as e:
    bad_conf = str(e)
assert torch.state["current"] is None, "a bad conf installs nothing"

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    info = ct.enable(conf="expandable_segments:False")
plugin = ct._require_plugin()
alloc = torch.state["current"]
hooks = alloc.allocator().hooks
out = {"bad_conf": bad_conf, "info": info, "warnings": [str(w.message) for w in caught]}
out["hooks_match"] = (
    hooks.get("reset") == plugin.address("ccalloc_torch_empty_cache_hook")
    and hooks.get("fraction") == plugin.address("ccalloc_torch_memory_fraction_hook")
    and hooks.get("record") == plugin.address("ccalloc_torch_record_stream_hook"))
out["malloc_from"] = os.path.basename(alloc.path)

# Call the functions the way PyTorch would, by address.
MALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p)
FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p)
RESET = ctypes.CFUNCTYPE(None)
FRACTION = ctypes.CFUNCTYPE(None, ctypes.c_double, ctypes.c_int)
p = MALLOC(alloc.malloc)(3 << 20, 0, None)
out["allocated"] = torch.cuda.memory_allocated()          # patched: ccalloc's counters
out["torch_stats_keys"] = len(torch.cuda.memory_stats())
FREE(alloc.free)(p, 3 << 20, 0, None)
out["reserved_before_reset"] = ct.memory_reserved()
RESET(hooks["reset"])()
out["reserved_after_reset"] = ct.memory_reserved()
FRACTION(hooks["fraction"])(0.25, 0)
out["fraction"] = torch.cuda.get_per_process_memory_fraction()
out["options"] = info["options"]
# torch.cuda.memory._set_allocator_settings() at run time: PyTorch's parser
# first, then ccalloc's per-request keys; a kind of segment ccalloc cannot
# switch to is named in a warning.
torch._C._cuda_cudaCachingAllocator_set_allocator_settings("roundup_power2_divisions:4")
q = MALLOC(alloc.malloc)((5 << 20) + 1, 0, None)
out["allocated_quarter_steps"] = torch.cuda.memory_allocated()
FREE(alloc.free)(q, 0, 0, None)
try:
    torch._C._cuda_cudaCachingAllocator_set_allocator_settings("foo:1")
    out["refused_by_pytorch"] = None
except ValueError as e:
    out["refused_by_pytorch"] = str(e)
# As PyTorch's parser does, a refused string leaves every key at its default
# but those before the item refused.
q = MALLOC(alloc.malloc)((5 << 20) + 1, 0, None)
out["allocated_after_refusal"] = torch.cuda.memory_allocated()
FREE(alloc.free)(q, 0, 0, None)
try:
    torch._C._cuda_cudaCachingAllocator_set_allocator_settings("roundup_power2_divisions:4,foo:1")
except ValueError:
    pass
q = MALLOC(alloc.malloc)((5 << 20) + 1, 0, None)
out["allocated_after_partial_refusal"] = torch.cuda.memory_allocated()
FREE(alloc.free)(q, 0, 0, None)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    torch._C._cuda_cudaCachingAllocator_set_allocator_settings("expandable_segments:True")
out["kind_warnings"] = [str(w.message) for w in caught]
# graph_capture_record_stream_reuse (PyTorch's
# test_graph_capture_reclaim_2_streams sets it) applies, without a warning,
# and stays when a later call leaves it out, as in PyTorch; a key of
# PyTorch's own allocator that ccalloc does not apply is named once.
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        torch._C._cuda_cudaCachingAllocator_set_allocator_settings(
            "graph_capture_record_stream_reuse:True,pinned_use_cuda_host_register:True")
out["reuse_key_warnings"] = [str(w.message) for w in caught]
out["options_reuse_on"] = plugin.options(0)
q = MALLOC(alloc.malloc)((5 << 20) + 1, 0, None)
out["allocated_defaults_again"] = torch.cuda.memory_allocated()
FREE(alloc.free)(q, 0, 0, None)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        torch._C._cuda_cudaCachingAllocator_set_allocator_settings("max_non_split_rounding_mb:512")
out["other_key_warnings"] = [str(w.message) for w in caught]
out["options_reuse_kept"] = plugin.options(0)
torch._C._cuda_cudaCachingAllocator_set_allocator_settings("graph_capture_record_stream_reuse:False")
out["options_reuse_off"] = plugin.options(0)
out["pytorch_saw"] = torch.state["settings"]
out["again"] = ct.enable()["enabled"]
try:
    ct.enable(conf="expandable_segments:True")
    out["second_conf"] = None
except RuntimeError as e:
    out["second_conf"] = str(e)
print("RESULT " + json.dumps(out))
"""


class EnableWiringTest(unittest.TestCase):
    """ccalloc.torch.enable() against the stand-in above (no real PyTorch)."""

    def _run(self, tmp, env_extra):
        import subprocess
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([tmp] + PACKAGE_PATH)
        env[ccalloc._plugin.ENV_LIBRARY] = plugin.path
        env["CCALLOC_CACHE"] = os.path.join(tmp, "cache")
        env.update(env_extra)
        proc = subprocess.run([sys.executable, "-c", ENABLE_CHILD], env=env,
                              capture_output=True, text=True, timeout=120)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
        self.assertTrue(proc.returncode == 0 and lines, proc.stdout + proc.stderr)
        return __import__("json").loads(lines[-1][len("RESULT "):])

    def _fake_torch(self, tmp, with_headers):
        pkg = os.path.join(tmp, "torch")
        os.makedirs(os.path.join(pkg, "include", "c10", "util"))
        os.makedirs(os.path.join(pkg, "lib"))
        with open(os.path.join(pkg, "__init__.py"), "w") as f:
            f.write(FAKE_TORCH_INIT)
        if not with_headers:
            return False
        with open(os.path.join(pkg, "include", "c10", "util", "Exception.h"), "w") as f:
            f.write(FAKE_C10_EXCEPTION_H)
        import shutil
        import subprocess
        cxx = os.environ.get("CXX") or shutil.which("c++")
        if not cxx:
            return False
        empty = os.path.join(tmp, "empty.c")
        open(empty, "w").close()
        return subprocess.run([cxx, "-shared", "-fPIC", empty, "-o",
                               os.path.join(pkg, "lib", "libc10.so")]).returncode == 0

    def test_enable_installs_the_allocator_hooks_and_patches(self):
        import tempfile
        for with_headers in (True, False):
            with self.subTest(with_headers=with_headers), tempfile.TemporaryDirectory() as tmp:
                shim_possible = self._fake_torch(tmp, with_headers)
                r = self._run(tmp, {"CCALLOC_TORCH_SIMULATE": "1GiB"})
                self.assertIn("no_such_key", r["bad_conf"])
                self.assertTrue(r["info"]["enabled"])
                self.assertTrue(r["hooks_match"], r)
                self.assertEqual(set(r["info"]["hooks"]),
                                 {"empty_cache", "set_per_process_memory_fraction", "record_stream",
                                  "allocator_settings"})
                self.assertIn("torch._C._cuda_cudaCachingAllocator_set_allocator_settings",
                              r["info"]["patched"])
                self.assertEqual(r["allocated_quarter_steps"], 6 << 20)
                self.assertIn("Unrecognized key 'foo'", r["refused_by_pytorch"])
                self.assertEqual(r["allocated_after_refusal"], (5 << 20) + 512)
                self.assertEqual(r["allocated_after_partial_refusal"], 6 << 20)
                self.assertEqual(len(r["kind_warnings"]), 1, r["kind_warnings"])
                self.assertIn("segments stay classic", r["kind_warnings"][0])
                self.assertEqual(r["allocated_defaults_again"], (5 << 20) + 512)
                self.assertEqual(r["reuse_key_warnings"], [])
                self.assertIn("graph_capture_record_stream_reuse:True", r["options_reuse_on"])
                self.assertIn("graph_capture_record_stream_reuse:True", r["options_reuse_kept"])
                self.assertIn("graph_capture_record_stream_reuse:False", r["options_reuse_off"])
                self.assertEqual(len(r["other_key_warnings"]), 1, r["other_key_warnings"])
                self.assertIn("max_non_split_rounding_mb", r["other_key_warnings"][0])
                self.assertIn("does not apply", r["other_key_warnings"][0])
                reuse = "graph_capture_record_stream_reuse:True,pinned_use_cuda_host_register:True"
                other = "max_non_split_rounding_mb:512"
                self.assertEqual(r["pytorch_saw"],
                                 ["roundup_power2_divisions:4", "roundup_power2_divisions:4",
                                  "expandable_segments:True",
                                  reuse, reuse, other, other,
                                  "graph_capture_record_stream_reuse:False"])
                self.assertIn("torch.cuda.memory_stats", r["info"]["patched"])
                self.assertIn("expandable_segments:False", r["options"])
                if shim_possible:
                    self.assertEqual(r["info"]["oom_error"], "torch.OutOfMemoryError")
                    self.assertEqual(r["malloc_from"], "libccalloc_torch_shim.so")
                else:
                    self.assertEqual(r["info"]["oom_error"], "RuntimeError")
                    self.assertEqual(r["malloc_from"], "libccalloc_torch.so")
                    self.assertTrue(any("RuntimeError" in w for w in r["warnings"]), r["warnings"])
                self.assertEqual(r["allocated"], 3 << 20)
                self.assertEqual(r["torch_stats_keys"], len(TORCH_KEYS))
                self.assertGreater(r["reserved_before_reset"], 0)
                self.assertEqual(r["reserved_after_reset"], 0)
                self.assertAlmostEqual(r["fraction"], 0.25)
                self.assertTrue(r["again"])
                self.assertIn("already enabled", r["second_conf"])

    def test_enable_after_cuda_initialisation_is_refused(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            self._fake_torch(tmp, with_headers=False)
            r = self._run(tmp, {"FAKE_INITIALIZED": "1", "CCALLOC_TORCH_SIMULATE": "1GiB"})
            self.assertIn("before CUDA is initialised", r["error"])
            self.assertIsNone(r["current"])



TRACE_CHILD = r"""
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
lib.ccalloc_torch_malloc.restype = ctypes.c_void_p
lib.ccalloc_torch_malloc.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
lib.ccalloc_torch_free.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
a = lib.ccalloc_torch_malloc(3 << 20, 0, None)
b = lib.ccalloc_torch_malloc(4096, 0, ctypes.c_void_p(0x1234))
lib.ccalloc_torch_free(ctypes.c_void_p(a), 3 << 20, 0, None)
lib.ccalloc_torch_free(ctypes.c_void_p(a + 1), 0, 0, None)   # refused: not recorded
"""


class TraceRecordingTest(unittest.TestCase):
    def test_ccalloc_trace_records_the_process_as_a_replayable_trace(self):
        import subprocess
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "run.trace")
            env = dict(os.environ, CCALLOC_TRACE=path, CCALLOC_TORCH_SIMULATE=str(CAPACITY))
            proc = subprocess.run([sys.executable, "-c", TRACE_CHILD, ccalloc.find_library()],
                                  env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            with open(path) as f:
                lines = [l.split() for l in f if l.strip() and not l.startswith("#")]
        # Written at exit: two allocations (streams renumbered in order of first
        # use), one accepted free; the refused interior free is not there.
        self.assertEqual(lines, [["a", "0", str(3 << 20), "0"], ["a", "1", "4096", "1"],
                                 ["f", "0"]])

UNCACHED_CHILD = r"""
import ctypes, json, sys
lib = ctypes.CDLL(sys.argv[1])
lib.ccalloc_torch_malloc.restype = ctypes.c_void_p
lib.ccalloc_torch_malloc.argtypes = [ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
lib.ccalloc_torch_free.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
lib.ccalloc_torch_stats_json.restype = ctypes.c_size_t
lib.ccalloc_torch_stats_json.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
def stats():
    buf = ctypes.create_string_buffer(1 << 16)
    lib.ccalloc_torch_stats_json(0, buf, len(buf))
    return json.loads(buf.value.decode())
p = lib.ccalloc_torch_malloc(3 << 20, 0, None)
out = {"caching": lib.ccalloc_torch_caching_enabled(),
       "allocated": stats()["allocated_bytes.all.current"]}
lib.ccalloc_torch_free(p, 3 << 20, 0, None)
print("RESULT " + json.dumps(out))
"""


class UncachedModeTest(unittest.TestCase):
    def test_pytorchs_no_caching_variable_starts_the_process_uncached(self):
        # PYTORCH_NO_CUDA_MEMORY_CACHING=1 (what compute-sanitizer users set):
        # requests bypass the cache and its counters from the first one on.
        import json
        import subprocess
        for value, caching in (("1", 0), ("true", 0), ("0", 1), (None, 1)):
            env = dict(os.environ, CCALLOC_TORCH_SIMULATE=str(CAPACITY))
            env.pop("PYTORCH_NO_CUDA_MEMORY_CACHING", None)
            if value is not None:
                env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = value
            proc = subprocess.run([sys.executable, "-c", UNCACHED_CHILD, ccalloc.find_library()],
                                  env=env, capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            out = json.loads(proc.stdout.split("RESULT ", 1)[1])
            self.assertEqual(out["caching"], caching, value)
            self.assertEqual(out["allocated"], 0 if caching == 0 else 3 << 20, value)


class EnvironmentConfTest(unittest.TestCase):
    """enable() without conf reads PyTorch's setting, then CCALLOC_CONF."""

    def test_pytorch_setting_then_ccalloc_setting(self):
        env = {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:False, max_split_size_mb:128",
               "CCALLOC_CONF": "memory_limit:1GiB,expandable_segments:True"}
        conf = ct.conf_from_environment(env)
        self.assertEqual(conf, "expandable_segments:False,max_split_size_mb:128,"
                               "memory_limit:1GiB,expandable_segments:True")
        # The parser takes it, and the later key wins (CCALLOC_CONF's), on an
        # allocator made after it (device 23: no other test uses it).
        plugin = ct.load()
        plugin.configure(conf)
        self.addCleanup(plugin.configure, None)
        self.assertIn("expandable_segments:True", plugin.options(23))
        self.assertIn("max_split_size_mb:128", plugin.options(23))

    def test_the_newer_name_wins_and_lists_stay_whole(self):
        env = {"PYTORCH_ALLOC_CONF": "roundup_power2_divisions:[256:1,512:2],garbage_collection_threshold:0.6",
               "PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:64"}
        self.assertEqual(ct.conf_from_environment(env),
                         "roundup_power2_divisions:[256:1,512:2],garbage_collection_threshold:0.6")
        self.assertIsNone(ct.conf_from_environment({}))
        self.assertEqual(ct.conf_from_environment({"CCALLOC_CONF": "release_slack:0.01"}),
                         "release_slack:0.01")

    def test_graph_capture_record_stream_reuse_is_shared(self):
        # PyTorch's test_graph_capture_reclaim_* set it; ccalloc applies it.
        env = {"PYTORCH_CUDA_ALLOC_CONF": "graph_capture_record_stream_reuse:True"}
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            conf = ct.conf_from_environment(env)
        self.assertEqual(conf, "graph_capture_record_stream_reuse:True")
        plugin = ct.load()
        plugin.configure(conf)
        self.addCleanup(plugin.configure, None)
        self.assertIn("graph_capture_record_stream_reuse:True", plugin.options(24))

    def test_keys_of_pytorchs_other_allocators_are_named_and_left_out(self):
        env = {"PYTORCH_CUDA_ALLOC_CONF": "pinned_reserve_segment_size_mb:8,expandable_segments:True"}
        with self.assertWarnsRegex(RuntimeWarning, "pinned_reserve_segment_size_mb:8"):
            conf = ct.conf_from_environment(env)
        self.assertEqual(conf, "expandable_segments:True")


if __name__ == "__main__":
    result = unittest.main(verbosity=2, exit=False).result
    failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    print(f"test_package_host ({'installed' if INSTALLED else 'checkout'} package, "
          f"{os.path.dirname(ccalloc.__file__)}): {result.testsRun - failed - skipped} passed, "
          f"{failed} failed, {skipped} skipped")
    sys.exit(0 if result.wasSuccessful() else 1)
