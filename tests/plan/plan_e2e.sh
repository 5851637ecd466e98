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
# Every kind, two TPs, three GPU types: enough mixed and disaggregated
# candidates for the cost bound to drop some.
wide=(--gpus h100-sxm-80g,l40s-48g,a100-40g --tp 1,2 --max-gpus 6 --disaggregated)
same_plan() {  # same_plan DIR_A DIR_B: the same plan files (plan.json but for wall_s)
  for f in candidates.csv pareto.csv; do
    cmp -s "$1/$f" "$2/$f" || { diff "$1/$f" "$2/$f" | head -5 >&2; fail "$1/$f and $2/$f differ"; }
  done
  python3 - "$1/plan.json" "$2/plan.json" <<'PY' || fail "$1/plan.json and $2/plan.json differ"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
a.pop("wall_s"); b.pop("wall_s")
assert a == b
assert a["counts"]["simulated"] > 0
PY
}

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
shards)
  # plan --shard K/N + plan-merge = the one-process plan, for any N; the
  # shards may share a folder or not.
  expect_code 0 "$cli" plan "$tmp/s.json" --rate 20 "${wide[@]}" --out "$tmp/one" --quiet
  grep -q "cost-bound" "$tmp/one/candidates.csv" || fail "the case should exercise the cost bound"
  for k in 0 1 2; do
    expect_code 0 "$cli" plan "$tmp/s.json" --rate 20 "${wide[@]}" --shard $k/3 --out "$tmp/sh$k" --quiet
    [ -s "$tmp/sh$k/plan-shard-$k-of-3.json" ] || fail "shard $k/3 wrote no record"
    [ -e "$tmp/sh$k/candidates.csv" ] && fail "a shard wrote candidates.csv"
  done
  expect_code 0 "$cli" plan-merge "$tmp/sh0" "$tmp/sh1" "$tmp/sh2" --out "$tmp/m3"
  grep -q "winner (cheapest meeting the target)" "$tmp/out" || fail "merge printed no winner: $(cat "$tmp/out")"
  same_plan "$tmp/one" "$tmp/m3"
  for k in 0 1; do
    expect_code 0 "$cli" plan "$tmp/s.json" --rate 20 "${wide[@]}" --shard $k/2 --out "$tmp/both" --quiet
  done
  expect_code 0 "$cli" plan-merge "$tmp/both" --out "$tmp/both"
  same_plan "$tmp/one" "$tmp/both"
  # Missing shard, another plan's shard, a folder without shards: exit 2
  # naming it, nothing written.
  expect_code 2 "$cli" plan-merge "$tmp/sh0" "$tmp/sh2" --out "$tmp/bad"
  grep -q "shard 1/3 is missing" "$tmp/err" || fail "missing shard not named: $(cat "$tmp/err")"
  expect_code 0 "$cli" plan "$tmp/s.json" --rate 21 "${wide[@]}" --shard 1/3 --out "$tmp/other" --quiet
  expect_code 2 "$cli" plan-merge "$tmp/sh0" "$tmp/other" "$tmp/sh2" --out "$tmp/bad"
  grep -q "$tmp/other/plan-shard-1-of-3.json: belongs to another plan" "$tmp/err" \
    || fail "foreign shard not named: $(cat "$tmp/err")"
  mkdir "$tmp/empty"
  expect_code 2 "$cli" plan-merge "$tmp/sh0" "$tmp/empty" --out "$tmp/bad"
  grep -q "$tmp/empty: no plan shard" "$tmp/err" || fail "empty folder not named: $(cat "$tmp/err")"
  [ -e "$tmp/bad" ] && fail "plan-merge wrote output for bad input"
  expect_code 2 "$cli" plan "$tmp/s.json" --rate 20 "${wide[@]}" --shard 3/3 --out "$tmp/bad" --quiet
  grep -q -- "--shard '3/3'" "$tmp/err" || fail "bad --shard not named: $(cat "$tmp/err")"
  expect_code 2 "$cli" plan "$tmp/s.json" --rate 20 "${wide[@]}" --shard 0/3 --quiet
  grep -q -- "--out" "$tmp/err" || fail "--shard without --out: $(cat "$tmp/err")"
  [ -e "$tmp/bad" ] && fail "output written for a bad --shard"
  ;;
