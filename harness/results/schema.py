"""The documents' JSON Schemas (``schemas/*.schema.json``, draft 2020-12): their versions,
the validators, and :func:`validate` with its :class:`ValidationError`.

A report's ``sections`` are the benchmark's own: :func:`validate` checks them against the
schema its benchmark declares (:meth:`harness.plugin.Benchmark.sections_schema`), found by
the report's ``benchmark`` name among the installed plugins (as the dataset and toolchain
entry points are found: :mod:`harness.plugin`).

:func:`validate` decides with the reference validator (``jsonschema``, :func:`validator`)
and takes one shortcut on a document against its kind's schema: a document of plain JSON
types (dict with str keys, list, str, int, float, bool, None) that the compiled validator
(``jsonschema_rs``, :func:`fast`, about 70 times faster, the same schemas, the same format
checks: it calls the reference's :class:`~jsonschema.FormatChecker`) accepts is valid.
Anything it rejects or cannot read goes to the reference, which decides and writes the
message. So the two must agree only where the compiled one accepts, and where they are
known to differ it is the stricter (NaN and infinities are not numbers to it; a pattern's
``$`` does not match before a final newline; a string with a lone surrogate is
unreadable to it); tuples, which it takes for arrays and the reference does not, never
reach it. tests/test_results.py checks this on edited records."""

from __future__ import annotations

import json
from functools import lru_cache

import jsonschema_rs
from jsonschema import Draft202012Validator, FormatChecker
from jsonschema.exceptions import SchemaError, best_match
from referencing import Registry, Resource

from .. import plugin, resources

SCHEMAS_DIR = resources.kit_file("schemas")
SCHEMA_VERSION = "1.0"
#: Records only: 1.1 adds ``tool_output``, required when the tool ran.
RECORD_SCHEMA_VERSION = "1.1"
KINDS = ("predictions", "record", "run", "report", "toolchain", "generation", "transcript")


class ValidationError(ValueError):
    """A document does not match its schema. ``str()`` names the file/line and the field."""


@lru_cache(maxsize=None)
def _schema(kind: str) -> dict:
    return json.loads((SCHEMAS_DIR / f"{kind}.schema.json").read_text())


@lru_cache(maxsize=1)
def _registry() -> Registry:
    return Registry().with_resources((_schema(k)["$id"], Resource.from_contents(_schema(k))) for k in KINDS)


@lru_cache(maxsize=1)
def _format_checker() -> FormatChecker:
    return FormatChecker()


@lru_cache(maxsize=None)
def validator(kind: str) -> Draft202012Validator:
    """The reference validator for ``schemas/<kind>.schema.json`` (kind in :data:`KINDS`)."""
    return Draft202012Validator(_schema(kind), registry=_registry(), format_checker=_format_checker())


def _no_retrieval(uri: str):
    raise ValueError(f"{uri}: not one of the kit's schemas (nothing is fetched)")


@lru_cache(maxsize=None)
def fast(kind: str):
    """The compiled validator for ``schemas/<kind>.schema.json`` (``jsonschema_rs``): the
    kit's schemas as its only references, every format checked by the reference's
    :class:`~jsonschema.FormatChecker`. Used only to accept (module docstring)."""
    checker = _format_checker()
    formats = {name: (lambda n: lambda value: checker.conforms(value, n))(name) for name in checker.checkers}
    registry = jsonschema_rs.Registry([(_schema(k)["$id"], _schema(k)) for k in KINDS], retriever=_no_retrieval)
    return jsonschema_rs.validator_for(_schema(kind), registry=registry, formats=formats, validate_formats=True,
                                       retriever=_no_retrieval)


_SCALARS = frozenset((str, int, float, bool, type(None)))
_STR = frozenset((str,))
#: Containers nested deeper than this are left to the reference (as a walk that recursed
#: would have stopped at the interpreter's recursion limit).
_MAX_DEPTH = 400


def _plain(obj) -> bool:
    """True when ``obj`` holds only plain JSON types (exact dict with str keys, list, and
    scalars): what :func:`json.loads` gives. False too when it nests deeper than
    ``_MAX_DEPTH`` (then the reference decides). One walk with a stack, no call per value:
    it runs on every record a run appends."""
    scalars, stack = _SCALARS, [(obj, 0)]
    while stack:
        o, depth = stack.pop()
        t = type(o)
        if t is dict:
            if not _STR.issuperset(map(type, o)):  # a key that is not exactly a str
                return False
            values = o.values()
        elif t is list:
            values = o
        else:
            if t not in scalars:
                return False
            continue
        if depth >= _MAX_DEPTH:
            return False
        for v in values:
            tv = type(v)
            if tv is dict or tv is list:
                stack.append((v, depth + 1))
            elif tv not in scalars:
                return False
    return True


