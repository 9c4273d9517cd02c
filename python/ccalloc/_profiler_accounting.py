"""The memory profiler's accounting: which allocated blocks are whose.

A mixin of ccalloc.profiler.MemoryProfiler (_Accounting, no state or
__init__ of its own: it works on the attributes MemoryProfiler.__init__
sets). It maps the known tensors (parameters and buffers, gradients,
optimizer state) to the allocated blocks that hold them, in batched lookups
cached while the tensors stay the same; reads the per-tag usage; and
derives a sample's kinds (parameters, gradients, optimizer state,
activations, temporaries) and activations by module from a boundary's read
(_derive), or from the blocks autograd saved (exact_saved). Public methods
reached through MemoryProfiler: refresh(), measure().

The passes over every parameter, gradient or optimizer state value go
through the C loops of the profiler's extension (self._ext:
_profiler_ext.py's scan_grads, data_ptrs, state_ids; ids and pointers as
bytes of uint64s) where it is built, else the same in Python (ids and
pointers as lists); a profiler keeps to one of the two.

May call: ccalloc.memreport (AccountingError), ccalloc._profiler_view
(_split), the profiler's view (self.view: blocks, tag_read, tag_usage,
counters, largest_free), self._ext, and torch only through self._torch
(never imported here). Not the hooks or the phase boundaries
(ccalloc/profiler.py).
"""

import array
import functools
import itertools
import operator
import weakref

from . import memreport
from ._profiler_view import _split


