"""Dafny user-intent formalization: symbolic testing of postconditions on MBPP-DFY.

Paper: S. K. Lahiri, "Evaluating LLM-driven User-Intent Formalization for
Verification-Aware Languages", FMCAD 2024 (arXiv:2406.09757).
Data: Mondego/dafny-synthesis at a57ce249 (the commit the paper names): the 166 test
programs ``MBPP-DFY-153/test/task_id_<N>.dfy`` (a specification + implementation + a test
method called from ``Main``), the RQ3 GPT-4 generations with the human labels as tags in
their ``note`` field, and MBPP-san-DFY-228; or a directory of one's own MBPP-DFY-style
programs (:mod:`.dataset`). Reference implementation: microsoft/nl-2-postcond
``eval-formal-specs-fmcad2024/spec_harness/eval_dafny_spec.py``.

The two metrics (paper, Section I-C), for a method ``m(x): y``, a candidate postcondition
``phi(x, y)`` and the tests ``T`` (input/output pairs):

- correctness: for each ``(i, o)`` in ``T``, ``|= {true} x := i; y := o {phi(x, y)}``; the
  task's correctness is the fraction of its tests for which the triple verifies (as the
  reference script's "Average Correctness").
- completeness: ``|T2| / |T1|`` where ``T1`` holds up to :data:`MUTANTS_PER_TEST` distinct
  output mutants ``(i, o')`` per test and ``T2`` those for which the triple does NOT hold:
  on positive evidence (Dafny proves the postcondition false for the mutant), with the
  paper's count (the verifier fails to prove the triple) beside it as
  ``completeness_paper``.

Each triple is a Dafny method with the candidate's ``requires``/``ensures`` and a body that
assumes the inputs and assigns the (possibly mutated) output (:func:`render_check`); all
checks of one (task, candidate) -- correctness, mutants, a smoke check per test -- are
methods of ONE file verified by one Dafny process, and the verifier attributes the result
to each method (``harness/verifiers/dafny.py``). See harness/benchmarks/dafny_intent/docs.md
for every decision (mutants equal to an allowed output, vacuous tests, timeouts, the Dafny
2.3 adaptation) and the differences from the reference script.

Modules, from the bottom up:

- :mod:`.values`: Dafny types and test values (evaluate, coerce, render);
- :mod:`.grammar` + ``dafny.lark``: the Lark LALR(1) parser and the declarations;
- :mod:`.tests`: a test program's method under test, specification and test cases;
- :mod:`.outline`: clauses and declarations of a candidate outside the grammar (tokens
  and brackets; Dafny judges it);
- :mod:`.candidates`: a candidate specification and its integrity checks;
- :mod:`.mutants`: the paper's output mutants, seeded;
- :mod:`.checks`: the check methods and files of one (task, candidate);
- :mod:`.scoring`: correctness, completeness, labels, agreement, averages, findings;
- :mod:`.dataset`: the pinned dataset's test programs or one's own directory, labels, survey;
- :mod:`.benchmark`: the benchmark interface (:data:`BENCHMARK`): candidates, canaries,
  jobs, judging, report sections, and the published-vs-reproduced figures that
  ``verikit reproduce dafny-intent`` judges on its run of the bundled specifications;
- :mod:`.identity`: the benchmark's name and version.

Every name code outside the package uses is re-exported here (``from harness.benchmarks
import dafny_intent as di; di.load_tasks(...)``), as when this was one module.
"""

