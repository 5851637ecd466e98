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

# Per-operator comparison (docs/calibration.md "Per-operator profiles").
OPS="$SRC/resources/profiles/h100-operators.csv"
out=$("$CLI" calibrate --operators "$OPS")
echo "$out"
for g in linear/weight linear/compute prefill_attn decode_attn layer_misc; do grep -q "^$g " <<<"$out"; done
out=$("$CLI" calibrate --operators "$OPS" --fit --out "$TMP/ops.json")
grep -q "Refit" <<<"$out"
grep -q '"t_layer_us"' "$TMP/ops.json"
"$CLI" cost --gpu h100-sxm-80g --model llama-3.1-8b --decode 1@1024 --profile "$TMP/ops.json" >/dev/null
json=$("$CLI" calibrate --operators "$OPS" --profile "$SRC/resources/profiles/spec-defaults.json" --json)
grep -q '"base_errors"' <<<"$json"
grep -q '"eta_c": 0.7' <<<"$json"
set +e
err=$("$CLI" calibrate --operators "$TMP/missing.csv" 2>&1); rc=$?
set -e
test $rc -eq 2 || { echo "expected exit 2 for a missing operator file, got $rc"; exit 1; }

# Engine presets: a scenario names one in cluster.engine; a bad id exits 2.
"$CLI" validate "$SRC/samples/default.json" --set 'cluster.engine="vllm-v0.5"' >/dev/null
set +e
err=$("$CLI" validate "$SRC/samples/default.json" --set 'cluster.engine="vllm-v9"' 2>&1); rc=$?
set -e
echo "$err"
test $rc -eq 2 || { echo "expected exit 2 for an unknown engine, got $rc"; exit 1; }
grep -q "cluster.engine: unknown engine 'vllm-v9'" <<<"$err"
"$CLI" presets engines | grep -q "vllm-v0.5"
echo OK
