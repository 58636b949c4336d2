"""Isabelle/HOL proof checker (``isabelle build``), with Isabelle's own oracle report.

Command line, in the job's scratch directory of the ``ntp4vc-isabelle`` image (Isabelle2024,
the AFP and the benchmark's sessions with prebuilt system heaps; the session directories
come from the job's ``session_dirs`` option, set by the benchmark)::

    sh -c 'isabelle build -o quick_and_dirty=false -o timeout=<s> -o threads=<n>
               -d /opt/ntp4vc -d /opt/afp/thys -d /opt/isabelle-deps -d . VerikitCandidate;
           rc=$?;
           isabelle log -v -U VerikitCandidate || isabelle build_log -v -U VerikitCandidate;
           exit $rc'

The job's files (:meth:`Isabelle.job_files`) are ``<Theory>.thy`` -- the task with the
candidate proof in place of its ``sorry`` followed by ``thm_oracles <theorem>``
(:meth:`Isabelle.splice`) -- and a ``ROOT`` declaring the ad-hoc session
``VerikitCandidate`` (parent ``NTP4Verif``; the other sessions the theory imports by
qualified name, e.g. ``Why3STD``; ``document = false``). Relative imports of the task
(``"../../lib/isabelle/X"``, ``"./X"``) are rewritten to absolute paths under the task's
directory in the image, and those directories are listed as ``directories`` of the
session: a session may only use theory files inside its declared directories ("Implicit
use of directory ..." otherwise, ``Sessions.scala``). ``quick_and_dirty`` is forced off on
the command line and is never set by this module: ``sorry`` then fails with "Cheating
requires quick_and_dirty mode!".

The oracle report. ``thm_oracles thms`` prints "all oracles used in theorems (full graph of
transitive dependencies)" (Isabelle ``src/Pure/Pure.thy``); its output is
``Pretty.big_list "oracles:"`` with one ``\\<bullet> NAME[: PROP]`` item per oracle
(``Thm_Deps.pretty_thm_oracles``, ``src/Pure/thm_deps.ML``), so a clean proof prints just
``oracles:``. ``sorry``/``\\<proof>`` are the ``skip_proof`` oracle; ``smt_oracle``,
``eval``/``normalization`` (code evaluation) add other oracles. In a batch build this
output goes to the session's build database, not to the console; the log tool prints it
back (``-v``: information messages too). The tool is named ``isabelle log`` up to
Isabelle2023 (``Pure/Tools/build_job.scala``; seL4/isabelle PR #3) and ``isabelle
build_log`` in later manuals (``src/Doc/System/Sessions.thy``), hence the fallback.
Axioms are not oracles: Isabelle reports axiom use only through full proof terms, so the
task's own ``axiomatization`` facts are allowed by construction and a candidate cannot add
one (:meth:`Isabelle.forbidden`).

Output formats parsed, and where each is known from:

- Build progress/result: ``Building SESSION ...``, ``SESSION: theory T``, ``Finished ...``
  (real output of Isabelle2024, tlaplus/tlapm PR #109, recorded); on failure ``SESSION
  FAILED``, errors as ``*** MESSAGE`` with positions ``(line N of "FILE")``, an ``*** At
  command "..."`` line, and ``Unfinished session(s): SESSION`` (real output of Isabelle2016,
  isabelle-utp/utp-main issue #3, recorded; the format is unchanged in later versions per
  ``Build.scala``, but no 2024 failure transcript was found).
- The ``thm_oracles`` report as printed by ``isabelle log -v``: from the sources above
  only; NOT covered by a recorded real output (none found), nor is the exact heading the
  log tool prints before each theory's messages. The parser only relies on a line
  ``oracles:`` followed by indented bullet items. So the ``verified`` path is untested.

Sources (URLs): https://isabelle.in.tum.de/repos/isabelle/file/tip/src/Pure/thm_deps.ML,
https://isabelle.in.tum.de/repos/isabelle/file/tip/src/Pure/Pure.thy (``thm_oracles``),
https://isabelle.in.tum.de/repos/isabelle/file/tip/src/Doc/System/Sessions.thy (ROOT
syntax, ``isabelle build``, the log tool), https://github.com/seL4/isabelle/pull/3
(``isabelle log``), https://github.com/tlaplus/tlapm/pull/109 and
https://github.com/isabelle-utp/utp-main/issues/3 (build transcripts).
"""

