"""Seeded mutants of the task's body, for the spec strength of the CASP execution
cross-check (spec-from-code, :mod:`.execution`): :func:`mutants` and the dispatcher file
over them (:func:`mutant_file`)."""

from __future__ import annotations

import random
import re

from .cfront import find_function, tokens
from .exec_driver import HARNESS, N_MUTANTS

_SWAPS = {"+": "-", "-": "+", "*": "+", "/": "*", "%": "/", "<": "<=", "<=": "<", ">": ">=", ">=": ">",
          "==": "!=", "!=": "==", "&&": "||", "||": "&&", "+=": "-=", "-=": "+=", "++": "--", "--": "++"}
_BINARY_PREV = {"ident", "number"}
_KEYWORDS = {"if", "else", "for", "while", "do", "return", "switch", "case", "default", "break", "continue", "goto",
             "int", "char", "short", "long", "unsigned", "signed", "void", "const", "static", "struct", "union",
             "enum", "float", "double", "_Bool", "bool", "size_t", "sizeof"}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"}


def body_tokens(task) -> list:
    """The lexer's tokens of the task function's body, braces, ACSL and comments left out."""
    fdef = find_function(task.code, task.function)
    toks = [t for t in tokens(task.code[fdef.body_start: fdef.end]) if t.kind not in ("acsl", "comment")]
    return toks[1:-1]


def mutants(task, seed: int, k: int = N_MUTANTS) -> tuple[str, list[dict]]:
    """Seeded mutants of the task's body (the task's fixed code, read with the kit's lexer:
    the candidate never supplies this text).

    Returns:
        ``(original body, [{"id", "kind", "token", "at", "to", "body"}])``: up to ``k``
        mutants drawn with ``random.Random(seed)`` among every operator swap (binary
        operators only), integer constant +-1 and dropped assignment/call statement;
        bodies are token texts joined by spaces (comments and loop annotations dropped).
    """
    toks = body_tokens(task)
    texts = [t.text for t in toks]
    cands = []
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else None
        binary = prev is not None and (prev.kind in _BINARY_PREV or prev.text in (")", "]"))
        if t.kind == "punct" and t.text in _SWAPS and (binary or t.text in ("<", "<=", ">", ">=", "==", "!=", "&&", "||",
                                                                            "+=", "-=", "++", "--")):
            cands.append(("operator", i, i + 1, [_SWAPS[t.text]]))
        elif t.kind == "number" and re.fullmatch(r"\d+", t.text):
            v = int(t.text)
            cands.append(("constant+1", i, i + 1, [str(v + 1)]))
            if v > 0:
                cands.append(("constant-1", i, i + 1, [str(v - 1)]))
    depth_start = [i + 1 for i, t in enumerate(toks) if t.text in (";", "{", "}")] + [0]
    for s in sorted(set(depth_start)):
        if s >= len(toks) or toks[s].text in _KEYWORDS or toks[s].kind not in ("ident",) and toks[s].text != "*":
            continue
        e = s
        while e < len(toks) and toks[e].text not in (";", "{", "}"):
            e += 1
        if e < len(toks) and toks[e].text == ";" and any(toks[j].text in _ASSIGN or toks[j].text == "(" for j in range(s, e)):
            cands.append(("drop-statement", s, e + 1, [";"]))
    rng = random.Random(seed)
    chosen = sorted(rng.sample(range(len(cands)), min(k, len(cands))))
    out = []
    for n, c in enumerate(chosen, 1):
        kind, a, b, repl = cands[c]
        body = " ".join(texts[:a] + repl + texts[b:])
        out.append({"id": n, "kind": kind, "at": a, "token": " ".join(texts[a:b]), "to": " ".join(repl), "body": body})
    return " ".join(texts), out


def mutant_file(task, header: str, original: str, muts: list[dict]) -> str:
    """The candidate's contract (``header``, the candidate's text) over a dispatcher that
    runs the original body (``vk_mutant == 0``) or mutant ``vk_mutant``."""
    decl = task.code[find_function(task.code, task.function).start: find_function(task.code, task.function).body_start]
    cases = "".join(f"    case {m['id']}: {{ {m['body']} }} break;\n" for m in muts)
    sep = "\n" if header and not header.endswith("\n") else ""
    return (task.prelude + "\nint vk_mutant;\n" + header + sep + decl.rstrip() + " {\n  switch (vk_mutant) {\n" + cases
            + f"    default: {{ {original} }} break;\n  }}\n}}\n" + task.suffix + f'\n#include "{HARNESS}"\n')
