"""CASP tasks: the benchmark's constants, :class:`Task` (one pair of the dataset, or one
file of a user's own dataset), the loading of a dataset's tasks (its formats:
:mod:`.sources`), and the task's own declarator of its function (:func:`task_declarator`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from ...model import sha256_text
from .cfront import find_function
from .sources import TaskSpec, pair_task, tasks_from

NAME = "casp"
VERSION = "3"  # 3: allow-lists, soundness, execution cross-check; 2: integrity rules on Frama-C's view
MODES = ("gold", "spec-from-code", "code-from-spec")
DATASETS = ("casp-sample10", "casp")
DEFAULT_DATASET = "casp-sample10"
VERIFIER = "framac"
SAMPLE_ROOT = "casp_10"
CANARY_TASK = "01_57"


@dataclass
class Task:
    """One CASP task: a pair of the dataset, or one file of the user's own dataset.

    Attributes:
        task_id: upstream id (sample: the directory name, e.g. ``00_327``; full dataset:
            the row index in the parquet file; a directory of C files: the relative path
            without ``.c``).
        function: name of the function the candidate modes target.
        prelude, contract, code: see the package docstring (``prelude + contract`` is the
            dataset's ACSL part, ``code`` its C part).
        suffix: text after the function that stays around a candidate (a user's C file:
            callers, ``main``; "" for CASP's pairs).
        published: the dataset's own verification data: ``verified`` (bool),
            ``verified_goals``, ``total_goals`` (Frama-C 30.0 counts), ``file_name``;
            None when the dataset publishes none.
        gold_text: the file ``gold`` verifies when it is not ``spec + "\n" + code``
            (a user's C file: the whole file as it is), else None.
    """

    task_id: str
    function: str
    prelude: str
    contract: str
    code: str
    published: dict | None = field(default_factory=dict)
    suffix: str = ""
    gold_text: str | None = None

    @property
    def spec(self) -> str:
        """The dataset's ACSL part (prelude + contract)."""
        return self.prelude + self.contract

    @property
    def gold(self) -> str:
        """The gold file: the whole file of a user's C file, else spec + newline + code, as
        CASP stores a pair."""
        return self.gold_text if self.gold_text is not None else self.spec + "\n" + self.code

    @property
    def sha256(self) -> str:
        """sha256 of the task's content (the gold file)."""
        return sha256_text(self.gold)


def make_task(task_id: str, spec: str, code: str, published: dict | None, where: str) -> Task:
    """Build a :class:`Task` from a pair's ACSL part and C part; ``where`` names the source
    for errors.

    Raises:
        TaskError: the code defines no function or cannot be lexed.
    """
    return _from_spec(pair_task(task_id, spec, code, published, where))


def _from_spec(t: TaskSpec) -> Task:
    pair_gold = t.prelude + t.contract + "\n" + t.code
    return Task(task_id=t.task_id, function=t.function, prelude=t.prelude, contract=t.contract, code=t.code,
                published=t.published, suffix=t.suffix, gold_text=None if t.gold_text == pair_gold else t.gold_text)


def load_tasks(fetched) -> list[Task]:
    """The tasks of a CASP dataset: ``casp-sample10`` (its ``casp_10`` pairs), the Hub's
    ``casp`` parquet, or the user's own dataset in any format of
    :mod:`harness.benchmarks.casp.sources` (C files, pairs, parquet/JSONL table).

    Raises:
        TaskError: a task is malformed (names the file and line or row).
    """
    subdir = SAMPLE_ROOT if fetched.dataset.name == "casp-sample10" else None
    return [_from_spec(t) for t in tasks_from(fetched, format="pairs" if subdir else None, subdir=subdir)]


def task_declarator(task: Task) -> str:
    """The task's own declarator of its function, as written: return type, name,
    parameters and the white space up to the body's brace (found once per task text)."""
    return _declarator_in(task.code, task.function)


@lru_cache(maxsize=256)
def _declarator_in(code: str, function: str) -> str:
    fdef = find_function(code, function)
    return code[fdef.start: fdef.body_start]
