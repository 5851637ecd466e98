#!/usr/bin/env bash
# Usage: cli_e2e.sh CASE PATH/TO/servelab-cli SOURCE_DIR
# Each case runs the CLI the way a user would and checks exit codes, files
# and messages. Prints what failed; exit 0 = pass.
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
outputs="summary.json requests.csv timeseries.csv trace.json"

case $case_name in
run_default)
  expect_code 0 "$cli" run "$src/samples/default.json" --out "$tmp/r"
  for f in $outputs; do [ -s "$tmp/r/$f" ] || fail "missing $f"; done
  grep -q "ttft" "$tmp/out" || fail "no summary table on stdout"
  # The "wrote" line lists every file written, tail_ttft.csv included.
  grep -q "wrote $tmp/r/{summary.json,requests.csv,timeseries.csv,trace.json,tail_ttft.csv}" "$tmp/out" \
    || fail "wrote line does not list the files: $(grep wrote "$tmp/out")"
  [ -s "$tmp/r/tail_ttft.csv" ] || fail "missing tail_ttft.csv"
  # --quiet: nothing on stdout (no table, no progress), files still written.
  expect_code 0 "$cli" run "$src/samples/default.json" --out "$tmp/q" --quiet --set workload.requests=50
  [ -s "$tmp/out" ] && fail "--quiet printed: $(cat "$tmp/out")"
  [ -s "$tmp/q/summary.json" ] || fail "--quiet wrote no summary.json"
  # ... nor on stderr for a trace workload (its counts are in summary.json).
  expect_code 0 "$cli" run "$src/samples/trace-azure-random-router.json" --out "$tmp/qt" --quiet
  [ -s "$tmp/out" ] || [ -s "$tmp/err" ] && fail "--quiet with a trace printed: $(cat "$tmp/out" "$tmp/err")"
  python3 -c "import json; assert json.load(open('$tmp/qt/summary.json'))['trace']['rows'] == 300" \
    || fail "--quiet trace: summary.json lacks the trace counts"
  python3 - "$tmp/r" <<'PY' || fail "outputs inconsistent"
import csv, json, sys
d = sys.argv[1]
s = json.load(open(d + "/summary.json"))
req = s["requests"]
assert req["arrived"] == 2000 and req["finished"] + req["in_flight"] == req["arrived"], req
rows = list(csv.DictReader(open(d + "/requests.csv")))
assert len(rows) == 2000, len(rows)
assert len({r["id"] for r in rows}) == 2000
for r in rows:
    assert int(r["generated_tokens"]) == int(r["reasoning_tokens"]) + int(r["answer_tokens"])
ts = list(csv.DictReader(open(d + "/timeseries.csv")))
assert len(ts) > 100 and "i3_gpu_blocks" in ts[0]
assert s["scenario"]["cluster"]["instances"] == 4 and s["policy"] == "fcfs"
PY
  ;;
interrupt)
  # SIGINT (Ctrl-C) or SIGTERM while `run --out` goes: the run stops,
  # removes trace.json's temporary (streamed since the run began) and the
  # folders it created, says so, and ends by the signal (128 + its number).
  set -m  # job control: the background run does not inherit an ignored SIGINT
  for sig in INT TERM; do
    "$cli" run "$src/bench/w3.json" --quiet --out "$tmp/new/$sig" --set workload.requests=3000000 \
      >"$tmp/out" 2>"$tmp/err" &
    pid=$!
    for _ in $(seq 600); do
      compgen -G "$tmp/new/$sig/trace.json.tmp.*" >/dev/null && break
      sleep 0.05
    done
    compgen -G "$tmp/new/$sig/trace.json.tmp.*" >/dev/null || { kill -KILL $pid; fail "$sig: no trace.json temporary"; }
    kill -$sig $pid
    wait $pid
    code=$?
    want=$((128 + $(kill -l $sig)))
    [ "$code" = "$want" ] || fail "$sig: exit $code, expected $want: $(cat "$tmp/err")"
    grep -qF "servelab-cli: interrupted by SIG$sig: the run in progress wrote nothing" "$tmp/err" \
      || fail "$sig: message: $(cat "$tmp/err")"
    [ -e "$tmp/new/$sig" ] && fail "$sig: left $(ls -R "$tmp/new")"
  done
  [ -e "$tmp/new" ] && fail "left the parent folder the runs created"
  # Into an existing folder: the folder and its files stay as they were.
  mkdir -p "$tmp/keep" && echo old >"$tmp/keep/summary.json"
  "$cli" run "$src/bench/w3.json" --quiet --out "$tmp/keep" --set workload.requests=3000000 >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  for _ in $(seq 600); do
    compgen -G "$tmp/keep/trace.json.tmp.*" >/dev/null && break
    sleep 0.05
  done
  kill -INT $pid
  wait $pid
  [ "$(ls "$tmp/keep")" = "summary.json" ] && [ "$(cat "$tmp/keep/summary.json")" = old ] \
    || fail "existing folder changed: $(ls "$tmp/keep")"
  set +m
  ;;
outputs)
  # --outputs (issue 27): each group its files, the same bytes as a full run's.
  expect_code 0 "$cli" run "$src/samples/default.json" --out "$tmp/full" --quiet --set workload.requests=300
  expect_code 0 "$cli" run "$src/samples/default.json" --out "$tmp/sr" --outputs summary,requests \
    --set workload.requests=300
  grep -q "wrote $tmp/sr/{summary.json,requests.csv,tail_ttft.csv}" "$tmp/out" \
    || fail "wrote line: $(grep wrote "$tmp/out")"
  [ "$(ls "$tmp/sr" | tr '\n' ' ')" = "requests.csv summary.json tail_ttft.csv " ] || fail "files: $(ls "$tmp/sr")"
  for f in summary.json requests.csv tail_ttft.csv; do
    cmp -s "$tmp/full/$f" "$tmp/sr/$f" || fail "$f differs from the full run's"
  done
  expect_code 0 "$cli" run "$src/samples/default.json" --out "$tmp/tt" --outputs trace,timeseries --quiet \
    --set workload.requests=300
  [ "$(ls "$tmp/tt" | tr '\n' ' ')" = "timeseries.csv trace.json " ] || fail "files: $(ls "$tmp/tt")"
  for f in timeseries.csv trace.json; do cmp -s "$tmp/full/$f" "$tmp/tt/$f" || fail "$f differs"; done
  # A bad value: exit 2, the value named, nothing written.
  expect_code 2 "$cli" run "$src/samples/default.json" --out "$tmp/bad" --outputs summary,traces
  grep -q "traces" "$tmp/err" || fail "error does not name the value: $(cat "$tmp/err")"
  [ -e "$tmp/bad" ] && fail "a bad --outputs created $tmp/bad"
  expect_code 2 "$cli" run "$src/samples/default.json" --outputs summary
  expect_code 2 "$cli" compare "$src/samples/default.json" --policies fcfs --out "$tmp/cmp" --outputs csv
  ;;
