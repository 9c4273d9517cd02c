#!/usr/bin/env bash
# Renders a memory-history dump in PyTorch's memory_viz, offline, in headless
# Chromium, and takes a screenshot (acceptance 3 of issue 11).
#
#   scripts/render_memory_viz.sh PROFILE [OUTDIR]
#
# PROFILE: the profile.tar that `scripts/gpu_round.sh .gpu OUT profile`
# brought back, or a folder holding history.pickle and MemoryViz.js (copied
# from the GPU machine's torch: torch/utils/viz/MemoryViz.js). OUTDIR
# (default: next to PROFILE, memory_viz/) gets index.html, the page's assets,
# timeline.png (the Active Memory Timeline, one allocation hovered so its
# frames, ccalloc tag first, show below the plot) and segments.png.
#
# MemoryViz.js imports d3 from a CDN. Here d3 comes from the npm registry
# (the major version its imports name, `npm pack`, cached under
# ~/.cache/ccalloc/d3) and the imports are rewritten to read the UMD build's
# global; Chromium is Debian's chromium-headless-shell (installed if missing).
# The page is served from 127.0.0.1 (module scripts do not load from file://).
set -euo pipefail
SRC=${1:?usage: $0 PROFILE(.tar or folder) [OUTDIR]}
OUT=${2:-$(dirname "$(realpath "$SRC")")/memory_viz}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

if [[ -f "$SRC" ]]; then
  tar -C "$OUT" -xf "$SRC" ./history.pickle ./MemoryViz.js 2>/dev/null ||
    tar -C "$OUT" -xf "$SRC" history.pickle MemoryViz.js
else
  cp "$SRC/history.pickle" "$SRC/MemoryViz.js" "$OUT/"
fi
for f in history.pickle MemoryViz.js; do
  [[ -s "$OUT/$f" ]] || { echo "render_memory_viz: no $f in $SRC" >&2; exit 1; }
done

# --- Chromium --------------------------------------------------------------------
CHROME=""
for c in chromium-headless-shell chromium chromium-browser; do
  if command -v "$c" >/dev/null; then CHROME=$(command -v "$c"); break; fi
done
if [[ -z "$CHROME" ]]; then
  echo "render_memory_viz: installing chromium-headless-shell (Debian)" >&2
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    chromium-headless-shell >/dev/null
  CHROME=$(command -v chromium-headless-shell)
fi

# --- d3, the major version MemoryViz.js imports ----------------------------------
major=$(grep -oE 'd3@[0-9]+' "$OUT/MemoryViz.js" | head -n1 | cut -d@ -f2)
major=${major:-7}
cache=${CCALLOC_CACHE:-$HOME/.cache/ccalloc}/d3/$major
if [[ ! -s "$cache/d3.min.js" ]]; then
  mkdir -p "$cache"
  (cd "$cache" && npm pack --silent "d3@$major" >/dev/null && tar -xzf d3-*.tgz &&
   cp package/dist/d3.min.js d3.min.js && rm -rf package d3-*.tgz)
fi
cp "$cache/d3.min.js" "$OUT/d3.min.js"

# --- the page ----------------------------------------------------------------------
python3 - "$OUT" <<'EOF'
import base64, os, re, sys
out = sys.argv[1]
js = open(os.path.join(out, "MemoryViz.js")).read()
# import * as d3 from "https://..."   ->  const d3 = globalThis.d3;
# import {a, b as c} from "https://..." -> const {a, b: c} = globalThis.d3;
js, n_star = re.subn(r'import\s+\*\s+as\s+(\w+)\s+from\s+["\']https?://[^"\']+["\'];?',
                     r'const \1 = globalThis.d3;', js)
def named(m):
    names = ", ".join(p.strip().replace(" as ", ": ") for p in m.group(1).split(","))
    return "const {" + names + "} = globalThis.d3;"
js, n_named = re.subn(r'import\s*\{([^}]*)\}\s*from\s+["\']https?://[^"\']+["\'];?', named, js)
left = re.findall(r'import[^;\n]*from\s+["\']https?://[^"\']+', js)
if left:
    sys.exit(f"render_memory_viz: imports left that were not rewritten: {left}")
open(os.path.join(out, "MemoryViz.local.js"), "w").write(js)
print(f"rewrote {n_star} namespace and {n_named} named imports to the local d3")
data = base64.b64encode(open(os.path.join(out, "history.pickle"), "rb").read()).decode()
# The page: d3 (UMD), then memory_viz as a module; then, once drawn, hover the
# largest allocation so its frames (ccalloc tag first) fill the text pane.
page = """<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>
<script src="d3.min.js"></script>
<script type="module">
import {add_local_files} from "./MemoryViz.local.js";
const view = new URLSearchParams(location.search).get("view") || "Active Memory Timeline";
add_local_files([{name: "history.pickle", base64: "%s"}], view);
function hover() {
  let best = null, area = 0;
  for (const el of document.querySelectorAll("svg path, svg rect, svg polygon")) {
    const b = el.getBBox ? el.getBBox() : {width: 0, height: 0};
    if (b.width * b.height > area && el.closest("svg") === document.querySelector("svg")) {
      area = b.width * b.height; best = el;
    }
  }
  if (best) {
    best.dispatchEvent(new MouseEvent("mouseover", {bubbles: true}));
    document.title = "hovered";
  }
}
setTimeout(hover, 1500);
</script></body></html>""" % data
open(os.path.join(out, "index.html"), "w").write(page)
EOF

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$OUT" >/dev/null 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
sleep 1
shot() {  # shot FILE VIEW
  "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1600,1200 \
    --virtual-time-budget=15000 --screenshot="$OUT/$1" \
    "http://127.0.0.1:$port/index.html?view=$2" 2>"$OUT/${1%.png}.chromium.log" || true
  if [[ -s "$OUT/$1" ]]; then echo "render_memory_viz: $OUT/$1"; else
    echo "render_memory_viz: no screenshot $1 (see $OUT/${1%.png}.chromium.log)" >&2; return 1; fi
}
rc=0
shot timeline.png "Active%20Memory%20Timeline" || rc=1
shot segments.png "Allocator%20State%20History" || rc=1
# The DOM after the scripts ran: the hovered allocation's text must name a tag.
"$CHROME" --headless --no-sandbox --disable-gpu --virtual-time-budget=15000 --dump-dom \
  "http://127.0.0.1:$port/index.html" >"$OUT/timeline.dom.html" 2>/dev/null || true
if grep -q "ccalloc tag" "$OUT/timeline.dom.html"; then
  echo "render_memory_viz: the rendered page shows ccalloc tag frames:"
  grep -o "[^>]*ccalloc tag[^<]*" "$OUT/timeline.dom.html" | head -n 3
else
  echo "render_memory_viz: no 'ccalloc tag' text in the rendered page (hover found nothing?)" >&2
  rc=1
fi
exit $rc
