"""Calling the tools through a real MCP client and reading the contract's envelope."""

from __future__ import annotations

from typing import Any

from mcp import Client

from slowave_graph.workload import driver

TOOL_NAMES = set(driver.TOOLS)


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The envelope of one tool call (never a framework error)."""
    result = await client.call_tool(tool, arguments)
    envelope = driver.checked_envelope(result)
    # an envelope, and a refusal is an MCP error too (isError), with the envelope saying which
    assert envelope is not None, result
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
    return ok(await call(client, "slowave_activate", driver.activate_args(scope, task, **extra)))


async def remember(
    client: Client, scope: str, session_id: str, content: str, type_: str = "fact", **extra: Any
) -> dict[str, Any]:
    args = driver.session_args(scope, session_id, content=content, type=type_, **extra)
    return ok(await call(client, "slowave_remember", args))


async def recall(client: Client, scope: str, session_id: str, query: str, **extra: Any) -> dict[str, Any]:
    args = driver.session_args(scope, session_id, query=query, **extra)
    return ok(await call(client, "slowave_recall", args))


async def settle(client: Client, result: dict[str, Any], assessment: str = "not_used") -> dict[str, Any]:
    """Assess everything a retrieval showed (same assessment) and declare coverage complete."""
    data = ok(await call(client, "slowave_feedback", driver.complete_feedback(result, assessment)))
    assert data["coverage"] == "complete" and data["rejected"] == [], data
    return data


def commit_args(session_id: str, outcome: str = "success", **extra: Any) -> dict[str, Any]:
    return driver.commit_args(
        session_id,
        extra.pop("final_goal", "Finish the task"),
        outcome,
        extra.pop("outcome_summary", f"The task ended in {outcome}."),
        extra.pop(
            "verification",
            {"status": "verified", "summary": "Ran the checks.", "evidence_refs": ["pytest -q"]},
        ),
        **extra,
    )


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
