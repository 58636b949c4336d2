"""End-to-end tests of the command line (``python -m harness run|validate|list``), with the
data mirror from ``VERIKIT_DATA_MIRRORS``, private ``VERIKIT_CACHE`` and ``VERIKIT_DATA``
directories, and the real Frama-C. Runs are restricted with ``--task`` to quick CASP pairs.

Recorded: the runs whose subject is what the command writes and says (the gold run then
``validate``, ``--keep-going`` with bad prediction lines, a repeated ``--mode``) call
``verikit run`` in-process (``harness.cli.main``) and are judged on the real Frama-C's
recorded outputs, replayed through the kit's own executor, parser and judge
(``framac_recorded`` with ``pipeline_sandbox``: ``tests/recorded/runs/run-cli/``; refresh it
with ``python scripts/record.py run-cli``); ``validate`` and the usage errors run as
subprocesses.

Live: every run a test kills (SIGKILL, Ctrl-C) is a real subprocess with the real Frama-C
(host or container) and always fresh (its own ``isolated_cache``). The resume after a
SIGKILL reads the jobs the killed run did not finish from the session's result cache
(``shared_cache``) when another run left them there, else runs them (the subject is the
resume: nothing lost or duplicated). The SIGKILL-and-resume test runs three pairs on the
host (QUICK: one record kept, two left to resume) and two in the container (one kept, one
left: what is the container's own, the killed workers and the resume in new ones, does not
depend on the count). The run after a SIGKILLed container run that removes its workers runs
one pair, 04_140, which that resume left in the shared cache (the run is killed as soon as
its first worker exists; the next run's subject is the dead run's workers removed)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from recording import pipeline_sandbox

from harness.benchmarks import casp
from harness.cli import main

QUICK = ["00_327", "01_57", "04_140"]
#: the container SIGKILL-and-resume test's pairs: one kept by the killed run, one (04_140)
#: resumed (left in the session's result cache for the next test's run)
CONTAINER_PAIRS = ["00_327", "04_140"]


@pytest.fixture
def cli_env(casp_mirror, isolated_cache) -> dict:
    """Subprocess environment: mirror, private caches, rich's default width (no COLUMNS)."""
    e = dict(isolated_cache)
    e.pop("COLUMNS", None)
    e.pop("LINES", None)
    return e


@pytest.fixture
def env(cli_env, framac_host) -> dict:
    """:func:`cli_env` where the real Frama-C is installed (skips otherwise)."""
    return cli_env


def recorded_run(framac_recorded, args: list[str]) -> int:
    """``verikit run ...`` in-process (``--sandbox host`` added as :func:`cli` does), its jobs
    judged on the module's recorded real Frama-C outputs. Returns the exit code."""
    if "--sandbox" not in args:
        args = [*args, "--sandbox", "host"]
    with pipeline_sandbox(framac_recorded.sandbox):
        return main(args)


