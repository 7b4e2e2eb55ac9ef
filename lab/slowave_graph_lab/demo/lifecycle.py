"""`slowave-graph demo run` (or plain `demo`): a scripted task lifecycle against a running server,
printed step by step. (`demo seed` is slowave_graph_lab.demo.seed.)

It is an MCP client like any agent: activate → remember → recall → feedback → commit, then a
second task in the same scope that benefits from the first.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Any

from mcp import Client

from slowave_graph.contract.common import DEMO_SCOPE_KIND
from slowave_graph.workload import driver

Printer = Callable[[str], None]


class DemoFailed(RuntimeError):
    pass


async def _call(client: Client, say: Printer, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    say(f"\n→ {tool} {json.dumps(arguments, ensure_ascii=False)[:300]}")
    try:
        data = driver.data_of(tool, await client.call_tool(tool, arguments))
    except driver.Refused as refused:
        raise DemoFailed(f"{tool} failed: {json.dumps(refused.error, ensure_ascii=False)}") from None
    say(f"← {json.dumps(data, ensure_ascii=False)[:600]}")
    return data


def new_demo_scope() -> str:
    """A fresh scope for one run: runs never mix, and `demo cleanup` finds them by their kind."""
    return f"{DEMO_SCOPE_KIND}:{secrets.token_hex(3)}"


async def run_demo(client: Client, scope: str | None = None, say: Printer = print) -> dict[str, Any]:
    """Two tasks in one scope; returns what the second task was shown."""
    scope = scope or new_demo_scope()
    tools = sorted(t.name for t in (await client.list_tools()).tools)
    say(f"tools: {', '.join(tools)}\nscope: {scope}")
    await _first_task(client, say, scope)
    second = await _second_task(client, say, scope)
    say(
        f"\nTask 2 was shown {len(second['memories'])} memories and {len(second['procedures'])} procedure(s)."
    )
    return second


async def _first_task(client: Client, say: Printer, scope: str) -> None:
    """A cold start: activate, store three memories, recall one, give feedback and commit with a
    procedure for next time."""
    say("\n# Task 1: fix flaky Atlas logins (a cold start)")
    act = await _call(
        client,
        say,
        "slowave_activate",
        driver.activate_args(
            scope,
            "Users report being logged out of Atlas; find out why.",
            "Find the cause of unexpected Atlas logouts",
        ),
    )
    session = act["session_id"]
    stored = await _call(
        client, say, "slowave_remember", driver.session_args(scope, session, memories=_first_memories())
    )
    ids = [r["data"]["memory_id"] for r in stored["results"]]
    found = await _call(
        client,
        say,
        "slowave_recall",
        driver.session_args(
            scope, session, query="How long do Atlas login tokens remain valid?", evidence="full"
        ),
    )
    await _call(client, say, "slowave_feedback", driver.complete_feedback(act))
    await _call(
        client,
        say,
        "slowave_feedback",
        driver.complete_feedback(found, lambda m: "used" if m["memory_id"] == ids[0] else "not_used"),
    )
    await _call(client, say, "slowave_commit", _first_commit(session))


def _first_memories() -> list[dict[str, str]]:
    """What the first task learns: a fact, a lesson and a constraint."""
    return [
        {"content": "Atlas authentication credentials expire after 45 minutes", "type": "fact"},
        {
            "content": "Atlas logout bugs are usually clock skew between the API pods",
            "type": "lesson",
        },
        {
            "content": "Never restart the Atlas auth service during business hours",
            "type": "constraint",
        },
    ]


def _first_commit(session: str) -> dict[str, Any]:
    """The first task's commit: verified, with the triage procedure and what was observed."""
    return driver.commit_args(
        session,
        "Explain the Atlas logouts",
        "success",
        "Logouts matched the 45-minute credential expiry; clients now refresh at 40.",
        {
            "status": "verified",
            "summary": "Reproduced and fixed in staging",
            "evidence_refs": ["staging-run-17"],
        },
        procedure={
            "summary": "Check credential expiry and pod clock skew before touching auth code",
            "context": {"service": "atlas"},
            "steps": [
                {"summary": "Compare logout times with token issue times"},
                {"summary": "Check clock skew between API pods"},
            ],
            "caveats": ["Do not restart auth during business hours"],
            "deduplication_key": "atlas-logout-triage",
        },
        trajectory=[
            {
                "kind": "observation",
                "summary": "Logouts happen 45 minutes after login",
                "status": "succeeded",
            }
        ],
    )


async def _second_task(client: Client, say: Printer, scope: str) -> dict[str, Any]:
    """A related task in the same scope; returns what its activation was shown."""
    say("\n# Task 2: a related task later — memory and the procedure come back")
    second = await _call(
        client,
        say,
        "slowave_activate",
        driver.activate_args(
            scope, "Atlas sessions end too early for some users", "Fix early Atlas session ends"
        ),
    )
    await _call(client, say, "slowave_feedback", driver.complete_feedback(second))
    await _call(
        client,
        say,
        "slowave_commit",
        driver.commit_args(
            second["session_id"],
            "Confirm the earlier fix covers it",
            "success",
            "Same cause as before.",
            {"status": "partially_verified", "summary": "Checked logs", "evidence_refs": []},
        ),
    )
    return second