run_empty)
  echo '{}' > "$tmp/empty.json"
  expect_code 0 "$cli" run "$tmp/empty.json" --out "$tmp/r" --quiet
  for f in $outputs; do [ -s "$tmp/r/$f" ] || fail "missing $f"; done
  ;;
determinism)
  expect_code 0 "$cli" run "$src/samples/pascal-baseline-rr.json" --out "$tmp/a" --quiet
  expect_code 0 "$cli" run "$src/samples/pascal-baseline-rr.json" --out "$tmp/b" --quiet
  for f in $outputs; do cmp -s "$tmp/a/$f" "$tmp/b/$f" || fail "$f differs between two identical runs"; done
  expect_code 0 "$cli" run "$src/samples/pascal-baseline-rr.json" --out "$tmp/c" --quiet --seed 2
  cmp -s "$tmp/a/requests.csv" "$tmp/c/requests.csv" && fail "--seed 2 gave the same requests.csv as seed 1"
  ;;
bad_input)
  # MoE deployments (issue 47): a field that cannot hold names itself, exit 2, nothing written.
  expect_code 2 "$cli" run "$src/samples/moe-qwen3-235b-ep8.json" --out "$tmp/moe" --set cluster.ep=3
  grep -q "cluster.ep: 3 does not divide the instance's 8 GPUs" "$tmp/err" || fail "ep: $(cat "$tmp/err")"
  [ -e "$tmp/moe" ] && fail "a bad cluster.ep created $tmp/moe"
  printf '1\n2\n' > "$tmp/h.csv"
  expect_code 2 "$cli" run "$src/samples/moe-qwen3-235b-ep8.json" --out "$tmp/moe" \
    --set 'cluster.moe_routing={"kind":"file","path":"'"$tmp"'/h.csv"}'
  grep -q "cluster.moe_routing.path: .*h.csv has 2 expert loads; the model has 128" "$tmp/err" \
    || fail "routing file: $(cat "$tmp/err")"
  expect_code 2 "$cli" cost --model llama-3.1-8b --ep 2 --tp 2
  grep -q "cluster.ep: Llama-3.1-8B is a dense model" "$tmp/err" || fail "cost --ep: $(cat "$tmp/err")"
  # A trace that cannot be read: the message names the field (issue 50).
  expect_code 2 "$cli" run "$src/samples/trace-burstgpt-rr.json" --out "$tmp/trace" \
    --set workload.trace.path=no/such/trace.csv
  grep -q "workload.trace.path: .*no/such/trace.csv: cannot open trace file" "$tmp/err" \
    || fail "trace path: $(cat "$tmp/err")"
  # Speculative decoding (issue 48): k < 1, acceptance outside [0, 1], a draft
  # model larger than the target or of another tokenizer, exit 2 naming the field.
  expect_code 2 "$cli" run "$src/samples/default.json" --out "$tmp/spec" --set 'cluster.speculative={"k":0}'
  grep -q "cluster.speculative.k: must be between 1 and 16 (got 0)" "$tmp/err" || fail "spec k: $(cat "$tmp/err")"
  [ -e "$tmp/spec" ] && fail "a bad cluster.speculative created $tmp/spec"
  expect_code 2 "$cli" run "$src/samples/default.json" --out "$tmp/spec" \
    --set 'cluster.speculative={"acceptance":{"alpha":[0.9,1.2]}}'
  grep -q "cluster.speculative.acceptance.alpha\[1\]: must be in \[0, 1\]" "$tmp/err" \
    || fail "spec alpha: $(cat "$tmp/err")"
  expect_code 2 "$cli" run "$src/samples/default.json" --out "$tmp/spec" \
    --set 'cluster.speculative={"method":"draft","draft_model":"llama-3.1-70b","acceptance":{"length":2}}'
  grep -q "cluster.speculative.draft_model: Llama-3.1-70B .* is not smaller than the target" "$tmp/err" \
    || fail "spec draft size: $(cat "$tmp/err")"
  expect_code 2 "$cli" run "$src/samples/default.json" --out "$tmp/spec" \
    --set 'cluster.speculative={"method":"draft","draft_model":"qwen3-8b","acceptance":{"length":2}}' \
    --set model=llama-3.1-70b --set cluster.tp=4
  grep -q "cluster.speculative.draft_model: .*must share the target's tokenizer" "$tmp/err" \
    || fail "spec vocabulary: $(cat "$tmp/err")"
  echo '{"workload": {"arrival": {"rate": -3}}}' > "$tmp/neg.json"
  expect_code 2 "$cli" run "$tmp/neg.json" --out "$tmp/r"
  grep -q "workload.arrival.rate" "$tmp/err" || fail "message does not name workload.arrival.rate: $(cat "$tmp/err")"
  grep -q "neg.json" "$tmp/err" || fail "message does not name the file"
  [ -e "$tmp/r" ] && fail "output directory written for a bad scenario"
  echo '{"workload": {"arival": {}}}' > "$tmp/typo.json"
  expect_code 2 "$cli" run "$tmp/typo.json"
  grep -q "workload.arival" "$tmp/err" && grep -q "did you mean 'workload.arrival'" "$tmp/err" \
    || fail "no did-you-mean: $(cat "$tmp/err")"
  echo '{"cluster": {' > "$tmp/syntax.json"
  expect_code 2 "$cli" run "$tmp/syntax.json"
  grep -q "syntax.json:" "$tmp/err" || fail "syntax error does not name the file"
  expect_code 2 "$cli" run "$tmp/missing.json"
  echo '{"policy": {"id": "fcfz"}}' > "$tmp/pol.json"
  expect_code 2 "$cli" run "$tmp/pol.json"
  grep -q "did you mean 'fcfs'" "$tmp/err" || fail "unknown policy without hint: $(cat "$tmp/err")"
  echo '{"model": "llama-3.1-70b"}' > "$tmp/fit.json"
  expect_code 2 "$cli" run "$tmp/fit.json"
  grep -q "tp" "$tmp/err" || fail "weights-do-not-fit message lacks the tp hint: $(cat "$tmp/err")"
  echo '{"policy": {"id": "rr", "knobs": {"quantm": 3}}}' > "$tmp/knob.json"
  expect_code 2 "$cli" run "$tmp/knob.json"
  grep -q "policy.knobs.quantm" "$tmp/err" || fail "unknown knob not named"
  expect_code 2 "$cli" run "$src/samples/default.json" --set workload.arrival.rate=oops
  expect_code 2 "$cli" nosuchcommand
  ;;
