"""Tests of harness/benchmarks/osvbench on the real OSVBench files (dataset ``osvbench``,
fetched from the mirror in ``VERIKIT_DATA_MIRRORS``): tolerant task loading, prompts
byte-for-byte as upstream, the exact rescoring of the published Claude-3.5-sonnet run
(Tables 1 and 2, upstream README) as a :class:`harness.plugin.Reproduction`, the
classification of all 245 log entries against upstream's stats.py rule, predictions
conversion and the integrity scan. Jobs, judging and report sections on the recorded
outputs: tests/test_osvbench_run.py."""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from harness import datasets, predictions, registry
from harness.benchmarks import osvbench
from harness.model import Candidate
from harness.runspec import RunSettings, RunSpec
from harness.plugin import Reproduction
from harness.verifiers import hyperkernel

ROOT = Path(__file__).resolve().parents[1]
PUBLISHED = ROOT / "results" / "published" / "osvbench.json"
#: The Claude-3.5-sonnet rows as the paper prints them (Li, Jiang, Zhao, Shen, "OSVBench:
#: Benchmarking LLMs on Specification Generation Tasks for Operating System Verification",
#: arXiv:2504.20964): Table 1, pass@1 % per bug type (Incorrect Pointer, Incorrect
#: Privilege, Memory Leak, Buffer Overflow, Bounds Checking, Correct, Total), and Table 2,
#: Syntax Error and Semantic Error %. A second transcription, made independently of
#: results/published/osvbench.json, which the test compares with it.
PAPER_TABLE1_CLAUDE = [39.44, 41.96, 39.19, 48.15, 39.81, 46.94, 44.90]
PAPER_TABLE2_CLAUDE = [22.45, 32.65]


@pytest.fixture(scope="module")
def fetched(osvbench_fetched):
    return osvbench_fetched


@pytest.fixture(scope="module")
def bench(fetched):
    return osvbench.load_benchmark(fetched)


@pytest.fixture(scope="module")
def tasks(bench):
    return bench.tasks


@pytest.fixture(scope="module")
def scores(fetched, bench):
    return osvbench.rescore(fetched, bench)


@pytest.fixture(scope="module")
def published():
    return json.loads(PUBLISHED.read_text())


def copy_dataset(fetched, dest: Path) -> Path:
    for rel, src in fetched.files.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest / rel)
        os.chmod(dest / rel, 0o644)
    return dest


def upstream_stats(log_text: str, records: list[dict]) -> dict:
    """A transcription of upstream's stats.py (OSVBench, commit 57e3bff8): its loop, its
    counters, its substring rules, kept independent of the module under test."""
    out = {"all_correct": 0, "syntaxError": 0, "semanticError": 0, "per_index": [],
           **{k: 0 for k in ("incorrect pointer", "incorrect privilege", "memory leak", "buffer overflow",
                             "bounds checking", "correct")}}
    output_list = log_text.split("Syscall ")[1:]
    assert len(output_list) == 245
    for i in range(len(output_list)):
        if ":" not in output_list[i]:
            out["per_index"].append(None)
            continue
        if "... ok" not in output_list[i]:
            if "Could not prove, trying to find a minimal ce" in output_list[i] or "Timeout" in output_list[i]:
                out["semanticError"] += 1
                out["per_index"].append("semantic")
            else:
                out["syntaxError"] += 1
                out["per_index"].append("syntax")
        else:
            out["all_correct"] += 1
            out["per_index"].append("pass")
            rec = records[i]
            if "bug_type" not in rec and "bug_num" not in rec:
                out["correct"] += 1
            if "bug_type" in rec:
                for k in ("incorrect pointer", "incorrect privilege", "memory leak", "buffer overflow",
                          "bounds checking"):
                    if k in rec["bug_type"]:
                        out[k] += 1
    return out


# --- entry and tasks --------------------------------------------------------------------

def test_dataset_entry_is_fully_pinned():
    ds = datasets.DATASETS["osvbench"]
    assert ds.source.repo == "lishangyu-hkust/OSVBench"
    assert ds.source.revision == "3247b75e34bec129328e4930d9b5f56448d072a1"
    assert {f.path for f in ds.files} >= {osvbench.BENCHMARK_JSON, osvbench.LOG, osvbench.RESULTS_JSON,
                                         osvbench.SYSTEM_ASSUMPTION_MODEL, osvbench.FULL_PROMPT_EXAMPLE,
                                         *osvbench.SHOT_FILES.values()}
    assert all(f.sha256 and f.size for f in ds.files)


