"""Publishing runs to a Hugging Face Hub dataset repository: :func:`prepare` (load and check
every run), :func:`dry_run`, and :func:`publish` (one commit on the head just read,
retried on a conflict), with the reading of the Hub's errors."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import __version__
from ..results import SUMS
from .card import PublishedRun, repo_files
from .publishable import HubError, LocalRun, Refused, load_run, refusals

REPO_TYPE = "dataset"
MAX_ATTEMPTS = 5


@dataclass
class PublishResult:
    """``added``: run ids committed; ``present``: already in the repository (no-op);
    ``commit``: the new commit's oid (None: nothing to commit); ``attempts``: commits tried
    (more than one after a 412 conflict); ``files``: repository paths written."""

    added: list[str]
    present: list[str]
    commit: str | None
    attempts: int
    files: list[str]


def prepare(sources: list[str], workdir: Path, *, allow_infra_errors: bool = False,
            allow_dirty: bool = False) -> list[LocalRun]:
    """Load and check every run; raises Refused listing every reason of every run (nothing
    is published unless all may be). Two sources with the same content are one run."""
    runs, problems = {}, []
    for s in sources:
        try:
            lr = load_run(s, workdir)
        except Refused as exc:
            problems.append(str(exc))
            continue
        problems += refusals(lr, allow_infra_errors=allow_infra_errors, allow_dirty=allow_dirty)
        runs.setdefault((lr.benchmark, lr.run_id), lr)
    if problems:
        raise Refused("\n".join(problems))
    return list(runs.values())


def dry_run(repo_id: str, runs: list[LocalRun], out: Path) -> dict[str, bytes]:
    """Write to ``out`` the files the commit would add to an empty repository (card and
    leaderboard from ``runs`` alone); no token, no network. Returns them."""
    files = repo_files(repo_id, runs, [])
    for path, data in files.items():
        target = Path(out) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return files


def hub_api():
    """``HfApi`` on ``HF_ENDPOINT`` (default: huggingface.co) with the token of ``HF_TOKEN``
    or the stored login. Raises HubError without a token."""
    from huggingface_hub import HfApi, get_token

    token = get_token()
    if not token:
        raise HubError("no Hub token: set HF_TOKEN or log in ('hf auth login'); publishing needs write access")
    return HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None, token=token)


def _read_existing(api, repo_id: str, head: str, paths: list[str], cache: dict[str, bytes],
                   tmp: Path) -> dict[str, bytes]:
    from huggingface_hub import hf_hub_download

    for p in paths:
        if p not in cache:  # published files are never overwritten: a path is read once
            local = hf_hub_download(repo_id, p, repo_type=REPO_TYPE, revision=head, cache_dir=str(tmp),
                                    endpoint=api.endpoint, token=api.token)
            cache[p] = Path(local).read_bytes()
    return {p: cache[p] for p in paths}


def publish(repo_id: str, runs: list[LocalRun], *, revision: str = "main", private: bool | None = None,
            api=None, say: Callable[[str], None] = print) -> PublishResult:
    """Publish ``runs`` (from :func:`prepare`) to the dataset repository ``repo_id`` in one
    commit on ``revision``, creating the repository (``private``) or branch when missing.
    Runs already there (same id) are left alone; when all are, no commit is made. The
    commit's parent is the head just read; on HTTP 412 (someone committed since) the head,
    the existing runs, the leaderboard and the card are read and built again, up to
    :data:`MAX_ATTEMPTS` times.

    Raises:
        HubError: no token, a request failed (the commit is atomic: nothing was written),
            too many conflicts, or a run id already in the repository with other content.
    """
    from huggingface_hub import CommitOperationAdd
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.hf_api import RepoFile

    api = api or hub_api()
    try:
        api.create_repo(repo_id, repo_type=REPO_TYPE, private=private, exist_ok=True)
        if revision != "main":
            api.create_branch(repo_id, repo_type=REPO_TYPE, branch=revision, exist_ok=True)
        cache: dict[str, bytes] = {}
        with tempfile.TemporaryDirectory(prefix="verikit-hub-") as tmp:
            for attempt in range(1, MAX_ATTEMPTS + 1):
                info = api.repo_info(repo_id, repo_type=REPO_TYPE, revision=revision)
                head = info.sha
                if attempt == 1 and private is not None and info.private is not None and info.private != private:
                    say(f"{repo_id}: the repository exists and is {'private' if info.private else 'public'}; "
                        f"its visibility is left as it is (change it on the Hub)")
                tree = [f.path for f in api.list_repo_tree(repo_id, repo_type=REPO_TYPE, revision=head,
                                                            recursive=True) if isinstance(f, RepoFile)]
                ids = {tuple(p.split("/")[1:3]) for p in tree if p.startswith("runs/") and p.endswith("/run.json")
                       and p.count("/") == 3}
                present = [lr for lr in runs if (lr.benchmark, lr.run_id) in ids]
                for lr in present:  # same id, same content: SHA256SUMS says so
                    theirs = _read_existing(api, repo_id, head, [f"{lr.prefix}/{SUMS}"], cache, Path(tmp))
                    if theirs[f"{lr.prefix}/{SUMS}"] != (lr.dir / SUMS).read_bytes():
                        raise HubError(f"{repo_id}: {lr.prefix} exists with other content; nothing is overwritten")
                    say(f"{lr.source}: already published as {lr.prefix} (no-op)")
                new = [lr for lr in runs if (lr.benchmark, lr.run_id) not in ids]
                if not new:
                    return PublishResult([], [lr.run_id for lr in present], None, attempt - 1, [])
                existing = []
                for bench, rid in sorted(ids):
                    names = [f"runs/{bench}/{rid}/{n}" for n in ("run.json", "report.json", "publish.json")
                             if f"runs/{bench}/{rid}/{n}" in tree]
                    docs = _read_existing(api, repo_id, head, names, cache, Path(tmp))
                    parsed = {n.rsplit("/", 1)[1]: json.loads(d) for n, d in docs.items()}
                    existing.append(PublishedRun(rid, parsed["run.json"], parsed.get("report.json") or {},
                                                 parsed.get("publish.json") or {},
                                                 html=f"runs/{bench}/{rid}/report.html" in tree))
                files = repo_files(repo_id, new, existing)
                title = "verikit publish: " + ", ".join(lr.prefix.removeprefix("runs/") for lr in new)
                try:
                    done = api.create_commit(repo_id, repo_type=REPO_TYPE, revision=revision, parent_commit=head,
                                             commit_message=title,
                                             commit_description=f"{len(new)} run(s), {len(files)} file(s); "
                                                                f"made by verikit {__version__}",
                                             operations=[CommitOperationAdd(p, d) for p, d in sorted(files.items())])
                except HfHubHTTPError as exc:
                    if exc.response is not None and exc.response.status_code == 412 and attempt < MAX_ATTEMPTS:
                        say(f"{repo_id}: the branch moved since it was read (HTTP 412); reading it again "
                            f"(attempt {attempt + 1} of {MAX_ATTEMPTS})")
                        continue
                    raise
                return PublishResult([lr.run_id for lr in new], [lr.run_id for lr in present], done.oid, attempt,
                                     sorted(files))
        raise HubError(f"{repo_id}: gave up after {MAX_ATTEMPTS} conflicting commits")  # pragma: no cover
    except HfHubHTTPError as exc:
        raise HubError(f"{repo_id}: {http_message(exc)}; nothing was committed") from exc
    except Exception as exc:  # the HTTP client's transport errors (connection refused or dropped, timeouts)
        if not transport_error(exc):
            raise
        raise HubError(f"{repo_id}: {type(exc).__name__}: {exc}; nothing was committed") from exc


def transport_error(exc: BaseException) -> bool:
    """An error of the HTTP stack under ``huggingface_hub`` (httpx and its forks, or
    requests): the connection failed, was dropped or timed out."""
    return type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore", "requests", "urllib3") \
        or isinstance(exc, (ConnectionError, TimeoutError))


def http_message(exc) -> str:
    """``"HTTP <status>: <first line>"`` of a Hub client error (status ``?`` without a response)."""
    status = exc.response.status_code if getattr(exc, "response", None) is not None else "?"
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return f"HTTP {status}: {first}"
