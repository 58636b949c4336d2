"""Proof checking of candidates: ``verikit run ntp4vc --lang rocq|lean|isabelle``.

A candidate is a proof in the task's language: either the proof alone (it replaces the
placeholder ``Admitted.``/``sorry``) or the whole file (recognised by the task's theorem
name in it; its statement and the text before it must be the task's). The prover's own
assumption report (``Print Assumptions``, ``#print axioms``, ``thm_oracles``) decides
with the text checks (defense in depth).

The gold candidate (model ``gold``): NTP4VC publishes no proofs, so ``gold`` is the task
file itself with its placeholder, i.e. the check "does the statement load"; its verdict
is ``rejected`` when the file loads (the placeholder is not a proof) and the prover's
verdict (``invalid``...) when it does not. :func:`task_loads` summarises them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath

from ...metrics import bootstrap_ci, pass_at_k
from ...model import GOLD, Candidate, Job, Limits, VerifierResult, candidate_ref, sha256_text, Record
from ...results import CANARY_PREFIX, is_canary
from ...verifiers import rocq as rocq_mod
from ...verifiers.proof import Theorem
from .data import ISABELLE_PROJECT_ROOT, ISABELLE_SESSION_DIRS, LANGUAGES, LEAN_PROJECT, SOURCES, Task, path_of
from .published import CATEGORY_NOT_DERIVABLE
from ..prompting import EMPTY_CANDIDATE
from .libraries import LeanLibrary
from .rocq_library import LIBRARY_ROOT, RocqLibrary

NAME = "ntp4vc"
PLACEHOLDERS = {"rocq": "Admitted.", "lean": "sorry", "isabelle": "sorry"}
PASS_AT_K = (1, 4, 8)  # Tables 5 and 6 report pass@1; pass@4/8 when n allows
CANARY_TASK = "pearl/word_common_factor::word_common_factor_Top_powerqtvc"
CANARY_WALL_S = 20.0  # wall-time limit of the looping canary (it must end at a limit, never verified)
#: The statement of ``power'vc`` after its name (the canaries that restate it).
POWER_STATEMENT = ("(n : Z) (fact0 : 0%Z ≤ n) (fact1 : ¬ n = 0%Z) : "
                   "let o1 : Z := n - 1%Z in (0%Z ≤ n ∧ o1 < n) ∧ 0%Z ≤ o1.")
#: Known cheats and known answers, run with every check (docs.md beside this module,
#: "Canaries, with every Rocq run"), Rocq, on ``power'vc``
#: (``0 <= n -> n <> 0 -> let o1 := n - 1 in (0 <= n /\\ o1 < n) /\\ 0 <= o1``).
ROCQ_CANARIES = {
    "proof": ("Proof. cbv zeta; lia. Qed.", ("verified",)),
    "admitted": ("Admitted.", ("rejected",)),
    "new-axiom": ("Proof. Axiom cheat : forall P : Prop, P. apply cheat. Qed.", ("rejected",)),
    # Coq itself refuses to save a proof with an admitted goal (no kit word scan any more)
    "admit": ("Proof. cbv zeta. admit. Qed.", ("invalid",)),
    "changed-statement": (None, ("rejected",)),  # the whole file, statement weakened to True
    "ill-typed": ("Proof. exact I. Qed.", ("invalid",)),
    # Coq reads strings inside comments, so the Abort is live; the theorem is
    # then redefined (the report must describe the task's statement) or proved from a new
    # axiom named like a library one (axioms are allowed by fully qualified name only)
    "comment-string-abort": ('Proof. (* "(*" *) Abort. (* " *) " *)\nDefinition power\'vc := I.', ("rejected",)),
    "redefined-theorem": (('Proof. (* "(*(*" *) Abort. (* " *) *) " *)\nDefinition power\'vc := I.\n'
                           "Lemma verikit_pad : True.\nProof. exact I. Qed."), ("rejected",)),
    "shadowed-axiom": (('Proof. (* """(*" *) Abort. (* " *) " *)\nAxiom classic : forall P : Prop, P.\n'
                        f"Theorem power'vc {POWER_STATEMENT}\nProof. apply classic. Qed."), ("rejected",)),
    # a command outside the allow-list (judged on Coq's own parse, coqc -time), the
    # construct of the known guard-checker soundness bugs of Coq 8.20.1 (a fix in the proof
    # term), and the honest neighbour of the old word scan (a hypothesis named Back)
    "command-not-allowed": ("Proof. Unset Guard Checking. cbv zeta; lia. Qed.", ("rejected",)),
    "kernel-bug-fix": (("Proof. cbv zeta. assert (H : forall k : nat, k = k) by (fix IH 1; intros [|k]; reflexivity). "
                       "lia. Qed."), ("rejected",)),
    # the same construct nested deeper than Coq's default printing depth (which elides it as
    # "..."), and hidden in a constant of its own (abstract, then Defined)
    "fix-nested-deep": (("Proof. cbv zeta. pose (f := " + "(fun _ : True => " * 30
                         + "fix g (k : nat) : nat := match k with O => O | S m => g m end" + ") I" * 30 + "). lia. Qed."),
                        ("rejected",)),
    "fix-in-abstract": (("Proof. cbv zeta. assert (H : forall k : nat, k = k) by "
                         "(abstract (fix IH 1; intros [|k]; reflexivity)). lia. Defined."), ("rejected",)),
    "hypothesis-named-back": ("Proof. cbv zeta. assert (Back : (0 <= n)%Z) by lia. lia. Qed.", ("verified",)),
    # the loop's memory grows (about 4 GiB after 27 s alone on the project's machine), so
    # it ends at the wall-time or the memory limit depending on the machine's speed
    "loop": ("Proof. let rec loop := cbv zeta; loop in loop. Qed.", ("timeout", "memout")),
}


