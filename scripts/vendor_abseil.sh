#!/usr/bin/env bash
# Refreshes third_party/abseil-cpp: Debian's own abseil source (the version of
# the installed libabsl-dev, Debian's patches applied), trimmed to what a build
# of the library needs. See third_party/README.md.
#
# Usage: scripts/vendor_abseil.sh [EXTRACTED_SOURCE_DIR]
#   Without an argument it runs `apt-get source abseil=<libabsl-dev version>`
#   (needs dpkg-dev and a deb-src entry; scripts/build_tsan_abseil.sh adds one).
# Then review `git status third_party/abseil-cpp` and update the version in
# third_party/README.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEST="$ROOT/third_party/abseil-cpp"
log() { echo "[vendor_abseil] $*" >&2; }

if [[ $# -ge 1 ]]; then
  SRC=$(cd "$1" && pwd)
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
  ver=$(dpkg-query -W -f='${source:Version}' libabsl-dev 2>/dev/null || true)
  log "apt-get source abseil${ver:+=$ver}"
  (cd "$WORK" && apt-get source -qq "abseil${ver:+=$ver}" >/dev/null)
  SRC=$(find "$WORK" -maxdepth 1 -mindepth 1 -type d -name 'abseil-*' | head -n1)
fi
[[ -f "$SRC/CMakeLists.txt" && -d "$SRC/absl" ]] || { log "no abseil source in $SRC"; exit 1; }
log "source: $SRC"

rm -rf "$DEST"
mkdir -p "$DEST"
cp -a "$SRC/CMakeLists.txt" "$SRC/LICENSE" "$SRC/AUTHORS" "$SRC/CMake" "$SRC/absl" "$DEST/"
cd "$DEST"

# Not needed to build: tests, test helpers' data, benchmarks, Bazel and CI
# files, docs, the GoogleTest download and the install test project.
rm -rf CMake/Googletest CMake/install_test_project CMake/README.md
find absl \( -name '*_test.cc' -o -name '*_benchmark.cc' -o -name 'benchmarks.cc' \
             -o -name 'BUILD.bazel' -o -name '*.bzl' -o -name '*.py' -o -name '*.md' \) -delete
rm -rf absl/time/internal/cctz/testdata
# Modules ccalloc does not use and nothing it uses depends on.
for m in flags random; do
  rm -rf "absl/$m"
  sed -i "/^add_subdirectory($m)\$/d" absl/CMakeLists.txt
done
# Abseil asks for CMake 3.5; CMake 4 warns below 3.10 (and drops < 3.5). A
# policy range gives the same, modern policies on CMake 3.22 .. 4.x.
sed -i 's/^cmake_minimum_required(VERSION 3\.5)$/cmake_minimum_required(VERSION 3.5...3.22)/' CMakeLists.txt
grep -q '^cmake_minimum_required(VERSION 3.5...3.22)$' CMakeLists.txt ||
  { log "could not set the policy range in CMakeLists.txt"; exit 1; }
find . -type d -empty -delete
log "vendored into $DEST ($(du -sh . | cut -f1), $(find . -type f | wc -l) files)"
