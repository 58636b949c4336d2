"""Dafny verifier (``dafny``), two command-line dialects, results per method.

Dialects (chosen from the probed version, or forced with ``options(dialect=...)``):

- ``"2"``: the legacy Boogie-style command line of Dafny 2.x/3.x, the Debian ``dafny``
  package 2.3.0 of the ``dafny`` toolchain image (runs here)::

      dafny /compile:0 /nologo /timeLimit:<s> /rlimit:<n> /xml:<file>.xml [/dprint:<file>.dprint] <file>.dfy

  ``/dprint`` (option ``print_program``, on for dialect 2): Dafny prints the program as it
  parsed it, in the same process; :func:`program_view` reads it into declarations and
  :meth:`Dafny.parse` keeps the view of every completed file in ``extra["view"]``, so a
  benchmark judges what the candidate contains on Dafny's own reading.

  ``/timeLimit`` and ``/rlimit`` apply per Boogie procedure ("Prover options" of
  ``dafny /help``); ``/xml`` writes one ``<method name="Impl$$_module.__default.M">`` (and
  ``CheckWellformed$$...``) element per procedure with ``<conclusion outcome=...>``
  (``correct``, ``errors``, ``timedout``, ``outofmemory``, ``inconclusive``). Errors are
  printed as ``file(line,col): Error BP5003: A postcondition might not hold on this return
  path.``, a procedure over ``/timeLimit`` as ``file(line,col): Verification of
  'Impl$$_module.__default.M' timed out after N seconds`` followed by ``Timed out on: ...``
  (observed with Dafny 2.3.0.10506 + Z3 4.8.12; recorded in tests/recorded/dafny/).
  Two quirks of that pairing, both handled and recorded: Boogie 2.3 sends Z3 the option
  ``model_compress`` that Z3 4.8.12 no longer knows, so every query prints ``Prover error:
  ... unknown parameter 'model_compress'`` and a list of parameters (harmless: Z3 ignores
  the option and answers; verified and failed methods are reported normally), and a
  procedure that exceeds ``/rlimit`` prints ``Prover error: Invalid PING response ...
  max. resource limit exceeded`` and is counted in neither the verified nor the error
  total, its XML outcome being ``errors`` with no error element: read here as
  ``out_of_resource``, never as verified or failed.

- ``"4"``: the ``dafny verify`` command of Dafny 4.x, the version the paper pins (>= 4.6,
  the reference script runs ``dafny verify --allow-warnings``)::

      dafny verify --allow-warnings --verification-time-limit <s> --resource-limit <n> <file>.dfy

  Per-method results come from the error locations (``file(line,col): Error: ...``),
  ``Error: Verification of 'M' timed out after N seconds`` and ``Error: Verification out of
  resource (M)`` and the final ``Dafny program verifier finished with ...`` line. Dafny 4
  cannot be installed here: this dialect is tested only on real outputs recorded from
  dafny-lang/dafny's own test suite (tests/recorded/dafny/dafny4/, with their sources
  and commits); ``--resource-limit`` units follow Dafny 4's CLI and are not compared with
  ``/rlimit``.

A job holds one or more ``.dfy`` files (``options["units"]``: file -> ``[[method, first
line, last line], ...]``). Strategy ``batched``: the batch file (every check of a task as
its own method) is verified by ONE process; if it fails to parse or resolve, every
check file (one method each, same helpers) is verified separately, so one bad method
cannot hide the others (fallback). Strategy ``separate``: one process per check file.
Every error is attributed to the method whose line range contains it.

Submodules (every public name is also importable from ``harness.verifiers.dafny``):

- :mod:`.verifier`: the :class:`Dafny` verifier (dialects, command line, verdict);
- :mod:`.output`: per-method results of one run (printed errors, summary, ``/xml``);
- :mod:`.program`: Dafny's printed program (``/dprint``) and the views a judge reads.
"""

from __future__ import annotations

# The package's public names: what the rest of the kit and plugins import from the package.
from .output import STATUSES, Counter_, parse_file_output  # noqa: F401
from .program import DECL_WORDS, KEYWORDS, merged_view, printed_tokens, program_view  # noqa: F401
from .verifier import (DEFAULT_RLIMIT, DEFAULT_TIME_LIMIT_S, MODULE_VERSION, NAME, TOOLCHAIN, Dafny,  # noqa: F401
                       boogie_name, dialect_for)
