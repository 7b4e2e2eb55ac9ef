"""The conformance scenarios of the tool contract, written against any connected MCP client.

Each scenario takes a client and a scope nobody else uses. The same functions run in-process (one
test per scenario) and over stdio and streamable HTTP against server processes
(tests/integration/test_conformance.py). Items that need several processes, a restart or a short
idle timeout (11, 12, 13) have their own tests there.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import Client

from tests.support.mcp_helpers import (
    activate,
    call,
    commit,
    commit_args,
    error,
    ok,
    paths,
    recall,
    remember,
    settle,
)

Scenario = Callable[[Client, str], Awaitable[None]]
SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str) -> Callable[[Scenario], Scenario]:
    def register(fn: Scenario) -> Scenario:
        SCENARIOS[name] = fn
        return fn

    return register


async def remember_many(
    client: Client, scope: str, session: str, contents: list[str], type_: str = "fact"
) -> list[str]:
    ids: list[str] = []
    for start in range(0, len(contents), 100):
        batch = [{"content": c, "type": type_} for c in contents[start : start + 100]]
        data = ok(
            await call(client, "slowave_remember", {"scope": scope, "session_id": session, "memories": batch})
        )
        assert all(r["ok"] for r in data["results"]), data
        ids.extend(r["data"]["memory_id"] for r in data["results"])
    return ids


async def seeded(client: Client, scope: str, contents: list[str]) -> list[str]:
    """Store contents in a session that is then committed (nothing outstanding)."""
    act = await activate(client, scope, "Record project knowledge")
    ids = await remember_many(client, scope, act["session_id"], contents)
    await settle(client, act)
    await commit(client, act["session_id"])
    return ids


# --------------------------------------------------------------------------- 1
@scenario("01_nested_schema_error_keeps_session_usable")
async def nested_schema_error(client: Client, scope: str) -> None:
    act = await activate(client, scope, "Document the deploy")
    await settle(client, act)
    bad = commit_args(
        act["session_id"],
        procedure={"summary": "Deploy", "context": {}, "steps": [{"summary": 5}], "caveats": []},
    )
    err = error(await call(client, "slowave_commit", bad), "invalid_input")
    assert "procedure.steps[0].summary" in paths(err), err
    bad2 = commit_args(
        act["session_id"],
        procedure={
            "summary": "Deploy",
            "context": {},
            "steps": [{"summary": "ok", "extra": 1}],
            "caveats": [],
        },
    )
    assert "procedure.steps[0].extra" in paths(
        error(await call(client, "slowave_commit", bad2), "invalid_input")
    )
    stored = await remember(client, scope, act["session_id"], "Deploys go out through the release pipeline")
    assert stored["disposition"] == "created"
    done = await commit(client, act["session_id"])
    assert done["operation"] == "closed"


# --------------------------------------------------------------------------- 2
@scenario("02_remember_with_another_scopes_session")
async def wrong_scope_session(client: Client, scope: str) -> None:
    other = await activate(client, scope + "-other", "Elsewhere")
    err = error(
        await call(
            client,
            "slowave_remember",
            {"scope": scope, "session_id": other["session_id"], "content": "x", "type": "fact"},
        ),
        "invalid_input",
    )
    assert "session_id and scope do not match" in err["message"]


# --------------------------------------------------------------------------- 3
@scenario("03_occurred_at_offset_rules_and_full_evidence")
async def occurred_at(client: Client, scope: str) -> None:
    act = await activate(client, scope, "Record the incident")
    session = act["session_id"]
    no_offset = {
        "scope": scope,
        "session_id": session,
        "content": "The payment outage began at 09:30",
        "type": "fact",
        "occurred_at": "2026-03-01T09:30:00",
    }
    assert paths(error(await call(client, "slowave_remember", no_offset), "invalid_input")) == {"occurred_at"}
    stored = await remember(
        client,
        scope,
        session,
        "The payment outage began at 09:30 UTC",
        "fact",
        occurred_at="2026-03-01T09:30:00Z",
    )
    found = await recall(client, scope, session, "When did the payment outage begin?", evidence="full")
    assert [m["memory_id"] for m in found["memories"]] == [stored["memory_id"]]
    assert found["evidence_mode"] == "full"
    [record] = [e for e in found["evidence"] if e["evidence_id"] == stored["source_event_id"]]
    assert record["occurred_at"] == int(dt.datetime(2026, 3, 1, 9, 30, tzinfo=dt.UTC).timestamp())
    assert record["recorded_at"] > record["occurred_at"]
    assert record["source_kind"] == "event" and record["source_ref"] == {
        "kind": "event",
        "id": int(stored["source_event_id"].split("_")[1]),
    }
    assert record["content"] == "The payment outage began at 09:30 UTC" and record["truncated"] is False
    refs = await recall(client, scope, session, "When did the payment outage begin?")
    assert refs["evidence_mode"] == "references" and "content" not in refs["evidence"][0]


# --------------------------------------------------------------------------- 4
@scenario("04_partial_feedback_then_commit_is_incomplete")
async def partial_then_commit(client: Client, scope: str) -> None:
    await seeded(
        client, scope, ["The staging database is PostgreSQL 16", "Staging deploys need a green CI run"]
    )
    act = await activate(client, scope, "How do we deploy to the staging database?")
    shown = [m["memory_id"] for m in act["memories"]]
    assert len(shown) == 2, act["memories"]
    partial = ok(
        await call(
            client,
            "slowave_feedback",
            {
                "retrieval_id": act["retrieval_id"],
                "memory_feedback": [{"memory_id": shown[0], "assessment": "used"}],
            },
        )
    )
    assert partial["coverage"] == "partial" and partial["outstanding"]["memory_ids"] == [shown[1]]
    err = error(await call(client, "slowave_commit", commit_args(act["session_id"])), "incomplete_feedback")
    assert err["retryable"] is True
    assert err["outstanding"] == [
        {
            "retrieval_id": act["retrieval_id"],
            "memory_ids": [shown[1]],
            "procedure_ids": [],
            "coverage_declared_complete": False,
        }
    ]
    rest = ok(
        await call(
            client,
            "slowave_feedback",
            {
                "retrieval_id": act["retrieval_id"],
                "coverage": "complete",
                "memory_feedback": [{"memory_id": shown[1], "assessment": "not_used"}],
            },
        )
    )
    assert rest["coverage"] == "complete" and rest["outstanding"] == {"memory_ids": [], "procedure_ids": []}
    assert (await commit(client, act["session_id"]))["committed"] is True


# --------------------------------------------------------------------------- 5
@scenario("05_feedback_on_unexposed_id_is_rejected_not_failed")
async def unexposed(client: Client, scope: str) -> None:
    [hidden] = await seeded(client, scope, ["The CDN caches product images for 24 hours"])
    act = await activate(client, scope, "What is the capital of Australia?")
    assert act["memories"] == []
    data = ok(
        await call(
            client,
            "slowave_feedback",
            {
                "retrieval_id": act["retrieval_id"],
                "memory_feedback": [{"memory_id": hidden, "assessment": "used"}],
            },
        )
    )
    assert [(r["target_id"], r["reason"]) for r in data["rejected"]] == [(hidden, "target_not_exposed")]
    assert data["accepted_event_ids"] == []
    empty = ok(
        await call(client, "slowave_feedback", {"retrieval_id": act["retrieval_id"], "coverage": "complete"})
    )
    assert empty["coverage"] == "complete"


# --------------------------------------------------------------------------- 6
@scenario("06_legacy_labels_are_invalid_assessments")
async def legacy_labels(client: Client, scope: str) -> None:
    await seeded(
        client, scope, ["Invoices are numbered per fiscal year", "Invoice PDFs are archived for ten years"]
    )
    act = await activate(client, scope, "How are invoices numbered and archived?")
    first, second = (m["memory_id"] for m in act["memories"])
    data = ok(
        await call(
            client,
            "slowave_feedback",
            {
                "retrieval_id": act["retrieval_id"],
                "coverage": "complete",
                "memory_feedback": [
                    {"memory_id": first, "assessment": "useful"},
                    {"memory_id": second, "assessment": "wrong"},
                ],
            },
        )
    )
    reasons = {(r["target_id"], r["reason"]) for r in data["rejected"]}
    assert reasons == {
        (first, "invalid_memory_assessment"),
        (second, "invalid_memory_assessment"),
        (act["retrieval_id"], "incomplete_coverage"),
    }
    assert data["coverage"] == "partial" and data["requested_coverage"] == "complete"
    assert sorted(data["outstanding"]["memory_ids"]) == sorted([first, second])
    assert all(r["hint"] for r in data["rejected"])


# --------------------------------------------------------------------------- 7
AUDIT_NOTES = [
    f"Atlas sign-in audit rule {i}: failed sign-ins from region {region} are throttled after {i + 3} attempts"
    for i, region in enumerate(["eu", "us", "apac", "latam", "mena"] * 8)
]


@scenario("07_forty_relevant_memories_page_and_replay")
async def forty(client: Client, scope: str) -> None:
    await seeded(client, scope, AUDIT_NOTES)
    act = await activate(client, scope, "Review the rules")
    question = "Which Atlas sign-in audit rules throttle failed sign-ins?"
    page = await recall(client, scope, act["session_id"], question)
    assert page["relevant_total"] == 40 and len(page["memories"]) == 5 and page["more_available"] is True
    seen = [m["memory_id"] for m in page["memories"]]
    cursor = page["continue_from"]
    pages = 1
    while cursor:
        nxt = await recall_continue(client, scope, act["session_id"], cursor)
        replay = await recall_continue(client, scope, act["session_id"], cursor)
        assert replay == nxt, "a replayed cursor returns the identical page"
        assert nxt["retrieval_id"] == page["retrieval_id"]
        seen.extend(m["memory_id"] for m in nxt["memories"])
        pages += 1
        assert len(nxt["memories"]) == 5
        if not nxt["more_available"]:
            assert nxt["accessible_field"] == {} and "continue_from" not in nxt
        cursor = nxt.get("continue_from")
    assert pages == 8 and len(seen) == 40 and len(set(seen)) == 40
    other = error(
        await call(
            client,
            "slowave_recall",
            {"scope": scope + "-x", "session_id": act["session_id"], "continue_from": page["continue_from"]},
        ),
        "invalid_input",
    )
    assert paths(other) <= {"scope", "continue_from"}


async def recall_continue(client: Client, scope: str, session: str, cursor: str) -> dict[str, Any]:
    return ok(
        await call(client, "slowave_recall", {"scope": scope, "session_id": session, "continue_from": cursor})
    )


# --------------------------------------------------------------------------- 8
@scenario("08_page_size_ten_of_twelve")
async def ten_of_twelve(client: Client, scope: str) -> None:
    await seeded(client, scope, AUDIT_NOTES[:12])
    act = await activate(client, scope, "Review the rules")
    question = "Which Atlas sign-in audit rules throttle failed sign-ins?"
    first = await recall(client, scope, act["session_id"], question, page_size=10)
    assert len(first["memories"]) == 10 and first["accessible_field"]["extra_candidates"] == 2
    second = await recall_continue(client, scope, act["session_id"], first["continue_from"])
    assert len(second["memories"]) == 2 and second["more_available"] is False
    mixed = await call(
        client,
        "slowave_recall",
        {
            "scope": scope,
            "session_id": act["session_id"],
            "continue_from": first["continue_from"],
            "page_size": 10,
        },
    )
    assert paths(error(mixed, "invalid_input")) == {"page_size"}


# --------------------------------------------------------------------------- 9
@scenario("09_tools_list_advertises_enums")
async def enums(client: Client, scope: str) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    schema = tools["slowave_feedback"].input_schema
    memory = schema["$defs"]["MemoryFeedbackEntry"]["properties"]
    procedure = schema["$defs"]["ProcedureFeedbackEntry"]["properties"]
    assert memory["assessment"]["enum"] == [
        "used",
        "not_used",
        "unassessable",
        "irrelevant",
        "already_known",
        "stale",
    ]
    assert procedure["use"]["enum"] == ["used", "not_used", "unassessable"]
    assert memory["effect"]["enum"] == ["helped", "no_effect", "harmed", "unknown"]
    assert memory["stale_reason"]["enum"] == [
        "contradicted",
        "superseded",
        "outdated",
        "unsupported",
        "withdrawn",
    ]
    # the scalar-xor-batch rule is validation's (item 10 refuses a mixed call), never a root
    # oneOf/anyOf/allOf, which the Anthropic, OpenAI and Gemini APIs refuse
    assert not {"oneOf", "anyOf", "allOf"} & set(schema), schema


# --------------------------------------------------------------------------- 10
@scenario("10_batch_feedback_unknown_retrieval_fails_only_its_item")
async def batch(client: Client, scope: str) -> None:
    act = await activate(client, scope, "Anything")
    data = ok(
        await call(
            client,
            "slowave_feedback",
            {
                "items": [
                    {"retrieval_id": "ctx_doesnotexist", "coverage": "complete"},
                    {"retrieval_id": act["retrieval_id"], "coverage": "complete"},
                ]
            },
        )
    )
    bad, good = data["results"]
    assert bad["ok"] is False and bad["error"]["code"] == "invalid_input"
    assert good["ok"] is True and good["data"]["coverage"] == "complete"
    mixed = await call(
        client, "slowave_feedback", {"items": [{"retrieval_id": act["retrieval_id"]}], "coverage": "complete"}
    )
    assert paths(error(mixed, "invalid_input")) == {"coverage"}
    assert (await commit(client, act["session_id"]))["committed"] is True


# --------------------------------------------------------------------------- 11 (in-process part)
@scenario("11_continuity_lines")
async def continuity(client: Client, scope: str) -> None:
    first = await activate(client, scope, "Start the migration")
    assert first["continuity_state"] == "started"
    second = await activate(client, scope, "Continue the migration", continuity_id=first["continuity_id"])
    assert second["continuity_state"] == "continued" and second["continuity_id"] == first["continuity_id"]
    for args in (
        {"scope": scope, "continuity_id": "cont_0000000000000000"},
        {"scope": scope + "-b", "continuity_id": first["continuity_id"]},
    ):
        envelope = await call(client, "slowave_activate", {"task": "t", "initial_goal": "g", **args})
        assert paths(error(envelope, "invalid_input")) == {"continuity_id"}


# --------------------------------------------------------------------------- 12 (one-process part)
@scenario("12_overlapping_sessions_both_commit")
async def overlapping(client: Client, scope: str) -> None:
    a = await activate(client, scope, "Task A")
    b = await activate(client, scope, "Task B")
    await remember(client, scope, a["session_id"], "Task A found that the cache TTL is 300 seconds")
    await remember(client, scope, b["session_id"], "Task B found that the queue retries 5 times")
    seen = await recall(client, scope, b["session_id"], "What is the cache TTL?")
    assert [m["content"] for m in seen["memories"]] == ["Task A found that the cache TTL is 300 seconds"]
    await settle(client, seen, "used")
    for act in (a, b):
        await settle(client, act)
    assert (await commit(client, a["session_id"]))["operation"] == "closed"
    assert (await commit(client, b["session_id"]))["operation"] == "closed"


# --------------------------------------------------------------------------- 14
@scenario("14_fresh_scope_is_cold_start")
async def cold(client: Client, scope: str) -> None:
    act = await activate(client, scope, "Anything at all")
    assert act["memory_state"] == "cold_start" and act["memories"] == [] and act["procedures"] == []


# --------------------------------------------------------------------------- 15
ATLAS = "Atlas authentication credentials expire after 45 minutes"


@scenario("15a_paraphrase_and_hard_negatives")
async def paraphrase(client: Client, scope: str) -> None:
    [atlas] = await seeded(client, scope, [ATLAS])
    act = await activate(client, scope, "Investigate login problems")
    found = await recall(client, scope, act["session_id"], "How long do Atlas login tokens remain valid?")
    assert [m["memory_id"] for m in found["memories"]] == [atlas]
    for negative in (
        "What time zone are the Atlas servers in?",
        "How many users does Atlas have?",
        "Which programming language is Atlas written in?",
    ):
        miss = await recall(client, scope, act["session_id"], negative)
        assert miss["memories"] == [] and miss["relevant_total"] == 0, (negative, miss["memories"])


AUTH = [
    "Atlas authentication credentials expire after 45 minutes",
    "Atlas login tokens are signed with RS256 keys that rotate monthly",
    "Atlas authentication uses OAuth 2.0 with PKCE for the web client",
    "Atlas locks an account after 5 failed login attempts within 10 minutes",
    "Atlas login session cookies are HttpOnly and SameSite=Strict",
    "Atlas service accounts authenticate with mTLS client certificates",
    "Atlas login requires two-factor authentication for administrators",
]
OTHER = [
    "The shop frontend is written in TypeScript with React",
    "Customer refunds over 500 EUR need manager approval",
    "Never force-push to the main branch",
    "Deploy windows are Tuesdays 10:00 to 12:00 UTC",
    "PostgreSQL backups run nightly at 02:00 and are kept for 14 days",
    "The Atlas data warehouse is refreshed every 6 hours",
]


@scenario("15b_exactly_the_relevant_ones_0_2_4_7")
async def exact_counts(client: Client, scope: str) -> None:
    for n in (0, 2, 4, 7):
        sub = f"{scope}-{n}"
        await seeded(client, sub, AUTH[:n] + OTHER)
        act = await activate(client, sub, "Review")
        found = await recall(
            client, sub, act["session_id"], "How do authentication and login work in Atlas?", page_size=10
        )
        assert sorted(m["content"] for m in found["memories"]) == sorted(AUTH[:n]), n
        assert found["relevant_total"] == n


@scenario("15c_scope_twins_never_leak")
async def twins(client: Client, scope: str) -> None:
    await seeded(client, scope + "_shop", [ATLAS])
    for twin in (scope + "-shop", scope.upper() + "_shop", scope + "_shop2"):
        act = await activate(client, twin, "How long do Atlas login tokens remain valid?")
        assert act["memories"] == []
        found = await recall(client, twin, act["session_id"], "How long do Atlas login tokens remain valid?")
        assert found["memories"] == []


@scenario("15d_stale_and_superseded_never_returned")
async def stale(client: Client, scope: str) -> None:
    [old] = await seeded(client, scope, ["The API rate limit is 100 requests per minute"])
    act = await activate(client, scope, "What is the API rate limit?")
    assert [m["memory_id"] for m in act["memories"]] == [old]
    new = await remember(client, scope, act["session_id"], "The API rate limit is 250 requests per minute")
    data = ok(
        await call(
            client,
            "slowave_feedback",
            {
                "retrieval_id": act["retrieval_id"],
                "coverage": "complete",
                "memory_feedback": [
                    {
                        "memory_id": old,
                        "assessment": "stale",
                        "stale_reason": "superseded",
                        "reason": "raised in the March release",
                        "replacement_memory_id": new["memory_id"],
                    }
                ],
            },
        )
    )
    assert data["applied"]["stale"] == [old] and data["coverage"] == "complete"
    again = await recall(client, scope, act["session_id"], "What is the API rate limit?")
    assert [m["memory_id"] for m in again["memories"]] == [new["memory_id"]]
    await settle(client, again)
    await commit(client, act["session_id"])
    later = await activate(client, scope, "What is the API rate limit per minute?")
    assert old not in [m["memory_id"] for m in later["memories"]]


@scenario("15e_irrelevant_is_contextual")
async def irrelevant(client: Client, scope: str) -> None:
    [billing] = await seeded(client, scope, ["Billing invoices are generated on the first day of each month"])
    act = await activate(client, scope, "When are billing invoices generated?")
    assert [m["memory_id"] for m in act["memories"]] == [billing]
    await settle(client, act, "irrelevant")
    await commit(client, act["session_id"])
    later = await activate(client, scope, "On which day of the month does billing create invoices?")
    assert [m["memory_id"] for m in later["memories"]] == [billing]


# --------------------------------------------------------------------------- 16
DEPLOY_PROCEDURE = {
    "summary": "Blue-green deploy of the shop API behind the load balancer",
    "context": {"service": "shop-api", "platform": "kubernetes"},
    "steps": [
        {"summary": "Build and push the image"},
        {"summary": "Deploy to the idle colour"},
        {"summary": "Switch the load balancer"},
    ],
    "caveats": ["Drain long-lived connections first"],
}


async def procedure_session(
    client: Client, scope: str, goal: str, outcome: str, key: str | None = None, summary: str | None = None
) -> str:
    act = await activate(client, scope, goal)
    await settle(client, act)
    procedure = dict(DEPLOY_PROCEDURE, deduplication_key=key) if key else dict(DEPLOY_PROCEDURE)
    if summary:
        procedure["summary"] = summary
    done = await commit(
        client,
        act["session_id"],
        outcome,
        final_goal=goal,
        procedure=procedure,
        outcome_summary=f"Deploy ended in {outcome}"
        + (": health checks passed" if outcome == "success" else ""),
        trajectory=[
            {"kind": "action", "summary": "kubectl apply -f deploy.yaml", "status": "succeeded"},
            {"kind": "action", "summary": "called slowave_recall for hints", "status": "succeeded"},
        ],
    )
    assert done["procedure_id"] == "proc_" + act["session_id"] and done["episodes_formed"] == 1
    return str(done["procedure_id"])


@scenario("16_procedures_success_failure_record_and_scope")
async def procedures(client: Client, scope: str) -> None:
    good = await procedure_session(client, scope, "Deploy the shop API with a blue-green switch", "success")
    bad = await procedure_session(client, scope, "Deploy the shop API with a blue-green rollout", "failure")
    act = await activate(client, scope, "Deploy the shop API to production")
    shown = {p["procedure_id"]: p for p in act["procedures"]}
    assert set(shown) == {good, bad}
    assert shown[bad]["caveats"][0].startswith("Caution:") and "failure" in shown[bad]["caveats"][0]
    assert not shown[good]["caveats"][0].startswith("Caution:")
    full = await recall(client, scope, act["session_id"], "How do we deploy the shop API?")
    details = {p["procedure_id"]: p for p in full["procedures"]}
    assert details[good]["steps"][0] == "Build and push the image" and details[good]["outcome"] == "success"
    assert details[good]["context"] == {"service": "shop-api", "platform": "kubernetes"}
    # feedback: the failed one harmed, the good one helped → good first
    fb = ok(
        await call(
            client,
            "slowave_feedback",
            {
                "retrieval_id": full["retrieval_id"],
                "coverage": "complete",
                "memory_feedback": [
                    {"memory_id": m["memory_id"], "assessment": "not_used"} for m in full["memories"]
                ],
                "procedure_feedback": [
                    {
                        "procedure_id": good,
                        "use": "used",
                        "effect": "helped",
                        "contribution": "followed the steps",
                    },
                    {
                        "procedure_id": bad,
                        "use": "used",
                        "effect": "harmed",
                        "contribution": "its rollout broke health checks",
                    },
                ],
            },
        )
    )
    assert fb["rejected"] == [] and fb["coverage"] == "complete"
    await settle(client, act)
    await commit(client, act["session_id"])
    again = await activate(client, scope, "Deploy the shop API to production")
    assert [p["procedure_id"] for p in again["procedures"]][:2] == [good, bad]
    recalled = await recall(client, scope, again["session_id"], "How do we deploy the shop API?")
    tallies = {p["procedure_id"]: p["evidence"] for p in recalled["procedures"]}
    assert tallies[good]["helped"] == 1 and tallies[bad]["harmed"] == 1
    contributions = {p["procedure_id"]: p["contributions"] for p in recalled["procedures"]}
    assert contributions[good][0]["contribution"] == "followed the steps"
    assert contributions[good][0]["outcome"] == "success"
    other = await activate(client, scope + "-elsewhere", "Deploy the shop API to production")
    assert other["procedures"] == []
