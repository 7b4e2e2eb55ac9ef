"""`slowave-graph bench retrieval`: ingest a dataset through the product's write path (the remember
service, one scope per corpus) and query it through the product's retrieval path (the code
activate and recall run), then score the ranked results against the dataset's gold references.
"""

from __future__ import annotations

import secrets
import time
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources
from typing import Any

from slowave_graph.app import App
from slowave_graph.contract.activate import ActivateRequest, ActivateResult
from slowave_graph.contract.feedback import FeedbackRequest
from slowave_graph.contract.recall import RecallRequest, RecallResult
from slowave_graph.contract.remember import RememberBatchResult, RememberRequest
from slowave_graph.services.context import ClientInfo
from slowave_graph.services.ranking import RankingPolicy
from slowave_graph.services.recall import RecallService
from slowave_graph.services.retrieval import Retriever
from slowave_graph.workload.driver import complete_feedback
from slowave_graph_lab.bench import compound as bench_compound
from slowave_graph_lab.bench.datasets import Dataset, Doc, Query
from slowave_graph_lab.bench.metrics import Ranked, by_category, percentiles, summarize

BATCH = 100
BENCH_CLIENT = ClientInfo(name="slowave-graph-bench", version="1")


def offtopic_probes() -> list[str]:
    text = (resources.files("slowave_graph_lab.bench") / "offtopic_probes.txt").read_text()
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


@dataclass
class Corpus:
    scope: str
    refs_of: dict[str, set[str]]  # memory id → dataset refs it stands for (duplicates merge)


def progress(total: int, desc: str) -> Any:
    from tqdm import tqdm

    # a live bar on a terminal; nothing in logs and CI (disable=None turns it off without a TTY)
    return tqdm(
        total=total, desc=desc, unit="item", leave=False, dynamic_ncols=True, disable=None, mininterval=0.5
    )


async def ingest(app: App, name: str, docs: list[Doc], scope: str) -> Corpus:
    """Remember every doc in its own scope, in batches, exactly as an agent would."""
    activation = await app.services.activation.activate(
        ActivateRequest(task=f"Load the {name} corpus", initial_goal="Store every turn", scope=scope),
        BENCH_CLIENT,
    )
    refs_of: dict[str, set[str]] = defaultdict(set)
    bar = progress(len(docs), f"ingest {name}")
    for start in range(0, len(docs), BATCH):
        chunk = docs[start : start + BATCH]
        items = [
            {
                "content": d.text[:8000],
                "type": "fact",
                **({"occurred_at": d.occurred_at} if d.occurred_at else {}),
            }
            for d in chunk
        ]
        result = await app.services.remember.remember(
            RememberRequest.model_validate(
                {"scope": scope, "session_id": activation.session_id, "memories": items}
            ),
            BENCH_CLIENT,
        )
        assert isinstance(result, RememberBatchResult)
        for doc, item in zip(chunk, result.results, strict=True):
            if item.data is None:
                raise RuntimeError(f"ingesting {doc.ref} failed: {item.error}")
            refs_of[item.data.memory_id].add(doc.ref)
        bar.update(len(chunk))
    bar.close()
    return Corpus(scope, dict(refs_of))


def retriever_for(app: App, policy: RankingPolicy | None = None) -> Retriever:
    """The retrieval code recall runs, with another policy when one is given (ablations)."""
    served = app.services.recall.retriever
    if policy is None or policy == served.policy:
        return served
    return Retriever(app.repo, app.embedder, policy, served.clock, served.consolidate)


async def ranked_items(
    app: App, scope: str, question: str, retriever: Retriever | None = None
) -> list[tuple[str, str]]:
    """(memory id, pathway) of the frozen catalog a recall with this question would page through,
    in order: the direct hits, then the associated ones."""
    retriever = retriever or app.services.recall.retriever
    catalog = await retriever.build(scope, await retriever.embed_cues([question]), "", page_size=10)
    return [(c.id, c.pathway) for c in catalog.memories]


