"""One small module per verifier tool (the BenchExec "tool-info" idea).

A verifier module knows a tool: how to prepare it in a sandbox, the command line for a
job, and how to parse the tool's output into a :class:`VerifierResult`. It never reads a
dataset and never starts a process itself (it hands argv to a sandbox).

Interface (duck-typed): ``name``, ``toolchain``, ``prepare(sandbox, probed) -> files``,
``options(probed, **kw) -> dict``, ``command(options) -> (argv, env, collect)``,
``parse(proc, options=None) -> VerifierResult``.

Proof checkers (``rocq``, ``lean``, ``isabelle``: the NTP4VC languages) add
``theorem(task_text, where) -> Theorem`` (find the theorem and its proof placeholder;
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

from dataclasses import dataclass

from ..model import VERDICTS, GoalCounts, VerifierResult, termination  # noqa: F401  (re-exported)


def blank_span(chars: list[str], start: int, end: int) -> None:
    """Replace ``chars[start:end]`` by spaces, keeping newlines, so that offsets and line
    numbers of the text stay valid (the lexers of the proof-checker modules use it to hide
    comments and strings before scanning for keywords)."""
    for k in range(start, min(end, len(chars))):
        if chars[k] != "\n":
            chars[k] = " "


def nested_end(text: str, i: int, opens: tuple[str, ...], closes: tuple[str, ...]) -> int:
    """Offset just after the delimiter that closes the nested block opening at ``i``
    (e.g. ``(* (* *) *)`` with ``opens=("(*",)``, ``closes=("*)",)``), or -1 when the
    block is not closed before the end of ``text``."""
    depth, j, n = 0, i, len(text)
    while j < n:
        o = next((s for s in opens if text.startswith(s, j)), None)
        c = None if o else next((s for s in closes if text.startswith(s, j)), None)
        if o:
            depth, j = depth + 1, j + len(o)
        elif c:
            depth, j = depth - 1, j + len(c)
            if depth == 0:
                return j
        else:
            j += 1
    return -1


def job_limits(proc, tool: str) -> VerifierResult | None:
    """The verdict when the sandbox, not the tool, ended the job: ``infra_error`` (the tool
    did not start), ``timeout`` (killed at the wall-time limit), ``memout`` (killed at the
    memory limit); None when the tool ran to its end and its output must be read.

    ``proc``: a :class:`harness.sandbox.ProcResult`; ``tool``: the name used in the reason.
    """
    if proc.start_error:
        return VerifierResult("infra_error", f"{tool} did not start: {proc.start_error}")
    if proc.timed_out:
        return VerifierResult("timeout", f"{tool} killed at the wall-time limit after {proc.wall_s:.1f} s")
    if proc.memout:
        return VerifierResult("memout", f"{tool} killed at the memory limit ({proc.max_rss_mb:.0f} MiB seen)")
    return None


@dataclass(frozen=True)
class Theorem:
    """The theorem of an interactive-prover task file and where its proof goes.

    Attributes:
        name: the theorem's name as the prover knows it (e.g. ``power'vc``).
        statement: the statement text exactly as in the file (from the theorem keyword to
            the end of the statement, proof placeholder excluded).
        statement_sha256: sha256 hex of ``statement`` with runs of whitespace collapsed to
            one space (the "statement hash" of DESIGN.md's integrity rules).
        start, end: character offsets in the task text of the placeholder that the
            candidate proof replaces (``Admitted.``, ``sorry``).
        line: 1-based line of the theorem keyword (for messages).
    """

    name: str
    statement: str
    statement_sha256: str
    start: int
    end: int
    line: int
