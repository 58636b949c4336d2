"""Dafny's printed program (``/dprint``): its tokens, the declarations a judge
reads from it (:func:`program_view`), and the views of a job's files merged
(:func:`merged_view`)."""

from __future__ import annotations

import re

from ...model import ProcResult

#: Reserved words of Dafny 2.3 (the scanner's keywords, Dafny.atg of 2.3.0, and the
#: built-in type names): in :func:`program_view` a token that is one of these is a
#: keyword, never a user name. A judge compares them with an allow-list.
KEYWORDS = frozenset("""
abstract allocated array as assert assume bool break by calc case char class codatatype colemma const constructor
copredicate datatype decreases default else ensures exists export expect extends false forall free fresh function
ghost if imap import in include inductive int invariant iset iterator label lemma map match method modifies modify
module multiset nat new newtype null object object? old opened ORDINAL predicate print protected provides reads real
refines requires return returns reveal reveals seq set static string then this trait true twostate type unchanged
var where while witness yield yields
""".split())
#: Modifiers and keywords that may open a top-level declaration in Dafny 2.3.
DECL_WORDS = frozenset("""abstract ghost static protected inductive twostate copredicate colemma function predicate
method lemma class trait datatype codatatype newtype type module import const var iterator export include""".split())
_CLAUSES = ("requires", "ensures", "reads", "modifies", "decreases")
_TOKEN = re.compile(r"""
 (?P<ws>\s+)
|(?P<comment>//[^\n]*|/\*(?:[^*]|\*(?!/))*\*/)
|(?P<vstring>@"(?:""|[^"])*")
|(?P<string>"(?:\\.|[^"\\\n])*")
|(?P<char>'(?:\\u[0-9A-Fa-f]{4}|\\.|[^'\\\n])')
|(?P<number>0x[0-9A-Fa-f_]+|\d[\d_]*(?:\.\d[\d_]*)?)
|(?P<ident>[A-Za-z_?\\][\w'?]*)
|(?P<punct>:=|:\||::|==>|<==>|<==|==|!=|<=|>=|&&|\|\||!!|\.\.|->|-->|~>|=>|<-|[^\s\w])
""", re.X)


def printed_tokens(text: str) -> list[tuple[str, str, int, int]]:
    """Tokens of Dafny's printed program (``/dprint``): ``[(kind, text, line, column)]``
    (1-based), ``kind`` one of ``ident``, ``number``, ``string``, ``vstring`` (verbatim),
    ``char``, ``punct``; comments (the printer's own, e.g. ``/*special witness*/``) and
    whitespace dropped. The printed program has no comment of the candidate (Dafny's
    parser drops them), so only literals need care; a character no rule matches becomes a
    ``punct`` token of its own."""
    out, pos, line, col0 = [], 0, 1, 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        kind = m.lastgroup
        val = m.group(kind)
        if kind not in ("ws", "comment"):
            out.append((kind, val, line, pos - col0 + 1))
        nl = val.count("\n")
        if nl:
            line += nl
            col0 = pos + val.rfind("\n") + 1
        pos = m.end()
    return out


