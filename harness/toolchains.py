"""Toolchain pins, version probes, fingerprints and drift detection.

``images/toolchains.json`` is the only place where versions are written. This module
reads it, probes the versions actually present in a sandbox (by running each tool's
``probe`` command *inside* that sandbox), computes a fingerprint of what was probed and
compares it with the published pins (``pin_match``).

Vocabulary (docs/architecture.md, "toolchain"): flavor ``nix`` = exact published
versions, ``debian`` = closest Debian packages, ``host`` = whatever is on PATH. A
reproduction is bit-exact only when ``pin_match`` is true.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from . import plugin, resources
from .datasets import sha256_file
from .model import Limits, canonical_json  # noqa: F401  (canonical_json re-exported)

PINS_FILE = resources.kit_file("images/toolchains.json")
PROBE_LIMITS = Limits(wall_s=30.0, output_bytes=64 * 1024)  # default memory/CPUs: reuses a run's workers


class ToolchainError(RuntimeError):
    """Unknown toolchain or malformed ``images/toolchains.json``."""


@lru_cache(maxsize=4)
def load_pins(path: str | None = None) -> dict:
    """Return the parsed ``images/toolchains.json`` (dict with key ``toolchains``), with
    every plugin's pins added (their modules imported) when ``path`` is None; the file
    ``path`` alone otherwise.

    Raises:
        ToolchainError: the file is missing or not valid JSON (message names the file
            and, for JSON errors, the line).
    """
    file = Path(path) if path else PINS_FILE
    try:
        data = json.loads(file.read_text())
    except FileNotFoundError as exc:
        raise ToolchainError(f"{file}: missing (it is the single source of truth for versions)") from exc
    except json.JSONDecodeError as exc:
        raise ToolchainError(f"{file}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
    if "toolchains" not in data:
        raise ToolchainError(f"{file}: no 'toolchains' key")
    if path is None:
        _add_plugin_pins(data["toolchains"], file)
    return data


def _add_plugin_pins(toolchains: dict, file: Path) -> None:
    """Add the pins of every plugin (entry points ``verikit.toolchains``: a dict of
    toolchain name -> pins in the format of ``images/toolchains.json``)."""
    try:
        found = {ep: plugin.load(value) for ep, value in plugin.entry_points("verikit.toolchains").items()}
    except plugin.PluginError as exc:
        raise ToolchainError(str(exc)) from None
    for ep, pins in found.items():
        if not isinstance(pins, dict) or not all(isinstance(s, dict) and "tools" in s for s in pins.values()):
            raise ToolchainError(f"plugin toolchains {ep!r}: a dict of toolchain name -> pins with 'tools' is needed")
        for name, spec in pins.items():
            if name in toolchains:
                raise ToolchainError(f"toolchain {name!r} of plugin {ep!r} is already pinned in {file}")
            toolchains[name] = spec


def toolchain_spec(name: str) -> dict:
    """Return the pins of toolchain ``name`` (``{"description", "papers", "tools": {...}}``).

    The kit's own pins are looked in first; the plugins' (and so their modules) only for a
    name the kit does not pin.

    Raises:
        ToolchainError: unknown toolchain (lists the known ones), or a plugin's pins that
            cannot be loaded.
    """
    tcs = load_pins(str(PINS_FILE))["toolchains"]  # the kit's own: no plugin is imported for them
    if name not in tcs:
        tcs = load_pins()["toolchains"]
    if name not in tcs:
        raise ToolchainError(f"unknown toolchain {name!r}; known: {', '.join(sorted(tcs))}")
    return tcs[name]


def version_matches(pin: str | None, probed: str | None) -> bool | None:
    """Whether a probed version satisfies a published pin.

    A pin matches when its dot-separated components are a prefix of the probed ones
    (pin ``1.8`` matches ``1.8``; pin ``30.0`` does not match ``25.0-beta``).

    Returns:
        None when there is no pin (the paper gave no version), else True/False.
    """
    if pin is None:
        return None
    if probed is None:
        return False
    p = re.split(r"[.\-+~ ]", pin)
    q = re.split(r"[.\-+~ ]", probed)
    return q[: len(p)] == p


@dataclass(frozen=True)
class Fingerprint:
    """A toolchain's ``fingerprint`` read once: all that :meth:`harness.model.Job.key` and
    :meth:`~harness.model.Job.verification_key` read of a toolchain, for the many jobs of
    one (:attr:`ProbedToolchain.fingerprint` is computed anew at each reading)."""

    fingerprint: str


@dataclass
class ProbedToolchain:
    """What a sandbox really has for one toolchain.

    Attributes:
        name: toolchain name (key of images/toolchains.json).
        flavor: ``host``, ``debian`` or ``nix``.
        sandbox: sandbox name that ran the probes.
        tools: tool -> {"version": str|None, "raw": first output line or error,
            "published": pin or None, "match": True/False/None}.
        image, image_digest: container image and digest (None on the host).
        image_manifest: for images, the baked ``/etc/verikit/toolchain.json`` summary:
            ``{"fingerprint", "packages", "matches_probe"}`` (None on the host).
        isolation: what the sandbox enforced on its jobs (its ``isolation``: network,
            root, memory, cpus, pids; see docs/sandboxes.md), or None when it did not
            say. Recorded, not part of :attr:`fingerprint`.
    """

    name: str
    flavor: str
    sandbox: str
    tools: dict[str, dict] = field(default_factory=dict)
    image: str | None = None
    image_digest: str | None = None
    image_manifest: dict | None = None
    isolation: dict | None = None

    @property
    def versions(self) -> dict[str, str | None]:
        """Tool -> probed version (None: not installed)."""
        return {t: v["version"] for t, v in self.tools.items()}

    @property
    def pin_match(self) -> bool:
        """True only when every published pin of the toolchain is met by the probe."""
        return all(v["match"] is not False for v in self.tools.values())

    @property
    def drift(self) -> list[dict]:
        """Tools whose probed version differs from the published pin:
        ``[{"tool", "published", "probed"}]`` (probed None = tool missing)."""
        return [
            {"tool": t, "published": v["published"], "probed": v["version"]}
            for t, v in sorted(self.tools.items())
            if v["match"] is False
        ]

    @property
    def fingerprint(self) -> str:
        """sha256 (hex) of the canonical JSON of name, flavor, probed versions, image digest
        and (host) the sha256 of each tool's binary: a rebuilt tool with the same version
        string changes it."""
        payload = {"name": self.name, "flavor": self.flavor, "versions": self.versions,
                   "image_digest": self.image_digest,
                   "binaries": {t: v.get("binary_sha256") for t, v in sorted(self.tools.items())}}
        return hashlib.sha256(canonical_json(payload).encode()).hexdigest()

    @classmethod
    def from_json(cls, data: dict) -> "ProbedToolchain":
        """The probe back from :meth:`to_json` (a batch manifest, a runner image's label).

        Raises:
            ValueError: a field is missing, or the fingerprint recorded is not the one
                the fields give (an edited probe).
        """
        try:
            probed = cls(name=data["name"], flavor=data["flavor"], sandbox=data["sandbox"], tools=data["tools"],
                         image=data.get("image"), image_digest=data.get("image_digest"),
                         image_manifest=data.get("image_manifest"), isolation=data.get("isolation"))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"not a probed toolchain: missing {exc}") from None
        if data.get("fingerprint") != probed.fingerprint:
            raise ValueError(f"probed toolchain {data.get('name')}: fingerprint {str(data.get('fingerprint'))[:12]} "
                             f"is not the one its fields give ({probed.fingerprint[:12]})")
        return probed

    def to_json(self) -> dict:
        """JSON-able manifest of the probe (as stored in results and run manifests)."""
        return {
            "name": self.name, "flavor": self.flavor, "sandbox": self.sandbox,
            "image": self.image, "image_digest": self.image_digest,
            "fingerprint": self.fingerprint, "pin_match": self.pin_match,
            "drift": self.drift, "tools": self.tools,
            **({"image_manifest": self.image_manifest} if self.image_manifest is not None else {}),
            **({"isolation": self.isolation} if self.isolation is not None else {}),
        }


def _binary_sha256(command: str) -> str | None:
    """sha256 (hex) of the file ``command`` resolves to on this host's PATH (symlinks
    followed), or None when it is not found. In a container the image digest stands for
    the binaries."""
    path = shutil.which(command)
    return sha256_file(os.path.realpath(path)) if path else None


def probe(name: str, sandbox) -> ProbedToolchain:
    """Probe every tool of toolchain ``name`` inside ``sandbox``.

    Runs each tool's ``probe`` argv from images/toolchains.json through ``sandbox.run``
    (so versions are those of the sandbox that will run jobs), extracts the version with
    the tool's ``pattern`` and compares it with the published pin.

    Returns:
        ProbedToolchain; a tool that is missing or whose output does not match the
        pattern gets ``version`` None.
    """
    spec = toolchain_spec(name)
    probed = ProbedToolchain(name=name, flavor="host" if sandbox.host_tools else "debian", sandbox=sandbox.name,
                             image=sandbox.image, image_digest=sandbox.image_digest,
                             isolation=dict(sandbox.isolation or {}) or None)
    for tool, tspec in spec["tools"].items():
        res = sandbox.run(list(tspec["probe"]), limits=PROBE_LIMITS)
        text = (res.stdout + "\n" + res.stderr).strip()
        if res.start_error:
            version, raw = None, res.start_error
        else:
            m = re.search(tspec["pattern"], text, flags=re.M)
            version = m.group(1) if m else None
            raw = text.splitlines()[0] if text else ""
        probed.tools[tool] = {
            "version": version,
            "raw": raw[:200],
            "published": tspec.get("published"),
            "match": version_matches(tspec.get("published"), version),
            "binary_sha256": _binary_sha256(tspec["probe"][0]) if sandbox.host_tools and version else None,
        }
    raw = sandbox.read_file("/etc/verikit/toolchain.json")
    if sandbox.image is not None:  # an image says what was baked into it
        manifest = json.loads(raw) if raw else {}
        baked = {t: v.get("version") for t, v in manifest.get("tools", {}).items()}
        probed.image_manifest = {"fingerprint": manifest.get("fingerprint"), "packages": manifest.get("packages"),
                                 "matches_probe": baked == probed.versions}
    return probed