from __future__ import annotations

import posixpath
import re
import shlex

from ..model import ProcResult, Verifier, VerifierResult
from .proof import Theorem, blank_span, nested_end, statement_sha256

NAME = "isabelle"
TOOLCHAIN = "isabelle"
#: Version of this module's command line, splice and parser (part of every job key).
MODULE_VERSION = "1"
PARENT_SESSION = "NTP4Verif"
#: The ad-hoc session of a job (its ROOT is written in the job's scratch directory).
SESSION = "VerikitCandidate"
#: Names of the tool that prints a session's messages from its build database, tried in order.
LOG_TOOLS = ("log", "build_log")
DEFAULT_WALL_S = 600

THEOREM_KEYWORDS = ("theorem", "lemma", "corollary", "proposition", "schematic_goal")
_PROOF_WORDS = {"proof", "by", "apply", "apply_end", "using", "unfolding", "qed", "done", "oops", "sorry"}
_COMMANDS = {"theorem", "lemma", "corollary", "proposition", "schematic_goal", "definition", "fun", "function",
             "primrec", "datatype", "codatatype", "typedecl", "type_synonym", "typedef", "consts", "axiomatization",
             "inductive", "coinductive", "abbreviation", "record", "locale", "context", "end", "lemmas",
             "declare", "instantiation", "instance", "class", "notation", "text", "section", "subsection"}
#: Words a candidate proof may not contain (outside comments, strings and cartouches),
#: and why. A proof replaces the ``sorry`` after ``shows ...``; it never needs a theory
#: command, an ML escape or a configuration that switches checking off.
FORBIDDEN = {
    "sorry": "sorry (skip_proof oracle)",
    "oops": "oops (abandons the proof)",
    "axiomatization": "axiomatization (declares axioms)",
    "axioms": "axioms (declares axioms)",
    "quick_and_dirty": "quick_and_dirty (allows sorry)",
    "skip_proof": "skip_proof (the sorry oracle)",
    "skip_proofs": "skip_proofs (skips proofs)",
    "Skip_Proof": "Skip_Proof (the sorry oracle)",
    "cheat_tac": "cheat_tac (the sorry tactic)",
    "smt_oracle": "smt_oracle (trusts the SMT solver without reconstruction)",
    "oracle": "oracle (declares a new oracle)",
    "thm_oracles": "thm_oracles (the kit adds its own report)",
    "tactic": "tactic method (runs ML)",
    "raw_tactic": "raw_tactic method (runs ML)",
    **{k: f"{k} (runs ML)" for k in ("ML", "ML_val", "ML_prf", "ML_command", "ML_file", "ML_file_debug",
                                      "ML_file_no_debug", "ML_export", "ML_import", "SML_file", "SML_import",
                                      "SML_export", "setup", "local_setup", "attribute_setup", "method_setup",
                                      "simproc_setup", "declaration", "syntax_declaration", "parse_translation",
                                      "print_translation", "typed_print_translation", "parse_ast_translation",
                                      "print_ast_translation")},
    **{k: f"{k} (a theory command)" for k in ("theory", "begin", "end", "lemma", "theorem", "corollary",
                                              "proposition", "schematic_goal", "lemmas", "theorems",
                                              "named_theorems", "definition", "abbreviation", "fun", "function",
                                              "primrec", "datatype", "codatatype", "typedecl", "type_synonym",
                                              "typedef", "record", "consts", "specification", "overloading",
                                              "declare", "context", "locale", "interpretation",
                                              "global_interpretation", "sublocale", "instantiation",
                                              "instance", "class", "bundle", "notation", "no_notation",
                                              "syntax", "no_syntax", "translations", "hide_const", "hide_fact",
                                              "hide_type", "hide_class", "code_printing", "setup_lifting")},
}
#: Raw substrings refused anywhere (even in comments and cartouches, where document
#: antiquotations are still processed): ML antiquotations and the ``\\<proof>`` symbol
#: (Isar's alternative spelling of ``sorry``).
FORBIDDEN_RAW = {"@{ML": "@{ML...} antiquotation (ML)", "\\<^ML": "\\<^ML> antiquotation (ML)",
                 "\\<proof>": "\\<proof> (= sorry)", "…": "… (= sorry)"}
