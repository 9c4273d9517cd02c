"""What holds every allocated byte, by name: ccalloc.torch.report_tensors().

    rep = ccalloc.torch.report_tensors(model, optimizer)
    print(rep)                   # a table; rep.json(), rep.html(), rep.entries

Every live allocated block of the device is listed once, with the bytes
memory_allocated() counts for it (the allocator's block size) and, beside
them, the tensors' own bytes. Blocks holding tensors reachable from the
model and the optimizer are named: parameters and buffers by their module
path ("encoder.layers.3.weight"), gradients ("<parameter>.grad"),
optimizer state ("optimizer[<parameter>].exp_avg"); a tensor sharing
another's storage (a tied weight, a view) is shown as "name (-> owner)"
with no bytes of its own, as memlab does. With python_tensors (the
default) the other tensors Python holds (found through the garbage
collector) fill in the shape and dtype of the blocks they hold. The rest
is grouped by the ccalloc tag the block was allocated under and the Python
frame that allocated it, from PyTorch's memory history when it is recorded
(torch.cuda.memory._record_memory_history()). The blocks add up to
memory_allocated(): the allocator's own list of live blocks is the source,
and names are only attached to it.

The blocks come from ccalloc's snapshot (ccalloc_torch_snapshot_json: each
block's address, size, state and tag) when ccalloc is PyTorch's allocator,
else from torch.cuda.memory_snapshot(). Tensors are matched to blocks by
their storage's address (a sorted search over the blocks).

May call: ccalloc.torch (the plugin), ccalloc.memreport (fmt_bytes), torch
(imported by the caller; used through the tensors and torch.cuda).
"""

import bisect
import gc
import html as _html
import json
import os
import sys
import time

from .lineprof import _library_dirs
from .memreport import fmt_bytes

__all__ = ["report_tensors", "TensorReport"]

# A block counts under its first tensor's kind, in this order.
KINDS = ("parameter", "buffer", "gradient", "optimizer_state", "tensor", "unnamed")
_LABEL = {"parameter": "parameter", "buffer": "buffer", "gradient": "gradient",
          "optimizer_state": "optimizer state", "tensor": "tensor", "unnamed": "unnamed"}
_RANK = {k: i for i, k in enumerate(KINDS)}
_PYTHON = "(python tensor)"   # placeholder name, replaced by tensor#<n>


class _Blocks:
    """The live blocks of one device as the report reads them."""

    kind = "?"

    def holds(self, tensor):
        return tensor.is_cuda and tensor.device.index == self.device

    def locate(self, ptrs, starts, ends):
        """The start of the block holding each pointer (0 where none)."""
        out = []
        for p in ptrs:
            i = bisect.bisect_right(starts, p) - 1
            out.append(starts[i] if p and i >= 0 and p < ends[i] else 0)
        return out

    def frames(self, torch, wanted):
        """{block address: frames} from PyTorch's memory history, when it is
        recorded (else {})."""
        enabled = getattr(torch._C, "_cuda_isHistoryEnabled", None)
        if torch is None or enabled is None or not enabled():
            return {}
        out = {}
        for seg in torch.cuda.memory._snapshot()["segments"]:
            if seg.get("device", self.device) != self.device:
                continue
            for b in seg.get("blocks", []):
                if b.get("address") in wanted and b.get("frames"):
                    out[b["address"]] = b["frames"]
        return out


class _CcallocBlocks(_Blocks):
    """ccalloc's own snapshot of the device: blocks with their tags."""

    kind = "ccalloc"

    def __init__(self, plugin, device):
        self.plugin, self.device = plugin, device

    def snapshot(self):
        """([{address, size, requested, state, tag}] of allocated blocks,
        memory_allocated() as of the same snapshot, bytes pending free)."""
        snap = self.plugin.snapshot(self.device)
        blocks, pending = [], 0
        for seg in snap.get("segments", []):
            for b in seg.get("blocks", []):
                state = b.get("state")
                if state == "active_allocated":
                    blocks.append({"address": b["address"], "size": b["size"],
                                   "requested": b.get("requested_size", b["size"]),
                                   "tag": b.get("tag_name", "")})
                elif state == "active_pending_free":
                    pending += b["size"]
        allocated = snap.get("stats", {}).get("allocated_bytes.all.current")
        if allocated is None:
            allocated = self.plugin.raw_stats(self.device)["allocated_bytes.all.current"]
        return blocks, allocated, pending


