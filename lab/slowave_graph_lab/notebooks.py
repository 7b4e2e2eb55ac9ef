"""What the notebooks in notebooks/ share: where Neo4j is, which scope to look at, seeding the
demo when it is missing, named catalog queries as plain rows, and the neomodel objects for
following one node to its neighbours.

Connection: NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD / NEO4J_DATABASE from the environment (the
service's own settings). Without NEO4J_URI the managed local Neo4j is used — joined when it runs,
otherwise started and left running, as `slowave-graph neo4j start` would (stop it with
`slowave-graph neo4j stop`). The scope comes from SLOWAVE_DEMO_SCOPE (default demo:harbor).
"""

from __future__ import annotations

import asyncio
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import neo4j

from slowave_graph.config import Settings
from slowave_graph.graph.cypher import catalog

SCOPE_ENV = "SLOWAVE_DEMO_SCOPE"
TASKS_ENV = "SLOWAVE_DEMO_TASKS"


def demo_scope() -> str:
    from slowave_graph_lab.demo.seed import DEFAULT_SCOPE

    return os.environ.get(SCOPE_ENV, "").strip() or DEFAULT_SCOPE


@dataclass(frozen=True)
class Target:
    uri: str
    user: str
    password: str
    database: str


def target(settings: Settings | None = None) -> Target:
    """Where the service's Neo4j is, by the service's own rules."""
    settings = settings or Settings.from_env()
    if not settings.managed:
        assert settings.neo4j_uri is not None
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
        return Target(settings.neo4j_uri, settings.neo4j_user, password, settings.neo4j_database)
    from slowave_graph.neo4j_local.lease import ManagedLease

    lease = ManagedLease(settings)
    state = lease.neo4j.running()
    if state is None:
        print("starting the managed local Neo4j (it keeps running; `slowave-graph neo4j stop` stops it)")
        lease.start_kept()
        state = lease.neo4j.running()
        assert state is not None
    return Target(state.uri, "neo4j", lease.neo4j.password(), settings.neo4j_database)


class Graph:
    """A synchronous driver that runs named statements from the Cypher catalog (cypher/*.cypher)."""

    def __init__(self, where: Target) -> None:
        self.target = where
        self.driver = neo4j.GraphDatabase.driver(where.uri, auth=(where.user, where.password))

    def rows(self, name: str, **params: Any) -> list[dict[str, Any]]:
        statement = catalog()[name]
        records, _, _ = self.driver.execute_query(
            statement, params, database_=self.target.database, routing_=neo4j.RoutingControl.READ
        )
        return [record.data() for record in records]

    def close(self) -> None:
        self.driver.close()

    def __enter__(self) -> Graph:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def connect(settings: Settings | None = None) -> Graph:
    return Graph(target(settings))


async def objects(graph: Graph) -> ModuleType:
    """The memory graph as neomodel objects (``slowave_graph.graph.models``) on ``graph``'s Neo4j.

    For following one node to its neighbours with typed properties and relationship properties
    (``await models.Memory.nodes.get(uid=…)``, ``await memory.supersedes.all()``); reading many rows
    at once stays with the named queries (``graph.rows``). Await it in a notebook cell (Jupyter
    runs cells on an event loop); ``await neomodel.adb.close_connection()`` closes the driver.
    """
    from neomodel import adb, get_config

    from slowave_graph.graph import models

    where = graph.target
    get_config().database_name = where.database
    driver = neo4j.AsyncGraphDatabase.driver(where.uri, auth=(where.user, where.password))
    await adb.set_connection(driver=driver)
    return models


def ensure_demo(graph: Graph, scope: str, settings: Settings | None = None) -> dict[str, Any]:
    """The scope's totals, after seeding the demo into it when it is empty.

    Seeding loads the embedding model and runs the real services (tens of seconds); it runs on a
    worker thread with its own event loop, because Jupyter already runs one on the main thread.
    """
    from slowave_graph_lab.demo.seed import (
        DEFAULT_TASKS,
        DEMO_CONTENTS,
        DemoScopeInUse,
        describe,
        holds_demo,
        is_empty,
        seed_scope,
    )

    counts = graph.rows("demo_scope_census", scope=scope, contents=DEMO_CONTENTS)[0]
    if is_empty(counts):
        # seed_scope reaches the same Neo4j by the same settings (the managed one is joined)
        tasks = int(os.environ.get(TASKS_ENV) or DEFAULT_TASKS)
        # no progress bars from loading the embedding model in a notebook's output
        os.environ.setdefault("TQDM_DISABLE", "1")
        warnings.filterwarnings("ignore", message="IProgress not found")
        job = seed_scope(settings or Settings.from_env(), scope, tasks, say=lambda _: None)
        with ThreadPoolExecutor(1) as pool:
            print(describe(pool.submit(asyncio.run, job).result()))
    elif not holds_demo(counts):
        raise DemoScopeInUse(f"scope {scope} holds memories that are not the demo's")
    return graph.rows("demo_scope_summary", scope=scope)[0]
