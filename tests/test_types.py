"""The typed documents of :mod:`harness.model` (``Record``, ``Report`` and their parts) are
kept equal to their JSON schemas: the same keys, the same required keys, at every level
the schema describes. A key added to one and not the other fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import model

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def _keys(td) -> tuple[set, set]:
    return set(td.__required_keys__), set(td.__optional_keys__)


def _object(node: dict) -> dict:
    """The object branch of a schema node (``goals`` is ``oneOf: [null, object]``)."""
    for alt in node.get("oneOf", []):
        if alt.get("type") == "object":
            return alt
    return node


@pytest.mark.parametrize("td, schema, path", [
    (model.Record, "record", ()),
    (model.CandidateRef, "record", ("candidate",)),
    (model.DatasetRef, "record", ("dataset",)),
    (model.Goals, "record", ("goals",)),
    (model.VerifierRun, "record", ("verifier",)),
    (model.Timings, "record", ("timings",)),
    (model.ToolOutput, "record", ("tool_output",)),
    (model.Check, "record", ("checks", "items")),
    (model.Report, "report", ()),
])
def test_typed_dict_equals_its_schema(td, schema, path):
    node = _schema(schema)
    for step in path:
        node = _object(node)
        node = node["properties"][step] if step != "items" else node["items"]
    node = _object(node)
    required, optional = _keys(td)
    assert required == set(node.get("required", [])), f"{td.__name__}: required keys differ from the schema's"
    assert required | optional == set(node["properties"]), f"{td.__name__}: keys differ from the schema's properties"


def test_the_check_sees_a_difference():
    class Short(model.TypedDict):
        schema_version: str

    with pytest.raises(AssertionError, match="required keys differ"):
        test_typed_dict_equals_its_schema(Short, "record", ())
