"""Model-Bench's integrity judgement of a candidate on SANY's own parse.

What a candidate model contains is what SANY parsed: the verifier exports SANY's semantic
tree in the same container run as TLC (:func:`harness.verifiers.tlc.sany_view`), and
:func:`sany_findings` judges that view against ALLOW-LISTS of what an honest model of a
Python program needs. Anything not on a list is a finding naming the construct, and a
finding makes the record ``rejected``. No kit-side lexer decides what the candidate
contains: text SANY ignores (before the ``---- MODULE`` header, after the closing
``====``) is not in the view and is not judged. Where the kit reads the module itself for
scoring (the paper's post-processing: constants, variables, module name), its reading must
agree with SANY's, or the candidate is ``rejected``.

Derivation of the lists: the kit's oracles and bundled model outputs
(``data/oracles``, ``data/bundled``) use Naturals, Integers, Sequences and the TLA+
built-ins below; the paper's post-processing (Appendix A.1) adds every standard module of
:data:`~harness.benchmarks.modelbench.postprocess.BUILTIN_MODULES`, so those may be loaded.
Of the module TLC, the operators a translated program may need are kept (``Assert``, ``:>``,
``@@``, ``Permutations``, ``SortSeq``, ``ToString``); the rest change the search, read it,
print next to TLC's messages, or are random or non-deterministic (:data:`TLC_REFUSED`).
Known soundness bugs of the pinned TLC (``images/toolchains.json``, tlaplus,
``soundness_bugs``) are refused by the construct that triggers them.
"""

from __future__ import annotations

from ...toolchains import toolchain_spec

#: Standard modules a candidate may load (EXTENDS/INSTANCE, directly or through another).
ALLOWED_MODULES = ("Naturals", "Integers", "Reals", "Sequences", "FiniteSets", "Bags", "TLC")
#: Operators of each standard module a candidate may use (SANY's unique names).
ALLOWED_OPERATORS: dict[str, frozenset[str]] = {
    "Naturals": frozenset({"Nat", "+", "-", "*", "^", "<", ">", "\\leq", "\\geq", "%", "\\div", ".."}),
    "Integers": frozenset({"Int", "-.", "Nat", "+", "-", "*", "^", "<", ">", "\\leq", "\\geq", "%", "\\div", ".."}),
    "Reals": frozenset({"Real", "/", "Infinity"}),
    "Sequences": frozenset({"Seq", "Len", "\\o", "Append", "Head", "Tail", "SubSeq", "SelectSeq"}),
    "FiniteSets": frozenset({"IsFiniteSet", "Cardinality"}),
    "Bags": frozenset({"IsABag", "BagToSet", "SetToBag", "BagIn", "EmptyBag", "\\oplus", "\\ominus", "BagUnion",
                       "\\sqsubseteq", "SubBag", "BagOfAll", "BagCardinality", "CopiesIn"}),
    "TLC": frozenset({"Assert", ":>", "@@", "Permutations", "SortSeq", "ToString"}),
}
#: Operators of the module TLC refused, and why (named in the finding).
TLC_REFUSED = {
    "TLCSet": "changes the search (TLCSet(\"exit\", TRUE) ends it early and TLC still reports no error)",
    "TLCGet": "reads the search's own state (level, statistics): an invariant depending on the search",
    "Print": "prints next to TLC's messages", "PrintT": "prints next to TLC's messages",
    "JavaTime": "wall-clock time: not deterministic", "TLCEval": "evaluation-strategy hint a program needs not",
    "RandomElement": "random choice: explores one value instead of all (tlaplus#498)",
    "Any": "TLC's AnySet: membership always true",
}
#: SANY built-ins (unique names) a candidate may use: the expression, action and temporal
#: operators of TLA+ that TLC evaluates in a Model-Bench model. Proof steps, temporal
#: quantifiers, action composition and unbounded quantifiers are not on it.
ALLOWED_BUILTINS = frozenset({
    "$AngleAct", "$BoundedChoose", "$BoundedExists", "$BoundedForall", "$CartesianProd", "$Case", "$CaseOther",
    "$ConjList", "$DisjList", "$Except", "$FcnApply", "$FcnConstructor", "$IfThenElse", "$NonRecursiveFcnSpec",
    "$Pair", "$RcdConstructor", "$RcdSelect", "$RecursiveFcnSpec", "$SF", "$Seq", "$SetEnumerate", "$SetOfAll",
    "$SetOfFcns", "$SetOfRcds", "$SquareAct", "$SubsetOf", "$Tuple", "$WF", "'", "/=", "<>", "=", "=>", "BOOLEAN",
    "DOMAIN", "ENABLED", "FALSE", "STRING", "SUBSET", "TRUE", "UNCHANGED", "UNION", "[]", "\\", "\\equiv", "\\in",
    "\\intersect", "\\land", "\\lnot", "\\lor", "\\notin", "\\subseteq", "\\union", "~>", "$Nop",
    "$UnboundedChoose",
})
def soundness_bugs() -> list[dict]:
    """The known soundness bugs of the pinned TLC/SANY (``images/toolchains.json``,
    toolchain ``tlaplus``, key ``soundness_bugs``: ``id``, ``url``, ``fixed_in``,
    ``construct``, ``rule``, and ``pattern`` / ``operator`` when a construct of SANY's view
    triggers it), read once through :func:`harness.toolchains.toolchain_spec`. Empty when
    the toolchain lists none."""
    return list(toolchain_spec("tlaplus").get("soundness_bugs", []))


