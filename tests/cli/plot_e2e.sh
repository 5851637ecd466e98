#!/usr/bin/env bash
# Usage: plot_e2e.sh CASE PATH/TO/servelab-cli SOURCE_DIR
# `servelab-cli plot` (and the PNGs of `reproduce --out`) driven like a user:
# exit codes, files written (PNG size read from its header), messages.
set -u
case_name=$1 cli=$2 src=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }
expect_code() {  # expect_code CODE cmd...
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "'$*' exited $got, expected $want"; }
}
png_size() {  # prints WxH of a PNG (IHDR), fails if not a PNG
  python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read(32)
assert b[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", b[16:24])
print(f"{w}x{h}")
PY
}
charts="ttft-by-reasoning ttft-percentiles tpot-percentiles slo-violation throughput kv-usage ttft-cdf"
unset QT_QPA_PLATFORM  # plot must pick the offscreen platform itself

case $case_name in
plot_list)
  expect_code 0 "$cli" plot --chart list
  for c in $charts; do grep -q "^$c " "$tmp/out" || fail "--chart list does not list $c"; done
  ;;
plot_render)
  expect_code 0 "$cli" run "$src/samples/pascal-phase-aware.json" --out "$tmp/r" --quiet
  expect_code 0 "$cli" plot "$tmp/r" --chart ttft-by-reasoning --png "$tmp/a.png" --svg "$tmp/a.svg" --size 800x500
  [ "$(png_size "$tmp/a.png")" = "800x500" ] || fail "a.png is $(png_size "$tmp/a.png"), expected 800x500"
  grep -q "<svg" "$tmp/a.svg" || fail "a.svg is not SVG"
  grep -q "a.png" "$tmp/out" || fail "does not say what it wrote"
  expect_code 0 "$cli" plot "$tmp/r" --chart all --png "$tmp/all/"
  for c in $charts; do
    [ "$(png_size "$tmp/all/$c.png")" = "960x600" ] || fail "all/$c.png missing or not 960x600"
  done
  # Deterministic: the same results give the same picture.
  expect_code 0 "$cli" plot "$tmp/r" --chart ttft-by-reasoning --png "$tmp/b.png" --size 800x500
  cmp -s "$tmp/a.png" "$tmp/b.png" || fail "two renderings of the same results differ"
  ;;
plot_bad_input)
  expect_code 2 "$cli" plot "$tmp/nope" --chart throughput --png "$tmp/x.png"
  grep -q "$tmp/nope" "$tmp/err" || fail "missing folder not named: $(cat "$tmp/err")"
  expect_code 0 "$cli" run "$src/samples/default.json" --out "$tmp/r" --quiet --set workload.requests=100
  expect_code 2 "$cli" plot "$tmp/r" --chart ttft-by-latency --png "$tmp/x.png"
  grep -q "unknown chart 'ttft-by-latency'" "$tmp/err" || fail "unknown chart not named: $(cat "$tmp/err")"
  expect_code 2 "$cli" plot "$tmp/r" --chart throughput --png "$tmp/x.png" --size big
  grep -q -- "--size" "$tmp/err" || fail "bad --size not named"
  # A malformed row (line 3 of timeseries.csv): FILE:LINE, exit 2, nothing written.
  sed -i '3s/^[^,]*,/oops,/' "$tmp/r/timeseries.csv"
  expect_code 2 "$cli" plot "$tmp/r" --chart throughput --png "$tmp/x.png"
  grep -q "timeseries.csv:3" "$tmp/err" || fail "message does not name timeseries.csv:3: $(cat "$tmp/err")"
  [ -e "$tmp/x.png" ] && fail "x.png written despite the error"
  expect_code 2 "$cli" plot "$tmp/r" --chart all --png "$tmp/all"
  [ -e "$tmp/all" ] && fail "folder written despite the error"
  rm "$tmp/r/requests.csv"
  expect_code 2 "$cli" plot "$tmp/r" --chart ttft-cdf --png "$tmp/x.png"
  grep -q "requests.csv" "$tmp/err" || fail "missing requests.csv not named"
  ;;
reproduce_png)
  expect_code 0 "$cli" reproduce pascal-fig12-throughput --quick --quiet --out "$tmp/a"
  [ -s "$tmp/a/pascal-fig12-throughput/throughput_vs_rate.csv" ] || fail "missing chart CSV"
  [ "$(png_size "$tmp/a/pascal-fig12-throughput/throughput_vs_rate.png")" = "960x600" ] \
    || fail "missing throughput_vs_rate.png next to its CSV"
  ;;
plot_no_helper)
  # servelab-cli links no Qt; the charts twin does the drawing. Without the
  # twin next to it, plot says what is missing (exit 2) and reproduce
  # still writes its tables and CSVs, with a note instead of PNGs.
  if ldd "$cli" | grep -q "libQt6"; then fail "servelab-cli links Qt: $(ldd "$cli" | grep libQt6 | head -1)"; fi
  ldd "$(dirname "$cli")/servelab-cli-charts" | grep -q "libQt6Charts" || fail "servelab-cli-charts does not link Qt Charts"
  mkdir "$tmp/alone" && cp "$cli" "$tmp/alone/servelab-cli"
  expect_code 2 "$tmp/alone/servelab-cli" plot /tmp --chart throughput --png "$tmp/x.png"
  grep -q "servelab-cli-charts" "$tmp/err" || fail "missing twin not named: $(cat "$tmp/err")"
  grep -q "$tmp/alone/servelab-cli-charts" "$tmp/err" || fail "the path looked at is not named: $(cat "$tmp/err")"
  expect_code 0 "$tmp/alone/servelab-cli" reproduce pascal-fig12-throughput --quick --quiet --out "$tmp/a"
  [ -s "$tmp/a/pascal-fig12-throughput/throughput_vs_rate.csv" ] || fail "missing chart CSV"
  grep -q "no PNGs" "$tmp/err" || fail "no note about the PNGs: $(cat "$tmp/err")"
  ls "$tmp/a/pascal-fig12-throughput/"*.png 2>/dev/null && fail "PNGs written without the twin"
  # With the twin the same call exits as the twin does: a bad id is exit 2 either way.
  expect_code 2 "$cli" reproduce no-such-experiment --quick --out "$tmp/b"
  grep -q "unknown experiment" "$tmp/err" || fail "bad id not named: $(cat "$tmp/err")"
  ;;
plot_no_gui)
  expect_code 2 "$cli" plot /tmp --chart throughput --png "$tmp/x.png"
  grep -q "built without the Qt GUI" "$tmp/err" || fail "no clear message: $(cat "$tmp/err")"
  ;;
*) fail "unknown case" ;;
esac
exit 0
