"""`slowave-graph soak`: many concurrent MCP clients, several server processes, one Neo4j — then
the audit, and a check that nothing the servers acknowledged was lost.

Each client holds one MCP session over streamable HTTP and runs full task lifecycles until the
time is up: activate → remember (single, batch, exact repeats that race other clients) → recall
(with cursor replays) → honest feedback on everything exposed (sometimes a partial checkpoint and
an early commit that must be refused, sometimes a stale/superseded correction) → commit (sometimes
with a procedure, sometimes twice at once). Scopes are mixed: shared by several clients, private,
and "twins" whose names differ only by case or -/_. Every memory's text carries a tag of its
scope, so a client notices at once if anything from another scope reaches it.

What a client checks on the fly: envelope on every call, no memory from another scope, identical
cursor replays, exactly one of two simultaneous commits closes the session. What the end checks:
the graph audit over the run's scopes (``slowave_graph.operator.audit``) and every acknowledged memory,
feedback event and commit. The same client code drives the fault tests (``tolerate_unavailable``:
a database outage may answer ``unavailable``; the client retries as an agent would).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2

from slowave_graph import __version__
from slowave_graph.config import Settings
from slowave_graph.operator.audit import Acknowledged, Violation, audit, audit_acknowledged
from slowave_graph.workload import driver
from slowave_graph.workload.driver import TOOLS, Recorder
from slowave_graph_lab.bench.metrics import percentiles
from slowave_graph_lab.bench.servers import server_env, server_fleet

# --------------------------------------------------------------------------- corpus


@dataclass(frozen=True)
class Topic:
    key: str
    task: str
    question: str
    claims: tuple[str, ...]


TOPICS: tuple[Topic, ...] = (
    Topic("deploy", "Ship the billing release to production", "How do billing deploys to production work?", (
        "Billing deploys to production go out through the release pipeline on weekdays at 10:00 UTC",
        "A billing deploy needs a green CI run and one approving review",
        "Rolling back a billing deploy takes about ten minutes with the deploy script",
    )),
    Topic("auth", "Fix the login timeouts in Atlas", "How long do Atlas login tokens stay valid?", (
        "Atlas authentication credentials expire after 45 minutes",
        "Atlas locks an account after 5 failed login attempts within 10 minutes",
        "Atlas login tokens are signed with RS256 keys that rotate monthly",
    )),
    Topic("database", "Tune the orders database", "Which database does the orders service use and how?", (
        "The orders service stores its data in PostgreSQL 16",
        "The orders database connection pool is capped at 40 connections per pod",
        "Nightly backups of the orders database are kept for 14 days",
    )),
    Topic("cache", "Investigate stale product pages", "How long are product pages cached?", (
        "The CDN caches product images for 24 hours",
        "Product page HTML is cached in Redis for 300 seconds",
        "Purging the product cache requires the cache-admin role",
    )),
    Topic("queue", "Debug duplicate webhook deliveries", "How does the webhook queue retry deliveries?", (
        "The webhook queue retries a failed delivery 5 times with exponential back-off",
        "Webhook deliveries are deduplicated by the event id header",
        "Dead-lettered webhooks are kept in Kafka for 7 days",
    )),
    Topic("refunds", "Process a large customer refund", "Who must approve large refunds?", (
        "Customer refunds over 500 EUR need manager approval",
        "Refunds are paid back to the original payment method only",
        "Refund requests older than 90 days go to the finance team",
    )),
)  # fmt: skip

_TAG = re.compile(r"\[s:([0-9a-f]{8}) t:([a-z]+)\]")


def scope_tag(scope: str) -> str:
    return hashlib.sha256(scope.encode()).hexdigest()[:8]


def tagged(claim: str, scope: str, topic: str, nonce: str | None) -> str:
    """A claim marked with its scope and topic (and a nonce, unless it is meant to repeat)."""
    suffix = f" ({nonce})" if nonce else ""
    return f"{claim}{suffix} [s:{scope_tag(scope)} t:{topic}]"


def tag_of(content: str) -> tuple[str, str] | None:
    match = _TAG.search(content)
    return (match.group(1), match.group(2)) if match else None


def soak_scopes(run_id: str, clients: int) -> list[str]:
    """Shared scopes (several clients each), twins of one of them, and some private ones."""
    shared = [f"soak-{run_id}:team-{i}" for i in range(max(2, clients // 6))]
    twins = [f"soak-{run_id}:team_0", f"soak-{run_id}:Team-0"]
    private = [f"soak-{run_id}:solo-{i}" for i in range(max(2, clients // 4))]
    return shared + twins + private


# --------------------------------------------------------------------------- recording


@dataclass
class SoakStats(Recorder):
    """The clients' calls (``errors``: "tool:code" of unexpected failures) and what they saw."""

    lifecycles: int = 0
    expected: Counter[str] = field(default_factory=Counter)  # deliberate or tolerated failures
    problems: list[str] = field(default_factory=list)  # correctness problems seen by clients
    rejections: Counter[str] = field(default_factory=Counter)  # feedback rejections by reason
    acks: Acknowledged = field(default_factory=Acknowledged)

    def problem(self, text: str) -> None:
        self.errors["client_check"] += 1
        if len(self.problems) < 50:
            self.problems.append(text)


