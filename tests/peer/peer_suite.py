#!/usr/bin/env python3
"""PyTorch's own CUDA tests under PyTorch's allocator and under ccalloc, in
one call: which tests pass natively and fail with ccalloc.

    python3 tests/peer/peer_suite.py --tests .scratch/pytorch_tests \
        -k "memory or snapshot or graph or oom or alloc" --budget 500 --jobs 4 \
        --configs native,ccalloc,ccalloc_classic \
        --ccalloc-path python/ccalloc/_boot:python \
        --ccalloc-env CCALLOC_TORCH_LIBRARY=.gpu/allocator/libccalloc_torch.so \
        --out OUT/peer.json --logs OUT/peer_logs

(scripts/gpu_round.sh .gpu OUT peer runs this; docs/pytorch.md.)

--tests is a copy of PyTorch's test/ files (scripts/fetch_peer_tests.sh puts
test_cuda.py, test_cuda_expandable_segments.py and test_cuda_multigpu.py
under DEST/test). The selection (-k, -m) is collected once per file, under
the reference configuration (the first), then every test class runs in a
pytest process of its own per configuration, --jobs processes at once on the
one GPU, so that one crash or hang cannot cascade; the tests PyTorch marks
`serial` (@serialTest: OOM, memory fraction, large tensors) run first, a
process per file and configuration, one process at a time. A class whose process would start after --budget seconds
is not started and is listed as skipped; a process is stopped at the budget's
end and what it finished still counts.

Configurations (--configs):
  native           PyTorch's allocator: CCALLOC=0, no CCALLOC_CONF
  ccalloc          CCALLOC=1 (the python/ccalloc/_boot hook on PYTHONPATH:
                   --ccalloc-path), ccalloc's defaults (growable segments)
  ccalloc_classic  the same with CCALLOC_CONF=expandable_segments:False
                   (ccalloc's classic segments, one device allocation each)
  NAME             any other, from --config-env NAME:VAR=VAL (repeatable;
                   also adds to or overrides the three above)
A configuration whose name starts with "ccalloc" must have ccalloc enabled in
every process and the others must not (the peer plugin's marker:
ccalloc.torch.status() and torch's get_allocator_backend()); a process that
says otherwise fails the run.

Tests that pass under the reference and fail (or error, or crash the process)
under another configuration are run again alone, each in a pytest process of
its own (the serial ones one at a time), while the budget lasts: "fails alone
too" or "passed alone".
Each is either listed with its reason in docs/pytorch.md's section on this
suite (--known: bullets "- `Class::test_name` ...", fnmatch patterns) or
counted as undocumented. Exit status: 1 when a process had the wrong
allocator, a difference is undocumented or the collection failed; else 2 when
the budget left tests unrun or unfinished (INCOMPLETE); else 0.
"""

import argparse
import concurrent.futures
import fnmatch
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STUBS = os.path.join(HERE, "stubs")
DEFAULT_FILES = ("test_cuda.py", "test_cuda_expandable_segments.py", "test_cuda_multigpu.py")
# What a file's __main__ does before run_tests() and pytest does not.
FILE_SETTINGS = {"test_cuda_expandable_segments.py": "expandable_segments:True"}
FAIL = ("failed", "error", "crashed")
PASS = ("passed", "xpassed")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tests", required=True,
                   help="folder of PyTorch's test files (DEST or DEST/test of fetch_peer_tests.sh)")
    p.add_argument("--files", default=",".join(DEFAULT_FILES),
                   help="test files in it, comma-separated; missing ones are reported and left out")
    p.add_argument("-k", dest="k", default="", help="pytest -k selection")
    p.add_argument("-m", dest="m", default="", help="pytest -m selection")
    p.add_argument("--configs", default="native,ccalloc,ccalloc_classic")
    p.add_argument("--config-env", action="append", default=[], metavar="NAME:VAR=VAL")
    p.add_argument("--ccalloc-path", default="",
                   help="prepended to PYTHONPATH in ccalloc* configurations (os.pathsep-separated)")
    p.add_argument("--ccalloc-env", action="append", default=[], metavar="VAR=VAL",
                   help="set in ccalloc* configurations")
    p.add_argument("--budget", type=float, default=500.0, help="seconds for the whole run")
    p.add_argument("--jobs", type=int, default=4, help="pytest processes at once")
    p.add_argument("--timeout", type=float, default=400.0, help="seconds at most per process")
    p.add_argument("--min-start", type=float, default=15.0,
                   help="no process starts with less of the budget left (seconds)")
    p.add_argument("--max-per-process", type=int, default=0,
                   help="split a class of more tests into processes of at most this many (0: never)")
    p.add_argument("--no-serial", action="store_true",
                   help="run `serial`-marked tests with the others")
    p.add_argument("--no-confirm", action="store_true", help="do not rerun differences alone")
    p.add_argument("--no-enabled-check", action="store_true")
    p.add_argument("--known", default=os.path.join(ROOT, "docs", "pytorch.md"),
                   help="the documented differences (a Markdown file; '' for none)")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--out", default="", help="JSON result")
    p.add_argument("--logs", default="", help="folder for each process's output")
    p.add_argument("--summary", default="", help="also write the plain summary here")
    return p.parse_args(argv)


