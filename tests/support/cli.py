"""The `slowave-graph` command run from an async test."""

from __future__ import annotations

import asyncio

from slowave_graph import cli


async def run_cli(argv: list[str]) -> int:
    """`slowave-graph ARGV`; the CLI runs its own event loop, so it runs in a worker thread."""
    return await asyncio.to_thread(cli.main, argv)
