#!/usr/bin/env bash
# Usage: sweep_e2e.sh CASE PATH/TO/servelab-cli SOURCE_DIR
# End-to-end checks of `servelab-cli sweep|merge|capacity` and of the
# batch-engine recipes in deploy/. Prints what failed; exit 0 = pass,
# 77 = skipped (a tool the case needs is missing).
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
wait_points() {  # wait_points DIR N: until DIR/points holds N point records (30 s at most)
  local n
  for _ in $(seq 1 600); do
    n=$(ls "$1/points" 2>/dev/null | grep -c '^[0-9]*\.json$')
    [ "$n" -ge "$2" ] && return
    sleep 0.05
  done
}
same() {  # same FILE_A FILE_B
  cmp -s "$1" "$2" || { diff "$1" "$2" | head -5 >&2; fail "$1 and $2 differ"; }
}

# 2 policies × 3 rates × 2 seeds on a small cluster: 12 quick points.
cat > "$tmp/sweep.json" <<'JSON'
{
  "base": {"cluster": {"instances": 2}, "workload": {"requests": 60}},
  "axes": [
    {"path": "policy.id", "values": ["fcfs", "rr"]},
    {"path": "workload.arrival.rate", "range": {"from": 4, "to": 12, "step": 4}},
    {"path": "run.seed", "values": [1, 2]}
  ],
  "metrics": ["requests.finished", "ttft_s.p99", "slo_attainment"]
}
JSON

case $case_name in
bad_input)
  printf '{"base": {}, "axes": [{"path": "workload.arival.rate", "values": [1, 2]}]}' > "$tmp/typo.json"
  expect_code 2 "$cli" sweep "$tmp/typo.json" --out "$tmp/o"
  grep -q "typo.json" "$tmp/err" && grep -q "workload.arival" "$tmp/err" && grep -q "did you mean" "$tmp/err" \
    || fail "message does not name the file, the path and a hint: $(cat "$tmp/err")"
  [ -e "$tmp/o" ] && fail "output folder written for a bad spec"
  printf '{"base": {}, "axes": [{"path": "run.seed", "range": {"from": 1, "to": 3, "step": -1}}]}' > "$tmp/step.json"
  expect_code 2 "$cli" sweep "$tmp/step.json" --out "$tmp/o"
  grep -q "axes\[0\].range.step" "$tmp/err" || fail "no place in: $(cat "$tmp/err")"
  printf '{"base": {}, "axes": [' > "$tmp/syntax.json"
  expect_code 2 "$cli" sweep "$tmp/syntax.json" --out "$tmp/o"
  grep -q "syntax.json:1:" "$tmp/err" || fail "no line:column in: $(cat "$tmp/err")"
  expect_code 2 "$cli" sweep "$tmp/sweep.json" --out "$tmp/o" --shard 4/4
  grep -q -- "--shard '4/4'" "$tmp/err" || fail "bad --shard not named: $(cat "$tmp/err")"
  [ -e "$tmp/o" ] && fail "output folder written for a bad --shard"
  expect_code 2 "$cli" merge "$tmp/nothing" --out "$tmp/m"
  grep -q "not a sweep output folder" "$tmp/err" || fail "merge of a non-folder: $(cat "$tmp/err")"
  expect_code 2 "$cli" capacity "$src/samples/default.json" --policies fcfs,fcsf
  grep -q "fcsf" "$tmp/err" || fail "unknown policy not named: $(cat "$tmp/err")"
  ;;
