"""Reliability under load, on a Neo4j of this module's own (it gets killed): two server processes
with a bearer token, a Neo4j password and DEBUG logging, driven by the soak clients
(lab/slowave_graph_lab/bench/soak.py; `slowave-graph soak` runs them longer and wider).

1. A CI-sized soak: 10 concurrent MCP clients on both servers, full lifecycles; then the audit and
   every acknowledged memory, feedback event and commit are checked.
2. Neo4j is SIGKILLed mid-load and restarted: every call answers — ok, or ``unavailable`` and
   retryable — the same server processes recover by themselves, and afterwards the audit passes
   and every write acknowledged before the crash is still there.
3. The servers' logs hold neither the token nor the password.
4. One server gets SIGTERM mid-load: it exits cleanly; whatever it acknowledged is in the graph
   and nothing is half-written; the other server keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx2
import pytest

from slowave_graph.app import open_database
from slowave_graph.config import Settings
from slowave_graph.graph.database import Database
from slowave_graph.neo4j_local.manager import ManagedNeo4j
from slowave_graph_lab.bench.servers import ServerProcess, server_fleet, stop_server
from slowave_graph_lab.bench.soak import TOOLS, SoakConfig, SoakStats, run_clients, soak_scopes, verify
from tests.support.neo4j import managed_neo4j_settings

pytestmark = pytest.mark.neo4j


@dataclass
class Stack:
    neo4j: ManagedNeo4j
    settings: Settings  # for connecting from the test
    servers: list[ServerProcess]
    token: str
    password: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    @property
    def urls(self) -> list[str]:
        return [s.url for s in self.servers if s.proc.poll() is None]

    def health(self, server: ServerProcess) -> int:
        try:
            return httpx2.get(f"http://127.0.0.1:{server.port}/health", timeout=10).status_code
        except httpx2.HTTPError:
            return 0


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    data = tmp_path_factory.mktemp("fault-neo4j")
    password, token = f"pw-{secrets.token_hex(12)}", f"tok-{secrets.token_hex(16)}"
    settings = managed_neo4j_settings(data, neo4j_password=password)
    neo4j = ManagedNeo4j(settings)
    uri = f"bolt://127.0.0.1:{settings.neo4j_bolt_port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "SLOWAVE_"))}
    env.update(NEO4J_URI=uri, NEO4J_PASSWORD=password, SLOWAVE_AUTH_TOKEN=token, SLOWAVE_LOG_LEVEL="DEBUG")
    # Neo4j and the servers start side by side: a server waits for Bolt while it loads its model
    starting = threading.Thread(target=neo4j.start)
    starting.start()
    try:
        with server_fleet(env, 2, data / "logs") as servers:
            starting.join()
            yield Stack(neo4j, Settings.from_env({}, neo4j_uri=uri, neo4j_password=password), servers, token,
                        password)  # fmt: skip
    finally:
        starting.join()
        neo4j.stop(timeout=3)  # a throwaway store: no need to wait long for a clean shutdown


@contextlib.asynccontextmanager
async def database(stack: Stack) -> AsyncIterator[Database]:
    async with open_database(stack.settings) as db:
        yield db


async def load_until(stats: SoakStats, calls: int, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while stats.calls < calls:
        assert time.monotonic() < deadline, f"only {stats.calls} calls in {timeout}s"
        await asyncio.sleep(0.1)


async def test_soak_two_servers_concurrent_lifecycles_lose_nothing(stack: Stack) -> None:
    cfg = SoakConfig(clients=8, lifecycles=2, duration=240.0, seed=11)
    scopes = soak_scopes(cfg.run_id, cfg.clients)
    stats = await run_clients(stack.urls, cfg, scopes, stack.headers)
    async with database(stack) as db:
        checked = await verify(db, scopes, stats)
    assert stats.errors == {}, (stats.errors, stats.problems)
    assert stats.problems == []
    assert checked["violations"] == 0, checked
    # the load was real: every tool, on both servers, writes acknowledged and then verified
    assert set(stats.latency) == set(TOOLS)
    assert stats.lifecycles == 16 and stats.calls >= 6 * 16, (stats.lifecycles, stats.calls)
    assert len(stats.acks.memories) >= 16 and len(stats.acks.feedback) >= 16 and len(stats.acks.commits) == 16
    assert set(stats.expected) <= {"slowave_commit:incomplete_feedback"}, stats.expected


async def test_neo4j_killed_mid_load_every_call_answers_and_the_server_recovers(stack: Stack) -> None:
    cfg = SoakConfig(
        clients=4, duration=600.0, seed=3, tolerate_unavailable=True, unavailable_patience=90.0,
        abandon_on_stop=True,
    )  # fmt: skip
    scopes = soak_scopes(cfg.run_id, cfg.clients)
    stop, stats = asyncio.Event(), SoakStats()
    loading = asyncio.ensure_future(run_clients(stack.urls, cfg, scopes, stack.headers, stop, stats))
    try:
        await load_until(stats, 12)
        pid = stack.neo4j.running()
        assert pid is not None
        os.kill(pid.pid, signal.SIGKILL)  # mid-load: calls are in flight
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid.pid, 0)
        down = await asyncio.gather(*(asyncio.to_thread(stack.health, s) for s in stack.servers))
        assert down == [503, 503], down  # the servers are up and say the database is not
        await asyncio.to_thread(stack.neo4j.start)  # same store, same port: crash recovery
        deadline = time.monotonic() + 60
        for server in stack.servers:
            while await asyncio.to_thread(stack.health, server) != 200:
                assert time.monotonic() < deadline, "a server did not recover"
                await asyncio.sleep(0.5)
        await load_until(stats, stats.calls + 12)  # load goes on against the recovered database
        recovered_with = stats.lifecycles
        deadline = time.monotonic() + 120
        while stats.lifecycles <= recovered_with:  # and a whole lifecycle completes on it
            assert time.monotonic() < deadline, f"no lifecycle completed after recovery ({stats.calls} calls)"
            await asyncio.sleep(0.1)
    finally:
        stop.set()
        await loading
    assert all(s.proc.poll() is None for s in stack.servers), "the servers recover without a restart"

    # every call answered: ok, or unavailable + retryable (tolerated and retried by the clients)
    assert stats.errors == {}, (stats.errors, stats.problems)
    assert stats.problems == []
    # (the load stops at a call count, so how many lifecycles finished before is chance: the wait
    # above asks for one completed after recovery)
    assert stats.lifecycles >= 1 and stats.calls >= 24, (stats.lifecycles, stats.calls)
    assert set(stats.expected) <= {"slowave_commit:incomplete_feedback"} | {
        f"{tool}:unavailable" for tool in stats.latency
    }, stats.expected
    async with database(stack) as db:
        checked = await verify(db, scopes, stats)  # acknowledged before the crash: still there
    assert checked["violations"] == 0, checked


def test_logs_hold_no_secrets(stack: Stack) -> None:
    for url in stack.urls:
        assert (
            httpx2.post(url, json={}, headers={"Authorization": f"Bearer {stack.token}x"}).status_code == 401
        )
        assert httpx2.post(url, json={}, headers={"Authorization": stack.password}).status_code == 401
    for server in stack.servers:
        log = server.log.read_text(errors="replace")
        assert "serving MCP on http://" in log and "DEBUG" in log  # the log is the real, verbose one
        assert stack.token not in log and stack.password not in log
    launcher = stack.neo4j.log_file.read_text(errors="replace")
    assert stack.password not in launcher


async def test_sigterm_mid_load_keeps_every_acknowledged_write(stack: Stack) -> None:
    assert len(stack.urls) == 2, "both servers of this module must be running"
    cfg = SoakConfig(clients=4, duration=600.0, seed=5, abandon_on_stop=True)
    scopes = soak_scopes(cfg.run_id, cfg.clients)
    stop, stats = asyncio.Event(), SoakStats()
    loading = asyncio.ensure_future(run_clients(stack.urls, cfg, scopes, stack.headers, stop, stats))
    victim, survivor = stack.servers
    try:
        await load_until(stats, 12)
        code = await asyncio.to_thread(stop_server, victim, 60.0)  # SIGTERM with calls in flight
        await load_until(stats, stats.calls + 6)  # the other server serves on
    finally:
        stop.set()
        await loading
    assert code == 0, "graceful shutdown exits 0"
    assert survivor.proc.poll() is None
    # calls cut off by the shutdown end their client (transport), nothing else may have failed
    assert stats.errors == {}, (stats.errors, stats.problems)
    assert stats.problems == [] and stats.calls >= 18
    assert len(stats.acks.memories) > 0
    async with database(stack) as db:
        checked = await verify(db, scopes, stats)
    assert checked["violations"] == 0, checked
