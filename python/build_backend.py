"""In-tree PEP 517 build backend of the ccalloc package (pyproject.toml).

`pip install .` in the checkout calls build_wheel() here. It needs nothing
from a package index (`requires = []`): no setuptools, no wheel, no
scikit-build. It

1. configures a minimal CMake build (Release; the plugin only, no tests or
   benchmarks; Abseil from third_party/abseil-cpp, static: -DCCALLOC_VENDORED_ABSL=ON)
   in build/pip/ of the checkout (~/.cache/ccalloc/pip-build/ if the checkout
   is read-only), kept between runs so a second install only relinks what
   changed (CCALLOC_BUILD_DIR overrides the folder);
2. builds the target ccalloc_torch (jobs: CMAKE_BUILD_PARALLEL_LEVEL, else
   the CPU count; Ninja when it is installed), showing CMake's output on
   stderr (`pip install -v .` to see it);
3. writes the wheel itself: every file under python/ccalloc/ (the .py modules,
   csrc/ sources and headers, _boot/sitecustomize.py),
   ccalloc/lib/libccalloc_torch.so, python/ccalloc-autoload.pth at the root
   of site-packages (CCALLOC=1 enables ccalloc in every Python process of the
   environment: ccalloc/_autoload.py), and the .dist-info (METADATA, WHEEL,
   entry_points.txt with the console script ccalloc-run, RECORD with sha256).

Env: CCALLOC_BUILD_DIR, CMAKE_BUILD_PARALLEL_LEVEL, CMAKE_GENERATOR, CC/CXX,
CUDA_HOME (where include/cuda.h is; also looked for in /usr/local/cuda and in
the nvidia-* wheels PyTorch installs), CCALLOC_CMAKE_ARGS (extra -D options).
cmake and ninja come from PATH, else from the Python environment's bin/.
"""

import base64
import glob
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile

NAME = "ccalloc"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG_DIR = os.path.join(ROOT, "python", NAME)
PLUGIN = "libccalloc_torch.so"
PLUGIN_DEST = f"{NAME}/lib/{PLUGIN}"   # ccalloc/_plugin.py looks there
SUMMARY = "A caching allocator for GPU memory, usable from PyTorch"
# The start-up hook: site.py executes its one `import` line in every
# interpreter of the environment; it costs a dictionary lookup unless CCALLOC is set.
PTH = "ccalloc-autoload.pth"
PTH_SOURCE = os.path.join(ROOT, "python", PTH)
# Console scripts (pyproject.toml's [project.scripts] says the same).
CONSOLE_SCRIPTS = {"ccalloc-run": "ccalloc.run:launch"}
# Files of the checkout that never go into the package.
SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = (".pyc", ".pyo", ".so", ".o")


def _log(*args):
    print("ccalloc build:", *args, file=sys.stderr, flush=True)


def _version():
    text = open(os.path.join(PKG_DIR, "__init__.py"), encoding="utf-8").read()
    m = re.search(r'^__version__\s*=\s*"([^"]+)"', text, re.M)
    if not m:
        raise RuntimeError("ccalloc build: no __version__ in python/ccalloc/__init__.py")
    return m.group(1)


def _dist_name():
    return f"{NAME}-{_version()}"


def _platform_tag():
    return sysconfig.get_platform().replace("-", "_").replace(".", "_")


def _wheel_tag():
    # Pure Python code plus a C-ABI shared library loaded with ctypes: any
    # Python 3 on this platform.
    return f"py3-none-{_platform_tag()}"


# --- metadata ----------------------------------------------------------------

def _metadata():
    lines = [
        "Metadata-Version: 2.1",
        f"Name: {NAME}",
        f"Version: {_version()}",
        f"Summary: {SUMMARY}",
        "Requires-Python: >=3.8",
        "Classifier: Programming Language :: Python :: 3",
        "Classifier: Operating System :: POSIX :: Linux",
    ]
    readme = os.path.join(ROOT, "README.md")
    body = ""
    if os.path.isfile(readme):
        lines.append("Description-Content-Type: text/markdown")
        body = open(readme, encoding="utf-8").read()
    return "\n".join(lines) + "\n\n" + body


def _wheel_file():
    return ("Wheel-Version: 1.0\n"
            "Generator: ccalloc build_backend\n"
            "Root-Is-Purelib: false\n"
            f"Tag: {_wheel_tag()}\n")


def _entry_points():
    return ("[console_scripts]\n"
            + "".join(f"{name} = {target}\n" for name, target in sorted(CONSOLE_SCRIPTS.items())))