threads_shards)
  expect_code 0 "$cli" sweep "$tmp/sweep.json" --out "$tmp/one" --jobs 1 --quiet
  expect_code 0 "$cli" sweep "$tmp/sweep.json" --out "$tmp/two" --jobs 2 --quiet
  [ "$(wc -l < "$tmp/one/results.csv")" = 13 ] || fail "results.csv should have 12 rows and a header"
  for f in results.csv results.json; do same "$tmp/one/$f" "$tmp/two/$f"; done
  for k in 0 1 2 3; do
    expect_code 0 "$cli" sweep "$tmp/sweep.json" --out "$tmp/shard$k" --shard $k/4 --jobs 1 --quiet
    [ -e "$tmp/shard$k/results.csv" ] && fail "a shard wrote results.csv"
  done
  expect_code 0 "$cli" merge "$tmp"/shard0 "$tmp"/shard1 "$tmp"/shard2 "$tmp"/shard3 --out "$tmp/merged"
  for f in results.csv results.json; do same "$tmp/one/$f" "$tmp/merged/$f"; done
  expect_code 2 "$cli" merge "$tmp"/shard0 "$tmp"/shard1 "$tmp"/shard3 --out "$tmp/m2"
  grep -q "shard 2/4 is missing" "$tmp/err" || fail "missing shard not named: $(cat "$tmp/err")"
  [ -e "$tmp/m2/results.csv" ] && fail "merge wrote results despite a missing shard"
  ;;
resume_after_kill)
  # Long enough to be killed half-way: 24 points of 400 requests.
  sed -e 's/"requests": 60/"requests": 400/' -e 's/"values": \[1, 2\]/"values": [1, 2, 3, 4]/' \
    "$tmp/sweep.json" > "$tmp/long.json"
  expect_code 0 "$cli" sweep "$tmp/long.json" --out "$tmp/ref" --jobs 2 --quiet
  "$cli" sweep "$tmp/long.json" --out "$tmp/k" --jobs 2 --quiet >/dev/null 2>&1 &
  pid=$!
  wait_points "$tmp/k" 5
  kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
  done_before=$(ls "$tmp/k/points" | grep -c '^[0-9]*\.json$')
  [ "$done_before" -ge 5 ] && [ "$done_before" -lt 24 ] || fail "kill came at a bad time ($done_before of 24 done)"
  [ -e "$tmp/k/results.csv" ] && fail "results.csv exists after a kill"
  expect_code 0 "$cli" sweep "$tmp/long.json" --out "$tmp/k" --jobs 2 --resume --quiet
  grep -q "reused" "$tmp/out" || fail "no report: $(cat "$tmp/out")"
  reused=$(sed -n 's/.* \([0-9]*\) run, \([0-9]*\) reused.*/\2/p' "$tmp/out")
  [ "$reused" -ge 5 ] || fail "resume reused $reused points, expected >= 5: $(cat "$tmp/out")"
  for f in results.csv results.json; do same "$tmp/ref/$f" "$tmp/k/$f"; done
  ;;
interrupt_then_resume)
  # Ctrl-C (SIGINT) during `sweep --keep-runs`: no new point starts, those
  # under way finish with their files (no temporary left anywhere), the CLI
  # says how many points are kept and ends by the signal (exit 130); then
  # --resume finishes with the results of an uninterrupted sweep.
  sed -e 's/"requests": 60/"requests": 400/' -e 's/"values": \[1, 2\]/"values": [1, 2, 3, 4]/' \
    "$tmp/sweep.json" > "$tmp/long.json"
  expect_code 0 "$cli" sweep "$tmp/long.json" --out "$tmp/ref" --jobs 2 --quiet
  set -m  # job control: the background sweep does not inherit an ignored SIGINT
  "$cli" sweep "$tmp/long.json" --out "$tmp/i" --jobs 2 --keep-runs --quiet >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  wait_points "$tmp/i" 3
  kill -INT $pid
  wait $pid
  code=$?
  set +m
  [ "$code" = 130 ] || fail "exit $code after SIGINT, expected 130: $(cat "$tmp/err")"
  kept=$(ls "$tmp/i/points" | grep -c '^[0-9]*\.json$')
  [ "$kept" -ge 3 ] && [ "$kept" -lt 24 ] || fail "SIGINT came at a bad time ($kept of 24 done)"
  grep -qF "servelab-cli: interrupted by SIGINT: $kept of 24 points done and kept in $tmp/i; --resume finishes the sweep" \
    "$tmp/err" || fail "message: $(cat "$tmp/err")"
  left=$(find "$tmp/i" -name '*.tmp.*')
  [ -z "$left" ] || fail "temporaries left: $left"
  [ "$(ls "$tmp/i/runs" | wc -l)" = "$kept" ] || fail "runs/ holds $(ls "$tmp/i/runs" | wc -l) folders, $kept points kept"
  [ -e "$tmp/i/results.csv" ] && fail "results.csv exists after an interrupt"
  expect_code 0 "$cli" sweep "$tmp/long.json" --out "$tmp/i" --jobs 2 --keep-runs --resume --quiet
  for f in results.csv results.json; do same "$tmp/ref/$f" "$tmp/i/$f"; done
  ;;