class _TorchBlocks(_Blocks):
    """PyTorch's allocator: torch.cuda.memory_snapshot() (no tags)."""

    kind = "torch"

    def __init__(self, torch, device):
        self.torch, self.device = torch, device

    def snapshot(self):
        torch = self.torch
        blocks, pending = [], 0
        for seg in torch.cuda.memory_snapshot():
            if seg.get("device", self.device) != self.device:
                continue
            for b in seg.get("blocks", []):
                if b.get("state") == "active_allocated":
                    blocks.append({"address": b["address"], "size": b["size"],
                                   "requested": b.get("requested_size", b["size"]), "tag": ""})
                elif b.get("state") == "active_pending_free":
                    pending += b["size"]
        return blocks, torch.cuda.memory_allocated(self.device), pending


def default_view(device=None):
    """ccalloc's blocks when ccalloc is PyTorch's allocator (or its plugin
    runs without PyTorch's CUDA), else PyTorch's."""
    from . import torch as ct
    torch = sys.modules.get("torch")
    plugin = ct._plugin_obj
    if plugin is not None and (ct.is_enabled() or torch is None or not torch.cuda.is_initialized()):
        return _CcallocBlocks(plugin, ct._device_index(device))
    import torch
    index = torch.cuda.current_device() if device is None else torch.device(device).index
    return _TorchBlocks(torch, index if index is not None else torch.cuda.current_device())


def _storage_ptr(t):
    try:
        return t.untyped_storage().data_ptr()
    except AttributeError:   # PyTorch < 2.0
        return t.storage().data_ptr()


def _modules(model):
    """(path, module) of every module, shared ones under each of their paths."""
    try:
        return list(model.named_modules(remove_duplicate=False))
    except TypeError:
        return list(model.named_modules())


def _named_tensors(model, optimizer, extra, tensor_type):
    """[(name, tensor, kind)] reachable from the model, optimizer and extra,
    in that order; a parameter under two paths (tied) appears under both."""
    out = []
    first = {}          # id(parameter) -> (its first path, the parameter)
    if model is not None:
        seen = set()
        for path, module in _modules(model):
            for group, kind in ((module._parameters, "parameter"), (module._buffers, "buffer")):
                for n, t in group.items():
                    if t is None:
                        continue
                    name = f"{path}.{n}" if path else n
                    if (id(t), name) in seen:
                        continue
                    seen.add((id(t), name))
                    out.append((name, t, kind))
                    if kind == "parameter":
                        first.setdefault(id(t), (name, t))
    if optimizer is not None:
        for gi, group in enumerate(optimizer.param_groups):
            for pi, p in enumerate(group["params"]):
                if id(p) not in first:
                    name = f"param_groups[{gi}][{pi}]"
                    first[id(p)] = (name, p)
                    out.append((name, p, "parameter"))
    for name, p in first.values():
        g = p.grad
        if g is not None:
            out.append((f"{name}.grad", g, "gradient"))
    if optimizer is not None:
        state = optimizer.state
        for pid, (name, p) in first.items():
            st = state.get(p) if hasattr(state, "get") else None
            if not st:
                continue
            for key, v in st.items():
                if isinstance(v, tensor_type):
                    out.append((f"optimizer[{name}].{key}", v, "optimizer_state"))
    for name, t in (extra or {}).items():
        out.append((str(name), t, "tensor"))
    return out


def _info(name, t, kind):
    shape = tuple(t.shape)
    return {"name": name, "kind": kind, "shape": list(shape), "dtype": str(t.dtype).replace("torch.", ""),
            "device": str(t.device), "nbytes": t.numel() * t.element_size()}


def allocating_frame(frames, skip=None):
    """"file:line in function" of the innermost Python frame outside the
    standard library, torch and ccalloc (else the innermost Python frame;
    None without any)."""
    skip = _library_dirs() if skip is None else skip
    python = [f for f in frames or () if str(f.get("filename", "")).endswith(".py")
              or str(f.get("filename", "")).startswith("<")]
    python = [f for f in python if f.get("filename") != "ccalloc tag"]
    if not python:
        return None
    pick = next((f for f in python if not os.path.realpath(f["filename"]).startswith(skip)), python[0])
    return f"{os.path.basename(pick['filename'])}:{pick.get('line', 0)} in {pick.get('name', '?')}"


