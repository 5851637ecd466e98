#!/usr/bin/env bash
# Usage: xvfb_session.sh PATH/TO/servelab SOURCE_DIR [SHOTS_DIR]
# A scripted session under a real X server (Xvfb + openbox) with real input
# events (xdotool), as a user would: open a sample, play, switch policy and
# apply, move the live rate slider, compare (and close it with Escape),
# export the charts at a slide preset through the export dialog, and quit (which must ask,
# the run having a live change). Screenshots of each step go to SHOTS_DIR
# (default: a temporary folder) for review. Needs Xvfb, openbox, xdotool and
# ImageMagick's import; exits 77 (skipped) when one is missing.
set -u
app=$1 src=$2
shots=${3:-}
for tool in Xvfb openbox xdotool import; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
tmp=$(mktemp -d)
[ -n "$shots" ] || shots=$tmp/shots
mkdir -p "$shots" "$tmp/cfg" "$tmp/rt" "$tmp/charts"
chmod 700 "$tmp/rt"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL [xvfb_session]: $*" >&2; [ -f "$tmp/app.log" ] && tail -20 "$tmp/app.log" >&2; exit 1; }

# A display nobody uses.
disp=
for n in $(seq 91 120); do
  [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ] || { disp=:$n; break; }
done
[ -n "$disp" ] || fail "no free X display"
Xvfb "$disp" -screen 0 1280x800x24 -nolisten tcp >"$tmp/xvfb.log" 2>&1 &
pids+=($!)
export DISPLAY=$disp
for _ in $(seq 50); do xdotool getmouselocation >/dev/null 2>&1 && break; sleep 0.1; done
openbox >"$tmp/openbox.log" 2>&1 &
pids+=($!)
sleep 1
unset QT_QPA_PLATFORM
export XDG_CONFIG_HOME=$tmp/cfg XDG_RUNTIME_DIR=$tmp/rt
shot() { import -window root "$shots/$1.png"; }

"$app" --no-opengl --size 1280x760 "$src/samples/pascal-baseline-rr.json" >"$tmp/app.log" 2>&1 &
app_pid=$!
pids+=($app_pid)
wid=$(xdotool search --sync --name "ServeLab — pascal-baseline-rr.json" | head -1)
[ -n "$wid" ] || fail "no main window"
xdotool windowmove --sync "$wid" 0 0
xdotool windowactivate --sync "$wid"
sleep 1
shot 01-opened
# Positions inside the window (the layout is the app's own: fresh settings,
# 1280x760).
move() { xdotool mousemove --window "$wid" "$1" "$2"; }
click() { move "$1" "$2"; xdotool click 1; }

# Play (Space) for a few seconds at 1×.
xdotool key --window "$wid" space
sleep 3
shot 02-playing

# Policy: Alt+P focuses the policy combo (its label's mnemonic), Up picks
# fcfs (just above rr under "Baselines"); Apply with Ctrl+Enter.
xdotool key --window "$wid" alt+p
sleep 0.3
xdotool key Up
shot 03a-policy-fcfs
sleep 0.5
xdotool key ctrl+Return
sleep 1
shot 03-fcfs-applied
xdotool search --name "ServeLab — pascal-baseline-rr.json \(edited\)" >/dev/null || fail "Apply did not restart the run"

# Live arrival rate: drag the slider's handle to the right.
xdotool key --window "$wid" space  # play again
sleep 1
move 160 110
xdotool mousedown 1
for dx in 10 20 30 40 50; do move $((160 + dx)) 110; sleep 0.05; done
xdotool mouseup 1
sleep 1.5
shot 04-rate-moved

# Compare (Ctrl+K, default policies, Enter), then Escape closes it.
xdotool key ctrl+k
sleep 1
xdotool key Return
cw=$(xdotool search --sync --name "ServeLab — Compare" | head -1)
[ -n "$cw" ] || fail "no compare window"
sleep 2
shot 05-compare
xdotool windowactivate --sync "$cw"
xdotool key Escape
sleep 1
xdotool search --name "ServeLab — Compare" >/dev/null && fail "Escape did not close the compare window"

# Export the charts: Ctrl+E, the "Slide 16:9 at 1×" preset (Alt+P, Down),
# the folder typed (Alt+F), Enter exports.
xdotool windowactivate --sync "$wid"
xdotool key --window "$wid" space  # pause
sleep 0.5
xdotool key ctrl+e
sleep 1
xdotool key alt+p
xdotool key Down
sleep 0.3
xdotool key alt+f
xdotool key ctrl+a
xdotool type --delay 20 "$tmp/charts"
sleep 0.3
shot 06-export-dialog
xdotool key Return
for _ in $(seq 100); do [ -s "$tmp/charts/run.json" ] && break; sleep 0.1; done
shot 07-exported
[ -s "$tmp/charts/run.json" ] || fail "no run.json exported"
python3 - "$tmp/charts" <<'PY' || fail "exported run.json"
import json, struct, sys
d = sys.argv[1]
r = json.load(open(d + "/run.json"))
assert r["policy"] == "fcfs", r["policy"]
assert r["sim_s"] > 0, r
assert any(c["knob"] == "arrival_rate" for c in r["changes"]), r["changes"]
for c in ("ttft_vs_reasoning", "ttft", "tpot", "qoe_slo", "throughput", "kv_usage"):
    b = open(f"{d}/{c}.png", "rb").read(32)
    assert b[:8] == b"\x89PNG\r\n\x1a\n", c
    w, h = struct.unpack(">II", b[16:24])
    assert (w, h) == (1600, 900), (c, w, h)
PY

# Quit (Ctrl+Q): the live change makes it ask; Escape cancels.
xdotool key --window "$wid" ctrl+q
sleep 1
shot 08-quit-asks
xdotool search --name "^Quit$" >/dev/null || fail "Quit did not ask before discarding the live change"
xdotool key Escape
sleep 0.5
kill -0 "$app_pid" 2>/dev/null || fail "the app quit although Cancel was chosen"
echo "PASS [xvfb_session] (screenshots in $shots)"
