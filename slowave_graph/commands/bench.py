"""`slowave-graph bench retrieval|learning|load|conversations|consolidation|transfer`: benchmarks
(figures and reports, never pass/fail)."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from slowave_graph.commands import Common, needs_lab
from slowave_graph.config import GRAPH_USES, Settings


def _question_run(parser: argparse.ArgumentParser, outputs: str, policies: str) -> None:
    """The options of a benchmark that asks a dataset's questions (retrieval, learning)."""
    parser.add_argument("--out", default="bench-results", help=f"directory for {outputs}")
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark scopes in the database")
    parser.add_argument(
        "--policy",
        action="append",
        choices=list(GRAPH_USES),
        help=f"how much of the graph retrieval uses ({policies}); default: SLOWAVE_RETRIEVAL_GRAPH (full)",
    )


def register(sub: Any, common: Common) -> None:
    bench = sub.add_parser("bench", help="benchmarks on external data (numbers, never pass/fail)")
    bench_sub = bench.add_subparsers(dest="bench", required=True, metavar="BENCH")
    _register_retrieval(bench_sub, common)
    _register_learning(bench_sub, common)
    _register_load(bench_sub, common)
    _register_conversations(bench_sub, common)
    _register_consolidation(bench_sub, common)
    _register_transfer(bench_sub, common)
    bench.set_defaults(handler=run)


def _register_retrieval(bench_sub: Any, common: Common) -> None:
    retrieval = bench_sub.add_parser(
        "retrieval", help="retrieval quality on LoCoMo or MADial-Bench through the product's own paths"
    )
    retrieval.add_argument("--dataset", choices=["locomo", "madial", "crosslingual"], required=True)
    retrieval.add_argument(
        "--data",
        help="LoCoMo JSON file, or the MADial-Bench directory; crosslingual: a claims file of the same "
        "shape as the bundled one (the default)",
    )
    retrieval.add_argument("--errata", help="LoCoMo errata JSON (corrected evidence, a secondary gold)")
    _question_run(retrieval, "JSON, Markdown and PNG", "repeatable, one ingest: an ablation")
    retrieval.add_argument("--no-probes", action="store_true", help="skip the off-topic probes")
    retrieval.add_argument(
        "--neutral-feedback",
        action="store_true",
        help="also ask every question through recall and close each retrieval with not_used before the "
        "next, as an honest agent does; reported beside the plain figures, which it must equal",
    )
    retrieval.add_argument(
        "--compound",
        action="store_true",
        help="also ask the questions two or three at a time, shaped as agents send them (one sentence "
        "with 'and', a task text, a list, task_context values): each part's recall beside its own",
    )
    common(retrieval)


def _register_learning(bench_sub: Any, common: Common) -> None:
    learning = bench_sub.add_parser(
        "learning", help="retrieval before and after one round of honest (oracle) feedback"
    )
    learning.add_argument("--dataset", choices=["locomo"], default="locomo")
    learning.add_argument("--data", required=True, help="LoCoMo JSON file")
    _question_run(learning, "JSON and Markdown", "repeatable: one run each")
    learning.add_argument(
        "--pages",
        type=int,
        default=1,
        help="training: read on (continue_from) while no shown memory holds evidence, up to N pages of 10",
    )
    common(learning)


def _register_load(bench_sub: Any, common: Common) -> None:
    load = bench_sub.add_parser(
        "load", help="latency and throughput of the real MCP server over HTTP at growing database sizes"
    )
    load.add_argument(
        "--size",
        type=int,
        action="append",
        help="database size in memories (repeatable; default 1000, 10000, 100000)",
    )
    load.add_argument(
        "--clients", default="1,8", help="concurrent MCP clients per phase, comma-separated (default 1,8)"
    )
    load.add_argument(
        "--lifecycles",
        type=int,
        default=100,
        help="full lifecycles per client and phase (100: one client's p95 is its 95th of 100 calls; "
        "with 40 it was the second slowest)",
    )
    load.add_argument("--port", type=int, default=8799, help="HTTP port of the server under test")
    load.add_argument(
        "--fill-vectors",
        choices=["exact", "derived"],
        default="exact",
        help="exact: embed every synthetic text (a real import); derived: vectors derived from cached "
        "sentence embeddings plus seeded noise, for sizes where embedding every text is impractical "
        "(1M: ~450k distinct texts, ~1 h on 2 cores). Queries are always embedded for real.",
    )
    load.add_argument(
        "--warmup",
        type=int,
        default=200,
        help="at least this many lifecycles before measuring each size, then more in rounds of 50 "
        "until the server's and Neo4j's CPU per call stops falling (at most 5x as many; 0: none). "
        "After a Neo4j start its JIT compiler needs ~600 lifecycles at 100k on 2 cores to settle "
        "(activate p50 81 ms in the first 40, ~35 after 600); a cold page cache at 1M made it ~3x slower",
    )
    load.add_argument(
        "--client",
        choices=["raw", "sdk"],
        default="raw",
        help="the load generator: raw = lean JSON-RPC tools/call POSTs (~0.3 ms of CPU per call); "
        "sdk = the MCP SDK's client (~4 ms per call: pydantic and output-schema validation, on the "
        "same cores as the server under test)",
    )
    load.add_argument("--out", default="bench-results", help="directory for JSON, Markdown and PNG")
    common(load)


def _register_consolidation(bench_sub: Any, common: Common) -> None:
    consolidation = bench_sub.add_parser(
        "consolidation",
        help="near-duplicates and updates told apart from look-alikes, on the labelled pairs shipped "
        "with slowave-graph-lab (no database)",
    )
    consolidation.add_argument("--out", default="bench-results", help="directory for JSON and Markdown")
    common(consolidation)


