"""Runs a Jupyter notebook headlessly and writes it back with its outputs.

    python3 -m ccalloc.notebook_run IN.ipynb OUT.ipynb [--engine auto|nbclient|ipython]
                                    [--timeout SECONDS] [--allow-errors] [--cwd DIR]

For the example notebooks of docs/examples/ (the notebook magics of
ccalloc/_notebook.py), on a GPU machine or on the plugin's simulated device,
where Jupyter is often not installed: every code cell runs in order and the
notebook is written with the outputs a Jupyter kernel would give (stream
text, display_data and execute_result with every MIME type the objects
offer: text/plain, text/html, image/svg+xml...; a failed cell's error). The
exit status is 1 when a cell failed, 2 when nothing could run it.

Two engines. nbclient (with nbformat and ipykernel), when importable: a real
kernel in a child process, as `jupyter nbconvert --execute` runs it. Else
IPython's InteractiveShell in this process, with a display publisher and a
display hook that record what the kernel's would send, and sys.stdout and
sys.stderr replaced by recorders around each cell: only IPython is needed, no
Jupyter, no network. What it does not see: output written to file
descriptors 1 and 2 below Python (C code's printf), which a kernel would
forward; widgets and comms. Like nbconvert, the run stops at the first
failed cell (its later cells keep no outputs) unless --allow-errors; a cell
tagged raises-exception may fail.

May call: the standard library, IPython (imported by the in-process engine
only), nbformat and nbclient (by that engine only). No other ccalloc module:
the notebook imports what it uses.
"""

import argparse
import atexit
import contextlib
import json
import math
import os
import signal
import sys
import threading
import time

__all__ = ["run_notebook", "main"]


def _text(value):
    """nbformat's multiline strings: a str or a list of lines."""
    return "".join(value) if isinstance(value, list) else (value or "")


def _expects_error(cell):
    """Jupyter's convention (nbclient, nbval): a cell tagged raises-exception
    is meant to fail; its error neither stops the run nor fails it."""
    return "raises-exception" in cell.get("metadata", {}).get("tags", [])


def _errors(nb):
    return [o for c in nb.get("cells", []) if c.get("cell_type") == "code" and not _expects_error(c)
            for o in c.get("outputs", []) if o.get("output_type") == "error"]


# --- the in-process engine: IPython's InteractiveShell ----------------------------

class _Recorder:
    """The outputs of the cell being run, in the order they came."""

    def __init__(self):
        self.outputs = []
        self.execution_count = None
        self._clear_pending = False
        self._by_display_id = {}

    def start(self, execution_count):
        self.outputs = []
        self.execution_count = execution_count
        self._clear_pending = False

    def _add(self, output):
        if self._clear_pending:
            self.outputs.clear()
            self._clear_pending = False
        self.outputs.append(output)

    def stream(self, name, text):
        if not text:
            return
        last = self.outputs[-1] if self.outputs and not self._clear_pending else None
        # A kernel's stream messages arrive in pieces; Jupyter keeps one
        # output per run of the same stream, and so does this.
        if last is not None and last["output_type"] == "stream" and last["name"] == name:
            last["text"] += text
        else:
            self._add({"output_type": "stream", "name": name, "text": text})

    def display(self, data, metadata, transient=None, update=False):
        display_id = (transient or {}).get("display_id")
        if update:
            # update_display(): the outputs that carry the id change in place.
            for out in self._by_display_id.get(display_id, []):
                out["data"], out["metadata"] = dict(data), dict(metadata or {})
            return
        out = {"output_type": "display_data", "data": dict(data), "metadata": dict(metadata or {})}
        if display_id is not None:
            self._by_display_id.setdefault(display_id, []).append(out)
        self._add(out)

    def result(self, data, metadata):
        self._add({"output_type": "execute_result", "execution_count": self.execution_count,
                   "data": dict(data), "metadata": dict(metadata or {})})

    def error(self, ename, evalue, traceback):
        self._add({"output_type": "error", "ename": ename, "evalue": evalue,
                   "traceback": list(traceback)})

    def clear(self, wait):
        if wait:
            self._clear_pending = True
        else:
            self.outputs.clear()


