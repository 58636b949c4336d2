"""Where a generation keeps what the server answered: the request cache
(:class:`RequestCache`, shared by every generation of the user) and the directory's
transcript (:class:`Transcript`: every message sent and received, and what makes an
interrupted generation resumable).

The request cache is keyed by :func:`request_key`: the sha256 of the canonical JSON of the
request's content (the base URL as :func:`~harness.generate.client.normalise_base_url`
spells it, model, messages, every decoding parameter, the vendor fields, the seed, ``n``)
and the sample index, so a re-run with the same parameters sends nothing, and two samples
of the same prompt are two entries even when the server ignores the seed. Entries live in
``<result cache>/generations/<key[:2]>/<key>.json``, written atomically, checked on read
(an entry whose stored request does not hash to its key is ignored and named in
``problems``). Only completions are stored: a refused request or a server error never is.
The API key is not part of a request here and is never stored.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from ..model import canonical_json, sha256_text
from ..results.files import write_text_atomic
from ..results.cache import default_cache_dir
from ..results.transcripts import parse_transcript
from .client import Completion

#: The request cache's subdirectory of the kit's result cache.
CACHE_SUBDIR = "generations"


def request_key(request: dict, sample: int) -> str:
    """sha256 (hex) of the canonical JSON ``{"request": request, "sample": sample}``;
    ``request`` holds ``base_url``, ``model``, ``messages`` and the decoding parameters as
    sent (None for one not sent)."""
    return sha256_text(canonical_json({"request": request, "sample": sample}))


class RequestCache:
    """The request cache (see the module doc); ``root`` is the kit's result cache (None:
    ``VERIKIT_CACHE`` or the user cache dir).

    Attributes:
        dir: ``<root>/generations``; problems: entries ignored on read, or not written.
    """

    def __init__(self, root: Path | None = None):
        self.dir = Path(root or default_cache_dir()) / CACHE_SUBDIR
        self.problems: list[str] = []
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        """The cached completion of ``key``, or None (no entry, or an entry that cannot be
        trusted: unreadable, another key, a request that does not hash to it)."""
        path = self._path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if request_key(entry["request"], entry["sample"]) != key or entry.get("key") != key:
                raise ValueError("its request does not hash to its key")
            return Completion.from_json(entry["completion"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            with self._lock:
                self.problems.append(f"{path}: ignored ({exc})")
            return None

    def put(self, key: str, request: dict, sample: int, completion: Completion) -> None:
        """Store a completion (atomically); a failure to write is noted in ``problems``."""
        entry = {"key": key, "request": request, "sample": sample, "completion": completion.to_json()}
        try:
            write_text_atomic(self._path(key), json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n")
        except OSError as exc:
            with self._lock:
                self.problems.append(f"request cache {self.dir}: not written ({exc.strerror or exc})")



class Transcript:
    """``DIR/transcript.jsonl`` (``schemas/transcript.schema.json``): one line per finished
    turn of a sample, appended (flushed and fsync'd) as each answer arrives, from any thread.
    Re-opened, it gives back every turn it holds (:attr:`entries`, the last line of a
    ``(task_id, sample, turn)`` winning), which is what an interrupted generation resumes
    from; a line torn by a kill is cut off, any other unreadable line is set aside in
    ``problems``.

    A line: ``{"task_id", "sample", "turn", "request_sha256"`` (the request's key,
    :func:`request_key`)``, "sent"`` (the messages this turn's request added to the chat:
    turn 1 all of them, a later turn the verifier's feedback; the previous turn's answer is
    that turn's ``completion.content``)``, "batch"`` (``{"n", "choice"}`` when the answer
    is one choice of a request for ``n``, else None)``, "completion"`` (:class:`Completion`
    JSON, or None)``, "source"`` (``server`` or ``cache``)``, "error"`` (None, or the
    server's refusal)``, "received_at"}``.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        self.entries: dict[tuple[str, int, int], dict] = {}
        self.problems: list[str] = []
        self._lock = threading.Lock()
        self._closed = False
        if self.path.exists():
            self._read()
        self._fh = open(self.path, "a", encoding="utf-8")

    def _read(self) -> None:
        data = self.path.read_bytes()
        if data and not data.endswith(b"\n"):  # a line torn by a kill: cut it off
            cut = data.rfind(b"\n") + 1
            with open(self.path, "r+b") as fh:
                fh.truncate(cut)
            data = data[:cut]
        self.entries, bad = parse_transcript(data.decode("utf-8", errors="replace"))
        self.problems += [f"{self.path}:{n}: not a transcript line, ignored ({exc})" for n, exc in bad]

    def append(self, entry: dict) -> bool:
        """Append ``entry`` durably; False (nothing written) once the transcript is closed."""
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n"
        with self._lock:
            if self._closed:
                return False
            self._fh.write(line)
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self.entries[(entry["task_id"], entry["sample"], entry["turn"])] = entry
            return True

    def close(self) -> None:
        """Close it: a request that finishes later is not written (a re-run sends it again,
        or finds it in the request cache)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._fh.close()
