"""Derive CASP's allow-list of libc callees from Frama-C's own libc, and check that the
constants of its headers agree with this platform's.

    python scripts/casp_libc.py            # writes harness/benchmarks/casp/libc_callees.json
    python scripts/casp_libc.py --check    # exit 1 when the committed file differs

A CASP candidate may call a libc function that the task's own includes declare when
WP's proof about the call means something for the compiled program: Frama-C's libc gives
the function a contract (WP assumes it at the call), and nothing about the function
lies outside what that contract frames. Read from Frama-C's own AST
(``scripts/casp_libc.ml`` loaded into a parse of a file that includes :data:`HEADERS`),
a function is allowed when

- it has a contract whose default behavior has an ``assigns`` clause (a frame: without
  one, WP assumes the call may write anything) and no behavior allocates or frees;
- it returns (no ``noreturn``, ``exits`` or ``ensures \\false``: ``exit``, ``abort`` and
  ``_Exit`` are allowed apart, judged by the termination rule);
- it assigns no hidden state (Frama-C's libc models ``errno``, the heap, the random
  seed, ``strtok``'s position or a stream as globals named ``__fc_*``: the candidate's
  contract never mentions them, and the compiled program's libc keeps its own), and,
  by the C standard's description, reads none that its contract does not frame
  (:data:`OUTSIDE_STATE`: the environment, files, processes, the locale);
- it is not variadic and takes no function pointer (the callback would be an indirect
  call, which the termination rule refuses);
- its contract is not a known soundness bug of the pinned Frama-C
  (``images/toolchains.json``, ``framac`` ``soundness_bugs`` with an id
  ``frama-c:libc-<function>-...``).

The constants: every object-like macro that both Frama-C's headers (preprocessed as
Frama-C runs gcc: ``-nostdinc -I<share>/libc -D__FRAMAC__ -D__FC_MACHDEP_X86_64 -m64``)
and the platform's define, whose value is an arithmetic constant in both, is compiled and
printed with each set of headers and the values compared; a macro that disagrees is
listed under ``constants.disagree`` (a proof about Frama-C's value says nothing about the
program gcc builds). Both need ``frama-c`` and ``gcc`` on this host.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "harness" / "benchmarks" / "casp" / "libc_callees.json"
#: The headers whose functions are classified: the C standard library's that Frama-C's libc
#: provides and a C function task may include.
HEADERS = ("ctype.h", "inttypes.h", "limits.h", "math.h", "stdbool.h", "stddef.h", "stdint.h", "stdlib.h", "string.h")
#: Functions of those headers whose result or effect depends on state outside the memory
#: their parameters designate, which Frama-C's contract does not frame (read from the C
#: standard's description of each, C11 7.22 and 7.24): the environment, processes, files,
#: the random generator, the locale's multibyte state, a static buffer.
OUTSIDE_STATE = {"getenv": "the environment", "setenv": "the environment", "unsetenv": "the environment",
                 "putenv": "the environment", "system": "runs a process", "mkstemp": "creates a file",
                 "mkstemps": "creates a file", "random": "the random generator's state",
                 "mbstowcs": "the locale's multibyte state", "wcstombs": "the locale's multibyte state",
                 "mblen": "the locale's multibyte state", "mbtowc": "the locale's multibyte state",
                 "wctomb": "the locale's multibyte state", "strcoll": "the locale's collation",
                 "strxfrm": "the locale's collation", "strerror": "a static buffer", "strsignal": "a static buffer"}
#: The standard typedefs of those headers (C11 7.19, 7.20), compared by size and signedness.
TYPEDEFS = ("size_t", "ptrdiff_t", "wchar_t", "intmax_t", "uintmax_t", "intptr_t", "uintptr_t",
            *(f"{u}int{k}{n}_t" for u in ("", "u") for k in ("", "_least", "_fast") for n in (8, 16, 32, 64)))
#: Never-returning functions the termination rule judges (a call to one makes the candidate
#: ``failed``): allowed apart.
NEVER_RETURN = ("_Exit", "abort", "exit")
#: Frama-C's libc names its hidden state (errno, the heap, the random seed, strtok's
#: position, streams...) ``__fc_*``: an identifier of that form in an assigns clause.
_STATE = re.compile(r"\b__fc_\w+|\b__FC_\w+")


def _framac_share() -> str:
    return subprocess.run(["frama-c", "-print-share-path"], capture_output=True, text=True, check=True).stdout.strip()


def contracts(work: Path) -> dict:
    """Frama-C's libc functions declared by :data:`HEADERS`, with their contracts
    (``scripts/casp_libc.ml``'s JSON)."""
    probe = work / "probe.c"
    probe.write_text("".join(f"#include <{h}>\n" for h in HEADERS) + "int vk_probe(void) { return 0; }\n")
    out = work / "libc.json"
    got = subprocess.run(["frama-c", "-load-script", str(ROOT / "scripts" / "casp_libc.ml"), str(probe)],
                         env={"VERIKIT_LIBC": str(out), "PATH": "/usr/bin:/bin:/usr/local/bin"},
                         capture_output=True, text=True, cwd=work)
    if not out.exists():
        sys.exit(f"frama-c wrote no contracts (exit {got.returncode}): {got.stderr[-2000:]}")
    return json.loads(out.read_text())


def _buggy() -> dict[str, str]:
    """libc functions whose Frama-C contract is a known soundness bug: name -> bug id."""
    tcs = json.loads((ROOT / "images" / "toolchains.json").read_text())["toolchains"]
    out = {}
    for bug in tcs["framac"].get("soundness_bugs", []):
        m = re.match(r"frama-c:libc-([A-Za-z_]\w*?)-", bug["id"])
        if m:
            out[m.group(1)] = bug["id"]
    return out


def classify(f: dict, buggy: dict[str, str]) -> str | None:
    """None when ``f`` (a function of :func:`contracts`) may be called; else why not."""
    name = f["name"]
    if name.startswith("_") or name in NEVER_RETURN:
        return "reserved or never returns (judged apart)" if name in NEVER_RETURN else "a reserved name"
    if name in OUTSIDE_STATE:
        return f"uses state outside its parameters ({OUTSIDE_STATE[name]})"
    if name in buggy:
        return f"its contract is a known soundness bug of the pinned Frama-C ({buggy[name]})"
    if f["variadic"]:
        return "variadic"
    if "(*" in f["type"]:
        return "takes a function pointer (an indirect call)"
    if not f["contract"]:
        return "no contract in Frama-C's libc"
    if f["noreturn"] or any(b["exits"] or b["ensures_false"] for b in f["behaviors"]):
        return "may not return"
    default = [b for b in f["behaviors"] if b["assumes"] == 0 and b["assigns"] is not None]
    if not default:
        return "no assigns clause (WP would assume it writes anything)"
    if any(b["allocation"] for b in f["behaviors"]):
        return "allocates or frees memory"
    for b in f["behaviors"]:
        state = set(_STATE.findall(b["assigns"] or ""))
        if state:
            return f"assigns hidden state ({', '.join(sorted(state))})"
    return None


_MACRO = re.compile(r"^#define ([A-Za-z]\w*) ", re.M)


def _macros(flags: list[str], work: Path) -> set[str]:
    probe = work / "m.c"
    probe.write_text("".join(f"#include <{h}>\n" for h in HEADERS))
    out = subprocess.run(["gcc", "-E", "-dM", *flags, str(probe)], capture_output=True, text=True, check=True).stdout
    return set(_MACRO.findall(out))


def _values(names: list[str], flags: list[str], work: Path) -> dict[str, str]:
    """Each macro's value printed by a program compiled with ``flags``' headers; macros whose
    expansion is not an arithmetic constant there are left out."""
    names = list(names)
    for _ in range(20):  # drop the macros that do not compile as arithmetic values, then run
        src = work / "v.c"
        lines = ["#include <" + h + ">" for h in HEADERS]
        lines += [f"static const long double vk_{i} = (long double)({n});" for i, n in enumerate(names)]
        src.write_text("\n".join(lines) + "\n")
        pre = subprocess.run(["gcc", "-E", "-P", *flags, str(src)], capture_output=True, text=True)
        text = pre.stdout if pre.returncode == 0 else ""
        if not text:
            return {}
        body = [ln for ln in text.splitlines() if ln.startswith("static const long double vk_")]
        prog = work / "p.c"
        prog.write_text("int printf(const char *, ...);\n" + "\n".join(body) + "\nint main(void) {\n"
                        + "".join(f'  printf("%d %.21Lg\\n", {i}, vk_{i});\n' for i in range(len(names))) + "  return 0;\n}\n")
        cc = subprocess.run(["gcc", "-w", "-o", str(work / "p"), str(prog)], capture_output=True, text=True)
        if cc.returncode == 0:
            run = subprocess.run([str(work / "p")], capture_output=True, text=True, check=True).stdout
            return {names[int(i)]: v for i, v in (ln.split(" ", 1) for ln in run.splitlines())}
        bad = {int(m.group(1)) for m in re.finditer(r"vk_(\d+)", cc.stderr)}
        bad |= {int(m.group(1)) - 2 for m in re.finditer(r"p\.c:(\d+):", cc.stderr)}
        keep = [n for i, n in enumerate(names) if i not in bad]
        if len(keep) == len(names):
            return {}
        names = keep
    return {}


def _types(flags: list[str], work: Path) -> dict[str, str]:
    """Each of :data:`TYPEDEFS`: ``"<bytes> signed|unsigned"`` with ``flags``' headers."""
    src = work / "t.c"
    src.write_text("".join(f"#include <{h}>\n" for h in HEADERS) + "int printf(const char *, ...);\nint main(void) {\n"
                   + "".join(f'  printf("{t} %zu %s\\n", sizeof({t}), ({t})-1 < 0 ? "signed" : "unsigned");\n'
                             for t in TYPEDEFS) + "  return 0;\n}\n")
    pre = subprocess.run(["gcc", "-E", "-P", *flags, str(src)], capture_output=True, text=True, check=True).stdout
    (work / "t.i").write_text(pre)
    # Frama-C's headers define objects that reference its own runtime (unused here): left unresolved
    subprocess.run(["gcc", "-w", "-x", "c", "-Wl,--unresolved-symbols=ignore-all", "-o", str(work / "t"), str(work / "t.i")],
                   check=True)
    run = subprocess.run([str(work / "t")], capture_output=True, text=True, check=True).stdout
    return {t: v for t, v in (ln.split(" ", 1) for ln in run.splitlines())}


def constants(work: Path) -> dict:
    """``{"compared", "disagree": {macro: [frama_c, platform]}, "types_compared",
    "types_disagree": {typedef: [frama_c, platform]}}``."""
    share = _framac_share()
    fc = ["-nostdinc", f"-I{share}/libc", "-D__FRAMAC__", "-D__FC_MACHDEP_X86_64", "-m64"]
    common = sorted(n for n in _macros(fc, work) & _macros([], work) if not n.startswith("_"))
    a, b = _values(common, fc, work), _values(common, [], work)
    both = sorted(set(a) & set(b))
    ta, tb = _types(fc, work), _types([], work)
    return {"compared": len(both), "disagree": {n: [a[n], b[n]] for n in both if a[n] != b[n]},
            "types_compared": len(TYPEDEFS), "types_disagree": {t: [ta[t], tb[t]] for t in TYPEDEFS if ta[t] != tb[t]}}


def derive() -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = contracts(work)
        buggy = _buggy()
        allowed, refused = {}, {}
        for f in data["functions"]:
            why = classify(f, buggy)
            if why is None:
                allowed[f["name"]] = f["header"]
            elif not f["name"].startswith("_"):
                refused[f["name"]] = why
        return {"frama_c": data["frama_c"], "headers": list(HEADERS), "derived_by": "python scripts/casp_libc.py",
                "never_return": list(NEVER_RETURN), "allowed": dict(sorted(allowed.items())),
                "refused": dict(sorted(refused.items())), "constants": constants(work)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the committed file differs from the derivation")
    args = ap.parse_args(argv)
    got = derive()
    text = json.dumps(got, indent=1, sort_keys=True) + "\n"
    if args.check:
        same = OUT.exists() and OUT.read_text() == text
        print(f"{OUT.relative_to(ROOT)}: {'as derived' if same else 'differs from the derivation'} "
              f"({len(got['allowed'])} allowed, {len(got['refused'])} refused, "
              f"{got['constants']['compared']} constants compared, {len(got['constants']['disagree'])} disagree)")
        return 0 if same else 1
    OUT.write_text(text)
    print(f"{OUT.relative_to(ROOT)}: {len(got['allowed'])} allowed, {len(got['refused'])} refused; "
          f"{got['constants']['compared']} constants compared, {len(got['constants']['disagree'])} disagree, "
          f"{len(got['constants']['types_disagree'])} of {got['constants']['types_compared']} typedefs disagree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
