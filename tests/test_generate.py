"""``verikit generate`` against the OpenAI-compatible stand-in
(``tests/openai_standin.py``), always through the real ``openai`` client, for the example
plugin ``smtlib`` (tests/plugins/verikit-smtlib), whose generation protocol lives in the
plugin: so an outside benchmark is generated for with no edit of the kit.

Checked: the two files and the transcript are schema-valid (one predictions line per task
and sample, sorted, a completion with no answer kept as an empty candidate; the samples of
a task asked as one request for ``n`` choices); a re-run sends no request (the directory's
transcript, then the request cache for a new directory); SIGINT and SIGKILL
mid-generation lose and duplicate nothing; 429, 500 and timeouts are retried by
the client with the attempts recorded, and a sample still failing leaves the generation
resumable (exit 4); a bad endpoint, model or key is one line and exit 2 with nothing
written; streamed and plain completions give the same files; the API key is written
nowhere; and the verifier in the loop: the real Z3 judges each attempt, its real answer
goes back to the model, a wrong invariant is fixed in turn 2, and ``verikit run`` scores
the final candidates.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.generate import GenerationSpec, SpecError
from harness.generate.store import Transcript, request_key
from harness.results.transcripts import parse_transcript
from harness.results import load_records, validate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_standin import OpenAIStandIn  # noqa: E402

pytest.importorskip("verikit_smtlib", reason="the example plugin is not installed (nox -s tests installs it)")

MODEL = "standin/model-7b"
TASKS = ["count-down", "count-up", "double", "swap-sum", "triangle"]
needs_z3 = pytest.mark.skipif(shutil.which("z3") is None, reason="needs z3 on the host (scripts/bootstrap-debian.sh)")


def fence(term: str) -> str:
    return f"Here is an invariant.\n```smt2\n{term}\n```\n"


#: First-turn answers, matched on each loop's guard (in its prompt); ``double`` gets an
#: answer with no ```smt2 block (no answer: an empty candidate).
FIRST = {"(> x 0)": fence("(> x 0)"),  # count-down: wrong (false when n = 0: Z3 finds init sat)
         "(< i n)": fence("(and (<= 0 i) (<= i n))"),  # count-up; triangle's guard is the same: see below
         "(< x 10)": "I think y = 2x but I will not write it down.",
         "(> a 0)": fence("(and (= (+ a b) k) (>= a 0))"),
         "s := (+ s i)": fence("(and (<= 0 i) (<= i n) (= (* 2 s) (* i (- i 1))))")}


def answers() -> dict:
    """The stand-in's answers: triangle's rule first (its prompt also holds ``(< i n)``),
    then the first turns, then the feedback turns (matched on Z3's real answer)."""
    first = dict(FIRST)
    tri = {"s := (+ s i)": first.pop("s := (+ s i)")}
    feedback = {"goal init: z3 answered sat": fence("(>= x 0)"),  # count-down fixed in turn 2
                "not admitted": "still no invariant from me"}      # double: no answer again
    return {**feedback, **tri, **first}


def generate(srv: OpenAIStandIn, out: Path, *extra: str, model: str = MODEL, base_url: str | None = None) -> int:
    return main(["generate", "smtlib", "--model", model, "--base-url", base_url or srv.base_url, "--out", str(out),
                 "--sandbox", "host", *extra])


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """One generation of 2 samples per task, no feedback, with its own cache: ``(srv, out,
    cache, exit code, requests)``."""
    root = tmp_path_factory.mktemp("gen")
    mp = pytest.MonkeyPatch()
    mp.setenv("VERIKIT_CACHE", str(root / "cache"))
    mp.delenv("OPENAI_API_KEY", raising=False)
    srv = OpenAIStandIn(answers()).__enter__()
    code = generate(srv, root / "out", "--samples", "2")
    yield srv, root / "out", root / "cache", code, srv.completions
    srv.__exit__()
    mp.undo()


def test_outputs_are_schema_valid_sorted_and_keep_empty_answers(plain):
    srv, out, _, code, sent = plain
    assert code == 0 and sent == 5  # one request for n=2 per task
    preds = lines(out / "predictions.jsonl")
    for n, line in enumerate(preds, 1):
        validate("predictions", line, f"predictions.jsonl:{n}")
    assert [(p["task_id"], p["sample"]) for p in preds] == [(t, s) for t in TASKS for s in (0, 1)]
    assert {p["model"] for p in preds} == {MODEL} and {p["prompt_id"] for p in preds} == {"smtlib-invariant"}
    assert [p["seed"] for p in preds] == [0, 1] * 5  # seed + sample
    double = [p for p in preds if p["task_id"] == "double"]
    assert [p["output"] for p in double] == ["", ""] and not any(p["meta"]["extracted"] for p in double)
    assert preds[0]["output"] == "(> x 0)" and preds[0]["meta"] == {"extracted": True, "turns": 1, "fixes": 0,
                                                                   "finish_reason": "stop"}
    gen = json.loads((out / "generation.json").read_text())
    validate("generation", gen)
    assert gen["model"] == {"requested": MODEL, "served": MODEL, "response_models": [MODEL],
                            "system_fingerprints": ["fp_standin_1"]}
    assert gen["endpoint"]["api_key"] == "unset" and gen["endpoint"]["base_url"] == srv.base_url
    assert gen["endpoint"]["n"] == "used" and gen["endpoint"]["contacted"]
    assert gen["protocol"]["extraction"]["id"] == "last-smt2-fence"
    assert [t["id"] for t in gen["protocol"]["templates"]] == ["smtlib-invariant", "smtlib-feedback"]
    assert gen["protocol"]["paper"]["feedback_turns"] == 2 and gen["decoding"]["feedback_turns"] == 0
    assert gen["decoding"]["source"]["samples"] == "user" and gen["decoding"]["source"]["temperature"] == "protocol"
    assert gen["counts"] == {"samples": 10, "turns": 10, "answered": 10, "from_server": 10, "from_request_cache": 0,
                             "resumed": 0, "refused": 0, "batched": 10, "content_null": 0, "empty": 0, "length_cut": 0,
                             "no_answer": 2, "verified": None}
    assert gen["this_call"] == {"requests": 5, "http_requests": 5, "retries": 0}
    turn = gen["samples"][0]["turns"][0]
    assert turn["attempts"] == 1 and turn["usage"]["completion_tokens"] > 0 and turn["latency_s"] >= 0
    assert gen["dataset"]["name"] == "smtlib-loops" and gen["task_ids"] == TASKS
    # what the server got: the protocol's prompt, the protocol's parameters (none: not sent)
    body = srv.answered()[0].body
    assert set(body) == {"model", "messages", "seed", "n"} and body["messages"][0]["role"] == "user"
    assert body["n"] == 2 and body["seed"] == 0
    assert "Answer with one SMT-LIB term" in body["messages"][0]["content"]
    # the transcript: every message sent and received, schema-valid, one line per sample and turn
    trans = lines(out / "transcript.jsonl")
    for n, line in enumerate(trans, 1):
        validate("transcript", line, f"transcript.jsonl:{n}")
    assert len(trans) == 10 and gen["transcript"]["path"] == "transcript.jsonl"
    first = next(t for t in trans if t["task_id"] == "count-down" and t["sample"] == 1)
    sent = next(r.body for r in srv.answered() if "(> x 0)" in r.body["messages"][0]["content"])
    assert first["sent"] == sent["messages"] and first["batch"] == {"n": 2, "choice": 1}
    assert first["completion"]["content"] == FIRST["(> x 0)"] and first["source"] == "server"


@pytest.mark.slow
def test_a_rerun_sends_nothing(plain, tmp_path, monkeypatch):
    srv, out, cache, _, _ = plain
    monkeypatch.setenv("VERIKIT_CACHE", str(cache))
    before = srv.completions
    assert generate(srv, out, "--samples", "2") == 0  # the same directory: its transcript
    assert generate(srv, tmp_path / "again", "--samples", "2") == 0  # a new one: the request cache
    assert srv.completions == before
    assert (tmp_path / "again" / "predictions.jsonl").read_bytes() == (out / "predictions.jsonl").read_bytes()
    gen = json.loads((tmp_path / "again" / "generation.json").read_text())
    assert gen["counts"]["from_request_cache"] == 10 and gen["counts"]["from_server"] == 0
    assert gen["this_call"]["requests"] == 0 and not gen["endpoint"]["contacted"]
    assert generate(srv, tmp_path / "fresh", "--samples", "2", "--no-cache") == 0  # no cache: asked again
    assert srv.completions == before + 5
    # another parameter is another request (the key covers it)
    assert generate(srv, tmp_path / "hot", "--samples", "1", "--temperature", "0.7") == 0
    assert srv.completions == before + 10 and srv.answered()[-1].body["temperature"] == 0.7


def test_streamed_and_plain_completions_give_the_same_files(plain, tmp_path, monkeypatch):
    srv, out, _, _, _ = plain
    monkeypatch.setenv("VERIKIT_CACHE", str(tmp_path / "cache"))
    n = len(srv.requests)
    assert generate(srv, tmp_path / "s", "--samples", "2", "--stream") == 0
    new = [r for r in srv.requests[n:] if r.path.endswith("/chat/completions")]
    assert len(new) == 5 and all(r.stream and r.body["stream_options"] == {"include_usage": True} for r in new)
    assert (tmp_path / "s" / "predictions.jsonl").read_bytes() == (out / "predictions.jsonl").read_bytes()
    a, b = (json.loads((d / "generation.json").read_text())["samples"] for d in (out, tmp_path / "s"))
    keep = ("finish_reason", "usage", "completion_sha256", "candidate_sha256", "request_sha256", "system_fingerprint")
    assert [[{k: t[k] for k in keep} for t in s["turns"]] for s in a] == \
        [[{k: t[k] for k in keep} for t in s["turns"]] for s in b]


@pytest.mark.slow
def test_429_500_and_timeouts_are_retried_with_the_attempts_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_CACHE", str(tmp_path / "cache"))
    with OpenAIStandIn(answers()) as srv:
        srv.delay_next(3.0)  # the first try of the first sample outlives the request timeout
        srv.fail_next(429, n=2, retry_after=0.01)
        srv.fail_next(500, retry_after=0.01)
        assert generate(srv, tmp_path / "out", "--concurrency", "1", "--request-timeout", "1") == 0
        statuses = [r.status for r in srv.requests if r.path.endswith("/chat/completions")]
        assert statuses[1:5] == [429, 429, 500, 200]
        retries = [r.retry_count for r in srv.requests if r.path.endswith("/chat/completions")]
    gen = json.loads((tmp_path / "out" / "generation.json").read_text())
    attempts = {s["task_id"]: s["turns"][0]["attempts"] for s in gen["samples"]}
    assert attempts == {"count-down": 5, "count-up": 1, "double": 1, "swap-sum": 1, "triangle": 1}
    assert retries[:5] == [0, 1, 2, 3, 4]  # the client's own retries (x-stainless-retry-count)
    assert gen["this_call"] == {"requests": 5, "http_requests": 9, "retries": 4}  # as made, counted as they went out
    assert gen["samples"][0]["turns"][0]["latency_s"] >= 1.0


def test_a_sample_failing_after_the_retries_leaves_it_resumable(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VERIKIT_CACHE", str(tmp_path / "cache"))
    with OpenAIStandIn(answers()) as srv:
        srv.fail_next(503, n=2, retry_after=0.01)
        assert generate(srv, tmp_path / "out", "--concurrency", "1", "--max-retries", "1") == 4
        err = capsys.readouterr().err
        assert "1 request(s) of turn 1 got no answer" in err and "HTTP 503" in err and "(2 attempts)" in err, err
        assert not (tmp_path / "out" / "predictions.jsonl").exists()
        assert len(lines(tmp_path / "out" / "transcript.jsonl")) == 4
        before = srv.completions
        assert generate(srv, tmp_path / "out", "--concurrency", "1", "--max-retries", "1") == 0
        assert srv.completions == before + 1
    preds = lines(tmp_path / "out" / "predictions.jsonl")
    assert [p["task_id"] for p in preds] == TASKS


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("case, message", [
    ("refused", "cannot reach http://127.0.0.1:"),
    ("not-openai", "not an OpenAI-compatible endpoint (404"),
    ("model", "model 'no-such-model' is not served at http://127.0.0.1:"),
    ("key", "the server refused the API key from $MY_KEY (401: Incorrect API key provided.)"),
    ("empty-key", "$MY_KEY is set but empty"),
])
def test_a_bad_endpoint_model_or_key_is_exit_2_with_nothing_written(case, message, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("VERIKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("MY_KEY", "" if case == "empty-key" else "sk-wrong")
    out = tmp_path / "out"
    with OpenAIStandIn(answers(), api_key="sk-wrong" if case != "key" else "sk-right") as srv:
        url = {"refused": f"http://127.0.0.1:{_free_port()}/v1", "not-openai": srv.url + "/api"}.get(case)
        code = generate(srv, out, "--api-key-env", "MY_KEY", "--max-retries", "0", base_url=url,
                        model="no-such-model" if case == "model" else MODEL)
        assert srv.completions == 0
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert "Traceback" not in err and len([x for x in err.splitlines() if x.startswith("error:")]) == 1
    if case == "model":
        assert f"it serves: {MODEL}" in err
    assert not out.exists() and not (tmp_path / "cache").exists()


def test_the_api_key_is_written_nowhere(tmp_path, monkeypatch):
    secret = "sk-standin-4f1d9c0b7e2a-do-not-write"
    monkeypatch.setenv("VERIKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with OpenAIStandIn(answers(), api_key=secret) as srv:
        assert generate(srv, tmp_path / "out", "--stream") == 0
        assert srv.completions == 5
    files = [p for d in (tmp_path / "out", tmp_path / "cache") for p in d.rglob("*") if p.is_file()]
    assert len(files) >= 9  # predictions, generation, spec, transcript, 5 cache entries
    assert not [p for p in files if secret.encode() in p.read_bytes()]
    gen = json.loads((tmp_path / "out" / "generation.json").read_text())
    assert gen["endpoint"]["api_key"] == "set" and gen["endpoint"]["api_key_env"] == "OPENAI_API_KEY"


def test_spec_round_trip_and_errors():
    spec = GenerationSpec("smtlib", MODEL, "http://127.0.0.1:1/v1", task_ids=["count-up"], temperature=0.7,
                          feedback_turns=2)
    assert GenerationSpec.from_json(json.loads(json.dumps(spec.to_json()))) == spec
    for bad, word in (({"temperature": 3.0}, "temperature"), ({"samples": 0}, "samples"),
                      ({"sample": 2, "task_ids": ["a"]}, "cannot be combined"), ({"concurrency": 0}, "concurrency")):
        with pytest.raises(SpecError, match=word):
            GenerationSpec("smtlib", MODEL, "http://x/v1", **bad)
    with pytest.raises(SpecError, match="unknown key"):
        GenerationSpec.from_json({**spec.to_json(), "api_key": "x"})


def test_the_request_key_covers_content_and_sample():
    req = {"base_url": "http://h/v1", "model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": None,
           "top_p": None, "max_tokens": None, "seed": 0}
    assert request_key(req, 0) == request_key(dict(reversed(list(req.items()))), 0)
    assert len({request_key(req, 0), request_key(req, 1), request_key({**req, "temperature": 0.0}, 0),
                request_key({**req, "base_url": "http://g/v1"}, 0)}) == 4


def test_the_transcript_cuts_a_torn_line_and_keeps_the_rest(tmp_path):
    path = tmp_path / "transcript.jsonl"
    entry = {"task_id": "t", "sample": 0, "turn": 1, "request_sha256": "k", "completion": None, "error": None}
    path.write_text(json.dumps(entry) + "\n" + '{"task_id": "t", "sam')  # killed while writing
    assert list(parse_transcript(path.read_text())[0]) == [("t", 0, 1)]  # a reader skips the torn line, changes nothing
    j = Transcript(path)
    assert list(j.entries) == [("t", 0, 1)]
    j.append({**entry, "sample": 1})
    j.close()
    assert not j.append({**entry, "sample": 2})  # closed: dropped
    assert [json.loads(x)["sample"] for x in path.read_text().splitlines()] == [0, 1]


def test_no_protocol_and_unknown_mode_are_exit_2(tmp_path, monkeypatch, capsys):
    from verikit_smtlib import BENCHMARK

    with OpenAIStandIn(answers()) as srv:
        assert main(["generate", "smtlib", "--model", MODEL, "--base-url", srv.base_url, "--out", str(tmp_path / "o"),
                     "--mode", "nope"]) == 2
        monkeypatch.setattr(BENCHMARK, "protocol", lambda mode: None)
        assert generate(srv, tmp_path / "o") == 2
        assert srv.completions == 0
    err = capsys.readouterr().err
    assert "unknown mode 'nope'" in err and "smtlib defines no generation protocol" in err


# ---- interrupted and resumed (a subprocess: the signals reach it as they reach a user's run)


def _start(out: Path, env: dict, base_url: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness", "generate", "smtlib", "--model", MODEL, "--base-url",
                             base_url, "--out", str(out), "--samples", "3", "--concurrency", "2"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_interrupted_and_killed_generations_resume_with_nothing_lost_or_duplicated(plain, tmp_path, isolated_cache):
    """SIGINT (exit 130) and SIGKILL (a crash) while requests are in flight; the same command
    then finishes with exactly the predictions of an uninterrupted run, having sent only what
    no earlier process had received. (SIGTERM takes SIGINT's way out of the CLI, exit 143:
    tests/test_stopping.py.)"""
    env = {**isolated_cache, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("OPENAI_API_KEY", None)
    out = tmp_path / "out"
    with OpenAIStandIn(answers(), delay=0.25) as srv:
        for sig, code in ((signal.SIGINT, 130), (signal.SIGKILL, -9)):
            before = len(lines(out / "transcript.jsonl")) if (out / "transcript.jsonl").exists() else 0
            proc = _start(out, env, srv.base_url)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and (not (out / "transcript.jsonl").exists()
                                                   or len(lines(out / "transcript.jsonl")) < before + 2):
                time.sleep(0.05)
            proc.send_signal(sig)
            _, err = proc.communicate(timeout=30)
            assert proc.returncode == code, err
            assert "Traceback" not in err
            if code == 130:
                assert "interrupted" in err
        transcript = [json.loads(x) for x in (out / "transcript.jsonl").read_text().splitlines()]
        done = {(e["task_id"], e["sample"]) for e in transcript}
        assert len(transcript) == len(done) < 15  # each answer written once; some left to do
        sent_before = srv.completions
        assert main(["generate", "smtlib", "--model", MODEL, "--base-url", srv.base_url, "--out", str(out),
                     "--samples", "3", "--concurrency", "2", "--sandbox", "host"]) == 0
        sent = srv.completions - sent_before
    gen = json.loads((out / "generation.json").read_text())
    assert gen["counts"]["resumed"] == len(done)
    assert gen["counts"]["from_server"] + gen["counts"]["from_request_cache"] == 15 - len(done)
    assert sent == gen["this_call"]["requests"] <= gen["counts"]["from_server"]
    preds = lines(out / "predictions.jsonl")
    assert len(preds) == 15 and len({(p["task_id"], p["sample"]) for p in preds}) == 15
    # the same as an uninterrupted run (the module's, 2 samples per task: its lines are a subset)
    plain_lines = (plain[1] / "predictions.jsonl").read_text().splitlines()
    mine = (out / "predictions.jsonl").read_text().splitlines()
    assert [x for x in mine if json.loads(x)["sample"] < 2] == plain_lines


# ---- the verifier in the loop: the real Z3


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    """``generate --feedback-turns 1`` then ``run --predictions`` on the result, with the
    real Z3: ``(srv, out, run dir, generate's exit code, run's exit code)``."""
    if shutil.which("z3") is None:
        pytest.skip("needs z3 on the host")
    root = tmp_path_factory.mktemp("loop")
    mp = pytest.MonkeyPatch()
    mp.setenv("VERIKIT_CACHE", str(root / "cache"))
    with OpenAIStandIn(answers()) as srv:
        code = generate(srv, root / "out", "--feedback-turns", "1", "-j", "2")
        requests = srv.answered()
    run = main(["run", "smtlib", "--sandbox", "host", "-j", "2", "--predictions", str(root / "out" / "predictions.jsonl"),
                "--out", str(root / "run")])
    mp.undo()
    return requests, root / "out", root / "run", code, run


@needs_z3
@pytest.mark.realtool
def test_feedback_turns_fix_a_wrong_invariant_from_z3s_own_answer(loop):
    requests, out, _, code, _ = loop
    assert code == 0
    gen = json.loads((out / "generation.json").read_text())
    validate("generation", gen)
    by = {s["task_id"]: s for s in gen["samples"]}
    cd = by["count-down"]
    assert [t["verdict"] for t in cd["turns"]] == ["failed", "verified"] and cd["fixes"] == 1
    assert cd["turns"][0]["reason"] == "goal init: z3 answered sat" and cd["stopped"] == "verified"
    assert all(by[t]["fixes"] == 0 and by[t]["verdict"] == "verified" for t in ("count-up", "swap-sum", "triangle"))
    dbl = by["double"]  # never an answer: invalid each turn, the turns run out
    assert [t["verdict"] for t in dbl["turns"]] == ["invalid"] * 2 and dbl["stopped"] == "turn-limit"
    assert dbl["fixes"] == 1 and not dbl["extracted"]
    assert gen["counts"]["verified"] == 4 and gen["verifier_runs"] == ["turns/1/run", "turns/2/run"]
    assert gen["decoding"]["feedback_turns"] == 1 and gen["protocol"]["paper"]["feedback_turns"] == 2
    # turn 2 of count-down: the chat so far and Z3's real answer, through the plugin's feedback template
    second = next(r.body for r in requests if len(r.body["messages"]) == 3 and "(> x 0)" in r.body["messages"][0]["content"])
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "user"]
    assert second["messages"][1]["content"] == FIRST["(> x 0)"]
    assert "Z3 did not verify your invariant: goal init: z3 answered sat." in second["messages"][2]["content"]
    assert "- init: not proved (z3: sat)" in second["messages"][2]["content"]
    # every attempt went through an ordinary run with its canaries
    for t in (1, 2):
        report = json.loads((out / "turns" / str(t) / "run" / "report.json").read_text())
        assert report["canaries"]["ok"] and len(report["canaries"]["results"]) == 11
    turn1 = load_records(out / "turns" / "1" / "run" / "records.jsonl")
    assert {r["task_id"] for r in turn1 if r["candidate"]["model"] == MODEL} == set(TASKS)
    preds = lines(out / "predictions.jsonl")
    assert {p["task_id"]: p["meta"]["fixes"] for p in preds} == {"count-down": 1, "count-up": 0, "double": 1,
                                                                  "swap-sum": 0, "triangle": 0}


@needs_z3
@pytest.mark.realtool
def test_verikit_run_scores_the_final_candidates(loop):
    _, _, run, _, code = loop
    assert code == 0
    got = {r["task_id"]: r["verdict"] for r in load_records(run / "records.jsonl") if r["candidate"]["model"] == MODEL}
    assert got == {"count-down": "verified", "count-up": "verified", "double": "invalid", "swap-sum": "verified",
                   "triangle": "verified"}
    counts = json.loads((run / "run.json").read_text())["counts"]
    assert counts["cached"] == 16 and counts["ran"] == 0  # the loop's verifier runs judged them: the same job keys
