"""`slowave-graph demo run` (or plain `demo`): a scripted task lifecycle against a running server,
printed step by step. (`demo seed` is slowave_graph.demo.seed.)

It is an MCP client like any agent: activate → remember → recall → feedback → commit, then a
second task in the same scope that benefits from the first.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

from mcp import Client

Printer = Callable[[str], None]


class DemoFailed(RuntimeError):
    pass


async def _call(client: Client, say: Printer, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    say(f"\n→ {tool} {json.dumps(arguments, ensure_ascii=False)[:300]}")
    result = await client.call_tool(tool, arguments)
    envelope = result.structured_content or {}
    if not envelope.get("ok"):
        raise DemoFailed(f"{tool} failed: {json.dumps(envelope.get('error'), ensure_ascii=False)}")
    data: dict[str, Any] = envelope["data"]
    say(f"← {json.dumps(data, ensure_ascii=False)[:600]}")
    return data


def _all_not_used(result: dict[str, Any], used: set[str] | None = None) -> dict[str, Any]:
    used = used or set()
    return {
        "retrieval_id": result["retrieval_id"],
        "memory_feedback": [
            {"memory_id": m["memory_id"], "assessment": "used" if m["memory_id"] in used else "not_used"}
            for m in result["memories"]
        ],
        "procedure_feedback": [
            {"procedure_id": p["procedure_id"], "use": "not_used"} for p in result["procedures"]
        ],
        "coverage": "complete",
    }


async def run_demo(client: Client, scope: str | None = None, say: Printer = print) -> dict[str, Any]:
    """Two tasks in one scope; returns what the second task was shown."""
    scope = scope or f"demo:{secrets.token_hex(3)}"
    tools = sorted(t.name for t in (await client.list_tools()).tools)
    say(f"tools: {', '.join(tools)}\nscope: {scope}")

    say("\n# Task 1: fix flaky Atlas logins (a cold start)")
    act = await _call(
        client,
        say,
        "slowave_activate",
        {
            "task": "Users report being logged out of Atlas; find out why.",
            "initial_goal": "Find the cause of unexpected Atlas logouts",
            "scope": scope,
        },
    )
    session = act["session_id"]
    stored = await _call(
        client,
        say,
        "slowave_remember",
        {
            "scope": scope,
            "session_id": session,
            "memories": [
                {"content": "Atlas authentication credentials expire after 45 minutes", "type": "fact"},
                {
                    "content": "Atlas logout bugs are usually clock skew between the API pods",
                    "type": "lesson",
                },
                {
                    "content": "Never restart the Atlas auth service during business hours",
                    "type": "constraint",
                },
            ],
        },
    )
    ids = [r["data"]["memory_id"] for r in stored["results"]]
    found = await _call(
        client,
        say,
        "slowave_recall",
        {
            "scope": scope,
            "session_id": session,
            "query": "How long do Atlas login tokens remain valid?",
            "evidence": "full",
        },
    )
    await _call(client, say, "slowave_feedback", _all_not_used(act))
    await _call(client, say, "slowave_feedback", _all_not_used(found, used={ids[0]}))
    await _call(
        client,
        say,
        "slowave_commit",
        {
            "session_id": session,
            "final_goal": "Explain the Atlas logouts",
            "outcome": "success",
            "outcome_summary": "Logouts matched the 45-minute credential expiry; clients now refresh at 40.",
            "verification": {
                "status": "verified",
                "summary": "Reproduced and fixed in staging",
                "evidence_refs": ["staging-run-17"],
            },
            "procedure": {
                "summary": "Check credential expiry and pod clock skew before touching auth code",
                "context": {"service": "atlas"},
                "steps": [
                    {"summary": "Compare logout times with token issue times"},
                    {"summary": "Check clock skew between API pods"},
                ],
                "caveats": ["Do not restart auth during business hours"],
                "deduplication_key": "atlas-logout-triage",
            },
            "trajectory": [
                {
                    "kind": "observation",
                    "summary": "Logouts happen 45 minutes after login",
                    "status": "succeeded",
                }
            ],
        },
    )

    say("\n# Task 2: a related task later — memory and the procedure come back")
    second = await _call(
        client,
        say,
        "slowave_activate",
        {
            "task": "Atlas sessions end too early for some users",
            "initial_goal": "Fix early Atlas session ends",
            "scope": scope,
        },
    )
    await _call(client, say, "slowave_feedback", _all_not_used(second))
    await _call(
        client,
        say,
        "slowave_commit",
        {
            "session_id": second["session_id"],
            "final_goal": "Confirm the earlier fix covers it",
            "outcome": "success",
            "outcome_summary": "Same cause as before.",
            "verification": {"status": "partially_verified", "summary": "Checked logs", "evidence_refs": []},
        },
    )
    say(
        f"\nTask 2 was shown {len(second['memories'])} memories and {len(second['procedures'])} procedure(s)."
    )
    return second
