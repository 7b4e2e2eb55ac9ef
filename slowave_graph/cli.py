"""`slowave-graph` command line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowave_graph import __version__
from slowave_graph.config import DEFAULT_NEO4J_VERSION, GRAPH_USES, Settings
from slowave_graph.telemetry import GC_PAUSES

if TYPE_CHECKING:
    from slowave_graph.neo4j_local.lease import ManagedLease

log = logging.getLogger("slowave_graph")

DESCRIPTION = """\
Long-term memory for AI agents over MCP, stored in Neo4j.

With NEO4J_URI unset, slowave-graph runs its own Neo4j Community server (fetched once from Maven
Central, data under SLOWAVE_DATA_DIR). Set NEO4J_URI/NEO4J_USER/NEO4J_PASSWORD to use an existing
Neo4j, Aura or cluster instead."""

EPILOG = """\
examples:
  slowave-graph serve                       HTTP on http://127.0.0.1:8766/mcp (+ /health)
  slowave-graph serve --transport stdio     for MCP clients that spawn the server
  slowave-graph neo4j start                 keep the managed Neo4j running between servers
  slowave-graph neo4j status                where it runs, its version, memory use, password file
  slowave-graph stats                       what the memory holds, per label and scope
  slowave-graph demo                        a scripted agent lifecycle against the running server
  slowave-graph demo seed                   a demo project memory to explore in notebooks/Cypher"""


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        neo4j_uri=getattr(args, "neo4j_uri", None),
        data_dir=getattr(args, "data_dir", None),
        cache_dir=getattr(args, "cache_dir", None),
        neo4j_version=getattr(args, "neo4j_version", None),
        neo4j_bolt_port=getattr(args, "bolt_port", None),
        http_host=getattr(args, "host", None),
        http_port=getattr(args, "port", None),
        log_level=getattr(args, "log_level", None),
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--neo4j-uri", help="use this Neo4j instead of the managed one (NEO4J_URI)")
    parser.add_argument("--data-dir", help="managed Neo4j data directory (SLOWAVE_DATA_DIR)")
    parser.add_argument("--cache-dir", help="jar cache directory (SLOWAVE_CACHE_DIR)")
    parser.add_argument(
        "--neo4j-version",
        help=f"managed Neo4j version (SLOWAVE_NEO4J_VERSION, default {DEFAULT_NEO4J_VERSION})",
    )
    parser.add_argument("--bolt-port", type=int, help="managed Neo4j Bolt port (SLOWAVE_NEO4J_BOLT_PORT)")
    parser.add_argument("--log-level", help="DEBUG, INFO, WARNING … (SLOWAVE_LOG_LEVEL)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="slowave-graph",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"slowave-graph {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the MCP server (HTTP by default, or stdio)")
    serve.add_argument("--transport", choices=["http", "stdio"], default="http")
    serve.add_argument("--host", help="HTTP bind address (SLOWAVE_HTTP_HOST, default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="HTTP port (SLOWAVE_HTTP_PORT, default 8766)")
    _common(serve)

    neo4j = sub.add_parser("neo4j", help="control the managed local Neo4j")
    neo4j.add_argument(
        "action",
        choices=["start", "stop", "status", "fetch", "browser"],
        help="fetch: download the jars from Maven Central, compile the launcher and record the JVM's "
        "AOT cache (Java 25+, once), without starting; browser: serve Neo4j Browser for this Neo4j "
        "on 127.0.0.1 until Ctrl-C and print its URL and how to log in",
    )
    neo4j.add_argument("--port", type=int, default=7474, help="browser: loopback HTTP port (default 7474)")
    neo4j.add_argument("--open", action="store_true", help="browser: also open it in a web browser")
    neo4j.add_argument(
        "--show-password", action="store_true", help="browser: print the neo4j user's password too"
    )
    _common(neo4j)

    bench = sub.add_parser("bench", help="benchmarks on external data (numbers, never pass/fail)")
    bench_sub = bench.add_subparsers(dest="bench", required=True, metavar="BENCH")
    retrieval = bench_sub.add_parser(
        "retrieval", help="retrieval quality on LoCoMo or MADial-Bench through the product's own paths"
    )
    retrieval.add_argument("--dataset", choices=["locomo", "madial"], required=True)
    retrieval.add_argument("--data", required=True, help="LoCoMo JSON file, or the MADial-Bench directory")
    retrieval.add_argument("--errata", help="LoCoMo errata JSON (corrected evidence, a secondary gold)")
    retrieval.add_argument("--out", default="bench-results", help="directory for JSON, Markdown and PNG")
    retrieval.add_argument("--limit", type=int, help="only the first N questions")
    retrieval.add_argument("--no-probes", action="store_true", help="skip the off-topic probes")
    retrieval.add_argument("--keep", action="store_true", help="keep the benchmark scopes in the database")
    retrieval.add_argument(
        "--policy",
        action="append",
        choices=list(GRAPH_USES),
        help="how much of the graph retrieval uses (repeatable, one ingest: an ablation); default: "
        "SLOWAVE_RETRIEVAL_GRAPH (full)",
    )
    _common(retrieval)

    learning = bench_sub.add_parser(
        "learning", help="retrieval before and after one round of honest (oracle) feedback"
    )
    learning.add_argument("--dataset", choices=["locomo"], default="locomo")
    learning.add_argument("--data", required=True, help="LoCoMo JSON file")
    learning.add_argument("--out", default="bench-results", help="directory for JSON and Markdown")
    learning.add_argument("--limit", type=int, help="only the first N questions")
    learning.add_argument(
        "--pages",
        type=int,
        default=1,
        help="training: read on (continue_from) while no shown memory holds evidence, up to N pages of 10",
    )
    learning.add_argument("--keep", action="store_true", help="keep the benchmark scopes in the database")
    learning.add_argument(
        "--policy",
        action="append",
        choices=list(GRAPH_USES),
        help="how much of the graph retrieval uses (repeatable: one run each); default: "
        "SLOWAVE_RETRIEVAL_GRAPH (full)",
    )
    _common(learning)

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
    _common(load)

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
    _common(talks)

    stats = sub.add_parser("stats", help="counts per label, relationship type and scope")
    stats.add_argument("--scope", help="only this scope's row (the totals stay whole-database)")
    stats.add_argument("--json", action="store_true", help="print JSON")
    _common(stats)

    from slowave_graph.commands import modules

    for module in modules():
        module.register(sub, _common)
    return parser


def _configure_logging(level: str) -> None:
    # stderr only: on the stdio transport stdout carries JSON-RPC and nothing else.
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    for noisy in (
        "neo4j",
        "httpx",
        "httpx2",
        "sentence_transformers",
        "mcp.server.lowlevel",
        "uvicorn.access",
    ):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _freeze_startup_heap() -> None:
    """What start-up built (the embedder's Python side, the drivers, the tool schemas) lives as
    long as the process: gc.freeze() takes it out of the collector's reach, so a full collection
    scans only what calls allocated since. Without it every gen-2 collection re-walked the whole
    start-up heap, a pause of tens of milliseconds in the middle of some call (docs/performance.md).
    The pauses that remain are recorded for ``GET /metrics``."""
    gc.collect()
    gc.freeze()
    GC_PAUSES.install()


async def _serve(settings: Settings, transport: str, stop: asyncio.Event) -> None:
    """Serve until the client goes away (stdio) or ``stop`` is set (SIGTERM/SIGINT)."""
    import uvicorn

    from slowave_graph.app import open_app
    from slowave_graph.mcp import stdio
    from slowave_graph.mcp.deadlines import DeadlineH11Protocol
    from slowave_graph.mcp.server import build_server, check_http_exposure, http_app

    class Uvicorn(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield  # this CLI owns SIGINT/SIGTERM: it shuts uvicorn down, then the app and Neo4j

    if transport == "http":
        check_http_exposure(settings)  # before minutes of start-up, not after
    async with open_app(settings) as app:
        server = build_server(app)
        _freeze_startup_heap()
        if transport == "stdio":
            stdio.install()  # a line the SDK cannot parse would go unanswered
            log.info("serving MCP on stdio")
            serving = asyncio.ensure_future(server.run_stdio_async())
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
            for task in (serving, stopping):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await serving
            return
        config = uvicorn.Config(
            http_app(app, server),
            host=settings.http_host,
            port=settings.http_port,
            log_level=settings.log_level.lower(),
            lifespan="on",
            http=DeadlineH11Protocol,  # headers in time, few connections waiting for theirs
        )
        web = Uvicorn(config)
        watcher = asyncio.ensure_future(stop.wait())
        watcher.add_done_callback(lambda _: setattr(web, "should_exit", True))
        log.info("serving MCP on http://%s:%d/mcp", settings.http_host, settings.http_port)
        try:
            await web.serve()
        finally:
            watcher.cancel()
    log.info("stopped")


def _serve_until_signal(settings: Settings, transport: str) -> None:
    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        await _serve(settings, transport, stop)

    # uvloop's event loop where it is installed (not on Windows): with httptools, one-client p50
    # 2-4 ms lower over HTTP (docs/performance.md)
    try:
        import uvloop
    except ImportError:
        asyncio.run(main())
    else:
        uvloop.run(main())


async def _stats(settings: Settings, scope: str | None) -> dict[str, Any]:
    from slowave_graph.app import open_database
    from slowave_graph.graph.stats import collect_stats

    async with open_database(settings) as db:
        return await collect_stats(db, scope=scope)


async def _bench(settings: Settings, args: argparse.Namespace) -> None:
    from slowave_graph.app import open_app
    from slowave_graph.bench import datasets, report
    from slowave_graph.bench import learning as bench_learning
    from slowave_graph.bench import retrieval as bench_retrieval
    from slowave_graph.services.ranking import policy_for

    if args.bench == "load":
        await _bench_load(settings, args)
        return
    if args.bench == "conversations":
        from slowave_graph.bench import conversations

        options = conversations.ConversationOptions(
            conversations=args.conversations,
            lifecycles=args.lifecycles,
            lingers=tuple(args.linger or (0, 600)),
        )
        talks = await conversations.run(settings, options)
        _write_report(Path(args.out), "conversations", talks, conversations.markdown(talks))
        return
    data = Path(args.data)
    if args.dataset == "locomo":
        dataset = datasets.load_locomo(data, Path(args.errata) if getattr(args, "errata", None) else None)
    else:
        dataset = datasets.load_madial(data)
    out = Path(args.out)
    policies = [policy_for(settings.candidate_k, graph) for graph in args.policy or ()] or None
    async with open_app(settings) as app:
        if args.bench == "retrieval":
            result = await bench_retrieval.run(
                app, dataset, limit=args.limit, probes=not args.no_probes, policies=policies
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


def _neo4j_browser(settings: Settings, lease: ManagedLease, args: argparse.Namespace) -> int:
    """Neo4j Browser on loopback for the managed Neo4j (or NEO4J_URI's), in the foreground."""
    import webbrowser

    import uvicorn

    from slowave_graph.neo4j_local import browser
    from slowave_graph.neo4j_local.manager import port_is_free

    if not port_is_free(args.port):
        print(f"slowave-graph: port {args.port} is taken; pick another with --port", file=sys.stderr)
        return 1
    static = browser.ensure_browser(settings)
    if settings.managed:
        uri, _, password = lease.acquire()
        password_file: Path | None = lease.neo4j.password_file if settings.neo4j_password is None else None
    else:
        assert settings.neo4j_uri is not None
        uri, password_file = settings.neo4j_uri, None
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
    try:
        url = browser.browser_url(args.port, uri)
        print(browser.describe(url, uri, browser.login_hint(settings, password_file)), flush=True)
        if args.show_password:
            print(f"password: {password}", flush=True)
        if args.open:
            webbrowser.open(url)
        uvicorn.run(browser.browser_app(static, uri), host="127.0.0.1", port=args.port, log_level="warning")
    finally:
        if settings.managed:
            lease.release()
    return 0


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
    from slowave_graph.bench import load, load_report

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


def _print_stats(stats: dict[str, Any]) -> None:
    """Tables with the numbers in right-aligned columns under their names."""
    print(f"Neo4j {stats['neo4j_version']} — {stats['database']}")
    for title, counts in (("nodes", stats["labels"]), ("relationships", stats["relationships"])):
        print(f"{title}:")
        for name, count in counts.items():
            print(f"  {name:<16}{count:>10,}")
    columns = ("active", "stale", "sessions", "retrievals", "procedures", "concepts")
    print("scopes:")
    if not stats["scopes"]:
        print("  (none)")
    else:
        width = max(32, *(len(row["scope"]) for row in stats["scopes"]))
        print(f"  {'scope':<{width}}" + "".join(f"{c:>12}" for c in columns))
        for row in stats["scopes"]:
            print(f"  {row['scope']:<{width}}" + "".join(f"{row[c]:>12,}" for c in columns))
    indexes = stats.get("indexes", [])
    waiting = [i for i in indexes if i["state"] != "ONLINE"]
    print(f"indexes: {len(indexes)}, {'all online' if not waiting else f'{len(waiting)} not online:'}")
    for index in waiting:
        print(f"  {index['name']:<32} {index['state']} {index['populated']:.0f}%")
    store = stats.get("store")
    if store:
        mib = {k: store[k] / 2**20 for k in ("store_bytes", "transaction_log_bytes")}
        print(
            f"store: {mib['store_bytes']:.1f} MiB + {mib['transaction_log_bytes']:.1f} MiB "
            f"transaction logs ({store['path']})"
        )


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = _settings(args)
    except Exception as exc:
        print(f"slowave-graph: bad configuration: {exc}", file=sys.stderr)
        return 2
    _configure_logging(settings.log_level)

    from slowave_graph.graph.database import DatabaseUnavailable
    from slowave_graph.graph.schema import EmbeddingMismatch
    from slowave_graph.neo4j_local.manager import Neo4jLocalError

    try:
        handler = getattr(args, "handler", None)
        if handler is not None:
            return int(handler(args, settings))
        if args.command == "serve":
            _serve_until_signal(settings, args.transport)
        elif args.command == "neo4j":
            from slowave_graph.neo4j_local.lease import ManagedLease

            lease = ManagedLease(settings)
            if args.action == "start":
                status, started = lease.start_kept()
                print(json.dumps({"started": started, **status}, indent=2))
            elif args.action == "stop":
                print(json.dumps({"stopped": lease.stop()}))
            elif args.action == "browser":
                return _neo4j_browser(settings, lease, args)
            elif args.action == "fetch":
                from slowave_graph.operator.jvm_training import trainer

                fetched = lease.neo4j.fetch()
                cache = lease.neo4j.train_aot_cache(trainer(settings))
                print(json.dumps({**fetched, "aot_cache": None if cache is None else str(cache)}, indent=2))
            else:
                print(json.dumps(lease.status(), indent=2))
        elif args.command == "bench":
            asyncio.run(_bench(settings, args))
        elif args.command == "stats":
            stats = asyncio.run(_stats(settings, args.scope))
            if args.scope and not stats["scopes"]:
                print(f"slowave-graph: no such scope: {args.scope}", file=sys.stderr)
                return 1
            if args.json:
                print(json.dumps(stats, indent=2))
            else:
                _print_stats(stats)
    except (Neo4jLocalError, EmbeddingMismatch, DatabaseUnavailable) as exc:
        print(f"slowave-graph: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