k8s_indexed_local)
  # The Indexed Job's own commands (deploy/k8s/sweep-job.yaml), run as N local
  # processes with JOB_COMPLETION_INDEX=0..N-1 on one shared folder, then its
  # merge step; the result must equal the unsharded run.
  command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null || { echo "skip: python3-yaml missing"; exit 77; }
  manifest="$src/deploy/k8s/sweep-job.yaml"
  python3 - "$manifest" "$tmp" <<'PY' || fail "manifest checks failed"
import sys, yaml
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
cmd = c["command"] + c.get("args", [])
assert cmd[:2] == ["/bin/sh", "-c"], cmd
mc = merge["spec"]["template"]["spec"]["containers"][0]
mcmd = mc["command"] + mc.get("args", [])
wait = merge["spec"]["template"]["spec"]["initContainers"][0]
wcmd = wait["command"] + wait.get("args", [])
# Every volume mounted is declared, and the shared data volume is one claim.
for pod in (shard, merge):
    spec = pod["spec"]["template"]["spec"]
    vols = {v["name"] for v in spec["volumes"]}
    for ct in spec["containers"] + spec.get("initContainers", []):
        for m in ct["volumeMounts"]:
            assert m["name"] in vols, m
assert "ConfigMap/servelab-sweep-spec" in kinds and "PersistentVolumeClaim/servelab-sweep-data" in kinds
open(out + "/shard.sh", "w").write(cmd[2])
open(out + "/merge.sh", "w").write(mcmd[2])
open(out + "/wait.sh", "w").write(wcmd[2])
open(out + "/n", "w").write(str(n))
import os
os.makedirs(out + "/config")
for name, text in kinds["ConfigMap/servelab-sweep-spec"]["data"].items():
    open(out + "/config/" + name, "w").write(text)
PY
  # The ConfigMap carries the sample sweep and its base scenario unchanged.
  python3 - "$tmp/config" "$src/samples" <<'PY' || fail "the ConfigMap differs from samples/"
import json, sys
c, s = sys.argv[1], sys.argv[2]
a, b = json.load(open(c + "/sweep.json")), json.load(open(s + "/sweeps/pascal-policies-rates-seeds.json"))
assert a.pop("base") == "pascal-baseline-fcfs.json" and b.pop("base") == "../pascal-baseline-fcfs.json"
assert a == b, (a, b)
assert json.load(open(c + "/pascal-baseline-fcfs.json")) == json.load(open(s + "/pascal-baseline-fcfs.json"))
PY
  # Same commands, smaller data: 40 requests per point keeps the test short.
  sed -i 's/"workload.requests": 300/"workload.requests": 40/' "$tmp/config/sweep.json"
  grep -q '"workload.requests": 40' "$tmp/config/sweep.json" || fail "could not shrink the sweep"
  n=$(cat "$tmp/n")
  # The image's paths, mapped onto this machine.
  mkdir -p "$tmp/bin" "$tmp/data"
  ln -s "$(realpath "$cli")" "$tmp/bin/servelab-cli"
  for f in shard merge wait; do sed -i -e "s#/config/#$tmp/config/#g" -e "s#/data/#$tmp/data/#g" "$tmp/$f.sh"; done
  pids=""
  for i in $(seq 0 $((n - 1))); do
    PATH="$tmp/bin:$PATH" JOB_COMPLETION_INDEX=$i SHARDS=$n sh -c "$(cat "$tmp/shard.sh")" >"$tmp/shard$i.log" 2>&1 &
    pids="$pids $!"
  done
  # The merge pod's init container, started alongside the shards.
  PATH="$tmp/bin:$PATH" SHARDS=$n timeout 600 sh -c "$(cat "$tmp/wait.sh")" &
  waiter=$!
  for p in $pids; do wait $p || { kill $waiter; fail "a shard process failed: $(cat "$tmp"/shard*.log)"; }; done
  wait $waiter || fail "the merge's wait step did not see every shard"
  PATH="$tmp/bin:$PATH" SHARDS=$n sh -c "$(cat "$tmp/merge.sh")" >"$tmp/merge.log" 2>&1 || fail "merge step failed: $(cat "$tmp/merge.log")"
  expect_code 0 "$cli" sweep "$tmp/config/sweep.json" --out "$tmp/ref" --quiet
  resdir=$(dirname "$(ls "$tmp"/data/*/results.csv | head -1)")
  for f in results.csv results.json; do same "$tmp/ref/$f" "$resdir/$f"; done
  ;;
