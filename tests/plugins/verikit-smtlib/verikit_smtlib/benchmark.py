"""``smtlib``: loop invariants checked by Z3, a sixth benchmark written as an outside plugin.

A task is an integer loop (``tasks.json``: variables, precondition, initial values, guard,
simultaneous body, postcondition, gold invariant); a candidate is an invariant, one
SMT-LIB term (:mod:`.terms`). The kit builds the three verification conditions of
Hoare's loop rule and Z3 checks each (:mod:`.z3`):

- ``init``: pre => inv[initial values];
- ``preserve``: inv and guard => inv[body];
- ``post``: inv and not guard => post.

``verified`` means Z3 proved all three. Integrity (the kit's rules, on what the tool
reads): the candidate must be one term of the allow-list (:func:`.terms.parse`; anything
else is ``rejected``, a malformed or ill-sorted term ``invalid``), and Z3 reads the term as
the kit re-prints it, never the candidate's text. The proof is cross-checked by running
the loop (:func:`execution_check`): a candidate Z3 proves but that is false at a state a
run of the loop reaches is ``rejected`` (fail closed: the VC or the solver is wrong).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from harness.model import GOLD, Candidate, Job, VerifierResult, candidate_ref
from harness.plugin import (Benchmark, Block, Claim, Command, CommandContext, Data, Jobs, Prompting, Reporting,
                            Reproducing, Table)

from . import generation, terms
from .z3 import NAME as VERIFIER, PROBLEM

NAME = "smtlib"
VERSION = "1"
MODE = "invariant"
DATASET = "smtlib-loops"
GOALS = ("init", "preserve", "post")
CANARY_TASK = "count-up"
#: Initial values of a loop's free variables the execution check tries, and its step bound.
RUN_VALUES = range(-3, 8)
RUN_STEPS = 100

#: Cheats, each a class the allow-list closes (``rejected``), and honest mistakes.
CANARIES = {
    "assert-false": ("(and true true)) (assert false) (check-sat", ("rejected",)),
    "command": ("(check-sat)", ("rejected",)),
    "quantifier": ("(forall ((k Int)) (>= k k))", ("rejected",)),
    "let-binder": ("(let ((i 0)) (<= i n))", ("rejected",)),
    "comment": ("(<= i n) ; (assert false)", ("rejected",)),
    "attribute": ("(! (<= i n) :named inv)", ("rejected",)),
    "unknown-symbol": ("(<= i m)", ("rejected",)),
    "int-term": ("(+ i 1)", ("invalid",)),
    "true": ("true", ("failed",)),
    "false": ("false", ("failed",)),
}
_FENCE = re.compile(r"```[A-Za-z0-9_-]*\n(.*?)```", re.S)


@dataclass(frozen=True)
class Task:
    """One loop (see the module doc); terms are SMT-LIB text."""

    task_id: str
    variables: tuple[str, ...]
    pre: str
    init: dict[str, str] = field(hash=False)
    guard: str = "true"
    body: dict[str, str] = field(default_factory=dict, hash=False)
    post: str = "true"
    gold: str = "true"

    @property
    def sha256(self) -> str:
        """sha256 of the task's canonical JSON."""
        data = {"task_id": self.task_id, "vars": list(self.variables), "pre": self.pre, "init": self.init,
                "guard": self.guard, "body": self.body, "post": self.post, "gold": self.gold}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()

    @cached_property
    def parts(self) -> dict:
        """The task's terms, parsed once (by :func:`load_tasks`) and kept for its jobs:
        ``{"pre", "guard", "post": Term (Bool), "init", "body": {variable: Term (Int)}}``.

        Raises:
            terms.TermError: a term that is not admitted.
        """
        v = self.variables
        return {"pre": terms.parse(self.pre, v), "guard": terms.parse(self.guard, v), "post": terms.parse(self.post, v),
                "init": {x: terms.parse(e, v, "Int") for x, e in self.init.items()},
                "body": {x: terms.parse(e, v, "Int") for x, e in self.body.items()}}


def load_tasks(fetched) -> list[Task]:
    """The tasks of ``tasks.json``.

    Raises:
        ValueError: not JSON (names the file and line), a missing key, or a task whose
            terms are not admitted (names the task).
    """
    path = Path(fetched.files["tasks.json"])
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    out = []
    for i, t in enumerate(data):
        try:
            task = Task(t["task_id"], tuple(t["vars"]), t["pre"], dict(t["init"]), t["guard"], dict(t["body"]),
                        t["post"], t["gold"])
            task.parts  # parsed here, once: a task whose terms are not admitted is refused
        except (KeyError, TypeError, terms.TermError) as exc:
            raise ValueError(f"{path}: task {i} ({t.get('task_id') if isinstance(t, dict) else '?'}): {exc}") from None
        out.append(task)
    return out