def test_pinned_benchmark_json_is_not_valid_json_and_is_read_anyway(fetched, bench):
    raw = fetched.files[osvbench.BENCHMARK_JSON].read_text(encoding="utf-8")
    with pytest.raises(json.JSONDecodeError):
        json.loads(raw)
    trailing = [q for q in bench.quirks if q.kind == "trailing_comma"]
    assert len(trailing) == 1
    q = trailing[0]
    assert (q.file, q.line, q.task_id) == (osvbench.BENCHMARK_JSON, 246, "40")
    line = raw.splitlines()[q.line - 1]
    assert line[q.column - 1] == "," and line[q.column:].strip() == ""  # the comma ends its line
    assert raw.splitlines()[q.line].strip() == "},"  # and the object closes on the next one


def test_245_tasks_49_syscalls_5_variants(tasks):
    assert len(tasks) == osvbench.N_TASKS
    assert [t.task_id for t in tasks] == [str(i) for i in range(245)]
    per = Counter(t.syscall for t in tasks)
    assert len(per) == 49 and set(per.values()) == {5}
    correct = [t for t in tasks if t.correct]
    assert len(correct) == 49 and len({t.syscall for t in correct}) == 49  # one correct variant per syscall
    for t in tasks:
        # syscall is the spec function / test name (HV6.test_<syscall>); six of them name the
        # C function differently: clone_proc is sys_clone, switch_proc sys_switch, ...
        c_name = t.syscall
        if not c_name.startswith("sys_") and c_name.endswith("_proc"):
            c_name = "sys_" + c_name[: -len("_proc")]
        assert t.declaration.startswith(f"int {c_name}("), (t.syscall, t.declaration)
        assert t.description.startswith("\n[Functional Description]:")
        assert t.code.startswith("[Code Implementation]:")
        assert (t.bug_num is None) == t.correct == (t.bug_types == ())
        if not t.correct:
            assert 1 <= t.bug_num <= 5 and set(t.bug_types) <= set(osvbench.BUG_TYPES)
    assert Counter(t.bug_num for t in tasks if t.bug_num) == {1: 71, 2: 32, 3: 31, 4: 30, 5: 32}


def test_misspelled_bug_types_normalised_and_recorded(tasks, bench):
    mis = {t.task_id: t for t in tasks if t.misspelled}
    assert {k: t.misspelled for k, t in mis.items()} == {"126": ("mmeory leak",), "137": ("buffer overlfow",)}
    assert "memory leak" in mis["126"].bug_types and "memory leak" not in mis["126"].upstream_bug_columns
    assert "buffer overflow" in mis["137"].bug_types and "buffer overflow" not in mis["137"].upstream_bug_columns
    kinds = Counter(q.kind for q in bench.quirks)
    assert kinds["misspelled_bug_type"] == 2
    assert kinds["bug_num_below_types"] == 5  # e.g. task 83: 4 types, bug_num 2


def test_load_tasks_warns_for_each_quirk(fetched):
    with pytest.warns(osvbench.UpstreamQuirkWarning) as got:
        osvbench.load_tasks(fetched)
    texts = [str(w.message) for w in got]
    assert any("benchmark.json:246:" in t and "trailing comma" in t for t in texts)
    assert any("mmeory leak" in t for t in texts)


def test_upstream_file_is_never_edited(fetched):
    path = fetched.files[osvbench.BENCHMARK_JSON]
    before = datasets.sha256_file(path)
    osvbench.load_benchmark(fetched)
    (ref,) = [f for f in datasets.DATASETS["osvbench"].files if f.path == osvbench.BENCHMARK_JSON]
    assert datasets.sha256_file(path) == before == ref.sha256


