"""Record real TLC runs for tests/test_tlc.py (run by hand; needs the tlaplus image).

    DOCKER_HOST=unix://... python3 tests/recorded/tlc/record.py

For each case below: post-process the module as Model-Bench does, write the Figure 13
config, run the TLC command of harness.verifiers.tlc in the tlaplus image through
ContainerSandbox, and store argv, exit code, stdout, stderr and the collected dump in
tests/recorded/tlc/<case>.json with the probed versions and the image ID (provenance).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from harness import toolchains  # noqa: E402
from harness.model import Limits  # noqa: E402
from harness.registry import sandbox as get_sandbox  # noqa: E402
from harness.benchmarks.modelbench.postprocess import config_text, postprocess  # noqa: E402
from harness.verifiers.tlc import TLC  # noqa: E402

DATA = ROOT / "harness" / "benchmarks" / "modelbench" / "data"
CASES = {
    "success": (DATA / "oracles" / "HumanEval_13.tla", {"MaxValue": "3"}),
    "parse_error": (DATA / "bundled" / "HumanEval_13.s1.tla", {"MaxValue": "3"}),
    "semantic_error": (DATA / "bundled" / "HumanEval_35.s2.tla", {"MaxLen": "2", "MaxValue": "1"}),
    "config_error": (DATA / "bundled" / "HumanEval_48.s2.tla", {"MaxLen": "2", "Alphabet": "{97, 98}"}),
    "runtime_error": (DATA / "bundled" / "HumanEval_35.s0.tla", {"MaxLen": "2", "MaxValue": "1"}),
    "invariant_violated": (DATA / "bundled" / "HumanEval_52.s2.tla", {"MaxLen": "2", "MaxValue": "1"}),
}


def main() -> None:
    sb = get_sandbox("container", toolchain="tlaplus")
    try:
        probed = toolchains.probe("tlaplus", sb, flavor="debian")
        v = TLC()
        base = v.options(probed)
        for case, (path, consts) in CASES.items():
            p = postprocess(path.read_text())
            files = {f"{p.module}.tla": p.text,
                     f"{p.module}.cfg": config_text({c: consts[c] for c in p.constants}, p.model_values,
                                                    deadlock_in_cfg=base["deadlock_in_cfg"])}
            opts = dict(base, module=p.module)
            argv, env, collect = v.command(opts)
            res = sb.run(argv, files=files, env=env, collect=collect, limits=Limits(wall_s=120))
            out = {"case": case, "source": str(path.relative_to(ROOT)), "files": files, "options": opts, "argv": argv,
                   "returncode": res.returncode, "stdout": res.stdout, "stderr": res.stderr,
                   "dump": res.files.get("states.dump", b"").decode() or None,
                   "provenance": {"recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                  "image": sb.image, "image_id": sb.image_digest, "versions": probed.versions,
                                  "recorder": "tests/recorded/tlc/record.py"}}
            (ROOT / "tests" / "recorded" / "tlc" / f"{case}.json").write_text(json.dumps(out, indent=1) + "\n")
            print(case, res.returncode, v.parse(res, opts).verdict)
    finally:
        sb.close()


if __name__ == "__main__":
    main()
