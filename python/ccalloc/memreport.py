"""Where did my memory go: the profiler's accounting, report, plot and JSON.

Pure Python, no torch: ccalloc.profiler gathers the numbers at phase
boundaries (what each known tensor's block is, the allocator's counters) and
this module turns them into kinds, a per-step text report, an SVG timeline
and JSON. The host tests drive it with made-up numbers.

The accounting is exact by construction: every allocated block counts once,
under the first kind (in KINDS order) of any tensor it holds; the allocated
bytes no known tensor holds are temporaries. So the kinds add up to
memory_allocated() at every boundary, and each kind is a set of real blocks.
"""

import json

# Priority order: a block holding a parameter and a saved activation (a
# weight saved for backward) is a parameter.
#
# "activations" is, by default, the live bytes allocated in forward (the
# allocator's "forward/<module>" tags) less parameters, gradients and
# optimizer state: at the loss and backward boundaries, what autograd saved
# for backward plus the model's outputs. A sample whose "activations_basis"
# is "saved" (the profiler's exact_saved=True) counts only the blocks holding
# tensors autograd saved for backward.
KINDS = ("parameters", "gradients", "optimizer_state", "activations", "temporaries")
PHASES = ("forward", "loss", "backward", "optimizer", "other")
COLORS = {
    "parameters": "#4e79a7", "gradients": "#f28e2b", "optimizer_state": "#e15759",
    "activations": "#76b7b2", "temporaries": "#edc948", "cached_free": "#bab0ac",
}
PHASE_SHADES = {
    "forward": "#e8f1fa", "loss": "#fbeee6", "backward": "#eaf5ea", "optimizer": "#f6e8f0",
    "other": "#f4f4f4",
}


class AccountingError(ValueError):
    """The known tensors' blocks exceed the allocated bytes: the inputs are
    inconsistent (read at different times, or another device's pointers)."""


def account(allocated, holders, blocks):
    """Kinds of the allocated bytes.

    allocated: allocated bytes (the allocator's counter, blocks rounded).
    holders: (kind, owner) per known tensor, owner naming the module for
        activations (None otherwise).
    blocks: (start, size) of the allocated block holding each tensor, in the
        same order; start 0 where none does (a CPU tensor, a freed one).
    Returns ({kind: bytes} over KINDS, {owner: activation bytes}).
    """
    if len(holders) != len(blocks):
        raise ValueError(f"account: {len(holders)} holders but {len(blocks)} blocks")
    groups = {kind: ([], [], []) for kind in KINDS[:-1]}
    for (kind, owner), (start, size) in zip(holders, blocks):
        group = groups.get(kind)
        if group is None:
            raise ValueError(f"account: unknown kind {kind!r} (one of {KINDS[:-1]})")
        group[0].append(start)
        group[1].append(size)
        group[2].append(owner)
    return account_groups(allocated, [(kind, g[0], g[1], g[2] if kind == "activations" else None)
                                      for kind, g in groups.items()])


def account_groups(allocated, groups):
    """account() for the profiler's hot path: the same result from groups
    (kind, starts, sizes, owners or None), one per kind in KINDS order, with
    the set work done by dicts and sets (no Python loop per tensor except
    for the activations' owners)."""
    kinds = dict.fromkeys(KINDS, 0)
    modules = {}
    seen = set()
    for kind, starts, sizes, owners in groups:
        if kind not in KINDS or kind == "temporaries":
            raise ValueError(f"account: unknown kind {kind!r} (one of {KINDS[:-1]})")
        if owners is None:
            blocks = dict(zip(starts, sizes))
        else:
            blocks = {}
            first = {}
            for start, size, owner in zip(starts, sizes, owners):
                if start not in blocks:
                    blocks[start] = size
                    first[start] = owner
        blocks.pop(0, None)
        new = blocks.keys() - seen
        if len(new) != len(blocks):
            blocks = {k: blocks[k] for k in new}
        seen.update(new)
        kinds[kind] += sum(blocks.values())
        if owners is not None:
            for start, size in blocks.items():
                key = first[start] or "(no module)"
                modules[key] = modules.get(key, 0) + size
    known = sum(kinds.values())
    if known > allocated:
        raise AccountingError(
            f"account: known tensors' blocks hold {known} bytes but only {allocated} are allocated")
    kinds["temporaries"] = allocated - known
    return kinds, modules


def fragmentation(free, largest):
    """(free - largest free block) / free; 0 with nothing free."""
    return 0.0 if free <= 0 else max(0.0, (free - largest) / free)


