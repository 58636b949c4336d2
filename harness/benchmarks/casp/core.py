"""CASP: C-function / ACSL-specification pairs verified with Frama-C WP + RTE.

Paper: Hertzberg, Sevenhuijsen, Kåreborn, Lokrantz, "CASP: An evaluation dataset for formal
verification of C code" (arXiv:2508.18798): 506 pairs, each verified with Frama-C 30.0
WP + RTE, Z3 4.8.12 + Alt-Ergo 2.6.0 + CVC4 1.8, 500000 steps, 60 s per goal.

A task is one pair: ``prelude`` (the dependencies: includes, logic definitions, other
declarations), ``contract`` (the ACSL contract of the function), ``code`` (the function
definition, with its loop annotations). The gold file is ``spec.acsl + "\\n" + code.c``
exactly as the dataset stores it (``prelude + contract == spec.acsl``).

Modes (all on the same pairs):

- ``gold``: re-verify each pair; compare verdict and goal counts with the published ones.
- ``spec-from-code``: the candidate writes the contract. Verified file =
  prelude + the candidate's text up to the function + the task's function *verbatim*.
  The candidate's own copy of the function, if any, must be token-identical to the task's
  (comments/annotations aside) or it is ``rejected``; a vacuous contract (every ensures
  proved by WP for a do-nothing body, a behavior that never applies, inconsistent
  requires) is ``rejected``.
- ``code-from-spec``: the candidate writes the function. Verified file = prelude + the
  task's contract *verbatim* + the candidate's function (and what it writes around it).
  A contract in the candidate that differs from the task's (up to layout) is
  ``rejected``; a candidate whose termination is not established is ``failed``.

In both candidate modes the integrity rules of :mod:`.integrity` are judged on Frama-C's
own view of the file (preprocessing, task functions and signatures, trusted
declarations, axioms, admit/check, asm).

Canaries (docs.md beside this module, "Canaries"): each candidate mode also runs known-good and
known-cheat candidates on one task; a run whose canaries do not get their expected

The functions are in :mod:`.tasks` (constants, :class:`Task`, loading), :mod:`.candidates`
(gold, bundled, canaries), :mod:`.jobs` (:func:`build_job`, :func:`judge`) and
:mod:`.comparison` (the study's results, published vs reproduced, report notes); this
module gathers their names, as before the split (the package re-exports them).
"""

from __future__ import annotations

# Re-exports: the names of the former single module core.py.
from . import execution, integrity  # noqa: F401
from .candidates import (KIT_CANARY, KIT_DEAD_CANARY, bundled_candidates, canaries, canary_task,  # noqa: F401
                         gold_candidates)
from .comparison import (compare_gold, compare_study, framac_parser, integrity_notes, reproduce_figures,  # noqa: F401
                         study_results)
from .jobs import HAVOC, REFERENCE, REGION, build_job, judge, smoke_tests  # noqa: F401
from .sources import TaskError, TaskSpec, pair_task, split_spec, tasks_from  # noqa: F401
from .tasks import (CANARY_TASK, DATASETS, DEFAULT_DATASET, MODES, NAME, SAMPLE_ROOT, VERIFIER, VERSION,  # noqa: F401
                    Task, load_tasks, make_task)
