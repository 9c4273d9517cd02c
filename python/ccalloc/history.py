"""ccalloc's tags in PyTorch's memory history (torch.cuda.memory._snapshot).

PyTorch's memory_viz (torch/utils/viz/MemoryViz.js) shows each allocation's
stack frames and nothing else of ours. So the tag an allocation was made
under (phase and module, with the profiler) goes in as an extra first frame,
{"filename": "ccalloc tag", "line": 0, "name": "<tag>"}, which memory_viz
lists on top of the Python frames, and the snapshot stays a plain dict that
`python -m torch.cuda._memory_viz` and the web page load unchanged.

Where the tags come from: trace entries carry the allocating thread's tag in
compile_context (after PyTorch's own text: "N/A; ccalloc tag: <name>", or
"ccalloc tag: <name>" from an older extension; set by ccalloc's extension while
history is recorded); live blocks get theirs from ccalloc's own snapshot, by
address. Pure Python on dicts: tested without torch.
"""

import pickle

TAG_FILE = "ccalloc tag"
_PREFIX = "ccalloc tag: "


def tag_frame(name):
    return {"filename": TAG_FILE, "line": 0, "name": name}


def _with_tag(frames, name):
    frames = list(frames or [])
    if frames and frames[0].get("filename") == TAG_FILE:
        frames = frames[1:]  # tagged twice: keep the newest
    return [tag_frame(name)] + frames


def add_tag_frames(snapshot, block_tags):
    """Adds the tag frame to every trace entry that names a tag, to the free
    entries of those allocations, and to every allocated block whose address
    is in block_tags ({address: tag name}).
    Returns (the snapshot, changed in place; entries tagged, blocks tagged)."""
    if not isinstance(snapshot, dict) or "segments" not in snapshot:
        raise ValueError("add_tag_frames: not a torch.cuda.memory._snapshot() dict "
                         "(no 'segments')")
    entries = 0
    for trace in snapshot.get("device_traces", []):
        # A free entry names no tag (the tag is the allocating thread's, and
        # the extension records it at allocation only): it gets the tag of
        # the allocation it frees, matched by address in trace order.
        live = {}
        for entry in trace:
            context = entry.get("compile_context") or ""
            action = entry.get("action")
            name = None
            # PyTorch's own compile context comes first ("N/A" or the
            # compiled region's name), ccalloc's tag after it; an entry of
            # an older extension holds the tag alone.
            at = context.find(_PREFIX)
            if at >= 0:
                name = context[at + len(_PREFIX):]
                if action == "alloc":
                    live[entry.get("addr")] = name
            elif action in ("free_requested", "free_completed"):
                name = live.get(entry.get("addr"))
                if action == "free_completed":
                    live.pop(entry.get("addr"), None)
            if name:
                entry["frames"] = _with_tag(entry.get("frames"), name)
                entries += 1
    blocks = 0
    for segment in snapshot["segments"]:
        for block in segment.get("blocks", []):
            name = block_tags.get(block.get("address"))
            if name and block.get("state") == "active_allocated":
                block["frames"] = _with_tag(block.get("frames"), name)
                blocks += 1
    return snapshot, entries, blocks


def block_tags_from_ccalloc(ccalloc_snapshots):
    """{address: tag name} from ccalloc's snapshot JSON (Plugin.snapshot) of
    one or more devices."""
    out = {}
    for snap in ccalloc_snapshots:
        for segment in snap.get("segments", []):
            for block in segment.get("blocks", []):
                if block.get("tag_name"):
                    out[block["address"]] = block["tag_name"]
    return out


def dump(snapshot, path):
    with open(path, "wb") as f:
        pickle.dump(snapshot, f, protocol=4)  # memory_viz reads protocols 2 to 4
    return path