compare)
  expect_code 0 "$cli" compare "$src/samples/pascal-baseline-fcfs.json" --policies fcfs,rr,oracle --out "$tmp/c" --quiet --json
  python3 - "$tmp/out" <<'PY' || fail "compare --json malformed"
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["policy"] for r in d["runs"]] == ["fcfs", "rr", "oracle"]
assert d["runs"][2]["summary"]["preemptions"] == 0
assert d["runs"][0]["summary"]["preemptions"] > 0
PY
  for p in fcfs rr oracle; do [ -s "$tmp/c/$p/summary.json" ] || fail "no outputs for $p"; done
  expect_code 0 "$cli" compare "$src/samples/default.json" --policies fcfs,rr --set workload.requests=300
  grep -q "TTFT p99" "$tmp/out" || fail "no comparison table"
  # Counts are whole numbers, and migrations have a row.
  grep -Eq "^preemptions +[0-9]+ " "$tmp/out" || fail "preemptions not a whole number: $(grep preemptions "$tmp/out")"
  grep -Eq "^migrations +[0-9]+ " "$tmp/out" || fail "no migrations row: $(cat "$tmp/out")"
  expect_code 0 "$cli" compare "$src/samples/default.json" --policies fcfs,rr --quiet --set workload.requests=50
  [ -s "$tmp/out" ] && fail "compare --quiet printed: $(cat "$tmp/out")"
  # A policy listed twice is refused (as the GUI does), before anything runs.
  expect_code 2 "$cli" compare "$src/samples/default.json" --policies fcfs,fcfs --out "$tmp/dup"
  grep -q "'fcfs' is listed twice" "$tmp/err" || fail "duplicate not refused by name: $(cat "$tmp/err")"
  [ -e "$tmp/dup" ] && fail "outputs written for a refused compare"
  ;;
validate)
  expect_code 0 "$cli" validate "$src/samples/default.json"
  grep -q "OK" "$tmp/out" || fail "validate did not say OK"
  expect_code 0 "$cli" validate "$src/samples/default.json" --canonical
  cp "$tmp/out" "$tmp/canon.json"
  expect_code 0 "$cli" validate "$tmp/canon.json" --canonical
  cmp -s "$tmp/out" "$tmp/canon.json" || fail "canonical form does not round-trip"
  # Mixed pools: each pool with its GPU, TP, role and KV room.
  expect_code 0 "$cli" validate "$src/samples/mixed-pools-splitwise.json"
  grep -q "1 × h100-sxm-80g (tp 8, prefill, KV [0-9]* tokens) + 2 × a100-80g (tp 8, decode, KV [0-9]* tokens)" \
    "$tmp/out" || fail "validate of mixed pools: $(cat "$tmp/out")"
  ;;
presets)
  expect_code 0 "$cli" presets
  for w in h100-sxm-80g r1-distill-qwen-32b llama-2-70b fcfs rr oracle decode-first least-kv alpaca-reasoning; do
    grep -q "$w" "$tmp/out" || fail "presets lacks $w"
  done
  expect_code 0 "$cli" presets policies --json
  python3 -c "import json,sys; d=json.load(open('$tmp/out')); assert any(p['id']=='rr' and p['knobs'][0]['default']==500 for p in d['policies'])" \
    || fail "presets policies --json"
  expect_code 2 "$cli" presets gpuz
  # Every router, the cache-aware ones included; engines with their front end.
  expect_code 0 "$cli" presets routers
  for w in round-robin least-loaded least-kv random power-of-two prefix-aware session-affinity; do
    grep -q "^router    $w\$" "$tmp/out" || fail "presets routers lacks $w: $(cat "$tmp/out")"
  done
  expect_code 0 "$cli" presets engines
  grep "^engine  *vllm-v1-serve" "$tmp/out" | grep -q '"async_scheduling":true' || fail "engines line: $(cat "$tmp/out")"
  # Issue 23's presets: listed, with their FP8 peak and source.
  expect_code 0 "$cli" presets
  for w in h200-sxm-141g b200-180g l40s-48g mi300x-192g qwen3-8b qwen3-32b llama-3.3-70b; do
    grep -q "$w" "$tmp/out" || fail "presets lacks $w"
  done
  grep "^gpu  *mi300x-192g" "$tmp/out" | grep -q "1307 TFLOP/s bf16  2615 fp8" || fail "mi300x line: $(grep mi300x "$tmp/out")"
  grep "^gpu  *a100-40g" "$tmp/out" | grep -q "bf16     - fp8" || fail "a100 shows an FP8 peak: $(grep a100 "$tmp/out")"
  expect_code 0 "$cli" presets gpus --json
  python3 - "$tmp/out" <<'PY' || fail "presets gpus --json: $(cat "$tmp/out")"
import json, sys
g = {x["id"]: x for x in json.load(open(sys.argv[1]))["gpus"]}
assert g["b200-180g"]["fp8_tflops"] == 4500 and g["a100-40g"]["fp8_tflops"] is None, g["b200-180g"]
assert g["mi300x-192g"]["peer_link_gbps"] == 64 and g["l40s-48g"]["nvlink_gbps"] is None
assert all(x["source"] for x in g.values())
PY
  ;;
