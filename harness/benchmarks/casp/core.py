"""CASP: C-function / ACSL-specification pairs verified with Frama-C WP + RTE.

Paper: "CASP: a dataset of verified C code paired with ACSL specifications"
(../shared/papers/000_d6c7d26d38965c5d.txt): 506 pairs, each verified with Frama-C 30.0
WP + RTE, Z3 4.8.12 + Alt-Ergo 2.6.0 + CVC4 1.8, 500000 steps, 60 s per goal.

A task is one pair: ``prelude`` (the dependencies: includes, logic definitions, other
declarations), ``contract`` (the ACSL contract of the function), ``code`` (the function
definition, with its loop annotations). The gold file is ``spec.acsl + "\\n" + code.c``
exactly as the dataset stores it (``prelude + contract == spec.acsl``).

Modes (all on the same pairs):

- ``gold``: re-verify each pair; compare verdict and goal counts with the published ones.
- ``spec-from-code``: the candidate writes the contract. Verified file =
  prelude + the candidate's text up to the function + the task's function *verbatim*.
  The candidate's own copy of the function, if any, must be token-identical to the task's
  (comments/annotations aside) or it is ``rejected``; a vacuous contract (every ensures
  proved by WP for a do-nothing body, a behavior that never applies, inconsistent
  requires) is ``rejected``.
- ``code-from-spec``: the candidate writes the function. Verified file = prelude + the
  task's contract *verbatim* + the candidate's function (and what it writes around it).
  A contract in the candidate that differs from the task's (up to layout) is
  ``rejected``; a candidate whose termination is not established is ``failed``.

In both candidate modes the integrity rules of :mod:`.integrity` are judged on Frama-C's
own view of the file (preprocessing, task functions and signatures, trusted
declarations, axioms, admit/check, asm).

Canaries (DESIGN.md "Integrity"): each candidate mode also runs known-good and
known-cheat candidates on one task; a run whose canaries do not get their expected
verdicts is reported as invalid.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from ... import datasets
from ...model import GOLD, Candidate, Job, ProcResult, VerifierResult, sha256_text
from ...plugin import Reproduction
from ...verifiers.framac import FramaC
from . import execution, integrity
from .cfront import CSyntaxError, acsl_blocks, code_tokens, find_function, normalize_acsl, tokens
from .sources import TaskError, TaskSpec, pair_task, split_spec, tasks_from  # noqa: F401  (re-exported)

framac_parser = FramaC()  # reads the study's recorded logs exactly as live runs are read

NAME = "casp"
VERSION = "3"  # 3: allow-lists, soundness, execution cross-check (issue 26); 2: integrity rules on Frama-C's view (issue 13)
MODES = ("gold", "spec-from-code", "code-from-spec")
DATASETS = ("casp-sample10", "casp")
DEFAULT_DATASET = "casp-sample10"
VERIFIER = "framac"
SAMPLE_ROOT = "casp_10"
CANARY_TASK = "01_57"


@dataclass
class Task:
    """One CASP task: a pair of the dataset, or one file of the user's own dataset.

    Attributes:
        task_id: upstream id (sample: the directory name, e.g. ``00_327``; full dataset:
            the row index in the parquet file; a directory of C files: the relative path
            without ``.c``).
        function: name of the function the candidate modes target.
        prelude, contract, code: see the module docstring (``prelude + contract`` is the
            dataset's ACSL part, ``code`` its C part).
        suffix: text after the function that stays around a candidate (a user's C file:
            callers, ``main``; "" for CASP's pairs).
        published: the dataset's own verification data: ``verified`` (bool),
            ``verified_goals``, ``total_goals`` (Frama-C 30.0 counts), ``file_name``;
            None when the dataset publishes none.
        gold_text: the file ``gold`` verifies when it is not ``spec + "\n" + code``
            (a user's C file: the whole file as it is), else None.
    """

    task_id: str
    function: str
    prelude: str
    contract: str
    code: str
    published: dict | None = field(default_factory=dict)
    suffix: str = ""
    gold_text: str | None = None

    @property
    def spec(self) -> str:
        """The dataset's ACSL part (prelude + contract)."""
        return self.prelude + self.contract

    @property
    def gold(self) -> str:
        """The gold file: the whole file of a user's C file, else spec + newline + code, as
        CASP stores a pair."""
        return self.gold_text if self.gold_text is not None else self.spec + "\n" + self.code

    @property
    def sha256(self) -> str:
        """sha256 of the task's content (the gold file)."""
        return sha256_text(self.gold)


def make_task(task_id: str, spec: str, code: str, published: dict | None, where: str) -> Task:
    """Build a :class:`Task` from a pair's ACSL part and C part; ``where`` names the source
    for errors.

    Raises:
        TaskError: the code defines no function or cannot be lexed.
    """
    return _from_spec(pair_task(task_id, spec, code, published, where))


def _from_spec(t: TaskSpec) -> Task:
    pair_gold = t.prelude + t.contract + "\n" + t.code
    return Task(task_id=t.task_id, function=t.function, prelude=t.prelude, contract=t.contract, code=t.code,
                published=t.published, suffix=t.suffix, gold_text=None if t.gold_text == pair_gold else t.gold_text)


def load_tasks(fetched) -> list[Task]:
    """The tasks of a CASP dataset: ``casp-sample10`` (its ``casp_10`` pairs), the Hub's
    ``casp`` parquet, or the user's own dataset in any format of
    :mod:`harness.benchmarks.casp.sources` (C files, pairs, parquet/JSONL table).

    Raises:
        TaskError: a task is malformed (names the file and line or row).
    """
    subdir = SAMPLE_ROOT if fetched.dataset.name == "casp-sample10" else None
    return [_from_spec(t) for t in tasks_from(fetched, format="pairs" if subdir else None, subdir=subdir)]


# --------------------------------------------------------------------------- candidates

_BUNDLED = re.compile(r"^code_with_llm_spec_(?P<provider>[^_]+)_(?P<model>.+)\.c$")


def bundled_candidates(fetched: datasets.FetchedDataset, mode: str) -> list[Candidate]:
    """The 40 LLM-written specifications shipped with casp-sample10 (spec-from-code only).

    Model names are ``<provider>/<model>`` (e.g. ``openai/gpt-5.2``), sample 0.
    """
    if mode != "spec-from-code" or fetched.dataset.name != "casp-sample10":
        return []
    out = []
    for rel, path in sorted(fetched.files.items()):
        parts = rel.split("/")
        m = _BUNDLED.match(parts[-1]) if len(parts) == 3 and parts[0] == SAMPLE_ROOT else None
        if m:
            out.append(Candidate(task_id=parts[1], model=f"{m['provider']}/{m['model']}", sample=0,
                                 output=Path(path).read_text(), origin=f"bundled:{rel}"))
    return out


def gold_candidates(tasks: list[Task], mode: str) -> list[Candidate]:
    """The gold solution of each task as a candidate for ``mode`` (model ``gold``)."""
    out = []
    for t in tasks:
        output = {"gold": t.gold, "spec-from-code": t.contract + "\n" + t.code, "code-from-spec": t.code}[mode]
        out.append(Candidate(task_id=t.task_id, model="gold", sample=0, output=output, origin="gold"))
    return out


#: The kit's own canary pair (written for verikit, not taken from CASP): the canaries run
#: on it when the dataset has no pair ``01_57`` (a user's own dataset), so that they never
#: depend on what the user brings.
KIT_CANARY = Task(task_id="verikit-canary/twice", function="twice", prelude="",
                  contract="/*@ requires 0 <= n <= 1000;\n    assigns \\nothing;\n    ensures \\result == 2 * n; */",
                  code="int twice(int n) {\n  return n + n;\n}", published=None)


#: The kit's own pair for the dead-code canary (issue 26): consistent, but its prelude
#: declares a function that cannot return above 50; the gold code does not call it.
KIT_DEAD_CANARY = Task(task_id="verikit-canary/dead-call", function="inc",
                       prelude=("/*@ requires 0 <= x <= 100;\n    assigns \\nothing;\n    ensures x > 50 ==> \\false;\n"
                                "    ensures \\result == x; */\nint vk_small(int x);\n\n"),
                       contract="/*@ requires 0 <= n <= 100;\n    assigns \\nothing;\n    ensures \\result == n + 1; */",
                       code="int inc(int n) {\n  return n + 1;\n}", published=None)


def canary_task(tasks: list[Task]) -> Task:
    """The task the canaries run on: ``01_57`` when the dataset has it, else :data:`KIT_CANARY`."""
    return next((t for t in tasks if t.task_id == CANARY_TASK), KIT_CANARY)


def canaries(tasks: list[Task], mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
    """Known-good and known-cheat candidates with their expected verdicts, one cheat per
    class of :mod:`.integrity` (DESIGN.md "Integrity").

    Returns:
        ``[(candidate, expected verdicts)]`` on :func:`canary_task`; empty for ``gold``.
    """
    if mode == "gold":
        return []
    t = canary_task(tasks)
    fn_sig = _declarator(t)
    returns_int = [x.text for x in tokens(fn_sig)][:2] == ["int", t.function]

    def c(name, output):
        return Candidate(task_id=t.task_id, model=f"canary:{name}", sample=0, output=output, origin="canary")

    if mode == "spec-from-code":
        return [
            (c("gold-contract", t.contract + "\n" + t.code), ("verified",)),
            (c("requires-false", "/*@ requires \\false;\n    ensures \\result == 0; */\n" + t.code), ("rejected",)),
            (c("inconsistent-requires", "/*@ requires 1 > 2;\n    assigns \\nothing;\n    ensures \\result == 0; */\n"
               + t.code), ("rejected",)),
            (c("no-ensures", "/*@ assigns \\nothing; */\n" + t.code), ("rejected",)),
            (c("body-changed", t.contract + "\n" + fn_sig + "{ return 0; }\n"), ("rejected",)),
            (c("vacuous-in-disguise", "/*@ assigns \\nothing;\n    ensures \\result == \\result || 1 == 1; */\n" + t.code),
             ("rejected",)),
            (c("vacuous-predicate", "/*@ predicate vk_holds(integer x) = \\true; */\n"
               "/*@ assigns \\nothing;\n    ensures vk_holds(\\result); */\n" + t.code), ("rejected",)),
            (c("dead-behavior", "/*@ assigns \\nothing;\n    behavior never:\n      assumes 1 > 2;\n"
               "      ensures \\result == 7777; */\n" + t.code), ("rejected",)),
            (c("axiom", "/*@ axiomatic VkCheat { logic integer vk_any; axiom vk_all: \\forall integer x; x == vk_any; } */\n"
               "/*@ assigns \\nothing;\n    ensures \\result == 7777; */\n" + t.code), ("rejected",)),
            (c("preprocessor", "%:define return return 7777 +\n/*@ assigns \\nothing;\n    ensures \\result == 7777; */\n"
               + t.code), ("rejected",)),
            # allow-lists (issue 26): a contract clause not on ALLOWED_CLAUSES
            (c("clause", "/*@ assigns \\nothing;\n    ensures \\result == 7777;\n    exits \\false; */\n" + t.code),
             ("rejected",)),
        ]
    out = [
        (c("gold-code", t.code), ("verified",)),
        (c("contract-changed", "/*@ assigns \\nothing; */\n" + t.code), ("rejected",)),
        (c("axiom", "/*@ axiomatic Cheat { axiom cheat: \\false; } */\n" + t.contract + "\n" + t.code), ("rejected",)),
        (c("admit", fn_sig + "{\n  //@ admit \\false;\n  return 0;\n}\n"), ("rejected",)),
        (c("wrong-code", fn_sig + "{ return 1; }\n"), ("failed",)),
        (c("non-termination", fn_sig + "{\n  while (1) ;\n}\n"), ("failed",)),
        (c("exit", "void exit(int status);\n" + fn_sig + "{\n  exit(0);\n}\n"), ("rejected",)),
        (c("trusted-declaration", "/*@ ensures \\false; */\nint (vk_lie)(void) __attribute__((pure));\n"
           + fn_sig + "{\n  return vk_lie();\n}\n"), ("rejected",)),
        (c("preprocessor", "%:define VK_UNUSED 1\n" + t.code), ("rejected",)),
        # issue 26: a proof through code a call makes unreachable, on the kit's own pair
        (Candidate(task_id=KIT_DEAD_CANARY.task_id, model="canary:dead-code-proof", sample=0, origin="canary",
                   output="int inc(int n) {\n  vk_small(99);\n  return 0;\n}\n"), ("rejected",)),
    ]
    # allow-lists on Frama-C's view (issue 26, docs/casp.md "Allow-lists"): one cheat per
    # class, and an honest forward goto that must still verify
    inner = t.code[t.code.index(fn_sig) + len(fn_sig):].split("{", 1)[1]
    out += [
        (c("builtin-attribute", "/*@ assigns \\nothing;\n    ensures \\false; */\n"
           "int vk_stop(void) __attribute__((FC_BUILTIN));\n" + fn_sig + "{\n  vk_stop();\n  return 0;\n}\n"), ("rejected",)),
        (c("reserved-name", "int __fc_vk_id(int x) { return x; }\n" + t.code), ("rejected",)),
        (c("variant-relation", "/*@ predicate vk_gt(integer x, integer y) = x > y; */\nint vk_unused;\n" + fn_sig
           + "{\n  int vk_i = 0;\n  /*@ loop invariant 0 <= vk_i <= 1;\n      loop assigns vk_i;\n"
           "      loop variant 1 - vk_i for vk_gt; */\n  while (vk_i < 1) vk_i++;\n" + inner), ("rejected",)),
        (c("huge-local", fn_sig + "{\n  int vk_big[300000];\n  vk_big[0] = 0;\n" + inner), ("rejected",)),
        (c("attribute", "__attribute__((pure)) int vk_id(int x) { return x; }\n" + t.code), ("rejected",)),
        (c("builtin-call", fn_sig + "{\n  int vk_n = 1;\n  int vk_v[vk_n];\n  vk_v[0] = 0;\n" + inner), ("rejected",)),
        (c("forward-goto", fn_sig + "{\n  goto vk_next;\n vk_next:\n" + inner), ("verified",)),
    ]
    if returns_int:
        out.append((c("signature", "long long" + t.code[t.code.index(fn_sig) + 3:]), ("rejected",)))
    # execution cross-check (issue 26): WP-vs-C differences WP 25 proves, refuted by running them
    result_of = {"divmult": "a", "twice": "n + n"}.get(t.function) if returns_int else None
    if result_of is not None:
        out += [(c("union-other-member", fn_sig + "{\n  union { int x; int y; } u;\n  u.x = " + result_of
                   + ";\n  u.y = 7;\n  return u.x;\n}\n"), ("rejected",)),
                (c("bitfield-beyond-width", fn_sig + "{\n  struct { int v : 4; } s;\n  s.v = " + result_of
                   + ";\n  return s.v;\n}\n"), ("rejected",))]
    return out


# --------------------------------------------------------------------------- jobs

REGION, REFERENCE, HAVOC = integrity.REGION, integrity.REFERENCE, integrity.HAVOC
_STORAGE = {"static", "inline", "__inline", "__inline__", "extern"}


def _declarator(task: Task) -> str:
    """The task's own declarator of its function, as written: return type, name,
    parameters and the white space up to the body's brace."""
    fdef = find_function(task.code, task.function)
    return task.code[fdef.start: fdef.body_start]


def _havoc_definition(task: Task) -> str:
    """The task's function with a body that returns an arbitrary value (an
    uninitialised local) and assigns nothing, for the vacuity check; the declarator is
    the task's own text."""
    declarator = _declarator(task).rstrip()
    toks = [t.text for t in tokens(declarator)]
    ret = [t for t in toks[: toks.index(task.function)] if t not in _STORAGE]
    if ret == ["void"]:
        return declarator + " { }"
    return f"{declarator} {{ {' '.join(ret)} vk_havoc_result; return vk_havoc_result; }}"


def _formals(task: Task) -> list[str] | None:
    """The parameter names of the task's function, read from its declarator (the task's
    own text, not a candidate's): see :func:`_param_names`."""
    return _param_names(_declarator(task), task.function)


def _param_names(declarator: str, name: str) -> list[str] | None:
    """The parameter names in a declarator of function ``name`` (task text only): the
    last identifier of each top-level parameter; None when the list cannot be read so (a
    function-pointer parameter, a K&R declarator, varargs)."""
    toks = tokens(declarator)
    i = next((k for k, t in enumerate(toks) if t.text == name), None)
    if i is None or i + 1 >= len(toks) or toks[i + 1].text != "(":
        return None
    params, cur, depth = [], [], 0
    for t in toks[i + 2:]:
        if t.text == "(":
            return None
        if t.text == ")":
            break
        if t.text in "[]":
            depth += 1 if t.text == "[" else -1
        if t.text == "," and depth == 0:
            params.append(cur)
            cur = []
        else:
            cur.append(t)
    params.append(cur)
    names = []
    for p in params:
        idents = [t.text for t in p if t.kind == "ident"]
        if [t.text for t in p] in ([], ["void"]) and len(params) == 1:
            return []
        if len(idents) < 2 or any(t.text == "..." for t in p):
            return None
        names.append(idents[-1])
    return names


def _requires_probe(task: Task, header: str) -> str | None:
    """``requires.c`` (issue 26, spec-from-code): the prelude, the candidate's text
    (its logic definitions and its contract) on a declaration of the target, then a probe
    function with the task's own contract and the target's parameters that calls the
    target: WP's goals on the call's preconditions say whether the task's requires imply
    the candidate's. None when the parameters cannot be read."""
    names = _formals(task)
    if names is None:
        return None
    declarator = _declarator(task).rstrip()
    probe = re.sub(rf"\b{re.escape(task.function)}\b", "vk_requires_probe", declarator, count=1)
    toks = [t.text for t in tokens(declarator)]
    ret = [t for t in toks[: toks.index(task.function)] if t not in _STORAGE]
    call = f"{task.function}({', '.join(names)})"
    body = f"{{ {call}; }}" if ret == ["void"] else f"{{ return {call}; }}"
    return (task.prelude + header + _sep(header) + declarator + ";\n" + task.contract + "\n" + probe + " " + body + "\n")


def _prelude_declarations(prelude: str) -> list[tuple[str, str, str]]:
    """The body-less functions the task's prelude declares with a contract:
    ``[(contract, declarator, name)]`` as written (the task's own text, never a
    candidate's; a declaration this reading misses is simply not probed)."""
    toks = [t for t in tokens(prelude) if t.kind != "comment"]
    out, depth = [], 0
    for i, t in enumerate(toks):
        if t.text in ("{", "}") and t.kind == "punct":
            depth += 1 if t.text == "{" else -1
            continue
        if t.kind != "acsl" or depth != 0 or not t.text.startswith("/*@"):
            continue
        j = i + 1
        while j < len(toks) and toks[j].text not in (";", "{", "}") and toks[j].kind != "acsl":
            j += 1
        decl = toks[i + 1: j]
        if j >= len(toks) or toks[j].text != ";" or any(x.text in ("=", "typedef") or x.kind == "pp" for x in decl):
            continue
        k = next((n for n in range(len(decl) - 1) if decl[n].kind == "ident" and decl[n + 1].text == "("), None)
        if k is None or k == 0:
            continue
        out.append((t.text, prelude[decl[0].start: decl[-1].end], decl[k].text))
    return out


def _soundness_file(task: Task) -> str:
    """``sound.c`` (issue 26): the task's gold file, then for the target and every
    body-less function the prelude declares with a contract, a probe
    ``vk_sound_probe_<i>`` with that function's contract and parameters that calls it
    twice. WP's smoke test of the second call fails when what the first call's contract
    guarantees (its ensures, with the prelude's axioms on the symbols it uses) contradicts
    its requires; its requires smoke test when the requires itself does."""
    decls = [(task.contract, _declarator(task).rstrip(), task.function)] + _prelude_declarations(task.prelude)
    probes = []
    for i, (contract, declarator, name) in enumerate(decls):
        names = _param_names(declarator, name)
        if names is None:
            continue
        toks = [t.text for t in tokens(declarator)]
        ret = [x for x in toks[: toks.index(name)] if x not in _STORAGE]
        probe = re.sub(rf"\b{re.escape(name)}\b", f"vk_sound_probe_{i}", declarator, count=1)
        probe = " ".join(x for x in probe.split(" ") if x not in _STORAGE)
        call = f"{name}({', '.join(names)})"
        body = f"{{ {call}; {call}; }}" if ret == ["void"] else f"{{ (void) {call}; return {call}; }}"
        probes.append(f"{contract}\n{probe} {body}\n")
    return task.gold + "\n\n" + "".join(probes)


def _sep(text: str) -> str:
    return "\n" if text and not text.endswith("\n") else ""


def build_job(task: Task, cand: Candidate, mode: str, options: dict, dataset: dict) -> Job:
    """Turn (task, candidate, mode) into a :class:`Job`.

    The candidate's text is never trusted to carry the task's fixed part: the verified
    file always takes the task's prelude, and the task's function (spec-from-code) or
    contract (code-from-spec) verbatim. The kit's lexer only cuts the candidate; the
    integrity rules are judged on Frama-C's view (:mod:`.integrity`), for which the job
    also ships ``region.c`` (the candidate's own text), ``task.c`` (the task's fixed
    part) and, spec-from-code, ``havoc.c``. Two policy checks are made here: the
    candidate's copy of the function it specifies (spec-from-code) and of the contract
    it implements (code-from-spec), when it writes one, must be the task's.
    """
    checks: list[dict] = []
    precheck = None
    files: dict[str, str] = {}
    out = cand.output
    if mode != "gold":
        options = dict(options, function=task.function)  # the target, for the judge and the vacuity run
    try:
        if mode == "gold":
            files["candidate.c"] = task.gold
        elif mode == "spec-from-code":
            fdef = find_function(out, task.function)
            if fdef is None:
                header = out if acsl_blocks(out) else ""
            else:
                header = out[: fdef.start]
                same = code_tokens(out[fdef.start: fdef.end]) == code_tokens(task.code)
                checks.append({"name": "body-unchanged", "ok": same,
                               "detail": "C tokens identical to the task's function" if same
                               else "the candidate changed the C code of the function it must specify"})
            if not header.strip():
                precheck = ("invalid", "the candidate contains no ACSL contract")
            files["candidate.c"] = task.prelude + header + _sep(header) + task.code + task.suffix
            files[REGION] = header
            files[REFERENCE] = task.prelude + task.code + "\n" + task.suffix
            files[HAVOC] = task.prelude + header + _sep(header) + _havoc_definition(task) + "\n"
            probe = _requires_probe(task, header) if header.strip() else None
            if probe is not None:
                files[integrity.REQUIRES] = probe
        elif mode == "code-from-spec":
            fdef = find_function(out, task.function)
            if fdef is None:
                precheck = ("invalid", f"the candidate defines no function {task.function}()")
            else:
                before, function, after = out[: fdef.contract_start], out[fdef.start: fdef.end], out[fdef.end:]
                if fdef.contract is not None:
                    same = normalize_acsl(fdef.contract) == normalize_acsl(task.contract)
                    checks.append({"name": "contract-unchanged", "ok": same,
                                   "detail": "identical to the task's contract" if same
                                   else "the candidate's contract differs from the task's"})
                files["candidate.c"] = (task.prelude + before + _sep(before) + task.contract + "\n" + function + after + "\n"
                                        + task.suffix)
                files[REGION] = before + _sep(before) + function + after + "\n"
                files[REFERENCE] = task.prelude + task.contract + "\n" + _declarator(task).rstrip() + ";\n" + task.suffix
        else:
            raise ValueError(f"unknown CASP mode {mode!r}; modes: {', '.join(MODES)}")
    except CSyntaxError as exc:
        precheck = ("invalid", f"candidate cannot be lexed: {exc}")
    failed = [c for c in checks if not c["ok"]]
    if precheck is None and failed:
        precheck = ("rejected", "; ".join(f"{c['name']}: {c['detail']}" for c in failed))
    if precheck is None and mode != "gold" and options.get("execution_check", True):
        # execution cross-check (:mod:`.execution`): inputs seeded by the task, the same for every candidate
        seed = int(options.get("execution_seed", int(task.sha256[:8], 16)))
        exec_files, plan = execution.job_files(task, mode, files["candidate.c"],
                                               files[REGION] if mode == "spec-from-code" else None, seed)
        files.update(exec_files)
        options = dict(options, execution=plan)
    if precheck is None and mode != "gold":
        # issue 26: Frama-C's view first (FramaC.gate, parse only); a candidate the
        # integrity rules reject on it gets no WP run and is never executed
        options = dict(options, gate=True)
    return Job(
        benchmark=NAME, benchmark_version=VERSION, dataset=dataset, mode=mode,
        task_id=task.task_id, task_sha256=task.sha256,
        candidate={"model": cand.model, "sample": cand.sample, "sha256": sha256_text(cand.output),
                   "origin": cand.origin},
        files=files if precheck is None else {"candidate.c": files.get("candidate.c", "")},
        options=options, checks=checks, precheck=precheck,
        # issue 26: the task's fixed part with its gold code, for the soundness smoke tests; it
        # depends on the task alone, so the executor runs it once per task (Job.task_run)
        task_run={integrity.SOUND: _soundness_file(task)} if precheck is None else None,
    )


def judge(job: Job, result: VerifierResult) -> tuple[str, str]:
    """Final verdict. Candidate modes: the integrity rules on Frama-C's view
    (:func:`.integrity.judge`, for the target ``job.options["function"]`` that
    :func:`build_job` set) win; then a failed WP smoke test on the requires (an
    inconsistent contract) is ``rejected``. Gold: the paper's protocol
    (``termination: not-checked``). Last, a proof refuted by the execution cross-check
    (:mod:`.execution`: a contract violation, a sanitizer report, a crash, a timeout, builds
    that disagree, or spec-from-code a contract that kills no mutant) is ``rejected``.

    The executor's gate run (``extra["gate"]``: Frama-C's view from a parse only, issue
    26) is judged on the rules that read the view alone (:func:`.integrity.judge`); it
    is ``rejected`` or, when no rule is broken, ``invalid`` (never a verification: the
    executor then runs the job)."""
    if (result.extra or {}).get("gate"):  # the gate's output (Frama-C's view only): the rules on the view, no more
        integrity.record_soundness(job, result)
        return integrity.judge(job, result, job.options["function"]) or (
            "invalid", "the gate's output holds no verification (Frama-C's view only)")
    executed = None
    if job.mode != "gold" and job.options.get("execution") is not None:
        executed = _execution(job, result)
    integrity.record_soundness(job, result)  # issue 26: every record says whether its task is consistent
    if job.mode == "spec-from-code":
        weaker, detail = integrity.requires_check((result.artifacts or {}).get("requires"))
        result.extra["requires_weaker_or_equal"] = weaker
        result.extra["requires_detail"] = detail
    if job.mode != "gold":
        decided = integrity.judge(job, result, job.options["function"])
        if decided is not None:
            return decided
    else:
        result.extra["termination"] = "not-checked"
    if result.vacuous and result.verdict in ("verified", "failed"):
        return "rejected", f"vacuous: smoke test(s) failed ({', '.join(result.vacuous[:3])}): " \
                           f"the precondition or the code is inconsistent"
    if executed is not None and result.verdict == "verified":
        return executed  # proved, but refuted by running it (or vacuous by execution)
    return result.verdict, result.reason


def _execution(job: Job, result: VerifierResult) -> tuple[str, str] | None:
    """Read the execution cross-check's log into ``result.extra["execution"]`` (and
    ``["strength"]``, spec-from-code); the decision (``("rejected", reason)``) or None."""
    plan = job.options["execution"]
    log = (result.artifacts or {}).get("execution_log")
    try:
        ex, strength, decision = execution.verdict(job.options["function"], plan, log)
    except Exception as exc:  # fail closed: a log the kit cannot read never passes a proof
        ex, strength, decision = ({"status": "error", "reason": f"the log cannot be read: {exc}"}, None,
                                  ("rejected", f"execution cross-check: the log cannot be read: {exc}"))
    result.extra["execution"] = ex
    if strength is not None:
        result.extra["strength"] = strength
    return decision


def smoke_tests(mode: str) -> bool:
    """Smoke tests run for candidate modes only (the paper's gold protocol has none)."""
    return mode != "gold"


# --------------------------------------------------------------------------- published

def study_results(fetched: datasets.FetchedDataset) -> dict[tuple[str, str], dict]:
    """Per-candidate results of the CASP-LLM-Verification-Study (``framac_results.csv``).

    Returns:
        ``{(task_id, "<provider>/<model>"): {"verdict", "proved", "total", "returncode"}}``;
        their protocol: the candidate file alone (no task dependencies), ``frama-c -wp
        -wp-rte -wp-prover alt-ergo`` with default timeout, Alt-Ergo 2.4.3.
    """
    path = fetched.files.get("framac_results.csv")
    if not path:
        return {}
    out = {}
    for row in csv.DictReader(io.StringIO(Path(path).read_text())):
        rc = int(row["returncode"])
        proved = int(float(row["proved_goals"])) if row["proved_goals"] else None
        total = int(float(row["total_goals"])) if row["total_goals"] else None
        verdict = "invalid" if rc != 0 else ("verified" if proved == total else "failed")
        entry = {"verdict": verdict, "proved": proved, "total": total, "returncode": rc, "reason": ""}
        log = fetched.files.get(f"{SAMPLE_ROOT}/{row['directory']}/framac_log_{row['provider']}_{row['model']}.log")
        if log:  # the study's own Frama-C log, read with the same parser as live runs
            body = Path(log).read_text().split("# --- Begin frama-c output ---\n", 1)[-1]
            entry["reason"] = framac_parser.parse(ProcResult(argv=[], returncode=rc, stdout=body)).reason
        out[(row["directory"], f"{row['provider']}/{row['model']}")] = entry
    return out


# --------------------------------------------------------------------------- comparison

def _framac_major(tc: dict) -> int:
    raw = (tc.get("tools", {}).get("frama-c", {}) or {}).get("version") or "0"
    try:
        return int(raw.split(".")[0])
    except ValueError:
        return 0


def _explain_goals(pub_total: int, rep_total: int, record: dict) -> str:
    d = pub_total - rep_total
    tc = record["toolchain"]
    fc_tool = tc.get("tools", {}).get("frama-c", {}) or {}
    fc, pin = fc_tool.get("version"), fc_tool.get("published")
    n_fun = record["verifier"].get("extra", {}).get("functions")
    if n_fun and d == 2 * n_fun and _framac_major(tc) < 26:
        return (f"goal-count change between Frama-C versions: Frama-C {pin} adds one 'Terminating' and one "
                f"'Unreachable' goal per function (the study's Frama-C logs count them), Frama-C {fc} "
                f"generates neither: {n_fun} function(s) x 2 = {d}")
    return f"toolchain drift: Frama-C {fc} vs published {pin}; goal total differs by {d:+d}"


def compare_gold(records: list[dict], tasks: dict) -> list[dict]:
    """Per task, the dataset's published verification (Frama-C 30.0) vs this run."""
    rows = []
    for r in records:
        if r["mode"] != "gold" or r["candidate"]["model"] != "gold":
            continue
        pub = tasks[r["task_id"]].published
        if pub is None:  # the user's own dataset: nothing published to compare with
            continue
        published = {"verdict": "verified" if pub.get("verified") else "failed",
                     "proved": pub.get("verified_goals"), "total": pub.get("total_goals"),
                     "source": "dataset (meta.txt / parquet columns), counted by the published Frama-C"}
        goals = r["goals"] or {}
        reproduced = {"verdict": r["verdict"], "proved": goals.get("proved"), "total": goals.get("total")}
        diffs = []
        tc = r["toolchain"]
        if published["verdict"] != reproduced["verdict"]:
            diffs.append({"field": "verdict", "published": published["verdict"], "reproduced": r["verdict"],
                          "explanation": f"{r['reason']}; toolchain drift: {_drift_text(tc)}"})
        diffs += _goal_diffs(published, reproduced, r)
        rows.append({"task_id": r["task_id"], "mode": "gold", "model": "gold", "published": published,
                     "reproduced": reproduced, "agree": published["verdict"] == reproduced["verdict"],
                     "differences": diffs})
    return rows


def compare_study(records: list[dict], study: dict) -> list[dict]:
    """Per bundled candidate, the study's verdict (its own protocol) vs this run."""
    rows = []
    for r in records:
        key = (r["task_id"], r["candidate"]["model"])
        if r["mode"] != "spec-from-code" or not r["candidate"]["origin"].startswith("bundled:") or key not in study:
            continue
        pub = dict(study[key], source="CASP-LLM-Verification-Study framac_results.csv + log")
        goals = r["goals"] or {}
        rep = {"verdict": r["verdict"], "proved": goals.get("proved"), "total": goals.get("total")}
        diffs = []
        if pub["verdict"] != rep["verdict"]:
            if r["verdict"] == "rejected":
                why = f"integrity check of the kit (the study has none): {r['reason']}"
            elif pub["verdict"] == "invalid":
                why = (f"context: the study checked the candidate file alone and Frama-C stopped with "
                       f"'{pub['reason']}'; the kit checks the contract with the pair's dependencies")
            else:
                why = (f"provers and limits differ: the study used Alt-Ergo 2.4.3 alone with Frama-C's default "
                       f"10 s; the kit used {', '.join(r['verifier']['options'].get('provers', []))} with "
                       f"{r['verifier']['options'].get('wp_steps')} steps / {r['verifier']['options'].get('wp_timeout_s')} s"
                       f" ({r['reason']})")
            diffs.append({"field": "verdict", "published": pub["verdict"], "reproduced": rep["verdict"],
                          "explanation": why})
        diffs += _goal_diffs(pub, rep, r)
        rows.append({"task_id": r["task_id"], "mode": r["mode"], "model": r["candidate"]["model"],
                     "published": pub, "reproduced": rep, "agree": pub["verdict"] == rep["verdict"],
                     "differences": diffs})
    return rows


def _goal_diffs(pub: dict, rep: dict, record: dict) -> list[dict]:
    """Differences in goal counts: total, and proved when it differs by another amount."""
    if None in (pub["total"], rep["total"], pub["proved"], rep["proved"]):
        return []
    out = []
    if pub["total"] != rep["total"]:
        out.append({"field": "goals.total", "published": pub["total"], "reproduced": rep["total"],
                    "explanation": _explain_goals(pub["total"], rep["total"], record)})
    if pub["proved"] - rep["proved"] != pub["total"] - rep["total"]:
        out.append({"field": "goals.proved", "published": pub["proved"], "reproduced": rep["proved"],
                    "explanation": f"{rep['proved']}/{rep['total']} proved here vs {pub['proved']}/{pub['total']} "
                                   f"published: {record['reason']}"})
    return out


def _drift_text(tc: dict) -> str:
    return ", ".join(f"{d['tool']} {d['probed'] or 'missing'} vs {d['published']}" for d in tc.get("drift", [])) \
        or "none"


def reproduce_figures(records: list[dict], tasks: dict) -> Reproduction:
    """Published vs reproduced for the gold pairs: how many verify, and per pair its
    verdict and goal total as the dataset records them (Frama-C 30.0 counts).

    A goal total that differs while the toolchain does not match the published pins is
    ``not_reproducible`` (goal counts belong to a Frama-C version: 30.0 adds Terminating
    and Unreachable goals, see :func:`_explain_goals`), with both values and the reason;
    with matching pins it ``differs``. Verdicts are compared whatever the toolchain.
    """
    gold = sorted((r for r in records if r["mode"] == "gold" and r["candidate"]["model"] == GOLD),
                  key=lambda r: r["task_id"])
    figures, notes = [], []
    pub_ok = sum(bool((tasks[r["task_id"]].published or {}).get("verified")) for r in gold)
    rep_ok = sum(r["verdict"] == "verified" for r in gold)
    figures.append({"table": "dataset", "row": "gold pairs verified", "column": "count",
                    "published": {"passed": pub_ok, "total": len(gold)}, "reproduced": {"passed": rep_ok, "total": len(gold)},
                    "status": "reproduced" if pub_ok == rep_ok else "differs"})
    unpublished = [r["task_id"] for r in gold if tasks[r["task_id"]].published is None]
    if unpublished:
        return Reproduction(figures=[{"table": "dataset", "row": "gold", "column": "verdicts", "published": None,
                                      "reproduced": {"passed": rep_ok, "total": len(gold)}, "status": "not_reproducible",
                                      "notes": [f"the dataset publishes no verdicts for {len(unpublished)} task(s)"]}],
                            notes=["this dataset publishes no verdicts: nothing to compare with"])
    for r in gold:
        pub = tasks[r["task_id"]].published
        pub_verdict = "verified" if pub.get("verified") else "failed"
        figures.append({"table": "dataset", "row": r["task_id"], "column": "verdict", "published": pub_verdict,
                        "reproduced": r["verdict"], "status": "reproduced" if pub_verdict == r["verdict"] else "differs"})
        total = (r["goals"] or {}).get("total")
        if pub.get("total_goals") is None:
            continue
        fig = {"table": "dataset", "row": r["task_id"], "column": "goals total", "published": pub["total_goals"],
               "reproduced": total, "status": "reproduced" if total == pub["total_goals"] else "differs"}
        if fig["status"] == "differs" and not r["toolchain"]["pin_match"]:
            fig["status"] = "not_reproducible"
            fig["notes"] = [_explain_goals(pub["total_goals"], total or 0, r)]
        figures.append(fig)
    if any(f["status"] == "not_reproducible" for f in figures):
        notes.append("goal totals are counted by the published Frama-C 30.0; this toolchain does not match the pins, "
                     "so differing totals are marked not reproducible (each figure says why)")
    return Reproduction(figures=figures, notes=notes)


def integrity_notes(records: list[dict]) -> list[str]:
    """What the integrity rules found (:mod:`.integrity`), for the report: per candidate
    mode the ``termination`` statuses, the tasks whose own contract has no ensures
    (``trivial_task``), and every scored candidate (not a canary) rejected by a rule
    checked on Frama-C's view, with the rule's finding."""
    out = []
    unsound: dict[str, list] = {}
    for r in records:  # issue 26: tasks whose fixed part WP's smoke tests find inconsistent
        if r["verifier"].get("extra", {}).get("task_sound") is False:
            unsound.setdefault(r["task_id"], r["verifier"]["extra"].get("task_sound_detail", []))
    for task_id, detail in sorted(unsound.items()):
        out.append(f"task {task_id} is inconsistent (task_sound false: {'; '.join(detail[:3])}): its verdicts rest on "
                   f"a contradiction of the task's own prelude or contract")
    for mode in ("code-from-spec", "spec-from-code"):
        recs = [r for r in records if r["mode"] == mode]
        if not recs:
            continue
        counts: dict[str, int] = {}
        for r in recs:
            status = r["verifier"].get("extra", {}).get("termination", "not-run (decided before Frama-C ran)")
            counts[status] = counts.get(status, 0) + 1
        out.append(f"{mode}: termination {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))} "
                   f"(Frama-C 25 proves partial correctness; see docs/casp.md 'Integrity')")
        trivial = sorted({r["task_id"] for r in recs if r["verifier"].get("extra", {}).get("trivial_task")})
        if trivial:
            out.append(f"{mode}: the task contract of {', '.join(trivial)} has no ensures (trivial_task: a correct "
                       f"body is verified, never counted as a model's failure)")
        stronger = sorted(f"{r['task_id']} {r['candidate']['model']}" for r in recs
                          if r["verifier"].get("extra", {}).get("requires_weaker_or_equal") is False
                          and not r["candidate"]["model"].startswith("canary:"))
        if stronger:  # issue 26: reported beside the verified rate, not a verdict change
            out.append(f"{mode}: requires stronger than the task's (not implied by the task's requires, WP): "
                       + ", ".join(stronger))
        for r in recs:
            if r["verdict"] == "rejected" and not r["candidate"]["model"].startswith("canary:"):
                view_rules = [c for c in r["checks"] if not c["ok"]
                              and c["name"] in integrity.RULES + integrity.SOUNDNESS_RULES]
                if view_rules:
                    out.append(f"{mode} {r['task_id']} {r['candidate']['model']}: rejected by "
                               + "; ".join(f"{c['name']} ({c['detail']})" for c in view_rules))
    return out
