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
        print(deb["package"] if unpinned else f"{deb['package']}={deb['version']}")