fp8)
  # cost: FP8 KV halves the bytes per token, the KV capacity doubles (± the floor).
  expect_code 0 "$cli" cost --gpu h200-sxm-141g --model qwen3-8b --json
  cp "$tmp/out" "$tmp/bf16.json"
  expect_code 0 "$cli" cost --gpu h200-sxm-141g --model qwen3-8b --kv-dtype fp8 --model-dtype fp8 --json
  python3 - "$tmp/bf16.json" "$tmp/out" <<'PY' || fail "cost fp8: $(cat "$tmp/out")"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert (a["model_dtype"], a["kv_dtype"], b["model_dtype"], b["kv_dtype"]) == ("bf16", "bf16", "fp8", "fp8")
assert b["kv_capacity"]["bytes_per_token"] * 2 == a["kv_capacity"]["bytes_per_token"] == 147456
assert a["weight_bytes"] - b["weight_bytes"] == 36 * 192937984, (a["weight_bytes"], b["weight_bytes"])
assert b["kv_capacity"]["blocks"] > 2 * a["kv_capacity"]["blocks"]  # halved bytes + the freed weight memory
assert b["breakdown_ms"]["decode_attention"] * 2 == a["breakdown_ms"]["decode_attention"]
PY
  expect_code 0 "$cli" cost --gpu h200-sxm-141g --model qwen3-8b --kv-dtype fp8
  grep -q "Dtypes:  weights bf16, KV cache fp8" "$tmp/out" || fail "cost text lacks the dtypes: $(cat "$tmp/out")"
  expect_code 2 "$cli" cost --gpu a100-40g --model-dtype fp8
  grep -q -- "--model-dtype: fp8 needs a GPU with FP8" "$tmp/err" || fail "a100 fp8: $(cat "$tmp/err")"
  expect_code 2 "$cli" cost --kv-dtype int4
  grep -q -- "--kv-dtype: must be one of" "$tmp/err" || fail "bad --kv-dtype: $(cat "$tmp/err")"
  # Scenarios: the fields load, change the KV capacity, reach summary.json;
  # bf16 is not written (older files keep their bytes).
  echo '{"cluster": {"gpu": "l40s-48g"}, "model": "qwen3-8b"}' > "$tmp/bf.json"
  echo '{"cluster": {"gpu": "l40s-48g", "kv_dtype": "fp8"}, "model": "qwen3-8b"}' > "$tmp/kv8.json"
  expect_code 0 "$cli" validate "$tmp/bf.json"
  grep -q "KV capacity 195136 tokens" "$tmp/out" || fail "bf16 capacity: $(cat "$tmp/out")"
  expect_code 0 "$cli" validate "$tmp/kv8.json"
  grep -q "KV capacity 390272 tokens" "$tmp/out" || fail "fp8 KV capacity: $(cat "$tmp/out")"
  expect_code 0 "$cli" validate "$tmp/bf.json" --canonical
  grep -q "dtype" "$tmp/out" && fail "canonical bf16 scenario names a dtype"
  expect_code 0 "$cli" validate "$tmp/kv8.json" --canonical
  grep -q '"kv_dtype": "fp8"' "$tmp/out" || fail "canonical lacks kv_dtype"
  expect_code 0 "$cli" run "$tmp/kv8.json" --out "$tmp/r" --quiet --set workload.requests=20 --set cluster.model_dtype=fp8
  python3 -c "import json; c=json.load(open('$tmp/r/summary.json'))['scenario']['cluster']; assert (c['gpu'], c['model_dtype'], c['kv_dtype']) == ('l40s-48g', 'fp8', 'fp8'), c" \
    || fail "summary.json cluster lacks the dtypes"
  echo '{"cluster": {"gpu": "a100-40g", "model_dtype": "fp8"}}' > "$tmp/a100.json"
  expect_code 2 "$cli" run "$tmp/a100.json" --out "$tmp/a"
  grep -q "a100.json: cluster.model_dtype: fp8 needs a GPU with FP8" "$tmp/err" || fail "a100: $(cat "$tmp/err")"
  [ -e "$tmp/a" ] && fail "output written for a refused scenario"
  echo '{"cluster": {"kv_dtype": "fp9"}}' > "$tmp/bad.json"
  expect_code 2 "$cli" validate "$tmp/bad.json"
  grep -q "cluster.kv_dtype: must be one of 'bf16', 'fp16', 'fp8'" "$tmp/err" || fail "bad kv_dtype: $(cat "$tmp/err")"
  ;;
cost_hetero)
  # cost --hetero: the kernel rule's h for a mixed batch by hand from the
  # printed geometry (docs/cost-model.md "Heterogeneity"), the CV rule's
  # cap, and the decode-attention time scaling with h.
  expect_code 0 "$cli" cost --gpu h100-sxm-80g --model llama-3.1-8b --decode 511@751,1@128000 --json
  cp "$tmp/out" "$tmp/kernel.json"
  expect_code 0 "$cli" cost --gpu h100-sxm-80g --model llama-3.1-8b --decode 511@751,1@128000 --hetero cv --json
  cp "$tmp/out" "$tmp/cv.json"
  expect_code 0 "$cli" cost --gpu h100-sxm-80g --model llama-3.1-8b --decode 512@1000 --json
  cp "$tmp/out" "$tmp/equal.json"
  python3 - "$tmp" <<'PY' || fail "cost --hetero: $(cat "$tmp/kernel.json")"
