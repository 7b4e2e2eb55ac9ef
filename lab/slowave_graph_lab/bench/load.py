"""`slowave-graph bench load`: latency and throughput of the real MCP server at growing sizes.

For each size the database is topped up with synthetic memories (``bench.synthetic``) through the
bulk import path, then a real server process is driven over streamable HTTP by N concurrent MCP
clients running full lifecycles (activate → remember → recall → feedback → commit). Reported per
size and client count: p50/p95/p99 per tool as the client saw it, throughput, errors, server and
Neo4j RSS, and the server's own split of each call into embedding / Neo4j / Python (``/metrics``).
The floor — a query's and a memory's embedding, a bare vector-index query, a durable write and a
refused MCP round trip, each alone — is measured beside it, and the report sums the parts each
target's calls cannot avoid.
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from slowave_graph import __version__
from slowave_graph.app import App
from slowave_graph.config import Settings
from slowave_graph.workload import driver, synthetic
from slowave_graph.workload.driver import TOOLS, Recorder
from slowave_graph.workload.fill import fill, scope_sizes
from slowave_graph.workload.lifecycle import (
    call,
    commit_args,
    honest_feedback,
    lifecycle,
    pick_scope,
    remember_args,
)
from slowave_graph_lab.bench import servers
from slowave_graph_lab.bench.cpu import CpuMeter
from slowave_graph_lab.bench.mcp_http import LeanClient
from slowave_graph_lab.bench.metrics import percentiles


def ms(seconds: list[float]) -> dict[str, float]:
    """p50/p95/p99/mean in milliseconds."""
    return percentiles([s * 1000 for s in seconds])


@dataclass
class LoadOptions:
    sizes: list[int]
    clients: list[int]
    lifecycles: int  # per client and phase
    seed: int = 7
    port: int = 8799
    sequential_remembers: int = 200
    prefix: str = "load"
    fill_vectors: str = "exact"  # or "derived" (bench.derived): the 1M figures use derived vectors
    warmup: int = 200  # at least these lifecycles before measuring a size, then until steady (warm_up)
    client: str = "raw"  # the load generator: the lean JSON-RPC client, or "sdk" (bench.mcp_http)


# ------------------------------------------------------------------ the server under test


def server_env(settings: Settings, port: int) -> dict[str, str]:
    """``slowave-graph serve`` on the benchmark's Neo4j (external, or the same managed one shared
    through its lease) with the env the bench runs with; the embedding models' cache as well."""
    return servers.server_env(
        settings,
        SLOWAVE_HTTP_PORT=str(port),
        SLOWAVE_LOG_LEVEL="WARNING",
        SLOWAVE_CACHE_DIR=str(settings.cache_dir),
    )


def rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    import psutil

    try:
        return round(psutil.Process(pid).memory_info().rss / 2**20, 1)
    except psutil.Error:
        return None


def neo4j_pid(bolt_port: int) -> int | None:
    """The JVM listening on the Bolt port, when it runs on this machine."""
    import psutil

    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == bolt_port:
                return conn.pid
    except psutil.Error:
        return None
    return None


CLIENTS = ("raw", "sdk")


@asynccontextmanager
async def mcp_client(url: str, headers: dict[str, str], name: str, kind: str = "raw") -> AsyncIterator[Any]:
    """A client with ``call_tool``: the lean one (``bench.mcp_http``) or the SDK's own."""
    async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
        if kind == "raw":
            yield LeanClient(http, url, name, __version__)
            return
        if kind != "sdk":
            raise ValueError(f"client must be one of {', '.join(CLIENTS)}")
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
        from mcp.types import Implementation

        info = Implementation(name=name, version=__version__)
        async with Client(streamable_http_client(url, http_client=http), client_info=info) as client:
            yield client


