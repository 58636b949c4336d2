"""The container engine a sandbox and the image builder talk to: a Docker-API engine
(Docker, or Podman's Docker-compatible service) found at ``DOCKER_HOST`` or the default
socket (:func:`connect`), and the error when none answers (:class:`EngineUnavailable`).
Below both :mod:`harness.sandbox.container` and :mod:`harness.sandbox.images`."""

from __future__ import annotations

import os

from .base import SandboxError


class EngineUnavailable(SandboxError):
    """No container engine answers; the message says how to start one."""


def engine_hint() -> str:
    """How to make an engine reachable, for error messages."""
    return ("start one, e.g. Podman's Docker-compatible service as root:\n"
            "  podman system service --time=0 unix:///run/podman/podman.sock &\n"
            "  export DOCKER_HOST=unix:///run/podman/podman.sock\n"
            "or Docker (its default socket is found automatically); or pass --sandbox host")


def connect(base_url: str | None = None):
    """A ``docker.DockerClient`` for ``base_url``, ``DOCKER_HOST`` or the default socket.

    Raises:
        EngineUnavailable: nothing answers (message names the address and how to start one).
    """
    import docker

    url = base_url or os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    try:
        client = docker.DockerClient(base_url=url, timeout=120)
        client.ping()
    except Exception as exc:  # docker raises several unrelated types for "not there"
        raise EngineUnavailable(f"no container engine at {url} ({type(exc).__name__}); {engine_hint()}") from exc
    return client


def engine_reachable(base_url: str | None = None) -> bool:
    """True when a Docker-API engine answers at ``base_url``/``DOCKER_HOST``/default."""
    try:
        connect(base_url).close()
        return True
    except EngineUnavailable:
        return False
