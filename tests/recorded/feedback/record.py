"""Record real verifier records for the feedback tests of tests/test_prompts_protocol.py.

Runs known-wrong candidates (and one right one) through the kit's own pipeline
(``harness.runner.Run``: the benchmark's jobs, the container sandbox, the executor and
the benchmark's judge; the run's canaries are left out) in the tool's image, and writes

- ``<name>.records.jsonl``: the records, exactly as the executor made them;
- ``<name>.provenance.json``: how (command, kit commit, image and tool versions, date)
  and which candidate each case is (task, sample, output).

Usage (an engine on DOCKER_HOST, the images built, the data mirror on
VERIKIT_DATA_MIRRORS)::

    python tests/recorded/feedback/record.py modelbench ntp4vc-rocq           # record
    python tests/recorded/feedback/record.py --check modelbench ntp4vc-rocq   # re-run, compare

``--check`` re-runs the wrong candidates and exits 1 when a verdict or a feedback message
(the benchmark's ``feedback`` hook) differs from the recorded records' (kept out of the
test suite: its container runs would add about half a minute).
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MODEL = "recorded-feedback"


def _bundled(name: str) -> str:
    return (ROOT / "harness/benchmarks/modelbench/data/bundled" / name).read_text(encoding="utf-8")


def cases(name: str) -> dict:
    """``{"benchmark", "mode", "cases": {case: {"task_id", "sample", "output"}}}`` of a
    recording: the candidates and what each is built to get."""
    if name == "modelbench":
        return {"benchmark": "modelbench", "mode": "original-fewshot", "cases": {
            # the kit's bundled imperfect models (their first line says what each does)
            "parse_error": {"task_id": "HumanEval/13", "sample": 1, "output": _bundled("HumanEval_13.s1.tla")},
            "invariant_violated": {"task_id": "HumanEval/13", "sample": 2, "output": _bundled("HumanEval_13.s2.tla")},
            "runtime_error": {"task_id": "HumanEval/35", "sample": 0, "output": _bundled("HumanEval_35.s0.tla")},
            "verified": {"task_id": "HumanEval/13", "sample": 0, "output": _bundled("HumanEval_13.s0.tla")},
            "empty": {"task_id": "HumanEval/35", "sample": 1, "output": ""}}}
    if name == "ntp4vc-rocq":
        task = "pearl/word_common_factor::word_common_factor_Top_powerqtvc"
        return {"benchmark": "ntp4vc", "mode": "rocq", "cases": {
            # outputs are candidates as the extraction rule writes them (no fences)
            "ill_typed": {"task_id": task, "sample": 0, "output": "Proof.\n  exact I.\nQed."},
            "new_axiom": {"task_id": task, "sample": 1,
                          "output": "Proof. Axiom cheat : forall P : Prop, P. apply cheat. Qed."},
            "empty": {"task_id": task, "sample": 2, "output": ""},
            "verified": {"task_id": task, "sample": 3, "output": "Proof. cbv zeta; lia. Qed."}}}
    raise SystemExit(f"unknown recording {name!r}: modelbench or ntp4vc-rocq")


def run_cases(name: str, tmp: Path, only: tuple[str, ...] | None = None) -> list[dict]:
    """The records of :func:`cases` ``name``'s candidates (``only``: these cases), run in
    the container sandbox through :class:`harness.runner.Run` (canaries left out), in
    case order.

    Raises:
        harness.runner.RunError: no engine or image, data missing.
    """
    from rich.console import Console

    from harness.runner import Run
    from harness.runspec import RunSettings, RunSpec
    from harness.sandbox import Limits

    spec = cases(name)
    if only is not None:
        spec["cases"] = {k: v for k, v in spec["cases"].items() if k in only}
    preds = tmp / "predictions.jsonl"
    preds.write_text("".join(json.dumps({"task_id": c["task_id"], "model": MODEL, "sample": c["sample"],
                                         "output": c["output"], "mode": spec["mode"]}) + "\n"
                             for c in spec["cases"].values()), encoding="utf-8")
    tasks = tuple(dict.fromkeys(c["task_id"] for c in spec["cases"].values()))
    run_spec = RunSpec(benchmark=spec["benchmark"], modes=(spec["mode"],), sandbox="container", parallel=2,
                       limits=Limits(wall_s=120, mem_mb=2048), task_ids=tasks, predictions=str(preds))
    settings = RunSettings(use_cache=False, progress=False, command=["tests/recorded/feedback/record.py", name])
    run = Run(run_spec, Console(stderr=True, quiet=True), settings=settings)
    with run.opened():
        jobs, _ = run.jobs()
        records = run.execute_scratch([j for j in jobs if j.candidate["model"] == MODEL])
    by = {(r["task_id"], r["candidate"]["sample"]): r for r in records}
    return [by[(c["task_id"], c["sample"])] for c in spec["cases"].values()]


def record(name: str) -> None:
    """Write ``<name>.records.jsonl`` and ``<name>.provenance.json``."""
    with tempfile.TemporaryDirectory(prefix="verikit-record-") as tmp:
        records = run_cases(name, Path(tmp))
    spec = cases(name)
    tc = records[0]["toolchain"]
    versions = {k: v.get("version") for k, v in (tc.get("tools") or {}).items()}
    tool = ("TLC " + str(versions.get("tlc"))) if name == "modelbench" else ("Coq " + str(versions.get("coq")))
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    provenance = {
        "recorded_by": "tests/recorded/feedback/record.py " + name,
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "kit_commit": commit, "tool": tool, "toolchain": tc.get("name"), "versions": versions,
        "image": tc.get("image"), "image_id": tc.get("image_digest"),
        "benchmark": spec["benchmark"], "mode": spec["mode"],
        "cases": {case: {**c, "verdict": r["verdict"]} for (case, c), r in zip(spec["cases"].items(), records)},
    }
    (HERE / f"{name}.records.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records),
                                                encoding="utf-8")
    (HERE / f"{name}.provenance.json").write_text(json.dumps(provenance, indent=1, sort_keys=True) + "\n",
                                                  encoding="utf-8")
    print(f"{name}: " + ", ".join(f"{k} {v['verdict']}" for k, v in provenance["cases"].items()))


def check(name: str) -> list[str]:
    """The differences between a re-run of the recording's wrong candidates and the
    recorded records (verdicts and feedback messages); [] when there are none."""
    from harness import registry

    spec = cases(name)
    wrong = tuple(case for case in spec["cases"] if case not in ("verified", "empty"))
    with tempfile.TemporaryDirectory(prefix="verikit-record-") as tmp:
        live = run_cases(name, Path(tmp), only=wrong)
    recorded = {(r["task_id"], r["candidate"]["sample"]): r for r in
                (json.loads(x) for x in (HERE / f"{name}.records.jsonl").read_text(encoding="utf-8").splitlines())}
    bench = registry.benchmark(spec["benchmark"])
    problems = []
    for case, now in zip(wrong, live):
        then = recorded[(now["task_id"], now["candidate"]["sample"])]
        if now["verdict"] != then["verdict"]:
            problems.append(f"{name} {case}: verdict {now['verdict']}, recorded {then['verdict']}")
        elif bench.feedback(now, spec["mode"]) != bench.feedback(then, spec["mode"]):
            problems.append(f"{name} {case}: the feedback message differs from the recorded record's")
    return problems


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    args = sys.argv[1:]
    checking = "--check" in args
    names = [a for a in args if a != "--check"] or ["modelbench", "ntp4vc-rocq"]
    found = []
    for arg in names:
        if checking:
            found += check(arg)
            print(f"{arg}: checked")
        else:
            record(arg)
    for line in found:
        print(line, file=sys.stderr)
    sys.exit(1 if found else 0)
