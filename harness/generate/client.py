"""The endpoint of a generation: an OpenAI-compatible chat-completions server, through the
official ``openai`` Python client (:class:`Endpoint`).

Retries are the client's own (``max_retries``: 408, 409, 429 and 5xx answers, timeouts and
dropped connections, with exponential backoff from 0.5 s to 8 s and the server's
``Retry-After`` honoured up to two minutes; ``timeout`` per request, and
:data:`CONNECT_TIMEOUT_S` to open a connection). Every HTTP request the client sends is
counted as it goes out (an event hook of the client's HTTP transport:
:attr:`Endpoint.http_requests`), so retries are reported as made, for answers and
failures alike. The API key is read from the environment here and given to the client
only: nothing of this module writes or logs it.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit, urlunsplit

import openai

#: The key sent when the key's environment variable is unset: what vLLM, SGLang and the
#: llama.cpp server started without an API key accept (vLLM's documentation uses it).
NO_KEY = "EMPTY"
#: Seconds to open a connection to the server (an unreachable host fails in this time per
#: attempt, not in the request timeout).
CONNECT_TIMEOUT_S = 5.0
#: The client's retries of ``GET /models`` (the check before any chat request): one, so
#: that a wrong or unreachable ``--base-url`` is an error within seconds.
MODELS_RETRIES = 1
#: Message fields in which servers return the model's reasoning apart from the answer:
#: vLLM, SGLang and llama.cpp's server (``reasoning_content``), Ollama and newer vLLM
#: (``reasoning``).
REASONING_FIELDS = ("reasoning_content", "reasoning")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOOPBACK = {"localhost", "127.0.0.1", "::1", "[::1]", "ip6-localhost"}


def normalise_base_url(url: str) -> str:
    """``url`` in the one spelling the request cache keys on: scheme and host lower-case,
    every loopback name (``localhost``, ``::1``) as ``127.0.0.1``, the scheme's default port
    left out, no trailing slash, no query or fragment. ``HTTP://LocalHost:80/v1/`` ->
    ``http://127.0.0.1/v1``. The request itself goes to the URL as given."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host in _LOOPBACK:
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    return urlunsplit((scheme, netloc, parts.path.rstrip("/"), "", ""))


class EndpointError(Exception):
    """A request that did not give a completion. ``kind``: ``fatal`` (the endpoint, model
    or key is wrong: stop, exit 2), ``transient`` (429/5xx/timeout/connection after the
    client's retries, or an answer that is not a chat completion: the sample stays
    unfinished, a re-run resumes it) or ``request`` (the server refused this request, e.g.
    400 for a prompt longer than the model's context: recorded on the sample, whose
    candidate is then empty). ``status``: the HTTP status when the server answered one."""

    def __init__(self, message: str, kind: str, status: int | None = None):
        super().__init__(message)
        self.kind = kind
        self.status = status


@dataclass
class Completion:
    """One choice of a chat completion as the generation records it.

    Attributes:
        content: the assistant message's text exactly as received (a ``<think>`` section
            included), or None when the server sent ``content: null``;
        reasoning: the reasoning text the server gave apart from the answer
            (:data:`REASONING_FIELDS`), or None;
        finish_reason: the server's (``stop``, ``length``...; None when not given);
        usage: ``{"prompt_tokens", "completion_tokens"}`` of the whole response (None each
            when not given; with ``n`` choices, the usage of all of them);
        system_fingerprint, response_model: as the server gave them (or None);
        latency_s: seconds from the first attempt's start to the last byte;
        attempts: HTTP requests the client sent for it (1 + its retries).
    """

    content: str | None
    finish_reason: str | None
    usage: dict
    system_fingerprint: str | None
    response_model: str | None
    latency_s: float
    attempts: int
    reasoning: str | None = None

    @property
    def text(self) -> str:
        """The content, "" for ``content: null``."""
        return self.content or ""

    def to_json(self) -> dict:
        """The completion as JSON (the transcript and the request cache)."""
        return {"content": self.content, "reasoning": self.reasoning, "finish_reason": self.finish_reason,
                "usage": self.usage, "system_fingerprint": self.system_fingerprint,
                "response_model": self.response_model, "latency_s": self.latency_s, "attempts": self.attempts}

    @classmethod
    def from_json(cls, data: dict) -> "Completion":
        """The completion of :meth:`to_json`. Raises KeyError, TypeError on another shape."""
        usage = data["usage"]
        content, reasoning = data["content"], data.get("reasoning")
        if not isinstance(content, (str, type(None))) or not isinstance(usage, dict) \
                or not isinstance(reasoning, (str, type(None))):
            raise TypeError("not a completion")
        return cls(content, data["finish_reason"], {"prompt_tokens": usage.get("prompt_tokens"),
                                                    "completion_tokens": usage.get("completion_tokens")},
                   data["system_fingerprint"], data["response_model"], float(data["latency_s"]), int(data["attempts"]),
                   reasoning)