class _Accounting:
    """MemoryProfiler's methods that account blocks to kinds (see the
    module's docstring)."""

    def refresh(self):
        """Reads the model's parameters and buffers again (the profiler
        reads them once, when it attaches: call this after adding or
        replacing some; a tensor it does not know counts as temporaries)."""
        mods = self._names
        self._params = list({id(p): p for m in mods for p in m._parameters.values()
                             if p is not None}.values())
        self._tensors = self._params + [b for m in mods for b in m._buffers.values() if b is not None]
        self._grads_unread = True

    def _tensor_ptrs(self, tensors):
        """The data pointers of a list of tensors (bytes of uint64s with
        the extension, else a list)."""
        if self._ext is not None:
            return self._ext.data_ptrs(tensors)
        return list(map(self._data_ptr, tensors))

    def _optimizer_ptrs(self):
        """Pointers of the optimizer state's device tensors. Checked only
        after the optimizer phase and at each step's start (the state
        changes in optimizer.step), and read again only when the state's
        objects changed: the same values (ids, in order, a C-level map; and
        the types of the values that are not tensors) with none of the
        tensors dead since (weak references whose callback, a C list append,
        flags a death: a new tensor could then reuse an id) keep their
        pointers (Adam and the like update their state in place; a state
        tensor whose storage is swapped in place, .data = or set_(), is not
        seen). A tensor found where a non-tensor was has another type."""
        if self._opt_ptrs is None:
            ptrs = ()
            if self.optimizer is not None:
                state = self.optimizer.state
                values = None
                if self._ext is not None:
                    ids = self._ext.state_ids(state)
                else:
                    values = list(_chain(map(_VALUES, state.values())))
                    ids = list(map(id, values))
                f = self._opt_fp
                same = f is not None and not f[3] and f[0] is state and f[1] == ids
                if same and f[2]:
                    if values is None:
                        values = list(_chain(map(_VALUES, state.values())))
                    same = all(type(values[i]) is t for i, t in f[2])
                if same:
                    ptrs = f[4]
                else:
                    if values is None:
                        values = list(_chain(map(_VALUES, state.values())))
                    tensor = self._torch.Tensor
                    is_tensor = [isinstance(v, tensor) for v in values]
                    # Adam's "step" is a CPU scalar: no device block to look up
                    # (a fake view on CPU tensors, in the tests, takes them all).
                    skip_cpu = isinstance(self.view.device, int)
                    tensors = list(itertools.compress(values, is_tensor))
                    ptrs = [v.data_ptr() for v in tensors if not (skip_cpu and v.is_cpu)]
                    others = tuple((i, type(v)) for i, (v, t) in enumerate(zip(values, is_tensor)) if not t)
                    dead = []
                    refs = list(map(weakref.ref, tensors, itertools.repeat(dead.append)))
                    # (state, ids, (position, type) of the non-tensors, deaths, ptrs, weak references)
                    self._opt_fp = (state, ids, others, dead, ptrs, refs)
            self._opt_ptrs = ptrs
        return self._opt_ptrs

    def _lookup(self, ptrs, exclude=()):
        """({block start: size}, {module: bytes}) of the blocks holding ptrs
        (none: skipped) less those in the dicts of `exclude`, and of those
        the bytes of blocks that carry a forward tag, by module (the block's
        tag ids are looked at only when one of them is a forward tag)."""
        if type(ptrs) is bytes:
            ptrs = _uint64s(ptrs)
        r = self.view.blocks(ptrs)
        blocks = dict(zip(r[0], r[1]))
        blocks.pop(0, None)
        for known in exclude:
            if not known.keys().isdisjoint(blocks):
                blocks = {k: v for k, v in blocks.items() if k not in known}
        owned = {}
        fwd = self._fwd_tokens
        if len(r) > 2 and not fwd.keys().isdisjoint(r[2]):
            for k, t in dict(zip(r[0], r[2])).items():
                m = fwd.get(t)
                if m is not None and k in blocks:
                    owned[m] = owned.get(m, 0) + blocks[k]
        return blocks, owned

    def _static_blocks(self):
        """The parameters' and the optimizer state's blocks (self._P and
        self._O, each {start: size}, a block counted once, the parameters
        first) and their totals: looked up again only when their pointer
        lists change (parameters: read at each step's start; optimizer
        state: after the optimizer phase), not at every boundary. The lists
        are the same objects while nothing changed, so the usual check
        (_known's) is one identity test each."""
        param_ptrs = self._param_ptrs
        if param_ptrs is not self._param_key:
            if param_ptrs != self._param_key:
                self._P, self._P_fwd = self._lookup(param_ptrs)
                self._p_total = sum(self._P.values())
                self._opt_key = None      # optimizer state is counted after the parameters
            self._param_key = param_ptrs
        opt_ptrs = self._opt_ptrs
        if opt_ptrs is None:
            opt_ptrs = self._optimizer_ptrs()
        if opt_ptrs is not self._opt_key:
            if opt_ptrs != self._opt_key:
                self._O, owned = self._lookup(opt_ptrs, (self._P,))
                self._o_total = sum(self._O.values())
                self._PO_fwd = _add(self._P_fwd, owned)
                self._grad_ids = None     # gradients are counted after both
                self._grads_unread = True
            self._opt_key = opt_ptrs

    def _grad_blocks(self):
        """The gradients' blocks not already parameters' or optimizer
        state's (self._G, self._g_total; self._owned_fwd: what of all known
        blocks carries a forward tag, by module): looked up again only when
        some parameter's .grad is another tensor than at the last lookup
        (ids compared; weak references flag a cached gradient that died,
        after which a new tensor could have its id). The gradients are read
        (a C-level pass over the parameters) at a step's start, after each
        backward and once a known one died, not at every boundary: reading
        .grad makes a Python object for each new gradient, tens of us for a
        model's worth. A gradient set by hand elsewhere counts as
        temporaries until the next of those."""
        if not self._grads_unread and not self._grad_dead:
            return
        self._grads_unread = False
        # The callback is a C list append: no Python frame per gradient freed.
        dead = []
        if self._ext is not None:
            r = self._ext.scan_grads(self._params, None if self._grad_dead else self._grad_ids,
                                     dead.append)
            if r is None:
                return
            ids, ptrs, refs = r
        else:
            grads = list(map(_GRAD, self._params))
            ids = list(map(id, grads))
            if ids == self._grad_ids and not self._grad_dead:
                return
            live = list(filter(_NOT_NONE, grads))
            ptrs = list(map(self._data_ptr, live))
            refs = list(map(weakref.ref, live, itertools.repeat(dead.append)))
        G, owned = self._lookup(ptrs, (self._P, self._O))
        self._grad_ids = ids
        self._grad_dead = dead
        self._grad_refs = refs
        self._G = G
        self._g_total = sum(G.values())
        self._owned_fwd = _add(self._PO_fwd, owned)
        self._known_now = (self._p_total, self._g_total, self._o_total, self._owned_fwd, None)

    def _read_tags(self):
        """The allocator's per-tag usage now as (keys, live, peak, by_id):
        three parallel sequences, keyed by tag id (ccalloc's view: arrays,
        no dict built) or else by name (a view's tag_usage())."""
        read = self._tag_read
        if read is not None:
            ids, cur, peak = read()
            return ids, cur, peak, True
        return _read_of(self.view.tag_usage())

    def _forward_layout(self, read):
        """(positions of the forward tags in read's keys, their modules,
        whether no module has two of them): derived again only when the keys
        change (a new tag: ccalloc's view then returns another ids object)."""
        keys, by_id = read[0], read[3]
        layout = self._layout
        if layout is not None and layout[0] is keys:
            return layout
        if layout is not None and layout[3] == by_id and layout[0] == keys:
            layout = self._layout = (keys,) + layout[1:]
            return layout
        fwd = self._fwd_tokens if by_id else self._fwd_names
        where = [(i, fwd[k]) for i, k in enumerate(keys) if k in fwd]
        idx = tuple(i for i, _ in where)
        mods = tuple(m for _, m in where)
        layout = self._layout = (keys, idx, mods, by_id, len(set(mods)) == len(mods))
        return layout

    def _known(self):
        """(parameters, gradients, optimizer state, {module: bytes of those
        blocks under a forward tag}, {module: bytes} with exact_saved else
        None): the known tensors' blocks now, from the caches (looked up
        again where pointers or gradients changed)."""
        if self._params is None:  # outside any step so far
            self.refresh()
            self._param_ptrs = self._tensor_ptrs(self._tensors)
        opt_ptrs = self._opt_ptrs
        if opt_ptrs is None or opt_ptrs is not self._opt_key or self._param_ptrs is not self._param_key:
            self._static_blocks()
        self._grad_blocks()
        if self.exact_saved:
            return self._known_now[:4] + (self._saved_modules() if self._saved else {},)
        return self._known_now

    def _derive(self, read, counters, known):
        """The sample dict of a read: read is (keys, live, peak, by_id) of
        the tags, counters (allocated, peak, reserved, largest free block),
        known what _known() gave when it was read."""
        p, g, o, owned, modules = known
        if modules is None:
            # Live bytes allocated in forward, by module, less the blocks
            # already counted as parameters, gradients or optimizer state.
            layout = self._forward_layout(read)
            vals = list(map(read[1].__getitem__, layout[1]))
            if not owned and layout[4]:
                modules = {m: v for m, v in zip(layout[2], vals) if v > 0}
                activations = sum(vals)        # live bytes are never negative
            else:
                modules = {}
                for m, v in zip(layout[2], vals):
                    if v:
                        modules[m] = modules.get(m, 0) + v
                for m, v in owned.items():
                    if m in modules:
                        modules[m] -= v
                modules = {m: v for m, v in modules.items() if v > 0}
                activations = sum(modules.values())
        else:
            activations = sum(modules.values())
        allocated = counters[0]
        kinds = {"parameters": p, "gradients": g, "optimizer_state": o, "activations": activations,
                 "temporaries": allocated - (p + g + o + activations)}
        return {"allocated": allocated, "reserved": counters[2], "peak": counters[1], "kinds": kinds,
                "activations_by_module": modules, "largest_free": counters[3],
                "activations_basis": "saved" if self.exact_saved else "forward"}

    def _saved_modules(self):
        """{module: bytes} of the blocks holding the tensors autograd saved
        (exact_saved), each block once, the first saver's, less known blocks."""
        saved = self._saved
        # Each saved tensor's block is looked up once: it stays the
        # same while the tensor lives (dead ones are dropped here).
        cache = self._saved_blocks
        if cache is None or cache[0] > len(saved):
            cache = self._saved_blocks = [0, [], []]
        tensors = list(map(_CALL, map(_FIRST, saved)))
        n = cache[0]
        if n < len(tensors):
            new = [0 if t is None else t.data_ptr() for t in tensors[n:]]
            r = self.view.blocks(new)
            starts, sizes = r[0], r[1]
            cache[1] += starts
            cache[2] += sizes
            cache[0] = len(tensors)
        alive = list(map(operator.is_not, tensors, itertools.repeat(None)))
        owners = list(itertools.compress(map(_SECOND, saved), alive))
        starts = list(itertools.compress(cache[1], alive))
        sizes = list(itertools.compress(cache[2], alive))
        owners.reverse()
        starts.reverse()
        sizes.reverse()
        first = dict(zip(starts, zip(sizes, owners)))   # the first saver wins
        first.pop(0, None)
        for known in (self._P, self._O, self._G):
            for k in first.keys() & known.keys():
                del first[k]
        modules = {}
        for size, owner in first.values():
            key = owner or "(no module)"
            modules[key] = modules.get(key, 0) + size
        return modules

    def _check(self, allocated, known):
        """At the boundary, the check that needs no tag: the parameters',
        gradients' and optimizer state's blocks fit in what is allocated.
        (With the activations, when the sample is derived: a negative
        temporaries kind, which problems() reports.)"""
        if known[0] + known[1] + known[2] > allocated:
            raise memreport.AccountingError(
                f"account: known tensors' blocks hold {known[0] + known[1] + known[2]} bytes "
                f"but only {allocated} are allocated")

    def measure(self, tags=None):
        """The memory now, by kind (no sample kept). tags: view.tag_usage()
        read now (read here when None)."""
        if tags is None and self._one_read is not None:
            known = self._known()
            raw = self._one_read(False)
            read, counters = _split(raw)
        else:
            read = self._read_tags() if tags is None else _read_of(tags)
            known = self._known()
            view = self.view
            counters = view.counters() + (view.largest_free(),)
        s = self._derive(read, counters, known)
        if s["kinds"]["temporaries"] < 0:
            raise memreport.AccountingError(
                f"account: known tensors' blocks hold {s['allocated'] - s['kinds']['temporaries']} "
                f"bytes but only {s['allocated']} are allocated")
        return s


def _add(a, b):
    """{k: a[k] + b[k]} (new dict; a and b unchanged)."""
    if not b:
        return a
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def _uint64s(data):
    """An array('Q') of bytes of uint64s (the extension's scans)."""
    a = array.array("Q")
    a.frombytes(data)
    return a


def _read_of(usage):
    """A tag read (_read_tags) of a {name: (live, peak)} dict."""
    return list(usage), [v[0] for v in usage.values()], [v[1] for v in usage.values()], False


_GRAD = operator.attrgetter("grad")
_CALL = weakref.ref.__call__
_NOT_NONE = functools.partial(operator.is_not, None)
_FIRST = operator.itemgetter(0)
_SECOND = operator.itemgetter(1)
_VALUES = dict.values
_chain = itertools.chain.from_iterable
