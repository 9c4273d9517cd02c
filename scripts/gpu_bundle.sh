#!/usr/bin/env bash
# Usage: scripts/gpu_bundle.sh BUILD_DIR [DEST]   (DEST defaults to .gpu)
#
# Gathers what a GPU round needs from a Release build made here into one small
# folder that the device tool can carry (the GPU machine has no Abseil,
# GoogleTest or Benchmark): the GPU test binaries, the benchmark and replay
# tools, the PyTorch plugin, and the Debian shared libraries they load. Layout
# mirrors a build folder (tests/, bench/, allocator/, lib/), so
# scripts/gpu_torch.sh accepts DEST as its BUILD_DIR.
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR [DEST]}" && pwd)
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEST=${2:-$ROOT/.gpu}
rm -rf "$DEST"
mkdir -p "$DEST"/{tests,bench,allocator}
cp "$BUILD"/tests/*_gpu_test "$DEST/tests/"
for tool in ccalloc-replay ccalloc-gpu-bench ccalloc-bench ccalloc-driver-cost; do
  [[ -f "$BUILD/bench/$tool" ]] && cp "$BUILD/bench/$tool" "$DEST/bench/"
done
cp "$BUILD/allocator/libccalloc_torch.so" "$DEST/allocator/"
strip --strip-debug "$DEST"/tests/* "$DEST"/bench/* "$DEST"/allocator/*.so 2>/dev/null || true
"$ROOT/scripts/device_libs.sh" "$DEST" >/dev/null
du -sh "$DEST"
