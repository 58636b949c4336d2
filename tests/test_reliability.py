"""Reliability: arguments checked at parse time, no NaN or infinity in written
JSON, limits that cannot be meaningless; the result cache is never an authority; verdicts
re-derivable from the stored tool output. The real-tool runs whose subject is not the task
run use the session's task runs (``shared_task_runs``: 01_57's task-soundness run is made
once per session); ``validate --recheck`` keeps its own fresh runs."""

from __future__ import annotations

import math

import pytest

from harness.cli import main
from harness.cli.common import MIN_MEMORY_MIB
from harness.model import Limits, canonical_json
from harness.results import write_json_atomic


@pytest.mark.parametrize("args, named", [
    (["-j", "0"], "'0': must be at least 1"),
    (["-j", "-1"], "'-1': must be at least 1"),
    (["-j", "two"], "'two' is not an integer"),
    (["--timeout", "0"], "'0': must be a finite number of seconds above 0"),
    (["--timeout", "-5"], "'-5': must be a finite number of seconds above 0"),
    (["--timeout", "nan"], "'nan': must be a finite number of seconds above 0"),
    (["--timeout", "inf"], "'inf': must be a finite number of seconds above 0"),
    (["--memory", "1"], f"'1': must be at least {MIN_MEMORY_MIB}"),
    (["--sample", "0"], "'0': must be at least 1"),
])
def test_bad_limits_exit_2_naming_the_value(args, named, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["run", "casp", "--sandbox", "host", "--out", str(tmp_path / "out"), *args])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # refused before anything ran or was written


def test_reproduce_checks_its_limits_too(capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "casp", "-j", "0", "--out", str(tmp_path / "out")])
    assert exc.value.code == 2 and "must be at least 1" in capsys.readouterr().err


@pytest.mark.parametrize("field, value", [("wall_s", math.nan), ("wall_s", math.inf), ("wall_s", 0),
                                          ("mem_mb", -1), ("cpus", 0), ("output_bytes", 0)])
def test_limits_refuse_meaningless_values(field, value):
    with pytest.raises(ValueError, match=f"Limits.{field}"):
        Limits(**{field: value})


def test_no_nan_or_infinity_in_written_json(tmp_path):
    with pytest.raises(ValueError):
        canonical_json({"wall_s": math.nan})
    with pytest.raises(ValueError):
        write_json_atomic(tmp_path / "x.json", {"t": math.inf})
    assert not (tmp_path / "x.json").exists()


# --- the result cache is a speed-up, never an authority --------------------------------------


def _wrong_code_job(casp_tasks, framac_host):
    from harness.benchmarks import Candidate, casp

    t = casp_tasks["01_57"]
    cand = Candidate(task_id="01_57", model="m", sample=0, output="int divmult(int a, int b) { return 1; }",
                     origin="test")
    return casp.build_job(t, cand, "code-from-spec", framac_host.options(smoke=True, wp_timeout_s=5),
                          {"name": "casp-sample10", "revision": "r"})


def _execute(framac_host, job, tmp_path, cache, name):
    from harness.benchmarks import casp
    from harness.executor import Executor
    from harness.results import RecordLog

    ex = Executor(framac_host.framac, framac_host.sandbox, framac_host.probed, shared_files=framac_host.shared,
                  limits=Limits(wall_s=120), cache=cache)
    log = RecordLog(tmp_path / name)
    try:
        (rec,) = ex.run([job], log, casp.BENCHMARK.judge)
    finally:
        log.close()
    return rec, ex.stats


@pytest.mark.realtool
def test_tampered_cache_entry_is_ignored_and_the_job_reruns(casp_tasks, framac_host, shared_task_runs, tmp_path):
    """The job's own verification runs again (``ran``); 01_57's task-soundness run, which is
    not the subject, comes from the session's task runs (``shared_task_runs``)."""
    import json

    from harness.results import ResultCache

    cache = ResultCache(tmp_path / "cache")
    job = _wrong_code_job(casp_tasks, framac_host)
    first, stats = _execute(framac_host, job, tmp_path, cache, "a.jsonl")
    assert first["verdict"] == "failed" and stats.ran == 1
    (entry,) = (tmp_path / "cache").rglob("*.json")
    data = json.loads(entry.read_text())
    data["verdict"] = "verified"  # the goals still say 1/2: the entry contradicts itself
    entry.write_text(json.dumps(data))
    cache = ResultCache(tmp_path / "cache")
    again, stats = _execute(framac_host, job, tmp_path, cache, "b.jsonl")
    assert again["verdict"] == "failed" and stats.ran == 1 and stats.cached == 0
    assert any("verdict verified but" in p for p in cache.problems), cache.problems
    entry.write_text("{not json")  # a torn entry: ignored too
    cache = ResultCache(tmp_path / "cache")
    assert cache.get(first["verification_key"]) is None and "unreadable" in cache.problems[0]


