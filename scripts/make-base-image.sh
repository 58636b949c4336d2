#!/usr/bin/env bash
# Make the base image verikit-base:<suite> from Debian packages only:
#   debootstrap --variant=minbase <suite> DIR, then `podman import` (or `docker import`).
# Usage: scripts/make-base-image.sh SUITE [ENGINE]   (SUITE: bookworm | trixie)
# Idempotent: does nothing when the image exists. Needs root and network to Debian.
# With BASE_IMAGE=REPO@sha256:... (e.g. docker.io/library/debian@sha256:...) it pulls that
# image by digest instead, checks that it is Debian SUITE, and tags it (CI with a registry).
set -euo pipefail
suite="$1"; engine="${2:-podman}"
image="verikit-base:${suite}"
if "$engine" image inspect "$image" >/dev/null 2>&1 || "$engine" image inspect "localhost/$image" >/dev/null 2>&1; then
  echo "base image $image exists"; exit 0
fi
if [ -n "${BASE_IMAGE:-}" ]; then  # the official Debian image, by digest, where a registry is reachable
  case "$BASE_IMAGE" in *@sha256:*) ;; *) echo "BASE_IMAGE=$BASE_IMAGE: give it by digest (REPO@sha256:...)" >&2; exit 2 ;; esac
  "$engine" pull -q "$BASE_IMAGE" >/dev/null
  got="$("$engine" run --rm --network none "$BASE_IMAGE" sh -c '. /etc/os-release; echo "$VERSION_CODENAME"')"
  if [ "$got" != "$suite" ]; then echo "$BASE_IMAGE is Debian '$got', not $suite" >&2; exit 2; fi
  "$engine" tag "$BASE_IMAGE" "$image"
  echo "base image $image = $BASE_IMAGE"; exit 0
fi
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
dir="$(mktemp -d /tmp/verikit-rootfs-XXXXXX)"
trap 'rm -rf "$dir"' EXIT
debootstrap --variant=minbase "$suite" "$dir" "$mirror" >/dev/null
tar -C "$dir" -c . | "$engine" import --change "LABEL verikit.base=$suite" - "$image"
echo "built base image $image"
