"""A verifier's self-check, for plugin authors (BenchExec's ``test_tool_info`` idea:
``python -m benchexec.test_tool_info MODULE`` shows what a tool-info module makes of a
tool): ``verikit check-verifier NAME [--sandbox S]`` or :func:`check_verifier`.

Without a sandbox it checks the class (a :class:`harness.model.Verifier` subclass with a
``name``, ``toolchain`` and ``version``, and ``options``, ``command`` and ``parse`` of its
own), then calls every hook on a toolchain whose tools were not found (the state a user
without the tools is in) and checks each answer's shape: ``options`` JSON-able,
``command``, ``task_command``, ``gate`` and (after a gate) ``command_after_gate`` ``(argv, env, collect)`` of strings
and ``carry_from_gate`` a dict of relative path -> bytes, ``ahead`` ``(files, argv tail, collect)``,
``parse`` of a run that could not start and of a run that printed nothing a
:class:`~harness.model.VerifierResult` with a known verdict (never ``verified``: no
output proves nothing), ``state`` JSON-able and taken back by ``restore``. With a sandbox
it probes the verifier's toolchain there, runs ``prepare`` and checks the files it gives,
then checks the hooks again with the probed toolchain.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..model import VERDICTS, Limits, ProcResult, Verifier, VerifierResult


@dataclass
class Check:
    """One line of the self-check: ``name``, ``ok`` and what was found (``detail``)."""

    name: str
    ok: bool
    detail: str


class Unprobed:
    """A probed toolchain whose tools were not found (every version None): what the hooks
    get without a sandbox."""

    fingerprint = "unprobed"
    versions: dict = {}
    tools: dict = {}
    flavor = "host"

    def to_json(self) -> dict:
        return {"fingerprint": self.fingerprint, "tools": {}}


def _ahead_shape(spec) -> str | None:
    """Why ``spec`` is not ``(files: dict[str, str | bytes], tail: list[str], collect: list[str])``, or None."""
    if not (isinstance(spec, tuple) and len(spec) == 3):
        return f"not a 3-tuple (files, argv tail, collect): {type(spec).__name__}"
    files, tail, collect = spec
    if not (isinstance(files, dict) and all(isinstance(k, str) and isinstance(v, (str, bytes)) for k, v in files.items())):
        return "files is not a dict of relative path -> str or bytes"
    if not all(isinstance(x, (list, tuple)) and all(isinstance(a, str) for a in x) for x in (tail, collect)):
        return f"the argv tail or collect is not a list of str: {tail!r}, {collect!r}"[:200]
    return None


def _command_shape(spec) -> str | None:
    """Why ``spec`` is not ``(argv: list[str], env: dict[str, str], collect: list[str])``, or None."""
    if not (isinstance(spec, tuple) and len(spec) == 3):
        return f"not a 3-tuple (argv, env, collect): {type(spec).__name__}"
    argv, env, collect = spec
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
        return f"argv is not a non-empty list of str: {argv!r}"[:200]
    if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
        return f"env is not a dict of str to str: {env!r}"[:200]
    if not (isinstance(collect, (list, tuple)) and all(isinstance(c, str) for c in collect)):
        return f"collect is not a list of str: {collect!r}"[:200]
    return None


def _call(checks: list[Check], name: str, fn, judge) -> object:
    """``fn()``, with ``judge(value) -> problem | None`` recorded as a check; None when it raised."""
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001  # what the plugin's hook raised is the finding
        checks.append(Check(name, False, f"raised {type(exc).__name__}: {exc}"[:300]))
        return None
    problem = judge(value)
    checks.append(Check(name, problem is None, problem or _show(value)))
    return value


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."


def _json_problem(value) -> str | None:
    try:
        json.dumps(value, sort_keys=True)
    except (TypeError, ValueError) as exc:
        return f"not JSON-able: {exc}"
    return None


def _parse_problem(result) -> str | None:
    if not isinstance(result, VerifierResult):
        return f"not a VerifierResult: {type(result).__name__}"
    if result.verdict not in VERDICTS:
        return f"unknown verdict {result.verdict!r} (known: {', '.join(VERDICTS)})"
    if result.verdict == "verified":
        return "verified from a run with no output: a verdict must rest on what the tool said"
    return None


def check_verifier(verifier: Verifier, sandbox=None, options: dict | None = None) -> list[Check]:
    """Check ``verifier`` (an instance) as the module doc says; with ``sandbox`` (a
    :class:`harness.sandbox.Sandbox`), also probe its toolchain there and run ``prepare``;
    with ``options`` (a job's, e.g. the first job a benchmark builds for it: a verifier
    whose command needs per-task options, such as TLC's module name, gets them), the
    hooks are called with those instead of :meth:`~harness.model.Verifier.options`' own.

    Returns:
        The checks in order; the verifier passes when every ``ok`` is True.
    """
    checks: list[Check] = []
    cls = type(verifier)
    checks.append(Check("subclass", isinstance(verifier, Verifier),
                        f"{cls.__module__}.{cls.__name__}" + ("" if isinstance(verifier, Verifier) else
                                                              " does not subclass harness.model.Verifier")))
    for attr in ("name", "toolchain", "version"):
        value = getattr(verifier, attr, None)
        ok = isinstance(value, str) and bool(value) and (attr != "version" or value != Verifier.version)
        checks.append(Check(attr, ok, repr(value) if ok else f"{attr} must be set to a non-empty str "
                            f"{'(the module version, part of every key) ' if attr == 'version' else ''}"
                            f"(is {value!r})"))
    for hook in ("options", "command", "parse"):
        impl = getattr(cls, hook, None)
        own = callable(impl) and impl is not getattr(Verifier, hook)
        checks.append(Check(f"implements {hook}", own, "own" if own else "missing, or left to the base class, "
                            "which raises"))
    if not isinstance(verifier, Verifier):
        return checks
    probed = Unprobed()
    if sandbox is not None:
        from .. import toolchains

        probed = _call(checks, f"probe toolchain {verifier.toolchain} in the {sandbox.name} sandbox",
                       lambda: toolchains.probe(verifier.toolchain, sandbox),
                       lambda p: None if any(v for v in p.versions.values()) else "no tool of the toolchain was found")
        if probed is None:
            return checks
        _call(checks, "prepare", lambda: verifier.prepare(sandbox, probed),
              lambda f: None if isinstance(f, dict) and all(isinstance(k, str) and isinstance(v, (str, bytes))
                                                            for k, v in f.items())
              else "not a dict of relative path -> str or bytes")
    own = _call(checks, "options", lambda: verifier.options(probed), _json_problem)
    options = options if options is not None else own
    if options is None:
        return checks
    for hook, fn in (("command", verifier.command), ("task_command", verifier.task_command)):
        _call(checks, hook, lambda f=fn: f(options), _command_shape)
        if own is options and not checks[-1].ok:
            checks[-1].detail += ("; with the verifier's own options: a command that needs per-task options gets "
                                  "them from a benchmark's job (verikit check-verifier NAME --benchmark B)")
    gate = _call(checks, "gate", lambda: verifier.gate(options), lambda g: None if g is None else _command_shape(g))
    if gate is not None:  # only called after a gate
        _call(checks, "command_after_gate (a gate that collected nothing)",
              lambda: verifier.command_after_gate(options, {}), _command_shape)
        _call(checks, "carry_from_gate (a gate that collected nothing)",
              lambda: verifier.carry_from_gate(options, {}),
              lambda f: None if isinstance(f, dict) and all(isinstance(k, str) and isinstance(v, bytes)
                                                            for k, v in f.items()) else "not a dict of str -> bytes")
    _call(checks, "ahead (a job without files)", lambda: verifier.ahead({}, options, Limits()), _ahead_shape)
    argv = ["true"]
    _call(checks, "parse (the tool could not start)",
          lambda: verifier.parse(ProcResult(argv=argv, returncode=None, start_error="FileNotFoundError: tool"), options),
          _parse_problem)
    _call(checks, "parse (the tool printed nothing)", lambda: verifier.parse(ProcResult(argv=argv, returncode=0), options),
          _parse_problem)
    state = _call(checks, "state", verifier.state, _json_problem)
    if state is not None:
        _call(checks, "restore (its own state)", lambda: verifier.restore(state), lambda _: None)
    return checks
