"""Synthetic but realistic memories for the load benchmark.

Claims of an engineering organisation — services, people, decisions, incidents — in every memory
type, of varied length (a short fact to a paragraph-long lesson), spread over scopes of very
different sizes: a few large projects, several medium ones and a long tail of small ones.
Deterministic for a seed, so two runs fill the same database.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

SERVICES = [
    "billing", "auth", "search", "checkout", "inventory", "notifications", "payments", "reporting",
    "gateway", "scheduler", "ledger", "profile", "catalog", "shipping", "analytics", "export",
    "importer", "webhooks", "sessions", "audit", "pricing", "recommendations", "media", "mailer",
]  # fmt: skip
PEOPLE = [
    "Priya", "Tomas", "Aiko", "Marcus", "Leila", "Jonas", "Fatima", "Diego", "Mei", "Olu",
    "Sven", "Camille", "Ravi", "Hana", "Kofi", "Ingrid",
]  # fmt: skip
TECH = [
    "PostgreSQL 16", "Redis", "Kafka", "Neo4j", "gRPC", "OpenTelemetry", "Terraform", "Kubernetes",
    "nginx", "S3", "Celery", "FastAPI", "React", "Rust", "Go 1.26", "Python 3.12", "ClickHouse",
]  # fmt: skip
ENVS = ["staging", "production", "the EU region", "the US region", "CI", "the load-test cluster"]
ISSUES = [
    "connection pool exhaustion", "clock skew between pods", "a memory leak in the worker",
    "slow cold starts", "duplicate webhook deliveries", "stale cache entries", "TLS certificate expiry",
    "a deadlock on the orders table", "rate limiting by the upstream API", "timezone bugs in reports",
]  # fmt: skip
DETAILS = [
    "The fix was verified with a replay of last week's traffic.",
    "Dashboards for this live in the shared observability folder.",
    "The on-call runbook was updated the same day.",
    "Nobody has measured the effect on p99 latency yet.",
    "Rolling back takes about ten minutes with the deploy script.",
    "This was agreed in the architecture review.",
    "The migration must run before the new release goes out.",
    "Customers in the EU region noticed it first.",
    "A feature flag guards the new behaviour.",
    "The previous approach caused two incidents last quarter.",
]  # fmt: skip

TEMPLATES: dict[str, list[str]] = {
    "fact": [
        "The {svc} service stores its data in {tech}.",
        "{person} owns the {svc} service and reviews its pull requests.",
        "Deploys of {svc} to {env} go through the release pipeline every weekday at 10:00.",
        "The {svc} API times out after {n} seconds when {tech} is slow.",
    ],
    "preference": [
        "{person} prefers small pull requests for {svc}, under {n} changed lines.",
        "The team prefers {tech} over alternatives for new {svc} components.",
    ],
    "decision": [
        "We decided to move {svc} from its old store to {tech} after the {issue} incident.",
        "Decision: {svc} calls to {svc2} go through the gateway, never directly.",
    ],
    "constraint": [
        "{svc} must not be deployed to {env} on Fridays.",
        "Requests to {svc} are limited to {n} per second per tenant.",
    ],
    "instruction": [
        "Before releasing {svc}, run the contract tests against {svc2} in {env}.",
        "To rotate {svc} credentials, ask {person} and update the secret in {env}.",
    ],
    "lesson": [
        "Outages of {svc} in {env} were caused by {issue}; check that first.",
        "Retrying {svc2} calls from {svc} without jitter made the {issue} incident worse.",
    ],
    "warning": [
        "Watch out: {svc} silently drops events when {tech} is unavailable.",
        "The {svc} migration script is not idempotent; never run it twice in {env}.",
    ],
    "open_question": [
        "Should {svc} keep using {tech}, given the {issue} incidents?",
        "Who owns alerting for {svc} in {env} after {person} moves teams?",
    ],
    "task": [
        "Upgrade {svc} to {tech} in {env} before the end of the quarter.",
        "Write a postmortem for the {svc} {issue} incident.",
    ],
    "artifact": [
        "The {svc} runbook is in docs/runbooks/{svc}.md; the dashboard is named {svc}-{env}.",
        "Load test results for {svc} on {tech} are in the perf/{svc} folder.",
    ],
}
TYPES = list(TEMPLATES)
QUESTIONS = [
    "Why does {svc} fail in {env}?",
    "Who owns the {svc} service?",
    "How do we deploy {svc} to {env}?",
    "What database does {svc} use?",
    "What happened during the {issue} incident?",
    "Which rules apply to releasing {svc}?",
    "Fix the {issue} in the {svc} service",
    "Investigate slow responses from {svc} when calling {svc2}",
]


@dataclass(frozen=True)
class ScopePlan:
    scope: str
    size: int


def scope_plan(total: int, prefix: str = "load") -> list[ScopePlan]:
    """A few large scopes, several medium ones and a long tail of small ones, summing to total.

    Shares: 3 large scopes hold 60 %, 12 medium ones 25 %, and the rest is scopes of about 50.
    """
    plans: list[ScopePlan] = []
    large = total * 60 // 100
    medium = total * 25 // 100
    small = total - large - medium
    for i in range(3):
        plans.append(ScopePlan(f"project:{prefix}-large-{i}", large // 3 + (1 if i < large % 3 else 0)))
    for i in range(12):
        plans.append(ScopePlan(f"project:{prefix}-medium-{i}", medium // 12 + (1 if i < medium % 12 else 0)))
    tail = max(1, small // 50)
    for i in range(tail):
        plans.append(ScopePlan(f"project:{prefix}-small-{i}", small // tail + (1 if i < small % tail else 0)))
    return [p for p in plans if p.size > 0]


def _fill(template: str, rng: random.Random) -> str:
    svc, svc2 = rng.sample(SERVICES, 2)
    return template.format(
        svc=svc,
        svc2=svc2,
        person=rng.choice(PEOPLE),
        tech=rng.choice(TECH),
        env=rng.choice(ENVS),
        issue=rng.choice(ISSUES),
        n=rng.choice([3, 5, 10, 30, 50, 200, 400]),
    )


def memory_parts(rng: random.Random) -> tuple[str, list[str]]:
    """(type, sentences): one claim, sometimes followed by up to six sentences of detail."""
    kind = rng.choice(TYPES)
    claim = _fill(rng.choice(TEMPLATES[kind]), rng)
    extra = rng.choices([0, 1, 2, 4, 6], weights=[45, 25, 15, 10, 5])[0]
    return kind, [claim, *(rng.sample(DETAILS, extra) if extra else [])]


def memory_text(rng: random.Random) -> tuple[str, str]:
    """(type, content): the sentences of ``memory_parts`` as one text."""
    kind, sentences = memory_parts(rng)
    return kind, " ".join(sentences)


@dataclass(frozen=True)
class SyntheticMemory:
    scope: str
    index: int  # position in its scope: the serial number of its content
    type: str
    sentences: list[str]  # the claim, then its detail sentences

    @property
    def text(self) -> str:
        """The content without the serial number (what repeats across records)."""
        return " ".join(self.sentences)

    @property
    def content(self) -> str:
        # A serial number keeps near-identical claims distinct (remember de-duplicates exact text).
        return f"{self.text} (note {self.index})"

    def record(self) -> dict[str, str]:
        return {"scope": self.scope, "type": self.type, "content": self.content}


def synthetic_memories(plan: ScopePlan, seed: int, start: int = 0) -> Iterator[SyntheticMemory]:
    """The memories of a scope in order; ``start`` skips already-filled ones (same texts)."""
    rng = random.Random(f"{seed}:{plan.scope}")
    for index in range(plan.size):
        kind, sentences = memory_parts(rng)
        if index >= start:
            yield SyntheticMemory(plan.scope, index, kind, sentences)


def memories(plan: ScopePlan, seed: int, start: int = 0) -> Iterator[dict[str, str]]:
    """Records for bulk import: ``{"scope", "content", "type"}``; ``start`` skips already-filled ones."""
    for memory in synthetic_memories(plan, seed, start):
        yield memory.record()


def question(rng: random.Random) -> str:
    return _fill(rng.choice(QUESTIONS), rng)