def _register_transfer(bench_sub: Any, common: Common) -> None:
    transfer = bench_sub.add_parser(
        "transfer",
        help="lessons validated in some scopes reaching new ones by stage, through MCP with honest "
        "feedback; and nothing scope-specific or beyond a token's grants crossing",
    )
    transfer.add_argument("--out", default="bench-results", help="directory for JSON and Markdown")
    transfer.add_argument("--keep", action="store_true", help="keep the scenario's scopes in the database")
    common(transfer)


def _register_conversations(bench_sub: Any, common: Common) -> None:
    talks = bench_sub.add_parser(
        "conversations",
        help="stdio conversations one after another from no Neo4j running, with and without the linger",
    )
    talks.add_argument("--conversations", type=int, default=3, help="conversations per linger setting")
    talks.add_argument("--lifecycles", type=int, default=10, help="full lifecycles per conversation")
    talks.add_argument(
        "--linger",
        type=int,
        action="append",
        help="SLOWAVE_NEO4J_LINGER of the conversations' servers (repeatable; default 0 and 600)",
    )
    talks.add_argument("--out", default="bench-results", help="directory for JSON and Markdown")
    common(talks)


@needs_lab("bench")
def run(args: argparse.Namespace, settings: Settings) -> int:
    asyncio.run(_bench(settings, args))
    return 0


async def _bench(settings: Settings, args: argparse.Namespace) -> None:
    from slowave_graph.app import open_app
    from slowave_graph.services.ranking import policy_for
    from slowave_graph_lab.bench import datasets, report
    from slowave_graph_lab.bench import learning as bench_learning
    from slowave_graph_lab.bench import retrieval as bench_retrieval

    if args.bench == "load":
        await _bench_load(settings, args)
        return
    if args.bench == "consolidation":
        from slowave_graph.embedding.embedder import DEFAULT_MODEL, load_embedder
        from slowave_graph_lab.bench import consolidation

        embedder = await asyncio.to_thread(
            load_embedder, settings.embedding_model or DEFAULT_MODEL, settings.embedding_endpoint
        )
        judged = await consolidation.run(embedder)
        _write_report(Path(args.out), "consolidation", judged, consolidation.markdown(judged))
        return
    if args.bench == "transfer":
        from slowave_graph_lab.bench import transfer

        # what it measures is generalisation, whatever SLOWAVE_GENERALISATION says
        async with open_app(settings.model_copy(update={"generalisation": True})) as app:
            moved = await transfer.run(app, keep=args.keep)
        _write_report(Path(args.out), "transfer", moved.as_dict(), transfer.markdown(moved))
        return
    if args.bench == "conversations":
        from slowave_graph_lab.bench import conversations

        options = conversations.ConversationOptions(
            conversations=args.conversations,
            lifecycles=args.lifecycles,
            lingers=tuple(args.linger or (0, 600)),
        )
        talks = await conversations.run(settings, options)
        _write_report(Path(args.out), "conversations", talks, conversations.markdown(talks))
        return
    if args.dataset == "crosslingual":
        dataset = datasets.load_crosslingual(Path(args.data) if args.data else datasets.CROSSLINGUAL)
    elif not args.data:
        raise SystemExit(f"bench {args.bench} --dataset {args.dataset} needs --data")
    elif args.dataset == "locomo":
        dataset = datasets.load_locomo(
            Path(args.data), Path(args.errata) if getattr(args, "errata", None) else None
        )
    else:
        dataset = datasets.load_madial(Path(args.data))
    out = Path(args.out)
    policies = [policy_for(settings.candidate_k, graph) for graph in args.policy or ()] or None
    async with open_app(settings) as app:
        if args.bench == "retrieval":
            result = await bench_retrieval.run(
                app,
                dataset,
                limit=args.limit,
                probes=not args.no_probes,
                policies=policies,
                neutral_feedback=args.neutral_feedback,
                compound=args.compound,
            )
        else:
            result = await bench_learning.run(
                app, dataset, limit=args.limit, pages=args.pages, policies=policies
            )
        if not args.keep:
            for scope in result["scopes"]:
                await app.db.run_write("delete_scope", scope=scope)
    if args.bench == "retrieval":
        paths = report.write(result, out)
        print(report.markdown(result))
        print("written: " + ", ".join(str(p) for p in paths.values()))
    else:
        _write_report(out, "learning", result, bench_learning.markdown(result))


def _write_report(out: Path, name: str, result: dict[str, Any], markdown: str) -> None:
    """A benchmark's JSON and Markdown in ``out``; the Markdown printed too."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / f"{name}.json", "markdown": out / f"{name}.md"}
    paths["json"].write_text(json.dumps(result, indent=2) + "\n")
    paths["markdown"].write_text(markdown)
    print(markdown)
    print("written: " + ", ".join(str(p) for p in paths.values()))


async def _bench_load(settings: Settings, args: argparse.Namespace) -> None:
    from slowave_graph.app import open_app
    from slowave_graph_lab.bench import load, load_report

    options = load.LoadOptions(
        sizes=args.size or [1_000, 10_000, 100_000],
        clients=[int(c) for c in args.clients.split(",") if c.strip()],
        lifecycles=args.lifecycles,
        port=args.port,
        fill_vectors=args.fill_vectors,
        warmup=args.warmup,
        client=args.client,
    )
    out = Path(args.out)
    async with open_app(settings) as app:
        result = await load.run(app, options, checkpoint=lambda partial: load_report.write(partial, out))
    paths = load_report.write(result, out)
    print(load_report.markdown(result))
    print("written: " + ", ".join(str(p) for p in paths.values()))