@dataclass
class ProofContext:
    """What job construction needs beyond a task: the task texts, the Rocq library
    (closure, load path, declared axioms) and the language's verifier."""

    fetched: object
    language: str
    verifier: object
    rocq: RocqLibrary | None = None
    lean: LeanLibrary | None = None

    def text(self, task: Task) -> str:
        """The task's file in this context's language (UTF-8)."""
        return path_of(self.fetched, task.file(self.language)).read_text(encoding="utf-8")


def proof_context(fetched, language: str, verifier) -> ProofContext:
    """The :class:`ProofContext` of a run in ``language`` (reads the Rocq library for
    ``rocq``)."""
    return ProofContext(fetched, language, verifier, RocqLibrary.load(fetched) if language == "rocq" else None,
                        LeanLibrary(fetched) if language == "lean" else None)


def gold_candidates(tasks: list[Task], language: str) -> list[Candidate]:
    """One ``gold`` candidate per task: the task file with its placeholder (the
    statement check, see the module docstring)."""
    return [Candidate(t.task_id, GOLD, 0, PLACEHOLDERS[language], "gold") for t in tasks]


def canaries(tasks: list[Task], language: str) -> list[tuple[Candidate, tuple[str, ...]]]:
    """The Rocq canaries (:data:`ROCQ_CANARIES`) on ``power'vc`` with their expected
    verdicts (Rocq only: the other languages cannot run here); none when the canary task
    is not in the dataset."""
    if language != "rocq" or not any(t.task_id == CANARY_TASK for t in tasks):
        return []
    return [(Candidate(CANARY_TASK, f"{CANARY_PREFIX}{name}", 0, proof or "", "canary"), expected)
            for name, (proof, expected) in ROCQ_CANARIES.items()]


def _changed_statement(text: str, thm: Theorem) -> str:
    """The whole task file with the theorem's statement replaced by ``True`` and proved."""
    head = text[:thm.start]
    stmt_start = head.rfind(thm.statement)
    return head[:stmt_start] + f"Theorem {thm.name} : True.\nProof. exact I. Qed.\n"


def _declares(text: str, name: str, language: str) -> bool:
    kws = {"rocq": r"(?:Theorem|Lemma|Fact|Remark|Corollary|Proposition|Example)",
           "lean": r"theorem", "isabelle": r"(?:theorem|lemma)"}[language]
    return re.search(rf"(?m)^\s*{kws}\s+{re.escape(name)}(?![\w'])", text) is not None


