#!/usr/bin/env python3
"""Trains real models under each CUDA allocator and compares speed and memory.

One process per (allocator, workload, round): an allocator is chosen before
CUDA is initialised and cannot be changed afterwards, and a fresh process keeps
one run's cache from helping the next.

Allocators (--configs):
  native              PyTorch's caching allocator, default settings
  native_expandable   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  cuda_malloc_async   PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  ccalloc             ccalloc as PyTorch's allocator (ccalloc.torch.enable()), default policy
  ccalloc_classic     ccalloc with expandable_segments:False (classic segments)

Workloads (--workloads, default all; random weights, synthetic data, fixed
seeds, and a new shape every step drawn from a seeded generator, the same
sequence for every allocator and round):
  gpt2         GPT-2 small from a transformers GPT2Config (12 layers, 768 wide),
               AdamW, batch 16 (--gpt2-batch), bf16 autocast, sequence length
               64..1024.
  resnet50     torchvision ResNet-50, SGD with momentum, bf16 autocast, batch 96
               (--resnet-batch), image side from {160,192,224,256}.
  seq2seq      encoder-decoder torch.nn.Transformer (6+6 layers, 512 wide, 8
               heads, 32k vocabularies, causal decoder mask), Adam, fp32 weights
               with TF32 matmuls, batch 64, source and target lengths 16..256
               drawn independently.
  unet         diffusion-style conv UNet (4 levels 128..512 channels, ResBlocks
               with GroupNorm and a sinusoidal time embedding, skip connections,
               self-attention at 8x8), epsilon-prediction MSE, AdamW, fp16
               autocast with GradScaler, 64x64 images, batch 24..64.
  vit          torchvision ViT-B/16, 224 px, AdamW, bf16 autocast, label
               smoothing, gradient clipping, batch 48..128.
  ckpt_lm      decoder-only LM (16 layers, 1024 wide, 32k vocabulary, tied head)
               with torch.utils.checkpoint (non-reentrant) around every block,
               AdamW, bf16 autocast, batch 8, sequence length 256..2048.
  two_streams  two-tower classifier whose ResNet-18 image tower runs on the
               current stream and whose 6-layer transformer text tower runs on
               a second stream (wait_stream / record_stream, so its backward
               runs there too), fed from pinned host memory by a third, copy
               stream that loads the next batch during this step; bf16
               autocast, AdamW, batch 64..128, side {160,192,224}, 32..256 tokens.
  gnn, moe, hf_trainer, generate
               random graph sizes, top-1 expert routing, GPT-2 through
               transformers' Trainer, and generate() growing a KV cache:
               bench/workload_families.py.

Per run: step time after the warm-up steps (torch.cuda.synchronize() ends every
step; a workload that repeats a few shapes gets one more warm-up step for each
shape its timed steps repeat and the warm-up missed, since the first step of a
new shape costs 100-400 ms whatever the allocator: warm_every_shape,
--no-warm-shapes turns it off) as the mean (the figure compared: a median hides the slow steps), median,
stdev, min and max; peak allocated and peak reserved bytes from
torch.cuda.max_memory_allocated() / max_memory_reserved() (with
ccalloc.torch.enable()'s extension these are ccalloc's own counters; in the
CUDAPluggableAllocator fallback mode, where PyTorch's statistics do not reach
the plugin, ccalloc's counters are read directly) and their ratio; device memory
in use (mem_get_info total - free, minus what was in use after CUDA
initialisation), the largest value seen at the end of a step and after the run.

--rounds N repeats every run N times, interleaved: each round runs every
workload under every allocator (A B C A B C ...), so drift in the GPU's clocks
falls on all of them alike. The summary gives, per workload and allocator, the
mean over rounds of the per-run mean step time with its spread (min, max and
stdev of the per-run means), the ratio of that mean to native_expandable's
(and native's) over the same rounds, and the worst peak reserved / peak
allocated; then, for each ccalloc configuration, the worst case over the
workloads.

The host of the device machines runs the same code at one speed or at half of
it, switching every few seconds on every core (bench/probes/host_core_probe.py), so
one process can draw mostly the slow state and the next mostly the fast one.
Each run times a ~1 ms probe of the host reference loop before every step
(host_probe_ms), and the summary adds, for every allocator but the baseline,
its step time against native_expandable's fitted with the probe taken out
(host_adjusted_ratio: a term per step index, one for the allocator, one for
the log of the probe): a diagnostic beside the mean, which stays the figure
compared.

--concurrent runs a round's allocators side by side instead: one process
each, started together on the same GPU, so that every host state falls on all
of them at once. The host-bound workloads leave the GPU idle most of a step,
and the processes share it alike; each run's device-memory figures then count
the others' memory too (peak allocated and reserved are the allocator's own).
Two allocators at a time fit GPT-2 on an 80 GB card. --torch-config
expandable_b=expandable_segments:True with --configs
native_expandable,expandable_b runs PyTorch's allocator against itself, an
A/A control: what the method reads where nothing differs. The order the
processes start in turns with the round, so no allocator always starts first.

--lockstep runs them side by side too, but taking turns step by step: the
parent gives each process one step in turn (the order alternating from step
to step) and the next only when that step's work on the GPU is done. So a
step of one allocator and the same step of the other meet the same host
state a few hundred milliseconds apart, as --concurrent's do, while the GPU
runs one process's work at a time, as in sequential rounds. On an H100 host
(2026-11-27) its per-step differences were noisier than sequential runs'
(ResNet-50: 3.5% of a step against 0.5%): the processes disturb each other,
and sequential rounds stay the measure of record.

Where the time goes, per run: the host's time to launch each step (until the
step's function returns) and the span of its work on the GPU (CUDA events
around it); --kernel-profile N adds the GPU time of the kernels alone over the
last N timed shapes (torch.profiler, after the timed steps). And, for every
ccalloc configuration, the step time each chunk it mapped cost (move_costs:
the step's time less native_expandable's on the same step, fitted to the
step's num_maps). On an H100 that is ~50-70 us a chunk, about the table's
cuMemMap + cuMemSetAccess + cuMemUnmap, which makes the number of chunks moved
the figure that decides ccalloc's speed on a host-bound model.

--record-traces DIR: after the timed rounds, one short untimed run per
workload (--trace-steps steps) under ccalloc with CCALLOC_TRACE set, leaving
DIR/<workload>.trace.gz, the allocation trace in the format of traces/README.md
(replayable with ccalloc-replay). The timed runs never record.

--max-batch: for ResNet-50 at 224 px, the largest batch that trains for a few
steps under a memory cap (--cap-gib, default 20: set_per_process_memory_fraction
for PyTorch's allocators, ccalloc's memory limit for ccalloc), found by
doubling then bisecting; every probe starts from an emptied cache.

    PYTHONPATH=python CCALLOC_TORCH_LIBRARY=build/allocator/libccalloc_torch.so \\
        python3 bench/compare_training.py --configs native_expandable,ccalloc \\
        --rounds 2 --record-traces traces/new --out results.json

Every workload trains 30 steps (5 warm-up) in 2-10 s on an H100; a process
costs another 5-10 s to start (imports, CUDA context, model construction).
"""

import argparse
import gc
import gzip
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host_counters import ThreadCounters  # noqa: E402 (bench/ is the script's folder)
import protocol  # noqa: E402
import workload_families  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GiB = 1 << 30

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
WORKLOADS = ("gpt2", "resnet50", "seq2seq", "unet", "vit", "ckpt_lm", "two_streams",
             "gnn", "moe", "hf_trainer", "generate")
BASELINE = "native_expandable"   # what ccalloc's step time is compared with
# ccalloc's own clocks read after every step (ns): the launching thread's time
# in placements that mapped memory, its waits for queued work, the unmap
# worker's time in its calls (off the launching thread), and the waits split
# by what waited: pages under a block still mapped to moved memory, a trim
# beyond the marks, memory going back; and the launching thread's own unmaps,
# map calls and creates (within prepare_ns).
HOST_CLOCKS = ("prepare_ns", "wait_ns", "worker_ns", "wait_under_block_ns", "wait_trim_ns",
               "wait_release_ns", "foreground_unmap_ns", "map_ns", "create_ns")
# The device the workloads run on; only a host-side smoke test changes it.
DEVICE = "cuda"


# --- child side -----------------------------------------------------------------

def setup_allocator(config_name, library):
    """Installs the allocator; returns the ccalloc.torch module or None."""
    config = CONFIGS[config_name]
    if "ccalloc_conf" not in config:
        return None
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import ccalloc.torch as ct
    ct.enable(conf=config["ccalloc_conf"] or None, library=library)
    return ct


class Memory:
    """Reads peaks from the allocator in charge and device use from the driver."""

    def __init__(self, torch, ct):
        self.torch, self.ct = torch, ct
        # With the extension ccalloc is PyTorch's whole allocator and torch.cuda's
        # statistics are its counters; in the pluggable fallback they are not.
        self.mode = ct.status()["mode"] if ct else None
        self.source = ct if self.mode == "pluggable" else torch.cuda
        torch.cuda.init()
        free, self.total = torch.cuda.mem_get_info()
        self.baseline = self.total - free   # context, before any allocation
        self.device_peak = 0
        # Largest relative gap between the device's count and the allocator's
        # reserved bytes, read at the same moment (end of each step).
        self.max_gap = 0.0
        # CUDA loads library kernels (cuDNN, cuBLAS) lazily, after the first
        # allocation, and that memory is no allocator's. Once the warm-up steps
        # have loaded them, `other` = device use - reserved is fixed, and the
        # gap counted from there measures the allocator's own accounting.
        self.other = None
        self.max_gap_after_warmup = 0.0

    def sample(self):
        free, _ = self.torch.cuda.mem_get_info()
        used = self.total - free - self.baseline
        self.device_peak = max(self.device_peak, used)
        reserved = self.source.memory_reserved()
        if reserved > 0:
            self.max_gap = max(self.max_gap, abs(used - reserved) / reserved)
            if self.other is not None:
                self.max_gap_after_warmup = max(self.max_gap_after_warmup,
                                                abs(used - self.other - reserved) / reserved)
        return used, reserved

    def settle(self):
        used, reserved = self.sample()
        self.other = used - reserved

    def peaks(self):
        return self.source.max_memory_allocated(), self.source.max_memory_reserved()

    def stats(self):
        return self.source.memory_stats()


def device_scope(torch):
    """Constructs modules directly on the GPU (quicker than on the CPU for the
    larger models)."""
    return torch.device(DEVICE)


def grad_scaler(torch):
    return torch.amp.GradScaler(DEVICE)


def build_gpt2(torch, batch, seed):
    from transformers import GPT2Config, GPT2LMHeadModel
    config = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
    model = GPT2LMHeadModel(config).to(DEVICE).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=DEVICE).manual_seed(seed)

    def step(seq):
        ids = torch.randint(0, config.vocab_size, (batch, seq), device=DEVICE, generator=gen)
        with torch.autocast(DEVICE, dtype=torch.bfloat16):
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step


