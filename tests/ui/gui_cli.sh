#!/usr/bin/env bash
# Usage: gui_cli.sh CASE PATH/TO/servelab SOURCE_DIR
# The desktop app's command line, driven like a user (offscreen): bad
# scenarios exit 2 with a message naming the file and the place, and
# --export-charts writes what File ▸ Export ▸ Charts… writes.
set -u
case_name=$1 app=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }
expect_code() {  # expect_code CODE cmd...
  local want=$1; shift
  timeout 120 "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "'$*' exited $got, expected $want"; }
}
png_size() {  # WxH from the PNG header
  python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read(32)
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
print("%dx%d" % struct.unpack(">II", b[16:24]))
PY
}

case $case_name in
bad_scenario)
  echo '{"workload": {"arrival": {"rate": -3}}}' > "$tmp/neg.json"
  # Opening it (no --screenshot) must not leave an empty window running.
  expect_code 2 "$app" "$tmp/neg.json"
  grep -q "neg.json" "$tmp/err" && grep -q "workload.arrival.rate" "$tmp/err" \
    || fail "message does not name the file and the place: $(cat "$tmp/err")"
  echo '{"cluster": {' > "$tmp/syntax.json"
  expect_code 2 "$app" --scenario "$tmp/syntax.json" --screenshot "$tmp/x.png"
  grep -q "syntax.json:" "$tmp/err" || fail "syntax error does not name the file: $(cat "$tmp/err")"
  [ -e "$tmp/x.png" ] && fail "screenshot written for a bad scenario"
  echo '{"model": "llama-3.1-70b"}' > "$tmp/fit.json"  # valid JSON the engine refuses
  expect_code 2 "$app" --scenario "$tmp/fit.json" --export-charts "$tmp/charts"
  grep -q "fit.json" "$tmp/err" || fail "engine refusal does not name the file: $(cat "$tmp/err")"
  expect_code 2 "$app" "$tmp/missing.json"
  grep -q "missing.json" "$tmp/err" || fail "missing file not named: $(cat "$tmp/err")"
  ;;
export_charts)
  expect_code 0 "$app" --scenario "$src/samples/pascal-baseline-rr.json" --run-for 40 \
      --export-charts "$tmp/c" --export-size 800x450 --export-scale 2
  grep -q "28 files written" "$tmp/out" || fail "no summary line: $(cat "$tmp/out")"
  # Which run: seed and fingerprint in run.json and in every PNG's text chunks.
  python3 - "$tmp/c" <<'PY' || fail "run.json / PNG metadata"
import json, sys, zlib
d = sys.argv[1]
r = json.load(open(d + "/run.json"))
assert r["seed"] == 1 and len(r["fingerprint"]) == 16 and r["sim_s"] >= 40, r
assert r["scenario"] == "pascal-baseline-rr.json" and r["changes"] == [], r
png = open(d + "/ttft.png", "rb").read()
texts = {}
i = 8
while i < len(png):
    n = int.from_bytes(png[i:i + 4], "big"); kind = png[i + 4:i + 8]; body = png[i + 8:i + 8 + n]
    if kind == b"tEXt":
        k, v = body.split(b"\0", 1); texts[k.decode()] = v.decode("latin-1")
    elif kind == b"zTXt":
        k, rest = body.split(b"\0", 1); texts[k.decode()] = zlib.decompress(rest[1:]).decode("latin-1")
    elif kind == b"iTXt":
        k, rest = body.split(b"\0", 1); texts[k.decode()] = rest
    i += 12 + n