@pytest.mark.realtool
def test_unwritable_cache_loses_nothing(casp_tasks, framac_host, shared_task_runs, tmp_path):
    from harness.results import ResultCache, load_records

    (tmp_path / "cache").write_text("a file where the cache directory should be")
    cache = ResultCache(tmp_path / "cache")
    rec, stats = _execute(framac_host, _wrong_code_job(casp_tasks, framac_host), tmp_path, cache, "r.jsonl")
    assert rec["verdict"] == "failed"
    assert [r["verdict"] for r in load_records(tmp_path / "r.jsonl")] == ["failed"]  # the record was kept
    assert cache.problems and "not written" in cache.problems[0]


# --- bounded, exact reading of predictions ---------------------------------------------------


def _preds(tmp_path, text: bytes):
    from harness import predictions

    f = tmp_path / "p.jsonl"
    f.write_bytes(text)
    return predictions.load(f, {"01_57"}, keep_going=True)


def test_escaped_output_within_the_character_limit_is_accepted(tmp_path):
    import json

    out = "\u00e9" * 800_000  # 800,000 characters, 4.8 MB once \u-escaped
    line = json.dumps({"task_id": "01_57", "model": "m", "sample": 0, "output": out}).encode() + b"\n"
    assert len(line) > 4_800_000
    p = _preds(tmp_path, line)
    assert p.errors == [] and len(p.candidates[0].output) == 800_000


def test_over_long_line_is_refused_in_bytes_without_being_held(tmp_path):
    from harness import predictions

    big = b'{"task_id": "01_57", "output": "' + b"a" * (predictions.MAX_LINE_BYTES + 10) + b'"}'  # no newline
    p = _preds(tmp_path, b'{"task_id": "01_57", "model": "m", "sample": 0, "output": "x"}\n' + big)
    assert len(p.candidates) == 1
    (err,) = p.errors
    assert err.line == 2 and "bytes; a line may have at most" in err.error and f"{len(big):,} bytes" in err.error


def test_duplicate_keys_are_refused_with_file_and_line(tmp_path):
    p = _preds(tmp_path, b'{"task_id": "01_57", "model": "m", "sample": 0, "output": "a", "output": "b"}\n'
                         b'{"task_id": "01_57", "model": "m", "sample": 1, "output": "ok"}\n')
    (err,) = p.errors
    assert err.line == 1 and "duplicate key 'output'" in err.error
    assert [c.sample for c in p.candidates] == [1]


