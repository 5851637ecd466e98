#!/usr/bin/env bash
# Usage: xvfb_tours.sh PATH/TO/servelab SOURCE_DIR [SHOTS_DIR]
# Every step of every guided tour in the real window, as a window manager
# sizes it (issue 50 item 1): on a 1024x768 and a 1280x720 screen under
# Xvfb + openbox, the app opened as a user opens it (no --size, fresh
# settings: it takes the screen, less openbox's border and title bar:
# 1016x728, 1272x680), and again maximised by openbox (its per-application
# rule), walks its tours itself (the hidden --check-tours flag:
# ui/cluster/layout_check.h, ui/teaching/tour_claims_check.h) and reports,
# per step, normal and in lecture mode, once the step has run to what 20 s
# of wall time show at its speed (at most 60 simulated seconds):
#  - compact cards (no chips, no queues) where full ones were expected,
#  - a badge or a field the step's text names elided or not drawn,
#  - a transfer arrow over a card's text or bars (from the pixels),
#  - a tour text that needs a scroll bar, a panel label or button cut,
#  - a direction word contradicting its quoted numbers, in the text as the
#    panel shows it (figures filled in, the baseline run to the same
#    simulated time): a comparison "A against B under P at the same
#    simulated time, lower|higher|about the same" whose word A and B do not
#    give, or an outcome word ("rises", "falls", "wins" …) typed outside a
#    comparison. Each problem names the tour, the step and the screen, and
#    a text problem quotes its sentence.
# The window's size is checked from outside (xdotool): it must take the
# screen, and most of a 1920x1080 one. Any problem fails the script (exit 1); the report is printed.
# With SHOTS_DIR, every step at 1024x768 in lecture mode is captured with
# `import -window root` as SHOTS_DIR/tour-<id>-<step>-1024x768.png
# (docs/screenshots/regenerate.sh keeps them in docs/screenshots/). Needs Xvfb, openbox, xdotool and
# ImageMagick's import; exits 77 (skipped) when one is missing.
set -u
app=$1 src=$2
shots=${3:-}
for tool in Xvfb openbox xdotool import python3; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL [xvfb_tours]: $*" >&2; exit 1; }

# A display nobody uses.
free_display() {
  for n in $(seq 121 160); do
    [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ] || { echo ":$n"; return 0; }
  done
  return 1
}

# openbox told to maximise every window, as a user's configuration can.
cat >"$tmp/maximise.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<openbox_config xmlns="http://openbox.org/3.4/rc">
  <applications>
    <application class="*"><maximized>true</maximized></application>
  </applications>
</openbox_config>
XML

