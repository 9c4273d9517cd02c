"""The trainer callbacks (ccalloc.integrations) and the CuPy allocator
(ccalloc.cupy) with ccalloc as PyTorch's allocator, on a real GPU: a tiny
transformers Trainer run (GPT-2 from a small GPT2Config, random weights, no
download), a tiny Lightning fit, and CuPy arrays sharing PyTorch's ccalloc
cache. Skipped without torch or CUDA, each case without its framework. Each
case runs in a process of its own (ccalloc.torch.enable() comes before CUDA
starts there), and the Trainer and Lightning scripts also as a user runs an
unmodified script: `ccalloc-run python train.py`, `CCALLOC=1 python
train.py`, and (the Trainer) `torchrun --nproc-per-node 1 --no-python
ccalloc-run python train.py`; each reports from inside that ccalloc served it.

    PYTHONPATH=python CCALLOC_TORCH_LIBRARY=BUILD/allocator/libccalloc_torch.so \\
        python3 -m pytest -v tests/python/test_integrations_gpu.py

or, after `pip install .`, CCALLOC_TEST_INSTALLED=1 (the installed package).
"""

import csv
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MiB = 1 << 20
PHASES = ["start", "other", "forward", "loss", "backward", "other", "optimizer", "other"]


# --- the cases (run as `python3 test_integrations_gpu.py CASE OUTDIR`) ------------------

def skip(reason):
    print(f"SKIP {reason}", flush=True)
    sys.exit(0)


def profile_summary(cb, out):
    """What the parent checks of a callback's run: the files, the samples
    (phases, kinds, torch's own count at each boundary) and the final kinds."""
    prof = cb.profiler
    base = os.path.join(out, "ccalloc_memory", "memory")
    with open(base + ".json") as f:
        saved = json.load(f)
    by = {}
    for s in prof.samples:
        by.setdefault(s["step"], []).append(s)
    return {
        "files": sorted(os.path.basename(p) for p in glob.glob(base + ".*")),
        "json_steps": sorted({s["step"] for s in saved["samples"]}),
        "steps": prof.step_index,
        # The steps the profiler accounts (its default sample_every: the first three, then every tenth).
        "sampled": [i for i in range(1, prof.step_index + 1) if prof.sampled(i)],
        "phases": {str(k): [s["phase"] for s in v] for k, v in by.items()},
        "problems": [list(p) for p in prof.problems()],
        "torch_mismatch": [(s["step"], s["phase"], s["allocated"], s.get("torch_allocated"))
                           for s in prof.samples if s.get("torch_allocated") != s["allocated"]],
        "max_activations": max(s["kinds"]["activations"] for s in prof.samples),
        "modules": sorted({m for s in prof.samples for m in s["activations_by_module"]}),
        "optimizer_state_first_at": next(((s["step"], s["phase"]) for s in prof.samples
                                          if s["kinds"]["optimizer_state"] > 0), None),
        "leftovers": prof.leftovers(),
    }


def enable_unless_launched():
    """The case's own enable(), unless a launcher (ccalloc-run, CCALLOC=1,
    torchrun over ccalloc-run) already made ccalloc PyTorch's allocator: then
    the script is the unmodified one a user runs, and it only reports."""
    import ccalloc.torch as ct
    if os.environ.get("CCALLOC_CASE_LAUNCHED") != "1":
        ct.enable()


def served_by(r):
    """From inside the script: whether ccalloc served it (its status, the
    backend PyTorch names, ccalloc's own count against torch's)."""
    import torch
    import ccalloc.torch as ct
    status = ct.status()
    r["served"] = {
        "enabled": status["enabled"], "mode": status["mode"],
        "backend": torch.cuda.memory.get_allocator_backend(),
        "ccalloc_allocated": ct.memory_allocated(),
        "torch_allocated": torch.cuda.memory_allocated(),
        "ccalloc_peak": ct.max_memory_allocated(),
        "torch_peak": torch.cuda.max_memory_allocated(),
        "num_device_alloc": torch.cuda.memory_stats().get("num_device_alloc"),
        "rank": os.environ.get("RANK"),
    }
    return r