def api_key(env: str, log: Callable[[str], None]) -> str:
    """The API key from the environment variable ``env``; :data:`NO_KEY` when it is unset
    (``log`` says so; :func:`key_state` is what generation.json records).

    Raises:
        EndpointError: (fatal) the variable is set but empty.
    """
    value = os.environ.get(env)
    if value is None:
        log(f"note: ${env} is unset: sending the API key {NO_KEY!r} (what vLLM, SGLang and llama.cpp's server "
            f"accept when started without a key); a server that needs one answers 401")
        return NO_KEY
    if not value.strip():
        raise EndpointError(f"${env} is set but empty: export the API key there (or unset it for a local server "
                            f"without a key)", "fatal")
    return value


def key_state(env: str) -> str:
    """``set`` or ``unset``: whether the API key's variable ``env`` is set (what
    generation.json records; the key itself never is)."""
    return "unset" if os.environ.get(env) is None else "set"


class Endpoint:
    """One OpenAI-compatible server (see the module doc).

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1``; key_env: the key's variable;
        timeout_s: per request; max_retries: the client's retries; log: one line to the user.

    Attributes:
        http_requests: HTTP requests sent so far to ``/chat/completions`` (retries included).

    Raises:
        EndpointError: (fatal) the key's variable is set but empty.
    """

    def __init__(self, base_url: str, key_env: str, *, timeout_s: float, max_retries: int,
                 log: Callable[[str], None]):
        self.base_url, self.key_env = base_url, key_env
        key = api_key(key_env, log)
        self.http_requests = 0
        self._count = threading.Lock()
        self._mine = threading.local()  # this thread's requests: the hook runs in the thread that sends
        http = openai.DefaultHttpx2Client(event_hooks={"request": [self._sent]})
        self.client = openai.OpenAI(base_url=base_url, api_key=key, max_retries=max_retries, http_client=http,
                                    timeout=openai.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s)))

    def _sent(self, request) -> None:
        if request.url.path.endswith("/chat/completions"):
            with self._count:
                self.http_requests += 1
            self._mine.sent = getattr(self._mine, "sent", 0) + 1

    def close(self) -> None:
        """Close the client's connections."""
        self.client.close()

    def served_model(self, model: str) -> str:
        """The id the server reports for ``model`` (``GET /v1/models``, with
        :data:`MODELS_RETRIES` retries).

        Raises:
            EndpointError: (fatal) the server cannot be reached, is not OpenAI-compatible,
                refuses the key, or does not serve ``model`` (the message lists what it serves).
        """
        try:
            ids = [m.id for m in self.client.with_options(max_retries=MODELS_RETRIES).models.list()]
        except Exception as exc:  # noqa: BLE001  # any failure here is one message, exit 2
            raise EndpointError(self.describe(exc, "GET /models"), "fatal") from None
        if not all(isinstance(i, str) for i in ids):
            raise EndpointError(f"{self.base_url}: not an OpenAI-compatible endpoint (GET /models gave no model "
                                f"ids)", "fatal")
        if model in ids:
            return model
        shown = ", ".join(ids[:20]) + (f" (+{len(ids) - 20} more)" if len(ids) > 20 else "")
        raise EndpointError(f"model {model!r} is not served at {self.base_url}; it serves: {shown or 'nothing'}",
                            "fatal")

    def describe(self, exc: BaseException, what: str, attempts: int | None = None) -> str:
        """One line for a failed request ``what`` (no traceback, never the key); ``attempts``:
        the HTTP requests it took, said when known."""
        where = f"{self.base_url} ({what})"
        tries = "" if attempts is None else f" ({attempts} attempt{'s' if attempts != 1 else ''})"
        if isinstance(exc, openai.APITimeoutError):
            return f"{where}: no answer within the request timeout{tries}"
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__
            return f"cannot reach {where}: {cause or exc}{tries}"
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return (f"{where}: the server refused the API key from ${self.key_env} ({exc.status_code}: "
                    f"{_message(exc)})")
        if isinstance(exc, openai.NotFoundError) and what.startswith("GET"):
            return f"{where}: not an OpenAI-compatible endpoint (404: {_message(exc)}); the base URL usually ends in /v1"
        if isinstance(exc, openai.APIStatusError):
            return f"{where}: HTTP {exc.status_code}: {_message(exc)}{tries}"
        if isinstance(exc, openai.APIResponseValidationError):
            return f"{where}: not an OpenAI-compatible answer ({exc.message}){tries}"
        return f"{where}: {type(exc).__name__}: {exc}{tries}"

    def classify(self, exc: BaseException) -> str:
        """``fatal``, ``transient`` or ``request`` for a chat-completion failure (see
        :class:`EndpointError`)."""
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)):
            return "fatal"
        if isinstance(exc, (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError,
                            openai.ConflictError)):
            return "transient"
        if isinstance(exc, openai.APIStatusError):
            return "transient" if exc.status_code in (408,) or exc.status_code >= 500 else "request"
        return "transient"

    def complete(self, request: dict, *, stream: bool, extra_body: dict | None = None) -> list[Completion]:
        """The choices of one chat completion of ``request`` (``model``, ``messages`` and the
        decoding parameters that are not None, ``n`` among them), streamed (server-sent
        events, with the usage asked for) or not; ``extra_body``: vendor fields added to
        the JSON body as given. Returns one :class:`Completion` per choice, in the order
        of the choices' ``index`` (fewer than ``n`` when the server gave fewer).

        Raises:
            EndpointError: the request failed (after the client's retries when it was one
                they cover; its kind says what to do, the message how many attempts were made).
        """
        params = {k: v for k, v in request.items() if v is not None}
        if extra_body:
            params["extra_body"] = extra_body
        start = time.monotonic()
        before = getattr(self._mine, "sent", 0)
        try:
            if stream:
                raw = self.client.chat.completions.with_raw_response.create(
                    **params, stream=True, stream_options={"include_usage": True})
                done = _gather(raw.parse())
            else:
                raw = self.client.chat.completions.with_raw_response.create(**params)
                done = _single(raw.parse())
        except NotACompletion as exc:
            raise EndpointError(f"{self.base_url} (POST /chat/completions): HTTP 200 but {exc} (not retried: the "
                                f"server answered)", "transient", 200) from None
        except Exception as exc:  # noqa: BLE001  # the openai client's errors and the stream's, classified
            attempts = getattr(self._mine, "sent", 0) - before
            status = getattr(exc, "status_code", None)
            raise EndpointError(self.describe(exc, "POST /chat/completions", attempts or None), self.classify(exc),
                                status) from None
        choices, usage, fingerprint, model = done
        latency = round(time.monotonic() - start, 3)
        return [Completion(content, finish, usage, fingerprint, model, latency, raw.retries_taken + 1, reasoning)
                for content, reasoning, finish in choices]