def _accepted(kind: str, obj, decoded: bool = False) -> bool:
    try:
        return (decoded or _plain(obj)) and fast(kind).is_valid(obj)
    except (ValueError, TypeError, OverflowError, RecursionError):  # unreadable to it: the reference decides
        return False


def validate(kind: str, obj, where: str = "", *, decoded: bool = False) -> None:
    """Validate ``obj`` against the ``kind`` schema (the reference's verdict: module
    docstring); a report's ``sections`` and its reproduction's (when present) also against
    its benchmark's sections schema (:func:`sections_validators`).

    Args:
        kind: one of :data:`KINDS`.
        obj: the decoded JSON document.
        where: location for the message, e.g. ``"out/records.jsonl:12"``.
        decoded: ``obj`` is what :func:`json.loads` (default hooks) just gave, so of plain
            JSON types by construction: the walk that checks it is skipped (the verdict is
            the same).

    Raises:
        ValidationError: with the location, the JSON path of the offending field
            (``sections/<section>/...`` for a benchmark's section) and the schema's
            complaint (the first three errors); or the sections schema of the report's
            benchmark cannot be used.
    """
    where = where or kind
    if not _accepted(kind, obj, decoded):  # the reference decides (module docstring)
        _raise([("", e) for e in validator(kind).iter_errors(obj)], f"{where}: does not match {kind}.schema.json")
    if kind != "report":
        return
    checks = sections_validators(obj["benchmark"])
    if checks is None:  # no benchmark of that name is installed here: report.schema.json's check only
        return
    whole, part = checks
    errors = [("sections/", e) for e in (whole.iter_errors(obj["sections"]) if "sections" in obj else ())]
    rep = obj.get("reproduction") or {}
    errors += [("reproduction/sections/", e) for e in (part.iter_errors(rep["sections"]) if "sections" in rep else ())]
    _raise(errors, f"{where}: does not match the sections schema of benchmark {obj['benchmark']!r}")


@lru_cache(maxsize=None)
def sections_validators(benchmark: str) -> tuple[Draft202012Validator, Draft202012Validator] | None:
    """Validators of the report sections of the benchmark registered as ``benchmark``
    (entry point ``verikit.benchmarks``), from its
    :meth:`~harness.plugin.Benchmark.sections_schema`: ``(whole, part)``, ``whole`` for
    report.json's ``sections``, ``part`` for the reproduction's (its sections are some of
    them: each is checked against its property's schema, the top level's ``required``
    aside). None when no benchmark of that name is installed.

    Raises:
        ValidationError: the benchmark cannot be loaded, or its schema cannot be read or
            is not a valid JSON Schema (names the benchmark and its entry point).
    """
    target = plugin.entry_points("verikit.benchmarks").get(benchmark)
    if target is None:
        return None
    try:
        schema = plugin.load(target).sections_schema()
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise ValidationError(f"the sections schema of benchmark {benchmark!r} ({target}) is not a valid JSON "
                              f"Schema: {'/'.join(map(str, exc.absolute_path)) or '<root>'}: {exc.message}") from None
    except (OSError, ValueError) as exc:
        raise ValidationError(f"the sections schema of benchmark {benchmark!r} ({target}) cannot be read: {exc}") \
            from None
    part = {k: schema[k] for k in ("$schema", "$defs", "properties", "patternProperties", "additionalProperties")
            if k in schema}
    return (Draft202012Validator(schema, format_checker=_format_checker()),
            Draft202012Validator({**part, "type": "object"}, format_checker=_format_checker()))


def _raise(errors: list, head: str) -> None:
    """Raise :class:`ValidationError` ``head: path: message; ...`` for the first three of
    ``errors`` (``(path prefix, jsonschema error)``), sorted by path; nothing when empty."""
    if not errors:
        return
    # an anyOf/oneOf that no alternative matches: the closest alternative's own complaint
    errors = [(prefix, best_match(e.context) if e.context else e) for prefix, e in errors]
    errors = sorted(errors, key=lambda pe: (pe[0], [str(x) for x in pe[1].absolute_path]))
    parts = [f"{(prefix + '/'.join(map(str, e.absolute_path))).rstrip('/') or '<root>'}: {_message(e)}"
             for prefix, e in errors[:3]]
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    raise ValidationError(f"{head}: " + "; ".join(parts) + more)


def _message(err) -> str:
    """jsonschema's message, or, when it would quote a huge value, the rule it broke."""
    if len(err.message) <= 300:
        return err.message
    return f"value ({type(err.instance).__name__} of length {len(str(err.instance)):,}) violates " \
           f"{err.validator}={err.validator_value!r}"
