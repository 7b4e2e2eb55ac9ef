"""Hostile input, property-based: every tool through the real in-process MCP client.

Arguments are random JSON, valid calls with one field replaced by junk (wrong types, oversized and
deeply nested values, NUL and control characters, noncharacters, RTL and zero-width marks, emoji,
1 MB strings,
Cypher/Lucene-injection-shaped text, ids of another scope), unknown keys and missing ones.
Properties: every call returns the contract's envelope — never a framework error and never
``internal_error``; a refused call changes nothing in either scope (fingerprint before/after);
nothing of the other scope comes back; the server keeps answering. (Lone surrogates and nesting
deeper than the SDK client serialises cannot be sent by a client; test_http_security posts them
as raw JSON to a server process.)

The suite runs SLOWAVE_FUZZ_EXAMPLES (default 40) examples per tool; `make fuzz` is the deep run
(10,000 per tool) and prints how the calls ended, per tool and error code.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pydantic_core
import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from tests.support.mcp_helpers import TOOL_NAMES, activate, call, remember, settle
from tests.support.servers import CLIENT_INFO

pytestmark = pytest.mark.neo4j

EXAMPLES = int(os.environ.get("SLOWAVE_FUZZ_EXAMPLES", "40"))  # per tool
CODES = {"invalid_input", "not_found", "incomplete_feedback", "storage_error", "unavailable"}

EDGE_STRINGS = [
    "", " ", "\t\n", "\x00", "a\x00b", "\x1b[31mred", "\U0010ffff", "\ufffe",
    "\u202eevil\u202c", "שלום עולם", "مرحبا", "🧠💾🔥" * 5, "\u200b\u200d\ufeff", "Ǆǅǆ", "ﬁ",
    "' OR 1=1 --", "\") MATCH (n) DETACH DELETE n //", "}) RETURN 1 UNION MATCH (m) RETURN m //",
    "$scope", "{scope}", "%(scope)s", "%s", "${jndi:ldap://x/a}", "*:*",
    "scope_token:* OR status:stale", "content:(a OR b)^1000 +status:active", '"\\', "test:other",
    "sch_1", "ctx_0000000000000000", "cur_00000000000000000000", "cont_x", "fbe_1", "proc_sess_1",
    "a" * 10_001, "é" * 8_001, "x" * (1 << 20),
]  # fmt: skip

text = st.one_of(st.sampled_from(EDGE_STRINGS), st.text(max_size=40))
scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), text,
)  # fmt: skip
junk = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(text, inner, max_size=5)),
    max_leaves=25,
)


def nested(depth: int, as_list: bool) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    return value


deep = st.builds(nested, st.integers(min_value=9, max_value=150), st.booleans())
oversized = st.one_of(
    st.just([{"memory_id": "sch_1", "assessment": "used"}] * 101),
    st.just([{"content": "c", "type": "fact"}] * 101),
    st.just(list(range(5_000))),
    st.just({f"k{i}": i for i in range(3_000)}),
)
junk_value = st.one_of(junk, deep, oversized)


@dataclass
class World:
    """Two scopes with live ids; the fuzzer points calls at A and mixes in B's ids."""

    scope_a: str
    scope_b: str
    ids: dict[str, str]

    def bases(self) -> dict[str, dict[str, Any]]:
        a, i = self.scope_a, self.ids
        verification = {"status": "verified", "summary": "checked", "evidence_refs": ["x"]}
        return {
            "slowave_activate": {"task": "Fix the login timeouts", "initial_goal": "Fix logins", "scope": a,
                                 "task_context": {"repo": "atlas"}, "page_size": 3},
            "slowave_remember": {"scope": a, "session_id": i["session_a"], "type": "fact",
                                 "content": "Atlas tokens last 45 minutes", "occurred_at": "2026-03-01T09:30:00Z"},
            "slowave_recall": {"scope": a, "session_id": i["session_a"], "query": "How long do tokens last?",
                               "task_context": {"topic": "auth"}, "evidence": "full"},
            "slowave_feedback": {"retrieval_id": i["retrieval_a"], "coverage": "partial",
                                 "memory_feedback": [{"memory_id": i["memory_a"], "assessment": "stale",
                                                      "stale_reason": "superseded", "reason": "r",
                                                      "replacement_memory_id": i["memory_a2"]}]},
            "slowave_commit": {"session_id": i["session_c"], "final_goal": "g", "outcome": "success",
                               "outcome_summary": "s", "verification": verification,
                               "procedure": {"summary": "p", "context": {}, "steps": [{"summary": "s"}],
                                             "caveats": ["c"]}},
        }  # fmt: skip

    def foreign(self) -> st.SearchStrategy[str]:
        """Ids that exist but belong to scope B (or to nothing), for scope-crossing attempts."""
        i = self.ids
        return st.sampled_from(
            [i["session_b"], i["memory_b"], i["retrieval_b"], i["continuity_b"], self.scope_b, "sess_0"]
        )


