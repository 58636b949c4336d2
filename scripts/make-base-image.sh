#!/usr/bin/env bash
# Make the base image verikit-base:<suite> from Debian packages only:
#   debootstrap --variant=minbase <suite> DIR, then `podman import` (or `docker import`).
# Usage: scripts/make-base-image.sh SUITE [ENGINE]   (SUITE: bookworm | trixie)
# Idempotent: does nothing when the image exists. Needs root and network to Debian.
set -euo pipefail
suite="$1"; engine="${2:-podman}"
image="verikit-base:${suite}"
if "$engine" image inspect "$image" >/dev/null 2>&1 || "$engine" image inspect "localhost/$image" >/dev/null 2>&1; then
  echo "base image $image exists"; exit 0
fi
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
dir="$(mktemp -d /tmp/verikit-rootfs-XXXXXX)"
trap 'rm -rf "$dir"' EXIT
debootstrap --variant=minbase "$suite" "$dir" "$mirror" >/dev/null
tar -C "$dir" -c . | "$engine" import --change "LABEL verikit.base=$suite" - "$image"
echo "built base image $image"
