"""CASP execution cross-check: "verified" means proved by WP *and* not refuted by running it.

Issue 26, item 2 and 4. For a candidate-mode job the kit ships, beside the verified file,
a generated test driver and the files :mod:`harness.verifiers.drivers` ``exec_check.sh``
(run inside the job's sandbox, before WP) builds and runs:

- ``ea``: the verified file + the driver instrumented by Frama-C's E-ACSL
  (``frama-c -e-acsl``; Frama-C's own reading of the contract, not the kit's), compiled
  with gcc -O0 against E-ACSL's runtime. It checks at run time the contract attached to
  the function: the task's (code-from-spec) or the candidate's on the task's real code
  (spec-from-code). An input whose ``requires`` fails on entry to the target is
  *discarded* (not counted); any other E-ACSL failure is a violation.
- ``gcc-O0``, ``gcc-O2`` (and ``clang-O0``, ``clang-O2`` when clang is in the image):
  the same source, not instrumented, under ``-fsanitize=undefined,address
  -fno-sanitize-recover=all``, run on the inputs that satisfied the ``requires``.
- spec-from-code only, ``mut``: the candidate's contract over a dispatcher whose body
  runs the task's original body (``vk_mutant = 0``) or one of its seeded mutants
  (operator swaps, constants +-1, dropped statements), E-ACSL-instrumented: the spec
  strength (share of behaviour-changing mutants whose run violates the contract); and
  ``mutg``, the same mutants under the task's own contract (the reference: a candidate is
  vacuous by execution only where the task's contract kills some mutant).

Inputs are drawn here (seeded, recorded) from the task's own declarator (the task is fixed
data, never the candidate's text): per C integer type boundary values (min, -1, 0, 1, max),
the pairs (min, -1) of two signed parameters (``INT_MIN % -1``), small and uniform values,
buffers of 1..16 elements for pointer parameters (NUL-terminated for ``char *``) with
lengths correlated to the integer parameters. The ``requires`` are not
read by the kit: E-ACSL evaluates them at run time.

A contract violation, a sanitizer report, a crash, a timeout or two builds that disagree on
an input's output make the record ``rejected``, the reason naming the input. Parameters or
return types the driver cannot build (floating point, structs, pointers to pointers,
typedef names) give ``execution: not-run`` with the reason (not a pass, not a rejection).

What this cannot check: ``assigns`` clauses and other constructs E-ACSL 25 does not
translate (listed per record in ``execution["unchecked"]``); inputs outside the drawn set;
termination beyond the per-run timeout; a recursive call's own precondition failure before
any other annotation is evaluated is counted as a discarded input, not a violation.
"""

from __future__ import annotations

import random
import re

from .cfront import find_function, tokens

#: Job file names (shipped) and the driver's output file (collected).
CONF, HARNESS, RUN, GOLD, MUT = "vk_exec.conf", "vk_exec_harness.h", "vk_exec_run.c", "vk_exec_gold.c", "vk_exec_mut.c"
MUT_GOLD = "vk_exec_mutg.c"
LOG = "vk_exec.log"
#: Defaults: inputs drawn per job, mutants per job, seconds per run of one input.
N_INPUTS, N_MUTANTS, RUN_TIMEOUT_S = 40, 8, 3
#: Signed integer parameters that get the (min, -1) boundary pairs (ordered pairs among them).
PAIR_PARAMS = 4
MAX_LEN = 16
_LENGTHS = (1, 2, 3, 4, 5, 8, 16)

