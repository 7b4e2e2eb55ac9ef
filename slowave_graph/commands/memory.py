"""`slowave-graph memory show|suppress|restore|supersede ID`: a person reviews and corrects one memory.

suppress hides a memory from retrieval (reversible, with a reason), restore undoes it, supersede
stores the corrected text as a new memory and retires the old one. Each action is recorded in
the graph as a (:Correction) with the OS user as actor (operator/corrections.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from slowave_graph.commands import Common
from slowave_graph.config import Settings
from slowave_graph.contract.common import MEMORY_TYPES


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser(
        "memory",
        help="show, suppress, restore or supersede one memory (a person's corrections, recorded)",
        description="A person's corrections of one memory, each recorded in the graph with who, "
        "when and why (a :Correction node). suppress hides it from retrieval without deleting "
        "anything; restore undoes that; supersede stores the corrected text as a new memory of the "
        "same scope and retires the old one as superseded. `forget` deletes for good.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        p = actions.add_parser(name, help=help_text, description=help_text)
        p.add_argument("memory_id", metavar="ID", help="the memory, e.g. sch_12")
        p.add_argument("--scope", metavar="KIND:ID", help="insist that the memory is in this scope")
        p.add_argument("--json", action="store_true", help="print the result as JSON")
        common(p)
        p.set_defaults(handler=run)
        return p

    action("show", "the memory, how often it was shown, its corrections and supersession chain")
    p = action("suppress", "hide the memory from every later retrieval (reversible with restore)")
    p.add_argument("--reason", required=True, help="why (kept in the record)")
    p = action("restore", "undo a suppression: the memory returns to the status it had")
    p.add_argument("--reason", help="why (kept in the record)")
    p = action("supersede", "store the corrected text as a new memory and retire this one")
    p.add_argument("--text", required=True, help="the corrected memory (1-8000 characters)")
    p.add_argument("--type", choices=MEMORY_TYPES, help="its type (default: the old memory's)")
    p.add_argument("--reason", help="why (kept in the record)")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph.operator.corrections import CorrectionRefused, UnknownMemory

    work = _work(args, settings)
    try:
        result: dict[str, Any] | None = asyncio.run(work())
    except (UnknownMemory, CorrectionRefused) as exc:
        message = exc.args[0] if exc.args else str(exc)
        print(f"slowave-graph: {message}; nothing changed", file=sys.stderr)
        return 1
    if result is None:
        print(f"slowave-graph: no memory {args.memory_id!r}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    else:
        print(shown(result) if args.action == "show" else done(result))
    return 0


def _work(
    args: argparse.Namespace, settings: Settings
) -> Callable[[], Coroutine[Any, Any, dict[str, Any] | None]]:
    from slowave_graph.app import open_app, open_database
    from slowave_graph.operator import corrections

    async def show() -> dict[str, Any] | None:
        async with open_database(settings) as db:
            found = await corrections.show(db, args.memory_id)
            if found is not None and args.scope is not None and found["scope"] != args.scope:
                return None
            return found

    async def toggle() -> dict[str, Any]:
        act = corrections.suppress if args.action == "suppress" else corrections.restore
        async with open_database(settings) as db:
            return (await act(db, args.memory_id, reason=args.reason, scope=args.scope)).as_dict()

    async def supersede() -> dict[str, Any]:
        async with open_app(settings) as app:
            done = await corrections.supersede(
                app, args.memory_id, args.text, reason=args.reason, memory_type=args.type, scope=args.scope
            )
            return done.as_dict()

    return {"show": show, "suppress": toggle, "restore": toggle}.get(args.action, supersede)


def shown(m: dict[str, Any]) -> str:
    lines = [
        f"{m['id']}  {m['status']}  ({m['type']}, scope {m['scope']})",
        f"  {m['content']}",
        f"  created {m.get('created_at')}, shown {m['exposures']} time(s), salience {m.get('salience')}",
    ]
    if m.get("stale_reason"):
        lines.append(f"  retired: {m['stale_reason']} at {m.get('stale_at')}")
    for c in m["corrections"]:
        what = f"{c['action']} {c['memory_id']}: {c['from_status']} → {c['to_status']}"
        if c.get("replacement_id"):
            what += f", replaced by {c['replacement_id']}"
        why = f" — {c['reason']}" if c.get("reason") else ""
        lines.append(f"  {c['at']}  {c['actor']}@{c['host']}  {what}{why}")
    for s in m["supersession"]:
        lines.append(f"  {s['newer_id']} supersedes {s['older_id']} ({s['reason']}, {s['at']})")
    return "\n".join(lines)


def done(c: dict[str, Any]) -> str:
    line = f"{c['action']}: {c['memory_id']} {c['previous']} → {c['status']}"
    if c.get("replacement_id"):
        line += f", replaced by {c['replacement_id']}"
    return f"{line}\nrecorded as (:Correction {{id: '{c['correction_id']}'}}) — {c['actor']} at {c['at']}"