import json, sys
d = sys.argv[1]
k, c, e = (json.load(open(d + f)) for f in ("/kernel.json", "/cv.json", "/equal.json"))
# H100: 132 SMs x 2 CTAs; Llama-3.1-8B: 8 KV heads at TP 1.
hk = k["heterogeneity"]
assert hk["rule"] == "kernel" and hk["slots"] == 264 and hk["ctas_per_seq"] == 8, hk
n, s1, s2 = 512, 511 * 751 + 128000, 511 * 751**2 + 128000**2
w = n * 8 / 264
rho = (s2 / s1) * n / s1 / w
h = max(1.0, rho, 1 + 0.5 * rho * (1 - 1 / w))
assert abs(hk["waves"] - w) < 1e-9 and abs(k["heterogeneity_h"] - h) < 1e-9, (k["heterogeneity_h"], h)
assert abs(h - 2.1007414) < 1e-6, h
# Equal lengths: only the last-wave residual, 1 + rho/2 (1 - 1/w) with rho = 1/w.
we = 512 * 8 / 264
he = 1 + 0.5 / we * (1 - 1 / we)
assert abs(e["heterogeneity_h"] - he) < 1e-9 and abs(he - 1.0301495) < 1e-6, (e["heterogeneity_h"], he)
# CV rule: min(2.1, 1 + 0.6 CV), CV 5.62 -> the cap.
assert c["heterogeneity"]["rule"] == "cv" and c["heterogeneity_h"] == 2.1, c["heterogeneity"]
cv = (s2 / n - (s1 / n) ** 2) ** 0.5 / (s1 / n)
assert abs(c["heterogeneity"]["cv"] - cv) < 1e-9
# Decode attention is h x the bandwidth-bound time: the two rules' ratio is theirs.
r = k["breakdown_ms"]["decode_attention"] / c["breakdown_ms"]["decode_attention"]
assert abs(r - h / 2.1) < 1e-9, (r, h / 2.1)
PY
  expect_code 0 "$cli" cost --gpu h100-sxm-80g --model llama-3.1-8b --decode 511@751,1@128000
  grep -q "Heterogeneity factor h: 2.101 (kernel: 4096 CTAs (8 a sequence) over 264 slots (132 SMs x 2), 15.52 waves" \
    "$tmp/out" || fail "cost text lacks the kernel line: $(cat "$tmp/out")"
  expect_code 2 "$cli" cost --hetero fast
  grep -q 'error: --hetero: must be "kernel" or "cv" (got "fast")' "$tmp/err" || fail "cost --hetero fast: $(cat "$tmp/err")"
  # cost --engine: an engine preset's async scheduling hides the CPU part
  # (t_step + t_seq x seqs = 126 + 4.4 x 256 us) behind the GPU part.
  expect_code 0 "$cli" cost --model qwen3-32b --tp 2 --decode 256@1024 --json
  cp "$tmp/out" "$tmp/sync.json"
  expect_code 0 "$cli" cost --model qwen3-32b --tp 2 --decode 256@1024 --engine vllm-v1-serve --json
  python3 - "$tmp/sync.json" "$tmp/out" <<'PY' || fail "cost --engine: $(cat "$tmp/out")"
import json, sys
s, a = (json.load(open(f)) for f in sys.argv[1:3])
cpu = (126 + 4.4 * 256) / 1000
assert "hidden_by_async_scheduling" not in s["breakdown_ms"], s
assert abs(a["breakdown_ms"]["hidden_by_async_scheduling"] + cpu) < 1e-9, a["breakdown_ms"]
assert abs(a["iteration_ms"] - (s["iteration_ms"] - cpu)) < 1e-9, (a["iteration_ms"], s["iteration_ms"])
PY
  expect_code 0 "$cli" cost --engine vllm-v1-serve --decode 8@1000
  grep -q "hidden by async scheduling" "$tmp/out" || fail "cost --engine text: $(cat "$tmp/out")"
  expect_code 2 "$cli" cost --engine vllm-v2
  grep -q "error: --engine: unknown engine 'vllm-v2': did you mean" "$tmp/err" || fail "cost --engine bad: $(cat "$tmp/err")"
  ;;
cost)
  expect_code 0 "$cli" cost --model r1-distill-qwen-32b --decode 1@1024
  python3 - "$tmp/out" <<'PY' || fail "cost output: $(cat "$tmp/out")"
import re, sys
t = open(sys.argv[1]).read()
m = re.search(r"([0-9.]+) ms", t)
assert m and 27 * 0.75 <= float(m.group(1)) <= 31 * 1.25, m and m.group(1)
for word in ("linear", "attention", "overhead", "communication", "KV capacity"):
    assert word.lower() in t.lower(), word
PY
  expect_code 0 "$cli" cost --model llama-2-70b --tp 4 --prefill 512x8 --json
  python3 -c "import json; d=json.load(open('$tmp/out')); a=d['allreduce']; assert a['model']=='vllm' and a['implementation']=='nccl' and a['count']==160 and a['bytes']==4096*8192*2, a" \
    || fail "cost --json allreduce: $(cat "$tmp/out")"
  # The measured all-reduce is named with its source; --allreduce ring keeps the spec's rule.
  expect_code 0 "$cli" cost --gpu h800-80g --model llama-3.1-8b --tp 8 --prefill 8192
  grep -q "64 all-reduces of 64.0 MiB" "$tmp/out" && grep -q "nccl-allreduce-h100-dgx.json" "$tmp/out" \
    || fail "cost allreduce line: $(cat "$tmp/out")"
  expect_code 0 "$cli" cost --gpu h800-80g --model llama-3.1-8b --tp 8 --prefill 8192 --allreduce ring
  grep -q "analytic ring" "$tmp/out" || fail "cost --allreduce ring: $(cat "$tmp/out")"
  expect_code 0 "$cli" cost --allreduce-fit
  grep -q "two-shot" "$tmp/out" && grep -q "microsoft/vidur" "$tmp/out" || fail "cost --allreduce-fit: $(cat "$tmp/out")"
  expect_code 2 "$cli" cost --model llama-3.1-8b --tp 2 --allreduce tree
  expect_code 2 "$cli" cost --model llama-2-70b --decode 32x1024
  expect_code 2 "$cli" cost --model nosuchmodel
  ;;
trace_json)
  expect_code 0 "$cli" run "$src/samples/pascal-baseline-rr.json" --out "$tmp/r" --quiet
  python3 - "$tmp/r/trace.json" <<'PY' || fail "trace.json is not a valid Chrome trace"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
names = {e.get("name") for e in ev}
assert {"queued", "reasoning", "answering", "preempted", "iteration"} <= names, names
pids = {e["pid"] for e in ev if e.get("ph") == "X"}
assert len(pids) == 8, pids
for e in ev:
    if e.get("ph") == "X":
        assert e["dur"] >= 0 and e["ts"] >= 0