def fmt_bytes(n):
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{sign}{n / scale:.2f} {unit}" if unit == "GiB" else f"{sign}{n / scale:.1f} {unit}"
    return f"{sign}{n} B"


def _top(d, n):
    return sorted(((v, k) for k, v in d.items() if v > 0), reverse=True)[:n]


def check_sample(sample):
    """Messages for what does not add up in one boundary sample (none: fine)."""
    problems = []
    total = sum(sample["kinds"].get(k, 0) for k in KINDS)
    if total != sample["allocated"]:
        problems.append(f"kinds sum to {total} but allocated is {sample['allocated']}")
    if "torch_allocated" in sample and sample["torch_allocated"] != sample["allocated"]:
        problems.append(f"torch.cuda.memory_allocated() is {sample['torch_allocated']} "
                        f"but the profiler read {sample['allocated']}")
    if any(v < 0 for v in sample["kinds"].values()):
        problems.append(f"negative kind: {sample['kinds']}")
    if sample["reserved"] < sample["allocated"]:
        problems.append("reserved below allocated")
    return problems


# --- per-step explanation ------------------------------------------------------

def steps_of(samples):
    out = {}
    for s in samples:
        out.setdefault(s["step"], []).append(s)
    return out


def _phase(samples, name):
    return [s for s in samples if s["phase"] == name]


def activations_label(sample):
    """What the sample's activations are, in words."""
    if sample.get("activations_basis") == "saved":
        return "activations saved for backward"
    return "activations (allocated in forward, still live)"


def explain_step(step_samples, previous=None):
    """Sentences that say what raised this step's memory: what appeared in the
    optimizer phase, what raised the backward peak, and (given the previous
    step's samples) why this step peaks higher or lower."""
    lines = []
    start = step_samples[0]  # the step-start sample (phase "start")
    before = start
    for s in step_samples[1:]:
        dk = {k: s["kinds"][k] - before["kinds"][k] for k in KINDS}
        rise = max(s["peak"] - before["allocated"], 0)
        if s["phase"] == "optimizer" and dk["optimizer_state"] > 0:
            lines.append(
                f"optimizer: +{fmt_bytes(dk['optimizer_state'])} optimizer state appeared "
                f"(created on the optimizer's first step, e.g. Adam's exp_avg and exp_avg_sq) "
                f"and stays allocated from now on")
        if s["phase"] == "backward":
            held = before["kinds"]
            lines.append(
                f"backward: peak {fmt_bytes(s['peak'])} = {fmt_bytes(before['allocated'])} live when "
                f"it began ({activations_label(before)} {fmt_bytes(held['activations'])}, "
                f"parameters {fmt_bytes(held['parameters'])}, gradients "
                f"{fmt_bytes(held['gradients'])}, optimizer state "
                f"{fmt_bytes(held['optimizer_state'])}, temporaries {fmt_bytes(held['temporaries'])}) "
                f"+ {fmt_bytes(rise)} allocated during backward before the activations "
                f"were released: new gradients {fmt_bytes(max(dk['gradients'], 0))} (kept) and "
                f"{fmt_bytes(max(rise - max(dk['gradients'], 0), 0))} of gradients of activations "
                f"and other temporaries")
            top = _top(s.get("tag_rise", {}), 3)
            if top:
                lines.append("  allocations that raised it, by tag: " +
                             ", ".join(f"{k} {fmt_bytes(v)}" for v, k in top))
        before = s
    peak = max(s["peak"] for s in step_samples[1:]) if len(step_samples) > 1 else start["allocated"]
    where = max(step_samples[1:], key=lambda s: s["peak"])["phase"] if len(step_samples) > 1 else "-"
    if previous:
        prev_peak = max(s["peak"] for s in previous[1:]) if len(previous) > 1 else previous[0]["allocated"]
        d = peak - prev_peak
        p0, s0 = previous[0]["kinds"], start["kinds"]
        carried = {k: s0[k] - p0[k] for k in KINDS}
        parts = ", ".join(f"{k.replace('_', ' ')} {fmt_bytes(v)}" for k, v in carried.items() if v)
        # The step before in the samples: with a profiler's sample_every,
        # an earlier step than the one just before.
        gap = start.get("step", 0) - previous[0].get("step", 0)
        before = "the step before" if gap == 1 else f"step {previous[0].get('step')}"
        lines.append(
            f"step peak {fmt_bytes(peak)} ({where}) vs {fmt_bytes(prev_peak)} {before}: "
            f"{'+' if d >= 0 else ''}{fmt_bytes(d)}; live at this step's start vs {before}'s: "
            f"{fmt_bytes(start['allocated'])} vs {fmt_bytes(previous[0]['allocated'])}"
            + (f" (more: {parts})" if parts else "")
            + ", held through this step's forward and backward")
    return lines


