"""Report of `bench load`: JSON, a Markdown table, and a PNG of latency against database size."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SHORT = {
    "slowave_activate": "activate",
    "slowave_remember": "remember",
    "slowave_recall": "recall",
    "slowave_feedback": "feedback",
    "slowave_commit": "commit",
}


def phases(result: dict[str, Any]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(size, phase) of every measured phase, in the order they ran."""
    for entry in result["sizes"]:
        for phase in entry["phases"]:
            yield entry["size"], phase


def full_collections(phase: dict[str, Any]) -> str:
    """The server's gen-2 collections during a phase: how many, and the longest pause."""
    gen2 = ((phase.get("gc") or {}).get("generations") or {}).get("2")
    if gen2 is None:
        return "0" if phase.get("gc") else "–"
    return f"{gen2['collections']}, {gen2['max_ms']:.1f} ms"


def count(value: int | None) -> str:
    return "–" if value is None else f"{value:,}"


def warm_up(warmup: dict[str, Any] | None) -> str:
    """``600 (119.0 → 28.1)``, marked when the cap stopped it before CPU per call settled."""
    if not warmup or not warmup["cpu_ms_per_call"]:
        return "–"
    costs = warmup["cpu_ms_per_call"]
    mark = "" if warmup["steady"] else ", not settled"
    return f"{warmup['lifecycles']} ({costs[0]:.1f} → {costs[-1]:.1f}{mark})"


def sequential(seq: dict[str, Any]) -> str:
    """``71.3 (the last 10 of 20 rounds of 200; rounds 35.4–86.5/s)``: the rate the figure is, and
    the spread of every round's."""
    rates = seq.get("rounds_per_second") or []
    if len(rates) < 2:
        return f"{seq['per_second']}"
    return (
        f"{seq['per_second']} (the last {seq['measured_rounds']} of {len(rates)} rounds of "
        f"{seq['count']}; rounds {min(rates)}–{max(rates)}/s)"
    )


def cpu_per_call(phase: dict[str, Any]) -> str:
    """``server / Neo4j / load generator`` ms of CPU per call; – where a process was not visible
    (a remote Neo4j) or the phase predates the measurement."""
    ms = (phase.get("cpu") or {}).get("ms_per_call") or {}
    return " / ".join(
        "–" if ms.get(name) is None else f"{ms[name]:.1f}" for name in ("server", "neo4j", "load_generator")
    )


def statement_times(statements: dict[str, dict[str, float]]) -> str:
    """``name 6.1`` per statement, ``name 2.0 (40 %)`` for one that only some calls ran."""
    out = []
    for name, stat in statements.items():
        share = stat["share_of_calls"]
        out.append(f"`{name}` {stat['mean_ms']:.1f}" + (f" ({share:.0%})" if share < 0.995 else ""))
    return " · ".join(out)


# Issue 5's targets: a 2-core machine, over MCP streamable HTTP, the query embedding included.
REFERENCE_SIZE = 100_000  # where the latency and remember targets apply
LARGE_SIZE = 1_000_000  # measured and reported, no limit
SEARCH_TOOLS = ("slowave_activate", "slowave_recall")
LATENCY_LIMITS = (("p50", 1, 15.0), ("p95", 1, 40.0), ("p95", 8, 150.0))  # (quantile, clients, ms)
SEQUENTIAL_REMEMBER_MIN = 100.0  # memories/s
BULK_IMPORT_MIN = 1_000.0  # memories/s
GROWTH_MAX = 2.0  # latency from the smallest size to REFERENCE_SIZE

# The floor's parts (``load.floor``, p50 each) that a call holds at least once, one after another:
# activate and recall embed the question, search, then write their retrieval; remember embeds the
# memory, then writes it (a new memory's commit costs more than the bare write: index entries).
FLOOR_PARTS = {
    "search": (
        ("round trip", "round_trip_ms"), ("query embedding", "embedding_ms"),
        ("vector query", "vector_query_ms"), ("write", "write_ms"),
    ),
    "remember": (
        ("round trip", "round_trip_ms"), ("memory embedding", "memory_embedding_ms"), ("write", "write_ms"),
    ),
}  # fmt: skip


def chain_floor(floor: dict[str, Any] | None, kind: str) -> tuple[float, str] | None:
    """The sum of a call kind's floor parts and how it is made up (``round trip 1.2 + …``); None
    when the run did not measure every part."""
    measured = floor or {}
    if any(key not in measured for _, key in FLOOR_PARTS[kind]):
        return None
    parts = [(label, float(measured[key]["p50"])) for label, key in FLOOR_PARTS[kind]]
    return sum(p50 for _, p50 in parts), " + ".join(f"{label} {p50:.1f}" for label, p50 in parts)


