"""Rocq/Coq proof checker (``coqc``), with the prover's own assumption report.

Command line, in the job's scratch directory of the ``ntp4vc-rocq`` image (Coq 8.20.1 and
stdpp 1.11 from Debian trixie, the NTP4VC Rocq library compiled at
:data:`LIBRARY_ROOT`; see ``docs/ntp4vc-rocq-adaptation.md``)::

    coqc -q -w <quiet warnings> -Q <dir> <logical name> ... candidate.v

(run as ``coqc ... -R . VerikitJob candidate.v && coqc ... -R . VerikitJob check.v``) where
``candidate.v`` is the task file with the candidate proof in place of its ``Admitted.``
and, on the theorem's own line, an admitted copy of the task's statement named
``verikit_task_statement`` (:meth:`Rocq.splice`); it is elaborated before the candidate's
text, so nothing the candidate writes can change it. ``check.v`` (:func:`check_file`)
loads the compiled candidate *without importing it* and reports on the task's theorem by
its fully qualified name::

    Require VerikitJob.candidate.
    Set Printing All.
    Redirect "verikit_assumptions" Print Assumptions VerikitJob.candidate.<theorem>.
    Redirect "verikit_statement" Check VerikitJob.candidate.<theorem>.
    Redirect "verikit_reference" Check VerikitJob.candidate.verikit_task_statement.

Because ``candidate`` is not imported, every constant the candidate file declares is
printed with a ``candidate.`` qualifier (``candidate.classic``), never under a library
axiom's short name; library constants are printed with their library's name
(``Classical_Prop.classic``); Coq 8.20 has no "Printing Fully Qualified" flag (checked
with the image's coqc). The two ``Check`` outputs (types under ``Printing All``: no
notations, implicit arguments shown, names unambiguous in one environment) must be equal:
otherwise the constant reported on is not the task's theorem (e.g. a hidden ``Abort``
followed by ``Definition <theorem> := I.``). Any error in ``check.v`` (the theorem does not
exist) and any missing report file make the candidate ``rejected`` (fail closed).

``Redirect`` (Coq reference manual, "Controlling display": ``Redirect "file" command``)
writes the command's output to ``<file>.out`` in the working directory, so
the report cannot be mixed with what the proof itself prints. ``Print Assumptions``
(manual, "Print Assumptions qualid") lists the axioms a closed constant depends on; its
output is either ``Closed under the global context`` or sections such as ``Axioms:``
(``name : type``, names at column 0, types indented on the next lines), ``Section
Variables:``, and for kernel checks that were switched off ``Constants/Inductives relying
on type-in-type:``, ``... relying on unsafe (co)fixpoints:``/``... assuming the guard
condition`` and ``Inductives whose positivity is assumed:``. Every section other than
``Axioms:`` makes the candidate ``rejected`` (fail closed), and so does an axiom that is
the theorem itself (an ``Admitted`` proof) or is not in the job's allow-list of fully
qualified names (:meth:`Rocq.assumption_problems`).

What the candidate contains is judged on Coq's own view, never by a kit word scan (issue
26): ``coqc -time`` prints every sentence it executed with its byte offsets and the command
as Coq parsed and re-printed it (:func:`time_lines`); ``check.v`` prints Coq's grammar of
commands (:func:`command_heads`), so each sentence is classified as Coq read it
(:func:`classify`: a command must be on :data:`ALLOWED_COMMANDS`; a hypothesis named
``Back`` is no command); the kit's own segmentation (:func:`sentences`, still used to split
whole-file candidates) must agree with Coq's (:func:`segmentation_problems`); the proof
term (``Print``) must avoid the constructs of :data:`SOUNDNESS_BUGS`; and ``coqchk``
re-checks the compiled file independently. The kit's lexer reads comments and strings as
Coq does (``parsing/cLexer.ml``): comments nest, and a ``"`` inside a comment starts a
string in which ``(*`` and ``*)`` do not count.

Errors are reported by coqc as ``File "./candidate.v", line L, characters A-B:`` followed
by ``Error: ...`` (exit code 1); observed with Coq 8.20.1 in the rocq image (recorded in
tests/recorded/rocq/).
"""

from __future__ import annotations

import fnmatch
import hashlib
import itertools
import re
import shlex
from dataclasses import dataclass

from ..model import Limits, ProcResult, VerifierResult
from ..toolchains import toolchain_spec
from .proof import Theorem, blank_span, nested_end, statement_sha256, string_end