def build_resnet50(torch, batch, seed):
    import torchvision
    model = torchvision.models.resnet50(weights=None).to(DEVICE).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    gen = torch.Generator(device=DEVICE).manual_seed(seed)

    def step(side, batch=batch):
        x = torch.randn(batch, 3, side, side, device=DEVICE, generator=gen)
        y = torch.randint(0, 1000, (batch,), device=DEVICE, generator=gen)
        with torch.autocast(DEVICE, dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, opt


def workload_gpt2(torch, args, rng):
    step = build_gpt2(torch, args.gpt2_batch, args.seed)
    return step, [rng.randint(64, 1024) for _ in range(args.steps)]


def workload_resnet50(torch, args, rng):
    step, _ = build_resnet50(torch, args.resnet_batch, args.seed)
    return step, [rng.choice((160, 192, 224, 256)) for _ in range(args.steps)]


def workload_seq2seq(torch, args, rng):
    nn, F = torch.nn, torch.nn.functional
    vocab, d, batch, max_len = 32000, 512, 64, 256
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_emb = nn.Embedding(vocab, d)
            self.tgt_emb = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(max_len, d)
            self.core = nn.Transformer(d_model=d, nhead=8, num_encoder_layers=6,
                                       num_decoder_layers=6, dim_feedforward=2048,
                                       dropout=0.1, batch_first=True)
            self.out = nn.Linear(d, vocab)

        def forward(self, src, tgt):
            s = torch.arange(src.shape[1], device=src.device)
            t = torch.arange(tgt.shape[1], device=src.device)
            mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[1], device=src.device)
            h = self.core(self.src_emb(src) + self.pos(s), self.tgt_emb(tgt) + self.pos(t),
                          tgt_mask=mask)
            return self.out(h)

    with device_scope(torch):
        model = Seq2Seq().train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)

    def step(shape):
        src_len, tgt_len = shape
        src = torch.randint(0, vocab, (batch, src_len), device=DEVICE, generator=gen)
        tgt = torch.randint(0, vocab, (batch, tgt_len + 1), device=DEVICE, generator=gen)
        logits = model(src, tgt[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, vocab), tgt[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, [(rng.randint(16, max_len), rng.randint(16, max_len - 1))
                  for _ in range(args.steps)]


def workload_unet(torch, args, rng):
    nn, F = torch.nn, torch.nn.functional
    channels, tdim, side = (128, 256, 256, 512), 512, 64

    class ResBlock(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.norm1, self.conv1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
            self.temb = nn.Linear(tdim, cout)
            self.norm2, self.conv2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
            self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

        def forward(self, x, temb):
            h = self.conv1(F.silu(self.norm1(x)))
            h = h + self.temb(temb)[:, :, None, None]
            h = self.conv2(F.silu(self.norm2(h)))
            return h + self.skip(x)

    class Attention(nn.Module):
        def __init__(self, c, heads=8):
            super().__init__()
            self.heads = heads
            self.norm, self.qkv, self.out = nn.GroupNorm(32, c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

        def forward(self, x):
            b, c, h, w = x.shape
            qkv = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w)
            q, k, v = qkv.transpose(-1, -2).unbind(1)           # (b, heads, hw, c/heads)
            a = F.scaled_dot_product_attention(q, k, v)
            return x + self.out(a.transpose(-1, -2).reshape(b, c, h, w))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.temb = nn.Sequential(nn.Linear(128, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
            self.inp = nn.Conv2d(3, channels[0], 3, padding=1)
            self.down, self.downsample = nn.ModuleList(), nn.ModuleList()
            c, skips = channels[0], [channels[0]]
            for i, co in enumerate(channels):
                blocks = nn.ModuleList()
                for _ in range(2):
                    blocks.append(ResBlock(c, co))
                    c = co
                    skips.append(c)
                self.down.append(blocks)
                if i < len(channels) - 1:
                    self.downsample.append(nn.Conv2d(c, c, 3, stride=2, padding=1))
                    skips.append(c)
            self.mid1, self.mid_attn, self.mid2 = ResBlock(c, c), Attention(c), ResBlock(c, c)
            self.up, self.upsample = nn.ModuleList(), nn.ModuleList()
            for i, co in reversed(list(enumerate(channels))):
                blocks = nn.ModuleList()
                for _ in range(3):
                    blocks.append(ResBlock(c + skips.pop(), co))
                    c = co
                self.up.append(blocks)
                if i > 0:
                    self.upsample.append(nn.Conv2d(c, c, 3, padding=1))
            self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 3, 3, padding=1))

        def forward(self, x, t):
            freqs = torch.exp(-math.log(10000.0) * torch.arange(64, device=x.device) / 64)
            e = t.float()[:, None] * freqs[None]
            temb = self.temb(torch.cat([e.sin(), e.cos()], 1))
            h = self.inp(x)
            hs = [h]
            for i, blocks in enumerate(self.down):
                for block in blocks:
                    h = block(h, temb)
                    hs.append(h)
                if i < len(self.downsample):
                    h = self.downsample[i](h)
                    hs.append(h)
            h = self.mid2(self.mid_attn(self.mid1(h, temb)), temb)
            for j, blocks in enumerate(self.up):
                for block in blocks:
                    h = block(torch.cat([h, hs.pop()], 1), temb)
                if j < len(self.upsample):
                    h = self.upsample[j](F.interpolate(h, scale_factor=2, mode="nearest"))
            return self.out(h)

    with device_scope(torch):
        model = UNet().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    scaler = grad_scaler(torch)
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)

    def step(batch):
        x0 = torch.randn(batch, 3, side, side, device=DEVICE, generator=gen)
        noise = torch.randn(batch, 3, side, side, device=DEVICE, generator=gen)
        t = torch.randint(0, 1000, (batch,), device=DEVICE, generator=gen)
        alpha_bar = torch.cos((t.float() / 1000 + 0.008) / 1.008 * math.pi / 2) ** 2
        a = alpha_bar[:, None, None, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * noise
        with torch.autocast(DEVICE, dtype=torch.float16):
            pred = model(xt, t)
        loss = F.mse_loss(pred.float(), noise)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, [rng.choice((24, 32, 40, 48, 56, 64)) for _ in range(args.steps)]


def workload_vit(torch, args, rng):
    import torchvision
    F = torch.nn.functional
    with device_scope(torch):
        model = torchvision.models.vit_b_16(weights=None).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.05)
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)

    def step(batch):
        x = torch.randn(batch, 3, 224, 224, device=DEVICE, generator=gen)
        y = torch.randint(0, 1000, (batch,), device=DEVICE, generator=gen)
        with torch.autocast(DEVICE, dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, [rng.choice(range(48, 129, 16)) for _ in range(args.steps)]


def decoder_lm(torch, vocab, d, heads, layers, max_len, checkpointed=False, tied=True):
    """A GPT-style decoder LM: pre-norm blocks (causal attention, a GELU MLP
    four times as wide) and learned positions. checkpointed: each block under
    torch.utils.checkpoint (non-reentrant), recomputed in the backward pass.
    tied: the head is the token embedding (else a Linear of its own). The
    checkpointed LM here and bench/ddp_step_time.py train it."""
    nn, F = torch.nn, torch.nn.functional
    from torch.utils.checkpoint import checkpoint

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.qkv, self.proj = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.ln2, self.fc1, self.fc2 = nn.LayerNorm(d), nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            b, s, _ = x.shape
            qkv = self.qkv(self.ln1(x)).view(b, s, 3, heads, d // heads)
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)      # (b, heads, s, d/heads)
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.pos = nn.Embedding(vocab, d), nn.Embedding(max_len, d)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.ln = nn.LayerNorm(d)
            if not tied:
                self.head = nn.Linear(d, vocab, bias=False)
                return
            for emb in (self.emb, self.pos):    # GPT-style: a tied head at std 1 gives huge logits
                nn.init.normal_(emb.weight, std=0.02)

        def forward(self, ids):
            h = self.emb(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
            for block in self.blocks:
                h = checkpoint(block, h, use_reentrant=False) if checkpointed else block(h)
            if not tied:
                return self.head(self.ln(h))
            return F.linear(self.ln(h), self.emb.weight)        # tied head

    return LM()


def workload_ckpt_lm(torch, args, rng):
    F = torch.nn.functional
    vocab, d, heads, layers, batch, max_len = 32000, 1024, 16, 16, 8, 2048
    with device_scope(torch):
        model = decoder_lm(torch, vocab, d, heads, layers, max_len, checkpointed=True).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)

    def step(seq):
        ids = torch.randint(0, vocab, (batch, seq), device=DEVICE, generator=gen)
        with torch.autocast(DEVICE, dtype=torch.bfloat16):
            logits = model(ids)
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, vocab), ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, [rng.randint(256, max_len) for _ in range(args.steps)]


def workload_two_streams(torch, args, rng):
    import torchvision
    nn, F = torch.nn, torch.nn.functional
    vocab, d, max_batch, max_side, max_len = 30000, 512, 128, 224, 256

    class TwoTower(nn.Module):
        def __init__(self):
            super().__init__()
            self.image = torchvision.models.resnet18(weights=None)
            self.image.fc = nn.Identity()                       # 512 features
            self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(max_len, d)
            layer = nn.TransformerEncoderLayer(d, 8, 4 * d, dropout=0.0, batch_first=True,
                                               norm_first=True)
            self.text = nn.TransformerEncoder(layer, 6, enable_nested_tensor=False)
            self.head = nn.Sequential(nn.Linear(512 + d, 1024), nn.GELU(), nn.Linear(1024, 1000))

    with device_scope(torch):
        model = TwoTower().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)
    main = torch.cuda.current_stream()
    side = torch.cuda.Stream()      # the text tower (and so its backward)
    copy = torch.cuda.Stream()      # host-to-device loads of the next batch
    # Pinned host batches, as a data loader with pin_memory=True leaves them; a
    # batch is a prefix of a flat buffer so that every copy is contiguous.
    cpu = torch.Generator().manual_seed(args.seed)
    host = [(torch.randint(0, 256, (max_batch * 3 * max_side * max_side,), dtype=torch.uint8,
                           generator=cpu).pin_memory(),
             torch.randint(0, vocab, (max_batch * max_len,), generator=cpu).pin_memory())
            for _ in range(2)]

    def load(shape, slot):
        batch, side_px, length = shape
        images, tokens = host[slot]
        with torch.cuda.stream(copy):
            img = images[:batch * 3 * side_px * side_px].view(batch, 3, side_px, side_px)
            tok = tokens[:batch * length].view(batch, length)
            return img.to(DEVICE, non_blocking=True), tok.to(DEVICE, non_blocking=True)

    shapes = [(rng.choice(range(64, 129, 16)), rng.choice((160, 192, 224)), rng.randint(32, max_len))
              for _ in range(args.steps)]
    state = {"i": 0, "next": load(shapes[0], 0)}

    def step(shape):
        i = state["i"]
        state["i"] += 1
        img, tok = state["next"]
        main.wait_stream(copy)               # this step's batch has arrived
        img.record_stream(main)              # allocated on the copy stream
        tok.record_stream(side)
        if i + 1 < len(shapes):              # the next one loads during this step
            state["next"] = load(shapes[i + 1], (i + 1) % 2)
        y = torch.randint(0, 1000, (img.shape[0],), device=DEVICE, generator=gen)
        with torch.autocast(DEVICE, dtype=torch.bfloat16):
            side.wait_stream(main)
            with torch.cuda.stream(side):
                pos = torch.arange(tok.shape[1], device=DEVICE)
                text = model.text(model.tok(tok) + model.pos(pos)).mean(1)
            image = model.image(img.float().div_(255.0))
            main.wait_stream(side)
            text.record_stream(main)         # allocated on the side stream
            loss = F.cross_entropy(model.head(torch.cat([image, text], 1)), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, shapes


BUILDERS = {
    "gpt2": workload_gpt2, "resnet50": workload_resnet50, "seq2seq": workload_seq2seq,
    "unet": workload_unet, "vit": workload_vit, "ckpt_lm": workload_ckpt_lm,
    "two_streams": workload_two_streams,
    **workload_families.BUILDERS,
}
assert tuple(BUILDERS) == WORKLOADS


def warm_every_shape(shapes, warmup):
    """The step shapes with one warm-up step added for each shape the timed
    steps repeat and the warm-up did not see, and the new warm-up count.

    The first step of a new shape costs 100-400 ms on an H100 whatever the
    allocator (cuDNN and cuBLAS pick, and load, kernels for it), and where it
    falls among 25 timed steps of ~60 ms it swings a run's mean by 20%: far
    more than the 1% being measured. A workload drawing from a few shapes
    (batch sizes, image sides) meets each once in its first steps of a real
    run, then repeats them; one whose every step is new (a sequence length
    drawn from hundreds) has no steady state to warm and is left as it is.
    """
    head, timed = shapes[:warmup], shapes[warmup:]
    distinct = []
    for shape in timed:
        if shape not in distinct:
            distinct.append(shape)
    if 2 * len(distinct) > len(timed):
        return shapes, warmup
    extra = [shape for shape in distinct if shape not in head]
    return head + extra + timed, warmup + len(extra)


def kernel_time(torch, step, shapes):
    """Mean GPU time per step of the kernels (and copies, memsets) that
    `shapes` run, from torch.profiler: the device's own work, with none of
    the idle time between launches. None where the profiler sees no device
    activity (no CUPTI)."""
    from torch.profiler import ProfilerActivity, profile
    from torch.autograd import DeviceType
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for shape in shapes:
            step(shape)
        torch.cuda.synchronize()
    device_us, launches = 0.0, 0
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:
            device_us += e.time_range.elapsed_us()
            launches += 1
    if launches == 0:
        return None
    return {"steps": len(shapes), "kernel_ms_per_step": device_us / 1e3 / len(shapes),
            "device_ops_per_step": launches / len(shapes)}


def host_reference_ms(repeats=5, iterations=200_000):
    """The host's speed in this process: the fastest of `repeats` timings of
    a fixed pure-Python loop, in ms. Host-bound steps move with it: one
    process of an allocator can run every step 10-20% slower than the next
    (seen on an H100, 2026-11-26), and this says whether the
    host itself was slower then, the allocator aside."""
    best = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        acc = 0
        for i in range(iterations):
            acc += i & 7
        elapsed = (time.perf_counter() - t0) * 1e3
        best = elapsed if best is None else min(best, elapsed)
    return best


# The per-step host probe: about a millisecond of the reference loop.
HOST_PROBE_ITERATIONS = 20_000


def host_adjusted_ratio(rs, base_runs):
    """Step time of `rs` against `base_runs`, with the host's state taken out:
    a least-squares fit of log(step ms) over every timed step of both, with
    one term per step index (every run trains the same shapes in the same
    order, so step i is the same work in all of them), one for the
    allocator, and the log of the step's host probe (host_probe_ms). Returns
    (ratio, standard error of its log, the probe's elasticity, steps);
    (None, None, None, steps) where the runs have no probes or the fit is
    degenerate. A diagnostic beside the plain mean, which stays the figure of
    record: it tells an allocator's cost from the host states its processes
    happened to draw. Steps of one process are not independent (its host
    state persists), so the error understates the spread between rounds."""
    groups = {}
    mine = {id(r) for r in rs}
    for r in list(rs) + list(base_runs):
        probes = r.get("host_probe_ms")
        if not probes:
            continue
        for i in range(r["warmup"], min(len(r["step_ms"]), len(probes))):
            if r["step_ms"][i] > 0 and probes[i] > 0:
                groups.setdefault(i, []).append((math.log(r["step_ms"][i]),
                                                 1.0 if id(r) in mine else 0.0,
                                                 math.log(probes[i])))
    # Each step index's mean taken out (its shape's own time), then two
    # regressors: which allocator, and the host probe.
    ys, xs, ps = [], [], []
    for g in groups.values():
        if len(g) < 2:
            continue
        my, mx, mp = (statistics.fmean(v[k] for v in g) for k in range(3))
        for y, x, p in g:
            ys.append(y - my)
            xs.append(x - mx)
            ps.append(p - mp)
    n = len(ys)
    sxx = sum(x * x for x in xs)
    spp = sum(p * p for p in ps)
    sxp = sum(x * p for x, p in zip(xs, ps))
    det = sxx * spp - sxp * sxp
    if n < 4 or sxx <= 0 or det <= 1e-12 * max(sxx * spp, 1e-300):
        return None, None, None, n
    sxy = sum(x * y for x, y in zip(xs, ys))
    spy = sum(p * y for p, y in zip(ps, ys))
    b = (spp * sxy - sxp * spy) / det
    c = (sxx * spy - sxp * sxy) / det
    dof = max(n - 2 - len(groups), 1)
    s2 = sum((y - b * x - c * p) ** 2 for x, p, y in zip(xs, ps, ys)) / dof
    return math.exp(b), math.sqrt(s2 * spp / det), c, n


def child_train(args):
    host_ref_before = host_reference_ms()
    ct = setup_allocator(args.config, args.library)
    import torch
    torch.backends.cudnn.benchmark = False   # same algorithms for every allocator
    torch.manual_seed(args.seed)
    mem = Memory(torch, ct)
    rng = random.Random(args.seed)
    step, shapes = BUILDERS[args.workload](torch, args, rng)
    warmup = args.warmup
    if args.warm_shapes:
        shapes, warmup = warm_every_shape(shapes, args.warmup)
    times, loss = [], None
    # ccalloc's driver work in each step (maps, unmaps, waits for queued
    # work), read between steps, so a slow step can be told apart from one
    # that made driver calls (and ccalloc's own clocks, HOST_CLOCKS).
    counters = ("num_maps", "num_unmaps", "num_stream_syncs", "num_foreground_unmaps",
                "num_cross_stream_reuses", "num_device_waits", "num_waits_under_block",
                "wait_under_block_bytes", "driver_calls", "background_driver_calls",
                "driver_ns", "background_driver_ns") + HOST_CLOCKS
    step_calls, last = [], ct.ccalloc_counters() if ct else None
    # The allocator's device allocations and frees in each step, by
    # torch.cuda.memory_stats(): PyTorch's own count of its driver work
    # (for ccalloc with its extension, ccalloc's creates and releases).
    device_calls = []
    device_keys = ("num_device_alloc", "num_device_free")
    last_device = [mem.stats().get(k, 0) for k in device_keys]
    # Where a step's time goes: the host's time to launch it (until step()
    # returns) and the span of the current stream's work on the GPU (events
    # around it). A step whose launch takes about its whole time is host
    # bound, and an allocator's host cost shows there; one whose GPU span is
    # longer with one allocator than another ran slower kernels or left the
    # GPU idle waiting for launches.
    launch_ms, gpu_ms = [], []
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    # The host's state at each step: the device machines' host runs the same
    # code at one speed or at half of it, switching every few seconds
    # (bench/probes/host_core_probe.py: every core shows both), so a process's mean
    # step time says as much about the states it drew as about its
    # allocator. A short probe before each step (outside its time) says which
    # state each step drew: host_adjusted_ratio takes it out of the ratio.
    probes = []
    # And what each step cost the host besides its wall time: the launching
    # thread's CPU time and the process's (the backward pass runs on
    # autograd's own thread), user-space cycles and instructions (where the
    # guest lets a process count them) and the machine's steal time, read
    # from the step's start to its end (bench/host_counters.py): whichever
    # stays put across the two states measures the step's host work without
    # them.
    host = ThreadCounters()
    host_steps = []
    turn = Turn()   # --lockstep: one step at a time among the round's processes
    for i, shape in enumerate(shapes):
        torch.cuda.synchronize()
        turn.wait()
        probes.append(host_reference_ms(repeats=1, iterations=HOST_PROBE_ITERATIONS))
        h0 = host.read()
        t0 = time.perf_counter()
        start.record()
        loss = step(shape)
        end.record()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
        host_steps.append(ThreadCounters.delta(h0, host.read()))
        launch_ms.append((t1 - t0) * 1e3)
        gpu_ms.append(start.elapsed_time(end))
        if ct:
            now = ct.ccalloc_counters()
            step_calls.append([now.get(k, 0) - last.get(k, 0) for k in counters])
            last = now
        now_device = [mem.stats().get(k, 0) for k in device_keys]
        device_calls.append([a - b for a, b in zip(now_device, last_device)])
        last_device = now_device
        if i + 1 == warmup:
            mem.settle()
        else:
            mem.sample()
        turn.finished(last=i + 1 == len(shapes))
        if (i + 1) % 10 == 0:
            print(f"[child] step {i + 1}/{len(shapes)}: {times[-1] * 1e3:.1f} ms", flush=True)
    peak_alloc, peak_reserved = mem.peaks()
    stats = mem.stats()
    timed = times[warmup:]
    # After the timed steps (it slows the steps it watches): the GPU time of
    # the kernels themselves, with no idle gaps, over the last timed shapes.
    # Again after the steps: both ends of the run (the minimum of the two).
    host_ref = min(host_ref_before, host_reference_ms())
    kernel = kernel_time(torch, step, shapes[-args.kernel_profile:]) if args.kernel_profile else None
    result = {
        "host_ref_ms": host_ref,
        "config": args.config, "workload": args.workload, "steps": len(shapes),
        "warmup": warmup, "shapes": shapes,
        "step_ms": [t * 1e3 for t in times],
        "host_probe_ms": probes,
        "host_counters": {"perf": host.perf, "steps": host_steps},
        "launch_ms": launch_ms, "gpu_span_ms": gpu_ms,
        "mean_launch_ms": statistics.fmean(launch_ms[warmup:]),
        "mean_gpu_span_ms": statistics.fmean(gpu_ms[warmup:]),
        "kernel_profile": kernel,
        "mean_step_ms": statistics.fmean(timed) * 1e3,
        "median_step_ms": statistics.median(timed) * 1e3,
        "stdev_step_ms": (statistics.stdev(timed) if len(timed) > 1 else 0.0) * 1e3,
        "min_step_ms": min(timed) * 1e3, "max_step_ms": max(timed) * 1e3,
        "peak_allocated": peak_alloc, "peak_reserved": peak_reserved,
        "reserved_over_allocated": peak_reserved / peak_alloc if peak_alloc else None,
        "peak_source": "ccalloc counters" if mem.source is ct else "torch.cuda",
        "ccalloc_mode": mem.mode,
        "device_used_after": mem.sample()[0], "device_used_peak": mem.device_peak,
        "device_vs_reserved_max_gap": mem.max_gap,
        "other_device_memory": mem.other,
        "device_vs_reserved_max_gap_after_warmup": mem.max_gap_after_warmup,
        "baseline_used": mem.baseline, "device_total": mem.total,
        "num_alloc_retries": stats.get("num_alloc_retries"), "num_ooms": stats.get("num_ooms"),
        "device_calls": device_calls,
        "final_loss": float(loss.float().item()),
        "torch": torch.__version__, "gpu": torch.cuda.get_device_name(),
    }
    if ct:
        result["ccalloc"] = ct.ccalloc_stats()
        result["step_calls"] = {"counters": list(counters), "steps": step_calls}
        # ccalloc's own peaks, next to what torch.cuda reported.
        result["ccalloc_peak_allocated"] = ct.max_memory_allocated()
        result["ccalloc_peak_reserved"] = ct.max_memory_reserved()
    return result


def is_oom(error):
    text = str(error)
    return "out of memory" in text.lower() or "ALLOC_FAILED" in text


def child_max_batch(args):
    ct = setup_allocator(args.config, args.library)
    import torch
    torch.backends.cudnn.benchmark = False
    mem = Memory(torch, ct)
    cap = int(args.cap_gib * GiB)
    if ct:
        ct.set_memory_limit(cap)
    else:
        torch.cuda.set_per_process_memory_fraction(cap / mem.total)
    step, opt = build_resnet50(torch, 1, args.seed)
    probes = []

    def fits(batch):
        gc.collect()
        torch.cuda.empty_cache()
        t0 = time.perf_counter()
        try:
            for _ in range(args.probe_steps):
                step(224, batch=batch)
            torch.cuda.synchronize()
            ok = True
        except RuntimeError as e:   # torch.OutOfMemoryError is a RuntimeError
            if not is_oom(e):
                raise
            ok = False
        opt.zero_grad(set_to_none=True)
        probes.append({"batch": batch, "fits": ok, "seconds": time.perf_counter() - t0})
        print(f"[child] batch {batch}: {'fits' if ok else 'out of memory'}", flush=True)
        return ok

    good, bad = 0, None
    batch = args.start_batch
    while batch <= args.max_batch_limit:          # doubling
        if fits(batch):
            good, batch = batch, batch * 2
        else:
            bad = batch
            break
    if bad is None:
        bad = args.max_batch_limit + 1
    while bad - good > args.resolution:           # bisection
        mid = (good + bad) // 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return {"config": args.config, "workload": "resnet50@224", "cap_bytes": cap,
            "max_batch": good, "first_failing": bad if bad <= args.max_batch_limit else None,
            "probes": probes, "device_used_peak": mem.device_peak}


