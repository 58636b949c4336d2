"""One small module per verifier tool (the BenchExec "tool-info" idea).

A verifier module knows a tool: how to prepare it in a sandbox, the command line for a
job, and how to parse the tool's output into a :class:`VerifierResult`. It never reads a
dataset and never starts a process itself (it hands argv to a sandbox).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

VERDICTS = ("verified", "failed", "rejected", "timeout", "memout", "invalid", "infra_error")


@dataclass
class GoalCounts:
    """Proof-obligation counts of one run, as the tool counts them.

    Attributes:
        proved: goals proved (by Qed or a prover).
        total: goals generated, smoke tests excluded.
        failed: goals a prover refuted or that failed outright.
        timeout: goals whose provers all hit the per-goal time/step limit.
        unknown: goals left unproved for another reason (prover answered unknown).
    """

    proved: int = 0
    total: int = 0
    failed: int = 0
    timeout: int = 0
    unknown: int = 0

    def to_json(self) -> dict:
        """The counts as a dict with the attribute names as keys."""
        return asdict(self)


@dataclass
class VerifierResult:
    """A verifier's reading of one run.

    Attributes:
        verdict: one of :data:`VERDICTS` as far as the tool can tell (the benchmark may
            turn it into ``rejected`` after its integrity checks).
        reason: one-line human explanation of the verdict.
        goals: :class:`GoalCounts`, or None when the tool produced no goals (parse error).
        goal_results: per goal ``{"name", "status", "prover", "time_s"}``; at least every
            goal that was not proved.
        vacuous: names of smoke tests that failed (the contract or code is inconsistent).
        messages: error/warning lines worth showing (with file:line when the tool gives it).
        extra: tool-specific details (e.g. counts of Terminating/Unreachable goals).
    """

    verdict: str
    reason: str
    goals: GoalCounts | None = None
    goal_results: list[dict] = field(default_factory=list)
    vacuous: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)


def get_verifier(name: str):
    """Return the verifier instance named ``name`` (``"framac"``).

    Raises:
        ValueError: unknown verifier.
    """
    if name == "framac":
        from .framac import FramaC

        return FramaC()
    raise ValueError(f"unknown verifier {name!r}; available: framac")
