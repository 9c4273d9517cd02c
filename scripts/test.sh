#!/usr/bin/env bash
# The test command (README, .ci/run): every check that CI runs, in order.
#
#   scripts/test.sh                  all of it
#   scripts/test.sh normal install   only some groups (setup always runs)
#
# Groups, each a few steps, each step timed:
#   normal   clang, RelWithDebInfo with assertions on, CCALLOC_DEBUG_CHECKS=1
#            (Validate() after every operation), -Werror (so -Wthread-safety
#            is an error); every test (gpu-labelled ones skip without a device)
#   asan     AddressSanitizer + UndefinedBehaviorSanitizer; every test. Without
#            CCALLOC_DEBUG_CHECKS: Validate() after every op costs ~45x under
#            ASAN, and the normal group already runs every test with it
#   tsan     ThreadSanitizer against an instrumented Abseil
#            (scripts/build_tsan_abseil.sh, cached); the tests labelled `threads`
#   install  `cmake --install` of the normal build into a fresh prefix, then
#            tests/consumer (find_package(ccalloc), the C API) built and run
#   package  the README's `pip install .` into a fresh venv (build/package-venv;
#            the CMake build in build/pip is kept, so a second run only
#            relinks), then from another folder the host tests of the Python
#            package against the installed copy, and ldd of the installed
#            plugin: no libabsl (the vendored Abseil is linked in statically)
#
# The build directories are build/<preset> (CMakePresets.json has the same
# settings). A failing step fails the run but the independent steps still run,
# so one run shows every failure. Exit status: 0 only if every step passed.
#
# Env: JOBS (default 2), CCALLOC_CACHE (TSAN Abseil cache, ~/.cache/ccalloc),
#      CCALLOC_TSAN_LABEL (default threads).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

