"""More training and inference families for bench/compare_training.py.

compare_training.py's own seven families are the ones the bundled traces come
from; these four add the shapes its users reported as slow or loose
(issue "Free, the way users run it"): sizes drawn per step from wide ranges,
so the allocator meets a new layout every step.

  gnn          a 3-layer GraphSAGE-style network in plain PyTorch (mean
               aggregation with index_add_, no torch_geometric), Adam, fp32
               with TF32, a random graph per step: 5k..60k nodes, 4..16 edges a
               node, 256-wide features, node classification.
  moe          a 6-layer decoder with top-1-routed mixture-of-experts MLPs (8
               experts, 768 wide, 4x hidden), AdamW, bf16 autocast, batch 8,
               sequence 128..1024: every expert's token count changes every
               step (gathers, per-expert matmuls, scatters back).
  hf_trainer   GPT-2 small (transformers GPT2Config, random weights) trained
               through transformers' Trainer: its training_step (accelerate's
               autocast and backward), its AdamW and scheduler, batch 8,
               sequence 64..512.
  generate     inference: GPT-2 small's generate() with its KV cache growing
               token by token, greedy, batch 8, prompts of 16..512 tokens,
               32..128 new tokens; no optimizer.

Each builder takes (torch, args, rng) and returns (step, shapes) as
compare_training's do: step(shape) runs one step and returns a tensor (the
loss, or the generated ids), shapes are drawn from `rng` up front so every
allocator and round sees the same sequence.
"""

DEVICE = "cuda"