async def ranked_ids(app: App, scope: str, question: str, retriever: Retriever | None = None) -> list[str]:
    """The frozen catalog a recall with this question would page through, in order."""
    return [memory_id for memory_id, _ in await ranked_items(app, scope, question, retriever)]


def scored(corpora: dict[str, Corpus], queries: list[Query], lists: list[list[str]]) -> dict[str, Any]:
    """Recall by category (both golds) of one ranked list of memory ids per question."""
    results, alt_results = [], []
    for q, ids in zip(queries, lists, strict=True):
        corpus = corpora[q.corpus]
        items = [frozenset(corpus.refs_of.get(i, set())) for i in ids]
        results.append(Ranked(items, frozenset(q.gold), q.category))
        alt_results.append(Ranked(items, frozenset(q.alt_gold or q.gold), q.category))
    return {
        "overall": summarize(results),
        "overall_errata_gold": summarize(alt_results),
        "by_category": by_category(results),
    }


async def measure(
    app: App, corpora: dict[str, Corpus], queries: list[Query], retriever: Retriever, probes: bool
) -> tuple[dict[str, Any], list[list[str]]]:
    """One policy over ingested corpora: recall by category (both golds), the off-topic probes,
    latency; and the ranked list of each question."""
    lists, latencies = [], []
    bar = progress(len(queries), f"queries ({retriever.policy.version})")
    for q in queries:
        corpus = corpora[q.corpus]
        t0 = time.perf_counter()
        lists.append(await ranked_ids(app, corpus.scope, q.text, retriever))
        latencies.append((time.perf_counter() - t0) * 1000)
        bar.update(1)
    bar.close()

    probe_report: dict[str, Any] = {}
    if probes:
        empty, total = 0, 0
        for corpus in corpora.values():
            for probe in offtopic_probes():
                total += 1
                empty += not await ranked_ids(app, corpus.scope, probe, retriever)
        probe_report = {
            "probes": total,
            "empty": empty,
            "empty_share": round(empty / total, 4) if total else None,
        }
    report = {
        "policy": retriever.policy.version,
        **scored(corpora, queries, lists),
        "offtopic": probe_report,
        "latency_ms": percentiles(latencies),
    }
    return report, lists


class AgentSessions:
    """Questions asked the way an agent asks them: through the recall tool's service, in one open
    session per corpus, activated as a task is."""

    def __init__(self, app: App, retriever: Retriever | None = None) -> None:
        self.app = app
        recall = app.services.recall
        if retriever is not None and retriever is not recall.retriever:  # an ablation's policy
            recall = RecallService(retriever)
        self.recall = recall
        self.activations: dict[str, ActivateResult] = {}

    async def session(self, corpus: Corpus) -> str:
        if corpus.scope not in self.activations:
            request = ActivateRequest(
                task="Answer questions about the conversation",
                initial_goal="Answer correctly",
                scope=corpus.scope,
            )
            self.activations[corpus.scope] = await self.app.services.activation.activate(
                request, BENCH_CLIENT
            )
        return self.activations[corpus.scope].session_id

    async def ask(self, corpus: Corpus, question: str, page_size: int = 10) -> RecallResult:
        session = await self.session(corpus)
        request = RecallRequest(session_id=session, scope=corpus.scope, query=question, page_size=page_size)
        return await self.recall.recall(request, BENCH_CLIENT)

    async def read_on(self, corpus: Corpus, cursor: str) -> RecallResult:
        session = await self.session(corpus)
        request = RecallRequest(session_id=session, scope=corpus.scope, continue_from=cursor)
        return await self.recall.recall(request, BENCH_CLIENT)

    async def assess(self, retrieval_id: str, memory_feedback: list[dict[str, Any]]) -> None:
        """Feedback on a retrieval, coverage complete (procedures shown: not used)."""
        request = {"retrieval_id": retrieval_id, "memory_feedback": memory_feedback, "coverage": "complete"}
        await self.app.services.feedback.feedback(FeedbackRequest.model_validate(request), BENCH_CLIENT)

    async def assess_neutrally(self, shown: ActivateResult | RecallResult) -> None:
        """Everything a retrieval showed marked not_used, coverage complete: what an honest agent
        reports for what did not influence its work."""
        request = complete_feedback(shown.model_dump(mode="json"), "not_used")
        await self.app.services.feedback.feedback(FeedbackRequest.model_validate(request), BENCH_CLIENT)


