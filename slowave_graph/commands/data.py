"""`slowave-graph export | import | backup | restore | reembed | concepts`: moving, re-embedding
and re-deriving the memory."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from slowave_graph.commands import Common
from slowave_graph.config import Settings

if TYPE_CHECKING:
    from slowave_graph.embedding.embedder import Embedder
    from slowave_graph.graph.database import Database


def register(sub: Any, common: Common) -> None:
    _register_export_import(sub, common)
    _register_backup_restore(sub, common)
    _register_reembed(sub, common)
    _register_concepts(sub, common)


def _register_export_import(sub: Any, common: Common) -> None:
    export = sub.add_parser("export", help="write the memory (or some scopes) to a JSON Lines file")
    export.add_argument(
        "--scope", action="extend", nargs="+", help="only these scopes (repeatable; default: all of them)"
    )
    export.add_argument("--out", required=True, help="the .jsonl file to write")
    common(export)
    export.set_defaults(handler=_export)

    imp = sub.add_parser(
        "import",
        help="import an export file, or bulk-import memories from JSON Lines",
        description="FILE is either an export (restored exactly, ids kept) or lines like "
        '{"scope": "project:shop", "content": "…", "type": "fact", "occurred_at": "2026-03-01T09:30:00Z"} '
        "(the slowave_remember fields), embedded in batches and stored as remember stores them.",
    )
    imp.add_argument("file", help="the .jsonl file to read")
    imp.add_argument("--batch", type=int, default=500, help="records per transaction (default 500)")
    imp.add_argument(
        "--reembed", action="store_true", help="export files: recompute vectors made by another model"
    )
    imp.add_argument("--scope", help="bulk files: scope for records that name none")
    imp.add_argument("--type", dest="memory_type", help="bulk files: type for records that name none")
    common(imp)
    imp.set_defaults(handler=_import)


def _register_backup_restore(sub: Any, common: Common) -> None:
    backup = sub.add_parser("backup", help="full export with counts and checksum, checked after writing")
    where = backup.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", help="the backup file to write")
    where.add_argument(
        "--dir",
        help="write slowave-graph-<UTC time>.jsonl into this directory and keep only the newest "
        "--keep of them (what the scheduled backup of `slowave-graph service` runs)",
    )
    backup.add_argument(
        "--keep", type=int, default=None, help="with --dir: backups kept (default SLOWAVE_BACKUP_KEEP, 7)"
    )
    common(backup)
    backup.set_defaults(handler=_backup)

    restore = sub.add_parser("restore", help="restore a backup and verify counts and checksum")
    restore.add_argument("file", help="the backup file")
    restore.add_argument(
        "--replace", action="store_true", help="delete and restore scopes that already exist"
    )
    restore.add_argument("--batch", type=int, default=500, help="records per transaction (default 500)")
    restore.add_argument("--reembed", action="store_true", help="recompute vectors made by another model")
    common(restore)
    restore.set_defaults(handler=_restore)


def _register_reembed(sub: Any, common: Common) -> None:
    reembed = sub.add_parser(
        "reembed",
        help="recompute every stored vector with another embedding model (stop the servers first)",
    )
    reembed.add_argument(
        "--model",
        required=True,
        help="all-MiniLM-L6-v2-fused-q8, all-MiniLM-L6-v2-q8, all-MiniLM-L6-v2-int8, all-MiniLM-L6-v2, "
        "or a local model directory",
    )
    reembed.add_argument("--batch", type=int, default=256, help="texts per embedding batch (default 256)")
    common(reembed)
    reembed.set_defaults(handler=_reembed)


def _register_concepts(sub: Any, common: Common) -> None:
    concepts = sub.add_parser("concepts", help="the concept layer retrieval walks (what memories are about)")
    concepts_sub = concepts.add_subparsers(dest="concepts_command", metavar="COMMAND", required=True)
    fill = concepts_sub.add_parser(
        "backfill",
        help="extract and link the concepts of every memory stored without them, or by an older "
        "extractor (idempotent; servers may keep running — each also does it at start-up)",
    )
    fill.add_argument("--page", type=int, default=500, help="memories per transaction (default 500)")
    common(fill)
    fill.set_defaults(handler=_concepts_backfill)


def _report(result: dict[str, Any]) -> None:
    print(json.dumps(result, indent=2, ensure_ascii=False, default=str))


def _run(work: Callable[[], Coroutine[Any, Any, dict[str, Any]]]) -> int:
    """Run a command; the errors an operator can act on are one clear line, exit code 1."""
    from slowave_graph.operator.backup import RestoreMismatch
    from slowave_graph.operator.bulk import BulkRecordError
    from slowave_graph.operator.export import ExportError
    from slowave_graph.operator.importer import ImportRefused
    from slowave_graph.operator.model import FormatError

    try:
        _report(asyncio.run(work()))
    except (FormatError, ImportRefused, BulkRecordError, ExportError, RestoreMismatch, OSError) as exc:
        print(f"slowave-graph: {exc}", file=sys.stderr)
        return 1
    return 0


def _export(args: argparse.Namespace, settings: Settings) -> int:
    async def work() -> dict[str, Any]:
        from slowave_graph.app import open_database
        from slowave_graph.operator.export import export_graph, scope_ids
        from slowave_graph.operator.progress import bar

        out = Path(args.out)
        started = time.perf_counter()
        async with open_database(settings) as db:
            await scope_ids(db, args.scope)  # unknown scopes fail before the file is touched
            with out.open("w", encoding="utf-8", newline="\n") as handle, bar(None, "export") as progress:
                summary = await export_graph(db, handle, args.scope, progress)
        return {"file": str(out), "bytes": out.stat().st_size,
                "seconds": round(time.perf_counter() - started, 3), **summary}  # fmt: skip

    return _run(work)


async def _prepared_database(
    db: Database, settings: Settings, header: dict[str, Any], reembed: bool
) -> Embedder | None:
    """The schema in place and the embedding space recorded (the file's model on an empty
    database); with ``reembed``, the embedder for the database's model (or the configured one,
    which must be the database's) that recomputes the file's vectors."""
    from slowave_graph.app import database_embedder
    from slowave_graph.graph.schema import ensure_schema

    if reembed:
        embedder = await database_embedder(db, settings.embedding_model, endpoint=settings.embedding_endpoint)
        await ensure_schema(db, embedder.model_name, embedder.dimension)
        return embedder
    found = await db.run_read("embedding_space_get")
    theirs = header.get("embedding")
    if found:
        model, dimension = found[0]["model"], int(found[0]["dimension"])
    elif theirs:
        model, dimension = theirs["model"], int(theirs["dimension"])
    else:
        return None
    await ensure_schema(db, model, dimension)
    return None


def _import(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph.operator.importer import peek_header

    path = Path(args.file)
    if not path.is_file():
        print(f"slowave-graph: no such file {path}", file=sys.stderr)
        return 1
    header = peek_header(path)
    if header is None:
        if args.reembed:
            print(
                "slowave-graph: --reembed is for export files; bulk records are always embedded",
                file=sys.stderr,
            )
            return 2
        return _bulk(args, settings, path)
    if args.scope or args.memory_type:
        print(
            "slowave-graph: --scope and --type are for bulk files; an export keeps its own", file=sys.stderr
        )
        return 2

    async def work() -> dict[str, Any]:
        from slowave_graph.app import open_database
        from slowave_graph.operator.importer import import_export, read_export
        from slowave_graph.operator.progress import bar

        started = time.perf_counter()
        file = read_export(path)
        async with open_database(settings) as db:
            embedder = await _prepared_database(db, settings, file.header, args.reembed)
            with bar(file.records, "import") as progress:
                result = await import_export(
                    db, file, batch_size=args.batch, embedder=embedder, progress=progress
                )
        return {"file": str(path), "format": "export", "seconds": round(time.perf_counter() - started, 3),
                **result}  # fmt: skip

    return _run(work)


def _bulk(args: argparse.Namespace, settings: Settings, path: Path) -> int:
    async def work() -> dict[str, Any]:
        from slowave_graph.app import open_app
        from slowave_graph.operator.bulk import check_bulk_file, import_memories, read_bulk_file
        from slowave_graph.operator.progress import bar

        total = check_bulk_file(path, args.scope, args.memory_type)  # all valid, or nothing written
        async with open_app(settings) as app:
            with bar(total, "import", unit="memories") as progress:
                result = await import_memories(
                    app,
                    read_bulk_file(path, args.scope, args.memory_type),
                    batch_size=args.batch,
                    progress=progress,
                )
        return {"file": str(path), "format": "bulk", **result.as_dict()}

    return _run(work)


def _backup(args: argparse.Namespace, settings: Settings) -> int:
    async def work() -> dict[str, Any]:
        from slowave_graph.app import open_database
        from slowave_graph.operator.backup import backup, backup_into
        from slowave_graph.operator.progress import bar

        started = time.perf_counter()
        async with open_database(settings) as db:
            with bar(None, "backup") as progress:
                if args.dir:
                    keep = args.keep if args.keep is not None else settings.backup_keep
                    result = await backup_into(db, Path(args.dir).expanduser(), keep, progress)
                else:
                    result = await backup(db, Path(args.out), progress)
        return {**result, "seconds": round(time.perf_counter() - started, 3)}

    return _run(work)


def _restore(args: argparse.Namespace, settings: Settings) -> int:
    async def work() -> dict[str, Any]:
        from slowave_graph.app import open_database
        from slowave_graph.operator.backup import restore
        from slowave_graph.operator.importer import read_export
        from slowave_graph.operator.progress import bar

        started = time.perf_counter()
        path = Path(args.file)
        file = read_export(path)
        async with open_database(settings) as db:
            embedder = await _prepared_database(db, settings, file.header, args.reembed)
            with bar(file.records, "restore") as progress:
                result = await restore(
                    db, file, replace=args.replace, batch_size=args.batch, embedder=embedder,
                    progress=progress,
                )  # fmt: skip
        return {"file": str(path), **result, "seconds": round(time.perf_counter() - started, 3)}

    return _run(work)


def _reembed(args: argparse.Namespace, settings: Settings) -> int:
    async def work() -> dict[str, Any]:
        from slowave_graph.app import open_database
        from slowave_graph.embedding.embedder import load_embedder
        from slowave_graph.operator.progress import bar
        from slowave_graph.operator.reembed import reembed

        embedder = await asyncio.to_thread(load_embedder, args.model, settings.embedding_endpoint)
        async with open_database(settings) as db:
            totals = (await db.run_read("export_totals"))[0]
            total = int(totals["Memory"]) + int(totals["Procedure"]) + int(totals["Retrieval"])
            with bar(total, "reembed", unit="vectors") as progress:
                result = await reembed(db, embedder, batch_size=args.batch, progress=progress)
        result["next"] = (
            f"start the servers: with SLOWAVE_EMBEDDING_MODEL unset they load {args.model}, the "
            "database's model now (a local model directory must be set there); one configured with "
            "another model refuses to start"
        )
        return result

    return _run(work)


def _concepts_backfill(args: argparse.Namespace, settings: Settings) -> int:
    async def work() -> dict[str, Any]:
        from slowave_graph.app import open_database
        from slowave_graph.graph.schema import ensure_schema
        from slowave_graph.operator.progress import bar
        from slowave_graph.services.concept_upkeep import backfill, pending

        async with open_database(settings) as db:
            space = await db.run_read("embedding_space_get")
            if space:  # the Concept constraint in place; a store without memories has no space yet
                await ensure_schema(db, space[0]["model"], int(space[0]["dimension"]))
            with bar(await pending(db), "concepts", unit="memories") as progress:
                result = await backfill(db, page=args.page, progress=progress.update)
        return result.summary()

    return _run(work)