def test_lenient_json_only_drops_trailing_commas(tmp_path):
    p = tmp_path / "b.json"
    p.write_text('[\n  {"a": "x, ]", "b": [1, 2,],\n  },\n]\n')
    value, quirks, starts = osvbench.read_lenient_json(p, "b.json")
    assert value == [{"a": "x, ]", "b": [1, 2]}]  # the comma inside the string is kept
    assert [(q.line, q.column) for q in quirks] == [(2, 27), (2, 29), (3, 4)]
    assert len(starts) == 1
    p.write_text('[\n  {"a": 1,,},\n]\n')
    with pytest.raises(osvbench.ManifestError, match=r"^b\.json:2:11: not valid JSON"):
        osvbench.read_lenient_json(p, "b.json")


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.pop("code"), r"benchmark\.json:\d+: task 3 has no string field 'code'"),
    (lambda r: r.update(bug_type="incorrect pointer, use after free", bug_num="2"),
     r"task 3 \(sys_map_file\): unknown bug type 'use after free'"),
    (lambda r: r.update(bug_type="memory leak"), r"has one of bug_type/bug_num without the other"),
    (lambda r: r.update(bug_type="memory leak", bug_num="7"), r"bug_num 7 outside 1\.\.5"),
    (lambda r: r.update(extra=1), r"unknown field\(s\) \['extra'\]"),
])
def test_malformed_task_names_file_and_line(fetched, tmp_path, edit, message):
    raw = fetched.files[osvbench.BENCHMARK_JSON].read_text(encoding="utf-8")
    data = json.loads(raw[:319138] + raw[319139:])  # the pinned file without its trailing comma
    edit(data[3])
    root = tmp_path / "repo"
    (root / "bench_prompts").mkdir(parents=True)
    (root / osvbench.BENCHMARK_JSON).write_text(json.dumps(data, indent=4))
    with pytest.raises(osvbench.ManifestError, match=message) as exc:
        osvbench.load_benchmark(root)
    m = re.match(r"bench_prompts/benchmark\.json:(\d+):", str(exc.value))
    lines = (root / osvbench.BENCHMARK_JSON).read_text().splitlines()
    assert m and lines[int(m.group(1)) - 1].strip() == "{"  # the line where task 3's object starts
    assert sum(1 for s in lines[: int(m.group(1))] if s == "    {") == 4


# --- prompts ----------------------------------------------------------------------------

def test_five_shot_prompt_is_byte_for_byte_upstreams_full_example(fetched, tasks):
    full = fetched.files[osvbench.FULL_PROMPT_EXAMPLE].read_text(encoding="utf-8")
    prompts = osvbench.Prompts.load(fetched)
    task = tasks[2]
    assert task.syscall == "sys_map_dev" and task.correct
    assert prompts.prompt(task, 5) + "\n" == full  # the example file ends with one newline more
    others = [t for t in tasks if t.syscall == "sys_map_dev" and t is not task]
    assert all(prompts.prompt(t, 5) + "\n" != full for t in others)  # the buggy variants differ


@pytest.mark.parametrize("shots", osvbench.SHOTS)
def test_prompt_structure_for_every_shot_count(fetched, tasks, shots):
    prompts = osvbench.Prompts.load(fetched)
    t = tasks[100]
    p = prompts.prompt(t, shots)
    assert p.startswith(prompts.system_description + "\n\n")
    assert p.endswith(f"the system call `{t.syscall}` provided above, the state-machine specification of the "
                      "system call is deduced as follows:")
    assert f"### Task Question:\nNow, given the system call `{t.syscall}`. \n{t.description}\n{t.code}\n" in p
    assert len(prompts.example_syscalls(shots)) == shots
    assert ("### Examples:" in p) == (shots > 0)
    msgs = prompts.messages(t, shots)
    assert [m["role"] for m in msgs] == ["system", "user"] and msgs[1]["content"] == p
    assert "strictly encapsulated within the format ```python\\n{code}\\n```" in msgs[0]["content"]
    with pytest.raises(ValueError, match="shots must be one of"):
        prompts.prompt(t, 2)


def test_example_sets_are_nested(fetched):
    prompts = osvbench.Prompts.load(fetched)
    assert prompts.example_syscalls(1) == ["sys_alloc_port"]
    assert prompts.example_syscalls(5) == ["sys_alloc_port", "sys_protect_frame", "sys_map_page_desc",
                                           "clone_proc", "sys_dup2"]
    assert prompts.example_syscalls(9)[:7] == prompts.example_syscalls(7)


@pytest.mark.slow
def test_plain_prompt_function_for_verikit_prompts(fetched, tasks):
    full = fetched.files[osvbench.FULL_PROMPT_EXAMPLE].read_text(encoding="utf-8")
    assert osvbench.prompt(fetched, "2", 5) + "\n" == full
    assert osvbench.prompt(fetched, tasks[2], 5) + "\n" == full
    assert osvbench.messages(fetched, "2", 0)[1]["content"] == osvbench.Prompts.load(fetched).prompt(tasks[2], 0)
    with pytest.raises(osvbench.ManifestError, match=r"unknown task id '245': expected 0\.\.244"):
        osvbench.prompt(fetched, "245")


