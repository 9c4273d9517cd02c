"""IPython magics: `%load_ext ccalloc.torch` (ccalloc.torch.load_ipython_extension).

    %ccalloc_lines y = model(x)              # the statement's own line: its peak
    %ccalloc_lines -f model.forward y = model(x)
    %%ccalloc_lines                          # every line of the cell
    %%ccalloc_lines -f step -n               # step's lines and its callees'
    %%ccalloc_profile model optimizer -n 2   # the cell is a training step, run twice:
                                             # the phase/kind report, the SVG inline

%ccalloc_lines options (before the statement): -f EXPR a function to
profile (repeatable; none: the statement or cell itself), -n [DEPTH]
nested profiling, -d DEVICE, -s PREFIX save .txt/.json/.html, -r return the
LineProfiler, -t text even in a notebook. %%ccalloc_profile MODEL
[OPTIMIZER] options: -n STEPS, -o EXPR keyword arguments of
ccalloc.torch.profile (a dict expression), -s PREFIX (prof.save), -r, -t.

IPython is never imported at load time: the magics are registered through
the shell's register_magic_function, they parse their own options, run the
code with exec in the shell's user namespace (through the shell's
transform_cell when it has one) and show results with IPython.display when
it is importable (DISPLAY, when set, instead: the host tests' fake shell).
"""

import argparse
import itertools
import linecache
import re
import shlex

DISPLAY = None          # a callable(obj) that replaces IPython.display.display
_cells = itertools.count(1)


def _usage_error():
    try:
        from IPython.core.error import UsageError
        return UsageError
    except ImportError:
        return ValueError


def load(ip):
    ip.register_magic_function(_lines_magic(ip), magic_kind="line_cell", magic_name="ccalloc_lines")
    ip.register_magic_function(_profile_magic(ip), magic_kind="cell", magic_name="ccalloc_profile")


def _show(obj, text=False):
    if DISPLAY is not None:
        DISPLAY(obj)
        return
    display = None
    if not text:
        try:
            from IPython.display import display
        except ImportError:
            display = None
    if display is None:
        print(obj)
    else:
        display(obj)


class SVG:
    """An SVG for IPython's display (_repr_svg_); repr says what it is."""

    def __init__(self, data):
        self.data = data

    def _repr_svg_(self):
        return self.data

    def __repr__(self):
        return f"<SVG, {len(self.data)} bytes: shown inline in a notebook>"


class Text:
    """Text shown as it is (IPython's display of a str would quote it)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

    __str__ = __repr__


_LINE_OPTIONS = {"-f": "value", "--function": "value", "-n": "depth", "--nested": "depth",
                 "-d": "value", "--device": "value", "-s": "value", "--save": "value",
                 "-r": "flag", "--return": "flag", "-t": "flag", "--text": "flag"}
_CANON = {"--function": "-f", "--nested": "-n", "--device": "-d", "--save": "-s",
          "--return": "-r", "--text": "-t"}


def _take(rest):
    """(first token of rest, the rest after it): quoted like a shell word."""
    if rest[:1] in ("'", '"'):
        lex = shlex.shlex(rest, posix=True)
        lex.whitespace_split = True
        token = lex.get_token()
        # shlex read the token and the whitespace after it.
        consumed = len(rest) - len(lex.instream.read())
        return token, rest[consumed:].lstrip()
    m = re.match(r"(\S+)\s*", rest)
    if m is None:
        return None, rest
    return m.group(1), rest[m.end():]


def split_options(line, spec=None):
    """({option: [values]}, the statement after the options) of a
    %ccalloc_lines line: options come first, "--" ends them."""
    spec = spec or _LINE_OPTIONS
    error = _usage_error()
    opts = {}
    rest = line.strip()
    while rest.startswith("-"):
        name, after = _take(rest)
        if name == "--":
            rest = after
            break
        if name not in spec:
            raise error(f"ccalloc_lines: unknown option {name} (options: -f EXPR, -n [DEPTH], "
                        "-d DEVICE, -s PREFIX, -r, -t; -- ends them)")
        kind, key = spec[name], _CANON.get(name, name)
        rest = after
        if kind == "value":
            value, rest = _take(rest)
            if value is None:
                raise error(f"ccalloc_lines: {name} needs a value")
        elif kind == "depth":
            m = re.match(r"(\d+)(\s+|$)", rest)
            value = True
            if m:
                value, rest = int(m.group(1)), rest[m.end():]
        else:
            value = True
        opts.setdefault(key, []).append(value)
    return opts, rest


def _compile(ip, source, what):
    if hasattr(ip, "transform_cell"):
        source = ip.transform_cell(source)
    filename = f"<ccalloc-{what}-{next(_cells)}>"
    lines = source.splitlines(True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    return compile(source, filename, "exec")


def _device(value):
    if value is None:
        return None
    return int(value) if re.fullmatch(r"\d+", value) else value


def _lines_magic(ip):
    def ccalloc_lines(line, cell=None):
        """Line memory profile of a statement or cell (see ccalloc._notebook)."""
        from .lineprof import LineProfiler
        opts, statement = split_options(line)
        source = cell if cell is not None else statement
        if not source.strip():
            raise _usage_error()("ccalloc_lines: nothing to run (a statement after the options, "
                                 "or a cell)")
        ns = ip.user_ns
        functions = [eval(expr, ns) for expr in opts.get("-f", [])]
        nested = opts.get("-n", [False])[-1]
        device = _device(opts.get("-d", [None])[-1])
        code = _compile(ip, source, "cell" if cell is not None else "line")
        prof = LineProfiler(*functions, nested=nested, device=device)
        if not functions:
            prof.add_function(code)
        with prof:
            exec(code, ns)
        report = prof.report()
        if "-s" in opts:
            report.save(opts["-s"][-1])
        _show(report, text="-t" in opts)
        return prof if "-r" in opts else None
    return ccalloc_lines


def _profile_parser():
    error = _usage_error()

    class Parser(argparse.ArgumentParser):
        def error(self, message):
            raise error(f"ccalloc_profile: {message}")

    p = Parser(prog="%%ccalloc_profile", add_help=False)
    p.add_argument("model")
    p.add_argument("optimizer", nargs="?")
    p.add_argument("-n", "--steps", type=int, default=1)
    p.add_argument("-o", "--options")
    p.add_argument("-s", "--save")
    p.add_argument("-r", "--return", dest="ret", action="store_true")
    p.add_argument("-t", "--text", action="store_true")
    return p


def _profile_magic(ip):
    def ccalloc_profile(line, cell):
        """The memory profiler's phase/kind report of a cell that is one
        training step (run -n times, one step each), with its SVG."""
        from . import torch as ct
        args = _profile_parser().parse_args(shlex.split(line))
        if args.steps < 1:
            raise _usage_error()("ccalloc_profile: -n needs at least 1 step")
        ns = ip.user_ns
        model = eval(args.model, ns)
        optimizer = eval(args.optimizer, ns) if args.optimizer else None
        kwargs = dict(eval(args.options, ns) if args.options else {})
        # The cell's -n steps are what the report is of: every one accounted
        # (the profiler's sampling is for long training runs).
        kwargs.setdefault("sample_every", 1)
        code = _compile(ip, cell, "profile")
        prof = ct.profile(model, optimizer, **kwargs)
        try:
            for _ in range(args.steps):
                with prof.step():
                    exec(code, ns)
        finally:
            prof.close()
        _show(Text(prof.report()), text=args.text)
        if not args.text:
            _show(SVG(prof.svg()))
        if args.save:
            prof.save(args.save)
        return prof if args.ret else None
    return ccalloc_profile