_INT_TYPES = {
    ("char",): (-128, 127), ("signed", "char"): (-128, 127), ("unsigned", "char"): (0, 255),
    ("short",): (-2**15, 2**15 - 1), ("short", "int"): (-2**15, 2**15 - 1), ("signed", "short"): (-2**15, 2**15 - 1),
    ("unsigned", "short"): (0, 2**16 - 1), ("unsigned", "short", "int"): (0, 2**16 - 1),
    ("int",): (-2**31, 2**31 - 1), ("signed",): (-2**31, 2**31 - 1), ("signed", "int"): (-2**31, 2**31 - 1),
    ("unsigned",): (0, 2**32 - 1), ("unsigned", "int"): (0, 2**32 - 1),
    ("long",): (-2**63, 2**63 - 1), ("long", "int"): (-2**63, 2**63 - 1), ("signed", "long"): (-2**63, 2**63 - 1),
    ("unsigned", "long"): (0, 2**64 - 1), ("unsigned", "long", "int"): (0, 2**64 - 1),
    ("long", "long"): (-2**63, 2**63 - 1), ("long", "long", "int"): (-2**63, 2**63 - 1),
    ("signed", "long", "long"): (-2**63, 2**63 - 1),
    ("unsigned", "long", "long"): (0, 2**64 - 1), ("unsigned", "long", "long", "int"): (0, 2**64 - 1),
    ("size_t",): (0, 2**64 - 1), ("_Bool",): (0, 1), ("bool",): (0, 1),
    ("int8_t",): (-128, 127), ("uint8_t",): (0, 255), ("int16_t",): (-2**15, 2**15 - 1), ("uint16_t",): (0, 2**16 - 1),
    ("int32_t",): (-2**31, 2**31 - 1), ("uint32_t",): (0, 2**32 - 1), ("int64_t",): (-2**63, 2**63 - 1),
    ("uint64_t",): (0, 2**64 - 1),
}
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "register"}
_STORAGE = {"static", "inline", "__inline", "__inline__", "extern"}


class Unsupported(ValueError):
    """The task's signature has a parameter or return type the driver cannot build."""


def _ctype(toks: list[str]) -> dict:
    """A parameter or return type (tokens without the name) -> ``{"kind": "int"|"ptr"|"str"|"void",
    "c": C spelling, "lo", "hi"}``.

    Raises:
        Unsupported: anything but void, an integer type, or a pointer/array of one.
    """
    base = [t for t in toks if t not in _QUALIFIERS]
    stars = base.count("*") + base.count("[]")
    base = [t for t in base if t not in ("*", "[]")]
    spelled = " ".join(base)
    if base == ["void"] and stars == 0:
        return {"kind": "void", "c": "void"}
    if tuple(base) not in _INT_TYPES or stars > 1:
        raise Unsupported(f"type {' '.join(toks) or '?'!s} (the driver builds integers and pointers to integers)")
    lo, hi = _INT_TYPES[tuple(base)]
    if stars == 0:
        return {"kind": "int", "c": spelled, "lo": lo, "hi": hi}
    return {"kind": "str" if base == ["char"] else "ptr", "c": spelled, "lo": lo, "hi": hi}


def signature(task) -> tuple[dict, list[tuple[str, dict]]]:
    """The task's function signature, read from the task's own declarator (fixed data).

    Returns:
        ``(return type, [(parameter name, type)])``, types as :func:`_ctype` gives them.

    Raises:
        Unsupported: a type the driver cannot build, variadic or unnamed parameters.
    """
    fdef = find_function(task.code, task.function)
    if fdef is None:
        raise Unsupported(f"no definition of {task.function} in the task's code")
    toks = [t.text for t in tokens(task.code[fdef.start: fdef.body_start]) if t.kind not in ("acsl", "comment")]
    i = toks.index(task.function)
    ret = _ctype([t for t in toks[:i] if t not in _STORAGE])
    inner = toks[i + 2: len(toks) - 1 - toks[::-1].index(")")]
    params: list[tuple[str, dict]] = []
    if inner in ([], ["void"]):
        return ret, params
    groups, cur, depth = [], [], 0
    for t in inner:
        depth += t in "([" and 1 or 0
        depth -= t in ")]" and 1 or 0
        if t == "," and depth == 0:
            groups.append(cur)
            cur = []
        else:
            cur.append(t)
    groups.append(cur)
    for g in groups:
        if "..." in g or "(" in g:
            raise Unsupported(f"parameter {' '.join(g)} (variadic or function pointer)")
        if "[" in g:  # int a[] / int a[N]: a pointer
            name = g[g.index("[") - 1]
            g = g[: g.index("[") - 1] + ["[]"]
        else:
            if not g or not re.match(r"[A-Za-z_]\w*$", g[-1]) or len(g) < 2:
                raise Unsupported(f"parameter {' '.join(g)} (no name)")
            name, g = g[-1], g[:-1]
        params.append((name, _ctype(g)))
    return ret, params


