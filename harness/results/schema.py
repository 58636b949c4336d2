"""The documents' JSON Schemas (``schemas/*.schema.json``, draft 2020-12): their versions,
the validators, and :func:`validate` with its :class:`ValidationError`."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS_DIR = ROOT / "schemas"
SCHEMA_VERSION = "1.0"
#: Records only: 1.1 (issue 26) adds ``tool_output``, required when the tool ran.
RECORD_SCHEMA_VERSION = "1.1"
KINDS = ("predictions", "record", "run", "report", "toolchain")


class ValidationError(ValueError):
    """A document does not match its schema. ``str()`` names the file/line and the field."""


@lru_cache(maxsize=1)
def _registry() -> Registry:
    resources = []
    for kind in KINDS:
        schema = json.loads((SCHEMAS_DIR / f"{kind}.schema.json").read_text())
        resources.append((schema["$id"], Resource.from_contents(schema)))
    return Registry().with_resources(resources)


@lru_cache(maxsize=None)
def validator(kind: str) -> Draft202012Validator:
    """Validator for ``schemas/<kind>.schema.json`` (kind in :data:`KINDS`)."""
    schema = json.loads((SCHEMAS_DIR / f"{kind}.schema.json").read_text())
    return Draft202012Validator(schema, registry=_registry(), format_checker=FormatChecker())


def validate(kind: str, obj, where: str = "") -> None:
    """Validate ``obj`` against the ``kind`` schema.

    Args:
        kind: one of :data:`KINDS`.
        obj: the decoded JSON document.
        where: location for the message, e.g. ``"out/records.jsonl:12"``.

    Raises:
        ValidationError: with the location, the JSON path of the offending field and the
            schema's complaint (the first three errors).
    """
    errors = sorted(validator(kind).iter_errors(obj), key=lambda e: list(e.absolute_path))
    if errors:
        parts = [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {_message(e)}" for e in errors[:3]]
        more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
        raise ValidationError(f"{where or kind}: does not match {kind}.schema.json: " + "; ".join(parts) + more)


def _message(err) -> str:
    """jsonschema's message, or, when it would quote a huge value, the rule it broke."""
    if len(err.message) <= 300:
        return err.message
    return f"value ({type(err.instance).__name__} of length {len(str(err.instance)):,}) violates " \
           f"{err.validator}={err.validator_value!r}"
