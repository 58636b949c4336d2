"""CASP: C-function / ACSL-specification pairs verified with Frama-C WP + RTE.

- :mod:`.core` -- the benchmark's functions in one namespace, gathered from :mod:`.tasks`
  (constants, tasks, loading), :mod:`.candidates` (gold, bundled, canaries), :mod:`.jobs`
  (jobs and their integrity checks, judging) and :mod:`.comparison` (published vs
  reproduced, report notes);
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

from .core import *  # noqa: F401,F403  (the benchmark's functions, as before the package)
from .benchmark import BENCHMARK, Casp  # noqa: F401
from .core import (CANARY_TASK, DATASETS, DEFAULT_DATASET, MODES, NAME, SAMPLE_ROOT, VERIFIER,  # noqa: F401
                   VERSION, Task, TaskError, build_job, bundled_candidates, canaries, compare_gold, compare_study,
                   gold_candidates, judge, load_tasks, make_task, reproduce_figures, smoke_tests, split_spec,
                   study_results)