class NotACompletion(ValueError):
    """An HTTP 200 whose body is not a chat completion with a choice."""


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    text = body.get("message") or (body.get("error") or {}).get("message") if isinstance(body, dict) else None
    return str(text or exc.message)[:300]


def _usage(u) -> dict:
    return {"prompt_tokens": getattr(u, "prompt_tokens", None), "completion_tokens": getattr(u, "completion_tokens", None)}


def _reasoning(obj) -> str | None:
    """The reasoning text of a message or a stream delta (:data:`REASONING_FIELDS`)."""
    extra = getattr(obj, "model_extra", None) or {}
    for name in REASONING_FIELDS:
        value = getattr(obj, name, None) if name in type(obj).model_fields else extra.get(name)
        if isinstance(value, str):
            return value
    return None


def _single(resp) -> tuple:
    """``([(content, reasoning, finish_reason) per choice], usage, system_fingerprint,
    model)`` of a ChatCompletion. Raises NotACompletion."""
    if isinstance(resp, str):
        raise NotACompletion(f"the body is not JSON (it starts {resp[:60]!r})")
    if not getattr(resp, "choices", None):
        raise NotACompletion("the answer has no choice")
    choices = sorted(resp.choices, key=lambda c: c.index or 0)
    return ([(c.message.content, _reasoning(c.message), c.finish_reason) for c in choices], _usage(resp.usage),
            getattr(resp, "system_fingerprint", None), getattr(resp, "model", None))


def _gather(chunks) -> tuple:
    """The same tuple as :func:`_single` from a stream of ChatCompletionChunks (choices
    told apart by their ``index``). Raises NotACompletion (no choice in the stream)."""
    parts: dict[int, list[str]] = {}
    thoughts: dict[int, list[str]] = {}
    finish: dict[int, str | None] = {}
    usage, fingerprint, model = None, None, None
    for chunk in chunks:
        if isinstance(chunk, str):
            raise NotACompletion(f"the stream is not chat-completion chunks (it starts {chunk[:60]!r})")
        fingerprint = getattr(chunk, "system_fingerprint", None) or fingerprint
        model = getattr(chunk, "model", None) or model
        if getattr(chunk, "usage", None) is not None:
            usage = chunk.usage
        for choice in chunk.choices or ():
            i = choice.index or 0
            parts.setdefault(i, [])
            if choice.delta is not None:
                if choice.delta.content:
                    parts[i].append(choice.delta.content)
                thought = _reasoning(choice.delta)
                if thought:
                    thoughts.setdefault(i, []).append(thought)
            if choice.finish_reason:
                finish[i] = choice.finish_reason
    if not parts:
        raise NotACompletion("the stream held no choice")
    return ([("".join(parts[i]), "".join(thoughts[i]) if i in thoughts else None, finish.get(i)) for i in sorted(parts)],
            _usage(usage), fingerprint, model)
