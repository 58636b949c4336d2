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
