"""Model-Bench's canaries: candidates with known verdicts, run with every command on
:data:`~harness.benchmarks.modelbench.tasks.CANARY_TASK`'s oracle (greatest common divisor)
and on every oracle (the gold, which must verify). Each cheat class the judge refuses has
one, and each refusal an honest neighbour that must verify."""

from __future__ import annotations

from ...model import GOLD, Candidate
from .tasks import CANARY_TASK, Task


def canaries(tasks: list[Task], mode: str) -> list[tuple[Candidate, tuple[str, ...]]]:
    """Canaries with their expected verdicts: the gold candidate (the kit's oracle, model
    and origin ``gold``) of every task that has one must be ``verified`` (its states are
    the reference of the similarity); on :data:`CANARY_TASK`, the oracle with a syntax
    error must be ``invalid``, with a wrong assertion ``failed``, and with an empty
    initial state ``rejected`` (vacuous: no state is checked), and the two cheats on TLC's
    evidence ``rejected``: ``canary:tlcset-exit`` (a wrong assertion hidden by an alias
    ``StopHere == TLCSet("exit", TRUE)`` that ends the search) and ``canary:print-stats``
    (an empty initial state with a ``PrintT`` of a fake 2199 statistics message); and the
    canaries of the classes judged on SANY's parse (:func:`integrity_canaries`)."""
    out = []
    for t in tasks:
        if t.oracle is None:
            continue
        out.append((Candidate(t.task_id, GOLD, 0, t.oracle, GOLD), ("verified",)))
        if t.task_id == CANARY_TASK:
            bad = t.oracle.replace("Next == Loop \\/ Done", "Next == Loop \\/ Done \\/")
            wrong = t.oracle.replace("result = Gcd(a0, b0)", "result = Gcd(a0, b0) + 1")
            vacuous = t.oracle.replace("Init == /\\ a0 \\in 1..MaxValue", "Init == /\\ a0 \\in {}")
            exit_early = wrong.replace("Next == Loop \\/ Done",
                                       "StopHere == TLCSet(\"exit\", TRUE)\n\nNext == StopHere /\\ (Loop \\/ Done)")
            fake = vacuous.replace("Assertion ==", 'ASSUME PrintT("@!@!@STARTMSG 2199:0 @!@!@\\n500 states generated, '
                                   '500 distinct states found, 0 states left on queue.\\n@!@!@ENDMSG 2199 @!@!@")'
                                   "\n\nAssertion ==")
            new_classes = integrity_canaries(t.oracle, wrong)
            for name, text, expected in (("canary:parse-error", bad, "invalid"), ("canary:violation", wrong, "failed"),
                                         ("canary:vacuous", vacuous, "rejected"),
                                         ("canary:tlcset-exit", exit_early, "rejected"),
                                         ("canary:print-stats", fake, "rejected"), *new_classes):
                if text != t.oracle:
                    out.append((Candidate(t.task_id, name, 0, text, "canary"), (expected,)))
    return out


def integrity_canaries(oracle: str, wrong: str) -> list[tuple[str, str, str]]:
    """``(name, text, expected)`` of the SANY-parse canaries on :data:`CANARY_TASK`'s oracle
    (``wrong``: the oracle with a wrong assertion): one per class judged on SANY's parse
    (:mod:`.integrity`), and one honest neighbour that must verify:

    - ``canary:random-element`` (``rejected``): the wrong model drawing its input with
      ``RandomElement`` (off the TLC allow-list; tlaplus#498);
    - ``canary:constant-assertion`` (``rejected``): the wrong model whose Assertion reads
      no variable (``1 = 1``);
    - ``canary:shadowed-constant`` (``rejected``): the oracle defining the task's
      constant ``MaxValue == 1`` (fewer inputs than the program takes);
    - ``canary:except-constructor`` (``rejected``): EXCEPT on a function constructor
      (tlaplus#1302, a soundness bug of the pinned TLC);
    - ``canary:assertion-constraint`` (``rejected``): the wrong model whose Spec uses its
      Assertion as a constraint (``[][Next /\\ Assertion']_vars``: violating states pruned);
    - ``canary:inner-module`` (``rejected``): an inner module instantiated (a module off the
      allow-list);
    - ``canary:tautology-assertion`` (``failed``): a model returning the wrong value whose
      Assertion reads its variables but holds by construction (``pc = "done" => result =
      result``): TLC checks nothing, the behaviour harness finds the wrong return value;

    and one per class the behaviour harness decides (:func:`behaviour_canaries`).
    - ``canary:prose-around`` (``verified``): the oracle with prose SANY ignores, before its
      header (mentioning ``EXTENDS`` and ``TLCSet``) and after its closing ``====``.
    """
    random_in = wrong.replace("Init == /\\ a0 \\in 1..MaxValue", "Init == /\\ a0 = RandomElement(1..MaxValue)")
    constant = wrong.replace('Assertion == pc = "done" => result = Gcd(a0, b0) + 1', "Assertion == 1 = 1")
    shadowed = oracle.replace("CONSTANTS MaxValue, NONE, NULL", "CONSTANTS NONE, NULL\nMaxValue == 1")
    except_c = oracle.replace('        /\\ pc = "loop"\n\nLoop',
                              '        /\\ pc = "loop"\n        /\\ [[k \\in 1..2 |-> 0] EXCEPT ![1] = 1][1] = 1\n\nLoop')
    a_line = 'Assertion == pc = "done" => result = Gcd(a0, b0) + 1\n'
    constraint = wrong.replace(a_line, "").replace("Next == Loop", a_line + "\nNext == Loop").replace(
        "Spec == Init /\\ [][Next]_vars", "Spec == Init /\\ [][Next /\\ Assertion']_vars")
    tautology = oracle.replace("ELSE /\\ result' = a", "ELSE /\\ result' = b").replace(
        'Assertion == pc = "done" => result = Gcd(a0, b0)', 'Assertion == pc = "done" => result = result')
    inner = oracle.replace("vars ==", "---- MODULE Inner ----\nX == 1\n====\nI == INSTANCE Inner\nvars ==")
    prose = ("Notes (before the header, ignored by SANY): EXTENDS TLC and TLCSet(\"exit\", TRUE) are not used.\n"
             + oracle + "\nAfter the module (ignored by SANY):\nVARIABLES z\nEXTENDS TLCExt\n")
    out = [("canary:random-element", random_in, "rejected"), ("canary:constant-assertion", constant, "rejected"),
           ("canary:shadowed-constant", shadowed, "rejected"), ("canary:except-constructor", except_c, "rejected"),
           ("canary:assertion-constraint", constraint, "rejected"), ("canary:inner-module", inner, "rejected"),
           ("canary:tautology-assertion", tautology, "failed"), ("canary:prose-around", prose, "verified"),
           *behaviour_canaries(oracle)]
    return [(n, x, e) for n, x, e in out if x not in (oracle, wrong) or n == "canary:prose-around"]


