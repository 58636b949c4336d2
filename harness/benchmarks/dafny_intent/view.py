"""What a candidate contains, judged on Dafny's own parse.

Dafny 2.3 prints the program it parsed (``/dprint``, in the same run that verifies the
check files; :func:`harness.verifiers.dafny.program_view` reads the printout into
declarations). The judge here compares that view with

1. **allow-lists** (:data:`HELPER_KINDS`, :data:`ALLOWED_ATTRIBUTES`, :data:`SPEC_KEYWORDS`,
   :data:`HELPER_KEYWORDS`, :data:`BODY_KEYWORDS`, :data:`OPERATORS`): what an honest
   candidate may contain. They were derived from the 154 check files (``batch.dfy``) the
   kit builds for the MBPP-DFY-153 gold programs and the bundled GPT-4 outputs, printed
   by the image's Dafny (``scripts/dafny-allowlist.py`` prints the derivation); the few
   additions beyond the data are named below. Anything else is ``rejected`` naming the
   construct (fail closed: a construct the list does not know is not trusted);
2. **the kit's own reading** (``options["expect"]``, from
   :func:`.checks.build_files`): the same helper declarations (names, kinds, bodies,
   clause counts), every check method with exactly the candidate's requires/ensures
   clauses and exactly the ``assume`` statements the kit wrote. A disagreement (a helper
   body Dafny reads as a comment, an ``assume`` the kit's grammar did not see, an extra
   declaration, a check method whose body was commented out) rejects the candidate: "the
   kit's parse disagrees with Dafny's";
3. **known soundness bugs** of the pinned Dafny (``images/toolchains.json``, toolchain
   ``dafny``, key ``soundness_bugs``): a candidate using a triggering construct is rejected.
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Declaration kinds a candidate's helper may have (Dafny's printed kind). The data has
#: ``function`` and ``predicate``; ``function method``/``predicate method`` (the same
#: function, also compiled) are added because the task files and the prompt's Dafny 3
#: style use them. Lemmas, methods, classes, datatypes, constants, modules... are not on it.
HELPER_KINDS = frozenset({"function", "predicate", "function method", "predicate method"})
#: Attributes a candidate may write anywhere: none occur in the data; ``{:trigger}`` and
#: ``{:induction}`` only guide the prover (kept from the earlier integrity rules). ``{:axiom}`` is the kit's,
#: on its own ``assume`` statements only (counted exactly).
ALLOWED_ATTRIBUTES = frozenset({"trigger", "induction"})
#: Keywords of the data's expressions (clauses and helper bodies), plus ``multiset`` and
#: ``map`` (value types of the same kind as ``seq``/``set``).
EXPR_KEYWORDS = frozenset({"array", "as", "bool", "char", "else", "exists", "false", "forall", "if", "in", "int",
                           "nat", "null", "old", "real", "seq", "set", "string", "then", "true", "var",
                           "multiset", "map"})
#: Keywords of a check method's header and clauses (the kit writes ``method``/``returns``).
SPEC_KEYWORDS = EXPR_KEYWORDS | {"method", "returns", "requires", "ensures"}
#: Keywords of a candidate helper's header and clauses.
HELPER_KEYWORDS = EXPR_KEYWORDS | {"function", "predicate", "method", "requires", "ensures", "reads", "decreases"}
#: Keywords in a candidate helper's body (an expression).
BODY_KEYWORDS = EXPR_KEYWORDS
#: Keywords in a check method's body (the kit's statements; a refutation's body also
#: asserts the candidate's postcondition, with :data:`EXPR_KEYWORDS`).
CHECK_BODY_KEYWORDS = frozenset({"assert", "assume", "char", "false", "int", "new", "true", "real", "bool", "nat",
                                 "string", "seq", "set", "multiset", "map"})
#: Operators and punctuation of the data (clauses and helpers), plus ``=>`` (a lambda's
#: arrow, ordinary Dafny outside the kit's grammar) and ``->`` (a function type).
OPERATORS = frozenset(["!", "!=", "%", "&&", "(", ")", "*", "+", ",", "-", ".", "..", "/", ":", "::", ":=", ":|",
                       ";", "<", "<=", "<==", "<==>", "==", "==>", ">", ">=", "[", "]", "^", "{", "|", "||", "}",
                       "&", "!!", "=>", "->"])


@lru_cache(maxsize=1)
def soundness_bugs() -> tuple:
    """Known soundness bugs of the pinned Dafny, from ``images/toolchains.json`` (toolchain
    ``dafny``, key ``soundness_bugs``): ``({"id", "url", "fixed_in", "construct", "rule"},
    ...)``. ``rule`` is one of :data:`RULES` (a rule this module does not know raises
    ``ValueError``: the list must not be trusted half-read)."""
    from ...toolchains import toolchain_spec

    bugs = tuple(toolchain_spec("dafny").get("soundness_bugs", ()))
    for b in bugs:
        if _rule_name(b["rule"]) not in RULES:
            raise ValueError(f"images/toolchains.json: dafny soundness bug {b['id']}: unknown rule {b['rule']!r}")
    return bugs


def _rule_name(rule: str) -> str:
    return rule.split(":", 1)[0]


def _rule_keyword(d: dict, arg: str) -> bool:
    return arg in d["keywords"] or arg in d["body_keywords"] or d["kind"].split()[-1:] == [arg]


def _rule_bv_decreases(d: dict, arg: str) -> bool:
    return any(t.startswith("bv") for t in d["types"]) and ("decreases" in d["clauses"]
                                                            or "while" in d["body_keywords"])


def _rule_decreases_star(d: dict, arg: str) -> bool:
    return bool(d.get("decreases_star"))


#: Rules of ``soundness_bugs`` entries: ``keyword:<word>`` (the word occurs in a
#: declaration of the candidate), ``bv-decreases`` (a bitvector type in a declaration with
#: a ``decreases`` clause or a loop), ``decreases-star`` (``decreases *``).
RULES = {"keyword": _rule_keyword, "bv-decreases": _rule_bv_decreases, "decreases-star": _rule_decreases_star}


def _version_below(version: str | None, fixed_in: str | None) -> bool:
    """True when ``version`` is older than ``fixed_in`` (or either is unknown: fail closed)."""
    def nums(v):
        return tuple(int(x) for x in re.findall(r"\d+", v or ""))[:3]
    if not nums(version) or not nums(fixed_in):
        return True
    return nums(version) < nums(fixed_in)


def view_problems(view: dict | None, expect: dict | None, *, dafny_version: str | None = None) -> list[str]:
    """Why Dafny's printed program of a candidate's check files is not acceptable (empty:
    acceptable). ``view``: ``result.extra["view"]`` (:func:`harness.verifiers.dafny.parse`:
    ``{"decls", "unclassified", "errors", "missing", "files"}``), ``expect``:
    ``job.options["expect"]``. Each problem names the construct and where Dafny printed it."""
    if view is None:
        return ["Dafny's printed program was not collected, so what the candidate contains cannot be judged"]
    if expect is None:
        return ["the job has no record of the kit's reading of the candidate"]
    out = [f"Dafny's printed program {e}" for e in view.get("errors", [])]
    out += [f"{f}: Dafny verified it but printed no program" for f in view.get("missing", [])]
    out += [f"unclassified text in Dafny's printed program: {u}" for u in view.get("unclassified", [])[:5]]
    decls = view.get("decls", [])
    if not decls and not out:
        out.append("Dafny's printed program has no declaration")
    helpers = {h["name"]: h for h in expect.get("helpers", [])}
    methods = expect.get("methods", {})
    # a refutation asserts the negated postcondition in its body: the candidate's expression keywords
    refutations = {n for n, m in methods.items() if m.get("kind") == "refute"}
    want_clauses = expect.get("clauses", {})
    seen_helpers: dict[str, dict] = {}
    bugs = [b for b in soundness_bugs() if _version_below(dafny_version, b.get("fixed_in"))]
    for d in decls:
        name, kind, where = d["name"], d["kind"], f"{d['kind']} {d['name']} (printed line {d['line']})"
        if name in methods:
            if kind != "method":
                out.append(f"{where}: the check method {name} is printed as a {kind}")
            got = {k: n for k, n in d["clauses"].items()}
            wrote = methods[name].get("clauses", want_clauses)
            if got != wrote:
                out.append(f"{where}: the kit's parse disagrees with Dafny's: Dafny reads clauses {got}, "
                           f"the kit wrote {wrote}")
            if not d["body"]:
                out.append(f"{where}: the kit's parse disagrees with Dafny's: the check method has no body for Dafny")
            want = methods[name]["assume"]
            if d["assume"] != want or d["attributes_all"].get("axiom", 0) != want:
                out.append(f"{where}: the kit's parse disagrees with Dafny's: {d['assume']} assume statement(s) "
                           f"and {d['attributes_all'].get('axiom', 0)} {{:axiom}} (the kit wrote {want})")
            out += _unlisted(where, "attribute", [a for a in d["attributes_all"] if a != "axiom"], ALLOWED_ATTRIBUTES)
            out += _unlisted(where, "keyword in the specification", d["keywords"], SPEC_KEYWORDS)
            body_ok = CHECK_BODY_KEYWORDS | (EXPR_KEYWORDS if name in refutations else frozenset())
            out += _unlisted(where, "keyword in the check body", d["body_keywords"], body_ok)
            out += _unlisted(where, "operator", d["puncts"], OPERATORS)
            if d["requires_false"]:
                out.append(f"{where}: requires false (no input satisfies the precondition)")
        elif name in helpers:
            h = helpers[name]
            if name in seen_helpers and _shape(seen_helpers[name]) != _shape(d):
                out.append(f"{where}: declared differently in two check files")
            seen_helpers[name] = d
            if not d["body"]:
                out.append(f"{where}: no body (Dafny trusts a body-less declaration's ensures)")
            if d["body"] != h["body"] or d["clauses"] != h["clauses"]:
                out.append(f"{where}: the kit's parse disagrees with Dafny's: Dafny reads "
                           f"{'a body' if d['body'] else 'no body'} and clauses {d['clauses']}, the kit "
                           f"{'a body' if h['body'] else 'no body'} and clauses {h['clauses']}")
            if d["assume"]:
                out.append(f"{where}: assume (an unproved assumption)")
            out += _unlisted(where, "attribute", d["attributes_all"], ALLOWED_ATTRIBUTES)
            if h["origin"] == "candidate":
                if kind not in HELPER_KINDS:
                    out.append(f"{where}: declaration kind {kind!r} is not allowed (allowed: "
                               f"{', '.join(sorted(HELPER_KINDS))})")
                out += _unlisted(where, "keyword", d["keywords"], HELPER_KEYWORDS)
                out += _unlisted(where, "keyword in the body", d["body_keywords"], BODY_KEYWORDS)
                out += _unlisted(where, "operator", d["puncts"], OPERATORS)
        else:
            out.append(f"{where}: a declaration the kit did not read (the kit's parse disagrees with Dafny's)")
            continue
        if d.get("verbatim_multiline"):
            out.append(f"{where}: a verbatim string spanning lines (not on the allow-list)")
        for b in bugs:
            rule, _, arg = b["rule"].partition(":")
            if RULES[rule](d, arg):
                out.append(f"{where}: uses {b['construct']} (known Dafny soundness bug {b['id']}, {b['url']})")
    missing_h = sorted(set(helpers) - set(seen_helpers))
    if missing_h and decls:
        out.append(f"the kit's parse disagrees with Dafny's: Dafny does not read the helper(s) {', '.join(missing_h)}")
    printed_methods = {d["name"] for d in decls if d["name"] in methods}
    if decls and not printed_methods:
        out.append("the kit's parse disagrees with Dafny's: Dafny reads none of the check methods")
    return list(dict.fromkeys(out))


def _shape(d: dict) -> tuple:
    return (d["kind"], d["body"], tuple(sorted(d["clauses"].items())), d["assume"],
            tuple(sorted(d["attributes_all"].items())))


def _unlisted(where: str, what: str, found, allowed) -> list[str]:
    bad = sorted(set(found) - set(allowed))
    return [f"{where}: {what} {b!r} is not on the allow-list" for b in bad]
