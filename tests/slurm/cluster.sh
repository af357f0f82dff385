#!/usr/bin/env bash
# cluster.sh - a real single-node Slurm cluster for the tests, from Debian's
# slurm-wlm and munge: `tests/slurm/cluster.sh CMD [ARGS...]` writes a
# slurm.conf for this host into a temporary folder, starts munged (with its
# own key and socket there), slurmctld and slurmd, waits for the node to be
# idle, runs CMD with SLURM_CONF set, then stops the daemons it started, by
# their pids, and removes the folder.  Exit status: CMD's; 77 (skip) when not
# root or Slurm/munge are not installed.
set -uo pipefail
if [ "$(id -u)" -ne 0 ]; then echo "SKIP: a test Slurm cluster needs root (slurmd runs jobs as any user)"; exit 77; fi
for p in slurmctld slurmd munged sinfo sbatch; do
  command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] || { echo "SKIP: $p not installed (apt-get install slurm-wlm munge)"; exit 77; }
done
PATH=$PATH:/usr/sbin
T=$(mktemp -d /tmp/mgpu-slurm.XXXXXX)
chmod 755 "$T"
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
  done
  # jobs the test left running were children of slurmd's step daemons, which died with it
  rm -rf "$T"
}
trap stop EXIT
trap 'exit 130' INT TERM
host=$(hostname -s)
cpus=$(nproc)
mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.8)}' /proc/meminfo)
mkdir -p "$T/state" "$T/spool" "$T/log" "$T/munge"
chmod 700 "$T/munge"
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$T/munge/munge.key"
munged --force --key-file="$T/munge/munge.key" --socket="$T/munge/munge.socket" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/log/munged.log" --seed-file="$T/munge/seed" || { echo "cluster: munged did not start"; cat "$T/log/munged.log"; exit 1; }
for _ in $(seq 50); do [ -s "$T/munge/munged.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$T/munge/munged.pid")")
cat > "$T/slurm.conf" <<CONF
ClusterName=mgputest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldPort=$((20000 + RANDOM % 10000))
SlurmdPort=$((30000 + RANDOM % 10000))
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MaxArraySize=1001
KillWait=2
InactiveLimit=0
MinJobAge=300
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
export SLURM_CONF=$T/slurm.conf
slurmctld -f "$SLURM_CONF" || { echo "cluster: slurmctld did not start"; cat "$T/log/slurmctld.log"; exit 1; }
for _ in $(seq 50); do [ -s "$T/slurmctld.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$T/slurmctld.pid")")
slurmd -f "$SLURM_CONF" || { echo "cluster: slurmd did not start"; cat "$T/log/slurmd.log"; exit 1; }
for _ in $(seq 50); do [ -s "$T/slurmd.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$T/slurmd.pid")")
idle=""
for _ in $(seq 100); do
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1)
  case "$state" in idle*) idle=1; break ;; esac
  sleep 0.2
done
if [ -z "$idle" ]; then
  echo "cluster: the node did not come up idle (state: ${state:-none})"
  tail -20 "$T/log/slurmctld.log" "$T/log/slurmd.log"
  exit 1
fi
echo "cluster: Slurm $(sinfo -V | awk '{print $2}') on $host ($cpus CPUs) up in $T"
export MGPU_SLURM_TMP=$T
"$@"