async def drive(
    url: str,
    headers: dict[str, str],
    clients: int,
    lifecycles: int,
    plans: list[synthetic.ScopePlan],
    seed: int,
    client_kind: str = "raw",
) -> dict[str, Any]:
    rec = Recorder()
    completed = 0

    async def worker(n: int) -> None:
        nonlocal completed
        rng = random.Random(f"{seed}:{clients}:{n}")
        async with mcp_client(url, headers, f"slowave-load-{n}", client_kind) as client:
            for _ in range(lifecycles):
                if await lifecycle(client, rec, rng, pick_scope(plans, rng)):
                    completed += 1

    started = time.perf_counter()
    await asyncio.gather(*(worker(n) for n in range(clients)))
    wall = time.perf_counter() - started
    return {
        "clients": clients,
        "wall_seconds": round(wall, 2),
        "lifecycles": completed,
        "calls": rec.calls,
        "calls_per_second": round(rec.calls / wall, 1),
        "lifecycles_per_second": round(completed / wall, 2),
        "errors": dict(rec.errors),
        "error_count": sum(rec.errors.values()),
        "tools_ms": {tool: ms(rec.latency[tool]) for tool in TOOLS if rec.latency[tool]},
    }


WARMUP_ROUND = 50  # lifecycles per warm-up round
WARMUP_CAP = 5  # warm-up stops at this many times the minimum, steady or not
SEQUENTIAL_ROUNDS = 20  # rounds of sequential remembers; the rate is that of the second half


def settled(costs: list[float], window: int = 3, tolerance: float = 0.07) -> bool:
    """True once CPU per call has stopped falling: the last ``window`` rounds cost on average no
    more than ``tolerance`` less than the ``window`` rounds before them. Windows, not single rounds,
    since one round of a noisy machine can look flat in the middle of the JIT's long tail."""
    if len(costs) < 2 * window:
        return False
    last = sum(costs[-window:]) / window
    before = sum(costs[-2 * window : -window]) / window
    return last >= before * (1 - tolerance)


async def warm_up(
    url: str,
    headers: dict[str, str],
    plans: list[synthetic.ScopePlan],
    options: LoadOptions,
    pids: dict[str, int | None],
) -> dict[str, Any]:
    """One client's lifecycles before a size is measured: at least ``options.warmup``, then until
    the server's and Neo4j's CPU per call stops falling (at most ``WARMUP_CAP`` times as many).

    After a Neo4j start its JIT compiler takes thousands of calls to settle: Neo4j's CPU per call
    and activate's p50 keep falling for hundreds of lifecycles, and a fixed short warm-up measured
    the first size half-warm, which made it look slower than the larger sizes measured after it
    (docs/performance.md, "Measuring", "Why the warm-up is adaptive")."""
    step = min(WARMUP_ROUND, options.warmup)
    watched = {name: pids[name] for name in ("server", "neo4j")}
    costs: list[float] = []
    done, steady = 0, False
    while not steady and done < WARMUP_CAP * options.warmup:  # --warmup 0: no round at all
        meter = CpuMeter(watched)
        phase = await drive(url, headers, 1, step, plans, options.seed + 1 + len(costs), options.client)
        ms = meter.per_call(phase["calls"])["ms_per_call"]
        costs.append(round(sum(v for v in ms.values() if v is not None), 1))
        done += step
        steady = done >= options.warmup and settled(costs)
    return {"lifecycles": done, "cpu_ms_per_call": costs, "steady": steady}


