"""flake.nix reads images/toolchains.json (the single source of truth for versions).

Runs the real Nix evaluator from Debian's nix-bin (installed by ``nox -s tests``). Only
evaluation is possible here: nixpkgs cannot be downloaded, and the minimal flake's
outputs do not use it, so evaluating them with an empty nixpkgs stub is exact.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import toolchains

ROOT = Path(__file__).resolve().parent.parent
NIX = shutil.which("nix-instantiate")
pytestmark = [pytest.mark.realtool,
              pytest.mark.skipif(NIX is None, reason="nix-instantiate (Debian nix-bin) is not installed")]


def test_flake_parses():
    proc = subprocess.run([NIX, "--parse", str(ROOT / "flake.nix")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_flake_exposes_the_published_pins_of_toolchains_json():
    expr = f"let f = import {ROOT / 'flake.nix'}; in (f.outputs {{ self = {{}}; nixpkgs = {{}}; }}).lib.published"
    proc = subprocess.run([NIX, "--eval", "--strict", "--json", "-E", expr], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    published = json.loads(proc.stdout)
    pins = toolchains.load_pins()["toolchains"]
    assert set(published) == set(pins)
    for name, spec in pins.items():
        assert published[name] == {tool: t["published"] for tool, t in spec["tools"].items()}
