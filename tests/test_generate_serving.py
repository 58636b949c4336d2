"""``verikit generate`` against stand-ins that behave like the serving stacks researchers
use (tests/openai_standin.py, always through the real ``openai`` client), for the example
plugin ``smtlib``: what each behaviour leaves in the output directory, the console and the
exit status.

Checked, one behaviour per test: vLLM's reasoning field and a ``<think>`` section are kept
in the transcript (plain and streamed); a finished generation is re-assembled with no
network request at all (the server gone), and ``--offline`` names the first answer that is
not kept (exit 2); a run where the server refuses every request (a context-length 400) is
exit 2 with the server's message, some refused is exit 4, and the counts agree with what
was sent; a 200 whose body is not JSON is said as such, with the one attempt made (no
retries claimed); ``content: null``, empty and length-cut answers are counted apart and
warned about; ``--system-prompt`` (text or @FILE) and ``--extra-body`` are sent, recorded
and part of the request's key; ``n`` is used where the server gives n choices, and one
request per sample where it refuses ``n`` (llama.cpp) or ignores it (Ollama); the base URL
is normalised before keying (``localhost`` and ``127.0.0.1`` share the cache); an
unreachable server is an error within seconds.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path

import pytest

from harness.cli import main
from harness.generate.client import normalise_base_url
from harness.results import validate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_standin import OpenAIStandIn  # noqa: E402

pytest.importorskip("verikit_smtlib", reason="the example plugin is not installed (nox -s tests installs it)")

MODEL = "standin/model-7b"
TASKS = ["count-down", "count-up", "double", "swap-sum", "triangle"]
GOOD = "Here is an invariant.\n```smt2\n(>= x 0)\n```\n"


def generate(url: str, out: Path, *extra: str) -> int:
    return main(["generate", "smtlib", "--model", MODEL, "--base-url", url, "--out", str(out), "--sandbox", "host",
                 *extra])


def lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def doc(out: Path) -> dict:
    gen = json.loads((out / "generation.json").read_text())
    validate("generation", gen)
    for n, line in enumerate(lines(out / "transcript.jsonl"), 1):
        validate("transcript", line, f"transcript.jsonl:{n}")
    return gen


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("VERIKIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.parametrize("stream", [False, True])
def test_reasoning_and_think_text_are_kept_in_the_transcript(tmp_path, stream):
    think = "<think>x decreases by one each step, so x >= 0 holds</think>\n" + GOOD
    answer = {"content": think, "reasoning_content": "Let me look at the loop guard (> x 0) first."}
    with OpenAIStandIn(default=answer) as srv:
        assert generate(srv.base_url, tmp_path / "out", "--task", "count-down", *(["--stream"] if stream else [])) == 0
    (line,) = lines(tmp_path / "out" / "transcript.jsonl")
    assert line["completion"]["content"] == think  # exactly as received, the <think> section included
    assert line["completion"]["reasoning"] == "Let me look at the loop guard (> x 0) first."
    assert line["sent"][0]["role"] == "user" and "(> x 0)" in line["sent"][0]["content"]
    gen = doc(tmp_path / "out")
    assert gen["samples"][0]["turns"][0]["reasoning_chars"] == len(answer["reasoning_content"])
    assert lines(tmp_path / "out" / "predictions.jsonl")[0]["output"] == "(>= x 0)"  # the answer, not the thoughts


def test_a_finished_generation_is_reassembled_without_the_server(tmp_path, capsys):
    with OpenAIStandIn(default=GOOD) as srv:
        url = srv.base_url
        assert generate(url, tmp_path / "a", "--samples", "2") == 0
        seen = len(srv.requests)
        assert generate(url, tmp_path / "b", "--samples", "2") == 0  # every answer in the request cache
        assert len(srv.requests) == seen  # not even GET /models
    # the server is gone: the same directory (its transcript) and a new one (the request cache)
    assert generate(url, tmp_path / "a", "--samples", "2") == 0
    assert generate(url, tmp_path / "c", "--samples", "2", "--offline") == 0
    assert (tmp_path / "c" / "predictions.jsonl").read_bytes() == (tmp_path / "a" / "predictions.jsonl").read_bytes()
    gen = doc(tmp_path / "c")
    assert not gen["endpoint"]["contacted"] and gen["this_call"] == {"requests": 0, "http_requests": 0, "retries": 0}
    assert gen["counts"]["from_request_cache"] == 10
    capsys.readouterr()
    # --offline with an answer that is not kept: exit 2, naming it, nothing sent
    assert generate(url, tmp_path / "d", "--samples", "3", "--offline") == 2
    err = capsys.readouterr().err
    assert "--offline: no answer kept for count-down #0 turn 1" in err and "Traceback" not in err, err
    assert not (tmp_path / "d").exists()


def test_every_request_refused_is_exit_2_with_the_servers_message(tmp_path, capsys):
    with OpenAIStandIn(default=GOOD, max_context=32000) as srv:  # the paper's 32,000 max tokens on a 32k model
        code = generate(srv.base_url, tmp_path / "out", "--max-tokens", "32000")
        sent = srv.completions
    out = capsys.readouterr().err
    assert code == 2, out
    assert "the server refused every request (5)" in out and "maximum context length is 32000 tokens" in out
    gen = doc(tmp_path / "out")  # what was asked and refused is kept
    assert gen["counts"]["refused"] == 5 and gen["counts"]["answered"] == 0
    assert gen["this_call"]["requests"] == sent == 5
    assert "this call sent 5 request(s) in 5 HTTP request(s) (0 retries)" in out
    assert all(line["error"] and line["completion"] is None for line in lines(tmp_path / "out" / "transcript.jsonl"))


def test_some_refused_is_exit_4_and_counted(tmp_path, capsys):
    with OpenAIStandIn({"(> x 0)": GOOD, "(< i n)": GOOD}) as srv:  # no answer recorded: the stand-in's 400
        code = generate(srv.base_url, tmp_path / "out")
    out = capsys.readouterr().err
    assert code == 4 and "the server refused 2 of 5 request(s)" in out, out
    gen = doc(tmp_path / "out")
    assert (gen["counts"]["answered"], gen["counts"]["refused"]) == (3, 2)


def test_a_200_that_is_not_json_is_said_so_with_no_retries_claimed(tmp_path, capsys):
    with OpenAIStandIn(default=GOOD) as srv:
        srv.raw_next(b"<html><body>502 Bad Gateway</body></html>")
        code = generate(srv.base_url, tmp_path / "out", "--task", "count-down", "--max-retries", "3")
        assert srv.completions == 1
        err = capsys.readouterr().err
        assert code == 4, err
        assert "HTTP 200 but the body is not JSON" in err and "not retried" in err and "after the client's retries" \
            not in err, err
        assert generate(srv.base_url, tmp_path / "out", "--task", "count-down") == 0  # resumable


def test_null_empty_and_length_cut_answers_are_counted_apart(tmp_path, capsys):
    long = "Here is an invariant. " * 20 + "```smt2\n(>= x 0)\n```"
    with OpenAIStandIn({"(> x 0)": {"content": None}, "(< x 10)": "   ", "(> a 0)": long}, default=GOOD) as srv:
        assert generate(srv.base_url, tmp_path / "out", "--max-tokens", "50") == 0
    err = capsys.readouterr().err
    gen = doc(tmp_path / "out")
    c = gen["counts"]
    assert (c["content_null"], c["empty"], c["length_cut"]) == (1, 1, 1), c
    assert "1 answer(s) were cut at max_tokens" in err and "(content: null)" in err and "were empty" in err
    by = {s["task_id"]: s["turns"][0] for s in gen["samples"]}
    assert by["count-down"]["content"] == "null" and by["count-down"]["finish_reason"] == "stop"
    assert by["swap-sum"]["finish_reason"] == "length" and not by["swap-sum"]["extracted"]
    null = next(x for x in lines(tmp_path / "out" / "transcript.jsonl") if x["task_id"] == "count-down")
    assert null["completion"]["content"] is None


def test_system_prompt_and_extra_body_are_sent_recorded_and_keyed(tmp_path, capsys):
    (tmp_path / "sys.txt").write_text("You are a careful verification engineer.")
    extra = '{"top_k": 20, "chat_template_kwargs": {"enable_thinking": false}}'
    with OpenAIStandIn(default=GOOD) as srv:
        assert generate(srv.base_url, tmp_path / "a", "--task", "count-up", "--system-prompt", "@" + str(tmp_path / "sys.txt"),
                        "--extra-body", extra) == 0
        body = srv.answered()[-1].body
        assert body["messages"][0] == {"role": "system", "content": "You are a careful verification engineer."}
        assert body["top_k"] == 20 and body["chat_template_kwargs"] == {"enable_thinking": False}
        gen = doc(tmp_path / "a")
        assert gen["spec"]["extra_body"] == json.loads(extra)
        assert gen["spec"]["system_prompt"] == "You are a careful verification engineer."
        assert lines(tmp_path / "a" / "transcript.jsonl")[0]["sent"][0]["role"] == "system"
        n = srv.completions
        assert generate(srv.base_url, tmp_path / "b", "--task", "count-up", "--system-prompt", "Be brief.",
                        "--extra-body", extra) == 0  # another system prompt: another key, sent
        assert generate(srv.base_url, tmp_path / "c", "--task", "count-up", "--system-prompt", "Be brief.",
                        "--extra-body", '{"top_k": 40}') == 0  # other vendor fields: another key
        assert srv.completions == n + 2
        capsys.readouterr()
        assert generate(srv.base_url, tmp_path / "d", "--task", "count-up", "--extra-body", '{"temperature": 1}') == 2
        assert generate(srv.base_url, tmp_path / "e", "--task", "count-up", "--extra-body", '[1]') == 2
        assert generate(srv.base_url, tmp_path / "f", "--task", "count-up", "--system-prompt", "@/no/such/file") == 2
    err = capsys.readouterr().err
    assert "'extra_body' sets temperature, which the kit sends itself" in err and "a JSON object is needed" in err
    assert "/no/such/file: cannot be read" in err and "Traceback" not in err


@pytest.mark.parametrize("n_mode, requests, n", [("choices", 5, "used"), ("reject", 1 + 15, "refused"),
                                                  ("ignore", 1 + 14, "refused")])
def test_n_is_used_where_served_and_falls_back_to_one_request_per_sample(tmp_path, n_mode, requests, n):
    answers = {"(> x 0)": [GOOD, GOOD.replace("(>= x 0)", "(>= x 1)"), GOOD.replace("(>= x 0)", "(>= x 2)")]}
    with OpenAIStandIn(answers, default=GOOD, n_mode=n_mode) as srv:
        assert generate(srv.base_url, tmp_path / "out", "--samples", "3", "--concurrency", "1") == 0
        assert srv.completions == requests
        with_n = [r for r in srv.requests if r.body and r.body.get("n")]
        assert with_n and all(r.body["n"] == 3 for r in with_n)
        assert len(with_n) == (5 if n_mode == "choices" else 1)  # refused or ignored once: not asked again
    gen = doc(tmp_path / "out")
    assert gen["endpoint"]["n"].startswith(n)
    outputs = {(p["task_id"], p["sample"]): p["output"] for p in lines(tmp_path / "out" / "predictions.jsonl")}
    assert [outputs[("count-down", i)] for i in range(3)] == ["(>= x 0)", "(>= x 1)", "(>= x 2)"]
    assert gen["counts"]["answered"] == 15


def test_the_base_url_is_normalised_before_keying(tmp_path):
    assert normalise_base_url("HTTP://LocalHost:80/v1/") == "http://127.0.0.1/v1"
    assert normalise_base_url("http://[::1]:8000/v1") == normalise_base_url("http://127.0.0.1:8000/v1")
    assert normalise_base_url("https://api.example.com:443/v1") == "https://api.example.com/v1"
    with OpenAIStandIn(default=GOOD) as srv:
        port = srv.base_url.split(":")[2].split("/")[0]
        assert generate(f"http://localhost:{port}/v1/", tmp_path / "a", "--task", "count-up") == 0
        n = srv.completions
        assert generate(f"http://127.0.0.1:{port}/v1", tmp_path / "b", "--task", "count-up") == 0
        assert srv.completions == n  # the same key: from the request cache


def test_an_unreachable_server_is_an_error_within_seconds(tmp_path, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    start = time.monotonic()
    assert generate(f"http://127.0.0.1:{port}/v1", tmp_path / "out") == 2
    assert time.monotonic() - start < 5  # was 15-17 s: the client's five retries with backoff
    assert "cannot reach" in capsys.readouterr().err
