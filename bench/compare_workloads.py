"""The training workloads of bench/compare_training.py: the models, their
optimisers and the step shapes each draws, and the step plan that warms the
shapes the timed steps repeat.

A workload is BUILDERS[name](torch, args, rng) -> (step, shapes): step(shape)
trains one step and returns its loss, and `shapes` is the whole run's sequence,
drawn from `rng` up front so that every allocator and round sees the same one.
The seven here are the ones the bundled traces come from; the four of
bench/workload_families.py join them in BUILDERS. compare_training.py's
docstring describes each.
"""

import math
import os
import sys

BENCH = os.path.dirname(os.path.abspath(__file__))
if BENCH not in sys.path:   # the siblings below, however this module was reached
    sys.path.insert(0, BENCH)
import workload_families  # noqa: E402

WORKLOADS = ("gpt2", "resnet50", "seq2seq", "unet", "vit", "ckpt_lm", "two_streams",
             "gnn", "moe", "hf_trainer", "generate")
# The device the workloads run on; only a host-side smoke test changes it
# (here: compare_training.DEVICE is a copy of it).
DEVICE = "cuda"


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
