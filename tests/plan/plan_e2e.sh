#!/usr/bin/env bash
# Usage: plan_e2e.sh CASE PATH/TO/servelab-cli SOURCE_DIR
# End-to-end checks of `servelab-cli plan` (docs/sweeps.md "Deployment
# search"): exit codes and messages for bad input (nothing written), the
# no-feasible answer (exit 0 with the closest misses), the output files and
# their determinism, --explain. Prints what failed; exit 0 = pass.
set -u
case_name=$1 cli=$2 src=$3
tmp=$(mktemp -d)
[ -n "${KEEP_TMP:-}" ] || trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }
expect_code() {  # expect_code CODE cmd...
  local want=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; local got=$?
  [ "$got" = "$want" ] || { cat "$tmp/out" "$tmp/err" >&2; fail "'$*' exited $got, expected $want"; }
}
expect_bad() {  # expect_bad WORD args...: exit 2, WORD in the message, no output folder
  local word=$1; shift
  expect_code 2 "$cli" plan "$tmp/s.json" "$@" --out "$tmp/o" --quiet
  grep -q -- "$word" "$tmp/err" || fail "'$*': message does not name $word: $(cat "$tmp/err")"
  [ -e "$tmp/o" ] && fail "'$*': output folder written for bad input"
  return 0
}

# Llama-3.1-8B, 1 K-token prompts, 128-token answers, 200 requests.
cat > "$tmp/s.json" <<'JSON'
{
  "model": "llama-3.1-8b",
  "workload": {"arrival": {"process": "poisson", "rate": 1},
               "input_tokens": {"dist": "constant", "value": 1024},
               "answer_tokens": {"dist": "constant", "value": 128},
               "requests": 200},
  "slo": {"ttft_s": 0.5, "tpot_s": 0.05},
  "run": {"seed": 1}
}
JSON
small=(--gpus h100-sxm-80g,l40s-48g --tp 1,2 --max-gpus 4 --kinds homogeneous)

case $case_name in
bad_input)
  expect_bad "--gpus" --rate 10 --gpus h100-sxm-80g,h100-sxm --max-gpus 2
  grep -q "did you mean" "$tmp/err" || fail "no hint for an unknown GPU: $(cat "$tmp/err")"
  expect_bad "--tp" --rate 10 --tp 1,3
  expect_bad "--rate" --rate 0
  expect_bad "--rate" --rate -2
  expect_bad "--target" --rate 10 --target 1.5
  expect_bad "--target" --rate 10 --target 0
  expect_bad "--max-gpus" --rate 10 --max-gpus 0
  expect_bad "--kinds" --rate 10 --kinds homogenous
  expect_bad "--policies" --rate 10 --policies fcfs,fcsf
  expect_bad "--budget" --rate 10 --budget -1
  expect_bad "--candidate" --rate 10 --candidate 3
  # No candidates: the 70B model on one GPU of 48 GB at TP 1 fits nowhere,
  # but that is "unfit", not bad input; no candidate at all is.
  expect_bad "no candidates" --rate 10 --gpus h100-sxm-80g --tp 8 --max-gpus 4
  # A workload with no single rate to set.
  sed 's/"process": "poisson", "rate": 1/"process": "closed", "concurrency": 4/' "$tmp/s.json" > "$tmp/closed.json"
  expect_code 2 "$cli" plan "$tmp/closed.json" --rate 10 --out "$tmp/o" --quiet
  grep -q "workload.arrival.process" "$tmp/err" || fail "closed loop not named: $(cat "$tmp/err")"
  [ -e "$tmp/o" ] && fail "output folder written for a closed loop"
  ;;
no_feasible)
  # 1 GPU at most, far too much load: nothing meets the SLO.
  expect_code 0 "$cli" plan "$tmp/s.json" --rate 200 --gpus l40s-48g --tp 1 --max-gpus 1 --no-prune --out "$tmp/o" --quiet
  grep -q "no feasible deployment" "$tmp/out" || fail "no 'no feasible deployment': $(cat "$tmp/out")"
  grep -q "closest misses" "$tmp/out" || fail "no closest misses listed: $(cat "$tmp/out")"
  python3 - "$tmp/o/plan.json" <<'PY' || fail "plan.json: winner should be null with closest misses"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["winner"] is None and len(j["closest_misses"]) >= 1
PY
  ;;
outputs)
  expect_code 0 "$cli" plan "$tmp/s.json" --rate 12 "${small[@]}" --jobs 2 --out "$tmp/a" --quiet
  for f in candidates.csv pareto.csv plan.json; do [ -s "$tmp/a/$f" ] || fail "$f missing"; done
  grep -q "winner (cheapest meeting the target)" "$tmp/out" || fail "no winner printed: $(cat "$tmp/out")"
  grep -q "^candidates: " "$tmp/out" || fail "no counts line: $(cat "$tmp/out")"
  python3 - "$tmp/a" <<'PY' || fail "outputs inconsistent"
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/candidates.csv")))
plan = json.load(open(d + "/plan.json"))
assert len(rows) == plan["counts"]["candidates"], "one row per candidate"
sim = [r for r in rows if r["status"] == "simulated"]
assert len(sim) == plan["counts"]["simulated"]
for r in rows:
    if r["status"] != "simulated":
        assert r["reason"], "a candidate not simulated says why"
win = plan["winner"]
assert win is not None and win["meets_target"]
feasible = [r for r in sim if r["meets_target"] == "1"]
assert float(win["usd_per_hour"]) == min(float(r["usd_per_hour"]) for r in feasible)
front = list(csv.DictReader(open(d + "/pareto.csv")))
assert any(int(f["index"]) == win["index"] for f in front), "winner on the front"
for a in front:
    for b in front:
        ca, cb = float(a["usd_per_hour"]), float(b["usd_per_hour"])
        aa, ab = float(a["attainment"]), float(b["attainment"])
        assert not (cb <= ca and ab >= aa and (cb < ca or ab > aa)), "front dominated"
PY
  # Determinism: another run, one thread: the same CSVs.
  expect_code 0 "$cli" plan "$tmp/s.json" --rate 12 "${small[@]}" --jobs 1 --out "$tmp/b" --quiet
  for f in candidates.csv pareto.csv; do cmp -s "$tmp/a/$f" "$tmp/b/$f" || fail "$f differs between runs"; done
  ;;
explain)
  expect_code 0 "$cli" plan "$tmp/s.json" --rate 12 "${small[@]}" --explain --quiet
  grep -q "binding constraint:" "$tmp/out" || fail "no binding constraint: $(cat "$tmp/out")"
  grep -q "prefill" "$tmp/out" && grep -q "queueing" "$tmp/out" || fail "no time split: $(cat "$tmp/out")"
  expect_code 0 "$cli" plan "$tmp/s.json" --rate 12 "${small[@]}" --explain --candidate 0 --quiet
  grep -q "candidate 0" "$tmp/out" || fail "candidate 0 not explained: $(cat "$tmp/out")"
  expect_code 2 "$cli" plan "$tmp/s.json" --rate 12 "${small[@]}" --explain --candidate 999 --quiet
  grep -q -- "--candidate" "$tmp/err" || fail "bad index not named: $(cat "$tmp/err")"
  ;;
*) fail "unknown case" ;;
esac
exit 0
