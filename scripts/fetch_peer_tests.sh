#!/usr/bin/env bash
# Copies PyTorch's CUDA test files, for the peer suite (tests/peer/peer_suite.py,
# `scripts/gpu_round.sh .gpu OUT peer`), out of a PyTorch repository into
# DEST/test, with the local helpers they import from test/ (not torch.testing:
# the installed torch has that), and DEST/MANIFEST (where from, sha256 of each).
#
#   scripts/fetch_peer_tests.sh SOURCE REV DEST
#
# SOURCE: a bare git directory of pytorch/pytorch (the search tool's `fetch`
# gives one under /work/.mirror/) or a checkout; REV: the tag or commit
# nearest the installed PyTorch (v2.11.0, or origin/release/2.11; `-` takes a
# checkout's files as they are). DEST is git-ignored (.scratch/pytorch_tests
# by convention): PyTorch's files stay out of this project's commits, and reach
# the GPU machine through the device tool's carry. Only the files the suite
# needs are copied (a few hundred KiB).
#
# Env: PEER_TEST_FILES (default: test_cuda.py test_cuda_expandable_segments.py
# test_cuda_multigpu.py).
set -euo pipefail
SRC=${1:?usage: $0 SOURCE REV DEST}
REV=${2:?usage: $0 SOURCE REV DEST}
DEST=${3:?usage: $0 SOURCE REV DEST}
read -r -a FILES <<< "${PEER_TEST_FILES:-test_cuda.py test_cuda_expandable_segments.py test_cuda_multigpu.py}"

if [[ "$REV" != "-" ]] && git --git-dir="$SRC" rev-parse --git-dir >/dev/null 2>&1 \
   && [[ ! -d "$SRC/test" ]]; then
  mode=git
  GIT=(git --git-dir="$SRC")
elif [[ "$REV" != "-" ]] && git -C "$SRC" rev-parse --git-dir >/dev/null 2>&1; then
  mode=git
  GIT=(git -C "$SRC")
elif [[ -d "$SRC/test" ]]; then
  mode=dir
else
  echo "$0: $SRC is neither a git repository nor a folder with test/" >&2
  exit 2
fi
if [[ $mode == git ]]; then
  commit=$("${GIT[@]}" rev-parse --verify "$REV^{commit}")
  version=$("${GIT[@]}" show "$commit:version.txt" 2>/dev/null | head -1 || true)
fi

show() {  # show test/NAME: its text on stdout, or fail
  if [[ $mode == git ]]; then
    "${GIT[@]}" show "$commit:test/$1" 2>/dev/null
  else
    cat "$SRC/test/$1" 2>/dev/null
  fi
}

mkdir -p "$DEST/test"
rm -f "$DEST"/test/*.py "$DEST/MANIFEST"
queue=("${FILES[@]}")
declare -A done=()
missing=()
while ((${#queue[@]})); do
  f=${queue[0]}
  queue=("${queue[@]:1}")
  [[ -n "${done[$f]:-}" ]] && continue
  done[$f]=1
  if ! show "$f" > "$DEST/test/$f"; then
    rm -f "$DEST/test/$f"
    missing+=("$f")
    continue
  fi
  # Local helpers: `import X` / `from X import` where test/X.py exists
  # (test_torch, common_*, ...); torch.testing comes with torch.
  while read -r mod; do
    [[ -z "$mod" || -n "${done[$mod.py]:-}" ]] && continue
    if show "$mod.py" >/dev/null; then queue+=("$mod.py"); fi
  done < <(sed -n -E 's/^[[:space:]]*(from[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)[[:space:]]+import|import[[:space:]]+([A-Za-z_][A-Za-z0-9_]*)).*/\2\3/p' \
             "$DEST/test/$f" | sort -u | grep -v -x -E 'torch|os|sys|re|json|time|gc|unittest|typing|collections|itertools|functools|contextlib' || true)
done
{
  if [[ $mode == git ]]; then
    echo "source: $SRC"
    echo "commit: $commit ($REV)"
    echo "version.txt: ${version:-?}"
  else
    echo "source: $SRC/test (a folder, as it is)"
  fi
  echo "missing: ${missing[*]:-none}"
  (cd "$DEST/test" && sha256sum -- *.py)
} > "$DEST/MANIFEST"
cat "$DEST/MANIFEST"
du -sh "$DEST"