def gnn(torch, args, rng):
    nn, F = torch.nn, torch.nn.functional
    features, hidden, classes = 256, 256, 32
    torch.backends.cuda.matmul.allow_tf32 = True

    class Sage(nn.Module):
        def __init__(self, cin, cout):
            super().__init__()
            self.self_lin = nn.Linear(cin, cout)
            self.neigh_lin = nn.Linear(cin, cout)

        def forward(self, x, src, dst, inv_deg):
            agg = torch.zeros_like(x).index_add_(0, dst, x.index_select(0, src))
            return self.self_lin(x) + self.neigh_lin(agg * inv_deg)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Sage(features, hidden), Sage(hidden, hidden),
                                         Sage(hidden, hidden)])
            self.norms = nn.ModuleList([nn.LayerNorm(hidden) for _ in range(3)])
            self.head = nn.Linear(hidden, classes)

        def forward(self, x, src, dst, inv_deg):
            for layer, norm in zip(self.layers, self.norms):
                x = F.gelu(norm(layer(x, src, dst, inv_deg)))
            return self.head(x)

    model = Net().to(DEVICE).train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)

    def step(shape):
        nodes, degree = shape
        edges = nodes * degree
        x = torch.randn(nodes, features, device=DEVICE, generator=gen)
        src = torch.randint(0, nodes, (edges,), device=DEVICE, generator=gen)
        dst = torch.randint(0, nodes, (edges,), device=DEVICE, generator=gen)
        deg = torch.zeros(nodes, device=DEVICE).index_add_(
            0, dst, torch.ones(edges, device=DEVICE))
        inv_deg = (1.0 / deg.clamp(min=1)).unsqueeze(1)
        y = torch.randint(0, classes, (nodes,), device=DEVICE, generator=gen)
        loss = F.cross_entropy(model(x, src, dst, inv_deg), y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, [(rng.randint(5_000, 60_000), rng.randint(4, 16)) for _ in range(args.steps)]


def moe(torch, args, rng):
    nn, F = torch.nn, torch.nn.functional
    vocab, d, heads, layers, experts, batch, max_len = 32000, 768, 12, 6, 8, 8, 1024

    class MoE(nn.Module):
        def __init__(self):
            super().__init__()
            self.router = nn.Linear(d, experts)
            self.up = nn.ModuleList([nn.Linear(d, 4 * d) for _ in range(experts)])
            self.down = nn.ModuleList([nn.Linear(4 * d, d) for _ in range(experts)])

        def forward(self, x):
            flat = x.reshape(-1, d)
            gate = F.softmax(self.router(flat), dim=-1)
            weight, choice = gate.max(dim=-1)
            out = torch.zeros_like(flat)
            for e in range(experts):
                idx = (choice == e).nonzero(as_tuple=True)[0]
                if idx.numel() == 0:
                    continue
                h = self.down[e](F.gelu(self.up[e](flat.index_select(0, idx))))
                out.index_add_(0, idx, h * weight.index_select(0, idx).unsqueeze(1))
            return out.reshape_as(x)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.moe = MoE()

        def forward(self, x, mask):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
            return x + self.moe(self.ln2(x))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.pos = nn.Embedding(max_len, d)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln = nn.LayerNorm(d)

        def forward(self, ids):
            n = ids.shape[1]
            mask = torch.full((n, n), float("-inf"), device=ids.device).triu(1)
            x = self.emb(ids) + self.pos(torch.arange(n, device=ids.device))
            for block in self.blocks:
                x = block(x, mask)
            return self.ln(x) @ self.emb.weight.t()

    model = LM().to(DEVICE).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)

    def step(seq):
        ids = torch.randint(0, vocab, (batch, seq), device=DEVICE, generator=gen)
        with torch.autocast(DEVICE, dtype=torch.bfloat16):
            logits = model(ids)
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, vocab).float(),
                                   ids[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()
    return step, [rng.randint(128, max_len) for _ in range(args.steps)]


def _gpt2_small(torch):
    from transformers import GPT2Config, GPT2LMHeadModel
    config = GPT2Config(n_layer=12, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
    return config, GPT2LMHeadModel(config).to(DEVICE)


def hf_trainer(torch, args, rng):
    import tempfile
    from transformers import Trainer, TrainingArguments
    config, model = _gpt2_small(torch)
    batch = 8
    out = tempfile.mkdtemp(prefix="ccalloc_trainer_")
    targs = TrainingArguments(output_dir=out, per_device_train_batch_size=batch, bf16=True,
                              learning_rate=1e-4, max_steps=args.steps + 16,
                              report_to=[], logging_strategy="no", save_strategy="no",
                              dataloader_pin_memory=False, seed=args.seed)
    trainer = Trainer(model=model, args=targs)
    trainer.create_optimizer_and_scheduler(num_training_steps=targs.max_steps)
    # What Trainer.train() sets before its first training_step (no
    # accumulation here: one batch is one optimizer step).
    trainer.current_gradient_accumulation_steps = 1
    model.train()
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)

    def step(seq):
        ids = torch.randint(0, config.vocab_size, (batch, seq), device=DEVICE, generator=gen)
        loss = trainer.training_step(model, {"input_ids": ids, "labels": ids})
        trainer.optimizer.step()
        trainer.lr_scheduler.step()
        model.zero_grad(set_to_none=True)
        return loss.detach()
    return step, [rng.randint(64, 512) for _ in range(args.steps)]


def generate(torch, args, rng):
    config, model = _gpt2_small(torch)
    model.eval()
    config.pad_token_id = config.eos_token_id
    batch = 8
    gen = torch.Generator(device=DEVICE).manual_seed(args.seed)

    def step(shape):
        prompt, new = shape
        ids = torch.randint(0, config.vocab_size, (batch, prompt), device=DEVICE, generator=gen)
        with torch.no_grad(), torch.autocast(DEVICE, dtype=torch.bfloat16):
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids),
                                 max_new_tokens=new, min_new_tokens=new, do_sample=False,
                                 pad_token_id=config.eos_token_id)
        return out.float().mean()
    return step, [(rng.randint(16, 512), rng.randint(32, 128)) for _ in range(args.steps)]


BUILDERS = {"gnn": gnn, "moe": moe, "hf_trainer": hf_trainer, "generate": generate}