#: Names refused also as a component of a dotted name (``Skip_Proof.cheat_tac``).
_FORBIDDEN_PARTS = {"Skip_Proof", "skip_proof", "cheat_tac", "quick_and_dirty", "smt_oracle", "skip_proofs"}
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_']*(?:\.[A-Za-z0-9_']+)*")
_ERROR = re.compile(r"^\*\*\*\s?(.*)$", re.M)
_POS = re.compile(r'\(line (\d+) of "([^"]+)"\)')
_INFRA = re.compile(r"Undefined session|Bad parent session|Bad imports session|Implicit use of|No such file|"
                    r"No such directory|Cannot load theory|Missing heap|Unknown session|Bad theory import|"
                    r"Duplicate theory|Unknown Isabelle tool|Bad session", re.I)
_CHEAT = "Cheating requires quick_and_dirty mode"


def blank(text: str, *, keep_strings: bool = False) -> str:
    """``text`` with comments ``(* *)`` (nested), cartouches ``\\<open>..\\<close>`` and
    ``‹..›`` (nested), strings ``"..."`` and ``` `...` ``` and verbatim ``{* *}`` replaced by
    spaces (newlines kept), offsets preserved; strings stay when ``keep_strings``.

    Raises:
        ValueError: unterminated comment, cartouche or string (``line N: ...``).
    """
    out = list(text)
    i, n = 0, len(text)

    def nested(i: int, opens: tuple[str, ...], closes: tuple[str, ...], what: str) -> int:
        j = nested_end(text, i, opens, closes)
        if j < 0:
            raise ValueError(f"line {text.count(chr(10), 0, i) + 1}: unterminated {what}")
        return j

    while i < n:
        if text.startswith("(*", i):
            j = nested(i, ("(*",), ("*)",), "comment")
        elif text.startswith(("\\<open>", "‹"), i):
            j = nested(i, ("\\<open>", "‹"), ("\\<close>", "›"), "cartouche")
        elif text.startswith("{*", i):
            j = text.find("*}", i + 2)
            if j < 0:
                raise ValueError(f"line {text.count(chr(10), 0, i) + 1}: unterminated verbatim text")
            j += 2
        elif text[i] in "\"`":
            q, j = text[i], i + 1
            while j < n and text[j] != q:
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                raise ValueError(f"line {text.count(chr(10), 0, i) + 1}: unterminated string")
            j += 1
            if keep_strings:
                i = j
                continue
        else:
            i += 1
            continue
        blank_span(out, i, j)
        i = j
    return "".join(out)


def _words(code: str) -> list[tuple[str, int]]:
    return [(m.group(0), m.start()) for m in _WORD.finditer(code)]


def theory_name(text: str) -> str:
    """The name in the theory header ``theory NAME imports ...``.

    Raises:
        ValueError: no theory header.
    """
    m = re.search(r'\btheory\s+"?([^\s"]+)', blank(text, keep_strings=True))
    if not m:
        raise ValueError("no 'theory NAME' header")
    return m.group(1)


def header_imports(text: str) -> list[tuple[int, int, str]]:
    """``[(start, end, name)]`` of the imports in the theory header (quoted or bare)."""
    code = blank(text, keep_strings=True)
    m = re.search(r"\bimports\b", code)
    b = re.search(r"\bbegin\b", code)
    if not m or not b or b.start() < m.end():
        return []
    return [(m.end() + s.start(), m.end() + s.end(), s.group(1) if s.group(1) is not None else s.group(2))
            for s in re.finditer(r'"((?:[^"\\]|\\.)*)"|([^\s"]+)', code[m.end():b.start()])]