slurm_script_local)
  # deploy/slurm/plan-submit.sh and plan.sbatch as Slurm would run them: a
  # stand-in `sbatch` runs each array task (SLURM_ARRAY_TASK_ID, _COUNT) and
  # then the dependent merge, with the --export'ed variables, in order.
  mkdir -p "$tmp/bin"
  cat > "$tmp/bin/sbatch" <<'SH'
#!/bin/bash
# Minimal synchronous sbatch: --array=0-M, --export=ALL,K=V,..., --chdir, the script.
set -euo pipefail
array="" exports="" chdir=.
while [ $# -gt 1 ]; do
  case $1 in
    --array=*) array=${1#--array=} ;;
    --export=*) exports=${1#--export=} ;;
    --chdir) chdir=$2; shift ;;
    --output|--partition) shift ;;
    *) ;;
  esac
  shift
done
script=$1
env_args=()
IFS=, read -ra kv <<<"$exports"
for x in "${kv[@]}"; do [ "$x" = ALL ] || env_args+=("$x"); done
id=$((RANDOM + 1000))
if [ -n "$array" ]; then
  last=${array#0-}
  for i in $(seq 0 "$last"); do
    (cd "$chdir" && env "${env_args[@]}" SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_COUNT=$((last + 1)) bash "$script") \
      >>"$chdir/task-$i.log" 2>&1 || { echo "task $i failed" >&2; exit 1; }
  done
else
  (cd "$chdir" && env "${env_args[@]}" bash "$script") >>"$chdir/merge.log" 2>&1 || { echo "merge failed" >&2; exit 1; }
fi
echo "$id"
SH
  chmod +x "$tmp/bin/sbatch"
  args="--rate 20 ${wide[*]}"
  PATH="$tmp/bin:$PATH" SERVELAB_CLI=$(realpath "$cli") bash "$src/deploy/slurm/plan-submit.sh" "$tmp/s.json" "$tmp/slurm" 3 "$args" \
    >"$tmp/ids" 2>"$tmp/err" || fail "plan-submit.sh failed: $(cat "$tmp/err") $(cat "$tmp"/slurm/*.log 2>/dev/null)"
  [ "$(wc -w < "$tmp/ids")" = 2 ] || fail "plan-submit.sh should print two job ids: $(cat "$tmp/ids")"
  for k in 0 1 2; do [ -s "$tmp/slurm/plan-shard-$k-of-3.json" ] || fail "no record of shard $k/3"; done
  grep -q "winner (cheapest meeting the target)" "$tmp/slurm/merge.log" || fail "merge log: $(cat "$tmp/slurm/merge.log")"
  # shellcheck disable=SC2086
  expect_code 0 "$cli" plan "$tmp/s.json" $args --out "$tmp/one" --quiet
  same_plan "$tmp/one" "$tmp/slurm"
  ;;
k8s_indexed_local)
  # The Indexed Job's own commands (deploy/k8s/plan-job.yaml), run as N local
  # processes with JOB_COMPLETION_INDEX=0..N-1 on one shared folder, then its
  # wait and merge steps; the result must equal the one-process plan.
  command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null || { echo "skip: python3-yaml missing"; exit 77; }
  python3 - "$src/deploy/k8s/plan-job.yaml" "$tmp" <<'PY' || fail "manifest checks failed"
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
out = sys.argv[2]
kinds = {d["kind"] + "/" + d["metadata"]["name"]: d for d in docs}
shard = next(d for d in docs if d["kind"] == "Job" and d["spec"].get("completionMode") == "Indexed")
merge = next(d for d in docs if d["kind"] == "Job" and d is not shard)
n = shard["spec"]["completions"]
assert shard["spec"]["parallelism"] <= n
c = shard["spec"]["template"]["spec"]["containers"][0]
env = {e["name"]: e["value"] for e in c.get("env", [])}
assert int(env["SHARDS"]) == n, (env, n)
wait = merge["spec"]["template"]["spec"]["initContainers"][0]
wenv = {e["name"]: e["value"] for e in wait.get("env", [])}
assert int(wenv["SHARDS"]) == n, (wenv, n)
for pod in (shard, merge):
    spec = pod["spec"]["template"]["spec"]
    vols = {v["name"] for v in spec["volumes"]}
    for ct in spec["containers"] + spec.get("initContainers", []):
        for m in ct["volumeMounts"]:
            assert m["name"] in vols, m