class CallFailed(Exception):
    """A call did not return ok; the lifecycle is abandoned (already recorded)."""


class TransportGone(Exception):
    """The server stopped answering (it was stopped or killed); the client stops."""


@dataclass(frozen=True)
class SoakConfig:
    clients: int = 32
    duration: float = 300.0  # seconds of load (a cap when ``lifecycles`` is set)
    lifecycles: int | None = None  # per client: stop after this many completed tasks
    seed: int = 7
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:8])
    tolerate_unavailable: bool = False  # fault tests: a database outage may answer `unavailable`
    abandon_on_stop: bool = False  # stop mid-task when told to (fault tests), not after the task
    unavailable_patience: float = 90.0  # how long a client keeps retrying one call


class SoakClient:
    """One agent: a single MCP session running lifecycles until told to stop."""

    def __init__(
        self, client: Any, n: int, cfg: SoakConfig, scopes: list[str], stats: SoakStats, stop: asyncio.Event
    ) -> None:
        self.client = client
        self.stop = stop
        self.n = n
        self.cfg = cfg
        self.scopes = scopes
        self.stats = stats
        self.rng = random.Random(f"{cfg.seed}:{cfg.run_id}:{n}")
        self.continuity: dict[str, str] = {}
        self.counter = 0

    # ------------------------------------------------------------------ calls
    async def call(self, tool: str, arguments: dict[str, Any], expect: str | None = None) -> dict[str, Any]:
        """The envelope's data; raises CallFailed when not ok (``expect``: the error code wanted)."""
        deadline = time.monotonic() + self.cfg.unavailable_patience
        if self.cfg.abandon_on_stop and self.stop.is_set():
            raise CallFailed("stopped")
        while True:
            try:
                answer = await self.stats.call(self.client, tool, arguments)
            except Exception as exc:
                self.stats.expected[f"{tool}:transport:{type(exc).__name__}"] += 1
                raise TransportGone(str(exc)) from exc
            envelope = driver.checked_envelope(answer)
            if envelope is None:
                self.stats.errors[f"{tool}:no_envelope"] += 1
                raise CallFailed(tool)
            if envelope["ok"]:
                if expect is not None:
                    self.stats.problem(f"{tool} succeeded where {expect} was expected")
                data: dict[str, Any] = envelope["data"]
                return data
            error = envelope.get("error") or {}
            code = str(error.get("code"))
            if code == expect:
                self.stats.expected[f"{tool}:{code}"] += 1
                return error
            if code == "unavailable" and self.cfg.tolerate_unavailable and error.get("retryable"):
                self.stats.expected[f"{tool}:unavailable"] += 1
                if self.stop.is_set():
                    raise CallFailed("stopped while the database was unavailable")
                if time.monotonic() < deadline:  # an agent retries a retryable error after a pause
                    await asyncio.sleep(0.5 + self.rng.random())
                    continue
            self.stats.errors[f"{tool}:{code}"] += 1
            raise CallFailed(f"{tool}: {code}: {error.get('message')}")

    def check_scope(self, scope: str, memories: list[dict[str, Any]]) -> None:
        tag = scope_tag(scope)
        for m in memories:
            found = tag_of(m["content"])
            if found is None or found[0] != tag:
                self.stats.problem(f"scope leak: {m['memory_id']} shown in {scope}: {m['content'][:80]!r}")

    def nonce(self) -> str:
        self.counter += 1
        return f"c{self.n}-{self.counter}-{self.rng.getrandbits(24):06x}"

    # ------------------------------------------------------------------ one task
    async def lifecycle(self) -> None:
        rng = self.rng
        scope = rng.choice(self.scopes)
        topic = rng.choice(TOPICS)
        args = driver.activate_args(
            scope, f"{topic.task} (task {self.nonce()})", topic.task, page_size=rng.randint(2, 6)
        )
        if scope in self.continuity and rng.random() < 0.3:
            args["continuity_id"] = self.continuity[scope]
        if rng.random() < 0.3:
            args["task_context"] = {"topic": topic.key, "client": self.n, "tags": ["soak", topic.key]}
        act = await self.call("slowave_activate", args)
        self.continuity[scope] = act["continuity_id"]
        session = act["session_id"]
        self.check_scope(scope, act["memories"])

        stored = await self.remember(scope, session, topic)
        found = await self.call(
            "slowave_recall",
            driver.session_args(scope, session, query=topic.question, page_size=rng.randint(1, 3)),
        )
        self.check_scope(scope, found["memories"])
        shown = [act, found]
        if found["more_available"] and rng.random() < 0.6:
            shown.append(await self.continue_page(scope, session, found["continue_from"]))

        partial = rng.random() < 0.15
        for result in by_retrieval(shown):
            await self.feedback(session, result, topic, stored, partial=partial)
            partial = False
        await self.commit(session, topic)
        self.stats.lifecycles += 1

    async def remember(self, scope: str, session: str, topic: Topic) -> list[str]:
        rng = self.rng
        claims = rng.sample(topic.claims, k=rng.randint(1, 2))
        # an exact repeat (no nonce) races other clients storing the same claim in the scope
        contents = [tagged(c, scope, topic.key, None if rng.random() < 0.3 else self.nonce()) for c in claims]
        if len(contents) == 1 and rng.random() < 0.5:
            item = driver.session_args(scope, session, content=contents[0], type="fact")
            results = [await self.call("slowave_remember", item)]
        else:
            batch = [{"content": c, "type": rng.choice(["fact", "decision", "lesson"])} for c in contents]
            data = await self.call("slowave_remember", driver.session_args(scope, session, memories=batch))
            results = []
            for row in data["results"]:
                if not row["ok"]:
                    self.stats.errors[f"slowave_remember:item:{row['error']['code']}"] += 1
                    raise CallFailed("batch item failed")
                results.append(row["data"])
        for content, r in zip(contents, results, strict=True):
            if r["scope"] != scope:
                self.stats.problem(f"remember answered for another scope: {r}")
            self.stats.acks.memories.append(
                {"memory_id": r["memory_id"], "event_id": r["source_event_id"], "scope": scope,
                 # matched: the stored text is the first writer's (equal after normalisation)
                 "content": content if r["disposition"] == "created" else None}
            )  # fmt: skip
        return [r["memory_id"] for r in results]

    async def continue_page(self, scope: str, session: str, cursor: str) -> dict[str, Any]:
        args = driver.session_args(scope, session, continue_from=cursor)
        page = await self.call("slowave_recall", args)
        replay = await self.call("slowave_recall", args)
        if [m["memory_id"] for m in page["memories"]] != [m["memory_id"] for m in replay["memories"]]:
            self.stats.problem(f"cursor replay differs: {cursor}")
        self.check_scope(scope, page["memories"])
        return page

    def assess(self, memory: dict[str, Any], topic: Topic) -> dict[str, Any]:
        """Honest: used when the memory is about the task's topic, otherwise it did not fit."""
        found = tag_of(memory["content"])
        if found is not None and found[1] == topic.key:
            if self.rng.random() < 0.8:
                return {"memory_id": memory["memory_id"], "assessment": "used", "effect": "helped"}
            return {"memory_id": memory["memory_id"], "assessment": "already_known"}
        return {"memory_id": memory["memory_id"], "assessment": self.rng.choice(["irrelevant", "not_used"])}

    async def feedback(
        self, session: str, result: dict[str, Any], topic: Topic, stored: list[str], partial: bool
    ) -> None:
        entries = [self.assess(m, topic) for m in result["memories"]]
        # a correction: an older memory of this topic is marked stale, superseded by one just stored
        fresh = [m for m in stored if m not in {e["memory_id"] for e in entries}]
        for i, entry in enumerate(entries):
            if entry["assessment"] == "used" and fresh and self.rng.random() < 0.05:
                entries[i] = {
                    "memory_id": entry["memory_id"], "assessment": "stale", "stale_reason": "superseded",
                    "reason": "corrected by a newer claim", "replacement_memory_id": fresh[0],
                }  # fmt: skip
        procedures = [
            {"procedure_id": p["procedure_id"], "use": "used", "effect": "helped",
             "contribution": "followed its steps"}
            if topic.task in p.get("goal", "") else {"procedure_id": p["procedure_id"], "use": "not_used"}
            for p in result["procedures"]
        ]  # fmt: skip
        retrieval = result["retrieval_id"]
        if partial and entries:
            half = entries[: max(1, len(entries) // 2)]
            await self.send_feedback(retrieval, half, [], "partial")
            await self.call("slowave_commit", self.commit_args(session, topic), expect="incomplete_feedback")
        await self.send_feedback(retrieval, entries, procedures, "complete")

    async def send_feedback(
        self, retrieval: str, entries: list[dict[str, Any]], procedures: list[dict[str, Any]], coverage: str
    ) -> None:
        data = await self.call(
            "slowave_feedback", driver.feedback_args(retrieval, entries, procedures, coverage)
        )
        targets = [e["memory_id"] for e in entries] + [p["procedure_id"] for p in procedures]
        self.stats.acks.feedback.extend(
            {"event_id": e, "retrieval_id": retrieval, "targets": targets} for e in data["accepted_event_ids"]
        )
        for rejection in data["rejected"]:
            self.stats.rejections[rejection["reason"]] += 1
            # a replacement retired by another client in the meantime is a legitimate rejection;
            # anything else means the client's honest feedback was refused
            if rejection["reason"] not in ("replacement_not_current", "incomplete_coverage"):
                self.stats.problem(f"feedback rejected: {rejection}")
        if coverage == "complete" and data["coverage"] != "complete":
            if not any(r["reason"] == "replacement_not_current" for r in data["rejected"]):
                self.stats.problem(f"complete feedback not accepted as complete: {data['outstanding']}")
            await self.call(  # the retired replacement: settle the memory as not_used instead
                "slowave_feedback",
                {"retrieval_id": retrieval, "coverage": "complete", "memory_feedback": [
                    {"memory_id": e["memory_id"], "assessment": "not_used"}
                    for e in entries if e["assessment"] == "stale"]},
            )  # fmt: skip

    def commit_args(self, session: str, topic: Topic, procedure: bool = False) -> dict[str, Any]:
        rng = self.rng
        outcome = rng.choice(["success", "success", "partial", "failure"])
        checked = {"status": "verified", "summary": "Checked by the soak client.",
                   "evidence_refs": [f"soak:{self.cfg.run_id}"]}  # fmt: skip
        args = driver.commit_args(
            session, topic.task, outcome, f"Soak task on {topic.key} ended in {outcome}.", checked
        )
        if procedure:
            args["procedure"] = {
                "summary": f"How the soak client handles {topic.key} tasks",
                "context": {"topic": topic.key},
                "steps": [{"summary": "Look up what is known"}, {"summary": "Apply it and verify"}],
                "caveats": ["Synthetic procedure from the soak run"],
                "deduplication_key": f"soak-{topic.key}-{self.n}" if rng.random() < 0.5 else None,
            }
            if args["procedure"]["deduplication_key"] is None:
                del args["procedure"]["deduplication_key"]
        if rng.random() < 0.2:
            args["trajectory"] = [
                {"kind": "action", "summary": f"worked on {topic.key}", "status": "succeeded"},
                {"kind": "observation", "summary": "called slowave_recall for hints", "status": "succeeded"},
            ]
        return args

    async def commit(self, session: str, topic: Topic) -> None:
        args = self.commit_args(session, topic, procedure=self.rng.random() < 0.25)
        if self.rng.random() < 0.1:  # the same commit twice at once: exactly one closes the session
            first, second = await asyncio.gather(
                self.call("slowave_commit", args), self.call("slowave_commit", args)
            )
            operations = sorted([first["operation"], second["operation"]])
            if operations != ["closed", "updated"]:
                self.stats.problem(f"simultaneous commits of {session}: {operations}")
            results = [first, second]
        else:
            results = [await self.call("slowave_commit", args)]
        for r in results:
            self.stats.acks.commits[session] += 1 if r["operation"] == "closed" else 0

    async def run(self) -> None:
        done = 0
        while not self.stop.is_set() and (self.cfg.lifecycles is None or done < self.cfg.lifecycles):
            done += 1
            try:
                await self.lifecycle()
            except CallFailed:
                continue
            except TransportGone:
                return
            except Exception as exc:  # a bug in the client or a response that breaks the contract
                self.stats.problem(f"client {self.n} crashed: {exc!r}")
                return


def by_retrieval(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pages of one retrieval (a recall and its continuations) merged: feedback covers them all."""
    merged: dict[str, dict[str, Any]] = {}
    for r in results:
        into = merged.setdefault(r["retrieval_id"], {"retrieval_id": r["retrieval_id"], "memories": [],
                                                      "procedures": []})  # fmt: skip
        into["memories"] += r["memories"]
        into["procedures"] += r["procedures"]
    return list(merged.values())


# --------------------------------------------------------------------------- driving clients


async def run_clients(
    urls: list[str],
    cfg: SoakConfig,
    scopes: list[str],
    headers: dict[str, str] | None = None,
    stop: asyncio.Event | None = None,
    stats: SoakStats | None = None,
) -> SoakStats:
    """``cfg.clients`` clients spread over ``urls`` until ``cfg.duration`` passes (or ``stop``);
    ``stats`` (optional) lets a caller watch the run while it goes."""
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import Implementation

    stats = stats if stats is not None else SoakStats()
    stop = stop or asyncio.Event()

    async def one(n: int) -> None:
        url = urls[n % len(urls)]
        info = Implementation(name=f"slowave-soak-{n}", version=__version__)
        running = False
        try:
            async with (
                httpx2.AsyncClient(headers=headers or {}, timeout=180) as http,
                Client(streamable_http_client(url, http_client=http), client_info=info) as client,
            ):
                running = True
                await SoakClient(client, n, cfg, scopes, stats, stop).run()
        except Exception as exc:
            # closing the session of a server that was stopped is expected; not connecting is not
            kind = f"client:{'close' if running else 'connect'}:{type(exc).__name__}"
            (stats.expected if running else stats.errors)[kind] += 1

    async def timer() -> None:
        await asyncio.sleep(cfg.duration)
        stop.set()

    clock = asyncio.ensure_future(timer())
    try:
        await asyncio.gather(*(one(n) for n in range(cfg.clients)))
    finally:
        clock.cancel()
    return stats


def summary(stats: SoakStats, wall: float) -> dict[str, Any]:
    return {
        "calls": stats.calls,
        "lifecycles": stats.lifecycles,
        "wall_seconds": round(wall, 1),
        "calls_per_second": round(stats.calls / wall, 1) if wall > 0 else None,
        "unexpected_errors": dict(stats.errors),
        "expected_errors": dict(stats.expected),
        "client_problems": stats.problems,
        "feedback_rejections": dict(stats.rejections),
        "tools_ms": {
            tool: percentiles([s * 1000 for s in stats.latency[tool]]) | {"n": len(stats.latency[tool])}
            for tool in TOOLS
            if stats.latency[tool]
        },
        "acknowledged": {
            "memories": len(stats.acks.memories),
            "feedback_events": len(stats.acks.feedback),
            "commits": len(stats.acks.commits),
        },
    }


async def verify(db: Any, scopes: list[str], stats: SoakStats) -> dict[str, Any]:
    """The audit over the run's scopes plus every acknowledged write."""
    report = await audit(db, scopes)
    lost: list[Violation] = await audit_acknowledged(db, stats.acks)
    return {
        "audit": report.as_dict(),
        "acknowledged_violations": [v.__dict__ for v in lost],
        "violations": sum(report.checks.values()) + len(lost),
    }


# --------------------------------------------------------------------------- the command


async def soak(settings: Settings, cfg: SoakConfig, servers: int, out: Path, keep: bool) -> dict[str, Any]:
    """Start the servers, run the clients, verify, clean up; the result as a dict."""
    from slowave_graph.app import open_database

    scopes = soak_scopes(cfg.run_id, cfg.clients)
    token = settings.auth_token.get_secret_value() if settings.auth_token else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with open_database(settings) as db:
        uri, user, password = await connection_of(settings, db)
        login = {"NEO4J_URI": uri, "NEO4J_USER": user, "NEO4J_PASSWORD": password,
                 "NEO4J_DATABASE": settings.neo4j_database}  # fmt: skip
        env = server_env(settings, login, drop=("NEO4J_", "SLOWAVE_HTTP_"))
        with server_fleet(env, servers, out / "logs") as fleet:
            started = time.perf_counter()
            stats = await run_clients([s.url for s in fleet], cfg, scopes, headers)
            wall = time.perf_counter() - started
        checked = await verify(db, scopes, stats)
        if not keep:
            for scope in scopes:
                await db.run_write("delete_scope", scope=scope)
    return {
        "run_id": cfg.run_id,
        "clients": cfg.clients,
        "servers": servers,
        "duration_seconds": cfg.duration,
        "scopes": scopes,
        **summary(stats, wall),
        **checked,
        "ok": checked["violations"] == 0 and not stats.errors,
    }


async def connection_of(settings: Settings, db: Any) -> tuple[str, str, str]:
    """Where the servers should connect: the configured Neo4j, or the managed one this process
    joined (open_database holds its lease, so it keeps running until the soak ends)."""
    if settings.neo4j_uri:
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
        return settings.neo4j_uri, settings.neo4j_user, password
    from slowave_graph.neo4j_local.manager import ManagedNeo4j

    managed = ManagedNeo4j(settings)
    state = managed.running()
    if state is None:
        raise RuntimeError("the managed Neo4j is not running")
    return state.uri, "neo4j", managed.password()


def text_report(result: dict[str, Any]) -> str:
    lines = [
        f"soak {result['run_id']}: {result['clients']} clients on {result['servers']} server(s) for "
        f"{result['wall_seconds']}s — {'OK' if result['ok'] else 'FAILED'}",
        f"  calls {result['calls']} ({result['calls_per_second']}/s), lifecycles {result['lifecycles']}",
        f"  acknowledged: {json.dumps(result['acknowledged'])}",
        f"  unexpected errors: {json.dumps(result['unexpected_errors']) or '{}'}",
        f"  expected errors: {json.dumps(result['expected_errors'])}",
        f"  feedback rejections: {json.dumps(result['feedback_rejections'])}",
        f"  invariant violations: {result['violations']}",
        "  latency ms (p50 / p95 / p99, n):",
    ]
    for tool, p in result["tools_ms"].items():
        lines.append(f"    {tool:<18} {p['p50']:>8} {p['p95']:>8} {p['p99']:>8}  {p['n']}")
    for problem in result["client_problems"][:10]:
        lines.append(f"  client problem: {problem}")
    audit_report = result["audit"]
    for v in audit_report["violations"][:20]:
        lines.append(f"  violation [{v['check']}] {v['subject']}: {v['problem']}")
    for v in result["acknowledged_violations"][:20]:
        lines.append(f"  lost [{v['check']}] {v['subject']}: {v['problem']}")
    return "\n".join(lines)
