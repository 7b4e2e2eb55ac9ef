"""`slowave-graph soak`: concurrent MCP clients against N real server processes, then the audit.

A top-level command (not under `bench`): it is a reliability check with a pass/fail exit code,
not a benchmark number. See ``lab/slowave_graph_lab/bench/soak.py`` for what the clients do and check.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path

from slowave_graph.commands import Common, needs_lab
from slowave_graph.config import Settings


def register(sub: argparse._SubParsersAction, common: Common) -> None:
    parser = sub.add_parser(
        "soak",
        help="N server processes, many concurrent MCP clients running full lifecycles, then the audit "
        "(exit 1 on any error or violation)",
    )
    parser.add_argument("--clients", type=int, default=32, help="concurrent MCP clients (default 32)")
    parser.add_argument("--servers", type=int, default=2, help="server processes (default 2)")
    parser.add_argument("--duration", type=float, default=300.0, help="seconds of load (default 300)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", default="bench-results", help="directory for soak.json and server logs")
    parser.add_argument("--keep", action="store_true", help="keep the soak scopes in the database")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    common(parser)
    parser.set_defaults(handler=run)


@needs_lab("soak")
def run(args: argparse.Namespace, settings: Settings) -> int:
    from slowave_graph_lab.bench.soak import SoakConfig, soak, text_report

    if args.clients < 1 or args.servers < 1 or args.duration <= 0:
        print("soak: --clients and --servers must be ≥ 1 and --duration > 0")
        return 2
    out = Path(args.out)
    cfg = SoakConfig(clients=args.clients, duration=args.duration, seed=args.seed)
    result = asyncio.run(soak(settings, cfg, args.servers, out / f"soak-{cfg.run_id}", args.keep))
    out.mkdir(parents=True, exist_ok=True)
    path = out / "soak.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2) if args.json else text_report(result))
    print(f"written: {path}")
    return 0 if result["ok"] else 1
