"""The turns of a generation (:func:`run_generation`, behind :func:`harness.generate.generate`).

Order of work, so that a bad endpoint, model or key stops it before anything is written:
the benchmark, mode and protocol; the tasks (the run's own planning,
:func:`harness.runner.plan_run`); the first turn's requests, looked up in the directory's
transcript and the request cache; only when one of them is missing, the API key and
``GET /v1/models`` (so a finished generation is re-assembled with no network request at
all; ``offline`` forbids any); then the directory (locked, its spec checked or written)
and the turns. Turn 1 sends each sample's first turn
(:meth:`~harness.plugin.Benchmark.messages`, with the spec's system prompt); the samples
of a task that all need the server go out as one request for ``n`` choices, and one
request per sample when the server refuses ``n`` (HTTP 400) or gives fewer choices. With
feedback turns, every turn's candidates are verified by an ordinary run into
``DIR/turns/<t>/run`` and each sample whose record is not ``verified`` and whose benchmark
has a message for it (:meth:`~harness.plugin.Benchmark.feedback`) goes on to the next turn
with its chat so far (previous messages, the assistant's completion, the message). The
requests of a turn go out ``concurrency`` at a time from worker threads; each answer is
written to the transcript as it arrives (:class:`~harness.generate.store.Transcript`), so
an interrupted generation re-run with the same command sends only what it had not
received.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from .. import registry
from ..model import sha256_text, utc_now
from ..progress import PlainProgress
from ..results import validate
from ..results.files import write_text_atomic
from ..runner import RunError, hold_run_dir_lock, plan_run
from ..runspec import RunSettings, RunSpec
from .client import Completion, Endpoint, EndpointError, key_state, normalise_base_url
from .outputs import write_outputs
from .spec import GenerateError, GenerationResult, GenerationSettings, GenerationSpec, decoding, resolve_mode
from ..results.transcripts import TRANSCRIPT, parse_transcript
from .store import RequestCache, Transcript, request_key

#: Spec fields that may differ when an interrupted generation is resumed (they change how
#: requests are sent or verified in parallel, not what is asked).
TRANSPORT = ("concurrency", "stream", "request_timeout_s", "max_retries", "parallel")


@dataclass
class Chat:
    """One sample's chat: ``messages`` so far, its ``turns`` (generation.json's entries),
    the candidate of each turn (``candidates``: text, or None when none was extracted),
    why it ended (``stopped``, None while it goes on) and the messages its next request
    adds to the chat (``new``: the transcript's ``sent``)."""

    task_id: str
    sample: int
    seed: int
    messages: list[dict]
    turns: list[dict] = field(default_factory=list)
    completions: list[str] = field(default_factory=list)
    candidates: list[str | None] = field(default_factory=list)
    stopped: str | None = None
    new: list[dict] = field(default_factory=list)

    @property
    def ident(self) -> tuple[str, int]:
        return self.task_id, self.sample


def run_generation(spec: GenerationSpec, out: Path, settings: GenerationSettings,
                   console: Console | None) -> GenerationResult:
    """:func:`harness.generate.generate` (see the module doc).

    Raises:
        GenerateError: as :func:`harness.generate.generate`.
        KeyboardInterrupt: Ctrl-C or SIGTERM: what was received is in the transcript.
    """
    console = console or Console(stderr=True)
    try:
        bench = registry.benchmark(spec.benchmark)
    except registry.UnknownName as exc:
        raise GenerateError(str(exc)) from None
    mode = resolve_mode(bench, spec.mode)
    protocol = bench.protocol(mode)
    if protocol is None:
        raise GenerateError(f"{bench.name} defines no generation protocol for {bench.mode_option} {mode!r}")
    # the verifier runs of the feedback turns: a run of the generation's tasks with its settings
    run_spec = RunSpec(benchmark=spec.benchmark, dataset=spec.dataset, modes=(mode,), task_ids=spec.task_ids,
                       sample=spec.sample, seed=spec.seed, sandbox=spec.sandbox, parallel=spec.parallel,
                       limits=spec.limits)
    run_settings = RunSettings(cache_dir=settings.cache_dir, use_cache=settings.use_cache, data_dir=settings.data_dir,
                               progress=settings.progress,
                               command=settings.command or ("verikit", "generate", spec.benchmark))
    try:
        plan = plan_run(run_spec, console, data_dir=settings.data_dir)
    except RunError as exc:
        raise GenerateError(str(exc)) from None
    gen = Generation(spec, out, settings, console, bench, mode, protocol, plan, decoding(spec, protocol), run_settings)
    try:
        gen.start()
        missing = gen.first_turn_missing()
        if missing is not None:  # a bad endpoint, model or key stops it here, before anything is written
            if settings.offline:
                raise GenerateError(f"--offline: no answer kept for {missing.task_id} #{missing.sample} turn 1 (in "
                                    f"{out / TRANSCRIPT} or the request cache)")
            gen.connect()
        with hold_run_dir_lock(out):
            _check_spec(out, spec, gen.served)
            gen.run()
            return write_outputs(gen)
    except (RunError, EndpointError) as exc:  # EndpointError: fatal mid-run (e.g. the key revoked: 401)
        raise GenerateError(str(exc)) from None
    finally:
        gen.close()


def _check_spec(out: Path, spec: GenerationSpec, served: str) -> None:
    """``DIR/spec.json``: written by the first call; a later call into the same directory
    (a resume) must ask the same (:data:`TRANSPORT` fields aside) of the same model.

    Raises:
        GenerateError: the directory holds a generation of another spec.
    """
    path = out / "spec.json"
    mine = {"spec": spec.to_json(), "model": served}
    if path.exists():
        try:
            theirs = json.loads(path.read_text(encoding="utf-8"))
            old, new = dict(theirs["spec"]), dict(mine["spec"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise GenerateError(f"{path}: cannot be read ({exc}); remove the directory or choose another --out") \
                from None
        differ = sorted(k for k in set(old) | set(new) if k not in TRANSPORT and old.get(k) != new.get(k))
        if theirs.get("model") != served:
            differ.append("model (as served)")
        if differ:
            raise GenerateError(f"{out} holds a generation of another spec (it differs in: {', '.join(differ)}); "
                                f"choose another --out, or re-run the command that made it")
    write_text_atomic(path, json.dumps(mine, indent=2, sort_keys=True) + "\n")


@dataclass
class Ask:
    """One chat-completion request to send: the ``chats`` it answers (one, or the samples
    of a task asked for as ``n`` choices), the request as keyed (``request``: base URL
    normalised, ``n`` when batched) and each chat's key."""

    chats: list[Chat]
    request: dict
    keys: list[str]

    @property
    def batch(self) -> bool:
        return "n" in self.request


class Generation:
    """The state of one generation while it runs (see the module doc); its attributes are
    what :func:`harness.generate.outputs.write_outputs` reads."""

    def __init__(self, spec, out, settings, console, bench, mode, protocol, plan, params, run_settings):
        self.spec, self.out, self.settings, self.console = spec, Path(out), settings, console
        self.bench, self.mode, self.protocol, self.plan = bench, mode, protocol, plan
        self.params, self.run_settings = params, run_settings
        # the id /v1/models lists for the model is the one asked for (served_model checks it)
        self.served = spec.model
        self.base_url = normalise_base_url(spec.base_url)
        self.endpoint: Endpoint | None = None
        self.key_state = key_state(spec.api_key_env)
        self.cache = RequestCache(settings.cache_dir) if settings.use_cache else None
        self.sent = 0  # chat-completion requests this call sent (refused and failed ones too)
        self.errors: list[str] = []
        self.unfinished: list[str] = []
        self.n_refused: str | None = None  # why the server does not give n choices (then one request per sample)
        self.chats: dict[tuple[str, int], Chat] = {}
        self.runs: list[str] = []
        self.created_at = utc_now()
        self.transcript: Transcript | None = None
        self._count = threading.Lock()

    def log(self, text: str) -> None:
        """Say ``text`` on the generation's console as it is (no markup, no wrapping)."""
        self.console.print(text, markup=False, highlight=False, soft_wrap=True)

    # ---- the chats and the endpoint

    def start(self) -> None:
        """Every sample's chat at its first turn (the benchmark's messages, the spec's
        system prompt). Raises GenerateError (a prompt cannot be made)."""
        replaced = False
        for task in sorted(self.plan.tasks, key=lambda t: t.task_id):
            try:
                first = [dict(m) for m in self.bench.messages(self.plan.fetched, task, self.mode)]
            except (NotImplementedError, ValueError) as exc:
                raise GenerateError(f"{self.bench.name}: cannot make the prompt of task {task.task_id}: {exc}") \
                    from None
            if self.spec.system_prompt is not None:
                replaced = replaced or any(m.get("role") == "system" for m in first)
                first = [{"role": "system", "content": self.spec.system_prompt}] + \
                    [m for m in first if m.get("role") != "system"]
            for i in range(self.params["samples"]):
                msgs = [dict(m) for m in first]
                self.chats[(task.task_id, i)] = Chat(task.task_id, i, self.spec.seed + i, msgs, new=list(msgs))
        if replaced:
            self.log("note: --system-prompt replaces the protocol's own system message")

    def first_turn_missing(self) -> Chat | None:
        """The first chat whose first-turn answer is in neither the directory's transcript
        nor the request cache (then the server is needed; nothing is written here), or None."""
        path = self.out / TRANSCRIPT
        written = parse_transcript(path.read_text(encoding="utf-8", errors="replace"))[0] if path.exists() else {}
        return next((chat for chat in self.chats.values() if self._kept(chat, 1, written) is None), None)

    def _kept(self, chat: Chat, t: int, written: dict) -> tuple[str, str, dict | Completion] | None:
        """Where ``chat``'s answer of turn ``t`` is kept, under one of :meth:`keys_of`:
        ``("transcript", key, line)`` when ``written`` (transcript lines by ``(task_id,
        sample, turn)``) holds it, else ``("cache", key, completion)`` from the request
        cache, else None."""
        keys = self.keys_of(chat, t)
        line = written.get((chat.task_id, chat.sample, t))
        if line is not None and line.get("request_sha256") in keys:
            return "transcript", line["request_sha256"], line
        for key in keys if self.cache is not None else ():
            completion = self.cache.get(key)
            if completion is not None:
                return "cache", key, completion
        return None

    def connect(self) -> Endpoint:
        """The endpoint, checked once (API key, ``GET /v1/models``) before the first request.

        Raises:
            GenerateError: (2) ``offline`` (the callers name the missing answer first: this
                is the one place no request can get past), or the endpoint, model or key is wrong.
        """
        if self.endpoint is None:
            if self.settings.offline:
                raise GenerateError("--offline: a request would have to be sent")
            try:
                endpoint = Endpoint(self.spec.base_url, self.spec.api_key_env, timeout_s=self.spec.request_timeout_s,
                                    max_retries=self.spec.max_retries, log=self.log)
            except EndpointError as exc:
                raise GenerateError(str(exc)) from None
            try:
                endpoint.served_model(self.spec.model)
            except EndpointError as exc:
                endpoint.close()
                raise GenerateError(str(exc)) from None
            self.endpoint = endpoint
        return self.endpoint

    def close(self) -> None:
        if self.endpoint is not None:
            self.endpoint.close()

    # ---- the turns

    def run(self) -> None:
        """Every turn of every sample; raises GenerateError (code 4) when requests of a turn
        got no answer (all else is in the transcript)."""
        self.transcript = Transcript(self.out / TRANSCRIPT)
        for problem in self.transcript.problems:
            self.log(f"warning: {problem}")
        try:
            active = list(self.chats.values())
            last = self.params["feedback_turns"] + 1
            for t in range(1, last + 1):
                self._turn(t, active)
                if self.unfinished:
                    raise GenerateError(f"{len(self.unfinished)} request(s) of turn {t} got no answer (first: "
                                        f"{self.unfinished[0]}); everything received is kept in "
                                        f"{self.transcript.path}: re-run the same command to resume", 4)
                if last == 1:
                    for chat in active:
                        chat.stopped = "single-turn"
                    break
                active = self._verify(t, active, final=t == last)
                if not active:
                    break
        finally:
            self.transcript.close()
            for problem in (self.cache.problems if self.cache else []):
                self.log(f"warning: {problem}")

    def request(self, chat: Chat, *, n: int | None = None) -> dict:
        """The request of ``chat``'s next turn as keyed: base URL (normalised), model,
        messages and the decoding parameters as sent (None: not sent), the sample's seed;
        the vendor fields when the spec has any. ``n``: the request for the task's ``n``
        samples at once (``seed`` the generation's, no per-sample seed)."""
        req = {"base_url": self.base_url, "model": self.served, "messages": chat.messages,
               "temperature": self.params["temperature"], "top_p": self.params["top_p"],
               "max_tokens": self.params["max_tokens"], "seed": chat.seed if n is None else self.spec.seed}
        if self.spec.extra_body:
            req["extra_body"] = self.spec.extra_body
        if n is not None:
            req["n"] = n
        return req

    def keys_of(self, chat: Chat, t: int) -> list[str]:
        """The keys under which ``chat``'s answer of turn ``t`` may be kept: its own request's,
        and on turn 1 (samples > 1) its choice of the task's request for ``n``."""
        keys = [request_key(self.request(chat), chat.sample)]
        if t == 1 and self.params["samples"] > 1:
            keys.append(request_key(self.request(chat, n=self.params["samples"]), chat.sample))
        return keys

    def _turn(self, t: int, active: list[Chat]) -> None:
        """Turn ``t`` of every chat of ``active``: from the transcript, the request cache, or
        the server."""
        missing: list[Chat] = []
        resumed = cached = 0
        for chat in active:
            kept = self._kept(chat, t, self.transcript.entries)
            if kept is None:
                missing.append(chat)
            elif kept[0] == "transcript":
                resumed += 1
                self._add(chat, t, kept[2], "transcript")
            else:
                cached += 1
                _, key, completion = kept
                own = key == self.keys_of(chat, t)[0]  # else its choice of the task's request for n
                batch = None if own else {"n": self.params["samples"], "choice": chat.sample}
                self._add(chat, t, self._write(chat, t, key, batch, completion, "cache", None), "cache")
        if missing and self.settings.offline:
            first = missing[0]
            raise GenerateError(f"--offline: no answer kept for {first.task_id} #{first.sample} turn {t} (in "
                                f"{self.transcript.path} or the request cache); {len(missing)} of turn {t}'s "
                                f"{len(active)} request(s) would have to be sent")
        asks = self._asks(t, missing)
        self.log(f"turn {t}: {len(active)} sample(s): {resumed} from {self.transcript.path.name}, {cached} from the "
                 f"request cache, {len(missing)} to request in {len(asks)} request(s) ({self.spec.concurrency} at a time)")
        if not asks:
            return
        self.connect()
        label = f"{self.bench.name} {self.mode} turn {t}"
        for entries in self._parallel(asks, lambda ask: self._fetch(t, ask), label):
            for chat, entry in entries:
                if entry is not None:
                    self._add(chat, t, entry, entry["source"])

    def _asks(self, t: int, missing: list[Chat]) -> list[Ask]:
        """The requests for ``missing``: on turn 1 the samples of a task that all need the
        server as one request for ``n`` (unless the server refused ``n``), else one each."""
        samples = self.params["samples"]
        by_task: dict[str, list[Chat]] = {}
        for chat in missing:
            by_task.setdefault(chat.task_id, []).append(chat)
        asks = []
        for chats in by_task.values():
            if t == 1 and samples > 1 and len(chats) == samples and self.n_refused is None:
                chats = sorted(chats, key=lambda c: c.sample)
                req = self.request(chats[0], n=samples)
                asks.append(Ask(chats, req, [request_key(req, c.sample) for c in chats]))
                continue
            asks += [self._single(chat) for chat in chats]
        return asks

    def _fetch(self, t: int, ask: Ask) -> list[tuple[Chat, dict | None]]:
        """Worker thread: ``ask``'s completions from the server, each written to the
        request cache and the transcript as it arrives. Returns ``[(chat, transcript
        entry or None)]``; None: no answer (noted in ``unfinished``). A request for ``n``
        that the server refuses with HTTP 400, or answers with fewer choices, is completed
        by one request per remaining sample (and ``n`` is not asked again). Raises
        EndpointError (fatal)."""
        if ask.batch and self.n_refused is not None:  # refused since this request was planned: one by one
            return [x for c in ask.chats for x in self._fetch(t, self._single(c))]
        sent = {k: v for k, v in ask.request.items() if k not in ("base_url", "extra_body")}
        with self._count:
            self.sent += 1
        try:
            choices, error = self.endpoint.complete(sent, stream=self.spec.stream, extra_body=self.spec.extra_body), None
        except EndpointError as exc:
            if exc.kind == "fatal":
                raise
            if ask.batch and exc.status == 400:
                self._no_n(f"the server refused n={len(ask.chats)} ({exc})")
                return [x for c in ask.chats for x in self._fetch(t, self._single(c))]
            if exc.kind == "transient":
                with self._count:
                    self.unfinished += [f"{c.task_id} #{c.sample}: {exc}" for c in ask.chats]
                return [(c, None) for c in ask.chats]
            choices, error = [], str(exc)
        if error is not None:
            return [(c, self._write(c, t, k, None, None, "server", error)) for c, k in zip(ask.chats, ask.keys)]
        out = []
        for i, (chat, key) in enumerate(zip(ask.chats, ask.keys)):
            if i >= len(choices):
                break
            if self.cache is not None:
                self.cache.put(key, ask.request, chat.sample, choices[i])
            batch = {"n": len(ask.chats), "choice": chat.sample} if ask.batch else None
            out.append((chat, self._write(chat, t, key, batch, choices[i], "server", None)))
        if len(choices) < len(ask.chats):  # a server that ignores n (llama.cpp's, Ollama's): the rest one by one
            self._no_n(f"the server gave {len(choices)} choice(s) for n={len(ask.chats)}")
            for chat in ask.chats[len(choices):]:
                out += self._fetch(t, self._single(chat))
        return out

    def _single(self, chat: Chat) -> Ask:
        """The request of ``chat`` alone (its own seed)."""
        req = self.request(chat)
        return Ask([chat], req, [request_key(req, chat.sample)])

    def _no_n(self, why: str) -> None:
        with self._count:
            if self.n_refused is None:
                self.n_refused = why
                self.log(f"note: {why}: one request per sample from now on")

    def _write(self, chat: Chat, t: int, key: str, batch: dict | None, completion: Completion | None, source: str,
               error: str | None) -> dict:
        """Write turn ``t`` of ``chat`` to the transcript; returns the line."""
        entry = {"task_id": chat.task_id, "sample": chat.sample, "turn": t, "request_sha256": key,
                 "sent": chat.new, "batch": batch, "completion": completion.to_json() if completion else None,
                 "source": source, "error": error, "received_at": utc_now()}
        validate("transcript", entry, str(self.transcript.path))
        self.transcript.append(entry)
        return entry

    def _add(self, chat: Chat, t: int, entry: dict, how: str) -> None:
        """Record turn ``t`` of ``chat`` from its transcript ``entry`` (main thread); ``how``:
        ``transcript`` (kept by an earlier call), ``cache`` or ``server``."""
        comp = Completion.from_json(entry["completion"]) if entry.get("completion") else None
        content = comp.text if comp else ""
        candidate = None
        if comp is not None and comp.content is not None:
            try:
                candidate = self.bench.extract(content, self.mode)
            except Exception as exc:  # noqa: BLE001  # a plugin's extraction bug: no answer, said once per turn
                self.log(f"warning: {self.bench.name}.extract failed on {chat.task_id} #{chat.sample} turn {t} "
                         f"({type(exc).__name__}: {exc}): no answer")
        if entry.get("error"):
            self.errors.append(f"{chat.task_id} #{chat.sample} turn {t}: {entry['error']}")
            self.log(f"warning: {chat.task_id} #{chat.sample} turn {t}: the server refused the request: "
                     f"{entry['error']}; its candidate is empty")
        chat.completions.append(content)
        chat.candidates.append(candidate)
        chat.turns.append({
            "turn": t, "request_sha256": entry["request_sha256"], "resumed": how == "transcript",
            "cached": entry.get("source") == "cache", "batch": entry.get("batch"),
            "finish_reason": comp.finish_reason if comp else "error",
            "content": "none" if comp is None else "null" if comp.content is None else
            "empty" if not comp.content.strip() else "text",
            "usage": comp.usage if comp else {"prompt_tokens": None, "completion_tokens": None},
            "latency_s": comp.latency_s if comp else None, "attempts": comp.attempts if comp else None,
            "response_model": comp.response_model if comp else None,
            "system_fingerprint": comp.system_fingerprint if comp else None,
            "reasoning_chars": len(comp.reasoning) if comp and comp.reasoning else 0,
            "completion_sha256": sha256_text(content), "extracted": candidate is not None,
            "candidate_sha256": sha256_text(candidate or ""), "error": entry.get("error"),
            "verdict": None, "reason": None})
        if entry.get("error"):
            chat.stopped = "request-error"

    def _feedback(self, record: dict, previous: str) -> str | None:
        """The benchmark's feedback message for ``record``, given the attempt's completion
        as ``previous`` when its hook takes it (a plugin written before that keyword
        existed gets the record and mode only)."""
        params = inspect.signature(self.bench.feedback).parameters
        if "previous" in params or any(p.kind is p.VAR_KEYWORD for p in params.values()):
            return self.bench.feedback(record, self.mode, previous=previous)
        return self.bench.feedback(record, self.mode)

    def _parallel(self, items: list, fn: Callable, label: str) -> list:
        """``fn(item)`` for each of ``items`` on ``concurrency`` daemon worker threads, with
        progress; results in ``items``' order. An exception of ``fn`` stops the others
        (what is in flight is dropped) and is raised here; so is Ctrl-C."""
        if not items:
            return []
        work: queue.Queue = queue.Queue()
        for i, item in enumerate(items):
            work.put((i, item))
        done: queue.Queue = queue.Queue()
        stop = threading.Event()

        def worker():
            while not stop.is_set():
                try:
                    i, item = work.get_nowait()
                except queue.Empty:
                    return
                try:
                    done.put((i, fn(item), None))
                except BaseException as exc:  # noqa: BLE001  # handed to the main thread
                    done.put((i, None, exc))

        for _ in range(min(self.spec.concurrency, len(items))):
            threading.Thread(target=worker, daemon=True, name="verikit-generate").start()
        results: list = [None] * len(items)
        show = self.settings.progress and self.console.is_terminal
        plain = PlainProgress(len(items), self.console, label) if self.settings.progress and not show else None
        try:
            with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          console=self.console, disable=not show, transient=True) as bar, \
                    (plain or contextlib.nullcontext()):
                tid = bar.add_task(label, total=len(items))
                for _ in items:
                    while True:
                        try:
                            i, res, exc = done.get(timeout=0.2)
                            break
                        except queue.Empty:
                            continue
                    if exc is not None:
                        raise exc
                    results[i] = res
                    bar.advance(tid)
                    if plain is not None:
                        got = [e for _, e in res]
                        plain.update({"verdict": "refused" if any(e is not None and e["error"] for e in got) else
                                      "no answer" if None in got else "received"})
        except BaseException:
            stop.set()
            raise
        return results

    # ---- the verifier in the loop

    def _verify(self, t: int, active: list[Chat], *, final: bool) -> list[Chat]:
        """Verify turn ``t``'s candidates of ``active`` by an ordinary run into
        ``DIR/turns/<t>/run``; return the chats that go on to turn ``t + 1``.

        Raises:
            GenerateError: the run cannot start (2), its canaries failed (3) or infra errors
                remain (4).
        """
        from ..runner import run as run_verifier
        from ..results import load_records
        from .outputs import prediction_line

        tdir = self.out / "turns" / str(t)
        preds = tdir / "predictions.jsonl"
        lines = [prediction_line(self, chat, t) for chat in sorted(active, key=lambda c: c.ident)]
        write_text_atomic(preds, "".join(json.dumps(x, sort_keys=True, ensure_ascii=False) + "\n" for x in lines))
        self.log(f"turn {t}: verifying {len(lines)} candidate(s) into {tdir / 'run'} (its log: {tdir / 'run.log'})")
        turn_spec = self.plan.given.replace(predictions=str(preds), task_ids=None, sample=None)
        with open(tdir / "run.log", "a", encoding="utf-8") as fh:  # the run's tables and progress lines
            report, manifest, code = run_verifier(turn_spec, tdir / "run", settings=self.run_settings,
                                                  console=Console(file=fh, width=160, soft_wrap=True), html=False)
        self.runs.append(str(Path("turns") / str(t) / "run"))
        counts, canaries = manifest["counts"], report["canaries"]
        self.log(f"turn {t}: {counts['jobs']} job(s): ran {counts['ran']}, {counts['cached']} from the result cache, "
                 f"{counts['resumed']} resumed; canaries {'as expected' if canaries['ok'] else 'FAILED'}")
        if code == 3:
            raise GenerateError(f"the canaries of the verifier run of turn {t} failed ({tdir / 'run'}): its verdicts "
                                f"cannot be trusted, so no feedback is sent", 3)
        if code == 4:
            raise GenerateError(f"infra errors remain in the verifier run of turn {t} ({tdir / 'run'}): re-run the "
                                f"same command to resume", 4)
        if code != 0:
            raise GenerateError(f"the verifier run of turn {t} ended with exit code {code} ({tdir / 'run'})")
        records = {(r["task_id"], r["candidate"]["sample"]): r for r in load_records(tdir / "run" / "records.jsonl")
                   if r["candidate"]["model"] == self.served
                   and str(r["candidate"].get("origin", "")).startswith("predictions:")}
        going = []
        for chat in active:
            rec = records.get(chat.ident)
            if rec is None:
                raise GenerateError(f"the verifier run of turn {t} has no record of {chat.task_id} #{chat.sample}")
            chat.turns[-1]["verdict"], chat.turns[-1]["reason"] = rec["verdict"], rec["reason"][:500]
            if chat.stopped:  # a refused request: verified as an empty candidate, no more turns
                continue
            if rec["verdict"] == "verified":
                chat.stopped = "verified"
                continue
            if final:
                chat.stopped = "turn-limit"
                continue
            msg = self._feedback(rec, chat.completions[-1])
            if msg is None:
                chat.stopped = "no-feedback"
                continue
            chat.new = [{"role": "user", "content": msg}]
            chat.messages = chat.messages + [{"role": "assistant", "content": chat.completions[-1]}, *chat.new]
            going.append(chat)
        verified = sum(c.turns[-1]["verdict"] == "verified" for c in active)
        self.log(f"turn {t}: {verified} of {len(active)} verified; {len(going)} go on to turn {t + 1} with the "
                 f"verifier's feedback" if not final else f"turn {t}: {verified} of {len(active)} verified (last turn)")
        return going
