#!/usr/bin/env bash
# Installs what ccalloc needs to build and test, from Debian packages only.
# Idempotent and quiet: when everything is present it only checks and returns.
# The CUDA toolkit is not a package here: only its headers are needed
# (/usr/local/cuda/include/cuda.h, or $CUDA_HOME/include); the code opens
# libcuda at run time.
set -euo pipefail

PACKAGES=(
  clang cmake libclang-rt-14-dev   # compiler, sanitizer and fuzzer runtimes
  libabsl-dev zlib1g-dev           # library dependencies
  libgtest-dev googletest          # tests (GTest::gtest, GTest::gmock)
  libbenchmark-dev                 # micro-benchmarks
  python3-pytest                   # the peer suite's host test (tests/peer/ drives pytest)
)
# (and python3 with venv: below)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done

# The package check of scripts/test.sh makes a venv with pip in it
# (`python3 -m venv`), which Debian's python3 can only do with python3-venv.
if ! command -v python3 >/dev/null; then
  missing+=(python3 python3-venv)
elif ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
  missing+=(python3-venv)
fi

if [[ ${#missing[@]} -gt 0 ]]; then
  echo "[setup] installing: ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

cuda_h=""
for d in "${CUDA_HOME:-}" /usr/local/cuda; do
  [[ -n "$d" && -f "$d/include/cuda.h" ]] && { cuda_h="$d/include/cuda.h"; break; }
done
if [[ -z "$cuda_h" ]]; then
  echo "[setup] error: cuda.h not found (looked in \$CUDA_HOME/include and" \
       "/usr/local/cuda/include); the CUDA toolkit headers are needed to build." >&2
  exit 1
fi
