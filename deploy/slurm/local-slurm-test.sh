#!/bin/bash
# Stands up a real single-node Slurm on localhost (Debian's slurm-wlm and
# munge), submits a sweep as a job array plus the dependent merge job
# (deploy/slurm/submit.sh), waits, and compares results.csv/results.json
# byte for byte with the same sweep run unsharded.
#
# Usage (as root; installs the packages with apt-get when missing):
#   deploy/slurm/local-slurm-test.sh PATH/TO/servelab-cli SWEEP.json SHARDS WORKDIR [--keep]
# --keep leaves slurmctld, slurmd and munged running afterwards.
# Exit 0 when the files are identical; prints their sha256.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 servelab-cli SWEEP.json SHARDS WORKDIR [--keep]" >&2; exit 2; }
cli=$(realpath "$1") sweep=$(realpath "$2") shards=$3 work=$(realpath -m "$4") keep=${5:-}
here=$(dirname "$(realpath "$0")")
[ "$(id -u)" = 0 ] || { echo "$0: needs root (daemons, /etc/slurm)" >&2; exit 2; }
log() { echo "[local-slurm] $*"; }

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  log "installing slurm-wlm and munge"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends slurm-wlm munge >/dev/null
fi

# --- munge: authentication between the Slurm daemons and commands.
if ! munge -n >/dev/null 2>&1; then
  [ -s /etc/munge/munge.key ] || mungekey --create --keyfile /etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  runuser -u munge -- /usr/sbin/munged
  sleep 1
fi
munge -n | unmunge >/dev/null || { echo "munge does not work" >&2; exit 1; }

# --- Slurm: one node, this host, every core; no cgroups (containers).
host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 512 ))
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=servelab-local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
if ! scontrol ping 2>/dev/null | grep -q UP; then
  log "starting slurmctld and slurmd on $host ($cpus CPUs)"
  slurmctld -c
  slurmd
fi
for _ in $(seq 1 60); do
  sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)' && break
  sleep 1
done
sinfo
sinfo -h -o '%t' | grep -qE '^(idle|mix|alloc)' || { echo "the node did not come up; see /var/log/slurm/" >&2; exit 1; }

# --- The sweep: as a job array + merge, and unsharded for reference.
rm -rf "$work"
mkdir -p "$work"
log "submitting $sweep as $shards array tasks + a dependent merge"
t0=$(date +%s)
read -r array merge < <(SERVELAB_CLI=$cli "$here/submit.sh" "$sweep" "$work/slurm" "$shards")
log "array job $array, merge job $merge"
while squeue -h -j "$array,$merge" 2>/dev/null | grep -q .; do sleep 2; done
log "Slurm jobs finished after $(( $(date +%s) - t0 )) s"
cat "$work"/slurm/slurm-logs/*.out
[ -s "$work/slurm/results.csv" ] || { echo "no results.csv from the Slurm run" >&2; exit 1; }
log "running the same sweep unsharded"
"$cli" sweep "$sweep" --out "$work/local" --quiet
status=0
for f in results.csv results.json; do
  if cmp "$work/local/$f" "$work/slurm/$f"; then log "$f identical"; else status=1; fi
done
sha256sum "$work/local/results.csv" "$work/slurm/results.csv" "$work/local/results.json" "$work/slurm/results.json"
if [ "$keep" != --keep ]; then
  scontrol shutdown >/dev/null 2>&1 || true
fi
exit $status
