"""Benchmark output: JSON (everything), a Markdown table, and a PNG plot of recall@k."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from slowave_graph_lab.bench import compound

METRICS = (
    "recall@1", "recall@5", "recall@10", "recall@20", "recall@all", "any_hit@5", "ndcg@10", "mrr",
    "mean_returned",
)  # fmt: skip


def markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# Retrieval benchmark: {result['dataset']}",
        "",
        f"policy `{result['policy']}`, embedding `{result['embedding_model']}`, Neo4j {result['neo4j']}, "
        f"{result['overall']['questions']} questions, ingest {result['ingest']['docs']} docs in "
        f"{result['ingest']['seconds']} s",
        "",
        "| slice | questions | " + " | ".join(METRICS) + " |",
        "|---|---:|" + "---:|" * len(METRICS),
    ]

    def row(name: str, stats: dict[str, Any]) -> str:
        return (
            f"| {name} | {stats['questions']} | "
            + " | ".join(f"{stats.get(m, 0):.3f}" for m in METRICS)
            + " |"
        )

    lines.append(row("**all**", result["overall"]))
    lines.append(row("all (errata gold)", result["overall_errata_gold"]))
    for category, stats in result["by_category"].items():
        lines.append(row(f"category {category}", stats))
    probes = result.get("offtopic") or {}
    if probes:
        lines += [
            "",
            f"Off-topic probes returning an empty list: {probes['empty']}/{probes['probes']} "
            f"({probes['empty_share']:.1%})",
        ]
    latency = result.get("latency_ms") or {}
    if latency:
        lines += [
            "",
            f"Retrieval latency (ms, embedding included): p50 {latency['p50']}, p95 {latency['p95']}, "
            f"p99 {latency['p99']}",
        ]
    if result.get("ablation"):
        lines += ["", *ablation_markdown(result["ablation"])]
    if result.get("neutral_feedback"):
        lines += ["", *neutral_markdown(result, result["neutral_feedback"])]
    if result.get("compound"):
        lines += ["", *compound.markdown(result["compound"])]
    return "\n".join(lines) + "\n"


def neutral_markdown(result: dict[str, Any], neutral: dict[str, Any]) -> list[str]:
    """The plain run beside the same questions asked with every retrieval closed by not_used."""
    questions = neutral["overall"]["questions"]
    lines = [
        "Neutral feedback (each question through recall, every retrieval closed with not_used before "
        "the next; it must change nothing):",
        "",
        "| run | R@5 | R@10 | nDCG@10 | R@10 errata | catalogs changed | top 10 changed |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, run, changed in (
        ("no feedback", result, ("–", "–")),
        ("neutral feedback", neutral, (neutral["changed_catalogs"], neutral["changed_top10"])),
    ):
        o, e = run["overall"], run["overall_errata_gold"]
        lines.append(
            f"| {name} | {o['recall@5']:.3f} | {o['recall@10']:.3f} | {o['ndcg@10']:.3f} | "
            f"{e['recall@10']:.3f} | {changed[0]} / {questions} | {changed[1]} / {questions} |"
        )
    return lines


def ablation_markdown(runs: list[dict[str, Any]]) -> list[str]:
    """One row per policy on the same memories: what each part of retrieval moved."""
    categories = sorted({c for run in runs for c in run["by_category"]})
    lines = [
        "Ablation (the same memories; recall@10 by category):",
        "",
        "| policy | R@5 | R@10 | nDCG@10 | R@5 errata | R@10 errata | "
        + " | ".join(f"cat {c}" for c in categories)
        + " | off-topic empty | p50 ms |",
        "|---|" + "---:|" * (7 + len(categories)),
    ]
    for run in runs:
        o, e = run["overall"], run["overall_errata_gold"]
        cats = " | ".join(f"{run['by_category'].get(c, {}).get('recall@10', 0):.3f}" for c in categories)
        probes = run.get("offtopic") or {}
        share = f"{probes['empty_share']:.1%}" if probes else "–"
        lines.append(
            f"| `{run['policy']}` | {o['recall@5']:.3f} | {o['recall@10']:.3f} | {o['ndcg@10']:.3f} | "
            f"{e['recall@5']:.3f} | {e['recall@10']:.3f} | {cats} | {share} | "
            f"{(run.get('latency_ms') or {}).get('p50', '–')} |"
        )
    return lines


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = [1, 5, 10, 20]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    ax.plot(ks, [result["overall"][f"recall@{k}"] for k in ks], marker="o", linewidth=2.5, label="all")
    for category, stats in result["by_category"].items():
        ax.plot(
            ks, [stats[f"recall@{k}"] for k in ks], marker=".", linestyle="--", label=f"category {category}"
        )
    ax.set_xticks(ks)
    ax.set_ylim(0, 1)
    ax.set_xlabel("k")
    ax.set_ylabel("turn-level recall@k")
    ax.set_title(f"{result['dataset']} — {result['policy']} / {result['embedding_model']}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write(result: dict[str, Any], out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    stem = f"retrieval-{result['dataset']}"
    paths = {"json": out / f"{stem}.json", "markdown": out / f"{stem}.md", "plot": out / f"{stem}.png"}
    paths["json"].write_text(json.dumps(result, indent=2) + "\n")
    paths["markdown"].write_text(markdown(result))
    plot(result, paths["plot"])
    return paths