async def measure_neutral(
    app: App, corpora: dict[str, Corpus], queries: list[Query], retriever: Retriever, plain: list[list[str]]
) -> dict[str, Any]:
    """The questions again, asked as an honest agent asks them: each through recall in a session,
    and every retrieval closed with neutral feedback (not_used, coverage complete) before the next
    question. Neutral feedback has no influence, so every catalog must equal ``plain``'s (the same
    questions with no feedback at all); ``changed`` counts those that do not."""
    agent = AgentSessions(app, retriever)
    lists: list[list[str]] = []
    bar = progress(len(queries), "queries (neutral feedback)")
    for q in queries:
        corpus = corpora[q.corpus]
        if corpus.scope not in agent.activations:
            await agent.session(corpus)
            await agent.assess_neutrally(agent.activations[corpus.scope])
        shown = await agent.ask(corpus, q.text)
        [frozen] = await app.db.run_read("bench_frozen_catalog", retrieval_id=shown.retrieval_id)
        lists.append(list(frozen["ids"]))
        await agent.assess_neutrally(shown)
        bar.update(1)
    bar.close()
    return {
        "policy": retriever.policy.version,
        **scored(corpora, queries, lists),
        "changed_catalogs": sum(a != b for a, b in zip(lists, plain, strict=True)),
        "changed_top10": sum(a[:10] != b[:10] for a, b in zip(lists, plain, strict=True)),
    }


async def run(
    app: App,
    dataset: Dataset,
    limit: int | None = None,
    probes: bool = True,
    policies: list[RankingPolicy] | None = None,
    neutral_feedback: bool = False,
    compound: bool = False,
) -> dict[str, Any]:
    """Ingest once, then measure each policy (default: the server's) on the same memories. The
    result's top-level figures are the last policy's; ``ablation`` has every policy's. With
    ``neutral_feedback`` the last policy's questions are asked once more as an honest agent asks
    them (``measure_neutral``), after every plain run: its feedback stays in the scopes."""
    run_id = secrets.token_hex(3)
    corpora: dict[str, Corpus] = {}
    started = time.perf_counter()
    for name, docs in dataset.corpora.items():
        corpora[name] = await ingest(app, name, docs, f"bench-{dataset.name}:{run_id}-{name}")
    ingest_seconds = time.perf_counter() - started
    doc_count = sum(len(d) for d in dataset.corpora.values())

    queries = dataset.queries[:limit] if limit else dataset.queries
    measured = [
        await measure(app, corpora, queries, retriever_for(app, policy), probes)
        for policy in (policies or [app.services.recall.policy])
    ]
    runs = [report for report, _ in measured]
    last = retriever_for(app, (policies or [app.services.recall.policy])[-1])
    shapes = None
    if compound:  # requests shaped like an agent's, from the same questions (bench/compound.py)
        shapes = await bench_compound.measure(corpora, queries, measured[-1][1], last)
    neutral = None
    if neutral_feedback:
        neutral = await measure_neutral(app, corpora, queries, last, measured[-1][1])
    return {
        "dataset": dataset.name,
        "run_id": run_id,
        "embedding_model": app.embedder.model_name,
        "neo4j": app.db.server.version if app.db.server else None,
        "corpora": {
            name: {"docs": len(docs), "memories": len(corpora[name].refs_of)}
            for name, docs in dataset.corpora.items()
        },
        "ingest": {
            "docs": doc_count,
            "seconds": round(ingest_seconds, 2),
            "docs_per_second": round(doc_count / ingest_seconds, 1) if ingest_seconds else None,
        },
        **runs[-1],
        "ablation": runs if len(runs) > 1 else [],
        **({"neutral_feedback": neutral} if neutral else {}),
        **({"compound": shapes} if shapes else {}),
        "scopes": [c.scope for c in corpora.values()],
    }
