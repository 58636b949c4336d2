"""Tests of harness/results.py: records.jsonl crash safety, RecordLog, ResultCache and
validate_run_dir.

Records used for the store tests are produced by the real executor from jobs decided
before any tool runs (``precheck``), so no verifier result is invented; the run
directory checked by ``validate_run_dir`` comes from a real gold run (Frama-C) of one
quick CASP pair.
"""

from __future__ import annotations

import copy
import enum
import io
import json
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from harness.executor import Executor
from harness.results import schema
from harness.model import Job, sha256_text
from harness.sandbox import Sandbox
from harness.results import (
    RecordLog,
    ResultCache,
    ValidationError,
    load_records,
    validate,
    validate_run_dir,
    write_json_atomic,
)
from harness.sandbox import Limits
from harness.toolchains import ProbedToolchain
from harness.verifiers.framac import FramaC

TOOLCHAIN = ProbedToolchain(name="framac", flavor="host", sandbox="host", tools={
    "frama-c": {"version": "25.0-beta", "raw": "25.0-beta (Manganese)", "published": "30.0", "match": False}})


class NoSandbox(Sandbox):
    """A sandbox that must not be used: precheck jobs never start a process."""

    name = "none"

    def run(self, *a, **k):  # pragma: no cover - a call is a test failure
        raise AssertionError("a precheck job started a process")


def precheck_job(i: int, verdict: str = "rejected") -> Job:
    text = f"candidate {i}"
    return Job(benchmark="casp", benchmark_version="1", dataset={"name": "casp-sample10", "revision": "r"},
               mode="spec-from-code", task_id=f"t{i}", task_sha256=sha256_text(f"task {i}"),
               candidate={"model": "m", "sample": 0, "sha256": sha256_text(text), "origin": "test"},
               files={"candidate.c": text}, options={"o": 1},
               checks=[{"name": "body-unchanged", "ok": False, "detail": "changed"}],
               precheck=(verdict, f"decided before running ({i})"))


def make_records(tmp_path: Path, n: int) -> list[dict]:
    ex = Executor(FramaC(), NoSandbox(), TOOLCHAIN, cache=None)
    log = RecordLog(tmp_path / "gen" / "records.jsonl")
    recs = ex.run([precheck_job(i) for i in range(n)], log, judge=lambda j, r: (r.verdict, r.reason))
    log.close()
    assert ex.stats.verifier_runs == 0
    return recs


def dump(recs) -> str:
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in recs)


# --- load_records ------------------------------------------------------------------------


def test_load_records_roundtrip(tmp_path):
    recs = make_records(tmp_path, 3)
    p = tmp_path / "records.jsonl"
    p.write_text(dump(recs))
    assert load_records(p) == recs
    assert load_records(tmp_path / "absent.jsonl") == []


def test_load_records_drops_torn_last_line(tmp_path):
    recs = make_records(tmp_path, 3)
    p = tmp_path / "records.jsonl"
    full = dump(recs)
    torn = full[: len(full) - 40]  # the third line cut short, no newline after it
    p.write_text(torn)
    assert load_records(p) == recs[:2]


def test_load_records_corrupt_middle_line_names_it(tmp_path):
    recs = make_records(tmp_path, 3)
    lines = dump(recs).splitlines(keepends=True)
    lines[1] = lines[1][:50] + "\n"
    p = tmp_path / "records.jsonl"
    p.write_text("".join(lines))
    with pytest.raises(ValidationError, match=rf"{p}:2: not valid JSON"):
        load_records(p)


def test_load_records_corrupt_last_line_with_newline_is_not_torn(tmp_path):
    recs = make_records(tmp_path, 2)
    p = tmp_path / "records.jsonl"
    p.write_text(dump(recs[:1]) + "{garbage\n")
    with pytest.raises(ValidationError, match=":2:"):
        load_records(p)


# --- RecordLog ---------------------------------------------------------------------------


def test_record_log_reopen_rewrites_torn_tail_and_resumes(tmp_path):
    recs = make_records(tmp_path, 3)
    p = tmp_path / "run" / "records.jsonl"
    p.parent.mkdir()
    full = dump(recs)
    p.write_text(full[: len(full) - 10])
    log = RecordLog(p)
    assert set(log.done) == {r["key"] for r in recs[:2]}
    assert p.read_text().endswith("\n") and len(p.read_text().splitlines()) == 2  # torn tail gone
    log.append(recs[2])
    log.close()
    assert sorted(r["key"] for r in load_records(p)) == sorted(r["key"] for r in recs)