# What a refused call could have touched, read in constant time so the deep run stays linear: the
# whole store's node and relationship counts (Neo4j's count store), each scope's membership degree,
# and the state of every node the fuzzer aims at (both scopes' sessions, retrievals and memories)
# with its degree. A refused call that wrote anything changes one of these.
FINGERPRINT = """
CALL () { MATCH (n) RETURN count(n) AS nodes }
CALL () { MATCH ()-[r]->() RETURN count(r) AS links }
UNWIND $scopes AS scope
MATCH (s:Scope {id: scope})
WITH nodes, links, collect([s.id, COUNT { (s)<-[:IN_SCOPE]-() }]) AS scopes
UNWIND $ids AS id
CALL (id) {  // one index lookup per label the world's ids carry
  MATCH (n:Memory {id: id}) RETURN n
  UNION MATCH (n:Session {id: id}) RETURN n
  UNION MATCH (n:Retrieval {id: id}) RETURN n
  UNION MATCH (n:Continuity {id: id}) RETURN n
}
RETURN nodes, links, scopes,
       collect([id, n.status, n.salience, n.last_seen_at, n.task_context, n.outcome, n.ended_at,
                n.pages_served, n.complete_exposures, n.missing, COUNT { (n)--() }]) AS targets
"""


async def fingerprint(app: App, world: World) -> tuple[Any, ...]:
    result = await app.db.driver.execute_query(
        FINGERPRINT,
        scopes=[world.scope_a, world.scope_b],
        ids=sorted(world.ids.values()),
        database_=app.db.database,
    )
    [row] = result.records
    data = row.data()
    return data["nodes"], data["links"], sorted(map(str, data["scopes"])), sorted(map(str, data["targets"]))


@asynccontextmanager
async def held_client(app: App) -> AsyncIterator[Client]:
    """An in-process client shared by a module's tests: entered and exited in one task of its own
    (the SDK's task group must close in the task that opened it, not in fixture teardown)."""
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        async with Client(build_server(app), client_info=CLIENT_INFO) as client:
            ready.set_result(client)
            await done.wait()

    task = asyncio.create_task(hold())
    try:
        yield await ready
    finally:
        done.set()
        await task


@pytest.fixture(scope="module")
async def world(app: App) -> AsyncIterator[tuple[Client, World]]:
    scope_a, scope_b = f"fuzz:{uuid.uuid4().hex[:10]}", f"fuzz:{uuid.uuid4().hex[:10]}"
    async with held_client(app) as client:
        ids: dict[str, str] = {}
        for scope, key in ((scope_a, "a"), (scope_b, "b")):
            first = await activate(client, scope, "Record Atlas facts")
            m1 = await remember(client, scope, first["session_id"], f"Atlas tokens last 45 minutes ({key})")
            m2 = await remember(
                client, scope, first["session_id"], f"Atlas locks accounts after 5 tries ({key})"
            )
            await settle(client, first)
            ids[f"memory_{key}"], ids[f"memory_{key}2"] = m1["memory_id"], m2["memory_id"]
            live = await activate(client, scope, "How long do Atlas tokens last?")
            ids[f"session_{key}"], ids[f"retrieval_{key}"] = live["session_id"], live["retrieval_id"]
            ids[f"continuity_{key}"] = live["continuity_id"]
        ids["session_c"] = (await activate(client, scope_a, "A task to commit"))["session_id"]
        try:
            yield client, World(scope_a, scope_b, ids)
        finally:
            for scope in (scope_a, scope_b):
                await app.db.run_write("delete_scope", scope=scope)


