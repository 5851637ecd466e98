#!/usr/bin/env bash
# servelab-cli calibrate end to end: fit the shipped sample, check the text and
# JSON outputs, then feed the profile to `cost --profile`; bad input exits 2.
set -euo pipefail
CLI=$1
SRC=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SAMPLE="$SRC/samples/calibration/h100-sxm-80g_llama-3.1-8b.csv"

out=$("$CLI" calibrate "$SAMPLE" --gpu h100-sxm-80g --model llama-3.1-8b --out "$TMP/p.json")
echo "$out"
grep -q "MAPE" <<<"$out"
grep -q "eta_kv" <<<"$out"
test -f "$TMP/p.json"
ls "$TMP" | grep -q tmp && { echo "temporary file left behind"; exit 1; }
grep -q '"coefficients"' "$TMP/p.json"

json=$("$CLI" calibrate "$SAMPLE" --gpu h100-sxm-80g --model llama-3.1-8b --json)
for key in '"coefficients"' '"mape"' '"terms"' '"gpu"'; do grep -q "$key" <<<"$json"; done

"$CLI" cost --gpu h100-sxm-80g --model llama-3.1-8b --decode 32@1024 --profile "$TMP/p.json" >/dev/null

printf 'tp,seconds\n1,0.1\n' >"$TMP/bad.csv"
set +e
err=$("$CLI" calibrate "$TMP/bad.csv" --gpu h100-sxm-80g --model llama-3.1-8b --out "$TMP/q.json" 2>&1)
rc=$?
set -e
test $rc -eq 2 || { echo "expected exit 2, got $rc"; exit 1; }
grep -q "bad.csv:1" <<<"$err"
test ! -e "$TMP/q.json"
echo OK
