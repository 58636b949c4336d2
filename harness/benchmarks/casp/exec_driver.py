"""The test driver of the CASP execution cross-check (:mod:`.execution`): its file names and
bounds, the task's signature read from the task's own declarator (:func:`signature`),
the seeded inputs (:func:`draw_inputs`) and the C driver that runs one of them
(:func:`harness_c`)."""

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
#: At most this many values taken from the code's own constants get an input each
#: (:func:`directed_values`).
MAX_DIRECTED = 20
_NUMBER = re.compile(r"\b(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)[uUlL]*\b")
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


def directed_values(text: str, limit: int = MAX_DIRECTED) -> list[int]:
    """Values aimed at the branches of ``text`` (C code and its ACSL): for each integer
    constant ``c`` written in it (decimal, octal or hex, suffixes aside), ``c - 1``, ``c``,
    ``c + 1`` and ``-c``, without -1, 0 and 1 (the boundary inputs have them), the largest
    constants first, at most ``limit``. A branch ``x > 100`` or ``x == 12345`` gets inputs
    on both sides of its condition, which random inputs almost never draw."""
    consts = set()
    for t in tokens(text):
        if t.kind not in ("number", "acsl"):  # code constants, and those inside annotations
            continue
        for m in _NUMBER.finditer(t.text):
            digits = m.group(1)
            consts.add(int(digits, 8) if len(digits) > 1 and digits[0] == "0" and digits[1] not in "xX"
                       else int(digits, 0))
    out: list[int] = []
    for c in sorted(consts, reverse=True):  # the largest first: a magic constant is what random inputs miss
        out += [v for v in (c, c - 1, c + 1, -c) if v not in (-1, 0, 1) and v not in out]
    return out[:limit]