def _clamp(v: int, t: dict) -> int:
    return max(t["lo"], min(t["hi"], v))


def _value(rng: random.Random, t: dict, length: int) -> int:
    r = rng.random()
    if r < 0.3:
        return _clamp(rng.randint(0, length), t)
    if r < 0.5:
        return rng.choice([t["lo"], _clamp(-1, t), 0, 1, t["hi"]])
    if r < 0.8:
        return _clamp(rng.randint(-5, 10), t)
    return rng.randint(t["lo"], t["hi"])


def _element(rng: random.Random, t: dict, profile: str) -> int:
    if t["kind"] == "str":
        return rng.choice([97, 98, 99]) if rng.random() < 0.9 else rng.randint(1, 127)
    if profile == "bits":  # contracts over flags or booleans: every element 0 or 1
        return rng.randint(0, 1)
    if profile == "small":  # contracts bounding every element
        return _clamp(rng.randint(0, 10), t)
    r = rng.random()
    if r < 0.6:
        return _clamp(rng.randint(-5, 10), t)
    if r < 0.75:
        return rng.choice([t["lo"], _clamp(-1, t), 0, 1, t["hi"]])
    return rng.randint(t["lo"], t["hi"])


def draw_inputs(params: list[tuple[str, dict]], seed: int, n: int = N_INPUTS) -> list[dict]:
    """Seeded inputs for the parameters: ``[{"len": buffer length, "args": [int | [int]]}]``.

    The first inputs give every integer parameter the same boundary value of its type
    (min, -1, 0, 1, max) with buffers of 4; then, for each ordered pair of signed integer
    parameters (the first :data:`PAIR_PARAMS` of them), one input with the first at its
    type's min, the second at -1 and the others 0 (``INT_MIN % -1``: undefined in C, and
    Frama-C 25's RTE misses it, ``images/toolchains.json`` soundness_bugs
    ``frama-c:rte-modulo-signed-overflow``); the rest are random (see the module
    docstring). Per input, the buffers' elements follow one profile: all 0/1 (1 in 5),
    all in 0..10 (1 in 5), or mixed small, boundary and uniform values. Buffers of
    ``char *`` end with a NUL. Same seed, same inputs.
    """
    rng = random.Random(seed)
    out = []
    ints = [j for j, (_, t) in enumerate(params) if t["kind"] == "int"]
    # a row per input of the boundary part: one value per int parameter ("lo"/"hi": the type's)
    bounds = [[b] * len(params) for b in ("lo", -1, 0, 1, "hi")] if ints else []
    signed = [j for j in ints if params[j][1]["lo"] < 0][:PAIR_PARAMS]
    for i in signed:
        for j in signed:
            if i != j:
                bounds.append(["lo" if x == i else -1 if x == j else 0 for x in range(len(params))])
    for k in range(n):
        length = 4 if k < len(bounds) else rng.choice(_LENGTHS)
        args: list = []
        first_buf: dict[str, list[int]] = {}
        profile = rng.choice(("bits", "small", "mixed", "mixed", "mixed"))
        for x, (_name, t) in enumerate(params):
            if t["kind"] == "int":
                b = bounds[k][x] if k < len(bounds) else None
                args.append(t[b] if isinstance(b, str) else _clamp(b, t) if b is not None else _value(rng, t, length))
            else:
                if t["c"] in first_buf and rng.random() < 0.4:
                    buf = list(first_buf[t["c"]])
                else:
                    buf = [_element(rng, t, profile) for _ in range(length)]
                if t["kind"] == "str":
                    buf[-1] = 0
                first_buf.setdefault(t["c"], buf)
                args.append(buf)
        out.append({"len": length, "args": args})
    return out


