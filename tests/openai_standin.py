"""An OpenAI-compatible chat-completions stand-in for the generation tests: a
standard-library HTTP server on 127.0.0.1 (a free port, served from a thread) that answers
``GET /v1/models`` and ``POST /v1/chat/completions`` (plain JSON, or server-sent events
with ``stream: true``) as the official ``openai`` client reads them, with recorded answers,
errors on demand and a count of every request. Tests use it only through the real
``openai`` client (``verikit generate``).

Usage::

    from openai_standin import OpenAIStandIn

    answers = {"count-up": "```smt2\\n(<= i n)\\n```",           # substring of the last user message
               "sha256:" + sha: ["sample 0's answer", "sample 1's"],  # the message's exact sha256
               "goal preserve": lambda body: "..."}                # a function of the request body
    with OpenAIStandIn(answers, models=("standin/model-7b",), api_key="sk-test") as srv:
        srv.base_url            # "http://127.0.0.1:PORT/v1"
        srv.delay_next(3.0)                          # hold the next completion 3 s (a client timeout)
        srv.fail_next(429, n=2, retry_after=0.05)   # then 2 answers 429 + Retry-After
        srv.fail_next(500)                           # then one 500
        srv.delay = 0.2                              # every completion takes at least 0.2 s
        ...
        srv.completions          # chat-completion requests received (errors included)
        srv.requests             # every request: Request(method, path, status, body, retry_count, stream)

Answers: the first rule (in the mapping's order) that matches the **last user message**
gives the completion: a key ``"sha256:<hex>"`` matches the message whose UTF-8 sha256 is
that; any other key matches when it is a substring of the message. A value is a string,
a list of strings (indexed by the request's ``seed`` modulo its length: ``verikit
generate`` sends ``seed = --seed + sample``, so with ``--seed 0`` the list is per sample;
choice ``i`` of a request for ``n`` takes index ``seed + i``), a function ``f(body) -> str``
of the whole request body (messages, parameters), or a dict ``{"content": str | None,
"reasoning_content": str}`` (a message with ``content: null`` or with vLLM's reasoning
field; each may also be a list or a function, as above). A request no rule matches gets
``default`` when given, else a 400 whose message quotes the prompt's start (a test that
forgot an answer fails loudly).

Server behaviours on demand: ``n`` (``n_mode``: ``"choices"`` answers ``n`` choices as
vLLM and OpenAI do, ``"ignore"`` one choice as Ollama does, ``"reject"`` a 400 as
llama.cpp's server does for ``n > 1``); ``max_context`` (prompt words + ``max_tokens``
above it: a 400 with vLLM's "maximum context length" message); :meth:`raw_next` (the
next completion answers a raw body, e.g. an HTML error page with status 200).

What it answers like a server: ``system_fingerprint`` (``fingerprint``), ``usage``
(``prompt_tokens``, ``completion_tokens``, ``total_tokens``; with ``stream_options:
{"include_usage": true}`` a last chunk with usage and no choices), ``finish_reason``
``"length"`` when the completion has more tokens than ``max_tokens`` (then cut to that
many), 401 with an OpenAI error body for a wrong or missing key (when ``api_key`` is set),
404 for an unknown model, ``Retry-After`` on a 429.

What it does not do (so the tests do not exercise it): a real model's behaviour (answers
are recorded), a tokenizer (a token here is a whitespace-separated word), context-length
limits beyond ``max_context``'s word count, server-side batching and scheduling, the
rate-limit headers of hosted APIs (``x-ratelimit-*``), tools/function calls, logprobs.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

Answer = str | list[str] | Callable[[dict], str] | dict


@dataclass
class Request:
    """One request the stand-in received (in :attr:`OpenAIStandIn.requests` in order of
    arrival): ``method``, ``path``, the ``status`` it answered (0 while it is held),
    the JSON ``body`` (None for a GET), the client's ``x-stainless-retry-count`` header
    (None when absent) and whether it asked for a stream."""

    method: str
    path: str
    status: int
    body: dict | None
    retry_count: int | None
    stream: bool = False


class OpenAIStandIn:
    """The server (see the module doc); ``with OpenAIStandIn(answers) as srv:`` serves on
    ``srv.base_url`` until the block ends.

    Args:
        answers: rule -> answer (module doc); default: the answer when no rule matches
            (None: a 400).
        models: the model ids ``/v1/models`` lists (the first is what tests usually use).
        api_key: the bearer token required (None: any, or none).
        fingerprint: the ``system_fingerprint`` of every completion (None: left out).
        delay: seconds every completion waits before answering.
        chunk_words: words per streamed chunk.
    """

    def __init__(self, answers: dict[str, Answer] | None = None, *, default: Answer | None = None,
                 models: tuple[str, ...] = ("standin/model-7b",), api_key: str | None = None,
                 fingerprint: str | None = "fp_standin_1", delay: float = 0.0, chunk_words: int = 3,
                 n_mode: str = "choices", max_context: int | None = None):
        self.answers = dict(answers or {})
        self.default = default
        self.models = tuple(models)
        self.api_key = api_key
        self.fingerprint = fingerprint
        self.delay = delay
        self.chunk_words = max(1, chunk_words)
        self.n_mode = n_mode
        self.max_context = max_context
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        self._next: list[tuple] = []  # what the next chat completions do, in order: ("fail", ...) or ("delay", s)
        self.server = _Server(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.base_url = self.url + "/v1"

    def __enter__(self) -> "OpenAIStandIn":
        threading.Thread(target=self.server.serve_forever, daemon=True, name="openai-standin").start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ---- for the tests

    def fail_next(self, status: int, n: int = 1, *, retry_after: float | None = None,
                  message: str | None = None) -> None:
        """``n`` chat completions, after those already scheduled by :meth:`fail_next` and
        :meth:`delay_next` (one queue, in the order of the calls), answer ``status`` with an
        OpenAI error body (``message``), and a ``Retry-After: retry_after`` header
        (seconds) when given."""
        with self._lock:
            self._next += [("fail", status, retry_after, message)] * n

    def raw_next(self, body: bytes, *, status: int = 200, content_type: str = "text/html", n: int = 1) -> None:
        """``n`` chat completions, next in the same queue as :meth:`fail_next`'s, answer
        ``body`` as it is, with ``status`` and ``content_type`` (e.g. a proxy's HTML page
        with status 200)."""
        with self._lock:
            self._next += [("raw", status, body, content_type)] * n

    def delay_next(self, seconds: float, n: int = 1) -> None:
        """``n`` chat completions, next in the same queue as :meth:`fail_next`'s, are held
        ``seconds`` before they are answered (a client whose timeout is shorter gives up and,
        by its retries, asks again)."""
        with self._lock:
            self._next += [("delay", seconds)] * n

    @property
    def completions(self) -> int:
        """Chat-completion requests received so far (those answered with an error too)."""
        with self._lock:
            return sum(r.path.endswith("/chat/completions") for r in self.requests)

    def answered(self) -> list[Request]:
        """The chat-completion requests answered 200, in order of arrival."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions") and r.status == 200]

    # ---- the server's side

    def _log(self, req: Request) -> None:
        with self._lock:
            self.requests.append(req)

    def _take(self, queue: list):
        with self._lock:
            return queue.pop(0) if queue else None

    def answer(self, body: dict, choice: int = 0) -> dict | None:
        """The recorded message ``{"content", "reasoning_content"?}`` for choice ``choice``
        of a request ``body`` (module doc), or None."""
        last = next((m.get("content") or "" for m in reversed(body.get("messages") or []) if m.get("role") == "user"), "")
        digest = hashlib.sha256(last.encode("utf-8")).hexdigest()
        body = {**body, "seed": int(body.get("seed") or 0) + choice}
        for rule, value in self.answers.items():
            if (rule == f"sha256:{digest}") if rule.startswith("sha256:") else (rule in last):
                return _message(value, body)
        return None if self.default is None else _message(self.default, body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a client that hung up (its timeout) is no error here
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


def _message(value: Answer, body: dict) -> dict:
    if isinstance(value, dict):
        return {k: (None if v is None else _pick(v, body)) for k, v in value.items()}
    return {"content": _pick(value, body)}


def _pick(value: Answer, body: dict) -> str:
    if callable(value):
        return value(body)
    if isinstance(value, list):
        return value[int(body.get("seed") or 0) % len(value)]
    return value


def _words(text: str) -> int:
    return len(text.split())


def _handler(srv: OpenAIStandIn):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):  # quiet
            pass

        def _retry_count(self) -> int | None:
            value = self.headers.get("x-stainless-retry-count")
            return int(value) if value and value.isdigit() else None

        def _send(self, status: int, obj, headers: dict | None = None) -> None:
            data = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                pass

        def _error(self, status: int, message: str, kind: str, code: str | None = None,
                   headers: dict | None = None) -> None:
            self._send(status, {"error": {"message": message, "type": kind, "param": None, "code": code}}, headers)

        def _authorised(self) -> bool:
            if srv.api_key is None:
                return True
            return self.headers.get("Authorization") == f"Bearer {srv.api_key}"

        def do_GET(self):
            path = self.path.split("?")[0]
            if path != "/v1/models":
                srv._log(Request("GET", path, 404, None, self._retry_count()))
                return self._error(404, f"no route {path}", "not_found_error")
            if not self._authorised():
                srv._log(Request("GET", path, 401, None, self._retry_count()))
                return self._error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
            srv._log(Request("GET", path, 200, None, self._retry_count()))
            self._send(200, {"object": "list", "data": [{"id": m, "object": "model", "created": 1764115200,
                                                          "owned_by": "standin"} for m in srv.models]})

        def do_POST(self):
            path = self.path.split("?")[0]
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = None
            seen = Request("POST", path, 0, body, self._retry_count(), bool(isinstance(body, dict) and body.get("stream")))
            srv._log(seen)  # in order of arrival; its status once answered (0 while held)
            stream = seen.stream

            def log(status: int) -> None:
                seen.status = status

            if path != "/v1/chat/completions":
                log(404)
                return self._error(404, f"no route {path}", "not_found_error")
            if not isinstance(body, dict):
                log(400)
                return self._error(400, "the body is not a JSON object", "invalid_request_error")
            if not self._authorised():
                log(401)
                return self._error(401, "Incorrect API key provided.", "invalid_request_error", "invalid_api_key")
            action = srv._take(srv._next) or ("delay", 0.0)
            if action[0] == "fail":
                _, status, after, message = action
                log(status)
                headers = {"Retry-After": f"{after:g}"} if after is not None else {}
                kind = "rate_limit_error" if status == 429 else "server_error"
                return self._error(status, message or f"stand-in: injected {status}", kind, None, headers)
            if action[0] == "raw":
                _, status, raw, ctype = action
                log(status)
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
                return None
            wait = action[1] + srv.delay
            if wait:
                time.sleep(wait)
            if body.get("model") not in srv.models:
                log(404)
                return self._error(404, f"The model `{body.get('model')}` does not exist.", "invalid_request_error",
                                   "model_not_found")
            n = int(body.get("n") or 1)
            if n > 1 and srv.n_mode == "reject":  # llama.cpp's server
                log(400)
                return self._error(400, "Only one completion choice is allowed", "invalid_request_error")
            if srv.n_mode == "ignore":  # Ollama's
                n = 1
            prompt_tokens = sum(_words(str(m.get("content") or "")) for m in body.get("messages") or [])
            limit = body.get("max_tokens") or body.get("max_completion_tokens")
            if srv.max_context is not None and prompt_tokens + int(limit or 0) > srv.max_context:
                log(400)  # vLLM's words
                return self._error(400, f"This model's maximum context length is {srv.max_context} tokens. However, "
                                   f"you requested {prompt_tokens + int(limit or 0)} tokens ({prompt_tokens} in the "
                                   f"messages, {int(limit or 0)} in the completion). Please reduce the length of the "
                                   f"messages or completion.", "BadRequestError")
            messages = [srv.answer(body, i) for i in range(n)]
            if messages[0] is None:
                log(400)
                last = next((m.get("content") or "" for m in reversed(body.get("messages") or [])
                             if m.get("role") == "user"), "")
                return self._error(400, f"stand-in: no recorded answer for the prompt {last[:80]!r}",
                                   "invalid_request_error")
            choices, completion_tokens = [], 0
            for i, msg in enumerate(messages):
                finish, text = "stop", msg.get("content")
                if text is not None and limit is not None and _words(text) > int(limit):
                    text, finish = " ".join(text.split()[: int(limit)]), "length"
                completion_tokens += _words(text or "")
                choices.append({"index": i, "finish_reason": finish, "logprobs": None,
                                "message": {"role": "assistant", **msg, "content": text}})
            usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                     "total_tokens": prompt_tokens + completion_tokens}
            log(200)
            ident = f"chatcmpl-{len(srv.requests)}"
            base = {"id": ident, "created": int(time.time()), "model": body["model"]}
            if srv.fingerprint is not None:
                base["system_fingerprint"] = srv.fingerprint
            if not stream:
                return self._send(200, {**base, "object": "chat.completion", "usage": usage, "choices": choices})
            self._stream(base, choices, usage, bool((body.get("stream_options") or {}).get("include_usage")))

        def _stream(self, base: dict, choices: list[dict], usage: dict, include_usage: bool) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            chunks = []
            for c in choices:
                i, msg = c["index"], c["message"]
                chunks.append({"index": i, "delta": {"role": "assistant", "content": ""}, "finish_reason": None})
                if msg.get("reasoning_content"):
                    chunks += [{"index": i, "delta": {"reasoning_content": p}, "finish_reason": None}
                               for p in self._pieces(msg["reasoning_content"])]
                chunks += [{"index": i, "delta": {"content": p}, "finish_reason": None}
                           for p in self._pieces(msg.get("content") or "")]
                chunks.append({"index": i, "delta": {}, "finish_reason": c["finish_reason"]})
            events = [{**base, "object": "chat.completion.chunk", "choices": [c]} for c in chunks]
            if include_usage:
                events.append({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
            try:
                for e in events:
                    self.wfile.write(b"data: " + json.dumps(e).encode() + b"\n\n")
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _pieces(self, text: str) -> list[str]:
            """Pieces of ``chunk_words`` words that join back to the exact text (white space kept)."""
            words = text.split(" ")
            return [" ".join(words[i:i + srv.chunk_words]) + (" " if i + srv.chunk_words < len(words) else "")
                    for i in range(0, len(words), srv.chunk_words)] or [""]

    return Handler
