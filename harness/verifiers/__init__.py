"""One small module per verifier tool (the BenchExec "tool-info" idea).

A verifier module knows a tool: how to prepare it in a sandbox, the command line for a
job, and how to parse the tool's output into a :class:`VerifierResult`. It never reads a
dataset and never starts a process itself (it hands argv to a sandbox).

Interface: :class:`harness.model.Verifier` (``name``, ``toolchain``, ``prepare``,
``options``, ``command``, ``parse``); the registry (:mod:`harness.registry`) names them.
The sandbox's own ending of a job (could not start, wall-time, memory) is mapped by the
executor (:func:`harness.model.termination`) before ``parse`` is called.

Proof checkers (``rocq``, ``lean``, ``isabelle``: the NTP4VC languages) add
``theorem(task_text, where) -> Theorem`` (:mod:`.proof` holds what they share) (find the theorem and its proof placeholder;
ValueError naming ``where:line`` if absent or ambiguous), ``forbidden(proof) -> list[str]``
(fail-closed integrity scan of a candidate proof, comments and strings excluded),
``declared_axioms(text) -> set[str]`` (names a file declares without proof: the task's
own allow-list), ``splice(task_text, theorem, proof) -> str`` (the file to check: the
candidate in place of the placeholder, followed by the prover's own assumption report),
and put the assumptions the prover reported in ``VerifierResult.extra["assumptions"]``;
``parse`` turns an assumption outside ``options["allowed_assumptions"]`` (or the theorem
itself) into ``rejected``.
"""

from __future__ import annotations

from ..model import VERDICTS, GoalCounts, VerifierResult  # noqa: F401  (re-exported)