def _lit(v: int, t: dict) -> str:
    if t["lo"] == 0:
        return f"{v}ULL"
    if v == -2**63:
        return "(-9223372036854775807LL - 1)"
    return f"{v}LL"


def harness_c(function: str, ret: dict, params: list[tuple[str, dict]], inputs: list[dict]) -> str:
    """The test driver, included at the end of the file under test (it calls no libc
    function but ``malloc`` and ``printf``: E-ACSL instruments libc contracts at calls).

    ``main(argc, argv)`` runs input ``argv[1]`` (and sets ``vk_mutant`` to ``argv[2]``
    when given), prints one line ``R <return value> | <buffer contents>...`` and exits 0.
    """
    # no #include: a libc header would add declarations to the task's namespace (06_114
    # declares its own abs); the two functions used are declared as the C library has them
    lines = ["/* verikit execution driver (generated by harness/benchmarks/casp/execution.py) */",
             "void *malloc(__SIZE_TYPE__ size);", "int printf(const char *restrict format, ...);", ""]
    n = len(inputs)
    lines.append(f"static const int vk_len[{n}] = {{{', '.join(str(i['len']) for i in inputs)}}};")
    for j, (_name, t) in enumerate(params):
        if t["kind"] == "int":
            vals = ", ".join(_lit(i["args"][j], t) for i in inputs)
            ctype = "unsigned long long" if t["lo"] == 0 else "long long"
            lines.append(f"static const {ctype} vk_p{j}[{n}] = {{{vals}}};")
        else:
            rows = ", ".join("{" + ", ".join(_lit(v, t) for v in i["args"][j]) + "}" for i in inputs)
            ctype = "unsigned long long" if t["lo"] == 0 else "long long"
            lines.append(f"static const {ctype} vk_p{j}[{n}][{MAX_LEN}] = {{{rows}}};")
    lines += ["", "static int vk_num(const char *s) {", "  int v = 0;",
              "  for (; *s >= '0' && *s <= '9'; s++) v = v * 10 + (*s - '0');", "  return v;", "}"]
    lines += ["", "int main(int argc, char **argv) {", "  if (argc < 2) return 2;", "  int vk_i = vk_num(argv[1]);",
              f"  if (vk_i < 0 || vk_i >= {n}) return 2;"]
    lines.append("  if (argc > 2) vk_mutant = vk_num(argv[2]);")
    lines.append("  int vk_n = vk_len[vk_i];")
    args = []
    for j, (_name, t) in enumerate(params):
        if t["kind"] == "int":
            lines.append(f"  {t['c']} vk_a{j} = ({t['c']}) vk_p{j}[vk_i];")
        else:
            lines.append(f"  {t['c']} *vk_a{j} = ({t['c']} *) malloc(sizeof({t['c']}) * (__SIZE_TYPE__) vk_n);")
            lines.append(f"  if (!vk_a{j}) return 2;")
            lines.append(f"  for (int vk_k = 0; vk_k < vk_n; vk_k++) vk_a{j}[vk_k] = ({t['c']}) vk_p{j}[vk_i][vk_k];")
        args.append(f"vk_a{j}")
    call = f"{function}({', '.join(args)})"
    if ret["kind"] == "void":
        lines += [f"  {call};", '  printf("R -");']
    else:
        lines += [f"  {ret['c']} vk_r = {call};", '  printf("R %lld", (long long) vk_r);']
    for j, (_name, t) in enumerate(params):
        if t["kind"] != "int":
            lines.append(f'  printf(" |"); for (int vk_k = 0; vk_k < vk_n; vk_k++) printf(" %lld", (long long) vk_a{j}[vk_k]);')
    lines += ['  printf("\\n");', "  return 0;", "}", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- mutants

_SWAPS = {"+": "-", "-": "+", "*": "+", "/": "*", "%": "/", "<": "<=", "<=": "<", ">": ">=", ">=": ">",
          "==": "!=", "!=": "==", "&&": "||", "||": "&&", "+=": "-=", "-=": "+=", "++": "--", "--": "++"}
_BINARY_PREV = {"ident", "number"}
_KEYWORDS = {"if", "else", "for", "while", "do", "return", "switch", "case", "default", "break", "continue", "goto",
             "int", "char", "short", "long", "unsigned", "signed", "void", "const", "static", "struct", "union",
             "enum", "float", "double", "_Bool", "bool", "size_t", "sizeof"}
_ASSIGN = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "++", "--"}


