"""``check.v`` and what it reports: the files it writes (:data:`REPORT`, :data:`STATEMENT`,
...), the admitted copy of the task's statement (:func:`reference_lemma`), the reading of
the ``Print Assumptions`` report and of the ``Check`` outputs, the names of library
axioms, and coqc's error messages (:func:`parse_errors`)."""

from __future__ import annotations

import fnmatch
import re

from ..proof import Theorem
from .commands import COMMAND_ENTRIES, TOKEN_ENTRIES
from .lexer import ASSUMPTION_KEYWORDS, PREFIXES, THEOREM_KEYWORDS

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
#: ``Print`` of the theorem (its proof term, under ``Printing All``, no depth limit) and
#: Coq's own grammar.
BODY = "verikit_body.out"
#: ``Print Module`` of the candidate file (names only, in the order Coq declared them): what
#: the proof added after the admitted copy of the statement (:func:`added_constants`).
LISTING = "verikit_module.out"
#: ``Printing Depth`` for the proof term: Coq elides deeper subterms as ``...`` (its default
#: depth hides a term nested some 15 levels down); the largest value Coq takes.
PRINTING_DEPTH = 2**31 - 1
GRAMMAR = "verikit_grammar.out"
#: The independent kernel re-check: ``coqchk``'s output and exit status.
COQCHK_LOG = "verikit_coqchk.log"
COQCHK_RC = "verikit_coqchk.rc"
REFERENCE_REPORT = "verikit_reference.out"
_LOCATION = re.compile(r'^File "([^"]*)", line (\d+), characters (\d+)-(\d+):', re.MULTILINE)


def reference_lemma(theorem: Theorem) -> str:
    """``Lemma verikit_task_statement <the statement after the theorem's name> Admitted.``
    on one line (newlines of the statement become spaces).

    Raises:
        ValueError: the statement does not start with a theorem keyword and the name.
    """
    m = re.match(r"\s*(?:#\[[^\]]*\]\s*)?(?:(?:" + "|".join(sorted(PREFIXES)) + r")\s+)*(?:"
                 + "|".join(THEOREM_KEYWORDS) + r")\s+" + re.escape(theorem.name) + r"(?![\w'])", theorem.statement)
    if not m:
        raise ValueError(f"cannot copy the statement of {theorem.name}: {theorem.statement[:60]!r}")
    rest = theorem.statement[m.end():].replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return f"Lemma {REFERENCE}{rest} Admitted."


def grammar_query() -> str:
    """The sentence that writes Coq's grammar of commands to :data:`GRAMMAR` (``Print
    Grammar`` of the entries whose rules start a command, with the plugins loaded so far)."""
    entries = " ".join(("vernac", *COMMAND_ENTRIES[:-1], *TOKEN_ENTRIES))
    return f'Redirect "{GRAMMAR[:-4]}" Print Grammar {entries}.'


def check_file(theorem: str) -> str:
    """``check.v``: loads the compiled candidate without importing it, then writes Coq's
    grammar of commands (``Print Grammar``, with the plugins the job loaded), the
    assumption report, the two ``Check`` outputs, the theorem's proof term (``Print``,
    under ``Printing All`` and without a depth limit, :data:`PRINTING_DEPTH`) and the
    names the candidate module declares (``Print Module`` under ``Short Module Printing``,
    :data:`LISTING`); see the package docstring."""
    fq = f"{JOB_ROOT}.{MODULE}"
    return (f"Require {fq}.\nSet Printing All.\nSet Printing Depth {PRINTING_DEPTH}.\n"
            f"{grammar_query()}\n"
            f'Redirect "{REPORT_NAME}" Print Assumptions {fq}.{theorem}.\n'
            f'Redirect "{STATEMENT[:-4]}" Check {fq}.{theorem}.\n'
            f'Redirect "{REFERENCE_REPORT[:-4]}" Check {fq}.{REFERENCE}.\n'
            f'Redirect "{BODY[:-4]}" Print {fq}.{theorem}.\n'
            f"Set Short Module Printing.\n"
            f'Redirect "{LISTING[:-4]}" Print Module {fq}.\n')


def added_constants(listing: str, theorem: str) -> list[str] | None:
    """The names the candidate's proof declared: in ``Print Module`` of the candidate file
    (``Module candidate := Struct <kind name, one per line, in declaration order> End``),
    every line after the kit's admitted copy of the statement (:data:`REFERENCE`, declared
    just before the theorem) and before ``End`` other than the theorem's, whatever its kind
    (a line of any other shape counts too: nothing after the reference is skipped). An
    ``abstract`` in a proof closed by ``Defined`` leaves one (``<theorem>_subproof``: the
    theorem's term then only names it); under ``Qed`` Coq inlines it. None when the listing
    cannot be read (no ``Struct``, no :data:`REFERENCE`, no closing ``End``)."""
    if ":= Struct" not in listing:
        return None
    lines = [line.split() for line in listing.split(":= Struct", 1)[1].splitlines() if line.strip()]
    at = next((i for i, words in enumerate(lines) if len(words) >= 2 and words[-1] == REFERENCE), None)
    if at is None or lines[-1] != ["End"]:
        return None
    return [words[-1] for words in lines[at + 1:-1] if not (len(words) >= 2 and words[-1] == theorem)]


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
        if not words or not path.endswith(".v") or words[-1] in ASSUMPTION_KEYWORDS:
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


def parse_errors(log: str) -> list[tuple[str | None, int | None, str]]:
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
