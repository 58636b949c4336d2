"""The :class:`Rocq` verifier: task files (theorem, splice, job files), the command line
of a job (``coqc`` on the candidate, then on ``check.v``, then ``coqchk``; or ``coqc``
alone when the kit expects Coq's view to reject the proof, with the rest as a follow-up
run when it does not) and the verdict from its output (:meth:`Rocq.parse`)."""

from __future__ import annotations

import fnmatch
import hashlib
import re
import shlex

from ...model import CPUS_ENV, FOLLOWUP, Limits, ProcResult, Verifier, VerifierResult
from ..proof import Theorem, statement_sha256
from .commands import (ALLOWED_COMMANDS, command_heads, command_problems, fix_in, proof_term, segmentation_problems,
                       soundness_problems, time_lines)
from .lexer import ASSUMPTION_KEYWORDS, PREFIXES, THEOREM_KEYWORDS, blank_comments, sentence_keyword, sentences
from .report import (BODY, CHECK, COQCHK_LOG, COQCHK_RC, GRAMMAR, JOB_ROOT, LISTING, MODULE, PRINTING_DEPTH, REFERENCE,
                     REFERENCE_REPORT, REPORT, STATEMENT, parse_errors, added_constants, check_file, grammar_query,
                     library_axiom_names, library_name_matches, local_name, parse_assumptions, printed_type,
                     reference_lemma)

NAME = "rocq"
TOOLCHAIN = "rocq"
#: Version of this module's command line, splice and parser (part of every job key).
MODULE_VERSION = "6"
SOURCE = "candidate.v"
#: What a job whose proof the kit expects Coq's view to reject (:meth:`Rocq.expected_rejections`)
#: has after the proof in ``candidate.v``: Coq's grammar of commands, printed where the
#: proof ended (the same grammar ``check.v`` prints: the same plugins are loaded).
GRAMMAR_AFTER_PROOF = "\n" + grammar_query() + "\n"
#: How an expectation of a ``fix``/``cofix`` in the proof term starts (:meth:`Rocq.expected_rejections`).
FIX_EXPECTED = "fix/cofix"


def after_proof(theorem: str, body: bool) -> str:
    """What ``candidate.v`` has after the proof of a job with an expected rejection:
    :data:`GRAMMAR_AFTER_PROOF`, then, when a ``fix`` is expected (``body``), the theorem's
    proof term printed as ``check.v`` prints it (``Printing All``, no depth limit), by the
    name the proof just declared."""
    tail = (f'Set Printing All.\nSet Printing Depth {PRINTING_DEPTH}.\nRedirect "{BODY[:-4]}" Print {theorem}.\n'
            if body else "")
    return GRAMMAR_AFTER_PROOF + tail
#: Warnings silenced on every coqc call: they concern the 8.20 vs 9.0 adaptation
#: (deprecated library files, notation overrides) or the ``Redirect`` output directory.
QUIET_WARNINGS = "-deprecated-library-file,-deprecated,-notation-overridden,-default-output-directory"
DEFAULT_WALL_S = 300


