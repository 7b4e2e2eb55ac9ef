"""Re-embedding and full backup/restore change the whole database (vector index, embedding space),
so they run against a Neo4j of their own, started for this module and stopped after it."""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path

import pytest
from mcp import Client

from slowave_graph.app import App, database_embedder, open_app
from slowave_graph.contract.activate import ActivateRequest
from slowave_graph.embedding.embedder import DEFAULT_MODEL, MULTILINGUAL_MODEL, Embedder
from slowave_graph.embedding.endpoint import EndpointConfig, EndpointEmbedder
from slowave_graph.embedding.multilingual import MultilingualE5Embedder
from slowave_graph.graph.errors import EmbeddingMismatch
from slowave_graph.graph.schema import ensure_schema
from slowave_graph.mcp.server import build_server
from slowave_graph.operator.audit import audit
from slowave_graph.operator.backup import backup, restore
from slowave_graph.operator.bulk import import_memories
from slowave_graph.operator.importer import read_export
from slowave_graph.operator.reembed import reembed
from slowave_graph.services import Services
from slowave_graph.services.context import ClientInfo
from slowave_graph.workload import driver
from tests.support.conformance import DEPLOY_PROCEDURE
from tests.support.embedding_stub import KEY as STUB_KEY
from tests.support.embedding_stub import embedding_stub
from tests.support.mcp_helpers import activate, call, commit, error, remember, settle
from tests.support.neo4j import Neo4jTarget, managed_neo4j_settings, private_neo4j

pytestmark = pytest.mark.neo4j

SCOPE = "project:reembed"
CLAIMS = [
    "The payroll export runs on the first of the month",
    "Staging deploys need a green build",
    "The VPN certificate expires in March",
    "Backups are kept for thirty days",
    "The CDN purges its cache at midnight",
    "Invoices are numbered per fiscal year",
]


class Projected:
    """Another embedding model: the bundled one followed by a fixed 128-d projection (what a
    sentence-transformers model with a Dense head is), normalised."""

    def __init__(self, base: Embedder, dimension: int = 128) -> None:
        rng = random.Random(7)
        self.base = base
        self.matrix = [[rng.gauss(0, 1) for _ in range(base.dimension)] for _ in range(dimension)]

    @property
    def model_name(self) -> str:
        return "minilm-projected-128"

    @property
    def dimension(self) -> int:
        return len(self.matrix)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for vector in self.base.embed(texts):
            projected = [sum(w * x for w, x in zip(row, vector, strict=True)) for row in self.matrix]
            norm = math.sqrt(sum(x * x for x in projected))
            out.append([x / norm for x in projected])
        return out

    async def aembed(self, texts: Sequence[str]) -> list[list[float]]:
        return self.embed(texts)


@pytest.fixture(scope="module")
def reembed_neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Neo4jTarget]:
    with private_neo4j(managed_neo4j_settings(tmp_path_factory.mktemp("reembed-neo4j"))) as target:
        yield target


@pytest.fixture(scope="module")
async def private_app(reembed_neo4j: Neo4jTarget, embedder: Embedder) -> AsyncIterator[App]:
    async with open_app(reembed_neo4j.settings(), embedder=embedder) as app:
        yield app


async def vectors(app: App) -> dict[str, list[float]]:
    found, _, _ = await app.db.driver.execute_query(
        "MATCH (m:Memory) RETURN m.id AS id, m.embedding AS v UNION ALL "
        "MATCH (p:Procedure) RETURN p.id AS id, p.embedding AS v UNION ALL "
        "MATCH (r:Retrieval) WHERE r.query_embedding IS NOT NULL RETURN r.id AS id, r.query_embedding AS v",
        database_=app.db.database,
    )
    return {r["id"]: r["v"] for r in found}


async def first_hit(app: App, question: str, services: Services | None = None) -> str:
    found = await (services or app.services).activation.activate(
        ActivateRequest(scope=SCOPE, task=question, initial_goal=question), ClientInfo("probe", "1")
    )
    return found.memories[0].content


