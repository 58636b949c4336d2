"""``verikit run casp --dataset DIR`` end to end on a directory of annotated C files the
project writes itself (tests/test_own_datasets.py): the kit's gold verdicts and goal totals
equal those of bare ``frama-c -wp -wp-rte`` with the kit's flags on the same files, and
run.json names the directory and every file's sha256 (never a dataset entry's name). Also the
candidate modes on such a file (the rest of the file stays around the candidate) and
``verikit datasets pin``.

Live: the gold run (fresh, ``--no-cache``) and the bare ``frama-c`` runs it is compared
with, both with the real Frama-C of this machine. Recorded: the code-from-spec run (two
candidates and the mode's canaries on the kit's own pairs; its subject is the file around
the candidate, not a fresh tool run) is judged on the real Frama-C's recorded outputs,
replayed through the kit's own executor, parser and judge (``framac_recorded`` with
``pipeline_sandbox``: ``tests/recorded/runs/own-dataset-run/``; refresh it with ``python
scripts/record.py own-dataset-run``)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml
from recording import pipeline_sandbox

from harness.cli import main
from harness.results import load_records
from test_own_datasets import ABS, CLAMP, MAX2, SUM


FILES = {"max2.c": MAX2, "abs.c": ABS, "arrays/sum.c": SUM, "clamp.c": CLAMP}
_GOALS = re.compile(r"\[wp\] Proved goals:\s+(\d+)\s*/\s*(\d+)")


@pytest.fixture
def own_dir(tmp_path):
    root = tmp_path / "mine"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _bare_frama_c(path, argv_template: list[str], work) -> tuple[int, int]:
    """(proved, total) of bare frama-c with the kit's own flags on ``path``: the same argv
    the kit recorded, with the file name replaced, and a why3.conf from ``why3 config
    detect`` as the kit makes one; run directly, not through the kit."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(work), "WHY3CONFIG": str(work / "why3.conf")}
    if not (work / "why3.conf").exists():
        subprocess.run(["why3", "config", "detect"], env=env, capture_output=True, timeout=120, check=True)
    argv = [str(path) if a == "candidate.c" else a for a in argv_template]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=work, env=env).stdout
    m = _GOALS.search(out)
    assert m, out[-2000:]
    return int(m.group(1)), int(m.group(2))


@pytest.mark.realtool
@pytest.mark.skipif(shutil.which("frama-c") is None, reason="needs frama-c on the host")
def test_gold_run_equals_bare_frama_c(own_dir, tmp_path):
    out = tmp_path / "run"
    code = main(["run", "casp", "--dataset", str(own_dir), "--mode", "gold", "--sandbox", "host", "-j", "2",
                 "--out", str(out), "--no-cache"])
    assert code == 0
    assert main(["validate", str(out)]) == 0
    records = {r["task_id"]: r for r in load_records(out / "records.jsonl")}
    assert set(records) == {"max2", "abs", "arrays/sum", "clamp"}
    for task_id, rec in records.items():
        assert rec["verdict"] == "verified", (task_id, rec["reason"])
        # the kit verified the whole file as it is (callers and main included)
        argv = rec["verifier"]["argv"]
        # the kit's driver execs frama-c with the rest of the arguments (plus its view script)
        assert argv[:4] == ["sh", "verikit_framac_job.sh", "-wp", "-wp-rte"] and argv[-1] == "candidate.c"
        proved, total = _bare_frama_c(own_dir / f"{task_id}.c", ["frama-c", *argv[2:]], tmp_path)
        assert (rec["goals"]["proved"], rec["goals"]["total"]) == (proved, total), task_id
        assert total > 0
    manifest = json.loads((out / "run.json").read_text())
    ds = manifest["dataset"]
    assert ds["name"] == str(own_dir) and ds["source"]["kind"] == "local"
    assert ds["source"]["path"] == str(own_dir) and ds["source"]["revision"] is None
    assert set(ds["files"]) == set(FILES)
    import hashlib
    assert all(ds["files"][rel] == hashlib.sha256(text.encode()).hexdigest() for rel, text in FILES.items())
    report = json.loads((out / "report.json").read_text())
    assert report["comparison"] == []
    assert any("no published verdicts" in n for n in report["notes"])


@pytest.mark.recorded
def test_code_from_spec_keeps_the_rest_of_the_file(own_dir, tmp_path, framac_recorded, isolated_cache):
    """clamp.c: the candidate writes percent(); the helper before it and main() after it
    stay, so main's `assert p == 100` is proved only with a correct candidate (judged on
    the recorded real Frama-C outputs)."""
    preds = tmp_path / "preds.jsonl"
    good = "int percent(int v) {\n  return clamp(v, 0, 100);\n}\n"
    wrong = "int percent(int v) {\n  return 0;\n}\n"
    preds.write_text("".join(json.dumps({"task_id": "clamp", "model": "m", "sample": i, "output": o}) + "\n"
                             for i, o in enumerate((good, wrong))))
    out = tmp_path / "run"
    with pipeline_sandbox(framac_recorded.sandbox):
        code = main(["run", "casp", "--dataset", str(own_dir), "--mode", "code-from-spec", "--predictions",
                     str(preds), "--sandbox", "host", "-j", "2", "--out", str(out), "--cache-dir",
                     str(tmp_path / "cache"), "--timeout", "300"])
    by_sample = {r["candidate"]["sample"]: r for r in load_records(out / "records.jsonl")
                 if r["candidate"]["model"] == "m"}
    assert by_sample[0]["verdict"] == "verified", by_sample[0]["reason"]
    assert by_sample[1]["verdict"] == "failed", by_sample[1]["reason"]
    assert code == 0  # the canaries got their verdicts, on the kit's own canary pair
    canaries = {r["candidate"]["model"]: r for r in load_records(out / "records.jsonl")
                if r["candidate"]["model"].startswith("canary:")}
    assert all(r["task_id"].startswith("verikit-canary/") for r in canaries.values())  # the kit's own tasks
    assert canaries["canary:gold-code"]["task_id"] == "verikit-canary/twice"
    assert canaries["canary:gold-code"]["verdict"] == "verified"


def test_datasets_pin_prints_a_loadable_entry(own_dir, capsys):
    assert main(["datasets", "pin", str(own_dir)]) == 0
    entry = yaml.safe_load(capsys.readouterr().out)
    listed = {f["path"]: f for f in entry["files"]}
    assert set(listed) == set(FILES)
    assert listed["max2.c"]["size"] == len(MAX2.encode())


def test_unknown_dataset_path_is_a_clear_error(tmp_path, capsys):
    assert main(["run", "casp", "--dataset", str(tmp_path / "nope"), "--sandbox", "host", "--out",
                 str(tmp_path / "o")]) == 2
    assert "neither a casp dataset" in capsys.readouterr().err
