"""``verikit generate ntp4vc --lang rocq`` end to end: NTP4VC's zero-shot
protocol (Appendix F's general prompt, the kit's repair message for a feedback turn)
against the OpenAI-compatible stand-in, with the real Coq 8.20.1 of the ``ntp4vc-rocq``
image (Podman) in the loop, then ``verikit run`` on the predictions it wrote.

The stand-in answers ``power'vc`` (the canary task) first with a proof that uses
``omega`` (a tactic Coq removed in 8.14, a mistake models trained on older Coq make):
Coq's real error ("The reference omega was not found ...") must come back in the repair
turn's user message, and the model's answer to it (``lia``) is ``verified`` in turn 2. It
answers ``back_node'vc`` (AVL) with a reasoning section cut off by ``--max-tokens``
(finish reason ``length``, an unclosed ``<think>``) in both turns: no proof can be
extracted, so the candidate is empty, judged ``invalid`` (Coq never runs) and kept,
not dropped.

Checked: predictions.jsonl and generation.json are schema-valid and record every turn
(request hash, finish reason, extraction, verdict); a second ``generate`` with the same
arguments sends no request; ``verikit run`` scores the final candidates (``verified``,
``invalid``) with every verdict from the result cache. The result cache is the session's
(``shared_cache``, with ``--timeout 120`` as test_ntp4vc_rocq's canary run), so in a full
session the mode's 12 canaries are that file's Coq runs, re-derived here.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.benchmarks import ntp4vc
from harness.benchmarks.prompting import EMPTY_CANDIDATE
from harness.cli import main
from harness.results import load_records, validate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_standin import OpenAIStandIn  # noqa: E402

pytestmark = [pytest.mark.container, pytest.mark.realtool, pytest.mark.slow]

MODEL = "standin/prover-7b"
POWER = ntp4vc.CANARY_TASK
AVL = "pearl/avl/avl::avl_AVL_back_nodeqtvc"
MAX_TOKENS = 120  # the stand-in counts words: the AVL reasoning below is longer, so it is cut
REPAIR = "The Rocq proof checker did not accept the proof:"  # the start of ntp4vc-repair
WRONG = ("The statement is linear arithmetic over Z once the let is unfolded.\n\n"
         "```coq\nProof.\n  cbv zeta.\n  omega.\nQed.\n```\n")
RIGHT = ("`omega` was removed from Coq; `lia` decides the same linear goals.\n\n"
         "```coq\nProof.\n  cbv zeta.\n  lia.\nQed.\n```\n")
THINKING = "<think>\n" + " ".join(["The balance invariant of the AVL node must be restored after the rotation,"
                                   " so consider the heights of both subtrees."] * 12)


def first_prompt(body: dict) -> str:
    return body["messages"][0]["content"]


def repair_answer(body: dict) -> str:
    """The answer to the repair turn, by the task of the chat's first prompt."""
    return RIGHT if "Theorem power'vc" in first_prompt(body) else THINKING


def generate(srv: OpenAIStandIn, out: Path, common: list[str]) -> int:
    return main(["generate", "ntp4vc", "--lang", "rocq", "--model", MODEL, "--base-url", srv.base_url,
                 "--out", str(out), "--task", POWER, "--task", AVL, "--samples", "1", "--max-tokens", str(MAX_TOKENS),
                 "--feedback-turns", "1", *common])


