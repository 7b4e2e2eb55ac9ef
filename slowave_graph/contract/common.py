"""Types shared by every tool: scopes, ids, the envelope, errors, and JSON-object context rules.

Validation errors raised here may carry ``path`` (or ``field`` for cross-field rules) in their
context; the adapter reports that as the error's ``field_errors[].path``.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic_core import PydanticCustomError

# --------------------------------------------------------------------------- base models


class StrictInput(BaseModel):
    """Tool input: unknown keys rejected, no type coercion ("5" is not an int, true is not 5)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Output(BaseModel):
    """Tool output."""

    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- scalar types

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def _nonblank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("blank", "must not be blank")
    if _CONTROL.search(value):
        raise PydanticCustomError("control_characters", "must not contain control characters")
    return value


# Use with Field(max_length=…, description=…): every string states its limit in the schema.
NonBlank = Annotated[str, StringConstraints(min_length=1), AfterValidator(_nonblank)]
# A list item cannot take Field(max_length=…) from its list: nonblank items bound here.
NonBlankItem = Annotated[str, StringConstraints(min_length=1, max_length=1_000), AfterValidator(_nonblank)]


SCOPE_PATTERN = r"^[^:]*[^:\s]:[\s\S]*\S"
# The kind of the scopes `slowave-graph demo` writes to: the dashboard marks them, `demo cleanup`
# removes them.
DEMO_SCOPE_KIND = "demo"


def is_demo_scope(scope: str) -> bool:
    return scope.partition(":")[0] == DEMO_SCOPE_KIND


def _scope(value: str) -> str:
    # surrounding whitespace is an artefact of how a client assembled the value: trimmed, as the
    # reference does, rather than refused
    value = value.strip()
    kind, sep, ident = value.partition(":")
    if not sep or not kind.strip() or not ident.strip():
        raise PydanticCustomError(
            "scope", "scope must look like kind:id with both parts nonblank, e.g. project:shop"
        )
    if kind != kind.strip() or _CONTROL.search(value):
        raise PydanticCustomError("scope", "scope kind must not have whitespace; no control characters")
    if any(unicodedata.category(ch) == "Cf" for ch in value):
        # zero-width and bidi controls: invisible, so two scopes would look the same
        raise PydanticCustomError("scope", "scope must not contain invisible (zero-width or bidi) characters")
    return value


ScopeStr = Annotated[
    str,
    StringConstraints(max_length=200),
    AfterValidator(_scope),
    Field(
        description="kind:id, e.g. project:shop, spelled the same way every time.",
        # what _scope checks that a schema can say: a kind not ending in whitespace, a nonblank id
        # (leading whitespace is trimmed); the published form of the rule for strict clients
        json_schema_extra={"pattern": SCOPE_PATTERN},
    ),
]

SessionId = Annotated[
    str,
    StringConstraints(min_length=1, max_length=100),
    Field(description="From slowave_activate."),
]


def _rfc3339(value: str) -> str:
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise PydanticCustomError(
            "rfc3339", "must be an RFC 3339 timestamp such as 2026-03-01T09:30:00Z"
        ) from None
    if parsed.tzinfo is None or "T" not in value.upper():
        raise PydanticCustomError(
            "rfc3339_offset",
            "must be an RFC 3339 timestamp with a time and an offset (Z or +hh:mm), "
            "e.g. 2026-03-01T09:30:00Z",
        )
    offset = parsed.utcoffset()
    try:  # the instant must exist in UTC (year 1 at +10:00 does not) and Neo4j takes ±18:00
        parsed.astimezone(UTC)
        in_range = offset is not None and abs(offset) <= timedelta(hours=18)
    except (OverflowError, ValueError):
        in_range = False
    if not in_range:
        raise PydanticCustomError(
            "rfc3339_range", "must be a time between years 1 and 9999 in UTC, with an offset within ±18:00"
        )
    return value


Rfc3339 = Annotated[
    str,
    StringConstraints(min_length=10, max_length=40),
    AfterValidator(_rfc3339),
]
RFC3339_HELP = "When it happened, RFC 3339 with offset (2026-03-01T09:30:00Z)."