def program_view(text: str) -> dict:
    """The declarations of a program as Dafny 2.3 printed it after parsing (``/dprint``),
    for a judge that must not rely on its own parse of the candidate's text.

    The printer writes a header of ``//`` lines (``// Dafny 2.3.0.10506``, the command
    line, the file names; observed: some runs also print the ``_System`` module and ``/* CALL
    GRAPH for module _module: */`` before the declarations), then every top-level
    declaration starting in column 1, its clauses indented by two spaces, its body between
    a ``{`` and a ``}`` in column 1 (recorded: tests/test_dafny_integrity.py).

    Returns ``{"decls": [...], "unclassified": [str], "error": str | None}``; each decl is
    ``{"kind", "name", "line", "attributes" (of the header), "clauses": {kind: count},
    "requires_false": bool, "body": bool, "assume": n (anywhere), "attributes_all": {name:
    count} (anywhere), "keywords": {word: count} (header/clauses), "body_keywords": {word:
    count}, "puncts": [distinct operators], "types": [distinct ``bvN``/``arrayN`` names],
    "verbatim_multiline": bool}``. ``unclassified``: column-1 text that is neither a
    declaration start nor a body brace (judges fail closed on it). ``error``: the text is
    not a printed program of this form."""
    lines = text.split("\n")
    if not lines[0].startswith("// Dafny "):
        return {"decls": [], "unclassified": [], "error": "does not start with '// Dafny <version>'"}
    start = next((i for i, ln in enumerate(lines) if ln.startswith("/* CALL GRAPH for module _module:")), None)
    if start is not None:  # the resolved form (printed with the _System module and call graphs)
        end = next((i for i in range(start, len(lines)) if lines[i].strip() == "*/"), None)
        if end is None:
            return {"decls": [], "unclassified": [], "error": "unterminated call-graph comment"}
    else:  # the parsed form: a header of // lines (version, command line, file names)
        end = 0
        while end + 1 < len(lines) and lines[end + 1].startswith("//"):
            end += 1
    body_text = "\n".join(lines[end + 1:])
    toks = [(k, v, ln + end + 1, c) for k, v, ln, c in printed_tokens(body_text)]
    decls: list[dict] = []
    unclassified: list[str] = []
    cur = None
    region = "header"
    depth = 0
    for i, (kind, val, ln, col) in enumerate(toks):
        if col == 1 and depth == 0:
            if val == "{" and cur is not None and region != "body":
                cur["body"] = True
                region = "body"
                depth = 1
                continue
            if kind == "ident" and val in DECL_WORDS:
                cur = {"kind": None, "name": None, "line": ln, "attributes": [], "clauses": {}, "requires_false": False,
                       "body": False, "assume": 0, "attributes_all": {}, "keywords": {}, "body_keywords": {},
                       "puncts": set(), "types": set(), "verbatim_multiline": False, "_clause": []}
                cur["kind"], cur["attributes"], cur["name"] = _decl_head(toks, i)
                decls.append(cur)
                region = "header"
            elif val == "}" and region == "body":
                region = "after"
                continue
            else:
                unclassified.append(f"line {ln}: {val}")
                cur = None
                continue
        if cur is None:
            continue
        if region == "body":
            if val == "{":
                depth += 1
            elif val == "}":
                depth -= 1
                if depth == 0:
                    region = "after"
                    continue
        if region == "after":
            unclassified.append(f"line {ln}: {val} after the body of {cur['name']}")
            continue
        if region != "body" and col == 3 and kind == "ident" and val in _CLAUSES:
            _close_clause(cur)
            region = "clause"
            cur["clauses"][val] = cur["clauses"].get(val, 0) + 1
            cur["_clause"] = [val]
        elif region == "clause":
            cur["_clause"].append(val)
        if val == ":" and i and toks[i - 1][1] == "{" and i + 1 < len(toks):
            name = toks[i + 1][1]
            cur["attributes_all"][name] = cur["attributes_all"].get(name, 0) + 1
        if kind == "ident" and val == "assume":
            cur["assume"] += 1
        if kind == "ident" and val in KEYWORDS:
            key = "body_keywords" if region == "body" else "keywords"
            cur[key][val] = cur[key].get(val, 0) + 1
        if kind == "punct":
            cur["puncts"].add(val)
        if kind == "ident" and re.fullmatch(r"(bv|array)\d+\??", val):
            cur["types"].add(val)
        if kind == "vstring" and "\n" in val:
            cur["verbatim_multiline"] = True
    for d in decls:
        _close_clause(d)
        d.pop("_clause", None)
        d["puncts"] = sorted(d["puncts"])
        d["types"] = sorted(d["types"])
        if d["name"] is None:
            unclassified.append(f"line {d['line']}: a declaration without a name")
    return {"decls": decls, "unclassified": unclassified, "error": None}


def _decl_head(toks: list, i: int) -> tuple[str | None, list[str], str | None]:
    """``(kind, header attributes, name)`` of the declaration starting at token ``i``:
    the declaration words, then attributes ``{:name ...}`` (skipped by brace matching),
    then the name (None when the next token is not a name)."""
    words, attrs = [], []
    j = i
    while j < len(toks):
        kind, val = toks[j][0], toks[j][1]
        if kind == "ident" and val in DECL_WORDS and not attrs:
            words.append(val)
            j += 1
        elif val == "{" and j + 1 < len(toks) and toks[j + 1][1] == ":":
            attrs.append(toks[j + 2][1] if j + 2 < len(toks) else "")
            depth, j = 1, j + 1
            while j < len(toks) and depth:
                depth += {"{": 1, "}": -1}.get(toks[j][1], 0)
                j += 1
        elif kind == "ident" and val not in KEYWORDS:
            return " ".join(words), attrs, val
        else:
            return " ".join(words), attrs, None
    return " ".join(words), attrs, None


def _close_clause(d: dict) -> None:
    words = [w for w in d.get("_clause", []) if w not in ("(", ")")]
    if words == ["requires", "false"]:
        d["requires_false"] = True
    if words[:1] == ["decreases"] and "*" in words:
        d["decreases_star"] = True
    d["_clause"] = []


def merged_view(proc: ProcResult, runs: list[dict], units: dict) -> dict:
    """Dafny's printed programs (``<file>.dprint``) of every file whose run completed
    (parsed, resolved and verified: what the verdict rests on), merged: ``{"decls",
    "unclassified", "errors", "missing", "files"}``. ``decls``: every declaration of the
    first completed file, and of the others those not already present with the same shape
    (the check files of the fallback share their helpers); ``missing``: completed files
    without a printout; ``errors``: a printout that is not one, or that lacks a method of
    the file's ``units``."""
    import json

    decls, unclassified, errors, missing, files, seen = [], [], [], [], [], set()
    for r in runs:
        if r["outcome"] != "completed":
            continue
        f = r["file"]
        raw = proc.files.get(f + ".dprint")
        if raw is None:
            missing.append(f)
            continue
        v = program_view(raw.decode("utf-8", "replace"))
        files.append(f)
        if v["error"]:
            errors.append(f"{f}: {v['error']}")
        unclassified += [f"{f}: {u}" for u in v["unclassified"]]
        names = {d["name"] for d in v["decls"]}
        lost = [n for n, _a, _b in units.get(f, []) if n not in names]
        if lost:
            errors.append(f"{f}: Dafny's printed program lacks the method(s) {', '.join(lost[:5])}")
        for d in v["decls"]:
            key = json.dumps({k: x for k, x in d.items() if k != "line"}, sort_keys=True)
            if key not in seen:
                seen.add(key)
                decls.append(d)
    return {"decls": decls, "unclassified": unclassified, "errors": errors, "missing": missing, "files": files}
