"""Record pushed images in images/toolchains.json (the images workflow's last step).

Usage: python scripts/record_published.py [--pins FILE] PUSHED.json [PUSHED.json ...]

Each PUSHED.json is what ``verikit images push`` printed (``{"image", "pushed",
"digest"}``) plus ``"toolchain"``, ``"flavor"`` (debian | nix) and ``"fingerprint"`` (of
the pins the image was built from). The entry written is
``toolchains.<name>.images.<flavor>.published = {"ref": "<repo>@<digest>", "fingerprint"}``,
which ``verikit images pull NAME`` reads. A fingerprint is not part of what the Debian or
Nix image fingerprints hash, so recording a publication does not change them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PINS = Path(__file__).resolve().parents[1] / "images" / "toolchains.json"


def main(argv: list[str]) -> int:
    target = PINS
    if argv[:1] == ["--pins"]:
        target, argv = Path(argv[1]), argv[2:]
    paths = argv
    pins = json.loads(target.read_text())
    for p in paths:
        pushed = json.loads(Path(p).read_text())
        digest = pushed.get("digest")
        if not digest or not digest.startswith("sha256:"):
            print(f"error: {p}: no digest (the push did not report one)", file=sys.stderr)
            return 2
        repo = pushed["pushed"].rsplit(":", 1)[0] if "@" not in pushed["pushed"] else pushed["pushed"].split("@")[0]
        tc = pins["toolchains"][pushed["toolchain"]]
        flavor = tc.setdefault("images", {}).setdefault(pushed["flavor"], {})
        flavor["published"] = {"ref": f"{repo}@{digest}", "fingerprint": pushed["fingerprint"]}
        print(f"{pushed['toolchain']} ({pushed['flavor']}): {repo}@{digest}")
    target.write_text(json.dumps(pins, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
