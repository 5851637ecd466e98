#!/bin/bash
# Usage: deploy/slurm/submit.sh SWEEP.json OUT_DIR SHARDS [sbatch options...]
# Submits the shard array and the dependent merge job (deploy/slurm/sweep.sbatch);
# prints "ARRAY_JOB_ID MERGE_JOB_ID". When both have finished, OUT_DIR holds
# results.csv and results.json. SERVELAB_CLI picks the servelab-cli binary.
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 SWEEP.json OUT_DIR SHARDS [sbatch options...]" >&2; exit 2; }
sweep=$(realpath "$1") out=$(realpath -m "$2") shards=$3
shift 3
here=$(dirname "$(realpath "$0")")
mkdir -p "$out/slurm-logs"
common=(--chdir "$out" --output "$out/slurm-logs/%x-%A_%a.out")
array=$(sbatch --parsable "${common[@]}" "$@" --array="0-$((shards - 1))" \
  --export="ALL,SWEEP=$sweep,OUT=$out,SHARDS=$shards" "$here/sweep.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable "${common[@]}" "$@" --job-name=servelab-merge --dependency="afterok:$array" \
  --export="ALL,MERGE=1,OUT=$out" "$here/sweep.sbatch")
echo "${array} ${merge%%;*}"
