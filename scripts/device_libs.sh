#!/usr/bin/env bash
# Usage: scripts/device_libs.sh BUILD_DIR
#
# Copies the shared libraries that the executables in BUILD_DIR load from
# Debian's Abseil, Benchmark and GoogleTest/GoogleMock packages (and zlib if it
# is not the system's usual one) into BUILD_DIR/lib, so that the folder can be
# carried to a GPU machine that lacks those packages. Run the binaries there
# with LD_LIBRARY_PATH=BUILD_DIR/lib (or `export LD_LIBRARY_PATH=$PWD/BUILD_DIR/lib`).
set -euo pipefail

if [[ $# -ne 1 || ! -d "$1" ]]; then
  echo "usage: $0 BUILD_DIR" >&2
  exit 2
fi
BUILD_DIR=$(cd "$1" && pwd)
DEST="$BUILD_DIR/lib"
SYSLIB=/usr/lib/x86_64-linux-gnu
mkdir -p "$DEST"

# ELF executables and shared objects of the build (not our own lib/ copy).
mapfile -t bins < <(find "$BUILD_DIR" -path "$DEST" -prune -o -type f \
  \( -perm -u+x -o -name '*.so' -o -name '*.so.*' \) -print |
  while read -r f; do
    [[ $(head -c4 "$f" 2>/dev/null | od -An -c | tr -d ' ') == "177ELF" ]] && echo "$f"
  done)

declare -A wanted=()
for b in "${bins[@]}"; do
  # "libfoo.so.1 => /usr/lib/x86_64-linux-gnu/libfoo.so.1 (0x...)"
  while read -r name arrow path _; do
    [[ "$arrow" == "=>" ]] || continue
    # Debian merges /lib into /usr/lib: accept either spelling.
    case "$path" in
      "$SYSLIB"/*|/lib/x86_64-linux-gnu/*) ;;
      *) continue ;;
    esac
    case "$name" in
      libabsl_*|libbenchmark*|libgtest*|libgmock*) wanted[$path]=1 ;;
      # zlib 1.x is on every Linux machine as libz.so.1; anything else is not.
      libz.so*) [[ "$name" == libz.so.1 ]] || wanted[$path]=1 ;;
    esac
  done < <(ldd "$b" 2>/dev/null || true)
done

count=0
for path in "${!wanted[@]}"; do
  # Copy the file the soname points at, under the soname ldd reported.
  cp -L "$path" "$DEST/$(basename "$path")"
  echo "  $(basename "$path")"
  count=$((count + 1))
done
echo "device_libs: ${#bins[@]} binaries scanned, $count libraries copied to $DEST"
echo "device_libs: run the binaries with LD_LIBRARY_PATH=$DEST"
