#!/usr/bin/env bash
# Builds Abseil with ThreadSanitizer into a cache prefix and installs a CMake
# package there (PREFIX/lib/cmake/absl).
#
# Why: Debian's libabsl is not instrumented, so TSAN cannot see absl::Mutex
# acquire/release and reports false races on everything it guards. The TSAN
# build of ccalloc (scripts/test.sh) points absl_DIR here instead.
#
# Source: Debian's own `abseil` source package (same version as the installed
# libabsl-dev when possible), fetched with `apt-get source`; a deb-src entry
# mirroring the existing Debian URIs is added if there is none.
#
# Usage: scripts/build_tsan_abseil.sh            (prints the prefix on stdout last)
# Env:   CCALLOC_CACHE   cache root (default ~/.cache/ccalloc)
#        JOBS            parallel jobs (default 2)
set -euo pipefail

CACHE="${CCALLOC_CACHE:-$HOME/.cache/ccalloc}"
PREFIX="$CACHE/absl-tsan"
STAMP="$PREFIX/.ccalloc-built"
JOBS="${JOBS:-2}"
# Bump RECIPE when the build recipe below changes; the stamp also records the
# compiler, since TSAN runtimes of different clang versions do not mix.
RECIPE=2
STAMP_TEXT="recipe=$RECIPE $(clang++ --version 2>/dev/null | head -n1)"

log() { echo "[build_tsan_abseil] $*" >&2; }

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$STAMP_TEXT" && \
      -f "$PREFIX/lib/cmake/absl/abslConfig.cmake" ]]; then
  log "already built: $PREFIX"
  echo "$PREFIX"
  exit 0
fi

export DEBIAN_FRONTEND=noninteractive
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi

need_pkgs=()
for p in dpkg-dev clang cmake libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need_pkgs+=("$p")
done

# --- a deb-src entry -------------------------------------------------------
have_deb_src() {
  grep -Eqs '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list && return 0
  grep -Eqs '^[[:space:]]*Types:.*deb-src' /etc/apt/sources.list.d/*.sources && return 0
  return 1
}

added_src=0
if ! have_deb_src; then
  # Mirror every enabled Debian stanza (deb822 .sources) as a deb-src one.
  src_file=/etc/apt/sources.list.d/ccalloc-deb-src.sources
  tmp=$(mktemp)
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f "$f" ]] || continue
    # Only stanzas whose URIs are Debian archives; keep URIs/Suites/Components/Signed-By.
    awk '
      function flush() {
        if (types ~ /(^|[[:space:]])deb([[:space:]]|$)/ && uris ~ /debian/ && suites != "") {
          print "Types: deb-src"; print "URIs: " uris; print "Suites: " suites
          print "Components: " comps; if (signed != "") print "Signed-By: " signed; print ""
        }
        types = uris = suites = comps = signed = ""
      }
      /^[[:space:]]*$/ { flush(); next }
      /^#/ { next }
      /^Types:/      { sub(/^Types:[[:space:]]*/, "");      types = $0;  next }
      /^URIs:/       { sub(/^URIs:[[:space:]]*/, "");       uris = $0;   next }
      /^Suites:/     { sub(/^Suites:[[:space:]]*/, "");     suites = $0; next }
      /^Components:/ { sub(/^Components:[[:space:]]*/, ""); comps = $0;  next }
      /^Signed-By:/  { sub(/^Signed-By:[[:space:]]*/, "");  signed = $0; next }
      END { flush() }
    ' "$f" >>"$tmp"
  done
  # Legacy one-line format.
  if [[ -f /etc/apt/sources.list ]]; then
    grep -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list | grep debian |
      sed -E 's/^[[:space:]]*deb[[:space:]]/deb-src /' >"$tmp.list" || true
  fi
  if [[ -s "$tmp" ]]; then
    $SUDO install -m 0644 "$tmp" "$src_file"; added_src=1
    log "added $src_file"
  fi
  if [[ -s "$tmp.list" ]]; then
    $SUDO install -m 0644 "$tmp.list" /etc/apt/sources.list.d/ccalloc-deb-src.list; added_src=1
    log "added /etc/apt/sources.list.d/ccalloc-deb-src.list"
  fi
  rm -f "$tmp" "$tmp.list"
  if [[ $added_src -eq 0 ]]; then
    # No Debian entry found at all: fall back to the public bookworm archive.
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n\nTypes: deb-src\nURIs: http://deb.debian.org/debian-security\nSuites: bookworm-security\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      $SUDO tee "$src_file" >/dev/null
    added_src=1
    log "added $src_file (default bookworm archive)"
  fi
fi

