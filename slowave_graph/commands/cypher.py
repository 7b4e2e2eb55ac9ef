"""`slowave-graph cypher list | run | query`: the analyst's catalog, and any read-only statement,
from the command line."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
from typing import Any

from slowave_graph.commands import Common
from slowave_graph.config import Settings
from slowave_graph.explore.catalog import CatalogQuery, ParamError, catalog_queries, get_query

CELL_MAX = 48


def register(sub: Any, common: Common) -> None:
    parser = sub.add_parser("cypher", help="list and run the analyst's Cypher catalog (read-only)")
    actions = parser.add_subparsers(dest="cypher_action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="catalog queries: name, file, parameters, what it answers")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=_list)
    run = actions.add_parser(
        "run",
        help="run a catalog query by name in a read transaction",
        description="Runs one query of cypher/explore.cypher (or a stats query) in a READ transaction. "
        "Values are typed by the query's declared parameters (int, float, bool, JSON list, "
        "datetime as ISO 8601, string); `null` passes null.",
    )
    run.add_argument("name", help="query name (see `slowave-graph cypher list`)")
    query = actions.add_parser(
        "query",
        help="run any Cypher statement in a read transaction (writes are refused)",
        description="Runs one statement in a READ transaction: Neo4j itself refuses any write in it "
        "(CREATE, MERGE, SET, DELETE, schema changes), and statements that read the host's files or "
        "URLs (LOAD CSV) or act on the server (TERMINATE, procedures that kill connections or clear "
        "caches) are refused before they run. Values of $parameters come from --param "
        "(null, true/false, numbers, JSON lists/objects, else the text as it is).",
    )
    query.add_argument("statement", help='the Cypher statement, e.g. "MATCH (m:Memory) RETURN count(m)"')
    for action, handler in ((run, _run), (query, _query)):
        action.add_argument(
            "--param",
            "-p",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="a parameter (repeatable)",
        )
        action.add_argument("--json", action="store_true", help="print the rows as JSON")
        common(action)
        action.set_defaults(handler=handler)


def _signature(query: CatalogQuery) -> str:
    parts = []
    for p in query.params:
        kind = p.type or "any"
        parts.append(f"{p.name}:{kind}" if p.required else f"[{p.name}:{kind}={json.dumps(p.default)}]")
    return " ".join(parts)


def _first_sentence(text: str) -> str:
    head, dot, _ = text.partition(". ")
    return head + ("." if dot else "")


def _list(args: argparse.Namespace, settings: Settings) -> int:
    queries = catalog_queries()
    if args.json:
        print(json.dumps([{
            "name": q.name, "file": f"{q.file}.cypher", "doc": q.summary,
            "params": [{"name": p.name, "type": p.type, "required": p.required, "default": p.default,
                        "description": p.description} for p in q.params],
        } for q in queries.values()], indent=2))  # fmt: skip
        return 0
    for q in queries.values():
        print(f"{q.name}  ({q.file}.cypher)  {_signature(q)}".rstrip())
        if q.summary:
            print(
                textwrap.fill(
                    _first_sentence(q.summary), 100, initial_indent="    ", subsequent_indent="    "
                )
            )
    return 0


def _cell(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= CELL_MAX else text[: CELL_MAX - 1] + "…"


def format_table(rows: list[dict[str, Any]]) -> str:
    if not rows:
        return "(no rows)"
    columns = list(rows[0])
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines.extend("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells)
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph.app import open_database
    from slowave_graph.explore.catalog import bind_params
    from slowave_graph.explore.run import run_catalog_query

    try:  # bad names and parameters fail before any connection
        bind_params(get_query(args.name), args.param)
    except ParamError as exc:
        print(f"slowave-graph cypher: {exc}", file=sys.stderr)
        return 2

    async def main() -> list[dict[str, Any]]:
        async with open_database(settings) as db:
            _, found = await run_catalog_query(db, args.name, args.param)
            return found

    found = asyncio.run(main())
    print(json.dumps(found, indent=2, ensure_ascii=False) if args.json else format_table(found))
    return 0


def statement_params(assignments: list[str]) -> dict[str, Any]:
    """``NAME=VALUE`` strings as parameters, each value's type inferred (see ``parse_value``)."""
    from slowave_graph.explore.catalog import parse_value

    params: dict[str, Any] = {}
    for item in assignments:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip():
            raise ParamError(f"--param {item!r}: expected NAME=VALUE")
        params[name.strip()] = parse_value(raw)
    return params


def _query(args: argparse.Namespace, settings: Settings) -> int:
    from neo4j.exceptions import Neo4jError

    from slowave_graph.app import open_database
    from slowave_graph.explore.run import UnsafeStatement, run_read_statement

    try:
        params = statement_params(args.param)
    except ParamError as exc:
        print(f"slowave-graph cypher: {exc}", file=sys.stderr)
        return 2

    async def main() -> list[dict[str, Any]]:
        async with open_database(settings) as db:
            return await run_read_statement(db, args.statement, params)

    try:
        found = asyncio.run(main())
    except Neo4jError as exc:  # a syntax error, or a write refused in the read transaction
        print(f"slowave-graph cypher: {exc.code}: {exc.message}", file=sys.stderr)
        return 1
    except UnsafeStatement as exc:
        print(f"slowave-graph cypher: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(found, indent=2, ensure_ascii=False) if args.json else format_table(found))
    return 0
