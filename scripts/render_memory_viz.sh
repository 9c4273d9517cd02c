#!/usr/bin/env bash
# Renders a memory-history dump in PyTorch's own memory_viz (MemoryViz.js),
# offline, in headless Chromium: screenshots plus a DOM check that a hovered
# allocation's frames show the ccalloc tag (acceptance 3 of issue 11).
#
#   scripts/render_memory_viz.sh PROFILE [MEMORY_VIZ_JS] [OUTDIR]
#
# PROFILE: the profile.tar that `scripts/gpu_round.sh .gpu OUT profile` brought
#   back, a folder, a history.pickle (torch.cuda.memory._snapshot() /
#   ccalloc.torch.dump_snapshot()) or the trace_plot.html that
#   `python -m torch.cuda._memory_viz trace_plot` wrote (the pickle is taken
#   from its base64). A tar or folder gives history.pickle, else the pickle
#   inside its trace_plot.html.
# MEMORY_VIZ_JS: PyTorch's torch/utils/viz/MemoryViz.js (an argument ending in
#   .js, else $MEMORY_VIZ_JS, else a MemoryViz.js inside PROFILE). The wheel
#   does not ship it; take it from a PyTorch source checkout (the same version
#   as the torch that recorded the dump, or main):
#     curl -fLo MemoryViz.js https://raw.githubusercontent.com/pytorch/pytorch/main/torch/utils/viz/MemoryViz.js
#   Never commit it here.
# OUTDIR (default: next to PROFILE, memory_viz/) gets the page (index.html,
#   MemoryViz.local.js, d3.min.js) and
#     timeline.png        Active Memory Timeline
#     timeline_hover.png  the same, the largest allocation hovered + selected:
#                         its frames, ccalloc tag first, below the plot
#     segments.png        Allocator State History
#     stack.txt           the stack panel's text read from the rendered DOM
#   Exit status 1 when the stack panel lacks a `ccalloc tag` frame or a .py frame.
#
# MemoryViz.js imports d3@5 (and d3-axis, d3-scale, d3-zoom, d3-brush) from
# cdn.skypack.dev. Here d3 comes from the npm registry once (`npm pack d3@MAJOR`,
# cached under ~/.cache/ccalloc/d3/MAJOR; d3's UMD bundle holds all five
# modules) and the imports are rewritten to read its global. Rendering needs no
# network: the page is served from 127.0.0.1 (module scripts do not load from
# file://) and Chromium resolves no other host. Chromium is Debian's
# chromium-headless-shell (installed if missing); $CHROME overrides.
# Env: WIDTH, HEIGHT (window, default 1280x960), BUDGET_MS (virtual time per
# page, default 20000).
set -euo pipefail
usage="usage: $0 PROFILE(.tar|folder|.pickle|.html) [MEMORY_VIZ_JS] [OUTDIR]"
SRC=${1:?$usage}
[[ -e "$SRC" ]] || { echo "render_memory_viz: no such file: $SRC" >&2; exit 2; }
VIZ_JS=${MEMORY_VIZ_JS:-}
OUT=""
for a in "${@:2}"; do
  if [[ "$a" == *.js ]]; then VIZ_JS=$a; else OUT=$a; fi
done
OUT=${OUT:-$(dirname "$(realpath "$SRC")")/memory_viz}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
W=${WIDTH:-1280} H=${HEIGHT:-960} BUDGET=${BUDGET_MS:-20000}

# --- inputs: history.pickle and MemoryViz.js into OUTDIR ----------------------------
python3 - "$SRC" "$OUT" "$VIZ_JS" <<'EOF'
import base64, os, re, shutil, sys, tarfile
src, out, viz = sys.argv[1:4]
def die(msg):
    sys.exit("render_memory_viz: " + msg)
def from_html(text, where):
    m = re.search(r'"base64"\s*:\s*"([A-Za-z0-9+/=]+)"', text)
    if not m:
        die(f"no embedded base64 pickle in {where}")
    return base64.b64decode(m.group(1))
files = {}  # basename -> bytes, of the ones we look for
want = ("history.pickle", "trace_plot.html", "MemoryViz.js")
if os.path.isdir(src):
    for n in want:
        if os.path.isfile(os.path.join(src, n)):
            files[n] = open(os.path.join(src, n), "rb").read()
elif tarfile.is_tarfile(src):
    with tarfile.open(src) as t:
        for m in t.getmembers():
            n = os.path.basename(m.name)
            if m.isfile() and n in want and n not in files:
                files[n] = t.extractfile(m).read()
elif src.endswith((".html", ".htm")):
    files["trace_plot.html"] = open(src, "rb").read()
else:
    files["history.pickle"] = open(src, "rb").read()
if "history.pickle" in files:
    pickle = files["history.pickle"]