class _Stream:
    """sys.stdout or sys.stderr while a cell runs: text goes to the recorder."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, recorder, name):
        self._recorder, self.name = recorder, name

    def write(self, text):
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._recorder.stream(self.name, text)
        return len(text)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def writable(self):
        return True


def _shell(recorder):
    """A fresh InteractiveShell singleton (IPython.display reaches the
    singleton) whose display publisher, display hook and tracebacks go to
    recorder."""
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class Publisher(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False,
                    **kwargs):
            recorder.display(data, metadata, transient, update)

        def clear_output(self, wait=False):
            recorder.clear(wait)

    class Hook(DisplayHook):
        # The base class prints "Out[n]: repr"; a kernel sends the whole
        # format dict as execute_result instead.
        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            recorder.result(format_dict, md_dict)

        def finish_displayhook(self):
            pass

    class Shell(InteractiveShell):
        displayhook_class = Hook
        display_pub_class = Publisher

        def _showtraceback(self, etype, evalue, stb):
            recorder.error(getattr(etype, "__name__", str(etype)), str(evalue), stb)

    config = Config()
    # No history file: a headless run leaves nothing in ~/.ipython's
    # database and starts no saving thread.
    config.HistoryManager.hist_file = ":memory:"
    config.InteractiveShell.colors = "NoColor"    # tracebacks as plain text in the JSON
    InteractiveShell.clear_instance()
    return Shell.instance(config=config)


@contextlib.contextmanager
def _cell_timeout(seconds):
    """A TimeoutError raised in the cell after `seconds` (SIGALRM; no limit
    where there is no SIGALRM or off the main thread, where no signal
    handler can be set)."""
    if not seconds or not hasattr(signal, "SIGALRM") \
            or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise TimeoutError(f"the cell ran past --timeout {seconds:g} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _run_ipython(nb, cwd, timeout, allow_errors):
    recorder = _Recorder()
    shell = _shell(recorder)
    stopped = False
    old_cwd = os.getcwd()
    os.chdir(cwd)
    try:
        for cell in nb.get("cells", []):
            if cell.get("cell_type") != "code" or stopped:
                continue
            count = shell.execution_count
            recorder.start(count)
            try:
                with contextlib.redirect_stdout(_Stream(recorder, "stdout")), \
                        contextlib.redirect_stderr(_Stream(recorder, "stderr")), \
                        _cell_timeout(timeout):
                    result = shell.run_cell(_text(cell.get("source")), store_history=True)
                error = result.error_before_exec or result.error_in_exec
            except TimeoutError as e:
                # The alarm went off after the cell's code, outside IPython's
                # handler: the cell still ran past its time.
                error = e
            if error is not None and not any(o["output_type"] == "error" for o in recorder.outputs):
                # A UsageError (a magic's bad arguments) is only printed to
                # stderr by IPython; a notebook's reader should see it failed.
                recorder.error(type(error).__name__, str(error), [f"{type(error).__name__}: {error}"])
            cell["outputs"], cell["execution_count"] = recorder.outputs, count
            if error is not None and not allow_errors and not _expects_error(cell):
                stopped = True
    finally:
        os.chdir(old_cwd)
        # What the shell registered to run at exit, now: a second run in this
        # process gets a shell of its own.
        shell.atexit_operations()
        atexit.unregister(shell.atexit_operations)
        type(shell).clear_instance()
    return nb


# --- nbclient: a real kernel -------------------------------------------------------

def _nbclient_importable():
    try:
        import ipykernel  # noqa: F401
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
    except ImportError:
        return False
    return True


def _run_nbclient(nb, cwd, timeout, allow_errors):
    import nbclient
    import nbformat
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    # reads(), not from_dict(): it joins the sources kept as lists of lines,
    # which nbclient takes as strings.
    node = nbformat.reads(json.dumps(nb), as_version=4)
    client = nbclient.NotebookClient(node, timeout=math.ceil(timeout) if timeout else None,
                                     allow_errors=allow_errors,
                                     resources={"metadata": {"path": cwd}})

    def executed(cell, cell_index, execute_reply):
        # A UsageError (a magic's bad arguments) fails the cell with no error
        # output, only stderr text: record it, as the in-process engine does.
        reply = (execute_reply or {}).get("content", {})
        if reply.get("status") == "error" and not any(
                o.get("output_type") == "error" for o in cell.outputs):
            cell.outputs.append(nbformat.v4.new_output(
                "error", ename=reply.get("ename", "Error"), evalue=reply.get("evalue", ""),
                traceback=reply.get("traceback") or [f"{reply.get('ename')}: {reply.get('evalue')}"]))
    client.on_cell_executed = executed   # nbclient >= 0.6; before it, no such hook
    try:
        client.execute()
    except CellExecutionError:
        pass   # the failed cell holds its error output; the caller counts it
    except (CellTimeoutError, DeadKernelError) as e:
        # nbclient records no output for these. The cell that was running is
        # the last one the kernel numbered (it numbers a cell as it starts).
        started = [c for c in node.cells if c.cell_type == "code" and c.get("execution_count")]
        if started:
            started[-1].outputs.append(nbformat.v4.new_output(
                "error", ename=type(e).__name__, evalue=str(e), traceback=[str(e)]))
    return json.loads(nbformat.writes(node))


# --- entry points ------------------------------------------------------------------

def run_notebook(nb, cwd=".", engine="auto", timeout=600, allow_errors=False):
    """Runs the code cells of notebook `nb` (a dict of nbformat 4 JSON) and
    returns it with their outputs (the in-process engine fills `nb` itself).
    engine: "nbclient", "ipython", or "auto" (nbclient where importable)."""
    if nb.get("nbformat") != 4:
        raise ValueError(f"not an nbformat 4 notebook (nbformat {nb.get('nbformat')!r})")
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    if engine == "auto":
        engine = "nbclient" if _nbclient_importable() else "ipython"
    if engine == "nbclient":
        return _run_nbclient(nb, cwd, timeout, allow_errors)
    if engine == "ipython":
        return _run_ipython(nb, cwd, timeout, allow_errors)
    raise ValueError(f"engine is auto, nbclient or ipython, not {engine!r}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python3 -m ccalloc.notebook_run",
        description="Runs a notebook's code cells in order and writes it with their outputs.")
    parser.add_argument("input", help="the notebook (.ipynb, nbformat 4)")
    parser.add_argument("output", help="where the executed notebook is written")
    parser.add_argument("--engine", choices=("auto", "nbclient", "ipython"), default="auto",
                        help="nbclient (a Jupyter kernel) or IPython in this process; "
                             "auto: nbclient where importable")
    parser.add_argument("--timeout", type=float, default=600,
                        help="seconds a cell may run (0: no limit; default 600)")
    parser.add_argument("--allow-errors", action="store_true",
                        help="run the cells after a failed one too")
    parser.add_argument("--cwd", help="the folder the cells run in (default: the notebook's)")
    args = parser.parse_args(argv)
    with open(args.input, encoding="utf-8") as f:
        nb = json.load(f)
    if nb.get("nbformat") != 4:
        print(f"ccalloc.notebook_run: {args.input} is not an nbformat 4 notebook "
              f"(nbformat {nb.get('nbformat')!r}); `jupyter nbconvert --to notebook` upgrades it",
              file=sys.stderr)
        return 2
    cwd = args.cwd or os.path.dirname(os.path.abspath(args.input))
    engine = args.engine
    if engine == "auto":
        engine = "nbclient" if _nbclient_importable() else "ipython"
    if engine == "ipython":
        try:
            import IPython  # noqa: F401
        except ImportError as e:
            # The import's own words too: an IPython that is there but lacks
            # a dependency (or its package metadata) says which.
            print("ccalloc.notebook_run: needs IPython (or nbclient, nbformat and ipykernel); "
                  f"neither is importable (import IPython: {e})", file=sys.stderr)
            return 2
    t0 = time.perf_counter()
    nb = run_notebook(nb, cwd=cwd, engine=engine, timeout=args.timeout,
                      allow_errors=args.allow_errors)
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump(nb, f, indent=1, ensure_ascii=False)
        f.write("\n")
    ran = sum(1 for c in nb["cells"] if c.get("cell_type") == "code" and c.get("execution_count"))
    errors = _errors(nb)
    print(f"ccalloc.notebook_run: {ran} code cells run in {time.perf_counter() - t0:.1f} s "
          f"({engine}), {len(errors)} failed; written {args.output}", file=sys.stderr)
    for e in errors:
        print(f"  {e['ename']}: {e['evalue']}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