PY
  ;;
set_override)
  expect_code 0 "$cli" run "$src/samples/default.json" --set workload.requests=50 --set policy.id=rr \
      --set policy.knobs.quantum=100 --json --quiet
  python3 -c "import json; d=json.load(open('$tmp/out')); assert d['requests']['arrived']==50 and d['policy']=='rr' and d['scenario']['policy']['knobs']['quantum']==100" \
    || fail "--set overrides not applied"
  ;;
reproduce)
  expect_code 0 "$cli" reproduce --list
  grep -q "pascal-fig10-tail-ttft" "$tmp/out" || fail "--list does not name pascal-fig10-tail-ttft"
  expect_code 2 "$cli" reproduce no-such-experiment --quick
  expect_code 0 "$cli" reproduce pascal-fig12-throughput --quick --quiet --out "$tmp/a"
  grep -q "pascal_tokens_per_s" "$tmp/out" || fail "no table on stdout"
  for f in table.csv table.txt throughput_vs_rate.csv; do
    [ -s "$tmp/a/pascal-fig12-throughput/$f" ] || fail "missing $f"
  done
  expect_code 0 "$cli" reproduce pascal-fig12-throughput --quick --quiet --out "$tmp/b"
  cmp -s "$tmp/a/pascal-fig12-throughput/table.csv" "$tmp/b/pascal-fig12-throughput/table.csv" \
    || fail "two runs gave different tables"
  ;;
trace_lenient)
  # An Azure trace with one malformed row (line 4): an error naming FILE:LINE
  # by default; with --lenient the row is skipped and counted.
  cat > "$tmp/az.csv" <<'CSV'
TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,374,44
2023-11-16 18:15:50.9951690,396,109
2023-11-16 18:15:51.0000000,not-a-number,12
2023-11-16 18:15:51.5000000,879,31
2023-11-16 18:15:53.2000000,91,200
CSV
  echo '{"workload": {"trace": {"path": "az.csv", "format": "azure"}}}' > "$tmp/az.json"
  expect_code 2 "$cli" run "$tmp/az.json" --quiet
  grep -q "az.csv:4" "$tmp/err" || fail "error does not name az.csv:4: $(cat "$tmp/err")"
  expect_code 0 "$cli" run "$tmp/az.json" --quiet --lenient --out "$tmp/r"
  # --quiet: the counts only because rows were skipped, as a warning on stderr.
  grep -q "warning: trace (azure): .*1 malformed" "$tmp/err" || fail "no trace counts warning: $(cat "$tmp/out" "$tmp/err")"
  [ -s "$tmp/out" ] && fail "--quiet --lenient printed on stdout: $(cat "$tmp/out")"
  python3 - "$tmp/r/summary.json" <<'PY' || fail "summary.json trace object: $(cat "$tmp/r/summary.json")"
import json, sys
s = json.load(open(sys.argv[1]))
t = s["trace"]
assert t["format"] == "azure" and t["rows"] == 5 and t["emitted"] == 4, t
assert t["malformed"] == 1 and t["skipped"] == 1 and t["failed"] == 0, t
assert "az.csv:4" in t["first_malformed"], t
assert s["requests"]["arrived"] == 4, s["requests"]
assert s["scenario"]["workload"]["trace"]["lenient"] is True
PY
  expect_code 0 "$cli" compare "$tmp/az.json" --policies fcfs,rr --quiet --lenient --json
  python3 -c "import json; d=json.load(open('$tmp/out')); assert all(r['summary']['trace']['malformed']==1 for r in d['runs'])" \
    || fail "compare --lenient --json"
  grep -q "1 malformed" "$tmp/err" || fail "compare --json: no trace counts line on stderr"
  expect_code 0 "$cli" run "$src/samples/default.json" --set workload.requests=20 --quiet --json
  python3 -c "import json; d=json.load(open('$tmp/out')); assert 'trace' not in d" || fail "synthetic run has a trace object"
  ;;
saved_run)
  # A saved run (docs/scenario-format.md "Saved runs"): the scenario plus a
  # "live_changes" section. Built here from a sample's canonical form.
  expect_code 0 "$cli" validate "$src/samples/pascal-baseline-rr.json" --canonical --set workload.requests=300
  cp "$tmp/out" "$tmp/scenario.json"
  mk() {  # mk OUT CHANGES_JSON [SAVED_AT_JSON]
    python3 - "$tmp/scenario.json" "$1" "$2" "${3:-null}" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sec = {"version": 1, "changes": json.loads(sys.argv[3])}
at = json.loads(sys.argv[4])
if at is not None:
    sec["saved_at"] = at
s["live_changes"] = sec
json.dump(s, open(sys.argv[2], "w"), indent=2)
PY
  }
  # No changes: exactly the plain scenario's run.
  mk "$tmp/none.json" '[]'
  expect_code 0 "$cli" run "$tmp/scenario.json" --out "$tmp/plain" --quiet
  expect_code 0 "$cli" run "$tmp/none.json" --out "$tmp/none"
  grep -q "live changes: 0 of 0 applied" "$tmp/out" || fail "no live-changes line: $(cat "$tmp/out")"
  for f in $outputs tail_ttft.csv; do cmp -s "$tmp/plain/$f" "$tmp/none/$f" || fail "$f: saved run without changes differs from the scenario's run"; done
  # Two changes at event counts: deterministic, and they change the run.
  changes='[{"events": 2000, "time_ns": 0, "knob": "arrival_rate", "value": 12},
            {"events": 5000, "time_ns": 0, "knob": "policy.quantum", "value": 40}]'
  mk "$tmp/two.json" "$changes"
  expect_code 0 "$cli" run "$tmp/two.json" --out "$tmp/a" --quiet
  expect_code 0 "$cli" run "$tmp/two.json" --out "$tmp/b" --quiet
  for f in $outputs; do cmp -s "$tmp/a/$f" "$tmp/b/$f" || fail "$f differs between two replays of a saved run"; done
  cmp -s "$tmp/a/requests.csv" "$tmp/plain/requests.csv" && fail "the live changes did not change the run"
  python3 - "$tmp/a/summary.json" <<'PY' || fail "summary.json does not list the changes applied"
