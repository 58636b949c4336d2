#!/usr/bin/env bash
# Podman as the Docker-API engine of the container sandbox (Debian bookworm, as root).
#   scripts/podman-service.sh start SOCKET   install podman/runc/catatonit/debootstrap/skopeo if missing,
#                                            write /etc/containers/containers.conf if absent,
#                                            start `podman system service` on SOCKET (PID in SOCKET.pid)
#   scripts/podman-service.sh stop SOCKET    stop the service started above, by its PID
# The containers.conf is the one docs/sandboxes.md shows (runc, ulimits), the setup found to work here.
set -euo pipefail
cmd="$1"; sock="$(realpath -m "$2")"; pidfile="$sock.pid"
case "$cmd" in
start)
  need=()
  for p in podman runc debootstrap skopeo; do command -v "$p" >/dev/null || need+=("$p"); done
  # catatonit: the container init Podman runs (init: true) at /usr/libexec/podman/catatonit; Podman
  # only recommends "catatonit | tini", and a machine that already has tini gets no catatonit
  [ -x /usr/libexec/podman/catatonit ] || need+=(catatonit)
  if [ "${#need[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q "${need[@]}" || { apt-get update -q && apt-get install -y -q "${need[@]}"; }
  fi
  if [ ! -f /etc/containers/containers.conf ]; then
    mkdir -p /etc/containers
    printf '[containers]\ndefault_ulimits = ["nofile=8192:8192", "nproc=8192:8192"]\n[engine]\nruntime = "runc"\n' \
      > /etc/containers/containers.conf
  fi
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "podman service already running (pid $(cat "$pidfile")) on $sock"; exit 0
  fi
  mkdir -p "$(dirname "$sock")"; rm -f "$sock"
  # Run the service from the socket's directory: conmon writes an empty file 'oom' into its
  # working directory when a job is OOM-killed, which would otherwise land in the checkout.
  cd "$(dirname "$sock")"
  nohup podman system service --time=0 "unix://$sock" >"$sock.log" 2>&1 &
  echo $! > "$pidfile"
  for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.1; done
  [ -S "$sock" ] || { echo "podman service did not start; see $sock.log" >&2; exit 1; }
  echo "podman service (pid $(cat "$pidfile")) on unix://$sock"
  ;;
stop)
  if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; rm -f "$pidfile"; fi
  ;;
*) echo "usage: $0 start|stop SOCKET" >&2; exit 2 ;;
esac