def report_tensors(model=None, optimizer=None, *, device=None, extra=None, python_tensors=True,
                   frames="auto", view=None):
    """A TensorReport of every live allocation on `device` (see the module's
    docstring). extra: {name: tensor} of more tensors to name; frames:
    "auto" (from PyTorch's memory history when it is recorded), True (the
    same, required) or False."""
    t0 = time.perf_counter()
    if view is None:
        if device is None and model is not None:
            p = next(iter(model.parameters()), None)
            if p is not None and p.is_cuda:
                device = p.device
        view = default_view(device)
    torch = sys.modules.get("torch")
    blocks, allocated, pending = view.snapshot()
    blocks.sort(key=lambda b: b["address"])
    starts = [b["address"] for b in blocks]
    ends = [b["address"] + b["size"] for b in blocks]
    by_start = {b["address"]: b for b in blocks}
    for b in blocks:
        b["tensors"] = []
    tensor_type = torch.Tensor if torch is not None else ()
    named = [(n, t, k) for n, t, k in _named_tensors(model, optimizer, extra, tensor_type)
             if view.holds(t)]
    seen_ids = {id(t) for _, t, _ in named}
    if python_tensors and torch is not None:
        # type(), not isinstance(): no __class__ lookup on every object (some
        # modules' deprecated attributes warn when looked at).
        tensor_class = torch.Tensor
        for obj in gc.get_objects():
            if issubclass(type(obj), tensor_class) and id(obj) not in seen_ids and view.holds(obj):
                named.append((_PYTHON, obj, "tensor"))
                seen_ids.add(id(obj))
    ptrs = [_storage_ptr(t) for _, t, _ in named]
    located = view.locate(ptrs, starts, ends)
    for (name, t, kind), ptr, start in zip(named, ptrs, located):
        if not start:
            continue
        b = by_start[start]
        if name is _PYTHON and any(x["name"] is not _PYTHON for x in b["tensors"]):
            continue   # a view of a named tensor: its owner's name says it
        info = _info(name, t, kind)
        info["storage"] = ptr
        b["tensors"].append(info)
    # Tensors found only through Python: numbered largest block first.
    count = 0
    for b in sorted(blocks, key=lambda b: -b["size"]):
        for x in b["tensors"]:
            if x["name"] is _PYTHON:
                x["name"] = f"tensor#{count}"
                count += 1
    # Owners first (kind order, then discovery), the rest point at them.
    for b in blocks:
        ts = b["tensors"]
        ts.sort(key=lambda x: _RANK[x["kind"]])
        if ts:
            owner = ts[0]
            b["kind"], b["name"] = owner["kind"], owner["name"]
            for x in ts[1:]:
                x["shares"] = owner["name"]
        else:
            b["kind"], b["name"] = "unnamed", None
    want_frames = frames is True or (frames == "auto" and torch is not None)
    frame_of = {}
    if want_frames:
        wanted = {b["address"] for b in blocks if b["kind"] in ("unnamed", "tensor")}
        raw = view.frames(torch, wanted) if wanted else {}
        if frames is True and wanted and not raw:
            raise RuntimeError("ccalloc tensor report: no frames; record PyTorch's memory history "
                               "first (torch.cuda.memory._record_memory_history())")
        skip = _library_dirs()
        frame_of = {a: allocating_frame(f, skip) for a, f in raw.items()}
    for b in blocks:
        b["frame"] = frame_of.get(b["address"])
    return TensorReport(blocks, allocated, pending, view, time.perf_counter() - t0,
                        history=bool(frame_of))