kubectl_validate)
  # Client-side only (no cluster): kubectl parses every document of the
  # manifest offline (`label --local`); schema validation against the API
  # needs a cluster (`kubectl apply --dry-run=server`, docs/sweeps.md).
  command -v kubectl >/dev/null || { echo "skip: kubectl missing"; exit 77; }
  kubectl label --local -f "$src/deploy/k8s/sweep-job.yaml" servelab/validated=true -o name >"$tmp/out" 2>"$tmp/err" \
    || fail "kubectl rejects the manifest: $(cat "$tmp/err")"
  for o in configmap/servelab-sweep-spec persistentvolumeclaim/servelab-sweep-data job.batch/servelab-sweep \
           job.batch/servelab-sweep-merge; do
    grep -qx "$o" "$tmp/out" || fail "kubectl did not read $o: $(cat "$tmp/out")"
  done
  printf 'apiVersion: batch/v1\nkind: Job\nmetadata: {name: x\n' > "$tmp/bad.yaml"
  kubectl label --local -f "$tmp/bad.yaml" a=b -o name >/dev/null 2>&1 && fail "kubectl accepted a broken manifest"
  ;;
capacity_cli)
  # A single instance with a TTFT SLO: a finite max rate for both policies,
  # printed as a table and as JSON with its probes.
  echo '{"cluster": {"instances": 1}, "workload": {"requests": 120}, "slo": {"ttft_s": 0.5}}' > "$tmp/c.json"
  expect_code 0 "$cli" capacity "$tmp/c.json" --policies fcfs,rr --rate-min 1 --rate-max 128 --tolerance 0.05 --quiet
  grep -q "^fcfs " "$tmp/out" && grep -q "^rr " "$tmp/out" || fail "no table: $(cat "$tmp/out")"
  expect_code 0 "$cli" capacity "$tmp/c.json" --policies fcfs --rate-min 1 --rate-max 128 --tolerance 0.05 --json \
    --instances-at 20 --max-instances 16 --quiet
  python3 - "$tmp/out" <<'PY' || fail "capacity --json inconsistent: $(cat "$tmp/out")"
import json, sys
j = json.load(open(sys.argv[1]))
p = j["policies"][0]
r = p["load"]["max_rate"]
assert 1 < r < 128, r
ok = [x["x"] for x in p["load"]["probes"] if x["ok"]]
bad = [x["x"] for x in p["load"]["probes"] if not x["ok"]]
assert max(ok) == r and min(b for b in bad if b > r) <= r * 1.05 + 1e-9, (ok, bad)
n = p["instances"]["min_instances"]
assert 1 <= n <= 16, n
PY
  ;;
slurm_local)
  # A real single-node Slurm on localhost: the job array + dependent merge
  # must equal the unsharded run. Needs root and changes the machine.
  [ "${SERVELAB_SLURM_TEST:-}" = 1 ] || { echo "skip: set SERVELAB_SLURM_TEST=1 (root; installs and starts Slurm)"; exit 77; }
  [ "$(id -u)" = 0 ] || { echo "skip: needs root"; exit 77; }
  bash "$src/deploy/slurm/local-slurm-test.sh" "$cli" "$tmp/sweep.json" 3 "$tmp/slurm" >"$tmp/out" 2>&1 \
    || fail "local Slurm run differs or failed: $(tail -20 "$tmp/out")"
  grep -q "results.csv identical" "$tmp/out" || fail "no comparison: $(tail -20 "$tmp/out")"
  ;;
*) fail "unknown case" ;;
esac
exit 0
