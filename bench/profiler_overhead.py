"""The memory profiler's overhead, what a user pays for it: one process, one
model at a time, blocks of profiled steps alternating with blocks of plain
steps (no profiler attached: its hooks and wrappers removed, as for a user
who never made one).

    python3 bench/profiler_overhead.py --out overhead.json            # CUDA, ccalloc enabled
    python3 bench/profiler_overhead.py --device cpu --tiny            # host smoke test

Per model, after a warm-up of both kinds: --blocks pairs of blocks of
--steps steps, the order turning each pair (plain first in even pairs), a
full garbage collection before each block (untimed, so that one owed from
before lands in neither kind), torch.cuda.synchronize() at each block's
edges. A profiled block attaches a new profiler (ct.profile(model,
optimizer), the defaults unless --profile says otherwise), runs the steps
it always accounts untimed (the first three: the first looks every known
tensor up, attaching's cost, and a long run pays them once), then the timed
steps, so that a block of --steps 10 holds one accounted step in ten, as a
long run with the default sample_every does; reading its samples (which the
profiler defers from the boundaries to then) is timed too. Reported per
model:

  plain ms/step       the plain blocks' mean step time
  overhead %          the mean over pairs of profiled/plain - 1, with a 95%
                      interval (Student's t over the pairs)
  boundary us/step    the profiler's own time at its phase boundaries
                      (prof.host_seconds; on --device cpu this and the step
                      time less what the simulated device's block mallocs
                      cost, which a GPU does not pay), per step; the JSON's
                      boundary_us_per_sampled_step is the same per accounted
                      step, and derive_us_per_sampled_step what deriving an
                      accounted step's samples for the report costs
  us/module call      the host time a forward takes inside a profiled step
                      (module tags set) less the same forward with no
                      profiler, per module call: --calls-rounds alternating
                      rounds of one synchronized forward each way under
                      no_grad, the boundaries' own time taken out
  module calls/step   submodule calls in one forward (the model itself not
                      counted); modules: model.modules()
  gc per 100 steps    garbage collections (full ones) started in the timed
                      steps of each kind (JSON): a full one takes tens of ms
                      in a process with torch loaded, and what the profiler
                      allocates brings them sooner

Each model's last profiled block is checked: the kinds add up to allocated
at every boundary (prof.problems(); on CUDA also against
torch.cuda.memory_allocated(), in one more untimed step). Models:

  deep     64 residual blocks of LayerNorm, Linear, GELU, Linear (323
           modules), AdamW: many small modules
  moe      a top-1-routed mixture of experts (8 experts a layer, 4 layers,
           self-attention, a router), Adam: steps under 20 ms on an H200,
           a host synchronization per layer (the routing's nonzero)
  conv     a ResNet-style conv net (BatchNorm, ReLU, 4 stages), SGD with
           momentum
  lm       a GPT-style decoder LM (6 layers, causal attention), AdamW
  seq2seq  a GRU encoder, a GRU-cell decoder with attention run once per
           target token (hundreds of module calls a step), Adam
  unet     a conv UNet (four levels, GroupNorm, SiLU, transposed convs,
           skips concatenated), Adam: no host synchronization in a step
  rnn      an LSTM language model (3 cuDNN LSTM layers, 1024 wide, 256
           tokens, a linear head), Adam: a recurrent model whose step is
           the GPU's (a few large kernels, few module calls), so the host's
           speed changes reach its step time least

--device cpu runs the models on the CPU with the profiler reading the
plugin's simulated device (CCALLOC_TORCH_SIMULATE; bench/profiler_boundary.py's
SimView): CPU timings, useful for relative costs, not the GPU's figures.
"""

import argparse
import gc
import json
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


# --- models ----------------------------------------------------------------------------
# Each maker returns (model, optimizer, batch); batch is (inputs, target) on
# the device, the same every step (the profiler's cost does not depend on
# the values). `tiny` shrinks widths and lengths, never the module counts.