# --- configurations --------------------------------------------------------------

def is_ccalloc(name):
    return name.startswith("ccalloc")


def config_envs(args):
    names = [c.strip() for c in args.configs.split(",") if c.strip()]
    extra = {}
    for item in args.config_env:
        name, _, assign = item.partition(":")
        var, eq, val = assign.partition("=")
        if not name or not var or not eq:
            raise SystemExit(f"--config-env wants NAME:VAR=VAL, not {item!r}")
        extra.setdefault(name, {})[var] = val
    ccalloc_env = {}
    for item in args.ccalloc_env:
        var, eq, val = item.partition("=")
        if not var or not eq:
            raise SystemExit(f"--ccalloc-env wants VAR=VAL, not {item!r}")
        ccalloc_env[var] = val
    envs = {}
    for name in names:
        if name == "native":
            env = {"CCALLOC": "0", "CCALLOC_CONF": None}
        elif name == "ccalloc":
            env = dict(ccalloc_env, CCALLOC="1")
        elif name == "ccalloc_classic":
            env = dict(ccalloc_env, CCALLOC="1", CCALLOC_CONF="expandable_segments:False")
        elif name in extra:
            env = dict(ccalloc_env, CCALLOC="1") if is_ccalloc(name) else {}
        else:
            raise SystemExit(f"unknown configuration {name!r}: define it with --config-env {name}:VAR=VAL")
        env.update(extra.get(name, {}))
        envs[name] = env
    if not names:
        raise SystemExit("--configs is empty")
    return names, envs


def process_env(args, config_env, config, test_files, extra):
    env = dict(os.environ)
    for var, val in config_env.items():
        if val is None:
            env.pop(var, None)
        else:
            env[var] = val
    path = [HERE, STUBS]
    if is_ccalloc(config) and args.ccalloc_path:
        path += [os.path.abspath(p) for p in args.ccalloc_path.split(os.pathsep) if p]
    if env.get("PYTHONPATH"):
        path.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(path)
    env["PYTHONUNBUFFERED"] = "1"
    env["PEER_TEST_FILES"] = os.pathsep.join(test_files)
    env.update(extra)
    return env


# --- processes ---------------------------------------------------------------------

