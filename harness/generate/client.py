"""The endpoint of a generation: an OpenAI-compatible chat-completions server, through the
official ``openai`` Python client (:class:`Endpoint`).

Retries are the client's own (``max_retries``: 408, 409, 429 and 5xx answers, timeouts and
dropped connections, with exponential backoff from 0.5 s to 8 s and the server's
``Retry-After`` honoured up to two minutes; ``timeout`` per request); the attempts a
request took come from the client's raw response (``retries_taken``). The API key is read
from the environment here and given to the client only: nothing of this module writes or
logs it.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable

import openai

#: The key sent when the key's environment variable is unset: what vLLM, SGLang and the
#: llama.cpp server started without an API key accept (vLLM's documentation uses it).
NO_KEY = "EMPTY"


class EndpointError(Exception):
    """A request that did not give a completion. ``kind``: ``fatal`` (the endpoint, model
    or key is wrong: stop, exit 2), ``transient`` (429/5xx/timeout/connection after the
    client's retries: the sample stays unfinished, a re-run resumes it) or ``request``
    (the server refused this request, e.g. 400 for a prompt longer than the model's
    context: recorded on the sample, whose candidate is then empty)."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


@dataclass
class Completion:
    """One chat completion as the generation records it.

    Attributes:
        content: the assistant message's text ("" when the server gave none);
        finish_reason: the server's (``stop``, ``length``...; None when not given);
        usage: ``{"prompt_tokens", "completion_tokens"}`` (None each when not given);
        system_fingerprint, response_model: as the server gave them (or None);
        latency_s: seconds from the first attempt's start to the last byte;
        attempts: HTTP requests the client sent for it (1 + its retries).
    """

    content: str
    finish_reason: str | None
    usage: dict
    system_fingerprint: str | None
    response_model: str | None
    latency_s: float
    attempts: int

    def to_json(self) -> dict:
        """The completion as JSON (the journal and the request cache)."""
        return {"content": self.content, "finish_reason": self.finish_reason, "usage": self.usage,
                "system_fingerprint": self.system_fingerprint, "response_model": self.response_model,
                "latency_s": self.latency_s, "attempts": self.attempts}

    @classmethod
    def from_json(cls, data: dict) -> "Completion":
        """The completion of :meth:`to_json`. Raises KeyError, TypeError on another shape."""
        usage = data["usage"]
        if not isinstance(data["content"], str) or not isinstance(usage, dict):
            raise TypeError("not a completion")
        return cls(data["content"], data["finish_reason"], {"prompt_tokens": usage.get("prompt_tokens"),
                                                           "completion_tokens": usage.get("completion_tokens")},
                   data["system_fingerprint"], data["response_model"], float(data["latency_s"]), int(data["attempts"]))


def api_key(env: str, log: Callable[[str], None]) -> tuple[str, str]:
    """The API key from the environment variable ``env``: ``(key, state)``, state ``set``
    or ``unset`` (then :data:`NO_KEY` is sent, and ``log`` says so).

    Raises:
        EndpointError: (fatal) the variable is set but empty.
    """
    value = os.environ.get(env)
    if value is None:
        log(f"note: ${env} is unset: sending the API key {NO_KEY!r} (what vLLM, SGLang and llama.cpp's server "
            f"accept when started without a key); a server that needs one answers 401")
        return NO_KEY, "unset"
    if not value.strip():
        raise EndpointError(f"${env} is set but empty: export the API key there (or unset it for a local server "
                            f"without a key)", "fatal")
    return value, "set"


class Endpoint:
    """One OpenAI-compatible server (see the module doc).

    Args:
        base_url: e.g. ``http://127.0.0.1:8000/v1``; key_env: the key's variable;
        timeout_s: per request; max_retries: the client's retries; log: one line to the user.

    Raises:
        EndpointError: (fatal) the key's variable is set but empty.
    """

    def __init__(self, base_url: str, key_env: str, *, timeout_s: float, max_retries: int,
                 log: Callable[[str], None]):
        self.base_url, self.key_env = base_url, key_env
        key, self.key_state = api_key(key_env, log)
        self.client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout_s, max_retries=max_retries)

    def close(self) -> None:
        """Close the client's connections."""
        self.client.close()

    def served_model(self, model: str) -> str:
        """The id the server reports for ``model`` (``GET /v1/models``).

        Raises:
            EndpointError: (fatal) the server cannot be reached, is not OpenAI-compatible,
                refuses the key, or does not serve ``model`` (the message lists what it serves).
        """
        try:
            ids = [m.id for m in self.client.models.list()]
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

    def describe(self, exc: BaseException, what: str) -> str:
        """One line for a failed request ``what`` (no traceback, never the key)."""
        where = f"{self.base_url} ({what})"
        if isinstance(exc, openai.APITimeoutError):
            return f"{where}: no answer within the request timeout, after the client's retries"
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__
            return f"cannot reach {where}: {cause or exc}"
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return (f"{where}: the server refused the API key from ${self.key_env} ({exc.status_code}: "
                    f"{_message(exc)})")
        if isinstance(exc, openai.NotFoundError) and what.startswith("GET"):
            return f"{where}: not an OpenAI-compatible endpoint (404: {_message(exc)}); the base URL usually ends in /v1"
        if isinstance(exc, openai.APIStatusError):
            return f"{where}: HTTP {exc.status_code}: {_message(exc)}"
        if isinstance(exc, openai.APIResponseValidationError):
            return f"{where}: not an OpenAI-compatible answer ({exc.message})"
        return f"{where}: {type(exc).__name__}: {exc}"

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

    def complete(self, request: dict, *, stream: bool) -> Completion:
        """One chat completion of ``request`` (``model``, ``messages`` and the decoding
        parameters that are not None), streamed (server-sent events, with the usage asked
        for) or not.

        Raises:
            EndpointError: the request failed after the client's retries (its kind says
                what to do).
        """
        params = {k: v for k, v in request.items() if v is not None}
        start = time.monotonic()
        try:
            if stream:
                raw = self.client.chat.completions.with_raw_response.create(
                    **params, stream=True, stream_options={"include_usage": True})
                done = _gather(raw.parse())
            else:
                raw = self.client.chat.completions.with_raw_response.create(**params)
                done = _single(raw.parse())
        except Exception as exc:  # noqa: BLE001  # the openai client's errors and the stream's, classified
            raise EndpointError(self.describe(exc, "POST /chat/completions"), self.classify(exc)) from None
        content, finish, usage, fingerprint, model = done
        return Completion(content, finish, usage, fingerprint, model, round(time.monotonic() - start, 3),
                          raw.retries_taken + 1)


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body if isinstance(exc.body, dict) else {}
    text = body.get("message") or (body.get("error") or {}).get("message") if isinstance(body, dict) else None
    return str(text or exc.message)[:300]


