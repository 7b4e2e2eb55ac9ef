"""`slowave-graph bench retrieval --compound`: requests shaped the way agents send them.

Built by fixed rules from the dataset's own questions, two or three consecutive questions of one
conversation at a time, the same rules for every question:

- ``and``: one sentence, "<first> and <second>?";
- ``and also``: "<first>, and also <second>?";
- ``task``: a task description that embeds three questions;
- ``list``: a bulleted list of three questions under a heading;
- ``task_context``: a short task with the two questions as ``task_context`` values.

Each request runs through the code activate and recall run (needs, admission per need, folding,
the order by need). Gold is the union of its questions' gold. Reported per shape: each part's
recall within the first 10 × (number of parts) memories of the compound answer, beside its
recall@10 asked alone (the target is ≥ 0.95 of it); how often a request whose parts each get an
answer alone comes back empty (target 0); the mean catalog size.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from slowave_graph.services.retrieval import Retriever, context_cue
from slowave_graph_lab.bench.datasets import Query
from slowave_graph_lab.bench.metrics import Ranked, recall_at

if TYPE_CHECKING:
    from slowave_graph_lab.bench.retrieval import Corpus

TASK = "I am writing up what we know for the user."
LIST_HEADING = "Before the next session, look up:"
CONTEXT_TASK = "Answer the user's open questions."
# words that open a question and go in lower case inside a sentence (names keep their capital)
_LOWER_FIRST = frozenset(
    """
    what when where who whom whose which why how did does do is are was were has have had can could
    would will should
    """.split()  # noqa: SIM905 — a word list reads better as text
)


@dataclass(frozen=True)
class Request:
    shape: str
    texts: list[str]
    context: dict[str, Any] | None
    parts: list[int]  # indices of the questions it asks


def _bare(question: str) -> str:
    return question.strip().rstrip("?.! ")


def _inner(question: str) -> str:
    """A question as the second half of a sentence: a leading question word in lower case."""
    bare = _bare(question)
    first, _, rest = bare.partition(" ")
    return f"{first.lower()} {rest}".strip() if first.lower() in _LOWER_FIRST else bare


def _asked(question: str) -> str:
    return _bare(question) + "?"


SHAPES: dict[str, tuple[int, Callable[[list[str]], tuple[list[str], dict[str, Any] | None]]]] = {
    "and": (2, lambda q: ([f"{_bare(q[0])} and {_inner(q[1])}?"], None)),
    "and also": (2, lambda q: ([f"{_bare(q[0])}, and also {_inner(q[1])}?"], None)),
    "task": (3, lambda q: ([f"{TASK} {' '.join(_asked(x) for x in q)}"], None)),
    "list": (3, lambda q: ([LIST_HEADING + "".join(f"\n- {_asked(x)}" for x in q)], None)),
    "task_context": (2, lambda q: ([CONTEXT_TASK], {"questions": [_asked(x) for x in q]})),
}


def requests(queries: Sequence[Query]) -> list[Request]:
    """Every shape over consecutive questions of one conversation (groups never cross corpora)."""
    out = []
    by_corpus: dict[str, list[int]] = {}
    for i, q in enumerate(queries):
        by_corpus.setdefault(q.corpus, []).append(i)
    for shape, (size, build) in SHAPES.items():
        for indices in by_corpus.values():
            for start in range(0, len(indices) - size + 1, size):
                group = indices[start : start + size]
                texts, context = build([queries[i].text for i in group])
                out.append(Request(shape, texts, context, group))
    return out


async def measure(
    corpora: dict[str, Corpus],
    queries: Sequence[Query],
    alone: Sequence[Sequence[str]],
    retriever: Retriever,
) -> dict[str, Any]:
    """The shapes' figures. ``alone``: each question's ranked catalog asked alone (same policy)."""

    def ranked(corpus: str, ids: Sequence[str], gold: set[str]) -> Ranked:
        return Ranked([frozenset(corpora[corpus].refs_of.get(i, set())) for i in ids], frozenset(gold), "")

    rows: dict[str, dict[str, list[float]]] = {}
    for request in requests(queries):
        corpus = queries[request.parts[0]].corpus
        cues = await retriever.embed_cues(request.texts, request.context)
        catalog = await retriever.build(
            corpora[corpus].scope, cues, context_cue(request.context), page_size=10
        )
        ids = [c.id for c in catalog.memories]
        k = 10 * len(request.parts)
        row = rows.setdefault(
            request.shape, {"compound": [], "alone": [], "size": [], "empty": [], "needs": []}
        )
        for i in request.parts:
            row["compound"].append(recall_at(ranked(corpus, ids, queries[i].gold), k))
            row["alone"].append(recall_at(ranked(corpus, alone[i], queries[i].gold), 10))
        answered_alone = all(alone[i] for i in request.parts)
        row["empty"].append(1.0 if answered_alone and not ids else 0.0)
        row["size"].append(float(len(ids)))
        row["needs"].append(float(len(cues.texts)))
    return {shape: _summary(row) for shape, row in rows.items()}


def _summary(row: dict[str, list[float]]) -> dict[str, Any]:
    compound, alone = statistics.fmean(row["compound"]), statistics.fmean(row["alone"])
    return {
        "requests": len(row["size"]),
        "parts": len(row["compound"]),
        "recall_compound": round(compound, 4),
        "recall_alone_at10": round(alone, 4),
        "ratio": round(compound / alone, 4) if alone else None,
        "empty_when_parts_answered": int(sum(row["empty"])),
        "mean_catalog": round(statistics.fmean(row["size"]), 1),
        "mean_needs": round(statistics.fmean(row["needs"]), 2),
    }


def markdown(figures: dict[str, Any]) -> list[str]:
    lines = [
        "Compound requests (each part's recall within the first 10 × parts of the compound answer, "
        "beside its recall@10 asked alone; target ratio ≥ 0.95, empty answers 0):",
        "",
        "| shape | requests | parts | recall in compound | recall@10 alone | ratio | empty though answered "
        "alone | mean catalog | mean needs |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for shape, f in figures.items():
        ratio = f"{f['ratio']:.3f}" if f["ratio"] is not None else "–"
        lines.append(
            f"| {shape} | {f['requests']} | {f['parts']} | {f['recall_compound']:.3f} | "
            f"{f['recall_alone_at10']:.3f} | {ratio} | {f['empty_when_parts_answered']} | "
            f"{f['mean_catalog']} | {f['mean_needs']} |"
        )
    return lines