def _deep(torch, dev, tiny):
    nn = torch.nn
    d, rows = (16, 8) if tiny else (512, 4096)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.up = nn.Linear(d, 2 * d)
            self.act = nn.GELU()
            self.down = nn.Linear(2 * d, d)

        def forward(self, x):
            return x + self.down(self.act(self.up(self.norm(x))))

    model = nn.Sequential(*[Block() for _ in range(64)], nn.LayerNorm(d), nn.Linear(d, d)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(rows, d, device=dev)
    return model, opt, (x, torch.randn(rows, d, device=dev)), torch.nn.functional.mse_loss


def _moe(torch, dev, tiny):
    nn = torch.nn
    d, heads, vocab, batch, seq = (16, 2, 64, 2, 8) if tiny else (512, 8, 8192, 16, 256)

    class Expert(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(d, 4 * d)
            self.act = nn.GELU()
            self.proj = nn.Linear(4 * d, d)

        def forward(self, x):
            return self.proj(self.act(self.fc(x)))

    class MoE(nn.Module):
        """Top-1 routing: each token goes to its router's best expert,
        scaled by that expert's softmax weight."""

        def __init__(self, experts=8):
            super().__init__()
            self.router = nn.Linear(d, experts)
            self.experts = nn.ModuleList(Expert() for _ in range(experts))

        def forward(self, x):
            flat = x.reshape(-1, d)
            gate, choice = self.router(flat).softmax(-1).max(-1)
            out = torch.zeros_like(flat)
            for e, expert in enumerate(self.experts):
                idx = (choice == e).nonzero().squeeze(1)      # a host synchronization
                if idx.numel():
                    out = out.index_add(0, idx, expert(flat[idx]) * gate[idx, None])
            return out.reshape(x.shape)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1 = nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.norm2 = nn.LayerNorm(d)
            self.moe = MoE()

        def forward(self, x):
            h = self.norm1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.moe(self.norm2(x))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.layers = nn.Sequential(*[Layer() for _ in range(4)])
            self.norm = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, tokens):
            return self.head(self.norm(self.layers(self.embed(tokens)))).flatten(0, 1)

    model = Model().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, vocab, (batch, seq), device=dev)
    return model, opt, (tokens, torch.randint(0, vocab, (batch * seq,), device=dev)), \
        torch.nn.functional.cross_entropy


def _conv(torch, dev, tiny):
    nn = torch.nn
    base, batch, side = (4, 2, 16) if tiny else (64, 64, 64)

    class Basic(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                         if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            return self.relu(self.bn2(self.conv2(y)) + self.skip(x))

    layers = [nn.Conv2d(3, base, 3, 1, 1, bias=False), nn.BatchNorm2d(base), nn.ReLU()]
    c = base
    for i, w in enumerate((1, 2, 4, 8)):
        layers += [Basic(c, base * w, 1 if i == 0 else 2), Basic(base * w, base * w, 1)]
        c = base * w
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(c, 100)]
    model = nn.Sequential(*layers).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, side, side, device=dev)
    return model, opt, (x, torch.randint(0, 100, (batch,), device=dev)), torch.nn.functional.cross_entropy


