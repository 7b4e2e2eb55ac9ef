"""Calling the tools through a real MCP client and reading the contract's envelope."""

from __future__ import annotations

from typing import Any

from mcp import Client


async def call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The envelope of one tool call (never a framework error)."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    envelope = result.structured_content
    assert isinstance(envelope, dict), result
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
