"""One module or package per benchmark: tasks, candidates, job construction, judging,
metrics inputs and the published numbers, each behind the declared interface
:class:`harness.model.Benchmark` and registered by name in :mod:`harness.registry`.
A benchmark never starts a process and never calls the runner.
"""

from ..model import Candidate  # noqa: F401  (re-exported: the benchmarks' vocabulary)
