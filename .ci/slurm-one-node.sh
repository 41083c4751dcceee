#!/usr/bin/env bash
# A one-node Slurm cluster on loopback, without systemd, for the job-array tests
# (crates/cli/tests/slurm.rs). Run as root. `slurm-one-node.sh` installs and starts it (about
# 15 s to install, 2 s to start on a 2-core machine, Debian 12, slurm-wlm 22.05.8);
# `slurm-one-node.sh stop` stops the daemons by their pid files.
set -euo pipefail
if [ "${1:-}" = stop ]; then
  for pid in /run/slurmd.pid /run/slurmctld.pid /run/munge/munged.pid; do
    [ -f "$pid" ] && kill "$(cat "$pid")" 2>/dev/null || true
  done
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
packages=(slurm-wlm slurmctld slurmd munge slurm-client)
apt-get install -y --no-install-recommends "${packages[@]}" \
  || { apt-get update && apt-get install -y --no-install-recommends "${packages[@]}"; }
H=$(hostname -s)
MEM=$(( $(free -m | awk '/Mem:/{print $2}') - 1024 ))
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
chown slurm:slurm /var/spool/slurmctld /var/log/slurm
chown munge:munge /run/munge && chmod 755 /run/munge
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=local
SlurmctldHost=$H(127.0.0.1)
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=/var/log/slurm/jobcomp.log
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MailProg=/bin/true
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$H NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$MEM State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
runuser -u munge -- /usr/sbin/munged      # Debian's package already generated /etc/munge/munge.key
/usr/sbin/slurmctld                       # daemonizes, pid in /run/slurmctld.pid
/usr/sbin/slurmd                          # daemonizes, pid in /run/slurmd.pid
for i in $(seq 1 60); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 0.5; done
sinfo