# --- parent side ------------------------------------------------------------------

def is_ccalloc(config_name):
    return "ccalloc_conf" in CONFIGS[config_name]


LOCKSTEP_ENV = "CCALLOC_COMPARE_LOCKSTEP"


class Turns:
    """--lockstep's coordinator: one step at a time to each child in turn.

    A pair of FIFOs per child (go: the parent's "g"; done: the child's "d"
    after each step, "e" after its last). The parent holds both ends open
    (O_RDWR), so no open blocks on a child that never starts; a child whose
    turn brings no answer within `timeout` seconds (it died, or hangs: its
    run's watchdog kills it) or that says "e" leaves the rotation.
    """

    def __init__(self, names, directory, timeout):
        self.names, self.timeout, self.fds, self.env = list(names), timeout, {}, {}
        self.turns = {n: 0 for n in self.names}
        for i, n in enumerate(self.names):
            go, done = (os.path.join(directory, f"{i}.{k}") for k in ("go", "done"))
            os.mkfifo(go)
            os.mkfifo(done)
            self.fds[n] = (os.open(go, os.O_RDWR), os.open(done, os.O_RDWR))
            self.env[n] = {LOCKSTEP_ENV: f"{go}{os.pathsep}{done}"}

    def run(self):
        import select
        active, turn = list(self.names), 0
        while active:
            k = turn % len(active)
            for n in active[k:] + active[:k]:
                go, done = self.fds[n]
                os.write(go, b"g")
                ready, _, _ = select.select([done], [], [], self.timeout)
                if not ready or os.read(done, 1) != b"d":
                    active.remove(n)
                else:
                    self.turns[n] += 1
            turn += 1

    def close(self):
        for go, done in self.fds.values():
            os.close(go)
            os.close(done)


