"""A line-by-line GPU memory profiler: bytes allocated and freed per line,
live after it, and the peak reached during it.

    @ccalloc.torch.profile_lines          # the table is printed at exit
    def step(x, w):
        y = (x @ w).relu().sum()          # peak in line: the 1 GiB product shows
        return y

    prof = ccalloc.torch.line_profiler(step, nested=True)
    with prof:
        step(x, w)
    print(prof.report())                  # also .json(), .html(), .records()

How it sees lines. Only the code objects of the functions given are traced
(with nested profiling, also the functions they call, at any depth or up to
a given one): on Python >= 3.12 through sys.monitoring's local events on
those code objects (every other function runs at full speed), before that
through sys.settrace, whose global hook sees every call but traces only
those frames. At each boundary (a traced function starts, resumes, goes to
a new line, yields, returns or unwinds) the profiler reads the allocator
once: allocated bytes now, their peak since the last boundary, and the
cumulative bytes ever allocated and freed; then resets the peak. With
ccalloc that is two host-side C calls into the plugin (its counters, then
ccalloc_torch_reset_peak_stats; no CUDA call, no dict); on PyTorch's own
allocator torch.cuda.memory_stats() and reset_peak_memory_stats().

So a line's figures are exact: allocated and freed are the differences of
the cumulative counters across the line, live after is memory_allocated()
when the line ends, and its peak is the allocator's own peak counter over
exactly that line (a temporary made and freed inside the line shows, which
sampling memory_allocated() at line boundaries cannot show). A line that
calls functions includes what they do; with nested profiling their lines
have rows of their own as well (inclusive, like line_profiler's times).
Figures are summed over a line's executions (allocated, freed), the
largest of them (peak, transient) or the last (live after).

Caveats: the counters are the device's, so allocations of other threads
during a line count in it (the autograd engine's during backward() belong
there); the peak counters PyTorch reports (max_memory_allocated) are reset
at every boundary while profiling (max_allocated keeps the profiled peak).

May call: ccalloc._plugin's Plugin (through its lib), ccalloc.torch (the
default view), ccalloc._lineprof_output (tables, JSON, HTML); torch only
for the default view on PyTorch's allocator.
"""

import atexit
import functools
import inspect
import os
import sys
import sysconfig
import threading

__all__ = ["LineProfiler", "profile_lines", "default_view"]

# ccalloc_torch_stats (csrc/ccalloc_torch.h): allocated_bytes[0] is stat 12
# of 4 int64s each (current, peak, allocated, freed).
_STATS_INT64 = 29 * 4 + 6
_ALLOCATED = 12 * 4

# A stack entry (one traced frame): [code, line, allocated at the line's
# start, freed at its start, live at its start, peak so far in the line,
# depth below its target, nested spec, counted, counts a hit].
_CODE, _LINE, _A0, _F0, _LIVE0, _PEAK, _DEPTH, _SPEC, _COUNTED, _HIT = range(10)

# A line's record: [hits, allocated, freed, live after (last), peak, transient,
# live after (largest)].
_HITS, _ALLOC, _FREED, _LIVE, _RPEAK, _TRANS, _LIVE_MAX = range(7)

# The line key of a frame's entry segment: from its start to its first line
# event (argument binding; no line of its own, not shown).
ENTRY = 0

_active = {}   # view.key() -> the LineProfiler enabled on that device


class _CcallocLineView:
    """ccalloc's counters of one device: read() is (allocated, peak since the
    last read, bytes ever allocated, bytes ever freed), the peak reset in the
    same step; two host-side C calls into preallocated buffers."""

    kind = "ccalloc"

    def __init__(self, plugin, device):
        import ctypes
        self.plugin, self.device = plugin, device
        self._stats = (ctypes.c_int64 * _STATS_INT64)()
        self._ref = ctypes.byref(self._stats)
        lib = plugin.lib
        self._get = _bare(lib, "ccalloc_torch_get_stats")
        self._reset = _bare(lib, "ccalloc_torch_reset_peak_stats")
        self.read()   # a bad device fails here, not inside the traced function

    def read(self):
        if self._get(self.device, self._ref) or self._reset(self.device):
            self.plugin._check(self.plugin.lib.ccalloc_torch_last_error_code() or 1)
        return self._stats[_ALLOCATED:_ALLOCATED + 4]

    def key(self):
        return ("ccalloc", self.plugin.path, self.device)


