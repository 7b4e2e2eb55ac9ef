"""`slowave-graph bench learning`: does honest feedback make retrieval better, and does it leave
unrelated questions alone?

Half the questions (every other one per corpus) are asked through the recall tool path; an oracle
gives the feedback an honest agent would: exposed memories that hold gold evidence are ``used``
(helped), the others ``irrelevant``. Then every question is asked again and scored:
(a) the trained questions themselves, (b) held-out questions that share a gold turn with a trained
one (transfer), (c) held-out questions that share none (must not get worse).

The associated pathway (memories linked by co-use in that feedback) is measured on its own per
slice: recall of the direct list alone against direct plus associated, and the precision of the
associated items against that of direct items at the same ranks (``metrics.pathway_report``).
"""

from __future__ import annotations

from typing import Any

from slowave_graph.app import App
from slowave_graph.services.ranking import RankingPolicy
from slowave_graph.services.retrieval import Retriever
from slowave_graph_lab.bench.datasets import Dataset, Query
from slowave_graph_lab.bench.metrics import Ranked, by_category, pathway_report, summarize
from slowave_graph_lab.bench.retrieval import (
    AgentSessions,
    Corpus,
    ingest,
    progress,
    ranked_items,
    retriever_for,
)


async def _rank_all(
    app: App, corpora: dict[str, Corpus], queries: list[Query], desc: str, retriever: Retriever
) -> list[Ranked]:
    out = []
    bar = progress(len(queries), desc)
    for q in queries:
        corpus = corpora[q.corpus]
        found = await ranked_items(app, corpus.scope, q.text, retriever)
        out.append(
            Ranked(
                [frozenset(corpus.refs_of.get(i, set())) for i, _ in found],
                frozenset(q.gold),
                q.category,
                [pathway for _, pathway in found],
            )
        )
        bar.update(1)
    bar.close()
    return out


async def _train(
    app: App, corpora: dict[str, Corpus], queries: list[Query], pages: int, retriever: Retriever
) -> dict[str, int]:
    """Ask each training question through recall and give oracle feedback on what was shown.
    With ``pages`` > 1 the agent reads on (continue_from) while no shown memory holds evidence,
    as one that has not found its answer would, up to that many pages of 10."""
    agent = AgentSessions(app, retriever)
    counts = {"retrievals": 0, "pages": 0, "used": 0, "irrelevant": 0}
    bar = progress(len(queries), "feedback")
    for q in queries:
        corpus = corpora[q.corpus]
        shown = await agent.ask(corpus, q.text)
        seen = list(shown.memories)
        read, cursor = 1, shown.continue_from
        while (
            read < pages and cursor and not any(corpus.refs_of.get(m.memory_id, set()) & q.gold for m in seen)
        ):
            more = await agent.read_on(corpus, cursor)
            seen += more.memories
            read, cursor = read + 1, more.continue_from
        counts["pages"] += read
        entries: list[dict[str, Any]] = []
        for memory in seen:
            if corpus.refs_of.get(memory.memory_id, set()) & q.gold:
                entries.append({"memory_id": memory.memory_id, "assessment": "used", "effect": "helped"})
                counts["used"] += 1
            else:
                entries.append({"memory_id": memory.memory_id, "assessment": "irrelevant"})
                counts["irrelevant"] += 1
        await agent.assess(shown.retrieval_id, entries)
        counts["retrievals"] += 1
        bar.update(1)
    bar.close()
    return counts


def _slice(results: list[Ranked], picks: list[int]) -> dict[str, float]:
    return summarize([results[i] for i in picks])


async def run(
    app: App,
    dataset: Dataset,
    limit: int | None = None,
    pages: int = 1,
    policies: list[RankingPolicy] | None = None,
) -> dict[str, Any]:
    """One learning run per policy (each on memories of its own: feedback changes them); the
    top-level figures are the last policy's, ``ablation`` has every policy's."""
    chosen: list[RankingPolicy | None] = list(policies) if policies else [None]
    runs = [await run_one(app, dataset, limit, pages, policy) for policy in chosen]
    scopes = [scope for r in runs for scope in r["scopes"]]
    return {**runs[-1], "ablation": runs if len(runs) > 1 else [], "scopes": scopes}