def parse_rfc3339(value: str) -> datetime:
    """An already validated RFC 3339 string as an aware datetime."""
    return datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))


# --------------------------------------------------------------------------- task_context

TASK_CONTEXT_MAX_BYTES = 16 * 1024
TASK_CONTEXT_MAX_DEPTH = 8
# a lowercase identifier, dotted or namespaced as clients name things: task.type, service-name, env:prod
CONTEXT_KEY_PATTERN = r"^[a-z][a-z0-9_.:-]{0,63}$"
_KEY = re.compile(CONTEXT_KEY_PATTERN)


def _check_context(value: Any, within: str, depth: int) -> None:
    """``within``: where in the context object (".repo", ".files[0]"), reported after the field's
    own path (task_context, procedure.context)."""
    if depth > TASK_CONTEXT_MAX_DEPTH:
        raise PydanticCustomError(
            "context_depth", "context nests deeper than {max} levels",
            {"max": TASK_CONTEXT_MAX_DEPTH, "within": within},
        )  # fmt: skip
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str) or not _KEY.fullmatch(key):
                raise PydanticCustomError(
                    "context_key",
                    "context keys start with a-z and hold only a-z 0-9 _ . : - (≤ 64): {key}",
                    {"key": repr(key), "within": f"{within}.{key}"},
                )
            _check_context(item, f"{within}.{key}", depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict | list):
                raise PydanticCustomError(
                    "context_array", "context arrays may hold only scalars",
                    {"within": f"{within}[{index}]"},
                )  # fmt: skip
    elif isinstance(value, float) and not math.isfinite(value):
        raise PydanticCustomError("context_value", "numbers must be finite", {"within": within})
    elif isinstance(value, str) and _CONTROL.search(value):
        raise PydanticCustomError("context_value", "must not contain control characters", {"within": within})
    elif not (value is None or isinstance(value, str | int | float | bool)):
        raise PydanticCustomError("context_value", "unsupported value", {"within": within})


def _task_context(value: dict[str, Any]) -> dict[str, Any]:
    _check_context(value, "", 1)
    size = len(json.dumps(value, ensure_ascii=False).encode(errors="replace"))
    if size > TASK_CONTEXT_MAX_BYTES:
        raise PydanticCustomError(
            "context_size", "context is {size} bytes; the limit is {limit}",
            {"size": size, "limit": TASK_CONTEXT_MAX_BYTES},
        )  # fmt: skip
    return value


TaskContext = Annotated[
    dict[str, Any],
    AfterValidator(_task_context),
    Field(
        description="Facts about the task used as retrieval cues (e.g. repo, env:prod): a JSON object "
        "≤ 16 KiB, arrays of scalars only.",
        json_schema_extra={"propertyNames": {"pattern": _KEY.pattern}},
    ),
]

PageSize = Annotated[
    int,
    Field(ge=1, le=10, description="Memories per page (default 5)."),
]


# Literal (not Enum): strict validation of plain JSON strings, and an `enum` in the schema.
MemoryType = Literal[
    "fact", "preference", "decision", "constraint", "instruction",
    "lesson", "warning", "open_question", "task", "artifact",
]  # fmt: skip
MEMORY_TYPES: tuple[str, ...] = MemoryType.__args__  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- envelope


class ErrorCode(StrEnum):
    invalid_input = "invalid_input"
    not_found = "not_found"
    incomplete_feedback = "incomplete_feedback"
    storage_error = "storage_error"
    unavailable = "unavailable"
    internal_error = "internal_error"


class FieldError(Output):
    path: str = Field(description="Where the problem is, e.g. procedure.steps[0].summary.")
    message: str


class ErrorBody(Output):
    model_config = ConfigDict(extra="allow")

    code: ErrorCode
    message: str
    retryable: bool
    field_errors: list[FieldError] | None = None


DataT = TypeVar("DataT")


class Envelope(Output, Generic[DataT]):
    """What every tool returns: ``{"ok": true, "data": …}`` or ``{"ok": false, "error": …}``."""

    ok: bool = Field(description="false: read error.code, error.message and error.retryable.")
    data: DataT | None = None
    error: ErrorBody | None = None


class Warning_(Output):
    code: str
    message: str