def step_report(step_samples, previous=None, top_modules=5):
    """The text report of one step: a row per phase boundary, then why."""
    step = step_samples[0]["step"]
    out = [f"step {step}"]
    head = (f"  {'phase':<10}{'allocated':>11}{'peak':>11}{'params':>11}{'grads':>11}"
            f"{'optim':>11}{'activ.':>11}{'temps':>11}{'reserved':>11}{'free cache':>12}{'frag':>6}")
    out.append(head)
    for s in step_samples:
        k = s["kinds"]
        free = s["reserved"] - s["allocated"]
        out.append(
            f"  {s['phase']:<10}{fmt_bytes(s['allocated']):>11}{fmt_bytes(s['peak']):>11}"
            f"{fmt_bytes(k['parameters']):>11}{fmt_bytes(k['gradients']):>11}"
            f"{fmt_bytes(k['optimizer_state']):>11}{fmt_bytes(k['activations']):>11}"
            f"{fmt_bytes(k['temporaries']):>11}{fmt_bytes(s['reserved']):>11}"
            f"{fmt_bytes(free):>12}{fragmentation(free, s['largest_free']):>6.0%}")
    acts = max(step_samples, key=lambda s: s["kinds"]["activations"])
    top = _top(acts.get("activations_by_module", {}), top_modules)
    if top:
        out.append(f"  {activations_label(acts)} at most {fmt_bytes(acts['kinds']['activations'])} "
                   f"(after {acts['phase']}); top modules: " +
                   ", ".join(f"{m} {fmt_bytes(v)}" for v, m in top))
    for line in explain_step(step_samples, previous):
        out.append("  why: " + line if not line.startswith("  ") else "       " + line.strip())
    bad = [(s["phase"], p) for s in step_samples for p in check_sample(s)]
    out.append("  check: kinds add up to allocated at every boundary" if not bad else
               "  check FAILED: " + "; ".join(f"{ph}: {p}" for ph, p in bad))
    return "\n".join(out)


def report(samples):
    by_step = steps_of(samples)
    out, previous = [], None
    for step in sorted(by_step):
        out.append(step_report(by_step[step], previous))
        previous = by_step[step]
    return "\n\n".join(out)


def to_json(samples, meta=None):
    return json.dumps({"kinds": list(KINDS), "phases": list(PHASES), "meta": meta or {},
                       "samples": samples}, indent=1, sort_keys=True)


# --- SVG ------------------------------------------------------------------------