import json, sys
s = json.load(open(sys.argv[1]))
c = s["live_changes"]
assert [x["events"] for x in c] == [2000, 5000], c
assert [x["knob"] for x in c] == ["arrival_rate", "policy.quantum"], c
assert all(x["time_ns"] > 0 for x in c), c   # raised to the simulated clock at that event
PY
  # saved_at: the fingerprint at an event count is checked.
  fp=$(python3 -c "import json; print(json.load(open('$tmp/a/summary.json'))['fingerprint'])")
  ev=$(python3 -c "import json; print(json.load(open('$tmp/a/summary.json'))['events'])")
  mk "$tmp/at.json" "$changes" "{\"servelab\": \"0.1.0\", \"events\": $ev, \"sim_s\": 1.0, \"fingerprint\": \"$fp\"}"
  expect_code 0 "$cli" run "$tmp/at.json"
  grep -q "reproduces the saved run: fingerprint $fp at event $ev" "$tmp/out" || fail "no check line: $(cat "$tmp/out")"
  [ -s "$tmp/err" ] && fail "warnings for a matching saved run: $(cat "$tmp/err")"
  mk "$tmp/wrong.json" "$changes" "{\"events\": $ev, \"fingerprint\": \"0000000000000001\"}"
  expect_code 0 "$cli" run "$tmp/wrong.json" --quiet
  grep -q "does not reproduce the saved one: at event $ev its fingerprint is $fp, the saved run's is 0000000000000001" "$tmp/err" \
    || fail "no mismatch warning: $(cat "$tmp/err")"
  mk "$tmp/late.json" "$changes" "{\"events\": $((ev + 10)), \"fingerprint\": \"$fp\"}"
  expect_code 0 "$cli" run "$tmp/late.json" --quiet
  grep -q "ended after $ev events, before saved_at.events $((ev + 10))" "$tmp/err" || fail "no early-end warning: $(cat "$tmp/err")"
  # Far past any run of this scenario (with or without the changes above).
  mk "$tmp/never.json" "[{\"events\": $((ev * 100)), \"time_ns\": 0, \"knob\": \"arrival_rate\", \"value\": 3}]"
  expect_code 0 "$cli" run "$tmp/never.json" --quiet
  grep -q "live_changes.changes\[0\] and later were never applied" "$tmp/err" || fail "no never-applied warning: $(cat "$tmp/err")"
  # --set/--seed: another run on purpose, not checked.
  expect_code 0 "$cli" run "$tmp/at.json" --seed 5
  grep -q "not checked against the saved run" "$tmp/out" || fail "--seed: no 'not checked' line"
  # validate knows saved runs; --canonical keeps the section.
  expect_code 0 "$cli" validate "$tmp/two.json"
  grep -qF "a saved run with 2 live change(s)" "$tmp/out" || fail "validate: $(cat "$tmp/out")"
  expect_code 0 "$cli" validate "$tmp/two.json" --canonical
  cp "$tmp/out" "$tmp/canon.json"
  grep -q '"live_changes"' "$tmp/canon.json" || fail "--canonical dropped live_changes"
  expect_code 0 "$cli" run "$tmp/canon.json" --out "$tmp/c" --quiet
  cmp -s "$tmp/a/requests.csv" "$tmp/c/requests.csv" || fail "the canonical saved run replays differently"
  # compare runs the scenario without the changes, and says so.
  expect_code 0 "$cli" compare "$tmp/two.json" --policies rr,fcfs --quiet
  grep -qF "compare runs its scenario without its 2 live change(s)" "$tmp/err" || fail "compare: no warning"
  ;;
saved_run_bad)
  expect_code 0 "$cli" validate "$src/samples/pascal-baseline-rr.json" --canonical --set workload.requests=50
  cp "$tmp/out" "$tmp/scenario.json"
  bad() {  # bad NAME SECTION_JSON EXPECTED_PLACE
    python3 -c "
import json, sys
s = json.load(open('$tmp/scenario.json'))
s['live_changes'] = json.loads(sys.argv[1])
json.dump(s, open('$tmp/$1.json', 'w'), indent=2)" "$2"
    expect_code 2 "$cli" run "$tmp/$1.json" --out "$tmp/out-$1"
    grep -qF "$1.json: $3" "$tmp/err" || fail "$1: message does not name '$1.json: $3': $(cat "$tmp/err")"
    [ -e "$tmp/out-$1" ] && fail "$1: output written for a malformed change log"
    expect_code 2 "$cli" validate "$tmp/$1.json"
  }
  ok='"events": 10, "time_ns": 0'
  bad notobj '[1]' "live_changes: expected an object"
  bad version '{"version": 3, "changes": []}' "live_changes.version: unsupported version 3"
  bad nochanges '{"version": 1}' "live_changes: missing required field 'changes'"
  bad typo '{"version": 1, "chagnes": []}' "live_changes: unknown field 'chagnes' (did you mean 'changes'?)"
  bad arr '{"version": 1, "changes": {}}' "live_changes.changes: expected an array"
  bad noval "{\"version\": 1, \"changes\": [{$ok, \"knob\": \"arrival_rate\"}]}" "live_changes.changes[0]: missing required field 'value'"
  bad strval "{\"version\": 1, \"changes\": [{$ok, \"knob\": \"arrival_rate\", \"value\": \"fast\"}]}" "live_changes.changes[0].value: expected a number"
  bad knob "{\"version\": 1, \"changes\": [{$ok, \"knob\": \"policy.quantm\", \"value\": 5}]}" "live_changes.changes[0].knob: policy 'rr' has no knob 'quantm' (did you mean 'policy.quantum'?)"
  bad notlive "{\"version\": 1, \"changes\": [{$ok, \"knob\": \"policy.priority_by_quanta\", \"value\": 1}]}" "live_changes.changes[0].knob: policy knob 'priority_by_quanta' cannot change while a run is going"
  bad range "{\"version\": 1, \"changes\": [{$ok, \"knob\": \"policy.quantum\", \"value\": 0}]}" "live_changes.changes[0].value: quantum must be in [1, 1000000]"
  bad rate "{\"version\": 1, \"changes\": [{$ok, \"knob\": \"arrival_rate\", \"value\": -2}]}" "live_changes.changes[0].value: an arrival rate must be > 0"
  bad order "{\"version\": 1, \"changes\": [{$ok, \"knob\": \"arrival_rate\", \"value\": 2}, {\"events\": 3, \"time_ns\": 0, \"knob\": \"arrival_rate\", \"value\": 3}]}" "live_changes.changes[1].events: 3 is before the previous change's 10"
  bad negative '{"version": 1, "changes": [{"events": -4, "time_ns": 0, "knob": "arrival_rate", "value": 2}]}' "live_changes.changes[0].events: must be >= 0"
  bad fp '{"version": 1, "changes": [], "saved_at": {"events": 3, "fingerprint": 12}}' "live_changes.saved_at.fingerprint: expected a string of 16 hex digits"
  # A rate change needs a live rate: a rate schedule has none.
  python3 -c "
