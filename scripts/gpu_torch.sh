#!/usr/bin/env bash
# ccalloc inside PyTorch, on a machine with a GPU and PyTorch:
#   1. the pytest suite tests/python (the GPU tests and the host-only package
#      tests), junit XML and log into OUTDIR;
#   2. bench/compare_training.py (speed and memory of real training under each
#      allocator, plus the largest ResNet-50 batch under a memory cap).
#
# Usage: scripts/gpu_torch.sh BUILD_DIR OUTDIR [tests|bench|all] [extra compare_training.py args]
#
# BUILD_DIR must hold allocator/libccalloc_torch.so (cmake --build BUILD_DIR
# --target ccalloc_torch) and, where Abseil is not installed, the libraries
# scripts/device_libs.sh copies into BUILD_DIR/lib. "tests" takes about four
# minutes on an H100; "bench" runs compare_training.py's protocol of record
# (four configurations, 6 rounds) on every workload unless --workloads narrows
# it, about 8 minutes a workload (gpu_round.sh's part `sequential` runs one or
# two a call). Run the parts as two commands where one command has less than
# ten minutes.
#
# Exit status: 0 only if every part that ran passed.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR OUTDIR [tests|bench|all] [compare_training.py args...]" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "$1" && pwd) || exit 2
OUT=$2
PARTS=${3:-all}
shift $(( $# >= 3 ? 3 : 2 ))
case "$PARTS" in tests|bench|all) ;; *) echo "unknown part '$PARTS'" >&2; exit 2 ;; esac
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

LIB="$BUILD/allocator/libccalloc_torch.so"
if [[ ! -f "$LIB" ]]; then
  echo "missing $LIB: cmake --build $BUILD --target ccalloc_torch" >&2
  exit 2
fi
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
export CCALLOC_TORCH_LIBRARY="$LIB"
export LD_LIBRARY_PATH="$BUILD/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
# The OOM shim is compiled once per PyTorch; keep it out of OUTDIR.
export CCALLOC_CACHE="${CCALLOC_CACHE:-${TMPDIR:-/tmp}/ccalloc-cache}"
unset CCALLOC_TORCH_SIMULATE PYTORCH_CUDA_ALLOC_CONF CCALLOC_CONF

cd "$ROOT"
python3 - <<'EOF'
import torch
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, "
      f"{torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU'}", flush=True)
EOF

rc=0
if [[ "$PARTS" == tests || "$PARTS" == all ]]; then
  echo "=== pytest tests/python"
  python3 -m pytest -v -rA -p no:cacheprovider tests/python \
    --junitxml="$OUT/torch_junit.xml" 2>&1 | tee "$OUT/torch_pytest.log"
  t=${PIPESTATUS[0]}
  echo "=== pytest exit status $t"
  [[ $t -eq 0 ]] || rc=1
fi
if [[ "$PARTS" == bench || "$PARTS" == all ]]; then
  echo "=== bench/compare_training.py"
  python3 bench/compare_training.py --max-batch --out "$OUT/compare_training.json" "$@" 2>&1 |
    tee "$OUT/compare_training.log"
  t=${PIPESTATUS[0]}
  echo "=== compare_training exit status $t"
  [[ $t -eq 0 ]] || rc=1
fi
exit $rc
