"""CASP candidates: the gold solutions, the LLM-written specifications bundled with
casp-sample10, and the canaries (known-good and known-cheat candidates with their
expected verdicts, one cheat per class of :mod:`.integrity`)."""

from __future__ import annotations

import re
from pathlib import Path

from ... import datasets
from ...model import Candidate
from ...results import CANARY_PREFIX
from .cfront import tokens
from .tasks import CANARY_TASK, SAMPLE_ROOT, Task, task_declarator

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


#: The kit's own pair for the dead-code canary: consistent, but its prelude
#: declares a function that cannot return above 50; the gold code does not call it.
KIT_DEAD_CANARY = Task(task_id="verikit-canary/dead-call", function="inc",
                       prelude=("/*@ requires 0 <= x <= 100;\n    assigns \\nothing;\n    ensures x > 50 ==> \\false;\n"
                                "    ensures \\result == x; */\nint vk_small(int x);\n\n"),
                       contract="/*@ requires 0 <= n <= 100;\n    assigns \\nothing;\n    ensures \\result == n + 1; */",
                       code="int inc(int n) {\n  return n + 1;\n}", published=None)


def canary_task(tasks: list[Task]) -> Task:
    """The task the canaries run on: ``01_57`` when the dataset has it, else :data:`KIT_CANARY`."""
    return next((t for t in tasks if t.task_id == CANARY_TASK), KIT_CANARY)


def canary_tasks(tasks: list[Task]) -> list[Task]:
    """The kit's tasks the canaries run on that ``tasks`` lack: :data:`KIT_CANARY` (when the
    dataset has no ``01_57``) and :data:`KIT_DEAD_CANARY`."""
    return [t for t in (canary_task(tasks), KIT_DEAD_CANARY) if t not in tasks]


def canaries(tasks: list[Task], mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
    """Known-good and known-cheat candidates with their expected verdicts, one cheat per
    class of :mod:`.integrity` (docs.md beside this module, "Canaries").

    Returns:
        ``[(candidate, expected verdicts)]`` on :func:`canary_task`; empty for ``gold``.
    """
    if mode == "gold":
        return []
    t = canary_task(tasks)
    fn_sig = task_declarator(t)
    returns_int = [x.text for x in tokens(fn_sig)][:2] == ["int", t.function]

    def c(name, output):
        return Candidate(task_id=t.task_id, model=f"{CANARY_PREFIX}{name}", sample=0, output=output, origin="canary")

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
            # allow-lists: a contract clause not on ALLOWED_CLAUSES
            (c("clause", "/*@ assigns \\nothing;\n    ensures \\result == 7777;\n    exits \\false; */\n" + t.code),
             ("rejected",)),
            # WP's sound fragment: a \from clause, which WP never checks, on the gold contract
            (c("from-clause", t.contract.replace("assigns \\nothing;", "assigns \\result \\from \\nothing;") + "\n"
               + t.code), ("rejected",)),
            # a recursive logic definition no function satisfies: WP's axiom for it proves anything
            (c("unfounded-logic", "/*@ logic integer vk_f(integer x) = vk_f(x) + 1; */\n"
               "/*@ assigns \\nothing;\n    ensures \\result == 7777 || vk_f(0) == 0; */\n" + t.code), ("rejected",)),
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
        # a proof through code a call makes unreachable, on the kit's own pair
        (Candidate(task_id=KIT_DEAD_CANARY.task_id, model="canary:dead-code-proof", sample=0, origin="canary",
                   output="int inc(int n) {\n  vk_small(99);\n  return 0;\n}\n"), ("rejected",)),
    ]
    # allow-lists on Frama-C's view (the CASP page, "Allow-lists"): one cheat per
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
    # execution cross-check: WP-vs-C differences WP 25 proves, refuted by running them
    result_of = {"divmult": "a", "twice": "n + n"}.get(t.function) if returns_int else None
    if result_of is not None:
        out += [(c("union-other-member", fn_sig + "{\n  union { int x; int y; } u;\n  u.x = " + result_of
                   + ";\n  u.y = 7;\n  return u.x;\n}\n"), ("rejected",)),
                (c("bitfield-beyond-width", fn_sig + "{\n  struct { int v : 4; } s;\n  s.v = " + result_of
                   + ";\n  return s.v;\n}\n"), ("rejected",))]
        # WP's sound fragment (fragment.py): a pointer cast the Typed model does not follow,
        # a K&R definition gcc calls with promoted arguments
        out += [(c("pointer-cast", fn_sig + "{\n  int vk_r = " + result_of + ";\n  *(char *)&vk_r = 0;\n  return vk_r;\n}\n"),
                 ("rejected",)),
                (c("kr-definition", "long vk_id(vk_x) long vk_x; { return vk_x; }\n" + fn_sig + "{\n  return vk_id("
                   + result_of + ");\n}\n"), ("rejected",)),
                # a read of an uninitialised local WP proves harmless (its model gives the
                # local some value; C makes the read undefined): refuted by running it, E-ACSL
                # checking RTE's \initialized assertions
                (c("uninitialised-read", fn_sig + "{\n  int vk_u;\n  int vk_r = " + result_of
                   + " + (vk_u - vk_u);\n  return vk_r;\n}\n"), ("rejected",))]
    return out