def test_prompts_hook_for_verikit_prompts(fetched, tasks):
    bench = registry.benchmark("osvbench")
    full = fetched.files[osvbench.FULL_PROMPT_EXAMPLE].read_text(encoding="utf-8")
    (line,) = bench.prompts(fetched, [tasks[2]], "spec")
    assert line == {"task_id": "2", "mode": "spec", "shots": 5, "system": osvbench.SYSTEM_PROMPT,
                    "prompt": full[:-1], "messages": [{"role": "system", "content": osvbench.SYSTEM_PROMPT},
                                                      {"role": "user", "content": full[:-1]}],
                    "template_ids": ["osvbench-system", "osvbench-task"]}
    assert len(bench.prompts(fetched, tasks, "spec", shots=0)) == 245
    with pytest.raises(ValueError, match="shots must be one of 0, 1, 3, 5, 7, 9, got 2"):
        bench.prompts(fetched, tasks, "spec", shots=2)


# --- rescoring the published run --------------------------------------------------------

def test_rescore_reproduces_tables_1_and_2(scores):
    assert scores["overall"] == {"passed": 110, "total": 245, "percent": 44.90}
    assert scores["errors"] == {"syntax": {"passed": 55, "total": 245, "percent": 22.45},
                                "semantic": {"passed": 80, "total": 245, "percent": 32.65}}
    got = {k: (v["passed"], v["total"]) for k, v in scores["by_bug_type"].items()}
    assert got == {"incorrect pointer": (28, 71), "incorrect privilege": (47, 112), "memory leak": (29, 74),
                   "buffer overflow": (26, 54), "bounds checking": (43, 108), "correct": (23, 49)}


def test_every_log_entry_classified_as_upstream_stats_py_does(fetched, scores):
    """All 245 entries: upstream's stats.py (transcribed above, independent of the module)
    and the kit agree per entry, and on every counter."""
    raw = fetched.files[osvbench.BENCHMARK_JSON].read_text(encoding="utf-8")
    records = json.loads(raw[:319138] + raw[319139:])
    log = fetched.files[osvbench.LOG].read_text(encoding="utf-8")
    up = upstream_stats(log, records)
    per = scores["per_task"]
    assert len(per) == 245
    assert [p["upstream"] for p in per] == up["per_index"]
    assert [p["kit"] for p in per] == up["per_index"]  # the finer cause maps back to the same class
    assert (up["all_correct"], up["syntaxError"], up["semanticError"]) == (110, 55, 80)
    for col, v in scores["by_bug_type"].items():
        assert v["passed"] == up[col]


def test_finer_causes_add_up_to_the_papers_totals(scores):
    f = scores["finer"]
    assert f["pass"] == {"verified": 110}
    assert f["semantic"] == {"counterexample": 80}
    assert f["syntax"] == {"AttributeError": 21, "AssertionError": 16, "Z3Exception": 13, "ValueError": 4,
                           "SyntaxError": 1}
    assert sum(f["syntax"].values()) == 55 and sum(f["semantic"].values()) == 80
    assert scores["raised_in"]["syntax"] == {"hv6py": 36, "z3": 13, "libirpy": 3, "candidate": 2, "harness": 1}
    per = scores["per_task"]
    # only one "syntax error" is a Python syntax error: it fails at import, no test runs
    (syn,) = [p for p in per if p["cause"] == "SyntaxError"]
    assert syn["task_id"] == "141" and syn["outcome"] is None and syn["kind"] == "python_syntax"
    # unittest itself calls the AssertionErrors FAIL and the other exceptions ERROR
    assert Counter(p["outcome"] for p in per if p["upstream"] == "syntax") == {"ERROR": 38, "FAIL": 16, None: 1}
    assert all(p["outcome"] == "FAIL" for p in per if p["upstream"] == "semantic")
    assert {p["z3_version"] for p in per} == {"4.5.0.0", None}  # the import failure prints no version