elif "trace_plot.html" in files:
    pickle = from_html(files["trace_plot.html"].decode("utf-8", "replace"), src)
else:
    die(f"no history.pickle or trace_plot.html in {src}")
if not pickle.startswith(b"\x80"):
    die(f"{src}: the history is not a pickle (protocol 2+)")
open(os.path.join(out, "history.pickle"), "wb").write(pickle)
if viz:
    if not os.path.isfile(viz):
        die(f"MemoryViz.js not found: {viz}")
    shutil.copyfile(viz, os.path.join(out, "MemoryViz.js"))
elif "MemoryViz.js" in files:
    open(os.path.join(out, "MemoryViz.js"), "wb").write(files["MemoryViz.js"])
else:
    die("no MemoryViz.js: give its path as an argument ending in .js or in\n"
        "  $MEMORY_VIZ_JS. PyTorch's wheel does not ship it; take\n"
        "  torch/utils/viz/MemoryViz.js from a PyTorch source checkout, e.g.\n"
        "  curl -fLo MemoryViz.js https://raw.githubusercontent.com/pytorch/pytorch/main/torch/utils/viz/MemoryViz.js")
js = open(os.path.join(out, "MemoryViz.js"), encoding="utf-8").read()
if "export function add_local_files" not in js:
    die("that MemoryViz.js has no add_local_files export: not PyTorch's torch/utils/viz/MemoryViz.js?")
print(f"render_memory_viz: history.pickle {len(pickle)} bytes, MemoryViz.js {len(js)} chars")
EOF

# --- Chromium ------------------------------------------------------------------------
CHROME=${CHROME:-}
if [[ -z "$CHROME" ]]; then
  for c in chromium-headless-shell chromium chromium-browser; do
    if command -v "$c" >/dev/null; then CHROME=$(command -v "$c"); break; fi
  done
fi
if [[ -z "$CHROME" ]]; then
  echo "render_memory_viz: installing chromium-headless-shell (Debian)" >&2
  SUDO=""; [[ $(id -u) -eq 0 ]] || SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get install -y -qq --no-install-recommends chromium-headless-shell >/dev/null ||
    { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends \
        chromium-headless-shell >/dev/null; }
  CHROME=$(command -v chromium-headless-shell)
fi

# --- d3, the major version MemoryViz.js imports (d3@5: d3.event, which it uses) ------
major=$(grep -oE '/d3@[0-9]+' "$OUT/MemoryViz.js" | head -n1 | cut -d@ -f2 || true)
[[ -n "$major" ]] || { echo "render_memory_viz: MemoryViz.js imports no d3@N" >&2; exit 1; }
cache=${CCALLOC_CACHE:-$HOME/.cache/ccalloc}/d3/$major
if [[ ! -s "$cache/d3.min.js" ]]; then
  command -v npm >/dev/null || { echo "render_memory_viz: need npm (once) to fetch d3@$major" >&2; exit 1; }
  mkdir -p "$cache"
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "d3@$major" >/dev/null 2>&1 && tar -xzf d3-*.tgz &&
   cp package/dist/d3.min.js "$cache/d3.min.js")
  rm -rf "$tmp"
fi
cp "$cache/d3.min.js" "$OUT/d3.min.js"

# --- the page ---------------------------------------------------------------------------
python3 - "$OUT" <<'EOF'
import base64, os, re, sys
out = sys.argv[1]
js = open(os.path.join(out, "MemoryViz.js"), encoding="utf-8").read()
# import * as d3 from "https://..."     -> const d3 = globalThis.d3;
# import {a, b as c} from "https://..." -> const {a, b: c} = globalThis.d3;
# (d3@5's UMD bundle has axisLeft, scaleLinear, zoom, zoomIdentity, brushX and
# the live d3.event that its zoom and brush set.)
js, n_star = re.subn(r'import\s+\*\s+as\s+(\w+)\s+from\s+["\']https?://[^"\']+["\'];?',
                     r'const \1 = globalThis.d3;', js)
def named(m):
    names = ", ".join(p.strip().replace(" as ", ": ") for p in m.group(1).split(",") if p.strip())
    return "const {" + names + "} = globalThis.d3;"
js, n_named = re.subn(r'import\s*\{([^}]*)\}\s*from\s+["\']https?://[^"\']+["\'];?', named, js)
left = re.findall(r'(?:import|from)\s*\(?\s*["\']https?://[^"\']+', js)
if left:
    sys.exit(f"render_memory_viz: imports left that were not rewritten: {left}")
