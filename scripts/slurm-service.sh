#!/usr/bin/env bash
# A single-node SLURM cluster on 127.0.0.1 for the tests (Debian bookworm, as root): SLURM
# 22.05 (slurmctld + slurmd) with munge, every file under one state directory.
#   scripts/slurm-service.sh start STATE   install slurm-wlm/munge if missing, write STATE/slurm.conf,
#                                          start munged, slurmctld and slurmd (PIDs in STATE/*.pid),
#                                          wait until the node is idle; print the SLURM_CONF to export
#   scripts/slurm-service.sh stop STATE    stop the daemons started above, by their PIDs, and remove STATE
# Clients find the cluster through SLURM_CONF=STATE/slurm.conf (nothing is written to /etc/slurm).
# The node is 'localhost' (NodeAddr 127.0.0.1) with this machine's CPUs and 90 % of its memory;
# one partition 'debug' (default, no time limit); no accounting, no cgroups
# (proctrack/linuxproc, task/none); JobRequeue=1; a requeued job may start again after
# cred_expire (10 s here; SLURM's default is 120 s) and a backfill pass (every 5 s here; default 30 s).
set -euo pipefail
cmd="${1:-}"; state="$(realpath -m "${2:-}")"
[ -n "${2:-}" ] && [ "$state" != / ] || { echo "usage: $0 start|stop STATE_DIR (a directory of its own)" >&2; exit 2; }
stop_all() {  # SIGTERM to each daemon started here (by its PID), SIGKILL to any left after 5 s
  pids=()
  for d in slurmd slurmctld munged; do
    [ -f "$state/$d.pid" ] && pids+=("$(cat "$state/$d.pid")") && rm -f "$state/$d.pid"
  done
  [ "${#pids[@]}" -gt 0 ] || return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq 1 50); do
    alive=0; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ "$alive" = 1 ] || break; sleep 0.1
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
}
case "$cmd" in
start)
  if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    # keep the packages' maintainer scripts from starting daemons of their own (removed on exit)
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d
      trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
    apt_get() { apt-get -o DPkg::Lock::Timeout=600 "$@"; }  # wait for another apt-get, do not fail
    apt_get install -y -q slurm-wlm munge || { apt_get update -q && apt_get install -y -q slurm-wlm munge; }
  fi
  if [ -f "$state/slurmctld.pid" ] && kill -0 "$(cat "$state/slurmctld.pid")" 2>/dev/null; then
    echo "SLURM already running in $state"; echo "export SLURM_CONF=$state/slurm.conf"; exit 0
  fi
  stop_all; rm -rf "$state"
  mkdir -p "$state"/{munge,ctld,spool}; chmod 755 "$state" "$state/munge"  # munged wants its socket reachable
  dd if=/dev/urandom of="$state/munge/munge.key" bs=1024 count=1 status=none; chmod 400 "$state/munge/munge.key"
  sock="$state/munge/munge.socket.2"
  munged --force --socket="$sock" --key-file="$state/munge/munge.key" --pid-file="$state/munge/munged.pid" \
    --log-file="$state/munge/munged.log" --seed-file="$state/munge/munged.seed"
  for _ in $(seq 1 50); do [ -f "$state/munge/munged.pid" ] && break; sleep 0.1; done
  cp "$state/munge/munged.pid" "$state/munged.pid"
  cpus="$(nproc)"; mem_mb="$(awk '/^MemTotal:/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)"
  cat > "$state/slurm.conf" <<EOF
ClusterName=verikit
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock,cred_expire=10
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.daemon.pid
SlurmdPidFile=$state/slurmd.daemon.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=5
MpiDefault=none
JobRequeue=1
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=300
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF="$state/slurm.conf"
  cd "$state"
  nohup slurmctld -D -i >"$state/slurmctld.out" 2>&1 &
  echo $! > "$state/slurmctld.pid"
  nohup slurmd -D -N localhost >"$state/slurmd.out" 2>&1 &
  echo $! > "$state/slurmd.pid"
  for _ in $(seq 1 300); do
    st="$(sinfo -h -N -o %T 2>/dev/null || true)"
    [ "$st" = idle ] && break; sleep 0.1
  done
  if [ "${st:-}" != idle ]; then
    echo "SLURM did not come up (node state: ${st:-none}); see $state/slurmctld.log, $state/slurmd.log" >&2
    tail -5 "$state/slurmctld.log" "$state/slurmd.log" >&2 || true
    stop_all; exit 1
  fi
  echo "SLURM (slurmctld pid $(cat "$state/slurmctld.pid"), slurmd pid $(cat "$state/slurmd.pid")) on 127.0.0.1"
  echo "export SLURM_CONF=$state/slurm.conf"
  ;;
stop)
  stop_all; rm -rf "$state"
  ;;
*) echo "usage: $0 start|stop STATE_DIR" >&2; exit 2 ;;
esac