def test_spec_lines_point_into_the_published_specs(fetched, tasks, scores):
    """Tracebacks name lines of specs.py = SPEC_HEADER + spec: mapped back to the candidate
    they must show the very line of the published spec (checks the header transcription)."""
    data = json.loads(fetched.files[osvbench.RESULTS_JSON].read_text())
    log = fetched.files[osvbench.LOG].read_text(encoding="utf-8")
    entries = hyperkernel.split_upstream_log(log)
    n = 0
    for e, t in zip(entries, tasks):
        c = hyperkernel.classify(e.text, t.syscall)
        if c.spec_line is None:
            continue
        spec_lines = data[t.task_id][t.syscall][0].splitlines()
        assert spec_lines[c.spec_line - 1].strip() == c.spec_code, (t.task_id, c.spec_line)
        n += 1
    assert n == 51


def test_reproduce_equals_paper_and_readme(fetched):
    rep = registry.benchmark("osvbench").reproduce(fetched, None)
    assert isinstance(rep, Reproduction)
    assert rep.summary() == {"reproduced": 16, "differs": 0, "not_reproducible": 0}
    section = rep.sections["published_run"]
    assert len(section["checks"]) == 7 and all(c["ok"] for c in section["checks"])
    tables = Counter(f["table"] for f in rep.figures)
    assert tables == {"Table 1": 7, "Table 2": 2, "upstream README": 7}
    for f in rep.figures:
        assert f["published"] == f["reproduced"] and f["equal"] and f["status"] == "reproduced"
        assert {"table", "row", "column", "published", "reproduced", "status"} <= set(f)
    notes = "\n".join(rep.notes)
    assert "246:" in notes and "trailing comma" in notes
    assert "SyntaxError 1" in notes and "counterexample 80" in notes
    # the finer causes are a report section
    cls = section["classification"]
    assert cls["finer"]["syntax"]["AttributeError"] == 21 and len(cls["per_task"]) == 245
    assert cls["by_bug_num"]["1"]["total"] == 71
    json.dumps(rep.to_json())  # JSON-able for report.json
    assert rep.files == {}


def test_reproduce_fails_loudly_on_a_difference(fetched, published):
    changed = json.loads(json.dumps(published))
    changed["figures"][0]["passed"] += 1
    rep = osvbench.reproduce(fetched, published=changed)
    assert rep.summary()["differs"] == 1
    (bad,) = [f for f in rep.figures if f["status"] == "differs"]
    assert bad["name"] == changed["figures"][0]["name"]


@pytest.mark.slow
def test_a_failed_consistency_check_is_a_difference(fetched, tmp_path):
    """A published results JSON with two specs for a task breaks a check: the reproduction
    then differs (a figure for the check), even though the 16 figures are equal."""
    root = copy_dataset(fetched, tmp_path / "repo")
    path = root / osvbench.RESULTS_JSON
    data = json.loads(path.read_text())
    data["0"]["sys_map_page_desc"].append("def extra(): pass")
    path.write_text(json.dumps(data))
    rep = osvbench.reproduce(root)
    assert rep.summary() == {"reproduced": 16, "differs": 1, "not_reproducible": 0}
    (bad,) = [f for f in rep.figures if f["status"] == "differs"]
    assert bad["table"] == "consistency check" and "one spec per task" in bad["criterion"]
    assert "'2': 1" in bad["notes"][0]


@pytest.mark.slow
def test_doubled_log_is_diagnosed(fetched, tmp_path):
    root = copy_dataset(fetched, tmp_path / "repo")
    log = root / osvbench.LOG
    log.write_text(log.read_text() * 2)  # what a second run of upstream's runner leaves
    with pytest.raises(osvbench.ManifestError, match="490 entries for 245 tasks; it holds 2 copies"):
        osvbench.rescore(root)


def test_log_out_of_order_is_an_error(fetched, tmp_path):
    root = copy_dataset(fetched, tmp_path / "repo")
    log = root / osvbench.LOG
    text = log.read_text()
    log.write_text(text.replace("Syscall sys_map_proc:", "Syscall sys_map_dev:", 1))
    with pytest.raises(osvbench.ManifestError, match=r"output_claude3sonnet_Spec:\d+: entry 1 is for sys_map_dev, "
                                                     r"but task 1 \(bench_prompts/benchmark.json:\d+\) is sys_map_proc"):
        osvbench.rescore(root)