# One screen: Xvfb at $1, openbox (maximising every window when $2 is
# "max"), the app with --check-tours; the report in $tmp/$1-$2.json.
# Returns the app's exit code.
screen_run() {
  local size=$1 win=${2:-} disp xvfb ob
  disp=$(free_display) || fail "no free X display"
  Xvfb "$disp" -screen 0 "${size}x24" -nolisten tcp >"$tmp/xvfb-$size.log" 2>&1 &
  xvfb=$!
  pids+=("$xvfb")
  export DISPLAY=$disp
  for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done
  local obconf=()
  [ "$win" = max ] && obconf=(--config-file "$tmp/maximise.xml")
  openbox "${obconf[@]}" >"$tmp/openbox-$size.log" 2>&1 &
  ob=$!
  pids+=("$ob")
  sleep 1
  mkdir -p "$tmp/cfg-$size" "$tmp/rt-$size"
  chmod 700 "$tmp/rt-$size"
  rm -rf "$tmp/cfg-$size"
  mkdir -p "$tmp/cfg-$size"
  XDG_CONFIG_HOME=$tmp/cfg-$size XDG_RUNTIME_DIR=$tmp/rt-$size QT_QPA_PLATFORM=xcb \
    "$app" --no-opengl --check-tours "$tmp/$size-$win.json" >"$tmp/app-$size.log" 2>&1 &
  local app_pid=$!
  # From outside: the window takes the screen.
  local wid=
  for _ in $(seq 100); do
    wid=$(xdotool search --name "^ServeLab — " 2>/dev/null | head -1)
    [ -n "$wid" ] && break
    sleep 0.1
  done
  [ -n "$wid" ] || fail "$size: no main window"
  sleep 1
  eval "$(xdotool getwindowgeometry --shell "$wid")"
  local sw=${size%x*} sh=${size#*x}
  echo "$size screen: the window is ${WIDTH}x${HEIGHT}"
  [ "$WIDTH" -ge $((sw - 16)) ] && [ "$HEIGHT" -ge $((sh - 60)) ] ||
    fail "$size: the window (${WIDTH}x${HEIGHT}) does not take the screen"
  wait "$app_pid"
  local rc=$?
  kill "$ob" "$xvfb" 2>/dev/null
  wait "$ob" "$xvfb" 2>/dev/null
  return $rc
}

# A large screen: the app opened with fresh settings takes most of it
# (not 1280x800 in its middle).
disp=$(free_display) || fail "no free X display"
Xvfb "$disp" -screen 0 1920x1080x24 -nolisten tcp >"$tmp/xvfb-large.log" 2>&1 &
xvfb=$!
pids+=("$xvfb")
export DISPLAY=$disp
for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done
openbox >"$tmp/openbox-large.log" 2>&1 &
ob=$!
pids+=("$ob")
sleep 1
mkdir -p "$tmp/cfg-large" "$tmp/rt-large"
chmod 700 "$tmp/rt-large"
XDG_CONFIG_HOME=$tmp/cfg-large XDG_RUNTIME_DIR=$tmp/rt-large QT_QPA_PLATFORM=xcb "$app" --no-opengl \
  >"$tmp/app-large.log" 2>&1 &
large=$!
pids+=("$large")
wid=
for _ in $(seq 100); do
  wid=$(xdotool search --name "^ServeLab — " 2>/dev/null | head -1)
  [ -n "$wid" ] && break
  sleep 0.1
done
[ -n "$wid" ] || fail "1920x1080: no main window"
sleep 1.5
eval "$(xdotool getwindowgeometry --shell "$wid")"
echo "1920x1080 screen: the window is ${WIDTH}x${HEIGHT} at ${X},${Y}"
[ "$WIDTH" -ge 1600 ] && [ "$HEIGHT" -ge 900 ] || fail "1920x1080: the window (${WIDTH}x${HEIGHT}) does not use the screen"
kill "$large" "$ob" "$xvfb" 2>/dev/null
wait "$large" "$ob" "$xvfb" 2>/dev/null

status=0
for run in 1024x768: 1024x768:max 1280x720: 1280x720:max; do
  size=${run%%:*} win=${run#*:}
  screen_run "$size" "$win"
  rc=$?
  [ -s "$tmp/$size-$win.json" ] || { tail -20 "$tmp/app-$size.log" >&2; fail "$size: no report (exit $rc)"; }
  python3 - "$tmp/$size-$win.json" "$size" <<'PY' || status=1
import json, sys
r = json.load(open(sys.argv[1]))
size = sys.argv[2]
steps = r["steps"]
assert steps, "no step checked"
tours = sorted({s["tour"] for s in steps})
print(f"{size} screen, window {r['window'][0]}x{r['window'][1]}{' (maximised)' if r['maximized'] else ''}: {len(steps)} steps of {len(tours)} tours "
      f"({', '.join(tours)}), normal and lecture")
bad = [s for s in steps if s["problems"]]
for s in bad:
    for p in s["problems"]:
        print(f"  {size}{' maximised' if r['maximized'] else ''} screen: {p}")
cards = {}
for s in steps:
    cards[s["cards"]] = cards.get(s["cards"], 0) + 1
print(f"  cards: {cards}; comparisons checked in the tour texts: {sum(s.get('comparisons', 0) for s in steps)}")
sys.exit(1 if bad or r["problems"] else 0)
PY
  [ "$rc" -eq 0 ] || status=1
done

# Screenshots for docs/screenshots: every step at 1024x768 in lecture mode,
# the app pausing after each step until it is captured.
if [ -n "$shots" ]; then
  mkdir -p "$shots" "$tmp/ready"
  disp=$(free_display) || fail "no free X display"
  Xvfb "$disp" -screen 0 1024x768x24 -nolisten tcp >"$tmp/xvfb-shots.log" 2>&1 &
  pids+=($!)
  export DISPLAY=$disp
  for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done
  openbox >"$tmp/openbox-shots.log" 2>&1 &
  pids+=($!)
  sleep 1
  mkdir -p "$tmp/cfg-shots" "$tmp/rt-shots"
  chmod 700 "$tmp/rt-shots"
  XDG_CONFIG_HOME=$tmp/cfg-shots XDG_RUNTIME_DIR=$tmp/rt-shots QT_QPA_PLATFORM=xcb \
    "$app" --no-opengl --lecture --check-tours "$tmp/shots.json" --check-tours-pause "$tmp/ready" \
    >"$tmp/app-shots.log" 2>&1 &
  p=$!
  while kill -0 "$p" 2>/dev/null; do
    for r in "$tmp"/ready/*.ready; do
      [ -e "$r" ] || continue
      name=$(basename "$r" .ready)
      import -window root "$shots/tour-$name-1024x768.png" || fail "screenshot $name"
      rm -f "$r"
    done
    sleep 0.2
  done
  echo "$(ls "$shots"/tour-*-1024x768.png | wc -l) screenshots in $shots"
fi
[ "$status" -eq 0 ] || fail "layout or tour-text problems (above)"
echo "PASS [xvfb_tours]"
