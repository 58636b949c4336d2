"""The HTML report (``verikit report``, ``report.html`` of every run): the committed
reference runs rendered and opened in a real headless Chromium (Debian's ``chromium``,
driven by Playwright) with the network cut, and the page checked against report.json;
``--compare`` on two runs that differ in one verdict; the error paths.

Screenshots are kept under each test's temp dir. With ``VERIKIT_SCREENSHOTS=DIR`` the
per-benchmark screenshots shown in docs/reports.md (CASP's in the README too) are also written to DIR:
``VERIKIT_SCREENSHOTS=results/screenshots pytest tests/test_htmlreport.py -k reference``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.htmlreport import fmt_value, load_view, render_html, task_differences, write_html
from harness.results import load_records, write_sums

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "results" / "reproduced"
#: (run directory under results/reproduced, screenshot name, the section shown in docs/reports.md)
RUNS = [("casp", "casp", "mode-spec-from-code"), ("casp/reproduce", None, None), ("ntp4vc/rocq", "ntp4vc", "figures"),
        ("ntp4vc/reproduce", None, None), ("modelbench/reproduce", "modelbench", "verdicts"),
        ("dafny-intent/reproduce", "dafny-intent", "figures"), ("osvbench/reproduce", "osvbench", "figures")]
CHROMIUM = shutil.which("chromium")


def _browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if CHROMIUM is None:
        pytest.fail("chromium is not installed (Debian package chromium; nox -s tests installs it)")
    return sync_api.sync_playwright()


def _open(pw, html: Path):
    """Open ``html`` offline; returns (browser, page, events): failed or non-file requests,
    console errors/warnings and page errors are collected in ``events``."""
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    ctx = browser.new_context(offline=True, viewport={"width": 1100, "height": 800})
    events: list[tuple[str, str]] = []

    def route(r):  # the page may load nothing but itself and inline data
        if r.request.url.startswith(("file:", "data:")):
            r.continue_()
        else:
            events.append(("network request", r.request.url))
            r.abort()

    ctx.route("**/*", route)
    page = ctx.new_page()
    page.on("console", lambda m: events.append((f"console {m.type}", m.text)) if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: events.append(("page error", str(e))))
    page.on("requestfailed", lambda r: events.append(("failed request", r.url)))
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    return browser, page, events


def _cells(page, run_index: int) -> list[dict]:
    return page.evaluate("""(i) => Array.from(document.querySelectorAll(`#run${i} table.metrics td[data-field]`))
        .map(td => ({mode: td.closest('table').dataset.mode, model: td.closest('tr').dataset.model,
                     field: td.dataset.field, value: JSON.parse(td.dataset.value), text: td.textContent.trim()}))""",
                         run_index)


def _check_numbers(page, report: dict, index: int) -> int:
    """Every metric cell of the page equals report.json's number, and its text shows it.
    Returns the number of cells checked."""
    cells = _cells(page, index)
    for c in cells:
        m = report["metrics"][c["mode"]]
        counts = m["overall"] if c["model"] == "ALL" else m["per_model"][c["model"]]
        f = c["field"]
        if f.startswith("pass@"):
            want = counts["pass_at_k"].get(f[5:])
        elif f in ("n", "verified", "rate"):
            want = counts[f]
        else:
            want = counts["by_verdict"][f]
        assert c["value"] == want, (c, want)
        if f == "rate" or f.startswith("pass@"):
            assert c["text"] == ("-" if want is None else f"{want * 100:.1f} %"), c
        else:
            assert c["text"] == str(want), c
    n_models = sum(len(m["per_model"]) + 1 for m in report["metrics"].values())
    assert len({(c["mode"], c["model"]) for c in cells}) == n_models
    return len(cells)


@pytest.mark.slow
def test_reference_runs_render_offline_in_chromium(tmp_path):
    """Each committed reference run, rendered and opened in headless Chromium with the
    network cut: no request leaves the page, no console error, the expected headings, and
    every number shown equal to report.json's."""
    out = Path(os.environ.get("VERIKIT_SCREENSHOTS") or tmp_path / "readme")
    out.mkdir(parents=True, exist_ok=True)
    with _browser() as pw:
        for rel, shot, section in RUNS:
            run_dir = REF / rel
            report = json.loads((run_dir / "report.json").read_text())
            html = write_html([run_dir], tmp_path / f"{rel.replace('/', '-')}.html")
            assert html.stat().st_size < 3_000_000
            browser, page, events = _open(pw, html)
            try:
                page.screenshot(path=str(tmp_path / f"{rel.replace('/', '-')}.png"), full_page=True)
                assert events == [], (rel, events)
                headings = page.eval_on_selector_all("#run0 h3", "els => els.map(e => e.textContent.trim())")
                for h in ("Provenance", "Toolchains: probed vs published", "Canaries and integrity checks"):
                    assert h in headings, (rel, headings)
                assert page.inner_text("#run0 h2") == f"{report['benchmark']} / {report['dataset']}"
                assert "verikit validate: valid" in page.inner_text("#run0 .valid")
                assert page.locator("svg").count() >= (2 if report["metrics"] else 1), rel
                # every number of report.json's metrics
                _check_numbers(page, report, 0)
                if report["metrics"]:
                    assert "Verdicts and pass@k" in headings  # Model-Bench's Runnable@k is a section of its own
                # the published-vs-reproduced figures: the summary and one row per figure
                repro = report.get("reproduction")
                if repro:
                    assert "Published vs reproduced" in headings
                    summary = page.eval_on_selector_all(
                        "#run0 .repro-summary [data-field]", "els => els.map(e => [e.dataset.field, +e.dataset.value])")
                    assert dict(summary) == repro["summary"]
                    rows = page.eval_on_selector_all("#run0 table.figures tbody tr", """els => els.map(e => ({
                        name: e.dataset.figure, published: e.querySelector('[data-field=published]').textContent,
                        reproduced: e.querySelector('[data-field=reproduced]').textContent}))""")
                    assert len(rows) == len(repro["figures"])
                    for row, fig in zip(rows, repro["figures"]):
                        for side in ("published", "reproduced"):
                            v = fig[side]
                            assert row[side] == fmt_value(v)
                            if isinstance(v, dict) and "passed" in v and "total" in v:
                                assert row[side].startswith(f"{v['passed']}/{v['total']}")
                if report.get("comparison"):
                    agree = page.get_attribute("#run0 .comparison-summary [data-field=agree]", "data-value")
                    assert int(agree) == sum(1 for c in report["comparison"] if c["agree"])
                # canaries: one row each, with the report's verdict
                can = report["canaries"]["results"]
                shown = page.eval_on_selector_all("#run0 table.canaries tbody tr", "els => els.map(e => e.dataset.model)")
                assert shown == [c["model"] for c in can]
                # the per-task table: one row per record; the filters work
                recs = load_records(run_dir / "records.jsonl")
                if recs:
                    assert "Per task" in headings
                    table = page.locator("#tasks-0 tbody tr")
                    assert table.count() == len(recs)
                    verdict = recs[-1]["verdict"]
                    page.select_option("#run0 .verdict-filter", verdict)
                    want = sum(1 for r in recs if r["verdict"] == verdict)
                    assert page.inner_text("#run0 .shown") == f"{want} of {len(recs)} shown"
                    page.fill("#run0 .text-filter", recs[-1]["task_id"])
                    want = sum(1 for r in recs if r["verdict"] == verdict and recs[-1]["task_id"] in
                               " ".join([r["task_id"], r["mode"], r["candidate"]["model"], r.get("reason") or ""]))
                    assert int(page.inner_text("#run0 .shown").split()[0]) >= 1
                    assert int(page.inner_text("#run0 .shown").split()[0]) <= want + len(recs)  # text match is wider
                    page.select_option("#run0 .verdict-filter", "")
                    page.fill("#run0 .text-filter", "")
                    # sorting by the time column: ascending numbers
                    page.click("#tasks-0 thead th:nth-child(8)")
                    times = [t for t in page.eval_on_selector_all(
                        "#tasks-0 tbody tr td:nth-child(8)", "els => els.map(e => parseFloat(e.textContent))")
                        if t == t]  # NaN for records without a time
                    assert times == sorted(times)
                assert events == [], (rel, events)
                if shot:  # the screenshot of docs/reports.md: the section that shows the benchmark best
                    page.locator(f"#run0-{section}").scroll_into_view_if_needed()
                    page.evaluate(f"document.getElementById('run0-{section}').scrollIntoView()")
                    page.screenshot(path=str(out / f"{shot}.png"))
                    assert (out / f"{shot}.png").stat().st_size > 10_000
            finally:
                browser.close()