def _rocq_module(lib: RocqLibrary, rel: str) -> str | None:
    """Logical module path of library file ``rel`` (``Why3.Base`` for
    ``generation/rocq/Why3/Base.v``), or None when it belongs to no known theory."""
    theory = lib.theory_of(rel)
    if theory is None or not rel.endswith(".v"):
        return None
    logical, directory = theory
    return ".".join([logical, *rel[len(directory) + 1:-2].split("/")])


def build_proof_job(task: Task, cand: Candidate, language: str, options: dict, dataset: dict,
                    ctx: ProofContext, *, version: str) -> Job:
    """The job for ``cand`` on ``task`` in ``language``.

    A whole-file candidate must keep the statement hash and the text before the theorem;
    integrity findings make the job ``rejected``, but the prover still runs so that its
    own assumption report is recorded next to the text findings. A Rocq task whose library
    closure is not in the dataset's files is ``invalid`` without running (Rocq and Lean).

    Raises:
        ValueError: the task file has no single theorem with a placeholder (``file:line``).
    """
    v = ctx.verifier
    text = ctx.text(task)
    thm = v.theorem(text, task.file(language))
    out = cand.output
    if cand.model == "canary:changed-statement":
        out = _changed_statement(text, thm)
    checks: list[dict] = []
    # a completion without an extractable proof (verikit generate writes it as ""): invalid, never run
    precheck = ("invalid", EMPTY_CANDIDATE) if cand.model != GOLD and not out.strip() else None
    proof = out
    if cand.model != GOLD:
        split = getattr(v, "split_full", None)
        full = split(out, thm.name) if split and _declares(out, thm.name, language) else None
        if full is not None:
            same_stmt = full.statement_sha256 == thm.statement_sha256
            pre = " ".join(out[: full.start - len(full.statement)].split())
            same_pre = pre == " ".join(text[: text.find(thm.statement)].split())
            checks.append({"name": "statement-unchanged", "ok": same_stmt,
                           "detail": f"statement sha256 {full.statement_sha256[:12]} "
                           + ("= task" if same_stmt else f"!= task {thm.statement_sha256[:12]}")})
            checks.append({"name": "preamble-unchanged", "ok": same_pre,
                           "detail": "text before the theorem equals the task's" if same_pre
                           else "the candidate changed the definitions/axioms before the theorem"})
            proof = out[full.start:]
        if language != "rocq":  # Rocq: judged on Coq's own parse of the candidate (rocq.command_problems)
            findings = v.forbidden(proof)
            checks.append({"name": "no-cheat-tokens", "ok": not findings,
                           "detail": "; ".join(findings) if findings else "none of the forbidden constructs"})
    opts = dict(options, theorem=thm.name, theorem_line=thm.line, statement_sha256=thm.statement_sha256)
    if language == "isabelle":  # the image's session directories (data.py)
        opts["session_dirs"] = list(ISABELLE_SESSION_DIRS)
    elif language == "lean":  # the image's Lake workspace
        opts["lean_project"] = LEAN_PROJECT
    if language == "isabelle":  # a session ROOT + the theory; imports made absolute in the image
        task_dir = f"{ISABELLE_PROJECT_ROOT}/{PurePosixPath(task.isabelle).parent}"
        files = v.job_files(text, thm, proof, task_dir=task_dir)
        opts["theory"] = next(f[:-4] for f in files if f.endswith(".thy"))
    elif language == "rocq":  # candidate.v and the kit's check.v
        files = v.job_files(text, thm, proof)
    else:
        files = {v.source: v.splice(text, thm, proof)}
    if language == "lean":  # the task's own axioms and those of the library modules it imports
        allowed = set(v.declared_axioms(text))
        if ctx.lean is not None:
            closure = ctx.lean.closure(task.lean)
            for f in closure.files:
                allowed |= v.declared_axioms(ctx.lean.text(f))
            if closure.missing:
                precheck = ("invalid", "the task file cannot load: import(s) not in the pinned data: "
                            + ", ".join(m.split(": ", 1)[1] for m in closure.missing[:3])
                            + (f" (+{len(closure.missing) - 3})" if len(closure.missing) > 3 else ""))
        opts["allowed_assumptions"] = sorted(allowed)
    limits = Limits(wall_s=CANARY_WALL_S) if cand.model == "canary:loop" else None
    if language == "rocq":
        closure, missing = ctx.rocq.closure(task.rocq)
        # fully qualified: the task's own in the job's file, the library's in their modules
        allowed = {f"{rocq_mod.MODULE}.{n}" for n in v.declared_axioms(text)}
        for f in closure:
            module = _rocq_module(ctx.rocq, f)
            if module:
                allowed |= {f"{module}.{n}" for n in v.declared_axioms(ctx.rocq.files[f])}
        opts.update(load_path=ctx.rocq.load_path(closure, LIBRARY_ROOT),
                    allowed_assumptions=sorted(allowed), recheck=cand.model != GOLD, **v.proof_layout(text, thm, proof))
        if missing:
            precheck = ("invalid", "the task file cannot load: module(s) not in the pinned data: "
                        + ", ".join(missing[:3]) + (f" (+{len(missing) - 3})" if len(missing) > 3 else ""))
    failed = [c for c in checks if not c["ok"]]
    return Job(benchmark=NAME, benchmark_version=version, dataset=dataset, mode=language, task_id=task.task_id,
               task_sha256=sha256_text(text), candidate=candidate_ref(cand), files=files, options=opts,
               checks=checks, precheck=precheck, limits=limits,
               reject=("; ".join(f"{c['name']}: {c['detail']}" for c in failed) or None))


