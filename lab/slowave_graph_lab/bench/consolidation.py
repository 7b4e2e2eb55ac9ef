"""`slowave-graph bench consolidation`: how well near-duplicates and updates are told apart from
claims that only look alike, on a labelled set of agent memories (bench/consolidation_pairs/, how
it was made: its README).

Each pair is an older and a newer claim with the relation a careful reader gives them: duplicate,
update, related (the same topic or template, another claim) or unrelated. The newer claim is judged
against the older exactly as remember judges a new claim against a memory of its scope
(services/consolidation.py), with the embedding model the server uses. Reported: precision and
recall of duplicate and of update (overall and per domain), the confusion matrix, and ablations
that take one part of the judgement away.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from dataclasses import dataclass
from importlib import resources
from typing import Any

import numpy as np

from slowave_graph.embedding.embedder import Embedder
from slowave_graph.services import consolidation
from slowave_graph.services.calibration import CosineScale, scale_for

GOLD_KINDS = ("duplicate", "update", "related", "unrelated")
PREDICTED = ("duplicate", "update", "none")
TARGETS = {"duplicate": (0.95, 0.80), "update": (0.80, 0.60)}  # (precision, recall)


@dataclass(frozen=True)
class Pair:
    domain: str
    kind: str
    older: str
    newer: str


def load_pairs() -> list[Pair]:
    """Every labelled pair shipped with the package, by domain (file name)."""
    folder = resources.files("slowave_graph_lab.bench") / "consolidation_pairs"
    pairs = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".jsonl"):
            continue
        domain = entry.name.removeprefix("pairs_").removesuffix(".jsonl")
        for line in entry.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                pairs.append(Pair(domain, row["kind"], row["older"], row["newer"]))
    return pairs


@dataclass(frozen=True)
class Variant:
    """The judgement with one part changed (an ablation)."""

    name: str
    judge: Any  # (new, old, z) -> kind | None


def _similarity_only(new: str, old: str, z: float) -> str | None:
    """Duplicates by similarity alone, no updates: what a plain similarity threshold gives."""
    return "duplicate" if z >= consolidation.DUPLICATE_Z else None


def _no_specifics(new: str, old: str, z: float) -> str | None:
    """Duplicates by similarity and polarity, updates by polarity only."""
    parsed_old, parsed_new = consolidation.parse(old), consolidation.parse(new)
    if z < consolidation.UPDATE_Z:
        return None
    if parsed_old.negated != parsed_new.negated:
        return "update"
    return "duplicate" if z >= consolidation.DUPLICATE_Z else None


VARIANTS = [
    Variant("full", lambda new, old, z: consolidation.relation(new, old, z)),
    Variant("similarity only", _similarity_only),
    Variant("no specifics", _no_specifics),
]


def scores(gold: list[str], predicted: list[str]) -> dict[str, Any]:
    """Precision and recall of duplicate and of update, and the confusion matrix."""
    out: dict[str, Any] = {}
    for kind in ("duplicate", "update"):
        tp = sum(g == kind and p == kind for g, p in zip(gold, predicted, strict=True))
        said = sum(p == kind for p in predicted)
        there = sum(g == kind for g in gold)
        out[kind] = {
            "precision": round(tp / said, 4) if said else None,
            "recall": round(tp / there, 4) if there else None,
            "predicted": said,
            "gold": there,
        }
    counts = Counter(zip(gold, predicted, strict=True))
    out["confusion"] = {g: {p: counts[(g, p)] for p in PREDICTED} for g in GOLD_KINDS}
    return out


async def run(embedder: Embedder, pairs: list[Pair] | None = None) -> dict[str, Any]:
    pairs = pairs if pairs is not None else load_pairs()
    texts = sorted({t for p in pairs for t in (p.older, p.newer)})
    vectors = dict(zip(texts, await embedder.aembed(texts), strict=True))
    scale = await scale_for(embedder)
    zs = [_z(scale, vectors[p.older], vectors[p.newer]) for p in pairs]
    gold = [p.kind for p in pairs]
    runs = []
    for variant in VARIANTS:
        predicted = [variant.judge(p.newer, p.older, z) or "none" for p, z in zip(pairs, zs, strict=True)]
        domains = sorted({p.domain for p in pairs})
        runs.append(
            {
                "variant": variant.name,
                **scores(gold, predicted),
                "by_domain": {
                    d: scores(
                        [g for g, p in zip(gold, pairs, strict=True) if p.domain == d],
                        [x for x, p in zip(predicted, pairs, strict=True) if p.domain == d],
                    )
                    for d in domains
                },
                "errors": [
                    {"domain": p.domain, "gold": g, "predicted": x, "z": round(z, 2), "older": p.older,
                     "newer": p.newer}
                    for p, g, x, z in zip(pairs, gold, predicted, zs, strict=True)
                    if g != x and not (g in ("related", "unrelated") and x == "none")
                ] if variant.name == "full" else [],
            }
        )  # fmt: skip
    return {
        "embedding_model": embedder.model_name,
        "pairs": len(pairs),
        "by_kind": dict(Counter(gold)),
        "thresholds": dataclasses.asdict(consolidation.DEFAULT),
        "targets": TARGETS,
        **runs[0],
        "ablation": runs[1:],
    }


def _z(scale: CosineScale, a: list[float], b: list[float]) -> float:
    x, y = np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)
    cosine = float(x @ y / max(float(np.linalg.norm(x) * np.linalg.norm(y)), 1e-12))
    return scale.statement_z(cosine)


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Consolidation benchmark: near-duplicates and updates",
        "",
        f"embedding `{result['embedding_model']}`, {result['pairs']} labelled pairs "
        f"({', '.join(f'{k} {v}' for k, v in sorted(result['by_kind'].items()))}); thresholds "
        f"duplicate ≥ {result['thresholds']['duplicate']}, update ≥ {result['thresholds']['update']} "
        "calibrated units",
        "",
        "| run | dup. precision | dup. recall | upd. precision | upd. recall |",
        "|---|---:|---:|---:|---:|",
    ]

    def row(name: str, r: dict[str, Any]) -> str:
        d, u = r["duplicate"], r["update"]
        return (
            f"| {name} | {_fmt(d['precision'])} | {_fmt(d['recall'])} | {_fmt(u['precision'])} | "
            f"{_fmt(u['recall'])} |"
        )

    lines.append(row("**all**", result))
    for domain, r in result["by_domain"].items():
        lines.append(row(domain, r))
    for r in result["ablation"]:
        lines.append(row(f"ablation: {r['variant']}", r))
    (dup_p, dup_r), (upd_p, upd_r) = TARGETS["duplicate"], TARGETS["update"]
    lines += [
        f"| target | ≥ {dup_p} | ≥ {dup_r} | ≥ {upd_p} | ≥ {upd_r} |",
        "",
        "Confusion (rows: the label, columns: the judgement):",
        "",
        "| label | " + " | ".join(PREDICTED) + " |",
        "|---|" + "---:|" * len(PREDICTED),
    ]
    for gold, row_counts in result["confusion"].items():
        lines.append(f"| {gold} | " + " | ".join(str(row_counts[p]) for p in PREDICTED) + " |")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"