@pytest.mark.slow
def test_render_is_deterministic_and_a_view(tmp_path):
    """The same run gives the same bytes; the page is not one of the run's files
    (SHA256SUMS unchanged, the directory still valid)."""
    run_dir = tmp_path / "casp"
    shutil.copytree(REF / "casp" / "reproduce", run_dir)
    sums = (run_dir / "SHA256SUMS").read_bytes()
    a = write_html([run_dir], run_dir / "report.html").read_bytes()
    b = render_html([load_view(run_dir)]).encode()
    assert a == b
    assert (run_dir / "SHA256SUMS").read_bytes() == sums
    assert load_view(run_dir).problems == []
    # nothing the browser would load: no external script, stylesheet, image, font or import
    text = a.decode()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", text)
    assert not re.search(r"""url\(\s*["']?(https?:|//)""", text)
    assert "<link" not in text and "@import" not in text and "<iframe" not in text and "<metadata>" not in text


def test_a_task_kept_out_of_the_metrics_is_shown_apart(tmp_path):
    """A record marked ``task_defect`` (the task's own bug): the mode's counts leave it out
    and the page names the task and its defect under the mode's table."""
    from harness.metrics import group_metrics

    run_dir = tmp_path / "casp"
    shutil.copytree(REF / "casp" / "reproduce", run_dir)
    recs = [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]
    for r in recs:
        if r["task_id"] == "06_114":
            r["task_defect"] = "inconsistent-task: the prelude's axiom is false at INT_MIN"
    (run_dir / "records.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
    report = json.loads((run_dir / "report.json").read_text())
    report["metrics"] = group_metrics(recs, seed=report["bootstrap_seed"])
    (run_dir / "report.json").write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    write_sums(run_dir)
    assert report["metrics"]["gold"]["overall"]["n"] == len([r for r in recs if r["mode"] == "gold"]) - 1
    html = render_html([load_view(run_dir)])
    assert load_view(run_dir).problems == []
    assert '<span data-task="06_114">06_114 (inconsistent-task: the prelude&#39;s axiom is false at INT_MIN)</span>' in html


def test_edited_run_shows_its_problems(tmp_path):
    run_dir = tmp_path / "casp"
    shutil.copytree(REF / "casp" / "reproduce", run_dir)
    lines = (run_dir / "records.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["verdict"] = "failed"
    lines[0] = json.dumps(rec, sort_keys=True)
    (run_dir / "records.jsonl").write_text("\n".join(lines) + "\n")
    html = render_html([load_view(run_dir)])
    assert 'class="problems"' in html and "verikit validate:" in html
    assert "its sha256 differs from SHA256SUMS" in html


def _one_verdict_changed(tmp_path) -> tuple[Path, Path, dict]:
    a = REF / "casp"
    b = tmp_path / "b"
    shutil.copytree(a, b)
    recs = [json.loads(x) for x in (b / "records.jsonl").read_text().splitlines()]
    target = next(r for r in recs if r["verdict"] == "verified" and not r["candidate"]["model"].startswith("canary:"))
    target["verdict"] = "failed"
    (b / "records.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
    write_sums(b)
    return a, b, target


@pytest.mark.slow
def test_compare_lists_exactly_the_changed_task(tmp_path, capsys):
    a, b, target = _one_verdict_changed(tmp_path)
    diffs = task_differences(load_records(a / "records.jsonl"), load_records(b / "records.jsonl"))
    assert [(d["task_id"], d["model"], d["change"], d["a"]["verdict"], d["b"]["verdict"]) for d in diffs] == \
        [(target["task_id"], target["candidate"]["model"], "verdict", "verified", "failed")]
    html = tmp_path / "cmp.html"
    assert main(["report", str(a), str(b), "--compare", "--html", str(html)]) == 0
    err = capsys.readouterr().err
    assert "1 task(s) differ: verdict 1" in err
    assert target["task_id"] in err
    page = html.read_text()
    assert page.count('<tr data-task="') == 1
    assert f'<tr data-task="{target["task_id"]}" data-change="verdict">' in page
    assert 'id="compare-count" data-value="1"' in page


def test_compare_goals_and_missing_records(tmp_path):
    a = load_records(REF / "casp" / "reproduce" / "records.jsonl")
    b = json.loads(json.dumps(a))
    b[0]["goals"]["proved"] -= 1
    dropped = b.pop()
    rows = task_differences(a, b)
    assert [(r["task_id"], r["change"]) for r in rows] == sorted(
        [(a[0]["task_id"], "goals"), (dropped["task_id"], "only in A")], key=lambda x: x[0])


@pytest.mark.slow
def test_compare_page_in_chromium(tmp_path):
    a, b, target = _one_verdict_changed(tmp_path)
    html = write_html([a, b], tmp_path / "cmp.html", compare=True)
    with _browser() as pw:
        browser, page, events = _open(pw, html)
        try:
            rows = page.eval_on_selector_all("#compare-table tbody tr", "els => els.map(e => e.dataset.task)")
            assert rows == [target["task_id"]]
            assert page.locator("section.run").count() == 2
            page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)
            assert events == []
        finally:
            browser.close()


def test_report_errors_exit_2(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope")]) == 2
    assert "not a run directory" in capsys.readouterr().err
    bad = tmp_path / "bad"
    shutil.copytree(REF / "casp" / "reproduce", bad)
    (bad / "run.json").write_text('{\n  "benchmark": \n}\n')
    assert main(["report", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad / 'run.json'}:3: not valid JSON" in err and "Traceback" not in err
    assert main(["report", str(REF / "casp"), "--compare"]) == 2
    assert "--compare takes exactly two runs, got 1" in capsys.readouterr().err


def test_report_terminal_tables(capsys):
    """Without --html: the summary tables of the end of a run (shared code), per run."""
    assert main(["report", str(REF / "casp" / "reproduce"), str(REF / "osvbench" / "reproduce")]) == 0
    err = capsys.readouterr().err
    assert "casp / casp-sample10 / gold" in err and "published vs reproduced: verdict agrees on" in err
    assert "== " + str(REF / "osvbench" / "reproduce") in err


@pytest.mark.realtool
@pytest.mark.slow
def test_run_writes_report_html(tmp_path):
    """A real Frama-C run (host sandbox) writes report.html beside report.json; its
    output goes to a pipe (no TTY); the run stays valid with SHA256SUMS over its files."""
    if shutil.which("frama-c") is None:
        pytest.fail("frama-c is not installed (nox -s tests installs it)")
    out = tmp_path / "run"
    env = {**os.environ, "VERIKIT_DATA": str(tmp_path / "data")}
    proc = subprocess.run([sys.executable, "-m", "harness", "run", "casp", "--mode", "gold", "--task", "00_327",
                           "--sandbox", "host", "--out", str(out)], capture_output=True, text=True, env=env,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"wrote {out / 'report.html'}" in proc.stderr
    html = (out / "report.html").read_text()
    report = json.loads((out / "report.json").read_text())
    assert "report.html" not in (out / "SHA256SUMS").read_text()
    assert load_view(out).problems == []
    assert html == render_html([load_view(out)])
    n = report["metrics"]["gold"]["per_model"]["gold"]["n"]
    assert f'data-field="n" data-value="{n}"' in html


def test_invoke_task_calls_the_same_command():
    got = subprocess.run([str(Path(sys.executable).with_name("invoke")), "--dry", "report", "--runs", "a b",
                          "--html", "r.html", "--compare"], cwd=ROOT, capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert re.sub(r"\x1b\[[0-9;]*m", "", got.stdout).strip() == "verikit report a b --html r.html --compare"


# --- conversations of generated candidates (hand-written transcripts in generate's format) ------

GEN_MODEL = "standin/gen-model"
#: 05_125: turn 1 invalid, Frama-C's message back, turn 2 verified; 01_57: one turn.
FEEDBACK = "Your task is to correct ACSL specifications.\n[kernel] user error: syntax error near 'assigns'"
HOSTILE = "</script><script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\"><b>bold</b>"


def _turn_line(task: str, turn: int, sent: list[dict], content: str | None, *, reasoning=None, key=None,
               error=None, source="server") -> dict:
    comp = None if content is None else {
        "content": content, "reasoning": reasoning, "finish_reason": "stop",
        "usage": {"prompt_tokens": 800 + turn, "completion_tokens": 200 + turn}, "latency_s": 1.25, "attempts": 1,
        "response_model": GEN_MODEL, "system_fingerprint": None}
    return {"task_id": task, "sample": 0, "turn": turn, "request_sha256": key or f"{task}-{turn}".encode().hex(),
            "sent": sent, "completion": comp, "source": source, "error": error,
            "received_at": f"2026-11-29T18:00:0{turn}+00:00"}


def _gen_turn(line: dict, verdict, reason) -> dict:
    import hashlib

    content = (line["completion"] or {}).get("content") or ""
    return {"turn": line["turn"], "request_sha256": line["request_sha256"],
            "completion_sha256": hashlib.sha256(content.encode()).hexdigest(), "finish_reason": "stop",
            "usage": {"prompt_tokens": 1, "completion_tokens": 1}, "latency_s": 1.0, "attempts": 1,
            "response_model": GEN_MODEL, "system_fingerprint": None, "cached": False, "resumed": False,
            "extracted": True, "candidate_sha256": "0" * 64, "error": None, "verdict": verdict, "reason": reason}


def _transcript(answer_2: str = "```json\n{\"fixed_code\": \"fixed\"}\n```") -> list[dict]:
    first = [{"role": "system", "content": "You write ACSL."}, {"role": "user", "content": "C function `noneBool`"}]
    return [_turn_line("05_125", 1, first, "<think>hmm</think>broken", reasoning="the contract needs assigns"),
            _turn_line("05_125", 2, [{"role": "user", "content": FEEDBACK}], answer_2),
            _turn_line("01_57", 1, [{"role": "user", "content": "C function `divmult`"}], "gold at once")]


def _generated_run(tmp_path: Path, lines: list[dict] | None = None, *, extra: str = "") -> tuple[Path, Path]:
    """A run directory (the CASP reproduce run's records, 05_125's and 01_57's made
    generated candidates) whose run.json links a hand-written generation.json beside a
    transcript.jsonl of ``lines`` (+ ``extra`` text). Returns (run dir, generation dir)."""
    import hashlib

    run_dir = tmp_path / "run"
    shutil.copytree(REF / "casp" / "reproduce", run_dir)
    recs = [json.loads(x) for x in (run_dir / "records.jsonl").read_text().splitlines()]
    for r in recs:
        if r["task_id"] in ("05_125", "01_57"):
            r["mode"] = "spec-from-code"
            r["candidate"].update(model=GEN_MODEL, origin=f"predictions:predictions.jsonl:{r['task_id'][:2]}")
    (run_dir / "records.jsonl").write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in recs))
    lines = _transcript() if lines is None else lines
    by = {(x["task_id"], x["turn"]): x for x in lines}
    gen_dir = tmp_path / "gen"
    gen_dir.mkdir()
    (gen_dir / "transcript.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines) + extra)
    gen = {"model": {"requested": GEN_MODEL, "served": GEN_MODEL},
           "transcript": {"path": "transcript.jsonl",
                          "sha256": hashlib.sha256((gen_dir / "transcript.jsonl").read_bytes()).hexdigest()},
           "samples": [{"task_id": "05_125", "sample": 0, "turns": [
                           _gen_turn(by[("05_125", 1)], "invalid", "[kernel] syntax error"),
                           _gen_turn(by[("05_125", 2)], "verified", "all 4 goals proved")]},
                       {"task_id": "01_57", "sample": 0, "turns": [_gen_turn(by[("01_57", 1)], "verified", "ok")]}]}
    (gen_dir / "generation.json").write_text(json.dumps(gen, indent=1))
    run = json.loads((run_dir / "run.json").read_text())
    run["generation"] = {"path": str(gen_dir / "generation.json"), "predictions_sha256": "0" * 64,
                         "sha256": hashlib.sha256((gen_dir / "generation.json").read_bytes()).hexdigest()}
    (run_dir / "run.json").write_text(json.dumps(run, indent=1, sort_keys=True))
    return run_dir, gen_dir


def _embedded(html: str, index: int = 0) -> list[dict]:
    m = re.search(rf'<script type="application/json" id="conv-data-{index}">(.*?)</script>', html, re.S)
    assert m, "no embedded conversations"
    return json.loads(m.group(1))


def test_generated_candidates_get_their_conversation(tmp_path):
    """Each generated candidate's row gets a button; the page embeds each conversation once,
    joined with generation.json's verdicts; gold rows get none."""
    from harness.results.transcripts import load_conversations

    lines = _transcript()
    dup = dict(lines[2], completion=dict(lines[2]["completion"], content="an earlier answer"))
    run_dir, gen_dir = _generated_run(tmp_path, [dup, *lines])  # the same turn twice: the last line wins
    html = render_html([load_view(run_dir)])
    assert html.count('class="conv-open"') == 2 and html.count("<th>conversation</th>") == 1
    assert 'id="conv-0" hidden' in html
    chats = {c["task_id"]: c for c in _embedded(html)}
    assert set(chats) == {"05_125", "01_57"} and chats["05_125"]["model"] == GEN_MODEL
    t1, t2 = chats["05_125"]["turns"]
    assert (t1["turn"], t1["verdict"], t2["turn"], t2["verdict"]) == (1, "invalid", 2, "verified")
    assert [m["role"] for m in t1["sent"]] == ["system", "user"] and t2["sent"][0]["content"] == FEEDBACK
    assert t1["reasoning"] == "the contract needs assigns" and t1["content"] == "<think>hmm</think>broken"
    assert t1["usage"] == {"prompt_tokens": 801, "completion_tokens": 201} and t1["attempts"] == 1
    assert (t1["finish_reason"], t1["latency_s"], t1["source"]) == ("stop", 1.25, "server")
    assert all(t["check"] is None for c in chats.values() for t in c["turns"])
    assert chats["01_57"]["turns"][0]["content"] == "gold at once" and t1["answer"] == "text"
    # the join checks each line against generation.json: another completion text is said
    conv = load_conversations(run_dir, json.loads((run_dir / "run.json").read_text()))
    assert conv.readable and conv.notes == [] and conv.transcript == gen_dir / "transcript.jsonl"
    (gen_dir / "transcript.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [*lines, dup]))
    conv = load_conversations(run_dir, json.loads((run_dir / "run.json").read_text()))
    assert conv.chats[("01_57", 0)][0]["check"].startswith("its completion is not the text generation.json records")
    # content: null (said apart from an empty answer), an answer of a request for n samples
    null = dict(lines[2], batch={"n": 2, "choice": 1}, completion=dict(lines[2]["completion"], content=None))
    (gen_dir / "transcript.jsonl").write_text("".join(json.dumps(x) + "\n" for x in [*lines, null]))
    turn = load_conversations(run_dir, json.loads((run_dir / "run.json").read_text())).chats[("01_57", 0)][0]
    assert (turn["answer"], turn["content"], turn["batch"]) == ("null", None, {"n": 2, "choice": 1})
    # a run without a link: no column, no script, no note
    plain = render_html([load_view(REF / "casp" / "reproduce")])
    assert 'class="conv-open"' not in plain and 'id="conv-data-' not in plain and 'class="conversations-note"' not in plain


def test_missing_or_unreadable_transcript_is_a_note_naming_the_file(tmp_path):
    """The page says which file is missing or unreadable, and still renders; bad lines
    are skipped and named, the good ones shown."""
    from harness.results.transcripts import load_conversations

    run_dir, gen_dir = _generated_run(tmp_path, extra="{not json\n")
    run = json.loads((run_dir / "run.json").read_text())
    transcript = gen_dir / "transcript.jsonl"
    conv = load_conversations(run_dir, run)
    assert conv.notes == [f"{transcript}: 1 line(s) not a transcript line, skipped: line 4 (JSONDecodeError)"]
    assert conv.readable and len(conv.chats) == 2
    with transcript.open("a") as fh:  # changed since generation.json recorded its sha256: said, still shown
        fh.write(json.dumps(_transcript()[0]) + "\n")
    conv = load_conversations(run_dir, run)
    assert conv.notes[0] == f"{transcript}: its sha256 is not the one generation.json records (changed since the " \
                            f"generation); each turn is still checked against generation.json's"
    assert conv.readable and len(conv.chats) == 2
    transcript.unlink()
    transcript.mkdir()  # a directory: unreadable as a file
    conv = load_conversations(run_dir, run)
    assert not conv.readable and conv.notes[0].startswith(f"{transcript}: cannot be read (")
    transcript.rmdir()
    html = render_html([load_view(run_dir)])
    assert f"{transcript}: missing; conversations are not shown" in html
    assert 'class="conv-open"' not in html and 'id="conv-data-' not in html and "<th>conversation</th>" not in html
    (gen_dir / "generation.json").unlink()
    assert load_conversations(run_dir, run).notes == [
        f"generation.json not found (looked at {gen_dir / 'generation.json'}, "
        f"{run_dir / 'generation' / 'generation.json'}); conversations are not shown"]
    (gen_dir / "generation.json").write_text("{}")  # another file than the one the run linked
    assert load_conversations(run_dir, run).notes == [
        f"{gen_dir / 'generation.json'}: its sha256 is not the one run.json records for the generation's "
        f"generation.json; conversations are not shown"]


def test_a_carried_copy_of_the_generation_is_found(tmp_path):
    """A published or bundled run keeps the linked (absolute) generation.json under
    generation/: the report finds it there when the linked path is gone."""
    from harness.results.transcripts import carried_files, carried_generation_path, find_generation

    run_dir, gen_dir = _generated_run(tmp_path)
    run = json.loads((run_dir / "run.json").read_text())
    assert carried_files(run_dir, run) == {"generation/generation.json": gen_dir / "generation.json",
                                           "generation/transcript.jsonl": gen_dir / "transcript.jsonl"}
    assert carried_generation_path(run["generation"]) == "generation/generation.json"
    assert carried_generation_path({"path": "gen/generation.json"}) == "gen/generation.json"
    assert carried_generation_path({"path": "../x/generation.json"}) == "generation/generation.json"
    shutil.move(gen_dir, run_dir / "generation")
    assert find_generation(run_dir, run) == (run_dir / "generation" / "generation.json", None)
    assert render_html([load_view(run_dir)]).count('class="conv-open"') == 2


def test_model_text_cannot_inject_html_into_the_page(tmp_path):
    run_dir, _ = _generated_run(tmp_path, _transcript(answer_2=HOSTILE))
    html = render_html([load_view(run_dir)])
    assert "window.__pwned" in html and "<script>window.__pwned" not in html and "<img src=x" not in html
    assert html.count("</script>") == 2  # the embedded data's and the page script's
    assert {c["task_id"]: c for c in _embedded(html)}["05_125"]["turns"][1]["content"] == HOSTILE


@pytest.mark.slow
def test_conversation_shown_on_click_in_chromium(tmp_path):
    """In Chromium: nothing of a conversation is in the page until its button is clicked;
    then each turn's messages, reasoning (collapsed), answer, facts and verdict; model text
    with markup shown as text, no script run."""
    run_dir, _ = _generated_run(tmp_path, _transcript(answer_2=HOSTILE))
    html = write_html([run_dir], tmp_path / "conv.html")
    with _browser() as pw:
        browser, page, events = _open(pw, html)
        try:
            assert page.locator("#conv-0 .turn").count() == 0 and not page.is_visible("#conv-0")
            row = page.locator("#tasks-0 tbody tr", has=page.locator("td", has_text="05_125")).filter(
                has=page.locator("button.conv-open"))
            row.locator("button.conv-open").click()
            assert page.is_visible("#conv-0")
            turns = page.locator("#conv-0 .turn")
            assert turns.count() == 2
            assert turns.nth(0).locator("[data-field=verdict]").inner_text() == "invalid"
            assert turns.nth(1).locator("[data-field=verdict]").inner_text() == "verified"
            assert turns.nth(0).locator("[data-role=system] pre").inner_text() == "You write ACSL."
            assert "[kernel]" in turns.nth(1).locator("[data-role=user] pre").inner_text()
            assert "user: the verifier's feedback" in turns.nth(1).text_content()  # shown upper-case (CSS)
            reasoning = turns.nth(0).locator("details.reasoning")
            assert reasoning.get_attribute("open") is None and not reasoning.locator("pre").is_visible()
            assert "finish stop" in turns.nth(0).locator(".facts").inner_text()
            assert "tokens 801 prompt / 201 completion" in turns.nth(0).inner_text()
            assert "1 attempt(s)" in turns.nth(0).inner_text() and "latency 1.25 s" in turns.nth(0).inner_text()
            assert turns.nth(0).locator("[data-role=assistant] pre").inner_text() == "<think>hmm</think>broken"
            assert turns.nth(1).locator("[data-role=assistant] pre").inner_text() == HOSTILE  # as text
            assert page.locator("#conv-0 script, #conv-0 img, #conv-0 b").count() == 0
            assert page.evaluate("window.__pwned") is None
            page.screenshot(path=str(tmp_path / "conversation.png"), full_page=True)
            assert events == []
        finally:
            browser.close()