def test_record_log_append_validates(tmp_path):
    recs = make_records(tmp_path, 1)
    log = RecordLog(tmp_path / "records.jsonl")
    bad = dict(recs[0], verdict="maybe")
    with pytest.raises(ValidationError, match="verdict"):
        log.append(bad)
    log.close()
    assert load_records(tmp_path / "records.jsonl") == []


def test_record_log_infra_error_is_not_done_and_finalize_keeps_one_per_key(tmp_path):
    recs = make_records(tmp_path, 3)
    p = tmp_path / "records.jsonl"
    log = RecordLog(p)
    infra = dict(recs[0], verdict="infra_error", reason="frama-c did not start")
    log.append(infra)
    assert recs[0]["key"] not in log.done  # retried on resume
    log.append(recs[0])  # the retry succeeded: same key again
    log.append(recs[1])
    log.append(recs[1])
    log.append(recs[2])
    assert len(p.read_text().splitlines()) == 5
    order = [recs[2]["key"], recs[0]["key"], recs[1]["key"]]
    written = log.finalize(order)
    log.close()
    lines = [json.loads(x) for x in p.read_text().splitlines()]
    assert [r["key"] for r in lines] == order
    assert lines[1]["verdict"] == "rejected"  # the later record of the key wins
    assert written == lines


def test_finalize_with_repeated_keys_in_order_writes_one_line_per_key(tmp_path):
    recs = make_records(tmp_path, 2)
    p = tmp_path / "records.jsonl"
    log = RecordLog(p)
    for r in recs:
        log.append(r)
    log.finalize([recs[0]["key"], recs[1]["key"], recs[0]["key"]])
    log.close()
    assert len(p.read_text().splitlines()) == 2


# --- ResultCache --------------------------------------------------------------------------


def test_result_cache_put_get(tmp_path):
    (rec,) = make_records(tmp_path, 1)
    cache = ResultCache(tmp_path / "cache")
    vkey = rec["verification_key"]
    assert cache.get(vkey) is None
    cache.put(vkey, rec)
    path = tmp_path / "cache" / vkey[:2] / f"{vkey}.json"
    assert path.is_file()
    assert cache.get(vkey) == {**rec, "key": vkey}  # stored under the verification key
    assert cache.get("0" * 64) is None


def test_result_cache_never_stores_infra_error(tmp_path):
    (rec,) = make_records(tmp_path, 1)
    cache = ResultCache(tmp_path / "cache")
    vkey = rec["verification_key"]
    cache.put(vkey, dict(rec, verdict="infra_error"))
    assert cache.get(vkey) is None
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*.json"))


def test_result_cache_ignores_unreadable_or_mismatched_entries(tmp_path):
    (rec,) = make_records(tmp_path, 1)
    cache = ResultCache(tmp_path / "cache")
    vkey = rec["verification_key"]
    path = tmp_path / "cache" / vkey[:2] / f"{vkey}.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert cache.get(vkey) is None
    path.write_text(json.dumps(dict(rec, key="f" * 64)))
    assert cache.get(vkey) is None


def test_result_cache_default_dir_from_env(tmp_path, isolated_cache):
    assert ResultCache().root == Path(isolated_cache["VERIKIT_CACHE"])


# --- write_json_atomic / validate -------------------------------------------------------------


def test_write_json_atomic_validates_before_writing(tmp_path):
    p = tmp_path / "report.json"
    with pytest.raises(ValidationError, match=str(p)):
        write_json_atomic(p, {"schema_version": "1.0"}, kind="report")
    assert not p.exists() and list(tmp_path.iterdir()) == []


def test_validate_names_field_and_location():
    with pytest.raises(ValidationError) as exc:
        validate("predictions", {"task_id": "x", "model": "m", "sample": "0", "output": "o"}, "f.jsonl:3")
    assert str(exc.value).startswith("f.jsonl:3: does not match predictions.schema.json: sample:")