def _write_dist_info(directory):
    info = os.path.join(directory, f"{_dist_name()}.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata())
    with open(os.path.join(info, "WHEEL"), "w", encoding="utf-8") as f:
        f.write(_wheel_file())
    with open(os.path.join(info, "entry_points.txt"), "w", encoding="utf-8") as f:
        f.write(_entry_points())
    return os.path.basename(info)


# --- the CMake build ------------------------------------------------------------

def _cuda_include():
    """A folder with cuda.h (only the header is needed; the driver is dlopen'ed)."""
    candidates = []
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            candidates.append(os.path.join(os.environ[env], "include"))
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include"))
    candidates.append("/usr/local/cuda/include")
    # PyTorch's wheels depend on NVIDIA's (nvidia/cuda_runtime/include/cuda.h
    # for CUDA 12, nvidia/cu13/include/cuda.h for CUDA 13). pip's isolated
    # build environment hides site-packages from sys.path, not from sysconfig.
    sites = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib")} | set(sys.path)
    for site in sorted(s for s in sites if s):
        candidates.extend(sorted(glob.glob(os.path.join(site, "nvidia", "*", "include"))))
    for d in candidates:
        if os.path.isfile(os.path.join(d, "cuda.h")):
            return d
    return None


def _search_path():
    """PATH, then the interpreter's bin folder: CMake and Ninja installed with
    pip into the environment are found even when it is not activated."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    for d in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        if d and os.path.isdir(d) and d not in dirs:
            dirs.append(d)
    return os.pathsep.join(dirs)


def _tool_env():
    """The environment for CMake, Ninja and the compiler. pip's isolated build
    sets PYTHONPATH (to a sitecustomize that hides the environment's
    site-packages) and PYTHONNOUSERSITE; a `cmake` or `ninja` that pip
    installed is a Python script importing its own package from those
    site-packages, so it must not inherit them."""
    env = dict(os.environ, PATH=_search_path())
    if "pip-build-env" in env.get("PYTHONPATH", "") or "pip-build-env" in env.get("PYTHONHOME", ""):
        env.pop("PYTHONPATH", None)
        env.pop("PYTHONNOUSERSITE", None)
    return env


def _run(cmd, **kwargs):
    _log("$ " + " ".join(shlex.quote(c) for c in cmd))
    # CMake's and the compiler's output go to stderr: pip shows it with -v.
    env = _tool_env()
    subprocess.run(cmd, check=True, stdout=sys.stderr, stderr=sys.stderr, env=env, **kwargs)


def _cached_value(cache, key):
    try:
        with open(cache, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.rstrip("\n").split("=", 1)[1]
    except OSError:
        pass
    return None


def _build_dir():
    d = os.environ.get("CCALLOC_BUILD_DIR")
    if d:
        return os.path.abspath(d)
    build = os.path.join(ROOT, "build")
    if os.access(build if os.path.isdir(build) else ROOT, os.W_OK):
        return os.path.join(build, "pip")
    # A read-only checkout: a cache folder of its own.
    cache = os.environ.get("CCALLOC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "ccalloc")
    return os.path.join(cache, "pip-build", hashlib.sha256(ROOT.encode()).hexdigest()[:12])


def build_plugin():
    """Configures and builds libccalloc_torch.so; returns its path."""
    cmake = shutil.which("cmake", path=_search_path())
    if not cmake:
        raise RuntimeError("ccalloc build: cmake not found on PATH (CMake >= 3.22 is needed)")
    build = _build_dir()
    cache = os.path.join(build, "CMakeCache.txt")
    # A cache from another checkout or another generator cannot be reused.
    home = _cached_value(cache, "CMAKE_HOME_DIRECTORY")
    if home is not None and os.path.realpath(home) != os.path.realpath(ROOT):
        if os.environ.get("CCALLOC_BUILD_DIR"):
            raise RuntimeError(f"ccalloc build: CCALLOC_BUILD_DIR={build} is a CMake build of {home}, "
                               f"not of {ROOT}; choose another folder")
        _log(f"{build} was configured for {home}; starting it afresh")
        shutil.rmtree(build)
    generator = _cached_value(cache, "CMAKE_GENERATOR")
    if generator is None:
        generator = os.environ.get("CMAKE_GENERATOR") or (
            "Ninja" if shutil.which("ninja", path=_search_path()) else None)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL") or str(os.cpu_count() or 1)

    args = [cmake, "-S", ROOT, "-B", build, "-Wno-dev"]
    if generator:
        args += ["-G", generator]
    args += [
        "-DCMAKE_BUILD_TYPE=Release",
        "-DCCALLOC_VENDORED_ABSL=ON",
        "-DCCALLOC_BUILD_TESTS=OFF",
        "-DCCALLOC_BUILD_BENCH=OFF",
        "-DCCALLOC_INSTALL=OFF",
        "-DCCALLOC_ZLIB=AUTO",
    ]
    cuda = _cuda_include()
    if cuda:
        _log(f"cuda.h: {cuda}")
        args.append(f"-DCUDA_DRIVER_INCLUDE_DIR={cuda}")
    else:
        _log("cuda.h not found in $CUDA_HOME, /usr/local/cuda or the nvidia-* wheels; "
             "CMake will look once more (set CUDA_HOME to the toolkit)")
    args += shlex.split(os.environ.get("CCALLOC_CMAKE_ARGS", ""))
    t0 = time.monotonic()
    _log(f"configuring {build} ({generator or 'CMake default generator'})")
    _run(args)
    _log(f"building ccalloc_torch with {jobs} jobs (the vendored Abseil the first time: a few minutes)")
    _run([cmake, "--build", build, "--target", "ccalloc_torch", "-j", jobs])
    lib = os.path.join(build, "allocator", PLUGIN)
    if not os.path.isfile(lib):
        raise RuntimeError(f"ccalloc build: the build did not produce {lib}")
    _log(f"built {lib} in {time.monotonic() - t0:.0f}s")
    return lib


# --- archives -------------------------------------------------------------------

def _package_files():
    """(path in the wheel, file on disk) for everything under python/ccalloc/."""
    out = []
    for dirpath, dirnames, filenames in os.walk(PKG_DIR):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(SKIP_SUFFIXES) or name.startswith("."):
                continue
            path = os.path.join(dirpath, name)
            rel = os.path.relpath(path, os.path.dirname(PKG_DIR)).replace(os.sep, "/")
            out.append((rel, path))
    return out


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _zip_add(zf, arcname, data, executable=False):
    info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
    zf.writestr(info, data)


def _write_wheel(wheel_directory, plugin_path):
    dist_info = f"{_dist_name()}.dist-info"
    wheel_name = f"{NAME}-{_version()}-{_wheel_tag()}.whl"
    target = os.path.join(wheel_directory, wheel_name)
    entries = []
    for arcname, path in _package_files():
        with open(path, "rb") as f:
            entries.append((arcname, f.read(), False))
    with open(plugin_path, "rb") as f:
        entries.append((PLUGIN_DEST, f.read(), True))
    with open(PTH_SOURCE, "rb") as f:
        entries.append((PTH, f.read(), False))
    entries.append((f"{dist_info}/METADATA", _metadata().encode("utf-8"), False))
    entries.append((f"{dist_info}/WHEEL", _wheel_file().encode("utf-8"), False))
    entries.append((f"{dist_info}/entry_points.txt", _entry_points().encode("utf-8"), False))
    record = [_record_line(a, d) for a, d, _ in entries] + [f"{dist_info}/RECORD,,"]
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode("utf-8"), False))
    tmp = target + ".part"
    with zipfile.ZipFile(tmp, "w") as zf:
        for arcname, data, executable in entries:
            _zip_add(zf, arcname, data, executable)
    os.replace(tmp, target)
    _log(f"wrote {target} ({len(entries)} files)")
    return wheel_name


# --- PEP 517 hooks ----------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    os.makedirs(wheel_directory, exist_ok=True)
    return _write_wheel(wheel_directory, build_plugin())


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the checkout (git ls-files) in NAME-VERSION.tar.gz."""
    os.makedirs(sdist_directory, exist_ok=True)
    base = _dist_name()
    try:
        files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], check=True,
                               capture_output=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError) as e:
        raise RuntimeError(f"ccalloc build: an sdist is made from a git checkout ({e})")
    files = [f for f in files if f and os.path.isfile(os.path.join(ROOT, f))]
    name = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for f in sorted(files):
            tar.add(os.path.join(ROOT, f), arcname=f"{base}/{f}", recursive=False)
        pkg_info = _metadata().encode("utf-8")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        info.mtime = int(time.time())
        tar.addfile(info, io.BytesIO(pkg_info))
    _log(f"wrote {os.path.join(sdist_directory, name)} ({len(files)} files)")
    return name
