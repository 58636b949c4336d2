"""Build-time probe of a Nix toolchain image (run by nix/image.nix, in the Nix build sandbox).

Usage: python3 probe.py ENV_ROOT SPEC_JSON OUT_JSON

Runs every tool's probe argv from images/toolchains.json against the tools of the built
image environment ENV_ROOT (absolute image paths such as /opt/verikit/tla2tools.jar are
looked up under ENV_ROOT), extracts the version with the tool's pattern exactly as
harness/toolchains.py:probe does, and writes the image's /etc/verikit/toolchain.json.

Exit status 1, and no manifest, when a tool's probed version does not satisfy its
published pin: a Nix image is never built with pin_match false.

Standalone on purpose (the image build cannot import the harness); tests/test_flake.py
checks that version_matches below agrees with harness.toolchains.version_matches.
"""

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def version_matches(pin, probed):
    """Same semantics as harness.toolchains.version_matches."""
    if pin is None:
        return None
    if probed is None:
        return False
    p = re.split(r"[.\-+~ ]", pin)
    q = re.split(r"[.\-+~ ]", probed)
    return q[: len(p)] == p


def in_root(root, value):
    """An absolute image path, as a path of the built environment when it exists there."""
    if value.startswith("/") and os.path.lexists(root + value):
        return root + value
    return value


def probe_env(root, image_env, home):
    env = {"HOME": home, "TMPDIR": home}
    for item in image_env:
        key, _, value = item.partition("=")
        env[key] = ":".join(in_root(root, part) for part in value.split(":"))
    return env


def run_probe(argv, pattern, env):
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    text = (proc.stdout + "\n" + proc.stderr).strip()
    m = re.search(pattern, text, flags=re.M)
    return (m.group(1) if m else None), (text.splitlines()[0] if text else "")


def main(root, spec_path, out_path):
    spec = json.loads(Path(spec_path).read_text())
    tools, unmet = {}, []
    with tempfile.TemporaryDirectory() as home:
        env = probe_env(root, spec["env"], home)
        for name in sorted(spec["tools"]):
            t = spec["tools"][name]
            version, raw = run_probe([in_root(root, a) for a in t["probe"]], t["pattern"], env)
            match = version_matches(t["published"], version)
            tools[name] = {"version": version, "raw": raw[:200], "published": t["published"], "match": match,
                           "expected": t["expected"]}
            if match is False:
                unmet.append(f"{name}: probed {version or 'nothing'} ({raw[:120]!r}), published {t['published']}")
            elif version != t["expected"]:
                print(f"verikit: note: {name} reports {version!r}, its Nix package version is {t['expected']!r}",
                      file=sys.stderr)
    if unmet:
        print(f"verikit: image {spec['image']} would not meet the published pins:\n  " + "\n  ".join(unmet),
              file=sys.stderr)
        return 1
    manifest = {
        "toolchain": spec["toolchain"],
        "flavor": "nix",
        "fingerprint": spec["fingerprint"],
        "image": spec["image"],
        "tools": tools,
        "packages": {n: t["nix"]["version"] for n, t in spec["tools"].items()},
        # prefix pins ("exact": false) were checked at evaluation; the revision fixes the rest
        "packages_pinned": {n: t["nix"]["pinned"] if t["nix"]["exact"] else t["nix"]["version"]
                            for n, t in spec["tools"].items()},
        "nix": {n: t["nix"] for n, t in spec["tools"].items()},
        "missing": spec["missing"],
    }
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