JOBS=${JOBS:-2}
TSAN_LABEL=${CCALLOC_TSAN_LABEL:-threads}
ALL_GROUPS=(normal asan tsan install package)
if [[ $# -gt 0 ]]; then GROUPS_TO_RUN=("$@"); else GROUPS_TO_RUN=("${ALL_GROUPS[@]}"); fi
for g in "${GROUPS_TO_RUN[@]}"; do
  [[ " ${ALL_GROUPS[*]} " == *" $g "* ]] || { echo "unknown group '$g' (groups: ${ALL_GROUPS[*]})" >&2; exit 2; }
done

# Ninja schedules better and prints less; Makefiles work the same. A build
# directory keeps the generator it was first configured with.
DEFAULT_GENERATOR=${CMAKE_GENERATOR:-}
if [[ -z "$DEFAULT_GENERATOR" ]] && command -v ninja >/dev/null; then
  DEFAULT_GENERATOR=Ninja
fi
unset CMAKE_GENERATOR
generator_for() {  # build dir
  local cache="$1/CMakeCache.txt"
  if [[ -f "$cache" ]]; then
    sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$cache"
  else
    echo "$DEFAULT_GENERATOR"
  fi
}
export CTEST_OUTPUT_ON_FAILURE=1
export CLICOLOR=0

# TSAN in LLVM 14 maps its shadow at fixed addresses and dies on kernels with
# more ASLR entropy (vm.mmap_rnd_bits > 28: "unexpected memory mapping").
# Without ASLR it always works; gtest discovery runs test binaries at build
# time, so the TSAN build runs under it too.
NO_ASLR=()
if setarch "$(uname -m)" -R true 2>/dev/null; then NO_ASLR=(setarch "$(uname -m)" -R); fi

# --- step bookkeeping --------------------------------------------------------
declare -a SUMMARY=()
declare -A STATUS=()
FAILED=()
T_START=$SECONDS

# step NAME NEEDS FUNCTION: runs FUNCTION under `set -e` in a subshell, unless
# the step NEEDS (a step name or "-") did not pass.
step() {
  local name=$1 needs=$2 fn=$3
  if [[ "$needs" != "-" && "${STATUS[$needs]:-}" != PASS ]]; then
    STATUS[$name]=SKIP
    SUMMARY+=("$(printf '  %-14s %-5s %6s   (needs %s)' "$name" SKIP - "$needs")")
    echo "=== [$name] skipped: $needs did not pass"
    return
  fi
  echo
  echo "=== [$name] $(date +%H:%M:%S)"
  local t0=$SECONDS rc
  ( set -e; "$fn" )
  rc=$?
  local dt=$((SECONDS - t0))
  if [[ $rc -eq 0 ]]; then
    STATUS[$name]=PASS
  else
    STATUS[$name]=FAIL
    FAILED+=("$name")
  fi
  SUMMARY+=("$(printf '  %-14s %-5s %5ss' "$name" "${STATUS[$name]}" "$dt")")
  echo "=== [$name] ${STATUS[$name]} in ${dt}s (rc=$rc)"
}

# configure_build PRESET [extra cmake args...]
configure_build() {
  local preset=$1; shift
  local gen; gen=$(generator_for "build/$preset")
  cmake --preset "$preset" -Wno-dev ${gen:+-G "$gen"} "$@"
  cmake --build --preset "$preset" -j "$JOBS"
}

# --- steps ---------------------------------------------------------------------
do_setup() { bash scripts/setup.sh; }

do_normal_build() { configure_build debug-checks; }
# (The debug-checks test preset leaves out the replays of whole traces: those
# that compare policies, lag the GPU, price the events or hold each bundled
# trace to its marks and its driver time. With every structure validated
# after every call they took from 10 s to past the 600 s timeout each on
# CI's 2 cores; the asan step runs them. Its build makes no fuzzer: the corpus runs through
# allocator_fuzz_corpus_runner against the ordinary library.)
do_normal_test() { ctest --preset debug-checks -j "$JOBS"; }

do_asan_build() { configure_build asan; }
do_asan_test() { ctest --preset asan -j "$JOBS"; }

TSAN_ABSL_PREFIX_FILE="$ROOT/build/.tsan-absl-prefix"
do_tsan_absl() {
  mkdir -p build
  local prefix
  prefix=$(bash scripts/build_tsan_abseil.sh | tail -n1)
  test -f "$prefix/lib/cmake/absl/abslConfig.cmake"
  echo "$prefix" >"$TSAN_ABSL_PREFIX_FILE"
  echo "TSAN Abseil: $prefix"
}
do_tsan_build() {
  local prefix
  prefix=$(cat "$TSAN_ABSL_PREFIX_FILE")
  # absl_DIR points at the instrumented package; CMAKE_PREFIX_PATH puts it
  # first for anything else that looks for absl, and the system copy is
  # refused by third_party/dependencies.cmake if it were picked up anyway.
  local gen; gen=$(generator_for build/tsan)
  "${NO_ASLR[@]}" cmake --preset tsan -Wno-dev ${gen:+-G "$gen"} \
    -Dabsl_DIR="$prefix/lib/cmake/absl" -DCMAKE_PREFIX_PATH="$prefix"
  # Only the suites the step runs (ctest -L threads: tests/*_threads_test.cc)
  # and what they link: the rest of the tree is built and tested normally
  # and under ASan, and building it here too cost CI ~2 of its 20 minutes.
  local targets=()
  for src in tests/*_threads_test.cc; do targets+=("$(basename "$src" .cc)"); done
  "${NO_ASLR[@]}" cmake --build --preset tsan -j "$JOBS" --target "${targets[@]}"
}
do_tsan_test() {
  # Same settings as `ctest --preset tsan`, with the label from the env.
  # --no-tests=error: a TSAN stage that runs nothing would pass silently.
  local args=(--test-dir build/tsan -L "$TSAN_LABEL" --output-on-failure --timeout 600)
  if ! TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1" \
       "${NO_ASLR[@]}" ctest "${args[@]}" -j "$JOBS" --no-tests=error; then
    if ! ctest "${args[@]}" -N 2>/dev/null | grep -q 'Test *#'; then
      echo "no test carries the label '$TSAN_LABEL': label the multi-threaded" \
           "suites in tests/CMakeLists.txt (LABELS \"unit;threads\")" >&2
    fi
    return 1
  fi
}

do_install() {
  local prefix="$ROOT/build/install-check" consumer="$ROOT/build/consumer"
  rm -rf "$prefix" "$consumer"
  cmake --install build/debug-checks --prefix "$prefix"
  test -f "$prefix/include/ccalloc/ccalloc.h"
  test -f "$prefix/lib/cmake/ccalloc/ccallocConfig.cmake"
  test -f "$prefix/lib/cmake/ccalloc/ccallocConfigVersion.cmake"
  # Only the installed package may satisfy find_package(ccalloc): no package
  # registry, no build tree.
  cmake -S tests/consumer -B "$consumer" -Wno-dev ${DEFAULT_GENERATOR:+-G "$DEFAULT_GENERATOR"} \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_PREFIX_PATH="$prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  grep -q "^ccalloc_DIR:PATH=$prefix/" "$consumer/CMakeCache.txt"
  cmake --build "$consumer" -j "$JOBS"
  "$consumer/ccalloc_consumer"
}

PKG_VENV="$ROOT/build/package-venv"
do_package_install() {
  rm -rf "$PKG_VENV"
  python3 -m venv "$PKG_VENV"
  # The README's command, run with the venv's pip; offline (the build needs
  # nothing from an index: pyproject.toml has requires = []), -v to show the
  # CMake build.
  CMAKE_BUILD_PARALLEL_LEVEL="$JOBS" PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INDEX=1 \
    "$PKG_VENV/bin/python" -m pip install -v .
}
do_package_test() {
  local tmp; tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  cd "$tmp"   # not the checkout: `import ccalloc` must find the installed copy
  local pkg lib
  pkg=$("$PKG_VENV/bin/python" -c 'import ccalloc, os; print(os.path.dirname(os.path.realpath(ccalloc.__file__)))')
  lib=$("$PKG_VENV/bin/python" -c 'import ccalloc; print(ccalloc.find_library())')
  echo "imported: $pkg"
  echo "plugin:   $lib"
  [[ "$pkg" == "$(realpath "$PKG_VENV")"/* ]] || { echo "ccalloc is not the venv's copy" >&2; return 1; }
  [[ "$lib" == "$pkg/lib/libccalloc_torch.so" ]] || { echo "the plugin is not the installed one" >&2; return 1; }
  ldd "$lib"
  if ldd "$lib" | grep -i absl; then echo "the installed plugin loads Abseil" >&2; return 1; fi
  CCALLOC_TEST_INSTALLED=1 "$PKG_VENV/bin/python" "$ROOT/tests/python/test_package_host.py"
  CCALLOC_TEST_INSTALLED=1 "$PKG_VENV/bin/python" "$ROOT/tests/python/test_profiler_host.py"
  # Enabling without editing code: pip made the console script from
  # entry_points.txt and put the start-up hook in site-packages; CCALLOC=1
  # installs the torch import hook in a bare interpreter, unset imports nothing.
  local site
  site=$("$PKG_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["platlib"])')
  [[ -x "$PKG_VENV/bin/ccalloc-run" ]] || { echo "pip made no ccalloc-run" >&2; return 1; }
  [[ -f "$site/ccalloc-autoload.pth" ]] || { echo "no $site/ccalloc-autoload.pth" >&2; return 1; }
  env -u PYTHONPATH CCALLOC=1 "$PKG_VENV/bin/python" -c \
    'import sys; assert sys.modules["ccalloc._autoload"].status()["waiting"]'
  env -u PYTHONPATH -u CCALLOC "$PKG_VENV/bin/python" -c \
    'import sys; assert not [m for m in sys.modules if m.startswith("ccalloc")]'
  env -u PYTHONPATH -u CCALLOC "$PKG_VENV/bin/ccalloc-run" --conf expandable_segments:False \
    "$PKG_VENV/bin/python" -c 'import os, sys
assert os.environ["CCALLOC"] == "1" and os.environ["CCALLOC_CONF"] == "expandable_segments:False"
assert sys.modules["ccalloc._autoload"].status()["waiting"]'
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$PKG_VENV/bin/python" -m pip uninstall -y ccalloc
  ! "$PKG_VENV/bin/python" -c 'import ccalloc' 2>/dev/null
  [[ ! -e "$site/ccalloc-autoload.pth" && ! -e "$PKG_VENV/bin/ccalloc-run" ]] ||
    { echo "pip uninstall left the launcher behind" >&2; return 1; }
}

# --- run ------------------------------------------------------------------------
echo "ccalloc test.sh: groups: ${GROUPS_TO_RUN[*]}; jobs: $JOBS; generator: ${DEFAULT_GENERATOR:-cmake default}"
step setup - do_setup
for g in "${GROUPS_TO_RUN[@]}"; do
  case $g in
    normal)
      step normal-build setup do_normal_build
      step normal-test normal-build do_normal_test ;;
    asan)
      step asan-build setup do_asan_build
      step asan-test asan-build do_asan_test ;;
    tsan)
      step tsan-absl setup do_tsan_absl
      step tsan-build tsan-absl do_tsan_build
      step tsan-test tsan-build do_tsan_test ;;
    install)
      # Installs the normal build; builds it first when the normal group is not run.
      if [[ -z "${STATUS[normal-build]:-}" ]]; then step normal-build setup do_normal_build; fi
      step install normal-build do_install ;;
    package)
      step package-build setup do_package_install
      step package-test package-build do_package_test ;;
  esac
done

total=$((SECONDS - T_START))
echo
echo "=== summary"
printf '%s\n' "${SUMMARY[@]}"
if [[ ${#FAILED[@]} -eq 0 && " ${STATUS[*]} " != *" SKIP "* ]]; then
  echo "ccalloc test.sh: PASS (${#SUMMARY[@]} steps) in ${total}s"
  exit 0
fi
echo "ccalloc test.sh: FAIL (failed: ${FAILED[*]:-none}; skipped steps count as failures) in ${total}s"
exit 1