class Rocq(Verifier):
    """Rocq/Coq proof checker. ``name = "rocq"``, toolchain ``rocq``."""

    name = NAME
    toolchain = TOOLCHAIN
    version = MODULE_VERSION
    language = "rocq"
    source = SOURCE

    def __init__(self) -> None:
        #: Fully qualified names of the axioms the installed Coq/stdpp sources declare
        #: (``Coq.Logic.Classical_Prop.classic``; set by :meth:`prepare`).
        self.library_axioms: set[str] = set()
        #: The heads of Coq's commands in a file that loads nothing (``Print Grammar`` in the
        #: sandbox; set by :meth:`prepare`): what :meth:`expected_rejections` reads.
        self.command_heads: set[str] = set()

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
        found = [(i, s) for i, s in enumerate(sents) if sentence_keyword(s)[0] in THEOREM_KEYWORDS]
        if len(found) != 1:
            line = found[1][1].line if len(found) > 1 else 1
            raise ValueError(f"{where}:{line}: expected exactly one theorem, found {len(found)}")
        i, stmt = found[0]
        rest = sents[i + 1:]
        if rest and sentence_keyword(rest[0])[0] == "Proof" and rest[0].text.strip() == "Proof.":
            rest = rest[1:]
        if not rest or rest[0].text.strip() != "Admitted." or len(rest) != 1:
            raise ValueError(f"{where}:{stmt.line}: the theorem must be followed by 'Admitted.' and nothing else")
        name = sentence_keyword(stmt)[1][0]
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
            kw, rest = sentence_keyword(s)
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
            kw, rest = sentence_keyword(s)
            if kw in ASSUMPTION_KEYWORDS:
                body = re.sub(r"^#\[[^\]]*\]\s*", "", s.text)
                body = body.split(None, 1)[1] if len(body.split(None, 1)) > 1 else ""
                while body.split(None, 1)[0:1] and body.split(None, 1)[0] in PREFIXES | ASSUMPTION_KEYWORDS:
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
        [[start, end], ...], "expected_rejections": [...], "grammar_start": offset, "body_start":
        offset, "block_line": line}``.
        ``kit_sentences`` is the kit's own segmentation of the proof (:func:`sentences`),
        which Coq's must agree with (:func:`segmentation_problems`), None when the kit cannot
        segment it (an unterminated comment or string); ``expected_rejections`` is
        :meth:`expected_rejections`; when that list is not empty, ``grammar_start`` and
        ``body_start`` are where the sentences of :func:`after_proof` that print the grammar
        and the proof term start (``body_start`` None when no ``fix`` is expected) and
        ``block_line`` is the line the grammar's is on (all None otherwise)."""
        at = task_text.rfind(theorem.statement, 0, theorem.start)
        head = task_text[:at] + reference_lemma(theorem) + " " + task_text[at:theorem.start]
        base = len(head.encode("utf-8"))
        text = proof.strip()
        expected, after = self._after(theorem, proof)
        end = head + text + "\n"  # splice ends the proof with a newline; after_proof follows

        def where(sentence: str) -> tuple[int, int] | None:  # (byte offset, line) of a sentence of after_proof
            at = after.find(sentence)
            return None if at < 0 else (len((end + after[:at]).encode("utf-8")), (end + after[:at]).count("\n") + 1)
        grammar, body = where(f'Redirect "{GRAMMAR[:-4]}"'), where(f'Redirect "{BODY[:-4]}"')
        block = {"expected_rejections": expected, "grammar_start": grammar and grammar[0],
                 "body_start": body and body[0], "block_line": grammar and grammar[1]}
        try:
            sents = sentences(text)
        except ValueError:
            return {"proof_start": base, "kit_sentences": None, **block}
        def off(i: int) -> int:
            return base + len(text[:i].encode("utf-8"))
        return {"proof_start": base, "kit_sentences": [[off(x.start), off(x.end)] for x in sents], **block}

    def _after(self, theorem: Theorem, proof: str) -> tuple[list[str], str]:
        """:meth:`expected_rejections` of ``proof`` and what ``candidate.v`` has after it
        (:func:`after_proof`, or "" when nothing is expected)."""
        expected = self.expected_rejections(proof)
        return expected, (after_proof(theorem.name, any(e.startswith(FIX_EXPECTED) for e in expected))
                          if expected else "")

    def expected_rejections(self, proof: str) -> list[str]:
        """What the kit's own reading of ``proof`` expects Coq's view to reject (empty list:
        nothing): a sentence whose command keyword (:func:`sentence_keyword`) is the head of
        a command of Coq's grammar (:attr:`command_heads`) outside :data:`ALLOWED_COMMANDS`
        (``Admitted``, ``Axiom``, ``Abort``...), or a proof that does not end with a single
        ``Qed.``/``Defined.``, or a ``fix``/``cofix`` token outside comments and strings (the
        proof term must have none: :func:`soundness_problems`). Only which runs a job makes
        depends on it, never a verdict:
        such a job runs ``coqc`` alone and its verdict stands on Coq's view
        (:meth:`parse`); when Coq's view does not confirm the rejection, the rest of the
        check runs as a follow-up (:meth:`followup`). Empty when the kit cannot segment the
        proof."""
        try:
            sents = sentences(proof.strip())
        except ValueError:
            return []
        found = []
        for s in sents:
            kw = sentence_keyword(s)[0]
            if kw in self.command_heads and kw not in ALLOWED_COMMANDS:
                found.append(f"{kw} (line {s.line} of the proof)")
        closes = [i for i, s in enumerate(sents) if s.text.strip() in ("Qed.", "Defined.")]
        if closes != [len(sents) - 1]:
            found.append("no single Qed./Defined. ending the proof")
        code = blank_comments(proof.strip(), strings=True)
        fix = next((s for s in sents if fix_in(code[s.start:s.end])), None)
        if fix is not None:
            found.append(f"{FIX_EXPECTED} (line {fix.line} of the proof)")
        return found

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
        """The files of a job: ``candidate.v`` (:meth:`splice`, followed by
        :func:`after_proof` when :meth:`expected_rejections` is not empty) and ``check.v``
        (:func:`check_file`)."""
        return {SOURCE: self.splice(task_text, theorem, proof) + self._after(theorem, proof)[1],
                CHECK: check_file(theorem.name)}

    # --- running ---------------------------------------------------------------------

    def prepare(self, sandbox, probed) -> dict:
        """Read the axioms declared in the installed Coq and stdpp sources (one ``grep``
        in the sandbox) into :attr:`library_axioms`, as fully qualified names
        (:func:`library_axiom_names`), and the heads of Coq's commands (``coqc`` on a file
        that only prints the grammar, :func:`command_heads`) into :attr:`command_heads`
        (left empty when that run fails); no files to ship."""
        script = ('W=$(coqc -where) && echo "$W" && grep -rHoE "^[[:space:]]*(Local |Global )?'
                  '(Axiom|Parameter|Conjecture)s?[[:space:]]+[A-Za-z_][A-Za-z0-9_\']*" "$W/theories" "$W/user-contrib"')
        res = sandbox.run(["sh", "-c", script], limits=Limits(wall_s=120))
        if res.returncode == 0:
            self.library_axioms = library_axiom_names(res.stdout)
        grammar = sandbox.run(["sh", "-c", f"coqc -q heads.v && cat {GRAMMAR}"], files={"heads.v": grammar_query() + "\n"},
                              limits=Limits(wall_s=120))
        heads, unknown = command_heads(grammar.stdout) if grammar.returncode == 0 else (set(), {"?"})
        self.command_heads = set() if unknown else heads
        return {}

    def state(self) -> dict:
        """What :meth:`prepare` read, for run.json: ``{"library_axioms": [fully qualified
        names]}`` (empty when prepare did not run)."""
        return {"library_axioms": sorted(self.library_axioms)} if self.library_axioms else {}

    def restore(self, state: dict) -> None:
        """Take back what :meth:`state` gave (``validate``: the run's library axioms, so a
        record is re-judged with the allow-list it was judged with)."""
        self.library_axioms = set(state.get("library_axioms") or ())

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
        leaves coqchk out, so the gold's cost and verdict are those of before. With two CPUs
        for the run (``VERIKIT_CPUS``, :data:`harness.model.CPUS_ENV`) ``coqchk`` runs beside
        the check file instead of after it, and its files are removed when the check file
        fails: the same files and exit status either way.

        When ``options["expected_rejections"]`` is not empty (:meth:`expected_rejections`),
        the command is ``sh -c 'rm -f verikit_* && coqc <flags> -time candidate.v'`` alone,
        collecting the grammar (and the proof term) Coq printed after the proof
        (:func:`after_proof`); what Coq's view does not reject, :meth:`followup` checks in full."""
        paths = []
        for directory, logical in options["load_path"]:
            paths += ["-Q", directory, logical]
        paths += ["-R", ".", JOB_ROOT]
        flags = ["-q", "-w", options.get("warnings", QUIET_WARNINGS), *paths]
        coqc = " ".join(shlex.quote(a) for a in ["coqc", *flags])
        chk = " ".join(shlex.quote(a) for a in ["coqchk", "-silent", "-o", *paths, "-norec", f"{JOB_ROOT}.{MODULE}"])
        if options.get("expected_rejections"):
            return (["sh", "-c", f"rm -f verikit_* && {coqc} -time {SOURCE}"], {},
                    [GRAMMAR] + ([BODY] if options.get("body_start") is not None else []))
        script = f"rm -f verikit_* && {coqc} -time {SOURCE} && rm -f verikit_*.out && "
        if not options.get("recheck", True):  # only the gold (the task file with its Admitted.)
            script += f"{coqc} {CHECK}"
        else:  # with two CPUs, coqchk beside check.v; its files kept only where check.v passed
            recheck = f"{{ {chk} > {COQCHK_LOG} 2>&1; echo $? > {COQCHK_RC}; }}"
            script += (f'if [ "${{{CPUS_ENV}:-1}}" -ge 2 ] 2>/dev/null; then {recheck} & '
                       f"{coqc} {CHECK}; rc=$?; wait $!; [ $rc -eq 0 ] || rm -f {COQCHK_LOG} {COQCHK_RC}; exit $rc; "
                       f"else {coqc} {CHECK} && {recheck}; fi")
        return ["sh", "-c", script], {}, [REPORT, STATEMENT, REFERENCE_REPORT, BODY, LISTING, GRAMMAR, COQCHK_LOG,
                                          COQCHK_RC]

    def followup(self, files: dict[str, str], proc: ProcResult, options: dict) -> tuple[dict, list, list] | None:
        """The full check of a job that ran ``coqc`` alone (``options["expected_rejections"]``)
        when Coq's view did not confirm a rejection (:meth:`first_phase`) and ``coqc``
        succeeded, or when ``coqc`` failed in the kit's sentences after the proof (the proof
        term's print of a theorem the proof did not declare): ``candidate.v`` without
        :func:`after_proof`, compiled again, then ``check.v`` and ``coqchk``, the command of a
        job with nothing expected. None for every other job."""
        if not self._needs_full_check(proc, options):
            return None
        argv, _, collect = self.command({**options, "expected_rejections": []})
        after = after_proof(options.get("theorem") or "", options.get("body_start") is not None)
        return {SOURCE: files[SOURCE].removesuffix(after)}, argv, collect

    def _needs_full_check(self, proc: ProcResult, options: dict) -> bool:
        """Whether a job that ran ``coqc`` alone needs the full check: Coq's view did not
        decide, or ``coqc`` failed at or after the kit's sentences (``options["block_line"]``)."""
        if not options.get("expected_rejections"):
            return False
        if proc.returncode != 0:
            errors = parse_errors(proc.stdout + ("\n" + proc.stderr if proc.stderr else ""))
            line, block = (errors[0][1] if errors else None), options.get("block_line")
            return line is not None and block is not None and line >= block
        return self.first_phase(proc, options) is None

    def first_phase(self, proc: ProcResult, options: dict) -> VerifierResult | None:
        """The ``rejected`` verdict of a job that ran ``coqc`` alone, on Coq's view of it, or
        None when that view does not decide it. It decides when ``coqc`` succeeded, the
        grammar sentence after the proof ran where the kit put it (``options["grammar_start"]``;
        no sentence of the candidate reaches into it) and printed a readable grammar, and the
        candidate's sentences, as Coq parsed them, break the allow-list or disagree with the
        kit's segmentation, or the proof term printed after the proof (``options["body_start"]``,
        where a ``fix`` was expected) has one: the rules :meth:`parse` applies to every job
        (:func:`command_problems`, :func:`segmentation_problems`, :func:`soundness_problems`).
        A proof-term print that shows no ``fix`` decides nothing (the check file reads it)."""
        at = options.get("grammar_start")
        grammar = proc.files.get(GRAMMAR)
        if proc.returncode != 0 or at is None or grammar is None:
            return None
        lines = time_lines(proc.stdout)
        if not any(a == at and pr.startswith(f'Redirect~"{GRAMMAR[:-4]}"') for a, _, pr in lines) or any(
                a < at < b for a, b, _ in lines):
            return None
        heads, unknown = command_heads(grammar.decode("utf-8", "replace"))
        if unknown:
            return None
        start = int(options.get("proof_start") or 0)
        ran = [t for t in lines if t[1] > start and t[0] < at]
        commands = command_problems(ran, start, heads, unknown)
        segments = segmentation_problems(ran, start, options.get("kit_sentences", []))
        body, body_at = proc.files.get(BODY), options.get("body_start")
        term = (proof_term(body.decode("utf-8", "replace")) if body is not None and body_at is not None and any(
            a == body_at and pr.startswith(f'Redirect~"{BODY[:-4]}"') for a, _, pr in lines) else None)
        bugs = soundness_problems(body.decode("utf-8", "replace"), options) if term and fix_in(term) else []
        if not commands and not segments and not bugs:
            return None
        checks = [{"name": "commands-allow-listed", "ok": not commands,
                   "detail": "; ".join(commands) or f"{len(ran)} sentence(s) as Coq parsed them, all allowed"},
                  {"name": "segmentation-agrees", "ok": not segments, "detail": "; ".join(segments) or "kit = Coq"}]
        if bugs:
            checks.append({"name": "no-known-soundness-bug", "ok": False, "detail": "; ".join(bugs)})
        return VerifierResult("rejected", "; ".join(commands + segments + bugs), checks=checks,
                              extra={"task_loads": True, "sentences": [t[2] for t in ran][:200], "coqchk": None})

    def parse(self, proc: ProcResult, options: dict | None = None) -> VerifierResult:
        """Verdict of one job (``candidate.v`` then ``check.v`` then ``coqchk``).

        A job that ran ``coqc`` alone (``options["expected_rejections"]``) is judged by
        :meth:`first_phase` when that decides; otherwise by its follow-up run (the full
        check), read as any job's run. A follow-up the sandbox ended is ``timeout``/``memout``
        as a job would be, and any other failure to run it ``infra_error`` (the kit's).

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
        if options.get("expected_rejections") and (proc.returncode == 0 or self._needs_full_check(proc, options)):
            decided = self.first_phase(proc, options)
            if decided is not None:
                return decided
            full = _followup_run(proc)
            if isinstance(full, VerifierResult):
                return full
            proc, options = full, {**options, "expected_rejections": []}
        log = proc.stdout + ("\n" + proc.stderr if proc.stderr else "")
        errors = parse_errors(log)
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
        bugs += self.added_problems(proc.files.get(LISTING), options)
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

    def added_problems(self, listing: bytes | None, options: dict) -> list[str]:
        """Why the theorem's term may lie partly outside the printed proof term (empty list:
        the proof declared no constant of its own, :func:`added_constants`). A constant the
        proof declared (``abstract`` under ``Defined``) carries part of the term, which the
        fix check does not read: ``rejected`` (fail closed; under ``Qed`` Coq inlines it). A
        missing or unreadable listing is a problem too."""
        if listing is None:
            return ["no module listing (Print Module of the candidate did not run)"]
        added = added_constants(listing.decode("utf-8", "replace"), options.get("theorem") or "")
        if added is None:
            return ["unreadable module listing"]
        if added:
            return [f"the proof declared constant(s) of its own ({', '.join(f'{MODULE}.{n}' for n in added[:5])}: "
                    f"an abstract closed by Defined), whose terms the proof-term check does not read"]
        return []

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


def _followup_run(proc: ProcResult) -> ProcResult | VerifierResult:
    """The follow-up run stored in ``proc.files`` (:data:`FOLLOWUP`) as a run of its own, or
    the verdict when it did not come to its own end (its ``ended`` line,
    :func:`~harness.model.followup_files`): ``timeout`` or ``memout`` when the sandbox
    stopped it at a limit, else ``infra_error``."""
    files = proc.files
    ended = files.get(FOLLOWUP + "ended", b"error: no follow-up run").decode("utf-8", "replace")
    if not ended.startswith("exit ") or not ended[5:].lstrip("-").isdigit():
        word, _, why = ended.partition(": ")
        verdict = word if word in ("timeout", "memout") else "infra_error"
        return VerifierResult(verdict, f"the full check (coqc, check.v, coqchk) did not end: {why}",
                              extra={"task_loads": True})
    text = {k: files.get(FOLLOWUP + k, b"").decode("utf-8", "replace") for k in ("stdout", "stderr")}
    return ProcResult(argv=proc.argv, returncode=int(ended[5:]), stdout=text["stdout"], stderr=text["stderr"],
                      files={k[len(FOLLOWUP):]: v for k, v in files.items() if k.startswith(FOLLOWUP)})