from .benchmark import (
                        ADAPTATION,
                        BENCHMARK,
                        CANARIES,
                        CANARY_TASK,
                        CONTAINER_ONLY,
                        DATASETS,
                        DEFAULT_DATASET,
                        DEFAULT_MODES,
                        MODES,
                        SEEDED,
                        VERIFIER,
                        WEAKNESSES,
                        Context,
                        DafnyIntent,
                        build_job,
                        bundled_candidates,
                        canaries,
                        compare,
                        context,
                        figures_from_run,
                        gold_candidates,
                        judge,
                        load_published,
                        report_sections,
                        reproduction_notes,
                        run_notes,
                        smoke_tests,
                        study_results,
                        verifier_for,
                        weaknesses,
)
from .candidates import (
                        ALLOWED_ATTRIBUTES,
                        FORBIDDEN_ATTRIBUTES,
                        RESERVED_PREFIX,
                        Spec,
                        bundled_spec,
                        structure_checks,
                        helper_closure,
                        integrity_checks,
                        read_candidate,
                        token_checks,
)
from .checks import (
                        MAX_HINTS,
                        PAPER_PROBES,
                        Check,
                        adapt_helper,
                        build_files,
                        render_check,
)
from .dataset import (
                        RQ3_JSON,
                        RQ_FILES,
                        convert_generations,
                        human_label,
                        TEST_DIR,
                        has_upstream_layout,
                        last_survey,
                        load_tasks,
                        program_files,
                        read_labels,
                        survey,
)
from .grammar import (
                        GRAMMAR,
                        Clause,
                        Decl,
                        Formal,
                        TaskFileError,
                        declarations,
                        lex,
                        parse,
                        to_type,
)
from .identity import NAME, VERSION
from .mutants import (
                        ALPHABET,
                        DEFAULT_SEED,
                        INSERT_RANGE,
                        MAX_DRAWS,
                        MUTANTS_PER_TEST,
                        mutants,
                        mutate,
                        output_key,
                        random_value,
)
from .scoring import (
                        AGREEMENT_THRESHOLDS,
                        LABEL_THRESHOLD,
                        PAPER_FINDINGS,
                        UNDECIDED,
                        findings,
                        agreement_by_model,
                        kit_label,
                        label_agreement,
                        score,
                        score_checks,
                        scored_records,
                        summarize,
)
from .tests import Skipped, Task, TestCase, read_task
from .values import CHAR, Arr, Char, Tup, Ty, ValueError_, coerce, evaluate, render
from .view import soundness_bugs, view_problems

__all__ = [
    # the benchmark (harness.plugin.Benchmark) and its module-level functions
    "BENCHMARK", "DafnyIntent", "NAME", "VERSION", "DATASETS", "DEFAULT_DATASET", "MODES", "DEFAULT_MODES",
    "VERIFIER", "CONTAINER_ONLY", "SEEDED", "ADAPTATION", "Context", "context", "load_tasks", "survey",
    "read_labels", "has_upstream_layout", "program_files", "last_survey", "TEST_DIR", "RQ3_JSON", "RQ_FILES",
    "convert_generations", "human_label", "gold_candidates",
    "bundled_candidates", "canaries", "CANARIES", "CANARY_TASK", "smoke_tests", "study_results", "verifier_for",
    "build_job", "judge", "compare", "report_sections", "run_notes", "load_published", "figures_from_run",
    "reproduction_notes", "WEAKNESSES", "weaknesses",
    # parsing, values, test programs
    "GRAMMAR", "TaskFileError", "parse", "lex", "declarations", "to_type", "Decl", "Clause", "Formal", "Ty", "CHAR",
    "Char", "Arr", "Tup", "ValueError_", "evaluate", "coerce", "render", "Task", "TestCase", "Skipped", "read_task",
    # candidates, mutants, check files, scores
    "Spec", "FORBIDDEN_ATTRIBUTES", "ALLOWED_ATTRIBUTES", "RESERVED_PREFIX", "read_candidate", "integrity_checks",
    "structure_checks", "token_checks", "bundled_spec",
    "helper_closure", "MUTANTS_PER_TEST", "MAX_DRAWS", "DEFAULT_SEED", "ALPHABET", "INSERT_RANGE", "mutate",
    "mutants", "random_value", "output_key", "MAX_HINTS", "PAPER_PROBES", "Check", "render_check", "adapt_helper",
    "build_files", "UNDECIDED", "LABEL_THRESHOLD", "AGREEMENT_THRESHOLDS", "PAPER_FINDINGS", "score_checks", "score",
    "kit_label", "label_agreement", "agreement_by_model", "summarize", "scored_records", "findings",
    # judged on Dafny's own printed program
    "view_problems", "soundness_bugs",
]
