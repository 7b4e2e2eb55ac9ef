"""Named bearer tokens with scope grants, for a server that several agents or people share.

Off by default: one user needs at most ``SLOWAVE_AUTH_TOKEN``. ``slowave-graph token add NAME
--scope PATTERN`` creates a token, prints it once and keeps only its SHA-256 in the tokens file
(``SLOWAVE_TOKENS_FILE``, default ``<data dir>/tokens.json``, mode 0600), so the file is no
secret to steal. A request's token names its principal (who owns the sessions it opens) and the
scope patterns it may use (``project:shop``, ``user:alice-*``; shell-style, case-sensitive). The
server reads the file again when it changes: an added or revoked token counts at the next request.

The principal is the token's own random id (``tok_…``), never its name: a name is a label for
people, can be issued again after a revoke, and could otherwise be chosen to equal the principal
of the master token (``SLOWAVE_AUTH_TOKEN``) or of stdio. A token issued again under a revoked name
is a new principal and does not inherit the old token's sessions, retrievals or continuity lines.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from slowave_graph.services.context import granted

NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
TOKEN_PREFIX = "swg_"
PRINCIPAL_PREFIX = "tok_"
# names people would read as the master token's or the local user's: refused to avoid confusion
# (the principals cannot collide anyway, a named token's being its tok_ id)
RESERVED_NAMES = frozenset({"default", "local", "master", "stdio", "admin", "root"})


@dataclass(frozen=True)
class Identity:
    """Who a token belongs to (the principal that owns its sessions), the scope patterns it may
    use (None: every scope) and, for a named token, the name people gave it."""

    principal: str
    scopes: tuple[str, ...] | None = None
    name: str | None = None

    def allows(self, scope: str) -> bool:
        return granted(self.scopes, scope)


def principal_of(entry: dict[str, Any]) -> str:
    """A named token's principal: its id (files written before ids existed: derived from the
    token's hash, equally unique and never reissued)."""
    return str(entry.get("id") or PRINCIPAL_PREFIX + str(entry["sha256"])[:32])


def digest(token: str | bytes) -> str:
    raw = token.encode() if isinstance(token, str) else token
    return hashlib.sha256(raw).hexdigest()


class TokensFile:
    """The tokens file: read, changed (atomically, 0600) and watched for changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[float, int] | None = None
        self._entries: list[dict[str, Any]] = []

    def entries(self) -> list[dict[str, Any]]:
        """The file's tokens (re-read when the file changed; none while it does not exist)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            self._seen, self._entries = None, []
            return []
        seen = (stat.st_mtime, stat.st_size)
        if seen != self._seen:
            loaded = json.loads(self.path.read_text())
            self._entries = list(loaded.get("tokens", []))
            self._seen = seen
        return self._entries

    def _write(self, entries: list[dict[str, Any]]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump({"version": 1, "tokens": entries}, out, indent=2)
            out.write("\n")
        os.replace(tmp, self.path)

    def add(self, name: str, scopes: Sequence[str]) -> str:
        """A new token for ``name`` with these grants; the token itself is returned, never stored."""
        if not NAME.match(name):
            raise ValueError("a token name is 1–64 of a-z 0-9 _ . - (starting with a letter or digit)")
        if name in RESERVED_NAMES:
            raise ValueError(f"{name!r} is reserved; choose a name for the person or agent holding it")
        if not scopes or any(not s.strip() for s in scopes):
            raise ValueError("give at least one --scope pattern (e.g. project:shop, user:alice-*, or *)")
        entries = self.entries()
        if any(e["name"] == name for e in entries):
            raise ValueError(f"a token named {name!r} exists; revoke it first")
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        created = datetime.now(UTC).isoformat(timespec="seconds")
        entry = {
            "name": name,
            "id": PRINCIPAL_PREFIX + secrets.token_hex(16),
            "sha256": digest(token),
            "scopes": list(scopes),
            "created_at": created,
        }
        self._write([*entries, entry])
        return token

    def revoke(self, name: str) -> bool:
        entries = self.entries()
        kept = [e for e in entries if e["name"] != name]
        if len(kept) == len(entries):
            return False
        self._write(kept)
        return True

    def identify(self, supplied: bytes) -> Identity | None:
        """The identity of a presented token, if the file holds it (every entry compared, in
        constant time each)."""
        found = None
        presented = digest(supplied)
        for entry in self.entries():
            if hmac.compare_digest(presented, str(entry["sha256"])):
                found = Identity(principal_of(entry), tuple(entry["scopes"]), str(entry["name"]))
        return found