async def test_reembed_backup_restore(private_app: App, tmp_path: Path) -> None:
    app = private_app
    await import_memories(app, [{"scope": SCOPE, "content": c, "type": "fact"} for c in CLAIMS])
    async with Client(build_server(app)) as client:
        act = await activate(client, SCOPE, "When do the backups expire?")
        await settle(client, act)
        await commit(client, act["session_id"], final_goal="Check the backups", procedure=DEPLOY_PROCEDURE)
    original = await vectors(app)
    kinds = {k.split("_")[0] for k in original}
    assert kinds == {"sch", "proc", "ctx"}, kinds

    # same model: wipe the vectors, re-embed, and get exactly what the services stored
    await app.db.driver.execute_query(
        "MATCH (n) WHERE n:Memory OR n:Procedure SET n.embedding = $v "
        "WITH 1 AS one MATCH (r:Retrieval) WHERE r.query_embedding IS NOT NULL SET r.query_embedding = $v",
        v=[1.0] + [0.0] * 383,
        database_=app.db.database,
    )
    done = await reembed(app.db, app.embedder, batch_size=4)
    assert (done["memories"], done["procedures"], done["retrievals"]) == (len(CLAIMS), 1, 1)
    assert (done["model"], done["dimension"], done["vector_index_rebuilt"]) == (
        DEFAULT_MODEL,
        384,
        False,
    )
    again = await vectors(app)
    assert again.keys() == original.keys()
    for key, vector in original.items():
        assert again[key] == pytest.approx(vector, abs=1e-6), key
    assert await first_hit(app, "How long are backups kept?") == CLAIMS[3]

    # full backup, then restore over the existing scope with verification
    path = tmp_path / "backup.jsonl"
    taken = await backup(app.db, path)
    assert taken["nodes"]["Memory"] == len(CLAIMS) and taken["warnings"] == []
    await import_memories(app, [{"scope": SCOPE, "content": "Added after the backup", "type": "fact"}])
    restored = await restore(app.db, read_export(path), replace=True)
    assert restored["replaced"] == [SCOPE] and restored["checksum"] == taken["checksum"]
    assert len(await vectors(app)) == len(original) + 1  # + the probe's retrieval above

    # another model with another dimension: the vector index is rebuilt, the space recorded
    other = Projected(app.embedder)
    changed = await reembed(app.db, other)
    assert (changed["model_before"], changed["dimension"], changed["vector_index_rebuilt"]) == (
        DEFAULT_MODEL,
        128,
        True,
    )
    [index] = await app.db.run_read("vector_index_info")
    assert (index["config"]["vector.dimensions"], index["state"]) == (128, "ONLINE")
    assert {len(v) for v in (await vectors(app)).values()} == {128}
    with pytest.raises(EmbeddingMismatch, match=f"slowave-graph reembed --model {DEFAULT_MODEL}"):
        await ensure_schema(app.db, DEFAULT_MODEL, 384)
    # a server that follows the database (no model configured) needs its model, which loads nowhere
    with pytest.raises(EmbeddingMismatch, match="minilm-projected-128, which does not load here"):
        await database_embedder(app.db, None)
    with_other = Services.build(app.repo, other)
    assert await first_hit(app, "How long are backups kept?", with_other) == CLAIMS[3]


