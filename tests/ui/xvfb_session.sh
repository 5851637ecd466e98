#!/usr/bin/env bash
# Usage: xvfb_session.sh PATH/TO/servelab SOURCE_DIR [SHOTS_DIR]
# A scripted session under a real X server (Xvfb + openbox) with real input
# events (xdotool), as a user would:
#  1. the first screen: the app opened with no arguments and a fresh settings
#     folder (the FCFS sample, the window inside the screen), and a guided
#     tour started from its "Guided tours" button (step 1 loads and plays);
#  2. open a sample, play, switch policy and apply, move the live rate
#     slider, compare (and close it with Escape), export the charts at a
#     slide preset through the export dialog, run a sweep from Run > Sweep...
#     (its results.csv checked), and quit (which must ask, the run having a
#     live change).
# Every step is checked from outside (window titles, files written); any
# failing step, xdotool command included, fails the script (exit 1).
# Screenshots of each step go to SHOTS_DIR (default: a temporary folder) for
# review. Needs Xvfb, openbox, xdotool and ImageMagick's import; exits 77
# (skipped) when one is missing.
set -u
app=$1 src=$2
shots=${3:-}
for tool in Xvfb openbox xdotool import; do
  command -v "$tool" >/dev/null || { echo "SKIP: $tool not installed"; exit 77; }
done
tmp=$(mktemp -d)
[ -n "$shots" ] || shots=$tmp/shots
mkdir -p "$shots" "$tmp/cfg" "$tmp/cfg0" "$tmp/rt" "$tmp/charts" "$tmp/tmp"
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
shot() { import -window root "$shots/$1.png" || fail "screenshot $1"; }
# xdotool that fails the session when the command fails (a window gone, a
# key not sent).
xdo() { xdotool "$@" || fail "xdotool $*"; }
# Wait up to $2 seconds (default 10) for a window whose name matches $1.
wait_window() {
  local t=$(( ${2:-10} * 10 ))
  for _ in $(seq "$t"); do
    xdotool search --name "$1" 2>/dev/null | head -1 | grep . && return 0
    sleep 0.1
  done
  return 1
}

# 1. The first screen: no arguments, fresh settings (its own folder).
XDG_CONFIG_HOME=$tmp/cfg0 "$app" --no-opengl >"$tmp/app0.log" 2>&1 &
first_pid=$!
pids+=($first_pid)
w0=$(wait_window "^ServeLab — pascal-baseline-fcfs.json$" 20) || fail "the first screen did not open the FCFS sample"
xdo windowactivate --sync "$w0"
sleep 1
shot 00a-first-screen
eval "$(xdotool getwindowgeometry --shell "$w0")"
# Its size, title bar (~20 px) included, fits the screen (where it is placed
# is the window manager's; the screenshot shows the status bar).
[ "$WIDTH" -le 1280 ] && [ $((HEIGHT + 20)) -le 800 ] ||
  fail "the first window (${WIDTH}x${HEIGHT}) does not fit the 1280x800 screen"
# The "Guided tours" button at the menu bar's right end: its first tour
# (PASCAL) starts at step 1, which loads the oracle sample and plays.
xdo mousemove --window "$w0" $((WIDTH - 45)) 10 click 1
sleep 0.7
shot 00b-tours-menu
xdo key Down Return
w1=$(wait_window "^ServeLab — pascal-baseline-oracle.json( \(tour: [^)]*\))?$" 10) || fail "the tour did not load its first step"
sleep 2
shot 00c-tour-step1
xdo windowactivate --sync "$w1"
sleep 0.3
xdo key ctrl+q  # nothing to lose: quits without asking
for _ in $(seq 50); do kill -0 "$first_pid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$first_pid" 2>/dev/null && fail "Ctrl+Q did not quit the first-screen window"

# 2. A session on a sample.

TMPDIR=$tmp/tmp "$app" --no-opengl --size 1280x760 "$src/samples/pascal-baseline-rr.json" >"$tmp/app.log" 2>&1 &
app_pid=$!
pids+=($app_pid)
wid=$(xdotool search --sync --name "ServeLab — pascal-baseline-rr.json" | head -1)
[ -n "$wid" ] || fail "no main window"
xdo windowmove --sync "$wid" 0 0
xdo windowactivate --sync "$wid"
sleep 1
shot 01-opened
# Positions inside the window (the layout is the app's own: fresh settings,
# 1280x760).
move() { xdo mousemove --window "$wid" "$1" "$2"; }
click() { move "$1" "$2"; xdo click 1; }