open(os.path.join(out, "MemoryViz.local.js"), "w", encoding="utf-8").write(js)
print(f"render_memory_viz: rewrote {n_star} namespace and {n_named} named imports to the local d3")
data = base64.b64encode(open(os.path.join(out, "history.pickle"), "rb").read()).decode()
# ?view=<memory_viz view>&hover=1: once drawn, hover and select (mouseover,
# mousedown, mouseup: what a user's click does) the largest plotted allocation
# whose frames carry a ccalloc tag, so its frames fill the stack panel below.
page = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>memory_viz</title></head><body>
<script src="d3.min.js"></script>
<script type="module">
import {add_local_files} from "./MemoryViz.local.js";
const q = new URLSearchParams(location.search);
add_local_files([{name: "history.pickle", base64: "@DATA@"}],
                q.get("view") || "Active Memory Timeline");
function hover(tries) {
  const polys = [...document.querySelectorAll("svg polygon")].filter(
    p => p.__data__ && p.__data__.elem !== undefined && p.__data__.elem !== "summarized");
  if (polys.length === 0) {
    if (tries > 0) setTimeout(() => hover(tries - 1), 100);
    return;
  }
  polys.sort((a, b) => b.__data__.size - a.__data__.size);
  for (const p of polys) {
    const b = p.getBoundingClientRect();
    const at = {bubbles: true, cancelable: true, view: window, button: 0,
                clientX: b.x + b.width / 2, clientY: b.y + b.height / 2};
    for (const type of ["mouseover", "mousedown", "mouseup"])
      p.dispatchEvent(new MouseEvent(type, at));
    const pre = [...document.querySelectorAll("pre")].find(e => e.textContent.includes("ccalloc tag"));
    if (pre) { pre.id = "ccalloc-stack"; document.title = "memory_viz hovered"; return; }
  }
}
if (q.get("hover")) setTimeout(() => hover(100), 200);
</script></body></html>"""
open(os.path.join(out, "index.html"), "w").write(page.replace("@DATA@", data))
EOF

# --- serve on 127.0.0.1, render ---------------------------------------------------------
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$OUT" >"$OUT/http.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  python3 -c "import urllib.request as u; u.urlopen('http://127.0.0.1:$port/index.html')" 2>/dev/null && break
  sleep 0.1
done
url="http://127.0.0.1:$port/index.html"
chrome() {  # chrome LOG ARGS...: offline (no host but 127.0.0.1 resolves)
  local log=$1; shift
  "$CHROME" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --disable-extensions --disable-background-networking --disable-component-update \
    --host-resolver-rules="MAP * ~NOTFOUND, EXCLUDE 127.0.0.1" \
    --window-size="$W,$H" --virtual-time-budget="$BUDGET" "$@" 2>"$log"
}
shot() {  # shot FILE QUERY
  rm -f "$OUT/$1"
  chrome "$OUT/${1%.png}.chromium.log" --screenshot="$OUT/$1" "$url?$2" >/dev/null || true
  if [[ -s "$OUT/$1" ]]; then echo "render_memory_viz: $OUT/$1 ($(stat -c %s "$OUT/$1") bytes)"
  else echo "render_memory_viz: no screenshot $1 (see $OUT/${1%.png}.chromium.log)" >&2; return 1; fi
}
rc=0
shot timeline.png "view=Active%20Memory%20Timeline" || rc=1
shot timeline_hover.png "view=Active%20Memory%20Timeline&hover=1" || rc=1
shot segments.png "view=Allocator%20State%20History" || rc=1

# The DOM after the scripts ran: the hovered allocation's stack panel must show
# the ccalloc tag frame and Python frames.
chrome "$OUT/dom.chromium.log" --dump-dom "$url?view=Active%20Memory%20Timeline&hover=1" \
  >"$OUT/timeline_hover.dom.html" || true
python3 - "$OUT" <<'EOF' || rc=1
import html, os, re, sys
out = sys.argv[1]
dom = open(os.path.join(out, "timeline_hover.dom.html"), encoding="utf-8").read()
m = re.search(r'<pre id="ccalloc-stack"[^>]*>(.*?)</pre>', dom, re.S)
if not m:
    sys.exit("render_memory_viz: no stack panel with a 'ccalloc tag' frame in the rendered page "
             "(see timeline_hover.dom.html and the *.chromium.log files)")
text = html.unescape(m.group(1))
open(os.path.join(out, "stack.txt"), "w").write(text + "\n")
print("render_memory_viz: the stack panel of the hovered allocation (rendered DOM):")
print("  " + text.replace("\n", "\n  "))
tag = re.search(r"^ccalloc tag:0:(\S+)$", text, re.M)
py = re.search(r"\.py:\d+:", text)
if not (tag and py):
    sys.exit("render_memory_viz: the stack panel lacks " +
             ("a .py frame" if tag else "a 'ccalloc tag:0:<tag>' frame"))
print(f"render_memory_viz: ok: ccalloc tag {tag.group(1)!r} and Python frames")
EOF
exit $rc