def extract(output: str) -> str:
    """The invariant in a completion: the first fenced code block when there is one, else
    the whole text (stripped)."""
    m = _FENCE.search(output)
    return (m.group(1) if m else output).strip()


def problem(task: Task, inv: terms.Term, timeout_ms: int) -> str:
    """``problem.smt2``: the declarations and one (push)(assert (not VC))(check-sat)(pop)
    per goal of :data:`GOALS`."""
    p, s = task.parts, terms.to_smt
    inv_s = s(inv)

    def let(binds: dict[str, terms.Term], body: str) -> str:
        return f"(let ({' '.join(f'({x} {s(e)})' for x, e in binds.items())}) {body})" if binds else body

    vcs = {"init": f"(=> {s(p['pre'])} {let(p['init'], inv_s)})",
           "preserve": f"(=> (and {inv_s} {s(p['guard'])}) {let(p['body'], inv_s)})",
           "post": f"(=> (and {inv_s} (not {s(p['guard'])})) {s(p['post'])})"}
    lines = [f"(set-option :timeout {int(timeout_ms)})", "(set-logic NIA)"]
    lines += [f"(declare-fun {x} () Int)" for x in task.variables]
    for g in GOALS:
        lines += ["(push)", f"(assert (not {vcs[g]}))", "(check-sat)", "(pop)"]
    return "\n".join(lines) + "\n"


def execution_check(task: Task, inv: terms.Term) -> tuple[bool, str]:
    """Run the loop from every initial state with the free variables in
    :data:`RUN_VALUES` that satisfies the precondition, for up to :data:`RUN_STEPS`
    steps, and evaluate the invariant at each state reached. Returns ``(ok, detail)``."""
    p = task.parts
    free = [x for x in task.variables if x not in task.init]
    states = runs = 0
    for values in itertools.product(RUN_VALUES, repeat=len(free)):
        env = dict(zip(free, values))
        if not terms.evaluate(p["pre"], env):
            continue
        env.update({x: terms.evaluate(e, env) for x, e in p["init"].items()})
        runs += 1
        for _ in range(RUN_STEPS + 1):
            states += 1
            if not terms.evaluate(inv, env):
                return False, f"the invariant is false at the reachable state {env}"
            if not terms.evaluate(p["guard"], env):
                break
            env = {**env, **{x: terms.evaluate(e, env) for x, e in p["body"].items()}}
    return True, f"true at all {states} states of {runs} runs of the loop"


def verifier_for(mode: str) -> str:
    """Z3, in the one mode."""
    return VERIFIER


def gold_candidates(tasks: list[Task], mode: str) -> list[Candidate]:
    """Each loop's own invariant (``gold`` of ``tasks.json``)."""
    return [Candidate(t.task_id, GOLD, 0, t.gold, "gold:tasks.json") for t in tasks]