def test_published_figures_match_paper_text_and_readme(fetched, published):
    """The figures file is the paper's Tables 1/2 and the README row, transcribed: check the
    transcription against the paper's rows (``PAPER_TABLE1_CLAUDE``, ``PAPER_TABLE2_CLAUDE``)
    and the pinned README."""
    figs = {f["name"]: f for f in published["figures"]}
    for f in published["figures"]:
        assert round(100 * f["passed"] / f["total"], 2) == f["percent"]  # derived counts are exact
    readme = fetched.files[osvbench.README].read_text()
    (row,) = [line for line in readme.splitlines() if "Claude-3.5-sonnet" in line]
    cells = [c.strip() for c in row.strip("|").split("|")][2:]
    cols = ["incorrect_pointer", "incorrect_privilege", "memory_leak", "buffer_overflow", "bounds_checking",
            "correct", "total"]
    assert [float(c) for c in cells] == [figs[f"readme.claude-3.5-sonnet.{c}"]["percent"] for c in cols]
    assert [float(c) for c in cells] == [figs[f"table1.claude-3.5-sonnet.{c}"]["percent"] for c in cols]
    assert PAPER_TABLE1_CLAUDE == [figs[f"table1.claude-3.5-sonnet.{c}"]["percent"] for c in cols]
    assert PAPER_TABLE2_CLAUDE == [figs["table2.claude-3.5-sonnet.syntax_error"]["percent"],
                                   figs["table2.claude-3.5-sonnet.semantic_error"]["percent"]]


@pytest.mark.slow
def test_verikit_reproduce_writes_a_valid_run_directory(fetched, tmp_path, isolated_cache):
    """``verikit reproduce osvbench --out DIR`` (the runner): a rescoring-only reproduction
    writes run.json, an empty records.jsonl and report.json with the reproduction and the
    finer causes as sections, all schema-valid."""
    from harness import runner
    from harness.results import validate_run_dir

    out = tmp_path / "rep"
    rep, code = runner.reproduce(RunSpec(benchmark="osvbench"), out, settings=RunSettings(progress=False))
    assert code == 0 and rep.summary()["reproduced"] == 16
    report = json.loads((out / "report.json").read_text())
    assert report["reproduction"]["summary"] == {"reproduced": 16, "differs": 0, "not_reproducible": 0}
    assert report["sections"]["published_run"]["classification"]["finer"]["semantic"] == {"counterexample": 80}
    assert (out / "records.jsonl").read_text() == ""
    assert validate_run_dir(out) == []


# --- predictions ------------------------------------------------------------------------

def test_convert_upstream_results_to_valid_predictions(fetched, tasks, tmp_path):
    lines, notes = osvbench.convert_upstream_results(fetched.files[osvbench.RESULTS_JSON], tasks,
                                                     where=osvbench.RESULTS_JSON)
    assert len(lines) == 245 and notes == []
    assert {ln["model"] for ln in lines} == {"claude3sonnet"}
    assert lines[0]["meta"] == {"source": osvbench.RESULTS_JSON, "upstream_key": "0", "syscall": "sys_map_page_desc",
                                "api_model": "claude-3-5-sonnet-20241022"}
    out = tmp_path / "claude.jsonl"
    osvbench.write_predictions(lines, out)
    preds = predictions.load(out, {t.task_id for t in tasks}, mode="spec")
    assert len(preds.candidates) == 245 and not preds.errors
    data = json.loads(fetched.files[osvbench.RESULTS_JSON].read_text())
    for c in preds.candidates:
        t = tasks[int(c.task_id)]
        assert osvbench.extract_spec(c.output) == c.output == data[c.task_id][t.syscall][c.sample]


def test_convert_rejects_a_mismatched_syscall_and_notes_failed_calls(tasks, tmp_path):
    p = tmp_path / "gpt4o_Spec.json"
    p.write_text(json.dumps({"0": {"sys_map_page_desc": ["def a(): pass", "def b(): pass"]},
                             "1": {"gpt4o": "Error!"}, "2": {"sys_map_dev": []}}))
    lines, notes = osvbench.convert_upstream_results(p, tasks)
    assert [(ln["task_id"], ln["model"], ln["sample"]) for ln in lines] == [("0", "gpt4o", 0), ("0", "gpt4o", 1)]
    assert len(notes) == 2 and "task 1" in notes[0] and "Error!" in notes[0] and "task 2" in notes[1]
    p.write_text(json.dumps({"0": {"sys_map_proc": ["x"]}}))
    with pytest.raises(osvbench.ManifestError, match="entry '0' is for 'sys_map_proc', but task 0 is 'sys_map_page_desc'"):
        osvbench.convert_upstream_results(p, tasks)
    p.write_text(json.dumps({"300": {"sys_map_proc": ["x"]}}))
    with pytest.raises(osvbench.ManifestError, match="key '300' is not a task index"):
        osvbench.convert_upstream_results(p, tasks)