class Turn:
    """A child's side of --lockstep (a no-op without it)."""

    def __init__(self, env=None):
        spec = (os.environ if env is None else env).get(LOCKSTEP_ENV)
        self.go = self.done = None
        if spec:
            go, done = spec.split(os.pathsep)
            self.go, self.done = os.open(go, os.O_RDONLY), os.open(done, os.O_WRONLY)

    def wait(self):
        """Blocks until the parent gives this child its next step."""
        if self.go is not None and os.read(self.go, 1) != b"g":
            self.go = self.done = None   # the parent is gone: run on alone

    def finished(self, last=False):
        """The step's work is done; `last`: there is no further step."""
        if self.done is not None:
            os.write(self.done, b"e" if last else b"d")
            if last:
                os.close(self.done)
                os.close(self.go)
                self.go = self.done = None


def start_order(n, rnd):
    """The order in which round `rnd` starts its n side-by-side processes
    (indexes into the round's configurations): turned by one each round, so
    that no allocator is always first (or last) to start."""
    k = rnd % n if n else 0
    return list(range(k, n)) + list(range(k))


def gpu_slot(gpus, i, rnd):
    """The GPU (--gpus) the round's i-th configuration runs on, turning by one
    each round so that every allocator meets every GPU alike; None without
    --gpus."""
    if not gpus:
        return None
    return gpus[(i + rnd) % len(gpus)]


def child_env(config_name, extra=None):
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    for var in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "CCALLOC_CONF",
                "CCALLOC_TORCH_SIMULATE", "CCALLOC_TRACE"):
        env.pop(var, None)
    conf = CONFIGS[config_name].get("torch_conf")
    if conf:
        env["PYTORCH_CUDA_ALLOC_CONF"] = conf
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python")] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    env.update(extra or {})
    return env