@pytest.fixture(scope="module")
def loop(ntp4vc_fetched, engine_image, shared_cache, tmp_path_factory, monkeypatch_module):
    """generate (one feedback turn), the same generate again, then run; all with the real
    Coq and the shared result cache: ``(requests answered in the first generate, requests
    the second sent, the first generation.json, generation dir, run dir, exit codes)``."""
    from harness import runner

    engine_image(lambda: runner.job_image(ntp4vc.BENCHMARK, "rocq", ntp4vc_fetched, build=False))
    root = tmp_path_factory.mktemp("ntp4vc-gen")
    monkeypatch_module.delenv("OPENAI_API_KEY", raising=False)
    answers = {REPAIR: repair_answer, "Theorem power'vc": WRONG, "Theorem back_node'vc": THINKING}
    common = ["--sandbox", "container", "-j", "2", "--timeout", "120", "--cache-dir", str(shared_cache),
              "--data-dir", str(root / "data")]
    with OpenAIStandIn(answers, models=(MODEL,)) as srv:
        first = generate(srv, root / "gen", common)
        requests = srv.answered()
        sent = srv.completions
        first_gen = json.loads((root / "gen" / "generation.json").read_text())
        again = generate(srv, root / "gen", common)
        resent = srv.completions - sent
    run = main(["run", "ntp4vc", "--lang", "rocq", "--predictions", str(root / "gen" / "predictions.jsonl"),
                "--out", str(root / "run"), *common])
    return requests, resent, first_gen, root / "gen", root / "run", (first, again, run)


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_coqs_real_error_goes_back_and_the_fix_is_verified(loop):
    requests, resent, _, _, _, codes = loop
    assert codes[:2] == (0, 0)
    assert len(requests) == 4  # 2 first turns + 2 repair turns (the AVL chat gets one too: invalid)
    repair = next(r.body["messages"] for r in requests if len(r.body["messages"]) == 3
                  and "Theorem power'vc" in r.body["messages"][0]["content"])
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert repair[1]["content"] == WRONG  # the completion as the model wrote it
    # Coq's own words, at the task file's line numbers: the theorem is on line 31, the
    # proof replaces its Admitted on line 32, so omega is line 34, characters 2-7
    assert repair[2]["content"] == (f"{REPAIR}\nline 34, characters 2-7:\n"
                                    "Error: The reference omega was not found in the current environment.\n"
                                    "Please fix the proof. Response the Rocq proof only. Do not repeate any context "
                                    "nor the statement."), repair[2]["content"]
    # the first turn: the paper's general prompt with the goal, the protocol's parameters
    body = next(r.body for r in requests if len(r.body["messages"]) == 1 and "Theorem power'vc" in first_prompt(r.body))
    assert body["temperature"] == 1.0 and body["max_tokens"] == MAX_TOKENS and body["seed"] == 0
    # the AVL chat: no proof, so the kit's reason goes back (Coq never ran)
    avl = next(r.body["messages"] for r in requests if len(r.body["messages"]) == 3
               and "Theorem back_node'vc" in r.body["messages"][0]["content"])
    assert avl[1]["content"] == " ".join(THINKING.split()[:MAX_TOKENS])  # cut at --max-tokens, as the server sent it
    assert avl[2]["content"].startswith(f"{REPAIR}\n{EMPTY_CANDIDATE}\n")
    assert resent == 0  # the same command again: nothing sent


