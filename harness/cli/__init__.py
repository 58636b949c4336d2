"""Command line: ``verikit COMMAND`` (also ``python -m harness``); every benchmark goes through the same commands.

One module per command group, each a table ``COMMANDS`` of the functions that add its
commands (arguments, help, handler) to the parser assembled here:

- ``run``: run (here, or ``--backend aws-batch|slurm``), reproduce; ``options``: the options of
  a run and the RunSpec and RunSettings made from them;
- ``generate``: generate (candidates from an OpenAI-compatible model, :mod:`harness.generate`);
- ``results``: validate, compare, report;
- ``hub``: publish, pull, rerun;
- ``artifact``: artifact bundle|check;
- ``datasets``: list, datasets list|pin, cache;
- ``benchmark``: prompts, convert, and ``verikit BENCH COMMAND`` (each benchmark's own
  commands, from its plugin);
- ``images``: images build|push|pull|list|verify|save;
- ``batch``: batch setup|plan|worker|reduce|status|resubmit|collect|cancel|probe, and the
  submission of ``run --backend aws-batch|slurm``;
- ``common``: argument types and messages they share.

A handler is called as ``handler(args, console, argv)`` and returns the exit code.

Exit codes: 0 success; 1 a check found problems (``validate``, ``compare``, ``pull``,
``rerun``, ``cache verify``, ``artifact check``) or ``reproduce`` found a figure that
differs; 2 usage or input error (message names the file and line); 3 canaries failed;
4 infra errors remain; 5 bad prediction lines skipped with ``--keep-going``; 130
interrupted (Ctrl-C), 143 terminated (SIGTERM): finished jobs are kept, the jobs that
were running are killed and not retried.
"""

from __future__ import annotations

import argparse
import errno
import signal
import sys
import threading
from collections.abc import Collection

from rich.console import Console

from .. import __version__, registry
from ..datasets import DatasetError
from ..resources import NotInCheckout
from ..runner import RunError
from . import artifact, batch, benchmark, datasets, generate, hub, images, results, run
from .common import say

__all__ = ["Terminated", "main", "on_sigterm", "parser"]

_GROUPS = (run, generate, results, hub, artifact, datasets, benchmark, images, batch)

#: The commands in the order ``verikit --help`` lists them.
_ORDER = ("run", "reproduce", "generate", "validate", "publish", "pull", "rerun", "compare", "report", "artifact", "list",
          "datasets", "cache", "prompts", "convert", "check-verifier", "images", "batch")


def parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``verikit`` parser with the shared ``commands`` only (what parsing one of them
    needs: no other command's arguments are built, so no benchmark name is read for a
    command without a benchmark argument), or, by default, with every command and
    ``verikit BENCH`` for every registered benchmark (what ``--help`` lists; the names
    are read, no plugin is imported)."""
    p = argparse.ArgumentParser(prog="verikit", description=__doc__.splitlines()[0])
    p.add_argument("--version", action="version", version=f"verikit {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)
    adders = {name: add for group in _GROUPS for name, add in group.COMMANDS.items()}
    for name in sorted(adders, key=_ORDER.index):  # a command missing from _ORDER fails here
        if commands is None or name in commands:
            adders[name](sub)
    if commands is None:
        benchmark.add_benchmark_commands(sub, list(registry.BENCHMARKS))  # main refused a name of a command
    return p


#: Storage failures reported as one message (exit 2) instead of a traceback: full disk,
#: quota, read-only filesystem, permission.
_STORAGE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)


class Terminated(KeyboardInterrupt):
    """SIGTERM (``timeout``, CI, systemd): stops a run as Ctrl-C does, exit 143."""


def on_sigterm(signum, frame):
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``verikit`` console script. Returns the exit code."""
    words = list(sys.argv[1:] if argv is None else argv)
    first = words[0] if words else ""
    if first not in _ORDER and first != "--version":  # the benchmark names are read: a plugin may not hide a command
        clash = sorted(set(registry.BENCHMARKS) & set(_ORDER))
        if clash:
            say(Console(stderr=True, soft_wrap=True), "error: " + "; ".join(
                f"the benchmark plugin {name!r} ({registry.BENCHMARKS[name]}) has the name of verikit's own command "
                f"{name!r}: rename it in its distribution's entry points (verikit.benchmarks)" for name in clash))
            return 2
    if first and not first.startswith("-") and first not in _ORDER and first in registry.BENCHMARKS:
        # ``verikit BENCH ...``: the benchmark's own commands parse everything after its name
        args = argparse.Namespace(handler=benchmark._benchmark_command, benchmark=first, rest=words[1:])
    else:  # a shared command: its parser alone; --version: none; else all (--help, a usage error)
        args = parser([first] if first in _ORDER else [] if first == "--version" else None).parse_args(argv)
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, on_sigterm) if in_main else None
    try:
        return _main(args, argv)
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def _main(args, argv) -> int:
    console = Console(stderr=True, soft_wrap=True)  # never split a file:line message across lines
    if not console.is_terminal:
        console.width = 160  # logs and pipes: wide enough that the summary tables stay readable
    try:
        return args.handler(args, console, argv)
    except (RunError, DatasetError, NotInCheckout) as exc:  # NotInCheckout: a checkout's file asked of a wheel
        say(console, f"error: {exc}")
        return 2
    except OSError as exc:
        if exc.errno not in _STORAGE_ERRORS:
            raise
        say(console, f"error: cannot write {exc.filename or 'the output'}: {exc.strerror}; the records written "
                      f"so far are kept: free space (or make it writable) and re-run the same command to resume")
        return 2
    except Terminated:
        say(console, "terminated (SIGTERM): finished jobs are kept; re-run the same command to resume")
        return 143
    except KeyboardInterrupt:
        say(console, "interrupted: finished jobs are kept; re-run the same command to resume")
        return 130
    except Exception as exc:  # an AWS call that failed (no credentials, unknown queue, access denied): one message
        if type(exc).__module__.split(".")[0] != "botocore":
            raise
        say(console, f"error: AWS: {exc}")
        return 2