def _lm(torch, dev, tiny):
    nn = torch.nn
    F = torch.nn.functional
    d, heads, layers, vocab, batch, seq = (16, 2, 6, 64, 2, 8) if tiny else (512, 8, 6, 8192, 16, 512)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = self.qkv(x).view(b, t, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            if hasattr(F, "scaled_dot_product_attention"):
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:  # PyTorch < 2.0
                mask = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
                att = (q @ k.transpose(-1, -2) / math.sqrt(d // heads)).masked_fill(mask, float("-inf"))
                y = att.softmax(-1) @ v
            return self.proj(y.transpose(1, 2).reshape(b, t, d))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.attn = Attention()
            self.ln2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.mlp(self.ln2(x))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(seq, d)
            self.blocks = nn.Sequential(*[Block() for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab, bias=False)

        def forward(self, tokens):
            pos = torch.arange(tokens.shape[1], device=tokens.device)
            return self.head(self.ln(self.blocks(self.tok(tokens) + self.pos(pos)))).flatten(0, 1)

    model = LM().to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, vocab, (batch, seq), device=dev)
    return model, opt, (tokens, torch.randint(0, vocab, (batch * seq,), device=dev)), F.cross_entropy


def _seq2seq(torch, dev, tiny):
    nn = torch.nn
    h, vocab, batch, src, tgt = (16, 64, 2, 8, 8) if tiny else (512, 8192, 32, 64, 32)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.query = nn.Linear(h, h, bias=False)
            self.combine = nn.Linear(2 * h, h)

        def forward(self, dec, enc):
            scores = torch.bmm(enc, self.query(dec)[:, :, None])[:, :, 0]
            ctx = torch.bmm(scores.softmax(-1)[:, None, :], enc)[:, 0]
            return torch.tanh(self.combine(torch.cat([dec, ctx], -1)))

    class Seq2Seq(nn.Module):
        def __init__(self):
            super().__init__()
            self.src_embed = nn.Embedding(vocab, h)
            self.encoder = nn.GRU(h, h, batch_first=True)
            self.tgt_embed = nn.Embedding(vocab, h)
            self.cell = nn.GRUCell(h, h)
            self.attention = Attention()
            self.out = nn.Linear(h, vocab)

        def forward(self, src_tokens, tgt_tokens):
            enc, last = self.encoder(self.src_embed(src_tokens))
            state = last[0]
            emb = self.tgt_embed(tgt_tokens)
            logits = []
            for t in range(tgt_tokens.shape[1]):    # teacher forcing, a step per token
                state = self.cell(emb[:, t], state)
                logits.append(self.out(self.attention(state, enc)))
            return torch.stack(logits, 1).flatten(0, 1)

    model = Seq2Seq().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    s = torch.randint(0, vocab, (batch, src), device=dev)
    t = torch.randint(0, vocab, (batch, tgt), device=dev)
    return model, opt, ((s, t), torch.randint(0, vocab, (batch * tgt,), device=dev)), \
        torch.nn.functional.cross_entropy


def _unet(torch, dev, tiny):
    nn = torch.nn
    base, batch, side = (4, 2, 16) if tiny else (32, 16, 128)

    def block(cin, cout):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, 1, 1), nn.GroupNorm(4, cout), nn.SiLU(),
                             nn.Conv2d(cout, cout, 3, 1, 1), nn.GroupNorm(4, cout), nn.SiLU())

    class UNet(nn.Module):
        # Encoder and decoder of four levels, skip connections concatenated
        # on the way up: activations of every level live until the decoder.
        def __init__(self):
            super().__init__()
            widths = [base * m for m in (1, 2, 4, 8)]
            self.down = nn.ModuleList()
            c = 3
            for w in widths:
                self.down.append(block(c, w))
                c = w
            self.pool = nn.MaxPool2d(2)
            self.mid = block(c, 2 * c)
            c *= 2
            self.up = nn.ModuleList()
            self.fuse = nn.ModuleList()
            for w in reversed(widths):
                self.up.append(nn.ConvTranspose2d(c, w, 2, 2))
                self.fuse.append(block(2 * w, w))
                c = w
            self.head = nn.Conv2d(c, 3, 1)

        def forward(self, x):
            skips = []
            for d in self.down:
                x = d(x)
                skips.append(x)
                x = self.pool(x)
            x = self.mid(x)
            for up, fuse in zip(self.up, self.fuse):
                x = fuse(torch.cat([up(x), skips.pop()], dim=1))
            return self.head(x)

    model = UNet().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(batch, 3, side, side, device=dev)
    return model, opt, (x, torch.randn(batch, 3, side, side, device=dev)), torch.nn.functional.mse_loss


def _rnn(torch, dev, tiny):
    nn = torch.nn
    h, vocab, batch, seq = (16, 64, 2, 8) if tiny else (1024, 8192, 32, 256)

    class LstmLM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, h)
            self.lstm = nn.LSTM(h, h, num_layers=3, batch_first=True, dropout=0.1)
            self.head = nn.Linear(h, vocab)

        def forward(self, tokens):
            out, _ = self.lstm(self.embed(tokens))
            return self.head(out).flatten(0, 1)

    model = LstmLM().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    tokens = torch.randint(0, vocab, (batch, seq), device=dev)
    return model, opt, (tokens, torch.randint(0, vocab, (batch * seq,), device=dev)), \
        torch.nn.functional.cross_entropy


MODELS = {"deep": _deep, "moe": _moe, "conv": _conv, "lm": _lm, "seq2seq": _seq2seq, "unet": _unet,
          "rnn": _rnn}


# --- measuring -----------------------------------------------------------------------

# Student's t, two-sided 95%, by degrees of freedom (1.96 past the table).
_T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]


def mean_ci(values):
    """(mean, half width of its 95% interval) of values (Student's t)."""
    n = len(values)
    m = sum(values) / n
    if n < 2:
        return m, float("nan")
    sd = math.sqrt(sum((v - m) ** 2 for v in values) / (n - 1))
    return m, (_T95[n - 2] if n - 1 <= len(_T95) else 1.96) * sd / math.sqrt(n)


