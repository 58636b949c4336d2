"""Reliability (issue 14): arguments checked at parse time, no NaN or infinity in written
JSON, limits that cannot be meaningless."""

from __future__ import annotations

import math

import pytest

from harness.cli import MIN_MEMORY_MIB, main
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
def test_tampered_cache_entry_is_ignored_and_the_job_reruns(casp_tasks, framac_host, tmp_path):
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
def test_unwritable_cache_loses_nothing(casp_tasks, framac_host, tmp_path):
    from harness.results import ResultCache, load_records

    (tmp_path / "cache").write_text("a file where the cache directory should be")
    cache = ResultCache(tmp_path / "cache")
    rec, stats = _execute(framac_host, _wrong_code_job(casp_tasks, framac_host), tmp_path, cache, "r.jsonl")
    assert rec["verdict"] == "failed"
    assert [r["verdict"] for r in load_records(tmp_path / "r.jsonl")] == ["failed"]  # the record was kept
    assert cache.problems and "not written" in cache.problems[0]
