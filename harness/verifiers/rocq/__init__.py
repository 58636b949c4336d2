"""Rocq/Coq proof checker (``coqc``), with the prover's own assumption report.

Command line, in the job's scratch directory of the benchmark's image (Coq 8.20.1 and
stdpp 1.11 from Debian trixie, the benchmark's library compiled in it; the ``-Q``
directories are the job's ``load_path`` option, set by the benchmark)::

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

What the candidate contains is judged on Coq's own view, never by a kit word scan:
``coqc -time`` prints every sentence it executed with its byte offsets and the command
as Coq parsed and re-printed it (:func:`time_lines`); ``check.v`` prints Coq's grammar of
commands (:func:`command_heads`), so each sentence is classified as Coq read it
(:func:`classify`: a command must be on :data:`ALLOWED_COMMANDS`; a hypothesis named
``Back`` is no command); the kit's own segmentation (:func:`sentences`, still used to split
whole-file candidates) must agree with Coq's (:func:`segmentation_problems`); the proof
term (``Print``) must avoid the constructs of :data:`SOUNDNESS_BUGS`; and ``coqchk``
re-checks the compiled file independently. The kit's lexer reads comments and strings as
Coq does (``parsing/cLexer.ml``): comments nest, and a ``"`` inside a comment starts a
string in which ``(*`` and ``*)`` do not count.

Only which runs a job makes depends on the kit's own reading of the proof
(:meth:`Rocq.expected_rejections`): when it expects Coq's view to reject the proof (a
sentence headed by a command of Coq's grammar outside the allow-list, no single closing
``Qed.``/``Defined.``, or a ``fix``/``cofix`` token), ``candidate.v`` ends with a ``Print
Grammar`` sentence after the proof (and, for a ``fix``, a ``Print`` of the theorem as
``check.v`` prints it) and the job runs ``coqc`` alone (:func:`after_proof`);
:meth:`Rocq.first_phase` rejects on Coq's view (the same rules), and when that view does
not decide, or ``coqc`` failed in the kit's sentences, :meth:`Rocq.followup` runs the full
check (``coqc``, ``check.v``, ``coqchk``), whose output gives the verdict.

Errors are reported by coqc as ``File "./candidate.v", line L, characters A-B:`` followed
by ``Error: ...`` (exit code 1); observed with Coq 8.20.1 in the rocq image (recorded in
tests/recorded/rocq/).

Submodules (every public name is also importable from ``harness.verifiers.rocq``):

- :mod:`.verifier`: the :class:`Rocq` verifier (task files, command line, verdict);
- :mod:`.lexer`: the kit's Coq lexer and sentences;
- :mod:`.commands`: Coq's own view (``-time`` lines, grammar, allow-list, segmentation,
  soundness bugs);
- :mod:`.report`: ``check.v``, its report files and their reading, coqc's errors.
"""

from __future__ import annotations

# The package's public names: what the rest of the kit and plugins import from the package.
from .commands import (ALLOWED_ATTRIBUTES, ALLOWED_COMMANDS, ALLOWED_CONTROLS, COMMAND_ENTRIES,  # noqa: F401
                       SOUNDNESS_BUGS, TOKEN_ENTRIES, classify, command_heads, command_problems,
                       segmentation_problems, soundness_problems, time_lines)
from .lexer import THEOREM_KEYWORDS, Sentence, blank_comments, sentences  # noqa: F401
from .report import (BODY, CHECK, COQCHK_LOG, COQCHK_RC, GRAMMAR, JOB_ROOT, LISTING, MODULE, REFERENCE,  # noqa: F401
                     REFERENCE_REPORT, REPORT, REPORT_NAME, STATEMENT, added_constants, check_file, library_axiom_names,
                     library_name_matches, local_name, parse_assumptions, printed_type, reference_lemma)
from .verifier import (DEFAULT_WALL_S, MODULE_VERSION, NAME, QUIET_WARNINGS, SOURCE,  # noqa: F401
                       TOOLCHAIN, Rocq)
