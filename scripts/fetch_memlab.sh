#!/usr/bin/env bash
# Extracts pytorch_memlab's package (and, if given, calmsize's) from git
# mirrors into DEST, for bench/probes/memlab_side_by_side.py only.
#
#   bash scripts/fetch_memlab.sh MEMLAB_GIT_DIR DEST [CALMSIZE_GIT_DIR]
#   e.g. bash scripts/fetch_memlab.sh /path/to/pytorch_memlab/.git .scratch/memlab /path/to/calmsize/.git
#
# MEMLAB_GIT_DIR: a clone of github.com/Stonesjtu/pytorch_memlab (a bare git
# directory or a work tree with .git). Only its pytorch_memlab/ folder (and
# LICENSE) are written, at the mirror's HEAD, to DEST/pytorch_memlab/;
# DEST/SOURCE.txt says which commit. CALMSIZE_GIT_DIR: a clone of
# github.com/Stonesjtu/calmsize, which memlab's utils.py imports; without it
# the probe puts a stand-in of calmsize.size in place (see the probe).
#
# DEST should be git-ignored (.scratch/ is): memlab's code is MIT-licensed but
# not part of ccalloc and is never committed here. The GPU machine has no
# network, so the folder travels there as a carried path (".scratch/memlab").
set -euo pipefail

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 2 && $# -le 3 ]] || usage

git_dir() {  # git_dir DIR: the git directory of a bare repo or a work tree
  if [[ -d "$1/.git" ]]; then echo "$1/.git"; else echo "$1"; fi
}

extract() {  # extract GIT_DIR PACKAGE DEST
  local gd
  gd=$(git_dir "$1")
  if ! git --git-dir="$gd" rev-parse --verify -q HEAD >/dev/null; then
    echo "fetch_memlab: $1 is not a git repository (want a clone of $2's repo)" >&2
    exit 1
  fi
  if ! git --git-dir="$gd" cat-file -e "HEAD:$2/__init__.py" 2>/dev/null; then
    echo "fetch_memlab: $1 has no $2/__init__.py at HEAD: not $2's repository?" >&2
    exit 1
  fi
  rm -rf "${3:?}/$2"
  mkdir -p "$3/$2"
  git --git-dir="$gd" archive --format=tar HEAD "$2" | tar -x -C "$3"
  if git --git-dir="$gd" cat-file -e HEAD:LICENSE 2>/dev/null; then
    git --git-dir="$gd" show HEAD:LICENSE >"$3/$2/LICENSE"
  fi
  echo "$2 $(git --git-dir="$gd" rev-parse HEAD) $(git --git-dir="$gd" log -1 --format=%cs HEAD)" >>"$3/SOURCE.txt"
}

DEST=$2
mkdir -p "$DEST"
: >"$DEST/SOURCE.txt"
extract "$1" pytorch_memlab "$DEST"
if [[ $# -eq 3 ]]; then
  extract "$3" calmsize "$DEST"
fi
# Compiled leftovers of an earlier run would not match the new sources.
find "$DEST" -name __pycache__ -type d -prune -exec rm -rf {} +
echo "fetch_memlab: wrote $(find "$DEST" -name '*.py' | wc -l) Python files to $DEST:"
sed 's/^/  /' "$DEST/SOURCE.txt"