assert "ConfigMap/servelab-plan-scenario" in kinds and "PersistentVolumeClaim/servelab-plan-data" in kinds
cmd = lambda ct: (ct["command"] + ct.get("args", []))
for ct in (c, wait, merge["spec"]["template"]["spec"]["containers"][0]):
    assert cmd(ct)[:2] == ["/bin/sh", "-c"], cmd(ct)
open(out + "/shard.sh", "w").write(cmd(c)[2])
open(out + "/wait.sh", "w").write(cmd(wait)[2])
open(out + "/merge.sh", "w").write(cmd(merge["spec"]["template"]["spec"]["containers"][0])[2])
open(out + "/n", "w").write(str(n))
open(out + "/plan_args", "w").write(env["PLAN_ARGS"])
os.makedirs(out + "/config")
for name, text in kinds["ConfigMap/servelab-plan-scenario"]["data"].items():
    open(out + "/config/" + name, "w").write(text)
PY
  # Same commands, smaller data: 150 requests per run keeps the test short.
  sed -i 's/"requests": 2000/"requests": 150/' "$tmp/config/scenario.json"
  grep -q '"requests": 150' "$tmp/config/scenario.json" || fail "could not shrink the scenario"
  n=$(cat "$tmp/n") plan_args=$(cat "$tmp/plan_args")
  mkdir -p "$tmp/bin" "$tmp/data"
  ln -s "$(realpath "$cli")" "$tmp/bin/servelab-cli"
  for f in shard merge wait; do sed -i -e "s#/config/#$tmp/config/#g" -e "s#/data/#$tmp/data/#g" "$tmp/$f.sh"; done
  pids=""
  for i in $(seq 0 $((n - 1))); do
    PATH="$tmp/bin:$PATH" JOB_COMPLETION_INDEX=$i SHARDS=$n PLAN_ARGS=$plan_args sh -c "$(cat "$tmp/shard.sh")" \
      >"$tmp/shard$i.log" 2>&1 &
    pids="$pids $!"
  done
  PATH="$tmp/bin:$PATH" SHARDS=$n timeout 600 sh -c "$(cat "$tmp/wait.sh")" &
  waiter=$!
  for p in $pids; do wait $p || { kill $waiter; fail "a shard process failed: $(cat "$tmp"/shard*.log)"; }; done
  wait $waiter || fail "the merge's wait step did not see every shard"
  PATH="$tmp/bin:$PATH" SHARDS=$n sh -c "$(cat "$tmp/merge.sh")" >"$tmp/merge.log" 2>&1 \
    || fail "merge step failed: $(cat "$tmp/merge.log")"
  grep -q "winner (cheapest meeting the target)" "$tmp/merge.log" || fail "merge log: $(cat "$tmp/merge.log")"
  # shellcheck disable=SC2086
  expect_code 0 "$cli" plan "$tmp/config/scenario.json" $plan_args --out "$tmp/one" --quiet
  same_plan "$tmp/one" "$(dirname "$(ls "$tmp"/data/*/plan.json | head -1)")"
  ;;
kubectl_validate)
  command -v kubectl >/dev/null || { echo "skip: kubectl missing"; exit 77; }
  kubectl label --local -f "$src/deploy/k8s/plan-job.yaml" servelab/validated=true -o name >"$tmp/out" 2>"$tmp/err" \
    || fail "kubectl rejects the manifest: $(cat "$tmp/err")"
  for o in configmap/servelab-plan-scenario persistentvolumeclaim/servelab-plan-data job.batch/servelab-plan \
           job.batch/servelab-plan-merge; do
    grep -qx "$o" "$tmp/out" || fail "kubectl did not read $o: $(cat "$tmp/out")"
  done
  ;;
*) fail "unknown case" ;;
esac
exit 0