def _edited(rec: dict) -> list[tuple[str, object]]:
    """Copies of a valid record, each with one edit: some keep it valid, most do not,
    several are where the compiled validator and the reference are known to differ."""
    class Sub(str):
        pass

    class Count(enum.IntEnum):
        ONE = 1

    edits = {
        "as is": lambda r: None,
        "argv a tuple": lambda r: r["verifier"].__setitem__("argv", tuple(r["verifier"]["argv"])),
        "checks a tuple": lambda r: r.__setitem__("checks", tuple(r["checks"])),
        "a tuple deep in checks": lambda r: r["checks"][0].__setitem__("name", ("body-unchanged",)),
        "an int key": lambda r: r.__setitem__(5, 1),
        "an int key in options": lambda r: r["verifier"]["options"].__setitem__(5, 1),
        "attempts 0.0": lambda r: r.__setitem__("attempts", 0.0),
        "attempts 0.5": lambda r: r.__setitem__("attempts", 0.5),
        "attempts True": lambda r: r.__setitem__("attempts", True),
        "attempts -1": lambda r: r.__setitem__("attempts", -1),
        "attempts 10**30": lambda r: r.__setitem__("attempts", 10 ** 30),
        "attempts an IntEnum": lambda r: r.__setitem__("attempts", Count.ONE),
        "attempts 1 without tool_output": lambda r: r.__setitem__("attempts", 1),
        "wall NaN": lambda r: r["timings"].__setitem__("wall_s", float("nan")),
        "wall inf": lambda r: r["timings"].__setitem__("wall_s", float("inf")),
        "wall -1": lambda r: r["timings"].__setitem__("wall_s", -1),
        "key and a newline": lambda r: r.__setitem__("key", r["key"] + "\n"),
        "key upper case": lambda r: r.__setitem__("key", r["key"].upper()),
        "key too short": lambda r: r.__setitem__("key", r["key"][:63]),
        "reason a lone surrogate": lambda r: r.__setitem__("reason", "\ud800"),
        "reason a str subclass": lambda r: r.__setitem__("reason", Sub("x")),
        "reason bytes": lambda r: r.__setitem__("reason", b"x"),
        "reason None": lambda r: r.__setitem__("reason", None),
        "finished_at month 13": lambda r: r.__setitem__("finished_at", "2026-13-01T00:00:00Z"),
        "finished_at lower case": lambda r: r.__setitem__("finished_at", "2026-11-01t00:00:00z"),
        "finished_at a leap second": lambda r: r.__setitem__("finished_at", "2026-12-31T23:59:60Z"),
        "finished_at 30 February": lambda r: r.__setitem__("finished_at", "2026-02-30T12:00:00Z"),
        "finished_at no offset": lambda r: r.__setitem__("finished_at", "2026-11-01T12:00:00"),
        "finished_at other digits": lambda r: r.__setitem__("finished_at", "\u0662026-11-01T12:00:00Z"),
        "finished_at a number": lambda r: r.__setitem__("finished_at", 5),
        "verdict unknown": lambda r: r.__setitem__("verdict", "ok"),
        "no verdict": lambda r: r.pop("verdict"),
        "goals null": lambda r: r.__setitem__("goals", None),
        "goals a float": lambda r: r.__setitem__("goals", {"proved": 3.0, "total": 3}),
        "goals a string": lambda r: r.__setitem__("goals", {"proved": "3", "total": 3}),
        "a set in options": lambda r: r["verifier"]["options"].__setitem__("x", {1}),
        "toolchain flavor unknown": lambda r: r["toolchain"].__setitem__("flavor", "other"),
        "toolchain not an object": lambda r: r.__setitem__("toolchain", []),
    }
    return [(label, edit(doc) or doc) for label, edit in edits.items() for doc in [copy.deepcopy(rec)]]


def test_validate_takes_the_compiled_validators_yes_only_where_the_reference_says_yes(tmp_path):
    """The compiled validator only shortcuts an acceptance (harness/results/schema.py):
    on every edited record, ``validate`` raises exactly when the reference validator
    finds the record invalid, and the shortcut never accepts what the reference refuses."""
    rec = make_records(tmp_path, 1)[0]
    assert schema.fast("record").is_valid(rec) and schema._accepted("record", rec)  # the shortcut is in use
    verdicts = {}
    for label, doc in _edited(rec):
        valid = schema.validator("record").is_valid(doc)
        verdicts[label] = valid
        assert not schema._accepted("record", doc) or valid, f"{label}: the shortcut accepts what the reference refuses"
        try:
            validate("record", doc, "x.jsonl:1")
        except ValidationError as exc:
            assert not valid, f"{label}: refused, but the reference accepts it"
            assert str(exc).startswith("x.jsonl:1: does not match record.schema.json: ")
        else:
            assert valid, f"{label}: accepted, but the reference refuses it"
    assert verdicts["as is"] and verdicts["attempts 0.0"] and verdicts["wall NaN"] and verdicts["key and a newline"]
    assert not verdicts["argv a tuple"] and not schema._accepted("record", _edited(rec)[1][1])
    assert sum(verdicts.values()) < len(verdicts) / 2, verdicts


