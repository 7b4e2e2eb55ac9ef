"""Neutral feedback changes nothing, as a property: for random stores and random sequences of
activations and recalls, any interleaving of neutral assessments (not_used, unassessable,
already_known) — on the retrieval just served or on any earlier one, with partial or complete
coverage — leaves every later catalog identical, members and order, to the same sequence asked
with no feedback at all. The counterpart: used+helped, and irrelevant on the same question, do
move the next answer to that question, never the wrong way.

Two scopes receive the same memories in the same order; one is asked plainly, the other with the
neutral feedback. Catalogs are compared by content (ids differ between the scopes). The cases are
random (seed printed on failure); SLOWAVE_NEUTRAL_CASES sets how many.
"""

from __future__ import annotations

import dataclasses
import os
import random
import uuid
from dataclasses import dataclass, field

import pytest
from mcp import Client

from slowave_graph.app import App
from slowave_graph.mcp.server import build_server
from slowave_graph.services import Services
from slowave_graph.services.ranking import policy_for
from tests.support.mcp_helpers import call, ok
from tests.support.servers import CLIENT_INFO

pytestmark = [pytest.mark.neo4j, pytest.mark.lts]

CASES = int(os.environ.get("SLOWAVE_NEUTRAL_CASES", "4"))
SEED = int(os.environ.get("SLOWAVE_NEUTRAL_SEED", str(random.randrange(1 << 30))))

FACTS = [
    "Deploys of the shop go out through Argo CD from the main branch",
    "A production deploy needs a green CI run and one approving review",
    "Deploys are frozen on Fridays after 15:00 UTC",
    "Rollbacks use argocd app rollback with the previous revision number",
    "The staging database runs PostgreSQL 16 in eu-west-2",
    "Database migrations run with alembic upgrade head before the app starts",
    "The orders table is partitioned by month on created_at",
    "Read replicas lag the primary by up to two seconds under load",
    "Rate limits are enforced by the API gateway at 100 requests per minute per key",
    "Health check endpoints are exempt from rate limiting",
    "The billing service retries failed webhooks three times with exponential backoff",
    "Webhook signatures are verified with the HMAC secret in Vault",
    "Run uv sync before running the test suite",
    "Integration tests need a running Neo4j started by the test fixtures",
    "The flaky checkout test is quarantined with the slow marker",
    "Alice prefers short pull requests with one concern each",
    "Code review comments are answered within one working day",
    "On-call engineers rotate every Monday at 09:00 local time",
]
QUESTIONS = [
    "How do deploys to production work?",
    "What is needed before deploying the shop?",
    "How do I roll back a bad deploy?",
    "Where does the staging database run?",
    "How are database migrations applied?",
    "Which endpoints are exempt from rate limits?",
    "How are rate limits enforced?",
    "How are webhooks retried and verified?",
    "What do I run before the tests?",
    "How should pull requests be sized for review?",
    "When does the on-call rotation change?",
    "What is the capital of Australia?",
    "Which port does the billing service listen on?",
    "Where does the checkout service store its data?",
    "Who owns the search service?",
    "How long are the auth service logs kept?",
]
# Over a hundred more, so the scopes are past the size below which the server compares vectors
# exactly: beyond it candidates come from the vector index, whose scores differ a little from
# the exact cosines that earlier feedback's rows carry.
SERVICES = ["billing", "search", "checkout", "inventory", "auth", "notifications", "reporting", "shipping"]
TEMPLATES = [
    "The {s} service listens on port {n}",
    "The {s} service is owned by team {t}",
    "The {s} service stores its data in {d}",
    "The {s} service deploys with the {s}-chart Helm chart version {n}",
    "The {s} service writes its logs to the {s}-logs index for {n} days",
    "The {s} service pages the {t} on-call rotation when its error rate passes {n} percent",
    "The {s} service reads its configuration from the {s}-config map",
    "The {s} service scales between 2 and {n} replicas",
    "The {s} service calls the {d} cluster through a connection pool of {n}",
    "The {s} service exposes metrics on /metrics for Prometheus every {n} seconds",
    "The {s} service was last load tested at {n} requests per second",
    "The {s} service keeps a dead letter queue named {s}-dlq",
    "The {s} service runbook lives in the {t} wiki space",
    "The {s} service has an SLO of {n} milliseconds at p99",
]
TEAMS = ["platform", "payments", "growth", "core", "data"]
STORES = ["PostgreSQL", "Redis", "Elasticsearch", "Cassandra", "S3"]
NEUTRAL = ["not_used", "unassessable", "already_known"]