def cli(args: list[str], env: dict, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the CLI; ``run`` without ``--sandbox`` gets ``--sandbox host`` (these tests are
    about the host sandbox; the default-sandbox choice has its own tests below)."""
    if args and args[0] == "run" and "--sandbox" not in args:
        args = [*args, "--sandbox", "host"]
    return subprocess.run([sys.executable, "-m", "harness", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def task_args(tasks) -> list[str]:
    return [x for t in tasks for x in ("--task", t)]


def records(path: Path) -> list[dict]:
    return [json.loads(x) for x in (path / "records.jsonl").read_text().splitlines()]


def unwrapped(text: str) -> str:
    """stderr with rich's line wrapping undone (it folds long words at the console width)."""
    return text.replace("\n", "")


# --- gold run + validate ----------------------------------------------------------------------


@pytest.mark.recorded
def test_gold_run_then_validate(cli_env, tmp_path, framac_recorded, capsys):
    env = cli_env
    out = tmp_path / "D"
    code = recorded_run(framac_recorded, ["run", "casp", "--mode", "gold", *task_args(QUICK), "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == [".verikit.lock", "SHA256SUMS", "outputs", "records.jsonl",
                                                   "report.html", "report.json", "run.json"]
    v = cli(["validate", str(out)], env, tmp_path)
    assert v.returncode == 0, v.stderr
    assert "valid" in v.stderr

    lines = (out / "records.jsonl").read_text().splitlines()
    assert len(lines) == 3
    recs = [json.loads(x) for x in lines]
    assert sorted(r["task_id"] for r in recs) == sorted(QUICK)
    assert all(r["verdict"] == "verified" for r in recs)

    run = json.loads((out / "run.json").read_text())
    (tc,) = run["toolchains"]
    fc_version = tc["tools"]["frama-c"]["version"]
    assert fc_version == framac_recorded.probed.versions["frama-c"]
    assert re.match(r"^\d+\.\d+", fc_version)
    if fc_version.startswith("25."):
        assert tc["tools"]["frama-c"]["match"] is False
    assert tc["pin_match"] is False  # Frama-C 30 / Alt-Ergo 2.6 cannot be had here
    assert {d["tool"] for d in tc["drift"]} >= {"frama-c"}
    assert run["dataset"]["name"] == "casp-sample10"
    assert re.fullmatch(r"[0-9a-f]{64}", run["dataset"]["files_sha256"])
    assert run["dataset"]["n_files"] == 112
    assert run["dataset"]["source"]["revision"] == "2dd260bfecc15e4a4614bdea2e3001021bf2d646"
    assert run["counts"]["jobs"] == 3 and run["counts"]["ran"] == 3 and run["counts"]["resumed"] == 0
    assert run["status"] == "complete" and run["input_errors"] == [] and run["predictions"] is None
    assert run["modes"] == ["gold"]
    assert run["command"][:3] == ["verikit", "run", "casp"]

    report = json.loads((out / "report.json").read_text())
    assert report["metrics"]["gold"]["overall"]["verified"] == 3
    assert report["metrics"]["gold"]["overall"]["n"] == 3
    assert len(report["comparison"]) == 3 and all(c["agree"] for c in report["comparison"])
    assert report["toolchains"][0]["pin_match"] is False
    assert any("NOT a bit-exact reproduction" in n for n in report["notes"])

    # validate sees a damaged copy
    (out / "records.jsonl").write_text(lines[0] + "\n" + lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n")
    bad = cli(["validate", str(out)], env, tmp_path)
    assert bad.returncode == 1
    assert f"{out / 'records.jsonl'}:2: duplicate job key" in unwrapped(bad.stderr)


# --- SIGKILL and resume --------------------------------------------------------------------


def _complete_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _kill_run(proc: subprocess.Popen) -> None:
    """SIGKILL the run's process group and the verifier processes it started (the host
    sandbox starts each job in its own session, outside that group)."""
    os.killpg(proc.pid, signal.SIGSTOP)  # freeze it so it cannot start another job meanwhile
    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        children = []
    os.killpg(proc.pid, signal.SIGKILL)
    for c in children:
        try:
            c.kill()
        except psutil.Error:
            pass
    proc.wait(timeout=30)


@pytest.mark.realtool
@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["host", pytest.param("container", marks=pytest.mark.container)])
def test_sigkill_then_resume_loses_and_duplicates_nothing(env, tmp_path, sandbox, shared_cache):
    """SIGKILL after the first record (-j 1), then the same command: every job once. The
    killed run is fresh; the resume may read the jobs left from the session's result cache."""
    if sandbox == "container":
        _need_engine_image(env)
    tasks = QUICK if sandbox == "host" else CONTAINER_PAIRS
    n = len(tasks)
    out = tmp_path / "D"
    args = ["run", "casp", "--mode", "gold", *task_args(tasks), "-j", "1", "--out", str(out), "--sandbox", sandbox]
    rec_path = out / "records.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "harness", *args], env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while _complete_lines(rec_path) < 1:
            assert proc.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no record after 120 s"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            _kill_run(proc)
    assert proc.returncode == -signal.SIGKILL
    assert not (out / "run.json").exists()
    done_before = _complete_lines(rec_path)
    assert 1 <= done_before < n

    resume_env = {**env, "VERIKIT_CACHE": str(shared_cache)}
    res = cli(args, resume_env, tmp_path)
    assert res.returncode == 0, res.stderr
    recs = records(out)
    assert len(recs) == n
    assert len({r["key"] for r in recs}) == n
    assert sorted(r["task_id"] for r in recs) == sorted(tasks)
    assert all(r["verdict"] == "verified" for r in recs)
    run = json.loads((out / "run.json").read_text())
    counts = run["counts"]
    assert counts["jobs"] == n
    assert counts["resumed"] >= done_before
    assert counts["resumed"] + counts["cached"] + counts["ran"] == n
    assert cli(["validate", str(out)], env, tmp_path).returncode == 0

    third = cli(args, resume_env, tmp_path)
    assert third.returncode == 0, third.stderr
    counts = json.loads((out / "run.json").read_text())["counts"]
    assert counts["ran"] == 0 and counts["verifier_runs"] == 0 and counts["resumed"] == n
    assert [r["key"] for r in records(out)] == [r["key"] for r in recs]


def _need_engine_image(env) -> None:
    from harness.sandbox import SandboxError, images
    from harness.sandbox.container import engine_reachable

    try:
        if not engine_reachable():
            raise SandboxError("no Docker-API engine")
        images.resolve("framac")
    except SandboxError as exc:
        if os.environ.get("VERIKIT_REQUIRE_ENGINE") == "1":
            pytest.fail(f"{exc} (VERIKIT_REQUIRE_ENGINE=1)")
        pytest.skip(str(exc))


@pytest.mark.realtool
@pytest.mark.container
def test_sigkill_leaves_workers_that_the_next_run_removes(env, tmp_path, shared_cache):
    """A SIGKILLed run cannot remove its workers; they do not outlive the next run. The
    killed run is fresh; the next run may read its one job (04_140, the container SIGKILL
    test's resumed pair) from the session's result cache: its subject is the sandbox it
    opens removing the dead run's workers. Every sandbox opened on this host removes them
    (``remove_orphan_workers``), so another test's sandbox opened meanwhile may do it
    first: the test asserts which workers the killed run had and that none is left after
    the next run, not which sandbox removed them."""
    _need_engine_image(env)
    out = tmp_path / "D"
    args = ["run", "casp", "--mode", "gold", "--task", CONTAINER_PAIRS[-1], "-j", "1",
            "--out", str(out), "--sandbox", "container"]
    proc = subprocess.Popen([sys.executable, "-m", "harness", *args], env=env, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    from harness.sandbox.container import connect, list_workers

    def workers_of_the_killed_run() -> list[str]:
        return [c.id for c in list_workers(connect())
                if c.labels.get("verikit.owner", "").endswith(f":{proc.pid}")]

    deadline = time.monotonic() + 120
    while not (killed_runs_workers := workers_of_the_killed_run()):
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    _kill_run(proc)
    assert proc.returncode == -signal.SIGKILL
    res = cli(args, {**env, "VERIKIT_CACHE": str(shared_cache)}, tmp_path)
    assert res.returncode == 0, res.stderr
    assert killed_runs_workers and workers_of_the_killed_run() == []


@pytest.mark.realtool
def test_default_sandbox_without_engine_says_how_to_start_one(env, tmp_path):
    e = dict(env, DOCKER_HOST="unix:///nonexistent/verikit-test.sock")
    res = subprocess.run([sys.executable, "-m", "harness", "run", "casp", "--mode", "gold", "--task", "01_57",
                          "--out", str(tmp_path / "D")], env=e, cwd=tmp_path, capture_output=True, text=True)
    assert res.returncode == 2
    err = unwrapped(res.stderr)
    assert "podman system service" in err and "--sandbox host" in err and "/nonexistent/verikit-test.sock" in err
    assert not (tmp_path / "D" / "run.json").exists()


# --- predictions ------------------------------------------------------------------------------


def _predictions(casp_tasks, directory: Path) -> Path:
    t = casp_tasks["01_57"]
    good = {"task_id": "01_57", "model": "m", "sample": 0, "output": t.contract + "\n" + t.code}
    directory.mkdir(parents=True, exist_ok=True)
    p = directory / "predictions.jsonl"
    p.write_text(json.dumps(good) + "\n"
                 + '{"task_id": "01_57", "model": "m", "sample": 1, "output": \n'      # 2: bad JSON
                 + json.dumps({"task_id": "99_999", "model": "m", "sample": 0, "output": "x"}) + "\n"  # 3
                 + json.dumps({"task_id": "01_57", "model": "m", "sample": "2", "output": "x"}) + "\n")  # 4
    return p


# a realistic CI workspace path: longer than rich's default 80 columns
LONG_DIR = "predictions-submitted-for-the-verikit-command-line-test-" + "x" * 40

PRED_ARGS = ["run", "casp", "--mode", "spec-from-code", "--task", "01_57"]


@pytest.mark.realtool
def test_bad_predictions_stop_the_run_before_anything_is_written(env, casp_tasks, tmp_path):
    p = _predictions(casp_tasks, tmp_path / LONG_DIR)
    out = tmp_path / "D"
    res = cli([*PRED_ARGS, "--predictions", str(p), "--out", str(out)], env, tmp_path)
    assert res.returncode == 2, res.stderr
    err = unwrapped(res.stderr)
    assert "3 bad line(s) in predictions" in err
    for n in (2, 3, 4):
        assert f"{p}:{n}: " in err
    assert f"{p}:1:" not in err
    assert "not valid JSON" in err and "unknown task_id '99_999'" in err and "integer" in err
    assert "--keep-going" in err
    assert "Traceback" not in res.stderr
    assert not (out / "run.json").exists() and not (out / "records.jsonl").exists()


@pytest.mark.realtool
def test_bad_predictions_error_names_file_line_on_one_line(env, casp_tasks, tmp_path):
    p = _predictions(casp_tasks, tmp_path / LONG_DIR)
    res = cli([*PRED_ARGS, "--predictions", str(p), "--out", str(tmp_path / "D")], env, tmp_path)
    assert res.returncode == 2
    for n in (2, 3, 4):
        assert f"{p}:{n}: " in res.stderr


@pytest.mark.recorded
@pytest.mark.slow
def test_keep_going_records_the_good_line(cli_env, casp_tasks, tmp_path, framac_recorded, capsys):
    env = cli_env
    p = _predictions(casp_tasks, tmp_path / "preds")
    out = tmp_path / "D"
    code = recorded_run(framac_recorded, [*PRED_ARGS, "--predictions", str(p), "--keep-going", "--out", str(out)])
    stderr = capsys.readouterr().err
    assert code == 5, stderr
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "partial"
    assert [(e["file"], e["line"]) for e in run["input_errors"]] == [(str(p), 2), (str(p), 3), (str(p), 4)]
    assert "unknown task_id" in run["input_errors"][1]["error"]
    assert run["predictions"]["candidates"] == 1 and run["predictions"]["bad_lines"] == 3
    assert run["predictions"]["sha256"] and run["predictions"]["path"] == str(p)
    recs = {r["candidate"]["model"]: r for r in records(out)}
    assert set(recs) == {"m"} | {c.model for c, _ in casp.canaries(list(casp_tasks.values()), "spec-from-code")}
    assert recs["m"]["verdict"] == "verified"
    assert recs["m"]["candidate"]["origin"] == "predictions:predictions.jsonl:1"
    report = json.loads((out / "report.json").read_text())
    assert report["canaries"]["ok"] is True
    assert report["metrics"]["spec-from-code"]["overall"]["verified"] == 1
    assert cli(["validate", str(out)], env, tmp_path).returncode == 0
    err = unwrapped(stderr)
    for n in (2, 3, 4):
        assert f"{p}:{n}: " in err


@pytest.mark.realtool
def test_missing_predictions_file(env, tmp_path):
    res = cli([*PRED_ARGS, "--predictions", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "D")],
              env, tmp_path)
    assert res.returncode == 2
    assert f"{tmp_path / 'nope.jsonl'}: no such file" in unwrapped(res.stderr)


# --- list, usage errors --------------------------------------------------------------------


@pytest.mark.realtool
def test_list_json(env, tmp_path, framac_host):
    res = cli(["list", "--json"], env, tmp_path)
    assert res.returncode == 0, res.stderr
    info = json.loads(res.stdout)
    tc = info["toolchains"]["framac"]
    assert tc["tools"]["frama-c"]["version"] == framac_host.probed.versions["frama-c"]
    assert tc["tools"]["frama-c"]["version"]
    assert tc["tools"]["alt-ergo"]["version"] is None and tc["tools"]["alt-ergo"]["match"] is False
    assert {"tool": "alt-ergo", "published": "2.6.0", "probed": None} in tc["drift"]
    assert tc["pin_match"] is False
    assert info["benchmarks"]["casp"]["modes"] == ["gold", "spec-from-code", "code-from-spec"]
    assert info["datasets"]["casp-sample10"]["files"] == 112


@pytest.mark.realtool
def test_unknown_task_id(env, tmp_path):
    out = tmp_path / "D"
    res = cli(["run", "casp", "--mode", "gold", "--task", "01_57", "--task", "99_999", "--out", str(out)],
              env, tmp_path)
    assert res.returncode == 2
    assert "unknown task id(s) ['99_999'] in casp-sample10" in unwrapped(res.stderr)
    assert "Traceback" not in res.stderr
    assert not out.exists()


@pytest.mark.realtool
def test_unknown_mode(env, tmp_path):
    res = cli(["run", "casp", "--mode", "proof", "--task", "01_57", "--out", str(tmp_path / "D")], env, tmp_path)
    assert res.returncode == 2
    assert "unknown mode(s) ['proof']" in unwrapped(res.stderr)


@pytest.mark.recorded
def test_repeated_mode_gives_a_valid_run_dir(cli_env, tmp_path, framac_recorded, capsys):
    env = cli_env
    out = tmp_path / "D"
    code = recorded_run(framac_recorded, ["run", "casp", "--mode", "gold", "--mode", "gold", "--task", "04_140",
                                          "--out", str(out)])
    assert code in (0, 2), capsys.readouterr().err
    if code == 0:
        v = cli(["validate", str(out)], env, tmp_path)
        assert v.returncode == 0, v.stderr
        assert len((out / "records.jsonl").read_text().splitlines()) == 1


@pytest.mark.realtool
@pytest.mark.container
def test_ctrl_c_removes_workers_and_keeps_finished_records(env, tmp_path):
    _need_engine_image(env)
    from harness.sandbox.container import LABEL, connect, list_workers

    out = tmp_path / "D"
    proc = subprocess.Popen([sys.executable, "-m", "harness", "run", "casp", "--mode", "gold", "--sandbox", "container",
                             "-j", "2", "--out", str(out)], env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    mine = {"label": f"{LABEL}", "status": "running"}
    deadline = time.monotonic() + 120
    while not [c for c in list_workers(connect(), mine, all=False)
               if c.labels.get("verikit.owner", "").endswith(f":{proc.pid}")]:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    while _complete_lines(out / "records.jsonl") < 1:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    output, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, output
    assert "re-run the same command to resume" in output
    left = [c for c in list_workers(connect())
            if c.labels.get("verikit.owner", "").endswith(f":{proc.pid}")]
    assert left == []
    kept = _complete_lines(out / "records.jsonl")
    assert 1 <= kept < 10
