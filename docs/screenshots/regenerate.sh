#!/usr/bin/env bash
# Regenerates every screenshot of docs/user-guide.md with the app itself
# (offscreen, software rendering), from the commands the guide shows.
# Usage: bash docs/screenshots/regenerate.sh [BUILD_DIR]   (default: build)
# Run from anywhere; writes into docs/screenshots/. Exit 1 if a capture fails.
set -euo pipefail
cd "$(dirname "$0")/../.."
app=${1:-build}/app/servelab
[ -x "$app" ] || { echo "regenerate: $app not built (cmake --build build --target servelab)" >&2; exit 1; }
out=docs/screenshots
export QT_QPA_PLATFORM=offscreen
# Fresh settings: window state saved by an earlier session must not leak in.
XDG_CONFIG_HOME=$(mktemp -d)
export XDG_CONFIG_HOME
trap 'rm -rf "$XDG_CONFIG_HOME"' EXIT

shot() {  # shot NAME ARGS...
  local name=$1; shift
  echo "regenerate: $name.png" >&2
  "$app" "$@" --no-opengl --screenshot "$out/$name.png" >/dev/null 2>&1 ||
    { echo "regenerate: $name.png failed: $app $*" >&2; exit 1; }
}

shot main-window-1280x800 --scenario samples/pascal-baseline-rr.json --run-for 60 --size 1280x800
shot main-window-1920x1080 --scenario samples/pascal-baseline-rr.json --run-for 60 --size 1920x1080
shot inspector-1280x800 --scenario samples/pascal-phase-aware.json --run-for 120 --inspect auto --size 1280x800
shot teaching-1280x800 --tour pascal:4 --lecture --run-for 100 --size 1280x800
shot teaching-1920x1080 --tour pascal:5 --lecture --run-for 120 --size 1920x1080
shot teaching-1024x768 --tour pascal:4 --lecture --run-for 100 --size 1024x768
# Each tour's key step at the three sizes a lecture meets: a 1024x768
# projector, a 1280x800 laptop, a full-HD screen (PASCAL: step 4 at
# 1024/1280 and step 5 at 1920, as the guide shows them).
for size in 1024x768 1280x800 1920x1080; do
  shot "teaching-arrow-$size" --tour arrow:4 --lecture --run-for 16 --size "$size"
  shot "teaching-selfsched-$size" --tour selfsched:3 --lecture --run-for 60 --size "$size"
  shot "teaching-cascade-$size" --tour cascade:4 --lecture --run-for 40 --size "$size"
done
# The tours of the later capabilities, at a projector's 1024x768.
shot teaching-prefix-1024x768 --tour prefix:1 --run-for 60 --size 1024x768
shot teaching-closed-loop-1024x768 --tour closed-loop:2 --run-for 30 --size 1024x768
shot teaching-measure-1024x768 --tour measure:1 --run-for 120 --size 1024x768
# An MoE instance: the EP layout line, the per-rank load strip, the
# inspector's split of the step (docs/user-guide.md "Cluster view").
for size in 1024x768 1920x1080; do
  shot "moe-$size" --scenario samples/moe-qwen3-235b-ep8.json --run-for 60 --inspect gpu0 --size "$size"
done
# Prefix caching: the KV bar's teal cache band, the CPU tier, the
# inspector's cache block (a tenth of the KV memory so the cache fills it).
for size in 1024x768 1280x800 1920x1080; do
  shot "prefix-cache-$size" --scenario docs/screenshots/prefix-run.json --lecture --run-for 40 --inspect gpu0 --size "$size"
done
# Speculative decoding: the cards' spec line, the Live Speculation control,
# its changes on the time charts (a saved run: speculation off and on at 8,
# 20, 32 and 40 req/s), the Speculation tab's TPOT-vs-load chart (exported),
# and the tour's first step (docs/user-guide.md "Cluster view", "Charts").
for size in 1024x768 1920x1080; do
  shot "speculative-$size" --scenario docs/screenshots/speculative-run.json --run-for 400 --size "$size"
done
spec_charts=$(mktemp -d)
echo "regenerate: speculative-tpot-vs-load.png" >&2
"$app" --scenario docs/screenshots/speculative-run.json --run-for 480 --no-opengl --export-charts "$spec_charts" \
  >/dev/null 2>&1 && cp "$spec_charts/tpot_vs_load.png" "$out/speculative-tpot-vs-load.png" ||
  { echo "regenerate: speculative-tpot-vs-load.png failed" >&2; exit 1; }
