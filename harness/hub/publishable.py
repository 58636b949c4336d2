"""Whether a run is publishable: a run directory or reduced batch run read for publishing
(:func:`load_run` -> :class:`LocalRun`), the rules that may refuse it (:func:`refusals`),
and the hub's exceptions (:class:`Refused`, :class:`HubError`)."""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..results.transcripts import carried_files, find_generation, transcript_state
from ..model import Record, sha256_text
from ..predictions import scored_file, scored_files
from ..report import check_run_dir
from ..results import S3Store, load_records, run_id_of


class Refused(Exception):
    """A run that may not be published (or a pulled run that fails its checks); the
    message lists every reason, one per line."""


class HubError(Exception):
    """The Hub could not be used (no token, a failed request, too many conflicts); no
    commit was made."""


@dataclass
class LocalRun:
    """A run directory ready to publish.

    Attributes:
        source: the directory or S3 URI given; dir: where its files are (a download for S3).
        run, report: run.json and report.json; records: records.jsonl's lines.
        predictions: the predictions file's bytes (runs that scored a model's outputs) or None.
        run_id: ``<finished_at as YYYYmmddTHHMMSSZ>-<first 10 hex of sha256(SHA256SUMS)>``.
        waivers: what was allowed despite the rules (``--allow-infra-errors``, ``--allow-dirty``).
        generation: for a run scored from predictions ``verikit generate`` made (run.json
            ``generation``), the generation.json and its transcript the run's folder carries:
            ``{path relative to the run's folder: bytes}``
            (:func:`harness.results.transcripts.carried_files`); empty for other runs.
    """

    source: str
    dir: Path
    run: dict
    report: dict
    records: list[Record]
    predictions: bytes | None
    run_id: str
    waivers: list[str] = field(default_factory=list)
    generation: dict[str, bytes] = field(default_factory=dict)

    @property
    def benchmark(self) -> str:
        return self.run["benchmark"]

    @property
    def prefix(self) -> str:
        """The run's folder in the repository: ``runs/<benchmark>/<run_id>``."""
        return f"runs/{self.benchmark}/{self.run_id}"


def load_run(source: str, workdir: Path) -> LocalRun:
    """Read a run directory, or download a reduced batch run (``s3://bucket/prefix``) into
    ``workdir``, with its predictions file when it scored one.

    Raises:
        Refused: not a run directory (missing or unreadable run.json / report.json /
            records.jsonl / SHA256SUMS, not JSON).
    """
    if source.startswith("s3://"):
        store = S3Store(source)
        where = Path(tempfile.mkdtemp(prefix="run-", dir=workdir))
        got = store.download_run(where)
        if "run.json" not in got:
            raise Refused(f"{source}: no run.json (not reduced yet? 'verikit batch status')")
        preds = store.get_bytes("inputs/predictions.jsonl")
    else:
        where, preds = Path(source), None
        if not where.is_dir():
            raise Refused(f"{source}: not a run directory")
    try:
        run = json.loads((where / "run.json").read_text(encoding="utf-8"))
        report = json.loads((where / "report.json").read_text(encoding="utf-8"))
        records = load_records(where / "records.jsonl")
        rid = run_id_of(where, run)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise Refused(f"{source}: not a complete run directory ({exc})") from exc
    if preds is None and run.get("predictions"):  # where the run read it, or beside the run (a pulled run)
        # the file with the recorded sha256; else the first there (refusals() names the mismatch)
        hit = scored_file(where, run) or next((p for p in scored_files(where, run) if p.is_file()), None)
        preds = hit.read_bytes() if hit else None
    generation = {rel: f.read_bytes() for rel, f in carried_files(where, run).items()}
    return LocalRun(source, where, run, report, records, preds, rid, generation=generation)


def refusals(lr: LocalRun, *, allow_infra_errors: bool = False, allow_dirty: bool = False) -> list[str]:
    """Why ``lr`` may not be published (empty: it may). Sets ``lr.waivers`` for what the
    flags allowed. The rules: schema-valid and consistent (``verikit validate``'s checks,
    SHA256SUMS included), complete, every canary rejected as expected, no infra error
    (unless ``allow_infra_errors``), made from a clean checkout (unless ``allow_dirty``),
    and the scored predictions present with the sha256 run.json recorded."""
    src = lr.source
    problems = [f"invalid: {p}" for p in check_run_dir(lr.dir)]
    if lr.run.get("status") != "complete":
        problems.append(f"{src}: the run is {lr.run.get('status')!r}, not complete (resume it first)")
    canaries = lr.report.get("canaries") or {}
    if not canaries.get("ok", True):
        bad = [f"{c.get('model')} ({c.get('mode')}): {c.get('verdict')}, expected {'/'.join(c.get('expected', []))}"
               for c in canaries.get("results", []) if not c.get("ok")]
        problems.append(f"{src}: canaries failed, so its verdicts cannot be trusted: {'; '.join(bad)}")
    infra = max(int(lr.report.get("infra_errors") or 0), int((lr.run.get("counts") or {}).get("infra_error") or 0))
    if infra and not allow_infra_errors:
        problems.append(f"{src}: {infra} job(s) ended in infra_error (re-run the same command to retry them, "
                        f"or pass --allow-infra-errors: recorded in the card)")
    elif infra:
        lr.waivers.append(f"allow-infra-errors ({infra})")
    if (lr.run.get("kit") or {}).get("git_dirty") is True:
        if not allow_dirty:
            problems.append(f"{src}: made from a checkout with uncommitted changes (kit "
                            f"{(lr.run['kit'].get('git_commit') or '?')[:12]}, dirty): its code is not a published "
                            f"commit; commit and re-run, or pass --allow-dirty (recorded in the card)")
        else:
            lr.waivers.append("allow-dirty")
    want = lr.run.get("predictions")
    if want:
        if lr.predictions is None:
            problems.append(f"{src}: the predictions it scored ({want['path']}) are not there: without them "
                            f"nobody can re-verify the run")
        elif sha256_text(lr.predictions) != want["sha256"]:
            problems.append(f"{src}: the predictions file {want['path']} changed since the run "
                            f"(sha256 differs from run.json's)")
    return problems + _transcript_refusals(lr)


def _transcript_refusals(lr: LocalRun) -> list[str]:
    """A generation.json that records its transcript (path, sha256) whose transcript is
    gone or changed: the published conversations would not be the generation's. (A
    missing or changed generation.json is among ``verikit validate``'s problems.)"""
    found, _ = find_generation(lr.dir, lr.run)
    if found is None:
        return []
    try:
        gen = json.loads(found.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    transcript, wrong = transcript_state(found, gen)  # none recorded (an older generation.json): carried when there
    if wrong == "missing":
        return [f"{lr.source}: the transcript of its generation ({transcript}) is not there: the conversations "
                f"behind its predictions would not be published"]
    if wrong == "changed":
        return [f"{lr.source}: the transcript {transcript} changed since the generation (sha256 differs from "
                f"{found.name}'s)"]
    return []
