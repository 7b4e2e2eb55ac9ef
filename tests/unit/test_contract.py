"""Contract models: what is accepted, what is rejected, and where the error points."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import ValidationError

from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.contract.remember import RememberRequest
from slowave_graph.mcp.adapter import field_path, validation_failure

BASE = {"task": "Fix login", "initial_goal": "Find the bug", "scope": "project:shop"}


def error_paths(model: Any, data: dict[str, Any]) -> set[str]:
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    body = validation_failure(info.value)
    assert body.code == "invalid_input" and body.retryable is False
    return {fe.path for fe in body.field_errors or []}


def test_minimal_activate_gets_defaults() -> None:
    req = ActivateRequest.model_validate(BASE)
    assert req.page_size == 5 and req.continuity_id is None and req.task_context is None


@pytest.mark.parametrize("scope", ["project:shop", "user:alice@example.com", "team:a:b", "p:x y"])
def test_valid_scopes(scope: str) -> None:
    assert ActivateRequest.model_validate({**BASE, "scope": scope}).scope == scope


@pytest.mark.parametrize(
    "scope",
    [
        *["project", "project:", ":shop", " :shop", "project: ", "project :shop", "p:\x00x", "", "a" * 201],
        *["project:sh\u200bop", "project:\u202eshop", "user:alice\u2066", "project:\ufeffshop"],
    ],
)
def test_invalid_scopes(scope: str) -> None:
    assert error_paths(ActivateRequest, {**BASE, "scope": scope}) == {"scope"}


@pytest.mark.parametrize("scope", [" project:shop", "project:shop\n", "\tproject:shop  "])
def test_surrounding_whitespace_of_a_scope_is_trimmed(scope: str) -> None:
    assert ActivateRequest.model_validate({**BASE, "scope": scope}).scope == "project:shop"


def test_the_published_scope_pattern_says_the_validators_rule() -> None:
    """Strict clients check the pattern before sending: it must accept every scope the server
    accepts and refuse the malformed ones (invisible and control characters stay the server's)."""
    pattern = re.compile(ActivateRequest.model_json_schema()["properties"]["scope"]["pattern"])
    for scope in ["project:shop", "user:alice@example.com", "team:a:b", "p:x y", " project:shop", "p:x\n"]:
        ActivateRequest.model_validate({**BASE, "scope": scope})
        assert pattern.search(scope), scope
    for scope in ["project", "project:", ":shop", " :shop", "project: ", "project :shop", "", "p:\n"]:
        assert not pattern.search(scope), scope
        assert error_paths(ActivateRequest, {**BASE, "scope": scope}) == {"scope"}


@pytest.mark.parametrize("page_size", [0, 11, -1, "5", True, 5.0, None])
def test_page_size_is_a_strict_integer_1_to_10(page_size: Any) -> None:
    assert error_paths(ActivateRequest, {**BASE, "page_size": page_size}) == {"page_size"}


@pytest.mark.parametrize("page_size", [1, 10])
def test_page_size_bounds(page_size: int) -> None:
    assert ActivateRequest.model_validate({**BASE, "page_size": page_size}).page_size == page_size


def test_unknown_keys_are_rejected() -> None:
    assert error_paths(ActivateRequest, {**BASE, "Task": "x"}) == {"Task"}


@pytest.mark.parametrize(
    ("context", "path"),
    [
        ({"Repo": "x"}, "task_context.Repo"),
        ({"9lives": "x"}, "task_context.9lives"),
        ({"repo name": "x"}, "task_context.repo name"),
        ({"files": [{"a": 1}]}, "task_context.files[0]"),
        ({"files": [[1]]}, "task_context.files[0]"),
        ({"a": {"b": {"c": {"d": {"e": {"f": {"g": {"h": 1}}}}}}}}, "task_context.a.b.c.d.e.f.g.h"),
        ({"blob": "x" * (16 * 1024)}, "task_context"),
    ],
)
def test_task_context_rules(context: dict[str, Any], path: str) -> None:
    assert error_paths(ActivateRequest, {**BASE, "task_context": context}) == {path}


def test_task_context_accepts_nested_objects_and_scalar_arrays() -> None:
    context = {
        "repo": "shop",
        "files": ["a.py", 3, True, None],
        "env": {"python": "3.11", "ci": {"on": True}},
    }
    assert ActivateRequest.model_validate({**BASE, "task_context": context}).task_context == context


REMEMBER = {"scope": "project:shop", "session_id": "sess_1"}


@pytest.mark.parametrize(
    "occurred_at", ["2026-03-01T09:30:00Z", "2026-03-01T09:30:00+01:00", "2026-03-01T09:30:00.123-05:30"]
)
def test_occurred_at_with_offset(occurred_at: str) -> None:
    req = RememberRequest.model_validate(
        {**REMEMBER, "content": "c", "type": "fact", "occurred_at": occurred_at}
    )
    assert req.items()[0].occurred_at == occurred_at


@pytest.mark.parametrize(
    "occurred_at", ["2026-03-01T09:30:00", "2026-03-01", "yesterday", "2026-13-01T00:00:00Z", 1700000000]
)
def test_occurred_at_needs_time_and_offset(occurred_at: Any) -> None:
    data = {**REMEMBER, "content": "c", "type": "fact", "occurred_at": occurred_at}
    assert error_paths(RememberRequest, data) == {"occurred_at"}


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ({"content": "c"}, "type"),
        ({"type": "fact"}, "content"),
        ({}, "content"),
        ({"content": "c", "type": "fact", "memories": [{"content": "d", "type": "fact"}]}, "memories"),
        ({"memories": []}, "memories"),
        ({"memories": [{"content": "d", "type": "fact", "extra": 1}]}, "memories[0].extra"),
        ({"memories": [{"content": "d", "type": "useful"}]}, "memories[0].type"),
        ({"content": "   ", "type": "fact"}, "content"),
        ({"content": "x" * 8001, "type": "fact"}, "content"),
    ],
)
def test_remember_forms(extra: dict[str, Any], path: str) -> None:
    assert error_paths(RememberRequest, {**REMEMBER, **extra}) == {path}


def test_remember_items_from_both_forms() -> None:
    single = RememberRequest.model_validate({**REMEMBER, "content": "c", "type": "lesson"})
    assert [(i.content, i.type) for i in single.items()] == [("c", "lesson")]
    batch = RememberRequest.model_validate(
        {**REMEMBER, "memories": [{"content": "a", "type": "fact"}, {"content": "b", "type": "task"}]}
    )
    assert [(i.content, i.type) for i in batch.items()] == [("a", "fact"), ("b", "task")]


def test_field_path_format() -> None:
    assert field_path(("procedure", "steps", 0, "summary")) == "procedure.steps[0].summary"
    assert field_path(("memories", 2)) == "memories[2]"
    assert field_path(()) == ""


def test_a_string_too_long_is_measured_in_characters() -> None:
    request = {"scope": "project:shop", "session_id": "ses_123456789", "type": "fact"}
    for content, expected in (("a" * 8001, "at most 8000 characters, not 8001"), ("é" * 8001, "not 8001")):
        with pytest.raises(ValidationError) as info:
            RememberRequest.model_validate({**request, "content": content})
        (error,) = validation_failure(info.value).field_errors or []
        assert error.path == "content" and expected in error.message and "items" not in error.message
