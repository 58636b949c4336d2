"""``verikit generate casp`` end to end: CASP's spec-from-code protocol (the
kit's first turn, the paper's Listing 3 answer format and repair prompt) on two
casp-sample10 tasks against the OpenAI-compatible stand-in, with the real Frama-C on the
host in the loop.

The stand-in answers ``divmult`` (01_57) with its gold contract at once, and ``noneBool``
(05_125) first with a contract Frama-C cannot parse; the kit's verifier run judges it
``invalid``, the paper's repair prompt carries Frama-C's own message back, and the gold
contract comes back in turn 2. ``verikit run`` then scores the final candidates:
``verified`` both. The mode's canaries run in every turn's run, as in any run (the result
cache shared with test_casp's spec-from-code runs makes them cheap in the full suite).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.results import load_records, validate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_standin import OpenAIStandIn  # noqa: E402

MODEL = "standin/casp-model"
TASKS = ["01_57", "05_125"]


def answer(fixed_code: str) -> str:
    """An answer in the paper's format (Listing 3), in a json fence."""
    body = {"explanation": "The contract states what the function returns.", "assumptions": "none",
            "fixed_code": fixed_code, "strategies": "none"}
    return "```json\n" + json.dumps(body, indent=2) + "\n```"


@pytest.fixture(scope="module")
def casp_loop(casp_tasks, framac_host, shared_cache, tmp_path_factory):
    """generate (one feedback turn) then run, both with the real Frama-C and the shared
    result cache: ``(requests answered, generation dir, run dir, exit codes)``."""
    root = tmp_path_factory.mktemp("casp-gen")
    gold = {t: casp_tasks[t].contract + "\n" + casp_tasks[t].code for t in TASKS}
    broken = gold["05_125"].replace("assigns \\nothing;", "assigns \\nothing", 1)  # a missing ';': no parse
    assert broken != gold["05_125"]
    answers = {"Your task is to correct ACSL specifications": answer(gold["05_125"]),  # the repair turn
               "C function `divmult`": answer(gold["01_57"]),
               "C function `noneBool`": answer(broken)}
    common = ["--mode", "spec-from-code", "--sandbox", "host", "-j", "2", "--cache-dir", str(shared_cache),
              "--data-dir", str(root / "data")]
    with OpenAIStandIn(answers, models=(MODEL,)) as srv:
        gen = main(["generate", "casp", "--model", MODEL, "--base-url", srv.base_url, "--out", str(root / "gen"),
                    "--task", TASKS[0], "--task", TASKS[1], "--feedback-turns", "1", *common])
        requests = srv.answered()
    run = main(["run", "casp", "--predictions", str(root / "gen" / "predictions.jsonl"), "--out", str(root / "run"),
                *common])
    return requests, root / "gen", root / "run", gen, run


@pytest.mark.realtool
def test_casp_spec_from_code_repaired_from_frama_cs_message_and_verified(casp_loop):
    requests, gen_dir, run_dir, gen_code, run_code = casp_loop
    assert gen_code == 0 and run_code == 0
    gen = json.loads((gen_dir / "generation.json").read_text())
    validate("generation", gen)
    assert gen["protocol"]["extraction"]["id"] == "casp-json-fixed-code"
    assert gen["protocol"]["paper"]["feedback_turns"] == 7 and gen["decoding"]["feedback_turns"] == 1
    by = {s["task_id"]: s for s in gen["samples"]}
    assert [t["verdict"] for t in by["01_57"]["turns"]] == ["verified"] and by["01_57"]["fixes"] == 0
    assert [t["verdict"] for t in by["05_125"]["turns"]] == ["invalid", "verified"] and by["05_125"]["fixes"] == 1
    # the repair turn: the paper's prompt with the previous fixed_code and Frama-C's own message
    repair = next(r.body["messages"] for r in requests if len(r.body["messages"]) == 3)
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    text = repair[2]["content"]
    assert "Your task is to correct ACSL specifications" in text and "assigns \\nothing\n" in text
    assert "[kernel]" in text, text[-2000:]  # Frama-C's parser speaking
    assert "Output Format:" in text and '"fixed_code"' in text
    # the final candidates, scored by an ordinary run: verified, every verdict from the loop's cache
    recs = {r["task_id"]: r for r in load_records(run_dir / "records.jsonl") if r["candidate"]["model"] == MODEL}
    assert {t: r["verdict"] for t, r in recs.items()} == {"01_57": "verified", "05_125": "verified"}
    report = json.loads((run_dir / "report.json").read_text())
    assert report["canaries"]["ok"]
    counts = json.loads((run_dir / "run.json").read_text())["counts"]
    assert counts["ran"] == 0, counts


@pytest.mark.realtool
@pytest.mark.slow
def test_the_scoring_runs_report_shows_the_repair_conversation(casp_loop, tmp_path):
    """The scoring run's own report.html (written at the end of ``verikit run``), opened in
    headless Chromium with the network cut: 05_125's conversation, shown on a click from
    generate's transcript, has turn 1 judged invalid, the repair prompt carrying
    Frama-C's own message, and turn 2 verified."""
    from test_htmlreport import _browser, _open

    _, gen_dir, run_dir, _, _ = casp_loop
    assert (gen_dir / "transcript.jsonl").is_file()
    with _browser() as pw:
        browser, page, events = _open(pw, run_dir / "report.html")
        try:
            rows = page.locator("#tasks-0 tbody tr").filter(has=page.locator("button.conv-open"))
            assert rows.count() == len(TASKS)  # one per generated candidate, none for the canaries
            rows.filter(has=page.locator("td:first-child", has_text="05_125")).locator("button.conv-open").click()
            box = page.locator("#conv-0")
            assert box.is_visible() and MODEL in box.locator("h4").inner_text()
            turns = box.locator(".turn")
            assert turns.count() == 2
            assert turns.nth(0).locator("[data-field=verdict]").inner_text() == "invalid"
            assert "C function `noneBool`" in turns.nth(0).locator("[data-role=user] pre").inner_text()
            feedback = turns.nth(1).locator("[data-role=user] pre").inner_text()
            assert "Your task is to correct ACSL specifications" in feedback and "[kernel]" in feedback
            assert turns.nth(1).locator("[data-field=verdict]").inner_text() == "verified"
            assert '"fixed_code"' in turns.nth(1).locator("[data-role=assistant] pre").inner_text()
            page.screenshot(path=str(tmp_path / "conversation.png"), full_page=True)
            assert events == []
        finally:
            browser.close()
