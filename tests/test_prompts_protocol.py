"""The benchmarks' generation protocols: the papers' prompt templates as data
(every benchmark's ``prompts.yaml`` loads, each template has its source and a pinned
sha256), the chat messages for real tasks of each default dataset (through the data
mirror), the answer-extraction rules on representative completions, an empty candidate
judged ``invalid`` by every benchmark, ``verikit prompts``, and the verifier-feedback
messages built from real records: CASP's from the real Frama-C on this host (one module
run), Model-Bench's and NTP4VC's from records of real TLC and Coq runs in their images,
recorded in tests/recorded/feedback/ (``recorded``; tests/recorded/feedback/record.py
made them, and ``record.py --check`` re-runs them in the images and compares).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import registry
from harness.benchmarks import casp, modelbench, ntp4vc, osvbench
from harness.benchmarks import dafny_intent as di
from harness.benchmarks.prompting import (EMPTY_CANDIDATE, TemplateFileError, fenced_blocks, json_object_with,
                                          load_templates, strip_reasoning)
from harness.model import Candidate
from harness.results import validate

ROOT = Path(__file__).resolve().parents[1]
RECORDED = ROOT / "tests" / "recorded" / "feedback"
DATASET = {"name": "test", "revision": "0"}

#: Every template's sha256: a template whose text changes gets a new id (PromptTemplate),
#: so a changed hash here means a new id, not a new pin.
PINNED = {
    "casp-spec-from-code": "7e50cdfea341e102de8ae2e1733531b6f80f3a9d93223d285339f46c752657e2",
    "casp-output-format": "ffaf89175f8e17015dff094bf6a785fd3322ef3a7b3fc4f9dc09cf439b3cd3d1",
    "casp-repair": "a6115efd6ef233d3f6249c47b23e8b1c95fd9b2d4b47fc60d58d8063f593a361",
    "casp-context-subsequent": "585325296c8b7e06fcbab87f446e54bb0c4cfcebdaed54594c51ab89fad5bcbb",
    "casp-context-first": "f3e5dbc7f2d6939c4b798cf495544502fbb61f63b656138feec3d1e814b60696",
    "casp-code-from-spec": "a1fe8a4ff2968dea67c6bf3fd68d615394e0b109c197b5103adbb0d2b56f9fb2",
    "casp-code-output-format": "5fc577316c242fdff546cd519cda7af0f6f9e9f2546e67b0f4d165c47464b379",
    "casp-code-repair": "1ecddc2bbefeef1a3268f9904f654e4e8e0a478ef998b54c3a345a8257b3fcb3",
    "dafny-intent-postconditions": "bf1a112757db3bb6e366e4ff83f0b8374e6c4a0d6592bc14e5a0ec0e05bb0de3",
    "modelbench-generate": "51707118ca3b6a4fe697d5d47cb51d4ecb7d5832ea009679b8e745e36c9810e4",
    "modelbench-fix": "b4bb9a6132898c29f63d3dcc46ea6a6f1068c3046beb1bcf36725bb6fa59955b",
    "ntp4vc-rocq-general": "50f1dba9756a32f98746216ee0c820f03f919104ca85f05b7b783022c7f12bcb",
    "ntp4vc-lean-general": "8a287de9ca1317248372a3a3d25794cfd4ca4e23e426247ee634ed3d383afe77",
    "ntp4vc-isabelle-general": "ac410d53e4d96640a7c23c11ffa623c031224ec05ef942e634d3ec214067d946",
    "ntp4vc-context-file": "96fde98cabd4fed668093e9ee907fee2598ceb14a4686245ef27b354c35292fc",
    "ntp4vc-repair": "46794575980006d8927c768086fc9ff6103bfa59b3418012d9169bf6d673a217",
    "osvbench-system": "03e2b1ad42837b2df41078a2fc862707016e73c6b128c34b8270b75909ea1c56",
    "osvbench-task": "8f71008a4f0aa13f42815a75a37212ff697598d5d029c29a30cd94996cbb3621",
}
#: The papers' decoding settings: (samples, temperature, top_p, max_tokens, feedback turns).
SETTINGS = {("casp", "spec-from-code"): (1, None, None, None, 7), ("casp", "code-from-spec"): (1, None, None, None, 7),
            ("modelbench", "original-fewshot"): (3, 0.7, None, None, 5),
            ("ntp4vc", "rocq"): (8, 1.0, None, 32000, 0), ("ntp4vc", "lean"): (8, 1.0, None, 32000, 0),
            ("osvbench", "spec"): (1, 0.0, None, 4096, 0), ("dafny-intent", "spec"): (1, None, None, None, 0)}


# ---- templates as data


#: The kit's own benchmarks (an installed outside plugin may have no protocol).
KIT = ("casp", "dafny-intent", "modelbench", "ntp4vc", "osvbench")


def _protocols():
    for name in KIT:
        bench = registry.benchmark(name)
        for mode in bench.modes:
            proto = bench.protocol(mode)
            if proto is not None:
                yield name, mode, proto


def test_every_benchmark_has_a_protocol_with_sourced_pinned_templates():
    seen = {}
    for name, mode, proto in _protocols():
        assert proto.extraction and proto.extraction_doc and proto.source, (name, mode)
        for t in proto.templates:
            assert t.source.strip() and t.text.strip() and t.role in ("system", "user"), t.id
            assert t.sha256 == hashlib.sha256(t.text.encode("utf-8")).hexdigest()
            assert t.to_json() == {"id": t.id, "source": t.source, "role": t.role, "sha256": t.sha256, "note": t.note}
            if t.source == "verikit":
                assert "paper" in t.note and "kit" in t.note, t.id  # says why the kit wrote it
            assert seen.setdefault(t.id, t) == t, f"two templates named {t.id}"
    assert {n for n, _, _ in _protocols()} == set(KIT)
    assert {i: t.sha256 for i, t in seen.items()} == PINNED
    for (name, mode), want in SETTINGS.items():
        p = registry.benchmark(name).protocol(mode)
        assert (p.samples, p.temperature, p.top_p, p.max_tokens, p.feedback_turns) == want, (name, mode)
    # no protocol where nothing is generated
    assert registry.benchmark("casp").protocol("gold") is None
    assert registry.benchmark("ntp4vc").protocol("why3") is None


def test_templates_are_read_from_each_benchmarks_prompts_yaml():
    for pkg in ("casp", "modelbench", "ntp4vc", "osvbench", "dafny_intent"):
        path = ROOT / "harness" / "benchmarks" / pkg / "prompts.yaml"
        loaded = load_templates(path)
        assert loaded and all(t.id in PINNED for t in loaded.values()), pkg
    # the paper's texts stay the paper's: spot checks against the papers' own words
    t = load_templates(ROOT / "harness/benchmarks/casp/prompts.yaml")
    assert t["casp-repair"].text.startswith("Your task is to correct ACSL specifications based on C code and error "
                                            "messages from Frama-C.\n")
    assert t["casp-repair"].text.endswith("Frama-C Error Message (From Previous Attempt):\n{error_message}")
    assert '"fixed_code": "Complete corrected code with fixed ACSL specifications here"' in \
        t["casp-output-format"].text.format()
    assert modelbench.FIX_TEMPLATE == ("The TLA+ specification has the following error:\n{error}\n"
                                       "Please fix the specification while keeping the same logic.")
    n = load_templates(ROOT / "harness/benchmarks/ntp4vc/prompts.yaml")
    assert n["ntp4vc-rocq-general"].text.endswith("Response the Rocq proof only. Do not repeate any context nor the "
                                                  "statement.")


@pytest.mark.parametrize("text, message", [
    ("- id: a\n  source: s\n  text: [unclosed\n", "not valid YAML"),
    ("id: a\n", ":1: expected a list of templates"),
    ("- id: a\n  text: t\n", ":1: field 'source' must be a non-empty string"),
    ("- id: a\n  source: s\n  text: t\n- id: a\n  source: s\n  text: u\n", ":4: duplicate template id 'a'"),
    ("- id: a\n  source: verikit\n  text: t\n", ":1: template 'a' is the kit's own"),
    ("- id: a\n  source: s\n  text: 'x {:axiom} y'\n", "not a str.format template"),
    ("- id: a\n  source: s\n  role: assistant\n  text: t\n", "role 'assistant'"),
    ("- id: a\n  source: s\n  text: t\n  extra: 1\n", "unknown field(s) ['extra']"),
])
def test_a_malformed_prompts_file_names_file_and_line(tmp_path, text, message):
    path = tmp_path / "prompts.yaml"
    path.write_text(text)
    with pytest.raises(TemplateFileError) as exc:
        load_templates(path)
    assert str(exc.value).startswith(str(path)) and message in str(exc.value)


# ---- messages for real tasks of each default dataset


@pytest.fixture(scope="module")
def casp_data(casp_fetched):
    return casp_fetched, {t.task_id: t for t in casp.load_tasks(casp_fetched)}


def test_casp_messages_hold_the_task(casp_data):
    fetched, tasks = casp_data
    bench = registry.benchmark("casp")
    t = tasks["07_71"]
    (msg,) = bench.messages(fetched, t, "spec-from-code")
    assert msg["role"] == "user" and t.code.strip() in msg["content"] and "`decypher`" in msg["content"]
    assert t.prelude.strip() in msg["content"] and t.contract.strip() not in msg["content"]  # the answer is not given
    assert msg["content"].endswith(casp.generation.TEMPLATES["casp-output-format"].text.format())
    (msg,) = bench.messages(fetched, tasks["01_57"], "code-from-spec")
    assert tasks["01_57"].contract.strip() in msg["content"] and "int divmult(int a, int b)" in msg["content"]
    assert "return" not in msg["content"]  # the task's code is not given
    with pytest.raises(NotImplementedError, match="gold"):
        bench.messages(fetched, t, "gold")


def test_ntp4vc_messages_hold_the_goal_and_its_library(ntp4vc_fetched):
    bench = registry.benchmark("ntp4vc")
    task = next(t for t in bench.load_tasks(ntp4vc_fetched) if t.task_id == ntp4vc.CANARY_TASK)
    for lang, first in (("rocq", "File `Base.v`:\n"), ("lean", "File `Base.lean`:\n"),
                        ("isabelle", "File `NTP4Verif.thy`:\n")):
        (msg,) = bench.messages(ntp4vc_fetched, task, lang)
        goal = ntp4vc_fetched.files[task.file(lang)].read_text(encoding="utf-8").rstrip("\n")
        name = ntp4vc.generation.LANGUAGE_NAMES[lang]
        assert msg["content"].startswith(f"Given the following {name} theories as context, prove the {name} "
                                         f"proposition given at the end.\n{first}"), lang
        assert msg["content"].endswith(f"in the following {name} code:\n{goal}\nResponse the {name} proof only. "
                                       "Do not repeate any context nor the statement."), lang
        files = ntp4vc.generation.context_files(ntp4vc_fetched, task, lang)
        assert files and all(text.rstrip("\n") in msg["content"] for _, text in files)
    assert "Theorem power'vc" in bench.messages(ntp4vc_fetched, task, "rocq")[0]["content"]
    # a context over the budget keeps the files nearest the goal and names the others
    real_c = next(t for t in bench.load_tasks(ntp4vc_fetched) if t.source == "frama_c")
    files = ntp4vc.generation.context_files(ntp4vc_fetched, real_c, "rocq")
    assert len(files) > 2 and files[0][0] == "generation/rocq/Why3/Base.v"
    small = ntp4vc.generation.context(files, budget=len(files[-1][1]) + len(files[-2][1]))
    assert small.startswith(f"File `{Path(files[-2][0]).name}`:")
    assert small.endswith(f"({len(files) - 2} more library file(s) left out for the prompt's size: Base.v, "
                          + ", ".join(Path(p).name for p, _ in files[1:-2]) + ")")
    with pytest.raises(NotImplementedError):
        bench.messages(ntp4vc_fetched, task, "why3")


@pytest.mark.slow
def test_modelbench_messages_are_the_figure_14_prompt():
    bench = registry.benchmark("modelbench")
    fetched = modelbench.fetch()
    task = next(t for t in bench.load_tasks(fetched) if t.task_id == "HumanEval/13")
    for mode in modelbench.MODES:
        (msg,) = bench.messages(fetched, task, mode)
        assert msg == {"role": "user", "content": modelbench.prompt(task, mode)}
        assert "Module Name: HumanEval_13\n```python\n" in msg["content"]
    assert "def greatest_common_divisor" in bench.messages(fetched, task, "original-zeroshot")[0]["content"]


def test_osvbench_messages_are_upstreams(osvbench_fetched):
    bench = registry.benchmark("osvbench")
    tasks = bench.load_tasks(osvbench_fetched)
    system, user = bench.messages(osvbench_fetched, tasks[2], "spec")
    full = osvbench_fetched.files[osvbench.FULL_PROMPT_EXAMPLE].read_text(encoding="utf-8")
    assert system == {"role": "system", "content": osvbench.SYSTEM_PROMPT}
    assert user == {"role": "user", "content": full[:-1]}  # byte for byte upstream's 5-shot prompt
    assert tasks[2].code in user["content"] and "```python\\n{code}\\n```" in system["content"]


@pytest.fixture(scope="module")
def dafny_tasks(dafny_intent_fetched):
    return di.load_tasks(dafny_intent_fetched)


@pytest.mark.slow
def test_dafny_messages_give_the_intent_not_the_tests(dafny_intent_fetched, dafny_tasks):
    bench = registry.benchmark("dafny-intent")
    task = next(t for t in dafny_tasks if t.task_id == "2")
    (msg,) = bench.messages(dafny_intent_fetched, task, "spec")
    text = msg["content"]
    assert "Write a method in Dafny to find the shared elements from the given two array." in text
    assert "method SharedElements(a: array<int>, b: array<int>) returns (result: seq<int>)" in text
    assert "[3, 4, 5, 6]" not in text and "InArray" not in text and "res := res" not in text
    assert "{:axiom}" in text  # a doubled brace of the template renders as one


def test_dafny_messages_need_a_description(tmp_path):
    (tmp_path / "p.dfy").write_text("method Twice(x: int) returns (r: int)\n  ensures r == 2 * x\n{ r := x + x; }\n"
                                    "method TwiceTest() { var r := Twice(2); assert r == 4; }\n"
                                    "method Main() { TwiceTest(); }\n")
    bench = registry.benchmark("dafny-intent")
    (task,) = bench.load_tasks(tmp_path)
    with pytest.raises(ValueError, match="p.dfy: no natural-language description"):
        bench.messages(tmp_path, task, "spec")


# ---- extraction rules


def test_shared_pieces_of_the_rules():
    text = "a\n  - item\n\n    ```c\n    int x;\n    ```\n~~~~lean4 extra\nx\n~~~~\n```json\n{\"a\": 1\n"
    assert [(b.lang, b.text) for b in fenced_blocks(text)] == [("c", "int x;\n"), ("lean4", "x\n"),
                                                               ("json", '{"a": 1\n')]
    assert strip_reasoning("<think>```c\nint a;\n```</think>ok") == "ok"
    assert strip_reasoning("ans <think>never closed") == "ans "
    assert json_object_with('say {"x": 1} then {"fixed_code": "a\nb"}', "fixed_code") == {"fixed_code": "a\nb"}
    assert json_object_with('{"fixed_code": "a', "fixed_code") is None


CASP_CODE = "/*@ assigns \\nothing;\n    ensures \\result == 2 * n; */\nint twice(int n) {\n  return n + n;\n}"


@pytest.mark.parametrize("completion, want", [
    (json.dumps({"explanation": "e", "assumptions": "a", "fixed_code": CASP_CODE, "strategies": "s"}), CASP_CODE),
    ("Here you go:\n```json\n" + json.dumps({"fixed_code": CASP_CODE}, indent=2) + "\n```\nDone.", CASP_CODE),
    # raw newlines inside the JSON string (invalid JSON, as models write it): accepted
    ('{"explanation": "x", "fixed_code": "' + CASP_CODE.replace("\\", "\\\\") + '"}', CASP_CODE),
    # ACSL written inside the JSON string without escaping its backslashes: read as ACSL (\nothing is not
    # a newline, \result not a carriage return, \valid not an error), while the string's \n stay newlines
    (r'{"explanation": "x", "fixed_code": "/*@ assigns \nothing;\n    ensures \result == 2 * n; */\nint twice(int n) '
     r'{\n  return n + n;\n}"}', CASP_CODE),
    (r'{"fixed_code": "/*@ requires \valid(p); */\nint f(int *p) { return *p; }"}',
     "/*@ requires \\valid(p); */\nint f(int *p) { return *p; }"),
    # the value is itself a fenced block
    (json.dumps({"fixed_code": "```c\n" + CASP_CODE + "\n```"}), CASP_CODE + "\n"),
    # broken JSON: no object decodes, a C block is taken; a json block never is
    ('{"fixed_code": "int f(\n```c\n' + CASP_CODE + "\n```", CASP_CODE + "\n"),
    ('```json\n{"fixed_code": "int twice(int n) {\n```', None),
    # no JSON: the last C block of several
    ("```c\nint draft;\n```\nbetter:\n```c\n" + CASP_CODE + "\n```", CASP_CODE + "\n"),
    ("<think>```c\nint draft;\n```</think>no code at all", None),
    ("", None),
    (json.dumps({"fixed_code": "   "}), None),
])
def test_casp_extraction(completion, want):
    assert registry.benchmark("casp").extract(completion, "spec-from-code") == want


@pytest.mark.parametrize("completion, want", [
    ("```coq\nProof. lia. Qed.\n```", "Proof. lia. Qed.\n"),
    ("Proof.\n  lia.\nQed.", "Proof.\n  lia.\nQed."),  # unfenced: the whole completion
    ("```\nProof. auto. Qed.\n```\nor better\n```coq\nProof. lia. Qed.\n```\n```text\nnotes\n```",
     "Proof. lia. Qed.\n"),  # the last block in the language wins over later untagged ones
    ("```\nProof. auto. Qed.\n```\n```\nProof. lia. Qed.\n```", "Proof. lia. Qed.\n"),
    ("<think>try ```coq\nProof. admit. Qed.\n```</think>\n```rocq\nProof. lia. Qed.\n```", "Proof. lia. Qed.\n"),
    ("  \n", None), ("```coq\n```", None),
])
def test_ntp4vc_extraction(completion, want):
    assert registry.benchmark("ntp4vc").extract(completion, "rocq") == want


def test_ntp4vc_extraction_prefers_the_language_of_the_mode():
    two = "```lean\nby simp\n```\n```coq\nProof. lia. Qed.\n```\n```isabelle\nby auto\n```"
    bench = registry.benchmark("ntp4vc")
    assert [bench.extract(two, m) for m in ("rocq", "lean", "isabelle")] == ["Proof. lia. Qed.\n", "by simp\n",
                                                                             "by auto\n"]


TLA = "---- MODULE HumanEval_13 ----\nVARIABLE x\nInit == x = 0\n===="


@pytest.mark.parametrize("completion, want", [
    ("```tla\n" + TLA + "\n```", TLA + "\n"),
    ("Sure.\n```python\nprint(1)\n```\n```\n" + TLA + "\n```\n```tla\n---- MODULE B ----\n====\n```", TLA + "\n"),
    ("Model:\n" + TLA + "\nThat is all.", "Model:\n" + TLA + "\nThat is all."),  # SANY ignores the prose around
    ("```tla\nVARIABLE x\n```", None), ("I cannot do this.", None), ("", None),
])
def test_modelbench_extraction(completion, want):
    assert registry.benchmark("modelbench").extract(completion, "original-fewshot") == want


@pytest.mark.parametrize("completion, want", [
    ("```python\ndef spec(): pass\n```\n```python\nsecond\n```", "\ndef spec(): pass\n"),  # upstream's [9:-3]
    ("def spec(): pass", None),  # upstream's find_spec matches a ```python block only
    ("```py\nx\n```", None), ("<think>```python\ndraft\n```</think>", None),
])
def test_osvbench_extraction_is_upstreams_find_spec(completion, want):
    assert registry.benchmark("osvbench").extract(completion, "spec") == want


@pytest.mark.parametrize("completion, want", [
    ("```dafny\nmethod M(x: int) returns (r: int)\n  ensures r == x\n```", "method M(x: int) returns (r: int)\n"
                                                                         "  ensures r == x\n"),
    ("ensures r == x", "ensures r == x"), ("```\na\n```\n```dafny\nb\n```\n```\nc\n```", "b\n"), ("\n", None),
])
def test_dafny_extraction(completion, want):
    assert registry.benchmark("dafny-intent").extract(completion, "spec") == want


# ---- an empty candidate (no extractable answer) is invalid in every benchmark


@pytest.mark.slow
def test_an_empty_candidate_is_invalid_without_running(casp_data, ntp4vc_fetched, dafny_tasks, osvbench_fetched):
    from harness.benchmarks.ntp4vc.proofs import build_proof_job, proof_context
    from harness.verifiers.rocq import Rocq

    _, tasks = casp_data
    mtask = next(t for t in modelbench.load_tasks(modelbench.fetch()) if t.task_id == "HumanEval/13")
    osv = registry.benchmark("osvbench")
    otask = osv.load_tasks(osvbench_fetched)[0]
    dtask = dafny_tasks[0]
    ntask = next(t for t in ntp4vc.load_tasks(ntp4vc_fetched) if t.task_id == ntp4vc.CANARY_TASK)
    ctx = proof_context(ntp4vc_fetched, "rocq", Rocq())
    for out in ("", "  \n"):
        for mode in ("spec-from-code", "code-from-spec"):
            job = casp.build_job(tasks["01_57"], Candidate("01_57", "m", 0, out, "t"), mode, {}, DATASET)
            assert job.precheck[0] == "invalid", (mode, job.precheck)
        job = modelbench.build_job(mtask, Candidate("HumanEval/13", "m", 0, out, "t"), "original-fewshot", {}, DATASET)
        assert job.precheck == ("invalid", EMPTY_CANDIDATE)
        job = osv.build_job(otask, Candidate("0", "m", 0, out, "t"), "spec", {}, DATASET, None)
        assert job.precheck == ("invalid", EMPTY_CANDIDATE)
        job = di.build_job(dtask, Candidate(dtask.task_id, "m", 0, out, "t"), "spec", {}, DATASET, None)
        assert job.precheck[0] == "invalid"
        job = build_proof_job(ntask, Candidate(ntask.task_id, "m", 0, out, "t"), "rocq", {}, DATASET, ctx,
                              version="1")
        assert job.precheck == ("invalid", EMPTY_CANDIDATE)


# ---- verikit prompts


def _cli(capsys, *args: str) -> tuple[int, str, str]:
    """``verikit prompts ARGS`` in this process: (exit code, stdout, stderr)."""
    from harness.cli import main

    capsys.readouterr()
    code = main(["prompts", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_verikit_prompts_prints_the_messages_of_every_benchmark(capsys, casp_data, ntp4vc_fetched, osvbench_fetched,
                                                                dafny_intent_fetched):
    cases = [("casp", ["--task", "01_57"], "spec-from-code", {"task_id", "mode", "messages", "template_ids"}),
             ("casp", ["--mode", "code-from-spec", "--task", "01_57"], "code-from-spec", None),
             ("ntp4vc", ["--lang", "lean", "--task", ntp4vc.CANARY_TASK], "lean", None),
             ("modelbench", ["--task", "HumanEval/13"], "original-fewshot",
              {"task_id", "mode", "module", "prompt", "messages", "template_ids"}),
             ("osvbench", ["--task", "2", "--shots", "1"], "spec",
              {"task_id", "mode", "shots", "system", "prompt", "messages", "template_ids"}),
             ("dafny-intent", ["--task", "2"], "spec", None)]
    for name, args, mode, keys in cases:
        code, out, err = _cli(capsys, name, *args)
        assert code == 0, (name, err)
        (line,) = [json.loads(x) for x in out.splitlines()]
        assert line["mode"] == mode and line["messages"][-1]["role"] == "user", name
        assert keys is None or set(line) == keys, name
        ids = {t.id for t in registry.benchmark(name).protocol(mode).templates}
        assert line["template_ids"] and set(line["template_ids"]) <= ids, name
        if name == "osvbench":
            assert line["messages"][1]["content"] == line["prompt"] and "Example 2:" not in line["prompt"]
    for args, message in ((["casp", "--mode", "gold"], "casp's gold mode has no prompts"),
                          (["ntp4vc", "--lang", "why3", "--task", ntp4vc.CANARY_TASK], "why3 mode has no prompts"),
                          (["casp", "--mode", "nope"], "unknown casp mode 'nope'"),
                          (["ntp4vc", "--shots", "2", "--task", ntp4vc.CANARY_TASK], "zero-shot")):
        code, _, err = _cli(capsys, *args)
        assert code == 2 and message in err and "Traceback" not in err, (args, err)
    # the console script: a bad mode is a message and exit 2, no traceback
    proc = subprocess.run([sys.executable, "-m", "harness", "prompts", "casp", "--mode", "gold"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2 and "gold mode has no prompts" in proc.stderr and "Traceback" not in proc.stderr


# ---- verifier feedback from real records


#: CASP candidates on the kit's own pair (``twice``: no prelude, so the one task run is
#: short), each checked by the real Frama-C: a contract Frama-C rejects (an unbound logic
#: variable) and code whose ensures WP cannot prove.
CASP_TWICE = casp.KIT_CANARY
CASP_BAD_SPEC = {"explanation": "the result is doubled", "assumptions": "n is small",
                 "fixed_code": "/*@ requires 0 <= n <= 1000;\n    assigns \\nothing;\n    ensures \\result == "
                               "UNDEFINED_K; */\n" + CASP_TWICE.code,
                 "strategies": ["use Z3", "raise the timeout"]}
CASP_BAD_CODE = "int twice(int n) {\n  return n * 3;\n}\n"


@pytest.fixture(scope="module")
def casp_records(framac_host, tmp_path_factory):
    """Real records of the two CASP candidates (one run, 2 jobs in parallel)."""
    items = [(CASP_TWICE, "spec-from-code", CASP_BAD_SPEC["fixed_code"]), (CASP_TWICE, "code-from-spec", CASP_BAD_CODE)]
    got = framac_host.run_items(items, tmp_path_factory.mktemp("casp-feedback"), execution=False)
    return [got[(CASP_TWICE.task_id, mode, out)] for _, mode, out in items]


@pytest.mark.realtool
def test_casp_feedback_is_the_papers_repair_prompt_with_frama_cs_errors(casp_records):
    spec, code = casp_records
    assert (spec["verdict"], code["verdict"]) == ("invalid", "failed")
    bench = registry.benchmark("casp")
    previous = "Sure:\n```json\n" + json.dumps(CASP_BAD_SPEC, indent=1) + "\n```"
    text = bench.feedback(spec, "spec-from-code", previous=previous)
    t = casp.generation.TEMPLATES
    assert text.startswith(t["casp-repair"].text.split("{file_content}")[0] + CASP_BAD_SPEC["fixed_code"] + "\n")
    assert "Frama-C Error Message (From Previous Attempt):\n[kernel:annot-error] candidate.c:3: Warning: unbound " \
           "logic variable UNDEFINED_K" in text
    assert ("Previous Explanation: the result is doubled\nPrevious Assumptions: n is small\n"
            'Previous Strategies Suggested: ["use Z3", "raise the timeout"]\n') in text
    assert text.endswith(t["casp-output-format"].text.format())
    # without the previous completion (or with one that has no JSON): Listing 2
    for prev in (None, "```c\n" + CASP_BAD_SPEC["fixed_code"] + "\n```"):
        other = bench.feedback(spec, "spec-from-code", previous=prev)
        assert t["casp-context-first"].text in other and "Previous Explanation" not in other
    # failed goals: as WP printed them, in the code-from-spec adaptation
    text = bench.feedback(code, "code-from-spec", previous=json.dumps({"fixed_code": CASP_BAD_CODE}))
    assert text.startswith("Your task is to correct a C function and its loop annotations")
    error = casp.generation.framac_error(code)
    assert error.startswith(f"Frama-C WP proved {code['goals']['proved']} of {code['goals']['total']} goals. "
                            "Non-verifying goals:\n[wp] [Failed] Goal typed_twice_ensures\n")
    assert error in text and "Smoke-test" not in error and t["casp-code-output-format"].text.format() in text
    assert "int twice(int n) {\n  return n * 3;\n}" in text
    # nothing to repair
    assert bench.feedback({**code, "verdict": "verified"}, "code-from-spec") is None
    assert bench.feedback({**code, "verdict": "infra_error"}, "code-from-spec") is None


def _by_case(records: list[dict], cases: dict) -> dict[str, dict]:
    """case -> its record (matched by task and sample)."""
    where = {(r["task_id"], r["candidate"]["sample"]): r for r in records}
    return {case: where[(c["task_id"], c["sample"])] for case, c in cases.items()}


def _recorded(name: str) -> tuple[list[dict], dict]:
    path = RECORDED / f"{name}.records.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    provenance = json.loads((RECORDED / f"{name}.provenance.json").read_text(encoding="utf-8"))
    for r in records:
        validate("record", r)
    return records, provenance


@pytest.mark.recorded
def test_modelbench_feedback_is_figure_12_with_tlcs_error():
    records, prov = _recorded("modelbench")
    assert prov["tool"].startswith("TLC") and prov["image_id"].startswith("sha256:")
    by = _by_case(records, prov["cases"])
    assert {c: r["verdict"] for c, r in by.items()} == {c: v["verdict"] for c, v in prov["cases"].items()}
    bench = registry.benchmark("modelbench")
    head = "The TLA+ specification has the following error:\n"
    tail = "\nPlease fix the specification while keeping the same logic."
    parse = bench.feedback(by["parse_error"], "original-fewshot")
    assert by["parse_error"]["verdict"] == "invalid" and parse.startswith(head) and parse.endswith(tail)
    assert parse == head + '***Parse Error*** Encountered "b" at line 11, column 15 and token "while"' + tail
    violated = bench.feedback(by["invariant_violated"], "original-fewshot")
    assert by["invariant_violated"]["verdict"] == "failed"
    assert violated.startswith(head + "Invariant Assertion is violated.\nThe behavior up to this point is:\n"
                               "1: <Initial predicate>\n/\\ ")
    assert "\n3: <Loop line 12, col 9 to line 19, col 40 of module HumanEval_13>\n" in violated
    runtime = bench.feedback(by["runtime_error"], "original-fewshot")
    assert runtime == (head + "Attempted to apply function: <<-2>> to argument 0, which is not in the domain of the "
                       "function. (line 13, col 22)" + tail)
    assert bench.feedback(by["verified"], "original-fewshot") is None and by["verified"]["verdict"] == "verified"
    assert by["empty"]["verdict"] == "invalid" and by["empty"]["reason"] == EMPTY_CANDIDATE  # TLC never ran
    assert by["empty"]["timings"]["wall_s"] == 0


@pytest.mark.recorded
def test_ntp4vc_feedback_carries_coqs_whole_error():
    records, prov = _recorded("ntp4vc-rocq")
    assert prov["tool"].startswith("Coq") and prov["image_id"].startswith("sha256:")
    by = _by_case(records, prov["cases"])
    assert {c: r["verdict"] for c, r in by.items()} == {c: v["verdict"] for c, v in prov["cases"].items()}
    bench = registry.benchmark("ntp4vc")
    ill = bench.feedback(by["ill_typed"], "rocq")
    assert by["ill_typed"]["verdict"] == "invalid" and by["ill_typed"]["reason"] == "line 33: In environment"
    # the whole message, where the record's reason has its first line only
    assert ill.startswith("The Rocq proof checker did not accept the proof:\nline 33, characters 8-9:\nError:\n"
                          "In environment\nn : Z\n")
    assert 'The term "I" has type "True" while it is expected to have type\n "let o1 := n - 1 in' in ill
    assert ill.endswith("Please fix the proof. Response the Rocq proof only. Do not repeate any context nor the "
                        "statement.")
    axiom = bench.feedback(by["new_axiom"], "rocq")
    assert by["new_axiom"]["verdict"] == "rejected" and by["new_axiom"]["reason"] in axiom
    assert "command Axiom is not allowed" in axiom
    assert by["empty"]["verdict"] == "invalid" and by["empty"]["reason"] == EMPTY_CANDIDATE  # never ran
    assert by["empty"]["timings"]["wall_s"] == 0
    assert bench.feedback(by["verified"], "rocq") is None and by["verified"]["verdict"] == "verified"
