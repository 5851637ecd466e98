#!/bin/bash
# Usage: deploy/slurm/plan-submit.sh SCENARIO.json OUT_DIR SHARDS "PLAN OPTIONS" [sbatch options...]
# e.g.   deploy/slurm/plan-submit.sh s.json out 8 "--rate 10 --disaggregated" --partition=cpu
# Submits the shard array and the dependent merge job (deploy/slurm/plan.sbatch);
# prints "ARRAY_JOB_ID MERGE_JOB_ID". When both have finished, OUT_DIR holds
# candidates.csv, pareto.csv and plan.json (as `servelab-cli plan --out` writes
# them) and the merge job's log the plan's report. SERVELAB_CLI picks the binary.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 SCENARIO.json OUT_DIR SHARDS \"PLAN OPTIONS\" [sbatch options...]" >&2; exit 2; }
scenario=$(realpath "$1") out=$(realpath -m "$2") shards=$3
export PLAN_ARGS=$4  # through --export=ALL: it may hold commas (--gpus a,b)
shift 4
here=$(dirname "$(realpath "$0")")
mkdir -p "$out/slurm-logs"
common=(--chdir "$out" --output "$out/slurm-logs/%x-%A_%a.out")
array=$(sbatch --parsable "${common[@]}" "$@" --array="0-$((shards - 1))" \
  --export="ALL,SCENARIO=$scenario,OUT=$out,SHARDS=$shards" "$here/plan.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable "${common[@]}" "$@" --job-name=servelab-plan-merge --dependency="afterok:$array" \
  --export="ALL,MERGE=1,OUT=$out" "$here/plan.sbatch")
echo "${array} ${merge%%;*}"