# --- validate_run_dir on a real run ----------------------------------------------------------


@pytest.fixture(scope="module")
def gold_run_dir(casp_mirror, framac_host, tmp_path_factory) -> Path:
    """A real run directory: gold mode, task 04_140, real Frama-C, private caches."""
    from harness.runner import run
    from harness.runspec import RunSettings, RunSpec

    base = tmp_path_factory.mktemp("gold-run")
    spec = RunSpec(benchmark="casp", modes=["gold"], task_ids=["04_140"], limits=Limits(wall_s=300))
    settings = RunSettings(cache_dir=base / "cache", data_dir=base / "data", progress=False, command=["pytest"])
    report, manifest, code = run(spec, base / "out", settings=settings, console=Console(file=io.StringIO()))
    assert code == 0 and manifest["counts"]["jobs"] == 1
    return base / "out"


def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "run"
    shutil.copytree(src, dst)
    return dst


@pytest.mark.realtool
def test_validate_run_dir_ok(gold_run_dir):
    assert validate_run_dir(gold_run_dir) == []


def test_validate_run_dir_missing_files(tmp_path):
    problems = validate_run_dir(tmp_path)
    assert sorted(problems) == sorted([f"{tmp_path / 'run.json'}: missing", f"{tmp_path / 'report.json'}: missing",
                                       f"{tmp_path / 'records.jsonl'}: missing",
                                       f"{tmp_path / 'SHA256SUMS'}: missing (the run did not finish, or its files "
                                       "were not written by verikit)"])


@pytest.mark.realtool
def test_validate_run_dir_missing_one_file(gold_run_dir, tmp_path):
    d = _copy(gold_run_dir, tmp_path)
    (d / "report.json").unlink()
    assert validate_run_dir(d) == [f"{d / 'report.json'}: missing"]


@pytest.mark.realtool
def test_validate_run_dir_duplicate_keys(gold_run_dir, tmp_path):
    d = _copy(gold_run_dir, tmp_path)
    rec_path = d / "records.jsonl"
    line = rec_path.read_text()
    rec_path.write_text(line + line + line)
    problems = validate_run_dir(d)
    key = json.loads(line)["key"][:12]
    assert f"{rec_path}:2: duplicate job key {key} (first at line 1)" in problems
    assert f"{rec_path}:3: duplicate job key {key} (first at line 1)" in problems
    assert f"{rec_path}: its sha256 differs from SHA256SUMS (edited after the run wrote it)" in problems
    assert len(problems) == 3  # one distinct key: counts still agree


@pytest.mark.realtool
def test_validate_run_dir_count_mismatch(gold_run_dir, tmp_path):
    d = _copy(gold_run_dir, tmp_path)
    (d / "records.jsonl").write_text("")
    problems = validate_run_dir(d)
    assert problems == [f"{d / 'records.jsonl'}: its sha256 differs from SHA256SUMS (edited after the run wrote it)",
                        f"{d / 'run.json'}: counts.jobs=1 but records.jsonl has 0 distinct jobs"]


@pytest.mark.realtool
def test_validate_run_dir_schema_and_json_errors(gold_run_dir, tmp_path):
    d = _copy(gold_run_dir, tmp_path)
    rec = json.loads((d / "records.jsonl").read_text())
    (d / "records.jsonl").write_text(json.dumps(dict(rec, verdict="proved")) + "\n{oops\n")
    run = json.loads((d / "run.json").read_text())
    del run["counts"]
    (d / "run.json").write_text(json.dumps(run))
    problems = validate_run_dir(d)
    text = "\n".join(problems)
    assert f"{d / 'records.jsonl'}:1: does not match record.schema.json: verdict" in text
    assert f"{d / 'records.jsonl'}:2: not valid JSON" in text
    assert f"{d / 'run.json'}: does not match run.schema.json" in text and "counts" in text