def case_transformers(out):
    import torch
    enable_unless_launched()
    try:
        from transformers import (GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback,
                                  TrainingArguments)
    except ImportError as e:
        skip(f"no transformers Trainer: {e}")
    from ccalloc.integrations.transformers import MemoryCallback

    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=512, n_positions=64, n_embd=64, n_layer=2,
                                       n_head=2))

    class Tokens(torch.utils.data.Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            ids = torch.randint(0, 512, (32,), generator=torch.Generator().manual_seed(i))
            return {"input_ids": ids, "labels": ids.clone()}

    cb = MemoryCallback(every=2, check_torch=True)
    checks = {}

    class Check(TrainerCallback):
        def on_train_end(self, args, state, control, **kwargs):
            # Right after the MemoryCallback's on_train_end measured.
            checks["final_sum"] = sum(cb.final["kinds"].values())
            checks["final_allocated"] = cb.final["allocated"]
            checks["torch_allocated"] = torch.cuda.memory_allocated()

    args = TrainingArguments(output_dir=out, max_steps=6, per_device_train_batch_size=4,
                             logging_steps=1, report_to=[], save_strategy="no",
                             disable_tqdm=True, dataloader_num_workers=0)
    trainer = Trainer(model=model, args=args, train_dataset=Tokens(), callbacks=[cb, Check()])
    cb.install(trainer)
    trainer.train()
    r = profile_summary(cb, out)
    logged = [e for e in trainer.state.log_history if "ccalloc/peak_gib" in e]
    r["logged_steps"] = [e["step"] for e in logged]
    r["logged_keys"] = sorted(k for k in (logged[-1] if logged else {}) if k.startswith("ccalloc/"))
    r["logged_last"] = logged[-1] if logged else None
    r["figures_last"] = cb.figures()
    r.update(checks)
    return served_by(r)


def case_lightning(out):
    import torch
    enable_unless_launched()
    try:
        import lightning.pytorch as pl
        from lightning.pytorch.loggers import CSVLogger
    except ImportError:
        try:
            import pytorch_lightning as pl
            from pytorch_lightning.loggers import CSVLogger
        except ImportError as e:
            skip(f"no lightning: {e}")
    from ccalloc.integrations.lightning import MemoryCallback

    class Module(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.ReLU(),
                                           torch.nn.Linear(1024, 1))

        def training_step(self, batch, batch_idx):
            x, y = batch
            return torch.nn.functional.mse_loss(self.net(x), y)   # a submodule, not self(x)

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=1e-3)

    torch.manual_seed(0)
    data = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(256, 256), torch.randn(256, 1)), batch_size=32)
    cb = MemoryCallback(every=2, check_torch=True)
    checks = {}

    class Check(pl.Callback):
        def on_train_end(self, trainer, pl_module):
            checks["final_sum"] = sum(cb.final["kinds"].values())
            checks["final_allocated"] = cb.final["allocated"]
            checks["torch_allocated"] = torch.cuda.memory_allocated()

    logger = CSVLogger(out, name="csv")
    trainer = pl.Trainer(max_steps=5, accelerator="gpu", devices=1, logger=logger,
                         log_every_n_steps=1, enable_checkpointing=False,
                         enable_progress_bar=False, enable_model_summary=False,
                         default_root_dir=out, callbacks=[cb, Check()])
    trainer.fit(Module(), data)
    r = profile_summary(cb, out)
    rows = []
    for path in glob.glob(os.path.join(out, "csv", "*", "metrics.csv")):
        with open(path) as f:
            rows += list(csv.DictReader(f))
    r["csv_rows_with_peak"] = len([row for row in rows if row.get("ccalloc/peak_gib")])
    r["csv_keys"] = sorted({k for row in rows for k in row if k.startswith("ccalloc/")})
    r.update(checks)
    return served_by(r)