def sany_findings(view: dict | None, *, constants: list[str], model_values: list[str], variables: list[str],
                  module: str | None, task_constants: dict) -> list[str]:
    """Why a candidate must be ``rejected`` on SANY's view (empty when nothing is found).

    Args:
        view: :func:`harness.verifiers.tlc.sany_view`'s result (None or ``{"error"}``: no
            view, a finding: the kit cannot tell what the candidate contains).
        constants, model_values, variables, module: what the kit's post-processing read
            (:class:`~harness.benchmarks.modelbench.postprocess.Processed`); must agree
            with SANY.
        task_constants: the task's constants (name -> value); a candidate may not define
            one of them as an operator (the task's value would not apply).

    Findings: a module loaded outside :data:`ALLOWED_MODULES` (an inner module of the
    candidate too); a named INSTANCE of such a module; an operator of a standard module not
    on :data:`ALLOWED_OPERATORS` (:data:`TLC_REFUSED` say why), of an origin the view could
    not place, or a built-in not on :data:`ALLOWED_BUILTINS`; a CONSTANT with parameters;
    a task constant defined as an operator; a construct of a known TLC soundness bug
    (:func:`soundness_bugs`); the post-processing's declarations or module name differing
    from SANY's; an ``Assertion`` that reads no variable (true or false by construction),
    or that ``Spec`` uses (the invariant as a constraint of the search).
    """
    if not view or view.get("error"):
        return [f"no SANY view of the module: the kit cannot tell what the candidate contains (fail closed)"
                f"{': ' + view['error'] if view and view.get('error') else ''}"]
    found: list[str] = []
    root = view["root"]
    bad_mods = [m for m in view["modules"] if m != root and m not in ALLOWED_MODULES]
    if bad_mods:
        found.append("module(s) outside the allowed standard modules " + ", ".join(ALLOWED_MODULES) + ": "
                     + ", ".join(bad_mods))
    bad_inst = sorted({i["module"] for i in view["instances"] if i["module"] not in ALLOWED_MODULES})
    if bad_inst:
        found.append("INSTANCE of module(s) not allowed: " + ", ".join(bad_inst))
    refused, unknown = [], []
    for op in view["operators"]:
        origin, _, name = op.partition(":")
        if origin == "builtin":
            if name not in ALLOWED_BUILTINS:
                unknown.append(f"built-in {name}")
        elif origin in ALLOWED_OPERATORS:
            if name not in ALLOWED_OPERATORS[origin]:
                why = TLC_REFUSED.get(name) if origin == "TLC" else None
                refused.append(f"{origin}!{name}" + (f" ({why})" if why else " (not on the allow-list)"))
        else:
            unknown.append(f"{origin}!{name} (unclassified origin)")
    if refused:
        found.append("operator(s) of standard modules not allowed: " + "; ".join(refused))
    if unknown:
        found.append("construct(s) not on the allow-list: " + "; ".join(unknown))
    params = [c["name"] for c in view["constants"] if c.get("arity")]
    if params:
        found.append("CONSTANT(s) with parameters (the task's config cannot give them a value): " + ", ".join(params))
    shadow = sorted(set(task_constants) & set(view["definitions"]))
    if shadow:
        found.append("task constant(s) defined as operators (the task's values would not apply): " + ", ".join(shadow))
    for bug in soundness_bugs():
        hit = (bug.get("pattern") and bug["pattern"] in view.get("patterns", [])) or (
            bug.get("operator") and bug["operator"] in view["operators"])
        if hit:
            found.append(f"construct of a known TLC soundness bug {bug['id']} ({bug['construct']}): {bug['rule']}")
    sany_consts = sorted(c["name"] for c in view["constants"])
    kit_consts = sorted(set(constants) | set(model_values))
    if sany_consts != kit_consts or sorted(view["variables"]) != sorted(variables) or (module and module != root):
        found.append(f"the kit's post-processing read the module differently from SANY (constants {kit_consts} vs "
                     f"{sany_consts}, variables {sorted(variables)} vs {sorted(view['variables'])}, module {module} vs "
                     f"{root})")
    if view.get("assertion_in_spec"):
        found.append("Assertion is used by Spec (a constraint of the search: states that would violate it are "
                     "never generated)")
    if view.get("assertion_variables") == []:
        found.append("Assertion reads no variable: true (or false) by construction, it checks no state")
    return found