async def run_one(
    app: App, dataset: Dataset, limit: int | None, pages: int, policy: RankingPolicy | None
) -> dict[str, Any]:
    import secrets

    retriever = retriever_for(app, policy)
    run_id = secrets.token_hex(3)
    corpora = {
        name: await ingest(app, name, docs, f"bench-learning-{dataset.name}:{run_id}-{name}")
        for name, docs in dataset.corpora.items()
    }
    queries = dataset.queries[:limit] if limit else dataset.queries
    train, shared, unrelated = _split_questions(queries)

    before = await _rank_all(app, corpora, queries, "before", retriever)
    counts = await _train(app, corpora, [queries[i] for i in train], pages, retriever)
    after = await _rank_all(app, corpora, queries, "after", retriever)

    slices = {"a_same_questions": train, "b_shared_evidence": shared, "c_unrelated": unrelated}
    report: dict[str, Any] = {
        "dataset": dataset.name,
        "policy": retriever.policy.version,
        "embedding_model": app.embedder.model_name,
        "feedback": counts,
        "max_pages": pages,
        "slices": {},
        "scopes": [c.scope for c in corpora.values()],
    }
    for name, picks in slices.items():
        report["slices"][name] = _slice_report(before, after, picks)
    return report


def _split_questions(queries: list[Query]) -> tuple[list[int], list[int], list[int]]:
    """Indexes of the training questions (every other one per corpus), and of the held-out ones
    that share a gold turn with a training question of their corpus, and that share none."""
    per_corpus_index: dict[str, int] = {}
    train: list[int] = []
    held: list[int] = []
    for i, q in enumerate(queries):
        n = per_corpus_index.get(q.corpus, 0)
        per_corpus_index[q.corpus] = n + 1
        (train if n % 2 == 0 else held).append(i)
    trained_gold: dict[str, set[str]] = {}
    for i in train:
        trained_gold.setdefault(queries[i].corpus, set()).update(queries[i].gold)
    shared = [i for i in held if queries[i].gold & trained_gold.get(queries[i].corpus, set())]
    unrelated = [i for i in held if i not in set(shared)]
    return train, shared, unrelated


def _slice_report(before: list[Ranked], after: list[Ranked], picks: list[int]) -> dict[str, Any]:
    """One slice's figures before and after the feedback, overall and by category."""
    b, a = _slice(before, picks), _slice(after, picks)
    return {
        "questions": len(picks),
        "before": b,
        "after": a,
        "delta": {k: round(a[k] - b[k], 4) for k in ("recall@5", "recall@10", "ndcg@10", "mrr") if k in b},
        "pathways_after": pathway_report([after[i] for i in picks]),
        "by_category": {
            category: {
                "questions": after_c["questions"],
                "recall@5": [before_c.get("recall@5"), after_c.get("recall@5")],
                "recall@10": [before_c.get("recall@10"), after_c.get("recall@10")],
            }
            for (category, before_c), after_c in zip(
                by_category([before[i] for i in picks]).items(),
                by_category([after[i] for i in picks]).values(),
                strict=True,
            )
        },
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        f"# Learning benchmark: {report['dataset']}",
        "",
        f"policy `{report['policy']}`, embedding `{report['embedding_model']}`; oracle feedback on "
        f"{report['feedback']['retrievals']} retrievals ({report['feedback']['used']} used, "
        f"{report['feedback']['irrelevant']} irrelevant); the agent read up to "
        f"{report.get('max_pages', 1)} page(s) of 10 while it had not found the evidence "
        f"({report['feedback'].get('pages', report['feedback']['retrievals'])} pages read)",
        "",
        *_slices_table(report),
        "",
        *_pathways_table(report),
        *_categories_table(report),
        *_ablation_table(report),
    ]
    return "\n".join(lines) + "\n"


