"""CASP: C-function / ACSL-specification pairs verified with Frama-C WP + RTE.

- :mod:`.core` -- tasks, candidates, canaries, jobs and their integrity checks, judging,
  published-vs-reproduced comparison;
- :mod:`.benchmark` -- the :class:`~.benchmark.Casp` benchmark (the plugin), :mod:`.blocks`
  its report blocks;
- :mod:`.sources` -- the dataset formats (the registry's pairs and parquet, and a user's
  own directory of annotated C files, pairs or table);
- :mod:`.integrity` -- the integrity rules, judged on Frama-C's own view of the file;
- :mod:`.cfront` -- the C/ACSL lexer used to cut candidates into contract and function.
"""

from .core import *  # noqa: F401,F403  (the benchmark's functions, as before the package)
from .benchmark import BENCHMARK, Casp  # noqa: F401
from .core import (CANARY_TASK, DATASETS, DEFAULT_DATASET, MODES, NAME, SAMPLE_ROOT, VERIFIER,  # noqa: F401
                   VERSION, Task, TaskError, build_job, bundled_candidates, canaries, compare_gold, compare_study,
                   gold_candidates, judge, load_tasks, make_task, reproduce_figures, smoke_tests, split_spec,
                   study_results)
