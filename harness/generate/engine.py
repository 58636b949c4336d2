"""The turns of a generation (:func:`run_generation`, behind :func:`harness.generate.generate`).

Order of work, so that a bad endpoint, model or key stops it before anything is written:
the benchmark, mode and protocol; the tasks (the run's own planning,
:func:`harness.runner.plan_run`); the API key and ``GET /v1/models``; then the directory
(locked, its spec checked or written) and the turns. Turn 1 sends each sample's first
turn (:meth:`~harness.plugin.Benchmark.messages`); with feedback turns, every turn's
candidates are verified by an ordinary run into ``DIR/turns/<t>/run`` and each sample
whose record is not ``verified`` and whose benchmark has a message for it
(:meth:`~harness.plugin.Benchmark.feedback`) goes on to the next turn with its chat so
far (previous messages, the assistant's completion, the message). The requests of a turn
go out ``concurrency`` at a time from worker threads; each answer is journaled as it
arrives (:class:`~harness.generate.store.Journal`), so an interrupted generation re-run
with the same command sends only what it had not received.
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
from ..results.files import write_text_atomic
from ..runner import RunError, RunOptions, locked, plan_run
from .client import Completion, Endpoint, EndpointError
from .outputs import write_outputs
from .spec import GenerateError, GenerationResult, GenerationSettings, GenerationSpec
from .store import Journal, RequestCache, request_key

#: Spec fields that may differ when an interrupted generation is resumed (they change how
#: requests are sent or verified in parallel, not what is asked).
TRANSPORT = ("concurrency", "stream", "request_timeout_s", "max_retries", "parallel")


@dataclass
class Chat:
    """One sample's chat: ``messages`` so far, its ``turns`` (generation.json's entries),
    the candidate of each turn (``candidates``: text, or None when none was extracted) and
    why it ended (``stopped``, None while it goes on)."""

    task_id: str
    sample: int
    seed: int
    messages: list[dict]
    turns: list[dict] = field(default_factory=list)
    completions: list[str] = field(default_factory=list)
    candidates: list[str | None] = field(default_factory=list)
    stopped: str | None = None

    @property
    def ident(self) -> tuple[str, int]:
        return self.task_id, self.sample


def _say(console: Console, text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def resolve_mode(bench, mode: str | None) -> str:
    """The one mode generated for: ``mode`` (must be one of the benchmark's), else the
    only one of its default modes (or modes) that has a protocol.

    Raises:
        GenerateError: unknown mode, no protocol for it, or several to choose from.
    """
    opt = f"--{bench.mode_option}"
    if mode is not None:
        if mode not in bench.modes:
            raise GenerateError(f"unknown {bench.mode_option} {mode!r}; {bench.name} {bench.mode_option}s: "
                                f"{', '.join(bench.modes)}")
        return mode
    have = [m for m in (bench.default_modes or bench.modes) if bench.protocol(m) is not None]
    if len(have) == 1:
        return have[0]
    have = have or [m for m in bench.modes if bench.protocol(m) is not None]
    if not have:
        raise GenerateError(f"{bench.name} defines no generation protocol: it cannot be generated for")
    raise GenerateError(f"{bench.name}: say which {opt} to generate for ({', '.join(have)})")


def decoding(spec: GenerationSpec, protocol) -> dict:
    """The decoding actually used: ``{"samples", "temperature", "top_p", "max_tokens",
    "feedback_turns", "source": {name: "user" | "protocol" | "default"}}`` (the spec's
    value, else the protocol's; feedback turns: the spec's, else 0)."""
    out, source = {}, {}
    for name in ("samples", "temperature", "top_p", "max_tokens"):
        given = getattr(spec, name)
        out[name] = given if given is not None else getattr(protocol, name)
        source[name] = "user" if given is not None else "protocol"
    out["feedback_turns"] = spec.feedback_turns if spec.feedback_turns is not None else 0
    source["feedback_turns"] = "user" if spec.feedback_turns is not None else "default"
    out["source"] = source
    return out


def run_generation(spec: GenerationSpec, out: Path, settings: GenerationSettings,
                   console: Console | None) -> GenerationResult:
    """:func:`harness.generate.generate` (see the module doc).

    Raises:
        GenerateError: as :func:`harness.generate.generate`.
        KeyboardInterrupt: Ctrl-C or SIGTERM: what was received is journaled.
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
    opts = RunOptions(benchmark=spec.benchmark, dataset=spec.dataset, modes=(mode,), task_ids=spec.task_ids,
                      sample=spec.sample, seed=spec.seed, data_dir=settings.data_dir, sandbox=spec.sandbox,
                      parallel=spec.parallel, limits=spec.limits, cache_dir=settings.cache_dir,
                      use_cache=settings.use_cache, progress=settings.progress,
                      command=settings.command or ("verikit", "generate", spec.benchmark))
    try:
        plan = plan_run(opts, console)
    except RunError as exc:
        raise GenerateError(str(exc)) from None
    params = decoding(spec, protocol)
    try:
        endpoint = Endpoint(spec.base_url, spec.api_key_env, timeout_s=spec.request_timeout_s,
                            max_retries=spec.max_retries, log=lambda m: _say(console, m))
        served = endpoint.served_model(spec.model)
    except EndpointError as exc:
        raise GenerateError(str(exc)) from None
    try:
        with locked(out):
            _check_spec(out, spec, served)
            gen = Generation(spec, out, settings, console, bench, mode, protocol, plan, params, endpoint, served, opts)
            gen.run()
            return write_outputs(gen)
    except (RunError, EndpointError) as exc:  # EndpointError: fatal mid-run (e.g. the key revoked: 401)
        raise GenerateError(str(exc)) from None
    finally:
        endpoint.close()


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


class Generation:
    """The state of one generation while it runs (see the module doc); its attributes are
    what :func:`harness.generate.outputs.write_outputs` reads."""

    def __init__(self, spec, out, settings, console, bench, mode, protocol, plan, params, endpoint, served, opts):
        self.spec, self.out, self.settings, self.console = spec, out, settings, console
        self.bench, self.mode, self.protocol, self.plan = bench, mode, protocol, plan
        self.params, self.endpoint, self.served, self.opts = params, endpoint, served, opts
        self.base_url = spec.base_url.rstrip("/")
        self.cache = RequestCache(settings.cache_dir) if settings.use_cache else None
        self.sent = self.cached = self.resumed = 0
        self.errors: list[str] = []
        self.unfinished: list[str] = []
        self.chats: dict[tuple[str, int], Chat] = {}
        self.runs: list[str] = []
        self.created_at = utc_now()
        self._count = threading.Lock()

    def log(self, text: str) -> None:
        _say(self.console, text)

    # ---- the turns

    def run(self) -> None:
        """Every turn of every sample; raises GenerateError (code 4) when samples are left
        unfinished by server errors after the client's retries (all else is journaled)."""
        for task in sorted(self.plan.tasks, key=lambda t: t.task_id):
            try:
                first = self.bench.messages(self.plan.fetched, task, self.mode)
            except (NotImplementedError, ValueError) as exc:
                raise GenerateError(f"{self.bench.name}: cannot make the prompt of task {task.task_id}: {exc}") \
                    from None
            for i in range(self.params["samples"]):
                self.chats[(task.task_id, i)] = Chat(task.task_id, i, self.spec.seed + i, [dict(m) for m in first])
        self.journal = Journal(self.out / "turns.jsonl")
        for problem in self.journal.problems:
            self.log(f"warning: {problem}")
        try:
            active = list(self.chats.values())
            last = self.params["feedback_turns"] + 1
            for t in range(1, last + 1):
                self._turn(t, active)
                if self.unfinished:
                    raise GenerateError(f"{len(self.unfinished)} request(s) of turn {t} failed after the client's "
                                        f"retries (first: {self.unfinished[0]}); everything received is kept: re-run "
                                        f"the same command to resume", 4)
                if last == 1:
                    for chat in active:
                        chat.stopped = "single-turn"
                    break
                active = self._verify(t, active, final=t == last)
                if not active:
                    break
        finally:
            self.journal.close()
            for problem in (self.cache.problems if self.cache else []):
                self.log(f"warning: {problem}")

    def request(self, chat: Chat) -> dict:
        """The request of ``chat``'s next turn: base URL, model, messages and the decoding
        parameters as sent (None: not sent), the sample's seed."""
        return {"base_url": self.base_url, "model": self.served, "messages": chat.messages,
                "temperature": self.params["temperature"], "top_p": self.params["top_p"],
                "max_tokens": self.params["max_tokens"], "seed": chat.seed}

    def _turn(self, t: int, active: list[Chat]) -> None:
        """Turn ``t`` of every chat of ``active``: from the journal, the request cache, or
        the server."""
        todo = []
        for chat in active:
            req = self.request(chat)
            key = request_key(req, chat.sample)
            entry = self.journal.entries.get((chat.task_id, chat.sample, t))
            if entry is not None and entry.get("key") == key:
                self.resumed += 1
                self._add(chat, t, entry, "journal")
            else:
                todo.append((chat, req, key))
        self.log(f"turn {t}: {len(active)} sample(s), {len(active) - len(todo)} from {self.journal.path.name}, "
                 f"{len(todo)} to request ({self.spec.concurrency} at a time)")
        label = f"{self.bench.name} {self.mode} turn {t}"
        results = self._parallel(todo, lambda item: self._fetch(t, *item), label)
        for (chat, _, _), (entry, how) in zip(todo, results):
            if entry is not None:
                self._add(chat, t, entry, how)

    def _fetch(self, t: int, chat: Chat, req: dict, key: str) -> tuple[dict | None, str]:
        """Worker thread: one turn's completion from the cache or the server, journaled.
        Returns ``(journal entry or None, "cache" | "server")``; None: a transient failure
        (noted in ``unfinished``). Raises EndpointError (fatal)."""
        completion, error, how = (self.cache.get(key) if self.cache else None), None, "cache"
        if completion is None:
            how = "server"
            sent = {k: v for k, v in req.items() if k != "base_url"}
            with self._count:
                self.sent += 1
            try:
                completion = self.endpoint.complete(sent, stream=self.spec.stream)
            except EndpointError as exc:
                if exc.kind == "fatal":
                    raise
                if exc.kind == "transient":
                    with self._count:
                        self.unfinished.append(f"{chat.task_id} #{chat.sample}: {exc}")
                    return None, how
                error = str(exc)
            if completion is not None and self.cache is not None:
                self.cache.put(key, req, chat.sample, completion)
        else:
            with self._count:
                self.cached += 1
        entry = {"task_id": chat.task_id, "sample": chat.sample, "turn": t, "key": key,
                 "completion": completion.to_json() if completion else None, "cached": how == "cache", "error": error}
        self.journal.append(entry)
        return entry, how

    def _add(self, chat: Chat, t: int, entry: dict, how: str) -> None:
        """Record turn ``t`` of ``chat`` from its journal ``entry`` (main thread)."""
        comp = Completion.from_json(entry["completion"]) if entry.get("completion") else None
        content = comp.content if comp else ""
        candidate = None
        if comp is not None:
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
            "turn": t, "request_sha256": entry["key"], "resumed": how == "journal",
            "cached": bool(entry.get("cached")) if how == "journal" else how == "cache",
            "finish_reason": comp.finish_reason if comp else "error",
            "usage": comp.usage if comp else {"prompt_tokens": None, "completion_tokens": None},
            "latency_s": comp.latency_s if comp else None, "attempts": comp.attempts if comp else None,
            "response_model": comp.response_model if comp else None,
            "system_fingerprint": comp.system_fingerprint if comp else None,
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
                        entry, how = res
                        plain.update({"verdict": "failed request" if entry is None else
                                      "from cache" if how == "cache" else "received"}, instant=how == "cache")
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
        opts = self.opts.replace(predictions=str(preds), out=tdir / "run", task_ids=None, sample=None)
        with open(tdir / "run.log", "a", encoding="utf-8") as fh:  # the run's tables and progress lines
            report, manifest, code = run_verifier(opts, Console(file=fh, width=160, soft_wrap=True), html=False)
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
            chat.messages = chat.messages + [{"role": "assistant", "content": chat.completions[-1]},
                                             {"role": "user", "content": msg}]
            going.append(chat)
        verified = sum(c.turns[-1]["verdict"] == "verified" for c in active)
        self.log(f"turn {t}: {verified} of {len(active)} verified; {len(going)} go on to turn {t + 1} with the "
                 f"verifier's feedback" if not final else f"turn {t}: {verified} of {len(active)} verified (last turn)")
        return going
