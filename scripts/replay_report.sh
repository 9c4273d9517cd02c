#!/usr/bin/env bash
# The main job (README's first command): replay every bundled PyTorch
# training trace (traces/*.trace.gz) through PyTorch's native caching-allocator
# policy and ccalloc's, and say how much memory each would have held and at
# what cost in driver time a step.
#
#   scripts/replay_report.sh                       every trace, both policies
#   scripts/replay_report.sh --capacity 24GiB      extra ccalloc-replay options
#   scripts/replay_report.sh --verbose             also the full tables per trace
#
# Installs the build dependencies (scripts/setup.sh, Debian packages), builds
# only the replay tool (Release, clang, in build/default like
# `cmake --preset default`), replays each traces/*.trace.gz on the simulated
# card (no GPU needed), prints per trace a few lines in plain words (peak
# reserved against PyTorch's allocator, modelled driver ms a step after
# warm-up on the allocating thread, priced with bench/driver_costs/h100.json
# unless --driver-costs names a measured table; any out-of-memory), then a
# table with a row per trace and each policy's worst case (--verbose: the
# memory and driver tables of every trace and the worst ratios as well), and
# writes under out/:
#   out/replay.json              every figure of every table
#   out/replay.<trace>.svg       allocated and reserved over the replay
#   out/replay.<trace>.csv       the same, per event
#
# Env: BUILD_DIR (default build/default), OUT_DIR (default out), JOBS (default 2).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
BUILD_DIR=${BUILD_DIR:-build/default}
OUT_DIR=${OUT_DIR:-out}
JOBS=${JOBS:-2}

if [[ -x scripts/setup.sh || -f scripts/setup.sh ]]; then
  bash scripts/setup.sh
else
  echo "[replay] scripts/setup.sh is missing; assuming the dependencies are installed" >&2
fi

if [[ -z "${CMAKE_GENERATOR:-}" ]] && command -v ninja >/dev/null; then
  export CMAKE_GENERATOR=Ninja
fi
# Configure once; later runs only rebuild what changed.
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  echo "[replay] configuring $BUILD_DIR (Release, clang)" >&2
  cmake -S . -B "$BUILD_DIR" -Wno-dev -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
fi
echo "[replay] building ccalloc-replay" >&2
cmake --build "$BUILD_DIR" --target ccalloc-replay -j "$JOBS" >/dev/null

mkdir -p "$OUT_DIR"
shopt -s nullglob
TRACES=(traces/*.trace.gz)
shopt -u nullglob
if [[ ${#TRACES[@]} -eq 0 ]]; then
  echo "[replay] no traces/*.trace.gz to replay" >&2
  exit 1
fi
"$BUILD_DIR/bench/ccalloc-replay" \
  --policy pytorch-native,ccalloc \
  --json "$OUT_DIR/replay.json" \
  --plot "$OUT_DIR/replay.svg" \
  --timeline "$OUT_DIR/replay.csv" \
  --driver-costs bench/driver_costs/h100.json \
  "$@" \
  "${TRACES[@]}"

names=()
for t in "${TRACES[@]}"; do
  n=$(basename "$t")
  names+=("${n%%.*}")
done
echo
echo "Plots: $(printf "$OUT_DIR/replay.%s.svg " "${names[@]}")(open in a browser)"
echo "Data:  $OUT_DIR/replay.json $(printf "$OUT_DIR/replay.%s.csv " "${names[@]}")"
