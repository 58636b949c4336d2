"""Tests of harness/predictions.py: reading a predictions JSONL file, with every bad line
reported as ``file:LINE`` (docs/using.md, "Predictions": every bad line gets an error that
names ``file:line``)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from harness.predictions import MAX_OUTPUT_CHARS, InputError, PredictionsError, load

TASKS = {"00_327", "01_57", "04_140"}


def line(task_id="01_57", model="m", sample=0, output="int f(void) { return 0; }", **extra) -> str:
    return json.dumps({"task_id": task_id, "model": model, "sample": sample, "output": output, **extra})


def write(tmp_path: Path, *lines: str | bytes, name="preds.jsonl") -> Path:
    p = tmp_path / name
    p.write_bytes(b"".join((x if isinstance(x, bytes) else x.encode()) + b"\n" for x in lines))
    return p


def single_error(path: Path, lineno: int, **kw) -> PredictionsError:
    with pytest.raises(PredictionsError) as exc:
        load(path, TASKS, **kw)
    assert len(exc.value.errors) == 1, exc.value.errors
    err = exc.value.errors[0]
    assert (err.file, err.line) == (str(path), lineno)
    assert f"{path}:{lineno}: " in str(exc.value)
    return exc.value


def test_good_file(tmp_path):
    p = write(tmp_path, line(), "", line(task_id="00_327", model="org/model-x", sample=3, output="ok",
                                         mode="spec-from-code", temperature=0.2, seed=7, prompt_id="p1",
                                         meta={"k": 1}))
    preds = load(p, TASKS, mode="spec-from-code")
    assert preds.errors == []
    assert preds.lines == 2  # the empty line is skipped, not an error
    assert [(c.task_id, c.model, c.sample) for c in preds.candidates] == [("01_57", "m", 0),
                                                                          ("00_327", "org/model-x", 3)]
    assert preds.candidates[1].output == "ok"
    assert preds.candidates[0].origin == "predictions:preds.jsonl:1"
    assert preds.candidates[1].origin == "predictions:preds.jsonl:3"
    assert preds.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()
    assert preds.manifest() == {"path": str(p), "sha256": preds.sha256, "lines": 2, "candidates": 2,
                                "bad_lines": 0}


def test_unicode_output_is_kept(tmp_path):
    out = "/*@ ensures \\result == 0; // café ∀ */\nint f(void) { return 0; }"
    p = write(tmp_path, json.dumps({"task_id": "01_57", "model": "m", "sample": 0, "output": out},
                                   ensure_ascii=False))
    assert load(p, TASKS).candidates[0].output == out


def test_bad_json(tmp_path):
    p = write(tmp_path, line(), '{"task_id": "01_57", "model": "m",')
    err = single_error(p, 2)
    assert "not valid JSON" in err.errors[0].error


def test_not_an_object(tmp_path):
    p = write(tmp_path, line(), "[1, 2]")
    assert "expected a JSON object" in single_error(p, 2).errors[0].error


def test_unknown_task_id(tmp_path):
    p = write(tmp_path, line(), line(task_id="99_999", sample=1))
    err = single_error(p, 2)
    assert "unknown task_id '99_999'" in err.errors[0].error


def test_missing_field(tmp_path):
    p = write(tmp_path, json.dumps({"task_id": "01_57", "model": "m", "sample": 0}))
    err = single_error(p, 1)
    assert "'output' is a required property" in err.errors[0].error


def test_wrong_type(tmp_path):
    p = write(tmp_path, line(), line(sample="1"))
    err = single_error(p, 2)
    assert "sample" in err.errors[0].error and "integer" in err.errors[0].error


@pytest.mark.parametrize("obj, words", [
    ({"task_id": "01_57", "model": "m", "sample": -1, "output": "x"}, ["sample", "minimum"]),
    ({"task_id": "01_57", "model": "", "sample": 0, "output": "x"}, ["model"]),
    ({"task_id": "01_57", "model": "m", "sample": 0, "output": "x", "extra": 1}, ["extra"]),
    ({"task_id": "01_57", "model": "a\nb", "sample": 0, "output": "x"}, ["model"]),
    ({"task_id": "01_57", "model": "m", "sample": True, "output": "x"}, ["sample"]),
])
def test_schema_violations(tmp_path, obj, words):
    p = write(tmp_path, json.dumps(obj))
    err = single_error(p, 1).errors[0].error
    for w in words:
        assert w in err


def test_nul_inside_output(tmp_path):
    p = write(tmp_path, line(), line(sample=1, output="int f;\u0000\u0001junk"))
    assert '\\u0000' in p.read_text()  # JSON-escaped, the bytes of the line are text
    err = single_error(p, 2)
    assert "binary" in err.errors[0].error and "NUL" in err.errors[0].error


def test_raw_nul_byte_on_a_line(tmp_path):
    p = write(tmp_path, line(), b'{"task_id": "01_57", "model": "m", "sample": 1, "output": "a\x00b"}')
    err = single_error(p, 2)
    assert "NUL" in err.errors[0].error


def test_raw_non_utf8_bytes(tmp_path):
    bad = b'{"task_id": "01_57", "model": "m", "sample": 1, "output": "\xff\xfe\x89PNG"}'
    p = write(tmp_path, line(), bad, line(sample=2))
    err = single_error(p, 2)
    assert "not UTF-8" in err.errors[0].error


def test_huge_output_line(tmp_path):
    p = tmp_path / "huge.jsonl"
    with open(p, "wb") as fh:
        fh.write((line() + "\n").encode())
        fh.write(b'{"task_id": "01_57", "model": "m", "sample": 1, "output": "')
        chunk = b"x" * (1 << 20)
        for _ in range(50):
            fh.write(chunk)
        fh.write(b'"}\n')
    assert p.stat().st_size > 50 * 2**20
    err = single_error(p, 2)
    msg = err.errors[0].error
    assert f"{MAX_OUTPUT_CHARS:,}" in msg and "bytes" in msg  # the size and the limit
    preds = load(p, TASKS, keep_going=True)
    assert [c.sample for c in preds.candidates] == [0]


def test_output_just_over_the_schema_limit_names_line_and_field(tmp_path):
    p = write(tmp_path, line(), line(sample=1, output="y" * (MAX_OUTPUT_CHARS + 1)))
    err = single_error(p, 2)
    assert "output" in err.errors[0].error
    assert len(str(err)) < 2000  # the message does not echo the 1 MB output


def test_output_just_over_the_schema_limit_says_too_long(tmp_path):
    p = write(tmp_path, line(output="y" * (MAX_OUTPUT_CHARS + 1)))
    err = single_error(p, 1).errors[0].error
    assert "too long" in err or f"{MAX_OUTPUT_CHARS:,}" in err or str(MAX_OUTPUT_CHARS) in err


def test_duplicate_task_model_sample(tmp_path):
    p = write(tmp_path, line(), line(model="other"), line(output="different text"))
    err = single_error(p, 3)
    assert "duplicate" in err.errors[0].error and "first at line 1" in err.errors[0].error


def test_mode_mismatch(tmp_path):
    p = write(tmp_path, line(mode="spec-from-code"), line(sample=1, mode="code-from-spec"))
    err = single_error(p, 2, mode="spec-from-code")
    assert "'code-from-spec'" in err.errors[0].error and "'spec-from-code'" in err.errors[0].error
    assert len(load(p, TASKS).candidates) == 2  # no run mode given: not checked


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_file(tmp_path, content):
    p = tmp_path / "empty.jsonl"
    p.write_bytes(content)
    with pytest.raises(PredictionsError) as exc:
        load(p, TASKS, keep_going=True)
    (err,) = exc.value.errors
    assert err.line is None and err.file == str(p)
    assert str(err) == f"{p}: no predictions in the file"


def test_input_error_format():
    assert str(InputError("p.jsonl", 7, "bad")) == "p.jsonl:7: bad"
    assert str(InputError("p.jsonl", None, "empty")) == "p.jsonl: empty"
    assert InputError("p.jsonl", 7, "bad").to_json() == {"file": "p.jsonl", "line": 7, "error": "bad"}


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        load(tmp_path / "nope.jsonl", TASKS)


def _mixed(tmp_path) -> Path:
    return write(tmp_path,
                 line(),                                        # 1 good
                 "{not json",                                   # 2
                 line(task_id="nope", sample=1),                # 3
                 line(task_id="00_327", output="x", sample=0),  # 4 good
                 json.dumps({"task_id": "01_57", "model": "m", "sample": 2}),  # 5 missing output
                 line(),                                        # 6 duplicate of 1
                 line(sample=3, output="a\u0000"),              # 7 NUL
                 line(task_id="04_140"))                        # 8 good


def test_all_bad_lines_reported_at_once(tmp_path):
    p = _mixed(tmp_path)
    with pytest.raises(PredictionsError) as exc:
        load(p, TASKS)
    assert [e.line for e in exc.value.errors] == [2, 3, 5, 6, 7]
    for n in (2, 3, 5, 6, 7):
        assert f"{p}:{n}: " in str(exc.value)
    assert "--keep-going" in str(exc.value)


def test_keep_going_returns_good_lines_and_lists_bad_ones(tmp_path):
    p = _mixed(tmp_path)
    preds = load(p, TASKS, keep_going=True)
    assert [(c.task_id, c.origin) for c in preds.candidates] == [
        ("01_57", "predictions:preds.jsonl:1"), ("00_327", "predictions:preds.jsonl:4"),
        ("04_140", "predictions:preds.jsonl:8")]
    assert [(e.file, e.line) for e in preds.errors] == [(str(p), n) for n in (2, 3, 5, 6, 7)]
    assert all(e.to_json() == {"file": str(p), "line": e.line, "error": e.error} for e in preds.errors)
    assert preds.lines == 8
    assert preds.manifest()["bad_lines"] == 5 and preds.manifest()["candidates"] == 3


def test_keep_going_with_no_good_line_still_fails(tmp_path):
    p = write(tmp_path, "{bad", line(task_id="nope"))
    with pytest.raises(PredictionsError) as exc:
        load(p, TASKS, keep_going=True)
    assert [e.line for e in exc.value.errors] == [1, 2]


def test_many_bad_lines_message_is_capped(tmp_path):
    p = write(tmp_path, *["{bad"] * 30)
    with pytest.raises(PredictionsError) as exc:
        load(p, TASKS)
    assert len(exc.value.errors) == 30
    assert "and 10 more" in str(exc.value)
    assert f"{p}:20: " in str(exc.value) and f"{p}:21: " not in str(exc.value)
