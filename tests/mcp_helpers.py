"""Calling the tools through a real MCP client and reading the contract's envelope."""

from __future__ import annotations

from typing import Any

from mcp import Client

TOOL_NAMES = {"slowave_activate", "slowave_remember", "slowave_recall", "slowave_feedback", "slowave_commit"}


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The envelope of one tool call (never a framework error)."""
    result = await client.call_tool(tool, arguments)
    envelope = result.structured_content
    assert isinstance(envelope, dict), result
    # a refusal is an MCP error too (isError), with the envelope saying which
    assert result.is_error is (envelope["ok"] is False), result
    return envelope


def ok(envelope: dict[str, Any]) -> dict[str, Any]:
    assert envelope["ok"] is True, envelope
    data = envelope["data"]
    assert isinstance(data, dict)
    return data


def error(envelope: dict[str, Any], code: str) -> dict[str, Any]:
    assert envelope["ok"] is False, envelope
    err = envelope["error"]
    assert err["code"] == code, err
    return err


def paths(err: dict[str, Any]) -> set[str]:
    return {fe["path"] for fe in err.get("field_errors") or []}


async def activate(client: Client, scope: str, task: str = "Start work", **extra: Any) -> dict[str, Any]:
    args = {"task": task, "initial_goal": extra.pop("initial_goal", task), "scope": scope, **extra}
    return ok(await call(client, "slowave_activate", args))


async def remember(
    client: Client, scope: str, session_id: str, content: str, type_: str = "fact", **extra: Any
) -> dict[str, Any]:
    args = {"scope": scope, "session_id": session_id, "content": content, "type": type_, **extra}
    return ok(await call(client, "slowave_remember", args))


async def recall(client: Client, scope: str, session_id: str, query: str, **extra: Any) -> dict[str, Any]:
    args = {"scope": scope, "session_id": session_id, "query": query, **extra}
    return ok(await call(client, "slowave_recall", args))


async def settle(client: Client, result: dict[str, Any], assessment: str = "not_used") -> dict[str, Any]:
    """Assess everything a retrieval showed (same assessment) and declare coverage complete."""
    args = {
        "retrieval_id": result["retrieval_id"],
        "memory_feedback": [
            {"memory_id": m["memory_id"], "assessment": assessment} for m in result["memories"]
        ],
        "procedure_feedback": [
            {"procedure_id": p["procedure_id"], "use": "not_used"} for p in result["procedures"]
        ],
        "coverage": "complete",
    }
    data = ok(await call(client, "slowave_feedback", args))
    assert data["coverage"] == "complete" and data["rejected"] == [], data
    return data


def commit_args(session_id: str, outcome: str = "success", **extra: Any) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "final_goal": extra.pop("final_goal", "Finish the task"),
        "outcome": outcome,
        "outcome_summary": extra.pop("outcome_summary", f"The task ended in {outcome}."),
        "verification": extra.pop(
            "verification",
            {"status": "verified", "summary": "Ran the checks.", "evidence_refs": ["pytest -q"]},
        ),
        **extra,
    }


async def commit(client: Client, session_id: str, outcome: str = "success", **extra: Any) -> dict[str, Any]:
    return ok(await call(client, "slowave_commit", commit_args(session_id, outcome, **extra)))


async def mark_helped(client: Client, result: dict[str, Any]) -> list[str]:
    """Feedback that every memory a retrieval showed was used and helped (which makes it learned);
    the ids marked."""
    marks = [
        {"memory_id": m["memory_id"], "assessment": "used", "effect": "helped"} for m in result["memories"]
    ]
    ok(
        await call(
            client, "slowave_feedback", {"retrieval_id": result["retrieval_id"], "memory_feedback": marks}
        )
    )
    return [m["memory_id"] for m in marks]