# Play (Space) for a few seconds at 1×.
xdo key --window "$wid" space
sleep 3
shot 02-playing

# Policy: Alt+P focuses the policy combo (its label's mnemonic), Up picks
# fcfs (just above rr under "Baselines"); Apply with Ctrl+Enter.
xdo key --window "$wid" alt+p
sleep 0.3
xdo key Up
shot 03a-policy-fcfs
sleep 0.5
xdo key ctrl+Return
sleep 1
shot 03-fcfs-applied
xdotool search --name "ServeLab — pascal-baseline-rr.json \(edited\)" >/dev/null || fail "Apply did not restart the run"

# Live arrival rate: drag the slider's handle to the right.
xdo key --window "$wid" space  # play again
sleep 1
move 160 110
xdo mousedown 1
for dx in 10 20 30 40 50; do move $((160 + dx)) 110; sleep 0.05; done
xdo mouseup 1
sleep 1.5
shot 04-rate-moved

# Compare (Ctrl+K, default policies, Enter), then Escape closes it.
xdo key ctrl+k
sleep 1
xdo key Return
cw=$(xdotool search --sync --name "ServeLab — Compare" | head -1)
[ -n "$cw" ] || fail "no compare window"
sleep 2
shot 05-compare
xdo windowactivate --sync "$cw"
xdo key Escape
sleep 1
xdotool search --name "ServeLab — Compare" >/dev/null && fail "Escape did not close the compare window"

# Export the charts: Ctrl+E, the "Slide 16:9 at 1×" preset (Alt+P, Down),
# the folder typed (Alt+F), Enter exports.
xdo windowactivate --sync "$wid"
xdo key --window "$wid" space  # pause
sleep 0.5
xdo key ctrl+e
sleep 1
xdo key alt+p
xdo key Down
sleep 0.3
xdo key alt+f
xdo key ctrl+a
xdo type --delay 20 "$tmp/charts"
sleep 0.3
shot 06-export-dialog
xdo key Return
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

# Run > Sweep... (Alt+R, W): the dialog opens on this scenario; one rate
# (from 4 to 4) and one seed for its default policies, Enter runs it (Run
# sweep is the default button); the sweep writes its results.csv in a
# temporary folder (TMPDIR): one point a policy.
xdo windowactivate --sync "$wid"
xdo key --window "$wid" alt+r
sleep 0.4
xdo key w
sw=$(wait_window "^Sweep$" 10) || fail "Run > Sweep... did not open the sweep dialog"
xdo windowactivate --sync "$sw"
sleep 0.5
xdo key Tab Tab ctrl+a
xdo type --delay 20 "4"
xdo key Tab Tab ctrl+a
xdo type --delay 20 "1"
sleep 0.3
shot 07a-sweep-dialog
xdo key Return
res=
for _ in $(seq 1200); do
  res=$(find "$tmp/tmp" -name results.csv -size +0 2>/dev/null | head -1)
  [ -n "$res" ] && break
  sleep 0.1
done
[ -n "$res" ] || fail "the sweep wrote no results.csv within 120 s"
sleep 1
shot 07b-sweep-done
python3 - "$res" <<'PY' || fail "the sweep's results.csv ($res)"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
# One rate and one seed for each of the dialog's default policies (the
# scenario's own first), every point run to the end.
assert len(rows) >= 2, rows
assert rows[0]["policy.id"] == "fcfs", rows[0]
assert len({r["policy.id"] for r in rows}) == len(rows), rows
for r in rows:
    assert float(r["workload.arrival.rate"]) == 4.0 and r["run.seed"] == "1", r
    assert int(r["requests.finished"]) == 1000, r
PY
xdo key Escape  # the dialog has the focus
sleep 0.5
xdotool search --name "^Sweep$" >/dev/null && fail "Escape did not close the sweep dialog"

# Quit (Ctrl+Q): the live change makes it ask; Escape cancels.
xdo windowactivate --sync "$wid"
sleep 0.3
xdo key --window "$wid" ctrl+q
sleep 1
shot 08-quit-asks
xdotool search --name "^Quit$" >/dev/null || fail "Quit did not ask before discarding the live change"
xdo key Escape
sleep 0.5
kill -0 "$app_pid" 2>/dev/null || fail "the app quit although Cancel was chosen"
echo "PASS [xvfb_session] (screenshots in $shots)"