class Isabelle(Verifier):
    """Isabelle/HOL proof checker. ``name = "isabelle"``, toolchain ``isabelle``."""

    name = NAME
    toolchain = TOOLCHAIN
    version = MODULE_VERSION
    language = "isabelle"

    # --- task files -----------------------------------------------------------------

    def theorem(self, task_text: str, where: str) -> Theorem:
        """The task's theorem and its ``sorry`` placeholder.

        The theory must contain exactly one ``theorem``/``lemma``/... with a name
        (``theorem NAME: fixes ... assumes ... shows ...``) and exactly one ``sorry``, which
        is its whole proof (only ``end`` may follow). ``statement`` runs from the keyword
        to just before ``sorry``.

        Raises:
            ValueError: ``where:line: ...`` when that is not the case.
        """
        try:
            code = blank(task_text)
        except ValueError as exc:
            raise ValueError(f"{where}:{str(exc).removeprefix('line ')}") from None

        def line(pos: int) -> int:
            return task_text.count("\n", 0, pos) + 1

        words = _words(code)
        thms = [(k, w, p) for k, (w, p) in enumerate(words) if w in THEOREM_KEYWORDS]
        if len(thms) != 1:
            raise ValueError(f"{where}:{line(thms[1][2]) if len(thms) > 1 else 1}: expected exactly one "
                             f"theorem, found {len(thms)}")
        k, _, kw = thms[0]
        m = re.match(r"\s+([A-Za-z][\w'.]*)\s*(?:\[[^\]]*\]\s*)?:(?!:)", code[kw + len(words[k][0]):])
        if not m:
            raise ValueError(f"{where}:{line(kw)}: the theorem has no name ('theorem NAME: ...' expected)")
        sorries = [p for w, p in words if w == "sorry"]
        if len(sorries) != 1 or sorries[0] < kw:
            raise ValueError(f"{where}:{line(sorries[1] if len(sorries) > 1 else kw)}: expected exactly one "
                             f"'sorry' (the theorem's proof), found {len(sorries)}")
        sorry = sorries[0]
        between = [w for w, p in words if kw < p < sorry and w in _PROOF_WORDS]
        if between:
            raise ValueError(f"{where}:{line(sorry)}: the theorem's proof must be 'sorry' alone "
                             f"(found {between[0]!r} before it)")
        after = [w for w, p in words if p > sorry]
        if after != ["end"]:
            raise ValueError(f"{where}:{line(sorry)}: only 'end' may follow the placeholder, found {after[:3]}")
        statement = task_text[kw:sorry].rstrip()
        return Theorem(name=m.group(1), statement=statement, statement_sha256=statement_sha256(statement),
                       start=sorry, end=sorry + len("sorry"), line=line(kw))

    def declared_axioms(self, text: str) -> set[str]:
        """Fact names of the ``axiomatization`` commands of ``text`` (``axiomatization
        [consts] where NAME: "..." and NAME: "..."``), as written (unqualified)."""
        code = blank(text)
        words = _words(code)
        names = set()
        for k, (w, p) in enumerate(words):
            if w != "axiomatization":
                continue
            stop = next((q for ww, q in words[k + 1:] if ww in _COMMANDS), len(code))
            region = code[p:stop]
            wh = re.search(r"\bwhere\b", region)
            if wh:
                for m in re.finditer(r"(?:\bwhere|\band)\s+([A-Za-z][\w'.]*)\s*(?:\[[^\]]*\]\s*)?:(?!:)",
                                     region[wh.start():]):
                    names.add(m.group(1))
        return names

    def forbidden(self, proof: str) -> list[str]:
        """Fail-closed scan of a candidate proof (the text that replaces ``sorry``).

        Findings: any word (or component of a dotted name) of :data:`FORBIDDEN` outside
        comments, strings and cartouches; any substring of :data:`FORBIDDEN_RAW` anywhere;
        an unterminated comment, cartouche or string.
        """
        found: list[str] = []

        def add(msg: str) -> None:
            if msg not in found:
                found.append(msg)

        for raw, why in FORBIDDEN_RAW.items():
            if raw in proof:
                add(f"line {proof.count(chr(10), 0, proof.index(raw)) + 1}: {why}")
        try:
            code = blank(proof)
        except ValueError as exc:
            return found + [f"candidate: {exc}"]
        for w, p in _words(code):
            for part in dict.fromkeys([w, *(x for x in w.split(".") if x in _FORBIDDEN_PARTS)]):
                if part in FORBIDDEN:
                    add(f"line {code.count(chr(10), 0, p) + 1}: {FORBIDDEN[part]}")
        return found

    def splice(self, task_text: str, theorem: Theorem, proof: str, *, task_dir: str | None = None) -> str:
        """The theory to check: the task with ``proof`` in place of ``sorry``, then
        ``thm_oracles <theorem>`` before the closing ``end``. With ``task_dir`` (the task's
        directory inside the image), relative imports (``"../x/Y"``, ``"./Y"``) become
        absolute paths there, so the theory can be checked from the job's directory."""
        head = task_text[:theorem.start]
        if task_dir:
            for start, end, name in reversed(header_imports(head)):
                if _relative(name):
                    head = head[:start] + f'"{posixpath.normpath(posixpath.join(task_dir, name))}"' + head[end:]
        return head + proof.strip() + f"\n\nthm_oracles {theorem.name}\n" + task_text[theorem.end:]

    def job_files(self, task_text: str, theorem: Theorem, proof: str, *, task_dir: str,
                  parent: str = PARENT_SESSION) -> dict[str, str]:
        """The job's input files: ``<Theory>.thy`` (:meth:`splice` with ``task_dir``) and the
        ``ROOT`` of session :data:`SESSION` (parent ``parent``; ``sessions`` = the other
        sessions imported by qualified name; ``directories`` = the directories of the
        absolute imports; ``theories`` = the task's theory)."""
        text = self.splice(task_text, theorem, proof, task_dir=task_dir)
        thy = theory_name(text)
        imports = [name for _, _, name in header_imports(text)]
        sessions = sorted({i.split(".", 1)[0] for i in imports if "/" not in i and "." in i} - {parent})
        dirs = sorted({posixpath.dirname(i) for i in imports if i.startswith("/")})
        root = [f'session "{SESSION}" = "{parent}" +', "  options [document = false]"]
        if sessions:
            root.append("  sessions " + " ".join(f'"{s}"' for s in sessions))
        if dirs:
            root.append("  directories " + " ".join(f'"{d}"' for d in dirs))
        root.append(f'  theories "{thy}"')
        return {"ROOT": "\n".join(root) + "\n", f"{thy}.thy": text}

    # --- running ---------------------------------------------------------------------

    def prepare(self, sandbox, probed) -> dict:
        """Nothing to prepare: the heaps are prebuilt in the image."""
        return {}

    def options(self, probed, *, smoke: bool = False, cpus: int = 1, **overrides) -> dict:
        """Options of a job.

        Keys: ``session_dirs`` (``-d`` directories of the image; the benchmark sets them), ``theorem``, ``theorem_line``,
        ``theory`` (set per task by the benchmark), ``allowed_assumptions`` (oracle names
        allowed; none by default), ``timeout_s`` (Isabelle's session ``timeout`` option),
        ``threads``, ``wall_s``, ``isabelle_version`` (probed), ``verifier_module``.
        ``quick_and_dirty`` is always False: an override asking for anything else raises.
        ``cpus`` (the runner's per-job CPUs) is the default of ``threads``; ``smoke``
        does not apply.

        Raises:
            ValueError: ``quick_and_dirty`` requested.
        """
        if overrides.get("quick_and_dirty") not in (None, False):
            raise ValueError("quick_and_dirty can never be set: it turns sorry into a proof")
        versions = getattr(probed, "versions", None) or {}
        opts = {"session_dirs": [], "theorem": None, "theorem_line": 0, "theory": None,
                "allowed_assumptions": [], "timeout_s": DEFAULT_WALL_S - 30, "threads": cpus,
                "wall_s": DEFAULT_WALL_S, "isabelle_version": versions.get("isabelle"),
                "verifier_module": f"{NAME}/{MODULE_VERSION}"}
        opts.update(overrides)
        opts["quick_and_dirty"] = False
        return opts

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """``sh -c 'isabelle build ... VerikitCandidate; isabelle log -v -U ...'`` (see the
        module docstring); no files to collect."""
        build = ["isabelle", "build", "-o", "quick_and_dirty=false",
                 "-o", f"timeout={int(options.get('timeout_s') or 0)}",
                 "-o", f"threads={int(options.get('threads') or 1)}"]
        for d in options.get("session_dirs") or ():
            build += ["-d", d]
        build += ["-d", ".", SESSION]
        logs = " || ".join(shlex.join(["isabelle", tool, "-v", "-U", SESSION]) for tool in LOG_TOOLS)
        script = f"{shlex.join(build)}; rc=$?; {logs}; exit $rc"
        return ["sh", "-c", script], {}, []

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Verdict of one build (+ log) run.

        The sandbox's own endings (did not start, wall-time or memory limit) are mapped
        by the executor before this is called (:func:`harness.model.termination`).
        ``infra_error`` (session structure, heaps or libraries broken; a failure without
        ``***`` diagnostics), ``timeout`` (Isabelle's own session timeout), ``failed`` (output over the cap), ``rejected``
        ("Cheating requires quick_and_dirty mode", i.e. ``sorry``; no ``thm_oracles``
        report or several; an oracle not in ``options["allowed_assumptions"]``),
        ``invalid`` (any other error: the first one with ``file:line``; ``extra.task_loads``
        False when it lies before the theorem), ``verified`` otherwise.
        ``extra["assumptions"]``: the reported oracles.
        """
        options = options or {}
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        if proc.output_truncated:
            return VerifierResult("failed", "output exceeded the cap; the run was stopped")
        errors = [e.strip() for e in _ERROR.findall(log) if e.strip()]
        messages = [f"*** {e}" for e in errors[:20]]
        failed = proc.returncode != 0 or "Unfinished session" in log or re.search(r"\bFAILED\b", log)
        if failed:
            return _failure(proc, log, errors, messages, options)
        oracles = oracle_reports(log)
        extra = {"assumptions": oracles[0] if len(oracles) == 1 else [], "task_loads": True}
        if not oracles:
            return VerifierResult("rejected", "no thm_oracles report in the session log (fail closed)",
                                  messages=messages, extra=extra)
        if len(oracles) > 1:
            return VerifierResult("rejected", f"{len(oracles)} thm_oracles reports (one is expected)",
                                  messages=messages, extra=extra)
        allowed = set(options.get("allowed_assumptions") or [])
        bad = [o for o in oracles[0] if o.rsplit(".", 1)[-1] in ("skip_proof",) or o not in allowed]
        if bad:
            return VerifierResult("rejected", "the theorem depends on oracle(s): " + ", ".join(bad),
                                  messages=messages, extra=extra)
        return VerifierResult("verified", "proof checked by Isabelle; no oracles", messages=messages, extra=extra)


def _relative(name: str) -> bool:
    return "/" in name and not name.startswith(("/", "~", "$"))


def _failure(proc: ProcResult, log: str, errors: list[str], messages: list[str], options: dict) -> VerifierResult:
    if not errors:
        return VerifierResult("infra_error", f"isabelle build failed (exit {proc.returncode}) without an error "
                              f"message: {log.strip()[-300:]}", messages=messages)
    if any(_CHEAT in e for e in errors):
        return VerifierResult("rejected", "the proof uses sorry (Cheating requires quick_and_dirty mode)",
                              messages=messages, extra={"assumptions": ["skip_proof"], "task_loads": True})
    if any(re.fullmatch(r"Timeout\b.*", e) for e in errors):
        return VerifierResult("timeout", "Isabelle's session timeout was reached", messages=messages)
    infra = next((e for e in errors if _INFRA.search(e)), None)
    if infra:
        return VerifierResult("infra_error", f"the image's Isabelle sessions are broken: {infra}", messages=messages,
                              extra={"kit_side": True})  # the image's side: executor.derive keeps infra_error
    theory = options.get("theory")
    first = next((e for e in errors if _POS.search(e)), errors[0])
    pos = _POS.search(first)
    if pos and theory and not pos.group(2).endswith(f"{theory}.thy"):
        return VerifierResult("infra_error", f"error in a library theory (not the task): {first}", messages=messages,
                              extra={"kit_side": True})
    line = int(pos.group(1)) if pos else None
    loads = line is None or line >= int(options.get("theorem_line") or 0)
    where = f"{posixpath.basename(pos.group(2))}:{line}: " if pos else ""
    msg = _POS.sub("", first).strip()
    reason = f"{where}{msg}" if loads else f"the task file itself does not load: {where}{msg}"
    return VerifierResult("invalid", reason, messages=messages, extra={"task_loads": loads})


def oracle_reports(log: str) -> list[list[str]]:
    """The oracle names of each ``thm_oracles`` report in ``log``: a line ``oracles:``
    followed by indented items ``\\<bullet> NAME`` / ``• NAME`` (optionally ``: PROP``,
    continued on more indented lines)."""
    lines = log.splitlines()
    out = []
    for i, line in enumerate(lines):
        if line.strip() != "oracles:":
            continue
        names = []
        for item in lines[i + 1:]:
            if not item.strip() or not item[:1].isspace():
                break
            m = re.match(r"\s*(?:•|\\<bullet>)\s*([^\s:]+)", item)
            if m:
                names.append(m.group(1))
        out.append(names)
    return out