class Runner:
    def __init__(self, args, test_dir, test_files, names, envs, work):
        self.args, self.test_dir, self.test_files = args, test_dir, test_files
        self.names, self.envs, self.work = names, envs, work
        self.start = time.monotonic()
        self.deadline = self.start + args.budget
        self.lock = threading.Lock()
        self.count = 0
        self.procs = set()

    def left(self):
        return self.deadline - time.monotonic()

    def pytest(self, config, targets, tag, extra_env=None, extra_args=(), collect=False):
        """Runs one pytest process; returns its record (results, marker, ...), or
        None when the budget had no room left to start it."""
        left = self.left()
        if left < self.args.min_start:
            return None
        timeout = min(self.args.timeout, left)
        with self.lock:
            self.count += 1
            n = self.count
        base = os.path.join(self.work, f"{n:04d}_{config}")
        results, marker = base + ".results.jsonl", base + ".marker.json"
        collect_out = base + ".collect.json"
        extra = {"PEER_RESULTS": results, "PEER_MARKER": marker}
        if collect:
            extra["PEER_COLLECT_OUT"] = collect_out
        extra.update(extra_env or {})
        env = process_env(self.args, self.envs[config], config, self.test_files, extra)
        cmd = [self.args.python, "-m", "pytest", "-p", "peer_plugin", "-p", "no:cacheprovider",
               "-c", os.devnull, "--rootdir", self.test_dir, "-rfE", "--tb=short",
               "-W", "ignore::pytest.PytestUnknownMarkWarning"]
        cmd += ["--collect-only", "-q"] if collect else ["-q"]
        cmd += list(extra_args) + list(targets)
        log_path = None
        if self.args.logs:
            log_path = os.path.join(self.args.logs, f"{n:04d}_{config}_{safe(tag)}.log")
        started = time.monotonic()
        timed_out = False
        with open(log_path or os.devnull, "w", encoding="utf-8") as log:
            log.write("$ " + " ".join(shlex.quote(c) for c in cmd[:40]) +
                      (" ..." if len(cmd) > 40 else "") + "\n")
            log.flush()
            proc = subprocess.Popen(cmd, cwd=self.test_dir, env=env, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            with self.lock:
                self.procs.add(proc)
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_group(proc)
                rc = proc.wait()
            finally:
                with self.lock:
                    self.procs.discard(proc)
        record = {"config": config, "tag": tag, "rc": rc, "timed_out": timed_out,
                  "seconds": round(time.monotonic() - started, 1), "log": log_path,
                  "results": read_jsonl(results), "marker": read_json(marker)}
        if collect:
            record["collected"] = (read_json(collect_out) or {}).get("items")
        return record

    def stop_all(self):
        with self.lock:
            procs = list(self.procs)
        for proc in procs:
            kill_group(proc)


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def safe(text):
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text)[:80]


def read_jsonl(path):
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if line:
                    try:
                        out.append(json.loads(line))
                    except ValueError:
                        pass
    except OSError:
        pass
    return out


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# --- the run -------------------------------------------------------------------------

# The classes of test_cuda.py that test the allocator itself: they start
# before the others (then the largest first), so that a budget too short for
# the whole selection skips the optimizer and kernel classes that only match
# it by name ("graph") rather than these.
ALLOCATOR_CLASSES = ("TestCuda", "TestCudaMallocAsync", "TestMemPool", "TestBlockStateAbsorption",
                     "TestCachingHostAllocatorCudaGraph")


def g_class(group):
    """The class of a group ("file.py::Class"), or "" for a file's loose tests."""
    return group.split("::")[1] if "::" in group else ""


def group_of(nodeid):
    parts = nodeid.split("::")
    return "::".join(parts[:2]) if len(parts) >= 3 else parts[0]


def known_patterns(path):
    """`Class::test` patterns listed in the peer-suite section of path."""
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return []
    patterns, inside = [], False
    for line in text.splitlines():
        if line.startswith("#"):
            inside = "peer suite" in line.lower()
            continue
        if inside:
            m = re.match(r"\s*[-*]\s+`([^`]*::[^`]*)`", line)
            if m:
                patterns.append(m.group(1).strip())
    return patterns


def documented(nodeid, patterns):
    tail = "::".join(nodeid.split("::")[1:]) or nodeid
    return next((p for p in patterns if fnmatch.fnmatchcase(tail, p)
                 or fnmatch.fnmatchcase(nodeid, p)), None)


def check_marker(config, marker):
    """None when the process had the allocator its configuration asks for, else why not."""
    if marker is None:
        return "no marker (the process ended before its tests were collected)"
    if not marker.get("torch_imported"):
        return None if not is_ccalloc(config) else "torch was never imported, so ccalloc never ran"
    enabled = bool((marker.get("ccalloc") or {}).get("enabled"))
    backend = str(marker.get("allocator_backend", ""))
    if is_ccalloc(config):
        if not enabled:
            return f"ccalloc is not enabled (allocator backend {backend!r})"
        if backend.startswith("native") or backend.startswith("cudaMallocAsync"):
            return f"ccalloc says enabled but torch's allocator backend is {backend!r}"
    elif enabled:
        return f"ccalloc is enabled in a {config} process"
    return None