assert "ServeLab fingerprint" in texts and "ServeLab seed" in texts, texts.keys()
PY
  # Without --run-for the run goes to its end (not t = 0), and the offscreen
  # platform's propagateSizeHints warning is not printed.
  expect_code 0 "$app" --scenario "$src/samples/default.json" --export-charts "$tmp/e"
  python3 -c "import json; r=json.load(open('$tmp/e/run.json')); assert r['sim_s'] > 400, r" \
    || fail "--export-charts without --run-for did not run to the end: $(cat "$tmp/e/run.json")"
  grep -q "propagateSizeHints" "$tmp/err" && fail "propagateSizeHints noise: $(cat "$tmp/err")"
  for id in ttft_vs_reasoning ttft tpot qoe_slo throughput kv_usage ttft_cdf tpot_cdf e2e_cdf; do
    [ "$(png_size "$tmp/c/$id.png")" = "1600x900" ] || fail "$id.png is $(png_size "$tmp/c/$id.png"), expected 1600x900"
    grep -q "<svg" "$tmp/c/$id.svg" || fail "$id.svg is not SVG"
    [ -s "$tmp/c/$id.csv" ] || fail "no $id.csv"
  done
  expect_code 2 "$app" --scenario "$src/samples/default.json" --export-charts "$tmp/d" --export-size huge
  grep -q -- "--export-size" "$tmp/err" || fail "bad --export-size not named"
  ;;
no_display)
  # Batch modes with no display and no QT_QPA_PLATFORM: offscreen, as
  # `servelab-cli plot` (they used to abort, rc 134, "could not connect to display").
  nodisp=(env -u QT_QPA_PLATFORM -u DISPLAY -u WAYLAND_DISPLAY)
  expect_code 0 "${nodisp[@]}" "$app" --scenario "$src/samples/default.json" --run-for 5 --screenshot "$tmp/s.png" --size 1024x768
  [ "$(png_size "$tmp/s.png")" = "1024x768" ] || fail "s.png is $(png_size "$tmp/s.png"), expected 1024x768"
  expect_code 0 "${nodisp[@]}" "$app" --scenario "$src/samples/default.json" --run-for 5 --export-charts="$tmp/c" \
      --export-size 640x400 --export-scale 1
  [ "$(png_size "$tmp/c/ttft.png")" = "640x400" ] || fail "ttft.png is $(png_size "$tmp/c/ttft.png")"
  expect_code 0 "${nodisp[@]}" "$app" --help
  grep -q -- "--export-charts" "$tmp/out" || fail "--help printed no options"
  ;;
batch_defaults)
  # --screenshot without --run-for runs the scenario to its end (it used to
  # write t = 0 silently): a picture other than --run-for 0's, and no
  # propagateSizeHints noise from the offscreen platform.
  expect_code 0 "$app" --scenario "$src/samples/default.json" --screenshot "$tmp/end.png" --size 1024x768
  grep -q "propagateSizeHints" "$tmp/err" && fail "propagateSizeHints noise: $(cat "$tmp/err")"
  expect_code 0 "$app" --scenario "$src/samples/default.json" --screenshot "$tmp/zero.png" --size 1024x768 --run-for 0
  cmp -s "$tmp/end.png" "$tmp/zero.png" && fail "--screenshot without --run-for drew t = 0"
  expect_code 0 "$app" --help
  tr -s ' \n' '  ' <"$tmp/out" | grep -q "default: the scenario to its end" \
    || fail "--help does not say what --run-for defaults to: $(cat "$tmp/out")"
  ;;
first_screen)
  # The README's run command (`bash .ci/servelab run`, no SCENARIO) opens
  # the app's first screen, the scenario a first start opens: FCFS under
  # memory pressure at 4×, whose KV fills within 30 s of wall time (120
  # simulated seconds at 4×). Headless, the same sample.
  grep -q -- 'servelab" --first-screen' "$src/.ci/servelab" || fail ".ci/servelab run does not open the first screen"
  expect_code 0 "$app" --first-screen --run-for 120 --export-charts "$tmp/f"
  python3 - "$tmp/f" "$src/.ci/servelab" <<'PY' || fail "the first screen is not lively: $(cat "$tmp/f/run.json")"
import csv, json, re, sys
d, script = sys.argv[1], open(sys.argv[2]).read()
r = json.load(open(d + "/run.json"))
headless = re.search(r"scenario=\$\{2:-samples/([^}]+)\}", script).group(1)
assert r["scenario"] == headless, (r["scenario"], headless)
kv = [float(row["fraction"]) for row in csv.DictReader(open(d + "/kv_usage.csv"))]
assert max(kv) >= 0.95, max(kv)
PY
  ;;
*) fail "unknown case" ;;
esac
echo "PASS [$case_name]"