def bundled_candidates(fetched, mode: str) -> list[Candidate]:
    """The stand-in models' invariants (``models/*.jsonl``), sample 0 each."""
    out = []
    for rel in sorted(f for f in fetched.files if f.startswith("models/") and f.endswith(".jsonl")):
        for n, line in enumerate(Path(fetched.files[rel]).read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                d = json.loads(line)
                out.append(Candidate(d["task_id"], d["model"], 0, d["output"], f"bundled:{rel}:{n}"))
    return out


def canaries(tasks: list[Task], mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
    """The gold invariant of :data:`CANARY_TASK` (``verified``) and :data:`CANARIES`."""
    task = next((t for t in tasks if t.task_id == CANARY_TASK), None)
    if task is None:
        return []
    return [(Candidate(task.task_id, "canary:gold", 0, task.gold, "canary"), ("verified",))] + [
        (Candidate(task.task_id, f"canary:{name}", 0, text, "canary"), expected)
        for name, (text, expected) in CANARIES.items()]


def build_job(task: Task, cand: Candidate, mode: str, options: dict, dataset: dict, ctx=None) -> Job:
    """The job of ``cand``: the allow-list first (a forbidden construct is ``rejected``, a
    malformed term ``invalid``, without running), then the execution check, then
    ``problem.smt2`` for Z3 from the parsed term."""
    opts = {**options, "goals": list(GOALS)}
    text = extract(cand.output)
    job = Job(benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode, task_id=task.task_id,
              task_sha256=task.sha256, candidate=candidate_ref(cand), files={}, options=opts)
    try:
        inv = terms.parse(text, task.variables)
    except terms.TermError as exc:
        job.checks.append({"name": "allow_list", "ok": False, "detail": str(exc)})
        job.precheck = ("rejected" if exc.forbidden else "invalid", f"the invariant is not admitted: {exc}")
        return job
    job.checks.append({"name": "allow_list", "ok": True, "detail": "one admitted Boolean term"})
    ok, detail = execution_check(task, inv)
    job.checks.append({"name": "execution", "ok": ok, "detail": detail})
    job.files = {PROBLEM: problem(task, inv, options.get("timeout_ms", 10_000))}
    return job


def judge(job: Job, result: VerifierResult) -> tuple[str, str]:
    """Z3's verdict, unless Z3 proved an invariant a run of the loop refutes (then
    ``rejected``: the proof is not trusted)."""
    failed = [c for c in job.checks if c["name"] == "execution" and not c["ok"]]
    if result.verdict == "verified" and failed:
        return "rejected", f"z3 proved the VCs but running the loop refutes the invariant: {failed[0]['detail']}"
    return result.verdict, result.reason


def report_blocks(report: dict, records: list[dict]) -> list[Block]:
    """Verdicts per model and task (canaries apart)."""
    models = sorted({r["candidate"]["model"] for r in records if not r["candidate"]["model"].startswith("canary:")})
    tasks = sorted({r["task_id"] for r in records})
    cell = {(r["candidate"]["model"], r["task_id"]): r["verdict"] for r in records}
    rows = [[m, *[cell.get((m, t), "-") for t in tasks]] for m in models]
    return [Table("Verdicts per model and loop", ["model", *tasks], rows)] if rows else []


def artifact_claims(references: Path) -> list[Claim]:
    """One claim, its expected run shipped with the plugin (``expected/invariants``): the
    verdicts of gold, the two stand-ins and the canaries, with Z3 4.8.12, which the framac
    runner image has (the claim runs there, the kit's host sandbox inside it)."""
    return [Claim("smtlib-invariants", NAME, "Z3 4.8.12 proves the gold invariant of each of the five loops; "
                  "the two stand-in models' invariants get 4/5 and 3/5; the 11 canaries get their expected "
                  "verdicts.", ("run", NAME, "--sandbox", "host", "-j", "@JOBS@"),
                  str(Path(__file__).resolve().parent / "expected" / "invariants"), "framac", smoke=True)]


def _vcs_arguments(p) -> None:
    p.add_argument("task_id")
    p.add_argument("--dataset", help="a directory with tasks.json (default: the registry's smtlib-loops)")


def _vcs(args, ctx: CommandContext) -> int:
    from harness import datasets

    try:
        fetched = (datasets.open_dataset(Path(args.dataset)) if args.dataset
                   else datasets.fetch(DATASET, data_dir=ctx.data_dir))
        tasks = {t.task_id: t for t in load_tasks(fetched)}
    except (ValueError, datasets.DatasetError) as exc:
        ctx.log(f"error: {exc}")
        return 2
    if args.task_id not in tasks:
        ctx.log(f"error: no task {args.task_id!r}; tasks: {', '.join(tasks)}")
        return 2
    task = tasks[args.task_id]
    print(problem(task, terms.parse(task.gold, task.variables), 10_000), end="")
    return 0


class Smtlib(Benchmark):
    """Loop invariants checked by Z3 (see the module doc): the functions above, as parts."""

    name = NAME
    version = VERSION
    modes = (MODE,)
    default_modes = (MODE,)
    datasets = (DATASET,)
    default_dataset = DATASET
    data = Data(load_tasks=load_tasks, gold_candidates=gold_candidates, bundled_candidates=bundled_candidates,
                canaries=canaries)
    jobs = Jobs(verifier_for=verifier_for, build_job=build_job, judge=judge)
    reporting = Reporting(report_blocks=report_blocks, commands=(
        Command("vcs", "print the Z3 problem (the three VCs) of a task's gold invariant", _vcs_arguments, _vcs),))
    prompting = Prompting(protocol=generation.protocol, messages=generation.messages, extract=generation.extract,
                          feedback=generation.feedback)
    reproducing = Reproducing(artifact_claims=artifact_claims)