async def sequential_remembers(
    url: str,
    headers: dict[str, str],
    scope: str,
    count: int,
    client_kind: str = "raw",
    rounds: int = SEQUENTIAL_ROUNDS,
) -> dict[str, Any]:
    """Single memories, one after another, in one session: the sequential write rate. ``rounds``
    rounds of ``count``; the first half warms up, the figure is the rate over the second half.

    One round right after the phases measured a write path Neo4j had not finished compiling (the
    first rounds after a Neo4j start are much slower than the later ones), so the figure is a
    sustained rate over thousands of writes; every round is reported. Each claim is new
    (``remember_args``): repeated claims (an earlier run's) only reinforce, and faster
    (docs/performance.md, "Measuring")."""
    rec = Recorder()
    seconds: list[float] = []
    measured = max(1, rounds // 2)
    first = 0  # where the measured half's latencies start
    rng = random.Random(f"seq:{scope}")
    async with mcp_client(url, headers, "slowave-load-seq", client_kind) as client:
        act = await call(client, rec, "slowave_activate", driver.activate_args(scope, "store notes"))
        assert act is not None, f"activate failed: {dict(rec.errors)}"
        session = act["session_id"]
        for round_ in range(rounds):
            if round_ == rounds - measured:
                first = len(rec.latency["slowave_remember"])
            started = time.perf_counter()
            for _ in range(count):
                await call(client, rec, "slowave_remember", remember_args(scope, session, rng))
            seconds.append(time.perf_counter() - started)
        await call(client, rec, "slowave_feedback", honest_feedback(act, rng))
        await call(client, rec, "slowave_commit", commit_args(session, "store notes", "success"))
    return {
        "count": count,
        "rounds": rounds,
        "measured_rounds": measured,
        "seconds": round(sum(seconds[-measured:]), 2),
        "per_second": round(count * measured / sum(seconds[-measured:]), 1),
        "errors": dict(rec.errors),
        "latency_ms": ms(rec.latency["slowave_remember"][first:]),
        "rounds_per_second": [round(count / t, 1) for t in seconds],
    }


# ------------------------------------------------------------------ floor


async def _each_timed(
    items: list[Any], call: Callable[[Any], Awaitable[object]], warm: int = 20
) -> dict[str, float]:
    """Percentiles of ``call`` on each item, one at a time, after ``warm`` unmeasured calls."""
    for item in items[:warm]:
        await call(item)
    times = []
    for item in items:
        started = time.perf_counter()
        await call(item)
        times.append(time.perf_counter() - started)
    return ms(times)


async def floor(
    app: App, scope: str, url: str, headers: dict[str, str], client_kind: str = "raw", samples: int = 200
) -> dict[str, Any]:
    """The physical limit, each part alone on the otherwise idle machine: a query's and a memory's
    embedding, one bare filtered vector query, one durable write (an auto-commit statement setting
    one property: a commit and its log flush), and one MCP round trip that the server refuses at
    validation (HTTP, the SDK and the envelope, no embedding and no Neo4j). activate and recall
    hold at least one of each of their parts one after another (``load_report.FLOOR_PARTS``)."""
    rng = random.Random("floor")
    questions = [synthetic.question(rng) for _ in range(samples)]
    memories = [remember_args(scope, "", rng)["content"] for _ in range(samples)]
    vectors = [app.embedder.embed([q])[0] for q in questions]

    async def embed(text: str) -> None:
        app.embedder.embed([text])

    name = (
        "bench_bare_vector_query"
        if app.db.server and app.db.server.supports_search_clause
        else "bench_bare_vector_query_5"
    )
    result = {
        "embedding_ms": await _each_timed(questions, embed),
        "memory_embedding_ms": await _each_timed(memories, embed),
        "vector_query_ms": await _each_timed(
            vectors, lambda vector: app.db.run_read(name, scope=scope, embedding=vector, k=50)
        ),
    }
    probe = f"floor-{secrets.token_hex(4)}"
    try:
        result["write_ms"] = await _each_timed(
            list(range(samples)), lambda at: app.db.run_idempotent_write("bench_probe_write", id=probe, at=at)
        )
    finally:
        await app.db.run_idempotent_write("bench_probe_delete", id=probe)
    async with mcp_client(url, headers, "slowave-load-floor", client_kind) as client:

        async def refused(_: int) -> None:
            answer = (await client.call_tool("slowave_remember", {"scope": scope})).structured_content or {}
            if (answer.get("error") or {}).get("code") != "invalid_input":
                raise RuntimeError(f"the floor's round trip was not refused at validation: {answer}")

        result["round_trip_ms"] = await _each_timed(list(range(samples)), refused)
    return {**result, "scope": scope}


# ------------------------------------------------------------------ the run


async def run(
    app: App,
    options: LoadOptions,
    progress: bool = True,
    checkpoint: Callable[[dict[str, Any]], object] | None = None,
) -> dict[str, Any]:
    """Every size in turn; ``checkpoint`` gets the results so far after each size (a long run
    that is stopped keeps what it measured)."""
    settings = app.settings
    token = settings.auth_token.get_secret_value() if settings.auth_token else None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"http://127.0.0.1:{options.port}/mcp"
    bolt_port = _bolt_port(settings)
    results: dict[str, Any] = {
        "version": __version__,
        "embedding_model": app.embedder.model_name,
        "neo4j": app.db.server.version if app.db.server else None,
        "cpus": os.cpu_count(),
        "lifecycles_per_client": options.lifecycles,
        "client": options.client,
        "fill_vectors": options.fill_vectors,
        "sizes": [],
    }
    for size in sorted(options.sizes):
        entry = await _measure_size(app, options, size, url, headers, bolt_port, progress)
        results["sizes"].append(entry)
        if checkpoint is not None:
            checkpoint(results)
    return results


def _bolt_port(settings: Settings) -> int:
    """The Bolt port of the Neo4j in use: the external one's when NEO4J_URI is set."""
    bolt_port = settings.neo4j_bolt_port
    if settings.neo4j_uri:
        from urllib.parse import urlparse

        parsed = urlparse(settings.neo4j_uri)
        bolt_port = parsed.port or 7687
    return bolt_port


async def _measure_size(
    app: App,
    options: LoadOptions,
    size: int,
    url: str,
    headers: dict[str, str],
    bolt_port: int,
    progress: bool,
) -> dict[str, Any]:
    """One size: the database filled, then against one fresh server the warm-up, a phase per
    client count, the sequential remembers and the floor."""
    filled = await fill(app, size, options.seed, options.prefix, progress, options.fill_vectors)
    plans = synthetic.scope_plan(size, options.prefix)
    entry: dict[str, Any] = {"size": size, "fill": filled, "phases": []}
    logs = Path(tempfile.mkdtemp(prefix="slowave-load-"))
    env = server_env(app.settings, options.port)
    with servers.server_fleet(env, 1, logs, ports=[options.port]) as (server,):
        pids = {"server": server.proc.pid, "neo4j": neo4j_pid(bolt_port), "load_generator": os.getpid()}
        entry["warmup"] = await warm_up(url, headers, plans, options, pids)
        # every warm-up lifecycle remembers a memory: what the phases measured, not the fill target
        entry["memories_measured"] = sum((await scope_sizes(app, [p.scope for p in plans])).values())
        for clients in options.clients:
            phase = await _measure_phase(url, headers, clients, plans, options, size, pids)
            entry["phases"].append(phase)
        entry["sequential_remember"] = await sequential_remembers(
            url, headers, plans[-1].scope, options.sequential_remembers, options.client
        )
        entry["floor"] = await floor(app, plans[0].scope, url, headers, options.client)
    return entry


async def _measure_phase(
    url: str,
    headers: dict[str, str],
    clients: int,
    plans: list[synthetic.ScopePlan],
    options: LoadOptions,
    size: int,
    pids: dict[str, int | None],
) -> dict[str, Any]:
    """``clients`` concurrent clients driving lifecycles, with the CPU, the server's own split of
    each call, and memory read around them; the server's metrics are cleared first."""
    httpx2.delete(f"http://127.0.0.1:{options.port}/metrics", headers=headers, timeout=10)
    meter = CpuMeter(pids)
    phase = await drive(url, headers, clients, options.lifecycles, plans, options.seed + size, options.client)
    phase["cpu"] = meter.per_call(phase["calls"])
    server_split = httpx2.get(f"http://127.0.0.1:{options.port}/metrics", headers=headers, timeout=10).json()
    phase["server"] = server_split["tools"]
    phase["gc"] = server_split.get("gc")
    phase["server_rss_mb"] = rss_mb(pids["server"])
    phase["neo4j_rss_mb"] = rss_mb(pids["neo4j"])
    # a shared machine's other work shows in every latency: keep it beside them
    phase["loadavg_1m"] = round(os.getloadavg()[0], 2)
    return phase