class Bench:
    def __init__(self, torch, args):
        self.torch, self.args = torch, args
        self.cuda = args.device == "cuda"
        self.dev = torch.device(args.device)
        self.profile_kwargs = dict(_kv(x) for x in args.profile)
        # ccalloc's driver calls on the allocating thread, read around each
        # timed block (CUDA with ccalloc enabled only): a time is reported
        # with the driver work beside it.
        self.driver_calls = None
        if self.cuda:
            import ccalloc.torch as ct
            self.driver_calls = lambda: ct.ccalloc_counters().get("driver_calls", 0)

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def profiler(self, model, opt, **kwargs):
        kwargs = dict(self.profile_kwargs, **kwargs)
        if self.cuda:
            import ccalloc.torch as ct
            return ct.profile(model, opt, **kwargs)
        from ccalloc.profiler import MemoryProfiler
        from profiler_boundary import SimView
        import ccalloc
        return MemoryProfiler(model, opt, view=SimView(ccalloc.load_library()), **kwargs)

    def model(self, name):
        self.torch.manual_seed(0)
        model, opt, (x, y), loss_fn = MODELS[name](self.torch, self.dev, self.args.tiny)
        args = x if isinstance(x, tuple) else (x,)

        def step():
            loss_fn(model(*args), y).backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        return model, opt, args, step

    def block(self, step, n, prof=None, clock=None):
        """Mean seconds per step of n steps (synchronized at both edges),
        and the profiler's boundary seconds per step."""
        gc.collect()
        if prof is not None:
            # The steps accounted whatever sample_every says: the first
            # looks every known tensor up (attaching's cost); a long run
            # pays them once.
            from ccalloc.profiler import _FIRST_STEPS
            for _ in range(_FIRST_STEPS):
                with prof.step():
                    step()
            # Their samples are derived here, untimed too: a long run derives
            # them once, and left for the timed read below they would charge
            # a block of 10 steps four accounted steps' derivation, not one.
            len(prof.samples)
            h0 = prof.host_seconds
            first_timed = prof.step_index + 1
            by0 = dict(prof.host_seconds_by_boundary)
            sim0 = _sim_seconds(prof)
        self.sync()
        if clock is not None:
            clock.mode = "plain" if prof is None else "profiled"
        calls0 = self.driver_calls() if self.driver_calls is not None else 0
        t0 = time.perf_counter()
        if prof is None:
            for _ in range(n):
                step()
        else:
            for _ in range(n):
                with prof.step():
                    step()
            d0 = time.perf_counter()
            len(prof.samples)      # what the timed boundaries left for the report
            self.derive_seconds += time.perf_counter() - d0
        self.sync()
        dt = (time.perf_counter() - t0) / n
        if self.driver_calls is not None:
            self.calls["plain" if prof is None else "profiled"] += self.driver_calls() - calls0
        if clock is not None:
            clock.mode = None
        if prof is None:
            return dt, 0.0
        # On the CPU the simulated device's block mallocs (a new CPU pointer
        # each) are the bench's, not the profiler's: out of both figures.
        sim = (_sim_seconds(prof) - sim0) / n
        for k, v in prof.host_seconds_by_boundary.items():
            self.by_boundary[k] = self.by_boundary.get(k, 0.0) + v - by0.get(k, 0.0)
        self.sampled_steps += sum(map(prof.sampled, range(first_timed, prof.step_index + 1)))
        return dt - sim, (prof.host_seconds - h0) / n - sim

    def call_cost(self, model, opt, args, calls, rounds):
        """us per module call that module tags add to a forward in a step
        (see the module's docstring), with its 95% interval."""
        torch = self.torch
        diffs = []
        prof = self.profiler(model, opt)
        try:
            with torch.no_grad():
                for _ in range(2):                 # warm both paths
                    model(*args)
                    with prof.step():
                        model(*args)
                for r in range(rounds):
                    t = {}
                    for kind in (("plain", "tags") if r % 2 == 0 else ("tags", "plain")):
                        self.sync()
                        if kind == "plain":
                            t0 = time.perf_counter()
                            model(*args)
                            t[kind] = time.perf_counter() - t0
                        else:
                            with prof.step():
                                h0 = prof.host_seconds
                                t0 = time.perf_counter()
                                model(*args)
                                t[kind] = time.perf_counter() - t0 - (prof.host_seconds - h0)
                        self.sync()
                    diffs.append((t["tags"] - t["plain"]) / calls * 1e6)
        finally:
            _close(prof)
        return mean_ci(diffs)

    def run(self, name):
        a, torch = self.args, self.torch
        model, opt, args, step = self.model(name)
        calls = module_calls(torch, model, args)
        for _ in range(a.warmup):
            step()
        prof = self.profiler(model, opt)
        try:
            for _ in range(a.warmup):
                with prof.step():
                    step()
        finally:
            _close(prof)
        from gc_clock import GcClock
        plain, profiled, boundary, boundaries, problems = [], [], [], 0, []
        # Per model, what block() adds up: driver calls by kind of block, and
        # the profiled blocks' boundary seconds by the phase each opens.
        self.calls = {"plain": 0, "profiled": 0}
        self.by_boundary = {}
        self.sampled_steps = 0
        self.derive_seconds = 0.0
        clock = GcClock()
        for pair in range(a.blocks):
            for kind in (("plain", "profiled") if pair % 2 == 0 else ("profiled", "plain")):
                if kind == "plain":
                    plain.append(self.block(step, a.steps, clock=clock)[0])
                    continue
                prof = self.profiler(model, opt)
                try:
                    dt, host = self.block(step, a.steps, prof, clock)
                finally:
                    _close(prof)
                profiled.append(dt)
                boundary.append(host)
                # Boundaries per accounted step (the untimed first steps too).
                boundaries = prof.boundaries / max(1, sum(map(prof.sampled, range(1, prof.step_index + 1))))
                problems = prof.problems()
        clock.close()
        if self.cuda:           # one more step, each boundary checked against PyTorch's count
            prof = self.profiler(model, opt, check_torch=True)
            try:
                with prof.step():
                    step()
            finally:
                _close(prof)
            problems += prof.problems()
        ratio, ratio_ci = mean_ci([p / q for p, q in zip(profiled, plain)])
        call_us, call_ci = self.call_cost(model, opt, args, calls, a.calls_rounds)
        plain_ms = sum(plain) / len(plain) * 1e3
        return {
            "model": name, "modules": sum(1 for _ in model.modules()),
            "parameters": sum(p.numel() for p in model.parameters()),
            "module_calls_per_step": calls, "optimizer": type(opt).__name__,
            "plain_ms": plain_ms, "profiled_ms": sum(profiled) / len(profiled) * 1e3,
            "overhead_pct": (ratio - 1) * 100, "overhead_ci95_pct": ratio_ci * 100,
            "pairs": len(plain), "steps_per_block": a.steps,
            "boundary_us_per_step": sum(boundary) / len(boundary) * 1e6,
            "sampled_steps_per_block": self.sampled_steps / a.blocks,
            "boundary_us_per_sampled_step": (sum(boundary) * a.steps / max(1, self.sampled_steps) * 1e6),
            "boundaries_per_step": boundaries,
            # Deriving the timed steps' samples for the report (prof.samples),
            # which the boundaries defer: part of the profiled step time, per
            # accounted step.
            "derive_us_per_sampled_step": self.derive_seconds / max(1, self.sampled_steps) * 1e6,
            # Where the boundary time goes, by the phase each boundary opens
            # ("end": the step's last), us a step (the simulated device's
            # block mallocs included on --device cpu).
            "boundary_us_by_opening": {k: v / (a.blocks * a.steps) * 1e6
                                       for k, v in sorted(self.by_boundary.items())},
            "module_call_us": call_us, "module_call_ci95_us": call_ci,
            "driver_calls_per_step": ({k: v / (a.blocks * a.steps) for k, v in self.calls.items()}
                                      if self.driver_calls is not None else None),
            "gc_per_100_steps": {k: 100 * clock.count.get(k, 0) / (a.blocks * a.steps)
                                 for k in ("plain", "profiled")},
            "full_gc_per_100_steps": {k: 100 * clock.full.get(k, 0) / (a.blocks * a.steps)
                                      for k in ("plain", "profiled")},
            "problems": [list(p) for p in problems],
            "plain_block_ms": [t * 1e3 for t in plain], "profiled_block_ms": [t * 1e3 for t in profiled],
        }