def _body_tokens(task) -> list:
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
    toks = _body_tokens(task)
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


# --------------------------------------------------------------------------- job files


def job_files(task, mode: str, candidate_c: str, header: str | None, seed: int, *, n_inputs: int = N_INPUTS,
              n_mutants: int = N_MUTANTS) -> tuple[dict[str, str], dict]:
    """The files of the execution cross-check for one job, and what to record.

    Args:
        candidate_c: the verified file (prelude included) as the job verifies it.
        header: spec-from-code: the candidate's text before the function (its contract),
            for the mutants; None in code-from-spec.

    Returns:
        ``(files, plan)``: ``files`` to ship (empty when the signature is unsupported),
        ``plan`` recorded in the job options: ``{"seed", "inputs" (how many drawn),
        "params" ([name, type]: the inputs are re-drawn from them and the seed),
        "mutants": [...without bodies], "not_run": reason or None}``.
    """
    plan: dict = {"seed": seed, "inputs": n_inputs, "mutants": [], "not_run": None}
    try:
        ret, params = signature(task)
    except Unsupported as exc:
        plan["not_run"] = str(exc)
        return {}, plan
    except Exception as exc:  # a task the lexer cannot read: the check is not made, said so
        plan["not_run"] = f"the task's signature cannot be read: {exc}"
        return {}, plan
    plan["params"] = [[name, t] for name, t in params]
    inputs = draw_inputs(params, seed, n_inputs)
    harness = "int vk_mutant;\n" + harness_c(task.function, ret, params, inputs)
    include = f'\n#include "{HARNESS}"\n'
    files = {HARNESS: harness, RUN: candidate_c + include, GOLD: task.gold + "\n" + task.suffix + include}
    muts: list[dict] = []
    if header is not None and n_mutants:
        toks = _body_tokens(task)
        if not any(t.text == "goto" for t in toks):
            original, muts = mutants(task, seed, n_mutants)
            if muts:
                inc_m = "\n#include \"vk_exec_harness_m.h\"\n"
                files[MUT] = mutant_file(task, header, original, muts).replace(include, inc_m)
                # the task's own contract over the same mutants: the reference a candidate is held to
                files[MUT_GOLD] = mutant_file(task, task.contract, original, muts).replace(include, inc_m)
                files["vk_exec_harness_m.h"] = harness_c(task.function, ret, params, inputs)
    plan["mutants"] = [{k: v for k, v in m.items() if k != "body"} for m in muts]
    files[CONF] = (f"VK_TARGET={task.function}\nVK_N={len(inputs)}\nVK_M={len(muts)}\nVK_TIMEOUT={RUN_TIMEOUT_S}\n")
    return files, plan


# --------------------------------------------------------------------------- verdict

_ERR = re.compile(r"^\S+:\d+: Error: (\w[\w ]*?) failed:")
_FCT = re.compile(r"In function '([^']+)'")


