#!/usr/bin/env bash
# A non-root user for rootless Podman and Charliecloud (Debian bookworm; run as root).
#   scripts/rootless.sh user USER            install what is missing (podman, uidmap, slirp4netns,
#                                            fuse-overlayfs, charliecloud, squashfs-tools); create USER
#                                            (locked, no login shell) with subordinate uid/gid ranges in
#                                            /etc/subuid and /etc/subgid, and its Podman configuration
#                                            (cgroupfs manager and file events: no systemd user session;
#                                            the overlay storage driver)
#   scripts/rootless.sh start USER SOCKET    start `podman system service` as USER on SOCKET; PID in
#                                            SOCKET.pid, log in SOCKET.log
# USER's Podman runs with XDG_RUNTIME_DIR=/run/verikit-rootless-USER (made here, owned by USER: no
# loginctl/systemd session needed), the same for the service and `load`, as Podman requires.
#   scripts/rootless.sh stop SOCKET          stop the service started above, by its PID
#   scripts/rootless.sh grant USER PATH...   let USER reach each PATH: an ACL entry (u:USER:x) on each
#                                            directory above it that USER cannot traverse (e.g. a
#                                            checkout under /root); nothing else changes
#   scripts/rootless.sh load USER IMAGE      copy root's Podman image IMAGE into USER's own storage
#                                            (podman save | podman load, streamed), unless USER already
#                                            has it with the same image ID
# Every subcommand is idempotent; `user` holds a lock so that parallel test workers can call it.
set -euo pipefail
cmd="${1:-}"
[ "$(id -u)" = 0 ] || { echo "$0: run as root (it creates a user and starts services as that user)" >&2; exit 2; }

as_user() {  # as_user USER: sets AS_USER, the prefix that runs a command as USER with its own HOME
  # and XDG_RUNTIME_DIR (the same for every Podman call of USER, as Podman requires)
  local user="$1" home run="/run/verikit-rootless-$1"
  home="$(getent passwd "$user" | cut -d: -f6)"
  install -d -o "$user" -m 0700 "$run"
  AS_USER=(runuser -u "$user" -- env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$home" USER="$user"
           LOGNAME="$user" XDG_RUNTIME_DIR="$run")
}

next_start() {  # the first subordinate id after every range in FILE (at least 100000)
  awk -F: 'BEGIN { n = 100000 } NF >= 3 && $2 + $3 > n { n = $2 + $3 } END { print n }' "$1" 2>/dev/null \
    || echo 100000
}

case "$cmd" in
user)
  user="$2"
  exec 9>/run/verikit-rootless.lock
  flock 9
  need=()
  for pair in podman:podman newuidmap:uidmap slirp4netns:slirp4netns fuse-overlayfs:fuse-overlayfs \
              ch-run:charliecloud mksquashfs:squashfs-tools; do
    command -v "${pair%%:*}" >/dev/null || need+=("${pair#*:}")
  done
  [ -x /usr/libexec/podman/catatonit ] || need+=(catatonit)  # Podman's container init (see podman-service.sh)
  if [ "${#need[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    # the lock timeout: the SLURM tests' script may be installing on the other test worker
    apt-get -o DPkg::Lock::Timeout=600 install -y -q "${need[@]}" \
      || { apt-get -o DPkg::Lock::Timeout=600 update -q && apt-get -o DPkg::Lock::Timeout=600 install -y -q "${need[@]}"; }
  fi
  if ! id "$user" >/dev/null 2>&1; then
    useradd --create-home --shell /usr/sbin/nologin "$user"
  fi
  for f in /etc/subuid /etc/subgid; do
    touch "$f"
    grep -q "^$user:" "$f" || echo "$user:$(next_start "$f"):65536" >> "$f"
  done
  home="$(getent passwd "$user" | cut -d: -f6)"
  install -d -o "$user" -g "$(id -gn "$user")" "$home/.config" "$home/.config/containers"
  conf="$home/.config/containers/containers.conf"
  if [ ! -f "$conf" ]; then
    printf '[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"\n' > "$conf"
    chown "$user:" "$conf"
  fi
  # the kernel's overlayfs in the user namespace (Linux >= 5.13): Podman 4.3 would otherwise
  # fall back to vfs, which copies every layer in full (the framac image: 2.6 GB per layer)
  conf="$home/.config/containers/storage.conf"
  if [ ! -f "$conf" ]; then
    printf '[storage]\ndriver = "overlay"\n' > "$conf"
    chown "$user:" "$conf"
  fi
  echo "user $user: $(grep "^$user:" /etc/subuid) (subuid), $(grep "^$user:" /etc/subgid) (subgid)"
  ;;
start)
  user="$2"; sock="$(realpath -m "$3")"; dir="$(dirname "$sock")"; pidfile="$sock.pid"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    echo "rootless podman service already running (pid $(cat "$pidfile")) on $sock"; exit 0
  fi
  [ -d "$dir" ] || install -d -o "$user" -m 0700 "$dir"
  [ "$(stat -c %U "$dir")" = "$user" ] || { echo "$0: $dir must belong to $user (or not exist yet)" >&2; exit 2; }
  rm -f "$sock"
  cd "$dir"  # conmon writes an 'oom' file into its working directory
  as_user "$user"
  "${AS_USER[@]}" podman system service --time=0 "unix://$sock" >"$sock.log" 2>&1 &
  echo $! > "$pidfile"
  for _ in $(seq 1 100); do [ -S "$sock" ] && break; sleep 0.1; done
  [ -S "$sock" ] || { echo "rootless podman service did not start; see $sock.log" >&2; cat "$sock.log" >&2; exit 1; }
  echo "rootless podman service of $user (pid $(cat "$pidfile")) on unix://$sock"
  ;;
stop)
  sock="$(realpath -m "$2")"; pidfile="$sock.pid"
  if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; rm -f "$pidfile"; fi
  ;;
grant)
  user="$2"; shift 2
  for path in "$@"; do
    dir="$(realpath -m "$path")"
    while [ "$dir" != / ]; do
      dir="$(dirname "$dir")"
      runuser -u "$user" -- test -x "$dir" && continue
      command -v setfacl >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q acl \
        || { apt-get -o DPkg::Lock::Timeout=600 update -q \
             && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -q acl; }; }
      setfacl -m "u:$user:x" "$dir"
      echo "$user may now traverse $dir (ACL u:$user:x)"
    done
  done
  ;;
load)
  user="$2"; image="$3"
  as_user "$user"
  want="$(podman image inspect --format '{{.Id}}' "$image")"
  have="$("${AS_USER[@]}" podman image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)"
  if [ "$have" = "$want" ]; then echo "$user has $image (${want:0:12})"; exit 0; fi
  podman save "$image" | "${AS_USER[@]}" podman load -q
  have="$("${AS_USER[@]}" podman image inspect --format '{{.Id}}' "$image")"
  [ "$have" = "$want" ] || { echo "$user's $image has ID $have, not $want" >&2; exit 1; }
  echo "$user has $image (${want:0:12}), loaded"
  ;;
*) echo "usage: $0 user USER | start USER SOCKET | stop SOCKET | grant USER PATH... | load USER IMAGE" >&2; exit 2 ;;
esac