import json
s = json.load(open('$src/samples/rate-schedule-tp2-70b.json'))
s['live_changes'] = {'version': 1, 'changes': [{'events': 5, 'time_ns': 0, 'knob': 'arrival_rate', 'value': 3}]}
json.dump(s, open('$tmp/sched.json', 'w'))"
  expect_code 2 "$cli" run "$tmp/sched.json" --out "$tmp/out-sched"
  grep -qF "sched.json: live_changes.changes[0].knob: 'arrival_rate' changes need Poisson or Gamma arrivals" "$tmp/err" \
    || fail "schedule: $(cat "$tmp/err")"
  [ -e "$tmp/out-sched" ] && fail "schedule: output written"
  ;;
closed_loop)
  # Closed-loop clients (docs/workloads.md "Closed loop"): a run, its
  # summary, determinism, a live change of the client count replayed from a
  # saved run, and every bad value exiting 2 naming the field.
  sample="$src/samples/closed-loop-chat-think.json"
  expect_code 0 "$cli" validate "$sample"
  expect_code 0 "$cli" run "$sample" --out "$tmp/a" --quiet --set workload.requests=300
  expect_code 0 "$cli" run "$sample" --out "$tmp/b" --quiet --set workload.requests=300
  cmp -s "$tmp/a/requests.csv" "$tmp/b/requests.csv" || fail "closed loop: two runs differ"
  python3 - "$tmp/a/summary.json" <<'PY' || fail "closed loop: summary"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["closed_loop"] == {"concurrency": 160, "final_concurrency": 160, "issued": 300}, s["closed_loop"]
assert s["requests"]["arrived"] == 300 and s["requests"]["finished"] == 300, s["requests"]
a = s["scenario"]["workload"]["arrival"]
assert a["process"] == "closed" and a["concurrency"] == 160 and a["think_s"]["dist"] == "exponential", a
PY
  # A saved run with a client change replays it (twice the same), and its
  # summary ends with the changed count.
  python3 -c "
import json
s = json.load(open('$sample'))
s['workload']['requests'] = 400
s['live_changes'] = {'version': 1, 'changes': [{'events': 3000, 'time_ns': 0, 'knob': 'concurrency', 'value': 8}]}
json.dump(s, open('$tmp/saved.json', 'w'), indent=2)"
  expect_code 0 "$cli" run "$tmp/saved.json" --out "$tmp/s1" --quiet
  expect_code 0 "$cli" run "$tmp/saved.json" --out "$tmp/s2" --quiet
  cmp -s "$tmp/s1/requests.csv" "$tmp/s2/requests.csv" || fail "saved closed-loop run: replays differ"
  grep -q '"final_concurrency": 8' "$tmp/s1/summary.json" || fail "saved run: final_concurrency not 8"
  cmp -s "$tmp/a/requests.csv" "$tmp/s1/requests.csv" && fail "saved run: the change changed nothing"
  bad() {  # bad NAME PYTHON_EDIT EXPECTED_PLACE
    python3 -c "
import json
s = json.load(open('$sample'))
w = s['workload']
$2
json.dump(s, open('$tmp/$1.json', 'w'), indent=2)"
    expect_code 2 "$cli" run "$tmp/$1.json" --out "$tmp/out-$1"
    grep -qF "$1.json: $3" "$tmp/err" || fail "$1: message does not name '$1.json: $3': $(cat "$tmp/err")"
    [ -e "$tmp/out-$1" ] && fail "$1: output written"
    expect_code 2 "$cli" validate "$tmp/$1.json"
    grep -qF "$3" "$tmp/err" || fail "$1: validate does not name '$3': $(cat "$tmp/err")"
  }
  bad zero "w['arrival']['concurrency'] = 0" "workload.arrival.concurrency"
  bad negative "w['arrival']['concurrency'] = -4" "workload.arrival.concurrency"
  bad fraction "w['arrival']['concurrency'] = 2.5" "workload.arrival.concurrency: expected an integer"
  bad missing "del w['arrival']['concurrency']" "workload.arrival: process 'closed' needs 'concurrency'"
  bad think "w['arrival']['think_s'] = {'dist': 'constant', 'value': -1}" "workload.arrival.think_s.value"
  bad rate "w['arrival']['rate'] = 5" "workload.arrival.rate: not used by process 'closed'"
  bad scale "w['trace'] = {'path': 'traces/burstgpt-chat-300.csv', 'time_scale': 0.5}" "workload.trace.time_scale"
  bad window "w['trace'] = {'path': 'traces/burstgpt-chat-300.csv', 'window': {'end_s': 60}}" "workload.trace.window"
  python3 -c "
import json
s = json.load(open('$src/samples/default.json'))
s['live_changes'] = {'version': 1, 'changes': [{'events': 5, 'time_ns': 0, 'knob': 'concurrency', 'value': 3}]}
json.dump(s, open('$tmp/openlive.json', 'w'))"
  expect_code 2 "$cli" run "$tmp/openlive.json" --out "$tmp/out-openlive"
  grep -qF "live_changes.changes[0].knob: 'concurrency' changes need a closed loop" "$tmp/err" || fail "openlive: $(cat "$tmp/err")"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS [$case_name]"
