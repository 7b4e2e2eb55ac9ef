"""Every string and every array an agent can send has a size limit stated in the published schema.

The tools publish their request models' JSON schemas (``tools/list``); the walk follows ``$ref``s
into ``$defs`` and fails on any string without ``maxLength`` (enums and constants are bounded by
their values) and any array without ``maxItems``. Open JSON objects (task_context, procedure
context) are bounded by their validator (≤ 16 KiB, depth ≤ 8) and are not strings or arrays.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.contract.commit import CommitRequest
from slowave_graph.contract.feedback import FeedbackRequest
from slowave_graph.contract.recall import RecallRequest
from slowave_graph.contract.remember import RememberRequest

REQUESTS: list[type[BaseModel]] = [
    ActivateRequest,
    RememberRequest,
    RecallRequest,
    FeedbackRequest,
    CommitRequest,
]


def unbounded(node: Any, path: str, defs: dict[str, Any], seen: frozenset[str] = frozenset()) -> list[str]:
    """Paths of strings without maxLength and arrays without maxItems under ``node``."""
    found: list[str] = []
    if isinstance(node, list):
        for i, item in enumerate(node):
            found += unbounded(item, f"{path}[{i}]", defs, seen)
        return found
    if not isinstance(node, dict):
        return found
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name not in seen:
            found += unbounded(defs[name], f"{path}->{name}", defs, seen | {name})
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if "string" in kinds and "maxLength" not in node and "enum" not in node and "const" not in node:
        found.append(f"{path} (string without maxLength)")
    if "array" in kinds and "maxItems" not in node:
        found.append(f"{path} (array without maxItems)")
    for key, value in node.items():
        if key not in ("$defs", "examples", "default", "enum", "const"):
            found += unbounded(value, f"{path}.{key}", defs, seen)
    return found


@pytest.mark.parametrize("model", REQUESTS, ids=lambda m: m.__name__)
def test_every_input_string_and_array_is_bounded(model: type[BaseModel]) -> None:
    schema = model.model_json_schema()
    assert unbounded(schema, model.__name__, schema.get("$defs", {})) == []


def test_the_walk_finds_unbounded_fields() -> None:
    """The checker itself: it must flag what it is meant to flag, also behind a $ref."""

    class Inner(BaseModel):
        notes: list[str]

    class Loose(BaseModel):
        name: str
        inner: Inner

    schema = Loose.model_json_schema()
    found = unbounded(schema, "Loose", schema["$defs"])
    assert found == [
        "Loose.properties.name (string without maxLength)",
        "Loose.properties.inner->Inner.properties.notes (array without maxItems)",
        "Loose.properties.inner->Inner.properties.notes.items (string without maxLength)",
    ]


@pytest.mark.parametrize(
    ("model", "arguments", "path"),
    [
        (
            CommitRequest,
            {"session_id": "s", "final_goal": "g", "outcome": "success", "outcome_summary": "x",
             "verification": {"status": "verified", "summary": "s", "evidence_refs": ["r" * 501]}},
            ("verification", "evidence_refs", 0),
        ),
        (
            CommitRequest,
            {"session_id": "s", "final_goal": "g", "outcome": "success", "outcome_summary": "x",
             "verification": {"status": "verified", "summary": "s", "evidence_refs": []},
             "procedure": {"summary": "p", "context": {}, "steps": [{"summary": "a"}], "caveats": ["c" * 1001]}},
            ("procedure", "caveats", 0),
        ),
        (FeedbackRequest, {"retrieval_id": "ctx_1", "missing": ["m" * 1001]}, ("missing", 0)),
        (FeedbackRequest, {"items": [{"retrieval_id": "ctx_1", "missing": ["m" * 1001]}]}, ("items", 0, "missing", 0)),
    ],
)  # fmt: skip
def test_the_stated_limits_are_enforced(
    model: type[BaseModel], arguments: dict[str, Any], path: tuple[Any, ...]
) -> None:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(arguments)
    assert [e["loc"] for e in caught.value.errors()] == [path]
    assert caught.value.errors()[0]["type"] == "string_too_long"