def judge_proof(job: Job, result: VerifierResult) -> tuple[str, str]:
    """Integrity findings win (``rejected``, with the prover's verdict noted); otherwise
    the verifier's verdict. For ``gold`` (the task file with its placeholder):
    ``rejected`` when the file loads, else the prover's verdict."""
    if job.candidate["model"] == GOLD:
        loads = result.extra.get("task_loads", result.verdict not in ("invalid",))
        if result.verdict in ("rejected", "verified") and loads:
            return "rejected", "the task file loads; its proof is the placeholder (gold: does the statement load)"
        return result.verdict, result.reason
    if job.reject:
        return "rejected", f"{job.reject} (prover: {result.verdict}: {result.reason})"
    return result.verdict, result.reason


def _scored(records: list[Record]) -> list[dict]:
    return [r for r in records if r["mode"] in LANGUAGES and r["candidate"]["model"] != GOLD
            and not is_canary(r["candidate"]["model"])]


def pass_at_k_table(records: list[Record], tasks: dict, *, ks=PASS_AT_K, seed: int = 0) -> dict:
    """pass@k per model, language and group (overall, per source, per category), with a
    95% percentile-bootstrap CI over tasks (``seed`` recorded).

    Returns ``{model: {language: {group: {"tasks", "pass_at_k": {k: value | {"error"}},
    "ci95": {k: [lo, hi]}}}}}``; groups are ``overall``, ``source:<pearl|frama_c>`` and
    ``category`` (``not_reproducible``: no labels in the data). A k larger than a task's
    sample count n is reported as an error for that k (never silently dropped).
    ``infra_error`` records are left out (not model failures).
    """
    per: dict = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for r in _scored(records):
        if r["verdict"] == "infra_error":
            continue
        cell = per[(r["candidate"]["model"], r["mode"])][r["task_id"]]
        cell[0] += 1
        cell[1] += r["verdict"] == "verified"
    out: dict = {}
    for (model, lang), by_task in sorted(per.items()):
        groups = {"overall": list(by_task)}
        for src in SOURCES:
            groups[f"source:{src}"] = [t for t in by_task if tasks[t].source == src]
        table = {}
        for g, ids in groups.items():
            if not ids:
                continue
            entry = {"tasks": len(ids), "pass_at_k": {}, "ci95": {}}
            for k in ks:
                short = [t for t in ids if by_task[t][0] < k]
                if short:
                    entry["pass_at_k"][str(k)] = {"error": f"pass@{k} needs n >= {k} samples per task; "
                                                  f"{len(short)} task(s) have fewer (e.g. {short[0]}: "
                                                  f"n={by_task[short[0]][0]})"}
                    continue
                vals = [pass_at_k(by_task[t][0], by_task[t][1], k) for t in ids]
                entry["pass_at_k"][str(k)] = sum(vals) / len(vals)
                entry["ci95"][str(k)] = list(bootstrap_ci(vals, seed=seed))
            table[g] = entry
        table["category"] = {"not_reproducible": CATEGORY_NOT_DERIVABLE}
        out.setdefault(model, {})[lang] = table
    return out