def run(args):
    test_dir = os.path.abspath(args.tests)
    if os.path.isdir(os.path.join(test_dir, "test")) and not os.path.exists(
            os.path.join(test_dir, DEFAULT_FILES[0])):
        test_dir = os.path.join(test_dir, "test")
    names, envs = config_envs(args)
    reference = names[0]
    files, missing = [], []
    for f in [f.strip() for f in args.files.split(",") if f.strip()]:
        (files if os.path.isfile(os.path.join(test_dir, f)) else missing).append(f)
    if args.logs:
        os.makedirs(args.logs, exist_ok=True)
    work = tempfile.mkdtemp(prefix="peer_suite_")
    runner = Runner(args, test_dir, [os.path.join(test_dir, f) for f in files], names, envs, work)
    select = []
    if args.k:
        select += ["-k", args.k]
    marks = args.m
    result = {"tests_dir": test_dir, "files": files, "missing_files": missing, "k": args.k,
              "m": args.m, "budget_s": args.budget, "jobs": args.jobs, "configs": names,
              "reference": reference, "config_env": {n: envs[n] for n in names},
              "collection": [], "processes": [], "skipped": [], "tests": {},
              "differences": [], "enabled_check": [], "stubs": set()}
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        # 1. Collection, one process per file, under the reference.
        groups = {}   # group -> {"file", "ids": [...], "serial": [...]}
        futures = {}
        for f in files:
            futures[f] = pool.submit(runner.pytest, reference, [f] + select +
                                     (["-m", marks] if marks else []), f"collect_{f}",
                                     collect=True)
        for f in files:
            rec = futures[f].result()
            entry = {"file": f, "rc": None, "collected": 0, "errors": []}
            if rec is None:
                entry["errors"].append("not collected: the budget ran out")
            else:
                entry["rc"] = rec["rc"]
                entry["seconds"] = rec["seconds"]
                entry["log"] = rec["log"]
                entry["errors"] = [f"{r['nodeid']}: {r['message']}" for r in rec["results"]
                                   if r.get("outcome") == "collect_error"]
                items = rec.get("collected") or []
                entry["collected"] = len(items)
                if rec.get("collected") is None and not entry["errors"]:
                    entry["errors"].append(f"collection wrote nothing (exit {rec['rc']}; see its log)")
                for item in items:
                    g = groups.setdefault(group_of(item["nodeid"]),
                                          {"file": f, "ids": [], "serial": []})
                    serial = item.get("serial") and not args.no_serial
                    g["serial" if serial else "ids"].append(item["nodeid"])
            result["collection"].append(entry)

        # 2. The tasks: serial ones first, one at a time; then the rest, the
        # allocator's own classes first (ALLOCATOR_CLASSES), then the largest
        # classes first, all configurations of a class together.
        def chunks(ids):
            n = args.max_per_process
            if n <= 0 or len(ids) <= n:
                return [ids]
            return [ids[i:i + n] for i in range(0, len(ids), n)]

        # The serial tests of a file run in one process per configuration
        # (they are few, and each such process has the GPU to itself).
        serial_tasks, tasks = [], []
        serial_by_file = {}
        for g, info in groups.items():
            serial_by_file.setdefault(info["file"], []).extend(info["serial"])
        for f, ids in serial_by_file.items():
            if ids:
                for cfg in names:
                    serial_tasks.append((f"{f} (serial)", f, cfg, ids))
        for g, info in sorted(groups.items(), key=lambda kv: (
                g_class(kv[0]) not in ALLOCATOR_CLASSES, -len(kv[1]["ids"]))):
            for part in chunks(info["ids"]):
                if part:
                    for cfg in names:
                        tasks.append((g, info["file"], cfg, part))

        outcomes = result["tests"]

        def record(task, rec, phase):
            g, f, cfg, ids = task
            if rec is None:
                result["skipped"].append({"group": g, "config": cfg, "tests": len(ids),
                                          "phase": phase})
                return
            seen = set()
            for r in rec["results"]:
                if r.get("outcome") == "collect_error":
                    continue
                seen.add(r["nodeid"])
                outcomes.setdefault(r["nodeid"], {})[cfg] = {
                    "outcome": r["outcome"], "message": r.get("message", ""),
                    "seconds": r.get("seconds", 0.0)}
            for r in rec["results"]:
                if r.get("outcome") == "collect_error":
                    for i in ids:
                        if i not in seen:
                            seen.add(i)
                            outcomes.setdefault(i, {})[cfg] = {
                                "outcome": "error", "message": "collection: " + r.get("message", ""),
                                "seconds": 0.0}
            unfinished = [i for i in ids if i not in seen]
            if unfinished:
                # The first test that did not finish is the one that was running.
                why = ("stopped at the time limit" if rec["timed_out"]
                       else f"the process ended (exit {rec['rc']}) before it finished")
                outcome = "unfinished" if rec["timed_out"] else "crashed"
                for i in unfinished:
                    outcomes.setdefault(i, {})[cfg] = {"outcome": outcome, "message": why,
                                                       "seconds": 0.0}
                if not rec["timed_out"]:
                    # Only the running test crashed; the rest never ran.
                    for i in unfinished[1:]:
                        outcomes[i][cfg] = {"outcome": "not_run", "message": why, "seconds": 0.0}
            # A process the time limit stopped before its tests were collected
            # never said which allocator it had: its tests count as unfinished,
            # not as a failed check.
            problem = (None if args.no_enabled_check
                       or (rec["timed_out"] and rec["marker"] is None)
                       else check_marker(cfg, rec["marker"]))
            if rec["marker"]:
                result["stubs"].update(rec["marker"].get("stubs") or [])
            result["enabled_check"].append({
                "config": cfg, "group": g, "phase": phase, "ok": problem is None,
                "problem": problem,
                "allocator_backend": (rec["marker"] or {}).get("allocator_backend"),
                "ccalloc_mode": ((rec["marker"] or {}).get("ccalloc") or {}).get("mode")})
            result["processes"].append({
                "group": g, "config": cfg, "phase": phase, "tests": len(ids), "rc": rec["rc"],
                "timed_out": rec["timed_out"], "seconds": rec["seconds"], "log": rec["log"]})

        def settings_env(f):
            s = FILE_SETTINGS.get(f)
            return {"PEER_ALLOCATOR_SETTINGS": s} if s else {}

        for task in serial_tasks:
            g, f, cfg, ids = task
            record(task, runner.pytest(cfg, ids, f"serial_{g}", settings_env(f)), "serial")
        futs = [(task, pool.submit(runner.pytest, task[2], task[3], task[0],
                                   settings_env(task[1]))) for task in tasks]
        for task, fut in futs:
            record(task, fut.result(), "parallel")

        # 3. Differences, confirmed alone.
        diffs = []
        for nodeid, per in sorted(outcomes.items()):
            ref = per.get(reference, {}).get("outcome")
            if ref not in PASS:
                continue
            for cfg in names[1:]:
                got = per.get(cfg, {})
                if got.get("outcome") in FAIL:
                    diffs.append({"nodeid": nodeid, "config": cfg, "outcome": got["outcome"],
                                  "message": got.get("message", "")})
        if diffs and not args.no_confirm:
            # Each in a pytest process of its own, so that "alone" means
            # alone: no earlier test's failure or leftovers in the process.
            # The serial ones one at a time (they want the GPU to themselves),
            # the rest --jobs at once.
            serial_ids = {i for info in groups.values() for i in info["serial"]}

            def confirm(d):
                f = d["nodeid"].split("::")[0]
                rec = runner.pytest(d["config"], [d["nodeid"]], "confirm_" + d["nodeid"],
                                    settings_env(f))
                r = None if rec is None else next(
                    (x for x in rec["results"] if x.get("nodeid") == d["nodeid"]), None)
                if rec is None:
                    d["alone"] = "not rerun (budget)"
                elif r is None:
                    d["alone"] = "did not finish alone"
                else:
                    d["alone"] = ("fails alone too" if r["outcome"] in FAIL
                                  else f"{r['outcome']} alone")
            for d in diffs:
                if d["nodeid"] in serial_ids:
                    confirm(d)
            list(pool.map(confirm, [d for d in diffs if d["nodeid"] not in serial_ids]))
        patterns = known_patterns(args.known)
        for d in diffs:
            d["documented"] = documented(d["nodeid"], patterns)
        result["differences"] = diffs
    finally:
        runner.stop_all()
        pool.shutdown(wait=True)
    result["elapsed_s"] = round(time.monotonic() - runner.start, 1)
    result["stubs"] = sorted(result["stubs"])
    result["torch_version"] = None
    for f in os.listdir(work):
        if f.endswith(".marker.json"):
            m = read_json(os.path.join(work, f)) or {}
            if m.get("torch_version"):
                result["torch_version"] = m["torch_version"]
                break
    result["counts"] = counts(result)
    return result