rm -rf "$spec_charts"
shot teaching-speculative-1024x768 --tour speculative:1 --run-for 40 --size 1024x768
# A measurement window (run.measure, solid lines at 20 s and 120 s) and two
# labelled live changes (a saved run replays them) on the live charts.
shot live-chart-markers-1280x800 --scenario docs/screenshots/markers-run.json --run-for 115 --size 1280x800
shot compare-1280x800 --scenario samples/pascal-phase-aware.json --compare pascal,fcfs,rr --run-for 200 --size 1280x800
shot compare-1920x1080 --scenario samples/pascal-phase-aware.json --compare pascal,fcfs,rr --run-for 200 --size 1920x1080
shot walkthrough-compare-1280x800 --scenario samples/pascal-baseline-fcfs.json --compare fcfs,rr,pascal --run-for 300 \
  --size 1280x800
shot walkthrough-pascal-1280x800 --scenario samples/pascal-phase-aware.json --run-for 120 --size 1280x800
# Mixed GPU pools and the cost readout (docs/user-guide.md "Mixed GPU pools
# and cost"): the real window under Xvfb + openbox, Play (Space), 20 s at
# 1x, captured with `import -window root`. Skipped where a tool is missing.
mixed_pools() {  # mixed_pools DISPLAY WxH [client size]
  local d=$1 size=$2 fit=${3:-} tmp wid
  tmp=$(mktemp -d)
  mkdir -p "$tmp/cfg" "$tmp/rt" && chmod 700 "$tmp/rt"
  Xvfb ":$d" -screen 0 "${size}x24" -nolisten tcp >/dev/null 2>&1 &
  local xvfb=$!
  sleep 1
  DISPLAY=":$d" openbox >/dev/null 2>&1 &
  local wm=$!
  sleep 1
  DISPLAY=":$d" XDG_CONFIG_HOME=$tmp/cfg XDG_RUNTIME_DIR=$tmp/rt QT_QPA_PLATFORM=xcb \
    "$app" --no-opengl --scenario samples/mixed-pools-splitwise.json >/dev/null 2>&1 &
  local gui=$!
  wid=$(DISPLAY=":$d" timeout 30 xdotool search --sync --name "ServeLab — mixed" | head -1)
  if [ -n "$wid" ]; then
    DISPLAY=":$d" xdotool windowactivate --sync "$wid"
    [ -z "$fit" ] || DISPLAY=":$d" xdotool windowmove --sync "$wid" 2 26 windowsize --sync "$wid" $fit
    sleep 1
    DISPLAY=":$d" xdotool key --window "$wid" space
    sleep 20
    DISPLAY=":$d" import -window root "$out/mixed-pools-$size.png"
  fi
  kill "$gui" "$wm" "$xvfb" 2>/dev/null || true
  wait "$gui" "$wm" "$xvfb" 2>/dev/null || true
  rm -rf "$tmp"
  [ -n "$wid" ] || { echo "regenerate: mixed-pools-$size.png failed (no window)" >&2; exit 1; }
}
if command -v Xvfb >/dev/null && command -v openbox >/dev/null && command -v xdotool >/dev/null &&
  command -v import >/dev/null; then
  echo "regenerate: mixed-pools-1024x768.png, mixed-pools-1920x1080.png" >&2
  mixed_pools 177 1024x768
  mixed_pools 178 1920x1080 "1916 1050"
else
  echo "regenerate: mixed-pools-*.png skipped (needs Xvfb, openbox, xdotool, ImageMagick)" >&2
fi
# Every guided-tour step at 1024x768 as a projector shows it: the real
# window under Xvfb + openbox in lecture mode, each step's layout checked
# and captured with `import -window root` (tests/ui/xvfb_tours.sh:
# tour-<id>-<step>-1024x768.png). Skipped where Xvfb, openbox, xdotool or
# ImageMagick is missing.
rc=0
bash tests/ui/xvfb_tours.sh "$app" . "$out" >&2 || rc=$?
if [ "$rc" -eq 77 ]; then
  echo "regenerate: tour-*.png skipped (needs Xvfb, openbox, xdotool, ImageMagick)" >&2
elif [ "$rc" -ne 0 ]; then
  echo "regenerate: tour-*.png failed (tests/ui/xvfb_tours.sh)" >&2
  exit 1
fi
echo "regenerate: $(ls "$out"/*.png | wc -l) screenshots in $out/" >&2