def mutate(base: dict[str, Any], draw: st.DrawFn, world: World) -> dict[str, Any]:
    """One structural change to a valid call: replace, delete or add a field (maybe nested)."""
    args = {
        k: (dict(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
        for k, v in base.items()
    }
    action = draw(st.sampled_from(["replace", "text", "text", "foreign", "delete", "add", "nested"]))
    key = draw(st.sampled_from(sorted(args)))
    if action == "text":  # hostile text where text belongs: often valid, then stored and searched
        strings = [k for k, v in args.items() if isinstance(v, str)]
        args[draw(st.sampled_from(strings)) if strings else key] = draw(text)
    elif action == "replace":
        args[key] = draw(junk_value)
    elif action == "foreign":
        args[key] = draw(world.foreign())
    elif action == "delete":
        del args[key]
    elif action == "add":
        args[draw(text)] = draw(junk_value)
    else:
        container = args[key]
        if isinstance(container, list) and container and isinstance(container[0], dict):
            item = dict(container[0])
            field = draw(st.sampled_from([*sorted(item), "unknown_field"]))
            item[field] = draw(st.one_of(junk_value, world.foreign()))
            args[key] = [item]
        elif isinstance(container, dict):
            container[draw(st.sampled_from([*sorted(container), "Bad Key", "deep"]))] = draw(junk_value)
        else:
            args[key] = draw(junk_value)
    return args


@st.composite
def tool_calls(draw: st.DrawFn, world: World, tool: str) -> tuple[str, dict[str, Any]]:
    if draw(st.integers(0, 9)) == 0:  # a wholly random argument object
        return tool, draw(st.dictionaries(text, junk_value, max_size=6))
    return tool, mutate(world.bases()[tool], draw, world)


def memory_ids(data: Any) -> set[str]:
    """Every memory id anywhere in a result (recursively: pages, batches)."""
    if isinstance(data, dict):
        found = {data["memory_id"]} if isinstance(data.get("memory_id"), str) and "content" in data else set()
        return found.union(*(memory_ids(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(memory_ids(v) for v in data))
    return set()


TRIED: list[str] = []
OUTCOMES: Counter[tuple[str, str]] = Counter()


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
@given(data=st.data())
@pytest.mark.parametrize("tool", sorted(TOOL_NAMES))
async def test_hostile_calls_get_the_envelope_and_change_nothing(
    app: App, world: tuple[Client, World], tool: str, data: st.DataObject
) -> None:
    client, w = world
    tool, arguments = data.draw(tool_calls(w, tool))
    try:  # what the client itself cannot encode never reaches a server (see test_http_security)
        pydantic_core.to_json(arguments)
    except (ValueError, UnicodeEncodeError):
        assume(False)
    before = await fingerprint(app, w)
    envelope = await call(client, tool, arguments)  # asserts: no framework error, a dict
    TRIED.append(tool)
    outcome = "ok" if envelope.get("ok") else (envelope.get("error") or {}).get("code")
    OUTCOMES[(tool, str(outcome))] += 1
    event(f"{tool}: {outcome}")
    assert set(envelope) <= {"ok", "data", "error"} and isinstance(envelope["ok"], bool), envelope
    if envelope["ok"]:
        assert not memory_ids(envelope["data"]) & {w.ids["memory_b"], w.ids["memory_b2"]}, envelope
        return
    error = envelope["error"]
    assert error["code"] in CODES, error  # never internal_error
    assert isinstance(error["message"], str) and isinstance(error["retryable"], bool)
    after = await fingerprint(app, w)
    assert after == before, (tool, error["code"], error["message"])


async def test_the_fuzzed_server_still_serves(world: tuple[Client, World]) -> None:
    """Runs after the fuzz (file order): every tool was tried, and a plain call still works."""
    client, w = world
    assert len(TRIED) >= min(EXAMPLES, 100) and set(TRIED) == TOOL_NAMES, len(TRIED)
    for tool in sorted(TOOL_NAMES):  # the deep run's figures (pytest -s)
        ends = {code: n for (t, code), n in sorted(OUTCOMES.items()) if t == tool}
        print(f"fuzz {tool}: {sum(ends.values())} calls {ends}")
    again = await activate(client, w.scope_a, "How long do Atlas tokens last?")
    assert again["session_id"].startswith("sess_")