def counts(result):
    out = {}
    for cfg in result["configs"]:
        c = {}
        for per in result["tests"].values():
            o = per.get(cfg, {}).get("outcome")
            if o:
                c[o] = c.get(o, 0) + 1
        out[cfg] = dict(sorted(c.items()))
    return out


def summary(result):
    lines = []
    w = lines.append
    w(f"peer suite: {', '.join(result['files']) or 'no files'} in {result['tests_dir']}"
      + (f" -k {result['k']!r}" if result["k"] else "") + (f" -m {result['m']!r}" if result["m"] else ""))
    w(f"  torch {result.get('torch_version')}, configurations {', '.join(result['configs'])} "
      f"(reference {result['reference']}), {result['elapsed_s']} s of {result['budget_s']:.0f}, "
      f"{len(result['processes'])} processes, {result['jobs']} at once")
    for f in result["missing_files"]:
        w(f"  missing file: {f}")
    for c in result["collection"]:
        w(f"  collected {c['collected']} from {c['file']}")
        for e in c["errors"]:
            w(f"    COLLECTION ERROR {e}")
    w("counts:")
    for cfg in result["configs"]:
        c = result["counts"].get(cfg, {})
        w(f"  {cfg:16s} " + (", ".join(f"{n} {k}" for k, n in c.items()) or "nothing ran"))
    bad = [e for e in result["enabled_check"] if not e["ok"]]
    backends = {}
    for e in result["enabled_check"]:
        backends.setdefault(e["config"], set()).add(f"{e['allocator_backend']}"
                                                    + (f"/{e['ccalloc_mode']}" if e["ccalloc_mode"] else ""))
    w("allocator in each process: " + "; ".join(
        f"{cfg}: {', '.join(sorted(b))}" for cfg, b in backends.items()))
    if bad:
        w(f"ENABLED CHECK FAILED in {len(bad)} processes:")
        for e in bad[:20]:
            w(f"  {e['config']} {e['group']}: {e['problem']}")
    if result["stubs"]:
        w("stand-ins for what the installed PyTorch lacks: " + ", ".join(result["stubs"]))
    diffs = result["differences"]
    undoc = [d for d in diffs if not d["documented"]]
    w(f"passes natively ({result['reference']}), fails with ccalloc: {len(diffs)} "
      f"({len(undoc)} not in docs/pytorch.md)")
    for d in diffs:
        tag = f"documented ({d['documented']})" if d["documented"] else "UNDOCUMENTED"
        alone = f", {d['alone']}" if d.get("alone") else ""
        w(f"  {d['nodeid']} ({d['config']}): {d['outcome']}{alone}; {tag}")
        if d["message"]:
            w(f"      {d['message']}")
    unfinished = unfinished_by_config(result)
    if unfinished:
        w("not finished (time limit or a crash before them): " +
          ", ".join(f"{cfg} {n}" for cfg, n in unfinished.items()))
    if result["skipped"]:
        w(f"skipped for the budget ({len(result['skipped'])} processes not started):")
        for s in result["skipped"]:
            w(f"  {s['group']} ({s['config']}, {s['tests']} tests, {s['phase']})")
    if not ok_status(result):
        w("peer suite: FAILED")
    elif not complete(result):
        w(f"peer suite: INCOMPLETE ({len(result['skipped'])} processes not started, "
          f"{sum(unfinished.values())} tests not finished): no undocumented difference "
          "in what ran")
    else:
        w("peer suite: OK")
    return "\n".join(lines)


def unfinished_by_config(result):
    """{configuration: tests that got no outcome there} (the time limit, or a
    crash of their process before them), for the configurations with any."""
    counts = {}
    for per in result["tests"].values():
        for cfg, r in per.items():
            if r["outcome"] in ("unfinished", "not_run"):
                counts[cfg] = counts.get(cfg, 0) + 1
    return counts


def complete(result):
    """Whether every selected test ran to an outcome in every configuration."""
    return not result["skipped"] and not unfinished_by_config(result)


def ok_status(result):
    if any(not e["ok"] for e in result["enabled_check"]):
        return False
    if any(c["errors"] for c in result["collection"]) or not result["collection"]:
        return False
    return not any(not d["documented"] for d in result["differences"])


def main(argv=None):
    args = parse_args(argv)
    result = run(args)
    text = summary(result)
    print(text)
    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=1, default=str)
    # 2: nothing wrong in what ran, but not all of it ran (the budget), so
    # the run cannot say the selection passes.
    if not ok_status(result):
        return 1
    return 0 if complete(result) else 2


if __name__ == "__main__":
    sys.exit(main())