# apt-get update only when the source index is missing (new deb-src entry or
# never fetched); it is the slow part.
if [[ $added_src -eq 1 ]] || ! ls /var/lib/apt/lists/*_Sources* >/dev/null 2>&1 || \
   [[ ${#need_pkgs[@]} -gt 0 ]]; then
  log "apt-get update"
  $SUDO apt-get update -qq
fi
if [[ ${#need_pkgs[@]} -gt 0 ]]; then
  log "installing ${need_pkgs[*]}"
  $SUDO apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

# --- fetch the source ------------------------------------------------------
WORK="$CACHE/absl-tsan-work"
rm -rf "$WORK"
mkdir -p "$WORK"
cd "$WORK"
# Prefer the exact version of the installed headers (same ABI options).
ver=$(dpkg-query -W -f='${source:Version}' libabsl-dev 2>/dev/null || true)
log "apt-get source abseil${ver:+=$ver}"
if ! { [[ -n "$ver" ]] && apt-get source -qq "abseil=$ver" >/dev/null 2>&1; }; then
  apt-get source -qq abseil >/dev/null
fi
SRC=$(find "$WORK" -maxdepth 1 -mindepth 1 -type d -name 'abseil-*' | head -n1)
[[ -n "$SRC" && -f "$SRC/CMakeLists.txt" ]] || { log "no abseil source in $WORK"; exit 1; }
log "source: $SRC"

# --- backport: upstream abseil commit bb7be494 ------------------------------
# TSAN ignores the synchronization inside Mutex (its annotations say so), so
# the hand-off of a waiter's PerThreadSynch between threads is invisible and
# every contended absl::Mutex reports a false race in Waiter::Post (abseil
# issues #760, #1239). Upstream ignores the accesses in IncrementSynchSem;
# 20220623 predates that. Without it, TSAN_OPTIONS=report_atomic_races=0 would
# be needed, which would also hide real races on ccalloc's atomics.
mutex_cc="$SRC/absl/synchronization/mutex.cc"
post='  PerThreadSem::Post(w->thread_identity());'
if grep -qF "$post" "$mutex_cc" && ! grep -q 'ccalloc: bb7be494' "$mutex_cc"; then
  sed -i "s|^$post\$|  // ccalloc: bb7be494 backport. We miss synchronization around passing\\
  // PerThreadSynch between threads since it happens inside of the Mutex\\
  // code, so we need to ignore all accesses to the object.\\
  ABSL_ANNOTATE_IGNORE_READS_AND_WRITES_BEGIN();\\
$post\\
  ABSL_ANNOTATE_IGNORE_READS_AND_WRITES_END();|" "$mutex_cc"
  [[ $(grep -c 'ABSL_ANNOTATE_IGNORE_READS_AND_WRITES_END();' "$mutex_cc") -ge 1 ]] ||
    { log "patching mutex.cc failed"; exit 1; }
  log "patched IncrementSynchSem (upstream bb7be494)"
else
  log "IncrementSynchSem already ignores Post (or differs); not patching"
fi

# --- build -----------------------------------------------------------------
generator=()
if command -v ninja >/dev/null; then generator=(-G Ninja); fi
flags="-fsanitize=thread -O1 -g -DNDEBUG -fno-omit-frame-pointer"
rm -rf "$PREFIX"
cmake -S "$SRC" -B "$WORK/build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS_RELEASE="$flags" -DCMAKE_CXX_FLAGS_RELEASE="$flags" \
  -DCMAKE_CXX_STANDARD=20 -DCMAKE_CXX_STANDARD_REQUIRED=ON \
  -DABSL_PROPAGATE_CXX_STD=ON \
  -DABSL_BUILD_TESTING=OFF -DBUILD_TESTING=OFF \
  -DABSL_ENABLE_INSTALL=ON \
  -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DCMAKE_INSTALL_PREFIX="$PREFIX" -DCMAKE_INSTALL_LIBDIR=lib \
  >"$WORK/configure.log" 2>&1 || { tail -n 50 "$WORK/configure.log" >&2; exit 1; }
log "building with $JOBS jobs (log: $WORK/build.log)"
cmake --build "$WORK/build" -j "$JOBS" >"$WORK/build.log" 2>&1 ||
  { tail -n 50 "$WORK/build.log" >&2; exit 1; }
cmake --install "$WORK/build" >"$WORK/install.log" 2>&1 ||
  { tail -n 50 "$WORK/install.log" >&2; exit 1; }
echo "$STAMP_TEXT" >"$STAMP"
rm -rf "$WORK"
log "installed: $PREFIX"
echo "$PREFIX"