def run_child(args, config, mode, workload=None, steps=None, warmup=None, env=None,
              warm_shapes=None):
    steps = args.steps if steps is None else steps
    warm_shapes = args.warm_shapes if warm_shapes is None else warm_shapes
    warmup = args.warmup if warmup is None else warmup
    cmd = [sys.executable, os.path.abspath(__file__), "--child", mode, "--config", config,
           "--steps", str(steps), "--warmup", str(warmup), "--seed", str(args.seed),
           "--gpt2-batch", str(args.gpt2_batch), "--resnet-batch", str(args.resnet_batch),
           "--cap-gib", str(args.cap_gib), "--probe-steps", str(args.probe_steps),
           "--start-batch", str(args.start_batch), "--resolution", str(args.resolution),
           "--max-batch-limit", str(args.max_batch_limit),
           "--kernel-profile", str(args.kernel_profile)]
    for extra in args.ccalloc_config:
        cmd += ["--ccalloc-config", extra]
    for extra in args.torch_config:
        cmd += ["--torch-config", extra]
    if workload:
        cmd += ["--workload", workload]
    if not warm_shapes:
        cmd += ["--no-warm-shapes"]
    if args.library:
        cmd += ["--library", args.library]
    t0 = time.time()
    result, tail = None, []
    try:
        proc = subprocess.Popen(cmd, env=child_env(config, env), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        # A hung child (a stuck kernel, a deadlock) must not stop the comparison.
        killed = []
        watchdog = threading.Timer(args.timeout, lambda: (killed.append(1), proc.kill()))
        watchdog.start()
        try:
            for line in proc.stdout:
                if line.startswith("RESULT "):
                    result = json.loads(line[len("RESULT "):])
                else:
                    tail.append(line.rstrip())
                    tail = tail[-40:]
                    if line.startswith("[child] "):
                        print("    " + line[len("[child] "):].rstrip(), flush=True)
            proc.wait()
        finally:
            watchdog.cancel()
        rc = proc.returncode
        if killed:
            tail.append(f"killed after {args.timeout:.0f} s")
    except OSError as e:
        rc, tail = -1, [str(e)]
    elapsed = time.time() - t0
    if result is None or rc != 0:
        print(f"  !! {config} {mode} {workload or ''} failed (rc={rc}):\n" +
              "\n".join("     " + t for t in tail[-15:]), flush=True)
        return {"config": config, "workload": workload, "error": "\n".join(tail) or f"rc={rc}",
                "rc": rc, "wall_s": elapsed}
    result["wall_s"] = elapsed
    return result


def count_events(path):
    with gzip.open(path, "rt") as f:
        return sum(1 for line in f if line[:1] in ("a", "f"))


def record_trace(args, config, workload):
    """One untimed run with CCALLOC_TRACE set; gzips what the plugin wrote at exit."""
    os.makedirs(args.record_traces, exist_ok=True)
    raw = os.path.join(os.path.abspath(args.record_traces), f"{workload}.trace")
    for stale in (raw, raw + ".gz"):
        if os.path.exists(stale):
            os.remove(stale)
    r = run_child(args, config, "train", workload, steps=args.trace_steps,
                  warmup=min(args.warmup, args.trace_steps - 1), env={"CCALLOC_TRACE": raw},
                  warm_shapes=False)
    entry = {"workload": workload, "config": config, "steps": args.trace_steps,
             "wall_s": r.get("wall_s")}
    if "error" in r:
        entry["error"] = r["error"]
    if os.path.exists(raw):
        with open(raw, "rb") as src, gzip.GzipFile(raw + ".gz", "wb", mtime=0) as dst:
            shutil.copyfileobj(src, dst)
            # The replay's per-step figures read this (stats/trace.h).
            dst.write(f"# steps: {args.trace_steps}\n".encode())
        os.remove(raw)
        entry.update(path=raw + ".gz", bytes=os.path.getsize(raw + ".gz"),
                     events=count_events(raw + ".gz"),
                     peak_allocated=r.get("peak_allocated"))
        print(f"  trace {entry['path']}: {entry['events']} events, "
              f"{entry['bytes'] / 1024:.0f} KiB", flush=True)
    else:
        entry.setdefault("error", "the run left no trace")
        print(f"  !! no trace for {workload}", flush=True)
    return entry


def fmt_bytes(n):
    return "-" if n is None else f"{n / GiB:7.2f} GiB"


def fmt_ratio(x, digits=3):
    return "-" if x is None else f"{x:.{digits}f}"


def print_table(runs, maxb, cap_gib):
    print()
    head = (f"{'workload':11} {'allocator':18} {'rnd':>3} {'mean ms':>8} {'stdev':>7} "
            f"{'median':>8} {'max ms':>8} {'peak alloc':>11} {'peak resv':>11} {'resv/alloc':>10} "
            f"{'dev peak':>11} {'dev after':>11}")
    print(head)
    print("-" * len(head))
    for r in runs:
        rnd = r.get("round", 0) + 1
        if r.get("skipped"):
            print(f"{r['workload']:11} {r['config']:18} {rnd:3d} skipped: {r['skipped']}")
            continue
        if "error" in r:
            print(f"{r['workload']:11} {r['config']:18} {rnd:3d} failed: "
                  f"{r['error'].splitlines()[-1][:60]}")
            continue
        ratio = r["reserved_over_allocated"]
        print(f"{r['workload']:11} {r['config']:18} {rnd:3d} {r['mean_step_ms']:8.1f} "
              f"{r['stdev_step_ms']:7.1f} {r['median_step_ms']:8.1f} {r['max_step_ms']:8.1f} "
              f"{fmt_bytes(r['peak_allocated']):>11} {fmt_bytes(r['peak_reserved']):>11} "
              f"{fmt_ratio(ratio, 4):>10} {fmt_bytes(r['device_used_peak']):>11} "
              f"{fmt_bytes(r['device_used_after']):>11}")
    if maxb:
        print()
        print(f"largest ResNet-50 batch at 224 px under {cap_gib:g} GiB")
        for r in maxb:
            if "error" in r:
                print(f"  {r['config']:18} failed: {r['error'].splitlines()[-1][:60]}")
            else:
                print(f"  {r['config']:18} {r['max_batch']:6d}   ({len(r['probes'])} probes, "
                      f"first failing {r['first_failing']})")


def good_runs(runs):
    return [r for r in runs if "error" not in r and not r.get("skipped")]


def paired_rounds(rs, base_runs):
    """The runs of `rs` whose round `base_runs` also ran, each with that
    round's baseline mean step time: [(run, base_mean_ms), ...] in rs' order.
    The one pairing rule of the summary and of bench/pool_rounds.py."""
    base = {r["round"]: r["mean_step_ms"] for r in base_runs}
    return [(r, base[r["round"]]) for r in rs if r["round"] in base]


def mean_ratio(rs, base_runs):
    """Mean step time of `rs` over that of `base_runs`, over the rounds both
    have, and the same ratio round by round."""
    paired = paired_rounds(rs, base_runs)
    if not paired:
        return None, []
    ratio = (statistics.fmean(r["mean_step_ms"] for r, _ in paired) /
             statistics.fmean(b for _, b in paired))
    return ratio, [r["mean_step_ms"] / b for r, b in paired]


def mean_of(rs, get):
    """Mean of get(r) over the runs that have it; None when none does."""
    values = [v for v in map(get, rs) if v is not None]
    return statistics.fmean(values) if values else None


def summarize(runs):
    """Per workload and allocator, over rounds: the mean of the per-run mean step
    times and their spread, that mean against native_expandable's and native's
    over the same rounds, and the worst memory figures."""
    ok = good_runs(runs)
    out = []
    for workload in dict.fromkeys(r["workload"] for r in ok):
        of = lambda config: [r for r in ok if r["workload"] == workload and r["config"] == config]
        native, expandable = of("native"), of(BASELINE)
        native_median = {r["round"]: r["median_step_ms"] for r in native}
        for config in dict.fromkeys(r["config"] for r in ok if r["workload"] == workload):
            rs = of(config)
            means = [r["mean_step_ms"] for r in rs]
            vs_exp, vs_exp_rounds = mean_ratio(rs, expandable)
            adj, adj_err, elasticity, adj_steps = (
                host_adjusted_ratio(rs, expandable) if config != BASELINE else
                (None, None, None, 0))
            vs_nat, _ = mean_ratio(rs, native)
            rel = [r["median_step_ms"] / native_median[r["round"]] for r in rs
                   if r["round"] in native_median]
            out.append({
                "workload": workload, "config": config, "rounds": len(rs),
                "mean_step_ms": statistics.fmean(means),
                "mean_step_ms_min": min(means), "mean_step_ms_max": max(means),
                "mean_step_ms_stdev": statistics.stdev(means) if len(means) > 1 else 0.0,
                # Step-to-step spread inside a run (shapes change every step).
                "step_stdev_ms": statistics.fmean(r["stdev_step_ms"] for r in rs),
                "max_step_ms": max(r["max_step_ms"] for r in rs),
                "median_step_ms": statistics.median(r["median_step_ms"] for r in rs),
                "mean_vs_expandable": vs_exp, "mean_vs_expandable_rounds": vs_exp_rounds,
                "mean_vs_native": vs_nat,
                # The same with the host's state taken out (a diagnostic:
                # host_adjusted_ratio).
                "host_adjusted_vs_expandable": adj, "host_adjusted_log_error": adj_err,
                "host_probe_elasticity": elasticity, "host_adjusted_steps": adj_steps,
                # As before: median over rounds of (median step / native's median step).
                "step_vs_native": statistics.median(rel) if rel else None,
                "peak_allocated": max(r["peak_allocated"] for r in rs),
                "peak_reserved": max(r["peak_reserved"] for r in rs),
                "reserved_over_allocated": max((r["reserved_over_allocated"] for r in rs
                                                if r["reserved_over_allocated"] is not None),
                                               default=None),
                # The device's own count (memory in use less what was in use
                # before the first allocation) against reserved, read together.
                "device_vs_reserved_max_gap": max(r["device_vs_reserved_max_gap"] for r in rs),
                "other_device_memory": max(r["other_device_memory"] or 0 for r in rs),
                "device_vs_reserved_max_gap_after_warmup": max(
                    r["device_vs_reserved_max_gap_after_warmup"] for r in rs),
                # Where the time goes (runs from before these figures lack them).
                "mean_launch_ms": mean_of(rs, lambda r: r.get("mean_launch_ms")),
                "mean_gpu_span_ms": mean_of(rs, lambda r: r.get("mean_gpu_span_ms")),
                "kernel_ms_per_step": mean_of(
                    rs, lambda r: (r.get("kernel_profile") or {}).get("kernel_ms_per_step")),
                # Each run's host speed (host_reference_ms), by round.
                "host_ref_ms": mean_of(rs, lambda r: r.get("host_ref_ms")),
                "host_ref_ms_rounds": [r.get("host_ref_ms") for r in rs],
            })
    return out


def fmt_ms(v):
    return "-" if v is None else f"{v:.2f}"


def step_counter(run, name):
    """One of ccalloc's counters, step by step, as the run read it between
    steps (step_calls); None where the run has no such counter."""
    calls = run.get("step_calls") or {}
    names = calls.get("counters", [])
    if name not in names:
        return None
    at = names.index(name)
    return [step[at] for step in calls.get("steps", [])]


def move_costs(runs):
    """What each chunk a ccalloc configuration maps costs in step time.

    Every run of a workload trains the same shapes in the same order, so step
    i of a ccalloc run can be set against step i of native_expandable's runs
    (their mean over rounds). The ccalloc step's extra time is fitted by least
    squares to the chunks it mapped (num_maps; a move is one map and one
    unmap): the slope is the step time one mapped chunk costs, the intercept
    what the configuration costs with no driver calls. A fit needs steps with
    different counts; None where there are none."""
    ok = good_runs(runs)
    out = []
    for workload in dict.fromkeys(r["workload"] for r in ok):
        base = [r for r in ok if r["workload"] == workload and r["config"] == BASELINE]
        if not base:
            continue
        for config in dict.fromkeys(r["config"] for r in ok if r["workload"] == workload):
            rs = [r for r in ok if r["workload"] == workload and r["config"] == config
                  and r.get("step_calls")]
            xs, ys, fg = [], [], []
            # cross_stream_reuse: loans and the device-side waits ordering them.
            lent = {"num_cross_stream_reuses": [], "num_device_waits": []}
            host = {k: [] for k in HOST_CLOCKS}
            for r in rs:
                # num_maps: the first counter child_train records.
                maps = [step[0] for step in r["step_calls"]["steps"]]
                unmaps = step_counter(r, "num_foreground_unmaps")
                clocks = {k: step_counter(r, k) for k in host}
                loans = {k: step_counter(r, k) for k in lent}
                for i in range(r["warmup"], min(len(r["step_ms"]), len(maps))):
                    paired = [b["step_ms"][i] for b in base if i < len(b["step_ms"])]
                    if not paired:
                        continue
                    xs.append(maps[i])
                    ys.append(r["step_ms"][i] - statistics.fmean(paired))
                    for k, v in host.items():
                        if clocks[k] is not None:
                            v.append(clocks[k][i] / 1e6)
                    if unmaps is not None:
                        fg.append(unmaps[i])
                    for k, v in lent.items():
                        if loans[k] is not None:
                            v.append(loans[k][i])
            # A fit needs different counts, and maps enough to be a cost.
            if len(set(xs)) < 2 or sum(xs) < len(xs):
                continue
            mx, my = statistics.fmean(xs), statistics.fmean(ys)
            slope = (sum((x - mx) * (y - my) for x, y in zip(xs, ys)) /
                     sum((x - mx) ** 2 for x in xs))
            # How the placements' time falls over the steps: a cost spread
            # thin (every step re-lays a little) and one in a few steps (the
            # steps that reach the peak lay memory out again) call for
            # different cures.
            prep = sorted(host["prepare_ns"], reverse=True)
            top = prep[:max(1, math.ceil(len(prep) / 10))]
            out.append({"workload": workload, "config": config, "steps": len(xs),
                        "maps_per_step": mx, "extra_ms_per_step": my,
                        "us_per_map": slope * 1e3, "extra_ms_without_maps": my - slope * mx,
                        "foreground_unmaps_per_step": statistics.fmean(fg) if fg else None,
                        "loans_per_step": (statistics.fmean(lent["num_cross_stream_reuses"])
                                           if lent["num_cross_stream_reuses"] else None),
                        "device_waits_per_step": (statistics.fmean(lent["num_device_waits"])
                                                  if lent["num_device_waits"] else None),
                        "prepare_ms_median_step": statistics.median(prep) if prep else None,
                        "prepare_ms_max_step": prep[0] if prep else None,
                        "prepare_share_top_tenth": (sum(top) / sum(prep)
                                                    if prep and sum(prep) > 0 else None),
                        # ccalloc's own clock: host ms per step in placements
                        # that mapped, in waits, and on the unmap worker.
                        **{k.replace("_ns", "_ms_per_step"): statistics.fmean(v) if v else None
                           for k, v in host.items()}})
    return out


def placement_thirds(runs):
    """ccalloc's placements (its own clock, prepare_ns: the launching
    thread's time in placements that mapped memory, waits included) in each
    third of the timed steps, as ms a step and as a share of the same steps'
    time, over a configuration's runs of a workload. A training run's mean
    step is its steady steps': the first third holds most of the steps that
    reach a new peak (sequence lengths drawn at random set records ever more
    rarely), the last shows what the allocator costs once they are rare.
    Runs without the clock are left out; None where no run has it."""
    out = []
    ok = [r for r in good_runs(runs) if r.get("step_calls")]
    for key in dict.fromkeys((r["workload"], r["config"]) for r in ok):
        rs = [r for r in ok if (r["workload"], r["config"]) == key]
        thirds = [[0.0, 0.0, 0] for _ in range(3)]   # prepare ms, step ms, steps
        for r in rs:
            prepare = step_counter(r, "prepare_ns")
            if prepare is None:
                continue
            first = r["warmup"]
            n = min(len(r["step_ms"]), len(prepare)) - first
            for j in range(max(n, 0)):
                t = thirds[min(2, 3 * j // n)]
                t[0] += prepare[first + j] / 1e6
                t[1] += r["step_ms"][first + j]
                t[2] += 1
        if not all(t[2] for t in thirds):
            continue
        out.append({"workload": key[0], "config": key[1],
                    "prepare_ms_per_step": [t[0] / t[2] for t in thirds],
                    "share_of_step": [t[0] / t[1] if t[1] else None for t in thirds]})
    return out


def wait_steps(runs, threshold_ms=1.0):
    """Where a ccalloc configuration's extra step time sits: in the steps
    where it waited for queued work (wait_ns of at least threshold_ms: a
    drain of the GPU's queue, after which the GPU idles while the host
    queues work again) or in the rest. Each step is set against the
    baseline's same step of the same round (the same shape). A control, a
    configuration of PyTorch's own allocator beside the baseline (an A/A
    run, --torch-config), is set against it on the same steps: what the
    method reads there where no allocator differs. None where no run of a
    workload has the clock and a baseline run of its round. Also the mean
    size of the blocks whose placement waited under them (waited_block_mib:
    a huge block landing where memory left earlier in its step, or small
    ones), None where the runs did not count it."""
    ok = good_runs(runs)
    by = {(r["workload"], r["config"], r.get("round", 0)): r for r in ok}
    out = []
    for workload, config in dict.fromkeys((r["workload"], r["config"]) for r in ok):
        if not is_ccalloc(config):
            continue
        # Only PyTorch's allocator set as the baseline is: another setting
        # (native, cudaMallocAsync) is a different allocator, not a control.
        control = next((c for (w, c, _) in by if w == workload and c != BASELINE
                        and not is_ccalloc(c) and CONFIGS.get(c, {}).get("torch_conf")
                        == CONFIGS[BASELINE]["torch_conf"]), None)
        parts = {True: [[], [], []], False: [[], [], []]}   # ccalloc, control, wait ms
        waited = [0, 0]   # blocks that waited under them: bytes, count
        for (w, c, rnd), r in by.items():
            if (w, c) != (workload, config):
                continue
            waits = step_counter(r, "wait_ns")
            block_bytes = step_counter(r, "wait_under_block_bytes")
            block_waits = step_counter(r, "num_waits_under_block")
            base = by.get((workload, BASELINE, rnd))
            if waits is None or base is None:
                continue
            other = by.get((workload, control, rnd)) if control else None
            for i in range(r["warmup"], min(len(r["step_ms"]), len(waits),
                                            len(base["step_ms"]))):
                wait_ms = waits[i] / 1e6
                part = parts[wait_ms >= threshold_ms]
                part[0].append(r["step_ms"][i] - base["step_ms"][i])
                if other is not None and i < len(other["step_ms"]):
                    part[1].append(other["step_ms"][i] - base["step_ms"][i])
                part[2].append(wait_ms)
                if block_bytes is not None and block_waits is not None:
                    waited[0] += block_bytes[i]
                    waited[1] += block_waits[i]
        if not parts[True][0] and not parts[False][0]:
            continue
        mean = lambda xs: statistics.fmean(xs) if xs else None   # noqa: E731
        total = sum(parts[True][0]) + sum(parts[False][0])
        out.append({"workload": workload, "config": config, "control": control,
                    "threshold_ms": threshold_ms,
                    "wait_steps": len(parts[True][0]),
                    "wait_steps_extra_ms": mean(parts[True][0]),
                    "wait_steps_control_ms": mean(parts[True][1]),
                    "wait_steps_wait_ms": mean(parts[True][2]),
                    "other_steps": len(parts[False][0]),
                    "other_steps_extra_ms": mean(parts[False][0]),
                    "other_steps_control_ms": mean(parts[False][1]),
                    "wait_steps_share_of_extra": (sum(parts[True][0]) / total
                                                  if total > 0 else None),
                    "waited_block_mib": (waited[0] / waited[1] / 2**20
                                         if waited[1] > 0 else None)})
    return out


def worst_cases(summary, runs, workloads, configs):
    """For every ccalloc configuration: the largest mean step time ratio against
    native_expandable and the largest peak reserved / peak allocated over the
    workloads, and which workloads have no figure (failed or skipped)."""
    out = []
    for config in [c for c in configs if is_ccalloc(c)]:
        rows = {s["workload"]: s for s in summary if s["config"] == config}
        timed = [s for s in rows.values() if s["mean_vs_expandable"] is not None]
        worst_time = max(timed, key=lambda s: s["mean_vs_expandable"], default=None)
        worst_mem = max((s for s in rows.values() if s["reserved_over_allocated"] is not None),
                        key=lambda s: s["reserved_over_allocated"], default=None)
        problems = {}
        for r in runs:
            if r["config"] in (config, BASELINE) and ("error" in r or r.get("skipped")):
                problems.setdefault(r["workload"], set()).add(
                    f"{r['config']} round {r.get('round', 0) + 1} "
                    + ("skipped" if r.get("skipped") else "failed"))
        out.append({
            "config": config, "workloads": len(workloads),
            "with_time_ratio": len(timed), "with_memory_ratio": len(rows),
            "worst_time_ratio": worst_time and worst_time["mean_vs_expandable"],
            "worst_time_workload": worst_time and worst_time["workload"],
            "worst_time_ratio_max_round": worst_time and max(worst_time["mean_vs_expandable_rounds"]),
            "worst_reserved_over_allocated": worst_mem and worst_mem["reserved_over_allocated"],
            "worst_memory_workload": worst_mem and worst_mem["workload"],
            "incomplete": {w: sorted(p) for w, p in problems.items()},
            "missing_time_ratio": [w for w in workloads if w not in {s["workload"] for s in timed}],
            "missing_memory_ratio": [w for w in workloads if w not in rows
                                     or rows[w]["reserved_over_allocated"] is None],
        })
    return out


def print_heading(description, head):
    """A table's opening: a blank line, what it shows, its column heads and a rule."""
    print()
    print(description)
    print(head)
    print("-" * len(head))


def print_summary(summary, worst, rounds):
    print_heading(
        f"summary over {rounds} interleaved round(s). Step time: 'mean' is the mean over rounds "
        "of each run's mean step time after warm-up, 'min'/'max'/'sd' the spread of those "
        "per-run means, 'in-run sd' the step-to-step stdev within a run (shapes change every "
        f"step); 'vs {BASELINE}' and 'vs native' are mean / that allocator's mean over the same "
        "rounds, 'rounds' the same ratio round by round.",
        f"{'workload':11} {'allocator':18} {'n':>2} {'mean ms':>8} {'min':>8} {'max':>8} "
        f"{'sd':>6} {'in-run sd':>9} {'median':>8} {'vs expand':>9} {'rounds':>13} "
        f"{'vs native':>9}")
    for r in summary:
        rr = r["mean_vs_expandable_rounds"]
        span = f"{min(rr):.3f}..{max(rr):.3f}" if rr else "-"
        print(f"{r['workload']:11} {r['config']:18} {r['rounds']:2d} {r['mean_step_ms']:8.1f} "
              f"{r['mean_step_ms_min']:8.1f} {r['mean_step_ms_max']:8.1f} "
              f"{r['mean_step_ms_stdev']:6.2f} {r['step_stdev_ms']:9.1f} {r['median_step_ms']:8.1f} "
              f"{fmt_ratio(r['mean_vs_expandable']):>9} {span:>13} {fmt_ratio(r['mean_vs_native']):>9}")
    if any(r.get("host_adjusted_vs_expandable") is not None for r in summary):
        print_heading(
            f"host adjusted (a diagnostic; the mean above is the figure of record): step time "
            f"against {BASELINE}'s fitted over every timed step with one term per step (the "
            f"same shape in every run), one for the allocator and one for the host probe (a "
            f"~1 ms loop before each step: the host runs at one speed or at half of it, "
            f"switching every few seconds); 'err' is the fit's standard error of the log, "
            f"which understates the spread between rounds; 'elast' is step time's elasticity "
            f"to the probe",
            f"{'workload':11} {'allocator':18} {'adjusted':>9} {'err':>6} {'elast':>6} {'steps':>6}")
        for r in summary:
            if r.get("host_adjusted_vs_expandable") is None:
                continue
            print(f"{r['workload']:11} {r['config']:18} "
                  f"{fmt_ratio(r['host_adjusted_vs_expandable']):>9} "
                  f"{r['host_adjusted_log_error']:6.3f} {r['host_probe_elasticity']:6.2f} "
                  f"{r['host_adjusted_steps']:6d}")
    if any(r["mean_launch_ms"] is not None for r in summary):
        print_heading(
            "where the time goes, means over rounds: 'launch' is the host's time until the "
            "step's last launch returned, 'gpu span' the current stream's time from the "
            "step's first to its last work (idle gaps included), 'kernels' the GPU time of "
            "the kernels alone (--kernel-profile). launch near step: host bound. 'host ref' "
            "is a fixed pure-Python loop timed in each run (host_reference_ms): a round whose "
            "host ran slow shows there, whatever the allocator.",
            f"{'workload':11} {'allocator':18} {'step ms':>8} {'launch':>8} {'gpu span':>8} "
            f"{'kernels':>8} {'host ref':>8}")
        fmt = lambda v: "-" if v is None else f"{v:.1f}"
        for r in summary:
            print(f"{r['workload']:11} {r['config']:18} {r['mean_step_ms']:8.1f} "
                  f"{fmt(r['mean_launch_ms']):>8} {fmt(r['mean_gpu_span_ms']):>8} "
                  f"{fmt(r['kernel_ms_per_step']):>8} {fmt(r.get('host_ref_ms')):>8}")
    print_heading(
        "memory, worst round: peak reserved / peak allocated from torch.cuda.max_memory_reserved() "
        "/ max_memory_allocated(); 'device gap' is the largest |device memory in use - in use "
        "before the first allocation - reserved| / reserved, read together at the end of every "
        "step; 'other' is device memory no allocator holds (library kernels loaded lazily), "
        "measured after the warm-up steps, and 'gap after' the same gap with it counted",
        f"{'workload':11} {'allocator':18} {'peak alloc':>11} {'peak resv':>11} "
        f"{'resv/alloc':>10} {'device gap':>10} {'other':>10} {'gap after':>9}")
    for r in summary:
        print(f"{r['workload']:11} {r['config']:18} "
              f"{fmt_bytes(r['peak_allocated']):>11} {fmt_bytes(r['peak_reserved']):>11} "
              f"{fmt_ratio(r['reserved_over_allocated'], 4):>10} "
              f"{100 * r['device_vs_reserved_max_gap']:9.2f}% "
              f"{fmt_bytes(r['other_device_memory']):>10} "
              f"{100 * r['device_vs_reserved_max_gap_after_warmup']:8.2f}%")
    for w in worst:
        print()
        t = (f"mean step time {w['worst_time_ratio']:.3f} x {BASELINE}'s ({w['worst_time_workload']}; "
             f"worst single round {w['worst_time_ratio_max_round']:.3f})"
             if w["worst_time_ratio"] is not None else f"no step time ratio (no paired {BASELINE} runs)")
        m = (f"peak reserved / peak allocated {w['worst_reserved_over_allocated']:.4f} "
             f"({w['worst_memory_workload']})" if w["worst_reserved_over_allocated"] is not None
             else "no memory figures")
        print(f"worst case over workloads for {w['config']} ({w['with_time_ratio']} of "
              f"{w['workloads']} workloads with a time ratio): {t}; {m}")
        if w["missing_time_ratio"]:
            print(f"  no time ratio, so not in the worst case: {', '.join(w['missing_time_ratio'])}")
        if w["missing_memory_ratio"]:
            print(f"  no memory figure, so not in the worst case: "
                  f"{', '.join(w['missing_memory_ratio'])}")
        for workload, problems in w["incomplete"].items():
            print(f"  incomplete: {workload}: {', '.join(problems)}")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                epilog="Workloads: " + ", ".join(WORKLOADS) +
                                       " (see the module docstring).")
    p.add_argument("--configs", default=DEFAULT_CONFIGS,
                   help=f"comma-separated subset of {','.join(CONFIGS)}")
    p.add_argument("--workloads", default="all",
                   help=f"comma-separated subset of {','.join(WORKLOADS)}, or 'all' (default)")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--rounds", type=int, default=6,
                   help="repeat every training run this often, interleaved, the order of "
                        "the allocators turning by one a round (0: traces only)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--no-warm-shapes", dest="warm_shapes", action="store_false",
                   help="do not add a warm-up step for each shape the timed steps repeat "
                        "(see warm_every_shape)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--kernel-profile", type=int, default=0, metavar="N",
                   help="after the timed steps, run the last N timed shapes again under "
                        "torch.profiler and report the GPU time of their kernels per step "
                        "(kernel_profile in the JSON; 0: off)")
    p.add_argument("--gpt2-batch", type=int, default=16)
    p.add_argument("--resnet-batch", type=int, default=96)
    p.add_argument("--record-traces", metavar="DIR", default=None,
                   help="first record DIR/<workload>.trace.gz per workload in an untimed ccalloc "
                        "run of --trace-steps steps (CCALLOC_TRACE)")
    p.add_argument("--trace-steps", type=int, default=12)
    p.add_argument("--concurrent", action="store_true",
                   help="run each round's allocators side by side (one process each, started "
                        "together on the same GPU) instead of one after another, so that the "
                        "host's speed states fall on all of them alike; device-memory figures "
                        "then include the other processes' memory")
    p.add_argument("--lockstep", action="store_true",
                   help="like --concurrent, but the processes take turns step by step, one step "
                        "on the GPU at a time (the order alternating), so that the same step of "
                        "each allocator meets the same host state (on an H100 host its "
                        "per-step differences were noisier than sequential runs': the "
                        "processes disturb each other)")
    p.add_argument("--gpus", default=None, metavar="LIST",
                   help="with --concurrent or --lockstep: comma-separated CUDA device indexes "
                        "the side-by-side processes are spread over (CUDA_VISIBLE_DEVICES), one "
                        "each where there are as many, so that they share the host but not a "
                        "GPU's time slices; which allocator gets which GPU turns with the round "
                        "(each run records its 'gpu_slot')")
    p.add_argument("--time-budget", type=float, default=0.0, metavar="SECONDS",
                   help="start no run that would likely end after this many seconds from the "
                        "start (estimated from the longest run of that workload so far), and, "
                        "side by side, no turn of the start order that would not end in it; "
                        "skipped runs are reported. 0: no budget")
    p.add_argument("--max-batch", action="store_true", help="also search the largest batch under a cap")
    p.add_argument("--cap-gib", type=float, default=20.0)
    p.add_argument("--probe-steps", type=int, default=3)
    p.add_argument("--start-batch", type=int, default=64)
    p.add_argument("--resolution", type=int, default=8)
    p.add_argument("--max-batch-limit", type=int, default=4096)
    p.add_argument("--library", default=None, help="libccalloc_torch.so (else CCALLOC_TORCH_LIBRARY)")
    p.add_argument("--timeout", type=float, default=400.0, help="seconds per child process")
    p.add_argument("--out", default=None, help="write every result as JSON here")
    p.add_argument("--ccalloc-config", action="append", default=[], metavar="NAME=CONF",
                   help="an extra ccalloc configuration to compare (CCALLOC_CONF syntax); "
                        "repeatable, name it in --configs")
    p.add_argument("--torch-config", action="append", default=[], metavar="NAME=CONF",
                   help="an extra PyTorch allocator configuration to compare "
                        "(PYTORCH_CUDA_ALLOC_CONF syntax; 'expandable_segments:True' again "
                        "gives an A/A control); repeatable, name it in --configs")
    p.add_argument("--child", choices=("train", "max_batch"), help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    p.add_argument("--workload", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    for option, key, extras in (("--ccalloc-config", "ccalloc_conf", args.ccalloc_config),
                                ("--torch-config", "torch_conf", args.torch_config)):
        for extra in extras:
            name, sep, conf = extra.partition("=")
            if not sep or not name:
                p.error(f"{option} wants NAME=CONF, got {extra!r}")
            if name in CONFIGS and CONFIGS[name] != {key: conf}:
                p.error(f"{option}: {name!r} is already a configuration")
            CONFIGS[name] = {key: conf}
    if args.warmup >= args.steps:
        p.error("--warmup must be smaller than --steps")
    if args.gpus is not None:
        try:
            args.gpus = [int(g) for g in args.gpus.split(",") if g.strip()]
        except ValueError:
            p.error(f"--gpus wants device indexes like 0,1, got {args.gpus!r}")
        if not args.gpus or any(g < 0 for g in args.gpus):
            p.error("--gpus wants one or more device indexes (0, 1, ...)")
        if args.child is None and not (args.concurrent or args.lockstep):
            p.error("--gpus spreads side-by-side processes: it needs --concurrent or --lockstep")
    if args.trace_steps < 2:
        p.error("--trace-steps must be at least 2")
    if args.rounds < 0:
        p.error("--rounds must not be negative")
    for c in args.configs.split(","):
        if c not in CONFIGS:
            p.error(f"unknown allocator config {c!r} (known: {', '.join(CONFIGS)})")
    if args.workloads == "all":
        args.workloads = ",".join(WORKLOADS)
    for w in args.workloads.split(","):
        if w and w not in WORKLOADS:
            p.error(f"unknown workload {w!r} (known: {', '.join(WORKLOADS)}, all)")
    if args.child == "train" and args.workload not in WORKLOADS:
        p.error("--child train needs --workload")
    return args


def main(argv):
    args = parse_args(argv)
    if args.child:
        result = child_train(args) if args.child == "train" else child_max_batch(args)
        print("RESULT " + json.dumps(result), flush=True)
        return 0
    configs = args.configs.split(",")
    workloads = [w for w in args.workloads.split(",") if w]
    runs, maxb, traces = [], [], []
    t0 = time.time()
    longest = {}   # workload -> longest wall time of a run so far

    def estimate(workload):
        """How long a run of `workload` will likely take: its longest so far,
        else the longest of any, else a minute."""
        return longest.get(workload, max(longest.values(), default=60.0))

    def over_budget(workload):
        estimate_s = estimate(workload)
        if args.time_budget and time.time() - t0 + estimate_s > args.time_budget:
            print(f"  skipped: ~{estimate_s:.0f} s would pass the time budget", flush=True)
            return f"time budget {args.time_budget:.0f} s"
        return None

    def report(r):
        if "error" not in r:
            print(f"  {r['workload']} / {r['config']}: mean {r['mean_step_ms']:.1f} ms "
                  f"(median {r['median_step_ms']:.1f}, max {r['max_step_ms']:.1f}), peak allocated "
                  f"{fmt_bytes(r['peak_allocated'])}, peak reserved "
                  f"{fmt_bytes(r['peak_reserved'])} ({fmt_ratio(r['reserved_over_allocated'], 4)}), "
                  f"device peak {fmt_bytes(r['device_used_peak'])} ({r['wall_s']:.0f} s)",
                  flush=True)

    # Rounds interleave the allocators (A B C A B C ...) so that drift in the
    # GPU's clocks or a neighbour's load falls on all of them alike.
    # --concurrent runs a round's allocators side by side instead, one
    # process each, started together: the host's speed states then fall on
    # all of them at once.
    # --lockstep: side by side, one step at a time (Turns).
    side_by_side = args.concurrent or args.lockstep
    groups = [configs] if side_by_side else [[c] for c in configs]

    def run_together(group, workload, rnd):
        if len(group) == 1:
            return [run_child(args, group[0], "train", workload)]
        together = [None] * len(group)
        tmp = tempfile.TemporaryDirectory() if args.lockstep else None
        turns = Turns(group, tmp.name, args.timeout) if tmp else None

        def one(i, config):
            env = dict(turns.env[config]) if turns else {}
            slot = gpu_slot(args.gpus, i, rnd)
            if slot is not None:
                env["CUDA_VISIBLE_DEVICES"] = str(slot)
            try:
                together[i] = run_child(args, config, "train", workload, env=env or None)
                if slot is not None:
                    together[i]["gpu_slot"] = slot
            except Exception as e:   # noqa: BLE001 (a thread's error must not vanish)
                together[i] = {"config": config, "workload": workload,
                               "error": repr(e), "rc": -1, "wall_s": 0.0}
        # Started in an order that turns with the round (start_order): the
        # first process up takes the GPU's context and the host's cores
        # first, and a fixed order would give that to the same allocator in
        # every round.
        order = start_order(len(group), rnd)
        threads = [threading.Thread(target=one, args=(i, group[i])) for i in order]
        if turns:
            threads.append(threading.Thread(target=turns.run))
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if turns:
            turns.close()
            tmp.cleanup()
        # Which started first matters: a process started first has read up
        # to ~3% faster than its partners (an A/A control of
        # expandable_segments read 1.025 over 15 rounds of two streams where
        # its partner started first, 0.986 otherwise), so each run says
        # where it started (bench/pool_rounds.py balances over it).
        for position, i in enumerate(order):
            together[i]["start_position"] = position
        return together

    # Side by side the start order turns by one a round, and a process
    # started first reads faster (run_together): so a time budget begins a
    # new turn of the order only where the whole turn fits, and every
    # allocator starts in each place as often as the others.
    turn = len(configs) if side_by_side and len(configs) > 1 else 1
    for rnd in range(args.rounds):
        if turn > 1 and rnd > 0 and rnd % turn == 0 and args.time_budget:
            needed = min(turn, args.rounds - rnd) * sum(estimate(w) for w in workloads)
            if time.time() - t0 + needed > args.time_budget:
                reason = (f"time budget {args.time_budget:.0f} s: a whole turn of the start "
                          f"order ({turn} rounds, ~{needed:.0f} s) would not fit")
                print(f"  stopped: {reason}", flush=True)
                runs.extend({"config": c, "workload": w, "round": later, "skipped": reason}
                            for later in range(rnd, args.rounds) for w in workloads
                            for c in configs)
                break
        # One process at a time, the allocators' order turning by one each
        # round (start_order), so that none always runs first after another.
        ordered = [groups[i] for i in start_order(len(groups), rnd)]
        for workload in workloads:
            for group in ordered:
                print(f"[{time.time() - t0:6.0f}s] {workload} / {', '.join(group)}"
                      + (" in lockstep" if args.lockstep else
                         " side by side" if args.concurrent else "")
                      + (f" on GPUs {','.join(map(str, args.gpus))}" if args.gpus else "")
                      + (f" (round {rnd + 1}/{args.rounds})" if args.rounds > 1 else ""), flush=True)
                skip = over_budget(workload)
                if skip:
                    runs.extend({"config": c, "workload": workload, "round": rnd,
                                 "skipped": skip} for c in group)
                    continue
                for r in run_together(group, workload, rnd):
                    r["round"] = rnd
                    if side_by_side:
                        r["concurrent"] = len(group)
                    if args.lockstep:
                        r["lockstep"] = True
                    runs.append(r)
                    longest[workload] = max(longest.get(workload, 0.0), r["wall_s"])
                    report(r)
    if args.record_traces:
        # After the timed rounds, untimed: no timed run carries a recorder, and
        # a time budget cuts traces before timings.
        tracer = next((c for c in configs if is_ccalloc(c)), "ccalloc")
        for workload in workloads:
            print(f"[{time.time() - t0:6.0f}s] trace {workload} / {tracer} "
                  f"({args.trace_steps} steps)", flush=True)
            skip = over_budget(workload)
            if skip:
                traces.append({"workload": workload, "config": tracer, "skipped": skip})
                continue
            traces.append(record_trace(args, tracer, workload))
            longest[workload] = max(longest.get(workload, 0.0), traces[-1].get("wall_s") or 0.0)
    if args.max_batch:
        for config in configs:
            print(f"[{time.time() - t0:6.0f}s] max batch / {config}", flush=True)
            maxb.append(run_child(args, config, "max_batch"))
    print_table(runs, maxb, args.cap_gib)
    summary = summarize(runs)
    worst = worst_cases(summary, runs, workloads, configs)
    print_summary(summary, worst, args.rounds)
    verdict = protocol.verdict(runs)
    if verdict:
        protocol.print_verdict(verdict)
    moves = move_costs(runs)
    if moves:
        print_heading(
            f"driver calls in step time: each ccalloc step's time less {BASELINE}'s on the "
            "same step (mean over its rounds), fitted to the chunks the step mapped; "
            "'prepare', 'wait' and 'worker ms' are ccalloc's own clock per step: the "
            "launching thread in placements that mapped memory, in waits for queued work "
            "(of which 'under', 'trim', 'rel': pages under a block still mapped to moved "
            "memory, a trim beyond the marks, memory going back), the unmap worker's "
            "thread, and the unmaps the launching thread made itself ('fg unmaps', "
            "their ms within 'prepare'), as are its map calls with their access ('map ms') "
            "and its creates of new memory ('create ms'); what 'prepare' has beyond "
            "those and the waits is the cache's own bookkeeping; 'loans' and 'dev waits' "
            "are blocks lent across streams and the device-side waits that ordered them "
            "(cross_stream_reuse); 'prep med', 'prep max' and 'top 10%' say how 'prepare' "
            "falls over the steps: its median and largest step, and the share of it in the "
            "tenth of the steps that cost most",
            f"{'workload':11} {'allocator':18} {'steps':>5} {'maps/step':>9} "
            f"{'extra ms':>8} {'us/map':>7} {'extra ms, no maps':>17} {'prepare ms':>10} "
            f"{'wait ms':>7} {'under':>6} {'trim':>6} {'rel':>6} {'worker ms':>9} "
            f"{'fg unmaps':>9} {'fg ms':>6} {'map ms':>6} {'create ms':>9} "
            f"{'loans':>6} {'dev waits':>9} "
            f"{'prep med':>8} {'prep max':>8} {'top 10%':>7}")
        for m in moves:
            print(f"{m['workload']:11} {m['config']:18} {m['steps']:5d} {m['maps_per_step']:9.1f} "
                  f"{m['extra_ms_per_step']:8.2f} {m['us_per_map']:7.1f} "
                  f"{m['extra_ms_without_maps']:17.2f} {fmt_ms(m.get('prepare_ms_per_step')):>10} "
                  f"{fmt_ms(m.get('wait_ms_per_step')):>7} "
                  f"{fmt_ms(m.get('wait_under_block_ms_per_step')):>6} "
                  f"{fmt_ms(m.get('wait_trim_ms_per_step')):>6} "
                  f"{fmt_ms(m.get('wait_release_ms_per_step')):>6} "
                  f"{fmt_ms(m.get('worker_ms_per_step')):>9} "
                  f"{fmt_ms(m.get('foreground_unmaps_per_step')):>9} "
                  f"{fmt_ms(m.get('foreground_unmap_ms_per_step')):>6} "
                  f"{fmt_ms(m.get('map_ms_per_step')):>6} "
                  f"{fmt_ms(m.get('create_ms_per_step')):>9} "
                  f"{fmt_ms(m.get('loans_per_step')):>6} "
                  f"{fmt_ms(m.get('device_waits_per_step')):>9} "
                  f"{fmt_ms(m.get('prepare_ms_median_step')):>8} "
                  f"{fmt_ms(m.get('prepare_ms_max_step')):>8} "
                  f"{fmt_ratio(m.get('prepare_share_top_tenth'), 2):>7}")
    thirds = placement_thirds(runs)
    if thirds:
        print_heading(
            "ccalloc's placements by third of the timed steps (its own clock, waits "
            "included): ms a step, and the share of those steps' time; the first third "
            "holds most of the steps that reach a new peak",
            f"{'workload':11} {'allocator':18} {'first ms':>8} {'middle ms':>9} "
            f"{'last ms':>7} {'first %':>7} {'middle %':>8} {'last %':>6}")
        for t in thirds:
            ms, share = t["prepare_ms_per_step"], t["share_of_step"]
            print(f"{t['workload']:11} {t['config']:18} {ms[0]:8.2f} {ms[1]:9.2f} {ms[2]:7.2f} "
                  + " ".join(f"{100 * x:{w}.1f}" for x, w in zip(share, (7, 8, 6))))
    waits = wait_steps(runs)
    if waits:
        print_heading(
            f"where ccalloc's extra time sits: each step against {BASELINE}'s same step of the "
            "same round, split by whether ccalloc waited for queued work in it (at least "
            "1 ms: a drain of the GPU's queue); 'control' is the A/A configuration "
            "(--torch-config) on the same steps, 'wait ms' ccalloc's waits in those steps, "
            "'share' the part of its extra time that the waiting steps hold, 'block MiB' the "
            "mean size of the blocks that waited for pages under them",
            f"{'workload':11} {'allocator':18} {'wait steps':>10} {'ms more':>8} {'control':>8} "
            f"{'wait ms':>8} {'other steps':>11} {'ms more':>8} {'control':>8} {'share':>6} "
            f"{'block MiB':>9}")
        opt = lambda x, f: "-" if x is None else format(x, f)   # noqa: E731
        for w in waits:
            print(f"{w['workload']:11} {w['config']:18} {w['wait_steps']:10d} "
                  f"{opt(w['wait_steps_extra_ms'], '8.1f'):>8} "
                  f"{opt(w['wait_steps_control_ms'], '8.1f'):>8} "
                  f"{opt(w['wait_steps_wait_ms'], '8.1f'):>8} {w['other_steps']:11d} "
                  f"{opt(w['other_steps_extra_ms'], '8.1f'):>8} "
                  f"{opt(w['other_steps_control_ms'], '8.1f'):>8} "
                  f"{opt(w['wait_steps_share_of_extra'], '6.2f'):>6} "
                  f"{opt(w.get('waited_block_mib'), '9.1f'):>9}")
    if traces:
        print()
        for t in traces:
            if t.get("skipped"):
                what = f"skipped: {t['skipped']}"
            elif "path" not in t:
                what = f"failed: {t['error'].splitlines()[-1][:60]}"
            else:
                what = f"{t['path']} ({t['events']} events, {t['bytes'] / 1024:.0f} KiB)"
                if "error" in t:
                    what += f", but the run failed: {t['error'].splitlines()[-1][:60]}"
            print(f"trace {t['workload']}: {what}")
    print(f"\ntotal {time.time() - t0:.0f} s")
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"args": vars(args), "runs": runs, "max_batch": maxb, "summary": summary,
                       "verdict": verdict,
                       "worst_case": worst, "move_costs": moves,
                       "placement_thirds": thirds, "wait_steps": waits,
                       "traces": traces}, f, indent=1)
        print(f"wrote {args.out}")
    failed = [r for r in runs + maxb + traces if "error" in r]
    skipped = [r for r in runs + traces if r.get("skipped")]
    if failed or skipped:
        print(f"incomplete: {len(failed)} run(s) failed, {len(skipped)} skipped")
    return 1 if failed or skipped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