class _TorchLineView:
    """PyTorch's allocator (any: torch.cuda.memory_stats()), the same read."""

    kind = "torch"

    def __init__(self, torch, device=None):
        self.torch = torch
        self.device = torch.cuda.current_device() if device is None else torch.device(device).index
        self._stats = torch.cuda.memory_stats
        self._reset = torch.cuda.reset_peak_memory_stats

    def read(self):
        s = self._stats(self.device)
        self._reset(self.device)
        return [s.get("allocated_bytes.all.current", 0), s.get("allocated_bytes.all.peak", 0),
                s.get("allocated_bytes.all.allocated", 0), s.get("allocated_bytes.all.freed", 0)]

    def key(self):
        return ("cuda", self.device)


def _bare(lib, name):
    """lib's function `name` without argtypes (a Python int goes as a C int,
    a byref as a pointer): a cheaper call, made twice per boundary."""
    import ctypes
    try:
        fn = ctypes.CDLL(lib._name)[name]
    except (OSError, AttributeError, TypeError):
        return getattr(lib, name)
    fn.restype = ctypes.c_int
    return fn


def default_view(device=None):
    """ccalloc's counters when ccalloc is PyTorch's allocator, or when its
    plugin is loaded and PyTorch has not initialised CUDA on another
    allocator (a simulated device, host tests); else PyTorch's."""
    from . import torch as ct
    torch = sys.modules.get("torch")
    plugin = ct._plugin_obj
    if plugin is not None and (ct.is_enabled() or torch is None or not torch.cuda.is_initialized()):
        return _CcallocLineView(plugin, ct._device_index(device))
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("ccalloc line profiler: no CUDA device and no ccalloc plugin loaded "
                           "(ccalloc.torch.enable() or ccalloc.torch.load())")
    return _TorchLineView(torch, device)


def _code_of(fn):
    """The code object of a function, method, partial, staticmethod or
    classmethod, a decorated function (__wrapped__) or a code object."""
    seen = 0
    while seen < 32:
        seen += 1
        if inspect.iscode(fn):
            return fn
        if isinstance(fn, (staticmethod, classmethod)):
            fn = fn.__func__
        elif isinstance(fn, functools.partial):
            fn = fn.func
        elif inspect.ismethod(fn):
            fn = fn.__func__
        elif hasattr(fn, "__wrapped__"):
            fn = fn.__wrapped__
        elif inspect.isfunction(fn):
            return fn.__code__
        elif hasattr(fn, "__code__"):
            return fn.__code__
        else:
            break
    raise TypeError(f"ccalloc line profiler: no Python code to trace in {fn!r} "
                    "(a C function, or an object without __code__)")