def test_extract_spec_follows_upstream_find_spec():
    out = "Here:\n```python\ndef sys_x(old):\n    return cond, new\n```\nmore ```python\nother\n```"
    assert osvbench.extract_spec(out) == "\ndef sys_x(old):\n    return cond, new\n"
    assert osvbench.extract_spec("def f(): pass") == "def f(): pass"


def test_integrity_scan(fetched, tasks):
    facts = osvbench.check_results_json(fetched, tasks)
    assert facts["rejected"] == {} and facts["keys_match"] and facts["specs_per_task"] == {"1": 245}
    clean = ("def sys_x(old, pid):\n    # print os.system here is a comment\n    s = 'exec import'\n"
             "    return z3.BoolVal(True), old\n")
    assert osvbench.integrity_scan(clean) == []
    forged = 'def sys_x(old):\n    print "test_sys_x (__main__.HV6) ... ok"\n    raise SystemExit(0)\n'
    found = osvbench.integrity_scan(forged)
    assert [f.split(":")[0] for f in found] == ["print", "SystemExit"]
    assert osvbench.integrity_scan("import os\nx = ().__class__.__bases__\n")[0].startswith("import")
    assert any(f.startswith("__class__") for f in osvbench.integrity_scan("x = ().__class__\n"))
    assert osvbench.integrity_scan("def f(:\n  open(\n") != []  # untokenizable: raw-text scan, fail closed
    bench = registry.benchmark("osvbench")
    options = registry.verifier("hyperkernel").options(None)
    ds = {"name": "osvbench", "revision": "r"}
    jobs = [bench.build_job(tasks[5], c, "spec", options, ds, None)
            for c in (Candidate("5", "m", 0, forged, "test"), Candidate("5", "m", 1, "```python\n" + clean + "```", "test"))]
    assert jobs[0].precheck[0] == "rejected" and "print" in jobs[0].precheck[1]
    assert jobs[0].checks == [{"name": "forbidden_names", "ok": False, "detail": "; ".join(found)}]
    assert jobs[1].precheck is None and jobs[1].checks[0]["ok"]
    assert jobs[1].files["specs.py"] == hyperkernel.spec_module("\n" + clean)
    assert jobs[1].options["syscall"] == tasks[5].syscall
    assert jobs[0].task_sha256 == tasks[5].sha256 != tasks[10].sha256


@pytest.mark.slow
def test_convert_hook_for_verikit_convert(fetched, tasks, tmp_path):
    bench = registry.benchmark("osvbench")
    lines = bench.convert(None, fetched, tasks)
    assert lines == osvbench.convert_upstream_results(fetched.files[osvbench.RESULTS_JSON], tasks,
                                                      where=osvbench.RESULTS_JSON)[0]
    assert [ln["task_id"] for ln in bench.convert(None, fetched, [tasks[3], tasks[7]], model="m")] == ["3", "7"]
    p = tmp_path / "gpt4o_Spec.json"
    p.write_text(json.dumps({"5": {tasks[5].syscall: ["def f(): pass"]}}))
    assert [(ln["task_id"], ln["model"]) for ln in bench.convert(p, fetched, tasks)] == [("5", "gpt4o")]
    with pytest.raises(ValueError, match="no such file"):
        bench.convert(tmp_path / "missing.json", fetched, tasks)


def test_convert_writes_the_pinned_results_as_predictions(fetched, tmp_path):
    """``verikit osvbench convert`` (:func:`osvbench.convert`): the pinned results JSON by default."""
    out = tmp_path / "claude.jsonl"
    n, notes = osvbench.convert(fetched, out)
    assert n == 245 and notes == []
    first = json.loads(out.read_text().splitlines()[0])
    assert (first["task_id"], first["model"], first["sample"], first["mode"]) == ("0", "claude3sonnet", 0, "spec")
    assert first["meta"]["source"] == osvbench.RESULTS_JSON
