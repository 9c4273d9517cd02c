"""Host tests of the trainer callbacks (ccalloc/integrations/) and the CuPy
allocator (ccalloc/cupy.py), against fake framework packages written to a
temporary folder (a `transformers` with TrainerCallback, a `lightning` with
lightning.pytorch.Callback, a `pytorch_lightning`, a `cupy` with
cuda.set_allocator, UnownedMemory, MemoryPointer, get_current_stream).

    CCALLOC_TORCH_LIBRARY=BUILD/allocator/libccalloc_torch.so \\
        /usr/bin/python3 tests/python/test_integrations_host.py

The lazy-import and missing-framework checks need nothing else. The
callbacks run a CPU model (torch: Debian's python3-torch under
/usr/bin/python3, else skipped) whose modules allocate on the real plugin's
simulated device (CCALLOC_TORCH_SIMULATE), as test_profiler_host.py does;
the CuPy allocator takes its blocks from that simulated device too (the
plugin, else skipped).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest
import xml.dom.minidom
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PYTHON_DIR = os.path.join(ROOT, "python")
if os.environ.get("CCALLOC_TEST_INSTALLED") != "1":
    sys.path.insert(0, PYTHON_DIR)
sys.path.insert(0, HERE)
os.environ.setdefault("CCALLOC_TORCH_SIMULATE", str(4 << 30))

import ccalloc  # noqa: E402
from ccalloc import memreport  # noqa: E402

try:
    import torch
except ImportError:
    torch = None

MiB = 1 << 20
GiB = float(1 << 30)
FRAMEWORKS = ("transformers", "lightning", "pytorch_lightning", "cupy")

FAKES = {
    "transformers/__init__.py": '''
        """A stand-in for transformers: the callback API the Trainer drives."""
        class TrainerCallback:
            def on_init_end(self, args, state, control, **kwargs): pass
            def on_train_begin(self, args, state, control, **kwargs): pass
            def on_step_begin(self, args, state, control, **kwargs): pass
            def on_step_end(self, args, state, control, **kwargs): pass
            def on_log(self, args, state, control, logs=None, **kwargs): pass
            def on_train_end(self, args, state, control, **kwargs): pass

        class TrainerState:
            def __init__(self):
                self.global_step = 0
                self.log_history = []

        class TrainerControl:
            pass

        class TrainingArguments:
            def __init__(self, output_dir, process_index=0, world_size=1):
                self.output_dir = output_dir
                self.process_index = process_index
                self.world_size = world_size
    ''',
    "lightning/__init__.py": "",
    "lightning/pytorch/__init__.py": '''
        class Callback:
            """A stand-in for lightning.pytorch.Callback."""
            FAKE = "lightning"
    ''',
    "cupy/__init__.py": '''
        """A stand-in for cupy: what ccalloc.cupy touches."""
        from . import cuda

        class _Pool:
            freed = 0
            def free_all_blocks(self):
                _Pool.freed += 1

        _pool = _Pool()

        def get_default_memory_pool():
            return _pool
    ''',
    "cupy/cuda/__init__.py": '''
        from . import runtime

        class Stream:
            def __init__(self, ptr):
                self.ptr = ptr
            def __enter__(self):
                _current.append(self)
                return self
            def __exit__(self, *exc):
                _current.pop()

        Stream.null = Stream(0)
        _current = [Stream.null]

        def get_current_stream():
            return _current[-1]

        class UnownedMemory:
            def __init__(self, ptr, size, owner, device_id=-1):
                if device_id < 0 and ptr == 0:
                    raise RuntimeError("UnownedMemory requires explicit device ID for a null pointer.")
                self.ptr, self.size, self._owner, self.device_id = ptr, size, owner, device_id

        class MemoryPointer:
            def __init__(self, mem, offset):
                self.mem, self.ptr = mem, mem.ptr + offset

        def _default_allocator(size):
            raise AssertionError("the fake's own allocator was called")

        _allocator = [_default_allocator]

        def set_allocator(allocator=None):
            _allocator[0] = allocator

        def get_allocator():
            return _allocator[0]

        def alloc(size):
            return _allocator[0](size)
    ''',
    "cupy/cuda/runtime.py": '''
        device = [0]
        def getDevice():
            return device[0]
    ''',
}
# Only pytorch_lightning, for the fallback (a folder of its own).
PL_ONLY = {"pytorch_lightning/__init__.py": '''
    class Callback:
        FAKE = "pytorch_lightning"
'''}

_fake_dir = None


def write_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))


def setUpModule():
    global _fake_dir
    _fake_dir = tempfile.mkdtemp(prefix="ccalloc-fakes-")
    write_tree(os.path.join(_fake_dir, "all"), FAKES)
    write_tree(os.path.join(_fake_dir, "pl_only"), PL_ONLY)
    # Real frameworks, if this python has them, must not be what the tests see.
    for name in list(sys.modules):
        if name.split(".")[0] in FRAMEWORKS:
            del sys.modules[name]
    sys.path.insert(0, os.path.join(_fake_dir, "all"))


def tearDownModule():
    shutil.rmtree(_fake_dir, ignore_errors=True)


def run_child(code, path):
    """Runs code in a fresh python with `path` (fake packages) first on
    sys.path, where any real framework is blocked from importing."""
    prelude = textwrap.dedent(f'''
        import sys
        class _Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in {FRAMEWORKS!r}:
                    raise ImportError(f"No module named {{name!r}} (blocked by the test)", name=name)
        if {path!r}:
            sys.path.insert(0, {path!r})
        else:
            sys.meta_path.insert(0, _Block())
        sys.path.insert(0, {PYTHON_DIR!r})
    ''')
    env = dict(os.environ)
    proc = subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=120)
    return proc


class LazyImportTest(unittest.TestCase):
    def test_importing_ccalloc_imports_no_framework(self):
        proc = run_child('''
            import ccalloc.torch, ccalloc.integrations, ccalloc.cupy
            import ccalloc.integrations.transformers as t, ccalloc.integrations.lightning as l
            from ccalloc.integrations import _common
            bad = sorted(m for m in sys.modules if m.split(".")[0] in
                         ("transformers", "lightning", "pytorch_lightning", "cupy", "torch"))
            print("IMPORTED", bad)
            # First access makes the classes, over the frameworks' own.
            import transformers, lightning.pytorch
            assert issubclass(t.MemoryCallback, transformers.TrainerCallback)
            assert issubclass(l.MemoryCallback, lightning.pytorch.Callback)
            assert t.MemoryCallback is t.MemoryCallback
            assert t.MemoryCallback.__module__ == "ccalloc.integrations.transformers"
            print("OK")
        ''', os.path.join(_fake_dir, "all"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("IMPORTED []", proc.stdout)
        self.assertIn("OK", proc.stdout)

    def test_a_missing_framework_is_an_import_error_naming_it(self):
        proc = run_child('''
            import ccalloc.integrations.transformers as t
            for stmt in ("from ccalloc.integrations.transformers import MemoryCallback",
                         "from ccalloc.integrations.lightning import MemoryCallback",
                         "import ccalloc.cupy; ccalloc.cupy.enable()"):
                try:
                    exec(stmt)
                except ImportError as e:
                    print("ERR", e.name, "|", e)
                else:
                    print("NO ERROR", stmt)
            try:
                t.Nothing
            except AttributeError:
                print("ATTR")
        ''', None)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("ERR")]
        self.assertEqual(len(lines), 3, proc.stdout)
        self.assertRegex(lines[0], r"ERR transformers \| .*needs the 'transformers' package")
        self.assertRegex(lines[1], r"ERR lightning \| .*needs the 'lightning' package \(or 'pytorch_lightning'\)")
        self.assertRegex(lines[2], r"ERR cupy \| ccalloc.cupy needs the 'cupy' package")
        self.assertIn("ATTR", proc.stdout)

    def test_lightning_falls_back_to_pytorch_lightning(self):
        proc = run_child('''
            from ccalloc.integrations.lightning import MemoryCallback
            print("BASE", MemoryCallback.FAKE)
        ''', os.path.join(_fake_dir, "pl_only"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("BASE pytorch_lightning", proc.stdout)


class SimPlugin(unittest.TestCase):
    """The real plugin on a simulated device, or a skip when it is not built."""

    @classmethod
    def setUpClass(cls):
        try:
            import ccalloc.torch as ct
            cls.plugin = ct.load()
        except FileNotFoundError as e:
            raise unittest.SkipTest(f"plugin not built: {e}")

    def allocated(self, dev):
        return self.plugin.raw_stats(dev)["allocated_bytes.all.current"]


def make_model(plugin, dev, live):
    """A model whose Alloc modules allocate on the simulated device in
    forward (like a CUDA forward's activations), freed when backward reaches
    their output; `live` holds (ptr, block size) by module."""

    class Alloc(torch.nn.Module):
        def __init__(self, name, nbytes):
            super().__init__()
            self.lin = torch.nn.Linear(8, 8)
            self.name, self.nbytes = name, nbytes

        def forward(self, x):
            ptr = plugin.malloc(self.nbytes, device=dev)
            size = plugin.blocks_holding([ptr], dev)[1][0]
            live.setdefault(self.name, []).append((ptr, size))
            out = self.lin(x)

            def free(grad, ptr=ptr, name=self.name):
                plugin.free(ptr, dev)
                live[name].remove((ptr, size))
            out.register_hook(free)
            return out

    return torch.nn.Sequential(Alloc("0", 3 * MiB), torch.nn.ReLU(), Alloc("2", MiB + 1))


@unittest.skipIf(torch is None, "no torch (Debian's python3-torch runs this under /usr/bin/python3)")
class TransformersCallbackTest(SimPlugin):
    DEV = 20

    def setUp(self):
        from test_profiler_host import _SimTagView
        import transformers
        self.transformers = transformers
        self.view = _SimTagView(self.plugin, self.DEV)
        self.live = {}
        torch.manual_seed(0)
        self.model = make_model(self.plugin, self.DEV, self.live)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1, momentum=0.9)
        self.out = tempfile.mkdtemp(prefix="ccalloc-hf-")

    def tearDown(self):
        for v in self.live.values():
            for ptr, _ in v:
                self.plugin.free(ptr, self.DEV)
        for ptr in self.view.sim.values():
            self.plugin.free(ptr, self.DEV)
        shutil.rmtree(self.out, ignore_errors=True)

    def callback(self, **kwargs):
        from ccalloc.integrations.transformers import MemoryCallback
        return MemoryCallback(view=self.view, **kwargs)

    def train(self, cb, steps, optimizer_at_begin=True, on_step=None):
        """What transformers' Trainer calls, in its order (5.x): on_train_begin
        with model and optimizer, per optimizer step on_step_begin, the step,
        on_step_end, then Trainer.log (log_history, then on_log)."""
        tf = self.transformers
        args = tf.TrainingArguments(self.out)
        state, control = tf.TrainerState(), tf.TrainerControl()
        common = {"model": self.model, "processing_class": None, "lr_scheduler": None,
                  "train_dataloader": [], "eval_dataloader": None}
        cb.on_train_begin(args, state, control, optimizer=self.opt if optimizer_at_begin else None,
                          **common)
        logs_seen = []
        for _ in range(steps):
            cb.on_step_begin(args, state, control, optimizer=self.opt, **common)
            loss = self.model(torch.randn(4, 8)).square().mean()
            loss.backward()
            self.opt.step()
            self.opt.zero_grad(set_to_none=True)
            state.global_step += 1
            cb.on_step_end(args, state, control, optimizer=self.opt, **common)
            logs = {"loss": float(loss), "learning_rate": 0.1}
            state.log_history.append({**logs, "step": state.global_step})
            cb.on_log(args, state, control, logs=logs, **common)
            logs_seen.append(logs)
            if on_step:
                on_step(state.global_step)
        cb.on_train_end(args, state, control, **common)
        return state, logs_seen

    def json_steps(self, path):
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return sorted({s["step"] for s in json.load(f)["samples"]})

    def test_steps_files_every_n_and_at_the_end_and_logged_kinds(self):
        cb = self.callback(every=2, sample_every=1)
        base = os.path.join(self.out, "ccalloc_memory", "memory")
        seen = {}
        state, logs = self.train(cb, 5, on_step=lambda s: seen.setdefault(s, self.json_steps(base + ".json")))
        # Written after steps 2 and 4, not 1 and 3; at the end, all five.
        self.assertEqual(seen, {1: None, 2: [1, 2], 3: [1, 2], 4: [1, 2, 3, 4], 5: [1, 2, 3, 4]})
        self.assertEqual(self.json_steps(base + ".json"), [1, 2, 3, 4, 5])
        self.assertEqual(cb.session.paths, {"txt": base + ".txt", "svg": base + ".svg", "json": base + ".json"})
        with open(base + ".txt") as f:
            text = f.read()
        self.assertIn("step 5", text)
        self.assertIn("optimizer state appeared", text)
        with open(base + ".svg") as f:
            xml.dom.minidom.parseString(f.read())

        prof = cb.profiler
        self.assertEqual(prof.step_index, 5)
        self.assertEqual(prof.problems(), [])
        self.assertEqual(prof.leftovers(), [])          # on_train_end removed the hooks
        step5 = [s for s in prof.samples if s["step"] == 5]
        self.assertEqual([s["phase"] for s in step5],
                         ["start", "other", "forward", "loss", "backward", "other", "optimizer", "other"])
        fwd = step5[2]
        self.assertEqual(set(fwd["activations_by_module"]), {"0", "2"})

        # The logs: each kind's most over the step's boundaries, in GiB, and
        # the same in the entry Trainer.log put in log_history.
        want = {f"ccalloc/{k}_gib": max(s["kinds"][k] for s in step5) / GiB for k in memreport.KINDS}
        want["ccalloc/allocated_gib"] = step5[-1]["allocated"] / GiB
        want["ccalloc/reserved_gib"] = step5[-1]["reserved"] / GiB
        want["ccalloc/peak_gib"] = max(s["peak"] for s in step5) / GiB
        want["ccalloc/sampled_step"] = 5
        last = logs[-1]
        self.assertEqual({k: v for k, v in last.items() if k.startswith("ccalloc/")}, want)
        self.assertEqual(last["loss"], state.log_history[-1]["loss"])
        self.assertEqual({k: v for k, v in state.log_history[-1].items() if k.startswith("ccalloc/")}, want)
        self.assertGreaterEqual(last["ccalloc/activations_gib"] * GiB, fwd["kinds"]["activations"])
        self.assertGreater(last["ccalloc/activations_gib"], 0)
        self.assertGreater(last["ccalloc/optimizer_state_gib"], 0)    # momentum buffers
        self.assertGreater(last["ccalloc/gradients_gib"], 0)          # before zero_grad
        self.assertEqual(step5[-1]["kinds"]["gradients"], 0)          # after it
        self.assertEqual(len([l for l in logs if "ccalloc/peak_gib" in l]), 5)

        # When training ended: the memory by kind, adding up to what the
        # allocator has allocated on the (simulated) device.
        final = cb.final
        self.assertEqual(final["allocated"], self.allocated(self.DEV))
        self.assertEqual(sum(final["kinds"].values()), final["allocated"])
        self.assertGreater(final["kinds"]["parameters"], 0)
        self.assertGreater(final["kinds"]["optimizer_state"], 0)

    def test_an_optimizer_that_arrives_at_the_first_step_is_attached(self):
        cb = self.callback(every=0)
        self.train(cb, 2, optimizer_at_begin=False)
        self.assertIs(cb.profiler.optimizer, self.opt)
        step1 = [s for s in cb.profiler.samples if s["step"] == 1]
        self.assertIn("optimizer", [s["phase"] for s in step1])
        self.assertGreater(max(s["kinds"]["optimizer_state"] for s in step1), 0)

    def test_a_wrapped_optimizer_is_unwrapped(self):
        class AcceleratedOptimizer(torch.optim.Optimizer):
            def __init__(self, optimizer):    # as accelerate's: no Optimizer.__init__
                self.optimizer = optimizer

            def step(self, closure=None):
                return self.optimizer.step(closure)

            def zero_grad(self, set_to_none=True):
                self.optimizer.zero_grad(set_to_none=set_to_none)
        inner = self.opt
        self.opt = AcceleratedOptimizer(inner)
        cb = self.callback(every=0)
        self.train(cb, 1)
        self.assertIs(cb.profiler.optimizer, inner)
        phases = [s["phase"] for s in cb.profiler.samples]
        self.assertIn("optimizer", phases)

    def test_keep_bounds_the_steps_held(self):
        cb = self.callback(every=0, keep=2, sample_every=1)
        self.train(cb, 8)
        path = os.path.join(self.out, "ccalloc_memory", "memory.json")
        self.assertEqual(self.json_steps(path), [1, 7, 8])
        self.assertEqual(cb.profiler.problems(), [])

    def test_keep_counts_the_steps_sampled(self):
        # Sampled: 1, 2, 3, then every 5th; the last two of those stay, and step 1.
        cb = self.callback(every=0, keep=2, sample_every=5)
        self.train(cb, 27)
        path = os.path.join(self.out, "ccalloc_memory", "memory.json")
        self.assertEqual(self.json_steps(path), [1, 20, 25])
        self.assertEqual(cb.profiler.problems(), [])

    def test_several_processes_write_a_file_each(self):
        cb = self.callback(every=0, output_dir=os.path.join(self.out, "mine"))
        tf = self.transformers
        orig = tf.TrainingArguments

        def args(out):
            return orig(out, process_index=3, world_size=4)
        with mock.patch.object(tf, "TrainingArguments", args):
            self.train(cb, 1)
        self.assertTrue(os.path.exists(os.path.join(self.out, "mine", "memory.rank3.json")))

    def test_without_ccalloc_enabled_it_says_so(self):
        from ccalloc.integrations.transformers import MemoryCallback
        import ccalloc.torch as ct
        self.assertFalse(ct.is_enabled())
        cb = MemoryCallback()
        with self.assertRaisesRegex(RuntimeError, r"ccalloc.torch.enable\(\) first"):
            self.train(cb, 1)

    def test_install_puts_it_first(self):
        cb = self.callback()

        class Handler:
            callbacks = ["flow", "tensorboard"]

        class Trainer:
            callback_handler = Handler()
        trainer = Trainer()
        self.assertIs(cb.install(trainer), cb)
        self.assertEqual(trainer.callback_handler.callbacks, [cb, "flow", "tensorboard"])
        cb.install(trainer)
        self.assertEqual(trainer.callback_handler.callbacks, [cb, "flow", "tensorboard"])


@unittest.skipIf(torch is None, "no torch (Debian's python3-torch runs this under /usr/bin/python3)")
class LightningCallbackTest(SimPlugin):
    DEV = 21

    def setUp(self):
        from test_profiler_host import _SimTagView
        self.view = _SimTagView(self.plugin, self.DEV)
        self.live = {}
        self.out = tempfile.mkdtemp(prefix="ccalloc-pl-")

    def tearDown(self):
        for v in self.live.values():
            for ptr, _ in v:
                self.plugin.free(ptr, self.DEV)
        for ptr in self.view.sim.values():
            self.plugin.free(ptr, self.DEV)
        shutil.rmtree(self.out, ignore_errors=True)

    def test_batches_are_steps_with_forward_and_the_closure_optimizer_phase(self):
        from ccalloc.integrations.lightning import MemoryCallback
        torch.manual_seed(0)
        net = make_model(self.plugin, self.DEV, self.live)

        class Module(torch.nn.Module):
            """Like a LightningModule whose training_step calls a submodule,
            never the module itself."""

            def __init__(self):
                super().__init__()
                self.net = net
                self.logged = []

            def training_step(self, batch):
                return self.net(batch).square().mean()

            def log_dict(self, values, **kwargs):
                self.logged.append((dict(values), kwargs))

        module = Module()
        opt = torch.optim.SGD(module.parameters(), lr=0.1, momentum=0.9)

        class Trainer:
            optimizers = [opt]
            default_root_dir = self.out
            global_rank, world_size = 0, 1

        trainer = Trainer()
        cb = MemoryCallback(every=2, view=self.view)
        cb.setup(trainer, module, "fit")
        cb.on_fit_start(trainer, module)
        written = {}
        path = os.path.join(self.out, "ccalloc_memory", "memory.json")
        for i in range(3):
            batch = torch.randn(4, 8)
            cb.on_train_batch_start(trainer, module, batch, i)

            def closure():
                # Lightning's automatic optimization: optimizer.step(closure)
                # runs training_step, zero_grad and backward inside step().
                loss = module.training_step(batch)
                cb.on_before_zero_grad(trainer, module, opt)
                opt.zero_grad()
                cb.on_before_backward(trainer, module, loss)
                loss.backward()
                cb.on_before_optimizer_step(trainer, module, opt)
                return loss
            opt.step(closure=closure)
            cb.on_train_batch_end(trainer, module, None, batch, i)
            written[i + 1] = os.path.exists(path)
        cb.on_train_end(trainer, module)
        self.assertEqual(written, {1: False, 2: True, 3: True})
        with open(path) as f:
            self.assertEqual(sorted({s["step"] for s in json.load(f)["samples"]}), [1, 2, 3])

        prof = cb.profiler
        by = {}
        for s in prof.samples:
            by.setdefault(s["step"], []).append(s)
        self.assertEqual([s["phase"] for s in by[1]],
                         ["start", "other", "forward", "loss", "backward", "other", "optimizer", "other"])
        forward = by[1][2]
        # Tagged by module although the module itself was never called.
        self.assertEqual(set(forward["activations_by_module"]), {"net.0", "net.2"})
        self.assertGreaterEqual(forward["activations_by_module"]["net.0"], 3 * MiB)
        self.assertGreaterEqual(forward["activations_by_module"]["net.2"], MiB + 1)
        # The momentum buffers appear in the optimizer phase, which opened
        # when the closure returned.
        self.assertEqual(by[1][5]["kinds"]["optimizer_state"], 0)
        self.assertGreater(by[1][6]["kinds"]["optimizer_state"], 0)
        self.assertEqual(prof.problems(), [])
        self.assertEqual(prof.leftovers(), [])

        self.assertEqual(len(module.logged), 3)
        values, kwargs = module.logged[-1]
        self.assertEqual(set(values), {f"ccalloc/{k}_gib" for k in memreport.KINDS} |
                         {"ccalloc/allocated_gib", "ccalloc/reserved_gib", "ccalloc/peak_gib",
                          "ccalloc/sampled_step"})
        self.assertEqual(values["ccalloc/optimizer_state_gib"],
                         max(s["kinds"]["optimizer_state"] for s in by[3]) / GiB)
        self.assertEqual(kwargs["on_step"], True)
        self.assertEqual(sum(cb.final["kinds"].values()), self.allocated(self.DEV))

    def test_an_exception_removes_the_hooks(self):
        from ccalloc.integrations.lightning import MemoryCallback
        module = make_model(self.plugin, self.DEV, self.live)
        opt = torch.optim.SGD(module.parameters(), lr=0.1)

        class Trainer:
            optimizers = [opt]
            default_root_dir = self.out
        cb = MemoryCallback(view=self.view)
        cb.on_fit_start(Trainer(), module)
        cb.on_train_batch_start(Trainer(), module, None, 0)
        self.assertTrue(cb.profiler.in_step)
        cb.on_exception(Trainer(), module, RuntimeError("boom"))
        self.assertFalse(cb.profiler.in_step)
        self.assertEqual(cb.profiler.leftovers(), [])
        self.assertFalse(os.path.exists(os.path.join(self.out, "ccalloc_memory")))


class CupyAllocatorTest(SimPlugin):
    DEV = 22

    def setUp(self):
        import cupy
        self.cupy = cupy
        cupy.cuda.runtime.device[0] = self.DEV
        self.calls = []

    def alloc(self, nbytes, device, stream):
        self.calls.append(("alloc", nbytes, device, stream))
        return self.plugin.malloc(nbytes, device=device, stream=stream)

    def free(self, ptr):
        self.calls.append(("free", ptr))
        self.plugin.free(ptr, self.DEV)

    def test_blocks_come_from_ccalloc_on_cupys_stream_and_go_back_on_release(self):
        from ccalloc import cupy as cc
        cuda = self.cupy.cuda
        fn = cc.allocator(self.cupy, self.alloc, self.free)
        before = self.allocated(self.DEV)
        p = fn(1000)                               # the null stream: handle 0
        self.assertIsInstance(p, cuda.MemoryPointer)
        self.assertIsInstance(p.mem, cuda.UnownedMemory)
        self.assertEqual(self.calls, [("alloc", 1000, self.DEV, 0)])
        self.assertEqual((p.mem.size, p.mem.device_id), (1000, self.DEV))
        self.assertEqual(self.plugin.blocks_holding([p.ptr], self.DEV)[0], [p.ptr])
        self.assertGreaterEqual(self.allocated(self.DEV), before + 1000)
        with cuda.Stream(0x5150):
            q = fn(3 * MiB)
        self.assertEqual(self.calls[-1], ("alloc", 3 * MiB, self.DEV, 0x5150))
        streams = {seg["stream"] for seg in self.plugin.snapshot(self.DEV)["segments"]
                   if any(b["address"] == q.ptr and b["state"] == "active_allocated"
                          for b in seg["blocks"])}
        self.assertEqual(streams, {0x5150})
        ptr = p.ptr
        del p                                      # CuPy releases the memory
        self.assertEqual(self.calls[-1], ("free", ptr))
        frees = lambda: [c for c in self.calls if c[0] == "free"]  # noqa: E731
        mem, qptr = q.mem, q.ptr
        del q                                      # a view of the memory keeps it...
        self.assertEqual(len(frees()), 1)
        del mem                                    # ...until the last reference goes
        self.assertEqual(frees(), [("free", ptr), ("free", qptr)])
        self.assertEqual(self.allocated(self.DEV), before)

    def test_zero_bytes_and_other_devices(self):
        from ccalloc import cupy as cc
        cuda = self.cupy.cuda
        other = []
        fn = cc.allocator(self.cupy, self.alloc, self.free, device=self.DEV,
                          fallback=lambda n: other.append(n) or "theirs")
        z = fn(0)
        self.assertEqual((z.ptr, z.mem.size, z.mem.device_id), (0, 0, self.DEV))
        self.assertEqual(self.calls, [])
        cuda.runtime.device[0] = self.DEV + 1
        self.assertEqual(fn(4096), "theirs")
        self.assertEqual((other, self.calls), ([4096], []))
        strict = cc.allocator(self.cupy, self.alloc, self.free, device=self.DEV)
        with self.assertRaisesRegex(RuntimeError, "serves device 22 only"):
            strict(10)

    def test_record_stream_passes_the_blocks_start(self):
        from ccalloc import cupy as cc
        fn = cc.allocator(self.cupy, self.alloc, self.free)
        p = fn(1 << 16)

        class Array:        # an array whose data starts inside the block
            data = self.cupy.cuda.MemoryPointer(p.mem, 4096)
        with mock.patch.object(self.plugin, "record_stream", wraps=self.plugin.record_stream) as rs:
            cc.record_stream(Array(), self.cupy.cuda.Stream(0x77))
            cc.record_stream(p, 0x78)
        self.assertEqual(rs.call_args_list, [mock.call(p.ptr, 0x77), mock.call(p.ptr, 0x78)])
        foreign = self.cupy.cuda.MemoryPointer(self.cupy.cuda.UnownedMemory(12345, 8, None, 0), 0)
        with self.assertRaises(ccalloc.CcallocError):
            cc.record_stream(foreign, 0)
        with self.assertRaises(TypeError):
            cc.record_stream(object(), 0)
        del p

    def test_enable_needs_ccalloc_torch_first(self):
        from ccalloc import cupy as cc
        import ccalloc.torch as ct
        self.assertFalse(ct.is_enabled())
        with self.assertRaisesRegex(RuntimeError, r"needs ccalloc.torch.enable\(\) first"):
            cc.enable()
        self.assertFalse(cc.is_enabled())

    @unittest.skipIf(torch is None, "no torch")
    def test_enable_goes_through_pytorchs_installed_allocator(self):
        # With ccalloc.torch enabled, the blocks come from
        # torch.cuda.caching_allocator_alloc(size, device, stream), which
        # reaches the allocator installed into PyTorch (here: the simulated
        # plugin standing in for it), and go back through
        # caching_allocator_delete.
        from ccalloc import cupy as cc
        import ccalloc.torch as ct
        cuda = self.cupy.cuda
        previous = cuda.get_allocator()
        pool_freed = self.cupy._Pool.freed
        with mock.patch.object(ct, "is_enabled", return_value=True), \
                mock.patch.object(torch.cuda, "caching_allocator_alloc",
                                  side_effect=lambda n, device, stream: self.alloc(n, device, stream)) as a, \
                mock.patch.object(torch.cuda, "caching_allocator_delete", side_effect=self.free) as d:
            fn = cc.enable()
            try:
                self.assertIs(cuda.get_allocator(), fn)
                self.assertTrue(cc.is_enabled())
                self.assertIs(cc.enable(), fn)              # once
                self.assertEqual(self.cupy._Pool.freed, pool_freed + 1)
                with cuda.Stream(0x99):
                    p = cuda.alloc(2 * MiB)
                a.assert_called_once_with(2 * MiB, self.DEV, 0x99)
                ptr = p.ptr
                del p
                d.assert_called_once_with(ptr)
            finally:
                cc.disable()
        self.assertIs(cuda.get_allocator(), previous)
        self.assertFalse(cc.is_enabled())


if __name__ == "__main__":
    unittest.main(verbosity=2)
