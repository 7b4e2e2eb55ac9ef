"""`slowave-graph bench conversations`: what a stdio MCP client's conversations cost, one after another.

Clients such as Claude Desktop spawn one stdio server per conversation. Each run here starts from
a fresh managed Neo4j in a scratch data directory (nothing running), then spawns that many
conversations in a row through the MCP SDK's stdio client, each running full lifecycles, and
reports per conversation: the time to a ready server (``initialize``), the first lifecycle, the
median per tool and the whole conversation. It runs once per linger setting (``--linger``):
with 0 each conversation starts its own Neo4j; with a linger the next conversations find the one
the previous left running, ready and warm.
"""

from __future__ import annotations

import os
import random
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from slowave_graph.config import Settings
from slowave_graph.neo4j_local.lease import ManagedLease
from slowave_graph.neo4j_local.manager import free_port
from slowave_graph.workload.driver import TOOLS, Recorder
from slowave_graph.workload.lifecycle import lifecycle
from slowave_graph_lab.bench.load import ms
from slowave_graph_lab.bench.servers import server_env, stdio_params

SCOPE = "project:bench-conversations"
SHOWN = ("slowave_activate", "slowave_recall", "slowave_remember")


@dataclass
class ConversationOptions:
    conversations: int = 3
    lifecycles: int = 10  # per conversation
    lingers: tuple[int, ...] = (0, 600)
    seed: int = 11


def conversation_env(settings: Settings, data_dir: Path, port: int, linger: int) -> dict[str, str]:
    """A managed Neo4j of the run's own (none of the caller's NEO4J_ settings), lingering or not."""
    own = settings.model_copy(update={"data_dir": data_dir, "neo4j_bolt_port": port}).managed_env()
    return server_env(
        settings, own, drop=("NEO4J_",), SLOWAVE_NEO4J_LINGER=str(linger), SLOWAVE_LOG_LEVEL="WARNING"
    )


async def conversation(env: dict[str, str], lifecycles: int, rng: random.Random) -> dict[str, Any]:
    """One stdio server spawned, ``lifecycles`` lifecycles, closed; timed from the spawn."""
    from mcp import Client

    params = stdio_params(env)
    recorder = Recorder()
    started = time.perf_counter()
    async with Client(params) as client:
        ready = time.perf_counter() - started
        first = None
        for _ in range(lifecycles):
            began = time.perf_counter()
            await lifecycle(client, recorder, rng, SCOPE)
            first = time.perf_counter() - began if first is None else first
    return {
        "ready_s": round(ready, 2),
        "first_lifecycle_s": round(first or 0.0, 2),
        "total_s": round(time.perf_counter() - started, 2),
        "p50_ms": {t: round(ms(recorder.latency[t])["p50"], 1) for t in TOOLS if recorder.latency[t]},
        "errors": dict(recorder.errors),
    }


async def run(settings: Settings, options: ConversationOptions) -> dict[str, Any]:
    if not settings.managed:
        raise ValueError("bench conversations measures the managed Neo4j: unset NEO4J_URI")
    rng = random.Random(options.seed)
    runs = []
    for linger in options.lingers:
        data_dir = Path(tempfile.mkdtemp(prefix="slowave-bench-conversations-"))
        env = conversation_env(settings, data_dir, free_port(), linger)
        lease = ManagedLease(Settings.from_env(env))  # the conversations' Neo4j, for its status
        try:
            rows = [await conversation(env, options.lifecycles, rng) for _ in range(options.conversations)]
            left_running = bool(lease.status()["running"])
        finally:
            lease.stop()  # a lingering one too
            shutil.rmtree(data_dir, ignore_errors=True)
        runs.append({"linger_s": linger, "conversations": rows, "left_running": left_running})
    return {
        "options": {"conversations": options.conversations, "lifecycles": options.lifecycles},
        "neo4j": {
            "version": settings.neo4j_version,
            "heap": settings.neo4j_heap,
            "pagecache": settings.neo4j_pagecache,
            "aot_cache": settings.neo4j_aot_cache,
        },
        "cpus": os.cpu_count(),
        "runs": runs,
    }


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"stdio conversations in a row ({result['options']['lifecycles']} lifecycles each), "
        f"from no Neo4j running; {result['cpus']} CPUs",
        "",
        "| linger | conversation | server ready | first lifecycle | conversation | activate p50 | recall p50 "
        "| remember p50 | errors |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for run in result["runs"]:
        for i, row in enumerate(run["conversations"], 1):
            p50 = row["p50_ms"]
            cells = [
                f"{run['linger_s']} s",
                str(i),
                f"{row['ready_s']:.1f} s",
                f"{row['first_lifecycle_s']:.2f} s",
                f"{row['total_s']:.1f} s",
                *(f"{p50.get(t, float('nan')):.0f} ms" for t in SHOWN),
                str(sum(row["errors"].values())),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
