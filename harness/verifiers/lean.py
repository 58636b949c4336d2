"""Lean 4 proof checker (``lake env lean``), with Lean's own assumption report.

Command line, run in the job's scratch directory of the ``ntp4vc-lean`` image (Lean 4.21.0 +
Mathlib v4.21.0, the benchmark's Lake workspace prebuilt in the image; its directory is
the job's ``lean_project`` option, set by the benchmark)::

    lake -d <lean_project> env lean [-DmaxHeartbeats=N] Candidate.lean

``Candidate.lean`` is the task file with the candidate proof in place of its ``sorry``
(:meth:`Lean.splice`), followed by ``#print axioms <Namespace>.<theorem>``.

The cwd / LEAN_PATH story. The task files import Mathlib, ``Why3.*`` (the Why3 standard
library translated to Lean, ``generation/lean`` of the NTP4VC repository) and modules
named after their place under ``data/why3`` (``pearl.imp.lib.lean.imp.Syntax``,
``frama_c.<project>.<file>.lib.lean.<Module>.<Module>``). The NTP4VC README builds tasks
with ``cd data/why3 && lake build ./pearl/...``, so the image holds that Lake workspace at
``lean_project`` with every module the 600 tasks import already built (``lake build``
at image-build time; the job has no network and a read-only view of it). ``lake -d DIR``
("use the package configuration in a specific directory", lean4 ``src/lake/Lake/CLI/
Help.lean``) lets the job stay in its own scratch directory: ``lake env`` starts ``lean``
in the caller's working directory with ``LEAN_PATH`` = the workspace's build directories
followed by any inherited ``LEAN_PATH`` (``Workspace.augmentedLeanPath``, lean4
``src/lake/Lake/Config/Workspace.lean``), so the spliced file is checked in place, where
its ``import`` lines resolve to the prebuilt ``.olean`` files. The file's own module name
is irrelevant (nothing imports it). ``HOME`` is the job directory; Lean and Lake are on the
image's ``PATH`` (no elan at job time).

Output formats parsed, and where each is known from:

- Diagnostics: ``FILE:LINE:COL: error: MSG`` (``warning``), optionally with an end
  position ``LINE:COL-LINE:COL`` and, in newer Lean, an error name ``error(name):``;
  continuation lines follow. Source: ``mkErrorStringWithPos``/``SerialMessage.toString``
  in lean4 ``src/Lean/Message.lean``; recorded real outputs: lean4
  ``tests/lean/sanitychecks.lean.expected.out`` and ``tests/lean/1007.lean.expected.out``
  (tests/recorded/lean/).
- ``#print axioms``: ``'NAME' depends on axioms: [A, B, ...]`` or ``'NAME' does not depend
  on any axioms`` (``printAxiomsOf`` in lean4 ``src/Lean/Elab/Print.lean``); information
  messages are printed without position prefix (``SerialMessage.toString``). The list is a
  ``MessageData.ofList``, which may wrap after ``,`` onto lines starting with a space
  (``Message.lean``); the parser reads up to the closing ``]``. Recorded real messages:
  the Lean reference manual's checked ``leanOutput`` blocks (``Manual/Axioms.lean``), lean4
  ``tests/lean/run/collectAxioms.lean``, and a ``lake env lean`` transcript from a GitHub
  PR comment (tests/recorded/lean/). A wrapped (multi-line) list is handled but not
  covered by a recorded output.
- ``declaration uses 'sorry'`` warnings (Lean 4.21 spelling; newer Lean quotes ``sorry``
  with backquotes, also accepted): recorded in ``1007.lean.expected.out``. They make the
  run ``rejected`` even if the axiom report misses ``sorryAx`` (that happened:
  lean-ja/lean-by-example issue #1802).

Sources (URLs): https://github.com/leanprover/lean4/blob/master/src/Lean/Message.lean,
https://github.com/leanprover/lean4/blob/master/src/Lean/Elab/Print.lean,
https://github.com/leanprover/lean4/tree/master/tests/lean (``*.expected.out``),
https://lean-lang.org/doc/reference/latest/ (chapter "Axioms", source
https://github.com/leanprover/reference-manual/blob/main/Manual/Axioms.lean),
https://github.com/leanprover/lean4/blob/master/src/lake/Lake/CLI/Help.lean.

Untested here (no Lean on this machine): the exact ``lake`` error text when the image's
workspace is broken (treated as ``infra_error`` by pattern, see :data:`_INFRA`), and a
wrapped axiom list.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import ProcResult, Verifier, VerifierResult
from .proof import Theorem, blank_span, nested_end, statement_sha256

NAME = "lean"
TOOLCHAIN = "lean"
#: Version of this module's command line, splice and parser (part of every job key).
MODULE_VERSION = "1"
#: File name of the spliced task in the job's scratch directory.
SOURCE = "Candidate.lean"
#: Lean's standard axioms (lean4 ``src/Init/Prelude.lean``/``Core.lean``): always allowed.
STANDARD_AXIOMS = ("propext", "Classical.choice", "Quot.sound")
DEFAULT_WALL_S = 600

_DECL_KEYWORDS = {"theorem", "lemma"}
_MODIFIERS = {"private", "protected", "noncomputable", "unsafe", "partial", "nonrec"}
#: Identifiers a candidate proof may not contain (outside comments and strings), and why.
#: A proof replaces the ``sorry`` of ``theorem ... := sorry``: it is a term (usually
#: ``by ...``) and never needs a command, so every command keyword is refused.
FORBIDDEN = {
    "sorry": "sorry (proves anything)",
    "admit": "admit (= sorry)",
    "sorryAx": "sorryAx (the axiom behind sorry)",
    "axiom": "axiom (declares an assumption)",
    "opaque": "opaque (a declaration; with implemented_by it can make native evaluation lie)",
    "native_decide": "native_decide (trusts the compiler: Lean.ofReduceBool)",
    "native": "decide +native (trusts the compiler)",
    "bv_decide": "bv_decide (trusts the compiler: Lean.ofReduceBool)",
    "ofReduceBool": "Lean.ofReduceBool (trusts the compiler)",
    "ofReduceNat": "Lean.ofReduceNat (trusts the compiler)",
    "reduceBool": "Lean.reduceBool (trusts the compiler)",
    "reduceNat": "Lean.reduceNat (trusts the compiler)",
    "trustCompiler": "Lean.trustCompiler (trusts the compiler)",
    "implemented_by": "@[implemented_by] (replaces code seen by native evaluation)",
    "extern": "@[extern] (replaces code seen by native evaluation)",
    "csimp": "@[csimp] (can hide axioms behind native evaluation)",
    "import": "import (loads other modules)",
    "elab": "elab (defines new elaborators/tactics)",
    "elab_rules": "elab_rules (redefines elaboration)",
    "macro": "macro (defines new syntax/tactics)",
    "macro_rules": "macro_rules (redefines syntax/tactics)",
    "syntax": "syntax (defines new syntax)",
    "declare_syntax_cat": "declare_syntax_cat (defines new syntax)",
    "notation": "notation (defines new syntax)",
    "infix": "infix (defines new syntax)",
    "infixl": "infixl (defines new syntax)",
    "infixr": "infixr (defines new syntax)",
    "prefix": "prefix (defines new syntax)",
    "postfix": "postfix (defines new syntax)",
    "run_tac": "run_tac (runs arbitrary meta code, can print a fake report)",
    "run_cmd": "run_cmd (runs arbitrary meta code)",
    "run_elab": "run_elab (runs arbitrary meta code)",
    "run_meta": "run_meta (runs arbitrary meta code)",
    "by_elab": "by_elab (runs arbitrary meta code)",
    "dbg_trace": "dbg_trace (prints arbitrary text)",
    "initialize": "initialize (runs code at import)",
    "builtin_initialize": "builtin_initialize (runs code at import)",
    "theorem": "theorem (declares a new theorem)",
    "lemma": "lemma (declares a new theorem)",
    "def": "def (a new declaration)",
    "abbrev": "abbrev (a new declaration)",
    "instance": "instance (a new declaration)",
    "example": "example (a new declaration)",
    "structure": "structure (a new declaration)",
    "class": "class (a new declaration)",
    "inductive": "inductive (a new declaration)",
    "coinductive": "coinductive (a new declaration)",
    "mutual": "mutual (a new declaration block)",
    "attribute": "attribute (changes attributes of existing declarations)",
    "deriving": "deriving (a new declaration)",
    "namespace": "namespace (changes the scope of the report)",
    "section": "section (opens a scope)",
    "end": "end (closes the task's namespace)",
    "universe": "universe (a command)",
    "variable": "variable (a command)",
    "include": "include (a command)",
    "omit": "omit (a command)",
    "export": "export (a command)",
    "private": "private (a declaration modifier)",
    "protected": "protected (a declaration modifier)",
    "noncomputable": "noncomputable (a declaration modifier)",
    "partial": "partial (a declaration modifier)",
}
#: ``set_option`` is allowed in proofs (``set_option maxHeartbeats N in``) except for
#: option prefixes that weaken checking (``debug.skipKernelTC`` skips the kernel).
FORBIDDEN_OPTION_PREFIXES = ("debug.",)
_IDENT = re.compile(r"(?:«[^»\n]*»|[^\W\d][\w'!?₀-₉]*)(?:\.(?:«[^»\n]*»|[^\W\d][\w'!?₀-₉]*))*")
_HASH_CMD = re.compile(r"#[A-Za-z_][\w]*")
_DIAG = re.compile(r"^(?P<file>\S[^:\n]*):(?P<line>\d+):(?P<col>\d+)(?:-\d+:\d+)?:\s*"
                   r"(?P<sev>error|warning)(?:\([^)\n]*\))?:\s?(?P<msg>.*)$", re.M)
_REPORT = re.compile(r"^'(?P<name>.+?)' (?:(?P<none>does not depend on any axioms)|depends on axioms: \[)", re.M)
_SORRY_WARNING = re.compile(r"declaration uses ['`]sorry['`]")
#: Errors that mean the image's workspace (not the candidate) is broken: missing modules
#: or build outputs, or Lake failing before Lean ran.
_INFRA = re.compile(r"unknown module prefix|object file .* does not exist|unknown package|"
                    r"lakefile|lake-manifest", re.I)


@dataclass(frozen=True)
class Token:
    """An identifier-like token of Lean source: ``text``, ``start`` offset, 1-based ``line``."""

    text: str
    start: int
    line: int


def blank(text: str) -> str:
    """``text`` with comments (``--`` to end of line, nested ``/- -/``) and string/char
    literals replaced by spaces (newlines kept), offsets preserved. Interpolated strings
    (``s!"..."``, ``m!"..."``) are kept, since ``{...}`` inside them is code.

    Raises:
        ValueError: unterminated comment or string (``line N: ...``).
    """
    out = list(text)
    i, n = 0, len(text)

    def line_of(k: int) -> int:
        return text.count("\n", 0, k) + 1

    while i < n:
        c = text[i]
        if text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank_span(out, i, j)
            i = j
        elif text.startswith("/-", i):
            j = nested_end(text, i, ("/-",), ("-/",))
            if j < 0:
                raise ValueError(f"line {line_of(i)}: unterminated comment")
            blank_span(out, i, j)
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not _word_char(text[i - 1])):
            hashes = re.match(r'r(#*)"', text[i:]).group(1)
            close = '"' + hashes
            j = text.find(close, i + 2 + len(hashes))
            if j < 0:
                raise ValueError(f"line {line_of(i)}: unterminated string")
            blank_span(out, i, j + len(close))
            i = j + len(close)
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise ValueError(f"line {line_of(i)}: unterminated string")
            if not (i > 0 and text[i - 1] == "!"):
                blank_span(out, i, j + 1)
            i = j + 1
        elif c == "'" and (i == 0 or not _word_char(text[i - 1])):
            m = re.match(r"'(?:\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)|[^'\\\n])'", text[i:])
            if m:
                blank_span(out, i, i + m.end())
                i += m.end()
            else:
                i += 1
        else:
            i += 1
    return "".join(out)


def _word_char(c: str) -> bool:
    return c.isalnum() or c in "_'!?»"


def tokens(code: str) -> list[Token]:
    """Identifier tokens (dotted names, ``«»``-quoted parts) of already :func:`blank`-ed code."""
    return [Token(m.group(0), m.start(), code.count("\n", 0, m.start()) + 1) for m in _IDENT.finditer(code)]


def _parts(name: str) -> list[str]:
    return [p.strip("«»") for p in re.findall(r"«[^»]*»|[^.]+", name)]


def _scopes(code: str) -> list[tuple[Token, list[str]]]:
    """Each token with the namespace (list of components) open at it, following
    ``namespace``/``section``/``mutual``/``end`` commands."""
    toks = tokens(code)
    stack: list[tuple[str, list[str]]] = []
    out = []
    i = 0
    while i < len(toks):
        t = toks[i]
        out.append((t, [p for kind, parts in stack if kind == "namespace" for p in parts]))
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        named = nxt is not None and nxt.line == t.line and nxt.text not in _COMMANDS
        if t.text == "namespace" and nxt is not None:
            stack.append(("namespace", _parts(nxt.text)))
        elif t.text == "section":
            stack.append(("section", []))
        elif t.text == "mutual":
            stack.append(("mutual", []))
        elif t.text == "end" and stack:
            stack.pop()
        else:
            named = False
        if named:
            out.append((nxt, out[-1][1]))
            i += 1
        i += 1
    return out


_COMMANDS = {"theorem", "lemma", "def", "axiom", "namespace", "section", "end", "open", "noncomputable",
             "inductive", "structure", "attribute", "instance", "abbrev", "mutual", "example"}


class Lean(Verifier):
    """Lean 4 proof checker. ``name = "lean"``, toolchain ``lean``."""

    name = NAME
    toolchain = TOOLCHAIN
    version = MODULE_VERSION
    language = "lean"
    source = SOURCE

    # --- task files -----------------------------------------------------------------

    def theorem(self, task_text: str, where: str) -> Theorem:
        """The task's theorem and its ``sorry`` placeholder.

        The file must contain exactly one ``theorem``/``lemma`` and exactly one ``sorry``,
        which is the theorem's whole proof (``:= sorry`` or ``:= by sorry``). ``name`` is
        the fully qualified name (enclosing namespaces included), as ``#print axioms``
        prints it; ``statement`` runs from the keyword to just before ``:=``.

        Raises:
            ValueError: ``where:line: ...`` when that is not the case.
        """
        try:
            code = blank(task_text)
        except ValueError as exc:
            raise ValueError(f"{where}:{str(exc).removeprefix('line ')}") from None
        scoped = _scopes(code)
        thms = [(i, t, ns) for i, (t, ns) in enumerate(scoped) if t.text in _DECL_KEYWORDS]
        if len(thms) != 1:
            line = thms[1][1].line if len(thms) > 1 else 1
            raise ValueError(f"{where}:{line}: expected exactly one theorem, found {len(thms)}")
        i, kw, ns = thms[0]
        if i + 1 >= len(scoped):
            raise ValueError(f"{where}:{kw.line}: theorem without a name")
        short = scoped[i + 1][0].text
        sorries = [t for t, _ in scoped if t.text == "sorry"]
        if len(sorries) != 1 or sorries[0].start < kw.start:
            line = sorries[1].line if len(sorries) > 1 else kw.line
            raise ValueError(f"{where}:{line}: expected exactly one 'sorry' (the theorem's proof), "
                             f"found {len(sorries)}")
        sorry = sorries[0]
        m = re.search(r":=\s*(by\s+)?$", code[kw.start:sorry.start])
        if not m:
            raise ValueError(f"{where}:{sorry.line}: the placeholder must be ':= sorry' or ':= by sorry'")
        assign = kw.start + m.start()
        start = kw.start + m.start(1) if m.group(1) else sorry.start
        later = [t for t, _ in scoped if t.start > sorry.start and t.text in _COMMANDS - {"end", "open"}]
        if later:
            raise ValueError(f"{where}:{later[0].line}: a declaration follows the theorem's placeholder")
        name = ".".join([*ns, *_parts(short)]) if not short.startswith("_root_.") else short[len("_root_."):]
        statement = task_text[kw.start:assign].rstrip()
        return Theorem(name=name, statement=statement, statement_sha256=statement_sha256(statement),
                       start=start, end=sorry.start + len("sorry"), line=kw.line)

    def declared_axioms(self, text: str) -> set[str]:
        """Names of the ``axiom`` declarations of ``text``, qualified by the enclosing
        namespaces as ``#print axioms`` prints them (``_root_.x`` gives ``x``). Works on any
        Lean file (a task or one of its library modules). Private axioms are not handled
        (none in NTP4VC)."""
        scoped = _scopes(blank(text))
        names = set()
        for k, (t, ns) in enumerate(scoped):
            if t.text == "axiom" and k + 1 < len(scoped):
                raw = scoped[k + 1][0].text
                names.add(raw[len("_root_."):] if raw.startswith("_root_.") else ".".join([*ns, *_parts(raw)]))
        return names

    def forbidden(self, proof: str) -> list[str]:
        """Fail-closed scan of a candidate proof (the text that replaces ``sorry``).

        Comments and strings are ignored (an unterminated one is a finding). Findings: any
        identifier (or component of a dotted name) of :data:`FORBIDDEN`, any identifier
        containing ``unsafe``, any ``#command`` (``#exit``, ``#eval``, ``#print``...), an
        attribute ``@[...]``, and ``set_option`` of an option under
        :data:`FORBIDDEN_OPTION_PREFIXES`.
        """
        try:
            code = blank(proof)
        except ValueError as exc:
            return [f"candidate: {exc}"]
        found: list[str] = []

        def add(msg: str) -> None:
            if msg not in found:
                found.append(msg)

        toks = tokens(code)
        for k, t in enumerate(toks):
            for part in [t.text, *_parts(t.text)]:
                if part in FORBIDDEN:
                    add(f"line {t.line}: {FORBIDDEN[part]}")
                if "unsafe" in part.lower():
                    add(f"line {t.line}: {part} (unsafe code)")
            if t.text == "set_option" and k + 1 < len(toks):
                opt = toks[k + 1].text
                if opt.startswith(FORBIDDEN_OPTION_PREFIXES):
                    add(f"line {t.line}: set_option {opt} (weakens checking)")
        for m in _HASH_CMD.finditer(code):
            add(f"line {code.count(chr(10), 0, m.start()) + 1}: {m.group(0)} (a command)")
        if "@[" in code:
            add(f"line {code.count(chr(10), 0, code.index('@[')) + 1}: @[...] (an attribute)")
        return found

    def splice(self, task_text: str, theorem: Theorem, proof: str) -> str:
        """The file to check: the task with ``proof`` in place of the placeholder, then
        ``#print axioms <qualified theorem name>`` at the end of the file (outside every
        namespace, so the fully qualified name resolves)."""
        text = task_text[:theorem.start] + proof.strip() + task_text[theorem.end:]
        return text.rstrip("\n") + f"\n\n#print axioms {_escape(theorem.name)}\n"

    # --- running ---------------------------------------------------------------------

    def prepare(self, sandbox, probed) -> dict:
        """Nothing to prepare: the workspace is prebuilt in the image."""
        return {}

    def options(self, probed, *, smoke: bool = False, cpus: int = 1, **overrides) -> dict:
        """Options of a job.

        Keys: ``lean_project`` (the Lake workspace of the image; the benchmark sets it), ``theorem`` (qualified name, set per
        task by the benchmark), ``theorem_line``, ``allowed_assumptions`` (names allowed
        besides :data:`STANDARD_AXIOMS`: the task's and its libraries' own axioms, from
        :meth:`declared_axioms`), ``max_heartbeats`` (None: Lean's default 200000),
        ``wall_s``, ``lean_version`` (probed), ``verifier_module``. ``smoke``/``cpus``
        (the runner's generic arguments) do not apply and are ignored.
        """
        versions = getattr(probed, "versions", None) or {}
        opts = {"lean_project": ".", "theorem": None, "theorem_line": 0, "allowed_assumptions": [],
                "max_heartbeats": None, "wall_s": DEFAULT_WALL_S, "lean_version": versions.get("lean"),
                "verifier_module": f"{NAME}/{MODULE_VERSION}"}
        opts.update(overrides)
        return opts

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """``lake -d <project> env lean [-DmaxHeartbeats=N] Candidate.lean``; no files to collect."""
        argv = ["lake", "-d", options.get("lean_project") or ".", "env", "lean"]
        if options.get("max_heartbeats") is not None:
            argv.append(f"-DmaxHeartbeats={int(options['max_heartbeats'])}")
        argv.append(SOURCE)
        return argv, {}, []

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Verdict of one ``lake env lean`` run.

        The sandbox's own endings (did not start, wall-time or memory limit) are mapped
        by the executor before this is called (:func:`harness.model.termination`).
        ``infra_error`` (the image's workspace or imports are broken; a crash without
        diagnostics), ``failed`` (output over the cap), ``invalid`` (an ``error:`` diagnostic: the first one's
        ``file:line:col`` in the reason; ``extra.task_loads`` is False when it lies before
        the theorem's line), ``rejected`` (a ``declaration uses 'sorry'`` warning; no report, or
        several, for the theorem; ``sorryAx``; the theorem itself; an axiom outside
        :data:`STANDARD_AXIOMS` + ``options["allowed_assumptions"]``), ``verified``
        otherwise. ``extra["assumptions"]``: the reported axioms.
        """
        options = options or {}
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        if proc.output_truncated:
            return VerifierResult("failed", "output exceeded the cap; the run was stopped")
        diags = diagnostics(log)
        errors = [d for d in diags if d["severity"] == "error"]
        messages = [_fmt(d) for d in diags[:20]]
        if errors:
            first = errors[0]
            if _INFRA.search(first["message"]):
                return VerifierResult("infra_error", f"the image's Lean workspace is broken: {_fmt(first)}",
                                      messages=messages, extra={"kit_side": True})  # kept by executor.derive
            loads = first["line"] >= int(options.get("theorem_line") or 0)
            reason = _fmt(first) if loads else f"the task file itself does not load: {_fmt(first)}"
            return VerifierResult("invalid", reason, messages=messages, extra={"task_loads": loads})
        if proc.returncode != 0:
            return VerifierResult("infra_error", f"lake/lean exited {proc.returncode} without a diagnostic: "
                                  f"{log.strip()[-300:]}", messages=messages)
        theorem = options.get("theorem")
        reports = [r for r in axiom_reports(log) if theorem is None or r[0] == theorem]
        axioms = reports[0][1] if len(reports) == 1 else []
        extra = {"assumptions": axioms, "task_loads": True}
        if any(_SORRY_WARNING.search(d["message"]) for d in diags):
            return VerifierResult("rejected", "Lean reports a declaration using sorry", messages=messages, extra=extra)
        if not reports:
            return VerifierResult("rejected", f"no '#print axioms' report for {theorem or 'the theorem'} "
                                  "(fail closed)", messages=messages, extra=extra)
        if len(reports) > 1:
            return VerifierResult("rejected", f"{len(reports)} axiom reports for {theorem or 'the theorem'} "
                                  "(one is expected; the proof may print a fake one)", messages=messages, extra=extra)
        problems = self.assumption_problems(axioms, options)
        if problems:
            return VerifierResult("rejected", "; ".join(problems), messages=messages, extra=extra)
        return VerifierResult("verified", "proof checked by Lean; axioms: " + (", ".join(axioms) or "none"),
                              messages=messages, extra=extra)

    def assumption_problems(self, axioms: list[str], options: dict) -> list[str]:
        """Why a ``#print axioms`` list is not acceptable (empty list: it is)."""
        allowed = set(STANDARD_AXIOMS) | set(options.get("allowed_assumptions") or [])
        theorem = options.get("theorem")
        problems = []
        for a in axioms:
            if a == "sorryAx":
                problems.append("the proof uses sorry (sorryAx)")
            elif theorem and a == theorem:
                problems.append(f"the theorem {theorem} itself is an axiom")
            elif a not in allowed:
                problems.append(f"unexpected axiom {a}")
        return problems


def _escape(name: str) -> str:
    """``name`` with components that are not plain identifiers quoted in ``«»``."""
    return ".".join(p if re.fullmatch(r"[^\W\d][\w'!?₀-₉]*", p) else f"«{p}»" for p in name.split("."))


def _fmt(d: dict) -> str:
    return f"{d['file']}:{d['line']}:{d['col']}: {d['severity']}: {d['message']}"


def diagnostics(log: str) -> list[dict]:
    """``[{"file", "line", "col", "severity", "message"}]`` of Lean's positioned errors
    and warnings (first line of each message)."""
    return [{"file": m.group("file"), "line": int(m.group("line")), "col": int(m.group("col")),
             "severity": m.group("sev"), "message": m.group("msg").strip()} for m in _DIAG.finditer(log)]


def axiom_reports(log: str) -> list[tuple[str, list[str]]]:
    """``[(name, axioms)]`` of every ``#print axioms`` message in ``log`` (the list may
    span several lines; ``«»`` quotes are removed from names)."""
    out = []
    for m in _REPORT.finditer(log):
        name = ".".join(_parts(m.group("name")))
        if m.group("none"):
            out.append((name, []))
            continue
        close = log.find("]", m.end())
        if close < 0:
            continue
        items = [x.strip() for x in log[m.end():close].split(",")]
        out.append((name, [".".join(_parts(x)) for x in items if x]))
    return out
