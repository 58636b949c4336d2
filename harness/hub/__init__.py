"""Publishing run directories to a Hugging Face Hub dataset repository, and pulling them
back to check them.

A published repository holds, per run, ``runs/<benchmark>/<run_id>/`` with the run
directory's files (``run.json``, ``records.jsonl``, ``report.json``, ``SHA256SUMS``), the
records as flat columns (``records.parquet``, for the Hub's dataset viewer), the
predictions a model run scored (``predictions.jsonl``) and ``publish.json`` (when, by which
kit, with which waivers); at its root ``leaderboard.parquet`` (one row per benchmark,
dataset, model, mode and metric, over all runs) and the dataset card ``README.md``, both
regenerated from every run in the repository on each publish. A publish is one commit whose
parent is the head just read: a concurrent publish makes it fail with HTTP 412, and it is
rebuilt on the new head and retried (:data:`MAX_ATTEMPTS`).

Endpoints, card classes and errors are those of ``huggingface_hub`` (``HfApi``,
``DatasetCard``, ``snapshot_download``); the endpoint is ``HF_ENDPOINT`` and the token
``HF_TOKEN`` or the stored login (never printed or written).

Submodules (every public name is also importable from ``harness.hub``):

- :mod:`.publishable`: one run to publish (:func:`load_run`) and whether it may be
  (:func:`refusals`), and the exceptions :class:`Refused`, :class:`HubError`;
- :mod:`.card`: the files derived from runs (records parquet, leaderboard, dataset card);
- :mod:`.publishing`: :func:`prepare`, :func:`dry_run`, :func:`publish`;
- :mod:`.pulling`: :func:`pull`, :func:`check_published_run`.
"""

from __future__ import annotations

# The package's public names: what the rest of the kit and plugins import from the package.
from ..results import run_id_of  # noqa: F401  (tests import it from here)
from .card import (CARD_TEMPLATE, LEADERBOARD_COLUMNS, LICENSE, RECORD_COLUMNS, RUN_FILES,  # noqa: F401
                   PublishedRun, build_card, leaderboard_rows, records_parquet, repo_files)
from .publishing import MAX_ATTEMPTS, REPO_TYPE, PublishResult, dry_run, hub_api, prepare, publish  # noqa: F401
from .pulling import check_published_run, pull  # noqa: F401
from .publishable import HubError, LocalRun, Refused, load_run, refusals  # noqa: F401