def case_cupy(out):
    import torch
    import ccalloc.torch as ct
    ct.enable()
    try:
        import cupy
    except ImportError as e:
        skip(f"no cupy: {e}")
    import ccalloc.cupy as cc
    cc.enable()
    r = {}
    torch.cuda.init()
    before = torch.cuda.memory_allocated()
    a = cupy.arange(1 << 20, dtype=cupy.float32)                  # 4 MiB
    r["counted"] = torch.cuda.memory_allocated() - before
    r["cupy_pool_used"] = cupy.get_default_memory_pool().used_bytes()
    t = torch.from_dlpack(a)
    r["to_torch_same_memory"] = t.data_ptr() == a.data.ptr
    r["to_torch_equal"] = bool((t == torch.arange(1 << 20, dtype=torch.float32, device="cuda")).all())
    m0 = torch.cuda.memory_allocated()
    u = torch.randn(1000, device="cuda")
    r["u_allocated"] = torch.cuda.memory_allocated() - m0
    c = cupy.from_dlpack(u)
    r["to_cupy_same_memory"] = c.data.ptr == u.data_ptr()
    r["to_cupy_equal"] = bool((cupy.asnumpy(c) == u.cpu().numpy()).all())
    c *= 2                                                         # written through CuPy...
    r["shared_write"] = bool(torch.equal(u, torch.from_dlpack(c)))  # ...seen by torch
    # One cache: a block CuPy frees is the one PyTorch gets next.
    big = cupy.empty(64 * MiB, dtype=cupy.uint8)
    ptr, reserved = big.data.ptr, torch.cuda.memory_reserved()
    del big
    x = torch.empty(64 * MiB, dtype=torch.uint8, device="cuda")
    r["reused_by_torch"] = x.data_ptr() == ptr
    r["reserved_grew"] = torch.cuda.memory_reserved() - reserved
    del x
    # CuPy's current stream is the block's stream.
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        b = cupy.ones(1 << 20, dtype=cupy.float32)
        total = float(b.sum())
    s.synchronize()
    r["stream_sum"] = total
    streams = [blk.get("stream") for seg in ct.memory_snapshot() for blk in seg["blocks"]
               if blk["address"] == b.data.ptr and blk["state"] == "active_allocated"]
    r["block_streams"], r["cupy_stream"] = streams, s.ptr
    r["block_stream_is_cupys"] = streams == [s.ptr]
    cc.record_stream(a, s)
    del t, a, b, c
    torch.cuda.synchronize()
    r["allocated_after_free"] = torch.cuda.memory_allocated() - before
    return r


CASES = {"transformers": case_transformers, "lightning": case_lightning, "cupy": case_cupy}


def main(argv):
    case, out = argv[1], argv[2]
    result = CASES[case](out)
    print("RESULT " + json.dumps(result, default=str), flush=True)


# --- the tests -------------------------------------------------------------------------