def _latency(result: dict[str, Any], size: int, clients: int, tool: str, quantile: str) -> float | None:
    for entry in result["sizes"]:
        if entry["size"] == size:
            for phase in entry["phases"]:
                if phase["clients"] == clients and tool in phase["tools_ms"]:
                    return float(phase["tools_ms"][tool][quantile])
    return None


def _row(
    target: str,
    limit: str,
    measured: float | None,
    met: bool | None,
    note: str = "",
    floor: float | None = None,
) -> dict[str, Any]:
    """A target's verdict; ``floor``: the best this machine allows by the run's floor (ms for a
    latency, a rate for a throughput), where a target has one."""
    return {"target": target, "limit": limit, "measured": measured, "met": met, "note": note, "floor": floor}


def targets(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Each of issue 5's targets against this run: the figure it is judged on and whether it was
    met (None: this run did not measure it, e.g. no 100k size)."""
    rows = []
    sizes = {entry["size"]: entry for entry in result["sizes"]}
    reference = sizes.get(REFERENCE_SIZE)
    search = chain_floor(reference.get("floor") if reference else None, "search")
    for quantile, clients, limit in LATENCY_LIMITS:
        for tool in SEARCH_TOOLS:
            value = _latency(result, REFERENCE_SIZE, clients, tool, quantile)
            # one client's call holds every part of the floor in turn; eight clients' queue for the cores
            bound = search if clients == 1 and value is not None else None
            rows.append(_row(
                f"{SHORT[tool]} {quantile}, {clients} client{'s' if clients > 1 else ''}, "
                f"{REFERENCE_SIZE:,} memories", f"≤ {limit:g} ms", value,
                None if value is None else value <= limit,
                f"floor ≥ {bound[0]:.1f} ms: {bound[1]}" if bound else "",
                floor=round(bound[0], 1) if bound else None,
            ))  # fmt: skip
    seq = reference["sequential_remember"]["per_second"] if reference else None
    remember = chain_floor(reference.get("floor") if reference else None, "remember")
    ceiling = 1000 / remember[0] if remember and seq is not None else None
    rows.append(_row(
        f"sequential remember, {REFERENCE_SIZE:,} memories", f"≥ {SEQUENTIAL_REMEMBER_MIN:g}/s", seq,
        None if seq is None else seq >= SEQUENTIAL_REMEMBER_MIN,
        f"at most {ceiling:.0f}/s: 1000 / ({remember[1]} ms)" if remember and ceiling else "",
        floor=round(ceiling, 1) if ceiling else None,
    ))  # fmt: skip
    fills = [entry["fill"] for entry in result["sizes"] if entry["fill"]["added"]]
    if fills:
        fill = max(fills, key=lambda f: f["added"])
        written = fill.get("written_per_second")
        note = f"the fill of {fill['added']:,} ({fill['vectors']} vectors)" + (
            f"; its write transactions alone {written:,.0f}/s" if written else ""
        )
        rows.append(_row(
            "bulk import", f"≥ {BULK_IMPORT_MIN:,.0f}/s", fill["per_second"],
            fill["per_second"] >= BULK_IMPORT_MIN, note,
        ))  # fmt: skip
    else:
        rows.append(_row("bulk import", f"≥ {BULK_IMPORT_MIN:,.0f}/s", None, None, "no fill in this run"))
    rows.append(_growth(result, min(sizes, default=REFERENCE_SIZE)))
    large = _latency(result, LARGE_SIZE, 1, "slowave_activate", "p50")
    measured = large is not None
    rows.append(_row(
        f"{LARGE_SIZE:,} memories measured", "measured and reported", large, True if measured else None,
        "activate p50, 1 client" if measured else "run with --size 1000000",
    ))  # fmt: skip
    return rows


def _growth(result: dict[str, Any], smallest: int) -> dict[str, Any]:
    """The worst ratio of a 1-client p50 or p95 of activate or recall at REFERENCE_SIZE to the
    same at the smallest size measured."""
    ratios = []
    for tool in SEARCH_TOOLS:
        for quantile in ("p50", "p95"):
            low = _latency(result, smallest, 1, tool, quantile)
            high = _latency(result, REFERENCE_SIZE, 1, tool, quantile)
            if smallest < REFERENCE_SIZE and low and high is not None:
                ratios.append((high / low, f"{SHORT[tool]} {quantile}"))
    span = f"{smallest:,} → {REFERENCE_SIZE:,}" if smallest < REFERENCE_SIZE else f"up to {REFERENCE_SIZE:,}"
    target = f"latency growth {span} memories, 1 client"
    if not ratios:
        return _row(
            target, f"≤ {GROWTH_MAX:g}×", None, None, f"needs a size below and one at {REFERENCE_SIZE:,}"
        )
    ratio, worst = max(ratios)
    return _row(target, f"≤ {GROWTH_MAX:g}×", round(ratio, 2), ratio <= GROWTH_MAX, f"largest: {worst}")


def _verdict(met: bool | None) -> str:
    return "not measured" if met is None else ("met" if met else "missed")


def targets_markdown(rows: list[dict[str, Any]]) -> list[str]:
    lines = [
        "Against the performance targets (2 cores, over MCP streamable HTTP, the query embedding included); "
        "where a target has one, the note gives this machine's floor for it (the table above):",
        "",
        "| target | limit | measured | verdict | note |",
        "|---|---|---:|---|---|",
    ]
    for row in rows:
        value = "–" if row["measured"] is None else f"{row['measured']:,.1f}"
        verdict = _verdict(row["met"])
        lines.append(f"| {row['target']} | {row['limit']} | {value} | {verdict} | {row['note']} |")
    return lines


def markdown(result: dict[str, Any]) -> str:
    lines = [
        *_latency_table(result),
        "",
        *_throughput_table(result),
        "",
        *_warm_up_table(result),
        "",
        *_floor_table(result),
        "",
        *_statements_table(result),
    ]
    errors = {
        f"{size}/{phase['clients']}": phase["errors"] for size, phase in phases(result) if phase["errors"]
    }
    if errors:
        lines += ["", f"Errors by kind: `{json.dumps(errors)}`"]
    lines += ["", *targets_markdown(targets(result))]
    return "\n".join(lines) + "\n"


def _latency_table(result: dict[str, Any]) -> list[str]:
    """The title, how the run was set up, and each tool's latency with the server's split of it."""
    lines = [
        f"# bench load — slowave-graph {result['version']}, Neo4j {result['neo4j']}, "
        f"{result['embedding_model']}, {result['cpus']} CPUs",
        "",
        "Client-side latency over MCP streamable HTTP (ms), embedding included; load generator: "
        + (
            "the MCP SDK's client (`--client sdk`)."
            if result.get("client") == "sdk"
            else "lean JSON-RPC tools/call POSTs (`--client raw`; the SDK's client costs ~4 ms of "
            "CPU per call on the same cores)."
        ),
        "",
        *(
            [
                "Filled with derived vectors (`--fill-vectors derived`): cached sentence embeddings "
                "plus seeded noise per memory (see `slowave_graph/workload/derived.py`); queries are "
                "embedded for real.",
                "",
            ]
            if result.get("fill_vectors") == "derived"
            else []
        ),
        "The server's split (means, ms): its time for the call; the time it was embedding and the "
        "time it had a Neo4j transaction open (each counted whole); the time both ran at once "
        "(activate embeds beside its first reads); and Python, the time neither ran (validation, "
        "ranking, results, waits for the event loop). Server = embed + Neo4j − both + Python.",
        "",
        "| memories | clients | tool | p50 | p95 | p99 | server | embed | Neo4j | both | Python | Neo4j tx |",
        "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for size, phase in phases(result):
        for tool, lat in phase["tools_ms"].items():
            split = phase["server"].get(tool, {})
            parts = " | ".join(
                f"{split.get(key, 0):.1f}"
                for key in ("mean_ms", "mean_embed_ms", "mean_neo4j_ms", "mean_overlap_ms", "mean_python_ms")
            )
            tx = split.get("mean_transactions", 0)
            lines.append(
                f"| {size:,} | {phase['clients']} | {SHORT.get(tool, tool)} | "
                f"{lat['p50']:.1f} | {lat['p95']:.1f} | {lat['p99']:.1f} | {parts} | {tx:.1f} |"
            )
    return lines


def _throughput_table(result: dict[str, Any]) -> list[str]:
    """Each phase's rates, errors, CPU per call, memory and full collections."""
    lines = [
        "CPU per call (ms, all of a phase's CPU divided by its calls) of the server, Neo4j and the load "
        f"generator, and the machine's busy cores (of {result['cpus']}) during the phase: below the core "
        "count, the calls left cores idle.",
        "",
        "| memories | clients | calls/s | lifecycles/s | errors | CPU ms/call: server / Neo4j / load gen "
        "| busy cores | server RSS MB | Neo4j RSS MB | load avg | server full GCs (count, longest) |",
        "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|",
    ]
    for size, phase in phases(result):
        lines.append(
            f"| {size:,} | {phase['clients']} | {phase['calls_per_second']} | "
            f"{phase['lifecycles_per_second']} | {phase['error_count']} | {cpu_per_call(phase)} | "
            f"{(phase.get('cpu') or {}).get('busy_cores', '–')} | {phase['server_rss_mb']} | "
            f"{phase['neo4j_rss_mb']} | {phase.get('loadavg_1m', '')} | {full_collections(phase)} |"
        )
    return lines


def _warm_up_table(result: dict[str, Any]) -> list[str]:
    """How each size was filled and warmed up before its phases."""
    lines = [
        "Warm-up: one client's lifecycles before the size was measured, until the server's and "
        "Neo4j's CPU per call stopped falling (its first and last rounds, ms per call); each "
        "remembers a memory, so the phases ran on the memories counted after it.",
        "",
        "| memories | fill (added, memories/s) | warm-up lifecycles (CPU ms/call first → last) "
        "| memories after warm-up | sequential remember/s |",
        "|---:|---|---|---:|---:|",
    ]
    for entry in result["sizes"]:
        fill = entry["fill"]
        rate = f"{fill['added']:,} at {fill['per_second']}/s" if fill["added"] else "already filled"
        lines.append(
            f"| {entry['size']:,} | {rate} | {warm_up(entry.get('warmup'))} | "
            f"{count(entry.get('memories_measured'))} | {sequential(entry['sequential_remember'])} |"
        )
    return lines


def _floor_table(result: dict[str, Any]) -> list[str]:
    """Each part of a call measured alone, and the latency floor they add up to."""
    lines = [
        "The floor (p50, ms), each part alone on the otherwise idle machine after the phases: a "
        "question's and a memory's embedding, one bare filtered vector query, one durable write (a "
        "one-property commit), one MCP round trip refused at validation (HTTP, the SDK, the envelope). "
        "activate and recall hold a round trip, a question's embedding, a search and a write one after "
        "another; remember a round trip, a memory's embedding and a write:",
        "",
        "| memories | query embedding | memory embedding | bare vector query | durable write "
        "| MCP round trip | activate / recall ≥ | sequential remember ≤ |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for entry in result["sizes"]:
        floor = entry["floor"]
        parts = " | ".join(
            f"{floor[key]['p50']:.1f}" if key in floor else "–"
            for key in ("embedding_ms", "memory_embedding_ms", "vector_query_ms", "write_ms", "round_trip_ms")
        )
        search, remember = chain_floor(floor, "search"), chain_floor(floor, "remember")
        lines.append(
            f"| {entry['size']:,} | {parts} | {f'{search[0]:.1f} ms' if search else '–'} | "
            f"{f'{1000 / remember[0]:.0f}/s' if remember else '–'} |"
        )
    return lines


def _statements_table(result: dict[str, Any]) -> list[str]:
    """The Neo4j statements of each tool, as the server timed them."""
    lines = [
        "Neo4j statements of each call (the server's view, mean ms in the calls that ran one; the "
        "share of calls that did when not all; concurrent statements overlap, so they do not add up "
        "to the Neo4j column above):",
        "",
        "| memories | clients | tool | statements |",
        "|---:|---:|---|---|",
    ]
    for size, phase in phases(result):
        for tool, split in phase["server"].items():
            if split.get("statements"):
                lines.append(
                    f"| {size:,} | {phase['clients']} | {SHORT.get(tool, tool)} | "
                    f"{statement_times(split['statements'])} |"
                )
    return lines


def plot(result: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 6.5))
    sizes = [entry["size"] for entry in result["sizes"]]
    clients = sorted({phase["clients"] for _, phase in phases(result)})
    colors = {"slowave_activate": "tab:blue", "slowave_recall": "tab:green", "slowave_remember": "tab:orange"}
    markers = ["o", "s", "^", "D"]
    for tool, color in colors.items():
        for marker, n in zip(markers, clients, strict=False):
            for q, style in (("p50", "-"), ("p95", ":")):
                ys = []
                for entry in result["sizes"]:
                    phase = next((p for p in entry["phases"] if p["clients"] == n), None)
                    lat = phase["tools_ms"].get(tool) if phase else None
                    ys.append(lat[q] if lat else float("nan"))
                label = f"{SHORT[tool]} {q}, {n} client{'s' if n > 1 else ''}"
                ax.plot(sizes, ys, style, color=color, marker=marker, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("memories in the database")
    ax.set_ylabel("latency over MCP HTTP (ms)")
    ax.set_title("slowave-graph: tool latency against database size")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=3, loc="upper left", bbox_to_anchor=(0, -0.15))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write(result: dict[str, Any], out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "load.json", "markdown": out / "load.md", "png": out / "load.png"}
    paths["json"].write_text(json.dumps({**result, "targets": targets(result)}, indent=2) + "\n")
    paths["markdown"].write_text(markdown(result))
    plot(result, paths["png"])
    return paths
