#!/usr/bin/env bash
# Install the Debian (bookworm) toolchain packages the host sandbox needs, at the exact
# versions pinned in images/toolchains.json. Idempotent: does nothing when every pinned
# package is already installed. Needs root (or sudo) and a Debian-based system.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
toolchain="${1:-framac}"
mapfile -t pinned < <(python3 "$here/debian_packages.py" "$toolchain")
missing=()
for p in "${pinned[@]}"; do
  pkg="${p%%=*}"; want="${p#*=}"
  have="$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)"
  [ "$have" = "$want" ] || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  echo "bootstrap: $toolchain toolchain already installed (${pinned[*]})"
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "bootstrap: apt-get not found; install ${missing[*]} by hand or use --sandbox container" >&2
  exit 1
fi
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
if ! $SUDO apt-get install -y -q "${missing[@]}"; then
  # A Debian point release can replace a pinned version; the probe records what is
  # installed and pin_match/drift report it, so fall back loudly rather than fail.
  echo "bootstrap: WARNING: pinned versions not available, installing current ones" >&2
  mapfile -t names < <(printf '%s\n' "${missing[@]}" | cut -d= -f1)
  $SUDO apt-get install -y -q "${names[@]}"
fi
