"""The agent's side of a task lifecycle over MCP, as a script drives it: activate → remember →
recall → feedback on everything shown → commit.

The JVM's training (``workload.lifecycle``), the demo, the benchmarks and the tests build their
calls and read the answers with these; what a refusal means stays each caller's own (print it and
stop, count it and go on, assert). Nothing here validates an answer beyond what its caller asks for: the load
benchmark times every call, on the same cores as the server.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from slowave_graph.exceptions import SlowaveError

TOOLS = ("slowave_activate", "slowave_remember", "slowave_recall", "slowave_feedback", "slowave_commit")


class ToolAnswer(Protocol):
    """What is read of a tool result: the SDK's ``CallToolResult`` or the load benchmark's own."""

    @property
    def structured_content(self) -> Any: ...

    @property
    def is_error(self) -> bool: ...


class ToolClient(Protocol):
    """An MCP client: the SDK's ``Client`` or the load benchmark's lean one (``bench.mcp_http``)."""

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolAnswer: ...


class Refused(SlowaveError):
    """A tool answered without an ok envelope."""

    def __init__(self, tool: str, error: dict[str, Any] | None) -> None:
        super().__init__(f"{tool}: {error}")
        self.tool = tool
        self.error = error  # the envelope's error; None without one

    @property
    def code(self) -> str:
        return str((self.error or {}).get("code", "unknown"))


def data_of(tool: str, answer: ToolAnswer) -> dict[str, Any]:
    """The data of an ok envelope, else Refused. Reads ``ok`` and nothing more (see
    ``checked_envelope`` for the MCP error flag)."""
    envelope = answer.structured_content or {}
    if not envelope.get("ok"):
        raise Refused(tool, envelope.get("error"))
    data: dict[str, Any] = envelope["data"]
    return data


def checked_envelope(answer: ToolAnswer) -> dict[str, Any] | None:
    """The envelope when there is one and MCP's isError says the same as its ``ok`` (a refusal is
    an MCP error too); None otherwise, e.g. for a framework error, which has no envelope."""
    envelope = answer.structured_content
    if not isinstance(envelope, dict) or not isinstance(envelope.get("ok"), bool):
        return None
    return envelope if answer.is_error is (not envelope["ok"]) else None


@dataclass
class Recorder:
    """Calls answered, each tool's round trips in seconds as the client saw them, and failures by
    kind (the caller names them)."""

    calls: int = 0
    latency: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter[str] = field(default_factory=Counter)

    async def call(self, client: ToolClient, tool: str, arguments: dict[str, Any]) -> ToolAnswer:
        """The tool's answer, its round trip recorded; the clock stops before anything reads the
        answer. A transport failure is raised, neither timed nor counted."""
        started = time.perf_counter()
        answer = await client.call_tool(tool, arguments)
        self.latency[tool].append(time.perf_counter() - started)
        self.calls += 1
        return answer


# ------------------------------------------------------------------ the steps' arguments


def activate_args(scope: str, task: str, initial_goal: str | None = None, **extra: Any) -> dict[str, Any]:
    """slowave_activate; the goal is the task itself unless told otherwise."""
    goal = task if initial_goal is None else initial_goal
    return {"task": task, "initial_goal": goal, "scope": scope, **extra}


def session_args(scope: str, session_id: str, **fields: Any) -> dict[str, Any]:
    """A call inside a session: slowave_remember (``content``/``type`` or ``memories``) or
    slowave_recall (``query`` or ``continue_from``)."""
    return {"scope": scope, "session_id": session_id, **fields}


def feedback_args(
    retrieval_id: str,
    memory_feedback: list[dict[str, Any]],
    procedure_feedback: list[dict[str, Any]],
    coverage: str = "complete",
) -> dict[str, Any]:
    return {
        "retrieval_id": retrieval_id,
        "memory_feedback": memory_feedback,
        "procedure_feedback": procedure_feedback,
        "coverage": coverage,
    }


def complete_feedback(
    shown: Mapping[str, Any], assess: str | Callable[[dict[str, Any]], str] = "not_used"
) -> dict[str, Any]:
    """Feedback on everything one retrieval showed, coverage complete: each memory assessed
    (``assess``: one assessment for all, or one per memory, called in the order shown), each
    procedure not used."""
    return feedback_args(
        shown["retrieval_id"],
        [
            {"memory_id": m["memory_id"], "assessment": assess(m) if callable(assess) else assess}
            for m in shown["memories"]
        ],
        [{"procedure_id": p["procedure_id"], "use": "not_used"} for p in shown["procedures"]],
    )


def commit_args(
    session_id: str,
    final_goal: str,
    outcome: str,
    outcome_summary: str,
    verification: dict[str, Any],
    **extra: Any,
) -> dict[str, Any]:
    """slowave_commit; ``extra``: a procedure, a trajectory …"""
    return {
        "session_id": session_id,
        "final_goal": final_goal,
        "outcome": outcome,
        "outcome_summary": outcome_summary,
        "verification": verification,
        **extra,
    }
