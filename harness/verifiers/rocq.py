"""Rocq/Coq proof checker (``coqc``), with the prover's own assumption report.

Command line, in the job's scratch directory of the ``ntp4vc-rocq`` image (Coq 8.20.1 and
stdpp 1.11 from Debian trixie, the NTP4VC Rocq library compiled at
:data:`LIBRARY_ROOT`; see ``docs/ntp4vc-rocq-adaptation.md``)::

    coqc -q -w <quiet warnings> -Q <dir> <logical name> ... candidate.v

where ``candidate.v`` is the task file with the candidate proof in place of its
``Admitted.`` (:meth:`Rocq.splice`), followed by::

    Redirect "verikit_assumptions" Print Assumptions <theorem>.

``Redirect`` (Coq reference manual, "Controlling display": ``Redirect "file" command``)
writes the command's output to ``verikit_assumptions.out`` in the working directory, so
the report cannot be mixed with what the proof itself prints. ``Print Assumptions``
(manual, "Print Assumptions qualid") lists the axioms a closed constant depends on; its
output is either ``Closed under the global context`` or sections such as ``Axioms:``
(``name : type``, names at column 0, types indented on the next lines), ``Section
Variables:``, and for kernel checks that were switched off ``Constants/Inductives relying
on type-in-type:``, ``... relying on unsafe (co)fixpoints:``/``... assuming the guard
condition`` and ``Inductives whose positivity is assumed:``. Every section other than
``Axioms:`` makes the candidate ``rejected`` (fail closed), and so does an axiom that is
the theorem itself (an ``Admitted`` proof) or is not in the job's allow-list.

Errors are reported by coqc as ``File "./candidate.v", line L, characters A-B:`` followed
by ``Error: ...`` (exit code 1); observed with Coq 8.20.1 in the rocq image (recorded in
tests/recorded/rocq/).
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
from dataclasses import dataclass

from ..model import Limits, ProcResult, VerifierResult
from .proof import Theorem, blank_span, nested_end, statement_sha256

NAME = "rocq"
TOOLCHAIN = "rocq"
#: Version of this module's command line, splice and parser (part of every job key).
MODULE_VERSION = "1"
SOURCE = "candidate.v"
REPORT_NAME = "verikit_assumptions"
REPORT = REPORT_NAME + ".out"
#: Where the ``ntp4vc-rocq`` image keeps the shim and the compiled NTP4VC library.
LIBRARY_ROOT = "/opt/verikit/ntp4vc"
#: Warnings silenced on every coqc call: they concern the 8.20 vs 9.0 adaptation
#: (deprecated library files, notation overrides) or the ``Redirect`` output directory.
QUIET_WARNINGS = "-deprecated-library-file,-deprecated,-notation-overridden,-default-output-directory"
DEFAULT_WALL_S = 300

THEOREM_KEYWORDS = ("Theorem", "Lemma", "Fact", "Remark", "Corollary", "Proposition", "Example")
_ASSUMPTION_KEYWORDS = {"Axiom", "Axioms", "Parameter", "Parameters", "Conjecture", "Conjectures",
                        "Hypothesis", "Hypotheses", "Variable", "Variables"}
_PREFIXES = {"Local", "Global", "Polymorphic", "Monomorphic", "Private", "Program", "Cumulative",
             "NonCumulative", "Export"}
#: Identifiers a candidate proof may not contain (outside comments and strings), and why.
FORBIDDEN = {
    "admit": "tactic admit (gives up a goal)",
    "give_up": "tactic give_up (gives up a goal)",
    "Admitted": "Admitted (ends the proof without one)",
    "Admit": "Admit Obligations (admits goals)",
    "Abort": "Abort (drops the theorem)",
    "Save": "Save (ends a proof under another name)",
    **{k: f"{k} (declares an assumption)" for k in sorted(_ASSUMPTION_KEYWORDS)},
    "Context": "Context (declares assumptions)",
    "Unset": "Unset (can switch off kernel checks: guard, positivity, universes)",
    "bypass_check": "#[bypass_check] (switches off kernel checks)",
    "Require": "Require (loads other compiled files)",
    "Load": "Load (runs another file)",
    "Declare": "Declare ML Module / Declare (extends the checker)",
    "Redirect": "Redirect (would tamper with the assumption report)",
    "Assumptions": "Print Assumptions (the kit adds its own)",
    "Reset": "Reset (undoes declarations)",
    "Back": "Back (undoes declarations)",
    "BackTo": "BackTo (undoes declarations)",
    "Drop": "Drop (leaves the checker)",
    "Module": "Module (opens a new scope)",
    "Section": "Section (opens a new scope)",
    "Extraction": "Extraction (writes files)",
    "Cd": "Cd (changes directory)",
}
_CLOSE = {"Qed", "Defined"}
_LOCATION = re.compile(r'^File "([^"]*)", line (\d+), characters (\d+)-(\d+):', re.M)


@dataclass(frozen=True)
class Sentence:
    """One Coq sentence: ``text`` (comments blanked), ``start``/``end`` offsets in the
    source (``end`` just after the final dot), ``line`` (1-based, of its first token)."""

    text: str
    start: int
    end: int
    line: int

    @property
    def words(self) -> list[str]:
        return re.findall(r"[A-Za-z_][\w']*", self.text)


def blank_comments(text: str, *, strings: bool = False) -> str:
    """``text`` with every (nested) ``(* ... *)`` comment replaced by spaces (newlines
    kept), and with string literals too when ``strings``; offsets are preserved.

    Raises:
        ValueError: an unterminated comment or string (message gives the line).
    """
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith("(*", i):
            j = nested_end(text, i, ("(*",), ("*)",))
            if j < 0:
                raise ValueError(f"line {text.count(chr(10), 0, i) + 1}: unterminated comment")
            blank_span(out, i, j)
            i = j
        elif text[i] == '"':
            j = i + 1
            while True:
                j = text.find('"', j)
                if j < 0:
                    raise ValueError(f"line {text.count(chr(10), 0, i) + 1}: unterminated string")
                if text.startswith('""', j):  # "" is an escaped quote in Coq strings
                    j += 2
                    continue
                break
            if strings:
                blank_span(out, i, j + 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def sentences(text: str) -> list[Sentence]:
    """Split Coq source into sentences: a sentence ends at a ``.`` followed by white space
    or the end of the text, outside comments and strings (``..`` and qualified names such
    as ``Why3.Base`` do not end one). Raises ValueError as :func:`blank_comments`."""
    code = blank_comments(text, strings=True)
    out, start = [], 0
    for m in re.finditer(r"(?<!\.)\.(?=\s|$)", code):
        end = m.end()
        chunk = code[start:end]
        if chunk.strip():
            lead = len(chunk) - len(chunk.lstrip())
            s = start + lead
            out.append(Sentence(code[s:end], s, end, text.count("\n", 0, s) + 1))
        start = end
    if code[start:].strip():
        s = start + len(code[start:]) - len(code[start:].lstrip())
        out.append(Sentence(code[s:], s, len(code), text.count("\n", 0, s) + 1))
    return out


def _keyword(sentence: Sentence) -> tuple[str | None, list[str]]:
    """The sentence's command keyword (after attributes and Local/Global/Program...) and
    the words that follow it."""
    body = re.sub(r"^#\[[^\]]*\]\s*", "", sentence.text)
    words = re.findall(r"[A-Za-z_][\w']*", body)
    while words and words[0] in _PREFIXES:
        words = words[1:]
    return (words[0], words[1:]) if words else (None, [])


class Rocq:
    """Rocq/Coq proof checker. ``name = "rocq"``, toolchain ``rocq``."""

    name = NAME
    toolchain = TOOLCHAIN
    language = "rocq"
    source = SOURCE

    def __init__(self) -> None:
        #: Axiom names declared by the installed Coq/stdpp sources (set by :meth:`prepare`).
        self.library_axioms: set[str] = set()

    # --- task files -----------------------------------------------------------------

    def theorem(self, task_text: str, where: str) -> Theorem:
        """The task's theorem and its ``Admitted.`` placeholder.

        The task file must contain exactly one theorem-like declaration (``Theorem``,
        ``Lemma``...) followed directly by ``Admitted.`` (optionally after ``Proof.``).

        Raises:
            ValueError: ``where:line: ...`` when that is not the case.
        """
        try:
            sents = sentences(task_text)
        except ValueError as exc:
            raise ValueError(f"{where}:{exc}") from None
        found = [(i, s) for i, s in enumerate(sents) if _keyword(s)[0] in THEOREM_KEYWORDS]
        if len(found) != 1:
            line = found[1][1].line if len(found) > 1 else 1
            raise ValueError(f"{where}:{line}: expected exactly one theorem, found {len(found)}")
        i, stmt = found[0]
        rest = sents[i + 1:]
        if rest and _keyword(rest[0])[0] == "Proof" and rest[0].text.strip() == "Proof.":
            rest = rest[1:]
        if not rest or rest[0].text.strip() != "Admitted." or len(rest) != 1:
            raise ValueError(f"{where}:{stmt.line}: the theorem must be followed by 'Admitted.' and nothing else")
        name = _keyword(stmt)[1][0]
        text = task_text[stmt.start:stmt.end]
        return Theorem(name=name, statement=text, statement_sha256=statement_sha256(text),
                       start=rest[0].start, end=rest[0].end, line=stmt.line)

    def split_full(self, text: str, name: str) -> Theorem | None:
        """For a whole-file candidate: its declaration of theorem ``name`` (statement and
        hash; ``start`` = end of the statement, where its proof begins; ``end`` = end of
        text), or None when it has none or cannot be split into sentences."""
        try:
            sents = sentences(text)
        except ValueError:
            return None
        for s in sents:
            kw, rest = _keyword(s)
            if kw in THEOREM_KEYWORDS and rest[:1] == [name]:
                st = text[s.start:s.end]
                return Theorem(name, st, statement_sha256(st), s.end, len(text), s.line)
        return None

    def declared_axioms(self, text: str) -> set[str]:
        """Names ``text`` declares without proof: ``Axiom``/``Parameter``/``Conjecture``/
        ``Hypothesis``/``Variable`` (plural forms and ``(a b : T)`` groups included), and
        for a ``Program`` definition in a file with ``Admit Obligations`` the glob
        ``<name>_obligation_*`` (the names Coq gives admitted obligations)."""
        names: set[str] = set()
        program_defs: list[str] = []
        admits = False
        for s in sentences(text):
            kw, rest = _keyword(s)
            if kw in _ASSUMPTION_KEYWORDS:
                body = re.sub(r"^#\[[^\]]*\]\s*", "", s.text)
                body = body.split(None, 1)[1] if len(body.split(None, 1)) > 1 else ""
                while body.split(None, 1)[0:1] and body.split(None, 1)[0] in _PREFIXES | _ASSUMPTION_KEYWORDS:
                    body = body.split(None, 1)[1]
                if body.lstrip().startswith("("):
                    for group in re.findall(r"\(\s*([^():]*?)\s*:", body):
                        names.update(group.split())
                else:
                    names.update(body.split(":", 1)[0].split())
            elif s.text.lstrip().startswith("Program") and rest:
                program_defs.append(rest[0] if kw in ("Fixpoint", "Definition", "Instance", "Lemma",
                                                      "CoFixpoint") else kw)
            elif kw == "Admit" and rest[:1] == ["Obligations"]:
                admits = True
        if admits:
            names.update(f"{d}_obligation_*" for d in program_defs)
        return {n for n in names if re.fullmatch(r"[\w'*]+", n)}

    def forbidden(self, proof: str) -> list[str]:
        """Fail-closed scan of a candidate proof (the text that replaces ``Admitted.``).

        Comments and strings are ignored. Findings: any identifier of :data:`FORBIDDEN`;
        a proof that does not end with exactly one ``Qed.``/``Defined.`` as its last
        sentence (anything after it would be a new declaration); a new theorem-like
        declaration. An unterminated comment or string is a finding too.
        """
        try:
            sents = sentences(proof)
        except ValueError as exc:
            return [f"candidate: {exc}"]
        found = []
        words = re.findall(r"[A-Za-z_][\w']*", blank_comments(proof, strings=True))
        for w in dict.fromkeys(words):
            if w in FORBIDDEN:
                found.append(FORBIDDEN[w])
        closes = [i for i, s in enumerate(sents) if _keyword(s)[0] in _CLOSE and len(s.words) == 1]
        if not closes:
            found.append("the proof does not end with Qed. or Defined.")
        elif closes != [len(sents) - 1]:
            found.append("Qed./Defined. must be the last sentence and appear once")
        if any(_keyword(s)[0] in THEOREM_KEYWORDS for s in sents):
            found.append("declares a new theorem")
        return found

    def splice(self, task_text: str, theorem: Theorem, proof: str) -> str:
        """The file to check: the task with ``proof`` in place of ``Admitted.``, then the
        ``Redirect ... Print Assumptions <theorem>.`` report."""
        return (task_text[:theorem.start] + proof.strip() + "\n"
                + f'Redirect "{REPORT_NAME}" Print Assumptions {theorem.name}.\n')

    # --- running ---------------------------------------------------------------------

    def prepare(self, sandbox, probed) -> dict:
        """Read the axiom names declared in the installed Coq and stdpp sources (one
        ``grep`` in the sandbox) into :attr:`library_axioms`; no files to ship."""
        script = ('W=$(coqc -where) && grep -rhoE "^[[:space:]]*(Local |Global )?(Axiom|Parameter|Conjecture)s?'
                  '[[:space:]]+[A-Za-z_][A-Za-z0-9_\']*" "$W/theories" "$W/user-contrib" | awk "{print \\$NF}"')
        res = sandbox.run(["sh", "-c", script], limits=Limits(wall_s=120))
        if res.returncode == 0:
            self.library_axioms = {w for w in res.stdout.split() if w not in _ASSUMPTION_KEYWORDS}
        return {}

    def options(self, probed, *, smoke: bool = False, cpus: int = 1, **overrides) -> dict:
        """Options of a job: ``load_path`` (``[[dir, logical name], ...]``, set per task by
        the benchmark), ``allowed_assumptions`` (names, globs allowed), ``theorem``,
        ``theorem_line``, ``coq_version``, ``verifier_module``. ``smoke``/``cpus`` (the
        runner's generic arguments) do not apply to coqc and are ignored."""
        opts = {"load_path": [], "allowed_assumptions": [], "theorem": None, "theorem_line": 0,
                "coq_version": probed.versions.get("coq"), "warnings": QUIET_WARNINGS,
                "verifier_module": f"{NAME}/{MODULE_VERSION}",
                "library_axioms_sha256": hashlib.sha256(
                    "\n".join(sorted(self.library_axioms)).encode()).hexdigest()}
        opts.update(overrides)
        return opts

    def command(self, options: dict) -> tuple[list[str], dict[str, str], list[str]]:
        """``coqc -q -w <warnings> -Q dir name ... candidate.v``; collects the report."""
        argv = ["coqc", "-q", "-w", options.get("warnings", QUIET_WARNINGS)]
        for directory, logical in options["load_path"]:
            argv += ["-Q", directory, logical]
        argv.append(SOURCE)
        return argv, {}, [REPORT]

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Verdict of one coqc run.

        The sandbox's own endings (did not start, wall-time or memory limit) are mapped
        by the executor before this is called (:func:`harness.model.termination`).
        ``infra_error`` (coqc failed without an error message), ``invalid`` (coqc error:
        the first ``Error:`` with its line; ``extra.task_loads`` is False when the error
        is at or before the theorem, i.e. the task file itself does not load),
        ``rejected`` (assumption report missing, listing the theorem itself, a disabled
        kernel check, or an axiom outside the allow-list), ``verified`` otherwise.
        ``extra.assumptions``: the reported axiom names.
        """
        options = options or {}
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        errors = _errors(log)
        if proc.returncode != 0:
            if not errors:
                return VerifierResult("infra_error", f"coqc exited {proc.returncode} without an error message: "
                                      f"{log.strip()[-300:]}")
            line, msg = errors[0]
            loads = line is None or line > int(options.get("theorem_line") or 0)
            where = f"line {line}" if line else "unknown line"
            reason = (f"{where}: {msg}" if loads else
                      f"the task file itself does not load ({where}, before the proof): {msg}")
            return VerifierResult("invalid", reason, messages=[f"{SOURCE}:{ln}: {m}" for ln, m in errors[:5]],
                                  extra={"task_loads": loads})
        report = proc.files.get(REPORT)
        if report is None:
            return VerifierResult("rejected", "no assumption report (Print Assumptions did not run)",
                                  extra={"task_loads": True})
        sections = parse_assumptions(report.decode("utf-8", "replace"))
        axioms = sections.get("Axioms", [])
        extra = {"assumptions": axioms, "task_loads": True}
        problems = self.assumption_problems(sections, options)
        if problems:
            return VerifierResult("rejected", "; ".join(problems), extra=extra)
        return VerifierResult("verified", "proof checked by coqc; assumptions: "
                              + (", ".join(axioms) if axioms else "none (closed under the global context)"),
                              extra=extra)

    def assumption_problems(self, sections: dict[str, list[str]], options: dict) -> list[str]:
        """Why a ``Print Assumptions`` report is not acceptable (empty list: it is).

        Names are compared by their last component (the report prints the shortest
        unambiguous name, e.g. ``classic`` or ``ClassicalDedekindReals.sig_forall_dec``);
        allowed: ``options["allowed_assumptions"]`` (the task's and its library's own
        declarations, globs allowed) and :attr:`library_axioms`.
        """
        problems = [f"kernel check disabled: {k} {', '.join(v[:3])}" for k, v in sections.items() if k != "Axioms"]
        theorem = options.get("theorem")
        allowed = list(options.get("allowed_assumptions", []))
        for name in sections.get("Axioms", []):
            short = name.rsplit(".", 1)[-1]
            if theorem and short == theorem:
                problems.append(f"the theorem {theorem} itself is assumed (not proved)")
            elif short not in self.library_axioms and not any(fnmatch.fnmatchcase(short, a) for a in allowed):
                problems.append(f"unexpected axiom {name}")
        return problems


def parse_assumptions(report: str) -> dict[str, list[str]]:
    """``Print Assumptions`` output -> ``{section: [names]}`` (``{}`` when closed under
    the global context). Section headers are the unindented lines ``Axioms:`` or several
    words ending with ``:`` (``Section Variables:``, ``Constants/Inductives relying on
    ...:``); names are the unindented lines below them (``name : type``, ``name :`` or
    ``name`` with the type on the indented next lines)."""
    sections: dict[str, list[str]] = {}
    current = None
    for line in report.splitlines():
        if not line.strip() or line[0].isspace() or line.startswith("Closed under the global context"):
            continue
        head = line.rstrip()[:-1].strip() if line.rstrip().endswith(":") and " : " not in line else None
        if head is not None and (head == "Axioms" or " " in head):  # names have no spaces
            current = head
            sections.setdefault(current, [])
            continue
        name = line.split(" :", 1)[0].strip()
        if name:
            sections.setdefault(current or "Axioms", []).append(name)
    return sections


def _errors(log: str) -> list[tuple[int | None, str]]:
    """``[(line, first line of the message)]`` for each ``Error:`` in coqc's output."""
    out = []
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if "Error:" not in line:
            continue
        msg = line.split("Error:", 1)[1].strip()
        if not msg and i + 1 < len(lines):
            msg = lines[i + 1].strip()
        loc = None
        for back in range(i, max(-1, i - 4), -1):
            m = _LOCATION.match(lines[back])
            if m:
                loc = int(m.group(2))
                break
        out.append((loc, msg))
    return out