def filler(rng: random.Random) -> list[str]:
    return [
        t.format(s=s, n=rng.randint(2, 9000), t=rng.choice(TEAMS), d=rng.choice(STORES))
        for s in SERVICES
        for t in TEMPLATES
    ]


@dataclass
class Run:
    """One scope's side of a case: the memories by id, the sessions, what each retrieval showed."""

    scope: str
    content: dict[str, str] = field(default_factory=dict)  # memory id -> content
    session: str | None = None
    shown: list[tuple[str, list[str]]] = field(default_factory=list)  # (retrieval id, memory ids)


async def catalog_of(app: App, run: Run, retrieval_id: str) -> list[str]:
    """The whole frozen catalog of a retrieval, as contents."""
    [frozen] = await app.db.run_read("bench_frozen_catalog", retrieval_id=retrieval_id)
    return [run.content[i] for i in frozen["ids"]]


async def ask(client: Client, app: App, run: Run, step: tuple[str, str], page_size: int) -> list[str]:
    """Activate (a new session) or recall in the current one; the frozen catalog as contents."""
    kind, question = step
    if kind == "activate" or run.session is None:
        arguments = {
            "task": question,
            "initial_goal": "Answer it",
            "scope": run.scope,
            "page_size": page_size,
        }
        data = ok(await call(client, "slowave_activate", arguments))
        run.session = data["session_id"]
    else:
        arguments = {"session_id": run.session, "scope": run.scope, "query": question, "page_size": page_size}
        data = ok(await call(client, "slowave_recall", arguments))
    run.shown.append((data["retrieval_id"], [m["memory_id"] for m in data["memories"]]))
    return await catalog_of(app, run, data["retrieval_id"])


async def neutral_feedback(client: Client, run: Run, rng: random.Random) -> None:
    """Neutral assessments: of everything the latest retrieval showed, as an honest agent closes
    a retrieval before its next question, or of a random sample of what any earlier one showed."""
    retrieval_id, memory_ids = run.shown[-1]
    if rng.random() < 0.5:
        retrieval_id, memory_ids = rng.choice(run.shown)
        memory_ids = rng.sample(memory_ids, rng.randint(0, len(memory_ids)))
    entries = []
    for memory_id in memory_ids:
        assessment = rng.choice(NEUTRAL)
        entry = {"memory_id": memory_id, "assessment": assessment}
        if assessment == "unassessable":
            entry["reason"] = "could not check it"
        entries.append(entry)
    coverage = rng.choice(["partial", "complete"])
    arguments = {"retrieval_id": retrieval_id, "memory_feedback": entries, "coverage": coverage}
    ok(await call(client, "slowave_feedback", arguments))


async def stored(client: Client, run: Run, facts: list[str]) -> None:
    arguments = {"task": "Record facts", "initial_goal": "Keep them", "scope": run.scope}
    session = ok(await call(client, "slowave_activate", arguments))["session_id"]
    for start in range(0, len(facts), 100):
        batch = [{"content": f, "type": "fact"} for f in facts[start : start + 100]]
        arguments = {"scope": run.scope, "session_id": session, "memories": batch}
        for item in ok(await call(client, "slowave_remember", arguments))["results"]:
            run.content[item["data"]["memory_id"]] = facts[start + item["index"]]


async def one_case(client: Client, app: App, rng: random.Random) -> None:
    facts = rng.sample(FACTS, rng.randint(6, len(FACTS))) + filler(rng)
    rng.shuffle(facts)
    # a few questions, each asked several times: what feedback on one answer could change is the
    # next answer to the same or a similar question
    asked = rng.sample(QUESTIONS, rng.randint(2, 5))
    steps = [
        (rng.choice(["activate", "recall", "recall"]), rng.choice(asked)) for _ in range(rng.randint(6, 10))
    ]
    page_size = rng.randint(1, 10)
    tag = uuid.uuid4().hex[:8]
    plain, neutral = Run(f"neutral-prop:{tag}-plain"), Run(f"neutral-prop:{tag}-neutral")
    for run in (plain, neutral):
        await stored(client, run, facts)
    for step in steps:
        expected = await ask(client, app, plain, step, page_size)
        got = await ask(client, app, neutral, step, page_size)
        assert got == expected, (step, facts)
        for _ in range(rng.randint(0, 2)):
            await neutral_feedback(client, neutral, rng)
    await moved_by_lessons(client, app, neutral, rng.choice(asked))