def parse_log(text: str) -> dict:
    """Read the driver's log (``vk_exec.log``).

    Returns:
        ``{"builds": {name: {"ok", "messages"}}, "runs": {(build, mutant, input): {"rc",
        "out", "err"}}, "unchecked": [E-ACSL warnings], "info": {"compilers", "flags"},
        "slow": inputs on which the task's gold times out too (discarded)}``.
    """
    builds: dict = {}
    runs: dict = {}
    unchecked: list[str] = []
    slow: set[int] = set()
    info: dict = {}
    cur = None
    for line in text.splitlines():
        if line.startswith("build "):
            parts = line.split(" ", 2)
            cur = builds.setdefault(parts[1], {"ok": parts[2].startswith("ok"), "messages": []}) if len(parts) > 2 else None
            run = None
        elif line.startswith("| ") and cur is not None:
            cur["messages"].append(line[2:])
        elif line.startswith("unchecked "):
            unchecked.append(line[len("unchecked "):])
        elif line.startswith("slow "):
            slow.add(int(line.split()[1]))
        elif line.startswith("info "):
            k, _, v = line[5:].partition(" ")
            info[k] = v
        elif line.startswith("@ "):
            p = line.split()
            if len(p) == 5:
                run = runs[(p[1], int(p[2]), int(p[3]))] = {"rc": int(p[4]), "out": "", "err": []}
                cur = None
        elif line.startswith("> ") and runs and run is not None:
            run["out"] = line[2:]
        elif line.startswith("! ") and runs and run is not None:
            run["err"].append(line[2:])
    return {"builds": builds, "runs": runs, "unchecked": unchecked, "info": info, "slow": slow}


def _first_error(err: list[str]) -> tuple[str | None, str | None]:
    """(kind of the first E-ACSL failure, its function) or (None, None)."""
    fct = None
    for line in err:
        m = _FCT.search(line)
        if m:
            fct = m.group(1)
        m = _ERR.match(line)
        if m:
            return m.group(1), fct
    return None, None


def _describe(inp: dict | None, params) -> str:
    if inp is None:
        return "?"
    parts = []
    for (name, _t), v in zip(params, inp["args"]):
        parts.append(f"{name}={v}" if not isinstance(v, list) else f"{name}=[{', '.join(map(str, v))}]")
    return ", ".join(parts)


def _why(run: dict) -> str:
    rc = run["rc"]
    text = " ".join(e.strip() for e in run["err"][:4])
    if rc == 124:
        return "timeout"
    for pat in ("runtime error: ", "ERROR: AddressSanitizer: ", "Error: "):
        i = text.find(pat)
        if i >= 0:
            return text[i: i + 200]
    return f"exit status {rc}" + (f" (signal {rc - 128})" if rc > 128 else "")