async def test_a_store_moves_onto_an_endpoint_model_and_follows_it(
    private_app: App, monkeypatch: pytest.MonkeyPatch
) -> None:
    """reembed moves the store onto a model behind an OpenAI-compatible endpoint (the local stub);
    retrieval works on it, and a server with no model configured loads it from the stored name."""
    app = private_app
    monkeypatch.setenv("STUB_EMBEDDING_KEY", STUB_KEY)
    with embedding_stub(dimension=96) as stub:
        endpoint = EndpointConfig(base_url=stub.url, api_key_env="STUB_EMBEDDING_KEY", dimensions=80)
        remote = EndpointEmbedder("openai:stub-embed", endpoint)
        moved = await reembed(app.db, remote)
        assert (moved["model"], moved["dimension"], moved["vector_index_rebuilt"]) == (
            "openai:stub-embed@80",
            80,
            True,
        )
        assert {len(v) for v in (await vectors(app)).values()} == {80}
        report = await audit(app.db)  # the whole store, after reembed and the restore before it
        assert report.ok, report
        assert (
            await first_hit(app, "How long are backups kept?", Services.build(app.repo, remote)) == CLAIMS[3]
        )
        followed = await database_embedder(app.db, None, endpoint=EndpointConfig(base_url=stub.url))
        assert isinstance(followed, EndpointEmbedder) and followed.model_name == "openai:stub-embed@80"
        with pytest.raises(EmbeddingMismatch, match="set SLOWAVE_EMBEDDING_MODEL=openai:stub-embed@80"):
            await ensure_schema(app.db, DEFAULT_MODEL, 384)

        # served over MCP: an endpoint that fails is a retryable `unavailable`, and nothing is written
        served = dataclasses.replace(app, embedder=remote, services=Services.build(app.repo, remote))
        async with Client(build_server(served)) as client:
            started = await activate(client, SCOPE, "Note what the build needs")
            session = started["session_id"]
            await remember(client, SCOPE, session, "The build needs Java 21")
            stub.fail_next = [503] * 10  # more than the retries
            args = driver.session_args(
                SCOPE, session, content="The build cache lives on the NAS", type="fact"
            )
            failed = error(await call(client, "slowave_remember", args), "unavailable")
            assert failed["retryable"] is True and "nothing was written" in failed["message"]
            stub.fail_next = []
            monkeypatch.setenv("STUB_EMBEDDING_KEY", "sk-revoked-key-000")
            refused = error(await call(client, "slowave_remember", args), "unavailable")
            assert refused["retryable"] is False and "sk-revoked-key-000" not in str(refused)
        found, _, _ = await app.db.driver.execute_query(
            "MATCH (m:Memory {scope: $scope}) RETURN m.content AS content",
            scope=SCOPE,
            database_=app.db.database,
        )
        stored = [r["content"] for r in found]
        assert "The build needs Java 21" in stored and "The build cache lives on the NAS" not in stored


async def test_a_store_moves_onto_the_multilingual_model_and_answers_other_languages(
    private_app: App,
) -> None:
    """On multilingual-e5-small an English instruction is found by the same question asked in
    Italian, German, French, Spanish or Portuguese; a server with no model configured follows the
    store onto it."""
    multilingual = MultilingualE5Embedder()
    moved = await reembed(private_app.db, multilingual)
    assert (moved["model"], moved["dimension"], moved["vector_index_rebuilt"]) == (
        MULTILINGUAL_MODEL,
        384,
        True,
    )
    app = dataclasses.replace(
        private_app, embedder=multilingual, services=Services.build(private_app.repo, multilingual)
    )
    instruction = "Always run the database migrations before deploying the API."
    await import_memories(app, [{"scope": SCOPE, "content": instruction, "type": "instruction"}])
    for question in (
        "Cosa bisogna fare prima di distribuire l'API?",
        "Was muss vor dem Deployment der API passieren?",
        "Que faut-il faire avant de déployer l'API ?",
        "¿Qué hay que hacer antes de desplegar la API?",
        "O que deve ser feito antes de implantar a API?",
    ):
        assert await first_hit(app, question, app.services) == instruction, question
    assert await first_hit(app, "Per quanto tempo vengono conservati i backup?", app.services) == CLAIMS[3]
    followed = await database_embedder(app.db, None)
    assert isinstance(followed, MultilingualE5Embedder)
    report = await audit(app.db)
    assert report.ok, report