def test_generation_records_every_turn(loop):
    _, _, first_gen, gen_dir, _, _ = loop
    preds = [json.loads(x) for x in (gen_dir / "predictions.jsonl").read_text().splitlines()]
    for n, line in enumerate(preds, 1):
        validate("predictions", line, f"predictions.jsonl:{n}")
    by_task = {p["task_id"]: p for p in preds}
    assert sorted(by_task) == sorted([POWER, AVL]) and len(preds) == 2
    assert by_task[POWER]["output"] == "Proof.\n  cbv zeta.\n  lia.\nQed.\n"
    assert by_task[POWER]["meta"] == {"extracted": True, "turns": 2, "fixes": 1, "finish_reason": "stop"}
    assert by_task[POWER]["prompt_id"] == "ntp4vc-rocq-general" and by_task[POWER]["mode"] == "rocq"
    assert by_task[AVL]["output"] == ""  # no proof: kept as an empty candidate
    assert by_task[AVL]["meta"] == {"extracted": False, "turns": 2, "fixes": 1, "finish_reason": "length"}
    gen = json.loads((gen_dir / "generation.json").read_text())
    validate("generation", gen)
    assert gen["protocol"]["extraction"]["id"] == "ntp4vc-proof"
    assert [t["id"] for t in gen["protocol"]["templates"]] == ["ntp4vc-rocq-general", "ntp4vc-context-file",
                                                               "ntp4vc-repair"]
    assert gen["protocol"]["paper"]["feedback_turns"] == 0 and gen["decoding"]["feedback_turns"] == 1
    assert gen["decoding"]["max_tokens"] == MAX_TOKENS and gen["decoding"]["source"]["max_tokens"] == "user"
    assert gen["decoding"]["temperature"] == 1.0 and gen["decoding"]["source"]["temperature"] == "protocol"
    assert gen["verifier_runs"] == ["turns/1/run", "turns/2/run"]
    by = {s["task_id"]: s for s in gen["samples"]}
    power, avl = by[POWER], by[AVL]
    assert [t["verdict"] for t in power["turns"]] == ["invalid", "verified"]
    assert power["stopped"] == "verified" and power["verdict"] == "verified" and power["fixes"] == 1
    assert [t["extracted"] for t in power["turns"]] == [True, True]
    assert [t["verdict"] for t in avl["turns"]] == ["invalid", "invalid"] and avl["stopped"] == "turn-limit"
    assert [t["finish_reason"] for t in avl["turns"]] == ["length", "length"]
    assert [t["extracted"] for t in avl["turns"]] == [False, False] and not avl["extracted"]
    assert [t["reason"] for t in avl["turns"]] == [EMPTY_CANDIDATE] * 2
    for s in (power, avl):
        assert [t["turn"] for t in s["turns"]] == [1, 2]
        assert len({t["request_sha256"] for t in s["turns"]}) == 2
        assert all(t["attempts"] == 1 and t["usage"]["completion_tokens"] > 0 for t in s["turns"])
    # the first generate asked the server 4 times; the second took every turn from the transcript
    assert first_gen["counts"] == {"samples": 2, "turns": 4, "answered": 4, "from_server": 4, "from_request_cache": 0,
                                   "resumed": 0, "refused": 0, "batched": 0, "content_null": 0, "empty": 0,
                                   "length_cut": 2, "no_answer": 1, "verified": 1}
    assert first_gen["this_call"]["requests"] == 4
    assert gen["counts"] == {**first_gen["counts"], "from_server": 0, "resumed": 4}
    assert gen["this_call"] == {"requests": 0, "http_requests": 0, "retries": 0}
    assert [t["resumed"] for s in first_gen["samples"] for t in s["turns"]] == [False] * 4
    assert [t["resumed"] for s in gen["samples"] for t in s["turns"]] == [True] * 4
    # every attempt went through an ordinary run with the mode's canaries
    for t in (1, 2):
        report = json.loads((gen_dir / "turns" / str(t) / "run" / "report.json").read_text())
        assert report["canaries"]["ok"] and len(report["canaries"]["results"]) == len(ntp4vc.ROCQ_CANARIES)


def test_verikit_run_scores_the_final_candidates_from_the_cache(loop):
    _, _, _, _, run_dir, codes = loop
    assert codes[2] == 0
    recs = {r["task_id"]: r for r in load_records(run_dir / "records.jsonl") if r["candidate"]["model"] == MODEL}
    assert {t: r["verdict"] for t, r in recs.items()} == {POWER: "verified", AVL: "invalid"}
    assert recs[AVL]["timings"]["wall_s"] == 0  # the empty candidate: Coq never ran
    report = json.loads((run_dir / "report.json").read_text())
    assert report["canaries"]["ok"]
    counts = json.loads((run_dir / "run.json").read_text())["counts"]
    assert counts["ran"] == 0 and counts["cached"] == counts["jobs"], counts