NAME = "rocq"
TOOLCHAIN = "rocq"
#: Version of this module's command line, splice and parser (part of every job key).
MODULE_VERSION = "3"
SOURCE = "candidate.v"
#: The kit's report file, compiled after the candidate (:func:`check_file`).
CHECK = "check.v"
#: Module name of the candidate file, and the logical root both files are compiled under.
MODULE = "candidate"
JOB_ROOT = "VerikitJob"
#: Name of the admitted copy of the task's statement that :meth:`Rocq.splice` adds.
REFERENCE = "verikit_task_statement"
REPORT_NAME = "verikit_assumptions"
REPORT = REPORT_NAME + ".out"
STATEMENT = "verikit_statement.out"
#: ``Print`` of the theorem (its proof term, under ``Printing All``) and Coq's own grammar.
BODY = "verikit_body.out"
GRAMMAR = "verikit_grammar.out"
#: The independent kernel re-check: ``coqchk``'s output and exit status.
COQCHK_LOG = "verikit_coqchk.log"
COQCHK_RC = "verikit_coqchk.rc"
#: Grammar entries whose alternatives start a vernacular command (``Print Grammar``).
COMMAND_ENTRIES = ("command", "gallina", "gallina_ext", "syntax_command", "query_command", "vernac_control")
#: Entries that only name the head tokens of other entries' rules (expanded in place).
TOKEN_ENTRIES = ("thm_token", "def_token", "assumption_token", "assumptions_token", "finite_token",
                 "inductive_token", "enable_enable_disable")
