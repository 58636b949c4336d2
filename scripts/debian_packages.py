"""Print the Debian packages of a toolchain as ``pkg=version`` (one per line), read from
images/toolchains.json -- the only place versions are written.

Usage: python3 scripts/debian_packages.py TOOLCHAIN [--unpinned]
"""

import json
import sys
from pathlib import Path

pins = json.loads((Path(__file__).resolve().parent.parent / "images" / "toolchains.json").read_text())
name = sys.argv[1]
unpinned = "--unpinned" in sys.argv
for tool, spec in pins["toolchains"][name]["tools"].items():
    deb = spec.get("debian")
    if deb:
        for pkg in (deb["package"], *deb.get("also", ())):  # "also": packages of the same source and version
            print(pkg if unpinned else f"{pkg}={deb['version']}")
