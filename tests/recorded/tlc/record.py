"""Record real TLC runs for tests/test_tlc.py (run by hand; needs the tlaplus image).

    DOCKER_HOST=unix://... python3 tests/recorded/tlc/record.py

For each case below: post-process the module as Model-Bench does, write the Figure 13
config, run the TLC command of harness.verifiers.tlc in the tlaplus image through
ContainerSandbox, and store argv, exit code, stdout, stderr and the collected state graph in
tests/recorded/tlc/<case>.json with the probed versions and the image ID (provenance).

The invariant probe (:meth:`TLC.followup`): for each case of ``PROBES``, the
verified run and then the follow-up run TLC.followup asks for, as the executor makes it;
stored in probe_<case>.json with the follow-up's files (``followup``, as
harness.model.followup_files leaves them, decoded).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from harness import toolchains  # noqa: E402
from harness.model import Limits, followup_files  # noqa: E402
from harness.registry import sandbox as get_sandbox  # noqa: E402
from harness.benchmarks.modelbench.postprocess import config_text, postprocess  # noqa: E402
from harness.verifiers.tlc import DUMP_FILE, TLC  # noqa: E402

DATA = ROOT / "harness" / "benchmarks" / "modelbench" / "data"
CASES = {
    "success": (DATA / "oracles" / "HumanEval_13.tla", {"MaxValue": "3"}),
    "parse_error": (DATA / "bundled" / "HumanEval_13.s1.tla", {"MaxValue": "3"}),
    "semantic_error": (DATA / "bundled" / "HumanEval_35.s2.tla", {"MaxLen": "2", "MaxValue": "1"}),
    "config_error": (DATA / "bundled" / "HumanEval_48.s2.tla", {"MaxLen": "2", "Alphabet": "{97, 98}"}),
    "runtime_error": (DATA / "bundled" / "HumanEval_35.s0.tla", {"MaxLen": "2", "MaxValue": "1"}),
    "invariant_violated": (DATA / "bundled" / "HumanEval_52.s2.tla", {"MaxLen": "2", "MaxValue": "1"}),
}

_ORACLE_13 = (DATA / "oracles" / "HumanEval_13.tla").read_text()
#: probe cases: name -> (module text, constants); the expected outcome is the name's start
PROBES = {
    "falsified": (_ORACLE_13, {"MaxValue": "3"}),
    "held": (_ORACLE_13.replace('Assertion == pc = "done" => result = Gcd(a0, b0)',
                               'Assertion == pc = "done" => result = result'), {"MaxValue": "3"}),
    "error": ((DATA / "bundled" / "HumanEval_13.s0.tla").read_text(), {"MaxValue": "3"}),  # compares NONE with >=
}


def _job_files(text: str, consts: dict, deadlock_in_cfg: bool) -> tuple[str, dict]:
    """``(module, {module.tla, module.cfg})`` of a model, post-processed as Model-Bench does."""
    p = postprocess(text)
    return p.module, {f"{p.module}.tla": p.text,
                      f"{p.module}.cfg": config_text({c: consts[c] for c in p.constants}, p.model_values,
                                                     deadlock_in_cfg=deadlock_in_cfg)}


def record_probes(sb, probed, v: TLC) -> None:
    base = dict(v.options(probed), sany_view=False, probe={"invariant": "Assertion"})
    for case, (text, consts) in PROBES.items():
        module, files = _job_files(text, consts, base["deadlock_in_cfg"])
        opts = dict(base, module=module)
        argv, env, collect = v.command(opts)
        res = sb.run(argv, files=files, env=env, collect=collect, limits=Limits(wall_s=120))
        fu_files, fu_argv, fu_collect = v.followup(files, res, opts)
        second = sb.run(fu_argv, files={**files, **fu_files}, env=env, collect=fu_collect, limits=Limits(wall_s=120))
        followup = {k: b.decode() for k, b in followup_files(fu_files, second).items()}
        out = {"case": f"probe_{case}", "files": files, "options": opts, "argv": argv,
               "returncode": res.returncode, "stdout": res.stdout, "stderr": res.stderr,
               "dump": res.files.get(DUMP_FILE, b"").decode() or None, "followup_argv": fu_argv,
               "followup": followup,
               "provenance": {"recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                              "image": sb.image, "image_id": sb.image_digest, "versions": probed.versions,
                              "recorder": "tests/recorded/tlc/record.py"}}
        (ROOT / "tests" / "recorded" / "tlc" / f"probe_{case}.json").write_text(json.dumps(out, indent=1) + "\n")
        res.files.update(followup_files(fu_files, second))
        print("probe", case, v.parse(res, opts).extra.get("probe"))


def main() -> None:
    sb = get_sandbox("container", toolchain="tlaplus")
    try:
        probed = toolchains.probe("tlaplus", sb)
        v = TLC()
        base = dict(v.options(probed), sany_view=False)  # TLC alone: SANY's view is the run families' (tlc-integrity)
        for case, (path, consts) in CASES.items():
            module, files = _job_files(path.read_text(), consts, base["deadlock_in_cfg"])
            opts = dict(base, module=module)
            argv, env, collect = v.command(opts)
            res = sb.run(argv, files=files, env=env, collect=collect, limits=Limits(wall_s=120))
            out = {"case": case, "source": str(path.relative_to(ROOT)), "files": files, "options": opts, "argv": argv,
                   "returncode": res.returncode, "stdout": res.stdout, "stderr": res.stderr,
                   "dump": res.files.get(DUMP_FILE, b"").decode() or None,
                   "provenance": {"recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                                  "image": sb.image, "image_id": sb.image_digest, "versions": probed.versions,
                                  "recorder": "tests/recorded/tlc/record.py"}}
            (ROOT / "tests" / "recorded" / "tlc" / f"{case}.json").write_text(json.dumps(out, indent=1) + "\n")
            print(case, res.returncode, v.parse(res, opts).verdict)
        record_probes(sb, probed, v)
    finally:
        sb.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["probes"]:  # the probe cases only
        _sb = get_sandbox("container", toolchain="tlaplus")
        try:
            record_probes(_sb, toolchains.probe("tlaplus", _sb), TLC())
        finally:
            _sb.close()
    else:
        main()