def module_calls(torch, model, args):
    """Submodule calls in one forward of model (the model itself not counted)."""
    n = [0]
    h = torch.nn.modules.module.register_module_forward_pre_hook(lambda m, a: n.__setitem__(0, n[0] + 1))
    try:
        with torch.no_grad():
            model(*args)
    finally:
        h.remove()
    return n[0] - 1


def _sim_seconds(prof):
    return getattr(prof.view, "sim_seconds", 0.0)


def _close(prof):
    """prof.close(), failing loudly if anything of it stays attached: a
    plain block after it would pay for the profiler."""
    prof.close()
    left = prof.leftovers()
    if left:
        raise RuntimeError(f"profiler still attached after close(): {', '.join(left)}")
    sim = getattr(prof.view, "sim", None)
    if sim is not None:
        # The simulated blocks a CPU run's profiler made (one per CPU pointer
        # it saw): freed, so that the simulated device does not fill up and
        # slow later blocks' lookups.
        from profiler_boundary import DEV
        for ptr in sim.values():
            sim.plugin.free(ptr, DEV)
        sim.clear()


def _kv(text):
    key, _, value = text.partition("=")
    if value.isdigit():
        return key, int(value)       # sample_every=1
    return key, {"True": True, "False": False}.get(value, value)


def table(results):
    head = (f"{'model':<8} {'modules':>7} {'calls/step':>10} {'plain ms/step':>13} {'overhead %':>16} "
            f"{'boundary us/step':>16} {'us/module call':>15} "
            f"{'full gc/100 steps':>17} {'driver calls/step':>19}")
    lines = [head]
    for r in results:
        over = f"{r['overhead_pct']:+.2f} ± {r['overhead_ci95_pct']:.2f}"
        call = f"{r['module_call_us']:.2f} ± {r['module_call_ci95_us']:.2f}"
        full = r["full_gc_per_100_steps"]
        gcs = f"{full['plain']:.0f} plain, {full['profiled']:.0f} prof."
        dc = r.get("driver_calls_per_step")
        calls = f"{dc['plain']:.1f} plain, {dc['profiled']:.1f} prof." if dc else "-"
        lines.append(f"{r['model']:<8} {r['modules']:>7} {r['module_calls_per_step']:>10} "
                     f"{r['plain_ms']:>13.2f} {over:>16} {r['boundary_us_per_step']:>16.0f} {call:>15} "
                     f"{gcs:>17} {calls:>19}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated: " + ", ".join(MODELS))
    ap.add_argument("--blocks", type=int, default=12, help="pairs of blocks (profiled, plain)")
    ap.add_argument("--steps", type=int, default=10, help="timed steps per block")
    # 15: with 5 the deep stack's first pairs still read 1.07-1.11 on an H200 (docs/profiler.md).
    ap.add_argument("--warmup", type=int, default=15, help="steps of each kind before the blocks")
    ap.add_argument("--calls-rounds", type=int, default=30, help="rounds of the per-module-call measurement")
    ap.add_argument("--tiny", action="store_true", help="small widths and lengths (same module counts)")
    ap.add_argument("--profile", action="append", default=[], metavar="KEY=VALUE",
                    help="a keyword of ct.profile (module_tags=False, exact_saved=True); repeatable")
    ap.add_argument("--out", help="write the results as JSON here")
    a = ap.parse_args(argv)
    if a.device == "cpu":
        os.environ.setdefault("CCALLOC_TORCH_SIMULATE", str(4 << 30))
    else:  # the profiler reads ccalloc's own counters and tags
        import ccalloc.torch as ct
        ct.enable()
    import torch
    bench = Bench(torch, a)
    meta = {"torch": torch.__version__, "device": a.device, "argv": sys.argv[1:],
            "gpu": torch.cuda.get_device_name() if a.device == "cuda" else None,
            "profile_kwargs": bench.profile_kwargs}
    results = []
    for name in a.models.split(","):
        r = bench.run(name)
        results.append(r)
        print(table([r]).splitlines()[-1] if len(results) > 1 else table([r]), flush=True)
        for p in r["problems"]:
            print(f"  {name}: PROBLEM step {p[0]} {p[1]}: {p[2]}")
    print()
    print(f"torch {meta['torch']}, {meta['gpu'] or a.device}; {a.blocks} pairs of {a.steps}-step blocks; "
          f"overhead: mean of per-pair ratios, ± its 95% interval")
    print(table(results))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"meta": meta, "models": results}, f, indent=1)
    return 1 if any(r["problems"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
