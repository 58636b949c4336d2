"""The filters of Model-Bench's Section 3.1 ("Simplification and rewrite"), in the paper's
order, each applied to what the previous one kept (Table 1's columns):

1. Libraries: no import other than ``typing`` and ``math`` in the normalized file
   (function and tests).
2. Language features: none of multiple function declarations, recursion, list (set,
   dict) comprehensions, slices, classes, lambdas, generators. The paper had an LLM
   rewrite such programs (Figure 11 prompt, :func:`rewrite_prompt`) and dropped those
   still failing; the kit cannot run an LLM, so it drops them and counts them.
3. Types: the entry function's annotations name only None, numbers, strings and the
   derived List/Tuple/Dict/Iter types (``Optional``/``Union`` of those); no ``set``.

The fourth stage, Execution, runs the program (:mod:`.stages`).
"""

from __future__ import annotations

import ast
import re

#: Imports the Libraries filter keeps (Section 3.1 (1)).
ALLOWED_IMPORTS = ("typing", "math")
#: Type names the Types filter keeps (Section 3.1 (3): None, Number, String, and their
#: derived List, Tuple, Dict and Iter).
ALLOWED_TYPES = frozenset({"None", "int", "float", "bool", "str", "List", "list", "Tuple", "tuple", "Dict",
                           "dict", "Iterable", "Iterator", "Optional", "Union", "typing"})


def library_reasons(code: str) -> list[str]:
    """Imports other than typing and math (filter 1); ``["syntax error ..."]`` when the
    code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return [f"syntax error: {exc.msg} (line {exc.lineno})"]
    bad = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            bad += [a.name for a in n.names if a.name.split(".")[0] not in ALLOWED_IMPORTS]
        elif isinstance(n, ast.ImportFrom):
            if (n.module or "").split(".")[0] not in ALLOWED_IMPORTS or n.level:
                bad.append(n.module or ".")
    return [f"imports {m}" for m in dict.fromkeys(bad)]


def feature_reasons(code: str, entry_point: str) -> list[str]:
    """Language features of filter 2 found in the code: multiple function declarations,
    recursion, comprehensions, slices, classes, lambdas, generators."""
    tree = ast.parse(code)
    found = []
    funcs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(funcs) > 1:
        found.append("multiple function declarations")
    for f in funcs:
        if any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == f.name
               for c in ast.walk(f)):
            found.append("recursion")
            break
    kinds = [(ast.ListComp, "list comprehension"), (ast.SetComp, "set comprehension"),
             (ast.DictComp, "dict comprehension"), (ast.Slice, "slice"), (ast.ClassDef, "class"),
             (ast.Lambda, "lambda"), (ast.GeneratorExp, "generator"), (ast.Yield, "generator"),
             (ast.YieldFrom, "generator")]
    for kind, label in kinds:
        if any(isinstance(n, kind) for n in ast.walk(tree)) and label not in found:
            found.append(label)
    return found


def annotation_names(node: ast.AST | None) -> list[str]:
    """Type names an annotation mentions (``Optional[List[str]]`` -> Optional, List,
    str; string annotations are read for identifiers; ``None`` counts as a name)."""
    if node is None:
        return []
    names = []
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            names.append(n.id)
        elif isinstance(n, ast.Attribute):
            names.append(n.attr)
        elif isinstance(n, ast.Constant) and n.value is None:
            names.append("None")
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            names += re.findall(r"[A-Za-z_]\w*", n.value)
    return names


def type_reasons(code: str, entry_point: str) -> list[str]:
    """Types of filter 3: annotation names outside :data:`ALLOWED_TYPES` on the entry
    function, and sets built in the code (``set()``, ``{...}``, ``frozenset``)."""
    tree = ast.parse(code)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point), None)
    if fn is None:
        return [f"no top-level function {entry_point}"]
    names = []
    for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs:
        names += annotation_names(a.annotation)
    names += annotation_names(fn.returns)
    found = [f"type {n}" for n in dict.fromkeys(names) if n not in ALLOWED_TYPES]
    for n in ast.walk(fn):
        if isinstance(n, (ast.Set, ast.SetComp)) or (
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("set", "frozenset")):
            found.append("type set")
            break
    if fn.args.vararg or fn.args.kwarg:
        found.append("variadic parameters")
    return found


def rewrite_prompt(code: str) -> str:
    """The paper's prompt for rewriting programs with the filtered language features
    (Figure 11), for users who want to do the LLM rewriting step themselves."""
    return (
        "# System Prompt\nYou are a Python expert. Please refactor the user's Python code into equivalent code "
        "following these rules:\n1. Avoid using list comprehensions like [x*2 for x in range(5)]. Use traditional "
        "for loops instead. 2. Avoid using slicing operations like array[1:4]. Use loops to access elements "
        "individually. 3. Avoid using classes with self references like \"class Calculator: def add(self, x, y)\". "
        "Use standalone functions. 4. Avoid using lambda functions like \"lambda x: x + 1\". Use regular named "
        "functions. 5. Avoid using generator expressions like \"(x for x in range(5))\". Use regular loops and "
        "lists. 6. Write single, non-recursive functions instead of recursive ones like \"def factorial(n): return "
        "n * factorial(n-1)\". Please output the refactored code directly without any additional explanations.\n"
        f"# User Prompt\n{code}")