def _usage(u) -> dict:
    return {"prompt_tokens": getattr(u, "prompt_tokens", None), "completion_tokens": getattr(u, "completion_tokens", None)}


def _single(resp) -> tuple:
    """``(content, finish_reason, usage, system_fingerprint, model)`` of a ChatCompletion."""
    if not getattr(resp, "choices", None):  # a str: the body was not JSON
        raise ValueError("the answer is not a chat completion with a choice")
    choice = resp.choices[0]
    return (choice.message.content or "", choice.finish_reason, _usage(resp.usage),
            getattr(resp, "system_fingerprint", None), getattr(resp, "model", None))


def _gather(chunks) -> tuple:
    """The same tuple as :func:`_single` from a stream of ChatCompletionChunks."""
    parts, finish, usage, fingerprint, model = [], None, None, None, None
    for chunk in chunks:
        fingerprint = getattr(chunk, "system_fingerprint", None) or fingerprint
        model = getattr(chunk, "model", None) or model
        if getattr(chunk, "usage", None) is not None:
            usage = chunk.usage
        for choice in chunk.choices or ():
            if choice.delta is not None and choice.delta.content:
                parts.append(choice.delta.content)
            if choice.finish_reason:
                finish = choice.finish_reason
    return "".join(parts), finish, _usage(usage), fingerprint, model
