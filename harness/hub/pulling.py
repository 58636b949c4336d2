"""Pulling published runs back from the Hub (:func:`pull`) and checking each
(:func:`check_published_run`)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import pyarrow.parquet as pq

from ..results.transcripts import carried_generation_path, transcript_state
from ..report import check_run_dir
from ..datasets import sha256_file
from ..model import sha256_text
from ..results import load_records, run_id_of
from .publishing import REPO_TYPE, http_message, transport_error
from .publishable import HubError


def check_published_run(run_dir: Path, run_id: str | None = None) -> list[str]:
    """Problems with a pulled run folder (empty: it checks): ``verikit validate``'s checks
    (schemas, keys, SHA256SUMS), its content gives the run id it was published under
    (``run_id``; default: the folder's name),
    ``records.parquet`` holds the same verdicts as records.jsonl, the predictions have the
    sha256 run.json recorded, the generation.json run.json links is carried with its sha256
    and its transcript with the sha256 generation.json records (:func:`generation_problems`),
    and publish.json names the run."""
    run_dir = Path(run_dir)
    problems = check_run_dir(run_dir)
    try:
        run = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        records = load_records(run_dir / "records.jsonl")
        rid = run_id_of(run_dir, run)
    except (OSError, ValueError, KeyError) as exc:
        return problems + [f"{run_dir}: {exc}"]
    run_id = run_id or run_dir.name
    if rid != run_id:
        problems.append(f"{run_dir}: its content gives run id {rid}, not {run_id}, the id it was published under")
    pq_path = run_dir / "records.parquet"
    if pq_path.exists():
        table = pq.read_table(pq_path, columns=["key", "verdict"]).to_pylist()
        if sorted((x["key"], x["verdict"]) for x in table) != sorted((r["key"], r["verdict"]) for r in records):
            problems.append(f"{pq_path}: its verdicts are not those of records.jsonl")
    else:
        problems.append(f"{pq_path}: missing")
    want = run.get("predictions")
    if want:
        p = run_dir / "predictions.jsonl"
        if not p.exists():
            problems.append(f"{p}: missing (run.json says the run scored {want['path']})")
        elif sha256_file(p) != want["sha256"]:
            problems.append(f"{p}: its sha256 is not the one run.json recorded")
    try:
        pub = json.loads((run_dir / "publish.json").read_text(encoding="utf-8"))
        if pub.get("run_id") != run_id:
            problems.append(f"{run_dir / 'publish.json'}: names run {pub.get('run_id')}, not {run_id}")
    except (OSError, ValueError) as exc:
        problems.append(f"{run_dir / 'publish.json'}: {exc}")
    return problems + generation_problems(run_dir, run)


def generation_problems(run_dir: Path, run: dict) -> list[str]:
    """Problems with the generation files a published run carries (empty: none linked, or
    they check): the generation.json run.json ``generation`` links at
    :func:`harness.results.transcripts.carried_generation_path` with the recorded sha256, and the
    transcript that generation.json records (``transcript``: path, sha256) beside it with
    that sha256. A generation.json that records no transcript is not asked for one."""
    link = run.get("generation")
    if not isinstance(link, dict) or not link.get("path"):
        return []
    where = Path(run_dir) / carried_generation_path(link)
    if not where.is_file():
        return [f"{where}: missing (run.json links the generation.json of its predictions, {link['path']})"]
    data = where.read_bytes()
    if sha256_text(data) != link.get("sha256"):
        return [f"{where}: its sha256 is not the one run.json recorded"]
    try:
        gen = json.loads(data)
    except ValueError as exc:
        return [f"{where}: not JSON ({exc})"]
    transcript, wrong = transcript_state(where, gen)
    if wrong == "missing":
        return [f"{transcript}: missing (generation.json records the generation's transcript)"]
    if wrong == "changed":
        return [f"{transcript}: its sha256 is not the one generation.json recorded"]
    return []


def pull(repo_id: str, out: Path, *, run_id: str | None = None, revision: str | None = None,
         say: Callable[[str], None] = print) -> dict[Path, list[str]]:
    """Download published runs with ``snapshot_download`` (allow-patterns: one run, or all
    of ``runs/``) and check each (:func:`check_published_run`). With ``run_id`` the run's
    files go straight into ``out``; without, into ``out/runs/<benchmark>/<run_id>/``.

    Returns:
        ``{run folder: problems}`` (empty lists: the runs check).

    Raises:
        HubError: the repository, revision or run is not there, or a request failed.
    """
    from huggingface_hub import HfApi, get_token, snapshot_download
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.hf_api import RepoFile
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()  # one line per run is printed instead

    api = HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=get_token() or None)
    try:
        head = api.repo_info(repo_id, repo_type=REPO_TYPE, revision=revision).sha
        tree = [f.path for f in api.list_repo_tree(repo_id, repo_type=REPO_TYPE, revision=head, recursive=True)
                if isinstance(f, RepoFile)]
        folders = sorted({p.rsplit("/", 1)[0] for p in tree if p.startswith("runs/") and p.count("/") == 3})
        if not folders:
            raise HubError(f"{repo_id}@{head[:12]}: no published run (nothing under runs/)")
        if run_id:
            folders = [f for f in folders if f.rsplit("/", 1)[1] == run_id]
            if not folders:
                known = ", ".join(sorted(p.rsplit("/", 1)[1] for p in {p.rsplit("/", 1)[0] for p in tree
                                                                        if p.startswith("runs/") and p.count("/") == 3}))
                raise HubError(f"{repo_id}: no run {run_id} (runs: {known or 'none'})")
        with tempfile.TemporaryDirectory(prefix="verikit-pull-") as tmp:
            snapshot_download(repo_id, repo_type=REPO_TYPE, revision=head, local_dir=tmp, endpoint=api.endpoint,
                              token=api.token, allow_patterns=[f"{f}/*" for f in folders] or ["runs/*/*/*"])
            result = {}
            for f in folders:
                dest = Path(out) if run_id else Path(out) / f
                dest.mkdir(parents=True, exist_ok=True)
                for item in (Path(tmp) / f).iterdir():
                    if item.is_file():
                        shutil.copy2(item, dest / item.name)
                    elif item.is_dir():  # the tools' outputs (validate re-judges from them), generation files
                        shutil.copytree(item, dest / item.name, dirs_exist_ok=True)
                result[dest] = check_published_run(dest, f.rsplit("/", 1)[1])
                say(f"{repo_id}@{head[:12]}: {f} -> {dest}: "
                    + ("checks (schemas, SHA256SUMS, run id, parquet, predictions, generation)" if not result[dest]
                       else f"{len(result[dest])} problem(s)"))
            return result
    except HfHubHTTPError as exc:
        raise HubError(f"{repo_id}: {http_message(exc)}") from exc
    except Exception as exc:
        if not transport_error(exc):
            raise
        raise HubError(f"{repo_id}: {type(exc).__name__}: {exc}") from exc