def test_directory_as_predictions_exits_2(tmp_path, capsys):
    (tmp_path / "preds").mkdir()
    code = main(["run", "casp", "--mode", "code-from-spec", "--predictions", str(tmp_path / "preds"),
                 "--sandbox", "host", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "is a directory" in err and "Traceback" not in err


# --- one run per directory; a bad --out is an error, not a traceback --------------------------


@pytest.mark.slow
def test_second_run_on_a_locked_directory_exits_2_naming_the_pid(tmp_path, capsys):
    import os

    from harness.results import run_dir_lock

    with run_dir_lock(tmp_path / "out"):
        code = main(["run", "casp", "--mode", "gold", "--task", "01_57", "--sandbox", "host",
                     "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and f"in use by another verikit run (PID {os.getpid()})" in err
    assert not (tmp_path / "out" / "records.jsonl").exists()
    with run_dir_lock(tmp_path / "out"):  # released: it can be taken again
        pass


@pytest.mark.slow
def test_out_that_is_a_file_exits_2(tmp_path, capsys):
    (tmp_path / "out").write_text("not a directory")
    code = main(["run", "casp", "--mode", "gold", "--task", "01_57", "--sandbox", "host", "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and "cannot be used as a run directory" in err and "Traceback" not in err


def test_written_files_respect_the_umask(tmp_path):
    import os

    from harness.results import write_text_atomic

    old = os.umask(0o027)
    try:
        write_text_atomic(tmp_path / "a.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "a.json").stat().st_mode & 0o777 == 0o640


# --- records.jsonl: a bad line is set aside, never silently rewritten -------------------------


def _reference_records() -> list[dict]:
    import json
    from pathlib import Path

    ref = Path(__file__).resolve().parents[1] / "results" / "reproduced" / "casp" / "records.jsonl"
    return [json.loads(line) for line in ref.read_text().splitlines()]


def _a_record():
    return _reference_records()[0]


@pytest.mark.parametrize("bad", [b'{"torn": ', b"\xff\xfe not utf-8", b'{"valid json": "not a record"}'])
def test_bad_record_lines_are_set_aside_and_validate_names_them(tmp_path, bad):
    import json

    from harness.results import RecordLog, validate_run_dir

    good = json.dumps(_a_record()).encode()
    f = tmp_path / "records.jsonl"
    f.write_bytes(good + b"\n" + bad + b"\n")
    problems = validate_run_dir(tmp_path)
    assert any(p.startswith(f"{f}:2: ") for p in problems), problems
    log = RecordLog(f)
    log.close()
    assert len(log.records) == 1 and log.set_aside and log.set_aside[0].startswith(f"{f}:2: ")
    assert (tmp_path / "records.rejected.jsonl").read_bytes() == bad + b"\n"  # kept byte for byte
    assert f.read_bytes() == good + b"\n"


def test_validate_finds_a_verdict_its_goals_contradict(tmp_path):
    import json

    from harness.results import validate_run_dir

    rec = next(r for r in _reference_records()
               if r["verdict"] == "failed" and r["goals"] and r["goals"]["proved"] < r["goals"]["total"])
    rec["verdict"] = "verified"
    rec["verifier"]["all_goals"] = True  # Frama-C says so in every record made since the flag exists
    (tmp_path / "records.jsonl").write_text(json.dumps(rec) + "\n")
    assert any("verdict verified but" in p for p in validate_run_dir(tmp_path))


def test_validate_given_a_file_exits_2(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert main(["validate", str(tmp_path / "f")]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_cache_verify_prune_clear(tmp_path, capsys):
    import json

    from harness.results import ResultCache

    cache = ResultCache(tmp_path / "c")
    recs = [r for r in _reference_records() if r["verdict"] != "infra_error"][:3]
    for r in recs:
        cache.put(r["verification_key"], r)
    bad = dict(recs[0], verdict="verified", goals={"proved": 1, "total": 2, "failed": 1, "timeout": 0, "unknown": 0})
    cache._path(bad["verification_key"]).write_text(json.dumps(bad))
    assert main(["cache", "verify", "--cache-dir", str(tmp_path / "c")]) == 1
    assert "2 good entries, 1 a run would ignore" in capsys.readouterr().err
    assert main(["cache", "prune", "--cache-dir", str(tmp_path / "c")]) == 0
    assert len(cache.keys()) == 2
    assert main(["cache", "verify", "--cache-dir", str(tmp_path / "c")]) == 0
    assert main(["cache", "clear", "--cache-dir", str(tmp_path / "c")]) == 0
    assert cache.keys() == []


# --- validate: the report must follow from the records ----------------------------------------


def _copy_reference(tmp_path):
    import shutil
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "results" / "reproduced" / "casp"
    dst = tmp_path / "run"
    dst.mkdir()
    for name in ("run.json", "records.jsonl", "report.json", "SHA256SUMS"):
        shutil.copy(src / name, dst / name)
    if (src / "outputs").is_dir():  # the tools' outputs its records name (validate re-judges from them)
        shutil.copytree(src / "outputs", dst / "outputs")
    return dst


def _edit(path, change):
    import json

    if path.suffix == ".jsonl":
        recs = [json.loads(line) for line in path.read_text().splitlines()]
        change(recs)
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    else:
        doc = json.loads(path.read_text())
        change(doc)
        path.write_text(json.dumps(doc))


def _flip_bundled_verdict(recs):
    r = next(r for r in recs if r["candidate"]["origin"].startswith("bundled:") and r["verdict"] == "invalid")
    r["verdict"], r["goals"] = "verified", None


def _rename_a_model(recs):
    next(r for r in recs if r["candidate"]["origin"].startswith("bundled:"))["candidate"]["model"] = "openai/gpt-9"


def _edit_verified_count(report):
    report["metrics"]["gold"]["overall"]["verified"] = 7


def _flip_canary_in_report(report):
    next(c for c in report["canaries"]["results"] if c["verdict"] == "rejected")["verdict"] = "verified"


@pytest.mark.slow
@pytest.mark.parametrize("name, change, says", [
    ("records.jsonl", _flip_bundled_verdict, "differ from those recomputed from records.jsonl"),
    ("report.json", _edit_verified_count, "metrics of gold differ"),
    ("records.jsonl", _rename_a_model, "its key is not the one its verification key, task id and candidate give"),
    ("report.json", _flip_canary_in_report, "canary"),
])
def test_validate_sees_a_tampered_run(tmp_path, capsys, name, change, says):
    run = _copy_reference(tmp_path)
    assert main(["validate", str(run)]) == 0
    _edit(run / name, change)
    assert main(["validate", str(run)]) == 1
    err = capsys.readouterr().err
    assert says in err
    assert f"{run / name}: its sha256 differs from SHA256SUMS" in err


# --- cache keys cover the code that decides a verdict and the tool binaries -------------------


def test_verdict_code_hash_covers_judge_parser_drivers_and_grammar():
    from harness import registry

    casp_files = {p.name for p in registry._sources(registry.benchmark("casp"))}
    assert {"jobs.py", "integrity.py", "cfront.py", "sources.py"} <= casp_files
    framac_files = {p.name for p in registry._sources(registry.verifier("framac"))}
    assert {"__init__.py", "output.py", "framac_job.sh", "framac_view.ml"} <= framac_files
    assert any(p.suffix == ".lark" for p in registry._sources(registry.benchmark("dafny-intent")))  # the grammar
    a = registry.verdict_code_sha256(registry.benchmark("casp"), registry.verifier("framac"))
    b = registry.verdict_code_sha256(registry.benchmark("dafny-intent"), registry.verifier("dafny"))
    assert len(a) == 64 and a != b


def test_host_fingerprint_holds_the_binaries_hashes(tmp_path, monkeypatch):
    """The same version string from another binary is another toolchain."""
    import os
    import stat

    from harness import toolchains

    fake = tmp_path / "bin"
    fake.mkdir()
    tool = fake / "frama-c"
    tool.write_text("#!/bin/sh\necho 25.0-beta (Manganese)\n")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    first = toolchains._binary_sha256("frama-c")
    tool.write_text("#!/bin/sh\necho 25.0-beta (Manganese)  \n")  # rebuilt: same version, other bytes
    assert toolchains._binary_sha256("frama-c") != first


def test_a_run_directory_without_its_sums_is_incomplete(tmp_path):
    from harness.results import validate_run_dir

    run = _copy_reference(tmp_path)
    assert validate_run_dir(run) == []
    (run / "SHA256SUMS").unlink()
    assert any("SHA256SUMS: missing" in p for p in validate_run_dir(run))


@pytest.mark.realtool
def test_validate_recheck_reruns_records_with_the_real_verifier(casp_tasks, framac_host, tmp_path, capsys):
    """``validate --recheck N`` re-plans the run from its own spec and re-runs N
    records without the cache: an edit that also fixed the report and the sums is found."""
    import json

    from harness.results import load_records, write_sums

    out = tmp_path / "out"
    assert main(["run", "casp", "--mode", "gold", "--task", "04_140", "--sandbox", "host", "--out", str(out),
                 "--cache-dir", str(tmp_path / "cache"), "--data-dir", str(tmp_path / "data")]) == 0
    assert main(["validate", str(out), "--recheck", "1"]) == 0
    assert "rechecked 1 record(s) with the real verifier: 0 difference(s)" in capsys.readouterr().err
    (rec,) = load_records(out / "records.jsonl")
    rec["goals"]["proved"] -= 1
    rec["verdict"] = "failed"
    (out / "records.jsonl").write_text(json.dumps(rec) + "\n")
    write_sums(out)  # a careful forger also fixes the sums
    assert main(["validate", str(out), "--recheck", "1"]) == 1
    err = capsys.readouterr().err
    assert "recheck: gold 04_140 gold: recorded failed" in err and "re-run verified" in err
    rec.update(task_id="99_999")  # a task the dataset does not have (key fixed up too)
    from harness.results import record_key

    rec["key"] = record_key(rec)
    (out / "records.jsonl").write_text(json.dumps(rec) + "\n")
    write_sums(out)
    assert main(["validate", str(out), "--recheck", "1"]) == 1
    assert "99_999 gold: the run's spec does not make this job" in capsys.readouterr().err


def test_full_disk_is_one_message_not_a_traceback(monkeypatch, capsys, tmp_path):
    import errno

    from harness.cli import run as cli_run

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "out" / "records.jsonl"))

    monkeypatch.setattr(cli_run, "_run", full)  # the handler of 'run' (harness/cli/run.py)
    assert main(["run", "casp", "--sandbox", "host", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"cannot write {tmp_path / 'out' / 'records.jsonl'}: No space left on device" in err
    assert "re-run the same command to resume" in err and "Traceback" not in err


# --- verdicts re-derivable from the tool's own output ------------------------------------------


@pytest.fixture(scope="module")
def judged_run(casp_tasks, tmp_path_factory, shared_cache, framac_host):
    """A real CASP code-from-spec run on 01_57 (host Frama-C): one wrong candidate of
    model m (``failed``) and the canaries (verified, failed, rejected), through the
    session's shared result cache (the canaries may come from it, re-derived; test_casp's
    canary run has the same ones; so may 01_57's task run)."""
    import json

    base = tmp_path_factory.mktemp("judged")
    preds = base / "predictions.jsonl"
    preds.write_text(json.dumps({"task_id": "01_57", "model": "m", "sample": 0,
                                 "output": "int divmult(int a, int b) { return 1; }"}) + "\n")
    out = base / "out"
    assert main(["run", "casp", "--mode", "code-from-spec", "--task", "01_57", "--predictions", str(preds),
                 "--sandbox", "host", "--out", str(out), "--cache-dir", str(shared_cache),
                 "--data-dir", str(base / "data")]) == 0
    return out


def _forge(run, verdict_from: str, verdict_to: str):
    """Edit one record's verdict, then fix up everything a careful forger can: the goal
    counts (made to agree), report.json's metrics and canary list, and SHA256SUMS."""
    import json

    from harness.metrics import group_metrics
    from harness.results import load_records, write_sums

    recs = load_records(run / "records.jsonl")
    r = next(r for r in recs if r["verdict"] == verdict_from and r["goals"])
    r["verdict"] = verdict_to
    if verdict_to == "verified":
        r["goals"]["proved"] = r["goals"]["total"]
    (run / "records.jsonl").write_text("".join(json.dumps(x) + "\n" for x in recs))
    report = json.loads((run / "report.json").read_text())
    report["metrics"] = json.loads(json.dumps(group_metrics(recs, seed=report["bootstrap_seed"])))
    for c in report["canaries"]["results"]:
        if c["model"] == r["candidate"]["model"]:
            c["verdict"], c["ok"] = verdict_to, verdict_to in c["expected"]
    (run / "report.json").write_text(json.dumps(report))
    write_sums(run)
    return r


@pytest.mark.realtool
@pytest.mark.parametrize("verdict_from, verdict_to", [("verified", "failed"), ("failed", "verified")])
def test_validate_rejudges_every_record_from_its_tool_output(judged_run, tmp_path, capsys, verdict_from, verdict_to):
    """``validate`` re-derives each verdict from the stored tool output with the current
    parser and judge (no tool runs): an edit in either direction with records, report
    and sums made consistent is found; the untouched run is valid."""
    import shutil

    import re

    from harness.results import load_records

    n = len(load_records(judged_run / "records.jsonl"))
    assert main(["validate", str(judged_run)]) == 0
    assert re.search(rf"re-judged {n} record\(s\) from their stored tool output \(no tool run\): 0 difference",
                     capsys.readouterr().err)
    run = tmp_path / "run"
    shutil.copytree(judged_run, run)
    r = _forge(run, verdict_from, verdict_to)
    assert main(["validate", str(run)]) == 1
    err = capsys.readouterr().err
    assert f"re-judge: code-from-spec {r['task_id']} {r['candidate']['model']} #0: recorded {verdict_to}" in err
    assert f"its tool output gives {verdict_from}" in err
    assert "SHA256SUMS" not in err and "metrics of" not in err  # only the re-judge sees it


@pytest.mark.realtool
def test_validate_finds_an_edited_or_missing_tool_output(judged_run, tmp_path, capsys):
    import gzip
    import shutil

    from harness.results import load_records

    run = tmp_path / "run"
    shutil.copytree(judged_run, run)
    rec = next(r for r in load_records(run / "records.jsonl") if r["candidate"]["model"] == "m")
    (f,) = run.glob(f"outputs/*/{rec['tool_output']['sha256']}.json.gz")
    f.write_bytes(gzip.compress(gzip.decompress(f.read_bytes()).replace(b"Proved goals", b"Proved goalz")))
    assert main(["validate", str(run)]) == 1
    assert "its content's sha256 is not its name (edited)" in capsys.readouterr().err
    f.unlink()
    assert main(["validate", str(run)]) == 1
    assert "No such file" in capsys.readouterr().err