class TensorReport:
    """The live blocks of a device, named (report_tensors()).

    entries: one dict per block {"address", "size" (what memory_allocated()
    counts), "requested", "tag", "frame", "kind", "name", "tensors": [{"name",
    "kind", "shape", "dtype", "device", "nbytes", "storage", "shares"?}]};
    total: their sum; allocated: memory_allocated() as read with them."""

    def __init__(self, blocks, allocated, pending, view, seconds, history=False):
        order = {k: i for i, k in enumerate(KINDS)}
        self.entries = sorted(blocks, key=lambda b: (order[b["kind"]], -b["size"] if b["kind"] in
                                                     ("tensor", "unnamed") else 0))
        self.total = sum(b["size"] for b in blocks)
        self.allocated = allocated
        self.pending_free = pending
        self.device = view.device
        self.source = view.kind
        self.seconds = seconds
        self.history = history

    @property
    def matches(self):
        return self.total == self.allocated

    def by_kind(self):
        out = dict.fromkeys(KINDS, 0)
        for b in self.entries:
            out[b["kind"]] += b["size"]
        return out

    def names(self):
        """{tensor name: its block entry} (every name, shared ones too)."""
        return {t["name"]: b for b in self.entries for t in b["tensors"]}

    def groups(self):
        """[(tag, frame, blocks, bytes)] of the unnamed blocks, largest first."""
        acc = {}
        for b in self.entries:
            if b["kind"] == "unnamed":
                key = (b["tag"] or "", b["frame"] or "")
                n, s = acc.get(key, (0, 0))
                acc[key] = (n + 1, s + b["size"])
        return sorted(((t, f, n, s) for (t, f), (n, s) in acc.items()), key=lambda g: -g[3])

    def rows(self):
        """(kind label, name, shape, dtype, block bytes or None, tensor bytes,
        where) per named tensor, owners before the tensors sharing them."""
        for b in self.entries:
            for i, t in enumerate(b["tensors"]):
                name = t["name"] if "shares" not in t else f"{t['name']} (-> {t['shares']})"
                where = ", ".join(x for x in (f"tag {b['tag']}" if b["tag"] else "", b["frame"] or "")
                                  if x) if t["kind"] == "tensor" else ""
                yield (_LABEL[t["kind"]], name, "(" + ", ".join(map(str, t["shape"])) + ")",
                       t["dtype"], b["size"] if i == 0 else 0, t["nbytes"], where)

    def __str__(self):
        n_named = sum(1 for b in self.entries if b["kind"] != "unnamed")
        head = (f"ccalloc tensor report: device {self.device} ({self.source} blocks), "
                f"{len(self.entries)} live blocks, {n_named} named")
        lines = [head]
        rows = list(self.rows())
        if rows:
            w = max(len(r[1]) for r in rows)
            w = min(max(w, 4), 70)
            sw = min(max(len(r[2]) for r in rows), 24)
            lines.append(f"{'kind':<16} {'name':<{w}} {'shape':<{sw}} {'dtype':<9} "
                         f"{'block':>10} {'tensor':>10}  allocated by")
            for kind, name, shape, dtype, block, nbytes, where in rows:
                lines.append(f"{kind:<16} {name:<{w}} {shape:<{sw}} {dtype:<9} "
                             f"{fmt_bytes(block):>10} {fmt_bytes(nbytes):>10}  {where}".rstrip())
        lines += self._summary()
        return "\n".join(lines)

    def _summary(self):
        """The lines below the table: unnamed blocks by tag and frame, kinds, total."""
        lines = []
        groups = self.groups()
        if groups:
            lines.append("unnamed blocks, by tag and allocating frame:")
            for tag, frame, n, size in groups:
                lines.append(f"  {n:>5} block{'s' if n != 1 else ' '} {fmt_bytes(size):>10}  "
                             f"tag {tag or '(untagged)'}  {frame or self._no_frame()}")
        kinds = self.by_kind()
        lines.append("by kind: " + ", ".join(f"{_LABEL[k]} {fmt_bytes(v)}" for k, v in kinds.items() if v))
        check = "=" if self.matches else f"!= (differs by {fmt_bytes(self.total - self.allocated)})"
        lines.append(f"total {fmt_bytes(self.total)} in {len(self.entries)} blocks {check} "
                     f"memory_allocated() {fmt_bytes(self.allocated)}"
                     + (f"; {fmt_bytes(self.pending_free)} freed, waiting for streams"
                        if self.pending_free else ""))
        return lines

    def _no_frame(self):
        return "(frame unknown)" if self.history else \
            "(no memory history: torch.cuda.memory._record_memory_history() shows frames)"

    __repr__ = __str__

    def json(self):
        return json.dumps({"report": "ccalloc tensor report", "device": self.device,
                           "source": self.source, "total": self.total, "allocated": self.allocated,
                           "pending_free": self.pending_free, "by_kind": self.by_kind(),
                           "groups": [{"tag": t, "frame": f, "blocks": n, "bytes": s}
                                      for t, f, n, s in self.groups()],
                           "entries": self.entries}, indent=1)

    def html(self):
        esc = _html.escape
        out = ['<div class="ccalloc-tensor-report">',
               f"<p>{esc(str(self).splitlines()[0])}</p>",
               '<table style="border-collapse:collapse;font-size:12px"><tr>'
               + "".join(f'<th style="text-align:left;padding:0 6px">{h}</th>'
                         for h in ("kind", "name", "shape", "dtype", "block", "tensor", "allocated by"))
               + "</tr>"]
        for kind, name, shape, dtype, block, nbytes, where in self.rows():
            cells = (kind, name, shape, dtype, fmt_bytes(block), fmt_bytes(nbytes), where)
            out.append("<tr>" + "".join(f'<td style="padding:0 6px;font-family:monospace">{esc(c)}</td>'
                                        for c in cells) + "</tr>")
        out.append("</table>")
        out.append("<pre>" + esc("\n".join(self._summary())) + "</pre></div>")
        return "\n".join(out)

    def _repr_html_(self):
        return self.html()
