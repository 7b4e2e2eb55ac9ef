"""What every service needs: who is calling, the clock, and id minting."""

from __future__ import annotations

import fnmatch
import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

T = TypeVar("T")


LOCAL_PRINCIPAL = "local"
# The principal of SLOWAVE_AUTH_TOKEN (the master HTTP token): like the local user, every scope.
MASTER_PRINCIPAL = "default"
# Principals that may use every scope; a named token's (tok_…) may be limited to some.
UNRESTRICTED_PRINCIPALS = frozenset({LOCAL_PRINCIPAL, MASTER_PRINCIPAL})


@dataclass(frozen=True)
class ClientInfo:
    """The caller as the transport reports it (never taken from tool arguments): the MCP client's
    name and version, for provenance, and the principal — who holds the credentials (a named
    token's id, or the master token's, over HTTP; with no token, the one local user). Sessions and
    retrievals belong to the principal that opened them; another principal's are unknown to it,
    and so are those in a scope its token is not granted."""

    name: str | None = None
    version: str | None = None
    principal: str = LOCAL_PRINCIPAL
    scopes: tuple[str, ...] | None = None  # the scope patterns its token may use; None: all

    def may_use(self, scope: str) -> bool:
        return granted(self.scopes, scope)


def granted(patterns: tuple[str, ...] | None, scope: str) -> bool:
    """Whether a token's scope patterns (None: every scope) cover ``scope``: shell-style,
    case-sensitive, as scopes are."""
    return patterns is None or any(fnmatch.fnmatchcase(scope, p) for p in patterns)


def new_id(prefix: str) -> str:
    """An opaque id that cannot be guessed: 128 random bits (sessions, retrievals, continuity
    lines). Session and retrieval ids are the only handle on another agent's work that a tool
    call takes, so counting them up would let anyone enumerate them."""
    return f"{prefix}_{secrets.token_hex(16)}"


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