def _esc(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


def svg(samples, title="ccalloc: where did my memory go", width=1100, height=480):
    """A timeline, one slot per phase: the kinds stacked (allocated), cached
    free memory on top up to reserved, each phase's peak as a tick, phases
    shaded and named, steps separated. Opens in any browser."""
    if not samples:
        raise ValueError("svg: no samples")
    left, right, top, bottom = 70, 170, 40, 60
    pw, ph = width - left - right, height - top - bottom
    n = len(samples)
    ymax = max(max(s["reserved"], s["peak"]) for s in samples) or 1
    xs = [left + (i * pw / max(n - 1, 1)) for i in range(n)]

    def y(v):
        return top + ph - v * ph / ymax

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="11">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{left}" y="20" font-size="14" font-weight="bold">{_esc(title)}</text>']
    # Phase shading: the slot before sample i is the phase sample i closes.
    for i in range(1, n):
        phase = samples[i]["phase"]
        if phase == "start":  # between two steps: nothing of the profiler's
            continue
        parts.append(f'<rect x="{xs[i-1]:.1f}" y="{top}" width="{xs[i]-xs[i-1]:.1f}" height="{ph}" '
                     f'fill="{PHASE_SHADES.get(phase, "#f4f4f4")}"><title>{_esc(phase)}</title></rect>')
        parts.append(f'<text x="{(xs[i-1]+xs[i])/2:.1f}" y="{top+ph+14}" text-anchor="middle" '
                     f'font-size="9" fill="#555">{_esc(phase[:4])}</text>')
    for i, s in enumerate(samples):
        if s["phase"] == "start":
            parts.append(f'<line x1="{xs[i]:.1f}" y1="{top}" x2="{xs[i]:.1f}" y2="{top+ph}" '
                         f'stroke="#333" stroke-dasharray="3,3"/>')
            parts.append(f'<text x="{xs[i]+3:.1f}" y="{top+ph+28}" fill="#333">step {s["step"]}</text>')
    # Stacked areas, bottom to top.
    base = [0] * n
    layers = list(KINDS) + ["cached_free"]
    for kind in layers:
        vals = [(s["reserved"] - s["allocated"]) if kind == "cached_free" else s["kinds"][kind]
                for s in samples]
        upper = [b + v for b, v in zip(base, vals)]
        pts = [f"{xs[i]:.1f},{y(upper[i]):.1f}" for i in range(n)]
        pts += [f"{xs[i]:.1f},{y(base[i]):.1f}" for i in reversed(range(n))]
        opacity = "0.45" if kind == "cached_free" else "0.9"
        parts.append(f'<polygon points="{" ".join(pts)}" fill="{COLORS[kind]}" '
                     f'fill-opacity="{opacity}" stroke="none"><title>{_esc(kind)}</title></polygon>')
        base = upper
    # Reserved as a line, allocated as a line, phase peaks as ticks.
    parts.append('<polyline fill="none" stroke="#222" stroke-width="1.5" points="' +
                 " ".join(f"{xs[i]:.1f},{y(s['reserved']):.1f}" for i, s in enumerate(samples)) + '"/>')
    for i in range(1, n):
        s = samples[i]
        if s["phase"] == "start":
            continue
        parts.append(f'<line x1="{xs[i-1]:.1f}" x2="{xs[i]:.1f}" y1="{y(s["peak"]):.1f}" '
                     f'y2="{y(s["peak"]):.1f}" stroke="#c00" stroke-width="2">'
                     f'<title>peak in {_esc(s["phase"])}: {_esc(fmt_bytes(s["peak"]))}</title></line>')
    # Axes.
    parts.append(f'<line x1="{left}" y1="{top+ph}" x2="{left+pw}" y2="{top+ph}" stroke="#000"/>')
    parts.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top+ph}" stroke="#000"/>')
    for j in range(5):
        v = ymax * j / 4
        parts.append(f'<text x="{left-5}" y="{y(v)+4:.1f}" text-anchor="end">{_esc(fmt_bytes(int(v)))}</text>')
        parts.append(f'<line x1="{left}" x2="{left+pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>')
    # Legend.
    lx = left + pw + 15
    items = [(k.replace("_", " "), COLORS[k]) for k in layers]
    for j, (label, color) in enumerate(items):
        parts.append(f'<rect x="{lx}" y="{top+j*18}" width="12" height="12" fill="{color}"/>')
        parts.append(f'<text x="{lx+18}" y="{top+j*18+10}">{_esc(label)}</text>')
    j = len(items)
    parts.append(f'<line x1="{lx}" x2="{lx+12}" y1="{top+j*18+6}" y2="{top+j*18+6}" stroke="#222" stroke-width="1.5"/>'
                 f'<text x="{lx+18}" y="{top+j*18+10}">reserved</text>')
    j += 1
    parts.append(f'<line x1="{lx}" x2="{lx+12}" y1="{top+j*18+6}" y2="{top+j*18+6}" stroke="#c00" stroke-width="2"/>'
                 f'<text x="{lx+18}" y="{top+j*18+10}">peak in phase</text>')
    parts.append("</svg>")
    return "\n".join(parts)


def oom_report(sample, tags=None, request=None, phase=None, module=None, top=5):
    """The live memory at an out-of-memory error, by kind and by holder."""
    lines = ["ccalloc profiler: out of memory" +
             (f" allocating {fmt_bytes(request)}" if request else "") +
             (f" during {phase}" if phase else "") + (f" in module {module}" if module else "")]
    lines.append(f"  allocated {fmt_bytes(sample['allocated'])}, reserved {fmt_bytes(sample['reserved'])}, "
                 f"free cache {fmt_bytes(sample['reserved'] - sample['allocated'])}, largest free block "
                 f"{fmt_bytes(sample['largest_free'])}")
    lines.append("  live by kind: " + ", ".join(
        f"{k.replace('_', ' ')} {fmt_bytes(sample['kinds'][k])}" for k in KINDS))
    acts = _top(sample.get("activations_by_module", {}), top)
    if acts:
        lines.append(f"  {activations_label(sample)} by module: " + ", ".join(f"{m} {fmt_bytes(v)}" for v, m in acts))
    if tags:
        lines.append("  live by tag (phase/module): " + ", ".join(
            f"{k or '(untagged)'} {fmt_bytes(v)}" for v, k in _top(tags, top)))
    return "\n".join(lines)
