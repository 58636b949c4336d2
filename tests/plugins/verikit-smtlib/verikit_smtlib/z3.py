"""Z3 on SMT-LIB files, as a verikit verifier (:class:`harness.model.Verifier`).

A job's ``problem.smt2`` holds one ``(push) (assert (not GOAL)) (check-sat) (pop)`` block
per goal, in the order of ``options["goals"]``; a goal is proved when Z3 answers
``unsat`` for it. The reading fails closed: any ``(error ...)`` line, or a number of
answers other than the number of goals, is a ``failed`` run, never ``verified``.

The toolchain ``smtlib-z3`` is pinned here (:data:`TOOLCHAINS`, entry point
``verikit.toolchains``) in the format of the kit's ``images/toolchains.json``: Debian
bookworm's z3 4.8.12, the version CASP's paper names for its Z3.
"""

from __future__ import annotations

from harness.model import GoalCounts, ProcResult, Verifier, VerifierResult

NAME = "z3"
MODULE_VERSION = "1"
DEFAULT_TIMEOUT_MS = 10_000
PROBLEM = "problem.smt2"

#: The plugin's toolchain pins (entry point ``verikit.toolchains``).
TOOLCHAINS = {
    "smtlib-z3": {
        "description": "Z3 alone, for the smtlib example plugin (tests/plugins/verikit-smtlib)",
        "papers": [],
        "tools": {
            "z3": {"probe": ["z3", "--version"], "pattern": r"version\s+([0-9][^\s]*)", "published": "4.8.12",
                   "debian": {"suite": "bookworm", "package": "z3", "version": "4.8.12-3.1", "upstream": "4.8.12"}},
        },
    },
}


class Z3(Verifier):
    """Z3 4.8.12 on one SMT-LIB file per job (see the module doc)."""

    name = NAME
    toolchain = "smtlib-z3"
    version = MODULE_VERSION
    all_goals = True  # verified: z3 proved every goal

    def prepare(self, sandbox, probed) -> dict:
        """No shared files."""
        return {}

    def options(self, probed, *, smoke: bool = False, cpus: int = 1) -> dict:
        """``{"timeout_ms", "z3_version", "verifier_module"}`` (the benchmark adds ``goals``)."""
        versions = getattr(probed, "versions", None) or {}
        return {"timeout_ms": DEFAULT_TIMEOUT_MS, "z3_version": versions.get("z3"),
                "verifier_module": f"{NAME}/{MODULE_VERSION}"}

    def command(self, options: dict) -> tuple[list[str], dict, list[str]]:
        """``z3 -smt2 -T:<seconds> problem.smt2`` (the per-query timeout is in the file)."""
        seconds = max(1, int(options.get("timeout_ms", DEFAULT_TIMEOUT_MS)) * len(options.get("goals") or [1]) // 1000)
        return ["z3", "-smt2", f"-T:{seconds + 5}", PROBLEM], {}, []

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Z3's answers per goal: all ``unsat`` is ``verified``; anything else ``failed``
        (the reason names the first goal not proved, or the error). A job with no goal is
        never ``verified``: nothing was proved."""
        goals = list((options or {}).get("goals") or [])
        if not goals:
            return VerifierResult("failed", "no goal to prove in the job's options: nothing verified")
        lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("(error")]
        if errors:
            return VerifierResult("failed", f"z3 reported an error: {errors[0][:300]}", messages=errors[:10])
        answers = [ln for ln in lines if ln in ("sat", "unsat", "unknown", "timeout")]
        if len(answers) != len(lines) or len(answers) != len(goals):
            return VerifierResult("failed", f"z3 gave {len(answers)} answer(s) and {len(lines) - len(answers)} other "
                                            f"line(s) for {len(goals)} goal(s): unreadable, not verified",
                                  messages=lines[:10])
        status = {"unsat": "proved", "sat": "failed"}
        results = [{"name": g, "status": status.get(a, "unknown"), "answer": a} for g, a in zip(goals, answers)]
        counts = GoalCounts(proved=sum(r["status"] == "proved" for r in results), total=len(results),
                            failed=sum(r["status"] == "failed" for r in results),
                            unknown=sum(r["status"] == "unknown" for r in results))
        if counts.proved == counts.total:
            return VerifierResult("verified", f"z3 proved all {counts.total} goals", counts, results)
        first = next(r for r in results if r["status"] != "proved")
        return VerifierResult("failed", f"goal {first['name']}: z3 answered {first['answer']}", counts, results)