async def moved_by_lessons(client: Client, app: App, run: Run, question: str) -> int:
    """The counterpart: used+helped never lowers the memory it names for the same question, and
    irrelevant on that question never lifts the one it names; returns how many of the two moved
    it (a lesson may be too small to pass a far better memory)."""
    before = await ask(client, app, run, ("recall", question), 10)
    if len(before) < 2:  # a store without two deploy facts: nothing to reorder
        return 0
    retrieval_id, shown = run.shown[-1]
    last = run.content[shown[-1]]
    entries = [{"memory_id": shown[-1], "assessment": "used", "effect": "helped"}]
    ok(await call(client, "slowave_feedback", {"retrieval_id": retrieval_id, "memory_feedback": entries}))
    lifted = await ask(client, app, run, ("recall", question), 10)
    assert lifted.index(last) <= before.index(last), (before, lifted)

    retrieval_id, shown = run.shown[-1]
    top = run.content[shown[0]]
    entries = [{"memory_id": shown[0], "assessment": "irrelevant"}]
    ok(await call(client, "slowave_feedback", {"retrieval_id": retrieval_id, "memory_feedback": entries}))
    lowered = await ask(client, app, run, ("recall", question), 10)
    assert top in lowered, "irrelevant is about a question: it never hides a memory"
    assert lowered.index(top) >= lifted.index(top), (lifted, lowered)
    return (lifted.index(last) < before.index(last)) + (lowered.index(top) > lifted.index(top))


def served_at(app: App, candidate_k: int) -> App:
    """The app with another retrieval depth (``SLOWAVE_CANDIDATE_K``): a shallow one is where what
    feedback remembers of earlier questions would most easily add to the candidates."""
    return dataclasses.replace(
        app, services=Services.build(app.repo, app.embedder, policy_for(candidate_k, "full"))
    )


@pytest.mark.parametrize("candidate_k", [50, 6])
async def test_neutral_feedback_changes_no_later_catalog(app: App, candidate_k: int) -> None:
    rng = random.Random(SEED + candidate_k)
    async with Client(build_server(served_at(app, candidate_k)), client_info=CLIENT_INFO) as client:
        for case in range(CASES):
            try:
                await one_case(client, app, rng)
            except AssertionError as failure:
                raise AssertionError(f"case {case}, SLOWAVE_NEUTRAL_SEED={SEED}: {failure}") from failure


@pytest.mark.parametrize("candidate_k", [50, 6])
async def test_a_question_closed_neutrally_answers_the_same_and_lessons_move_it(
    app: App, candidate_k: int
) -> None:
    """Every question asked, everything shown closed with neutral feedback, asked again: the same
    catalog. Then the lessons: used+helped on the last memory shown and irrelevant on the first
    move them (in the right direction only, and some of them at all)."""
    run = Run(f"neutral-fixed:{uuid.uuid4().hex[:8]}")
    async with Client(build_server(served_at(app, candidate_k)), client_info=CLIENT_INFO) as client:
        await stored(client, run, FACTS + filler(random.Random(5)))
        await ask(client, app, run, ("activate", "Answer questions about the services"), 10)
        for i, question in enumerate(QUESTIONS):
            first = await ask(client, app, run, ("recall", question), 10)
            retrieval_id, shown = run.shown[-1]
            entries = [
                {"memory_id": m, "assessment": ("not_used", "already_known")[(i + j) % 2]}
                for j, m in enumerate(shown)
            ]
            arguments = {"retrieval_id": retrieval_id, "memory_feedback": entries, "coverage": "complete"}
            ok(await call(client, "slowave_feedback", arguments))
            assert await ask(client, app, run, ("recall", question), 10) == first, question
        moved = [await moved_by_lessons(client, app, run, question) for question in QUESTIONS]
    assert sum(moved) >= 2, moved