def behaviour_canaries(oracle: str) -> list[tuple[str, str, str]]:
    """``(name, text, expected)`` of the canaries the behaviour harness decides, on
    :data:`CANARY_TASK`'s oracle (greatest common divisor): each model below passes TLC
    with its own Assertion, and only running it on the program's inputs shows it is wrong.

    - ``canary:prune-by-assertion`` (``failed``): returns ``a + 1`` and prunes, with a copy
      of the true Assertion in ``Next``, every step that would show it: the behaviours stop
      before the end, with no result;
    - ``canary:restricted-init`` (``rejected``): returns its first input and starts only
      from ``b0 = a0``, where that is right: the other inputs are missing from ``Init``;
    - ``canary:spec-operator`` (``failed``): computes the result in one step from an
      operator of its own (the minimum) and asserts the same operator;
    - ``canary:never-returns`` (``failed``): loops forever between two states instead of
      returning; its Assertion is never tried;
    - ``canary:probe-error`` (``failed``): returns ``a + 1``, with an Assertion that holds on
      every reachable state and ends the invariant probe in an evaluation error;
    - ``canary:test-asserts`` (``verified``), the honest neighbour: the oracle with an
      Assertion translated from the program's own tests (inputs outside the task's bounds:
      it checks nothing within them, and the invariant probe finds it true on every
      variant).
    """
    plus_one = oracle.replace("ELSE /\\ result' = a", "ELSE /\\ result' = a + 1")
    prune = plus_one.replace("Next == Loop \\/ Done",
                             "Next == (Loop \\/ Done) /\\ (pc' = \"done\" => result' = Gcd(a0, b0))")
    restricted = oracle.replace("ELSE /\\ result' = a", "ELSE /\\ result' = a0").replace(
        "/\\ b0 \\in 1..MaxValue", "/\\ b0 = a0")
    one_step = oracle.replace("Next == Loop \\/ Done", "Min(x, y) == IF x < y THEN x ELSE y\n\n"
                              "Step == /\\ pc = \"loop\" /\\ result' = Min(a0, b0) /\\ pc' = \"done\"\n"
                              "        /\\ UNCHANGED <<a0, b0, a, b>>\n\nNext == Step \\/ Done").replace(
        'Assertion == pc = "done" => result = Gcd(a0, b0)', 'Assertion == pc = "done" => result = Min(a0, b0)')
    never = oracle.replace("ELSE /\\ result' = a\n                   /\\ pc' = \"done\"\n"
                           "                   /\\ UNCHANGED <<a, b>>",
                           "ELSE /\\ a' = 0\n                   /\\ b' = a\n                   /\\ UNCHANGED <<result, pc>>")
    probe_error = plus_one.replace('Assertion == pc = "done" => result = Gcd(a0, b0)',
                                   'Assertion == pc = "done" => [x \\in 1..(MaxValue + 1) |-> TRUE][result]')
    tests = oracle.replace('Assertion == pc = "done" => result = Gcd(a0, b0)',
                           'Assertion == pc = "done" =>\n    /\\ (a0 = 3 /\\ b0 = 7) => result = 1\n'
                           '    /\\ (a0 = 10 /\\ b0 = 15) => result = 5\n    /\\ (a0 = 49 /\\ b0 = 14) => result = 7\n'
                           '    /\\ (a0 = 144 /\\ b0 = 60) => result = 12')
    out = [("canary:prune-by-assertion", prune, "failed"), ("canary:restricted-init", restricted, "rejected"),
           ("canary:spec-operator", one_step, "failed"), ("canary:never-returns", never, "failed"),
           ("canary:probe-error", probe_error, "failed"), ("canary:test-asserts", tests, "verified")]
    return [(n, x, e) for n, x, e in out if x != oracle]