if __name__ != "__main__":
    import pytest

    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device", allow_module_level=True)

    def launcher(tmp_path):
        """ccalloc-run: pip's console script after `pip install .`, else the
        same two lines pip would write, over this checkout."""
        if os.environ.get("CCALLOC_TEST_INSTALLED"):
            import shutil
            path = shutil.which("ccalloc-run")
            assert path, "CCALLOC_TEST_INSTALLED=1 but no ccalloc-run on PATH"
            return path
        path = tmp_path / "ccalloc-run"
        path.write_text(f"#!{sys.executable}\nimport sys\nfrom ccalloc.run import launch\n"
                        "sys.exit(launch())\n")
        path.chmod(0o755)
        return str(path)

    def run_case(case, tmp_path, launch="enable"):
        """One case in a process of its own. launch: "enable" (the case calls
        ccalloc.torch.enable()), or the script left as a user has it and
        ccalloc enabled from outside: "ccalloc-run" (ccalloc-run python
        script), "env" (CCALLOC=1 python script, through the .pth hook's
        sitecustomize), "torchrun" (torchrun --nproc-per-node 1 --no-python
        ccalloc-run python script)."""
        env = dict(os.environ)
        for var in ("CCALLOC_TORCH_SIMULATE", "PYTORCH_CUDA_ALLOC_CONF", "CCALLOC_CONF",
                    "CCALLOC", "CCALLOC_CASE_LAUNCHED"):
            env.pop(var, None)
        paths = [p for p in [os.environ.get("PYTHONPATH")] if p]
        if not os.environ.get("CCALLOC_TEST_INSTALLED"):
            paths = [os.path.join(ROOT, "python")] + paths
            if launch == "env":
                paths = [os.path.join(ROOT, "python", "ccalloc", "_boot")] + paths
        if paths:
            env["PYTHONPATH"] = os.pathsep.join(paths)
        script = [sys.executable, os.path.abspath(__file__), case, str(tmp_path)]
        if launch != "enable":
            env["CCALLOC_CASE_LAUNCHED"] = "1"
        if launch == "ccalloc-run":
            cmd = [launcher(tmp_path)] + script
        elif launch == "env":
            env["CCALLOC"] = "1"
            cmd = script
        elif launch == "torchrun":
            cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                   "--nproc-per-node", "1", "--no-python", launcher(tmp_path)] + script
        else:
            cmd = script
        proc = subprocess.run(cmd, env=env, cwd=str(tmp_path), capture_output=True, text=True,
                              timeout=500)
        skipped = [l for l in proc.stdout.splitlines() if l.startswith("SKIP ")]
        if proc.returncode == 0 and skipped:
            pytest.skip(skipped[-1][5:])
        lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
        assert proc.returncode == 0 and lines, (
            f"{case} failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}")
        result = json.loads(lines[-1][len("RESULT "):])
        print(f"{case} ({launch}: {' '.join(os.path.basename(c) for c in cmd[:6])}): "
              f"served {json.dumps(result.get('served'))}")
        print(f"{case}: {json.dumps(result)}")
        return result

    def check_served(r, launch):
        served = r["served"]
        assert served["enabled"] and served["mode"] == "extension", served
        assert served["backend"] == "ccalloc", served
        # Lightning moves the model back to the host when fit ends: compare the
        # peaks, which ccalloc's counters and torch's (through ccalloc) both keep.
        assert served["ccalloc_allocated"] == served["torch_allocated"], served
        assert served["ccalloc_peak"] == served["torch_peak"] > 0, served
        if launch == "torchrun":
            assert served["rank"] == "0", served

    def check_profile(r, steps):
        assert r["files"] == ["memory.json", "memory.svg", "memory.txt"]
        assert r["steps"] == steps and r["json_steps"] == r["sampled"]
        assert r["sampled"][:3] == [1, 2, 3]
        assert r["problems"] == [] and r["torch_mismatch"] == []
        assert r["leftovers"] == []
        for step, phases in r["phases"].items():
            assert "forward" in phases and "backward" in phases and "optimizer" in phases, (step, phases)
        assert r["max_activations"] > 0
        # The kinds add up to torch.cuda.memory_allocated() when training ends.
        assert r["final_sum"] == r["final_allocated"] == r["torch_allocated"]

    @pytest.mark.parametrize("launch", ["enable", "ccalloc-run", "env", "torchrun"])
    def test_transformers_trainer(tmp_path, launch):
        r = run_case("transformers", tmp_path, launch)
        check_served(r, launch)
        check_profile(r, 6)
        assert r["optimizer_state_first_at"] == [1, "optimizer"]
        # Every step's log, and the summary Trainer logs at the end (step 6 again).
        assert sorted(set(r["logged_steps"])) == [1, 2, 3, 4, 5, 6]
        kinds = ["parameters", "gradients", "optimizer_state", "activations", "temporaries"]
        assert r["logged_keys"] == sorted([f"ccalloc/{k}_gib" for k in kinds] +
                                          ["ccalloc/allocated_gib", "ccalloc/reserved_gib",
                                           "ccalloc/peak_gib", "ccalloc/sampled_step"])
        last, fig = r["logged_last"], r["figures_last"]
        assert last["ccalloc/activations_gib"] == fig["max_kinds"]["activations"] / float(1 << 30) > 0
        assert last["ccalloc/optimizer_state_gib"] > 0 and last["ccalloc/parameters_gib"] > 0
        assert sum(fig["kinds"].values()) == fig["allocated"]
        assert any(m.startswith("transformer.h.") for m in r["modules"]), r["modules"]

    @pytest.mark.parametrize("launch", ["enable", "ccalloc-run", "env"])
    def test_lightning_fit(tmp_path, launch):
        r = run_case("lightning", tmp_path, launch)
        check_served(r, launch)
        check_profile(r, 5)
        # Forward tagged by module though training_step never calls the
        # module itself; the optimizer phase is the update after Lightning's
        # closure (its forward and backward), where Adam's state appears.
        assert r["phases"]["1"] == PHASES, r["phases"]
        assert r["optimizer_state_first_at"] == [1, "optimizer"]
        assert {"net.0", "net.2"} <= set(r["modules"]), r["modules"]
        assert r["csv_rows_with_peak"] >= 5
        assert "ccalloc/activations_gib" in r["csv_keys"] and "ccalloc/peak_gib" in r["csv_keys"]

    def test_cupy_shares_pytorchs_cache(tmp_path):
        r = run_case("cupy", tmp_path)
        assert r["counted"] >= 4 * MiB                 # CuPy's array is in torch's count
        assert r["cupy_pool_used"] == 0                # and not in CuPy's own pool
        assert r["to_torch_same_memory"] and r["to_torch_equal"]
        assert r["to_cupy_same_memory"] and r["to_cupy_equal"] and r["shared_write"]
        assert r["reused_by_torch"] and r["reserved_grew"] <= 0
        assert r["stream_sum"] == float(1 << 20) and r["block_stream_is_cupys"]
        assert r["allocated_after_free"] == r["u_allocated"]   # only torch's u is left

if __name__ == "__main__":
    main(sys.argv)
