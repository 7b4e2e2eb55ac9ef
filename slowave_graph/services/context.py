"""What every service needs: who is calling, the clock, and id minting."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ClientInfo:
    """The MCP client as the transport reports it (never taken from tool arguments)."""

    name: str | None = None
    version: str | None = None


def new_id(prefix: str) -> str:
    """An opaque random id (retrievals, continuity lines)."""
    return f"{prefix}_{secrets.token_hex(8)}"


def cursor_id(retrieval_id: str, page: int) -> str:
    """The cursor of a page of a frozen retrieval: derived, so every replay hands out the same one."""
    return "cur_" + hashlib.sha256(f"{retrieval_id}:{page}".encode()).hexdigest()[:20]


def utcnow() -> datetime:
    return datetime.now(UTC)


def unix(value: object) -> int:
    """Neo4j/Python datetime → Unix seconds (0 when absent)."""
    to_native = getattr(value, "to_native", None)
    native = to_native() if callable(to_native) else value
    if isinstance(native, datetime):
        return int(native.timestamp())
    return 0


async def resolved(value: T) -> T:
    """An awaitable of a value already known: a branch of asyncio.gather that needs no I/O."""
    return value