def verdict(function: str, plan: dict, log: str | None) -> tuple[dict, dict | None, tuple[str, str] | None]:
    """The cross-check's finding from the driver's log.

    Returns:
        ``(execution, strength, decision)``: ``execution`` for ``verifier.extra`` (status
        ``passed`` | ``refuted`` | ``not-run``, ``builds``, ``seed``, ``drawn``,
        ``satisfying``, ``runs``, ``unchecked``, ``reason``); ``strength`` (spec-from-code
        with mutants: ``{"mutants", "changed" (a different output on an input, or killed),
        "crashed" (only crashes or timeouts: the contract cannot be asked about them, not
        counted), "killed", "score" = killed / changed, "seed", "survivors", "gold_killed"
        (mutants the task's own contract rejects; None when not run: it runs only when the
        candidate kills none)}``, ``rejected`` as
        vacuous only when the candidate kills none of the behaviour-changing mutants while
        the task's contract kills at least one,
        else None); ``decision``: ``("rejected", reason)`` or None.
    """
    ex: dict = {"status": "not-run", "seed": plan.get("seed"), "drawn": plan.get("inputs"), "satisfying": 0, "runs": 0}
    if plan.get("not_run"):
        ex["reason"] = plan["not_run"]
        return ex, None, None
    if log is None:
        ex["reason"] = "the driver wrote no log (the job stopped before the cross-check)"
        return ex, None, None
    data = parse_log(log)
    builds, runs = data["builds"], data["runs"]
    ex["builds"] = {k: ("ok" if v["ok"] else "failed") for k, v in builds.items()}
    ex["compilers"] = data["info"].get("compilers", "").split()
    ex["flags"] = data["info"].get("flags", "")
    ex["unchecked"] = data["unchecked"][:20]
    ex["runs"] = len(runs)
    if data["info"].get("missing"):
        ex["reason"] = f"the sandbox has no {data['info']['missing']}: the check was not made"
        return ex, None, None
    params = [(name, t) for name, t in plan.get("params", [])]
    inputs = draw_inputs(params, plan["seed"], plan["inputs"])

    def inp(i):
        return _describe(inputs[i] if i < len(inputs) else None, params)

    ea = builds.get("ea")
    if ea is None or not ea["ok"]:
        gold = builds.get("gold-ea")
        msg = "; ".join((ea or {}).get("messages", [])[:3])
        if gold is not None and gold["ok"]:
            ex["status"] = "refuted"
            ex["reason"] = f"the verified file does not build with E-ACSL + gcc while the task's gold does: {msg}"
            return ex, None, ("rejected", f"execution cross-check: {ex['reason']}")
        ex["reason"] = f"the task itself does not build for execution: {msg or 'no build'}"
        return ex, None, None
    satisfying = []
    for i in range(plan["inputs"]):
        r = runs.get(("ea", 0, i))
        if r is None or i in data["slow"]:  # slow: the task's gold times out on it too
            continue
        kind, fct = _first_error(r["err"])
        if r["rc"] == 0 and kind is None:
            satisfying.append(i)
            continue
        if kind == "Precondition" and fct == function:
            continue  # the drawn input does not satisfy the requires: discarded
        ex["satisfying"] = len(satisfying) + 1
        ex["status"] = "refuted"
        ex["reason"] = f"input {i} ({inp(i)}): E-ACSL build (gcc -O0): {_why(r)}" + (f" in {fct}" if fct else "")
        return ex, None, ("rejected", f"execution cross-check: {ex['reason']}")
    ex["satisfying"] = len(satisfying)
    for name, b in builds.items():
        if name in ("ea", "gold-ea", "gold") or name.startswith("mut") or name.startswith("gold-"):
            continue
        if not b["ok"]:
            gold_ok = builds.get(f"gold-{name}", {}).get("ok")
            if gold_ok:
                ex["status"] = "refuted"
                ex["reason"] = f"{name}: the verified file does not compile while the task's gold does: " \
                               + "; ".join(b["messages"][:2])
                return ex, None, ("rejected", f"execution cross-check: {ex['reason']}")
            continue
        for i in satisfying:
            r = runs.get((name, 0, i))
            if r is None:
                continue
            if r["rc"] != 0:
                ex["status"] = "refuted"
                ex["reason"] = f"input {i} ({inp(i)}): {name} -fsanitize=undefined,address: {_why(r)}"
                return ex, None, ("rejected", f"execution cross-check: {ex['reason']}")
            base = runs[("ea", 0, i)]["out"]
            if r["out"] != base:
                ex["status"] = "refuted"
                ex["reason"] = f"input {i} ({inp(i)}): builds disagree: ea (gcc -O0 E-ACSL) printed {base!r}, " \
                               f"{name} printed {r['out']!r}"
                return ex, None, ("rejected", f"execution cross-check: {ex['reason']}")
    if not satisfying:
        ex["reason"] = f"none of the {plan['inputs']} drawn inputs satisfies the requires (checked by E-ACSL)"
        return ex, None, None
    ex["status"] = "passed"
    used = [b for b, v in builds.items() if v["ok"] and not b.startswith(("gold", "mut"))]
    ex["reason"] = f"{len(satisfying)} input(s) satisfying the requires ran on {len(used)} build(s) " \
                   f"({', '.join(used)}) without a contract violation, a sanitizer report, a crash, a timeout or a disagreement"
    strength, decision = _strength(plan, builds, runs, satisfying)
    return ex, strength, decision