def draw_inputs(params: list[tuple[str, dict]], seed: int, n: int = N_INPUTS, directed=()) -> list[dict]:
    """Seeded inputs for the parameters: ``[{"len": buffer length, "args": [int | [int]]}]``.

    The first inputs give every integer parameter the same boundary value of its type
    (min, -1, 0, 1, max) with buffers of 4; then, for each ordered pair of signed integer
    parameters (the first :data:`PAIR_PARAMS` of them), one input with the first at its
    type's min, the second at -1 and the others 0 (``INT_MIN % -1``: undefined in C, and
    Frama-C 25's RTE misses it, ``images/toolchains.json`` soundness_bugs
    ``frama-c:rte-modulo-signed-overflow``); then one input per value of ``directed``
    (:func:`directed_values` of the code: every integer parameter at that value, clamped
    to its type); the rest are random (see the docstring
    of :mod:`.execution`). Per input, the buffers' elements follow one profile: all 0/1 (1 in 5),
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
    if ints:
        bounds += [[v] * len(params) for v in directed]
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


def harness_c(function: str, ret: dict, params: list[tuple[str, dict]], inputs: list[dict],
              timeout_s: int = RUN_TIMEOUT_S) -> str:
    """The test driver, included at the end of the file under test.

    One process runs every input it is given, each in a forked child (the fork-server idea of
    AFL: the binary, its sanitizer runtime or E-ACSL's shadow memory start once; each input
    still starts from the program's initial state, so a global one input changes cannot
    change the next one's result). ``main(argc, argv)``: ``argv[1]`` the mutant
    (``vk_mutant``), ``argv[2]`` when to stop (``n`` never, ``t`` after a timeout, ``e``
    after a timeout or an E-ACSL failure, exit status 4, ``f`` after any failure), then the
    input indices to run, in order. Per input: the child, under ``alarm(timeout_s)``,
    prints one line ``R <return value> | <buffer contents>...`` on stdout; the parent writes
    ``= <input>`` on stderr before the child starts (so what the child prints there is
    attributed to it) and ``= <input> <status>`` on stdout after it ended (the exit status;
    124 when the alarm ended it, 128 + the signal for another signal).

    It declares the few C library functions it calls (``malloc``, ``write``, ``fork``,
    ``waitpid``, ``alarm``, ``_exit``) as glibc and Frama-C's libc declare them, and
    includes no header: a header would add declarations to the task's namespace (06_114
    declares its own ``abs``). E-ACSL translates only the annotations of the verified
    file's own functions (``-e-acsl-functions``, never the driver's), so none of these calls
    is checked against a libc contract.
    """
    lines = ["/* verikit execution driver (generated by harness/benchmarks/casp/exec_driver.py) */",
             "void *malloc(__SIZE_TYPE__ size);", "long write(int fd, const void *buf, __SIZE_TYPE__ count);",
             "int fork(void);", "int waitpid(int pid, int *status, int options);",
             "unsigned int alarm(unsigned int seconds);", "void _exit(int status);", ""]
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
    lines += ["", "static char vk_buf[2048];", "static int vk_pos;",
              "static void vk_ch(char c) { if (vk_pos < 2047) vk_buf[vk_pos++] = c; }",
              "static void vk_str(const char *s) { for (; *s; s++) vk_ch(*s); }",
              "static void vk_ll(long long v) {",
              "  char t[24]; int k = 0;",
              "  unsigned long long u = v < 0 ? 0ULL - (unsigned long long) v : (unsigned long long) v;",
              "  do { t[k++] = (char) ('0' + (int) (u % 10)); u /= 10; } while (u);",
              "  if (v < 0) vk_ch('-');",
              "  while (k) vk_ch(t[--k]);",
              "}",
              "static void vk_put(int fd) { int k = 0; while (k < vk_pos) { long w = write(fd, vk_buf + k, "
              "(__SIZE_TYPE__) (vk_pos - k)); if (w <= 0) break; k += (int) w; } vk_pos = 0; }",
              "static int vk_num(const char *s) {", "  int v = 0;",
              "  for (; *s >= '0' && *s <= '9'; s++) v = v * 10 + (*s - '0');", "  return v;", "}",
              "", "static int vk_run(int vk_i) {", "  int vk_n = vk_len[vk_i];"]
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
        lines += [f"  {call};", '  vk_str("R -");']
    else:
        lines += [f"  {ret['c']} vk_r = {call};", '  vk_str("R "); vk_ll((long long) vk_r);']
    for j, (_name, t) in enumerate(params):
        if t["kind"] != "int":
            lines.append(f'  vk_str(" |"); for (int vk_k = 0; vk_k < vk_n; vk_k++) {{ vk_ch(\' \'); '
                         f'vk_ll((long long) vk_a{j}[vk_k]); }}')
    lines += ["  vk_ch('\\n'); vk_put(1);", "  return 0;", "}", ""]
    lines += ["int main(int argc, char **argv) {", "  if (argc < 3) return 2;", "  vk_mutant = vk_num(argv[1]);",
              "  char vk_stop = argv[2][0];",
              "  for (int vk_a = 3; vk_a < argc; vk_a++) {",
              "    int vk_i = vk_num(argv[vk_a]);",
              f"    if (vk_i < 0 || vk_i >= {n}) return 2;",
              '    vk_str("= "); vk_ll(vk_i); vk_ch(\'\\n\'); vk_put(2);',
              "    int vk_pid = fork();",
              "    if (vk_pid < 0) return 3;",
              f"    if (vk_pid == 0) {{ alarm({int(timeout_s)}u); _exit(vk_run(vk_i)); }}",
              "    int vk_st = 0;",
              "    if (waitpid(vk_pid, &vk_st, 0) != vk_pid) return 3;",
              "    int vk_sig = vk_st & 0x7f;",
              "    int vk_rc = vk_sig == 14 ? 124 : vk_sig ? 128 + vk_sig : (vk_st >> 8) & 0xff;",
              '    vk_str("= "); vk_ll(vk_i); vk_ch(\' \'); vk_ll(vk_rc); vk_ch(\'\\n\'); vk_put(1);',
              "    if ((vk_rc == 124 && vk_stop != 'n') || (vk_rc == 4 && vk_stop == 'e') || (vk_rc && vk_stop == 'f'))",
              "      break;",
              "  }", "  return 0;", "}", ""]
    return "\n".join(lines)
