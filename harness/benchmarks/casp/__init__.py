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

The package:

- :mod:`.tasks` (constants, :class:`Task`, loading), :mod:`.candidates` (gold, bundled,
  canaries), :mod:`.jobs` (jobs and their integrity checks, judging) and :mod:`.comparison`
  (published vs reproduced, report notes): the benchmark's functions, whose public names
  this package gathers;
- :mod:`.benchmark` -- the :class:`~.benchmark.Casp` benchmark (the plugin), :mod:`.blocks`
  its report blocks;
- :mod:`.sources` -- the dataset formats (the registry's pairs and parquet, and a user's
  own directory of annotated C files, pairs or table);
- :mod:`.integrity` -- the integrity rules, judged on Frama-C's own view of the file, with
  :mod:`.allowlists` (the allow-lists), :mod:`.soundness` (task soundness, dead code,
  requires) and :mod:`.checks` (what the rules share);
- :mod:`.execution` -- the execution cross-check, with :mod:`.exec_driver` (the test driver
  and its inputs) and :mod:`.exec_mutants` (the mutants of the task's body);
- :mod:`.cfront` -- the C/ACSL lexer used to cut candidates into contract and function.
"""

from . import blocks, cfront, comparison, execution, fragment, generation, integrity, sources  # noqa: F401
from .benchmark import BENCHMARK, Casp  # noqa: F401
from .candidates import (KIT_CANARY, KIT_DEAD_CANARY, bundled_candidates, canaries, canary_task,  # noqa: F401
                         gold_candidates)
from .comparison import compare_gold, compare_study, integrity_notes, reproduce_figures, study_results  # noqa: F401
from .jobs import build_job, judge, smoke_tests  # noqa: F401
from .sources import TaskError, split_spec  # noqa: F401
from .tasks import (CANARY_TASK, DATASETS, DEFAULT_DATASET, MODES, NAME, SAMPLE_ROOT, VERIFIER,  # noqa: F401
                    VERSION, Task, load_tasks, make_task)
