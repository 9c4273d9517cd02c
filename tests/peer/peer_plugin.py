"""The pytest plugin of the peer suite (tests/peer/peer_suite.py), loaded in
every pytest process it starts with `-p peer_plugin` (this folder on
PYTHONPATH). It never imports torch itself: the test files do, and with
CCALLOC=1 ccalloc is enabled right after that import (python/ccalloc/_boot).

From the environment:
  PEER_TEST_FILES   the test files (os.pathsep-separated): their imports of
                    names the installed PyTorch lacks get stand-ins (peer_stub.py)
  PEER_RESULTS      a JSON-lines file: one line per test as it ends (nodeid,
                    outcome, first line of the message, seconds) and one per
                    collection error, so a process killed at its time limit
                    still leaves what it ran
  PEER_MARKER       a JSON file written after collection and again at the
                    end: which allocator this process really had (torch's
                    get_allocator_backend(), ccalloc.torch.status(), the
                    CCALLOC=1 hook's status) and the stand-ins used
  PEER_COLLECT_OUT  with --collect-only: a JSON file of the collected test ids
                    (and whether each is marked `serial`)
  PEER_ALLOCATOR_SETTINGS  given to torch.cuda.memory._set_allocator_settings
                    after collection, as a test file's __main__ would
                    (test_cuda_expandable_segments.py: expandable_segments:True)
"""

import json
import os
import sys
import time

import peer_stub

_files = [f for f in os.environ.get("PEER_TEST_FILES", "").split(os.pathsep) if f]
if _files:
    peer_stub.install(_files)

_reports = {}
_settings_error = None


def _append(path, record):
    if not path:
        return
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(record, default=str) + "\n")
        f.flush()


def _first_line(text, limit=300):
    for line in str(text).splitlines():
        line = line.strip()
        if line:
            return line[:limit]
    return ""


def _message(report):
    longrepr = report.longrepr
    if longrepr is None:
        return ""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:  # a skip: (file, line, reason)
        return _first_line(longrepr[2])
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None and getattr(crash, "message", None):
        return _first_line(crash.message)
    text = str(longrepr).strip().splitlines()
    # the last "E   ..." line, else the last line
    for line in reversed(text):
        if line.startswith("E "):
            return _first_line(line[1:])
    return _first_line(text[-1] if text else "")


def _allocator_state():
    state = {"pid": os.getpid(), "time": time.time(), "torch_imported": "torch" in sys.modules,
             "stubs": peer_stub.used(), "allocator_settings_error": _settings_error}
    torch = sys.modules.get("torch")
    if torch is not None:
        state["torch_version"] = getattr(torch, "__version__", None)
        try:
            state["allocator_backend"] = torch.cuda.memory.get_allocator_backend()
        except Exception as e:  # no CUDA, or an older torch
            state["allocator_backend"] = f"unknown ({type(e).__name__}: {e})"
    ct = sys.modules.get("ccalloc.torch")
    if ct is not None:
        try:
            st = ct.status()
            state["ccalloc"] = {k: st.get(k) for k in ("enabled", "mode", "library", "options")}
        except Exception as e:
            state["ccalloc"] = {"enabled": False, "error": f"{type(e).__name__}: {e}"}
    else:
        state["ccalloc"] = {"enabled": False, "imported": False}
    auto = sys.modules.get("ccalloc._autoload")
    if auto is not None:
        try:
            st = auto.status()
            state["autoload"] = {k: st.get(k) for k in ("installed", "waiting", "enabled")}
        except Exception as e:
            state["autoload"] = {"error": f"{type(e).__name__}: {e}"}
    return state


def _write_marker():
    path = os.environ.get("PEER_MARKER")
    if path:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(_allocator_state(), f, default=str)


def pytest_collectreport(report):
    if report.failed:
        _append(os.environ.get("PEER_RESULTS"), {
            "nodeid": report.nodeid, "outcome": "collect_error", "message": _message(report),
            "seconds": 0.0})


def pytest_collection_finish(session):
    global _settings_error
    out = os.environ.get("PEER_COLLECT_OUT")
    if out:
        items = [{"nodeid": item.nodeid, "serial": item.get_closest_marker("serial") is not None}
                 for item in session.items]
        with open(out, "w", encoding="utf-8") as f:
            json.dump({"items": items}, f)
    settings = os.environ.get("PEER_ALLOCATOR_SETTINGS")
    if settings and not out and "torch" in sys.modules:
        try:
            sys.modules["torch"].cuda.memory._set_allocator_settings(settings)
        except Exception as e:
            _settings_error = f"{type(e).__name__}: {e}"
    _write_marker()


def _skipped(entry, report, xfail):
    """A skip (or an expected failure) in setup or in the call."""
    entry["outcome"] = "xfailed" if xfail else "skipped"
    entry["message"] = _message(report) or str(getattr(report, "wasxfail", ""))


def pytest_runtest_logreport(report):
    entry = _reports.setdefault(report.nodeid, {"seconds": 0.0, "outcome": None, "message": ""})
    entry["seconds"] += getattr(report, "duration", 0.0) or 0.0
    xfail = hasattr(report, "wasxfail")
    if report.when == "setup":
        if report.failed:
            entry["outcome"], entry["message"] = "error", _message(report)
        elif report.skipped:
            _skipped(entry, report, xfail)
    elif report.when == "call":
        if report.passed:
            entry["outcome"] = "xpassed" if xfail else "passed"
        elif report.failed:
            entry["outcome"], entry["message"] = "failed", _message(report)
        elif report.skipped:
            _skipped(entry, report, xfail)
    elif report.when == "teardown":
        if report.failed and entry["outcome"] in (None, "passed", "skipped"):
            entry["outcome"] = "error"
            entry["message"] = "teardown: " + _message(report)
        if entry["outcome"] is None:
            entry["outcome"] = "error"
        _append(os.environ.get("PEER_RESULTS"), {
            "nodeid": report.nodeid, "outcome": entry["outcome"], "message": entry["message"],
            "seconds": round(entry["seconds"], 3)})
        _reports.pop(report.nodeid, None)


def pytest_sessionfinish(session, exitstatus):
    _write_marker()