def _slices_table(report: dict[str, Any]) -> list[str]:
    """Recall and nDCG of each slice before and after the feedback."""
    lines = [
        "| slice | questions | R@5 before | R@5 after | Δ R@5 | R@10 before | R@10 after | Δ R@10 "
        "| Δ nDCG@10 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in report["slices"].items():
        b, a, d = s["before"], s["after"], s["delta"]
        if not s["questions"]:
            continue
        r5 = f"{b['recall@5']:.3f} | {a['recall@5']:.3f} | {d['recall@5']:+.3f}"
        r10 = f"{b['recall@10']:.3f} | {a['recall@10']:.3f} | {d['recall@10']:+.3f}"
        lines.append(f"| {name} | {s['questions']} | {r5} | {r10} | {d['ndcg@10']:+.3f} |")
    return lines


def _pathways_table(report: dict[str, Any]) -> list[str]:
    """What the associated pathway adds to the direct list of each slice after the feedback."""
    lines = [
        "Associated pathway after feedback: recall of the direct list alone vs direct + associated; "
        "precision (share holding gold evidence, first 20 positions) of associated items vs direct "
        "items at the same ranks.",
        "",
        "| slice | with assoc. | R@5 direct | R@5 +assoc | R@10 direct | R@10 +assoc | R@20 direct "
        "| R@20 +assoc | R@all direct | R@all +assoc | assoc. items (≤20 / all) | mean assoc. rank "
        "| assoc. precision ≤20 / all | direct precision, same ranks | direct precision |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in report["slices"].items():
        p = s.get("pathways_after")
        if not s["questions"] or not p:
            continue
        recalls = " | ".join(
            f"{p[f'recall@{k}_direct']:.3f} | {p[f'recall@{k}_with_associated']:.3f}"
            for k in (5, 10, 20, "all")
        )
        lines.append(
            f"| {name} | {p['questions_with_associated']}/{p['questions']} | {recalls} "
            f"| {p['associated_items']} / {p['associated_items_all']} | {p['associated_mean_rank']:.1f} "
            f"| {p['associated_precision']:.3f} / {p['associated_precision_all']:.3f} "
            f"| {p['direct_precision_same_positions']:.3f} | {p['direct_precision']:.3f} |"
        )
    return lines


def _categories_table(report: dict[str, Any]) -> list[str]:
    """Recall@5 before and after by LoCoMo category (nothing when no slice has categories)."""
    categories = sorted({c for s in report["slices"].values() for c in s.get("by_category", {})})
    if not categories:
        return []
    lines = [
        "",
        "Recall@5 before → after, by LoCoMo category:",
        "",
        "| slice | " + " | ".join(f"cat {c}" for c in categories) + " |",
        "|---|" + "---:|" * len(categories),
    ]
    for name, s in report["slices"].items():
        cells = []
        for c in categories:
            got = s.get("by_category", {}).get(c)
            cells.append(f"{got['recall@5'][0]:.3f} → {got['recall@5'][1]:.3f}" if got else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _ablation_table(report: dict[str, Any]) -> list[str]:
    """Each policy's changes per slice (nothing when only one policy ran)."""
    if not report.get("ablation"):
        return []
    lines = [
        "",
        "Ablation (each policy on memories of its own), Δ recall@5 / Δ recall@10 per slice:",
        "",
        "| policy | " + " | ".join(report["slices"]) + " |",
        "|---|" + "---:|" * len(report["slices"]),
    ]
    for run in report["ablation"]:
        cells = [
            f"{s['delta'].get('recall@5', 0):+.3f} / {s['delta'].get('recall@10', 0):+.3f}"
            for s in run["slices"].values()
        ]
        lines.append(f"| `{run['policy']}` | " + " | ".join(cells) + " |")
    return lines