def _strength(plan: dict, builds: dict, runs: dict, satisfying: list[int]) -> tuple[dict | None, tuple | None]:
    muts = plan.get("mutants") or []
    if not muts:
        return None, None
    st: dict = {"mutants": len(muts), "changed": 0, "crashed": 0, "killed": 0, "score": None, "seed": plan["seed"],
                "survivors": []}
    if "mut" not in builds or not builds["mut"]["ok"]:
        st["not_run"] = "the mutant build failed: " + "; ".join(builds.get("mut", {}).get("messages", [])[:2])
        return st, None
    for m in muts:
        killed = changed = crashed = False
        for i in satisfying:
            base = runs.get(("mut", 0, i))
            r = runs.get(("mut", m["id"], i))
            if r is None or base is None:
                continue
            kind, _fct = _first_error(r["err"])
            if kind is not None and kind != "Precondition":
                killed = changed = True
                break
            if r["rc"] == 0 and base["rc"] == 0 and r["out"] != base["out"]:
                changed = True
            elif r["rc"] != 0:
                crashed = True
        st["changed"] += changed
        st["crashed"] += crashed and not changed
        st["killed"] += killed
        if changed and not killed:
            st["survivors"].append({k: m[k] for k in ("id", "kind", "token", "to")})
    st["score"] = round(st["killed"] / st["changed"], 3) if st["changed"] else None
    # the task's own contract on the same mutants (all drawn inputs, its own requires)
    st["gold_killed"] = None
    if builds.get("mutg", {}).get("ok"):
        st["gold_killed"] = sum(
            any((_first_error(r["err"])[0] or "Precondition") != "Precondition"
                for (b, mm, _i), r in runs.items() if b == "mutg" and mm == m["id"])
            for m in muts)
    if st["changed"] and not st["killed"] and st["gold_killed"]:
        return st, ("rejected", f"vacuous by execution: the contract rejects none of the {st['changed']} mutant(s) of the "
                                f"task's body that change its behaviour on the drawn inputs, while the task's own contract "
                                f"rejects {st['gold_killed']} of the {len(muts)} (seed {plan['seed']})")
    return st, None


def report_notes(records: list[dict]) -> list[str]:
    """Report lines: per candidate mode the execution statuses, and (spec-from-code) the
    mean spec strength per model (canaries left out), beside the verified rate."""
    out = []
    for mode in ("code-from-spec", "spec-from-code"):
        recs = [r for r in records if r["mode"] == mode and not r["candidate"]["model"].startswith("canary:")]
        counts: dict[str, int] = {}
        for r in recs:
            status = (r["verifier"].get("extra", {}).get("execution") or {}).get("status", "not-run (decided before)")
            counts[status] = counts.get(status, 0) + 1
        if recs:
            out.append(f"{mode}: execution cross-check {', '.join(f'{k} {v}' for k, v in sorted(counts.items()))} "
                       f"(docs/casp.md 'Execution cross-check')")
    by_model: dict[str, list[float]] = {}
    for r in records:
        st = r["verifier"].get("extra", {}).get("strength")
        if r["mode"] == "spec-from-code" and st and st.get("score") is not None \
                and not r["candidate"]["model"].startswith("canary:"):
            by_model.setdefault(r["candidate"]["model"], []).append(st["score"])
    for model, scores in sorted(by_model.items()):
        out.append(f"spec-from-code: spec strength of {model}: mean {sum(scores) / len(scores):.2f} over {len(scores)} "
                   f"candidate(s) (share of behaviour-changing mutants of the task's body the contract rejects at run time)")
    return out