def _library_dirs():
    """Folders whose code nested profiling skips by default, and whose frames
    the tensor report looks past for the allocating one: the standard
    library, this package and torch (when imported)."""
    dirs = set()
    for key in ("stdlib", "platstdlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.realpath(path))
    dirs.add(os.path.dirname(os.path.realpath(__file__)))
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        dirs.add(os.path.dirname(os.path.realpath(torch.__file__)))
    return tuple(d.rstrip(os.sep) + os.sep for d in dirs)


class LineProfiler:
    """Per-line memory of the given functions (see the module's docstring).

    functions: the functions (methods, code objects) to trace.
    nested: False: only those functions' lines (what they call counts in
        the calling line); True: also the lines of every Python function
        they call, at any depth, except the standard library's, torch's and
        ccalloc's; an int: the same down to that many calls deep; a
        callable(code) -> bool: the functions it accepts, at any depth.
    device: the CUDA device (default: the current one).
    view: what reads the allocator (default: default_view(device)).
    backend: "auto" (sys.monitoring on Python >= 3.12, else sys.settrace),
        "monitoring" or "settrace".
    """

    def __init__(self, *functions, nested=False, device=None, view=None, backend="auto"):
        if backend == "auto":
            backend = "monitoring" if hasattr(sys, "monitoring") else "settrace"
        if backend not in ("monitoring", "settrace"):
            raise ValueError(f"ccalloc line profiler: backend must be 'auto', 'monitoring' or "
                             f"'settrace', not {backend!r}")
        if backend == "monitoring" and not hasattr(sys, "monitoring"):
            raise ValueError("ccalloc line profiler: sys.monitoring needs Python >= 3.12")
        _check_nested(nested)
        self.backend_name = backend
        self.nested = nested
        self.device = device
        self.view = view
        self._targets = {}        # code -> nested spec
        self._order = []          # codes in the order first seen (targets, then nested)
        self._stats = {}          # (code, line) -> record
        self._calls = {}          # code -> calls
        self._stack = []
        self._accept = {}         # code -> whether nested profiling may trace it
        self._libs = None
        self._enabled = 0
        self._backend = None
        self._thread = None
        self.max_allocated = 0
        for fn in functions:
            self.add_function(fn)

    # --- what is traced --------------------------------------------------------
    def add_function(self, fn, nested=None):
        """Traces fn's lines from now on (also while enabled)."""
        spec = self.nested if nested is None else nested
        _check_nested(spec)
        code = _code_of(fn)
        self._targets[code] = spec
        if code not in self._calls:
            self._order.append(code)
            self._calls[code] = 0
        if self._backend is not None:
            self._backend.watch(code)
            self._backend.nested_changed()
        return fn

    def functions(self):
        """The code objects traced so far (targets, then the nested ones seen)."""
        return list(self._order)

    def _any_nested(self):
        return any(spec is not False for spec in self._targets.values())

    def _accepts(self, code, spec, depth):
        """Whether nested profiling under `spec` traces `code` at `depth`."""
        if spec is False:
            return False
        if callable(spec) and spec is not True:
            ok = self._accept.get((code, spec))
            if ok is None:
                ok = self._accept[(code, spec)] = bool(spec(code))
            return ok
        if spec is not True and depth > spec:
            return False
        return self._library_ok(code)

    def _never(self, code):
        """Whether no nested spec of any target could ever trace `code`."""
        for spec in self._targets.values():
            if spec is False:
                continue
            if callable(spec):
                if self._accepts(code, spec, 0):
                    return False
            elif self._library_ok(code):
                return False
        return True

    def _library_ok(self, code):
        ok = self._accept.get(code)
        if ok is None:
            if self._libs is None:
                self._libs = _library_dirs()
            name = code.co_filename
            path = os.path.realpath(name) if not name.startswith("<") else name
            ok = not (name.startswith("<frozen") or path.startswith(self._libs))
            self._accept[code] = ok
        return ok

    # --- enabling --------------------------------------------------------------
    @property
    def enabled(self):
        return self._enabled > 0

    def enable(self):
        """Starts tracing (nests: as many disable() calls end it)."""
        if self._enabled:
            self._enabled += 1
            return
        if self.view is None:
            self.view = default_view(self.device)
        key = self.view.key()
        other = _active.get(key)
        if other is not None and other is not self:
            raise RuntimeError("ccalloc line profiler: another line profiler is enabled on this "
                               "device (both would reset its peak counters); add the functions "
                               "to that one instead (add_function)")
        self._read = self.view.read
        self._read()   # the first line's peak starts here
        self._thread = threading.get_ident()
        self._backend = (_Monitoring if self.backend_name == "monitoring" else _Settrace)(self)
        self._backend.start()
        _active[key] = self
        self._enabled = 1

    def disable(self):
        if not self._enabled:
            return
        self._enabled -= 1
        if self._enabled:
            return
        self._backend.stop()
        self._backend = None
        _active.pop(self.view.key(), None)
        self._stack.clear()

    def __enter__(self):
        self.enable()
        return self

    def __exit__(self, *exc):
        self.disable()
        return False

    def run(self, fn, *args, **kwargs):
        """fn(*args, **kwargs) with fn traced and the profiler enabled."""
        if _code_of(fn) not in self._targets:
            self.add_function(fn)
        with self:
            return fn(*args, **kwargs)

    def wrap(self, fn):
        """fn, profiled on each call (a generator function: while it runs)."""
        self.add_function(fn)
        return _shared_wrapper(self, fn)

    def reset(self):
        """Forgets the figures gathered so far (keeps the functions)."""
        self._stats.clear()
        for code in self._calls:
            self._calls[code] = 0
        self.max_allocated = 0

    # --- the boundaries (called by the backends) -----------------------------------
    def _start(self, code, line, counted, depth, spec, hit):
        """A traced frame starts (hit: a call) or resumes (a generator)."""
        cur, peak, a, f = self._read()
        stack = self._stack
        for e in reversed(stack):
            if e[_PEAK] >= peak:
                break
            e[_PEAK] = peak
        stack.append([code, line, a, f, cur, cur, depth, spec, counted, hit])
        if counted and hit:
            self._calls[code] += 1

    def _line(self, code, line):
        stack = self._stack
        if not stack:
            return
        top = stack[-1]
        if top[_CODE] is not code or not top[_COUNTED]:
            return   # a frame that started before the profiler, or is not counted
        cur, peak, a, f = self._read()
        for e in reversed(stack):
            if e[_PEAK] >= peak:
                break
            e[_PEAK] = peak
        self._close(top, cur, a, f)
        top[_LINE] = line
        top[_A0] = a
        top[_F0] = f
        top[_LIVE0] = cur
        top[_PEAK] = cur
        top[_HIT] = True

    def _end(self, code):
        """A traced frame returns, yields or unwinds."""
        stack = self._stack
        if not stack or stack[-1][_CODE] is not code:
            return
        top = stack.pop()
        if not top[_COUNTED]:
            return
        cur, peak, a, f = self._read()
        if peak > top[_PEAK]:
            top[_PEAK] = peak
        for e in reversed(stack):
            if e[_PEAK] >= peak:
                break
            e[_PEAK] = peak
        self._close(top, cur, a, f)

    def _close(self, e, cur, a, f):
        key = (e[_CODE], e[_LINE])
        r = self._stats.get(key)
        if r is None:
            r = self._stats[key] = [0, 0, 0, 0, 0, 0, 0]
        if e[_HIT]:
            r[_HITS] += 1
        r[_ALLOC] += a - e[_A0]
        r[_FREED] += f - e[_F0]
        r[_LIVE] = cur
        peak = e[_PEAK]
        if peak > r[_RPEAK]:
            r[_RPEAK] = peak
            if peak > self.max_allocated:
                self.max_allocated = peak
        transient = peak - max(e[_LIVE0], cur)
        if transient > r[_TRANS]:
            r[_TRANS] = transient
        if cur > r[_LIVE_MAX]:
            r[_LIVE_MAX] = cur

    def _nested_start(self, code):
        """(counted, depth, spec) for a call of a code that is no target."""
        stack = self._stack
        if not stack:
            return None
        top = stack[-1]
        if not top[_COUNTED]:
            return None
        depth = top[_DEPTH] + 1
        spec = top[_SPEC]
        if not self._accepts(code, spec, depth):
            return None
        if code not in self._calls:
            self._calls[code] = 0
            self._order.append(code)
        return depth, spec

    # --- output (ccalloc/_lineprof_output.py) --------------------------------------
    def records(self):
        """The figures as data: a list of functions, each {"function", "file",
        "first_line", "calls", "lines": [{"line", "code", "hits", "allocated",
        "freed", "live_after", "live_after_max", "peak", "transient"}]}
        (executed lines only, in line order)."""
        from . import _lineprof_output as out
        return out.records(self)

    def report(self, functions=None):
        """A LineReport: str() is the table, _repr_html_ the HTML (notebooks)."""
        from . import _lineprof_output as out
        return out.LineReport(self, functions)

    def table(self, functions=None):
        return str(self.report(functions))

    def json(self):
        return self.report().json()

    def html(self):
        return self.report().html()

    def print(self, file=None):
        print(self.table(), file=file or sys.stdout)

    def save(self, prefix):
        """Writes prefix.txt (the table), prefix.json and prefix.html."""
        return self.report().save(prefix)


def _check_nested(spec):
    if spec is True or spec is False or callable(spec):
        return
    if isinstance(spec, int) and spec >= 0:
        return
    raise ValueError(f"ccalloc line profiler: nested must be False, True, a depth >= 0 or "
                     f"a callable(code) -> bool, not {spec!r}")


class _Settrace:
    """sys.settrace on the calling thread: the global hook sees every call
    and returns the local tracer for traced frames only."""

    def __init__(self, prof):
        self.prof = prof
        self._previous = None
        targets, nested_start, start = prof._targets, prof._nested_start, prof._start
        line, end = prof._line, prof._end

        def local(frame, event, arg):
            if event == "line":
                line(frame.f_code, frame.f_lineno)
            elif event == "return":
                end(frame.f_code)
            return local

        def call(frame, event, arg):
            code = frame.f_code
            spec = targets.get(code, _MISSING)
            if spec is not _MISSING:
                line = frame.f_lineno
                fresh = _fresh(code, line)
                start(code, ENTRY if fresh else line, True, 0, spec, fresh)
                return local
            found = nested_start(code)
            if found is None:
                return None
            line = frame.f_lineno
            fresh = _fresh(code, line)
            start(code, ENTRY if fresh else line, True, found[0], found[1], fresh)
            return local
        self._call = call

    def start(self):
        self._previous = sys.gettrace()
        if self._previous is not None:
            import warnings
            warnings.warn("ccalloc line profiler: replacing this thread's trace function "
                          f"{self._previous!r} while it profiles (put back after)", RuntimeWarning,
                          stacklevel=4)
        sys.settrace(self._call)

    def stop(self):
        sys.settrace(self._previous)

    def watch(self, code):
        pass

    def nested_changed(self):
        pass


_MISSING = object()
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _fresh(code, line):
    """Whether a settrace "call" event starts the frame (else it resumes a
    generator or coroutine, which starts on its def line and resumes on the
    line it suspended at)."""
    return not code.co_flags & _RESUMABLE or line == code.co_firstlineno


class _Monitoring:
    """sys.monitoring (Python >= 3.12): local events on the traced code
    objects only; with nested profiling, PY_START everywhere (disabled for
    each code object nested profiling never traces) to find the callees."""

    disabled_any = False   # whether a run returned DISABLE (restart_events undoes it)

    def __init__(self, prof):
        mon = sys.monitoring
        self.prof = prof
        self.mon = mon
        ev = mon.events
        self.local_events = ev.PY_START | ev.PY_RESUME | ev.PY_RETURN | ev.PY_YIELD | ev.LINE
        self.tool = None
        for tool in (mon.PROFILER_ID, 3, 4, 5):
            if mon.get_tool(tool) is None:
                self.tool = tool
                break
        if self.tool is None:
            raise RuntimeError("ccalloc line profiler: no free sys.monitoring tool id "
                               "(pass backend='settrace')")
        self._watched = set()

    def start(self):
        mon, ev, tool, prof = self.mon, self.mon.events, self.tool, self.prof
        mon.use_tool_id(tool, "ccalloc line profiler")
        targets, watched, thread = prof._targets, self._watched, prof._thread
        get_ident, start, line, end = threading.get_ident, prof._start, prof._line, prof._end
        nested_start, DISABLE = prof._nested_start, mon.DISABLE
        watch = self.watch

        def on_start(code, offset, resumed=False):
            if get_ident() != thread:
                return None
            spec = targets.get(code, _MISSING)
            if spec is not _MISSING:
                start(code, _line_at(code, offset) if resumed else ENTRY, True, 0, spec, not resumed)
                return None
            if code not in watched:
                # Seen through the global PY_START (nested profiling only).
                if prof._never(code):
                    _Monitoring.disabled_any = True
                    return DISABLE
                found = nested_start(code)
                if found is None:
                    return None
                watch(code)
                start(code, ENTRY, True, found[0], found[1], True)
                return None
            found = nested_start(code)
            first = _line_at(code, offset) if resumed else ENTRY
            if found is None:
                # Keeps the stack paired with the frame's return.
                start(code, first, False, 0, False, False)
            else:
                start(code, first, True, found[0], found[1], not resumed)
            return None

        def on_resume(code, offset):
            return on_start(code, offset, True)

        def on_line(code, lineno):
            if get_ident() == thread:
                line(code, lineno)

        def on_return(code, offset, value):
            if get_ident() == thread:
                end(code)

        def on_throw(code, offset, exc):
            # An exception thrown into a suspended generator resumes it.
            if code in targets or code in watched:
                return on_start(code, offset, True)
            return None

        mon.register_callback(tool, ev.PY_START, on_start)
        mon.register_callback(tool, ev.PY_RESUME, on_resume)
        mon.register_callback(tool, ev.LINE, on_line)
        mon.register_callback(tool, ev.PY_RETURN, on_return)
        mon.register_callback(tool, ev.PY_YIELD, on_return)
        mon.register_callback(tool, ev.PY_UNWIND, on_return)
        mon.register_callback(tool, ev.PY_THROW, on_throw)
        for code in targets:
            self.watch(code)
        self.nested_changed()

    def nested_changed(self):
        ev = self.mon.events
        events = ev.PY_UNWIND | ev.PY_THROW
        if self.prof._any_nested():
            events |= ev.PY_START
            if _Monitoring.disabled_any:
                # Code objects an earlier run disabled PY_START for (its
                # nested specs never traced them) may be wanted now.
                _Monitoring.disabled_any = False
                self.mon.restart_events()
        self.mon.set_events(self.tool, events)

    def watch(self, code):
        if code not in self._watched:
            self._watched.add(code)
            self.mon.set_local_events(self.tool, code, self.local_events)

    def stop(self):
        mon, ev, tool = self.mon, self.mon.events, self.tool
        mon.set_events(tool, 0)
        for code in self._watched:
            mon.set_local_events(tool, code, 0)
        self._watched.clear()
        for event in (ev.PY_START, ev.PY_RESUME, ev.LINE, ev.PY_RETURN, ev.PY_YIELD, ev.PY_UNWIND,
                      ev.PY_THROW):
            mon.register_callback(tool, event, None)
        mon.free_tool_id(tool)


def _line_at(code, offset):
    """The line of the instruction at `offset` (where a generator resumes)."""
    line = code.co_firstlineno
    for start, end, lineno in code.co_lines():
        if start <= offset < end:
            return lineno if lineno is not None else line
        if lineno is not None:
            line = lineno
    return line


# --- @profile_lines: one profiler per device for every decorated function ---------

_decorated = {}      # device argument -> LineProfiler
_printed_at_exit = []


def profile_lines(fn=None, *, nested=False, device=None, at_exit=True, backend="auto"):
    """Decorator: profiles the function's lines on every call.

        @ccalloc.torch.profile_lines
        def train_step(...): ...

        @ccalloc.torch.profile_lines(nested=True, at_exit=False)
        def forward(...): ...

    Every function decorated for the same device shares one LineProfiler
    (so decorated functions may call each other), reached as
    fn.line_profiler; with at_exit (the default) its table is printed when
    the interpreter exits. nested, backend: as for LineProfiler (nested is
    per function)."""
    def decorate(f):
        key = device
        prof = _decorated.get(key)
        if prof is None:
            prof = _decorated[key] = LineProfiler(device=device, backend=backend)
        prof.add_function(f, nested=nested)
        wrapped = _shared_wrapper(prof, f)
        if at_exit and prof not in _printed_at_exit:
            _printed_at_exit.append(prof)
            if len(_printed_at_exit) == 1:
                atexit.register(_print_decorated)
        return wrapped
    if fn is not None:
        return decorate(fn)
    return decorate


def _shared_wrapper(prof, fn):
    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args, **kwargs):
            with prof:
                return (yield from fn(*args, **kwargs))
        gen_wrapper.line_profiler = prof
        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with prof:
            return fn(*args, **kwargs)
    wrapper.line_profiler = prof
    return wrapper


def _print_decorated():
    for prof in _printed_at_exit:
        if any(prof._calls.values()):
            prof.print()