#: Allow-list of the vernacular commands a candidate proof may contain, by their head as
#: Coq printed the parsed sentence (``coqc -time``), with why each is harmless. Everything
#: else that Coq's grammar parses as a command is ``rejected``, naming it.
ALLOWED_COMMANDS = {
    "Proof": "starts the proof (Proof., Proof using ..., Proof with ...)",
    "Qed": "ends the proof (must be the last sentence, once)",
    "Defined": "ends the proof (must be the last sentence, once)",
    "Ltac": "a local tactic definition (tactics build terms the kernel checks)",
    "Unshelve": "brings shelved goals back (they must still be proved)",
    "Check": "a query (prints only)",
    "Show": "a query (prints only)",
}
#: Attributes (``#[...]``, also Coq's print of ``Local``/``Global``) allowed on those commands.
ALLOWED_ATTRIBUTES = {"local", "global", "export"}
#: Controls (``vernac_control``) allowed before a sentence.
ALLOWED_CONTROLS = {"Time"}
REFERENCE_REPORT = "verikit_reference.out"
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
_CLOSE = {"Qed", "Defined"}
_LOCATION = re.compile(r'^File "([^"]*)", line (\d+), characters (\d+)-(\d+):', re.MULTILINE)
#: One line of ``coqc -time``: ``Chars <start> - <end> [<command as printed, blanks as ~>] <t> secs ...``
#: (offsets in bytes of the file; the print is Coq's ``Ppvernac`` of the parsed sentence,
#: cut to 30 characters + ``...``). Coq replaces every space, tab and newline of the print
#: by ``~``, so a real print has no space: the pattern is not anchored to a line start and
#: text the proof prints before a real line (without a newline) cannot swallow it.
_TIME = re.compile(r"Chars (\d+) - (\d+) \[([^ ]*)\] [0-9.]+ secs")
_SELECTOR = re.compile(r"^(?:all|par|!|\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*|\[[^\]~]*\]):~?")


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
            # strings inside comments are Coq strings: "(*" and "*)" in them do not count
            j = nested_end(text, i, ("(*",), ("*)",), quote='"')
            if j < 0:
                raise ValueError(f"line {text.count(chr(10), 0, i) + 1}: unterminated comment "
                                 "(or unterminated string inside it)")
            blank_span(out, i, j)
            i = j
        elif text[i] == '"':
            j = string_end(text, i)  # "" is an escaped quote in Coq strings
            if j < 0:
                raise ValueError(f"line {text.count(chr(10), 0, i) + 1}: unterminated string")
            if strings:
                blank_span(out, i, j)
            i = j
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
        #: Fully qualified names of the axioms the installed Coq/stdpp sources declare
        #: (``Coq.Logic.Classical_Prop.classic``; set by :meth:`prepare`).
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
        """No text scan: always ``[]``. What a Rocq candidate contains is judged on Coq's
        own parse of it, in :meth:`parse` (:func:`command_problems`: every sentence Coq
        executed, as Coq printed it, on :data:`ALLOWED_COMMANDS`), never by a kit lexer or
        word list (a hypothesis named ``Back`` is not a command)."""
        return []

    def proof_layout(self, task_text: str, theorem: Theorem, proof: str) -> dict:
        """Where the candidate's proof is in ``candidate.v`` (:meth:`splice`), in bytes
        (Coq's ``-time`` offsets are bytes): ``{"proof_start": offset, "kit_sentences":
        [[start, end], ...]}``, the kit's own segmentation of the proof (:func:`sentences`),
        which Coq's must agree with (:func:`segmentation_problems`); ``kit_sentences`` is
        None when the kit cannot segment it (an unterminated comment or string)."""
        at = task_text.rfind(theorem.statement, 0, theorem.start)
        head = task_text[:at] + reference_lemma(theorem) + " " + task_text[at:theorem.start]
        base = len(head.encode("utf-8"))
        text = proof.strip()
        try:
            sents = sentences(text)
        except ValueError:
            return {"proof_start": base, "kit_sentences": None}
        def off(i: int) -> int:
            return base + len(text[:i].encode("utf-8"))
        return {"proof_start": base, "kit_sentences": [[off(x.start), off(x.end)] for x in sents]}

    def splice(self, task_text: str, theorem: Theorem, proof: str) -> str:
        """``candidate.v``: the task with ``proof`` in place of ``Admitted.`` and, just
        before the theorem on the same line (line numbers unchanged), the admitted copy
        ``Lemma verikit_task_statement <binders> : <type>. Admitted.`` of its statement.

        Raises:
            ValueError: the statement does not start with a theorem keyword and the name.
        """
        at = task_text.rfind(theorem.statement, 0, theorem.start)
        if at < 0:
            raise ValueError(f"the statement of {theorem.name} is not in the task text")
        return (task_text[:at] + reference_lemma(theorem) + " " + task_text[at:theorem.start]
                + proof.strip() + "\n")

    def job_files(self, task_text: str, theorem: Theorem, proof: str) -> dict[str, str]:
        """The files of a job: ``candidate.v`` (:meth:`splice`) and ``check.v``
        (:func:`check_file`)."""
        return {SOURCE: self.splice(task_text, theorem, proof), CHECK: check_file(theorem.name)}

    # --- running ---------------------------------------------------------------------

    def prepare(self, sandbox, probed) -> dict:
        """Read the axioms declared in the installed Coq and stdpp sources (one ``grep``
        in the sandbox) into :attr:`library_axioms`, as fully qualified names
        (:func:`library_axiom_names`); no files to ship."""
        script = ('W=$(coqc -where) && echo "$W" && grep -rHoE "^[[:space:]]*(Local |Global )?'
                  '(Axiom|Parameter|Conjecture)s?[[:space:]]+[A-Za-z_][A-Za-z0-9_\']*" "$W/theories" "$W/user-contrib"')
        res = sandbox.run(["sh", "-c", script], limits=Limits(wall_s=120))
        if res.returncode == 0:
            self.library_axioms = library_axiom_names(res.stdout)
        return {}

    def options(self, probed, *, smoke: bool = False, cpus: int = 1, **overrides) -> dict:
        """Options of a job: ``load_path`` (``[[dir, logical name], ...]``, set per task by
        the benchmark), ``allowed_assumptions`` (fully qualified names, globs allowed: the
        task's own as ``candidate.<name>``, its library's as ``Why3.Base.<name>``), ``theorem``,
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
        """``sh -c 'coqc <flags> -time candidate.v && rm -f verikit_*.out && coqc <flags>
        check.v && { coqchk -silent -o <paths> -norec VerikitJob.candidate > verikit_coqchk.log
        2>&1; echo $? > verikit_coqchk.rc; }'`` with ``<flags>`` = ``-q -w <warnings> -Q dir
        name ... -R . VerikitJob`` (report files left by the candidate's own run are removed
        before the kit's). ``-time`` makes coqc print one line per sentence it executed, with
        its byte offsets and the command as Coq parsed and printed it (the view
        :func:`command_problems` judges); ``coqchk`` is Coq's independent kernel re-check of
        the compiled candidate (no VM/native machine; its dependencies are admitted). Collects
        the report files, the grammar, the proof term and coqchk's output. ``options["recheck"]``
        False (the gold: the task file with its placeholder, judged by whether it loads)
        leaves coqchk out, so the gold's cost and verdict are those of before."""
        paths = []
        for directory, logical in options["load_path"]:
            paths += ["-Q", directory, logical]
        paths += ["-R", ".", JOB_ROOT]
        flags = ["-q", "-w", options.get("warnings", QUIET_WARNINGS), *paths]
        coqc = " ".join(shlex.quote(a) for a in ["coqc", *flags])
        chk = " ".join(shlex.quote(a) for a in ["coqchk", "-silent", "-o", *paths, "-norec", f"{JOB_ROOT}.{MODULE}"])
        script = f"rm -f verikit_* && {coqc} -time {SOURCE} && rm -f verikit_*.out && {coqc} {CHECK}"
        if options.get("recheck", True):  # False only for the gold (the task file with its Admitted.)
            script += f" && {{ {chk} > {COQCHK_LOG} 2>&1; echo $? > {COQCHK_RC}; }}"
        return ["sh", "-c", script], {}, [REPORT, STATEMENT, REFERENCE_REPORT, BODY, GRAMMAR, COQCHK_LOG, COQCHK_RC]

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Verdict of one job (``candidate.v`` then ``check.v`` then ``coqchk``).

        The sandbox's own endings (did not start, wall-time or memory limit) are mapped
        by the executor before this is called (:func:`harness.model.termination`).
        ``failed`` (coqc exited non-zero without an error message: a crash, a signal, a
        stack overflow on the candidate's input belongs to the candidate, never
        ``infra_error``; ``memout`` when OCaml reports it ran out of memory), ``invalid`` (an
        error in ``candidate.v``: the first ``Error:`` with its line; ``extra.task_loads`` is
        False when the error is at or before the theorem, i.e. the task file itself does not
        load), ``rejected`` (an error in the kit's
        ``check.v``, e.g. the theorem does not exist; a report file missing; a sentence
        of the candidate that is not on the allow-list as Coq parsed it
        (:func:`command_problems`); Coq's segmentation disagreeing with the kit's
        (:func:`segmentation_problems`); a construct of a known soundness bug of the pinned
        Coq in the proof term (:func:`soundness_problems`); ``coqchk`` failing; the constant
        reported on does not have the task's statement; the report lists the theorem
        itself, a disabled kernel check, or an axiom outside the allow-list), ``verified``
        otherwise. ``extra.assumptions``: the reported axiom names as Coq printed them
        (``candidate.<name>`` for the file's own); ``extra.sentences``: the candidate's
        sentences as Coq printed them; ``extra.coqchk``: coqchk's exit status.
        """
        options = options or {}
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        errors = _errors(log)
        if proc.returncode != 0:
            if not errors and re.search(r"out of memory", log, re.IGNORECASE):  # OCaml's own allocation failure
                return VerifierResult("memout", f"coqc ran out of memory on the candidate (exit {proc.returncode}): "
                                      f"{log.strip()[-200:]}", extra={"task_loads": True, "crash": True})
            if not errors:
                return VerifierResult("failed", f"coqc exited {proc.returncode} without an error message (a crash "
                                      f"on the candidate's input is the candidate's failure): {log.strip()[-300:]}",
                                      extra={"task_loads": True, "crash": True})
            file, line, msg = errors[0]
            if file == CHECK:
                return VerifierResult("rejected", f"the kit's report on the task's theorem failed: {msg}",
                                      messages=[f"{CHECK}:{line}: {msg}"], extra={"task_loads": True})
            loads = line is None or line > int(options.get("theorem_line") or 0)
            where = f"line {line}" if line else "unknown line"
            reason = (f"{where}: {msg}" if loads else
                      f"the task file itself does not load ({where}, before the proof): {msg}")
            return VerifierResult("invalid", reason, messages=[f"{f or SOURCE}:{ln}: {m}" for f, ln, m in errors[:5]],
                                  extra={"task_loads": loads})
        report = proc.files.get(REPORT)
        if report is None:
            return VerifierResult("rejected", "no assumption report (Print Assumptions did not run)",
                                  extra={"task_loads": True})
        sections = parse_assumptions(report.decode("utf-8", "replace"))
        axioms = sections.get("Axioms", [])
        start = int(options.get("proof_start") or 0)
        ran = [t for t in time_lines(proc.stdout) if t[1] > start]  # the candidate's (and any straddling one)
        extra = {"assumptions": axioms, "task_loads": True, "sentences": [t[2] for t in ran][:200]}
        grammar = proc.files.get(GRAMMAR)
        heads, unknown = command_heads(grammar.decode("utf-8", "replace")) if grammar is not None else (set(), {"?"})
        commands = command_problems(ran, start, heads, unknown)
        segments = segmentation_problems(ran, start, options.get("kit_sentences", []))
        body = proc.files.get(BODY)
        bugs = (soundness_problems(body.decode("utf-8", "replace"), options) if body is not None
                else ["no proof term report (Print of the theorem did not run)"])
        rc = proc.files.get(COQCHK_RC)
        chk_log = (proc.files.get(COQCHK_LOG) or b"").decode("utf-8", "replace")
        extra["coqchk"] = int(rc.strip()) if rc is not None and rc.strip().isdigit() else None
        chk = ([] if extra["coqchk"] == 0 or not options.get("recheck", True) else
               [f"the independent kernel re-check (coqchk) failed (exit {extra['coqchk']}): {chk_log.strip()[-200:]}"])
        checks = [{"name": "commands-allow-listed", "ok": not commands,
                   "detail": "; ".join(commands) or f"{len(ran)} sentence(s) as Coq parsed them, all allowed"},
                  {"name": "segmentation-agrees", "ok": not segments, "detail": "; ".join(segments) or "kit = Coq"},
                  {"name": "no-known-soundness-bug", "ok": not bugs, "detail": "; ".join(bugs) or "none used"},
                  {"name": "coqchk", "ok": not chk, "detail": "; ".join(chk) or "coqchk re-checked the candidate"}]
        problems = (commands + segments + bugs + chk + self.statement_problems(proc.files, options)
                    + self.assumption_problems(sections, options))
        if problems:
            return VerifierResult("rejected", "; ".join(problems), extra=extra, checks=checks)
        return VerifierResult("verified", "proof checked by coqc and coqchk; statement = task's; assumptions: "
                              + (", ".join(axioms) if axioms else "none (closed under the global context)"),
                              extra=extra, checks=checks)

    def statement_problems(self, files: dict[str, bytes], options: dict) -> list[str]:
        """Why the constant the report describes may not be the task's theorem (empty
        list: its type, printed by ``Check`` under ``Printing All``, equals that of the
        admitted copy of the task's statement elaborated before the candidate's text).
        A missing or unreadable report file is a problem (fail closed)."""
        got, ref = files.get(STATEMENT), files.get(REFERENCE_REPORT)
        if got is None or ref is None:
            return ["no statement report (Check of the theorem did not run)"]
        t_got, t_ref = printed_type(got.decode("utf-8", "replace")), printed_type(ref.decode("utf-8", "replace"))
        if t_got is None or t_ref is None:
            return ["unreadable statement report"]
        if t_got != t_ref:
            return [(f"the constant {MODULE}.{options.get('theorem')} does not have the task's statement "
                     f"(it has type {t_got[:120]!r}, the task's is {t_ref[:120]!r})")]
        return []

    def assumption_problems(self, sections: dict[str, list[str]], options: dict) -> list[str]:
        """Why a ``Print Assumptions`` report (read in ``check.v``) is not acceptable
        (empty list: it is).

        Names are judged by what they denote, not by their last component: a name with a
        ``candidate`` qualifier belongs to the job's file and is allowed only when its
        fully qualified form (``candidate.<name>``) matches an entry of
        ``options["allowed_assumptions"]`` that starts with ``candidate.`` (the task's own
        declarations); any other name belongs to a library the job loads and is allowed
        when it denotes an entry of ``allowed_assumptions`` or :attr:`library_axioms`
        (:func:`library_name_matches`). The theorem itself is never allowed.
        """
        problems = [f"kernel check disabled: {k} {', '.join(v[:3])}" for k, v in sections.items() if k != "Axioms"]
        theorem = options.get("theorem")
        allowed = list(options.get("allowed_assumptions", []))
        local_allowed = [a for a in allowed if a.startswith(MODULE + ".")]
        library = [a for a in allowed if not a.startswith(MODULE + ".")] + sorted(self.library_axioms)
        for name in sections.get("Axioms", []):
            local = local_name(name)
            if local is not None:
                if theorem and local == f"{MODULE}.{theorem}":
                    problems.append(f"the theorem {theorem} itself is assumed (not proved)")
                elif local == f"{MODULE}.{REFERENCE}":
                    problems.append(f"unexpected axiom {name} (the kit's admitted copy of the statement)")
                elif not any(fnmatch.fnmatchcase(local, a) for a in local_allowed):
                    problems.append(f"unexpected axiom {name} (declared by the candidate)")
            elif not any(library_name_matches(name, a) for a in library):
                problems.append(f"unexpected axiom {name}")
        return problems


#: Known soundness bugs of the pinned Coq 8.20.1 (Coq's ``dev/doc/critical-bugs.md``), the
#: construct that triggers each, and what the kit does, read from images/toolchains.json
#: (toolchain ``rocq``, key ``soundness_bugs``: the one place they are written). ``rule``:
#: ``no-fix-in-proof-term`` (the theorem's proof term, as Coq prints it, has no ``fix``/
#: ``cofix``: the guard checker of 8.16-9.0.0 accepts wrong fixpoints, coqchk too);
#: ``coqchk`` (coqchk, which has no VM/native machine and rejects the file, re-checks it);
#: ``command-not-allowed`` (the triggering commands are not on :data:`ALLOWED_COMMANDS`).
SOUNDNESS_BUGS = toolchain_spec("rocq")["soundness_bugs"]
_FIX = re.compile(r"(?<![\w'.])(co)?fix(?![\w'])")


def time_lines(stdout: str) -> list[tuple[int, int, str]]:
    """``[(start, end, printed)]`` from ``coqc -time`` output: each sentence coqc executed,
    its byte offsets in the file and the command as Coq printed its parse (blanks shown as
    ``~``, cut to 30 characters followed by ``...``). Lines the proof itself prints may
    imitate these; they can only add sentences to judge (overlaps are rejected by
    :func:`segmentation_problems`)."""
    return [(int(m.group(1)), int(m.group(2)), m.group(3)) for m in _TIME.finditer(stdout)]


def command_heads(grammar: str) -> tuple[set[str], set[str]]:
    """From ``Print Grammar`` output (entries :data:`COMMAND_ENTRIES` and
    :data:`TOKEN_ENTRIES`): the set of words that start a vernacular command in this Coq
    with the plugins the job loaded (``Abort``, ``Theorem``, ``Require``...), and the set
    of rule-head non-terminals that were not printed (non-empty: the grammar could not be
    read completely; the judge then treats every sentence outside the allow-list as an
    unclassified command, fail closed)."""
    entries: dict[str, list[str]] = {}
    current = None
    for line in grammar.splitlines():
        m = re.match(r"^Entry (\w+) is", line)
        if m:
            current = entries.setdefault(m.group(1), [])
            continue
        m = re.match(r"^  [\[|] (.*)", line)
        if current is not None and m:
            current.append(re.sub(r"(\s*\])+$", "", m.group(1).split(";")[0]).strip())
    heads: set[str] = set()
    unknown: set[str] = set()
    for name in COMMAND_ENTRIES:
        if name not in entries:
            unknown.add(name)
        for first in entries.get(name, []):
            tok = re.fullmatch(r'(?:IDENT )?"([^"]+)"', first.split(" LEVEL")[0].strip())
            if tok:
                heads.add(tok.group(1))
            elif first in TOKEN_ENTRIES and first in entries:
                for sub in entries[first]:
                    t = re.fullmatch(r'(?:IDENT )?"([^"]+)"', sub.strip())
                    (heads.add(t.group(1)) if t else unknown.add(f"{first}:{sub}"))
            elif first not in ("SELF", "EOI", "vernac_control", "decorated_vernac", "quoted_attributes"):
                unknown.add(first)
    return heads, unknown


def _attributes(text: str) -> tuple[list[str], str] | None:
    """``#[a, b(...)]`` prefixes of a printed command -> (attribute texts, rest); None
    when a bracket is not closed (the print was cut)."""
    attrs: list[str] = []
    while text.startswith("#["):
        depth, i = 0, 1
        while i < len(text):
            depth += text[i] in "[(" and 1 or 0
            depth -= text[i] in "])" and 1 or 0
            if depth == 0:
                break
            i += 1
        if i >= len(text):
            return None
        parts, level, cur = [], 0, ""
        for ch in text[2:i]:
            level += ch in "([" and 1 or 0
            level -= ch in ")]" and 1 or 0
            if ch == "," and level == 0:
                parts.append(cur.strip("~ "))
                cur = ""
            else:
                cur += ch
        parts.append(cur.strip("~ "))
        attrs += [a for a in parts if a]
        text = text[i + 1:].lstrip("~")
    return attrs, text


def classify(printed: str, heads: set[str], unknown: set[str]) -> str | None:
    """Why one sentence, as Coq printed its parse (a ``-time`` line), is not allowed in a
    candidate proof, or None when it is: a command on :data:`ALLOWED_COMMANDS` (with
    attributes on :data:`ALLOWED_ATTRIBUTES` and controls on :data:`ALLOWED_CONTROLS`), a
    bullet or brace, or a tactic (a sentence whose head is not a command of Coq's grammar,
    :func:`command_heads`), optionally after a goal selector. A print cut before its head
    is shown is not allowed (fail closed)."""
    shown = printed.replace("~", " ")
    cut = printed.endswith("...")
    text = printed[:-3] if cut else printed
    split = _attributes(text)
    if split is None:
        return f"attributes not fully visible in Coq's print {shown!r}"
    attrs, text = split
    bad = [a for a in attrs if a not in ALLOWED_ATTRIBUTES]
    if bad:
        return f"attribute #[{', '.join(bad)}] is not allowed (in {shown!r})"
    while True:
        m = re.match(r"^([A-Za-z_][\w']*)(~|$)", text)
        if not (m and m.group(2) == "~" and m.group(1) in ALLOWED_CONTROLS | {"Fail", "Succeed", "Redirect",
                                                                                 "Timeout", "Instructions"}):
            break
        if m.group(1) not in ALLOWED_CONTROLS:
            return f"control {m.group(1)} is not allowed (in {shown!r})"
        text = text[m.end():]
    sel = _SELECTOR.match(text)
    if sel:
        text = text[sel.end():]
    if re.fullmatch(r"[-+*]+|\{|\}", text.rstrip(".")):
        return None if not attrs else f"attributes on a bullet ({shown!r})"
    m = re.match(r"^[A-Za-z_][\w']*", text)
    if not m:
        if not text:
            return f"nothing visible in Coq's print {shown!r}"
        return None if not attrs else f"attributes on a tactic ({shown!r})"  # ( [> ltac: ... : a tactic expression
    word = m.group(0)
    if cut and m.end() == len(text):
        return f"the command is cut in Coq's print {shown!r}"
    if word in ALLOWED_COMMANDS and not sel:
        return None
    if word in heads or (unknown and not sel):
        return f"command {word} is not allowed (Coq parsed {shown!r})"
    return None if not attrs else f"attributes on a tactic ({shown!r})"


def command_problems(ran: list[tuple[int, int, str]], proof_start: int, heads: set[str],
                     unknown: set[str]) -> list[str]:
    """Why the candidate's sentences (``-time`` lines at or after ``proof_start``) are not
    acceptable (empty list: they are): each must pass :func:`classify`, and exactly one
    ``Qed.``/``Defined.`` must end the proof as its last sentence. An empty grammar (the
    report is missing) rejects every command outside the allow-list."""
    own = sorted(t for t in ran if t[0] >= proof_start)
    problems = [f"{p} (bytes {a}-{b})" for a, b, pr in own if (p := classify(pr, heads, unknown))]
    closes = [i for i, (_, _, pr) in enumerate(own) if pr in ("Qed.", "Defined.")]
    if not closes:
        problems.append("the proof does not end with Qed. or Defined. (Coq's view)")
    elif closes != [len(own) - 1]:
        problems.append("Qed./Defined. must be the last sentence and appear once (Coq's view)")
    return problems


def segmentation_problems(ran: list[tuple[int, int, str]], proof_start: int, kit: list | None) -> list[str]:
    """Where the kit's segmentation of the candidate (``kit``: ``[[start, end]]`` bytes,
    :meth:`Rocq.proof_layout`) disagrees with Coq's (``ran``, the ``-time`` lines): a Coq
    sentence straddling the proof's start (the statement the kit split off is not the one
    Coq read), overlapping Coq sentences, or a kit sentence that does not start and end
    where Coq sentences do (a bullet or brace may share a kit sentence with what follows).
    ``kit`` None: the kit could not segment the proof (Coq could)."""
    out = []
    if any(a < proof_start < b for a, b, _ in ran):
        out.append("a sentence Coq read crosses the start of the proof (the statement is not where the kit split it)")
    own = sorted((a, b) for a, b, _ in ran if a >= proof_start)
    if any(b1 > a2 for (_, b1), (a2, _) in itertools.pairwise(own)):
        out.append("overlapping sentences in Coq's output")
    if kit is None:
        return out + ["the kit cannot segment the proof (unterminated comment or string) but Coq ran it"]
    starts, ends = {a for a, _ in own}, {b for _, b in own}
    bad = [(a, b) for a, b in kit if a not in starts or b not in ends]
    if bad:
        out.append(f"the kit's sentences disagree with Coq's at bytes {bad[0][0]}-{bad[0][1]}")
    return out


def soundness_problems(body: str, options: dict) -> list[str]:
    """Constructs of :data:`SOUNDNESS_BUGS` in the theorem's proof term as Coq printed it
    (``Print`` under ``Printing All``: ``name =\n<term>\n     : <type>``): a ``fix`` or
    ``cofix`` (the guard-checker bugs; an honest proof does induction through the
    library's recursors). An unreadable print is a problem (fail closed)."""
    m = re.search(r"=\s", body)
    cut = body.rfind("\n     : ")
    if not m or cut < m.end():
        return ["unreadable proof term report"]
    term = body[m.end():cut]
    if _FIX.search(term):
        ids = ", ".join(b["id"] for b in SOUNDNESS_BUGS if b["rule"] == "no-fix-in-proof-term")
        return [f"the proof term contains a fix/cofix (known guard-checker soundness bugs of Coq 8.20.1: {ids})"]
    return []


def reference_lemma(theorem: Theorem) -> str:
    """``Lemma verikit_task_statement <the statement after the theorem's name> Admitted.``
    on one line (newlines of the statement become spaces).

    Raises:
        ValueError: the statement does not start with a theorem keyword and the name.
    """
    m = re.match(r"\s*(?:#\[[^\]]*\]\s*)?(?:(?:" + "|".join(sorted(_PREFIXES)) + r")\s+)*(?:"
                 + "|".join(THEOREM_KEYWORDS) + r")\s+" + re.escape(theorem.name) + r"(?![\w'])", theorem.statement)
    if not m:
        raise ValueError(f"cannot copy the statement of {theorem.name}: {theorem.statement[:60]!r}")
    rest = theorem.statement[m.end():].replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return f"Lemma {REFERENCE}{rest} Admitted."


def check_file(theorem: str) -> str:
    """``check.v``: loads the compiled candidate without importing it, then writes Coq's
    grammar of commands (``Print Grammar``, with the plugins the job loaded), the
    assumption report, the two ``Check`` outputs and the theorem's proof term (``Print``,
    under ``Printing All``; see the module docstring)."""
    fq = f"{JOB_ROOT}.{MODULE}"
    entries = " ".join(("vernac", *COMMAND_ENTRIES[:-1], *TOKEN_ENTRIES))
    return (f"Require {fq}.\nSet Printing All.\n"
            f'Redirect "{GRAMMAR[:-4]}" Print Grammar {entries}.\n'
            f'Redirect "{REPORT_NAME}" Print Assumptions {fq}.{theorem}.\n'
            f'Redirect "{STATEMENT[:-4]}" Check {fq}.{theorem}.\n'
            f'Redirect "{REFERENCE_REPORT[:-4]}" Check {fq}.{REFERENCE}.\n'
            f'Redirect "{BODY[:-4]}" Print {fq}.{theorem}.\n')


def printed_type(check_output: str) -> str | None:
    """The type in a ``Check <name>`` output (``name\\n     : type``), white space
    collapsed; None when there is no ``:`` after the name."""
    body = check_output.strip()
    parts = body.split(None, 1)
    if len(parts) < 2 or not parts[1].startswith(":"):
        return None
    return " ".join(parts[1][1:].split())


def local_name(printed: str) -> str | None:
    """``candidate.<name>`` when ``printed`` (a name in the report of ``check.v``)
    denotes a constant of the job's own file, i.e. has a ``candidate`` or ``VerikitJob``
    qualifier; None for a library constant."""
    parts = printed.split(".")
    if MODULE in parts[:-1]:
        return ".".join([MODULE, *parts[parts.index(MODULE) + 1:]])
    if JOB_ROOT in parts[:-1]:  # not printed so by Coq 8.20; judged as the file's own (fail closed)
        return ".".join([MODULE, *parts[parts.index(JOB_ROOT) + 1:]])
    return None


def library_name_matches(printed: str, entry: str) -> bool:
    """Whether ``printed`` (``Classical_Prop.classic``, a library constant as the report
    prints it: a qualifier made of a suffix of its library's path, perhaps followed by
    modules inside the file) can denote the fully qualified ``entry``
    (``Coq.Logic.Classical_Prop.classic``; globs allowed in the last component)."""
    parts, eparts = printed.split("."), entry.split(".")
    qual, name = parts[:-1], parts[-1]
    emod, ename = eparts[:-1], eparts[-1]
    if not fnmatch.fnmatchcase(name, ename):
        return False
    if not qual:
        return True
    return any(k <= len(emod) and emod[len(emod) - k:] == qual[:k] for k in range(1, len(qual) + 1))


def library_axiom_names(grep_output: str) -> set[str]:
    """Fully qualified axiom names from the ``prepare`` script's output (first line
    ``coqc -where``, then ``<file>:<Axiom|Parameter|Conjecture> <name>`` lines): files
    under ``<where>/theories`` are ``Coq.<path>``, under ``<where>/user-contrib``
    ``<path>`` (e.g. ``Coq.Logic.Classical_Prop.classic``, ``stdpp.base.x``)."""
    lines = grep_output.splitlines()
    if not lines:
        return set()
    where = lines[0].strip().rstrip("/")
    out = set()
    for line in lines[1:]:
        path, _, decl = line.partition(":")
        words = decl.split()
        if not words or not path.endswith(".v") or words[-1] in _ASSUMPTION_KEYWORDS:
            continue
        if path.startswith(where + "/theories/"):
            mod = "Coq." + path[len(where) + len("/theories/"):-2].replace("/", ".")
        elif path.startswith(where + "/user-contrib/"):
            mod = path[len(where) + len("/user-contrib/"):-2].replace("/", ".")
        else:
            continue
        out.add(f"{mod}.{words[-1]}")
    return out


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


def _errors(log: str) -> list[tuple[str | None, int | None, str]]:
    """``[(file, line, first line of the message)]`` for each ``Error:`` in coqc's
    output (``file`` without its ``./``, None when no location precedes it)."""
    out = []
    lines = log.splitlines()
    for i, line in enumerate(lines):
        if "Error:" not in line:
            continue
        msg = line.split("Error:", 1)[1].strip()
        if not msg and i + 1 < len(lines):
            msg = lines[i + 1].strip()
        loc, file = None, None
        for back in range(i, max(-1, i - 4), -1):
            m = _LOCATION.match(lines[back])
            if m:
                loc, file = int(m.group(2)), m.group(1).removeprefix("./")
                break
        out.append((file, loc, msg))
    return out