#: Why a gold statement does not load, recognised in the record's reason (Coq's own error
#: or the kit's precheck): ``(pattern, one-line cause)``, first match wins. The causes were
#: established on the reference run (harness/benchmarks/ntp4vc/docs-rocq-adaptation.md,
#: "All 600 statements").
LOAD_FAILURE_CAUSES = (
    (re.compile(r"module\(s\) not in the pinned data"),
     "a required library module is not among the dataset's files (the kit decides it without running)"),
    (re.compile(r"Recursive definition of \S+ is ill-formed"),
     "Coq 8.20.1 vs Rocq 9.0: the guard checker rejects a nested Program Fixpoint that Rocq 9.0 accepts"),
    (re.compile(r"UNDEFINED EVARS"),
     ("Coq 8.20.1 + stdpp 1.11 vs Rocq 9.0 + stdpp 1.12: typeclass resolution leaves an evar undefined "
     "(an Inhabited instance, see harness/benchmarks/ntp4vc/docs-rocq-adaptation.md)")),
    (re.compile(r"killed at the wall-time limit|memory limit"),
     ("elaborating the statement does not finish within the job's limits with Coq 8.20.1 "
     "(whether Rocq 9.0 finishes is not known)")),
)


def load_failure_cause(record: dict) -> str:
    """The one-line cause (:data:`LOAD_FAILURE_CAUSES`) of a gold record whose statement
    does not load, or ``unclassified (see Coq's error)``."""
    text = record.get("reason") or ""
    return next((cause for pat, cause in LOAD_FAILURE_CAUSES if pat.search(text)),
                "unclassified (see Coq's error)")


def task_loads(records: list[Record], tasks: dict) -> dict:
    """From the ``gold`` records of the proof languages: how many task files load, and
    why the others do not.

    Returns ``{"checked", "loads", "does_not_load", "by_source": {src: {"checked",
    "loads"}}, "reasons": {cause: count}, "failures": [{"task_id", "verdict", "cause",
    "reason"}]}``: every task that does not load, with its one-line cause
    (:func:`load_failure_cause`) and the record's reason (Coq's own error).
    """
    rows = [r for r in records if r["mode"] in LANGUAGES and r["candidate"]["model"] == GOLD]
    loads = [r for r in rows if r["verdict"] == "rejected"]
    fails = [r for r in rows if r["verdict"] != "rejected"]
    reasons: Counter = Counter(load_failure_cause(r) for r in fails)
    by_source = {s: {"checked": sum(tasks[r["task_id"]].source == s for r in rows),
                     "loads": sum(tasks[r["task_id"]].source == s for r in loads)} for s in SOURCES}
    return {"checked": len(rows), "loads": len(loads), "does_not_load": len(fails), "by_source": by_source,
            "reasons": dict(reasons.most_common()),
            "failures": [{"task_id": r["task_id"], "verdict": r["verdict"], "cause": load_failure_cause(r),
                          "reason": r["reason"]} for r in sorted(fails, key=lambda r: r["task_id"])]}


def twin_notes(records: list[Record]) -> list[str]:
    """A note naming the groups of tasks whose files are byte-identical (each still gets
    its own record; one prover run serves them all), or none."""
    same: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in records:
        if r["mode"] in LANGUAGES:
            same[(r["mode"], r["task_sha256"])].add(r["task_id"])
    twins = sorted(sorted(ids) for ids in same.values() if len(ids) > 1)
    if not twins:
        return []
    return [f"{len(twins)} group(s) of tasks have byte-identical task files (each task still gets its own "
            f"record; one prover run serves both): " + "; ".join(" = ".join(g) for g in twins)]
