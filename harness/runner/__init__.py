"""One run: dataset -> tasks -> candidates -> jobs -> executor -> records -> report.

The runner drives every benchmark through the declared interface
(:class:`harness.plugin.Benchmark`); it never asks a benchmark module what it happens to
define. It writes into the output directory ``run.json`` (manifest), ``records.jsonl``
(one record per job) and ``report.json`` (metrics and comparison), each validated
against its schema before it is written. Re-running the same command into the same
directory resumes: jobs already recorded are not run again, and jobs in the result cache
are copied, not re-run.

:func:`reproduce` is ``verikit reproduce``: the benchmark's reproduction modes run as an
ordinary run (if it has any), then the benchmark compares with the paper; a rescoring-only
reproduction writes the same three files with no records.

Every entry point takes the run's :class:`~harness.runspec.RunSpec` (what it verifies and
how) and, beside it, its run directory and :class:`~harness.runspec.RunSettings` (the
caches, progress, the command recorded): ``run(spec, out, settings=...)``, as
``harness.generate.generate(spec, out, settings=...)``.

The package: :mod:`.plan` (:func:`plan_run` -> :class:`Plan`, :func:`build_jobs`,
:class:`RunError`), :mod:`.pipeline` (:class:`Run`: sandbox, toolchain, jobs, executor
into a record sink; :func:`run`, :func:`reproduce`, :func:`reproduce_generated`, :func:`recheck`, :func:`rejudge`),
:mod:`.generated` (the statistical comparison of a re-run on generated predictions with a
model's published figures, and report.json's ``generation`` section) and
:mod:`.writer` (what writes the run directory: :func:`hold_run_dir_lock`, its lock held
for a run, :class:`RecordSink`, the record sink of a local run and of a collected batch
run, and :func:`write_run`, its run files).
"""

from .generated import check_published_model, default_samples, generate_mode
from .pipeline import (RUNNER_ENV, Run, job_image, open_sandbox, probe_toolchain, recheck, rejudge, reproduce,
                       reproduce_generated, run)
from .plan import Plan, RunError, Start, build_jobs, git_state, host_info, open_dataset, plan_run, published_of, start_run
from .writer import RecordSink, hold_run_dir_lock, write_report_html, write_run

__all__ = ["RUNNER_ENV", "Plan", "RecordSink", "Run", "RunError", "Start", "build_jobs",
           "check_published_model", "default_samples", "generate_mode", "git_state", "host_info", "hold_run_dir_lock",
           "job_image", "open_dataset", "open_sandbox", "plan_run", "probe_toolchain", "published_of", "recheck",
           "rejudge", "reproduce", "reproduce_generated", "run", "start_run", "write_report_html", "write_run"]
